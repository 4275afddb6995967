/* SPDX-License-Identifier: MIT */
/* Diagnostics and option values, for every program here (hwtune, benches). */
#ifndef HWT_PROG_CLI_H
#define HWT_PROG_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

/* Exit status for bad usage. */
#define CLI_EXIT_USAGE 2

/* The prefix of every message ("hwtune"); main() may set it first. */
extern const char *cli_prog;

/*
 * A value as messages echo it: s itself when at most CLI_VALUE_MAX bytes,
 * else its first CLI_VALUE_MAX bytes (never half a UTF-8 character) and
 * "...(N bytes)".  Every message that quotes a user's word passes it
 * through here.  The answer lives in one of 4 static buffers used in turn
 * (so one message may cut up to 4 values); not thread-safe.
 */
#define CLI_VALUE_MAX 64
const char *cli_value(const char *s);

/* Print "<prog>: <msg>\n" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "<prog> <cmd>: <msg>\n" ("<prog>: <msg>" when cmd is NULL). */
void cli_cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The checks of cli_parse_dec without its message: NULL and *out set, or
 * why s is refused ("empty", "not a decimal number", "too small", "too
 * large"; *out untouched), for options that take a word as well.
 */
const char *cli_dec(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/*
 * Parse an unsigned decimal value of option `opt` within [min, max]: digits
 * only (no sign, blank or 0x; leading zeros are decimal, "010" is ten).  On
 * failure print "<prog>[ <cmd>]: <opt>: invalid value '<s>' (<why>, expected
 * a decimal number in min..max)" and return false.  cli_parse_u64 is
 * cli_parse_dec with no command.
 */
bool cli_parse_dec(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
		   uint64_t *out);
bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* If arg is "--name=value" or "--name" followed by a value, store the value,
 * advance *i as needed and return true; a missing value is a usage error
 * reported through *err.  (Benches; hwtune itself uses cli_getopt.) */
bool cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value, bool *err);
/* The same for programs that exit on bad usage: the value, NULL if argv[*i]
 * is not this option; a missing value exits with CLI_EXIT_USAGE. */
const char *cli_opt(int argc, char **argv, int *i, const char *name);
/* An unsigned value of option opt within [min, max], or exit with
 * CLI_EXIT_USAGE (after cli_parse_u64's message). */
unsigned cli_arg_u(const char *opt, const char *s, unsigned min, unsigned max);

/*
 * getopt_long with hwtune's conventions and messages.  Options are
 * "--name=value", "--name value", unambiguous abbreviations of the name, the
 * short options of shortopts (no leading '+', '-' or ':'), and "--" ends
 * the options.  Arguments are read in order and argv is never permuted.
 *
 *   struct cli_getopt g;
 *   cli_getopt_begin(&g, "probe", argc, argv, "h", longopts);
 *   while ((c = cli_getopt_next(&g)) != -1) switch (c) { ... }
 *
 * cli_getopt_next returns an option's val (g.arg: its value, or NULL), 1
 * for an argument that is not an option (g.arg: it; every argument after
 * "--" is one), -1 at the end, or '?' after reporting the error: "<prog>
 * <cmd>: unknown option '--x' (try '<prog> <cmd> --help')", "... option
 * '--budget-ms' needs a value", "... option '--json' takes no value",
 * "... option '--s' is ambiguous: --serial, --smt".  g.name is the
 * option's name as the user wrote it ("--budget-ms", "-h").  Each long
 * option needs its own val.  cli_getopt_begin resets getopt's state
 * (optind = 0 and opterr = 0), so parsing may be repeated.
 */
struct cli_getopt {
	const char *cmd;      /* for messages: "probe", or NULL for the main job */
	int argc;
	char **argv;
	const char *shortopts; /* as given */
	const struct option *longopts;
	char optstring[64];   /* "-:" + shortopts */
	bool rest;            /* after "--": every argument is an operand */
	int next;             /* the next operand after "--" */
	const char *arg;
	char name[CLI_VALUE_MAX + 32];
};
void cli_getopt_begin(struct cli_getopt *g, const char *cmd, int argc, char **argv,
		      const char *shortopts, const struct option *longopts);
int cli_getopt_next(struct cli_getopt *g);

#endif
