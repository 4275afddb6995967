#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every test program of a build: tests/run.sh LABEL BUILD_DIR COUNTS [WRAPPER]
# Prints the TAP of each program prefixed with LABEL/program, appends
# "passed failed skipped" to COUNTS and each failure to COUNTS.failed.
# HWT_TEST_ONLY=prefix limits the programs.
label=$1 build=$2 counts=$3 wrapper=$4
pass=0 fail=0 skip=0
# Programs in BUILD/tests, then the CLI scripts in tests/cli (TAP on stdout),
# which find the tool as $HWTUNE (with the emulator wrapper in front), and on
# the native stage the build checks in tests/native/*.sh.
HWTUNE="$wrapper $build/hwtune"
export HWTUNE
native=
[ "$label" = native ] && native=$(ls tests/native/*.sh 2>/dev/null)
for t in "$build"/tests/* tests/cli/*.sh $native; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	case "$name" in "${HWT_TEST_ONLY:-}"*) ;; *) continue ;; esac
	out=$(mktemp)
	# The harness bounds every test; this outer bound catches a wedged harness.
	case "$t" in
	*.sh) timeout -k 5 1800 sh "$t" > "$out" 2>&1 ;;
	*) timeout -k 5 1800 $wrapper "$t" > "$out" 2>&1 ;;
	esac
	rc=$?
	p=$(grep -c '^ok ' "$out" | tr -d ' ')
	s=$(grep -c '^ok .* # SKIP' "$out" | tr -d ' ')
	f=$(grep -c '^not ok ' "$out" | tr -d ' ')
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		[ -z "$(tail -c 1 "$out")" ] || echo >> "$out" # a last line cut short
		echo "not ok - $label/$name exited with status $rc" >> "$out"
		f=1
	fi
	sed -e "s%^\(not ok\|ok\) \([0-9]*\) - %\1 \2 - $label/$name: %" "$out" > "$out.tap"
	cat "$out.tap"
	# Each failure with what its test printed just before it (up to 6 lines)
	# and the harness's reason, the one "# " line after it.
	awk '/^not ok / { for (i = n > 6 ? n - 6 : 0; i < n; i++) print d[i % 6]; print; n = 0; r = 1; next }
	     /^ok / || /^1\.\./ { n = 0; r = 0; next }
	     r && /^# / { print; r = 0; next }
	     { r = 0; d[n++ % 6] = $0 }' "$out.tap" >> "$counts.failed"
	rm -f "$out" "$out.tap"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
echo "# $label: $pass passed, $fail failed, $skip skipped"
echo "$pass $fail $skip" >> "$counts"
# Under make check every stage runs; tests/summary.sh gives the verdict.
[ "$fail" -eq 0 ] || [ -n "$HWT_CHECK_ALL" ]
