/* SPDX-License-Identifier: MIT */
/*
 * The assertion macros of the test binaries: failures print and count, main
 * returns the count. A skip prints "# SKIP NAME: reason" and counts: NAME is
 * the part left out, "all" for the whole binary (which then exits 77). The
 * test command fails on every skip that tests/skips.allowed does not list
 * (scripts/check-skips.sh).
 */
#pragma once

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_failures;
static int tap_checks;
static int tap_skips;
static const char *tap_subtest_name; /* the subtest running, named in failures */

/*
 * A test binary that dies on a signal says which, in which subtest, and
 * its stack (addresses for addr2line), before it dies of it: the test
 * runner reports only "aborted" or "SEGFAULT". Under AddressSanitizer its
 * own report says more, and its handlers stay.
 */
#ifndef __SANITIZE_ADDRESS__
static void tap_fatal_signal(int sig)
{
	void *frames[64];
	char head[192];
	int n = backtrace(frames, 64), len;

	len = snprintf(head, sizeof(head), "FATAL signal %d%s%s, the stack:\n", sig,
		       tap_subtest_name ? " in subtest " : "",
		       tap_subtest_name ? tap_subtest_name : "");
	(void)!write(2, head, len > 0 && len < (int)sizeof(head) ? len : 0);
	backtrace_symbols_fd(frames, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void tap_catch_fatal_signals(void)
{
	static const int sigs[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], tap_fatal_signal);
}
#endif

/* Start the subtest called name (no spaces): later failures name it. */
static inline void tap_subtest(const char *name)
{
	tap_subtest_name = name;
	fprintf(stderr, "# subtest %s\n", name);
}

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		tap_checks++;                                                                      \
		if (!(cond)) {                                                                     \
			tap_failures++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s%s%s\n", __FILE__, __LINE__,               \
				tap_subtest_name ? tap_subtest_name : "",                          \
				tap_subtest_name ? ": " : "", #cond);                              \
		}                                                                                  \
	} while (0)

#define CHECKF(cond, ...)                                                                          \
	do {                                                                                       \
		tap_checks++;                                                                      \
		if (!(cond)) {                                                                     \
			tap_failures++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s%s%s: ", __FILE__, __LINE__,               \
				tap_subtest_name ? tap_subtest_name : "",                          \
				tap_subtest_name ? ": " : "", #cond);                              \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/*
 * Comparisons that print both sides on failure, as the kernel's BPF
 * selftests' ASSERT_EQ does: CHECK_EQ for integers (compared as long long),
 * CHECK_STREQ for strings (NULL allowed on either side), with a name for the
 * value checked.
 */
#define CHECK_EQ(actual, expected, name)                                                           \
	do {                                                                                       \
		long long tap_a_ = (long long)(actual), tap_e_ = (long long)(expected);            \
		tap_checks++;                                                                      \
		if (tap_a_ != tap_e_) {                                                            \
			tap_failures++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s%s%s: got %lld, expected %lld\n", __FILE__,  \
				__LINE__, tap_subtest_name ? tap_subtest_name : "",                \
				tap_subtest_name ? ": " : "", name, tap_a_, tap_e_);               \
		}                                                                                  \
	} while (0)

#define CHECK_STREQ(actual, expected, name)                                                        \
	do {                                                                                       \
		const char *tap_a_ = (actual), *tap_e_ = (expected);                               \
		tap_checks++;                                                                      \
		if (!tap_a_ || !tap_e_ || strcmp(tap_a_, tap_e_) != 0) {                           \
			tap_failures++;                                                            \
			fprintf(stderr, "FAIL %s:%d: %s%s%s: got \"%s\", expected \"%s\"\n",         \
				__FILE__, __LINE__, tap_subtest_name ? tap_subtest_name : "",      \
				tap_subtest_name ? ": " : "", name, tap_a_ ? tap_a_ : "(null)",    \
				tap_e_ ? tap_e_ : "(null)");                                       \
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

/* Leave out the part called name (no spaces), saying why. */
static inline void __attribute__((format(printf, 2, 3))) tap_skip(const char *name,
								  const char *fmt, ...)
{
	va_list ap;

	tap_skips++;
	fprintf(stderr, "# SKIP %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The whole binary cannot run here: say why and exit 77 (CTest's skip). */
#define tap_skip_all(...)                                                                          \
	do {                                                                                       \
		tap_skip("all", __VA_ARGS__);                                                      \
		exit(77);                                                                          \
	} while (0)

static inline int tap_done(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed, %d skipped\n", name, tap_checks, tap_failures,
		tap_skips);
	return tap_failures ? 1 : 0;
}
