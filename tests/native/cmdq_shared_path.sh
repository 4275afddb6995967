#!/bin/sh
# SPDX-License-Identifier: MIT
# The several-queue tests again with rseq off (GLIBC_TUNABLES=
# glibc.pthread.rseq=0): every queue object then takes the shared path,
# which natively only the objects with fewer queues than CPUs do.
. tests/tap.sh
b=${BUILD:-build}
HWT_STRESS_MS=${HWT_STRESS_MS:-200}
export HWT_STRESS_MS
for p in unit_cmdq_mq stress_cmdq_mq stress_api; do
	if [ ! -x "$b/tests/$p" ]; then
		tap_skip "$p with rseq off" "not built"
		continue
	fi
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 timeout -k 5 600 "$b/tests/$p" > "$out" 2> "$err"
	rc=$?
	tap_ok "$p with rseq off (shared path): every test passes" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$out" | grep -v '^# ok '
done
tap_end
