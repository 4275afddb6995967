#!/bin/sh
# SPDX-License-Identifier: MIT
# Build-system checks (issue 9): hwtune.pc follows the PREFIX being
# installed; each build variant has its own folder, and a flag change in
# one folder rebuilds its objects; make bench-probe > FILE is valid JSON.
. tests/tap.sh
# Our own make runs, not parts of the parent's (jobserver, -n, -s ...).
unset MAKEFLAGS MAKELEVEL MFLAGS

# 1. Two installs with different PREFIXes: each .pc names its own folders,
#    and a program built through it compiles.
for p in /usr /opt/hwt-pc-test; do
	root=$tap_dir/pc$(echo "$p" | tr / _)
	tap_ok "make install PREFIX=$p" sh -c "make -s install DESTDIR='$root' PREFIX='$p' > '$out' 2>&1"
	tap_ok "its hwtune.pc says includedir=$p/include, libdir=$p/lib" sh -c \
		"grep -qx 'includedir=$p/include' '$root$p/lib/pkgconfig/hwtune.pc' &&
		 grep -qx 'libdir=$p/lib' '$root$p/lib/pkgconfig/hwtune.pc'"
	if command -v pkg-config >/dev/null 2>&1; then
		printf '#include <hwtune/hwtune.h>\nint main(void) { return hwt_version()[0] == 0; }\n' \
			> "$tap_dir/v.c"
		tap_ok "a program compiles and links through that hwtune.pc" sh -c \
			"PKG_CONFIG_SYSROOT_DIR='$root' PKG_CONFIG_LIBDIR='$root$p/lib/pkgconfig' &&
			 export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR &&
			 ${CC:-gcc} \$(pkg-config --cflags hwtune) '$tap_dir/v.c' -o '$tap_dir/v' \
				\$(pkg-config --libs --static hwtune) -Wl,-Bstatic -Wl,-Bdynamic > '$out' 2>&1"
	else
		tap_skip "a program compiles and links through that hwtune.pc" "no pkg-config (pkgconf)"
	fi
done

# 2. Variant folders: what each variant would build lies in its folder only.
for v in "NO_ASM=1:build/noasm" "CC=clang:build/clang" "SAN=thread:build/san-thread" \
	"CROSS=aarch64-linux-gnu-:build/aarch64" "CROSS=aarch64-linux-gnu- NO_ASM=1:build/aarch64-noasm"; do
	vars=${v%%:*} dir=${v#*:}
	case "$vars" in CROSS=*)
		if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
			tap_skip "make $vars builds into $dir/ and nothing else" \
				"needs gcc-aarch64-linux-gnu (make deps)"
			continue
		fi ;;
	esac
	tap_ok "make $vars builds into $dir/ and nothing else" sh -c \
		"make -n $vars all > '$out' 2>&1 && grep -q ' -o $dir/libhwtune.so' '$out' &&
		 ! grep -E -- '-o build/' '$out' | grep -v -- '-o $dir/' | grep -q ."
done

# 3. The flags stamp, in a scratch folder: an unchanged build compiles
#    nothing, a changed flag (OPT, NO_ASM) recompiles.
b=$tap_dir/b
o=$b/obj/src/common/version.o
tap_ok "one object builds in BUILD=<scratch>" sh -c "make BUILD='$b' '$o' > '$out' 2>&1 && test -f '$o'"
tap_ok "made again with the same flags: nothing compiled" sh -c \
	"make BUILD='$b' '$o' > '$out' 2>&1 && ! grep -q -- ' -c ' '$out'"
tap_ok "OPT=-O0 in the same folder recompiles it" sh -c \
	"make BUILD='$b' OPT=-O0 '$o' > '$out' 2>&1 && grep -q -- '-O0 .* -c src/common/version.c' '$out'"
tap_ok "NO_ASM=1 in the same folder recompiles it" sh -c \
	"make BUILD='$b' OPT=-O0 NO_ASM=1 '$o' > '$out' 2>&1 &&
	 grep -q -- '-DHWT_ARCH_GENERIC .* -c src/common/version.c' '$out'"

# 4. make bench-probe > FILE: stdout is exactly one JSON document (one short run).
tap_ok "make bench-probe > FILE is JSON (make's own output on stderr)" sh -c \
	"make bench-probe BENCH_PROBE_ARGS='--runs 1 --serial-runs 0 --kernel-runs 0' \
		> '$tap_dir/bp.json' 2> '$err' && head -c 1 '$tap_dir/bp.json' | grep -q '{' &&
	 if command -v python3 >/dev/null 2>&1; then python3 -m json.tool '$tap_dir/bp.json' > '$out'; fi"
tap_end
