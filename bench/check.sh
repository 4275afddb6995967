#!/bin/sh
# SPDX-License-Identifier: MIT
# Check one results folder of make bench before it is published:
#
#   sh bench/check.sh bench/results/<date>-<host>
#
# Every file: the machine facts (CPU model, kernel, a floor > 0), the exact
# command, a result that did not fail.  bench_sync: three modes, each with a
# non-decreasing CDF whose last point is the max and whose p50 is the
# median; the recommendation is msi or sev.  bench_cmdq: every case has a
# rate per implementation.  bench_probe: the scaling rows 1..N, the budget
# rows, and vector/split present (measured, or "not yet measured").
# With python3 present, every file must also parse as JSON.  Prints one line
# per problem, naming the file and the bad value, and "N files, N problems";
# exit 1 if any.
dir=${1:?usage: check.sh RESULTS_DIR}
[ -d "$dir" ] || { echo "check.sh: no such results folder: '$dir'" >&2; exit 2; }
files=0 bad=0
problem() { echo "check: $1: $2"; bad=$((bad + 1)); }

for f in "$dir"/*.json; do
	[ -e "$f" ] || { problem "$dir" "no JSON files"; break; }
	files=$((files + 1))
	n=$(basename "$f")
	if command -v python3 >/dev/null 2>&1 &&
	   ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null; then
		problem "$n" "not valid JSON"
	fi
	out=$(awk -v F="$n" '
	function num(s, k,   r) {
		if (!match(s, "\"" k "\": -?[0-9.]+")) return ""
		r = substr(s, RSTART, RLENGTH); sub(/^.*: /, "", r); return r + 0
	}
	function say(m) { print F ": " m; bad++ }
	NR == 1 {
		if ($0 !~ /^\{"machine": \{/) say("first line is not the machine facts")
		if ($0 !~ /"cpu_model": "[^"]+"/) say("machine facts without cpu_model")
		if ($0 !~ /"kernel": "[^"]+"/) say("machine facts without kernel")
		if (!(num($0, "floor_median_rtt_ns") > 0)) say("floor_median_rtt_ns \"" num($0, "floor_median_rtt_ns") "\" is not > 0")
	}
	/"command": "/ { cmd = 1 }
	/"failed": true/ { say("the benchmark failed (see its .log)") }
	/"bench_sync":/ { sync = 1 }
	/"mode": "/ {
		modes++
		match($0, /"mode": "[a-z]+"/); md = substr($0, RSTART + 9, RLENGTH - 10)
		match($0, /"cdf_ns": \[[^]]*\]/); c = substr($0, RSTART + 11, RLENGTH - 12)
		k = split(c, a, /, */)
		if (k < 2) say(md ": cdf_ns has " k " points")
		for (i = 2; i <= k; i++) if (a[i] + 0 < a[i - 1] + 0) { say(md ": cdf_ns decreases at point " i " (" a[i - 1] " then " a[i] ")"); break }
		if (k && a[k] + 0 != num($0, "max")) say(md ": last CDF point " a[k] " is not the max " num($0, "max"))
		if (k && a[int(k / 2)] + 0 != num($0, "p50")) say(md ": CDF point " int(k / 2) " (" a[int(k / 2)] ") is not the p50 " num($0, "p50"))
		if (!(num($0, "p50") <= num($0, "p99") && num($0, "p99") <= num($0, "p999"))) say(md ": percentiles out of order")
	}
	/"recommendation": \{"poll"/ { rec = $0 ~ /"poll": "(msi|sev)"/ ? 1 : -1 }
	/"bench_cmdq":/ { cmdq = 1 }
	/"group": "[a-z]+", "burst"/ { cases++ }
	/^ *"[a-z_]+": \{"p50": / { rates++; if (num($0, "p50") == 0) { x = $0; sub(/^ *"/, "", x); sub(/".*/, "", x); say("case " cases ": " x " moved nothing (p50 rate 0)") } }
	/"bench_probe":/ { probe = 1 }
	/"cpus": [0-9]+, "parallel_wall_ns_p50"/ { if (num($0, "cpus") != ++rows) say("scaling row " rows " is for " num($0, "cpus") " CPUs") }
	/"load": "/ { budgets++ }
	/"(vector|split)": \{/ { vs++ }
	END {
		if (!cmd) say("no command")
		if (sync && modes != 3) say(modes " modes (expected floor, msi, sev)")
		if (sync && rec != 1) say("no msi/sev recommendation")
		if (cmdq && (!cases || rates < 2 * cases)) say(cases " cases with " rates " rates")
		if (probe && !rows) say("no scaling rows")
		if (probe && !budgets) say("no budget stability rows")
		if (probe && vs != 2) say("vector and split not both reported")
	}' "$f")
	if [ -n "$out" ]; then
		echo "$out" | sed 's/^/check: /'
		bad=$((bad + $(echo "$out" | wc -l)))
	fi
done
echo "check: $files files, $bad problems"
[ "$bad" = 0 ]
