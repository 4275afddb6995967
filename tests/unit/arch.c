/* SPDX-License-Identifier: MIT */
/* The arch layer: copy loops copy, use word-sized accesses, counters count. */
#include "harness/harness.h"

#include "arch/arch.h"

#include <stdlib.h>
#include <string.h>

enum { BUF = 0x4000, COPY = BUF / 2 - 0x80 };

typedef void (*copy_fn)(void *, const void *, size_t);

static void check_copy(copy_fn fn, size_t len, size_t expect)
{
	unsigned char *buf = aligned_alloc(4096, BUF);
	unsigned char *dst = buf + 1, *src = dst + 0x2000 + 2;

	ASSERT_TRUE(buf);
	for (size_t i = 0; i < BUF; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	memset(dst, 0xee, len + 64 < 0x2000 ? len + 64 : len);
	fn(dst, src, len);
	ASSERT_EQ(memcmp(dst, src, expect), 0);
	/* nothing beyond the truncated length is written */
	for (size_t i = expect; i < len && i < expect + 64; i++)
		ASSERT_EQ(dst[i], 0xee);
	free(buf);
}

TEST(copy_words_kernel_offsets)
{
	check_copy(hwt__copy_words_unaligned, COPY, COPY);
}

TEST(copy_bytes_kernel_offsets)
{
	check_copy(hwt__copy_bytes_unaligned, COPY, COPY);
}

TEST(copy_truncates_like_kernel)
{
	check_copy(hwt__copy_words_unaligned, 8 * HWT_WORD_BYTES * 3 + 17, 8 * HWT_WORD_BYTES * 3);
	check_copy(hwt__copy_bytes_unaligned, 8 * 5 + 7, 8 * 5);
	check_copy(hwt__copy_words_unaligned, 8 * HWT_WORD_BYTES - 1, 0);
	check_copy(hwt__copy_bytes_unaligned, 7, 0);
}

/* Count word-sized loads and stores among the first instructions of fn
 * (on aarch64 and riscv64 up to its return: what follows depends on the link). */
static void count_word_accesses(copy_fn fn, unsigned *loads, unsigned *stores)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)fn;

	*loads = *stores = 0;
#if defined(HWT_ARCH_GENERIC)
	(void)p;
	SKIP("generic C copy loops: the compiler picks access widths");
#elif defined(__x86_64__)
	/* REX.W (0x48/0x4c) + mov r64,m64 (8b) or mov m64,r64 (89), base %rsi/%rdi */
	for (int i = 0; i < 160; i++) {
		if ((p[i] & 0xfb) != 0x48)
			continue;
		if (p[i + 1] == 0x8b && (p[i + 2] & 7) == 6)
			++*loads;
		if (p[i + 1] == 0x89 && (p[i + 2] & 7) == 7)
			++*stores;
	}
#elif defined(__aarch64__)
	for (int i = 0; i < 40; i++) {
		uint32_t insn;

		memcpy(&insn, p + 4 * i, 4);
		if (insn == 0xd65f03c0u) /* RET: past it is another function */
			break;
		*loads += (insn & 0xffc00000u) == 0xf9400000u;  /* LDR Xt, [Xn, #imm] */
		*stores += (insn & 0xffc00000u) == 0xf9000000u; /* STR Xt, [Xn, #imm] */
	}
#elif defined(__riscv)
	for (int i = 0; i < 40; i++) {
		uint32_t insn;

		memcpy(&insn, p + 4 * i, 4);
		if (insn == 0x00008067u) /* ret (jalr x0, 0(ra)): the function's end */
			break;
		*loads += (insn & 0x707fu) == 0x3003u;  /* ld */
		*stores += (insn & 0x707fu) == 0x3023u; /* sd */
	}
#endif
}

TEST(word_loop_uses_word_accesses)
{
	unsigned loads, stores;

	count_word_accesses(hwt__copy_words_unaligned, &loads, &stores);
	TLOG("%s: %u word loads, %u word stores", HWT_ARCH_NAME, loads, stores);
	ASSERT_EQ(loads, 8);
	ASSERT_EQ(stores, 8);
	count_word_accesses(hwt__copy_bytes_unaligned, &loads, &stores);
	ASSERT_EQ(loads, 0);
	ASSERT_EQ(stores, 0);
}

TEST(counter_advances)
{
	uint64_t a = hwt__counter(), b;
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
	b = hwt__counter();
	ASSERT_GT(b, a);
	TLOG("counter_hz %llu (0 = calibrate)", (unsigned long long)hwt__counter_hz());
}

TEST(wait_change_returns)
{
	_Atomic uint32_t w = 5;

	/* a bounded wait: returns the old value when nothing changes */
	ASSERT_EQ(hwt__wait_change32(&w, 5), 5);
	ASSERT_EQ(hwt__wait_change32(&w, 4), 5);
	hwt__cpu_relax();
}
