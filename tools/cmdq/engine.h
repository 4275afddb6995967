/* SPDX-License-Identifier: MIT */
/*
 * The measurement behind 'hwtune cmdq' and the main job: options in, a
 * report out.  CMD_SYNC latency per completion mode (MSI polling vs CONS
 * polling with SEV), the modes interleaved in short rounds with the
 * producer <-> device-CPU cache-line ping-pong (the floor), and with
 * threads/batch the multi-producer throughput.
 */
#ifndef HWT_CMDQ_ENGINE_H
#define HWT_CMDQ_ENGINE_H

#include <hwtune/hwtune.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prog/stats.h"

enum { CMDQ_MSI, CMDQ_SEV, CMDQ_MODES };
extern const char *const cmdq_mode_name[CMDQ_MODES]; /* "msi", "sev" */
extern const char *const cmdq_mode_long[CMDQ_MODES]; /* "MSI polling", "CONS polling" */

/* Where disable_msipolling came from. */
enum { CMDQ_SRC_DEFAULT, CMDQ_SRC_ENV, CMDQ_SRC_FLAG };

#define CMDQ_WARMUP 16           /* untimed issues per thread per segment */
#define CMDQ_SEG_DEFAULT_MAX 500 /* default timed syncs per mode per round, at most */
#define CMDQ_FAR_FACTOR 3        /* a round is "far" if its floor > 3x the best */
#define CMDQ_TIE 0.03            /* modes within 3% count as a tie */
/* --queues: the library takes any number and refuses more than the device
 * has; hwtune's software SMMU has one queue per possible CPU, at most 256. */
#define CMDQ_QUEUES_MAX 256u

struct cmdq_opts {
	bool mode[CMDQ_MODES];  /* completion modes to measure */
	bool disable_msi;       /* disable_msipolling in effect */
	int disable_src;        /* CMDQ_SRC_* */
	unsigned threads;       /* producer threads, 1.. */
	unsigned batch;         /* TLBI_NH_VA commands before each CMD_SYNC */
	unsigned entries_log2;  /* queue of 2^N entries; batch + 1 must fit */
	unsigned seg;           /* timed syncs per mode per round; 0: syncs/10, at most 500 */
	uint64_t syncs;         /* timed syncs per mode, rounded up to whole rounds */
	bool auto_poll;         /* also let an auto_poll queue measure and choose */
	/* hwt_cmdq_options.queues of the measured queues: 0 (the default) or
	 * 1 one queue, N, or HWT_CMDQ_QUEUES_PER_CPU. */
	unsigned queues;
	bool noop;              /* device executor: a no-op handler, not the SMMU model */
	int device_cpu, producer_cpu; /* -1: choose */
	unsigned cost[3];       /* device extra costs, ns: msi, sev, cmd */
	uint64_t timeout_ms;    /* every wait */
	/* Called after each round with (rounds done, rounds in all, arg); NULL:
	 * none.  Runs on the measuring thread between segments. */
	void (*progress)(unsigned done, unsigned total, void *arg);
	void *progress_arg;
};

/* 'hwtune cmdq' with no options: both modes, or CONS polling only when
 * HWTUNE_DISABLE_MSIPOLLING=1.  -EINVAL for any other value of it (the
 * defaults are still filled in). */
int cmdq_opts_default(struct cmdq_opts *o);
/* --queues as the user wrote it: "per-cpu" or the number, in buf. */
const char *cmdq_queues_word(unsigned queues, char *buf, size_t len);

struct cmdq_mode_result {
	struct stat_summary lat;   /* per sync (or batch + sync), ns */
	double per_s;              /* syncs/s: all timed syncs over all timed wall time */
	double cmds_per_s;         /* the same in commands (batch per sync) */
	double cmds_per_s_med;     /* median over rounds */
	uint32_t near_p50, far_p50; /* median round p50 per regime */
	struct hwt_cmdq_info qinfo;
	struct hwt_smmu_dev_stats dstats;
};

struct cmdq_report {
	struct cmdq_opts o;        /* what was measured */
	int producer_cpu, device_cpu;
	unsigned rounds, per_round; /* per_round: timed syncs per mode per round */
	struct stat_summary floor;
	struct cmdq_mode_result m[CMDQ_MODES]; /* those of o.mode[] */
	uint32_t *round_p50[CMDQ_MODES + 1];   /* per round; [CMDQ_MODES] is the floor */
	unsigned near, far;        /* rounds per regime */
	uint32_t near_floor, far_floor; /* median round floor p50 per regime */
	int faster;                /* CMDQ_MSI, CMDQ_SEV, or -1: a tie or not compared */
	bool tput;                 /* compared on time for the same work, else sync p50 */
	double factor;             /* slower / faster, median of per-round ratios */
	unsigned agree;            /* rounds where the faster mode was faster */
	/* The verdict is given only when stable: the median of the per-round
	 * ratios, the ratio of the table's own figures over all rounds
	 * (ratio_all), each third of the rounds, and 3 in 4 rounds all point
	 * the same way (or all lie within CMDQ_TIE for "neither"); else
	 * inconclusive, faster -1.  Ratios: CONS time / MSI time for the same
	 * work (over 1: MSI polling faster). */
	bool inconclusive;
	double ratio_med, ratio_all, ratio_p10, ratio_p90;
	double ratio_third[3];     /* median per third of the rounds (6 rounds or more) */
	bool have_auto;
	int auto_err;
	struct hwt_cmdq_info auto_info;
	char error[256];           /* why cmdq_measure failed */
};

/*
 * Run the measurement.  0; -EINVAL when --device-cpu or --producer-cpu
 * names a CPU that is not allowed, or the library refused o->queues (more
 * than the device has): bad usage; -EIO when the run failed.
 * On error r->error says why.  Free r with cmdq_report_free() either way.
 */
int cmdq_measure(const struct cmdq_opts *o, struct cmdq_report *r);
void cmdq_report_free(struct cmdq_report *r);

/* The recommendation of a report, in words; returns whether to set
 * disable_msipolling. */
bool cmdq_recommend(const struct cmdq_report *r, char *buf, size_t len);
/* The report as text, or as one JSON object. */
void cmdq_print_human(FILE *f, const struct cmdq_report *r);
void cmdq_print_json(FILE *f, const struct cmdq_report *r);
/* The value of "cmdq" (one object), into a JSON writer: the main job's
 * "cmdq" member is this same object. */
struct json;
void cmdq_json(struct json *j, const struct cmdq_report *r);
/* Fewer than CMDQ_MIN_ROUNDS rounds back the comparison: true, and the
 * warning in buf. */
#define CMDQ_MIN_ROUNDS 5
bool cmdq_rounds_warning(const struct cmdq_report *r, char *buf, size_t len);

#endif
