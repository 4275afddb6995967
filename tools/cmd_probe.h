/* SPDX-License-Identifier: MIT */
/* Probe output shared by `hwtune probe` and the main job. */
#ifndef HWT_CMD_PROBE_H
#define HWT_CMD_PROBE_H

#include <stdbool.h>
#include <stdio.h>

#include <hwtune/hwtune.h>

/* The CPUs (one line per group of CPUs that agree; with per_cpu one line
 * per CPU, kernel-log style), notes, the summary and the wall time. */
void probe_print_human(FILE *f, const struct hwt_misaligned_report *r, bool per_cpu);
/* The probe's JSON object (the value of "probe"), no trailing newline. */
void probe_json(FILE *f, const struct hwt_misaligned_report *r);
/* HWTUNE_UNALIGNED_SCALAR_SPEED as an override speed (0: unset); on a bad
 * value prints an error naming it and returns a negative errno. */
int probe_env_override(void);
/* The same for HWTUNE_UNALIGNED_VECTOR_SPEED (vector_override_speed). */
int probe_env_vector_override(void);
/* The one-call answer (hwt_misaligned_self: system file, user cache, probe)
 * for cpus (NULL: this thread's allowed CPUs; else the calling thread is
 * confined to them first), o->root set from HWTUNE_ROOT; the vector
 * summaries are recomputed over the whole answer.  0 or a negative errno. */
int probe_self(struct hwt_misaligned_opts *o, const struct hwt_cpus *cpus,
	       struct hwt_misaligned_report *r);
/* What a program should do about misaligned accesses, given a set summary. */
const char *probe_recommendation(int summary);

#endif
