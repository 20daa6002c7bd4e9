#!/bin/bash
# SPDX-License-Identifier: MIT
# The man pages (man/): each renders with man -l and no warning from man
# or groff; each .so stub names a page that exists; every option that
# nowait-run --help lists is in nowait-run(1), and every NOWAIT_* variable
# the engine or the preload reads is in nowait(7). Exit 77: no man here.
B=${B:-build}
cd "$(dirname "$0")/.." || exit 1
command -v man >/dev/null || { echo "skip: man (man-db) not installed"; exit 77; }
fail=0
for page in man/*.[0-9]; do
	if head -n 1 "$page" | grep -q '^\.so '; then
		target=$(head -n 1 "$page" | sed 's/^\.so man[0-9]*\///')
		[ -f "man/$target" ] || { echo "$page: .so to a missing $target"; fail=1; }
		continue
	fi
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	if [ -n "$warn" ]; then
		echo "$page: $warn"
		fail=1
	fi
	text=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" 2>/dev/null)
	grep -q NAME <<<"$text" || { echo "$page: renders no NAME section"; fail=1; }
done
run_text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l man/nowait-run.1 2>/dev/null)
for opt in $("$B/nowait-run" --help | grep -o -- '--[a-z]*' | sort -u); do
	grep -q -- "$opt" <<<"$run_text" || { echo "nowait-run(1) lacks $opt"; fail=1; }
done
env_text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l man/nowait.7 2>/dev/null)
for var in $(grep -oh 'getenv("NOWAIT_[A-Z_]*")' src/*.c preload/*.c | grep -o 'NOWAIT_[A-Z_]*' | sort -u); do
	grep -q "$var" <<<"$env_text" || { echo "nowait(7) lacks $var"; fail=1; }
done
[ "$fail" = 0 ] && echo "man pages: OK"
exit $fail
