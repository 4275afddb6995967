/* SPDX-License-Identifier: MIT */
/*
 * bench_cmdq's parts (see bench/bench_cmdq.c for what it measures):
 *   bench_cmdq.c  options, CPUs, the queues compiled in, the round loop
 *   segment.c     one timed segment: producer threads, warm-up, drains
 *   output.c      the JSON on stdout and the table on stderr
 *
 * Rates are kept per implementation as rate[(producer count index *
 * bursts + burst index) * rounds + round]: elements/s, all producers.
 */
#ifndef BENCH_CMDQ_BENCH_H
#define BENCH_CMDQ_BENCH_H

#include "bench/peers/peers.h"
#include "prog/sys.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_BURST 64
#define MAX_IMPLS 16
#define MAX_BURSTS 8
#define MAX_PRODS 8 /* producer counts in one run (--producers 1,2,4,8,16) */
#define MAX_SKIPPED 8
#define WARM_ELEMS 2048
#define FLOOR_ITERS 400
#define FLOOR_CHUNKS 5

enum group { G_FLOW, G_SYNC };
extern const char *const group_name[2];

struct impl {
	struct bench_queue_desc d;
	enum group group;
	const struct bench_queue_ops *ops;
	void *q;
	double *rate;  /* [producers][burst][round], elements/s of all producers */
	double *retry; /* the same, failed reservation CASes per put (cas_retries) */
};

struct seg;

/* Written per element by its producer: on lines of its own (128-byte pairs,
 * for the adjacent-line prefetch) apart from the flags others poll. */
struct prod {
	alignas(UTIL_LINE) struct seg *s;
	unsigned id;
	int cpu;
	uint64_t seq, timed; /* bursts issued in the timed run */
	int err;
	pthread_t th;
	alignas(UTIL_LINE) struct hwt_cmdq_cmd e[MAX_BURST];
};

struct seg {
	struct impl *im;
	unsigned burst, nprod, warm;
	uint64_t timeout_ns, spin_ns;
	alignas(UTIL_LINE) _Atomic int go;
	alignas(UTIL_LINE) _Atomic int stop; /* producers stop */
	_Atomic int failed;
	_Atomic unsigned ready;
	struct prod p[BENCH_MAX_PROD];
};

struct opts {
	unsigned segment_ms, rounds, log2, cons_batch, timeout_ms;
	unsigned bursts[MAX_BURSTS], nbursts;
	unsigned prods[MAX_PRODS], nprods; /* producer counts, as given */
	unsigned max_prod;                 /* the largest of them */
	bool flow, sync;
	int prod_cpu, cons_cpu;
};

/* A peer left out of this build, and why. */
struct skipped {
	const char *peer;
	const char *package; /* apt-get install this, or NULL */
	const char *reason;  /* NULL: "not found" */
};

struct bench {
	struct opts o;
	int prod_cpu[BENCH_MAX_PROD], cons_cpu;
	uint64_t spin_ns; /* of every wait: 0 when a producer shares the consumer's CPU */
	struct seg *s;
	struct impl im[MAX_IMPLS];
	unsigned nimpl;
	double *floor_ns; /* [group][burst][round] */
	struct skipped skipped[MAX_SKIPPED];
	unsigned nskip;
};

/* Where rate[] and retry[] keep producer count index pi, burst index bi. */
static inline size_t bench_at(const struct bench *bn, unsigned pi, unsigned bi)
{
	return ((size_t)pi * bn->o.nbursts + bi) * bn->o.rounds;
}

/* Distinct CPUs among the first nprod producers. */
unsigned bench_prod_cpus(const struct bench *bn, unsigned nprod);

/* One segment of im with nprod producers at burst b: 0 and the elements/s
 * of all producers in *rate, or a negative errno. */
int bench_segment(struct bench *bn, struct impl *im, unsigned nprod, unsigned b, double *rate,
		  double *retry);

/* The results: JSON on stdout, a table on stderr. */
void bench_print(struct bench *bn, const char *model, unsigned nrun, double wall_s);

#endif
