/* SPDX-License-Identifier: MIT */
/* The assertion macro of the test binaries: failures print and count, main returns the count. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

static int tap_failures;
static int tap_checks;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		tap_checks++;                                                                      \
		if (!(cond)) {                                                                     \
			tap_failures++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);           \
		}                                                                                  \
	} while (0)

#define CHECKF(cond, ...)                                                                          \
	do {                                                                                       \
		tap_checks++;                                                                      \
		if (!(cond)) {                                                                     \
			tap_failures++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* Abort the binary: for preconditions without which nothing else can run. */
#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FATAL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
			exit(99);                                                                  \
		}                                                                                  \
	} while (0)

static inline int tap_done(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, tap_checks, tap_failures);
	return tap_failures ? 1 : 0;
}
