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
 * Built with -fsanitize=address, a test that leaks memory fails.
 * Exit status: 0 all passed or skipped, 1 a failure.
 */
#ifndef HWT_TEST_HARNESS_H
#define HWT_TEST_HARNESS_H

#include <pthread.h>
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
/* One step of a bounded wait on 2 CPUs: *n counts the steps; the first
 * spins return at once, the next yields sched_yield(), then each sleeps
 * 50 us (a spinner must not starve the thread it waits for). */
void hwt_test_backoff(unsigned *n, unsigned spins, unsigned yields);
/* Pin thread th (pthread_self() for the caller) to CPU cpu: 0 or an errno
 * value. */
int hwt_test_pin(pthread_t th, int cpu);
/* argv[0] of the test program and whether it runs under an emulator wrapper. */
extern const char *hwt_test_argv0;

/* What the harness defines for itself is named tst_* / TST_*: hwt__* is
 * reserved for the library's internals, which tests include. */
#define TST_DEFINE_TEST(name, secs)                                            \
	static void name(void);                                                \
	__attribute__((constructor)) static void tst_reg_##name(void)          \
	{                                                                      \
		hwt_test_register(#name, name, (secs));                        \
	}                                                                      \
	static void name(void)

#define TEST(name) TST_DEFINE_TEST(name, 10)
#define TEST_TIMEOUT(name, secs) TST_DEFINE_TEST(name, secs)

#define SKIP(...) hwt_test_skip(__VA_ARGS__)
#define TLOG(...) hwt_test_log(__VA_ARGS__)

#define ASSERT_TRUE(c)                                                         \
	do {                                                                   \
		if (!(c))                                                      \
			hwt_test_fail(__FILE__, __LINE__, "%s", #c);           \
	} while (0)
#define ASSERT_FALSE(c) ASSERT_TRUE(!(c))

#define TST_ASSERT_CMP(a, op, b)                                               \
	do {                                                                   \
		long long tst_a = (long long)(a), tst_b = (long long)(b);      \
		if (!(tst_a op tst_b))                                         \
			hwt_test_fail(__FILE__, __LINE__,                      \
				      "%s %s %s (%lld vs %lld)", #a, #op, #b,  \
				      tst_a, tst_b);                           \
	} while (0)
#define ASSERT_EQ(a, b) TST_ASSERT_CMP(a, ==, b)
#define ASSERT_NE(a, b) TST_ASSERT_CMP(a, !=, b)
#define ASSERT_LT(a, b) TST_ASSERT_CMP(a, <, b)
#define ASSERT_LE(a, b) TST_ASSERT_CMP(a, <=, b)
#define ASSERT_GT(a, b) TST_ASSERT_CMP(a, >, b)
#define ASSERT_GE(a, b) TST_ASSERT_CMP(a, >=, b)

/* Unsigned 64-bit comparison (command dwords, counters). */
#define ASSERT_EQ_U64(a, b)                                                    \
	do {                                                                   \
		uint64_t tst_a = (uint64_t)(a), tst_b = (uint64_t)(b);         \
		if (tst_a != tst_b)                                            \
			hwt_test_fail(__FILE__, __LINE__,                      \
				      "%s == %s (0x%016llx vs 0x%016llx)", #a, \
				      #b, (unsigned long long)tst_a,           \
				      (unsigned long long)tst_b);              \
	} while (0)

#define ASSERT_STR_EQ(a, b)                                                    \
	do {                                                                   \
		const char *tst_a = (a), *tst_b = (b);                         \
		if (!tst_a || !tst_b || strcmp(tst_a, tst_b) != 0)             \
			hwt_test_fail(__FILE__, __LINE__,                      \
				      "%s == %s (\"%s\" vs \"%s\")", #a, #b,   \
				      tst_a ? tst_a : "(null)",                \
				      tst_b ? tst_b : "(null)");               \
	} while (0)

/* An errno-returning call that must succeed (returns >= 0). */
#define ASSERT_OK(expr)                                                        \
	do {                                                                   \
		long long tst_r = (long long)(expr);                           \
		if (tst_r < 0)                                                 \
			hwt_test_fail(__FILE__, __LINE__, "%s = %lld (%s)",    \
				      #expr, tst_r, strerror((int)-tst_r));    \
	} while (0)

#endif
