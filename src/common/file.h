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

/* Replace path with text: a temporary file beside it (mode, O_CLOEXEC),
 * written whole, then renamed over path, so a reader sees the old file or
 * the new one, never a part.  durable: fsync the file before the rename and
 * the folder after it (a crash then leaves one of the two on disk too). */
int hwt__write_file_atomic(const char *path, const char *text, size_t len, mode_t mode,
			   bool durable);

#endif
