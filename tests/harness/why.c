/* SPDX-License-Identifier: MIT */
/* The first of many violations (why.h). */
#include "harness/why.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tst_why_init(struct tst_why *w)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
}

void tst_note(struct tst_why *w, const char *fmt, ...)
{
	va_list ap;

	/* relaxed: only the count; the text is read under the lock */
	if (atomic_fetch_add_explicit(&w->n, 1, memory_order_relaxed) == 0) {
		pthread_mutex_lock(&w->lock);
		va_start(ap, fmt);
		vsnprintf(w->text, sizeof(w->text), fmt, ap);
		va_end(ap);
		pthread_mutex_unlock(&w->lock);
	}
}

unsigned tst_why_count(struct tst_why *w)
{
	return atomic_load_explicit(&w->n, memory_order_relaxed);
}

const char *tst_why_first(struct tst_why *w)
{
	const char *t;

	if (!tst_why_count(w))
		return NULL;
	/* The text is complete once its writer unlocked (read at the end of
	 * a run, after the threads were joined: the lock only orders a
	 * reader that comes early). */
	pthread_mutex_lock(&w->lock);
	t = w->text;
	pthread_mutex_unlock(&w->lock);
	return t;
}
