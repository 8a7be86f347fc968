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

/* The MESSAGE_ID of a finished job's entry ("journalctl MESSAGE_ID=..."). */
#define LOG_JOB_FINISHED_ID "11778bd5f9bf403899d9591239e9d909"

/* What log_job_finished says: those fields not NULL or empty are the entry's too. */
struct log_job {
	long long id;
	const char *kind, *subject, *state; /* "diagnose", "pf_page_cache", "succeeded" */
	const char *verdict, *node;	     /* a diagnosis's verdict, the node it named */
	const char *error;		     /* a failed job's message */
};

/*
 * A finished job, in one line (a warning when it failed): on the journal's
 * stream with the fields JOB_ID, JOB_KIND, SUBJECT, JOB_STATE, VERDICT,
 * NODE and MESSAGE_ID (journalctl -u argusd JOB_ID=42); elsewhere as text.
 */
void log_job_finished(const struct log_job *j);
