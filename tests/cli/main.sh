#!/bin/sh
# SPDX-License-Identifier: MIT
# The main job's report: --json (every key of docs/json.md present, every key
# documented), the kernel's settings from fake /sys and /proc trees
# (tests/data/kernel/, through HWTUNE_ROOT), grouped and --per-cpu lines,
# --format=prom's syntax, the advice under HWTUNE_DISABLE_MSIPOLLING=1, the
# warning under 5 rounds, no progress off a terminal (TAP).  Never a speed.
. "$(dirname "$0")/../tap.sh"

XDG_CACHE_HOME=$tap_dir/cache
export XDG_CACHE_HOME
unset HWTUNE_UNALIGNED_SCALAR_SPEED HWTUNE_UNALIGNED_VECTOR_SPEED HWTUNE_DISABLE_MSIPOLLING HWTUNE_ROOT
# A private runtime folder: never the machine's /run/hwtune system file.
HWTUNE_RUNTIME_DIR=$tap_dir/run
export HWTUNE_RUNTIME_DIR

data=$(cd "$(dirname "$0")/../data/kernel" && pwd)
doc=$(dirname "$0")/../../docs/json.md
status_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -q -F -e "$1" "$out"; }
err_has() { grep -q -F -e "$1" "$err"; }
ok_has() { status_is 0 && for p in "$@"; do out_has "$p" || return 1; done; }
save() { cp "$out" "$tap_dir/$1"; }
have_py=no
command -v python3 >/dev/null 2>&1 && have_py=yes

# keys_match FILE PREFIX...: the documented paths under PREFIX are in FILE's
# JSON, and FILE's keys under PREFIX are documented (a null object's members
# count as present: docs/json.md's rule).
keys_match() {
	python3 - "$doc" "$@" <<'EOF'
import json, re, sys
doc, path, prefixes = sys.argv[1], sys.argv[2], sys.argv[3:]
documented = set(re.findall(r'^\| `([^`]+)` \|', open(doc).read(), re.M))
def under(p):
    return any(p == q or p.startswith(q + ".") for q in prefixes)
documented = {p for p in documented if under(p)}
seen = set()
def walk(v, p):
    if isinstance(v, dict):
        for k, x in v.items():
            q = p + "." + k if p else k
            seen.add(q)
            walk(x, q)
    elif isinstance(v, list):
        for x in v:
            walk(x, p + "[]")
root = json.load(open(path))
walk(root, "")
seen = {p for p in seen if under(p)}
def nulled(p):   # some ancestor is null (or an empty array): its members go with it
    parts = p.replace("[]", ".[]").split(".")
    v = root
    for part in parts[:-1]:
        if v is None:
            return True
        if part == "[]":
            if not v:
                return True
            v = v[0]
        else:
            if part not in v:
                return False
            v = v[part]
    return v is None
missing = sorted(p for p in documented - seen if not nulled(p))
undocumented = sorted(seen - documented)
for p in missing:
    print("# documented but missing:", p)
for p in undocumented:
    print("# in the output but not documented:", p)
sys.exit(1 if missing or undocumented else 0)
EOF
}

json_is() { # FILE PYTHON-EXPRESSION over d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

# --- hwtune --json --------------------------------------------------------------------
tap_run --json
save main.json
tap_ok "--json exits 0" status_is 0
tap_ok "--json: nothing on stderr off a terminal (no progress)" test ! -s "$err"
if [ "$have_py" = yes ]; then
	tap_ok "--json is one JSON object with the six members" \
		json_is "$out" 'list(d) == ["version", "machine", "probe", "cmdq", "kernel", "recommendations"]'
	tap_ok "--json: every documented key present, every key documented" \
		keys_match "$tap_dir/main.json" version machine probe cmdq kernel recommendations
	tap_ok "--json: probe lists every CPU, cmdq measured both modes" \
		json_is "$out" 'len(d["probe"]["cpus"]) >= 1 and [r["poll"] for r in d["cmdq"]["results"]] == ["msi", "sev"]'
	tap_ok "--json: version is hwt_version, as --version prints it" \
		sh -c '[ "hwtune $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"version\"])" "$0")" = "$($1 --version)" ]' "$out" "$HWTUNE"
	tap_run probe --json
	save probe.json
	tap_ok "probe --json: version beside probe; keys documented" \
		eval 'json_is "$tap_dir/probe.json" "sorted(d) == [\"probe\", \"version\"]" && keys_match "$tap_dir/probe.json" probe version'
	tap_run cmdq --syncs 200 --poll sev --json
	save sev.json
	tap_ok "cmdq --poll sev --json: comparison and auto are null, not absent" \
		json_is "$tap_dir/sev.json" 'd["cmdq"]["comparison"] is None and d["cmdq"]["auto"] is None and "version" in d'
	tap_ok "cmdq --poll sev --json: keys documented" keys_match "$tap_dir/sev.json" cmdq version
	tap_run cmdq --syncs 200 --auto --json
	save auto.json
	tap_ok "cmdq --auto --json: keys documented (auto's members too)" \
		keys_match "$tap_dir/auto.json" cmdq version
else
	for t in "six members" "documented keys" "probe/cmdq" "version" "probe --json keys" \
		"comparison null" "cmdq keys" "auto keys"; do
		tap_skip "--json: $t" "python3 not found"
	done
fi

# --- the kernel's settings from fake trees --------------------------------------------
kj() { # CASE EXPR: hwtune --json under tests/data/kernel/CASE, EXPR over d["kernel"] as k
	tap_run_env HWTUNE_ROOT="$data/$1" --json
	status_is 0 && json_is "$out" "(lambda k: $2)(d['kernel'])"
}
if [ "$have_py" = yes ]; then
	tap_ok "fake tree smmu-y: module Y, SMMUv3 by name, every cmdline word, log lines" \
		kj smmu-y 'k["disable_msipolling"]["value"] is True and k["disable_msipolling"]["note"] is None
			and k["smmuv3"]["present"] is True and k["smmuv3"]["devices"] == ["smmu3.0x0000000009050000"]
			and k["cmdline"]["disable_msipolling"] == "1" and k["cmdline"]["unaligned_scalar_speed"] == "fast"
			and k["cmdline"]["unaligned_vector_speed"] == "slow" and len(k["log"]["lines"]) == 2
			and "unaligned accesses are fast" in k["log"]["lines"][0]'
	tap_ok "fake tree smmu-y: the machine's kernel release and CPU model come from it" \
		json_is "$out" 'd["machine"]["kernel"] == "6.12.0-test" and d["machine"]["cpu_models"] == ["implementer 0x41 part 0xd0c"]'
	tap_ok "fake tree smmu-n: module N, SMMUv3 by its driver link, no cmdline words" \
		kj smmu-n 'k["disable_msipolling"]["value"] is False and k["smmuv3"]["present"] is True
			and k["smmuv3"]["devices"] == ["iommu-a"] and k["cmdline"]["read"] is True
			and k["cmdline"]["disable_msipolling"] is None and k["cmdline"]["unaligned_scalar_speed"] is None
			and k["log"]["lines"] == []'
	tap_ok "fake tree none: no module (null, with the reason), no SMMUv3 beside dmar0" \
		kj none 'k["disable_msipolling"]["value"] is None and k["disable_msipolling"]["module_loaded"] is False
			and "not loaded" in k["disable_msipolling"]["note"] and k["smmuv3"]["present"] is False
			and k["smmuv3"]["iommus"] == ["dmar0"]'
	tap_ok "fake tree param-missing: driver without the parameter; no /sys/class/iommu" \
		kj param-missing 'k["disable_msipolling"]["module_loaded"] is True
			and "no disable_msipolling parameter" in k["disable_msipolling"]["note"]
			and k["smmuv3"]["present"] is False and k["smmuv3"]["note"] is None'
	tap_ok "fake tree unreadable: every part says not available here, naming the path" \
		kj unreadable 'all(k[p]["note"].startswith("not available here: ") for p in ("disable_msipolling", "smmuv3", "cmdline", "log"))
			and "/proc/cmdline" in k["cmdline"]["note"] and "/dev/kmsg" in k["log"]["note"]
			and k["smmuv3"]["present"] is None and k["cmdline"]["read"] is False'
	tap_ok "fake tree unreadable: keys still all documented" keys_match "$out" kernel
else
	tap_skip "fake trees (JSON)" "python3 not found"
fi
# --- the machine section: the misalignsse flag, the hypervisor's name -----------------
fake_cpuinfo() { # DIR FLAGS: a fake tree whose one CPU has these flags
	mkdir -p "$1/proc"
	printf 'processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: Fake EPYC\nflags\t\t: %s\n\n' \
		"$2" > "$1/proc/cpuinfo"
}
fake_cpuinfo "$tap_dir/sse-y" "fpu sse2 hypervisor misalignsse avx2"
fake_cpuinfo "$tap_dir/sse-n" "fpu sse2 hypervisor avx2"
if [ "$have_py" = yes ]; then
	tap_run_env HWTUNE_ROOT="$tap_dir/sse-y" --json --no-cache
	tap_ok "machine: the misalignsse flag of cpuinfo (true), documented" \
		eval 'json_is "$out" "d[\"machine\"][\"misalignsse\"] is True" && keys_match "$out" machine'
	tap_ok "machine: under a fake tree the hypervisor comes from it, not this CPU's CPUID" \
		json_is "$out" 'd["machine"]["hypervisor"] == "yes (cpuinfo flag; type unknown)"'
	tap_run_env HWTUNE_ROOT="$tap_dir/sse-n" --json --no-cache
	tap_ok "machine: no misalignsse flag: false" json_is "$out" 'd["machine"]["misalignsse"] is False'
	tap_run_env HWTUNE_ROOT="$data/smmu-y" --json --no-cache
	tap_ok "machine: no x86 flags line (arm64 tree): misalignsse null" \
		json_is "$out" 'd["machine"]["misalignsse"] is None'
else
	tap_skip "machine: misalignsse (JSON)" "python3 not found"
fi
tap_run_env HWTUNE_ROOT="$tap_dir/sse-y" --no-cache
tap_ok "machine, text: the misalignsse flag is shown" \
	out_has "CPU flag misalignsse: misaligned SSE allowed"
tap_run_env HWTUNE_ROOT="$tap_dir/sse-n" --no-cache
tap_ok "machine, text: no misalignsse line without the flag" eval '! out_has "misalignsse"'
case "$HWTUNE" in *qemu*) hv_native=no ;; *) hv_native=yes ;; esac
if [ "$hv_native" = yes ] && [ "$(uname -m)" = x86_64 ] && grep -qw hypervisor /proc/cpuinfo; then
	tap_run --no-cache
	tap_ok "machine, text: the hypervisor is named from CPUID (not 'type unknown')" \
		eval 'out_has ", hypervisor: " && ! out_has "type unknown"'
else
	tap_skip "machine, text: the hypervisor is named from CPUID (not 'type unknown')" \
		"needs x86_64 natively under a hypervisor"
fi

tap_run_env HWTUNE_ROOT="$data/smmu-y"
tap_ok "report: the kernel's section, SMMUv3 present, how to test the switch" \
	ok_has "== the kernel's settings" "disable_msipolling (arm_smmu_v3 parameter): Y" \
	"SMMUv3: present (smmu3.0x0000000009050000)" "boot with arm_smmu_v3.disable_msipolling=1" \
	"fio on NVMe" "not a hardware SMMU" "kernel log: cpu0: Ratio of byte access time"
tap_run_env HWTUNE_ROOT="$data/none"
tap_ok "report without an SMMUv3: says so, no how-to, still the plain note" \
	eval 'ok_has "SMMUv3: none (IOMMUs: dmar0)" "not available here: the arm_smmu_v3 driver is not loaded" "not a hardware SMMU" && ! out_has "boot with arm_smmu_v3"'
tap_run_env HWTUNE_ROOT="$data/unreadable"
tap_ok "report with unreadable files: exit 0, each one named" \
	ok_has "not available here: /proc/cmdline: Is a directory" "not available here: /dev/kmsg: Is a directory"

# --- grouped lines and --per-cpu --------------------------------------------------------
ncpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' |
	awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }')
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED=fast --per-cpu
tap_ok "--per-cpu: one line per CPU ($ncpu)" \
	eval 'status_is 0 && [ "$(grep -c "^cpu[0-9]*: " "$out")" -eq "$ncpu" ]'
# Agreeing CPUs: both verdicts set (a scalar override alone still probes the
# vector units, whose verdicts may differ per CPU under an emulator).
export HWTUNE_UNALIGNED_VECTOR_SPEED=fast
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED=fast
unset HWTUNE_UNALIGNED_VECTOR_SPEED
if [ "$ncpu" -gt 1 ]; then
	tap_ok "default: CPUs that agree share one line (cpus LIST: ...)" \
		eval 'status_is 0 && [ "$(grep -c "^cpus [0-9]" "$out")" -eq 1 ] && ! grep -q "^cpu[0-9]*: " "$out"'
else
	tap_skip "default: CPUs that agree share one line" "one CPU allowed"
fi
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED=fast probe --json
tap_ok "probe --json stays per CPU when grouped text would not" \
	eval 'status_is 0 && [ "$(grep -c "{\"cpu\": " "$out")" -eq "$ncpu" ]'

# --- --format=prom -------------------------------------------------------------------
# prom_ok FILE: every sample is `name{labels} value` or `name value`, every
# name has # HELP and # TYPE before its first sample, nothing else.
prom_ok() {
	awk '
	/^# HELP / { help[$3] = 1; next }
	/^# TYPE / { if ($4 != "gauge" && $4 != "counter") { print "# bad type: " $0; bad = 1 } type[$3] = 1; next }
	/^#/ { print "# stray comment: " $0; bad = 1; next }
	{
		if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9][0-9.e+-]*$/) {
			print "# bad sample: " $0; bad = 1; next
		}
		name = $0; sub(/[{ ].*/, "", name)
		if (!help[name] || !type[name]) { print "# no HELP/TYPE before: " name; bad = 1 }
		n++
	}
	END { if (!n) { print "# no samples"; bad = 1 } exit bad }' "$1"
}
tap_run --format=prom
save main.prom
tap_ok "--format=prom exits 0" status_is 0
tap_ok "--format=prom parses (samples, HELP and TYPE for each)" prom_ok "$tap_dir/main.prom"
tap_ok "--format=prom has the documented gauges" \
	ok_has 'hwtune_info{version="' 'hwtune_misaligned_speed{cpu="' 'hwtune_misaligned_ratio{cpu="' \
	'hwtune_cmdq_sync_ns{poll="msi",quantile="0.5"} ' 'hwtune_cmdq_model_verdict ' \
	'hwtune_cmdq_queues 1' 'hwtune_cmdq_insert_path_info{path="shared",reason="'
tap_run probe --format=prom
save probe.prom
tap_ok "probe --format=prom parses" eval 'status_is 0 && prom_ok "$tap_dir/probe.prom" && ! out_has hwtune_cmdq_'
tap_run_env HWTUNE_ROOT="$data/smmu-y" --format=prom
tap_ok "--format=prom: the kernel's settings as gauges" \
	ok_has 'hwtune_kernel_smmuv3_present 1' 'hwtune_kernel_disable_msipolling 1'
tap_run --format=xml
tap_ok "--format=xml: exit 2 naming it" eval 'status_is 2 && err_has "--format" && err_has "'"'xml'"'"'

# --- advice and warnings ---------------------------------------------------------------
tap_run_env HWTUNE_DISABLE_MSIPOLLING=1
tap_ok "HWTUNE_DISABLE_MSIPOLLING=1: the main job says unset it (it takes no --poll)" \
	eval 'ok_has "software model: only CONS polling measured" "unset HWTUNE_DISABLE_MSIPOLLING to compare" &&
	      ! grep -q "; use --poll both" "$out"'
tap_run cmdq --syncs 20 --segment 10 --json
if [ "$have_py" = yes ]; then
	tap_ok "cmdq with 2 rounds: the recommendation carries a warning" \
		json_is "$out" 'd["cmdq"]["rounds"] == 2 and "only 2 rounds" in d["cmdq"]["recommendation"]["warning"]'
	tap_run cmdq --syncs 200 --json
	tap_ok "cmdq with 10 rounds: warning null" \
		json_is "$out" 'd["cmdq"]["rounds"] >= 5 and d["cmdq"]["recommendation"]["warning"] is None'
else
	tap_skip "cmdq rounds warning (JSON)" "python3 not found"
fi
tap_run cmdq --syncs 20 --segment 10
tap_ok "cmdq with 2 rounds: human warning line" ok_has "warning: only 2 rounds measured (under 5)"

# --- progress: on a terminal only, never on stdout --------------------------------------
# script(1) gives the tool a terminal; stdout goes to a file.  The device's
# extra cost (busy-waited) makes the run last over the second after which
# progress shows: 1200 timed syncs x 1 ms >= 1.2 s, warm-up aside.
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "timeout -k 5 $TAP_TIMEOUT $HWTUNE cmdq --syncs 1200 --segment 30 --poll sev --sev-cost-ns 1000000 --json > $tap_dir/tty.json" \
		"$tap_dir/tty.log" >/dev/null 2>&1
	tap_ok "progress: on a terminal a long cmdq run shows its rounds on stderr" \
		grep -q "hwtune: cmdq round [0-9]*/40" "$tap_dir/tty.log"
	tap_ok "progress: never in the JSON on stdout" \
		eval '! grep -q "cmdq round" "$tap_dir/tty.json" && grep -q "^{\"cmdq\": " "$tap_dir/tty.json"'
else
	tap_skip "progress on a terminal" "script(1) not found"
	tap_skip "progress never on stdout" "script(1) not found"
fi

tap_run --json --help
tap_ok "the main job's --help names --json, --format (prom), --per-cpu" ok_has "--json" "--format=FORMAT" "prom" "--per-cpu"

tap_end
