// SPDX-License-Identifier: MIT
/*
 * argusctl, the built binary, as a user runs it. First against a fake
 * argusd on loopback that answers what a real one would not: malformed
 * JSON, a body over the client's limit, errors that are not JSON, jobs that
 * fail or change slowly while ?wait= is ignored (following must not spin),
 * a token to send. Then against the real argusd, over the control socket
 * and over --url: the registries, refused requests, a reference and a
 * followed diagnosis of a small bundled workload whose exit status matches
 * the verdict the API reports. Usage errors and a missing daemon exit 2.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "tests/daemon-harness.h"
#include "tests/tap.h"

#define SMALL_WORKLOAD                                                                             \
	"{\"name\": \"small\", \"argv\": [\"pf_anon_write\", \"--mb\", \"16\", \"--rounds\", "     \
	"\"2\"], \"user\": \"nobody\", \"cpus\": \"0\", \"timeout_s\": 30}"
#define TOKEN "argusctl-test-token-0123456789abcdef"
#define RUN_TIMEOUT_S 30
#define JOB_TIMEOUT_S 240 /* a reference waits for a quiet machine before each run */

static char exe[256];
static char tmpdir[] = "/tmp/argus-test-argusctl-XXXXXX";

/* ---- running argusctl ---- */

struct run {
	int status; /* the exit status, 128 + the signal that ended it */
	char *out, *err;
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;

	if (read_file_bounded(path, 256 << 20, &text, &len) < 0)
		return strdup("");
	return text;
}

/* Run argusctl with args (NULL-terminated), stdout and stderr kept, for at most timeout_s. */
static int ctl_run(struct run *r, int timeout_s, const char *const *args)
{
	char out[128], err[128];
	const char *argv[32] = {exe};
	uint64_t deadline = now_mono_ns() + (uint64_t)timeout_s * 1000000000ull;
	size_t n = 1;
	int status = 0;
	pid_t pid, w;

	memset(r, 0, sizeof(*r));
	while (*args && n < ARRAY_SIZE(argv) - 1)
		argv[n++] = *args++;
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	REQUIRE(pid > 0);
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && now_mono_ns() < deadline)
		usleep(20 * 1000);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fprintf(stderr, "argusctl %s ... ran over %d s\n", argv[1], timeout_s);
	}
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = slurp(out);
	r->err = slurp(err);
	return r->status;
}

#define CTL(r, ...) ctl_run(r, RUN_TIMEOUT_S, (const char *const[]){__VA_ARGS__, NULL})
#define CTL_LONG(r, ...) ctl_run(r, JOB_TIMEOUT_S, (const char *const[]){__VA_ARGS__, NULL})

/* The exit status is want; both outputs are shown when it is not. */
#define CHECK_EXIT(r, want, what)                                                                  \
	CHECKF((r)->status == (want), "%s: exit %d, expected %d\nstdout: %s\nstderr: %s", what,    \
	       (r)->status, want, (r)->out, (r)->err)

/* The whole of stdout is one JSON document (owned), or NULL. */
static json_t *out_json(const struct run *r)
{
	json_error_t e;
	json_t *j = json_loads(r->out, 0, &e);

	if (!j)
		fprintf(stderr, "stdout is not JSON (%s): %.300s\n", e.text, r->out);
	return j;
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The exit status argusctl promises for a verdict. */
static int verdict_status(const char *verdict)
{
	return verdict && strcmp(verdict, "no_bottleneck") == 0 ? 0 : 1;
}

/* ---- a fake argusd ---- */

static struct {
	int fd;
	unsigned port;
	char url[64];
	pthread_t thread;
	pthread_mutex_t lock;
	unsigned polls;	   /* GET /jobs/1 answered since fake_reset */
	unsigned waits;	   /* of them, asked with ?wait=10 */
	uint64_t first_ns; /* the first of them */
	char auth[256];	   /* the last Authorization header */
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define FAKE_RUNNING_MS 1500 /* job 1 runs this long after its first poll */

static const char job1_running[] =
    "{\"id\": 1, \"kind\": \"diagnose\", \"state\": \"running\", \"progress\": 0.4, "
    "\"step\": \"kernel_paging\", \"started\": null}";
static const char job1_done[] =
    "{\"id\": 1, \"kind\": \"diagnose\", \"state\": \"succeeded\", \"progress\": 1, "
    "\"step\": \"done\", \"result\": {\"verdict\": \"bottleneck\", \"path\": "
    "[\"kernel_paging\", \"kernel_paging.file_fault\"], \"leaf\": false, \"summary\": "
    "\"Bottleneck at kernel_paging.file_fault\", \"unavailable\": [{\"node\": "
    "\"kernel_sync\"}], \"overhead\": [{\"level\": 1, \"ns_per_run\": 80.5, "
    "\"overhead_fraction\": 0.015625}]}}";
static const char job1_trace[] =
    "{\"steps\": [{\"kind\": \"probe\"}, {\"kind\": \"decision\", \"level\": 1, \"action\": "
    "\"descend\", \"node\": \"kernel_paging\", \"reason\": \"faults\", \"scores\": ["
    "{\"metric\": \"kernel_paging/count\", \"value\": 900.7, \"reference\": 100.2, "
    "\"spread\": 10, \"z\": 80.06, \"flagged\": true}, {\"metric\": \"quiet/count\", "
    "\"value\": 1, \"reference\": 1, \"spread\": 1, \"z\": 0, \"flagged\": false}]}, "
    "{\"kind\": \"decision\", \"level\": 2, \"action\": \"commit\", \"node\": "
    "\"kernel_paging.file_fault\", \"reason\": \"file faults\", \"scores\": 5}]}";

/* The answers of the fake, by request line. */
static const struct {
	const char *method, *path; /* path without the query */
	unsigned status;
	const char *body;
} fake_routes[] = {
    {"GET", "/workloads", 200, "{\"workloads\": [{\"name\": \"x\""},
    {"GET", "/services", 200,
     "{\"services\": [{\"name\": \"web\", \"unit\": \"web.service\", \"now\": {\"cgroup\": "
     "\"/system.slice/web.service\", \"processes\": 5}}, {\"name\": \"db\", \"cgroup\": "
     "\"/db\", \"sli\": {}, \"error\": \"service db: cgroup /db does not exist\"}], "
     "\"errors\": []}"},
    {"GET", "/jobs", 200, "{\"jobs\": 5, \"next_before\": \"x\"}"},
    {"GET", "/jobs/1/trace", 200, job1_trace},
    {"GET", "/jobs/2", 200,
     "{\"id\": 2, \"kind\": \"diagnose\", \"state\": \"failed\", \"error\": {\"code\": "
     "\"workload_failed\", \"message\": \"the workload crashed\"}}"},
    {"GET", "/jobs/3", 200,
     "{\"id\": 3, \"kind\": \"diagnose\", \"state\": \"succeeded\", \"result\": {\"verdict\": "
     "\"no_bottleneck\", \"path\": [], \"reason_code\": \"not_slower\"}}"},
    {"GET", "/jobs/4", 200,
     "{\"id\": 4, \"kind\": \"diagnose\", \"state\": \"succeeded\", \"result\": {\"verdict\": "
     "\"deviation\", \"path\": [\"kernel_sync\"]}}"},
    {"GET", "/jobs/4/trace", 200, "{\"steps\": []}"},
    {"GET", "/jobs/5", 500, "oops, not JSON\n"},
    {"GET", "/jobs/6", 200, "{\"id\": 6, \"state\": 7}"},
    {"GET", "/jobs/7", 200, "{\"id\": 7, \"state\": \"succ"},
    {"GET", "/jobs/8", 200,
     "{\"id\": 8, \"kind\": \"reference\", \"state\": \"succeeded\", \"result\": "
     "{\"reference\": 3, \"mean_wall_s\": 0.5}}"},
    {"GET", "/jobs/9", 200,
     "{\"id\": 9, \"kind\": \"reference\", \"state\": \"succeeded\", \"result\": "
     "{\"reference\": 4, \"repeats\": 5, \"mean_wall_s\": 5.01, \"sli_median\": 16650.02, "
     "\"sli_cv\": 0.012, \"sli_unit\": \"req/s\"}}"},
    {"POST", "/diagnose", 202, "{\"id\": 1, \"state\": \"queued\"}"},
    {"POST", "/references", 404,
     "{\"error\": {\"code\": \"not_found\", \"message\": \"no route POST /references\"}}"},
};

static void fake_reset(void)
{
	pthread_mutex_lock(&fake.lock);
	fake.polls = fake.waits = 0;
	fake.first_ns = 0;
	fake.auth[0] = 0;
	pthread_mutex_unlock(&fake.lock);
}

static void send_all(int c, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0 && (n = send(c, p, len, MSG_NOSIGNAL)) > 0) {
		p += n;
		len -= n;
	}
}

static void respond(int c, unsigned status, const char *body)
{
	char head[256];

	snprintf(head, sizeof(head),
		 "HTTP/1.1 %u X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n",
		 status, strlen(body));
	send_all(c, head, strlen(head));
	send_all(c, body, strlen(body));
}

/* GET /tree: a body a little over 64 MiB, sent until the client hangs up. */
static void respond_huge(int c)
{
	static char chunk[1 << 16];
	size_t total = (64u << 20) + (1u << 20), sent = 0;
	char head[256];
	ssize_t n;

	memset(chunk, ' ', sizeof(chunk));
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n",
		 total);
	send_all(c, head, strlen(head));
	while (sent < total && (n = send(c, chunk, sizeof(chunk), MSG_NOSIGNAL)) > 0)
		sent += n;
}

static void fake_answer(int c)
{
	char req[16384], method[16], target[512], path[512];
	const char *auth;
	size_t len = 0, i;
	ssize_t n;

	while (len < sizeof(req) - 1 && (n = recv(c, req + len, sizeof(req) - 1 - len, 0)) > 0) {
		len += n;
		req[len] = 0;
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[len] = 0;
	if (sscanf(req, "%15s %511s", method, target) != 2)
		return;
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(target, "?"), target);
	pthread_mutex_lock(&fake.lock);
	auth = strcasestr(req, "\r\nAuthorization: ");
	if (auth)
		snprintf(fake.auth, sizeof(fake.auth), "%.*s", (int)strcspn(auth + 17, "\r\n"),
			 auth + 17);
	pthread_mutex_unlock(&fake.lock);

	if (strcmp(method, "GET") == 0 && strcmp(path, "/tree") == 0) {
		respond_huge(c);
		return;
	}
	if (strcmp(method, "GET") == 0 && strcmp(path, "/jobs/1") == 0) {
		bool done;

		/* running for a while whatever ?wait= says, then done: an argusd without long polls
		 */
		pthread_mutex_lock(&fake.lock);
		if (!fake.polls++)
			fake.first_ns = now_mono_ns();
		fake.waits += strstr(target, "?wait=10") != NULL;
		done = now_mono_ns() - fake.first_ns > FAKE_RUNNING_MS * 1000000ull;
		pthread_mutex_unlock(&fake.lock);
		respond(c, 200, done ? job1_done : job1_running);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(fake_routes); i++)
		if (strcmp(method, fake_routes[i].method) == 0 &&
		    strcmp(path, fake_routes[i].path) == 0) {
			respond(c, fake_routes[i].status, fake_routes[i].body);
			return;
		}
	respond(c, 404, "{\"error\": {\"code\": \"not_found\", \"message\": \"no such route\"}}");
}

static void *fake_serve(void *arg)
{
	int c;

	while ((c = accept(fake.fd, NULL, NULL)) >= 0 || errno == EINTR) {
		if (c < 0)
			continue;
		fake_answer(c);
		close(c);
	}
	return NULL;
}

static void fake_start(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);

	fake.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(fake.fd >= 0);
	REQUIRE(bind(fake.fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	REQUIRE(listen(fake.fd, 16) == 0);
	REQUIRE(getsockname(fake.fd, (struct sockaddr *)&a, &alen) == 0);
	fake.port = ntohs(a.sin_port);
	snprintf(fake.url, sizeof(fake.url), "http://127.0.0.1:%u", fake.port);
	REQUIRE(pthread_create(&fake.thread, NULL, fake_serve, NULL) == 0);
}

static void fake_stop(void)
{
	shutdown(fake.fd, SHUT_RDWR);
	pthread_join(fake.thread, NULL);
	close(fake.fd);
}

/* ---- the tests ---- */

static void test_usage(void)
{
	struct run r;

	tap_subtest("usage");
	CTL(&r, "--help");
	CHECK_EXIT(&r, 0, "--help");
	CHECKF(strstr(r.out, "Exit status") && strstr(r.out, "diagnose"), "help: %s", r.out);
	run_free(&r);
	CTL(&r, "--socket", "/nonexistent");
	CHECK_EXIT(&r, 2, "no command");
	run_free(&r);
	CTL(&r, "frobnicate");
	CHECK_EXIT(&r, 2, "unknown command");
	CHECKF(strstr(r.err, "frobnicate") != NULL, "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "tree", "--state", "running");
	CHECK_EXIT(&r, 2, "an option the command does not take");
	run_free(&r);
	CTL(&r, "diagnose", "small", "--pid", "1");
	CHECK_EXIT(&r, 2, "two subjects");
	run_free(&r);
	CTL(&r, "diagnose", "--pid", "-4");
	CHECK_EXIT(&r, 2, "a bad pid");
	run_free(&r);
	CTL(&r, "job", "12abc");
	CHECK_EXIT(&r, 2, "a bad job id");
	run_free(&r);

	/* no daemon there */
	CTL(&r, "--socket", "/nonexistent/argusd.sock", "workloads");
	CHECK_EXIT(&r, 2, "no daemon on the socket");
	CHECKF(strstr(r.err, "/nonexistent/argusd.sock") && lines(r.err) == 1,
	       "one line naming the socket: %s", r.err);
	run_free(&r);
	CTL(&r, "--url", "http://127.0.0.1:1", "tree");
	CHECK_EXIT(&r, 2, "no daemon on the port");
	run_free(&r);

	/* malformed URLs */
	CTL(&r, "--url", "not a url", "tree");
	CHECK_EXIT(&r, 2, "--url 'not a url'");
	CHECKF(strstr(r.err, "--url") != NULL, "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--url", "http://", "tree");
	CHECK_EXIT(&r, 2, "--url http://");
	run_free(&r);
	CTL(&r, "--url", "gopher://127.0.0.1:70", "tree");
	CHECK_EXIT(&r, 2, "--url with another scheme");
	run_free(&r);
	CTL(&r, "--url", "http://u:p@127.0.0.1:1", "tree");
	CHECK_EXIT(&r, 2, "--url with a password");
	run_free(&r);
}

static void test_fake(void)
{
	char token_file[160], bad_token[160], bearer[128];
	unsigned polls, waits;
	json_t *j;
	struct run r;

	fake_start();

	tap_subtest("fake_malformed");
	CTL(&r, "--url", fake.url, "workloads");
	CHECK_EXIT(&r, 2, "a truncated JSON body");
	CHECKF(strstr(r.err, "not JSON") != NULL, "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--url", fake.url, "--json", "workloads");
	CHECK_EXIT(&r, 2, "--json of a truncated JSON body");
	CHECKF(r.out[0] == 0, "nothing on stdout: %s", r.out);
	run_free(&r);
	CTL(&r, "--url", fake.url, "jobs");
	CHECK_EXIT(&r, 0, "JSON of the wrong shape");
	CHECKF(strstr(r.out, "ID") != NULL, "stdout: %s", r.out);
	run_free(&r);
	CTL(&r, "--url", fake.url, "job", "5");
	CHECK_EXIT(&r, 2, "a 500 that is not JSON");
	CHECKF(strstr(r.err, "500") && strstr(r.err, "oops"), "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--url", fake.url, "job", "6", "--follow");
	CHECK_EXIT(&r, 2, "a job without a state");
	run_free(&r);
	CTL(&r, "--url", fake.url, "job", "7");
	CHECK_EXIT(&r, 2, "a truncated job");
	run_free(&r);
	CTL(&r, "--url", fake.url, "reference", "x");
	CHECK_EXIT(&r, 2, "an API error");
	CHECKF(strstr(r.err, "404") && strstr(r.err, "not_found") &&
		   strstr(r.err, "no route POST /references"),
	       "status, code and message: %s", r.err);
	run_free(&r);

	tap_subtest("fake_too_large");
	CTL(&r, "--url", fake.url, "tree");
	CHECK_EXIT(&r, 2, "a body over 64 MiB");
	CHECKF(strstr(r.err, "64 MiB") != NULL, "stderr: %s", r.err);
	run_free(&r);

	tap_subtest("fake_services");
	CTL(&r, "--url", fake.url, "services");
	CHECK_EXIT(&r, 0, "services");
	CHECKF(strstr(r.out, "web.service") != NULL &&
		   strstr(r.out, "5 processes in /system.slice/web.service") &&
		   strstr(r.out, "cgroup /db does not exist"),
	       "stdout: %s", r.out);
	run_free(&r);

	tap_subtest("fake_follow");
	fake_reset();
	CTL(&r, "--url", fake.url, "job", "1", "--follow");
	pthread_mutex_lock(&fake.lock);
	polls = fake.polls;
	waits = fake.waits;
	pthread_mutex_unlock(&fake.lock);
	CHECK_EXIT(&r, 1, "a followed bottleneck");
	/* 1.5 s of an argusd that answers at once: a poll every 0.5 s or so, never a spin */
	CHECKF(polls >= 2 && polls <= 8, "%u polls", polls);
	CHECKF(waits == polls - 1, "%u of %u polls asked ?wait=10", waits, polls);
	CHECKF(strstr(r.out, "[running] 40% level 2 under kernel_paging"), "progress: %s", r.out);
	CHECKF(strstr(r.out, "   verdict: bottleneck\n") &&
		   strstr(r.out, "   path:    kernel_paging -> kernel_paging.file_fault\n") &&
		   strstr(r.out, "   not measurable here: kernel_sync\n") &&
		   strstr(r.out, "   probe overhead L1: 80 ns per program run, 1.56% of the run\n"),
	       "verdict: %s", r.out);
	CHECKF(strstr(r.out, "   L1 descend -> kernel_paging: faults\n"
			     "        flagged kernel_paging/count: 900 vs 100 +- 10 (z 80.0)\n"
			     "   L2 commit -> kernel_paging.file_fault: file faults\n"),
	       "descent: %s", r.out);
	CHECKF(!strstr(r.out, "quiet/count"), "an unflagged metric shown: %s", r.out);
	run_free(&r);

	fake_reset();
	CTL(&r, "--url", fake.url, "--json", "diagnose", "x", "--follow");
	CHECK_EXIT(&r, 1, "--json diagnose --follow");
	j = out_json(&r);
	CHECKF(j && !strcmp(json_string_value(json_object_get(j, "state")) ?: "", "succeeded"),
	       "the final job: %s", r.out);
	json_decref(j);
	run_free(&r);

	CTL(&r, "--url", fake.url, "--json", "diagnose", "x");
	CHECK_EXIT(&r, 0, "diagnose without --follow");
	j = out_json(&r);
	CHECK(json_integer_value(json_object_get(j, "id")) == 1);
	json_decref(j);
	run_free(&r);

	tap_subtest("fake_outcomes");
	CTL(&r, "--url", fake.url, "job", "2", "--follow");
	CHECK_EXIT(&r, 2, "a failed job");
	CHECKF(strstr(r.err, "failed") && strstr(r.err, "workload_failed") &&
		   strstr(r.err, "the workload crashed"),
	       "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--url", fake.url, "job", "3");
	CHECK_EXIT(&r, 0, "no_bottleneck");
	CHECKF(strstr(r.out, "verdict: no_bottleneck"), "stdout: %s", r.out);
	run_free(&r);
	CTL(&r, "--url", fake.url, "job", "4", "--follow");
	CHECK_EXIT(&r, 1, "deviation");
	run_free(&r);
	CTL(&r, "--url", fake.url, "job", "8", "--follow", "-q");
	CHECK_EXIT(&r, 0, "a reference");
	CHECKF(!strcmp(r.out, "   reference 3: mean wall 500 ms\n"), "stdout: %s", r.out);
	run_free(&r);
	/* a service's reference: its SLI, not the window's length */
	CTL(&r, "--url", fake.url, "job", "9", "--follow", "-q");
	CHECK_EXIT(&r, 0, "a service's reference");
	CHECKF(!strcmp(r.out, "   reference 4: SLI 16650 req/s (median; varies 1.2%) over 5 windows\n"),
	       "stdout: %s", r.out);
	run_free(&r);

	tap_subtest("fake_token");
	snprintf(token_file, sizeof(token_file), "%s/token", tmpdir);
	write_text(token_file, TOKEN "\n");
	fake_reset();
	CTL(&r, "--url", fake.url, "--token-file", token_file, "job", "3");
	CHECK_EXIT(&r, 0, "with a token");
	snprintf(bearer, sizeof(bearer), "Bearer %s", TOKEN);
	pthread_mutex_lock(&fake.lock);
	CHECK_STREQ(fake.auth, bearer, "Authorization");
	pthread_mutex_unlock(&fake.lock);
	run_free(&r);
	snprintf(bad_token, sizeof(bad_token), "%s/bad-token", tmpdir);
	write_text(bad_token, "short secret\n");
	CTL(&r, "--url", fake.url, "--token-file", bad_token, "job", "3");
	CHECK_EXIT(&r, 2, "a token file without a token");
	CHECKF(!strstr(r.err, "secret") && !strstr(r.out, "secret"), "the token shown: %s", r.err);
	run_free(&r);
	fake_reset();
	setenv("ARGUSCTL_URL", fake.url, 1);
	setenv("ARGUSCTL_TOKEN_FILE", token_file, 1);
	CTL(&r, "job", "3");
	CHECK_EXIT(&r, 0, "ARGUSCTL_URL and ARGUSCTL_TOKEN_FILE");
	pthread_mutex_lock(&fake.lock);
	CHECK_STREQ(fake.auth, bearer, "Authorization from ARGUSCTL_TOKEN_FILE");
	pthread_mutex_unlock(&fake.lock);
	unsetenv("ARGUSCTL_URL");
	unsetenv("ARGUSCTL_TOKEN_FILE");
	run_free(&r);

	fake_stop();
}

/* The id of "job N queued" in a followed command's output, or 0. */
static long long queued_id(const char *text)
{
	const char *p = strstr(text, "job ");

	return p ? strtoll(p + 4, NULL, 10) : 0;
}

static void test_daemon(void)
{
	struct daemon d;
	char url[64], id[32];
	const char *verdict;
	long long job;
	json_t *j, *res;
	struct run r;

	REQUIRE(daemon_prepare(&d, NULL) == 0);
	daemon_add_workload(&d, "small", SMALL_WORKLOAD);
	REQUIRE(daemon_start(&d) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", d.port);

	tap_subtest("daemon_reads");
	CTL(&r, "--socket", d.sock, "workloads");
	CHECK_EXIT(&r, 0, "workloads on the socket");
	CHECKF(strstr(r.out, "small") != NULL, "stdout: %s", r.out);
	run_free(&r);
	setenv("ARGUSCTL_SOCKET", d.sock, 1);
	CTL(&r, "tree");
	CHECK_EXIT(&r, 0, "tree on ARGUSCTL_SOCKET");
	CHECKF(strstr(r.out, "kernel_paging.file_fault.major") != NULL, "stdout: %.300s", r.out);
	run_free(&r);
	unsetenv("ARGUSCTL_SOCKET");
	CTL(&r, "--socket", d.sock, "jobs");
	CHECK_EXIT(&r, 0, "jobs on the socket");
	run_free(&r);
	CTL(&r, "--url", url, "workloads");
	CHECK_EXIT(&r, 0, "workloads over --url");
	run_free(&r);
	CTL(&r, "--url", url, "--json", "tree");
	CHECK_EXIT(&r, 0, "--json tree over --url");
	j = out_json(&r);
	CHECK(json_array_size(json_object_get(j, "nodes")) >= 15);
	json_decref(j);
	run_free(&r);
	CTL(&r, "--url", url, "--json", "jobs", "--state", "succeeded", "--limit", "5");
	CHECK_EXIT(&r, 0, "--json jobs with filters");
	j = out_json(&r);
	CHECK(json_is_array(json_object_get(j, "jobs")));
	json_decref(j);
	run_free(&r);
	CTL(&r, "--url", url, "jobs", "--state", "bogus");
	CHECK_EXIT(&r, 2, "a filter argusd refuses");
	CHECKF(strstr(r.err, "400") && strstr(r.err, "state"), "stderr: %s", r.err);
	run_free(&r);

	tap_subtest("daemon_refused");
	CTL(&r, "--socket", d.sock, "diagnose", "nope");
	CHECK_EXIT(&r, 2, "an unknown workload");
	CHECKF(strstr(r.err, "400") && strstr(r.err, "unknown_workload"), "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--socket", d.sock, "diagnose", "small");
	CHECK_EXIT(&r, 2, "no reference yet");
	CHECKF(strstr(r.err, "409") && strstr(r.err, "no_reference"), "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--url", url, "diagnose", "small");
	CHECK_EXIT(&r, 2, "a write over read-only TCP");
	CHECKF(strstr(r.err, "403") != NULL, "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--socket", d.sock, "diagnose", "--service", "web");
	CHECK_EXIT(&r, 2, "a service");
	CHECKF(strstr(r.err, "POST /diagnose") != NULL, "stderr: %s", r.err);
	run_free(&r);
	CTL(&r, "--socket", d.sock, "job", "999");
	CHECK_EXIT(&r, 2, "no such job");
	CHECKF(strstr(r.err, "404") != NULL, "stderr: %s", r.err);
	run_free(&r);

	tap_subtest("daemon_reference");
	CTL_LONG(&r, "--socket", d.sock, "reference", "small", "--repeats", "3");
	CHECK_EXIT(&r, 0, "reference");
	CHECKF(strstr(r.out, "   reference ") && strstr(r.out, "[succeeded]"), "stdout: %s", r.out);
	run_free(&r);

	tap_subtest("daemon_diagnose");
	CTL_LONG(&r, "--socket", d.sock, "diagnose", "small", "--follow");
	job = queued_id(r.out);
	CHECKF(job > 0, "no job id: %s", r.out);
	snprintf(id, sizeof(id), "%lld", job);
	CHECKF(r.status == 0 || r.status == 1, "diagnose: exit %d\n%s\n%s", r.status, r.out, r.err);
	run_free(&r);
	CTL(&r, "--url", url, "--json", "job", id);
	j = out_json(&r);
	res = json_object_get(j, "result");
	verdict = json_string_value(json_object_get(res, "verdict"));
	CHECKF(verdict, "no verdict: %s", r.out);
	CHECK_EXIT(&r, verdict_status(verdict), "--json job of the diagnosis");
	run_free(&r);
	/* the same diagnosis followed again: the verdict line and the verdict's status */
	CTL(&r, "--socket", d.sock, "job", id, "--follow");
	CHECK_EXIT(&r, verdict_status(verdict), "the diagnosis's exit status");
	{
		char line[64];

		snprintf(line, sizeof(line), "   verdict: %s\n", verdict ?: "?");
		CHECKF(strstr(r.out, line) && strstr(r.out, "the descent") && strstr(r.out, "L1 "),
		       "stdout: %s", r.out);
	}
	run_free(&r);
	json_decref(j);
	CTL(&r, "--socket", d.sock, "--json", "trace", id);
	CHECK_EXIT(&r, 0, "--json trace");
	j = out_json(&r);
	CHECK(json_array_size(json_object_get(j, "steps")) > 0);
	json_decref(j);
	run_free(&r);

	daemon_cleanup(&d);
}

int main(void)
{
	const char *build = getenv("ARGUS_BUILD_DIR");
	char cmd[128];

	signal(SIGPIPE, SIG_IGN);
	unsetenv("ARGUSCTL_SOCKET");
	unsetenv("ARGUSCTL_URL");
	unsetenv("ARGUSCTL_TOKEN_FILE");
	REQUIRE(build && mkdtemp(tmpdir));
	snprintf(exe, sizeof(exe), "%s/ctl/argusctl", build);
	REQUIRE(access(exe, X_OK) == 0);

	test_usage();
	test_fake();
	if (geteuid() == 0)
		test_daemon();
	else
		tap_skip("daemon", "argusd needs root");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	(void)!system(cmd);
	return tap_done("test-argusctl");
}
