/* SPDX-License-Identifier: MIT */
#include "prog/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_prog = "hwtune";

const char *cli_value(const char *s)
{
	static char buf[4][CLI_VALUE_MAX + 32];
	static unsigned next;
	size_t len = strlen(s), n = CLI_VALUE_MAX;
	char *b;

	if (len <= CLI_VALUE_MAX)
		return s;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) /* s[n] continues a character */
		n--;
	b = buf[next++ % 4];
	snprintf(b, sizeof(buf[0]), "%.*s...(%zu bytes)", (int)n, s, len);
	return b;
}

static void verror(const char *cmd, const char *fmt, va_list ap)
{
	if (cmd)
		fprintf(stderr, "%s %s: ", cli_prog, cmd);
	else
		fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(NULL, fmt, ap);
	va_end(ap);
}

void cli_cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(cmd, fmt, ap);
	va_end(ap);
}

const char *cli_dec(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	/* Digits only: strtoull would skip blanks, take a sign and read 0x. */
	if (!*s)
		return "empty";
	for (const char *p = s; *p; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (*p < '0' || *p > '9')
			return "not a decimal number";
		if (v > (UINT64_MAX - d) / 10)
			return "too large";
		v = v * 10 + d;
	}
	if (v < min)
		return "too small";
	if (v > max)
		return "too large";
	*out = v;
	return NULL;
}

bool cli_parse_dec(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	const char *why = cli_dec(s, min, max, out);

	if (why) {
		cli_cmd_error(cmd, "%s: invalid value '%s' (%s; expected a decimal number in %llu..%llu)",
			      opt, cli_value(s), why, (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	return true;
}

bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return cli_parse_dec(NULL, opt, s, min, max, out);
}

bool cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value, bool *err)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return false;
	if (a[n] == '=') {
		*value = a + n + 1;
		return true;
	}
	if (a[n] != '\0')
		return false;
	if (*i + 1 >= argc) {
		cli_error("%s needs a value", name);
		*err = true;
		return true;
	}
	*value = argv[++*i];
	return true;
}

const char *cli_opt(int argc, char **argv, int *i, const char *name)
{
	const char *v = NULL;
	bool err = false;

	if (!cli_opt_value(argc, argv, i, name, &v, &err))
		return NULL;
	if (err)
		exit(CLI_EXIT_USAGE);
	return v;
}

unsigned cli_arg_u(const char *opt, const char *s, unsigned min, unsigned max)
{
	uint64_t v;

	if (!cli_parse_u64(opt, s, min, max, &v))
		exit(CLI_EXIT_USAGE);
	return (unsigned)v;
}

/* --- getopt_long ------------------------------------------------------------ */

void cli_getopt_begin(struct cli_getopt *g, const char *cmd, int argc, char **argv,
		      const char *shortopts, const struct option *longopts)
{
	memset(g, 0, sizeof(*g));
	g->cmd = cmd;
	g->argc = argc;
	g->argv = argv;
	g->shortopts = shortopts;
	g->longopts = longopts;
	/* '-': operands come back in order as 1 (argv is never permuted);
	 * ':': a missing value is ':', not '?' */
	snprintf(g->optstring, sizeof(g->optstring), "-:%s", shortopts);
	optind = 0; /* glibc: 0 re-initializes everything, 1 does not */
	opterr = 0; /* our messages, not getopt's */
}

static const struct option *by_val(const struct cli_getopt *g, int val)
{
	for (const struct option *o = g->longopts; o->name; o++)
		if (o->val == val)
			return o;
	return NULL;
}

/* "--name" of a long option element (up to '='), for messages (cut as
 * cli_value cuts). */
static void long_name(struct cli_getopt *g, const char *elem)
{
	size_t n = strcspn(elem, "=");
	char *name = strndup(elem, n);

	snprintf(g->name, sizeof(g->name), "%s", name ? cli_value(name) : "--?");
	free(name);
}

static void try_help(const struct cli_getopt *g, char *buf, size_t len)
{
	snprintf(buf, len, "try '%s%s%s --help'", cli_prog, g->cmd ? " " : "", g->cmd ? g->cmd : "");
}

int cli_getopt_next(struct cli_getopt *g)
{
	int cur, c, idx = -1;
	const char *elem;
	bool is_long;
	char help[96];

	g->arg = NULL;
	g->name[0] = '\0';
	if (g->rest) {
		if (g->next >= g->argc)
			return -1;
		g->arg = g->argv[g->next++];
		return 1;
	}
	cur = optind ? optind : 1;
	elem = cur < g->argc ? g->argv[cur] : "";
	is_long = elem[0] == '-' && elem[1] == '-' && elem[2];
	c = getopt_long(g->argc, g->argv, g->optstring, g->longopts, &idx);
	if (c == -1) {
		/* only "--" stops before the end in '-' mode */
		if (optind < g->argc) {
			g->rest = true;
			g->next = optind;
			return cli_getopt_next(g);
		}
		return -1;
	}
	if (c == 1) {
		g->arg = optarg;
		return 1;
	}
	try_help(g, help, sizeof(help));
	if (c == ':' || c == '?') {
		const struct option *o = is_long ? by_val(g, optopt) : NULL;

		if (o)
			snprintf(g->name, sizeof(g->name), "--%s", o->name);
		else if (is_long)
			long_name(g, elem);
		else
			snprintf(g->name, sizeof(g->name), "-%c", optopt ? optopt : '?');
		if (c == ':') {
			cli_cmd_error(g->cmd, "option '%s' needs a value", g->name);
		} else if (o) {
			cli_cmd_error(g->cmd, "option '%s' takes no value (in '%s')", g->name,
				      cli_value(elem));
		} else if (is_long) {
			/* unknown, or a prefix of several: name the candidates */
			size_t n = strlen(g->name) - 2, k = 0;
			char cand[512];
			int pos = 0;

			cand[0] = '\0';
			for (const struct option *p = g->longopts; p->name; p++) {
				if (strncmp(p->name, g->name + 2, n))
					continue;
				if (pos < (int)sizeof(cand))
					pos += snprintf(cand + pos, sizeof(cand) - (size_t)pos, "%s--%s",
							k ? ", " : "", p->name);
				k++;
			}
			if (k > 1)
				cli_cmd_error(g->cmd, "option '%s' is ambiguous: %s (%s)", g->name, cand,
					      help);
			else
				cli_cmd_error(g->cmd, "unknown option '%s' (%s)", g->name, help);
		} else {
			cli_cmd_error(g->cmd, "unknown option '%s' (%s)", g->name, help);
		}
		return '?';
	}
	g->arg = optarg;
	if (idx >= 0)
		snprintf(g->name, sizeof(g->name), "--%s", g->longopts[idx].name);
	else
		snprintf(g->name, sizeof(g->name), "-%c", c);
	return c;
}
