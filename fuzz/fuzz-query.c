// SPDX-License-Identifier: MIT
/*
 * Query and id parsing: the bytes are a request target, "PATH?QUERY". The
 * path's id segment (as /jobs/ID and /references/ID carry it) and every
 * query value go through validate_id; the query, split and unescaped as
 * libmicrohttpd hands it over (at most one argument past the limit, as
 * api/http.c collects them), goes through the GET /jobs, GET /jobs/ID and
 * GET /references validators.
 *
 * Properties: validate_id accepts exactly the canonical decimal numbers
 * from 1 to INT64_MAX (checked against strtoll) and returns their value;
 * an accepted query has known, distinct keys and values in range, and the
 * filter it returns points into the arguments given; GET /jobs/ID's wait is
 * the value's canonical decimal within its bound; a refusal is a 400 that
 * can be sent as JSON.
 */
#include "api/json.h"
#include "api/validate.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define ID_SEGMENT_MAX 32 /* api/routes.c */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

static void check_error(const struct api_error *e)
{
	json_t *body;

	FUZZ_CHECK(e->status == 400, "status %u", e->status);
	FUZZ_CHECK(memchr(e->code, 0, sizeof(e->code)) && e->code[0], "code");
	FUZZ_CHECK(memchr(e->message, 0, sizeof(e->message)) && e->message[0], "message");
	body = api_error_json(e->code, e->message);
	FUZZ_CHECK(body != NULL, "the error cannot be sent as JSON: \"%s\"", e->message);
	json_decref(body);
}

/* validate_id against an independent reading of the same text. */
static void check_id(const char *s)
{
	int64_t v = -1;
	int r = validate_id(s, &v);
	bool canonical = s[0] >= '1' && s[0] <= '9';
	long long want = 0;
	char *end = NULL, buf[32];
	size_t i;

	for (i = 0; s[i] && canonical; i++)
		canonical = s[i] >= '0' && s[i] <= '9';
	if (canonical) {
		errno = 0;
		want = strtoll(s, &end, 10);
		canonical = errno == 0 && *end == 0 && want >= 1;
	}
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && v == -1, "r=%d, output written on failure", r);
		FUZZ_CHECK(!canonical, "validate_id refuses \"%s\"", s);
		return;
	}
	FUZZ_CHECK(r == 0 && canonical && v == want, "validate_id(\"%s\") = %" PRId64, s, v);
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	FUZZ_CHECK(!strcmp(buf, s), "id %s prints back as %s", s, buf);
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* %XX decoded in place; a decoded NUL ends the C string, as for libmicrohttpd's values. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '%' && hex(s[1]) >= 0 && hex(s[2]) >= 0) {
			*o++ = (char)(hex(s[1]) << 4 | hex(s[2]));
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static bool pointed_into(const char *p, const struct query_arg *args, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p == args[i].value)
			return true;
	return false;
}

static bool keys_ok(const struct query_arg *args, size_t n, const char *const *allowed)
{
	size_t i, j, k;

	if (n > API_QUERY_ARGS_MAX)
		return false;
	for (i = 0; i < n; i++) {
		for (k = 0; allowed[k] && strcmp(allowed[k], args[i].key); k++)
			;
		if (!allowed[k] || !args[i].value || !*args[i].value ||
		    strlen(args[i].value) > API_QUERY_VALUE_MAX)
			return false;
		for (j = 0; j < i; j++)
			if (!strcmp(args[i].key, args[j].key))
				return false;
	}
	return true;
}

static const char *value_of(const struct query_arg *args, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(args[i].key, key))
			return args[i].value;
	return NULL;
}

static void check_job_query(const struct query_arg *args, size_t n)
{
	static const char *const allowed[] = {"state", "kind",	"workload", "subject", "since",
					      "until", "limit", "before",   NULL};
	static const char *const states[] = {"queued", "running",   "succeeded",
					     "failed", "cancelled", "interrupted"};
	struct job_filter f = {.limit = -7, .before_id = -7};
	struct api_error e = {};
	const char *before;
	bool ok = false;
	size_t i;

	if (validate_job_query(args, n, &f, &e) < 0) {
		FUZZ_CHECK(f.limit == -7 && f.before_id == -7, "filter written on failure");
		check_error(&e);
		return;
	}
	FUZZ_CHECK(keys_ok(args, n, allowed),
		   "unknown, repeated or empty query arguments accepted");
	FUZZ_CHECK(f.limit >= 1 && f.limit <= API_LIST_MAX, "limit %d", f.limit);
	FUZZ_CHECK(value_of(args, n, "limit") || f.limit == API_LIST_DEFAULT, "default limit");
	before = value_of(args, n, "before");
	FUZZ_CHECK(before ? f.before_id >= 1 : f.before_id == 0, "before_id %" PRId64, f.before_id);
	if (before) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%" PRId64, f.before_id);
		FUZZ_CHECK(!strcmp(buf, before), "before=%s read as %s", before, buf);
	}
	if (f.state) {
		FUZZ_CHECK(pointed_into(f.state, args, n), "state");
		for (i = 0; i < ARRAY_SIZE(states); i++)
			ok |= !strcmp(f.state, states[i]);
		FUZZ_CHECK(ok, "state %s", f.state);
	}
	FUZZ_CHECK(!f.kind || (pointed_into(f.kind, args, n) &&
			       (!strcmp(f.kind, "diagnose") || !strcmp(f.kind, "reference"))),
		   "kind");
	FUZZ_CHECK(!f.workload || (pointed_into(f.workload, args, n) &&
				   valid_name(f.workload, WORKLOAD_NAME_MAX)),
		   "workload");
	FUZZ_CHECK(f.subject == value_of(args, n, "subject"), "subject");
	FUZZ_CHECK(!f.subject || strchr(f.subject, ':') || valid_name(f.subject, WORKLOAD_NAME_MAX),
		   "subject %s", f.subject);
	FUZZ_CHECK(f.since == value_of(args, n, "since") && f.until == value_of(args, n, "until"),
		   "since, until");
	/* a time as jobs carry it, or a day: compared as text with "created" */
	for (i = 0; i < 2; i++) {
		const char *t = i ? f.until : f.since;

		FUZZ_CHECK(!t || ((strlen(t) == 10 || (strlen(t) == 20 && t[10] == 'T' && t[19] == 'Z')) &&
				  t[4] == '-' && t[7] == '-' && !strchr(t, ' ') && !strchr(t, '\'')),
			   "time %s", t);
	}
}

static void check_reference_query(const struct query_arg *args, size_t n)
{
	static const char *const allowed[] = {"subject", "limit", NULL};
	struct api_error e = {};
	const char *subject = (const char *)1;
	int limit = -7;

	if (validate_reference_query(args, n, &subject, &limit, &e) < 0) {
		FUZZ_CHECK(limit == -7 && subject == (const char *)1, "output written on failure");
		check_error(&e);
		return;
	}
	FUZZ_CHECK(keys_ok(args, n, allowed),
		   "unknown, repeated or empty query arguments accepted");
	FUZZ_CHECK(limit >= 1 && limit <= API_LIST_MAX, "limit %d", limit);
	FUZZ_CHECK(subject == value_of(args, n, "subject"), "subject");
	FUZZ_CHECK(!subject || strchr(subject, ':') || valid_name(subject, WORKLOAD_NAME_MAX),
		   "subject %s", subject);
}

/* GET /jobs/ID: "wait", whose value is exactly a decimal second count within the bound. */
static void check_job_get_query(const struct query_arg *args, size_t n)
{
	static const char *const allowed[] = {"wait", NULL};
	const char *v = value_of(args, n, "wait");
	struct api_error e = {};
	unsigned wait_s = 12345;
	char buf[16];

	if (validate_job_get_query(args, n, &wait_s, &e) < 0) {
		FUZZ_CHECK(wait_s == 12345, "output written on failure");
		check_error(&e);
		return;
	}
	FUZZ_CHECK(keys_ok(args, n, allowed),
		   "unknown, repeated or empty query arguments accepted");
	FUZZ_CHECK(wait_s <= API_WAIT_MAX_S, "wait %u", wait_s);
	if (!v) {
		FUZZ_CHECK(wait_s == 0, "no wait given, %u taken", wait_s);
		return;
	}
	snprintf(buf, sizeof(buf), "%u", wait_s);
	FUZZ_CHECK(!strcmp(buf, v), "wait \"%s\" taken as %u", v, wait_s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = fuzz_strndup(data, size);
	struct query_arg args[API_QUERY_ARGS_MAX + 1];
	char *path = text, *query = strchr(text, '?'), *item, *id;
	size_t n = 0, i;

	if (query)
		*query++ = 0;

	/* the path's id segment, as api/routes.c cuts it */
	if (!strncmp(path, "/jobs/", 6))
		id = path + 6;
	else if (!strncmp(path, "/references/", 12))
		id = path + 12;
	else
		id = path;
	id[strcspn(id, "/")] = 0;
	if (strlen(id) <= ID_SEGMENT_MAX || id == path)
		check_id(id);

	while (query && (item = strsep(&query, "&"))) {
		char *eq = strchr(item, '=');

		if (!*item)
			continue;
		if (eq)
			*eq = 0;
		unescape(item);
		if (eq)
			unescape(eq + 1);
		args[n++] = (struct query_arg){item, eq ? eq + 1 : NULL};
		if (n == ARRAY_SIZE(args))
			break;
	}
	for (i = 0; i < n; i++)
		if (args[i].value)
			check_id(args[i].value);
	check_job_query(args, n);
	check_job_get_query(args, n);
	check_reference_query(args, n);
	return 0;
}
