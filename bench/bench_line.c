/* SPDX-License-Identifier: MIT */
/*
 * Does a reader take a modified line away from its writer?  The rseq insert
 * path loads PROD, which the device polls (docs/percpu-queues.md, section 8
 * item 2); where a core that reads a line another core modified takes the
 * line away, the writer's next load of it misses.  Per round: the writer
 * (first allowed CPU) stores X, the reader (last allowed CPU) loads X in
 * "read" rounds or only a flag line in "flag" rounds, and acknowledges;
 * then the writer times one load of X.  The two kinds alternate; the
 * output is the median load time of each and their ratio (a clock read
 * pair included in both).  Every wait is bounded.  Never run by make check.
 *
 *   bench_line [--rounds N]   (default 100000)
 */
#include "prog/cli.h"
#include "prog/sys.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS 2000000000ull

static struct {
	alignas(UTIL_LINE) _Atomic uint32_t x;    /* the writer's line */
	alignas(UTIL_LINE) _Atomic uint32_t flag; /* round number and kind for the reader */
	alignas(UTIL_LINE) _Atomic uint32_t ack;  /* the reader's answer */
	alignas(UTIL_LINE) _Atomic int stop;
	uint64_t spin_ns;
} L;

/* Rounds are numbered from 1; bit 31 of flag: a "read" round. */
#define READ_BIT 0x80000000u

static void *reader(void *arg)
{
	uint32_t last = 0;

	(void)arg;
	for (;;) {
		struct util_wait w = UTIL_WAIT(L.spin_ns, TIMEOUT_NS);
		uint32_t f;

		/* A_FLAG: pairs with the writer's R_FLAG (X is stored before it) */
		while ((f = atomic_load_explicit(&L.flag, memory_order_acquire)) == last)
			if (atomic_load_explicit(&L.stop, memory_order_relaxed) || !util_wait_more(&w))
				return NULL;
		last = f;
		if (f & READ_BIT) /* the load under test: takes X's line here */
			(void)atomic_load_explicit(&L.x, memory_order_relaxed);
		atomic_store_explicit(&L.ack, f, memory_order_release); /* R_ACK: pairs with A_ACK */
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned rounds = 100000, n[2] = { 0, 0 };
	int dev, prod, bad, err;
	uint64_t *t[2];
	pthread_t th;

	cli_prog = "bench_line";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = cli_arg_u("--rounds", argv[++i], 2, 100000000);
		} else {
			fprintf(stderr, "bench_line: unknown argument '%s'\nusage: bench_line [--rounds N]\n",
				argv[i]);
			return 2;
		}
	}
	err = util_cpu_pick(-1, -1, 1, &dev, &prod, &bad);
	if (err || dev == prod) {
		fprintf(stderr, "bench_line: needs two allowed CPUs (%s)\n", err ? strerror(-err) : "one");
		return 1;
	}
	t[0] = calloc(rounds, sizeof(uint64_t));
	t[1] = calloc(rounds, sizeof(uint64_t));
	if (!t[0] || !t[1] || (err = util_pin_self(prod)) != 0) {
		fprintf(stderr, "bench_line: %s\n", err ? strerror(-err) : "out of memory");
		return 1;
	}
	L.spin_ns = UTIL_SPIN_NS;
	err = util_thread_start(&th, dev, reader, NULL);
	if (err) {
		fprintf(stderr, "bench_line: reader thread: %s\n", strerror(-err));
		return 1;
	}
	for (uint32_t r = 1; r <= rounds; r++) {
		struct util_wait w = UTIL_WAIT(L.spin_ns, TIMEOUT_NS);
		uint32_t f = r | (r & 1 ? READ_BIT : 0);
		uint64_t a, b;

		atomic_store_explicit(&L.x, r, memory_order_relaxed);
		atomic_store_explicit(&L.flag, f, memory_order_release); /* R_FLAG: pairs with A_FLAG */
		/* A_ACK: pairs with the reader's R_ACK (its load of X is done) */
		while (atomic_load_explicit(&L.ack, memory_order_acquire) != f)
			if (!util_wait_more(&w)) {
				fprintf(stderr, "bench_line: no answer from the reader on CPU %d\n", dev);
				return 1;
			}
		a = util_now_ns();
		(void)atomic_load_explicit(&L.x, memory_order_acquire); /* ordered before b */
		b = util_now_ns();
		t[r & 1][n[r & 1]++] = b - a;
	}
	atomic_store_explicit(&L.stop, 1, memory_order_relaxed);
	pthread_join(th, NULL);
	qsort(t[0], n[0], sizeof(uint64_t), cmp_u64);
	qsort(t[1], n[1], sizeof(uint64_t), cmp_u64);
	printf("{\"writer_cpu\": %d, \"reader_cpu\": %d, \"rounds\": %u, "
	       "\"reload_after_reader_loaded_p50_ns\": %llu, \"reload_after_flag_only_p50_ns\": %llu, "
	       "\"ratio\": %.2f}\n",
	       prod, dev, rounds, (unsigned long long)t[1][n[1] / 2], (unsigned long long)t[0][n[0] / 2],
	       t[0][n[0] / 2] ? (double)t[1][n[1] / 2] / (double)t[0][n[0] / 2] : 0.0);
	return 0;
}
