/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_prog = "hwtune";

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *digits = "0123456789", *p = s;
	unsigned long long v = 0;
	int base = 10;
	bool ok;

	/* Only digits after the prefix: strtoull alone would skip blanks, take
	 * a sign, read "010" as octal and "0x" twice. */
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2, base = 16, digits = "0123456789abcdefABCDEF";
	ok = *p && p[strspn(p, digits)] == '\0';
	errno = 0;
	if (ok)
		v = strtoull(p, NULL, base);
	if (!ok || errno || v < min || v > max) {
		cli_error("%s: invalid value '%s' (expected %llu..%llu)", opt, s,
			  (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	*out = v;
	return true;
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
