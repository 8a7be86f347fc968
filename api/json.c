// SPDX-License-Identifier: MIT
#include "api/json.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdio.h>

int api_error_set(struct api_error *e, unsigned status, const char *code, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	snprintf(e->code, sizeof(e->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	/* it quotes the caller's bytes, maybe cut mid-character: the error body is JSON */
	utf8_sanitize(e->message);
	return -EINVAL;
}

json_t *api_error_json(const char *code, const char *message)
{
	/* a message may quote the caller's bytes (a path, a name): JSON holds UTF-8 only */
	_cleanup_free_ char *text = utf8_sanitize(xstrdup(message));

	return json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", text);
}

int api_parse_body(const char *body, size_t len, json_t **ret, struct api_error *err)
{
	json_error_t jerr;
	json_t *doc;

	if (!body || len == 0)
		return api_error_set(err, 400, "bad_json",
				     "the request body is empty; send a JSON object");
	/* duplicate keys would make "which value counts" ambiguous: refuse them */
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return api_error_set(err, 400, "bad_json",
				     "the body is not valid JSON: %.*s (line %d, column %d)",
				     API_QUOTE_MAX * 2, jerr.text, jerr.line, jerr.column);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return api_error_set(err, 400, "bad_body", "the body must be a JSON object");
	}
	*ret = doc;
	return 0;
}

char *api_dump(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
}
