// SPDX-License-Identifier: MIT
/*
 * OpenAI-compatible chat completions over libcurl. See llm_client.h.
 */
#include "daemon/llm_client.h"
#include "daemon/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#define LLM_MAX_TOOL_CALLS 16
#define LLM_EXCERPT 300

struct llm_client {
	CURLU *url;	   /* base + /chat/completions, the query kept: what libcurl uses */
	char *shown;	   /* its redacted form, for messages */
	bool direct;	   /* plain http: never through a proxy */
	char *model;
	char *key;	   /* for scrubbing */
	char *auth_header; /* "Authorization: Bearer ..." */
	unsigned timeout_s, attempts, backoff_ms;
	bool (*should_stop)(void *userdata);
	void *userdata;
};

static void erase_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void llm_reply_clear(struct llm_reply *r)
{
	if (!r)
		return;
	json_decref(r->message);
	json_decref(r->tool_calls);
	free(r->content);
	free(r->finish_reason);
	memset(r, 0, sizeof(*r));
}

/* ---- scrubbing ---- */

enum { ESC_SLASH = 1 << 0, ESC_HTML = 1 << 1 };

/* s escaped as inside a JSON string; flags: also "/" as "\/", "<>&" as \u escapes. */
static char *json_escape(const char *s, unsigned flags)
{
	static const char short_ctl[] = "\n\t\r\b\f", short_esc[] = "ntrbf";
	char *out = malloc(strlen(s) * 6 + 1), *o = out;

	if (!out)
		abort();
	for (; *s; s++) {
		unsigned char c = *s;
		const char *ctl = strchr(short_ctl, c);

		if (c == '"' || c == '\\' || (c == '/' && (flags & ESC_SLASH))) {
			*o++ = '\\';
			*o++ = c;
		} else if (ctl) {
			*o++ = '\\';
			*o++ = short_esc[ctl - short_ctl];
		} else if (c < 0x20 || ((c == '<' || c == '>' || c == '&') && (flags & ESC_HTML))) {
			o += sprintf(o, "\\u%04x", c);
		} else {
			*o++ = c;
		}
	}
	*o = 0;
	return out;
}

#define SCRUB_FORMS 6
#define REDACTED "[redacted]"

/* The texts a secret may appear as (see llm_scrub), distinct, longest first. */
struct scrub_forms {
	char *form[SCRUB_FORMS];
	size_t len[SCRUB_FORMS];
	size_t n;
};

static void scrub_forms_add(struct scrub_forms *f, char *s)
{
	size_t i, len = strlen(s);

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->form[i], s)) {
			free(s);
			return;
		}
	/* insertion keeps them longest first: a longer form may contain a shorter one */
	for (i = f->n; i > 0 && f->len[i - 1] < len; i--) {
		f->form[i] = f->form[i - 1];
		f->len[i] = f->len[i - 1];
	}
	f->form[i] = s;
	f->len[i] = len;
	f->n++;
}

static void scrub_forms_init(struct scrub_forms *f, const char *secret)
{
	_cleanup_free_ char *once = json_escape(secret, 0);
	_cleanup_free_ char *once_slash = json_escape(secret, ESC_SLASH);

	memset(f, 0, sizeof(*f));
	scrub_forms_add(f, xstrdup(secret));
	scrub_forms_add(f, json_escape(secret, ESC_HTML));
	scrub_forms_add(f, json_escape(once, 0));
	scrub_forms_add(f, json_escape(once_slash, ESC_SLASH));
	scrub_forms_add(f, TAKE_PTR(once));
	scrub_forms_add(f, TAKE_PTR(once_slash));
}

static void scrub_forms_clear(struct scrub_forms *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		explicit_bzero(f->form[i], f->len[i]);
		free(f->form[i]);
	}
	f->n = 0;
}

/* Replace one form in buf (len bytes, NUL bytes allowed); NULL when it does not occur. */
static char *replace_form(const char *buf, size_t len, const char *form, size_t flen,
			  size_t *ret_len)
{
	const char *p = buf, *end = buf + len, *q;
	size_t n = 0;
	char *out, *o;

	for (q = memmem(p, end - p, form, flen); q; q = memmem(p, end - p, form, flen)) {
		n++;
		p = q + flen;
	}
	if (!n)
		return NULL;
	out = malloc(len - n * flen + n * strlen(REDACTED) + 1);
	if (!out)
		abort();
	for (o = out, p = buf; (q = memmem(p, end - p, form, flen)); p = q + flen) {
		memcpy(o, p, q - p);
		o += q - p;
		memcpy(o, REDACTED, strlen(REDACTED));
		o += strlen(REDACTED);
	}
	memcpy(o, p, end - p);
	o += end - p;
	*o = 0;
	*ret_len = o - out;
	return out;
}

/* buf with every form replaced, into *ret (malloc'ed); false, *ret untouched, when none occurs. */
static bool scrub_buf(const struct scrub_forms *f, const char *buf, size_t len, char **ret,
		      size_t *ret_len)
{
	char *cur = NULL;
	size_t i, cur_len = len;

	for (i = 0; i < f->n; i++) {
		size_t nl;
		char *next = replace_form(cur ?: buf, cur_len, f->form[i], f->len[i], &nl);

		if (next) {
			free(cur);
			cur = next;
			cur_len = nl;
		}
	}
	if (!cur)
		return false;
	*ret = cur;
	*ret_len = cur_len;
	return true;
}

char *llm_scrub(const char *text, const char *secret)
{
	struct scrub_forms f;
	char *out;
	size_t len;

	if (!text)
		return NULL;
	if (!secret || !*secret)
		return xstrdup(text);
	scrub_forms_init(&f, secret);
	if (!scrub_buf(&f, text, strlen(text), &out, &len))
		out = xstrdup(text);
	scrub_forms_clear(&f);
	return out;
}

/* A new reference: v itself when nothing in it changes, a scrubbed copy otherwise. */
static json_t *scrub_value(json_t *v, const struct scrub_forms *f)
{
	char *clean;
	size_t len, i;
	json_t *copy = NULL, *item;
	const char *key;

	switch (json_typeof(v)) {
	case JSON_STRING:
		if (!scrub_buf(f, json_string_value(v), json_string_length(v), &clean, &len))
			return json_incref(v);
		copy = json_stringn_nocheck(clean, len);
		free(clean);
		return copy ?: json_string("[redacted]");
	case JSON_ARRAY:
		json_array_foreach(v, i, item)
		{
			json_t *c = scrub_value(item, f);

			if (c != item && !copy) {
				size_t j;

				copy = json_array();
				for (j = 0; j < i; j++)
					json_array_append(copy, json_array_get(v, j));
			}
			if (copy)
				json_array_append(copy, c);
			json_decref(c);
		}
		return copy ?: json_incref(v);
	case JSON_OBJECT:
		copy = json_object();
		{
			bool changed = false;

			json_object_foreach(v, key, item)
			{
				json_t *c = scrub_value(item, f);
				_cleanup_free_ char *ck = NULL;

				if (scrub_buf(f, key, strlen(key), &ck, &len))
					changed = true;
				changed |= c != item;
				json_object_set_new_nocheck(copy, ck ?: key, c);
			}
			if (changed)
				return copy;
		}
		json_decref(copy);
		return json_incref(v);
	default:
		return json_incref(v);
	}
}

json_t *llm_scrub_json(json_t *doc, const char *secret)
{
	struct scrub_forms f;
	json_t *out;

	if (!doc || !secret || !*secret)
		return doc;
	scrub_forms_init(&f, secret);
	out = scrub_value(doc, &f);
	scrub_forms_clear(&f);
	json_decref(doc);
	return out;
}

/* ---- the endpoint's URL ---- */

static void curlu_freep(CURLU **u)
{
	curl_url_cleanup(*u); /* NULL is a no-op */
}

static void curl_strfreep(char **p)
{
	curl_free(*p);
}
#define _cleanup_curl_str_ _cleanup_(curl_strfreep)

/* 127.0.0.0/8, ::1 (and 127.0.0.0/8 mapped into IPv6), localhost; host as libcurl gives it. */
static bool loopback_host(const char *host)
{
	char buf[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	size_t len = strlen(host);

	if (!strcasecmp(host, "localhost"))
		return true; /* libcurl resolves it to loopback itself, never through DNS */
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (len < 3 || host[0] != '[' || host[len - 1] != ']' || len - 2 >= sizeof(buf))
		return false;
	memcpy(buf, host + 1, len - 2);
	buf[len - 2] = 0;
	if (inet_pton(AF_INET6, buf, &a6) != 1)
		return false;
	return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
}

/* Parse url into *ret; -EINVAL with *ret_err (never echoing url) when libcurl refuses it. */
static int url_parse(const char *url, CURLU **ret, char **ret_err)
{
	_cleanup_(curlu_freep) CURLU *u = NULL;
	CURLUcode uc;

	if (!url || !*url || strlen(url) > LLM_URL_MAX) {
		*ret_err = xasprintf("llm_url: missing or longer than %d bytes", LLM_URL_MAX);
		return -EINVAL;
	}
	u = curl_url();
	if (!u) {
		*ret_err = xstrdup("llm_url: out of memory");
		return -ENOMEM;
	}
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		*ret_err = xasprintf("llm_url is not a URL that libcurl accepts: %s",
				     curl_url_strerror(uc));
		return -EINVAL;
	}
	*ret = TAKE_PTR(u);
	return 0;
}

/* scheme://host:port/path of a parsed URL. */
static char *url_redacted(CURLU *u)
{
	_cleanup_curl_str_ char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;

	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		return xstrdup("(not a valid URL)");
	(void)curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
	(void)curl_url_get(u, CURLUPART_PATH, &path, 0);
	return xasprintf("%s://%s%s%s%s", scheme, host, port ? ":" : "", port ?: "", path ?: "/");
}

char *llm_url_redact(const char *url)
{
	_cleanup_(curlu_freep) CURLU *u = NULL;
	_cleanup_free_ char *err = NULL;

	if (url_parse(url, &u, &err) < 0)
		return xstrdup("(not a valid URL)");
	return url_redacted(u);
}

/* The checks of llm_url_check on a parsed URL. */
static int url_check_parsed(CURLU *u, bool allow_insecure, char **ret_err)
{
	_cleanup_curl_str_ char *scheme = NULL, *host = NULL, *user = NULL, *password = NULL,
				*options = NULL;
	_cleanup_free_ char *shown = url_redacted(u);

	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		*ret_err = xstrdup("llm_url: only http:// and https:// endpoints are supported");
		return -EINVAL;
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		*ret_err = xstrdup("llm_url: the URL names no host");
		return -EINVAL;
	}
	(void)curl_url_get(u, CURLUPART_USER, &user, 0);
	(void)curl_url_get(u, CURLUPART_PASSWORD, &password, 0);
	(void)curl_url_get(u, CURLUPART_OPTIONS, &options, 0);
	if (user || password || options) {
		*ret_err =
		    xasprintf("llm_url: a user name or password in the URL is not allowed (the "
			      "host it names is %s); give the key in llm_key_file",
			      shown);
		return -EINVAL;
	}
	if (!strcmp(scheme, "http") && !allow_insecure && !loopback_host(host)) {
		*ret_err = xasprintf("llm_url: refusing plain http to %s, which is not a loopback "
				     "host: use https:// (or set llm_allow_insecure = true)",
				     shown);
		return -EINVAL;
	}
	return 0;
}

int llm_url_check(const char *url, bool allow_insecure, char **ret_err)
{
	_cleanup_(curlu_freep) CURLU *u = NULL;
	int r;

	r = url_parse(url, &u, ret_err);
	if (r < 0)
		return r;
	return url_check_parsed(u, allow_insecure, ret_err);
}

int llm_read_key(const char *path, const char *cred_dir, char **ret, char **ret_err)
{
	_cleanup_free_ char *full = NULL;
	char *buf = NULL, *s, *e;
	size_t len;
	int r;

	if (!path || !*path) {
		*ret_err = xstrdup("no key file configured");
		return -EINVAL;
	}
	if (path[0] != '/') {
		if (!cred_dir || !*cred_dir) {
			*ret_err = xasprintf("key file %s is relative but $CREDENTIALS_DIRECTORY is not "
					     "set",
					     path);
			return -ENOENT;
		}
		if (strstr(path, "..")) {
			*ret_err = xasprintf("key file %s: '..' is not allowed", path);
			return -EINVAL;
		}
		full = xasprintf("%s/%s", cred_dir, path);
	} else {
		full = xstrdup(path);
	}
	r = read_file_bounded(full, LLM_KEY_MAX, &buf, &len);
	if (r < 0) {
		*ret_err = xasprintf("reading the key file %s: %s", full,
				     r == -EFBIG ? "larger than 4096 bytes" : strerror(-r));
		return r;
	}
	for (s = buf; *s && isspace((unsigned char)*s); s++)
		;
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		;
	*e = 0;
	if (!*s) {
		erase_free(buf);
		*ret_err = xasprintf("the key file %s is empty", full);
		return -EINVAL;
	}
	for (char *c = s; *c; c++)
		if (*c < 0x21 || *c > 0x7e) {
			erase_free(buf);
			*ret_err = xasprintf("the key file %s holds characters that cannot go into an "
					     "HTTP header (one line of printable ASCII expected)",
					     full);
			return -EINVAL;
		}
	*ret = xstrdup(s);
	erase_free(buf);
	return 0;
}

/* The request URL: the base's path without trailing slashes, then /chat/completions. */
static int chat_url(CURLU *u)
{
	_cleanup_curl_str_ char *path = NULL;
	_cleanup_free_ char *full = NULL;
	size_t n;

	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		return -EINVAL;
	n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	full = xasprintf("%.*s/chat/completions", (int)n, path);
	if (curl_url_set(u, CURLUPART_PATH, full, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK)
		return -EINVAL;
	return 0;
}

int llm_client_new(const struct llm_client_opts *o, struct llm_client **ret)
{
	_cleanup_(curlu_freep) CURLU *u = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_curl_str_ char *scheme = NULL;
	struct llm_client *c;
	int r;

	if (!o->model)
		return -EINVAL;
	r = url_parse(o->base_url, &u, &err);
	if (r < 0)
		return r;
	r = url_check_parsed(u, o->allow_insecure, &err);
	if (r < 0)
		return r;
	if (chat_url(u) < 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->shown = url_redacted(u);
	(void)curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	c->direct = scheme && !strcmp(scheme, "http");
	c->url = TAKE_PTR(u);
	c->model = xstrdup(o->model);
	if (o->key) {
		c->key = xstrdup(o->key);
		c->auth_header = xasprintf("Authorization: Bearer %s", o->key);
	}
	c->timeout_s = o->timeout_s ?: 60;
	c->attempts = o->attempts ?: LLM_ATTEMPTS;
	c->backoff_ms = o->backoff_ms ?: LLM_BACKOFF_MS;
	c->should_stop = o->should_stop;
	c->userdata = o->userdata;
	*ret = c;
	return 0;
}

void llm_client_free(struct llm_client *c)
{
	if (!c)
		return;
	curl_url_cleanup(c->url);
	free(c->shown);
	free(c->model);
	erase_free(c->key);
	erase_free(c->auth_header);
	free(c);
}

/* ---- parsing ---- */

static int bad(char **ret_err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(char **ret_err, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	/* it may quote the body's bytes (jansson's error text does): it goes into JSON */
	*ret_err = utf8_sanitize(msg) ?: xstrdup("malformed response");
	return -EBADMSG;
}

/* content: a string, null, or an array of {"type": "text", "text": ...} parts */
static char *content_text(const json_t *c)
{
	json_t *part;
	size_t i;
	char *out = NULL;

	if (json_is_string(c))
		return xstrdup(json_string_value(c));
	if (!json_is_array(c))
		return NULL;
	json_array_foreach(c, i, part)
	{
		const char *t = json_string_value(json_object_get(part, "text"));
		char *joined;

		if (!t)
			continue;
		joined = xasprintf("%s%s", out ?: "", t);
		free(out);
		out = joined;
	}
	return out;
}

int llm_parse_reply(const char *body, size_t len, struct llm_reply *ret, char **ret_err)
{
	json_auto_t *root = NULL;
	json_t *choice, *msg, *calls, *usage, *err;
	json_t *out_calls = json_array(), *hist_calls = json_array();
	json_error_t jerr;
	struct llm_reply r = { .prompt_tokens = -1, .completion_tokens = -1, .total_tokens = -1 };
	size_t i;

	root = json_loadb(body, len, 0, &jerr);
	if (!root) {
		json_decref(out_calls);
		json_decref(hist_calls);
		return bad(ret_err, "the response is not JSON (%s at byte %d)", jerr.text,
			   jerr.position);
	}
	err = json_object_get(root, "error");
	if (err) {
		const char *m = json_string_value(json_object_get(err, "message"))
					?: json_string_value(err);

		json_decref(out_calls);
		json_decref(hist_calls);
		return bad(ret_err, "the endpoint answered an error: %.300s", m ?: "(no message)");
	}
	choice = json_array_get(json_object_get(root, "choices"), 0);
	msg = json_object_get(choice, "message");
	if (!json_is_object(msg)) {
		json_decref(out_calls);
		json_decref(hist_calls);
		return bad(ret_err, "the response has no choices[0].message");
	}
	r.content = content_text(json_object_get(msg, "content"));
	if (json_is_string(json_object_get(choice, "finish_reason")))
		r.finish_reason = xstrdup(json_string_value(json_object_get(choice, "finish_reason")));
	calls = json_object_get(msg, "tool_calls");
	if (calls && !json_is_array(calls) && !json_is_null(calls)) {
		free(r.content);
		free(r.finish_reason);
		json_decref(out_calls);
		json_decref(hist_calls);
		return bad(ret_err, "tool_calls is not an array");
	}
	for (i = 0; i < json_array_size(calls) && i < LLM_MAX_TOOL_CALLS; i++) {
		json_t *tc = json_array_get(calls, i), *fn = json_object_get(tc, "function");
		json_t *args = json_object_get(fn, "arguments"), *parsed = NULL;
		const char *name = json_string_value(json_object_get(fn, "name"));
		const char *id = json_string_value(json_object_get(tc, "id"));
		_cleanup_free_ char *gen_id = NULL, *args_text = NULL;
		json_error_t aerr;
		json_t *entry;

		if (!id || !*id)
			id = gen_id = xasprintf("call_%zu", i);
		if (json_is_string(args)) {
			args_text = xstrdup(json_string_value(args));
			parsed = json_loads(args_text, 0, &aerr);
		} else if (json_is_object(args)) {
			parsed = json_incref(args);
			args_text = json_dumps(args, JSON_COMPACT) ?: xstrdup("{}");
		} else {
			args_text = xstrdup("{}");
		}
		entry = json_pack("{s:s,s:s,s:o}", "id", id, "name", name ?: "", "arguments",
				  json_is_object(parsed) ? json_incref(parsed) : json_null());
		if (!json_is_object(parsed))
			json_object_set_new(entry, "arguments_error",
					    json_string(parsed ? "the arguments are not a JSON object"
							       : "the arguments are not valid JSON"));
		json_decref(parsed);
		json_array_append_new(out_calls, entry);
		json_array_append_new(hist_calls,
				      json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", id, "type", "function",
						"function", "name", name ?: "", "arguments", args_text));
	}
	r.tool_calls = out_calls;
	r.message = json_pack("{s:s,s:o}", "role", "assistant", "content",
			      r.content ? json_string(r.content) : json_null());
	if (json_array_size(hist_calls))
		json_object_set_new(r.message, "tool_calls", hist_calls);
	else
		json_decref(hist_calls);
	usage = json_object_get(root, "usage");
	if (json_is_object(usage)) {
		json_t *p = json_object_get(usage, "prompt_tokens"),
		       *c = json_object_get(usage, "completion_tokens"),
		       *t = json_object_get(usage, "total_tokens");

		r.prompt_tokens = json_is_integer(p) ? json_integer_value(p) : -1;
		r.completion_tokens = json_is_integer(c) ? json_integer_value(c) : -1;
		if (json_is_integer(t))
			r.total_tokens = json_integer_value(t);
		else if (r.prompt_tokens >= 0 && r.completion_tokens >= 0)
			r.total_tokens = r.prompt_tokens + r.completion_tokens;
	}
	*ret = r;
	return 0;
}

/* ---- transport ---- */

struct exchange {
	char *body;
	size_t len;
	bool too_big;
	long retry_after_s;
	struct llm_client *c;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct exchange *x = ud;
	size_t add = size * n;
	char *b;

	if (x->len + add > LLM_RESPONSE_MAX) {
		x->too_big = true;
		return 0;
	}
	b = realloc(x->body, x->len + add + 1);
	if (!b)
		return 0;
	memcpy(b + x->len, p, add);
	x->len += add;
	b[x->len] = 0;
	x->body = b;
	return add;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct exchange *x = ud;
	size_t len = size * n;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		char tmp[32];
		size_t l = len - 12 < sizeof(tmp) - 1 ? len - 12 : sizeof(tmp) - 1;

		memcpy(tmp, p + 12, l);
		tmp[l] = 0;
		x->retry_after_s = strtol(tmp, NULL, 10);
	}
	return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct exchange *x = ud;

	return x->c->should_stop && x->c->should_stop(x->c->userdata) ? 1 : 0;
}

static void curl_cleanupp(CURL **c)
{
	if (*c)
		curl_easy_cleanup(*c);
}

static void slist_freep(struct curl_slist **l)
{
	curl_slist_free_all(*l);
}

enum outcome { DONE, RETRY, GIVE_UP };

/* One HTTP exchange. */
static enum outcome attempt(struct llm_client *c, const char *payload, long timeout_ms,
			    struct exchange *x, long *ret_status, int *ret_r, char **ret_err)
{
	_cleanup_(curl_cleanupp) CURL *h = curl_easy_init();
	_cleanup_(slist_freep) struct curl_slist *hdr = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode cc;

	*ret_status = 0;
	if (!h) {
		*ret_r = -ENOMEM;
		*ret_err = xstrdup("curl_easy_init failed");
		return GIVE_UP;
	}
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Accept: application/json");
	if (c->auth_header)
		hdr = curl_slist_append(hdr, c->auth_header);
	/* the parsed URL itself: what llm_url_check accepted is what is connected to */
	curl_easy_setopt(h, CURLOPT_CURLU, c->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->direct)
		/* plain http: to the host that was checked, never through a proxy */
		curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "argusd");

	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, ret_status);
	if (cc == CURLE_ABORTED_BY_CALLBACK) {
		*ret_r = -ECANCELED;
		*ret_err = xstrdup("cancelled");
		return GIVE_UP;
	}
	if (x->too_big) {
		*ret_r = -EFBIG;
		*ret_err = xasprintf("the response is larger than %d bytes", LLM_RESPONSE_MAX);
		return GIVE_UP;
	}
	if (cc != CURLE_OK) {
		*ret_r = cc == CURLE_OPERATION_TIMEDOUT	 ? -ETIMEDOUT
			 : cc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED
						       : -EIO;
		*ret_err = xasprintf("%s: %s", c->shown, errbuf[0] ? errbuf : curl_easy_strerror(cc));
		return RETRY;
	}
	if (*ret_status == 429 || *ret_status >= 500) {
		*ret_r = -EIO;
		*ret_err = xasprintf("HTTP %ld: %.*s", *ret_status, LLM_EXCERPT, x->body ?: "");
		return RETRY;
	}
	if (*ret_status != 200) {
		*ret_r = -EPROTO;
		*ret_err = xasprintf("HTTP %ld: %.*s", *ret_status, LLM_EXCERPT, x->body ?: "");
		return GIVE_UP;
	}
	return DONE;
}

/* Sleep ms, in slices, unless asked to stop. */
static bool pause_ms(struct llm_client *c, uint64_t ms)
{
	uint64_t end = now_mono_ns() + ms * 1000000ull;

	while (now_mono_ns() < end) {
		struct timespec ts = { 0, 100 * 1000000L };

		if (c->should_stop && c->should_stop(c->userdata))
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

int llm_chat(struct llm_client *c, const json_t *messages, const json_t *tools,
	     unsigned max_tokens, uint64_t deadline_ns, struct llm_reply *ret, char **ret_err)
{
	json_auto_t *req = json_pack("{s:s,s:O,s:i,s:f}", "model", c->model, "messages", messages,
				     "max_tokens", (int)max_tokens, "temperature", 0.0);
	_cleanup_free_ char *payload = NULL;
	uint64_t t0 = now_mono_ns(), pause = c->backoff_ms;
	struct llm_reply out = {};
	char *err = NULL;
	unsigned i;
	int r = -EIO;

	if (!req)
		return -ENOMEM;
	if (tools && json_array_size(tools)) {
		json_object_set(req, "tools", (json_t *)tools);
		json_object_set_new(req, "tool_choice", json_string("auto"));
	}
	payload = json_dumps(req, JSON_COMPACT);
	if (!payload)
		return -ENOMEM;

	for (i = 0; i < c->attempts; i++) {
		struct exchange x = { .c = c, .retry_after_s = -1 };
		uint64_t now = now_mono_ns();
		long timeout_ms = c->timeout_s * 1000L, status = 0;
		enum outcome oc;

		if (deadline_ns && now >= deadline_ns) {
			free(err);
			err = xstrdup("the wall-time budget ran out");
			r = -ETIMEDOUT;
			break;
		}
		if (deadline_ns && (deadline_ns - now) / 1000000 < (uint64_t)timeout_ms)
			timeout_ms = (deadline_ns - now) / 1000000 + 1;
		free(err);
		err = NULL;
		oc = attempt(c, payload, timeout_ms, &x, &status, &r, &err);
		out.attempts = i + 1;
		out.http_status = status;
		if (oc == DONE) {
			struct llm_reply parsed;

			r = llm_parse_reply(x.body, x.len, &parsed, &err);
			if (r == 0) {
				parsed.attempts = out.attempts;
				parsed.http_status = status;
				parsed.elapsed_ns = now_mono_ns() - t0;
				free(x.body);
				*ret = parsed;
				return 0;
			}
			oc = RETRY; /* truncated or garbled: the next answer may be whole */
		}
		free(x.body);
		if (oc == GIVE_UP || i + 1 == c->attempts)
			break;
		{
			uint64_t wait = pause;

			if (x.retry_after_s > 0 && (uint64_t)x.retry_after_s * 1000 > wait)
				wait = (uint64_t)x.retry_after_s * 1000;
			if (wait > LLM_BACKOFF_MAX_MS)
				wait = LLM_BACKOFF_MAX_MS;
			if (deadline_ns && now_mono_ns() + wait * 1000000ull >= deadline_ns)
				break;
			if (!pause_ms(c, wait)) {
				free(err);
				err = xstrdup("cancelled");
				r = -ECANCELED;
				break;
			}
			pause = pause * 2 > LLM_BACKOFF_MAX_MS ? LLM_BACKOFF_MAX_MS : pause * 2;
		}
	}
	out.elapsed_ns = now_mono_ns() - t0;
	*ret = out;
	/* excerpts of the body, cut at a byte count, go into the trace's JSON */
	*ret_err = llm_scrub(utf8_sanitize(err) ?: "request failed", c->key);
	free(err);
	return r;
}
