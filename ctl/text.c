// SPDX-License-Identifier: MIT
/*
 * Text helpers of argusctl (text.h).
 */
#include "ctl/text.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

char *strprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	return s;
}

void text_emit(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		fputc(c < 0x20 && c != '\n' && c != '\t' ? '?' : c == 0x7f ? '?' : c, f);
	}
}

void print_error(const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg) {
		fputs("argusctl: out of memory\n", stderr);
		return;
	}
	/* one line: a newline inside the message would split it */
	for (len = 0; msg[len]; len++)
		if (msg[len] == '\n' || msg[len] == '\t')
			msg[len] = ' ';
	fputs("argusctl: ", stderr);
	text_emit(stderr, msg, len);
	fputc('\n', stderr);
}
