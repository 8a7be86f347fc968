// SPDX-License-Identifier: MIT
/*
 * The routes of DESIGN.md. Each handler turns one request into one
 * response; validation is in validate.c, persistence in the store, long
 * work in the job queue. Store failures are logged by the store and answer
 * 500 here. One table at the end of the file names every route; dispatch,
 * the Allow header of a 405 and the route list of a 404 are derived from it.
 */
#include "api/routes.h"
#include "api/job_list_html.h"
#include "api/trace_html.h"
#include "daemon/agent.h"
#include "daemon/compare.h"
#include "daemon/diagnose.h"
#include "daemon/jobs.h"
#include "daemon/paths-config.h"
#include "daemon/probe.h"
#include "daemon/tree.h"
#include "daemon/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define ID_SEGMENT_MAX 32
/* where the owners of running targets are read */
#define PROC_ROOT "/proc"
#define CGROUP_ROOT "/sys/fs/cgroup"

static const unsigned status_codes[] = {API_STATUS_CODES};
_Static_assert(ARRAY_SIZE(status_codes) == API_N_STATUS - 1, "one slot for \"other\"");

void api_stats_count(struct api_stats *st, unsigned status)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(status_codes); i++)
		if (status_codes[i] == status)
			break;
	atomic_fetch_add(&st->by_status[i], 1);
}

void api_response_clear(struct api_response *r)
{
	json_decref(r->json);
	free(r->text);
	free(r->location);
	free(r->allow);
	*r = (struct api_response){};
}

void api_response_error(struct api_response *r, unsigned status, const char *code,
			const char *message)
{
	api_response_clear(r);
	r->status = status;
	r->json = api_error_json(code, message);
}

static void respond_api_error(struct api_response *r, const struct api_error *e)
{
	api_response_error(r, e->status, e->code, e->message);
}

static void respond_json(struct api_response *r, unsigned status, json_t *body)
{
	api_response_clear(r);
	r->status = status;
	r->json = body;
}

static void respond_internal(struct api_response *r, int err)
{
	_cleanup_free_ char *msg =
	    xasprintf("argusd could not answer (%s); see its log", strerror(err < 0 ? -err : err));

	api_response_error(r, 500, "internal", msg);
}

/* ---- matching ---- */

/* The methods routes are written for; a GET route answers HEAD as well. */
enum method {
	METHOD_GET,
	METHOD_POST,
	METHOD_DELETE,
	N_METHODS,
};

/* Each method as the Allow header names it; the header lists them in this order. */
static const char *const method_allow[N_METHODS] = {
    [METHOD_GET] = "GET, HEAD",
    [METHOD_POST] = "POST",
    [METHOD_DELETE] = "DELETE",
};

/* The method of a request; N_METHODS for one that no route is written for. */
static enum method method_of(const char *m)
{
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
		return METHOD_GET;
	if (strcmp(m, "POST") == 0)
		return METHOD_POST;
	if (strcmp(m, "DELETE") == 0)
		return METHOD_DELETE;
	return N_METHODS;
}

/*
 * In a route's path, one segment of 1 to ID_SEGMENT_MAX bytes, handed to the
 * handler: the first as its idstr, a second (two references compared) as
 * the request's id2.
 */
#define ID_PATTERN "{id}"
#define PATH_IDS_MAX 2

/*
 * Whether path has the shape of pattern: bytes equal but for each
 * ID_PATTERN, which takes one non-empty segment of at most ID_SEGMENT_MAX
 * bytes. On a match ret_ids holds those segments, copied into idbuf, NULL
 * past the pattern's; idbuf is scratch otherwise.
 */
static bool path_match(const char *pattern, const char *path,
		       char idbuf[static PATH_IDS_MAX][ID_SEGMENT_MAX + 1],
		       const char *ret_ids[static PATH_IDS_MAX])
{
	const char *ids[PATH_IDS_MAX] = {};
	size_t len, n = 0;

	while (*pattern) {
		if (strncmp(pattern, ID_PATTERN, strlen(ID_PATTERN)) == 0) {
			len = strcspn(path, "/");
			if (len == 0 || len > ID_SEGMENT_MAX || n == PATH_IDS_MAX)
				return false;
			memcpy(idbuf[n], path, len);
			idbuf[n][len] = 0;
			ids[n] = idbuf[n];
			n++;
			pattern += strlen(ID_PATTERN);
			path += len;
			continue;
		}
		if (*pattern != *path)
			return false;
		pattern++;
		path++;
	}
	if (*path)
		return false;
	memcpy(ret_ids, ids, sizeof(ids));
	return true;
}

/* ---- helpers ---- */

static struct request_defaults defaults_of(const struct api_ctx *ctx)
{
	struct request_defaults d = {
	    .tau = 3,
	    .window_s = 5,
	    .repeats = API_REPEATS_MIN,
	    .llm_configured = ctx->llm_configured,
	};

	if (ctx->cfg) {
		if (ctx->cfg->tau > 0)
			d.tau = ctx->cfg->tau;
		if (ctx->cfg->window_s > 0)
			d.window_s = ctx->cfg->window_s;
		if (ctx->cfg->reference_repeats > 0)
			d.repeats = ctx->cfg->reference_repeats;
	}
	return d;
}

static bool parse_path_id(const char *s, int64_t *ret, struct api_response *r, const char *what)
{
	_cleanup_free_ char *msg = NULL;

	if (validate_id(s, ret) == 0)
		return true;
	msg =
	    xasprintf("there is no %s \"%.*s\": ids are positive integers", what, API_QUOTE_MAX, s);
	api_response_error(r, 404, "not_found", msg);
	return false;
}

/* The caller may run a job on this request's running target, if it names one. */
static bool target_allowed(const struct api_request *req, const json_t *request,
			   struct api_response *r)
{
	json_t *target = json_object_get(request, "target");
	struct api_error e;

	if (!target || access_target_check(PROC_ROOT, CGROUP_ROOT, req->caller, target, &e) >= 0)
		return true;
	respond_api_error(r, &e);
	return false;
}

/* Queue a job for the caller and answer 202 with its Location. */
static void submit(const struct api_ctx *ctx, const struct api_request *req, const char *kind,
		   const json_t *request, struct api_response *r)
{
	const char *submitter = req->caller->submitter;
	unsigned quota = ctx->cfg ? ctx->cfg->queue_per_submitter : 0;
	_cleanup_free_ char *msg = NULL;
	int64_t id;
	int q;

	if (!ctx->jobs) {
		api_response_error(r, 503, "unavailable", "the job queue is not running");
		return;
	}
	q = jobs_submit_as(ctx->jobs, kind, request, submitter[0] ? submitter : NULL, quota, &id);
	switch (q) {
	case 0:
		break;
	case -EAGAIN:
		msg = xasprintf("the job queue is full (%u waiting); retry when GET /healthz shows "
				"room",
				jobs_queued(ctx->jobs));
		api_response_error(r, 429, "queue_full", msg);
		return;
	case -EDQUOT:
		msg = xasprintf("%s already has %u job(s) waiting, the most one submitter may "
				"(queue_per_submitter); retry when one has started",
				submitter, quota);
		api_response_error(r, 429, "submitter_quota", msg);
		return;
	case -ESHUTDOWN:
		api_response_error(
		    r, 503, "shutting_down",
		    "argusd is stopping and takes no new jobs; retry after it restarts");
		r->retry_after = 10;
		return;
	default:
		respond_internal(r, q);
		return;
	}
	respond_json(r, 202, json_pack("{s:I,s:s}", "id", (json_int_t)id, "state", "queued"));
	r->location = xasprintf("/jobs/%" PRId64, id);
}

/* ---- handlers ---- */

/*
 * Every handler has this shape, whatever it uses of it; idstr is the
 * route's {id} segment, NULL on routes without one.
 */
typedef void route_handler(const struct api_ctx *ctx, struct api_stats *st,
			   const struct api_request *req, const char *idstr,
			   struct api_response *r);

/*
 * The registry requests are checked against now, in *ret: live's, held
 * (the return value, for workload_registry_free) while it is used, or the
 * fixed one.
 */
static struct workload_registry *registry_hold(const struct api_ctx *ctx,
					       const struct workload_registry **ret)
{
	struct workload_registry *held = ctx->live ? workloads_live_get(ctx->live) : NULL;

	*ret = held ? held : ctx->workloads;
	return held;
}

/* The body of a POST, validated by check against the registry in use now. */
static int validate_body(const struct api_ctx *ctx, const struct api_request *req,
			 int (*check)(const json_t *, const struct request_defaults *,
				      const struct workload_registry *, json_t **,
				      struct api_error *),
			 json_t **ret_body, json_t **ret_request, struct api_error *e)
{
	struct request_defaults d = defaults_of(ctx);
	const struct workload_registry *reg;
	struct workload_registry *held;
	int q;

	q = api_parse_body(req->body, req->body_len, ret_body, e);
	if (q < 0)
		return q;
	held = registry_hold(ctx, &reg);
	q = check(*ret_body, &d, reg, ret_request, e);
	workload_registry_free(held);
	return q;
}

static void post_diagnose(const struct api_ctx *ctx, struct api_stats *st,
			  const struct api_request *req, const char *idstr, struct api_response *r)
{
	json_auto_t *body = NULL, *request = NULL;
	struct api_error e;
	json_t *ref;
	int q;

	if (validate_body(ctx, req, validate_diagnose, &body, &request, &e) < 0) {
		respond_api_error(r, &e);
		return;
	}
	if (!target_allowed(req, request, r))
		return;

	ref = json_object_get(request, "reference");
	if (ref) {
		q = store_reference_exists(ctx->store, json_integer_value(ref));
		if (q == -ENOENT) {
			api_error_set(&e, 400, "unknown_reference",
				      "there is no reference %" JSON_INTEGER_FORMAT
				      "; GET /references lists them",
				      json_integer_value(ref));
			respond_api_error(r, &e);
			return;
		}
	} else {
		const char *subject = json_string_value(json_object_get(request, "subject"));
		int64_t id;

		q = store_reference_latest(ctx->store, subject, &id);
		if (q == -ENOENT) {
			api_error_set(
			    &e, 409, "no_reference",
			    "no reference is recorded for \"%.*s\"; POST /references with "
			    "the same workload or target first (on a quiet system), or "
			    "name one with \"reference\"",
			    API_QUOTE_MAX, subject);
			respond_api_error(r, &e);
			return;
		}
		if (q >= 0)
			json_object_set_new(request, "reference", json_integer(id));
	}
	if (q < 0) {
		respond_internal(r, q);
		return;
	}

	submit(ctx, req, "diagnose", request, r);
}

static void post_reference(const struct api_ctx *ctx, struct api_stats *st,
			   const struct api_request *req, const char *idstr, struct api_response *r)
{
	json_auto_t *body = NULL, *request = NULL;
	struct api_error e;

	/* later diagnoses of the subject are scored against it: not for everyone to set */
	if (!access_may_record_reference(req->caller)) {
		api_response_error(r, 403, "admin_only",
				   "references are recorded by root or a member of the api group "
				   "on the control socket, or with the token over TCP");
		return;
	}
	if (validate_body(ctx, req, validate_reference_request, &body, &request, &e) < 0) {
		respond_api_error(r, &e);
		return;
	}
	if (!target_allowed(req, request, r))
		return;
	submit(ctx, req, "reference", request, r);
}

/* The jobs GET /jobs's query asks for, or NULL with the refusal in r. */
static json_t *job_list_of(const struct api_ctx *ctx, const struct api_request *req,
			   struct api_response *r)
{
	struct job_filter f;
	struct api_error e;
	json_t *list = NULL;
	int q;

	if (validate_job_query(req->args, req->n_args, &f, &e) < 0) {
		respond_api_error(r, &e);
		return NULL;
	}
	q = store_job_list(ctx->store, &f, &list);
	if (q < 0) {
		respond_internal(r, q);
		return NULL;
	}
	return list;
}

static void get_jobs(const struct api_ctx *ctx, struct api_stats *st, const struct api_request *req,
		     const char *idstr, struct api_response *r)
{
	json_t *list = job_list_of(ctx, req, r);

	if (list)
		respond_json(r, 200, list);
}

/* GET /: the recent jobs as a page for a browser, taking GET /jobs's filters (50 by default). */
static void get_index(const struct api_ctx *ctx, struct api_stats *st,
		      const struct api_request *req, const char *idstr, struct api_response *r)
{
	json_auto_t *list = job_list_of(ctx, req, r);

	if (!list)
		return;
	api_response_clear(r);
	r->text = job_list_render_html(list);
	if (!r->text) {
		respond_internal(r, -ENOMEM);
		return;
	}
	r->status = 200;
	r->content_type = "text/html; charset=utf-8";
}

static void job_not_found(struct api_response *r, int64_t id)
{
	_cleanup_free_ char *msg =
	    xasprintf("there is no job %" PRId64 "; GET /jobs lists them", id);

	api_response_error(r, 404, "not_found", msg);
}

/* A store lookup of job id that failed (q < 0) is answered: 404 when there is no such job, else 500. */
static bool job_lookup_failed(struct api_response *r, int q, int64_t id)
{
	if (q == -ENOENT)
		job_not_found(r, id);
	else if (q < 0)
		respond_internal(r, q);
	return q < 0;
}

static void get_job(const struct api_ctx *ctx, struct api_stats *st, const struct api_request *req,
		    const char *idstr, struct api_response *r)
{
	json_t *job = NULL;
	struct api_error e;
	unsigned wait_s;
	bool final;
	int64_t id;
	int q;

	if (!parse_path_id(idstr, &id, r, "job"))
		return;
	if (validate_job_get_query(req->args, req->n_args, &wait_s, &e) < 0) {
		respond_api_error(r, &e);
		return;
	}
	q = store_job_get(ctx->store, id, &job);
	if (job_lookup_failed(r, q, id))
		return;
	final = store_state_final(json_string_value(json_object_get(job, "state")));
	respond_json(r, 200, job);
	/* a job that has ended is answered at once; one that has not may be waited on */
	r->immutable = final;
	r->wait_s = final ? 0 : wait_s;
}

static void get_trace(const struct api_ctx *ctx, struct api_stats *st,
		      const struct api_request *req, const char *idstr, struct api_response *r)
{
	json_t *trace = NULL, *vectors = NULL, *job = NULL;
	char state[16];
	bool html = false, final;
	int64_t id;
	size_t i;
	int q;

	if (!parse_path_id(idstr, &id, r, "job"))
		return;
	/* ?format=html: the trace page for a browser */
	for (i = 0; i < req->n_args; i++) {
		if (strcmp(req->args[i].key, "format") != 0) {
			api_response_error(r, 400, "unknown_field",
					   "the trace takes one query parameter: format=json|html");
			return;
		}
		if (req->args[i].value && strcmp(req->args[i].value, "html") == 0)
			html = true;
		else if (!req->args[i].value || strcmp(req->args[i].value, "json") != 0) {
			api_response_error(r, 400, "bad_field", "format: json or html");
			return;
		}
	}
	/*
	 * The state before the trace: a job that had ended then had written its
	 * last step, so the trace read next is whole and may be kept.
	 */
	final = store_job_state(ctx->store, id, state, sizeof(state)) >= 0 &&
		store_state_final(state);
	q = store_trace_get(ctx->store, id, &trace);
	if (job_lookup_failed(r, q, id))
		return;
	if (html) {
		q = store_job_get(ctx->store, id, &job);
		if (q >= 0)
			r->text = trace_render_html(job, trace);
		json_decref(job);
		json_decref(trace);
		if (!r->text) {
			respond_internal(r, q < 0 ? q : -ENOMEM);
			return;
		}
		r->status = 200;
		r->content_type = "text/html; charset=utf-8";
		r->immutable = final;
		return;
	}
	/* the measured vectors (PMV by level) travel with the steps */
	if (store_vectors_get(ctx->store, id, &vectors) >= 0)
		json_object_set_new(trace, "vectors", vectors);
	respond_json(r, 200, trace);
	r->immutable = final;
}

static void delete_job(const struct api_ctx *ctx, struct api_stats *st,
		       const struct api_request *req, const char *idstr, struct api_response *r)
{
	json_t *job = NULL;
	const char *submitter;
	int64_t id;
	int q;

	if (!parse_path_id(idstr, &id, r, "job"))
		return;
	if (!ctx->jobs) {
		api_response_error(r, 503, "unavailable", "the job queue is not running");
		return;
	}
	q = store_job_get(ctx->store, id, &job);
	if (job_lookup_failed(r, q, id))
		return;
	submitter = json_string_value(json_object_get(job, "submitter"));
	if (!access_may_cancel(req->caller, submitter)) {
		_cleanup_free_ char *msg =
		    xasprintf("job %" PRId64 " was submitted by %s; only its submitter, root or a "
			      "member of the api group may cancel it",
			      id, submitter ? submitter : "an earlier argusd");

		json_decref(job);
		api_response_error(r, 403, "not_your_job", msg);
		return;
	}
	json_decref(TAKE_PTR(job));
	q = jobs_cancel(ctx->jobs, id);
	if (q == -ENOENT) {
		job_not_found(r, id);
		return;
	}
	if (q == -EALREADY) {
		_cleanup_free_ char *msg =
		    xasprintf("job %" PRId64 " has already finished; nothing to cancel", id);

		api_response_error(r, 409, "already_finished", msg);
		return;
	}
	if (q < 0) {
		respond_internal(r, q);
		return;
	}
	q = store_job_get(ctx->store, id, &job);
	if (q < 0) {
		respond_internal(r, q);
		return;
	}
	respond_json(r, 200, job);
}

static void get_references(const struct api_ctx *ctx, struct api_stats *st,
			   const struct api_request *req, const char *idstr, struct api_response *r)
{
	const char *subject;
	struct api_error e;
	json_t *list = NULL;
	int limit, q;

	if (validate_reference_query(req->args, req->n_args, &subject, &limit, &e) < 0) {
		respond_api_error(r, &e);
		return;
	}
	q = store_reference_list(ctx->store, subject, limit, &list);
	if (q < 0) {
		respond_internal(r, q);
		return;
	}
	respond_json(r, 200, list);
}

static void get_reference(const struct api_ctx *ctx, struct api_stats *st,
			  const struct api_request *req, const char *idstr, struct api_response *r)
{
	json_t *ref = NULL;
	int64_t id;
	int q;

	if (!parse_path_id(idstr, &id, r, "reference"))
		return;
	q = store_reference_get(ctx->store, id, &ref);
	if (q == -ENOENT) {
		_cleanup_free_ char *msg =
		    xasprintf("there is no reference %" PRId64 "; GET /references lists them", id);

		api_response_error(r, 404, "not_found", msg);
		return;
	}
	if (q < 0) {
		respond_internal(r, q);
		return;
	}
	respond_json(r, 200, ref);
}

/* GET /references/A/compare/B: the metrics whose runs moved beyond their spread, A to B. */
static void get_compare(const struct api_ctx *ctx, struct api_stats *st,
			const struct api_request *req, const char *idstr, struct api_response *r)
{
	struct mvec *runs[2] = {};
	size_t n[2] = {}, i, k;
	struct calib_params p;
	json_t *refs[2] = {}, *out = NULL;
	int64_t id[2];
	int q = 0;

	if (!parse_path_id(idstr, &id[0], r, "reference") ||
	    !parse_path_id(req->id2, &id[1], r, "reference"))
		return;
	calib_params_default(&p);
	/* the comparison's "mean" and "spread" are the runs' mean and sample sd, tau of them */
	p.robust = false;
	p.false_flag_rate = 0;
	if (ctx->cfg && ctx->cfg->tau > 0)
		p.tau = ctx->cfg->tau;
	for (i = 0; i < req->n_args; i++) {
		char *end = NULL;
		double v;

		if (strcmp(req->args[i].key, "tau") != 0) {
			api_response_error(r, 400, "unknown_field",
					   "a comparison takes one query parameter: tau");
			return;
		}
		v = req->args[i].value ? strtod(req->args[i].value, &end) : NAN;
		if (!end || end == req->args[i].value || *end || !(v >= API_TAU_MIN && v <= API_TAU_MAX)) {
			api_response_error(r, 400, "bad_field", "tau: a number from 0.5 to 100");
			return;
		}
		p.tau = v;
	}
	for (k = 0; k < 2 && q >= 0; k++) {
		q = store_reference_get(ctx->store, id[k], &refs[k]);
		if (q == -ENOENT) {
			_cleanup_free_ char *msg = xasprintf(
			    "there is no reference %" PRId64 "; GET /references lists them", id[k]);

			api_response_error(r, 404, "not_found", msg);
			goto out;
		}
		if (q >= 0)
			q = store_reference_runs(ctx->store, id[k], &runs[k], &n[k]);
	}
	if (q < 0) {
		respond_internal(r, q);
		goto out;
	}
	out = compare_references(&p, runs[0], n[0], runs[1], n[1]);
	if (!out) {
		respond_internal(r, -ENOMEM);
		goto out;
	}
	/* what each was recorded for and on: a comparison across subjects is the caller's choice */
	for (k = 0; k < 2; k++) {
		static const char *const keys[] = {"subject", "kernel", "tree_version", "created"};
		json_t *about = json_pack("{s:I}", "id", (json_int_t)id[k]);
		size_t f;

		for (f = 0; f < ARRAY_SIZE(keys); f++)
			json_object_set(about, keys[f], json_object_get(refs[k], keys[f]) ?: json_null());
		json_object_set_new(about, "runs", json_integer((json_int_t)n[k]));
		json_object_set_new(out, k ? "b" : "a", about);
	}
	respond_json(r, 200, out);
out:
	for (k = 0; k < 2; k++) {
		json_decref(refs[k]);
		mvec_array_free(runs[k], n[k]);
	}
}

static void delete_reference(const struct api_ctx *ctx, struct api_stats *st,
			     const struct api_request *req, const char *idstr,
			     struct api_response *r)
{
	_cleanup_free_ char *msg = NULL;
	int64_t id;
	int q;

	if (!parse_path_id(idstr, &id, r, "reference"))
		return;
	if (!req->caller->admin) {
		api_response_error(r, 403, "admin_only",
				   "references are deleted by root or a member of the api group, "
				   "on the control socket");
		return;
	}
	q = store_reference_delete(ctx->store, id);
	switch (q) {
	case 0:
		respond_json(r, 200, json_pack("{s:I,s:b}", "id", (json_int_t)id, "deleted", 1));
		return;
	case -ENOENT:
		msg =
		    xasprintf("there is no reference %" PRId64 "; GET /references lists them", id);
		api_response_error(r, 404, "not_found", msg);
		return;
	case -EBUSY:
		msg = xasprintf("reference %" PRId64 " is named by a queued or running job; cancel "
				"it or wait until it ends",
				id);
		api_response_error(r, 409, "reference_in_use", msg);
		return;
	default:
		respond_internal(r, q);
	}
}

static void get_workloads(const struct api_ctx *ctx, struct api_stats *st,
			  const struct api_request *req, const char *idstr, struct api_response *r)
{
	const struct workload_registry *reg;
	struct workload_registry *held = registry_hold(ctx, &reg);
	json_t *j;

	if (!reg) {
		respond_json(r, 200, json_pack("{s:[],s:[]}", "workloads", "errors"));
		return;
	}
	j = workload_registry_to_json(reg);
	workload_registry_free(held);
	if (!j) {
		respond_internal(r, -ENOMEM);
		return;
	}
	respond_json(r, 200, j);
}

/*
 * Where the services are asks systemd (D-Bus, up to 5 s a service when it
 * does not answer) and reads cgroup.procs: one request at a time does it
 * (locating), and its answer serves the requests of the next
 * SERVICES_FRESH_NS, and those that come while another request is
 * locating, so that a slow systemd holds one of the API's threads, not all.
 */
#define SERVICES_FRESH_NS (2 * 1000000000ull)

static struct {
	pthread_mutex_t locating, lock; /* lock guards the rest */
	/* of the registry the answer was built from (workload_registry_load's; 0, none: not kept) */
	unsigned long generation;
	uint64_t at_ns;
	json_t *answer;
} services_located = {.locating = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER};

/* A copy of the last answer for registry generation gen (fresh only, or any age); NULL if none. */
static json_t *services_cached(unsigned long gen, bool fresh)
{
	json_t *j = NULL;

	pthread_mutex_lock(&services_located.lock);
	if (gen && services_located.answer && services_located.generation == gen &&
	    (!fresh || now_mono_ns() - services_located.at_ns <= SERVICES_FRESH_NS))
		j = json_deep_copy(services_located.answer);
	pthread_mutex_unlock(&services_located.lock);
	return j;
}

/* Locate the services of reg now and keep the answer. Called with locating held. */
static json_t *services_locate(const struct workload_registry *reg, unsigned long gen)
{
	json_t *j = service_registry_to_json(reg ? reg->services : NULL, true);

	pthread_mutex_lock(&services_located.lock);
	json_decref(services_located.answer);
	services_located.answer = json_deep_copy(j);
	services_located.generation = gen;
	services_located.at_ns = now_mono_ns();
	pthread_mutex_unlock(&services_located.lock);
	return j;
}

/* The service definitions, each with where it is now (its cgroup and processes) or why not. */
static void get_services(const struct api_ctx *ctx, struct api_stats *st,
			 const struct api_request *req, const char *idstr, struct api_response *r)
{
	const struct workload_registry *reg;
	struct workload_registry *held = registry_hold(ctx, &reg);
	unsigned long gen = reg ? reg->generation : 0;
	json_t *j = services_cached(gen, true);

	if (j)
		goto done;
	if (pthread_mutex_trylock(&services_located.locating) != 0) {
		/* another request is locating: the last answer, whatever its age, else its turn */
		j = services_cached(gen, false);
		if (j)
			goto done;
		pthread_mutex_lock(&services_located.locating);
		j = services_cached(gen, true);
	}
	if (!j)
		j = services_locate(reg, gen);
	pthread_mutex_unlock(&services_located.locating);
done:
	workload_registry_free(held);
	respond_json(r, 200, j);
}

static void get_tree(const struct api_ctx *ctx, struct api_stats *st, const struct api_request *req,
		     const char *idstr, struct api_response *r)
{
	json_t *j;

	if (!ctx->tree) {
		api_response_error(r, 503, "tree_unavailable",
				   "the code-path tree is not loaded yet; retry shortly");
		r->retry_after = 2;
		return;
	}
	j = tree_to_json(ctx->tree);
	/*
	 * the order resolution tried the backends in, beside each node's choice;
	 * and what its hooks attach here (a stand-in where a tracepoint is missing)
	 */
	if (!j ||
	    json_object_set_new(j, "backends",
				backend_order_to_json(&ctx->tree->backends)) < 0 ||
	    probe_tree_programs_here(ctx->tree, json_object_get(j, "nodes")) < 0) {
		json_decref(j);
		respond_internal(r, -ENOMEM);
		return;
	}
	respond_json(r, 200, j);
	/* resolved once, at start: the same answer for the life of the process */
	r->immutable = true;
}

static double uptime_s(const struct api_ctx *ctx)
{
	uint64_t now = now_mono_ns();

	return now > ctx->started_mono_ns ? (now - ctx->started_mono_ns) / 1e9 : 0;
}

static void get_healthz(const struct api_ctx *ctx, struct api_stats *st,
			const struct api_request *req, const char *idstr, struct api_response *r)
{
	unsigned queued = ctx->jobs ? jobs_queued(ctx->jobs) : 0;
	bool running = ctx->jobs ? jobs_busy(ctx->jobs) : false;

	respond_json(r, 200,
		     json_pack("{s:s,s:I,s:{s:i,s:i},s:{s:i},s:s?}", "status", "ok", "uptime_s",
			       (json_int_t)uptime_s(ctx), "queue", "queued", (int)queued, "running",
			       running ? 1 : 0, "store", "schema_version",
			       ctx->store ? store_schema_version(ctx->store) : 0, "kernel",
			       ctx->kernel_release));
}

/* Diagnoses by verdict and node named, and job durations by kind, since start. */
static void write_result_metrics(FILE *f, struct jobs *jobs)
{
	static const char *const kinds[] = {"diagnose", "reference"};
	json_auto_t *by_verdict = jobs_diagnoses(jobs);
	const char *verdict, *node;
	json_t *nodes, *n;
	size_t k, i;

	fputs("# HELP argusd_diagnoses_total Diagnoses finished since start, by verdict and the "
	      "node named (empty: none).\n"
	      "# TYPE argusd_diagnoses_total counter\n",
	      f);
	json_object_foreach (by_verdict, verdict, nodes)
		json_object_foreach (nodes, node, n)
			fprintf(f, "argusd_diagnoses_total{verdict=\"%s\",node=\"%s\"} %" JSON_INTEGER_FORMAT
				   "\n",
				verdict, node, json_integer_value(n));
	fputs("# HELP argusd_job_duration_seconds How long finished jobs ran, by kind.\n"
	      "# TYPE argusd_job_duration_seconds histogram\n",
	      f);
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		unsigned long le[JOBS_DURATION_BOUNDS], count;
		double sum;

		jobs_durations(jobs, kinds[k], le, &count, &sum);
		for (i = 0; i < JOBS_DURATION_BOUNDS; i++)
			fprintf(f, "argusd_job_duration_seconds_bucket{kind=\"%s\",le=\"%g\"} %lu\n",
				kinds[k], jobs_duration_bounds[i], le[i]);
		fprintf(f, "argusd_job_duration_seconds_bucket{kind=\"%s\",le=\"+Inf\"} %lu\n",
			kinds[k], count);
		fprintf(f, "argusd_job_duration_seconds_sum{kind=\"%s\"} %.3f\n", kinds[k], sum);
		fprintf(f, "argusd_job_duration_seconds_count{kind=\"%s\"} %lu\n", kinds[k], count);
	}
	{
		unsigned long le[JOBS_OVERHEAD_BOUNDS], count;
		double sum;

		jobs_overhead(jobs, le, &count, &sum);
		fputs("# HELP argusd_probe_overhead_ratio The probe's share of the run, per level "
		      "of finished diagnoses measured with probe_stats on.\n"
		      "# TYPE argusd_probe_overhead_ratio histogram\n",
		      f);
		for (i = 0; i < JOBS_OVERHEAD_BOUNDS; i++)
			fprintf(f, "argusd_probe_overhead_ratio_bucket{le=\"%g\"} %lu\n",
				jobs_overhead_bounds[i], le[i]);
		fprintf(f, "argusd_probe_overhead_ratio_bucket{le=\"+Inf\"} %lu\n", count);
		fprintf(f, "argusd_probe_overhead_ratio_sum %.6f\n", sum);
		fprintf(f, "argusd_probe_overhead_ratio_count %lu\n", count);
	}
}

struct stale_count {
	const struct api_ctx *ctx;
	unsigned long fresh, stale;
};

static void count_reference(const json_t *ref, void *ud)
{
	struct stale_count *c = ud;
	const struct api_ctx *ctx = c->ctx;
	_cleanup_free_ char *why = diag_reference_stale(
	    ref, json_integer_value(json_object_get(ref, "id")), ctx->kernel_release ?: "",
	    ctx->tree, ctx->cfg && ctx->cfg->probe_stats);

	if (why)
		c->stale++;
	else
		c->fresh++;
}

/* The host's pace read last between jobs on each CPU (usual_pace.h); nothing before the first. */
static void write_host_pace(FILE *f, const struct api_ctx *ctx)
{
	/* the readings' CPUs are those of argusd's affinity (a cpu_set_t) */
	_cleanup_free_ double *ns = malloc(CPU_SETSIZE * sizeof(*ns));
	_cleanup_free_ int *cpus = malloc(CPU_SETSIZE * sizeof(*cpus));
	size_t n = 0, i;

	if (!ns || !cpus || !ctx->hostname ||
	    store_pace_latest(ctx->store, ctx->hostname, cpus, ns, CPU_SETSIZE, &n) < 0 || n == 0)
		return;
	fputs("# HELP argusd_host_pace_seconds The host's pace: the time of a load of argusd's "
	      "fixed memory loop, as last read between jobs on each CPU (higher: slower cores).\n"
	      "# TYPE argusd_host_pace_seconds gauge\n",
	      f);
	for (i = 0; i < n; i++)
		fprintf(f, "argusd_host_pace_seconds{cpu=\"%d\"} %.4g\n", cpus[i], ns[i] / 1e9);
}

/* References stored, by whether a diagnosis here could use them; LLM requests and tokens. */
static void write_store_and_agent_metrics(FILE *f, const struct api_ctx *ctx)
{
	struct stale_count refs = {.ctx = ctx};
	struct agent_llm_usage u;

	if (store_reference_each(ctx->store, count_reference, &refs) >= 0)
		fprintf(f,
			"# HELP argusd_references References stored, by whether they are stale (from "
			"another kernel, tree or probe_stats: a diagnosis refuses them).\n"
			"# TYPE argusd_references gauge\n"
			"argusd_references{stale=\"false\"} %lu\n"
			"argusd_references{stale=\"true\"} %lu\n",
			refs.fresh, refs.stale);
	write_host_pace(f, ctx);
	agent_llm_usage(&u);
	fprintf(f,
		"# HELP argusd_llm_requests_total Requests of the LLM agent to its endpoint since "
		"start, by outcome.\n"
		"# TYPE argusd_llm_requests_total counter\n"
		"argusd_llm_requests_total{outcome=\"ok\"} %lu\n"
		"argusd_llm_requests_total{outcome=\"failed\"} %lu\n"
		"# HELP argusd_llm_tokens_total Tokens of the LLM agent's requests since start: "
		"as the endpoint reported them, or estimated where it reported none.\n"
		"# TYPE argusd_llm_tokens_total counter\n"
		"argusd_llm_tokens_total{kind=\"prompt\"} %llu\n"
		"argusd_llm_tokens_total{kind=\"completion\"} %llu\n"
		"argusd_llm_tokens_total{kind=\"estimated\"} %llu\n",
		u.requests_ok, u.requests_failed, u.prompt_tokens, u.completion_tokens,
		u.estimated_tokens);
}

static void get_metrics(const struct api_ctx *ctx, struct api_stats *st,
			const struct api_request *req, const char *idstr, struct api_response *r)
{
	unsigned long ok = 0, failed = 0, cancelled = 0, interrupted = 0;
	_cleanup_fclose_ FILE *f = NULL;
	char *text = NULL;
	size_t len = 0, i;

	f = open_memstream(&text, &len);
	if (!f) {
		respond_internal(r, -errno);
		return;
	}
	if (ctx->jobs)
		jobs_counts(ctx->jobs, &ok, &failed, &cancelled, &interrupted);

	fputs("# HELP argusd_up Whether argusd answers (always 1 when scraped).\n"
	      "# TYPE argusd_up gauge\n"
	      "argusd_up 1\n",
	      f);
	fprintf(f,
		"# HELP argusd_jobs_queued Jobs waiting to run.\n"
		"# TYPE argusd_jobs_queued gauge\n"
		"argusd_jobs_queued %u\n",
		ctx->jobs ? jobs_queued(ctx->jobs) : 0);
	fprintf(f,
		"# HELP argusd_job_running Whether a job is running now (0 or 1).\n"
		"# TYPE argusd_job_running gauge\n"
		"argusd_job_running %d\n",
		ctx->jobs && jobs_busy(ctx->jobs) ? 1 : 0);
	fprintf(f,
		"# HELP argusd_jobs_finished_total Jobs finished since start, by final state "
		"(interrupted: found cut off by the last stop when this one started).\n"
		"# TYPE argusd_jobs_finished_total counter\n"
		"argusd_jobs_finished_total{state=\"succeeded\"} %lu\n"
		"argusd_jobs_finished_total{state=\"failed\"} %lu\n"
		"argusd_jobs_finished_total{state=\"cancelled\"} %lu\n"
		"argusd_jobs_finished_total{state=\"interrupted\"} %lu\n",
		ok, failed, cancelled, interrupted);
	fputs("# HELP argusd_http_requests_total HTTP requests answered since start, by status "
	      "code.\n"
	      "# TYPE argusd_http_requests_total counter\n",
	      f);
	for (i = 0; i < API_N_STATUS; i++) {
		unsigned long n = atomic_load(&st->by_status[i]);

		if (i < ARRAY_SIZE(status_codes))
			fprintf(f, "argusd_http_requests_total{code=\"%u\"} %lu\n", status_codes[i],
				n);
		else
			fprintf(f, "argusd_http_requests_total{code=\"other\"} %lu\n", n);
	}
	fprintf(f,
		"# HELP argusd_uptime_seconds Seconds since argusd started.\n"
		"# TYPE argusd_uptime_seconds gauge\n"
		"argusd_uptime_seconds %.3f\n",
		uptime_s(ctx));
	fprintf(f,
		"# HELP process_start_time_seconds Start time of the process since the epoch.\n"
		"# TYPE process_start_time_seconds gauge\n"
		"process_start_time_seconds %.3f\n",
		now_real_ns() / 1e9 - uptime_s(ctx));
	fprintf(f,
		"# HELP argusd_build_info The version of argusd and of its tree, as labels.\n"
		"# TYPE argusd_build_info gauge\n"
		"argusd_build_info{version=\"%s\",tree_version=\"%s\"} 1\n",
		ARGUS_VERSION, ctx->tree && ctx->tree->version ? ctx->tree->version : "");
	if (ctx->jobs)
		write_result_metrics(f, ctx->jobs);
	write_store_and_agent_metrics(f, ctx);
	if (fclose(TAKE_PTR(f)) != 0) {
		free(text);
		respond_internal(r, -ENOMEM);
		return;
	}

	api_response_clear(r);
	r->status = 200;
	r->text = text;
	r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- the route table ---- */

struct route {
	enum method method;
	const char *path; /* literal but for ID_PATTERN */
	route_handler *handler;
};

/*
 * Every route of the API: a new one is a line here and its handler.
 * Dispatch, the Allow header of a 405 (methods in enum order) and the list
 * in a 404 (each path's first segment once, in this order) come from here.
 */
static const struct route routes[] = {
    {.method = METHOD_GET, .path = "/", .handler = get_index},
    {.method = METHOD_POST, .path = "/diagnose", .handler = post_diagnose},
    {.method = METHOD_GET, .path = "/references", .handler = get_references},
    {.method = METHOD_POST, .path = "/references", .handler = post_reference},
    {.method = METHOD_GET, .path = "/references/{id}", .handler = get_reference},
    {.method = METHOD_DELETE, .path = "/references/{id}", .handler = delete_reference},
    {.method = METHOD_GET, .path = "/references/{id}/compare/{id}", .handler = get_compare},
    {.method = METHOD_GET, .path = "/jobs", .handler = get_jobs},
    {.method = METHOD_GET, .path = "/jobs/{id}", .handler = get_job},
    {.method = METHOD_DELETE, .path = "/jobs/{id}", .handler = delete_job},
    {.method = METHOD_GET, .path = "/jobs/{id}/trace", .handler = get_trace},
    {.method = METHOD_GET, .path = "/workloads", .handler = get_workloads},
    {.method = METHOD_GET, .path = "/services", .handler = get_services},
    {.method = METHOD_GET, .path = "/tree", .handler = get_tree},
    {.method = METHOD_GET, .path = "/healthz", .handler = get_healthz},
    {.method = METHOD_GET, .path = "/metrics", .handler = get_metrics},
};

/* Each method as a request names it. */
static const char *const method_name[N_METHODS] = {
    [METHOD_GET] = "GET",
    [METHOD_POST] = "POST",
    [METHOD_DELETE] = "DELETE",
};

void routes_each(void (*cb)(const char *method, const char *path, void *ud), void *ud)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(routes); i++)
		cb(method_name[routes[i].method], routes[i].path, ud);
}

/* Append the len bytes of item to the comma-separated list *list (reallocated). */
static void list_append(char **list, const char *item, size_t len)
{
	char *longer = xasprintf("%s%s%.*s", *list, **list ? ", " : "", (int)len, item);

	free(*list);
	*list = longer;
}

/* The Allow value of a set of methods, one bit each (caller frees). */
static char *allow_text(unsigned methods)
{
	char *list = xstrdup("");
	size_t m;

	for (m = 0; m < N_METHODS; m++)
		if (methods & 1u << m)
			list_append(&list, method_allow[m], strlen(method_allow[m]));
	return list;
}

/* Bytes of a route's path up to its second '/': "/jobs" of "/jobs/{id}/trace". */
static size_t first_segment_len(const char *path)
{
	return 1 + strcspn(path + 1, "/");
}

/* "/diagnose, /references, ...": the first segment of each route's path, once (caller frees). */
static char *route_list(void)
{
	char *list = xstrdup("");
	size_t i, j, len;

	for (i = 0; i < ARRAY_SIZE(routes); i++) {
		len = first_segment_len(routes[i].path);
		for (j = 0; j < i; j++)
			if (first_segment_len(routes[j].path) == len &&
			    strncmp(routes[j].path, routes[i].path, len) == 0)
				break;
		if (j == i)
			list_append(&list, routes[i].path, len);
	}
	return list;
}

/* ---- dispatch ---- */

static void respond_no_route(struct api_response *r, const struct api_request *req)
{
	_cleanup_free_ char *list = route_list();
	_cleanup_free_ char *msg = xasprintf("no route %.*s %.*s; routes: %s", 16, req->method,
					     API_QUOTE_MAX, req->path, list);

	api_response_error(r, 404, "not_found", msg);
}

static void respond_not_allowed(struct api_response *r, const struct api_request *req,
				unsigned methods)
{
	char *allow = allow_text(methods);
	_cleanup_free_ char *msg = xasprintf("method %.*s is not allowed on %.*s; allowed: %s", 16,
					     req->method, API_QUOTE_MAX, req->path, allow);

	api_response_error(r, 405, "method_not_allowed", msg);
	r->allow = allow;
}

void routes_handle(const struct api_ctx *ctx, struct api_stats *st, const struct api_request *req,
		   struct api_response *r)
{
	enum method method = method_of(req->method);
	char idbuf[PATH_IDS_MAX][ID_SEGMENT_MAX + 1];
	unsigned methods = 0; /* of the routes whose path fits, one bit each */
	const char *ids[PATH_IDS_MAX];
	size_t i;

	api_response_clear(r);
	/* http.c decides who may write; without a caller nothing but reading is left */
	if (method != METHOD_GET && !req->caller) {
		api_response_error(r, 403, "forbidden", "this request may only read");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(routes); i++) {
		if (!path_match(routes[i].path, req->path, idbuf, ids))
			continue;
		if (routes[i].method == method) {
			struct api_request with_ids = *req;

			with_ids.id2 = ids[1];
			routes[i].handler(ctx, st, &with_ids, ids[0], r);
			return;
		}
		methods |= 1u << routes[i].method;
	}
	if (methods)
		respond_not_allowed(r, req, methods);
	else
		respond_no_route(r, req);
}
