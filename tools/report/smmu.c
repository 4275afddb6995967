/* SPDX-License-Identifier: MIT */
/*
 * The CMD_SYNC completion the kernel's arm-smmu-v3 driver really uses, per
 * SMMU.  The driver logs each SMMU's feature word once it has probed it:
 *
 *   arm-smmu-v3 9050000.smmuv3: ias 44-bit, oas 44-bit (features 0x00008305)
 *
 * and polls CMD_SYNC completion by MSI only when the SMMU advertises MSI
 * (ARM_SMMU_FEAT_MSI, bit 7) and coherent accesses (ARM_SMMU_FEAT_COHERENCY,
 * bit 8) and disable_msipolling is off; otherwise it polls CONS (with
 * wake-ups by event where ARM_SMMU_FEAT_SEV, bit 6, is set).  So
 * disable_msipolling can change nothing on an SMMU without MSI or coherency.
 */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FEAT_SEV (1u << 6)
#define FEAT_MSI (1u << 7)
#define FEAT_COHERENCY (1u << 8)
#define LOG_PREFIX "arm-smmu-v3 "
#define FEATURES "(features 0x"

static struct report_smmu *find(struct report_kernel *k, const char *name)
{
	for (unsigned i = 0; i < k->nsmmu; i++)
		if (!strcmp(k->smmu[i].name, name))
			return &k->smmu[i];
	if (k->nsmmu == REPORT_SMMUS)
		return NULL; /* more SMMUs than kept: the rest are left out */
	snprintf(k->smmu[k->nsmmu].name, sizeof(k->smmu[0].name), "%s", name);
	return &k->smmu[k->nsmmu++];
}

void report_smmu_record(struct report_kernel *k, const char *text)
{
	const char *f = strstr(text, FEATURES), *dev = text + strlen(LOG_PREFIX);
	size_t n = strcspn(dev, ": ");
	struct report_smmu *s;
	char name[64], *end;
	unsigned long v;

	if (strncmp(text, LOG_PREFIX, strlen(LOG_PREFIX)) || !f || !n || dev[n] != ':' ||
	    n >= sizeof(name))
		return;
	errno = 0;
	v = strtoul(f + strlen(FEATURES), &end, 16);
	if (errno || *end != ')' || v > UINT32_MAX)
		return;
	snprintf(name, sizeof(name), "%.*s", (int)n, dev);
	s = find(k, name);
	if (s) /* a later line (a re-probe) wins */
		s->have_features = true, s->features = (uint32_t)v;
}

/* The device behind /sys/class/iommu/NAME (the basename of its device
 * link: the name the driver logs under), or NAME itself. */
static void iommu_device(const char *iommu, char *out, size_t len)
{
	char rel[256], path[600], link[256];
	const char *base;
	ssize_t n;

	snprintf(rel, sizeof(rel), "/sys/class/iommu/%.63s/device", iommu);
	report_path(path, sizeof(path), rel);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0) {
		snprintf(out, len, "%.63s", iommu);
		return;
	}
	link[n] = 0;
	base = strrchr(link, '/');
	snprintf(out, len, "%.63s", base ? base + 1 : link);
}

static void decide_one(const struct report_kernel *k, struct report_smmu *s)
{
	uint32_t f = s->features;

	s->completion = REPORT_UNKNOWN;
	if (!s->have_features && !k->log_src)
		snprintf(s->reason, sizeof(s->reason), "unknown: the kernel log is not readable (%.160s)",
			 k->log_why);
	else if (!s->have_features)
		snprintf(s->reason, sizeof(s->reason), "unknown: no features line for it in the "
			 "kernel log (%s; the log may have wrapped)", k->log_src);
	else if (!(f & FEAT_MSI))
		s->completion = REPORT_CONS,
		snprintf(s->reason, sizeof(s->reason), "CONS polling: this SMMU does not advertise "
			 "MSI (features 0x%08x); disable_msipolling changes nothing here", f);
	else if (!(f & FEAT_COHERENCY))
		s->completion = REPORT_CONS,
		snprintf(s->reason, sizeof(s->reason), "CONS polling: this SMMU has MSI but no "
			 "coherent accesses (features 0x%08x); disable_msipolling changes nothing here",
			 f);
	else if (k->msi_err)
		snprintf(s->reason, sizeof(s->reason), "unknown: MSI and coherent (features 0x%08x), "
			 "but disable_msipolling is not readable: %.160s", f, k->msi_why);
	else if (k->msi_value)
		s->completion = REPORT_CONS,
		snprintf(s->reason, sizeof(s->reason), "CONS polling (disable_msipolling=Y; "
			 "MSI and coherent, features 0x%08x)", f);
	else
		s->completion = REPORT_MSI,
		snprintf(s->reason, sizeof(s->reason), "MSI polling (MSI, coherent, "
			 "disable_msipolling=N; features 0x%08x)", f);
}

void report_smmu_decide(struct report_kernel *k)
{
	/* every arm-smmu-v3 entry of /sys/class/iommu, matched to its log line */
	for (const char *p = k->smmus; *p;) {
		size_t n = strcspn(p, ",");
		char iommu[64], dev[64];
		struct report_smmu *s;

		snprintf(iommu, sizeof(iommu), "%.*s", (int)n, p);
		p += n + (p[n] == ',');
		iommu_device(iommu, dev, sizeof(dev));
		s = find(k, dev);
		if (s)
			snprintf(s->iommu, sizeof(s->iommu), "%s", iommu);
	}
	for (unsigned i = 0; i < k->nsmmu; i++)
		decide_one(k, &k->smmu[i]);
}

int report_smmu_switch(const struct report_kernel *k, char *why, size_t len)
{
	bool unknown = false;

	for (unsigned i = 0; i < k->nsmmu; i++) {
		const struct report_smmu *s = &k->smmu[i];

		if (s->have_features && (s->features & FEAT_MSI) && (s->features & FEAT_COHERENCY)) {
			snprintf(why, len, "SMMU %s has MSI and coherency: the kernel's disable_msipolling "
				 "chooses its CMD_SYNC completion (now %s polling); to measure it, boot with "
				 "and without arm_smmu_v3.disable_msipolling=1 and compare a DMA-heavy "
				 "workload behind it (fio on NVMe, iperf3 on a NIC)", s->name,
				 s->completion == REPORT_MSI ? "MSI" : s->completion == REPORT_CONS ? "CONS"
								   : "unknown");
			return 1;
		}
		unknown |= !s->have_features;
	}
	if (unknown) {
		snprintf(why, len, "an SMMUv3 is present but its features are unknown (%s)",
			 k->log_src ? "no features line in the kernel log" : k->log_why);
		return -1;
	}
	if (k->nsmmu) {
		snprintf(why, len, "no SMMUv3 here advertises MSI with coherency: the kernel polls "
			 "CONS whatever disable_msipolling says; it changes nothing here");
		return 0;
	}
	if (k->iommu_err && k->iommu_err != -ENOENT) {
		snprintf(why, len, "whether an SMMUv3 is present is unknown (/sys/class/iommu: %s)",
			 strerror(-k->iommu_err));
		return -1;
	}
	snprintf(why, len, "no SMMUv3 here: the kernel's disable_msipolling does not apply "
		 "(there is nothing to set)");
	return 0;
}

static void opt_bit(struct json *j, const char *key, const struct report_smmu *s, uint32_t bit)
{
	json_key(j, key);
	if (s->have_features)
		json_bool(j, (s->features & bit) != 0);
	else
		json_null(j);
}

/* The value of kernel.smmuv3.smmus: one object per SMMU. */
void report_smmu_json(struct json *j, const struct report_kernel *k)
{
	static const char *const mode[] = { "cons", "msi" };

	json_arr(j);
	for (unsigned i = 0; i < k->nsmmu; i++) {
		const struct report_smmu *s = &k->smmu[i];
		char hex[16];

		json_nl(j, "      ");
		json_obj(j);
		json_key(j, "name"), json_str(j, s->name);
		json_key(j, "iommu");
		if (s->iommu[0])
			json_str(j, s->iommu);
		else
			json_null(j);
		json_key(j, "features");
		snprintf(hex, sizeof(hex), "0x%08x", s->features);
		if (s->have_features)
			json_str(j, hex);
		else
			json_null(j);
		opt_bit(j, "msi", s, FEAT_MSI);
		opt_bit(j, "sev", s, FEAT_SEV);
		opt_bit(j, "coherent", s, FEAT_COHERENCY);
		json_key(j, "completion");
		if (s->completion == REPORT_UNKNOWN)
			json_null(j);
		else
			json_str(j, mode[s->completion]);
		json_key(j, "reason"), json_str(j, s->reason);
		json_close(j);
	}
	json_close(j);
}

void report_smmu_human(FILE *f, const struct report_kernel *k)
{
	for (unsigned i = 0; i < k->nsmmu; i++) {
		const struct report_smmu *s = &k->smmu[i];

		bool other = s->iommu[0] && strcmp(s->iommu, s->name);

		fprintf(f, "  SMMUv3 %s%s%s%s: %s\n", s->name, other ? " (" : "", other ? s->iommu : "",
			other ? ")" : "", s->reason);
	}
}

void report_smmu_prom(FILE *f, const struct report_kernel *k)
{
	static const char *const feat[3] = { "msi", "sev", "coherent" };
	static const uint32_t bit[3] = { FEAT_MSI, FEAT_SEV, FEAT_COHERENCY };
	char why[200];
	int sw = report_smmu_switch(k, why, sizeof(why));
	bool any = false;

	for (unsigned i = 0; i < k->nsmmu; i++)
		any |= k->smmu[i].have_features;
	if (any) {
		report_prom_head(f, "hwtune_kernel_smmuv3_feature",
			  "an SMMU's feature from the kernel log (1: advertised)");
		for (unsigned i = 0; i < k->nsmmu; i++)
			for (int b = 0; b < 3 && k->smmu[i].have_features; b++) {
				fputs("hwtune_kernel_smmuv3_feature{", f);
				fputs("smmu=", f);
				report_prom_label(f, k->smmu[i].name);
				fprintf(f, ",feature=\"%s\"} %d\n", feat[b],
					(k->smmu[i].features & bit[b]) != 0);
			}
		report_prom_head(f, "hwtune_kernel_smmuv3_msi_polling",
			  "the CMD_SYNC completion the kernel uses on this SMMU (1: MSI polling, "
			  "0: CONS polling; absent: unknown)");
		for (unsigned i = 0; i < k->nsmmu; i++) {
			if (k->smmu[i].completion == REPORT_UNKNOWN)
				continue;
			fputs("hwtune_kernel_smmuv3_msi_polling{", f);
			fputs("smmu=", f);
			report_prom_label(f, k->smmu[i].name);
			fprintf(f, "} %d\n", k->smmu[i].completion == REPORT_MSI);
		}
	}
	if (sw >= 0) {
		report_prom_head(f, "hwtune_kernel_msipolling_switch_applies",
			  "1: disable_msipolling can change some SMMU's CMD_SYNC completion here; "
			  "0: it changes nothing (no SMMUv3, or none with MSI and coherency)");
		fprintf(f, "hwtune_kernel_msipolling_switch_applies %d\n", sw);
	}
}
