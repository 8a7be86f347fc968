// SPDX-License-Identifier: MIT
/*
 * The LLM client's pure parts: parsing chat completions (tool calls with
 * string or object arguments, unparsable arguments, content parts, usage
 * present or not, errors, garbage, truncation), reading the key file
 * (credentials directory, trimming, refusals that never echo the key),
 * scrubbing; and the retry loop against a scripted endpoint (429 then
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

static void test_url(void)
{
	static const char *const ok_with_key[] = { "https://api.example.net/v1", "http://127.0.0.1:8080/v1",
						    "http://localhost:11434/v1", "http://[::1]:8080/v1" };
	static const char *const refused_with_key[] = { "http://10.0.0.5:8080/v1", "http://api.example.net/v1",
							 "http://127.0.0.1.example.net/v1" };
	char *err = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok_with_key); i++) {
		CHECKF(llm_url_check(ok_with_key[i], true, &err) == 0, "%s: %s", ok_with_key[i], err ?: "");
		free(err);
		err = NULL;
	}
	for (i = 0; i < ARRAY_SIZE(refused_with_key); i++) {
		CHECKF(llm_url_check(refused_with_key[i], true, &err) == -EINVAL && err &&
			       strstr(err, "https://"),
		       "%s accepted", refused_with_key[i]);
		free(err);
		err = NULL;
	}
	/* no key, nothing to protect: any http host */
	CHECK(llm_url_check("http://10.0.0.5:8080/v1", false, &err) == 0);
	CHECK(llm_url_check("ftp://x/v1", false, &err) == -EINVAL);
	free(err);
}

static void test_scrub(void)
{
	char *s = llm_scrub("Bearer abc and abc again", "abc");

	CHECK(!strcmp(s, "Bearer [redacted] and [redacted] again"));
	free(s);
	s = llm_scrub("nothing here", NULL);
	CHECK(!strcmp(s, "nothing here"));
	free(s);
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
	test_scrub();
	test_transport(tmpl);
	curl_global_cleanup();
	return tap_done("test-llm-client");
}
