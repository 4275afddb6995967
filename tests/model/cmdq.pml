/* SPDX-License-Identifier: MIT */
/*
 * Promela model of the command-queue protocol of src/cmdq/cmdq.c (driver
 * side) and src/device/consumer.c consume()/cmd_sync() (device side), checked
 * exhaustively with SPIN by tests/model/run.sh.  See tests/model/README.md.
 *
 * Two protocols, selected by FOLD:
 *   FOLD=1  the code (issue 7; the default): the waiter count is a field
 *           of llq, {prod, OWNED, cons, waiters}, and every update of it is
 *           one RMW of that word; there is no lock.
 *   FOLD=0  the code before issue 7, as the kernel: shadow llq {prod,
 *           OWNED, cons}, CMD_SYNC waiters counted in a separate
 *           shared/exclusive counter lock.
 *
 * One Promela statement is one access to shared state (an atomic, a plain
 * load or store of a register or a slot); purely local computation is folded
 * into the neighbouring statement with atomic/d_step.  A CAS loop whose new
 * value depends only on the value it loaded and on locals is one statement:
 * its failed tries change nothing.  SPIN explores every interleaving under
 * sequential consistency: the C11 orders (the A_x/R_x labels, quoted below
 * where each step sits) are assumed to give what they promise; they are not
 * checked here.
 *
 * Every spin loop of the code (owner hand-over, valid map, shared lock, the
 * device's doorbell, the MSI word, CONS) is a blocking guard on the
 * condition that ends it: a loop that keeps re-reading unchanged state does
 * nothing, so blocking loses no behaviour, and a loop that can never end
 * shows up as an invalid end state (P5).  A timeout exists only where the
 * code has a deadline on a device wait: the CMD_SYNC waits (with TIMEOUTS,
 * at most MAXTO abandons per run).  The space wait's deadline is not
 * modelled: the check is that it is not needed.
 *
 * Parameters (spin -D...): SHIFT (queue of 2^SHIFT slots), NP producers,
 * NCALLS calls each (CALLS0 for producer 0) of NCMD commands + CMD_SYNC,
 * NOSYNC (producer 1's first call has no CMD_SYNC), MSI (1: MSI polling,
 * 0: CONS polling), TIMEOUTS and MAXTO, DEFER (the device may publish CONS
 * late, as with cons_batch > 1), FOLD (above).
 * FOLD=0 only: REFRESH (0: the last waiter refreshes or skips,
 * nondeterministically; 1: the code's rule "only when less than half the
 * queue looks free"; 2: always, as the kernel does).
 * FOLD=1 only: OWNOPT (0: every reservation sets OWNED, as the kernel; 1: an
 * owner may leave OWNED clear and then publishes its own range without the
 * OWNED-clearing RMW; the choice is nondeterministic, so every policy for
 * it, e.g. "owner_prod != old prod", is covered, and OWNOPT=0 is one of them).
 *
 * Broken variants, each must make SPIN report an error (see README.md):
 *   BROKEN_A  device: CONS past the sync, then the MSI write; MSI waiter
 *             refreshes with sync+1 (the pre-review order) -- with TIMEOUTS
 *   BROKEN_B  FOLD=0: exclusive_unlock() resets the lock to 0 (pre-2025 kernel)
 *   BROKEN_C  FOLD=0: queue full: one exclusive try, then wait on the shadow only
 *   BROKEN_D  FOLD=0: shared_lock() after marking valid instead of before
 *   BROKEN_E  device order as now, but MSI waiter refreshes with sync+1
 *   BROKEN_F  FOLD=1: a leaving waiter that is not the last sets cons too
 *   BROKEN_G  FOLD=1: the space-wait refresh is one CAS that ignores the
 *             waiters (installs CONS while a waiter is registered)
 *   BROKEN_H  FOLD=1: a sync waiter registers (fetch_add) after marking
 *             valid, not in the reservation CAS
 *   BROKEN_I  FOLD=1: the last waiter decrements, then sets cons in a
 *             second RMW
 *   BROKEN_J  the owner publishes PROD without polling the valid map
 *   BROKEN_K  the owner stores owner_prod before PROD
 *   BROKEN_L  the owner does not wait for owner_prod (previous owner)
 *   BROKEN_M  FOLD=1 OWNOPT=1: the new OWNED bit comes from the hint
 *             alone, so a gatherer may clear it
 *   BROKEN_N  ownership from owner_prod: a reserver is owner iff owner_prod,
 *             loaded before the CAS, equals its start, else it gathers
 *   BROKEN_O  FOLD=1: the space-wait refresher leaves with the CONS it
 *             read before registering, not after
 *   BROKEN_P  FOLD=1 OWNOPT=1: an owner that left OWNED clear does not
 *             mark its entries valid (nobody polls them this lap)
 *   BROKEN_Q  FOLD=1: the space-wait refresh is one CAS expecting the
 *             loaded llq, with the CONS read after the load (the first
 *             folded design: ABA when llq shows the same value two laps on)
 *
 * Properties (a hidden bit named after each, so pan's message names it):
 *   P1 a producer never writes a slot the device has not consumed (for an
 *      MSI CMD_SYNC: whose MSI write has not happened)
 *   P2 the device executes every entry exactly once, in per-producer order
 *      (fetched slots hold a written entry; sequence numbers strictly rise;
 *      PROD never moves backwards; at the end every issued entry was
 *      executed and PROD is the shadow prod)
 *   P3 a CMD_SYNC wait that succeeds: everything its producer issued,
 *      the sync included, was executed
 *   P4 the shadow cons never moves backwards and never gets ahead of CONS;
 *      (FOLD=1) at the end no waiter is counted
 *   P5 no deadlock: pan's invalid-end-state check (the final check in init
 *      also blocks until the device drained every published entry)
 */

#ifndef SHIFT
#define SHIFT 2
#endif
#ifndef NP
#define NP 2
#endif
#ifndef NCALLS
#define NCALLS 2
#endif
#ifndef CALLS0
#define CALLS0 NCALLS                     /* producer 0 may make more calls */
#endif
#ifndef NCMD
#define NCMD 1
#endif
#ifndef NOSYNC
#define NOSYNC 0
#endif
#ifndef MSI
#define MSI 1
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 0
#endif
#ifndef MAXTO
#define MAXTO 1
#endif
#ifndef REFRESH
#define REFRESH 0
#endif
#ifndef DEFER
#define DEFER 1
#endif
#ifndef FOLD
#define FOLD 1
#endif
#ifndef OWNOPT
#define OWNOPT 0
#endif
/* LIVE, WAIT(c) (a spin loop of the code) and the slot encoding ENC/E_*. */
#include "common.pml"

#if FOLD && (BROKEN_B || BROKEN_C || BROKEN_D)
#error "BROKEN_B, C and D are variants of the counter lock: FOLD=0"
#endif
#if !FOLD && (BROKEN_F || BROKEN_G || BROKEN_H || BROKEN_I || BROKEN_M || BROKEN_O || BROKEN_Q || OWNOPT)
#error "BROKEN_F to I, M, O, Q and OWNOPT are variants of the folded shadow: FOLD=1"
#endif
#if (BROKEN_M || BROKEN_P) && !OWNOPT
#error "BROKEN_M and BROKEN_P need OWNOPT=1"
#endif

#if SHIFT == 2
#define N 4
#elif SHIFT == 3
#define N 8
#else
#error "SHIFT must be 2 or 3"
#endif
#define HALF (N / 2)
#define LMIN (-100)                       /* INT32_MIN of the counter lock */

/* src/bus/queue.h */
#define WRP(p) ((p) & N)
#define IDX(p) ((p) & (N - 1))
#define POS(p) ((p) & (2 * N - 1))
#define SPACE(pr, c) (WRP(pr) == WRP(c) -> N - (IDX(pr) - IDX(c)) : IDX(c) - IDX(pr))
#define HAS_SPACE(pr, c, k) (SPACE(pr, c) >= (k))
#define CONSUMED(c, pr) (WRP(c) == WRP(pr) -> IDX(c) > IDX(pr) : IDX(c) <= IDX(pr))
#define FULL(pr, c) (IDX(pr) == IDX(c) && WRP(pr) != WRP(c))


#define CALL_SYNC(p, call) ((NOSYNC && (p) == 1 && (call) == 0) -> 0 : 1)

/* --- shared state ------------------------------------------------------ */
byte slot[N];           /* queue memory (word0 of each entry) */
byte valid;             /* valid map: one 64-bit word in the code, N bits here */
byte llq_prod;          /* shadow llq: prod ...                     */
bit llq_own;            /* ... its OWNED bit (bit 31) ...           */
byte llq_cons;          /* ... and the shadow cons, CAS'd together  */
#if FOLD
byte llq_wait;          /* ... and the CMD_SYNC waiters (FOLD=1)    */
#else
short lock;             /* 0 free, > 0 shared count, LMIN + k exclusive */
#endif
byte owner_prod;
byte PROD, CONS;        /* the register file (regs.h) */

/* --- ghosts (never read by the protocol) --------------------------------- */
bit busy[N];            /* slot written, not yet consumed / MSI'd */
byte llq_prod_abs, llq_cons_abs, CONS_abs, PROD_abs; /* the pointers without wrapping */
byte lastexec[NP], execcnt[NP], issued[NP];
byte ndone, ntimeouts;
byte dcons;             /* the device's own cons (dev->cons) */
bit dbusy;
hidden byte P1_no_overwrite, P2_fetched_written, P2_once_in_order, P2_prod_forward,
	P2_all_executed, P2_prod_published, P3_sync_means_done, P4_no_backwards,
	P4_not_ahead, P4_waiters_drained;

/* One CAS or load of the whole shadow word, from/into the o_ locals. */
#if FOLD
#define LLQ_SAME (llq_prod == o_prod && llq_own == o_own && llq_cons == o_cons && llq_wait == o_wait)
#define LLQ_LOAD o_prod = llq_prod; o_own = llq_own; o_cons = llq_cons; o_wait = llq_wait
#else
#define LLQ_SAME (llq_prod == o_prod && llq_own == o_own && llq_cons == o_cons)
#define LLQ_LOAD o_prod = llq_prod; o_own = llq_own; o_cons = llq_cons
#endif

#if FOLD
/*
 * FOLD=1: the new shadow cons c replaces the cons field, in the statement of
 * the CAS that does it.  c is a WRP|IDX pointer: the ghost takes what it
 * means next to prod (prod_abs minus the distance the bits show), which is
 * the writer's CONS only if that read is within a lap of prod, and checks
 * P4 on that.  (c_abs, the writer's CONS as read, is not needed.)
 */
inline llq_put_cons(c, c_abs)
{
	t = llq_prod_abs - POS(llq_prod - c + 2 * N);
	P4_no_backwards = (t >= llq_cons_abs);
	assert(P4_no_backwards);
	P4_not_ahead = (t <= CONS_abs);
	assert(P4_not_ahead);
	llq_cons = c;
	llq_cons_abs = t;
	t = 0
}
#else
/*
 * llq_set_cons(): relaxed load of llq, then fetch_add of the difference to
 * the cons half (R_LLQ).  The ghost abs moves by the same signed difference
 * the refresher meant, so a racing second refresher shows up as a jump.
 */
inline llq_set_cons(c, c_abs)
{
	atomic { r_cons = llq_cons; r_abs = llq_cons_abs }
	d_step {
		t = llq_cons_abs + c_abs - r_abs;
		P4_no_backwards = (t >= llq_cons_abs);
		assert(P4_no_backwards);
		P4_not_ahead = (t <= CONS_abs);
		assert(P4_not_ahead);
		llq_cons = POS(llq_cons + c - r_cons + 2 * N);
		llq_cons_abs = t;
		r_cons = 0; r_abs = 0; t = 0
	}
}

/* exclusive_trylock(): CAS 0 -> INT32_MIN (A_XLOCK) */
inline exclusive_trylock()
{
	atomic { if :: lock == 0 -> lock = LMIN; got = 1 :: else -> got = 0 fi }
}

/* exclusive_unlock(): fetch_and INT32_MAX, clears only the sign bit (R_XUNLOCK) */
inline exclusive_unlock()
{
#if BROKEN_B
	lock = 0                        /* broken: the pre-2025 set_release(0) */
#else
	lock = lock - LMIN
#endif
}

/* shared_lock(): fetch_add 1 (A_SLOCK); if an exclusive holder was in,
 * wait until the value is > 0 (A_SLOCK). */
inline shared_lock()
{
	atomic { t = lock; lock++ }
	if
	:: t >= 0
	:: else -> WAIT(lock > 0)
	fi
}
#endif

/* The runs of the valid map covering [sp, ep): a run never crosses a lap. */
inline valid_runs(sp, ep)
{
	left = POS(ep - sp + 2 * N);
	cnt = (N - IDX(sp) < left -> N - IDX(sp) : left);
	m1 = ((1 << cnt) - 1) << IDX(sp);
	w1 = (WRP(sp) != 0 -> 0 : m1);   /* 1 on even laps, 0 on odd */
	left = left - cnt;
	m2 = (1 << left) - 1;
	w2 = (WRP(sp + cnt) != 0 -> 0 : m2)
}

#if FOLD
#if BROKEN_G
#define CAN_REFRESH(w) 1                  /* broken: ignores the waiters */
#else
#define CAN_REFRESH(w) ((w) == 0)
#endif
/*
 * FOLD=1 wait_for_space(), entered with o_ = the last load of llq and no
 * room for k.  While waiters > 0 nobody but the last waiter out may move
 * cons, so the wait just waits (the code sleeps on space_evt, a wake-up
 * that does not touch llq).  With none, the producer refreshes as a waiter
 * would: one CAS expecting that load registers it (A_LLQ), it reads CONS,
 * and leaves with it (R_LLQ).  The code registers whether or not the device
 * moved yet, and holds the registration until CONS differs from the shadow
 * (or it gives up): the read below may happen at any time after the CAS,
 * which covers that wait.  While it is registered the shadow cons cannot
 * move, so prod stays within a lap of it and the CONS it read: the leave
 * cannot install a stale value.
 */
inline wait_for_space()
{
	do
	:: HAS_SPACE(o_prod, o_cons, k) -> break
	:: else ->
		if
		:: CAN_REFRESH(o_wait) ->
			atomic { hw = CONS; c_abs = CONS_abs };  /* A_CONS: moved at all? */
#if BROKEN_Q || BROKEN_G
			/* broken: one CAS installs the CONS read after the load;
			 * an llq value seen again two laps later matches it (and
			 * with BROKEN_G it ignores the waiters, too) */
			atomic {
				if
				:: hw != o_cons && CAN_REFRESH(o_wait) && LLQ_SAME ->
					llq_put_cons(hw, c_abs)
				:: else
				fi
			};
#else
			/* moved or not (hw == o_cons), the code registers */
			atomic {                                /* register: CAS (A_LLQ) */
				if
				:: CAN_REFRESH(o_wait) && LLQ_SAME -> llq_wait++; got = 1
				:: else -> got = 0
				fi
			};
			if
			:: got ->
#if !BROKEN_O
				atomic { hw = CONS; c_abs = CONS_abs }; /* A_CONS */
#endif
				atomic {                        /* leave: CAS (R_LLQ) */
					llq_wait--;
					if
					:: llq_wait == 0 -> llq_put_cons(hw, c_abs)
					:: else
					fi
				}
			:: else
			fi;
#endif
			d_step { hw = 0; c_abs = 0; got = 0 }
		:: else
		fi;
		/* devwait_step(): nothing to do until one of these */
		WAIT(HAS_SPACE(llq_prod, llq_cons, k) || (CAN_REFRESH(llq_wait) && CONS != llq_cons));
		atomic { LLQ_LOAD }                                     /* A_LLQ */
	od
}
#else
/*
 * wait_for_space(): every step first refreshes the shadow cons under the
 * exclusive lock if the device moved, then re-reads llq.
 */
inline wait_for_space()
{
#if BROKEN_C
	/* broken: one exclusive refresh (as the kernel's poll_until_not_full),
	 * then watch only the shadow, never retrying the refresh */
	exclusive_trylock();
	if
	:: got ->
		atomic { c = CONS; c_abs = CONS_abs };
		llq_set_cons(c, c_abs);
		exclusive_unlock()
	:: else
	fi;
	atomic { LLQ_LOAD };
	do
	:: HAS_SPACE(o_prod, o_cons, k) -> break
	:: else ->
		HAS_SPACE(llq_prod, llq_cons, k);
		atomic { LLQ_LOAD }
	od
#else
	do
	:: atomic { hw = CONS };                                     /* A_CONS */
		if
		:: hw != o_cons ->
			exclusive_trylock();
			if
			:: got ->
				atomic { c = CONS; c_abs = CONS_abs };        /* A_CONS */
				llq_set_cons(c, c_abs);                      /* R_LLQ */
				exclusive_unlock();                          /* R_XUNLOCK */
				d_step { c = 0; c_abs = 0 }
			:: else
			fi
		:: else
		fi;
		atomic { hw = 0; got = 0; LLQ_LOAD }; /* A_LLQ */
		if
		:: HAS_SPACE(o_prod, o_cons, k) -> break
		:: else ->
			/* devwait_step(): nothing to do until one of these */
			WAIT(HAS_SPACE(llq_prod, llq_cons, k) || (CONS != llq_cons && lock == 0))
		fi
	od
#endif
}
#endif

proctype Producer(byte p)
{
	byte call, seq, n, k, i, j;
	bit sync, owner, gather, got, err;
	byte o_prod, o_cons; bit o_own;
#if FOLD
	byte o_wait;
#endif
#if BROKEN_N
	byte hint;
#endif
	byte sprod, sprod_abs, eprod, prod, prod_abs, syncp, sync_abs;
	byte hw, c, c_abs, r_cons, r_abs, r_prod;
	byte left, cnt, m1, w1, m2, w2;
	short t;

	do
	:: call == (p == 0 -> CALLS0 : NCALLS) -> break
	:: else ->
		d_step { n = NCMD; sync = CALL_SYNC(p, call); k = n + sync };

		/* 1. Reserve k entries: CAS the shadow llq (A_LLQ). */
#if BROKEN_N
		atomic { hint = owner_prod };   /* broken: ownership from this */
#endif
		atomic { LLQ_LOAD };
reserve:
		if
		:: !HAS_SPACE(o_prod, o_cons, k) -> wait_for_space()
		:: else
		fi;
		atomic {
			if
			:: LLQ_SAME ->
				sprod = o_prod;
				sprod_abs = llq_prod_abs;
				llq_prod = POS(o_prod + k);
				llq_prod_abs = llq_prod_abs + k;
#if FOLD && !BROKEN_H
				/* a sync waiter counts itself in the same CAS */
				llq_wait = llq_wait + sync;
#endif
				/* owner iff OWNED was clear */
#if BROKEN_N
				owner = (hint == o_prod);       /* broken */
				gather = owner;
				llq_own = 1
#elif OWNOPT
				owner = !o_own;
				if
				:: owner -> gather = 1; llq_own = 1   /* open gathering */
				:: owner -> gather = 0   /* publish alone: OWNED stays clear */
#if BROKEN_M
				:: !owner -> llq_own = 0 /* broken: a gatherer clears it */
#endif
				:: !owner                /* a gatherer leaves OWNED set */
				fi
#else
				owner = !o_own;
				gather = owner;
				llq_own = 1
#endif
			:: else ->
				LLQ_LOAD;
				goto reserve
			fi
		};
		eprod = POS(sprod + k);

		/* 2. Write the commands, then the CMD_SYNC (plain stores). */
		d_step {
			j = 0;
			do
			:: j < k ->
				i = IDX(sprod + j);
				P1_no_overwrite = !busy[i];
				assert(P1_no_overwrite);
				busy[i] = 1;
				seq++;
				slot[i] = ENC(p, (sync && j == n), seq);
				issued[p]++;
				j++
			:: else -> break
			od;
			syncp = POS(sprod + n);
			sync_abs = sprod_abs + n
		};
#if !FOLD && !BROKEN_D
		/* ... and a sync waiter takes the lock shared before its sync
		 * can be seen */
		if
		:: sync -> shared_lock()
		:: else
		fi;
#endif

		/* 3. Mark our entries valid (R_VALID): one fetch_xor per run.
		 * A lone owner too: the flips keep each slot's polarity in step
		 * with its lap for the next owner that polls it. */
		d_step { valid_runs(sprod, eprod) };
#if BROKEN_P
		if
		:: owner && !gather     /* broken: a lone owner does not flip */
		:: else ->
#endif
		valid = valid ^ m1;
		if
		:: m2 != 0 -> valid = valid ^ m2
		:: else
		fi;
#if BROKEN_P
		fi;
#endif
		d_step { left = 0; cnt = 0; m1 = 0; w1 = 0; m2 = 0; w2 = 0 };
#if BROKEN_H
		if
		:: sync -> llq_wait++   /* broken: registers after marking valid */
		:: else
		fi;
#endif

		/* 4. The owner publishes everything gathered so far. */
		if
		:: owner ->
#if BROKEN_L
			/* broken: no wait for the previous owner */
#else
			WAIT(owner_prod == sprod);                      /* a. A_OWNER */
#endif
			if
			:: gather ->
				atomic {                                /* b. fetch_and ~OWNED */
					prod = llq_prod;
					prod_abs = llq_prod_abs;
					llq_own = 0;
					valid_runs(sprod, prod)
				};
#if !BROKEN_J
				WAIT((valid & m1) == w1);               /* c. A_VALID */
				WAIT((valid & m2) == w2)
#endif
			:: else ->
				/* OWNED left clear: nobody gathered behind us, so
				 * publish our own range (whose valid bits are ours):
				 * no RMW of llq, no poll */
				d_step { prod = eprod; prod_abs = sprod_abs + k }
			fi;
#if BROKEN_K
			owner_prod = prod;                              /* broken: e. before d. */
#endif
			atomic {                                        /* d. D1 */
				P2_prod_forward = (prod_abs >= PROD_abs);
				assert(P2_prod_forward);
				PROD = prod;
				PROD_abs = prod_abs
			};
#if !BROKEN_K
			owner_prod = prod;                              /* e. R_OWNER */
#endif
			d_step { prod = 0; prod_abs = 0; left = 0; cnt = 0; m1 = 0; w1 = 0; m2 = 0; w2 = 0 }
		:: else
		fi;

#if BROKEN_D
		if
		:: sync -> shared_lock()        /* broken: after marking valid */
		:: else
		fi;
#endif

		/* 5. Wait for our CMD_SYNC: wait_for_sync(). */
		if
		:: sync ->
			err = 0;
#if MSI
			/* hwt__cmdq_poll_msi() (wait.c): the slot's word0 becomes 0 (A_MSI) */
			do
			:: atomic {
				slot[IDX(syncp)] == 0 ->
				P3_sync_means_done = (execcnt[p] == issued[p]);
				assert(P3_sync_means_done);
#if BROKEN_A || BROKEN_E
				c = POS(syncp + 1); c_abs = sync_abs + 1      /* broken */
#else
				c = syncp; c_abs = sync_abs     /* the sync's slot: not yet free */
#endif
			   };
				break
#if TIMEOUTS
			:: atomic { ntimeouts < MAXTO -> ntimeouts++; err = 1 };
				break
#endif
#if LIVE
			:: slot[IDX(syncp)] != 0 -> skip        /* spin */
#endif
			od;
#else
			/* hwt__cmdq_poll_consumed() (wait.c): CONS passes the sync (A_CONS) */
			do
			:: atomic { c = CONS; c_abs = CONS_abs };
				if
				:: atomic {
					CONSUMED(c, syncp) ->
					P3_sync_means_done = (execcnt[p] == issued[p]);
					assert(P3_sync_means_done)
				   };
					break
				:: else ->
					if
					:: CONS != c            /* hwt__wait_change32 */
#if LIVE
					:: CONS == c            /* spin: read CONS again */
#endif
#if TIMEOUTS
					:: atomic { ntimeouts < MAXTO -> ntimeouts++; err = 1 };
						break
#endif
					fi
				fi
			od;
#endif
			if
			:: err -> atomic { c = CONS; c_abs = CONS_abs }  /* read_cons() */
			:: else
			fi;

#if FOLD
			/* Leave: one CAS of llq (R_LLQ) decrements the waiters;
			 * the last one out sets cons to c in the same CAS. */
#if BROKEN_F
			atomic { llq_wait--; llq_put_cons(c, c_abs) }   /* broken: every waiter */
#elif BROKEN_I
			atomic { llq_wait--; got = (llq_wait == 0) };
			if
			:: got -> atomic { llq_put_cons(c, c_abs) }  /* broken: a second CAS */
			:: else
			fi
#else
			atomic {
				llq_wait--;
				if
				:: llq_wait == 0 -> llq_put_cons(c, c_abs)
				:: else
				fi
			}
#endif
#else
			/* The last waiter out refreshes the shadow cons. */
			atomic { t = lock };                            /* A_LAST */
			if
			:: t == 1 ->
#if REFRESH == 1
				atomic { r_prod = llq_prod; r_cons = llq_cons };
				if
				:: SPACE(r_prod, r_cons) < HALF && c != r_cons ->
					llq_set_cons(c, c_abs)          /* R_LLQ */
				:: else
				fi;
#elif REFRESH == 2
				llq_set_cons(c, c_abs);
#else
				if
				:: llq_set_cons(c, c_abs)                /* R_LLQ */
				:: skip          /* "at least half the queue looks free" */
				fi;
#endif
				lock--                                  /* R_SUNLOCK */
			:: else -> lock--                               /* R_SUNLOCK */
			fi
#endif
		:: else
		fi;
progress_call:	/* a call returned (LIVE: pan -l looks for cycles without one) */
		d_step {        /* forget this call's locals: fewer distinct states */
			call++;
			owner = 0; gather = 0; got = 0; err = 0;
			o_prod = 0; o_own = 0; o_cons = 0;
#if FOLD
			o_wait = 0;
#endif
#if BROKEN_N
			hint = 0;
#endif
			sprod = 0; sprod_abs = 0; eprod = 0; prod = 0; syncp = 0; sync_abs = 0;
			hw = 0; c = 0; c_abs = 0; r_cons = 0; r_abs = 0; r_prod = 0;
			left = 0; cnt = 0; m1 = 0; w1 = 0; m2 = 0; w2 = 0; t = 0
		}
	od;
	ndone++
}
/* The device: consumer() + consume() + cmd_sync(). */
proctype Device()
{
	byte pr, v, i, q, dabs, pub;

end_idle:
	do
	:: atomic { PROD != dcons -> pr = PROD; dbusy = 1 };     /* A_PROD */
		do
		:: dcons == pr -> break
		:: else ->
progress_exec:		atomic {                        /* fetch the entry at cons */
				i = IDX(dcons);
				v = slot[i];
				P2_fetched_written = (v != 0);
				assert(P2_fetched_written);
				q = E_PROD(v);
				P2_once_in_order = (q < NP && E_SEQ(v) > lastexec[q]);
				assert(P2_once_in_order);
				lastexec[q] = E_SEQ(v);
				execcnt[q]++;                   /* executed */
				if
				:: E_SYNC(v) == 0 || !MSI ->
					busy[i] = 0;            /* the slot is ours no more */
					dcons = POS(dcons + 1);
					dabs++
				:: else
				fi
			};
			if
			:: E_SYNC(v) && MSI ->
#if BROKEN_A
				/* broken: CONS past the sync, then the MSI */
				atomic { dcons = POS(dcons + 1); dabs++; CONS = dcons; CONS_abs = dabs; pub = dcons };
				atomic { slot[i] = 0; busy[i] = 0 }             /* R_MSI */
#else
				/* CONS up to the sync, the MSI, then CONS past it */
				if
				:: pub != dcons ->
					atomic { CONS = dcons; CONS_abs = dabs; pub = dcons } /* R_CONS */
				:: else
				fi;
				atomic { slot[i] = 0; busy[i] = 0 };            /* R_MSI */
				atomic { dcons = POS(dcons + 1); dabs++; CONS = dcons; CONS_abs = dabs; pub = dcons } /* R_CONS */
#endif
			:: E_SYNC(v) && !MSI ->
				atomic { CONS = dcons; CONS_abs = dabs; pub = dcons }  /* R_CONS past the sync */
			:: else ->
				/* R_CONS after each command, or (cons_batch > 1)
				 * later, by the end of what PROD showed */
				if
				:: atomic { CONS = dcons; CONS_abs = dabs; pub = dcons }
#if DEFER
				:: dcons != pr
#endif
				fi
			fi
		od;
		if
		:: pub != dcons -> atomic { CONS = dcons; CONS_abs = dabs; pub = dcons }
		:: else
		fi;
		d_step { dbusy = 0; pr = 0; v = 0; i = 0; q = 0 }
	od
}

init
{
	byte p;

	atomic {
		run Device();
		p = 0;
		do
		:: p < NP -> run Producer(p); p++
		:: else -> break
		od
	};
	/* Every call returned and the device drained what was published. */
	ndone == NP && !dbusy && dcons == PROD;
	d_step {
		P2_prod_published = (PROD == llq_prod && !llq_own);
		assert(P2_prod_published);
#if FOLD
		P4_waiters_drained = (llq_wait == 0);
		assert(P4_waiters_drained);
#endif
		p = 0;
		do
		:: p < NP ->
			P2_all_executed = (execcnt[p] == issued[p]);
			assert(P2_all_executed);
			p++
		:: else -> break
		od
	}
}
