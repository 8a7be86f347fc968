/* SPDX-License-Identifier: MIT */
/*
 * Who may ask what. A caller is a peer of the control socket, known by its
 * SO_PEERCRED credentials, or a TCP client, known only by whether it sent
 * the bearer token. The checks that do not depend on a route (Host,
 * Origin, Content-Type, Authorization) and the ownership rules (jobs,
 * running targets) are here; http.c applies the first, routes.c the
 * second.
 *
 * Everything is pure (no logging, no globals) except the ownership of a
 * running target, which reads the process table under a root given by the
 * caller ("/proc" and "/sys/fs/cgroup" in argusd, a fake tree in tests).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "api/json.h"

enum api_listener {
	API_LISTENER_TCP,
	API_LISTENER_UNIX,
};

#define API_SUBMITTER_MAX 32

struct api_caller {
	enum api_listener listener;
	uid_t uid;  /* socket peers: SO_PEERCRED's (effective) uid */
	bool root;  /* socket peer with uid 0 */
	bool admin; /* socket peer: uid 0, argusd's own uid, or a member of api_group */
	bool token; /* TCP: this request carried the bearer token */
	char submitter[API_SUBMITTER_MAX + 1]; /* "uid:N", "token", "" (anonymous reader) */
};

/* A socket peer: uid and whether it is an admin. */
void access_caller_unix(struct api_caller *c, uid_t uid, bool admin);
/* A TCP client; token: it sent the right bearer token. */
void access_caller_tcp(struct api_caller *c, bool token);

/*
 * Whether a peer with primary gid and supplementary groups (n of them) is a
 * member of group api_gid. have_group false: there is no such group.
 */
bool access_in_group(gid_t gid, const gid_t *groups, size_t n, bool have_group, gid_t api_gid);

/*
 * The Host header rule. host NULL (HTTP/1.0 without one) is accepted; so
 * are the loopback names localhost, 127.0.0.1 and [::1], with or without a
 * port, the names in extra (space separated, compared without case and
 * without port), and listen_host, the listener's own address when given
 * ("10.0.0.5", "[2001:db8::1]"). Anything else is refused (421): a name that
 * a DNS rebinding attack made point here.
 */
bool access_host_allowed(const char *host, const char *extra, const char *listen_host);

/*
 * The Origin header rule: a request without one is accepted; one with an
 * Origin only when it is listed in origins (space separated, exact but
 * case-insensitive, "https://dash.example:8443"); "null" only when listed.
 */
bool access_origin_allowed(const char *origin, const char *origins);

/*
 * The Content-Type of a POST body: application/json, any case, with or
 * without parameters ("; charset=utf-8"). NULL (none) is refused.
 */
bool access_json_type(const char *type);

/*
 * Whether an Authorization header value is "Bearer <token>" for this token
 * (scheme without case, one or more spaces). The token is compared in
 * constant time over its length; authorization NULL is false.
 */
bool access_bearer_ok(const char *authorization, const char *token);

/*
 * A usable bearer token: 16 to 4096 visible ASCII characters (no spaces),
 * as read from the token file with its trailing newline removed.
 */
bool access_token_valid(const char *token);

/*
 * Whether caller may cancel a job of submitter (NULL for jobs recorded
 * before submitters were): its own, or any job for an admin.
 */
bool access_may_cancel(const struct api_caller *c, const char *submitter);

/*
 * Whether caller may record a reference (POST /references): an admin on
 * the socket, or a TCP client with the token.
 */
bool access_may_record_reference(const struct api_caller *c);

/*
 * Whether caller may diagnose or measure the running target of a request
 * ({"pid": N} or {"unit": "x.service"}): uid 0 always; another caller only
 * when every process of the target runs as it (real, effective and saved
 * uid), read from proc_root: the pid itself, every process of its process
 * group and its descendants; for a unit every process of its cgroup under
 * cgroup_root (the layouts of DESIGN.md: systemd/system.slice/UNIT and
 * system.slice/UNIT). A TCP client has no uid and may not. On refusal
 * -EPERM and *err (403 target_not_owned, or 403 target_needs_uid over
 * TCP); a target that cannot be found is -ESRCH and 400 bad_target.
 */
int access_target_check(const char *proc_root, const char *cgroup_root, const struct api_caller *c,
			const json_t *target, struct api_error *err);

/*
 * The worker's admission of a job (job_admit_t): a job on a running target
 * submitted by a non-root uid is checked again when it starts, since the
 * target's processes may have changed hands while it waited.
 */
int access_job_admit(const json_t *job, json_t **ret_error);
/*
 * The group whose members access_job_admit() counts as admins (api_group),
 * looked up when a job starts, so that a membership revoked since the job
 * was submitted counts no more. Set once at start.
 */
void access_set_admin_group(const char *name);
