#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench: run every benchmark, one JSON file per run in
# bench/results/<date>-<host>/, each {"machine": {...}, "command", "result"},
# then bench/report.sh renders the plots and docs/benchmarks.md.
#
#   sh bench/run.sh BUILD_DIR        BENCH_QUICK=1: short runs (~1 min)
#   BENCH_OUT=dir (results folder), BENCH_DOC=file, BENCH_IMG=dir (the page
#   and its plots; default docs/benchmarks.md and docs/benchmarks/)
#
# Never run by make check.  Progress goes to stderr when it is a terminal;
# each benchmark's own stderr is kept beside its JSON (<name>.log).
set -eu
B=${1:-build}
quick=${BENCH_QUICK:-0}
[ "$quick" = 0 ] || quick=1
host=$(hostname -s 2>/dev/null || echo host)
out=${BENCH_OUT:-bench/results/$(date -u +%Y%m%d-%H%M)-$host}
mkdir -p "$out"
t0=$(date +%s)

if [ "$quick" = 1 ]; then
	SYNC="--rounds 8 --segment 300"
	TOOL="--syncs 2000"
	THR="--rounds 3 --segment-ms 5 --timeout-ms 5000"
	CON="--rounds 3 --segment-ms 5 --timeout-ms 5000"
	PROBE="--runs 20 --serial-runs 5 --kernel-runs 2 --scale-runs 3 --scale-kernel-runs 1 --stab-runs 10"
else
	SYNC="--rounds 60 --segment 2000"
	TOOL="--syncs 20000"
	THR="--rounds 11 --segment-ms 15 --timeout-ms 5000"
	CON="--rounds 7 --segment-ms 15 --timeout-ms 5000"
	PROBE="--runs 100 --serial-runs 20 --kernel-runs 5 --scale-runs 10 --scale-kernel-runs 3 --stab-runs 100"
fi
# Hi1620-like device costs (see docs/benchmarks.md): the empty-queue
# CMD_SYNC Barry Song measured on Hi1620, 280 ns with MSI polling and 190 ns
# with SEV, added as the device's busy-waited completion cost per mode.
HI1620="--msi-cost-ns 280 --sev-cost-ns 190"
# Contention: every producer count in each round of one run (the ratio to
# the fair share is taken per round); the producers time-share one CPU on a
# 2-CPU machine and spread over real CPUs on a larger one.
PRODUCERS=1,2,4,8,16

steps=8
n=0
progress() {
	n=$((n + 1))
	[ -t 2 ] && printf '[%d/%d %4ss] %s\n' "$n" "$steps" "$(($(date +%s) - t0))" "$1" >&2
	return 0
}

# The floor of the moment, for the machine facts: "C2CLAT_NS MEDIAN_NS".
floor_now() {
	"$B/bench/bench_sync" --rounds 2 --segment 200 2>/dev/null |
		awk '/"c2clat_min_rtt_ns"/ {
			match($0, /"c2clat_min_rtt_ns": [0-9.]+/); a = substr($0, RSTART + 21, RLENGTH - 21)
			match($0, /"c2c_median_rtt_ns": [0-9.]+/); b = substr($0, RSTART + 21, RLENGTH - 21)
			print a, b }'
}

# run NAME COMMAND...: NAME.json = machine facts + command + its JSON.
failed=
run() {
	name=$1
	shift
	progress "$name: $*"
	fl=$(floor_now || true)
	[ -n "$fl" ] || fl="0 0"
	{
		printf '{"machine": '
		# shellcheck disable=SC2086
		sh bench/machine.sh $fl
		printf ', "quick": %s, "command": "%s",\n"result":\n' "$quick" "$*"
		if "$@" 2>"$out/$name.log"; then :; else
			echo "bench: $name failed (exit $?), see $out/$name.log" >&2
			failed="$failed $name"
			printf '{"failed": true}'
		fi
		printf '}\n'
	} > "$out/$name.json.tmp"
	mv "$out/$name.json.tmp" "$out/$name.json"
}

run sync-default "$B/bench/bench_sync" $SYNC --label default
run sync-hi1620 "$B/bench/bench_sync" $SYNC $HI1620 --label hi1620
run tool-cmdq-default "$B/hwtune" cmdq --json $TOOL
run tool-cmdq-hi1620 "$B/hwtune" cmdq --json $TOOL $HI1620
run throughput "$B/bench/bench_cmdq" --bursts 1,8,32,64 --group both $THR
run contention "$B/bench/bench_cmdq" --producers $PRODUCERS --bursts 1,8 --group sync $CON
# The oversubscribed tail as users see it: 8 producers, batches of 32 +
# CMD_SYNC, a queue of 128 entries.
run tool-cmdq-threads8 "$B/hwtune" cmdq --json --threads 8 --batch 32 --entries-log2 7 $TOOL
# ... and on per-CPU queues, where the tool has them.
if "$B/hwtune" cmdq --help 2>&1 | grep -q -- '--queues'; then
	steps=$((steps + 1))
	run tool-cmdq-threads8-percpu "$B/hwtune" cmdq --json --threads 8 --batch 32 --entries-log2 7 \
		--queues per-cpu $TOOL
fi
run probe "$B/bench/bench_probe" $PROBE

echo "$(($(date +%s) - t0))" > "$out/elapsed_s"
progress "report"
sh bench/report.sh "$out" "${BENCH_DOC:-docs/benchmarks.md}" "${BENCH_IMG:-docs/benchmarks}"
sh bench/check.sh "$out" >&2 || failed="$failed check"
echo "bench: results in $out/ ($(($(date +%s) - t0)) s${failed:+; failed:$failed})"
[ -z "$failed" ]
