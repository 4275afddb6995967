/* SPDX-License-Identifier: MIT */
/* hwtune decode DW0 DW1: one 16-byte SMMUv3 command into its fields. */
#include "decode/command.h"

#include "prog/json.h"

#include <errno.h>
#include <hwtune/smmu.h>
#include <string.h>

static void decode_usage(FILE *f)
{
	fprintf(f, "usage: hwtune decode [--json] DW0 DW1\n\n"
		   "Decode one SMMUv3 command given as its two 64-bit dwords in hex\n"
		   "(host order, with or without 0x): dw0 holds the opcode in bits [7:0].\n"
		   "Prints the opcode name and every field as NAME=value: hex, or the value's\n"
		   "name for enumerated fields (CS NONE/IRQ/SEV, MSH NSH/reserved/OSH/ISH,\n"
		   "MSIATTR Device-nGnRnE/Device-nGnRE/WB, RESP by opcode).  DW0 and DW1 are\n"
		   "the only hex arguments; '--' ends the options.\n\n"
		   "  --json      print {\"version\": ..., \"decode\": {...}} instead: \"fields\"\n"
		   "              holds every field in hex, \"values\" the enumerated ones as\n"
		   "              {\"raw\": N, \"name\": \"...\"|null}\n"
		   "  -h, --help  this text\n\n"
		   "Exit status: 0 decoded, 1 not a valid command (unknown opcode,\n"
		   "reserved bits set, invalid field value), 2 bad arguments.\n");
}

/* 1 to 16 hex digits, optional 0x prefix. */
static bool parse_dword(const char *s, uint64_t *out)
{
	const char *p = s;
	uint64_t v = 0;
	size_t n = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; *p; p++, n++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		v = v << 4 | d;
	}
	if (*p || n == 0 || n > 16) {
		cli_cmd_error("decode", "invalid dword '%s' (expected 1 to 16 hex digits, with or "
			      "without 0x)", cli_value(s));
		return false;
	}
	*out = v;
	return true;
}

/* The opcode's fields in bit order (dw0 then dw1, low bits first). */
static size_t fields_in_order(unsigned op, unsigned order[HWT_SMMU_F_COUNT],
			      uint64_t own[2])
{
	unsigned key[HWT_SMMU_F_COUNT];
	size_t n = 0;

	own[0] = 0xff;
	own[1] = 0;
	for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++) {
		unsigned dw, hi, lo;
		size_t i;

		if (hwt_smmu_field_layout(op, (enum hwt_smmu_field)f, &dw, &hi, &lo) != 1)
			continue;
		own[dw] |= (~0ull >> (63 - hi)) & (~0ull << lo);
		for (i = n; i > 0 && key[i - 1] > dw * 64 + lo; i--) {
			key[i] = key[i - 1];
			order[i] = order[i - 1];
		}
		key[i] = dw * 64 + lo;
		order[i] = f;
		n++;
	}
	return n;
}

/* "dw1 bit 5 (0x20)", "dw0 bits 12, 14-15 (0xd000)": the set bits of
 * mask, runs as ranges; appended to buf at *pos.  Nothing for mask 0. */
static void name_bits(char *buf, size_t len, size_t *pos, int dw, uint64_t mask)
{
	const char *sep = "";

	if (!mask)
		return;
#define PUT(...) (*pos += (size_t)snprintf(buf + *pos, *pos < len ? len - *pos : 0, __VA_ARGS__))
	PUT("%sdw%d bit%s ", *pos ? "; " : "", dw, mask & (mask - 1) ? "s" : "");
	for (int b = 0; b < 64; b++) {
		int e = b;

		if (!(mask >> b & 1))
			continue;
		while (e < 63 && (mask >> (e + 1) & 1))
			e++;
		if (e > b)
			PUT("%s%d-%d", sep, b, e);
		else
			PUT("%s%d", sep, b);
		sep = ", ";
		b = e;
	}
	PUT(" (0x%llx)", (unsigned long long)mask);
#undef PUT
}

/* Why decode refused a command with a known opcode. */
static void explain_invalid(const char *name, const uint64_t dw[2], const uint64_t own[2],
			    const unsigned *order, size_t n)
{
	uint64_t r0 = dw[0] & ~own[0], r1 = dw[1] & ~own[1];

	if (r0 | r1) {
		char bits[512];
		size_t pos = 0;

		bits[0] = '\0';
		name_bits(bits, sizeof(bits), &pos, 0, r0);
		name_bits(bits, sizeof(bits), &pos, 1, r1);
		cli_cmd_error("decode", "%s: reserved bits set: %s%s", name, bits,
			      (r0 & (1ull << 10)) ? "; dw0 bit 10 is SSec (secure commands are unsupported)" : "");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d, hi, lo;
		uint64_t v;

		hwt_smmu_field_layout(hwt_smmu_opcode(dw), (enum hwt_smmu_field)order[i], &d, &hi, &lo);
		v = (dw[d] >> lo) & (~0ull >> (63 - (hi - lo)));
		if ((order[i] == HWT_SMMU_F_CS || order[i] == HWT_SMMU_F_RESP) && v == 3) {
			cli_cmd_error("decode", "%s: invalid %s value 3", name,
				  hwt_smmu_field_name((enum hwt_smmu_field)order[i]));
			return;
		}
	}
	cli_cmd_error("decode", "%s: invalid command", name);
}

int decode_parse(int argc, char **argv, struct cli_args *a)
{
	enum { O_JSON = 256 };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, O_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_getopt g;
	const char *arg[2];
	int nargs = 0, c;

	cli_getopt_begin(&g, "decode", argc, argv, "h", longopts);
	while ((c = cli_getopt_next(&g)) != -1) {
		switch (c) {
		case 'h':
			decode_usage(stdout);
			return 0;
		case O_JSON:
			a->json = true;
			break;
		case 1:
			if (nargs == 2) {
				cli_cmd_error("decode", "unexpected argument '%s' after DW0 DW1 (try "
					      "'hwtune decode --help')", cli_value(g.arg));
				return CLI_EXIT_USAGE;
			}
			arg[nargs++] = g.arg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (nargs != 2) {
		cli_cmd_error("decode", "expected 2 dwords (DW0 DW1), got %d (try 'hwtune decode "
			      "--help')", nargs);
		return CLI_EXIT_USAGE;
	}
	if (!parse_dword(arg[0], &a->dw[0]) || !parse_dword(arg[1], &a->dw[1]))
		return CLI_EXIT_USAGE;
	a->run = decode_run;
	return CLI_RUN;
}

/* The name of an enumerated field's value (NULL: not enumerated or no name). */
static const char *value_name(unsigned op, unsigned f, uint64_t v)
{
	static const char *const cs[] = { "NONE", "IRQ", "SEV" };
	static const char *const msh[] = { "NSH", "reserved", "OSH", "ISH" };
	static const char *const pri[] = { "DENY", "FAIL", "SUCC" };
	static const char *const resume[] = { "TERM", "RETRY", "ABORT" };

	switch (f) {
	case HWT_SMMU_F_CS:
		return v < 3 ? cs[v] : NULL;
	case HWT_SMMU_F_MSH:
		return v < 4 ? msh[v] : NULL;
	case HWT_SMMU_F_MSIATTR:
		/* memory attribute encodings we know for certain */
		return v == 0x0 ? "Device-nGnRnE" : v == 0x1 ? "Device-nGnRE" : v == 0xf ? "WB" : NULL;
	case HWT_SMMU_F_RESP:
		if (op == HWT_SMMU_OP_PRI_RESP)
			return v < 3 ? pri[v] : NULL;
		if (op == HWT_SMMU_OP_RESUME)
			return v < 3 ? resume[v] : NULL;
		return NULL;
	default:
		return NULL;
	}
}

static bool enumerated(unsigned f)
{
	return f == HWT_SMMU_F_CS || f == HWT_SMMU_F_MSH || f == HWT_SMMU_F_MSIATTR ||
	       f == HWT_SMMU_F_RESP;
}

/* "fields" keeps its raw hex strings; "values" adds the names. */
static void print_json(const struct hwt_smmu_cmd *c, const uint64_t dw[2], const unsigned *order,
		       size_t n)
{
	struct json j;
	char hex[32];

	json_begin(&j, stdout);
	json_obj(&j);
	json_key(&j, "version"), json_str(&j, hwt_version());
	json_key(&j, "decode");
	json_obj(&j);
	json_key(&j, "op"), json_str(&j, hwt_smmu_op_name(c->op));
	snprintf(hex, sizeof(hex), "0x%02x", c->op);
	json_key(&j, "opcode"), json_str(&j, hex);
	json_key(&j, "dw");
	json_arr(&j);
	for (int i = 0; i < 2; i++) {
		snprintf(hex, sizeof(hex), "0x%016llx", (unsigned long long)dw[i]);
		json_str(&j, hex);
	}
	json_close(&j);
	json_key(&j, "fields");
	json_obj(&j);
	for (size_t i = 0; i < n; i++) {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)c->f[order[i]]);
		json_key(&j, hwt_smmu_field_name((enum hwt_smmu_field)order[i]));
		json_str(&j, hex);
	}
	json_close(&j);
	json_key(&j, "values");
	json_obj(&j);
	for (size_t i = 0; i < n; i++) {
		const char *name = value_name(c->op, order[i], c->f[order[i]]);

		if (!enumerated(order[i]))
			continue;
		json_key(&j, hwt_smmu_field_name((enum hwt_smmu_field)order[i]));
		json_obj(&j);
		json_key(&j, "raw"), json_u64(&j, c->f[order[i]]);
		json_key(&j, "name");
		if (name)
			json_str(&j, name);
		else
			json_null(&j);
		json_close(&j);
	}
	json_close(&j);
	json_close(&j);
	json_close(&j);
	json_end(&j);
}

int decode_run(struct cli_args *a)
{
	unsigned order[HWT_SMMU_F_COUNT];
	struct hwt_smmu_cmd c;
	const uint64_t *dw = a->dw;
	uint64_t own[2];
	bool json = a->json;
	size_t n;
	int r;

	r = hwt_smmu_decode(dw, &c);
	if (r == -ENOENT) {
		cli_cmd_error("decode", "unknown opcode 0x%02x (dw0 bits [7:0])", c.op);
		return 1;
	}
	n = fields_in_order(c.op, order, own);
	if (r < 0) {
		explain_invalid(hwt_smmu_op_name(c.op), dw, own, order, n);
		return 1;
	}

	if (json) {
		print_json(&c, dw, order, n);
	} else {
		printf("%s", hwt_smmu_op_name(c.op));
		for (size_t i = 0; i < n; i++) {
			const char *name = value_name(c.op, order[i], c.f[order[i]]);

			if (name)
				printf(" %s=%s", hwt_smmu_field_name((enum hwt_smmu_field)order[i]),
				       name);
			else
				printf(" %s=0x%llx",
				       hwt_smmu_field_name((enum hwt_smmu_field)order[i]),
				       (unsigned long long)c.f[order[i]]);
		}
		printf("\n");
	}
	return 0;
}
