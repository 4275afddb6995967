/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the system result file's tests (tests/unit/misaligned_system.c).
 *
 *   sf_tmpdir()          a new folder under /tmp (up to 4 live at once)
 *   sf_rm_tree(d)        rm -rf d
 *   sf_need_root()       skip unless root (only a root-owned file is trusted)
 *   sf_report(r, set, s) a report of set's CPUs, each with speed s and
 *                        vector results the files keep (synthetic verdicts)
 *   sf_cpus(set, list)   set from a CPU list
 *   sf_path_in(buf, len, dir)  the system file's path in dir
 */
#ifndef HWT_TEST_SYSFILE_H
#define HWT_TEST_SYSFILE_H

#include <hwtune/hwtune.h>

#include <stddef.h>

char *sf_tmpdir(void);
void sf_rm_tree(const char *d);
void sf_need_root(void);
void sf_report(struct hwt_misaligned_report *r, const struct hwt_cpus *set, int s);
void sf_cpus(struct hwt_cpus *set, const char *list);
/* This machine's online CPUs (a system file must cover them all), and with
 * past > 0 also the CPU past CPUs after the highest of them (offline). */
void sf_online(struct hwt_cpus *set, unsigned past);
void sf_path_in(char *buf, size_t len, const char *dir);

#endif
