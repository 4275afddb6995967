/* SPDX-License-Identifier: MIT */
/* Verdicts, names, overrides and the kernel's own verdict (riscv_hwprobe): no I/O except
 * getenv and that system call. */
#include "misaligned/misaligned.h"

#include "arch/hwprobe.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const speed_names[] = {
	[HWT_MISALIGNED_UNKNOWN] = "unknown",
	[HWT_MISALIGNED_EMULATED] = "emulated",
	[HWT_MISALIGNED_SLOW] = "slow",
	[HWT_MISALIGNED_FAST] = "fast",
	[HWT_MISALIGNED_UNSUPPORTED] = "unsupported",
};

HWT_API const char *hwt_misaligned_speed_name(enum hwt_misaligned_speed speed)
{
	if ((unsigned)speed > HWT_MISALIGNED_UNSUPPORTED)
		return NULL;
	return speed_names[speed];
}

HWT_API int hwt_misaligned_parse_speed(const char *word)
{
	/* Exactly the kernel's unaligned_scalar_speed= words: unknown and
	 * emulated are observations, not something one can declare. */
	if (!word)
		return -EINVAL;
	for (int s = HWT_MISALIGNED_SLOW; s <= HWT_MISALIGNED_UNSUPPORTED; s++)
		if (!strcmp(word, speed_names[s]))
			return s;
	return -EINVAL;
}

/* A speed variable: 0 unset, the speed, or -EINVAL.  Empty is a bad value,
 * as HWTUNE_DISABLE_MSIPOLLING= is (and as the kernel refuses an empty
 * unaligned_scalar_speed=). */
static int env_speed(const char *name, const char **bad)
{
	const char *v = getenv(name);
	int s;

	if (!v)
		return 0;
	s = hwt_misaligned_parse_speed(v);
	if (s < 0 && bad)
		*bad = v;
	return s;
}

HWT_API int hwt_misaligned_env_override(const char **bad)
{
	return env_speed("HWTUNE_UNALIGNED_SCALAR_SPEED", bad);
}

HWT_API int hwt_misaligned_env_vector_override(const char **bad)
{
	return env_speed("HWTUNE_UNALIGNED_VECTOR_SPEED", bad);
}

HWT_API const struct hwt_misaligned_vector *hwt_misaligned_cpu_unit(const struct hwt_misaligned_cpu *c,
								    unsigned unit)
{
	if (!c)
		return NULL;
	switch (unit) {
	case HWT_MISALIGNED_UNIT_VECTOR: return &c->vector;
	case HWT_MISALIGNED_UNIT_AVX2: return &c->avx2;
	case HWT_MISALIGNED_UNIT_AVX512: return &c->avx512;
	default: return NULL;
	}
}

HWT_API int hwt_misaligned_unit_summary(const struct hwt_misaligned_cpu *cpu, unsigned n,
					unsigned unit)
{
	int first = -1;

	if ((!cpu && n) || unit >= HWT_MISALIGNED_UNITS)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		int s = (int)hwt_misaligned_cpu_unit(&cpu[i], unit)->speed;

		if (cpu[i].status)
			continue;
		if (first < 0)
			first = s;
		else if (s != first)
			return HWT_MISALIGNED_UNKNOWN;
	}
	return first < 0 ? HWT_MISALIGNED_UNKNOWN : first;
}

HWT_API int hwt_misaligned_vector_summary(const struct hwt_misaligned_cpu *cpu, unsigned n,
					  bool wide)
{
	return hwt_misaligned_unit_summary(cpu, n,
					   wide ? HWT_MISALIGNED_UNIT_AVX2 : HWT_MISALIGNED_UNIT_VECTOR);
}

HWT_API int hwt_misaligned_summary(const struct hwt_misaligned_cpu *cpu, unsigned n)
{
	int first = -1;

	if (!cpu && n)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (cpu[i].status)
			continue; /* never probed: not part of the set's answer */
		if (first < 0)
			first = cpu[i].speed;
		else if ((int)cpu[i].speed != first)
			return HWT_MISALIGNED_UNKNOWN;
	}
	return first < 0 ? HWT_MISALIGNED_UNKNOWN : first;
}

void hwt__misaligned_summarize(struct hwt_misaligned_report *r)
{
	r->summary = hwt_misaligned_summary(r->cpu, r->n);
	r->vector_summary = hwt_misaligned_vector_summary(r->cpu, r->n, false);
	r->avx2_summary = hwt_misaligned_vector_summary(r->cpu, r->n, true);
	r->avx512_summary = hwt_misaligned_unit_summary(r->cpu, r->n, HWT_MISALIGNED_UNIT_AVX512);
}

void hwt__misaligned_classify(const struct hwt__probe_obs *obs, struct hwt__verdict *v)
{
	uint64_t r;

	*v = (struct hwt__verdict){ HWT_MISALIGNED_UNKNOWN, 0, 0 };
	/* Not FAST and not counted: emulation by the kernel cannot be ruled
	 * out.  (A FAST CPU needs no count: a trapped access is never faster
	 * than a byte load.) */
	if (obs->align_faults < 0 && !obs->fault_signal &&
	    !hwt__obs_fast(obs))
		v->notes |= HWT_MISALIGNED_NOTE_NO_PERF;
	/* A signal or a kernel trap decides before any timing. */
	if (obs->fault_signal) {
		v->speed = HWT_MISALIGNED_UNSUPPORTED;
		return;
	}
	if (obs->align_faults > 0) {
		v->speed = HWT_MISALIGNED_EMULATED;
		return;
	}
	if (!obs->copy_ok) {
		v->notes |= HWT_MISALIGNED_NOTE_BAD_COPY;
		return;
	}
	/* The kernel's rule: no division by a zero minimum, leave it UNKNOWN. */
	if (!obs->word_ticks || !obs->byte_ticks) {
		v->notes |= HWT_MISALIGNED_NOTE_COARSE;
		return;
	}
	v->speed = obs->word_ticks < obs->byte_ticks ? HWT_MISALIGNED_FAST : HWT_MISALIGNED_SLOW;
	r = obs->byte_ticks > UINT64_MAX / 100 ? obs->byte_ticks / obs->word_ticks * 100
					       : obs->byte_ticks * 100 / obs->word_ticks;
	v->ratio_x100 = r > UINT_MAX ? UINT_MAX : (unsigned)r;
	if (v->ratio_x100 < HWT__FIRMWARE_RATIO_X100)
		v->notes |= HWT_MISALIGNED_NOTE_FIRMWARE;
	if (v->ratio_x100 >= HWT__MARGINAL_LO_X100 && v->ratio_x100 <= HWT__MARGINAL_HI_X100)
		v->notes |= HWT_MISALIGNED_NOTE_MARGINAL;
}

void hwt__vector_classify(const struct hwt__probe_obs *obs, struct hwt__verdict *v)
{
	struct hwt__probe_obs o = *obs;

	o.align_faults = 0;
	hwt__misaligned_classify(&o, v);
	v->notes &= ~(unsigned)(HWT_MISALIGNED_NOTE_FIRMWARE | HWT_MISALIGNED_NOTE_NO_PERF);
}

/* The kernel's own answer, for programs that show it beside the probe's. */
HWT_API int hwt_misaligned_hwprobe(int cpu, int key, uint64_t *value)
{
	if (cpu < -1 || key < 0 || !value)
		return -EINVAL;
	return hwt__hwprobe_key(cpu, key, value);
}
