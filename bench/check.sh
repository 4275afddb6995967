#!/bin/sh
# SPDX-License-Identifier: MIT
# Check one results folder of make bench before it is published:
#
#   sh bench/check.sh bench/results/<date>-<host>   (the published run:
#   docs/benchmarks/<date>-<host>)
#
# Every file: the machine facts (CPU model, kernel, a floor > 0), the exact
# command, a result that did not fail.  bench_sync: three modes (four with
# per-CPU queues: msi_percpu), each with a
# non-decreasing CDF whose last point is the max and whose p50 is the
# median; the recommendation is msi or sev.  bench_cmdq: every case has a
# rate per implementation; with several producer counts, 1 among them,
# every rate above 1 producer has its ratio to the fair share.  bench_probe: the scaling rows 1..N, the budget
# rows (each counting vector verdicts too), and the measured vector and
# split objects: a "vector" unit row with its stability, one verdict row
# per CPU and unit (a known verdict, a ratio > 0 when fast or slow), one
# split row per CPU (its four penalties > 0 when the scalar access neither
# faults nor traps), per_cpu_vector_ns and per_cpu_split_ns with n > 0; a
# "not yet measured" status is a problem.
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
	function str(s, k,   r) {
		if (!match(s, "\"" k "\": \"[^\"]*\"")) return ""
		r = substr(s, RSTART, RLENGTH); sub(/^[^:]*: "/, "", r); sub(/"$/, "", r); return r
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
	/"mode": "msi_percpu"/ { pcpu = 1 }
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
	/"config": \{"producers": \[/ { c = $0; sub(/.*"producers": \[/, "", c); sub(/\].*/, "", c)
		nprods = split(c, pl, /, */); for (i = 1; i <= nprods; i++) if (pl[i] == 1) one = 1 }
	/"group": "[a-z]+", "burst"/ { cases++; cp = num($0, "producers") }
	/^ *"[a-z_]+": \{"p50": / && nprods > 1 && one && cp > 1 && !/"fair_share_ratio_p50"/ { say("case " cases " (" cp " producers): a rate without fair_share_ratio_p50") }
	/^ *"[a-z_]+": \{"p50": / { rates++; if (num($0, "p50") == 0) { x = $0; sub(/^ *"/, "", x); sub(/".*/, "", x); say("case " cases ": " x " moved nothing (p50 rate 0)") } }
	/"bench_probe":/ { probe = 1 }
	/"cpus": [0-9]+, "parallel_wall_ns_p50"/ { if (num($0, "cpus") != ++rows) say("scaling row " rows " is for " num($0, "cpus") " CPUs") }
	/"load": "/ { budgets++ }
	/"bench_probe": \{"version"/ { pcpus = num($0, "cpus") }
	/"load": "/ { if ($0 !~ /"same_vector_verdicts": [0-9]+/ || $0 !~ /"same_all_verdicts": [0-9]+/) say("budget row " budgets " (" str($0, "load") ", " num($0, "budget_us") " us) without vector verdict counts") }
	/"not yet measured"/ { say("a \"not yet measured\" status: " $0) }
	/^  "vector": \{"runs"/ { vobj = 1 }
	/^  "split": \{"runs"/ { sobj = 1 }
	/^    "per_cpu_vector_ns": \{"n"/ && vobj && !sobj { vns = num($0, "n") }
	/^    "per_cpu_split_ns": \{"n"/ && sobj { sns = num($0, "n") }
	/"unit": "[a-z0-9]+", "name": "[^"]*", "runs"/ {
		units++; if (str($0, "unit") == "vector") vunit = 1
		if (!(num($0, "runs") > 0) || $0 !~ /"same_cpu_verdicts": [0-9]+/) say("vector unit " str($0, "unit") ": runs \"" num($0, "runs") "\" or same_cpu_verdicts missing")
	}
	/"vector_cpu": / {
		vrows++; sp = str($0, "speed")
		if (sp !~ /^(unknown|slow|fast|unsupported)$/) say("vector CPU " num($0, "vector_cpu") " " str($0, "unit") ": verdict \"" sp "\"")
		if (sp ~ /^(slow|fast)$/ && !(num($0, "ratio") > 0)) say("vector CPU " num($0, "vector_cpu") " " str($0, "unit") ": " sp " with ratio " num($0, "ratio"))
	}
	/"split_cpu": / {
		srows++
		if (str($0, "scalar_speed") !~ /^(unknown|emulated|slow|fast|unsupported)$/) say("split CPU " num($0, "split_cpu") ": scalar verdict \"" str($0, "scalar_speed") "\"")
		if (num($0, "status") == 0 && str($0, "scalar_speed") !~ /^(emulated|unsupported)$/)
			for (i = split("line_load line_store page_load page_store", ks, " "); i > 0; i--)
				if (!(num($0, ks[i]) > 0)) say("split CPU " num($0, "split_cpu") ": " ks[i] " \"" num($0, ks[i]) "\" is not > 0")
	}
	END {
		if (!cmd) say("no command")
		if (sync && modes != 3 + pcpu) say(modes " modes (expected floor, msi, sev" (pcpu ? ", msi_percpu" : "") ")")
		if (sync && rec != 1) say("no msi/sev recommendation")
		if (cmdq && (!cases || rates < 2 * cases)) say(cases " cases with " rates " rates")
		if (probe && !rows) say("no scaling rows")
		if (probe && !budgets) say("no budget stability rows")
		if (probe && !vobj) say("no measured \"vector\" object")
		if (probe && !sobj) say("no measured \"split\" object")
		if (probe && !vunit) say("no \"vector\" unit row")
		if (probe && (!vrows || vrows != units * pcpus)) say(vrows " vector verdict rows (expected " units " units x " pcpus " CPUs)")
		if (probe && srows != pcpus) say(srows " split rows (expected " pcpus " CPUs)")
		if (probe && !(vns > 0)) say("per_cpu_vector_ns n \"" vns "\" is not > 0")
		if (probe && !(sns > 0)) say("per_cpu_split_ns n \"" sns "\" is not > 0")
	}' "$f") || out="${out:+$out
}$n: the checker itself failed (awk exit status)"
	if [ -n "$out" ]; then
		echo "$out" | sed 's/^/check: /'
		bad=$((bad + $(echo "$out" | wc -l)))
	fi
done
echo "check: $files files, $bad problems"
[ "$bad" = 0 ]
