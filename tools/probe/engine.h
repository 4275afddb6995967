/* SPDX-License-Identifier: MIT */
/*
 * hwtune probe's engine, shared with the main job: the environment's
 * overrides, the answer for a set of CPUs, what the output knows beyond it
 * and the advice a summary gives.
 */
#ifndef HWT_TOOL_PROBE_ENGINE_H
#define HWT_TOOL_PROBE_ENGINE_H

#include <stdbool.h>

#include <hwtune/hwtune.h>

/* HWTUNE_UNALIGNED_SCALAR_SPEED as an override speed (0: unset); on a bad
 * value prints an error naming it and returns a negative errno. */
int probe_env_override(void);
/* The same for HWTUNE_UNALIGNED_VECTOR_SPEED (vector_override_speed). */
int probe_env_vector_override(void);
/* HWTUNE_ROOT (a test-only prefix) for the library, NULL for the real /. */
const char *probe_root(void);
/* The library's answer in its lookup order (hwt_misaligned_cpus: override,
 * system file, user cache, probe) for cpus (NULL: this thread's allowed
 * CPUs; the thread's affinity is left as it is), o->root set from
 * HWTUNE_ROOT.  0 or a negative errno. */
int probe_self(struct hwt_misaligned_opts *o, const struct hwt_cpus *cpus,
	       struct hwt_misaligned_report *r);
/* What a program should do about misaligned accesses, given a set summary. */
const char *probe_recommendation(int summary);

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
void probe_view_read(struct probe_view *v, const struct hwt_misaligned_report *r);
void probe_view_free(struct probe_view *v);
/* The core string a line about r->cpu[i] names, or NULL (one identity only). */
const char *probe_view_core(const struct probe_view *v, unsigned i);

#endif
