/* SPDX-License-Identifier: MIT */
/*
 * What kind of core each CPU is: MIDR on arm64, mvendorid/marchid/mimpid on
 * riscv, the hybrid core type on x86; read from sysfs and /proc/cpuinfo
 * under a root that tests can fake.  A file that is missing or does not
 * parse leaves the field unknown: identity is information, not a
 * precondition.
 */
#include "common/file.h"
#include "hwtune/cpu.h"

#include "arch/cputype.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/cpuinfo of 4096 x86 CPUs is ~6 MiB; more is not cpuinfo. */
#define MAX_CPUINFO (16u << 20)

static int path_of(char *buf, const char *root, const char *fmt, int cpu)
{
	char tail[128];
	int k;

	snprintf(tail, sizeof(tail), fmt, cpu);
	k = snprintf(buf, PATH_MAX, "%s%s", root ? root : "", tail);
	return k >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* A number as the kernel prints it: hex with 0x (or base given), then only
 * whitespace.  false for anything else. */
static bool parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	unsigned long long x;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, base);
	if (errno || end == s)
		return false;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end)
		return false;
	*v = x;
	return true;
}

/* One "key<tabs> : value" line of [p, e): the value into val, trimmed.
 * Returns the start of the next line. */
static const char *line_kv(const char *p, const char *e, char *key, size_t klen, char *val,
			   size_t vlen)
{
	const char *nl = memchr(p, '\n', (size_t)(e - p)), *colon, *k_end, *v;
	size_t n;

	if (!nl)
		nl = e;
	key[0] = val[0] = '\0';
	colon = memchr(p, ':', (size_t)(nl - p));
	if (colon) {
		for (k_end = colon; k_end > p && (k_end[-1] == ' ' || k_end[-1] == '\t'); k_end--)
			;
		n = (size_t)(k_end - p) < klen - 1 ? (size_t)(k_end - p) : klen - 1;
		memcpy(key, p, n);
		key[n] = '\0';
		for (v = colon + 1; v < nl && (*v == ' ' || *v == '\t'); v++)
			;
		n = (size_t)(nl - v) < vlen - 1 ? (size_t)(nl - v) : vlen - 1;
		memcpy(val, v, n);
		val[n] = '\0';
		while (n && (val[n - 1] == ' ' || val[n - 1] == '\t' || val[n - 1] == '\r'))
			val[--n] = '\0';
	}
	return nl < e ? nl + 1 : e;
}

/* The lines of cpu's "processor : N" block of /proc/cpuinfo, searched from
 * p (a block boundary) to the end of text. */
static bool find_block_from(const char *p, int cpu, const char **b, const char **e)
{
	const char *end = p + strlen(p);
	char key[64], val[256];

	*b = *e = NULL;
	while (p < end) {
		const char *line = p;
		uint64_t n;

		p = line_kv(p, end, key, sizeof(key), val, sizeof(val));
		if (strcmp(key, "processor") || !parse_u64(val, 10, &n))
			continue;
		if (*b) {
			*e = line;
			return true;
		}
		if (n == (uint64_t)cpu)
			*b = p;
	}
	*e = end;
	return *b != NULL;
}

/* The same, from *hint (the end of the previous CPU's block: cpuinfo lists
 * CPUs in ascending order, so a walk over an ascending set reads the file
 * once), then from the start; *hint moves to the end of the block found. */
static bool find_block(const char *text, const char **hint, int cpu, const char **b,
		       const char **e)
{
	if (!find_block_from(*hint, cpu, b, e) && (*hint == text || !find_block_from(text, cpu, b, e)))
		return false;
	*hint = *e;
	return true;
}

/* The value of key in [b, e), or false. */
static bool field(const char *b, const char *e, const char *want, char *val, size_t vlen)
{
	char key[64];

	while (b < e) {
		b = line_kv(b, e, key, sizeof(key), val, vlen);
		if (!strcmp(key, want))
			return true;
	}
	val[0] = '\0';
	return false;
}

static bool field_u64(const char *b, const char *e, const char *key, int base, uint64_t *v)
{
	char val[256];

	return field(b, e, key, val, sizeof(val)) && parse_u64(val, base, v);
}

/* Is cpu in the PMU's cpu list at path?  false when there is no such file. */
static bool in_list(const char *path, int cpu)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char *text;
	bool in = false;

	if (hwt__read_file(path, 1u << 20, &text, NULL))
		return false;
	text[strcspn(text, "\n")] = '\0';
	if (hwt_cpus_parse(text, &set) == 0)
		in = hwt_cpus_has(&set, cpu);
	hwt_cpus_free(&set);
	free(text);
	return in;
}

static void arm_from_midr(const char *root, int cpu, struct hwt_cpu_ident *id, const char *b,
			  const char *e)
{
	char path[PATH_MAX], *text;
	uint64_t v, impl, var, part, rev;

	if (path_of(path, root, "/sys/devices/system/cpu/cpu%d/regs/identification/midr_el1",
		    cpu) == 0 &&
	    hwt__read_file(path, 4096, &text, NULL) == 0) {
		bool ok = parse_u64(text, 16, &v) && v <= UINT32_MAX;

		free(text);
		if (ok) {
			id->kind = HWT_CPU_KIND_ARM;
			id->midr = (uint32_t)v;
			return;
		}
	}
	/* No regs/identification (older kernels, some VMs): cpuinfo's lines. */
	if (b && field_u64(b, e, "CPU implementer", 0, &impl) && impl <= 0xff &&
	    field_u64(b, e, "CPU part", 0, &part) && part <= 0xfff) {
		if (!field_u64(b, e, "CPU variant", 0, &var) || var > 0xf)
			var = 0;
		if (!field_u64(b, e, "CPU revision", 0, &rev) || rev > 0xf)
			rev = 0;
		id->kind = HWT_CPU_KIND_ARM;
		id->midr = (uint32_t)(impl << 24 | var << 20 | 0xfu << 16 | part << 4 | rev);
	}
}

static void riscv_from_cpuinfo(struct hwt_cpu_ident *id, const char *b, const char *e)
{
	bool v = field_u64(b, e, "mvendorid", 16, &id->mvendorid);
	bool a = field_u64(b, e, "marchid", 16, &id->marchid);
	bool i = field_u64(b, e, "mimpid", 16, &id->mimpid);

	if (v || a || i)
		id->kind = HWT_CPU_KIND_RISCV;
	if (!field(b, e, "uarch", id->model, sizeof(id->model)))
		field(b, e, "model name", id->model, sizeof(id->model));
}

/* The calling thread may run on cpu only. */
static bool pinned_to(int cpu)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	bool only = hwt_cpu_allowed(&set) == 0 && set.n == 1 && set.cpu[0] == cpu;

	hwt_cpus_free(&set);
	return only;
}

static void x86_type(const char *root, int cpu, struct hwt_cpu_ident *id)
{
	char path[PATH_MAX];
	int t;

	if (path_of(path, root, "/sys/devices/cpu_core/cpus", 0) == 0 && in_list(path, cpu)) {
		id->x86_type = HWT_CPU_X86_CORE;
		return;
	}
	if (path_of(path, root, "/sys/devices/cpu_atom/cpus", 0) == 0 && in_list(path, cpu)) {
		id->x86_type = HWT_CPU_X86_ATOM;
		return;
	}
	/* CPUID describes the CPU it runs on: only for a thread pinned to cpu
	 * alone (so the answer never depends on where an unpinned caller
	 * happened to run), and never for a fake tree. */
	if (root || !pinned_to(cpu))
		return;
	t = hwt__x86_core_type();
	if (t > 0)
		id->x86_type = (unsigned)t;
}

static void x86_from_cpuinfo(const char *root, int cpu, struct hwt_cpu_ident *id,
			     const char *b, const char *e)
{
	uint64_t v;

	if (b && field(b, e, "vendor_id", id->vendor, sizeof(id->vendor))) {
		id->kind = HWT_CPU_KIND_X86;
		if (field_u64(b, e, "cpu family", 10, &v) && v <= UINT32_MAX)
			id->x86_family = (unsigned)v;
		if (field_u64(b, e, "model", 10, &v) && v <= UINT32_MAX)
			id->x86_model = (unsigned)v;
		field(b, e, "model name", id->model, sizeof(id->model));
	}
	x86_type(root, cpu, id);
	if (id->x86_type)
		id->kind = HWT_CPU_KIND_X86;
}

static void describe(struct hwt_cpu_ident *id)
{
	size_t len = sizeof(id->core);
	int n = 0;

	switch (id->kind) {
	case HWT_CPU_KIND_ARM:
		n = snprintf(id->core, len, "arm 0x%02x part 0x%03x r%up%u", id->midr >> 24,
			     (id->midr >> 4) & 0xfff, (id->midr >> 20) & 0xf, id->midr & 0xf);
		break;
	case HWT_CPU_KIND_RISCV:
		n = snprintf(id->core, len, "riscv mvendorid 0x%llx marchid 0x%llx mimpid 0x%llx",
			     (unsigned long long)id->mvendorid, (unsigned long long)id->marchid,
			     (unsigned long long)id->mimpid);
		break;
	case HWT_CPU_KIND_X86:
		n = snprintf(id->core, len, "x86%s",
			     id->x86_type == HWT_CPU_X86_CORE   ? " core"
			     : id->x86_type == HWT_CPU_X86_ATOM ? " atom"
								: "");
		break;
	default:
		n = snprintf(id->core, len, "unknown");
		break;
	}
	if (id->model[0] && n > 0 && (size_t)n < len)
		snprintf(id->core + n, len - (size_t)n, " (%s)", id->model);
}

static void ident_one(const char *root, const char *cpuinfo, const char **hint, int cpu,
		      struct hwt_cpu_ident *id)
{
	const char *b = NULL, *e = NULL;

	memset(id, 0, sizeof(*id));
	id->cpu = cpu;
	if (cpuinfo && !find_block(cpuinfo, hint, cpu, &b, &e))
		b = e = NULL;
	arm_from_midr(root, cpu, id, b, e);
	if (id->kind == HWT_CPU_KIND_UNKNOWN && b)
		riscv_from_cpuinfo(id, b, e);
	if (id->kind == HWT_CPU_KIND_UNKNOWN)
		x86_from_cpuinfo(root, cpu, id, b, e);
	describe(id);
}

static int read_cpuinfo(const char *root, char **text)
{
	char path[PATH_MAX];
	int r = path_of(path, root, "/proc/cpuinfo", 0);

	*text = NULL;
	if (r)
		return 0;
	r = hwt__read_file(path, MAX_CPUINFO, text, NULL);
	return r == -ENOMEM ? r : 0; /* no cpuinfo: identities stay unknown */
}

HWT_API int hwt_cpu_identities(const char *root, const struct hwt_cpus *set,
			       struct hwt_cpu_ident *out)
{
	const char *hint;
	char *cpuinfo;
	int r;

	if (!set || (set->n && !out))
		return -EINVAL;
	for (unsigned i = 0; i < set->n; i++)
		if (set->cpu[i] < 0 || set->cpu[i] > HWT_CPU_ID_MAX)
			return -EINVAL;
	r = read_cpuinfo(root, &cpuinfo);
	if (r)
		return r;
	hint = cpuinfo;
	for (unsigned i = 0; i < set->n; i++)
		ident_one(root, cpuinfo, &hint, set->cpu[i], &out[i]);
	free(cpuinfo);
	return 0;
}

HWT_API int hwt_cpu_identity(const char *root, int cpu, struct hwt_cpu_ident *out)
{
	int one[1] = { cpu };
	struct hwt_cpus set = { 1, 1, one };

	if (!out)
		return -EINVAL;
	return hwt_cpu_identities(root, &set, out);
}

HWT_API bool hwt_cpu_ident_equal(const struct hwt_cpu_ident *a, const struct hwt_cpu_ident *b)
{
	if (!a || !b)
		return false;
	return a->kind == b->kind && a->midr == b->midr && a->mvendorid == b->mvendorid &&
	       a->marchid == b->marchid && a->mimpid == b->mimpid && a->x86_type == b->x86_type &&
	       a->x86_family == b->x86_family && a->x86_model == b->x86_model &&
	       !strcmp(a->vendor, b->vendor) && !strcmp(a->model, b->model);
}
