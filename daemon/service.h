/* SPDX-License-Identifier: MIT */
/*
 * Service definitions: one JSON file per service in services_dir, written
 * by the admin:
 *   {"name": "cache", "unit": "redis-server.service"}
 *   {"name": "cache", "cgroup": "/argus/cache", "window_s": 10,
 *    "user": "nobody", "sli": {...}, "description": "..."}
 * name and one of unit or cgroup are required. A unit is resolved through
 * systemd (unit.h) each time the service is located; a cgroup path is
 * relative to the root of the hierarchy that tracks services (cgroup.h).
 * window_s (1..600) overrides the configuration's observation window; user
 * (default "nobody") runs the SLI command; sli (sli.h) is the service's own
 * health, measured once in each window.
 *
 * Locating a service reads what it is now: its cgroup, every process in it
 * and below it, and its main process when systemd names one. References of
 * a service are keyed by its name ("service:NAME"), so they outlive the
 * service's processes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#define SERVICE_NAME_MAX 64
#define SERVICE_FILE_MAX (64 * 1024)
#define SERVICE_REGISTRY_MAX 1024
#define SERVICE_WINDOW_MAX_S 600
#define SERVICE_DESCRIPTION_MAX 1024
#define SERVICE_PROCS_MAX 4096 /* processes of one service followed */

struct sli;

struct service {
	char *name;
	char *description;
	char *unit;	   /* a systemd unit, or NULL */
	char *cgroup;	   /* a cgroup path, or NULL */
	unsigned window_s; /* 0: the configuration's */
	char *user;	   /* who runs the SLI command */
	struct sli *sli;   /* NULL: none */
	char *source;	   /* the file it came from */
};

/*
 * Parse one definition (pure). Unknown fields, bad types, a bad name, both
 * or neither of unit and cgroup, a bad unit name or cgroup path, window_s
 * out of range, a bad user name and a bad sli are -EINVAL with *ret_err
 * naming the field.
 */
int service_from_json(const json_t *doc, struct service **ret, char **ret_err);
void service_free(struct service *s);
/* The definition as JSON (parses back), plus "source" when known. */
json_t *service_to_json(const struct service *s);

struct service_registry {
	struct service **items; /* sorted by name */
	size_t n;
	char **errors; /* "file: reason" for each file skipped */
	size_t n_errors;
};

/*
 * Load every "*.json" of dir as workload_registry_load does. A directory
 * that does not exist is an empty registry (argusd ships none); one that
 * cannot be read is a negative errno.
 */
int service_registry_load(const char *dir, struct service_registry **ret);
void service_registry_free(struct service_registry *r);
const struct service *service_find(const struct service_registry *r, const char *name);

/* Where a service is now. */
struct service_where {
	char *cgroup;	  /* its cgroup path, "/system.slice/redis-server.service" */
	char *dir;	  /* that cgroup's directory */
	const char *kind; /* the hierarchy: "cgroup2" or "cgroup1-systemd" */
	const char *via;  /* how the cgroup was found: "dbus", "cgroupfs" or "definition" */
	pid_t main_pid;	  /* systemd's MainPID, 0 when none or unknown */
	pid_t *pids;	  /* every process in the cgroup and below, ascending */
	size_t n_pids;
	bool truncated; /* more than SERVICE_PROCS_MAX */
};

/*
 * Find the service's cgroup and list its processes. -ENOENT (no such unit
 * or cgroup) and -ESRCH (it has no process) with *ret_err saying which.
 */
int service_locate(const struct service *s, struct service_where *ret, char **ret_err);
/* List the cgroup's processes again (ret->pids replaced). -ENOENT when it is gone. */
int service_relist(struct service_where *w);
void service_where_clear(struct service_where *w);
/* {"cgroup", "hierarchy", "via", "main_pid", "processes", "pids" (the first 64)} */
json_t *service_where_to_json(const struct service_where *w);

/*
 * {"services": [definition + "now": where it is, or "error": why not], "errors": [...]};
 * locate false leaves "now" and "error" out.
 */
json_t *service_registry_to_json(const struct service_registry *r, bool locate);
