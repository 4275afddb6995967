/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the probe's result cache, read and written
 * (src/misaligned/cache.c: hwt__cache_parse is hwt__cache_load without
 * the file, hwt__cache_format is hwt__cache_store without the file).
 *
 * First byte (mode) mod 3:
 *  0  the rest is the whole file, as is (the trailer's hash must match, so
 *     mostly rejections);
 *  1  the rest is the body: the key lines of KEY are put in front and a
 *     trailer with the right hash behind it, its count the next byte
 *     (0xff: the number of lines that begin "cpu "), so the entry lines
 *     themselves get parsed;
 *  2  the rest describes entries (see entries_case), which are formatted
 *     and parsed back.
 * Properties, any mode: the file is rejected (-EBADMSG, -ESTALE or
 * -ENOMEM, with *out NULL and *n 0) or accepted whole, and then every
 * entry is one the writer could have written (CPU in range and unique,
 * speed 1..4, the fields a load sets and nothing else) and formatting the
 * entries gives back exactly the bytes that were read: nothing in an
 * accepted file is ignored or read two ways.  Mode 2: every entry the
 * writer keeps is read back equal (a file with one CPU twice is rejected
 * whole, as the reader promises).
 */
#include "fuzz/fuzz.h"

#include "misaligned/misaligned.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

static const struct hwt__cache_key key = { "boot-1", "6.1.0-test", "00112233aabbccdd", "0.1.0" };

#define HEAD "hwtune-misaligned-cache 3\nboot_id boot-1\nkernel 6.1.0-test\n" \
	     "model 00112233aabbccdd\nversion 0.1.0\n"

/* FNV-1a 64, as the file format names it. */
static uint64_t fnv1a64(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

/* What load fills in besides the 32 stored numbers. */
static void check_entry(const struct hwt_misaligned_cpu *c)
{
	FUZZ_ASSERT(c->cpu >= 0 && c->cpu <= HWT_CPU_ID_MAX, "cpu %d", c->cpu);
	FUZZ_ASSERT(c->speed >= HWT_MISALIGNED_EMULATED && c->speed <= HWT_MISALIGNED_UNSUPPORTED,
		    "cpu %d: speed %d", c->cpu, (int)c->speed);
	FUZZ_ASSERT(c->source == HWT_MISALIGNED_FROM_CACHE && c->status == 0 &&
			    c->align_faults == -1 && c->hwprobe == -ENOSYS && c->probe_ns == 0 &&
			    c->check_ns == 0 && c->wave == 0 && c->fault_signal == 0 &&
			    c->preempted == 0 && c->notes == 0,
		    "cpu %d: a field the file does not hold is set", c->cpu);
}

/* Parse len bytes of text (text[len] is NUL); the properties of any read.
 * Returns the entries (or NULL) for the caller to free. */
static struct hwt_misaligned_cpu *read_back(const char *text, size_t len, unsigned *n, int *ret)
{
	struct hwt_misaligned_cpu *e = (void *)1;
	static uint8_t seen[HWT_CPU_ID_MAX + 1];
	char *again;
	size_t alen;
	int r;

	*n = 12345;
	r = hwt__cache_parse(text, len, &key, &e, n);
	*ret = r;
	if (r) {
		FUZZ_ASSERT(r == -EBADMSG || r == -ESTALE || r == -ENOMEM, "parse = %d", r);
		FUZZ_ASSERT(e == NULL && *n == 0, "rejected (%d), yet %u entries at %p", r, *n,
			    (void *)e);
		return NULL;
	}
	FUZZ_ASSERT(*n == 0 || e != NULL, "%u entries, no array", *n);
	for (unsigned i = 0; i < *n; i++) {
		check_entry(&e[i]);
		FUZZ_ASSERT(!seen[e[i].cpu], "cpu %d twice", e[i].cpu);
		seen[e[i].cpu] = 1;
	}
	for (unsigned i = 0; i < *n; i++)
		seen[e[i].cpu] = 0;
	r = hwt__cache_format(&key, e, *n, &again, &alen);
	FUZZ_ASSERT(r == 0, "format = %d", r);
	FUZZ_ASSERT(alen == len && !memcmp(again, text, len),
		    "accepted a file the writer would write differently:\n%s\n-- writer --\n%s",
		    text, again);
	free(again);
	return e;
}

static void raw_case(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	unsigned n;
	int r;

	FUZZ_ASSERT(text != NULL, "malloc");
	memcpy(text, data, size);
	text[size] = '\0';
	free(read_back(text, size, &n, &r));
	free(text);
}

static void body_case(const uint8_t *data, size_t size)
{
	size_t head = sizeof(HEAD) - 1, len;
	unsigned count = 0, n;
	char *text;
	int r;

	if (!size)
		return;
	count = data[0];
	data++, size--;
	text = malloc(head + size + 64);
	FUZZ_ASSERT(text != NULL, "malloc");
	memcpy(text, HEAD, head);
	memcpy(text + head, data, size);
	len = head + size;
	if (count == 0xff) {
		count = 0;
		for (size_t i = head; i + 4 <= len; i++)
			if ((i == head || text[i - 1] == '\n') && !memcmp(text + i, "cpu ", 4))
				count++;
	}
	len += (size_t)snprintf(text + len, 64, "end %u %016" PRIx64 "\n", count,
				fnv1a64(text, len));
	free(read_back(text, len, &n, &r));
	free(text);
}

/*
 * Entries: per entry 1 flag byte, then cpu (flag bit 0: 4 raw bytes, else
 * 2 bytes), speed (1 byte, any int value), ratio (4), word/byte/median ns
 * (flag bit 1: 8 raw bytes each, else 2), samples and reps (4 each); then
 * three vector results (vector, avx2, avx512), each speed (1, any int), ratio (4), word/byte ns
 * (wide), notes (2); then the split: four ratios (4 each), two aligned
 * times (wide), line and page bytes (4 each).
 */
static void take_vector(struct fuzz_in *in, unsigned wide, struct hwt_misaligned_vector *v)
{
	v->speed = (enum hwt_misaligned_speed)(int8_t)fuzz_take(in, 1);
	v->ratio_x100 = (unsigned)fuzz_take(in, 4);
	v->word_ns = fuzz_take(in, wide);
	v->byte_ns = fuzz_take(in, wide);
	v->notes = (unsigned)fuzz_take(in, 2);
}

/* The writer's rule for a vector result it keeps. */
static bool vector_kept(const struct hwt_misaligned_vector *v)
{
	if (v->speed == HWT_MISALIGNED_UNKNOWN)
		return v->notes & HWT_MISALIGNED_NOTE_NO_LOOP;
	return v->speed >= HWT_MISALIGNED_SLOW && v->speed <= HWT_MISALIGNED_UNSUPPORTED;
}

static bool vector_same(const struct hwt_misaligned_vector *a, const struct hwt_misaligned_vector *b)
{
	return a->speed == b->speed && a->ratio_x100 == b->ratio_x100 && a->word_ns == b->word_ns &&
	       a->byte_ns == b->byte_ns && a->notes == b->notes;
}
static void entries_case(const uint8_t *data, size_t size)
{
	enum { MAX_ENTRIES = 64 };
	struct fuzz_in in = { data, size };
	struct hwt_misaligned_cpu e[MAX_ENTRIES], kept[MAX_ENTRIES], *got;
	static uint8_t seen[HWT_CPU_ID_MAX + 1];
	unsigned ne = 0, nk = 0, n;
	bool dup = false;
	char *text;
	size_t len;
	int r;

	memset(e, 0, sizeof(e));
	while (in.n && ne < MAX_ENTRIES) {
		struct hwt_misaligned_cpu *c = &e[ne++];
		unsigned flag = (unsigned)fuzz_take(&in, 1);
		unsigned wide = flag & 2 ? 8 : 2;

		c->cpu = flag & 1 ? (int)(uint32_t)fuzz_take(&in, 4) : (int)fuzz_take(&in, 2);
		c->speed = (enum hwt_misaligned_speed)(int8_t)fuzz_take(&in, 1);
		c->ratio_x100 = (unsigned)fuzz_take(&in, 4);
		c->word_ns = fuzz_take(&in, wide);
		c->byte_ns = fuzz_take(&in, wide);
		c->word_median_ns = fuzz_take(&in, wide);
		c->byte_median_ns = fuzz_take(&in, wide);
		c->samples = (unsigned)fuzz_take(&in, 4);
		c->reps = (unsigned)fuzz_take(&in, 4);
		take_vector(&in, wide, &c->vector);
		take_vector(&in, wide, &c->avx2);
		take_vector(&in, wide, &c->avx512);
		c->split.line_load = (unsigned)fuzz_take(&in, 4);
		c->split.line_store = (unsigned)fuzz_take(&in, 4);
		c->split.page_load = (unsigned)fuzz_take(&in, 4);
		c->split.page_store = (unsigned)fuzz_take(&in, 4);
		c->split.aligned_load_ps = fuzz_take(&in, wide);
		c->split.aligned_store_ps = fuzz_take(&in, wide);
		c->split.line_bytes = (unsigned)fuzz_take(&in, 4);
		c->split.page_bytes = (unsigned)fuzz_take(&in, 4);
		c->probe_ns = flag; /* not stored: must not come back */
		c->notes = flag;
	}
	for (unsigned i = 0; i < ne; i++) {
		const struct hwt_misaligned_cpu *c = &e[i];

		if (c->speed < HWT_MISALIGNED_EMULATED || c->speed > HWT_MISALIGNED_UNSUPPORTED ||
		    c->cpu < 0 || c->cpu > HWT_CPU_ID_MAX || !vector_kept(&c->vector) ||
		    !vector_kept(&c->avx2) || !vector_kept(&c->avx512))
			continue; /* the writer skips these */
		dup |= seen[c->cpu];
		seen[c->cpu] = 1;
		kept[nk++] = *c;
	}
	for (unsigned i = 0; i < nk; i++)
		seen[kept[i].cpu] = 0;
	r = hwt__cache_format(&key, e, ne, &text, &len);
	FUZZ_ASSERT(r == 0, "format = %d", r);
	FUZZ_ASSERT(strlen(text) == len, "format: length %zu, text %zu", len, strlen(text));
	got = read_back(text, len, &n, &r);
	if (dup) {
		FUZZ_ASSERT(r == -EBADMSG, "a file with one CPU twice: %d", r);
	} else {
		FUZZ_ASSERT(r == 0, "the writer's own file (%u entries) is rejected: %d\n%s", nk, r,
			    text);
		FUZZ_ASSERT(n == nk, "%u entries written, %u read", nk, n);
		for (unsigned i = 0; i < n; i++) {
			const struct hwt_misaligned_cpu *a = &kept[i], *b = &got[i];

			FUZZ_ASSERT(a->cpu == b->cpu && a->speed == b->speed &&
					    a->ratio_x100 == b->ratio_x100 && a->word_ns == b->word_ns &&
					    a->byte_ns == b->byte_ns &&
					    a->word_median_ns == b->word_median_ns &&
					    a->byte_median_ns == b->byte_median_ns &&
					    a->samples == b->samples && a->reps == b->reps &&
					    vector_same(&a->vector, &b->vector) &&
					    vector_same(&a->avx2, &b->avx2) &&
					    vector_same(&a->avx512, &b->avx512) &&
					    !memcmp(&a->split, &b->split, sizeof(a->split)),
				    "entry %u (cpu %d) read back different", i, a->cpu);
		}
	}
	free(got);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		raw_case(data + 1, size - 1);
		break;
	case 1:
		body_case(data + 1, size - 1);
		break;
	default:
		entries_case(data + 1, size - 1);
		break;
	}
	return 0;
}
