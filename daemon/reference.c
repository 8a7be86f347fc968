// SPDX-License-Identifier: MIT
/*
 * Recording a reference (RMV): the target measured K times on a quiet
 * system with every available leaf probed at once, so that every node of
 * every level has a centre and a spread. Stored with the kernel release,
 * host, tree version and the backend of every node.
 */
#include "daemon/diagnose.h"
#include "daemon/log.h"
#include "daemon/store.h"
#include "daemon/util.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define REFERENCE_REPEATS_MAX 20
/* Coefficient of variation of the wall time above which a reference is called noisy. */
#define REFERENCE_NOISY_CV 0.15

static json_t *backends_of(const struct tree *t)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < t->n_nodes; i++)
		json_object_set_new(o, t->nodes[i].id,
				    json_string(t->nodes[i].backend == BACKEND_NONE
							? "none"
							: backend_name(t->nodes[i].backend)));
	return o;
}

int reference_job(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	const struct diag_env *env = userdata;
	const json_t *req = job_ctx_request(ctx);
	const struct tree *t = env->tree;
	struct store *s = job_ctx_store(ctx);
	struct measure_opts mo = { .probe_stats = true,
				   .should_stop = diag_should_stop,
				   .userdata = ctx };
	json_int_t repeats = json_integer_value(json_object_get(req, "repeats"));
	const char *subject = json_string_value(json_object_get(req, "subject"));
	int leaves[TREE_MAX_NODES];
	size_t n_leaves = 0, i;
	struct measure_target tg;
	struct probe_plan plan;
	json_t *runs_info, *meta;
	struct mvec *vecs;
	int64_t ref_id = 0;
	double wall_sum = 0, wall_sq = 0, mean, cv = 0;
	char *err = NULL;
	int r, k;

	if (repeats < 1)
		repeats = env->cfg->reference_repeats;
	if (repeats > REFERENCE_REPEATS_MAX)
		repeats = REFERENCE_REPEATS_MAX;
	r = diag_target_from_request(env, req, &tg, &err);
	if (r < 0) {
		*ret_error = diag_error(diag_target_error_code(r), "%s", err);
		free(err);
		return r;
	}
	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, i) && t->nodes[i].backend != BACKEND_NONE)
			leaves[n_leaves++] = i;
	r = probe_plan_for(t, leaves, n_leaves, &plan);
	if (r < 0) {
		*ret_error = diag_error("internal", "planning the reference probe: %s", strerror(-r));
		return r;
	}
	job_ctx_trace(ctx, "probe", json_pack("{s:s,s:o}", "scope", "every available leaf",
					      "probe", probe_plan_describe(t, &plan)));

	r = diag_warmup(ctx, env, &tg, ret_error);
	if (r < 0)
		return r;
	vecs = calloc(repeats, sizeof(*vecs));
	if (!vecs)
		return -ENOMEM;
	runs_info = json_array();
	for (k = 0; k < repeats; k++) {
		struct measure_result mr = {};
		_cleanup_free_ char *step = xasprintf("reference run %d of %d", k + 1, (int)repeats);

		if (job_ctx_cancelled(ctx)) {
			r = -ECANCELED;
			*ret_error = diag_error("cancelled", "the job was cancelled");
			break;
		}
		job_ctx_progress(ctx, (double)k / repeats, step);
		r = measure_run(t, &plan, &tg, &mo, &mr);
		if (r < 0) {
			*ret_error = diag_error(mr.error_code ?: "measurement_failed",
						"reference run %d: %s", k + 1,
						mr.error ?: strerror(-r));
			measure_result_clear(&mr);
			break;
		}
		/* traced before the vector moves into the reference's runs */
		job_ctx_trace(ctx, "measure",
			      json_pack("{s:i,s:o,s:o*,s:I}", "run", k + 1, "rmv",
					mvec_to_json(&mr.vec), "probe",
					mr.probe ? json_incref(mr.probe) : NULL, "wall_ns",
					(json_int_t)mr.target.wall_ns));
		vecs[k] = mr.vec;
		mr.vec = (struct mvec){};
		wall_sum += mr.target.wall_ns;
		wall_sq += (double)mr.target.wall_ns * mr.target.wall_ns;
		json_array_append_new(runs_info, json_pack("{s:i,s:f}", "run", k + 1, "wall_s",
							   mr.target.wall_ns / 1e9));
		measure_result_clear(&mr);
	}
	/* stored only once every run succeeded: a partial reference is no reference */
	if (r >= 0) {
		meta = json_pack("{s:s,s:s,s:s,s:s,s:o,s:I,s:o,s:o*}", "subject", subject, "kernel",
				 env->kernel_release, "host", env->hostname, "tree_version",
				 t->version, "backends", backends_of(t), "repeats",
				 (json_int_t)repeats, "probe", probe_plan_describe(t, &plan),
				 "workload", tg.workload ? workload_to_json(tg.workload) : NULL);
		/* a running target's counts cover a window: a diagnosis observes the same one */
		if (!tg.workload)
			json_object_set_new(meta, "window_s", json_integer(tg.window_ms / 1000));
		r = store_reference_create(s, job_ctx_id(ctx), meta, &ref_id);
		json_decref(meta);
		for (k = 0; r >= 0 && k < repeats; k++)
			r = store_reference_add_run(s, ref_id, k, &vecs[k]);
		if (r < 0)
			*ret_error = diag_error("store_failed", "storing the reference: %s",
						strerror(-r));
	}
	for (k = 0; k < repeats; k++)
		mvec_free(&vecs[k]);
	free(vecs);
	if (r < 0) {
		json_decref(runs_info);
		return r;
	}
	/*
	 * A reference is the yardstick of every later diagnosis: a wide spread
	 * of the target's own wall time means the system was not quiet, and
	 * every deviation measured against it will need to be that much larger.
	 */
	mean = wall_sum / repeats;
	if (repeats > 1 && mean > 0)
		cv = sqrt(fmax(0, (wall_sq - repeats * mean * mean) / (repeats - 1))) / mean;
	*ret_result = json_pack("{s:I,s:s,s:i,s:o,s:f,s:f,s:[]}", "reference", (json_int_t)ref_id,
				"subject", subject, "repeats", (int)repeats, "runs", runs_info,
				"mean_wall_s", mean / 1e9, "wall_cv", cv, "warnings");
	if (tg.workload && cv > REFERENCE_NOISY_CV)
		json_array_append_new(
			json_object_get(*ret_result, "warnings"),
			json_sprintf("noisy reference: the workload's wall time varies by %.0f%% between "
				     "runs; record it again on a quiet system for sharper diagnoses",
				     cv * 100));
	job_ctx_progress(ctx, 1.0, "done");
	return 0;
}
