#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-vm: hwtune on a real kernel.  tests/vm/run.sh COUNTS AARCH64_BUILD
# Boots Debian's arm64 kernel under qemu-system-aarch64 with QEMU's SMMUv3
# twice (without, then with arm_smmu_v3.disable_msipolling=1) from an
# initramfs of busybox, the static aarch64 hwtune and the aarch64 test
# programs; tests/vm/init.sh runs the main job, --json and the suites (unit
# on the first boot, stress on the second) and tests/vm/check.py checks the
# kernel section against the kernel itself.  Prints TAP, appends "passed
# failed skipped" to COUNTS.  A boot that hangs (VM_TIMEOUT), panics or
# never reaches the end fails, its console shown.
counts=$1 build=$2
here=$(dirname "$0")
out=build/vm
: "${VM_TIMEOUT:=600}"          # seconds per boot, boot to power-off (a hang's bound)
: "${VM_TEST_TIMEOUT_SCALE:=8}" # TCG: the harness's time limits scaled
: "${VM_STRESS_MS:=100}"        # each stress_api scenario's run time
: "${VM_JOB_S:=240}"            # bound on one hwtune run inside

skip() {
	echo "# SKIP suite $1: $2${3:+ $3}"
	echo "0 0 1" >> "$counts"
}
skip riscv64-vm "Debian 12 ships no riscv64 kernel package (no linux-image-riscv64 in bookworm)"

# make deps unpacks Debian's arm64 kernel and busybox here (never installed)
pkgs=${VM_PKG_DIR:-build/vm-pkgs}/root
kernel=$(ls "$pkgs"/boot/vmlinuz-*-arm64 2>/dev/null | sort -V | tail -n 1)
busybox=${VM_BUSYBOX:-$pkgs/bin/busybox}
# the busybox must be aarch64 (ELF e_machine 183 at offset 18)
bb_arch=$(od -An -tu2 -j18 -N2 "$busybox" 2>/dev/null | tr -d ' ')
missing=
command -v qemu-system-aarch64 >/dev/null 2>&1 || missing="$missing qemu-system-arm"
command -v cpio >/dev/null 2>&1 || missing="$missing cpio"
[ -n "$kernel" ] || missing="$missing linux-image-arm64:arm64"
[ "$bb_arch" = 183 ] || missing="$missing busybox-static:arm64"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
if [ -n "$missing" ]; then
	skip aarch64-vm "needs qemu-system-arm cpio python3 and the unpacked linux-image-arm64:arm64 busybox-static:arm64" \
		"(make deps; missing:$missing)"
	exit 0
fi

# --- the initramfs -------------------------------------------------------------
rm -rf "$out/root" && mkdir -p "$out/root/bin" "$out/root/hwt/tests" "$out/root/proc" \
	"$out/root/sys" "$out/root/dev" "$out/root/tmp" || exit 1
cp "$busybox" "$out/root/bin/busybox" && ln -s busybox "$out/root/bin/sh" &&
cp "$here/init.sh" "$out/root/init" && chmod 755 "$out/root/init" &&
cp tests/run.sh "$out/root/hwt/run.sh" &&
cp "$build/hwtune" "$out/root/hwt/hwtune" &&
cp "$build"/tests/* "$out/root/hwt/tests/" &&
cp -R tests/data "$out/root/hwt/tests/data" || exit 1 # the fake trees some unit tests read
(cd "$out/root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/initrd.gz" || exit 1

# --- two boots -------------------------------------------------------------------
# unknown NAME=VALUE words of the kernel command line reach init's environment
env="HWT_TEST_TIMEOUT_SCALE=$VM_TEST_TIMEOUT_SCALE HWT_STRESS_MS=$VM_STRESS_MS HWT_VM_JOB_S=$VM_JOB_S"
boot() { # NAME SUITES EXTRA-KERNEL-WORDS
	t0=$(date +%s)
	timeout -k 5 "$VM_TIMEOUT" qemu-system-aarch64 -M virt,iommu=smmuv3 -cpu cortex-a57 -smp 2 \
		-m 1024 -nographic -no-reboot -nic none -kernel "$kernel" -initrd "$out/initrd.gz" \
		-append "console=ttyAMA0 panic=-1 quiet loglevel=1 hwtvm=$2 $3 $env" \
		< /dev/null > "$out/$1.log" 2>&1
	echo "$? $(( $(date +%s) - t0 ))" > "$out/$1.rc"
}
# One after the other: two TCG guests on two cores would only slow both.
boot boot-n unit ""
boot boot-y stress "arm_smmu_v3.disable_msipolling=1"
[ -n "$VM_NOCHECK" ] || python3 "$here/check.py" "$counts" "$kernel" "$out/boot-n" "$out/boot-y"
