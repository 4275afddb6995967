/* SPDX-License-Identifier: MIT */
/* hwtune probe's JSON report (docs/json.md: "probe"), through prog/json. */
#include "probe/report.h"

#include "probe/engine.h"

#include <stdlib.h>
#include <string.h>

/* A ratio x 100 as a number with two decimals: 0 prints 0.00. */
static void ratio_x100(struct json *j, unsigned x100)
{
	json_fixed(j, x100 / 100.0, 2);
}

/* The same, but null when not measured (0). */
static void ratio_or_null(struct json *j, const char *key, unsigned x100)
{
	json_key(j, key);
	if (x100)
		ratio_x100(j, x100);
	else
		json_null(j);
}

static void u64_or_null(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	if (v)
		json_u64(j, v);
	else
		json_null(j);
}

static void str_or_null(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	if (s)
		json_str(j, s);
	else
		json_null(j);
}

/* The keys of the notes set in bits, in bit order (the library's list). */
static void notes(struct json *j, unsigned bits)
{
	json_key(j, "notes");
	json_arr(j);
#define NOTE_KEY(name, bit, key, text) \
	if (bits & (bit))                  \
		json_str(j, key);
	HWT_MISALIGNED_NOTES(NOTE_KEY)
#undef NOTE_KEY
	json_close(j);
}

static const char *speed_or_null(int speed)
{
	return speed >= 0 ? hwt_misaligned_speed_name(speed) : NULL;
}

static void vector(struct json *j, const struct hwt_misaligned_vector *v, int source)
{
	json_obj(j);
	str_or_null(j, "unit", v->unit);
	json_key(j, "speed"), json_str(j, hwt_misaligned_speed_name(v->speed));
	json_key(j, "ratio"), ratio_x100(j, v->ratio_x100);
	json_key(j, "word_ns"), json_u64(j, v->word_ns);
	json_key(j, "byte_ns"), json_u64(j, v->byte_ns);
	json_key(j, "samples"), json_u64(j, v->samples);
	str_or_null(j, "fault_signal", v->fault_signal ? probe_signame(v->fault_signal) : NULL);
	str_or_null(j, "hwprobe", speed_or_null(v->hwprobe));
	notes(j, v->notes);
	json_key(j, "source"), json_str(j, probe_source_name(source));
	json_close(j);
}

/* A wide unit (avx2, avx512): its object, or null where it has no unit. */
static void wide_unit(struct json *j, const char *key, const struct hwt_misaligned_vector *v,
		      int source)
{
	json_key(j, key);
	if (v->unit)
		vector(j, v, source);
	else
		json_null(j);
}

static void split(struct json *j, const struct hwt_misaligned_split *s)
{
	json_obj(j);
	ratio_or_null(j, "line_load", s->line_load);
	ratio_or_null(j, "line_store", s->line_store);
	ratio_or_null(j, "page_load", s->page_load);
	ratio_or_null(j, "page_store", s->page_store);
	u64_or_null(j, "aligned_load_ps", s->aligned_load_ps);
	u64_or_null(j, "aligned_store_ps", s->aligned_store_ps);
	u64_or_null(j, "line_bytes", s->line_bytes);
	u64_or_null(j, "page_bytes", s->page_bytes);
	json_close(j);
}

static void cpu(struct json *j, const struct hwt_misaligned_cpu *c, const char *core)
{
	char status[160];

	if (c->status)
		snprintf(status, sizeof(status), "not probed: %s", strerror(-c->status));
	else
		snprintf(status, sizeof(status), "ok");
	json_nl(j, "    ");
	json_obj(j);
	json_key(j, "cpu"), json_int(j, c->cpu);
	json_key(j, "speed"), json_str(j, hwt_misaligned_speed_name(c->speed));
	json_key(j, "ratio"), ratio_x100(j, c->ratio_x100);
	json_key(j, "word_ns"), json_u64(j, c->word_ns);
	json_key(j, "byte_ns"), json_u64(j, c->byte_ns);
	json_key(j, "probe_ns"), json_u64(j, c->probe_ns);
	json_key(j, "source"), json_str(j, probe_source_name(c->source));
	json_key(j, "status"), json_str(j, status);
	json_key(j, "ratio_x100"), json_u64(j, c->ratio_x100);
	json_key(j, "word_median_ns"), json_u64(j, c->word_median_ns);
	json_key(j, "byte_median_ns"), json_u64(j, c->byte_median_ns);
	json_key(j, "check_ns"), json_u64(j, c->check_ns);
	json_key(j, "samples"), json_u64(j, c->samples);
	json_key(j, "reps"), json_u64(j, c->reps);
	json_key(j, "wave"), json_u64(j, c->wave);
	str_or_null(j, "fault_signal", c->fault_signal ? probe_signame(c->fault_signal) : NULL);
	json_key(j, "align_faults");
	if (c->align_faults >= 0)
		json_int(j, c->align_faults);
	else
		json_null(j);
	str_or_null(j, "hwprobe", speed_or_null(c->hwprobe));
	json_key(j, "hwprobe_agrees");
	if (c->hwprobe >= 0)
		json_bool(j, c->hwprobe == (int)c->speed);
	else
		json_null(j);
	json_key(j, "preempted"), json_int(j, c->preempted);
	notes(j, c->notes);
	json_nl(j, "     ");
	str_or_null(j, "core", core);
	json_nl(j, "     ");
	json_key(j, "vector"), vector(j, &c->vector, c->vector_source);
	json_nl(j, "     ");
	wide_unit(j, "avx2", &c->avx2, c->vector_source);
	json_nl(j, "     ");
	wide_unit(j, "avx512", &c->avx512, c->vector_source);
	json_nl(j, "     ");
	json_key(j, "split"), split(j, &c->split);
	json_close(j);
}

static void groups(struct json *j, const struct probe_view *v)
{
	char list[512];

	json_key(j, "groups");
	json_arr(j);
	for (unsigned k = 0; k < v->ng; k++) {
		const struct hwt_misaligned_group *g = &v->g[k];

		if (hwt_cpus_format(&g->cpus, list, sizeof(list)) < 0)
			snprintf(list, sizeof(list), "?");
		json_nl(j, "    ");
		json_obj(j);
		json_key(j, "cpus"), json_str(j, list);
		json_key(j, "core"), json_str(j, g->ident.core);
		json_key(j, "speed"), json_str(j, hwt_misaligned_speed_name(g->speed));
		json_key(j, "vector_speed"), json_str(j, hwt_misaligned_speed_name(g->vector_speed));
		ratio_or_null(j, "ratio_min", g->ratio_min_x100);
		ratio_or_null(j, "ratio_max", g->ratio_max_x100);
		json_close(j);
	}
	if (v->ng)
		json_nl(j, "  ");
	json_close(j);
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

void probe_json(struct json *j, const struct hwt_misaligned_report *r)
{
	struct probe_view v;
	bool avx2 = false, avx512 = false;

	json_obj(j);
	json_key(j, "mode"), json_str(j, r->serial ? "serial" : "parallel");
	json_key(j, "source"), json_str(j, probe_source_name(r->source));
	json_key(j, "wall_ns"), json_u64(j, r->wall_ns);
	json_key(j, "summary"), json_str(j, hwt_misaligned_speed_name(r->summary));
	json_nl(j, "  ");
	json_key(j, "smt"), json_str(j, r->smt_apart ? "apart" : "together");
	json_key(j, "waves"), json_u64(j, r->waves);
	json_key(j, "budget_us"), json_u64(j, r->budget_us);
	json_key(j, "kernel_window"), json_bool(j, r->kernel_window);
	json_key(j, "cache"), json_str(j, cache_state(r));
	str_or_null(j, "cache_ignored",
		    r->cache_status ? probe_system_reason(r->cache_status) : NULL);
	probe_view_read(&v, r);
	json_nl(j, "  ");
	json_key(j, "cpus");
	json_arr(j);
	for (unsigned i = 0; i < r->n; i++) {
		avx2 |= r->cpu[i].avx2.unit != NULL;
		avx512 |= r->cpu[i].avx512.unit != NULL;
		cpu(j, &r->cpu[i], v.id ? v.id[i].core : NULL);
	}
	json_nl(j, "  ");
	json_close(j);
	json_nl(j, "  ");
	json_key(j, "vector_summary"), json_str(j, hwt_misaligned_speed_name(r->vector_summary));
	str_or_null(j, "avx2_summary", avx2 ? hwt_misaligned_speed_name(r->avx2_summary) : NULL);
	str_or_null(j, "avx512_summary",
		    avx512 ? hwt_misaligned_speed_name(r->avx512_summary) : NULL);
	str_or_null(j, "system_status",
		    r->system_status ? probe_system_file_reason(r->system_status) : NULL);
	json_nl(j, "  ");
	groups(j, &v);
	json_close(j);
	probe_view_free(&v);
}

/* "version" last, so that the first line stays what DESIGN.md shows. */
void probe_json_document(FILE *f, const struct hwt_misaligned_report *r)
{
	struct json j;

	json_begin(&j, f);
	json_obj(&j);
	json_key(&j, "probe");
	probe_json(&j, r);
	json_nl(&j, " ");
	json_key(&j, "version"), json_str(&j, hwt_version());
	json_close(&j);
	json_end(&j);
}
