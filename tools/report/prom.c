/* SPDX-License-Identifier: MIT */
/*
 * Progress lines on a terminal, and the Prometheus text exposition format
 * (node_exporter's textfile collector): # HELP and # TYPE before each
 * metric's samples, `name{label="value",...} value` per sample.
 */
#include "report/report.h"

#include <string.h>
#include <unistd.h>

#include "prog/sys.h"

void report_progress_start(struct report_progress *p, const char *what)
{
	p->what = what;
	p->t0 = util_now_ns();
	p->shown = false;
}

void report_progress_cmdq(unsigned done, unsigned total, void *arg)
{
	struct report_progress *p = arg;

	if (!isatty(STDERR_FILENO) || util_now_ns() - p->t0 < 1000000000u)
		return;
	fprintf(stderr, "hwtune: %s round %u/%u\r", p->what, done, total);
	fflush(stderr);
	p->shown = true;
}

void report_progress_end(struct report_progress *p)
{
	if (p->shown)
		fprintf(stderr, "%-40s\r", "");
	p->shown = false;
}

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void head(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void report_prom_head(FILE *f, const char *name, const char *help)
{
	head(f, name, help);
}

void report_prom_label(FILE *f, const char *value)
{
	label(f, value);
}

void report_prom(FILE *f, const struct report_prom *p)
{
	const struct hwt_misaligned_report *r = p->probe;
	const struct cmdq_report *c = p->cmdq;

	head(f, "hwtune_info", "hwtune's version, the architecture and the kernel release (always 1)");
	fprintf(f, "hwtune_info{version=");
	label(f, hwt_version());
	fprintf(f, ",arch=");
	label(f, p->m->arch);
	fprintf(f, ",kernel=");
	label(f, p->m->kernel);
	fprintf(f, "} 1\n");

	if (r) {
		head(f, "hwtune_misaligned_speed",
		     "misaligned word access speed per CPU as riscv_hwprobe's value: unknown 0, "
		     "emulated 1, slow 2, fast 3, unsupported 4");
		for (unsigned i = 0; i < r->n; i++)
			fprintf(f, "hwtune_misaligned_speed{cpu=\"%d\"} %d\n", r->cpu[i].cpu,
				r->cpu[i].speed);
		head(f, "hwtune_misaligned_ratio",
		     "byte copy time over misaligned word copy time per CPU (over 1: words faster; "
		     "0: not measured)");
		for (unsigned i = 0; i < r->n; i++)
			fprintf(f, "hwtune_misaligned_ratio{cpu=\"%d\"} %u.%02u\n", r->cpu[i].cpu,
				r->cpu[i].ratio_x100 / 100, r->cpu[i].ratio_x100 % 100);
		head(f, "hwtune_misaligned_summary",
		     "riscv_hwprobe's rule over the CPUs: their common speed, else unknown 0");
		fprintf(f, "hwtune_misaligned_summary %d\n", r->summary);
		head(f, "hwtune_misaligned_vector_speed",
		     "misaligned vector access speed per CPU and vector unit as riscv_hwprobe's "
		     "value: unknown 0, slow 2, fast 3, unsupported 4");
		for (unsigned i = 0; i < r->n; i++)
			for (unsigned u = 0; u < HWT_MISALIGNED_UNITS; u++) {
				const struct hwt_misaligned_vector *v =
					hwt_misaligned_cpu_unit(&r->cpu[i], u);

				if (v->unit)
					fprintf(f, "hwtune_misaligned_vector_speed{cpu=\"%d\",unit=\"%s\"} %d\n",
						r->cpu[i].cpu, v->unit, v->speed);
			}
		head(f, "hwtune_misaligned_vector_ratio",
		     "byte copy time over misaligned vector copy time per CPU and vector unit "
		     "(0: not measured)");
		for (unsigned i = 0; i < r->n; i++)
			for (unsigned u = 0; u < HWT_MISALIGNED_UNITS; u++) {
				const struct hwt_misaligned_vector *v =
					hwt_misaligned_cpu_unit(&r->cpu[i], u);

				if (v->unit)
					fprintf(f, "hwtune_misaligned_vector_ratio{cpu=\"%d\",unit=\"%s\"} %u.%02u\n",
						r->cpu[i].cpu, v->unit, v->ratio_x100 / 100,
						v->ratio_x100 % 100);
			}
		head(f, "hwtune_misaligned_split_ratio",
		     "time of a word access that splits a cache line or a page over the aligned "
		     "access, per CPU and kind (only the kinds measured)");
		for (unsigned i = 0; i < r->n; i++) {
			const struct hwt_misaligned_split *sp = &r->cpu[i].split;
			const unsigned val[4] = { sp->line_load, sp->line_store, sp->page_load,
						  sp->page_store };
			static const char *const kind[4] = { "line_load", "line_store", "page_load",
							     "page_store" };

			for (int k = 0; k < 4; k++)
				if (val[k])
					fprintf(f, "hwtune_misaligned_split_ratio{cpu=\"%d\",kind=\"%s\"} %u.%02u\n",
						r->cpu[i].cpu, kind[k], val[k] / 100, val[k] % 100);
		}
		head(f, "hwtune_misaligned_vector_summary",
		     "riscv_hwprobe's rule over the CPUs' main vector unit: their common speed, else "
		     "unknown 0");
		fprintf(f, "hwtune_misaligned_vector_summary %d\n", r->vector_summary);
		head(f, "hwtune_misaligned_probe_seconds", "wall time of the probe, seconds");
		fprintf(f, "hwtune_misaligned_probe_seconds %.6f\n", r->wall_ns / 1e9);
	}

	if (c) {
		const struct hwt_cmdq_info *qi;

		head(f, "hwtune_cmdq_sync_ns",
		     "empty-queue CMD_SYNC latency of hwtune's queue and software SMMU per completion "
		     "mode, ns (not a hardware SMMU)");
		for (int m = 0; m < CMDQ_MODES; m++) {
			if (!c->o.mode[m])
				continue;
			fprintf(f, "hwtune_cmdq_sync_ns{poll=\"%s\",quantile=\"0.5\"} %llu\n",
				cmdq_mode_name[m], (unsigned long long)c->m[m].lat.p50);
			fprintf(f, "hwtune_cmdq_sync_ns{poll=\"%s\",quantile=\"0.99\"} %llu\n",
				cmdq_mode_name[m], (unsigned long long)c->m[m].lat.p99);
		}
		head(f, "hwtune_cmdq_floor_ns",
		     "cache-line round trip between the producer's and the device's CPU, ns");
		fprintf(f, "hwtune_cmdq_floor_ns{quantile=\"0.5\"} %llu\n",
			(unsigned long long)c->floor.p50);
		fprintf(f, "hwtune_cmdq_floor_ns{quantile=\"0.99\"} %llu\n",
			(unsigned long long)c->floor.p99);
		head(f, "hwtune_cmdq_rounds", "interleaved measurement rounds behind the comparison");
		fprintf(f, "hwtune_cmdq_rounds %u\n", c->rounds);
		/* every measured queue has the same options: the first one's info */
		qi = &c->m[c->o.mode[CMDQ_MSI] ? CMDQ_MSI : CMDQ_SEV].qinfo;
		head(f, "hwtune_cmdq_queues", "command queues of each measured device");
		fprintf(f, "hwtune_cmdq_queues %u\n", qi->queues);
		head(f, "hwtune_cmdq_insert_path_info",
		     "how producers insert: path rseq (per-CPU queues, no locked instruction) or "
		     "shared (lock-free multi-producer), and why (always 1)");
		fprintf(f, "hwtune_cmdq_insert_path_info{path=");
		label(f, qi->insert_path);
		fprintf(f, ",reason=");
		label(f, qi->insert_path_reason);
		fprintf(f, "} 1\n");
		if (c->o.mode[CMDQ_MSI] && c->o.mode[CMDQ_SEV]) {
			char reco[400];
			bool disable = cmdq_recommend(c, reco, sizeof(reco));

			head(f, "hwtune_cmdq_model_verdict",
			     "hwtune's software model: 1 MSI polling faster, 2 CONS polling faster, "
			     "0 no difference, -1 inconclusive (rounds disagree)");
			fprintf(f, "hwtune_cmdq_model_verdict %d\n", c->inconclusive ? -1 : c->faster + 1);
			/* a kernel parameter only where it can change something */
			if (!p->k || report_smmu_switch(p->k, reco, sizeof(reco)) != 0) {
				head(f, "hwtune_recommend_disable_msipolling",
				     "1: CONS polling was faster in hwtune's model (disable_msipolling=1), "
				     "0: keep MSI polling; only where the kernel's switch can matter");
				fprintf(f, "hwtune_recommend_disable_msipolling %d\n", disable ? 1 : 0);
			}
		}
	}

	if (p->k) {
		head(f, "hwtune_kernel_smmuv3_present", "1 if an arm-smmu-v3 IOMMU is registered");
		fprintf(f, "hwtune_kernel_smmuv3_present %d\n", report_kernel_smmu(p->k) ? 1 : 0);
		if (!p->k->msi_err) {
			head(f, "hwtune_kernel_disable_msipolling",
			     "the arm_smmu_v3 module's disable_msipolling parameter (1: Y)");
			fprintf(f, "hwtune_kernel_disable_msipolling %d\n", p->k->msi_value ? 1 : 0);
		}
		report_smmu_prom(f, p->k);
	}
}
