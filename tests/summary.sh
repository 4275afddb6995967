#!/bin/sh
# SPDX-License-Identifier: MIT
# Sum the "passed failed skipped" lines of every check stage; exit 1 on any failure.
awk '{ p += $1; f += $2; s += $3 }
     END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit f > 0 }' "$1"
