/* SPDX-License-Identifier: MIT */
/*
 * bench_cmdq's results: one JSON document on stdout (one record per line,
 * as bench/report.sh reads it) and a table on stderr.
 *
 * Per case (group, producer count P, burst B) and implementation: the
 * elements/s of all producers per round and their median; the ratios
 * hwt / peer taken within each round, then the median.  With more than one
 * producer count and 1 among them, also the ratio to the fair share: the
 * per-producer rate at P over (the 1-producer rate of the same round / P),
 * that is the rate of all P producers over the 1-producer rate, per round,
 * then the median.  1 is fair while the producers time-share one CPU;
 * producers spread over real CPUs can reach up to P.
 */
#include "bench/cmdq/bench.h"

#include "prog/cli.h"
#include "prog/json.h"
#include "prog/stats.h"

#include <stdio.h>
#include <stdlib.h>

static double *scratch(unsigned n)
{
	double *q = calloc(n, sizeof(double));

	if (!q) {
		cli_error("out of memory");
		exit(1);
	}
	return q;
}

/* The index of producer count 1, or -1. */
static int one_producer(const struct bench *bn)
{
	for (unsigned pi = 0; pi < bn->o.nprods; pi++)
		if (bn->o.prods[pi] == 1)
			return (int)pi;
	return -1;
}

/* The fair-share ratios of im at pi, bi into q[rounds]: false if none. */
static bool fair_share(const struct bench *bn, const struct impl *im, unsigned pi, unsigned bi,
		       double *q)
{
	int p1 = one_producer(bn);

	if (p1 < 0 || bn->o.nprods < 2)
		return false;
	for (unsigned r = 0; r < bn->o.rounds; r++) {
		double one = im->rate[bench_at(bn, (unsigned)p1, bi) + r];

		q[r] = one > 0 ? im->rate[bench_at(bn, pi, bi) + r] / one : 0;
	}
	return true;
}

static void print_rates(struct json *j, const struct bench *bn, const struct impl *im, unsigned pi,
			unsigned bi, double *q)
{
	unsigned rounds = bn->o.rounds, P = bn->o.prods[pi], B = bn->o.bursts[bi];
	const double *v = &im->rate[bench_at(bn, pi, bi)];
	double lo = v[0], hi = v[0];

	for (unsigned r = 1; r < rounds; r++) {
		lo = v[r] < lo ? v[r] : lo;
		hi = v[r] > hi ? v[r] : hi;
	}
	json_nl(j, "        ");
	json_key(j, im->d.name);
	json_obj(j);
	json_key(j, "p50"), json_fixed(j, stat_median(v, rounds), 0);
	json_key(j, "min"), json_fixed(j, lo, 0);
	json_key(j, "max"), json_fixed(j, hi, 0);
	json_key(j, "segments");
	json_arr(j);
	for (unsigned r = 0; r < rounds; r++)
		json_fixed(j, v[r], 0);
	json_close(j);
	if (im->ops->cas_retries)
		json_key(j, "cas_retries_per_call_p50"),
			json_fixed(j, stat_median(&im->retry[bench_at(bn, pi, bi)], rounds), 4);
	json_key(j, "calls_per_s_per_producer_p50"),
		json_fixed(j, stat_median(v, rounds) / P / B, 0);
	if (P > 1 && fair_share(bn, im, pi, bi, q)) {
		json_key(j, "fair_share_ratio_p50"), json_fixed(j, stat_median(q, rounds), 3);
		json_key(j, "fair_share_ratios");
		json_arr(j);
		for (unsigned r = 0; r < rounds; r++)
			json_fixed(j, q[r], 3);
		json_close(j);
	}
	json_close(j);
}

static void print_ratios(struct json *j, const struct bench *bn, enum group g, unsigned pi,
			 unsigned bi, double *q)
{
	unsigned rounds = bn->o.rounds;
	size_t at = bench_at(bn, pi, bi);

	for (unsigned i = 0; i < bn->nimpl; i++)
		for (unsigned k = 0; k < bn->nimpl; k++) {
			const struct impl *a = &bn->im[i], *p = &bn->im[k];
			unsigned wins = 0;
			double med;

			if (a->group != g || p->group != g || !a->ops->subject || p->ops->subject)
				continue;
			for (unsigned r = 0; r < rounds; r++) {
				q[r] = a->rate[at + r] / p->rate[at + r];
				wins += q[r] > 1;
			}
			med = stat_median(q, rounds);
			json_nl(j, "        ");
			json_obj(j);
			json_key(j, "hwt"), json_str(j, a->d.name);
			json_key(j, "peer"), json_str(j, p->d.name);
			json_key(j, "ratio_p50"), json_fixed(j, med, 3);
			json_key(j, "rounds_hwt_faster"), json_u64(j, wins);
			json_key(j, "rounds"), json_u64(j, rounds);
			json_close(j);
			fprintf(stderr, "%s", group_name[g]);
			if (bn->o.nprods > 1 || bn->o.prods[0] > 1)
				fprintf(stderr, " P=%u", bn->o.prods[pi]);
			fprintf(stderr, " B=%u: %s / %s = %.2fx (%u/%u rounds)\n", bn->o.bursts[bi],
				a->d.name, p->d.name, med, wins, rounds);
		}
}

/* One case: group g, producer count index pi, burst index bi. */
static void print_case(struct json *j, struct bench *bn, enum group g, unsigned pi, unsigned bi)
{
	const double *fl = &bn->floor_ns[((size_t)g * bn->o.nbursts + bi) * bn->o.rounds];
	unsigned rounds = bn->o.rounds, far = 0;
	double fmin = 0, *q = scratch(rounds);

	for (unsigned r = 0; r < rounds; r++)
		if (fl[r] > 0 && (!fmin || fl[r] < fmin))
			fmin = fl[r];
	for (unsigned r = 0; r < rounds; r++)
		far += fl[r] > 3 * fmin;
	json_nl(j, "    ");
	json_obj(j);
	json_key(j, "group"), json_str(j, group_name[g]);
	json_key(j, "burst"), json_u64(j, bn->o.bursts[bi]);
	json_key(j, "producers"), json_u64(j, bn->o.prods[pi]);
	json_key(j, "producer_cpus"), json_u64(j, bench_prod_cpus(bn, bn->o.prods[pi]));
	json_key(j, "floor_ns");
	json_arr(j);
	for (unsigned r = 0; r < rounds; r++)
		json_fixed(j, fl[r], 0);
	json_close(j);
	json_key(j, "far_rounds"), json_u64(j, far);
	json_nl(j, "      ");
	json_key(j, "elements_per_s");
	json_obj(j);
	for (unsigned i = 0; i < bn->nimpl; i++)
		if (bn->im[i].group == g)
			print_rates(j, bn, &bn->im[i], pi, bi, q);
	json_close(j);
	json_nl(j, "      ");
	json_key(j, "ratios");
	json_arr(j);
	print_ratios(j, bn, g, pi, bi, q);
	json_close(j);
	json_close(j);
	free(q);
}

static void print_machine(struct json *j, const struct bench *bn, const char *model)
{
	json_nl(j, "  ");
	json_key(j, "machine");
	json_obj(j);
	json_key(j, "cpu_model"), json_str(j, model);
	json_key(j, "producer_cpus");
	json_arr(j);
	for (unsigned i = 0; i < bn->o.max_prod; i++)
		json_int(j, bn->prod_cpu[i]);
	json_close(j);
	json_key(j, "consumer_cpu"), json_int(j, bn->cons_cpu);
	json_close(j);
	json_nl(j, "  ");
	json_key(j, "config");
	json_obj(j);
	json_key(j, "producers");
	json_arr(j);
	for (unsigned pi = 0; pi < bn->o.nprods; pi++)
		json_u64(j, bn->o.prods[pi]);
	json_close(j);
	json_key(j, "entries"), json_u64(j, 1u << bn->o.log2);
	json_key(j, "segment_ms"), json_u64(j, bn->o.segment_ms);
	json_key(j, "rounds"), json_u64(j, bn->o.rounds);
	json_key(j, "warmup_elements"), json_u64(j, WARM_ELEMS);
	json_key(j, "consumer_burst"), json_u64(j, BENCH_CONS_BURST);
	json_key(j, "cons_batch"), json_u64(j, bn->o.cons_batch);
	json_key(j, "timeout_ms"), json_u64(j, bn->o.timeout_ms);
	json_key(j, "element_bytes"), json_u64(j, sizeof(struct hwt_cmdq_cmd));
	json_close(j);
}

static void print_impls(struct json *j, const struct bench *bn)
{
	json_nl(j, "  ");
	json_key(j, "skipped");
	json_arr(j);
	for (unsigned i = 0; i < bn->nskip; i++) {
		const struct skipped *s = &bn->skipped[i];

		json_obj(j);
		json_key(j, "peer"), json_str(j, s->peer);
		if (s->package)
			json_key(j, "package"), json_str(j, s->package);
		if (s->reason)
			json_key(j, "reason"), json_str(j, s->reason);
		json_close(j);
	}
	json_close(j);
	json_nl(j, "  ");
	json_key(j, "implementations");
	json_arr(j);
	for (unsigned i = 0; i < bn->nimpl; i++) {
		const struct bench_queue_desc *d = &bn->im[i].d;

		json_nl(j, "    ");
		json_obj(j);
		json_key(j, "name"), json_str(j, d->name);
		json_key(j, "group"), json_str(j, group_name[bn->im[i].group]);
		if (d->insert_path[0]) {
			json_key(j, "insert_path"), json_str(j, d->insert_path);
			json_key(j, "insert_path_reason"), json_str(j, d->insert_path_reason);
		}
		json_key(j, "what"), json_str(j, d->what);
		json_close(j);
	}
	json_nl(j, "  ");
	json_close(j);
}

static void print_json(struct bench *bn, const char *model, unsigned nrun, double wall_s)
{
	struct json j;

	json_begin(&j, stdout);
	json_obj(&j);
	json_key(&j, "bench_cmdq");
	json_obj(&j);
	print_machine(&j, bn, model);
	print_impls(&j, bn);
	json_nl(&j, "  ");
	json_key(&j, "cases");
	json_arr(&j);
	for (int g = 0; g < 2; g++) {
		unsigned n = 0;

		for (unsigned i = 0; i < bn->nimpl; i++)
			n += bn->im[i].group == (enum group)g;
		for (unsigned pi = 0; n && pi < bn->o.nprods; pi++)
			for (unsigned bi = 0; bi < bn->o.nbursts; bi++)
				print_case(&j, bn, (enum group)g, pi, bi);
	}
	json_nl(&j, "  ");
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "segments_run"), json_u64(&j, nrun);
	json_key(&j, "wall_s"), json_fixed(&j, wall_s, 2);
	json_nl(&j, "");
	json_close(&j);
	json_close(&j);
	json_end(&j);
}

/* stderr: per case, each implementation's median rate (and its fair share). */
static void print_table(struct bench *bn)
{
	unsigned rounds = bn->o.rounds;
	double *q = scratch(rounds);

	for (int g = 0; g < 2; g++)
		for (unsigned pi = 0; pi < bn->o.nprods; pi++)
			for (unsigned bi = 0; bi < bn->o.nbursts; bi++) {
				unsigned P = bn->o.prods[pi], B = bn->o.bursts[bi];
				bool any = false;

				for (unsigned i = 0; i < bn->nimpl; i++) {
					struct impl *im = &bn->im[i];
					size_t at = bench_at(bn, pi, bi);

					if (im->group != (enum group)g)
						continue;
					if (!any)
						fprintf(stderr, "%-4s P=%-2u B=%-2u", group_name[g], P, B);
					any = true;
					fprintf(stderr, " | %s %.1f M/s", im->d.name,
						stat_median(&im->rate[at], rounds) / 1e6);
					if (P > 1)
						fprintf(stderr, ", %.1f K calls/s per producer",
							stat_median(&im->rate[at], rounds) / P / B / 1e3);
					if (P > 1 && fair_share(bn, im, pi, bi, q))
						fprintf(stderr, ", %.2f of fair share",
							stat_median(q, rounds));
					if (im->ops->cas_retries)
						fprintf(stderr, " (CAS retries/call %.3f)",
							stat_median(&im->retry[at], rounds));
				}
				if (any)
					fprintf(stderr, "\n");
			}
	free(q);
}

void bench_print(struct bench *bn, const char *model, unsigned nrun, double wall_s)
{
	print_table(bn);
	print_json(bn, model, nrun, wall_s);
}
