/* SPDX-License-Identifier: MIT */
/*
 * Groups of alike CPUs (same core identity, same verdicts) and the
 * "which CPUs?" query over a report.
 */
#include "misaligned/misaligned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The verdict of the architecture's vector unit (SSE2, NEON, RVV). */
static enum hwt_misaligned_speed vector_speed(const struct hwt_misaligned_cpu *c)
{
	return c->status ? HWT_MISALIGNED_UNKNOWN : c->vector.speed;
}

static enum hwt_misaligned_speed scalar_speed(const struct hwt_misaligned_cpu *c)
{
	return c->status ? HWT_MISALIGNED_UNKNOWN : c->speed;
}

HWT_API void hwt_misaligned_groups_free(struct hwt_misaligned_group *g, unsigned n)
{
	if (!g)
		return;
	for (unsigned i = 0; i < n; i++)
		hwt_cpus_free(&g[i].cpus);
	free(g);
}

static bool joins(const struct hwt_misaligned_group *g, const struct hwt_cpu_ident *id,
		  const struct hwt_misaligned_cpu *c)
{
	return g->speed == scalar_speed(c) && g->vector_speed == vector_speed(c) &&
	       hwt_cpu_ident_equal(&g->ident, id);
}

HWT_API int hwt_misaligned_groups(const struct hwt_misaligned_report *r, const char *root,
				  struct hwt_misaligned_group **out, unsigned *nout)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_cpu_ident *ids = NULL;
	struct hwt_misaligned_group *g = NULL;
	unsigned n = 0;
	int ret = 0;

	if (!r || !out || !nout || (r->n && !r->cpu))
		return -EINVAL;
	*out = NULL;
	*nout = 0;
	for (unsigned i = 0; i < r->n && !ret; i++)
		ret = hwt_cpus_add(&set, r->cpu[i].cpu);
	if (ret)
		goto done;
	if (set.n != r->n) { /* duplicate CPUs: not a report probe() makes */
		ret = -EINVAL;
		goto done;
	}
	ids = calloc(r->n ? r->n : 1, sizeof(*ids));
	g = calloc(r->n ? r->n : 1, sizeof(*g)); /* at most one group per CPU */
	if (!ids || !g) {
		ret = -ENOMEM;
		goto done;
	}
	ret = hwt_cpu_identities(root, &set, ids);
	/* set and ids are ascending; walk r in CPU order so groups are
	 * ordered by their first CPU whatever the report's order. */
	for (unsigned k = 0; k < set.n && !ret; k++) {
		const struct hwt_misaligned_cpu *c = NULL;
		struct hwt_misaligned_group *grp = NULL;
		unsigned ratio;

		for (unsigned i = 0; i < r->n && !c; i++)
			if (r->cpu[i].cpu == set.cpu[k])
				c = &r->cpu[i];
		for (unsigned j = 0; j < n && !grp; j++)
			if (joins(&g[j], &ids[k], c))
				grp = &g[j];
		if (!grp) {
			grp = &g[n++];
			grp->ident = ids[k];
			grp->speed = scalar_speed(c);
			grp->vector_speed = vector_speed(c);
		}
		ret = hwt_cpus_add(&grp->cpus, c->cpu);
		ratio = c->status ? 0 : c->ratio_x100;
		if (ratio && (!grp->ratio_min_x100 || ratio < grp->ratio_min_x100))
			grp->ratio_min_x100 = ratio;
		if (ratio > grp->ratio_max_x100)
			grp->ratio_max_x100 = ratio;
	}
done:
	hwt_cpus_free(&set);
	free(ids);
	if (ret) {
		hwt_misaligned_groups_free(g, n);
		return ret;
	}
	*out = g;
	*nout = n;
	return 0;
}

HWT_API int hwt_misaligned_cpus_with(const struct hwt_misaligned_report *r, int kind,
				     enum hwt_misaligned_speed s, struct hwt_cpus *out)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	int ret = 0;

	if (!r || !out || (r->n && !r->cpu) ||
	    (kind != HWT_MISALIGNED_SCALAR && kind != HWT_MISALIGNED_VECTOR) ||
	    (int)s < HWT_MISALIGNED_UNKNOWN || s > HWT_MISALIGNED_UNSUPPORTED)
		return -EINVAL;
	for (unsigned i = 0; i < r->n && !ret; i++) {
		const struct hwt_misaligned_cpu *c = &r->cpu[i];
		enum hwt_misaligned_speed v =
			kind == HWT_MISALIGNED_SCALAR ? scalar_speed(c) : vector_speed(c);

		if (v == s)
			ret = hwt_cpus_add(&set, c->cpu);
	}
	if (ret) {
		hwt_cpus_free(&set);
		return ret;
	}
	hwt_cpus_free(out);
	*out = set;
	return (int)set.n;
}
