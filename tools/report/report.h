/* SPDX-License-Identifier: MIT */
/*
 * The main job's report: the machine, the kernel's own settings, progress
 * lines, and the Prometheus text output.  Everything read from /sys, /proc
 * and /dev/kmsg goes under report_root() (HWTUNE_ROOT, a test-only prefix:
 * tests/data/ holds fake trees).
 */
#ifndef HWT_REPORT_H
#define HWT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hwtune/hwtune.h>

#include "cmdq/engine.h"
#include "prog/json.h"

/* HWTUNE_ROOT, or "" (the real /). */
const char *report_root(void);
/* root + path into buf (path starts with '/'). */
void report_path(char *buf, size_t len, const char *path);
/* The first line of root + path, trailing newline cut: 0 or -errno. */
int report_read_line(const char *path, char *buf, size_t len);

#define REPORT_MODELS 8
struct report_machine {
	char arch[32];
	char kernel[128];              /* release, "" unknown */
	char hypervisor[64];           /* "" none detected */
	int misalignsse;               /* cpuinfo flag: 1 set, 0 clear, -1 no flags line */
	char models[REPORT_MODELS][96];
	unsigned nmodels;
	char allowed[256], online[256]; /* CPU lists, "" unknown */
};
void report_machine_read(struct report_machine *m);
void report_machine_json(struct json *j, const struct report_machine *m);
void report_machine_human(FILE *f, const struct report_machine *m);

#define REPORT_LOG_LINES 16
#define REPORT_SMMUS 16
/* One arm-smmu-v3 instance and the CMD_SYNC completion its driver uses
 * (report_smmu.c). */
enum { REPORT_CONS, REPORT_MSI, REPORT_UNKNOWN };
struct report_smmu {
	char name[64];                 /* the device, as the log names it (9050000.smmuv3) */
	char iommu[64];                /* its /sys/class/iommu entry; "" none found */
	bool have_features;
	uint32_t features;             /* the driver's feature word, when have_features */
	int completion;                /* REPORT_CONS, REPORT_MSI or REPORT_UNKNOWN */
	char reason[320];
};
struct report_kernel {
	/* /sys/module/arm_smmu_v3/parameters/disable_msipolling */
	int msi_err;                   /* 0 read, -ENOENT module not loaded, else -errno */
	bool module_loaded;
	bool msi_value;                /* when msi_err == 0 */
	char msi_why[160];             /* "" when read */
	/* /sys/class/iommu */
	int iommu_err;
	char iommus[256];              /* names, comma-separated */
	char smmus[256];               /* of which arm-smmu-v3 ones */
	/* /proc/cmdline */
	int cmdline_err;
	char cmd_msi[32], cmd_scalar[32], cmd_vector[32]; /* "" not given */
	bool have_msi, have_scalar, have_vector;
	/* riscv_hwprobe keys 9 and 10, all online CPUs */
	int scalar_err, vector_err;
	uint64_t scalar, vector;
	/* the kernel log */
	int log_err;
	unsigned nlog;
	char log[REPORT_LOG_LINES][200];
	const char *log_src;           /* "/dev/kmsg", "syslog(2)" or NULL: not read */
	char log_why[160];             /* why no source could be read; "" read */
	/* the arm-smmu-v3 features lines of the log, with /sys/class/iommu */
	unsigned nsmmu;
	struct report_smmu smmu[REPORT_SMMUS];
};
/* report_smmu.c: a log record's text (an arm-smmu-v3 features line is
 * kept), the completion of each SMMU once everything is read, and their
 * output.  Switch: whether disable_msipolling can change the completion of
 * some SMMU here: 1 yes, 0 no (no SMMUv3, or none with MSI and coherency),
 * -1 unknown. */
void report_smmu_record(struct report_kernel *k, const char *text);
int report_smmu_syslog(struct report_kernel *k);
void report_smmu_decide(struct report_kernel *k);
int report_smmu_switch(const struct report_kernel *k, char *why, size_t len);
void report_smmu_json(struct json *j, const struct report_kernel *k);
void report_smmu_human(FILE *f, const struct report_kernel *k);
void report_smmu_prom(FILE *f, const struct report_kernel *k);
void report_kernel_read(struct report_kernel *k);
void report_kernel_json(struct json *j, const struct report_kernel *k);
void report_kernel_human(FILE *f, const struct report_kernel *k);
/* Whether an arm-smmu-v3 device is registered. */
bool report_kernel_smmu(const struct report_kernel *k);

/* Progress on stderr: only when it is a terminal and the run has taken
 * over a second; report_progress_end() clears the line. */
struct report_progress {
	const char *what;
	uint64_t t0;
	bool shown;
};
void report_progress_start(struct report_progress *p, const char *what);
void report_progress_cmdq(unsigned done, unsigned total, void *arg);
void report_progress_end(struct report_progress *p);

/* Prometheus text exposition; r or c may be NULL (not measured). */
struct report_prom {
	const struct report_machine *m;
	const struct hwt_misaligned_report *probe;
	const struct cmdq_report *cmdq;
	const struct report_kernel *k;
};
void report_prom(FILE *f, const struct report_prom *p);
/* # HELP and # TYPE (gauge) lines; a label value, quoted and escaped. */
void report_prom_head(FILE *f, const char *name, const char *help);
void report_prom_label(FILE *f, const char *value);

#endif
