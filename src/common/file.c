/* SPDX-License-Identifier: MIT */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The folder holding path, for the fsync that makes a rename durable. */
static void sync_folder(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: the file itself is already on disk */
		close(fd);
	}
}

int hwt__write_file_atomic(const char *path, const char *text, size_t len, mode_t mode,
			   bool durable)
{
	size_t plen = strlen(path), off = 0;
	char *tmp = malloc(plen + 16);
	int fd, r = 0;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC); /* 0600 until the fchmod */
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
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
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	else if (durable)
		sync_folder(path);
	free(tmp);
	return r;
}
