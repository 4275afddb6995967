#!/bin/sh
# SPDX-License-Identifier: MIT
# Every exported function of the public headers (HWT_API) has its NULL test
# in tests/unit/api_null.c, named null_<name without hwt_>: the NULL rule of
# <hwtune/hwtune.h> covers new functions too.
. tests/tap.sh
names=$(sed -n 's/^HWT_API[^(]*[ *]\(hwt_[a-z0-9_]*\)(.*/\1/p' include/hwtune/*.h | sort -u)
tap_ok "the headers export functions" test -n "$names"
for f in $names; do
	tap_ok "$f has a NULL test" grep -q "^TEST(null_${f#hwt_})" tests/unit/api_null.c
done
tap_end
