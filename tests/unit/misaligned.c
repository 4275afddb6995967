/* SPDX-License-Identifier: MIT */
/* The probe's pure parts: verdicts, the set rule, statistics, overrides, cache. */
#include "harness/harness.h"

#include "arch/arch.h"
#include "arch/hwprobe.h"
#include "misaligned/misaligned.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hwt__verdict classify(uint64_t word, uint64_t byte, int sig, int64_t faults)
{
	struct hwt__probe_obs o = { word, byte, sig, faults, true };
	struct hwt__verdict v;

	hwt__misaligned_classify(&o, &v);
	return v;
}

TEST(values_match_riscv_hwprobe)
{
	ASSERT_EQ(HWT_MISALIGNED_UNKNOWN, 0);
	ASSERT_EQ(HWT_MISALIGNED_EMULATED, 1);
	ASSERT_EQ(HWT_MISALIGNED_SLOW, 2);
	ASSERT_EQ(HWT_MISALIGNED_FAST, 3);
	ASSERT_EQ(HWT_MISALIGNED_UNSUPPORTED, 4);
	ASSERT_EQ(HWT_MISALIGNED_COPY_SIZE, 8064);
	ASSERT_STR_EQ(hwt_misaligned_speed_name(0), "unknown");
	ASSERT_STR_EQ(hwt_misaligned_speed_name(1), "emulated");
	ASSERT_STR_EQ(hwt_misaligned_speed_name(2), "slow");
	ASSERT_STR_EQ(hwt_misaligned_speed_name(3), "fast");
	ASSERT_STR_EQ(hwt_misaligned_speed_name(4), "unsupported");
	ASSERT_TRUE(hwt_misaligned_speed_name(5) == NULL);
	ASSERT_TRUE(hwt_misaligned_speed_name(-1) == NULL);
}

/* The note bits are ABI (a program may keep them) and their keys are the JSON contract
 * (docs/json.md): one list generates both, and neither may drift. */
#define NOTE_ROW(name, bit, key, text) { HWT_MISALIGNED_NOTE_##name, bit, key, text },
TEST(note_bits_and_keys_come_from_one_list)
{
	static const struct {
		unsigned value, bit;
		const char *key, *text;
	} row[] = { HWT_MISALIGNED_NOTES(NOTE_ROW) };
	static const struct {
		unsigned bit;
		const char *key;
	} want[] = {
		{ 0x01u, "probably-firmware-emulated" }, { 0x02u, "coarse-counter" }, { 0x04u, "marginal" },
		{ 0x08u, "perf-unavailable" }, { 0x10u, "migrated" }, { 0x20u, "budget-exhausted" },
		{ 0x40u, "bad-copy" }, { 0x80u, "fault-check-failed" }, { 0x100u, "no-loop" },
		{ 0x200u, "no-unit" }, { 0x400u, "skipped" },
	};
	unsigned seen = 0;

	ASSERT_EQ(sizeof(row) / sizeof(row[0]), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
		ASSERT_EQ(row[i].value, row[i].bit);
		ASSERT_EQ(row[i].bit, want[i].bit);
		ASSERT_STR_EQ(row[i].key, want[i].key);
		ASSERT_TRUE(row[i].text[0] != '\0');
		ASSERT_EQ(seen & row[i].bit, 0u);
		seen |= row[i].bit;
	}
	ASSERT_EQ(HWT_MISALIGNED_NOTE_FIRMWARE, 0x01);
	ASSERT_EQ(HWT_MISALIGNED_NOTE_CHECK_FAILED, 0x80);
	ASSERT_EQ(HWT_MISALIGNED_NOTE_SKIPPED, 0x400);
}
#undef NOTE_ROW

TEST(classify_fast_when_words_beat_bytes)
{
	struct hwt__verdict v = classify(142, 975, 0, 0);

	ASSERT_EQ(v.speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(v.ratio_x100, 686); /* integer division, as the kernel prints it */
	ASSERT_EQ(v.notes, 0);
}

TEST(classify_slow_when_words_do_not_beat_bytes)
{
	struct hwt__verdict v = classify(500, 400, 0, 0);

	ASSERT_EQ(v.speed, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(v.ratio_x100, 80);
	/* a tie is SLOW (word < byte is required) and flagged as marginal */
	v = classify(300, 300, 0, 0);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(v.ratio_x100, 100);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_MARGINAL);
	v = classify(300, 301, 0, 0);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_FAST);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_MARGINAL);
	v = classify(300, 340, 0, 0); /* 1.13: outside the band */
	ASSERT_FALSE(v.notes & HWT_MISALIGNED_NOTE_MARGINAL);
}

TEST(classify_zero_minimum_is_unknown)
{
	struct hwt__verdict v = classify(0, 975, 0, 0);

	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_COARSE);
	ASSERT_EQ(v.ratio_x100, 0);
	v = classify(3, 0, 0, 0);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_COARSE);
}

TEST(classify_signal_and_emulation_win_over_timing)
{
	struct hwt__verdict v = classify(100, 900, SIGBUS, 0);

	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNSUPPORTED);
	v = classify(0, 0, SIGILL, -1);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNSUPPORTED);
	v = classify(100, 900, 0, 16);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_EMULATED);
}

TEST(classify_firmware_emulation_is_slow_with_a_note)
{
	/* icicle-like: word copy ~300x slower than bytes, kernel saw nothing */
	struct hwt__verdict v = classify(300000, 1000, 0, 0);

	ASSERT_EQ(v.speed, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(v.ratio_x100, 0);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_FIRMWARE);
	ASSERT_FALSE(v.notes & HWT_MISALIGNED_NOTE_NO_PERF);
	/* perf unavailable: still SLOW, and both notes */
	v = classify(20000, 1000, 0, -1);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_SLOW);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_FIRMWARE);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_NO_PERF);
	/* 0.5 is slow hardware, not emulation */
	v = classify(2000, 1000, 0, 0);
	ASSERT_FALSE(v.notes & HWT_MISALIGNED_NOTE_FIRMWARE);
}

TEST(classify_bad_copy_and_huge_values)
{
	struct hwt__probe_obs o = { 100, 900, 0, 0, false };
	struct hwt__verdict v;

	hwt__misaligned_classify(&o, &v);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_TRUE(v.notes & HWT_MISALIGNED_NOTE_BAD_COPY);
	v = classify(1, UINT64_MAX, 0, 0);
	ASSERT_EQ(v.speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(v.ratio_x100, UINT32_MAX);
}

/* hwt_misaligned_summary() over CPUs with these speeds, all probed. */
static int summary_of(const int *speed, unsigned n)
{
	struct hwt_misaligned_cpu c[8];

	memset(c, 0, sizeof(c));
	for (unsigned i = 0; i < n; i++)
		c[i].speed = speed[i];
	return hwt_misaligned_summary(c, n);
}

TEST(set_rule_all_equal_or_unknown)
{
	int fast3[] = { 3, 3, 3 }, mixed[] = { 3, 3, 2 }, emu[] = { 1, 1 }, uns[] = { 4 };

	ASSERT_EQ(summary_of(fast3, 3), HWT_MISALIGNED_FAST);
	ASSERT_EQ(summary_of(mixed, 3), HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(summary_of(mixed, 2), HWT_MISALIGNED_FAST);
	ASSERT_EQ(summary_of(emu, 2), HWT_MISALIGNED_EMULATED);
	ASSERT_EQ(summary_of(uns, 1), HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(summary_of(NULL, 0), HWT_MISALIGNED_UNKNOWN);
}

TEST(summary_skips_cpus_not_probed)
{
	struct hwt_misaligned_cpu c[3] = {
		{ .cpu = 0, .speed = HWT_MISALIGNED_FAST },
		{ .cpu = 1, .speed = HWT_MISALIGNED_UNKNOWN, .status = -EINVAL },
		{ .cpu = 2, .speed = HWT_MISALIGNED_FAST },
	};

	ASSERT_EQ(hwt_misaligned_summary(c, 3), HWT_MISALIGNED_FAST);
	c[2].speed = HWT_MISALIGNED_SLOW;
	ASSERT_EQ(hwt_misaligned_summary(c, 3), HWT_MISALIGNED_UNKNOWN);
	c[0].status = c[2].status = -EINVAL;
	ASSERT_EQ(hwt_misaligned_summary(c, 3), HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(hwt_misaligned_summary(c, 0), HWT_MISALIGNED_UNKNOWN);
}

/* Synthetic sample streams through the same min tracker and classifier the
 * probe uses: noise spikes and a late true minimum. */
static int verdict_of_stream(const uint64_t *w, const uint64_t *b, unsigned n, unsigned *x100)
{
	struct hwt__mintrack tw, tb;
	struct hwt__probe_obs o = { 0, 0, 0, 0, true };
	struct hwt__verdict v;

	hwt__mintrack_init(&tw);
	hwt__mintrack_init(&tb);
	for (unsigned i = 0; i < n; i++) {
		hwt__mintrack_add(&tw, w[i]);
		hwt__mintrack_add(&tb, b[i]);
	}
	o.word_ticks = tw.min;
	o.byte_ticks = tb.min;
	hwt__misaligned_classify(&o, &v);
	*x100 = v.ratio_x100;
	return v.speed;
}

TEST(classify_synthetic_sample_streams)
{
	uint64_t w[] = { 190, 5000, 150, 142, 160, 9000, 143, 142 };
	uint64_t b[] = { 1200, 980, 20000, 975, 990, 976, 1100, 975 };
	uint64_t ws[] = { 900, 880, 50000, 870, 875 };
	uint64_t bs[] = { 700, 690, 695, 40000, 689 };
	int set[2];
	unsigned x;

	set[0] = verdict_of_stream(w, b, 8, &x);
	ASSERT_EQ(set[0], HWT_MISALIGNED_FAST);
	ASSERT_EQ(x, 686);
	set[1] = verdict_of_stream(ws, bs, 5, &x);
	ASSERT_EQ(set[1], HWT_MISALIGNED_SLOW);
	ASSERT_EQ(x, 79);
	/* a heterogeneous pair of CPUs: the set is UNKNOWN, each keeps its own */
	ASSERT_EQ(summary_of(set, 2), HWT_MISALIGNED_UNKNOWN);
}

TEST(stats_min_tracker)
{
	struct hwt__mintrack t;

	hwt__mintrack_init(&t);
	ASSERT_TRUE(hwt__mintrack_add(&t, 1000)); /* the first sample always counts */
	ASSERT_EQ(t.min, 1000);
	ASSERT_FALSE(hwt__mintrack_add(&t, 1200));
	ASSERT_EQ(t.since, 1);
	/* 1% better: the minimum moves, but that is noise, not progress */
	ASSERT_FALSE(hwt__mintrack_add(&t, 990));
	ASSERT_EQ(t.min, 990);
	ASSERT_EQ(t.since, 2);
	ASSERT_TRUE(hwt__mintrack_add(&t, 900));
	ASSERT_EQ(t.min, 900);
	ASSERT_EQ(t.since, 0);
	ASSERT_EQ(t.n, 4);
}

TEST(stats_stability_needs_both_loops)
{
	struct hwt__mintrack a, b;
	unsigned i;

	hwt__mintrack_init(&a);
	hwt__mintrack_init(&b);
	for (i = 0; i < HWT__STABLE_RUN; i++) {
		hwt__mintrack_add(&a, 100);
		hwt__mintrack_add(&b, 500);
		ASSERT_FALSE(hwt__mintrack_stable(&a, &b));
	}
	hwt__mintrack_add(&a, 100);
	hwt__mintrack_add(&b, 500);
	ASSERT_TRUE(hwt__mintrack_stable(&a, &b)); /* 24 samples since the first */
	hwt__mintrack_add(&b, 400);                 /* bytes improve: not stable again */
	ASSERT_FALSE(hwt__mintrack_stable(&a, &b));
	/* too few samples is never stable */
	hwt__mintrack_init(&a);
	a.n = HWT__STABLE_MIN_SAMPLES - 1;
	a.since = 1000;
	ASSERT_FALSE(hwt__mintrack_stable(&a, &a));
}

TEST(stats_median)
{
	uint32_t odd[] = { 9, 1, 5, 7, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 42 };

	ASSERT_EQ(hwt__median_u32(odd, 5), 5);
	ASSERT_EQ(hwt__median_u32(even, 4), 2); /* lower middle */
	ASSERT_EQ(hwt__median_u32(one, 1), 42);
	ASSERT_EQ(hwt__median_u32(NULL, 0), 0);
}

TEST(override_words_are_the_kernels)
{
	ASSERT_EQ(hwt_misaligned_parse_speed("slow"), HWT_MISALIGNED_SLOW);
	ASSERT_EQ(hwt_misaligned_parse_speed("fast"), HWT_MISALIGNED_FAST);
	ASSERT_EQ(hwt_misaligned_parse_speed("unsupported"), HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(hwt_misaligned_parse_speed("emulated"), -EINVAL);
	ASSERT_EQ(hwt_misaligned_parse_speed("unknown"), -EINVAL);
	ASSERT_EQ(hwt_misaligned_parse_speed("FAST"), -EINVAL);
	ASSERT_EQ(hwt_misaligned_parse_speed("fast "), -EINVAL);
	ASSERT_EQ(hwt_misaligned_parse_speed("3"), -EINVAL);
	ASSERT_EQ(hwt_misaligned_parse_speed(""), -EINVAL);
	ASSERT_EQ(hwt_misaligned_parse_speed(NULL), -EINVAL);
}

TEST(override_from_environment)
{
	const char *bad = NULL;

	unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	ASSERT_EQ(hwt_misaligned_env_override(&bad), 0);
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "", 1);
	/* empty = invalid, as HWTUNE_DISABLE_MSIPOLLING= */
	ASSERT_EQ(hwt_misaligned_env_override(&bad), -EINVAL);
	ASSERT_STR_EQ(bad, "");
	bad = NULL;
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "unsupported", 1);
	ASSERT_EQ(hwt_misaligned_env_override(&bad), HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_TRUE(bad == NULL);
	setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", "speedy", 1);
	ASSERT_EQ(hwt_misaligned_env_override(&bad), -EINVAL);
	ASSERT_STR_EQ(bad, "speedy");
	ASSERT_EQ(hwt_misaligned_env_override(NULL), -EINVAL);
}

TEST(hwprobe_only_on_riscv)
{
	int r = hwt__hwprobe_scalar(0);

	TLOG("%s: riscv_hwprobe(cpu 0) = %d", HWT_ARCH_NAME, r);
	if (strcmp(HWT_ARCH_NAME, "riscv64") != 0)
		ASSERT_EQ(r, -ENOSYS); /* 258 is mkdirat on x86_64: never issued */
	else
		ASSERT_TRUE(r == -ENOSYS || (r >= 0 && r <= 4));
	ASSERT_TRUE(hwt__hwprobe_scalar(-1) < 0);
}

/* --- cache ---------------------------------------------------------------- */

static char *tmpdir(void)
{
	static char d[64];

	snprintf(d, sizeof(d), "/tmp/hwt-cache-test.XXXXXX");
	ASSERT_TRUE(mkdtemp(d) != NULL);
	return d;
}

static const struct hwt__cache_key key1 = { "boot-1", "6.1.0-test", "00112233aabbccdd", "0.1.0" };

/* Known vector results, as a measured entry has them (the cache keeps an
 * entry only if its vector results are known too). */
static const struct hwt_misaligned_vector vec_fast = { .speed = HWT_MISALIGNED_FAST };
static const struct hwt_misaligned_vector vec_none = { .speed = HWT_MISALIGNED_UNSUPPORTED,
						       .notes = HWT_MISALIGNED_NOTE_NO_UNIT };

/* The vector and split fields every hand-written format-3 line ends with
 * (vector, avx2, avx512, split), and a format-2 line's (no avx512). */
#define VTAIL " 3 1125 104 1170 0 4 0 0 0 512 4 0 0 0 512 197 193 197 4393 73 144 64 4096"
#define VTAIL2 " 3 1125 104 1170 0 4 0 0 0 512 197 193 197 4393 73 144 64 4096"

static void sample_entries(struct hwt_misaligned_cpu *e)
{
	memset(e, 0, 3 * sizeof(*e));
	e[0] = (struct hwt_misaligned_cpu){ .cpu = 0, .speed = HWT_MISALIGNED_FAST, .ratio_x100 = 686,
					    .word_ns = 142, .byte_ns = 975, .word_median_ns = 150,
					    .byte_median_ns = 990, .samples = 77, .reps = 4 };
	e[0].vector = (struct hwt_misaligned_vector){ .speed = HWT_MISALIGNED_FAST,
						      .ratio_x100 = 1125, .word_ns = 104,
						      .byte_ns = 1170, .samples = 26 };
	e[0].avx2 = vec_none;
	e[0].avx512 = (struct hwt_misaligned_vector){ .speed = HWT_MISALIGNED_SLOW,
						      .ratio_x100 = 95, .word_ns = 1231,
						      .byte_ns = 1170, .samples = 26 };
	e[0].split = (struct hwt_misaligned_split){ 197, 193, 197, 4393, 73, 144, 64, 4096 };
	e[1] = (struct hwt_misaligned_cpu){ .cpu = 5, .speed = HWT_MISALIGNED_UNKNOWN };
	e[1].vector = e[1].avx2 = e[1].avx512 = vec_fast;
	e[2] = (struct hwt_misaligned_cpu){ .cpu = 7, .speed = HWT_MISALIGNED_UNSUPPORTED };
	e[2].vector = vec_none;
	e[2].avx2 = e[2].avx512 = vec_none;
}

static void path_in(char *buf, size_t len, const char *dir)
{
	ASSERT_OK(hwt__cache_path(dir, buf, len));
}

/* Remove the cache file and its directory (a passing test leaves nothing). */
static void cleanup(const char *path)
{
	char dir[512];
	char *slash;

	unlink(path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(dir);
	}
}

TEST(cache_round_trip)
{
	struct hwt_misaligned_cpu e[3], *got = NULL;
	char path[512];
	unsigned n = 0;
	struct stat st;

	path_in(path, sizeof(path), tmpdir());
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -ENOENT);
	sample_entries(e);
	ASSERT_OK(hwt__cache_store(path, &key1, e, 3));
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_OK(hwt__cache_load(path, &key1, &got, &n));
	ASSERT_EQ(n, 2); /* UNKNOWN is not cached: it deserves another try */
	ASSERT_EQ(got[0].cpu, 0);
	ASSERT_EQ(got[0].speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(got[0].ratio_x100, 686);
	ASSERT_EQ(got[0].word_ns, 142);
	ASSERT_EQ(got[0].byte_ns, 975);
	ASSERT_EQ(got[0].word_median_ns, 150);
	ASSERT_EQ(got[0].byte_median_ns, 990);
	ASSERT_EQ(got[0].samples, 77);
	ASSERT_EQ(got[0].reps, 4);
	ASSERT_EQ(got[0].source, HWT_MISALIGNED_FROM_CACHE);
	/* the vector and split results come back too (format 2) */
	ASSERT_EQ(got[0].vector.speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(got[0].vector.ratio_x100, 1125);
	ASSERT_EQ(got[0].vector.word_ns, 104);
	ASSERT_EQ(got[0].vector.byte_ns, 1170);
	ASSERT_EQ(got[0].avx2.speed, HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(got[0].avx2.notes, HWT_MISALIGNED_NOTE_NO_UNIT);
	ASSERT_TRUE(got[0].avx2.unit == NULL);
	ASSERT_EQ(got[0].avx512.speed, HWT_MISALIGNED_SLOW);
	ASSERT_EQ(got[0].avx512.ratio_x100, 95);
	ASSERT_EQ(got[0].avx512.word_ns, 1231);
	ASSERT_EQ(got[0].avx512.byte_ns, 1170);
	ASSERT_EQ(got[0].avx512.samples, 0); /* not stored */
	ASSERT_EQ(got[0].vector_source, HWT_MISALIGNED_FROM_CACHE);
	ASSERT_EQ(got[0].split.line_load, 197);
	ASSERT_EQ(got[0].split.line_store, 193);
	ASSERT_EQ(got[0].split.page_load, 197);
	ASSERT_EQ(got[0].split.page_store, 4393);
	ASSERT_EQ(got[0].split.aligned_load_ps, 73);
	ASSERT_EQ(got[0].split.aligned_store_ps, 144);
	ASSERT_EQ(got[0].split.line_bytes, 64);
	ASSERT_EQ(got[0].split.page_bytes, 4096);
	ASSERT_EQ(got[1].cpu, 7);
	ASSERT_EQ(got[1].speed, HWT_MISALIGNED_UNSUPPORTED);
	free(got);
	/* an entry whose vector result is UNKNOWN is not kept either */
	e[0].vector.speed = HWT_MISALIGNED_UNKNOWN;
	ASSERT_OK(hwt__cache_store(path, &key1, e, 3));
	ASSERT_OK(hwt__cache_load(path, &key1, &got, &n));
	ASSERT_EQ(n, 1);
	ASSERT_EQ(got[0].cpu, 7);
	free(got);
	/* ... unless no vector loop exists in the build: it never will be known */
	e[0].vector.notes = HWT_MISALIGNED_NOTE_NO_LOOP;
	ASSERT_OK(hwt__cache_store(path, &key1, e, 3));
	ASSERT_OK(hwt__cache_load(path, &key1, &got, &n));
	ASSERT_EQ(n, 2);
	ASSERT_EQ(got[0].vector.speed, HWT_MISALIGNED_UNKNOWN);
	free(got);
	sample_entries(e);
	/* a rewrite leaves nothing behind but the file itself (no temp files) */
	ASSERT_OK(hwt__cache_store(path, &key1, e, 1));
	ASSERT_OK(hwt__cache_load(path, &key1, &got, &n));
	ASSERT_EQ(n, 1);
	free(got);
	{
		char dir[512];
		struct dirent *de;
		unsigned entries = 0;
		DIR *dp;

		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		ASSERT_TRUE((dp = opendir(dir)) != NULL);
		while ((de = readdir(dp)))
			entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
		closedir(dp);
		ASSERT_EQ(entries, 1);
	}
	cleanup(path);
}

TEST(cache_foreign_key_is_stale)
{
	struct hwt_misaligned_cpu e[3], *got = NULL;
	struct hwt__cache_key k = key1;
	char path[512];
	unsigned n = 0;

	path_in(path, sizeof(path), tmpdir());
	sample_entries(e);
	ASSERT_OK(hwt__cache_store(path, &key1, e, 3));
	snprintf(k.boot_id, sizeof(k.boot_id), "boot-2");
	ASSERT_EQ(hwt__cache_load(path, &k, &got, &n), -ESTALE);
	ASSERT_TRUE(got == NULL);
	k = key1;
	snprintf(k.kernel, sizeof(k.kernel), "6.2.0");
	ASSERT_EQ(hwt__cache_load(path, &k, &got, &n), -ESTALE);
	k = key1;
	snprintf(k.model, sizeof(k.model), "ffff");
	ASSERT_EQ(hwt__cache_load(path, &k, &got, &n), -ESTALE);
	k = key1;
	snprintf(k.version, sizeof(k.version), "0.1.1");
	ASSERT_EQ(hwt__cache_load(path, &k, &got, &n), -ESTALE);
	/* a prefix of the stored boot id is not the boot id */
	k = key1;
	snprintf(k.boot_id, sizeof(k.boot_id), "boot-");
	ASSERT_EQ(hwt__cache_load(path, &k, &got, &n), -ESTALE);
	cleanup(path);
}

static void rewrite(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, text, len), (long long)len);
	close(fd);
}

static size_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ASSERT_TRUE(fd >= 0);
	n = read(fd, buf, len - 1);
	close(fd);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	return (size_t)n;
}

TEST(cache_corrupt_files_are_rejected)
{
	struct hwt_misaligned_cpu e[3], *got = NULL;
	char path[512], good[4096], bad[4096];
	unsigned n = 0;
	size_t len;
	char *p;

	path_in(path, sizeof(path), tmpdir());
	sample_entries(e);
	ASSERT_OK(hwt__cache_store(path, &key1, e, 3));
	len = slurp(path, good, sizeof(good));

	/* one changed digit in an entry */
	memcpy(bad, good, len + 1);
	p = strstr(bad, "cpu 0 3 686");
	ASSERT_TRUE(p != NULL);
	p[6] = '2';
	rewrite(path, bad, len);
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	/* truncated (a torn write) */
	rewrite(path, good, len / 2);
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	/* without the trailer's newline */
	rewrite(path, good, len - 1);
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	/* junk appended after a valid file */
	memcpy(bad, good, len);
	memcpy(bad + len, "cpu 9 3 1 1 1 1 1 1 1\n", 22);
	rewrite(path, bad, len + 22);
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	/* an embedded NUL */
	memcpy(bad, good, len + 1);
	bad[10] = '\0';
	rewrite(path, bad, len);
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	/* intact trailer, but the same CPU twice */
	e[2].cpu = e[0].cpu;
	ASSERT_OK(hwt__cache_store(path, &key1, e, 3));
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	/* empty, and a directory in its place */
	rewrite(path, "", 0);
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EBADMSG);
	unlink(path);
	/* errors of the file itself are reported as themselves, not "corrupt" */
	ASSERT_OK(mkdir(path, 0700));
	ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -EISDIR);
	rmdir(path);
	{
		char target[600];

		snprintf(target, sizeof(target), "%s.target", path);
		rewrite(target, good, len);
		ASSERT_OK(symlink(target, path));
		ASSERT_EQ(hwt__cache_load(path, &key1, &got, &n), -ELOOP); /* never followed */
		unlink(path);
		unlink(target);
	}
	/* and the original is still good */
	rewrite(path, good, len);
	ASSERT_OK(hwt__cache_load(path, &key1, &got, &n));
	ASSERT_EQ(n, 2);
	free(got);
	cleanup(path);
}

/* Found by tests/fuzz/cache_file: the reader's overflow guard was one digit
 * short, so a file the writer wrote with a nanosecond field from
 * 18446744073709551610 up to UINT64_MAX was rejected as corrupt (and the
 * probe re-measured and rewrote it on every run). */
TEST(cache_reads_back_uint64_max_fields)
{
	struct hwt_misaligned_cpu e[2], *got = NULL;
	char path[512];
	unsigned n = 0;

	memset(e, 0, sizeof(e));
	e[0] = (struct hwt_misaligned_cpu){ .cpu = 3, .speed = HWT_MISALIGNED_SLOW,
					    .ratio_x100 = UINT32_MAX, .word_ns = UINT64_MAX,
					    .byte_ns = UINT64_MAX - 5, .word_median_ns = UINT64_MAX - 9,
					    .byte_median_ns = UINT64_MAX / 10 * 10, .samples = UINT32_MAX,
					    .reps = UINT32_MAX };
	e[1] = (struct hwt_misaligned_cpu){ .cpu = HWT_CPU_ID_MAX, .speed = HWT_MISALIGNED_FAST,
					    .word_ns = 1, .byte_ns = 2 };
	e[0].vector = e[1].vector = vec_fast;
	e[0].avx2 = e[1].avx2 = e[0].avx512 = e[1].avx512 = vec_none;
	e[0].vector.word_ns = UINT64_MAX;
	e[0].split.aligned_store_ps = UINT64_MAX;
	path_in(path, sizeof(path), tmpdir());
	ASSERT_OK(hwt__cache_store(path, &key1, e, 2));
	ASSERT_OK(hwt__cache_load(path, &key1, &got, &n));
	ASSERT_EQ(n, 2);
	ASSERT_EQ_U64(got[0].word_ns, UINT64_MAX);
	ASSERT_EQ_U64(got[0].byte_ns, UINT64_MAX - 5);
	ASSERT_EQ_U64(got[0].word_median_ns, UINT64_MAX - 9);
	ASSERT_EQ_U64(got[0].byte_median_ns, UINT64_MAX / 10 * 10);
	ASSERT_EQ_U64(got[0].ratio_x100, UINT32_MAX);
	ASSERT_EQ_U64(got[0].samples, UINT32_MAX);
	ASSERT_EQ_U64(got[0].vector.word_ns, UINT64_MAX);
	ASSERT_EQ_U64(got[0].split.aligned_store_ps, UINT64_MAX);
	ASSERT_EQ(got[1].cpu, HWT_CPU_ID_MAX);
	free(got);
	cleanup(path);
}

/* The same boundary from the other side: 2^64 and more do not fit and are
 * refused, with a trailer that is otherwise right. */
TEST(cache_rejects_fields_past_uint64_max)
{
	static const char *const bad[] = { "18446744073709551616", "18446744073709551619",
					   "18446744073709551620", "99999999999999999999",
					   "184467440737095516150" };
	struct hwt_misaligned_cpu *got = NULL;
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		uint64_t h = 0xcbf29ce484222325ull;
		int len = snprintf(text, sizeof(text),
				   "hwtune-misaligned-cache 3\nboot_id %s\nkernel %s\nmodel %s\n"
				   "version %s\ncpu 0 3 100 %s 2 3 4 5 6" VTAIL "\n",
				   key1.boot_id, key1.kernel, key1.model, key1.version, bad[i]);

		for (int k = 0; k < len; k++)
			h = (h ^ (unsigned char)text[k]) * 0x100000001b3ull;
		len += snprintf(text + len, sizeof(text) - (size_t)len, "end 1 %016llx\n",
				(unsigned long long)h);
		ASSERT_EQ(hwt__cache_parse(text, (size_t)len, &key1, &got, &n), -EBADMSG);
		ASSERT_TRUE(got == NULL);
		ASSERT_EQ(n, 0);
		/* and the same file with a value that fits is read */
		memcpy(strstr(text, bad[i]), "18446744073709551615", 20);
		if (strlen(bad[i]) == 20) {
			h = 0xcbf29ce484222325ull;
			len = (int)(strstr(text, "end ") - text);
			for (int k = 0; k < len; k++)
				h = (h ^ (unsigned char)text[k]) * 0x100000001b3ull;
			len += snprintf(text + len, sizeof(text) - (size_t)len, "end 1 %016llx\n",
					(unsigned long long)h);
			ASSERT_OK(hwt__cache_parse(text, (size_t)len, &key1, &got, &n));
			ASSERT_EQ(n, 1);
			ASSERT_EQ_U64(got[0].word_ns, UINT64_MAX);
			free(got);
			got = NULL;
		}
	}
}

/* Found by tests/fuzz/cache_file: "cpu 0 3 075 ..." with a right trailer was
 * accepted as ratio 75, although the writer writes "75": an accepted file
 * must be exactly the bytes the writer writes for its entries, so a number
 * with a leading zero (in an entry or in the trailer's count) is refused. */
TEST(cache_accepts_only_what_the_writer_writes)
{
	static const char *const lines[] = {
		"cpu 0 3 075 142 975 150 990 77 4" VTAIL "\n",
		"cpu 00 3 75 142 975 150 990 77 4" VTAIL "\n",
		"cpu 0 03 75 142 975 150 990 77 4" VTAIL "\n",
		"cpu 0 3 75 142 975 150 990 77 04" VTAIL "\n",
		"cpu 0 3 75 0142 975 150 990 77 4" VTAIL "\n",
		"cpu 0 3 75 142 975 150 990 77 4" VTAIL " 7\n",       /* a field too many */
		"cpu 0 3 75 142 975 150 990 77 4 3 1 1 1 0\n",     /* format 1's length + a vector */
		"cpu 0 3 75 142 975 150 990 77 4 1 1 1 1 0 4 0 0 0 512 4 0 0 0 512 1 1 1 1 1 1 64 4096\n",
		/* ^ a vector EMULATED: not a vector value */
		"cpu 0 3 75 142 975 150 990 77 4 0 1 1 1 0 4 0 0 0 512 4 0 0 0 512 1 1 1 1 1 1 64 4096\n",
		/* ^ a vector UNKNOWN without NO_LOOP: never written */
		"cpu 0 3 75 142 975 150 990 77 4 3 1 1 1 0 4 0 0 0 512 1 1 1 1 0 1 1 1 1 1 1 64 4096\n",
		/* ^ avx512 EMULATED */
		"cpu 0 3 75 142 975 150 990 77 4 3 1 1 1 0 4 0 0 0 512 0 1 1 1 0 1 1 1 1 1 1 64 4096\n",
		/* ^ avx512 UNKNOWN without NO_LOOP */
	};
	struct hwt_misaligned_cpu *got = NULL;
	unsigned n = 0;

	for (size_t i = 0; i <= sizeof(lines) / sizeof(lines[0]); i++) {
		char text[1024];
		uint64_t h = 0xcbf29ce484222325ull;
		/* the last case: a good line, and a count of "01" */
		bool last = i == sizeof(lines) / sizeof(lines[0]);
		int len = snprintf(text, sizeof(text),
				   "hwtune-misaligned-cache 3\nboot_id %s\nkernel %s\nmodel %s\n"
				   "version %s\n%s",
				   key1.boot_id, key1.kernel, key1.model, key1.version,
				   last ? "cpu 0 3 75 142 975 150 990 77 4" VTAIL "\n" : lines[i]);

		for (int k = 0; k < len; k++)
			h = (h ^ (unsigned char)text[k]) * 0x100000001b3ull;
		len += snprintf(text + len, sizeof(text) - (size_t)len, "end %s %016llx\n",
				last ? "01" : "1", (unsigned long long)h);
		if (hwt__cache_parse(text, (size_t)len, &key1, &got, &n) != -EBADMSG)
			TLOG("case %zu accepted", i);
		ASSERT_EQ(hwt__cache_parse(text, (size_t)len, &key1, &got, &n), -EBADMSG);
	}
}

/* A file of the writer (the entries of one written by hwt__cache_format at
 * c2e5ae6, before the cpu line became a table, with the avx512 fields of
 * format 3 added): read field for field, and written again byte for byte. */
static const char old_file[] =
	"hwtune-misaligned-cache 3\n"
	"boot_id boot-1\n"
	"kernel 6.1.0-test\n"
	"model 0123456789abcdef\n"
	"version 0.1.0\n"
	"cpu 3 3 619 456 2826 470 2900 25 2 3 1096 233 2559 4 4 0 0 0 512 3 2000 120 2559 0 "
	"132 338 132 4267 1234 5678 64 4096\n"
	"cpu 4095 2 95 18446744073709551615 18446744073709551614 1 0 4294967295 1 0 0 0 0 256 0 0 0 0 "
	"258 4 0 0 0 512 4294967295 0 1 2 0 18446744073709551615 4294967295 0\n"
	"end 2 50e25e0e4d4fc9d0\n";

TEST(cache_reads_and_rewrites_a_file_of_the_old_writer)
{
	struct hwt__cache_key k = { "boot-1", "6.1.0-test", "0123456789abcdef", "0.1.0" };
	struct hwt_misaligned_cpu *e;
	const struct hwt_misaligned_cpu *a, *b;
	unsigned n;
	size_t len;
	char *text;

	ASSERT_OK(hwt__cache_parse(old_file, strlen(old_file), &k, &e, &n));
	ASSERT_EQ(n, 2);
	a = &e[0], b = &e[1];
	ASSERT_EQ(a->cpu, 3);
	ASSERT_EQ(a->speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(a->ratio_x100, 619);
	ASSERT_EQ_U64(a->word_ns, 456);
	ASSERT_EQ_U64(a->byte_ns, 2826);
	ASSERT_EQ_U64(a->word_median_ns, 470);
	ASSERT_EQ_U64(a->byte_median_ns, 2900);
	ASSERT_EQ(a->samples, 25);
	ASSERT_EQ(a->reps, 2);
	ASSERT_EQ(a->vector.speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(a->vector.ratio_x100, 1096);
	ASSERT_EQ_U64(a->vector.word_ns, 233);
	ASSERT_EQ_U64(a->vector.byte_ns, 2559);
	ASSERT_EQ(a->vector.notes, HWT_MISALIGNED_NOTE_MARGINAL);
	ASSERT_EQ(a->avx2.speed, HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(a->avx2.notes, HWT_MISALIGNED_NOTE_NO_UNIT);
	ASSERT_TRUE(a->avx2.unit == NULL);
	ASSERT_EQ(a->avx512.speed, HWT_MISALIGNED_FAST);
	ASSERT_EQ(a->avx512.ratio_x100, 2000);
	ASSERT_EQ_U64(a->avx512.word_ns, 120);
	ASSERT_EQ_U64(a->avx512.byte_ns, 2559);
	ASSERT_EQ(a->avx512.notes, 0);
	ASSERT_EQ(a->avx512.hwprobe, -ENOSYS);
	ASSERT_EQ(a->split.line_load, 132);
	ASSERT_EQ(a->split.line_store, 338);
	ASSERT_EQ(a->split.page_load, 132);
	ASSERT_EQ(a->split.page_store, 4267);
	ASSERT_EQ_U64(a->split.aligned_load_ps, 1234);
	ASSERT_EQ_U64(a->split.aligned_store_ps, 5678);
	ASSERT_EQ(a->split.line_bytes, 64);
	ASSERT_EQ(a->split.page_bytes, 4096);
	ASSERT_EQ(a->source, HWT_MISALIGNED_FROM_CACHE);
	ASSERT_EQ(a->vector_source, HWT_MISALIGNED_FROM_CACHE);
	ASSERT_EQ(a->align_faults, -1);
	ASSERT_EQ(a->hwprobe, -ENOSYS);
	ASSERT_EQ(b->cpu, 4095);
	ASSERT_EQ(b->speed, HWT_MISALIGNED_SLOW);
	ASSERT_EQ_U64(b->word_ns, UINT64_MAX);
	ASSERT_EQ_U64(b->byte_ns, UINT64_MAX - 1);
	ASSERT_EQ(b->samples, UINT32_MAX);
	ASSERT_EQ(b->vector.speed, HWT_MISALIGNED_UNKNOWN);
	ASSERT_EQ(b->vector.notes, HWT_MISALIGNED_NOTE_NO_LOOP);
	ASSERT_EQ(b->avx2.notes, HWT_MISALIGNED_NOTE_NO_LOOP | HWT_MISALIGNED_NOTE_COARSE);
	ASSERT_EQ(b->avx512.speed, HWT_MISALIGNED_UNSUPPORTED);
	ASSERT_EQ(b->avx512.notes, HWT_MISALIGNED_NOTE_NO_UNIT);
	ASSERT_TRUE(b->avx512.unit == NULL);
	ASSERT_EQ(b->split.line_load, UINT32_MAX);
	ASSERT_EQ(b->split.page_load, 1);
	ASSERT_EQ(b->split.page_store, 2);
	ASSERT_EQ_U64(b->split.aligned_store_ps, UINT64_MAX);
	ASSERT_EQ(b->split.line_bytes, UINT32_MAX);
	ASSERT_EQ(b->split.page_bytes, 0);
	ASSERT_OK(hwt__cache_format(&k, e, n, &text, &len));
	ASSERT_EQ(len, strlen(old_file));
	ASSERT_STR_EQ(text, old_file);
	free(text);
	free(e);
}

/* Format 2 added the vector and split fields, format 3 the avx512 ones: a
 * file of format 1 or 2 (whose lines were right then, trailer included) is
 * refused as corrupt, not misread, and later measured again and replaced
 * (tests/unit/misaligned_probe.c, cache_of_format_2_is_measured_again). */
/* A file of key1 with the given first line's format number, one cpu line
 * ending in tail, and a right trailer; its length. */
static size_t hand_file(char *text, size_t size, int format, const char *tail)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int len = snprintf(text, size,
			   "hwtune-misaligned-cache %d\nboot_id %s\nkernel %s\nmodel %s\n"
			   "version %s\ncpu 0 3 75 142 975 150 990 77 4%s\n",
			   format, key1.boot_id, key1.kernel, key1.model, key1.version, tail);

	for (int k = 0; k < len; k++)
		h = (h ^ (unsigned char)text[k]) * 0x100000001b3ull;
	len += snprintf(text + len, size - (size_t)len, "end 1 %016llx\n", (unsigned long long)h);
	return (size_t)len;
}

TEST(cache_formats_1_and_2_are_refused)
{
	static const char *const tail[] = { "", VTAIL2, VTAIL };
	struct hwt_misaligned_cpu *got = NULL;
	unsigned n = 0;
	char text[1024];
	size_t len;

	for (int v = 1; v <= 3; v++) {
		len = hand_file(text, sizeof(text), v, tail[v - 1]);
		if (v < 3) {
			ASSERT_EQ(hwt__cache_parse(text, len, &key1, &got, &n), -EBADMSG);
			ASSERT_TRUE(got == NULL);
			/* nor read as the current format under its first line */
			len = hand_file(text, sizeof(text), 3, tail[v - 1]);
			ASSERT_EQ(hwt__cache_parse(text, len, &key1, &got, &n), -EBADMSG);
			ASSERT_TRUE(got == NULL);
		} else {
			ASSERT_OK(hwt__cache_parse(text, len, &key1, &got, &n));
			ASSERT_EQ(n, 1);
			ASSERT_EQ(got[0].vector.speed, HWT_MISALIGNED_FAST);
			ASSERT_EQ(got[0].avx512.speed, HWT_MISALIGNED_UNSUPPORTED);
			ASSERT_EQ(got[0].avx512.notes, HWT_MISALIGNED_NOTE_NO_UNIT);
			ASSERT_EQ(got[0].split.page_store, 4393);
			free(got);
		}
	}
}

/* hwtune's cache folder a symlink ($XDG_CACHE_HOME/hwtune -> /): refused
 * like a symlinked file, never written through, and the report says why. */
TEST_TIMEOUT(cache_folder_that_is_a_symlink_is_refused, 30)
{
	struct hwt_misaligned_opts o = { .budget_us = 300 };
	struct hwt_misaligned_report r;
	struct hwt__cache_key key;
	struct hwt_misaligned_cpu e = { .cpu = 0 }, *got;
	char path[600], link[100], target_file[200], given[120], d[64], target[64];
	unsigned n;

	snprintf(d, sizeof(d), "%s", tmpdir());
	snprintf(target, sizeof(target), "%s", tmpdir()); /* tmpdir's buffer is reused */
	snprintf(link, sizeof(link), "%s/hwtune", d);
	ASSERT_EQ(symlink(target, link), 0);
	setenv("XDG_CACHE_HOME", d, 1);
	ASSERT_EQ(hwt__cache_path(NULL, path, sizeof(path)), -ELOOP);
	/* the given folder too, trailing slash or not */
	ASSERT_EQ(hwt__cache_path(link, path, sizeof(path)), -ELOOP);
	snprintf(given, sizeof(given), "%s/", link);
	ASSERT_EQ(hwt__cache_path(given, path, sizeof(path)), -ELOOP);
	/* the whole chain: cache off, the reason kept, nothing in the target */
	ASSERT_OK(hwt_misaligned_probe(NULL, &o, &r));
	ASSERT_TRUE(r.cache_off);
	ASSERT_EQ(r.cache_status, -ELOOP);
	hwt_misaligned_report_free(&r);
	snprintf(target_file, sizeof(target_file), "%s/misaligned-%s.cache", target, HWT_ARCH_NAME);
	ASSERT_TRUE(access(target_file, F_OK) != 0);
	/* a path through the link: neither written nor read */
	ASSERT_OK(hwt__cache_key_current(&key));
	e.speed = HWT_MISALIGNED_FAST;
	e.vector.speed = HWT_MISALIGNED_FAST;
	e.avx2.speed = HWT_MISALIGNED_FAST;
	snprintf(path, sizeof(path), "%s/misaligned-%s.cache", link, HWT_ARCH_NAME);
	ASSERT_EQ(hwt__cache_store(path, &key, &e, 1), -ELOOP);
	ASSERT_TRUE(access(target_file, F_OK) != 0);
	ASSERT_OK(hwt__cache_store(target_file, &key, &e, 1));
	ASSERT_EQ(hwt__cache_load(path, &key, &got, &n), -ELOOP);
	ASSERT_OK(hwt__cache_load(target_file, &key, &got, &n));
	free(got);
	unsetenv("XDG_CACHE_HOME");
	unlink(target_file);
	unlink(link);
	rmdir(d);
	rmdir(target);
}

TEST(cache_location_follows_xdg)
{
	char path[512], want[512], *d = tmpdir();

	setenv("XDG_CACHE_HOME", d, 1);
	ASSERT_OK(hwt__cache_path(NULL, path, sizeof(path)));
	snprintf(want, sizeof(want), "%s/hwtune/misaligned-%s.cache", d, HWT_ARCH_NAME);
	ASSERT_STR_EQ(path, want);
	/* a relative XDG_CACHE_HOME is invalid: fall back to ~/.cache */
	setenv("XDG_CACHE_HOME", "relative/dir", 1);
	setenv("HOME", d, 1);
	ASSERT_OK(hwt__cache_path(NULL, path, sizeof(path)));
	snprintf(want, sizeof(want), "%s/.cache/hwtune/misaligned-%s.cache", d, HWT_ARCH_NAME);
	ASSERT_STR_EQ(path, want);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	ASSERT_EQ(hwt__cache_path(NULL, path, sizeof(path)), -ENOENT);
	/* a missing HOME is never created (nor its parents): the cache is off */
	snprintf(want, sizeof(want), "%s/nohome/deeper", d);
	setenv("HOME", want, 1);
	ASSERT_EQ(hwt__cache_path(NULL, path, sizeof(path)), -ENOENT);
	snprintf(want, sizeof(want), "%s/nohome", d);
	ASSERT_TRUE(access(want, F_OK) != 0);
	/* nor a missing XDG_CACHE_HOME: only its hwtune folder is ours */
	unsetenv("HOME");
	setenv("XDG_CACHE_HOME", want, 1);
	ASSERT_EQ(hwt__cache_path(NULL, path, sizeof(path)), -ENOENT);
	ASSERT_TRUE(access(want, F_OK) != 0);
	/* a file where the folder should be: the error as itself */
	setenv("XDG_CACHE_HOME", d, 1);
	snprintf(want, sizeof(want), "%s/hwtune", d);
	rmdir(want);
	{
		FILE *f = fopen(want, "w");

		ASSERT_TRUE(f != NULL);
		fclose(f);
	}
	ASSERT_EQ(hwt__cache_path(NULL, path, sizeof(path)), -ENOTDIR);
	unlink(want);
	unsetenv("XDG_CACHE_HOME");
	snprintf(path, sizeof(path), "%s/hwtune", d);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/.cache/hwtune", d);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/.cache", d);
	rmdir(path);
	rmdir(d);
}

TEST(cache_key_of_this_machine)
{
	struct hwt__cache_key a, b;
	int r = hwt__cache_key_current(&a);

	if (r == -ENOENT)
		SKIP("no /proc/sys/kernel/random/boot_id");
	ASSERT_OK(r);
	ASSERT_OK(hwt__cache_key_current(&b));
	ASSERT_TRUE(a.boot_id[0] && a.kernel[0] && a.model[0]);
	ASSERT_STR_EQ(a.version, hwt_version());
	ASSERT_TRUE(!memcmp(&a, &b, sizeof(a))); /* stable within a boot */
	for (const char *p = a.kernel; *p; p++)
		ASSERT_TRUE(*p != ' ' && *p != '\n');
	TLOG("boot %s kernel %s model %s", a.boot_id, a.kernel, a.model);
}
