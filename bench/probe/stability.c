/* SPDX-License-Identifier: MIT */
/* bench_probe: verdict stability per budget, idle and with a busy CPU. */
#include "probe.h"

#include "prog/cli.h"
#include "prog/stats.h"
#include "prog/sys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct spinner {
	_Atomic int stop;
	uint64_t limit_ns; /* bound: the spinner stops by itself after this */
};

static void *spin_main(void *arg)
{
	struct spinner *sp = arg;
	uint64_t t0 = util_now_ns();
	unsigned n = 0;

	/* relaxed: a stop flag, nothing else is published */
	while (!atomic_load_explicit(&sp->stop, memory_order_relaxed))
		if (!(++n % 4096) && util_now_ns() - t0 > sp->limit_ns)
			break;
		else
			hwt_cpu_relax();
	return NULL;
}

void stab_add(struct stab *st, struct hwt_misaligned_report *r)
{
	bool same, vsame, migrated = false;

	if (!st->runs) {
		st->first_summary = r->summary;
		st->first_vsummary = r->vector_summary;
		st->first_asummary = r->avx2_summary;
		st->first_n = r->n;
		for (unsigned k = 0; k < r->n && k < 64; k++) {
			st->first[k] = r->cpu[k].speed;
			st->first_v[k][0] = r->cpu[k].vector.speed;
			st->first_v[k][1] = r->cpu[k].avx2.speed;
		}
	}
	same = vsame = r->n == st->first_n;
	for (unsigned k = 0; k < r->n && k < 64; k++) {
		same &= r->cpu[k].speed == st->first[k];
		vsame &= r->cpu[k].vector.speed == st->first_v[k][0] &&
			 r->cpu[k].avx2.speed == st->first_v[k][1];
		migrated |= (r->cpu[k].notes & HWT_MISALIGNED_NOTE_MIGRATED) != 0 ||
			    r->cpu[k].preempted > 0;
		if (!r->cpu[k].status)
			series_add(&st->ratio, r->cpu[k].ratio_x100);
	}
	st->runs++;
	st->same_cpus += same;
	st->same_summary += (int)r->summary == st->first_summary;
	st->same_vcpus += vsame;
	st->same_vsummary += (int)r->vector_summary == st->first_vsummary &&
			     (int)r->avx2_summary == st->first_asummary;
	st->same_all += same && vsame;
	st->vsummary_count[r->vector_summary]++;
	st->migrated_runs += migrated;
	st->summary_count[r->summary]++;
	series_add(&st->wall, r->wall_ns);
}

void stability(struct stab *st, const unsigned *budgets, unsigned nb, unsigned runs,
	       int busy_cpu)
{
	struct spinner sp = { .limit_ns = 600ull * 1000000000u };
	pthread_t th;

	if (busy_cpu >= 0) {
		atomic_store_explicit(&sp.stop, 0, memory_order_relaxed);
		if (util_thread_start(&th, busy_cpu, spin_main, &sp)) {
			cli_error("cannot start the spinning thread on CPU %d", busy_cpu);
			exit(1);
		}
	}
	for (unsigned b = 0; b < nb; b++)
		st[b] = (struct stab){ .budget_us = budgets[b] };
	for (unsigned i = 0; i < runs; i++) {
		bench_say("\rbench_probe: stability %s %u/%u   ", busy_cpu >= 0 ? "busy" : "idle", i + 1,
		    runs);
		for (unsigned b = 0; b < nb; b++) { /* budgets interleaved */
			struct hwt_misaligned_report r;
			struct phase ph = { 0 };

			run_on(NULL, 0, budgets[b], &ph, &r);
			phase_free(&ph);
			stab_add(&st[b], &r);
			hwt_misaligned_report_free(&r);
		}
	}
	if (busy_cpu >= 0) {
		atomic_store_explicit(&sp.stop, 1, memory_order_relaxed);
		pthread_join(th, NULL);
	}
}

void print_stab(struct json *j, const char *load, struct stab *st, unsigned nb)
{
	for (unsigned b = 0; b < nb; b++) {
		struct stat_summary m;

		stat_sort_u64(st[b].ratio.v, st[b].ratio.n);
		stat_summary_u64(st[b].ratio.v, st[b].ratio.n, &m);
		json_nl(j, "    ");
		json_obj(j);
		json_key(j, "load"), json_str(j, load);
		json_key(j, "budget_us"), json_u64(j, st[b].budget_us);
		json_key(j, "runs"), json_u64(j, st[b].runs);
		json_key(j, "same_cpu_verdicts"), json_u64(j, st[b].same_cpus);
		json_key(j, "same_summary"), json_u64(j, st[b].same_summary);
		json_key(j, "first_summary"),
			json_str(j, hwt_misaligned_speed_name(st[b].first_summary));
		json_key(j, "preempted_runs"), json_u64(j, st[b].migrated_runs);
		json_key(j, "ratio_x100_min"), json_u64(j, m.min);
		json_key(j, "ratio_x100_p50"), json_u64(j, m.p50);
		json_key(j, "ratio_x100_max"), json_u64(j, m.max);
		json_key(j, "wall_ns_p50"), json_u64(j, series_p50(&st[b].wall));
		json_key(j, "summaries");
		json_obj(j);
		for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
			if (st[b].summary_count[k])
				json_key(j, hwt_misaligned_speed_name(k)),
					json_u64(j, st[b].summary_count[k]);
		json_close(j);
		json_key(j, "same_vector_verdicts"), json_u64(j, st[b].same_vcpus);
		json_key(j, "same_vector_summary"), json_u64(j, st[b].same_vsummary);
		json_key(j, "same_all_verdicts"), json_u64(j, st[b].same_all);
		json_key(j, "first_vector_summary"),
			json_str(j, hwt_misaligned_speed_name(st[b].first_vsummary));
		json_key(j, "first_avx2_summary"),
			json_str(j, hwt_misaligned_speed_name(st[b].first_asummary));
		json_key(j, "vector_summaries");
		json_obj(j);
		for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
			if (st[b].vsummary_count[k])
				json_key(j, hwt_misaligned_speed_name(k)),
					json_u64(j, st[b].vsummary_count[k]);
		json_close(j);
		json_close(j);
		free(st[b].ratio.v), free(st[b].wall.v);
	}
}

unsigned parse_budgets(const char *v, unsigned *out)
{
	unsigned n = 0;
	const char *p = v;

	while (*p) {
		char *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p || (*end && *end != ',') || x < 1 || x > 60000000 ||
		    n == MAX_BUDGETS) {
			cli_error("--budgets-us: invalid value '%s' (expected up to %d budgets in "
				  "us, 1..60000000, comma-separated)", v, MAX_BUDGETS);
			exit(CLI_EXIT_USAGE);
		}
		out[n++] = (unsigned)x;
		p = *end ? end + 1 : end;
	}
	if (!n) {
		cli_error("--budgets-us: invalid value '%s' (empty)", v);
		exit(CLI_EXIT_USAGE);
	}
	return n;
}
