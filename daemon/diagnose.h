/* SPDX-License-Identifier: MIT */
/*
 * The two kinds of job, as job runners (jobs.h):
 *   reference: the target measured K times with every available node probed;
 *   diagnose:  the level loop against a stored reference, one multiplexed
 *              probe per level, the agent deciding, everything traced.
 */
#pragma once

#include <jansson.h>

#include "daemon/config.h"
#include "daemon/jobs.h"
#include "daemon/measure.h"
#include "daemon/tree.h"
#include "daemon/workload.h"

/*
 * The coefficient of variation of a workload's wall time above which its
 * reference is noisy: recorded again when it is made, and named as the
 * reason when a diagnosis against it names nothing (reason_code).
 */
#define REFERENCE_NOISY_CV 0.15

/*
 * How a service's unit of work is counted, kept in its references
 * ("work_unit"): a CPU-second counts the processes that ended in the
 * window too. A reference counted otherwise is stale for a diagnosis.
 */
#define DIAG_WORK_UNIT "cpu_with_ended"

/*
 * How a running target's window counts the waits in calls under way at its
 * start and its end, kept in its references ("window_waits"): their part
 * inside the window, where the kernel lets the probe iterate over tasks
 * (bpf/edges.bpf.h), a futex wait under way at the start among them. A
 * reference recorded before left them out (no such key), or the futex
 * waits ("edges_counted"), and is stale for a diagnosis.
 */
#define DIAG_WINDOW_WAITS "edges_counted_futex"
#define DIAG_WINDOW_WAITS_NO_FUTEX "edges_counted"

struct diag_env {
	const struct config *cfg;
	const struct tree *tree;
	/*
	 * The registry a job runs with. diag_run_job takes it from live (the one
	 * in use now, replaced by a reload) when the job starts and holds it to
	 * the job's end; without live, workloads is used as it is.
	 */
	const struct workload_registry *workloads;
	struct workloads_live *live;
	const char *kernel_release;
	const char *hostname;
};

/*
 * Why a reference (its meta, as the store gives it) cannot be compared with
 * a diagnosis on this kernel, with this tree as it resolved (every node's
 * backend) and this probe_stats (a
 * sentence, owned), or NULL when it can. The one rule of staleness: the
 * diagnosis refuses such a reference (unless allow_stale_reference), and
 * /metrics counts them.
 */
char *diag_reference_stale(const json_t *meta, int64_t ref_id, const char *kernel_release,
			   const struct tree *t, bool probe_stats);

/* job_runner_t for "diagnose" jobs; userdata is a struct diag_env. */
int diagnose_job(struct job_ctx *ctx, void *env, json_t **ret_result, json_t **ret_error);
/* job_runner_t for "reference" jobs. */
int reference_job(struct job_ctx *ctx, void *env, json_t **ret_result, json_t **ret_error);
/* Dispatch on the job's kind. */
int diag_run_job(struct job_ctx *ctx, void *env, json_t **ret_result, json_t **ret_error);

/*
 * The measurement target of a normalized request ({"workload"},
 * {"service"} or {"target": {"pid"|"unit"}}, "window_s"; a service's
 * window is the request's, else its definition's, else the
 * configuration's). -EINVAL, -ENOENT (no such workload), -ENXIO (no such
 * service) with *ret_err; -EACCES for a workload marked unusable.
 */
/*
 * What says whether a target's reference runs agree: a workload's wall
 * time ("target/wall_ns"), a service's SLI ("target/sli"); NULL for a
 * target with neither (its windows differ by nature: their spread is
 * what it is). A reference whose runs disagree by more than
 * REFERENCE_NOISY_CV on it is recorded again, and named as the reason
 * when a diagnosis against it names nothing.
 */
const char *diag_noise_metric(const struct measure_target *tg);
struct host_pace;
/*
 * The host's pace as a run of the target ended (host_pace.h): on a
 * workload's first CPU where it has CPUs of its own, else where argusd runs.
 */
int diag_host_pace(const struct measure_target *tg, struct host_pace *ret);
/* The job error code for diag_target_from_request()'s errno. */
const char *diag_target_error_code(int r);
int diag_target_from_request(const struct diag_env *env, const json_t *req,
			     struct measure_target *ret, char **ret_err);
/*
 * The configured warm-up runs of a workload target, traced and discarded.
 * A workload that cannot run fails here, with *ret_error set.
 */
int diag_warmup(struct job_ctx *ctx, const struct diag_env *env, const struct measure_target *tg,
		json_t **ret_error);
/* Stop polling for measure_opts: the job was cancelled. */
bool diag_should_stop(void *job_ctx);
