/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU probe results on disk.  One text file per architecture:
 *
 *   hwtune-misaligned-cache 3
 *   boot_id <id>          \
 *   kernel <release>       | the key: any difference makes the file foreign
 *   model <hash>           |
 *   version <lib version> /
 *   cpu <n> <speed> <ratio_x100> <word_ns> <byte_ns> <word_med> <byte_med> <samples> <reps>
 *       <vector: speed ratio_x100 word_ns byte_ns notes> <avx2: the same five>
 *       <avx512: the same five>
 *       <split: line_load line_store page_load page_store aligned_load_ps
 *        aligned_store_ps line_bytes page_bytes>          (one line, 32 numbers)
 *   ...
 *   end <entries> <fnv1a-64 of everything above, hex>
 *
 * The trailer catches truncation and edits; a file that fails any check is
 * ignored and later replaced; so are files of format 1 (no vector or split
 * fields) and 2 (no avx512 fields), which fail the first line's check: a
 * missing unit is measured again with the rest, the way a foreign file is.  The cpu line's fields are
 * the table below (CACHE_FIELDS), in its order.  Writes go to a temporary
 * file in the same directory, then rename(): readers see the old file or
 * the new one.
 */
#include "common/file.h"
#include "misaligned/misaligned.h"

#include "arch/arch.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAGIC "hwtune-misaligned-cache 3\n"

/* The vector units by number (HWT__VEC_* in arch.h is the same numbering). */
_Static_assert((int)HWT__VEC_MAIN == (int)HWT_MISALIGNED_UNIT_VECTOR &&
		       (int)HWT__VEC_WIDE == (int)HWT_MISALIGNED_UNIT_AVX2 &&
		       (int)HWT__VEC_WIDE512 == (int)HWT_MISALIGNED_UNIT_AVX512 &&
		       (int)HWT__VEC_KINDS == (int)HWT_MISALIGNED_UNITS,
	       "one numbering of the vector units");

/* Keep key values one token long so the line format stays unambiguous. */
static void copy_token(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = isgraph((unsigned char)src[i]) ? src[i] : '_';
	dst[i] = '\0';
	if (!i && len > 1)
		snprintf(dst, len, "-");
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return (int)n;
}

/* The lines that identify a CPU model, on any of our architectures. */
static bool model_line(const char *l)
{
	static const char *const keys[] = {
		"vendor_id", "cpu family", "model", "model name", "stepping",
		"CPU implementer", "CPU architecture", "CPU variant", "CPU part", "CPU revision",
		"mvendorid", "marchid", "mimpid", "uarch",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t n = strlen(keys[i]);

		if (!strncmp(l, keys[i], n) && (l[n] == '\t' || l[n] == ' ' || l[n] == ':'))
			return true;
	}
	return false;
}

/* Hash of the distinct model lines (so CPU count and order do not matter
 * for identical CPUs) and the architecture this library was built for. */
static void model_hash(char *out, size_t len)
{
	enum { MAX_LINES = 64 };
	uint64_t seen[MAX_LINES], h = hwt__fnv1a(HWT__FNV_INIT, HWT_ARCH_NAME, sizeof(HWT_ARCH_NAME));
	unsigned nseen = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		uint64_t lh;
		unsigned i;

		if (!model_line(line))
			continue;
		lh = hwt__fnv1a(HWT__FNV_INIT, line, strlen(line));
		for (i = 0; i < nseen && seen[i] != lh; i++)
			;
		if (i < nseen)
			continue;
		if (nseen < MAX_LINES)
			seen[nseen++] = lh;
		/* order-independent combination */
		h += lh * 0x9e3779b97f4a7c15ull;
	}
	if (f)
		fclose(f);
	snprintf(out, len, "%016" PRIx64, h);
}

int hwt__cache_key_current(struct hwt__cache_key *k)
{
	char boot[128];
	struct utsname u;
	int r;

	memset(k, 0, sizeof(*k));
	r = read_small("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	if (r < 0)
		return r;
	boot[strcspn(boot, "\n")] = '\0';
	if (!boot[0])
		return -ENOENT;
	copy_token(k->boot_id, sizeof(k->boot_id), boot);
	if (uname(&u))
		return -errno;
	copy_token(k->kernel, sizeof(k->kernel), u.release);
	model_hash(k->model, sizeof(k->model));
	copy_token(k->version, sizeof(k->version), hwt_version());
	return 0;
}

/* Create one folder (its parent must exist); an existing one must be a
 * folder, and for hwtune's own (own) not a symlink to one: a link there
 * could send the cache anywhere (a link to / wrote /misaligned-*.cache).
 * 0 or the error as itself (EACCES, ENOENT, ENOTDIR, ELOOP...). */
static int make_dir(const char *path, bool own)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (!own)
		return stat(path, &st) ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	fd = hwt__open_folder(path);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * Only hwtune's own folder is created (and ~/.cache inside an existing
 * HOME): never HOME, XDG_CACHE_HOME or a parent of the given folder, which
 * would make a missing HOME appear from the root.
 */
int hwt__cache_path(const char *dir, char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char d[4096];
	struct stat st;
	int n, r;

	/* XDG: a relative XDG_CACHE_HOME is invalid and must be ignored. */
	if (dir) {
		n = snprintf(d, sizeof(d), "%s", dir);
	} else if (xdg && xdg[0] == '/') {
		n = snprintf(d, sizeof(d), "%s/hwtune", xdg);
	} else if (home && home[0] == '/') {
		if (stat(home, &st))
			return -errno; /* no HOME: no cache, and never create it */
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		n = snprintf(d, sizeof(d), "%s/.cache", home);
		if (n <= 0 || (size_t)n >= sizeof(d))
			return -ENAMETOOLONG;
		r = make_dir(d, false); /* ~/.cache may well be a link */
		if (r)
			return r;
		n = snprintf(d, sizeof(d), "%s/.cache/hwtune", home);
	} else {
		return -ENOENT;
	}
	if (n <= 0 || (size_t)n >= sizeof(d))
		return -ENAMETOOLONG;
	while (n > 1 && d[n - 1] == '/') /* "link/" would follow the link */
		d[--n] = '\0';
	r = make_dir(d, true);
	if (r)
		return r;
	n = snprintf(buf, len, "%s/misaligned-%s.cache", d, HWT_ARCH_NAME);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* "name value\n" at *p with value == want; advances *p. */
static bool key_line(const char **p, const char *name, const char *want)
{
	size_t n = strlen(name), w = strlen(want);

	if (strncmp(*p, name, n) || (*p)[n] != ' ' || strncmp(*p + n + 1, want, w) ||
	    (*p)[n + 1 + w] != '\n')
		return false;
	*p += n + w + 2;
	return true;
}

/* Strict decimal as the writer prints it: no sign, no leading junk and no
 * leading zero (an accepted file is exactly the writer's bytes); advances
 * *p past one space or the final newline. */
static bool num(const char **p, uint64_t max, uint64_t *v, char sep)
{
	const char *s = *p;
	uint64_t x = 0;

	if (!isdigit((unsigned char)*s) || (s[0] == '0' && isdigit((unsigned char)s[1])))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		/* x * 10 + d <= UINT64_MAX: the writer writes up to UINT64_MAX */
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	if (x > max || *s != sep)
		return false;
	*p = s + 1;
	*v = x;
	return true;
}

/*
 * The fields of a cpu line, in their order on the line: the member of
 * struct hwt_misaligned_cpu, how it is written and read, its largest value.
 */
#define CACHE_VECTOR_FIELDS(X, unit)                                   \
	X(unit.speed, SPEED, HWT_MISALIGNED_UNSUPPORTED)               \
	X(unit.ratio_x100, UNS, UINT32_MAX)                            \
	X(unit.word_ns, U64, UINT64_MAX)                               \
	X(unit.byte_ns, U64, UINT64_MAX)                               \
	X(unit.notes, UNS, UINT32_MAX)
#define CACHE_FIELDS(X)                                                \
	X(cpu, INT, HWT_CPU_ID_MAX)                                    \
	X(speed, SPEED, HWT_MISALIGNED_UNSUPPORTED)                    \
	X(ratio_x100, UNS, UINT32_MAX)                                 \
	X(word_ns, U64, UINT64_MAX)                                    \
	X(byte_ns, U64, UINT64_MAX)                                    \
	X(word_median_ns, U64, UINT64_MAX)                             \
	X(byte_median_ns, U64, UINT64_MAX)                             \
	X(samples, UNS, UINT32_MAX)                                    \
	X(reps, UNS, UINT32_MAX)                                       \
	CACHE_VECTOR_FIELDS(X, vector)                                 \
	CACHE_VECTOR_FIELDS(X, avx2)                                   \
	CACHE_VECTOR_FIELDS(X, avx512)                                 \
	X(split.line_load, UNS, UINT32_MAX)                            \
	X(split.line_store, UNS, UINT32_MAX)                           \
	X(split.page_load, UNS, UINT32_MAX)                            \
	X(split.page_store, UNS, UINT32_MAX)                           \
	X(split.aligned_load_ps, U64, UINT64_MAX)                      \
	X(split.aligned_store_ps, U64, UINT64_MAX)                     \
	X(split.line_bytes, UNS, UINT32_MAX)                           \
	X(split.page_bytes, UNS, UINT32_MAX)

enum field_type { F_INT, F_SPEED, F_UNS, F_U64 };

static const struct field {
	size_t off;
	enum field_type type;
	uint64_t max;
} fields[] = {
#define FIELD(member, type, max) { offsetof(struct hwt_misaligned_cpu, member), F_##type, max },
	CACHE_FIELDS(FIELD)
#undef FIELD
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))
_Static_assert(NFIELDS == 32, "the cache line has 32 fields: a change is a new format");

/* Field f of c, widened (the writer's values are never negative: cpu >= 0
 * and speeds are checked by hwt__cache_keeps). */
static uint64_t field_get(const struct hwt_misaligned_cpu *c, const struct field *f)
{
	const char *p = (const char *)c + f->off;

	switch (f->type) {
	case F_INT: return (uint64_t)*(const int *)p;
	case F_SPEED: return (uint64_t)*(const enum hwt_misaligned_speed *)p;
	case F_UNS: return *(const unsigned *)p;
	default: return *(const uint64_t *)p;
	}
}

/* Store v (at most f->max, which fits the member) into field f of c. */
static void field_set(struct hwt_misaligned_cpu *c, const struct field *f, uint64_t v)
{
	char *p = (char *)c + f->off;

	switch (f->type) {
	case F_INT: *(int *)p = (int)v; break;
	case F_SPEED: *(enum hwt_misaligned_speed *)p = (enum hwt_misaligned_speed)v; break;
	case F_UNS: *(unsigned *)p = (unsigned)v; break;
	default: *(uint64_t *)p = v; break;
	}
}

/* What a vector result is besides its fields; the unit's name comes from
 * this build (the key's version and model guarantee the same one wrote it). */
static void vector_finish(struct hwt_misaligned_vector *v, unsigned kind)
{
	struct hwt__vec_loops l = { NULL, NULL, NULL, NULL };

	hwt__vec_get(kind, &l);
	v->unit = v->notes & (HWT_MISALIGNED_NOTE_NO_UNIT | HWT_MISALIGNED_NOTE_NO_LOOP) ? NULL : l.name;
	v->hwprobe = -ENOSYS;
}

/* A vector speed the files hold: no EMULATED; UNKNOWN only if no loop exists. */
static bool vector_valid(const struct hwt_misaligned_vector *v)
{
	return v->speed != HWT_MISALIGNED_EMULATED &&
	       (v->speed != HWT_MISALIGNED_UNKNOWN || (v->notes & HWT_MISALIGNED_NOTE_NO_LOOP));
}

/* Worth keeping: a vector result is known, or can never be (no loop). */
static bool vector_keep(const struct hwt_misaligned_vector *v)
{
	if (v->speed == HWT_MISALIGNED_UNKNOWN)
		return (v->notes & HWT_MISALIGNED_NOTE_NO_LOOP) != 0;
	return v->speed >= HWT_MISALIGNED_SLOW && v->speed <= HWT_MISALIGNED_UNSUPPORTED;
}

int hwt__cache_parse(const char *text, size_t len, const struct hwt__cache_key *k,
		     struct hwt_misaligned_cpu **out, unsigned *nout)
{
	const char *p = text, *end, *trailer;
	struct hwt_misaligned_cpu *e = NULL;
	unsigned char seen[(HWT_CPU_ID_MAX + 8) / 8] = { 0 }; /* duplicates, in linear time */
	unsigned n = 0, cap = 0;
	uint64_t count;
	char want[40];

	*out = NULL;
	*nout = 0;
	/* A NUL inside would hide bytes from the string checks. */
	if (strlen(text) != len)
		return -EBADMSG;
	/* The trailer first: it covers everything before it. */
	if (len < sizeof(MAGIC) || text[len - 1] != '\n')
		return -EBADMSG;
	for (trailer = text + len - 1; trailer > text && trailer[-1] != '\n'; trailer--)
		;
	if (strncmp(trailer, "end ", 4))
		return -EBADMSG;
	end = trailer + 4;
	if (!num(&end, UINT32_MAX, &count, ' '))
		return -EBADMSG;
	snprintf(want, sizeof(want), "%016" PRIx64 "\n",
		 hwt__fnv1a(HWT__FNV_INIT, text, (size_t)(trailer - text)));
	if (strcmp(end, want))
		return -EBADMSG;

	if (strncmp(p, MAGIC, sizeof(MAGIC) - 1))
		return -EBADMSG;
	p += sizeof(MAGIC) - 1;
	if (!key_line(&p, "boot_id", k->boot_id) || !key_line(&p, "kernel", k->kernel) ||
	    !key_line(&p, "model", k->model) || !key_line(&p, "version", k->version))
		return -ESTALE;

	while (p < trailer) {
		struct hwt_misaligned_cpu c = { 0 };

		if (strncmp(p, "cpu ", 4))
			goto bad;
		p += 4;
		for (size_t i = 0; i < NFIELDS; i++) {
			uint64_t v;

			if (!num(&p, fields[i].max, &v, i == NFIELDS - 1 ? '\n' : ' '))
				goto bad;
			field_set(&c, &fields[i], v);
		}
		if (c.speed == HWT_MISALIGNED_UNKNOWN || !vector_valid(&c.vector) ||
		    !vector_valid(&c.avx2) || !vector_valid(&c.avx512))
			goto bad;
		if (seen[c.cpu / 8] & (1u << (c.cpu % 8)))
			goto bad;
		seen[c.cpu / 8] |= (unsigned char)(1u << (c.cpu % 8));
		if (n == cap) {
			struct hwt_misaligned_cpu *ne;

			cap = cap ? 2 * cap : 16;
			ne = realloc(e, cap * sizeof(*e));
			if (!ne) {
				free(e);
				return -ENOMEM;
			}
			e = ne;
		}
		c.source = c.vector_source = HWT_MISALIGNED_FROM_CACHE;
		c.align_faults = -1;
		c.hwprobe = -ENOSYS;
		vector_finish(&c.vector, HWT__VEC_MAIN);
		vector_finish(&c.avx2, HWT__VEC_WIDE);
		vector_finish(&c.avx512, HWT__VEC_WIDE512);
		e[n++] = c;
	}
	if (count != n)
		goto bad;
	*out = e;
	*nout = n;
	return 0;
bad:
	free(e);
	return -EBADMSG;
}

int hwt__cache_load(const char *path, const struct hwt__cache_key *k,
		    struct hwt_misaligned_cpu **out, unsigned *n)
{
	struct stat st;
	char *text;
	ssize_t got;
	size_t len = 0;
	int fd, r;

	*out = NULL;
	*n = 0;
	/* Errors as themselves: EACCES, ELOOP (a symlink, the file or its
	 * folder: never followed), EISDIR...; -EBADMSG (corrupt) is for the
	 * content only.  O_NONBLOCK: a FIFO in its place must not hang the
	 * probe. */
	fd = hwt__open_in_folder(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > HWT__MISALIGNED_MAX_FILE) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : !S_ISREG(st.st_mode) ? -EINVAL : -EFBIG;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, text + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	close(fd);
	text[len] = '\0';
	r = len == (size_t)st.st_size ? hwt__cache_parse(text, len, k, out, n) : -EBADMSG;
	free(text);
	return r;
}

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void put(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len)
			break;
		char *np = realloc(b->p, 2 * b->cap + (size_t)n);

		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = 2 * b->cap + (size_t)n;
	}
	b->len += (size_t)n;
}

bool hwt__cache_keeps(const struct hwt_misaligned_cpu *c)
{
	return c->status == 0 && c->speed > HWT_MISALIGNED_UNKNOWN &&
	       c->speed <= HWT_MISALIGNED_UNSUPPORTED && c->cpu >= 0 && c->cpu <= HWT_CPU_ID_MAX &&
	       vector_keep(&c->vector) && vector_keep(&c->avx2) && vector_keep(&c->avx512);
}

int hwt__cache_format(const struct hwt__cache_key *k, const struct hwt_misaligned_cpu *e,
		      unsigned n, char **text, size_t *len)
{
	struct sbuf b = { malloc(1024), 0, 1024, false };
	unsigned kept = 0;

	*text = NULL;
	*len = 0;
	if (!b.p)
		return -ENOMEM;
	put(&b, "%sboot_id %s\nkernel %s\nmodel %s\nversion %s\n", MAGIC, k->boot_id, k->kernel,
	    k->model, k->version);
	for (unsigned i = 0; i < n; i++) {
		const struct hwt_misaligned_cpu *c = &e[i];

		if (!hwt__cache_keeps(c))
			continue; /* UNKNOWN is worth another try next time */
		put(&b, "cpu");
		for (size_t f = 0; f < NFIELDS; f++)
			put(&b, " %" PRIu64, field_get(c, &fields[f]));
		put(&b, "\n");
		kept++;
	}
	if (!b.oom) {
		uint64_t h = hwt__fnv1a(HWT__FNV_INIT, b.p, b.len);

		put(&b, "end %u %016" PRIx64 "\n", kept, h);
	}
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*text = b.p;
	*len = b.len;
	return 0;
}

int hwt__cache_store(const char *path, const struct hwt__cache_key *k,
		     const struct hwt_misaligned_cpu *e, unsigned n)
{
	size_t len;
	char *text;
	int r = hwt__cache_format(k, e, n, &text, &len);

	/* Not durable: after a crash a torn file fails the trailer check and
	 * costs one re-probe, which is cheaper than a sync on every write. */
	if (!r)
		r = hwt__write_file_atomic(path, text, len, 0600, false);
	free(text);
	return r;
}
