/* SPDX-License-Identifier: MIT */
/*
 * The probe on this machine's CPUs: every allowed CPU reported, affinity
 * respected, serial and parallel agree, the forced SIGBUS path, overrides,
 * the cache through the public API, SMT waves from a fake sysfs tree.
 * Verdicts are whatever the hardware (or emulator) gives: never a speed or
 * time bound is asserted.
 */
#include "harness/harness.h"

#include "arch/arch.h"
#include "misaligned/misaligned.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cache_dir[64];

/* A private cache directory, so tests never touch the user's. */
static const char *private_cache(void)
{
	snprintf(cache_dir, sizeof(cache_dir), "/tmp/hwt-probe-test.XXXXXX");
	ASSERT_TRUE(mkdtemp(cache_dir) != NULL);
	setenv("XDG_CACHE_HOME", cache_dir, 1);
	return cache_dir;
}

static void drop_cache(void)
{
	rmdir(cache_dir);
}

static void allowed(struct hwt_cpus *set)
{
	ASSERT_OK(hwt_cpu_allowed(set));
	ASSERT_GT(set->n, 0);
}

static bool valid_measured(const struct hwt_misaligned_cpu *c)
{
	if (c->status)
		return false;
	if (c->speed == HWT_MISALIGNED_UNKNOWN) /* only a coarse counter may say so */
		return (c->notes & HWT_MISALIGNED_NOTE_COARSE) != 0;
	if (c->speed == HWT_MISALIGNED_FAST || c->speed == HWT_MISALIGNED_SLOW)
		return c->ratio_x100 > 0 || (c->notes & HWT_MISALIGNED_NOTE_FIRMWARE);
	return c->speed == HWT_MISALIGNED_EMULATED || c->speed == HWT_MISALIGNED_UNSUPPORTED;
}

TEST_TIMEOUT(probe_reports_every_allowed_cpu, 30)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE };
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;

	allowed(&set);
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_EQ(r.n, set.n);
	ASSERT_EQ(r.source, HWT_MISALIGNED_MEASURED);
	ASSERT_FALSE(r.serial);
	ASSERT_EQ(r.waves, 1);
	ASSERT_EQ(r.budget_us, HWT_MISALIGNED_DEFAULT_BUDGET_US);
	ASSERT_GT(r.wall_ns, 0);
	for (unsigned i = 0; i < r.n; i++) {
		const struct hwt_misaligned_cpu *c = &r.cpu[i];

		TLOG("cpu%d: %s ratio %u.%02u word %llu ns byte %llu ns, %u samples x%u, "
		     "probe %llu ns (check %llu), notes 0x%x", c->cpu,
		     hwt_misaligned_speed_name(c->speed), c->ratio_x100 / 100, c->ratio_x100 % 100,
		     (unsigned long long)c->word_ns, (unsigned long long)c->byte_ns, c->samples,
		     c->reps, (unsigned long long)c->probe_ns, (unsigned long long)c->check_ns,
		     c->notes);
		ASSERT_EQ(c->cpu, set.cpu[i]);
		ASSERT_EQ(c->source, HWT_MISALIGNED_MEASURED);
		ASSERT_TRUE(valid_measured(c));
		ASSERT_EQ(c->fault_signal, 0);
		ASSERT_GT(c->probe_ns, 0);
		ASSERT_GE(c->samples, 2);
		ASSERT_GE(c->reps, 1);
		ASSERT_FALSE(c->notes & HWT_MISALIGNED_NOTE_BAD_COPY);
		ASSERT_FALSE(c->notes & HWT_MISALIGNED_NOTE_CHECK_FAILED);
	}
	/* hwprobe's rule, worked out here rather than by the library's function */
	{
		enum hwt_misaligned_speed want = r.cpu[0].speed;

		for (unsigned i = 1; i < r.n; i++)
			if (r.cpu[i].speed != want)
				want = HWT_MISALIGNED_UNKNOWN;
		ASSERT_EQ(r.summary, want);
	}
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
}

TEST_TIMEOUT(probe_respects_affinity, 30)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE };
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;
	cpu_set_t one;

	/* like `taskset -c <first>`: only that CPU may be probed */
	allowed(&set);
	CPU_ZERO(&one);
	CPU_SET(set.cpu[0], &one);
	ASSERT_OK(sched_setaffinity(0, sizeof(one), &one));
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_EQ(r.n, 1);
	ASSERT_EQ(r.cpu[0].cpu, set.cpu[0]);
	ASSERT_TRUE(valid_measured(&r.cpu[0]));
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
}

TEST_TIMEOUT(serial_and_parallel_agree, 60)
{
	struct hwt_misaligned_opts par = { .flags = HWT_MISALIGNED_NO_CACHE };
	struct hwt_misaligned_opts ser = { .flags = HWT_MISALIGNED_NO_CACHE | HWT_MISALIGNED_SERIAL };
	struct hwt_misaligned_report a, b;

	ASSERT_OK(hwt_misaligned_probe(NULL, &par, &a));
	ASSERT_OK(hwt_misaligned_probe(NULL, &ser, &b));
	ASSERT_FALSE(a.serial);
	ASSERT_TRUE(b.serial);
	ASSERT_EQ(a.n, b.n);
	for (unsigned i = 0; i < a.n; i++) {
		ASSERT_EQ(a.cpu[i].cpu, b.cpu[i].cpu);
		/* under an emulator (slow: timeouts scaled) a CPU emulated beside
		 * another may run out of budget before its minimum settles */
		if (hwt_test_scale() > 1 && (a.cpu[i].speed == HWT_MISALIGNED_UNKNOWN ||
					     b.cpu[i].speed == HWT_MISALIGNED_UNKNOWN))
			continue;
		ASSERT_EQ(a.cpu[i].speed, b.cpu[i].speed);
	}
	if (hwt_test_scale() == 1 || (a.summary && b.summary))
		ASSERT_EQ(a.summary, b.summary);
	TLOG("wall: parallel %llu ns, serial %llu ns (%u CPUs)", (unsigned long long)a.wall_ns,
	     (unsigned long long)b.wall_ns, a.n);
	hwt_misaligned_report_free(&a);
	hwt_misaligned_report_free(&b);
}

static volatile sig_atomic_t app_handler_ran;

static void app_handler(int sig)
{
	(void)sig;
	app_handler_ran = 1;
}

TEST_TIMEOUT(forced_sigbus_gives_unsupported, 30)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_misaligned_report r;
	struct sigaction mine, after;
	int ret;

	/* the host program's handler must be back afterwards */
	memset(&mine, 0, sizeof(mine));
	mine.sa_handler = app_handler;
	sigemptyset(&mine.sa_mask);
	ASSERT_OK(sigaction(SIGBUS, &mine, NULL));

	hwt__misaligned_test_hook(HWT__MISALIGNED_FORCE_SIGBUS);
	ret = hwt_misaligned_probe(NULL, &o, &r);
	hwt__misaligned_test_hook(0);
	ASSERT_OK(ret);
	ASSERT_GT(r.n, 0);
	for (unsigned i = 0; i < r.n; i++) {
		ASSERT_EQ(r.cpu[i].status, 0);
		ASSERT_EQ(r.cpu[i].speed, HWT_MISALIGNED_UNSUPPORTED);
		ASSERT_EQ(r.cpu[i].fault_signal, SIGBUS);
		ASSERT_EQ(r.cpu[i].samples, 0); /* no timing after a fault */
	}
	ASSERT_EQ(r.summary, HWT_MISALIGNED_UNSUPPORTED);
	hwt_misaligned_report_free(&r);

	ASSERT_OK(sigaction(SIGBUS, NULL, &after));
	ASSERT_TRUE(!(after.sa_flags & SA_SIGINFO) && after.sa_handler == app_handler);
	raise(SIGBUS);
	ASSERT_EQ(app_handler_ran, 1);
}

TEST(guard_hands_foreign_signals_on)
{
	struct sigaction mine;

	/* While a probe runs, a signal outside an armed check goes to the
	 * handler that was installed before. */
	memset(&mine, 0, sizeof(mine));
	mine.sa_handler = app_handler;
	sigemptyset(&mine.sa_mask);
	ASSERT_OK(sigaction(SIGSEGV, &mine, NULL));
	ASSERT_OK(hwt__fault_guard_enter());
	ASSERT_OK(hwt__fault_guard_enter()); /* nested users */
	raise(SIGSEGV);
	ASSERT_EQ(app_handler_ran, 1);
	hwt__fault_guard_leave();
	hwt__fault_guard_leave();
	ASSERT_OK(sigaction(SIGSEGV, NULL, &mine));
	ASSERT_TRUE(mine.sa_handler == app_handler);
}

TEST(fault_check_needs_the_guard)
{
	struct hwt__fault_result fr;

	ASSERT_EQ(hwt__fault_check(false, false, &fr), -EAGAIN);
	ASSERT_OK(hwt__fault_guard_enter());
	ASSERT_OK(hwt__fault_check(false, false, &fr));
	ASSERT_EQ(fr.sig, 0);
	ASSERT_EQ(fr.faults, -1); /* not asked to count */
	ASSERT_OK(hwt__fault_check(false, true, &fr));
	ASSERT_EQ(fr.sig, 0);
	TLOG("alignment faults counted: %lld (-1: perf unavailable), iteration %llu ns",
	     (long long)fr.faults, (unsigned long long)fr.iter_ns);
	ASSERT_OK(hwt__fault_check(true, false, &fr));
	ASSERT_EQ(fr.sig, SIGBUS);
	/* the thread's signal mask is back: the guard still works */
	ASSERT_OK(hwt__fault_check(true, true, &fr));
	ASSERT_EQ(fr.sig, SIGBUS);
	hwt__fault_guard_leave();
}

TEST(override_skips_probing)
{
	/* both overrides: a scalar one alone still measures the vector units
	 * (tests/unit/misaligned_vector.c) */
	struct hwt_misaligned_opts o = { .override_speed = HWT_MISALIGNED_SLOW,
					 .vector_override_speed = HWT_MISALIGNED_SLOW };
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;

	allowed(&set);
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_EQ(r.n, set.n);
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_OVERRIDE);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(r.waves, 0);
	for (unsigned i = 0; i < r.n; i++) {
		ASSERT_EQ(r.cpu[i].speed, HWT_MISALIGNED_SLOW);
		ASSERT_EQ(r.cpu[i].source, HWT_MISALIGNED_FROM_OVERRIDE);
		ASSERT_EQ(r.cpu[i].probe_ns, 0);
		ASSERT_EQ(r.cpu[i].samples, 0);
	}
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
}

TEST(bad_options_are_rejected)
{
	struct hwt_misaligned_opts o = { .override_speed = HWT_MISALIGNED_EMULATED };
	struct hwt_cpus empty = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;

	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL); /* not a kernel word */
	o = (struct hwt_misaligned_opts){ .override_speed = 7 };
	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL);
	o = (struct hwt_misaligned_opts){ .flags = 0x80000000u };
	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL);
	/* the test seams are not options: only the private hook sets them */
	o = (struct hwt_misaligned_opts){ .flags = HWT__MISALIGNED_FORCE_SIGBUS };
	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL);
	o = (struct hwt_misaligned_opts){ .flags = HWT__MISALIGNED_FORCE_VECTOR_TRAP };
	ASSERT_EQ(hwt_misaligned_cpus(NULL, &o, &r), -EINVAL);
	o = (struct hwt_misaligned_opts){ .budget_us = HWT_MISALIGNED_MAX_BUDGET_US + 1 };
	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL);
	ASSERT_EQ(hwt_misaligned_probe(&empty, NULL, &r), -EINVAL);
	ASSERT_EQ(hwt_misaligned_probe(NULL, NULL, NULL), -EINVAL);
}

TEST_TIMEOUT(cpu_outside_the_allowed_set_is_not_probed, 30)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE };
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;
	int outside;

	allowed(&set);
	outside = set.cpu[set.n - 1] + 1;
	ASSERT_OK(hwt_cpus_add(&set, outside));
	ASSERT_OK(hwt_misaligned_probe(&set, &o, &r));
	ASSERT_EQ(r.n, set.n);
	ASSERT_EQ(r.cpu[r.n - 1].cpu, outside);
	ASSERT_LT(r.cpu[r.n - 1].status, 0);
	ASSERT_EQ(r.cpu[r.n - 1].speed, HWT_MISALIGNED_UNKNOWN);
	/* the summary covers the CPUs that were probed */
	ASSERT_EQ(r.summary, hwt_misaligned_summary(r.cpu, r.n - 1));
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
}

TEST_TIMEOUT(kernel_window_is_two_fixed_windows, 60)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE |
						  HWT_MISALIGNED_KERNEL_WINDOW };
	struct hwt_cpus set = HWT_CPUS_INIT, first = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;

	allowed(&set);
	ASSERT_OK(hwt_cpus_add(&first, set.cpu[0]));
	ASSERT_OK(hwt_misaligned_probe(&first, &o, &r));
	ASSERT_TRUE(r.kernel_window);
	ASSERT_EQ(r.budget_us, 16000);
	ASSERT_EQ(r.cpu[0].reps, 1); /* one copy per sample, as the kernel */
	ASSERT_TRUE(valid_measured(&r.cpu[0]));
	/* each window lasts 8 ms of CLOCK_MONOTONIC: the probe cannot be shorter */
	ASSERT_GE(r.cpu[0].probe_ns, 2 * HWT_MISALIGNED_KERNEL_WINDOW_NS);
	TLOG("kernel window: %u samples, probe %llu ns", r.cpu[0].samples,
	     (unsigned long long)r.cpu[0].probe_ns);
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
	hwt_cpus_free(&first);
}

static char *cache_file(char *buf, size_t len)
{
	snprintf(buf, len, "%s/hwtune/misaligned-%s.cache", cache_dir, HWT_ARCH_NAME);
	return buf;
}

/* The source a read of the cache written from r reports: CACHE if every CPU
 * was cached, but UNKNOWN is never cached (emulators give it at times), and
 * a CPU probed again makes the whole report MEASURED. */
static enum hwt_misaligned_source source_after(const struct hwt_misaligned_report *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_cpu *c = &r->cpu[i];

		if (c->speed == HWT_MISALIGNED_UNKNOWN)
			return HWT_MISALIGNED_MEASURED;
		/* nor is a CPU whose vector result is UNKNOWN while a loop exists */
		if ((c->vector.speed == HWT_MISALIGNED_UNKNOWN &&
		     !(c->vector.notes & HWT_MISALIGNED_NOTE_NO_LOOP)) ||
		    (c->avx2.speed == HWT_MISALIGNED_UNKNOWN &&
		     !(c->avx2.notes & HWT_MISALIGNED_NOTE_NO_LOOP)) ||
		    (c->avx512.speed == HWT_MISALIGNED_UNKNOWN &&
		     !(c->avx512.notes & HWT_MISALIGNED_NOTE_NO_LOOP)))
			return HWT_MISALIGNED_MEASURED;
	}
	return HWT_MISALIGNED_FROM_CACHE;
}

TEST_TIMEOUT(cache_through_the_api, 60)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_misaligned_report a, b;
	struct hwt__cache_key k;
	char path[256], dir[256];
	struct stat st;
	FILE *f;

	private_cache();
	cache_file(path, sizeof(path));
	if (hwt__cache_key_current(&k))
		SKIP("no boot id: the cache is off");
	/* first run measures and writes, second run reads */
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &a));
	ASSERT_EQ(a.source, HWT_MISALIGNED_MEASURED);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.source, source_after(&a));
	ASSERT_EQ(b.n, a.n);
	for (unsigned i = 0; i < a.n; i++) {
		if (a.cpu[i].speed == HWT_MISALIGNED_UNKNOWN ||
		    (a.cpu[i].vector.speed == HWT_MISALIGNED_UNKNOWN &&
		     !(a.cpu[i].vector.notes & HWT_MISALIGNED_NOTE_NO_LOOP)))
			continue; /* not cached: probed again */
		ASSERT_EQ(b.cpu[i].speed, a.cpu[i].speed);
		ASSERT_EQ(b.cpu[i].source, HWT_MISALIGNED_FROM_CACHE);
		ASSERT_EQ(b.cpu[i].ratio_x100, a.cpu[i].ratio_x100);
	}
	hwt_misaligned_report_free(&b);

	/* a corrupt file is ignored, reported, and replaced by a good one */
	f = fopen(path, "a");
	ASSERT_TRUE(f != NULL);
	fputs("garbage\n", f);
	fclose(f);
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.source, HWT_MISALIGNED_MEASURED);
	ASSERT_EQ(b.cache_status, -EBADMSG);
	{
		enum hwt_misaligned_source want = source_after(&b);

		hwt_misaligned_report_free(&b);
		ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
		ASSERT_EQ(b.source, want);
	}
	ASSERT_EQ(b.cache_status, 0);
	hwt_misaligned_report_free(&b);

	/* a file from another boot: foreign, re-measured, rewritten */
	snprintf(k.boot_id, sizeof(k.boot_id), "another-boot");
	ASSERT_OK(hwt__cache_store(path, &k, a.cpu, a.n));
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.source, HWT_MISALIGNED_MEASURED);
	ASSERT_EQ(b.cache_status, -ESTALE);
	{
		enum hwt_misaligned_source want = source_after(&b);

		hwt_misaligned_report_free(&b);
		ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
		ASSERT_EQ(b.source, want);
	}
	hwt_misaligned_report_free(&b);

	/* refresh measures although cached; no-cache neither reads nor writes */
	o.flags = HWT_MISALIGNED_REFRESH;
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.source, HWT_MISALIGNED_MEASURED);
	hwt_misaligned_report_free(&b);
	unlink(path);
	o.flags = HWT_MISALIGNED_NO_CACHE;
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.source, HWT_MISALIGNED_MEASURED);
	ASSERT_TRUE(stat(path, &st) != 0);
	hwt_misaligned_report_free(&b);
	hwt_misaligned_report_free(&a);
	snprintf(dir, sizeof(dir), "%s/hwtune", cache_dir);
	rmdir(dir);
	drop_cache();
}

/* The text of a format-2 file with the same entries as format-3 text t
 * (the avx512 fields, the 20th to 24th numbers of a cpu line, taken out), a
 * right trailer; its length. */
static size_t as_format_2(const char *t, char *out, size_t size)
{
	size_t o = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	int len;

	ASSERT_TRUE(!strncmp(t, "hwtune-misaligned-cache 3\n", 26));
	o = (size_t)snprintf(out, size, "hwtune-misaligned-cache 2\n");
	for (t += 26; strncmp(t, "end ", 4); t = strchr(t, '\n') + 1) {
		const char *eol = strchr(t, '\n');
		unsigned field = 0;

		ASSERT_TRUE(eol && o + (size_t)(eol - t) + 2 < size);
		for (const char *p = t; p <= eol; p++) {
			if (*p == ' ' || *p == '\n')
				field++; /* number n's digits and the space before it: n */
			if (strncmp(t, "cpu ", 4) || field < 20 || field > 24)
				out[o++] = *p;
		}
	}
	for (size_t i = 0; i < o; i++)
		h = (h ^ (unsigned char)out[i]) * 0x100000001b3ull;
	len = snprintf(out + o, size - o, "end %s", strchr(t, ' ') + 1);
	ASSERT_TRUE(len > 0);
	snprintf(strrchr(out + o, ' ') + 1, size - o - (size_t)len, "%016llx\n", (unsigned long long)h);
	return strlen(out);
}

/* A user cache of format 2 (right for its day, no avx512 fields): ignored
 * as corrupt, every CPU measured again, the file replaced by format 3. */
TEST_TIMEOUT(cache_of_format_2_is_measured_again, 60)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_misaligned_report a, b;
	enum hwt_misaligned_source want;
	struct hwt__cache_key k;
	static char text[1 << 16], old[1 << 16];
	char path[256];
	size_t len;
	FILE *f;

	private_cache();
	if (hwt__cache_key_current(&k))
		SKIP("no boot id: the cache is off");
	cache_file(path, sizeof(path));
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &a));
	f = fopen(path, "r");
	ASSERT_TRUE(f != NULL);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	len = as_format_2(text, old, sizeof(old));
	TLOG("format 2:\n%s", old);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(fwrite(old, 1, len, f), len);
	fclose(f);
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.cache_status, -EBADMSG);
	ASSERT_EQ(b.source, HWT_MISALIGNED_MEASURED);
	for (unsigned i = 0; i < b.n; i++)
		ASSERT_EQ(b.cpu[i].source, HWT_MISALIGNED_MEASURED);
	/* the next answer follows what this probe cached, not what a did (a
	 * CPU unknown in a but known now is cached now) */
	want = source_after(&b);
	hwt_misaligned_report_free(&b);
	f = fopen(path, "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(fgets(text, sizeof(text), f) != NULL);
	fclose(f);
	ASSERT_STR_EQ(text, "hwtune-misaligned-cache 3\n");
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &b));
	ASSERT_EQ(b.cache_status, 0);
	ASSERT_EQ(b.source, want);
	hwt_misaligned_report_free(&b);
	hwt_misaligned_report_free(&a);
	unlink(path);
	snprintf(path, sizeof(path), "%s/hwtune", cache_dir);
	rmdir(path);
	drop_cache();
}

TEST_TIMEOUT(cache_missing_cpus_are_probed_and_added, 60)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;
	struct hwt_misaligned_cpu fake = { .cpu = 0, .speed = HWT_MISALIGNED_SLOW,
					   .ratio_x100 = 50,
					   .vector = { .speed = HWT_MISALIGNED_UNSUPPORTED },
					   .avx2 = { .speed = HWT_MISALIGNED_UNSUPPORTED },
					   .avx512 = { .speed = HWT_MISALIGNED_UNSUPPORTED } };
	struct hwt_misaligned_cpu *got;
	struct hwt__cache_key k;
	char path[256], dir[256];
	unsigned n;

	allowed(&set);
	if (set.n < 2)
		SKIP("needs two allowed CPUs");
	private_cache();
	if (hwt__cache_key_current(&k))
		SKIP("no boot id: the cache is off");
	cache_file(path, sizeof(path));
	snprintf(dir, sizeof(dir), "%s/hwtune", cache_dir);
	ASSERT_OK(mkdir(dir, 0700));
	/* the cache knows only the first CPU (and says SLOW, to tell it apart) */
	fake.cpu = set.cpu[0];
	ASSERT_OK(hwt__cache_store(path, &k, &fake, 1));
	ASSERT_OK(hwt_misaligned_probe(&set, &o, &r));
	ASSERT_EQ(r.source, HWT_MISALIGNED_MEASURED);
	ASSERT_EQ(r.cpu[0].source, HWT_MISALIGNED_FROM_CACHE);
	ASSERT_EQ(r.cpu[0].speed, HWT_MISALIGNED_SLOW);
	unsigned want = 1; /* the cached CPU, plus every measured one with a verdict */

	for (unsigned i = 1; i < r.n; i++) {
		ASSERT_EQ(r.cpu[i].source, HWT_MISALIGNED_MEASURED);
		want += hwt__cache_keeps(&r.cpu[i]);
	}
	hwt_misaligned_report_free(&r);
	ASSERT_OK(hwt__cache_load(path, &k, &got, &n));
	ASSERT_EQ(n, want); /* missing CPUs were probed and added */
	TLOG("cache now holds %u of %u CPUs", n, set.n);
	free(got);
	hwt_cpus_free(&set);
	unlink(path);
	rmdir(dir);
	drop_cache();
}

TEST_TIMEOUT(smt_apart_uses_waves_from_sysfs, 30)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE |
						  HWT_MISALIGNED_SMT_APART };
	struct hwt_cpus set = HWT_CPUS_INIT, two = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;
	char root[64], p[256], list[64];
	FILE *f;

	allowed(&set);
	if (set.n < 2)
		SKIP("needs two allowed CPUs");
	/* a fake tree in which the first two allowed CPUs are SMT siblings */
	snprintf(root, sizeof(root), "/tmp/hwt-sysfs-test.XXXXXX");
	ASSERT_TRUE(mkdtemp(root) != NULL);
	snprintf(list, sizeof(list), "%d,%d\n", set.cpu[0], set.cpu[1]);
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/cpu%d", root, set.cpu[i]);
		ASSERT_OK(mkdir(p, 0755));
		snprintf(p, sizeof(p), "%s/cpu%d/topology", root, set.cpu[i]);
		ASSERT_OK(mkdir(p, 0755));
		snprintf(p, sizeof(p), "%s/cpu%d/topology/thread_siblings_list", root, set.cpu[i]);
		f = fopen(p, "w");
		ASSERT_TRUE(f != NULL);
		fputs(list, f);
		fclose(f);
	}
	ASSERT_OK(hwt_cpus_add(&two, set.cpu[0]));
	ASSERT_OK(hwt_cpus_add(&two, set.cpu[1]));
	o.sysfs_root = root;
	ASSERT_OK(hwt_misaligned_probe(&two, &o, &r));
	ASSERT_TRUE(r.smt_apart);
	ASSERT_EQ(r.waves, 2);
	ASSERT_EQ(r.cpu[0].wave, 0);
	ASSERT_EQ(r.cpu[1].wave, 1);
	ASSERT_TRUE(valid_measured(&r.cpu[0]) && valid_measured(&r.cpu[1]));
	hwt_misaligned_report_free(&r);
	/* siblings together (the default): one wave */
	o.flags &= ~HWT_MISALIGNED_SMT_APART;
	ASSERT_OK(hwt_misaligned_probe(&two, &o, &r));
	ASSERT_EQ(r.waves, 1);
	ASSERT_EQ(r.cpu[1].wave, 0);
	hwt_misaligned_report_free(&r);
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/cpu%d/topology/thread_siblings_list", root, set.cpu[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s/cpu%d/topology", root, set.cpu[i]);
		rmdir(p);
		snprintf(p, sizeof(p), "%s/cpu%d", root, set.cpu[i]);
		rmdir(p);
	}
	rmdir(root);
	hwt_cpus_free(&set);
	hwt_cpus_free(&two);
}

static void *ask_speed(void *p)
{
	*(int *)p = hwt_misaligned_speed();
	return NULL;
}

TEST_TIMEOUT(one_call_answer_is_shared_by_threads, 30)
{
	pthread_t t[4];
	int got[4];
	char path[256], dir[256];

	private_cache();
	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, ask_speed, &got[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	TLOG("hwt_misaligned_speed() = %d (%s)", got[0], hwt_misaligned_speed_name(got[0]));
	ASSERT_TRUE(got[0] >= 0 && got[0] <= HWT_MISALIGNED_UNSUPPORTED);
	for (int i = 1; i < 4; i++)
		ASSERT_EQ(got[i], got[0]);
	/* computed once: a later override no longer changes the answer */
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED",
	       got[0] == HWT_MISALIGNED_SLOW ? "fast" : "slow", 1);
	ASSERT_EQ(hwt_misaligned_speed(), got[0]);
	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	unlink(cache_file(path, sizeof(path)));
	snprintf(dir, sizeof(dir), "%s/hwtune", cache_dir);
	rmdir(dir);
	drop_cache();
}

TEST(one_call_answer_honours_the_environment)
{
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "unsupported", 1);
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_UNSUPPORTED);
}

TEST(one_call_answer_rejects_a_bad_environment)
{
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "turbo", 1);
	ASSERT_EQ(hwt_misaligned_speed(), -EINVAL);
}

/* hwt_misaligned_cpus answers for exactly the CPUs asked, leaves the
 * caller's affinity alone and refuses a CPU the caller may not run on. */
TEST_TIMEOUT(cpus_answers_for_exactly_that_set, 30)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE | HWT_MISALIGNED_NO_VECTOR,
					 .budget_us = 200 };
	struct hwt_cpus set = HWT_CPUS_INIT, one = HWT_CPUS_INIT, after = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;

	allowed(&set);
	ASSERT_OK(hwt_cpus_add(&one, set.cpu[set.n - 1]));
	ASSERT_OK(hwt_misaligned_cpus(&one, &o, &r));
	ASSERT_EQ(r.n, 1);
	ASSERT_EQ(r.cpu[0].cpu, set.cpu[set.n - 1]);
	ASSERT_EQ(r.cpu[0].status, 0);
	ASSERT_EQ(r.source, HWT_MISALIGNED_MEASURED);
	ASSERT_EQ(r.summary, r.cpu[0].speed);
	hwt_misaligned_report_free(&r);
	allowed(&after);
	ASSERT_EQ(after.n, set.n); /* the caller was not pinned */
	/* an override answers every CPU asked, no probe */
	o.override_speed = HWT_MISALIGNED_FAST;
	o.vector_override_speed = HWT_MISALIGNED_SLOW;
	ASSERT_OK(hwt_misaligned_cpus(&one, &o, &r));
	ASSERT_EQ(r.n, 1);
	ASSERT_EQ(r.cpu[0].cpu, one.cpu[0]);
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_OVERRIDE);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_FAST);
	hwt_misaligned_report_free(&r);
	/* NULL: the calling thread's CPUs, as hwt_misaligned_self */
	ASSERT_OK(hwt_misaligned_cpus(NULL, &o, &r));
	ASSERT_EQ(r.n, set.n);
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
	hwt_cpus_free(&one);
	hwt_cpus_free(&after);
}

TEST(cpus_refuses_a_cpu_outside_the_allowed_set)
{
	struct hwt_misaligned_opts o = { .override_speed = HWT_MISALIGNED_FAST };
	struct hwt_cpus set = HWT_CPUS_INIT, empty = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;

	allowed(&set);
	ASSERT_OK(hwt_cpus_add(&set, set.cpu[set.n - 1] + 1));
	r.n = 7;
	ASSERT_EQ(hwt_misaligned_cpus(&set, &o, &r), -EINVAL); /* even with an override */
	ASSERT_EQ(r.n, 0);
	ASSERT_TRUE(r.cpu == NULL);
	ASSERT_EQ(hwt_misaligned_cpus(&empty, &o, &r), -EINVAL);
	ASSERT_EQ(hwt_misaligned_cpus(&set, &o, NULL), -EINVAL);
	hwt_cpus_free(&set);
}
