/* SPDX-License-Identifier: MIT */
/*
 * One result for the whole system, and the one-call answers.
 *
 * The system file is the user cache's format (cache.c's format and parse)
 * written by root at boot (hwtune probe --system) into a runtime folder,
 * world-readable, keyed to this boot, kernel, set of core identities and
 * library version.  Readers trust it only if root owns it, nobody else can
 * write it and it is a regular file; anything else is ignored, never an
 * error of the answer.
 *
 * Step 2 of the lookup chain (lookup.c) reads it.
 */
#include "common/file.h"
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "common/time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* One line of a small file under root, made one token long (the key format
 * is "name value"). */
static int read_token(const char *root, const char *rel, char *dst, size_t len)
{
	char path[PATH_MAX], buf[256];
	ssize_t n;
	size_t i, j = 0;
	int fd;

	if (snprintf(path, sizeof(path), "%s%s", root ? root : "", rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (i = 0; buf[i] && j + 1 < len; i++)
		dst[j++] = buf[i] > ' ' && buf[i] < 0x7f ? buf[i] : '_';
	dst[j] = '\0';
	return j ? 0 : -ENOENT;
}

/* Order-independent hash of the distinct identities of the CPUs. */
static int identities_hash(const char *root, char *out, size_t len)
{
	char sys[PATH_MAX];
	struct hwt_cpus set = HWT_CPUS_INIT;
	struct hwt_cpu_ident *ids = NULL;
	uint64_t *seen = NULL, h = hwt__fnv1a(HWT__FNV_INIT, HWT_ARCH_NAME, sizeof(HWT_ARCH_NAME));
	unsigned nseen = 0;
	int r;

	snprintf(sys, sizeof(sys), "%s/sys/devices/system/cpu", root ? root : "");
	r = hwt_cpu_online(sys, &set);
	if (r)
		r = hwt_cpu_allowed(&set); /* no sysfs: the CPUs we can see */
	if (r)
		goto out;
	ids = calloc(set.n, sizeof(*ids));
	seen = calloc(set.n, sizeof(*seen));
	if (!ids || !seen) {
		r = -ENOMEM;
		goto out;
	}
	r = hwt_cpu_identities(root, &set, ids);
	for (unsigned i = 0; i < set.n && !r; i++) {
		const struct hwt_cpu_ident *d = &ids[i];
		char line[320];
		uint64_t lh;
		unsigned j;
		/* Not x86_type: without the PMU lists it comes from CPUID for a
		 * thread pinned to that CPU only, so it would make the key
		 * depend on the caller's affinity (the boot id already pins
		 * the machine). */
		int n = snprintf(line, sizeof(line), "%d %" PRIx32 " %" PRIx64 " %" PRIx64 " %" PRIx64
				 " %u %u %s|%s", (int)d->kind, d->midr, d->mvendorid, d->marchid,
				 d->mimpid, d->x86_family, d->x86_model, d->vendor, d->model);

		lh = hwt__fnv1a(HWT__FNV_INIT, line, n > 0 ? (size_t)n : 0);
		for (j = 0; j < nseen && seen[j] != lh; j++)
			;
		if (j < nseen)
			continue;
		seen[nseen++] = lh;
		h += lh * 0x9e3779b97f4a7c15ull;
	}
	if (!r)
		snprintf(out, len, "id-%016" PRIx64, h);
out:
	hwt_cpus_free(&set);
	free(ids);
	free(seen);
	return r;
}

int hwt__system_key(const char *root, struct hwt__cache_key *k)
{
	struct utsname u;
	int r;

	memset(k, 0, sizeof(*k));
	r = read_token(root, "/proc/sys/kernel/random/boot_id", k->boot_id, sizeof(k->boot_id));
	if (r)
		return r;
	if (read_token(root, "/proc/sys/kernel/osrelease", k->kernel, sizeof(k->kernel))) {
		if (root || uname(&u))
			return -ENOENT;
		snprintf(k->kernel, sizeof(k->kernel), "%s", u.release);
		for (char *p = k->kernel; *p; p++)
			if (*p <= ' ' || *p >= 0x7f)
				*p = '_';
	}
	r = identities_hash(root, k->model, sizeof(k->model));
	if (r)
		return r;
	snprintf(k->version, sizeof(k->version), "%s", hwt_version());
	return 0;
}

int hwt__system_path(const char *dir, bool create, char *buf, size_t len)
{
	const char *env = getenv("HWTUNE_RUNTIME_DIR");
	int n;

	if (!dir && env && *env) {
		if (env[0] != '/')
			return -EINVAL; /* a relative folder would depend on the cwd */
		dir = env;
	}
	if (!dir)
		dir = HWT_MISALIGNED_RUNTIME_DIR;
	if (create) {
		if (!mkdir(dir, 0755)) {
			if (chmod(dir, 0755)) /* readable by all whatever the umask */
				return -errno;
		} else if (errno != EEXIST) {
			return -errno;
		}
	}
	n = snprintf(buf, len, "%s/misaligned-%s.result", dir, HWT_ARCH_NAME);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

int hwt__system_store(const char *path, const struct hwt__cache_key *k,
		      const struct hwt_misaligned_cpu *e, unsigned n)
{
	size_t len;
	char *text;
	int r = hwt__cache_format(k, e, n, &text, &len);

	/* Every reader of the system trusts this file: durable, so a crash
	 * leaves the old one or the new one on disk. */
	if (!r)
		r = hwt__write_file_atomic(path, text, len, 0644, true);
	free(text);
	return r;
}

/* Whether the file (fd, else path opened O_PATH: no read permission
 * needed, so every reason is found whatever its mode) may be trusted: 0, or
 * why not. */
static int trusted_at(int fd, const char *path, uid_t owner)
{
	int own = fd < 0 ? hwt__open_in_folder(path, O_PATH) : fd;
	struct stat st;
	int r = 0;

	if (own < 0)
		return own;
	if (fstat(own, &st))
		r = -errno;
	else if (S_ISLNK(st.st_mode))
		r = -ELOOP;
	else if (!S_ISREG(st.st_mode))
		r = -ENXIO;
	else if (st.st_uid != owner)
		r = -EPERM;
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		r = -EACCES;
	if (own != fd)
		close(own);
	return r;
}

int hwt__system_load(const char *path, const struct hwt__cache_key *k, uid_t owner,
		     struct hwt_misaligned_cpu **out, unsigned *n)
{
	struct stat read_st;
	char *text;
	ssize_t got = 0;
	size_t len = 0;
	int fd, r;

	*out = NULL;
	*n = 0;
	/* O_NONBLOCK: a FIFO planted in the folder must not hang the reader. */
	fd = hwt__open_in_folder(path, O_RDONLY | O_NONBLOCK);
	if (fd == -EACCES) { /* unreadable: say why if untrusted, else -EIO */
		r = trusted_at(-1, path, owner);
		return r ? r : -EIO; /* -EACCES means "writable by others" */
	}
	if (fd < 0)
		return fd; /* -ENOENT, -ELOOP (a symlink: the file or its folder) */
	r = trusted_at(fd, NULL, owner);
	if (r) {
		close(fd);
		return r;
	}
	if (fstat(fd, &read_st)) {
		close(fd);
		return -EIO;
	}
	if (read_st.st_size > HWT__MISALIGNED_MAX_FILE) {
		close(fd);
		return -EBADMSG;
	}
	text = malloc((size_t)read_st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)read_st.st_size &&
	       ((got = read(fd, text + len, (size_t)read_st.st_size - len)) > 0 ||
		(got < 0 && errno == EINTR)))
		len += got > 0 ? (size_t)got : 0;
	close(fd);
	text[len] = '\0';
	r = len == (size_t)read_st.st_size ? hwt__cache_parse(text, len, k, out, n) : -EBADMSG;
	free(text);
	for (unsigned i = 0; i < *n; i++)
		(*out)[i].source = (*out)[i].vector_source = HWT_MISALIGNED_FROM_SYSTEM;
	return r;
}

/* The report's array for these entries (ascending CPUs, as parse keeps the
 * writer's order, which is the report's). */
static void report_of(struct hwt_misaligned_cpu *e, unsigned n, enum hwt_misaligned_source src,
		      struct hwt_misaligned_report *out)
{
	memset(out, 0, sizeof(*out));
	out->cpu = e;
	out->n = n;
	out->source = src;
	out->cache_off = true;
	hwt__misaligned_summarize(out);
}

HWT_API int hwt_misaligned_system_read(const char *dir, const char *root,
				       struct hwt_misaligned_report *out)
{
	struct hwt__cache_key k;
	struct hwt_misaligned_cpu *e;
	char path[PATH_MAX];
	unsigned n;
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	r = hwt__system_path(dir, false, path, sizeof(path));
	if (!r)
		r = hwt__system_key(root, &k);
	if (!r)
		r = hwt__system_load(path, &k, 0, &e, &n);
	if (r)
		return r;
	report_of(e, n, HWT_MISALIGNED_FROM_SYSTEM, out);
	return 0;
}

/* Every CPU of online has an entry in r that was probed (status 0) and
 * that the file keeps (a known verdict): the system result covers the
 * system.  -EINVAL otherwise. */
static int covers(const struct hwt_misaligned_report *r, const struct hwt_cpus *online)
{
	for (unsigned i = 0; i < online->n; i++) {
		const struct hwt_misaligned_cpu *s = hwt__misaligned_slot(r, online->cpu[i]);

		if (!s || !hwt__cache_keeps(s))
			return -EINVAL;
	}
	return 0;
}

/* online: the online CPUs the report must cover (NULL: read under sysfs). */
static int system_write_in(const char *dir, const char *root, const char *sysfs,
			   const struct hwt_cpus *online, const struct hwt_misaligned_report *r)
{
	struct hwt_cpus own = HWT_CPUS_INIT;
	struct hwt__cache_key k;
	char path[PATH_MAX];
	unsigned known = 0;
	int ret;

	if (!r || (r->n && !r->cpu) || r->source == HWT_MISALIGNED_FROM_OVERRIDE)
		return -EINVAL;
	/* Only measurements, and only what the format keeps: a report with
	 * nothing to keep (unknown or no vector results) must not replace a
	 * good file with an empty one. */
	for (unsigned i = 0; i < r->n; i++) {
		if (r->cpu[i].source == HWT_MISALIGNED_FROM_OVERRIDE ||
		    r->cpu[i].vector_source == HWT_MISALIGNED_FROM_OVERRIDE)
			return -EINVAL;
		known += hwt__cache_keeps(&r->cpu[i]);
	}
	if (!known)
		return -EINVAL;
	/* Every process trusts the file: it must hold every online CPU (a
	 * system without an online list is taken as it comes). */
	if (!online && hwt_cpu_online(sysfs, &own) == 0)
		online = &own;
	ret = online ? covers(r, online) : 0;
	hwt_cpus_free(&own);
	if (!ret)
		ret = hwt__system_key(root, &k);
	if (!ret)
		ret = hwt__system_path(dir, true, path, sizeof(path));
	if (ret)
		return ret;
	/* status < 0 entries are UNKNOWN: the format skips them */
	return hwt__system_store(path, &k, r->cpu, r->n);
}

HWT_API int hwt_misaligned_system_write(const char *dir, const struct hwt_misaligned_report *r)
{
	return system_write_in(dir, NULL, NULL, NULL, r);
}

/* Let the calling thread run on every CPU of set that its cpuset allows,
 * as sched_setaffinity(2) lets any thread widen its own mask. */
static void widen(const struct hwt_cpus *set)
{
	int top = set->cpu[set->n - 1]; /* ascending */
	cpu_set_t *mask = CPU_ALLOC(top + 1);
	size_t size = CPU_ALLOC_SIZE(top + 1);

	if (!mask)
		return; /* the CPUs it cannot reach are named below */
	CPU_ZERO_S(size, mask);
	for (unsigned i = 0; i < set->n; i++)
		CPU_SET_S(set->cpu[i], size, mask);
	/* EINVAL (no CPU of set in the cpuset) leaves the mask as it was */
	(void)sched_setaffinity(0, size, mask);
	CPU_FREE(mask);
}

/* The whole-system probe, in a thread of its own so that widening its
 * affinity leaves the caller's as it is. */
struct whole {
	const struct hwt_cpus *online;
	const struct hwt_misaligned_opts *opts;
	struct hwt_misaligned_report *out;
	int r;
};

/* out: every CPU of online, status -EPERM for those not in reach (nothing
 * measured).  Returns -EPERM. */
static int refuse(const struct hwt_cpus *online, const struct hwt_cpus *reach,
		  struct hwt_misaligned_report *out)
{
	out->cpu = calloc(online->n, sizeof(*out->cpu));
	if (!out->cpu)
		return -ENOMEM;
	out->n = online->n;
	for (unsigned i = 0; i < online->n; i++) {
		out->cpu[i].cpu = online->cpu[i];
		out->cpu[i].status = hwt_cpus_has(reach, online->cpu[i]) ? 0 : -EPERM;
		out->cpu[i].align_faults = -1;
	}
	out->cache_off = true;
	return -EPERM;
}

/*
 * A CPU whose verdict the file cannot keep (unknown: a measurement starved
 * or preempted until its budget ran out, seen under emulation on a loaded
 * machine) is measured again, up to HWT_MISALIGNED_SYSTEM_TRIES probes in
 * all: one unlucky CPU must not leave the system without a result, nor may
 * the file leave it out.  One still unknown then gets status -EAGAIN, and
 * so does the call (nothing is written).  A CPU that could not be pinned:
 * -EPERM.
 */
static int probe_again(const struct hwt_misaligned_opts *o, struct hwt_misaligned_report *out)
{
	bool done = false;
	int r = 0;

	for (unsigned t = 1; !r && !done; t++) {
		struct hwt_cpus again = HWT_CPUS_INIT;
		struct hwt_misaligned_report re;

		for (unsigned i = 0; i < out->n && !r; i++)
			if (!hwt__cache_keeps(&out->cpu[i]))
				r = hwt_cpus_add(&again, out->cpu[i].cpu);
		done = !again.n;
		if (!r && !done && t == HWT_MISALIGNED_SYSTEM_TRIES) {
			for (unsigned i = 0; i < again.n; i++)
				hwt__misaligned_slot(out, again.cpu[i])->status = -EAGAIN;
			r = -EAGAIN;
		} else if (!r && !done && !(r = hwt_misaligned_probe(&again, o, &re))) {
			for (unsigned i = 0; i < re.n; i++) {
				*hwt__misaligned_slot(out, re.cpu[i].cpu) = re.cpu[i];
				if (re.cpu[i].status)
					r = -EPERM;
			}
			out->wall_ns += re.wall_ns;
			hwt_misaligned_report_free(&re);
		}
		hwt_cpus_free(&again);
	}
	hwt__misaligned_summarize(out);
	return r;
}

static void *whole_probe(void *arg)
{
	struct whole *w = arg;
	struct hwt_cpus reach = HWT_CPUS_INIT;
	unsigned i;

	widen(w->online);
	w->r = hwt_cpu_allowed(&reach);
	for (i = 0; !w->r && i < w->online->n && hwt_cpus_has(&reach, w->online->cpu[i]); i++)
		;
	if (!w->r && i < w->online->n)
		w->r = refuse(w->online, &reach, w->out);
	else if (!w->r)
		w->r = hwt_misaligned_probe(w->online, w->opts, w->out);
	/* a CPU that went away or could not be pinned meanwhile: the same */
	for (i = 0; !w->r && i < w->out->n; i++)
		if (w->out->cpu[i].status)
			w->r = -EPERM;
	if (!w->r)
		w->r = probe_again(w->opts, w->out);
	hwt_cpus_free(&reach);
	return NULL;
}

HWT_API int hwt_misaligned_system_probe(const struct hwt_misaligned_opts *opts,
					struct hwt_misaligned_report *out)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_cpus online = HWT_CPUS_INIT;
	struct whole w = { &online, &o, out, 0 };
	char buf[PATH_MAX];
	const char *sysfs;
	pthread_t tid;
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (opts)
		o = *opts;
	if (o.override_speed || o.vector_override_speed || (o.flags & HWT_MISALIGNED_NO_VECTOR))
		return -EINVAL; /* not a (whole) measurement */
	o.flags |= HWT_MISALIGNED_NO_CACHE;
	sysfs = hwt__misaligned_sysfs(&o, buf, sizeof(buf));
	/* Every online CPU, whatever the caller's affinity (no online list:
	 * every CPU the caller may use). */
	r = hwt_cpu_online(sysfs, &online);
	if (r || !online.n)
		r = hwt_cpu_allowed(&online);
	if (!r)
		r = -pthread_create(&tid, NULL, whole_probe, &w);
	if (!r) {
		pthread_join(tid, NULL);
		r = w.r;
	}
	if (!r)
		r = system_write_in(o.runtime_dir, o.root, sysfs, &online, out);
	else if ((r != -EPERM && r != -EAGAIN) || !out->n)
		hwt_misaligned_report_free(out);
	hwt_cpus_free(&online);
	return r;
}
