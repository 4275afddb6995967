/* SPDX-License-Identifier: MIT */
/* Helpers of the system result file's tests: see sysfile.h. */
#include "harness/sysfile.h"
#include "harness/harness.h"

#include "misaligned/misaligned.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *sf_tmpdir(void)
{
	static char bufs[4][64];
	static unsigned k;
	char *d = bufs[k++ % 4];

	snprintf(d, 64, "/tmp/hwt-system-test.XXXXXX");
	ASSERT_TRUE(mkdtemp(d) != NULL);
	return d;
}

void sf_rm_tree(const char *d)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	ASSERT_EQ(system(cmd), 0);
}

void sf_need_root(void)
{
	if (geteuid() != 0)
		SKIP("the system file is trusted only when root owns it: run as root");
}

void sf_report(struct hwt_misaligned_report *r, const struct hwt_cpus *set, int s)
{
	memset(r, 0, sizeof(*r));
	r->cpu = calloc(set->n, sizeof(*r->cpu));
	ASSERT_TRUE(r->cpu != NULL);
	r->n = set->n;
	for (unsigned i = 0; i < set->n; i++) {
		r->cpu[i].cpu = set->cpu[i];
		r->cpu[i].speed = s;
		r->cpu[i].ratio_x100 = 100u + (unsigned)set->cpu[i];
		r->cpu[i].word_ns = 142;
		r->cpu[i].byte_ns = 975;
		r->cpu[i].samples = 40;
		r->cpu[i].reps = 1;
		/* the files keep only CPUs whose vector results are known */
		r->cpu[i].vector.speed = HWT_MISALIGNED_FAST;
		r->cpu[i].vector.ratio_x100 = 900;
		r->cpu[i].avx2.speed = HWT_MISALIGNED_UNSUPPORTED;
		r->cpu[i].avx2.notes = HWT_MISALIGNED_NOTE_NO_UNIT;
		r->cpu[i].avx512 = r->cpu[i].avx2;
	}
	r->summary = hwt_misaligned_summary(r->cpu, r->n);
}

void sf_cpus(struct hwt_cpus *set, const char *list)
{
	*set = (struct hwt_cpus)HWT_CPUS_INIT;
	ASSERT_OK(hwt_cpus_parse(list, set));
}

void sf_online(struct hwt_cpus *set, unsigned past)
{
	*set = (struct hwt_cpus)HWT_CPUS_INIT;
	ASSERT_OK(hwt_cpu_online(NULL, set));
	ASSERT_GT(set->n, 0);
	if (past)
		ASSERT_OK(hwt_cpus_add(set, set->cpu[set->n - 1] + (int)past));
}

void sf_path_in(char *buf, size_t len, const char *dir)
{
	ASSERT_OK(hwt__system_path(dir, false, buf, len));
}
