/* SPDX-License-Identifier: MIT */
#include "common/membarrier.h"

#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool ok;

static void reg(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	ok = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	     syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	     syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

bool hwt__membarrier_init(void)
{
	pthread_once(&once, reg);
	return ok;
}
