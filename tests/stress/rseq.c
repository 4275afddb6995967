/* SPDX-License-Identifier: MIT */
/*
 * The rseq insertion (src/arch/rseq.h) against a consumer thread that plays
 * the device: it acquire-loads each ring's PROD, checks and poisons the
 * entries, and release-stores CONS.  Every entry carries (producer, seq) and
 * its complement, so the consumer sees a lost, doubled, reordered, torn or
 * unwritten entry.  About half the calls pass HWT__RSEQ_K_SYNC_MSI: their
 * last entry is a "CMD_SYNC" (its own magic) built with dw1 0, and the
 * consumer checks that the section stored the IOVA of the slot it sits in
 * there (the ring's fake iova + 16 * idx), also after a restart moved the
 * call to another slot or ring.
 *
 * The storm restarts the sections on purpose, aimed at the producers while
 * they run: each producer has its own timer (timer_create, SIGEV_THREAD_ID,
 * CLOCK_MONOTONIC, HWT_RSEQ_TIMER_US, default 50) that sends it SIGUSR1, and
 * every second signal's handler moves the producer to the next online CPU
 * (sched_setaffinity on itself: the thread leaves its CPU at the instruction
 * the signal found it at); a mover thread moves producers as well, there are
 * three producers per online CPU (preemption), and the ring (1024 entries) is
 * big enough that producers spend their time in sections rather than waiting
 * for room.
 *
 * The two steps: a call the section reports "moved" (HWT__RSEQ_MOVED: in,
 * not published; every eighth call asks for it with HWT__RSEQ_K_NO_PUBLISH,
 * besides the real moves) is published by its producer with
 * hwt__rseq_publish() from the CPU it inserted on, pinning itself there.
 *
 * The Makefile links test builds of the assembly besides the library's (weak
 * here, absent where there is no assembly): hwt__rseq_insert_test counts its
 * restarts exactly (and those after its MSIADDR store), and five mutants the
 * storm must catch (one positive control each): hwt__rseq_insert_broken
 * commits sprod before the entries, _broken_post ends the section before the
 * commit, _broken_nocpu does not check the CPU inside the section,
 * _broken_msiaddr does not store the MSIADDR, _broken_pubout publishes
 * outside a section (PROD moves back).
 * HWT_RSEQ_TEST_BROKEN=commit|post|nocpu|msiaddr|pubout
 * (1: commit) runs that mutant where the correct build runs (to see the tests
 * fail); HWT_STRESS_MS sets the time of each storm (default 400);
 * HWT_RSEQ_ROUNDS=N makes each positive control run N rounds whatever it
 * sees (to measure how often a round catches its mutant).  A violation is
 * logged with the ring's state, the slot's previous entry, the slot read again
 * a little later, and the producers' logged insertions that touched it.
 *
 * Without rseq (GLIBC_TUNABLES=glibc.pthread.rseq=0, qemu-user, riscv64, the
 * generic build) every test skips with hwt__rseq_unavailable()'s text.
 *
 * TSan sees neither the assembly's stores nor its loads: under TSan it checks
 * only this file's own threads and counters, while the consumer's checks of
 * the entries (plain reads of what the assembly wrote) work as without it.
 */
#include "harness/harness.h"
#include "harness/rseqrig.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The library's functions, or the mutant HWT_RSEQ_TEST_BROKEN names. */
static struct build shipped(void)
{
	const char *b = rseqrig_want_broken();
	if (b && rseqrig_build(b).fn)
		return rseqrig_build(b);
	return (struct build){ "library", hwt__rseq_insert, hwt__rseq_publish, NULL };
}

/*
 * A round without a storm, build b: two producers per CPU, pinned, per_prod
 * entries each in calls of 1..kmax, a ring of 2^shift (wraps and fills).
 * Returns its violations.  Finished, or cut by the deadline (20 s, scaled)
 * after at least an eighth of it: with other processes' busy threads on
 * every CPU each sched_yield of the rig's backoff may give a whole time
 * slice away, and 4 of 150 runs beside two busy loops were cut after
 * 305,102 to 473,624 of 800,000 entries (every one checked).
 */
static uint64_t plain_round(struct rig *r, struct build b, unsigned shift, uint64_t per_prod,
			    unsigned kmax, bool allow_violations)
{
	rseqrig_init(r, shift);
	r->insert = b.fn;
	r->publish = b.publish;
	r->nprod = 2 * rseqrig_sg.ncpus > MAX_PRODUCERS ? MAX_PRODUCERS : 2 * rseqrig_sg.ncpus;
	r->per_prod = per_prod;
	r->kmax = kmax;
	r->pin = true;
	uint64_t v = rseqrig_run(r, false, 20000 * (uint64_t)hwt_test_scale(), allow_violations);
	if (atomic_load_explicit(&r->stop, memory_order_relaxed)) { /* after the joins */
		TLOG("cut by the deadline after %llu of %llu entries", (unsigned long long)r->consumed,
		     (unsigned long long)r->nprod * r->per_prod);
		ASSERT_TRUE(r->consumed >= (uint64_t)r->nprod * r->per_prod / 8);
	}
	return v;
}

/* Small calls on a ring of 16 (0.15 s alone on 2 CPUs). */
TEST_TIMEOUT(rseq_consumer_exactly_once, 60)
{
	rseqrig_skip_without_rseq();
	static struct rig r;
	plain_round(&r, shipped(), 4, 200000, 5, false);
	rseqrig_free(&r);
}

/* Calls of up to 128 entries on a ring of 256, about half of them
 * HWT__RSEQ_NT_MIN or more (x86_64 stores those non-temporally, then
 * fences them). */
static uint64_t big_calls_round(struct rig *r, struct build b, bool allow_violations)
{
	return plain_round(r, b, 8, 400000, 128, allow_violations);
}

TEST_TIMEOUT(rseq_big_calls_exactly_once, 60)
{
	rseqrig_skip_without_rseq();
	static struct rig r;
	big_calls_round(&r, shipped(), false);
	rseqrig_free(&r);
}

/* One storm round with build b: three producers per online CPU, a ring of
 * 1024, up to 32 entries per call (HWT_RSEQ_NPROD and HWT_RSEQ_SHIFT
 * change the first two, for a hunt); with big, an eighth of the calls
 * 64-96 entries, non-temporal on x86_64, where the ring holds them.
 * Returns its violations; *restarts gets the restarts counted. */
static uint64_t storm_round(struct rig *r, struct build b, bool big, bool allow_violations,
			    uint64_t *restarts)
{
	rseqrig_online_cpus();
	uint64_t shift = rseqrig_env_u64("HWT_RSEQ_SHIFT", 10);
	uint64_t nprod = rseqrig_env_u64("HWT_RSEQ_NPROD", 3 * rseqrig_sg.ncpus);
	ASSERT_TRUE(shift >= 5 && shift <= 16);
	rseqrig_init(r, (unsigned)shift);
	r->insert = b.fn;
	r->publish = b.publish;
	uint64_t before = __atomic_load_n(b.aborts, __ATOMIC_RELAXED);
	r->nprod = nprod > MAX_PRODUCERS ? MAX_PRODUCERS : nprod ? (unsigned)nprod : 1;
	r->per_prod = 1u << 26; /* or until the deadline */
	r->kmax = 32;
	r->kbig = big && (1u << shift) >= HWT__RSEQ_NT_MIN + 32 ? HWT__RSEQ_NT_MIN : 0;
	uint64_t v = rseqrig_run(r, true, rseqrig_stress_ms(), allow_violations);
	if (r->kbig)
		ASSERT_GT(rseqrig_stat(&r->nt), 0);
	*restarts = __atomic_load_n(b.aborts, __ATOMIC_RELAXED) - before;
	TLOG("%s build: %llu restarts (%llu per 1000 signals)", b.name, (unsigned long long)*restarts,
	     (unsigned long long)(*restarts * 1000 / (rseqrig_stat(&rseqrig_sg.signals) + 1)));
	rseqrig_free(r);
	return v;
}

/* Restarts on purpose: signals and migrations while producers insert.  A
 * storm that restarted no section proves nothing: rounds follow until one
 * has (within 20 s, scaled: under TCG on a loaded host a round of 5 s saw no
 * restart 7 times in 78), until one restarted a section after its MSIADDR
 * store (a window of three instructions before the commit), which the
 * consumer then saw stored again for the slot the call finally took, until
 * one restarted a publish section, and until a producer really moved
 * between its two steps (not asked to) and published from the old CPU.
 * The last three are rare (natively 1-6 a round each); they are only
 * required natively with unscaled time limits: TSan takes a signal at its
 * own safe points, outside the assembly, and TCG (the VM stage, scaled)
 * only at the start of a translation block, which those windows are not;
 * the counts are logged everywhere. */
TEST_TIMEOUT(rseq_restart_storm, 60)
{
	rseqrig_skip_without_rseq();
	if (!hwt__rseq_insert_test)
		SKIP("this build has no test build of the assembly");
	static struct rig r;
	uint64_t restarts = 0, rounds = 0, re, moves = 0, hops = 0, msi0, msi = 0, pub0, pub = 0, real = 0;
	uint64_t end = rseqrig_now_ns() + 20000000000ull * (uint64_t)hwt_test_scale();
	const char *b = rseqrig_want_broken();
	bool want_rare = !b && !HWT_TSAN && hwt_test_scale() <= 1.0;
	do {
		msi0 = __atomic_load_n(&hwt__rseq_test_msi_aborts, __ATOMIC_RELAXED);
		pub0 = __atomic_load_n(&hwt__rseq_test_pub_aborts, __ATOMIC_RELAXED);
		/* big calls for the test build (restarted in a non-temporal
		 * copy too); a mutant's window is hit most often with small
		 * calls only */
		storm_round(&r, rseqrig_build(b ? b : "test"), !b, false, &re);
		if (!b) {
			msi += __atomic_load_n(&hwt__rseq_test_msi_aborts, __ATOMIC_RELAXED) - msi0;
			pub += __atomic_load_n(&hwt__rseq_test_pub_aborts, __ATOMIC_RELAXED) - pub0;
		}
		restarts += re, rounds++, real += rseqrig_stat(&r.moved_real);
		moves += rseqrig_stat(&r.moves), hops += rseqrig_stat(&rseqrig_sg.hops);
	} while ((!restarts || (want_rare && (!msi || !pub || !real))) && rseqrig_now_ns() < end);
	TLOG("%llu restarts in %llu rounds, %llu of them after the MSIADDR store, %llu of a publish; "
	     "%llu publishes after a real move", (unsigned long long)restarts, (unsigned long long)rounds,
	     (unsigned long long)msi, (unsigned long long)pub, (unsigned long long)real);
	ASSERT_GT(restarts, 0);
	if (want_rare) {
		ASSERT_GT(msi, 0);
		ASSERT_GT(pub, 0);
		ASSERT_GT(real, 0);
	}
	ASSERT_GT(moves, 0);
	ASSERT_GT(hops, 0);
}

/* A positive control: the mutant must be caught within 60 s (scaled), or in
 * HWT_RSEQ_ROUNDS rounds, all of them run, when that is set.  The post
 * mutant's window is one instruction: in 20 runs of make check it took 1 to
 * 102 rounds, and one run (its CPUs shared with other tests' busy loops)
 * went 50 rounds, the 20 s it had then, without a catch. */
static void catch_mutant(const char *name)
{
	rseqrig_skip_without_rseq();
#if HWT_TSAN
	if (strcmp(name, "commit") && strcmp(name, "msiaddr"))
		SKIP("under TSan a signal's handler runs at TSan's next safe point, not at the "
		     "instruction the signal interrupted: the storm's moves cannot hit the window "
		     "this mutant opens");
#endif
	struct build b = rseqrig_build(name);
	if (!b.fn)
		SKIP("this build has no test build of the assembly");
	uint64_t rounds = rseqrig_env_u64("HWT_RSEQ_ROUNDS", 0), caught = 0, round = 0, first = 0, restarts = 0;
	uint64_t end = rseqrig_now_ns() + 60000000000ull * (uint64_t)hwt_test_scale();
	while (rounds ? round < rounds : !caught && rseqrig_now_ns() < end) {
		static struct rig r;
		uint64_t re, v = storm_round(&r, b, false, true, &re);
		restarts += re;
		round++;
		if (v && !caught++)
			first = round;
		if (v)
			TLOG("round %llu: %llu violations, first: %s", (unsigned long long)round,
			     (unsigned long long)v, r.first);
	}
	TLOG("mutant %s caught in %llu of %llu rounds (first in round %llu), %llu restarts in all", name,
	     (unsigned long long)caught, (unsigned long long)round, (unsigned long long)first,
	     (unsigned long long)restarts);
	ASSERT_GT(caught, 0);
}

/* PROD committed before the entries. */
TEST_TIMEOUT(rseq_storm_catches_broken_commit, 120)
{
	catch_mutant("commit");
}

/* The commit left out of the section (post_commit_offset one instruction
 * short). */
TEST_TIMEOUT(rseq_storm_catches_broken_post, 120)
{
	catch_mutant("post");
}

/* No check of the CPU inside the section. */
TEST_TIMEOUT(rseq_storm_catches_broken_nocpu, 120)
{
	catch_mutant("nocpu");
}

/* No MSIADDR stored for a call that ends in a CMD_SYNC. */
TEST_TIMEOUT(rseq_storm_catches_broken_msiaddr, 120)
{
	catch_mutant("msiaddr");
}

/* The publish outside a section: a stale PROD stored after a newer one. */
TEST_TIMEOUT(rseq_storm_catches_broken_pubout, 120)
{
	catch_mutant("pubout");
}

/* The publish without its CPU check (the model's z2: a store of PROD from
 * another CPU, which can move PROD back): the contract's check of a
 * publish from another CPU (unit_rseq) holds for the library's build and
 * fails for this one. */
TEST(rseq_contract_catches_broken_pubcpu)
{
	rseqrig_skip_without_rseq();
	struct build b = rseqrig_build("pubcpu");
	if (!b.fn)
		SKIP("this build has no test build of the assembly");
	ASSERT_TRUE(rseqrig_publish_elsewhere_refused(hwt__rseq_publish));
	ASSERT_FALSE(rseqrig_publish_elsewhere_refused(b.publish));
}

/* No sfence after a non-temporal copy (x86_64): PROD may be seen before the
 * entries.  Big calls, no storm: caught in the first round or within 20 s
 * (scaled). */
TEST_TIMEOUT(rseq_catches_broken_ntfence, 60)
{
	rseqrig_skip_without_rseq();
#if !defined(__x86_64__)
	SKIP("only x86_64 copies non-temporally: the mutant is the test build here");
#endif
	struct build b = rseqrig_build("ntfence");
	if (!b.fn)
		SKIP("this build has no test build of the assembly");
	uint64_t end = rseqrig_now_ns() + 20000000000ull * (uint64_t)hwt_test_scale(), v = 0, rounds = 0;
	while (!v && rseqrig_now_ns() < end) {
		static struct rig r;
		v = big_calls_round(&r, b, true);
		rounds++;
		if (v)
			TLOG("round %llu: %llu violations, first: %s", (unsigned long long)rounds,
			     (unsigned long long)v, r.first);
		rseqrig_free(&r);
	}
	ASSERT_GT(v, 0);
}
