#!/bin/sh
# SPDX-License-Identifier: MIT
# libhwtune.so may be unloaded (dlclose) while threads that used it live on:
# a thread that used a queue of several queues holds a per-thread record,
# reached through a pthread key whose destructor is in the library.  The
# program below loads the library, makes a thread use such a queue, destroys
# the queue and the device, unloads the library, and only then lets the
# thread exit: a key still set up would call its destructor in unmapped code
# (SIGSEGV).  Natively with rseq and, with GLIBC_TUNABLES, on the shared path.
. tests/tap.sh
lib=${BUILD:-build}/libhwtune.so
cat > "$tap_dir/unload.c" <<'EOC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <hwtune/hwtune.h>

static void *h;
static struct hwt_cmdq *q;
static pthread_barrier_t b;
static int sync_err = -1;

#define SYM(f) ((__typeof__(&f))dlsym(h, #f))

/* Uses the queue (its record and the key are set), then waits for the
 * unload before it exits. */
static void *user(void *arg)
{
	(void)arg;
	sync_err = SYM(hwt_cmdq_sync)(q);
	pthread_barrier_wait(&b); /* used */
	pthread_barrier_wait(&b); /* unloaded: exit now */
	return NULL;
}

/* Is the library still mapped? */
static int mapped(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, "libhwtune.so") != NULL;
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	struct hwt_smmu_dev *dev;
	pthread_t t;
	int err;

	(void)argc;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	SYM(hwt_smmu_dev_config_default)(&dc);
	SYM(hwt_cmdq_options_default)(&o);
	o.queues = HWT_CMDQ_QUEUES_PER_CPU;
	if ((err = SYM(hwt_smmu_dev_create)(&dev, &dc)) || (err = SYM(hwt_cmdq_create)(&q, dev, &o)) ||
	    (err = SYM(hwt_smmu_dev_start)(dev))) {
		printf("a device and a queue: %d\n", err);
		return 1;
	}
	SYM(hwt_cmdq_get_info)(q, &info);
	printf("%u queues, %s path\n", info.queues, info.insert_path);
	pthread_barrier_init(&b, NULL, 2);
	pthread_create(&t, NULL, user, NULL);
	pthread_barrier_wait(&b);
	printf("synced: %d\n", sync_err);
	SYM(hwt_cmdq_destroy)(q);
	SYM(hwt_smmu_dev_destroy)(dev);
	err = dlclose(h);
	printf("dlclose: %d; the library %s mapped\n", err, mapped() ? "is still" : "is no longer");
	fflush(stdout);
	pthread_barrier_wait(&b);
	pthread_join(t, NULL); /* its exit ran no destructor in unmapped code */
	printf("the thread exited after the unload\n");
	return sync_err != 0 || err;
}
EOC
tap_ok "the unload program compiles" \
	cc -std=c11 -Wall -Wextra -Werror -Iinclude -pthread -o "$tap_dir/unload" "$tap_dir/unload.c" -ldl
[ -x "$tap_dir/unload" ] || tap_end
for mode in native "rseq off"; do
	tun=
	[ "$mode" = native ] || tun=GLIBC_TUNABLES=glibc.pthread.rseq=0
	env $tun timeout -k 5 120 "$tap_dir/unload" "$lib" > "$out" 2> "$err"
	rc=$?
	sed 's/^/# /' "$out"
	tap_ok "$mode: a device, a queue of several, a thread that synced on it" \
		grep -q "^synced: 0" "$out"
	if grep -q "is still mapped" "$out"; then
		tap_skip "$mode: the thread exits after the unload" "dlclose left the library mapped"
	else
		tap_ok "$mode: the thread exits after the unload (status $rc)" test "$rc" -eq 0
	fi
done
tap_end
