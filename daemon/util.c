// SPDX-License-Identifier: MIT
#include "daemon/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

uint64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

char *format_iso8601(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = real_ns / 1000000000ull;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	ssize_t n;

	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		n = read(fd, buf + len, max + 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += n;
		if (len > max)
			return -EFBIG;
	}
	buf[len] = 0;
	if (ret_len)
		*ret_len = len;
	*ret = TAKE_PTR(buf);
	return 0;
}

int read_file_bounded(const char *path, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd_bounded(fd, max, ret, ret_len);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p)
		abort();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s ? s : "", n);

	if (!p)
		abort();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		abort();
	return p;
}

int set_error(char **ret_err, int r, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	/* it may quote a file, program output or a body cut at a byte count: errors go out as JSON
	 */
	utf8_sanitize(msg);
	if (ret_err)
		*ret_err = msg;
	else
		free(msg);
	return r;
}

bool valid_name(const char *s, size_t max)
{
	size_t i;

	if (!s || !*s || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= max)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

/* Length of the well-formed UTF-8 sequence at s, or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s)
{
	unsigned c = s[0], cp, min;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* a NUL ends the sequence here too */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *utf8_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (p && *p) {
		size_t n = utf8_sequence(p);

		if (n == 0) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
	return s;
}

/* A Unix user name as useradd accepts it: [a-z_][a-z0-9_-]*[$]?, at most 32 bytes. */
bool valid_user_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 32)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
			continue;
		if (c == '$' && i == n - 1)
			continue;
		return false;
	}
	return true;
}

const char *json_plain_string(const json_t *v, size_t max)
{
	const char *s;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) || strlen(s) > max)
		return NULL;
	return s;
}

bool json_strings_have(const json_t *a, const char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (strcmp(json_string_value(v) ?: "", s) == 0)
			return true;
	return false;
}

void strv_push(char ***v, size_t *n, char *s)
{
	char **e = realloc(*v, (*n + 1) * sizeof(char *));

	if (!e)
		abort();
	*v = e;
	e[(*n)++] = s;
}
