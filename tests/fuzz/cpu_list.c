/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the CPU-list parser and formatter (src/cpu/set.c).
 *
 * First byte even: the rest is a list string ("0-3,8,10-14:2", the kernel's
 * syntax; an embedded NUL ends it).  hwt_cpus_parse must agree with a
 * reference parser written here from the grammar in hwtune/cpu.h (accept
 * or reject, and the exact set); a rejected list leaves the output set as
 * it was.  For an accepted list S: parse(format(S)) is S, format is a fixed
 * point (format(parse(format(S))) == format(S)), and a short buffer gets
 * snprintf semantics (the full length returned, a NUL-terminated prefix).
 * Lists whose regions span more than MAX_WORK CPUs in all are skipped:
 * with libFuzzer's comparison tracing a 65536-CPU list costs ~40 ms, and
 * the fuzzer would spend most of its time there (unit_cpu's
 * parse_many_cpus covers big sets; big numbers are still fuzzed, as in
 * "65530-65535").
 *
 * First byte odd: the rest is a set, two bytes per CPU number (mod
 * HWT_CPU_ID_MAX + 1), added with hwt_cpus_add in input order; the set
 * must stay sorted and duplicate-free, and parse(format(set)) == set.
 */
#include "fuzz/fuzz.h"

#include <hwtune/cpu.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define NCPU (HWT_CPU_ID_MAX + 1)
#define MAX_WORK 8192ul

static uint8_t ref_bits[NCPU]; /* 1: in the reference set */
static unsigned ref_list[NCPU], ref_n; /* the CPUs of ref_bits, in no order */
static char fmt_buf[NCPU * 8];

static void ref_clear(void)
{
	while (ref_n)
		ref_bits[ref_list[--ref_n]] = 0;
}

static void ref_set(unsigned c)
{
	if (!ref_bits[c]) {
		ref_bits[c] = 1;
		ref_list[ref_n++] = c;
	}
}

/* set has exactly the reference's CPUs. */
static void ref_same(const struct hwt_cpus *set, const char *what)
{
	for (unsigned i = 0; i < set->n; i++) {
		int c = set->cpu[i];

		FUZZ_ASSERT(c >= 0 && c < NCPU && ref_bits[c],
			    "%s: CPU %d in the set, not in the reference", what, c);
	}
	FUZZ_ASSERT(set->n == ref_n, "%s: %u CPUs in the set, %u in the reference", what,
		    set->n, ref_n);
}

/* Decimal digits, value at most HWT_CPU_ID_MAX (any number of leading zeros). */
static bool ref_num(const char **s, unsigned long *v)
{
	const char *p = *s;
	unsigned long x = 0;

	if (!(*p >= '0' && *p <= '9'))
		return false;
	while (*p >= '0' && *p <= '9') {
		x = x * 10 + (unsigned long)(*p++ - '0');
		if (x > HWT_CPU_ID_MAX)
			return false;
	}
	*s = p;
	*v = x;
	return true;
}

/* Regions "N", "A-B", "A-B:G", "A-B:U/G", comma-separated, nothing else:
 * CPU c of A-B belongs if (c - A) mod G < U (U = 1 without "/").  *work
 * (if non-NULL) counts the CPUs the regions span. */
static bool ref_parse(const char *s, unsigned long *work)
{
	ref_clear();
	for (;;) {
		unsigned long a, b, u = 1, g = 1;

		if (!ref_num(&s, &a))
			return false;
		b = a;
		if (*s == '-') {
			s++;
			if (!ref_num(&s, &b) || b < a)
				return false;
			if (*s == ':') {
				s++;
				if (!ref_num(&s, &g))
					return false;
				if (*s == '/') {
					s++;
					u = g;
					if (!ref_num(&s, &g))
						return false;
				}
				if (u < 1 || g < 1 || u > g)
					return false;
			}
		}
		if (work)
			*work += b - a + 1;
		for (unsigned long c = a; c <= b; c++)
			if ((c - a) % g < u)
				ref_set((unsigned)c);
		if (*s == '\0')
			return true;
		if (*s++ != ',')
			return false;
	}
}

static void check_set(const struct hwt_cpus *set)
{
	for (unsigned i = 0; i < set->n; i++) {
		FUZZ_ASSERT(set->cpu[i] >= 0 && set->cpu[i] <= HWT_CPU_ID_MAX, "cpu[%u] = %d", i,
			    set->cpu[i]);
		FUZZ_ASSERT(i == 0 || set->cpu[i - 1] < set->cpu[i], "cpu[%u] = %d after %d", i,
			    set->cpu[i], set->cpu[i - 1]);
	}
	FUZZ_ASSERT(set->n <= set->cap, "n %u > cap %u", set->n, set->cap);
}

static bool same_set(const struct hwt_cpus *a, const struct hwt_cpus *b)
{
	return a->n == b->n && (a->n == 0 || !memcmp(a->cpu, b->cpu, a->n * sizeof(int)));
}

/* format(set) round trips through parse and is its own canonical form. */
static void check_format(const struct hwt_cpus *set)
{
	struct hwt_cpus back = HWT_CPUS_INIT;
	static char buf2[sizeof(fmt_buf)];
	char small[16];
	int len = hwt_cpus_format(set, fmt_buf, sizeof(fmt_buf)), r;

	FUZZ_ASSERT(len >= 0 && (size_t)len < sizeof(fmt_buf), "format = %d", len);
	FUZZ_ASSERT(strlen(fmt_buf) == (size_t)len, "format wrote %zu of %d", strlen(fmt_buf), len);
	FUZZ_ASSERT(hwt_cpus_format(set, NULL, 0) == len, "format(NULL, 0) != %d", len);
	for (size_t cut = 1; cut <= sizeof(small); cut += 5) {
		memset(small, 'x', sizeof(small));
		r = hwt_cpus_format(set, small, cut);
		FUZZ_ASSERT(r == len, "format(len %zu) = %d, not %d", cut, r, len);
		FUZZ_ASSERT(strlen(small) == ((size_t)len < cut ? (size_t)len : cut - 1) &&
				    !strncmp(small, fmt_buf, strlen(small)),
			    "format(len %zu) wrote '%s' of '%s'", cut, small, fmt_buf);
	}
	if (set->n == 0) {
		FUZZ_ASSERT(len == 0, "empty set formats as '%s'", fmt_buf);
		return;
	}
	r = hwt_cpus_parse(fmt_buf, &back);
	FUZZ_ASSERT(r == 0, "parse(format(S)) = %d for '%s'", r, fmt_buf);
	FUZZ_ASSERT(same_set(set, &back), "parse(format(S)) != S: '%s' gives %u CPUs, S has %u",
		    fmt_buf, back.n, set->n);
	r = hwt_cpus_format(&back, buf2, sizeof(buf2));
	FUZZ_ASSERT(r == len && !strcmp(buf2, fmt_buf), "format not a fixed point: '%s' then '%s'",
		    fmt_buf, buf2);
	/* ref_parse agrees on the canonical form too */
	FUZZ_ASSERT(ref_parse(fmt_buf, NULL), "the reference rejects the canonical '%s'", fmt_buf);
	ref_same(&back, fmt_buf);
	hwt_cpus_free(&back);
}

static void list_case(const uint8_t *data, size_t size)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char *s = malloc(size + 1);
	unsigned long work = 0;
	bool ok;
	int r;

	FUZZ_ASSERT(s != NULL, "malloc");
	memcpy(s, data, size);
	s[size] = '\0';
	FUZZ_ASSERT(hwt_cpus_add(&set, 42) == 0, "add");
	ok = ref_parse(s, &work);
	if (work > MAX_WORK) /* a valid list, but too slow to check here */
		goto out;
	r = hwt_cpus_parse(s, &set);
	FUZZ_ASSERT(r == (ok ? 0 : -EINVAL), "parse('%s') = %d, the reference %s", s, r,
		    ok ? "accepts" : "rejects");
	if (r) {
		FUZZ_ASSERT(set.n == 1 && set.cpu[0] == 42, "a rejected list changed the set");
	} else {
		check_set(&set);
		FUZZ_ASSERT(set.n > 0, "'%s' accepted as the empty set", s);
		ref_same(&set, s);
		check_format(&set);
	}
out:
	hwt_cpus_free(&set);
	free(s);
}

static void set_case(const uint8_t *data, size_t size)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct fuzz_in in = { data, size };

	ref_clear();
	while (in.n) {
		int c = (int)(fuzz_take(&in, 2) % NCPU);

		FUZZ_ASSERT(hwt_cpus_add(&set, c) == 0, "add(%d)", c);
		ref_set((unsigned)c);
		FUZZ_ASSERT(hwt_cpus_has(&set, c), "has(%d) after add", c);
	}
	check_set(&set);
	ref_same(&set, "hwt_cpus_add");
	check_format(&set);
	hwt_cpus_free(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		set_case(data + 1, size - 1);
	else
		list_case(data + 1, size - 1);
	return 0;
}
