// SPDX-License-Identifier: MIT
/*
 * The workload registry: definitions parsed from JSON (pure) and the
 * directory of definition files loaded into a sorted, deduplicated set.
 */
#include "daemon/workload.h"
#include "daemon/defs.h"
#include "daemon/service.h"
#include "daemon/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>

static const char *const known_fields[] = {
    "name", "description", "argv", "user", "cpus", "timeout_s",
};

void workload_free(struct workload *w)
{
	size_t i;

	if (!w)
		return;
	free(w->name);
	free(w->description);
	if (w->argv)
		for (i = 0; i < w->argc; i++)
			free(w->argv[i]);
	free(w->argv);
	free(w->user);
	free(w->cpus);
	free(w->source);
	free(w->unusable);
	free(w);
}

static void workload_freep(struct workload **w)
{
	workload_free(*w);
}
#define _cleanup_workload_ _cleanup_(workload_freep)

/* A CPU number: decimal digits only, below CPU_SETSIZE; *s advanced past it. */
static int parse_cpu_number(const char **s, unsigned *ret)
{
	const char *p = *s;
	unsigned v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v >= CPU_SETSIZE)
			return -EINVAL;
	}
	*s = p;
	*ret = v;
	return 0;
}

int parse_cpu_list(const char *s, cpu_set_t *ret)
{
	cpu_set_t set;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	CPU_ZERO(&set);
	for (;;) {
		unsigned lo, hi, c;
		int r;

		r = parse_cpu_number(&p, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (*p == '-') {
			p++;
			r = parse_cpu_number(&p, &hi);
			if (r < 0)
				return r;
			if (hi < lo)
				return -EINVAL;
		}
		for (c = lo; c <= hi; c++)
			CPU_SET(c, &set);
		if (*p == ',') {
			p++;
			continue;
		}
		/* Accept the trailing newline of sysfs and /proc lists. */
		if (*p == '\n' && p[1] == 0)
			break;
		if (*p != 0)
			return -EINVAL;
		break;
	}
	*ret = set;
	return 0;
}

static int parse_argv(const json_t *a, struct workload *w, char **ret_err)
{
	size_t i, n;
	const char *a0;

	if (!json_is_array(a))
		return set_error(ret_err, -EINVAL, "argv: must be an array of strings");
	n = json_array_size(a);
	if (n == 0)
		return set_error(ret_err, -EINVAL, "argv: must not be empty");
	if (n > WORKLOAD_ARGV_MAX)
		return set_error(ret_err, -EINVAL, "argv: %zu arguments, at most %d allowed", n,
				 WORKLOAD_ARGV_MAX);
	w->argv = calloc(n + 1, sizeof(char *));
	if (!w->argv)
		abort();
	for (i = 0; i < n; i++) {
		const char *s = json_plain_string(json_array_get(a, i), WORKLOAD_ARG_LEN_MAX);

		if (!s)
			return set_error(
			    ret_err, -EINVAL,
			    "argv[%zu]: must be a string without NUL bytes of at most %d bytes", i,
			    WORKLOAD_ARG_LEN_MAX);
		w->argv[i] = xstrdup(s);
		w->argc++;
	}

	a0 = w->argv[0];
	if (strchr(a0, '/')) {
		if (a0[0] != '/')
			return set_error(ret_err, -EINVAL,
					 "argv[0]: \"%s\" must be an absolute path or a bare "
					 "victim name",
					 a0);
		if (strlen(a0) >= PATH_MAX)
			return set_error(ret_err, -EINVAL, "argv[0]: path too long");
	} else if (!valid_name(a0, WORKLOAD_NAME_MAX)) {
		return set_error(ret_err, -EINVAL, "argv[0]: \"%s\" is not a valid victim name",
				 a0);
	}
	return 0;
}

int workload_from_json(const json_t *doc, struct workload **ret, char **ret_err)
{
	_cleanup_workload_ struct workload *w = NULL;
	const char *key, *s;
	json_t *v;
	json_int_t t;
	int r;

	if (!json_is_object(doc))
		return set_error(ret_err, -EINVAL, "definition must be a JSON object");

	json_object_foreach ((json_t *)doc, key, v) {
		size_t i;
		bool known = false;

		for (i = 0; i < ARRAY_SIZE(known_fields); i++)
			if (strcmp(key, known_fields[i]) == 0)
				known = true;
		if (!known)
			return set_error(ret_err, -EINVAL, "unknown field \"%.64s\"", key);
	}

	w = calloc(1, sizeof(*w));
	if (!w)
		abort();

	v = json_object_get(doc, "name");
	if (!v)
		return set_error(ret_err, -EINVAL, "name: missing");
	s = json_plain_string(v, WORKLOAD_NAME_MAX);
	if (!s || !valid_name(s, WORKLOAD_NAME_MAX))
		return set_error(ret_err, -EINVAL,
				 "name: must be a string of [a-z0-9_.-], at most %d bytes, "
				 "not starting with '.' or '-'",
				 WORKLOAD_NAME_MAX);
	w->name = xstrdup(s);

	v = json_object_get(doc, "description");
	if (v) {
		s = json_plain_string(v, WORKLOAD_DESCRIPTION_MAX);
		if (!s)
			return set_error(ret_err, -EINVAL,
					 "description: must be a string of at most %d bytes",
					 WORKLOAD_DESCRIPTION_MAX);
		w->description = xstrdup(s);
	}

	v = json_object_get(doc, "argv");
	if (!v)
		return set_error(ret_err, -EINVAL, "argv: missing");
	r = parse_argv(v, w, ret_err);
	if (r < 0)
		return r;

	v = json_object_get(doc, "user");
	if (v) {
		s = json_plain_string(v, 32);
		if (!s || !valid_user_name(s))
			return set_error(ret_err, -EINVAL, "user: must be a user name");
		w->user = xstrdup(s);
	} else
		w->user = xstrdup("nobody");

	v = json_object_get(doc, "cpus");
	/* null is what workload_to_json writes for "not given": it must parse back */
	if (v && !json_is_null(v)) {
		s = json_plain_string(v, 256);
		if (!s || parse_cpu_list(s, &w->cpuset) < 0)
			return set_error(ret_err, -EINVAL,
					 "cpus: must be a CPU list such as \"0\" or \"0-1,3\" "
					 "with CPUs below %d",
					 CPU_SETSIZE);
		w->cpus = xstrdup(s);
	} else {
		int c, n = get_nprocs_conf();

		CPU_ZERO(&w->cpuset);
		for (c = 0; c < n && c < CPU_SETSIZE; c++)
			CPU_SET(c, &w->cpuset);
	}

	v = json_object_get(doc, "timeout_s");
	if (!v)
		return set_error(ret_err, -EINVAL, "timeout_s: missing");
	if (!json_is_integer(v))
		return set_error(ret_err, -EINVAL, "timeout_s: must be an integer");
	t = json_integer_value(v);
	if (t < 1 || t > WORKLOAD_TIMEOUT_MAX)
		return set_error(ret_err, -EINVAL, "timeout_s: %lld out of range 1..%d",
				 (long long)t, WORKLOAD_TIMEOUT_MAX);
	w->timeout_s = (unsigned)t;

	*ret = TAKE_PTR(w);
	return 0;
}

json_t *workload_to_json(const struct workload *w)
{
	json_t *o = json_object(), *a = json_array();
	size_t i;

	if (!o || !a)
		abort();
	json_object_set_new(o, "name", json_string(w->name));
	if (w->description)
		json_object_set_new(o, "description", json_string(w->description));
	for (i = 0; i < w->argc; i++)
		json_array_append_new(a, json_string(w->argv[i]));
	json_object_set_new(o, "argv", a);
	json_object_set_new(o, "user", json_string(w->user));
	json_object_set_new(o, "cpus", w->cpus ? json_string(w->cpus) : json_null());
	json_object_set_new(o, "timeout_s", json_integer(w->timeout_s));
	if (w->source)
		json_object_set_new(o, "source", json_string(w->source));
	if (w->checked) {
		json_object_set_new(o, "usable", json_boolean(!w->unusable));
		if (w->unusable)
			json_object_set_new(o, "unusable_reason", json_string(w->unusable));
	}
	return o;
}

struct workload_registry *workload_registry_ref(struct workload_registry *r)
{
	atomic_fetch_add(&r->refs, 1);
	return r;
}

void workload_registry_free(struct workload_registry *r)
{
	size_t i;

	if (!r || atomic_fetch_sub(&r->refs, 1) > 1)
		return;
	for (i = 0; i < r->n; i++)
		workload_free(r->items[i]);
	free(r->items);
	for (i = 0; i < r->n_errors; i++)
		free(r->errors[i]);
	free(r->errors);
	service_registry_free(r->services);
	free(r);
}

static void workload_registry_freep(struct workload_registry **r)
{
	workload_registry_free(*r);
}

static int cmp_workload(const void *a, const void *b)
{
	const struct workload *x = *(const struct workload *const *)a;
	const struct workload *y = *(const struct workload *const *)b;

	return strcmp(x->name, y->name);
}

/* Each registry loaded gets the next number: which one an answer was built from. */
static atomic_ulong registry_generations;

/* defs_load's add: a parsed definition joins the registry unless its name is taken. */
static int registry_add(void *ctx, const json_t *doc, char *path, char **ret_err)
{
	struct workload_registry *reg = ctx;
	struct workload *w = NULL, **items;
	size_t i;
	int r;

	r = workload_from_json(doc, &w, ret_err);
	if (r < 0)
		return r;
	for (i = 0; i < reg->n; i++)
		if (strcmp(reg->items[i]->name, w->name) == 0) {
			r = set_error(ret_err, -EEXIST,
				      "duplicate workload name \"%s\", already defined in %s",
				      w->name, reg->items[i]->source);
			workload_free(w);
			return r;
		}
	items = realloc(reg->items, (reg->n + 1) * sizeof(*items));
	if (!items)
		abort();
	reg->items = items;
	w->source = path;
	reg->items[reg->n++] = w;
	return 0;
}

static void registry_error(void *ctx, char *msg)
{
	struct workload_registry *reg = ctx;

	strv_push(&reg->errors, &reg->n_errors, msg);
}

int workload_registry_load(const char *dir, struct workload_registry **ret)
{
	_cleanup_(workload_registry_freep) struct workload_registry *reg = calloc(1, sizeof(*reg));
	int r;

	if (!reg)
		abort();
	atomic_init(&reg->refs, 1);
	reg->generation = atomic_fetch_add(&registry_generations, 1) + 1;
	r = defs_load(dir, WORKLOAD_REGISTRY_MAX, WORKLOAD_FILE_MAX, reg, registry_add,
		      registry_error);
	if (r < 0)
		return r;
	if (reg->n)
		qsort(reg->items, reg->n, sizeof(struct workload *), cmp_workload);
	*ret = TAKE_PTR(reg);
	return 0;
}

const struct workload *workload_find(const struct workload_registry *r, const char *name)
{
	struct workload key = {.name = (char *)name}, *k = &key, **found;

	if (!r || !name || r->n == 0)
		return NULL;
	found = bsearch(&k, r->items, r->n, sizeof(struct workload *), cmp_workload);
	return found ? *found : NULL;
}

json_t *workload_registry_to_json(const struct workload_registry *r)
{
	json_t *o = json_object(), *ws = json_array(), *es = json_array();
	size_t i;

	if (!o || !ws || !es)
		abort();
	for (i = 0; r && i < r->n; i++)
		json_array_append_new(ws, workload_to_json(r->items[i]));
	for (i = 0; r && i < r->n_errors; i++)
		json_array_append_new(es, json_string(r->errors[i]));
	json_object_set_new(o, "workloads", ws);
	json_object_set_new(o, "errors", es);
	return o;
}

/* ---- the registry in use ---- */

struct workloads_live {
	pthread_mutex_t lock;
	struct workload_registry *reg;
};

int workloads_live_new(struct workload_registry *reg, struct workloads_live **ret)
{
	struct workloads_live *l = calloc(1, sizeof(*l));

	if (!l) {
		workload_registry_free(reg);
		return -ENOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->reg = reg;
	*ret = l;
	return 0;
}

struct workload_registry *workloads_live_get(struct workloads_live *l)
{
	struct workload_registry *r;

	pthread_mutex_lock(&l->lock);
	r = workload_registry_ref(l->reg);
	pthread_mutex_unlock(&l->lock);
	return r;
}

void workloads_live_set(struct workloads_live *l, struct workload_registry *reg)
{
	struct workload_registry *old;

	pthread_mutex_lock(&l->lock);
	old = l->reg;
	l->reg = reg;
	pthread_mutex_unlock(&l->lock);
	workload_registry_free(old);
}

void workloads_live_free(struct workloads_live *l)
{
	if (!l)
		return;
	workload_registry_free(l->reg);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
