/* SPDX-License-Identifier: MIT */
/* Whole small files: read one, or replace one atomically. */
#ifndef HWT_COMMON_FILE_H
#define HWT_COMMON_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The whole file at path into *text (NUL-terminated, a NUL inside ends it
 * early; *len its length if len is non-NULL; caller frees): 0, -EFBIG
 * past max bytes, or the negative errno of open/read. */
int hwt__read_file(const char *path, size_t max, char **text, size_t *len);

/* The folder dir opened O_DIRECTORY | O_NOFOLLOW: the fd, -ELOOP when dir
 * (its last component) is a symlink, -ENOTDIR not a folder, or -errno. */
int hwt__open_folder(const char *dir);
/* The folder holding path, opened O_DIRECTORY | O_NOFOLLOW (a folder that
 * is itself a symlink: -ELOOP; not a folder: -ENOTDIR), *base the file's
 * name in it: the fd, or a negative errno. */
int hwt__open_folder_of(const char *path, const char **base);
/* open(path, flags) through that folder's fd, never following a symlink in
 * the folder's or the file's last component (-ELOOP): the fd or -errno. */
int hwt__open_in_folder(const char *path, int flags);

/* Replace path with text: a temporary file beside it (mode, O_CLOEXEC),
 * written whole, then renamed over path, so a reader sees the old file or
 * the new one, never a part.  durable: fsync the file before the rename and
 * the folder after it (a crash then leaves one of the two on disk too).
 * Everything goes through the folder's fd (hwt__open_folder_of): a folder
 * that is a symlink is -ELOOP and nothing is written. */
int hwt__write_file_atomic(const char *path, const char *text, size_t len, mode_t mode,
			   bool durable);

#endif
