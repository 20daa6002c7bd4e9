#!/bin/bash
# SPDX-License-Identifier: MIT
# make fuzz: build the libFuzzer harnesses of test/fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined; the engine with coverage), run each
# for FUZZ_S seconds (default 60) from its corpus in test/fuzz/corpus/,
# then print execs, exec/s and the edge coverage of each src/ file. Fails
# on a crash, a hang (-timeout), a leak or an unlisted difference (the
# differential harness aborts on those). Findings go to build/fuzz/out/.
#
# The coverage figure: the engine's edges (-fsanitize=fuzzer-no-link, the
# same instrumentation libFuzzer steers by) in a second build of every
# harness WITHOUT ASan and UBSan, which add never-taken edges of their own
# (the report paths of each memory access and arithmetic check) and
# would deflate it. That build replays each harness's corpora (the repo's
# and this run's work corpus) once with -print_coverage; per src/ file,
# covered edges over all edges of the file's functions (the unreached
# ones count in full), the best of the harnesses per function (a
# function's edges are counted from the harness that reached most of
# them, not summed), then the total, and a line naming the files below
# FUZZ_COV_MIN percent (40; printed, not failed). FUZZ_COV=san prints the
# same figure from the sanitizer build instead (the older, lower one);
# FUZZ_COV_ONLY=1 skips the runs and prints the coverage of the corpora
# as they are (after a run, of its work corpus too).
# One input's coverage: replay a directory holding only it (a file given
# as an argument is run but its edges are not counted: every function
# prints 0 hits).
#
# Environment: FUZZ_S (seconds per harness), FUZZ_ONLY (one harness),
# FUZZ_DIFF=report (diff-fuzz lists the kinds of differences it finds,
# with the SQE's fields, and goes on instead of failing at the first; the
# first input of each kind is saved in build/fuzz/out/diffs/ to replay:
# FZ_DIFF_LOG=1 build/fuzz/diff-fuzz FILE), CLANG (default clang), B
# (build dir, default build). Without it an unlisted difference fails.
# The repo's corpus is replayed first, each input once, and anything it
# shows fails the run. FUZZ_NEW=report (CI) lists what the timed
# exploration after it finds (artifacts in build/fuzz/out/) without
# failing: each run finds new kinds, and CI must not pass or fail by luck.
# FZ_HANG_DUMP=FILE: a teardown that waits 15 s for a final CQE (a hang)
# first writes every thread's stack to FILE (gdb); FZ_REAP_NOTE=1 lists
# the teardowns that waited over 1 s (test/fuzz/fuzzenv.h).
set -u
B=${B:-build}
CLANG=${CLANG:-clang}
FUZZ_S=${FUZZ_S:-60}
OUT=$B/fuzz
ROOT=$(pwd)
HARNESSES=${FUZZ_ONLY:-"sqe-fuzz diff-fuzz reg-fuzz"}
FUZZ_COV_MIN=${FUZZ_COV_MIN:-40}
mkdir -p "$OUT/obj" "$OUT/obj-cov" "$OUT/out" "$OUT/cov"

if ! command -v "$CLANG" >/dev/null; then
	echo "fuzz: $CLANG not found (tools/install-deps fuzz)" >&2
	exit 1
fi
CFLAGS="-O1 -g -std=gnu11 -D_GNU_SOURCE -pthread -fvisibility=hidden \
	-Iinclude -iquote src -iquote test -iquote test/fuzz \
	-fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -Werror=implicit-function-declaration -Wno-unused-parameter"

# The coverage build: the same edges, no sanitizer checks. It links
# UBSan's runtime (no check is compiled in) only for the symbolizer that
# -print_coverage needs (the harness's own file gets UBSan's checks, and
# is no src/ file).
COVFLAGS="${CFLAGS/-fsanitize=address,undefined/}"

# Objects: the engine and the helpers with coverage, rebuilt when newer;
# objs for the sanitizer build, covobjs for the coverage build.
build_objs() { # dir flags...
	local dir=$1 n=0 obj src
	shift
	built=()
	for src in src/*.c test/helpers.c test/rawring.c test/fuzz/fuzzenv.c; do
		obj=$dir/$(echo "$src" | tr / _).o
		if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] ||
			[ -n "$(find src include test/fuzz -name '*.h' -newer "$obj")" ]; then
			# Two at a time (the machine's cores); a failure shows at link.
			$CLANG "$@" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
			n=$((n + 1))
			[ $((n % 2)) = 0 ] && wait
		fi
		built+=("$obj")
	done
	wait
}
build_objs "$OUT/obj" $CFLAGS
objs=("${built[@]}")
build_objs "$OUT/obj-cov" $COVFLAGS
covobjs=("${built[@]}")
for h in $HARNESSES; do
	$CLANG $CFLAGS -fsanitize=fuzzer "test/fuzz/$h.c" "${objs[@]}" \
		-o "$OUT/$h" -ldl || exit 1
	$CLANG $COVFLAGS -fsanitize=fuzzer "test/fuzz/$h.c" "${covobjs[@]}" \
		-fsanitize=undefined -o "$OUT/cov/$h" -ldl || exit 1
done

fail=0
# FUZZ_COV_ONLY=1: no runs, the coverage of the corpora there are.
[ -n "${FUZZ_COV_ONLY:-}" ] && HARN_RUN= || HARN_RUN=$HARNESSES
for h in $HARN_RUN; do
	corpus=test/fuzz/corpus/${h%-fuzz}
	work=$OUT/corpus-${h%-fuzz}
	mkdir -p "$work"
	log=$OUT/$h.log
	# The repo's corpus first, each input once: its regressions always fail.
	(cd "$OUT/out" && FZ_ALLOWLIST=$ROOT/test/fuzz/allowlist.txt ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1 "../$h" -runs=0 -timeout=20 \
		-rss_limit_mb=2048 -artifact_prefix="$ROOT/$OUT/out/$h-replay-" \
		"$ROOT/$corpus") >"$OUT/$h-replay.log" 2>&1
	rc=$?
	echo "fuzz: $h: the corpus replayed ($(ls "$corpus" | wc -l) inputs): exit $rc"
	if [ $rc -ne 0 ]; then
		fail=1
		grep -m1 -E "ERROR|SUMMARY|fuzz:|difference" "$OUT/$h-replay.log" | sed 's/^/  /'
	fi
	echo "fuzz: $h for ${FUZZ_S}s (corpus $corpus, log $log)"
	# New inputs go to the work corpus; the repo's stays small.
	difflog= diffdir=
	if [ "${FUZZ_DIFF:-}" = report ]; then
		difflog=1 diffdir=$ROOT/$OUT/out/diffs
		mkdir -p "$diffdir"
	fi
	(cd "$OUT/out" && FZ_DIFF_LOG=$difflog FZ_DIFF_DIR=$diffdir FZ_ALLOWLIST=$ROOT/test/fuzz/allowlist.txt ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1 \
		"../$h" -max_total_time="$FUZZ_S" -timeout=20 \
		-rss_limit_mb=2048 -max_len=2048 -print_final_stats=1 \
		-artifact_prefix="$ROOT/$OUT/out/$h-" "$ROOT/$work" \
		"$ROOT/$corpus") >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	echo "fuzz: $h: exit $rc, ${execs:-0} execs, ${rate:-0} exec/s"
	if grep -q "^diff-fuzz: difference" "$log"; then
		echo "fuzz: $h: unlisted differences (count, kind):"
		sed -n 's/^diff-fuzz: difference: opcode \([0-9]*\).*: kernel \([-0-9]*\), nowait \([-0-9]*\).*/  opcode \1: kernel \2, nowait \3/p' \
			"$log" | sort | uniq -c | sort -rn
	fi
	if [ $rc -ne 0 ]; then
		# FUZZ_NEW=report: what mutation finds is listed, not fatal.
		if [ "${FUZZ_NEW:-}" = report ]; then
			echo "fuzz: $h: a new finding (FUZZ_NEW=report: listed, not failed)"
		else
			fail=1
		fi
		grep -m1 -E "ERROR|SUMMARY|fuzz:|difference" "$log" | sed 's/^/  /'
		ls "$OUT/out" | grep "^$h-" | grep -v -- '-replay-' | sed 's/^/  artifact: /'
	fi
done

# Per-file edge coverage of src/, over both corpora (one pass each), from
# the build without sanitizers (FUZZ_COV=san: the sanitizer build's).
cov=$OUT/coverage.txt
: >"$cov"
bin=cov/ build_name="no-sanitizer"
[ "${FUZZ_COV:-}" = san ] && bin= build_name="sanitizer"
for h in $HARNESSES; do
	mkdir -p "$OUT/corpus-${h%-fuzz}"
	(cd "$OUT/out" && FZ_DIFF_LOG=1 FZ_ALLOWLIST=$ROOT/test/fuzz/allowlist.txt \
		"../$bin$h" -runs=0 -print_coverage=1 -timeout=20 \
		"$ROOT/$OUT/corpus-${h%-fuzz}" "$ROOT/test/fuzz/corpus/${h%-fuzz}") \
		2>&1 | grep '^COVERED_FUNC\|^UNCOVERED_FUNC' >>"$cov"
done
echo "fuzz: edge coverage of src/ ($build_name build, $(grep -c . "$cov") function lines):"
# COVERED_FUNC: hits: H edges: C/T name file:line; the best of the runs.
awk '
/^(UN)?COVERED_FUNC/ {
	file = $NF; sub(/:[0-9]+$/, "", file); sub(/.*\/src\//, "src/", file)
	if (file !~ /^src\//) next
	key = file " " $(NF - 1)
	split($5, e, "/"); c = e[1]; t = e[2]
	if (!(key in tot) || t > tot[key]) tot[key] = t
	if (!(key in got) || c > got[key]) got[key] = c
	files[file] = 1
}
END {
	for (k in tot) { split(k, a, " "); T[a[1]] += tot[k]; C[a[1]] += got[k] }
	for (f in files) {
		all_t += T[f]; all_c += C[f]
		printf "%-20s %5d/%-5d %5.1f%%\n", f, C[f], T[f],
			T[f] ? 100 * C[f] / T[f] : 0
	}
	if (all_t) printf "%-20s %5d/%-5d %5.1f%%\n", "total", all_c, all_t, 100 * all_c / all_t
}' "$cov" | sort >"$OUT/coverage-files.txt"
grep -v '^total' "$OUT/coverage-files.txt"
grep '^total' "$OUT/coverage-files.txt"
low=$(awk -v min="$FUZZ_COV_MIN" '$1 ~ /^src\// && $3 + 0 < min { printf " %s %s", $1, $3 }' \
	"$OUT/coverage-files.txt")
echo "fuzz: files below ${FUZZ_COV_MIN}% edge coverage:${low:- none}"
exit $fail
