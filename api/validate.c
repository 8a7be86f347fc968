// SPDX-License-Identifier: MIT
#include "api/validate.h"
#include "daemon/service.h"
#include "daemon/unit.h"
#include "daemon/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define PID_MAX_VALUE INT32_MAX

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Every key of obj must be in allowed; prefix names the enclosing object in the message. */
static int check_fields(const json_t *obj, const char *const *allowed, const char *prefix,
			const char *allowed_text, struct api_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
	{
		if (!in_list(key, allowed))
			return api_error_set(err, 400, "unknown_field",
					     "unknown field \"%s%.*s\"; allowed: %s", prefix,
					     API_QUOTE_MAX, key, allowed_text);
	}
	return 0;
}

/* Optional integer field in [min, max]; *ret untouched when absent. */
static int opt_int(const json_t *obj, const char *key, long long min, long long max, long long *ret,
		   bool *ret_present, struct api_error *err)
{
	json_t *v = json_object_get(obj, key);

	*ret_present = false;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return api_error_set(err, 400, "bad_field",
				     "\"%s\" must be an integer from %lld to %lld", key, min, max);
	*ret = json_integer_value(v);
	*ret_present = true;
	return 0;
}

static bool workload_known(const struct workload_registry *r, const char *name)
{
	size_t i;

	if (!r)
		return false;
	for (i = 0; i < r->n; i++)
		if (r->items[i] && r->items[i]->name && strcmp(r->items[i]->name, name) == 0)
			return true;
	return false;
}

/* systemd unit names: [A-Za-z0-9:_.\@-], bounded, a unit type that has processes. */
static bool valid_unit(const char *s)
{
	return s && strlen(s) <= API_UNIT_MAX && unit_name_valid(s);
}

static bool service_known(const struct workload_registry *r, const char *name)
{
	return r && service_find(r->services, name) != NULL;
}

/*
 * The subject of a request: "workload" or "target". Copies the normalized
 * form into out, sets "subject", and tells whether it is a running target.
 */
static int parse_subject(const json_t *body, const struct workload_registry *workloads, json_t *out,
			 bool *ret_is_target, struct api_error *err)
{
	static const char *const target_fields[] = {"pid", "unit", NULL};
	json_t *workload = json_object_get(body, "workload");
	json_t *target = json_object_get(body, "target");
	json_t *service = json_object_get(body, "service");
	int r;

	if (!!workload + !!target + !!service > 1)
		return api_error_set(err, 400, "conflicting_fields",
				     "give one of \"workload\", \"service\" and \"target\"");
	if (!workload && !target && !service)
		return api_error_set(err, 400, "missing_field",
				     "give \"workload\": NAME (see GET /workloads), \"service\": "
				     "NAME (see GET /services) or \"target\": {\"pid\": N} or "
				     "{\"unit\": \"NAME.service\"}");

	if (service) {
		const char *name = json_string_value(service);
		_cleanup_free_ char *subject = NULL;

		if (!name || !valid_name(name, SERVICE_NAME_MAX))
			return api_error_set(err, 400, "bad_field",
					     "\"service\" must be a service name ([a-z0-9_.-], "
					     "at most %d characters)",
					     SERVICE_NAME_MAX);
		if (!service_known(workloads, name))
			return api_error_set(err, 400, "unknown_service",
					     "no service named \"%.*s\" is defined; GET /services "
					     "lists them",
					     API_QUOTE_MAX, name);
		subject = xasprintf("service:%s", name);
		json_object_set_new(out, "service", json_string(name));
		json_object_set_new(out, "subject", json_string(subject));
		*ret_is_target = true;
		return 0;
	}

	if (workload) {
		const char *name = json_string_value(workload);

		if (!name || !valid_name(name, WORKLOAD_NAME_MAX))
			return api_error_set(err, 400, "bad_field",
					     "\"workload\" must be a workload name ([a-z0-9_.-], "
					     "at most %d characters)",
					     WORKLOAD_NAME_MAX);
		if (!workload_known(workloads, name))
			return api_error_set(
			    err, 400, "unknown_workload",
			    "no workload named \"%.*s\" is registered; GET /workloads "
			    "lists them",
			    API_QUOTE_MAX, name);
		json_object_set_new(out, "workload", json_string(name));
		json_object_set_new(out, "subject", json_string(name));
		*ret_is_target = false;
		return 0;
	}

	if (!json_is_object(target))
		return api_error_set(err, 400, "bad_field",
				     "\"target\" must be an object: {\"pid\": N} or {\"unit\": "
				     "\"NAME.service\"}");
	r = check_fields(target, target_fields, "target.", "target.pid, target.unit", err);
	if (r < 0)
		return r;
	if (json_object_get(target, "pid") && json_object_get(target, "unit"))
		return api_error_set(err, 400, "conflicting_fields",
				     "give either \"target.pid\" or \"target.unit\", not both");

	if (json_object_get(target, "pid")) {
		long long pid = 0;
		bool present;
		char subject[32];

		r = opt_int(target, "pid", 1, PID_MAX_VALUE, &pid, &present, err);
		if (r < 0)
			return api_error_set(
			    err, 400, "bad_field",
			    "\"target.pid\" must be a positive integer process id");
		snprintf(subject, sizeof(subject), "pid:%lld", pid);
		json_object_set_new(out, "target", json_pack("{s:I}", "pid", (json_int_t)pid));
		json_object_set_new(out, "subject", json_string(subject));
	} else if (json_object_get(target, "unit")) {
		const char *unit = json_string_value(json_object_get(target, "unit"));
		_cleanup_free_ char *subject = NULL;

		if (!valid_unit(unit))
			return api_error_set(
			    err, 400, "bad_field",
			    "\"target.unit\" must be a systemd unit name ending in "
			    ".service or .scope, at most %d characters",
			    API_UNIT_MAX);
		subject = xasprintf("unit:%s", unit);
		json_object_set_new(out, "target", json_pack("{s:s}", "unit", unit));
		json_object_set_new(out, "subject", json_string(subject));
	} else {
		return api_error_set(err, 400, "missing_field",
				     "\"target\" needs \"pid\": N or \"unit\": \"NAME.service\"");
	}
	*ret_is_target = true;
	return 0;
}

/* "window_s": targets only, 1..600, default from the configuration. */
static int parse_window(const json_t *body, bool is_target, const struct request_defaults *d,
			json_t *out, struct api_error *err)
{
	long long window = d->window_s;
	bool present;
	int r;

	r = opt_int(body, "window_s", 1, API_WINDOW_MAX_S, &window, &present, err);
	if (r < 0)
		return r;
	/* a service's own window_s, else the configuration's, when the job starts */
	if (!present && json_object_get(out, "service"))
		return 0;
	if (!is_target) {
		if (present)
			return api_error_set(err, 400, "bad_field",
					     "\"window_s\" applies only to a running target; a "
					     "workload runs its fixed amount of work");
		return 0;
	}
	if (window < 1 || window > API_WINDOW_MAX_S)
		window = window < 1 ? 1 : API_WINDOW_MAX_S;
	json_object_set_new(out, "window_s", json_integer(window));
	return 0;
}

int validate_diagnose(const json_t *body, const struct request_defaults *d,
		      const struct workload_registry *workloads, json_t **ret,
		      struct api_error *err)
{
	static const char *const fields[] = {"workload",  "service", "target",   "reference",   "agent", "tau",
					     "max_depth", "window_s", "calibration", NULL};
	json_auto_t *out = json_object();
	long long reference = 0, depth = API_DEPTH_MAX;
	double tau = d->tau;
	const char *agent = "builtin";
	bool is_target = false, present, calibration = true;
	json_t *v;
	int r;

	if (!json_is_object(body))
		return api_error_set(err, 400, "bad_body", "the body must be a JSON object");
	r = check_fields(
	    body, fields, "",
	    "workload, service, target, reference, agent, tau, max_depth, window_s, calibration",
	    err);
	if (r < 0)
		return r;
	r = parse_subject(body, workloads, out, &is_target, err);
	if (r < 0)
		return r;

	r = opt_int(body, "reference", 1, INT64_MAX, &reference, &present, err);
	if (r < 0)
		return api_error_set(err, 400, "bad_field",
				     "\"reference\" must be a positive integer reference id (see "
				     "GET /references)");
	if (present)
		json_object_set_new(out, "reference", json_integer(reference));

	v = json_object_get(body, "agent");
	if (v) {
		agent = json_string_value(v);
		if (!agent || (strcmp(agent, "builtin") != 0 && strcmp(agent, "llm") != 0))
			return api_error_set(err, 400, "bad_field",
					     "\"agent\" must be \"builtin\" or \"llm\"");
		if (strcmp(agent, "llm") == 0 && !d->llm_configured)
			return api_error_set(
			    err, 400, "llm_not_configured",
			    "the llm agent is not configured on this host (llm_url "
			    "in argusd.conf); use \"agent\": \"builtin\"");
	}
	json_object_set_new(out, "agent", json_string(agent));

	v = json_object_get(body, "tau");
	if (v) {
		if (!json_is_number(v) || json_number_value(v) < API_TAU_MIN ||
		    json_number_value(v) > API_TAU_MAX)
			return api_error_set(err, 400, "bad_field",
					     "\"tau\" must be a number from %g to %g", API_TAU_MIN,
					     API_TAU_MAX);
		tau = json_number_value(v);
	}
	json_object_set_new(out, "tau", json_real(tau));

	r = opt_int(body, "max_depth", 1, API_DEPTH_MAX, &depth, &present, err);
	if (r < 0)
		return r;
	json_object_set_new(out, "max_depth", json_integer(depth));

	r = parse_window(body, is_target, d, out, err);
	if (r < 0)
		return r;

	v = json_object_get(body, "calibration");
	if (v) {
		if (!json_is_boolean(v))
			return api_error_set(err, 400, "bad_field",
					     "\"calibration\" must be true or false");
		calibration = json_is_true(v);
	}
	json_object_set_new(out, "calibration", json_boolean(calibration));

	*ret = TAKE_PTR(out);
	return 0;
}

int validate_reference_request(const json_t *body, const struct request_defaults *d,
			       const struct workload_registry *workloads, json_t **ret,
			       struct api_error *err)
{
	static const char *const fields[] = {"workload", "service", "target", "repeats", "window_s",
					     NULL};
	json_auto_t *out = json_object();
	long long repeats = d->repeats;
	bool is_target = false, present;
	int r;

	if (!json_is_object(body))
		return api_error_set(err, 400, "bad_body", "the body must be a JSON object");
	r = check_fields(body, fields, "", "workload, service, target, repeats, window_s", err);
	if (r < 0)
		return r;
	r = parse_subject(body, workloads, out, &is_target, err);
	if (r < 0)
		return r;
	r = opt_int(body, "repeats", API_REPEATS_MIN, API_REPEATS_MAX, &repeats, &present, err);
	if (r < 0)
		return r;
	if (repeats < API_REPEATS_MIN)
		repeats = API_REPEATS_MIN;
	if (repeats > API_REPEATS_MAX)
		repeats = API_REPEATS_MAX;
	json_object_set_new(out, "repeats", json_integer(repeats));
	r = parse_window(body, is_target, d, out, err);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(out);
	return 0;
}

int validate_id(const char *s, int64_t *ret)
{
	int64_t v = 0;
	size_t i;

	if (!s || !*s || s[0] == '0')
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (INT64_MAX - (s[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return 0;
}

static int check_query(const struct query_arg *args, size_t n, const char *const *allowed,
		       const char *allowed_text, struct api_error *err)
{
	size_t i, k;

	if (n > API_QUERY_ARGS_MAX)
		return api_error_set(err, 400, "bad_query", "at most %d query parameters",
				     API_QUERY_ARGS_MAX);
	for (i = 0; i < n; i++) {
		if (!in_list(args[i].key, allowed))
			return api_error_set(err, 400, "unknown_field",
					     "unknown query parameter \"%.*s\"; allowed: %s",
					     API_QUOTE_MAX, args[i].key, allowed_text);
		if (!args[i].value || !*args[i].value ||
		    strlen(args[i].value) > API_QUERY_VALUE_MAX)
			return api_error_set(err, 400, "bad_field",
					     "query parameter \"%s\" needs a value of 1 to %d "
					     "characters",
					     args[i].key, API_QUERY_VALUE_MAX);
		for (k = 0; k < i; k++)
			if (strcmp(args[k].key, args[i].key) == 0)
				return api_error_set(err, 400, "bad_field",
						     "query parameter \"%s\" given twice",
						     args[i].key);
	}
	return 0;
}

static int parse_limit(const char *s, int *ret, struct api_error *err)
{
	int64_t v;

	if (validate_id(s, &v) < 0 || v > API_LIST_MAX)
		return api_error_set(err, 400, "bad_field",
				     "\"limit\" must be an integer from 1 to %d", API_LIST_MAX);
	*ret = (int)v;
	return 0;
}

/* A subject as references store it: a workload name, "pid:N", "unit:NAME" or "service:NAME". */
static bool valid_subject(const char *s)
{
	int64_t pid;

	if (strncmp(s, "pid:", 4) == 0)
		return validate_id(s + 4, &pid) == 0 && pid <= PID_MAX_VALUE;
	if (strncmp(s, "unit:", 5) == 0)
		return valid_unit(s + 5);
	if (strncmp(s, "service:", 8) == 0)
		return valid_name(s + 8, SERVICE_NAME_MAX);
	return valid_name(s, WORKLOAD_NAME_MAX);
}

/* A time as jobs carry it, "2026-12-01T15:04:05Z", or a day, "2026-12-01" (its start). */
static bool valid_time(const char *s)
{
	static const char day[] = "dddd-dd-dd", full[] = "dddd-dd-ddTdd:dd:ddZ";
	size_t len = strlen(s), i;
	const char *form = len == strlen(day) ? day : len == strlen(full) ? full : NULL;

	if (!form)
		return false;
	for (i = 0; i < len; i++)
		if (form[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != form[i])
			return false;
	return true;
}

int validate_job_query(const struct query_arg *args, size_t n, struct job_filter *ret,
		       struct api_error *err)
{
	static const char *const allowed[] = {"state", "kind",	"workload", "subject", "since",
					      "until", "limit", "before",   NULL};
	static const char *const states[] = {"queued",	  "running",	 "succeeded", "failed",
					     "cancelled", "interrupted", NULL};
	static const char *const kinds[] = {"diagnose", "reference", NULL};
	struct job_filter f = {.limit = API_LIST_DEFAULT};
	size_t i;
	int r;

	r = check_query(args, n, allowed,
			"state, kind, workload, subject, since, until, limit, before", err);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		const char *k = args[i].key, *v = args[i].value;

		if (strcmp(k, "state") == 0) {
			if (!in_list(v, states))
				return api_error_set(err, 400, "bad_field",
						     "\"state\" must be one of queued, running, "
						     "succeeded, failed, cancelled, interrupted");
			f.state = v;
		} else if (strcmp(k, "kind") == 0) {
			if (!in_list(v, kinds))
				return api_error_set(err, 400, "bad_field",
						     "\"kind\" must be diagnose or reference");
			f.kind = v;
		} else if (strcmp(k, "workload") == 0) {
			if (!valid_name(v, WORKLOAD_NAME_MAX))
				return api_error_set(err, 400, "bad_field",
						     "\"workload\" must be a workload name "
						     "([a-z0-9_.-], at most %d characters)",
						     WORKLOAD_NAME_MAX);
			f.workload = v;
		} else if (strcmp(k, "subject") == 0) {
			if (!valid_subject(v))
				return api_error_set(err, 400, "bad_field",
						     "\"subject\" must be a workload name, "
						     "pid:N, unit:NAME.service or service:NAME");
			f.subject = v;
		} else if (strcmp(k, "since") == 0 || strcmp(k, "until") == 0) {
			if (!valid_time(v))
				return api_error_set(err, 400, "bad_field",
						     "\"%s\" must be a UTC time as jobs carry it "
						     "(2026-12-01T15:04:05Z) or a day (2026-12-01)",
						     k);
			*(k[0] == 's' ? &f.since : &f.until) = v;
		} else if (strcmp(k, "limit") == 0) {
			r = parse_limit(v, &f.limit, err);
			if (r < 0)
				return r;
		} else {
			if (validate_id(v, &f.before_id) < 0)
				return api_error_set(err, 400, "bad_field",
						     "\"before\" must be a positive job id (the "
						     "\"next_before\" of the previous page)");
		}
	}
	*ret = f;
	return 0;
}

int validate_job_get_query(const struct query_arg *args, size_t n, unsigned *ret_wait_s,
			   struct api_error *err)
{
	static const char *const allowed[] = {"wait", NULL};
	unsigned wait_s = 0;
	size_t i;
	int r;

	r = check_query(args, n, allowed, "wait", err);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		int64_t v = 0;

		/* 0 is allowed: "do not wait", as when the parameter is absent */
		if (!args[i].value || (strcmp(args[i].value, "0") != 0 &&
				       (validate_id(args[i].value, &v) < 0 || v > API_WAIT_MAX_S)))
			return api_error_set(err, 400, "bad_field",
					     "\"wait\" must be a number of seconds from 0 to %d",
					     API_WAIT_MAX_S);
		wait_s = (unsigned)v;
	}
	*ret_wait_s = wait_s;
	return 0;
}

int validate_reference_query(const struct query_arg *args, size_t n, const char **ret_subject,
			     int *ret_limit, struct api_error *err)
{
	static const char *const allowed[] = {"subject", "limit", NULL};
	const char *subject = NULL;
	int limit = API_LIST_DEFAULT;
	size_t i;
	int r;

	r = check_query(args, n, allowed, "subject, limit", err);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		if (strcmp(args[i].key, "subject") == 0) {
			if (!valid_subject(args[i].value))
				return api_error_set(err, 400, "bad_field",
						     "\"subject\" must be a workload name, "
						     "pid:N, unit:NAME.service or service:NAME");
			subject = args[i].value;
		} else {
			r = parse_limit(args[i].value, &limit, err);
			if (r < 0)
				return r;
		}
	}
	*ret_subject = subject;
	*ret_limit = limit;
	return 0;
}
