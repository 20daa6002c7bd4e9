#!/bin/bash
# SPDX-License-Identifier: MIT
#
# trace-cost.sh: what the request trace and statistics cost while they are
# off (issue 16's "zero cost when off"). Builds nowait-bench twice, today's
# engine ($B) and the engine without trace.c and stats.c (`make NOTRACE=1`,
# every nw_traced() branch folded away: src/internal.h), then in one run,
# the two builds alternating:
#   - nop (ops/s) and pipes (ms per run, the user engine's empty and data
#     variants), REPS times each, medians compared;
#   - callgrind: the engine's instructions per NOP (Ir inclusive of
#     nowait_enter over the NOPs it served), repeatable on a noisy machine;
#   - the machine's getppid cost, which every syscall-bound figure moves with.
# Usage: tools/trace-cost.sh   (env: B=build, REPS=5, SECS=2)
set -euo pipefail

B=${B:-build}
NB=$B/notrace
REPS=${REPS:-5}
SECS=${SECS:-2}
CC=${CC:-gcc}

make -s -j2 B="$B" "$B/nowait-bench"
make -s -j2 B="$NB" NOTRACE=1 "$NB/nowait-bench"

# The floor: a getppid in a bare loop.
cat >"$NB/getppid.c" <<'EOF'
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void)
{
	struct timespec a, b;
	long i, n = 2000000;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
EOF
$CC -O2 -o "$NB/getppid" "$NB/getppid.c"

field() { # field NAME: the number after "NAME": in a JSON line on stdin
	sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A SAMPLES=()
add() { SAMPLES[$1]+="$2 "; }

for ((i = 1; i <= REPS; i++)); do
	for b in "$B" "$NB"; do
		add "$b nop" "$("$b/nowait-bench" nop -t "$SECS" --engine=user --json | field ops_per_sec)"
		out=$("$b/nowait-bench" pipes -n 6 --engine=user --json)
		for v in empty data; do
			add "$b $v" "$(grep "\"engine\":\"user\",\"variant\":\"$v\"" <<<"$out" | field avg_ms)"
		done
	done
done

ir_per_nop() { # ir_per_nop BUILD
	local f
	f=$(mktemp)
	valgrind --tool=callgrind --callgrind-out-file="$f" \
		--toggle-collect=nowait_enter "$1/nowait-bench" nop -t 0.3 \
		--engine=user >/dev/null 2>&1
	local ann ir calls
	ann=$(callgrind_annotate --inclusive=yes --threshold=100 --tree=caller "$f" 2>/dev/null)
	ir=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' <<<"$ann" | tr -d ,)
	calls=$(sed -n 's/.*< .*:nop_run (\([0-9,]*\)x).*/\1/p' <<<"$ann" | head -1 | tr -d ,)
	awk -v ir="$ir" -v c="$calls" 'BEGIN { printf "%.1f\n", ir / (c * 32) }'
	rm -f "$f"
}

printf 'getppid: %s ns\n' "$("$NB/getppid")"
printf '%-8s %14s %14s %8s\n' metric "today" "no trace code" "ratio"
for m in nop empty data; do
	a=$(tr ' ' '\n' <<<"${SAMPLES[$B $m]}" | grep . | median)
	n=$(tr ' ' '\n' <<<"${SAMPLES[$NB $m]}" | grep . | median)
	printf '%-8s %14s %14s %8.3f\n' "$m" "$a" "$n" "$(awk -v a="$a" -v n="$n" 'BEGIN { print a / n }')"
done
echo "(nop: ops/s, higher is better; empty, data: pipes ms per run, lower is better; medians of $REPS, builds alternating)"
if command -v valgrind >/dev/null; then
	printf 'callgrind, engine instructions per NOP: today %s, no trace code %s\n' \
		"$(ir_per_nop "$B")" "$(ir_per_nop "$NB")"
fi
