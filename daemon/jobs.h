/* SPDX-License-Identifier: MIT */
/*
 * The job queue: jobs are persisted in the store, queued in memory up to a
 * bound, and run one at a time by a single worker thread (measurements must
 * not overlap). The worker hands each job to a runner callback (diagnose or
 * reference, wired by main) and records its outcome.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "daemon/store.h"

struct job_ctx;
struct jobs;

/*
 * Do one job's work. On success return 0 and set *ret_result (owned). On
 * failure return a negative errno and set *ret_error to
 * {"code": "...", "message": "..."} (owned); return -ECANCELED when the
 * job noticed job_ctx_cancelled().
 */
typedef int (*job_runner_t)(struct job_ctx *ctx, void *userdata, json_t **ret_result,
			    json_t **ret_error);

/* The one shape of an error: {"code": code, "message": the formatted text}. */
json_t *job_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int64_t job_ctx_id(const struct job_ctx *ctx);
const char *job_ctx_kind(const struct job_ctx *ctx); /* "diagnose" or "reference" */
const json_t *job_ctx_request(const struct job_ctx *ctx);
struct store *job_ctx_store(const struct job_ctx *ctx);
/* True once DELETE /jobs/ID or shutdown asked this job to stop. Cheap; poll it. */
bool job_ctx_cancelled(const struct job_ctx *ctx);
/* Record progress (0..1) and the current step line in the store. */
void job_ctx_progress(struct job_ctx *ctx, double fraction, const char *step);
/*
 * Append a trace step: kind ("probe", "measure", "scores", "decision", ...)
 * and data (stolen). "t" (seconds since the job started) and "kind" are added.
 */
void job_ctx_trace(struct job_ctx *ctx, const char *kind, json_t *data);

/*
 * Whether a job may still run, asked by the worker right before it starts
 * one (what was allowed when it was queued may not be any more: a pid that
 * has since gone to another user). job is the stored job (store_job_get).
 * Return 0 to run it; a negative errno and *ret_error ({"code", "message"},
 * owned) to fail it unrun.
 */
typedef int (*job_admit_t)(const json_t *job, json_t **ret_error);

/*
 * Start the worker. Jobs left "running" in the store become "interrupted";
 * jobs left "queued" are queued again in order. queue_max bounds the jobs
 * waiting (the running one not counted).
 */
int jobs_start(struct store *s, unsigned queue_max, job_runner_t runner, void *userdata,
	       struct jobs **ret);
/* The same with an admission check before each job (NULL: none), resumed ones included. */
int jobs_start_admitted(struct store *s, unsigned queue_max, job_runner_t runner, void *userdata,
			job_admit_t admit, struct jobs **ret);
/*
 * Persist and queue a job. -EAGAIN when the queue is full (429), -ESHUTDOWN
 * when stopping (503).
 */
int jobs_submit(struct jobs *j, const char *kind, const json_t *request, int64_t *ret_id);
/*
 * The same for a submitter ("uid:N" or "token", recorded with the job), who
 * may have at most per_submitter jobs waiting (0: no own bound): -EDQUOT
 * beyond (429). The queue's own bound is checked first (-EAGAIN).
 */
int jobs_submit_as(struct jobs *j, const char *kind, const json_t *request, const char *submitter,
		   unsigned per_submitter, int64_t *ret_id);
/*
 * Cancel: a queued job becomes "cancelled" at once; a running one is asked
 * to stop and becomes "cancelled" when its runner returns. -ENOENT unknown
 * id; -EALREADY when it already ended.
 */
int jobs_cancel(struct jobs *j, int64_t id);
/*
 * A chore of the worker: fn(userdata) at once, then every interval_s (at
 * least 1), always between jobs, never during one, without the queue's
 * lock; a job submitted meanwhile waits for it. At most JOBS_CHORES_MAX;
 * -ENOSPC beyond.
 */
#define JOBS_CHORES_MAX 4
typedef void (*jobs_chore_t)(void *userdata);
int jobs_add_chore(struct jobs *j, unsigned interval_s, jobs_chore_t fn, void *userdata);
/*
 * Apply retention (store_apply_retention with p) as a chore: at once, then
 * every interval_s (argusd: JOBS_RETENTION_INTERVAL_S), so that deleting
 * and vacuuming never disturb a measurement. Both limits 0: never. Called
 * again, the policy changes and the interval stays.
 */
#define JOBS_RETENTION_INTERVAL_S 3600
void jobs_set_retention(struct jobs *j, const struct store_retention *p, unsigned interval_s);
/* Jobs waiting (not counting the running one), and whether one is running. */
unsigned jobs_queued(struct jobs *j);
bool jobs_busy(struct jobs *j);
/*
 * Counters for /metrics: jobs finished by final state since start, and
 * those found cut off by the last stop (marked interrupted at start).
 */
void jobs_counts(struct jobs *j, unsigned long *succeeded, unsigned long *failed,
		 unsigned long *cancelled, unsigned long *interrupted);
/*
 * Diagnoses finished since start, by verdict and the node named (the
 * path's last; "" for none): {"bottleneck": {"kernel_...": N}, ...}.
 * And the durations of finished jobs of a kind ("diagnose", "reference"),
 * for a histogram: the count of those at most bounds[i] seconds, their
 * number and sum. Bounded: one entry per verdict and tree node.
 */
json_t *jobs_diagnoses(struct jobs *j);
#define JOBS_DURATION_BOUNDS 8
extern const double jobs_duration_bounds[JOBS_DURATION_BOUNDS];
void jobs_durations(struct jobs *j, const char *kind,
		    unsigned long ret_le[static JOBS_DURATION_BOUNDS], unsigned long *ret_n,
		    double *ret_sum);
/*
 * The probe's share of the run of each level that finished diagnoses
 * measured with probe_stats (their results' overhead_fraction), as a
 * histogram over jobs_overhead_bounds.
 */
#define JOBS_OVERHEAD_BOUNDS 8
extern const double jobs_overhead_bounds[JOBS_OVERHEAD_BOUNDS];
void jobs_overhead(struct jobs *j, unsigned long ret_le[static JOBS_OVERHEAD_BOUNDS],
		   unsigned long *ret_n, double *ret_sum);
/* Stop intake, cancel the running job, wait for the worker to end. NULL is fine. */
void jobs_stop(struct jobs *j);
