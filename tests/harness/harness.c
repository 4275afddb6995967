/* SPDX-License-Identifier: MIT */
/* The test harness: registration, fork per test, timeout, TAP output. */
#include "harness.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 256
#define REASON_MAX 512

struct test {
	const char *name;
	hwt_test_fn fn;
	unsigned timeout_s;
};

static struct test tests[MAX_TESTS];
static unsigned ntests;
static char *reason; /* MAP_SHARED page: the child's failure or skip text */
static int verbose;
static volatile pid_t running_child; /* the test in progress, for on_signal() */
const char *hwt_test_argv0;

/* LeakSanitizer's check, linked in only by -fsanitize=address (else NULL).
 * A test child leaves with _exit(), which skips the check LSan makes at
 * exit, so the child asks for it when its test body has returned. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* Killed from outside (timeout(1), ^C): take the running test with us. */
static void on_signal(int sig)
{
	if (running_child > 0)
		kill(-running_child, SIGKILL);
	_exit(128 + sig);
}

void hwt_test_register(const char *name, hwt_test_fn fn, unsigned timeout_s)
{
	if (ntests == MAX_TESTS) {
		fprintf(stderr, "harness: more than %d tests\n", MAX_TESTS);
		exit(1);
	}
	tests[ntests++] = (struct test){ name, fn, timeout_s };
}

double hwt_test_scale(void)
{
	const char *s = getenv("HWT_TEST_TIMEOUT_SCALE");
	double v = s ? strtod(s, NULL) : 1.0;

	return v >= 1.0 ? v : 1.0;
}

void hwt_test_backoff(unsigned *n, unsigned spins, unsigned yields)
{
	if (++*n < spins)
		return;
	if (*n < spins + yields) {
		sched_yield();
		return;
	}
	nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
}

int hwt_test_pin(pthread_t th, int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(th, sizeof(set), &set);
}

static void set_reason(const char *fmt, va_list ap)
{
	vsnprintf(reason, REASON_MAX, fmt, ap);
}

void hwt_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(reason, REASON_MAX, "%s:%d: ", file, line);

	va_start(ap, fmt);
	if (n > 0 && n < REASON_MAX)
		vsnprintf(reason + n, REASON_MAX - n, fmt, ap);
	va_end(ap);
	fflush(stdout);
	_exit(1);
}

void hwt_test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(fmt, ap);
	va_end(ap);
	fflush(stdout);
	_exit(77);
}

void hwt_test_log(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Returns 0 pass, 1 fail, 77 skip; the text for the TAP line is in reason. */
static int run_one(const struct test *t)
{
	double limit = t->timeout_s * hwt_test_scale();
	double start = now_s();
	int status;
	pid_t pid;

	reason[0] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		snprintf(reason, REASON_MAX, "fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		t->fn();
		fflush(stdout);
		if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
			snprintf(reason, REASON_MAX, "LeakSanitizer: memory leaked (its report is above)");
			_exit(1);
		}
		_exit(0);
	}
	setpgid(pid, pid);
	running_child = pid;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			snprintf(reason, REASON_MAX, "waitpid: %s", strerror(errno));
			return 1;
		}
		if (now_s() - start > limit) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			running_child = 0;
			snprintf(reason, REASON_MAX, "timeout after %.0f s", limit);
			return 1;
		}
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	running_child = 0;
	if (WIFSIGNALED(status)) {
		snprintf(reason, REASON_MAX, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		return 1;
	}
	if (WEXITSTATUS(status) == 77)
		return 77;
	return WEXITSTATUS(status) ? 1 : 0;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-l] [-v] [-t NAME]...\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only[MAX_TESTS];
	unsigned nonly = 0, failed = 0, n = 0, i, j;
	int list = 0, opt;

	hwt_test_argv0 = argv[0];
	while ((opt = getopt(argc, argv, "lvt:")) != -1) {
		switch (opt) {
		case 'l': list = 1; break;
		case 'v': verbose = 1; break;
		case 't':
			if (nonly < MAX_TESTS)
				only[nonly++] = optarg;
			break;
		default: usage(argv[0]);
		}
	}
	if (list) {
		for (i = 0; i < ntests; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	for (j = 0; j < nonly; j++) {
		for (i = 0; i < ntests && strcmp(tests[i].name, only[j]); i++)
			;
		if (i == ntests) {
			fprintf(stderr, "%s: no test named '%s'\n", argv[0], only[j]);
			return 2;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	reason = mmap(NULL, REASON_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (reason == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("1..%u\n", nonly ? nonly : ntests);
	for (i = 0; i < ntests; i++) {
		const struct test *t = &tests[i];
		double t0;
		int r;

		if (nonly) {
			for (j = 0; j < nonly && strcmp(t->name, only[j]); j++)
				;
			if (j == nonly)
				continue;
		}
		t0 = now_s();
		r = run_one(t);
		n++;
		if (r == 0)
			printf("ok %u - %s", n, t->name);
		else if (r == 77)
			printf("ok %u - %s # SKIP %s", n, t->name, reason);
		else {
			printf("not ok %u - %s", n, t->name);
			failed++;
		}
		if (verbose)
			printf(" (%.3f s)", now_s() - t0);
		printf("\n");
		if (r == 1 && reason[0])
			printf("# %s\n", reason);
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
