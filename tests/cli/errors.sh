#!/bin/sh
# SPDX-License-Identifier: MIT
# What a new user meets first: messages that say the right thing (the
# command's prefix, the offending bits, one noun per count, no doubled
# words, long values cut), HWTUNE_RUNTIME_DIR checked before anything is
# measured, conflicting output formats refused, writes to a full disk (TAP).
# Never a speed.
. "$(dirname "$0")/../tap.sh"

tap_isolate

status_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -q -F -e "$1" "$out"; }
err_has() { grep -q -F -e "$1" "$err"; }
out_empty() { [ ! -s "$out" ]; }
err_lines() { [ "$(wc -l < "$err")" -eq "$1" ]; }
# usage NAME TEXT ARGS...: exit 2, nothing on stdout, one line on stderr holding TEXT
usage() {
	u_name=$1 u_text=$2
	shift 2
	tap_run "$@"
	tap_ok "$u_name: exit 2, one line naming it" \
		eval 'status_is 2 && out_empty && err_lines 1 && err_has "$u_text"'
}
# Both overrides: nothing is probed, the run is quick.
fast="--unaligned-scalar-speed=fast --unaligned-vector-speed=fast"

# --- HWTUNE_RUNTIME_DIR: checked like the other variables ------------------------------
for args in "probe --system" "probe" "probe $fast" "--json" ""; do
	# shellcheck disable=SC2086
	tap_run_env HWTUNE_RUNTIME_DIR=relative/run $args
	tap_ok "HWTUNE_RUNTIME_DIR=relative/run hwtune $args: exit 2 naming it, nothing measured" \
		eval 'status_is 2 && out_empty && err_lines 1 &&
		      err_has "hwtune: HWTUNE_RUNTIME_DIR: invalid value '"'relative/run'"' (expected an absolute folder"'
done
# shellcheck disable=SC2086
tap_run_env HWTUNE_RUNTIME_DIR= probe $fast
tap_ok "HWTUNE_RUNTIME_DIR empty: the default folder, no error" eval 'status_is 0 && ! test -s "$err"'
tap_run_env HWTUNE_RUNTIME_DIR=relative decode 0x46 0x1000
tap_ok "decode does not read HWTUNE_RUNTIME_DIR: a relative one is no error" status_is 0

# --- writes to a full disk say why, every command alike ----------------------------------
if [ -w /dev/full ]; then
	for args in "--help" "probe --help" "cmdq --help" "decode --help" "probe --json --per-cpu $fast"; do
		# shellcheck disable=SC2086
		$HWTUNE $args > /dev/full 2> "$err"
		rc=$?
		tap_ok "$args >/dev/full: exit 1, 'No space left on device'" \
			eval 'status_is 1 && err_lines 1 && err_has "hwtune: write error: No space left on device"'
	done
else
	tap_skip "writes to /dev/full" "no writable /dev/full"
fi

# --- cmdq's own errors carry its prefix -----------------------------------------------
allowed_max=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',-' '\n\n' |
	sort -n | tail -n 1)
away=$((allowed_max + 1))
for opt in --device-cpu --producer-cpu; do
	usage "cmdq $opt $away (not allowed)" \
		"hwtune cmdq: $opt: invalid value '$away' (not an allowed CPU" cmdq $opt $away --syncs 10
done

# --- a long value is cut in every message ---------------------------------------------
big=$(head -c 120000 /dev/zero | tr '\0' a)
cut_ok() {
	status_is 2 && err_lines 1 && [ "$(wc -c < "$err")" -lt 400 ] &&
		grep -q -E "a\.\.\.\(1200[0-9][0-9] bytes\)" "$err"
}
for args in "probe --cpus" "probe --smt" "probe --unaligned-scalar-speed" "probe --format" \
	"cmdq --poll" "cmdq --handler" "cmdq --threads" "decode 0"; do
	# shellcheck disable=SC2086
	tap_run $args "$big"
	tap_ok "$args <120 KB>: the value is cut" cut_ok
done
for args in "probe" "cmdq" "decode 0 0" ""; do
	# shellcheck disable=SC2086
	tap_run $args "x$big"
	tap_ok "${args:-main job} <120 KB operand>: the value is cut" cut_ok
	# shellcheck disable=SC2086
	tap_run $args "--x$big"
	tap_ok "${args:-main job} --<120 KB option>: the name is cut" cut_ok
done
tap_run probe "--json=$big"
tap_ok "probe --json=<120 KB>: the value is cut" cut_ok
tap_run --version "$big"
tap_ok "--version <120 KB>: the value is cut" cut_ok
for var in HWTUNE_UNALIGNED_SCALAR_SPEED HWTUNE_UNALIGNED_VECTOR_SPEED HWTUNE_RUNTIME_DIR; do
	tap_run_env "$var=$big" probe
	tap_ok "$var=<120 KB>: the value is cut" cut_ok
done
tap_run_env "HWTUNE_DISABLE_MSIPOLLING=$big" cmdq
tap_ok "HWTUNE_DISABLE_MSIPOLLING=<120 KB>: the value is cut" cut_ok
tap_run probe --smt "$(head -c 63 /dev/zero | tr '\0' a)é"
tap_ok "a value cut inside a UTF-8 character keeps it whole" \
	eval 'status_is 2 && err_has "'"'$(head -c 63 /dev/zero | tr '\0' a)...(65 bytes)'"'"'
tap_run probe --smt "$(head -c 64 /dev/zero | tr '\0' a)"
tap_ok "a value of 64 bytes is not cut" eval 'status_is 2 && ! err_has "bytes)"'

# --- decode names the reserved bits -------------------------------------------------------
tap_run decode 0x04 31
tap_ok "decode 0x04 31: names dw1 bit 5 as the reserved bit set" \
	eval 'status_is 1 && err_lines 1 && err_has "CFGI_ALL: reserved bits set: dw1 bit 5 (0x20)"'
tap_run decode 0x04 0x7f
tap_ok "decode 0x04 0x7f: a run of bits as a range" \
	eval 'status_is 1 && err_has "reserved bits set: dw1 bits 5-6 (0x60)"'
tap_run decode 0x5004 0xa0
tap_ok "decode 0x5004 0xa0: both dwords, each bit" \
	eval 'status_is 1 && err_has "reserved bits set: dw0 bits 12, 14 (0x5000); dw1 bits 5, 7 (0xa0)"'

# --- counts: one noun per count -------------------------------------------------------
one_plural() { grep -E '(^|[^0-9.])1 (rounds|waves|CPUs|syncs|threads|samples|entries)([^a-z]|$)' "$out"; }
tap_run cmdq --syncs 1 --auto
tap_ok "cmdq --syncs 1: exit 0, no '1 <plural>'" eval 'status_is 0 && ! one_plural'
tap_ok "cmdq --syncs 1: '1 round interleaved', '1 timed sync per mode'" \
	eval 'out_has "1 round interleaved" && out_has "1 timed sync per mode per round"'
tap_ok "cmdq --auto: the library's 'auto:' is not doubled" \
	eval 'out_has "  auto: queue chose " && ! grep -q "auto:.*auto:" "$out"'
first=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',-' '\n\n' | head -n 1)
tap_run probe --no-cache --cpus "$first"
tap_ok "probe --cpus $first: '1 wave', 'of 1 CPU', no '1 <plural>'" \
	eval 'status_is 0 && out_has " of 1 CPU)" && out_has ", 1 wave," && ! one_plural'

# --- output formats: one choice ---------------------------------------------------------
usage "probe --json --format=prom" "--json and --format=prom choose different output formats" \
	probe --json --format=prom
usage "probe --format=prom --json" "--format=prom and --json choose different output formats" \
	probe --format=prom --json
usage "probe --format=text --form=json" "--format=text and --format=json choose different" \
	probe --format=text --form=json
usage "main job --json --format=prom" "--json and --format=prom choose different output formats" \
	--json --format=prom
usage "main job --format prom --format text" "--format=prom and --format=text choose different" \
	--format prom --format text
# shellcheck disable=SC2086
tap_run probe --json --format=json $fast
tap_ok "probe --json --format=json: the same format twice is fine" \
	eval 'status_is 0 && grep -q "^{" "$out"'
# shellcheck disable=SC2086
tap_run probe --format=prom --format=prom $fast
tap_ok "probe --format=prom twice is fine" eval 'status_is 0 && out_has "# TYPE "'

# --- what a new user tries ---------------------------------------------------------------
usage "hwtune --json probe: the command must come first" \
	"'probe' must come first: 'hwtune probe [OPTIONS]'" --json probe
usage "hwtune -- cmdq: the command must come first" "'cmdq' must come first" -- cmdq
usage "hwtune PROBE: the commands are listed" \
	"unknown command 'PROBE' (commands: probe, cmdq, decode; try 'hwtune --help')" PROBE

tap_end
