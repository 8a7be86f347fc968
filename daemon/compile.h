/* SPDX-License-Identifier: MIT */
/*
 * Compiling an authored probe: BPF C source from the LLM agent -> checked
 * source -> clang in a private temporary directory, bounded in time, size
 * and output -> the object's bytes. Nothing here loads anything into the
 * kernel; the safety gate (gate.h) looks at the object next.
 *
 * What the compiler can read: the source (written into a fresh 0700
 * directory holding only it and the object) and the include directory.
 * That follows from three things together: -nostdinc (no system or
 * compiler header directories), -I of the include directory only (quoted
 * includes also search the source's own directory: the sandbox), and
 * compile_check_source, which admits #include of the allowed header names
 * only and refuses every other way the preprocessor could name a file
 * (#include_next, #import, #embed, __has_include, #pragma GCC dependency,
 * line splicing inside a directive, digraph directives).
 */
#pragma once

#include <stddef.h>

#define COMPILE_SOURCE_MAX (64 * 1024)	  /* bytes of authored source */
#define COMPILE_OBJECT_MAX (4 * 1024 * 1024) /* bytes of the compiled object */
#define COMPILE_OUTPUT_MAX (16 * 1024)	  /* compiler diagnostics kept */
#define COMPILE_CPU_S 20
#define COMPILE_WALL_S 30

struct compile_opts {
	const char *clang;	 /* absolute path */
	const char *include_dir; /* absolute path: vmlinux.h, bpf/ headers, argus_authored.h */
	const char *tmp_parent;	 /* where the private directory is made; NULL: /tmp */
	unsigned cpu_s, wall_s;	 /* 0: the defaults above */
};

/*
 * Is this source acceptable to compile? Pure. Checks the size (at most
 * max bytes, non-empty), the characters (printable ASCII, tab, newline,
 * carriage return) and the preprocessor rules above. On refusal returns
 * -EINVAL (-E2BIG for the size) and *ret_err (malloc'ed) says why, naming
 * the line.
 */
int compile_check_source(const char *src, size_t len, size_t max, char **ret_err);

/*
 * Check and compile. On success returns 0, *ret_obj (malloc'ed) and
 * *ret_len hold the object and *ret_diag (malloc'ed, may be NULL) the
 * compiler's warnings. On failure returns -EINVAL/-E2BIG (source refused),
 * -ENOEXEC (the compiler failed), -ETIME (a time limit killed it), -EFBIG
 * (object too large) or another negative errno (sandbox set-up), and
 * *ret_diag says why: the check's message or the compiler's bounded
 * output. Outputs are written only as described.
 */
int compile_probe(const struct compile_opts *o, const char *src, size_t len, void **ret_obj,
		  size_t *ret_len, char **ret_diag);
