// SPDX-License-Identifier: MIT
/*
 * Service definitions and where each service is now (service.h): parsing
 * is pure; locating asks systemd for a unit's cgroup (unit.h) and reads
 * the cgroup's processes from the cgroup file system (cgroup.h) each time,
 * since a service's processes change under it.
 */
#include "daemon/service.h"
#include "daemon/cgroup.h"
#include "daemon/defs.h"
#include "daemon/sli.h"
#include "daemon/unit.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const known_fields[] = {"name",     "description", "unit", "cgroup",
					   "window_s", "user",	      "sli"};

void service_free(struct service *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->description);
	free(s->unit);
	free(s->cgroup);
	free(s->user);
	sli_free(s->sli);
	free(s->source);
	free(s);
}

static void service_freep(struct service **s)
{
	service_free(*s);
}

int service_from_json(const json_t *doc, struct service **ret, char **ret_err)
{
	_cleanup_(service_freep) struct service *s = NULL;
	const char *key, *str;
	json_t *v;
	int r;

	if (!json_is_object(doc))
		return set_error(ret_err, -EINVAL, "definition must be a JSON object");
	json_object_foreach ((json_t *)doc, key, v) {
		bool known = false;
		size_t i;

		for (i = 0; i < ARRAY_SIZE(known_fields); i++)
			known = known || strcmp(key, known_fields[i]) == 0;
		if (!known)
			return set_error(ret_err, -EINVAL,
					 "unknown field \"%.64s\" (fields: name, description, "
					 "unit, cgroup, window_s, user, sli)",
					 key);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		abort();

	v = json_object_get(doc, "name");
	if (!v)
		return set_error(ret_err, -EINVAL, "name: missing");
	str = json_plain_string(v, SERVICE_NAME_MAX);
	if (!str || !valid_name(str, SERVICE_NAME_MAX))
		return set_error(
		    ret_err, -EINVAL,
		    "name: must be a string of [a-z0-9_.-], at most %d bytes, not starting "
		    "with '.' or '-'",
		    SERVICE_NAME_MAX);
	s->name = xstrdup(str);

	v = json_object_get(doc, "description");
	if (v) {
		str = json_plain_string(v, SERVICE_DESCRIPTION_MAX);
		if (!str)
			return set_error(ret_err, -EINVAL,
					 "description: must be a string of at most %d bytes",
					 SERVICE_DESCRIPTION_MAX);
		s->description = xstrdup(str);
	}

	if (json_object_get(doc, "unit") && json_object_get(doc, "cgroup"))
		return set_error(ret_err, -EINVAL, "give either unit or cgroup, not both");
	v = json_object_get(doc, "unit");
	if (v) {
		str = json_plain_string(v, 256);
		if (!str || !unit_name_valid(str))
			return set_error(ret_err, -EINVAL,
					 "unit: must be a systemd unit name ending in .service or "
					 ".scope");
		s->unit = xstrdup(str);
	}
	v = json_object_get(doc, "cgroup");
	if (v) {
		str = json_plain_string(v, 512);
		if (!str || !cgroup_path_valid(str))
			return set_error(
			    ret_err, -EINVAL,
			    "cgroup: must be an absolute cgroup path such as \"/argus/cache\" "
			    "(no \".\" or \"..\" parts, at most 512 bytes)");
		s->cgroup = xstrdup(str);
	}
	if (!s->unit && !s->cgroup)
		return set_error(ret_err, -EINVAL,
				 "needs unit (a systemd unit) or cgroup (a cgroup path)");

	v = json_object_get(doc, "window_s");
	if (v) {
		json_int_t w = json_integer_value(v);

		if (!json_is_integer(v) || w < 1 || w > SERVICE_WINDOW_MAX_S)
			return set_error(ret_err, -EINVAL,
					 "window_s: must be an integer from 1 to %d",
					 SERVICE_WINDOW_MAX_S);
		s->window_s = (unsigned)w;
	}

	v = json_object_get(doc, "user");
	if (v) {
		str = json_plain_string(v, 32);
		if (!str || !valid_user_name(str))
			return set_error(ret_err, -EINVAL, "user: must be a user name");
		s->user = xstrdup(str);
	} else
		s->user = xstrdup("nobody");

	v = json_object_get(doc, "sli");
	if (v) {
		_cleanup_free_ char *err = NULL;

		r = sli_from_json(v, &s->sli, &err);
		if (r < 0)
			return set_error(ret_err, -EINVAL, "%s", err ?: "sli: invalid");
	}
	*ret = TAKE_PTR(s);
	return 0;
}

json_t *service_to_json(const struct service *s)
{
	json_t *o = json_object();

	if (!o)
		abort();
	json_object_set_new(o, "name", json_string(s->name));
	if (s->description)
		json_object_set_new(o, "description", json_string(s->description));
	if (s->unit)
		json_object_set_new(o, "unit", json_string(s->unit));
	if (s->cgroup)
		json_object_set_new(o, "cgroup", json_string(s->cgroup));
	if (s->window_s)
		json_object_set_new(o, "window_s", json_integer(s->window_s));
	json_object_set_new(o, "user", json_string(s->user));
	if (s->sli)
		json_object_set_new(o, "sli", sli_to_json(s->sli));
	if (s->source)
		json_object_set_new(o, "source", json_string(s->source));
	return o;
}

/* ---- the registry ---- */

void service_registry_free(struct service_registry *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		service_free(r->items[i]);
	free(r->items);
	for (i = 0; i < r->n_errors; i++)
		free(r->errors[i]);
	free(r->errors);
	free(r);
}

static void service_registry_freep(struct service_registry **r)
{
	service_registry_free(*r);
}

static int cmp_service(const void *a, const void *b)
{
	const struct service *x = *(const struct service *const *)a;
	const struct service *y = *(const struct service *const *)b;

	return strcmp(x->name, y->name);
}

/* defs_load's add: a parsed definition joins the registry unless its name is taken. */
static int registry_add(void *ctx, const json_t *doc, char *path, char **ret_err)
{
	struct service_registry *reg = ctx;
	struct service *s = NULL, **items;
	size_t i;
	int r;

	r = service_from_json(doc, &s, ret_err);
	if (r < 0)
		return r;
	for (i = 0; i < reg->n; i++)
		if (strcmp(reg->items[i]->name, s->name) == 0) {
			r = set_error(ret_err, -EEXIST,
				      "duplicate service name \"%s\", already defined in %s",
				      s->name, reg->items[i]->source);
			service_free(s);
			return r;
		}
	items = realloc(reg->items, (reg->n + 1) * sizeof(*items));
	if (!items)
		abort();
	reg->items = items;
	s->source = path;
	reg->items[reg->n++] = s;
	return 0;
}

static void registry_error(void *ctx, char *msg)
{
	struct service_registry *reg = ctx;

	strv_push(&reg->errors, &reg->n_errors, msg);
}

int service_registry_load(const char *dir, struct service_registry **ret)
{
	_cleanup_(service_registry_freep) struct service_registry *reg = calloc(1, sizeof(*reg));
	int r;

	if (!reg)
		abort();
	r = defs_load(dir, SERVICE_REGISTRY_MAX, SERVICE_FILE_MAX, reg, registry_add,
		      registry_error);
	if (r == -ENOENT) {
		/* argusd ships none: no directory is no service */
		*ret = TAKE_PTR(reg);
		return 0;
	}
	if (r < 0)
		return r;
	if (reg->n)
		qsort(reg->items, reg->n, sizeof(struct service *), cmp_service);
	*ret = TAKE_PTR(reg);
	return 0;
}

const struct service *service_find(const struct service_registry *r, const char *name)
{
	struct service key = {.name = (char *)name}, *k = &key, **found;

	if (!r || !name || r->n == 0)
		return NULL;
	found = bsearch(&k, r->items, r->n, sizeof(struct service *), cmp_service);
	return found ? *found : NULL;
}

/* ---- where a service is ---- */

void service_where_clear(struct service_where *w)
{
	if (!w)
		return;
	free(w->cgroup);
	free(w->dir);
	free(w->pids);
	*w = (struct service_where){};
}

int service_relist(struct service_where *w)
{
	pid_t *pids = calloc(SERVICE_PROCS_MAX, sizeof(pid_t));
	size_t n = 0;
	bool truncated = false;
	int r;

	if (!pids)
		abort();
	r = cgroup_procs(w->dir, pids, SERVICE_PROCS_MAX, &n, &truncated);
	if (r < 0) {
		free(pids);
		return r;
	}
	free(w->pids);
	w->pids = pids;
	w->n_pids = n;
	w->truncated = truncated;
	return 0;
}

int service_locate(const struct service *s, struct service_where *ret, char **ret_err)
{
	struct service_where w = {};
	int r;

	if (s->unit) {
		struct unit_info u = {};

		r = unit_resolve(s->unit, &u, ret_err);
		if (r < 0)
			return r;
		w.cgroup = TAKE_PTR(u.cgroup);
		w.main_pid = u.main_pid;
		w.via = u.via;
		unit_info_clear(&u);
	} else {
		w.cgroup = xstrdup(s->cgroup);
		w.via = "definition";
	}
	r = cgroup_dir(w.cgroup, &w.dir, &w.kind);
	if (r == -EINVAL) {
		/* only systemd's answer can be one: the definition's was checked when it was read
		 */
		set_error(ret_err, r,
			  "service %s: systemd named the cgroup \"%.128s\", which is not a cgroup "
			  "path argusd follows",
			  s->name, w.cgroup);
		service_where_clear(&w);
		return r;
	}
	if (r < 0) {
		*ret_err =
		    xasprintf("service %s: no cgroup hierarchy that tracks services is mounted "
			      "(neither cgroup2 nor cgroup v1 name=systemd)",
			      s->name);
		service_where_clear(&w);
		return r;
	}
	r = service_relist(&w);
	if (r == -ENOENT) {
		*ret_err = xasprintf("service %s: cgroup %s does not exist (is it running?)",
				     s->name, w.cgroup);
		service_where_clear(&w);
		return r;
	}
	if (r < 0) {
		*ret_err =
		    xasprintf("service %s: reading cgroup %s: %s", s->name, w.cgroup, strerror(-r));
		service_where_clear(&w);
		return r;
	}
	if (w.n_pids == 0) {
		*ret_err = xasprintf("service %s: cgroup %s has no process (is it running?)",
				     s->name, w.cgroup);
		service_where_clear(&w);
		return -ESRCH;
	}
	*ret = w;
	return 0;
}

json_t *service_where_to_json(const struct service_where *w)
{
	json_t *o = json_object(), *pids = json_array();
	size_t i;

	if (!o || !pids)
		abort();
	for (i = 0; i < w->n_pids && i < 64; i++)
		json_array_append_new(pids, json_integer(w->pids[i]));
	json_object_set_new(o, "cgroup", json_string(w->cgroup));
	json_object_set_new(o, "hierarchy", json_string(w->kind));
	json_object_set_new(o, "via", json_string(w->via));
	json_object_set_new(o, "main_pid",
			    w->main_pid > 0 ? json_integer(w->main_pid) : json_null());
	json_object_set_new(o, "processes", json_integer((json_int_t)w->n_pids));
	if (w->truncated)
		json_object_set_new(o, "processes_truncated", json_true());
	json_object_set_new(o, "pids", pids);
	return o;
}

json_t *service_registry_to_json(const struct service_registry *r, bool locate)
{
	json_t *o = json_object(), *ss = json_array(), *es = json_array();
	size_t i;

	if (!o || !ss || !es)
		abort();
	for (i = 0; r && i < r->n; i++) {
		json_t *d = service_to_json(r->items[i]);

		if (locate) {
			struct service_where w = {};
			_cleanup_free_ char *err = NULL;

			if (service_locate(r->items[i], &w, &err) < 0)
				json_object_set_new(d, "error", json_string(err ?: "not found"));
			else
				json_object_set_new(d, "now", service_where_to_json(&w));
			service_where_clear(&w);
		}
		json_array_append_new(ss, d);
	}
	for (i = 0; r && i < r->n_errors; i++)
		json_array_append_new(es, json_string(r->errors[i]));
	json_object_set_new(o, "services", ss);
	json_object_set_new(o, "errors", es);
	return o;
}
