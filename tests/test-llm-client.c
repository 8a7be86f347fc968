// SPDX-License-Identifier: MIT
/*
 * The LLM client's pure parts: parsing chat completions (tool calls with
 * string or object arguments, unparsable arguments, content parts, usage
 * present or not, errors, garbage, truncation), reading the key file
 * (credentials directory, trimming, refusals that never echo the key),
 * the endpoint URL's checks and redaction, scrubbing the key in its raw and
 * JSON-escaped forms; and the retry loop against a scripted endpoint (429 then
 * success, garbage, a timeout).
 */
#include "daemon/llm_client.h"
#include "daemon/util.h"
#include "tests/fake-llm.h"
#include "tests/tap.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>

static int parse(const char *body, struct llm_reply *r, char **err)
{
	*err = NULL;
	return llm_parse_reply(body, strlen(body), r, err);
}

static void test_parse(void)
{
	struct llm_reply r;
	char *err = NULL;
	json_t *tc;

	CHECK(parse("{\"choices\": [{\"message\": {\"role\": \"assistant\", \"content\": null, "
		    "\"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", \"function\": "
		    "{\"name\": \"author_probe\", \"arguments\": \"{\\\"source\\\": \\\"int x;\\\"}\"}}]},"
		    " \"finish_reason\": \"tool_calls\"}], \"usage\": {\"prompt_tokens\": 10, "
		    "\"completion_tokens\": 5, \"total_tokens\": 15}}",
		    &r, &err) == 0);
	tc = json_array_get(r.tool_calls, 0);
	CHECK(json_array_size(r.tool_calls) == 1);
	CHECK(!strcmp(json_string_value(json_object_get(tc, "name")), "author_probe"));
	CHECK(!strcmp(json_string_value(json_object_get(json_object_get(tc, "arguments"), "source")),
		      "int x;"));
	CHECK(r.total_tokens == 15 && r.prompt_tokens == 10 && r.completion_tokens == 5);
	CHECK(r.content == NULL && !strcmp(r.finish_reason, "tool_calls"));
	/* the history keeps the arguments as the model wrote them */
	CHECK(json_is_string(json_object_get(
		json_object_get(json_array_get(json_object_get(r.message, "tool_calls"), 0),
				"function"),
		"arguments")));
	llm_reply_clear(&r);

	/* arguments as an object, no id, no usage, content in parts */
	CHECK(parse("{\"choices\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": "
		    "\"a\"}, {\"type\": \"text\", \"text\": \"b\"}], \"tool_calls\": [{\"function\": "
		    "{\"name\": \"decide\", \"arguments\": {\"action\": \"abstain\"}}}]}}]}",
		    &r, &err) == 0);
	tc = json_array_get(r.tool_calls, 0);
	CHECK(!strcmp(json_string_value(json_object_get(tc, "id")), "call_0"));
	CHECK(!strcmp(json_string_value(json_object_get(json_object_get(tc, "arguments"), "action")),
		      "abstain"));
	CHECK(r.content && !strcmp(r.content, "ab"));
	CHECK(r.total_tokens == -1);
	llm_reply_clear(&r);

	/* arguments that are not JSON: kept, flagged for the model */
	CHECK(parse("{\"choices\": [{\"message\": {\"tool_calls\": [{\"id\": \"x\", \"function\": "
		    "{\"name\": \"decide\", \"arguments\": \"{action: descend\"}}]}}]}",
		    &r, &err) == 0);
	tc = json_array_get(r.tool_calls, 0);
	CHECK(json_is_null(json_object_get(tc, "arguments")));
	CHECK(json_string_value(json_object_get(tc, "arguments_error")));
	llm_reply_clear(&r);

	/* a text-only answer (a refusal, or a model that will not call tools) */
	CHECK(parse("{\"choices\": [{\"message\": {\"content\": \"I cannot help\"}, "
		    "\"finish_reason\": \"stop\"}]}",
		    &r, &err) == 0);
	CHECK(json_array_size(r.tool_calls) == 0 && !strcmp(r.content, "I cannot help"));
	llm_reply_clear(&r);

	CHECK(parse("not json at all", &r, &err) == -EBADMSG);
	CHECKF(err && strstr(err, "not JSON"), "%s", err ?: "");
	free(err);
	CHECK(parse("{\"choices\": [{\"message\": {\"content\": \"trunc", &r, &err) == -EBADMSG);
	free(err);
	CHECK(parse("{\"choices\": []}", &r, &err) == -EBADMSG);
	free(err);
	CHECK(parse("{\"error\": {\"message\": \"model overloaded\"}}", &r, &err) == -EBADMSG);
	CHECKF(err && strstr(err, "model overloaded"), "%s", err ?: "");
	free(err);
	CHECK(parse("{\"choices\": [{\"message\": {\"tool_calls\": 5}}]}", &r, &err) == -EBADMSG);
	free(err);
}

static void test_key(void)
{
	char dir[] = "/tmp/argus-key-XXXXXX", path[128];
	char *key = NULL, *err = NULL;
	FILE *f;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/llm-key", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("  sk-secret-123\n", f);
	fclose(f);
	CHECK(llm_read_key("llm-key", dir, &key, &err) == 0 && key && !strcmp(key, "sk-secret-123"));
	free(key);
	key = NULL;
	CHECK(llm_read_key(path, NULL, &key, &err) == 0 && key);
	free(key);
	key = NULL;
	CHECK(llm_read_key("llm-key", NULL, &key, &err) == -ENOENT && !key);
	CHECK(err && strstr(err, "CREDENTIALS_DIRECTORY"));
	free(err);
	err = NULL;
	CHECK(llm_read_key("../etc/key", dir, &key, &err) == -EINVAL);
	free(err);
	err = NULL;
	CHECK(llm_read_key("missing", dir, &key, &err) == -ENOENT);
	free(err);
	err = NULL;

	f = fopen(path, "w");
	REQUIRE(f);
	fputs("sk-two words\n", f);
	fclose(f);
	CHECK(llm_read_key("llm-key", dir, &key, &err) == -EINVAL);
	CHECKF(err && !strstr(err, "sk-two"), "the error shows the key: %s", err ?: "");
	free(err);
	unlink(path);
	rmdir(dir);
}

/* URL acceptance only: nothing here connects anywhere but loopback. */
static void test_url(void)
{
	static const char *const ok[] = { "https://api.example.net/v1", "https://10.1.2.3:8443/v1",
					   "http://127.0.0.1:8080/v1", "http://127.3.4.5/v1",
					   "http://localhost:11434/v1", "http://LOCALHOST/v1",
					   "http://[::1]:8080/v1", "http://127.1/v1",
					   "https://api.example.net/v1?api-version=2024" };
	static const struct {
		const char *url, *why;
	} refused[] = {
		/* curl reads "localhost:1" as userinfo: the host is elsewhere.example */
		{ "http://localhost:1@elsewhere.example/v1", "user name or password" },
		{ "http://user:pw@127.0.0.1/v1", "user name or password" },
		{ "https://user@api.example.net/v1", "user name or password" },
		{ "http://10.1.2.3/v1", "not a loopback" },
		{ "http://api.example.net/v1", "not a loopback" },
		{ "http://127.0.0.1.example.net/v1", "not a loopback" },
		{ "http://localhost.example.net/v1", "not a loopback" },
		{ "http://[::2]/v1", "not a loopback" },
		{ "ftp://127.0.0.1/v1", "only http" },
		{ "file:///etc/passwd", "only http" },
		{ "127.0.0.1:8080/v1", "libcurl" },
		{ "http://127.0.0.1/v 1", "libcurl" },
		{ "", "missing" },
	};
	char *err = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		CHECKF(llm_url_check(ok[i], false, &err) == 0, "%s: %s", ok[i], err ?: "");
		free(err);
		err = NULL;
	}
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		int r = llm_url_check(refused[i].url, false, &err);

		CHECKF(r == -EINVAL && err && strstr(err, refused[i].why), "%s: %d %s",
		       refused[i].url, r, err ?: "(accepted)");
		/* the refusal never shows the userinfo */
		CHECKF(!err || (!strstr(err, "pw") && !strstr(err, "user@") &&
				!strstr(err, "localhost:1")),
		       "%s: %s", refused[i].url, err);
		free(err);
		err = NULL;
	}
	/* llm_allow_insecure: plain http anywhere; userinfo and other schemes still refused */
	CHECK(llm_url_check("http://10.1.2.3/v1", true, &err) == 0);
	CHECK(llm_url_check("http://api.example.net:8080/v1", true, &err) == 0);
	CHECK(llm_url_check("http://localhost:1@elsewhere.example/v1", true, &err) == -EINVAL);
	free(err);
	err = NULL;
	CHECK(llm_url_check("ftp://10.1.2.3/v1", true, &err) == -EINVAL);
	free(err);
	err = NULL;
	CHECK(llm_url_check(NULL, false, &err) == -EINVAL);
	free(err);
}

static void check_redact(const char *url, const char *want)
{
	char *got = llm_url_redact(url);

	CHECKF(got && !strcmp(got, want), "%s: %s, want %s", url ?: "NULL", got ?: "(null)", want);
	free(got);
}

static void test_redact(void)
{
	check_redact("https://api.example.net/v1?key=sk-in-query#frag",
		     "https://api.example.net:443/v1");
	check_redact("http://user:pw@127.0.0.1:8080/v1/?token=t", "http://127.0.0.1:8080/v1/");
	check_redact("http://localhost:1@elsewhere.example/v1", "http://elsewhere.example:80/v1");
	check_redact("http://[::1]:9000", "http://[::1]:9000/");
	check_redact("not a url", "(not a valid URL)");
	check_redact(NULL, "(not a valid URL)");
}

/* A client refuses what llm_url_check refuses; its errors show the redacted URL only. */
static void test_client_url(void)
{
	struct llm_client *c = NULL;
	struct llm_client_opts o = { .model = "m", .timeout_s = 2, .attempts = 1 };
	json_t *msgs = json_pack("[{s:s,s:s}]", "role", "user", "content", "hello");
	struct llm_reply r = {};
	char *err = NULL;

	o.base_url = "http://10.1.2.3/v1";
	CHECK(llm_client_new(&o, &c) == -EINVAL && !c);
	o.base_url = "http://localhost:1@elsewhere.example/v1";
	CHECK(llm_client_new(&o, &c) == -EINVAL && !c);
	o.base_url = "http://10.1.2.3/v1";
	o.allow_insecure = true;
	REQUIRE(llm_client_new(&o, &c) == 0 && c);
	llm_client_free(c);
	c = NULL;

	/* port 1 of loopback, where nothing listens: the error names the URL without its query */
	o.allow_insecure = false;
	o.base_url = "http://127.0.0.1:1/v1/?secret-query=q1";
	REQUIRE(llm_client_new(&o, &c) == 0);
	CHECK(llm_chat(c, msgs, NULL, 10, 0, &r, &err) < 0);
	CHECKF(err && strstr(err, "http://127.0.0.1:1/v1/chat/completions") &&
		       !strstr(err, "secret-query"),
	       "%s", err ?: "");
	free(err);
	llm_reply_clear(&r);
	llm_client_free(c);
	json_decref(msgs);
}

static void test_scrub(void)
{
	/* a key with the characters JSON escapes ('"', '\', '/') and some encoders escape ("<>") */
	static const char key[] = "sk-a\"b\\c/d<e>";
	json_auto_t *doc = NULL, *shared = NULL;
	char *s, *text;
	json_t *clean;

	s = llm_scrub("Bearer abc and abc again", "abc");
	CHECK(!strcmp(s, "Bearer [redacted] and [redacted] again"));
	free(s);
	s = llm_scrub("nothing here", NULL);
	CHECK(!strcmp(s, "nothing here"));
	free(s);
	CHECK(llm_scrub(NULL, "abc") == NULL);

	/* the key raw, JSON-escaped (with and without "\/"), with \u escapes, and escaped twice */
	s = llm_scrub("raw sk-a\"b\\c/d<e> json sk-a\\\"b\\\\c/d<e> slash sk-a\\\"b\\\\c\\/d<e> "
		      "html sk-a\\\"b\\\\c/d\\u003ce\\u003e twice sk-a\\\\\\\"b\\\\\\\\c/d<e> end",
		      key);
	CHECKF(!strcmp(s, "raw [redacted] json [redacted] slash [redacted] html [redacted] twice "
			  "[redacted] end"),
	       "%s", s);
	free(s);

	/*
	 * A JSON document as an endpoint might send it back: the key in a string
	 * (raw in the tree, escaped in its text), as an object key, and inside
	 * tool-call arguments, which are JSON text in a string.
	 */
	doc = json_pack("{s:s,s:[{s:s}],s:i}", "content", "echo sk-a\"b\\c/d<e> done", "tool_calls",
			"arguments", "{\"note\": \"sk-a\\\"b\\\\c/d<e>\"}", "n", 7);
	json_object_set_new(doc, key, json_string("value"));
	text = json_dumps(doc, JSON_COMPACT);
	/* its text holds the escaped form, not the raw one: a search for the raw key misses it */
	CHECK(text && !strstr(text, key) && strstr(text, "sk-a\\\"b\\\\c/d<e>"));
	free(text);

	shared = json_incref(doc);
	clean = llm_scrub_json(TAKE_PTR(doc), key);
	text = json_dumps(clean, JSON_COMPACT | JSON_SORT_KEYS);
	CHECKF(text && !strstr(text, "sk-a") && !strstr(text, "c/d") &&
		       strstr(text, "\"echo [redacted] done\"") &&
		       strstr(text, "{\\\"note\\\": \\\"[redacted]\\\"}") &&
		       strstr(text, "\"[redacted]\":\"value\"") && strstr(text, "\"n\":7"),
	       "%s", text ?: "");
	free(text);
	/* a document shared with someone else is left as it was */
	CHECK(clean != shared && json_object_get(shared, key) &&
	      strstr(json_string_value(json_object_get(shared, "content")), key));
	json_decref(clean);

	/* nothing to scrub: the same document back */
	doc = json_pack("{s:s,s:[i]}", "a", "b", "c", 1);
	clean = llm_scrub_json(json_incref(doc), key);
	CHECK(clean == doc);
	json_decref(clean);
	CHECK(llm_scrub_json(NULL, key) == NULL);
}

/* The retry loop against the scripted endpoint. */
static void test_transport(const char *tmpl)
{
	struct fake_llm f;
	struct llm_client *c = NULL;
	struct llm_client_opts o = { .model = "m", .key = "k-123", .timeout_s = 1,
				     .backoff_ms = 50 };
	json_t *msgs = json_pack("[{s:s,s:s}]", "role", "user", "content", "hello");
	struct llm_reply r = {};
	char url[64], *err = NULL;
	int rc;

	REQUIRE(fake_llm_start(&f, "m", "k-123", tmpl) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1", f.port);
	o.base_url = url;
	REQUIRE(llm_client_new(&o, &c) == 0);

	fake_llm_set(&f, "429");
	rc = llm_chat(c, msgs, NULL, 100, 0, &r, &err);
	CHECKF(rc == 0 && r.attempts == 2 && r.http_status == 200, "429: %d %u %s", rc, r.attempts,
	       err ?: "");
	CHECK(r.content && strstr(r.content, "level's data"));
	llm_reply_clear(&r);
	free(err);
	err = NULL;

	fake_llm_set(&f, "garbage");
	rc = llm_chat(c, msgs, NULL, 100, 0, &r, &err);
	CHECKF(rc == -EBADMSG && r.attempts == LLM_ATTEMPTS && err && strstr(err, "not JSON"),
	       "garbage: %d %u %s", rc, r.attempts, err ?: "");
	llm_reply_clear(&r);
	free(err);
	err = NULL;

	fake_llm_set(&f, "slow");
	f.slow_s = 2;
	o.attempts = 2;
	llm_client_free(c);
	REQUIRE(llm_client_new(&o, &c) == 0);
	rc = llm_chat(c, msgs, NULL, 100, 0, &r, &err);
	CHECKF(rc == -ETIMEDOUT && r.attempts == 2, "slow: %d %u %s", rc, r.attempts, err ?: "");
	CHECK(err && !strstr(err, "k-123"));
	llm_reply_clear(&r);
	free(err);
	err = NULL;

	/* the deadline bounds all attempts together */
	rc = llm_chat(c, msgs, NULL, 100, now_mono_ns() + 300 * 1000000ull, &r, &err);
	CHECKF(rc == -ETIMEDOUT && r.elapsed_ns < 1500 * 1000000ull, "deadline: %d %.2fs", rc,
	       r.elapsed_ns / 1e9);
	llm_reply_clear(&r);
	free(err);

	CHECK(f.unauthorized == 0);
	llm_client_free(c);
	json_decref(msgs);
	fake_llm_stop(&f);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	char tmpl[512];

	snprintf(tmpl, sizeof(tmpl), "%s/tests/authored/good.bpf.c", src ?: ".");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_parse();
	test_key();
	test_url();
	test_redact();
	test_client_url();
	test_scrub();
	test_transport(tmpl);
	curl_global_cleanup();
	return tap_done("test-llm-client");
}
