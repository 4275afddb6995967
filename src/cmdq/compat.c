/* SPDX-License-Identifier: MIT */
/*
 * The 0.2.0 ABI of the three calls whose structs grew in 0.3.0 (queues in
 * the options; queues and the insert path in the info): a program built
 * against 0.2.0 binds to these (symbol version HWTUNE_0), which read and
 * write only the 0.2.0 prefix of each struct.  New programs bind to
 * HWTUNE_0.3 (src/libhwtune.map).  tests/native/abi_compat.sh calls them.
 */
#include <string.h>
#include <stddef.h>
#include "cmdq/impl.h"

struct hwt_cmdq_options_0_2 {
	unsigned entries_log2;
	bool disable_msipolling;
	bool auto_poll;
	bool force_sync_at_63;
	uint64_t timeout_ns;
	uint64_t spin_ns;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
};
_Static_assert(sizeof(struct hwt_cmdq_options_0_2) == offsetof(struct hwt_cmdq_options, queues), "prefix");

HWT_API void compat_options_default_0_2(struct hwt_cmdq_options_0_2 *o);
HWT_API void compat_options_default_0_2(struct hwt_cmdq_options_0_2 *o)
{
	struct hwt_cmdq_options n;

	if (!o)
		return;
	hwt_cmdq_options_default(&n);
	memcpy(o, &n, sizeof(*o));
}
__asm__(".symver compat_options_default_0_2, hwt_cmdq_options_default@HWTUNE_0");

HWT_API int compat_create_0_2(struct hwt_cmdq **out, struct hwt_smmu_dev *dev,
			      const struct hwt_cmdq_options_0_2 *o);
HWT_API int compat_create_0_2(struct hwt_cmdq **out, struct hwt_smmu_dev *dev,
			      const struct hwt_cmdq_options_0_2 *o)
{
	struct hwt_cmdq_options n;

	hwt_cmdq_options_default(&n);
	if (o)
		memcpy(&n, o, sizeof(*o));
	return hwt_cmdq_create(out, dev, o ? &n : NULL);
}
__asm__(".symver compat_create_0_2, hwt_cmdq_create@HWTUNE_0");

struct hwt_cmdq_info_0_2 {
	unsigned entries;
	bool msipolling;
	bool measured;
	uint64_t msi_ns;
	uint64_t sev_ns;
	char reason[160];
};
HWT_API void compat_get_info_0_2(struct hwt_cmdq *q, struct hwt_cmdq_info_0_2 *info);
HWT_API void compat_get_info_0_2(struct hwt_cmdq *q, struct hwt_cmdq_info_0_2 *info)
{
	struct hwt_cmdq_info n;

	if (!q || !info)
		return;
	hwt_cmdq_get_info(q, &n);
	memcpy(info, &n, sizeof(*info));
}
__asm__(".symver compat_get_info_0_2, hwt_cmdq_get_info@HWTUNE_0");
