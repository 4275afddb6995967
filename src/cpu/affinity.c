/* SPDX-License-Identifier: MIT */
/* The calling thread's allowed CPUs, for any number of CPUs. */
#include "hwtune/cpu.h"

#include <errno.h>
#include <sched.h>

HWT_API int hwt_cpu_allowed(struct hwt_cpus *out)
{
	struct hwt_cpus set = HWT_CPUS_INIT;
	cpu_set_t *mask = NULL;
	size_t size = 0;
	int ncpu, r = 0;

	if (!out)
		return -EINVAL;
	/* The kernel refuses (EINVAL) a mask shorter than its nr_cpu_ids:
	 * start at CPU_SETSIZE and double until it fits. */
	for (ncpu = CPU_SETSIZE; ncpu <= HWT_CPU_ID_MAX + 1; ncpu *= 2) {
		mask = CPU_ALLOC(ncpu);
		if (!mask)
			return -ENOMEM;
		size = CPU_ALLOC_SIZE(ncpu);
		if (sched_getaffinity(0, size, mask) == 0) {
			r = 0;
			break;
		}
		r = -errno;
		CPU_FREE(mask);
		mask = NULL;
		if (r != -EINVAL)
			return r;
	}
	if (!mask)
		return -EINVAL; /* more CPUs than HWT_CPU_ID_MAX */
	for (int c = 0; c < ncpu && r >= 0; c++)
		if (CPU_ISSET_S(c, size, mask))
			r = hwt_cpus_add(&set, c);
	CPU_FREE(mask);
	if (r < 0) {
		hwt_cpus_free(&set);
		return r;
	}
	hwt_cpus_free(out);
	*out = set;
	return 0;
}
