/* SPDX-License-Identifier: MIT */
/* CPU sets, list syntax, sysfs topology, affinity and hwt_cpu_on_each. */
#include "harness/harness.h"

#include "hwtune/cpu.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------- */

static char *fmt(const struct hwt_cpus *set)
{
	static char buf[1 << 16];
	int r = hwt_cpus_format(set, buf, sizeof(buf));

	ASSERT_OK(r);
	ASSERT_LT(r, (int)sizeof(buf));
	return buf;
}

/* Parse then format: the canonical form of a list. */
static const char *canon(const char *list)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	static char buf[4096];

	ASSERT_OK(hwt_cpus_parse(list, &set));
	snprintf(buf, sizeof(buf), "%s", fmt(&set));
	hwt_cpus_free(&set);
	return buf;
}

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p for the parent directories */
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
	close(fd);
}

static void make_dir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/x", root, rel);
	write_file(root, path + strlen(root) + 1, "");
	ASSERT_EQ(unlink(path), 0);
}

static char *fake_root(void)
{
	static char dir[] = "/tmp/hwt-cpu-XXXXXX";

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	return dir;
}

static void rm_tree(const char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ASSERT_EQ(system(cmd), 0);
}

/* ---- sets and list syntax -------------------------------------------- */

TEST(set_add_has_free)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	static const int in[] = { 5, 1, 9, 1, 0, 7, 5, 3 };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ASSERT_OK(hwt_cpus_add(&set, in[i]));
	ASSERT_EQ(set.n, 6);
	ASSERT_STR_EQ(fmt(&set), "0-1,3,5,7,9");
	ASSERT_TRUE(hwt_cpus_has(&set, 7));
	ASSERT_FALSE(hwt_cpus_has(&set, 8));
	ASSERT_FALSE(hwt_cpus_has(&set, -1));
	ASSERT_EQ(hwt_cpus_add(&set, -1), -EINVAL);
	ASSERT_EQ(hwt_cpus_add(&set, HWT_CPU_ID_MAX + 1), -EINVAL);
	ASSERT_OK(hwt_cpus_add(&set, HWT_CPU_ID_MAX));
	hwt_cpus_free(&set);
	ASSERT_EQ(set.n, 0);
	ASSERT_TRUE(set.cpu == NULL);
	ASSERT_FALSE(hwt_cpus_has(&set, 0));
	hwt_cpus_free(&set); /* twice is fine */
}

TEST(parse_valid)
{
	static const char *const cases[][2] = {
		{ "0", "0" },
		{ "0-3,8", "0-3,8" },
		{ "0-1", "0-1" },
		{ "3,1,2", "1-3" },           /* any order */
		{ "0-3,2-5,5", "0-5" },       /* overlaps */
		{ "0-15:4", "0,4,8,12" },     /* stride */
		{ "10-14:2", "10,12,14" },
		{ "10-15:2", "10,12,14" },
		{ "0-3:1", "0-3" },
		{ "5-5:3", "5" },
		{ "0-7:2/4", "0-1,4-5" },     /* kernel used/group form */
		{ "0-1023:2/256", "0-1,256-257,512-513,768-769" },
		{ "0-9:4/4", "0-9" },
		{ "007", "7" },
		{ "4095", "4095" },
		{ "65535", "65535" },
		{ "1023-1025,2048", "1023-1025,2048" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(canon(cases[i][0]), cases[i][1]) != 0)
			TLOG("case %zu: %s", i, cases[i][0]);
		ASSERT_STR_EQ(canon(cases[i][0]), cases[i][1]);
	}
}

TEST(parse_many_cpus)
{
	struct hwt_cpus set = HWT_CPUS_INIT;

	ASSERT_OK(hwt_cpus_parse("0-4095", &set));
	ASSERT_EQ(set.n, 4096);
	ASSERT_EQ(set.cpu[4095], 4095);
	ASSERT_OK(hwt_cpus_parse("0-65535:2", &set));
	ASSERT_EQ(set.n, 32768);
	ASSERT_TRUE(hwt_cpus_has(&set, 65534));
	ASSERT_FALSE(hwt_cpus_has(&set, 65535));
	ASSERT_OK(hwt_cpus_parse("1024,1500-1502", &set));
	ASSERT_EQ(set.n, 4);
	ASSERT_EQ(set.cpu[0], 1024);
	hwt_cpus_free(&set);
}

TEST(parse_invalid)
{
	static const char *const bad[] = {
		"", ",", "1,", ",1", "1,,2", "a", "1a", " 1", "1 ", "1\n", "-1", "1-",
		"-", "3-1", "1--2", "1-2-3", "+1", "0x1", "1.5", "1-2:", "1-2:0", "1-2:x",
		"1-2:2/", "1-2:3/2", "1-2:0/2", "1-2:1/0", "1:2", "1-2,:2", "1-2:2:2",
		"65536", "0-65536", "99999999999999999999", "4294967296", "0-4294967297",
		"2147483648",
	};
	struct hwt_cpus set = HWT_CPUS_INIT;

	ASSERT_OK(hwt_cpus_parse("42", &set));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = hwt_cpus_parse(bad[i], &set);

		if (r != -EINVAL)
			TLOG("case %zu accepted", i);
		ASSERT_EQ(r, -EINVAL);
		/* out is untouched on error */
		ASSERT_EQ(set.n, 1);
		ASSERT_EQ(set.cpu[0], 42);
	}
	ASSERT_EQ(hwt_cpus_parse(NULL, &set), -EINVAL);
	ASSERT_EQ(hwt_cpus_parse("1", NULL), -EINVAL);
	/* the same answers with a reason, and every reason says something */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[128] = "";

		ASSERT_EQ(hwt_cpus_parse_why(bad[i], &set, why, sizeof(why)), -EINVAL);
		if (!why[0])
			TLOG("case %zu: no reason", i);
		ASSERT_TRUE(why[0] != '\0');
	}
	hwt_cpus_free(&set);
}

/* Issue 9: "invalid CPU list" alone did not say why. */
TEST(parse_reasons)
{
	static const struct {
		const char *list, *why;
	} cases[] = {
		{ "100000", "CPU 100000 is above the limit 65535" },
		{ "0-70000", "CPU 70000 is above the limit 65535" },
		{ "1-0", "range 1-0 is reversed" },
		{ "", "the list is empty" },
		{ "0,", "a CPU number is missing at the end" },
		{ "1x", "'x' after 1 (expected ',', '-', ':' or the end)" },
		{ "a", "'a' where a CPU number was expected" },
		{ "0-3:0", "range 0-3: a group size of 0" },
		{ "0-7:3/2", "range 0-7: 3 used of each 2 (expected 1..2)" },
	};
	struct hwt_cpus set = HWT_CPUS_INIT;
	char why[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(hwt_cpus_parse_why(cases[i].list, &set, why, sizeof(why)), -EINVAL);
		ASSERT_STR_EQ(why, cases[i].why);
	}
	ASSERT_OK(hwt_cpus_parse_why("0-3", &set, why, sizeof(why)));
	ASSERT_STR_EQ(why, "");
	ASSERT_EQ(set.n, 4);
	/* no buffer: the plain answer */
	ASSERT_EQ(hwt_cpus_parse_why("1-0", &set, NULL, 0), -EINVAL);
	ASSERT_EQ(hwt_cpus_parse_why(NULL, &set, why, sizeof(why)), -EINVAL);
	hwt_cpus_free(&set);
}

TEST(format_snprintf_semantics)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char buf[8];

	ASSERT_EQ(hwt_cpus_format(&set, buf, sizeof(buf)), 0);
	ASSERT_STR_EQ(buf, "");
	ASSERT_OK(hwt_cpus_parse("0-3,8,100-200", &set));
	ASSERT_EQ(hwt_cpus_format(&set, NULL, 0), 13);
	memset(buf, 'x', sizeof(buf));
	ASSERT_EQ(hwt_cpus_format(&set, buf, sizeof(buf)), 13);
	ASSERT_STR_EQ(buf, "0-3,8,1");
	ASSERT_EQ(hwt_cpus_format(&set, buf, 1), 13);
	ASSERT_STR_EQ(buf, "");
	ASSERT_EQ(hwt_cpus_format(&set, NULL, 5), -EINVAL);
	ASSERT_EQ(hwt_cpus_format(NULL, buf, sizeof(buf)), -EINVAL);
	/* a hand-built array that is not a set */
	set.cpu[1] = 0;
	ASSERT_EQ(hwt_cpus_format(&set, buf, sizeof(buf)), -EINVAL);
	hwt_cpus_free(&set);
}

TEST(format_parse_round_trip)
{
	uint64_t x = 0x9e3779b97f4a7c15u;

	for (int round = 0; round < 200; round++) {
		struct hwt_cpus a = HWT_CPUS_INIT, b = HWT_CPUS_INIT;
		int span = round < 100 ? 64 : 5000; /* >1024 CPUs in the second half */
		int density = 1 + round % 7;

		for (int c = 0; c < span; c++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if ((int)(x % 8) < density)
				ASSERT_OK(hwt_cpus_add(&a, c));
		}
		if (a.n == 0)
			ASSERT_OK(hwt_cpus_add(&a, span - 1));
		ASSERT_OK(hwt_cpus_parse(fmt(&a), &b));
		ASSERT_EQ(a.n, b.n);
		ASSERT_EQ(memcmp(a.cpu, b.cpu, a.n * sizeof(int)), 0);
		hwt_cpus_free(&a);
		hwt_cpus_free(&b);
	}
}

/* ---- sysfs ------------------------------------------------------------ */

TEST(online_from_list_file)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char *root = fake_root();

	/* offline CPUs 3 and 5, no CPUs 8-11 at all */
	write_file(root, "online", "0-2,4,6-7,12\n");
	ASSERT_OK(hwt_cpu_online(root, &set));
	ASSERT_STR_EQ(fmt(&set), "0-2,4,6-7,12");
	write_file(root, "online", "junk\n");
	ASSERT_EQ(hwt_cpu_online(root, &set), -EINVAL);
	ASSERT_STR_EQ(fmt(&set), "0-2,4,6-7,12");
	write_file(root, "online", "\n");
	ASSERT_EQ(hwt_cpu_online(root, &set), -EINVAL);
	hwt_cpus_free(&set);
	rm_tree(root);
}

TEST(online_scan_without_list_file)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char *root = fake_root();

	make_dir(root, "cpu0");                 /* not hotpluggable: no online file */
	write_file(root, "cpu1/online", "1\n");
	write_file(root, "cpu2/online", "0\n"); /* offline */
	write_file(root, "cpu6/online", "1\n"); /* hole: no cpu3-5 */
	make_dir(root, "cpu10/topology");
	make_dir(root, "cpufreq");
	make_dir(root, "cpuidle");
	make_dir(root, "cpu7x");
	ASSERT_OK(hwt_cpu_online(root, &set));
	ASSERT_STR_EQ(fmt(&set), "0-1,6,10");
	hwt_cpus_free(&set);
	rm_tree(root);
}

TEST(online_missing_root)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char *root = fake_root();

	ASSERT_EQ(hwt_cpu_online(root, &set), -ENOENT); /* empty directory */
	ASSERT_EQ(hwt_cpu_online("/nonexistent/hwtune", &set), -ENOENT);
	ASSERT_EQ(hwt_cpu_online(root, NULL), -EINVAL);
	rm_tree(root);
}

TEST(smt_siblings_fake_tree)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	char *root = fake_root();

	/* 2-way SMT numbered "0,4" style; cpu3 offline without topology;
	 * cpu5 only has the newer core_cpus_list; cpu8 is missing (hole) */
	write_file(root, "online", "0-2,4-7,9\n");
	write_file(root, "cpu0/topology/thread_siblings_list", "0,4\n");
	write_file(root, "cpu4/topology/thread_siblings_list", "0,4\n");
	write_file(root, "cpu1/topology/thread_siblings_list", "1-2\n");
	write_file(root, "cpu2/topology/thread_siblings_list", "1-2\n");
	write_file(root, "cpu3/online", "0\n");
	write_file(root, "cpu5/topology/core_cpus_list", "5,7\n");
	write_file(root, "cpu6/topology/thread_siblings_list", "6\n");
	write_file(root, "cpu7/topology/thread_siblings_list", "5\n"); /* omits itself */
	make_dir(root, "cpu9");

	ASSERT_OK(hwt_cpu_smt_siblings(root, 0, &set));
	ASSERT_STR_EQ(fmt(&set), "0,4");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 4, &set));
	ASSERT_STR_EQ(fmt(&set), "0,4");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 2, &set));
	ASSERT_STR_EQ(fmt(&set), "1-2");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 3, &set));
	ASSERT_STR_EQ(fmt(&set), "3");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 5, &set));
	ASSERT_STR_EQ(fmt(&set), "5,7");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 6, &set));
	ASSERT_STR_EQ(fmt(&set), "6");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 7, &set));
	ASSERT_STR_EQ(fmt(&set), "5,7");
	ASSERT_OK(hwt_cpu_smt_siblings(root, 9, &set));
	ASSERT_STR_EQ(fmt(&set), "9");
	ASSERT_EQ(hwt_cpu_smt_siblings(root, 8, &set), -ENOENT);
	ASSERT_STR_EQ(fmt(&set), "9"); /* untouched on error */
	ASSERT_EQ(hwt_cpu_smt_siblings(root, -1, &set), -EINVAL);
	write_file(root, "cpu6/topology/thread_siblings_list", "6,\n");
	ASSERT_EQ(hwt_cpu_smt_siblings(root, 6, &set), -EINVAL);
	ASSERT_OK(hwt_cpu_online(root, &set));
	ASSERT_STR_EQ(fmt(&set), "0-2,4-7,9");
	hwt_cpus_free(&set);
	rm_tree(root);
}

TEST(real_sysfs_consistent)
{
	struct hwt_cpus online = HWT_CPUS_INIT, allowed = HWT_CPUS_INIT, sib = HWT_CPUS_INIT;
	int r = hwt_cpu_online(NULL, &online);

	if (r == -ENOENT)
		SKIP("no /sys/devices/system/cpu");
	ASSERT_OK(r);
	ASSERT_OK(hwt_cpu_allowed(&allowed));
	TLOG("online %s", fmt(&online));
	for (unsigned i = 0; i < allowed.n; i++) {
		ASSERT_TRUE(hwt_cpus_has(&online, allowed.cpu[i]));
		ASSERT_OK(hwt_cpu_smt_siblings(NULL, allowed.cpu[i], &sib));
		ASSERT_TRUE(hwt_cpus_has(&sib, allowed.cpu[i]));
		TLOG("cpu%d siblings %s", allowed.cpu[i], fmt(&sib));
	}
	hwt_cpus_free(&online);
	hwt_cpus_free(&allowed);
	hwt_cpus_free(&sib);
}

/* ---- affinity --------------------------------------------------------- */

TEST(allowed_matches_sched_getaffinity)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	int ncpu = HWT_CPU_ID_MAX + 1;
	cpu_set_t *mask = CPU_ALLOC(ncpu);
	size_t size = CPU_ALLOC_SIZE(ncpu);
	unsigned count = 0;

	ASSERT_TRUE(mask);
	ASSERT_EQ(sched_getaffinity(0, size, mask), 0);
	ASSERT_OK(hwt_cpu_allowed(&set));
	for (int c = 0; c < ncpu; c++) {
		ASSERT_EQ(hwt_cpus_has(&set, c), CPU_ISSET_S(c, size, mask) != 0);
		count += CPU_ISSET_S(c, size, mask) != 0;
	}
	ASSERT_EQ(set.n, count);
	ASSERT_GT(set.n, 0);
	TLOG("allowed %s", fmt(&set));
	CPU_FREE(mask);
	hwt_cpus_free(&set);
	ASSERT_EQ(hwt_cpu_allowed(NULL), -EINVAL);
}

/* Restrict this (forked) test process to one CPU: CPU 0 if allowed. */
static int pin_process_to_first(void)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	cpu_set_t one;
	int cpu;

	ASSERT_OK(hwt_cpu_allowed(&set));
	cpu = set.cpu[0];
	hwt_cpus_free(&set);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	return cpu;
}

TEST(allowed_follows_sched_setaffinity)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	int cpu = pin_process_to_first();

	ASSERT_OK(hwt_cpu_allowed(&set));
	ASSERT_EQ(set.n, 1);
	ASSERT_EQ(set.cpu[0], cpu);
	hwt_cpus_free(&set);
}

/* ---- hwt_cpu_on_each -------------------------------------------------- */

struct probe {
	_Atomic int calls[HWT_CPU_ID_MAX + 1];
	_Atomic int wrong_cpu;
	_Atomic int arrived;
	_Atomic int order[64];
	_Atomic int seq;
	int expect;     /* wait for this many arrivals (0: don't) */
	double wait_s;
	_Atomic int all_met; /* fn calls that saw every other thread arrive */
};

static void record(int cpu, void *arg)
{
	struct probe *p = arg;
	int s = atomic_fetch_add_explicit(&p->seq, 1, memory_order_relaxed);

	if (s < 64)
		atomic_store_explicit(&p->order[s], cpu, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->calls[cpu], 1, memory_order_relaxed);
	if (sched_getcpu() != cpu)
		atomic_fetch_add_explicit(&p->wrong_cpu, 1, memory_order_relaxed);
	/* Parallel only: every pinned thread must be inside fn at the same time.
	 * Wait with sleeps (bounded) for the others to arrive. */
	atomic_fetch_add_explicit(&p->arrived, 1, memory_order_relaxed);
	if (p->expect) {
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			if (atomic_load_explicit(&p->arrived, memory_order_relaxed) >= p->expect) {
				atomic_fetch_add_explicit(&p->all_met, 1, memory_order_relaxed);
				break;
			}
			nanosleep(&(struct timespec){ 0, 100000 }, NULL);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 <
			 p->wait_s);
	}
}

static struct probe *new_probe(int expect)
{
	struct probe *p = calloc(1, sizeof(*p));

	ASSERT_TRUE(p);
	p->expect = expect;
	p->wait_s = 3 * hwt_test_scale();
	return p;
}

static void check_affinity_unchanged(const struct hwt_cpus *before)
{
	struct hwt_cpus after = HWT_CPUS_INIT;

	ASSERT_OK(hwt_cpu_allowed(&after));
	ASSERT_EQ(after.n, before->n);
	ASSERT_EQ(memcmp(after.cpu, before->cpu, after.n * sizeof(int)), 0);
	hwt_cpus_free(&after);
}

/* Run on every allowed CPU plus extras that must fail; check exactly-once. */
static void run_allowed_plus(enum hwt_cpu_run_mode mode, const int *extra, unsigned nextra)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT, set = HWT_CPUS_INIT;
	struct probe *p;
	int *status;

	ASSERT_OK(hwt_cpu_allowed(&allowed));
	ASSERT_OK(hwt_cpus_parse(fmt(&allowed), &set));
	for (unsigned i = 0; i < nextra; i++) {
		if (hwt_cpus_has(&allowed, extra[i]))
			SKIP("cpu %d is allowed here", extra[i]);
		ASSERT_OK(hwt_cpus_add(&set, extra[i]));
	}
	p = new_probe(mode == HWT_CPU_RUN_PARALLEL ? (int)allowed.n : 0);
	status = malloc(set.n * sizeof(int));
	ASSERT_TRUE(status);
	ASSERT_EQ(hwt_cpu_on_each(&set, mode, record, p, status), (int)allowed.n);
	for (unsigned i = 0; i < set.n; i++) {
		int cpu = set.cpu[i];

		if (hwt_cpus_has(&allowed, cpu)) {
			ASSERT_EQ(status[i], 0);
			ASSERT_EQ(atomic_load_explicit(&p->calls[cpu], memory_order_relaxed), 1);
		} else {
			ASSERT_LT(status[i], 0);
			ASSERT_EQ(atomic_load_explicit(&p->calls[cpu], memory_order_relaxed), 0);
		}
	}
	ASSERT_EQ(atomic_load_explicit(&p->seq, memory_order_relaxed), (int)allowed.n);
	ASSERT_EQ(atomic_load_explicit(&p->wrong_cpu, memory_order_relaxed), 0);
	if (mode == HWT_CPU_RUN_PARALLEL)
		ASSERT_EQ(atomic_load_explicit(&p->all_met, memory_order_relaxed),
			  (int)allowed.n);
	else /* in set order */
		for (unsigned i = 0; i < allowed.n && i < 64; i++)
			ASSERT_EQ(atomic_load_explicit(&p->order[i], memory_order_relaxed),
				  allowed.cpu[i]);
	check_affinity_unchanged(&allowed);
	free(status);
	free(p);
	hwt_cpus_free(&allowed);
	hwt_cpus_free(&set);
}

TEST(on_each_cpu_parallel_once_per_cpu)
{
	run_allowed_plus(HWT_CPU_RUN_PARALLEL, NULL, 0);
}

TEST(on_each_cpu_serial_once_per_cpu)
{
	run_allowed_plus(HWT_CPU_RUN_SERIAL, NULL, 0);
}

TEST(on_each_cpu_impossible_cpu_parallel)
{
	static const int extra[] = { 4095, HWT_CPU_ID_MAX };

	run_allowed_plus(HWT_CPU_RUN_PARALLEL, extra, 2);
}

TEST(on_each_cpu_impossible_cpu_serial)
{
	static const int extra[] = { 4095, HWT_CPU_ID_MAX };

	run_allowed_plus(HWT_CPU_RUN_SERIAL, extra, 2);
}

/* Set spanning >1024 CPU numbers: masks bigger than cpu_set_t. */
TEST(on_each_cpu_wide_set)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT, set = HWT_CPUS_INIT;
	struct probe *p = new_probe(0);
	int *status;

	ASSERT_OK(hwt_cpu_allowed(&allowed));
	ASSERT_OK(hwt_cpus_parse("0-1100", &set));
	status = malloc(set.n * sizeof(int));
	ASSERT_TRUE(status);
	for (enum hwt_cpu_run_mode m = HWT_CPU_RUN_PARALLEL; m <= HWT_CPU_RUN_SERIAL; m++) {
		unsigned expect = 0;

		for (unsigned i = 0; i < allowed.n; i++)
			expect += allowed.cpu[i] <= 1100;
		ASSERT_EQ(hwt_cpu_on_each(&set, m, record, p, status), (int)expect);
		for (unsigned i = 0; i < set.n; i++)
			ASSERT_EQ(status[i] == 0, hwt_cpus_has(&allowed, set.cpu[i]));
	}
	ASSERT_EQ(atomic_load_explicit(&p->wrong_cpu, memory_order_relaxed), 0);
	free(status);
	free(p);
	hwt_cpus_free(&allowed);
	hwt_cpus_free(&set);
}

/* A CPU that exists and is online but outside the affinity mask is refused. */
static void outside_mask(enum hwt_cpu_run_mode mode)
{
	struct hwt_cpus online = HWT_CPUS_INIT, set = HWT_CPUS_INIT;
	struct probe *p = new_probe(0);
	int cpu, other = -1, status[2];

	ASSERT_OK(hwt_cpu_allowed(&set));
	if (set.n < 2)
		SKIP("needs two allowed CPUs");
	other = set.cpu[1];
	cpu = pin_process_to_first();
	if (hwt_cpu_online(NULL, &online) == 0)
		ASSERT_TRUE(hwt_cpus_has(&online, other));
	hwt_cpus_free(&set);
	ASSERT_OK(hwt_cpus_add(&set, cpu));
	ASSERT_OK(hwt_cpus_add(&set, other));
	ASSERT_EQ(hwt_cpu_on_each(&set, mode, record, p, status), 1);
	ASSERT_EQ(status[0], 0);
	ASSERT_EQ(status[1], -EINVAL);
	ASSERT_EQ(atomic_load_explicit(&p->calls[cpu], memory_order_relaxed), 1);
	ASSERT_EQ(atomic_load_explicit(&p->calls[other], memory_order_relaxed), 0);
	free(p);
	hwt_cpus_free(&set);
	hwt_cpus_free(&online);
}

TEST(on_each_cpu_outside_affinity_parallel)
{
	outside_mask(HWT_CPU_RUN_PARALLEL);
}

TEST(on_each_cpu_outside_affinity_serial)
{
	outside_mask(HWT_CPU_RUN_SERIAL);
}

TEST(on_each_cpu_arguments)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct probe *p = new_probe(0);

	ASSERT_EQ(hwt_cpu_on_each(&set, HWT_CPU_RUN_PARALLEL, record, p, NULL), 0);
	ASSERT_EQ(hwt_cpu_on_each(NULL, HWT_CPU_RUN_PARALLEL, record, p, NULL), -EINVAL);
	ASSERT_OK(hwt_cpus_add(&set, 0));
	ASSERT_EQ(hwt_cpu_on_each(&set, HWT_CPU_RUN_PARALLEL, NULL, p, NULL), -EINVAL);
	ASSERT_EQ(hwt_cpu_on_each(&set, (enum hwt_cpu_run_mode)7, record, p, NULL), -EINVAL);
	/* status may be NULL */
	ASSERT_OK(hwt_cpu_on_each(&set, HWT_CPU_RUN_SERIAL, record, p, NULL));
	free(p);
	hwt_cpus_free(&set);
}

/* Many repetitions: no lost wakeups or hangs when threads get descheduled. */
TEST_TIMEOUT(on_each_cpu_repeated, 60)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	static const int extra = 4095;
	int reps = hwt_test_scale() > 1 ? 50 : 500;

	ASSERT_OK(hwt_cpu_allowed(&allowed));
	if (hwt_cpus_has(&allowed, extra))
		SKIP("cpu %d is allowed here", extra);
	ASSERT_OK(hwt_cpus_add(&allowed, extra));
	for (int i = 0; i < reps; i++) {
		struct probe *p = new_probe(0);
		int r = hwt_cpu_on_each(&allowed, HWT_CPU_RUN_PARALLEL, record, p, NULL);

		ASSERT_EQ(r, (int)allowed.n - 1);
		ASSERT_EQ(atomic_load_explicit(&p->seq, memory_order_relaxed), r);
		free(p);
	}
	hwt_cpus_free(&allowed);
}
