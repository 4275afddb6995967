#!/bin/sh
# SPDX-License-Identifier: MIT
# Programs built against libhwtune 0.2.0 keep working: the calls whose
# structs grew since keep their 0.2.0 versions (symbol version HWTUNE_0),
# which read and write no byte past the 0.2.0 struct.  The program below
# spells out the 0.2.0 layouts itself and asks for those versions by name.
. tests/tap.sh
lib=${BUILD:-build}/libhwtune.so
cat > "$tap_dir/old.c" <<'EOC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct opts_0_2 { /* struct hwt_cmdq_options of 0.2.0 */
	unsigned entries_log2;
	bool disable_msipolling, auto_poll, force_sync_at_63;
	uint64_t timeout_ns, spin_ns;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
};
struct info_0_2 { /* struct hwt_cmdq_info of 0.2.0 */
	unsigned entries;
	bool msipolling, measured;
	uint64_t msi_ns, sev_ns;
	char reason[160];
};
/* The struct, then 256 guard bytes that no 0.2.0 call may touch. */
#define GUARDED(t) struct { t s; unsigned char guard[256]; }
static int untouched(const unsigned char *g)
{
	for (int i = 0; i < 256; i++)
		if (g[i] != 0xa5)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void *(*fn)(void);
	GUARDED(struct opts_0_2) o;
	GUARDED(struct info_0_2) in;
	void *dev = NULL, *q = NULL;
	_Alignas(16) char dc[4096]; /* struct hwt_smmu_dev_config: unchanged since 0.2.0 */
	int ok = 1;

	(void)argc;
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
#define SYM(name) ((fn = dlvsym(h, name, "HWTUNE_0")) ? fn : (printf("no %s@HWTUNE_0\n", name), NULL))
	void (*opts_default)(struct opts_0_2 *) = (void (*)(struct opts_0_2 *))SYM("hwt_cmdq_options_default");
	int (*create)(void **, void *, const struct opts_0_2 *) =
		(int (*)(void **, void *, const struct opts_0_2 *))SYM("hwt_cmdq_create");
	void (*get_info)(void *, struct info_0_2 *) = (void (*)(void *, struct info_0_2 *))SYM("hwt_cmdq_get_info");
	void (*dev_default)(void *) = (void (*)(void *))SYM("hwt_smmu_dev_config_default");
	int (*dev_create)(void **, const void *) = (int (*)(void **, const void *))SYM("hwt_smmu_dev_create");
	int (*dev_start)(void *) = (int (*)(void *))SYM("hwt_smmu_dev_start");
	int (*sync)(void *) = (int (*)(void *))SYM("hwt_cmdq_sync");
	void (*destroy)(void *) = (void (*)(void *))SYM("hwt_cmdq_destroy");
	void (*dev_destroy)(void *) = (void (*)(void *))SYM("hwt_smmu_dev_destroy");
	if (!opts_default || !create || !get_info || !dev_default || !dev_create || !dev_start || !sync ||
	    !destroy || !dev_destroy)
		return 1;

	memset(&o, 0xa5, sizeof(o));
	opts_default(&o.s);
	printf("%s 1 - options_default@HWTUNE_0 writes only the 0.2.0 struct\n", untouched(o.guard) ? "ok" : "not ok");
	ok &= untouched(o.guard);
	printf("%s 2 - its defaults are 0.2.0's (timeout 1 s)\n", o.s.timeout_ns == 1000000000ull ? "ok" : "not ok");
	ok &= o.s.timeout_ns == 1000000000ull;

	dev_default(dc);
	if (dev_create(&dev, dc) || dev_start(dev)) {
		printf("not ok 3 - a device\n");
		return 1;
	}
	/* The guard after the 0.2.0 options reads as nonsense to a 0.3 create. */
	int err = create(&q, dev, &o.s);
	printf("%s 3 - create@HWTUNE_0 with 0.2.0 options: %d\n", err ? "not ok" : "ok", err);
	ok &= !err;
	if (!err) {
		err = sync(q);
		printf("%s 4 - a CMD_SYNC on that queue: %d\n", err ? "not ok" : "ok", err);
		ok &= !err;
		memset(&in, 0xa5, sizeof(in));
		get_info(q, &in.s);
		printf("%s 5 - get_info@HWTUNE_0 writes only the 0.2.0 struct\n",
		       untouched(in.guard) ? "ok" : "not ok");
		ok &= untouched(in.guard);
		printf("%s 6 - and fills it (entries %u)\n", in.s.entries ? "ok" : "not ok", in.s.entries);
		ok &= in.s.entries != 0;
		destroy(q);
	}
	dev_destroy(dev);
	printf("1..6\n");
	return !ok;
}
EOC
if ! cc -std=c11 -Wall -Wextra -Werror -o "$tap_dir/old" "$tap_dir/old.c" -ldl > "$err" 2>&1; then
	tap_ok "the 0.2.0 caller compiles" false
	tap_end
fi
timeout -k 5 120 "$tap_dir/old" "$lib"
