/* SPDX-License-Identifier: MIT */
/*
 * Test harness for integration tests: start the real argusd on a free
 * loopback port with a temporary state directory, talk HTTP to it with
 * libcurl, stop it (SIGTERM or SIGKILL), start it again on the same state.
 * Reads go to the TCP listener, writes to the control socket
 * ($state_dir/argusd.sock), where the test, root, may do everything.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "daemon/util.h"
#include "tests/stage.h"

struct daemon {
	char dir[128];	/* temporary directory: config, state, workloads */
	char conf[192];
	char sock[192]; /* the control socket */
	pid_t pid;
	unsigned port;
	int log_fd; /* argusd's stderr, appended to dir/argusd.log */
};

struct http_reply {
	long status;
	json_t *json; /* NULL when the body was not JSON */
	char *body;
	size_t len;
	char location[128];
};

static inline void reply_free(struct http_reply *r)
{
	json_decref(r->json);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct http_reply *r = ud;
	char *b = realloc(r->body, r->len + size * n + 1);

	if (!b)
		return 0;
	memcpy(b + r->len, p, size * n);
	r->len += size * n;
	b[r->len] = 0;
	r->body = b;
	return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct http_reply *r = ud;
	size_t len = size * n;

	if (len > 10 && strncasecmp(p, "Location: ", 10) == 0) {
		size_t l = len - 10;

		while (l && (p[10 + l - 1] == '\r' || p[10 + l - 1] == '\n'))
			l--;
		if (l >= sizeof(r->location))
			l = sizeof(r->location) - 1;
		memcpy(r->location, p + 10, l);
		r->location[l] = 0;
	}
	return len;
}

/* One request; body may be NULL. Returns the status (0 when nothing answered). */
static inline long http(struct daemon *d, const char *method, const char *path, const char *body,
			size_t body_len, struct http_reply *ret)
{
	bool read = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char url[512];

	memset(ret, 0, sizeof(*ret));
	if (read) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", d->port, path);
	} else {
		snprintf(url, sizeof(url), "http://localhost%s", path);
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, d->sock);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, ret);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, ret);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (ret->body)
		ret->json = json_loads(ret->body, 0, NULL);
	return ret->status;
}

static inline long http_get(struct daemon *d, const char *path, struct http_reply *ret)
{
	return http(d, "GET", path, NULL, 0, ret);
}

static inline long http_post(struct daemon *d, const char *path, const char *body,
			     struct http_reply *ret)
{
	return http(d, "POST", path, body, strlen(body), ret);
}

static inline const char *err_code(const struct http_reply *r)
{
	return json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
}

static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static inline void append_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * A sequence: a script (/bin/sh SCRIPT DIR) that, call by call, takes the
 * next line of DIR/values (the last one from then on), counts its calls in
 * DIR/count, and prints the value or sleeps for it. A test sets the values
 * (sequence_start), and so what an SLI says window by window, or how long a
 * workload's runs take. DIR belongs to nobody, who runs the script.
 */
struct sequence {
	char dir[256], script[256];
};

/* Make the sequence NAME in d's directory; 0 or a negative errno. */
static inline int sequence_make(struct sequence *q, const struct daemon *d, const char *name,
				bool sleeps)
{
	struct passwd *nobody = getpwnam("nobody");
	char text[512];

	snprintf(q->dir, sizeof(q->dir), "%s/%s", d->dir, name);
	snprintf(q->script, sizeof(q->script), "%s/%s.sh", d->dir, name);
	if (!nobody)
		return -ENOENT;
	if (mkdir(q->dir, 0755) < 0 || chown(q->dir, nobody->pw_uid, nobody->pw_gid) < 0)
		return -errno;
	snprintf(text, sizeof(text),
		 "#!/bin/sh\n"
		 "n=$(( $(cat \"$1/count\" 2>/dev/null || echo 0) + 1 ))\n"
		 "echo \"$n\" > \"$1/count\"\n"
		 "last=$(wc -l < \"$1/values\")\n"
		 "[ \"$n\" -le \"$last\" ] || n=$last\n"
		 "v=$(sed -n \"${n}p\" \"$1/values\")\n"
		 "%s\n",
		 sleeps ? "exec sleep \"$v\"" : "echo \"$v\"");
	write_text(q->script, text);
	return 0;
}

/*
 * A paced workload (a sleeping sequence) whose reference is extended and
 * whose diagnosis looks again (test-daemon's and test-llm's look_again).
 * The reference's runs after the warm-up: 800, 960, 880, 960 and 800 ms,
 * which vary, as a diagnosis's scores see them (the run farthest from the
 * median set aside, scaled as the null is), by about 12% with the script's
 * own start of 0.03 to 0.25 s: more than min_slowdown / tau (extended),
 * less than 15% (recorded again); then 880, 800, 960, 880 and 800 ms,
 * ten runs whose spread is about 85 ms. The diagnosis's runs: 1040 ms,
 * 1.8 to 2.1 spreads above their centre, short of the three one run must
 * pass and clear of the one below which a run counts as refuted. The gaps
 * are wide in ms because a run only gets slower than asked (the script's
 * start, a busy machine: one run under the sanitizers once took 60 ms
 * more than asked). Runs of 400 and 520 ms in turn, which the plain cv
 * of every run let be extended, vary by more than 15% as the scores see
 * five of them.
 */
#define PACED_REFERENCE                                                                            \
	"0.800\n0.800\n0.960\n0.880\n0.960\n0.800\n0.880\n0.800\n0.960\n0.880\n0.800\n"
#define PACED_SLOWER "0.800\n1.040\n"

/* Start the sequence again with these values (lines); 0 or a negative errno. */
static inline int sequence_start(const struct sequence *q, const char *values)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/values", q->dir);
	write_text(path, values);
	snprintf(path, sizeof(path), "%s/count", q->dir);
	return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
}

/* How many times the script has run since the sequence started. */
static inline int sequence_calls(const struct sequence *q)
{
	char path[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/count", q->dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

/*
 * Create the directory (searchable by the workloads' user), the config, the
 * workloads dir and the staged programs; extra config lines appended. Each
 * reference run waits for a quiet machine over a quarter of the default
 * interval (quiet_sample_ms): a test records hundreds of runs, and what the
 * wait decides is test-quiet's. References are not recorded again for the
 * host's pace (reference_pace_check): the counts of attempts and runs the
 * tests check are their runs' to decide, not the test machine's speed, and
 * what the pace decides is test-reference's (pace_slow). The packaged
 * configuration that test-systemd-boot installs keeps both defaults.
 */
static inline int daemon_prepare(struct daemon *d, const char *extra_conf)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");
	char path[256];
	FILE *f;
	int r;

	memset(d, 0, sizeof(*d));
	d->log_fd = -1;
	snprintf(d->dir, sizeof(d->dir), "/tmp/argus-itest-XXXXXX");
	if (!src || !build || !mkdtemp(d->dir) || chmod(d->dir, 0755) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/workloads", d->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/services", d->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/programs", d->dir);
	r = stage_programs(path);
	if (r < 0)
		return r;
	snprintf(d->conf, sizeof(d->conf), "%s/argusd.conf", d->dir);
	/* the default for a state directory other than the packaged one */
	snprintf(d->sock, sizeof(d->sock), "%s/state/argusd.sock", d->dir);
	f = fopen(d->conf, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"listen = 127.0.0.1:0\nstate_dir = %s/state\nworkloads_dir = %s/workloads\n"
		"services_dir = %s/services\nvictims_dir = %s/programs\n"
		"tree_file = %s/tree-data/tree.json\nschema_dir = %s/schema\n"
		"quiet_sample_ms = 250\nreference_pace_check = false\n%s",
		d->dir, d->dir, d->dir, d->dir, src, src, extra_conf ?: "");
	fclose(f);
	return 0;
}

/* Add a workload definition file. */
static inline void daemon_add_workload(struct daemon *d, const char *name, const char *json)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/workloads/%s.json", d->dir, name);
	write_text(path, json);
}

/* Add a service definition file. */
static inline void daemon_add_service(struct daemon *d, const char *name, const char *json)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/services/%s.json", d->dir, name);
	write_text(path, json);
}

/* Start argusd and wait until it listens; 0 or -errno (its log is in dir/argusd.log). */
static inline int daemon_start(struct daemon *d)
{
	const char *build = getenv("ARGUS_BUILD_DIR");
	char exe[256], logpath[256], buf[8192];
	int pfd[2];
	size_t len = 0;
	uint64_t deadline = now_mono_ns() + 60ull * 1000000000ull;

	snprintf(exe, sizeof(exe), "%s/argusd", build);
	snprintf(logpath, sizeof(logpath), "%s/argusd.log", d->dir);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	d->pid = fork();
	if (d->pid == 0) {
		/* a test that dies takes its daemon with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 2);
		execl(exe, exe, "--config", d->conf, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	d->port = 0;
	while (now_mono_ns() < deadline && len < sizeof(buf) - 1) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		ssize_t n;
		char *m;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(pfd[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		buf[len] = 0;
		m = strstr(buf, "(port ");
		if (m && strchr(m, ')')) {
			d->port = strtoul(m + 6, NULL, 10);
			break;
		}
	}
	/*
	 * What argusd said until it listened is in the log file when this
	 * returns (a test may count it at once); the rest is drained into it
	 * from a child so argusd never blocks. The child holds none of the
	 * test's own output (the test runner waits for that to close) and dies
	 * with the test.
	 */
	{
		int out = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (out >= 0) {
			(void)!write(out, buf, len);
			close(out);
		}
	}
	if (fork() == 0) {
		int out = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		ssize_t n;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
			(void)!write(out, buf, n);
		_exit(0);
	}
	close(pfd[0]);
	if (!d->port) {
		fprintf(stderr, "argusd did not start:\n%.*s\n", (int)len, buf);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Stop with a signal and reap; returns the exit status (or 128+signal). */
static inline int daemon_stop(struct daemon *d, int sig)
{
	int status = 0;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, sig);
	waitpid(d->pid, &status, 0);
	d->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Poll a job until it ends (or timeout_s passes); returns its final JSON
 * (owned) or NULL. ARGUS_TEST_JOB_TIME_SCALE (a whole number, 1 to 100)
 * multiplies timeout_s for slow machines (an emulated guest).
 */
static inline json_t *wait_job(struct daemon *d, json_int_t id, int timeout_s)
{
	const char *scale = getenv("ARGUS_TEST_JOB_TIME_SCALE");
	uint64_t deadline;
	char path[64];
	long k = scale ? strtol(scale, NULL, 10) : 1;

	if (k < 1 || k > 100)
		k = 1;
	deadline = now_mono_ns() + (uint64_t)timeout_s * (uint64_t)k * 1000000000ull;

	snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	while (now_mono_ns() < deadline) {
		struct http_reply r;
		const char *state;

		if (http_get(d, path, &r) == 200) {
			state = json_string_value(json_object_get(r.json, "state"));
			if (state && strcmp(state, "queued") && strcmp(state, "running")) {
				json_t *j = json_incref(r.json);

				reply_free(&r);
				return j;
			}
		}
		reply_free(&r);
		usleep(200 * 1000);
	}
	return NULL;
}

/*
 * A trace's runs of one level: its measured runs, how many of them were
 * looks again ("remeasure"), and its decision's reason ("" when none).
 */
static inline void level_runs(json_t *steps, json_int_t level, size_t *ret_measures,
			      size_t *ret_remeasures, const char **ret_reason)
{
	json_t *s;
	size_t i;

	*ret_measures = *ret_remeasures = 0;
	*ret_reason = "";
	json_array_foreach(steps, i, s)
	{
		const char *k = json_string_value(json_object_get(s, "kind")) ?: "";

		if (json_integer_value(json_object_get(s, "level")) != level)
			continue;
		*ret_measures += !strcmp(k, "measure");
		*ret_remeasures += !strcmp(k, "remeasure");
		if (!strcmp(k, "decision"))
			*ret_reason = json_string_value(json_object_get(s, "reason")) ?: "";
	}
}

/*
 * A JSON value as compact text for a failure message; the text lives until
 * the next call (kept, not leaked, so that a failed check under the leak
 * sanitizer reports the failure alone). "(none)" for NULL.
 */
static inline const char *json_text(const json_t *j)
{
	static char *text;

	free(text);
	text = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	return text ?: "(none)";
}

/* One value from d's database (sqlite3's output, its newline cut), into buf. */
static inline const char *db_value(const struct daemon *d, const char *sql, char *buf, size_t len)
{
	char cmd[768];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sqlite3 %s/state/argusd.db \"%s\"", d->dir, sql);
	buf[0] = 0;
	p = popen(cmd, "r");
	if (!p)
		return buf;
	if (!fgets(buf, len, p))
		buf[0] = 0;
	pclose(p);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static inline const char *job_state(const json_t *job)
{
	return json_string_value(json_object_get(job, "state"));
}

static inline void daemon_cleanup(struct daemon *d)
{
	char cmd[256];

	if (d->pid > 0)
		daemon_stop(d, SIGKILL);
	if (getenv("ARGUS_KEEP_TEST_DIRS"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	(void)!system(cmd);
}
