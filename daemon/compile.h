/* SPDX-License-Identifier: MIT */
/*
 * Compiling an authored probe: BPF C source from the LLM agent -> checked
 * source -> clang in a sandbox, bounded in time, size and output -> the
 * object's bytes. Nothing here loads anything into the kernel; the safety
 * gate (gate.h) looks at the object next.
 *
 * What the compiler can reach, two ways over:
 *   - The sandbox (sandbox.h): clang runs as an unprivileged uid (nobody
 *     unless told otherwise) with no capabilities and no_new_privs, in new
 *     user, mount, network, IPC, UTS and PID namespaces whose root holds only
 *     clang and its libraries (read-only), the include directory
 *     (read-only, at COMPILE_INCLUDE_AT) and a fresh work directory holding
 *     the source (read-write, at COMPILE_WORK_AT). If the sandbox cannot be
 *     made, nothing is compiled.
 *   - The source check (compile_check_source): #include of the allowed
 *     header names only, and no other way to name a file (#include_next,
 *     #import, #embed, #line, __has_include, _Pragma, pragmas other than
 *     the loop pragmas, line splices in directives, digraphs, trigraphs,
 *     lone carriage returns, which clang ends lines at) and no assembler
 *     (asm, __asm, __asm__: .incbin and .include read files), nor the token
 *     pasting (##, libbpf's ___ helpers) that could spell any of them.
 * compile_dependencies runs clang's preprocessor in the same sandbox for
 * the differential check: for every source the check accepts, the only
 * files clang names are the allowed headers (compile_check_dependencies).
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define COMPILE_SOURCE_MAX (64 * 1024)	  /* bytes of authored source */
#define COMPILE_OBJECT_MAX (4 * 1024 * 1024) /* bytes of the compiled object */
#define COMPILE_OUTPUT_MAX (16 * 1024)	  /* compiler diagnostics kept */
#define COMPILE_DEPS_MAX (64 * 1024)	  /* bytes of a dependency list */
#define COMPILE_CPU_S 20
#define COMPILE_WALL_S 30

/* Where the include directory and the work directory appear to the compiler. */
#define COMPILE_INCLUDE_AT "/argus/include"
#define COMPILE_WORK_AT "/argus/work"

struct compile_opts {
	const char *clang;	 /* absolute path */
	const char *include_dir; /* absolute path: vmlinux.h, bpf/ headers, argus_authored.h */
	const char *tmp_parent;	 /* where the private directory is made; NULL: /tmp */
	unsigned cpu_s, wall_s;	 /* 0: the defaults above */
	uid_t uid;		 /* the compiler's uid and gid; 0: nobody (65534) */
	gid_t gid;
};

/*
 * Is this source acceptable to compile? Pure. Checks the size (at most
 * max bytes, non-empty), the characters (printable ASCII, tab, newline,
 * carriage return only before a newline) and the rules above. On refusal
 * returns -EINVAL (-E2BIG for the size) and *ret_err (malloc'ed) says why,
 * naming the line.
 */
int compile_check_source(const char *src, size_t len, size_t max, char **ret_err);

/*
 * Check and compile. On success returns 0, *ret_obj (malloc'ed) and
 * *ret_len hold the object and *ret_diag (malloc'ed, may be NULL) the
 * compiler's warnings. On failure returns -EINVAL/-E2BIG (source refused),
 * -ENOEXEC (the compiler failed), -ETIME (a time limit killed it), -EFBIG
 * (object too large) or another negative errno (the sandbox could not be
 * made: nothing ran), and *ret_diag says why: the check's message, the
 * compiler's bounded output or the sandbox step that failed. Outputs are
 * written only as described.
 */
int compile_probe(const struct compile_opts *o, const char *src, size_t len, void **ret_obj,
		  size_t *ret_len, char **ret_diag);

/*
 * The files clang's preprocessor names for a source (`clang -M -MG`, in
 * the same sandbox as compile_probe, with the same flags): the source
 * itself ("probe.bpf.c"), headers as COMPILE_INCLUDE_AT/..., and missing
 * files as written. The source check is NOT applied: this is the other
 * side of the differential check. Returns 0 with *ret_deps (an array of
 * *ret_n malloc'ed strings, free with compile_deps_free) or a negative
 * errno as compile_probe does, with *ret_diag.
 */
int compile_dependencies(const struct compile_opts *o, const char *src, size_t len,
			 char ***ret_deps, size_t *ret_n, char **ret_diag);
void compile_deps_free(char **deps, size_t n);

/*
 * Are these dependencies only the source and the allowed headers (and the
 * headers they include themselves)? Pure. 0, or -EPERM and *ret_err
 * (malloc'ed) naming the first file that is not.
 */
int compile_check_dependencies(char *const *deps, size_t n, char **ret_err);
