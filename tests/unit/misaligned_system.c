/* SPDX-License-Identifier: MIT */
/* The system-wide result file (round trip, every reason to distrust it,
 * atomic replacement) and the one-call order: system > user cache > probe,
 * over the calling thread's CPUs. */
#include "harness/harness.h"
#include "harness/sysfile.h"

#include "misaligned/misaligned.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA "tests/data/ident/"

TEST(system_round_trip)
{
	struct hwt_misaligned_report r, back;
	struct hwt_cpus set;
	char *d = sf_tmpdir(), path[512];
	struct stat st;

	sf_need_root();
	sf_online(&set, 4); /* on 2 CPUs: 0-1,5 */
	sf_report(&r, &set, HWT_MISALIGNED_FAST);
	r.cpu[1].speed = HWT_MISALIGNED_SLOW;
	ASSERT_OK(hwt_misaligned_system_write(d, &r));
	sf_path_in(path, sizeof(path), d);
	ASSERT_EQ(lstat(path, &st), 0);
	ASSERT_TRUE(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 07777, 0644);
	ASSERT_OK(hwt_misaligned_system_read(d, NULL, &back));
	ASSERT_EQ(back.source, HWT_MISALIGNED_FROM_SYSTEM);
	ASSERT_EQ(back.n, r.n);
	for (unsigned i = 0; i < r.n; i++) {
		ASSERT_EQ(back.cpu[i].cpu, r.cpu[i].cpu);
		ASSERT_EQ(back.cpu[i].speed, r.cpu[i].speed);
		ASSERT_EQ(back.cpu[i].vector.speed, HWT_MISALIGNED_FAST);
		ASSERT_EQ(back.cpu[i].vector.ratio_x100, 900);
		ASSERT_EQ(back.cpu[i].ratio_x100, r.cpu[i].ratio_x100);
		ASSERT_EQ(back.cpu[i].source, HWT_MISALIGNED_FROM_SYSTEM);
		ASSERT_EQ(back.cpu[i].vector_source, HWT_MISALIGNED_FROM_SYSTEM);
	}
	ASSERT_EQ(back.summary, HWT_MISALIGNED_UNKNOWN); /* fast and slow */
	ASSERT_EQ(back.vector_summary, HWT_MISALIGNED_FAST);
	hwt_misaligned_report_free(&back);
	/* a vector override is not a measurement either */
	r.cpu[1].vector_source = HWT_MISALIGNED_FROM_OVERRIDE;
	ASSERT_EQ(hwt_misaligned_system_write(d, &r), -EINVAL);
	r.cpu[1].vector_source = HWT_MISALIGNED_MEASURED;
	/* nothing the file keeps (vector results unknown): the good file stays */
	for (unsigned i = 0; i < r.n; i++)
		r.cpu[i].vector.speed = HWT_MISALIGNED_UNKNOWN;
	ASSERT_EQ(hwt_misaligned_system_write(d, &r), -EINVAL);
	ASSERT_OK(hwt_misaligned_system_read(d, NULL, &back));
	ASSERT_EQ(back.n, r.n);
	hwt_misaligned_report_free(&back);
	/* an override is not a measurement */
	r.source = HWT_MISALIGNED_FROM_OVERRIDE;
	ASSERT_EQ(hwt_misaligned_system_write(d, &r), -EINVAL);
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
	sf_rm_tree(d);
}

TEST(system_key_follows_the_tree)
{
	struct hwt__cache_key arm, rv, here;

	ASSERT_OK(hwt__system_key(DATA "arm64-biglittle", &arm));
	ASSERT_OK(hwt__system_key(DATA "riscv-two-types", &rv));
	ASSERT_OK(hwt__system_key(NULL, &here));
	ASSERT_STR_EQ(arm.boot_id, "0b7e6a4c-1d2f-4a8e-9c3b-5f6d7e8f9a0b");
	ASSERT_STR_EQ(arm.kernel, "6.6.0-fake");
	ASSERT_STR_EQ(arm.version, hwt_version());
	ASSERT_TRUE(strcmp(arm.model, rv.model) != 0); /* other identities */
	ASSERT_TRUE(strcmp(arm.boot_id, here.boot_id) != 0);
	/* a tree without a boot id cannot key a file */
	ASSERT_TRUE(hwt__system_key(DATA "x86-hybrid", &arm) < 0);
}

/* Store entries under key k at path, then load with key want. */
static int store_load(const char *path, const struct hwt__cache_key *k,
		      const struct hwt__cache_key *want)
{
	struct hwt_misaligned_report r;
	struct hwt_misaligned_cpu *e;
	struct hwt_cpus set;
	unsigned n;
	int ret;

	sf_cpus(&set, "0-3");
	sf_report(&r, &set, HWT_MISALIGNED_FAST);
	ASSERT_OK(hwt__system_store(path, k, r.cpu, r.n));
	ret = hwt__system_load(path, want, geteuid(), &e, &n);
	if (ret == 0) {
		ASSERT_EQ(n, 4);
		ASSERT_EQ(e[0].source, HWT_MISALIGNED_FROM_SYSTEM);
	}
	free(e);
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
	return ret;
}

static void rewrite_byte(const char *path, long off, char c)
{
	int fd = open(path, O_WRONLY);

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

TEST(system_file_rejections)
{
	struct hwt__cache_key k, other;
	struct hwt_misaligned_cpu *e;
	char *d = sf_tmpdir(), path[512], link[600];
	unsigned n;

	ASSERT_OK(hwt__system_key(NULL, &k));
	sf_path_in(path, sizeof(path), d);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -ENOENT);
	ASSERT_OK(store_load(path, &k, &k));

	other = k;
	snprintf(other.boot_id, sizeof(other.boot_id), "another-boot");
	ASSERT_EQ(store_load(path, &other, &k), -ESTALE);
	other = k;
	snprintf(other.version, sizeof(other.version), "0.0.9");
	ASSERT_EQ(store_load(path, &other, &k), -ESTALE);
	other = k;
	snprintf(other.kernel, sizeof(other.kernel), "5.10.0-other");
	ASSERT_EQ(store_load(path, &other, &k), -ESTALE);
	other = k;
	snprintf(other.model, sizeof(other.model), "id-0000000000000000");
	ASSERT_EQ(store_load(path, &other, &k), -ESTALE);

	/* corrupt: one byte of an entry changed */
	ASSERT_OK(store_load(path, &k, &k));
	rewrite_byte(path, 200, 'x');
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -EBADMSG);
	/* truncated */
	ASSERT_OK(store_load(path, &k, &k));
	ASSERT_EQ(truncate(path, 100), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -EBADMSG);

	/* group- or world-writable */
	ASSERT_OK(store_load(path, &k, &k));
	ASSERT_EQ(chmod(path, 0664), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -EACCES);
	ASSERT_EQ(chmod(path, 0646), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -EACCES);
	/* writable by others and owned by another: both are reasons; the
	 * owner is named first */
	ASSERT_EQ(hwt__system_load(path, &k, geteuid() + 1, &e, &n), -EPERM);
	ASSERT_EQ(chmod(path, 0644), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), 0);
	free(e);
	/* another owner */
	ASSERT_EQ(hwt__system_load(path, &k, geteuid() + 1, &e, &n), -EPERM);
	if (geteuid() == 0) {
		ASSERT_EQ(chown(path, 65534, 65534), 0);
		ASSERT_EQ(hwt__system_load(path, &k, 0, &e, &n), -EPERM);
		ASSERT_EQ(chown(path, 0, 0), 0);
	}
	/* a symlink to a good file */
	snprintf(link, sizeof(link), "%s.good", path);
	ASSERT_EQ(rename(path, link), 0);
	ASSERT_EQ(symlink(link, path), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -ELOOP);
	ASSERT_EQ(unlink(path), 0);
	/* not a regular file: a directory, a FIFO (must not block) */
	ASSERT_EQ(mkdir(path, 0755), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -ENXIO);
	ASSERT_EQ(rmdir(path), 0);
	ASSERT_EQ(mkfifo(path, 0644), 0);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -ENXIO);
	ASSERT_TRUE(e == NULL && n == 0);
	sf_rm_tree(d);
}

TEST(system_runtime_dir_from_environment)
{
	char path[512];

	setenv("HWTUNE_RUNTIME_DIR", "/tmp/some-run", 1);
	ASSERT_OK(hwt__system_path(NULL, false, path, sizeof(path)));
	ASSERT_TRUE(strncmp(path, "/tmp/some-run/misaligned-", 25) == 0);
	setenv("HWTUNE_RUNTIME_DIR", "relative/dir", 1);
	ASSERT_EQ(hwt__system_path(NULL, false, path, sizeof(path)), -EINVAL);
	unsetenv("HWTUNE_RUNTIME_DIR");
	ASSERT_OK(hwt__system_path(NULL, false, path, sizeof(path)));
	ASSERT_TRUE(strncmp(path, HWT_MISALIGNED_RUNTIME_DIR "/misaligned-", strlen(HWT_MISALIGNED_RUNTIME_DIR "/misaligned-")) == 0);
}

/* --- atomic replacement ------------------------------------------------------ */

struct race {
	const char *path;
	struct hwt__cache_key k;
	atomic_bool done;
	int rounds;
};

static void *writer(void *arg)
{
	struct race *x = arg;
	struct hwt_misaligned_report a, b;
	struct hwt_cpus set;

	sf_cpus(&set, "0-255");
	sf_report(&a, &set, HWT_MISALIGNED_FAST);
	sf_report(&b, &set, HWT_MISALIGNED_SLOW);
	for (int i = 0; i < x->rounds; i++) {
		const struct hwt_misaligned_report *r = i % 2 ? &b : &a;

		ASSERT_OK(hwt__system_store(x->path, &x->k, r->cpu, r->n));
	}
	atomic_store_explicit(&x->done, true, memory_order_release); /* pairs with reader's acquire */
	hwt_misaligned_report_free(&a);
	hwt_misaligned_report_free(&b);
	hwt_cpus_free(&set);
	return NULL;
}

TEST_TIMEOUT(system_file_is_replaced_atomically, 60)
{
	struct race x = { .rounds = 400 };
	char *d = sf_tmpdir(), path[512];
	unsigned reads = 0, whole = 0;
	pthread_t t;

	sf_path_in(path, sizeof(path), d);
	x.path = path;
	ASSERT_OK(hwt__system_key(NULL, &x.k));
	ASSERT_EQ(pthread_create(&t, NULL, writer, &x), 0);
	/* pairs with the writer's release: every store is done when seen */
	while (!atomic_load_explicit(&x.done, memory_order_acquire)) {
		struct hwt_misaligned_cpu *e;
		unsigned n;
		int r = hwt__system_load(path, &x.k, geteuid(), &e, &n);

		reads++;
		if (r == -ENOENT && whole == 0)
			continue; /* before the first rename */
		ASSERT_EQ(r, 0);
		ASSERT_EQ(n, 256);
		for (unsigned i = 1; i < n; i++)
			ASSERT_EQ(e[i].speed, e[0].speed); /* one version, never a mix */
		whole++;
		free(e);
	}
	ASSERT_EQ(pthread_join(t, NULL), 0);
	TLOG("%u reads, %u whole files while %d writes", reads, whole, x.rounds);
	ASSERT_GT(whole, 0);
	sf_rm_tree(d);
}

/* --- the one-call order ---------------------------------------------------- */

struct env {
	char *run, *cache;
	char cache_path[512];
	struct hwt_cpus allowed;
};

static void env_setup(struct env *v)
{
	v->run = sf_tmpdir();
	v->cache = sf_tmpdir();
	setenv("HWTUNE_RUNTIME_DIR", v->run, 1);
	setenv("XDG_CACHE_HOME", v->cache, 1);
	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	ASSERT_OK(hwt__cache_path(NULL, v->cache_path, sizeof(v->cache_path)));
	v->allowed = (struct hwt_cpus)HWT_CPUS_INIT;
	ASSERT_OK(hwt_cpu_allowed(&v->allowed));
}

static void env_teardown(struct env *v)
{
	sf_rm_tree(v->run);
	sf_rm_tree(v->cache);
	hwt_cpus_free(&v->allowed);
}

static void write_user_cache(struct env *v, int speed)
{
	struct hwt__cache_key k;
	struct hwt_misaligned_report r;

	ASSERT_OK(hwt__cache_key_current(&k));
	sf_report(&r, &v->allowed, speed);
	ASSERT_OK(hwt__cache_store(v->cache_path, &k, r.cpu, r.n));
	hwt_misaligned_report_free(&r);
}

static void write_system(const struct hwt_cpus *set, int speed)
{
	struct hwt_misaligned_report r;

	sf_report(&r, set, speed);
	ASSERT_OK(hwt_misaligned_system_write(NULL, &r));
	hwt_misaligned_report_free(&r);
}

TEST_TIMEOUT(one_call_order_system_then_cache_then_probe, 30)
{
	struct hwt_misaligned_opts o = { .budget_us = 300 };
	struct hwt_misaligned_report r;
	struct env v;
	char sys[512];

	sf_need_root();
	env_setup(&v);
	/* markers no probe here gives: the cache says SLOW, the system UNSUPPORTED */
	write_user_cache(&v, HWT_MISALIGNED_SLOW);
	write_system(&v.allowed, HWT_MISALIGNED_UNSUPPORTED);

	ASSERT_OK(hwt_misaligned_self(&o, &r));
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_SYSTEM);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(r.vector_summary, HWT_MISALIGNED_FAST); /* make_report's vector verdict */
	ASSERT_EQ(r.n, v.allowed.n);
	ASSERT_EQ(r.system_status, 0);
	hwt_misaligned_report_free(&r);
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_UNSUPPORTED);

	/* a system file we must not trust: the user cache answers */
	sf_path_in(sys, sizeof(sys), v.run);
	ASSERT_EQ(chmod(sys, 0666), 0);
	ASSERT_OK(hwt_misaligned_self(&o, &r));
	ASSERT_EQ(r.system_status, -EACCES);
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_CACHE);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(r.vector_summary, HWT_MISALIGNED_FAST);
	hwt_misaligned_report_free(&r);

	/* no system file: the user cache */
	ASSERT_EQ(unlink(sys), 0);
	ASSERT_OK(hwt_misaligned_self(&o, &r));
	ASSERT_EQ(r.system_status, -ENOENT);
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_CACHE);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_SLOW);
	hwt_misaligned_report_free(&r);

	/* neither: a probe */
	ASSERT_EQ(unlink(v.cache_path), 0);
	ASSERT_OK(hwt_misaligned_self(&o, &r));
	ASSERT_EQ(r.source, HWT_MISALIGNED_MEASURED);
	ASSERT_EQ(r.cpu[0].source, HWT_MISALIGNED_MEASURED);
	hwt_misaligned_report_free(&r);

	/* the environment override beats all */
	write_system(&v.allowed, HWT_MISALIGNED_UNSUPPORTED);
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "fast", 1);
	ASSERT_OK(hwt_misaligned_self(&o, &r));
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_OVERRIDE);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_FAST);
	hwt_misaligned_report_free(&r);
	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	/* the vector variable alone is an override too: the files are not read */
	setenv("HWTUNE_UNALIGNED_VECTOR_SPEED", "slow", 1);
	ASSERT_OK(hwt_misaligned_self(&o, &r));
	ASSERT_EQ(r.vector_summary, HWT_MISALIGNED_SLOW);
	ASSERT_TRUE(r.summary != HWT_MISALIGNED_UNSUPPORTED); /* measured, not the system file */
	hwt_misaligned_report_free(&r);
	unsetenv("HWTUNE_UNALIGNED_VECTOR_SPEED");
	env_teardown(&v);
}

static void pin(const char *list)
{
	struct hwt_cpus set;
	cpu_set_t m;

	sf_cpus(&set, list);
	CPU_ZERO(&m);
	for (unsigned i = 0; i < set.n; i++)
		CPU_SET(set.cpu[i], &m);
	ASSERT_EQ(sched_setaffinity(0, sizeof(m), &m), 0);
	hwt_cpus_free(&set);
}

TEST_TIMEOUT(speed_answers_for_the_threads_own_cpus, 30)
{
	struct hwt_misaligned_report r, one;
	struct env v;
	char a[16], b[16], ab[32], sys[512];

	sf_need_root();
	env_setup(&v);
	if (v.allowed.n < 2)
		SKIP("needs 2 allowed CPUs, have %u", v.allowed.n);
	snprintf(a, sizeof(a), "%d", v.allowed.cpu[0]);
	snprintf(b, sizeof(b), "%d", v.allowed.cpu[1]);
	snprintf(ab, sizeof(ab), "%d,%d", v.allowed.cpu[0], v.allowed.cpu[1]);
	sf_report(&r, &v.allowed, HWT_MISALIGNED_FAST);
	r.cpu[1].speed = HWT_MISALIGNED_EMULATED; /* a big.LITTLE-like mix */
	ASSERT_OK(hwt_misaligned_system_write(NULL, &r));
	hwt_misaligned_report_free(&r);

	pin(a);
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_FAST);
	ASSERT_OK(hwt_misaligned_self(NULL, &one));
	ASSERT_EQ(one.n, 1);
	ASSERT_EQ(one.summary, HWT_MISALIGNED_FAST);
	hwt_misaligned_report_free(&one);
	pin(b);
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_EMULATED);
	pin(ab);
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_UNKNOWN);
	/* remembered per process: the file's removal changes nothing now */
	sf_path_in(sys, sizeof(sys), v.run);
	ASSERT_EQ(unlink(sys), 0);
	pin(a);
	ASSERT_EQ(hwt_misaligned_speed(), HWT_MISALIGNED_FAST);
	env_teardown(&v);
}

TEST_TIMEOUT(system_probe_writes_what_it_measured, 30)
{
	struct hwt_misaligned_opts o = { .budget_us = 300 };
	struct hwt_misaligned_report r, back;
	char *d = sf_tmpdir(), path[512];
	struct stat st;

	o.runtime_dir = d;
	ASSERT_OK(hwt_misaligned_system_probe(&o, &r));
	ASSERT_EQ(r.source, HWT_MISALIGNED_MEASURED);
	ASSERT_TRUE(r.cache_off);
	sf_path_in(path, sizeof(path), d);
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_EQ(st.st_mode & 07777, 0644);
	if (geteuid() == 0) {
		ASSERT_OK(hwt_misaligned_system_read(d, NULL, &back));
		ASSERT_EQ(back.summary, r.summary);
		hwt_misaligned_report_free(&back);
	}
	hwt_misaligned_report_free(&r);
	o.override_speed = HWT_MISALIGNED_FAST;
	ASSERT_EQ(hwt_misaligned_system_probe(&o, &r), -EINVAL);
	o.override_speed = 0;
	o.vector_override_speed = HWT_MISALIGNED_FAST;
	ASSERT_EQ(hwt_misaligned_system_probe(&o, &r), -EINVAL);
	o.vector_override_speed = 0;
	o.flags = HWT_MISALIGNED_NO_VECTOR;
	ASSERT_EQ(hwt_misaligned_system_probe(&o, &r), -EINVAL);
	sf_rm_tree(d);
}

/* For a system probe as root into a new folder (returned): a short budget. */
static char *system_probe_opts(struct hwt_misaligned_opts *o)
{
	char *d;

	sf_need_root();
	d = sf_tmpdir();
	*o = (struct hwt_misaligned_opts){ .budget_us = 300, .runtime_dir = d };
	return d;
}

/* A CPU whose measurement came out unknown is measured again: the file
 * must hold every online CPU, and its summary be the one reported (the
 * file left an unknown CPU out, and read back "fast" for a report that
 * said "unknown"). */
TEST_TIMEOUT(system_probe_measures_an_unknown_cpu_again, 30)
{
	struct hwt_misaligned_opts o;
	struct hwt_misaligned_report r, back;
	char *d = system_probe_opts(&o);

	hwt__misaligned_test_unknown(1);
	ASSERT_OK(hwt_misaligned_system_probe(&o, &r));
	hwt__misaligned_test_unknown(0);
	for (unsigned i = 0; i < r.n; i++)
		ASSERT_TRUE(r.cpu[i].speed != HWT_MISALIGNED_UNKNOWN);
	ASSERT_OK(hwt_misaligned_system_read(d, NULL, &back));
	ASSERT_EQ(back.n, r.n);
	ASSERT_EQ(back.summary, r.summary);
	hwt_misaligned_report_free(&back);
	hwt_misaligned_report_free(&r);
	sf_rm_tree(d);
}

/* Unknown on every try: -EAGAIN, those CPUs named by status, and the good
 * file stays as it was; a report with an unknown CPU is not written either. */
TEST_TIMEOUT(system_probe_writes_nothing_while_a_cpu_stays_unknown, 30)
{
	struct hwt_misaligned_opts o;
	struct hwt_misaligned_report r, back;
	char *d = system_probe_opts(&o);

	ASSERT_OK(hwt_misaligned_system_probe(&o, &r));
	hwt__misaligned_test_unknown(1000);
	ASSERT_EQ(hwt_misaligned_system_write(d, &(struct hwt_misaligned_report){ 0 }), -EINVAL);
	r.cpu[0].speed = HWT_MISALIGNED_UNKNOWN;
	ASSERT_EQ(hwt_misaligned_system_write(d, &r), -EINVAL);
	hwt_misaligned_report_free(&r);
	ASSERT_EQ(hwt_misaligned_system_probe(&o, &r), -EAGAIN);
	hwt__misaligned_test_unknown(0);
	ASSERT_TRUE(r.n > 0);
	for (unsigned i = 0; i < r.n; i++)
		ASSERT_EQ(r.cpu[i].status, -EAGAIN);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_UNKNOWN);
	hwt_misaligned_report_free(&r);
	ASSERT_OK(hwt_misaligned_system_read(d, NULL, &back));
	ASSERT_TRUE(back.summary != HWT_MISALIGNED_UNKNOWN);
	hwt_misaligned_report_free(&back);
	sf_rm_tree(d);
}

TEST_TIMEOUT(system_folder_is_readable_whatever_the_umask, 30)
{
	struct hwt_misaligned_opts o = { .budget_us = 300 };
	struct hwt_misaligned_report r;
	char *d = sf_tmpdir(), sub[512];
	struct stat st;
	mode_t old;

	snprintf(sub, sizeof(sub), "%s/run", d);
	o.runtime_dir = sub;
	old = umask(077);
	ASSERT_OK(hwt_misaligned_system_probe(&o, &r));
	umask(old);
	hwt_misaligned_report_free(&r);
	ASSERT_EQ(stat(sub, &st), 0);
	ASSERT_EQ(st.st_mode & 07777, 0755);
	sf_rm_tree(d);
}

TEST(system_key_does_not_depend_on_the_callers_cpu)
{
	struct hwt__cache_key free_k, pinned;
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	char one[16];

	ASSERT_OK(hwt_cpu_allowed(&allowed));
	ASSERT_OK(hwt__system_key(NULL, &free_k));
	snprintf(one, sizeof(one), "%d", allowed.cpu[allowed.n - 1]);
	pin(one);
	ASSERT_OK(hwt__system_key(NULL, &pinned));
	ASSERT_STR_EQ(pinned.model, free_k.model);
	hwt_cpus_free(&allowed);
}

/* The system result covers every online CPU whatever the caller's affinity:
 * pinned to one CPU, --system still probes and writes them all, and leaves
 * the caller's mask as it was. */
TEST_TIMEOUT(system_probe_covers_every_online_cpu_when_pinned, 60)
{
	struct hwt_misaligned_opts o = { .budget_us = 300 };
	struct hwt_cpus online = HWT_CPUS_INIT, after = HWT_CPUS_INIT;
	struct hwt_misaligned_report r, back;
	char *d = sf_tmpdir(), one[16];

	ASSERT_OK(hwt_cpu_online(NULL, &online));
	if (online.n < 2)
		SKIP("needs 2 online CPUs, have %u", online.n);
	o.runtime_dir = d;
	snprintf(one, sizeof(one), "%d", online.cpu[0]);
	pin(one);
	ASSERT_OK(hwt_misaligned_system_probe(&o, &r));
	ASSERT_EQ(r.n, online.n);
	for (unsigned i = 0; i < r.n; i++) {
		ASSERT_EQ(r.cpu[i].cpu, online.cpu[i]);
		ASSERT_EQ(r.cpu[i].status, 0);
	}
	ASSERT_OK(hwt_cpu_allowed(&after));
	ASSERT_EQ(after.n, 1); /* the caller's affinity is its own */
	ASSERT_EQ(after.cpu[0], online.cpu[0]);
	ASSERT_OK(hwt_misaligned_system_read(d, NULL, &back));
	ASSERT_EQ(back.n, online.n);
	hwt_misaligned_report_free(&back);
	/* a report of the one CPU is not the system's */
	r.n = 1;
	ASSERT_EQ(hwt_misaligned_system_write(d, &r), -EINVAL);
	r.n = online.n;
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&online);
	hwt_cpus_free(&after);
	sf_rm_tree(d);
}

/* An online CPU that cannot be reached (a fake online list naming CPU 4000):
 * refused with -EPERM, the CPU named, nothing written. */
TEST_TIMEOUT(system_probe_refuses_an_online_cpu_out_of_reach, 30)
{
	struct hwt_misaligned_opts o = { .budget_us = 300 };
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	struct hwt_misaligned_report r;
	char *d = sf_tmpdir(), *run = sf_tmpdir(), file[512], list[512];
	struct stat st;
	FILE *f;

	ASSERT_OK(hwt_cpu_allowed(&allowed));
	snprintf(file, sizeof(file), "%s/online", d);
	f = fopen(file, "w");
	ASSERT_TRUE(f != NULL);
	fprintf(f, "%d,4000\n", allowed.cpu[0]);
	fclose(f);
	o.sysfs_root = d;
	o.runtime_dir = run;
	ASSERT_EQ(hwt_misaligned_system_probe(&o, &r), -EPERM);
	ASSERT_EQ(r.n, 2);
	ASSERT_EQ(r.cpu[0].cpu, allowed.cpu[0]);
	ASSERT_EQ(r.cpu[0].status, 0);
	ASSERT_EQ(r.cpu[1].cpu, 4000);
	ASSERT_TRUE(r.cpu[1].status < 0);
	hwt_misaligned_report_free(&r);
	sf_path_in(list, sizeof(list), run);
	ASSERT_EQ(stat(list, &st), -1); /* nothing written */
	ASSERT_EQ(errno, ENOENT);
	hwt_cpus_free(&allowed);
	sf_rm_tree(d);
	sf_rm_tree(run);
}

/* The runtime folder itself a symlink: neither read through nor written
 * through (a link to / or /etc must not make root write there). */
TEST_TIMEOUT(system_folder_that_is_a_symlink_is_refused, 30)
{
	struct hwt_misaligned_report r, back;
	struct hwt__cache_key k;
	struct hwt_misaligned_cpu *e;
	struct hwt_cpus set;
	char *d = sf_tmpdir(), *target = sf_tmpdir(), link[512], path[512], real[512];
	unsigned n;

	sf_need_root();
	snprintf(link, sizeof(link), "%s/run", d);
	ASSERT_EQ(symlink(target, link), 0);
	sf_online(&set, 0);
	sf_report(&r, &set, HWT_MISALIGNED_FAST);
	ASSERT_EQ(hwt_misaligned_system_write(link, &r), -ELOOP);
	sf_path_in(real, sizeof(real), target);
	ASSERT_TRUE(access(real, F_OK) != 0); /* nothing in the link's target */
	/* a good file in the target is not read through the link */
	ASSERT_OK(hwt_misaligned_system_write(target, &r));
	ASSERT_EQ(hwt_misaligned_system_read(link, NULL, &back), -ELOOP);
	ASSERT_OK(hwt__system_key(NULL, &k));
	sf_path_in(path, sizeof(path), link);
	ASSERT_EQ(hwt__system_load(path, &k, geteuid(), &e, &n), -ELOOP);
	ASSERT_OK(hwt_misaligned_system_read(target, NULL, &back));
	hwt_misaligned_report_free(&back);
	hwt_misaligned_report_free(&r);
	hwt_cpus_free(&set);
	sf_rm_tree(d);
	sf_rm_tree(target);
}
