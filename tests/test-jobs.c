// SPDX-License-Identifier: MIT
/* The job queue with a fake runner whose behaviour each job's request picks. */
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/usual_pace.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

static char tmpdir[] = "/tmp/argus-test-jobs-XXXXXX";
static char *schema_dir;
static char *db_path;

/*
 * request {"mode": ...}:
 *   "ok"       record progress and a trace step, succeed
 *   "fail"     fail with an error object
 *   "bare"     fail with -EINVAL and no error object
 *   "block"    wait until released or cancelled; cancelled => -ECANCELED
 *   "stubborn" wait until cancelled, then return -EIO (not -ECANCELED)
 */
struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int64_t order[64];
	size_t n_order;
	int active, max_active;
	bool release;
	int64_t blocked;      /* id of the job now waiting in "block"/"stubborn" */
	struct jobs *jobs;    /* to submit from inside a runner */
	int submit_on_cancel; /* jobs_submit's answer while stopping */
};

static struct fake fake = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int fake_runner(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	struct fake *f = userdata;
	const char *mode = json_string_value(json_object_get(job_ctx_request(ctx), "mode"));
	int r = 0;

	pthread_mutex_lock(&f->lock);
	if (f->n_order < ARRAY_SIZE(f->order))
		f->order[f->n_order++] = job_ctx_id(ctx);
	if (++f->active > f->max_active)
		f->max_active = f->active;
	pthread_mutex_unlock(&f->lock);

	if (!mode)
		mode = "ok";
	if (strcmp(mode, "ok") == 0) {
		sleep_ms(10); /* long enough for an overlap to show, were there one */
		job_ctx_progress(ctx, 0.5, "half way");
		job_ctx_trace(ctx, "measure", json_pack("{s:i}", "x", 1));
		job_ctx_trace(ctx, "decision", json_pack("{s:s}", "kind", "not this"));
		*ret_result =
		    json_pack("{s:s,s:s}", "verdict", "no_bottleneck", "kind", job_ctx_kind(ctx));
	} else if (strcmp(mode, "fail") == 0) {
		*ret_error = json_pack("{s:s,s:s}", "code", "boom", "message", "it broke");
		r = -EIO;
	} else if (strcmp(mode, "bare") == 0) {
		r = -EINVAL;
	} else {
		bool stubborn = strcmp(mode, "stubborn") == 0;

		pthread_mutex_lock(&f->lock);
		f->blocked = job_ctx_id(ctx);
		pthread_cond_broadcast(&f->cond);
		while (!job_ctx_cancelled(ctx) && (stubborn || !f->release)) {
			pthread_mutex_unlock(&f->lock);
			sleep_ms(2);
			pthread_mutex_lock(&f->lock);
		}
		f->blocked = 0;
		pthread_mutex_unlock(&f->lock);
		if (job_ctx_cancelled(ctx)) {
			if (f->jobs) {
				json_auto_t *req = json_pack("{s:s}", "mode", "ok");
				int64_t id;

				f->submit_on_cancel = jobs_submit(f->jobs, "diagnose", req, &id);
			}
			r = stubborn ? -EIO : -ECANCELED;
		} else {
			*ret_result = json_object();
		}
	}

	pthread_mutex_lock(&f->lock);
	f->active--;
	pthread_mutex_unlock(&f->lock);
	return r;
}

static void fake_reset(void)
{
	pthread_mutex_lock(&fake.lock);
	fake.n_order = 0;
	fake.max_active = 0;
	fake.release = false;
	fake.jobs = NULL;
	fake.submit_on_cancel = 0;
	pthread_mutex_unlock(&fake.lock);
}

static void fake_release(void)
{
	pthread_mutex_lock(&fake.lock);
	fake.release = true;
	pthread_mutex_unlock(&fake.lock);
}

/* Wait (up to 10 s) until the runner blocks in job id. */
static bool wait_blocked(int64_t id)
{
	int i;

	for (i = 0; i < 5000; i++) {
		bool b;

		pthread_mutex_lock(&fake.lock);
		b = fake.blocked == id;
		pthread_mutex_unlock(&fake.lock);
		if (b)
			return true;
		sleep_ms(2);
	}
	return false;
}

/* Wait (up to 10 s) for a job to reach a state. */
static bool wait_state(struct store *s, int64_t id, const char *want)
{
	char state[16] = "";
	int i;

	for (i = 0; i < 5000; i++) {
		if (store_job_state(s, id, state, sizeof(state)) == 0 && strcmp(state, want) == 0)
			return true;
		sleep_ms(2);
	}
	fprintf(stderr, "job %lld: state %s, wanted %s\n", (long long)id, state, want);
	return false;
}

static int64_t submit(struct jobs *j, const char *mode)
{
	json_auto_t *req = json_pack("{s:s}", "mode", mode);
	int64_t id = 0;
	int r = jobs_submit(j, "diagnose", req, &id);

	CHECKF(r == 0, "submit %s: %d", mode, r);
	return id;
}

static json_t *job_get(struct store *s, int64_t id)
{
	json_t *job = NULL;

	CHECK(store_job_get(s, id, &job) == 0);
	return job ? job : json_object();
}

static const char *error_code(const json_t *job)
{
	const char *c = json_string_value(json_object_get(json_object_get(job, "error"), "code"));

	return c ? c : "";
}

static void test_order_and_outcomes(struct store *s)
{
	struct jobs *j = NULL;
	int64_t ids[6], fail, bare;
	unsigned long ok = 0, failed = 0, cancelled = 0;
	size_t i;

	fake_reset();
	REQUIRE(jobs_start(s, 16, fake_runner, &fake, &j) == 0);
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		ids[i] = submit(j, "ok");
	fail = submit(j, "fail");
	bare = submit(j, "bare");
	CHECK(wait_state(s, bare, "failed"));

	/* in submission order, one at a time */
	CHECK(fake.n_order == ARRAY_SIZE(ids) + 2);
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		CHECK(fake.order[i] == ids[i]);
	CHECK(fake.max_active == 1);

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		json_auto_t *job = job_get(s, ids[i]);
		json_auto_t *trace = NULL;
		json_t *steps, *st;

		CHECK(strcmp(json_string_value(json_object_get(job, "state")), "succeeded") == 0);
		CHECK(json_real_value(json_object_get(job, "progress")) == 1);
		CHECK(json_is_string(json_object_get(job, "started")));
		CHECK(json_is_string(json_object_get(job, "finished")));
		CHECK(strcmp(json_string_value(
				 json_object_get(json_object_get(job, "result"), "verdict")),
			     "no_bottleneck") == 0);
		CHECK(strcmp(json_string_value(
				 json_object_get(json_object_get(job, "result"), "kind")),
			     "diagnose") == 0);
		CHECK(!json_object_get(job, "error"));

		CHECK(store_trace_get(s, ids[i], &trace) == 0);
		steps = json_object_get(trace, "steps");
		CHECK(json_array_size(steps) == 2);
		st = json_array_get(steps, 0);
		CHECK(strcmp(json_string_value(json_object_get(st, "kind")), "measure") == 0);
		CHECK(json_integer_value(json_object_get(st, "x")) == 1);
		CHECK(json_real_value(json_object_get(st, "t")) >= 0);
		/* data cannot override the step's own kind */
		st = json_array_get(steps, 1);
		CHECK(strcmp(json_string_value(json_object_get(st, "kind")), "decision") == 0);
	}
	{
		json_auto_t *job = job_get(s, fail);
		CHECK(strcmp(json_string_value(json_object_get(job, "state")), "failed") == 0);
		CHECK(strcmp(error_code(job), "boom") == 0);
		CHECK(!json_object_get(job, "result"));
	}
	{
		json_auto_t *job = job_get(s, bare);
		CHECK(strcmp(error_code(job), "internal") == 0);
	}
	jobs_counts(j, &ok, &failed, &cancelled, NULL);
	CHECK(ok == ARRAY_SIZE(ids) && failed == 2 && cancelled == 0);
	CHECK(jobs_queued(j) == 0);
	CHECK(jobs_cancel(j, ids[0]) == -EALREADY);
	CHECK(jobs_cancel(j, 987654) == -ENOENT);
	jobs_stop(j);
}

static void test_bound_and_cancel(struct store *s)
{
	struct jobs *j = NULL;
	json_auto_t *req = json_pack("{s:s}", "mode", "ok");
	int64_t blocker, q1, q2, extra = 0, blocker2, stubborn;
	unsigned long ok = 0, failed = 0, cancelled = 0;

	fake_reset();
	REQUIRE(jobs_start(s, 2, fake_runner, &fake, &j) == 0);
	CHECK(!jobs_busy(j));
	blocker = submit(j, "block");
	CHECK(wait_blocked(blocker));
	CHECK(jobs_busy(j));
	CHECK(wait_state(s, blocker, "running"));

	/* the running job does not count against the bound */
	q1 = submit(j, "ok");
	q2 = submit(j, "ok");
	CHECK(jobs_queued(j) == 2);
	CHECK(jobs_submit(j, "diagnose", req, &extra) == -EAGAIN);
	CHECK(extra == 0);

	/* cancel a queued job: at once */
	CHECK(jobs_cancel(j, q1) == 0);
	CHECK(wait_state(s, q1, "cancelled"));
	CHECK(jobs_queued(j) == 1);
	CHECK(jobs_cancel(j, q1) == -EALREADY);
	{
		json_auto_t *job = job_get(s, q1);
		CHECK(json_is_null(json_object_get(job, "started")));
		CHECK(json_is_string(json_object_get(job, "finished")));
	}

	/* cancel the running job: the runner sees it and returns -ECANCELED */
	CHECK(jobs_cancel(j, blocker) == 0);
	CHECK(wait_state(s, blocker, "cancelled"));
	CHECK(wait_state(s, q2, "succeeded"));
	CHECK(fake.n_order == 2 && fake.order[1] == q2); /* q1 never ran */

	/* any error while cancel was requested => cancelled */
	stubborn = submit(j, "stubborn");
	CHECK(wait_blocked(stubborn));
	CHECK(jobs_cancel(j, stubborn) == 0);
	CHECK(wait_state(s, stubborn, "cancelled"));

	/* a released blocker succeeds */
	blocker2 = submit(j, "block");
	CHECK(wait_blocked(blocker2));
	fake_release();
	CHECK(wait_state(s, blocker2, "succeeded"));

	jobs_counts(j, &ok, &failed, &cancelled, NULL);
	CHECK(ok == 2 && failed == 0 && cancelled == 3);
	jobs_stop(j);
}

/* A job whose final state is in the store takes no cancel: the DELETE a dashboard sends the
 * moment it reads "succeeded" or "failed" is answered "already finished", every time. */
static void test_cancel_once_finished(struct store *s)
{
	static const char *const modes[] = {"ok", "bare"};
	struct jobs *j = NULL;
	unsigned wrong = 0, i;

	fake_reset();
	REQUIRE(jobs_start(s, 4, fake_runner, &fake, &j) == 0);
	for (i = 0; i < 200; i++) {
		const char *mode = modes[i % ARRAY_SIZE(modes)];
		int64_t id = submit(j, mode);
		char state[16] = "";
		int r, spins;

		/* read the store without pausing, to ask the instant the final state lands */
		for (spins = 0; spins < 20000000; spins++)
			if (store_job_state(s, id, state, sizeof(state)) == 0 &&
			    (strcmp(state, "succeeded") == 0 || strcmp(state, "failed") == 0))
				break;
		r = jobs_cancel(j, id);
		if (r != -EALREADY) {
			wrong++;
			fprintf(stderr, "job %lld (%s) in state %s: cancel answered %d\n",
				(long long)id, mode, state, r);
		}
	}
	CHECKF(wrong == 0, "%u of 200 finished jobs took a cancel", wrong);
	jobs_stop(j);
}

/* A chore: its calls, and those made while a job ran. */
struct chore_calls {
	unsigned calls, during_job;
};

static void count_chore(void *userdata)
{
	struct chore_calls *c = userdata;

	pthread_mutex_lock(&fake.lock);
	c->calls++;
	c->during_job += fake.active > 0;
	pthread_mutex_unlock(&fake.lock);
}

static unsigned chore_calls(const struct chore_calls *c)
{
	unsigned n;

	pthread_mutex_lock(&fake.lock);
	n = c->calls;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

/* Wait (up to 5 s) until chore c has been called more than n times. */
static bool wait_chore(const struct chore_calls *c, unsigned n)
{
	int i;

	for (i = 0; i < 2500; i++) {
		if (chore_calls(c) > n)
			return true;
		sleep_ms(2);
	}
	return false;
}

/*
 * The worker's chores (the host's pace read between jobs, retention): at
 * once, then every interval, never while a job runs: one due during a job
 * waits for its end. At most JOBS_CHORES_MAX.
 */
static void test_chores(struct store *s)
{
	static struct chore_calls every_s, more[JOBS_CHORES_MAX];
	struct jobs *j = NULL;
	unsigned before, i;
	int64_t blocker;

	fake_reset();
	REQUIRE(jobs_start(s, 4, fake_runner, &fake, &j) == 0);
	CHECK(jobs_add_chore(j, 1, NULL, NULL) == -EINVAL);
	CHECK(jobs_add_chore(j, 1, count_chore, &every_s) == 0);
	CHECK(wait_chore(&every_s, 0)); /* at once */
	CHECK(wait_chore(&every_s, 1)); /* and a second later */

	blocker = submit(j, "block");
	CHECK(wait_blocked(blocker));
	before = chore_calls(&every_s);
	sleep_ms(2500); /* two intervals and more: due, and not called */
	CHECKF(chore_calls(&every_s) == before, "%u calls during a job of 2.5 s",
	       chore_calls(&every_s) - before);
	fake_release();
	CHECK(wait_state(s, blocker, "succeeded"));
	CHECK(wait_chore(&every_s, before)); /* at the job's end */
	pthread_mutex_lock(&fake.lock);
	CHECKF(every_s.during_job == 0, "%u of %u calls while a job ran", every_s.during_job,
	       every_s.calls);
	pthread_mutex_unlock(&fake.lock);

	for (i = 1; i < JOBS_CHORES_MAX; i++)
		CHECK(jobs_add_chore(j, 3600, count_chore, &more[i]) == 0);
	CHECK(jobs_add_chore(j, 3600, count_chore, &more[0]) == -ENOSPC);
	for (i = 1; i < JOBS_CHORES_MAX; i++)
		CHECK(wait_chore(&more[i], 0));
	CHECK(chore_calls(&more[0]) == 0);
	jobs_stop(j);
}

/* Readings stored for host h on cpu (of the last day and more). */
static size_t pace_readings(struct store *s, const char *h, int cpu)
{
	double ns[16];
	size_t n = 0;

	CHECK(store_pace_since(s, h, cpu, 0, ns, ARRAY_SIZE(ns), &n) == 0);
	return n;
}

/*
 * The host's pace read between jobs (usual_pace_chore) on two CPUs: with a
 * job queued it takes one reading and leaves the round for its next call,
 * which goes on where it stopped; without, it reads them all.
 */
static void test_pace_round_yields(struct store *s)
{
	const char *h = "argus-test-yield";
	struct usual_pace_reader rd = { .store = s, .hostname = h, .interval_s = 300 };
	struct jobs *j = NULL;
	int64_t blocker, waiting;
	int c, cpu[2] = { -1, -1 }, n = 0;
	cpu_set_t mine;

	REQUIRE(sched_getaffinity(0, sizeof(mine), &mine) == 0);
	for (c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &mine)) {
			cpu[n++] = c;
			CPU_SET(c, &rd.cpus);
		}
	REQUIRE(n == 2); /* as test-probe needs CPUs 0 and 1 */

	fake_reset();
	REQUIRE(jobs_start(s, 4, fake_runner, &fake, &j) == 0);
	rd.jobs = j;
	blocker = submit(j, "block");
	CHECK(wait_blocked(blocker));
	waiting = submit(j, "ok");
	CHECK(jobs_queued(j) == 1);

	usual_pace_chore(&rd);
	CHECKF(pace_readings(s, h, cpu[0]) == 1 && pace_readings(s, h, cpu[1]) == 0,
	       "a job queued: %zu and %zu readings, wanted 1 and 0",
	       pace_readings(s, h, cpu[0]), pace_readings(s, h, cpu[1]));
	CHECK(rd.rounds == 0 && rd.next_cpu == cpu[1]);

	fake_release();
	CHECK(wait_state(s, blocker, "succeeded") && wait_state(s, waiting, "succeeded"));
	CHECK(jobs_queued(j) == 0);
	usual_pace_chore(&rd); /* the round goes on at the second CPU */
	CHECKF(pace_readings(s, h, cpu[0]) == 1 && pace_readings(s, h, cpu[1]) == 1,
	       "the round's end: %zu and %zu readings, wanted 1 and 1",
	       pace_readings(s, h, cpu[0]), pace_readings(s, h, cpu[1]));
	CHECK(rd.rounds == 1 && rd.next_cpu == 0);

	usual_pace_chore(&rd); /* fewer than USUAL_PACE_FIRST rounds: a whole one at once */
	CHECK(pace_readings(s, h, cpu[0]) == 2 && pace_readings(s, h, cpu[1]) == 2);
	CHECK(rd.rounds == 2 && rd.next_cpu == 0);
	jobs_stop(j);
}

static void test_stop_and_restart(struct store *s)
{
	struct jobs *j = NULL;
	int64_t running, queued, crashed, recovered[5], *left = NULL;
	json_auto_t *req = json_pack("{s:s}", "mode", "ok");
	size_t n_left = 0, i;

	fake_reset();
	REQUIRE(jobs_start(s, 4, fake_runner, &fake, &j) == 0);
	running = submit(j, "block");
	CHECK(wait_blocked(running));
	queued = submit(j, "ok");

	/* stop: intake closes (the runner's submit sees -ESHUTDOWN), the running job is cancelled
	 */
	pthread_mutex_lock(&fake.lock);
	fake.jobs = j;
	pthread_mutex_unlock(&fake.lock);
	jobs_stop(j);
	CHECK(fake.submit_on_cancel == -ESHUTDOWN);
	CHECK(wait_state(s, running, "cancelled"));
	CHECK(wait_state(s, queued, "queued")); /* kept for the next start */

	/* a job left "running" by a crash, and more queued jobs than queue_max */
	CHECK(store_job_create(s, "diagnose", req, &crashed) == 0);
	CHECK(store_job_update(s, crashed, "running", 0.3, "measuring", NULL, NULL) == 0);
	for (i = 0; i < ARRAY_SIZE(recovered); i++)
		CHECK(store_job_create(s, "reference", req, &recovered[i]) == 0);
	store_close(s);

	/* restart on a reopened store */
	REQUIRE(store_open(db_path, schema_dir, &s) == 0);
	fake_reset();
	REQUIRE(jobs_start(s, 2, fake_runner, &fake, &j) == 0);
	CHECK(wait_state(s, recovered[ARRAY_SIZE(recovered) - 1], "succeeded"));
	CHECK(wait_state(s, crashed, "interrupted"));
	CHECK(wait_state(s, queued, "succeeded"));
	CHECK(fake.n_order == 1 + ARRAY_SIZE(recovered));
	CHECK(fake.order[0] == queued);
	for (i = 0; i < ARRAY_SIZE(recovered); i++) {
		json_auto_t *job = job_get(s, recovered[i]);

		CHECK(fake.order[1 + i] == recovered[i]);
		CHECK(strcmp(json_string_value(
				 json_object_get(json_object_get(job, "result"), "kind")),
			     "reference") == 0);
	}
	{
		json_auto_t *job = job_get(s, crashed);
		CHECK(strcmp(error_code(job), "interrupted") == 0);
	}
	CHECK(jobs_cancel(j, crashed) == -EALREADY);
	jobs_stop(j);

	CHECK(store_jobs_queued(s, &left, &n_left) == 0);
	CHECK(n_left == 0);
	free(left);
	store_close(s);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *cmd = NULL;
	struct store *s = NULL;
	struct jobs *j = NULL;

	REQUIRE(src);
	REQUIRE(mkdtemp(tmpdir));
	schema_dir = xasprintf("%s/schema", src);
	db_path = xasprintf("%s/argusd.db", tmpdir);
	REQUIRE(store_open(db_path, schema_dir, &s) == 0);

	CHECK(jobs_start(s, 0, fake_runner, &fake, &j) == -EINVAL);
	CHECK(jobs_start(s, 4, NULL, &fake, &j) == -EINVAL);
	CHECK(j == NULL);
	jobs_stop(NULL);

	test_order_and_outcomes(s);
	test_bound_and_cancel(s);
	test_cancel_once_finished(s);
	test_chores(s);
	test_pace_round_yields(s);
	test_stop_and_restart(s); /* closes s */

	cmd = xasprintf("rm -rf '%s'", tmpdir);
	CHECK(system(cmd) == 0);
	free(schema_dir);
	free(db_path);
	return tap_done("test-jobs");
}
