/* SPDX-License-Identifier: MIT */
/*
 * Several command queues (options.queues > 1): which queue a call uses,
 * the per-thread record of what a thread inserted where, and
 * hwt_cmdq_sync() across the queues (docs/percpu-queues.md, sections 2, 4).
 *
 * The record.  Per (thread, object): the PROD value the thread's last
 * insertion stored on each queue it used since its last sync
 * (struct hwt__cmdq_rec, impl.h).  The thread reaches its records through
 * a thread-local list (one compare per object it uses; no lock, no
 * atomic), and only the thread touches a record while it holds it.
 *
 * Lifetime, without a race between a thread's exit and hwt_cmdq_destroy():
 * a record points at the object's anchor, not at the object.  The anchor
 * counts the object and the records that threads hold; `q` in it is the
 * object while it lives, NULL after destroy.  Both are read and written
 * only under glock (the cold paths: a thread's first use of an object,
 * its exit, destroy).
 *   - thread exit (the key's destructor): a record whose object lives goes
 *     back to the object's pool, for the next thread; else it is freed.
 *     The anchor loses a reference.
 *   - destroy: the anchor's q = NULL, the pool's records are freed; records
 *     still held by threads are theirs now, freed at their exit (or when
 *     the thread next misses in its list).  The anchor stays allocated
 *     while they point at it, so its address never matches a new object's.
 * So no record leaks per thread exit, and the object's memory is freed
 * only by destroy, after the device acknowledged the disable (setup.c).
 *
 * On the shared path a thread may insert into any queue, so
 * hwt_cmdq_sync() is a CMD_SYNC on the current queue and one on each other
 * queue in the record (this also covers a device whose CONS is not
 * completion).  On the rseq path only the CPU's own producers may write its
 * queue: a CMD_SYNC on the current queue (percpu.c), and for each other
 * queue in the record a wait until its CONS reaches the recorded PROD.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cmdq/impl.h"
#include "common/time.h"

struct hwt__cmdq_anchor {
	struct hwt_cmdq *q; /* NULL once destroyed */
	unsigned refs;      /* the object + the records threads hold */
};

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_err;
static _Atomic bool key_made; /* key exists: deleted when the library is unloaded */
/* This thread's records, one per object it used (initial-exec: a
 * thread-pointer-relative load, also in the shared library). */
static _Thread_local struct hwt__cmdq_rec *tl_recs __attribute__((tls_model("initial-exec")));

void hwt__cmdq_glock(void)
{
	pthread_mutex_lock(&glock);
}

void hwt__cmdq_gunlock(void)
{
	pthread_mutex_unlock(&glock);
}

/* Under glock: drop the thread's hold of rec (its object's pool, or free).
 * A thread that left inside a wait (pthread_cancel in its sleep) leaves
 * nothing behind in the record: a late MSI of its CMD_SYNC lands in that
 * sync's own slot (percpu.c). */
static void release(struct hwt__cmdq_rec *rec)
{
	struct hwt__cmdq_anchor *a = rec->anchor;

	rec->anchor = NULL;
	if (a->q) {
		rec->pnext = a->q->mq->pool;
		a->q->mq->pool = rec;
	} else {
		free(rec);
	}
	if (!--a->refs)
		free(a);
}

/* The thread exits: its records go back (the key's value is unused). */
static void thread_exit(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&glock);
	for (struct hwt__cmdq_rec *r = tl_recs, *next; r; r = next) {
		next = r->tnext;
		release(r);
	}
	tl_recs = NULL;
	pthread_mutex_unlock(&glock);
}

static void make_key(void)
{
	key_err = pthread_key_create(&key, thread_exit);
	/* R_KEY: pairs with A_KEY in drop_key, which then sees key. */
	atomic_store_explicit(&key_made, !key_err, memory_order_release);
}

/*
 * The library is unloaded (dlclose) or the process exits.  A thread that
 * used an object of several queues holds the key set; if it outlived the
 * unload, its exit would call thread_exit in unmapped code.  Deleting the
 * key drops those calls: the records such threads still hold leak (their
 * objects should be destroyed before the unload).  No thread may be inside
 * the library now, so nothing races the delete.
 */
__attribute__((destructor)) static void drop_key(void)
{
	/* A_KEY: pairs with R_KEY in make_key. */
	if (atomic_load_explicit(&key_made, memory_order_acquire))
		pthread_key_delete(key);
}

/* The slow path of hwt__cmdq_rec: drop records of destroyed objects, take
 * one from the pool or allocate it. */
static struct hwt__cmdq_rec *rec_first_use(struct hwt_cmdq *q)
{
	struct hwt__cmdq_rec *rec, **pp;

	pthread_once(&key_once, make_key);
	if (key_err)
		return NULL;
	pthread_mutex_lock(&glock);
	for (pp = &tl_recs; (rec = *pp);) {
		if (rec->anchor->q) {
			pp = &rec->tnext;
			continue;
		}
		*pp = rec->tnext;
		release(rec);
	}
	rec = q->mq->pool;
	if (rec) {
		q->mq->pool = rec->pnext;
	} else {
		rec = calloc(1, sizeof(*rec) + q->nq * sizeof(rec->prod[0]));
	}
	if (rec) {
		memset(rec->used, 0, sizeof(rec->used)); /* the new thread owes nothing */
		memset(rec->unpub, 0, sizeof(rec->unpub));
		memset(&rec->nt, 0, sizeof(rec->nt)); /* the new thread times its own calls */
		rec->nused = 0;
		rec->anchor = q->mq->anchor;
		rec->anchor->refs++;
		rec->tnext = tl_recs;
		tl_recs = rec;
		if (pthread_setspecific(key, rec)) { /* non-NULL: the destructor runs */
			tl_recs = rec->tnext;
			release(rec);
			rec = NULL;
		}
	}
	pthread_mutex_unlock(&glock);
	return rec;
}

struct hwt__cmdq_rec *hwt__cmdq_rec(struct hwt_cmdq *q)
{
	struct hwt__cmdq_anchor *a = q->mq->anchor;

	for (struct hwt__cmdq_rec *r = tl_recs; r; r = r->tnext)
		if (r->anchor == a)
			return r;
	return rec_first_use(q);
}

unsigned hwt__cmdq_pick(const struct hwt_cmdq *q)
{
	int cpu = sched_getcpu(); /* glibc >= 2.35: rseq's cpu_id, no system call */

	return cpu > 0 ? (unsigned)cpu % q->nq : 0;
}

int hwt__cmdq_mq_init(struct hwt_cmdq *q)
{
	q->mq = calloc(1, sizeof(*q->mq));
	if (!q->mq)
		return -ENOMEM;
	q->mq->anchor = calloc(1, sizeof(*q->mq->anchor));
	if (!q->mq->anchor)
		return -ENOMEM;
	q->mq->anchor->q = q;
	q->mq->anchor->refs = 1;
	return 0;
}

void hwt__cmdq_mq_fini(struct hwt_cmdq *q)
{
	struct hwt__cmdq_anchor *a = q->mq->anchor;

	pthread_mutex_lock(&glock);
	for (struct hwt__cmdq_rec *r = q->mq->pool, *next; r; r = next) {
		next = r->pnext;
		free(r);
	}
	if (a) {
		a->q = NULL; /* records threads hold are theirs now */
		if (!--a->refs)
			free(a);
	}
	pthread_mutex_unlock(&glock);
	free(q->mq);
	q->mq = NULL;
}

/* The shared path on queue i: insert, then note (or, after a completed
 * CMD_SYNC, clear) what this thread owes on queue i. */
static int shared_issue(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec, unsigned i,
			const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync, bool *inserted,
			uint64_t deadline)
{
	bool ins = false;
	uint32_t end = 0;
	int err = hwt__cmdq_insert(q->sub[i], cmds, n, sync, &ins, deadline, &end);

	if (inserted)
		*inserted = ins;
	if (sync && !err)
		hwt__cmdq_rec_clear(rec, i); /* it covers all our earlier entries on i */
	else if (ins)
		hwt__cmdq_rec_set(rec, i, end);
	return err;
}

int hwt__cmdq_mq_issue(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync,
		       bool *inserted)
{
	struct hwt__cmdq_rec *rec = hwt__cmdq_rec(q);
	uint64_t deadline = 0;
	unsigned qi;

	if (!rec)
		return -ENOMEM;
	if (q->mq->rseq)
		return hwt__cmdq_rseq_issue(q, rec, cmds, n, sync, inserted, &deadline, &qi);
	return shared_issue(q, rec, hwt__cmdq_pick(q), cmds, n, sync, inserted, 0);
}

/*
 * hwt_cmdq_sync (docs section 4).  A CMD_SYNC on the current queue even
 * with an empty record (docs section 7, question 3): a sync then stays a
 * barrier on this CPU's queue, as with one queue, and reports a stopped
 * device.  Then each other queue in the record: a CMD_SYNC there (shared
 * path) or a wait until its CONS reaches the recorded PROD (rseq path).
 * 0 only if every queue was confirmed; the others stay in the record.  The
 * current queue is not waited on twice: a CMD_SYNC there that gave up
 * leaves it in the record, for the next sync, not for this loop.
 */
int hwt__cmdq_mq_sync(struct hwt_cmdq *q)
{
	struct hwt__cmdq_rec *rec = hwt__cmdq_rec(q);
	uint64_t deadline = 0;
	unsigned qi;
	int err;

	if (!rec)
		return -ENOMEM;
	/* One deadline for the whole call when it may wait on several queues. */
	if (rec->nused)
		deadline = hwt__deadline_after(hwt__now_ns(), q->timeout_ns);
	if (q->mq->rseq) {
		/* The current queue: whichever one the section committed to. */
		err = hwt__cmdq_rseq_issue(q, rec, NULL, 0, true, NULL, &deadline, &qi);
	} else {
		qi = hwt__cmdq_pick(q);
		err = shared_issue(q, rec, qi, NULL, 0, true, NULL, deadline);
	}
#ifndef HWT_CMDQ_BROKEN_SYNC_ONE_QUEUE
	for (unsigned w = 0; rec->nused && w < (q->nq + 63) / 64; w++) {
		for (uint64_t m = rec->used[w]; m; m &= m - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(m);
			int e;

			if (i == qi) /* the CMD_SYNC above answered for it */
				continue;
			if (q->mq->rseq) /* only CPU i's producers may write queue i */
				e = hwt__cmdq_wait_reached(q, rec, i, rec->prod[i], &deadline);
			else /* any thread may insert anywhere: a CMD_SYNC there */
				e = shared_issue(q, rec, i, NULL, 0, true, NULL, deadline);
			if (!e)
				hwt__cmdq_rec_clear(rec, i);
			else if (!err)
				err = e; /* the entry stays for the next sync */
		}
	}
#else
	/* Test builds only: the sync covers the current queue alone (docs
	 * section 4, variant (s)); the migration test must catch it. */
	memset(rec->used, 0, sizeof(rec->used));
	rec->nused = 0;
#endif
	return err;
}
