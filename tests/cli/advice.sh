#!/bin/sh
# SPDX-License-Identifier: MIT
# The main job's misaligned recommendation follows the report's own split
# penalties: a cache whose split ratios are set (checksum recomputed) gives
# known numbers, and the advice must name the worst split and what to align
# from 4x up (PROBE_SPLIT_LARGE_X100), and stay as it was below (TAP).
. "$(dirname "$0")/../tap.sh"

tap_isolate

# set_split LL LS PL PS: every cached CPU fast, with these split ratios (x100)
set_split() {
	python3 - "$cache" "$@" <<'EOF'
import sys
path, ll, ls, pl, ps = sys.argv[1:]
lines = open(path).read().split("\n")
body = []
for line in lines:
    if line.startswith("end "):
        break
    t = line.split(" ")
    if t[0] == "cpu":
        t[2] = "3"                       # fast
        t[-8:-4] = [ll, ls, pl, ps]      # line_load line_store page_load page_store
        line = " ".join(t)
    body.append(line)
text = "\n".join(body) + "\n"
h = 0xcbf29ce484222325
for c in text.encode():
    h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
n = sum(1 for x in body if x.startswith("cpu "))
open(path, "w").write(text + "end %d %016x\n" % (n, h))
EOF
}
status_is() { [ "$rc" -eq "$1" ]; }
jq_py() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); '"$1" "$out"; }
reco() { jq_py 'print(d["recommendations"]["misaligned"]["text"])'; }
text_has() { reco | grep -q -F -e "$1"; }
cached() { jq_py 'sys.exit(d["probe"]["source"] != "cache")'; }

# Every CPU cached: an unknown verdict (a starved probe, under an emulator)
# is not, and the next run probes that CPU again; up to 3 runs.
all_cached() {
	cache=$(ls "$XDG_CACHE_HOME"/hwtune/misaligned-*.cache 2>/dev/null | head -n 1)
	[ -n "$cache" ] && [ "$(grep -c '^cpu ' "$cache")" -eq "$(jq_py 'print(len(d["probe"]["cpus"]))')" ]
}
if ! command -v python3 >/dev/null 2>&1; then
	tap_skip "split advice" "no python3"
	tap_end
	exit $?
fi
for try in 1 2 3; do
	tap_run probe --json
	all_cached && break
done
if ! all_cached; then
	tap_skip "split advice" "a CPU still unknown after 3 probes (unknown verdicts are not cached)"
	tap_end
	exit $?
fi

set_split 150 150 150 150
tap_run --json
tap_ok "small splits (1.5x): read from the cache" eval 'status_is 0 && cached'
tap_ok "small splits: unaligned word loops without aligning first" \
	eval 'text_has "may use unaligned word loads and stores without aligning first" &&
	      ! text_has "crosses"'

set_split 150 399 150 399
tap_run --json
tap_ok "3.99x: under the threshold, no split advice" eval 'status_is 0 && cached && ! text_has "crosses"'

set_split 160 380 160 4800
tap_run --json
tap_ok "page store 48x: named, with the destination to align" \
	eval 'status_is 0 && cached && text_has "but a word store that crosses a page costs 48x an aligned one" &&
	      text_has "align the destination before word loops" &&
	      text_has "keep stores from crossing pages" && ! text_has "without aligning first"'
tap_run
tap_ok "page store 48x: the text report says it too (both recommendation lines)" \
	eval 'status_is 0 && [ "$(grep -c "store that crosses a page costs 48x" "$out")" -eq 2 ]'

set_split 150 400 150 150
tap_run --json
tap_ok "line store 4.0x: at the threshold, the destination (no page clause)" \
	eval 'text_has "a word store that crosses a cache line costs 4.0x" &&
	      text_has "(unaligned loads are fine)" && ! text_has "crossing pages"'

set_split 500 150 150 150
tap_run --json
tap_ok "line load 5x: the source to align" \
	eval 'text_has "a word load that crosses a cache line costs 5.0x" && text_has "align the source"'

set_split 600 500 150 4400
tap_run --json
tap_ok "loads and stores split badly: both pointers, the worst named" \
	eval 'text_has "store that crosses a page costs 44x" && text_has "and the source too"'

tap_end
