/* SPDX-License-Identifier: MIT */
/* Diagnostics and option values, for every program here (hwtune, benches). */
#ifndef HWT_UTIL_CLI_H
#define HWT_UTIL_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit status for bad usage. */
#define CLI_EXIT_USAGE 2

/* The prefix of every message ("hwtune"); main() may set it first. */
extern const char *cli_prog;

/* Print "<prog>: <msg>\n" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Parse an unsigned decimal (or 0x hex) value of option `opt` within
 * [min, max]; on failure print "<prog>: <opt>: invalid value '<s>' (expected
 * min..max)" and return false.
 */
bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* If arg is "--name=value" or "--name" followed by a value, store the value,
 * advance *i as needed and return true; a missing value is a usage error
 * reported through *err. */
bool cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value, bool *err);
/* The same for programs that exit on bad usage: the value, NULL if argv[*i]
 * is not this option; a missing value exits with CLI_EXIT_USAGE. */
const char *cli_opt(int argc, char **argv, int *i, const char *name);
/* An unsigned value of option opt within [min, max], or exit with
 * CLI_EXIT_USAGE (after cli_parse_u64's message). */
unsigned cli_arg_u(const char *opt, const char *s, unsigned min, unsigned max);

#endif
