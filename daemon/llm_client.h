/* SPDX-License-Identifier: MIT */
/*
 * A client of OpenAI-compatible chat completions with tool calling
 * (vLLM, llama.cpp's server, Ollama, hosted services): POST
 * {base}/chat/completions, libcurl and jansson.
 *
 * Bounded everywhere: each request by a timeout, the response by size, the
 * retries (429, 5xx, connection errors, timeouts, truncated or malformed
 * bodies) by count and by the caller's deadline, with exponential backoff
 * (Retry-After honoured up to the backoff ceiling). The API key goes into
 * the Authorization header and nowhere else: every text this module
 * returns has it scrubbed, raw and JSON-escaped. The endpoint's URL is
 * parsed and checked with libcurl's URL API; the texts this module returns
 * show it only redacted (scheme://host:port/path), since its userinfo or
 * query may carry credentials.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define LLM_RESPONSE_MAX (4 * 1024 * 1024)
#define LLM_KEY_MAX 4096
#define LLM_URL_MAX 2048
#define LLM_ATTEMPTS 4
#define LLM_BACKOFF_MS 500
#define LLM_BACKOFF_MAX_MS 8000

struct llm_client_opts {
	const char *base_url; /* "http://127.0.0.1:8080/v1" */
	const char *model;
	const char *key;      /* borrowed; NULL: no Authorization header */
	bool allow_insecure;  /* plain http:// to a host that is not loopback (llm_url_check) */
	unsigned timeout_s;   /* per request */
	unsigned attempts;    /* 0: LLM_ATTEMPTS */
	unsigned backoff_ms;  /* first pause; 0: LLM_BACKOFF_MS */
	bool (*should_stop)(void *userdata);
	void *userdata;
};

/* One assistant turn, as parsed. */
struct llm_reply {
	json_t *message;     /* {"role": "assistant", "content": ..., "tool_calls": [...]} */
	json_t *tool_calls;  /* [{"id", "name", "arguments" (object, or null when unparsable),
			      *   "arguments_error" (string, when unparsable)}] */
	char *content;	     /* text, NULL when none */
	char *finish_reason; /* NULL when absent */
	long prompt_tokens, completion_tokens, total_tokens; /* -1 when "usage" is absent */
	unsigned attempts;   /* HTTP requests made */
	long http_status;    /* of the last attempt */
	uint64_t elapsed_ns; /* all attempts and pauses */
};
void llm_reply_clear(struct llm_reply *r);

struct llm_client;

/*
 * A client of base_url + "/chat/completions" (the base's query kept, never
 * shown). -EINVAL when base_url fails llm_url_check or model is missing.
 */
int llm_client_new(const struct llm_client_opts *o, struct llm_client **ret);
void llm_client_free(struct llm_client *c);

/*
 * One chat completion. messages and tools are sent as given, with "model",
 * "max_tokens" and "tool_choice": "auto". deadline_ns (CLOCK_MONOTONIC, 0:
 * none) bounds all attempts together. Returns 0 and fills *ret; on failure
 * a negative errno (-ETIMEDOUT, -ECONNREFUSED and -EIO for transport
 * errors, -EBADMSG for a malformed response, -EPROTO for an HTTP error
 * that is not worth retrying, -ECANCELED when should_stop said so) with
 * *ret_err (malloc'ed, scrubbed) saying what happened, and ret->attempts,
 * http_status and elapsed_ns filled for the trace.
 */
int llm_chat(struct llm_client *c, const json_t *messages, const json_t *tools,
	     unsigned max_tokens, uint64_t deadline_ns, struct llm_reply *ret, char **ret_err);

/*
 * Parse a chat completion body (pure): choices[0].message, its tool calls
 * (arguments given as a JSON string or an object), finish_reason, usage.
 * -EBADMSG with *ret_err when it is not a chat completion.
 */
int llm_parse_reply(const char *body, size_t len, struct llm_reply *ret, char **ret_err);

/*
 * Read the API key: path as given when absolute, else relative to cred_dir
 * ($CREDENTIALS_DIRECTORY; -ENOENT when NULL). At most LLM_KEY_MAX bytes,
 * surrounding white space dropped; only printable ASCII without spaces
 * (it goes into a header). *ret_err never contains the key.
 */
int llm_read_key(const char *path, const char *cred_dir, char **ret, char **ret_err);

/*
 * Is url a usable endpoint? Parsed with libcurl's URL API, so that what is
 * checked is what libcurl connects to: http:// or https:// only, a host,
 * no userinfo ("user:password@"; in "http://localhost:1@elsewhere/v1" the
 * host is "elsewhere"), at most LLM_URL_MAX bytes. Plain http:// only to a
 * loopback host (127.0.0.0/8, ::1, localhost) unless allow_insecure: the
 * key, the prompts and the replies that decide what is compiled and loaded
 * cross no network in clear text. -EINVAL with *ret_err, which shows the
 * URL only in its redacted form (never the userinfo or the query).
 */
int llm_url_check(const char *url, bool allow_insecure, char **ret_err);

/*
 * What logs and traces may show of an endpoint URL (pure): scheme://host:port/path,
 * the port explicit, without userinfo, query or fragment. A URL that does
 * not parse gives "(not a valid URL)". Always a malloc'ed string.
 */
char *llm_url_redact(const char *url);

/*
 * A copy of text with every occurrence of secret replaced by "[redacted]":
 * the secret as is, and as JSON writes it inside a string, escaped once
 * (with "/" as "/" or "\/", with "<", ">", "&" as \u escapes, as some
 * encoders do) and twice (JSON text held in a JSON string, such as tool
 * call arguments). NULL text gives NULL; a NULL or empty secret a plain copy.
 */
char *llm_scrub(const char *text, const char *secret);

/*
 * The same for a JSON document: every string value and object key scrubbed
 * as llm_scrub does. Steals doc and returns the scrubbed document (doc
 * itself when nothing had to change; a copy otherwise, so that documents
 * shared with others are left as they are). NULL gives NULL.
 */
json_t *llm_scrub_json(json_t *doc, const char *secret);
