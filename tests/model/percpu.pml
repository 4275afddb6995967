/* SPDX-License-Identifier: MIT */
/*
 * Promela model of the per-CPU command-queue protocol (docs/percpu-queues.md):
 * NQ = 2 CPUs, each with its own queue (PROD, CONS, slots); producer threads
 * that insert with a restartable sequence (rseq); one device that serves
 * both queues.  Checked exhaustively with SPIN by
 * tests/model/run.sh; see tests/model/percpu.md.
 *
 * The rseq path, as modelled:
 * - A call starts its critical section on a CPU the model picks: this is
 *   where migration happens (between calls, between issue and sync, and at
 *   every restart).  insec[c] names the thread inside a section on CPU c: a
 *   CPU runs one thread at a time, so a section starts only where none is
 *   in progress.
 * - Every step of the section is one atomic statement, and instead of any
 *   of them the thread may be aborted (a preemption, a migration, a
 *   signal): it goes to the abort handler, which restarts the call from
 *   the top, on any CPU.  What the aborted attempt stored (entries beyond
 *   PROD, the cached cons) stays in memory.  A thread preempted by another
 *   one on its CPU is one of these aborts: it does nothing more in that
 *   section.
 * - The section: (1) read PROD and the cached cons of the queue, (2) if
 *   there is no room, read CONS into the cache (a plain store in the
 *   section); if there still is none, leave the section and wait outside it,
 *   then restart, (3) write the entries (one store each), (4) the commit:
 *   one store of PROD, the last instruction.  No locked instruction: the
 *   per-CPU state (PROD, the cached cons, the free slots) is written only
 *   by sections on its CPU, and rseq makes those sections run one at a time.
 *   The entries' sequence numbers are fixed before the section: a restart
 *   writes the same commands again.
 * - A CMD_SYNC is the last entry of its call, inside the same section.
 *   Completion (MSI=1): the CMD_SYNC's MSI goes to a word of the waiting
 *   thread (msiword[p]) with MSIDATA = the sync's sequence number; the waiter
 *   waits until its word holds that number.  No slot is ever read for a
 *   completion, so laps of the queue while the waiter sleeps do not matter.
 *   Completion (MSI=0, CONS polling): wait_reached() below.
 * - Per-thread record: after each commit, used[q] = 1 and recp[q] = the
 *   PROD it stored.  A completed CMD_SYNC on q clears used[q].
 *   hwt_cmdq_sync(): a CMD_SYNC on the queue of the CPU it runs on, then,
 *   for every other queue still in the record, wait_reached(q, recp[q]).
 *
 * Positions: PROD and CONS are IDX | a lap counter of LAPBITS bits (the
 * lowest of which is SMMUv3's WRP): positions mod M = N << LAPBITS.  The
 * checks hold with LAPBITS = 1 (WRP alone): a waiter never gets a false
 * "done", and the idle rule of wait_reached() keeps it live.
 *
 * Parameters (spin -D...): SHIFT (queue of 2^SHIFT slots: 1 or 2), LAPBITS,
 * NT threads (2 or 3), NCALLS calls each, NCMD commands per issue, MSI (1:
 * per-thread MSI target; 0: CONS polling), DEFER (the device may publish
 * CONS late, by the end of what PROD showed), LIVE (liveness run; MAXAB
 * bounds the aborts of the whole run, else a thread aborted forever is a
 * non-progress cycle).
 * Calls (KIND): odd threads make NCALLS hwt_cmdq_issue(NCMD, sync=true);
 * even threads (thread 0: CALLS0 calls) make all but their last call
 * hwt_cmdq_issue(NCMD, sync=false), and the last one hwt_cmdq_sync().
 *
 * Broken variants, each must make SPIN report an error (percpu.md):
 *   BROKEN_COMMIT  the commit is not last: PROD is stored before the last
 *                  entry is written (the section still ends after it)
 *   BROKEN_LOCAL   hwt_cmdq_sync() syncs only the queue of the CPU it runs
 *                  on and forgets the rest of the record
 *   BROKEN_SLOT    MSI=1: the CMD_SYNC's MSI goes to its own slot and the
 *                  waiter polls that slot (the shared ring's way), which
 *                  producers of the queue reuse while it sleeps
 *   BROKEN_NOIDLE  CONS waits without the idle rule (only the lap compare)
 *   BROKEN_EARLY_IDLE  the CONS waits' early look (CONS alone, the lap
 *                  compare) also takes the idle rule, against a PROD read
 *                  after that CONS
 * The design built (docs/percpu-queues.md, section 3, section 8 item 7):
 *   SLOT_CHANGED   MSI=1: the MSI goes to the sync's own slot, as in
 *                  BROKEN_SLOT, but the waiter waits until the slot no
 *                  longer holds its own CMD_SYNC (any change: the MSI, or
 *                  a reuse, which needs CONS past the sync); P6 is then
 *                  "its CMD_SYNC has executed"
 *   BROKEN_SLOT_IDX=1  SLOT_CHANGED, but the waiter watches the slot after
 *                  its sync's (must be caught: the change test is only as
 *                  good as the slot it reads)
 *
 * SPROD (a private producer word; the section never loads PROD, which the
 * device polls):
 *   SPROD=1        per CPU queue q a private word SP[q] beside PROD[q].
 *                  Section 1 (rseq on CPU q) reads SP, checks room, writes
 *                  the entries and commits with one store SP[q] = SP + k
 *                  (the call counts as issued there).  Then the publish:
 *                  2a on CPU q, a second section: read SP[q] -> V, commit
 *                  PROD[q] = V (an abort starts the publish again, on any
 *                  CPU); 2b migrated off q: a remote CAS-max raising PROD[q]
 *                  to the call's end E unless REACHED(PROD[q], E), one
 *                  atomic step.  The space wait outside the section watches
 *                  CONS and SP.  With WRP|IDX positions this is WRONG: once
 *                  other producers' publishes moved PROD a half lap (N) or
 *                  more past E, the mod-M compare says "not yet" and the
 *                  CAS stores E, behind PROD (P2_prod_forward; 3 threads,
 *                  one call each, q2)
 *   SPROD=2        SPROD=1 without 2b: a migrated thread publishes with 2a
 *                  once it runs on CPU q again (pinned there)
 *   BROKEN_REMOTE_STORE     SPROD=1, 2b a plain store PROD[q] = E
 *   BROKEN_NO_REMOTE        SPROD=1, a migrated thread skips 2b
 *   BROKEN_PUBLISH_OUTSIDE  the local publish reads SP and stores PROD as two
 *                  plain steps, outside any section
 *
 * Properties (a hidden bit named after each):
 *   P1 a producer never writes a slot the device has not consumed
 *   P2 exactly once, in per-producer order per queue: fetched slots hold a
 *      written entry; a producer's sequence numbers strictly rise on each
 *      queue; no sequence number executes twice; at the end every issued
 *      entry was executed
 *      SPROD: PROD never moves backwards (P2_prod_forward)
 *   P3 hwt_cmdq_issue(sync=true) returns when everything its thread issued
 *      on that queue has executed; hwt_cmdq_sync() when everything its
 *      thread issued, on every queue, has; a CONS wait ends only when CONS
 *      really passed the position
 *   P6 a waiter takes its completion only from the write aimed at its own
 *      CMD_SYNC (MSI=1: the MSI that wrote its word came from its sync;
 *      BROKEN_SLOT: its slot still holds its sync; SLOT_CHANGED: its
 *      CMD_SYNC executed)
 *   P5 no deadlock (invalid end state); LIVE: every call returns (P7,
 *      non-progress cycles under weak fairness)
 */

#include "common.pml"

#ifndef SHIFT
#define SHIFT 1
#endif
#ifndef LAPBITS
#define LAPBITS 1
#endif
#ifndef NT
#define NT 2
#endif
#ifndef NCALLS
#define NCALLS 2
#endif
#ifndef CALLS0
#define CALLS0 NCALLS
#endif
#ifndef NCMD
#define NCMD 1
#endif
#ifndef MSI
#define MSI 1
#endif
#ifndef DEFER
#define DEFER 1
#endif
#ifndef MAXAB
#define MAXAB 2
#endif
#ifndef SPROD
#define SPROD 0
#endif
#if (BROKEN_REMOTE_STORE || BROKEN_NO_REMOTE) && SPROD != 1
#error "BROKEN_REMOTE_STORE and BROKEN_NO_REMOTE break SPROD=1's remote publish"
#endif
#if BROKEN_PUBLISH_OUTSIDE && !SPROD
#error "BROKEN_PUBLISH_OUTSIDE is an SPROD variant"
#endif

#if (BROKEN_SLOT || SLOT_CHANGED) && !MSI
#error "BROKEN_SLOT and SLOT_CHANGED are MSI variants: MSI=1"
#endif
#ifndef BROKEN_SLOT_IDX
#define BROKEN_SLOT_IDX 0
#endif
#if BROKEN_SLOT || SLOT_CHANGED
#define SLOTMSI 1
#else
#define SLOTMSI 0
#endif

#define NQ 2                                /* CPUs = queues */
#if SHIFT == 1
#define N 2
#elif SHIFT == 2
#define N 4
#else
#error "SHIFT must be 1 or 2"
#endif
#define M (N << LAPBITS)                    /* positions: IDX | lap counter */
#define NONE 255
#define IDX(p) ((p) & (N - 1))
#define DIST(a, b) (((a) + M - (b)) % M)    /* a - b, mod M */
#define HAS_SPACE(pr, c, k) (N - DIST(pr, c) >= (k))
#define REACHED(c, e) (DIST(c, e) < M / 2)  /* c at or past e */
#if BROKEN_NOIDLE
#define IDLE(c, x) 0
#else
#define IDLE(c, x) ((c) == (x))
#endif

/* calls: thread 0 makes CALLS0, the others NCALLS; kinds: 0 issue without
 * sync, 1 issue with sync (odd threads), 2 hwt_cmdq_sync() (even threads'
 * last call) */
#define NC(p) ((p) == 0 -> CALLS0 : NCALLS)
#define KIND(p, i) ((p) % 2 == 1 -> 1 : ((i) == NC(p) - 1 -> 2 : 0))
#define PQ(p, q) ((p) * NQ + (q))

/* --- shared state ------------------------------------------------------ */
byte slot[NQ * N];      /* queue memory (word0 of each entry) */
byte PROD[NQ], CONS[NQ];        /* each queue's registers */
byte ccons[NQ];         /* per-CPU cached CONS: written only inside sections */
byte msiword[NT];          /* per-thread MSI target (MSIDATA = sync's seq) */
byte insec[NQ] = NONE;  /* the thread inside an rseq section on CPU c (ghost-like:
                         * the scheduler's fact that a CPU runs one thread) */
byte dcons[NQ];         /* the device's own cons per queue */
#if SPROD
byte SP[NQ];            /* SPROD: the private producer word of CPU q ("sprod"),
                         * in a line only the producers touch; PROD[q] is the
                         * device's */
#endif

/* --- ghosts (never read by the protocol) --------------------------------- */
byte PROD_abs[NQ], CONS_abs[NQ], dabs[NQ];   /* positions without wrapping */
#if SPROD
byte SP_abs[NQ];
hidden byte P2_prod_forward;
#endif
byte lastexec[NT * NQ], execq[NT * NQ], issq[NT * NQ];
short seen[NT];         /* sequence numbers executed, one bit each */
byte done_src[NT];      /* queue * 64 + position of the sync whose MSI wrote msiword[] */
#if SLOTMSI
byte sown[NQ * N];      /* the entry last written into each slot */
#endif
byte ndone, naborts;
hidden byte P1_no_overwrite, P2_fetched_written, P2_once_in_order, P2_exactly_once,
	P2_all_executed, P3_sync_means_done, P3_sync_all_queues, P3_reached,
	P6_own_completion;

/*
 * Aborts: at every step of the section the thread may be aborted (a
 * preemption, a signal, a migration).  Unbounded in safety runs; in LIVE
 * runs MAXAB in all, else a thread aborted forever is a non-progress cycle.
 */
#if LIVE
#define ABORT_OK (naborts < MAXAB)
#define ABORT_CNT naborts++
#else
#define ABORT_OK 1
#define ABORT_CNT skip
#endif

/*
 * One step of the critical section on CPU c: done in one go, or instead the
 * abort handler (goto abort) with what earlier steps stored left in memory.
 */
#define SEC(body) \
	if \
	:: atomic { body } \
	:: atomic { ABORT_OK -> ABORT_CNT; insec[c] = NONE }; goto abort \
	fi

/* The same, aborting to label lbl (SPROD's publish section). */
#define SEC_TO(lbl, body) \
	if \
	:: atomic { body } \
	:: atomic { ABORT_OK -> ABORT_CNT; insec[c] = NONE }; goto lbl \
	fi

/*
 * rseq start on CPU cpu: read cpu_id (this is where a thread migrates),
 * then PROD and the cached cons of that CPU's queue (per-CPU words that only
 * this section can change while it runs).  A CPU runs one thread at a time:
 * a thread preempted inside its section on that CPU was aborted first (SEC),
 * so a section starts only on a CPU with no section in progress; the
 * preempted thread's later steps would all have been its abort.
 */
#if SPROD
/* SPROD: the section reads the private SP, never the device-polled PROD */
#define START(cpu) \
	atomic { insec[cpu] == NONE -> c = cpu; q = cpu; insec[cpu] = p; \
		pr = SP[q]; pr_abs = SP_abs[q]; cc = ccons[q] }
#define PRODW(wq) SP[wq]        /* the producers' word of queue wq */
#else
#define START(cpu) \
	atomic { insec[cpu] == NONE -> c = cpu; q = cpu; insec[cpu] = p; \
		pr = PROD[q]; pr_abs = PROD_abs[q]; cc = ccons[q] }
#define PRODW(wq) PROD[wq]
#endif

/* One entry, one store (P1: the slot is free). */
#define WRITE_ENTRY \
	P1_no_overwrite = (pr_abs + j < dabs[q] + N); \
	assert(P1_no_overwrite); \
	slot[q * N + IDX(pr + j)] = ENC(p, (sync && j == n), base + j + 1); \
	SOWN

#if SLOTMSI
#define SOWN sown[q * N + IDX(pr + j)] = ENC(p, (sync && j == n), base + j + 1)
#else
#define SOWN skip
#endif

/* The commit store: PROD (R_PROD, the doorbell).  The ghosts count the
 * call as issued here. */
#if SPROD
/* SPROD: the commit stores SP; the entries are in (issued), not yet
 * visible to the device */
#define PUBLISH \
	SP[q] = (pr + k) % M; SP_abs[q] = pr_abs + k; issq[PQ(p, q)] = issq[PQ(p, q)] + k
#else
#define PUBLISH \
	PROD[q] = (pr + k) % M; PROD_abs[q] = pr_abs + k; issq[PQ(p, q)] = issq[PQ(p, q)] + k
#endif

/* SPROD: a store of PROD[wq] = v (ghost va); PROD never moves backwards */
#define STORE_PROD(wq, v, va) \
	P2_prod_forward = ((va) >= PROD_abs[wq]); \
	assert(P2_prod_forward); \
	PROD[wq] = (v); PROD_abs[wq] = (va)

#define ALL_DONE(p, q) (execq[PQ(p, q)] == issq[PQ(p, q)])

/*
 * Wait until the device's CONS of queue wq is at or past position e (ea
 * its ghost): the CONS waits of MSI=0 and hwt_cmdq_sync()'s waits on other
 * queues.  First a look at CONS alone: done if the lap compare says so
 * (reached() in src/cmdq/percpu.c: it saves a load of PROD, a line the
 * device polls).  Else done when the lap compare says so, or (the idle
 * rule) when CONS equals a PROD read before it: then CONS is at or past
 * that PROD, which is at or past e, however many laps went by.  Else wait
 * until CONS or PROD changes, and look again (the C waits for a change of
 * CONS, bounded, and sees a new PROD at its next look).
 */
inline wait_reached(wq, e, ea)
{
	do
	:: atomic { hw = CONS[wq]; hw_abs = CONS_abs[wq] };            /* A_CONS */
#if BROKEN_EARLY_IDLE
		x = PROD[wq];
		if
		:: REACHED(hw, e) || IDLE(hw, x) -> skip /* decided below */
#else
		if
		:: REACHED(hw, e) -> skip                /* decided below */
#endif
		:: else ->
			atomic { x = PROD[wq] };                           /* A_XPROD */
			atomic { hw = CONS[wq]; hw_abs = CONS_abs[wq] }    /* A_CONS */
		fi;
		if
		:: REACHED(hw, e) || IDLE(hw, x) ->
			d_step {
				P3_reached = (hw_abs >= ea);
				assert(P3_reached);
				x = 0; hw = 0; hw_abs = 0
			};
			break
		:: else -> WAIT(CONS[wq] != hw || PROD[wq] != x)
		fi
	od;
	skip    /* a break may not land on a d_step */
}

proctype Thread(byte p)
{
	byte call, kind, n, k, j, c, q, pr, pr_abs, cc, hw, hw_abs, x, base, wq;
	bit sync;
#if BROKEN_COMMIT
	bit published;
#endif
	byte recp[NQ], reca[NQ];        /* per-thread record: PROD stored last */
	bit used[NQ];                   /* queues used since the last sync */

	do
	:: call == NC(p) -> break
	:: else ->
		d_step {
			kind = KIND(p, call);
			n = (kind == 2 -> 0 : NCMD);
			sync = (kind != 0);
			k = n + sync
		};
restart:
		/* rseq_start: any CPU (migration) */
		if
		:: START(0)
		:: START(1)
		fi;

		/* (1)-(2) room for k entries: by the cached cons, else by CONS */
		if
		:: HAS_SPACE(pr, cc, k)
		:: else ->
			SEC(hw = CONS[q]; cc = hw; ccons[q] = hw);  /* A_CONS; a plain store */
			if
			:: HAS_SPACE(pr, cc, k)
			:: else ->
				/* leave the section without a commit, wait outside
				 * until CONS or PROD moves: CONS alone can come back
				 * to the value we read, laps later (the queue was
				 * emptied and refilled by others meanwhile) */
				insec[c] = NONE;
				WAIT(CONS[q] != hw || PRODW(q) != pr);
				goto abort
			fi
		fi;

		/* (3) the entries, one store each */
		j = 0;
		do
		:: j == k -> break
		:: else ->
#if BROKEN_COMMIT
			if
			:: j == k - 1 && !published ->
				SEC(PUBLISH; published = 1)     /* broken: PROD before the last entry */
			:: else
			fi;
#endif
			SEC(WRITE_ENTRY);
			j++
		od;

		/* (4) the commit: one store of PROD, the section's last instruction */
#if BROKEN_COMMIT
		SEC(insec[c] = NONE);                   /* the section ends here */
#else
		SEC(PUBLISH; insec[c] = NONE);
#endif
		goto committed;
abort:
		/* the abort handler: start again, on whatever CPU we are now */
		skip;   /* a goto may not land on a d_step */
		d_step {
			j = 0; c = 0; q = 0; pr = 0; pr_abs = 0; cc = 0; hw = 0;
#if BROKEN_COMMIT
			published = 0
#endif
		};
		goto restart;
committed:
		/* after the commit: thread-local bookkeeping, not restartable */
		skip;
		d_step {
			used[q] = 1;
			recp[q] = (pr + k) % M;
			reca[q] = pr_abs + k;
			j = 0; c = 0; cc = 0; hw = 0;   /* fewer distinct states */
#if BROKEN_COMMIT
			published = 0;
#endif
			base = base + k
		};
#if SPROD
		/*
		 * SPROD, step 2: publish, so that PROD[q] is at or past our end
		 * E = recp[q] (ghost reca[q]).  The thread is on CPU q (2a) or,
		 * migrated, on the other one (2b): the model's pick.
		 */
publish:
		if
#if BROKEN_PUBLISH_OUTSIDE
		:: atomic { hw = SP[q]; hw_abs = SP_abs[q] };  /* broken: two plain steps */
			atomic { STORE_PROD(q, hw, hw_abs) }
#else
		:: atomic { insec[q] == NONE -> c = q; insec[q] = p };  /* 2a: on CPU q */
			SEC_TO(pubabort, hw = SP[q]; hw_abs = SP_abs[q]);
			SEC_TO(pubabort, STORE_PROD(q, hw, hw_abs); insec[c] = NONE)  /* commit */
#endif
#if SPROD == 1
		:: /* 2b: on the other CPU, outside any section */
#if BROKEN_NO_REMOTE
			skip            /* broken: leave it to the producers of CPU q */
#elif BROKEN_REMOTE_STORE
			atomic { STORE_PROD(q, recp[q], reca[q]) }  /* broken: a plain store */
#else
			/* CAS-max: the loop's successful step (a failed try changes
			 * nothing): raise PROD[q] to E unless it is at or past E */
			atomic {
				if
				:: !REACHED(PROD[q], recp[q]) -> STORE_PROD(q, recp[q], reca[q])
				:: else
				fi
			}
#endif
#endif  /* SPROD == 2: no 2b, the thread publishes on CPU q (pinned there) */
		fi;
		goto published;
pubabort:
		/* the publish section's abort handler: publish again, on
		 * whatever CPU we are now */
		skip;
		d_step { c = 0; hw = 0; hw_abs = 0 };
		goto publish;
published:
		skip;
		d_step { c = 0; hw = 0; hw_abs = 0 };
#endif

		/* hwt_cmdq_issue(sync=true) and hwt_cmdq_sync(): our CMD_SYNC */
		if
		:: sync ->
#if MSI && SLOT_CHANGED
			/* the sync's own slot no longer holds our sync: the MSI wrote
			 * it, or a producer reused it, which it may only once CONS
			 * passed the sync (after the MSI): either way it executed */
			WAIT_DO(slot[q * N + IDX(pr + n + BROKEN_SLOT_IDX)] != ENC(p, 1, base),
				P6_own_completion = ((seen[p] >> base) & 1);
				assert(P6_own_completion));
#elif MSI && BROKEN_SLOT
			/* broken: poll the sync's own slot for the MSI's zero */
			WAIT_DO(slot[q * N + IDX(pr + n)] == 0,
				P6_own_completion = (sown[q * N + IDX(pr + n)] == ENC(p, 1, base));
				assert(P6_own_completion));
#elif MSI
			/* A_MSI: our own word holds our sync's number */
			WAIT_DO(msiword[p] == base,
				P6_own_completion = (done_src[p] == q * 64 + pr_abs + n);
				assert(P6_own_completion));
#else
			wait_reached(q, recp[q], reca[q]);
#endif
			d_step {
				P3_sync_means_done = ALL_DONE(p, q);
				assert(P3_sync_means_done);
				used[q] = 0
			}
		:: else
		fi;

		/* hwt_cmdq_sync(): every other queue used since the last sync */
		if
		:: kind == 2 ->
			wq = 0;
			do
			:: wq == NQ -> break
			:: else ->
				if
				:: used[wq] ->
#if !BROKEN_LOCAL
					wait_reached(wq, recp[wq], reca[wq]);
#endif
					used[wq] = 0
				:: else
				fi;
				wq++
			od;
			skip;
			d_step {
				P3_sync_all_queues = (ALL_DONE(p, 0) && ALL_DONE(p, 1));
				assert(P3_sync_all_queues);
				wq = 0
			}
		:: else
		fi;
progress_call:	/* a call returned */
		d_step {
			call++;
			j = 0; c = 0; q = 0; pr = 0; pr_abs = 0; cc = 0; hw = 0;
			recp[0] = (used[0] -> recp[0] : 0); reca[0] = (used[0] -> reca[0] : 0);
			recp[1] = (used[1] -> recp[1] : 0); reca[1] = (used[1] -> reca[1] : 0)
		}
	od;
	ndone++
}

/*
 * The device: one entry at a time from any queue with work (every schedule,
 * the real device's round-robin included), each queue's entries from a PROD
 * snapshot (A_PROD), publishing CONS after an entry or later, by the end of
 * the snapshot.  A CMD_SYNC: CONS up to it, the MSI write, CONS
 * past it (MSI=1); CONS past it (MSI=0).
 */
proctype Device()
{
	byte c, v, i, t, s;
	byte snap[NQ];

end_idle:
	do
	:: atomic {
		(PROD[0] != dcons[0] || PROD[1] != dcons[1]) ->
		if
		:: PROD[0] != dcons[0] -> c = 0
		:: PROD[1] != dcons[1] -> c = 1
		fi;
		if
		:: snap[c] == dcons[c] -> snap[c] = PROD[c]           /* A_PROD */
		:: else
		fi
	   };
progress_exec:
		atomic {                        /* fetch and execute the entry at cons */
			i = c * N + IDX(dcons[c]);
			v = slot[i];
			P2_fetched_written = (v != 0);
			assert(P2_fetched_written);
			t = E_PROD(v);
			s = E_SEQ(v);
			P2_once_in_order = (t < NT && s > lastexec[PQ(t, c)]);
			assert(P2_once_in_order);
			P2_exactly_once = ((seen[t] >> s) & 1) == 0;
			assert(P2_exactly_once);
			seen[t] = seen[t] | (1 << s);
			lastexec[PQ(t, c)] = s;
			execq[PQ(t, c)]++;
			if
			:: E_SYNC(v) == 0 || !MSI ->
				dcons[c] = (dcons[c] + 1) % M;
				dabs[c]++
			:: else
			fi
		};
		if
		:: E_SYNC(v) && MSI ->
			if
			:: CONS[c] != dcons[c] ->
				atomic { CONS[c] = dcons[c]; CONS_abs[c] = dabs[c] }  /* R_CONS */
			:: else
			fi;
#if SLOTMSI
			slot[i] = 0;                                    /* R_MSI */
#else
			atomic { msiword[t] = s; done_src[t] = c * 64 + dabs[c] };   /* R_MSI */
#endif
			atomic {
				dcons[c] = (dcons[c] + 1) % M; dabs[c]++;
				CONS[c] = dcons[c]; CONS_abs[c] = dabs[c]       /* R_CONS */
			}
		:: E_SYNC(v) && !MSI ->
			atomic { CONS[c] = dcons[c]; CONS_abs[c] = dabs[c] }   /* R_CONS */
		:: else ->
			if
			:: atomic { CONS[c] = dcons[c]; CONS_abs[c] = dabs[c] }
#if DEFER
			:: dcons[c] != snap[c]
#endif
			fi
		fi;
		d_step { c = 0; v = 0; i = 0; t = 0; s = 0 }
	od
}

init
{
	byte p;

	atomic {
		run Device();
		p = 0;
		do
		:: p < NT -> run Thread(p); p++
		:: else -> break
		od
	};
	/* Every call returned and the device drained what was published. */
	ndone == NT && dcons[0] == PROD[0] && dcons[1] == PROD[1] &&
		CONS[0] == PROD[0] && CONS[1] == PROD[1];
	d_step {
		p = 0;
		do
		:: p < NT ->
			P2_all_executed = (ALL_DONE(p, 0) && ALL_DONE(p, 1));
			assert(P2_all_executed);
			p++
		:: else -> break
		od
	}
}
