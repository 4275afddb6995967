/* SPDX-License-Identifier: MIT */
#include "prog/sys.h"

#include <hwtune/hwtune.h>

#include <errno.h>

int util_thread_start(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -err;
}

int util_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int util_cpu_pick(int want_dev, int want_prod0, unsigned nprod, int *dev, int *prod, int *bad)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	int err = hwt_cpu_allowed(&allowed);
	unsigned others;

	*bad = UTIL_CPU_OK;
	if (err < 0 || !allowed.n) {
		hwt_cpus_free(&allowed);
		return err < 0 ? err : -ENOENT;
	}
	if ((want_dev >= 0 && !hwt_cpus_has(&allowed, want_dev)) ||
	    (want_prod0 >= 0 && !hwt_cpus_has(&allowed, want_prod0))) {
		*bad = want_dev < 0 || hwt_cpus_has(&allowed, want_dev) ? UTIL_CPU_BAD_PROD0
									 : UTIL_CPU_BAD_DEV;
		hwt_cpus_free(&allowed);
		return -EINVAL;
	}
	*dev = want_dev >= 0 ? want_dev : allowed.cpu[allowed.n - 1];
	/* the others, in order, packed to the front (the set is ascending) */
	others = 0;
	for (unsigned i = 0; i < allowed.n; i++)
		if (allowed.cpu[i] != *dev)
			allowed.cpu[others++] = allowed.cpu[i];
	for (unsigned i = 0; i < nprod; i++)
		prod[i] = i == 0 && want_prod0 >= 0 ? want_prod0
			  : others ? allowed.cpu[i % others] : *dev;
	hwt_cpus_free(&allowed);
	return 0;
}
