/* SPDX-License-Identifier: MIT */
/*
 * rmwcount: how many locked read-modify-write instructions one call of the
 * queue executes, counted instruction by instruction (x86_64 only).
 *
 * A forked child sets up a software SMMU and a queue, warms up, and stops
 * itself before each measured call; the parent single-steps only the
 * calling thread (ptrace), decodes every instruction it executes until the
 * call returns, and counts those that lock the bus: any instruction with a
 * LOCK prefix, and XCHG with a memory operand (locked implicitly).  The
 * device thread runs freely meanwhile.  Prints each path's count and the
 * addresses of its locked instructions (make rmw-count turns them into
 * function names with addr2line).
 *
 * Where the library has per-CPU queues (HWT_CMDQ_QUEUES_PER_CPU), the
 * per-CPU rows measure a queue created with .queues =
 * HWT_CMDQ_QUEUES_PER_CPU and print the insert path it reports (rseq or
 * shared).  A restartable sequence cannot be single-stepped as it is: each
 * stop is a preemption, and the kernel would restart the critical section
 * at its abort handler on every step, for ever.  So at each stop the
 * parent clears the thread's rseq_cs (glibc's rseq area, __rseq_offset
 * from the thread pointer) when it is set: the kernel then finds no
 * critical section to abort, and the section runs on, stepped instruction
 * by instruction and counted like any other code.  Safe here: the child
 * has one producer thread, so nothing else inserts into the queue of the
 * CPU it started on, even if it migrates mid-section.  The rows say how
 * many times a critical section was entered.
 *
 *   rmwcount [--reps N]     each path measured N times (default 3); the
 *                           minimum and maximum are printed
 */
#include <hwtune/hwtune.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog/cli.h"

#if defined(__x86_64__)

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <stddef.h>
#include <sys/rseq.h>
#define HAVE_RSEQ_AREA 1
#endif
#endif

#define MAX_SITES 32
/* A measured call steps a few thousand instructions: far more is a call
 * that never returns (a critical section restarted on every step). */
#define MAX_STEPS 1000000u

enum path {
	P_SYNC_MSI,
	P_SYNC_SEV,
	P_FLOW_1,
	P_FLOW_32,
	P_BATCH_32_SYNC,
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	P_PCPU_FLOW_1,
	P_PCPU_FLOW_32,
	P_PCPU_SYNC_MSI,
#endif
	P_N
};

static const char *const path_name[P_N] = {
	"CMD_SYNC, empty queue, MSI polling",
	"CMD_SYNC, empty queue, CONS polling",
	"1 command, no sync",
	"32 commands, no sync",
	"32 commands + CMD_SYNC, MSI polling",
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	"per-CPU 1 command, no sync",
	"per-CPU 32 commands, no sync",
	"per-CPU CMD_SYNC, empty queue, MSI polling",
#endif
};

/* The queues of the child: shared MSI, shared CONS polling, per-CPU MSI. */
enum { Q_MSI, Q_SEV, Q_PCPU, Q_N };

static int queue_of(enum path p)
{
	switch (p) {
	case P_SYNC_SEV:
		return Q_SEV;
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	case P_PCPU_FLOW_1:
	case P_PCPU_FLOW_32:
	case P_PCPU_SYNC_MSI:
		return Q_PCPU;
#endif
	default:
		return Q_MSI;
	}
}

/* The measured call returns here: the parent stops stepping at its address. */
__attribute__((noinline, used)) void rmw_region_end(void);
__attribute__((noinline, used)) void rmw_region_end(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static struct hwt_cmdq_cmd cmds[32];

#ifdef HWT_CMDQ_QUEUES_PER_CPU
/* The info's insert path and reason as words, whether the header carries
 * them as text (an array or a pointer) or as a code. */
static const char *rmw_text(const char *s)
{
	return s ? s : "";
}

static const char *rmw_code(long v)
{
	static char buf[24];

	snprintf(buf, sizeof(buf), "path %ld", v);
	return buf;
}

#define RMW_WORDS(x) _Generic((x), char *: rmw_text, const char *: rmw_text, default: rmw_code)(x)
#endif

/* Where the executable is loaded: addresses are printed relative to it, as
 * addr2line reads them for a position-independent executable. */
extern char __executable_start;

static int setup(struct hwt_smmu_dev **dev, struct hwt_cmdq **q, bool cons_polling, bool percpu)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	int err;

	hwt_smmu_dev_config_default(&dc);
	/* awake through a single-stepped call (milliseconds), as when streaming:
	 * a sleeping device costs the caller a wake-up, counted apart */
	dc.spin_ns = HWT_SMMU_DEV_NS_MAX;
	err = hwt_smmu_dev_create(dev, &dc);
	if (err)
		return err;
	hwt_cmdq_options_default(&o);
	o.disable_msipolling = cons_polling;
	o.entries_log2 = 8;
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	if (percpu)
		o.queues = HWT_CMDQ_QUEUES_PER_CPU;
#else
	if (percpu)
		return -EOPNOTSUPP;
#endif
	err = hwt_cmdq_create(q, *dev, &o);
	if (!err)
		err = hwt_smmu_dev_start(*dev);
	return err;
}

static int run_path(struct hwt_cmdq *q, enum path p)
{
	switch (p) {
	case P_SYNC_MSI:
	case P_SYNC_SEV:
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	case P_PCPU_SYNC_MSI:
#endif
		return hwt_cmdq_sync(q);
	case P_FLOW_1:
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	case P_PCPU_FLOW_1:
#endif
		return hwt_cmdq_issue(q, cmds, 1, false);
	case P_FLOW_32:
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	case P_PCPU_FLOW_32:
#endif
		return hwt_cmdq_issue(q, cmds, 32, false);
	case P_BATCH_32_SYNC:
		return hwt_cmdq_issue(q, cmds, 32, true);
	default:
		return -EINVAL;
	}
}

/* The per-CPU queue's insert path, on stdout before the counts (NULL: none). */
static void describe(struct hwt_cmdq *q)
{
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	struct hwt_cmdq_info info;

	if (!q)
		return;
	hwt_cmdq_get_info(q, &info);
	printf("per-CPU queue: %u queues, insert path %s (%s)\n", (unsigned)info.queues,
	       RMW_WORDS(info.insert_path), RMW_WORDS(info.insert_path_reason));
	fflush(stdout);
#else
	(void)q;
#endif
}

/* The child: every measured call is preceded by a SIGTRAP stop. */
static _Noreturn void child(unsigned reps)
{
	struct hwt_smmu_dev *dev[Q_N] = { NULL };
	struct hwt_cmdq *q[Q_N] = { NULL };
	bool percpu = false;

	for (unsigned i = 0; i < 32; i++) {
		cmds[i].dw[0] = HWT_SMMU_OP_TLBI_NH_VA;
		cmds[i].dw[1] = 0;
		hwt_smmu_put(cmds[i].dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_ADDR, (uint64_t)i << 12);
	}
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	percpu = true;
#endif
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || setup(&dev[Q_MSI], &q[Q_MSI], false, false) ||
	    setup(&dev[Q_SEV], &q[Q_SEV], true, false) ||
	    (percpu && setup(&dev[Q_PCPU], &q[Q_PCPU], false, true)))
		_exit(3);
	describe(q[Q_PCPU]);
	for (int p = 0; p < P_N; p++) {
		struct hwt_cmdq *qq = q[queue_of((enum path)p)];

		for (unsigned r = 0; r < reps; r++) {
			/* warm: the same call, and an empty queue again */
			if (run_path(qq, (enum path)p) || hwt_cmdq_sync(qq))
				_exit(4);
			raise(SIGTRAP);
			if (run_path(qq, (enum path)p))
				_exit(4);
			rmw_region_end();
			if (hwt_cmdq_sync(qq))
				_exit(4);
		}
	}
	for (int i = 0; i < Q_N; i++) {
		hwt_cmdq_destroy(q[i]);
		hwt_smmu_dev_destroy(dev[i]);
	}
	_exit(0);
}

/* Does the instruction at the start of b lock the bus? */
static bool locked(const uint8_t *b)
{
	bool lock = false;
	unsigned i = 0;

	for (;; i++) { /* legacy prefixes */
		uint8_t c = b[i];

		if (c == 0xf0)
			lock = true;
		else if (c != 0xf2 && c != 0xf3 && c != 0x2e && c != 0x36 && c != 0x3e &&
			 c != 0x26 && c != 0x64 && c != 0x65 && c != 0x66 && c != 0x67)
			break;
	}
	if ((b[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (lock)
		return true;
	/* XCHG r/m, r (86, 87) with a memory operand: locked implicitly */
	return (b[i] == 0x86 || b[i] == 0x87) && (b[i + 1] >> 6) != 3;
}

struct count {
	unsigned n, sites;
	uint64_t site[MAX_SITES];
	uint64_t steps;
	unsigned rseq_cs; /* critical sections entered (rseq_cs found set and cleared) */
};

/* Where the stopped thread's rseq_cs is (its rseq area: the thread pointer +
 * glibc's __rseq_offset, the same in the forked child), or 0 if rseq is not
 * registered. */
static uint64_t rseq_cs_at(const struct user_regs_struct *regs)
{
#ifdef HAVE_RSEQ_AREA
	if (__rseq_size)
		return regs->fs_base + (uint64_t)__rseq_offset + offsetof(struct rseq, rseq_cs);
#else
	(void)regs;
#endif
	return 0;
}

static int step_one_call(pid_t pid, struct count *c)
{
	const uint64_t end = (uint64_t)(uintptr_t)rmw_region_end;
	uint64_t cs;
	int st;

	memset(c, 0, sizeof(*c));
	for (;;) {
		struct user_regs_struct regs;
		union {
			long w[2];
			uint8_t b[16];
		} insn;

		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
			return -errno;
		if (regs.rip == end)
			return 0;
		cs = rseq_cs_at(&regs);
		errno = 0;
		insn.w[0] = ptrace(PTRACE_PEEKTEXT, pid, (void *)regs.rip, NULL);
		insn.w[1] = ptrace(PTRACE_PEEKTEXT, pid, (void *)(regs.rip + 8), NULL);
		if (errno)
			return -errno;
		if (locked(insn.b)) {
			if (c->sites < MAX_SITES)
				c->site[c->sites++] = regs.rip;
			c->n++;
		}
		/* a critical section entered: no restart on the coming stops */
		if (cs) {
			long v = ptrace(PTRACE_PEEKDATA, pid, (void *)cs, NULL);

			if (errno)
				return -errno;
			if (v) {
				if (ptrace(PTRACE_POKEDATA, pid, (void *)cs, NULL))
					return -errno;
				c->rseq_cs++;
			}
		}
		if (++c->steps > MAX_STEPS)
			return -ELOOP;
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
			return -errno;
		if (waitpid(pid, &st, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ECHILD;
	}
}

static int parent(pid_t pid, unsigned reps)
{
	int st;

	for (int p = 0; p < P_N; p++) {
		unsigned lo = ~0u, hi = 0;
		struct count c, keep = { 0 };

		for (unsigned r = 0; r < reps; r++) {
			int err;

			if (waitpid(pid, &st, __WALL) < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
				fprintf(stderr, "rmwcount: child did not stop as expected (status 0x%x)\n",
					st);
				return 1;
			}
			err = step_one_call(pid, &c);
			if (err == -ELOOP) {
				fprintf(stderr, "rmwcount: %s: the call did not return within %u instructions\n",
					path_name[p], MAX_STEPS);
				kill(pid, SIGKILL);
				return 1;
			}
			if (err) {
				fprintf(stderr, "rmwcount: ptrace: %s\n", strerror(-err));
				return 1;
			}
			if (c.n < lo)
				lo = c.n;
			if (c.n >= hi) {
				hi = c.n;
				keep = c;
			}
			if (ptrace(PTRACE_CONT, pid, NULL, NULL))
				return 1;
		}
		printf("%-42s locked RMWs: min %u, max %u (%llu instructions", path_name[p], lo, hi,
		       (unsigned long long)keep.steps);
		if (keep.rseq_cs)
			printf(", %u rseq critical section entries", keep.rseq_cs);
		printf(")\n");
		printf("  at:");
		for (unsigned i = 0; i < keep.sites; i++)
			printf(" 0x%llx",
			       (unsigned long long)(keep.site[i] - (uintptr_t)&__executable_start));
		printf("\n");
	}
	if (waitpid(pid, &st, __WALL) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "rmwcount: child failed (status 0x%x)\n", st);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned reps = 3;
	pid_t pid;

	cli_prog = "rmwcount";
	for (int i = 1; i < argc; i++) {
		const char *val = NULL;
		bool err = false;
		uint64_t v;

		if (cli_opt_value(argc, argv, &i, "--reps", &val, &err)) {
			if (err || !cli_parse_u64("--reps", val, 1, 100, &v))
				return CLI_EXIT_USAGE;
			reps = (unsigned)v;
		} else {
			cli_error("unknown argument '%s' (usage: rmwcount [--reps N])", argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child(reps);
	return parent(pid, reps);
}

#else

int main(void)
{
	fprintf(stderr, "rmwcount: counts only on x86_64; see `make rmw-list` for a listing\n");
	return 0;
}

#endif
