#!/bin/sh
# SPDX-License-Identifier: MIT
# make set-version V=X.Y.Z: write version X.Y.Z into every place that holds
# a copy (tests/native/version.sh checks them): the Makefile, the public
# header's macros, each man page's .TH line (its date: today) and a new top
# entry of debian/changelog.  NEWS.md's section is written by hand.
set -eu
v=$1
echo "$v" | grep -qx '[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*' ||
	{ echo "set-version: '$v' is not MAJOR.MINOR.PATCH" >&2; exit 2; }
maj=${v%%.*} rest=${v#*.}
min=${rest%%.*} pat=${rest#*.}
sed -i -e "s/^VERSION_MAJOR := .*/VERSION_MAJOR := $maj/" -e "s/^VERSION_MINOR := .*/VERSION_MINOR := $min/" \
	-e "s/^VERSION_PATCH := .*/VERSION_PATCH := $pat/" Makefile
sed -i -e "s/^#define HWT_VERSION_MAJOR .*/#define HWT_VERSION_MAJOR $maj/" \
	-e "s/^#define HWT_VERSION_MINOR .*/#define HWT_VERSION_MINOR $min/" \
	-e "s/^#define HWT_VERSION_PATCH .*/#define HWT_VERSION_PATCH $pat/" include/hwtune/hwtune.h
today=$(date -u +%Y-%m-%d)
for p in docs/man/man*/*.[137]; do
	sed -i "s/^\(\.TH [^ ]* [0-9]\) [^ ]* \"hwtune [^\"]*\"/\1 $today \"hwtune $v\"/" "$p"
done
if ! head -n 1 debian/changelog | grep -q "^hwtune ($v)"; then
	who=$(sed -n 's/^Maintainer: //p' debian/control)
	{
		printf 'hwtune (%s) unstable; urgency=medium\n\n  * New release (see NEWS.md).\n\n' "$v"
		printf ' -- %s  %s\n\n' "$who" "$(date -u -R)"
		cat debian/changelog
	} > debian/changelog.new
	mv debian/changelog.new debian/changelog
fi
echo "set-version: $v in Makefile, include/hwtune/hwtune.h, docs/man/*, debian/changelog;" \
	"write its NEWS.md section, then make deb-symbols if public functions were added"
