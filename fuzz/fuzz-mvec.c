// SPDX-License-Identifier: MIT
/*
 * Vector JSON: the bytes are a stored vector's text ({"metric": value,
 * ...}), parsed and given to mvec_from_json.
 *
 * Properties: a vector is accepted exactly when the document is an object
 * of numbers; it holds each metric once, with the document's last value
 * for it, in first-seen order; mvec_to_json, written out as text and read
 * back (as the store does), gives the same vector, bit for bit.
 */
#include "daemon/mvec.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

static bool same_value(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static void check_same(const struct mvec *a, const struct mvec *b)
{
	size_t i;

	FUZZ_CHECK(a->n == b->n, "%zu metrics, %zu after the round trip", a->n, b->n);
	for (i = 0; i < a->n; i++) {
		FUZZ_CHECK(!strcmp(a->v[i].metric, b->v[i].metric), "metric %zu: %s, then %s", i,
			   a->v[i].metric, b->v[i].metric);
		FUZZ_CHECK(same_value(a->v[i].value, b->v[i].value), "%s: %.17g, then %.17g",
			   a->v[i].metric, a->v[i].value, b->v[i].value);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mvec m = {.n = 7}, back = {};
	json_t *doc, *j, *again, *v;
	const char *key;
	bool numbers = true;
	char *text;
	size_t i;
	int r;

	doc = json_loadb((const char *)data, size, 0, NULL);
	if (!doc)
		return 0;
	if (json_is_object(doc))
		json_object_foreach (doc, key, v)
			numbers &= json_is_number(v);
	r = mvec_from_json(doc, &m);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && m.n == 7 && !(json_is_object(doc) && numbers), "r=%d",
			   r);
		json_decref(doc);
		return 0;
	}
	FUZZ_CHECK(json_is_object(doc) && numbers,
		   "accepted a document that is not an object of numbers");
	for (i = 0; i < m.n; i++) {
		const double *got = mvec_get(&m, m.v[i].metric);

		FUZZ_CHECK(got == &m.v[i].value, "%s is held twice", m.v[i].metric);
		FUZZ_CHECK(isfinite(m.v[i].value), "%s is not finite", m.v[i].metric);
	}
	json_object_foreach (doc, key, v) {
		const double *got = mvec_get(&m, key);

		FUZZ_CHECK(got, "%s was dropped", key);
	}

	j = mvec_to_json(&m);
	FUZZ_CHECK(j && json_object_size(j) == m.n, "mvec_to_json keeps %zu of %zu metrics",
		   j ? json_object_size(j) : 0, m.n);
	text = json_dumps(j, JSON_COMPACT);
	FUZZ_CHECK(text, "the vector cannot be written out");
	again = json_loads(text, 0, NULL);
	FUZZ_CHECK(again, "the vector's text does not parse: %s", text);
	r = mvec_from_json(again, &back);
	FUZZ_CHECK(r == 0, "the written vector is refused");
	check_same(&m, &back);

	free(text);
	json_decref(again);
	json_decref(j);
	mvec_free(&back);
	mvec_free(&m);
	json_decref(doc);
	return 0;
}
