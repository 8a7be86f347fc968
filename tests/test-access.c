// SPDX-License-Identifier: MIT
/*
 * Who may ask argusd what (README "Security model"), against the real
 * daemon: the control socket's owner, group and mode; a user outside the
 * api group refused there (403) and a member served; the TCP listener
 * serving reads to anyone and writes only with the bearer token (401 with
 * WWW-Authenticate without it); jobs that only their submitter or an admin
 * may cancel; running targets that a member may diagnose only when it owns
 * every process of them, checked again when the job starts; form bodies
 * (415), foreign Host names (421) and Origins (403); a per-submitter queue
 * quota (429 with Retry-After); DELETE /references/ID; /healthz answering
 * while one process holds 200 half-open connections, on TCP and on the
 * socket; slow clients cut by the deadlines; an exposed listener without a
 * token refused at start; the token never in the log.
 *
 * The test users: "nobody" (an existing unprivileged uid) with its groups
 * set by setgroups(2) in a forked child: with a group made for the test
 * (groupadd, removed at exit, on a signal too) it is a member, without it
 * an outsider. argusd reads the groups a peer had at connect(2) with
 * SO_PEERGROUPS, so nothing else about the user has to change.
 *
 * The pure checks (Host, Origin, Content-Type, bearer, target ownership on
 * a fake /proc) are tested first, directly.
 */
#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "api/access.h"
#include "api/http.h"
#include "daemon/config.h"
#include "tests/daemon-harness.h"
#include "tests/tap.h"

#define TOKEN "t0k3n-for-the-access-test-0123456789"
#define NOBODY 65534
#define HALF_OPEN 200

static struct daemon d;
static char group_name[32];
static gid_t group_gid;

/* Name the part that runs, so that a failure above it is placed. */
static void subtest(const char *name)
{
	static uint64_t t0;

	if (!t0)
		t0 = now_mono_ns();
	fprintf(stderr, "# %s (at %.1f s)\n", name, (now_mono_ns() - t0) / 1e9);
}

/* ---- the test group: made here, removed at exit whatever happens ---- */

static void run_quiet(const char *prog, const char *arg1, const char *arg2)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execl(prog, prog, arg1, arg2, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void remove_group(void)
{
	if (group_name[0])
		run_quiet("/usr/sbin/groupdel", group_name, NULL);
	group_name[0] = 0;
}

static void on_fatal_signal(int sig)
{
	/* fork and exec are async-signal-safe; the group must not outlive the test */
	remove_group();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void make_group(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS};
	struct group *g;
	size_t i;

	snprintf(group_name, sizeof(group_name), "argustest%d", (int)getpid());
	atexit(remove_group);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], on_fatal_signal);
	run_quiet("/usr/sbin/groupadd", "--system", group_name);
	g = getgrnam(group_name);
	REQUIRE(g);
	group_gid = g->gr_gid;
}

/* ---- a client with every knob: listener, headers, user ---- */

enum via { VIA_TCP, VIA_UNIX };
enum who { AS_ROOT, AS_MEMBER, AS_OUTSIDER };

struct call {
	const char *method;
	const char *path;
	const char *body;
	const char *type;      /* Content-Type of the body; NULL: application/json */
	const char *header[3]; /* more "Name: value" lines */
	enum via via;
	long timeout_ms; /* 0: 20 s */
};

struct answer {
	long status;
	char retry_after[32];
	char authenticate[128];
	char *body;
	size_t len;
	json_t *json;
};

static void answer_clear(struct answer *a)
{
	free(a->body);
	json_decref(a->json);
	memset(a, 0, sizeof(*a));
}

static size_t on_answer_body(char *p, size_t size, size_t n, void *ud)
{
	struct answer *a = ud;
	char *b = realloc(a->body, a->len + size * n + 1);

	if (!b)
		return 0;
	memcpy(b + a->len, p, size * n);
	a->len += size * n;
	b[a->len] = 0;
	a->body = b;
	return size * n;
}

static void copy_header(const char *line, size_t len, const char *name, char *dst, size_t dlen)
{
	size_t n = strlen(name);

	if (len <= n + 1 || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return;
	line += n + 1;
	len -= n + 1;
	while (len && *line == ' ')
		line++, len--;
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (len >= dlen)
		len = dlen - 1;
	memcpy(dst, line, len);
	dst[len] = 0;
}

static size_t on_answer_header(char *p, size_t size, size_t n, void *ud)
{
	struct answer *a = ud;

	copy_header(p, size * n, "Retry-After", a->retry_after, sizeof(a->retry_after));
	copy_header(p, size * n, "WWW-Authenticate", a->authenticate, sizeof(a->authenticate));
	return size * n;
}

/* The request, from this process; a->status 0 when nothing answered. */
static void perform(const struct call *c, struct answer *a)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char url[512], type[128];
	size_t i;

	memset(a, 0, sizeof(*a));
	if (c->via == VIA_TCP) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", d.port, c->path);
	} else {
		snprintf(url, sizeof(url), "http://localhost%s", c->path);
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, d.sock);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_answer_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_answer_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms ? c->timeout_ms : 20000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (strcmp(c->method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (c->body) {
		snprintf(type, sizeof(type), "Content-Type: %s", c->type ?: "application/json");
		hdr = curl_slist_append(hdr, type);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(c->body));
	}
	for (i = 0; i < ARRAY_SIZE(c->header) && c->header[i]; i++)
		hdr = curl_slist_append(hdr, c->header[i]);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (a->body)
		a->json = json_loads(a->body, 0, NULL);
}

/* Become nobody: with the test group among its groups (a member) or without any. */
static void become_nobody(bool member)
{
	gid_t groups[1] = {group_gid};

	if (setgroups(member ? 1 : 0, groups) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(98);
}

/* The request as who: nobody's run in a child, its answer sent back through a pipe. */
static long ask(enum who who, const struct call *c, struct answer *a)
{
	char *buf = NULL, *p, *q;
	size_t len = 0, cap = 0;
	int pfd[2], status;
	pid_t pid;

	if (who == AS_ROOT) {
		perform(c, a);
		return a->status;
	}
	REQUIRE(pipe(pfd) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct answer mine;
		FILE *f;

		close(pfd[0]);
		become_nobody(who == AS_MEMBER);
		perform(c, &mine);
		f = fdopen(pfd[1], "w");
		if (!f)
			_exit(97);
		fprintf(f, "%ld\n%s\n%s\n%s", mine.status, mine.retry_after, mine.authenticate,
			mine.body ?: "");
		fclose(f);
		_exit(0);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n;

		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			REQUIRE(buf);
		}
		n = read(pfd[0], buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	buf[len] = 0;
	memset(a, 0, sizeof(*a));
	a->status = strtol(buf, &p, 10);
	p = strchr(p, '\n') + 1;
	q = strchr(p, '\n');
	snprintf(a->retry_after, sizeof(a->retry_after), "%.*s", (int)(q - p), p);
	p = q + 1;
	q = strchr(p, '\n');
	snprintf(a->authenticate, sizeof(a->authenticate), "%.*s", (int)(q - p), p);
	a->body = xstrdup(q + 1);
	a->json = json_loads(a->body, 0, NULL);
	free(buf);
	return a->status;
}

static const char *code_of(const struct answer *a)
{
	return json_string_value(json_object_get(json_object_get(a->json, "error"), "code")) ?: "";
}

#define EXPECT(a, st, code)                                                                        \
	CHECKF((a)->status == (st) && strcmp(code_of(a), code) == 0, "want %d %s, got %ld %s", st, \
	       code, (a)->status, (a)->body ?: "")

static json_int_t job_id(const struct answer *a)
{
	return json_integer_value(json_object_get(a->json, "id"));
}

/* POST as who over via; the job id when 202. */
static json_int_t post_as(enum who who, enum via via, const char *token, const char *path,
			  const char *body, struct answer *a)
{
	char auth[128];
	struct call c = {"POST", path, body, .via = via};

	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		c.header[0] = auth;
	}
	ask(who, &c, a);
	return a->status == 202 ? job_id(a) : 0;
}

static long delete_as(enum who who, enum via via, const char *token, const char *path,
		      struct answer *a)
{
	char auth[128];
	struct call c = {"DELETE", path, .via = via};

	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		c.header[0] = auth;
	}
	return ask(who, &c, a);
}

static const char *job_field(json_int_t id, const char *key, char *buf, size_t len)
{
	struct http_reply r;
	char path[64];

	snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	buf[0] = 0;
	if (http_get(&d, path, &r) == 200)
		snprintf(buf, len, "%s", json_string_value(json_object_get(r.json, key)) ?: "");
	reply_free(&r);
	return buf;
}

/* Wait until job id has left "queued" (started, or ended). */
static bool wait_started(json_int_t id)
{
	char state[32];
	int i;

	for (i = 0; i < 300; i++) {
		job_field(id, "state", state, sizeof(state));
		if (*state && strcmp(state, "queued") != 0)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* argusd's log so far (its stderr, copied by the harness's drainer), once it holds want. */
static char *read_log(const char *dir, const char *want)
{
	char path[256];
	char *text = NULL;
	int i;

	snprintf(path, sizeof(path), "%s/argusd.log", dir);
	for (i = 0; i < 50; i++) {
		free(text);
		text = NULL;
		if (read_file_bounded(path, 8 << 20, &text, NULL) == 0 &&
		    (!want || strstr(text, want)))
			break;
		usleep(100 * 1000);
	}
	return text;
}

/* ---- processes for the target checks ---- */

/* A child that sleeps in a process group of its own, as uid (0 or nobody). */
static pid_t spawn_sleeper(uid_t uid, pid_t pgrp)
{
	int pfd[2];
	char c;
	pid_t pid;

	REQUIRE(pipe(pfd) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		if (setpgid(0, pgrp) < 0)
			_exit(96);
		if (uid != 0)
			become_nobody(false);
		(void)!write(pfd[1], "x", 1);
		close(pfd[1]);
		for (;;)
			pause();
	}
	close(pfd[1]);
	REQUIRE(read(pfd[0], &c, 1) == 1);
	close(pfd[0]);
	return pid;
}

static void kill_wait(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* ---- pure checks ---- */

static void test_header_rules(void)
{
	subtest("header_rules");
	CHECK(access_host_allowed(NULL, NULL, NULL));
	CHECK(access_host_allowed("localhost", NULL, NULL));
	CHECK(access_host_allowed("LocalHost:8321", NULL, NULL));
	CHECK(access_host_allowed("127.0.0.1:1", NULL, NULL));
	CHECK(access_host_allowed("[::1]", NULL, NULL));
	CHECK(access_host_allowed("[::1]:8321", NULL, NULL));
	CHECK(!access_host_allowed("evil.example", NULL, NULL));
	CHECK(!access_host_allowed("localhost.evil.example", NULL, NULL));
	CHECK(!access_host_allowed("127.0.0.2", NULL, NULL));
	CHECK(!access_host_allowed("localhost:", NULL, NULL));
	CHECK(!access_host_allowed("localhost:80x", NULL, NULL));
	CHECK(!access_host_allowed("[::1]x", NULL, NULL));
	CHECK(!access_host_allowed("", NULL, NULL));
	CHECK(!access_host_allowed(":80", NULL, NULL));
	CHECK(access_host_allowed("dash.internal:443", "argus.test dash.internal", NULL));
	CHECK(access_host_allowed("DASH.internal", "argus.test,dash.internal", NULL));
	CHECK(!access_host_allowed("dash.internal.evil", "dash.internal", NULL));
	CHECK(!access_host_allowed("dash", "dash.internal", NULL));
	CHECK(access_host_allowed("10.0.0.5:8321", NULL, "10.0.0.5"));
	CHECK(access_host_allowed("[2001:db8::1]:8321", NULL, "[2001:db8::1]"));
	CHECK(!access_host_allowed("10.0.0.6:8321", NULL, "10.0.0.5"));

	CHECK(access_origin_allowed(NULL, NULL));
	CHECK(!access_origin_allowed("https://evil.example", NULL));
	CHECK(!access_origin_allowed("null", "https://dash.test"));
	CHECK(access_origin_allowed("null", "null"));
	CHECK(access_origin_allowed("https://dash.test", "http://a https://dash.test"));
	CHECK(access_origin_allowed("HTTPS://Dash.Test", "https://dash.test"));
	CHECK(!access_origin_allowed("https://dash.test:8443", "https://dash.test"));
	CHECK(!access_origin_allowed("https://dash.tes", "https://dash.test"));

	CHECK(access_json_type("application/json"));
	CHECK(access_json_type("application/json; charset=utf-8"));
	CHECK(access_json_type("Application/JSON;charset=UTF-8"));
	CHECK(!access_json_type(NULL));
	CHECK(!access_json_type(""));
	CHECK(!access_json_type("application/x-www-form-urlencoded"));
	CHECK(!access_json_type("multipart/form-data; boundary=x"));
	CHECK(!access_json_type("text/plain"));
	CHECK(!access_json_type("application/jsonp"));
	CHECK(!access_json_type("application/json-seq"));

	CHECK(access_bearer_ok("Bearer " TOKEN, TOKEN));
	CHECK(access_bearer_ok("bearer   " TOKEN "  ", TOKEN));
	CHECK(!access_bearer_ok("Bearer " TOKEN "x", TOKEN));
	CHECK(!access_bearer_ok("Bearer t0k3n", TOKEN));
	CHECK(!access_bearer_ok("Bearer ", TOKEN));
	CHECK(!access_bearer_ok("Basic " TOKEN, TOKEN));
	CHECK(!access_bearer_ok("Bearer" TOKEN, TOKEN));
	CHECK(!access_bearer_ok(NULL, TOKEN));
	CHECK(!access_bearer_ok("Bearer x", NULL));
	CHECK(!access_bearer_ok("Bearer x", ""));

	CHECK(access_token_valid(TOKEN));
	CHECK(!access_token_valid("short"));
	CHECK(!access_token_valid("has a space in the middle of it"));
	CHECK(!access_token_valid("tab\tinside-the-token-here"));
	CHECK(!access_token_valid(NULL));

	{
		gid_t groups[] = {4, 27, 1001};

		CHECK(access_in_group(1001, NULL, 0, true, 1001));
		CHECK(access_in_group(100, groups, 3, true, 27));
		CHECK(!access_in_group(100, groups, 3, true, 28));
		CHECK(!access_in_group(27, groups, 3, false, 27));
	}
}

static void test_caller_rules(void)
{
	struct api_caller root, member, other, token, reader;

	subtest("caller_rules");
	access_caller_unix(&root, 0, false);
	access_caller_unix(&member, 1000, true);
	access_caller_unix(&other, 1001, false);
	access_caller_tcp(&token, true);
	access_caller_tcp(&reader, false);
	CHECK(root.admin && root.root && strcmp(root.submitter, "uid:0") == 0);
	CHECK(member.admin && !member.root && strcmp(member.submitter, "uid:1000") == 0);
	CHECK(strcmp(token.submitter, "token") == 0 && !token.admin);
	CHECK(reader.submitter[0] == 0);

	CHECK(access_may_cancel(&root, "token"));
	CHECK(access_may_cancel(&member, "uid:0"));
	CHECK(access_may_cancel(&member, NULL));
	CHECK(access_may_cancel(&other, "uid:1001"));
	CHECK(!access_may_cancel(&other, "uid:1000"));
	CHECK(!access_may_cancel(&other, NULL));
	CHECK(access_may_cancel(&token, "token"));
	CHECK(!access_may_cancel(&token, "uid:0"));
	CHECK(!access_may_cancel(&reader, ""));
	CHECK(!access_may_cancel(NULL, "uid:0"));

	CHECK(access_may_record_reference(&root) && access_may_record_reference(&member) &&
	      access_may_record_reference(&token));
	CHECK(!access_may_record_reference(&other) && !access_may_record_reference(&reader));
}

static void fake_proc(const char *root, int pid, int ppid, int pgrp, unsigned ruid, unsigned euid)
{
	char path[256], text[256];

	snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
	snprintf(text, sizeof(text), "%d (a (b) c) S %d %d %d 0 -1 4194560 0 0\n", pid, ppid, pgrp,
		 pgrp);
	write_text(path, text);
	snprintf(path, sizeof(path), "%s/proc/%d/status", root, pid);
	snprintf(text, sizeof(text),
		 "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\n"
		 "Uid:\t%u\t%u\t%u\t%u\nGid:\t0\t0\t0\t0\n",
		 pid, pid, ruid, euid, euid, euid);
	write_text(path, text);
}

static int check_target(const char *root, const struct api_caller *c, const char *json,
			struct api_error *e)
{
	char proc[256], cg[256];
	json_t *t = json_loads(json, 0, NULL);
	int r;

	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cgroup", root);
	memset(e, 0, sizeof(*e));
	r = access_target_check(proc, cg, c, t, e);
	json_decref(t);
	return r;
}

static void test_target_rules(void)
{
	char root[] = "/tmp/argus-access-proc-XXXXXX", path[300], cmd[400];
	struct api_caller user, root_caller, token;
	struct api_error e;

	subtest("target_rules");
	REQUIRE(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	/* the ownership rule is for callers that are not admins */
	access_caller_unix(&user, 1000, false);
	access_caller_unix(&root_caller, 0, false);
	access_caller_tcp(&token, true);

	/* 100 leads its group; 101 in it; 102 a grandchild in a group of its own */
	fake_proc(root, 100, 1, 100, 1000, 1000);
	fake_proc(root, 101, 100, 100, 1000, 1000);
	fake_proc(root, 102, 101, 102, 1000, 1000);
	fake_proc(root, 300, 1, 300, 0, 0);
	CHECK(check_target(root, &user, "{\"pid\": 100}", &e) == 0);
	CHECK(check_target(root, &root_caller, "{\"pid\": 300}", &e) == 0);
	CHECK(check_target(root, &user, "{\"pid\": 300}", &e) == -EPERM);
	CHECK(e.status == 403 && strcmp(e.code, "target_not_owned") == 0 &&
	      strstr(e.message, "process 300"));
	CHECK(check_target(root, &token, "{\"pid\": 100}", &e) == -EPERM);
	CHECK(e.status == 403 && strcmp(e.code, "target_needs_uid") == 0);
	CHECK(check_target(root, &user, "{\"pid\": 999}", &e) == -ESRCH);
	CHECK(e.status == 400 && strcmp(e.code, "bad_target") == 0);

	/* a root process joins the target's process group */
	fake_proc(root, 103, 1, 100, 0, 0);
	CHECK(check_target(root, &user, "{\"pid\": 100}", &e) == -EPERM);
	CHECK(strstr(e.message, "process 103") && strstr(e.message, "process group"));
	fake_proc(root, 103, 1, 103, 0, 0);
	CHECK(check_target(root, &user, "{\"pid\": 100}", &e) == 0);
	/* a descendant that is another user's */
	fake_proc(root, 102, 101, 102, 1001, 1001);
	CHECK(check_target(root, &user, "{\"pid\": 100}", &e) == -EPERM);
	CHECK(strstr(e.message, "process 102") && strstr(e.message, "descendant"));
	fake_proc(root, 102, 101, 102, 1000, 1000);
	/* started by the user, running with root's effective uid (setuid) */
	fake_proc(root, 101, 100, 100, 1000, 0);
	CHECK(check_target(root, &user, "{\"pid\": 100}", &e) == -EPERM);
	fake_proc(root, 101, 100, 100, 1000, 1000);
	CHECK(check_target(root, &user, "{\"pid\": 100}", &e) == 0);

	/* units: every process of the cgroup, the ones below it included */
	snprintf(path, sizeof(path), "%s/cgroup/system.slice/x.service/sub", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	REQUIRE(system(cmd) == 0);
	snprintf(path, sizeof(path), "%s/cgroup/system.slice/x.service/cgroup.procs", root);
	write_text(path, "100\n101\n");
	snprintf(path, sizeof(path), "%s/cgroup/system.slice/x.service/sub/cgroup.procs", root);
	write_text(path, "102\n");
	CHECK(check_target(root, &user, "{\"unit\": \"x.service\"}", &e) == 0);
	write_text(path, "102\n300\n");
	CHECK(check_target(root, &user, "{\"unit\": \"x.service\"}", &e) == -EPERM);
	CHECK(strstr(e.message, "process 300"));
	CHECK(check_target(root, &root_caller, "{\"unit\": \"x.service\"}", &e) == 0);
	CHECK(check_target(root, &user, "{\"unit\": \"y.service\"}", &e) == -ESRCH);
	CHECK(e.status == 400 && strcmp(e.code, "bad_target") == 0);
	write_text(path, "");
	snprintf(path, sizeof(path), "%s/cgroup/system.slice/x.service/cgroup.procs", root);
	write_text(path, "");
	CHECK(check_target(root, &user, "{\"unit\": \"x.service\"}", &e) == -ESRCH);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

static void test_socket_path_default(void)
{
	struct config c;
	char *p;

	subtest("socket_path_default");
	config_defaults(&c);
	p = config_unix_path(&c);
	CHECK(strcmp(p, "/run/argusd/argusd.sock") == 0);
	free(p);
	free(c.state_dir);
	c.state_dir = xstrdup("/srv/argus");
	p = config_unix_path(&c);
	CHECK(strcmp(p, "/srv/argus/argusd.sock") == 0);
	free(p);
	c.listen_unix = xstrdup("/run/x.sock");
	p = config_unix_path(&c);
	CHECK(strcmp(p, "/run/x.sock") == 0);
	free(p);
	config_free(&c);
}

/* ---- against the daemon ---- */

static void test_socket_file(void)
{
	struct stat st;
	_cleanup_free_ char *log = NULL;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, status;
	pid_t pid;

	subtest("socket_file");
	REQUIRE(lstat(d.sock, &st) == 0);
	CHECKF(S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0660 && st.st_uid == 0 &&
		   st.st_gid == group_gid,
	       "mode %o uid %u gid %u (group %u)", st.st_mode & 07777, st.st_uid, st.st_gid,
	       group_gid);
	log = read_log(d.dir, "argusd ready");
	CHECKF(log && strstr(log, "argusd ready: listening on") && strstr(log, d.sock),
	       "the ready line names the socket");

	/* the file's mode is the first barrier: an outsider cannot even connect */
	memcpy(sa.sun_path, d.sock, strnlen(d.sock, sizeof(sa.sun_path) - 1));
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		become_nobody(false);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		_exit(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno == EACCES ? 0
											     : 1);
	}
	waitpid(pid, &status, 0);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "outsider's connect: EACCES");
}

static void test_socket_peers(void)
{
	struct call health = {"GET", "/healthz", .via = VIA_UNIX};
	struct answer a;

	subtest("socket_peers");
	/* argusd's own check behind it: open the file to everyone, as a mistake would */
	REQUIRE(chmod(d.sock, 0666) == 0);
	ask(AS_OUTSIDER, &health, &a);
	EXPECT(&a, 403, "forbidden");
	CHECKF(strstr(a.body ?: "", "uid 65534"), "%s", a.body ?: "");
	answer_clear(&a);
	post_as(AS_OUTSIDER, VIA_UNIX, NULL, "/diagnose", "{\"workload\": \"quick\"}", &a);
	EXPECT(&a, 403, "forbidden");
	answer_clear(&a);

	/* a member by a supplementary group, as SO_PEERGROUPS shows it */
	CHECK(ask(AS_MEMBER, &health, &a) == 200);
	CHECK(strcmp(json_string_value(json_object_get(a.json, "status")) ?: "", "ok") == 0);
	answer_clear(&a);
	CHECK(ask(AS_ROOT, &health, &a) == 200);
	answer_clear(&a);
}

static void test_tcp_token(void)
{
	struct call c = {"GET", "/healthz", .via = VIA_TCP};
	struct answer a;

	subtest("tcp_token");
	CHECK(ask(AS_ROOT, &c, &a) == 200);
	answer_clear(&a);
	c.path = "/jobs";
	CHECK(ask(AS_ROOT, &c, &a) == 200);
	answer_clear(&a);
	c.path = "/workloads";
	CHECK(ask(AS_OUTSIDER, &c, &a) == 200);
	answer_clear(&a);

	/* the test is root: over TCP that counts for nothing */
	post_as(AS_ROOT, VIA_TCP, NULL, "/diagnose", "{\"workload\": \"quick\"}", &a);
	EXPECT(&a, 401, "unauthorized");
	CHECKF(strncmp(a.authenticate, "Bearer", 6) == 0, "WWW-Authenticate: %s", a.authenticate);
	answer_clear(&a);
	post_as(AS_ROOT, VIA_TCP, "wrong-token-of-the-right-length", "/diagnose",
		"{\"workload\": \"quick\"}", &a);
	EXPECT(&a, 401, "unauthorized");
	answer_clear(&a);
	delete_as(AS_OUTSIDER, VIA_TCP, NULL, "/jobs/1", &a);
	EXPECT(&a, 401, "unauthorized");
	answer_clear(&a);
	/* a GET with a wrong token is still a GET */
	c.header[0] = "Authorization: Bearer nope";
	CHECK(ask(AS_OUTSIDER, &c, &a) == 200);
	answer_clear(&a);
}

/* A reference of the quick workload, recorded while the queue is idle. */
static json_int_t record_quick_reference(void)
{
	struct answer a;
	json_t *job;
	json_int_t id, ref = 0;

	id = post_as(AS_ROOT, VIA_UNIX, NULL, "/references",
		     "{\"workload\": \"quick\", \"repeats\": 3}", &a);
	CHECKF(id > 0, "POST /references quick: %ld %s", a.status, a.body ?: "");
	answer_clear(&a);
	job = id ? wait_job(&d, id, 240) : NULL;
	CHECKF(job && strcmp(job_state(job), "succeeded") == 0, "quick reference: %s",
	       job ? json_text(job) : "timeout");
	if (job)
		ref = json_integer_value(
		    json_object_get(json_object_get(job, "result"), "reference"));
	json_decref(job);
	return ref;
}

static void test_ownership_and_quota(json_int_t ref)
{
	json_int_t blocker, r1, r2, t2, member_job;
	char path[64], body[160], buf[64];
	struct answer a;
	pid_t root_pid, nobody_pid, mixed_leader, mixed_member, joiner;
	json_t *job;

	subtest("ownership_and_quota");
	/* the token may record references; its job blocks the worker for a while */
	blocker =
	    post_as(AS_ROOT, VIA_TCP, TOKEN, "/references", "{\"workload\": \"sleeper\"}", &a);
	CHECKF(blocker > 0, "token POST /references: %ld %s", a.status, a.body ?: "");
	answer_clear(&a);
	CHECK(wait_started(blocker));
	CHECK(strcmp(job_field(blocker, "submitter", buf, sizeof(buf)), "token") == 0);

	/* root's waiting job: not the token's to cancel, an admin's */
	r1 = post_as(AS_ROOT, VIA_UNIX, NULL, "/references", "{\"workload\": \"sleeper\"}", &a);
	CHECK(r1 > 0);
	answer_clear(&a);
	CHECK(strcmp(job_field(r1, "submitter", buf, sizeof(buf)), "uid:0") == 0);
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)r1);
	delete_as(AS_ROOT, VIA_TCP, TOKEN, path, &a);
	EXPECT(&a, 403, "not_your_job");
	answer_clear(&a);
	CHECK(strcmp(job_field(r1, "state", buf, sizeof(buf)), "queued") == 0);
	CHECK(delete_as(AS_MEMBER, VIA_UNIX, NULL, path, &a) == 200);
	CHECK(strcmp(json_string_value(json_object_get(a.json, "state")) ?: "", "cancelled") == 0);
	answer_clear(&a);

	/* the per-submitter quota (1 here): root's second waiting job is refused, the token's not
	 */
	r2 = post_as(AS_ROOT, VIA_UNIX, NULL, "/references", "{\"workload\": \"sleeper\"}", &a);
	CHECK(r2 > 0);
	answer_clear(&a);
	post_as(AS_ROOT, VIA_UNIX, NULL, "/references", "{\"workload\": \"sleeper\"}", &a);
	EXPECT(&a, 429, "submitter_quota");
	CHECKF(atoi(a.retry_after) > 0, "Retry-After: '%s'", a.retry_after);
	answer_clear(&a);
	t2 = post_as(AS_ROOT, VIA_TCP, TOKEN, "/diagnose", "{\"workload\": \"quick\"}", &a);
	CHECKF(t2 > 0, "token POST /diagnose: %ld %s", a.status, a.body ?: "");
	answer_clear(&a);

	/* a waiting job naming the reference keeps it */
	snprintf(body, sizeof(body), "/references/%lld", (long long)ref);
	delete_as(AS_ROOT, VIA_UNIX, NULL, body, &a);
	EXPECT(&a, 409, "reference_in_use");
	answer_clear(&a);
	/* the token cancels its own job; root's is root's */
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)t2);
	CHECK(delete_as(AS_ROOT, VIA_TCP, TOKEN, path, &a) == 200);
	answer_clear(&a);
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)r2);
	CHECK(delete_as(AS_ROOT, VIA_UNIX, NULL, path, &a) == 200);
	answer_clear(&a);

	/*
	 * Running targets: an admin (root or a member of api_group) may diagnose
	 * any; the token, which names no user, none; a peer that is neither is
	 * refused on the socket before anything (403 above).
	 */
	root_pid = spawn_sleeper(0, 0);
	nobody_pid = spawn_sleeper(NOBODY, 0);
	mixed_leader = spawn_sleeper(0, 0);
	mixed_member = spawn_sleeper(NOBODY, mixed_leader);
	snprintf(body, sizeof(body), "{\"target\": {\"pid\": %d}}", (int)root_pid);
	post_as(AS_MEMBER, VIA_UNIX, NULL, "/diagnose", body, &a);
	EXPECT(&a, 409, "no_reference");
	answer_clear(&a);
	post_as(AS_OUTSIDER, VIA_UNIX, NULL, "/diagnose", body, &a);
	EXPECT(&a, 403, "forbidden");
	answer_clear(&a);
	post_as(AS_ROOT, VIA_TCP, TOKEN, "/diagnose", body, &a);
	EXPECT(&a, 403, "target_needs_uid");
	answer_clear(&a);
	/* root may: the request goes on to the reference lookup */
	post_as(AS_ROOT, VIA_UNIX, NULL, "/diagnose", body, &a);
	EXPECT(&a, 409, "no_reference");
	answer_clear(&a);
	snprintf(body, sizeof(body), "{\"target\": {\"pid\": %d}}", (int)nobody_pid);
	post_as(AS_MEMBER, VIA_UNIX, NULL, "/diagnose", body, &a);
	EXPECT(&a, 409, "no_reference");
	answer_clear(&a);
	snprintf(body, sizeof(body), "{\"target\": {\"pid\": %d}}", (int)mixed_member);
	post_as(AS_MEMBER, VIA_UNIX, NULL, "/diagnose", body, &a);
	EXPECT(&a, 409, "no_reference");
	answer_clear(&a);

	/*
	 * Checked again when the job starts: while it waited, a root process
	 * joined the target's process group. The member here is one by its
	 * connection's groups (setgroups), not by the account database, from
	 * which argusd reads membership again when the job starts: it is no
	 * admin then, and the target is no longer all its own.
	 */
	snprintf(body, sizeof(body), "{\"target\": {\"pid\": %d}, \"window_s\": 1}",
		 (int)nobody_pid);
	member_job = post_as(AS_MEMBER, VIA_UNIX, NULL, "/references", body, &a);
	CHECKF(member_job > 0, "member POST /references own pid: %ld %s", a.status, a.body ?: "");
	answer_clear(&a);
	CHECK(strcmp(job_field(member_job, "submitter", buf, sizeof(buf)), "uid:65534") == 0);
	joiner = spawn_sleeper(0, nobody_pid);
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)blocker);
	CHECK(delete_as(AS_ROOT, VIA_TCP, TOKEN, path, &a) == 200);
	answer_clear(&a);
	job = member_job ? wait_job(&d, member_job, 60) : NULL;
	CHECKF(job && strcmp(job_state(job), "failed") == 0 &&
		   strcmp(json_string_value(json_object_get(json_object_get(job, "error"), "code"))
			      ?: "",
			  "target_not_owned") == 0,
	       "member's job after a root process joined: %s",
	       job ? json_text(job) : "timeout");
	json_decref(job);

	kill_wait(joiner);
	kill_wait(mixed_member);
	kill_wait(mixed_leader);
	kill_wait(nobody_pid);
	kill_wait(root_pid);
}

static void test_references_delete(json_int_t ref)
{
	char path[64];
	struct answer a;
	struct http_reply r;

	subtest("references_delete");
	snprintf(path, sizeof(path), "/references/%lld", (long long)ref);
	delete_as(AS_ROOT, VIA_TCP, TOKEN, path, &a);
	EXPECT(&a, 403, "admin_only");
	answer_clear(&a);
	CHECK(http_get(&d, path, &r) == 200);
	reply_free(&r);
	CHECK(delete_as(AS_MEMBER, VIA_UNIX, NULL, path, &a) == 200);
	CHECK(json_is_true(json_object_get(a.json, "deleted")));
	answer_clear(&a);
	CHECK(http_get(&d, path, &r) == 404);
	reply_free(&r);
	delete_as(AS_ROOT, VIA_UNIX, NULL, path, &a);
	EXPECT(&a, 404, "not_found");
	answer_clear(&a);
	delete_as(AS_ROOT, VIA_UNIX, NULL, "/references/999999", &a);
	EXPECT(&a, 404, "not_found");
	answer_clear(&a);
}

static void test_request_rules(void)
{
	struct call c = {"GET", "/healthz", .via = VIA_TCP};
	struct answer a;
	char host[64];

	subtest("request_rules");
	/* only JSON bodies: a form is what any web page may post */
	c = (struct call){"POST", "/diagnose", "workload=quick",
			  "application/x-www-form-urlencoded", .via = VIA_UNIX};
	ask(AS_ROOT, &c, &a);
	EXPECT(&a, 415, "unsupported_media_type");
	answer_clear(&a);
	c = (struct call){"POST", "/diagnose", "{\"workload\": \"quick\"}", "text/plain",
			  .via = VIA_UNIX};
	ask(AS_ROOT, &c, &a);
	EXPECT(&a, 415, "unsupported_media_type");
	answer_clear(&a);

	/* Host: a rebound name is refused, loopback names and the listed ones are not */
	c = (struct call){"GET", "/healthz", .header = {"Host: evil.example"}, .via = VIA_TCP};
	ask(AS_ROOT, &c, &a);
	EXPECT(&a, 421, "misdirected_request");
	answer_clear(&a);
	c.header[0] = "Host: evil.example:8321";
	c.via = VIA_UNIX;
	ask(AS_ROOT, &c, &a);
	EXPECT(&a, 421, "misdirected_request");
	answer_clear(&a);
	c.via = VIA_TCP;
	c.header[0] = "Host: argus.test:1234";
	CHECK(ask(AS_ROOT, &c, &a) == 200);
	answer_clear(&a);
	snprintf(host, sizeof(host), "Host: localhost:%u", d.port);
	c.header[0] = host;
	CHECK(ask(AS_ROOT, &c, &a) == 200);
	answer_clear(&a);
	c.header[0] = "Host: [::1]";
	CHECK(ask(AS_ROOT, &c, &a) == 200);
	answer_clear(&a);

	/* Origin: a page elsewhere may not even read; a listed dashboard may */
	c.header[0] = "Origin: https://evil.example";
	ask(AS_ROOT, &c, &a);
	EXPECT(&a, 403, "origin_not_allowed");
	answer_clear(&a);
	c = (struct call){"POST", "/diagnose", "{\"workload\": \"quick\"}",
			  .header = {"Origin: https://evil.example"}, .via = VIA_UNIX};
	ask(AS_ROOT, &c, &a);
	EXPECT(&a, 403, "origin_not_allowed");
	answer_clear(&a);
	c = (struct call){"GET", "/healthz", .header = {"Origin: https://dash.test"},
			  .via = VIA_TCP};
	CHECK(ask(AS_ROOT, &c, &a) == 200);
	answer_clear(&a);
}

/*
 * A connected socket that has sent the start of a request line and nothing
 * more; -1 when it could not connect. The send may fail on a connection
 * that argusd refused at once (its answer is still there to read).
 */
static int half_open(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, sa, len) < 0) {
		close(fd);
		return -1;
	}
	(void)!send(fd, "GET /hea", 8, MSG_NOSIGNAL);
	return fd;
}

/* Whether the server closed fd within timeout_ms (end of stream or reset). */
static bool closed_by_server(int fd, int timeout_ms)
{
	uint64_t end = now_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	char buf[512];

	while (now_mono_ns() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return true;
	}
	return false;
}

static void test_half_open_tcp(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(d.port)};
	struct call health = {"GET", "/healthz", .via = VIA_TCP, .timeout_ms = 1000};
	int fds[HALF_OPEN], n = 0, closed = 0, i, trickle;
	struct answer a;

	subtest("half_open_tcp");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < HALF_OPEN; i++) {
		fds[i] = half_open((struct sockaddr *)&sa, sizeof(sa));
		n += fds[i] >= 0;
	}
	CHECKF(n == HALF_OPEN, "%d of %d connections made", n, HALF_OPEN);
	/* the contract: an answer within 1 s while they are held */
	CHECKF(ask(AS_ROOT, &health, &a) == 200, "GET /healthz with %d half-open held: %ld", n,
	       a.status);
	answer_clear(&a);

	/*
	 * The header deadline closes what did not finish its request, and a
	 * byte now and then does not keep a connection (the idle timeout
	 * alone would): both are cut well before 20 s.
	 */
	trickle = half_open((struct sockaddr *)&sa, sizeof(sa));
	REQUIRE(trickle >= 0);
	{
		uint64_t end = now_mono_ns() + 20ull * 1000000000ull;
		bool cut = false;

		while (!cut && now_mono_ns() < end) {
			if (send(trickle, "l", 1, MSG_NOSIGNAL) != 1)
				cut = true;
			else
				cut = closed_by_server(trickle, 300);
		}
		CHECKF(cut, "a client sending a byte every 300 ms was not cut within 20 s");
		close(trickle);
	}
	for (i = 0; i < HALF_OPEN; i++)
		if (fds[i] >= 0) {
			closed += closed_by_server(fds[i], 1000);
			close(fds[i]);
		}
	CHECKF(closed == n, "%d of %d half-open connections closed by the server", closed, n);
}

static void test_half_open_socket(void)
{
	struct call health = {"GET", "/healthz", .via = VIA_UNIX, .timeout_ms = 1000};
	int report[2], hold[2], status, counts[2] = {0, 0};
	struct answer a;
	pid_t pid;

	subtest("half_open_socket");
	REQUIRE(pipe(report) == 0 && pipe(hold) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fds[HALF_OPEN], made = 0, refused = 0, i;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(report[0]);
		close(hold[1]);
		/* one outsider uid: the socket is 0666 since test_socket_peers */
		become_nobody(false);
		memcpy(sa.sun_path, d.sock, strnlen(d.sock, sizeof(sa.sun_path) - 1));
		for (i = 0; i < HALF_OPEN; i++) {
			fds[i] = half_open((struct sockaddr *)&sa, sizeof(sa));
			made += fds[i] >= 0;
		}
		/* those past the per-uid limit are answered 429 as soon as argusd accepts them */
		usleep(1000 * 1000);
		for (i = 0; i < HALF_OPEN; i++) {
			char buf[256] = "";
			struct pollfd p = {.fd = fds[i], .events = POLLIN};

			if (fds[i] >= 0 && poll(&p, 1, 0) > 0 &&
			    recv(fds[i], buf, sizeof(buf) - 1, MSG_DONTWAIT) > 0 &&
			    strstr(buf, " 429 ") && strstr(buf, "too_many_connections"))
				refused++;
		}
		{
			int out[2] = {made, refused};

			(void)!write(report[1], out, sizeof(out));
		}
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(report[1]);
	close(hold[0]);
	CHECK(read(report[0], counts, sizeof(counts)) == sizeof(counts));
	CHECKF(counts[0] == HALF_OPEN, "%d of %d socket connections made", counts[0], HALF_OPEN);
	CHECKF(counts[1] > 0 && counts[1] < HALF_OPEN, "%d of %d refused by the per-uid limit",
	       counts[1], counts[0]);
	CHECKF(ask(AS_ROOT, &health, &a) == 200, "GET /healthz on the socket with %d held: %ld",
	       counts[0], a.status);
	answer_clear(&a);
	(void)!write(hold[1], "x", 1);
	close(hold[1]);
	close(report[0]);
	waitpid(pid, &status, 0);
	REQUIRE(chmod(d.sock, 0660) == 0);
}

/* argusd with extra configuration, expected to refuse to start; its log in *ret_log. */
static int start_refused(const char *extra, char **ret_log)
{
	struct daemon x;
	int r, status = -1;

	REQUIRE(daemon_prepare(&x, extra) == 0);
	r = daemon_start(&x);
	if (x.pid > 0) {
		if (r == 0)
			status = daemon_stop(&x, SIGTERM);
		else {
			int st;

			waitpid(x.pid, &st, 0);
			status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
			x.pid = 0;
		}
	}
	*ret_log = read_log(x.dir, "refusing");
	daemon_cleanup(&x);
	return r == 0 ? 0 : status;
}

static void test_start_rules(void)
{
	_cleanup_free_ char *log = NULL, *log2 = NULL;
	struct daemon x;
	struct stat st;
	int status;

	subtest("start_rules");
	status = start_refused("listen = 0.0.0.0:0\n", &log);
	CHECKF(status != 0 && log && strstr(log, "not a loopback address") &&
		   strstr(log, "api_token_file"),
	       "exposed listener without token: exit %d, log: %s", status, log ?: "");

	/* no such group: said, and the socket stays root's alone */
	REQUIRE(daemon_prepare(&x, "api_group = argus-no-such-group\n") == 0);
	REQUIRE(daemon_start(&x) == 0);
	CHECK(lstat(x.sock, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == 0);
	daemon_stop(&x, SIGTERM);
	log2 = read_log(x.dir, "argus-no-such-group");
	CHECKF(log2 && strstr(log2, "argus-no-such-group") && strstr(log2, "0600"),
	       "the missing group is said: %s", log2 ?: "");
	/* and the socket is gone with it */
	CHECK(lstat(x.sock, &st) < 0 && errno == ENOENT);
	daemon_cleanup(&x);
}

static void test_token_not_logged(void)
{
	_cleanup_free_ char *log = NULL;

	subtest("token_not_logged");
	log = read_log(d.dir, NULL);
	REQUIRE(log);
	CHECK(!strstr(log, TOKEN));
	CHECK(strstr(log, "writes with the bearer token"));
}

int main(void)
{
	char conf[1024], path[256];
	json_int_t ref;

	test_header_rules();
	test_caller_rules();
	test_target_rules();
	test_socket_path_default();

	if (geteuid() != 0)
		tap_skip_all("test-access needs root (other users, groupadd, the daemon)");
	REQUIRE(access("/usr/sbin/groupadd", X_OK) == 0 && getpwuid(NOBODY));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	make_group();

	snprintf(conf, sizeof(conf),
		 "api_group = %s\napi_token_file = api-token\napi_hostnames = argus.test\n"
		 "api_origins = https://dash.test\nqueue_max = 8\nqueue_per_submitter = 1\n",
		 group_name);
	REQUIRE(daemon_prepare(&d, conf) == 0);
	/* the socket where an outsider can reach it (the state directory is 0700) */
	snprintf(d.sock, sizeof(d.sock), "%s/argusd.sock", d.dir);
	{
		FILE *f = fopen(d.conf, "a");

		REQUIRE(f);
		fprintf(f, "listen_unix = %s\n", d.sock);
		fclose(f);
	}
	/* the token as a systemd credential: a name in $CREDENTIALS_DIRECTORY */
	snprintf(path, sizeof(path), "%s/api-token", d.dir);
	write_text(path, TOKEN "\n");
	REQUIRE(chmod(path, 0600) == 0);
	setenv("CREDENTIALS_DIRECTORY", d.dir, 1);
	daemon_add_workload(&d, "quick",
			    "{\"name\": \"quick\", \"argv\": [\"/bin/true\"], \"timeout_s\": 10}");
	daemon_add_workload(&d, "sleeper",
			    "{\"name\": \"sleeper\", \"argv\": [\"/bin/sleep\", \"20\"], "
			    "\"timeout_s\": 60}");
	REQUIRE(daemon_start(&d) == 0);

	test_socket_file();
	test_socket_peers();
	test_tcp_token();
	test_request_rules();
	ref = record_quick_reference();
	test_ownership_and_quota(ref);
	if (ref > 0)
		test_references_delete(ref);
	test_half_open_tcp();
	test_half_open_socket();
	test_token_not_logged();
	daemon_cleanup(&d);

	test_start_rules();
	unsetenv("CREDENTIALS_DIRECTORY");
	remove_group();
	curl_global_cleanup();
	return tap_done("test-access");
}
