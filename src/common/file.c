/* SPDX-License-Identifier: MIT */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int hwt__read_file(const char *path, size_t max, char **text, size_t *len)
{
	size_t cap = 256, n = 0;
	char *buf = malloc(cap);
	int fd, r = 0;

	*text = NULL;
	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		free(buf);
		return r;
	}
	for (;;) {
		ssize_t got;

		if (n + 1 == cap) {
			char *p = cap < max ? realloc(buf, cap * 2) : NULL;

			if (!p) {
				r = cap < max ? -ENOMEM : -EFBIG;
				break;
			}
			buf = p;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = got < 0 ? -errno : 0;
			break;
		}
		n += (size_t)got;
	}
	close(fd);
	if (r) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*text = buf;
	if (len)
		*len = strlen(buf);
	return 0;
}

int hwt__open_folder(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	struct stat st;

	if (fd >= 0)
		return fd;
	/* a link to a folder fails O_DIRECTORY before O_NOFOLLOW: say "link" */
	if (e == ENOTDIR && !lstat(dir, &st) && S_ISLNK(st.st_mode))
		return -ELOOP;
	return -e;
}

int hwt__open_folder_of(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	*base = slash ? slash + 1 : path;
	if (!**base)
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -ENAMETOOLONG;
	/* O_NOFOLLOW: a folder that is a symlink (its last component) is
	 * refused with ELOOP, and everything after goes through this fd. */
	return hwt__open_folder(dir);
}

int hwt__open_in_folder(const char *path, int flags)
{
	const char *base;
	int dfd = hwt__open_folder_of(path, &base), fd;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base, flags | O_NOFOLLOW | O_CLOEXEC);
	fd = fd < 0 ? -errno : fd;
	close(dfd);
	return fd;
}

/* A new file "<base>.tmp.<random>" in dfd, mode 0600: its fd, its name in tmp. */
static int make_temp(int dfd, const char *base, char *tmp, size_t len)
{
	static atomic_uint seq;
	struct timespec ts;

	for (int tries = 0; tries < 64; tries++) {
		unsigned n = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed); /* a counter only */
		int fd;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (snprintf(tmp, len, "%s.tmp.%lx%x%x", base, (unsigned long)ts.tv_nsec,
			     (unsigned)getpid(), n) >= (int)len)
			return -ENAMETOOLONG;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

int hwt__write_file_atomic(const char *path, const char *text, size_t len, mode_t mode,
			   bool durable)
{
	const char *base;
	char tmp[512];
	size_t off = 0;
	int dfd = hwt__open_folder_of(path, &base), fd, r = 0;

	if (dfd < 0)
		return dfd;
	fd = make_temp(dfd, base, tmp, sizeof(tmp)); /* 0600 until the fchmod */
	if (fd < 0) {
		close(dfd);
		return fd;
	}
	if (fchmod(fd, mode))
		r = -errno;
	while (!r && off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = w < 0 ? -errno : -EIO;
		else
			off += (size_t)w;
	}
	if (!r && durable && fsync(fd))
		r = -errno;
	if (close(fd) && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, base))
		r = -errno;
	if (r)
		unlinkat(dfd, tmp, 0);
	else if (durable)
		fsync(dfd); /* best effort: the file itself is already on disk */
	close(dfd);
	return r;
}
