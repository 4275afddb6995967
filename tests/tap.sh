# SPDX-License-Identifier: MIT
# A small TAP helper for the tests/cli scripts (POSIX sh).  Source it, then:
#
#   tap_run ARGS...           run $HWTUNE ARGS (bounded), set $rc, $out, $err
#   tap_run_env VAR=VAL ARGS... the same, with VAR=VAL in the tool's environment
#   tap_ok NAME COND...       "ok N - NAME" if the command COND... succeeds
#   tap_skip NAME REASON      "ok N - NAME # SKIP REASON"
#   tap_end                   print the plan, exit 1 if anything failed
#
# On failure the captured stdout/stderr of the last tap_run are shown as
# TAP comments.  $HWTUNE may carry an emulator wrapper, so it stays unquoted.
: "${HWTUNE:=build/hwtune}"
tap_n=0
rc=0
tap_failed=0
tap_dir=$(mktemp -d)
out=$tap_dir/out
err=$tap_dir/err
: > "$out"
: > "$err"
trap 'rm -rf "$tap_dir"' EXIT

# Generous bound on one tool run: qemu-user is slow, the machine is shared.
TAP_TIMEOUT=${TAP_TIMEOUT:-600}

tap_run() {
	if command -v timeout >/dev/null 2>&1; then
		timeout -k 5 "$TAP_TIMEOUT" $HWTUNE "$@" > "$out" 2> "$err"
	else
		$HWTUNE "$@" > "$out" 2> "$err"
	fi
	rc=$?
}

# Through env(1), not "VAR=VAL tap_run": a prefix assignment before a shell
# function is not reliably scoped to that call in POSIX sh.
tap_run_env() {
	tap_env=$1
	shift
	if command -v timeout >/dev/null 2>&1; then
		timeout -k 5 "$TAP_TIMEOUT" env "$tap_env" $HWTUNE "$@" > "$out" 2> "$err"
	else
		env "$tap_env" $HWTUNE "$@" > "$out" 2> "$err"
	fi
	rc=$?
}

# A private cache and runtime folder, none of hwtune's variables: never the
# user's cache nor the machine's /run/hwtune system file.
tap_isolate() {
	XDG_CACHE_HOME=$tap_dir/cache
	HWTUNE_RUNTIME_DIR=$tap_dir/run
	export XDG_CACHE_HOME HWTUNE_RUNTIME_DIR
	mkdir -p "$XDG_CACHE_HOME"
	unset HWTUNE_UNALIGNED_SCALAR_SPEED HWTUNE_UNALIGNED_VECTOR_SPEED HWTUNE_DISABLE_MSIPOLLING \
		HWTUNE_ROOT
}

tap_ok() {
	tap_name=$1
	shift
	tap_n=$((tap_n + 1))
	if "$@"; then
		echo "ok $tap_n - $tap_name"
	else
		echo "not ok $tap_n - $tap_name"
		echo "# failed: $*  (last status $rc)"
		sed -n '1,40s/^/# out: /p' "$out"
		sed -n '1,20s/^/# err: /p' "$err"
		tap_failed=$((tap_failed + 1))
	fi
}

tap_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

tap_end() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}
