/* SPDX-License-Identifier: MIT */
/*
 * Validation of API requests: bodies of POST /diagnose and POST /references,
 * query strings of GET /jobs and GET /references, ids in paths.
 *
 * Pure: no logging, no globals, no store. Bodies come back normalized (every
 * default filled in, "subject" added) so that a job's stored request says
 * exactly what was run. Lookups that need the store (does reference N
 * exist, is there a reference for this subject) are the caller's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "api/json.h"
#include "daemon/store.h"
#include "daemon/workload.h"

#define API_TAU_MIN 0.5
#define API_TAU_MAX 100.0
#define API_DEPTH_MAX 3
#define API_WINDOW_MAX_S 600
#define API_REPEATS_MIN 3
#define API_REPEATS_MAX 20
#define API_LIST_DEFAULT 50
#define API_LIST_MAX 500
#define API_UNIT_MAX 256
/* a query value: room for every subject a request can be stored under ("unit:" and a unit name) */
#define API_QUERY_VALUE_MAX 512
#define API_QUERY_ARGS_MAX 16
/* the longest a GET /jobs/ID?wait=S may wait for the job to change */
#define API_WAIT_MAX_S 60

/* Defaults of the daemon's configuration that requests inherit. */
struct request_defaults {
	double tau;
	unsigned window_s;
	unsigned repeats;
	bool llm_configured;
};

/*
 * POST /diagnose. Exactly one of "workload" (a registered name) or
 * "target" ({"pid": N} or {"unit": "x.service"}); optional "reference",
 * "agent", "tau", "max_depth", "window_s" (targets only), "calibration".
 * On success *ret is the normalized request. On failure -EINVAL and *err
 * (400 with code unknown_field, bad_field, missing_field, unknown_workload,
 * llm_not_configured).
 */
int validate_diagnose(const json_t *body, const struct request_defaults *d,
		      const struct workload_registry *workloads, json_t **ret,
		      struct api_error *err);

/* POST /references: "workload" or "target", optional "repeats", "window_s" (targets only). */
int validate_reference_request(const json_t *body, const struct request_defaults *d,
			       const struct workload_registry *workloads, json_t **ret,
			       struct api_error *err);

/* A positive decimal id as found in a path ("42"); -EINVAL otherwise. */
int validate_id(const char *s, int64_t *ret);

/* One query argument; value NULL for "?flag". */
struct query_arg {
	const char *key;
	const char *value;
};

/*
 * GET /jobs query: state, kind, workload, limit (1..500, default 50),
 * before (positive id). *ret's strings point into args.
 */
int validate_job_query(const struct query_arg *args, size_t n, struct job_filter *ret,
		       struct api_error *err);

/* GET /jobs/ID query: wait (seconds, 0..API_WAIT_MAX_S; absent: 0). */
int validate_job_get_query(const struct query_arg *args, size_t n, unsigned *ret_wait_s,
			   struct api_error *err);
/* GET /references query: subject, limit. *ret_subject points into args or is NULL. */
int validate_reference_query(const struct query_arg *args, size_t n, const char **ret_subject,
			     int *ret_limit, struct api_error *err);
