#!/bin/sh
# SPDX-License-Identifier: MIT
# Render one results folder of make bench into plots and docs/benchmarks.md:
#
#   sh bench/report.sh bench/results/<date>-<host> [DOC [IMGDIR]]
#
# The run docs/benchmarks.md cites is kept in docs/benchmarks/<date>-<host>/
# (copy a new run there to publish it).  The figures measured by hand are
# docs/benchmarks-hand.md: the page links to it, and this script never
# writes it.
#
# DOC defaults to docs/benchmarks.md, IMGDIR to docs/benchmarks (PNGs, also
# kept in <results>/plots/ with the data files gnuplot read).  Needs only sh,
# awk and gnuplot (without gnuplot the tables are still written and the
# plots are named as missing).  The JSON is read line by line: the benches
# print one record per line (bench_sync, bench_cmdq, bench_probe, hwtune).
set -eu
dir=${1:?usage: report.sh RESULTS_DIR [DOC [IMGDIR]]}
doc=${2:-docs/benchmarks.md}
img=${3:-docs/benchmarks}
[ -d "$dir" ] || { echo "report.sh: no such results folder: '$dir'" >&2; exit 2; }
for f in sync-default sync-hi1620 throughput probe; do
	[ -s "$dir/$f.json" ] || { echo "report.sh: missing $dir/$f.json" >&2; exit 1; }
done
pd=$dir/plots
mkdir -p "$pd" "$img" "$(dirname "$doc")"

# awk helpers: num(line, key), str(line, key), arr(line, key, a) -> count
LIB='
function num(s, k,   r) {
	if (!match(s, "\"" k "\": -?[0-9.]+")) return ""
	r = substr(s, RSTART, RLENGTH); sub(/^.*: /, "", r); return r + 0
}
function str(s, k,   r) {
	if (!match(s, "\"" k "\": \"[^\"]*\"")) return ""
	r = substr(s, RSTART, RLENGTH); sub(/^[^:]*: "/, "", r); sub(/"$/, "", r); return r
}
function arr(s, k, a,   r) {
	if (!match(s, "\"" k "\": \\[[^]]*\\]")) return 0
	r = substr(s, RSTART, RLENGTH); sub(/^[^[]*\[/, "", r); sub(/\]$/, "", r)
	return split(r, a, /, */)
}
function ms(ns) { return sprintf("%.2f", ns / 1e6) }
function m(v) { return sprintf("%.3g", v / 1e6) }
'
J() { awk "$LIB$1" "$2"; } # J PROGRAM FILE

quick=$(J '/"quick":/ { print num($0, "quick"); exit }' "$dir/sync-default.json")
cmd_of() { J '/"command":/ { print str($0, "command"); exit }' "$dir/$1.json"; }

# --- data files --------------------------------------------------------------
for c in default hi1620; do
	J '/"mode": "/ { n[str($0, "mode")] = arr($0, "cdf_ns", a); for (i = 1; i <= n[str($0, "mode")]; i++) v[str($0, "mode"), i] = a[i] }
	   END { print "q floor msi sev"; for (i = 1; i <= n["msi"]; i++) printf "%.4f %s %s %s\n", i / n["msi"], v["floor", i], v["msi", i], v["sev", i] }' \
		"$dir/sync-$c.json" > "$pd/sync-cdf-$c.dat"
done

# bench_cmdq: rate[group, burst, impl] (elements/s p50), per file
CMDQ='
/"group": "/ { g = str($0, "group"); b = num($0, "burst") }
/^ *"[a-z_]+": \{"p50": / { x = $0; sub(/^ *"/, "", x); sub(/".*/, "", x)
	if (!(x in seen)) { seen[x] = 1; order[++ni] = x }
	rate[g, b, x] = num($0, "p50"); cas[g, b, x] = num($0, "cas_retries_per_call_p50")
	if (!((g, b) in bseen)) { bseen[g, b] = 1; bursts[g, ++nb[g]] = b } }
/"ratio_p50":/ { key = g SUBSEP b SUBSEP str($0, "hwt") SUBSEP str($0, "peer")
	ratio[key] = num($0, "ratio_p50"); wins[key] = num($0, "rounds_hwt_faster"); rounds[key] = num($0, "rounds") }
/"skipped": \[/ { s = $0
	while (match(s, /\{"peer": "[^"]*", "(package|reason)": "[^"]*"\}/)) {
		e = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
		skipped = skipped (skipped == "" ? " " : "; ") str(e, "peer") " (" (e ~ /"package"/ ? str(e, "package") : str(e, "reason")) ")" } }
'
for g in flow sync; do
	awk -v g0=$g "$LIB$CMDQ"'END { printf "burst"; for (i = 1; i <= ni; i++) if ((g0, bursts[g0, 1], order[i]) in rate) printf " %s", order[i]; print ""
	     for (k = 1; k <= nb[g0]; k++) { b = bursts[g0, k]; printf "%s", b
	       for (i = 1; i <= ni; i++) if ((g0, b, order[i]) in rate) printf " %.3f", rate[g0, b, order[i]] / 1e6; print "" } }' \
		"$dir/throughput.json" > "$pd/throughput-$g.dat"
done

# contention: per producer count P and burst B, calls/s per producer and the
# ratio to the fair share.  One run with every count (contention.json, its
# cases carry "producers"), or older results: a file per count
# (contention-p<P>.json, P from the name; the fair share then is the ratio
# of the medians across runs).
if [ -s "$dir/contention.json" ]; then conts=$dir/contention.json
else conts=$(for f in "$dir"/contention-p*.json; do [ -e "$f" ] || continue; p=${f##*contention-p}; echo "${p%.json} $f"; done | sort -n | cut -d' ' -f2-); fi
CONT='
FNR == 1 { P0 = FILENAME; sub(/.*contention-p/, "", P0); sub(/\.json$/, "", P0); failed = 0 }
/"failed": true/ { f = FILENAME; sub(/.*\//, "", f); sub(/\.json$/, "", f); bad[f] = 1 }
/"group": "[a-z]+", "burst"/ { g = str($0, "group"); b = num($0, "burst")
	p = ($0 ~ /"producers": [0-9]/) ? num($0, "producers") : P0
	pc = ($0 ~ /"producer_cpus": [0-9]/) ? num($0, "producer_cpus") : ""
	if (!((p) in pseen)) { pseen[p] = 1; ps[++np] = p }
	if (!((b) in bs)) { bs[b] = 1; bl[++nbl] = b }
	cpus[p] = pc }
/^ *"[a-z_]+": \{"p50": / && g == "sync" { x = $0; sub(/^ *"/, "", x); sub(/".*/, "", x)
	if (!(x in seen)) { seen[x] = 1; order[++ni] = x }
	cr[p, b, x] = num($0, "p50") / p / b
	cas[p, b, x] = num($0, "cas_retries_per_call_p50")
	if ($0 ~ /"fair_share_ratio_p50"/) fair[p, b, x] = num($0, "fair_share_ratio_p50") }
function sortp(   i, j, t) { for (i = 2; i <= np; i++) for (j = i; j > 1 && ps[j] + 0 < ps[j - 1] + 0; j--) { t = ps[j]; ps[j] = ps[j - 1]; ps[j - 1] = t } }
function fs(p, b, x) { if ((p, b, x) in fair) return fair[p, b, x]
	return ((1, b, x) in cr && cr[1, b, x] > 0) ? cr[p, b, x] * p / cr[1, b, x] : -1 }
'
for b in 1 8; do
	# shellcheck disable=SC2086
	awk -v B="$b" "$LIB$CONT"'END { sortp(); printf "producers"; for (i = 1; i <= ni; i++) printf " %s", order[i]; print ""
	   for (k = 1; k <= np; k++) { p = ps[k]; printf "%s", p
	     for (i = 1; i <= ni; i++) printf " %s", ((p, B, order[i]) in cr) ? sprintf("%.3f", cr[p, B, order[i]] / 1e3) : "NaN"
	     print "" } }' $conts > "$pd/contention-b$b.dat"
done

J '/"cpus": [0-9]+, "parallel_wall_ns_p50"/ { printf "%s %s %s %s %s\n", num($0, "cpus"), ms(num($0, "parallel_wall_ns_p50")), ms(num($0, "serial_wall_ns_p50")), ms(num($0, "kernel_parallel_wall_ns_p50")), ms(num($0, "kernel_serial_wall_ns_p50")) }' \
	"$dir/probe.json" > "$pd/probe-scaling.dat"
J '/"measured_cpus":/ { nc = num($0, "measured_cpus") }
   /"default_budget": \{"per_cpu_ns"/ { dp = num($0, "parallel_64_ns"); ds = num($0, "serial_64_ns") }
   /"kernel_window": \{"per_cpu_ns"/ { kp = num($0, "parallel_64_ns"); ks = num($0, "serial_64_ns") }
   END { printf "64 %s %s %s %s\n", ms(dp), ms(ds), ms(kp), ms(ks) }' "$dir/probe.json" > "$pd/probe-extrap.dat"
tail -n 1 "$pd/probe-scaling.dat" > "$pd/probe-last.dat"

# --- plots ----------------------------------------------------------------------
plots_note=
if command -v gnuplot >/dev/null 2>&1; then
	term="pngcairo size 900,540 font ',10'"
	gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 || term="png size 900,540"
	ncol() { head -n 1 "$1" | wc -w; }
	# the CDF's x range: from the smallest sample to 3 x the largest p99
	xr=$(cat "$dir/sync-default.json" "$dir/sync-hi1620.json" | awk "$LIB"'/"mode": "/ { if (num($0, "p99") > hi) hi = num($0, "p99"); if (lo == "" || num($0, "min") < lo) lo = num($0, "min") } END { print lo * 0.8, hi * 3 }')
	xmin=${xr% *} xmax=${xr#* }
	gnuplot <<EOF
set terminal $term
set termoption noenhanced
set grid
set key bottom right
set output '$pd/sync-cdf.png'
set title 'Empty-queue CMD_SYNC latency CDF (each sync timed alone; floor = two-line ping-pong)'
set xlabel 'latency (ns, log scale)'
set ylabel 'fraction of samples'
set logscale x
set xrange [$xmin:$xmax]
plot '$pd/sync-cdf-default.dat' using 2:1 with lines lw 2 title 'floor (round trip)', \
     '' using 3:1 with lines lw 2 title 'MSI polling', \
     '' using 4:1 with lines lw 2 title 'CONS polling', \
     '$pd/sync-cdf-hi1620.dat' using 3:1 with lines dt 2 lw 2 title 'MSI polling, Hi1620-like costs', \
     '' using 4:1 with lines dt 2 lw 2 title 'CONS polling, Hi1620-like costs'
unset logscale x
set autoscale x
set output '$pd/throughput.png'
set multiplot layout 1,2 title '1 producer -> 1 consumer, 16-byte commands (M elements/s, median of rounds)'
set logscale x 2
set logscale y 10
set xlabel 'burst'
set ylabel 'M elements/s (log)'
set key top left font ',8'
set title 'flow (completion not awaited)'
plot for [i=2:$(ncol "$pd/throughput-flow.dat")] '$pd/throughput-flow.dat' using 1:i with linespoints lw 2 title columnheader(i)
set title 'sync (completion awaited per burst)'
plot for [i=2:$(ncol "$pd/throughput-sync.dat")] '$pd/throughput-sync.dat' using 1:i with linespoints lw 2 title columnheader(i)
unset multiplot
set output '$pd/contention.png'
set multiplot layout 1,2 title 'Producers doing batch + CMD_SYNC loops (2 CPUs: oversubscribed above 1 producer)'
set xlabel 'producers'
set ylabel 'K calls/s per producer (log)'
set logscale x 2
set logscale y 10
set key bottom left font ',8'
set title 'batch 1 + sync (the DMA-unmap shape)'
plot for [i=2:$(ncol "$pd/contention-b1.dat")] '$pd/contention-b1.dat' using 1:i with linespoints lw 2 title columnheader(i), \
     $(awk 'NR == 2 { print $2 + 0 }' "$pd/contention-b1.dat")/x with lines dt 3 lc 'black' title 'hwt MSI at 1 producer / P (time-sharing)'
set title 'batch 8 + sync'
plot for [i=2:$(ncol "$pd/contention-b8.dat")] '$pd/contention-b8.dat' using 1:i with linespoints lw 2 title columnheader(i), \
     $(awk 'NR == 2 { print $2 + 0 }' "$pd/contention-b8.dat")/x with lines dt 3 lc 'black' title 'hwt MSI at 1 producer / P'
unset multiplot
set output '$pd/probe.png'
set title 'Misaligned probe wall time: measured 1..N CPUs, extrapolated to 64 (dashed), kernel 2023 serial'
set xlabel 'CPUs'
set ylabel 'wall time (ms, log scale)'
set logscale xy
set xrange [0.8:90]
set key top left
set style data linespoints
plot '$pd/probe-scaling.dat' using 1:2 lw 2 lc 1 title 'parallel, default budget', \
     '' using 1:3 lw 2 lc 2 title 'serial, default budget', \
     '' using 1:4 lw 2 lc 3 title 'parallel, kernel window (2 x 8 ms)', \
     '' using 1:5 lw 2 lc 4 title 'serial, kernel window', \
     '< cat $pd/probe-last.dat $pd/probe-extrap.dat' using 1:2 dt 2 lc 1 notitle, \
     '' using 1:3 dt 2 lc 2 notitle, '' using 1:4 dt 2 lc 3 notitle, '' using 1:5 dt 2 lc 4 notitle, \
     '-' using 1:2 with points pt 7 ps 2 lc 7 title 'kernel 2023, serial, 64 CPUs (3.8 s)'
64 3800
e
EOF
	cp "$pd"/*.png "$img"/
else
	plots_note="gnuplot not found (make bench-deps installs gnuplot-nox): plots not rendered."
	echo "report.sh: $plots_note" >&2
fi

# --- tables ---------------------------------------------------------------------
machine=$(J '/^\{"machine": / { l = $0
	printf "| CPU | %s (%s), %s allowed of online %s, %s cores, SMT groups with siblings: %s |\n", str(l, "cpu_model"), str(l, "arch"), num(l, "cpus_allowed"), str(l, "cpus_online"), num(l, "cores"), num(l, "smt_cores_with_siblings")
	printf "| kernel | %s |\n", str(l, "kernel")
	printf "| hypervisor | cpuinfo flag: %s; /sys/hypervisor/type: %s; systemd-detect-virt: %s |\n", (l ~ /"hypervisor_flag": true/) ? "yes" : "no", str(l, "sys_hypervisor_type") == "" ? "-" : str(l, "sys_hypervisor_type"), str(l, "systemd_detect_virt") == "" ? "-" : str(l, "systemd_detect_virt")
	printf "| host, date | %s, %s (load average at start %s) |\n", str(l, "host"), str(l, "date_utc"), str(l, "loadavg")
	exit }' "$dir/sync-default.json")
floors=$(for f in "$dir"/*.json; do
	J '/^\{"machine": / { printf "%s %s\n", num($0, "floor_c2clat_min_rtt_ns"), num($0, "floor_median_rtt_ns"); exit }' "$f"
done | awk '{ c = c sep $1; m = m sep $2; sep = ", " } END { printf "c2clat min RTT %s; median RTT %s", c, m }')
busy=$(J '/^\{"machine": / { split(str($0, "loadavg"), l, " "); if (l[1] + 0 > 0.5 * num($0, "cpus_allowed")) printf "%s", l[1]; exit }' "$dir/sync-default.json")

sync_table() { # $1 config
	awk -v cfg="$1" "$LIB"'/"c2clat_min_rtt_ns"/ { c2 = num($0, "c2clat_min_rtt_ns"); md = num($0, "c2c_median_rtt_ns") }
	   /"mode": "/ { md_ = str($0, "mode"); row[md_] = sprintf("%s | %s | %s | %s | %s", num($0, "p50"), num($0, "p90"), num($0, "p99"), num($0, "p999"), num($0, "max")) }
	   /"msi_to_floor_p50"/ { rm = num($0, "msi_to_floor_p50"); rs = num($0, "sev_to_floor_p50"); rms = num($0, "msi_to_sev_p50"); w = num($0, "rounds_msi_faster"); r = num($0, "rounds"); rp = num($0, "msi_percpu_to_floor_p50") }
	   /"percpu": \{/ { pq = num($0, "queues"); pp = str($0, "insert_path"); pr = str($0, "insert_path_reason") }
	   /"recommendation": \{"poll"/ { rec = str($0, "poll") }
	   END {
		printf "| %s | floor (round trip) | %s | 1 | c2clat min RTT %s ns (one way %.1f), median RTT %s ns (one way %.1f) |\n", cfg, row["floor"], c2, c2 / 2, md, md / 2
		printf "| %s | MSI polling | %s | %.2fx | MSI/CONS %.3f per round (median), MSI faster in %d/%d rounds |\n", cfg, row["msi"], rm, rms, w, r
		printf "| %s | CONS polling | %s | %.2fx | recommendation: **%s** |\n", cfg, row["sev"], rs, rec == "sev" ? "sev (disable_msipolling=1)" : "msi (disable_msipolling=0)"
		if ("msi_percpu" in row) printf "| %s | MSI polling, per-CPU queues | %s | %.2fx | %s queues, insert path **%s** (%s) |\n", cfg, row["msi_percpu"], rp, pq, pp, pr }' \
		"$dir/sync-$1.json"
}
rec_of() { J '/"recommendation": \{"poll"/ { print str($0, "poll") }' "$dir/sync-$1.json"; }
tool_rec() {
	[ -s "$dir/tool-cmdq-$1.json" ] || { echo "not run"; return; }
	J '/"comparison":/ { c = sprintf("faster: %s %.3fx (%d/%d rounds agree)", str($0, "faster"), num($0, "factor"), num($0, "agree"), num($0, "rounds")) }
	   /"recommendation":/ { r = ($0 ~ /"disable_msipolling": true/) ? "disable_msipolling=1" : "disable_msipolling=0" }
	   END { printf "%s; %s", c, r }' "$dir/tool-cmdq-$1.json"
}

thr_table() { # $1 group
	awk -v g0="$1" "$LIB$CMDQ"'END {
		printf "| burst |"; for (i = 1; i <= ni; i++) if ((g0, bursts[g0, 1], order[i]) in rate) printf " %s |", order[i]
		printf " ratios hwt / peer (rounds hwt faster) |\n|---|"
		for (i = 1; i <= ni; i++) if ((g0, bursts[g0, 1], order[i]) in rate) printf "---|"; print "---|"
		for (k = 1; k <= nb[g0]; k++) { b = bursts[g0, k]; printf "| %s |", b; rs = ""
			for (i = 1; i <= ni; i++) if ((g0, b, order[i]) in rate) printf " %s |", m(rate[g0, b, order[i]])
			for (i = 1; i <= ni; i++) for (k2 = 1; k2 <= ni; k2++) { key = g0 SUBSEP b SUBSEP order[i] SUBSEP order[k2]
				if (key in ratio) rs = rs sprintf("%s%s / %s %.2fx (%d/%d)", rs == "" ? "" : "; ", order[i], order[k2], ratio[key], wins[key], rounds[key]) }
			printf " %s |\n", rs } }' "$dir/throughput.json"
}
skipped=$(awk "$LIB$CMDQ"'END { print skipped }' "$dir/throughput.json")

cont_table() {
	# shellcheck disable=SC2086
	awk "$LIB$CONT"'END { sortp()
		printf "| producers (on CPUs) | burst |"; for (i = 1; i <= ni; i++) printf " %s |", order[i]
		printf " CAS retries per call (hwt) |\n|---|---|"; for (i = 1; i <= ni; i++) printf "---|"; print "---|"
		for (k = 1; k <= np; k++) for (j = 1; j <= nbl; j++) { p = ps[k]; b = bl[j]
			if (!((p, b, order[1]) in cr)) continue
			printf "| %s%s | %s |", p, cpus[p] == "" ? "" : " (" cpus[p] ")", b; c = ""
			for (i = 1; i <= ni; i++) { x = order[i]
				if (!((p, b, x) in cr)) { printf " - |"; continue }
				printf " %.1f K", cr[p, b, x] / 1e3
				if (p > 1 && fs(p, b, x) >= 0) printf " (%.2f)", fs(p, b, x)
				printf " |"
				if (x ~ /^hwt_/) { n = x; sub(/^hwt_cmdq_?/, "", n)
					c = c sprintf("%s%s %.3f", c == "" ? "" : ", ", n == "" ? "flow" : n, cas[p, b, x]) } }
			printf " %s |\n", c }
		for (f in bad) printf "| - | - | %s failed (see %s.log) |\n", f, f }' $conts
}

# hwtune cmdq with several producers: per run and mode, the sync latency of
# a call (the shared queue; per-CPU queues where the tool has them).
tool_threads() {
	[ -s "$dir/tool-cmdq-threads8.json" ] || return 0
	echo "Oversubscribed producers as users run them: \`$(cmd_of tool-cmdq-threads8)\`$(
		[ -s "$dir/tool-cmdq-threads8-percpu.json" ] && echo " and with \`--queues per-cpu\`")"
	echo "(each call a batch + CMD_SYNC, the time of the call; µs):"
	echo
	echo "| queues | poll | threads | batch | p50 | p99 | p99.9 | max | syncs/s |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for t in threads8 threads8-percpu; do
		[ -s "$dir/tool-cmdq-$t.json" ] || continue
		awk -v Q="$([ $t = threads8 ] && echo shared || echo per-CPU)" "$LIB"'function us(v) { return sprintf("%.1f", v / 1e3) }
		   /"failed": true/ { printf "| %s | failed (see its .log) |\n", Q }
		   /"insert_path": "/ { ip = ", " str($0, "insert_path") }
		   /"poll": "[a-z]+", "threads": / { s = $0; sub(/.*"sync_ns": \{/, "", s); sub(/\}.*/, "", s)
			row[++n] = sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |", str($0, "poll"), num($0, "threads"), num($0, "batch"), us(num(s, "p50")), us(num(s, "p99")), us(num(s, "p999")), us(num(s, "max")), num($0, "syncs_per_s")) }
		   END { for (i = 1; i <= n; i++) printf "| %s%s %s\n", Q, ip, row[i] }' "$dir/tool-cmdq-$t.json"
	done
}

cont_cmd() {
	if [ -s "$dir/contention.json" ]; then echo "\`$(cmd_of contention)\`"
	else echo "\`$(cmd_of contention-p1 2>/dev/null | sed 's/--producers 1/--producers P/')\` for P in 1 2 4 8 16"; fi
}

# The insert path each hwt_cmdq queue ran (per-CPU queues: rseq or shared).
paths() {
	for f in "$dir/throughput.json" $conts; do
		J '/"insert_path": "/ { printf "%s: **%s** (%s)\n", str($0, "name"), str($0, "insert_path"), str($0, "insert_path_reason") }' "$f"
	done | sort -u | sed 's/^/- /'
}

probe_tables() {
	J 'BEGIN { print "| CPUs | parallel wall (ms) | serial wall | parallel, kernel window | serial, kernel window | per-CPU probe (ms), default / kernel window |"; print "|---|---|---|---|---|---|" }
	   /"cpus": [0-9]+, "parallel_wall_ns_p50"/ { printf "| %s | %s | %s | %s | %s | %s / %s |\n", num($0, "cpus"), ms(num($0, "parallel_wall_ns_p50")), ms(num($0, "serial_wall_ns_p50")), ms(num($0, "kernel_parallel_wall_ns_p50")), ms(num($0, "kernel_serial_wall_ns_p50")), ms(num($0, "per_cpu_probe_ns_p50")), ms(num($0, "kernel_per_cpu_probe_ns_p50")) }' "$dir/probe.json"
	echo
	J 'BEGIN { print "| 64 CPUs (model) | serial | parallel | published |"; print "|---|---|---|---|" }
	   /"default_budget": \{"per_cpu_ns"/ { printf "| default budget | %s ms | %s ms | - |\n", ms(num($0, "serial_64_ns")), ms(num($0, "parallel_64_ns")) }
	   /"kernel_window": \{"per_cpu_ns"/ { printf "| kernel window (2 x 8 ms) | %s ms | %s ms | kernel 2023 serial: 3800 ms (~0.06 s per CPU, SG2042); v6.7 parallel fix: about one CPU'"'"'s window |\n", ms(num($0, "serial_64_ns")), ms(num($0, "parallel_64_ns")) }' "$dir/probe.json"
	echo
	J 'BEGIN { print "| load | budget (us) | runs | same per-CPU verdicts, scalar | same summary | summaries | same per-CPU verdicts, vector units | same vector summaries | scalar and vector identical | ratio x100 min / p50 / max | runs with a preemption | wall p50 (ms) |"; print "|---|---|---|---|---|---|---|---|---|---|---|---|" }
	   /"load": "/ { s = $0; sub(/.*"summaries": \{/, "", s); sub(/\}.*/, "", s); gsub(/"/, "", s)
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s | %s |\n", str($0, "load"), num($0, "budget_us"), num($0, "runs"), num($0, "same_cpu_verdicts"), num($0, "same_summary"), s, num($0, "same_vector_verdicts"), num($0, "same_vector_summary"), num($0, "same_all_verdicts"), num($0, "ratio_x100_min"), num($0, "ratio_x100_p50"), num($0, "ratio_x100_max"), num($0, "preempted_runs"), ms(num($0, "wall_ns_p50")) }' "$dir/probe.json"
}

# The vector units and split penalties (bench_probe's "vector" and "split").
probe_vector_tables() {
	J 'function us(ns) { return sprintf("%.1f", ns / 1e3) }
	   function trip(s, k) { return sprintf("%s / %s / %s", us(num(s, "p50")), us(num(s, "p90")), us(num(s, "max"))) }
	   /"per_cpu_probe_ns": \{"n"/ && !probe { probe = trip($0); pn = num($0, "n") }
	   /"per_cpu_vector_ns": \{"n"/ && !vec { vec = trip($0) }
	   /"per_cpu_split_ns": \{"n"/ && !spl { spl = trip($0) }
	   END { print "| per-CPU time (us), p50 / p90 / max over " pn " CPU probes | whole probe: scalar + vector units + split penalties | of which the vector units | of which the split penalties |"
		 print "|---|---|---|---|"
		 printf "| default budget | %s | %s | %s |\n", probe, vec, spl }' "$dir/probe.json"
	echo
	J 'BEGIN { print "| CPU | scalar: verdict, ratio | vector units: verdict, ratio | line split load / store | page split load / store |"; print "|---|---|---|---|---|" }
	   /"vector_cpu": / { c = num($0, "vector_cpu"); v[c] = v[c] (v[c] == "" ? "" : "; ") sprintf("%s (%s): %s, %.2f", str($0, "unit"), str($0, "name"), str($0, "speed"), num($0, "ratio")) }
	   /"split_cpu": / { c = num($0, "split_cpu"); cpus[++n] = c
		row[c] = sprintf("%s, %.2f", str($0, "scalar_speed"), num($0, "scalar_ratio"))
		sp[c] = sprintf("%.2f / %.2f | %.2f / %.2f", num($0, "line_load"), num($0, "line_store"), num($0, "page_load"), num($0, "page_store")) }
	   END { for (i = 1; i <= n; i++) { c = cpus[i]; printf "| %s | %s | %s | %s |\n", c, row[c], v[c] == "" ? "-" : v[c], sp[c] } }' "$dir/probe.json"
	echo
	J 'BEGIN { print "| vector unit | runs | same per-CPU verdicts | summaries | ratio min / p50 / max (all runs and CPUs) |"; print "|---|---|---|---|---|" }
	   /"unit": "[a-z0-9]+", "name": "[^"]*", "runs"/ { s = $0; sub(/.*"summaries": \{/, "", s); sub(/\}.*/, "", s); gsub(/"/, "", s)
		r = $0; sub(/.*"ratio": \{/, "", r)
		printf "| %s (%s) | %s | %s of %s | %s | %.2f / %.2f / %.2f |\n", str($0, "unit"), str($0, "name"), num($0, "runs"), num($0, "same_cpu_verdicts"), num($0, "runs"), s, num(r, "min"), num(r, "p50"), num(r, "max") }' "$dir/probe.json"
	echo
	J 'BEGIN { print "| split penalty (ratio to the aligned access) | min | p50 | max | measured (CPU x runs) |"; print "|---|---|---|---|---|" }
	   /"spread": \{/ { n = split("line_load line_store page_load page_store", k, " ")
		for (i = 1; i <= n; i++) { r = $0; sub(".*\"" k[i] "\": \\{", "", r); sub(/\}.*/, "", r)
			printf "| %s | %.2f | %.2f | %.2f | %s |\n", k[i], num(r, "min"), num(r, "p50"), num(r, "max"), num(r, "n") } }' "$dir/probe.json"
}

# --- the document ----------------------------------------------------------------
rd=$(rec_of default); rh=$(rec_of hi1620)
msr() { J '/"msi_to_sev_p50"/ { print num($0, "msi_to_sev_p50") }' "$dir/sync-$1.json"; }
shift_="MSI/CONS per-round median $(msr default) without the costs, $(msr hi1620) with them"
if [ "$rd" != "$rh" ]; then flip="the recommendation flips: $rd with this machine's device, $rh with Hi1620-like costs ($shift_)"
else flip="the recommendation did **not** flip ($rd in both; $shift_): on this run's machine CONS polling already won or the modes tied within noise, see the table"; fi
# the plots' folder as the page links it: relative to the page's folder
case $img in
"$(dirname "$doc")"/*) rel=${img#"$(dirname "$doc")"/} ;;
*) rel=$img ;;
esac
# the command that redoes this page
if [ "$doc" = docs/benchmarks.md ] && [ "$img" = docs/benchmarks ]; then
	redo="make bench-report RESULTS=$dir"
else
	redo="sh bench/report.sh $dir $doc $img"
fi
# The figures measured by hand live in a page of their own, which this
# script never writes; the generated page links to it.
hand=benchmarks-hand.md
[ "$(dirname "$doc")" = docs ] || hand=docs/$hand
{
echo "# Benchmarks"
echo
if [ "$quick" = 1 ]; then
	echo "> **Quick smoke run, machine loaded — to be replaced.** These figures come from"
	echo "> \`make bench BENCH_QUICK=1\` (short runs) on a 2-CPU machine shared with other jobs; they"
	echo "> validate the harness, not the code. The published figures come from \`make bench\` on a"
	echo "> quiet machine."
	echo
fi
if [ -n "$busy" ]; then
	echo "> **The machine was busy** (load average $busy at the start, on $(J '/^\{"machine": / { print num($0, "cpus_allowed"); exit }' "$dir/sync-default.json") CPUs): rates and tails"
	echo "> are lower and noisier than on a quiet machine; ratios within a round are the robust part."
	echo
fi
# The contention section's words on where the producers ran, by CPU count.
contention_cpus() {
	n=$(J '/^\{"machine": / { print num($0, "cpus_allowed"); exit }' "$dir/sync-default.json")
	if [ "${n:-0}" -le 2 ]; then
		cat <<'WORDS'
**This machine has 2 CPUs: the consumer (device) has one, and every producer shares the
other, so above 1 producer the producers are oversubscribed** and interleave only when preempted;
the CAS retry rate (`hwt_cmdq_thread_cas_retries()`, failed reservation CASes per call) then stays
near 0, unlike real contention. Per-producer rate falling with the producer count is
expected here from time-sharing alone (1/P); what this run can show is whether a queue collapses
below that (a producer preempted mid-operation stalling the others).
WORDS
	else
		cat <<WORDS
**This machine has $n CPUs: the consumer (device) has one, and producer i runs on the i-th of
the other $((n - 1))** (round robin), so up to $((n - 1)) producers contend for real, each on a CPU of its
own (the first column says on how many CPUs they ran), and above that they also time-share. The
CAS retry rate (\`hwt_cmdq_thread_cas_retries()\`, failed reservation CASes per call) counts the
shared path's lost reservations; the rseq path (per-CPU) has none.
WORDS
	fi
}

cat <<EOF
Generated by \`bench/report.sh $dir\` from the JSON of one \`make bench\` run (\`$redo\`
regenerates this page). Every comparison is interleaved in one run (A B, B A, ...
or a rotation), ratios are taken per round and the median over rounds is reported; nothing here
is asserted by a test. Raw results: \`$dir/*.json\` (each file carries the machine facts and the
exact command).

| machine | |
|---|---|
$machine
| floor at the start of each benchmark (ns, round trip) | $floors |

${skipped:+Peers skipped:$skipped.}
${plots_note}

## 1. Empty-queue CMD_SYNC: MSI polling vs CONS polling vs the floor

![sync latency CDF]($rel/sync-cdf.png)

Reproduce: \`$(cmd_of sync-default)\` and \`$(cmd_of sync-hi1620)\`.

| config | series | p50 (ns) | p90 | p99 | p99.9 | max | median ratio to floor | notes |
|---|---|---|---|---|---|---|---|---|
$(sync_table default)
$(sync_table hi1620)

The floor is the physical limit of an empty-queue CMD_SYNC: one cache-line round trip between the
producer's CPU and the device's CPU, measured in the same run with our own two-line ping-pong, two
ways users know: **c2clat**'s (Erik Rigtorp's c2clat: the minimum over samples of the mean of 100
back-to-back round trips; it prints half of that as the one-way latency) and
**core-to-core-latency**'s (Nicolas Viennot's core-to-core-latency, its write-then-read test on
two cache lines: the median of samples). The CDF of the floor is of single timed round trips.
Every sample includes one \`clock_gettime\` read (~20 ns here).

**Hi1620-like costs.** Barry Song measured an empty-queue CMD_SYNC on HiSilicon Hi1620 at ~280 ns
with MSI polling and ~190 ns with CONS polling (SEV) — the reason \`disable_msipolling\` exists. The
software SMMU's cost knobs add busy-waited device time: \`--msi-cost-ns 280\` between the CONS update
and the MSI write, \`--sev-cost-ns 190\` before a CS=SEV CMD_SYNC completes. So the modelled device
spends Hi1620's own per-mode completion time on top of our path, which keeps the 90 ns MSI penalty
of the real part while leaving both modes' software cost equal. In this run $flip.
The switch is the point: on a device whose MSI write is the expensive part, CONS polling wins
and \`disable_msipolling=1\` is the right setting; where the MSI write is cheap, MSI polling
saves the waiter a trip through CONS and the SEV wake-up.
\`hwtune cmdq --json\` (the tool users run) on the same machine: default — $(tool_rec default);
Hi1620-like — $(tool_rec hi1620) (\`$(cmd_of tool-cmdq-hi1620 2>/dev/null || true)\`).

## 2. Throughput, 1 producer, bursts 1/8/32/64, against peers

![throughput vs burst]($rel/throughput.png)

Reproduce: \`$(cmd_of throughput)\`.

Completion not awaited (flow), M elements/s (median of rounds):

$(thr_table flow)

Completion awaited per burst (sync), M elements/s:

$(thr_table sync)

$(p=$(paths); [ -z "$p" ] || printf 'Insert path of the hwt_cmdq queues (from their hwt_cmdq_info):\n\n%s\n' "$p")

Peers: DPDK \`rte_ring\` (MP enqueue / SC dequeue bursts, no EAL) and \`rte_ring_rts\` (the same
ring in relaxed tail sync mode, \`RING_F_MP_RTS_ENQ\`: only the last producer in flight moves the
tail, DPDK's mode for overcommitted producer threads), Concurrency Kit \`ck_ring\`
(MPSC, one element per call), liburcu's \`wfcqueue\` (\`urcu_wfcq\`: wait-free enqueue of intrusive
nodes, one dequeuer; each producer reuses a pool of 2^N nodes, since the queue itself is unbounded)
and a mutex + condvar ring. Every element is a 16-byte command; every consumer calls a no-op handler
per element and checks every producer's sequence. The \`*_await\` rings wait until their consumer
published the burst's last element. \`hwt_cmdq_percpu\` and \`hwt_cmdq_percpu_sync_msi\` are
hwt_cmdq with one command queue per CPU (\`.queues = HWT_CMDQ_QUEUES_PER_CPU\`), listed as skipped
in a build without per-CPU queues. See \`bench/peers/\` and "How bench_cmdq measures" in
[the figures measured by hand]($hand#how-bench_cmdq-measures).

## 3. Contention: 1, 2, 4, 8, 16 producers, batch + CMD_SYNC loops

![contention vs producers]($rel/contention.png)

Reproduce: $(cont_cmd).

Calls (burst commands + CMD_SYNC, completion awaited) per second per producer, K = 1000, and in
parentheses the ratio to the fair share: the per-producer rate over (the 1-producer rate / P), that
is all P producers' rate over the 1-producer rate, taken per round and the median reported (results
with one file per producer count: the ratio of the medians). 1.00 is fair while the producers
time-share one CPU; above 1, waiting producers let others run (or the producers ran on several
CPUs: the first column says on how many).

$(cont_table)

$(p=$(paths); [ -z "$p" ] || printf 'Insert path of the hwt_cmdq queues (from their hwt_cmdq_info):\n\n%s\n' "$p")

$(tool_threads)

The shape is the kernel's DMA map/unmap benchmark (each unmap: an invalidation and a CMD_SYNC per
CPU). $(contention_cpus) The published kernel figures for the shape, on many real CPUs:
at 64 CPUs the reservation cmpxchg succeeds ~1 time in 12, and DMA map+unmap per CPU per second on
Huawei D06 falls from 282K at 8 CPUs to 115K at 16, 36K at 32 and 11K at 64 (John Garry, "Improve
cmdq lock efficiency", 2020; not merged).

## 4. Misaligned-access probe: cost, parallel vs serial, stability

![probe wall time vs CPUs]($rel/probe.png)

Reproduce: \`$(cmd_of probe)\`.

$(probe_tables)

### Vector units and split penalties

$(probe_vector_tables)

The per-CPU probe time above includes everything the library measures on a CPU: the fault check,
the scalar word/byte copies, every vector unit (on x86_64 SSE2 as "vector" and AVX2 as "avx2",
NEON on aarch64, RVV on riscv64) and the split penalties. Vector verdicts use riscv_hwprobe's
MISALIGNED_VECTOR_PERF values (never "emulated"); a vector ratio is the byte-element copy time over
the misaligned wide-element copy time, as the scalar one. The per-CPU table is the last
default-budget run; the stability and spread rows cover all the default-budget runs. A split
penalty is the time of an 8-byte load (store) crossing a cache line (a page) over the same access
at an aligned address: 1.00 means no penalty, 0 not measured.

Model of the extrapolation: serial = 64 x the per-CPU time measured by the serial runs; parallel =
waves x per-CPU time + the start/join overhead measured at this machine's CPU count, with 1 wave
given 64 CPUs (one pinned thread per CPU). The overhead grows with the thread count on a real
64-CPU machine, so the parallel figure is a lower bound. The kernel's serial probe cost 3.8 s on 64
CPUs in 2023 (~0.06 s per CPU, SG2042); its parallel fix (v6.7) probes all CPUs at once, and the
newest kernels use a 2 x 8 ms window per CPU. The budget is a cap: the default probe stops once its
minimum is stable, so larger budgets cost little more when the machine is quiet. "busy": a thread
spinning on the last allowed CPU during the runs. The kernel window applies to every unit the
probe times (the scalar copy and each vector unit: 2 x 8 ms each), so its per-CPU time is about
16 ms per unit (three units on x86_64 with AVX2: scalar, SSE2, AVX2).


## What the run took

$(if [ -s "$dir/elapsed_s" ]; then echo "All benchmarks: $(cat "$dir/elapsed_s") s of wall time ($( [ "$quick" = 1 ] && echo "BENCH_QUICK=1" || echo "full run"))."; fi)
Per benchmark (its own \`wall_s\`): $(for f in "$dir"/*.json; do J '/"wall_s":/ { printf "%s %s s; ", F, num($0, "wall_s"); exit }' "$f" | sed "s|^ |$(basename "${f%.json}") |"; done)

## Figures measured by hand

Everything above is generated from one \`make bench\` run. The figures measured by hand, each
with its command (\`hwtune cmdq\` on this machine, how bench_cmdq measures and what repeated runs
add, the probe's verdicts across processes), are in [$hand]($hand), which no script writes.
EOF
} > "$doc.tmp"
mv "$doc.tmp" "$doc"
echo "report: $doc; plots in $img/ and $pd/"
