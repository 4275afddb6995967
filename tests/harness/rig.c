/* SPDX-License-Identifier: MIT */
/* A queue on a started software SMMU, with a log hook (rig.h). */
#include "harness/rig.h"
#include "harness/harness.h"

#include <stdio.h>
#include <string.h>

void log_hook(void *ctx, const char *msg)
{
	struct logbuf *l = ctx;

	pthread_mutex_lock(&l->lock);
	l->len += snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s\n", msg);
	if (l->len >= sizeof(l->text))
		l->len = sizeof(l->text) - 1;
	pthread_mutex_unlock(&l->lock);
}

bool logged(struct logbuf *l, const char *s)
{
	bool r;

	pthread_mutex_lock(&l->lock);
	r = strstr(l->text, s) != NULL;
	pthread_mutex_unlock(&l->lock);
	return r;
}

void rig_up(struct rig *r, uint32_t idr0, bool disable_msi, unsigned shift, uint64_t timeout_ns)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->log.lock, NULL);
	hwt_smmu_dev_config_default(&dc);
	dc.idr0 = idr0;
	dc.cmdqs = shift > 8 ? shift : 8;
	ASSERT_OK(hwt_smmu_dev_create(&r->dev, &dc));
	hwt_cmdq_options_default(&o);
	o.entries_log2 = shift;
	o.disable_msipolling = disable_msi;
	o.timeout_ns = timeout_ns;
	o.log = log_hook;
	o.log_ctx = &r->log;
	ASSERT_OK(hwt_cmdq_create(&r->q, r->dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(r->dev));
}

void rig_down(struct rig *r)
{
	hwt_smmu_dev_stop(r->dev);
	hwt_cmdq_destroy(r->q);
	hwt_smmu_dev_destroy(r->dev);
}
