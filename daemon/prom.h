/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text exposition format, as a service's SLI reads it
 * (sli.h): selectors NAME{label="value",...}, whose labels must each be
 * present on a sample with that exact value (it may carry more), one
 * sample's value, and a histogram's quantile between two scrapes. Errors
 * are sentences for the job's error an on-call engineer reads.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROM_SELECTOR_MAX 1024 /* bytes of a metric selector */
#define PROM_MATCHERS_MAX 32   /* label matchers in a selector */
#define PROM_VALUE_MAX 64      /* bytes of a sample's value or timestamp */

struct prom_label {
	char *name;
	char *value; /* unescaped */
};

struct prom_labels {
	struct prom_label *v;
	size_t n;
};

/* NAME{label="value",...}: the name and the labels that must be present with those values. */
struct prom_selector {
	char *name;
	struct prom_labels labels;
};

/* Parse a selector into *ret (cleared with prom_selector_clear); -EINVAL and *why otherwise. */
int prom_selector_parse(const char *text, struct prom_selector *ret, const char **why);
void prom_selector_clear(struct prom_selector *s);
/* The value of label name in l, NULL when absent. */
const char *prom_labels_get(const struct prom_labels *l, const char *name);

/*
 * The whole of [p, end) read by strtod (at most PROM_VALUE_MAX bytes, no
 * leading space); false when it is not exactly one number.
 */
bool prom_parse_double(const char *p, const char *end, double *ret);

/*
 * The value of the one sample of text that sel matches; messages start
 * with "metric SHOWN: ". -ENOENT when none matches, -ENOTUNIQ when several
 * do ("metric foo{a=\"b\"}: 2 samples match"), -EBADMSG for a malformed
 * line of that metric or a value that is NaN or infinite.
 */
int prom_sample(const char *text, const struct prom_selector *sel, const char *shown,
		double *ret, char **ret_err);
/* Whether text holds the one sample sel matches, whatever its value (NaN too): 0 or as prom_sample. */
int prom_sample_present(const char *text, const struct prom_selector *sel, const char *shown,
			char **ret_err);
/* The same with the selector as text: -EINVAL for a bad one. */
int prom_sample_text(const char *text, const char *selector, double *ret, char **ret_err);

/*
 * The q-quantile (0 < q < 1) of the observations of histogram sel's
 * NAME_bucket series (the one series, le aside, that matches) made between
 * the scrapes before and after: bucket deltas, linear interpolation inside
 * the bucket holding the rank, the highest finite bound when the rank falls
 * into the +Inf bucket (as histogram_quantile). When after holds no
 * NAME_bucket series, the summary sample NAME{quantile="q"} of after.
 * -ENODATA when no observation was made between the scrapes, -ERANGE when a
 * bucket went down or the buckets changed (a reset), -EBADMSG without a
 * +Inf bucket or for NaN counts, -ENOENT / -ENOTUNIQ as prom_sample.
 */
int prom_quantile(const char *before, const char *after, const struct prom_selector *sel,
		  const char *shown, double q, double *ret, char **ret_err);
/*
 * Whether a window's first scrape holds what prom_quantile needs of it:
 * sel's NAME_bucket series, or else the summary sample NAME{quantile="q"}.
 */
int prom_quantile_present(const char *text, const struct prom_selector *sel, const char *shown,
			  double q, char **ret_err);
/* The same with the selector as text: -EINVAL for a bad one or q outside (0, 1). */
int prom_quantile_text(const char *before, const char *after, const char *selector, double q,
		       double *ret, char **ret_err);
