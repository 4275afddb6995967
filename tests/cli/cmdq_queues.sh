#!/bin/sh
# SPDX-License-Identifier: MIT
# hwtune cmdq --queues: the parser's bounds and words, the refusal with
# --auto, the queues and insert path in the text and JSON reports, several
# queues measured for real, the rseq and shared insert paths (TAP).  Small
# --syncs so it takes seconds under qemu-user too; never asserts a speed.
# $HWTUNE is the tool, possibly behind an emulator wrapper (unquoted on purpose).
. "$(dirname "$0")/../tap.sh"
unset HWTUNE_DISABLE_MSIPOLLING GLIBC_TUNABLES

has() { grep -q -E -e "$1" "$out"; }
errhas() { grep -q -F -e "$1" "$err"; }
status_is() { [ "$rc" -eq "$1" ]; }
ok_has() { status_is 0 && for p in "$@"; do has "$p" || return 1; done; }
usage_err() { status_is 2 && for p in "$@"; do errhas "$p" || return 1; done; }
# usage NAME FIXED-STRING ARGS...: cmdq ARGS exits 2, stderr has the string
usage() {
	name=$1 pat=$2
	shift 2
	tap_run cmdq "$@"
	tap_ok "$name" usage_err "$pat"
}
# The three keys, with their JSON types: an integer and two strings (the
# reason never empty).  $1: the number of queues expected (a regex).
QKEYS='"queues": %s, "insert_path": "(rseq|shared)", "insert_path_reason": "[^"]+"'
qkeys() { printf "$QKEYS" "$1"; }
# The reason words of the library when it cannot take the rseq path
# (src/arch/rseq.c): a test that needs rseq skips naming them.
NO_RSEQ='rseq not registered|glibc without __rseq_size|rseq area too small|no rseq assembly'

S="--syncs 40 --segment 20"
# The software SMMU has one queue per possible CPU, at most 256.
ncpu=$(getconf _NPROCESSORS_CONF 2>/dev/null || echo 1)
[ "$ncpu" -gt 256 ] && ncpu=256

# --- the parser --------------------------------------------------------------
# With --help after them the options are parsed only, nothing is measured.
tap_run cmdq --help
tap_ok "--help names --queues, its range and per-cpu" \
	eval 'status_is 0 && grep -q -F -e "--queues N|per-cpu" "$out" && grep -q -F -e "(0..256;" "$out"'
q_ok() { $HWTUNE cmdq --queues "$1" --help >/dev/null 2>&1; }
tap_ok "--queues 0 (one queue, as the library's 0) is accepted" q_ok 0
tap_ok "--queues 1 is accepted" q_ok 1
tap_ok "--queues 256, the documented bound, is accepted" q_ok 256
tap_ok "--queues per-cpu is accepted" q_ok per-cpu
range="expected a decimal number in 0..256, or per-cpu)"
usage "--queues 257: one past the bound" "--queues: invalid value '257' (too large; $range" \
	--queues 257 --help
usage "--queues x names the value and the word" \
	"--queues: invalid value 'x' (not a decimal number; $range" --queues x --help
usage "--queues '' is refused" "--queues: invalid value '' (empty;" --queues "" --help
usage "--queues=-1: no sign" "--queues: invalid value '-1'" --queues=-1 --help
usage "--queues 0x2: no hex" "--queues: invalid value '0x2'" --queues 0x2 --help
usage "--queues PER-CPU: the word is lower case" "--queues: invalid value 'PER-CPU'" --queues PER-CPU --help
usage "--queues 2 --auto: exit 2 (auto_poll measures one queue)" \
	"cmdq: --queues 2 contradicts --auto" --queues 2 --auto --syncs 20
usage "--auto --queues per-cpu: exit 2, in either order" \
	"cmdq: --queues per-cpu contradicts --auto" --auto --queues per-cpu --syncs 20
tap_run cmdq --queues 1 --auto --help
tap_ok "--queues 1 --auto is fine" status_is 0

# --- the reports, one queue --------------------------------------------------
tap_run cmdq $S --poll sev --json
tap_ok "--json without --queues: queues 1 on the shared path, with a reason" \
	ok_has "$(qkeys 1)" '"insert_path": "shared"'
tap_run cmdq $S --poll sev --queues 0 --json
tap_ok "--queues 0: one queue" ok_has "$(qkeys 1)"
tap_run cmdq $S --poll sev
tap_ok "text: 'queues 1, insert path shared (reason)'" \
	ok_has '^  queues 1, insert path shared \(.+\)$'

# --- more queues than the device has -----------------------------------------
if [ "$ncpu" -lt 256 ]; then
	more=$((ncpu + 1))
	usage "--queues $more, more than the device's $ncpu: exit 2 naming both" \
		"--queues: invalid value '$more' (the device has $ncpu command queue" --queues $more $S
else
	tap_skip "--queues over the device's queues" "256 possible CPUs: the parser's bound is the device's"
fi

# --- several queues, measured ------------------------------------------------
if [ "$ncpu" -ge 2 ]; then
	tap_run cmdq --queues 2 --threads 4 --batch 8 --syncs 64 --json
	tap_ok "--queues 2 --threads 4 completes, \"queues\": 2" ok_has "$(qkeys 2)" '"threads": 4'
	tap_run cmdq --queues 2 --threads 4 --syncs 64
	tap_ok "--queues 2, text: 'queues 2, insert path ...'" \
		ok_has '^  queues 2, insert path (rseq|shared) \(.+\)$'
else
	tap_skip "--queues 2 --threads 4 (JSON)" "one possible CPU: the device has one queue"
	tap_skip "--queues 2 --threads 4 (text)" "one possible CPU: the device has one queue"
fi

tap_run cmdq --queues per-cpu --threads 2 --syncs 64 --poll msi --json
cp "$out" "$tap_dir/percpu.json"
tap_ok "--queues per-cpu: one queue per possible CPU ($ncpu)" ok_has "$(qkeys "$ncpu")"
# rseq where glibc registered it (x86_64, aarch64 natively); the library
# names why not (qemu-user, an old glibc, riscv64): skip by that name.
if ok_has '"insert_path": "rseq"'; then
	tap_ok "--queues per-cpu: the rseq path" true
elif has "\"insert_path_reason\": \"[^\"]*($NO_RSEQ)"; then
	why=$(sed -n 's/.*"insert_path_reason": "\([^"]*\)".*/\1/p' "$tap_dir/percpu.json")
	tap_skip "--queues per-cpu: the rseq path" "$why"
else
	tap_ok "--queues per-cpu: the rseq path (or a reason naming why not)" false
fi
tap_run_env GLIBC_TUNABLES=glibc.pthread.rseq=0 cmdq --queues per-cpu --threads 2 --syncs 64 \
	--poll msi --json
tap_ok "GLIBC_TUNABLES=glibc.pthread.rseq=0, --queues per-cpu: the shared path" \
	ok_has "$(qkeys "$ncpu")" '"insert_path": "shared"'

tap_end
