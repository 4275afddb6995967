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
/* HWTUNE_RUNTIME_DIR, the folder of the system result: unset or empty (the
 * default, HWT_MISALIGNED_RUNTIME_DIR) or absolute.  Otherwise prints an
 * error naming it and its value and returns false. */
bool probe_env_runtime_dir(void);
/* HWTUNE_ROOT (a test-only prefix) for the library, NULL for the real /. */
const char *probe_root(void);
/* The library's answer in its lookup order (hwt_misaligned_cpus: override,
 * system file, user cache, probe) for cpus (NULL: this thread's allowed
 * CPUs; the thread's affinity is left as it is), o->root set from
 * HWTUNE_ROOT.  0 or a negative errno. */
int probe_self(struct hwt_misaligned_opts *o, const struct hwt_cpus *cpus,
	       struct hwt_misaligned_report *r);
/*
 * A split penalty this large (x100: 4x an aligned access) changes the advice.
 * Splitting a word access in two costs about 2x by itself (two lines or
 * pages touched); at 4x the CPU takes a slow path on top (a replay or an
 * assist), and in a streaming loop of 8-byte accesses over 64-byte lines a
 * 4x line split alone adds (4 - 1) / 8 = 37% to every access, more than
 * the short head loop that aligns the pointer first ever costs.
 */
#define PROBE_SPLIT_LARGE_X100 400u
/* What a program should do about misaligned accesses, given r's summary and
 * its split penalties (see PROBE_SPLIT_LARGE_X100): buf, len >= 64. */
const char *probe_recommendation(const struct hwt_misaligned_report *r, char *buf, size_t len);

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
