// SPDX-License-Identifier: MIT
/*
 * The HTTP transport of argusctl (client.h), on one reused libcurl handle:
 * the control socket by CURLOPT_UNIX_SOCKET_PATH with "localhost" as the
 * host (what argusd accepts there), or a TCP base URL checked with
 * libcurl's own parser. Never through a proxy: the bearer token and the
 * answers stay between argusctl and argusd. Bodies are read into memory up
 * to CLIENT_BODY_MAX, the connection dropped beyond it.
 */
#include "ctl/client.h"
#include "ctl/text.h"
#include "daemon/paths-config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <curl/curl.h>

#define TOKEN_MIN 16
#define TOKEN_MAX 4096
#define CONNECT_TIMEOUT_S 10

struct client {
	CURL *curl;
	char *base;   /* "http://localhost" on the socket, else the checked URL without its '/' */
	char *socket; /* NULL over TCP */
	char *where;  /* for messages */
	char *auth;   /* "Authorization: Bearer TOKEN", or NULL */
	void (*tick)(void *userdata);
	void *userdata;
};

static void erase_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void client_free(struct client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	free(c->base);
	free(c->socket);
	free(c->where);
	erase_free(c->auth);
	free(c);
}

const char *client_where(const struct client *c)
{
	return c->where;
}

void client_set_tick(struct client *c, void (*tick)(void *userdata), void *userdata)
{
	c->tick = tick;
	c->userdata = userdata;
}

void client_reply_clear(struct client_reply *r)
{
	json_decref(r->json);
	free(r->body);
	*r = (struct client_reply){};
}

/* ---- setup ---- */

/* The base URL of url: http or https, a host, no user, password, query or fragment. */
static int check_url(const char *url, char **ret, char **ret_err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *part = NULL, *full = NULL;
	size_t len;
	int r = -EINVAL;

	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		*ret_err = strprintf("--url \"%s\" is not a URL (http://HOST:PORT)", url);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		*ret_err = strprintf("--url \"%s\": argusd speaks http or https", url);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_USER, &part, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PASSWORD, &part, 0) == CURLUE_OK) {
		*ret_err = strprintf("--url: no user or password in the URL; a token goes in "
				     "--token-file");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK) {
		*ret_err = strprintf("--url \"%s\": no query or fragment; only the scheme, host, "
				     "port and a path prefix",
				     url);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_HOST, &part, 0) != CURLUE_OK || !part[0]) {
		*ret_err = strprintf("--url \"%s\" names no host", url);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK) {
		*ret_err = strprintf("--url \"%s\" is not a URL (http://HOST:PORT)", url);
		goto out;
	}
	len = strlen(full);
	while (len > 0 && full[len - 1] == '/')
		len--;
	*ret = strprintf("%.*s", (int)len, full);
	r = 0;
out:
	curl_free(scheme);
	curl_free(part);
	curl_free(full);
	curl_url_cleanup(u);
	return r;
}

/* The token of path: one line of TOKEN_MIN to TOKEN_MAX visible characters (caller erases). */
static int read_token(const char *path, char **ret, char **ret_err)
{
	_cleanup_close_ int fd = -1;
	char buf[TOKEN_MAX + 3];
	size_t len = 0, i;
	struct stat st;
	ssize_t n;
	int r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		*ret_err = strprintf("--token-file %s: %s", path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_err = strprintf("--token-file %s: not a regular file", path);
		return -EINVAL;
	}
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			explicit_bzero(buf, sizeof(buf));
			*ret_err = strprintf("--token-file %s: %s", path, strerror(-r));
			return r;
		}
		len += n;
	}
	/* one line: a final newline (CRLF too) is not part of it */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	r = len >= TOKEN_MIN && len <= TOKEN_MAX ? 0 : -EINVAL;
	for (i = 0; r == 0 && i < len; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			r = -EINVAL;
	if (r == 0)
		*ret = strprintf("Authorization: Bearer %.*s", (int)len, buf);
	else
		*ret_err = strprintf("--token-file %s does not hold a token: one line of %d to %d "
				     "visible characters",
				     path, TOKEN_MIN, TOKEN_MAX);
	explicit_bzero(buf, sizeof(buf));
	return r;
}

int client_new(const struct client_opts *o, struct client **ret, char **ret_err)
{
	struct client *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		abort();
	if (o->url) {
		r = check_url(o->url, &c->base, ret_err);
		if (r < 0)
			goto fail;
		c->where = strprintf("%s", c->base);
	} else {
		if (!o->socket || !o->socket[0] ||
		    strlen(o->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			*ret_err = strprintf("--socket: a path of 1 to %zu bytes",
					     sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
			r = -EINVAL;
			goto fail;
		}
		c->socket = strprintf("%s", o->socket);
		c->base = strprintf("http://localhost");
		c->where = strprintf("the control socket %s", o->socket);
	}
	if (o->token_file) {
		r = read_token(o->token_file, &c->auth, ret_err);
		if (r < 0)
			goto fail;
	}
	c->curl = curl_easy_init();
	if (!c->curl) {
		*ret_err = strprintf("cannot set up libcurl");
		r = -ENOMEM;
		goto fail;
	}
	*ret = c;
	return 0;
fail:
	client_free(c);
	return r;
}

/* ---- one request ---- */

struct transfer {
	struct client *c;
	struct client_reply *reply;
	bool too_large;
};

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	struct transfer *t = userdata;
	struct client_reply *r = t->reply;
	size_t len = size * n;
	char *b;

	if (len > CLIENT_BODY_MAX - r->len) {
		t->too_large = true;
		return 0;
	}
	b = realloc(r->body, r->len + len + 1);
	if (!b)
		return 0;
	memcpy(b + r->len, p, len);
	r->len += len;
	b[r->len] = 0;
	r->body = b;
	return len;
}

/* The ETag header, kept verbatim (quotes included) for If-None-Match. */
static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
	struct transfer *t = userdata;
	size_t len = size * n, v;

	if (len > 5 && strncasecmp(p, "ETag:", 5) == 0) {
		v = 5;
		while (v < len && (p[v] == ' ' || p[v] == '\t'))
			v++;
		while (len > v && isspace((unsigned char)p[len - 1]))
			len--;
		if (len - v < sizeof(t->reply->etag)) {
			memcpy(t->reply->etag, p + v, len - v);
			t->reply->etag[len - v] = 0;
		}
	}
	return size * n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct transfer *t = userdata;

	t->c->tick(t->c->userdata);
	return 0;
}

/* What failed, in words, for a transfer that ended with code. */
static char *transfer_error(const struct client *c, CURLcode code, const char *errbuf)
{
	const char *why = errbuf[0] ? errbuf : curl_easy_strerror(code);
	struct stat st;

	if (c->socket && code == CURLE_COULDNT_CONNECT) {
		if (stat(c->socket, &st) < 0 && errno == ENOENT)
			return strprintf("no control socket at %s: is argusd running? (--socket or "
					 "--url names another)",
					 c->socket);
		if (access(c->socket, R_OK | W_OK) < 0 && errno == EACCES)
			return strprintf("%s: permission denied; root and the members of argusd's "
					 "api group may use the control socket",
					 c->socket);
	}
	if (code == CURLE_OPERATION_TIMEDOUT)
		return strprintf("argusd at %s did not answer within %d s", c->where,
				 CLIENT_TIMEOUT_S);
	return strprintf("cannot reach argusd at %s: %s", c->where, why);
}

int client_request(struct client *c, const char *method, const char *path, const json_t *body,
		   const char *if_none_match, struct client_reply *ret, char **ret_err)
{
	struct client_reply reply = {};
	struct transfer t = {.c = c, .reply = &reply};
	_cleanup_free_ char *url = strprintf("%s%s", c->base, path), *data = NULL, *inm = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL, *h;
	CURLcode code;

	if (body) {
		data = json_dumps(body, JSON_COMPACT);
		if (!data)
			abort();
		h = curl_slist_append(headers, "Content-Type: application/json");
		if (!h)
			abort();
		headers = h;
	}
	if (if_none_match && if_none_match[0]) {
		inm = strprintf("If-None-Match: %s", if_none_match);
		h = curl_slist_append(headers, inm);
		if (!h)
			abort();
		headers = h;
	}
	if (c->auth) {
		h = curl_slist_append(headers, c->auth);
		if (!h)
			abort();
		headers = h;
	}

	curl_easy_reset(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->curl, CURLOPT_PROXY, "");
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, (long)CLIENT_TIMEOUT_S);
	curl_easy_setopt(c->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CLIENT_BODY_MAX);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &t);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, &t);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "argusctl/" ARGUS_VERSION);
	if (c->socket)
		curl_easy_setopt(c->curl, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	if (c->tick) {
		curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, &t);
		curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	}
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	if (data) {
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, data);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(data));
	}
	if (headers)
		curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, headers);

	code = curl_easy_perform(c->curl);
	/* the token's copy in the header list is erased before it is freed */
	for (h = headers; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(headers);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);

	if (t.too_large || code == CURLE_FILESIZE_EXCEEDED) {
		client_reply_clear(&reply);
		*ret_err = strprintf("%s %s: the answer is larger than %u MiB; refused", method,
				     path, CLIENT_BODY_MAX >> 20);
		return -EFBIG;
	}
	if (code != CURLE_OK) {
		client_reply_clear(&reply);
		*ret_err = transfer_error(c, code, errbuf);
		return -ECONNREFUSED;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &reply.status);
	if (reply.body)
		reply.json = json_loadb(reply.body, reply.len, JSON_DECODE_ANY, NULL);
	*ret = reply;
	return 0;
}

/* ---- answers in JSON ---- */

#define EXCERPT_MAX 200

/* What an error answer says: the API's code and message, or an excerpt of whatever came. */
static char *status_error(const char *method, const char *path, const struct client_reply *r)
{
	const json_t *e = json_object_get(r->json, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *message = json_string_value(json_object_get(e, "message"));
	size_t n;

	if (code || message)
		return strprintf("%s %s: %ld %s: %s", method, path, r->status, code ?: "error",
				 message ?: "(no message)");
	if (!r->len)
		return strprintf("%s %s: HTTP %ld, no body", method, path, r->status);
	n = strcspn(r->body, "\r\n");
	return strprintf("%s %s: HTTP %ld: %.*s%s", method, path, r->status,
			 (int)(n < EXCERPT_MAX ? n : EXCERPT_MAX), r->body,
			 n > EXCERPT_MAX ? "..." : "");
}

int client_call(struct client *c, const char *method, const char *path, const json_t *body,
		const char *if_none_match, struct client_reply *ret, char **ret_err)
{
	struct client_reply r;
	json_error_t e;
	int q;

	q = client_request(c, method, path, body, if_none_match, &r, ret_err);
	if (q < 0)
		return q;
	if (r.status == 304 && if_none_match && if_none_match[0]) {
		*ret = r;
		return 0;
	}
	if (r.status < 200 || r.status > 299) {
		*ret_err = status_error(method, path, &r);
		client_reply_clear(&r);
		return -EPROTO;
	}
	if (!r.json) {
		/* parsed again only to say where it breaks */
		json_decref(r.len ? json_loadb(r.body, r.len, JSON_DECODE_ANY, &e) : NULL);
		*ret_err =
		    strprintf("%s %s: the answer (HTTP %ld, %zu bytes) is not JSON%s%s", method,
			      path, r.status, r.len, r.len ? ": " : "", r.len ? e.text : "");
		client_reply_clear(&r);
		return -EBADMSG;
	}
	*ret = r;
	return 0;
}

char *client_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	if (!out)
		abort();
	for (; *s; s++) {
		unsigned char ch = *s;

		if (isalnum(ch) || strchr("-._~:", ch)) {
			*o++ = ch;
		} else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	*o = 0;
	return out;
}
