/* SPDX-License-Identifier: MIT */
/*
 * The first of many violations, noted from any thread (an executor, the
 * producers) and reported once at the end of a run:
 *
 *   struct tst_why w;  tst_why_init(&w);
 *   tst_note(&w, "producer %u: seq %llu twice", p, seq);   counts; keeps the first text
 *   if (tst_why_first(&w)) hwt_test_fail(..., "%u violations, first: %s",
 *                                        tst_why_count(&w), tst_why_first(&w));
 */
#ifndef HWT_TEST_WHY_H
#define HWT_TEST_WHY_H

#include <pthread.h>
#include <stdatomic.h>

struct tst_why {
	_Atomic unsigned n;
	char text[256];
	pthread_mutex_t lock; /* the first noter writes text under it */
};

void tst_why_init(struct tst_why *w);
void tst_note(struct tst_why *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many were noted. */
unsigned tst_why_count(struct tst_why *w);
/* The first one's text, or NULL if none was noted. */
const char *tst_why_first(struct tst_why *w);

#endif
