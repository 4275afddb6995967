/* SPDX-License-Identifier: MIT */
/*
 * hwtune probe's engine: the environment's overrides, the answer for a set
 * of CPUs (hwt_misaligned_self), what the output knows beyond it (groups,
 * identities) and the advice a summary gives.
 */
#include "probe/engine.h"

#include "prog/cli.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

const char *probe_root(void)
{
	const char *root = report_root();

	return root && root[0] ? root : NULL;
}

void probe_view_read(struct probe_view *v, const struct hwt_misaligned_report *r)
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

void probe_view_free(struct probe_view *v)
{
	if (v->g)
		hwt_misaligned_groups_free(v->g, v->ng);
	free(v->gi);
	free(v->id);
	memset(v, 0, sizeof(*v));
}

const char *probe_view_core(const struct probe_view *v, unsigned i)
{
	if (!v->multi)
		return NULL;
	if (v->gi && v->gi[i] < v->ng)
		return v->g[v->gi[i]].ident.core;
	return v->id ? v->id[i].core : NULL;
}

static int env_checked(const char *name, int (*read)(const char **))
{
	const char *bad = NULL;
	int s = read(&bad);

	if (s < 0)
		cli_error("%s: invalid value '%s' (expected slow, fast or unsupported; empty is "
			  "invalid too)", name, cli_value(bad));
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

bool probe_env_runtime_dir(void)
{
	const char *dir = getenv("HWTUNE_RUNTIME_DIR");

	/* the library's rule (hwt_misaligned_system_write): a relative folder
	 * would depend on the current folder, so it is never used */
	if (!dir || !dir[0] || dir[0] == '/')
		return true;
	cli_error("HWTUNE_RUNTIME_DIR: invalid value '%s' (expected an absolute folder, e.g. %s; "
		  "unset or empty: %s)", cli_value(dir), HWT_MISALIGNED_RUNTIME_DIR,
		  HWT_MISALIGNED_RUNTIME_DIR);
	return false;
}

int probe_self(struct hwt_misaligned_opts *o, const struct hwt_cpus *cpus,
	       struct hwt_misaligned_report *r)
{
	o->root = probe_root();
	return hwt_misaligned_cpus(cpus, o, r);
}

static const char *summary_advice(int summary)
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

/* "3.6x", "46x", "46-48x": a range of ratios x100 (as the split line shows). */
static void ratio_range(char *buf, size_t len, unsigned lo, unsigned hi)
{
	char a[24], b[24];

	snprintf(a, sizeof(a), "%.*f", lo >= 1000 ? 0 : 1, lo / 100.0);
	snprintf(b, sizeof(b), "%.*f", hi >= 1000 ? 0 : 1, hi / 100.0);
	if (!strcmp(a, b))
		snprintf(buf, len, "%sx", a);
	else
		snprintf(buf, len, "%s-%sx", a, b);
}

/*
 * Where misaligned word accesses pay (fast, or CPUs that differ), a large
 * split penalty still says: align the side that splits.  The worst split
 * is named with its range over the CPUs (as the report shows it).
 */
const char *probe_recommendation(const struct hwt_misaligned_report *r, char *buf, size_t len)
{
	static const char *const kind[4] = { "load that crosses a cache line",
					     "store that crosses a cache line",
					     "load that crosses a page", "store that crosses a page" };
	unsigned lo[4] = { 0 }, hi[4] = { 0 }, worst = 0;
	bool large[4] = { false }, stores, loads, lines;
	const char *base = summary_advice(r->summary);
	char range[64];

	if (r->summary != HWT_MISALIGNED_FAST && r->summary != HWT_MISALIGNED_UNKNOWN)
		return base;
	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_split *s = &r->cpu[i].split;
		unsigned v[4] = { s->line_load, s->line_store, s->page_load, s->page_store };

		for (int k = 0; k < 4 && !r->cpu[i].status; k++) {
			if (!v[k]) /* not measured */
				continue;
			lo[k] = lo[k] && lo[k] < v[k] ? lo[k] : v[k];
			hi[k] = hi[k] > v[k] ? hi[k] : v[k];
			large[k] |= v[k] >= PROBE_SPLIT_LARGE_X100;
		}
	}
	for (int k = 1; k < 4; k++)
		if (hi[k] > hi[worst])
			worst = (unsigned)k;
	if (!large[worst])
		return base;
	stores = large[1] || large[3], loads = large[0] || large[2];
	lines = large[0] || large[1];
	ratio_range(range, sizeof(range), lo[worst], hi[worst]);
	snprintf(buf, len, "%s%s a word %s costs %s an aligned one: %s",
		 r->summary == HWT_MISALIGNED_FAST
			 ? "misaligned word accesses are fast on every CPU, but"
			 : base,
		 r->summary == HWT_MISALIGNED_FAST ? "" : "; and", kind[worst], range,
		 stores && loads ? "align the destination before word loops, and the source too "
				   "where their offsets agree"
		 : stores ? (lines ? "align the destination before word loops (unaligned loads "
				     "are fine)"
				   : "align the destination before word loops (unaligned loads "
				     "are fine), or at least keep stores from crossing pages")
		 : lines ? "align the source before word loops (unaligned stores are fine)"
			 : "align the source before word loops (unaligned stores are fine), or "
			   "at least keep loads from crossing pages");
	return buf;
}
