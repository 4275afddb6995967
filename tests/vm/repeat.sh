#!/bin/sh
# SPDX-License-Identifier: MIT
# One aarch64 test program, run again and again on the arm64 VM's kernel (a
# hunt for a rare failure; not a stage of make check).
#   sh tests/vm/repeat.sh SECONDS PROG [ARGS...]
# e.g. sh tests/vm/repeat.sh 300 stress_rseq -v -t rseq_restart_storm
# PROG is build/aarch64/tests/PROG (make CROSS=aarch64-linux-gnu- ...).  The
# guest (the same kernel, machine and 2 CPUs as tests/vm/run.sh) runs it until
# SECONDS have passed and powers off; the boot is bounded by SECONDS + 300.
# HWT_* variables of the environment (HWT_STRESS_MS, ...) reach the program.
# The console is build/vm/repeat.log; a summary is printed.
secs=$1 prog=$2
shift 2
out=build/vm
pkgs=${VM_PKG_DIR:-build/vm-pkgs}/root
kernel=$(ls "$pkgs"/boot/vmlinuz-*-arm64 2>/dev/null | sort -V | tail -n 1)
busybox=${VM_BUSYBOX:-$pkgs/bin/busybox}
[ -n "$kernel" ] && [ -x build/aarch64/tests/"$prog" ] && [ -f "$busybox" ] ||
	{ echo "repeat.sh: needs $pkgs (make deps) and build/aarch64/tests/$prog" >&2; exit 2; }
root=$out/repeat-root
rm -rf "$root" && mkdir -p "$root/bin" "$root/hwt" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" || exit 1
cp "$busybox" "$root/bin/busybox" && ln -s busybox "$root/bin/sh" &&
cp build/aarch64/tests/"$prog" "$root/hwt/$prog" || exit 1
{
	echo '#!/bin/sh'
	echo '/bin/busybox --install -s /bin; export PATH=/bin'
	echo 'mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t tmpfs tmpfs /tmp'
	env | grep '^HWT_[A-Z0-9_]*=[A-Za-z0-9_.,:-]*$' | sed 's/^/export /'
	echo "echo \"@@HWT-KERNEL \$(uname -r) cpus \$(grep -c ^processor /proc/cpuinfo)\""
	echo "end=\$(( \$(cut -d. -f1 /proc/uptime) + $secs )); i=0; cd /hwt"
	echo 'while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do'
	echo "	i=\$((i + 1)); echo \"@@HWT-RUN \$i\"; ./$prog $* 2>&1; echo \"@@HWT-RC \$i \$?\""
	echo 'done'
	echo 'echo "@@HWT-DONE $i"; poweroff -f'
} > "$root/init" && chmod 755 "$root/init" || exit 1
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/repeat-initrd.gz" || exit 1
timeout -k 5 $((secs + 300)) qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 2 -m 1024 -nographic \
	-no-reboot -nic none -kernel "$kernel" -initrd "$out/repeat-initrd.gz" \
	-append "console=ttyAMA0 panic=-1 quiet loglevel=1" < /dev/null > "$out/repeat.log" 2>&1
rc=$?
runs=$(tr -d '\r' < "$out/repeat.log" | grep -ac '^@@HWT-RC')
failed=$(tr -d '\r' < "$out/repeat.log" | grep -a '^@@HWT-RC' | grep -vc ' 0$')
echo "qemu rc $rc; $(grep -a '^@@HWT-KERNEL' "$out/repeat.log"); $runs runs, $failed failed" \
	"$(grep -aq '^@@HWT-DONE' "$out/repeat.log" && echo '(done)' || echo '(not finished)')"
[ "$rc" = 0 ] && [ "$failed" = 0 ] && grep -aq '^@@HWT-DONE' "$out/repeat.log"
