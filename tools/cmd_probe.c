/* SPDX-License-Identifier: MIT */
/* hwtune probe: misaligned-access speed of each allowed CPU. */
#include "cli.h"
#include "cmd_probe.h"
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hwtune probe [--cpus LIST] [--serial] [--budget-ms N] [--kernel-window]\n"
		"                    [--smt=together|apart] [--no-cache] [--json] [--per-cpu]\n"
		"                    [--format=text|json|prom]\n"
		"                    [--unaligned-scalar-speed=slow|fast|unsupported]\n"
		"\n"
		"Time a copy made of misaligned word accesses against the same copy made byte\n"
		"by byte on each CPU (the Linux RISC-V boot probe: 16 KiB buffer, dst offset 1,\n"
		"src 8 KiB + 2 further, 8064 bytes, minimum time of each loop) and classify it\n"
		"with riscv_hwprobe's values: unknown 0, emulated 1, slow 2 (word copy not\n"
		"faster), fast 3 (word copy faster), unsupported 4 (the access raises a signal).\n"
		"All CPUs are probed at once. The summary is hwprobe's rule: all CPUs equal\n"
		"gives that value, any difference gives unknown.\n"
		"\n"
		"  --cpus LIST       CPUs to probe, kernel list syntax (0-3,8,10-14:2), CPU numbers\n"
		"                    decimal 0..65535; each must be in this process's allowed set\n"
		"                    (default: all of it)\n"
		"  --serial          one CPU after another (the kernel's first version)\n"
		"  --budget-ms N     time budget per CPU in ms, decimal 1..60000 (default 1);\n"
		"                    the probe stops earlier once both minima are stable\n"
		"  --kernel-window   the kernel's fixed windows: 8 ms of word copies, then 8 ms\n"
		"                    of byte copies, one copy per sample, no early stop\n"
		"  --smt=MODE        together (default): SMT siblings are probed at the same\n"
		"                    time; apart: siblings go in separate waves\n"
		"  --no-cache        neither read nor write the result cache\n"
		"  --json            one JSON object on stdout (= --format=json; always one\n"
		"                    entry per CPU)\n"
		"  --per-cpu         one line per CPU (default: one line per group of CPUs\n"
		"                    that agree)\n"
		"  --format=FORMAT   text (default), json or prom (Prometheus text format,\n"
		"                    for node_exporter's textfile collector)\n"
		"  --unaligned-scalar-speed=WORD\n"
		"                    skip probing and report WORD (slow, fast or unsupported)\n"
		"                    for every CPU, like the kernel's unaligned_scalar_speed=\n"
		"  -h, --help        this text\n"
		"\n"
		"Options take --opt=value or --opt value and may be abbreviated while unambiguous;\n"
		"'--' ends the options.  Numbers are decimal (leading zeros too: 010 is ten).\n"
		"\n"
		"Environment:\n"
		"  HWTUNE_UNALIGNED_SCALAR_SPEED=WORD   same as --unaligned-scalar-speed (the flag\n"
		"                    wins; set but empty is an error, as any other bad word)\n"
		"  XDG_CACHE_HOME    the cache lives in $XDG_CACHE_HOME/hwtune/ (else\n"
		"                    ~/.cache/hwtune/), keyed by boot id, kernel release, CPU\n"
		"                    model and library version; CPUs missing from it are probed\n"
		"                    and added. --serial, --budget-ms, --kernel-window and\n"
		"                    --smt=apart always measure (and then update the cache).\n"
		"\n"
		"Exit status: 0 done, 1 the probe failed, 2 bad usage.\n");
}

static void ratio_str(char *buf, size_t len, unsigned x100)
{
	snprintf(buf, len, "%u.%02u", x100 / 100, x100 % 100);
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGBUS: return "SIGBUS";
	case SIGSEGV: return "SIGSEGV";
	case SIGILL: return "SIGILL";
	default: return "signal";
	}
}

static const struct {
	unsigned bit;
	const char *key, *text;
} notes[] = {
	{ HWT_MISALIGNED_NOTE_FIRMWARE, "probably-firmware-emulated",
	  "probably firmware-emulated: the word copy is over 10x slower than bytes and the "
	  "kernel saw no alignment fault" },
	{ HWT_MISALIGNED_NOTE_COARSE, "coarse-counter",
	  "counter lacks granularity needed to measure unaligned access speed" },
	{ HWT_MISALIGNED_NOTE_MARGINAL, "marginal", "ratio within 0.90..1.10: a near tie" },
	{ HWT_MISALIGNED_NOTE_NO_PERF, "perf-unavailable",
	  "perf events unavailable: kernel emulation (emulated) cannot be detected" },
	{ HWT_MISALIGNED_NOTE_MIGRATED, "migrated", "the probe thread left its CPU" },
	{ HWT_MISALIGNED_NOTE_BUDGET, "budget-exhausted",
	  "stopped by the time budget before the minima were stable" },
	{ HWT_MISALIGNED_NOTE_BAD_COPY, "bad-copy", "a copy loop did not copy: verdict unknown" },
	{ HWT_MISALIGNED_NOTE_CHECK_FAILED, "fault-check-failed",
	  "the fault check could not run (its signal guard was not installed)" },
};

static const char *source_name(int s)
{
	return s == HWT_MISALIGNED_FROM_OVERRIDE ? "override"
	       : s == HWT_MISALIGNED_FROM_CACHE  ? "cache"
						 : "measured";
}

/* One line per CPU: the kernel's sentence, then details in brackets. */
static void print_cpu(FILE *f, const struct hwt_misaligned_cpu *c)
{
	const char *name = hwt_misaligned_speed_name(c->speed);
	char ratio[32];

	ratio_str(ratio, sizeof(ratio), c->ratio_x100);
	if (c->status) {
		fprintf(f, "cpu%d: not probed: %s\n", c->cpu, strerror(-c->status));
		return;
	}
	if (c->source == HWT_MISALIGNED_FROM_OVERRIDE) {
		fprintf(f, "cpu%d: scalar unaligned access speed set to '%s' (%d) by override\n",
			c->cpu, name, c->speed);
		return;
	}
	if (c->fault_signal)
		fprintf(f, "cpu%d: a misaligned word access raised %s (%s)", c->cpu,
			signame(c->fault_signal), name);
	else if (c->speed == HWT_MISALIGNED_EMULATED)
		fprintf(f, "cpu%d: misaligned accesses trap to the kernel, %" PRId64
			   " alignment faults in one copy iteration (%s)",
			c->cpu, c->align_faults, name);
	else if (c->ratio_x100 || c->word_ns)
		fprintf(f, "cpu%d: scalar unaligned word access speed is %sx byte access speed (%s)",
			c->cpu, ratio, name);
	else
		fprintf(f, "cpu%d: %s", c->cpu, name);
	if (c->source == HWT_MISALIGNED_FROM_CACHE)
		fprintf(f, " [cached: word %" PRIu64 " ns, byte %" PRIu64 " ns]", c->word_ns,
			c->byte_ns);
	else if (c->samples)
		fprintf(f, " [word %" PRIu64 " ns, byte %" PRIu64 " ns, min of %u samples x%u, probe %.3f ms]",
			c->word_ns, c->byte_ns, c->samples, c->reps, c->probe_ns / 1e6);
	if (c->hwprobe >= 0)
		fprintf(f, " [riscv_hwprobe: %s, %s]", hwt_misaligned_speed_name(c->hwprobe),
			c->hwprobe == (int)c->speed ? "agrees" : "disagrees");
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if ((c->notes & notes[i].bit) && notes[i].bit != HWT_MISALIGNED_NOTE_NO_PERF)
			fprintf(f, " [note: %s]", notes[i].text);
	fputc('\n', f);
}

/*
 * CPUs that agree share one line.  Two CPUs agree when their group keys
 * are equal: the speed, where it came from, the probe status, the fault
 * signal, hwprobe's answer and the notes (perf-unavailable aside: it has
 * its own line).  A future key (e.g. the core type) is one more member here
 * and one more comparison in key_equal().
 */
struct group_key {
	int speed, source, status, fault_signal, hwprobe;
	unsigned notes;
};

static struct group_key key_of(const struct hwt_misaligned_cpu *c)
{
	return (struct group_key){ .speed = c->speed, .source = c->source, .status = c->status,
				   .fault_signal = c->fault_signal, .hwprobe = c->hwprobe,
				   .notes = c->notes & ~HWT_MISALIGNED_NOTE_NO_PERF };
}

static bool key_equal(const struct group_key *a, const struct group_key *b)
{
	return a->speed == b->speed && a->source == b->source && a->status == b->status &&
	       a->fault_signal == b->fault_signal && a->hwprobe == b->hwprobe &&
	       a->notes == b->notes;
}

struct range_u64 {
	uint64_t lo, hi;
};

static void range_add(struct range_u64 *r, uint64_t v, bool first)
{
	if (first || v < r->lo)
		r->lo = v;
	if (first || v > r->hi)
		r->hi = v;
}

/* "lo" or "lo-hi", values scaled by 1/div with `decimals` digits. */
static void range_str(char *buf, size_t len, const struct range_u64 *r, double div, int decimals)
{
	if (r->lo == r->hi)
		snprintf(buf, len, "%.*f", decimals, r->lo / div);
	else
		snprintf(buf, len, "%.*f-%.*f", decimals, r->lo / div, decimals, r->hi / div);
}

/* One line for the CPUs of r whose key is k (members[] marks them). */
static void print_group(FILE *f, const struct hwt_misaligned_report *r, const bool *member,
			const struct hwt_cpus *set)
{
	const struct hwt_misaligned_cpu *c0 = NULL;
	struct range_u64 ratio = { 0, 0 }, word = { 0, 0 }, byte = { 0, 0 }, probe = { 0, 0 },
			 faults = { 0, 0 };
	char list[512], a[64], b[64], d[64], e[64];
	bool first = true;

	for (unsigned i = 0; i < r->n; i++) {
		const struct hwt_misaligned_cpu *c = &r->cpu[i];

		if (!member[i])
			continue;
		if (!c0)
			c0 = c;
		range_add(&ratio, c->ratio_x100, first);
		range_add(&word, c->word_ns, first);
		range_add(&byte, c->byte_ns, first);
		range_add(&probe, c->probe_ns, first);
		range_add(&faults, c->align_faults < 0 ? 0 : (uint64_t)c->align_faults, first);
		first = false;
	}
	if (hwt_cpus_format(set, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "?");
	fprintf(f, "cpus %s: ", list);
	if (c0->status) {
		fprintf(f, "not probed: %s\n", strerror(-c0->status));
		return;
	}
	if (c0->source == HWT_MISALIGNED_FROM_OVERRIDE) {
		fprintf(f, "scalar unaligned access speed set to '%s' (%d) by override\n",
			hwt_misaligned_speed_name(c0->speed), c0->speed);
		return;
	}
	fprintf(f, "%s", hwt_misaligned_speed_name(c0->speed));
	range_str(a, sizeof(a), &ratio, 100, 2);
	if (c0->fault_signal)
		fprintf(f, " (a misaligned word access raised %s)", signame(c0->fault_signal));
	else if (c0->speed == HWT_MISALIGNED_EMULATED)
		fprintf(f, " (%s alignment faults in one copy iteration)",
			(range_str(b, sizeof(b), &faults, 1, 0), b));
	else if (ratio.hi || word.hi)
		fprintf(f, " (ratio %s)", a);
	range_str(b, sizeof(b), &word, 1, 0);
	range_str(d, sizeof(d), &byte, 1, 0);
	range_str(e, sizeof(e), &probe, 1e6, 3);
	if (c0->source == HWT_MISALIGNED_FROM_CACHE)
		fprintf(f, " [cached: word %s ns, byte %s ns]", b, d);
	else if (word.hi || byte.hi)
		fprintf(f, " [word %s ns, byte %s ns, probe %s ms]", b, d, e);
	if (c0->hwprobe >= 0)
		fprintf(f, " [riscv_hwprobe: %s, %s]", hwt_misaligned_speed_name(c0->hwprobe),
			c0->hwprobe == (int)c0->speed ? "agrees" : "disagrees");
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if ((c0->notes & notes[i].bit) && notes[i].bit != HWT_MISALIGNED_NOTE_NO_PERF)
			fprintf(f, " [note: %s]", notes[i].text);
	fputc('\n', f);
}

/* The CPUs in groups of equal keys, in the order of each group's first CPU;
 * a group of one CPU gets the per-CPU line. */
static void print_grouped(FILE *f, const struct hwt_misaligned_report *r)
{
	bool *done = calloc(r->n ? r->n : 1, sizeof(*done));
	bool *member = calloc(r->n ? r->n : 1, sizeof(*member));

	if (!done || !member) { /* no memory: the long form needs none */
		for (unsigned i = 0; i < r->n; i++)
			print_cpu(f, &r->cpu[i]);
		goto out;
	}
	for (unsigned i = 0; i < r->n; i++) {
		struct group_key k = key_of(&r->cpu[i]);
		struct hwt_cpus set = HWT_CPUS_INIT;
		unsigned count = 0;

		if (done[i])
			continue;
		for (unsigned j = i; j < r->n; j++) {
			struct group_key kj = key_of(&r->cpu[j]);

			member[j] = !done[j] && key_equal(&k, &kj);
			if (member[j]) {
				done[j] = true;
				count++;
				if (hwt_cpus_add(&set, r->cpu[j].cpu) < 0)
					count = 0; /* cannot list them: fall back below */
			}
		}
		if (count > 1) {
			print_group(f, r, member, &set);
		} else {
			for (unsigned j = i; j < r->n; j++)
				if (member[j])
					print_cpu(f, &r->cpu[j]);
		}
		hwt_cpus_free(&set);
		memset(member, 0, r->n * sizeof(*member));
	}
out:
	free(done);
	free(member);
}

void probe_print_human(FILE *f, const struct hwt_misaligned_report *r, bool per_cpu)
{
	unsigned count[HWT_MISALIGNED_UNSUPPORTED + 1] = { 0 }, probed = 0, noperf = 0;

	if (!per_cpu)
		print_grouped(f, r);
	for (unsigned i = 0; i < r->n; i++) {
		if (per_cpu)
			print_cpu(f, &r->cpu[i]);
		if (r->cpu[i].status)
			continue;
		probed++;
		count[r->cpu[i].speed]++;
		noperf += (r->cpu[i].notes & HWT_MISALIGNED_NOTE_NO_PERF) != 0;
	}
	if (noperf)
		fprintf(f, "note: perf events unavailable on %u CPU(s): kernel emulation (emulated) "
			   "cannot be detected\n", noperf);
	fprintf(f, "summary: %s (", hwt_misaligned_speed_name(r->summary));
	for (int s = 0, first = 1; s <= HWT_MISALIGNED_UNSUPPORTED; s++) {
		if (!count[s])
			continue;
		fprintf(f, "%s%u %s", first ? "" : ", ", count[s], hwt_misaligned_speed_name(s));
		first = 0;
	}
	fprintf(f, "%s of %u CPUs)\n", probed ? "" : "none probed", r->n);
	fprintf(f, "wall time: %.3f ms (%s, %s, %u wave%s, budget %.3f ms per CPU%s)\n",
		r->wall_ns / 1e6, source_name(r->source), r->serial ? "serial" : "parallel",
		r->waves, r->waves == 1 ? "" : "s", r->budget_us / 1e3,
		r->kernel_window ? ", kernel window" : "");
}

int probe_env_override(void)
{
	const char *bad = NULL;
	int s = hwt_misaligned_env_override(&bad);

	if (s < 0)
		cli_error("HWTUNE_UNALIGNED_SCALAR_SPEED: invalid value '%s' "
			  "(expected slow, fast or unsupported; empty is invalid too)", bad);
	return s;
}

const char *probe_recommendation(int summary)
{
	switch (summary) {
	case HWT_MISALIGNED_FAST:
		return "misaligned word accesses are fast on every CPU: copy, compare and checksum "
		       "loops may use unaligned word loads and stores without aligning first";
	case HWT_MISALIGNED_SLOW:
		return "misaligned word accesses are slower than bytes: align pointers (or use "
		       "byte/shift-merge loops) before word-sized loops";
	case HWT_MISALIGNED_EMULATED:
		return "misaligned accesses trap to the kernel and are emulated (very slow): "
		       "never make them on purpose; align every word access";
	case HWT_MISALIGNED_UNSUPPORTED:
		return "misaligned accesses fault: code must never make them";
	default:
		return "CPUs differ or could not be measured: treat misaligned accesses as slow "
		       "unless a thread is pinned to CPUs measured fast";
	}
}

static void json_cpu(FILE *f, const struct hwt_misaligned_cpu *c, bool last)
{
	char ratio[32];

	ratio_str(ratio, sizeof(ratio), c->ratio_x100);
	fprintf(f,
		"    {\"cpu\": %d, \"speed\": \"%s\", \"ratio\": %s, \"word_ns\": %" PRIu64
		", \"byte_ns\": %" PRIu64 ", \"probe_ns\": %" PRIu64 ", \"source\": \"%s\"",
		c->cpu, hwt_misaligned_speed_name(c->speed), ratio, c->word_ns, c->byte_ns,
		c->probe_ns, source_name(c->source));
	/* strerror texts contain no characters that need JSON escaping */
	if (c->status)
		fprintf(f, ", \"status\": \"not probed: %s\"", strerror(-c->status));
	else
		fprintf(f, ", \"status\": \"ok\"");
	fprintf(f,
		", \"ratio_x100\": %u, \"word_median_ns\": %" PRIu64 ", \"byte_median_ns\": %" PRIu64
		", \"check_ns\": %" PRIu64 ", \"samples\": %u, \"reps\": %u, \"wave\": %u",
		c->ratio_x100, c->word_median_ns, c->byte_median_ns, c->check_ns, c->samples,
		c->reps, c->wave);
	if (c->fault_signal)
		fprintf(f, ", \"fault_signal\": \"%s\"", signame(c->fault_signal));
	else
		fprintf(f, ", \"fault_signal\": null");
	if (c->align_faults >= 0)
		fprintf(f, ", \"align_faults\": %" PRId64, c->align_faults);
	else
		fprintf(f, ", \"align_faults\": null");
	if (c->hwprobe >= 0)
		fprintf(f, ", \"hwprobe\": \"%s\", \"hwprobe_agrees\": %s",
			hwt_misaligned_speed_name(c->hwprobe), c->hwprobe == (int)c->speed ? "true" : "false");
	else
		fprintf(f, ", \"hwprobe\": null, \"hwprobe_agrees\": null");
	fprintf(f, ", \"preempted\": %ld, \"notes\": [", c->preempted);
	for (size_t i = 0, n = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (c->notes & notes[i].bit)
			fprintf(f, "%s\"%s\"", n++ ? ", " : "", notes[i].key);
	fprintf(f, "]}%s\n", last ? "" : ",");
}

static const char *cache_state(const struct hwt_misaligned_report *r)
{
	unsigned hit = 0;

	if (r->cache_off)
		return "off";
	for (unsigned i = 0; i < r->n; i++)
		hit += r->cpu[i].source == HWT_MISALIGNED_FROM_CACHE;
	return hit == r->n ? "hit" : hit ? "partial" : "miss";
}

void probe_json(FILE *f, const struct hwt_misaligned_report *r)
{
	fprintf(f,
		"{\"mode\": \"%s\", \"source\": \"%s\", \"wall_ns\": %" PRIu64
		", \"summary\": \"%s\",\n  \"smt\": \"%s\", \"waves\": %u, \"budget_us\": %u"
		", \"kernel_window\": %s, \"cache\": \"%s\", \"cache_ignored\": ",
		r->serial ? "serial" : "parallel", source_name(r->source), r->wall_ns,
		hwt_misaligned_speed_name(r->summary), r->smt_apart ? "apart" : "together", r->waves,
		r->budget_us, r->kernel_window ? "true" : "false", cache_state(r));
	if (r->cache_status == -EBADMSG)
		fprintf(f, "\"corrupt\"");
	else if (r->cache_status == -ESTALE)
		fprintf(f, "\"foreign\"");
	else if (r->cache_status)
		fprintf(f, "\"%s\"", strerror(-r->cache_status));
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"cpus\": [\n");
	for (unsigned i = 0; i < r->n; i++)
		json_cpu(f, &r->cpu[i], i + 1 == r->n);
	fprintf(f, "  ]}");
}

/* {"probe": {...}, "version": V}: "version" last, so that the first line
 * stays what DESIGN.md shows. */
static void print_json(FILE *f, const struct hwt_misaligned_report *r)
{
	fprintf(f, "{\"probe\": ");
	probe_json(f, r);
	fprintf(f, ",\n \"version\": \"%s\"}\n", hwt_version());
}

/* Every CPU of want must be allowed: say which one is not. */
static bool cpus_allowed(const char *arg, const struct hwt_cpus *want)
{
	struct hwt_cpus ok = HWT_CPUS_INIT;
	char list[256];
	bool good = true;

	if (hwt_cpu_allowed(&ok) < 0) {
		cli_cmd_error("probe", "cannot read the allowed CPU set");
		return false;
	}
	for (unsigned i = 0; i < want->n && good; i++) {
		if (hwt_cpus_has(&ok, want->cpu[i]))
			continue;
		if (hwt_cpus_format(&ok, list, sizeof(list)) < 0)
			snprintf(list, sizeof(list), "?");
		cli_cmd_error("probe", "--cpus: CPU %d in '%s' is not allowed here (allowed: %s)",
			      want->cpu[i], arg, list);
		good = false;
	}
	hwt_cpus_free(&ok);
	return good;
}

int probe_parse(int argc, char **argv, struct cli_args *a)
{
	enum { O_SERIAL = 256, O_KWIN, O_NOCACHE, O_JSON, O_CPUS, O_BUDGET, O_SMT, O_SPEED,
	       O_PERCPU, O_FORMAT };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "serial", no_argument, NULL, O_SERIAL },
		{ "kernel-window", no_argument, NULL, O_KWIN },
		{ "no-cache", no_argument, NULL, O_NOCACHE },
		{ "json", no_argument, NULL, O_JSON },
		{ "per-cpu", no_argument, NULL, O_PERCPU },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "budget-ms", required_argument, NULL, O_BUDGET },
		{ "smt", required_argument, NULL, O_SMT },
		{ "unaligned-scalar-speed", required_argument, NULL, O_SPEED },
		{ NULL, 0, NULL, 0 },
	};
	struct hwt_misaligned_opts *o = &a->probe;
	const char *cpus_arg = NULL, *speed_arg = NULL, *v;
	struct cli_getopt g;
	char why[128];
	uint64_t ms;
	int c, s;

	cli_getopt_begin(&g, "probe", argc, argv, "h", longopts);
	while ((c = cli_getopt_next(&g)) != -1) {
		v = g.arg;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case O_SERIAL:
			o->flags |= HWT_MISALIGNED_SERIAL;
			break;
		case O_KWIN:
			o->flags |= HWT_MISALIGNED_KERNEL_WINDOW;
			break;
		case O_NOCACHE:
			o->flags |= HWT_MISALIGNED_NO_CACHE;
			break;
		case O_JSON:
			a->json = true, a->prom = false;
			break;
		case O_PERCPU:
			a->per_cpu = true;
			break;
		case O_FORMAT:
			if (!cli_parse_format("probe", v, a))
				return CLI_EXIT_USAGE;
			break;
		case O_CPUS:
			cpus_arg = v;
			hwt_cpus_free(&a->cpus);
			if (hwt_cpus_parse_why(cpus_arg, &a->cpus, why, sizeof(why)) < 0) {
				cli_cmd_error("probe", "--cpus: invalid CPU list '%s': %s (expected e.g. "
					      "0-3,8)", cpus_arg, why);
				return CLI_EXIT_USAGE;
			}
			a->have_cpus = true;
			break;
		case O_BUDGET:
			if (!cli_parse_dec("probe", "--budget-ms", v, 1,
					   HWT_MISALIGNED_MAX_BUDGET_US / 1000, &ms))
				return CLI_EXIT_USAGE;
			o->budget_us = (unsigned)(ms * 1000);
			break;
		case O_SMT:
			if (!strcmp(v, "apart")) {
				o->flags |= HWT_MISALIGNED_SMT_APART;
			} else if (!strcmp(v, "together")) {
				o->flags &= ~(unsigned)HWT_MISALIGNED_SMT_APART;
			} else {
				cli_cmd_error("probe", "--smt: invalid value '%s' (expected together or "
					      "apart)", v);
				return CLI_EXIT_USAGE;
			}
			break;
		case O_SPEED:
			speed_arg = v;
			s = hwt_misaligned_parse_speed(speed_arg);
			if (s < 0) {
				cli_cmd_error("probe", "--unaligned-scalar-speed: invalid value '%s' "
					      "(expected slow, fast or unsupported)", speed_arg);
				return CLI_EXIT_USAGE;
			}
			o->override_speed = s;
			break;
		case 1:
			cli_cmd_error("probe", "unexpected argument '%s' (probe takes options only; "
				      "try 'hwtune probe --help')", v);
			return CLI_EXIT_USAGE;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (o->budget_us && (o->flags & HWT_MISALIGNED_KERNEL_WINDOW)) {
		cli_cmd_error("probe", "--budget-ms and --kernel-window exclude each other "
			      "(the kernel window is 2 x 8 ms)");
		return CLI_EXIT_USAGE;
	}
	if (!speed_arg) { /* the flag beats the environment */
		s = probe_env_override();
		if (s < 0)
			return CLI_EXIT_USAGE;
		o->override_speed = s;
	}
	if (a->have_cpus && !cpus_allowed(cpus_arg, &a->cpus))
		return CLI_EXIT_USAGE;
	/* Asking for a way of measuring means: measure now. */
	if (o->flags & (HWT_MISALIGNED_SERIAL | HWT_MISALIGNED_KERNEL_WINDOW |
			HWT_MISALIGNED_SMT_APART) || o->budget_us)
		o->flags |= HWT_MISALIGNED_REFRESH;
	a->run = probe_run;
	return CLI_RUN;
}

int probe_run(struct cli_args *a)
{
	struct hwt_misaligned_report r;
	int ret = hwt_misaligned_probe(a->have_cpus ? &a->cpus : NULL, &a->probe, &r);

	if (ret < 0) {
		cli_error("probe: %s", strerror(-ret));
		return 1;
	}
	if (a->json) {
		print_json(stdout, &r);
	} else if (a->prom) {
		struct report_machine m;

		report_machine_read(&m);
		report_prom(stdout, &(struct report_prom){ .m = &m, .probe = &r });
	} else {
		probe_print_human(stdout, &r, a->per_cpu);
	}
	hwt_misaligned_report_free(&r);
	return fflush(stdout) ? 1 : 0;
}
