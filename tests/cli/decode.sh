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

# Enumerated fields by name (CS, MSH, MSIATTR, RESP), the rest in hex.
check "CMD_SYNC SEV (no 0x), values named" 0 \
	'^CMD_SYNC CS=SEV MSH=ISH MSIATTR=WB MSIDATA=0x0 MSIADDR=0x0$' out -- 0fc02046 0
check "CMD_SYNC MSI, address in hex" 0 \
	'^CMD_SYNC CS=IRQ MSH=ISH MSIATTR=WB MSIDATA=0x0 MSIADDR=0x7f12345000$' out -- \
	0x000000000fc01046 0x0000007F12345000
check "CMD_SYNC CS=NONE MSH=OSH, an MSIATTR without a name in hex" 0 \
	'^CMD_SYNC CS=NONE MSH=OSH MSIATTR=0x7 MSIDATA=0x0 MSIADDR=0x0$' out -- 0x7800046 0
check "CMD_SYNC MSH 1 is reserved" 0 '^CMD_SYNC CS=SEV MSH=reserved ' out -- 0x0f402046 0
check "RESUME RESP=RETRY" 0 '^RESUME .*RESP=RETRY' out -- 0x1044 0
check "PRI_RESP RESP=SUCC" 0 'RESP=SUCC' out -- 0x41 0x2000
check "TLBI_NH_VA all fields" 0 \
	'^TLBI_NH_VA NUM=0x3 SCALE=0x5 VMID=0x1 ASID=0xabcd LEAF=0x1 TTL=0x3 TG=0x1 ADDR=0xffff800012345000$' \
	out -- 0xabcd000100503012 0xffff800012345701
check "CFGI_STE" 0 '^CFGI_STE SID=0x12345678 LEAF=0x1$' out -- 0x1234567800000003 1
check "opcode without fields" 0 '^TLBI_NSNH_ALL$' out -- 30 0
check "--json (the library version first; fields keep their hex)" 0 \
	'^{"version": "[0-9][0-9.]*", "decode": {"op": "CFGI_ALL", "opcode": "0x04", "dw": \["0x0000000000000004", "0x000000000000001f"\], "fields": {"SID": "0x0", "RANGE": "0x1f"}, "values": {}}}$' \
	out -- --json 4 1f
check "--json: enumerated values raw and named" 0 \
	'"fields": {"CS": "0x2", "MSH": "0x3", "MSIATTR": "0xf", "MSIDATA": "0x0", "MSIADDR": "0x0"}, "values": {"CS": {"raw": 2, "name": "SEV"}, "MSH": {"raw": 3, "name": "ISH"}, "MSIATTR": {"raw": 15, "name": "WB"}}}}$' \
	out -- 0fc02046 0 --json
check "--json: an unnamed value is null" 0 '"MSIATTR": {"raw": 7, "name": null}' out -- --json 0x7800046 0
check "--json after the dwords" 0 '^{"version": ' out -- 4 1f --json
check "--json abbreviated (--js)" 0 '^{"version": ' out -- --js 4 1f
check "-- ends the options" 0 '^CFGI_ALL' out -- -- 4 1f
check "after --, --json is a dword" 2 "invalid dword '--json'" err -- 4 -- --json
check "unknown option names it" 2 "unknown option '--bogus'" err -- --bogus 4 1f
check "--json=1 takes no value" 2 "option '--json' takes no value" err -- --json=1 4 1f
check "unknown opcode names it" 1 'unknown opcode 0x99' err -- 0x99 0
check "SSec bit is reserved" 1 'reserved bits set: dw0 bit 10 (0x400); dw0 bit 10 is SSec' err -- 0x446 0
check "CS 3 is invalid" 1 'invalid CS value 3' err -- 0x3046 0
check "bad hex names the value" 2 "invalid dword 'zz'" err -- 0x46 zz
check "17 digits rejected" 2 "invalid dword '0x12345678901234567'" err -- 0x12345678901234567 0
check "one argument" 2 'expected 2 dwords' err -- 0x46
check "three arguments: the extra one is named" 2 "unexpected argument '9' after DW0 DW1" err -- 0x46 0 9
check "--help" 0 '^usage: hwtune decode' out -- --help
check "-h" 0 '^usage: hwtune decode' out -- -h

# A failed write of stdout is an error (exit 1, said once on stderr).
if [ -w /dev/full ]; then
	for args in "decode 4 1f" "decode --json 4 1f" "decode --help" "--help" "--version" \
		"probe --help" "cmdq --help"; do
		$HWTUNE $args > /dev/full 2> "$err"
		rc=$?
		tap_ok "$args >/dev/full: exit 1, 'write error'" \
			eval '[ "$rc" -eq 1 ] && grep -q "^hwtune: write error: " "$err"'
	done
else
	tap_skip "writes to /dev/full" "no writable /dev/full"
fi

tap_end
