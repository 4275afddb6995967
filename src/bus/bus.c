/* SPDX-License-Identifier: MIT */
/*
 * The device's end of the bus (bus.h): the register file's address, and
 * attachment of one queue with its GERROR line.  The DMA map is in dma.c.
 * Both work on the device object (device/impl.h) under its lock, the lock
 * the device's lifecycle (src/device/device.c) takes too.
 *
 * R_IRQ / A_IRQ: the GERROR line (fn, ctx) published by attach, loaded by
 * the consumer (src/device/consumer.c) before it calls it.
 */
#include "bus/bus.h"
#include "device/impl.h"

#include <errno.h>

struct hwt__smmu_regs *hwt__bus_regs(struct hwt_smmu_dev *dev)
{
	return &dev->regs;
}

static void set_gerror_line(struct hwt_smmu_dev *dev, void (*fn)(void *ctx), void *ctx)
{
	/* ctx first, then fn with release; the consumer loads fn with acquire
	 * (A_IRQ pairs with this R_IRQ) and then ctx. */
	atomic_store_explicit(&dev->gerror_ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&dev->gerror_fn, fn, memory_order_release); /* R_IRQ */
}

int hwt__bus_attach(struct hwt_smmu_dev *dev, const void *owner, void (*irq)(void *ctx), void *ctx)
{
	int err = 0;

	if (!owner)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	if (dev->owner)
		err = -EBUSY;
	else
		dev->owner = owner;
	pthread_mutex_unlock(&dev->lock);
	if (!err)
		set_gerror_line(dev, irq, ctx);
	return err;
}

int hwt__bus_set_gerror_irq(struct hwt_smmu_dev *dev, const void *owner, void (*irq)(void *ctx),
			    void *ctx)
{
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	if (!owner || dev->owner != owner)
		err = -EPERM;
	else
		set_gerror_line(dev, irq, ctx);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int hwt__bus_detach(struct hwt_smmu_dev *dev, const void *owner)
{
	bool last = false;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	if (!owner || dev->owner != owner) {
		err = -EPERM;
	} else if (hwt__dev_any_queue_on(dev)) {
		err = -EBUSY; /* every queue must be disabled first */
	} else {
		set_gerror_line(dev, NULL, NULL);
		dev->owner = NULL;
		last = dev->destroyed;
	}
	pthread_mutex_unlock(&dev->lock);
	if (last)
		hwt__dev_free(dev); /* hwt_smmu_dev_destroy() left it to us */
	return err;
}

