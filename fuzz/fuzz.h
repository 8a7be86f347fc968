/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer targets of fuzz/ share: a property check that aborts
 * (libFuzzer then keeps the input as a crash and the run fails), a reader
 * of fuzzer bytes for the targets that build structured inputs, and the
 * tree of tree-data/ for the targets that need a real one.
 *
 * Each target calls the real function with the fuzzer's bytes; ASan and
 * UBSan catch memory and undefined-behaviour errors, FUZZ_CHECK the
 * invariants the module's contract promises.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "daemon/tree.h"

#ifndef ARGUS_FUZZ_SOURCE_DIR
#define ARGUS_FUZZ_SOURCE_DIR "."
#endif

/* Abort with the failed property; libFuzzer saves the input that broke it. */
#define FUZZ_CHECK(cond, fmt, ...)                                                                 \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "property failed at %s:%d: %s: " fmt "\n", __FILE__,       \
				__LINE__, #cond, ##__VA_ARGS__);                                   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The fuzzer's bytes, consumed from the front; past the end everything reads as zero. */
struct fuzz_bytes {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_bytes *b)
{
	if (!b->n)
		return 0;
	b->n--;
	return *b->p++;
}

static inline uint32_t fuzz_u32(struct fuzz_bytes *b)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | fuzz_u8(b);
	return v;
}

/* A NUL-terminated copy of the next (length byte, at most max) bytes; NUL bytes become '?'. */
static inline char *fuzz_cstr(struct fuzz_bytes *b, size_t max)
{
	size_t len = fuzz_u8(b), i;
	char *s;

	if (len > max)
		len = max;
	if (len > b->n)
		len = b->n;
	s = malloc(len + 1);
	if (!s)
		abort();
	for (i = 0; i < len; i++)
		s[i] = b->p[i] ? (char)b->p[i] : '?';
	s[len] = 0;
	b->p += len;
	b->n -= len;
	return s;
}

/* A NUL-terminated copy of data, for functions that take C strings. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Is s valid UTF-8 (what every JSON string argusd builds must be)? jansson decides. */
static inline bool fuzz_utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

/*
 * The tree of tree-data/ ($ARGUS_SOURCE_DIR, else the source directory the
 * target was built from), loaded once; aborts when it cannot be read.
 */
static inline struct tree *fuzz_tree(void)
{
	static struct tree *t;
	char path[4096];
	char *err = NULL;
	const char *dir = getenv("ARGUS_SOURCE_DIR");

	if (t)
		return t;
	snprintf(path, sizeof(path), "%s/tree-data/tree.json", dir ? dir : ARGUS_FUZZ_SOURCE_DIR);
	if (tree_load_file(path, &t, &err) < 0) {
		fprintf(stderr, "fuzz: cannot load %s: %s\n", path, err ? err : "?");
		abort();
	}
	return t;
}

/* A fixed hash seed: the same input takes the same path through jansson every run. */
static inline void fuzz_json_init(void)
{
	json_object_seed(1);
}
