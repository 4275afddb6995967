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

int probe_self(struct hwt_misaligned_opts *o, const struct hwt_cpus *cpus,
	       struct hwt_misaligned_report *r)
{
	o->root = probe_root();
	return hwt_misaligned_cpus(cpus, o, r);
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
