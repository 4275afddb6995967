/* SPDX-License-Identifier: MIT */
/*
 * NULL at the public API: every exported function (HWT_API) of
 * the public headers called with NULL for each pointer it takes, one test
 * per function, checked against the rule in <hwtune/hwtune.h>: an int
 * function returns -EINVAL (and writes nothing), a void one does nothing,
 * a bool one returns false, a count 0, a pointer NULL; arguments documented
 * as optional may be NULL.  tests/native/api_null.sh checks that every
 * HWT_API function of the headers has its test here (null_<name without
 * hwt_>).
 */
#include "harness/harness.h"
#include "harness/cmds.h"

#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>

#include <errno.h>
#include <stdlib.h>

/* ---- fixtures: a device and a queue to pass where a valid one is needed -- */

static struct hwt_smmu_dev *dev_new(void)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev = NULL;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	return dev;
}

struct pair {
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
};

static struct pair pair_new(void)
{
	struct pair p = { dev_new(), NULL };

	ASSERT_OK(hwt_cmdq_create(&p.q, p.dev, NULL));
	ASSERT_OK(hwt_smmu_dev_start(p.dev));
	return p;
}

static void pair_free(struct pair *p)
{
	ASSERT_OK(hwt_smmu_dev_stop(p->dev));
	hwt_cmdq_destroy(p->q);
	hwt_smmu_dev_destroy(p->dev);
}

/* ---- hwtune.h ---------------------------------------------------------------- */

TEST(null_version)
{
	ASSERT_TRUE(hwt_version() != NULL); /* no pointer argument */
}

/* ---- cpu.h ------------------------------------------------------------------- */

static void cpu_fn(int cpu, void *arg)
{
	(void)cpu, (void)arg;
}

TEST(null_cpus_free)
{
	hwt_cpus_free(NULL);
}

TEST(null_cpus_add)
{
	ASSERT_EQ(hwt_cpus_add(NULL, 0), -EINVAL);
}

TEST(null_cpus_has)
{
	ASSERT_FALSE(hwt_cpus_has(NULL, 0));
}

TEST(null_cpus_parse)
{
	struct hwt_cpus s = HWT_CPUS_INIT;

	ASSERT_EQ(hwt_cpus_parse(NULL, &s), -EINVAL);
	ASSERT_EQ(hwt_cpus_parse("0", NULL), -EINVAL);
	ASSERT_EQ(s.n, 0);
}

TEST(null_cpus_parse_why)
{
	struct hwt_cpus s = HWT_CPUS_INIT;
	char why[64];

	ASSERT_EQ(hwt_cpus_parse_why(NULL, &s, why, sizeof(why)), -EINVAL);
	ASSERT_TRUE(why[0] != '\0');
	ASSERT_EQ(hwt_cpus_parse_why("0", NULL, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(hwt_cpus_parse_why("0", &s, NULL, 0), 0); /* why is optional */
	ASSERT_EQ(hwt_cpus_parse_why("0", &s, NULL, 64), 0);
	ASSERT_EQ(s.n, 1);
	hwt_cpus_free(&s);
}

TEST(null_cpus_format)
{
	struct hwt_cpus s = HWT_CPUS_INIT;

	ASSERT_OK(hwt_cpus_add(&s, 3));
	ASSERT_EQ(hwt_cpus_format(NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(hwt_cpus_format(&s, NULL, 8), -EINVAL);
	ASSERT_EQ(hwt_cpus_format(&s, NULL, 0), 1); /* no buffer, no length: the size */
	hwt_cpus_free(&s);
}

TEST(null_cpu_allowed)
{
	ASSERT_EQ(hwt_cpu_allowed(NULL), -EINVAL);
}

TEST(null_cpu_online)
{
	struct hwt_cpus s = HWT_CPUS_INIT;

	ASSERT_EQ(hwt_cpu_online(NULL, NULL), -EINVAL);
	ASSERT_OK(hwt_cpu_online(NULL, &s)); /* sysfs_root is optional */
	hwt_cpus_free(&s);
}

TEST(null_cpu_smt_siblings)
{
	ASSERT_EQ(hwt_cpu_smt_siblings(NULL, 0, NULL), -EINVAL);
}

TEST(null_cpu_relax)
{
	hwt_cpu_relax(); /* no pointer argument */
}

TEST(null_cpu_on_each)
{
	struct hwt_cpus s = HWT_CPUS_INIT;

	ASSERT_OK(hwt_cpu_allowed(&s));
	ASSERT_EQ(hwt_cpu_on_each(NULL, HWT_CPU_RUN_SERIAL, cpu_fn, NULL, NULL), -EINVAL);
	ASSERT_EQ(hwt_cpu_on_each(&s, HWT_CPU_RUN_SERIAL, NULL, NULL, NULL), -EINVAL);
	/* arg and status are optional */
	ASSERT_EQ(hwt_cpu_on_each(&s, HWT_CPU_RUN_SERIAL, cpu_fn, NULL, NULL), (int)s.n);
	hwt_cpus_free(&s);
}

/* ---- smmu.h ------------------------------------------------------------------ */

TEST(null_smmu_encode)
{
	struct hwt_smmu_cmd c;
	uint64_t dw[2] = { 1, 2 };

	tst_cmd_init(&c, HWT_SMMU_OP_CFGI_ALL);
	ASSERT_EQ(hwt_smmu_encode(NULL, dw), -EINVAL);
	ASSERT_EQ(hwt_smmu_encode(&c, NULL), -EINVAL);
	ASSERT_EQ_U64(dw[0], 1);
}

TEST(null_smmu_decode)
{
	uint64_t dw[2] = { HWT_SMMU_OP_CFGI_ALL, 0 };
	struct hwt_smmu_cmd c;

	ASSERT_EQ(hwt_smmu_decode(NULL, &c), -EINVAL);
	ASSERT_EQ(hwt_smmu_decode(dw, NULL), -EINVAL);
}

TEST(null_smmu_op_name)
{
	ASSERT_TRUE(hwt_smmu_op_name(0) == NULL); /* no pointer argument; unknown op */
}

TEST(null_smmu_op_by_name)
{
	ASSERT_EQ(hwt_smmu_op_by_name(NULL), -EINVAL);
}

TEST(null_smmu_field_name)
{
	ASSERT_TRUE(hwt_smmu_field_name(HWT_SMMU_F_COUNT) == NULL); /* no pointer argument */
}

TEST(null_smmu_field_layout)
{
	/* every output is optional */
	ASSERT_EQ(hwt_smmu_field_layout(HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_CS, NULL, NULL, NULL), 1);
}

TEST(null_smmu_atc_inv_range)
{
	ASSERT_EQ(hwt_smmu_atc_inv_range(NULL, 0x1000, 0x1000), -EINVAL);
}

TEST(null_smmu_atc_inv_span)
{
	hwt_smmu_atc_inv_span(NULL, 0x1000, 0x1000);
}

TEST(null_smmu_tlbi_range_init)
{
	ASSERT_EQ(hwt_smmu_tlbi_range_init(NULL, 0, 4096, 12, 12, 1, 0), -EINVAL);
}

TEST(null_smmu_tlbi_range_next)
{
	struct hwt_smmu_tlbi_range r;
	struct hwt_smmu_cmd c;

	ASSERT_OK(hwt_smmu_tlbi_range_init(&r, 0, 4096, 12, 12, 1, 0));
	tst_cmd_init(&c, HWT_SMMU_OP_TLBI_NH_VA);
	ASSERT_EQ(hwt_smmu_tlbi_range_next(NULL, &c), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_next(&r, NULL), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_next(&r, &c), 1); /* r was left as it was */
}

/* ---- device.h ---------------------------------------------------------------- */

TEST(null_smmu_dev_config_default)
{
	hwt_smmu_dev_config_default(NULL);
}

TEST(null_smmu_dev_create)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev = NULL;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_EQ(hwt_smmu_dev_create(NULL, &dc), -EINVAL);
	ASSERT_EQ(hwt_smmu_dev_create(&dev, NULL), -EINVAL);
	ASSERT_TRUE(dev == NULL);
}

TEST(null_smmu_dev_get_config)
{
	struct hwt_smmu_dev *dev = dev_new();
	struct hwt_smmu_dev_config dc;

	dc.cmdqs = 77;
	hwt_smmu_dev_get_config(NULL, &dc);
	ASSERT_EQ(dc.cmdqs, 77);
	hwt_smmu_dev_get_config(dev, NULL);
	hwt_smmu_dev_destroy(dev);
}

TEST(null_smmu_dev_start)
{
	ASSERT_EQ(hwt_smmu_dev_start(NULL), -EINVAL);
}

TEST(null_smmu_dev_stop)
{
	ASSERT_EQ(hwt_smmu_dev_stop(NULL), -EINVAL);
}

TEST(null_smmu_dev_destroy)
{
	hwt_smmu_dev_destroy(NULL);
}

TEST(null_smmu_dev_get_stats)
{
	struct hwt_smmu_dev *dev = dev_new();
	struct hwt_smmu_dev_stats st;

	st.cmds = 77;
	hwt_smmu_dev_get_stats(NULL, &st);
	ASSERT_EQ(st.cmds, 77);
	hwt_smmu_dev_get_stats(dev, NULL);
	hwt_smmu_dev_destroy(dev);
}

/* ---- smmu_model.h -------------------------------------------------------------- */

TEST(null_smmu_dev_pause)
{
	ASSERT_EQ(hwt_smmu_dev_pause(NULL), -EINVAL);
}

TEST(null_smmu_dev_resume)
{
	ASSERT_EQ(hwt_smmu_dev_resume(NULL), -EINVAL);
}

TEST(null_smmu_dev_inject)
{
	ASSERT_EQ(hwt_smmu_dev_inject(NULL, HWT_SMMU_FAULT_ABT), -EINVAL);
}

TEST(null_smmu_dev_cfg_insert)
{
	ASSERT_EQ(hwt_smmu_dev_cfg_insert(NULL, HWT_SMMU_CFG_STE, 1, 0), -EINVAL);
}

TEST(null_smmu_dev_cfg_lookup)
{
	ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(NULL, HWT_SMMU_CFG_STE, 1, 0));
}

TEST(null_smmu_dev_tlb_insert)
{
	struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .addr = 0x1000, .size_log2 = 12 };
	struct hwt_smmu_dev *dev = dev_new();

	ASSERT_EQ(hwt_smmu_dev_tlb_insert(NULL, &e), -EINVAL);
	ASSERT_EQ(hwt_smmu_dev_tlb_insert(dev, NULL), -EINVAL);
	ASSERT_EQ(hwt_smmu_dev_cache_count(dev), 0);
	hwt_smmu_dev_destroy(dev);
}

TEST(null_smmu_dev_tlb_lookup)
{
	ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(NULL, HWT_SMMU_TLB_NH, 0, 0, 0x1000));
}

TEST(null_smmu_dev_tlb_contains)
{
	struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .addr = 0x1000, .size_log2 = 12 };
	struct hwt_smmu_dev *dev = dev_new();

	ASSERT_FALSE(hwt_smmu_dev_tlb_contains(NULL, &e));
	ASSERT_FALSE(hwt_smmu_dev_tlb_contains(dev, NULL));
	hwt_smmu_dev_destroy(dev);
}

TEST(null_smmu_dev_atc_insert)
{
	ASSERT_EQ(hwt_smmu_dev_atc_insert(NULL, 1, HWT_SMMU_ATC_NO_SSID, 0x1000, 12), -EINVAL);
}

TEST(null_smmu_dev_atc_lookup)
{
	ASSERT_FALSE(hwt_smmu_dev_atc_lookup(NULL, 1, HWT_SMMU_ATC_NO_SSID, 0x1000));
}

TEST(null_smmu_dev_cache_count)
{
	ASSERT_EQ(hwt_smmu_dev_cache_count(NULL), 0);
}

TEST(null_smmu_dev_cache_clear)
{
	hwt_smmu_dev_cache_clear(NULL);
}

/* ---- cmdq.h ------------------------------------------------------------------- */

TEST(null_cmdq_options_default)
{
	hwt_cmdq_options_default(NULL);
}

TEST(null_cmdq_env_disable_msipolling)
{
	setenv("HWTUNE_DISABLE_MSIPOLLING", "1", 1);
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(NULL, NULL), -EINVAL);
	unsetenv("HWTUNE_DISABLE_MSIPOLLING");
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(NULL, NULL), -EINVAL);
}

TEST(null_cmdq_create)
{
	struct hwt_smmu_dev *dev = dev_new();
	struct hwt_cmdq *q = NULL;

	ASSERT_EQ(hwt_cmdq_create(NULL, dev, NULL), -EINVAL);
	ASSERT_EQ(hwt_cmdq_create(&q, NULL, NULL), -EINVAL);
	ASSERT_TRUE(q == NULL);
	ASSERT_OK(hwt_cmdq_create(&q, dev, NULL)); /* opts is optional */
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

TEST(null_cmdq_destroy)
{
	hwt_cmdq_destroy(NULL);
}

TEST(null_cmdq_issue)
{
	struct pair p = pair_new();

	ASSERT_EQ(hwt_cmdq_issue(NULL, NULL, 0, true), -EINVAL);
	ASSERT_EQ(hwt_cmdq_issue(p.q, NULL, 1, false), -EINVAL);
	ASSERT_OK(hwt_cmdq_issue(p.q, NULL, 0, true)); /* an empty array is never read */
	pair_free(&p);
}

TEST(null_cmdq_issue_cmd)
{
	struct hwt_cmdq_cmd c;
	struct pair p = pair_new();

	tst_cmd_cfgi_ste(c.dw, 1);
	ASSERT_EQ(hwt_cmdq_issue_cmd(NULL, &c), -EINVAL);
	ASSERT_EQ(hwt_cmdq_issue_cmd(p.q, NULL), -EINVAL);
	pair_free(&p);
}

TEST(null_cmdq_issue_cmd_sync)
{
	struct hwt_cmdq_cmd c;
	struct pair p = pair_new();

	tst_cmd_cfgi_ste(c.dw, 1);
	ASSERT_EQ(hwt_cmdq_issue_cmd_sync(NULL, &c), -EINVAL);
	ASSERT_EQ(hwt_cmdq_issue_cmd_sync(p.q, NULL), -EINVAL);
	pair_free(&p);
}

TEST(null_cmdq_sync)
{
	ASSERT_EQ(hwt_cmdq_sync(NULL), -EINVAL);
}

TEST(null_cmdq_batch_init)
{
	struct hwt_cmdq_batch b;
	struct hwt_cmdq_cmd c;

	hwt_cmdq_batch_init(NULL, NULL);
	/* q NULL: an unbound batch, which add and submit refuse */
	hwt_cmdq_batch_init(&b, NULL);
	ASSERT_EQ(b.num, 0);
	tst_cmd_cfgi_ste(c.dw, 1);
	ASSERT_EQ(hwt_cmdq_batch_add(&b, &c), -EINVAL);
	ASSERT_EQ(hwt_cmdq_batch_submit(&b), -EINVAL);
	ASSERT_EQ(b.num, 0);
}

TEST(null_cmdq_batch_add)
{
	struct hwt_cmdq_batch b;
	struct hwt_cmdq_cmd c;
	struct pair p = pair_new();

	hwt_cmdq_batch_init(&b, p.q);
	tst_cmd_cfgi_ste(c.dw, 1);
	ASSERT_EQ(hwt_cmdq_batch_add(NULL, &c), -EINVAL);
	ASSERT_EQ(hwt_cmdq_batch_add(&b, NULL), -EINVAL);
	ASSERT_EQ(b.num, 0);
	pair_free(&p);
}

TEST(null_cmdq_batch_submit)
{
	ASSERT_EQ(hwt_cmdq_batch_submit(NULL), -EINVAL);
}

TEST(null_cmdq_get_info)
{
	struct hwt_cmdq_info info;
	struct pair p = pair_new();

	info.entries = 77;
	hwt_cmdq_get_info(NULL, &info);
	ASSERT_EQ(info.entries, 77);
	hwt_cmdq_get_info(p.q, NULL);
	pair_free(&p);
}

TEST(null_cmdq_calibrate)
{
	ASSERT_EQ(hwt_cmdq_calibrate(NULL), -EINVAL);
}

TEST(null_cmdq_thread_cas_retries)
{
	ASSERT_EQ(hwt_cmdq_thread_cas_retries(), 0); /* no pointer argument */
}

/* ---- misaligned.h ------------------------------------------------------------- */

TEST(null_misaligned_probe)
{
	ASSERT_EQ(hwt_misaligned_probe(NULL, NULL, NULL), -EINVAL);
}

TEST(null_misaligned_report_free)
{
	hwt_misaligned_report_free(NULL);
}

TEST(null_misaligned_summary)
{
	ASSERT_EQ(hwt_misaligned_summary(NULL, 1), -EINVAL);
	ASSERT_EQ(hwt_misaligned_summary(NULL, 0), HWT_MISALIGNED_UNKNOWN); /* empty: never read */
}

TEST(null_misaligned_vector_summary)
{
	ASSERT_EQ(hwt_misaligned_vector_summary(NULL, 1, false), -EINVAL);
	ASSERT_EQ(hwt_misaligned_vector_summary(NULL, 1, true), -EINVAL);
	ASSERT_EQ(hwt_misaligned_vector_summary(NULL, 0, false), HWT_MISALIGNED_UNKNOWN);
}

TEST(null_misaligned_unit_summary)
{
	for (unsigned u = 0; u < HWT_MISALIGNED_UNITS; u++) {
		ASSERT_EQ(hwt_misaligned_unit_summary(NULL, 1, u), -EINVAL);
		ASSERT_EQ(hwt_misaligned_unit_summary(NULL, 0, u), HWT_MISALIGNED_UNKNOWN);
	}
	ASSERT_EQ(hwt_misaligned_unit_summary(NULL, 0, HWT_MISALIGNED_UNITS), -EINVAL);
}

TEST(null_misaligned_cpu_unit)
{
	for (unsigned u = 0; u <= HWT_MISALIGNED_UNITS; u++)
		ASSERT_TRUE(hwt_misaligned_cpu_unit(NULL, u) == NULL);
}

TEST(null_misaligned_speed_name)
{
	ASSERT_TRUE(hwt_misaligned_speed_name((enum hwt_misaligned_speed)99) == NULL);
}

TEST(null_misaligned_parse_speed)
{
	ASSERT_EQ(hwt_misaligned_parse_speed(NULL), -EINVAL);
}

TEST(null_misaligned_env_override)
{
	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	ASSERT_EQ(hwt_misaligned_env_override(NULL), 0); /* bad is optional */
}

TEST(null_misaligned_env_vector_override)
{
	setenv("HWTUNE_UNALIGNED_VECTOR_SPEED", "turbo", 1);
	ASSERT_EQ(hwt_misaligned_env_vector_override(NULL), -EINVAL); /* bad is optional */
	unsetenv("HWTUNE_UNALIGNED_VECTOR_SPEED");
	ASSERT_EQ(hwt_misaligned_env_vector_override(NULL), 0);
}

TEST(null_misaligned_speed)
{
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "fast", 1); /* no probing */
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_FAST); /* no pointer argument */
}

/* ---- identities, groups, the system file, the one-call answers ---------- */

TEST(null_cpu_identity)
{
	struct hwt_cpu_ident id;

	ASSERT_EQ(hwt_cpu_identity(NULL, 0, NULL), -EINVAL);
	ASSERT_OK(hwt_cpu_identity(NULL, 0, &id)); /* root is optional */
}

TEST(null_cpu_identities)
{
	struct hwt_cpus s = HWT_CPUS_INIT;
	struct hwt_cpu_ident id;

	ASSERT_EQ(hwt_cpu_identities(NULL, NULL, &id), -EINVAL);
	ASSERT_OK(hwt_cpu_identities(NULL, &s, NULL)); /* an empty set reads no array */
	ASSERT_OK(hwt_cpus_add(&s, 0));
	ASSERT_EQ(hwt_cpu_identities(NULL, &s, NULL), -EINVAL);
	hwt_cpus_free(&s);
}

TEST(null_cpu_hypervisor)
{
	char buf[64] = "x";

	ASSERT_EQ(hwt_cpu_hypervisor(NULL, 64), -EINVAL);
	ASSERT_EQ(hwt_cpu_hypervisor(buf, 0), -EINVAL);
	ASSERT_EQ(buf[0], 'x'); /* len 0: nothing written */
}

TEST(null_cpu_ident_equal)
{
	struct hwt_cpu_ident id;

	ASSERT_OK(hwt_cpu_identity(NULL, 0, &id));
	ASSERT_FALSE(hwt_cpu_ident_equal(NULL, &id));
	ASSERT_FALSE(hwt_cpu_ident_equal(&id, NULL));
	ASSERT_TRUE(hwt_cpu_ident_equal(&id, &id));
}

TEST(null_misaligned_groups)
{
	struct hwt_misaligned_report r = { 0 };
	struct hwt_misaligned_group *g = (void *)&r;
	unsigned n = 7;

	ASSERT_EQ(hwt_misaligned_groups(NULL, NULL, &g, &n), -EINVAL);
	ASSERT_EQ(hwt_misaligned_groups(&r, NULL, NULL, &n), -EINVAL);
	ASSERT_EQ(hwt_misaligned_groups(&r, NULL, &g, NULL), -EINVAL);
	ASSERT_TRUE(g == (void *)&r && n == 7); /* nothing written */
	ASSERT_OK(hwt_misaligned_groups(&r, NULL, &g, &n)); /* root optional, no CPUs */
	ASSERT_EQ(n, 0);
	hwt_misaligned_groups_free(g, n);
}

TEST(null_misaligned_groups_free)
{
	hwt_misaligned_groups_free(NULL, 3);
}

TEST(null_misaligned_cpus_with)
{
	struct hwt_misaligned_report r = { 0 };
	struct hwt_cpus s = HWT_CPUS_INIT;

	ASSERT_EQ(hwt_misaligned_cpus_with(NULL, HWT_MISALIGNED_SCALAR, 0, &s), -EINVAL);
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, 0, NULL), -EINVAL);
	ASSERT_EQ(hwt_misaligned_cpus_with(&r, HWT_MISALIGNED_SCALAR, 0, &s), 0);
}

TEST(null_misaligned_system_write)
{
	ASSERT_EQ(hwt_misaligned_system_write(NULL, NULL), -EINVAL);
	ASSERT_EQ(hwt_misaligned_system_write("/nonexistent", NULL), -EINVAL);
}

TEST(null_misaligned_system_read)
{
	ASSERT_EQ(hwt_misaligned_system_read(NULL, NULL, NULL), -EINVAL);
}

TEST(null_misaligned_system_probe)
{
	ASSERT_EQ(hwt_misaligned_system_probe(NULL, NULL), -EINVAL);
}

TEST(null_misaligned_cpus)
{
	struct hwt_cpus bad = { .cpu = NULL, .n = 1 };
	struct hwt_misaligned_report r;

	ASSERT_EQ(hwt_misaligned_cpus(NULL, NULL, NULL), -EINVAL);
	ASSERT_EQ(hwt_misaligned_cpus(&bad, NULL, &r), -EINVAL); /* n CPUs, no array */
	ASSERT_EQ(r.n, 0);
}

TEST(null_misaligned_self)
{
	ASSERT_EQ(hwt_misaligned_self(NULL, NULL), -EINVAL);
}

TEST(null_misaligned_hwprobe)
{
	uint64_t v = 7;

	ASSERT_EQ(hwt_misaligned_hwprobe(0, HWT_HWPROBE_MISALIGNED_SCALAR_PERF, NULL), -EINVAL);
	ASSERT_EQ(hwt_misaligned_hwprobe(-2, HWT_HWPROBE_MISALIGNED_SCALAR_PERF, &v), -EINVAL);
	ASSERT_EQ(hwt_misaligned_hwprobe(0, -1, &v), -EINVAL);
	ASSERT_EQ(v, 7); /* untouched on error */
}
