#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every fuzz target of a build for a bounded time (TAP):
#   tests/fuzz/run.sh BUILD_DIR COUNTS SECONDS
# Each BUILD_DIR/fuzzers/<t> starts from its seeds in tests/fuzz/corpus/<t>/
# and from what earlier runs found (BUILD_DIR/corpus/<t>/, where new inputs
# go); tests/fuzz/<t>.dict is its dictionary if present.  A crash, a leak or
# a violated property fails the target, and its input is kept in
# BUILD_DIR/artifacts/.  Appends "passed failed skipped" to COUNTS, failures
# to COUNTS.failed.
build=$1 counts=$2 secs=${3:-25}
pass=0 fail=0 n=0 total=0
for bin in "$build"/fuzzers/*; do
	[ -x "$bin" ] || continue
	t=$(basename "$bin")
	n=$((n + 1))
	work=$build/corpus/$t art=$build/artifacts log=$build/$t.log
	mkdir -p "$work" "$art" "tests/fuzz/corpus/$t"
	dict=
	[ -f "tests/fuzz/$t.dict" ] && dict=-dict=tests/fuzz/$t.dict
	timeout -k 5 $((secs + 300)) "$bin" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/$t-" $dict \
		"$work" "tests/fuzz/corpus/$t" > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	seeds=$(ls "tests/fuzz/corpus/$t" | wc -l | tr -d ' ')
	found=$(ls "$work" | wc -l | tr -d ' ')
	if [ "$rc" -eq 0 ] && [ -n "$execs" ]; then
		echo "ok $n - fuzz/$t: ${execs} execs in ${secs} s (${rate}/s), $seeds seeds, corpus $found"
		pass=$((pass + 1)) total=$((total + execs))
	else
		echo "not ok $n - fuzz/$t: exit $rc after ${execs:-?} execs (log $log)" | tee -a "$counts.failed"
		awk '/property violated/ { print; getline; print; next }
		     /runtime error|^SUMMARY|Test unit written/ { print }' "$log" |
			head -n 20 | sed 's/^/# /'
		fail=$((fail + 1))
	fi
done
echo "1..$n"
echo "# fuzz: $pass passed, $fail failed, 0 skipped ($total execs in all)"
echo "$pass $fail 0" >> "$counts"
[ "$fail" -eq 0 ] || [ -n "$HWT_CHECK_ALL" ]
