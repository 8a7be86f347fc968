// SPDX-License-Identifier: MIT
/*
 * The access rules of the API (access.h). The request checks are string
 * rules on one header each. The ownership of a running target is read from
 * the process table: a pid target is the process, its process group and
 * its descendants (what the probe may follow), a unit target every process
 * of the unit's cgroup; each must run as the caller, by every uid the
 * kernel keeps for it, so that a setuid program or a process that kept a
 * saved root uid is never "owned" by the user who started it.
 */
#include "api/access.h"
#include "daemon/jobs.h"
#include "daemon/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HOST_MAX 255
#define TOKEN_MIN 16
#define TOKEN_MAX 4096
#define PROC_STATUS_MAX (64 * 1024)
#define CGROUP_PROCS_MAX (1 << 20)
#define CGROUP_DEPTH_MAX 8

void access_caller_unix(struct api_caller *c, uid_t uid, bool admin)
{
	*c = (struct api_caller){
	    .listener = API_LISTENER_UNIX,
	    .uid = uid,
	    .root = uid == 0,
	    .admin = admin || uid == 0,
	};
	snprintf(c->submitter, sizeof(c->submitter), "uid:%u", (unsigned)uid);
}

void access_caller_tcp(struct api_caller *c, bool token)
{
	*c = (struct api_caller){
	    .listener = API_LISTENER_TCP,
	    .uid = (uid_t)-1,
	    .token = token,
	};
	snprintf(c->submitter, sizeof(c->submitter), "%s", token ? "token" : "");
}

bool access_in_group(gid_t gid, const gid_t *groups, size_t n, bool have_group, gid_t api_gid)
{
	size_t i;

	if (!have_group)
		return false;
	if (gid == api_gid)
		return true;
	for (i = 0; i < n; i++)
		if (groups[i] == api_gid)
			return true;
	return false;
}

/* ---- headers ---- */

/*
 * The name part of "name[:port]" or "[v6][:port]" (brackets kept), lower
 * case, into buf; false when the shape is wrong (an empty name, a port that
 * is not digits, something after "]").
 */
static bool host_name(const char *host, char *buf, size_t len)
{
	const char *end, *port = NULL;
	size_t n, i;

	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return false;
		end++;
		if (*end == ':')
			port = end + 1;
		else if (*end)
			return false;
	} else {
		end = strchr(host, ':');
		if (end)
			port = end + 1;
		else
			end = host + strlen(host);
	}
	if (port && (!*port || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5))
		return false;
	n = end - host;
	if (n == 0 || n >= len)
		return false;
	for (i = 0; i < n; i++)
		buf[i] = tolower((unsigned char)host[i]);
	buf[n] = 0;
	return true;
}

/* Whether name is one of the space-separated words of list, by host_name's form. */
static bool in_name_list(const char *name, const char *list)
{
	char word[HOST_MAX + 1], wname[HOST_MAX + 1];
	const char *p = list;

	while (p && *p) {
		size_t n;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == 0)
			break;
		if (n < sizeof(word)) {
			memcpy(word, p, n);
			word[n] = 0;
			if (host_name(word, wname, sizeof(wname)) && strcmp(wname, name) == 0)
				return true;
		}
		p += n;
	}
	return false;
}

bool access_host_allowed(const char *host, const char *extra, const char *listen_host)
{
	static const char *const loopback[] = {"localhost", "127.0.0.1", "[::1]"};
	char name[HOST_MAX + 1];
	size_t i;

	if (!host)
		return true;
	if (strlen(host) > HOST_MAX || !host_name(host, name, sizeof(name)))
		return false;
	for (i = 0; i < ARRAY_SIZE(loopback); i++)
		if (strcmp(name, loopback[i]) == 0)
			return true;
	if (listen_host && in_name_list(name, listen_host))
		return true;
	return extra && in_name_list(name, extra);
}

bool access_origin_allowed(const char *origin, const char *origins)
{
	const char *p = origins;
	size_t len;

	if (!origin)
		return true;
	len = strlen(origin);
	while (p && *p) {
		size_t n;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == 0)
			break;
		if (n == len && strncasecmp(p, origin, n) == 0)
			return true;
		p += n;
	}
	return false;
}

bool access_json_type(const char *type)
{
	static const char json[] = "application/json";
	size_t n = sizeof(json) - 1;

	if (!type)
		return false;
	type += strspn(type, " \t");
	return strncasecmp(type, json, n) == 0 &&
	       (type[n] == 0 || type[n] == ';' || type[n] == ' ' || type[n] == '\t');
}

bool access_bearer_ok(const char *authorization, const char *token)
{
	const char *p;
	size_t plen, tlen, i;
	volatile unsigned char diff;

	if (!authorization || !token || !*token)
		return false;
	if (strncasecmp(authorization, "Bearer", 6) != 0 ||
	    (authorization[6] != ' ' && authorization[6] != '\t'))
		return false;
	p = authorization + 6;
	p += strspn(p, " \t");
	plen = strlen(p);
	while (plen > 0 && (p[plen - 1] == ' ' || p[plen - 1] == '\t'))
		plen--;
	tlen = strlen(token);
	/* every byte of the token is looked at, whatever matched before */
	diff = plen != tlen;
	for (i = 0; i < tlen; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < plen ? p[i] : 0);
	return diff == 0;
}

bool access_token_valid(const char *token)
{
	size_t n, i;

	if (!token)
		return false;
	n = strlen(token);
	if (n < TOKEN_MIN || n > TOKEN_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (token[i] <= ' ' || token[i] > '~')
			return false;
	return true;
}

/* ---- jobs and references ---- */

bool access_may_cancel(const struct api_caller *c, const char *submitter)
{
	if (!c)
		return false;
	if (c->admin)
		return true;
	return submitter && c->submitter[0] && strcmp(submitter, c->submitter) == 0;
}

bool access_may_record_reference(const struct api_caller *c)
{
	return c && (c->admin || c->token);
}

/* ---- running targets ---- */

struct proc_entry {
	pid_t pid, ppid, pgrp;
	bool in;
};

/* pid, ppid and pgrp from PROC/PID/stat; -ESRCH when the process is gone. */
static int read_stat(const char *proc_root, pid_t pid, struct proc_entry *ret)
{
	_cleanup_free_ char *path = xasprintf("%s/%d/stat", proc_root, (int)pid);
	_cleanup_free_ char *text = NULL;
	const char *p;
	int ppid, pgrp, r;

	r = read_file_bounded(path, 4096, &text, NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	/* the command may hold anything, parentheses included: after the last one */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %*c %d %d", &ppid, &pgrp) != 2)
		return -EIO;
	*ret = (struct proc_entry){.pid = pid, .ppid = ppid, .pgrp = pgrp};
	return 0;
}

/* Real, effective and saved uid from PROC/PID/status; -ESRCH when the process is gone. */
static int read_uids(const char *proc_root, pid_t pid, unsigned ret[3])
{
	_cleanup_free_ char *path = xasprintf("%s/%d/status", proc_root, (int)pid);
	_cleanup_free_ char *text = NULL;
	const char *p;
	int r;

	r = read_file_bounded(path, PROC_STATUS_MAX, &text, NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	p = strncmp(text, "Uid:", 4) == 0 ? text : strstr(text, "\nUid:");
	if (!p)
		return -EIO;
	p += p == text ? 4 : 5;
	if (sscanf(p, "%u %u %u", &ret[0], &ret[1], &ret[2]) != 3)
		return -EIO;
	return 0;
}

/*
 * Whether pid runs as uid by all three uids: 0 yes, -EPERM (with err
 * saying which uid it runs as), -ESRCH when it is gone, another errno when
 * /proc could not be read (refused as well: nothing proves ownership).
 */
static int check_owner(const char *proc_root, pid_t pid, uid_t uid, const char *what,
		       struct api_error *err)
{
	unsigned u[3];
	int r = read_uids(proc_root, pid, u);

	if (r == -ESRCH)
		return r;
	if (r < 0) {
		api_error_set(err, 403, "target_not_owned",
			      "the owner of process %d (%s) could not be read: %s; only root may "
			      "diagnose it",
			      (int)pid, what, strerror(-r));
		return -EPERM;
	}
	if (u[0] != uid || u[1] != uid || u[2] != uid) {
		unsigned other = u[0] != uid ? u[0] : u[1] != uid ? u[1] : u[2];

		api_error_set(err, 403, "target_not_owned",
			      "process %d (%s) runs as uid %u, not as uid %u: only an admin (root or "
			      "api_group), or the user every process of a target runs as, may "
			      "diagnose it",
			      (int)pid, what, other, (unsigned)uid);
		return -EPERM;
	}
	return 0;
}

/* Every process under proc_root (numeric directories that still have a stat). */
static int list_processes(const char *proc_root, struct proc_entry **ret, size_t *ret_n)
{
	_cleanup_free_ struct proc_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir(proc_root);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		struct proc_entry e;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || de->d_name[0] == '0')
			continue;
		if (read_stat(proc_root, pid, &e) < 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct proc_entry *p = realloc(v, ncap * sizeof(*v));

			if (!p) {
				closedir(dir);
				return -ENOMEM;
			}
			v = p;
			cap = ncap;
		}
		v[n++] = e;
	}
	closedir(dir);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;

	return (x > y) - (x < y);
}

static int check_pid_target(const char *proc_root, pid_t pid, uid_t uid, struct api_error *err)
{
	_cleanup_free_ struct proc_entry *procs = NULL;
	struct proc_entry self;
	size_t n = 0, i;
	bool grew;
	int r;

	r = read_stat(proc_root, pid, &self);
	if (r >= 0)
		r = check_owner(proc_root, pid, uid, "the target", err);
	if (r == -ESRCH || (r < 0 && r != -EPERM)) {
		api_error_set(err, 400, "bad_target", "there is no process %d", (int)pid);
		return -ESRCH;
	}
	if (r < 0)
		return r;

	r = list_processes(proc_root, &procs, &n);
	if (r < 0) {
		api_error_set(err, 403, "target_not_owned",
			      "the processes of %s could not be listed (%s); only root may "
			      "diagnose a running target now",
			      proc_root, strerror(-r));
		return -EPERM;
	}
	/*
	 * The process, its process group, then its descendants until no more
	 * join: a pass per generation, each parent found by binary search.
	 */
	qsort(procs, n, sizeof(*procs), by_pid);
	for (i = 0; i < n; i++)
		procs[i].in = procs[i].pid == pid || (self.pgrp > 0 && procs[i].pgrp == self.pgrp);
	do {
		grew = false;
		for (i = 0; i < n; i++) {
			struct proc_entry key = {.pid = procs[i].ppid}, *parent;

			if (procs[i].in)
				continue;
			parent = bsearch(&key, procs, n, sizeof(*procs), by_pid);
			if (parent && parent->in)
				procs[i].in = grew = true;
		}
	} while (grew);

	for (i = 0; i < n; i++) {
		if (!procs[i].in || procs[i].pid == pid)
			continue;
		r = check_owner(proc_root, procs[i].pid, uid,
				procs[i].pgrp == self.pgrp ? "in the target's process group"
							   : "a descendant of the target",
				err);
		if (r < 0 && r != -ESRCH)
			return r;
	}
	return 0;
}

/* Every process of one cgroup directory and those below it (depth-bounded). */
static int check_cgroup_dir(const char *proc_root, const char *dir, int depth, uid_t uid,
			    size_t *n_procs, struct api_error *err)
{
	_cleanup_free_ char *procs_path = xasprintf("%s/cgroup.procs", dir);
	_cleanup_free_ char *text = NULL;
	char *line, *rest;
	struct dirent *de;
	DIR *d;
	int r;

	r = read_file_bounded(procs_path, CGROUP_PROCS_MAX, &text, NULL);
	if (r < 0) {
		api_error_set(err, 403, "target_not_owned",
			      "the processes of the unit could not be read (%s); only root may "
			      "diagnose it",
			      strerror(-r));
		return -EPERM;
	}
	rest = text;
	while ((line = strsep(&rest, "\n"))) {
		char *end;
		long pid = strtol(line, &end, 10);

		if (!*line)
			continue;
		if (*end || pid <= 0)
			continue;
		r = check_owner(proc_root, pid, uid, "in the unit's cgroup", err);
		if (r == -ESRCH)
			continue;
		if (r < 0)
			return r;
		(*n_procs)++;
	}
	if (depth >= CGROUP_DEPTH_MAX)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = xasprintf("%s/%s", dir, de->d_name);
		r = check_cgroup_dir(proc_root, sub, depth + 1, uid, n_procs, err);
		if (r < 0) {
			closedir(d);
			return r;
		}
	}
	closedir(d);
	return 0;
}

static int check_unit_target(const char *proc_root, const char *cgroup_root, const char *unit,
			     uid_t uid, struct api_error *err)
{
	static const char *const slices[] = {"systemd/system.slice", "system.slice"};
	size_t i, n_procs = 0;
	int r;

	for (i = 0; i < ARRAY_SIZE(slices); i++) {
		_cleanup_free_ char *dir = xasprintf("%s/%s/%s", cgroup_root, slices[i], unit);
		_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", dir);

		if (access(procs, F_OK) < 0)
			continue;
		r = check_cgroup_dir(proc_root, dir, 0, uid, &n_procs, err);
		if (r < 0)
			return r;
		if (n_procs == 0) {
			api_error_set(err, 400, "bad_target", "unit %.*s has no running process",
				      API_QUOTE_MAX, unit);
			return -ESRCH;
		}
		return 0;
	}
	api_error_set(err, 400, "bad_target", "unit %.*s: no cgroup found (is it running?)",
		      API_QUOTE_MAX, unit);
	return -ESRCH;
}

int access_target_check(const char *proc_root, const char *cgroup_root, const struct api_caller *c,
			const json_t *target, struct api_error *err)
{
	json_t *pid = json_object_get(target, "pid");
	const char *unit = json_string_value(json_object_get(target, "unit"));

	if (!c || !json_is_object(target)) {
		api_error_set(err, 400, "bad_target",
			      "\"target\" needs \"pid\": N or \"unit\": \"NAME.service\"");
		return -EINVAL;
	}
	/* admins (root and api_group) may diagnose any target; others only what they own */
	if (c->listener == API_LISTENER_UNIX && c->admin)
		return 0;
	if (c->listener != API_LISTENER_UNIX) {
		api_error_set(err, 403, "target_needs_uid",
			      "a running target is diagnosed only through the control socket, "
			      "by an admin (root or api_group) or by the user its processes run as; "
			      "the token identifies no user");
		return -EPERM;
	}
	if (json_is_integer(pid) && json_integer_value(pid) > 0 &&
	    json_integer_value(pid) <= INT32_MAX)
		return check_pid_target(proc_root, (pid_t)json_integer_value(pid), c->uid, err);
	if (unit && !strchr(unit, '/'))
		return check_unit_target(proc_root, cgroup_root, unit, c->uid, err);
	api_error_set(err, 400, "bad_target",
		      "\"target\" needs \"pid\": N or \"unit\": \"NAME.service\"");
	return -EINVAL;
}

static char admin_group[64]; /* api_group, for the worker's admission of jobs */

void access_set_admin_group(const char *name)
{
	snprintf(admin_group, sizeof(admin_group), "%s", name ? name : "");
}

/* Whether uid is an admin now: root, or a member of api_group (primary or supplementary). */
static bool uid_is_admin(uid_t uid)
{
	struct passwd pw, *pwr = NULL;
	struct group gr, *grr = NULL;
	char pwbuf[4096], grbuf[16384];
	gid_t groups[256];
	int n = (int)ARRAY_SIZE(groups);

	if (uid == 0)
		return true;
	if (!admin_group[0] || getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwr) != 0 || !pwr ||
	    getgrnam_r(admin_group, &gr, grbuf, sizeof(grbuf), &grr) != 0 || !grr)
		return false;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
		return false;
	return access_in_group(pw.pw_gid, groups, (size_t)n, true, gr.gr_gid);
}

int access_job_admit(const json_t *job, json_t **ret_error)
{
	const char *submitter = json_string_value(json_object_get(job, "submitter"));
	json_t *target = json_object_get(json_object_get(job, "request"), "target");
	struct api_caller c;
	struct api_error e;
	unsigned uid;
	char tail;
	int r;

	/* workloads are argusd's own; jobs from before submitters were recorded ran as before */
	if (!target || !submitter)
		return 0;
	if (strcmp(submitter, "token") == 0) {
		access_caller_tcp(&c, true);
	} else if (sscanf(submitter, "uid:%u%c", &uid, &tail) == 1) {
		access_caller_unix(&c, uid, uid_is_admin(uid));
	} else {
		*ret_error = job_error("not_admitted", "the job's submitter is not one argusd knows");
		return -EPERM;
	}
	r = access_target_check("/proc", "/sys/fs/cgroup", &c, target, &e);
	/* a target that is gone is the runner's to report */
	if (r >= 0 || r == -ESRCH)
		return 0;
	*ret_error = job_error(e.code, "%s", e.message);
	return r;
}
