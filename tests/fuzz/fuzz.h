/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share.  Each target is one LLVMFuzzerTestOneInput
 * that checks the properties its file states; a violated property aborts,
 * so libFuzzer reports it as a crash and keeps the input.
 */
#ifndef HWT_FUZZ_H
#define HWT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond, ...)                                                         \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: property violated: %s\n  ", __FILE__,  \
				__LINE__, #cond);                                      \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
			abort();                                                       \
		}                                                                      \
	} while (0)

/* Input bytes, consumed front to back; reads past the end give 0. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fuzz_take(struct fuzz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		if (in->n) {
			v |= (uint64_t)*in->p++ << (8 * i);
			in->n--;
		}
	}
	return v;
}

#endif
