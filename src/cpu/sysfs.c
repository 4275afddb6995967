/* SPDX-License-Identifier: MIT */
/* Online CPUs and SMT siblings from sysfs, under a root that tests can fake. */
#include "common/file.h"
#include "hwtune/cpu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_ROOT "/sys/devices/system/cpu"
/* A list of 65536 scattered CPUs needs ~360 KiB; anything bigger is not sysfs. */
#define MAX_FILE (1u << 20)

static int make_path(char *buf, const char *root, const char *fmt, int cpu)
{
	char tail[64];
	int k;

	snprintf(tail, sizeof(tail), fmt, cpu);
	k = snprintf(buf, PATH_MAX, "%s/%s", root ? root : DEFAULT_ROOT, tail);
	return k >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Whole file as a string without trailing whitespace; caller frees *text. */
static int read_text(const char *path, char **text)
{
	size_t n;
	int r = hwt__read_file(path, MAX_FILE, text, &n);

	if (r)
		return r;
	while (n && ((*text)[n - 1] == '\n' || (*text)[n - 1] == ' ' || (*text)[n - 1] == '\t'))
		n--;
	(*text)[n] = '\0';
	return 0;
}

static int read_list(const char *path, struct hwt_cpus *out)
{
	char *text;
	int r = read_text(path, &text);

	if (r)
		return r;
	r = hwt_cpus_parse(text, out);
	free(text);
	return r;
}

/* "cpu" followed by a plain decimal number, as the kernel names CPU devices. */
static int cpu_dir_number(const char *name)
{
	int v = 0;

	if (strncmp(name, "cpu", 3) != 0 || name[3] == '\0')
		return -1;
	for (name += 3; *name; name++) {
		if (*name < '0' || *name > '9')
			return -1;
		v = v * 10 + (*name - '0');
		if (v > HWT_CPU_ID_MAX)
			return -1;
	}
	return v;
}

/* Without <root>/online, count cpuN directories whose cpuN/online is not "0"
 * (a CPU that cannot be unplugged, often cpu0, has no online file). */
static int scan_online(const char *root, struct hwt_cpus *out)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int r;

	r = make_path(path, root, ".", 0);
	if (r)
		return r;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (r == 0 && (de = readdir(dir)) != NULL) {
		int cpu = cpu_dir_number(de->d_name);
		char *text;

		if (cpu < 0)
			continue;
		r = make_path(path, root, "cpu%d/online", cpu);
		if (r)
			break;
		r = read_text(path, &text);
		if (r == -ENOENT) {
			r = hwt_cpus_add(out, cpu);
			continue;
		}
		if (r)
			break;
		if (strcmp(text, "0") != 0)
			r = hwt_cpus_add(out, cpu);
		free(text);
	}
	closedir(dir);
	return r;
}

HWT_API int hwt_cpu_online(const char *sysfs_root, struct hwt_cpus *out)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char path[PATH_MAX];
	int r;

	if (!out)
		return -EINVAL;
	r = make_path(path, sysfs_root, "online", 0);
	if (r)
		return r;
	r = read_list(path, &set);
	if (r == -ENOENT)
		r = scan_online(sysfs_root, &set);
	if (r == 0 && set.n == 0)
		r = -ENOENT; /* no CPU at all: not a CPU sysfs directory */
	if (r) {
		hwt_cpus_free(&set);
		return r;
	}
	hwt_cpus_free(out);
	*out = set;
	return 0;
}

HWT_API int hwt_cpu_smt_siblings(const char *sysfs_root, int cpu, struct hwt_cpus *out)
{
	/* core_cpus_list is the newer name; older kernels only have the first. */
	static const char *const files[] = { "cpu%d/topology/thread_siblings_list",
					     "cpu%d/topology/core_cpus_list" };
	struct hwt_cpus set = HWT_CPUS_INIT;
	char path[PATH_MAX];
	int r = -ENOENT;

	if (!out || cpu < 0 || cpu > HWT_CPU_ID_MAX)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && r == -ENOENT; i++) {
		r = make_path(path, sysfs_root, files[i], cpu);
		if (r == 0)
			r = read_list(path, &set);
	}
	if (r == -ENOENT) {
		/* No topology (e.g. the CPU is offline): alone, if the CPU exists. */
		r = make_path(path, sysfs_root, "cpu%d", cpu);
		if (r == 0 && access(path, F_OK) != 0)
			r = -errno;
	}
	/* The CPU is its own sibling even if the file omitted it. */
	if (r == 0)
		r = hwt_cpus_add(&set, cpu);
	if (r) {
		hwt_cpus_free(&set);
		return r;
	}
	hwt_cpus_free(out);
	*out = set;
	return 0;
}
