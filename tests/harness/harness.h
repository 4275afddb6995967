/* SPDX-License-Identifier: MIT */
/*
 * hwtune's test harness: one program per test area, each TEST() runs in a
 * forked child with a timeout, results are printed as TAP.
 *
 *   TEST(name) { ASSERT_EQ(1 + 1, 2); }
 *   TEST_TIMEOUT(slow_one, 30) { ... }     timeout in seconds (default 10)
 *   SKIP("no perf events: %s", strerror(e));   exits the test as skipped
 *
 * A test passes when its body returns, fails on the first failed ASSERT, a
 * signal or the timeout.  Options: -l list, -t NAME run one test, -v verbose.
 * HWT_TEST_TIMEOUT_SCALE=N multiplies every timeout (slow emulators).
 * Exit status: 0 all passed or skipped, 1 a failure.
 */
#ifndef HWT_TEST_HARNESS_H
#define HWT_TEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*hwt_test_fn)(void);

void hwt_test_register(const char *name, hwt_test_fn fn, unsigned timeout_s);
_Noreturn void hwt_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
_Noreturn void hwt_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hwt_test_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds multiplied by HWT_TEST_TIMEOUT_SCALE: use for deadlines inside tests. */
double hwt_test_scale(void);
/* argv[0] of the test program and whether it runs under an emulator wrapper. */
extern const char *hwt_test_argv0;

#define HWT__TEST(name, secs)                                                  \
	static void name(void);                                                \
	__attribute__((constructor)) static void hwt__reg_##name(void)         \
	{                                                                      \
		hwt_test_register(#name, name, (secs));                        \
	}                                                                      \
	static void name(void)

#define TEST(name) HWT__TEST(name, 10)
#define TEST_TIMEOUT(name, secs) HWT__TEST(name, secs)

#define SKIP(...) hwt_test_skip(__VA_ARGS__)
#define TLOG(...) hwt_test_log(__VA_ARGS__)

#define ASSERT_TRUE(c)                                                         \
	do {                                                                   \
		if (!(c))                                                      \
			hwt_test_fail(__FILE__, __LINE__, "%s", #c);           \
	} while (0)
#define ASSERT_FALSE(c) ASSERT_TRUE(!(c))

#define HWT__ASSERT_CMP(a, op, b)                                              \
	do {                                                                   \
		long long hwt__a = (long long)(a), hwt__b = (long long)(b);    \
		if (!(hwt__a op hwt__b))                                       \
			hwt_test_fail(__FILE__, __LINE__,                      \
				      "%s %s %s (%lld vs %lld)", #a, #op, #b,  \
				      hwt__a, hwt__b);                         \
	} while (0)
#define ASSERT_EQ(a, b) HWT__ASSERT_CMP(a, ==, b)
#define ASSERT_NE(a, b) HWT__ASSERT_CMP(a, !=, b)
#define ASSERT_LT(a, b) HWT__ASSERT_CMP(a, <, b)
#define ASSERT_LE(a, b) HWT__ASSERT_CMP(a, <=, b)
#define ASSERT_GT(a, b) HWT__ASSERT_CMP(a, >, b)
#define ASSERT_GE(a, b) HWT__ASSERT_CMP(a, >=, b)

/* Unsigned 64-bit comparison (command dwords, counters). */
#define ASSERT_EQ_U64(a, b)                                                    \
	do {                                                                   \
		uint64_t hwt__a = (uint64_t)(a), hwt__b = (uint64_t)(b);       \
		if (hwt__a != hwt__b)                                          \
			hwt_test_fail(__FILE__, __LINE__,                      \
				      "%s == %s (0x%016llx vs 0x%016llx)", #a, \
				      #b, (unsigned long long)hwt__a,          \
				      (unsigned long long)hwt__b);             \
	} while (0)

#define ASSERT_STR_EQ(a, b)                                                    \
	do {                                                                   \
		const char *hwt__a = (a), *hwt__b = (b);                       \
		if (!hwt__a || !hwt__b || strcmp(hwt__a, hwt__b) != 0)         \
			hwt_test_fail(__FILE__, __LINE__,                      \
				      "%s == %s (\"%s\" vs \"%s\")", #a, #b,   \
				      hwt__a ? hwt__a : "(null)",              \
				      hwt__b ? hwt__b : "(null)");             \
	} while (0)

/* An errno-returning call that must succeed (returns >= 0). */
#define ASSERT_OK(expr)                                                        \
	do {                                                                   \
		long long hwt__r = (long long)(expr);                          \
		if (hwt__r < 0)                                                \
			hwt_test_fail(__FILE__, __LINE__, "%s = %lld (%s)",    \
				      #expr, hwt__r, strerror((int)-hwt__r));  \
	} while (0)

#endif
