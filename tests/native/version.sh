#!/bin/sh
# SPDX-License-Identifier: MIT
# The version lives in the Makefile (VERSION_MAJOR/MINOR/PATCH); every copy
# of it must say the same: the public header's HWT_VERSION_* macros, the
# library's hwt_version(), hwtune --version, the installed hwtune.pc, the
# .TH line of every man page, debian/changelog's top entry and a NEWS.md
# section.  make set-version V=X.Y.Z rewrites them all.
. tests/tap.sh
unset MAKEFLAGS MAKELEVEL MFLAGS
v=$(make -s print-version)
tap_ok "the Makefile's VERSION is MAJOR.MINOR.PATCH ($v)" sh -c \
	"echo '$v' | grep -qx '[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*'"
tap_ok "include/hwtune/hwtune.h's HWT_VERSION_MAJOR/MINOR/PATCH say $v" sh -c \
	"awk '/^#define HWT_VERSION_(MAJOR|MINOR|PATCH) / { printf \"%s%s\", s, \$3; s = \".\" }' \
	 include/hwtune/hwtune.h > '$out'; test \"\$(cat '$out')\" = '$v'"
tap_run --version
tap_ok "hwtune --version says hwtune $v" test "$rc $(cat "$out")" = "0 hwtune $v"
cat > "$tap_dir/v.c" <<'EOC'
#include <hwtune/hwtune.h>
#include <stdio.h>
int main(void) { puts(hwt_version()); return 0; }
EOC
# The build folder is the tool's ($HWTUNE may have an emulator in front).
lib=$(dirname "$(echo $HWTUNE | awk '{ print $NF }')")
mkdir -p "$tap_dir/lib"
soname=$(readelf -d "$lib/libhwtune.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
ln -s "$PWD/$lib/libhwtune.so" "$tap_dir/lib/$soname"
tap_ok "the shared library's hwt_version() says $v" sh -c \
	"${CC:-gcc} -Iinclude '$tap_dir/v.c' -o '$tap_dir/v' '$lib/libhwtune.so' -Wl,-rpath,'$tap_dir/lib' \
	 > '$out' 2>&1 && test \"\$('$tap_dir/v')\" = '$v'"
tap_ok "the installed hwtune.pc says Version: $v" sh -c \
	"make -s install DESTDIR='$tap_dir/root' PREFIX=/usr > '$out' 2>&1 &&
	 grep -qx 'Version: $v' '$tap_dir/root/usr/lib/pkgconfig/hwtune.pc'"
tap_ok "every man page's .TH line names \"hwtune $v\"" sh -c \
	"for p in docs/man/man*/*.[137]; do grep -q '^\.TH .* \"hwtune $v\"' \"\$p\" || echo \"\$p\"; done > '$out';
	 ! test -s '$out'"
tap_ok "debian/changelog's top entry is version $v" sh -c \
	"test \"\$(sed -n '1s/^hwtune (\([^)-]*\)[^)]*).*/\1/p' debian/changelog)\" = '$v'"
tap_ok "NEWS.md has a section for $v" grep -q "^## $v\b" NEWS.md
tap_end
