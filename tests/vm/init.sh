#!/bin/sh
# SPDX-License-Identifier: MIT
# PID 1 of the check-vm initramfs (busybox sh, on Debian's arm64 kernel
# under qemu-system-aarch64 with QEMU's SMMUv3).  It only runs things and
# prints them between @@HWT markers on the console; tests/vm/check.py on the
# host judges them.  hwtvm=unit or hwtvm=stress on the kernel command line
# picks the suites of this boot.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
export HOME=/tmp TMPDIR=/tmp XDG_CACHE_HOME=/tmp/cache HWTUNE_RUNTIME_DIR=/tmp/run
suites=$(sed -n 's/.*hwtvm=\([a-z]*\).*/\1/p' /proc/cmdline)
cd /hwt || poweroff -f

echo "@@HWT-BEGIN facts"
echo "param=$(cat /sys/module/arm_smmu_v3/parameters/disable_msipolling 2>&1)"
echo "cmdline=$(cat /proc/cmdline)"
for d in /sys/class/iommu/*; do
	[ -e "$d" ] && echo "iommu=$(basename "$d") $(basename "$(readlink "$d/device")")"
done
# dmesg reads the log through syslog(2): a second source beside hwtune's /dev/kmsg
dmesg | sed -n 's/^\[[ 0-9.]*\] //; s/^\(arm-smmu-v3 .*(features 0x[0-9a-f]*)\).*/features=\1/p'
echo "cpus=$(grep -c ^processor /proc/cpuinfo)"
echo "@@HWT-END facts"

t0=$(cut -d. -f1 /proc/uptime)
# stderr into files and pipes, not the console: no progress lines
echo "@@HWT-BEGIN json"
timeout -k 5 "${HWT_VM_JOB_S:-240}" ./hwtune --json 2> /tmp/json.err
echo "@@HWT-RC json $?"
echo "@@HWT-END json"
sed 's/^/stderr: /' /tmp/json.err
if [ "$suites" = unit ]; then
	echo "@@HWT-BEGIN main"
	{ timeout -k 5 "${HWT_VM_JOB_S:-240}" ./hwtune 2>&1; echo "@@HWT-RC main $?"; } | cat
	echo "@@HWT-END main"
fi
echo "@@HWT-TIME jobs $(( $(cut -d. -f1 /proc/uptime) - t0 ))"

t0=$(cut -d. -f1 /proc/uptime)
echo "@@HWT-BEGIN suites"
HWT_TEST_ONLY=$suites sh ./run.sh vm . /tmp/counts
echo "@@HWT-END suites"
echo "@@HWT-TIME suites $(( $(cut -d. -f1 /proc/uptime) - t0 ))"
echo "@@HWT-DONE"
poweroff -f
