/* SPDX-License-Identifier: MIT */
#include "prog/json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

int json_end(struct json *j)
{
	fputc('\n', j->f);
	return ferror(j->f) ? -EIO : 0;
}

static void line_break(struct json *j)
{
	if (j->nl) {
		fprintf(j->f, "\n%s", j->nl);
		j->nl = NULL;
	}
}

/* What goes before a member (a key, or a value in an array). */
static void separate(struct json *j)
{
	bool more = j->more[j->depth];

	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (more)
		fputc(',', j->f);
	if (j->nl)
		line_break(j);
	else if (more)
		fputc(' ', j->f);
	j->more[j->depth] = true;
}

static void nest(struct json *j, char o, char c)
{
	separate(j);
	fputc(o, j->f);
	if (j->depth + 1 < JSON_DEPTH)
		j->depth++;
	j->more[j->depth] = false;
	j->close[j->depth] = c;
}

void json_obj(struct json *j)
{
	nest(j, '{', '}');
}

void json_arr(struct json *j)
{
	nest(j, '[', ']');
}

void json_close(struct json *j)
{
	line_break(j);
	fputc(j->close[j->depth], j->f);
	if (j->depth)
		j->depth--;
}

void json_nl(struct json *j, const char *indent)
{
	j->nl = indent;
}

/* s as a JSON string: quote, backslash and control characters escaped. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	separate(j);
	put_string(j->f, key);
	fputs(": ", j->f);
	j->after_key = true;
}

void json_str(struct json *j, const char *s)
{
	separate(j);
	put_string(j->f, s);
}

void json_u64(struct json *j, uint64_t v)
{
	separate(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_int(struct json *j, long long v)
{
	separate(j);
	fprintf(j->f, "%lld", v);
}

void json_bool(struct json *j, bool v)
{
	separate(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	separate(j);
	fputs("null", j->f);
}

void json_fixed(struct json *j, double v, int decimals)
{
	separate(j);
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		fputs("null", j->f);
}
