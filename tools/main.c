/* SPDX-License-Identifier: MIT */
/* hwtune: measure this machine and recommend settings. */
#include "hwtune.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/*
 * The one place where stdout is checked: whatever a command printed (help,
 * version, a report), a failed write or flush is an error of the whole run
 * (exit 1, said on stderr), e.g. `hwtune cmdq >/dev/full`.  A run that has
 * failed already keeps its status.  Not on a terminal, stdout keeps all of
 * a run's output and writes it here, so the flush sees the write's own
 * errno (ENOSPC, EPIPE...), which stdio forgets when a write fails inside
 * printf.  The buffer is ours: setvbuf with a NULL buffer keeps glibc's
 * size (st_blksize, 4 KiB), so a longer text (probe --help) was written,
 * and failed, inside printf.  Reports are a few KiB (about 1 KiB per CPU
 * in JSON); 4 MiB holds them all.
 */
static char out_buf[4u << 20];

static int finish_stdout(int status)
{
	int bad = ferror(stdout), err = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		err = errno;
	if (bad || err) {
		/* ferror() alone has lost errno: name what the flush saw, or EIO */
		cli_error("write error: %s", strerror(err ? err : EIO));
		return status ? status : 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct cli_args a;
	int r;

	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	r = cli_parse(argc, argv, &a);

	if (r == CLI_RUN)
		r = cli_run(&a);
	cli_args_free(&a);
	return finish_stdout(r);
}
