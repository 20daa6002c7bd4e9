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
#   runc-fio   runc in a minimal Debian rootfs (debootstrap minbase, cached)
#              with podman's default seccomp profile (golang-github-
#              containers-common's seccomp.json: io_uring gets ENOSYS); fio's
#              io_uring engine must fail alone and pass (verify=crc32c) under
#              nowait-run --auto, the build bind-mounted read-only
#   node       Node.js 20 (libuv >= 1.45, UV_USE_IO_URING=1): file opens,
#              writes, stats and reads through fs.promises; same digest on
#              both, and NOWAIT_STATS must show the requests on nowait's
#              rings (libuv silently uses its thread pool when a ring does
#              not suit it). Debian 12's own nodejs is 18.x on libuv 1.44,
#              which has no io_uring: the case skips (FAIL in strict mode)
#              when `node` is older than 20
#   mpd        mpd 0.23 updates a database of generated WAV files and plays
#              one to a pipe output; the bytes written to the pipe must equal
#              the file's samples, on both
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
#   FRESH_CACHE    where make fresh-check keeps its minbase tarball (taken
#                  for the runc rootfs when APPS_CACHE has none)
#   APPS_KNOWN     the known-differences file

set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
B=$(realpath -m "${B:-build}")
W=$B/apps
KNOWN=${APPS_KNOWN:-$TOP/test/apps-known-differences.txt}
TMO=${APPS_TIMEOUT:-120}
STRICT=${APPS_STRICT:-0}
ALL="qemu-raw qemu-qcow2 qemu-idle mariadb runc-fio node mpd"
CASES=${APPS:-$ALL}
NW=("$B/nowait-eperm" "$B/nowait-run" --auto)
NP=0 NF=0 NS=0 NX=0

say() { echo "apps: $*"; }

known_reason() {
	[ -f "$KNOWN" ] || return 1
	awk -F'\t' -v c="$1" '$1 == c { print $2; f = 1 } END { exit !f }' "$KNOWN"
}

# verdict CASE PASS|FAIL|FAIL!|SKIP REASON. FAIL! is a failure the known
# list does not excuse (a missing package, the kernel's run failing).
verdict() {
	local c=$1 v=$2 why=$3 k
	if [ "$v" = 'FAIL!' ]; then
		v=FAIL
	elif k=$(known_reason "$c"); then
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

# hard ENGINE: the verdict of a failed run on ENGINE.
hard() {
	if [ "$1" = kernel ]; then echo 'FAIL!'; else echo FAIL; fi
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
		verdict "$c" 'FAIL!' "not installed:$m"
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
		verdict "$c" 'FAIL!' "on the kernel: exit $rk; see $d/kernel/err"
	elif grep -q -i 'fail' "$d/kernel/out" "$d/kernel/err"; then
		verdict "$c" 'FAIL!' "on the kernel: a pattern failed; see $d/kernel/out"
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

# The servers started and not yet seen to end: killed if the script exits
# early (an interrupt); a pid is forgotten once it has ended, so that no
# later process that gets the number is touched.
SERVERS=()
stop_servers() {
	local p
	for p in "${SERVERS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
}
trap stop_servers EXIT

forget() {
	local p left=()
	for p in "${SERVERS[@]}"; do
		[ "$p" = "$1" ] || left+=("$p")
	done
	SERVERS=("${left[@]}")
}

# my_start ENGINE DIR: mariadbd in the background on DIR's datadir and
# socket; MYPID is its pid (nowait-eperm and nowait-run exec it). Returns 1
# when it does not answer within 60 s.
my_start() {
	local e=$1 d=$2
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
	for _ in $(seq 120); do
		mariadb-admin --socket="$d/sock" -uroot ping >/dev/null 2>&1 && return 0
		kill -0 "$MYPID" 2>/dev/null || return 1
		sleep 0.5
	done
	kill -9 "$MYPID"
	return 1
}

# my_stop SIGNAL: stops the server MYPID and waits (60 s at most) for it.
my_stop() {
	kill "-$1" "$MYPID" 2>/dev/null
	for _ in $(seq 120); do
		kill -0 "$MYPID" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$MYPID" 2>/dev/null; then
		kill -9 "$MYPID"
		sleep 1
		kill -0 "$MYPID" 2>/dev/null || forget "$MYPID"
		return 1
	fi
	forget "$MYPID"
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
			verdict "$c" "$(hard "$e")" "on $e: $(cat "$d/$e/why")"
			return
		fi
	done
	if ! grep -q 'InnoDB: Using io_uring' "$d/kernel/err.log"; then
		verdict "$c" 'FAIL!' "InnoDB does not use io_uring on the kernel; see $d/kernel/err.log"
	elif ! grep -q 'InnoDB: Using io_uring' "$d/nowait/err.log"; then
		verdict "$c" FAIL "InnoDB does not use io_uring on nowait; see $d/nowait/err.log"
	elif ! ran_on_nowait "$d/nowait/stderr" "$d/nowait/err.log"; then
		verdict "$c" FAIL "no 'nowait: user-space engine' line: not run on nowait"
	elif ! grep -q -i 'crash recovery' "$d/nowait/err.log"; then
		verdict "$c" FAIL "no crash recovery after kill -9 on nowait; see $d/nowait/err.log"
	elif grep -q -i -E 'error|corrupt' "$d/kernel/results" ||
		! grep -q '^apps.t' "$d/kernel/results"; then
		verdict "$c" 'FAIL!' "on the kernel: $d/kernel/results"
	elif ! cmp -s "$d/kernel/results" "$d/nowait/results"; then
		verdict "$c" FAIL "results differ: diff $d/kernel/results $d/nowait/results"
	else
		verdict "$c" PASS "install, 100k rows, restart, kill -9 and recovery; CHECKSUM TABLE $(awk '$1 == "apps.t" && $2 ~ /^[0-9]+$/ { print $2 }' "$d/nowait/results" | tail -1) as on the kernel"
	fi
}

# --- runc + fio --------------------------------------------------------------

# rootfs DIR: a debootstrap'd minbase bookworm in DIR, kept there across runs
# (DIR/.complete); its tarball is cached in APPS_CACHE (make fresh-check's
# one, the same minbase, is taken when it is there).
rootfs() {
	local r=$1 cache tar url
	[ -f "$r/.complete" ] && return 0
	cache=$(pick_cache)
	tar=$cache/debian-bookworm-amd64-minbase.tar
	[ -s "$tar" ] ||
		tar=${FRESH_CACHE:-/var/cache/nowait-fresh}/debian-bookworm-amd64-minbase.tar
	rm -rf --one-file-system "$r" && mkdir -p "$r"
	if [ -s "$tar" ] && tar -C "$r" -xpf "$tar"; then
		touch "$r/.complete"
		return 0
	fi
	tar=$cache/debian-bookworm-amd64-minbase.tar
	# shellcheck disable=SC2016 # apt's own $(FIELD) syntax
	url=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk '$2 == "bookworm" { print $1; exit }')
	rm -rf --one-file-system "$r"
	debootstrap --variant=minbase bookworm "$r" "${url:-http://deb.debian.org/debian}" \
		>"$W/debootstrap.log" 2>&1 || return 1
	tar -C "$r" -cpf "$tar.tmp" . && mv "$tar.tmp" "$tar"
	touch "$r/.complete"
}

# oci_seccomp: podman's default profile (the containers-common JSON, with
# its includes/excludes for amd64 and runc's default capabilities) as an
# OCI runtime spec's linux.seccomp.
oci_seccomp() {
	jq --argjson caps "$1" '
	def held: . as $want | all($want[]; . as $x | $caps | index($x) != null);
	{defaultAction, defaultErrnoRet,
	 architectures: [.archMap[] | select(.architecture == "SCMP_ARCH_X86_64") |
			 .architecture, .subArchitectures[]],
	 syscalls: [.syscalls[]
		| select((.includes.arches // []) as $a |
			 ($a | length) == 0 or ($a | index("amd64")) != null)
		| select((.includes.caps // []) | held)
		| select((.excludes.caps // []) as $e |
			 ($e | length) == 0 or ($e | held | not))
		| {names, action, args: (.args // [])}
		  + (if .errnoRet then {errnoRet} else {} end)]}' \
		/usr/share/containers/seccomp.json
}

# runc_fio NAME ARGS...: fio (ARGS before it) in a fresh container NAME;
# output in $d/NAME.out.
runc_fio() {
	local n=$1 b=$d/$1
	shift
	rm -rf "$b" && mkdir -p "$b"
	jq --arg root "$d/rootfs" --arg build "$B" --arg data "$d/data" \
		--argjson seccomp "$(cat "$d/seccomp.json")" --argjson args \
		"$(printf '%s\n' "$@" fio --name=apps --ioengine=io_uring \
			--filename=/data/f --size=8M --bs=4k --iodepth=8 --rw=randwrite \
			--verify=crc32c --thread | jq -R . | jq -s .)" '
		.root = {path: $root, readonly: true} | .process.terminal = false |
		.process.args = $args | .process.cwd = "/data" |
		.linux.seccomp = $seccomp |
		.mounts += [{destination: "/nowait", type: "bind", source: $build,
			     options: ["rbind", "ro"]},
			    {destination: "/data", type: "bind", source: $data,
			     options: ["rbind", "rw"]}]' "$d/spec.json" >"$b/config.json"
	timeout -k 5 "$TMO" runc --root "$d/state" run --bundle "$b" \
		"nowait-apps-$$-$n" </dev/null >"$d/$n.out" 2>&1
	echo $? >"$d/$n.rc"
	runc --root "$d/state" delete -f "nowait-apps-$$-$n" >/dev/null 2>&1
}

case_runc_fio() {
	local c=runc-fio d=$W/runc-fio l caps
	missing "$c" runc golang-github-containers-common fio jq debootstrap && return
	rm -rf "$d/state" "$d/data" "$d"/*.out && mkdir -p "$d/data"
	if ! rootfs "$d/rootfs"; then
		verdict "$c" 'FAIL!' "no rootfs (debootstrap: see $W/debootstrap.log)"
		return
	fi
	# Debian's fio and the libraries it loads, into the image.
	for l in /usr/bin/fio $(ldd /usr/bin/fio | awk '$3 ~ /^\// { print $3 }'); do
		[ -e "$d/rootfs$l" ] || cp -L --parents "$l" "$d/rootfs" || return
	done
	(cd "$d" && rm -f config.json && runc spec && mv config.json spec.json)
	caps=$(jq -c .process.capabilities.bounding "$d/spec.json")
	if ! oci_seccomp "$caps" >"$d/seccomp.json" ||
		jq -e '.syscalls[].names[] | select(startswith("io_uring"))' \
			"$d/seccomp.json" >/dev/null; then
		verdict "$c" 'FAIL!' "podman's profile does not block io_uring; see $d/seccomp.json"
		return
	fi
	runc_fio alone
	runc_fio nowait /nowait/nowait-run --auto --
	if [ "$(cat "$d/alone.rc")" = 0 ]; then
		verdict "$c" 'FAIL!' "fio's io_uring engine works under the profile alone; see $d/alone.out"
	elif ! grep -q 'Function not implemented' "$d/alone.out"; then
		verdict "$c" 'FAIL!' "fio alone did not fail with ENOSYS; see $d/alone.out"
	elif [ "$(cat "$d/nowait.rc")" != 0 ]; then
		verdict "$c" FAIL "fio under nowait-run --auto: exit $(cat "$d/nowait.rc"); see $d/nowait.out"
	elif ! grep -q '^nowait: user-space engine' "$d/nowait.out"; then
		verdict "$c" FAIL "no 'nowait: user-space engine' line; see $d/nowait.out"
	elif ! grep -q 'err= 0' "$d/nowait.out"; then
		verdict "$c" FAIL "fio reports an error; see $d/nowait.out"
	else
		verdict "$c" PASS "in runc under podman's profile: fio io_uring alone fails (ENOSYS), under nowait-run --auto writes and verifies 8 MiB"
	fi
}

# --- Node.js -----------------------------------------------------------------

NODE_FILES=200

# ver_ge A B: version A >= B (dotted numbers).
ver_ge() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]
}

# node_ops STATS OP: requests of OP on all of nowait's rings.
node_ops() {
	jq -s --arg op "$2" '[.[].ops[$op].n // 0] | add // 0' "$1" 2>/dev/null || echo 0
}

case_node() {
	local c=node d=$W/node nv uv op n k why=""
	if ! command -v node >/dev/null; then
		missing "$c" nodejs && return
	fi
	nv=$(node -p 'process.versions.node' 2>/dev/null)
	uv=$(node -p 'process.versions.uv' 2>/dev/null)
	if ! ver_ge "$nv" 20 || ! ver_ge "$uv" 1.45; then
		# Debian 12's nodejs (18.x, the system's libuv 1.44) has no
		# io_uring, and no Debian 12 package has a newer one: a machine
		# without its own Node.js 20 cannot run the case, even in CI.
		verdict "$c" SKIP \
			"node $nv on libuv $uv: libuv's io_uring needs 1.45 (Node.js 20, not in Debian 12)"
		return
	fi
	missing "$c" jq strace && return
	rm -rf "$d" && mkdir -p "$d"
	export UV_USE_IO_URING=1
	# On the kernel under strace: with libuv on io_uring, the files are
	# opened by the ring (no openat of them from the process).
	on kernel strace -f -qq -e trace=openat -o "$d/kernel.strace" \
		node "$TOP/tools/apps/node-files.js" "$d/kernel" "$NODE_FILES" \
		>"$d/kernel.out" 2>"$d/kernel.err"
	k=$(grep -c "$d/kernel/f" "$d/kernel.strace")
	NOWAIT_STATS=json NOWAIT_STATS_FILE="$d/stats" on nowait \
		node "$TOP/tools/apps/node-files.js" "$d/nowait" "$NODE_FILES" \
		>"$d/nowait.out" 2>"$d/nowait.err"
	unset UV_USE_IO_URING
	# libuv 1.45+ sends these (CLOSE too, on kernels from 6.1 only).
	for op in OPENAT WRITEV FSYNC STATX READV; do
		n=$(node_ops "$d/stats" "$op")
		[ "$n" -ge "$NODE_FILES" ] || why="$why $op=$n"
	done
	if ! grep -q "^$NODE_FILES files " "$d/kernel.out"; then
		verdict "$c" 'FAIL!' "on the kernel: see $d/kernel.err"
	elif [ "$k" != 0 ]; then
		verdict "$c" 'FAIL!' "on the kernel libuv opened $k files itself (not on io_uring): node $nv, libuv $uv"
	elif ! grep -q "^$NODE_FILES files " "$d/nowait.out"; then
		verdict "$c" FAIL "on nowait: see $d/nowait.err"
	elif ! ran_on_nowait "$d/nowait.err"; then
		verdict "$c" FAIL "no 'nowait: user-space engine' line: not run on nowait"
	elif ! cmp -s "$d/kernel.out" "$d/nowait.out"; then
		verdict "$c" FAIL "digests differ: $(cat "$d/kernel.out") / $(cat "$d/nowait.out")"
	elif [ -n "$why" ]; then
		verdict "$c" FAIL "same digest, but on libuv's thread pool: nowait's rings served$why (of $NODE_FILES each; $d/stats)"
	else
		verdict "$c" PASS "node $nv, libuv $uv: $NODE_FILES files opened, written, synced, stat'ed and read on nowait's rings (CLOSE: $(node_ops "$d/stats" CLOSE)), digest as on the kernel"
	fi
}

# --- mpd ---------------------------------------------------------------------

# le32 N: N as 4 little-endian bytes.
le32() {
	# shellcheck disable=SC2059 # the format is the bytes
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) \
		$((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)))"
}

# wav FILE BYTES: a PCM WAV (44.1 kHz, 16 bit, stereo) of BYTES of noise.
wav() {
	{
		printf 'RIFF' && le32 $((36 + $2)) && printf 'WAVEfmt ' && le32 16
		printf '\x01\x00\x02\x00' && le32 44100 && le32 176400
		printf '\x04\x00\x10\x00data' && le32 "$2"
		head -c "$2" /dev/urandom
	} >"$1"
}

mpc_() {
	timeout -k 5 15 mpc --host="$M/socket" "$@"
}

# mpd_run ENGINE: mpd on $M (its own music, database, socket and pipe
# output): update the database, play one file. Returns 1 with $M/why.
mpd_run() {
	local e=$1 pid step
	cat >"$M/mpd.conf" <<-EOF
		music_directory "$d/music"
		db_file "$M/database"
		log_file "$M/log"
		pid_file "$M/pid"
		state_file "$M/state"
		bind_to_address "$M/socket"
		zeroconf_enabled "no"
		auto_update "no"
		audio_output {
			type "pipe"
			name "pipe"
			command "cat > $M/out"
			format "44100:16:2"
		}
	EOF
	if [ "$e" = nowait ]; then
		NOWAIT_STATS=json NOWAIT_STATS_FILE="$M/stats" "${NW[@]}" -- \
			mpd --no-daemon --stderr "$M/mpd.conf" >"$M/stderr" 2>&1 &
	else
		mpd --no-daemon --stderr "$M/mpd.conf" >"$M/stderr" 2>&1 &
	fi
	pid=$!
	disown "$pid"
	SERVERS+=("$pid")
	for _ in $(seq 80); do
		[ -S "$M/socket" ] && break
		sleep 0.25
	done
	step=update
	mpc_ update --wait >/dev/null && step=listall &&
		mpc_ listall >"$M/listall" && step=add && mpc_ add a/t2.wav &&
		step=play && mpc_ play >/dev/null ||
		echo "mpc $step failed or hung; see $M/stderr" >"$M/why"
	# 2 s of audio; the pipe output does not pace it.
	for _ in $(seq 80); do
		[ -s "$M/why" ] && break
		mpc_ status >"$M/status" 2>&1 || break
		grep -q '^\[playing\]' "$M/status" || break
		sleep 0.25
	done
	grep -q '^\[playing\]' "$M/status" 2>/dev/null &&
		echo "still playing after 20 s" >"$M/why"
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 40); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		sleep 1
		[ -s "$M/why" ] && sed -i 's/$/; SIGTERM did not stop it/' "$M/why" ||
			echo "SIGTERM did not stop it" >"$M/why"
	fi
	kill -0 "$pid" 2>/dev/null || forget "$pid"
	[ ! -s "$M/why" ]
}

case_mpd() {
	local c=mpd d=$W/mpd e M n
	missing "$c" mpd mpc && return
	rm -rf "$d" && mkdir -p "$d/music/a"
	for n in 1 2 3; do
		wav "$d/music/a/t$n.wav" $((176400 * 2))
	done
	tail -c +45 "$d/music/a/t2.wav" >"$d/samples"
	for e in kernel nowait; do
		M=$d/$e
		mkdir -p "$M"
		if ! mpd_run "$e"; then
			verdict "$c" "$(hard "$e")" "on $e: $(cat "$M/why")"
			return
		fi
	done
	n=$(jq -s '[.[].ops | (.READ.n // 0) + (.READV.n // 0)] | add // 0' \
		"$d/nowait/stats" 2>/dev/null)
	if ! cmp -s "$d/samples" "$d/kernel/out"; then
		verdict "$c" 'FAIL!' "on the kernel the pipe output is not the file's samples"
	elif ! cmp -s "$d/samples" "$d/nowait/out"; then
		verdict "$c" FAIL "the pipe output is not the file's samples ($d/nowait/out)"
	elif ! cmp -s "$d/kernel/listall" "$d/nowait/listall"; then
		verdict "$c" FAIL "databases differ: diff $d/kernel/listall $d/nowait/listall"
	elif ! ran_on_nowait "$d/nowait/stderr"; then
		verdict "$c" FAIL "no 'nowait: user-space engine' line: not run on nowait"
	elif [ "${n:-0}" -lt 1 ]; then
		verdict "$c" FAIL "no read on nowait's rings ($d/nowait/stats)"
	else
		verdict "$c" PASS "database of 3 WAV files as on the kernel; $(stat -c %s "$d/samples") bytes played to the pipe equal the file's, $n reads on nowait"
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
	runc-fio) case_runc_fio ;;
	node) case_node ;;
	mpd) case_mpd ;;
	*) verdict "$c" FAIL "no such case (cases: $ALL)" ;;
	esac
done
echo "APPS: $NP passed, $NF failed, $NS skipped, $NX known"
[ "$NF" = 0 ]
