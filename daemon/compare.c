// SPDX-License-Identifier: MIT
#include "daemon/compare.h"
#include "daemon/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Times are nanoseconds: "kernel_paging/time_ns", "target/wall_ns". */
static bool metric_is_time(const char *metric)
{
	size_t n = strlen(metric);

	return n > 3 && strcmp(metric + n - 3, "_ns") == 0;
}

/* metric's values in every run, into vals; false when a run lacks it. */
static bool gather(const struct mvec *runs, size_t n, const char *metric, double *vals)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const double *v = mvec_get(&runs[i], metric);

		if (!v || !isfinite(*v))
			return false;
		vals[i] = *v;
	}
	return true;
}

/* Mean and spread (floors applied) of n values. */
static void centre_spread(const struct calib_params *p, const char *metric, const double *vals,
			  size_t n, double *ret_mean, double *ret_spread)
{
	struct calib_score s;

	calib_score_metric(p, NULL, metric, metric_is_time(metric), vals, n, 0, &s);
	*ret_mean = s.centre;
	*ret_spread = s.spread;
	free(s.metric);
}

static int by_z(const void *x, const void *y)
{
	double a = fabs(json_real_value(json_object_get(*(json_t *const *)x, "z")));
	double b = fabs(json_real_value(json_object_get(*(json_t *const *)y, "z")));

	return a < b ? 1 : a > b ? -1 : 0;
}

/* The metrics of runs[0] that the other side's first run lacks. */
static json_t *only_in(const struct mvec *runs, size_t n, const struct mvec *other, size_t n_other)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; n > 0 && n_other > 0 && i < runs[0].n; i++)
		if (!mvec_get(&other[0], runs[0].v[i].metric))
			json_array_append_new(list, json_string(runs[0].v[i].metric));
	return list;
}

json_t *compare_references(const struct calib_params *p, const struct mvec *a, size_t na,
			   const struct mvec *b, size_t nb)
{
	_cleanup_free_ double *va = calloc(na ? na : 1, sizeof(double));
	_cleanup_free_ double *vb = calloc(nb ? nb : 1, sizeof(double));
	json_t *out, *differ, **sorted = NULL;
	size_t i, compared = 0, n;

	if (!va || !vb)
		return NULL;
	differ = json_array();
	for (i = 0; na > 0 && nb > 0 && i < a[0].n; i++) {
		const char *m = a[0].v[i].metric;
		double ma, sa, mb, sb, spread, z;

		if (!gather(a, na, m, va) || !gather(b, nb, m, vb))
			continue;
		compared++;
		centre_spread(p, m, va, na, &ma, &sa);
		centre_spread(p, m, vb, nb, &mb, &sb);
		spread = fmax(sa, sb);
		z = spread > 0 ? (mb - ma) / spread : 0;
		if (!(fabs(z) > p->tau))
			continue;
		json_array_append_new(
		    differ,
		    json_pack("{s:s,s:{s:f,s:f},s:{s:f,s:f},s:o,s:f,s:s}", "metric", m, "a", "mean",
			      ma, "spread", sa, "b", "mean", mb, "spread", sb, "ratio",
			      ma != 0 ? json_real(mb / ma) : json_null(), "z", z, "direction",
			      z > 0 ? "higher" : "lower"));
	}
	/* most moved first */
	n = json_array_size(differ);
	if (n > 1) {
		sorted = calloc(n, sizeof(*sorted));
		if (sorted) {
			json_t *again = json_array();

			for (i = 0; i < n; i++)
				sorted[i] = json_array_get(differ, i);
			qsort(sorted, n, sizeof(*sorted), by_z);
			for (i = 0; i < n; i++)
				json_array_append(again, sorted[i]);
			free(sorted);
			json_decref(differ);
			differ = again;
		}
	}
	out = json_pack("{s:f,s:I,s:o,s:o,s:o}", "tau", p->tau, "compared", (json_int_t)compared,
			"differ", differ, "only_a", only_in(a, na, b, nb), "only_b",
			only_in(b, nb, a, na));
	return out;
}
