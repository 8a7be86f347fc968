// SPDX-License-Identifier: MIT
/*
 * Entity tags: a 64-bit FNV-1a hash of the body. Not a secret and not
 * chosen by a caller: the body is argusd's own, so a collision would need
 * two answers argusd itself wrote that differ and hash alike.
 */
#include "api/etag.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void etag_of(const char *body, size_t len, char ret[static ETAG_LEN])
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)body[i];
		h *= 0x100000001b3ull;
	}
	snprintf(ret, ETAG_LEN, "\"%016llx\"", (unsigned long long)h);
}

bool etag_listed(const char *if_none_match, const char *tag)
{
	const char *p = if_none_match;
	size_t tag_len = strlen(tag);

	if (!p)
		return false;
	p += strspn(p, " \t");
	if (p[0] == '*' && p[1 + strspn(p + 1, " \t")] == 0)
		return true;
	while (*p) {
		const char *end;

		p += strspn(p, " \t,");
		if (!*p)
			break;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (*p != '"')
			return false;
		end = strchr(p + 1, '"');
		if (!end)
			return false;
		if ((size_t)(end + 1 - p) == tag_len && memcmp(p, tag, tag_len) == 0)
			return true;
		p = end + 1;
		p += strspn(p, " \t");
		if (*p && *p != ',')
			return false;
	}
	return false;
}
