#!/bin/sh
# SPDX-License-Identifier: MIT
# Model-check the command-queue protocols with SPIN, exhaustively: the shared
# ring (tests/model/cmdq.pml), the per-CPU queues with rseq insertion
# (tests/model/percpu.pml) and the shared ring's space sleepers
# (tests/model/space.pml), all including common.pml.  Print TAP: one line
# per configuration (no error, search complete), then one per deliberately
# broken variant (SPIN must find the expected violation, else the model
# proves nothing).  Every pan runs in a
# temporary directory, removed at exit; two run at a time.
# Usage: sh tests/model/run.sh   (MODEL_CC overrides the compiler for pan;
# MODEL_ONLY=egrep-pattern runs only the configurations whose name matches;
# MODEL_SLOW=1 adds the slow ones, below)
here=$(cd "$(dirname "$0")" && pwd)
cc=${MODEL_CC:-cc}

if ! command -v spin >/dev/null 2>&1; then
	echo "ok 1 - model check # SKIP spin not installed (Debian package spin: make deps)"
	echo "1..1"
	exit 0
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "ok 1 - model check # SKIP no C compiler ($cc) for pan"
	echo "1..1"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# name | spin -D defines | expected: "clean" or an egrep pattern of pan's first error
# [| model file, cmdq.pml when absent]
# Producers make NCALLS calls of NCMD commands + CMD_SYNC (CALLS0: producer 0).
# FOLD=1 is issue 7's protocol (waiters folded into llq), checked with
# OWNOPT=1, whose behaviours include those of OWNOPT=0 (README.md); FOLD=0 is
# the counter lock of the code before issue 7 (the kernel's).  Largest first: the lanes end together.
configs='
space q3 p3, sleepers of k 2, 1, 2 (a chain of hand-ons)|-DN=3 -DNS=3 -DK0=2 -DK1=1 -DK2=2 -DDEVMAX=1|clean|space.pml
live percpu q2 p2 cons, thread 0 issue then sync, thread 1 issue+sync (waiter lapped)|-DLIVE=1 -DMAXAB=1 -DMSI=0 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
live new q4 p3 cons|-DLIVE=1 -DFOLD=1 -DOWNOPT=1 -DMSI=0 -DNP=3 -DNCALLS=1 -DCALLS0=2|clean
new q8 p3 cons|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=3 -DMSI=0 -DNP=3 -DNCALLS=1|clean
live percpu q2 p2 msi, thread 0 issue then sync, thread 1 issue+sync (waiter lapped)|-DLIVE=1 -DMAXAB=1 -DMSI=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
live new q4 p3 msi|-DLIVE=1 -DFOLD=1 -DOWNOPT=1 -DMSI=1 -DNP=3 -DNCALLS=1 -DCALLS0=2|clean
live lock q4 p2 msi|-DLIVE=1 -DFOLD=0 -DMSI=1|clean
live new q4 p2 msi, whole-queue calls, producer 0 3 calls|-DLIVE=1 -DFOLD=1 -DOWNOPT=1 -DMSI=1 -DNCMD=3 -DCALLS0=3|clean
live new q4 p2 cons|-DLIVE=1 -DFOLD=1 -DOWNOPT=1 -DMSI=0|clean
live new q4 p2 msi|-DLIVE=1 -DFOLD=1 -DOWNOPT=1 -DMSI=1|clean
live new q4 p2 cons, whole-queue calls, producer 0 3 calls|-DLIVE=1 -DFOLD=1 -DOWNOPT=1 -DMSI=0 -DNCMD=3 -DCALLS0=3|clean
space q4 p2, sleepers of k 3, 1|-DK0=3 -DK1=1|clean|space.pml
space q4 p2, sleepers of k 1, 3|-DK0=1 -DK1=3|clean|space.pml
space q4 p2, sleepers of k 2, 2, device consumes up to 3|-DK0=2 -DK1=2 -DDEVMAX=3|clean|space.pml
percpu q2 p2 cons, thread 0 issue twice then sync, thread 1 issue+sync|-DMSI=0 -DCALLS0=3 -DNCALLS=1|clean|percpu.pml
percpu q4 p2 msi, 2 commands per issue|-DSHIFT=2 -DNCMD=2 -DMSI=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu q2 p2 cons, thread 0 issue then sync, thread 1 issue+sync (waiter lapped)|-DMSI=0 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu q2 p2 cons, thread 0 sync with an empty record, thread 1 issue+sync twice|-DMSI=0 -DCALLS0=1 -DNCALLS=2|clean|percpu.pml
percpu q2 p2 msi, thread 0 issue twice then sync, thread 1 issue+sync|-DMSI=1 -DCALLS0=3 -DNCALLS=1|clean|percpu.pml
percpu q2 p2 msi, thread 0 issue then sync, thread 1 issue+sync (waiter lapped)|-DMSI=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu q2 p2 msi, thread 0 sync with an empty record, thread 1 issue+sync twice|-DMSI=1 -DCALLS0=1 -DNCALLS=2|clean|percpu.pml
percpu q4 p2 msi into the sync slot, waiter waits for a change, 2 commands per issue|-DSHIFT=2 -DNCMD=2 -DMSI=1 -DSLOT_CHANGED=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu q2 p2 msi into the sync slot, waiter waits for a change (lapped)|-DMSI=1 -DSLOT_CHANGED=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
live percpu q2 p2 msi into the sync slot, waiter waits for a change (lapped)|-DLIVE=1 -DMAXAB=1 -DMSI=1 -DSLOT_CHANGED=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu sprod pinned publish q2 p3 msi, one call each|-DSPROD=2 -DNT=3 -DMSI=1 -DCALLS0=1 -DNCALLS=1|clean|percpu.pml
live percpu sprod q2 p2 msi into the sync slot, waiter waits for a change (lapped)|-DSPROD=1 -DLIVE=1 -DMAXAB=1 -DMSI=1 -DSLOT_CHANGED=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu sprod q2 p2 cons, thread 0 issue then sync, thread 1 issue+sync (waiter lapped)|-DSPROD=1 -DMSI=0 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu sprod q4 p2 msi, thread 0 issue then sync, thread 1 issue+sync|-DSPROD=1 -DSHIFT=2 -DMSI=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu sprod q2 p2 msi into the sync slot, waiter waits for a change (lapped)|-DSPROD=1 -DMSI=1 -DSLOT_CHANGED=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
percpu sprod pinned publish q2 p2 msi into the sync slot (lapped)|-DSPROD=2 -DMSI=1 -DSLOT_CHANGED=1 -DCALLS0=2 -DNCALLS=1|clean|percpu.pml
new q4 p3 msi, whole-queue calls, producer 0 3 calls|-DFOLD=1 -DOWNOPT=1 -DNCMD=3 -DMSI=1 -DNP=3 -DNCALLS=1 -DCALLS0=3|clean
new q4 p2 msi timeouts, whole-queue calls, producer 0 3 calls|-DFOLD=1 -DOWNOPT=1 -DNCMD=3 -DMSI=1 -DCALLS0=3 -DTIMEOUTS=1|clean
new q4 p2 cons timeouts, whole-queue calls, producer 0 3 calls|-DFOLD=1 -DOWNOPT=1 -DNCMD=3 -DMSI=0 -DCALLS0=3 -DTIMEOUTS=1|clean
lock q4 p2 msi, whole-queue calls, producer 0 3 calls|-DFOLD=0 -DNCMD=3 -DMSI=1 -DCALLS0=3|clean
new q8 p2 cons timeouts|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=3 -DMSI=0 -DTIMEOUTS=1|clean
new q4 p3 cons timeouts|-DFOLD=1 -DOWNOPT=1 -DMSI=0 -DNP=3 -DNCALLS=1 -DTIMEOUTS=1|clean
new q4 p3 cons|-DFOLD=1 -DOWNOPT=1 -DMSI=0 -DNP=3 -DNCALLS=1 -DCALLS0=2|clean
new q8 p3 msi, 1 command per call|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=1 -DMSI=1 -DNP=3 -DNCALLS=1 -DCALLS0=2|clean
new q8 p2 msi timeouts|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=3 -DMSI=1 -DTIMEOUTS=1|clean
new q4 p3 msi timeouts|-DFOLD=1 -DOWNOPT=1 -DMSI=1 -DNP=3 -DNCALLS=1 -DTIMEOUTS=1|clean
new q8 p2 msi no-sync call, timeouts, 1 command per call|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=1 -DMSI=1 -DNOSYNC=1 -DTIMEOUTS=1|clean
new q8 p2 cons no-sync call, 1 command per call, producer 0 3 calls|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=1 -DMSI=0 -DNOSYNC=1 -DCALLS0=3|clean
new q4 p2 cons timeouts|-DFOLD=1 -DOWNOPT=1 -DMSI=0 -DTIMEOUTS=1|clean
new q8 p2 cons|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=3 -DMSI=0|clean
new q4 p3 msi|-DFOLD=1 -DOWNOPT=1 -DMSI=1 -DNP=3 -DNCALLS=1 -DCALLS0=2|clean
new q4 p2 msi timeouts|-DFOLD=1 -DOWNOPT=1 -DMSI=1 -DTIMEOUTS=1|clean
new q4 p2 cons no-sync call, timeouts|-DFOLD=1 -DOWNOPT=1 -DMSI=0 -DNOSYNC=1 -DTIMEOUTS=1|clean
new q8 p3 msi|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=3 -DMSI=1 -DNP=3 -DNCALLS=1|clean
new q4 p2 msi no-sync call, timeouts|-DFOLD=1 -DOWNOPT=1 -DMSI=1 -DNOSYNC=1 -DTIMEOUTS=1|clean
new q4 p2 cons|-DFOLD=1 -DOWNOPT=1 -DMSI=0|clean
new q8 p2 msi|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=3 -DMSI=1|clean
new q4 p2 msi|-DFOLD=1 -DOWNOPT=1 -DMSI=1|clean
lock q4 p2 cons timeouts|-DFOLD=0 -DMSI=0 -DTIMEOUTS=1|clean
lock q4 p2 msi timeouts|-DFOLD=0 -DMSI=1 -DTIMEOUTS=1|clean
lock q8 p2 cons|-DFOLD=0 -DSHIFT=3 -DNCMD=3 -DMSI=0|clean
lock q4 p2 msi no-sync call, timeouts|-DFOLD=0 -DMSI=1 -DNOSYNC=1 -DTIMEOUTS=1|clean
lock q8 p3 msi|-DFOLD=0 -DSHIFT=3 -DNCMD=3 -DMSI=1 -DNP=3 -DNCALLS=1|clean
lock q8 p3 msi, 1 command per call|-DFOLD=0 -DSHIFT=3 -DNCMD=1 -DMSI=1 -DNP=3 -DNCALLS=1|clean
lock q4 p2 cons|-DFOLD=0 -DMSI=0|clean
lock q8 p2 msi|-DFOLD=0 -DSHIFT=3 -DNCMD=3 -DMSI=1|clean
lock q4 p2 msi|-DFOLD=0 -DMSI=1|clean
broken (a) late MSI, new|-DFOLD=1 -DMSI=1 -DTIMEOUTS=1 -DBROKEN_A=1|assertion violated P1_no_overwrite
broken (a) late MSI, lock|-DFOLD=0 -DMSI=1 -DTIMEOUTS=1 -DBROKEN_A=1|assertion violated P1_no_overwrite
broken (b) unlock to 0, lock|-DFOLD=0 -DMSI=1 -DBROKEN_B=1|assertion violated P4_
broken (b) unlock to 0, lock, liveness only (assertions off)|-DLIVE=1 -DFOLD=0 -DMSI=1 -DBROKEN_B=1|non-progress cycle
broken (c) no exclusive retry, lock|-DFOLD=0 -DMSI=1 -DREFRESH=2 -DBROKEN_C=1|invalid end state
broken (d) lock after valid, lock|-DFOLD=0 -DMSI=1 -DBROKEN_D=1|assertion violated P4_
broken (e) MSI refresh sync+1, new|-DFOLD=1 -DMSI=1 -DBROKEN_E=1|assertion violated P4_not_ahead
broken (e) MSI refresh sync+1, lock|-DFOLD=0 -DMSI=1 -DBROKEN_E=1|assertion violated P4_not_ahead
broken (f) non-last waiter sets cons, new|-DFOLD=1 -DMSI=1 -DBROKEN_F=1|assertion violated P4_no_backwards
broken (g) space refresh ignores waiters, new|-DFOLD=1 -DMSI=1 -DBROKEN_G=1|assertion violated P4_no_backwards
broken (h) waiter registers after valid, new msi|-DFOLD=1 -DMSI=1 -DBROKEN_H=1|assertion violated P4_no_backwards
broken (h) waiter registers after valid, new q4 p3 cons|-DFOLD=1 -DMSI=0 -DNP=3 -DNCALLS=1 -DCALLS0=2 -DBROKEN_H=1|invalid end state
broken (i) last waiter: decrement, then set cons, new|-DFOLD=1 -DMSI=1 -DBROKEN_I=1|assertion violated P4_no_backwards
broken (j) no valid poll, new|-DFOLD=1 -DMSI=1 -DBROKEN_J=1|assertion violated P2_
broken (j) no valid poll, lock|-DFOLD=0 -DMSI=1 -DBROKEN_J=1|assertion violated P2_
broken (k) owner_prod before PROD, new|-DFOLD=1 -DMSI=1 -DBROKEN_K=1|assertion violated P2_prod_forward
broken (k) owner_prod before PROD, lock|-DFOLD=0 -DMSI=1 -DBROKEN_K=1|assertion violated P2_prod_forward
broken (l) no owner_prod wait, new|-DFOLD=1 -DMSI=1 -DBROKEN_L=1|assertion violated P2_prod_forward
broken (l) no owner_prod wait, lock|-DFOLD=0 -DMSI=1 -DBROKEN_L=1|assertion violated P2_prod_forward
broken (m) gatherer clears OWNED, new q8 1 command per call|-DFOLD=1 -DOWNOPT=1 -DSHIFT=3 -DNCMD=1 -DMSI=1 -DNOSYNC=1 -DBROKEN_M=1|invalid end state
broken (n) ownership from owner_prod, new|-DFOLD=1 -DMSI=1 -DBROKEN_N=1|invalid end state
broken (o) refresher leaves with the CONS read before registering, new|-DFOLD=1 -DOWNOPT=1 -DNCMD=3 -DMSI=1 -DCALLS0=3 -DBROKEN_O=1|assertion violated P4_not_ahead
broken (p) lone owner does not mark valid, new|-DFOLD=1 -DOWNOPT=1 -DMSI=1 -DBROKEN_P=1|invalid end state
broken (q) space refresh in one CAS (ABA two laps on), new|-DFOLD=1 -DOWNOPT=1 -DNCMD=3 -DMSI=1 -DCALLS0=3 -DBROKEN_Q=1|assertion violated P4_not_ahead
broken (r) per-CPU: commit not last (PROD before the last entry)|-DCALLS0=2 -DNCALLS=1 -DBROKEN_COMMIT=1|assertion violated P[26]_|percpu.pml
broken (s) per-CPU: sync covers only the queue of the CPU it runs on|-DCALLS0=2 -DNCALLS=1 -DBROKEN_LOCAL=1|assertion violated P3_sync_all_queues|percpu.pml
broken (t) per-CPU: waiter polls its reused sync slot|-DCALLS0=2 -DNCALLS=1 -DBROKEN_SLOT=1|assertion violated P6_own_completion|percpu.pml
broken (x) per-CPU, MSI into the sync slot: waiter watches the next slot|-DCALLS0=2 -DNCALLS=1 -DSLOT_CHANGED=1 -DBROKEN_SLOT_IDX=1|assertion violated P6_own_completion|percpu.pml
broken (u) per-CPU: CONS wait without the idle rule|-DMSI=0 -DCALLS0=2 -DNCALLS=1 -DBROKEN_NOIDLE=1|invalid end state|percpu.pml
broken (u) per-CPU: CONS wait without the idle rule, liveness only (assertions off)|-DLIVE=1 -DMAXAB=1 -DMSI=0 -DCALLS0=2 -DNCALLS=1 -DBROKEN_NOIDLE=1|non-progress cycle|percpu.pml
broken (u2) per-CPU: the early look of the CONS wait takes the idle rule, PROD read after CONS|-DMSI=0 -DCALLS0=2 -DNCALLS=1 -DBROKEN_EARLY_IDLE=1|assertion violated P3_reached|percpu.pml
broken (z1) per-CPU sprod: the remote CAS-max as designed, q2 p3 (PROD a half lap past E)|-DSPROD=1 -DNT=3 -DMSI=1 -DCALLS0=1 -DNCALLS=1|assertion violated P2_prod_forward|percpu.pml
broken (z2) per-CPU sprod: remote plain store of PROD, q4|-DSPROD=1 -DSHIFT=2 -DMSI=1 -DCALLS0=2 -DNCALLS=1 -DBROKEN_REMOTE_STORE=1|assertion violated P2_prod_forward|percpu.pml
broken (z3) per-CPU sprod: a migrated thread does not publish, msi|-DSPROD=1 -DMSI=1 -DCALLS0=2 -DNCALLS=1 -DBROKEN_NO_REMOTE=1|invalid end state|percpu.pml
broken (z3) per-CPU sprod: a migrated thread does not publish, cons|-DSPROD=1 -DMSI=0 -DCALLS0=2 -DNCALLS=1 -DBROKEN_NO_REMOTE=1|assertion violated P3_reached|percpu.pml
broken (z4) per-CPU sprod: the publish outside a section, q4|-DSPROD=1 -DSHIFT=2 -DMSI=1 -DCALLS0=2 -DNCALLS=1 -DBROKEN_PUBLISH_OUTSIDE=1|assertion violated P2_prod_forward|percpu.pml
broken (z4) per-CPU sprod: the publish outside a section, pinned, q4|-DSPROD=2 -DSHIFT=2 -DMSI=1 -DCALLS0=2 -DNCALLS=1 -DBROKEN_PUBLISH_OUTSIDE=1|assertion violated P2_prod_forward|percpu.pml
broken (v) space: the last leaver reads space_evt before its leave CAS|-DBROKEN_EARLY=1|assertion violated P7_no_sleeper_left_behind|space.pml
broken (w) space: a woken sleeper that cannot fit does not hand on|-DBROKEN_NOHANDON=1|assertion violated P7_no_sleeper_left_behind|space.pml
broken (y) space: wake-one hand-on, q3, sleepers of k 2, 2, 2, 1|-DN=3 -DNS=4 -DK0=2 -DK1=2 -DK2=2 -DK3=1 -DDEVMAX=1 -DBROKEN_HANDON_ONE=1|assertion violated P7_no_sleeper_left_behind|space.pml
'

# MODEL_SLOW=1 adds the four-sleeper space check with the fix: too many
# states to search exhaustively here (> 74 million, past 4 GB), so a
# bitstate search (BITSTATE=1: -DBITSTATE, a 2^28-bit array), about 100 s
# and 40 MB; space.md has its coverage.
if [ "${MODEL_SLOW:-0}" = 1 ]; then
	configs="$configs
space q3 p4, sleepers of k 2, 2, 2, 1 (bitstate)|-DN=3 -DNS=4 -DK0=2 -DK1=2 -DK2=2 -DK3=1 -DDEVMAX=1 -DBITSTATE=1|clean|space.pml
"
fi

if [ -n "${MODEL_ONLY:-}" ]; then
	configs=$(echo "$configs" | grep -E -- "^[^|]*($MODEL_ONLY)[^|]*[|]")
fi

now_ms() {
	t=$(date +%s%N 2>/dev/null)
	case "$t" in
	*N | '') echo $(($(date +%s) * 1000)) ;;
	*) echo $((t / 1000000)) ;;
	esac
}

# check INDEX NAME DEFINES EXPECT MODEL: writes $tmp/INDEX.res ("ok|not ok" TAB text)
check() {
	d=$tmp/run$1
	mkdir "$d" && cp "$here/$5" "$here/common.pml" "$d/" || return
	(
		cd "$d" || exit 1
		if ! spin -a $3 "$5" > spin.out 2>&1; then
			printf 'not ok\t%s: spin -a failed\n' "$2"
			sed 's/^/# /' spin.out
			exit 0
		fi
		# SAFETY: assertions and invalid end states (P5); COLLAPSE
		# compresses the state vector; MEMLIM (1 GB) makes pan stop,
		# and us fail, rather than swap.
		# A broken variant fails within a few thousand states, where
		# compiling and pan's allocations dominate: -O0 compiles 3x
		# faster than -O2, and a 2^20-slot hash table (-w20) is set up
		# at once.  A clean run takes -O1 (within a few % of -O2 on
		# millions of states, compiled twice as fast) and the default
		# 2^24 slots.  -m20000: the deepest safety run reaches depth ~500,
		# the deepest liveness run ~1500.
		# LIVE=1 (liveness): pan -DNP looks for non-progress cycles
		# (-l) under weak fairness (-f): a spin loop nobody ends, a
		# reservation or sync wait that never returns; a broken one runs
		# with assertions off (-A), so that only the cycle can fail it.
		if [ "$4" = clean ]; then
			opt=-O1 hash=
		else
			opt=-O0 hash=-w20
		fi
		store=-DCOLLAPSE
		case " $3 " in
		*" -DBITSTATE=1 "*) store=-DBITSTATE hash=-w28 ;;
		esac
		case " $3 " in
		*" -DLIVE=1 "*)
			mode=-DNP run="-l -f"
			[ "$4" = clean ] || run="$run -A" ;;
		*) mode=-DSAFETY run= ;;
		esac
		if ! $cc $opt -w $mode $store -DMEMLIM=1024 -o pan pan.c > cc.out 2>&1; then
			printf 'not ok\t%s: cannot compile pan\n' "$2"
			sed 's/^/# /' cc.out
			exit 0
		fi
		t0=$(now_ms)
		./pan -m20000 $hash $run > pan.out 2>&1
		t1=$(now_ms)
		states=$(sed -n 's/^ *\([0-9][0-9.e+]*\) states, stored.*/\1/p' pan.out) # 1.01e+08 past 10^8
		mem=$(sed -n 's/^ *\([0-9.]*\).*total actual memory usage.*/\1/p' pan.out)
		errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out)
		first=$(grep -m1 -o 'assertion violated [A-Za-z0-9_]*\|invalid end state\|non-progress cycle' pan.out)
		depth=$(grep -m1 -o 'at depth [0-9]*' pan.out)
		reached=$(sed -n 's/.*depth reached \([0-9][0-9]*\).*/\1/p' pan.out)
		stats="${states:-?} states, depth ${reached:-?}, $((t1 - t0)) ms, ${mem:-?} MB"
		hf=$(sed -n 's/^hash factor: \([0-9.]*\).*/\1/p' pan.out) # bitstate: the coverage
		[ -z "$hf" ] || stats="$stats, hash factor $hf"
		if [ "$4" = clean ]; then
			if [ "$errors" = 0 ] && [ -n "$states" ] &&
			   ! grep -q 'MEMLIM\|out of memory\|too small\|Search not completed' pan.out; then
				printf 'ok\t%s: %s\n' "$2" "$stats"
			else
				printf 'not ok\t%s: %s (%s errors) %s %s\n' "$2" "$stats" \
					"${errors:-?}" "$first" "$depth"
				echo "# replay: cd a copy of tests/model && spin -a $3 $5 && cc $mode -o pan pan.c && ./pan $run && spin -t -p $3 $5"
				sed -n '1,25s/^/# /p' pan.out
			fi
		elif [ "${errors:-0}" -gt 0 ] && echo "$first" | grep -q "$4"; then
			printf 'ok\t%s is caught: %s (%s), %s\n' "$2" "$first" "$depth" "$stats"
		else
			printf 'not ok\t%s is caught: expected "%s", got %s errors %s\n' "$2" "$4" \
				"${errors:-?}" "$first"
			sed -n '1,25s/^/# /p' pan.out
		fi
	) > "$tmp/$1.res" 2>&1
	rm -rf "$d"
}

# Two lanes (this is a 2-core box); a lane runs the next configuration
# nobody claimed yet (mkdir is the atomic claim), so the lanes stay busy.
lane() {
	i=0
	echo "$configs" | while IFS='|' read -r name defs expect file; do
		[ -n "$name" ] || continue
		if mkdir "$tmp/claim$i" 2>/dev/null; then
			check "$i" "$name" "$defs" "$expect" "${file:-cmdq.pml}"
		fi
		i=$((i + 1))
	done
}
lane 0 &
lane 1 &
wait

n=0
failed=0
i=0
while [ -f "$tmp/$i.res" ]; do
	n=$((n + 1))
	{
		IFS='	' read -r verdict text
		echo "$verdict $n - $text"
		[ "$verdict" = ok ] || failed=$((failed + 1))
		cat
	} < "$tmp/$i.res"
	i=$((i + 1))
done
expected=$(echo "$configs" | grep -c '|')
if [ "$n" -ne "$expected" ]; then
	n=$((n + 1))
	echo "not ok $n - model check: only $((n - 1)) of $expected configurations reported"
	failed=$((failed + 1))
fi
echo "1..$n"
[ "$failed" -eq 0 ]
