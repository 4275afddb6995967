#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/*.c built against the INSTALLED library through pkg-config, once
# linked with libhwtune.so (found through LD_LIBRARY_PATH) and once with
# libhwtune.a (pkg-config --static, -static), and run.
. tests/tap.sh
unset MAKEFLAGS MAKELEVEL MFLAGS
root=$tap_dir/root
cc=${CC:-gcc}
tap_ok "make install DESTDIR=... PREFIX=/usr" sh -c "make -s install DESTDIR='$root' PREFIX=/usr > '$out' 2>&1"
if ! command -v pkg-config >/dev/null 2>&1; then
	for e in examples/*.c; do
		tap_skip "$(basename "$e" .c) (shared, static)" "no pkg-config (Debian package pkgconf)"
	done
	tap_end
	exit
fi
PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/pkgconfig
export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
# The probe's cache goes to the scratch folder, not to the user's.
XDG_CACHE_HOME=$tap_dir/cache
export XDG_CACHE_HOME
warn="-std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -O2"
for e in examples/*.c; do
	n=$(basename "$e" .c)
	tap_ok "$n builds against the installed libhwtune.so" sh -c \
		"$cc $warn \$(pkg-config --cflags hwtune) '$e' -o '$tap_dir/$n.shared' \
			\$(pkg-config --libs hwtune) -pthread > '$out' 2>&1 &&
		 readelf -d '$tap_dir/$n.shared' | grep -q 'NEEDED.*libhwtune.so.1'"
	tap_ok "$n runs (shared)" sh -c \
		"LD_LIBRARY_PATH='$root/usr/lib' timeout 60 '$tap_dir/$n.shared' > '$out' 2>&1"
	tap_ok "$n builds static (pkg-config --static, -static)" sh -c \
		"$cc $warn \$(pkg-config --cflags hwtune) '$e' -o '$tap_dir/$n.static' -static \
			\$(pkg-config --static --libs hwtune) > '$out' 2>&1 &&
		 ! readelf -d '$tap_dir/$n.static' 2>/dev/null | grep -q NEEDED"
	tap_ok "$n runs (static)" sh -c "timeout 60 '$tap_dir/$n.static' > '$out' 2>&1"
done
# pick_copy takes both branches.
for s in slow fast; do
	tap_ok "pick_copy with HWTUNE_UNALIGNED_SCALAR_SPEED=$s" sh -c \
		"HWTUNE_UNALIGNED_SCALAR_SPEED=$s timeout 60 '$tap_dir/pick_copy.static' > '$out' 2>&1 &&
		 grep -q '^misaligned accesses: $s -> copying with' '$out' && grep -q ': ok$' '$out'"
done
tap_end
