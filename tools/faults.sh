#!/bin/bash
# SPDX-License-Identifier: MIT
# make faults: fault injection on the user engine. Links a selection of
# test/ programs against the engine's objects joined into one with ld -r
# --wrap, so that the engine's malloc, calloc, realloc and pthread_create
# go to test/faults/shim.c (one call in N fails, seeded: NOWAIT_FAULT=N:SEED),
# and runs each under every setting: the shim at FAULT_N with seeds
# 1..FAULT_SEEDS, RLIMIT_NOFILE 64, RLIMIT_MEMLOCK 0.
#
# A run passes, skips, or fails an assertion whose value is one of the
# kernel's errnos for a shortage (-ENOMEM, -EMFILE, -ENFILE, -EAGAIN,
# -ENOBUFS, -EPERM): that is the error coming back as the kernel gives it;
# so is a submit that consumed fewer SQEs than given (short_submit).
# Anything else is a finding and fails the run: a crash (a signal other
# than the assertion's abort), a hang (timeout or the test's watchdog: a
# CQE that never came), an assertion on another value (a lost or wrong
# result), an engine BUG. Logs: $B/faults/log/.
#
# Environment: B (build dir), FAULT_N (default 40), FAULT_SEEDS (default 4),
# FAULT_TESTS (the selection), TIMEOUT (seconds per run, default 20).
set -u
B=${B:-build}
FAULT_N=${FAULT_N:-40}
FAULT_SEEDS=${FAULT_SEEDS:-4}
TIMEOUT=${TIMEOUT:-20}
# Not cq-overflow, msg-ring, rsrc-tags: they assert that every CQE
# arrives, which a CQE dropped for want of memory and counted in
# cq_overflow (the kernel's way) breaks; test/faults/lost-cqe.c checks
# that accounting instead.
TESTS=${FAULT_TESTS:-"nop nop-flags rw-pipe rw-file rw-socket rw-link
	net-sendrecv net-accept net-msg poll-basic timeout-cancel drain
	eventfd rsrc-basic kbuf open-close splice sqpoll worker-cancel
	defer-poll sync-ops fs-ops"}
OUT=$B/faults
mkdir -p "$OUT/log"

objs=()
for t in $TESTS; do objs+=("$B/obj/test/$t.o"); done
# test/faults/*.c: programs for this run only (they expect faults).
FTESTS=$(cd test/faults && ls *.c | grep -v '^shim.c$' | sed 's/\.c$//')
make -s --no-print-directory B="$B" lib "$B/obj/test/helpers.o" \
	"$B/obj/test/rawring.o" "${objs[@]}" || exit 1
# The tests' libraries, as the Makefile links them (liburing if found).
LIBS=
echo 'int main(void){return 0;}' | ${CC:-cc} -x c -include liburing.h - \
	-o /dev/null -luring 2>/dev/null && LIBS=-luring
ld -r --wrap=malloc --wrap=calloc --wrap=realloc --wrap=pthread_create \
	-o "$OUT/engine.o" "$B"/obj/src/*.o || exit 1
${CC:-cc} -O2 -g -std=gnu11 -D_GNU_SOURCE -pthread -Wall -Werror \
	-c test/faults/shim.c -o "$OUT/shim.o" || exit 1
for t in $FTESTS; do
	${CC:-cc} -O2 -g -std=gnu11 -D_GNU_SOURCE -pthread -Wall -Werror \
		-Iinclude -iquote test -c "test/faults/$t.c" \
		-o "$B/obj/test/$t.o" || exit 1
done
for t in $TESTS $FTESTS; do
	${CC:-cc} -pthread -o "$OUT/$t.t" "$B/obj/test/$t.o" \
		"$B/obj/test/helpers.o" "$B/obj/test/rawring.o" \
		"$OUT/engine.o" "$OUT/shim.o" $LIBS || exit 1
done

# -ENOMEM, -EMFILE, -ENFILE, -EAGAIN, -ENOBUFS, -EPERM
ERRNOS='(-12|-24|-23|-11|-105|-1)'

# A submit that consumed fewer SQEs than it was given, under a failing
# allocation: the kernel's io_submit_sqes stops at a request it cannot
# allocate and returns how many went (-EAGAIN only for none), so a short
# count is its answer too, not a lost SQE.
short_submit() {
	local m
	m=$(grep -m1 -oE "\[user\] t_submit[a-z_]*\(.*\) == [0-9]+ \([0-9]+ vs [0-9]+\)" \
		"$1" | grep -oE "\([0-9]+ vs [0-9]+\)$") || return 1
	m=${m//[()]/}
	[ "${m% vs *}" -lt "${m#* vs }" ]
}

# verdict LOG RC: ok (pass, skip, a kernel errno) or what went wrong.
verdict() {
	local log=$1 rc=$2
	case $rc in
	0) echo pass; return ;;
	77) echo skip; return ;;
	124 | 137) echo "HANG (timeout)"; return ;;
	esac
	if grep -q "^watchdog:" "$log"; then
		echo "HANG (watchdog)"
	elif grep -q "BUG" "$log"; then
		echo "BUG: $(grep -m1 BUG "$log")"
	elif [ "$rc" = 134 ] &&
		grep -qE "\[user\] .*(\($ERRNOS vs -?[0-9]+\)|got user_data [0-9]+ res $ERRNOS flags)" \
			"$log"; then
		echo errno
	elif [ "$rc" = 134 ] && short_submit "$log"; then
		echo errno
	elif [ "$rc" -gt 128 ] && [ "$rc" != 134 ]; then
		echo "CRASH (signal $((rc - 128)))"
	else
		echo "FAIL: $(grep -m1 '\[user\]' "$log" || tail -n1 "$log")"
	fi
}

settings=()
for s in $(seq 1 "$FAULT_SEEDS"); do settings+=("alloc:$FAULT_N:$s"); done
settings+=(nofile:64 memlock:0)
declare -A count
bad=0
for t in $TESTS $FTESTS; do
	for set in "${settings[@]}"; do
		log=$OUT/log/$t.${set//:/-}.log
		(
			export NOWAIT_TEST_ENGINE=user
			case $set in
			alloc:*) export NOWAIT_FAULT=${set#alloc:} ;;
			nofile:*) ulimit -n "${set#nofile:}" ;;
			memlock:*) ulimit -l "${set#memlock:}" ;;
			esac
			# Not the last command: the shell's "Aborted" goes to $log.
			timeout -k 2 "$TIMEOUT" "$OUT/$t.t"
			exit $?
		) >"$log" 2>&1
		rc=$?
		v=$(verdict "$log" "$rc")
		# test/faults/ programs expect the faults: only a pass is good.
		[[ " $FTESTS " == *" $t "* ]] && [ "$v" = errno ] &&
			v="FAIL: $(grep -m1 '\[user\]' "$log")"
		count[${v%% *}]=$((${count[${v%% *}]:-0} + 1))
		case $v in
		pass | skip | errno) ;;
		*)
			bad=$((bad + 1))
			echo "faults: $t [$set]: $v"
			;;
		esac
	done
done
echo "FAULTS: pass ${count[pass]:-0}, kernel errno ${count[errno]:-0}," \
	"skip ${count[skip]:-0}, findings $bad"
[ "$bad" = 0 ]
