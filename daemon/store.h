/* SPDX-License-Identifier: MIT */
/*
 * The store: one SQLite database (WAL) under the state directory holding
 * jobs, their traces and probes, references, and measurement vectors.
 * Schema files schema/NNN-*.sql are applied in order at open; the applied
 * version is kept in the database (PRAGMA user_version).
 *
 * Thread safe: every call takes the store's mutex. All JSON returned is
 * owned by the caller. Errors are negative errno (-ENOENT when an id does
 * not exist, -EIO for SQLite failures, the SQLite message logged once here).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <jansson.h>

#include "daemon/mvec.h"

struct store;

/* Open (creating) the database file at path and apply schema files from schema_dir. */
int store_open(const char *path, const char *schema_dir, struct store **ret);
void store_close(struct store *s);
/* Schema version after open. */
int store_schema_version(struct store *s);

/* ---- jobs ---- */

/* kind: "diagnose" or "reference"; request: the validated request body. State starts "queued". */
int store_job_create(struct store *s, const char *kind, const json_t *request, int64_t *ret_id);
/*
 * The same, recording who submitted it: "uid:N" or "token" (at most
 * STORE_SUBMITTER_MAX bytes, [a-z0-9:]); NULL records none.
 */
#define STORE_SUBMITTER_MAX 32
int store_job_create_by(struct store *s, const char *kind, const json_t *request,
			const char *submitter, int64_t *ret_id);
/* Jobs of this submitter still waiting ("queued"). */
int store_jobs_queued_by(struct store *s, const char *submitter, unsigned *ret_n);
/*
 * Update a job. state: one of queued, running, succeeded, failed, cancelled,
 * interrupted (NULL keeps it). progress in [0,1] (negative keeps it). step:
 * a short human line of what it does now (NULL keeps it). result/error:
 * stored when non-NULL. Timestamps started/finished are set on the
 * transitions into running and into a final state.
 */
int store_job_update(struct store *s, int64_t id, const char *state, double progress,
		     const char *step, const json_t *result, const json_t *error);
/*
 * API representation: {"id", "kind", "state", "progress", "step", "request",
 * "created", "started", "finished", "submitter", "result"?, "error"?};
 * submitter is null for jobs recorded before submitters were.
 */
int store_job_get(struct store *s, int64_t id, json_t **ret);
/* The job's state string into a caller buffer of >= 16 bytes. */
int store_job_state(struct store *s, int64_t id, char *state, size_t len);
/* A state no job leaves: succeeded, failed, cancelled, interrupted. */
bool store_state_final(const char *state);
/*
 * Counters, bumped after the change is in the database: every write of a
 * job's row (created, updated, interrupted, removed), and every removal of
 * finished jobs by retention. A reader that saw a value before reading a
 * job knows, when the value has not moved since, that the job has not.
 */
uint64_t store_job_writes(struct store *s);
uint64_t store_job_removals(struct store *s);

struct job_filter {
	const char *state;    /* NULL: any */
	const char *kind;     /* NULL: any */
	const char *workload; /* NULL: any (matches request.workload) */
	const char *subject;  /* NULL: any (a workload name, "pid:N", "unit:NAME") */
	const char *since;    /* NULL, or created at or after (ISO 8601 UTC, as "created") */
	const char *until;    /* NULL, or created before */
	int64_t before_id;    /* > 0: only ids below (paging, newest first) */
	int limit;	      /* 1..500 */
};
/*
 * {"jobs": [...newest first, without result/request bodies...], "next_before": id|null};
 * a finished diagnosis's entry carries its "verdict" and "path" too.
 */
int store_job_list(struct store *s, const struct job_filter *f, json_t **ret);
/* Ids of queued jobs, oldest first. */
int store_jobs_queued(struct store *s, int64_t **ret_ids, size_t *ret_n);
/* Every job still "running" becomes "interrupted" (at start, after a crash or kill). Returns how many. */
int store_jobs_interrupt_running(struct store *s);

/*
 * Append one trace step ({"t": ..., "kind": ..., ...}); seq assigned in
 * order. A job's steps are stored while their JSON text fits in the trace
 * cap (store_set_trace_max); the first that does not is replaced by a step
 * {"kind": "trace_cut", "message", "limit_bytes", "stored_bytes",
 * "omitted_steps", "omitted_bytes", "first_omitted_kind"}, which stays the
 * trace's last: every later step is left out and counted in it. Returns 0
 * when the step was stored, 1 when it was left out, -ENOENT when the job
 * does not exist.
 */
int store_trace_append(struct store *s, int64_t job_id, const json_t *step);
/* The per-job trace cap in bytes (trace_max_bytes; STORE_TRACE_MAX_DEFAULT until set; at least 16 KiB). */
#define STORE_TRACE_MAX_DEFAULT ((size_t)8 << 20)
void store_set_trace_max(struct store *s, size_t bytes);
/* {"job": id, "steps": [...]} ; -ENOENT when the job does not exist. */
int store_trace_get(struct store *s, int64_t job_id, json_t **ret);

/* A probe loaded for a job at a level: {"level", "backend", "source", "verifier_log", "overhead_ns", ...}. */
int store_probe_add(struct store *s, int64_t job_id, int level, const json_t *probe);

/* ---- references ---- */

/*
 * meta: {"subject", "kernel", "host", "tree_version", "backends", "repeats", ...}.
 * subject is the workload name, or "pid:N" / "unit:NAME" for running
 * targets. The job that recorded it is job_id (0 when none). Other meta
 * fields are kept as given and returned by store_reference_get.
 */
int store_reference_create(struct store *s, int64_t job_id, const json_t *meta, int64_t *ret_id);
/* One run's vector (repeat = 0..K-1), all nodes of every level. */
int store_reference_add_run(struct store *s, int64_t ref_id, int repeat, const struct mvec *v);
/* meta + "id", "created", "runs": [{metric: value}...] */
int store_reference_get(struct store *s, int64_t ref_id, json_t **ret);
/* The K run vectors; *ret_runs is an array of ret_n mvecs (free each and the array). */
int store_reference_runs(struct store *s, int64_t ref_id, struct mvec **ret_runs, size_t *ret_n);
/* 0 when the reference exists, -ENOENT when not. */
int store_reference_exists(struct store *s, int64_t ref_id);
/* Newest reference of a subject; -ENOENT when none. */
int store_reference_latest(struct store *s, const char *subject, int64_t *ret_id);
/* {"references": [meta + id + created, newest first]}; subject NULL for all. */
int store_reference_list(struct store *s, const char *subject, int limit, json_t **ret);
/* Call fn with every reference (as store_reference_get gives it, without runs), oldest first. */
int store_reference_each(struct store *s, void (*fn)(const json_t *ref, void *ud), void *ud);
/*
 * Delete a reference and its runs. -ENOENT when there is none; -EBUSY when
 * a queued or running job names it (its "reference").
 */
int store_reference_delete(struct store *s, int64_t ref_id);

/* ---- measurement vectors of a job ---- */

/* kind "pmv"; level 1..3; parent: the node whose children were probed ("" at level 1). */
int store_vector_add(struct store *s, int64_t job_id, const char *kind, int level,
		     const char *parent, const struct mvec *v);
/* [{"kind", "level", "parent", "vector"}...] in insertion order; -ENOENT when the job does not exist. */
int store_vectors_get(struct store *s, int64_t job_id, json_t **ret);

/* ---- the host's pace ---- */

/*
 * One reading of the host's pace (host_pace.h) taken between jobs:
 * ns_per_load on cpu of host at taken_real_ns (CLOCK_REALTIME). -EINVAL
 * for a negative CPU or a reading that is not a positive number.
 */
int store_pace_add(struct store *s, uint64_t taken_real_ns, const char *host, int cpu,
		   double ns_per_load);
/*
 * The readings of host on cpu (every CPU when cpu < 0) taken at or after
 * since_real_ns, newest first, at most max of them, into ns; their number
 * in *ret_n.
 */
int store_pace_since(struct store *s, const char *host, int cpu, uint64_t since_real_ns,
		     double *ns, size_t max, size_t *ret_n);
/*
 * The newest reading of host on each CPU that has one, by CPU, at most max
 * of them: its CPU in cpus, its ns_per_load in ns; their number in *ret_n.
 */
int store_pace_latest(struct store *s, const char *host, int *cpus, double *ns, size_t max,
		      size_t *ret_n);
/* Delete the readings taken before before_real_ns; how many in *ret_n (may be NULL). */
int store_pace_forget(struct store *s, uint64_t before_real_ns, unsigned *ret_n);

/* ---- retention ---- */

struct store_retention {
	unsigned retention_days; /* jobs finished longer ago than this are deleted; 0: no age limit */
	unsigned max_jobs;	 /* finished jobs kept at most, the last to finish; 0: no limit */
};

struct store_retention_stats {
	unsigned jobs_deleted;
	long long pages_freed; /* database pages given back to the file system */
	bool incremental;      /* the database has auto_vacuum = INCREMENTAL (new ones do) */
};

/*
 * Delete the finished jobs (succeeded, failed, cancelled, interrupted) that
 * finished before now - retention_days, and those beyond the max_jobs that
 * finished last, oldest first, with their trace steps, probes and vectors;
 * never a queued or running job. References are kept (a reference whose
 * recording job goes shows "job": null); so every reference a kept job
 * names stays. Then PRAGMA incremental_vacuum gives the freed pages back
 * where the database allows it (*ret says). Works in batches, letting the
 * store lock go between them. now_real_ns: CLOCK_REALTIME.
 */
int store_apply_retention(struct store *s, const struct store_retention *p, uint64_t now_real_ns,
			  struct store_retention_stats *ret);
