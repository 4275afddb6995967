#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages, installed and removed for real (CI runs this after
# make check; by hand: as root, on a machine where hwtune is not installed):
#   sh tests/pkg/roundtrip.sh [DIR]    DIR holds the .deb files (default:
#                                      make deb, then build/pkg)
# apt-get install ./*.deb; dpkg -L of each package; examples/*.c built in an
# empty folder against the installed libhwtune-dev through pkg-config (shared
# and static) and run; the installed hwtune --version and --json; the man
# pages and the unit (installed, not enabled); apt-get purge; then no file
# dpkg listed is left, nor the unit's enablement state.  TAP on stdout.
set -u
cd "$(dirname "$0")/../.."
pkgs="libhwtune1 libhwtune-dev hwtune"
apt="apt-get -o DPkg::Lock::Timeout=900 -y -q"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -s "$log" ] && sed 's/^/# /' "$log"; }
check() { name=$1; shift; if "$@" > "$log" 2>&1; then ok "$name"; else bad "$name"; fi; }
finish() { echo "1..$n"; [ "$failed" -eq 0 ] || echo "# roundtrip: $failed failed"; exit $((failed > 0)); }

[ "$(id -u)" = 0 ] || { echo "roundtrip: run as root (apt-get, dpkg)" >&2; exit 2; }
for p in $pkgs; do
	if dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^.i'; then
		echo "roundtrip: $p is installed already; this test would purge it" >&2; exit 2
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
: > "$log"
dir=${1:-}
if [ -z "$dir" ]; then
	check "make deb (dpkg-buildpackage, lintian: no error, no warning)" make deb
	dir=build/pkg
fi
dir=$(cd "$dir" && pwd)
debs=
for p in $pkgs; do
	f=$(ls "$dir/${p}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo "roundtrip: no ${p}_*.deb in $dir" >&2; exit 2; }
	debs="$debs $f"
	echo "# $(basename "$f"): $(wc -c < "$f") bytes"
done
version=$(make -s print-version)

check "apt-get install ./*.deb" env DEBIAN_FRONTEND=noninteractive $apt install --no-install-recommends $debs
for p in $pkgs; do
	dpkg -L "$p" > "$tmp/files.$p" 2>/dev/null
done
check "dpkg -L lists the library, headers, .pc, tool, pages and unit" sh -c "
	cat '$tmp'/files.* > '$tmp/all'
	for f in libhwtune.so.1 libhwtune.so libhwtune.a pkgconfig/hwtune.pc include/hwtune/hwtune.h \
		bin/hwtune man1/hwtune.1.gz man7/hwtune.7.gz man3/hwt_cmdq_create.3.gz \
		system/hwtune-probe.service; do
		grep -q \"/\$f\$\" '$tmp/all' || { echo \"missing: \$f\"; exit 1; }
	done"

# The examples, from an empty folder: only the installed headers and library.
mkdir "$tmp/ex"
for src in examples/*.c; do
	e=$(basename "$src" .c)
	cp "$src" "$tmp/ex/"
	check "examples/$e.c builds against libhwtune-dev (pkg-config, shared)" sh -c \
		"cd '$tmp/ex' && cc -std=c11 -Wall -Wextra -Werror \$(pkg-config --cflags hwtune) $e.c -o $e \
		 \$(pkg-config --libs hwtune) -pthread && ldd ./$e | grep -q '/libhwtune.so.1 '"
	check "examples/$e.c builds static (pkg-config --static)" sh -c \
		"cd '$tmp/ex' && cc -std=c11 -Wall -Wextra -Werror -static \$(pkg-config --cflags hwtune) $e.c \
		 -o $e-static \$(pkg-config --static --libs hwtune)"
	check "examples/$e runs against the installed library" sh -c \
		"cd '$tmp/ex' && HOME='$tmp' XDG_CACHE_HOME='$tmp/cache' timeout 300 ./$e"
done
check "pkg-config says version $version" test "$(pkg-config --modversion hwtune)" = "$version"
check "the installed hwtune --version says $version" test "$(/usr/bin/hwtune --version)" = "hwtune $version"
check "the installed hwtune --json prints one JSON object of version $version" sh -c \
	"HOME='$tmp' XDG_CACHE_HOME='$tmp/cache' timeout 300 /usr/bin/hwtune --json > '$tmp/json' &&
	 grep -q '^{\"version\": \"$version\",' '$tmp/json' &&
	 { ! command -v python3 >/dev/null || python3 -m json.tool '$tmp/json' > /dev/null; }"
check "man -w finds hwtune(1), hwtune(7) and hwt_cmdq_destroy(3)" sh -c \
	"! command -v man >/dev/null || { man -w 1 hwtune && man -w 7 hwtune && man -w hwt_cmdq_destroy; }"
unit=$(grep '/hwtune-probe.service$' "$tmp/files.hwtune")
check "the unit is installed and not enabled" sh -c \
	"test -f '$unit' && ! ls /etc/systemd/system/*.wants/hwtune-probe.service 2>/dev/null | grep -q ."
if command -v systemd-analyze >/dev/null 2>&1; then
	check "systemd-analyze verify is silent on the installed unit" sh -c \
		"systemd-analyze verify '$unit' > '$tmp/v' 2>&1; r=\$?; cat '$tmp/v'; [ \$r -eq 0 ] && ! test -s '$tmp/v'"
fi

check "apt-get purge $pkgs" env DEBIAN_FRONTEND=noninteractive $apt purge $pkgs
check "dpkg knows none of them any more" sh -c \
	"for p in $pkgs; do
		dpkg-query -W -f '\${db:Status-Abbrev}' \$p 2>/dev/null | grep -q '^.[^n]' && echo \$p
	 done | { ! grep .; }"
# A path dpkg listed and that is still there: a file or link is left behind;
# a folder (or a link to one: /lib on a merged /usr) only if it is empty and
# no other package owns it (dpkg removes those; a non-empty one holds someone
# else's files).
check "nothing dpkg -L listed is left behind" sh -c "
	cat '$tmp'/files.* | sort -u | while read -r f; do
		[ -e \"\$f\" ] || [ -L \"\$f\" ] || continue
		if [ -d \"\$f\" ]; then
			[ -z \"\$(ls -A \"\$f\")\" ] || continue
			dpkg -S \"\$f\" > /dev/null 2>&1 && continue
		fi
		echo \"left: \$f\"
	done | { ! grep .; }"
check "no enablement state of hwtune-probe.service is left" sh -c \
	"! ls -d /var/lib/systemd/deb-systemd-helper-*/*hwtune* /etc/systemd/system/*/hwtune-probe.service \
	 2>/dev/null | grep ."
finish
