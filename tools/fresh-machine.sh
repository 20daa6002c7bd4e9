#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fresh-machine.sh (make fresh-check): the README's promise, tried. On a bare
# Debian 12, as root, `make test` installs what it needs and passes.
#
#   1. root     a minbase bookworm from debootstrap, from the archive this
#               machine's apt is configured with (read at run time). The
#               pristine tree is kept as a tarball in $FRESH_CACHE (default
#               /var/cache/nowait-fresh, else $B/fresh/cache) and unpacked
#               anew each run; built when the tarball is absent.
#   2. test     /proc, /sys, /dev, /dev/pts (and a tmpfs on /dev/shm) in the
#               chroot, `git archive HEAD` of this repository in
#               /usr/src/nowait (not /root: conformance runs tests as nobody),
#               `make` the only package installed by hand, then `make test`
#               as root; it must end "TESTS: P passed, 0 failed, S skipped".
#   3. deb      if $B/deb/*.deb exist (make deb), apt-get install them in the chroot and
#               run fio under nowait-run --auto inside nowait-eperm. Skipped
#               (with a message) when there is no .deb.
#
# All the mounts live in a private mount namespace (unshare), so none can
# leak to the host even on SIGKILL; they are also unmounted on exit (trap),
# and the host's mount table is checked afterwards (findmnt). The whole run
# is bounded by FRESH_TIMEOUT seconds (default 1200).
#
# Environment: B (build dir, default build), FRESH_CACHE, FRESH_TIMEOUT,
# FRESH_CMD (what runs in /usr/src/nowait, default "make test"; e.g.
# FRESH_CMD="bash .ci/run" tries the whole CI on a bare machine). It passes
# when FRESH_CMD exits 0 and every "TESTS:" line it printed (one at least)
# says 0 failed. Inside the chroot NOWAIT_FRESH=1 is set, and this script
# then does nothing (no chroot in the chroot).
# Output: $B/fresh/log (everything the chroot printed), summary on stdout.
set -euo pipefail

SUITE=bookworm
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
case $B in /*) ;; *) B=$SRC/$B ;; esac
W=$B/fresh
R=$W/root
LOG=$W/log
FRESH_TIMEOUT=${FRESH_TIMEOUT:-1200}
FRESH_CMD=${FRESH_CMD:-make test}

say() { printf 'fresh: %s\n' "$*"; }
die() {
	printf 'fresh: %s\n' "$*" >&2
	exit 1
}

# mirror: the first http(s) URI this machine's apt uses for $SUITE itself
# (not -updates or -security), from one-line .list files or deb822 .sources.
mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk -v s="$SUITE" '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
			if ($(i + 1) == s) { print $i; exit }
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v s="$SUITE" '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && enabled != "no" &&
			    (" " suites " ") ~ (" " s " ")) {
				split(uris, u, " "); print u[1]; exit
			}
			types = uris = suites = enabled = ""
		}
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		{ k = tolower($1); $1 = ""; sub(/^ +/, "") }
		k == "types:" { types = $0 } k == "uris:" { uris = $0 }
		k == "suites:" { suites = $0 } k == "enabled:" { enabled = tolower($0) }
		END { flush() }' "$f"
	done
}

pick_cache() {
	local d=${FRESH_CACHE:-/var/cache/nowait-fresh}
	if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then
		echo "$d"
	else
		mkdir -p "$W/cache" && echo "$W/cache"
	fi
}

# mounts_under DIR: the mount points at or below DIR in this namespace.
mounts_under() {
	findmnt -rn -o TARGET | awk -v r="$1" '$0 == r || index($0, r "/") == 1'
}

# make_root: a pristine minbase in $R, from the cached tarball, or from
# debootstrap (and then cached).
make_root() {
	local cache tar url arch
	cache=$(pick_cache)
	arch=$(dpkg --print-architecture)
	tar=$cache/debian-$SUITE-$arch-minbase.tar
	[ -z "$(mounts_under "$R")" ] || die "$R has mounts; not removing it"
	rm -rf --one-file-system "$R" "$R.new"
	if [ -s "$tar" ]; then
		say "root: unpacking $tar"
		mkdir -p "$R" && tar -C "$R" -xpf "$tar" && return
		say "root: $tar does not unpack; building it again"
		rm -rf --one-file-system "$R" && rm -f "$tar"
	fi
	url=$(mirror | head -n 1)
	[ -n "$url" ] || die "no '$SUITE' archive in /etc/apt/sources.list{,.d}"
	if ! command -v debootstrap >/dev/null; then
		say "installing debootstrap"
		apt-get update -qq >/dev/null || true
		apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
	fi
	say "root: debootstrap --variant=minbase $SUITE from $url"
	debootstrap --variant=minbase --arch="$arch" "$SUITE" "$R.new" "$url" \
		>"$W/debootstrap.log" 2>&1 ||
		die "debootstrap failed; see $W/debootstrap.log"
	say "root: caching it in $tar"
	tar -C "$R.new" -cpf "$tar.tmp" . && mv "$tar.tmp" "$tar"
	mv "$R.new" "$R"
}

# kill_chroot: end every process whose root is $R (a daemon a package's
# postinst started, a test's left-over child), so the unmounts succeed.
kill_chroot() {
	local p root
	for p in /proc/[0-9]*; do
		root=$(readlink "$p/root" 2>/dev/null) || continue
		[ "$root" = "$R" ] && kill -9 "${p#/proc/}" 2>/dev/null
	done
	return 0
}

unmount_all() {
	local m
	kill_chroot
	# Deepest first.
	for m in $(mounts_under "$R" | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
	if [ -n "$(mounts_under "$R")" ]; then
		printf 'fresh: still mounted:\n%s\n' "$(mounts_under "$R")" >&2
		return 1
	fi
}

mount_all() {
	mount -t proc proc "$R/proc"
	mount --bind /sys "$R/sys"
	mount --bind /dev "$R/dev"
	mount --bind /dev/pts "$R/dev/pts"
	mkdir -p "$R/dev/shm"
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/dev/shm"
}

# in_root CMD: run a shell command in the chroot as a fresh root login would.
in_root() {
	chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive NOWAIT_FRESH=1 /bin/bash -c "$1"
}

prepare_root() {
	cp -L /etc/resolv.conf "$R/etc/resolv.conf"
	# No service starts inside the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	mkdir -p "$R/usr/src/nowait"
	git -C "$SRC" archive --format=tar HEAD | tar -C "$R/usr/src/nowait" -xf -
	say "source: $(git -C "$SRC" rev-parse --short HEAD) (git archive HEAD)"
	# CI's layout: shared/ beside the clone (make conformance reads its
	# reference/ files). make test does not need it.
	if [ -d "$SRC/../shared/reference" ]; then
		cp -r "$SRC/../shared" "$R/usr/src/shared"
	fi
	say "chroot: apt-get install make (the only package installed by hand)"
	in_root 'apt-get update -qq && apt-get install -y -qq make' >>"$LOG" 2>&1 ||
		die "apt-get install make failed; see $LOG"
}

run_test() {
	local start secs line rc=0
	start=$(date +%s)
	say "chroot: $FRESH_CMD (log: $LOG)"
	in_root "cd /usr/src/nowait && $FRESH_CMD" >>"$LOG" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	line=$(grep '^TESTS:' "$LOG" | tail -n 1)
	say "chroot: $FRESH_CMD: exit $rc in ${secs} s: ${line:-no TESTS: line}"
	if [ $rc -ne 0 ] || [ -z "$line" ] ||
		grep '^TESTS:' "$LOG" | grep -qv ' 0 failed'; then
		tail -n 30 "$LOG" >&2
		die "$FRESH_CMD did not pass on the fresh machine"
	fi
}

# --- hook: the project's .deb (issue 17 item 3, second half) ---------------
# When `make deb` has left packages in $B/deb, install the library and the
# tools the way a user does (apt-get install ./x.deb) and run fio from PATH
# on nowait where io_uring is blocked.
deb_check() {
	local debs=() d
	for d in "$B"/deb/libnowait0_*.deb "$B"/deb/nowait-tools_*.deb; do
		[ -e "$d" ] && debs+=("$d")
	done
	if [ ${#debs[@]} -eq 0 ]; then
		say "deb: no $B/deb/*.deb (make deb); skipping the .deb check"
		return 0
	fi
	rm -rf "$R/tmp/debs" && mkdir -p "$R/tmp/debs"
	cp "${debs[@]}" "$R/tmp/debs/"
	say "deb: apt-get install ./$(cd "$R/tmp/debs" && echo *.deb)"
	in_root 'cd /tmp/debs && apt-get install -y -qq ./*.deb' >>"$LOG" 2>&1 ||
		die "installing the .deb failed; see $LOG"
	say "deb: fio under nowait-eperm nowait-run --auto"
	in_root 'command -v fio >/dev/null || apt-get install -y -qq fio
		nowait-eperm nowait-run --auto --log -- fio --name=t \
			--ioengine=io_uring --rw=randrw --size=8m \
			--verify=crc32c --filename=/tmp/f' >"$LOG.fio" 2>&1 ||
		{ cat "$LOG.fio" >>"$LOG"; die "fio on the installed .deb failed; see $LOG"; }
	cat "$LOG.fio" >>"$LOG"
	grep -q 'nowait: user-space engine' "$LOG.fio" ||
		die "fio on the installed .deb did not run on nowait; see $LOG"
	say "deb: fio ran on nowait from the installed packages"
	say "deb: OK"
}

inner() {
	trap 'unmount_all' EXIT
	trap 'exit 124' TERM INT HUP
	make_root
	mount_all
	prepare_root
	run_test
	deb_check
}

if [ "${1:-}" = --inner ]; then
	inner
	exit 0
fi

if [ -n "${NOWAIT_FRESH:-}" ]; then
	say "already on the fresh machine; skipping"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount)"
mkdir -p "$W"
: >"$LOG"
start=$(date +%s)
rc=0
timeout -k 15 "$FRESH_TIMEOUT" unshare --mount --propagation private \
	env B="$B" FRESH_CMD="$FRESH_CMD" "$0" --inner || rc=$?
left=$(mounts_under "$R")
[ -z "$left" ] || die "mounts left behind: $left"
[ $rc -ne 124 ] || die "timed out after $FRESH_TIMEOUT s"
[ $rc -eq 0 ] || die "failed (rc $rc)"
say "OK in $(($(date +%s) - start)) s"
