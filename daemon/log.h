/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr with sd-daemon priority prefixes ("<3>"), which journald
 * turns into real priorities. Thread safe: each line is one write(2).
 */
#pragma once

#include <errno.h>
#include <syslog.h>

/* Lines below this priority are dropped; LOG_INFO by default. */
void log_set_max_level(int level);
int log_get_max_level(void);

/*
 * Write one line at the given priority. Returns -abs(err) when err != 0 so
 * that callers can "return log_error_errno(r, ...)"; errno is set to abs(err)
 * while formatting, so "%m" names that error.
 */
int log_internal(int level, int err, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define log_full_errno(level, err, ...) log_internal(level, err, __FILE__, __LINE__, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning_errno(err, ...) log_full_errno(LOG_WARNING, err, __VA_ARGS__)
#define log_error_errno(err, ...) log_full_errno(LOG_ERR, err, __VA_ARGS__)
#define log_debug_errno(err, ...) log_full_errno(LOG_DEBUG, err, __VA_ARGS__)
