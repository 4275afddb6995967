/* SPDX-License-Identifier: MIT */
/* The bus between a queue and its device (src/bus/bus.h): one queue per
 * device, detach only by the owner, queue enable and disable through the
 * CR0.CMDQEN / CR0ACK handshake, before start or while the device runs. */
#include "harness/harness.h"
#include "harness/cmds.h"

#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>

#include <errno.h>
#include <stdlib.h>

#include "common/time.h"
#include "bus/bus.h"

static struct hwt_smmu_dev *new_dev(void)
{
	struct hwt_smmu_dev_config c;
	struct hwt_smmu_dev *dev;

	hwt_smmu_dev_config_default(&c);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &c));
	return dev;
}

static struct hwt_cmdq_options quiet_opts(uint64_t timeout_ms)
{
	struct hwt_cmdq_options o;

	hwt_cmdq_options_default(&o);
	o.entries_log2 = 7;
	o.timeout_ns = timeout_ms * 1000000ull;
	return o;
}

/* Bounded wait for CR0ACK to read want (a value hwt__reg_write_cr0 returned). */
static bool ack_becomes(struct hwt__smmu_regs *r, uint32_t want)
{
	uint64_t end = hwt__now_ns() + (uint64_t)(2e9 * hwt_test_scale());

	while (hwt__reg_read_cr0ack(r) != want) {
		if (hwt__now_ns() > end)
			return false;
		hwt__sleep_ns(100000);
	}
	return true;
}

TEST(second_queue_on_a_device_gets_ebusy)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt_cmdq_options o = quiet_opts(1000);
	struct hwt_cmdq *q1, *q2 = NULL, *q3;

	ASSERT_OK(hwt_cmdq_create(&q1, dev, &o));
	ASSERT_EQ(hwt_cmdq_create(&q2, dev, &o), -EBUSY);
	ASSERT_TRUE(q2 == NULL);
	hwt_cmdq_destroy(q1);
	ASSERT_OK(hwt_cmdq_create(&q3, dev, &o)); /* free again once q1 is gone */
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_cmdq_sync(q3));
	hwt_cmdq_destroy(q3);
	hwt_smmu_dev_destroy(dev);
}

/*
 * A second create on a device that has a queue is refused: were it to
 * succeed, it would overwrite CMDQ_BASE and the GERROR handler, and its
 * destroy would disconnect the live queue's handler, so the live queue's
 * next sync after a fetch abort would time out.
 */
TEST(a_refused_second_queue_leaves_the_first_working)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt_cmdq_options o = quiet_opts(1000);
	struct hwt_cmdq *q1, *q2 = NULL;
	int rc2;

	ASSERT_OK(hwt_cmdq_create(&q1, dev, &o));
	rc2 = hwt_cmdq_create(&q2, dev, &o);
	if (rc2 == 0)
		hwt_cmdq_destroy(q2);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_smmu_dev_inject(dev, HWT_SMMU_FAULT_ABT));
	ASSERT_OK(hwt_cmdq_sync(q1)); /* q1's GERROR handler retries the fetch */
	ASSERT_EQ(rc2, -EBUSY);
	hwt_cmdq_destroy(q1);
	hwt_smmu_dev_destroy(dev);
}

TEST(queues_come_and_go_on_a_running_device)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt__smmu_regs *r = hwt__bus_regs(dev);
	struct hwt_cmdq_options o = quiet_opts(1000);
	struct hwt_smmu_dev_stats st;

	ASSERT_OK(hwt_smmu_dev_start(dev)); /* no queue yet: CR0.CMDQEN is 0 */
	ASSERT_FALSE(hwt__reg_cmdq_enabled(r));
	for (int i = 0; i < 40; i++) { /* more cycles than the device has DMA slots */
		struct hwt_cmdq *q;

		o.disable_msipolling = i & 1;
		ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
		ASSERT_TRUE(hwt__reg_cmdq_enabled(r)); /* create waited */
		ASSERT_OK(hwt_cmdq_sync(q));
		ASSERT_OK(hwt_cmdq_sync(q));
		hwt_cmdq_destroy(q);
		ASSERT_FALSE(hwt__reg_cmdq_enabled(r)); /* destroy waited */
	}
	hwt_smmu_dev_get_stats(dev, &st);
	ASSERT_EQ_U64(st.syncs, 80);
	hwt_smmu_dev_destroy(dev);
}

TEST(a_sync_on_a_device_not_started_is_enodev)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt_cmdq_options o = quiet_opts(5000);
	struct hwt_cmdq *q;
	uint64_t t0;

	ASSERT_OK(hwt_cmdq_create(&q, dev, &o)); /* enable pending until start */
	ASSERT_FALSE(hwt__reg_cmdq_enabled(hwt__bus_regs(dev)));
	t0 = hwt__now_ns();
	ASSERT_EQ(hwt_cmdq_sync(q), -ENODEV);
	ASSERT_LT(hwt__now_ns() - t0, 4000000000ull); /* well before the 5 s timeout */
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

TEST(attach_and_detach_belong_to_the_owner)
{
	struct hwt_smmu_dev *dev = new_dev();
	int a, b;

	ASSERT_EQ(hwt__bus_attach(dev, NULL, NULL, NULL), -EINVAL);
	ASSERT_OK(hwt__bus_attach(dev, &a, NULL, NULL));
	ASSERT_EQ(hwt__bus_attach(dev, &b, NULL, NULL), -EBUSY);
	ASSERT_EQ(hwt__bus_detach(dev, &b), -EPERM);
	ASSERT_EQ(hwt__bus_detach(dev, NULL), -EPERM);
	ASSERT_OK(hwt__bus_detach(dev, &a));
	ASSERT_EQ(hwt__bus_detach(dev, &a), -EPERM); /* not attached any more */
	ASSERT_OK(hwt__bus_attach(dev, &b, NULL, NULL));
	ASSERT_EQ(hwt__bus_set_gerror_irq(dev, &a, NULL, NULL), -EPERM);
	ASSERT_OK(hwt__bus_set_gerror_irq(dev, &b, NULL, NULL));
	ASSERT_OK(hwt__bus_detach(dev, &b));
	hwt_smmu_dev_destroy(dev);
}

/* The owner cannot detach while its queue is enabled (the device would go
 * on reading the queue and calling the owner's GERROR line). */
TEST(detach_waits_for_the_disable)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt__smmu_regs *r = hwt__bus_regs(dev);
	void *mem = aligned_alloc(4096, 4096);
	uint64_t iova;
	int owner;

	ASSERT_TRUE(mem != NULL);
	ASSERT_OK(hwt__bus_attach(dev, &owner, NULL, NULL));
	ASSERT_OK(hwt__bus_dma_map(dev, mem, 4096, &iova));
	hwt__reg_reset_queue(r, iova | 8);
	hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_EQ(hwt__bus_detach(dev, &owner), -EBUSY);
	ASSERT_OK(hwt_smmu_dev_stop(dev)); /* CR0ACK 0 */
	ASSERT_OK(hwt__bus_detach(dev, &owner));
	hwt_smmu_dev_destroy(dev);
	free(mem);
}

/* The write count never repeats a value a stopped device's CR0ACK (0) could
 * be mistaken for, even after it wraps. */
TEST(cr0_write_count_skips_zero)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt__smmu_regs *r = hwt__bus_regs(dev);
	struct hwt_cmdq_options o = quiet_opts(1000);
	struct hwt_cmdq *q;

	for (unsigned i = 0; i < 65535; i++)
		ASSERT_NE(hwt__reg_write_cr0(r, 0) >> HWT__CR0_SEQ_SHIFT, 0);
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o)); /* its enable: the count wraps here */
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_cmdq_sync(q));
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* The handshake at the register level: a running device acts on CR0 writes
 * and reports them in CR0ACK; an enable with a bad CMDQ_BASE is refused. */
TEST(cr0_handshake_at_the_registers)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt__smmu_regs *r = hwt__bus_regs(dev);
	void *mem = aligned_alloc(4096, 4096);
	uint64_t iova;
	uint32_t v;

	ASSERT_TRUE(mem != NULL);
	ASSERT_OK(hwt__bus_dma_map(dev, mem, 4096, &iova));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_TRUE(hwt__reg_device_live(r));

	hwt__reg_reset_queue(r, iova | 20); /* LOG2SIZE beyond IDR1.CMDQS */
	v = hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_TRUE(ack_becomes(r, v & ~HWT_SMMU_CR0_CMDQEN)); /* this write, refused */
	ASSERT_FALSE(hwt__reg_cmdq_enabled(r));

	hwt__reg_reset_queue(r, iova | 8); /* the same CR0 value again: still a new write */
	v = hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_TRUE(ack_becomes(r, v));
	ASSERT_TRUE(hwt__reg_cmdq_enabled(r));
	ASSERT_EQ(hwt__bus_dma_unmap(dev, iova), -EBUSY); /* holds the enabled queue */
	v = hwt__reg_write_cr0(r, 0);
	ASSERT_TRUE(ack_becomes(r, v));
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	ASSERT_FALSE(hwt__reg_device_live(r));
	ASSERT_OK(hwt__bus_dma_unmap(dev, iova));
	hwt_smmu_dev_destroy(dev);
	free(mem);
}

/* start enables the queue synchronously when CR0 asks for it, and refuses a
 * bad CMDQ_BASE then (nothing runs). */
TEST(start_enables_the_queue_cr0_asks_for)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt__smmu_regs *r = hwt__bus_regs(dev);
	void *mem = aligned_alloc(4096, 4096);
	uint64_t iova;

	ASSERT_TRUE(mem != NULL);
	ASSERT_OK(hwt__bus_dma_map(dev, mem, 4096, &iova));
	hwt__reg_reset_queue(r, (iova + 32) | 7); /* misaligned for 128 entries */
	hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	ASSERT_FALSE(hwt__reg_device_live(r));
	hwt__reg_write_cr0(r, 0);
	hwt__reg_reset_queue(r, iova | 7);
	hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_TRUE(hwt__reg_cmdq_enabled(r)); /* before start returned */
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	ASSERT_FALSE(hwt__reg_cmdq_enabled(r));
	hwt_smmu_dev_destroy(dev);
	free(mem);
}

/* A paused device still acknowledges CR0: destroy does not time out (and
 * leak an attached queue), and the next create works. */
TEST(a_paused_device_acknowledges_queue_disable_and_enable)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt_cmdq_options o = quiet_opts(1000);
	struct hwt_cmdq *q;

	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_cmdq_sync(q));
	ASSERT_OK(hwt_smmu_dev_pause(dev));
	hwt_cmdq_destroy(q);
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o)); /* not -EBUSY: nothing leaked */
	ASSERT_OK(hwt_smmu_dev_resume(dev));
	ASSERT_OK(hwt_cmdq_sync(q));
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* A disable is acted on between two commands, not after every command the
 * device has seen: 200 commands of 5 ms each would outlast the timeout. */
TEST_TIMEOUT(disable_is_acknowledged_between_commands, 30)
{
	struct hwt_smmu_dev_config c;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_options o = quiet_opts(300);
	static struct hwt_cmdq_cmd cmds[200];
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&c);
	c.cmd_cost_ns = 5000000;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &c));
	o.entries_log2 = 8;
	for (unsigned i = 0; i < 200; i++)
		tst_cmd_cfgi_ste(cmds[i].dw, i);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_cmdq_issue(q, cmds, 200, false));
	do { /* the device is inside the run of 200 */
		hwt__sleep_ns(1000000);
		hwt_smmu_dev_get_stats(dev, &st);
	} while (!st.cmds);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_get_stats(dev, &st);
	ASSERT_GT(st.cmds, 0);
	ASSERT_LT(st.cmds, 200);
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o)); /* not -EBUSY: nothing leaked */
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* A refused enable leaves the consumer idle (asleep on its doorbell), not
 * retrying the enable in a loop; the driver learns of it at once. */
TEST(a_refused_enable_is_reported_and_the_device_sleeps)
{
	struct hwt_smmu_dev_config c;
	struct hwt_smmu_dev *dev;
	struct hwt__smmu_regs *r;
	struct hwt_smmu_dev_stats s0, s1;
	void *mem = aligned_alloc(4096, 4096);
	uint64_t iova;
	uint32_t v;

	hwt_smmu_dev_config_default(&c);
	c.spin_ns = 1000;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &c));
	r = hwt__bus_regs(dev);
	ASSERT_TRUE(mem != NULL);
	ASSERT_OK(hwt__bus_dma_map(dev, mem, 4096, &iova));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	hwt__reg_reset_queue(r, iova | 20);
	v = hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_TRUE(ack_becomes(r, v & ~HWT_SMMU_CR0_CMDQEN));
	hwt_smmu_dev_get_stats(dev, &s0);
	hwt__sleep_ns(50000000);
	hwt_smmu_dev_get_stats(dev, &s1);
	ASSERT_GT(s1.sleeps, s0.sleeps); /* at most 5 ms per sleep: several in 50 ms */
	hwt_smmu_dev_destroy(dev);
	free(mem);
}

/* The doorbell and SEV handshakes without membarrier (all seq_cst), as on a
 * kernel without it: both completion modes still complete, including after
 * the device and the waiters went to sleep. */
TEST(handshakes_without_membarrier)
{
	for (int cons = 0; cons < 2; cons++) {
		struct hwt_smmu_dev_config c;
		struct hwt_smmu_dev *dev;
		struct hwt_cmdq_options o = quiet_opts(2000);
		struct hwt_cmdq *q;

		hwt_smmu_dev_config_default(&c);
		c.spin_ns = 1000; /* sleeps often */
		ASSERT_OK(hwt_smmu_dev_create(&dev, &c));
		hwt__bus_regs(dev)->asym = false; /* before anybody uses it */
		o.disable_msipolling = cons;
		o.spin_ns = 1000;
		ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
		ASSERT_OK(hwt_smmu_dev_start(dev));
		for (int i = 0; i < 200; i++) {
			ASSERT_OK(hwt_cmdq_sync(q));
			if (!(i % 20))
				hwt__sleep_ns(200000); /* let the device fall asleep */
		}
		hwt_cmdq_destroy(q);
		hwt_smmu_dev_destroy(dev);
	}
}

/* The state a stop racing an enable leaves for the driver's next A_ACK,
 * made deterministically: the device acted on the enable (CR0ACK == v), then
 * stopped.  CR0ACK must not carry v's count with CMDQEN clear (write_cr0
 * would read that as a refusal); CR0_SEEN still says the device acted. */
TEST(stop_after_an_acknowledged_enable_leaves_no_count)
{
	struct hwt_smmu_dev *dev = new_dev();
	struct hwt__smmu_regs *r = hwt__bus_regs(dev);
	void *mem = aligned_alloc(4096, 4096);
	uint64_t iova;
	uint32_t v;

	ASSERT_TRUE(mem != NULL);
	ASSERT_OK(hwt__bus_dma_map(dev, mem, 4096, &iova));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	hwt__reg_reset_queue(r, iova | 8);
	v = hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN);
	ASSERT_TRUE(ack_becomes(r, v));
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	ASSERT_NE(hwt__reg_read_cr0ack(r) >> HWT__CR0_SEQ_SHIFT, v >> HWT__CR0_SEQ_SHIFT);
	ASSERT_TRUE(hwt__reg_cr0_acted(r));
	ASSERT_OK(hwt__bus_dma_unmap(dev, iova));
	hwt_smmu_dev_destroy(dev);
	free(mem);
}
