/* SPDX-License-Identifier: MIT */
/* The machine the report was made on: architecture, CPU models, CPUs, kernel. */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

const char *report_root(void)
{
	const char *r = getenv("HWTUNE_ROOT");

	return r ? r : "";
}

void report_path(char *buf, size_t len, const char *path)
{
	snprintf(buf, len, "%s%s", report_root(), path);
}

int report_read_line(const char *path, char *buf, size_t len)
{
	char full[512];
	FILE *f;
	int err = 0;

	report_path(full, sizeof(full), path);
	buf[0] = 0;
	f = fopen(full, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = ferror(f) ? -(errno ? errno : EIO) : 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return err;
}

static void add_model(struct report_machine *m, const char *s)
{
	for (unsigned i = 0; i < m->nmodels; i++)
		if (!strcmp(m->models[i], s))
			return;
	if (m->nmodels < REPORT_MODELS)
		snprintf(m->models[m->nmodels++], sizeof(m->models[0]), "%s", s);
}

/* "key\t: value" -> value, or NULL if line is not key. */
static const char *cpuinfo_value(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || (line[n] != ' ' && line[n] != '\t' && line[n] != ':'))
		return NULL;
	line = strchr(line, ':');
	if (!line)
		return NULL;
	line++;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* Models from /proc/cpuinfo: x86 "model name", riscv "uarch" (else "isa"),
 * arm64 "CPU implementer" + "CPU part"; the x86 hypervisor and misalignsse
 * flags (AMD: misaligned SSE allowed; the first CPU's flags line). */
static void read_cpuinfo(struct report_machine *m, bool *hv_flag)
{
	char path[512], line[4096], impl[32] = "", model[128];
	const char *v;
	FILE *f;

	report_path(path, sizeof(path), "/proc/cpuinfo");
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if ((v = cpuinfo_value(line, "model name")) || (v = cpuinfo_value(line, "uarch"))) {
			add_model(m, v);
		} else if ((v = cpuinfo_value(line, "CPU implementer"))) {
			snprintf(impl, sizeof(impl), "%s", v);
		} else if ((v = cpuinfo_value(line, "CPU part"))) {
			snprintf(model, sizeof(model), "implementer %s part %s", impl, v);
			add_model(m, model);
		} else if ((v = cpuinfo_value(line, "flags"))) {
			char padded[4100];

			snprintf(padded, sizeof(padded), " %s ", v);
			if (strstr(padded, " hypervisor "))
				*hv_flag = true;
			if (m->misalignsse < 0)
				m->misalignsse = strstr(padded, " misalignsse ") != NULL;
		}
	}
	fclose(f);
}

void report_machine_read(struct report_machine *m)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct utsname u;
	bool hv_flag = false;
	char buf[64];

	memset(m, 0, sizeof(*m));
	m->misalignsse = -1;
	if (!uname(&u)) {
		snprintf(m->arch, sizeof(m->arch), "%.31s", u.machine);
		snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
	}
	/* under HWTUNE_ROOT the fake tree's release wins */
	if (report_root()[0] && !report_read_line("/proc/sys/kernel/osrelease", buf, sizeof(buf)))
		snprintf(m->kernel, sizeof(m->kernel), "%s", buf);
	read_cpuinfo(m, &hv_flag);
	/* The CPUID signature names it (x86_64, on this machine only: a fake
	 * tree has no CPUID); else Xen's sysfs, the DMI vendor, the flag. */
	if (!report_root()[0] && !hwt_cpu_hypervisor(m->hypervisor, sizeof(m->hypervisor)))
		;
	else if (!report_read_line("/sys/hypervisor/type", buf, sizeof(buf)) && buf[0])
		snprintf(m->hypervisor, sizeof(m->hypervisor), "%s", buf);
	else if (!report_read_line("/sys/class/dmi/id/sys_vendor", buf, sizeof(buf)) && hv_flag)
		snprintf(m->hypervisor, sizeof(m->hypervisor), "%s", buf);
	else if (hv_flag)
		snprintf(m->hypervisor, sizeof(m->hypervisor), "yes (cpuinfo flag; type unknown)");
	if (!hwt_cpu_allowed(&set) && hwt_cpus_format(&set, m->allowed, sizeof(m->allowed)) < 0)
		m->allowed[0] = 0;
	hwt_cpus_free(&set);
	report_read_line("/sys/devices/system/cpu/online", m->online, sizeof(m->online));
}

static void str_or_null(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	if (s[0])
		json_str(j, s);
	else
		json_null(j);
}

void report_machine_json(struct json *j, const struct report_machine *m)
{
	json_obj(j);
	str_or_null(j, "arch", m->arch);
	str_or_null(j, "kernel", m->kernel);
	str_or_null(j, "hypervisor", m->hypervisor);
	str_or_null(j, "cpus_allowed", m->allowed);
	str_or_null(j, "cpus_online", m->online);
	json_key(j, "misalignsse");
	if (m->misalignsse < 0)
		json_null(j);
	else
		json_bool(j, m->misalignsse);
	json_key(j, "cpu_models");
	json_arr(j);
	for (unsigned i = 0; i < m->nmodels; i++)
		json_str(j, m->models[i]);
	json_close(j);
	json_close(j);
}

void report_machine_human(FILE *f, const struct report_machine *m)
{
	fprintf(f, "  %s, Linux %s, CPUs allowed %s (online %s)%s%s\n",
		m->arch[0] ? m->arch : "?", m->kernel[0] ? m->kernel : "?",
		m->allowed[0] ? m->allowed : "?", m->online[0] ? m->online : "?",
		m->hypervisor[0] ? ", hypervisor: " : "", m->hypervisor);
	for (unsigned i = 0; i < m->nmodels; i++)
		fprintf(f, "  CPU model: %s\n", m->models[i]);
	if (m->misalignsse > 0)
		fprintf(f, "  CPU flag misalignsse: misaligned SSE allowed (no #GP on unaligned "
			   "16-byte SSE operands)\n");
}
