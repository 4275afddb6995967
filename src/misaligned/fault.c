/* SPDX-License-Identifier: MIT */
/*
 * Does a misaligned word access work on this CPU, and does the kernel have
 * to emulate it?
 *
 * The access runs in the calling (pinned) thread under sigsetjmp, with
 * SIGBUS/SIGSEGV/SIGILL handlers installed for the duration of a probe.  A
 * forked child would isolate it better but costs ~0.4 ms per CPU here (fork
 * + exit + reap on a KVM guest), more than the whole measurement.  Signals
 * that arrive while no check is armed in the receiving thread are handed to
 * the handlers that were there before, so the host program's own fault
 * handling keeps working during a probe.
 *
 * The perf counter is opened only when asked: the first per-thread perf
 * event in a while flips a kernel static key, which cost ~11 ms here.
 */
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "common/time.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int guarded[] = { SIGBUS, SIGSEGV, SIGILL };
#define NGUARDED (sizeof(guarded) / sizeof(guarded[0]))

static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned guard_users;                   /* under guard_lock */
static struct sigaction guard_prev[NGUARDED];  /* written before install, then read-only */

static _Thread_local sigjmp_buf check_jmp;
static _Thread_local volatile sig_atomic_t check_armed;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	unsigned i;

	/* Only a fault of this thread's own access ends a check: the kernel's
	 * (si_code > 0) or the test hooks' raise() (SI_TKILL from this process).
	 * A signal sent by someone else may land anywhere in the guarded
	 * region, even inside malloc: it goes to the previous handler. */
	if (check_armed && (si->si_code > 0 || (si->si_code == SI_TKILL && si->si_pid == getpid()))) {
		check_armed = 0;
		siglongjmp(check_jmp, sig);
	}
	for (i = 0; i < NGUARDED && guarded[i] != sig; i++)
		;
	if (i == NGUARDED)
		return;
	/* A sent signal the host ignores: ignore it here too, without putting
	 * SIG_IGN back process-wide under other threads' armed checks. */
	if (si->si_code <= 0 && !(guard_prev[i].sa_flags & SA_SIGINFO) &&
	    guard_prev[i].sa_handler == SIG_IGN)
		return;
	if (guard_prev[i].sa_flags & SA_SIGINFO) {
		guard_prev[i].sa_sigaction(sig, si, uc);
	} else if (guard_prev[i].sa_handler != SIG_DFL && guard_prev[i].sa_handler != SIG_IGN) {
		guard_prev[i].sa_handler(sig);
	} else {
		/* Not ours and no one else's: put the old action back; a fault
		 * then repeats and takes it, a sent signal is sent again. */
		sigaction(sig, &guard_prev[i], NULL);
		if (si->si_code <= 0)
			raise(sig);
	}
}

int hwt__fault_guard_enter(void)
{
	struct sigaction sa;
	int r = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&guard_lock);
	if (guard_users == 0) {
		for (unsigned i = 0; i < NGUARDED && !r; i++)
			if (sigaction(guarded[i], NULL, &guard_prev[i]))
				r = -errno;
		for (unsigned i = 0; i < NGUARDED && !r; i++)
			if (sigaction(guarded[i], &sa, NULL))
				r = -errno;
	}
	if (!r)
		guard_users++;
	pthread_mutex_unlock(&guard_lock);
	return r;
}

void hwt__fault_guard_leave(void)
{
	pthread_mutex_lock(&guard_lock);
	if (guard_users && --guard_users == 0) {
		for (unsigned i = 0; i < NGUARDED; i++) {
			struct sigaction now;

			/* Someone replaced ours meanwhile: theirs stays. */
			if (!sigaction(guarded[i], NULL, &now) && (now.sa_flags & SA_SIGINFO) &&
			    now.sa_sigaction == on_fault)
				sigaction(guarded[i], &guard_prev[i], NULL);
		}
	}
	pthread_mutex_unlock(&guard_lock);
}

static int open_align_counter(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_ALIGNMENT_FAULTS;
	a.disabled = 1;
	a.exclude_kernel = 1; /* permitted at perf_event_paranoid 2 */
	a.exclude_hv = 1;
	return (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, 0); /* this thread */
}

int hwt__fault_check(bool force_sigbus, bool count_faults, struct hwt__fault_result *res)
{
	_Alignas(64) unsigned char buf[256];
	sigset_t mask;
	volatile int fd = -1;
	int got;
	uint64_t n, t0 = 0;

	res->sig = 0;
	res->faults = -1;
	res->iter_ns = 0;
	pthread_mutex_lock(&guard_lock);
	got = guard_users > 0;
	pthread_mutex_unlock(&guard_lock);
	if (!got)
		return -EAGAIN; /* no guard: a fault would kill the process */
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)i;
	/* A blocked fault signal would kill the process instead of reaching us. */
	sigemptyset(&mask);
	for (unsigned i = 0; i < NGUARDED; i++)
		sigaddset(&mask, guarded[i]);
	pthread_sigmask(SIG_UNBLOCK, &mask, NULL);

	if (count_faults) {
		fd = open_align_counter();
		if (fd >= 0) {
			ioctl(fd, PERF_EVENT_IOC_RESET, 0);
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		}
	}
	got = sigsetjmp(check_jmp, 1);
	if (got == 0) {
		check_armed = 1;
		if (force_sigbus)
			raise(SIGBUS); /* the test hook: same path as a real fault */
		/* 8 misaligned word loads, then 8 misaligned word stores; the
		 * second round is timed, with lines and TLB warm */
		hwt__copy_words_unaligned(buf + 128 + 1, buf + 3, 8 * HWT_WORD_BYTES);
		t0 = hwt__now_ns();
		hwt__copy_words_unaligned(buf + 128 + 1, buf + 3, 8 * HWT_WORD_BYTES);
		res->iter_ns = hwt__now_ns() - t0;
		check_armed = 0;
	} else {
		res->sig = got;
	}
	if (fd >= 0) {
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
			res->faults = (int64_t)(n > INT64_MAX ? INT64_MAX : n);
		close(fd);
	}
	return 0;
}

int hwt__guarded_call(void (*fn)(void *), void *arg, int force_sig, int *sig)
{
	sigset_t mask;
	int got;

	*sig = 0;
	pthread_mutex_lock(&guard_lock);
	got = guard_users > 0;
	pthread_mutex_unlock(&guard_lock);
	if (!got)
		return -EAGAIN;
	sigemptyset(&mask);
	for (unsigned i = 0; i < NGUARDED; i++)
		sigaddset(&mask, guarded[i]);
	pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	got = sigsetjmp(check_jmp, 1);
	if (got == 0) {
		check_armed = 1;
		if (force_sig)
			raise(force_sig); /* the test hook: same path as a real fault */
		fn(arg);
		check_armed = 0;
	} else {
		*sig = got;
	}
	return 0;
}
