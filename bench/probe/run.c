/* SPDX-License-Identifier: MIT */
/* bench_probe: series of measurements, one probe run into them, progress lines. */
#include "probe.h"

#include "prog/cli.h"
#include "prog/stats.h"

#include <stdlib.h>
#include <string.h>

void series_add(struct series *s, uint64_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv) {
			cli_error("out of memory");
			exit(1);
		}
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = x;
}

/* "name": {"n", "min", "p50", "p90", "p99", "max"} (nearest rank; sorts s). */
void series_print(struct json *j, const char *name, struct series *s)
{
	struct stat_summary m;

	stat_sort_u64(s->v, s->n);
	stat_summary_u64(s->v, s->n, &m);
	json_nl(j, "    ");
	json_key(j, name);
	json_obj(j);
	json_key(j, "n"), json_u64(j, m.n);
	json_key(j, "min"), json_u64(j, m.min);
	json_key(j, "p50"), json_u64(j, m.p50);
	json_key(j, "p90"), json_u64(j, m.p90);
	json_key(j, "p99"), json_u64(j, m.p99);
	json_key(j, "max"), json_u64(j, m.max);
	json_close(j);
}

void vector_print(struct json *j, const char *name, const struct hwt_misaligned_vector *v)
{
	json_key(j, name);
	json_obj(j);
	json_key(j, "unit");
	if (v->unit)
		json_str(j, v->unit);
	else
		json_str(j, "none");
	json_key(j, "speed"), json_str(j, hwt_misaligned_speed_name(v->speed));
	json_key(j, "ratio"), json_fixed(j, v->ratio_x100 / 100.0, 2);
	json_key(j, "word_ns"), json_u64(j, v->word_ns);
	json_key(j, "byte_ns"), json_u64(j, v->byte_ns);
	json_close(j);
}

void run_on(const struct hwt_cpus *set, unsigned flags, unsigned budget_us,
	    struct phase *ph, struct hwt_misaligned_report *keep)
{
	struct hwt_misaligned_opts o = { .flags = flags | HWT_MISALIGNED_NO_CACHE,
					 .budget_us = budget_us };
	struct hwt_misaligned_report r;
	int e = hwt_misaligned_probe(set, &o, &r);

	if (e) {
		cli_error("probe: %s", strerror(-e));
		exit(1);
	}
	series_add(&ph->wall, r.wall_ns);
	for (unsigned i = 0; i < r.n; i++) {
		if (r.cpu[i].status)
			continue;
		series_add(&ph->per_cpu, r.cpu[i].probe_ns);
		series_add(&ph->samples, r.cpu[i].samples);
		series_add(&ph->vector, r.cpu[i].vector_ns);
		series_add(&ph->split, r.cpu[i].split_ns);
	}
	if (keep)
		*keep = r;
	else
		hwt_misaligned_report_free(&r);
}

void run_all(unsigned flags, unsigned budget_us, struct phase *ph,
	     struct hwt_misaligned_report *keep)
{
	run_on(NULL, flags, budget_us, ph, keep);
}

uint64_t series_p50(struct series *s)
{
	if (!s->n)
		return 0;
	stat_sort_u64(s->v, s->n);
	return s->v[(s->n - 1) / 2];
}

void phase_free(struct phase *ph)
{
	free(ph->wall.v), free(ph->per_cpu.v), free(ph->samples.v);
	free(ph->vector.v), free(ph->split.v);
	*ph = (struct phase){ 0 };
}

bool bench_progress;

void bench_say(const char *fmt, const char *what, unsigned a, unsigned b)
{
	if (bench_progress)
		fprintf(stderr, fmt, what, a, b);
}
