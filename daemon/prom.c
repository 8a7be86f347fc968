// SPDX-License-Identifier: MIT
/*
 * The Prometheus text exposition format, as far as an SLI reads it: a
 * metric selector, the lines of the selected metric only, one sample's
 * value, and a histogram's quantile over the bucket deltas between two
 * scrapes as histogram_quantile() computes it (a summary's own quantile
 * when there are no buckets). Pure functions, tested on literal texts.
 * See prom.h.
 */
#include "daemon/prom.h"
#include "daemon/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_LABELS_MAX 256 /* labels on one exposition sample */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

static bool is_metric_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool is_metric_char(char c)
{
	return is_metric_start(c) || (c >= '0' && c <= '9');
}

static bool is_label_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_label_char(char c)
{
	return is_label_start(c) || (c >= '0' && c <= '9');
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* The whole of [p, end) read by strtod; false when it is not exactly one number. */
bool prom_parse_double(const char *p, const char *end, double *ret)
{
	char buf[PROM_VALUE_MAX + 1], *e;
	size_t len = end - p;
	double v;

	if (len == 0 || len > PROM_VALUE_MAX)
		return false;
	memcpy(buf, p, len);
	buf[len] = 0;
	/* strtod skips leading space itself: refuse it, the caller trimmed what it allows */
	if (is_space(buf[0]))
		return false;
	/* out of range: ±HUGE_VAL or a denormal, left to the caller's finiteness check */
	v = strtod(buf, &e);
	if (e == buf || *e)
		return false;
	*ret = v;
	return true;
}

/* ---- labels and selectors ---- */

static void labels_clear(struct prom_labels *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
	*l = (struct prom_labels){};
}

void prom_selector_clear(struct prom_selector *s)
{
	free(s->name);
	labels_clear(&s->labels);
	s->name = NULL;
}

const char *prom_labels_get(const struct prom_labels *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return l->v[i].value;
	return NULL;
}

/*
 * A quoted label value at *pp (on its '"'), unescaped as the exposition
 * format escapes it (\\, \" and \n; any other backslash is kept as it is).
 */
static int parse_quoted(const char **pp, const char *end, char **ret, const char **why)
{
	const char *p = *pp + 1;
	char *out = malloc(end - p + 1), *o = out;

	if (!out)
		abort();
	while (p < end && *p != '"') {
		if (*p == '\\' && p + 1 < end) {
			char c = p[1];

			if (c == 'n' || c == '\\' || c == '"') {
				*o++ = c == 'n' ? '\n' : c;
				p += 2;
				continue;
			}
		}
		*o++ = *p++;
	}
	if (p >= end) {
		free(out);
		*why = "a label value is not terminated by '\"'";
		return -EBADMSG;
	}
	*o = 0;
	*pp = p + 1;
	*ret = out;
	return 0;
}

/* {name="value",...} at *pp (on its '{'), a trailing comma allowed; at most max labels. */
static int parse_labels(const char **pp, const char *end, size_t max, struct prom_labels *ret,
			const char **why)
{
	const char *p = *pp + 1;
	struct prom_labels l = {};
	int r = -EBADMSG;

	for (;;) {
		struct prom_label *nv;
		const char *start;

		p = skip_blanks(p, end);
		if (p < end && *p == '}')
			break;
		if (l.n >= max) {
			*why = "too many labels";
			goto fail;
		}
		if (p >= end || !is_label_start(*p)) {
			*why = "expected a label name";
			goto fail;
		}
		for (start = p; p < end && is_label_char(*p); p++)
			;
		nv = realloc(l.v, (l.n + 1) * sizeof(*l.v));
		if (!nv)
			abort();
		l.v = nv;
		l.v[l.n++] = (struct prom_label){.name = xstrndup(start, p - start)};
		p = skip_blanks(p, end);
		if (p >= end || *p != '=') {
			*why = "expected '=' after a label name";
			goto fail;
		}
		p = skip_blanks(p + 1, end);
		if (p >= end || *p != '"') {
			*why = "expected a label value in double quotes";
			goto fail;
		}
		r = parse_quoted(&p, end, &l.v[l.n - 1].value, why);
		if (r < 0)
			goto fail;
		r = -EBADMSG;
		p = skip_blanks(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}')
			break;
		*why = "expected ',' or '}' after a label value";
		goto fail;
	}
	*pp = p + 1;
	*ret = l;
	return 0;
fail:
	labels_clear(&l);
	return r;
}

/* Parse "NAME" or "NAME{label="value",...}"; -EINVAL with *why. */
int prom_selector_parse(const char *text, struct prom_selector *ret, const char **why)
{
	const char *p = text, *end = text + strlen(text);
	struct prom_selector s = {};
	size_t i, j;

	if (end - text > PROM_SELECTOR_MAX) {
		*why = "longer than 1024 bytes";
		return -EINVAL;
	}
	if (!is_metric_start(*p)) {
		*why = "must start with a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)";
		return -EINVAL;
	}
	while (p < end && is_metric_char(*p))
		p++;
	s.name = xstrndup(text, p - text);
	if (p < end && *p == '{') {
		if (parse_labels(&p, end, PROM_MATCHERS_MAX, &s.labels, why) < 0) {
			prom_selector_clear(&s);
			return -EINVAL;
		}
		if (p < end) {
			*why = "unexpected text after the labels";
			prom_selector_clear(&s);
			return -EINVAL;
		}
	} else if (p < end) {
		*why = "the metric name must be followed by nothing or by {label=\"value\",...}";
		prom_selector_clear(&s);
		return -EINVAL;
	}
	for (i = 0; i < s.labels.n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(s.labels.v[i].name, s.labels.v[j].name) == 0) {
				*why = "a label is given twice";
				prom_selector_clear(&s);
				return -EINVAL;
			}
	*ret = s;
	return 0;
}

/* Every label of the selector is on the sample with that value. */
static bool selector_matches(const struct prom_selector *s, const struct prom_labels *l)
{
	size_t i;

	for (i = 0; i < s->labels.n; i++) {
		const char *v = prom_labels_get(l, s->labels.v[i].name);

		if (!v || strcmp(v, s->labels.v[i].value) != 0)
			return false;
	}
	return true;
}


/* ---- the text exposition format ---- */

/* One sample of the metric looked for: its labels and value, on line lineno. */
typedef int (*sample_fn)(const struct prom_labels *labels, double value, unsigned lineno,
			 void *userdata, char **ret_err);

/*
 * The rest of a sample line after its name: optional labels, blanks, the
 * value, an optional integer timestamp, nothing else.
 */
static int parse_sample_rest(const char *p, const char *end, struct prom_labels *ret_labels,
			     double *ret_value, const char **why)
{
	struct prom_labels l = {};
	const char *tok;
	double v;
	int r;

	if (p < end && *p == '{') {
		r = parse_labels(&p, end, SAMPLE_LABELS_MAX, &l, why);
		if (r < 0)
			return r;
	}
	if (p >= end || !is_blank(*p)) {
		*why = p >= end ? "no value" : "expected a blank before the value";
		goto fail;
	}
	p = skip_blanks(p, end);
	for (tok = p; p < end && !is_blank(*p); p++)
		;
	if (!prom_parse_double(tok, p, &v)) {
		*why = tok == p ? "no value" : "the value is not a number";
		goto fail;
	}
	p = skip_blanks(p, end);
	if (p < end) {
		/* a timestamp: milliseconds, an integer */
		tok = p;
		if (*p == '-')
			p++;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == tok || (*tok == '-' && p == tok + 1) || p - tok > PROM_VALUE_MAX ||
		    skip_blanks(p, end) != end) {
			*why = "unexpected text after the value (only a timestamp may follow)";
			goto fail;
		}
	}
	*ret_labels = l;
	*ret_value = v;
	return 0;
fail:
	labels_clear(&l);
	return -EBADMSG;
}

/*
 * Call fn for each sample of text named name. Comments, blank lines and
 * the lines of other metrics are skipped unread; a malformed line of this
 * metric is -EBADMSG ("line 12: ..."). Stops at fn's first error.
 */
static int prom_scan(const char *text, const char *name, sample_fn fn, void *userdata,
		     char **ret_err)
{
	size_t name_len = strlen(name);
	const char *line = text;
	unsigned lineno = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line), *p;
		struct prom_labels labels = {};
		const char *why = NULL;
		double value;
		int r;

		lineno++;
		if (end > line && end[-1] == '\r')
			end--;
		p = skip_blanks(line, end);
		line = nl ? nl + 1 : NULL;
		if (p == end || *p == '#')
			continue;
		if ((size_t)(end - p) < name_len || memcmp(p, name, name_len) != 0 ||
		    is_metric_char(p[name_len]))
			continue;
		r = parse_sample_rest(p + name_len, end, &labels, &value, &why);
		if (r < 0)
			return set_error(ret_err, r, "line %u: %s", lineno, why);
		r = fn(&labels, value, lineno, userdata, ret_err);
		labels_clear(&labels);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The samples that match a selector (and, when q is not NaN, carry quantile="q"). */
struct select_state {
	const struct prom_selector *sel;
	double q;
	size_t count;
	double value;
};

static int select_sample(const struct prom_labels *labels, double value, unsigned lineno,
			 void *userdata, char **ret_err)
{
	struct select_state *st = userdata;

	if (!selector_matches(st->sel, labels))
		return 0;
	if (!isnan(st->q)) {
		const char *qs = prom_labels_get(labels, "quantile");
		double q;

		if (!qs || !prom_parse_double(qs, qs + strlen(qs), &q) || q != st->q)
			return 0;
	}
	st->count++;
	st->value = value;
	return 0;
}

/* How many samples match, and the value of the last one; errors only for malformed lines. */
static int prom_select(const char *text, const struct prom_selector *sel, const char *name,
		       double q, size_t *ret_count, double *ret_value, char **ret_err)
{
	struct select_state st = {.sel = sel, .q = q};
	int r;

	r = prom_scan(text, name, select_sample, &st, ret_err);
	if (r < 0)
		return r;
	*ret_count = st.count;
	*ret_value = st.value;
	return 0;
}

/* The one matching sample's finite value; messages start with "metric SELECTOR: ". */
int prom_sample(const char *text, const struct prom_selector *sel, const char *shown,
			      double *ret, char **ret_err)
{
	_cleanup_free_ char *err = NULL;
	size_t count;
	double v;
	int r;

	r = prom_select(text, sel, sel->name, NAN, &count, &v, &err);
	if (r < 0)
		return set_error(ret_err, r, "metric %s: %s", shown, err);
	if (count != 1)
		return set_error(ret_err, count ? -ENOTUNIQ : -ENOENT,
				 "metric %s: %zu samples match%s", shown, count,
				 count ? " (add labels to the selector to pick one series)" : "");
	if (!isfinite(v))
		return set_error(ret_err, -EBADMSG,
				 "metric %s: the value is %g, not a finite number", shown, v);
	*ret = v;
	return 0;
}

int prom_sample_text(const char *text, const char *selector, double *ret, char **ret_err)
{
	struct prom_selector sel = {};
	const char *why = NULL;
	int r;

	if (prom_selector_parse(selector, &sel, &why) < 0)
		return set_error(ret_err, -EINVAL, "metric selector \"%.256s\": %s", selector, why);
	r = prom_sample(text, &sel, selector, ret, ret_err);
	prom_selector_clear(&sel);
	return r;
}

/* ---- histograms ---- */

struct bucket {
	double le;
	double count;
};

/* The buckets of one series: the samples of NAME_bucket whose labels, le aside, are key. */
struct hist_series {
	char *key;
	struct bucket *b;
	size_t n;
};

struct hist_state {
	const struct prom_selector *sel;
	const char *only_key; /* NULL: every matching series */
	struct hist_series *series;
	size_t n;
};

static void hist_state_clear(struct hist_state *st)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		free(st->series[i].key);
		free(st->series[i].b);
	}
	free(st->series);
	st->series = NULL;
	st->n = 0;
}

static int cmp_label_name(const void *a, const void *b)
{
	const struct prom_label *x = *(const struct prom_label *const *)a;
	const struct prom_label *y = *(const struct prom_label *const *)b;

	return strcmp(x->name, y->name);
}

/* A series' identity: its labels but le, sorted by name, each length-prefixed. */
static char *series_key(const struct prom_labels *l)
{
	_cleanup_free_ const struct prom_label **v = calloc(l->n + 1, sizeof(*v));
	size_t i, n = 0, len = 1;
	char *key, *k;

	if (!v)
		abort();
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, "le") != 0) {
			v[n++] = &l->v[i];
			/* two lengths of at most 20 digits and ":=:," */
			len += strlen(l->v[i].name) + strlen(l->v[i].value) + 44;
		}
	qsort(v, n, sizeof(*v), cmp_label_name);
	key = malloc(len);
	if (!key)
		abort();
	for (k = key, *k = 0, i = 0; i < n; i++)
		k += sprintf(k, "%zu:%s=%zu:%s,", strlen(v[i]->name), v[i]->name,
			     strlen(v[i]->value), v[i]->value);
	return key;
}

static int collect_bucket(const struct prom_labels *labels, double value, unsigned lineno,
			  void *userdata, char **ret_err)
{
	struct hist_state *st = userdata;
	_cleanup_free_ char *key = NULL;
	struct hist_series *s = NULL;
	const char *les;
	struct bucket *nb;
	double le;
	size_t i;

	if (!selector_matches(st->sel, labels))
		return 0;
	les = prom_labels_get(labels, "le");
	if (!les)
		return set_error(ret_err, -EBADMSG, "line %u: a bucket without an le label",
				 lineno);
	if (!prom_parse_double(les, les + strlen(les), &le) || isnan(le))
		return set_error(ret_err, -EBADMSG, "line %u: le=\"%.64s\" is not a number", lineno,
				 les);
	key = series_key(labels);
	if (st->only_key && strcmp(key, st->only_key) != 0)
		return 0;
	for (i = 0; i < st->n && !s; i++)
		if (strcmp(st->series[i].key, key) == 0)
			s = &st->series[i];
	if (!s) {
		struct hist_series *ns = realloc(st->series, (st->n + 1) * sizeof(*ns));

		if (!ns)
			abort();
		st->series = ns;
		s = &st->series[st->n++];
		*s = (struct hist_series){.key = TAKE_PTR(key)};
	}
	for (i = 0; i < s->n; i++)
		if (s->b[i].le == le)
			return set_error(ret_err, -EBADMSG,
					 "line %u: bucket le=\"%.64s\" appears twice", lineno, les);
	nb = realloc(s->b, (s->n + 1) * sizeof(*nb));
	if (!nb)
		abort();
	s->b = nb;
	s->b[s->n++] = (struct bucket){.le = le, .count = value};
	return 0;
}

static int cmp_bucket(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	return x->le < y->le ? -1 : x->le > y->le;
}

/*
 * The q-quantile of cumulative buckets b (sorted by le, the last +Inf), as
 * Prometheus' bucketQuantile: counts made monotonic, the rank q * total
 * located in the first bucket whose count reaches it, linear interpolation
 * between that bucket's bounds (0 below the first one); the highest finite
 * bound when the rank lies in the +Inf bucket.
 */
static int bucket_quantile(struct bucket *b, size_t n, double q, double *ret, const char **why)
{
	double total, rank, start = 0, end, count, max = 0;
	size_t i;

	if (n < 2 || !isinf(b[n - 1].le) || b[n - 1].le < 0) {
		*why = n && isinf(b[n - 1].le) && b[n - 1].le > 0 ? "it has no finite bucket"
								  : "it has no le=\"+Inf\" bucket";
		return -EBADMSG;
	}
	for (i = 0; i < n; i++) {
		if (b[i].count < max)
			b[i].count = max;
		max = b[i].count;
	}
	total = b[n - 1].count;
	if (total <= 0) {
		*why = "no observations between the scrapes";
		return -ENODATA;
	}
	rank = q * total;
	for (i = 0; i < n - 1 && b[i].count < rank; i++)
		;
	if (i == n - 1) {
		*ret = b[n - 2].le;
		return 0;
	}
	if (i == 0 && b[0].le <= 0) {
		*ret = b[0].le;
		return 0;
	}
	end = b[i].le;
	count = b[i].count;
	if (i > 0) {
		start = b[i - 1].le;
		count -= b[i - 1].count;
		rank -= b[i - 1].count;
	}
	*ret = start + (end - start) * (rank / count);
	return 0;
}

/* A quantile selector that found no histogram and not one summary sample either. */
static int summary_count_error(char **ret_err, const char *shown, const char *name, double q,
			       size_t count)
{
	if (count == 0)
		return set_error(ret_err, -ENOENT,
				 "metric %s: 0 samples match (neither a histogram %s_bucket nor a "
				 "summary %s{quantile=\"%g\"})",
				 shown, name, name, q);
	return set_error(
	    ret_err, -ENOTUNIQ,
	    "metric %s: %zu samples match (summary series %s{quantile=\"%g\"}: add labels "
	    "to the selector to pick one)",
	    shown, count, name, q);
}

/* The quantile over before -> after for a parsed selector; messages start "metric SELECTOR: ". */
int prom_quantile(const char *before, const char *after,
				const struct prom_selector *sel, const char *shown, double q,
				double *ret, char **ret_err)
{
	_cleanup_free_ char *bucket_name = xasprintf("%s_bucket", sel->name), *err = NULL;
	struct hist_state a = {.sel = sel}, b = {.sel = sel};
	const struct hist_series *sa, *sb;
	const char *why = NULL;
	struct bucket *d = NULL;
	size_t i, j;
	int r;

	r = prom_scan(after, bucket_name, collect_bucket, &a, &err);
	if (r < 0) {
		r = set_error(ret_err, r, "metric %s: %s", shown, err);
		goto out;
	}
	if (a.n == 0) {
		/* no histogram: a summary's own quantile */
		size_t count;
		double v;

		r = prom_select(after, sel, sel->name, q, &count, &v, &err);
		if (r < 0)
			r = set_error(ret_err, r, "metric %s: %s", shown, err);
		else if (count != 1)
			r = summary_count_error(ret_err, shown, sel->name, q, count);
		else if (!isfinite(v))
			r = set_error(
			    ret_err, -EBADMSG,
			    "metric %s: the summary's quantile %g is %g, not a finite number",
			    shown, q, v);
		else
			*ret = v;
		goto out;
	}
	if (a.n > 1) {
		r = set_error(
		    ret_err, -ENOTUNIQ,
		    "metric %s: %zu histograms match (series of %s that differ in more than "
		    "le: add labels to the selector to pick one)",
		    shown, a.n, bucket_name);
		goto out;
	}
	sa = &a.series[0];

	b.only_key = sa->key;
	r = prom_scan(before, bucket_name, collect_bucket, &b, &err);
	if (r < 0) {
		r = set_error(ret_err, r, "metric %s: first scrape: %s", shown, err);
		goto out;
	}
	if (b.n == 0) {
		r = set_error(
		    ret_err, -ENOENT,
		    "metric %s: the histogram was not in the first scrape (a reset: did the "
		    "service restart?)",
		    shown);
		goto out;
	}
	sb = &b.series[0];

	/* the observations between the scrapes: bucket by bucket deltas */
	d = calloc(sa->n, sizeof(*d));
	if (!d)
		abort();
	for (i = 0; i < sa->n; i++) {
		const struct bucket *prev = NULL;

		for (j = 0; j < sb->n && !prev; j++)
			if (sb->b[j].le == sa->b[i].le)
				prev = &sb->b[j];
		if (!prev || sb->n != sa->n) {
			r = set_error(
			    ret_err, -ERANGE,
			    "metric %s: its buckets changed between the scrapes (a restart "
			    "with another configuration?)",
			    shown);
			goto out;
		}
		/* a count past the range of a double reads as infinite: no number of observations */
		if (!isfinite(sa->b[i].count) || !isfinite(prev->count)) {
			r = set_error(ret_err, -EBADMSG,
				      "metric %s: bucket le=\"%g\" counts %g, not a finite number",
				      shown, sa->b[i].le,
				      isfinite(prev->count) ? sa->b[i].count : prev->count);
			goto out;
		}
		if (sa->b[i].count < prev->count) {
			r = set_error(
			    ret_err, -ERANGE,
			    "metric %s: bucket le=\"%g\" went down from %g to %g between the "
			    "scrapes (a counter reset: did the service restart?)",
			    shown, sa->b[i].le, prev->count, sa->b[i].count);
			goto out;
		}
		d[i] = (struct bucket){.le = sa->b[i].le, .count = sa->b[i].count - prev->count};
	}
	qsort(d, sa->n, sizeof(*d), cmp_bucket);
	r = bucket_quantile(d, sa->n, q, ret, &why);
	if (r < 0)
		r = set_error(ret_err, r, "metric %s: %s", shown, why);
out:
	free(d);
	hist_state_clear(&a);
	hist_state_clear(&b);
	return r;
}

int prom_sample_present(const char *text, const struct prom_selector *sel, const char *shown,
			char **ret_err)
{
	size_t count;
	double v;
	int r;

	r = prom_select(text, sel, sel->name, NAN, &count, &v, ret_err);
	if (r == 0 && count != 1)
		r = set_error(ret_err, count ? -ENOTUNIQ : -ENOENT, "metric %s: %zu samples match",
			      shown, count);
	return r;
}

int prom_quantile_present(const char *text, const struct prom_selector *sel, const char *shown,
			  double q, char **ret_err)
{
	_cleanup_free_ char *bucket_name = xasprintf("%s_bucket", sel->name);
	struct hist_state st = {.sel = sel};
	size_t count;
	double v;
	int r;

	r = prom_scan(text, bucket_name, collect_bucket, &st, ret_err);
	count = st.n;
	hist_state_clear(&st);
	if (r == 0 && count == 0) {
		r = prom_select(text, sel, sel->name, q, &count, &v, ret_err);
		if (r == 0 && count != 1)
			r = summary_count_error(ret_err, shown, sel->name, q, count);
	}
	return r;
}

int prom_quantile_text(const char *before, const char *after, const char *selector, double q,
		      double *ret, char **ret_err)
{
	struct prom_selector sel = {};
	const char *why = NULL;
	int r;

	if (!(q > 0 && q < 1))
		return set_error(ret_err, -EINVAL, "quantile %g is outside (0, 1)", q);
	if (prom_selector_parse(selector, &sel, &why) < 0)
		return set_error(ret_err, -EINVAL, "metric selector \"%.256s\": %s", selector, why);
	r = prom_quantile(before, after, &sel, selector, q, ret, ret_err);
	prom_selector_clear(&sel);
	return r;
}
