/* SPDX-License-Identifier: MIT */
/* hwtune cmdq: the recommendation, and the report as text or JSON. */
#include "cmdq/engine.h"

#include "prog/json.h"

#include <string.h>

static const char *const src_name[] = { "default", "env", "flag" };

bool cmdq_recommend(const struct cmdq_report *r, char *buf, size_t len)
{
	const struct cmdq_opts *o = &r->o;
	int m = o->mode[CMDQ_MSI] ? CMDQ_MSI : CMDQ_SEV;

	if (!o->mode[CMDQ_MSI] || !o->mode[CMDQ_SEV]) {
		/* the main job takes no --poll: name what works in both */
		if (o->disable_src == CMDQ_SRC_ENV)
			snprintf(buf, len, "only %s measured (HWTUNE_DISABLE_MSIPOLLING=1): unset "
				 "HWTUNE_DISABLE_MSIPOLLING to compare (or hwtune cmdq --poll both)",
				 cmdq_mode_long[m]);
		else
			snprintf(buf, len, "only %s measured; use --poll both to compare",
				 cmdq_mode_long[m]);
		return m == CMDQ_SEV;
	}
	if (r->inconclusive) {
		snprintf(buf, len, "inconclusive (the rounds disagree: CONS/MSI time %.2fx to %.2fx, "
			 "median %.3fx, over all rounds %.3fx): keep the default", r->ratio_p10,
			 r->ratio_p90, r->ratio_med, r->ratio_all);
		return false;
	}
	snprintf(buf, len, "%s",
		 r->faster == CMDQ_SEV ? "disable_msipolling=1 (CONS polling is faster here: "
					 "--disable-msipolling or HWTUNE_DISABLE_MSIPOLLING=1)"
		 : r->faster == CMDQ_MSI ? "disable_msipolling=0 (MSI polling is faster here)"
					 : "disable_msipolling=0 (no difference beyond 3%: keep the default)");
	return r->faster == CMDQ_SEV;
}

/* The queues' count and insert path: every measured queue has the same
 * options, so the first one's info says it. */
static const struct hwt_cmdq_info *queue_info(const struct cmdq_report *r)
{
	return &r->m[r->o.mode[CMDQ_MSI] ? CMDQ_MSI : CMDQ_SEV].qinfo;
}

static double ratio_of(uint64_t a, uint64_t f)
{
	return f ? (double)a / f : 0;
}

/* {"p50": N, "p99": N, "p999": N, "max": N[, "samples": N]} */
static void json_lat(struct json *j, const char *key, const struct stat_summary *s, bool samples)
{
	json_key(j, key);
	json_obj(j);
	json_key(j, "p50"), json_u64(j, s->p50);
	json_key(j, "p99"), json_u64(j, s->p99);
	json_key(j, "p999"), json_u64(j, s->p999);
	json_key(j, "max"), json_u64(j, s->max);
	if (samples)
		json_key(j, "samples"), json_u64(j, s->n);
	json_close(j);
}

static void json_result(struct json *j, const struct cmdq_report *r, int m)
{
	const struct cmdq_mode_result *s = &r->m[m];
	const struct hwt_smmu_dev_stats *d = &s->dstats;

	json_nl(j, "    ");
	json_obj(j);
	json_key(j, "poll"), json_str(j, cmdq_mode_name[m]);
	json_key(j, "threads"), json_u64(j, r->o.threads);
	json_key(j, "batch"), json_u64(j, r->o.batch);
	json_key(j, "syncs"), json_u64(j, s->lat.n);
	json_lat(j, "sync_ns", &s->lat, false);
	json_key(j, "cmds_per_s"), json_fixed(j, s->cmds_per_s, 0);
	json_key(j, "cmds_per_s_round_p50"), json_fixed(j, s->cmds_per_s_med, 0);
	json_key(j, "syncs_per_s"), json_fixed(j, s->per_s, 0);
	json_key(j, "ratio_to_floor");
	json_obj(j);
	json_key(j, "p50"), json_fixed(j, ratio_of(s->lat.p50, r->floor.p50), 3);
	json_key(j, "p99"), json_fixed(j, ratio_of(s->lat.p99, r->floor.p99), 3);
	json_close(j);
	json_nl(j, "     ");
	json_key(j, "near_p50_ns"), json_u64(j, s->near_p50);
	json_key(j, "far_p50_ns"), json_u64(j, s->far_p50);
	json_key(j, "msipolling"), json_bool(j, s->qinfo.msipolling);
	json_key(j, "reason"), json_str(j, s->qinfo.reason);
	json_nl(j, "     ");
	json_key(j, "device");
	json_obj(j);
	json_key(j, "cmds"), json_u64(j, d->cmds);
	json_key(j, "syncs"), json_u64(j, d->syncs);
	json_key(j, "msi_writes"), json_u64(j, d->msi_writes);
	json_key(j, "sevs"), json_u64(j, d->sevs);
	json_key(j, "sleeps"), json_u64(j, d->sleeps);
	json_close(j);
	json_close(j);
}

void cmdq_json(struct json *j, const struct cmdq_report *r)
{
	const struct cmdq_opts *o = &r->o;
	char reco[200];
	bool disable = cmdq_recommend(r, reco, sizeof(reco));

	json_obj(j);
	json_key(j, "version"), json_str(j, hwt_version());
	json_key(j, "producer_cpu"), json_int(j, r->producer_cpu);
	json_key(j, "device_cpu"), json_int(j, r->device_cpu);
	json_key(j, "entries"), json_u64(j, 1u << o->entries_log2);
	json_key(j, "threads"), json_u64(j, o->threads);
	json_key(j, "batch"), json_u64(j, o->batch);
	json_key(j, "rounds"), json_u64(j, r->rounds);
	json_key(j, "segment_syncs"), json_u64(j, r->per_round);
	json_key(j, "handler"), json_str(j, o->noop ? "noop" : "smmu");
	json_nl(j, "  ");
	json_key(j, "queues"), json_u64(j, queue_info(r)->queues);
	json_key(j, "insert_path"), json_str(j, queue_info(r)->insert_path);
	json_key(j, "insert_path_reason"), json_str(j, queue_info(r)->insert_path_reason);
	json_nl(j, "  ");
	json_key(j, "disable_msipolling"), json_bool(j, o->disable_msi);
	json_key(j, "disable_msipolling_source"), json_str(j, src_name[o->disable_src]);
	json_nl(j, "  ");
	json_key(j, "costs_ns");
	json_obj(j);
	json_key(j, "msi"), json_u64(j, o->cost[0]);
	json_key(j, "sev"), json_u64(j, o->cost[1]);
	json_key(j, "cmd"), json_u64(j, o->cost[2]);
	json_close(j);
	json_nl(j, "  ");
	json_lat(j, "floor_ns", &r->floor, true);
	json_nl(j, "  ");
	json_key(j, "results");
	json_arr(j);
	for (int m = 0; m < CMDQ_MODES; m++)
		if (o->mode[m])
			json_result(j, r, m);
	json_close(j);
	json_nl(j, "  ");
	json_key(j, "regimes");
	json_obj(j);
	json_key(j, "near_rounds"), json_u64(j, r->near);
	json_key(j, "far_rounds"), json_u64(j, r->far);
	json_key(j, "near_floor_p50"), json_u64(j, r->near_floor);
	json_key(j, "far_floor_p50"), json_u64(j, r->far_floor);
	json_close(j);
	json_nl(j, "  ");
	json_key(j, "rounds_p50_ns");
	json_arr(j);
	for (unsigned i = 0; i < r->rounds; i++) {
		json_arr(j);
		json_u64(j, r->round_p50[CMDQ_MODES][i]);
		for (int m = 0; m < CMDQ_MODES; m++)
			json_u64(j, o->mode[m] ? r->round_p50[m][i] : 0);
		json_close(j);
	}
	json_close(j);
	if (o->mode[CMDQ_MSI] && o->mode[CMDQ_SEV]) {
		json_nl(j, "  ");
		json_key(j, "comparison");
		json_obj(j);
		json_key(j, "metric"), json_str(j, r->tput ? "cmds_per_s" : "sync_p50");
		json_key(j, "faster"), json_str(j, r->faster < 0 ? "none" : cmdq_mode_name[r->faster]);
		json_key(j, "factor"), json_fixed(j, r->factor, 3);
		json_key(j, "agree"), json_u64(j, r->agree);
		json_key(j, "rounds"), json_u64(j, r->rounds);
		json_key(j, "verdict");
		json_str(j, r->inconclusive ? "inconclusive"
			    : r->faster < 0 ? "none" : cmdq_mode_name[r->faster]);
		json_key(j, "ratio_p50"), json_fixed(j, r->ratio_med, 3);
		json_key(j, "ratio_all"), json_fixed(j, r->ratio_all, 3);
		json_key(j, "ratio_p10"), json_fixed(j, r->ratio_p10, 3);
		json_key(j, "ratio_p90"), json_fixed(j, r->ratio_p90, 3);
		json_key(j, "ratio_thirds");
		if (r->rounds >= 6) {
			json_arr(j);
			for (int t = 0; t < 3; t++)
				json_fixed(j, r->ratio_third[t], 3);
			json_close(j);
		} else {
			json_null(j);
		}
		json_close(j);
	} else {
		json_nl(j, "  ");
		json_key(j, "comparison"), json_null(j);
	}
	if (r->have_auto) {
		json_nl(j, "  ");
		json_key(j, "auto");
		json_obj(j);
		json_key(j, "error"), json_int(j, r->auto_err);
		json_key(j, "msipolling"), json_bool(j, r->auto_info.msipolling);
		json_key(j, "measured"), json_bool(j, r->auto_info.measured);
		json_key(j, "msi_ns"), json_u64(j, r->auto_info.msi_ns);
		json_key(j, "sev_ns"), json_u64(j, r->auto_info.sev_ns);
		json_key(j, "reason"), json_str(j, r->auto_info.reason);
		json_close(j);
	} else {
		json_key(j, "auto"), json_null(j);
	}
	json_nl(j, "  ");
	json_key(j, "recommendation");
	json_obj(j);
	json_key(j, "disable_msipolling"), json_bool(j, disable);
	json_key(j, "reason"), json_str(j, reco);
	json_key(j, "warning");
	if (r->rounds < CMDQ_MIN_ROUNDS) {
		char w[160];

		cmdq_rounds_warning(r, w, sizeof(w));
		json_str(j, w);
	} else {
		json_null(j);
	}
	json_close(j);
	json_close(j);
}

/* {"cmdq": {...}, "version": V}: "version" last, so that the output still
 * starts with {"cmdq": as DESIGN.md shows. */
void cmdq_print_json(FILE *f, const struct cmdq_report *r)
{
	struct json j;

	json_begin(&j, f);
	json_obj(&j);
	json_key(&j, "cmdq");
	cmdq_json(&j, r);
	json_nl(&j, " ");
	json_key(&j, "version"), json_str(&j, hwt_version());
	json_close(&j);
	json_end(&j);
}

bool cmdq_rounds_warning(const struct cmdq_report *r, char *buf, size_t len)
{
	if (r->rounds >= CMDQ_MIN_ROUNDS)
		return false;
	snprintf(buf, len, "only %u round%s measured (under %d): the comparison is weak; "
		 "measure more syncs (--syncs)", r->rounds, r->rounds == 1 ? "" : "s",
		 CMDQ_MIN_ROUNDS);
	return true;
}

void cmdq_print_human(FILE *f, const struct cmdq_report *r)
{
	const struct cmdq_opts *o = &r->o;
	char reco[200];

	cmdq_recommend(r, reco, sizeof(reco));
	fprintf(f, "hwtune cmdq: %s, %u thread%s, batch %u, queue %u entries, producer CPU %d, "
		   "device CPU %d%s\n",
		r->tput ? "CMD_SYNC after each batch" : "empty-queue CMD_SYNC", o->threads,
		o->threads > 1 ? "s" : "", o->batch, 1u << o->entries_log2, r->producer_cpu,
		r->device_cpu,
		r->producer_cpu != r->device_cpu ? ""
		: o->producer_cpu >= 0 && o->device_cpu >= 0
			? " (same CPU: --producer-cpu and --device-cpu name the same CPU)"
		: o->producer_cpu >= 0 ? " (same CPU: --producer-cpu names the device's CPU)"
		: o->device_cpu >= 0   ? " (same CPU: --device-cpu names the only producer CPU)"
				       : " (same CPU: only one CPU allowed)");
	fprintf(f, "  %u round%s interleaved (floor, then each mode), %u timed sync%s per mode "
		   "per round\n", r->rounds, r->rounds == 1 ? "" : "s", r->per_round,
		r->per_round == 1 ? "" : "s");
	fprintf(f, "  queues %u, insert path %s (%s)\n", queue_info(r)->queues,
		queue_info(r)->insert_path, queue_info(r)->insert_path_reason);
	if (o->cost[0] || o->cost[1] || o->cost[2])
		fprintf(f, "  device extra costs ON: msi %u ns, sev %u ns, cmd %u ns\n", o->cost[0],
			o->cost[1], o->cost[2]);
	if (o->disable_src != CMDQ_SRC_DEFAULT)
		fprintf(f, "  disable_msipolling=%d (from %s)\n", o->disable_msi,
			o->disable_src == CMDQ_SRC_ENV ? "HWTUNE_DISABLE_MSIPOLLING"
						       : "--disable-msipolling");
	fprintf(f, "\n  %-22s %9s %9s %10s %10s", "", "p50 ns", "p99 ns", "p50/floor", "p99/floor");
	if (r->tput)
		fprintf(f, " %12s %12s", "cmds/s", "round p50");
	fprintf(f, "\n  %-22s %9llu %9llu %10s %10s\n", "floor (line ping-pong)",
		(unsigned long long)r->floor.p50, (unsigned long long)r->floor.p99, "1.00", "1.00");
	for (int m = 0; m < CMDQ_MODES; m++) {
		const struct cmdq_mode_result *s = &r->m[m];

		if (!o->mode[m])
			continue;
		fprintf(f, "  %-22s %9llu %9llu %10.2f %10.2f", cmdq_mode_long[m],
			(unsigned long long)s->lat.p50, (unsigned long long)s->lat.p99,
			ratio_of(s->lat.p50, r->floor.p50), ratio_of(s->lat.p99, r->floor.p99));
		if (r->tput)
			fprintf(f, " %12.0f %12.0f", s->cmds_per_s, s->cmds_per_s_med);
		fputc('\n', f);
	}
	fprintf(f, "\n  regimes: %u round%s near (floor p50 %u ns)", r->near, r->near == 1 ? "" : "s",
		r->near_floor);
	if (r->far)
		fprintf(f, ", %u far (floor p50 %u ns)", r->far, r->far_floor);
	fputc('\n', f);
	for (int m = 0; m < CMDQ_MODES; m++) {
		const struct cmdq_mode_result *s = &r->m[m];

		if (!o->mode[m] || !r->far || !r->near)
			continue;
		fprintf(f, "    %-14s near %u ns (%.2fx floor), far %u ns (%.2fx floor)\n",
			cmdq_mode_long[m], s->near_p50, ratio_of(s->near_p50, r->near_floor),
			s->far_p50, ratio_of(s->far_p50, r->far_floor));
	}
	if (o->mode[CMDQ_MSI] && o->mode[CMDQ_SEV]) {
		const char *metric = r->tput ? "cmds/s" : "sync p50";

		if (r->inconclusive)
			fprintf(f, "  faster (%s): inconclusive: CONS/MSI time per round %.2fx to %.2fx "
				   "(p10-p90), median %.3fx; over all rounds (the table) %.3fx%s\n", metric,
				r->ratio_p10, r->ratio_p90, r->ratio_med, r->ratio_all,
				r->rounds >= 6 ? "; see the thirds in --json" : "");
		else if (r->faster < 0)
			fprintf(f, "  faster (%s): neither (within %.0f%%: %.3fx, median of per-round "
				   "ratios)\n", metric, CMDQ_TIE * 100, r->factor);
		else
			fprintf(f, "  faster (%s): %s, by %.2fx (median of per-round ratios; %u of %u "
				   "round%s agree%s)\n", metric, cmdq_mode_long[r->faster], r->factor,
				r->agree, r->rounds, r->rounds == 1 ? "" : "s", r->agree == 1 ? "s" : "");
	}
	if (r->have_auto) {
		/* the library's reason may begin with "auto: " itself */
		const char *why = r->auto_info.reason;

		if (r->auto_err)
			fprintf(f, "  auto: measurement failed: %s\n", strerror(-r->auto_err));
		if (!strncmp(why, "auto: ", 6))
			why += 6;
		fprintf(f, "  auto: queue chose %s: %s\n",
			r->auto_info.msipolling ? "MSI polling" : "CONS polling", why);
		if (!r->auto_err && !r->auto_info.measured)
			fprintf(f, "  warning: the auto_poll queue measured no round: its choice is the "
				   "configured mode, not a measurement\n");
	}
	fprintf(f, "  recommendation: %s\n", reco);
	if (cmdq_rounds_warning(r, reco, sizeof(reco)))
		fprintf(f, "  warning: %s\n", reco);
}
