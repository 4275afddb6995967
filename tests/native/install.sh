#!/bin/sh
# SPDX-License-Identifier: MIT
# make install into a scratch root; a program built against it through
# pkg-config runs; the shared library exports only hwt_* symbols.
. tests/tap.sh
root=$tap_dir/root
tap_ok "make install DESTDIR=... PREFIX=/usr" sh -c "make -s install DESTDIR='$root' PREFIX=/usr > '$out' 2>&1"
cat > "$tap_dir/app.c" <<'EOC'
#include <hwtune/hwtune.h>
#include <stdio.h>
int main(void)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	int err;

	hwt_smmu_dev_config_default(&dc);
	if (hwt_smmu_dev_create(&dev, &dc) || hwt_cmdq_create(&q, dev, NULL) ||
	    hwt_smmu_dev_start(dev))
		return 1;
	err = hwt_cmdq_sync(q);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
	printf("hwtune %s sync %d speed %s\n", hwt_version(), err,
	       hwt_misaligned_speed_name(hwt_misaligned_speed()));
	return err != 0;
}
EOC
export PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig"
if command -v pkg-config >/dev/null 2>&1; then
	tap_ok "pkg-config knows hwtune" sh -c "pkg-config --exists hwtune"
	tap_ok "an application builds against the installed library" sh -c \
		"${CC:-gcc} -std=c11 -Wall -Werror \$(pkg-config --cflags hwtune) '$tap_dir/app.c' \
		 -o '$tap_dir/app' \$(pkg-config --libs hwtune) -Wl,-rpath,'$root/usr/lib' -pthread \
		 > '$out' 2>&1"
	tap_ok "and runs (shared library)" sh -c \
		"XDG_CACHE_HOME='$tap_dir/cache' '$tap_dir/app' > '$out' 2>&1 && grep -q 'sync 0' '$out'"
else
	for t in "pkg-config knows hwtune" "an application builds against the installed library" \
		"and runs (shared library)"; do
		tap_skip "$t" "no pkg-config (Debian package pkgconf)"
	done
fi
tap_ok "the shared library exports only hwt_* symbols" sh -c \
	"nm -D --defined-only '$root/usr/lib/libhwtune.so' | awk '\$2 != \"A\" {print \$3}' | grep -v '^hwt_[a-z]' > '$out'; ! test -s '$out'"
tap_ok "the man page is installed" test -f "$root/usr/share/man/man1/hwtune.1"
unit=$root/usr/lib/systemd/system/hwtune-probe.service
tap_ok "the systemd unit is installed, 0644, running the installed tool" sh -c \
	"test \"\$(stat -c %a '$unit')\" = 644 && grep -qx 'ExecStart=/usr/bin/hwtune probe --system' '$unit' && ! grep -q '@[A-Z_]*@' '$unit'"
tap_ok "the unit keeps /run/hwtune when it stops" grep -qx 'RuntimeDirectoryPreserve=yes' "$unit"
tap_end
