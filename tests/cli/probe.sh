#!/bin/sh
# SPDX-License-Identifier: MIT
# hwtune probe and the main job: JSON shape, every allowed CPU, affinity,
# serial = parallel, forced SIGBUS, overrides, cache, bad input (TAP).
# Verdicts are only asserted natively on x86_64 (FAST); under qemu-user they
# are whatever TCG gives, so only the plumbing is checked there.
. "$(dirname "$0")/../tap.sh"

# A private cache, never the user's.
XDG_CACHE_HOME=$tap_dir/cache
export XDG_CACHE_HOME
# The cache creates only its own hwtune folder, never XDG_CACHE_HOME itself.
mkdir -p "$XDG_CACHE_HOME"
unset HWTUNE_UNALIGNED_SCALAR_SPEED HWTUNE_UNALIGNED_VECTOR_SPEED HWTUNE_TEST_FORCE_SIGBUS HWTUNE_ROOT
# A private runtime folder: never read or write the machine's /run/hwtune.
HWTUNE_RUNTIME_DIR=$tap_dir/run
export HWTUNE_RUNTIME_DIR

# --- helpers over our own JSON layout (one CPU object per line) -------------
cpus_of() { grep -o '{"cpu": [0-9]*' "$1" | grep -o '[0-9]*$' | tr '\n' ' '; }
# The source a run reports after the run in $1 wrote the cache: "cache", but
# unknown verdicts (an emulator's, at times) are never cached and re-probed.
after() { case " $(speeds_of "$1")" in *" unknown "*) echo measured ;; *) echo cache ;; esac; }
hit_as_expected() { # $1 the cache field, $2 what after() said
	case "$2:$1" in cache:hit | measured:partial | measured:miss) return 0 ;; esac
	return 1
}
speeds_of() { grep -o '{"cpu": [0-9]*, "speed": "[a-z]*"' "$1" | sed 's/.*: "//; s/"//' | tr '\n' ' '; } # scalar only
field() { grep -o "\"$2\": \"[^\"]*\"" "$1" | head -n 1 | sed 's/.*: "//; s/"$//'; }
number() { grep -o "\"$2\": [0-9.]*" "$1" | head -n 1 | sed 's/.*: //'; }
expand_list() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF == 2 { for (i = $1; i <= $2; i++) printf "%d ", i; next }
					   NF == 1 { printf "%d ", $1 }'
}
all_are() { # FILE WORD: every CPU's speed is WORD (and there is one)
	s=$(speeds_of "$1")
	[ -n "$s" ] && [ -z "$(echo "$s" | tr ' ' '\n' | grep -v -x -e "$2" -e '')" ]
}
json_valid() {
	if command -v jq >/dev/null 2>&1; then
		jq -e .probe "$1" >/dev/null
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))["probe"]' "$1"
	else
		return 0
	fi
}
has_keys() {
	for k in '"mode": "parallel"' '"source": ' '"wall_ns": ' '"summary": ' '"cpus": [' \
		'"cpu": ' '"speed": ' '"ratio": ' '"word_ns": ' '"byte_ns": ' '"probe_ns": ' \
		'"smt": "together"'; do
		grep -q -F -e "$k" "$out" || { echo "# missing $k"; return 1; }
	done
}
status_is() { [ "$rc" -eq "$1" ]; }
err_has() { grep -q -F -e "$1" "$err"; }
out_has() { grep -q -F -e "$1" "$out"; }
save() { cp "$out" "$tap_dir/$1"; }

allowed=$(expand_list "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)")
first=${allowed%% *}
native=yes
case "$HWTUNE" in *qemu*) native=no ;; esac

# --- help ---------------------------------------------------------------------
tap_run probe --help
tap_ok "probe --help exits 0" status_is 0
for opt in --cpus --serial --budget-ms --kernel-window --smt= --no-cache --json \
	--unaligned-scalar-speed HWTUNE_UNALIGNED_SCALAR_SPEED XDG_CACHE_HOME \
	--unaligned-vector-speed HWTUNE_UNALIGNED_VECTOR_SPEED --system HWTUNE_RUNTIME_DIR; do
	tap_ok "probe --help documents $opt" out_has "$opt"
done

# --- every allowed CPU, JSON shape ----------------------------------------------
tap_run probe --json --no-cache
save parallel.json
tap_ok "probe --json exits 0" status_is 0
tap_ok "probe --json is valid JSON" json_valid "$out"
tap_ok "probe --json has the DESIGN.md fields" has_keys
tap_ok "probe --json reports every allowed CPU ($allowed)" \
	test "$(cpus_of "$out")" = "$allowed"
tap_ok "probe --json source is measured" test "$(field "$out" source)" = measured
if [ "$native" = yes ] && [ "$(uname -m)" = x86_64 ]; then
	tap_ok "x86_64: every CPU is fast" all_are "$out" fast
	tap_ok "x86_64: summary is fast" test "$(field "$out" summary)" = fast
else
	tap_skip "x86_64: every CPU is fast" "verdicts under an emulator are TCG's"
	tap_skip "x86_64: summary is fast" "verdicts under an emulator are TCG's"
fi

# --- affinity -----------------------------------------------------------------
if command -v taskset >/dev/null 2>&1; then
	HWTUNE_SAVED=$HWTUNE
	HWTUNE="taskset -c $first $HWTUNE_SAVED"
	tap_run probe --json --no-cache
	HWTUNE=$HWTUNE_SAVED
	tap_ok "taskset -c $first: exits 0" status_is 0
	tap_ok "taskset -c $first: only CPU $first" test "$(cpus_of "$out")" = "$first "
else
	tap_skip "taskset: only one CPU" "no taskset (util-linux)"
fi
tap_run probe --json --no-cache --cpus "$first"
tap_ok "--cpus $first: only CPU $first" test "$(cpus_of "$out")" = "$first "

# --- serial and parallel agree --------------------------------------------------
tap_run probe --json --no-cache --serial
save serial.json
tap_ok "--serial exits 0" status_is 0
tap_ok "--serial says mode serial" test "$(field "$out" mode)" = serial
tap_ok "--serial has wall_ns" test -n "$(number "$out" wall_ns)"
tap_ok "serial and parallel give the same CPUs" \
	test "$(cpus_of "$tap_dir/serial.json")" = "$(cpus_of "$tap_dir/parallel.json")"
if [ "$native" = yes ]; then
	tap_ok "serial and parallel give the same verdicts" \
		test "$(speeds_of "$tap_dir/serial.json")" = "$(speeds_of "$tap_dir/parallel.json")"
else
	# TCG's timing: a CPU emulated beside another may run out of budget (unknown)
	tap_skip "serial and parallel give the same verdicts" "verdicts under an emulator are TCG's"
fi

# --- forced SIGBUS ----------------------------------------------------------------
# Through the tests' build of the tool (test-hwtune beside hwtune, linked with
# tests/harness/probe_hook.c): the shipped tool and library read no test seam.
shipped=$HWTUNE
tool=${shipped##* }
HWTUNE="${shipped%hwtune}test-hwtune"
tap_ok "the shipped tool reads no test seam" sh -c "! grep -q HWTUNE_TEST_ '$tool'"
HWTUNE_TEST_FORCE_SIGBUS=1
export HWTUNE_TEST_FORCE_SIGBUS
tap_run probe --json
unset HWTUNE_TEST_FORCE_SIGBUS
HWTUNE=$shipped
tap_ok "forced SIGBUS: exits 0 (no crash)" status_is 0
tap_ok "forced SIGBUS: every CPU unsupported" all_are "$out" unsupported
tap_ok "forced SIGBUS: summary unsupported" test "$(field "$out" summary)" = unsupported
tap_ok "forced SIGBUS: signal recorded" out_has '"fault_signal": "SIGBUS"'

# --- overrides ----------------------------------------------------------------------
tap_run probe --json --unaligned-scalar-speed=slow
tap_ok "--unaligned-scalar-speed=slow: every CPU slow" all_are "$out" slow
tap_ok "--unaligned-scalar-speed=slow: source override" test "$(field "$out" source)" = override
tap_ok "--unaligned-scalar-speed=slow: every allowed CPU" test "$(cpus_of "$out")" = "$allowed"
tap_run probe --json --unaligned-scalar-speed unsupported
tap_ok "--unaligned-scalar-speed unsupported (separate arg)" all_are "$out" unsupported
HWTUNE_UNALIGNED_SCALAR_SPEED=fast
export HWTUNE_UNALIGNED_SCALAR_SPEED
tap_run probe --json
tap_ok "env fast: every CPU fast" all_are "$out" fast
tap_ok "env fast: source override" test "$(field "$out" source)" = override
tap_ok "env fast: summary fast" test "$(field "$out" summary)" = fast
tap_run probe --json --unaligned-scalar-speed=slow
tap_ok "flag beats env" all_are "$out" slow
HWTUNE_UNALIGNED_SCALAR_SPEED=quick
tap_run probe --json
tap_ok "env with a bad word: exit 2" status_is 2
tap_ok "env with a bad word: names it" err_has "'quick'"
tap_run probe --json --unaligned-scalar-speed=fast
tap_ok "env with a bad word is ignored when the flag is given" status_is 0
unset HWTUNE_UNALIGNED_SCALAR_SPEED
for w in emulated unknown FAST ""; do
	tap_run probe --unaligned-scalar-speed="$w"
	tap_ok "--unaligned-scalar-speed='$w': exit 2 naming it" \
		sh -c '[ "$0" -eq 2 ] && grep -q -F -e "'"'$w'"'" "$1"' "$rc" "$err"
done

# --- bad input --------------------------------------------------------------------------
bad() { # NAME WORD ARGS...: exit 2 and the message names WORD
	name=$1 word=$2
	shift 2
	tap_run probe "$@"
	tap_ok "$name: exit 2 naming '$word'" \
		sh -c '[ "$0" -eq 2 ] && grep -q -F -e "$1" "$2"' "$rc" "$word" "$err"
}
bad "reversed range" "5-2" --cpus 5-2
bad "junk CPU list" "abc" --cpus abc
bad "empty CPU list" "''" --cpus ""
bad "CPU not allowed" "99999" --cpus 99999
bad "budget 0" "'0'" --budget-ms 0
bad "budget not a number" "'fast'" --budget-ms fast
bad "budget too big" "'60001'" --budget-ms 60001
bad "smt mode" "'sideways'" --smt=sideways
bad "unknown option" "'--bogus'" --bogus
bad "stray argument" "'extra'" extra
bad "budget with kernel window" "--kernel-window" --budget-ms 5 --kernel-window
# Found by tests/fuzz/cli_args: numbers are decimal or 0x hex, as documented;
# strtoull's base 0 read "010" as octal 8 and skipped leading blanks.
tap_run probe --json --unaligned-scalar-speed=fast --budget-ms 010
tap_ok "--budget-ms 010 is ten ms, not octal" test "$(number "$out" budget_us)" = 10000
bad "budget with a leading blank" "' 5'" --budget-ms " 5"
tap_run probe --cpus
tap_ok "--cpus without a value: exit 2" status_is 2
tap_ok "--cpus without a value: says so" err_has "option '--cpus' needs a value"
# Messages say why (issue 9: "invalid CPU list" alone did not).
bad "CPU above the limit" "CPU 100000 is above the limit 65535" --cpus 100000
bad "reversed range says so" "range 1-0 is reversed" --cpus 1-0
bad "trailing comma says so" "a CPU number is missing at the end" --cpus 0,
bad "junk after a number" "'x' after 1" --cpus 1x
# Numbers are decimal only: no hex, no sign (hex is decode's alone).
bad "budget in hex" "'0x10' (not a decimal number" --budget-ms 0x10
bad "budget with a sign" "'+5'" --budget-ms +5
bad "ambiguous abbreviation names the candidates" "option '--s' is ambiguous: --serial, --smt" --s
bad "unknown option: message and hint" "probe: unknown option '--x' (try 'hwtune probe --help')" --x
bad "a flag given a value" "option '--json' takes no value" --json=1
bad "--format word" "--format: invalid value 'xml'" --format=xml
bad "-- then an argument" "unexpected argument '--json'" -- --json
# Each documented bound accepted, one past it refused (--help after it: parse only).
tap_run probe --help
cp "$out" "$tap_dir/help"
bound_ok() { $HWTUNE probe "$@" --help >/dev/null 2>&1; }
bound_bad() { $HWTUNE probe "$@" --help >/dev/null 2>&1; [ $? -eq 2 ]; }
tap_ok "documented range: --budget-ms 1..60000" eval 'grep -q -F "1..60000" "$tap_dir/help" &&
	bound_ok --budget-ms 1 && bound_ok --budget-ms 60000 &&
	bound_bad --budget-ms 0 && bound_bad --budget-ms 60001'
tap_ok "documented range: --cpus numbers 0..65535" eval 'grep -q -F "0..65535" "$tap_dir/help" &&
	bound_ok --cpus 0 && bound_ok --cpus 65535 && bound_bad --cpus 65536 && bound_bad --cpus -1'
tap_run probe --json --unaligned-scalar-speed=fast --budget=7
tap_ok "--opt=value with an abbreviation (--budget=7)" test "$(number "$out" budget_us)" = 7000
tap_run probe --format=json --unaligned-scalar-speed=fast
tap_ok "--format=json is --json" eval 'status_is 0 && json_valid "$out"'
tap_run probe --json --format=text --unaligned-scalar-speed=fast
tap_ok "--format=text after --json: refused, naming both" \
	eval 'status_is 2 && err_has "--json and --format=text choose different output formats"'
for o in --per-cpu --format=prom; do
	tap_run probe $o --unaligned-scalar-speed=fast
	tap_ok "$o is accepted" status_is 0
done
# Empty is invalid, as for HWTUNE_DISABLE_MSIPOLLING (it used to mean unset).
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED= probe --no-cache
tap_ok "empty HWTUNE_UNALIGNED_SCALAR_SPEED: exit 2 naming it" \
	eval 'status_is 2 && err_has "HWTUNE_UNALIGNED_SCALAR_SPEED: invalid value '"''"'"'
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED= probe --unaligned-scalar-speed=slow
tap_ok "empty HWTUNE_UNALIGNED_SCALAR_SPEED: the flag beats it" status_is 0
# A failed write of stdout (it used to exit 1 silently).
if [ -w /dev/full ]; then
	$HWTUNE probe --unaligned-scalar-speed=fast > /dev/full 2> "$err"
	rc=$?
	tap_ok "probe >/dev/full: exit 1 and 'write error'" \
		eval 'status_is 1 && grep -q "^hwtune: write error: " "$err"'
	# the write's own reason, also for an output larger than stdio's buffer
	$HWTUNE probe --json --unaligned-scalar-speed=fast --unaligned-vector-speed=fast \
		> /dev/full 2> "$err"
	rc=$?
	tap_ok "probe --json >/dev/full: 'No space left on device'" \
		eval 'status_is 1 && grep -q "^hwtune: write error: No space left on device" "$err"'
	HWTUNE_UNALIGNED_SCALAR_SPEED=fast HWTUNE_UNALIGNED_VECTOR_SPEED=fast HWTUNE_DISABLE_MSIPOLLING=1 \
		$HWTUNE --json > /dev/full 2> "$err"
	rc=$?
	tap_ok "hwtune --json >/dev/full: 'No space left on device'" \
		eval 'status_is 1 && grep -q "^hwtune: write error: No space left on device" "$err"'
else
	tap_skip "probe >/dev/full" "no writable /dev/full"
fi

# --- measurement options ------------------------------------------------------------------
tap_run probe --json --no-cache --budget-ms 5
tap_ok "--budget-ms 5: budget_us 5000" test "$(number "$out" budget_us)" = 5000
tap_run probe --json --no-cache --kernel-window --cpus "$first"
tap_ok "--kernel-window: exits 0" status_is 0
tap_ok "--kernel-window: recorded" out_has '"kernel_window": true'
tap_ok "--kernel-window: one copy per sample" out_has '"reps": 1,'
tap_run probe --json --no-cache --smt=apart
tap_ok "--smt=apart: recorded in JSON" test "$(field "$out" smt)" = apart
tap_ok "--smt=apart: every allowed CPU" test "$(cpus_of "$out")" = "$allowed"
tap_run probe --json --no-cache --smt together
tap_ok "--smt together: recorded in JSON" test "$(field "$out" smt)" = together

# --- cache -------------------------------------------------------------------------------
cache=$XDG_CACHE_HOME/hwtune
tap_run probe --json
tap_ok "cache: first run measures" test "$(field "$out" source)" = measured
tap_ok "cache: file written" sh -c 'ls "$0"/misaligned-*.cache >/dev/null' "$cache"
f=$(ls "$cache"/misaligned-*.cache 2>/dev/null | head -n 1)
tap_ok "cache: file mode 0600" test "$(stat -c %a "$f" 2>/dev/null)" = 600
want=$(after "$out")
tap_run probe --json
tap_ok "cache: second run reads it" test "$(field "$out" source)" = "$want"
tap_ok "cache: hit recorded" hit_as_expected "$(field "$out" cache)" "$want"
tap_ok "cache: same CPUs" test "$(cpus_of "$out")" = "$allowed"
echo "cpu 0 3 1 1 1 1 1 1 1" >> "$f"
tap_run probe --json
tap_ok "cache: corrupt file is ignored" test "$(field "$out" source)" = measured
tap_ok "cache: corrupt file is reported" test "$(field "$out" cache_ignored)" = corrupt
want=$(after "$out")
tap_run probe --json
tap_ok "cache: corrupt file was rewritten" test "$(field "$out" source)" = "$want"
sed 's/^boot_id .*/boot_id 00000000-0000-0000-0000-000000000000/' "$f" > "$f.new" && mv "$f.new" "$f"
tap_run probe --json
# (its checksum no longer matches; a valid file of another boot: unit test cache_foreign_key_is_stale)
tap_ok "cache: a hand-edited file (boot id changed) is ignored" \
	test "$(field "$out" cache_ignored)" = corrupt -a "$(field "$out" source)" = measured
# Errors of the file or folder are reported as what they are, not "corrupt".
mv "$f" "$f.real" && ln -s "$f.real" "$f"
tap_run probe --json
tap_ok "cache: a symlinked cache file is reported as a symlink loop (never followed)" \
	test "$(field "$out" cache_ignored)" = "Too many levels of symbolic links"
rm -f "$f" "$f.real"
# hwtune's cache folder a symlink (to a folder of ours here; to / it wrote
# /misaligned-*.cache): refused the same way, nothing written through it
mv "$XDG_CACHE_HOME/hwtune" "$tap_dir/cache-target"
ln -s "$tap_dir/cache-target" "$XDG_CACHE_HOME/hwtune"
rm -f "$tap_dir/cache-target/"*
tap_run probe --json
tap_ok "cache: a symlinked cache folder is refused like a symlinked file (cache off, saying so)" \
	eval 'test "$(field "$out" cache)" = off &&
	      test "$(field "$out" cache_ignored)" = "Too many levels of symbolic links" &&
	      test -z "$(ls "$tap_dir/cache-target")"'
tap_run probe
tap_ok "cache: a symlinked cache folder: the text says the cache is off and why" \
	out_has "cache: off (no usable cache folder: Too many levels of symbolic links)"
rm -f "$XDG_CACHE_HOME/hwtune"
mv "$tap_dir/cache-target" "$XDG_CACHE_HOME/hwtune"
tap_run probe --no-cache
tap_ok "cache: --no-cache: the text says the cache is off and why" \
	out_has "cache: off (--no-cache or --system: neither read nor written)"
tap_run probe
tap_ok "cache: in use: no cache line in the text" eval '! out_has "cache: off"'
rm -f "$f"
mkdir "$f"
tap_run probe --json
tap_ok "cache: a folder in place of the file is reported as such" \
	test "$(field "$out" cache_ignored)" = "Is a directory"
rmdir "$f"
# A missing HOME is never created; with no XDG_CACHE_HOME the cache is off, saying why.
env -u XDG_CACHE_HOME HOME="$tap_dir/nohome/deeper" $HWTUNE probe --json --cpus "$first" \
	> "$out" 2> "$err"
rc=$?
tap_ok "cache: missing HOME: cache off with a reason" \
	eval 'status_is 0 && test "$(field "$out" cache)" = off &&
		test "$(field "$out" cache_ignored)" = "No such file or directory"'
tap_ok "cache: missing HOME is not created" test ! -e "$tap_dir/nohome"
: > "$tap_dir/file"
tap_run_env XDG_CACHE_HOME="$tap_dir/file" probe --json --cpus "$first"
tap_ok "cache: a file as XDG_CACHE_HOME: cache off, 'Not a directory'" \
	eval 'status_is 0 && test "$(field "$out" cache_ignored)" = "Not a directory"'
if [ "$(id -u)" -eq 0 ]; then
	# root passes mode bits: a chmod 000 folder would read fine
	tap_skip "cache: an unreadable cache folder is reported as 'Permission denied'" \
		"running as root, which bypasses permission bits"
else
	chmod 000 "$cache"
	tap_run probe --json --cpus "$first"
	tap_ok "cache: an unreadable cache folder is reported as 'Permission denied'" \
		test "$(field "$out" cache_ignored)" = "Permission denied"
	chmod 700 "$cache"
fi
tap_run probe --json --serial
tap_ok "cache: --serial measures anyway" test "$(field "$out" source)" = measured
tap_run probe --json --no-cache
tap_ok "cache: --no-cache measures" test "$(field "$out" source)" = measured
tap_ok "cache: --no-cache says off" test "$(field "$out" cache)" = off

# --- human output, main job ---------------------------------------------------------------
tap_run probe --no-cache --per-cpu
tap_ok "human: exits 0" status_is 0
tap_ok "human --per-cpu: one line per CPU" \
	test "$(grep -c '^cpu[0-9]*: ' "$out")" -eq "$(echo $allowed | wc -w)"
tap_ok "human: kernel-style ratio line" \
	sh -c 'grep -q "^cpu[0-9]*: .* [0-9]*\.[0-9][0-9]x byte access speed (" "$0" ||
	       grep -q "^cpu[0-9]*: .*unknown" "$0"' "$out"
tap_ok "human: summary line" out_has "summary: "
tap_ok "human: wall time line" out_has "wall time: "
tap_run --no-cache
tap_ok "main job: exits 0" status_is 0
tap_ok "main job: recommendation" out_has "recommendation: "
tap_run --bogus
tap_ok "main job: bad option exits 2" status_is 2
tap_ok "main job: bad option named" err_has "unknown option '--bogus' (try 'hwtune --help')"
tap_run --version extra
tap_ok "--version extra: exit 2 naming it" eval 'status_is 2 && err_has "'"'extra'"'"'
for v in --version -V --vers; do
	tap_run $v
	tap_ok "$v prints the version" eval 'status_is 0 && grep -q "^hwtune [0-9]" "$out"'
done
tap_run frobnicate
tap_ok "unknown command named" eval 'status_is 2 && err_has "unknown command '"'frobnicate'"'"'
tap_run -- probe
tap_ok "-- ends the options: 'probe' after it is no command" eval 'status_is 2 && err_has "'"'probe'"'"'
tap_run -h
tap_ok "-h prints the usage" eval 'status_is 0 && out_has "usage: hwtune"'
for o in --json --per-cpu --format=prom --format=text; do
	tap_run $o --help
	tap_ok "main job accepts $o" status_is 0
done

# --- issue 10: vector units, split penalties, identities, the system file -----------------
arch=$(uname -m)
[ "$native" = no ] && arch=$(echo "$HWTUNE" | sed -n 's/.*qemu-\([a-z0-9_]*\).*/\1/p')
py() { [ "$have_py" = yes ] || return 0; json_is "$@"; }
have_py=no
command -v python3 >/dev/null 2>&1 && have_py=yes
json_is() { # FILE PYTHON-EXPRESSION over d (d = the "probe" object)
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["probe"]; sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
vkeys='{"unit", "speed", "ratio", "word_ns", "byte_ns", "samples", "fault_signal", "hwprobe", "notes", "source"}'
skeys='{"line_load", "line_store", "page_load", "page_store"}'
tap_run probe --json --no-cache
save v.json
tap_ok "vector: every CPU has vector with the agreed keys" \
	py "$out" "all($vkeys <= set(c['vector']) for c in d['cpus'])"
if [ "$arch" = x86_64 ]; then
	tap_ok "vector: x86_64 has an avx2 object" \
		py "$out" "all($vkeys <= set(c['avx2']) and c['avx2']['unit'] == 'avx2' for c in d['cpus']) and d['avx2_summary'] is not None"
	tap_ok "vector: x86_64's main unit is sse2" py "$out" "all(c['vector']['unit'] == 'sse2' for c in d['cpus'])"
else
	tap_ok "vector: avx2 is null off x86_64" \
		py "$out" "all(c['avx2'] is None for c in d['cpus']) and d['avx2_summary'] is None"
	tap_skip "vector: x86_64's main unit is sse2" "not x86_64"
fi
# AVX-512 where the CPU and the OS have it (the kernel's flags drop a unit
# whose state XCR0 leaves off), else null as AVX2 off x86_64
has512=no
if [ "$arch" = x86_64 ] && [ "$native" = yes ]; then
	flags=$(grep -m1 '^flags' /proc/cpuinfo)
	case "$flags " in *" avx512f "*) case "$flags " in *" avx512bw "*)
		case "$flags " in *" avx512vl "*) has512=yes ;; esac ;; esac ;; esac
fi
if [ "$has512" = yes ]; then
	tap_ok "vector: avx512 measured where the CPU has it" \
		py "$out" "all($vkeys <= set(c['avx512']) and c['avx512']['unit'] == 'avx512' and c['avx512']['source'] == 'measured' for c in d['cpus']) and d['avx512_summary'] is not None"
else
	tap_ok "vector: avx512 is null without the unit ($arch)" \
		py "$out" "all(c['avx512'] is None for c in d['cpus']) and d['avx512_summary'] is None"
fi
tap_ok "split: every CPU has the four split ratios" py "$out" "all($skeys <= set(c['split']) for c in d['cpus'])"
tap_ok "core: every CPU names its core" py "$out" "all(isinstance(c['core'], str) and c['core'] for c in d['cpus'])"
tap_ok "top level: vector_summary, avx2_summary, avx512_summary, groups, system_status" \
	py "$out" "{'vector_summary', 'avx2_summary', 'avx512_summary', 'groups', 'system_status'} <= set(d)"
tap_ok "groups cover every CPU once" \
	py "$out" "sorted(x for g in d['groups'] for p in g['cpus'].split(',') for x in range(int(p.split('-')[0]), int(p.split('-')[-1]) + 1)) == [c['cpu'] for c in d['cpus']]"
tap_ok "groups: agreed keys" \
	py "$out" "all({'cpus', 'core', 'speed', 'vector_speed', 'ratio_min', 'ratio_max'} <= set(g) for g in d['groups']) and d['groups']"
tap_ok "--no-cache: the system file is not read (system_status null)" py "$out" "d['system_status'] is None"
if [ "$native" = yes ]; then
	tap_ok "split: measured natively (ratios > 0)" \
		py "$out" "all(c['split'][k] and c['split'][k] > 0 for c in d['cpus'] for k in $skeys)"
else
	tap_skip "split: measured natively (ratios > 0)" "verdicts under an emulator are TCG's"
fi

# overrides of the vector units
tap_run probe --json --no-cache --unaligned-vector-speed=slow
tap_ok "--unaligned-vector-speed=slow: every vector unit slow, source override" \
	py "$out" "all(c['vector']['speed'] == 'slow' and c['vector']['source'] == 'override' for c in d['cpus']) and d['vector_summary'] == 'slow'"
tap_ok "--unaligned-vector-speed=slow: the scalar verdict is still measured" \
	test "$(field "$out" source)" = measured
# as AVX2: set on x86_64 whether the CPU has it or not, absent elsewhere
# and where the build has no vector loops (NO_ASM=1)
tap_ok "--unaligned-vector-speed=slow: avx512 as avx2" \
	py "$out" "all((c['avx512'] is None and c['avx2'] is None) or (c['avx512'] == dict(c['avx2'], unit='avx512') and c['avx512']['speed'] == 'slow') for c in d['cpus']) and d['avx512_summary'] == d['avx2_summary']"
if [ "$arch" = x86_64 ] && py "$out" "d['cpus'][0]['avx2'] is not None"; then
	tap_ok "--unaligned-vector-speed=slow: x86_64's avx512 is set" \
		py "$out" "all(c['avx512']['speed'] == 'slow' and c['avx512']['source'] == 'override' for c in d['cpus']) and d['avx512_summary'] == 'slow'"
	tap_run probe --no-cache --unaligned-vector-speed=slow
	tap_ok "text: the avx512 unit beside avx2, and in the summary" \
		sh -c 'grep -q "; avx2: set to .slow. (2) by override ; avx512: set to .slow. (2) by override$" "$1" &&
			grep -q "avx2: slow, avx512: slow$" "$1"' sh "$out"
	tap_run probe --no-cache --unaligned-vector-speed=fast --format=prom
	tap_ok "prom: an avx512 unit" out_has ',unit="avx512"} 3'
else
	tap_ok "--unaligned-vector-speed=slow: no avx512 off x86_64 or without vector loops" \
		py "$out" "all(c['avx512'] is None for c in d['cpus']) and d['avx512_summary'] is None"
	tap_skip "text: the avx512 unit beside avx2, and in the summary" "not x86_64, or no loops"
	tap_skip "prom: an avx512 unit" "not x86_64, or no loops"
fi
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=unsupported probe --json --no-cache
tap_ok "env vector unsupported: every vector unit unsupported" \
	py "$out" "all(c['vector']['speed'] == 'unsupported' for c in d['cpus']) and d['vector_summary'] == 'unsupported'"
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=unsupported probe --json --no-cache --unaligned-vector-speed fast
tap_ok "vector: the flag beats the variable" py "$out" "d['vector_summary'] == 'fast'"
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=quick probe --json
tap_ok "env vector with a bad word: exit 2 naming it" \
	eval 'status_is 2 && err_has "HWTUNE_UNALIGNED_VECTOR_SPEED: invalid value '"'quick'"'"'
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED= probe --json
tap_ok "empty HWTUNE_UNALIGNED_VECTOR_SPEED: exit 2 naming it" \
	eval 'status_is 2 && err_has "HWTUNE_UNALIGNED_VECTOR_SPEED: invalid value '"''"'"'
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=quick probe --json --unaligned-vector-speed=slow --unaligned-scalar-speed=slow
tap_ok "a bad vector variable is ignored when the flag is given" status_is 0
for w in emulated unknown SLOW ""; do
	bad "--unaligned-vector-speed='$w'" "'$w'" --unaligned-vector-speed="$w"
done
tap_run probe --json --unaligned-scalar-speed=fast --unaligned-vector-speed=fast
save both.json
tap_ok "both overrides: nothing probed (no split, no vector timing)" \
	py "$out" "d['source'] == 'override' and all(c['split']['line_load'] is None and c['vector']['word_ns'] == 0 for c in d['cpus'])"
tap_run probe --unaligned-scalar-speed=fast --unaligned-vector-speed=fast
tap_ok "both overrides, text: the vector line says override" out_has "vector (" 
tap_ok "both overrides, text: no split line" sh -c '! grep -q "split penalties" "$0"' "$out"

# human output and Prometheus
tap_run probe --no-cache
tap_ok "text: a vector line per group" sh -c 'grep -q "^  vector\( (.*)\)\?: " "$0"' "$out"
tap_ok "text: the summary names the vector summary" sh -c 'grep -q "^summary: .*; vector: [a-z]*" "$0"' "$out"
if [ "$native" = yes ]; then
	tap_ok "text: a split penalties line" \
		sh -c 'grep -q "^  split penalties: line load [0-9.-]*x, store [0-9.-]*x; page load [0-9.-]*x, store [0-9.-]*x$" "$0"' "$out"
else
	tap_skip "text: a split penalties line" "verdicts under an emulator are TCG's"
fi
tap_run probe --no-cache --per-cpu
tap_ok "text --per-cpu: a vector line per CPU" \
	test "$(grep -c '^  vector' "$out")" -eq "$(echo $allowed | wc -w)"
tap_run probe --no-cache --format=prom
for m in 'hwtune_misaligned_vector_speed{cpu="[0-9]*",unit="[a-z0-9]*"} [0-4]' \
	'hwtune_misaligned_vector_ratio{cpu="[0-9]*",unit="[a-z0-9]*"} [0-9]*\.[0-9][0-9]' \
	'hwtune_misaligned_vector_summary [0-4]' '# TYPE hwtune_misaligned_split_ratio gauge'; do
	tap_ok "prom: $m" grep -q "^$m\$" "$out"
done
if [ "$native" = yes ]; then
	tap_ok "prom: split ratios by kind" out_has ',kind="page_store"} '
else
	tap_skip "prom: split ratios by kind" "verdicts under an emulator are TCG's"
fi

# identities: a fake hybrid tree gives cpu0 "core" and cpu1 "atom" (x86 only)
tree=$(cd "$(dirname "$0")/../data/ident/x86-hybrid-2cpu" && pwd)
if [ "$native" = yes ] && [ "$arch" = x86_64 ] && [ "$allowed" = "0 1 " ]; then
	tap_run_env HWTUNE_ROOT="$tree" probe --no-cache
	tap_ok "hybrid: the lines name the core when CPUs differ" \
		eval 'grep -q "^cpu0 (x86 core (.*)): " "$out" && grep -q "^cpu1 (x86 atom (.*)): " "$out"'
	tap_run_env HWTUNE_ROOT="$tree" probe --no-cache --json
	tap_ok "hybrid: two groups with their cores" \
		py "$out" "[g['cpus'] for g in d['groups']] == ['0', '1'] and d['groups'][0]['core'].startswith('x86 core') and d['groups'][1]['core'].startswith('x86 atom') and d['cpus'][1]['core'].startswith('x86 atom')"
	tap_run probe --no-cache
	tap_ok "one identity: the group line names no core" sh -c '! grep -q "^cpus\? [0-9-]* (" "$0"' "$out"
else
	for n in "hybrid: the lines name the core when CPUs differ" "hybrid: two groups with their cores" \
		"one identity: the group line names no core"; do
		tap_skip "$n" "needs native x86_64 with CPUs 0 and 1 allowed"
	done
fi

# --system: exclusions, a failed write, the file used by later runs
bad "--system with --cpus" "--system and --cpus" --system --cpus "$first"
bad "--system with --no-cache" "--system and --no-cache" --system --no-cache
bad "--system with a scalar override" "--system and --unaligned-scalar-speed" --system --unaligned-scalar-speed=fast
bad "--system with a vector override" "--system and --unaligned-vector-speed" --system --unaligned-vector-speed=fast
tap_run_env HWTUNE_UNALIGNED_SCALAR_SPEED=fast probe --system
tap_ok "--system with HWTUNE_UNALIGNED_SCALAR_SPEED: exit 2 naming it" \
	eval 'status_is 2 && err_has "--system and HWTUNE_UNALIGNED_SCALAR_SPEED"'
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=fast probe --system
tap_ok "--system with HWTUNE_UNALIGNED_VECTOR_SPEED: exit 2 naming it" \
	eval 'status_is 2 && err_has "--system and HWTUNE_UNALIGNED_VECTOR_SPEED"'
: > "$tap_dir/plain"
tap_run_env HWTUNE_RUNTIME_DIR="$tap_dir/plain/sub" probe --system
tap_ok "--system, unwritable folder: exit 1 naming the path and the reason" \
	eval 'status_is 1 && err_has "hwtune probe: --system: cannot write $tap_dir/plain/sub/misaligned-$arch.result: Not a directory"'
tap_ok "--system, unwritable folder: the report is printed anyway" out_has "summary: "
tap_run probe --json
tap_ok "no system file: system_status says so" \
	test "$(field "$out" system_status)" = "No such file or directory"
tap_run probe --system --json
save system.json
sysfile=$HWTUNE_RUNTIME_DIR/misaligned-$arch.result
tap_ok "--system: exit 0, the report printed" eval 'status_is 0 && json_valid "$out"'
tap_ok "--system: measured fresh" test "$(field "$out" source)" = measured
tap_ok "--system: the file is written, mode 0644" test "$(stat -c %a "$sysfile" 2>/dev/null)" = 644
if [ "$(id -u)" -eq 0 ]; then
	tap_run probe --json
	tap_ok "after --system: source system, every CPU from it" \
		py "$out" "d['source'] == 'system' and all(c['source'] == 'system' for c in d['cpus']) and d['system_status'] is None"
	tap_ok "after --system: the same verdicts" \
		test "$(speeds_of "$out")" = "$(speeds_of "$tap_dir/system.json")"
	tap_run probe
	tap_ok "after --system, text: source system" \
		eval 'out_has "[system result: " && out_has "(system, "'
	tap_run --json
	tap_ok "after --system: the main job answers from it too" \
		py "$out" "d['source'] == 'system'"
	tap_run probe --json --no-cache
	tap_ok "after --system: --no-cache skips it" test "$(field "$out" source)" = measured
	chmod 0666 "$sysfile"
	tap_run probe
	tap_ok "a world-writable system file: the text says why it was not trusted" \
		out_has "note: the system result was ignored: not trusted: writable by group or others"
	tap_run probe --json
	tap_ok "a world-writable system file: system_status says why" \
		test "$(field "$out" system_status)" = "not trusted: writable by group or others"
	chmod 0644 "$sysfile"
	echo "cpu 0 3 1 1 1" >> "$sysfile"
	tap_run probe --json
	tap_ok "a corrupt system file is ignored, saying so" \
		eval 'test "$(field "$out" system_status)" = corrupt && test "$(field "$out" source)" != system'
else
	tap_run probe --json
	tap_ok "a system file not owned by root is ignored" \
		test "$(field "$out" system_status)" = "not trusted: not owned by root"
	for n in "after --system: the same verdicts" "after --system, text: source system" \
		"a world-writable system file: the text says why it was not trusted" \
		"a world-writable system file: system_status says why" \
		"after --system: the main job answers from it too" "after --system: --no-cache skips it" \
		"a corrupt system file is ignored, saying so"; do
		tap_skip "$n" "the system file is trusted only when owned by root"
	done
fi
rm -f "$sysfile"

# --system covers every online CPU whatever the caller's affinity, or refuses
online=$(expand_list "$(cat /sys/devices/system/cpu/online 2>/dev/null)")
first_online=${online%% *}
if [ "$native" = no ]; then
	tap_skip "--system under taskset -c $first_online: every online CPU in the file" "native only"
elif ! command -v taskset >/dev/null 2>&1; then
	tap_skip "--system under taskset -c $first_online: every online CPU in the file" "no taskset"
elif [ "$(echo "$online" | wc -w)" -lt 2 ]; then
	tap_skip "--system under taskset -c $first_online: every online CPU in the file" \
		"only one CPU online"
else
	timeout -k 5 "$TAP_TIMEOUT" taskset -c "$first_online" $HWTUNE probe --system --json \
		> "$out" 2> "$err"
	rc=$?
	tap_ok "--system under taskset -c $first_online: every online CPU in the file" \
		eval 'status_is 0 && test "$(cpus_of "$out")" = "$online" &&
		      test "$(grep -c "^cpu " "$sysfile")" -eq "$(echo "$online" | wc -w)"'
fi
rm -f "$sysfile"
# an online CPU out of reach (a fake tree whose online list names CPU 4000)
fake=$tap_dir/fake-online
mkdir -p "$fake/sys/devices/system/cpu" "$fake/proc/sys/kernel/random"
printf '%s,4000\n' "${first_online:-0}" > "$fake/sys/devices/system/cpu/online"
echo 0b7e6a4c-1d2f-4a8e-9c3b-5f6d7e8f9a0b > "$fake/proc/sys/kernel/random/boot_id"
echo 6.6.0-fake > "$fake/proc/sys/kernel/osrelease"
cp /proc/cpuinfo "$fake/proc/cpuinfo"
tap_run_env HWTUNE_ROOT="$fake" probe --system
tap_ok "--system, an online CPU out of reach: exit 1 naming it, nothing written" \
	eval 'status_is 1 && test ! -e "$sysfile" &&
	      err_has "hwtune probe: --system: cannot run on CPU 4000 (cpuset or offline): " &&
	      err_has "the system result must cover every online CPU; nothing written"'
# a CPU whose measurement comes out unknown is probed again; unknown on
# every try, the call names the CPUs and writes nothing (test-hwtune: the seam)
HWTUNE="${shipped%hwtune}test-hwtune"
tap_run_env HWTUNE_TEST_UNKNOWN=1 probe --system
tap_ok "--system, one measurement unknown: probed again, every online CPU in the file" \
	eval 'status_is 0 && test "$(grep -c "^cpu " "$sysfile")" -eq "$(echo "$online" | wc -w)"'
rm -f "$sysfile"
tap_run_env HWTUNE_TEST_UNKNOWN=100000 probe --system
tap_ok "--system, unknown on every try: exit 1 naming the CPUs, nothing written" \
	eval 'status_is 1 && test ! -e "$sysfile" &&
	      err_has "hwtune probe: --system: no verdict on CPU" &&
	      err_has " after 3 probes (each preempted or starved until its budget ran out): "'
HWTUNE=$shipped

# the main job honours HWTUNE_UNALIGNED_VECTOR_SPEED
tap_run --help
tap_ok "main job --help documents HWTUNE_UNALIGNED_VECTOR_SPEED and HWTUNE_RUNTIME_DIR" \
	eval 'out_has HWTUNE_UNALIGNED_VECTOR_SPEED= && out_has HWTUNE_RUNTIME_DIR='
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=bogus --json
tap_ok "main job: a bad HWTUNE_UNALIGNED_VECTOR_SPEED: exit 2 naming it" \
	eval 'status_is 2 && err_has "'"'bogus'"'"'
tap_run_env HWTUNE_UNALIGNED_VECTOR_SPEED=slow --json --no-cache
tap_ok "main job: HWTUNE_UNALIGNED_VECTOR_SPEED=slow is honoured" py "$out" "d['vector_summary'] == 'slow'"

tap_end
