// SPDX-License-Identifier: MIT
/*
 * Recording a reference (RMV): the target measured K times on a quiet
 * system with every available leaf probed at once, so that every node of
 * every level has a centre and a spread. Stored with the kernel release,
 * host, tree version and the backend of every node.
 */
#include "daemon/calibrate.h"
#include "daemon/diagnose.h"
#include "daemon/host_pace.h"
#include "daemon/log.h"
#include "daemon/quiet.h"
#include "daemon/service.h"
#include "daemon/sli.h"
#include "daemon/store.h"
#include "daemon/syscalls.h"
#include "daemon/usual_pace.h"
#include "daemon/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REFERENCE_REPEATS_MAX 20

static json_t *backends_of(const struct tree *t)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < t->n_nodes; i++)
		json_object_set_new(o, t->nodes[i].id, json_string(backend_name(t->nodes[i].backend)));
	return o;
}

/* Recording again a reference whose runs disagree: attempts in all, and the pause before each. */
#define REFERENCE_ATTEMPTS 3
#define REFERENCE_PAUSE_S 5 /* before attempt n + 1: n times this */
/*
 * An attempt whose runs vary so much that one run of a diagnosis
 * could not show a slowdown of min_slowdown, tau of their spreads being
 * more than that (a coefficient of variation above min_slowdown / tau:
 * 3.3% with the defaults), is extended to REFERENCE_EXTENDED_RUNS runs:
 * with five runs a diagnosis must see a run tau of their spreads slower,
 * and more runs of the diagnosis would not lower that bar, since the
 * reference's own centre is as uncertain; with ten, the mean of three runs
 * of a diagnosis is judged against about two (diagnose.c, LEVEL_RUNS).
 * Extended when its runs agree (REFERENCE_NOISY_CV), else only if it is
 * the least noisy of every attempt and kept.
 */
#define REFERENCE_EXTENDED_RUNS 10

static bool extends(const struct config *cfg, double cv)
{
	return cv * cfg->tau > cfg->min_slowdown;
}


/* The median of metric over the n runs that have it; NAN when none has. */
static double runs_median(const struct mvec *runs, size_t n, const char *metric)
{
	_cleanup_free_ double *v = calloc(n ? n : 1, sizeof(double));
	size_t i, have = 0;

	for (i = 0; v && i < n; i++) {
		const double *x = mvec_get(&runs[i], metric);

		if (x)
			v[have++] = *x;
	}
	return have ? calib_median_sorting(v, have) : NAN;
}

/*
 * A service's new reference (its n runs) recorded while the service was
 * slower than at its last reference of the same SLI: the new runs' median
 * SLI worse than the last reference's runs by more than tau of their
 * spread and min_slowdown, as a diagnosis would call it slower. A
 * diagnosis against it would not see a slowdown of that size, so the
 * result says so; NULL when it is not, or nothing can be compared.
 */
static char *slower_than_last(struct store *s, const struct config *cfg, const char *subject,
			      const struct service *svc, const struct mvec *runs, size_t n)
{
	struct mvec *last_runs = NULL;
	json_auto_t *list = NULL, *now = service_to_json(svc);
	json_t *last;
	struct calib_params p;
	struct calib_score score = {};
	struct mvec median_run = {};
	size_t n_last = 0;
	int64_t id;
	char *text = NULL;

	/* the last reference's meta alone (newest first), then its runs */
	if (!svc->sli || store_reference_list(s, subject, 1, &list) < 0)
		return NULL;
	last = json_array_get(json_object_get(list, "references"), 0);
	id = json_integer_value(json_object_get(last, "id"));
	if (!last || !json_equal(json_object_get(json_object_get(last, "service"), "sli"),
				 json_object_get(now, "sli")) ||
	    store_reference_runs(s, id, &last_runs, &n_last) < 0)
		return NULL;
	calib_params_configured(&p, cfg);
	mvec_set(&median_run, "target/sli_cost", runs_median(runs, n, "target/sli_cost"));
	if (calib_score_wall(&p, last_runs, n_last, &median_run, &score) == 0 && score.flagged)
		text = xasprintf("recorded while the service was slower than at its last reference "
				 "(%" PRId64 "): SLI %.4g against %.4g there, %.0f%% worse; a "
				 "diagnosis against it would not see a slowdown of that size: record "
				 "it again when the service is healthy",
				 id, runs_median(runs, n, "target/sli"),
				 runs_median(last_runs, n_last, "target/sli"),
				 100.0 * score.delta / fabs(score.centre));
	free(score.metric);
	mvec_free(&median_run);
	mvec_array_free(last_runs, n_last);
	return text;
}

/*
 * How much the target's runs disagree: the noise metric's (a workload's
 * wall time, a service's SLI) coefficient of variation as a diagnosis's
 * scores see it (calib_runs_cv: the run farthest from the median left out
 * from five runs on), so that a single disturbed run neither makes a
 * reference noisy nor hides that it is; 0 for a target with neither.
 */
static double runs_cv(const struct config *cfg, const struct measure_target *tg,
		      const struct mvec *runs, size_t n)
{
	struct calib_params p;

	calib_params_configured(&p, cfg);
	return diag_noise_metric(tg) ? calib_runs_cv(&p, runs, n, diag_noise_metric(tg)) : 0;
}

/* The K runs of one attempt: vectors, per-run info, and the noise metric's cv (runs_cv). */
struct attempt {
	struct mvec *vecs;
	size_t n;
	size_t extended; /* of the n, the runs that extended it */
	json_t *runs; /* [{"run", "wall_s", "quiet"?, "host_pace"?}] */
	double mean_ns, cv;
	char *slow; /* host_pace_slow's warning when the host ran slow through its runs */
};

static void attempt_clear(struct attempt *a)
{
	mvec_array_free(a->vecs, a->vecs ? a->n : 0);
	json_decref(a->runs);
	free(a->slow);
	*a = (struct attempt){};
}

/* Sleep ms milliseconds, in steps of 100, unless the job is cancelled first; false when it was. */
static bool pause_unless_cancelled_ms(struct job_ctx *ctx, uint64_t ms)
{
	uint64_t i;

	for (i = 0; i < (ms + 99) / 100; i++) {
		struct timespec ts = {.tv_nsec = 100000000L};

		if (job_ctx_cancelled(ctx))
			return false;
		nanosleep(&ts, NULL);
	}
	return !job_ctx_cancelled(ctx);
}

/* Sleep s seconds unless the job is cancelled first; false when it was. */
static bool pause_unless_cancelled(struct job_ctx *ctx, unsigned s)
{
	return pause_unless_cancelled_ms(ctx, (uint64_t)s * 1000);
}

/* How often a reference waiting for the host's usual pace reads it. */
#define REFERENCE_PACE_POLL_MS 2000

/*
 * After an attempt that ran slow: wait, at most env->cfg->reference_pace_wait_s,
 * for the host's cores to run at their usual pace again on the target's
 * CPU (host_pace_back: two readings in a row under the bound), read every
 * 2 s. A pause the host decides the length of: on the evaluation VM its
 * slow stretches lasted from seconds to a minute and a half, and it came
 * back within 5 s of 26% of its slow readings, within 15 s of 55%
 * (bench/eval/results/2026-12-06/host-pace-wait/). Traced ("pace_wait");
 * the seconds waited added to *waited_s. False when the job was cancelled.
 */
static bool wait_usual_pace(struct job_ctx *ctx, const struct diag_env *env,
			    const struct measure_target *tg, double usual, double *waited_s)
{
	uint64_t t0 = now_mono_ns(), limit_ms = (uint64_t)env->cfg->reference_pace_wait_s * 1000;
	double prev = 0, last = 0, took;
	unsigned readings = 0;
	bool back = false;

	for (;;) {
		struct host_pace hp;
		uint64_t elapsed_ms;

		if (diag_host_pace(tg, &hp) == 0) {
			readings++;
			back = host_pace_back(prev, hp.ns_per_load, usual);
			prev = last = hp.ns_per_load;
		}
		elapsed_ms = (now_mono_ns() - t0) / 1000000;
		if (back || elapsed_ms >= limit_ms)
			break;
		if (!pause_unless_cancelled_ms(ctx, limit_ms - elapsed_ms < REFERENCE_PACE_POLL_MS
							 ? limit_ms - elapsed_ms
							 : REFERENCE_PACE_POLL_MS))
			return false;
	}
	took = (double)(now_mono_ns() - t0) / 1e9;
	*waited_s += took;
	job_ctx_trace(ctx, "pace_wait",
		      json_pack("{s:b,s:f,s:i,s:f,s:f,s:i}", "back", back, "waited_s",
				round(took * 10) / 10, "readings", (int)readings, "last_ns",
				round(last * 100) / 100, "usual_ns", usual, "limit_s",
				(int)env->cfg->reference_pace_wait_s));
	return !job_ctx_cancelled(ctx);
}

static uint64_t clock_ns(void *clock)
{
	return target_clock_ns(clock);
}

/*
 * Wait for a quiet machine before a reference's run and say in the trace
 * how long and how busy. A running target's own work is not waited for:
 * its CPU time is taken off (quiet.h); a target that cannot be found is
 * left to the run, which says so.
 */
static json_t *wait_quiet(struct job_ctx *ctx, const struct config *cfg,
			  const struct measure_target *tg)
{
	struct target_clock *clock = NULL;
	struct quiet_opts qo;
	struct quiet_report qr;
	int r;

	quiet_opts_default(&qo);
	qo.sample_ms = cfg->quiet_sample_ms;
	qo.should_stop = diag_should_stop;
	qo.userdata = ctx;
	if (!tg->workload) {
		if (target_clock_start(tg, &clock) < 0)
			return NULL;
		qo.target_ns = clock_ns;
		qo.target = clock;
	}
	r = quiet_wait(&qo, &qr);
	target_clock_free(clock);
	if (r < 0)
		return NULL;
	job_ctx_trace(ctx, "quiet", quiet_report_to_json(&qr));
	return quiet_report_to_json(&qr);
}

/* The host's pace as a run ended (diag_host_pace), traced; NULL when it could not be read. */
static json_t *read_pace(struct job_ctx *ctx, const struct measure_target *tg)
{
	struct host_pace hp;
	json_t *o;

	if (diag_host_pace(tg, &hp) < 0)
		return NULL;
	o = host_pace_to_json(&hp);
	job_ctx_trace(ctx, "host_pace", json_incref(o));
	return o;
}

/* The kept runs' host pace readings: median, fastest and slowest; 0 where none was read. */
static void runs_pace(const json_t *runs, double *ret_median, double *ret_min, double *ret_max)
{
	size_t n = json_array_size(runs), i, got = 0;
	double *ns = calloc(n ?: 1, sizeof(*ns));

	if (!ns)
		abort();
	*ret_min = *ret_max = 0;
	for (i = 0; i < n; i++) {
		double v = json_number_value(
		    json_object_get(json_object_get(json_array_get(runs, i), "host_pace"), "ns_per_load"));

		if (!(v > 0))
			continue;
		ns[got++] = v;
		if (!*ret_min || v < *ret_min)
			*ret_min = v;
		if (v > *ret_max)
			*ret_max = v;
	}
	*ret_median = host_pace_median(ns, got);
	free(ns);
}

/* The CPU the runs' host pace was read on: the first run's, -1 when unpinned or unread. */
static int runs_pace_cpu(const json_t *runs)
{
	const json_t *cpu = json_object_get(json_object_get(json_array_get(runs, 0), "host_pace"), "cpu");

	return json_is_integer(cpu) ? (int)json_integer_value(cpu) : -1;
}

/* Measure the target repeats times with the plan; *ret filled on success. */
static int record_runs(struct job_ctx *ctx, const struct diag_env *env,
		       const struct probe_plan *plan, const struct measure_target *tg,
		       const struct measure_opts *mo, int attempt, size_t repeats,
		       struct attempt *ret, json_t **ret_error)
{
	struct attempt a = {.runs = json_array()};
	double wall_sum = 0;
	size_t k;
	int r = 0;

	a.vecs = calloc(repeats, sizeof(*a.vecs));
	if (!a.vecs || !a.runs)
		abort();
	for (k = 0; k < repeats; k++) {
		struct measure_result mr = {};
		_cleanup_free_ char *step =
		    attempt > 1 ? xasprintf("reference run %zu of %zu (attempt %d)", k + 1, repeats,
					    attempt)
				: xasprintf("reference run %zu of %zu", k + 1, repeats);
		const double *sli;
		json_t *quiet;

		if (job_ctx_cancelled(ctx)) {
			r = -ECANCELED;
			*ret_error = job_error("cancelled", "the job was cancelled");
			break;
		}
		job_ctx_progress(ctx, (double)k / repeats, step);
		quiet = wait_quiet(ctx, env->cfg, tg);
		r = measure_run(env->tree, plan, tg, mo, &mr);
		if (r < 0) {
			*ret_error = job_error(mr.error_code ?: "measurement_failed",
						"reference run %zu: %s", k + 1,
						mr.error ?: strerror(-r));
			measure_result_clear(&mr);
			json_decref(quiet);
			break;
		}
		/* traced before the vector moves into the reference's runs */
		job_ctx_trace(ctx, "measure",
			      json_pack("{s:i,s:i,s:o,s:o*,s:I}", "run", (int)k + 1, "attempt",
					attempt, "rmv", mvec_to_json(&mr.vec), "probe",
					mr.probe ? json_incref(mr.probe) : NULL, "wall_ns",
					(json_int_t)mr.target.wall_ns));
		sli = mvec_get(&mr.vec, "target/sli");
		json_array_append_new(a.runs, json_pack("{s:i,s:f,s:o*,s:o*,s:o*}", "run", (int)k + 1,
							"wall_s", mr.target.wall_ns / 1e9,
							"sli", sli ? json_real(*sli) : NULL,
							"quiet", quiet, "host_pace",
							read_pace(ctx, tg)));
		a.vecs[a.n++] = mr.vec;
		mr.vec = (struct mvec){};
		wall_sum += mr.target.wall_ns;
		measure_result_clear(&mr);
	}
	if (r < 0) {
		attempt_clear(&a);
		return r;
	}
	a.mean_ns = wall_sum / (double)repeats;
	a.cv = runs_cv(env->cfg, tg, a.vecs, a.n);
	*ret = a;
	return 0;
}

/* Add more's runs to a's, numbered after them, with a's mean and cv recomputed; more is emptied. */
static void attempt_extend(struct attempt *a, struct attempt *more, const struct config *cfg,
			   const struct measure_target *tg)
{
	struct mvec *vecs = realloc(a->vecs, (a->n + more->n) * sizeof(*vecs));
	json_t *run;
	size_t i;

	if (!vecs)
		abort();
	a->vecs = vecs;
	a->mean_ns = (a->mean_ns * (double)a->n + more->mean_ns * (double)more->n) /
		     (double)(a->n + more->n);
	for (i = 0; i < more->n; i++) {
		a->vecs[a->n] = more->vecs[i];
		more->vecs[i] = (struct mvec){};
		run = json_array_get(more->runs, i);
		json_object_set_new(run, "run", json_integer((json_int_t)(a->n + 1)));
		json_object_set_new(run, "extended", json_true());
		json_array_append(a->runs, run);
		a->n++;
	}
	a->cv = runs_cv(cfg, tg, a->vecs, a->n);
	attempt_clear(more);
}

/* Is attempt a better kept than b: one at the host's usual pace before a slow one, then the less noisy. */
static bool better_attempt(const struct attempt *a, const struct attempt *b)
{
	if (!a->slow != !b->slow)
		return !a->slow;
	return a->cv < b->cv;
}

/* Extend attempt a (number attempt) to REFERENCE_EXTENDED_RUNS runs, noted in the trace. */
static int extend_attempt(struct job_ctx *ctx, const struct diag_env *env,
			  const struct probe_plan *plan, const struct measure_target *tg,
			  const struct measure_opts *mo, int attempt, struct attempt *a,
			  json_t **ret_error)
{
	struct attempt more = {};
	int r;

	job_ctx_trace(ctx, "note",
		      json_pack("{s:s,s:f,s:i,s:i,s:i}", "note",
				"the reference's runs vary: extending it", "wall_cv", a->cv, "runs",
				(int)a->n, "to", REFERENCE_EXTENDED_RUNS, "attempt", attempt));
	r = record_runs(ctx, env, plan, tg, mo, attempt, REFERENCE_EXTENDED_RUNS - a->n, &more,
			ret_error);
	if (r < 0)
		return r;
	a->extended += more.n;
	attempt_extend(a, &more, env->cfg, tg);
	return 0;
}

int reference_job(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	const struct diag_env *env = userdata;
	const json_t *req = job_ctx_request(ctx);
	const struct tree *t = env->tree;
	struct store *s = job_ctx_store(ctx);
	struct measure_opts mo = { .probe_stats = env->cfg->probe_stats,
				   .should_stop = diag_should_stop,
				   .userdata = ctx };
	json_int_t repeats = json_integer_value(json_object_get(req, "repeats"));
	const char *subject = json_string_value(json_object_get(req, "subject"));
	int leaves[TREE_MAX_NODES];
	size_t n_leaves = 0, i;
	struct measure_target tg;
	struct probe_plan plan;
	struct attempt best = {};
	json_t *meta;
	int64_t ref_id = 0;
	char *err = NULL;
	int r, k, attempt, attempts = 0, best_attempt = 0;
	double pace = 0, pace_min = 0, pace_max = 0, pace_waited_s = 0;
	struct usual_pace usual = {};
	bool noisy = false;
	_cleanup_free_ char *slower = NULL, *unsteady = NULL;

	if (repeats < 1)
		repeats = env->cfg->reference_repeats;
	if (repeats > REFERENCE_REPEATS_MAX)
		repeats = REFERENCE_REPEATS_MAX;
	r = diag_target_from_request(env, req, &tg, &err);
	if (r < 0) {
		*ret_error = job_error(diag_target_error_code(r), "%s", err);
		free(err);
		return r;
	}
	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, i) && t->nodes[i].backend != BACKEND_NONE)
			leaves[n_leaves++] = i;
	r = probe_plan_for(t, leaves, n_leaves, &plan);
	if (r < 0) {
		*ret_error = job_error("internal", "planning the reference probe: %s", strerror(-r));
		return r;
	}
	job_ctx_trace(ctx, "probe", json_pack("{s:s,s:o}", "scope", "every available leaf",
					      "probe", probe_plan_describe(t, &plan)));

	json_decref(wait_quiet(ctx, env->cfg, &tg));
	r = diag_warmup(ctx, env, &tg, ret_error);
	if (r < 0)
		return r;
	/*
	 * A reference is the yardstick of every later diagnosis: a wide spread
	 * of the target's own wall time means the system was not quiet, and
	 * every deviation measured against it would need to be that much
	 * larger. Runs that disagree are recorded again, after a pause and a
	 * wait for a quiet machine, a bounded number of times. An attempt whose
	 * runs agree, but too loosely for one run of a diagnosis, is extended
	 * first: runs that disagree in its extension make it a noisy attempt
	 * like any other. So is one recorded while the host's cores ran slower
	 * than their usual pace (usual_pace.h: the median of the last day's
	 * readings between jobs and references): its runs may agree, and every
	 * later diagnosis would be judged against a target slowed by the host;
	 * it is recorded again once the host runs at its usual pace
	 * (wait_usual_pace), not after the fixed pause. The kept attempt is one
	 * at the usual pace when there is one, and of those the least noisy.
	 */
	for (attempt = 1; attempt <= REFERENCE_ATTEMPTS; attempt++) {
		struct attempt a = {};
		double a_pace, a_min, a_max;

		if (attempt > 1) {
			unsigned pause = REFERENCE_PAUSE_S * (unsigned)(attempt - 1);
			bool wait = best.slow && env->cfg->reference_pace_wait_s > 0;

			job_ctx_trace(ctx, "note",
				      best.slow ? json_pack("{s:s,s:s,s:i,s:i}", "note",
							    "the host ran slow: recording it again",
							    "why", best.slow, "attempt", attempt,
							    wait ? "wait_s" : "pause_s",
							    wait ? (int)env->cfg->reference_pace_wait_s
								 : (int)pause)
						: json_pack("{s:s,s:f,s:i,s:i}", "note",
							    "noisy reference: recording it again",
							    "wall_cv", best.cv, "attempt", attempt,
							    "pause_s", (int)pause));
			if (wait ? !wait_usual_pace(ctx, env, &tg, usual.ns, &pace_waited_s)
				 : !pause_unless_cancelled(ctx, pause)) {
				r = -ECANCELED;
				*ret_error = job_error("cancelled", "the job was cancelled");
				break;
			}
		}
		r = record_runs(ctx, env, &plan, &tg, &mo, attempt, (size_t)repeats, &a, ret_error);
		if (r >= 0 && diag_noise_metric(&tg) && a.cv <= REFERENCE_NOISY_CV &&
		    extends(env->cfg, a.cv) && a.n < REFERENCE_EXTENDED_RUNS)
			r = extend_attempt(ctx, env, &plan, &tg, &mo, attempt, &a, ret_error);
		if (r < 0) {
			attempt_clear(&a);
			break;
		}
		attempts = attempt;
		if (env->cfg->reference_pace_check) {
			if (attempt == 1 && usual_pace_get(s, env->hostname, runs_pace_cpu(a.runs),
							   now_real_ns(), &usual) < 0)
				usual = (struct usual_pace){};
			runs_pace(a.runs, &a_pace, &a_min, &a_max);
			a.slow = host_pace_slow(a_pace, usual.ns);
		}
		if (!best.vecs || better_attempt(&a, &best)) {
			attempt_clear(&best);
			best = a;
			best_attempt = attempt;
		} else
			attempt_clear(&a);
		if (!best.slow && (!diag_noise_metric(&tg) || best.cv <= REFERENCE_NOISY_CV))
			break;
	}
	/* every attempt noisy: the least noisy one extended, as one that agreed would have been */
	if (r >= 0 && diag_noise_metric(&tg) && extends(env->cfg, best.cv) &&
	    best.n < REFERENCE_EXTENDED_RUNS)
		r = extend_attempt(ctx, env, &plan, &tg, &mo, best_attempt, &best, ret_error);
	repeats = (json_int_t)best.n;
	/* stored only once every run of the kept attempt succeeded: a partial reference is none */
	if (r >= 0) {
		if (tg.service)
			slower = slower_than_last(s, env->cfg, subject, tg.service, best.vecs, best.n);
		noisy = diag_noise_metric(&tg) && best.cv > REFERENCE_NOISY_CV;
		meta = json_pack("{s:s,s:s,s:s,s:s,s:o,s:I,s:o,s:o*,s:f,s:b,s:i,s:b}", "subject",
				 subject, "kernel", env->kernel_release, "host", env->hostname,
				 "tree_version", t->version, "backends", backends_of(t), "repeats",
				 (json_int_t)repeats, "probe", probe_plan_describe(t, &plan),
				 "workload", tg.workload ? workload_to_json(tg.workload) : NULL,
				 "wall_cv", best.cv, "noisy", noisy, "attempts", attempts,
				 "probe_stats", env->cfg->probe_stats);
		json_object_set_new(meta, "syscall_events", json_string(syscall_events_name()));
		runs_pace(best.runs, &pace, &pace_min, &pace_max);
		if (pace > 0) {
			json_object_set_new(meta, "host_pace_ns", json_real(pace));
			json_object_set_new(meta, "host_pace_cpu", json_integer(runs_pace_cpu(best.runs)));
		}
		/* a running target's counts cover a window: a diagnosis observes the same one */
		if (!tg.workload)
			json_object_set_new(meta, "window_s", json_integer(tg.window_ms / 1000));
		if (tg.service)
			json_object_set_new(meta, "service", service_to_json(tg.service));
		if (tg.service || tg.unit)
			json_object_set_new(meta, "work_unit", json_string(DIAG_WORK_UNIT));
		if (!tg.workload)
			json_object_set_new(meta, "window_waits", json_string(DIAG_WINDOW_WAITS));
		r = store_reference_create(s, job_ctx_id(ctx), meta, &ref_id);
		json_decref(meta);
		for (k = 0; r >= 0 && k < repeats; k++)
			r = store_reference_add_run(s, ref_id, k, &best.vecs[k]);
		if (r < 0)
			*ret_error = job_error("store_failed", "storing the reference: %s",
						strerror(-r));
	}
	if (r < 0) {
		attempt_clear(&best);
		return r;
	}
	*ret_result = json_pack("{s:I,s:s,s:i,s:O,s:f,s:f,s:i,s:i,s:i,s:[]}", "reference",
				(json_int_t)ref_id, "subject", subject, "repeats", (int)repeats,
				"runs", best.runs, "mean_wall_s", best.mean_ns / 1e9, "wall_cv",
				best.cv, "attempts", attempts, "kept_attempt", best_attempt,
				"extended_runs", (int)best.extended, "warnings");
	if (noisy)
		json_array_append_new(
		    json_object_get(*ret_result, "warnings"),
		    json_sprintf("noisy reference: the %s varies by %.0f%% between its %d runs "
				 "(the least noisy of %d attempt%s%s); record it again on a quiet "
				 "system for sharper diagnoses",
				 tg.workload ? "workload's wall time" : "service's SLI",
				 best.cv * 100, (int)repeats, attempts, attempts == 1 ? "" : "s",
				 best.extended ? ", its runs extended after it" : ""));
	if (slower)
		json_array_append_new(json_object_get(*ret_result, "warnings"),
				      json_string(slower));
	if (best.slow)
		json_array_append_new(json_object_get(*ret_result, "warnings"),
				      json_sprintf("%s (each of its %d attempt%s ran slow)", best.slow,
						   attempts, attempts == 1 ? "" : "s"));
	if (pace > 0) {
		json_t *hp = json_pack("{s:f,s:f,s:f}", "median_ns", pace, "min_ns", pace_min,
				       "max_ns", pace_max);

		/*
		 * said only of runs that disagree, as what may have moved them: the
		 * loop's own readings spread by up to 1.35 times under runs that
		 * agreed within 2% (bench/eval/results/2026-12-06/heldout-set30/host-pace/)
		 */
		if (diag_noise_metric(&tg) && extends(env->cfg, best.cv))
			unsteady = host_pace_unsteady(pace_min, pace_max);
		if (unsteady)
			json_object_set_new(hp, "note", json_string(unsteady));
		if (usual.ns > 0) {
			json_object_set_new(hp, "usual_ns", json_real(usual.ns));
			json_object_set_new(hp, "usual_from",
					    json_pack("{s:I,s:I}", "readings",
						      (json_int_t)usual.readings, "references",
						      (json_int_t)usual.references));
		}
		if (pace_waited_s > 0)
			json_object_set_new(hp, "waited_s", json_real(round(pace_waited_s * 10) / 10));
		json_object_set_new(*ret_result, "host_pace", hp);
	}
	if (tg.service && tg.service->sli) {
		const char *unit = sli_unit(tg.service->sli);

		json_object_set_new(*ret_result, "sli_median",
				    json_real(runs_median(best.vecs, best.n, "target/sli")));
		json_object_set_new(*ret_result, "sli_cv", json_real(best.cv));
		if (unit)
			json_object_set_new(*ret_result, "sli_unit", json_string(unit));
	}
	attempt_clear(&best);
	job_ctx_progress(ctx, 1.0, "done");
	return 0;
}
