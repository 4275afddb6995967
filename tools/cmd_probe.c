/* SPDX-License-Identifier: MIT */
/* hwtune probe: misaligned-access speed of each allowed CPU. */
#include "cli.h"
#include "cmd_probe.h"
#include "report.h"

#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hwtune probe [--cpus LIST] [--serial] [--budget-ms N] [--kernel-window]\n"
		"                    [--smt=together|apart] [--no-cache] [--json] [--per-cpu]\n"
		"                    [--format=text|json|prom]\n"
		"                    [--unaligned-scalar-speed=slow|fast|unsupported]\n"
		"                    [--unaligned-vector-speed=slow|fast|unsupported]\n"
		"       hwtune probe --system [--serial] [--budget-ms N] [--kernel-window]\n"
		"                    [--smt=together|apart] [--json] [--per-cpu] [--format=F]\n"
		"\n"
		"Time a copy made of misaligned word accesses against the same copy made byte\n"
		"by byte on each CPU (the Linux RISC-V boot probe: 16 KiB buffer, dst offset 1,\n"
		"src 8 KiB + 2 further, 8064 bytes, minimum time of each loop) and classify it\n"
		"with riscv_hwprobe's values: unknown 0, emulated 1, slow 2 (word copy not\n"
		"faster), fast 3 (word copy faster), unsupported 4 (the access raises a signal).\n"
		"All CPUs are probed at once. The summary is hwprobe's rule: all CPUs equal\n"
		"gives that value, any difference gives unknown.\n"
		"Each CPU's vector unit(s) (sse2 and avx2 on x86_64, neon, rvv) are timed the\n"
		"same way, and the cost of a word access that splits a cache line or a page.\n"
		"Without --system the answer comes from the system result file (written by\n"
		"'hwtune probe --system'), then the user cache, then a probe.\n"
		"\n"
		"  --cpus LIST       CPUs to probe, kernel list syntax (0-3,8,10-14:2), CPU numbers\n"
		"                    decimal 0..65535; each must be in this process's allowed set\n"
		"                    (default: all of it)\n"
		"  --serial          one CPU after another (the kernel's first version)\n"
		"  --budget-ms N     time budget per CPU in ms, decimal 1..60000 (default 1);\n"
		"                    the probe stops earlier once both minima are stable\n"
		"  --kernel-window   the kernel's fixed windows: 8 ms of word copies, then 8 ms\n"
		"                    of byte copies, one copy per sample, no early stop\n"
		"  --smt=MODE        together (default): SMT siblings are probed at the same\n"
		"                    time; apart: siblings go in separate waves\n"
		"  --no-cache        neither read the system result nor read or write the cache\n"
		"  --json            one JSON object on stdout (= --format=json; always one\n"
		"                    entry per CPU)\n"
		"  --per-cpu         one line per CPU (default: one line per group of CPUs\n"
		"                    that agree)\n"
		"  --format=FORMAT   text (default), json or prom (Prometheus text format,\n"
		"                    for node_exporter's textfile collector)\n"
		"  --unaligned-scalar-speed=WORD\n"
		"                    skip probing and report WORD (slow, fast or unsupported)\n"
		"                    for every CPU, like the kernel's unaligned_scalar_speed=\n"
		"                    (the vector units and the split penalties are still probed)\n"
		"  --unaligned-vector-speed=WORD\n"
		"                    report WORD for every vector unit of every CPU without\n"
		"                    probing them, like the kernel's unaligned_vector_speed=;\n"
		"                    with both overrides nothing is probed\n"
		"  --system          probe every online CPU this process may use, fresh, and write\n"
		"                    the system result ($HWTUNE_RUNTIME_DIR if absolute, else\n"
		"                    /run/hwtune: normally needs root); excludes --cpus, the\n"
		"                    overrides and --no-cache\n"
		"  -h, --help        this text\n"
		"\n"
		"Options take --opt=value or --opt value and may be abbreviated while unambiguous;\n"
		"'--' ends the options.  Numbers are decimal (leading zeros too: 010 is ten).\n"
		"\n"
		"Environment:\n"
		"  HWTUNE_UNALIGNED_SCALAR_SPEED=WORD   same as --unaligned-scalar-speed (the flag\n"
		"                    wins; set but empty is an error, as any other bad word)\n"
		"  HWTUNE_UNALIGNED_VECTOR_SPEED=WORD   same as --unaligned-vector-speed (same rules)\n"
		"  HWTUNE_RUNTIME_DIR  folder of the system result file (absolute; default\n"
		"                    /run/hwtune), read by every run and written by --system\n"
		"  XDG_CACHE_HOME    the cache lives in $XDG_CACHE_HOME/hwtune/ (else\n"
		"                    ~/.cache/hwtune/), keyed by boot id, kernel release, CPU\n"
		"                    model and library version; CPUs missing from it are probed\n"
		"                    and added. --serial, --budget-ms, --kernel-window and\n"
		"                    --smt=apart always measure (and then update the cache).\n"
		"\n"
		"Exit status: 0 done, 1 the probe failed, 2 bad usage.\n");
}

static void ratio_str(char *buf, size_t len, unsigned x100)
{
	snprintf(buf, len, "%u.%02u", x100 / 100, x100 % 100);
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGBUS: return "SIGBUS";
	case SIGSEGV: return "SIGSEGV";
	case SIGILL: return "SIGILL";
	default: return "signal";
	}
}

static const struct {
	unsigned bit;
	const char *key, *text;
} notes[] = {
	{ HWT_MISALIGNED_NOTE_FIRMWARE, "probably-firmware-emulated",
	  "probably firmware-emulated: the word copy is over 10x slower than bytes and the "
	  "kernel saw no alignment fault" },
	{ HWT_MISALIGNED_NOTE_COARSE, "coarse-counter",
	  "counter lacks granularity needed to measure unaligned access speed" },
	{ HWT_MISALIGNED_NOTE_MARGINAL, "marginal", "ratio within 0.90..1.10: a near tie" },
	{ HWT_MISALIGNED_NOTE_NO_PERF, "perf-unavailable",
	  "perf events unavailable: kernel emulation (emulated) cannot be detected" },
	{ HWT_MISALIGNED_NOTE_MIGRATED, "migrated", "the probe thread left its CPU" },
	{ HWT_MISALIGNED_NOTE_BUDGET, "budget-exhausted",
	  "stopped by the time budget before the minima were stable" },
	{ HWT_MISALIGNED_NOTE_BAD_COPY, "bad-copy", "a copy loop did not copy: verdict unknown" },
	{ HWT_MISALIGNED_NOTE_CHECK_FAILED, "fault-check-failed",
	  "the fault check could not run (its signal guard was not installed)" },
	{ HWT_MISALIGNED_NOTE_NO_LOOP, "no-loop", "no vector loop in this build" },
	{ HWT_MISALIGNED_NOTE_NO_UNIT, "no-unit", "no such vector unit" },
	{ HWT_MISALIGNED_NOTE_SKIPPED, "skipped", "not measured" },
};

static const char *source_name(int s)
{
	return s == HWT_MISALIGNED_FROM_OVERRIDE ? "override"
	       : s == HWT_MISALIGNED_FROM_CACHE  ? "cache"
	       : s == HWT_MISALIGNED_FROM_SYSTEM ? "system"
						 : "measured";
}

/* Why the system result (or the cache) was not used, in a few words. */
static const char *system_reason(int err)
{
	return err == -EBADMSG ? "corrupt" : err == -ESTALE ? "foreign" : strerror(-err);
}

/*
 * What the output knows beyond the report: the library's groups (CPUs
 * alike in core identity and verdicts) and each CPU's identity.  Either
 * may be missing (no memory, unreadable files): then lines name no core.
 */
struct probe_view {
	struct hwt_misaligned_group *g;
	unsigned ng;
	unsigned *gi;             /* r->cpu[i]'s group index; ng: in none */
	struct hwt_cpu_ident *id; /* r->cpu[i]'s identity; NULL: not read */
	bool multi;               /* the CPUs have more than one identity */
};

/* HWTUNE_ROOT (a test-only prefix) for the library, NULL for the real /. */
static const char *probe_root(void)
{
	const char *root = report_root();

	return root && root[0] ? root : NULL;
}

static void view_read(struct probe_view *v, const struct hwt_misaligned_report *r)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	bool ok;

	memset(v, 0, sizeof(*v));
	if (hwt_misaligned_groups(r, probe_root(), &v->g, &v->ng) < 0) {
		v->g = NULL;
		v->ng = 0;
	}
	v->gi = calloc(r->n ? r->n : 1, sizeof(*v->gi));
	v->id = calloc(r->n ? r->n : 1, sizeof(*v->id));
	ok = v->id != NULL;
	for (unsigned i = 0; i < r->n && ok; i++) /* r->cpu[] ascends: set's order is r's */
		ok = hwt_cpus_add(&set, r->cpu[i].cpu) == 0;
	if (ok && hwt_cpu_identities(probe_root(), &set, v->id) < 0)
		ok = false;
	if (!ok) {
		free(v->id);
		v->id = NULL;
	}
	hwt_cpus_free(&set);
	for (unsigned i = 0; v->gi && i < r->n; i++) {
		v->gi[i] = v->ng;
		for (unsigned k = 0; k < v->ng; k++)
			if (hwt_cpus_has(&v->g[k].cpus, r->cpu[i].cpu)) {
				v->gi[i] = k;
				break;
			}
	}
	for (unsigned k = 1; k < v->ng; k++)
		if (!hwt_cpu_ident_equal(&v->g[0].ident, &v->g[k].ident))
			v->multi = true;
}

static void view_free(struct probe_view *v)
{
	if (v->g)
		hwt_misaligned_groups_free(v->g, v->ng);
	free(v->gi);
	free(v->id);
	memset(v, 0, sizeof(*v));
}

/* The core string a line about r->cpu[i] names, or NULL (one identity only). */
static const char *view_core(const struct probe_view *v, unsigned i)
{
	if (!v->multi)
		return NULL;
	if (v->gi && v->gi[i] < v->ng)
		return v->g[v->gi[i]].ident.core;
	return v->id ? v->id[i].core : NULL;
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
		fprintf(f, "a misaligned word access raised %s (%s)", signame(c->fault_signal), name);
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
		fprintf(f, " [word %" PRIu64 " ns, byte %" PRIu64 " ns, min of %u samples x%u, probe %.3f ms]",
			c->word_ns, c->byte_ns, c->samples, c->reps, c->probe_ns / 1e6);
	if (c->hwprobe >= 0)
		fprintf(f, " [riscv_hwprobe: %s, %s]", hwt_misaligned_speed_name(c->hwprobe),
			c->hwprobe == (int)c->speed ? "agrees" : "disagrees");
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if ((c->notes & notes[i].bit) && notes[i].bit != HWT_MISALIGNED_NOTE_NO_PERF)
			fprintf(f, " [note: %s]", notes[i].text);
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
			 bool wide)
{
	const struct hwt_misaligned_vector *v0 = NULL;
	struct range_u64 ratio = { 0, 0 };
	int source = HWT_MISALIGNED_MEASURED;
	bool first = true;
	char a[64];

	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_vector *v = wide ? &r->cpu[i].avx2 : &r->cpu[i].vector;

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
	if (wide)
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
			hwt_misaligned_speed_name(v0->speed), signame(v0->fault_signal));
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
 * each ("  vector (sse2): fast (ratio 11.2) ; avx2: fast (ratio 19.0)"). */
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
	print_vector(f, r, member, false);
	if (c0->avx2.unit) {
		fprintf(f, " ; ");
		print_vector(f, r, member, true);
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
		fprintf(f, " (a misaligned word access raised %s)", signame(c0->fault_signal));
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
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if ((c0->notes & notes[i].bit) && notes[i].bit != HWT_MISALIGNED_NOTE_NO_PERF)
			fprintf(f, " [note: %s]", notes[i].text);
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

	view_read(&v, r);
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
			print_group(f, r, member, &set, view_core(&v, i));
			memset(member, 0, r->n * sizeof(*member));
		} else {
			bool *one = calloc(r->n, sizeof(*one));

			memcpy(one, member, r->n * sizeof(*member));
			memset(member, 0, r->n * sizeof(*member));
			for (unsigned j = i; j < r->n; j++)
				if (one && one[j])
					print_cpu_full(f, r, j, view_core(&v, j), member);
			free(one);
		}
		hwt_cpus_free(&set);
	}
out:
	view_free(&v);
	free(done);
	free(member);
}

void probe_print_human(FILE *f, const struct hwt_misaligned_report *r, bool per_cpu)
{
	unsigned count[HWT_MISALIGNED_UNSUPPORTED + 1] = { 0 }, probed = 0, noperf = 0;
	bool avx2 = false;

	print_grouped(f, r, per_cpu);
	for (unsigned i = 0; i < r->n; i++) {
		avx2 |= r->cpu[i].avx2.unit != NULL;
		if (r->cpu[i].status)
			continue;
		probed++;
		count[r->cpu[i].speed]++;
		noperf += (r->cpu[i].notes & HWT_MISALIGNED_NOTE_NO_PERF) != 0;
	}
	if (noperf)
		fprintf(f, "note: perf events unavailable on %u CPU(s): kernel emulation (emulated) "
			   "cannot be detected\n", noperf);
	fprintf(f, "summary: %s (", hwt_misaligned_speed_name(r->summary));
	for (int s = 0, first = 1; s <= HWT_MISALIGNED_UNSUPPORTED; s++) {
		if (!count[s])
			continue;
		fprintf(f, "%s%u %s", first ? "" : ", ", count[s], hwt_misaligned_speed_name(s));
		first = 0;
	}
	fprintf(f, "%s of %u CPUs); vector: %s", probed ? "" : "none probed", r->n,
		hwt_misaligned_speed_name(r->vector_summary));
	if (avx2)
		fprintf(f, ", avx2: %s", hwt_misaligned_speed_name(r->avx2_summary));
	fputc('\n', f);
	if (r->system_status && r->system_status != -ENOENT)
		fprintf(f, "note: the system result was ignored: %s\n",
			system_reason(r->system_status));
	fprintf(f, "wall time: %.3f ms (%s, %s, %u wave%s, budget %.3f ms per CPU%s)\n",
		r->wall_ns / 1e6, source_name(r->source), r->serial ? "serial" : "parallel",
		r->waves, r->waves == 1 ? "" : "s", r->budget_us / 1e3,
		r->kernel_window ? ", kernel window" : "");
}

static int env_checked(const char *name, int (*read)(const char **))
{
	const char *bad = NULL;
	int s = read(&bad);

	if (s < 0)
		cli_error("%s: invalid value '%s' (expected slow, fast or unsupported; empty is "
			  "invalid too)", name, bad);
	return s;
}

int probe_env_override(void)
{
	return env_checked("HWTUNE_UNALIGNED_SCALAR_SPEED", hwt_misaligned_env_override);
}

int probe_env_vector_override(void)
{
	return env_checked("HWTUNE_UNALIGNED_VECTOR_SPEED", hwt_misaligned_env_vector_override);
}

/* Confine the calling thread to set (all allowed: the parse step checked). */
static int pin_to(const struct hwt_cpus *set)
{
	int max = set->n ? set->cpu[set->n - 1] + 1 : 1;
	size_t size = CPU_ALLOC_SIZE(max);
	cpu_set_t *mask = CPU_ALLOC(max);
	int r = 0;

	if (!mask)
		return -ENOMEM;
	CPU_ZERO_S(size, mask);
	for (unsigned i = 0; i < set->n; i++)
		CPU_SET_S(set->cpu[i], size, mask);
	if (sched_setaffinity(0, size, mask))
		r = -errno;
	CPU_FREE(mask);
	return r;
}

int probe_self(struct hwt_misaligned_opts *o, const struct hwt_cpus *cpus,
	       struct hwt_misaligned_report *r)
{
	int ret;

	o->root = probe_root();
	if (cpus) {
		ret = pin_to(cpus);
		if (ret < 0)
			return ret;
	}
	return hwt_misaligned_self(o, r);
}

const char *probe_recommendation(int summary)
{
	switch (summary) {
	case HWT_MISALIGNED_FAST:
		return "misaligned word accesses are fast on every CPU: copy, compare and checksum "
		       "loops may use unaligned word loads and stores without aligning first";
	case HWT_MISALIGNED_SLOW:
		return "misaligned word accesses are slower than bytes: align pointers (or use "
		       "byte/shift-merge loops) before word-sized loops";
	case HWT_MISALIGNED_EMULATED:
		return "misaligned accesses trap to the kernel and are emulated (very slow): "
		       "never make them on purpose; align every word access";
	case HWT_MISALIGNED_UNSUPPORTED:
		return "misaligned accesses fault: code must never make them";
	default:
		return "CPUs differ or could not be measured: treat misaligned accesses as slow "
		       "unless a thread is pinned to CPUs measured fast";
	}
}

static void json_ratio(FILE *f, const char *key, unsigned x100)
{
	if (x100)
		fprintf(f, "\"%s\": %u.%02u", key, x100 / 100, x100 % 100);
	else
		fprintf(f, "\"%s\": null", key);
}

static void json_notes(FILE *f, unsigned bits)
{
	fprintf(f, "[");
	for (size_t i = 0, n = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (bits & notes[i].bit)
			fprintf(f, "%s\"%s\"", n++ ? ", " : "", notes[i].key);
	fprintf(f, "]");
}

static void json_vector(FILE *f, const struct hwt_misaligned_vector *v, int source)
{
	char ratio[32];

	ratio_str(ratio, sizeof(ratio), v->ratio_x100);
	fprintf(f, "{\"unit\": ");
	if (v->unit)
		fprintf(f, "\"%s\"", v->unit);
	else
		fprintf(f, "null");
	fprintf(f, ", \"speed\": \"%s\", \"ratio\": %s, \"word_ns\": %" PRIu64
		   ", \"byte_ns\": %" PRIu64 ", \"samples\": %u, \"fault_signal\": ",
		hwt_misaligned_speed_name(v->speed), ratio, v->word_ns, v->byte_ns, v->samples);
	if (v->fault_signal)
		fprintf(f, "\"%s\"", signame(v->fault_signal));
	else
		fprintf(f, "null");
	if (v->hwprobe >= 0)
		fprintf(f, ", \"hwprobe\": \"%s\"", hwt_misaligned_speed_name(v->hwprobe));
	else
		fprintf(f, ", \"hwprobe\": null");
	fprintf(f, ", \"notes\": ");
	json_notes(f, v->notes);
	fprintf(f, ", \"source\": \"%s\"}", source_name(source));
}

static void json_ps(FILE *f, const char *key, uint64_t ps)
{
	if (ps)
		fprintf(f, ", \"%s\": %" PRIu64, key, ps);
	else
		fprintf(f, ", \"%s\": null", key);
}

static void json_split(FILE *f, const struct hwt_misaligned_split *s)
{
	fprintf(f, "{");
	json_ratio(f, "line_load", s->line_load);
	fprintf(f, ", ");
	json_ratio(f, "line_store", s->line_store);
	fprintf(f, ", ");
	json_ratio(f, "page_load", s->page_load);
	fprintf(f, ", ");
	json_ratio(f, "page_store", s->page_store);
	json_ps(f, "aligned_load_ps", s->aligned_load_ps);
	json_ps(f, "aligned_store_ps", s->aligned_store_ps);
	json_ps(f, "line_bytes", s->line_bytes);
	json_ps(f, "page_bytes", s->page_bytes);
	fprintf(f, "}");
}

static void json_cpu(FILE *f, const struct hwt_misaligned_cpu *c, const char *core, bool last)
{
	char ratio[32];

	ratio_str(ratio, sizeof(ratio), c->ratio_x100);
	fprintf(f,
		"    {\"cpu\": %d, \"speed\": \"%s\", \"ratio\": %s, \"word_ns\": %" PRIu64
		", \"byte_ns\": %" PRIu64 ", \"probe_ns\": %" PRIu64 ", \"source\": \"%s\"",
		c->cpu, hwt_misaligned_speed_name(c->speed), ratio, c->word_ns, c->byte_ns,
		c->probe_ns, source_name(c->source));
	/* strerror texts contain no characters that need JSON escaping */
	if (c->status)
		fprintf(f, ", \"status\": \"not probed: %s\"", strerror(-c->status));
	else
		fprintf(f, ", \"status\": \"ok\"");
	fprintf(f,
		", \"ratio_x100\": %u, \"word_median_ns\": %" PRIu64 ", \"byte_median_ns\": %" PRIu64
		", \"check_ns\": %" PRIu64 ", \"samples\": %u, \"reps\": %u, \"wave\": %u",
		c->ratio_x100, c->word_median_ns, c->byte_median_ns, c->check_ns, c->samples,
		c->reps, c->wave);
	if (c->fault_signal)
		fprintf(f, ", \"fault_signal\": \"%s\"", signame(c->fault_signal));
	else
		fprintf(f, ", \"fault_signal\": null");
	if (c->align_faults >= 0)
		fprintf(f, ", \"align_faults\": %" PRId64, c->align_faults);
	else
		fprintf(f, ", \"align_faults\": null");
	if (c->hwprobe >= 0)
		fprintf(f, ", \"hwprobe\": \"%s\", \"hwprobe_agrees\": %s",
			hwt_misaligned_speed_name(c->hwprobe), c->hwprobe == (int)c->speed ? "true" : "false");
	else
		fprintf(f, ", \"hwprobe\": null, \"hwprobe_agrees\": null");
	fprintf(f, ", \"preempted\": %ld, \"notes\": ", c->preempted);
	json_notes(f, c->notes);
	fprintf(f, ",\n     \"core\": ");
	if (core)
		json_put_string(f, core);
	else
		fprintf(f, "null");
	fprintf(f, ",\n     \"vector\": ");
	json_vector(f, &c->vector, c->vector_source);
	fprintf(f, ",\n     \"avx2\": ");
	if (c->avx2.unit)
		json_vector(f, &c->avx2, c->vector_source);
	else
		fprintf(f, "null");
	fprintf(f, ",\n     \"split\": ");
	json_split(f, &c->split);
	fprintf(f, "}%s\n", last ? "" : ",");
}

static void json_groups(FILE *f, const struct probe_view *v)
{
	char list[512];

	fprintf(f, "[");
	for (unsigned k = 0; k < v->ng; k++) {
		const struct hwt_misaligned_group *g = &v->g[k];

		if (hwt_cpus_format(&g->cpus, list, sizeof(list)) < 0)
			snprintf(list, sizeof(list), "?");
		fprintf(f, "%s\n    {\"cpus\": \"%s\", \"core\": ", k ? "," : "", list);
		json_put_string(f, g->ident.core);
		fprintf(f, ", \"speed\": \"%s\", \"vector_speed\": \"%s\", ",
			hwt_misaligned_speed_name(g->speed), hwt_misaligned_speed_name(g->vector_speed));
		json_ratio(f, "ratio_min", g->ratio_min_x100);
		fprintf(f, ", ");
		json_ratio(f, "ratio_max", g->ratio_max_x100);
		fprintf(f, "}");
	}
	fprintf(f, "%s]", v->ng ? "\n  " : "");
}

static const char *cache_state(const struct hwt_misaligned_report *r)
{
	unsigned hit = 0;

	if (r->cache_off)
		return "off";
	for (unsigned i = 0; i < r->n; i++)
		hit += r->cpu[i].source == HWT_MISALIGNED_FROM_CACHE;
	return hit == r->n ? "hit" : hit ? "partial" : "miss";
}

void probe_json(FILE *f, const struct hwt_misaligned_report *r)
{
	fprintf(f,
		"{\"mode\": \"%s\", \"source\": \"%s\", \"wall_ns\": %" PRIu64
		", \"summary\": \"%s\",\n  \"smt\": \"%s\", \"waves\": %u, \"budget_us\": %u"
		", \"kernel_window\": %s, \"cache\": \"%s\", \"cache_ignored\": ",
		r->serial ? "serial" : "parallel", source_name(r->source), r->wall_ns,
		hwt_misaligned_speed_name(r->summary), r->smt_apart ? "apart" : "together", r->waves,
		r->budget_us, r->kernel_window ? "true" : "false", cache_state(r));
	struct probe_view v;
	bool avx2 = false;

	if (r->cache_status)
		fprintf(f, "\"%s\"", system_reason(r->cache_status));
	else
		fprintf(f, "null");
	view_read(&v, r);
	fprintf(f, ",\n  \"cpus\": [\n");
	for (unsigned i = 0; i < r->n; i++) {
		avx2 |= r->cpu[i].avx2.unit != NULL;
		json_cpu(f, &r->cpu[i], v.id ? v.id[i].core : NULL, i + 1 == r->n);
	}
	fprintf(f, "  ],\n  \"vector_summary\": \"%s\", \"avx2_summary\": ",
		hwt_misaligned_speed_name(r->vector_summary));
	if (avx2)
		fprintf(f, "\"%s\"", hwt_misaligned_speed_name(r->avx2_summary));
	else
		fprintf(f, "null");
	fprintf(f, ", \"system_status\": ");
	if (r->system_status)
		json_put_string(f, system_reason(r->system_status));
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"groups\": ");
	json_groups(f, &v);
	fprintf(f, "}");
	view_free(&v);
}

/* {"probe": {...}, "version": V}: "version" last, so that the first line
 * stays what DESIGN.md shows. */
static void print_json(FILE *f, const struct hwt_misaligned_report *r)
{
	fprintf(f, "{\"probe\": ");
	probe_json(f, r);
	fprintf(f, ",\n \"version\": \"%s\"}\n", hwt_version());
}

/* Every CPU of want must be allowed: say which one is not. */
static bool cpus_allowed(const char *arg, const struct hwt_cpus *want)
{
	struct hwt_cpus ok = HWT_CPUS_INIT;
	char list[256];
	bool good = true;

	if (hwt_cpu_allowed(&ok) < 0) {
		cli_cmd_error("probe", "cannot read the allowed CPU set");
		return false;
	}
	for (unsigned i = 0; i < want->n && good; i++) {
		if (hwt_cpus_has(&ok, want->cpu[i]))
			continue;
		if (hwt_cpus_format(&ok, list, sizeof(list)) < 0)
			snprintf(list, sizeof(list), "?");
		cli_cmd_error("probe", "--cpus: CPU %d in '%s' is not allowed here (allowed: %s)",
			      want->cpu[i], arg, list);
		good = false;
	}
	hwt_cpus_free(&ok);
	return good;
}

int probe_parse(int argc, char **argv, struct cli_args *a)
{
	enum { O_SERIAL = 256, O_KWIN, O_NOCACHE, O_JSON, O_CPUS, O_BUDGET, O_SMT, O_SPEED,
	       O_PERCPU, O_FORMAT, O_VSPEED, O_SYSTEM };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "serial", no_argument, NULL, O_SERIAL },
		{ "kernel-window", no_argument, NULL, O_KWIN },
		{ "no-cache", no_argument, NULL, O_NOCACHE },
		{ "json", no_argument, NULL, O_JSON },
		{ "per-cpu", no_argument, NULL, O_PERCPU },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "budget-ms", required_argument, NULL, O_BUDGET },
		{ "smt", required_argument, NULL, O_SMT },
		{ "unaligned-scalar-speed", required_argument, NULL, O_SPEED },
		{ "unaligned-vector-speed", required_argument, NULL, O_VSPEED },
		{ "system", no_argument, NULL, O_SYSTEM },
		{ NULL, 0, NULL, 0 },
	};
	struct hwt_misaligned_opts *o = &a->probe;
	const char *cpus_arg = NULL, *speed_arg = NULL, *vspeed_arg = NULL, *v;
	struct cli_getopt g;
	char why[128];
	uint64_t ms;
	int c, s;

	cli_getopt_begin(&g, "probe", argc, argv, "h", longopts);
	while ((c = cli_getopt_next(&g)) != -1) {
		v = g.arg;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case O_SERIAL:
			o->flags |= HWT_MISALIGNED_SERIAL;
			break;
		case O_KWIN:
			o->flags |= HWT_MISALIGNED_KERNEL_WINDOW;
			break;
		case O_NOCACHE:
			o->flags |= HWT_MISALIGNED_NO_CACHE;
			break;
		case O_JSON:
			a->json = true, a->prom = false;
			break;
		case O_PERCPU:
			a->per_cpu = true;
			break;
		case O_FORMAT:
			if (!cli_parse_format("probe", v, a))
				return CLI_EXIT_USAGE;
			break;
		case O_CPUS:
			cpus_arg = v;
			hwt_cpus_free(&a->cpus);
			if (hwt_cpus_parse_why(cpus_arg, &a->cpus, why, sizeof(why)) < 0) {
				cli_cmd_error("probe", "--cpus: invalid CPU list '%s': %s (expected e.g. "
					      "0-3,8)", cpus_arg, why);
				return CLI_EXIT_USAGE;
			}
			a->have_cpus = true;
			break;
		case O_BUDGET:
			if (!cli_parse_dec("probe", "--budget-ms", v, 1,
					   HWT_MISALIGNED_MAX_BUDGET_US / 1000, &ms))
				return CLI_EXIT_USAGE;
			o->budget_us = (unsigned)(ms * 1000);
			break;
		case O_SMT:
			if (!strcmp(v, "apart")) {
				o->flags |= HWT_MISALIGNED_SMT_APART;
			} else if (!strcmp(v, "together")) {
				o->flags &= ~(unsigned)HWT_MISALIGNED_SMT_APART;
			} else {
				cli_cmd_error("probe", "--smt: invalid value '%s' (expected together or "
					      "apart)", v);
				return CLI_EXIT_USAGE;
			}
			break;
		case O_SPEED:
			speed_arg = v;
			s = hwt_misaligned_parse_speed(speed_arg);
			if (s < 0) {
				cli_cmd_error("probe", "--unaligned-scalar-speed: invalid value '%s' "
					      "(expected slow, fast or unsupported)", speed_arg);
				return CLI_EXIT_USAGE;
			}
			o->override_speed = s;
			break;
		case O_VSPEED:
			vspeed_arg = v;
			s = hwt_misaligned_parse_speed(vspeed_arg);
			if (s < 0) {
				cli_cmd_error("probe", "--unaligned-vector-speed: invalid value '%s' "
					      "(expected slow, fast or unsupported)", vspeed_arg);
				return CLI_EXIT_USAGE;
			}
			o->vector_override_speed = s;
			break;
		case O_SYSTEM:
			a->system = true;
			break;
		case 1:
			cli_cmd_error("probe", "unexpected argument '%s' (probe takes options only; "
				      "try 'hwtune probe --help')", v);
			return CLI_EXIT_USAGE;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (o->budget_us && (o->flags & HWT_MISALIGNED_KERNEL_WINDOW)) {
		cli_cmd_error("probe", "--budget-ms and --kernel-window exclude each other "
			      "(the kernel window is 2 x 8 ms)");
		return CLI_EXIT_USAGE;
	}
	if (!speed_arg) { /* the flag beats the environment */
		s = probe_env_override();
		if (s < 0)
			return CLI_EXIT_USAGE;
		o->override_speed = s;
	}
	if (!vspeed_arg) {
		s = probe_env_vector_override();
		if (s < 0)
			return CLI_EXIT_USAGE;
		o->vector_override_speed = s;
	}
	if (a->system) {
		const char *bad = a->have_cpus                       ? "--cpus"
				  : speed_arg                        ? "--unaligned-scalar-speed"
				  : vspeed_arg                       ? "--unaligned-vector-speed"
				  : o->override_speed                ? "HWTUNE_UNALIGNED_SCALAR_SPEED"
				  : o->vector_override_speed         ? "HWTUNE_UNALIGNED_VECTOR_SPEED"
				  : o->flags & HWT_MISALIGNED_NO_CACHE ? "--no-cache"
								       : NULL;

		if (bad) {
			cli_cmd_error("probe", "--system and %s exclude each other (--system measures "
				      "every online CPU fresh)", bad);
			return CLI_EXIT_USAGE;
		}
	}
	if (a->have_cpus && !cpus_allowed(cpus_arg, &a->cpus))
		return CLI_EXIT_USAGE;
	/* Asking for a way of measuring means: measure now. */
	if (o->flags & (HWT_MISALIGNED_SERIAL | HWT_MISALIGNED_KERNEL_WINDOW |
			HWT_MISALIGNED_SMT_APART) || o->budget_us)
		o->flags |= HWT_MISALIGNED_REFRESH;
	a->run = probe_run;
	return CLI_RUN;
}

/* Where hwt_misaligned_system_write puts the file (for the message only). */
static void system_path(char *buf, size_t len, const struct hwt_misaligned_opts *o)
{
	const char *dir = o->runtime_dir ? o->runtime_dir : getenv("HWTUNE_RUNTIME_DIR");
	struct utsname u;

	if (!dir || dir[0] != '/')
		dir = HWT_MISALIGNED_RUNTIME_DIR;
	if (uname(&u))
		snprintf(u.machine, sizeof(u.machine), "<arch>");
	snprintf(buf, len, "%s/misaligned-%s.result", dir, u.machine);
}

int probe_run(struct cli_args *a)
{
	struct hwt_misaligned_report r;
	char path[4096];
	int ret, wret = 0;

	if (a->system) {
		a->probe.root = probe_root();
		ret = hwt_misaligned_system_probe(&a->probe, &r);
		if (ret < 0 && r.n) { /* measured, only the write failed */
			wret = ret;
			ret = 0;
		}
	} else {
		ret = probe_self(&a->probe, a->have_cpus ? &a->cpus : NULL, &r);
	}
	if (ret < 0) {
		cli_error("probe: %s", strerror(-ret));
		return 1;
	}
	if (a->json) {
		print_json(stdout, &r);
	} else if (a->prom) {
		struct report_machine m;

		report_machine_read(&m);
		report_prom(stdout, &(struct report_prom){ .m = &m, .probe = &r });
	} else {
		probe_print_human(stdout, &r, a->per_cpu);
	}
	hwt_misaligned_report_free(&r);
	if (wret) {
		system_path(path, sizeof(path), &a->probe);
		cli_cmd_error("probe", "--system: cannot write %s: %s", path, strerror(-wret));
		return 1;
	}
	return 0;
}
