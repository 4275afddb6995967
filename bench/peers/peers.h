/* SPDX-License-Identifier: MIT */
/*
 * Peer queues for bench_cmdq behind one ops struct.  Each peer file is
 * compiled only when its library is found (bench/peers/detect.sh) and used
 * only through the library's public API.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <stdbool.h>
#include <stdint.h>

/* One 16-byte command, as hwt_cmdq carries it (two dwords). */
struct bench_elem {
	uint64_t dw[2];
};

struct bench_queue_ops {
	const char *name;   /* "rte_ring" */
	const char *detail; /* the calls used and how elements are stored */
	const char *package; /* Debian package that enables it ("" if built in) */
	/* A queue of 2^log2 slots of 16-byte elements: 0 or -errno. */
	int (*create)(void **q, unsigned log2);
	void (*destroy)(void *q);
	/* Up to n elements (any producer thread); returns how many went in. */
	unsigned (*enqueue)(void *q, const struct bench_elem *e, unsigned n);
	/* Up to max elements (the one consumer thread); returns how many. */
	unsigned (*dequeue)(void *q, struct bench_elem *e, unsigned max);
	/* enqueue/dequeue wait themselves (bounded, ~1 ms) when full/empty. */
	bool blocks;
};

extern const struct bench_queue_ops bench_mutex_ops;
#ifdef HAVE_DPDK
extern const struct bench_queue_ops bench_dpdk_ops;
#endif
#ifdef HAVE_CK
extern const struct bench_queue_ops bench_ck_ops;
#endif

#endif
