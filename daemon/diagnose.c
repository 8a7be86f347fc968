// SPDX-License-Identifier: MIT
/*
 * The level loop of a diagnosis (DESIGN.md, "One diagnosis, as data
 * flows"): reference checked -> for L = 1..max_depth: agent authors the
 * level's probe -> measure -> agent decides -> argusd checks the decision
 * -> descend, commit or abstain -> report. An authored probe's run is
 * witnessed (witness.h) before anyone decides on it: one that disagrees
 * with the kernel's own figures is dropped for its level, which is
 * measured again with the builtin probe.
 */
#include "daemon/diagnose.h"
#include "daemon/agent.h"
#include "daemon/calibrate.h"
#include "daemon/descent.h"
#include "daemon/host_pace.h"
#include "daemon/log.h"
#include "daemon/report.h"
#include "daemon/sli.h"
#include "daemon/store.h"
#include "daemon/syscalls.h"
#include "daemon/util.h"
#include "daemon/witness.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define PROBE_TRIES 3

int diag_warmup(struct job_ctx *ctx, const struct diag_env *env, const struct measure_target *tg,
		json_t **ret_error)
{
	struct measure_opts mo = { .should_stop = diag_should_stop, .userdata = ctx };
	unsigned i;

	for (i = 0; tg->workload && i < env->cfg->warmup_runs; i++) {
		struct measure_result mr = {};
		int r;

		job_ctx_progress(ctx, 0.03, "warm-up run (not measured)");
		r = measure_warmup(tg, &mo, &mr);
		if (r < 0) {
			*ret_error = job_error(mr.error_code ?: "measurement_failed",
						"warm-up run: %s", mr.error ?: strerror(-r));
			measure_result_clear(&mr);
			return r;
		}
		job_ctx_trace(ctx, "warmup",
			      json_pack("{s:i,s:I}", "run", (int)i + 1, "wall_ns",
					(json_int_t)mr.target.wall_ns));
		measure_result_clear(&mr);
	}
	return 0;
}

bool diag_should_stop(void *job_ctx)
{
	return job_ctx_cancelled(job_ctx);
}

const char *diag_target_error_code(int r)
{
	return r == -ENOENT   ? "unknown_workload"
	       : r == -ENXIO  ? "unknown_service"
	       : r == -EACCES ? "workload_unusable"
			      : "bad_target";
}

int diag_target_from_request(const struct diag_env *env, const json_t *req,
			     struct measure_target *ret, char **ret_err)
{
	struct measure_target tg = { .victims_dir = env->cfg->victims_dir };
	const char *wname = json_string_value(json_object_get(req, "workload"));
	const char *sname = json_string_value(json_object_get(req, "service"));
	json_t *target = json_object_get(req, "target");
	json_int_t window_s = json_integer_value(json_object_get(req, "window_s"));

	if (wname) {
		tg.workload = workload_find(env->workloads, wname);
		if (!tg.workload) {
			*ret_err = xasprintf("workload %s is not registered", wname);
			return -ENOENT;
		}
		if (tg.workload->unusable) {
			*ret_err = xasprintf("workload %s cannot run: %s", wname,
					     tg.workload->unusable);
			return -EACCES;
		}
	} else if (sname) {
		tg.service = env->workloads ? service_find(env->workloads->services, sname) : NULL;
		if (!tg.service) {
			*ret_err = xasprintf("service %s is not defined (any more: GET /services)",
					     sname);
			return -ENXIO;
		}
		if (window_s <= 0)
			window_s = tg.service->window_s;
		tg.window_ms = (window_s > 0 ? window_s : env->cfg->window_s) * 1000;
	} else if (json_is_object(target)) {
		json_t *pid = json_object_get(target, "pid");
		const char *unit = json_string_value(json_object_get(target, "unit"));

		if (json_is_integer(pid) && json_integer_value(pid) > 0) {
			tg.pid = json_integer_value(pid);
		} else if (unit) {
			tg.unit = unit;
		} else {
			*ret_err = xstrdup("target needs a pid or a unit");
			return -EINVAL;
		}
		tg.window_ms = (window_s > 0 ? window_s : env->cfg->window_s) * 1000;
	} else {
		*ret_err = xstrdup("request names neither a workload nor a target");
		return -EINVAL;
	}
	*ret = tg;
	return 0;
}

const char *diag_noise_metric(const struct measure_target *tg)
{
	if (tg->workload)
		return "target/wall_ns";
	if (tg->service && tg->service->sli)
		return "target/sli";
	return NULL;
}

int diag_host_pace(const struct measure_target *tg, struct host_pace *ret)
{
	return host_pace_read(tg->workload && tg->workload->cpus ? &tg->workload->cpuset : NULL,
			      ret);
}

/*
 * A service is judged per unit of its work: a path that grew only because
 * the service served more is not where it lost time. The unit is a request
 * when the SLI is a throughput (its value times the window), else a
 * CPU-second of the service's processes (at least SERVICE_CPU_MIN_S, so
 * that a service that nearly stopped is not divided by nothing). Every
 * metric but the target's own is divided by it; "target/units" says by
 * what, and "target/unit_cpu_ns" is the service's CPU time per unit, the
 * scale of what a worse SLI cost it (calib_decision.loss).
 */
#define SERVICE_CPU_MIN_S 0.01

static bool per_request(const struct measure_target *tg)
{
	return tg->service && tg->service->sli && sli_is_rate(tg->service->sli);
}

static void per_unit_of_work(struct mvec *v, const struct measure_target *tg)
{
	const double *window = mvec_get(v, "target/window_ns"), *cpu = mvec_get(v, "target/cpu_ns");
	const double *sli = mvec_get(v, "target/sli");
	double units;
	size_t i;

	if (per_request(tg) && sli && window)
		units = fmax(*sli * *window / 1e9, 1.0);
	else
		units = fmax(cpu ? *cpu / 1e9 : 0, SERVICE_CPU_MIN_S);
	for (i = 0; i < v->n; i++)
		if (strncmp(v->v[i].metric, "target/", 7) != 0)
			v->v[i].value /= units;
	mvec_set(v, "target/units", units);
	if (cpu)
		mvec_set(v, "target/unit_cpu_ns", *cpu / units);
}

/* Whether a target's vectors are judged per unit of work: a service's (or a unit's). */
static bool judged_per_unit(const struct measure_target *tg)
{
	return tg->service || tg->unit;
}

/*
 * A service's or a unit's reference (subject "service:NAME", "unit:NAME")
 * whose CPU-seconds were counted otherwise (before DIAG_WORK_UNIT: without
 * the processes that ended in the window) divides its paths by another
 * unit than a diagnosis does now.
 */
static char *work_unit_stale(const json_t *meta, int64_t ref_id)
{
	const char *was = json_string_value(json_object_get(meta, "work_unit"));
	const char *subject = json_string_value(json_object_get(meta, "subject")) ?: "";

	if (strncmp(subject, "service:", 8) != 0 && strncmp(subject, "unit:", 5) != 0)
		return NULL;
	if (was && strcmp(was, DIAG_WORK_UNIT) == 0)
		return NULL;
	return xasprintf("reference %lld judged its service per unit of work counted as %s and "
			 "this argusd counts it as %s (a CPU-second now includes the processes "
			 "that ended in the window)",
			 (long long)ref_id, was ?: "the CPU time of the processes alive at the end",
			 DIAG_WORK_UNIT);
}

/*
 * A running target's reference (subject "service:NAME", "unit:NAME",
 * "pid:N") whose windows left out the waits under way at their start and
 * end, or the futex waits under way at their start (before
 * DIAG_WINDOW_WAITS), counted its paths of waits otherwise.
 */
static char *window_waits_stale(const json_t *meta, int64_t ref_id)
{
	const char *was = json_string_value(json_object_get(meta, "window_waits"));
	const char *subject = json_string_value(json_object_get(meta, "subject")) ?: "";

	if (strncmp(subject, "service:", 8) != 0 && strncmp(subject, "unit:", 5) != 0 &&
	    strncmp(subject, "pid:", 4) != 0)
		return NULL;
	if (was && strcmp(was, DIAG_WINDOW_WAITS) == 0)
		return NULL;
	if (was && strcmp(was, DIAG_WINDOW_WAITS_NO_FUTEX) == 0)
		return xasprintf("reference %lld left out of its windows the futex waits under way "
				 "at their start, and this argusd counts their part inside the window",
				 (long long)ref_id);
	return xasprintf("reference %lld left out of its windows the waits under way at their "
			 "start and end, and this argusd counts their part inside the window",
			 (long long)ref_id);
}

/* The state of one diagnosis, for the report. */
struct diag_state {
	const struct diag_env *env;
	struct job_ctx *ctx;
	struct agent *agent;
	struct calib_params params;
	struct mvec *ref;
	size_t k;
	const char *noise; /* what says whether the reference's runs agree (diag_noise_metric) */
	struct report rep;
	/* the level whose authored probe the witness dropped: measured with the builtin from then on */
	int dropped_level, dropped_parent;
	/* per level: how much the run outside the node it decided on slowed (the next level's cap) */
	double rest_ratio[TREE_MAX_DEPTH + 1];
};

char *diag_reference_stale(const json_t *meta, int64_t ref_id, const char *kernel_release,
			   const struct tree *t, bool probe_stats)
{
	const char *kernel = json_string_value(json_object_get(meta, "kernel"));
	const char *tver = json_string_value(json_object_get(meta, "tree_version"));
	const char *tree_version = t && t->version ? t->version : "";
	json_t *stats = json_object_get(meta, "probe_stats");
	json_t *backends = json_object_get(meta, "backends");
	/* references from before the key were measured with the statistics on */
	bool ref_stats = stats ? json_is_true(stats) : true;
	/* ... and followed system calls through raw sys_enter and sys_exit */
	const char *ref_calls = json_string_value(json_object_get(meta, "syscall_events")) ?: "raw";
	size_t i, moved = 0, first = 0;
	char *why;

	if (!kernel || !tver || strcmp(kernel, kernel_release) != 0 ||
	    strcmp(tver, tree_version) != 0)
		return xasprintf("reference %lld was recorded on kernel %s with tree %s; this is "
				 "kernel %s with tree %s",
				 (long long)ref_id, kernel ?: "?", tver ?: "?", kernel_release,
				 tree_version);
	if (ref_stats != probe_stats)
		return xasprintf("reference %lld was measured with kernel.bpf_stats %s and this "
				 "argusd measures with it %s (probe_stats): each probe event costs "
				 "the target a different amount",
				 (long long)ref_id, ref_stats ? "on" : "off",
				 probe_stats ? "on" : "off");
	if (strcmp(ref_calls, syscall_events_name()) != 0)
		return xasprintf("reference %lld followed system calls through %s and this argusd "
				 "follows them through %s (syscall_events): each system call costs "
				 "the target a different amount",
				 (long long)ref_id, ref_calls, syscall_events_name());
	if ((why = work_unit_stale(meta, ref_id)) || (why = window_waits_stale(meta, ref_id)))
		return why;
	/* the same kernel resolved otherwise (the backends setting, or the rules of resolution) */
	for (i = 0; t && json_is_object(backends) && i < t->n_nodes; i++) {
		const char *was = json_string_value(json_object_get(backends, t->nodes[i].id));

		if ((!was || strcmp(was, backend_name(t->nodes[i].backend)) != 0) && moved++ == 0)
			first = i;
	}
	if (moved) {
		const char *was = json_string_value(json_object_get(backends, t->nodes[first].id));

		return xasprintf("reference %lld measured %s on %s and this argusd measures it on "
				 "%s (%zu node%s resolved otherwise): a node's count and time come "
				 "from what its backend sees",
				 (long long)ref_id, t->nodes[first].id, was ?: "nothing",
				 backend_name(t->nodes[first].backend), moved, moved == 1 ? "" : "s");
	}
	return NULL;
}

/* Load and check the reference; *ret_error on refusal. */
static int load_reference(struct diag_state *st, const json_t *req, struct measure_target *tg,
			  json_t **ret_error)
{
	struct store *s = job_ctx_store(st->ctx);
	json_int_t ref_id = json_integer_value(json_object_get(req, "reference"));
	const char *subject = json_string_value(json_object_get(req, "subject"));
	_cleanup_(json_decrefp) json_t *ref = NULL;
	_cleanup_free_ char *why = NULL;
	const char *rsubject;
	int r;

	r = store_reference_get(s, ref_id, &ref);
	if (r < 0) {
		*ret_error = job_error("unknown_reference", "reference %lld not found",
					(long long)ref_id);
		return r;
	}
	rsubject = json_string_value(json_object_get(ref, "subject"));
	if (subject && rsubject && strcmp(subject, rsubject) != 0) {
		*ret_error = job_error("reference_mismatch",
					"reference %lld was recorded for %s, not %s",
					(long long)ref_id, rsubject, subject);
		return -EINVAL;
	}
	why = diag_reference_stale(ref, ref_id, st->env->kernel_release, st->env->tree,
				   st->env->cfg->probe_stats);
	if (why) {
		if (!st->env->cfg->allow_stale_reference) {
			*ret_error = job_error("stale_reference",
					       "%s: record a new reference (POST /references)%s", why,
					       strstr(why, "probe_stats")      ? ", or set probe_stats as it was"
					       : strstr(why, "syscall_events") ? ", or set syscall_events as it was"
									       : "");
			return -ESTALE;
		}
		report_warn(&st->rep, why);
	}
	/*
	 * Counts of a running target cover its observation window: compare
	 * like with like by observing for the reference's window.
	 */
	if (!tg->workload && json_integer_value(json_object_get(ref, "window_s")) > 0) {
		unsigned ref_ms = json_integer_value(json_object_get(ref, "window_s")) * 1000;

		if (ref_ms != tg->window_ms) {
			_cleanup_free_ char *w = xasprintf(
				"observed for %u s, the reference's window, instead of the %u s asked",
				ref_ms / 1000, tg->window_ms / 1000);

			report_warn(&st->rep, w);
			tg->window_ms = ref_ms;
		}
	}
	r = store_reference_runs(s, ref_id, &st->ref, &st->k);
	if (r < 0 || st->k == 0) {
		*ret_error = job_error("unknown_reference", "reference %lld has no runs",
					(long long)ref_id);
		return r < 0 ? r : -ENODATA;
	}
	/* an SLI command as slow as the service may be now still ends in its window's limit */
	tg->sli_reference_ns = measure_sli_longest_ns(st->ref, st->k);
	if (judged_per_unit(tg))
		for (size_t i = 0; i < st->k; i++)
			per_unit_of_work(&st->ref[i], tg);
	st->rep.reference_id = ref_id;
	st->rep.pace_reference = json_number_value(json_object_get(ref, "host_pace_ns"));
	return 0;
}

/* The decision of a (possibly remote) agent must stand on the tree and the evidence. */
static int check_decision(const struct agent_level *lvl, const struct calib_decision *d,
			  char **ret_err)
{
	size_t i;

	if (d->action == CALIB_ABSTAIN)
		return 0;
	if (d->node < 0 || (size_t)d->node >= lvl->tree->n_nodes) {
		*ret_err = xstrdup("decision names no tree node");
		return -EINVAL;
	}
	if (d->node == lvl->parent && d->action == CALIB_COMMIT)
		return 0;
	for (i = 0; i < lvl->n_active; i++)
		if (lvl->active[i] == d->node)
			break;
	if (i == lvl->n_active) {
		*ret_err = xasprintf("node %s is not in the active subtree",
				     lvl->tree->nodes[d->node].id);
		return -EINVAL;
	}
	if (d->action == CALIB_COMMIT && !tree_is_leaf(lvl->tree, d->node)) {
		*ret_err = xasprintf("node %s is not a leaf: descend instead",
				     lvl->tree->nodes[d->node].id);
		return -EINVAL;
	}
	return 0;
}

/* Keep a level's probe description with the job's probes. */
static void store_level_probe(struct diag_state *st, int level, const json_t *probe,
			      json_t *extra)
{
	json_t *pj = probe ? json_deep_copy(probe) : json_object();

	json_object_set_new(pj, "backend", json_string("mixed"));
	if (extra)
		json_object_set_new(pj, "witness", extra);
	store_probe_add(job_ctx_store(st->ctx), job_ctx_id(st->ctx), level, pj);
	json_decref(pj);
}

/*
 * Measure the level with the builtin probe, because why: the witness dropped
 * the authored probe (witnessed), or the level is measured once more.
 */
static int measure_builtin(struct diag_state *st, const struct agent_level *lvl,
			   const struct measure_target *tg, const struct measure_opts *mo,
			   const char *why, bool witnessed, struct measure_result *ret,
			   json_t **ret_error)
{
	struct measure_opts bo = *mo;
	struct probe_plan plan;
	uint64_t t0 = now_mono_ns();
	int r;

	bo.witness = false; /* the reference instrument runs as it does for references */
	r = probe_plan_for(lvl->tree, lvl->active, lvl->n_active, &plan);
	if (r < 0) {
		*ret_error = job_error("internal", "level %d: planning the builtin probe: %s",
					lvl->level, strerror(-r));
		return r;
	}
	job_ctx_trace(st->ctx, "probe",
		      json_pack("{s:i,s:s?,s:s,s:{s:s?,s:o},s:s}", "level", lvl->level, "parent",
				lvl->parent >= 0 ? lvl->tree->nodes[lvl->parent].id : NULL, "agent",
				"builtin", "probe", "witness", witnessed ? why : NULL, "plan",
				probe_plan_describe(lvl->tree, &plan), "reason", why));
	r = measure_run(lvl->tree, &plan, tg, &bo, ret);
	report_timing(&st->rep, lvl->level, "measure", now_mono_ns() - t0);
	if (r < 0) {
		*ret_error = job_error(ret->error_code ?: "measurement_failed", "level %d: %s",
					lvl->level, ret->error ?: strerror(-r));
		return r;
	}
	store_level_probe(st, lvl->level, ret->probe, NULL);
	return 0;
}

/*
 * Witness an authored run (ret): when the probe's numbers disagree with the
 * kernel's, trace why, warn in the result, drop the probe for this level and
 * measure it again with the builtin probe into ret.
 */
static int witness_level(struct diag_state *st, const struct agent_level *lvl,
			 const struct measure_target *tg, const struct probe_plan *plan,
			 const struct measure_opts *mo, struct measure_result *ret,
			 json_t **ret_error)
{
	struct witness_result w;
	_cleanup_free_ char *why = NULL, *warning = NULL;
	int r;

	r = witness_check(lvl->tree, plan, &ret->vec, &ret->witness, &w);
	if (r < 0) {
		*ret_error = job_error("internal", "level %d: witnessing the probe: %s", lvl->level,
					strerror(-r));
		return r;
	}
	why = witness_reasons(&w);
	job_ctx_trace(st->ctx, "witness",
		      json_pack("{s:i,s:s?,s:b,s:s,s:O,s:O,s:o,s:o}", "level", lvl->level, "parent",
				lvl->parent >= 0 ? lvl->tree->nodes[lvl->parent].id : NULL, "agree",
				w.agree, "reason", why, "failed", w.failed, "unchecked", w.unchecked,
				"figures", witness_figures_to_json(&ret->witness, plan->n_slots),
				"pmv", mvec_to_json(&ret->vec)));
	store_level_probe(st, lvl->level, ret->probe,
			  json_pack("{s:b,s:O}", "agree", w.agree, "failed", w.failed));
	witness_result_clear(&w);
	if (!*why)
		return 0;
	warning = xasprintf("level %d: the authored probe was dropped, its numbers disagreeing "
			    "with the kernel's (%s); the level was measured with the builtin probe",
			    lvl->level, why);
	report_warn(&st->rep, warning);
	st->dropped_level = lvl->level;
	st->dropped_parent = lvl->parent;
	measure_result_clear(ret);
	return measure_builtin(st, lvl, tg, mo, warning, true, ret, ret_error);
}

/* How a level's runs are measured. */
static struct measure_opts level_opts(struct diag_state *st)
{
	return (struct measure_opts){ .probe_stats = st->env->cfg->probe_stats,
				      .should_stop = diag_should_stop,
				      .userdata = st->ctx };
}

/* Measure one level with the agent's probe, retrying a rejected probe a bounded number of times. */
static int measure_level(struct diag_state *st, const struct agent_level *lvl,
			 const struct measure_target *tg, struct measure_result *ret,
			 json_t **ret_error)
{
	struct measure_opts mo = level_opts(st);
	int tries, r = -EINVAL;

	if (st->dropped_level == lvl->level && st->dropped_parent == lvl->parent)
		return measure_builtin(st, lvl, tg, &mo,
				       "the witness dropped the authored probe of this level", true,
				       ret, ret_error);
	for (tries = 0; tries < PROBE_TRIES; tries++) {
		struct probe_plan plan;
		json_t *note = NULL;
		uint64_t t0 = now_mono_ns();

		r = st->agent->author(st->agent, lvl, &plan, &note);
		if (r < 0) {
			json_decref(note);
			*ret_error = job_error("probe_authoring_failed",
						"level %d: the %s agent could not author a probe: %s",
						lvl->level, st->agent->name, strerror(-r));
			return r;
		}
		job_ctx_trace(st->ctx, "probe",
			      json_pack("{s:i,s:s?,s:s,s:o*,s:i}", "level", lvl->level, "parent",
					lvl->parent >= 0 ? lvl->tree->nodes[lvl->parent].id : NULL,
					"agent", st->agent->name, "probe", note, "try", tries + 1));
		/* an authored probe's numbers are witnessed by the kernel's own figures */
		mo.witness = plan.object != NULL;
		r = measure_run(lvl->tree, &plan, tg, &mo, ret);
		report_timing(&st->rep, lvl->level, "measure", now_mono_ns() - t0);
		if (r >= 0 && plan.object)
			return witness_level(st, lvl, tg, &plan, &mo, ret, ret_error);
		if (r >= 0) {
			store_level_probe(st, lvl->level, ret->probe, NULL);
			return 0;
		}
		if (r == -ECANCELED || !ret->error_code || strcmp(ret->error_code, "probe_rejected")) {
			*ret_error = job_error(ret->error_code ?: "measurement_failed", "level %d: %s",
						lvl->level, ret->error ?: strerror(-r));
			return r;
		}
		job_ctx_trace(st->ctx, "probe_rejected",
			      json_pack("{s:i,s:s,s:s?}", "level", lvl->level, "error", ret->error,
					"verifier_log", ret->verifier_log));
		if (st->agent->rejected(st->agent, lvl, ret->verifier_log ?: ret->error) < 0)
			break;
		measure_result_clear(ret);
	}
	*ret_error = job_error("probe_rejected", "level %d: the kernel rejected the probe: %s",
				lvl->level, ret->error ?: strerror(-r));
	return r;
}

static void agent_trace(void *job_ctx, const char *kind, json_t *data)
{
	job_ctx_trace(job_ctx, kind, data);
}

/* The agent the request asks for: "builtin" (default) or "llm". */
static int make_agent(struct diag_state *st, const json_t *req, json_t **ret_error)
{
	const char *name = json_string_value(json_object_get(req, "agent"));
	_cleanup_free_ char *err = NULL;
	int r;

	if (!name || strcmp(name, "llm") != 0) {
		r = agent_builtin_new(&st->agent);
		if (r < 0)
			*ret_error = job_error("internal", "creating the agent: %s", strerror(-r));
		return r;
	}
	{
		struct agent_llm_env env = { .cfg = st->env->cfg, .trace = agent_trace,
					     .should_stop = diag_should_stop, .userdata = st->ctx };

		r = agent_llm_new(&env, &st->agent, &err);
	}
	if (r < 0)
		*ret_error = job_error("llm_unavailable", "the llm agent cannot start: %s",
					err ?: strerror(-r));
	return r;
}

/* The level's nodes the kernel can measure; the others are reported on the level's first run. */
static size_t level_nodes(struct diag_state *st, const struct descent *ds,
			  int active[static TREE_MAX_NODES])
{
	const struct tree *t = ds->tree;
	int all[TREE_MAX_NODES];
	size_t n_all, n = 0, i;

	n_all = tree_active(t, ds->parent, all, TREE_MAX_NODES);
	for (i = 0; i < n_all; i++) {
		if (t->nodes[all[i]].backend != BACKEND_NONE)
			active[n++] = all[i];
		else if (descent_first_run(ds))
			report_unavailable(&st->rep, &t->nodes[all[i]]);
	}
	return n;
}

/*
 * The level's check: when the agent abstained for a reason other than an
 * unconfirmed run, the calibrated rule is asked of the same run whether it
 * would have called the run unconfirmed (whichever agent decided).
 */
static enum descent_check check_level(struct diag_state *st, const struct descent *ds,
				      const struct agent_level *lvl, const struct calib_decision *d,
				      const struct mvec *pmv)
{
	struct calib_decision own = {};
	enum descent_check check;

	if (d->action != CALIB_ABSTAIN || d->unconfirmed ||
	    calib_decide(lvl->params, lvl->tree, lvl->active, lvl->n_active, lvl->parent, st->ref,
			 st->k, pmv, &own) < 0)
		return descent_check(ds, d, NULL);
	check = descent_check(ds, d, &own);
	calib_decision_free(&own);
	return check;
}

/* A run of the level, as measured: stored, traced, its probe reported; then judged per unit of work. */
static void record_run(struct diag_state *st, const struct descent *ds,
		       const struct measure_target *tg, struct measure_result *mr)
{
	const struct tree *t = ds->tree;
	struct host_pace hp;
	bool paced;

	store_vector_add(job_ctx_store(st->ctx), job_ctx_id(st->ctx), "pmv", ds->level,
			 ds->parent >= 0 ? t->nodes[ds->parent].id : "", &mr->vec);
	/* the host's pace as the run ended, beside the reference's (host_pace.h) */
	paced = diag_host_pace(tg, &hp) >= 0;
	job_ctx_trace(st->ctx, "measure",
		      json_pack("{s:i,s:o,s:o*,s:I,s:o*}", "level", ds->level, "pmv",
				mvec_to_json(&mr->vec), "probe",
				mr->probe ? json_incref(mr->probe) : NULL, "wall_ns",
				(json_int_t)mr->target.wall_ns, "host_pace",
				paced ? host_pace_to_json(&hp) : NULL));
	if (paced)
		report_pace(&st->rep, ds->level, hp.ns_per_load);
	report_probe(&st->rep, ds->level, mr->probe);
	/* stored and traced as measured; decided per unit of work */
	if (judged_per_unit(tg))
		per_unit_of_work(&mr->vec, tg);
}

/*
 * Any level of a target with a measure of its own slowdown (a workload's
 * wall time, a service's SLI): a run slower than the reference by refute_z
 * to tau spreads is neither a slowdown nor its absence, and a target whose
 * runs vary by 10% alone gives such runs under a real 20% slowdown. At
 * level 1 the slowdown is to be shown; at a deeper level, each a run of its
 * own, to be shown again before a path below is named on that run (the
 * gate, calibrate.c). Against a reference of at least LOOK_AGAIN_MIN_K runs
 * the level is then measured again, up to LEVEL_RUNS runs, with the builtin
 * probe, and
 * decided on the mean of its runs, whose noise is the reference runs' over
 * sqrt(runs) (calib_params.runs). Each look spends a part of the
 * false-flag rate (look_shares, adding up to 1): an unchanged target is
 * flagged on some look with at most that rate. The runs after the first
 * are the builtin probe's, whatever the agent: argusd's own instrument,
 * whose numbers need no witness, measuring the nodes an authored probe
 * measured (whose numbers the witness held to the kernel's).
 */
#define LEVEL_RUNS 3
static const double look_shares[LEVEL_RUNS] = {2.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0};
/*
 * Against fewer reference runs the centre's own uncertainty outweighs what
 * more runs of the level gain, and the looks' shares of the rate would
 * raise the bar: a noisy reference is extended to ten (reference.c).
 */
#define LOOK_AGAIN_MIN_K 8

static bool looks_again(const struct diag_state *st)
{
	return st->noise && st->k >= LOOK_AGAIN_MIN_K;
}

/*
 * Whether the level's run in pmv leaves the slowdown, or where it went,
 * open: the target slower by refute_z to tau spreads, or the path ranked
 * first outgrown by another within that one's spread (calibrate.h,
 * calib_decision.outgrown). More runs narrow the spreads. NULL when
 * neither, else why, for the trace.
 */
static const char *ambiguous(const struct diag_state *st, const struct calib_params *p,
			     const struct agent_level *lvl, const struct mvec *pmv)
{
	struct calib_decision d;
	const struct calib_score *w;
	const char *why = NULL;

	if (calib_decide(p, lvl->tree, lvl->active, lvl->n_active, lvl->parent, st->ref, st->k,
			 pmv, &d) < 0)
		return NULL;
	/* the wall time as the level judged it: a path may show the loss its spread hides */
	w = d.wall >= 0 ? &d.scores[d.wall] : NULL;
	if (w && !w->flagged && w->z >= p->refute_z && w->z <= p->tau)
		why = "the target was slower than its reference, but within its spread";
	else if (d.outgrown)
		why = "the path ranked first took less of the added time than another grew by, "
		      "within that one's spread";
	calib_decision_free(&d);
	return why;
}

/* The mean of n runs' vectors, metric by metric, over the runs that have it. */
static void mean_of_runs(const struct mvec *runs, size_t n, struct mvec *ret)
{
	size_t i, j, e;

	mvec_free(ret);
	for (i = 0; i < n; i++)
		for (e = 0; e < runs[i].n; e++) {
			const char *m = runs[i].v[e].metric;
			double sum = 0;
			size_t have = 0;

			if (mvec_get(ret, m))
				continue;
			for (j = i; j < n; j++) {
				const double *v = mvec_get(&runs[j], m);

				if (v) {
					sum += *v;
					have++;
				}
			}
			mvec_set(ret, m, sum / (double)have);
		}
}

/*
 * Measure the level again while its mean stays ambiguous (see above): vec
 * becomes the mean of the runs and p their number and look's share; *ret_why
 * says why the first run was not enough. The number of runs, or a negative
 * errno with *ret_error.
 */
static int measure_again(struct diag_state *st, const struct descent *ds,
			 const struct agent_level *lvl, const struct measure_target *tg,
			 struct calib_params *p, struct mvec *vec, const char **ret_why,
			 json_t **ret_error)
{
	struct mvec runs[LEVEL_RUNS] = {};
	struct measure_opts mo = level_opts(st);
	const char *why = ambiguous(st, p, lvl, vec);
	size_t n = 1, i;
	int r = 0;

	*ret_why = why;
	if (!why)
		return 1;
	runs[0] = *vec;
	*vec = (struct mvec){};
	while (n < LEVEL_RUNS) {
		struct measure_result mr = {};
		_cleanup_free_ char *reason =
		    xasprintf("%s: measuring the level once more, judged on the mean of its runs",
			      why);

		job_ctx_trace(st->ctx, "remeasure",
			      json_pack("{s:i,s:s,s:i}", "level", ds->level, "reason", reason,
					"runs", (int)n + 1));
		r = measure_builtin(st, lvl, tg, &mo, "the level measured once more", false, &mr,
				    ret_error);
		if (r < 0) {
			measure_result_clear(&mr);
			break;
		}
		record_run(st, ds, tg, &mr);
		runs[n++] = mr.vec;
		mr.vec = (struct mvec){};
		measure_result_clear(&mr);
		mean_of_runs(runs, n, vec);
		p->runs = n;
		p->look_share = look_shares[n - 1];
		why = ambiguous(st, p, lvl, vec);
		if (!why)
			break;
	}
	for (i = 0; i < n; i++)
		mvec_free(&runs[i]);
	return r < 0 ? r : (int)n;
}

/* One level: measured, decided by the agent, the decision checked, traced. */
static int run_level(struct diag_state *st, const struct descent *ds, int *active, size_t n,
		     const struct measure_target *tg, struct calib_decision *d,
		     enum descent_check *ret_check, json_t **ret_error)
{
	const struct tree *t = ds->tree;
	struct calib_params params = st->params;
	struct agent_level lvl = { .tree = t, .level = ds->level, .parent = ds->parent,
				   .active = active, .n_active = n, .ref = st->ref, .k = st->k,
				   .params = &params };
	struct measure_result mr = {};
	json_t *note = NULL;
	const char *again = NULL;
	char *err = NULL;
	uint64_t t0;
	int r, runs = 1;

	if (ds->level > 1 && ds->level <= TREE_MAX_DEPTH)
		params.rest_above = st->rest_ratio[ds->level - 1];
	job_ctx_progress(st->ctx, 0.1 + 0.85 * (ds->level - 1) / ds->max_depth,
			 ds->parent < 0 ? "level 1: probing every subsystem" : t->nodes[ds->parent].id);
	r = measure_level(st, &lvl, tg, &mr, ret_error);
	if (r < 0) {
		measure_result_clear(&mr);
		return r;
	}
	record_run(st, ds, tg, &mr);
	if (looks_again(st)) {
		params.look_share = look_shares[0];
		runs = measure_again(st, ds, &lvl, tg, &params, &mr.vec, &again, ret_error);
		if (runs < 0) {
			measure_result_clear(&mr);
			return runs;
		}
	}

	t0 = now_mono_ns();
	r = st->agent->decide(st->agent, &lvl, &mr.vec, d, &note);
	if (r >= 0 && check_decision(&lvl, d, &err) < 0) {
		job_ctx_trace(st->ctx, "decision_refused",
			      json_pack("{s:i,s:s,s:s}", "level", ds->level, "agent", st->agent->name,
					"error", err));
		free(err);
		calib_decision_free(d);
		r = calib_decide(&params, t, active, n, ds->parent, st->ref, st->k, &mr.vec, d);
	}
	report_timing(&st->rep, ds->level, "decide", now_mono_ns() - t0);
	if (r >= 0)
		*ret_check = check_level(st, ds, &lvl, d, &mr.vec);
	measure_result_clear(&mr);
	if (r < 0) {
		json_decref(note);
		*ret_error = job_error("decision_failed", "level %d: %s", ds->level, strerror(-r));
		return r;
	}
	if (runs > 1) {
		char *why = xasprintf("%s (judged on the mean of the level's %d runs: in the first, "
				      "%s)",
				      d->reason ?: "", runs, again);

		free(d->reason);
		d->reason = why;
	}
	if (ds->level >= 1 && ds->level <= TREE_MAX_DEPTH)
		st->rest_ratio[ds->level] = calib_rest_ratio(d, t, d->node);
	report_level(&st->rep, ds->level, ds->parent, d);
	job_ctx_trace(st->ctx, "decision",
		      json_pack("{s:i,s:s,s:s?,s:s,s:o,s:o*}", "level", ds->level, "action",
				calib_action_name(d->action), "node",
				d->node >= 0 ? t->nodes[d->node].id : NULL, "reason", d->reason ?: "",
				"scores", calib_scores_to_json(d), "agent_note", note));
	return 0;
}

/* A step that measures the level again is traced; the last one is the report's stop. */
static void record_step(struct diag_state *st, const struct descent_step *step)
{
	const struct tree *t = st->env->tree;

	switch (step->kind) {
	case DESCENT_DESCEND:
		break;
	case DESCENT_REMEASURE:
		job_ctx_trace(st->ctx, "remeasure",
			      json_pack("{s:i,s:s}", "level", step->level, "reason", step->why));
		break;
	case DESCENT_CONFIRM:
		job_ctx_trace(st->ctx, "confirm",
			      json_pack("{s:i,s:s,s:s}", "level", step->level, "node",
					t->nodes[step->node].id, "reason", step->why));
		break;
	case DESCENT_STOP: {
		enum descent_abstain why = step->abstain;

		/* a slowdown not seen, or not lasting, against runs that disagree among themselves */
		if ((why == DESCENT_NOT_SLOWER || why == DESCENT_TRANSIENT) && st->noise &&
		    calib_runs_cv(&st->params, st->ref, st->k, st->noise) > REFERENCE_NOISY_CV)
			why = DESCENT_REFERENCE_NOISY;
		report_stop(&st->rep, step->node, step->action, step->why,
			    descent_abstain_code(why));
		break;
	}
	}
}

static int run_levels(struct diag_state *st, const json_t *req, const struct measure_target *tg,
		      json_t **ret_error)
{
	struct descent ds;

	descent_init(&ds, st->env->tree, json_integer_value(json_object_get(req, "max_depth")));
	while (!ds.done) {
		int active[TREE_MAX_NODES];
		struct calib_decision d = {};
		struct descent_step step;
		enum descent_check check = DESCENT_CHECK_CONFIRMED;
		size_t n;
		int r;

		if (job_ctx_cancelled(st->ctx))
			return -ECANCELED;
		n = level_nodes(st, &ds, active);
		if (n == 0) {
			descent_nothing_measurable(&ds, &step);
		} else {
			r = run_level(st, &ds, active, n, tg, &d, &check, ret_error);
			if (r < 0)
				return r;
			r = descent_next(&ds, &d, check, &step);
			calib_decision_free(&d);
			if (r < 0) {
				*ret_error = job_error("internal", "level %d: no next step: %s",
							ds.level, strerror(-r));
				return r;
			}
		}
		record_step(st, &step);
		descent_step_clear(&step);
	}
	return 0;
}

int diagnose_job(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	const struct diag_env *env = userdata;
	const json_t *req = job_ctx_request(ctx);
	struct diag_state st = { .env = env, .ctx = ctx, .dropped_level = -1, .dropped_parent = -1 };
	struct measure_target tg;
	json_t *tau = json_object_get(req, "tau"), *cal = json_object_get(req, "calibration");
	uint64_t t0 = now_mono_ns();
	char *err = NULL;
	int r;

	calib_params_configured(&st.params, env->cfg);
	if (json_is_number(tau))
		st.params.tau = json_number_value(tau);
	if (json_is_boolean(cal))
		st.params.calibrated = json_is_true(cal);
	report_init(&st.rep, env->tree);

	r = diag_target_from_request(env, req, &tg, &err);
	if (r < 0) {
		*ret_error = job_error(diag_target_error_code(r), "%s", err);
		free(err);
		goto out;
	}
	st.noise = diag_noise_metric(&tg);
	if (judged_per_unit(&tg)) {
		st.params.per_request = per_request(&tg);
		st.params.per_unit = st.params.per_request ? "request" : "CPU-second of the service";
	}
	if (!tg.workload && !(tg.service && tg.service->sli))
		st.rep.unproven = tg.service ? "the service has no SLI (\"sli\" in its definition) to "
					       "say whether it got slower."
					     : "a running target has no measure of its own health; define "
					       "it as a service with an SLI (services_dir).";
	job_ctx_progress(ctx, 0.02, "checking the reference");
	r = load_reference(&st, req, &tg, ret_error);
	if (r < 0)
		goto out;
	r = make_agent(&st, req, ret_error);
	if (r < 0)
		goto out;
	st.rep.agent = st.agent->name;
	r = diag_warmup(ctx, env, &tg, ret_error);
	if (r < 0)
		goto out;
	r = run_levels(&st, req, &tg, ret_error);
	if (st.agent->warnings) {
		json_t *w;
		size_t i;

		json_array_foreach(st.agent->warnings, i, w)
			report_warn(&st.rep, json_string_value(w));
	}
	if (r == -ECANCELED && !*ret_error)
		*ret_error = job_error("cancelled", "the job was cancelled");
	if (r >= 0) {
		report_timing(&st.rep, 0, "total", now_mono_ns() - t0);
		*ret_result = report_result(&st.rep, &st.params);
		job_ctx_trace(ctx, "report", json_deep_copy(*ret_result));
		job_ctx_progress(ctx, 1.0, "done");
	}
out:
	agent_free(st.agent);
	mvec_array_free(st.ref, st.k);
	report_free(&st.rep);
	return r;
}

int diag_run_job(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	const struct diag_env *env = userdata;
	struct diag_env job = *env;
	struct workload_registry *held = env->live ? workloads_live_get(env->live) : NULL;
	const char *kind = job_ctx_kind(ctx);
	int r = -EINVAL;

	/* a reload while the job runs replaces the registry for later jobs only */
	if (held)
		job.workloads = held;
	if (strcmp(kind, "reference") == 0)
		r = reference_job(ctx, &job, ret_result, ret_error);
	else if (strcmp(kind, "diagnose") == 0)
		r = diagnose_job(ctx, &job, ret_result, ret_error);
	else
		*ret_error = job_error("internal", "unknown job kind %s", kind);
	workload_registry_free(held);
	return r;
}
