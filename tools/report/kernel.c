/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own settings beside hwtune's measurement: the arm_smmu_v3
 * module's disable_msipolling, the registered IOMMUs (an SMMUv3?), the boot
 * parameters, riscv_hwprobe's misaligned answers and the kernel's probe
 * lines in its log.  Each part says "not available here: <reason>" when it
 * cannot be read.
 */
#include "report/report.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/klog.h>
#include <unistd.h>

#include "prog/sys.h"

#define MSI_PARAM "/sys/module/arm_smmu_v3/parameters/disable_msipolling"
#define MODULE_DIR "/sys/module/arm_smmu_v3"
#define IOMMU_DIR "/sys/class/iommu"
#define KMSG "/dev/kmsg"
#define KMSG_MAX_RECORDS 100000u /* bounded: a huge log is cut, not waited for */
#define KMSG_MAX_NS 200000000u   /* 200 ms */

static void read_msi(struct report_kernel *k)
{
	char buf[32], path[512];
	int err = report_read_line(MSI_PARAM, buf, sizeof(buf));

	report_path(path, sizeof(path), MODULE_DIR);
	k->module_loaded = access(path, F_OK) == 0;
	k->msi_err = err;
	if (!err && (buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1')) {
		k->msi_value = true;
	} else if (!err && (buf[0] == 'N' || buf[0] == 'n' || buf[0] == '0')) {
		k->msi_value = false;
	} else if (!err) {
		k->msi_err = -EINVAL;
		snprintf(k->msi_why, sizeof(k->msi_why), "unexpected value '%.20s' in %s", buf,
			 MSI_PARAM);
	} else if (err == -ENOENT && !k->module_loaded) {
		snprintf(k->msi_why, sizeof(k->msi_why),
			 "the arm_smmu_v3 driver is not loaded (no %s)", MODULE_DIR);
	} else if (err == -ENOENT) {
		snprintf(k->msi_why, sizeof(k->msi_why),
			 "arm_smmu_v3 is loaded but has no disable_msipolling parameter (older kernel)");
	} else {
		snprintf(k->msi_why, sizeof(k->msi_why), "%s: %s", MSI_PARAM, strerror(-err));
	}
}

static void append(char *list, size_t len, const char *name)
{
	size_t n = strlen(list);

	snprintf(list + n, len - n, "%s%s", n ? "," : "", name);
}

/* An arm-smmu-v3 instance: named smmu3.0x... by the driver, or whose
 * device is bound to the arm-smmu-v3 driver. */
static bool is_smmuv3(const char *name)
{
	char rel[512], path[600], link[256];
	ssize_t n;
	const char *base;

	if (!strncmp(name, "smmu3.", 6))
		return true;
	snprintf(rel, sizeof(rel), IOMMU_DIR "/%s/device/driver", name);
	report_path(path, sizeof(path), rel);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	base = strrchr(link, '/');
	return !strcmp(base ? base + 1 : link, "arm-smmu-v3");
}

static void read_iommu(struct report_kernel *k)
{
	char path[512];
	struct dirent *e;
	DIR *d;

	report_path(path, sizeof(path), IOMMU_DIR);
	d = opendir(path);
	if (!d) {
		k->iommu_err = -errno;
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		append(k->iommus, sizeof(k->iommus), e->d_name);
		if (is_smmuv3(e->d_name))
			append(k->smmus, sizeof(k->smmus), e->d_name);
	}
	closedir(d);
}

bool report_kernel_smmu(const struct report_kernel *k)
{
	return k->smmus[0] != 0;
}

/* The value of word "name=" on the command line (the last one wins, as in
 * the kernel's parser). */
static bool cmdline_word(const char *cmd, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	bool found = false;

	for (const char *p = cmd; *p;) {
		size_t w;

		while (*p == ' ' || *p == '\t')
			p++;
		w = strcspn(p, " \t");
		if (!strncmp(p, "--", 2) && w == 2)
			break; /* what follows goes to init */
		if (w > n && !strncmp(p, name, n)) {
			snprintf(out, len, "%.*s", (int)(w - n), p + n);
			found = true;
		}
		p += w;
	}
	return found;
}

static void read_cmdline(struct report_kernel *k)
{
	char cmd[4096];

	k->cmdline_err = report_read_line("/proc/cmdline", cmd, sizeof(cmd));
	if (k->cmdline_err)
		return;
	k->have_msi = cmdline_word(cmd, "arm_smmu_v3.disable_msipolling=", k->cmd_msi,
				   sizeof(k->cmd_msi));
	k->have_scalar = cmdline_word(cmd, "unaligned_scalar_speed=", k->cmd_scalar,
				      sizeof(k->cmd_scalar));
	k->have_vector = cmdline_word(cmd, "unaligned_vector_speed=", k->cmd_vector,
				      sizeof(k->cmd_vector));
}

static bool log_line_wanted(const char *s)
{
	return strcasestr(s, "misaligned") || strcasestr(s, "unaligned") ||
	       strcasestr(s, "disable_msipolling") || strcasestr(s, "msi polling");
}

/* One record's text: "pri,seq,ts,flags;text" (continuation lines, which
 * start with a blank, are skipped by the caller). */
static void take_text(struct report_kernel *k, const char *text)
{
	report_smmu_record(k, text);
	if (!log_line_wanted(text))
		return;
	if (k->nlog == REPORT_LOG_LINES) { /* keep the newest */
		memmove(k->log[0], k->log[1], sizeof(k->log[0]) * (REPORT_LOG_LINES - 1));
		k->nlog--;
	}
	snprintf(k->log[k->nlog++], sizeof(k->log[0]), "%s", text);
}

static void take_record(struct report_kernel *k, const char *rec)
{
	const char *text = strchr(rec, ';');

	if (text)
		take_text(k, text + 1);
}

/* dmesg's other source, syslog(2), where /dev/kmsg cannot be read (the real
 * root only: a test tree never reads the machine's log).  Its lines are
 * "<pri>[seconds] text", or "<pri>text" without printk times. */
static int read_syslog(struct report_kernel *k)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), n;
	char *buf;

	if (size <= 0)
		return size < 0 ? -errno : -ENODATA;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return -ENOMEM;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0) {
		n = -errno;
		free(buf);
		return n;
	}
	buf[n] = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == '<' && strchr(line, '>'))
			line = strchr(line, '>') + 1;
		if (line[0] == '[' && strchr(line, ']'))
			line = strchr(line, ']') + 1 + (strchr(line, ']')[1] == ' ');
		take_text(k, line);
	}
	free(buf);
	return 0;
}

static void read_log(struct report_kernel *k);

static void read_any_log(struct report_kernel *k)
{
	int err;

	read_log(k);
	if (!k->log_err) {
		k->log_src = KMSG;
		return;
	}
	snprintf(k->log_why, sizeof(k->log_why), KMSG ": %s", strerror(-k->log_err));
	if (report_root()[0])
		return;
	err = read_syslog(k);
	if (!err) {
		k->log_src = "syslog(2)";
		k->log_why[0] = 0;
		return;
	}
	snprintf(k->log_why + strlen(k->log_why), sizeof(k->log_why) - strlen(k->log_why),
		 "; syslog(2): %s", strerror(-err));
}

/* /dev/kmsg, non-blocking: each read() is one record there; a regular file
 * (a test tree) gives many at once, so split on newlines either way. */
static void read_log(struct report_kernel *k)
{
	char path[512], buf[8192 + 1];
	uint64_t t0 = util_now_ns();
	unsigned records = 0;
	int fd;

	report_path(path, sizeof(path), KMSG);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		k->log_err = -errno;
		return;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten while reading: go on */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			k->log_err = -errno;
		if (n <= 0)
			break;
		buf[n] = 0;
		for (char *line = buf, *next; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			if (!isspace((unsigned char)line[0]))
				take_record(k, line);
			records++;
		}
		if (records > KMSG_MAX_RECORDS || util_now_ns() - t0 > KMSG_MAX_NS)
			break;
	}
	close(fd);
}

void report_kernel_read(struct report_kernel *k)
{
	memset(k, 0, sizeof(*k));
	read_msi(k);
	read_iommu(k);
	read_cmdline(k);
	k->scalar_err = hwt_misaligned_hwprobe(-1, HWT_HWPROBE_MISALIGNED_SCALAR_PERF, &k->scalar);
	k->vector_err = hwt_misaligned_hwprobe(-1, HWT_HWPROBE_MISALIGNED_VECTOR_PERF, &k->vector);
	read_any_log(k);
	report_smmu_decide(k);
}

static const char *hwprobe_why(int err)
{
	switch (err) {
	case -ENOSYS:
		return "riscv_hwprobe does not exist (not riscv, an older kernel, or an emulator)";
	case -EOPNOTSUPP:
		return "the kernel does not know this key (older kernel)";
	default:
		return strerror(-err);
	}
}

static const char *speed_word(uint64_t v)
{
	const char *s = v <= 4 ? hwt_misaligned_speed_name((enum hwt_misaligned_speed)v) : NULL;

	return s ? s : "out of range";
}

static void note(struct json *j, const char *why)
{
	json_key(j, "note");
	if (why && why[0]) {
		char buf[300];

		snprintf(buf, sizeof(buf), "not available here: %s", why);
		json_str(j, buf);
	} else {
		json_null(j);
	}
}

static void opt_str(struct json *j, const char *key, bool have, const char *v)
{
	json_key(j, key);
	if (have)
		json_str(j, v);
	else
		json_null(j);
}


/* A comma-separated list of names as a JSON array of strings. */
static void json_name_list(struct json *j, const char *list)
{
	json_arr(j);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		json_str(j, name);
		p += n + (p[n] == ',');
	}
	json_close(j);
}
static void hwprobe_json(struct json *j, const char *key, int err, uint64_t v)
{
	json_key(j, key);
	if (err)
		json_null(j);
	else
		json_str(j, speed_word(v));
}

void report_kernel_json(struct json *j, const struct report_kernel *k)
{
	char why[300];

	json_obj(j);
	json_nl(j, "    ");
	json_key(j, "disable_msipolling");
	json_obj(j);
	json_key(j, "path"), json_str(j, MSI_PARAM);
	json_key(j, "module_loaded"), json_bool(j, k->module_loaded);
	json_key(j, "value");
	if (k->msi_err)
		json_null(j);
	else
		json_bool(j, k->msi_value);
	note(j, k->msi_why);
	json_close(j);

	json_nl(j, "    ");
	json_key(j, "smmuv3");
	json_obj(j);
	json_key(j, "present");
	if (k->iommu_err && k->iommu_err != -ENOENT)
		json_null(j);
	else
		json_bool(j, report_kernel_smmu(k));
	json_key(j, "devices");
	json_name_list(j, k->smmus);
	json_key(j, "iommus");
	json_name_list(j, k->iommus);
	json_key(j, "smmus");
	report_smmu_json(j, k);
	why[0] = 0;
	if (k->iommu_err && k->iommu_err != -ENOENT)
		snprintf(why, sizeof(why), IOMMU_DIR ": %s", strerror(-k->iommu_err));
	note(j, why);
	json_close(j);

	json_nl(j, "    ");
	json_key(j, "cmdline");
	json_obj(j);
	json_key(j, "read"), json_bool(j, !k->cmdline_err);
	opt_str(j, "disable_msipolling", k->have_msi, k->cmd_msi);
	opt_str(j, "unaligned_scalar_speed", k->have_scalar, k->cmd_scalar);
	opt_str(j, "unaligned_vector_speed", k->have_vector, k->cmd_vector);
	why[0] = 0;
	if (k->cmdline_err)
		snprintf(why, sizeof(why), "/proc/cmdline: %s", strerror(-k->cmdline_err));
	note(j, why);
	json_close(j);

	json_nl(j, "    ");
	json_key(j, "hwprobe");
	json_obj(j);
	hwprobe_json(j, "misaligned_scalar_perf", k->scalar_err, k->scalar);
	hwprobe_json(j, "misaligned_vector_perf", k->vector_err, k->vector);
	note(j, k->scalar_err ? hwprobe_why(k->scalar_err)
	     : k->vector_err ? hwprobe_why(k->vector_err) : NULL);
	json_close(j);

	json_nl(j, "    ");
	json_key(j, "log");
	json_obj(j);
	json_key(j, "lines");
	json_arr(j);
	for (unsigned i = 0; i < k->nlog; i++)
		json_str(j, k->log[i]);
	json_close(j);
	json_key(j, "source");
	if (k->log_src)
		json_str(j, k->log_src);
	else
		json_null(j);
	note(j, k->log_why);
	json_close(j);
	json_nl(j, "  ");
	json_close(j);
}

static void word_human(FILE *f, const char *name, bool have, const char *v, bool last)
{
	if (have)
		fprintf(f, "%s%s", name, v);
	else
		fprintf(f, "%s (not given)", name);
	fputs(last ? "\n" : ", ", f);
}

void report_kernel_human(FILE *f, const struct report_kernel *k)
{
	char why[200];

	if (k->msi_err)
		fprintf(f, "  disable_msipolling (arm_smmu_v3 parameter): not available here: %s\n",
			k->msi_why);
	else
		fprintf(f, "  disable_msipolling (arm_smmu_v3 parameter): %s (%s)\n",
			k->msi_value ? "Y" : "N",
			k->msi_value ? "CONS polling" : "MSI polling where the SMMU supports it");
	if (k->iommu_err == -ENOENT)
		fprintf(f, "  SMMUv3: none (no " IOMMU_DIR ": no IOMMU driver registered)\n");
	else if (k->iommu_err)
		fprintf(f, "  SMMUv3: not available here: " IOMMU_DIR ": %s\n",
			strerror(-k->iommu_err));
	else if (report_kernel_smmu(k))
		fprintf(f, "  SMMUv3: present (%s)\n", k->smmus);
	else
		fprintf(f, "  SMMUv3: none (IOMMUs: %s)\n", k->iommus[0] ? k->iommus : "none");
	report_smmu_human(f, k);
	if (k->cmdline_err) {
		fprintf(f, "  boot parameters: not available here: /proc/cmdline: %s\n",
			strerror(-k->cmdline_err));
	} else {
		fprintf(f, "  boot parameters: ");
		word_human(f, "arm_smmu_v3.disable_msipolling=", k->have_msi, k->cmd_msi, false);
		word_human(f, "unaligned_scalar_speed=", k->have_scalar, k->cmd_scalar, false);
		word_human(f, "unaligned_vector_speed=", k->have_vector, k->cmd_vector, true);
	}
	if (k->scalar_err)
		fprintf(f, "  riscv_hwprobe: not available here: %s\n", hwprobe_why(k->scalar_err));
	else
		fprintf(f, "  riscv_hwprobe: misaligned scalar %s, vector %s (all online CPUs)\n",
			speed_word(k->scalar), k->vector_err ? hwprobe_why(k->vector_err)
							     : speed_word(k->vector));
	if (!k->log_src)
		fprintf(f, "  kernel log: not available here: %s\n", k->log_why);
	else if (!k->nlog)
		fprintf(f, "  kernel log: no misaligned/unaligned or MSI-polling lines\n");
	for (unsigned i = 0; i < k->nlog; i++)
		fprintf(f, "  kernel log: %s\n", k->log[i]);
	fprintf(f, "  note: hwtune's CMD_SYNC comparison measures hwtune's own queue and software SMMU\n"
		   "        on these CPUs, not a hardware SMMU.\n");
	if (report_kernel_smmu(k) && report_smmu_switch(k, why, sizeof(why)) != 0)
		fprintf(f, "  to test the kernel's switch on this SMMUv3: boot with "
			   "arm_smmu_v3.disable_msipolling=1,\n"
			   "        and run a DMA-heavy workload behind the SMMU before and after "
			   "(e.g. fio on NVMe,\n        iperf3 on a NIC); compare throughput and "
			   "latency.\n");
}
