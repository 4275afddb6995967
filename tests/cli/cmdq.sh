#!/bin/sh
# SPDX-License-Identifier: MIT
# hwtune cmdq: runs, JSON fields, mode selection, usage errors (TAP).  Small
# --syncs so it takes seconds under qemu-user too; never asserts a speed.
# $HWTUNE is the tool, possibly behind an emulator wrapper (unquoted on purpose).
: "${HWTUNE:=build/hwtune}"
n=0 failed=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# run ENV_ASSIGNMENT|- ARGS...: the tool's status in $rc, output in $out/$err
run() {
	e=$1
	shift
	if [ "$e" = - ]; then
		$HWTUNE cmdq "$@" > "$out" 2> "$err"
	else
		env "$e" $HWTUNE cmdq "$@" > "$out" 2> "$err"
	fi
	rc=$?
}

# verdict NAME OK(0/1) WHY
verdict() {
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		echo "# $3 (status $rc)"
		sed 's/^/# out: /' "$out" | head -40
		sed 's/^/# err: /' "$err" | head -20
		failed=$((failed + 1))
	fi
}

has() { grep -q -e "$1" "$out"; }
errhas() { grep -q -e "$1" "$err"; }

# ok_json NAME: status 0 and the stable JSON fields present
json_fields() {
	has '^{"cmdq": {' && has '"floor_ns": {"p50": [0-9]*, "p99": [0-9]*' &&
		has '"results": \[' && has '"sync_ns": {"p50": [0-9]*, "p99": [0-9]*' &&
		has '"threads": [0-9]*, "batch": [0-9]*, "syncs": [0-9]*' &&
		has '"cmds_per_s": [0-9]*'
}

# usage NAME PATTERN ARGS...: exit 2 and stderr names the bad value
usage() {
	name=$1 pat=$2
	shift 2
	run - "$@"
	[ "$rc" -eq 2 ] && errhas "$pat"
	verdict "$name" $? "want status 2 and '$pat' on stderr"
}

S="--syncs 200"
echo "1..22"

run - $S --json
[ "$rc" -eq 0 ] && json_fields
verdict "default run: JSON has the stable fields" $? "missing field"
has '"poll": "msi"' && has '"poll": "sev"'
verdict "default run measures both modes" $? "want msi and sev results"
has '"recommendation": {"disable_msipolling": [tf]'
verdict "JSON recommendation" $? "no recommendation"

run - $S
[ "$rc" -eq 0 ] && has 'floor' && has 'MSI polling' && has 'CONS polling' && has 'recommendation:'
verdict "human output: table and recommendation" $? "missing rows"

run - $S --json --poll msi
[ "$rc" -eq 0 ] && has '"poll": "msi"' && ! has '"poll": "sev"'
verdict "--poll msi measures only msi" $? "want msi only"

run - $S --json --poll sev
[ "$rc" -eq 0 ] && has '"poll": "sev"' && ! has '"poll": "msi"'
verdict "--poll sev measures only sev" $? "want sev only"

run - $S --json --disable-msipolling
[ "$rc" -eq 0 ] && has '"poll": "sev"' && ! has '"poll": "msi"' &&
	has '"disable_msipolling": true, "disable_msipolling_source": "flag"'
verdict "--disable-msipolling: CONS polling only" $? "want sev only, source flag"

usage "--disable-msipolling --poll msi is a contradiction" '--disable-msipolling' \
	--disable-msipolling --poll msi

run HWTUNE_DISABLE_MSIPOLLING=1 $S --json
[ "$rc" -eq 0 ] && has '"poll": "sev"' && ! has '"poll": "msi"' &&
	has '"disable_msipolling_source": "env"'
verdict "HWTUNE_DISABLE_MSIPOLLING=1 honoured" $? "want sev only, source env"

run HWTUNE_DISABLE_MSIPOLLING=1 $S --json --poll msi
[ "$rc" -eq 0 ] && has '"poll": "msi"'
verdict "--poll beats the environment" $? "want msi measured"

run HWTUNE_DISABLE_MSIPOLLING=yes $S
[ "$rc" -eq 2 ] && errhas "'yes'"
verdict "bad HWTUNE_DISABLE_MSIPOLLING names the value" $? "want status 2 naming 'yes'"

usage "--threads 0" "--threads: invalid value '0'" --threads 0
usage "--poll fast" "'fast'" --poll fast
usage "--syncs abc" "--syncs: invalid value 'abc'" --syncs abc
usage "--entries-log2 6" "--entries-log2: invalid value '6'" --entries-log2 6
usage "--batch larger than the queue" "--batch: invalid value '128'" --entries-log2 7 --batch 128
usage "--msi-cost-ns -1" "'-1'" --msi-cost-ns -1
usage "unknown option" "'--frobnicate'" --frobnicate

run - --threads 8 --batch 32 --entries-log2 7 --syncs 64 --json
[ "$rc" -eq 0 ] && json_fields && has '"threads": 8, "batch": 32' && has '"entries": 128'
verdict "--threads 8 --batch 32 --entries-log2 7 completes" $? "run failed"

run - $S --msi-cost-ns 300 --poll msi
human=1
[ "$rc" -eq 0 ] && has 'extra costs ON: msi 300 ns' && human=0
run - $S --msi-cost-ns 300 --poll msi --json
[ "$human" -eq 0 ] && [ "$rc" -eq 0 ] && has '"costs_ns": {"msi": 300, "sev": 0, "cmd": 0}'
verdict "cost knobs shown when on (human and JSON)" $? "costs not shown"

run - $S --auto --json
[ "$rc" -eq 0 ] && has '"auto": {"error": 0, "msipolling": [tf][a-z]*, "measured": true' &&
	has '"reason": "auto: '
verdict "--auto reports the queue's choice and reason" $? "no auto section"

run - --help
[ "$rc" -eq 0 ] && has '^usage: hwtune cmdq' && has '--disable-msipolling' && has '--timeout-ms'
verdict "--help" $? "no usage text"

[ "$failed" -eq 0 ]
