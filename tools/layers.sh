#!/bin/bash
# SPDX-License-Identifier: MIT
#
# layers.sh: prove the engine's layering rules (issue 11). `make layers`
# builds the library objects and runs it; CI can too. Plain bash, awk
# (mawk will do), nm and grep: it runs on a bare Debian 12.
#
#   tools/layers.sh [OBJDIR [SRCDIR]]     defaults: build/obj/src, src
#
# The floors come from $FLOORS, by default SRCDIR/FLOORS (or this tree's
# src/FLOORS when SRCDIR has none). The exit status is 0 when every rule
# holds, 1 when one is broken. The report is one line per finding, each
# rule ending in a line "ok  ..." or "FAIL  ...", and a last line
# "LAYERS: OK" or "LAYERS: N rules broken".
#
# The dependency graph. File A depends on file B when A.o has an undefined
# symbol that B.o defines as a global (nm types T, D, B, R). Every .o in
# OBJDIR with a SRCDIR/X.c is a node; a stale one (no source) is skipped.
# Exception: the opcode table (opdef.o) names every op's prep/issue
# handlers, but those are callbacks, function pointers registered in a
# table (like libuv's w->cb), not calls: the edges OUT of opdef.o are
# shown but not counted and play no part in the rules. Edges INTO opdef.o
# (readers of the table) are ordinary dependencies.
#
# The rules, and how each is measured:
#  circles   strongly connected components of the graph (reachability by
#            closure; ~40 nodes): each of size > 1 is listed; the largest
#            may be at most MAX_CIRCLE files wide.
#  floors    every object has a floor in FLOORS (files listed there that
#            do not exist yet are only noted).
#  upward    an edge from a lower floor to a higher one, listed with the
#            symbols causing it; at most MAX_UPWARD of them.
#  cqe       the CQ ring's entries are written only by complete.c and its
#            header complete.h: outside them, no line of src/ (comments
#            aside) names the CQE type io_uring_cqe or its big_cqe field,
#            or dereferences the ring's CQE array (->cqes), except ringmem.c
#            sizing it (sizeof(struct io_uring_cqe)) and mapping it
#            (ring->cqes = ...). Writing a CQE needs one of the three.
#  epoll     epoll_* and <sys/epoll.h> appear only in src/loop.c (comments
#            aside).
#  includes  nothing under preload/, bench/, tools/ includes an engine-
#            private header (any src/*.h, found through -iquote src or by
#            a relative path). What test/ includes is only reported.
#  submit    complete, drain, poll, timeout, reactor do not call into
#            submit.c: no edge from those objects to submit.o.
#  functions no function in src/*.c is longer than MAX_FUNC lines, counted
#            from the first line of its signature to its closing brace,
#            both included (kernel style: the body's { and } are alone at
#            column 0).
#  files     no src/*.c file is longer than MAX_FILE lines.

set -u
export LC_ALL=C

MAX_CIRCLE=6
MAX_UPWARD=12
MAX_FUNC=70
MAX_FILE=1000
CALLBACK_TABLES="opdef"
NO_SUBMIT_CALLERS="complete drain poll timeout reactor"

OBJDIR=${1:-build/obj/src}
SRCDIR=${2:-src}
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${FLOORS:-}" ]; then
	FLOORS=$SRCDIR/FLOORS
	[ -f "$FLOORS" ] || FLOORS=$HERE/src/FLOORS
fi
for d in "$OBJDIR" "$SRCDIR"; do
	[ -d "$d" ] || { echo "layers.sh: no directory $d" >&2; exit 2; }
done
[ -f "$FLOORS" ] || { echo "layers.sh: no floors file $FLOORS" >&2; exit 2; }
ROOT=$(cd "$SRCDIR/.." && pwd)
SRCABS=$(cd "$SRCDIR" && pwd)

broken=0
ok() { printf 'ok    %s\n' "$*"; }
fail() {
	printf 'FAIL  %s\n' "$*"
	broken=$((broken + 1))
}
note() { printf '      %s\n' "$*"; }
# grep -n output lines minus those that are comments (" * ...", "/* ...").
code_only() { grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)'; }

echo "layers: objects $OBJDIR, sources $SRCDIR, floors $FLOORS"

# --- the nm graph, circles, floors, upward edges, calls into submit ------
objs=()
for o in "$OBJDIR"/*.o; do
	[ -e "$o" ] || continue
	n=$(basename "$o" .o)
	if [ -f "$SRCDIR/$n.c" ]; then
		objs+=("$o")
	else
		note "stale object skipped (no $SRCDIR/$n.c): $o"
	fi
done
if [ "${#objs[@]}" -eq 0 ]; then
	echo "layers.sh: no objects in $OBJDIR (make lib first)" >&2
	exit 2
fi
for c in "$SRCDIR"/*.c; do
	n=$(basename "$c" .c)
	[ -f "$OBJDIR/$n.o" ] || note "source not built, not in the graph: $c"
done

for o in "${objs[@]}"; do
	n=$(basename "$o" .o)
	echo "$n - -" # a node, even with no global symbol
	nm -P -g "$o" | awk -v n="$n" 'NF >= 2 { print n, $2, $1 }'
done | awk -v max_circle="$MAX_CIRCLE" -v max_upward="$MAX_UPWARD" \
	-v cbtables="$CALLBACK_TABLES" -v nosubmit="$NO_SUBMIT_CALLERS" '
# First file: the floors. Then "object type symbol" lines from nm.
FNR == NR {
	sub(/#.*/, "")
	if (NF < 1)
		next
	nfloors++
	floorname[nfloors] = $1
	for (i = 2; i <= NF; i++) {
		if ($i in floor)
			dupfloor = dupfloor " " $i
		floor[$i] = nfloors
		listed[++nlisted] = $i
	}
	next
}
$2 == "-" {
	if (!($1 in idx)) {
		idx[$1] = ++n
		name[n] = $1
	}
	next
}
$2 == "U" {
	nund[$1]++
	und[$1, nund[$1]] = $3
	next
}
$2 ~ /^[TDBR]$/ {
	def[$3] = ($3 in def) ? def[$3] " " $1 : $1
}
function words(s, set,    k, m, t) {
	m = split(s, t, " ")
	for (k = 1; k <= m; k++)
		set[t[k]] = 1
}
END {
	words(cbtables, iscb)
	for (a = 1; a <= n; a++) {
		A = name[a]
		for (u = 1; u <= nund[A]; u++) {
			s = und[A, u]
			if (!(s in def))
				continue
			m = split(def[s], defs, " ")
			for (k = 1; k <= m; k++) {
				B = defs[k]
				if (B == A)
					continue
				if (A in iscb) {
					if (!((A, B) in cb)) {
						cb[A, B] = 1
						ncb[A]++
					}
					ncbsym[A]++
					continue
				}
				if (!((A, B) in edge)) {
					nedges++
					edge[A, B] = 1
					reach[a, idx[B]] = 1
				}
				syms[A, B] = syms[A, B] " " s
			}
		}
	}

	# The graph, one line per file.
	for (a = 1; a <= n; a++) {
		A = name[a]
		line = ""
		for (b = 1; b <= n; b++)
			if ((A, name[b]) in edge)
				line = line " " name[b]
		if (A in iscb) {
			line = line " (callbacks, not counted:"
			for (b = 1; b <= n; b++)
				if ((A, name[b]) in cb)
					line = line " " name[b]
			line = line ")"
		}
		printf "deps  %-10s ->%s\n", A, line
	}
	cbnote = ""
	for (A in ncb)
		cbnote = cbnote sprintf(", not counted: %s -> %d files by %d " \
		    "callback symbols", A, ncb[A], ncbsym[A])
	printf "graph: %d files, %d dependencies%s\n", n, nedges, cbnote

	# Circles: i and j share one when each reaches the other.
	for (k = 1; k <= n; k++)
		for (i = 1; i <= n; i++)
			if ((i, k) in reach)
				for (j = 1; j <= n; j++)
					if ((k, j) in reach)
						reach[i, j] = 1
	largest = 1
	ncircles = 0
	for (i = 1; i <= n; i++) {
		if (i in incircle)
			continue
		size = 1
		members = name[i]
		for (j = i + 1; j <= n; j++)
			if (((i, j) in reach) && ((j, i) in reach)) {
				incircle[j] = 1
				size++
				members = members " " name[j]
			}
		if (size > 1) {
			ncircles++
			printf "      circle (%d files): %s\n", size, members
		}
		if (size > largest)
			largest = size
	}
	verdict = largest <= max_circle ? "ok  " : "FAIL"
	printf "%s  circles: %d, the largest %d files wide (limit %d)\n",
	    verdict, ncircles, largest, max_circle
	if (verdict == "FAIL")
		nbroken++

	# Floors.
	absent = ""
	for (k = 1; k <= nlisted; k++)
		if (!(listed[k] in idx))
			absent = absent " " listed[k]
	if (absent != "")
		printf "      floors: listed, not built (yet):%s\n", absent
	nofloor = ""
	for (a = 1; a <= n; a++)
		if (!(name[a] in floor))
			nofloor = nofloor " " name[a]
	if (dupfloor != "") {
		printf "FAIL  floors: on two floors:%s\n", dupfloor
		nbroken++
	}
	if (nofloor != "") {
		printf "FAIL  floors: objects with no floor:%s\n", nofloor
		nbroken++
	} else {
		printf "ok    floors: all %d objects have one (%d floors)\n",
		    n, nfloors
	}

	# Upward edges: from a lower floor (larger index) to a higher one.
	nup = 0
	for (a = 1; a <= n; a++) {
		A = name[a]
		if (!(A in floor))
			continue
		for (b = 1; b <= n; b++) {
			B = name[b]
			if (!((A, B) in edge) || !(B in floor))
				continue
			if (floor[A] > floor[B]) {
				nup++
				printf "      upward %s (%s) -> %s (%s):%s\n", A,
				    floorname[floor[A]], B,
				    floorname[floor[B]], syms[A, B]
			}
		}
	}
	verdict = nup <= max_upward ? "ok  " : "FAIL"
	printf "%s  upward: %d edges (limit %d)\n", verdict, nup, max_upward
	if (verdict == "FAIL")
		nbroken++

	# No calls into submit.c from below it.
	m = split(nosubmit, callers, " ")
	bad = 0
	for (k = 1; k <= m; k++)
		if ((callers[k], "submit") in edge) {
			bad++
			printf "      submit %s -> submit:%s\n", callers[k],
			    syms[callers[k], "submit"]
		}
	if (bad) {
		printf "FAIL  submit: %d of %s call into submit.c\n", bad,
		    nosubmit
		nbroken++
	} else {
		printf "ok    submit: no call from %s into submit.c\n", nosubmit
	}
	exit nbroken
}' "$FLOORS" -
broken=$((broken + $?))

# --- grep rules ---------------------------------------------------------
# verdict RULE HITS OKMSG FAILMSG: one note per line of HITS (paths made
# relative to the tree, blanks squeezed), then ok or FAIL ("N FAILMSG").
verdict() {
	local l n=0
	if [ -n "$2" ]; then
		while IFS= read -r l; do
			l=${l#"$ROOT"/}
			note "$1 $(printf '%s' "$l" | tr -s '\t ' ' ')"
			n=$((n + 1))
		done <<<"$2"
		fail "$1: $n $4"
	else
		ok "$1: $3"
	fi
}

srcfiles=("$SRCDIR"/*.[ch])

# CQE writers: complete.c and complete.h only.
hits=$(grep -nHE 'io_uring_cqe|big_cqe|->cqes\b' "${srcfiles[@]}" |
	code_only | grep -vE '^[^:]*/complete\.[ch]:' |
	grep -vE '^[^:]*/ringmem\.c:[0-9]+:.*(sizeof\(struct io_uring_cqe\)|->cqes = )')
verdict cqe "$hits" "CQEs are written only in complete.c/complete.h" \
	"lines outside complete.c/complete.h touch CQEs"

# epoll: loop.c only.
hits=$(grep -nHE 'epoll_|sys/epoll\.h' "${srcfiles[@]}" | code_only |
	grep -vE '^[^:]*/loop\.c:')
verdict epoll "$hits" "only in loop.c" "lines outside loop.c"

# Engine-private headers: prints "file:line: header" for each include of
# a src/*.h from the files given.
private_includes() {
	local f l p d t
	for f in "$@"; do
		[ -f "$f" ] || continue
		d=$(dirname "$f")
		grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			while IFS= read -r l; do
				p=${l#*\"}
				p=${p%%\"*}
				if [ -f "$d/$p" ]; then
					t=$(cd "$(dirname "$d/$p")" && pwd)
					[ "$t" = "$SRCABS" ] || continue
				elif [ ! -f "$SRCDIR/$p" ]; then
					continue
				fi
				echo "${f#"$ROOT"/}:${l%%:*}: $p"
			done
	done
}
hits=$(private_includes "$ROOT"/preload/*.[ch] "$ROOT"/bench/*.[ch] \
	"$ROOT"/tools/*.[ch])
verdict includes "$hits" "preload/, bench/, tools/ include no src/*.h" \
	"engine-private headers included from preload/, bench/, tools/"
hits=$(private_includes "$ROOT"/test/*.[ch] | tr "\n" " ")
hits=${hits% }
note "includes of src/*.h from test/ (allowed): ${hits:-none}"

# Function lengths: from the first line of the signature (the start of the
# run of code lines before the { alone at column 0) to the } alone at
# column 0.
hits=$(awk -v max="$MAX_FUNC" '
FNR == 1 { infn = 0; run = 0; text = "" }
infn {
	if ($0 == "}") {
		len = FNR - start + 1
		if (len > max)
			printf "%s:%d: %s() %d lines\n", FILENAME, start, fn, len
		infn = 0
	}
	next
}
$0 == "{" {
	infn = 1
	start = run ? run : FNR
	t = text
	sub(/\(.*/, "", t)
	fn = "?"
	if (match(t, /[A-Za-z_][A-Za-z0-9_]*[ \t]*$/))
		fn = substr(t, RSTART, RLENGTH)
	sub(/[ \t]+$/, "", fn)
	run = 0
	text = ""
	next
}
/^[ \t]*$/ || /^#/ || /\*\/[ \t]*$/ || /;[ \t]*$/ || /^\}/ {
	run = 0
	text = ""
	next
}
{
	if (!run)
		run = FNR
	text = text " " $0
}' "$SRCDIR"/*.c)
verdict functions "$hits" "none longer than $MAX_FUNC lines" \
	"longer than $MAX_FUNC lines"

hits=$(awk -v max="$MAX_FILE" '
FNR == 1 && NR > 1 && last > max { printf "%s: %d lines\n", name, last }
{ name = FILENAME; last = FNR }
END { if (last > max) printf "%s: %d lines\n", name, last }' "$SRCDIR"/*.c)
verdict files "$hits" "none longer than $MAX_FILE lines" \
	"longer than $MAX_FILE lines"

if [ "$broken" -eq 0 ]; then
	echo "LAYERS: OK"
	exit 0
fi
echo "LAYERS: $broken rules broken"
exit 1
