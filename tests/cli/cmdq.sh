#!/bin/sh
# SPDX-License-Identifier: MIT
# hwtune cmdq: runs, JSON fields, mode selection, usage errors (TAP).  Small
# --syncs so it takes seconds under qemu-user too; never asserts a speed.
# $HWTUNE is the tool, possibly behind an emulator wrapper (unquoted on purpose).
. "$(dirname "$0")/../tap.sh"
unset HWTUNE_DISABLE_MSIPOLLING

has() { grep -q -e "$1" "$out"; }
errhas() { grep -q -e "$1" "$err"; }
status_is() { [ "$rc" -eq "$1" ]; }
# has_all PATTERN...: every pattern on stdout
has_all() {
	for p in "$@"; do
		has "$p" || return 1
	done
}
# ok_has PATTERN...: status 0 and every pattern on stdout
ok_has() { status_is 0 && has_all "$@"; }

# ok_json PATTERN...: status 0, the stable JSON fields and every pattern
json_fields() {
	has '^{"cmdq": {' && has '"floor_ns": {"p50": [0-9]*, "p99": [0-9]*' &&
		has '"results": \[' && has '"sync_ns": {"p50": [0-9]*, "p99": [0-9]*' &&
		has '"threads": [0-9]*, "batch": [0-9]*, "syncs": [0-9]*' &&
		has '"cmds_per_s": [0-9]*'
}
ok_json() { status_is 0 && json_fields && has_all "$@"; }

# only KEEP DROP PATTERN...: status 0, poll mode KEEP measured, DROP not,
# and every pattern on stdout
only() {
	keep=$1 drop=$2
	shift 2
	ok_has "\"poll\": \"$keep\"" "$@" && ! has "\"poll\": \"$drop\""
}

# usage_err PATTERN: exit 2 and stderr names the bad value
usage_err() { status_is 2 && errhas "$1"; }
# usage NAME PATTERN ARGS...: run cmdq ARGS, expect usage_err PATTERN
usage() {
	name=$1 pat=$2
	shift 2
	tap_run cmdq "$@"
	tap_ok "$name" usage_err "$pat"
}

S="--syncs 200"

tap_run cmdq $S --json
tap_ok "default run: JSON has the stable fields" ok_json
tap_ok "default run measures both modes" has_all '"poll": "msi"' '"poll": "sev"'
tap_ok "JSON recommendation" has '"recommendation": {"disable_msipolling": [tf]'

tap_run cmdq $S
tap_ok "human output: table and recommendation" \
	ok_has 'floor' 'MSI polling' 'CONS polling' 'recommendation:'

tap_run cmdq $S --json --poll msi
tap_ok "--poll msi measures only msi" only msi sev

tap_run cmdq $S --json --poll sev
tap_ok "--poll sev measures only sev" only sev msi

tap_run cmdq $S --json --disable-msipolling
tap_ok "--disable-msipolling: CONS polling only" \
	only sev msi '"disable_msipolling": true, "disable_msipolling_source": "flag"'

usage "--disable-msipolling --poll msi is a contradiction" '--disable-msipolling' \
	--disable-msipolling --poll msi

tap_run_env HWTUNE_DISABLE_MSIPOLLING=1 cmdq $S --json
tap_ok "HWTUNE_DISABLE_MSIPOLLING=1 honoured" \
	only sev msi '"disable_msipolling_source": "env"'

tap_run_env HWTUNE_DISABLE_MSIPOLLING=1 cmdq $S --json --poll msi
tap_ok "--poll beats the environment" ok_has '"poll": "msi"'
# Found by tests/fuzz/cli_args (disable_msipolling in effect => no MSI polling
# measured): the run above said disable_msipolling=1 (from the environment)
# while it measured MSI polling, and --auto's queue obeyed the environment.
tap_ok "--poll msi: the overridden environment is not reported in effect" \
	ok_has '"disable_msipolling": false, "disable_msipolling_source": "default"'
tap_run_env HWTUNE_DISABLE_MSIPOLLING=1 cmdq $S --poll both --auto
tap_ok "--poll both: the overridden environment binds neither the report nor --auto" \
	eval 'ok_has "MSI polling" "CONS polling" && ! has "disable_msipolling=1 (from" && ! has "disable_msipolling is set"'

tap_run_env HWTUNE_DISABLE_MSIPOLLING=yes cmdq $S
tap_ok "bad HWTUNE_DISABLE_MSIPOLLING names the value" usage_err "'yes'"

tap_run_env HWTUNE_DISABLE_MSIPOLLING= cmdq $S
tap_ok "empty HWTUNE_DISABLE_MSIPOLLING is refused too" usage_err "invalid value ''"
# A flag beats the environment, a bad value of it included.
tap_run_env HWTUNE_DISABLE_MSIPOLLING=yes cmdq $S --poll msi --json
tap_ok "--poll msi: a bad HWTUNE_DISABLE_MSIPOLLING is not an error" only msi sev
tap_run_env HWTUNE_DISABLE_MSIPOLLING=yes cmdq $S --disable-msipolling --json
tap_ok "--disable-msipolling: a bad HWTUNE_DISABLE_MSIPOLLING is not an error" \
	only sev msi '"disable_msipolling_source": "flag"'
# The main job checks the whole environment before it measures anything:
# no probe output, exit 2 (it used to probe, then fail the cmdq part, exit 1).
tap_run_env HWTUNE_DISABLE_MSIPOLLING=yes
tap_ok "hwtune with a bad HWTUNE_DISABLE_MSIPOLLING: exit 2 before measuring" \
	eval 'usage_err "HWTUNE_DISABLE_MSIPOLLING: invalid value .yes." && [ ! -s "$out" ]'
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED= --no-cache
tap_ok "hwtune with an empty HWTUNE_UNALIGNED_SCALAR_SPEED: exit 2 before measuring" \
	eval 'usage_err "HWTUNE_UNALIGNED_SCALAR_SPEED: invalid value .." && [ ! -s "$out" ]'

usage "--threads 0" "--threads: invalid value '0'" --threads 0
usage "--poll fast" "'fast'" --poll fast
usage "--syncs abc" "--syncs: invalid value 'abc'" --syncs abc
usage "--entries-log2 6" "--entries-log2: invalid value '6'" --entries-log2 6
usage "--batch larger than the queue" "--batch: invalid value '128'" --entries-log2 7 --batch 128
usage "--msi-cost-ns -1" "'-1'" --msi-cost-ns -1
usage "unknown option" "'--frobnicate'" --frobnicate
# Found by tests/fuzz/cli_args: strtoull's base 0 read "010" as octal 8,
# refused "08" and skipped blanks.  Numbers are decimal only (issue 9): hex
# is for decode's dwords alone.
tap_run cmdq --syncs 20 --segment 010 --json
tap_ok "--segment 010 is ten, not octal" ok_has '"segment_syncs": 10,'
tap_run cmdq --syncs 20 --segment 08 --poll sev --json
tap_ok "--segment 08 is eight" ok_has '"segment_syncs": 8,'
usage "--segment 0x0a: no hex" "--segment: invalid value '0x0a' (not a decimal number" \
	--segment 0x0a
usage "--threads +2: no sign" "--threads: invalid value '+2'" --threads +2
usage "--timeout-ms 1e3" "--timeout-ms: invalid value '1e3'" --timeout-ms 1e3
tap_run cmdq --syncs=20 --seg=7 --poll=sev --json
tap_ok "--opt=value and unambiguous abbreviations" ok_has '"segment_syncs": 7,'
usage "ambiguous abbreviation names the candidates" "option '--t' is ambiguous: --threads, --timeout-ms" --t 3
usage "a missing value names the option" "option '--threads' needs a value" --threads
usage "an extra argument is named" "unexpected argument 'extra'" extra
usage "-- then an argument" "unexpected argument '--json'" -- --json
usage "unknown option: the message and the hint" "cmdq: unknown option '--x' (try 'hwtune cmdq --help')" --x

# Every documented range, as --help states it, is the parser's: each bound
# is accepted and one past it refused (with --help after it: parse only,
# nothing is measured).
tap_run cmdq --help
cp "$out" "$tap_dir/help"
bounds() { # OPTION LO HI: help says LO..HI; LO, HI accepted; LO-1, HI+1 refused
	opt=$1 lo=$2 hi=$3
	grep -q -F -e "$opt" "$tap_dir/help" && grep -q -F -e "$lo..$hi" "$tap_dir/help" || return 1
	$HWTUNE cmdq "$opt" "$lo" --help >/dev/null 2>&1 || return 1
	$HWTUNE cmdq "$opt" "$hi" --help >/dev/null 2>&1 || return 1
	$HWTUNE cmdq "$opt" $((hi + 1)) --help >/dev/null 2>&1
	[ $? -eq 2 ] || return 1
	below=$((lo - 1))
	$HWTUNE cmdq "$opt" "$below" --help >/dev/null 2>&1
	[ $? -eq 2 ]
}
for b in "--threads 1 256" "--syncs 1 5000000" "--segment 1 1000000" "--entries-log2 7 19" \
	"--device-cpu 0 65535" "--producer-cpu 0 65535" "--msi-cost-ns 0 1000000000" \
	"--sev-cost-ns 0 1000000000" "--cmd-cost-ns 0 1000000000" "--timeout-ms 1 600000"; do
	tap_ok "documented range: $b" bounds $b
done
batch_bounds() {
	grep -q -F -e "at most 524287" "$tap_dir/help" &&
		$HWTUNE cmdq --batch 524287 --help >/dev/null 2>&1 &&
		{ $HWTUNE cmdq --batch 524288 --help >/dev/null 2>&1; [ $? -eq 2 ]; }
}
tap_ok "documented range: --batch 0 .. at most 524287" batch_bounds
tap_run cmdq --entries-log2 7 --batch 127 --syncs 20 --poll sev --json
tap_ok "--batch 127 fits a queue of 128" ok_has '"batch": 127'
usage "--threads with a leading blank" "--threads: invalid value ' 2'" --threads " 2"
usage "--threads 0x" "--threads: invalid value '0x'" --threads 0x
usage "--threads 0x0x2" "--threads: invalid value '0x0x2'" --threads 0x0x2

# Both CPUs named the same by the user: say so (it used to say "only one CPU allowed").
tap_run cmdq --device-cpu 0 --producer-cpu 0 --syncs 20 --poll sev
tap_ok "--device-cpu 0 --producer-cpu 0: the two options name the same CPU" \
	ok_has '(same CPU: --producer-cpu and --device-cpu name the same CPU)'

tap_run cmdq --threads 8 --batch 32 --entries-log2 7 --syncs 64 --json
tap_ok "--threads 8 --batch 32 --entries-log2 7 completes" \
	ok_json '"threads": 8, "batch": 32' '"entries": 128'

# Two runs, one verdict: the human line from the first, the JSON from the second.
tap_run cmdq $S --msi-cost-ns 300 --poll msi
human=1
ok_has 'extra costs ON: msi 300 ns' && human=0
costs_shown() { [ "$human" -eq 0 ] && ok_has '"costs_ns": {"msi": 300, "sev": 0, "cmd": 0}'; }
tap_run cmdq $S --msi-cost-ns 300 --poll msi --json
tap_ok "cost knobs shown when on (human and JSON)" costs_shown

# Measured, or (a machine too slow for one round of the measurement within
# the timeout: seen under ASan on a loaded box) said so; never a speed.
auto_reported() {
	ok_has '"auto": {"error": 0, "msipolling": [tf][a-z]*, "measured": ' '"reason": "auto: ' &&
		{ has '"measured": true,[^}]*"reason": "auto: empty-queue CMD_SYNC' ||
			has '"measured": false,[^}]*"reason": "auto: not measured (not one round'; }
}
tap_run cmdq $S --auto --json
tap_ok "--auto reports the queue's choice and reason" auto_reported

tap_run cmdq --help
tap_ok "--help" ok_has '^usage: hwtune cmdq' '--disable-msipolling' '--timeout-ms'
tap_run cmdq -h
tap_ok "-h" ok_has '^usage: hwtune cmdq'

# A report that cannot be written is an error (it used to exit 0).
if [ -w /dev/full ]; then
	$HWTUNE cmdq --syncs 100 > /dev/full 2> "$err"
	rc=$?
	tap_ok "cmdq >/dev/full: exit 1, 'write error'" \
		eval '[ "$rc" -eq 1 ] && grep -q "^hwtune: write error: " "$err"'
else
	tap_skip "cmdq >/dev/full" "no writable /dev/full"
fi

tap_end
