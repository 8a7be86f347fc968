/* SPDX-License-Identifier: MIT */
/*
 * JSON helpers of the HTTP API: the error shape {"error": {"code", "message"}}
 * and parsing of request bodies into it. Pure: no logging, no globals.
 */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <jansson.h>

/* Caller text quoted in messages is cut to this many bytes. */
#define API_QUOTE_MAX 64

/* An API error before it becomes a response: HTTP status, stable code, a message saying what to
 * fix. */
struct api_error {
	unsigned status;
	char code[32];
	char message[384];
};

/* Fill e (message printf-like, truncated to fit, made valid UTF-8: bytes that are not become
 * '?'); returns -EINVAL for "return api_error_set(...)".
 */
int api_error_set(struct api_error *e, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* {"error": {"code": code, "message": message}} (new reference). */
json_t *api_error_json(const char *code, const char *message);

/*
 * Parse a request body (len bytes, not NUL terminated) that must hold one
 * JSON object. Malformed JSON is 400 "bad_json" with jansson's line and
 * column; anything but an object is 400 "bad_body".
 */
int api_parse_body(const char *body, size_t len, json_t **ret, struct api_error *err);

/* Compact text of a JSON value (caller frees), or NULL. */
char *api_dump(const json_t *j);
