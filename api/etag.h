/* SPDX-License-Identifier: MIT */
/*
 * Entity tags of the API's answers (RFC 9110, 8.8.3): a strong tag from
 * the bytes of the body, and If-None-Match's comparison against one.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* "\"" + 16 hex digits + "\"" and the NUL */
#define ETAG_LEN 19

/* The tag of len bytes of body. */
void etag_of(const char *body, size_t len, char ret[static ETAG_LEN]);
/*
 * Whether an If-None-Match value names tag: "*", or a comma-separated list
 * of tags, weak ones (W/"...") compared by their opaque part as the RFC's
 * weak comparison does. NULL or malformed: false.
 */
bool etag_listed(const char *if_none_match, const char *tag);
