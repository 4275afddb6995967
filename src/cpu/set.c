/* SPDX-License-Identifier: MIT */
/* CPU sets: a sorted array of CPU numbers, and the kernel's list syntax. */
#include "hwtune/cpu.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

HWT_API void hwt_cpus_free(struct hwt_cpus *set)
{
	if (!set)
		return;
	free(set->cpu);
	set->cpu = NULL;
	set->n = set->cap = 0;
}

static int grow(struct hwt_cpus *set, unsigned want)
{
	unsigned cap = set->cap ? set->cap : 16;
	int *p;

	if (want <= set->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	p = realloc(set->cpu, (size_t)cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	set->cpu = p;
	set->cap = cap;
	return 0;
}

/* First index whose CPU is >= cpu. */
static unsigned lower_bound(const struct hwt_cpus *set, int cpu)
{
	unsigned lo = 0, hi = set->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (set->cpu[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

HWT_API int hwt_cpus_add(struct hwt_cpus *set, int cpu)
{
	unsigned i;
	int r;

	if (!set || cpu < 0 || cpu > HWT_CPU_ID_MAX)
		return -EINVAL;
	/* Callers mostly add in ascending order: append without searching. */
	i = (set->n == 0 || set->cpu[set->n - 1] < cpu) ? set->n : lower_bound(set, cpu);
	if (i < set->n && set->cpu[i] == cpu)
		return 0;
	r = grow(set, set->n + 1);
	if (r)
		return r;
	memmove(set->cpu + i + 1, set->cpu + i, (size_t)(set->n - i) * sizeof(int));
	set->cpu[i] = cpu;
	set->n++;
	return 0;
}

HWT_API bool hwt_cpus_has(const struct hwt_cpus *set, int cpu)
{
	unsigned i;

	if (!set || set->n == 0 || cpu < 0)
		return false;
	i = lower_bound(set, cpu);
	return i < set->n && set->cpu[i] == cpu;
}

/* Why a list is invalid, into why[len] (if len), like snprintf. */
__attribute__((format(printf, 3, 4))) static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* Decimal number without sign or spaces, at most HWT_CPU_ID_MAX; NULL (and
 * the reason in why) otherwise. */
static const char *parse_num(const char *s, unsigned *out, char *why, size_t len)
{
	const char *start = s;
	unsigned v = 0;

	if (*s < '0' || *s > '9') {
		if (*s)
			say(why, len, "'%c' where a CPU number was expected", *s);
		else
			say(why, len, "a CPU number is missing at the end");
		return NULL;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > HWT_CPU_ID_MAX) {
			/* also keeps v far from overflow */
			say(why, len, "CPU %.*s is above the limit %d", (int)strspn(start, "0123456789"),
			    start, HWT_CPU_ID_MAX);
			return NULL;
		}
	}
	*out = v;
	return s;
}

/*
 * Grammar (one region per comma-separated group, nothing else allowed):
 *   N | A-B | A-B:G (every G-th from A) | A-B:U/G (first U of each G, kernel form)
 * Regions are collected in a bitmap so any order and overlap cost O(CPUs + max CPU / 64).
 */
HWT_API int hwt_cpus_parse_why(const char *list, struct hwt_cpus *out, char *why, size_t len)
{
	enum { WBITS = 64 };
	struct hwt_cpus set = HWT_CPUS_INIT;
	uint64_t *bits;
	unsigned max = 0;
	const char *s = list;
	int r = 0;

	say(why, len, "%s", "");
	if (!list || !out) {
		say(why, len, "no list");
		return -EINVAL;
	}
	if (!*list) {
		say(why, len, "the list is empty");
		return -EINVAL;
	}
	bits = calloc((HWT_CPU_ID_MAX + WBITS) / WBITS, sizeof(*bits));
	if (!bits) {
		say(why, len, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		unsigned a, b, used = 1, group = 1;

		s = parse_num(s, &a, why, len);
		if (!s)
			goto invalid;
		b = a;
		if (*s == '-') {
			s = parse_num(s + 1, &b, why, len);
			if (!s)
				goto invalid;
			if (b < a) {
				say(why, len, "range %u-%u is reversed", a, b);
				goto invalid;
			}
			if (*s == ':') {
				s = parse_num(s + 1, &group, why, len);
				if (!s)
					goto invalid;
				if (*s == '/') {
					used = group;
					s = parse_num(s + 1, &group, why, len);
					if (!s)
						goto invalid;
				}
				if (group == 0) {
					say(why, len, "range %u-%u: a group size of 0", a, b);
					goto invalid;
				}
				if (used == 0 || used > group) {
					say(why, len, "range %u-%u: %u used of each %u (expected 1..%u)", a,
					    b, used, group, group);
					goto invalid;
				}
			}
		}
		for (unsigned base = a; base <= b; base += group)
			for (unsigned c = base; c < base + used && c <= b; c++)
				bits[c / WBITS] |= (uint64_t)1 << (c % WBITS);
		if (b > max)
			max = b;
		if (*s == '\0')
			break;
		if (*s != ',') {
			say(why, len, "'%c' after %u (expected ',', '-', ':' or the end)", *s, b);
			goto invalid;
		}
		s++;
	}
	/* A word at a time: the empty words below max cost one test each. */
	for (unsigned w = 0; w <= max / WBITS && r == 0; w++)
		for (uint64_t m = bits[w]; m && r == 0; m &= m - 1)
			r = hwt_cpus_add(&set, (int)(w * WBITS + (unsigned)__builtin_ctzll(m)));
	free(bits);
	if (r) {
		hwt_cpus_free(&set);
		say(why, len, "%s", r == -ENOMEM ? "out of memory" : "cannot add a CPU");
		return r;
	}
	/* Replace out only on success, so a bad list leaves it intact. */
	hwt_cpus_free(out);
	*out = set;
	return 0;
invalid:
	free(bits);
	return -EINVAL;
}

HWT_API int hwt_cpus_parse(const char *list, struct hwt_cpus *out)
{
	return hwt_cpus_parse_why(list, out, NULL, 0);
}

/* Append "a" or "a-b" (b < 0: single) like snprintf: count all, write what fits. */
static void put(char *buf, size_t len, size_t *pos, bool comma, int a, int b)
{
	char tmp[32];
	int k = b < 0 ? snprintf(tmp, sizeof(tmp), "%s%d", comma ? "," : "", a)
		      : snprintf(tmp, sizeof(tmp), "%s%d-%d", comma ? "," : "", a, b);

	if (*pos + 1 < len) {
		size_t room = len - *pos - 1;
		size_t m = (size_t)k < room ? (size_t)k : room;

		memcpy(buf + *pos, tmp, m);
		buf[*pos + m] = '\0';
	}
	*pos += (size_t)k;
}

HWT_API int hwt_cpus_format(const struct hwt_cpus *set, char *buf, size_t len)
{
	size_t pos = 0;
	unsigned i = 0;

	if (!set || (!buf && len) || (set->n && !set->cpu))
		return -EINVAL;
	if (len)
		buf[0] = '\0';
	while (i < set->n) {
		unsigned j = i;

		if (set->cpu[i] < 0 || set->cpu[i] > HWT_CPU_ID_MAX)
			return -EINVAL;
		while (j + 1 < set->n && set->cpu[j + 1] == set->cpu[j] + 1)
			j++;
		if (j + 1 < set->n && set->cpu[j + 1] <= set->cpu[j])
			return -EINVAL; /* not a set: unsorted or duplicate */
		/* The kernel writes two neighbours as a range too ("0-1"). */
		put(buf, len, &pos, i > 0, set->cpu[i], j == i ? -1 : set->cpu[j]);
		i = j + 1;
	}
	/* At most 65536 entries of 12 bytes: always fits in an int. */
	return (int)pos;
}
