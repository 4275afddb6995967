/* SPDX-License-Identifier: MIT */
/*
 * pick_copy: choose a copy routine once, at start-up, from the CPU's
 * misaligned-access verdict.
 *
 * hwt_misaligned_speed() answers "how fast are misaligned word accesses on
 * the CPUs this process may run on?" with riscv_hwprobe's values.  It probes
 * once per process (about a millisecond per CPU, all CPUs at once), keeps
 * the answer in a per-boot cache file, and honours the
 * HWTUNE_UNALIGNED_SCALAR_SPEED=slow|fast|unsupported override.
 *
 *   cc pick_copy.c $(pkg-config --cflags --libs hwtune) -o pick_copy
 *   ./pick_copy            or   HWTUNE_UNALIGNED_SCALAR_SPEED=slow ./pick_copy
 */
#include <hwtune/hwtune.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void copy_fn(unsigned char *dst, const unsigned char *src, size_t n);

/* FAST: move 8 bytes at a time whatever the alignment.  memcpy of a fixed
 * 8 bytes is how C spells an unaligned load or store; compilers turn it into
 * a single instruction on CPUs that allow it. */
static void copy_words_unaligned(unsigned char *dst, const unsigned char *src, size_t n)
{
	uint64_t w;

	for (; n >= 8; n -= 8, dst += 8, src += 8) {
		memcpy(&w, src, 8);
		memcpy(dst, &w, 8);
	}
	while (n--)
		*dst++ = *src++;
}

/* Anything else (slow, emulated, unsupported, unknown): never issue a
 * misaligned word access; bytes are always safe. */
static void copy_bytes(unsigned char *dst, const unsigned char *src, size_t n)
{
	while (n--)
		*dst++ = *src++;
}

int main(void)
{
	static unsigned char src[4096 + 16], dst[4096 + 16];
	const size_t len = 4096, src_off = 1, dst_off = 3; /* deliberately misaligned */
	copy_fn *copy;
	const char *how;
	int speed;

	/* 1. Ask once.  A negative value is an error (-errno): play safe. */
	speed = hwt_misaligned_speed();
	if (speed == HWT_MISALIGNED_FAST) {
		copy = copy_words_unaligned;
		how = "unaligned 8-byte words";
	} else {
		copy = copy_bytes;
		how = "bytes";
	}
	printf("misaligned accesses: %s -> copying with %s\n",
	       speed < 0 ? "error" : hwt_misaligned_speed_name((enum hwt_misaligned_speed)speed),
	       how);

	/* 2. Use the routine, and check that it copied. */
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	copy(dst + dst_off, src + src_off, len);
	if (memcmp(dst + dst_off, src + src_off, len) != 0) {
		fprintf(stderr, "pick_copy: the copy differs from its source\n");
		return 1;
	}
	printf("copied %zu bytes from offset %zu to offset %zu: ok\n", len, src_off, dst_off);
	return 0;
}
