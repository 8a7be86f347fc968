// SPDX-License-Identifier: MIT
/*
 * The workload registry: definitions parsed from JSON (pure) and the
 * directory of definition files loaded into a sorted, deduplicated set.
 */
#include "daemon/workload.h"
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

/* A Unix user name as useradd accepts it: [a-z_][a-z0-9_-]*[$]?, at most 32 bytes. */
static bool valid_user_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 32)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
			continue;
		if (c == '$' && i == n - 1)
			continue;
		return false;
	}
	return true;
}

/* A JSON string without embedded NUL bytes and at most max bytes long, or NULL. */
static const char *json_plain_string(const json_t *v, size_t max)
{
	const char *s;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) || strlen(s) > max)
		return NULL;
	return s;
}

static int fail(char **ret_err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char **ret_err, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	/* it quotes the file, maybe cut mid-character: GET /workloads shows it as JSON */
	utf8_sanitize(msg);
	if (ret_err)
		*ret_err = msg;
	else
		free(msg);
	return -EINVAL;
}

static int parse_argv(const json_t *a, struct workload *w, char **ret_err)
{
	size_t i, n;
	const char *a0;

	if (!json_is_array(a))
		return fail(ret_err, "argv: must be an array of strings");
	n = json_array_size(a);
	if (n == 0)
		return fail(ret_err, "argv: must not be empty");
	if (n > WORKLOAD_ARGV_MAX)
		return fail(ret_err, "argv: %zu arguments, at most %d allowed", n,
			    WORKLOAD_ARGV_MAX);
	w->argv = calloc(n + 1, sizeof(char *));
	if (!w->argv)
		abort();
	for (i = 0; i < n; i++) {
		const char *s = json_plain_string(json_array_get(a, i), WORKLOAD_ARG_LEN_MAX);

		if (!s)
			return fail(
			    ret_err,
			    "argv[%zu]: must be a string without NUL bytes of at most %d bytes", i,
			    WORKLOAD_ARG_LEN_MAX);
		w->argv[i] = xstrdup(s);
		w->argc++;
	}

	a0 = w->argv[0];
	if (strchr(a0, '/')) {
		if (a0[0] != '/')
			return fail(ret_err,
				    "argv[0]: \"%s\" must be an absolute path or a bare "
				    "victim name",
				    a0);
		if (strlen(a0) >= PATH_MAX)
			return fail(ret_err, "argv[0]: path too long");
	} else if (!valid_name(a0, WORKLOAD_NAME_MAX)) {
		return fail(ret_err, "argv[0]: \"%s\" is not a valid victim name", a0);
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
		return fail(ret_err, "definition must be a JSON object");

	json_object_foreach((json_t *)doc, key, v)
	{
		size_t i;
		bool known = false;

		for (i = 0; i < ARRAY_SIZE(known_fields); i++)
			if (strcmp(key, known_fields[i]) == 0)
				known = true;
		if (!known)
			return fail(ret_err, "unknown field \"%.64s\"", key);
	}

	w = calloc(1, sizeof(*w));
	if (!w)
		abort();

	v = json_object_get(doc, "name");
	if (!v)
		return fail(ret_err, "name: missing");
	s = json_plain_string(v, WORKLOAD_NAME_MAX);
	if (!s || !valid_name(s, WORKLOAD_NAME_MAX))
		return fail(ret_err,
			    "name: must be a string of [a-z0-9_.-], at most %d bytes, "
			    "not starting with '.' or '-'",
			    WORKLOAD_NAME_MAX);
	w->name = xstrdup(s);

	v = json_object_get(doc, "description");
	if (v) {
		s = json_plain_string(v, WORKLOAD_DESCRIPTION_MAX);
		if (!s)
			return fail(ret_err, "description: must be a string of at most %d bytes",
				    WORKLOAD_DESCRIPTION_MAX);
		w->description = xstrdup(s);
	}

	v = json_object_get(doc, "argv");
	if (!v)
		return fail(ret_err, "argv: missing");
	r = parse_argv(v, w, ret_err);
	if (r < 0)
		return r;

	v = json_object_get(doc, "user");
	if (v) {
		s = json_plain_string(v, 32);
		if (!s || !valid_user_name(s))
			return fail(ret_err, "user: must be a user name");
		w->user = xstrdup(s);
	} else
		w->user = xstrdup("nobody");

	v = json_object_get(doc, "cpus");
	/* null is what workload_to_json writes for "not given": it must parse back */
	if (v && !json_is_null(v)) {
		s = json_plain_string(v, 256);
		if (!s || parse_cpu_list(s, &w->cpuset) < 0)
			return fail(ret_err,
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
		return fail(ret_err, "timeout_s: missing");
	if (!json_is_integer(v))
		return fail(ret_err, "timeout_s: must be an integer");
	t = json_integer_value(v);
	if (t < 1 || t > WORKLOAD_TIMEOUT_MAX)
		return fail(ret_err, "timeout_s: %lld out of range 1..%d", (long long)t,
			    WORKLOAD_TIMEOUT_MAX);
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
	free(r);
}

static void workload_registry_freep(struct workload_registry **r)
{
	workload_registry_free(*r);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_workload(const void *a, const void *b)
{
	const struct workload *x = *(const struct workload *const *)a;
	const struct workload *y = *(const struct workload *const *)b;

	return strcmp(x->name, y->name);
}

static void registry_add_error(struct workload_registry *r, char *msg)
{
	char **e = realloc(r->errors, (r->n_errors + 1) * sizeof(char *));

	if (!e)
		abort();
	r->errors = e;
	r->errors[r->n_errors++] = msg;
}

/* The *.json names in dir, sorted, NULL terminated; at most WORKLOAD_REGISTRY_MAX. */
static int list_definition_files(const char *dir, char ***ret, size_t *ret_n, bool *ret_truncated)
{
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_(strv_freep) char **names = NULL;
	size_t n = 0;
	bool truncated = false;
	struct dirent *de;

	d = opendir(dir);
	if (!d)
		return -errno;
	names = calloc(1, sizeof(char *));
	if (!names)
		abort();
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **p;

		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		if (n >= WORKLOAD_REGISTRY_MAX) {
			truncated = true;
			continue;
		}
		p = realloc(names, (n + 2) * sizeof(char *));
		if (!p)
			abort();
		names = p;
		names[n++] = xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (errno)
		return -errno;
	qsort(names, n, sizeof(char *), cmp_str);
	*ret = TAKE_PTR(names);
	*ret_n = n;
	*ret_truncated = truncated;
	return 0;
}

/* Parse one file into a workload, or a "file: reason" message. */
static int load_one(const char *dir, const char *file, struct workload **ret, char **ret_err)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *text = NULL, *err = NULL;
	struct workload *w = NULL;
	json_error_t jerr;
	json_t *doc;
	struct stat st;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		*ret_err = xasprintf("%s: %s", file, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_err = xasprintf("%s: not a regular file", file);
		return -EINVAL;
	}
	r = read_file_bounded(path, WORKLOAD_FILE_MAX, &text, NULL);
	if (r == -EFBIG) {
		*ret_err = xasprintf("%s: larger than %d bytes", file, WORKLOAD_FILE_MAX);
		return r;
	}
	if (r < 0) {
		*ret_err = xasprintf("%s: %s", file, strerror(-r));
		return r;
	}
	doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		*ret_err = xasprintf("%s: line %d: %s", file, jerr.line, jerr.text);
		return -EINVAL;
	}
	r = workload_from_json(doc, &w, &err);
	json_decref(doc);
	if (r < 0) {
		*ret_err = xasprintf("%s: %s", file, err ? err : strerror(-r));
		return r;
	}
	w->source = TAKE_PTR(path);
	*ret = w;
	return 0;
}

int workload_registry_load(const char *dir, struct workload_registry **ret)
{
	_cleanup_(workload_registry_freep) struct workload_registry *reg = NULL;
	_cleanup_(strv_freep) char **files = NULL;
	size_t n_files = 0, i, j;
	bool truncated = false;
	int r;

	r = list_definition_files(dir, &files, &n_files, &truncated);
	if (r < 0)
		return r;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		abort();
	atomic_init(&reg->refs, 1);
	reg->items = calloc(n_files ? n_files : 1, sizeof(struct workload *));
	if (!reg->items)
		abort();

	for (i = 0; i < n_files; i++) {
		struct workload *w = NULL;
		char *err = NULL;
		const struct workload *dup = NULL;

		if (load_one(dir, files[i], &w, &err) < 0) {
			registry_add_error(reg, err);
			continue;
		}
		for (j = 0; j < reg->n; j++)
			if (strcmp(reg->items[j]->name, w->name) == 0)
				dup = reg->items[j];
		if (dup) {
			registry_add_error(reg, xasprintf("%s: duplicate workload name \"%s\", "
							  "already defined in %s",
							  files[i], w->name, dup->source));
			workload_free(w);
			continue;
		}
		reg->items[reg->n++] = w;
	}
	if (truncated)
		registry_add_error(reg, xasprintf("more than %d definition files, the rest skipped",
						  WORKLOAD_REGISTRY_MAX));

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
