// SPDX-License-Identifier: MIT
/* Request validation rules of the API (pure functions). */
#include "api/validate.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <string.h>

static struct workload w_checkout = {.name = "checkout"};
static struct workload w_pf = {.name = "pf_major"};
static struct workload *items[] = {&w_checkout, &w_pf};
static const struct workload_registry registry = {.items = items, .n = 2};

static const struct request_defaults defaults = {
    .tau = 3, .window_s = 5, .repeats = 4, .llm_configured = false};

/* Parse text, validate as a diagnose body; returns the error code ("" when valid). */
static const char *diag(const char *text, json_t **ret_norm, const struct request_defaults *d)
{
	static struct api_error e;
	json_auto_t *body = NULL;
	json_error_t jerr;
	json_t *norm = NULL;
	int r;

	body = json_loads(text, 0, &jerr);
	REQUIRE(body);
	memset(&e, 0, sizeof(e));
	r = validate_diagnose(body, d ? d : &defaults, &registry, &norm, &e);
	if (r < 0) {
		CHECKF(r == -EINVAL && e.status == 400 && e.code[0] && e.message[0], "%s", text);
		CHECKF(norm == NULL, "%s", text);
		return e.code;
	}
	if (ret_norm)
		*ret_norm = norm;
	else
		json_decref(norm);
	return "";
}

static const char *refreq(const char *text, json_t **ret_norm)
{
	static struct api_error e;
	json_auto_t *body = json_loads(text, 0, NULL);
	json_t *norm = NULL;

	REQUIRE(body);
	memset(&e, 0, sizeof(e));
	if (validate_reference_request(body, &defaults, &registry, &norm, &e) < 0) {
		CHECKF(e.status == 400 && e.code[0] && e.message[0], "%s", text);
		return e.code;
	}
	if (ret_norm)
		*ret_norm = norm;
	else
		json_decref(norm);
	return "";
}

/* The last error message, to check that it names the field. */
static struct api_error last;

static const char *diag_msg(const char *text)
{
	json_auto_t *body = json_loads(text, 0, NULL);
	json_t *norm = NULL;

	REQUIRE(body);
	memset(&last, 0, sizeof(last));
	if (validate_diagnose(body, &defaults, &registry, &norm, &last) == 0)
		json_decref(norm);
	return last.message;
}

#define EXPECT_DIAG(text, code)                                                                    \
	CHECKF(strcmp(diag(text, NULL, NULL), code) == 0, "%s => %s", text, code)
#define EXPECT_REF(text, code) CHECKF(strcmp(refreq(text, NULL), code) == 0, "%s => %s", text, code)

static void test_diagnose_good(void)
{
	json_auto_t *n = NULL, *expect = NULL;
	struct request_defaults llm = defaults;

	CHECK(strcmp(diag("{\"workload\": \"checkout\"}", &n, NULL), "") == 0);
	expect =
	    json_pack("{s:s,s:s,s:s,s:f,s:i,s:b}", "workload", "checkout", "subject", "checkout",
		      "agent", "builtin", "tau", 3.0, "max_depth", 3, "calibration", 1);
	CHECKF(json_equal(n, expect), "%s", json_dumps(n, 0));
	json_decref(TAKE_PTR(n));
	json_decref(TAKE_PTR(expect));

	CHECK(strcmp(diag("{\"target\": {\"pid\": 4242}, \"tau\": 2, \"max_depth\": 1,"
			  " \"calibration\": false, \"reference\": 7}",
			  &n, NULL),
		     "") == 0);
	expect = json_pack("{s:{s:i},s:s,s:I,s:s,s:f,s:i,s:i,s:b}", "target", "pid", 4242,
			   "subject", "pid:4242", "reference", (json_int_t)7, "agent", "builtin",
			   "tau", 2.0, "max_depth", 1, "window_s", 5, "calibration", 0);
	CHECKF(json_equal(n, expect), "%s", json_dumps(n, 0));
	json_decref(TAKE_PTR(n));
	json_decref(TAKE_PTR(expect));

	CHECK(strcmp(diag("{\"target\": {\"unit\": \"nginx.service\"}, \"window_s\": 600,"
			  " \"tau\": 0.5, \"agent\": \"builtin\"}",
			  &n, NULL),
		     "") == 0);
	CHECK(strcmp(json_string_value(json_object_get(n, "subject")), "unit:nginx.service") == 0);
	CHECK(json_integer_value(json_object_get(n, "window_s")) == 600);
	CHECK(json_real_value(json_object_get(n, "tau")) == 0.5);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(n, "target"), "unit")),
		     "nginx.service") == 0);
	json_decref(TAKE_PTR(n));

	/* tau at the top of its range, llm when configured */
	llm.llm_configured = true;
	CHECK(
	    strcmp(diag("{\"workload\": \"pf_major\", \"tau\": 100, \"agent\": \"llm\"}", &n, &llm),
		   "") == 0);
	CHECK(strcmp(json_string_value(json_object_get(n, "agent")), "llm") == 0);
	CHECK(json_real_value(json_object_get(n, "tau")) == 100);
	CHECK(!json_object_get(n, "window_s"));
	CHECK(!json_object_get(n, "reference"));
	json_decref(TAKE_PTR(n));

	/* the configured tau is the default */
	llm.tau = 4.5;
	CHECK(strcmp(diag("{\"workload\": \"pf_major\"}", &n, &llm), "") == 0);
	CHECK(json_real_value(json_object_get(n, "tau")) == 4.5);
	json_decref(TAKE_PTR(n));
}

static void test_diagnose_bad(void)
{
	/* unknown fields, named */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"color\": 1}", "unknown_field");
	CHECK(strstr(diag_msg("{\"workload\": \"checkout\", \"color\": 1}"), "\"color\""));
	EXPECT_DIAG("{\"target\": {\"pid\": 1, \"tid\": 2}}", "unknown_field");
	CHECK(strstr(diag_msg("{\"target\": {\"pid\": 1, \"tid\": 2}}"), "target.tid"));
	EXPECT_DIAG("{\"workload\": \"checkout\", \"repeats\": 3}", "unknown_field");
	/* a very long unknown name is not echoed whole */
	{
		char text[1024];
		char name[600];

		memset(name, 'x', sizeof(name) - 1);
		name[sizeof(name) - 1] = 0;
		snprintf(text, sizeof(text), "{\"workload\": \"checkout\", \"%s\": 1}", name);
		CHECK(strlen(diag_msg(text)) < 300);
	}

	/* subject */
	EXPECT_DIAG("{}", "missing_field");
	EXPECT_DIAG("{\"tau\": 3}", "missing_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"target\": {\"pid\": 1}}", "conflicting_fields");
	EXPECT_DIAG("{\"workload\": \"nope\"}", "unknown_workload");
	CHECK(strstr(diag_msg("{\"workload\": \"nope\"}"), "\"nope\""));
	EXPECT_DIAG("{\"workload\": 3}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"Bad Name\"}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"\"}", "bad_field");
	EXPECT_DIAG("{\"workload\": null}", "bad_field");
	EXPECT_DIAG("{\"target\": 5}", "bad_field");
	EXPECT_DIAG("{\"target\": {}}", "missing_field");
	EXPECT_DIAG("{\"target\": {\"pid\": 1, \"unit\": \"a.service\"}}", "conflicting_fields");
	EXPECT_DIAG("{\"target\": {\"pid\": 0}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": -4}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": 1.5}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": \"42\"}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": 99999999999}}", "bad_field");
	CHECK(strstr(diag_msg("{\"target\": {\"pid\": 0}}"), "target.pid"));
	EXPECT_DIAG("{\"target\": {\"unit\": \"nginx\"}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"unit\": \"a b.service\"}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"unit\": \"../x.service\"}}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"unit\": 7}}", "bad_field");

	/* reference */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"reference\": 0}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"reference\": \"3\"}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"reference\": 2.5}", "bad_field");

	/* agent */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"agent\": \"gpt\"}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"agent\": 1}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"agent\": \"llm\"}", "llm_not_configured");

	/* tau */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"tau\": 0.49}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"tau\": 100.01}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"tau\": \"3\"}", "bad_field");
	CHECK(strstr(diag_msg("{\"workload\": \"checkout\", \"tau\": 0}"), "\"tau\""));
	CHECK(strstr(diag_msg("{\"workload\": \"checkout\", \"tau\": 0}"), "0.5"));

	/* max_depth */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"max_depth\": 0}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"max_depth\": 4}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"max_depth\": 2.0}", "bad_field");

	/* window_s: targets only, 1..600 */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"window_s\": 5}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": 3}, \"window_s\": 0}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": 3}, \"window_s\": 601}", "bad_field");
	EXPECT_DIAG("{\"target\": {\"pid\": 3}, \"window_s\": true}", "bad_field");

	/* calibration */
	EXPECT_DIAG("{\"workload\": \"checkout\", \"calibration\": 0}", "bad_field");
	EXPECT_DIAG("{\"workload\": \"checkout\", \"calibration\": \"false\"}", "bad_field");

	/* not an object */
	{
		json_auto_t *arr = json_array();
		struct api_error e;
		json_t *n = NULL;

		CHECK(validate_diagnose(arr, &defaults, &registry, &n, &e) == -EINVAL);
		CHECK(strcmp(e.code, "bad_body") == 0);
	}
	/* no registry: every workload is unknown */
	{
		json_auto_t *body = json_pack("{s:s}", "workload", "checkout");
		struct api_error e;
		json_t *n = NULL;

		CHECK(validate_diagnose(body, &defaults, NULL, &n, &e) == -EINVAL);
		CHECK(strcmp(e.code, "unknown_workload") == 0);
	}
}

static void test_references(void)
{
	json_auto_t *n = NULL;

	CHECK(strcmp(refreq("{\"workload\": \"checkout\"}", &n), "") == 0);
	CHECK(json_integer_value(json_object_get(n, "repeats")) == 4); /* the configured default */
	CHECK(strcmp(json_string_value(json_object_get(n, "subject")), "checkout") == 0);
	CHECK(!json_object_get(n, "window_s"));
	json_decref(TAKE_PTR(n));

	CHECK(strcmp(refreq("{\"target\": {\"unit\": \"db.service\"}, \"repeats\": 20, "
			    "\"window_s\": 10}",
			    &n),
		     "") == 0);
	CHECK(json_integer_value(json_object_get(n, "repeats")) == 20);
	CHECK(json_integer_value(json_object_get(n, "window_s")) == 10);
	CHECK(strcmp(json_string_value(json_object_get(n, "subject")), "unit:db.service") == 0);
	json_decref(TAKE_PTR(n));

	CHECK(strcmp(refreq("{\"target\": {\"pid\": 77}, \"repeats\": 3}", &n), "") == 0);
	CHECK(json_integer_value(json_object_get(n, "window_s")) == 5);
	CHECK(strcmp(json_string_value(json_object_get(n, "subject")), "pid:77") == 0);
	json_decref(TAKE_PTR(n));

	EXPECT_REF("{\"workload\": \"checkout\", \"repeats\": 2}", "bad_field");
	EXPECT_REF("{\"workload\": \"checkout\", \"repeats\": 21}", "bad_field");
	EXPECT_REF("{\"workload\": \"checkout\", \"repeats\": \"5\"}", "bad_field");
	EXPECT_REF("{\"workload\": \"checkout\", \"tau\": 3}", "unknown_field");
	EXPECT_REF("{\"workload\": \"checkout\", \"window_s\": 3}", "bad_field");
	EXPECT_REF("{\"workload\": \"ghost\"}", "unknown_workload");
	EXPECT_REF("{\"workload\": \"checkout\", \"target\": {\"pid\": 2}}", "conflicting_fields");
	EXPECT_REF("{\"repeats\": 5}", "missing_field");
}

static void test_ids(void)
{
	int64_t id = -1;

	CHECK(validate_id("1", &id) == 0 && id == 1);
	CHECK(validate_id("9223372036854775807", &id) == 0 && id == INT64_MAX);
	id = 5;
	CHECK(validate_id("9223372036854775808", &id) == -EINVAL);
	CHECK(validate_id("0", &id) == -EINVAL);
	CHECK(validate_id("012", &id) == -EINVAL);
	CHECK(validate_id("-3", &id) == -EINVAL);
	CHECK(validate_id("+3", &id) == -EINVAL);
	CHECK(validate_id("3a", &id) == -EINVAL);
	CHECK(validate_id("", &id) == -EINVAL);
	CHECK(validate_id(NULL, &id) == -EINVAL);
	CHECK(id == 5); /* untouched on failure */
}

static void test_queries(void)
{
	struct job_filter f;
	struct api_error e;
	const char *subject;
	int limit;

	{
		CHECK(validate_job_query(NULL, 0, &f, &e) == 0);
		CHECK(f.limit == 50 && !f.state && !f.kind && !f.workload && f.before_id == 0);
	}
	{
		struct query_arg a[] = {{"state", "running"},
					{"kind", "reference"},
					{"workload", "pf_major"},
					{"limit", "500"},
					{"before", "99"}};
		CHECK(validate_job_query(a, ARRAY_SIZE(a), &f, &e) == 0);
		CHECK(strcmp(f.state, "running") == 0 && strcmp(f.kind, "reference") == 0);
		CHECK(strcmp(f.workload, "pf_major") == 0 && f.limit == 500 && f.before_id == 99);
	}
	{
		static const struct query_arg bad[][1] = {
		    {{"state", "sleeping"}}, {{"kind", "probe"}}, {{"workload", "A B"}},
		    {{"limit", "0"}},	     {{"limit", "501"}},  {{"limit", "ten"}},
		    {{"before", "-1"}},	     {{"before", "x"}},	  {{"state", NULL}},
		    {{"state", ""}},
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			memset(&e, 0, sizeof(e));
			CHECKF(validate_job_query(bad[i], 1, &f, &e) == -EINVAL, "%s=%s",
			       bad[i][0].key, bad[i][0].value ? bad[i][0].value : "(null)");
			CHECK(e.status == 400 && strcmp(e.code, "bad_field") == 0);
		}
	}
	{
		struct query_arg a[] = {{"sort", "id"}};
		CHECK(validate_job_query(a, 1, &f, &e) == -EINVAL);
		CHECK(strcmp(e.code, "unknown_field") == 0);
	}
	{
		struct query_arg a[] = {{"state", "queued"}, {"state", "running"}};
		CHECK(validate_job_query(a, 2, &f, &e) == -EINVAL);
	}
	{
		char longv[API_QUERY_VALUE_MAX + 2];
		struct query_arg a[] = {{"workload", longv}};

		memset(longv, 'a', sizeof(longv) - 1);
		longv[sizeof(longv) - 1] = 0;
		CHECK(validate_job_query(a, 1, &f, &e) == -EINVAL);
	}
	{
		struct query_arg a[API_QUERY_ARGS_MAX + 1];
		size_t i;

		for (i = 0; i < ARRAY_SIZE(a); i++)
			a[i] = (struct query_arg){"limit", "1"};
		CHECK(validate_job_query(a, ARRAY_SIZE(a), &f, &e) == -EINVAL);
		CHECK(strcmp(e.code, "bad_query") == 0);
	}

	CHECK(validate_reference_query(NULL, 0, &subject, &limit, &e) == 0);
	CHECK(subject == NULL && limit == 50);
	{
		struct query_arg a[] = {{"subject", "unit:db.service"}, {"limit", "3"}};
		CHECK(validate_reference_query(a, 2, &subject, &limit, &e) == 0);
		CHECK(strcmp(subject, "unit:db.service") == 0 && limit == 3);
	}
	{
		struct query_arg a[] = {{"subject", "pid:12"}};
		CHECK(validate_reference_query(a, 1, &subject, &limit, &e) == 0);
	}
	{
		static const char *const bad[] = {"pid:0", "pid:x", "unit:nginx", "Bad!", ""};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			struct query_arg a[] = {{"subject", bad[i]}};
			CHECKF(validate_reference_query(a, 1, &subject, &limit, &e) == -EINVAL,
			       "%s", bad[i]);
		}
	}
	{
		struct query_arg a[] = {{"state", "queued"}};
		CHECK(validate_reference_query(a, 1, &subject, &limit, &e) == -EINVAL);
		CHECK(strcmp(e.code, "unknown_field") == 0);
	}
}

static void test_body_parse(void)
{
	struct api_error e;
	json_t *j = NULL;
	const char *bad = "{\"workload\": \n \"x\",}";

	CHECK(api_parse_body(bad, strlen(bad), &j, &e) == -EINVAL);
	CHECK(e.status == 400 && strcmp(e.code, "bad_json") == 0);
	CHECKF(strstr(e.message, "line 2"), "%s", e.message);
	CHECKF(strstr(e.message, "column"), "%s", e.message);
	CHECK(api_parse_body("", 0, &j, &e) == -EINVAL && strcmp(e.code, "bad_json") == 0);
	CHECK(api_parse_body(NULL, 0, &j, &e) == -EINVAL);
	CHECK(api_parse_body("[1]", 3, &j, &e) == -EINVAL && strcmp(e.code, "bad_body") == 0);
	CHECK(api_parse_body("{\"a\":1,\"a\":2}", 13, &j, &e) == -EINVAL);
	CHECK(j == NULL);
	/* length-delimited: trailing bytes past len are not parsed */
	CHECK(api_parse_body("{\"a\":1}garbage", 7, &j, &e) == 0);
	CHECK(json_integer_value(json_object_get(j, "a")) == 1);
	json_decref(j);

	/* messages quote the caller's bytes; they stay valid UTF-8, so the error body is JSON */
	{
		const char *raw = "{\"a\": \"\\ud8\xff\"}";
		struct query_arg a[] = {{"st\xe9te", "queued"}};
		struct job_filter f;
		json_t *body;

		CHECK(api_parse_body(raw, strlen(raw), &j, &e) == -EINVAL);
		body = api_error_json(e.code, e.message);
		CHECKF(body != NULL, "%s", e.message);
		json_decref(body);
		CHECK(validate_job_query(a, 1, &f, &e) == -EINVAL);
		body = api_error_json(e.code, e.message);
		CHECKF(body != NULL && strstr(e.message, "st?te"), "%s", e.message);
		json_decref(body);
	}
}

int main(void)
{
	test_diagnose_good();
	test_diagnose_bad();
	test_references();
	test_ids();
	test_queries();
	test_body_parse();
	return tap_done("test-validate");
}
