// SPDX-License-Identifier: MIT
/*
 * Measuring a service's SLI once per window. A command SLI is a workload
 * built on the fly (workload_from_json) and run by the target runner, so
 * that it gets the same process group, credentials, clean environment,
 * time limit and bounded output tail as any registered workload; its value
 * is the number on the last line of that tail. A prometheus SLI is two
 * scrapes of a text exposition (libcurl, no proxy, no redirects, bounded
 * in time and size), read by prom.c: a gauge's last value, a counter's
 * rate over the window, or a histogram's quantile over the window.
 */
#include "daemon/sli.h"
#include "daemon/prom.h"
#include "daemon/target.h"
#include "daemon/util.h"
#include "daemon/workload.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

_Static_assert(SLI_ARGV_MAX <= WORKLOAD_ARGV_MAX, "a command SLI must fit a workload");
_Static_assert(SLI_ARG_LEN_MAX <= WORKLOAD_ARG_LEN_MAX, "a command SLI must fit a workload");

#define KIND_MAX 32	      /* bytes of "kind" */

enum sli_source {
	SLI_COMMAND,
	SLI_PROMETHEUS,
};

enum sli_kind {
	SLI_GAUGE,
	SLI_RATE,
	SLI_QUANTILE,
	_SLI_KIND_MAX,
};

/* The prometheus kinds: the word in "kind" and which way is better when "better" is not given. */
static const struct {
	const char *name;
	bool lower_is_better;
} kinds[_SLI_KIND_MAX] = {
    [SLI_GAUGE] = {"gauge", true},
    [SLI_RATE] = {"rate", false},
    [SLI_QUANTILE] = {"quantile", true},
};


struct sli {
	enum sli_source source;
	char **argv; /* NULL terminated */
	char *url;
	char *metric; /* the selector as written */
	struct prom_selector sel;
	enum sli_kind kind;
	char *kind_text; /* as written: "gauge", "rate", "quantile:0.99" */
	double q;
	bool lower_is_better;
	char *unit;
};

struct sli_window {
	const struct sli *s;
	/* a command */
	struct workload *wl;
	struct target_run *run;
	bool waited;
	int wait_r;
	char *wait_err;
	struct target_result res;
	/* a scrape */
	char *before;	    /* the first body (histogram quantile) */
	double start_value; /* the counter at the start (rate) */
	uint64_t begin_ns;  /* when the first scrape ended */
};



static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

/*
 * At most SLI_EXCERPT_MAX bytes of the end of text, for an error message:
 * trailing space trimmed, line breaks and tabs as spaces, other control
 * bytes as '?', "..." in front when cut (never inside a UTF-8 sequence).
 */
static char *excerpt_tail(const char *text)
{
	size_t len = text ? strlen(text) : 0, start = 0, i;
	char *out, *o;

	while (len > 0 && is_space(text[len - 1]))
		len--;
	if (len > SLI_EXCERPT_MAX) {
		start = len - SLI_EXCERPT_MAX;
		while (start < len && ((unsigned char)text[start] & 0xc0) == 0x80)
			start++;
	}
	out = malloc(len - start + 4);
	if (!out)
		abort();
	o = out;
	if (start > 0)
		o = stpcpy(o, "...");
	for (i = start; i < len; i++) {
		unsigned char c = text[i];

		*o++ = is_space(c) ? ' ' : c < 0x20 || c == 0x7f ? '?' : c;
	}
	*o = 0;
	return utf8_sanitize(out);
}

/* The first SLI_EXCERPT_MAX bytes of text, the same way: for the start of a body. */
static char *excerpt_head(const char *text, size_t len)
{
	size_t n = len < SLI_EXCERPT_MAX ? len : SLI_EXCERPT_MAX, i;
	char *out = malloc(n + 4), *o = out;

	if (!out)
		abort();
	for (i = 0; i < n; i++) {
		unsigned char c = text[i];

		*o++ = is_space(c) ? ' ' : c < 0x20 || c == 0x7f ? '?' : c;
	}
	if (n < len)
		o = stpcpy(o, "...");
	while (o > out && o[-1] == ' ')
		o--;
	*o = 0;
	return utf8_sanitize(out);
}


/* ---- the definition ---- */

void sli_free(struct sli *s)
{
	if (!s)
		return;
	strv_free(s->argv);
	free(s->url);
	free(s->metric);
	prom_selector_clear(&s->sel);
	free(s->kind_text);
	free(s->unit);
	free(s);
}

static void sli_freep(struct sli **s)
{
	sli_free(*s);
}

/* The keys of o are all in known (NULL terminated); else -EINVAL naming the first other. */
static int check_fields(const json_t *o, const char *const *known, const char *where,
			char **ret_err)
{
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)o, key, v) {
		const char *const *k;

		for (k = known; *k; k++)
			if (strcmp(key, *k) == 0)
				break;
		if (!*k)
			return set_error(ret_err, -EINVAL, "%s: unknown field \"%.64s\"", where,
					 key);
	}
	return 0;
}

static int parse_command(const json_t *a, struct sli *s, char **ret_err)
{
	size_t i, n;

	if (!json_is_array(a))
		return set_error(ret_err, -EINVAL, "sli.command: must be an array of strings");
	n = json_array_size(a);
	if (n == 0)
		return set_error(ret_err, -EINVAL, "sli.command: must not be empty");
	if (n > SLI_ARGV_MAX)
		return set_error(ret_err, -EINVAL, "sli.command: %zu arguments, at most %d allowed",
				 n, SLI_ARGV_MAX);
	s->argv = calloc(n + 1, sizeof(char *));
	if (!s->argv)
		abort();
	for (i = 0; i < n; i++) {
		const char *arg = json_plain_string(json_array_get(a, i), SLI_ARG_LEN_MAX);

		if (!arg)
			return set_error(
			    ret_err, -EINVAL,
			    "sli.command[%zu]: must be a string without NUL bytes of at "
			    "most %d bytes",
			    i, SLI_ARG_LEN_MAX);
		s->argv[i] = xstrdup(arg);
	}
	if (s->argv[0][0] != '/')
		return set_error(
		    ret_err, -EINVAL,
		    "sli.command[0]: \"%.256s\" must be an absolute path (no shell, no "
		    "PATH lookup)",
		    s->argv[0]);
	if (strlen(s->argv[0]) >= PATH_MAX)
		return set_error(ret_err, -EINVAL, "sli.command[0]: path too long");
	return 0;
}

static void curlu_freep(CURLU **u)
{
	curl_url_cleanup(*u); /* NULL is a no-op */
}

static void curl_strfreep(char **p)
{
	curl_free(*p);
}
#define _cleanup_curl_str_ _cleanup_(curl_strfreep)

/* An http:// or https:// URL that libcurl accepts, naming a host, without credentials. */
static int check_url(const char *url, char **ret_err)
{
	_cleanup_(curlu_freep) CURLU *u = NULL;
	_cleanup_curl_str_ char *scheme = NULL, *host = NULL, *user = NULL, *password = NULL;
	CURLUcode uc;

	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.url: must start with http:// or https://");
	u = curl_url();
	if (!u)
		abort();
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK)
		return set_error(ret_err, -EINVAL, "sli.prometheus.url: not a valid URL: %s",
				 curl_url_strerror(uc));
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.url: must start with http:// or https://");
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
		return set_error(ret_err, -EINVAL, "sli.prometheus.url: names no host");
	(void)curl_url_get(u, CURLUPART_USER, &user, 0);
	(void)curl_url_get(u, CURLUPART_PASSWORD, &password, 0);
	/* the URL is quoted in job errors that API readers see */
	if (user || password)
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.url: a user name or password in the URL is not "
				 "allowed");
	return 0;
}

/* "gauge", "rate" or "quantile:Q" with 0 < Q < 1. */
static int parse_kind(const char *text, struct sli *s, char **ret_err)
{
	static const char quantile[] = "quantile:";
	const char *qs;
	double q;

	for (enum sli_kind k = SLI_GAUGE; k < _SLI_KIND_MAX; k++)
		if (k != SLI_QUANTILE && strcmp(text, kinds[k].name) == 0) {
			s->kind = k;
			return 0;
		}
	if (strncmp(text, quantile, strlen(quantile)) != 0)
		return set_error(
		    ret_err, -EINVAL,
		    "sli.prometheus.kind: \"%.64s\" is none of \"gauge\", \"rate\" and "
		    "\"quantile:Q\" (0 < Q < 1, e.g. \"quantile:0.99\")",
		    text);
	qs = text + strlen(quantile);
	if (!prom_parse_double(qs, qs + strlen(qs), &q) || !isfinite(q))
		return set_error(
		    ret_err, -EINVAL,
		    "sli.prometheus.kind: \"%.64s\": Q in \"quantile:Q\" must be a number "
		    "such as 0.99",
		    text);
	if (!(q > 0 && q < 1))
		return set_error(
		    ret_err, -EINVAL,
		    "sli.prometheus.kind: quantile %g is outside (0, 1), both ends excluded", q);
	s->kind = SLI_QUANTILE;
	s->q = q;
	return 0;
}

static int parse_prometheus(const json_t *o, struct sli *s, char **ret_err)
{
	static const char *const fields[] = {"url", "metric", "kind", NULL};
	const char *url, *metric, *kind, *why = NULL;
	json_t *v;
	int r;

	if (!json_is_object(o))
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus: must be an object with \"url\", \"metric\" and "
				 "\"kind\"");
	r = check_fields(o, fields, "sli.prometheus", ret_err);
	if (r < 0)
		return r;

	v = json_object_get(o, "url");
	if (!v)
		return set_error(ret_err, -EINVAL, "sli.prometheus.url: missing");
	url = json_plain_string(v, SLI_URL_MAX);
	if (!url)
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.url: must be a string of at most %d bytes",
				 SLI_URL_MAX);
	r = check_url(url, ret_err);
	if (r < 0)
		return r;
	s->url = xstrdup(url);

	v = json_object_get(o, "metric");
	if (!v)
		return set_error(ret_err, -EINVAL, "sli.prometheus.metric: missing");
	metric = json_plain_string(v, PROM_SELECTOR_MAX);
	if (!metric)
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.metric: must be a string of at most %d bytes, "
				 "NAME or NAME{label=\"value\",...}",
				 PROM_SELECTOR_MAX);
	if (prom_selector_parse(metric, &s->sel, &why) < 0)
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.metric: \"%.256s\": %s (NAME or "
				 "NAME{label=\"value\",...} expected)",
				 metric, why);
	s->metric = xstrdup(metric);

	v = json_object_get(o, "kind");
	if (!v)
		return set_error(
		    ret_err, -EINVAL,
		    "sli.prometheus.kind: missing (\"gauge\", \"rate\" or \"quantile:Q\")");
	kind = json_plain_string(v, KIND_MAX);
	if (!kind)
		return set_error(
		    ret_err, -EINVAL,
		    "sli.prometheus.kind: must be \"gauge\", \"rate\" or \"quantile:Q\"");
	r = parse_kind(kind, s, ret_err);
	if (r < 0)
		return r;
	s->kind_text = xstrdup(kind);
	if (s->kind == SLI_QUANTILE && prom_labels_get(&s->sel.labels, "le"))
		return set_error(ret_err, -EINVAL,
				 "sli.prometheus.metric: an \"le\" label selects one bucket, not a "
				 "histogram: leave it out for kind %s",
				 kind);
	return 0;
}

int sli_from_json(const json_t *o, struct sli **ret, char **ret_err)
{
	static const char *const fields[] = {"command", "prometheus", "better", "unit", NULL};
	_cleanup_(sli_freep) struct sli *s = NULL;
	const json_t *cmd, *prom, *v;
	const char *str;
	int r;

	if (!json_is_object(o))
		return set_error(ret_err, -EINVAL, "sli: must be a JSON object");
	r = check_fields(o, fields, "sli", ret_err);
	if (r < 0)
		return r;
	cmd = json_object_get(o, "command");
	prom = json_object_get(o, "prometheus");
	if (!cmd == !prom)
		return set_error(
		    ret_err, -EINVAL,
		    "sli: exactly one of \"command\" and \"prometheus\" must be given");

	s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->source = cmd ? SLI_COMMAND : SLI_PROMETHEUS;
	r = cmd ? parse_command(cmd, s, ret_err) : parse_prometheus(prom, s, ret_err);
	if (r < 0)
		return r;

	v = json_object_get(o, "better");
	if (v) {
		str = json_string_value(v);
		if (!str || (strcmp(str, "lower") != 0 && strcmp(str, "higher") != 0))
			return set_error(ret_err, -EINVAL,
					 "sli.better: must be \"lower\" or \"higher\"");
		s->lower_is_better = strcmp(str, "lower") == 0;
	} else if (s->source == SLI_COMMAND)
		return set_error(ret_err, -EINVAL,
				 "sli.better: missing: \"lower\" or \"higher\", whichever way the "
				 "command's number is healthier");
	else
		s->lower_is_better = kinds[s->kind].lower_is_better;

	v = json_object_get(o, "unit");
	if (v) {
		str = json_plain_string(v, SLI_UNIT_MAX);
		for (const char *c = str; c && *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				str = NULL;
		if (!str || !*str)
			return set_error(
			    ret_err, -EINVAL,
			    "sli.unit: must be a string of 1 to %d bytes without control "
			    "characters",
			    SLI_UNIT_MAX);
		s->unit = xstrdup(str);
	}

	*ret = TAKE_PTR(s);
	return 0;
}

json_t *sli_to_json(const struct sli *s)
{
	json_t *o = json_object();

	if (!o)
		abort();
	if (s->source == SLI_COMMAND) {
		json_t *a = json_array();

		if (!a)
			abort();
		for (char **p = s->argv; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(o, "command", a);
	} else {
		json_t *p = json_pack("{s:s, s:s, s:s}", "url", s->url, "metric", s->metric, "kind",
				      s->kind_text);

		if (!p)
			abort();
		json_object_set_new(o, "prometheus", p);
	}
	json_object_set_new(o, "better", json_string(s->lower_is_better ? "lower" : "higher"));
	if (s->unit)
		json_object_set_new(o, "unit", json_string(s->unit));
	return o;
}

bool sli_lower_is_better(const struct sli *s)
{
	return s->lower_is_better;
}

bool sli_is_rate(const struct sli *s)
{
	return s->source == SLI_PROMETHEUS && s->kind == SLI_RATE;
}

bool sli_is_command(const struct sli *s)
{
	return s->source == SLI_COMMAND;
}

const char *sli_unit(const struct sli *s)
{
	return s->unit;
}

/* ---- a command's number ---- */

int sli_last_number(const char *out, double *ret, char **ret_err)
{
	const char *end = out ? out + strlen(out) : NULL, *start, *line_end;
	_cleanup_free_ char *shown = NULL;
	double v;

	if (!out)
		return set_error(ret_err, -EBADMSG, "no output, so no number");
	/* the last line that holds more than space, trimmed */
	line_end = end;
	while (line_end > out && is_space(line_end[-1]))
		line_end--;
	if (line_end == out)
		return set_error(ret_err, -EBADMSG, "no output, so no number");
	for (start = line_end; start > out && start[-1] != '\n'; start--)
		;
	while (start < line_end && is_space(*start))
		start++;

	if (line_end - start > PROM_VALUE_MAX || !prom_parse_double(start, line_end, &v)) {
		shown = xstrndup(start, line_end - start < SLI_EXCERPT_MAX ? line_end - start
									   : SLI_EXCERPT_MAX);
		for (char *c = shown; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		return set_error(ret_err, -EBADMSG,
				 "last line is not a number: \"%s%s\" (the whole last line must be "
				 "one number)",
				 shown, line_end - start > SLI_EXCERPT_MAX ? "..." : "");
	}
	if (!isfinite(v))
		return set_error(ret_err, -EBADMSG, "last line is not a finite number: \"%.*s\"",
				 (int)(line_end - start), start);
	*ret = v;
	return 0;
}


/* ---- scraping ---- */

struct body {
	char *buf;
	size_t len;
	bool too_big;
};

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	struct body *b = userdata;
	size_t add = size * n;
	char *nb;

	if (add > SLI_SCRAPE_MAX - b->len) {
		b->too_big = true;
		return 0; /* aborts the transfer */
	}
	nb = realloc(b->buf, b->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->len, p, add);
	b->len += add;
	nb[b->len] = 0;
	b->buf = nb;
	return add;
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

/* GET url: the body of an HTTP 200, NUL terminated, without NUL bytes in it. */
static int scrape(const char *url, char **ret_body, char **ret_err)
{
	_cleanup_(curl_cleanupp) CURL *h = curl_easy_init();
	_cleanup_(slist_freep) struct curl_slist *hdr = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct body b = {};
	long status = 0;
	CURLcode cc;
	int r;

	if (!h)
		return set_error(ret_err, -ENOMEM, "SLI scrape of %s: curl_easy_init failed", url);
	/* the classic text format, not OpenMetrics or protobuf */
	hdr = curl_slist_append(hdr, "Accept: text/plain;version=0.0.4");
	curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* the host the admin named, never a proxy from the environment, never elsewhere */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)SLI_SCRAPE_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)SLI_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)SLI_SCRAPE_MAX);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "argusd");

	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (b.too_big || cc == CURLE_FILESIZE_EXCEEDED)
		r = set_error(ret_err, -EFBIG, "SLI scrape of %s: the body is larger than %d MiB",
			      url, SLI_SCRAPE_MAX >> 20);
	else if (cc == CURLE_OPERATION_TIMEDOUT)
		r = set_error(ret_err, -ETIMEDOUT, "SLI scrape of %s: timed out (%s)", url,
			      errbuf[0] ? errbuf : curl_easy_strerror(cc));
	else if (cc != CURLE_OK)
		r = set_error(ret_err, -EIO, "SLI scrape of %s: %s", url,
			      errbuf[0] ? errbuf : curl_easy_strerror(cc));
	else if (status != 200) {
		_cleanup_free_ char *shown = excerpt_head(b.buf ?: "", b.len);

		r = set_error(ret_err, -EIO, "SLI scrape of %s: HTTP %ld%s%s", url, status,
			      *shown ? ": " : "", shown);
	} else if (b.buf && strlen(b.buf) != b.len)
		r = set_error(ret_err, -EBADMSG, "SLI scrape of %s: the body holds NUL bytes", url);
	else {
		*ret_body = b.buf ? b.buf : xstrdup("");
		return 0;
	}
	free(b.buf);
	return r;
}

/* ---- one window ---- */

void sli_window_free(struct sli_window *w)
{
	if (!w)
		return;
	target_free(w->run); /* kills and reaps the group when still running */
	workload_free(w->wl);
	target_result_clear(&w->res);
	free(w->wait_err);
	free(w->before);
	free(w);
}

static void sli_window_freep(struct sli_window **w)
{
	sli_window_free(*w);
}

/* The command as a workload {"name": "sli", "argv", "user", "timeout_s"}, spawned and released. */
static int command_begin(struct sli_window *w, const char *user, unsigned timeout_s, char **ret_err)
{
	const struct sli *s = w->s;
	json_auto_t *def = json_object();
	json_auto_t *argv = json_array();
	_cleanup_free_ char *err = NULL;
	json_t *u;
	int r;

	if (!def || !argv)
		abort();
	if (timeout_s == 0)
		return set_error(ret_err, -EINVAL, "SLI command %s: a time limit of 0 s",
				 s->argv[0]);
	/* not valid UTF-8: no JSON string, and a missing "user" would mean nobody */
	u = json_string(user ? user : "nobody");
	if (!u)
		return set_error(ret_err, -EINVAL, "SLI command %s: user: must be a user name",
				 s->argv[0]);
	for (char **p = s->argv; *p; p++)
		json_array_append_new(argv, json_string(*p));
	json_object_set_new(def, "name", json_string("sli"));
	json_object_set(def, "argv", argv);
	json_object_set_new(def, "user", u);
	json_object_set_new(def, "timeout_s", json_integer(timeout_s));

	r = workload_from_json(def, &w->wl, &err);
	if (r < 0)
		return set_error(ret_err, r, "SLI command %s: %s", s->argv[0], err ?: strerror(-r));
	/* what the runner's messages name as the definition to fix */
	w->wl->source = xstrdup("the service's sli.command");
	/* argv[0] is absolute: the victims directory is never looked in */
	r = target_spawn(w->wl, "/nonexistent", &w->run, &err);
	if (r < 0)
		return set_error(ret_err, r, "SLI command %s: %s", s->argv[0], err ?: strerror(-r));
	r = target_release(w->run);
	if (r < 0)
		return set_error(ret_err, r, "SLI command %s: letting it start: %s", s->argv[0],
				 strerror(-r));
	return 0;
}

/* What a scrape at the window's start must find, so that a wrong selector fails early. */
static int prometheus_begin(struct sli_window *w, char **ret_err)
{
	const struct sli *s = w->s;
	_cleanup_free_ char *body = NULL, *err = NULL;
	int r;

	r = scrape(s->url, &body, ret_err);
	if (r < 0)
		return r;
	w->begin_ns = now_mono_ns();

	switch (s->kind) {
	case SLI_RATE:
		r = prom_sample(body, &s->sel, s->metric, &w->start_value, &err);
		break;
	case SLI_GAUGE:
		/* only the end's value counts: the start's may be NaN */
		r = prom_sample_present(body, &s->sel, s->metric, &err);
		break;
	case SLI_QUANTILE:
		r = prom_quantile_present(body, &s->sel, s->metric, s->q, &err);
		if (r == 0)
			w->before = TAKE_PTR(body);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0)
		return set_error(ret_err, r, "SLI scrape of %s at the window's start: %s", s->url,
				 err ?: strerror(-r));
	return 0;
}

int sli_window_begin(const struct sli *s, const char *user, unsigned timeout_s,
		     struct sli_window **ret, char **ret_err)
{
	_cleanup_(sli_window_freep) struct sli_window *w = NULL;
	int r;

	if (!s || !ret)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	w->s = s;
	r = s->source == SLI_COMMAND ? command_begin(w, user, timeout_s, ret_err)
				     : prometheus_begin(w, ret_err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(w);
	return 0;
}

/* The outcome of the command's run: 0 when it exited 0, else the errno and message. */
static int command_outcome(const struct sli_window *w, char **ret_err)
{
	const struct target_result *res = &w->res;
	const char *prog = w->s->argv[0];
	_cleanup_free_ char *tail = excerpt_tail(res->output_tail);
	const char *sep = *tail ? ": " : " (no output)";

	if (res->exec_failed)
		return set_error(ret_err, -EIO, "SLI command %s could not run: %s", prog,
				 res->error ?: "before exec");
	if (res->stopped)
		return set_error(ret_err, -ECANCELED, "SLI command %s stopped: the job is ending",
				 prog);
	if (res->timed_out)
		return set_error(ret_err, -ETIMEDOUT,
				 "SLI command %s did not finish within %u s (killed)%s%s", prog,
				 w->wl->timeout_s, *tail ? "; its output ended: " : "", tail);
	if (res->term_signal) {
		const char *abbrev = sigabbrev_np(res->term_signal);

		return abbrev
			   ? set_error(ret_err, -EIO,
				       "SLI command %s was killed by signal SIG%s%s%s", prog,
				       abbrev, sep, tail)
			   : set_error(ret_err, -EIO, "SLI command %s was killed by signal %d%s%s",
				       prog, res->term_signal, sep, tail);
	}
	if (res->exit_status != 0)
		return set_error(ret_err, -EIO, "SLI command %s exited with status %d%s%s", prog,
				 res->exit_status, sep, tail);
	return 0;
}

int sli_window_wait(struct sli_window *w, bool (*tick)(void *), void *userdata, char **ret_err)
{
	int r;

	if (!w)
		return -EINVAL;
	if (w->s->source != SLI_COMMAND)
		return 0;
	if (!w->waited) {
		r = target_wait(w->run, tick, userdata, &w->res);
		if (r < 0) {
			/* an internal failure: the run stays unreaped, sli_window_free kills it */
			w->wait_r = r;
			w->wait_err = xasprintf("SLI command %s: waiting for it: %s", w->s->argv[0],
						strerror(-r));
		} else
			w->wait_r = command_outcome(w, &w->wait_err);
		w->waited = true;
	}
	if (w->wait_r < 0)
		return set_error(ret_err, w->wait_r, "%s", w->wait_err);
	return 0;
}

static int prometheus_end(struct sli_window *w, uint64_t elapsed_ns, double *ret_value,
			  char **ret_err)
{
	const struct sli *s = w->s;
	_cleanup_free_ char *body = NULL, *err = NULL;
	uint64_t end_ns;
	double v, seconds;
	int r;

	r = scrape(s->url, &body, ret_err);
	if (r < 0)
		return r;
	end_ns = now_mono_ns();

	switch (s->kind) {
	case SLI_GAUGE:
		r = prom_sample(body, &s->sel, s->metric, &v, &err);
		break;
	case SLI_RATE:
		r = prom_sample(body, &s->sel, s->metric, &v, &err);
		if (r < 0)
			break;
		if (v < w->start_value) {
			r = set_error(
			    &err, -ERANGE,
			    "metric %s: the counter went down from %g to %g during the window "
			    "(a counter reset: did the service restart?)",
			    s->metric, w->start_value, v);
			break;
		}
		seconds = (double)(elapsed_ns ? elapsed_ns : end_ns - w->begin_ns) / 1e9;
		if (seconds <= 0) {
			r = set_error(&err, -EINVAL, "metric %s: a window of 0 s", s->metric);
			break;
		}
		v = (v - w->start_value) / seconds;
		break;
	case SLI_QUANTILE:
		r = prom_quantile(w->before, body, &s->sel, s->metric, s->q, &v, &err);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0)
		return set_error(ret_err, r, "SLI scrape of %s: %s", s->url, err ?: strerror(-r));
	*ret_value = v;
	return 0;
}

uint64_t sli_window_ran_ns(const struct sli_window *w)
{
	return w && w->s->source == SLI_COMMAND && w->waited ? w->res.wall_ns : 0;
}

int sli_window_end(struct sli_window *w, uint64_t elapsed_ns, double *ret_value, char **ret_err)
{
	_cleanup_free_ char *err = NULL;
	double v;
	int r;

	if (!w || !ret_value)
		return -EINVAL;
	if (w->s->source == SLI_PROMETHEUS)
		return prometheus_end(w, elapsed_ns, ret_value, ret_err);

	r = sli_window_wait(w, NULL, NULL, ret_err);
	if (r < 0)
		return r;
	r = sli_last_number(w->res.output_tail, &v, &err);
	if (r < 0)
		return set_error(ret_err, r, "SLI command %s: %s", w->s->argv[0], err);
	*ret_value = v;
	return 0;
}
