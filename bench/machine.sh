#!/bin/sh
# SPDX-License-Identifier: MIT
# The machine facts every benchmark result carries, as one JSON object on
# one line:  sh bench/machine.sh [FLOOR_C2CLAT_NS FLOOR_MEDIAN_NS]
# (the floor of the moment, measured by the caller with bench_sync).
# Reads /proc and /sys only; every field that cannot be read is "".
c2c=${1:-0} med=${2:-0}

esc() { printf '%s' "$1" | tr -d '\n\r\t' | sed 's/\\/\\\\/g; s/"/\\"/g'; }
field() { sed -n "s/^$1[[:space:]]*: *//p" /proc/cpuinfo 2>/dev/null | head -n 1; }

model=$(field 'model name')
[ -n "$model" ] || model=$(field 'uarch')
[ -n "$model" ] || { i=$(field 'CPU implementer'); p=$(field 'CPU part'); [ -n "$i$p" ] && model="implementer $i part $p"; }
[ -n "$model" ] || model=$(field 'isa')
online=$(cat /sys/devices/system/cpu/online 2>/dev/null)
allowed=$(nproc 2>/dev/null)
# SMT: the sibling lists of every CPU, distinct, and how many have >1
sib=$(cat /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list 2>/dev/null | sort -u | tr '\n' ' ')
cores=$(printf '%s\n' $sib | grep -c .)
smt_cpus=$(printf '%s\n' $sib | grep -c '[,-]')
smt_active=$(cat /sys/devices/system/cpu/smt/active 2>/dev/null)
hv_flag=false
grep -qw hypervisor /proc/cpuinfo 2>/dev/null && hv_flag=true
hv_type=$(cat /sys/hypervisor/type 2>/dev/null)
virt=
command -v systemd-detect-virt >/dev/null 2>&1 && virt=$(systemd-detect-virt 2>/dev/null)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

printf '{"host": "%s", "date_utc": "%s", "cpu_model": "%s", "arch": "%s", "cpus_online": "%s", ' \
	"$(esc "$(hostname 2>/dev/null)")" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(esc "$model")" \
	"$(uname -m)" "$(esc "$online")"
printf '"cpus_allowed": %s, "cores": %s, "smt_sibling_groups": "%s", "smt_cores_with_siblings": %s, ' \
	"${allowed:-0}" "${cores:-0}" "$(esc "${sib% }")" "${smt_cpus:-0}"
printf '"smt_active": "%s", "kernel": "%s", "hypervisor_flag": %s, "sys_hypervisor_type": "%s", ' \
	"$(esc "$smt_active")" "$(esc "$(uname -sr)")" "$hv_flag" "$(esc "$hv_type")"
printf '"systemd_detect_virt": "%s", "loadavg": "%s", "floor_c2clat_min_rtt_ns": %s, "floor_median_rtt_ns": %s}\n' \
	"$(esc "$virt")" "$(esc "$load")" "$c2c" "$med"
