// SPDX-License-Identifier: MIT
#include "daemon/mvec.h"
#include "daemon/util.h"

#include <errno.h>
#include <string.h>

void mvec_set(struct mvec *m, const char *metric, double value)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].metric, metric) == 0) {
			m->v[i].value = value;
			return;
		}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct mvec_entry *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			abort();
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n].metric = xstrdup(metric);
	m->v[m->n].value = value;
	m->n++;
}

const double *mvec_get(const struct mvec *m, const char *metric)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].metric, metric) == 0)
			return &m->v[i].value;
	return NULL;
}

void mvec_free(struct mvec *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->v[i].metric);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

void mvec_array_free(struct mvec *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		mvec_free(&v[i]);
	free(v);
}

json_t *mvec_to_json(const struct mvec *m)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < m->n; i++)
		json_object_set_new(o, m->v[i].metric, json_real(m->v[i].value));
	return o;
}

int mvec_from_json(const json_t *obj, struct mvec *ret)
{
	struct mvec m = {};
	const char *k;
	json_t *v;

	if (!json_is_object(obj))
		return -EINVAL;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (!json_is_number(v)) {
			mvec_free(&m);
			return -EINVAL;
		}
		mvec_set(&m, k, json_number_value(v));
	}
	*ret = m;
	return 0;
}
