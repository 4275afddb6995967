/* SPDX-License-Identifier: MIT */
/* hwtune probe's text report: CPUs in groups (or one line each), the summary. */
#include "probe/report.h"

#include "probe/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void ratio_str(char *buf, size_t len, unsigned x100)
{
	snprintf(buf, len, "%u.%02u", x100 / 100, x100 % 100);
}

const char *probe_signame(int sig)
{
	switch (sig) {
	case SIGBUS: return "SIGBUS";
	case SIGSEGV: return "SIGSEGV";
	case SIGILL: return "SIGILL";
	default: return "signal";
	}
}

/* The text of each note, in bit order (the library's list). */
static const struct {
	unsigned bit;
	const char *text;
} notes[] = {
#define NOTE_TEXT(name, bit, key, text) { bit, text },
	HWT_MISALIGNED_NOTES(NOTE_TEXT)
#undef NOTE_TEXT
};

const char *probe_source_name(int s)
{
	return s == HWT_MISALIGNED_FROM_OVERRIDE ? "override"
	       : s == HWT_MISALIGNED_FROM_CACHE  ? "cache"
	       : s == HWT_MISALIGNED_FROM_SYSTEM ? "system"
						 : "measured";
}

/* Why the system result (or the cache) was not used, in a few words. */
const char *probe_system_reason(int err)
{
	return err == -EBADMSG ? "corrupt" : err == -ESTALE ? "foreign" : strerror(-err);
}

/* Why the system result was not used: the library's distinct reasons for
 * not trusting it (hwt_misaligned_system_read(3)), else as above. */
const char *probe_system_file_reason(int err)
{
	return err == -ELOOP    ? "not trusted: a symlink"
	       : err == -ENXIO  ? "not trusted: not a regular file"
	       : err == -EPERM  ? "not trusted: not owned by root"
	       : err == -EACCES ? "not trusted: writable by group or others"
				: probe_system_reason(err);
}

/* " [note: ...]" for each note but perf-unavailable (it has its own line). */
static void print_notes(FILE *f, unsigned bits)
{
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if ((bits & notes[i].bit) && notes[i].bit != HWT_MISALIGNED_NOTE_NO_PERF)
			fprintf(f, " [note: %s]", notes[i].text);
}

/* One line per CPU: the kernel's sentence, then details in brackets.  core
 * (non-NULL when the CPUs are of several kinds) follows the CPU number. */
static void print_cpu(FILE *f, const struct hwt_misaligned_cpu *c, const char *core)
{
	const char *name = hwt_misaligned_speed_name(c->speed);
	char ratio[32];

	ratio_str(ratio, sizeof(ratio), c->ratio_x100);
	fprintf(f, "cpu%d", c->cpu);
	if (core)
		fprintf(f, " (%s)", core);
	fprintf(f, ": ");
	if (c->status) {
		fprintf(f, "not probed: %s\n", strerror(-c->status));
		return;
	}
	if (c->source == HWT_MISALIGNED_FROM_OVERRIDE) {
		fprintf(f, "scalar unaligned access speed set to '%s' (%d) by override\n", name,
			c->speed);
		return;
	}
	if (c->fault_signal)
		fprintf(f, "a misaligned word access raised %s (%s)", probe_signame(c->fault_signal), name);
	else if (c->speed == HWT_MISALIGNED_EMULATED)
		fprintf(f, "misaligned accesses trap to the kernel, %" PRId64
			   " alignment faults in one copy iteration (%s)",
			c->align_faults, name);
	else if (c->ratio_x100 || c->word_ns)
		fprintf(f, "scalar unaligned word access speed is %sx byte access speed (%s)", ratio,
			name);
	else
		fprintf(f, "%s", name);
	if (c->source == HWT_MISALIGNED_FROM_CACHE || c->source == HWT_MISALIGNED_FROM_SYSTEM)
		fprintf(f, " [%s: word %" PRIu64 " ns, byte %" PRIu64 " ns]",
			c->source == HWT_MISALIGNED_FROM_CACHE ? "cached" : "system result", c->word_ns,
			c->byte_ns);
	else if (c->samples)
		fprintf(f, " [word %" PRIu64 " ns, byte %" PRIu64 " ns, min of %u sample%s x%u, probe %.3f ms]",
			c->word_ns, c->byte_ns, c->samples, c->samples == 1 ? "" : "s", c->reps,
			c->probe_ns / 1e6);
	if (c->hwprobe >= 0)
		fprintf(f, " [riscv_hwprobe: %s, %s]", hwt_misaligned_speed_name(c->hwprobe),
			c->hwprobe == (int)c->speed ? "agrees" : "disagrees");
	print_notes(f, c->notes);
	fputc('\n', f);
}

/*
 * CPUs that agree share one line.  Two CPUs agree when their group keys
 * are equal: the library's group (core identity, scalar and vector
 * verdicts), where the verdicts came from, the probe status, the fault
 * signal, hwprobe's answer and the notes (perf-unavailable aside: it has
 * its own line).
 */
struct group_key {
	int speed, source, vector_source, status, fault_signal, hwprobe;
	unsigned notes, group;
};

static struct group_key key_of(const struct probe_view *v, const struct hwt_misaligned_report *r,
			       unsigned i)
{
	const struct hwt_misaligned_cpu *c = &r->cpu[i];

	return (struct group_key){ .speed = c->speed, .source = c->source,
				   .vector_source = c->vector_source, .status = c->status,
				   .fault_signal = c->fault_signal, .hwprobe = c->hwprobe,
				   .notes = c->notes & ~HWT_MISALIGNED_NOTE_NO_PERF,
				   .group = v->gi ? v->gi[i] : 0 };
}

static bool key_equal(const struct group_key *a, const struct group_key *b)
{
	return a->speed == b->speed && a->source == b->source &&
	       a->vector_source == b->vector_source && a->status == b->status &&
	       a->fault_signal == b->fault_signal && a->hwprobe == b->hwprobe &&
	       a->notes == b->notes && a->group == b->group;
}

struct range_u64 {
	uint64_t lo, hi;
};

static void range_add(struct range_u64 *r, uint64_t v, bool first)
{
	if (first || v < r->lo)
		r->lo = v;
	if (first || v > r->hi)
		r->hi = v;
}

/* "lo" or "lo-hi" (one value when both print alike), values scaled by
 * 1/div with `decimals` digits, each followed by suffix. */
static void range_fmt(char *buf, size_t len, const struct range_u64 *r, double div,
		      int lo_decimals, int hi_decimals, const char *suffix)
{
	char lo[32], hi[32];

	snprintf(lo, sizeof(lo), "%.*f", lo_decimals, r->lo / div);
	snprintf(hi, sizeof(hi), "%.*f", hi_decimals, r->hi / div);
	if (!strcmp(lo, hi))
		snprintf(buf, len, "%s%s", lo, suffix);
	else
		snprintf(buf, len, "%s-%s%s", lo, hi, suffix);
}

static void range_str(char *buf, size_t len, const struct range_u64 *r, double div, int decimals)
{
	range_fmt(buf, len, r, div, decimals, decimals, "");
}

/* One vector unit over the member CPUs (all of one group: one verdict). */
static void print_vector(FILE *f, const struct hwt_misaligned_report *r, const bool *member,
			 unsigned unit)
{
	const struct hwt_misaligned_vector *v0 = NULL;
	struct range_u64 ratio = { 0, 0 };
	int source = HWT_MISALIGNED_MEASURED;
	bool first = true;
	char a[64];

	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_vector *v = hwt_misaligned_cpu_unit(&r->cpu[i], unit);

		if (!member[i])
			continue;
		if (!v0) {
			v0 = v;
			source = r->cpu[i].vector_source;
		}
		if (v->ratio_x100) {
			range_add(&ratio, v->ratio_x100, first);
			first = false;
		}
	}
	if (!v0)
		return;
	if (unit != HWT_MISALIGNED_UNIT_VECTOR)
		fprintf(f, "%s", v0->unit);
	else if (v0->unit)
		fprintf(f, "vector (%s)", v0->unit);
	else
		fprintf(f, "vector");
	fprintf(f, ": ");
	if (source == HWT_MISALIGNED_FROM_OVERRIDE)
		fprintf(f, "set to '%s' (%d) by override", hwt_misaligned_speed_name(v0->speed),
			v0->speed);
	else if (v0->fault_signal)
		fprintf(f, "%s (a misaligned vector access raised %s)",
			hwt_misaligned_speed_name(v0->speed), probe_signame(v0->fault_signal));
	else if (v0->notes & HWT_MISALIGNED_NOTE_NO_UNIT)
		fprintf(f, "%s (no such unit)", hwt_misaligned_speed_name(v0->speed));
	else if (v0->notes & HWT_MISALIGNED_NOTE_NO_LOOP)
		fprintf(f, "%s (no vector loop in this build)", hwt_misaligned_speed_name(v0->speed));
	else if (v0->notes & HWT_MISALIGNED_NOTE_SKIPPED)
		fprintf(f, "%s (not measured)", hwt_misaligned_speed_name(v0->speed));
	else if (!first)
		fprintf(f, "%s (ratio %s)", hwt_misaligned_speed_name(v0->speed),
			(range_str(a, sizeof(a), &ratio, 100, 1), a));
	else
		fprintf(f, "%s", hwt_misaligned_speed_name(v0->speed));
}

/* A split penalty range: "1.8x", "41x", "1.8-2.1x"; "not measured". */
static void split_str(char *buf, size_t len, const struct range_u64 *r, bool any)
{
	if (!any) {
		snprintf(buf, len, "not measured");
		return;
	}
	range_fmt(buf, len, r, 100, r->lo >= 1000 ? 0 : 1, r->hi >= 1000 ? 0 : 1, "x");
}

/* The vector unit(s) and the split penalties of the member CPUs, one line
 * each ("  vector (sse2): fast (ratio 11.2) ; avx2: fast (ratio 19.0) ; avx512: ..."). */
static void print_extras(FILE *f, const struct hwt_misaligned_report *r, const bool *member)
{
	const struct hwt_misaligned_cpu *c0 = NULL;
	struct range_u64 rg[4] = { { 0, 0 } };
	bool any[4] = { false };
	char b[4][64];

	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_cpu *c = &r->cpu[i];
		unsigned val[4] = { c->split.line_load, c->split.line_store, c->split.page_load,
				    c->split.page_store };

		if (!member[i])
			continue;
		if (!c0)
			c0 = c;
		for (int k = 0; k < 4; k++)
			if (val[k]) {
				range_add(&rg[k], val[k], !any[k]);
				any[k] = true;
			}
	}
	if (!c0 || c0->status)
		return;
	fprintf(f, "  ");
	print_vector(f, r, member, HWT_MISALIGNED_UNIT_VECTOR);
	for (unsigned u = HWT_MISALIGNED_UNIT_AVX2; u < HWT_MISALIGNED_UNITS; u++) {
		if (hwt_misaligned_cpu_unit(c0, u)->unit) {
			fprintf(f, " ; ");
			print_vector(f, r, member, u);
		}
	}
	fputc('\n', f);
	if (!any[0] && !any[1] && !any[2] && !any[3])
		return; /* not measured (faults, traps, both overrides, NO_VECTOR) */
	for (int k = 0; k < 4; k++)
		split_str(b[k], sizeof(b[k]), &rg[k], any[k]);
	fprintf(f, "  split penalties: line load %s, store %s; page load %s, store %s\n", b[0], b[1],
		b[2], b[3]);
}

/* One CPU's line and its extras. */
static void print_cpu_full(FILE *f, const struct hwt_misaligned_report *r, unsigned i,
			   const char *core, bool *member)
{
	print_cpu(f, &r->cpu[i], core);
	member[i] = true;
	print_extras(f, r, member);
	member[i] = false;
}

/* One line for the CPUs of r whose key is k (members[] marks them). */
static void print_group(FILE *f, const struct hwt_misaligned_report *r, const bool *member,
			const struct hwt_cpus *set, const char *core)
{
	const struct hwt_misaligned_cpu *c0 = NULL;
	struct range_u64 ratio = { 0, 0 }, word = { 0, 0 }, byte = { 0, 0 }, probe = { 0, 0 },
			 faults = { 0, 0 };
	char list[512], a[64], b[64], d[64], e[64];
	bool first = true;

	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_cpu *c = &r->cpu[i];

		if (!member[i])
			continue;
		if (!c0)
			c0 = c;
		range_add(&ratio, c->ratio_x100, first);
		range_add(&word, c->word_ns, first);
		range_add(&byte, c->byte_ns, first);
		range_add(&probe, c->probe_ns, first);
		range_add(&faults, c->align_faults < 0 ? 0 : (uint64_t)c->align_faults, first);
		first = false;
	}
	if (hwt_cpus_format(set, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "?");
	fprintf(f, "cpus %s", list);
	if (core)
		fprintf(f, " (%s)", core);
	fprintf(f, ": ");
	if (c0->status) {
		fprintf(f, "not probed: %s\n", strerror(-c0->status));
		return;
	}
	if (c0->source == HWT_MISALIGNED_FROM_OVERRIDE) {
		fprintf(f, "scalar unaligned access speed set to '%s' (%d) by override\n",
			hwt_misaligned_speed_name(c0->speed), c0->speed);
		print_extras(f, r, member);
		return;
	}
	fprintf(f, "%s", hwt_misaligned_speed_name(c0->speed));
	range_str(a, sizeof(a), &ratio, 100, 2);
	if (c0->fault_signal)
		fprintf(f, " (a misaligned word access raised %s)", probe_signame(c0->fault_signal));
	else if (c0->speed == HWT_MISALIGNED_EMULATED)
		fprintf(f, " (%s alignment faults in one copy iteration)",
			(range_str(b, sizeof(b), &faults, 1, 0), b));
	else if (ratio.hi || word.hi)
		fprintf(f, " (ratio %s)", a);
	range_str(b, sizeof(b), &word, 1, 0);
	range_str(d, sizeof(d), &byte, 1, 0);
	range_str(e, sizeof(e), &probe, 1e6, 3);
	if (c0->source == HWT_MISALIGNED_FROM_CACHE || c0->source == HWT_MISALIGNED_FROM_SYSTEM)
		fprintf(f, " [%s: word %s ns, byte %s ns]",
			c0->source == HWT_MISALIGNED_FROM_CACHE ? "cached" : "system result", b, d);
	else if (word.hi || byte.hi)
		fprintf(f, " [word %s ns, byte %s ns, probe %s ms]", b, d, e);
	if (c0->hwprobe >= 0)
		fprintf(f, " [riscv_hwprobe: %s, %s]", hwt_misaligned_speed_name(c0->hwprobe),
			c0->hwprobe == (int)c0->speed ? "agrees" : "disagrees");
	print_notes(f, c0->notes);
	fputc('\n', f);
	print_extras(f, r, member);
}

/* The CPUs in groups of equal keys, in the order of each group's first CPU;
 * a group of one CPU gets the per-CPU line.  With per_cpu, every CPU its
 * own line. */
static void print_grouped(FILE *f, const struct hwt_misaligned_report *r, bool per_cpu)
{
	bool *done = calloc(r->n ? r->n : 1, sizeof(*done));
	bool *member = calloc(r->n ? r->n : 1, sizeof(*member));
	struct probe_view v;

	probe_view_read(&v, r);
	if (!done || !member) { /* no memory: the long form, without extras */
		for (unsigned i = 0; i < r->n; i++)
			print_cpu(f, &r->cpu[i], NULL);
		goto out;
	}
	for (unsigned i = 0; i < r->n; i++) {
		struct group_key k = key_of(&v, r, i);
		struct hwt_cpus set = HWT_CPUS_INIT;
		unsigned count = 0;

		if (done[i])
			continue;
		if (per_cpu) {
			print_cpu_full(f, r, i, NULL, member);
			continue;
		}
		for (unsigned j = i; j < r->n; j++) {
			struct group_key kj = key_of(&v, r, j);

			member[j] = !done[j] && key_equal(&k, &kj);
			if (member[j]) {
				done[j] = true;
				count++;
				if (hwt_cpus_add(&set, r->cpu[j].cpu) < 0)
					count = 0; /* cannot list them: fall back below */
			}
		}
		if (count > 1) {
			print_group(f, r, member, &set, probe_view_core(&v, i));
			memset(member, 0, r->n * sizeof(*member));
		} else {
			bool *one = calloc(r->n, sizeof(*one));

			memcpy(one, member, r->n * sizeof(*member));
			memset(member, 0, r->n * sizeof(*member));
			for (unsigned j = i; j < r->n; j++)
				if (one && one[j])
					print_cpu_full(f, r, j, probe_view_core(&v, j), member);
			free(one);
		}
		hwt_cpus_free(&set);
	}
out:
	probe_view_free(&v);
	free(done);
	free(member);
}

/* "cache: off (why)" when the result cache was neither read nor written
 * (JSON: "cache": "off" and cache_ignored); nothing when it was used, or
 * when the system result answered for every CPU. */
static void print_cache_off(FILE *f, const struct hwt_misaligned_report *r)
{
	const struct hwt_misaligned_cpu *c = r->n ? &r->cpu[0] : NULL;

	if (!r->cache_off || r->source == HWT_MISALIGNED_FROM_SYSTEM)
		return;
	if (r->cache_status)
		fprintf(f, "cache: off (no usable cache folder: %s)\n",
			probe_system_reason(r->cache_status));
	else if (r->source == HWT_MISALIGNED_FROM_OVERRIDE ||
		 (c && c->vector_source == HWT_MISALIGNED_FROM_OVERRIDE))
		fprintf(f, "cache: off (an override answers)\n");
	else if (c && (c->vector.notes & HWT_MISALIGNED_NOTE_SKIPPED))
		fprintf(f, "cache: off (a partial probe)\n");
	else
		fprintf(f, "cache: off (--no-cache or --system: neither read nor written)\n");
}

void probe_print_human(FILE *f, const struct hwt_misaligned_report *r, bool per_cpu)
{
	unsigned count[HWT_MISALIGNED_UNSUPPORTED + 1] = { 0 }, probed = 0, noperf = 0;
	bool avx2 = false, avx512 = false;

	print_grouped(f, r, per_cpu);
	for (unsigned i = 0; i < r->n; i++) {
		avx2 |= r->cpu[i].avx2.unit != NULL;
		avx512 |= r->cpu[i].avx512.unit != NULL;
		if (r->cpu[i].status)
			continue;
		probed++;
		count[r->cpu[i].speed]++;
		noperf += (r->cpu[i].notes & HWT_MISALIGNED_NOTE_NO_PERF) != 0;
	}
	if (noperf)
		fprintf(f, "note: perf events unavailable on %u CPU%s: kernel emulation (emulated) "
			   "cannot be detected\n", noperf, noperf == 1 ? "" : "s");
	fprintf(f, "summary: %s (", hwt_misaligned_speed_name(r->summary));
	for (int s = 0, first = 1; s <= HWT_MISALIGNED_UNSUPPORTED; s++) {
		if (!count[s])
			continue;
		fprintf(f, "%s%u %s", first ? "" : ", ", count[s], hwt_misaligned_speed_name(s));
		first = 0;
	}
	fprintf(f, "%s of %u CPU%s); vector: %s", probed ? "" : "none probed", r->n,
		r->n == 1 ? "" : "s",
		hwt_misaligned_speed_name(r->vector_summary));
	if (avx2)
		fprintf(f, ", avx2: %s", hwt_misaligned_speed_name(r->avx2_summary));
	if (avx512)
		fprintf(f, ", avx512: %s", hwt_misaligned_speed_name(r->avx512_summary));
	fputc('\n', f);
	if (r->system_status && r->system_status != -ENOENT)
		fprintf(f, "note: the system result was ignored: %s\n",
			probe_system_file_reason(r->system_status));
	print_cache_off(f, r);
	fprintf(f, "wall time: %.3f ms (%s, %s, %u wave%s, budget %.3f ms per CPU%s)\n",
		r->wall_ns / 1e6, probe_source_name(r->source), r->serial ? "serial" : "parallel",
		r->waves, r->waves == 1 ? "" : "s", r->budget_us / 1e3,
		r->kernel_window ? ", kernel window" : "");
}
