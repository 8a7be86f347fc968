// SPDX-License-Identifier: MIT
/*
 * The HTTP API end to end on loopback: a real server, a real store in a
 * temporary directory, the real job queue with a fake runner, and libcurl
 * as the client: reads over TCP, writes over the control socket (this
 * process is its own peer there, an admin). Who may ask what, with other
 * users, is test-access's.
 */
#include "api/http.h"
#include "api/routes.h"
#include "daemon/report.h"
#include "daemon/service.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static char tmpdir[] = "/tmp/argus-test-api-XXXXXX";
static unsigned port;
static char *sock_path;	     /* the control socket */
static bool writes_over_tcp; /* send writes to the TCP listener instead */

/* ---- the fake runner ---- */

static struct {
	pthread_mutex_t lock;
	bool block; /* new jobs wait until released or cancelled */
	bool release;
	int64_t blocked; /* job waiting now */
} ctl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int runner(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	const json_t *req = job_ctx_request(ctx);
	const char *subject = json_string_value(json_object_get(req, "subject"));
	bool block;

	pthread_mutex_lock(&ctl.lock);
	block = ctl.block;
	if (block)
		ctl.blocked = job_ctx_id(ctx);
	while (block && !ctl.release && !job_ctx_cancelled(ctx)) {
		pthread_mutex_unlock(&ctl.lock);
		sleep_ms(2);
		pthread_mutex_lock(&ctl.lock);
	}
	ctl.blocked = 0;
	pthread_mutex_unlock(&ctl.lock);
	if (job_ctx_cancelled(ctx))
		return -ECANCELED;

	job_ctx_progress(ctx, 0.5, "measuring");
	job_ctx_trace(ctx, "measure", json_pack("{s:s}", "subject", subject ? subject : ""));

	if (strcmp(job_ctx_kind(ctx), "reference") == 0) {
		json_auto_t *meta = json_pack("{s:s,s:s,s:O}", "subject", subject, "kernel", "test",
					      "repeats", json_object_get(req, "repeats"));
		int64_t ref;
		int k, r;

		r = store_reference_create(job_ctx_store(ctx), job_ctx_id(ctx), meta, &ref);
		if (r < 0) {
			*ret_error = json_pack("{s:s,s:s}", "code", "store", "message", "no");
			return r;
		}
		for (k = 0; k < json_integer_value(json_object_get(req, "repeats")); k++) {
			struct mvec v = {};

			mvec_set(&v, "kernel_paging/count", 100 + k);
			store_reference_add_run(job_ctx_store(ctx), ref, k, &v);
			mvec_free(&v);
		}
		/* the shape of reference.c's result, checked against schema/openapi.yaml */
		*ret_result = json_pack("{s:I,s:s,s:O,s:[],s:f,s:f,s:i,s:i,s:i,s:[]}", "reference",
					(json_int_t)ref, "subject", subject, "repeats",
					json_object_get(req, "repeats"), "runs", "mean_wall_s", 0.0,
					"wall_cv", 0.0, "attempts", 1, "kept_attempt", 1,
					"extended_runs", 0, "warnings");
	} else {
		struct calib_params p;
		struct report rep;

		/* a real report that names nothing */
		calib_params_default(&p);
		report_init(&rep, NULL);
		report_stop(&rep, -1, CALIB_ABSTAIN, "the fake runner measures nothing",
			    "not_slower");
		*ret_result = report_result(&rep, &p);
		report_free(&rep);
	}
	return 0;
}

static void set_block(bool block)
{
	pthread_mutex_lock(&ctl.lock);
	ctl.block = block;
	ctl.release = !block;
	pthread_mutex_unlock(&ctl.lock);
}

/* ---- the client ---- */

struct reply {
	long status;
	char *body;
	size_t len;
	char *content_type;
	char *location;
	char *allow;
	char *retry_after;
	char *etag;
	char *cache_control;
	json_t *json;
};

/* One more request header for the next requests (If-None-Match), or NULL. */
static const char *extra_header;

static void reply_clear(struct reply *r)
{
	free(r->body);
	free(r->content_type);
	free(r->location);
	free(r->allow);
	free(r->retry_after);
	free(r->etag);
	free(r->cache_control);
	json_decref(r->json);
	*r = (struct reply){};
}

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	struct reply *r = userdata;
	char *b = realloc(r->body, r->len + size * n + 1);

	REQUIRE(b);
	memcpy(b + r->len, p, size * n);
	r->len += size * n;
	b[r->len] = 0;
	r->body = b;
	return size * n;
}

static char *header_value(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (len <= n + 1 || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	len -= n + 1;
	while (len > 0 && line[0] == ' ')
		line++, len--;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	return strndup(line, len);
}

static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
	struct reply *r = userdata;
	char *v;

	if ((v = header_value(p, size * n, "Content-Type")))
		free(r->content_type), r->content_type = v;
	else if ((v = header_value(p, size * n, "Location")))
		free(r->location), r->location = v;
	else if ((v = header_value(p, size * n, "Allow")))
		free(r->allow), r->allow = v;
	else if ((v = header_value(p, size * n, "Retry-After")))
		free(r->retry_after), r->retry_after = v;
	else if ((v = header_value(p, size * n, "ETag")))
		free(r->etag), r->etag = v;
	else if ((v = header_value(p, size * n, "Cache-Control")))
		free(r->cache_control), r->cache_control = v;
	return size * n;
}

/* Chunked upload of a large body (no Content-Length). */
struct upload {
	size_t left;
};

static size_t on_read(char *p, size_t size, size_t n, void *userdata)
{
	struct upload *u = userdata;
	size_t k = size * n < u->left ? size * n : u->left;

	memset(p, ' ', k);
	u->left -= k;
	return k;
}

/* ---- the record of every answer, for the check against schema/openapi.yaml ---- */

/* ARGUS_API_RECORD names a file that gets one JSON line per answer and per route. */
static struct {
	pthread_mutex_t lock;
	FILE *f;
	bool opened;
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void record_line(json_t *line)
{
	const char *name = getenv("ARGUS_API_RECORD");

	pthread_mutex_lock(&rec.lock);
	if (!rec.opened && name) {
		rec.f = fopen(name, "ae");
		CHECKF(rec.f, "cannot open %s: %m", name);
	}
	rec.opened = true;
	if (rec.f && line) {
		json_dumpf(line, rec.f, JSON_COMPACT);
		fputc('\n', rec.f);
		fflush(rec.f);
	}
	pthread_mutex_unlock(&rec.lock);
	json_decref(line);
}

/* A path with the bytes outside printable ASCII as %XX, which the server decodes back. */
static json_t *path_json(const char *path)
{
	_cleanup_free_ char *s = malloc(strlen(path) * 3 + 1);
	const unsigned char *p;
	char *o = s;

	REQUIRE(s);
	for (p = (const unsigned char *)path; *p; p++)
		o += *p > ' ' && *p < 0x7f ? sprintf(o, "%c", *p) : sprintf(o, "%%%02X", *p);
	return json_string(s);
}

static void record_route(const char *method, const char *path, void *ud)
{
	record_line(json_pack("{s:{s:s,s:s}}", "route", "method", method, "path", path));
}

/* The answer to one request, with every header of it (names in lower case). */
static void record_reply(CURL *c, const char *method, const char *path, const char *body,
			 const char *type, bool tcp, const struct reply *r)
{
	struct curl_header *h, *prev = NULL;
	json_t *headers;

	if (!getenv("ARGUS_API_RECORD"))
		return;
	headers = json_object();
	while ((h = curl_easy_nextheader(c, CURLH_HEADER, -1, prev))) {
		_cleanup_free_ char *name = xstrdup(h->name);
		char *p;

		for (p = name; *p; p++)
			*p = tolower((unsigned char)*p);
		json_object_set_new(headers, name, json_string(h->value));
		prev = h;
	}
	/* a body that is no UTF-8 is recorded as null, its length kept */
	record_line(json_pack(
	    "{s:s,s:o,s:s,s:s?,s:s?,s:I,s:o,s:o,s:I}", "method", method, "path", path_json(path),
	    "listener", tcp ? "tcp" : "unix", "request_body", body, "request_type", type, "status",
	    (json_int_t)r->status, "headers", headers, "body",
	    r->body ? json_stringn(r->body, r->len) ?: json_null() : json_string(""), "body_bytes",
	    (json_int_t)r->len));
}

/*
 * One request. body NULL: none. type NULL: no Content-Type for a body.
 * chunked > 0: stream that many bytes chunked instead of body.
 */
static long request(const char *method, const char *path, const char *body, const char *type,
		    size_t chunked, struct reply *r)
{
	bool read = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	_cleanup_free_ char *url = read || writes_over_tcp
				       ? xasprintf("http://127.0.0.1:%u%s", port, path)
				       : xasprintf("http://localhost%s", path);
	struct curl_slist *headers = NULL;
	struct upload up = {chunked};
	CURL *c = curl_easy_init();
	CURLcode rc;

	REQUIRE(c);
	reply_clear(r);
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (!read && !writes_over_tcp)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock_path);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else if (chunked) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &up);
		headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
	}
	if (extra_header)
		headers = curl_slist_append(headers, extra_header);
	/* curl adds a form Content-Type to bodies; state the one wanted, or none */
	if (body || chunked) {
		_cleanup_free_ char *h =
		    type ? xasprintf("Content-Type: %s", type) : xstrdup("Content-Type:");
		headers = curl_slist_append(headers, h);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);

	rc = curl_easy_perform(c);
	CHECKF(rc == CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (rc == CURLE_OK)
		record_reply(c, method, path, body, body || chunked ? type : NULL,
			     read || writes_over_tcp, r);
	curl_slist_free_all(headers);
	curl_easy_cleanup(c);

	if (r->body && r->content_type && strncmp(r->content_type, "application/json", 16) == 0)
		r->json = json_loads(r->body, 0, NULL);
	/* every answer but /metrics (and HEAD, and 304) is JSON */
	if (strcmp(path, "/metrics") != 0 && strcmp(method, "HEAD") != 0 && r->status != 304 &&
	    !strstr(path, "format=html"))
		CHECKF(r->json != NULL, "%s %s: not JSON: %s (%s)", method, path,
		       r->body ? r->body : "(empty)",
		       r->content_type ? r->content_type : "no type");
	return r->status;
}

static long get(const char *path, struct reply *r)
{
	return request("GET", path, NULL, NULL, 0, r);
}

static long post(const char *path, const char *body, struct reply *r)
{
	return request("POST", path, body, "application/json", 0, r);
}

static const char *error_code(const struct reply *r)
{
	const char *c =
	    json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));

	return c ? c : "";
}

static const char *error_message(const struct reply *r)
{
	const char *c =
	    json_string_value(json_object_get(json_object_get(r->json, "error"), "message"));

	return c ? c : "";
}

#define EXPECT_ERROR(r, st, code)                                                                  \
	CHECKF((r)->status == (st) && strcmp(error_code(r), code) == 0 && *error_message(r),       \
	       "want %d %s, got %ld %s", st, code, (r)->status, (r)->body ? (r)->body : "")

static const char *state_of(const struct reply *r)
{
	const char *s = json_string_value(json_object_get(r->json, "state"));

	return s ? s : "";
}

/* Poll GET /jobs/ID until the state is reached (10 s). */
static bool wait_job(int64_t id, const char *state)
{
	_cleanup_free_ char *path = xasprintf("/jobs/%lld", (long long)id);
	struct reply r = {};
	bool ok = false;
	int i;

	for (i = 0; i < 1000 && !ok; i++) {
		if (get(path, &r) == 200 && strcmp(state_of(&r), state) == 0)
			ok = true;
		else
			sleep_ms(10);
	}
	if (!ok)
		fprintf(stderr, "job %lld: %s, wanted %s\n", (long long)id, r.body, state);
	reply_clear(&r);
	return ok;
}

/* POST and expect 202 + Location; returns the job id. */
static int64_t submit(const char *path, const char *body)
{
	struct reply r = {};
	int64_t id = 0;

	post(path, body, &r);
	CHECKF(r.status == 202, "%s %s: %ld %s", path, body, r.status, r.body);
	if (r.status == 202) {
		_cleanup_free_ char *loc = NULL;

		id = json_integer_value(json_object_get(r.json, "id"));
		loc = xasprintf("/jobs/%lld", (long long)id);
		CHECK(id > 0);
		CHECK(strcmp(state_of(&r), "queued") == 0);
		CHECK(r.location && strcmp(r.location, loc) == 0);
	}
	reply_clear(&r);
	return id;
}

static bool wait_runner_blocked(int64_t id)
{
	int i;

	for (i = 0; i < 2000; i++) {
		bool b;

		pthread_mutex_lock(&ctl.lock);
		b = ctl.blocked == id;
		pthread_mutex_unlock(&ctl.lock);
		if (b)
			return true;
		sleep_ms(5);
	}
	return false;
}

/* The highest NNN of the schema files: the version a fresh store reaches. */
static int latest_schema_version(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int v = 0;

	REQUIRE(d);
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && strstr(de->d_name, ".sql") &&
		    atoi(de->d_name) > v)
			v = atoi(de->d_name);
	closedir(d);
	return v;
}

/* ---- the tests ---- */

static void test_basics(int schema_version)
{
	struct reply r = {};

	CHECK(get("/healthz", &r) == 200);
	CHECK(r.content_type && strcmp(r.content_type, "application/json") == 0);
	CHECK(strcmp(json_string_value(json_object_get(r.json, "status")), "ok") == 0);
	CHECK(json_integer_value(json_object_get(json_object_get(r.json, "store"),
						 "schema_version")) == schema_version);
	CHECK(json_is_integer(json_object_get(json_object_get(r.json, "queue"), "queued")));
	CHECK(json_is_integer(json_object_get(json_object_get(r.json, "queue"), "running")));
	CHECK(json_is_integer(json_object_get(r.json, "uptime_s")));
	CHECK(strcmp(json_string_value(json_object_get(r.json, "kernel")), "6.18.0-test") == 0);

	CHECK(request("HEAD", "/healthz", NULL, NULL, 0, &r) == 200);

	get("/nope", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	{
		/* the 404 names where the routes are */
		const char *roots[] = {
		    "/diagnose", "/references", "/jobs",    "/workloads",
		    "/services", "/tree",	"/healthz", "/metrics",
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(roots); i++)
			CHECKF(strstr(error_message(&r), roots[i]), "%s: %s", roots[i],
			       error_message(&r));
	}
	get("/jobs/", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	get("/jobs/12/steps", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	get("/jobs/abc", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	get("/jobs/99999", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	get("/jobs/99999/trace", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	get("/references/99999", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	request("DELETE", "/jobs/99999", NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");

	/* an over-long path is not echoed back whole */
	{
		char path[2048];

		memset(path, 'a', sizeof(path) - 1);
		path[0] = '/';
		path[sizeof(path) - 1] = 0;
		get(path, &r);
		EXPECT_ERROR(&r, 404, "not_found");
		CHECK(strlen(error_message(&r)) < 400);
	}

	request("PUT", "/jobs", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	CHECK(r.allow && strcmp(r.allow, "GET, HEAD") == 0);
	get("/diagnose", &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	CHECK(r.allow && strcmp(r.allow, "POST") == 0);
	post("/healthz", "{}", &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	request("DELETE", "/references/1", NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	request("DELETE", "/references/x1", NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	request("PUT", "/references/1", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	CHECK(r.allow && strcmp(r.allow, "GET, HEAD, DELETE") == 0);
	request("POST", "/jobs/1", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	CHECK(r.allow && strstr(r.allow, "DELETE"));
	request("PUT", "/references", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	CHECK(r.allow && strcmp(r.allow, "GET, HEAD, POST") == 0);
	request("DELETE", "/jobs/1/trace", NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	CHECK(r.allow && strcmp(r.allow, "GET, HEAD") == 0);
	/* an id is one segment of 1 to 32 bytes: a longer one is no route (404, not 405) */
	request("PUT", "/jobs/12345678901234567890123456789012", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 405, "method_not_allowed");
	request("PUT", "/jobs/123456789012345678901234567890123", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	request("PUT", "/jobs//trace", "{}", "application/json", 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	request("DELETE", "/references/1/trace", NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	/* a path that is not UTF-8 is quoted with its bytes replaced: the error is still JSON */
	get("/jobs/\xff\xfe", &r);
	EXPECT_ERROR(&r, 404, "not_found");
	get("/\xc3", &r);
	EXPECT_ERROR(&r, 404, "not_found");

	get("/tree", &r);
	EXPECT_ERROR(&r, 503, "tree_unavailable");
	CHECK(r.retry_after && atoi(r.retry_after) > 0);

	CHECK(get("/workloads", &r) == 200);
	CHECK(strstr(r.body, "\"checkout\""));
	CHECK(json_is_array(json_object_get(r.json, "workloads")));

	/* a service whose cgroup is not there: listed, with why it cannot be found */
	CHECK(get("/services", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "services")) == 1);
	{
		json_t *s = json_array_get(json_object_get(r.json, "services"), 0);

		CHECK_STREQ(json_string_value(json_object_get(s, "name")), "web", "service name");
		CHECKF(!json_object_get(s, "now") &&
			   strstr(json_string_value(json_object_get(s, "error")) ?: "",
				  "does not exist"),
		       "service error: %s", r.body);
	}
	reply_clear(&r);
}

static void test_bad_requests(void)
{
	struct reply r = {};

	post("/diagnose", "{\"workload\": ", &r);
	EXPECT_ERROR(&r, 400, "bad_json");
	CHECK(strstr(error_message(&r), "line 1"));
	post("/diagnose", "", &r);
	EXPECT_ERROR(&r, 400, "bad_json");
	post("/diagnose", "[]", &r);
	EXPECT_ERROR(&r, 400, "bad_body");
	post("/diagnose", "{\"service\": \"nope\"}", &r);
	EXPECT_ERROR(&r, 400, "unknown_service");
	post("/references", "{\"service\": \"Web!\"}", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	post("/diagnose", "{\"service\": \"web\", \"target\": {\"pid\": 1}}", &r);
	EXPECT_ERROR(&r, 400, "conflicting_fields");
	post("/diagnose", "{\"workload\": \"checkout\", \"colour\": \"blue\"}", &r);
	EXPECT_ERROR(&r, 400, "unknown_field");
	CHECK(strstr(error_message(&r), "colour"));
	post("/diagnose", "{\"workload\": \"checkout\", \"tau\": 1000}", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	post("/diagnose", "{\"workload\": \"ghost\"}", &r);
	EXPECT_ERROR(&r, 400, "unknown_workload");
	post("/diagnose", "{\"workload\": \"checkout\", \"agent\": \"llm\"}", &r);
	EXPECT_ERROR(&r, 400, "llm_not_configured");
	post("/diagnose", "{\"workload\": \"checkout\", \"reference\": 999}", &r);
	EXPECT_ERROR(&r, 400, "unknown_reference");
	post("/diagnose", "{\"workload\": \"checkout\"}", &r);
	EXPECT_ERROR(&r, 409, "no_reference");
	CHECK(strstr(error_message(&r), "POST /references"));
	post("/diagnose", "{\"target\": {\"pid\": 4242}}", &r);
	EXPECT_ERROR(&r, 409, "no_reference");
	CHECK(strstr(error_message(&r), "pid:4242"));
	post("/references", "{\"workload\": \"checkout\", \"repeats\": 50}", &r);
	EXPECT_ERROR(&r, 400, "bad_field");

	/*
	 * media types: JSON only, with parameters or not; none, a form and text
	 * are what a cross-site page sends without asking: 415
	 */
	request("POST", "/diagnose", "{\"workload\": \"checkout\"}", "text/plain", 0, &r);
	EXPECT_ERROR(&r, 415, "unsupported_media_type");
	request("POST", "/diagnose", "{\"workload\": \"checkout\"}", NULL, 0, &r);
	EXPECT_ERROR(&r, 415, "unsupported_media_type");
	request("POST", "/diagnose", "{\"workload\": \"checkout\"}",
		"application/x-www-form-urlencoded", 0, &r);
	EXPECT_ERROR(&r, 415, "unsupported_media_type");
	request("POST", "/diagnose", "{\"workload\": \"checkout\"}",
		"application/json; charset=utf-8", 0, &r);
	EXPECT_ERROR(&r, 409, "no_reference");
	request("POST", "/diagnose", "{\"workload\": \"checkout\"}", "Application/JSON", 0, &r);
	EXPECT_ERROR(&r, 409, "no_reference");

	/* bodies over max_body (4096 here): with a Content-Length, and chunked */
	{
		char *big = malloc(200001);

		REQUIRE(big);
		memset(big, ' ', 200000);
		big[0] = '{';
		big[200000] = 0;
		post("/diagnose", big, &r);
		EXPECT_ERROR(&r, 413, "body_too_large");
		free(big);
	}
	request("POST", "/diagnose", NULL, "application/json", 100000, &r);
	EXPECT_ERROR(&r, 413, "body_too_large");
	/* the server still answers after both */
	CHECK(get("/healthz", &r) == 200);

	get("/jobs?limit=0", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	get("/jobs?limit=501", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	get("/jobs?state=sleeping", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	get("/jobs?before=-3", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	get("/jobs?colour=blue", &r);
	EXPECT_ERROR(&r, 400, "unknown_field");
	get("/references?subject=Bad%20Name", &r);
	EXPECT_ERROR(&r, 400, "bad_field");
	reply_clear(&r);
}

static void test_flow(void)
{
	struct reply r = {};
	_cleanup_free_ char *path = NULL;
	int64_t ref_job, diag, ref_id;
	json_t *req;

	ref_job = submit("/references", "{\"workload\": \"checkout\", \"repeats\": 3}");
	CHECK(wait_job(ref_job, "succeeded"));
	path = xasprintf("/jobs/%lld", (long long)ref_job);
	CHECK(get(path, &r) == 200);
	CHECK(strcmp(json_string_value(json_object_get(r.json, "kind")), "reference") == 0);
	{
		_cleanup_free_ char *me = xasprintf("uid:%u", (unsigned)geteuid());
		const char *who = json_string_value(json_object_get(r.json, "submitter"));

		CHECKF(who && strcmp(who, me) == 0, "submitter %s, want %s", who ?: "(none)", me);
	}
	req = json_object_get(r.json, "request");
	CHECK(json_integer_value(json_object_get(req, "repeats")) == 3);
	CHECK(strcmp(json_string_value(json_object_get(req, "subject")), "checkout") == 0);
	ref_id =
	    json_integer_value(json_object_get(json_object_get(r.json, "result"), "reference"));
	CHECK(ref_id > 0);

	/* finished jobs cannot be cancelled */
	request("DELETE", path, NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 409, "already_finished");

	/* references */
	CHECK(get("/references", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "references")) == 1);
	CHECK(get("/references?subject=checkout&limit=5", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "references")) == 1);
	CHECK(get("/references?subject=pid:1", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "references")) == 0);
	free(path);
	path = xasprintf("/references/%lld", (long long)ref_id);
	CHECK(get(path, &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "runs")) == 3);
	CHECK(json_integer_value(json_object_get(r.json, "job")) == ref_job);

	/* now a diagnosis resolves the latest reference */
	diag = submit("/diagnose", "{\"workload\": \"checkout\", \"max_depth\": 2}");
	CHECK(wait_job(diag, "succeeded"));
	free(path);
	path = xasprintf("/jobs/%lld", (long long)diag);
	CHECK(get(path, &r) == 200);
	req = json_object_get(r.json, "request");
	CHECK(json_integer_value(json_object_get(req, "reference")) == ref_id);
	CHECK(strcmp(json_string_value(json_object_get(req, "agent")), "builtin") == 0);
	CHECK(json_real_value(json_object_get(req, "tau")) == 3);
	CHECK(json_integer_value(json_object_get(req, "max_depth")) == 2);
	CHECK(json_is_true(json_object_get(req, "calibration")));
	CHECK(
	    strcmp(json_string_value(json_object_get(json_object_get(r.json, "result"), "verdict")),
		   "no_bottleneck") == 0);
	CHECK(json_real_value(json_object_get(r.json, "progress")) == 1);

	free(path);
	path = xasprintf("/jobs/%lld/trace", (long long)diag);
	CHECK(get(path, &r) == 200);
	CHECK(json_integer_value(json_object_get(r.json, "job")) == diag);
	CHECK(json_array_size(json_object_get(r.json, "steps")) == 1);
	CHECK(strcmp(json_string_value(json_object_get(
			 json_array_get(json_object_get(r.json, "steps"), 0), "kind")),
		     "measure") == 0);

	/* an explicit reference */
	{
		_cleanup_free_ char *body = xasprintf(
		    "{\"workload\": \"checkout\", \"reference\": %lld, \"calibration\": false}",
		    (long long)ref_id);
		int64_t id = submit("/diagnose", body);

		CHECK(wait_job(id, "succeeded"));
	}
	reply_clear(&r);
}

static void test_list_and_paging(void)
{
	struct reply r = {};
	json_t *next;
	int64_t seen = 0;
	int pages = 0, total = 0;
	_cleanup_free_ char *path = xstrdup("/jobs?limit=2");

	CHECK(get("/jobs?kind=reference", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 1);
	CHECK(json_is_null(json_object_get(r.json, "next_before")));
	CHECK(get("/jobs?workload=checkout&state=succeeded", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 3);

	/* a diagnosis's entry carries its verdict and path; a reference's has none */
	CHECK(get("/jobs?kind=diagnose", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 2);
	{
		json_t *e = json_array_get(json_object_get(r.json, "jobs"), 0);

		CHECK_STREQ(json_string_value(json_object_get(e, "verdict")) ?: "(none)",
			    "no_bottleneck", "verdict in the list");
		CHECK(json_is_array(json_object_get(e, "path")));
	}
	CHECK(get("/jobs?kind=reference", &r) == 200);
	CHECK(!json_object_get(json_array_get(json_object_get(r.json, "jobs"), 0), "verdict"));
	/* by subject, and by when they were created */
	CHECK(get("/jobs?subject=checkout", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 3);
	CHECK(get("/jobs?subject=pid:1", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 0);
	CHECK(get("/jobs?since=2000-01-01&until=2999-01-01T00:00:00Z", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 3);
	CHECK(get("/jobs?until=2000-01-01", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 0);
	CHECK(get("/jobs?since=2999-01-01T00:00:00Z", &r) == 200);
	CHECK(json_array_size(json_object_get(r.json, "jobs")) == 0);
	CHECK(get("/jobs?since=yesterday", &r) == 400);
	CHECK(get("/jobs?subject=a%20b", &r) == 400);

	/* pages of 2 over the 3 jobs: 2 + 1, newest first, no overlap */
	for (;;) {
		json_t *jobs;
		size_t i;

		CHECK(get(path, &r) == 200);
		jobs = json_object_get(r.json, "jobs");
		for (i = 0; i < json_array_size(jobs); i++) {
			int64_t id =
			    json_integer_value(json_object_get(json_array_get(jobs, i), "id"));

			CHECK(seen == 0 || id < seen);
			seen = id;
			total++;
		}
		pages++;
		next = json_object_get(r.json, "next_before");
		if (!json_is_integer(next) || pages > 5)
			break;
		free(path);
		path = xasprintf("/jobs?limit=2&before=%lld", (long long)json_integer_value(next));
	}
	CHECK(pages == 2 && total == 3);
	reply_clear(&r);
}

static void test_queue_full_and_cancel(const struct config *cfg)
{
	struct reply r = {};
	int64_t running, q1, q2;
	_cleanup_free_ char *p_running = NULL, *p_q1 = NULL;

	set_block(true);
	running = submit("/references", "{\"workload\": \"checkout\"}");
	CHECK(wait_runner_blocked(running));
	CHECK(wait_job(running, "running"));
	q1 = submit("/references", "{\"workload\": \"checkout\"}");
	q2 = submit("/references", "{\"workload\": \"checkout\"}");
	CHECK(cfg->queue_max == 2);

	post("/references", "{\"workload\": \"checkout\"}", &r);
	EXPECT_ERROR(&r, 429, "queue_full");
	CHECK(r.retry_after && atoi(r.retry_after) > 0);

	CHECK(get("/healthz", &r) == 200);
	CHECK(json_integer_value(json_object_get(json_object_get(r.json, "queue"), "queued")) == 2);
	CHECK(json_integer_value(json_object_get(json_object_get(r.json, "queue"), "running")) ==
	      1);

	/* cancel a queued job: at once */
	p_q1 = xasprintf("/jobs/%lld", (long long)q1);
	CHECK(request("DELETE", p_q1, NULL, NULL, 0, &r) == 200);
	CHECK(strcmp(state_of(&r), "cancelled") == 0);
	request("DELETE", p_q1, NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 409, "already_finished");

	/* cancel the running job: it ends cancelled */
	p_running = xasprintf("/jobs/%lld", (long long)running);
	CHECK(request("DELETE", p_running, NULL, NULL, 0, &r) == 200);
	CHECK(json_integer_value(json_object_get(r.json, "id")) == running);
	CHECK(wait_job(running, "cancelled"));

	/* q2 runs next and blocks; release it */
	CHECK(wait_runner_blocked(q2));
	set_block(false);
	CHECK(wait_job(q2, "succeeded"));
	reply_clear(&r);
}

/* DELETE /references/ID: refused while a waiting job names it, then gone with its runs. */
static void test_delete_reference(void)
{
	_cleanup_free_ char *ref_path = NULL, *body = NULL;
	struct reply r = {};
	int64_t rec, diag, ref;

	rec = submit("/references", "{\"workload\": \"checkout\"}");
	CHECK(wait_job(rec, "succeeded"));
	{
		_cleanup_free_ char *p = xasprintf("/jobs/%lld", (long long)rec);

		CHECK(get(p, &r) == 200);
		ref = json_integer_value(
		    json_object_get(json_object_get(r.json, "result"), "reference"));
		CHECK(ref > 0);
	}
	ref_path = xasprintf("/references/%lld", (long long)ref);
	body = xasprintf("{\"workload\": \"checkout\", \"reference\": %lld}", (long long)ref);

	set_block(true);
	diag = submit("/diagnose", body);
	CHECK(wait_runner_blocked(diag));
	request("DELETE", ref_path, NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 409, "reference_in_use");
	set_block(false);
	CHECK(wait_job(diag, "succeeded"));

	CHECK(request("DELETE", ref_path, NULL, NULL, 0, &r) == 200);
	CHECK(json_integer_value(json_object_get(r.json, "id")) == ref);
	CHECK(json_is_true(json_object_get(r.json, "deleted")));
	get(ref_path, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	request("DELETE", ref_path, NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 404, "not_found");
	/* a diagnosis that names it now is told so */
	post("/diagnose", body, &r);
	EXPECT_ERROR(&r, 400, "unknown_reference");
	reply_clear(&r);
}

/* The TCP listener without a token: reads only; writes are sent to the socket. */
static void test_tcp_read_only(void)
{
	struct reply r = {};

	writes_over_tcp = true;
	post("/references", "{\"workload\": \"checkout\"}", &r);
	EXPECT_ERROR(&r, 403, "read_only");
	CHECK(strstr(error_message(&r), sock_path));
	request("DELETE", "/jobs/1", NULL, NULL, 0, &r);
	EXPECT_ERROR(&r, 403, "read_only");
	writes_over_tcp = false;
	CHECK(get("/jobs/1", &r) == 200);
	reply_clear(&r);
}

/* Every sample line is "name{labels} value" or "name value"; HELP/TYPE present for each name. */
static void test_metrics(void)
{
	struct reply r = {};
	char *save = NULL, *line, *text;
	int samples = 0;

	CHECK(get("/metrics", &r) == 200);
	CHECK(r.content_type && strncmp(r.content_type, "text/plain; version=0.0.4", 25) == 0);
	REQUIRE(r.body);
	CHECK(strstr(r.body, "# TYPE argusd_up gauge\nargusd_up 1\n"));
	CHECK(strstr(r.body, "# HELP argusd_jobs_queued "));
	CHECK(strstr(r.body, "# TYPE argusd_jobs_queued gauge\n"));
	CHECK(strstr(r.body, "# TYPE argusd_job_running gauge\n"));
	CHECK(strstr(r.body, "# TYPE argusd_jobs_finished_total counter\n"));
	CHECK(strstr(r.body, "argusd_jobs_finished_total{state=\"cancelled\"} 2\n"));
	CHECK(strstr(r.body, "# TYPE argusd_http_requests_total counter\n"));
	CHECK(strstr(r.body, "argusd_http_requests_total{code=\"429\"} 1\n"));
	CHECK(strstr(r.body, "argusd_http_requests_total{code=\"413\"} 2\n"));
	CHECK(strstr(r.body, "argusd_http_requests_total{code=\"403\"} 2\n"));
	CHECK(strstr(r.body, "argusd_http_requests_total{code=\"415\"} 3\n"));
	CHECK(strstr(r.body, "# TYPE argusd_uptime_seconds gauge\n"));
	CHECK(strstr(r.body, "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds "));
	CHECK(strstr(r.body, "argusd_build_info{version=\""));
	/* the fake runner's diagnoses named nothing: as many as the job list has succeeded */
	CHECK(strstr(r.body, "# TYPE argusd_diagnoses_total counter\n"));
	CHECK(strstr(r.body, "# TYPE argusd_job_duration_seconds histogram\n"));
	{
		struct reply l = {};
		_cleanup_free_ char *want = NULL, *count = NULL, *inf = NULL;
		size_t n;

		CHECK(get("/jobs?kind=diagnose&state=succeeded", &l) == 200);
		n = json_array_size(json_object_get(l.json, "jobs"));
		CHECK(n >= 2);
		want = xasprintf("argusd_diagnoses_total{verdict=\"no_bottleneck\",node=\"\"} %zu\n", n);
		count = xasprintf("argusd_job_duration_seconds_count{kind=\"diagnose\"} %zu\n", n);
		inf = xasprintf("argusd_job_duration_seconds_bucket{kind=\"diagnose\",le=\"+Inf\"} %zu\n",
				n);
		CHECKF(strstr(r.body, want), "%s", want);
		CHECKF(strstr(r.body, count), "%s", count);
		CHECKF(strstr(r.body, inf), "%s", inf);
		reply_clear(&l);
	}
	{
		/* cumulative buckets: never fewer below a larger bound */
		const char *p = r.body;
		long prev = 0, v;

		while ((p = strstr(p, "argusd_job_duration_seconds_bucket{kind=\"reference\",le=\""))) {
			p = strchr(p, '}');
			v = p ? atol(p + 2) : -1;
			CHECK(v >= prev);
			prev = v;
		}
	}
	{
		const char *p = strstr(r.body, "argusd_jobs_finished_total{state=\"succeeded\"} ");
		CHECK(p &&
		      atoi(p + strlen("argusd_jobs_finished_total{state=\"succeeded\"} ")) == 6);
	}

	text = xstrdup(r.body);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], *end;
		const char *value;
		size_t n = strspn(line, "abcdefghijklmnopqrstuvwxyz_");
		_cleanup_free_ char *help = NULL, *type = NULL;

		if (line[0] == '#') {
			CHECKF(strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0,
			       "%s", line);
			continue;
		}
		CHECKF(n > 0 && n < sizeof(name), "%s", line);
		if (n == 0 || n >= sizeof(name))
			continue;
		memcpy(name, line, n);
		name[n] = 0;
		value = line + n;
		if (*value == '{') {
			value = strchr(value, '}');
			CHECKF(value, "%s", line);
			if (!value)
				continue;
			value++;
		}
		CHECKF(*value == ' ', "%s", line);
		strtod(value + 1, &end);
		CHECKF(end != value + 1 && *end == 0, "%s", line);
		/* a histogram's samples are its family's name with _bucket, _sum or _count */
		if (!strstr(r.body, help = xasprintf("# HELP %s ", name))) {
			static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
			size_t k;

			for (k = 0; k < ARRAY_SIZE(suffixes); k++) {
				size_t l = strlen(name), sl = strlen(suffixes[k]);

				if (l > sl && strcmp(name + l - sl, suffixes[k]) == 0) {
					name[l - sl] = 0;
					break;
				}
			}
			free(help);
			help = xasprintf("# HELP %s ", name);
			type = xasprintf("# TYPE %s histogram\n", name);
		} else
			type = xasprintf("# TYPE %s ", name);
		CHECKF(strstr(r.body, help) && strstr(r.body, type), "%s", name);
		samples++;
	}
	CHECK(samples >= 10);
	free(text);

	/* the fake runner's references carry no tree version: every one is stale here */
	{
		struct reply l = {};
		_cleanup_free_ char *stale = NULL;

		CHECK(get("/references?limit=500", &l) == 200);
		stale = xasprintf("argusd_references{stale=\"true\"} %zu\n",
				  json_array_size(json_object_get(l.json, "references")));
		CHECKF(strstr(r.body, stale), "%s", stale);
		CHECK(strstr(r.body, "argusd_references{stale=\"false\"} 0\n"));
		reply_clear(&l);
	}
	/* the host's pace: the newest reading of each CPU of this host, none of another's */
	CHECK(strstr(r.body, "# TYPE argusd_host_pace_seconds gauge\n"));
	CHECKF(strstr(r.body, "argusd_host_pace_seconds{cpu=\"0\"} 8.25e-09\n") &&
		       strstr(r.body, "argusd_host_pace_seconds{cpu=\"3\"} 1.15e-08\n") &&
		       !strstr(r.body, "{cpu=\"1\"}") && !strstr(r.body, "} 9e-09\n"),
	       "%s", strstr(r.body, "argusd_host_pace") ?: "(none)");
	CHECK(strstr(r.body, "argusd_jobs_finished_total{state=\"interrupted\"} 0\n"));
	CHECK(strstr(r.body, "argusd_llm_requests_total{outcome=\"ok\"} 0\n"));
	CHECK(strstr(r.body, "argusd_llm_tokens_total{kind=\"prompt\"} 0\n"));
	CHECK(strstr(r.body, "# TYPE argusd_probe_overhead_ratio histogram\n"));
	CHECK(strstr(r.body, "argusd_probe_overhead_ratio_count 0\n"));
	/* for tests/test-promtool.sh: the text as scraped, to check with promtool */
	if (getenv("ARGUS_METRICS_OUT")) {
		FILE *f = fopen(getenv("ARGUS_METRICS_OUT"), "w");

		CHECK(f && fputs(r.body, f) >= 0);
		if (f)
			fclose(f);
	}
	reply_clear(&r);
}

/* GET /references/A/compare/B: the metrics that moved beyond their runs' spread. */
static void test_compare(const struct api_ctx *ctx)
{
	static const double counts_a[] = {1000, 1010, 990}, counts_b[] = {2000, 2020, 1990};
	static const double time_a[] = {5e6, 5.1e6, 4.9e6}, time_b[] = {5.05e6, 4.95e6, 5e6};
	json_auto_t *meta = json_pack("{s:s,s:s,s:s}", "subject", "checkout", "kernel", "test",
				      "tree_version", "t");
	struct reply r = {};
	int64_t a, b;
	json_t *d;
	int k;

	tap_subtest("compare references");
	REQUIRE(store_reference_create(ctx->store, 0, meta, &a) == 0);
	REQUIRE(store_reference_create(ctx->store, 0, meta, &b) == 0);
	for (k = 0; k < 3; k++) {
		struct mvec va = {}, vb = {};

		mvec_set(&va, "kernel_paging/count", counts_a[k]);
		mvec_set(&va, "kernel_paging/time_ns", time_a[k]);
		mvec_set(&va, "kernel_sync/count", 7);
		mvec_set(&vb, "kernel_paging/count", counts_b[k]);
		mvec_set(&vb, "kernel_paging/time_ns", time_b[k]);
		mvec_set(&vb, "kernel_block/count", 3);
		REQUIRE(store_reference_add_run(ctx->store, a, k, &va) == 0);
		REQUIRE(store_reference_add_run(ctx->store, b, k, &vb) == 0);
		mvec_free(&va);
		mvec_free(&vb);
	}
	{
		_cleanup_free_ char *path = xasprintf("/references/%lld/compare/%lld", (long long)a,
						      (long long)b);

		CHECK(get(path, &r) == 200);
		d = json_object_get(r.json, "differ");
		CHECKF(json_array_size(d) == 1, "one metric moved: %s", r.body ?: "");
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(d, 0), "metric")) ?: "",
			      "kernel_paging/count"));
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(d, 0), "direction")) ?: "",
			      "higher"));
		CHECK(json_real_value(json_object_get(json_array_get(d, 0), "z")) > 3);
		CHECK(json_integer_value(json_object_get(r.json, "compared")) == 2);
		CHECK(!strcmp(json_string_value(json_array_get(json_object_get(r.json, "only_a"), 0)) ?: "",
			      "kernel_sync/count"));
		CHECK(!strcmp(json_string_value(json_array_get(json_object_get(r.json, "only_b"), 0)) ?: "",
			      "kernel_block/count"));
		CHECK(json_integer_value(json_object_get(json_object_get(r.json, "a"), "id")) == a);
		CHECK(json_integer_value(json_object_get(json_object_get(r.json, "b"), "runs")) == 3);
	}
	{
		/* the other way: lower; and past a higher tau nothing moved */
		_cleanup_free_ char *back = xasprintf("/references/%lld/compare/%lld", (long long)b,
						      (long long)a);
		_cleanup_free_ char *strict = xasprintf("/references/%lld/compare/%lld?tau=100",
							(long long)a, (long long)b);
		_cleanup_free_ char *self = xasprintf("/references/%lld/compare/%lld", (long long)a,
						      (long long)a);

		CHECK(get(back, &r) == 200);
		CHECK(!strcmp(json_string_value(json_object_get(
				  json_array_get(json_object_get(r.json, "differ"), 0), "direction")) ?: "",
			      "lower"));
		CHECK(get(strict, &r) == 200 && json_array_size(json_object_get(r.json, "differ")) == 0);
		CHECK(get(self, &r) == 200 && json_array_size(json_object_get(r.json, "differ")) == 0);
	}
	{
		_cleanup_free_ char *missing = xasprintf("/references/%lld/compare/999999", (long long)a);
		_cleanup_free_ char *bad_tau = xasprintf("/references/%lld/compare/%lld?tau=0.1",
							 (long long)a, (long long)b);
		_cleanup_free_ char *unknown = xasprintf("/references/%lld/compare/%lld?x=1",
							 (long long)a, (long long)b);

		get(missing, &r);
		EXPECT_ERROR(&r, 404, "not_found");
		get(bad_tau, &r);
		EXPECT_ERROR(&r, 400, "bad_field");
		get(unknown, &r);
		EXPECT_ERROR(&r, 400, "unknown_field");
		get("/references/x/compare/1", &r);
		EXPECT_ERROR(&r, 404, "not_found");
		request("POST", "/references/1/compare/2", "{}", "application/json", 0, &r);
		CHECK(r.status == 405);
	}
	reply_clear(&r);
}

/* ---- validators and long polls ---- */

static double elapsed_s(uint64_t since_ns)
{
	return (now_mono_ns() - since_ns) / 1e9;
}

/* GET path with If-None-Match: inm (NULL: none). */
static long get_if(const char *path, const char *inm, struct reply *r)
{
	_cleanup_free_ char *h = inm ? xasprintf("If-None-Match: %s", inm) : NULL;
	long st;

	extra_header = h;
	st = get(path, r);
	extra_header = NULL;
	return st;
}

struct poll_arg {
	const char *path;
	const char *inm;
	struct reply r;
	double took_s;
};

static void *poll_thread(void *p)
{
	struct poll_arg *a = p;
	uint64_t t0 = now_mono_ns();

	get_if(a->path, a->inm, &a->r);
	a->took_s = elapsed_s(t0);
	return NULL;
}

static void *release_later(void *p)
{
	sleep_ms(400);
	set_block(false);
	return NULL;
}

static void test_validators_and_long_poll(const struct api_ctx *ctx)
{
	struct reply r = {}, r2 = {};
	_cleanup_free_ char *path = NULL, *wait2 = NULL, *wait20 = NULL, *trace = NULL;
	_cleanup_free_ char *etag = NULL, *done_etag = NULL, *done_body = NULL;
	struct poll_arg a = {};
	pthread_t t;
	int64_t id;
	uint64_t t0;

	tap_subtest("validators and long polls");
	set_block(true);
	id = submit("/references", "{\"workload\": \"checkout\"}");
	REQUIRE(id > 0 && wait_runner_blocked(id));
	path = xasprintf("/jobs/%lld", (long long)id);
	wait2 = xasprintf("/jobs/%lld?wait=2", (long long)id);
	wait20 = xasprintf("/jobs/%lld?wait=20", (long long)id);
	trace = xasprintf("/jobs/%lld/trace", (long long)id);

	/* a running job: an ETag, revalidated each time, 304 when the caller has it */
	CHECK(get(path, &r) == 200 && r.etag && r.etag[0] == '"');
	CHECK(r.cache_control && strcmp(r.cache_control, "no-cache") == 0);
	etag = r.etag ? xstrdup(r.etag) : xstrdup("\"none\"");
	CHECKF(get_if(path, etag, &r2) == 304 && r2.len == 0 && r2.etag &&
		       strcmp(r2.etag, etag) == 0,
	       "If-None-Match of the current tag: %ld, %zu bytes", r2.status, r2.len);
	{
		_cleanup_free_ char *list = xasprintf("\"0000000000000000\", W/%s", etag);

		CHECK(get_if(path, list, &r2) == 304);
		CHECK(get_if(path, "*", &r2) == 304);
		CHECK(get_if(path, "\"0000000000000000\"", &r2) == 200 && r2.json);
		CHECK(get_if(path, "bogus", &r2) == 200);
	}
	/* errors carry no tag */
	CHECK(get("/jobs/999999", &r2) == 404 && !r2.etag);

	/* a long poll on a job that does not change: answered when its time is up */
	t0 = now_mono_ns();
	CHECK(get_if(wait2, etag, &r2) == 304);
	CHECKF(elapsed_s(t0) >= 1.5, "?wait=2 with the current tag answered after %.2f s",
	       elapsed_s(t0));
	/* without If-None-Match it waits for a change from the body it first saw */
	t0 = now_mono_ns();
	CHECK(get(wait2, &r2) == 200 && r2.etag && strcmp(r2.etag, etag) == 0);
	CHECKF(elapsed_s(t0) >= 1.5, "?wait=2 answered after %.2f s", elapsed_s(t0));
	/* a tag the caller has that is no longer current: answered at once */
	t0 = now_mono_ns();
	CHECK(get_if(wait20, "\"0000000000000000\"", &r2) == 200);
	CHECKF(elapsed_s(t0) < 10, "?wait=20 with an old tag answered after %.2f s",
	       elapsed_s(t0));

	/* the job changes while a poll waits: answered then, with the new body */
	a.path = wait20;
	a.inm = etag;
	REQUIRE(pthread_create(&t, NULL, poll_thread, &a) == 0);
	sleep_ms(200);
	{
		pthread_t rel;

		REQUIRE(pthread_create(&rel, NULL, release_later, NULL) == 0);
		pthread_join(rel, NULL);
	}
	pthread_join(t, NULL);
	CHECKF(a.r.status == 200 && a.r.etag && strcmp(a.r.etag, etag) != 0,
	       "a poll across a change: %ld", a.r.status);
	CHECKF(a.took_s < 10, "a poll across a change answered after %.2f s", a.took_s);
	CHECKF(strcmp(state_of(&a.r), "running") != 0 ||
		   json_real_value(json_object_get(a.r.json, "progress")) > 0,
	       "the change is in the body: %s", a.r.body ? a.r.body : "");
	reply_clear(&a.r);
	REQUIRE(wait_job(id, "succeeded"));

	/* a finished job: the same bytes and tag every time, and no waiting */
	CHECK(get(path, &r) == 200 && r.etag && r.body);
	done_etag = xstrdup(r.etag ? r.etag : "");
	done_body = xstrdup(r.body ? r.body : "");
	CHECK(strcmp(done_etag, etag) != 0);
	CHECK(get(path, &r2) == 200 && r2.etag && strcmp(r2.etag, done_etag) == 0 && r2.body &&
	      strcmp(r2.body, done_body) == 0);
	CHECK(get_if(path, done_etag, &r2) == 304 && r2.len == 0);
	t0 = now_mono_ns();
	CHECK(get_if(wait20, done_etag, &r2) == 304);
	CHECKF(elapsed_s(t0) < 10, "?wait=20 on a finished job answered after %.2f s",
	       elapsed_s(t0));
	CHECK(request("HEAD", path, NULL, NULL, 0, &r2) == 200 && r2.etag &&
	      strcmp(r2.etag, done_etag) == 0 && r2.len == 0);
	/* the trace too, as JSON and as a page */
	CHECK(get(trace, &r) == 200 && r.etag && r.json);
	CHECK(get_if(trace, r.etag, &r2) == 304);
	{
		_cleanup_free_ char *html = xasprintf("%s?format=html", trace);

		CHECK(get(html, &r) == 200 && r.etag && r.body && strstr(r.body, "<html"));
		CHECK(get_if(html, r.etag, &r2) == 304);
	}

	/* wait takes seconds from 0 to 60, and nothing else is a parameter of a job */
	{
		static const char *const bad[] = {"?wait=61", "?wait=x", "?wait=-1", "?wait="};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			_cleanup_free_ char *p = xasprintf("%s%s", path, bad[i]);

			get(p, &r);
			EXPECT_ERROR(&r, 400, "bad_field");
		}
		free(path);
		path = xasprintf("/jobs/%lld?verbose=1", (long long)id);
		get(path, &r);
		EXPECT_ERROR(&r, 400, "unknown_field");
		free(path);
		path = xasprintf("/jobs/%lld?wait=0", (long long)id);
		CHECK(get(path, &r) == 200);
		free(path);
		path = xasprintf("/jobs/%lld", (long long)id);
	}

	/* a kept answer goes when retention removes its job */
	{
		struct store_retention keep_one = {.max_jobs = 1};
		struct store_retention_stats rs;
		int64_t later = submit("/references", "{\"workload\": \"checkout\"}");

		REQUIRE(later > 0 && wait_job(later, "succeeded"));
		CHECK(get(path, &r) == 200);
		CHECK(store_apply_retention(ctx->store, &keep_one, now_real_ns(), &rs) == 0 &&
		      rs.jobs_deleted > 0);
		get(path, &r);
		EXPECT_ERROR(&r, 404, "not_found");
		get(trace, &r);
		EXPECT_ERROR(&r, 404, "not_found");
	}
	reply_clear(&r);
	reply_clear(&r2);
}

/* The listener's refusals, and 304, on every route that reads (schema/openapi.yaml lists them). */
static void test_refusals_on_every_route(void)
{
	static const char *const paths[] = {
	    "/jobs",	   "/jobs/1",	    "/jobs/1/trace",
	    "/references", "/references/1", "/references/1/compare/1",
	    "/workloads",  "/tree",	    "/healthz",
	    "/metrics",	   "/services",
	};
	struct reply r = {}, r2 = {};
	size_t i;

	tap_subtest("refusals on every route");
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		extra_header = "Host: elsewhere.example";
		get(paths[i], &r);
		EXPECT_ERROR(&r, 421, "misdirected_request");
		extra_header = "Origin: http://elsewhere.example";
		get(paths[i], &r);
		EXPECT_ERROR(&r, 403, "origin_not_allowed");
		extra_header = NULL;
		/* /metrics changes between two asks (its uptime): 200 then */
		if (get(paths[i], &r) == 200 && r.etag)
			CHECK(get_if(paths[i], r.etag, &r2) == 304 || r2.status == 200);
	}
	request("POST", "/references", "{}", "text/plain", 0, &r);
	EXPECT_ERROR(&r, 415, "unsupported_media_type");
	reply_clear(&r);
	reply_clear(&r2);
}

/* A server stopped while a long poll waits answers it and stops (MHD must not stop suspended). */
static void test_stop_with_a_waiting_poll(struct api_ctx *ctx)
{
	struct http_options o = {.listen = "127.0.0.1:0"};
	struct http_server *h3 = NULL;
	struct poll_arg a = {};
	unsigned main_port = port;
	_cleanup_free_ char *path = NULL;
	uint64_t t0;
	pthread_t t;
	int64_t id;

	tap_subtest("stop with a waiting long poll");
	set_block(true);
	id = submit("/references", "{\"workload\": \"checkout\"}");
	REQUIRE(id > 0 && wait_runner_blocked(id));
	REQUIRE(http_start(&o, ctx, &h3) == 0);
	path = xasprintf("/jobs/%lld?wait=30", (long long)id);
	port = http_port(h3);
	a.path = path;
	REQUIRE(pthread_create(&t, NULL, poll_thread, &a) == 0);
	sleep_ms(500);
	t0 = now_mono_ns();
	http_stop(h3);
	CHECKF(elapsed_s(t0) < 10, "http_stop with a waiting poll took %.2f s", elapsed_s(t0));
	pthread_join(t, NULL);
	CHECKF(a.took_s < 10, "the waiting poll ended after %.2f s", a.took_s);
	CHECKF(a.r.status == 200 && strcmp(state_of(&a.r), "running") == 0,
	       "the waiting poll is answered with the job as it is: %ld", a.r.status);
	reply_clear(&a.r);
	port = main_port;
	set_block(false);
	REQUIRE(wait_job(id, "succeeded"));
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *schema = NULL, *db = NULL, *cmd = NULL;
	char *argv[] = {"true", NULL};
	struct workload checkout = {
	    .name = "checkout",
	    .description = "test workload",
	    .argv = argv,
	    .argc = 1,
	    .user = "nobody",
	    .timeout_s = 10,
	    .source = "checkout.json",
	};
	struct workload *items[] = {&checkout};
	struct service web = {.name = "web", .cgroup = "/argus-test-api-no-such-cgroup",
			      .user = "nobody"};
	struct service *svcs[] = {&web};
	struct service_registry services = {.items = svcs, .n = 1};
	struct workload_registry registry = {.items = items, .n = 1, .services = &services};
	struct config cfg = {
	    .queue_max = 2,
	    .max_body = 4096,
	    .reference_repeats = 3,
	    .tau = 3,
	    .window_s = 5,
	};
	struct api_ctx ctx = {
	    .cfg = &cfg,
	    .workloads = &registry,
	    .llm_configured = false,
	    .kernel_release = "6.18.0-test",
	    .hostname = "argus-test-host",
	};
	struct http_server *h = NULL, *h2 = NULL;
	struct http_options o = {};
	struct reply r = {};

	REQUIRE(src);
	REQUIRE(mkdtemp(tmpdir));
	REQUIRE(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
	if (getenv("ARGUS_API_RECORD"))
		routes_each(record_route, NULL);
	CPU_ZERO(&checkout.cpuset);
	schema = xasprintf("%s/schema", src);
	db = xasprintf("%s/argusd.db", tmpdir);
	REQUIRE(store_open(db, schema, &ctx.store) == 0);
	REQUIRE(jobs_start(ctx.store, cfg.queue_max, runner, NULL, &ctx.jobs) == 0);
	ctx.started_mono_ns = now_mono_ns();

	o.listen = "127.0.0.1";
	CHECK(http_start(&o, &ctx, &h2) == -EINVAL);
	o.listen = "127.0.0.1:99999";
	CHECK(http_start(&o, &ctx, &h2) == -EINVAL);
	o.listen = "nowhere:80";
	CHECK(http_start(&o, &ctx, &h2) == -EINVAL);
	o.listen = NULL;
	CHECK(http_start(&o, &ctx, &h2) == -EINVAL);
	/* an exposed listener needs a token */
	o.listen = "0.0.0.0:0";
	CHECK(http_start(&o, &ctx, &h2) == -EPERM);
	CHECK(http_listen_is_loopback("127.0.0.1:80") && http_listen_is_loopback("127.3.4.5:1") &&
	      http_listen_is_loopback("[::1]:80") && !http_listen_is_loopback("0.0.0.0:80") &&
	      !http_listen_is_loopback("[::]:80") && !http_listen_is_loopback("10.1.2.3:80") &&
	      !http_listen_is_loopback("bogus"));

	sock_path = xasprintf("%s/argusd.sock", tmpdir);
	o.listen = "127.0.0.1:0";
	o.unix_path = sock_path;
	REQUIRE(http_start(&o, &ctx, &h) == 0);
	port = http_port(h);
	REQUIRE(port > 0);
	CHECK(strcmp(http_unix_path(h), sock_path) == 0);
	{
		/* the same port twice: the error of bind(2) comes back; the live socket is kept */
		_cleanup_free_ char *again = xasprintf("127.0.0.1:%u", port);
		struct http_options o2 = {.listen = again};

		CHECK(http_start(&o2, &ctx, &h2) == -EADDRINUSE);
		o2 = (struct http_options){.unix_path = sock_path};
		CHECK(http_start(&o2, &ctx, &h2) == -EADDRINUSE);
	}
	{
		/* a file that is not a socket is never replaced */
		_cleanup_free_ char *file = xasprintf("%s/not-a-socket", tmpdir);
		struct http_options o2 = {.unix_path = file};
		FILE *f = fopen(file, "w");

		REQUIRE(f);
		fclose(f);
		CHECK(http_start(&o2, &ctx, &h2) == -EEXIST);
		CHECK(access(file, F_OK) == 0);
	}

	test_basics(latest_schema_version(schema));
	test_bad_requests();
	test_flow();
	test_list_and_paging();
	test_queue_full_and_cancel(&cfg);
	test_delete_reference();
	test_tcp_read_only();
	{
		uint64_t now = now_real_ns();

		REQUIRE(store_pace_add(ctx.store, now - 600000000000ull, "argus-test-host", 0, 9.0) == 0);
		REQUIRE(store_pace_add(ctx.store, now, "argus-test-host", 0, 8.25) == 0);
		REQUIRE(store_pace_add(ctx.store, now, "argus-test-host", 3, 11.5) == 0);
		REQUIRE(store_pace_add(ctx.store, now, "another-host", 1, 7.0) == 0);
	}
	test_metrics();
	test_compare(&ctx);
	test_refusals_on_every_route();
	test_validators_and_long_poll(&ctx);
	test_stop_with_a_waiting_poll(&ctx);

	/* without a job queue (as while stopping), submissions are 503 */
	jobs_stop(ctx.jobs);
	ctx.jobs = NULL;
	post("/references", "{\"workload\": \"checkout\"}", &r);
	EXPECT_ERROR(&r, 503, "unavailable");
	reply_clear(&r);

	http_stop(h);
	http_stop(NULL);
	/* the socket goes with the server */
	CHECK(access(sock_path, F_OK) < 0 && errno == ENOENT);
	free(sock_path);
	store_close(ctx.store);
	curl_global_cleanup();
	cmd = xasprintf("rm -rf '%s'", tmpdir);
	CHECK(system(cmd) == 0);
	return tap_done("test-api");
}
