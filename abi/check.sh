#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI guard: compare libhwtune.so with the committed baseline
# abi/libhwtune.abi (libabigail's abidw of the release library, the native
# x86_64 gcc build with the Makefile's default flags).
#   abi/check.sh LIB COUNTS     make check-abi: "pass fail skip" into COUNTS
#   abi/check.sh --update LIB   make abi-update: rewrite the baseline
# The rule:
#  - no change: pass;
#  - only additions (new functions or variables; abidiff's harmless changes
#    such as a new enumerator are not changes): compatible, the baseline is
#    rewritten with them (commit it with the change) and the stage passes;
#  - anything else (a function or variable removed or renamed, a changed
#    parameter, return, struct or union type, a removed symbol): incompatible.
#    It fails, unless the library's soname (libhwtune.so.MAJOR, the
#    Makefile's ABI_MAJOR) differs from the baseline's: a major bump in the
#    same change allows the break, and the baseline is rewritten (commit it).
set -u
dir=$(dirname "$0")
base=$dir/libhwtune.abi
flags="--no-corpus-path --no-comp-dir-path --short-locs --headers-dir include/hwtune --drop-private-types"
dump() { abidw $flags --out-file "$2" "$1"; }
soname() { sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$1"; }

if [ "${1:-}" = --update ]; then
	command -v abidw >/dev/null 2>&1 || { echo "make abi-update: needs abigail-tools (make deps)" >&2; exit 1; }
	dump "$2" "$base" && echo "abi: wrote $base ($(soname "$base"), from $2)"
	exit
fi
lib=$1 counts=$2
result() { # pass fail skip, then the TAP line (its words)
	echo "$1 $2 $3" >> "$counts"
	summary="# abi: $1 passed, $2 failed, $3 skipped" failed=$2
	shift 3
	echo "$*"
	echo "$summary"
	[ "$failed" -eq 0 ] || [ -n "${HWT_CHECK_ALL:-}" ]
	exit
}
if ! command -v abidiff >/dev/null 2>&1 || ! command -v abidw >/dev/null 2>&1; then
	result 0 0 1 "# SKIP suite abi: needs abidw and abidiff (apt-get install abigail-tools, or make deps)"
fi
arch=$(sed -n "1s/.* architecture='\([^']*\)'.*/\1/p" "$base")
cur=$(mktemp -d)
trap 'rm -rf "$cur"' EXIT
if ! dump "$lib" "$cur/lib.abi"; then
	result 0 1 0 "not ok 1 - abi: abidw $lib failed"
fi
if [ "$(sed -n "1s/.* architecture='\([^']*\)'.*/\1/p" "$cur/lib.abi")" != "$arch" ]; then
	result 0 0 1 "# SKIP suite abi: the baseline is $arch's ABI"
fi
abidiff --no-added-syms "$base" "$cur/lib.abi" > "$cur/break" 2>&1
broken=$?
abidiff "$base" "$cur/lib.abi" > "$cur/all" 2>&1
any=$?
old=$(soname "$base") new=$(soname "$cur/lib.abi")
if [ $((broken & 3)) -ne 0 ] || [ $((any & 3)) -ne 0 ]; then
	cat "$cur/all"
	result 0 1 0 "not ok 1 - abi: abidiff could not compare $base and $lib"
elif [ "$broken" -ne 0 ] && [ "$old" = "$new" ]; then
	sed 's/^/# /' "$cur/break"
	result 0 1 0 "not ok 1 - abi: $lib breaks the ABI of $old (above); restore it," \
		"or bump ABI_MAJOR (the soname) in the same commit"
elif [ "$broken" -ne 0 ]; then
	sed 's/^/# /' "$cur/break"
	cp "$cur/lib.abi" "$base"
	result 1 0 0 "ok 1 - abi: incompatible change with the soname bumped ($old -> $new):" \
		"$base rewritten, commit it"
elif [ "$any" -ne 0 ]; then
	sed 's/^/# /' "$cur/all"
	cp "$cur/lib.abi" "$base"
	result 1 0 0 "ok 1 - abi: compatible additions to $new (above): $base rewritten, commit it"
else
	result 1 0 0 "ok 1 - abi: $lib has the ABI of $base ($new)"
fi
