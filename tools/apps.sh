#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make apps: real io_uring programs from Debian 12, unmodified, each run twice
# on the same machine and compared: on the kernel's io_uring, and under an
# EPERM profile (build/nowait-eperm, as Docker's and containerd's) with
# build/nowait-run --auto, where they run on nowait. Cases:
#
#   qemu-raw, qemu-qcow2  qemu-io -i io_uring: write/read/verify patterns
#              (-P) on a raw and a qcow2 image; the outputs (timings left
#              out) and the images' contents must be equal, and qemu-io -i
#              io_uring must fail under the profile alone
#   qemu-idle  qemu-io -c 'sleep 1500': user+system CPU time of the child
#              (bash's times, from getrusage) on nowait within 2x the
#              kernel's, plus APPS_IDLE_SLACK_MS (default 20) for the
#              accounting granularity
#   mariadb    mariadbd 10.11 (built with liburing: innodb_use_native_aio
#              uses io_uring): mariadb-install-db into a private datadir, a
#              server on a private socket (no TCP), 100k rows, clean
#              restart, more rows, kill -9, crash recovery; CHECKSUM TABLE
#              and counts after each step equal to the kernel run
#
# Every server or daemon is started by this script and stopped by its pid;
# every program runs under a time-out. Each case prints one line:
#   apps: CASE: PASS|FAIL|SKIP|XFAIL (reason)
# and the last line is "APPS: P passed, F failed, S skipped, X known".
# A case listed in test/apps-known-differences.txt (CASE<TAB>reason) that
# fails is XFAIL and does not fail the run (cases waiting on unmerged work,
# such as the ring fd's readiness, say so there); one listed that passes is
# reported so its line is deleted. Any other FAIL fails the run.
#
# Environment:
#   B              build directory (default build)
#   APPS           cases to run (default: all, in the order above)
#   APPS_STRICT=1  a case whose Debian package is missing (not installable)
#                  FAILs instead of SKIPping (CI)
#   APPS_CACHE     downloads kept across runs (default /var/cache/nowait-apps;
#                  $B/apps-cache when that cannot be made); never required
#   APPS_TIMEOUT   seconds for one program run (default 120)
#   APPS_KNOWN     the known-differences file

set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
B=$(realpath -m "${B:-build}")
W=$B/apps
KNOWN=${APPS_KNOWN:-$TOP/test/apps-known-differences.txt}
TMO=${APPS_TIMEOUT:-120}
STRICT=${APPS_STRICT:-0}
ALL="qemu-raw qemu-qcow2 qemu-idle mariadb"
CASES=${APPS:-$ALL}
NW=("$B/nowait-eperm" "$B/nowait-run" --auto)
NP=0 NF=0 NS=0 NX=0

say() { echo "apps: $*"; }

known_reason() {
	[ -f "$KNOWN" ] || return 1
	awk -F'\t' -v c="$1" '$1 == c { print $2; f = 1 } END { exit !f }' "$KNOWN"
}

# verdict CASE PASS|FAIL|SKIP REASON
verdict() {
	local c=$1 v=$2 why=$3 k
	if k=$(known_reason "$c"); then
		case $v in
		FAIL) v=XFAIL why="$why; known: $k" ;;
		PASS) why="$why; listed in $(basename "$KNOWN") ($k): delete its line" ;;
		esac
	fi
	case $v in
	PASS) NP=$((NP + 1)) ;; FAIL) NF=$((NF + 1)) ;;
	SKIP) NS=$((NS + 1)) ;; XFAIL) NX=$((NX + 1)) ;;
	esac
	say "$c: $v ($why)"
}

# missing CASE PKG...: a package the case needs is not installed: SKIP, or
# FAIL under APPS_STRICT=1. Returns 1 when all are there.
missing() {
	local c=$1 p m=""
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			m="$m $p"
	done
	[ -z "$m" ] && return 1
	if [ "$STRICT" = 1 ]; then
		verdict "$c" FAIL "not installed:$m"
	else
		verdict "$c" SKIP "not installed:$m"
	fi
	return 0
}

# on ENGINE CMD...: CMD on the kernel (kernel) or on nowait under the EPERM
# profile (nowait), bounded by APPS_TIMEOUT; its process group is killed at
# the time-out.
on() {
	local e=$1
	shift
	if [ "$e" = nowait ]; then
		timeout -k 5 "$TMO" "${NW[@]}" -- "$@"
	else
		timeout -k 5 "$TMO" "$@"
	fi
}

# ran_on_nowait FILE...: the preload's log line is in one of the files.
ran_on_nowait() {
	grep -qs '^nowait: user-space engine' "$@"
}

pick_cache() {
	local d=${APPS_CACHE:-/var/cache/nowait-apps}
	if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then
		echo "$d"
	else
		mkdir -p "$B/apps-cache" && echo "$B/apps-cache"
	fi
}

# --- qemu-io ---------------------------------------------------------------

QEMU_CMDS=(-c 'write -P 0xa5 0 1M' -c 'write -P 0x5a 1M 64k'
	-c 'aio_write -P 0x11 2M 128k' -c 'aio_write -P 0x22 3M 4k'
	-c 'aio_flush' -c 'writev -P 0x33 5M 4k 8k 12k' -c 'flush'
	-c 'read -P 0xa5 0 1M' -c 'read -P 0x5a 1M 64k'
	-c 'aio_read -P 0x11 2M 128k' -c 'aio_read -P 0x22 3M 4k' -c 'aio_flush'
	-c 'readv -P 0x33 5M 12k 12k' -c 'read -P 0 4M 64k'
	-c 'read -v 3M 32')

# qemu_run ENGINE FMT DIR: a fresh image, the patterns, its content as raw.
qemu_run() {
	local e=$1 fmt=$2 d=$3
	mkdir -p "$d"
	qemu-img create -q -f "$fmt" "$d/img" 8M || return 1
	on "$e" qemu-io -f "$fmt" -i io_uring "${QEMU_CMDS[@]}" "$d/img" \
		>"$d/out" 2>"$d/err"
	echo $? >"$d/rc"
	# Timings vary, and the order in which aio_ requests complete; the rest
	# (bytes, offsets, dumps, errors) must not.
	grep -v -E ' ops; |^nowait: ' "$d/out" "$d/err" | sed 's|^[^:]*/||' |
		sort >"$d/cmp"
	qemu-img convert -f "$fmt" -O raw "$d/img" "$d/raw"
}

case_qemu() {
	local c=$1 fmt=$2 d=$W/$1 rk rn
	missing "$c" qemu-utils && return
	rm -rf "$d" && mkdir -p "$d"
	qemu_run kernel "$fmt" "$d/kernel"
	qemu_run nowait "$fmt" "$d/nowait"
	rk=$(cat "$d/kernel/rc") rn=$(cat "$d/nowait/rc")
	if [ "$rk" != 0 ]; then
		verdict "$c" FAIL "on the kernel: exit $rk; see $d/kernel/err"
	elif grep -q -i 'fail' "$d/kernel/out" "$d/kernel/err"; then
		verdict "$c" FAIL "on the kernel: a pattern failed; see $d/kernel/out"
	elif [ "$rn" != 0 ]; then
		verdict "$c" FAIL "on nowait: exit $rn; see $d/nowait/err"
	elif ! ran_on_nowait "$d/nowait/err"; then
		verdict "$c" FAIL "no 'nowait: user-space engine' line: not run on nowait"
	elif ! cmp -s "$d/kernel/cmp" "$d/nowait/cmp"; then
		verdict "$c" FAIL "outputs differ: diff $d/kernel/cmp $d/nowait/cmp"
	elif ! cmp -s "$d/kernel/raw" "$d/nowait/raw"; then
		verdict "$c" FAIL "image contents differ"
	elif timeout -k 5 "$TMO" "$B/nowait-eperm" qemu-io -f "$fmt" -i io_uring \
		-c 'read 0 4k' "$d/nowait/img" >"$d/alone" 2>&1; then
		verdict "$c" FAIL "qemu-io -i io_uring works under the profile alone"
	else
		verdict "$c" PASS "$(grep -c -E '^(read|wrote) ' "$d/nowait/out") requests verified, images equal, fails alone"
	fi
}

# cpu_ms ENGINE IMG: CPU time (user+system, ms) of an idle qemu-io.
cpu_ms() {
	local t
	t=$( (on "$1" qemu-io -f raw -i io_uring -c 'sleep 1500' "$2" \
		>/dev/null 2>&1 || echo fail >&2
		times) | sed -n 2p) || return 1
	# "0m0.012s 0m0.004s": the children's user and system time.
	echo "$t" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/);
		s += a[1] * 60000 + a[2] * 1000 } printf "%d\n", s + 0.5 }'
}

case_qemu_idle() {
	local c=qemu-idle d=$W/qemu-idle k n slack=${APPS_IDLE_SLACK_MS:-20}
	missing "$c" qemu-utils && return
	rm -rf "$d" && mkdir -p "$d"
	qemu-img create -q -f raw "$d/img" 1M || {
		verdict "$c" FAIL "qemu-img create"
		return
	}
	k=$(cpu_ms kernel "$d/img" 2>"$d/kernel.err")
	n=$(cpu_ms nowait "$d/img" 2>"$d/nowait.err")
	if [ -s "$d/kernel.err" ] || [ -s "$d/nowait.err" ]; then
		verdict "$c" FAIL "qemu-io failed; see $d/*.err"
	elif [ "$n" -le $((2 * k + slack)) ]; then
		verdict "$c" PASS "CPU of 1.5 s idle: nowait ${n} ms, kernel ${k} ms (limit 2x + ${slack} ms)"
	else
		verdict "$c" FAIL "CPU of 1.5 s idle: nowait ${n} ms, kernel ${k} ms (limit 2x + ${slack} ms)"
	fi
}

# --- MariaDB -----------------------------------------------------------------

SERVERS=()
stop_servers() {
	local p
	for p in "${SERVERS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
}
trap stop_servers EXIT

# my_start ENGINE DIR: mariadbd in the background on DIR's datadir and
# socket; MYPID is its pid (nowait-eperm and nowait-run exec it). Returns 1
# when it does not answer within 60 s.
my_start() {
	local e=$1 d=$2 i
	local args=(mariadbd --no-defaults --datadir="$d/data" --socket="$d/sock"
		--skip-networking --pid-file="$d/pid" --log-error="$d/err.log"
		--user=root --innodb-use-native-aio=1 --innodb-buffer-pool-size=64M
		--innodb-log-file-size=32M)
	if [ "$e" = nowait ]; then
		"${NW[@]}" -- "${args[@]}" 2>>"$d/stderr" &
	else
		"${args[@]}" 2>>"$d/stderr" &
	fi
	MYPID=$!
	# Out of the job table: a kill -9 is not reported; bash still reaps it.
	disown "$MYPID"
	SERVERS+=("$MYPID")
	for i in $(seq 120); do
		mariadb-admin --socket="$d/sock" -uroot ping >/dev/null 2>&1 && return 0
		kill -0 "$MYPID" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# my_stop SIGNAL: stops the server MYPID and waits (60 s at most) for it.
my_stop() {
	local i
	kill "-$1" "$MYPID" 2>/dev/null
	for i in $(seq 120); do
		kill -0 "$MYPID" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$MYPID" 2>/dev/null; then
		kill -9 "$MYPID"
		return 1
	fi
	return 0
}

my_sql() {
	timeout -k 5 "$TMO" mariadb --socket="$1/sock" -uroot -N -B \
		-e "create database if not exists apps; use apps; $2"
}

MY_SUM="checksum table t; select count(*), sum(n), max(id) from t"

# my_run ENGINE DIR: the whole life of a database; the checked results go to
# DIR/results, one block per step. Returns 1 with DIR/why on a failure.
my_run() {
	local e=$1 d=$2
	mkdir -p "$d"
	if ! on "$e" mariadb-install-db --no-defaults --datadir="$d/data" \
		--user=root --auth-root-authentication-method=normal \
		--skip-test-db >"$d/install.log" 2>&1; then
		echo "mariadb-install-db failed; see $d/install.log" >"$d/why"
		return 1
	fi
	grep '^nowait:' "$d/install.log" >>"$d/stderr"
	my_start "$e" "$d" || { echo "no server; see $d/err.log" >"$d/why"; return 1; }
	{
		echo "== load"
		my_sql "$d" "create table t (id int primary key, v varchar(64),
			n bigint, key(v)) engine=innodb;
			insert into t select seq, md5(seq), seq * 7 from seq_1_to_100000;
			update t set n = n + 1 where id % 3 = 0;
			delete from t where id % 97 = 0; $MY_SUM"
	} >>"$d/results" 2>&1 || true
	my_stop TERM || { echo "no clean shutdown" >"$d/why"; return 1; }
	my_start "$e" "$d" || { echo "no restart; see $d/err.log" >"$d/why"; return 1; }
	{
		echo "== restart"
		my_sql "$d" "$MY_SUM"
		echo "== before the crash"
		my_sql "$d" "insert into t select seq, sha1(seq), seq from seq_100001_to_120000;
			update t set v = concat(v, 'x') where id % 5 = 0; $MY_SUM"
	} >>"$d/results" 2>&1 || true
	my_stop KILL
	my_start "$e" "$d" || { echo "no recovery; see $d/err.log" >"$d/why"; return 1; }
	{
		echo "== recovered"
		my_sql "$d" "$MY_SUM; check table t"
	} >>"$d/results" 2>&1 || true
	my_stop TERM || { echo "no clean shutdown after recovery" >"$d/why"; return 1; }
	return 0
}

case_mariadb() {
	local c=mariadb d=$W/mariadb e
	missing "$c" mariadb-server mariadb-client && return
	rm -rf "$d" && mkdir -p "$d"
	for e in kernel nowait; do
		if ! my_run "$e" "$d/$e"; then
			verdict "$c" FAIL "on $e: $(cat "$d/$e/why")"
			return
		fi
	done
	if ! grep -q 'InnoDB: Using io_uring' "$d/kernel/err.log"; then
		verdict "$c" FAIL "InnoDB does not use io_uring on the kernel; see $d/kernel/err.log"
	elif ! grep -q 'InnoDB: Using io_uring' "$d/nowait/err.log"; then
		verdict "$c" FAIL "InnoDB does not use io_uring on nowait; see $d/nowait/err.log"
	elif ! ran_on_nowait "$d/nowait/stderr" "$d/nowait/err.log"; then
		verdict "$c" FAIL "no 'nowait: user-space engine' line: not run on nowait"
	elif ! grep -q -i 'crash recovery' "$d/nowait/err.log"; then
		verdict "$c" FAIL "no crash recovery after kill -9 on nowait; see $d/nowait/err.log"
	elif grep -q -i -E 'error|corrupt' "$d/kernel/results" ||
		! grep -q '^apps.t' "$d/kernel/results"; then
		verdict "$c" FAIL "on the kernel: $d/kernel/results"
	elif ! cmp -s "$d/kernel/results" "$d/nowait/results"; then
		verdict "$c" FAIL "results differ: diff $d/kernel/results $d/nowait/results"
	else
		verdict "$c" PASS "install, 100k rows, restart, kill -9 and recovery; CHECKSUM TABLE $(awk '$1 == "apps.t" && $2 ~ /^[0-9]+$/ { print $2 }' "$d/nowait/results" | tail -1) as on the kernel"
	fi
}

# --- main --------------------------------------------------------------------

mkdir -p "$W"
for c in $CASES; do
	case $c in
	qemu-raw) case_qemu qemu-raw raw ;;
	qemu-qcow2) case_qemu qemu-qcow2 qcow2 ;;
	qemu-idle) case_qemu_idle ;;
	mariadb) case_mariadb ;;
	*) verdict "$c" FAIL "no such case (cases: $ALL)" ;;
	esac
done
echo "APPS: $NP passed, $NF failed, $NS skipped, $NX known"
[ "$NF" = 0 ]
