/* SPDX-License-Identifier: MIT */
/*
 * Text helpers of argusctl: formatting that aborts on OOM, and output of
 * strings that came from the network with their control characters made
 * harmless, so that no answer can move the cursor or rewrite a terminal.
 */
#pragma once

#include <stdio.h>

#include "daemon/util.h"

/* asprintf that aborts on OOM (caller frees). */
char *strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write len bytes of s to f, every control character but '\n' and '\t' as '?'. */
void text_emit(FILE *f, const char *s, size_t len);

/* "argusctl: MESSAGE\n" on stderr, cleaned as text_emit does: the one way errors are told. */
void print_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
