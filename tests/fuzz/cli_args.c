/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the hwtune command line, every command, parse step only
 * (tools/hwtune.c cli_parse: nothing is measured).
 *
 * Input: one byte choosing the environment (bits 0-1
 * HWTUNE_UNALIGNED_SCALAR_SPEED unset/"fast"/"bogus"/"", bits 2-3
 * HWTUNE_DISABLE_MSIPOLLING unset/"1"/"0"/"yes", bits 4-5
 * HWTUNE_UNALIGNED_VECTOR_SPEED unset/"slow"/"bogus"/"", bits 6-7
 * HWTUNE_RUNTIME_DIR unset/"/run/x"/"relative"/""), then argv[1..] as
 * NUL-separated words (argv[0] is "hwtune"; at most 64 words).
 * Properties:
 *  - the answer is CLI_RUN, 0 or 2 (CLI_EXIT_USAGE), and the same twice;
 *  - 2: one line on stderr, "hwtune: ...\n" or "hwtune CMD: ...\n" (more
 *    only if it quotes a word with a newline), nothing on stdout: bad usage always says what is
 *    wrong, and echoes no word whole beyond CLI_VALUE_MAX bytes (the
 *    message stays under 1 KiB); 0: help or version text on stdout, nothing on stderr;
 *    CLI_RUN: nothing printed yet;
 *  - CLI_RUN: the options are in their documented ranges and consistent
 *    (probe: budget 1..60000 ms and not with --kernel-window, --cpus
 *    allowed here, refresh iff asked to measure, --system alone with
 *    neither --cpus, an override nor --no-cache; cmdq: a batch and its
 *    sync fit the queue, disable_msipolling in effect only without MSI
 *    polling, --queues 0..256 or per-cpu and one queue with --auto, ...),
 *    and every numeric option holds the value its last occurrence spells
 *    in the documented syntax, decimal only (prog/cli.h); decode's dwords
 *    are the hex its two operands spell; options are read as getopt_long
 *    reads them (exact name or unique abbreviation, "--name=V" or "--name
 *    V", "--" ends them); the environment a run depends on is valid
 *    unless a flag overrides it (HWTUNE_RUNTIME_DIR: probe and the main
 *    job, always); one output format: every --json / --format=F of a
 *    line that parsed names the same one.
 */
#include "fuzz/fuzz.h"

#include "hwtune.h"
#include "cmdq/command.h"
#include "decode/command.h"
#include "job/job.h"
#include "probe/command.h"

#include <stdbool.h>
#include <string.h>

#define MAX_ARGS 64

struct captured {
	char *out, *err;
	size_t nout, nerr;
};

static int parse_captured(int argc, char **argv, struct cli_args *a, struct captured *c)
{
	FILE *saved_out = stdout, *saved_err = stderr;
	FILE *mo = open_memstream(&c->out, &c->nout), *me = open_memstream(&c->err, &c->nerr);
	int r;

	FUZZ_ASSERT(mo && me, "open_memstream");
	stdout = mo;
	stderr = me;
	r = cli_parse(argc, argv, a);
	stdout = saved_out;
	stderr = saved_err;
	fclose(mo);
	fclose(me);
	return r;
}

/* prog/cli.h: "an unsigned decimal value", digits only. */
static bool ref_number(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (*s < '0' || *s > '9' || x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

/* A command's long options, as its parser declares them. */
struct lopt {
	const char *name;
	bool arg;
};

/* A parsed command line read again as getopt_long reads it. */
struct scan {
	int n, npos;
	int idx[MAX_ARGS];
	const char *val[MAX_ARGS];
	const char *pos[MAX_ARGS];
};

static void scan(int argc, char **argv, const struct lopt *opts, struct scan *sc)
{
	bool rest = false;

	memset(sc, 0, sizeof(*sc));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name;
		int exact = -1, match = -1, k = 0, j;
		size_t n;

		if (rest || a[0] != '-' || !a[1]) {
			sc->pos[sc->npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			rest = true;
			continue;
		}
		FUZZ_ASSERT(a[1] == '-', "short option '%s' in a line that parsed", a);
		name = a + 2;
		n = strcspn(name, "=");
		for (j = 0; opts[j].name; j++) {
			if (strncmp(opts[j].name, name, n))
				continue;
			if (strlen(opts[j].name) == n)
				exact = j;
			match = j;
			k++;
		}
		FUZZ_ASSERT(exact >= 0 || k == 1, "'%s' parsed but matches %d options", a, k);
		j = exact >= 0 ? exact : match;
		sc->idx[sc->n] = j;
		if (opts[j].arg) {
			FUZZ_ASSERT(name[n] == '=' || i + 1 < argc, "%s without a value parsed", a);
			sc->val[sc->n] = name[n] == '=' ? name + n + 1 : argv[++i];
		} else {
			FUZZ_ASSERT(name[n] != '=', "'%s' parsed with a value", a);
			sc->val[sc->n] = NULL;
		}
		sc->n++;
	}
}

/* The value of the last occurrence of option want (NULL: not given). */
static const char *last_value(const struct scan *sc, const struct lopt *opts, const char *want)
{
	const char *v = NULL;

	for (int i = 0; i < sc->n; i++)
		if (!strcmp(opts[sc->idx[i]].name, want))
			v = sc->val[i] ? sc->val[i] : "";
	return v;
}

static bool given(const struct scan *sc, const struct lopt *opts, const char *want)
{
	return last_value(sc, opts, want) != NULL;
}

/* Option name's value (if given) spells the number the parser stored. */
static void check_number(const struct scan *sc, const struct lopt *opts, const char *name,
			 uint64_t stored, uint64_t scale)
{
	const char *v = last_value(sc, opts, name);
	uint64_t want;

	if (!v)
		return;
	FUZZ_ASSERT(ref_number(v, &want), "--%s '%s' accepted, but it is not decimal", name, v);
	FUZZ_ASSERT(stored == want * scale, "--%s '%s' stored as %llu, not %llu", name, v,
		    (unsigned long long)stored, (unsigned long long)(want * scale));
}

/* The environment of this input (set_env): valid values? */
static unsigned env_sel;
static bool env_speed_ok(void) { return (env_sel & 3) < 2; }         /* unset, "fast" */
static bool env_msi_ok(void) { return (env_sel >> 2 & 3) < 3; }      /* unset, "1", "0" */
static bool env_vspeed_ok(void) { return (env_sel >> 4 & 3) < 2; }   /* unset, "slow" */
static bool env_rdir_ok(void) { return (env_sel >> 6 & 3) != 2; }     /* not "relative" */

static void check_format(const struct scan *sc, const struct lopt *opts, const struct cli_args *a)
{
	bool json = false, prom = false;
	const char *first = NULL;

	for (int i = 0; i < sc->n; i++) {
		const char *n = opts[sc->idx[i]].name, *v = sc->val[i], *f = NULL;

		if (!strcmp(n, "json"))
			f = "json";
		else if (!strcmp(n, "format"))
			f = v;
		if (!f)
			continue;
		FUZZ_ASSERT(!first || !strcmp(first, f), "formats '%s' and '%s' both accepted", first, f);
		first = f;
		json = !strcmp(f, "json"), prom = !strcmp(f, "prom");
	}
	FUZZ_ASSERT(a->json == json && a->prom == prom, "json %d prom %d, want %d %d", a->json,
		    a->prom, json, prom);
	FUZZ_ASSERT(a->per_cpu == given(sc, opts, "per-cpu"), "per_cpu %d", a->per_cpu);
}

static void check_probe(int argc, char **argv, const struct cli_args *a)
{
	static const struct lopt opts[] = {
		{ "help", false }, { "serial", false }, { "kernel-window", false },
		{ "no-cache", false }, { "json", false }, { "per-cpu", false }, { "format", true },
		{ "cpus", true }, { "budget-ms", true }, { "smt", true },
		{ "unaligned-scalar-speed", true }, { "unaligned-vector-speed", true },
		{ "system", false }, { NULL, false },
	};
	const struct hwt_misaligned_opts *o = &a->probe;
	struct scan sc;
	const unsigned known = HWT_MISALIGNED_SERIAL | HWT_MISALIGNED_KERNEL_WINDOW |
			       HWT_MISALIGNED_SMT_APART | HWT_MISALIGNED_NO_CACHE |
			       HWT_MISALIGNED_REFRESH;
	const unsigned measure = HWT_MISALIGNED_SERIAL | HWT_MISALIGNED_KERNEL_WINDOW |
				 HWT_MISALIGNED_SMT_APART;

	scan(argc, argv, opts, &sc);
	FUZZ_ASSERT(sc.npos == 0, "probe accepted the operand '%s'", sc.pos[0]);
	FUZZ_ASSERT(given(&sc, opts, "unaligned-scalar-speed") || env_speed_ok(),
		    "probe ran with a bad HWTUNE_UNALIGNED_SCALAR_SPEED and no flag");
	FUZZ_ASSERT(given(&sc, opts, "unaligned-vector-speed") || env_vspeed_ok(),
		    "probe ran with a bad HWTUNE_UNALIGNED_VECTOR_SPEED and no flag");
	FUZZ_ASSERT(o->vector_override_speed == 0 ||
			    (o->vector_override_speed >= HWT_MISALIGNED_SLOW &&
			     o->vector_override_speed <= HWT_MISALIGNED_UNSUPPORTED),
		    "vector override %d", (int)o->vector_override_speed);
	FUZZ_ASSERT(a->system == given(&sc, opts, "system"), "system %d", a->system);
	FUZZ_ASSERT(!a->system || (!a->have_cpus && !o->override_speed && !o->vector_override_speed &&
				   !(o->flags & HWT_MISALIGNED_NO_CACHE)),
		    "--system with --cpus, an override or --no-cache");
	FUZZ_ASSERT(!o->root && !o->runtime_dir, "probe root or runtime dir set by the parse");
	FUZZ_ASSERT(env_rdir_ok(), "probe ran with a relative HWTUNE_RUNTIME_DIR");
	check_format(&sc, opts, a);
	FUZZ_ASSERT(!(o->flags & ~known), "probe flags 0x%x", o->flags);
	FUZZ_ASSERT(o->budget_us == 0 || (o->budget_us >= 1000 &&
					  o->budget_us <= HWT_MISALIGNED_MAX_BUDGET_US),
		    "budget %u us", o->budget_us);
	FUZZ_ASSERT(!(o->budget_us && (o->flags & HWT_MISALIGNED_KERNEL_WINDOW)),
		    "--budget-ms with --kernel-window");
	FUZZ_ASSERT(o->override_speed == 0 || (o->override_speed >= HWT_MISALIGNED_SLOW &&
					       o->override_speed <= HWT_MISALIGNED_UNSUPPORTED),
		    "override %d", (int)o->override_speed);
	FUZZ_ASSERT(!!(o->flags & HWT_MISALIGNED_REFRESH) == (!!(o->flags & measure) || o->budget_us),
		    "refresh 0x%x with budget %u", o->flags, o->budget_us);
	FUZZ_ASSERT(!o->cache_dir && !o->sysfs_root, "probe dirs set");
	if (a->have_cpus) {
		struct hwt_cpus ok = HWT_CPUS_INIT;

		FUZZ_ASSERT(a->cpus.n > 0, "--cpus: an empty set");
		FUZZ_ASSERT(hwt_cpu_allowed(&ok) == 0, "allowed CPUs");
		for (unsigned i = 0; i < a->cpus.n; i++)
			FUZZ_ASSERT(hwt_cpus_has(&ok, a->cpus.cpu[i]), "--cpus: CPU %d not allowed",
				    a->cpus.cpu[i]);
		hwt_cpus_free(&ok);
	} else {
		FUZZ_ASSERT(a->cpus.n == 0, "CPUs without --cpus");
	}
	check_number(&sc, opts, "budget-ms", o->budget_us, 1000);
}

static void check_cmdq(int argc, char **argv, const struct cli_args *a)
{
	static const struct lopt opts[] = {
		{ "help", false }, { "json", false }, { "auto", false },
		{ "disable-msipolling", false }, { "poll", true }, { "handler", true },
		{ "threads", true }, { "batch", true }, { "syncs", true }, { "segment", true },
		{ "entries-log2", true }, { "device-cpu", true }, { "producer-cpu", true },
		{ "msi-cost-ns", true }, { "sev-cost-ns", true }, { "cmd-cost-ns", true },
		{ "timeout-ms", true }, { "queues", true }, { NULL, false },
	};
	const struct cmdq_opts *o = &a->cmdq;
	const char *queues;
	struct scan sc;

	scan(argc, argv, opts, &sc);
	FUZZ_ASSERT(sc.npos == 0, "cmdq accepted the operand '%s'", sc.pos[0]);
	FUZZ_ASSERT(given(&sc, opts, "poll") || given(&sc, opts, "disable-msipolling") ||
			    env_msi_ok(),
		    "cmdq ran with a bad HWTUNE_DISABLE_MSIPOLLING and no flag");
	FUZZ_ASSERT(a->json == given(&sc, opts, "json"), "cmdq json %d", a->json);

	FUZZ_ASSERT(o->mode[CMDQ_MSI] || o->mode[CMDQ_SEV], "no completion mode");
	FUZZ_ASSERT(!(o->disable_msi && o->mode[CMDQ_MSI]), "MSI polling measured while disabled");
	FUZZ_ASSERT(o->disable_src >= CMDQ_SRC_DEFAULT && o->disable_src <= CMDQ_SRC_FLAG &&
			    o->disable_msi == (o->disable_src != CMDQ_SRC_DEFAULT),
		    "disable_msi %d from %d", o->disable_msi, o->disable_src);
	FUZZ_ASSERT(o->threads >= 1 && o->threads <= 256, "threads %u", o->threads);
	FUZZ_ASSERT(o->entries_log2 >= HWT_CMDQ_MIN_SHIFT &&
			    o->entries_log2 <= HWT_SMMU_DEV_CMDQS_MAX,
		    "entries_log2 %u", o->entries_log2);
	FUZZ_ASSERT(o->batch + 1 <= 1u << o->entries_log2, "batch %u in a queue of 2^%u", o->batch,
		    o->entries_log2);
	FUZZ_ASSERT(o->syncs >= 1 && o->syncs <= 5000000, "syncs %llu",
		    (unsigned long long)o->syncs);
	FUZZ_ASSERT(o->seg <= 1000000, "segment %u", o->seg);
	FUZZ_ASSERT(o->timeout_ms >= 1 && o->timeout_ms <= 600000, "timeout %llu",
		    (unsigned long long)o->timeout_ms);
	for (int i = 0; i < 3; i++)
		FUZZ_ASSERT(o->cost[i] <= HWT_SMMU_DEV_NS_MAX, "cost[%d] %u", i, o->cost[i]);
	FUZZ_ASSERT(o->device_cpu >= -1 && o->device_cpu <= HWT_CPU_ID_MAX &&
			    o->producer_cpu >= -1 && o->producer_cpu <= HWT_CPU_ID_MAX,
		    "cpus %d %d", o->device_cpu, o->producer_cpu);
	check_number(&sc, opts, "threads", o->threads, 1);
	check_number(&sc, opts, "batch", o->batch, 1);
	check_number(&sc, opts, "syncs", o->syncs, 1);
	check_number(&sc, opts, "segment", o->seg, 1);
	check_number(&sc, opts, "entries-log2", o->entries_log2, 1);
	check_number(&sc, opts, "device-cpu", (uint64_t)o->device_cpu, 1);
	check_number(&sc, opts, "producer-cpu", (uint64_t)o->producer_cpu, 1);
	check_number(&sc, opts, "msi-cost-ns", o->cost[0], 1);
	check_number(&sc, opts, "sev-cost-ns", o->cost[1], 1);
	check_number(&sc, opts, "cmd-cost-ns", o->cost[2], 1);
	check_number(&sc, opts, "timeout-ms", o->timeout_ms, 1);
	/* --queues: 0..256 or the word per-cpu; one queue with --auto */
	FUZZ_ASSERT(o->queues <= CMDQ_QUEUES_MAX || o->queues == HWT_CMDQ_QUEUES_PER_CPU,
		    "queues %u", o->queues);
	FUZZ_ASSERT(!(o->auto_poll && o->queues > 1), "--auto with queues %u", o->queues);
	queues = last_value(&sc, opts, "queues");
	if (queues && !strcmp(queues, "per-cpu"))
		FUZZ_ASSERT(o->queues == HWT_CMDQ_QUEUES_PER_CPU, "--queues per-cpu stored as %u",
			    o->queues);
	else
		check_number(&sc, opts, "queues", o->queues, 1);
}

/* 1 to 16 hex digits after an optional 0x. */
static bool ref_dword(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	size_t n;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strlen(s);
	if (n < 1 || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n)
		return false;
	for (; *s; s++)
		x = x << 4 | (uint64_t)(*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
	*v = x;
	return true;
}

static void check_decode(int argc, char **argv, const struct cli_args *a)
{
	static const struct lopt opts[] = { { "help", false }, { "json", false }, { NULL, false } };
	struct scan sc;

	scan(argc, argv, opts, &sc);
	FUZZ_ASSERT(sc.npos == 2 && a->json == given(&sc, opts, "json"), "decode: %d dwords, json %d",
		    sc.npos, a->json);
	for (int k = 0; k < 2; k++) {
		uint64_t v;

		FUZZ_ASSERT(ref_dword(sc.pos[k], &v), "dword '%s' accepted", sc.pos[k]);
		FUZZ_ASSERT(v == a->dw[k], "dword '%s' parsed as 0x%llx", sc.pos[k],
			    (unsigned long long)a->dw[k]);
	}
}

static void check_main(int argc, char **argv, const struct cli_args *a)
{
	static const struct lopt opts[] = {
		{ "help", false }, { "version", false }, { "no-cache", false }, { "json", false },
		{ "per-cpu", false }, { "format", true }, { NULL, false },
	};
	struct scan sc;

	scan(argc, argv, opts, &sc);
	FUZZ_ASSERT(sc.npos == 0, "the main job accepted the operand '%s'", sc.pos[0]);
	FUZZ_ASSERT(!given(&sc, opts, "version") && !given(&sc, opts, "help"),
		    "the main job runs after --version or --help");
	FUZZ_ASSERT(env_speed_ok() && env_msi_ok() && env_vspeed_ok() && env_rdir_ok(),
		    "the main job runs with a bad environment");
	check_format(&sc, opts, a);
	FUZZ_ASSERT(a->probe.flags == (given(&sc, opts, "no-cache") ? HWT_MISALIGNED_NO_CACHE : 0u),
		    "main job flags 0x%x", a->probe.flags);
	FUZZ_ASSERT(a->probe.override_speed == 0 ||
			    (a->probe.override_speed >= HWT_MISALIGNED_SLOW &&
			     a->probe.override_speed <= HWT_MISALIGNED_UNSUPPORTED),
		    "override %d", (int)a->probe.override_speed);
	FUZZ_ASSERT(a->probe.vector_override_speed == 0 ||
			    (a->probe.vector_override_speed >= HWT_MISALIGNED_SLOW &&
			     a->probe.vector_override_speed <= HWT_MISALIGNED_UNSUPPORTED),
		    "vector override %d", (int)a->probe.vector_override_speed);
	FUZZ_ASSERT(!a->system, "the main job with --system");
}

static void set_env(unsigned sel)
{
	static const char *const speed[] = { NULL, "fast", "bogus", "" };
	static const char *const msi[] = { NULL, "1", "0", "yes" };
	static const char *const vspeed[] = { NULL, "slow", "bogus", "" };
	static const char *const rdir[] = { NULL, "/run/x", "relative", "" };

	env_sel = sel;

	if (speed[sel & 3])
		setenv("HWTUNE_UNALIGNED_SCALAR_SPEED", speed[sel & 3], 1);
	else
		unsetenv("HWTUNE_UNALIGNED_SCALAR_SPEED");
	if (msi[sel >> 2 & 3])
		setenv("HWTUNE_DISABLE_MSIPOLLING", msi[sel >> 2 & 3], 1);
	else
		unsetenv("HWTUNE_DISABLE_MSIPOLLING");
	if (vspeed[sel >> 4 & 3])
		setenv("HWTUNE_UNALIGNED_VECTOR_SPEED", vspeed[sel >> 4 & 3], 1);
	else
		unsetenv("HWTUNE_UNALIGNED_VECTOR_SPEED");
	if (rdir[sel >> 6 & 3])
		setenv("HWTUNE_RUNTIME_DIR", rdir[sel >> 6 & 3], 1);
	else
		unsetenv("HWTUNE_RUNTIME_DIR");
}

static size_t count_char(const char *s, size_t n, char ch)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == ch;
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *words;
	struct cli_args a, b;
	struct captured c = { 0 }, c2 = { 0 };
	int argc = 1, r, r2;
	bool newlines;

	if (!size)
		return 0;
	set_env(data[0]);
	/* argv[1..]: the words of data[1..], each NUL-terminated */
	words = malloc(size);
	FUZZ_ASSERT(words != NULL, "malloc");
	memcpy(words, data + 1, size - 1);
	words[size - 1] = '\0';
	argv[0] = "hwtune";
	if (size > 1) {
		for (char *p = words; argc <= MAX_ARGS && p < words + size; p += strlen(p) + 1)
			argv[argc++] = p;
	}
	argv[argc] = NULL;
	/* a message may quote a word with a newline in it */
	newlines = count_char(words, size - 1, '\n') != 0;

	r = parse_captured(argc, argv, &a, &c);
	FUZZ_ASSERT(r == CLI_RUN || r == 0 || r == CLI_EXIT_USAGE, "cli_parse = %d", r);
	if (r == CLI_EXIT_USAGE) {
		FUZZ_ASSERT(c.nout == 0, "bad usage printed on stdout: %.*s", (int)c.nout, c.out);
		FUZZ_ASSERT(c.nerr > 9 &&
				    (!strncmp(c.err, "hwtune: ", 8) ||
				     !strncmp(c.err, "hwtune probe: ", 14) ||
				     !strncmp(c.err, "hwtune cmdq: ", 13) ||
				     !strncmp(c.err, "hwtune decode: ", 15)) &&
				    c.err[c.nerr - 1] == '\n' &&
				    (newlines || count_char(c.err, c.nerr, '\n') == 1),
			    "bad usage must say why in one line, said: '%.*s'", (int)c.nerr, c.err);
		FUZZ_ASSERT(c.nerr < 1024, "a message of %zu bytes: '%.200s'", c.nerr, c.err);
	} else if (r == 0) {
		FUZZ_ASSERT(c.nout > 0 && c.nerr == 0, "help: %zu bytes out, err '%.*s'", c.nout,
			    (int)c.nerr, c.err);
	} else {
		const char *cmd = argc > 1 ? argv[1] : "";

		FUZZ_ASSERT(c.nout == 0 && c.nerr == 0, "parse printed '%.*s' '%.*s'", (int)c.nout,
			    c.out, (int)c.nerr, c.err);
		FUZZ_ASSERT(a.run != NULL, "CLI_RUN without a run step");
		if (a.run == probe_run) {
			FUZZ_ASSERT(!strcmp(cmd, "probe"), "probe for '%s'", cmd);
			check_probe(argc - 1, argv + 1, &a);
		} else if (a.run == cmdq_cmd_run) {
			FUZZ_ASSERT(!strcmp(cmd, "cmdq"), "cmdq for '%s'", cmd);
			check_cmdq(argc - 1, argv + 1, &a);
		} else if (a.run == decode_run) {
			FUZZ_ASSERT(!strcmp(cmd, "decode"), "decode for '%s'", cmd);
			check_decode(argc - 1, argv + 1, &a);
		} else {
			FUZZ_ASSERT(a.run == main_run, "an unknown run step");
			FUZZ_ASSERT(argc == 1 || argv[1][0] == '-', "the main job for '%s'", cmd);
			check_main(argc, argv, &a);
		}
	}
	/* the same again: no hidden state */
	r2 = parse_captured(argc, argv, &b, &c2);
	FUZZ_ASSERT(r2 == r && c.nout == c2.nout && c.nerr == c2.nerr &&
			    !memcmp(c.out, c2.out, c.nout) && !memcmp(c.err, c2.err, c.nerr),
		    "a second parse answered %d, not %d", r2, r);
	if (r == CLI_RUN) {
		FUZZ_ASSERT(a.run == b.run && a.json == b.json && a.have_cpus == b.have_cpus &&
				    a.per_cpu == b.per_cpu && a.prom == b.prom && a.system == b.system &&
				    !memcmp(&a.probe, &b.probe, sizeof(a.probe)) &&
				    !memcmp(&a.cmdq, &b.cmdq, sizeof(a.cmdq)) &&
				    !memcmp(a.dw, b.dw, sizeof(a.dw)) && a.cpus.n == b.cpus.n &&
				    (!a.cpus.n ||
				     !memcmp(a.cpus.cpu, b.cpus.cpu, a.cpus.n * sizeof(int))),
			    "a second parse gave other options");
	}
	cli_args_free(&a);
	cli_args_free(&b);
	free(c.out);
	free(c.err);
	free(c2.out);
	free(c2.err);
	free(words);
	return 0;
}
