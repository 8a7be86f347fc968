// SPDX-License-Identifier: MIT
/*
 * Service SLIs: definitions parsed, refused and written back; the number on
 * a command's last line; exposition texts read (labels, escapes, summaries,
 * histogram quantiles over bucket deltas, resets); real commands run as
 * nobody through the target runner (a number, a hang, a failure, garbage, a
 * stop); real scrapes of a loopback HTTP server serving canned bodies.
 */
#include "daemon/prom.h"
#include "daemon/sli.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

static char dir[] = "/tmp/test-sli.XXXXXX";

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* JSON written with ' for " (test texts stay readable): \' is an escaped " inside a string. */
static json_t *json_quoted(const char *text)
{
	_cleanup_free_ char *s = xstrdup(text);
	json_error_t e;
	json_t *doc;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	doc = json_loads(s, JSON_ALLOW_NUL, &e);
	if (!doc)
		fprintf(stderr, "bad test JSON %s: %s\n", s, e.text);
	REQUIRE(doc);
	return doc;
}

static struct sli *parse_ok(const char *text)
{
	json_auto_t *doc = json_quoted(text);
	struct sli *s = NULL;
	char *err = NULL;
	int r;

	r = sli_from_json(doc, &s, &err);
	CHECKF(r == 0, "%s: %d %s", text, r, err ?: "");
	free(err);
	return s;
}

/* doc is refused with -EINVAL and a message holding part. */
static void expect_refused_doc(json_t *doc, const char *part, const char *what)
{
	struct sli *s = NULL;
	char *err = NULL;
	int r;

	r = sli_from_json(doc, &s, &err);
	CHECKF(r == -EINVAL, "%s: got %d", what, r);
	CHECKF(!s, "%s: *ret written on failure", what);
	CHECKF(err && strstr(err, part), "%s: message \"%s\" lacks \"%s\"", what, err ?: "(none)",
	       part);
	free(err);
	sli_free(s);
}

static void expect_refused(const char *text, const char *part)
{
	json_auto_t *doc = json_quoted(text);

	expect_refused_doc(doc, part, text);
}

/* s written as JSON parses back to the same JSON. */
static void check_round_trip(const struct sli *s)
{
	json_auto_t *a = sli_to_json(s);
	json_auto_t *b = NULL;
	struct sli *back = NULL;
	char *err = NULL;
	int r;

	r = sli_from_json(a, &back, &err);
	CHECKF(r == 0, "parse back: %d %s", r, err ?: "");
	free(err);
	if (r < 0)
		return;
	b = sli_to_json(back);
	CHECK(json_equal(a, b));
	CHECK(json_is_string(json_object_get(a, "better")));
	CHECK(sli_lower_is_better(back) == sli_lower_is_better(s));
	sli_free(back);
}

static void test_definitions(void)
{
	struct sli *s;
	json_t *j = NULL;

	tap_subtest("definitions");
	s = parse_ok("{'command': ['/usr/bin/redis-benchmark', '-q', '-t', 'get'], "
		     "'better': 'lower', 'unit': 'ms'}");
	if (s) {
		CHECK(sli_is_command(s));
		CHECK(sli_lower_is_better(s));
		CHECK(!sli_is_rate(s));
		CHECK_STREQ(sli_unit(s), "ms", "unit");
		j = sli_to_json(s);
		CHECK_EQ(json_array_size(json_object_get(j, "command")), 4, "argc");
		CHECK(!json_object_get(j, "prometheus"));
		check_round_trip(s);
		sli_free(s);
	}
	s = parse_ok("{'command': ['/bin/true'], 'better': 'higher'}");
	if (s) {
		CHECK(!sli_lower_is_better(s));
		CHECK(!sli_unit(s));
		check_round_trip(s);
		sli_free(s);
	}
	s = parse_ok("{'prometheus': {'url': 'http://127.0.0.1:9121/metrics', "
		     "'metric': 'redis_latency_seconds{cmd=\\'get\\',db=\\'a\\\\\\'b\\'}', "
		     "'kind': 'quantile:0.99'}}");
	if (s) {
		CHECK(!sli_is_command(s));
		CHECK(sli_lower_is_better(s)); /* the default for a quantile */
		CHECK(!sli_is_rate(s));
		check_round_trip(s);
		json_decref(j);
		j = sli_to_json(s);
		CHECK_STREQ(json_string_value(json_object_get(j, "better")), "lower", "better");
		CHECK_STREQ(
		    json_string_value(json_object_get(json_object_get(j, "prometheus"), "kind")),
		    "quantile:0.99", "kind");
		sli_free(s);
	}
	s = parse_ok("{'prometheus': {'url': 'https://svc.example:8443/metrics?x=1', "
		     "'metric': 'http_requests_total', 'kind': 'rate'}, 'unit': 'req/s'}");
	if (s) {
		CHECK(sli_is_rate(s));
		CHECK(!sli_lower_is_better(s)); /* the default for a rate */
		check_round_trip(s);
		sli_free(s);
	}
	s = parse_ok("{'prometheus': {'url': 'http://[::1]:9100/metrics', "
		     "'metric': 'queue_depth{ q = \\'a\\', }', 'kind': 'gauge'}, 'better': "
		     "'higher'}");
	if (s) {
		CHECK(!sli_lower_is_better(s));
		check_round_trip(s);
		sli_free(s);
	}
	json_decref(j);

	/* the object and its fields */
	expect_refused("[]", "sli: must be a JSON object");
	expect_refused("{'command': ['/bin/x'], 'better': 'lower', 'extra': 1}",
		       "sli: unknown field \"extra\"");
	expect_refused("{'better': 'lower'}", "sli: exactly one of");
	expect_refused("{'command': ['/bin/x'], 'prometheus': {}, 'better': 'lower'}",
		       "sli: exactly one of");
	/* command */
	expect_refused("{'command': '/bin/x', 'better': 'lower'}", "sli.command:");
	expect_refused("{'command': [], 'better': 'lower'}", "sli.command: must not be empty");
	expect_refused("{'command': ['bin/x'], 'better': 'lower'}", "sli.command[0]:");
	expect_refused("{'command': ['redis-benchmark'], 'better': 'lower'}", "sli.command[0]:");
	expect_refused("{'command': ['/bin/x', 3], 'better': 'lower'}", "sli.command[1]:");
	expect_refused("{'command': ['/bin/x', 'a\\u0000b'], 'better': 'lower'}",
		       "sli.command[1]:");
	{
		json_auto_t *doc = json_quoted("{'better': 'lower'}");
		json_t *argv = json_array();
		char *big = malloc(4098);

		REQUIRE(big);
		json_array_append_new(argv, json_string("/bin/x"));
		memset(big, 'a', 4097);
		big[4097] = 0;
		json_array_append_new(argv, json_string(big));
		json_object_set_new(doc, "command", argv);
		expect_refused_doc(doc, "sli.command[1]:", "a 4097-byte argument");
		big[4096] = 0; /* 4096 bytes: allowed */
		json_array_set_new(argv, 1, json_string(big));
		{
			struct sli *ok = NULL;

			CHECK(sli_from_json(doc, &ok, NULL) == 0);
			sli_free(ok);
		}
		json_array_clear(argv);
		for (int i = 0; i < 65; i++)
			json_array_append_new(argv, json_string("/bin/x"));
		expect_refused_doc(doc, "sli.command: 65 arguments", "65 arguments");
		free(big);
	}
	expect_refused("{'command': ['/bin/x']}", "sli.better: missing");
	expect_refused("{'command': ['/bin/x'], 'better': 'up'}", "sli.better:");
	expect_refused("{'command': ['/bin/x'], 'better': true}", "sli.better:");
	expect_refused("{'command': ['/bin/x'], 'better': 'lower', 'unit': 'abcdefghijklmnopq'}",
		       "sli.unit:");
	expect_refused("{'command': ['/bin/x'], 'better': 'lower', 'unit': ''}", "sli.unit:");
	expect_refused("{'command': ['/bin/x'], 'better': 'lower', 'unit': 5}", "sli.unit:");
	expect_refused("{'command': ['/bin/x'], 'better': 'lower', 'unit': 'm\\ns'}", "sli.unit:");
	/* prometheus */
	expect_refused("{'prometheus': 'http://h/metrics'}", "sli.prometheus:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': 'gauge', "
		       "'every': 5}}",
		       "sli.prometheus: unknown field \"every\"");
	expect_refused("{'prometheus': {'metric': 'm', 'kind': 'gauge'}}",
		       "sli.prometheus.url: missing");
	expect_refused("{'prometheus': {'url': 'ftp://h/m', 'metric': 'm', 'kind': 'gauge'}}",
		       "sli.prometheus.url:");
	expect_refused("{'prometheus': {'url': 'file:///etc/passwd', 'metric': 'm', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.url:");
	expect_refused("{'prometheus': {'url': 'h:9100/metrics', 'metric': 'm', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.url:");
	expect_refused("{'prometheus': {'url': 'http://', 'metric': 'm', 'kind': 'gauge'}}",
		       "sli.prometheus.url:");
	expect_refused("{'prometheus': {'url': 'http://u:pw@h/m', 'metric': 'm', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.url:");
	expect_refused("{'prometheus': {'url': 7, 'metric': 'm', 'kind': 'gauge'}}",
		       "sli.prometheus.url:");
	{
		json_auto_t *doc = json_quoted("{'prometheus': {'metric': 'm', 'kind': 'gauge'}}");
		char url[1100];

		strcpy(url, "http://h/");
		memset(url + 9, 'a', 1016); /* 1025 bytes */
		url[1025] = 0;
		json_object_set_new(json_object_get(doc, "prometheus"), "url", json_string(url));
		expect_refused_doc(doc, "sli.prometheus.url:", "a 1025-byte URL");
		url[1024] = 0;
		json_object_set_new(json_object_get(doc, "prometheus"), "url", json_string(url));
		{
			struct sli *ok = NULL;

			CHECK(sli_from_json(doc, &ok, NULL) == 0);
			sli_free(ok);
		}
	}
	expect_refused("{'prometheus': {'url': 'http://h/m', 'kind': 'gauge'}}",
		       "sli.prometheus.metric: missing");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 9, 'kind': 'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': '9lives', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm{a=b}', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm{a=\\'b}', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm{a=\\'b\\'', 'kind': "
		       "'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm x', 'kind': 'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm{a=\\'1\\'} x', "
		       "'kind': 'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', "
		       "'metric': 'm{a=\\'1\\',a=\\'2\\'}', 'kind': 'gauge'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm{le=\\'1\\'}', "
		       "'kind': 'quantile:0.9'}}",
		       "sli.prometheus.metric:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm'}}",
		       "sli.prometheus.kind: missing");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': 5}}",
		       "sli.prometheus.kind:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'histogram'}}",
		       "sli.prometheus.kind:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'quantile:'}}",
		       "sli.prometheus.kind:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'quantile:abc'}}",
		       "sli.prometheus.kind:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'quantile:1'}}",
		       "sli.prometheus.kind: quantile 1 is outside (0, 1)");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'quantile:0'}}",
		       "sli.prometheus.kind: quantile 0 is outside");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'quantile:-0.5'}}",
		       "sli.prometheus.kind:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': "
		       "'quantile:nan'}}",
		       "sli.prometheus.kind:");
	expect_refused("{'prometheus': {'url': 'http://h/m', 'metric': 'm', 'kind': 'gauge'}, "
		       "'better': 'best'}",
		       "sli.better:");
}

static void expect_number(const char *out, double want)
{
	double v = -1;
	char *err = NULL;
	int r;

	r = sli_last_number(out, &v, &err);
	CHECKF(r == 0 && near(v, want), "\"%s\": %d %g %s", out, r, v, err ?: "");
	free(err);
}

static void expect_no_number(const char *out, const char *part)
{
	double v = -1;
	char *err = NULL;
	int r;

	r = sli_last_number(out, &v, &err);
	CHECKF(r == -EBADMSG, "\"%s\": got %d", out, r);
	CHECKF(v == -1, "\"%s\": *ret written on failure", out);
	CHECKF(err && strstr(err, part), "\"%s\": message \"%s\" lacks \"%s\"", out,
	       err ?: "(none)", part);
	free(err);
}

static void test_last_number(void)
{
	tap_subtest("last_number");
	expect_number("12.5\n", 12.5);
	expect_number("warmup\n\n  3e2  \n", 300);
	expect_number("a\nb\n-0.25", -0.25);
	expect_number("x\r\n42\r\n\r\n", 42);
	expect_number("\t7\t", 7);
	expect_no_number("", "no output");
	expect_no_number(" \n\n", "no output");
	expect_no_number("abc", "not a number: \"abc\"");
	expect_no_number("1 2", "not a number: \"1 2\"");
	expect_no_number("42 ms\n", "not a number: \"42 ms\"");
	expect_no_number("nan", "not a finite number");
	expect_no_number("inf\n", "not a finite number");
	expect_no_number("1e999\n", "not a finite number");
	expect_no_number("42\nabc\n", "not a number: \"abc\"");
}

/* The text format's own example, and more. */
static const char exposition[] =
    "# HELP http_requests_total The total number of HTTP requests.\n"
    "# TYPE http_requests_total counter\n"
    "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
    "http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n"
    "\n"
    "# Escaping in label values:\n"
    "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
    "file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
    "\n"
    "metric_without_timestamp_and_labels 12.47\n"
    "something_weird{problem=\"division by zero\"} +Inf -3982045\n"
    "# A summary\n"
    "rpc_duration_seconds{quantile=\"0.01\"} 3102\n"
    "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
    "rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
    "rpc_duration_seconds_sum 1.7560473e+07\n"
    "rpc_duration_seconds_count 2693\n"
    "queue_depth{q=\"a\\\"b\",host=\"x\"} 5\n"
    "queue_depth{q=\"ab\",host=\"x\"} 6\n"
    "idle_ratio NaN\n"
    "crlf_value 7\r\n"
    "   indented_value\t1.5e3  \n"
    "broken_unrelated{ oops\n"
    "broken{a=\"1} 2\n"
    "extra_after_value 1 2 3\n";

static void expect_sample(const char *selector, double want)
{
	double v = -1;
	char *err = NULL;
	int r;

	r = prom_sample_text(exposition, selector, &v, &err);
	CHECKF(r == 0 && near(v, want), "%s: %d %g %s", selector, r, v, err ?: "");
	free(err);
}

static void expect_sample_error(const char *text, const char *selector, int want_r,
				const char *part)
{
	double v = -1;
	char *err = NULL;
	int r;

	r = prom_sample_text(text ?: exposition, selector, &v, &err);
	CHECKF(r == want_r, "%s: got %d, expected %d", selector, r, want_r);
	CHECKF(v == -1, "%s: *ret written on failure", selector);
	CHECKF(err && strstr(err, part), "%s: message \"%s\" lacks \"%s\"", selector,
	       err ?: "(none)", part);
	free(err);
}

static void test_prom_sample(void)
{
	tap_subtest("prom_sample");
	expect_sample("http_requests_total{code=\"400\"}", 3);
	expect_sample("http_requests_total{code=\"200\",method=\"post\"}", 1027);
	expect_sample(
	    "msdos_file_access_time_seconds{error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"}",
	    1.458255915e9);
	expect_sample("msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\"}",
		      1.458255915e9);
	expect_sample("metric_without_timestamp_and_labels", 12.47);
	/* rpc_duration_seconds_sum and _count are other metrics, not more samples */
	expect_sample("rpc_duration_seconds{quantile=\"0.5\"}", 4773);
	expect_sample("queue_depth{q=\"a\\\"b\"}", 5);
	expect_sample("queue_depth{q=\"ab\"}", 6);
	expect_sample("crlf_value", 7);
	expect_sample("indented_value", 1500);

	expect_sample_error(NULL, "http_requests_total{method=\"post\"}", -ENOTUNIQ,
			    "metric http_requests_total{method=\"post\"}: 2 samples match");
	expect_sample_error(NULL, "http_requests_total{code=\"500\"}", -ENOENT,
			    "metric http_requests_total{code=\"500\"}: 0 samples match");
	expect_sample_error(NULL, "http_requests", -ENOENT, "0 samples match");
	expect_sample_error(NULL, "queue_depth{q=\"a\"}", -ENOENT, "0 samples match");
	expect_sample_error(NULL, "queue_depth{q=\"ab\",zone=\"1\"}", -ENOENT, "0 samples match");
	expect_sample_error(NULL, "something_weird", -EBADMSG, "not a finite number");
	expect_sample_error(NULL, "idle_ratio", -EBADMSG, "not a finite number");
	expect_sample_error(NULL, "broken", -EBADMSG, "line 23:");
	expect_sample_error(NULL, "extra_after_value", -EBADMSG, "line 24:");
	expect_sample_error(NULL, "bad{selector", -EINVAL, "metric selector");
	expect_sample_error("m{a=\"1\"}\n", "m", -EBADMSG, "no value");
	expect_sample_error("m abc\n", "m", -EBADMSG, "not a number");
}

static const char hist_before[] =
    "# TYPE http_request_duration_seconds histogram\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.1\"} 10\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.5\"} 10\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"1\"} 10\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"+Inf\"} 10\n"
    "http_request_duration_seconds_sum{handler=\"/\"} 2\n"
    "http_request_duration_seconds_count{handler=\"/\"} 10\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"0.1\"} 5\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"0.5\"} 5\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"1\"} 5\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"+Inf\"} 5\n";

/* handler="/": 10, 40, 100 and 100 observations at or below 0.1, 0.5, 1 and +Inf in between. */
static const char hist_after[] =
    "# TYPE http_request_duration_seconds histogram\n"
    "http_request_duration_seconds_bucket{le=\"+Inf\",handler=\"/\"} 110\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.1\"} 20\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"1\"} 110 1395066363000\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.5\"} 50\n"
    "http_request_duration_seconds_sum{handler=\"/\"} 40\n"
    "http_request_duration_seconds_count{handler=\"/\"} 110\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"0.1\"} 5\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"0.5\"} 5\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"1\"} 5\n"
    "http_request_duration_seconds_bucket{handler=\"/x\",le=\"+Inf\"} 9\n";

static const char hist_tail_after[] =
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.1\"} 20\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.5\"} 50\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"1\"} 110\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"+Inf\"} 210\n";

static const char hist_reset_after[] =
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.1\"} 2\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.5\"} 3\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"1\"} 4\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"+Inf\"} 4\n";

static const char hist_relayout_after[] =
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.1\"} 20\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"0.25\"} 30\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"1\"} 110\n"
    "http_request_duration_seconds_bucket{handler=\"/\",le=\"+Inf\"} 110\n";

static const char hist_no_inf[] = "h_bucket{le=\"0.1\"} 1\n"
				  "h_bucket{le=\"1\"} 2\n";
static const char hist_no_inf_after[] = "h_bucket{le=\"0.1\"} 3\n"
					"h_bucket{le=\"1\"} 9\n";

static void expect_quantile(const char *before, const char *after, const char *selector, double q,
			    double want)
{
	double v = -1;
	char *err = NULL;
	int r;

	r = prom_quantile_text(before, after, selector, q, &v, &err);
	CHECKF(r == 0 && near(v, want), "%s q=%g: %d %.17g (expected %.17g) %s", selector, q, r, v,
	       want, err ?: "");
	free(err);
}

static void expect_quantile_error(const char *before, const char *after, const char *selector,
				  double q, int want_r, const char *part)
{
	double v = -1;
	char *err = NULL;
	int r;

	r = prom_quantile_text(before, after, selector, q, &v, &err);
	CHECKF(r == want_r, "%s q=%g: got %d, expected %d (%s)", selector, q, r, want_r, err ?: "");
	CHECKF(v == -1, "%s: *ret written on failure", selector);
	CHECKF(err && strstr(err, part), "%s: message \"%s\" lacks \"%s\"", selector,
	       err ?: "(none)", part);
	free(err);
}

static void test_prom_quantile(void)
{
	const char *h = "http_request_duration_seconds{handler=\"/\"}";

	tap_subtest("prom_quantile");
	/* rank 50 of 100: in (0.5, 1], 10 of its 60 observations: 0.5 + 0.5 * 10 / 60 */
	expect_quantile(hist_before, hist_after, h, 0.5, 0.5 + 0.5 * 10.0 / 60.0);
	/* rank 5 of 100: in the first bucket, which starts at 0 */
	expect_quantile(hist_before, hist_after, h, 0.05, 0.05);
	/* rank 40 of 100: the end of (0.1, 0.5] */
	expect_quantile(hist_before, hist_after, h, 0.4, 0.5);
	/* rank 99 of 100: 0.5 + 0.5 * 59 / 60 */
	expect_quantile(hist_before, hist_after, h, 0.99, 0.5 + 0.5 * 59.0 / 60.0);
	/* rank 198 of 200 lies in +Inf: the highest finite bound */
	expect_quantile(hist_before, hist_tail_after, h, 0.99, 1);
	/* the other series: 4 observations, all above 1 */
	expect_quantile(hist_before, hist_after, "http_request_duration_seconds{handler=\"/x\"}",
			0.5, 1);

	expect_quantile_error(hist_before, hist_after, "http_request_duration_seconds", 0.5,
			      -ENOTUNIQ, "2 histograms match");
	expect_quantile_error(hist_before, hist_before, h, 0.5, -ENODATA,
			      "no observations between the scrapes");
	expect_quantile_error(hist_before, hist_reset_after, h, 0.5, -ERANGE, "went down");
	expect_quantile_error(hist_before, hist_relayout_after, h, 0.5, -ERANGE, "buckets changed");
	expect_quantile_error("", hist_after, h, 0.5, -ENOENT, "not in the first scrape");
	expect_quantile_error(hist_no_inf, hist_no_inf_after, "h", 0.5, -EBADMSG,
			      "no le=\"+Inf\" bucket");
	expect_quantile_error("h_bucket{le=\"+Inf\"} 1\n", "h_bucket{le=\"+Inf\"} 2\n", "h", 0.5,
			      -EBADMSG, "no finite bucket");
	expect_quantile_error("", "h_bucket{x=\"1\"} 2\n", "h", 0.5, -EBADMSG, "without an le");
	/* a count beyond a double's range reads as +Inf: refused, in either scrape */
	expect_quantile_error("h_bucket{le=\"0.5\"} 20\nh_bucket{le=\"+Inf\"} 41e3084\n",
			      "h_bucket{le=\"0.5\"} 20\nh_bucket{le=\"+Inf\"} 41e3084\n", "h", 0.5,
			      -EBADMSG, "counts inf, not a finite number");
	expect_quantile_error("h_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 2\n",
			      "h_bucket{le=\"0.5\"} NaN\nh_bucket{le=\"+Inf\"} 2\n", "h", 0.5,
			      -EBADMSG, "counts nan, not a finite number");
	expect_quantile_error("", "h_bucket{le=\"1\"} 2\nh_bucket{le=\"1.0\"} 3\n", "h", 0.5,
			      -EBADMSG, "appears twice");

	/* no buckets: a summary's own quantile, at the end */
	expect_quantile("", exposition, "rpc_duration_seconds", 0.99, 76656);
	expect_quantile("", exposition, "rpc_duration_seconds", 0.5, 4773);
	expect_quantile_error("", exposition, "rpc_duration_seconds", 0.9, -ENOENT,
			      "0 samples match");
	expect_quantile_error(
	    "", exposition, "no_such_metric", 0.9, -ENOENT,
	    "0 samples match (neither a histogram no_such_metric_bucket nor a summary "
	    "no_such_metric{quantile=\"0.9\"})");
	expect_quantile_error("", "s{quantile=\"0.9\"} NaN\n", "s", 0.9, -EBADMSG,
			      "not a finite number");
	expect_quantile_error("", "s{quantile=\"0.9\",a=\"1\"} 1\ns{quantile=\"0.9\",a=\"2\"} 2\n",
			      "s", 0.9, -ENOTUNIQ, "2 samples match");
	expect_quantile_error("", exposition, "rpc_duration_seconds", 1.5, -EINVAL, "outside");
}

/* ---- commands ---- */

static char *write_script(const char *name, const char *body)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	REQUIRE(f);
	fputs(body, f);
	fclose(f);
	REQUIRE(chmod(path, 0755) == 0);
	return path;
}

static struct sli *command_sli(const char *path)
{
	json_auto_t *doc = json_pack("{s:[s], s:s}", "command", path, "better", "lower");
	struct sli *s = NULL;
	char *err = NULL;

	REQUIRE(doc);
	if (sli_from_json(doc, &s, &err) < 0)
		fprintf(stderr, "%s\n", err);
	REQUIRE(s);
	return s;
}

struct ticks {
	unsigned calls, stop_after;
};

static bool tick_counting(void *userdata)
{
	struct ticks *t = userdata;

	return ++t->calls >= t->stop_after;
}

/* One window of the script body: begin, wait, end; the errno of the first failure. */
static int run_command(const char *name, const char *body, const char *user, unsigned timeout_s,
		       struct ticks *ticks, double *ret_value, char **ret_err)
{
	_cleanup_free_ char *path = write_script(name, body);
	struct sli *s = command_sli(path);
	struct sli_window *w = NULL;
	int r;

	*ret_err = NULL;
	r = sli_window_begin(s, user, timeout_s, &w, ret_err);
	if (r == 0)
		r = sli_window_wait(w, ticks ? tick_counting : NULL, ticks, ret_err);
	if (r == 0)
		r = sli_window_end(w, 0, ret_value, ret_err);
	sli_window_free(w);
	sli_free(s);
	return r;
}

static void test_commands(void)
{
	struct passwd *pw = getpwnam("nobody");
	struct ticks ticks = {.stop_after = 5};
	double v = -1;
	char *err = NULL;
	uint64_t t0;
	int r;

	tap_subtest("commands");
	r = run_command("ok.sh", "#!/bin/sh\necho x\necho 42\n", NULL, 10, NULL, &v, &err);
	CHECKF(r == 0 && v == 42, "ok: %d %g %s", r, v, err ?: "");
	free(err);

	/* stderr is part of the output, and the last line wins */
	v = -1;
	r = run_command("stderr.sh", "#!/bin/sh\necho 1\necho 2.5 >&2\n", NULL, 10, NULL, &v, &err);
	CHECKF(r == 0 && v == 2.5, "stderr: %d %g %s", r, v, err ?: "");
	free(err);

	t0 = now_mono_ns();
	r = run_command("hang.sh", "#!/bin/sh\necho started\nsleep 30\n", NULL, 1, NULL, &v, &err);
	CHECK_EQ(r, -ETIMEDOUT, "hang");
	CHECKF(err && strstr(err, "/hang.sh did not finish within 1 s (killed)"), "%s",
	       err ?: "(none)");
	CHECKF(now_mono_ns() - t0 < 10 * 1000000000ull, "the hang took %.1f s",
	       (now_mono_ns() - t0) / 1e9);
	free(err);

	r = run_command("fail.sh",
			"#!/bin/sh\necho 12\necho 'cannot connect to redis' >&2\nexit 3\n", NULL,
			10, NULL, &v, &err);
	CHECK_EQ(r, -EIO, "exit 3");
	CHECKF(err && strstr(err, "/fail.sh exited with status 3: ") &&
		   strstr(err, "cannot connect to redis"),
	       "%s", err ?: "(none)");
	free(err);

	r = run_command("kill.sh", "#!/bin/sh\nkill -KILL $$\n", NULL, 10, NULL, &v, &err);
	CHECK_EQ(r, -EIO, "signal");
	CHECKF(err && strstr(err, "killed by signal SIGKILL"), "%s", err ?: "(none)");
	free(err);

	r = run_command("garbage.sh", "#!/bin/sh\necho 42\necho abc\n", NULL, 10, NULL, &v, &err);
	CHECK_EQ(r, -EBADMSG, "garbage");
	CHECKF(err && strstr(err, "/garbage.sh: last line is not a number: \"abc\""), "%s",
	       err ?: "(none)");
	free(err);

	r = run_command("silent.sh", "#!/bin/sh\nexit 0\n", NULL, 10, NULL, &v, &err);
	CHECK_EQ(r, -EBADMSG, "no output");
	CHECKF(err && strstr(err, "no output"), "%s", err ?: "(none)");
	free(err);

	t0 = now_mono_ns();
	r = run_command("stop.sh", "#!/bin/sh\nsleep 30\n", NULL, 60, &ticks, &v, &err);
	CHECK_EQ(r, -ECANCELED, "tick");
	CHECK(ticks.calls >= ticks.stop_after);
	CHECKF(now_mono_ns() - t0 < 10 * 1000000000ull, "the stop took %.1f s",
	       (now_mono_ns() - t0) / 1e9);
	free(err);

	REQUIRE(pw);
	v = -1;
	r = run_command("uid.sh", "#!/bin/sh\nid -u\n", NULL, 10, NULL, &v, &err);
	CHECKF(r == 0 && v == pw->pw_uid, "default user: %d %g %s", r, v, err ?: "");
	free(err);
	v = -1;
	r = run_command("uid-root.sh", "#!/bin/sh\nid -u\n", "root", 10, NULL, &v, &err);
	CHECKF(r == 0 && v == 0, "root: %d %g %s", r, v, err ?: "");
	free(err);

	r = run_command("user.sh", "#!/bin/sh\necho 1\n", "no-such-user-here", 10, NULL, &v, &err);
	CHECK_EQ(r, -ESRCH, "unknown user");
	CHECKF(err && strstr(err, "no-such-user-here"), "%s", err ?: "(none)");
	free(err);
	r = run_command("limit.sh", "#!/bin/sh\necho 1\n", NULL, 0, NULL, &v, &err);
	CHECK_EQ(r, -EINVAL, "timeout 0");
	free(err);

	{
		_cleanup_free_ char *path = xasprintf("%s/missing", dir);
		struct sli *s = command_sli(path);
		struct sli_window *w = NULL;

		r = sli_window_begin(s, NULL, 10, &w, &err);
		CHECK_EQ(r, -ENOENT, "missing program");
		CHECK(!w);
		CHECKF(err && strstr(err, path), "%s", err ?: "(none)");
		free(err);
		sli_free(s);
	}
	{
		/* a window freed while its command runs: killed and reaped, at once */
		_cleanup_free_ char *path = write_script("abandoned.sh", "#!/bin/sh\nsleep 30\n");
		struct sli *s = command_sli(path);
		struct sli_window *w = NULL;

		t0 = now_mono_ns();
		r = sli_window_begin(s, NULL, 60, &w, &err);
		CHECKF(r == 0, "%s", err ?: "");
		sli_window_free(w);
		CHECKF(now_mono_ns() - t0 < 5 * 1000000000ull, "the kill took %.1f s",
		       (now_mono_ns() - t0) / 1e9);
		sli_free(s);
	}
	{
		/* end without wait waits; a second wait repeats the first one's answer */
		_cleanup_free_ char *path = write_script("twice.sh", "#!/bin/sh\nexit 4\n");
		struct sli *s = command_sli(path);
		struct sli_window *w = NULL;

		REQUIRE(sli_window_begin(s, NULL, 10, &w, NULL) == 0);
		err = NULL;
		CHECK_EQ(sli_window_end(w, 0, &v, &err), -EIO, "end waits");
		CHECKF(err && strstr(err, "exited with status 4 (no output)"), "%s",
		       err ?: "(none)");
		free(err);
		err = NULL;
		CHECK_EQ(sli_window_wait(w, NULL, NULL, &err), -EIO, "second wait");
		CHECKF(err && strstr(err, "status 4"), "%s", err ?: "(none)");
		free(err);
		sli_window_free(w);
		sli_free(s);
	}
}

/* ---- a loopback metrics endpoint ---- */

struct reply {
	int status;
	const char *body;
};

struct server {
	int fd;
	unsigned port;
	pthread_t thread;
	pthread_mutex_t lock;
	const struct reply *replies;
	size_t n_replies, next;
	unsigned served;
	bool stop;
};

static void send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return; /* the client went away (a body over the limit) */
		p += n;
		len -= n;
	}
}

static void serve_one(struct server *s, int c)
{
	struct timeval tv = {.tv_sec = 2};
	struct reply rep = {404, "no more canned replies\n"};
	char req[8192], head[256];
	size_t got = 0;

	(void)setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < sizeof(req) - 1) {
		ssize_t n = recv(c, req + got, sizeof(req) - 1 - got, 0);

		if (n <= 0)
			break;
		got += n;
		req[got] = 0;
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	pthread_mutex_lock(&s->lock);
	if (s->next < s->n_replies)
		rep = s->replies[s->next++];
	pthread_mutex_unlock(&s->lock);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d Canned\r\nContent-Type: text/plain; version=0.0.4\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		 rep.status, strlen(rep.body));
	send_all(c, head, strlen(head));
	send_all(c, rep.body, strlen(rep.body));
	close(c);
	/* counted once done with the reply: the test may free its body then */
	pthread_mutex_lock(&s->lock);
	s->served++;
	pthread_mutex_unlock(&s->lock);
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	for (;;) {
		struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
		bool stop;
		int c;

		pthread_mutex_lock(&s->lock);
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0)
			serve_one(s, c);
	}
	return NULL;
}

/* A socket on 127.0.0.1 and a free port; listening unless for_refusal. */
static int loopback_socket(bool listening, unsigned *ret_port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	REQUIRE(fd >= 0);
	REQUIRE(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	REQUIRE(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	if (listening)
		REQUIRE(listen(fd, 8) == 0);
	*ret_port = ntohs(a.sin_port);
	return fd;
}

static void server_start(struct server *s)
{
	*s = (struct server){};
	pthread_mutex_init(&s->lock, NULL);
	s->fd = loopback_socket(true, &s->port);
	REQUIRE(pthread_create(&s->thread, NULL, server_main, s) == 0);
}

static void server_stop(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	close(s->fd);
	pthread_mutex_destroy(&s->lock);
}

/* The next requests get these replies, in order. */
static void server_play(struct server *s, const struct reply *replies, size_t n)
{
	pthread_mutex_lock(&s->lock);
	s->replies = replies;
	s->n_replies = n;
	s->next = 0;
	s->served = 0;
	pthread_mutex_unlock(&s->lock);
}

/* How many replies were sent since server_play, waiting up to 5 s for at least want. */
static unsigned server_served(struct server *s, unsigned want)
{
	unsigned n = 0;

	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&s->lock);
		n = s->served;
		pthread_mutex_unlock(&s->lock);
		if (n >= want)
			break;
		usleep(10000);
	}
	return n;
}

static struct sli *prom_sli(unsigned port, const char *metric, const char *kind)
{
	_cleanup_free_ char *url = xasprintf("http://127.0.0.1:%u/metrics", port);
	json_auto_t *doc = json_pack("{s:{s:s, s:s, s:s}}", "prometheus", "url", url, "metric",
				     metric, "kind", kind);
	struct sli *s = NULL;
	char *err = NULL;

	REQUIRE(doc);
	if (sli_from_json(doc, &s, &err) < 0)
		fprintf(stderr, "%s\n", err);
	REQUIRE(s);
	return s;
}

/* One window over the canned replies: begin, wait, end (elapsed_ns given). */
static int run_scrapes(struct server *srv, const char *metric, const char *kind,
		       const struct reply *replies, size_t n, uint64_t elapsed_ns,
		       double *ret_value, char **ret_err)
{
	struct sli *s = prom_sli(srv->port, metric, kind);
	struct sli_window *w = NULL;
	int r;

	server_play(srv, replies, n);
	*ret_err = NULL;
	r = sli_window_begin(s, NULL, 10, &w, ret_err);
	if (r == 0)
		r = sli_window_wait(w, NULL, NULL, ret_err);
	if (r == 0)
		r = sli_window_end(w, elapsed_ns, ret_value, ret_err);
	sli_window_free(w);
	sli_free(s);
	return r;
}

static void test_prometheus(void)
{
	static const struct reply gauge[] = {
	    {200, "# TYPE queue_depth gauge\nqueue_depth{q=\"a\"} NaN\nqueue_depth{q=\"b\"} 1\n"},
	    {200, "# TYPE queue_depth gauge\nqueue_depth{q=\"a\"} 7.5\nqueue_depth{q=\"b\"} 1\n"},
	};
	static const struct reply rate[] = {
	    {200, "requests_total{code=\"200\"} 100\nrequests_total{code=\"500\"} 1\n"},
	    {200,
	     "requests_total{code=\"200\"} 300 1395066363000\nrequests_total{code=\"500\"} 9\n"},
	};
	static const struct reply reset[] = {
	    {200, "requests_total{code=\"200\"} 300\n"},
	    {200, "requests_total{code=\"200\"} 50\n"},
	};
	static const struct reply hist[] = {{200, hist_before}, {200, hist_after}};
	static const struct reply summary[] = {{200, exposition}, {200, exposition}};
	static const struct reply error500[] = {{500, "internal error\n"}};
	static const struct reply late500[] = {{200, "g 1\n"}, {500, ""}};
	static const struct reply missing[] = {{200, "other 1\n"}};
	struct reply big[2];
	struct server srv;
	double v = -1;
	char *err = NULL;
	char *huge;
	unsigned closed_port;
	int r, fd;

	tap_subtest("prometheus");
	server_start(&srv);

	r = run_scrapes(&srv, "queue_depth{q=\"a\"}", "gauge", gauge, 2, 0, &v, &err);
	CHECKF(r == 0 && v == 7.5, "gauge: %d %g %s", r, v, err ?: "");
	CHECK_EQ(server_served(&srv, 2), 2, "gauge scrapes");
	free(err);

	v = -1;
	r = run_scrapes(&srv, "requests_total{code=\"200\"}", "rate", rate, 2, 2000000000ull, &v,
			&err);
	CHECKF(r == 0 && near(v, 100), "rate: %d %g %s", r, v, err ?: "");
	free(err);
	/* without a window length: the time between the scrapes, some positive rate */
	v = -1;
	r = run_scrapes(&srv, "requests_total{code=\"200\"}", "rate", rate, 2, 0, &v, &err);
	CHECKF(r == 0 && v > 0 && isfinite(v), "rate over the scrapes: %d %g %s", r, v, err ?: "");
	free(err);

	r = run_scrapes(&srv, "requests_total{code=\"200\"}", "rate", reset, 2, 1000000000ull, &v,
			&err);
	CHECK_EQ(r, -ERANGE, "counter reset");
	CHECKF(err && strstr(err, "went down from 300 to 50"), "%s", err ?: "(none)");
	free(err);

	v = -1;
	r = run_scrapes(&srv, "http_request_duration_seconds{handler=\"/\"}", "quantile:0.5", hist,
			2, 1000000000ull, &v, &err);
	CHECKF(r == 0 && near(v, 0.5 + 0.5 * 10.0 / 60.0), "histogram: %d %g %s", r, v, err ?: "");
	free(err);

	v = -1;
	r = run_scrapes(&srv, "rpc_duration_seconds", "quantile:0.99", summary, 2, 1000000000ull,
			&v, &err);
	CHECKF(r == 0 && v == 76656, "summary: %d %g %s", r, v, err ?: "");
	free(err);

	r = run_scrapes(&srv, "g", "gauge", error500, 1, 0, &v, &err);
	CHECK_EQ(r, -EIO, "HTTP 500");
	CHECKF(err && strstr(err, "SLI scrape of http://127.0.0.1:") &&
		   strstr(err, "/metrics: HTTP 500: internal error"),
	       "%s", err ?: "(none)");
	free(err);

	r = run_scrapes(&srv, "g", "gauge", late500, 2, 0, &v, &err);
	CHECK_EQ(r, -EIO, "HTTP 500 at the end");
	CHECKF(err && strstr(err, "HTTP 500"), "%s", err ?: "(none)");
	free(err);

	r = run_scrapes(&srv, "queue_depth{q=\"c\"}", "gauge", missing, 1, 0, &v, &err);
	CHECK_EQ(r, -ENOENT, "no such series");
	CHECKF(err && strstr(err, "metric queue_depth{q=\"c\"}: 0 samples match"), "%s",
	       err ?: "(none)");
	free(err);

	/* a body over the limit */
	huge = malloc(SLI_SCRAPE_MAX + 2);
	REQUIRE(huge);
	memset(huge, '#', SLI_SCRAPE_MAX + 1);
	huge[SLI_SCRAPE_MAX + 1] = 0;
	big[0] = (struct reply){200, huge};
	r = run_scrapes(&srv, "g", "gauge", big, 1, 0, &v, &err);
	CHECK_EQ(r, -EFBIG, "body too large");
	free(err);
	REQUIRE(server_served(&srv, 1) == 1); /* before its body is freed */
	free(huge);

	server_stop(&srv);

	/* nothing listens: refused */
	fd = loopback_socket(false, &closed_port);
	{
		struct sli *s = prom_sli(closed_port, "g", "gauge");
		struct sli_window *w = NULL;

		r = sli_window_begin(s, NULL, 10, &w, &err);
		CHECK_EQ(r, -EIO, "connection refused");
		CHECK(!w);
		CHECKF(err && strstr(err, "SLI scrape of http://127.0.0.1:"), "%s",
		       err ?: "(none)");
		free(err);
		sli_free(s);
	}
	close(fd);
}

int main(void)
{
	_cleanup_free_ char *cmd = NULL;

	REQUIRE(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
	test_definitions();
	test_last_number();
	test_prom_sample();
	test_prom_quantile();
	test_prometheus();

	if (geteuid() != 0) {
		tap_skip("commands", "not root (commands run as nobody)");
	} else {
		REQUIRE(mkdtemp(dir));
		REQUIRE(chmod(dir, 0755) == 0);
		test_commands();
		cmd = xasprintf("rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
	curl_global_cleanup();
	return tap_done("test-sli");
}
