/* SPDX-License-Identifier: MIT */
/* Shared helpers of the hwtune command-line tool. */
#ifndef HWT_CLI_H
#define HWT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit status for bad usage. */
#define CLI_EXIT_USAGE 2

/* Subcommands: argv[0] is the subcommand name; return the exit status. */
int cmd_probe(int argc, char **argv);
int cmd_cmdq(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_main(int argc, char **argv);
/* hwtune cmdq, also copying its recommendation to reco (NULL: none). */
int cmdq_run(int argc, char **argv, char *reco, size_t len);

/* Print "hwtune: <msg>" to stderr (no trailing newline needed). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Parse an unsigned decimal (or 0x hex) value of option `opt` within
 * [min, max]; on failure print "hwtune: <opt>: invalid value '<s>' (expected
 * min..max)" and return false.
 */
bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* If arg is "--name=value" or "--name" followed by a value, store the value,
 * advance *i as needed and return true; a missing value is a usage error
 * reported through *err. */
bool cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value, bool *err);

#endif
