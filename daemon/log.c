// SPDX-License-Identifier: MIT
#include "daemon/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
	max_level = level;
}

int log_get_max_level(void)
{
	return max_level;
}

int log_internal(int level, int err, const char *file, int line, const char *fmt, ...)
{
	char buf[2048];
	int saved = errno, n;
	va_list ap;

	if (err < 0)
		err = -err;
	if (level > max_level)
		goto out;

	errno = err;
	n = snprintf(buf, sizeof(buf), "<%d>", level);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	if (max_level >= LOG_DEBUG)
		n += snprintf(buf + n, sizeof(buf) - n, " (%s:%d)", file, line);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, n);
out:
	errno = saved;
	return err ? -err : 0;
}
