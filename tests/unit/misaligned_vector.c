/* SPDX-License-Identifier: MIT */
/*
 * The vector probe and the split penalties: the vector rule and its set
 * rule (pure), the vector override (options and environment), the vector
 * copy loops copy, the probe on this machine's CPUs gives valid values and
 * never crashes, a forced trap gives UNSUPPORTED, splits are filled.
 * Verdicts are whatever the hardware (or emulator) gives: no speed or time
 * bound is asserted.
 */
#include "harness/harness.h"

#include "arch/arch.h"
#include "arch/hwprobe.h"
#include "misaligned/misaligned.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* --- pure parts ----------------------------------------------------------- */

TEST(vector_rule_is_the_scalar_rule_without_emulation)
{
	struct hwt__probe_obs o = { .word_ticks = 100, .byte_ticks = 800, .align_faults = 5,
				    .copy_ok = true };
	struct hwt__verdict v;

	/* a counted kernel fault means nothing for vector accesses */
	hwt__vector_classify(&o, &v);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(v.ratio_x100, 800);
	o = (struct hwt__probe_obs){ .word_ticks = 1000, .byte_ticks = 10, .align_faults = -1,
				     .copy_ok = true };
	hwt__vector_classify(&o, &v);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(v.ratio_x100, 1);
	ASSERT_FALSE(v.notes & (HWT_MISALIGNED_NOTE_FIRMWARE | HWT_MISALIGNED_NOTE_NO_PERF));
	/* a trap at a misaligned vector access: UNSUPPORTED, whatever the timing */
	o.fault_signal = SIGBUS;
	hwt__vector_classify(&o, &v);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNSUPPORTED);
	o = (struct hwt__probe_obs){ .word_ticks = 0, .byte_ticks = 10, .copy_ok = true };
	hwt__vector_classify(&o, &v);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_COARSE);
	o = (struct hwt__probe_obs){ .word_ticks = 1, .byte_ticks = 10, .copy_ok = false };
	hwt__vector_classify(&o, &v);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_BAD_COPY);
}

TEST(vector_set_rule)
{
	struct hwt_misaligned_cpu c[3];

	memset(c, 0, sizeof(c));
	for (int i = 0; i < 3; i++) {
		c[i].speed = HWT_MISALIGNED_SLOW; /* the scalar one plays no part */
		c[i].vector.speed = HWT_MISALIGNED_FAST;
		c[i].avx2.speed = HWT_MISALIGNED_UNSUPPORTED;
	}
	ASSERT_EQ(hwt_misaligned_vector_summary(c, 3, false), HWT_MISALIGNED_FAST);
	ASSERT_EQ(hwt_misaligned_vector_summary(c, 3, true), HWT_MISALIGNED_UNSUPPORTED);
	c[1].vector.speed = HWT_MISALIGNED_SLOW;
	ASSERT_EQ(hwt_misaligned_vector_summary(c, 3, false), HWT_MISALIGNED_UNKNOWN);
	c[1].status = -EINVAL; /* not probed: left out */
	ASSERT_EQ(hwt_misaligned_vector_summary(c, 3, false), HWT_MISALIGNED_FAST);
	ASSERT_EQ(hwt_misaligned_vector_summary(c, 0, false), HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(hwt_misaligned_vector_summary(NULL, 1, false), -EINVAL);
}

/* The avx512 member by number, and the same set rule over it. */
TEST(unit_by_number_and_its_set_rule)
{
	struct hwt_misaligned_cpu c[3];

	memset(c, 0, sizeof(c));
	for (int i = 0; i < 3; i++) {
		c[i].vector.speed = HWT_MISALIGNED_SLOW;
		c[i].avx2.speed = HWT_MISALIGNED_FAST;
		c[i].avx512.speed = HWT_MISALIGNED_UNSUPPORTED;
	}
	ASSERT_TRUE(hwt_misaligned_cpu_unit(&c[1], HWT_MISALIGNED_UNIT_VECTOR) == &c[1].vector);
	ASSERT_TRUE(hwt_misaligned_cpu_unit(&c[1], HWT_MISALIGNED_UNIT_AVX2) == &c[1].avx2);
	ASSERT_TRUE(hwt_misaligned_cpu_unit(&c[1], HWT_MISALIGNED_UNIT_AVX512) == &c[1].avx512);
	ASSERT_TRUE(hwt_misaligned_cpu_unit(&c[1], HWT_MISALIGNED_UNITS) == NULL);
	ASSERT_TRUE(hwt_misaligned_cpu_unit(NULL, HWT_MISALIGNED_UNIT_VECTOR) == NULL);
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_VECTOR), HWT_MISALIGNED_SLOW);
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_AVX2), HWT_MISALIGNED_FAST);
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_AVX512),
		  HWT_MISALIGNED_UNSUPPORTED);
	c[2].avx512.speed = HWT_MISALIGNED_FAST;
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_AVX512), HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_AVX2), HWT_MISALIGNED_FAST);
	c[2].status = -EINVAL; /* not probed: left out */
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_AVX512),
		  HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNITS), -EINVAL);
	ASSERT_EQ(hwt_misaligned_unit_summary(NULL, 1, HWT_MISALIGNED_UNIT_AVX512), -EINVAL);
	ASSERT_EQ(hwt_misaligned_unit_summary(NULL, 0, HWT_MISALIGNED_UNIT_AVX512),
		  HWT_MISALIGNED_UNKNOWN);
	/* the bool form is the same rule */
	ASSERT_EQ(hwt_misaligned_vector_summary(c, 3, true),
		  hwt_misaligned_unit_summary(c, 3, HWT_MISALIGNED_UNIT_AVX2));
}

#if defined(__x86_64__) && !defined(HWT_ARCH_GENERIC)
/* Every flag of /proc/cpuinfo's "flags" line in want[] is there; -1: unreadable. */
static int cpuinfo_has(const char *const *want, unsigned n)
{
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int r = -1;

	if (!f)
		return -1;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		r = 1;
		for (unsigned i = 0; i < n; i++) {
			char pat[64];
			const char *p;
			size_t l;

			snprintf(pat, sizeof(pat), " %s", want[i]);
			p = strstr(line, pat);
			l = strlen(pat);
			if (!p || (p[l] != ' ' && p[l] != '\n'))
				r = 0;
		}
	}
	fclose(f);
	return r;
}

static void run_touch(void *loops)
{
	((const struct hwt__vec_loops *)loops)->touch();
}

#endif

/* The x86_64 verdict from cpuid and XCR0 as a pure function: a CPU and an
 * OS with AVX-512, and each answer that takes it away (a VM may leave the
 * cpuid bits and not the XCR0 state); elsewhere the unit does not exist. */
TEST(avx512_needs_the_cpu_bits_and_the_os_state)
{
#if defined(__x86_64__) && !defined(HWT_ARCH_GENERIC)
	const uint32_t ecx1 = 1u << 27 | 1u << 28; /* OSXSAVE, AVX */
	const uint32_t ebx7 = 1u << 5 | 1u << 16 | 1u << 30 | 1u << 31; /* AVX2, F, BW, VL */
	const uint64_t xcr0 = 0xe7; /* x87, SSE, YMM, opmask, ZMM_Hi256, Hi16_ZMM */
	static const char *const flags[] = { "avx512f", "avx512bw", "avx512vl" };
	struct hwt__vec_loops l = { NULL, NULL, NULL, NULL };
	int here;

	ASSERT_TRUE(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7, xcr0));
	ASSERT_TRUE(hwt__x86_vec_enabled(HWT__VEC_WIDE, ecx1, ebx7, xcr0));
	ASSERT_TRUE(hwt__x86_vec_enabled(HWT__VEC_MAIN, 0, 0, 0)); /* SSE2: baseline */
	ASSERT_FALSE(hwt__x86_vec_enabled(HWT__VEC_KINDS, ecx1, ebx7, xcr0));
	/* the OS saves no ZMM or opmask state: AVX2 yes, AVX-512 no */
	ASSERT_FALSE(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7, 0x07));
	ASSERT_TRUE(hwt__x86_vec_enabled(HWT__VEC_WIDE, ecx1, ebx7, 0x07));
	for (int bit = 1; bit <= 7; bit++) {
		bool needed = bit == 1 || bit == 2 || bit >= 5;

		ASSERT_EQ(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7, xcr0 & ~(1ull << bit)),
			  !needed);
	}
	/* each of F, BW and VL is needed; AVX2's bit is not */
	ASSERT_FALSE(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7 & ~(1u << 16), xcr0));
	ASSERT_FALSE(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7 & ~(1u << 30), xcr0));
	ASSERT_FALSE(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7 & ~(1u << 31), xcr0));
	ASSERT_TRUE(hwt__x86_vec_enabled(HWT__VEC_WIDE512, ecx1, ebx7 & ~(1u << 5), xcr0));
	ASSERT_FALSE(hwt__x86_vec_enabled(HWT__VEC_WIDE, ecx1, ebx7 & ~(1u << 5), xcr0));
	/* no OSXSAVE (XCR0 unreadable), or AVX masked */
	for (unsigned k = HWT__VEC_WIDE; k <= HWT__VEC_WIDE512; k++) {
		ASSERT_FALSE(hwt__x86_vec_enabled(k, ecx1 & ~(1u << 27), ebx7, xcr0));
		ASSERT_FALSE(hwt__x86_vec_enabled(k, ecx1 & ~(1u << 28), ebx7, xcr0));
	}
	/* this machine: the loops' answer is the kernel's (it drops the flags
	 * of a state XCR0 does not enable) */
	ASSERT_TRUE(hwt__vec_get(HWT__VEC_WIDE512, &l) >= 0);
	ASSERT_STR_EQ(l.name, "avx512");
	here = cpuinfo_has(flags, 3);
	TLOG("avx512 here: cpuid/xcr0 %d, /proc/cpuinfo %d", hwt__vec_get(HWT__VEC_WIDE512, &l), here);
	if (here >= 0)
		ASSERT_EQ(hwt__vec_get(HWT__VEC_WIDE512, &l), here);
	/* without the unit its one instruction traps (the SIGILL guard's
	 * case; it shows the encoding is AVX-512 indeed) */
	if (hwt__vec_get(HWT__VEC_WIDE512, &l) == 0) {
		int sig = 0;

		ASSERT_TRUE(l.touch != NULL);
		ASSERT_OK(hwt__fault_guard_enter());
		ASSERT_OK(hwt__guarded_call(run_touch, &l, 0, &sig));
		hwt__fault_guard_leave();
		ASSERT_EQ(sig, SIGILL);
	}
#else
	struct hwt__vec_loops l = { NULL, NULL, NULL, NULL };
	int r = hwt__vec_get(HWT__VEC_WIDE512, &l);

	ASSERT_TRUE(r == -ENODEV || r == -ENOSYS); /* no such unit, or no loops at all */
	ASSERT_TRUE(l.name == NULL);
#endif
}

TEST(vector_override_from_environment)
{
	const char *bad = NULL;

	unsetenv("HWTUNE_UNALIGNED_VECTOR_SPEED");
	ASSERT_EQ(hwt_misaligned_env_vector_override(&bad), 0);
	setenv("HWTUNE_UNALIGNED_VECTOR_SPEED", "slow", 1);
	ASSERT_EQ(hwt_misaligned_env_vector_override(&bad), HWT_MISALIGNED_SLOW);
	/* the scalar variable is another one */
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "fast", 1);
	ASSERT_EQ(hwt_misaligned_env_vector_override(&bad), HWT_MISALIGNED_SLOW);
	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	ASSERT_TRUE(bad == NULL);
	setenv("HWTUNE_UNALIGNED_VECTOR_SPEED", "emulated", 1); /* not a vector word */
	ASSERT_EQ(hwt_misaligned_env_vector_override(&bad), -EINVAL);
	ASSERT_STR_EQ(bad, "emulated");
	setenv("HWTUNE_UNALIGNED_VECTOR_SPEED", "", 1); /* empty is invalid, as for the scalar one */
	ASSERT_EQ(hwt_misaligned_env_vector_override(&bad), -EINVAL);
	ASSERT_STR_EQ(bad, "");
	unsetenv("HWTUNE_UNALIGNED_VECTOR_SPEED");
}

TEST(hwprobe_vector_only_on_riscv)
{
	int r = hwt__hwprobe_vector(0);

	TLOG("%s: riscv_hwprobe(MISALIGNED_VECTOR_PERF, cpu 0) = %d", HWT_ARCH_NAME, r);
	if (strcmp(HWT_ARCH_NAME, "riscv64") != 0)
		ASSERT_EQ(r, -ENOSYS);
	else
		ASSERT_TRUE(r < 0 || r == 0 || (r >= 2 && r <= 4));
}

/* --- the arch layer's loops ---------------------------------------------- */

enum { BUF = 0x4000, COPY = BUF / 2 - 0x80 };

static void check_vec_copy(void (*fn)(void *, const void *, size_t), size_t len, size_t expect)
{
	unsigned char *buf = aligned_alloc(4096, BUF);
	unsigned char *dst = buf + 1, *src = dst + 0x2000 + 2;

	ASSERT_TRUE(buf);
	for (size_t i = 0; i < BUF; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	memset(dst, 0xee, 0x2000);
	fn(dst, src, len);
	ASSERT_EQ(memcmp(dst, src, expect), 0);
	for (size_t i = expect; i < expect + 64; i++) /* nothing past the truncated length */
		ASSERT_EQ(dst[i], 0xee);
	free(buf);
}

static void touch_unit(void *arg)
{
	((struct hwt__vec_loops *)arg)->touch();
}

/* Present for this test: the HWCAP answer, or the instruction under the guard. */
static int unit_present(unsigned kind, struct hwt__vec_loops *l)
{
	int r = hwt__vec_get(kind, l), sig = 0;

	if (r == -1 && l->touch) {
		ASSERT_OK(hwt__fault_guard_enter());
		ASSERT_OK(hwt__guarded_call(touch_unit, l, 0, &sig));
		hwt__fault_guard_leave();
		r = sig ? 0 : 1;
		TLOG("%s: HWCAP silent, the instruction %s", l->name, sig ? "trapped" : "ran");
	}
	return r;
}

TEST(vector_loops_copy_at_kernel_offsets)
{
	unsigned ran = 0;

	for (unsigned k = 0; k < HWT__VEC_KINDS; k++) {
		struct hwt__vec_loops l = { NULL, NULL, NULL, NULL };
		int r = unit_present(k, &l);

		TLOG("kind %u: %s, present %d", k, l.name ? l.name : "-", r);
		if (r == -ENOSYS) {
			ASSERT_TRUE(l.words == NULL);
			continue;
		}
		if (r == -ENODEV || r == 0)
			continue;
		ASSERT_EQ(r, 1);
		ASSERT_TRUE(l.name && l.words && l.bytes);
		check_vec_copy(l.words, COPY, COPY);
		check_vec_copy(l.bytes, COPY, COPY);
		check_vec_copy(l.words, 64 * 3 + 63, 64 * 3);
		check_vec_copy(l.bytes, 8 * 5 + 7, 8 * 5);
		check_vec_copy(l.words, 63, 0);
		ran++;
	}
	ASSERT_EQ(hwt__vec_get(HWT__VEC_KINDS, &(struct hwt__vec_loops){ 0 }) < 0, 1);
	/* SSE2 and Advanced SIMD are baseline; RVV only where V is (qemu:
	 * -cpu rv64,v=true, as make check-cross runs it) */
	if (!strcmp(HWT_ARCH_NAME, "x86_64") || !strcmp(HWT_ARCH_NAME, "aarch64"))
		ASSERT_GT(ran, 0);
}

TEST(split_loops_keep_the_bytes)
{
	unsigned char *buf = aligned_alloc(4096, 8192);

	ASSERT_TRUE(buf);
	for (int i = 0; i < 8192; i++)
		buf[i] = (unsigned char)(i * 13 + 1);
	hwt__split_loads(buf + 4092, 64);
	hwt__split_stores(buf + 4092, 64); /* a page-crossing store writes back what is there */
	hwt__split_stores(buf + 60, 64);
	hwt__split_stores(buf + 64, 7);    /* truncated to 0: nothing */
	for (int i = 0; i < 8192; i++)
		ASSERT_EQ(buf[i], (unsigned char)(i * 13 + 1));
	free(buf);
}

/* --- the probe ------------------------------------------------------------ */

static bool valid_vector(const struct hwt_misaligned_vector *v)
{
	switch (v->speed) {
	case HWT_MISALIGNED_UNKNOWN:
		/* no loop in this build, a coarse counter, or a bad copy */
		return v->notes & (HWT_MISALIGNED_NOTE_NO_LOOP | HWT_MISALIGNED_NOTE_COARSE |
				   HWT_MISALIGNED_NOTE_BAD_COPY);
	case HWT_MISALIGNED_SLOW:
	case HWT_MISALIGNED_FAST:
		return v->ratio_x100 > 0 && v->word_ns > 0 && v->byte_ns > 0 && v->unit;
	case HWT_MISALIGNED_UNSUPPORTED:
		return v->fault_signal || (v->notes & HWT_MISALIGNED_NOTE_NO_UNIT);
	default:
		return false; /* never EMULATED */
	}
}

static void log_cpu(const struct hwt_misaligned_cpu *c)
{
	TLOG("cpu%d: scalar %s | %s %s %u.%02u (word %llu ns, byte %llu ns, notes 0x%x) | "
	     "%s %s %u.%02u | %s %s %u.%02u | split line %u/%u page %u/%u (x100, load/store) | probe %llu ns "
	     "(vector %llu, split %llu)",
	     c->cpu, hwt_misaligned_speed_name(c->speed), c->vector.unit ? c->vector.unit : "-",
	     hwt_misaligned_speed_name(c->vector.speed), c->vector.ratio_x100 / 100,
	     c->vector.ratio_x100 % 100, (unsigned long long)c->vector.word_ns,
	     (unsigned long long)c->vector.byte_ns, c->vector.notes,
	     c->avx2.unit ? c->avx2.unit : "-", hwt_misaligned_speed_name(c->avx2.speed),
	     c->avx2.ratio_x100 / 100, c->avx2.ratio_x100 % 100,
	     c->avx512.unit ? c->avx512.unit : "-", hwt_misaligned_speed_name(c->avx512.speed),
	     c->avx512.ratio_x100 / 100, c->avx512.ratio_x100 % 100, c->split.line_load,
	     c->split.line_store, c->split.page_load, c->split.page_store,
	     (unsigned long long)c->probe_ns, (unsigned long long)c->vector_ns,
	     (unsigned long long)c->split_ns);
}

TEST_TIMEOUT(vector_and_split_results_are_valid, 60)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_CACHE };
	struct hwt_misaligned_report r;

	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_GT(r.n, 0);
	for (unsigned i = 0; i < r.n; i++) {
		const struct hwt_misaligned_cpu *c = &r.cpu[i];

		log_cpu(c);
		ASSERT_EQ(c->status, 0);
		ASSERT_TRUE(valid_vector(&c->vector));
		ASSERT_TRUE(valid_vector(&c->avx2));
		ASSERT_TRUE(valid_vector(&c->avx512));
		ASSERT_EQ(c->vector_source, HWT_MISALIGNED_MEASURED);
		ASSERT_FALSE(c->vector.notes & HWT_MISALIGNED_NOTE_BAD_COPY);
		ASSERT_LE(c->vector_ns + c->split_ns, c->probe_ns);
#if defined(HWT_ARCH_GENERIC)
		ASSERT_EQ(c->vector.speed, HWT_MISALIGNED_UNKNOWN);
		ASSERT_TRUE(c->vector.notes & HWT_MISALIGNED_NOTE_NO_LOOP);
#else
		/* SSE2 and Advanced SIMD are always there; RVV when the CPU
		 * (or qemu -cpu rv64,v=true) has V */
		if (strcmp(HWT_ARCH_NAME, "riscv64") != 0)
			ASSERT_TRUE(c->vector.unit != NULL);
		if (strcmp(HWT_ARCH_NAME, "x86_64") != 0) {
			ASSERT_EQ(c->avx2.speed, HWT_MISALIGNED_UNSUPPORTED);
			ASSERT_TRUE(c->avx2.notes & HWT_MISALIGNED_NOTE_NO_UNIT);
			ASSERT_TRUE(c->avx2.unit == NULL);
		}
		{
			struct hwt__vec_loops l;
			bool has = hwt__vec_get(HWT__VEC_WIDE512, &l) == 1;

			/* measured where the CPU and the OS have it, else none */
			ASSERT_EQ(c->avx512.unit != NULL, has);
			if (!has) {
				ASSERT_EQ(c->avx512.speed, HWT_MISALIGNED_UNSUPPORTED);
				ASSERT_EQ(c->avx512.notes, HWT_MISALIGNED_NOTE_NO_UNIT);
			} else {
				ASSERT_STR_EQ(c->avx512.unit, "avx512");
				ASSERT_FALSE(c->avx512.notes & HWT_MISALIGNED_NOTE_BAD_COPY);
			}
		}
#endif
		/* splits are filled where the scalar access neither faults nor traps */
		if (c->speed != HWT_MISALIGNED_UNSUPPORTED && c->speed != HWT_MISALIGNED_EMULATED) {
			ASSERT_GT(c->split.line_load, 0);
			ASSERT_GT(c->split.line_store, 0);
			ASSERT_GT(c->split.page_load, 0);
			ASSERT_GT(c->split.page_store, 0);
			ASSERT_GT(c->split.line_bytes, 0);
			ASSERT_GT(c->split.page_bytes, c->split.line_bytes);
		}
	}
	ASSERT_EQ(r.vector_summary, hwt_misaligned_vector_summary(r.cpu, r.n, false));
	ASSERT_EQ(r.avx2_summary, hwt_misaligned_vector_summary(r.cpu, r.n, true));
	ASSERT_EQ(r.avx512_summary,
		  hwt_misaligned_unit_summary(r.cpu, r.n, HWT_MISALIGNED_UNIT_AVX512));
	hwt_misaligned_report_free(&r);
}

TEST_TIMEOUT(forced_vector_trap_gives_unsupported, 30)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_misaligned_report r;
	int ret;

	hwt__misaligned_test_hook(HWT__MISALIGNED_FORCE_VECTOR_TRAP);
	ret = hwt_misaligned_probe(NULL, &o, &r);
	hwt__misaligned_test_hook(0);
	ASSERT_OK(ret);
	ASSERT_TRUE(r.cache_off);
	for (unsigned i = 0; i < r.n; i++) {
		const struct hwt_misaligned_cpu *c = &r.cpu[i];

		log_cpu(c);
		ASSERT_EQ(c->status, 0);
		/* the scalar probe is untouched by the vector trap */
		ASSERT_NE(c->fault_signal, SIGBUS);
		if (c->vector.notes & (HWT_MISALIGNED_NOTE_NO_LOOP | HWT_MISALIGNED_NOTE_NO_UNIT))
			continue; /* nothing to trap: no loop, or no unit */
		ASSERT_EQ(c->vector.speed, HWT_MISALIGNED_UNSUPPORTED);
		ASSERT_EQ(c->vector.fault_signal, SIGBUS);
		ASSERT_EQ(c->vector.samples, 0);
	}
	if (!(r.cpu[0].vector.notes & (HWT_MISALIGNED_NOTE_NO_LOOP | HWT_MISALIGNED_NOTE_NO_UNIT)))
		ASSERT_EQ(r.vector_summary, HWT_MISALIGNED_UNSUPPORTED);
	hwt_misaligned_report_free(&r);
}

TEST_TIMEOUT(vector_trap_seam_from_the_test_hook, 30)
{
	struct hwt_misaligned_opts o = { 0 };
	struct hwt_misaligned_report r;
	int ret;

	/* the CLI tests' way in (tests/harness/probe_hook.c); the environment
	 * variable alone does nothing in the library */
	setenv("HWTUNE_TEST_FORCE_VECTOR_TRAP", "1", 1);
	hwt__misaligned_test_hook(HWT__MISALIGNED_FORCE_VECTOR_TRAP);
	ret = hwt_misaligned_probe(NULL, &o, &r);
	hwt__misaligned_test_hook(0);
	unsetenv("HWTUNE_TEST_FORCE_VECTOR_TRAP");
	ASSERT_OK(ret);
	ASSERT_TRUE(r.cache_off); /* a seam never touches the cache */
	if (!(r.cpu[0].vector.notes & (HWT_MISALIGNED_NOTE_NO_LOOP | HWT_MISALIGNED_NOTE_NO_UNIT)))
		ASSERT_EQ(r.cpu[0].vector.speed, HWT_MISALIGNED_UNSUPPORTED);
	hwt_misaligned_report_free(&r);
}

TEST_TIMEOUT(vector_override_skips_vector_probing, 30)
{
	struct hwt_misaligned_opts o = { .vector_override_speed = HWT_MISALIGNED_SLOW };
	struct hwt_misaligned_report r;

	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_TRUE(r.cache_off); /* an override is never cached */
	ASSERT_EQ(r.source, HWT_MISALIGNED_MEASURED); /* the scalar part was probed */
	ASSERT_EQ(r.vector_summary, HWT_MISALIGNED_SLOW);
	for (unsigned i = 0; i < r.n; i++) {
		const struct hwt_misaligned_cpu *c = &r.cpu[i];

		ASSERT_EQ(c->vector.speed, HWT_MISALIGNED_SLOW);
		ASSERT_EQ(c->vector_source, HWT_MISALIGNED_FROM_OVERRIDE);
		ASSERT_EQ(c->vector.samples, 0);
		ASSERT_EQ(c->vector_ns, 0);
		ASSERT_EQ(c->split.line_load, 0); /* splits go with the vector probe */
		if (strcmp(HWT_ARCH_NAME, "x86_64") == 0 && !(c->avx2.notes & HWT_MISALIGNED_NOTE_NO_LOOP))
			ASSERT_EQ(c->avx2.speed, HWT_MISALIGNED_SLOW);
		else if (!(c->avx2.notes & HWT_MISALIGNED_NOTE_NO_LOOP) &&
			 strcmp(HWT_ARCH_NAME, "generic") != 0)
			ASSERT_EQ(c->avx2.speed, HWT_MISALIGNED_UNSUPPORTED); /* no such unit */
		/* the same for AVX-512, measured or not on this CPU */
		ASSERT_EQ(c->avx512.speed, c->avx2.speed);
		ASSERT_EQ(c->avx512.samples, 0);
		ASSERT_EQ(c->source, HWT_MISALIGNED_MEASURED);
		ASSERT_GT(c->samples, 0);
	}
	hwt_misaligned_report_free(&r);

	/* both overrides: nothing is probed at all */
	o.override_speed = HWT_MISALIGNED_FAST;
	o.vector_override_speed = HWT_MISALIGNED_UNSUPPORTED;
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_EQ(r.waves, 0);
	ASSERT_EQ(r.summary, HWT_MISALIGNED_FAST);
	ASSERT_EQ(r.vector_summary, HWT_MISALIGNED_UNSUPPORTED);
	for (unsigned i = 0; i < r.n; i++)
		ASSERT_EQ(r.cpu[i].probe_ns, 0);
	hwt_misaligned_report_free(&r);

	/* a scalar override alone still measures the vector units, as the
	 * kernel's two parameters are independent */
	o.vector_override_speed = HWT_MISALIGNED_UNKNOWN;
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_EQ(r.source, HWT_MISALIGNED_FROM_OVERRIDE);
	for (unsigned i = 0; i < r.n; i++) {
		ASSERT_EQ(r.cpu[i].speed, HWT_MISALIGNED_FAST);
		ASSERT_EQ(r.cpu[i].samples, 0);
		ASSERT_EQ(r.cpu[i].vector_source, HWT_MISALIGNED_MEASURED);
		ASSERT_TRUE(valid_vector(&r.cpu[i].vector));
	}
	hwt_misaligned_report_free(&r);
}

TEST(bad_vector_override_is_rejected)
{
	struct hwt_misaligned_opts o = { .vector_override_speed = HWT_MISALIGNED_EMULATED };
	struct hwt_misaligned_report r;

	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL);
	o.vector_override_speed = 9;
	ASSERT_EQ(hwt_misaligned_probe(NULL, &o, &r), -EINVAL);
}

TEST_TIMEOUT(no_vector_flag_leaves_them_out, 30)
{
	struct hwt_misaligned_opts o = { .flags = HWT_MISALIGNED_NO_VECTOR };
	struct hwt_misaligned_report r;

	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_TRUE(r.cache_off);
	for (unsigned i = 0; i < r.n; i++) {
		ASSERT_EQ(r.cpu[i].vector.speed, HWT_MISALIGNED_UNKNOWN);
		ASSERT_TRUE(r.cpu[i].vector.notes & HWT_MISALIGNED_NOTE_SKIPPED);
		ASSERT_EQ(r.cpu[i].vector_ns, 0);
		ASSERT_EQ(r.cpu[i].split.page_store, 0);
	}
	hwt_misaligned_report_free(&r);
}
