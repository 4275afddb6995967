/* SPDX-License-Identifier: MIT */
/* hwtune probe: misaligned-access speed of each allowed CPU (options, run). */
#include "probe/command.h"

#include "probe/engine.h"
#include "probe/report.h"
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hwtune probe [--cpus LIST] [--serial] [--budget-ms N] [--kernel-window]\n"
		"                    [--smt=together|apart] [--no-cache] [--json] [--per-cpu]\n"
		"                    [--format=text|json|prom]\n"
		"                    [--unaligned-scalar-speed=slow|fast|unsupported]\n"
		"                    [--unaligned-vector-speed=slow|fast|unsupported]\n"
		"       hwtune probe --system [--serial] [--budget-ms N] [--kernel-window]\n"
		"                    [--smt=together|apart] [--json] [--per-cpu] [--format=F]\n"
		"\n"
		"Time a copy made of misaligned word accesses against the same copy made byte\n"
		"by byte on each CPU (the Linux RISC-V boot probe: 16 KiB buffer, dst offset 1,\n"
		"src 8 KiB + 2 further, 8064 bytes, minimum time of each loop) and classify it\n"
		"with riscv_hwprobe's values: unknown 0, emulated 1, slow 2 (word copy not\n"
		"faster), fast 3 (word copy faster), unsupported 4 (the access raises a signal).\n"
		"All CPUs are probed at once. The summary is hwprobe's rule: all CPUs equal\n"
		"gives that value, any difference gives unknown.\n"
		"Each CPU's vector unit(s) (sse2, avx2, avx512 on x86_64, neon, rvv) are timed\n"
		"the same way, and the cost of a word access that splits a cache line or a page.\n"
		"Without --system the answer comes from the system result file (written by\n"
		"'hwtune probe --system'), then the user cache, then a probe.\n"
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
		"  --no-cache        neither read the system result nor read or write the cache\n"
		"  --json            one JSON object on stdout (= --format=json; always one\n"
		"                    entry per CPU)\n"
		"  --per-cpu         one line per CPU (default: one line per group of CPUs\n"
		"                    that agree)\n"
		"  --format=FORMAT   text (default), json or prom (Prometheus text format,\n"
		"                    for node_exporter's textfile collector); one format\n"
		"                    per run: --json --format=prom is an error\n"
		"  --unaligned-scalar-speed=WORD\n"
		"                    skip probing and report WORD (slow, fast or unsupported)\n"
		"                    for every CPU, like the kernel's unaligned_scalar_speed=\n"
		"                    (the vector units and the split penalties are still probed)\n"
		"  --unaligned-vector-speed=WORD\n"
		"                    report WORD for every vector unit of every CPU without\n"
		"                    probing them, like the kernel's unaligned_vector_speed=;\n"
		"                    with both overrides nothing is probed\n"
		"  --system          probe every online CPU (whatever the affinity), fresh, and write\n"
		"                    the system result ($HWTUNE_RUNTIME_DIR, else /run/hwtune:\n"
		"                    normally needs root); excludes --cpus, the\n"
		"                    overrides and --no-cache\n"
		"  -h, --help        this text\n"
		"\n"
		"Options take --opt=value or --opt value and may be abbreviated while unambiguous;\n"
		"'--' ends the options.  Numbers are decimal (leading zeros too: 010 is ten).\n"
		"\n"
		"Environment:\n"
		"  HWTUNE_UNALIGNED_SCALAR_SPEED=WORD   same as --unaligned-scalar-speed (the flag\n"
		"                    wins; set but empty is an error, as any other bad word)\n"
		"  HWTUNE_UNALIGNED_VECTOR_SPEED=WORD   same as --unaligned-vector-speed (same rules)\n"
		"  HWTUNE_RUNTIME_DIR  folder of the system result file, read by every run and\n"
		"                    written by --system: absolute (a relative one exits 2;\n"
		"                    unset or empty: /run/hwtune)\n"
		"  XDG_CACHE_HOME    the cache lives in $XDG_CACHE_HOME/hwtune/ (else\n"
		"                    ~/.cache/hwtune/), keyed by boot id, kernel release, CPU\n"
		"                    model and library version; CPUs missing from it are probed\n"
		"                    and added. --serial, --budget-ms, --kernel-window and\n"
		"                    --smt=apart always measure (and then update the cache).\n"
		"\n"
		"Exit status: 0 done, 1 the probe failed, 2 bad usage.\n");
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
			      want->cpu[i], cli_value(arg), list);
		good = false;
	}
	hwt_cpus_free(&ok);
	return good;
}

int probe_parse(int argc, char **argv, struct cli_args *a)
{
	enum { O_SERIAL = 256, O_KWIN, O_NOCACHE, O_JSON, O_CPUS, O_BUDGET, O_SMT, O_SPEED,
	       O_PERCPU, O_FORMAT, O_VSPEED, O_SYSTEM };
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
		{ "unaligned-vector-speed", required_argument, NULL, O_VSPEED },
		{ "system", no_argument, NULL, O_SYSTEM },
		{ NULL, 0, NULL, 0 },
	};
	struct hwt_misaligned_opts *o = &a->probe;
	const char *cpus_arg = NULL, *speed_arg = NULL, *vspeed_arg = NULL, *v;
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
			if (!cli_json_flag("probe", a))
				return CLI_EXIT_USAGE;
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
					      "0-3,8)", cli_value(cpus_arg), why);
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
					      "apart)", cli_value(v));
				return CLI_EXIT_USAGE;
			}
			break;
		case O_SPEED:
			speed_arg = v;
			s = hwt_misaligned_parse_speed(speed_arg);
			if (s < 0) {
				cli_cmd_error("probe", "--unaligned-scalar-speed: invalid value '%s' "
					      "(expected slow, fast or unsupported)", cli_value(speed_arg));
				return CLI_EXIT_USAGE;
			}
			o->override_speed = s;
			break;
		case O_VSPEED:
			vspeed_arg = v;
			s = hwt_misaligned_parse_speed(vspeed_arg);
			if (s < 0) {
				cli_cmd_error("probe", "--unaligned-vector-speed: invalid value '%s' "
					      "(expected slow, fast or unsupported)", cli_value(vspeed_arg));
				return CLI_EXIT_USAGE;
			}
			o->vector_override_speed = s;
			break;
		case O_SYSTEM:
			a->system = true;
			break;
		case 1:
			cli_cmd_error("probe", "unexpected argument '%s' (probe takes options only; "
				      "try 'hwtune probe --help')", cli_value(v));
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
	if (!vspeed_arg) {
		s = probe_env_vector_override();
		if (s < 0)
			return CLI_EXIT_USAGE;
		o->vector_override_speed = s;
	}
	if (!probe_env_runtime_dir())
		return CLI_EXIT_USAGE;
	if (a->system) {
		const char *bad = a->have_cpus                       ? "--cpus"
				  : speed_arg                        ? "--unaligned-scalar-speed"
				  : vspeed_arg                       ? "--unaligned-vector-speed"
				  : o->override_speed                ? "HWTUNE_UNALIGNED_SCALAR_SPEED"
				  : o->vector_override_speed         ? "HWTUNE_UNALIGNED_VECTOR_SPEED"
				  : o->flags & HWT_MISALIGNED_NO_CACHE ? "--no-cache"
								       : NULL;

		if (bad) {
			cli_cmd_error("probe", "--system and %s exclude each other (--system measures "
				      "every online CPU fresh)", bad);
			return CLI_EXIT_USAGE;
		}
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

/* Where hwt_misaligned_system_write puts the file (for the message only). */
static void system_path(char *buf, size_t len, const struct hwt_misaligned_opts *o)
{
	const char *dir = o->runtime_dir ? o->runtime_dir : getenv("HWTUNE_RUNTIME_DIR");
	struct utsname u;

	if (!dir || dir[0] != '/')
		dir = HWT_MISALIGNED_RUNTIME_DIR;
	if (uname(&u))
		snprintf(u.machine, sizeof(u.machine), "<arch>");
	snprintf(buf, len, "%s/misaligned-%s.result", dir, u.machine);
}

/* --system refused (err): the online CPUs it could not run on (-EPERM) or
 * could not classify (-EAGAIN), named (frees r). */
static bool system_refused(struct hwt_misaligned_report *r, int err)
{
	struct hwt_cpus miss = HWT_CPUS_INIT;
	char list[256];

	for (unsigned i = 0; i < r->n; i++)
		if (r->cpu[i].status < 0 && hwt_cpus_add(&miss, r->cpu[i].cpu) < 0)
			break;
	if (miss.n) {
		if (hwt_cpus_format(&miss, list, sizeof(list)) >= (int)sizeof(list))
			snprintf(list + sizeof(list) - 4, 4, "...");
		if (err == -EAGAIN)
			cli_cmd_error("probe", "--system: no verdict on CPU%s %s after %d probes (each "
				      "preempted or starved until its budget ran out): the system result "
				      "must cover every online CPU; nothing written (run it again, or "
				      "with a larger --budget-ms)", miss.n == 1 ? "" : "s", list,
				      HWT_MISALIGNED_SYSTEM_TRIES);
		else
			cli_cmd_error("probe", "--system: cannot run on CPU%s %s (cpuset or offline): "
				      "the system result must cover every online CPU; nothing written",
				      miss.n == 1 ? "" : "s", list);
		hwt_misaligned_report_free(r);
	}
	hwt_cpus_free(&miss);
	return r->n == 0;
}

int probe_run(struct cli_args *a)
{
	struct hwt_misaligned_report r;
	char path[4096];
	int ret, wret = 0;

	if (a->system) {
		a->probe.root = probe_root();
		ret = hwt_misaligned_system_probe(&a->probe, &r);
		if (ret < 0 && r.n && system_refused(&r, ret))
			return 1;
		if (ret < 0 && r.n) { /* measured, only the write failed */
			wret = ret;
			ret = 0;
		}
	} else {
		ret = probe_self(&a->probe, a->have_cpus ? &a->cpus : NULL, &r);
	}
	if (ret < 0) {
		cli_error("probe: %s", strerror(-ret));
		return 1;
	}
	if (a->json) {
		probe_json_document(stdout, &r);
	} else if (a->prom) {
		struct report_machine m;

		report_machine_read(&m);
		report_prom(stdout, &(struct report_prom){ .m = &m, .probe = &r });
	} else {
		probe_print_human(stdout, &r, a->per_cpu);
	}
	hwt_misaligned_report_free(&r);
	if (wret) {
		system_path(path, sizeof(path), &a->probe);
		cli_cmd_error("probe", "--system: cannot write %s: %s", path, strerror(-wret));
		return 1;
	}
	return 0;
}
