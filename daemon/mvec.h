/* SPDX-License-Identifier: MIT */
/*
 * A measurement vector (RMV or PMV): metric id -> value.
 *
 * Metric ids are "<source>/<metric>":
 *   "<tree node id>/count", "<tree node id>/time_ns"   kernel paths, from the probe
 *   "perf/<event>"                                    software (or hardware) perf counters
 *   "target/wall_ns", "target/thread_ns",             the target itself
 *   "target/exit_status"
 * Insertion order is kept so that traces read in a stable order.
 */
#pragma once

#include <stddef.h>
#include <jansson.h>

struct mvec_entry {
	char *metric;
	double value;
};

struct mvec {
	struct mvec_entry *v;
	size_t n, cap;
};

/* Set (insert or replace) a metric. */
void mvec_set(struct mvec *m, const char *metric, double value);
/* Pointer to the value, or NULL when the metric is absent. */
const double *mvec_get(const struct mvec *m, const char *metric);
void mvec_free(struct mvec *m);
/* Frees n vectors and the array that holds them; NULL is fine. */
void mvec_array_free(struct mvec *v, size_t n);
/* {"metric": value, ...} */
json_t *mvec_to_json(const struct mvec *m);
/* Inverse of mvec_to_json; non-number values are -EINVAL. */
int mvec_from_json(const json_t *obj, struct mvec *ret);
