#!/bin/bash
# SPDX-License-Identifier: MIT
# Run every $B/test/*.t under timeout and print one line per run, then the
# summary line CI reads. unit-* tests run once; the others run once per
# engine (NOWAIT_TEST_ENGINE=user and =kernel). Exit 77 means skip.
#
# Environment: B (build dir, default build), T (run only this test name),
# TIMEOUT (seconds per run, default 60).

B=${B:-build}
TIMEOUT=${TIMEOUT:-60}
T=${T:-}

passed=0
failed=0
skipped=0
failures=()

# run_one NAME ENGINE [COMMAND...]: run one program (default
# $B/test/NAME.t), print its verdict line.
run_one() {
	local name=$1 engine=$2 label out start end rc secs
	local -a cmd=("$B/test/$1.t")

	shift 2
	[ $# -gt 0 ] && cmd=("$@")

	if [ -n "$engine" ]; then
		label="$name [$engine]"
	else
		label="$name"
	fi
	out=$(mktemp "${TMPDIR:-/tmp}/nowait-test.XXXXXX")
	start=$(date +%s.%N)
	# A subshell that does not exec the program: the shell's own "Aborted"
	# notice then goes to $out with the rest.
	(
		if [ -n "$engine" ]; then
			export NOWAIT_TEST_ENGINE=$engine
		else
			unset NOWAIT_TEST_ENGINE
		fi
		timeout -k 5 "$TIMEOUT" "${cmd[@]}"
		status=$?
		exit $status
	) >"$out" 2>&1
	rc=$?
	end=$(date +%s.%N)
	secs=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')

	case $rc in
	0)
		printf 'PASS  %s  %s s\n' "$label" "$secs"
		passed=$((passed + 1))
		;;
	77)
		printf 'SKIP  %s  (%s)\n' "$label" \
			"$(tail -n 1 "$out" | tr -d '\n')"
		skipped=$((skipped + 1))
		;;
	124 | 137)
		printf 'TIME  %s  (> %s s)\n' "$label" "$TIMEOUT"
		tail -n 20 "$out" | sed 's/^/    /'
		failed=$((failed + 1))
		failures+=("$label")
		;;
	*)
		printf 'FAIL  %s  (exit %d)\n' "$label" "$rc"
		tail -n 20 "$out" | sed 's/^/    /'
		failed=$((failed + 1))
		failures+=("$label")
		;;
	esac
	rm -f "$out"
}

shopt -s nullglob
progs=("$B"/test/*.t)
if [ "$T" = bench-smoke ] || [ "$T" = man-pages ]; then
	progs=()
elif [ -n "$T" ]; then
	progs=("$B/test/${T%.t}.t")
	if [ ! -x "${progs[0]}" ]; then
		printf 'FAIL  %s  (no such test program %s)\n' "$T" "${progs[0]}"
		failed=1
		progs=()
	fi
fi

for prog in "${progs[@]}"; do
	name=$(basename "$prog" .t)
	case $name in
	unit-*)
		run_one "$name" ""
		;;
	*)
		run_one "$name" user
		run_one "$name" kernel
		;;
	esac
done

# The man pages render and say what the tools and the engine do.
if [ -z "$T" ] || [ "$T" = man-pages ]; then
	run_one man-pages "" "$(dirname "$0")/man-pages.sh"
fi

# The benchmarks' smoke run: every workload briefly, both engines.
if [ -z "$T" ] || [ "$T" = bench-smoke ]; then
	run_one bench-smoke "" "$B/nowait-bench" --smoke
fi

if [ "${#failures[@]}" -gt 0 ]; then
	list=""
	for f in "${failures[@]}"; do
		list="${list:+$list, }$f"
	done
	printf 'Failed: %s\n' "$list"
fi
echo "TESTS: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
