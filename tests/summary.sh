#!/bin/sh
# SPDX-License-Identifier: MIT
# Sum the "passed failed skipped" lines of every check stage and repeat the
# failures the stages listed in COUNTS.failed; exit 1 on any failure.
[ -s "$1.failed" ] && { echo "# the failures:"; cat "$1.failed"; }
awk '{ p += $1; f += $2; s += $3 }
     END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit f > 0 }' "$1"
