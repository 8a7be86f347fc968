/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by every module: cleanup attributes for owned
 * resources, time, and bounded string handling.
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include <jansson.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}
static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
/* A NULL-terminated array of strings and the array itself; NULL is fine. */
static inline void strv_free(char **v)
{
	char **p;

	for (p = v; p && *p; p++)
		free(*p);
	free(v);
}
static inline void strv_freep(char ***v)
{
	strv_free(*v);
}
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Take ownership out of a cleanup variable. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		typeof(p) _p = (p);                                                                \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd = (fd);                                                                    \
		(fd) = -1;                                                                         \
		_fd;                                                                               \
	})

/* CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds. */
uint64_t now_mono_ns(void);
uint64_t now_real_ns(void);
/* ISO 8601 UTC ("2026-11-29T07:32:14Z") of a CLOCK_REALTIME ns value, into buf of >= 32 bytes. */
char *format_iso8601(uint64_t real_ns, char *buf, size_t len);

/* Read a whole file of at most max bytes; NUL terminated. -EFBIG when larger. */
int read_file_bounded(const char *path, size_t max, char **ret, size_t *ret_len);
/* The same from an open fd, read to its end. */
int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len);
/* strdup that aborts on OOM: allocation failure here is not recoverable. */
char *xstrdup(const char *s);
/* strndup that aborts on OOM. */
char *xstrndup(const char *s, size_t n);
/* asprintf that aborts on OOM. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Set *ret_err (when not NULL) to the formatted message (owned, made valid
 * UTF-8) and return r: one line for "fail with why".
 */
int set_error(char **ret_err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Identifier check: [a-z0-9_][a-z0-9_.-]{0,max-1}, used for names from callers. */
bool valid_name(const char *s, size_t max);
/* A Unix user name as useradd accepts it: [a-z_][a-z0-9_-]*[$]?, at most 32 bytes. */
bool valid_user_name(const char *s);
/* A JSON string without embedded NUL bytes and at most max bytes long, or NULL. */
const char *json_plain_string(const json_t *v, size_t max);
/* Does the JSON array a hold the string s? */
bool json_strings_have(const json_t *a, const char *s);
/* Append s (owned from now) to the array *v of *n strings; aborts on OOM. */
void strv_push(char ***v, size_t *n, char *s);
/*
 * Make s valid UTF-8 in place: every byte that does not belong to a
 * well-formed sequence (overlong forms, surrogates and code points above
 * U+10FFFF included, as JSON encoders refuse them) becomes '?'. For text
 * built from caller or model bytes, or cut at a byte count, that goes into
 * JSON. Returns s; NULL is fine.
 */
char *utf8_sanitize(char *s);
