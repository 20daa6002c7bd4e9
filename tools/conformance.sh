#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Conformance: liburing 2.3's test suite and fio 3.33's io_uring engine, both
# built from Debian's source packages, run on nowait (nowait-run --user) and,
# in the same run on the same machine, on the kernel's io_uring.
#
#   1. fetch   apt-get source --download-only liburing fio, through a private
#              deb-src list (the system's apt configuration is not touched),
#              into $B/conformance. Skipped when the sources are there.
#   2. build   liburing: ./configure && make -j2 (tests are test/*.t);
#              fio: ./configure && make -j2 fio. Skipped when built.
#   3. liburing every test/*.t (exec-target.t is a helper: it is left out, so
#              the fork+exec sub-tests of timeout and defer-taskrun skip, see
#              reference/liburing-conformance.md 1.3 item 8) runs from a
#              scratch copy of test/ owned by an unprivileged user (nobody,
#              when we are root): first all on the kernel, then all under
#              nowait-run --user. Per-test time-out, two tests at a time.
#   4. fio     each section of ../shared/reference/uring-conformance.fio
#              (smaller size and runtime) on the kernel and on nowait; a
#              section passes when fio exits 0 with err=0 (verify=crc32c).
#
# Every test whose verdict on nowait differs from the kernel's, and every fio
# section that does not pass on nowait, must be listed with its reason in
# test/conformance-known-differences.txt (`name<TAB>reason`, or
# `fio:<section><TAB>reason`); any other difference makes the run fail.
# The last line is
#   liburing: P passed, F failed, S skipped (kernel: P passed, F failed, S skipped)
# (failed includes time-outs and crashes).
#
# Environment:
#   B                 build directory (default build)
#   CONF_TIMEOUT      seconds per liburing test (default 30)
#   CONF_SLOW         tests that get CONF_SLOW_TIMEOUT (default 120) instead:
#                     a4c0b3decb33 and pollfree fork 5000 times (14-30 s on the
#                     kernel and on nowait, more under load)
#   CONF_RETRY        1 (default): a test whose results differ and is not in
#                     the known list is run once more on both engines, alone;
#                     if the results then agree it is reported as flaky (and
#                     does not fail the run). 0: no re-run.
#   CONF_JOBS         liburing tests run at a time (default 2)
#   CONF_TESTS        only these liburing tests (names without .t)
#   CONF_ENGINES      "kernel nowait" (default), or one of them
#   CONF_FIO          0 skips the fio part
#   CONF_FIO_JOBFILE  fio job file (default ../shared/reference/uring-conformance.fio)
#   CONF_FIO_SIZE     fio size= (default 16M), CONF_FIO_RUNTIME runtime= (default 2)
#   CONF_FIO_TIMEOUT  seconds per fio section (default 90)
#   CONF_KNOWN        the known-differences file
#   CONF_USER         user the tests run as when we are root (default nobody)

set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=${B:-build}
mkdir -p "$B" && B=$(cd "$B" && pwd)
W=$B/conformance
LIBURING_VER=2.3
FIO_VER=3.33
LIBURING_SRC=$W/liburing-$LIBURING_VER
FIO_SRC=$W/fio-$FIO_VER
TIMEOUT=${CONF_TIMEOUT:-30}
SLOW=${CONF_SLOW:-a4c0b3decb33 pollfree}
SLOW_TIMEOUT=${CONF_SLOW_TIMEOUT:-120}
JOBS=${CONF_JOBS:-2}
TESTS=${CONF_TESTS:-}
ENGINES=${CONF_ENGINES:-kernel nowait}
DO_FIO=${CONF_FIO:-1}
RETRY=${CONF_RETRY:-1}
FIO_JOBFILE=${CONF_FIO_JOBFILE:-$ROOT/../shared/reference/uring-conformance.fio}
FIO_SIZE=${CONF_FIO_SIZE:-16M}
FIO_RUNTIME=${CONF_FIO_RUNTIME:-2}
FIO_TIMEOUT=${CONF_FIO_TIMEOUT:-90}
KNOWN=${CONF_KNOWN:-$ROOT/test/conformance-known-differences.txt}
RUN_USER=${CONF_USER:-nobody}
RUN=$B/nowait-run

T0=$(date +%s)
say() { printf '%s\n' "$*"; }
phase() { printf '== %s (%ds)\n' "$*" $(($(date +%s) - T0)); }
die() {
	printf 'conformance: %s\n' "$*" >&2
	exit 1
}

[ -x "$RUN" ] && [ -r "$B/libnowait-preload.so" ] ||
	die "$RUN or $B/libnowait-preload.so missing (run make first)"

# ---------------------------------------------------------------- 1. fetch
# A private deb-src list made from the system's own one (Debian 12 deb822
# format, or a classic sources.list).
fetch() {
	local d=$W/apt o
	local -a opts

	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" || return 1
	if [ -r /etc/apt/sources.list.d/debian.sources ]; then
		sed 's/^Types: deb$/Types: deb-src/' \
			/etc/apt/sources.list.d/debian.sources >"$d/src.sources"
	elif [ -r /etc/apt/sources.list ]; then
		sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$d/src.list"
	else
		die "no apt sources to derive a deb-src list from"
	fi
	opts=(-q -oDir::Etc::SourceList=/dev/null -oDir::Etc::SourceParts="$d"
	      -oDir::State::Lists="$d/lists" -oDir::Cache="$d/cache"
	      -oAPT::Sandbox::User=root)
	apt-get "${opts[@]}" update >"$d/update.log" 2>&1 ||
		{ cat "$d/update.log" >&2; return 1; }
	(cd "$W" && apt-get "${opts[@]}" source --download-only liburing fio) \
		>"$d/source.log" 2>&1 || { cat "$d/source.log" >&2; return 1; }
}

unpack() { # unpack NAME VERSION
	local tarball dir=$W/$1-$2

	[ -d "$dir" ] && return 0
	tarball=$(ls "$W/$1_$2.orig.tar."* 2>/dev/null | grep -v '\.asc$' | head -n 1)
	[ -n "$tarball" ] || return 1
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
		tar -xf "$tarball" -C "$dir.tmp" &&
		mv "$dir.tmp/$1-$2" "$dir" && rmdir "$dir.tmp"
}

mkdir -p "$W"
if [ ! -d "$LIBURING_SRC" ] || [ ! -d "$FIO_SRC" ]; then
	phase "fetch: apt-get source liburing fio (Debian source packages)"
	if ! ls "$W"/liburing_${LIBURING_VER}.orig.tar.* >/dev/null 2>&1 ||
	   ! ls "$W"/fio_${FIO_VER}.orig.tar.* >/dev/null 2>&1; then
		fetch || die "download of the Debian source packages failed"
	fi
	unpack liburing "$LIBURING_VER" ||
		die "no liburing $LIBURING_VER source package in $W (got: $(ls "$W" | grep -E '^liburing_' | tr '\n' ' '))"
	unpack fio "$FIO_VER" ||
		die "no fio $FIO_VER source package in $W (got: $(ls "$W" | grep -E '^fio_' | tr '\n' ' '))"
fi

# ---------------------------------------------------------------- 2. build
if [ ! -e "$LIBURING_SRC/.nowait-built" ]; then
	phase "build: liburing $LIBURING_VER (./configure && make -j2)"
	(cd "$LIBURING_SRC" && ./configure && make -j2) >"$W/liburing-build.log" 2>&1 ||
		{ tail -n 30 "$W/liburing-build.log"; die "liburing build failed (see $W/liburing-build.log)"; }
	touch "$LIBURING_SRC/.nowait-built"
fi
if [ "$DO_FIO" != 0 ] && [ ! -e "$FIO_SRC/.nowait-built" ]; then
	phase "build: fio $FIO_VER (./configure && make -j2 fio)"
	(cd "$FIO_SRC" && ./configure && make -j2 fio) >"$W/fio-build.log" 2>&1 ||
		{ tail -n 30 "$W/fio-build.log"; die "fio build failed (see $W/fio-build.log)"; }
	touch "$FIO_SRC/.nowait-built"
fi

# ------------------------------------------------------- running the tests
# As root, tests run as an unprivileged user (liburing's tests skip SQPOLL
# and root-only cases then, on both engines alike); otherwise as ourselves.
AS=()
OWNER=$(id -un)
if [ "$(id -u)" = 0 ]; then
	id "$RUN_USER" >/dev/null 2>&1 || die "no user $RUN_USER"
	AS=(setpriv --reuid="$(id -u "$RUN_USER")" --regid="$(id -g "$RUN_USER")"
	    --clear-groups --)
	OWNER=$RUN_USER
fi
# The build tree must be reachable by that user (nowait-run, the preload).
if [ ${#AS[@]} -gt 0 ] && ! "${AS[@]}" test -r "$B/libnowait-preload.so"; then
	die "$RUN_USER cannot read $B/libnowait-preload.so (check directory permissions)"
fi

# engine_cmd ENGINE: the command prefix that selects the engine.
engine_cmd() {
	case $1 in
	kernel) ;;
	nowait) printf '%s\0' "$RUN" --user -- ;;
	esac
}

# scratch DIR: a fresh directory owned by the test user.
scratch() {
	rm -rf "$1" && mkdir -p "$1" && chown "$OWNER:$(id -gn "$OWNER")" "$1"
}

# verdict RC SECS LIMIT -> PASS FAIL SKIP TIME CRASH(SIGxxx)
verdict() {
	local rc=$1 secs=$2 limit=$3
	case $rc in
	0) echo PASS ;;
	77) echo SKIP ;;
	124) echo TIME ;;
	*)
		if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
			if [ "$rc" = 137 ] && [ "${secs%.*}" -ge "$limit" ]; then
				echo TIME
			else
				echo "CRASH(SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))))"
			fi
		else
			echo FAIL
		fi
		;;
	esac
}

# run_test ENGINE NAME: one liburing test, result in $RES/ENGINE/NAME.*
run_test() {
	local engine=$1 name=$2 dir=$W/run/$1 out=$RES/$1/$2 start end rc secs v
	local limit=$TIMEOUT
	local -a pre

	[[ " $SLOW " == *" $name "* ]] && limit=$SLOW_TIMEOUT
	mapfile -d '' pre < <(engine_cmd "$engine")
	start=$(date +%s.%N)
	(cd "$dir" && exec timeout -k 5 "$limit" "${AS[@]}" "${pre[@]}" \
		"./$name.t") >"$out.out" 2>&1 </dev/null
	rc=$?
	end=$(date +%s.%N)
	secs=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
	v=$(verdict "$rc" "$secs" "$limit")
	echo "$v $rc $secs" >"$out.res"
	printf '  %-7s %-24s %-14s %6ss\n' "$engine" "$name" "$v" "$secs"
}

# Known differences: name<TAB>reason, # comments.
declare -A KNOWN_REASON=()
if [ -r "$KNOWN" ]; then
	while IFS=$'\t' read -r k reason; do
		case $k in '' | '#'*) continue ;; esac
		KNOWN_REASON[$k]=${reason:-"(no reason given)"}
	done <"$KNOWN"
else
	say "conformance: warning: no known-differences file $KNOWN"
fi

new_diffs=()
stale=()
flaky_tests=()

# ---------------------------------------------------- 3. liburing's tests
RES=$W/results
rm -rf "$RES" && mkdir -p "$RES"
if [ -n "$TESTS" ]; then
	names=$(printf '%s\n' $TESTS)
else
	names=$(cd "$LIBURING_SRC/test" && ls *.t | sed 's/\.t$//' | grep -vx exec-target)
fi
for e in $ENGINES; do
	mkdir -p "$RES/$e"
	scratch "$W/run/$e" || die "cannot make $W/run/$e"
	for n in $names; do
		[ -x "$LIBURING_SRC/test/$n.t" ] || die "no liburing test $n"
		cp "$LIBURING_SRC/test/$n.t" "$W/run/$e/"
	done
done

# The nowait side must really run on nowait: one test with the engine's log.
if [[ " $ENGINES " == *" nowait "* ]]; then
	probe_name=$(echo "$names" | grep -x -m1 nop || echo "$names" | head -n 1)
	if ! (cd "$W/run/nowait" && timeout -k 5 "$TIMEOUT" "${AS[@]}" \
		env NOWAIT_LOG=1 "$RUN" --user -- "./$probe_name.t") 2>&1 </dev/null |
		grep -q 'user-space engine'; then
		die "nowait-run --user did not report the user-space engine for $probe_name.t"
	fi
fi

for e in $ENGINES; do
	phase "liburing $LIBURING_VER tests on $e ($(echo $names | wc -w) tests, ${TIMEOUT}s time-out, $JOBS at a time)"
	running=0
	for n in $names; do
		run_test "$e" "$n" &
		running=$((running + 1))
		if [ "$running" -ge "$JOBS" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
done

# Results: the table, then the differences.
res_of() { # res_of ENGINE NAME -> verdict (or -)
	local f=$RES/$1/$2.res
	if [ -r "$f" ]; then cut -d' ' -f1 "$f"; else echo -; fi
}
secs_of() {
	local f=$RES/$1/$2.res
	if [ -r "$f" ]; then cut -d' ' -f3 "$f"; else echo -; fi
}
# A difference not in the list: once more on both engines, one at a time,
# to tell a flaky test (timing, load) from a real difference.
declare -A FIRST=()
if [ "$RETRY" != 0 ] && [[ " $ENGINES " == *" kernel "* ]] &&
   [[ " $ENGINES " == *" nowait "* ]]; then
	for n in $names; do
		k=$(res_of kernel "$n")
		u=$(res_of nowait "$n")
		[ "$k" != "$u" ] && [ -z "${KNOWN_REASON[$n]:-}" ] || continue
		phase "re-running $n (kernel $k, nowait $u; not in the known list)"
		FIRST[$n]="$k/$u"
		for e in kernel nowait; do
			mv "$RES/$e/$n.out" "$RES/$e/$n.first.out"
			run_test "$e" "$n"
		done
	done
fi

declare -A count=()
phase "results"
printf '%-24s %-14s %-14s %s\n' test kernel nowait ""
for n in $names; do
	k=$(res_of kernel "$n")
	u=$(res_of nowait "$n")
	for e in kernel nowait; do
		v=$(res_of $e "$n")
		case $v in
		PASS) count[$e.p]=$((${count[$e.p]:-0} + 1)) ;;
		SKIP) count[$e.s]=$((${count[$e.s]:-0} + 1)) ;;
		-) ;;
		*) count[$e.f]=$((${count[$e.f]:-0} + 1)) ;;
		esac
	done
	note=""
	flaky=""
	[ -n "${FIRST[$n]:-}" ] && flaky=" (first run: kernel ${FIRST[$n]%/*}, nowait ${FIRST[$n]#*/})"
	if [ "$k" != - ] && [ "$u" != - ]; then
		if [ "$k" = "$u" ] && [ -n "$flaky" ]; then
			note="FLAKY: same on a re-run$flaky"
			flaky_tests+=("$n")
		elif [ "$k" != "$u" ]; then
			if [ -n "${KNOWN_REASON[$n]:-}" ]; then
				note="known: ${KNOWN_REASON[$n]}"
			else
				note="DIFFERENT (not in the known list)$flaky"
				new_diffs+=("$n")
			fi
		elif [ -n "${KNOWN_REASON[$n]:-}" ]; then
			note="(listed as known, but same result now)"
			stale+=("$n")
		fi
	fi
	printf '%-24s %-14s %-14s %s\n' "$n" "$k $(secs_of kernel "$n")s" \
		"$u $(secs_of nowait "$n")s" "$note"
done

for n in "${new_diffs[@]}"; do
	say ""
	say "---- $n: kernel $(res_of kernel "$n"), nowait $(res_of nowait "$n"); nowait output (tail):"
	tail -n 15 "$RES/nowait/$n.out" 2>/dev/null | sed 's/^/    /'
	say "---- kernel output (tail):"
	tail -n 8 "$RES/kernel/$n.out" 2>/dev/null | sed 's/^/    /'
done

# ---------------------------------------------------------------- 4. fio
fio_ok=0
fio_bad=0
if [ "$DO_FIO" != 0 ]; then
	[ -r "$FIO_JOBFILE" ] || die "fio job file $FIO_JOBFILE not found"
	sections=$(sed -n 's/^\[\(.*\)\][[:space:]]*$/\1/p' "$FIO_JOBFILE" | grep -vx global)
	for e in $ENGINES; do
		mkdir -p "$RES/fio-$e"
		scratch "$W/run/fio-$e" || die "cannot make $W/run/fio-$e"
		sed -e "s/^size=.*/size=$FIO_SIZE/" -e "s/^runtime=.*/runtime=$FIO_RUNTIME/" \
			"$FIO_JOBFILE" >"$W/run/fio-$e/conformance.fio"
		cp "$FIO_SRC/fio" "$W/run/fio-$e/fio"
	done
	for e in $ENGINES; do
		phase "fio $FIO_VER on $e: $(basename "$FIO_JOBFILE") (size=$FIO_SIZE, runtime=$FIO_RUNTIME)"
		for s in $sections; do
			out=$RES/fio-$e/$s
			mapfile -d '' pre < <(engine_cmd "$e")
			start=$(date +%s.%N)
			(cd "$W/run/fio-$e" && exec timeout -k 5 "$FIO_TIMEOUT" "${AS[@]}" \
				"${pre[@]}" ./fio --section="$s" conformance.fio) \
				>"$out.out" 2>&1 </dev/null
			rc=$?
			secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
			v=$(verdict "$rc" "$secs" "$FIO_TIMEOUT")
			# err= of the job (the stats line, or fio's error line);
			# the read line shows that the data was read back (the
			# crc32c verify phase of the write jobs).
			err=$(sed -n -e 's/.*: (groupid=[0-9]*, jobs=[0-9]*): err= *\([0-9]*\).*/\1/p' \
				-e 's/^fio: pid=[0-9]*, err=\([0-9]*\).*/\1/p' "$out.out" |
				sort -rn | head -n 1)
			if [ "$v" = PASS ] && [ "$err" = 0 ] &&
			   grep -q '^ *read: IOPS=' "$out.out"; then
				v=OK
			elif [ "$v" = PASS ] && [ "$err" = 0 ]; then
				v="FAIL(no-read)"
			elif [ "$v" = PASS ] || [ "$v" = FAIL ]; then
				v="FAIL(err=${err:-?})"
			fi
			echo "$v $rc $secs" >"$out.res"
			rm -f "$W/run/fio-$e/fio-uring-conf.dat"
			printf '  %-7s fio:%-20s %-14s %6ss\n' "$e" "$s" "$v" "$secs"
		done
	done
	printf '%-24s %-14s %-14s %s\n' "fio section" kernel nowait ""
	for s in $sections; do
		k=$(res_of fio-kernel "$s")
		u=$(res_of fio-nowait "$s")
		note=""
		if [ "$u" = OK ]; then
			fio_ok=$((fio_ok + 1))
			if [ -n "${KNOWN_REASON[fio:$s]:-}" ]; then
				note="(listed as known, but passes now)"
				stale+=("fio:$s")
			fi
		elif [ "$u" != - ]; then
			fio_bad=$((fio_bad + 1))
			if [ -n "${KNOWN_REASON[fio:$s]:-}" ]; then
				note="known: ${KNOWN_REASON[fio:$s]}"
			else
				note="DIFFERENT (not in the known list)"
				new_diffs+=("fio:$s")
			fi
		fi
		[ "$k" != - ] && [ "$k" != OK ] && note="$note [kernel fails too]"
		printf '%-24s %-14s %-14s %s\n' "fio:$s" "$k $(secs_of fio-kernel "$s")s" \
			"$u $(secs_of fio-nowait "$s")s" "$note"
	done
	for s in $sections; do
		[[ " ${new_diffs[*]} " == *" fio:$s "* ]] || continue
		say ""
		say "---- fio:$s on nowait: $(res_of fio-nowait "$s"); output (tail):"
		tail -n 25 "$RES/fio-nowait/$s.out" | sed 's/^/    /'
	done
fi

# ---------------------------------------------------------------- summary
say ""
[ ${#flaky_tests[@]} -gt 0 ] &&
	say "conformance: warning: flaky (differed once, agreed on a re-run): ${flaky_tests[*]}"
[ ${#stale[@]} -gt 0 ] &&
	say "conformance: note: listed in $(basename "$KNOWN") but no different now: ${stale[*]}"
if [ ${#new_diffs[@]} -gt 0 ]; then
	say "conformance: FAIL: ${#new_diffs[@]} difference(s) not in $(basename "$KNOWN"): ${new_diffs[*]}"
	status=1
else
	say "conformance: OK: every difference from the kernel is in $(basename "$KNOWN")"
	status=0
fi
say "outputs: $RES/{kernel,nowait,fio-kernel,fio-nowait}/NAME.out; total time $(($(date +%s) - T0))s"
[ "$DO_FIO" != 0 ] && say "fio: $fio_ok sections passed on nowait, $fio_bad failed"
say "liburing: ${count[nowait.p]:-0} passed, ${count[nowait.f]:-0} failed, ${count[nowait.s]:-0} skipped (kernel: ${count[kernel.p]:-0} passed, ${count[kernel.f]:-0} failed, ${count[kernel.s]:-0} skipped)"
exit $status
