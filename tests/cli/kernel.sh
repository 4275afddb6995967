#!/bin/sh
# SPDX-License-Identifier: MIT
# The CMD_SYNC completion the kernel uses per SMMU (its features line in the
# kernel log), from fake trees (tests/data/kernel/, through HWTUNE_ROOT):
# several SMMUs with and without MSI, no log access, no SMMUv3; the two
# voices of the recommendation (hwtune's model, this machine's SMMU); and a
# cmdq verdict that never contradicts its own table (TAP).
. "$(dirname "$0")/../tap.sh"

XDG_CACHE_HOME=$tap_dir/cache
export XDG_CACHE_HOME
unset HWTUNE_DISABLE_MSIPOLLING HWTUNE_ROOT
HWTUNE_RUNTIME_DIR=$tap_dir/run
export HWTUNE_RUNTIME_DIR
# the probe is not what this file tests: both verdicts given, nothing probed
HWTUNE_UNALIGNED_SCALAR_SPEED=fast
HWTUNE_UNALIGNED_VECTOR_SPEED=fast
export HWTUNE_UNALIGNED_SCALAR_SPEED HWTUNE_UNALIGNED_VECTOR_SPEED

data=$(cd "$(dirname "$0")/../data/kernel" && pwd)
status_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -q -F -e "$1" "$out"; }
ok_has() { status_is 0 && for p in "$@"; do out_has "$p" || return 1; done; }
json_is() { # FILE PYTHON-EXPRESSION over d
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
# kj CASE EXPR: the main job's --json under CASE; EXPR over
# k = d["kernel"]["smmuv3"], r = d["recommendations"]
kj() {
	tap_run_env HWTUNE_ROOT="$data/$1" --json
	status_is 0 && json_is "$out" "(lambda k, r: $2)(d['kernel']['smmuv3'], d['recommendations'])"
}
have_py=no
command -v python3 >/dev/null 2>&1 && have_py=yes

if [ "$have_py" = yes ]; then
	tap_ok "smmu-multi: one entry per SMMU, matched to /sys/class/iommu by its device link" \
		kj smmu-multi '[s["name"] for s in k["smmus"]]
			== ["a000000.smmuv3", "9050000.smmuv3", "b000000.smmuv3", "c000000.smmuv3"]
			and [s["iommu"] for s in k["smmus"]] == ["smmu3.0x000000000a000000",
				"smmu3.0x0000000009050000", "smmu3.0x000000000b000000", "smmu3.0x000000000c000000"]'
	tap_ok "smmu-multi: features word and bits (a re-probe line wins), completion per SMMU" \
		json_is "$out" '[(s["features"], s["msi"], s["sev"], s["coherent"], s["completion"])
			for s in d["kernel"]["smmuv3"]["smmus"]] == [
			("0x000087c5", True, True, True, "msi"), ("0x00008305", False, False, True, "cons"),
			("0x000006c5", True, True, False, "cons"), (None, None, None, None, None)]'
	tap_ok "smmu-multi: the reasons (no MSI, not coherent, MSI polling, no features line)" \
		json_is "$out" '(lambda s: s[0].startswith("MSI polling (MSI, coherent, disable_msipolling=N")
			and "does not advertise MSI (features 0x00008305); disable_msipolling changes nothing here"
				in s[1] and "no coherent accesses" in s[2]
			and s[3].startswith("unknown: no features line"))([s["reason"] for s in d["kernel"]["smmuv3"]["smmus"]])'
	tap_ok "smmu-multi: the kernel's switch applies (an SMMU with MSI and coherency), how to measure it" \
		kj smmu-multi 'r["kernel_smmu"]["applies"] is True and "a000000.smmuv3" in r["kernel_smmu"]["text"]
			and "arm_smmu_v3.disable_msipolling=1" in r["kernel_smmu"]["text"]
			and "DMA-heavy" in r["kernel_smmu"]["text"]'
	tap_ok "smmu-nomsi (QEMU's SMMUv3): CONS whatever the switch; it changes nothing here" \
		kj smmu-nomsi 'k["smmus"][0]["completion"] == "cons" and k["smmus"][0]["msi"] is False
			and r["kernel_smmu"]["applies"] is False and "changes nothing here" in r["kernel_smmu"]["text"]'
	tap_ok "smmu-msi-y: MSI and coherent, disable_msipolling=Y: CONS polling, saying why" \
		kj smmu-msi-y 'k["smmus"][0]["completion"] == "cons"
			and k["smmus"][0]["reason"].startswith("CONS polling (disable_msipolling=Y")
			and r["kernel_smmu"]["applies"] is True'
	tap_ok "smmu-nolog: no log access: completion null, unknown naming /dev/kmsg; applies null" \
		kj smmu-nolog 'k["smmus"][0]["completion"] is None and k["smmus"][0]["features"] is None
			and k["smmus"][0]["reason"] == "unknown: the kernel log is not readable (/dev/kmsg: Is a directory)"
			and r["kernel_smmu"]["applies"] is None and d["kernel"]["log"]["source"] is None'
	tap_ok "none: no SMMUv3: empty list, the kernel switch does not apply" \
		kj none 'k["smmus"] == [] and r["kernel_smmu"]["applies"] is False
			and r["kernel_smmu"]["text"].startswith("no SMMUv3 here") and d["kernel"]["log"]["source"] == "/dev/kmsg"'
else
	tap_skip "fake trees (JSON)" "python3 not found"
fi

# --- text and Prometheus -------------------------------------------------------------
tap_run_env HWTUNE_ROOT="$data/smmu-nomsi"
tap_ok "text, smmu-nomsi: per-SMMU line, the machine's voice, no how-to for a switch that cannot matter" \
	eval 'ok_has "SMMUv3 9050000.smmuv3 (smmu3.0x0000000009050000): CONS polling: this SMMU does not" \
		"advertise MSI (features 0x00008305); disable_msipolling changes nothing here" \
		"CMD_SYNC completion, in hwtune'"'"'s software model: " \
		"CMD_SYNC completion, on this machine'"'"'s SMMU: no SMMUv3 here advertises MSI" &&
	      ! out_has "to test the kernel'"'"'s switch"'
tap_run_env HWTUNE_ROOT="$data/none"
tap_ok "text, none: says the kernel switch does not apply" \
	ok_has "on this machine's SMMU: no SMMUv3 here: the kernel's disable_msipolling does not apply"
tap_run_env HWTUNE_ROOT="$data/smmu-nolog"
tap_ok "text, smmu-nolog: unknown, and still how to test the switch" \
	ok_has "SMMUv3 smmu3.0x0000000009050000: unknown: the kernel log is not readable" \
	"(/dev/kmsg: Is a directory)" \
	"to test the kernel's switch" "its features are unknown"
tap_run_env HWTUNE_ROOT="$data/smmu-multi" --format=prom
tap_ok "prom, smmu-multi: features, completion per SMMU, the switch applies" \
	ok_has 'hwtune_kernel_smmuv3_feature{smmu="9050000.smmuv3",feature="msi"} 0' \
	'hwtune_kernel_smmuv3_feature{smmu="a000000.smmuv3",feature="coherent"} 1' \
	'hwtune_kernel_smmuv3_msi_polling{smmu="a000000.smmuv3"} 1' \
	'hwtune_kernel_smmuv3_msi_polling{smmu="b000000.smmuv3"} 0' \
	'hwtune_kernel_msipolling_switch_applies 1' 'hwtune_recommend_disable_msipolling ' \
	'hwtune_cmdq_model_verdict '
tap_run_env HWTUNE_ROOT="$data/none" --format=prom
tap_ok "prom, none: the switch does not apply, and no kernel parameter recommended" \
	eval 'ok_has "hwtune_kernel_msipolling_switch_applies 0" "hwtune_cmdq_model_verdict " &&
	      ! out_has hwtune_recommend_disable_msipolling'

# --- the model's verdict never contradicts its table -----------------------------------
# Three runs of the case that showed it (4 producer threads, batches of 32):
# a verdict for a mode needs the table's cmds/s to agree beyond 3 %, "none"
# needs them within 3 %, anything else is inconclusive with its spread.
verdict_ok() {
	python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["cmdq"]
cmp = c["comparison"]
cps = {r["poll"]: r["cmds_per_s"] for r in c["results"]}
t = cps["msi"] / cps["sev"]          # over 1: MSI faster in the table
side = 1 if t > 1.03 else -1 if t < 0.97 else 0
v = cmp.get("verdict", cmp["faster"])
ok = ((v == "msi" and side == 1) or (v == "sev" and side == -1) or (v == "none" and side == 0)
      or (v == "inconclusive" and cmp["faster"] == "none" and cmp["ratio_p10"] <= cmp["ratio_p90"]
          and "inconclusive" in c["recommendation"]["reason"]))
ok = ok and cmp["faster"] == (v if v in ("msi", "sev") else "none")
ok = ok and abs(cmp.get("ratio_all", t) - t) < 0.01
print("# table msi/sev cmds/s %.3f, verdict %s, ratios p10 %s p50 %s p90 %s all %s thirds %s" % (
    t, v, cmp.get("ratio_p10"), cmp.get("ratio_p50"), cmp.get("ratio_p90"), cmp.get("ratio_all"),
    cmp.get("ratio_thirds")))
sys.exit(0 if ok else 1)
PY
}
if [ "$have_py" = yes ]; then
	for i in 1 2 3; do
		tap_run cmdq --threads 4 --batch 32 --json
		cp "$out" "$tap_dir/v$i.json"
		tap_ok "cmdq --threads 4 --batch 32, run $i: the verdict agrees with the table's cmds/s" \
			eval 'status_is 0 && verdict_ok "$tap_dir/v$i.json"'
	done
else
	tap_skip "the verdict against the table" "python3 not found"
fi
# text_verdict_ok: the same rule on the text: the table's cmds/s column
# against the "faster (cmds/s):" line.
text_verdict_ok() {
	awk '
	/^  MSI polling / { msi = $(NF - 1) }
	/^  CONS polling / { sev = $(NF - 1) }
	/faster \(cmds\/s\): / { line = $0 }
	END {
		if (!msi || !sev || line == "") { print "# no table or no verdict line"; exit 1 }
		t = msi / sev; side = t > 1.03 ? 1 : t < 0.97 ? -1 : 0
		printf "# table MSI/CONS cmds/s %.3f: %s\n", t, line
		if (line ~ /: MSI polling, by/) exit side != 1
		if (line ~ /: CONS polling, by/) exit side != -1
		if (line ~ /: neither \(within 3%/) exit side != 0
		exit line !~ /: inconclusive: CONS\/MSI time per round [0-9.]+x to [0-9.]+x \(p10-p90\)/
	}' "$out"
}
tap_run cmdq --threads 4 --batch 32
tap_ok "cmdq text: the verdict line agrees with the table (or is inconclusive, with its spread)" \
	eval 'status_is 0 && text_verdict_ok'

tap_end
