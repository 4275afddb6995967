#!/bin/sh
# SPDX-License-Identifier: MIT
# List the atomic read-modify-write instructions of the queue's driver side
# (src/cmdq/*.o) per function, from the disassembly of a build directory:
#   x86_64: lock-prefixed instructions and xchg with memory
#   aarch64: ldxr/ldaxr..stxr/stlxr pairs (one RMW per store-exclusive), LSE
#            cas*, ldadd*, ldclr*, ldeor*, ldset*, swp*
#   riscv64: amo*.w/.d, and lr/sc loops (one RMW per sc)
# usage: rmw-list.sh BUILD_DIR OBJDUMP
set -eu
build=$1
objdump=$2
for o in "$build"/obj/src/cmdq/*.o; do
	"$objdump" -d --no-show-raw-insn "$o" | awk -v obj="${o##*/}" '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
		{
			line = $0; sub(/^[ \t]*[0-9a-f]+:[ \t]*/, "", line)
			split(line, w, /[ \t]+/); m = w[1]
			rmw = 0
			if (m == "lock") rmw = 1
			else if (m ~ /^xchg/ && line ~ /\(/) rmw = 1
			else if (m ~ /^(stxr|stlxr|stxp|stlxp)$/) rmw = 1
			else if (m ~ /^(cas|casa|casl|casal|ldadd|ldclr|ldeor|ldset|swp)/) rmw = 1
			else if (m ~ /^amo/ || m ~ /^sc\./) rmw = 1
			if (rmw) { n[fn]++; what[fn] = what[fn] " " m; total++ }
		}
		END {
			for (f in n) printf "%-12s %-32s %2d:%s\n", obj, f, n[f], what[f]
		}' | sort
done
