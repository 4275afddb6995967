/* SPDX-License-Identifier: MIT */
/* Core identities from fake trees (tests/data/ident), groups of alike CPUs
 * and "which CPUs?" over reports the tests build. */
#include "harness/harness.h"

#include "hwtune/hwtune.h"

#include "arch/cputype.h"
#include "common/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/ident/"

static struct hwt_cpu_ident ident(const char *tree, int cpu)
{
	struct hwt_cpu_ident id;

	ASSERT_OK(hwt_cpu_identity(tree, cpu, &id));
	ASSERT_EQ(id.cpu, cpu);
	return id;
}

TEST(identity_arm64_midr_from_sysfs)
{
	struct hwt_cpu_ident a55 = ident(DATA "arm64-biglittle", 1);
	struct hwt_cpu_ident a76 = ident(DATA "arm64-biglittle", 6);

	ASSERT_EQ(a55.kind, HWT_CPU_KIND_ARM);
	ASSERT_EQ_U64(a55.midr, 0x412fd050);
	ASSERT_STR_EQ(a55.core, "arm 0x41 part 0xd05 r2p0");
	ASSERT_EQ_U64(a76.midr, 0x414fd0b1);
	ASSERT_STR_EQ(a76.core, "arm 0x41 part 0xd0b r4p1");
	ASSERT_FALSE(hwt_cpu_ident_equal(&a55, &a76));
	struct hwt_cpu_ident other = ident(DATA "arm64-biglittle", 3);
	ASSERT_TRUE(hwt_cpu_ident_equal(&a55, &other));
}

TEST(identity_arm64_from_cpuinfo_without_regs)
{
	struct hwt_cpu_ident a55 = ident(DATA "arm64-cpuinfo-only", 0);
	struct hwt_cpu_ident a76 = ident(DATA "arm64-cpuinfo-only", 7);

	ASSERT_EQ(a55.kind, HWT_CPU_KIND_ARM);
	ASSERT_EQ_U64(a55.midr, 0x412fd050); /* the same MIDR the register file gives */
	ASSERT_STR_EQ(a76.core, "arm 0x41 part 0xd0b r4p1");
}

TEST(identity_riscv_two_core_types)
{
	struct hwt_cpu_ident a = ident(DATA "riscv-two-types", 2);
	struct hwt_cpu_ident b = ident(DATA "riscv-two-types", 5);

	ASSERT_EQ(a.kind, HWT_CPU_KIND_RISCV);
	ASSERT_EQ_U64(a.mvendorid, 0x710);
	ASSERT_EQ_U64(a.marchid, 0x8000000058000001ull);
	ASSERT_EQ_U64(b.marchid, 0x8000000058000002ull);
	ASSERT_EQ_U64(b.mimpid, 0x1000000049772200ull);
	ASSERT_STR_EQ(a.core, "riscv mvendorid 0x710 marchid 0x8000000058000001 mimpid "
			      "0x1000000049772200 (Spacemit(R) X60)");
	ASSERT_FALSE(hwt_cpu_ident_equal(&a, &b));
}

TEST(identity_x86_hybrid_from_pmu_lists)
{
	struct hwt_cpu_ident p = ident(DATA "x86-hybrid", 0);
	struct hwt_cpu_ident e = ident(DATA "x86-hybrid", 4);

	ASSERT_EQ(p.kind, HWT_CPU_KIND_X86);
	ASSERT_EQ(p.x86_type, HWT_CPU_X86_CORE);
	ASSERT_EQ(e.x86_type, HWT_CPU_X86_ATOM);
	ASSERT_EQ(p.x86_family, 6);
	ASSERT_EQ(p.x86_model, 154);
	ASSERT_STR_EQ(p.vendor, "GenuineIntel");
	ASSERT_STR_EQ(p.core, "x86 core (12th Gen Intel(R) Core(TM) i5-1230U)");
	ASSERT_STR_EQ(e.core, "x86 atom (12th Gen Intel(R) Core(TM) i5-1230U)");
	ASSERT_FALSE(hwt_cpu_ident_equal(&p, &e));
}

TEST(identity_missing_files_are_unknown_not_an_error)
{
	struct hwt_cpu_ident id = ident("/nonexistent/hwtune-tree", 3);

	ASSERT_EQ(id.kind, HWT_CPU_KIND_UNKNOWN);
	ASSERT_STR_EQ(id.core, "unknown");
	/* a CPU the tree does not describe */
	id = ident(DATA "riscv-two-types", 9);
	ASSERT_EQ(id.kind, HWT_CPU_KIND_UNKNOWN);
	ASSERT_STR_EQ(id.core, "unknown");
	ASSERT_EQ(hwt_cpu_identity(NULL, -1, &id), -EINVAL);
	ASSERT_EQ(hwt_cpu_identity(NULL, 0, NULL), -EINVAL);
}

TEST(identity_of_this_machine)
{
	struct hwt_cpu_ident id = ident(NULL, 0);

	TLOG("cpu0: %s", id.core);
	ASSERT_TRUE(id.core[0] != '\0');
}

/* --- groups ----------------------------------------------------------------- */

/* A report of n CPUs 0..n-1 with these speeds and ratios (synthetic). */
static void make_report(struct hwt_misaligned_report *r, unsigned n, const int *speed,
			const unsigned *ratio)
{
	memset(r, 0, sizeof(*r));
	r->cpu = calloc(n, sizeof(*r->cpu));
	ASSERT_TRUE(r->cpu != NULL);
	r->n = n;
	for (unsigned i = 0; i < n; i++) {
		r->cpu[i].cpu = (int)i;
		r->cpu[i].speed = speed[i];
		r->cpu[i].ratio_x100 = ratio ? ratio[i] : 0;
	}
	r->summary = hwt_misaligned_summary(r->cpu, n);
}

static const char *list(const struct hwt_cpus *set)
{
	static char buf[8][64];
	static unsigned k;
	char *b = buf[k++ % 8];

	ASSERT_GE(hwt_cpus_format(set, b, 64), 0);
	return b;
}

TEST(groups_split_by_identity_when_verdicts_agree)
{
	static const int speed[8] = { 3, 3, 3, 3, 3, 3, 3, 3 };
	static const unsigned ratio[8] = { 300, 310, 290, 305, 700, 720, 690, 710 };
	struct hwt_misaligned_report r;
	struct hwt_misaligned_group *g;
	unsigned n;

	make_report(&r, 8, speed, ratio);
	ASSERT_OK(hwt_misaligned_groups(&r, DATA "arm64-biglittle", &g, &n));
	ASSERT_EQ(n, 2);
	ASSERT_STR_EQ(list(&g[0].cpus), "0-3");
	ASSERT_STR_EQ(g[0].ident.core, "arm 0x41 part 0xd05 r2p0");
	ASSERT_EQ(g[0].speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(g[0].vector_speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(g[0].ratio_min_x100, 290);
	ASSERT_EQ(g[0].ratio_max_x100, 310);
	ASSERT_STR_EQ(list(&g[1].cpus), "4-7");
	ASSERT_STR_EQ(g[1].ident.core, "arm 0x41 part 0xd0b r4p1");
	ASSERT_EQ(g[1].ratio_min_x100, 690);
	ASSERT_EQ(g[1].ratio_max_x100, 720);
	hwt_misaligned_groups_free(g, n);
	hwt_misaligned_report_free(&r);
}

TEST(groups_split_by_verdict_when_identity_agrees)
{
	/* riscv: 0-3 one marchid, 4-7 the other; cpu1 and cpu2 differ in verdict */
	static const int speed[8] = { 3, 1, 2, 3, 3, 3, 3, 3 };
	struct hwt_misaligned_report r;
	struct hwt_misaligned_group *g;
	unsigned n;

	make_report(&r, 8, speed, NULL);
	r.cpu[6].status = -EINVAL; /* not probed: UNKNOWN, a group of its own */
	ASSERT_OK(hwt_misaligned_groups(&r, DATA "riscv-two-types", &g, &n));
	ASSERT_EQ(n, 5);
	ASSERT_STR_EQ(list(&g[0].cpus), "0,3");
	ASSERT_EQ(g[0].speed, HWT_MISALIGNED_FAST);
	ASSERT_STR_EQ(list(&g[1].cpus), "1");
	ASSERT_EQ(g[1].speed, HWT_MISALIGNED_EMULATED);
	ASSERT_STR_EQ(list(&g[2].cpus), "2");
	ASSERT_EQ(g[2].speed, HWT_MISALIGNED_SLOW);
	ASSERT_STR_EQ(list(&g[3].cpus), "4-5,7");
	ASSERT_EQ_U64(g[3].ident.marchid, 0x8000000058000002ull);
	ASSERT_STR_EQ(list(&g[4].cpus), "6");
	ASSERT_EQ(g[4].speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(g[0].ratio_min_x100, 0); /* no ratios in this report */
	hwt_misaligned_groups_free(g, n);
	hwt_misaligned_report_free(&r);
}

TEST(groups_split_by_vector_verdict)
{
	static const int speed[4] = { 3, 3, 3, 3 };
	struct hwt_misaligned_report r;
	struct hwt_misaligned_group *g;
	struct hwt_cpus set = HWT_CPUS_INIT;
	unsigned n;

	make_report(&r, 4, speed, NULL);
	for (unsigned i = 0; i < 4; i++)
		r.cpu[i].vector.speed = i == 2 ? HWT_MISALIGNED_SLOW : HWT_MISALIGNED_FAST;
	ASSERT_OK(hwt_misaligned_groups(&r, "/nonexistent/hwtune-tree", &g, &n));
	ASSERT_EQ(n, 2);
	ASSERT_STR_EQ(list(&g[0].cpus), "0-1,3");
	ASSERT_EQ(g[0].vector_speed, HWT_MISALIGNED_FAST);
	ASSERT_STR_EQ(list(&g[1].cpus), "2");
	ASSERT_EQ(g[1].vector_speed, HWT_MISALIGNED_SLOW);
	hwt_misaligned_groups_free(g, n);
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_VECTOR, HWT_MISALIGNED_FAST, &set), 3);
	ASSERT_STR_EQ(list(&set), "0-1,3");
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, HWT_MISALIGNED_FAST, &set), 4);
	hwt_cpus_free(&set);
	hwt_misaligned_report_free(&r);
}

TEST(groups_x86_hybrid_and_unknown_tree)
{
	static const int speed[8] = { 3, 3, 3, 3, 3, 3, 3, 3 };
	struct hwt_misaligned_report r;
	struct hwt_misaligned_group *g;
	unsigned n;

	make_report(&r, 8, speed, NULL);
	ASSERT_OK(hwt_misaligned_groups(&r, DATA "x86-hybrid", &g, &n));
	ASSERT_EQ(n, 2);
	ASSERT_STR_EQ(list(&g[0].cpus), "0-3");
	ASSERT_EQ(g[0].ident.x86_type, HWT_CPU_X86_CORE);
	ASSERT_STR_EQ(list(&g[1].cpus), "4-7");
	hwt_misaligned_groups_free(g, n);
	/* no identity at all: one group, core "unknown" */
	ASSERT_OK(hwt_misaligned_groups(&r, "/nonexistent/hwtune-tree", &g, &n));
	ASSERT_EQ(n, 1);
	ASSERT_STR_EQ(list(&g[0].cpus), "0-7");
	ASSERT_STR_EQ(g[0].ident.core, "unknown");
	hwt_misaligned_groups_free(g, n);
	ASSERT_EQ(hwt_misaligned_groups(NULL, NULL, &g, &n), -EINVAL);
	hwt_misaligned_report_free(&r);
}

TEST(cpus_with_answers_which_cpus)
{
	static const int speed[6] = { 3, 1, 3, 2, 1, 3 };
	struct hwt_misaligned_report r;
	struct hwt_cpus set = HWT_CPUS_INIT;

	make_report(&r, 6, speed, NULL);
	r.cpu[5].status = -EINVAL;
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, HWT_MISALIGNED_FAST, &set), 2);
	ASSERT_STR_EQ(list(&set), "0,2");
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, HWT_MISALIGNED_EMULATED, &set),
		  2);
	ASSERT_STR_EQ(list(&set), "1,4");
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, HWT_MISALIGNED_UNKNOWN, &set),
		  1);
	ASSERT_STR_EQ(list(&set), "5");
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, HWT_MISALIGNED_UNSUPPORTED,
					   &set), 0);
	ASSERT_EQ(set.n, 0);
	/* no vector verdicts yet: every CPU is UNKNOWN */
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_VECTOR, HWT_MISALIGNED_UNKNOWN, &set),
		  6);
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, 2, HWT_MISALIGNED_FAST, &set), -EINVAL);
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, 5, &set), -EINVAL);
	hwt_cpus_free(&set);
	hwt_misaligned_report_free(&r);
}

/* The hypervisor's name from its CPUID signature (pure), and the real call. */
TEST(hypervisor_signatures)
{
	static const struct {
		const char sig[13];
		const char *name;
	} cases[] = {
		{ "KVMKVMKVM\0\0\0", "KVM" },
		{ "Microsoft Hv", "Microsoft Hyper-V" },
		{ "VMwareVMware", "VMware" },
		{ "XenVMMXenVMM", "Xen" },
		{ "TCGTCGTCGTCG", "QEMU TCG" },
		{ " lrpepyh  vr", "Parallels" },
		{ "ACRNACRNACRN", "ACRN" },
		{ "bhyve bhyve ", "bhyve" },
		{ "NewHV\0\0\0\0\0\0\0", "unknown (CPUID signature \"NewHV\")" },
		{ "ab\001cdefghij ", "unknown (CPUID signature \"ab?cdefghij\")" },
	};
	char buf[64], small[4];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_OK(hwt__hypervisor_name(cases[i].sig, buf, sizeof(buf)));
		ASSERT_STR_EQ(buf, cases[i].name);
	}
	ASSERT_EQ(hwt__hypervisor_name("\0\0\0\0\0\0\0\0\0\0\0\0", buf, sizeof(buf)), -ENOENT);
	ASSERT_EQ(hwt__hypervisor_name("            ", buf, sizeof(buf)), -ENOENT);
	ASSERT_EQ(hwt__hypervisor_name("VMwareVMware", small, sizeof(small)), -ERANGE);
}

TEST(hypervisor_of_this_machine)
{
	char buf[64];
	int r = hwt_cpu_hypervisor(buf, sizeof(buf));
#if defined(__x86_64__) && !defined(HWT_ARCH_GENERIC)
	char *text = NULL;
	bool flag;

	/* CPUID.1:ECX[31] is what cpuinfo shows as the "hypervisor" flag */
	ASSERT_OK(hwt__read_file("/proc/cpuinfo", 1u << 22, &text, NULL));
	flag = strstr(text, " hypervisor") != NULL;
	free(text);
	if (flag) {
		ASSERT_OK(r);
		ASSERT_TRUE(buf[0] != '\0');
	} else {
		ASSERT_EQ(r, -ENODEV);
		ASSERT_STR_EQ(buf, "");
	}
#else
	ASSERT_EQ(r, -ENOSYS);
	ASSERT_STR_EQ(buf, "");
#endif
}
