/* SPDX-License-Identifier: MIT */
/* A software SMMU and its command queue set up for a measurement, and the
 * commands the measurements send. */
#ifndef HWT_PROG_QUEUE_H
#define HWT_PROG_QUEUE_H

#include <hwtune/hwtune.h>

#include <stdbool.h>
#include <stdint.h>

struct util_queue_cfg {
	unsigned log2;         /* queue of 2^log2 entries */
	/* hwt_cmdq_options.queues where the library has it (1, N or
	 * HWT_CMDQ_QUEUES_PER_CPU); 0: the default.  Without per-CPU queues
	 * in the library, anything but 0 or 1 is -EOPNOTSUPP. */
	unsigned queues;
	int cpu;               /* the device's consumer thread, -1 unpinned */
	unsigned cons_batch;   /* the device publishes CONS every N commands (0: default) */
	bool cons_poll;        /* disable_msipolling: complete by CONS polling */
	bool auto_poll;        /* let the queue measure and choose */
	unsigned msi_cost_ns, sev_cost_ns, cmd_cost_ns; /* device extra costs, 0 = off */
	uint64_t timeout_ns;   /* every wait of the queue */
	int (*handler)(void *ctx, const uint64_t dw[2]); /* NULL: the SMMU cache model */
	bool start;            /* start the device */
};

/* A device advertising MSI, SEV and COHACC and a queue on it: 0, or -errno
 * (nothing is left allocated).  -EINVAL also when, without auto_poll, the
 * queue did not take the completion mode asked for. */
int util_queue_create(const struct util_queue_cfg *c, struct hwt_smmu_dev **dev,
		      struct hwt_cmdq **q);
/* Stop and free both (NULL is ignored). */
void util_queue_destroy(struct hwt_smmu_dev *dev, struct hwt_cmdq *q);

/* A device handler that executes nothing. */
int util_noop_handler(void *ctx, const uint64_t dw[2]);

/* A TLBI_NH_VA command (leaf) for asid, vmid and the page at addr. */
static inline void util_tlbi_va(uint64_t dw[2], unsigned asid, unsigned vmid, uint64_t addr)
{
	dw[0] = HWT_SMMU_OP_TLBI_NH_VA;
	dw[1] = 0;
	hwt_smmu_put(dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_ASID, asid);
	hwt_smmu_put(dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_VMID, vmid);
	hwt_smmu_put(dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_LEAF, 1);
	hwt_smmu_put(dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_ADDR, addr);
}

#endif
