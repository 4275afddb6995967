/* SPDX-License-Identifier: MIT */
/* hwtune probe's report, text and JSON (the main job prints both too). */
#ifndef HWT_TOOL_PROBE_REPORT_H
#define HWT_TOOL_PROBE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <hwtune/hwtune.h>

#include "prog/json.h"

/* The CPUs (one line per group of CPUs that agree; with per_cpu one line
 * per CPU, kernel-log style), notes, the summary and the wall time. */
void probe_print_human(FILE *f, const struct hwt_misaligned_report *r, bool per_cpu);
/* The probe's JSON object (the value of "probe"). */
void probe_json(struct json *j, const struct hwt_misaligned_report *r);
/* {"probe": {...}, "version": V} and a newline: the whole 'probe --json'. */
void probe_json_document(FILE *f, const struct hwt_misaligned_report *r);

/* Names both reports use: a fault signal ("SIGBUS"), where a verdict came
 * from ("cache"), why the system result was ignored ("corrupt"). */
const char *probe_signame(int sig);
const char *probe_source_name(int s);
const char *probe_system_reason(int err);
/* The same for system_status: names why the system result was not trusted. */
const char *probe_system_file_reason(int err);

#endif
