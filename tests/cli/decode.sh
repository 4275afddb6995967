#!/bin/sh
# SPDX-License-Identifier: MIT
# hwtune decode: known vectors, JSON, errors and exit statuses (TAP).
# $HWTUNE is the tool, possibly behind an emulator wrapper (unquoted on purpose).
. "$(dirname "$0")/../tap.sh"

# status_match WANT PATTERN out|err: the status is WANT and PATTERN is on that stream
status_match() {
	[ "$rc" -eq "$1" ] || return 1
	if [ "$3" = err ]; then
		grep -q -e "$2" "$err"
	else
		grep -q -e "$2" "$out"
	fi
}

# check NAME EXPECTED_STATUS GREP_PATTERN STREAM -- ARGS...
check() {
	name=$1 want=$2 pat=$3 stream=$4
	shift 5
	tap_run decode "$@"
	tap_ok "$name" status_match "$want" "$pat" "$stream"
}

check "CMD_SYNC SEV (no 0x)" 0 \
	'^CMD_SYNC CS=0x2 MSH=0x3 MSIATTR=0xf MSIDATA=0x0 MSIADDR=0x0$' out -- 0fc02046 0
check "CMD_SYNC MSI, address in hex" 0 \
	'^CMD_SYNC CS=0x1 MSH=0x3 MSIATTR=0xf MSIDATA=0x0 MSIADDR=0x7f12345000$' out -- \
	0x000000000fc01046 0x0000007F12345000
check "TLBI_NH_VA all fields" 0 \
	'^TLBI_NH_VA NUM=0x3 SCALE=0x5 VMID=0x1 ASID=0xabcd LEAF=0x1 TTL=0x3 TG=0x1 ADDR=0xffff800012345000$' \
	out -- 0xabcd000100503012 0xffff800012345701
check "CFGI_STE" 0 '^CFGI_STE SID=0x12345678 LEAF=0x1$' out -- 0x1234567800000003 1
check "opcode without fields" 0 '^TLBI_NSNH_ALL$' out -- 30 0
check "--json" 0 \
	'^{"decode": {"op": "CFGI_ALL", "opcode": "0x04", "dw": \["0x0000000000000004", "0x000000000000001f"\], "fields": {"SID": "0x0", "RANGE": "0x1f"}}}$' \
	out -- --json 4 1f
check "unknown opcode names it" 1 'unknown opcode 0x99' err -- 0x99 0
check "SSec bit is reserved" 1 'reserved bits set (dw0 0x400' err -- 0x446 0
check "CS 3 is invalid" 1 'invalid CS value 3' err -- 0x3046 0
check "bad hex names the value" 2 "invalid dword 'zz'" err -- 0x46 zz
check "17 digits rejected" 2 "invalid dword '0x12345678901234567'" err -- 0x12345678901234567 0
check "one argument" 2 'expected 2 dwords' err -- 0x46
check "three arguments" 2 'expected 2 dwords' err -- 0x46 0 0
check "--help" 0 '^usage: hwtune decode' out -- --help

tap_end
