/* SPDX-License-Identifier: MIT */
/*
 * The workload registry: one JSON file per workload in the workloads
 * directory:
 *   {"name": "pf_major", "argv": ["pf_major", "--pages", "65536"],
 *    "user": "nobody", "cpus": "0", "timeout_s": 60,
 *    "description": "..."}
 * name, argv and timeout_s are required; user defaults to "nobody", cpus to
 * all online CPUs (also when null). argv[0] without a '/' names a program in the victims
 * directory (bundled victims); with a '/' it must be absolute.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <jansson.h>

#define WORKLOAD_NAME_MAX 64
#define WORKLOAD_ARGV_MAX 64
#define WORKLOAD_ARG_LEN_MAX 4096
#define WORKLOAD_TIMEOUT_MAX (24 * 3600)
#define WORKLOAD_FILE_MAX (64 * 1024)
#define WORKLOAD_DESCRIPTION_MAX 1024
#define WORKLOAD_REGISTRY_MAX 1024 /* definition files read from one directory */

struct workload {
	char *name;
	char *description;
	char **argv; /* NULL terminated */
	size_t argc;
	char *user;
	char *cpus; /* as written, e.g. "0" or "0-1,3"; NULL for all */
	cpu_set_t cpuset;
	unsigned timeout_s;
	char *source; /* file it came from */
	bool checked;	/* target_check_program() ran on it (argusd does at load) */
	char *unusable; /* then: why its user cannot run it, or NULL */
};

/*
 * Parse one definition (pure). Unknown fields, bad types, bad names, empty
 * argv, bad CPU lists and out-of-range limits are -EINVAL with *ret_err
 * saying which field and why.
 */
int workload_from_json(const json_t *doc, struct workload **ret, char **ret_err);
void workload_free(struct workload *w);
/*
 * The definition as JSON, "cpus" null when it was not given, plus "source"
 * (the file it came from) when known, and "usable" (with "unusable_reason"
 * when false) once it was checked; without those it parses back.
 */
json_t *workload_to_json(const struct workload *w);

/*
 * Parse "0-2,5" into a cpu set; -EINVAL on syntax or CPUs >= CPU_SETSIZE.
 * One trailing newline is accepted (sysfs and /proc lists end with one).
 */
int parse_cpu_list(const char *s, cpu_set_t *ret);

struct workload_registry {
	struct workload **items; /* sorted by name */
	size_t n;
	char **errors; /* "file: reason" for each file skipped */
	size_t n_errors;
	/* the service definitions (service.h) read beside them, reloaded with them; never NULL once loaded */
	struct service_registry *services;
	atomic_uint refs; /* 1 from workload_registry_load; each reader of a live one holds one */
	unsigned long generation; /* 1 for the first registry loaded, then one more each load */
};

/*
 * Load every "*.json" in dir. A bad file is skipped and its reason kept in
 * errors (argusd logs them); duplicate names keep the first by file name.
 */
int workload_registry_load(const char *dir, struct workload_registry **ret);
/* One more holder of r (returned); workload_registry_free drops one, the last frees it. */
struct workload_registry *workload_registry_ref(struct workload_registry *r);
void workload_registry_free(struct workload_registry *r);
const struct workload *workload_find(const struct workload_registry *r, const char *name);
/* {"workloads": [...], "errors": [...]} */
json_t *workload_registry_to_json(const struct workload_registry *r);

/*
 * The registry in use, replaced whole by a reload (SIGHUP): a job holds the
 * one it started with to its end, a request the one it validated against,
 * and the old registry goes with its last holder.
 */
struct workloads_live;
/* Starts with reg (taken). */
int workloads_live_new(struct workload_registry *reg, struct workloads_live **ret);
/* The registry now, held for the caller: give it back with workload_registry_free. */
struct workload_registry *workloads_live_get(struct workloads_live *l);
/* Replace the registry with reg (taken). */
void workloads_live_set(struct workloads_live *l, struct workload_registry *reg);
void workloads_live_free(struct workloads_live *l);
