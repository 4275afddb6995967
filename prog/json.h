/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer: objects and arrays with the commas in the
 * right places, escaped strings, and line breaks where the caller asks.
 *
 *   struct json j;
 *   json_begin(&j, stdout);
 *   json_obj(&j); json_key(&j, "n"); json_u64(&j, 3); json_close(&j);
 *   json_end(&j);                                    {"n": 3}\n
 *
 * Members are separated by ", " and keys by ": ".  json_nl(j, indent) puts
 * the next member, or the next closing bracket, on a new line after indent.
 */
#ifndef HWT_PROG_JSON_H
#define HWT_PROG_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH 16

struct json {
	FILE *f;
	unsigned depth;
	bool after_key;          /* a key was written; its value comes next */
	const char *nl;          /* indent of a pending line break, or NULL */
	bool more[JSON_DEPTH];   /* a member was written at this depth */
	char close[JSON_DEPTH];  /* '}' or ']' */
};

void json_begin(struct json *j, FILE *f);
/* Ends the document with a newline: 0, or -EIO if the stream failed. */
int json_end(struct json *j);

void json_obj(struct json *j);
void json_arr(struct json *j);
void json_close(struct json *j);
void json_key(struct json *j, const char *key);
void json_nl(struct json *j, const char *indent);

void json_str(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_int(struct json *j, long long v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* v with `decimals` digits after the point ("%.*f"); null if not finite. */
void json_fixed(struct json *j, double v, int decimals);

#endif
