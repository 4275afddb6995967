/* SPDX-License-Identifier: MIT */
/*
 * Promela model of the space sleepers of src/cmdq/cmdq.c (the Z/L
 * handshake on space_evt, the baton, the refresher and the hand-on),
 * checked with SPIN by tests/model/run.sh.  See tests/model/space.md.
 *
 * What is kept of the queue: the shadow word llq as `used` (prod - cons of
 * the shadow: entries not yet freed in it), `waiters` and `cabs` (the
 * shadow cons without wrapping, so that a sleeper can tell a moved cons);
 * the device as `hwdone` (CONS - shadow cons: consumed, not yet in the
 * shadow).  The futex word space_evt as {gen, kmin}: kmin the smallest k of
 * a sleeper of this generation (0: nobody may sleep on it; the code's
 * low bits), gen the generation.  The futex itself: asleep[i], set by a
 * futex_wait whose value still matches (atomically, as the kernel's
 * hash-bucket lock makes it), cleared by a futex_wake; which sleeper a
 * wake-one picks is left open (every order, not only the kernel's FIFO).
 *
 * Processes: W, a registered CMD_SYNC waiter (waiters = 1 at the start,
 * the queue full) that leaves once with what the device consumed by then
 * (a success or a timeout: the model does not care which); the device,
 * which consumes up to DEVMAX entries and may stop at any time (paused,
 * slow: only a deadline would end a wait on it); sleepers 0..NS-1 with k
 * entries each, running wait_for_space() and then reserving.
 *
 * One Promela statement is one access to shared state, as in cmdq.pml; a
 * CAS loop whose new value depends only on what it loaded is one statement.
 * SPIN interleaves under sequential consistency: the C11 argument that the
 * seq_cst operations, the sleeper's RMW read of llq (Z2) and the release
 * sequence of llq give this is in cmdq.c (the Z/L comment), not checked
 * here.  Not
 * modelled: the 2 us spin before a sleep (it delays, it decides nothing)
 * and the sleep's 10 ms bound and the call's deadline: the check is that no
 * sleeper needs them while the device makes progress or room exists.
 *
 * Property (checked when nothing can move any more, the `timeout` of the
 * monitor): P7_no_sleeper_left_behind: no sleeper is asleep while its k
 * fits in the shadow, nor while nobody is registered (then nobody will
 * ever move the shadow cons or wake it).  A sleeper asleep while a
 * refresher waits for a stopped device, with no room for it, is what the
 * code's deadline is for, and allowed.
 *
 * Parameters: NS sleepers (up to 4), K0..K3 their k, N queue slots, DEVMAX.
 * Broken variants, each must be caught:
 *   BROKEN_EARLY    the last leaver reads space_evt (L2) before its leave
 *                   CAS (L1): the Dekker pair's order reversed
 *   BROKEN_NOHANDON a sleeper that cannot fit does not hand the wake on to
 *                   a smaller one (before the fix: the smaller one waited
 *                   for the device or the 10 ms bound)
 *   BROKEN_HANDON_ONE the hand-on wakes one sleeper instead of ending the
 *                   generation (a chain of hand-ons misses a small
 *                   sleeper: four sleepers, k 2, 2, 2, 1)
 */
#include "common.pml"

#ifndef NS
#define NS 2
#endif
#ifndef N
#define N 4
#endif
#ifndef K0
#define K0 3
#endif
#ifndef K1
#define K1 1
#endif
#ifndef K2
#define K2 3
#endif
#ifndef K3
#define K3 1
#endif
#ifndef DEVMAX
#define DEVMAX 2
#endif
#ifndef BROKEN_EARLY
#define BROKEN_EARLY 0
#endif
#ifndef BROKEN_NOHANDON
#define BROKEN_NOHANDON 0
#endif
#ifndef BROKEN_HANDON_ONE
#define BROKEN_HANDON_ONE 0
#endif

#define FITS(u, k) (N - (u) >= (k))

byte used = N, waiters = 1, cabs, hwdone, devdone;
byte gen, kmin;
bit asleep[NS];
byte kof[NS];
hidden byte P7_no_sleeper_left_behind;

/* futex_wake(one): wake one sleeper (any), woke = 1 if there was one. */
inline wake_one(woke)
{
	atomic {
		woke = 0;
		if
		:: NS > 0 && asleep[0] -> asleep[0] = 0; woke = 1
		:: NS > 1 && asleep[1] -> asleep[1] = 0; woke = 1
		:: NS > 2 && asleep[2] -> asleep[2] = 0; woke = 1
		:: NS > 3 && asleep[3] -> asleep[3] = 0; woke = 1
		:: else
		fi
	}
}

/* futex_wake(all), in the step that ended the generation: a futex_wait
 * after that step finds a new value and returns at once, one before it is
 * woken by the wake that follows the step in the code. */
inline wake_all()
{
	asleep[0] = 0;
	if :: NS > 1 -> asleep[1] = 0 :: else fi;
	if :: NS > 2 -> asleep[2] = 0 :: else fi;
	if :: NS > 3 -> asleep[3] = 0 :: else fi
}

/* L2, L3 (wake_space_sleeper): wg/wk the value L2 read. */
inline wake_tail(wg, wk, woke)
{
	if
	:: wk == 0
	:: else ->
		wake_one(woke);                                 /* L3 */
		if
		:: woke
		:: else ->
			/* nobody asleep: end the generation (CAS), then wake all */
			atomic {
				if
				:: gen == wg && kmin == wk ->
					gen++; kmin = 0;
					wake_all()
				:: else
				fi
			}
		fi
	fi
}

inline wake_space_sleeper(wg, wk, woke)
{
	atomic { wg = gen; wk = kmin };                         /* L2 */
	wake_tail(wg, wk, woke);
	wg = 0; wk = 0; woke = 0                                /* dead: fewer states */
}

/* leave(): the last one out installs what it read of the device (r), and
 * (last, from the CAS's own result) wakes a sleeper. */
inline leave(r, wg, wk, woke, last)
{
#if BROKEN_EARLY
	atomic { wg = gen; wk = kmin };                         /* broken: L2 first */
#endif
	atomic {                                                /* L1: the leave CAS */
		waiters--;
		last = (waiters == 0);
		if
		:: last -> used = used - r; hwdone = hwdone - r; cabs = cabs + r
		:: else
		fi
	};
	if
	:: last ->
#if BROKEN_EARLY
		wake_tail(wg, wk, woke)
#else
		wake_space_sleeper(wg, wk, woke)
#endif
	:: else
	fi;
	last = 0
}

/*
 * The hand-on: a sleeper that cannot fit (u, the llq it loaded) ends the
 * generation and wakes all its sleepers (end_space_generation: a CAS loop
 * while KMIN is set, then futex_wake(all)) when one of a smaller k (km,
 * space_evt's field) would fit, once per shadow cons it saw (seen).
 * BROKEN_HANDON_ONE: it wakes one sleeper instead (the code before the
 * wake-all: a sleeper that reaches its Z3 after the chain passed is missed).
 */
inline hand_on(km, u, c, seen, wg, wk, woke)
{
	if
	:: !BROKEN_NOHANDON && km != 0 && km < k && FITS(u, km) && c != seen ->
		seen = c;
#if BROKEN_HANDON_ONE
		wake_space_sleeper(wg, wk, woke)
#else
		atomic {
			if
			:: kmin != 0 -> gen++; kmin = 0; wake_all()
			:: else
			fi
		}
#endif
	:: else
	fi
}

proctype W()
{
	byte r, wg, wk;
	bit woke, last;

	atomic { r = hwdone };                                  /* read CONS (A_CONS) */
	leave(r, wg, wk, woke, last)
}

proctype device()
{
	do
	:: devdone < DEVMAX && used - hwdone > 0 -> atomic { hwdone++; devdone++ }
	:: break
	od
}

proctype sleeper(byte i; byte k)
{
	byte u, w, c, eg, ek, seen = 255, wg, wk, r;
	bit woke, got, last;

	kof[i] = k;
	do
	:: atomic {                                             /* wait_for_space: A_LLQ */
		u = used; w = waiters; c = cabs;
		eg = 0; ek = 0; r = 0; got = 0                  /* dead: fewer states */
	   };
		if
		:: FITS(u, k) ->
			wake_space_sleeper(wg, wk, woke);       /* the baton */
			atomic {                                /* the reservation CAS */
				if
				:: used == u && waiters == w && cabs == c -> used = used + k; got = 1
				:: else -> got = 0
				fi
			};
			if
			:: got -> break
			:: else
			fi
		:: !FITS(u, k) && w == 0 ->
			atomic { ek = kmin };                   /* the hand-on's load (seq_cst) */
			hand_on(ek, u, c, seen, wg, wk, woke);
			atomic {                                /* refresh: register (CAS) */
				if
				:: used == u && waiters == 0 && cabs == c -> waiters++; got = 1
				:: else -> got = 0
				fi
			};
			if
			:: got ->
end_refresh:			hwdone > 0;                     /* CONS moved (or the deadline) */
				atomic { r = hwdone };          /* A_CONS */
				leave(r, wg, wk, woke, last)
			:: else
			fi
		:: !FITS(u, k) && w > 0 ->                      /* space_sleep */
			atomic {                                /* Z1: the CAS of space_evt */
				if
				:: kmin == 0 || kmin > k -> kmin = k
				:: else
				fi;
				eg = gen; ek = kmin
			};
			atomic { u = used; w = waiters; c = cabs }; /* Z2 (an RMW read) */
			if
			:: w > 0 && !FITS(u, k) ->
				hand_on(ek, u, c, seen, wg, wk, woke);
				atomic {                        /* Z3: futex_wait(e) */
					if
					:: gen == eg && kmin == ek -> asleep[i] = 1
					:: else
					fi
				};
end_sleep:			!asleep[i]
			:: else
			fi
		fi
	od
}

active proctype monitor()
{
	byte i;

	timeout;
	for (i : 0 .. NS - 1) {
		P7_no_sleeper_left_behind = !asleep[i] || (waiters > 0 && !FITS(used, kof[i]));
		assert(P7_no_sleeper_left_behind)
	}
}

init
{
	atomic {
		run W();
		run device();
		run sleeper(0, K0);
		if :: NS > 1 -> run sleeper(1, K1) :: else fi;
		if :: NS > 2 -> run sleeper(2, K2) :: else fi;
		if :: NS > 3 -> run sleeper(3, K3) :: else fi
	}
}
