// SPDX-License-Identifier: MIT
/*
 * The job queue. The store is the record of every job; this file keeps the
 * in-memory order of the waiting ones and the single worker thread.
 *
 * Locking: j->lock guards the queue, the running job pointer and the
 * counters. It may be held while calling into the store (the store never
 * calls back), never the other way round. The runner runs without it.
 */
#include "daemon/jobs.h"
#include "daemon/log.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <systemd/sd-daemon.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

struct job_ctx {
	struct jobs *jobs;
	int64_t id;
	char kind[16];
	json_t *request;
	uint64_t started_ns;
	atomic_bool cancel;
};

struct jobs {
	struct store *store;
	job_runner_t runner;
	void *userdata;
	job_admit_t admit;
	unsigned queue_max;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	int64_t *queue; /* waiting ids, oldest first */
	size_t n, cap;
	struct job_ctx *current; /* the running job, NULL when idle */
	bool stopping;
	bool thread_started;
	pthread_t thread;

	unsigned long n_succeeded, n_failed, n_cancelled;
	unsigned long n_interrupted; /* marked so at start: cut off by the last stop */
	/* the probe's share of each measured level's run (overhead_fraction), a histogram */
	unsigned long overhead_le[JOBS_OVERHEAD_BOUNDS], overhead_n;
	double overhead_sum;
	json_t *diagnoses; /* {verdict: {node: count}} (jobs_diagnoses) */
	struct {
		unsigned long le[JOBS_DURATION_BOUNDS], n;
		double sum;
	} durations[2]; /* diagnose, reference */

	/* what the worker does between jobs (jobs_add_chore); times on CLOCK_MONOTONIC */
	struct chore {
		jobs_chore_t fn;
		void *userdata;
		uint64_t every_ns, next_ns;
	} chores[JOBS_CHORES_MAX];
	size_t n_chores;
	struct store_retention retention; /* the retention chore's policy (jobs_set_retention) */
	bool retention_added;
};

/* ---- the context handed to runners ---- */

int64_t job_ctx_id(const struct job_ctx *ctx)
{
	return ctx->id;
}

const char *job_ctx_kind(const struct job_ctx *ctx)
{
	return ctx->kind;
}

const json_t *job_ctx_request(const struct job_ctx *ctx)
{
	return ctx->request;
}

struct store *job_ctx_store(const struct job_ctx *ctx)
{
	return ctx->jobs->store;
}

bool job_ctx_cancelled(const struct job_ctx *ctx)
{
	return atomic_load_explicit(&ctx->cancel, memory_order_relaxed);
}

void job_ctx_progress(struct job_ctx *ctx, double fraction, const char *step)
{
	int r;

	if (fraction > 1)
		fraction = 1;
	r = store_job_update(ctx->jobs->store, ctx->id, NULL, fraction < 0 ? 0 : fraction, step,
			     NULL, NULL);
	if (r < 0)
		log_warning_errno(r, "job %lld: cannot record progress: %m", (long long)ctx->id);
}

void job_ctx_trace(struct job_ctx *ctx, const char *kind, json_t *data)
{
	json_auto_t *step = json_object();
	int r;

	json_object_set_new(step, "t", json_real((now_mono_ns() - ctx->started_ns) / 1e9));
	json_object_set_new(step, "kind", json_string(kind ? kind : "note"));
	if (json_is_object(data)) {
		/* the step's own "t" and "kind" win over same-named data fields */
		json_object_update_missing(step, data);
	} else if (data) {
		json_object_set(step, "data", data);
	}
	json_decref(data);

	r = store_trace_append(ctx->jobs->store, ctx->id, step);
	if (r < 0)
		log_warning_errno(r, "job %lld: cannot append trace step '%s': %m",
				  (long long)ctx->id, kind ? kind : "note");
}

/* ---- the queue ---- */

static int queue_push(struct jobs *j, int64_t id)
{
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		int64_t *q = realloc(j->queue, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		j->queue = q;
		j->cap = cap;
	}
	j->queue[j->n++] = id;
	return 0;
}

static bool queue_remove(struct jobs *j, int64_t id)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (j->queue[i] == id) {
			memmove(j->queue + i, j->queue + i + 1, (j->n - i - 1) * sizeof(*j->queue));
			j->n--;
			return true;
		}
	return false;
}

static int64_t queue_pop(struct jobs *j)
{
	int64_t id = j->queue[0];

	memmove(j->queue, j->queue + 1, (j->n - 1) * sizeof(*j->queue));
	j->n--;
	return id;
}

/* ---- the worker ---- */

json_t *job_error(const char *code, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	/* json_pack refuses a string that is not UTF-8, and the error would be lost */
	utf8_sanitize(msg);
	return json_pack("{s:s,s:s}", "code", code, "message", msg ?: code);
}

const double jobs_duration_bounds[JOBS_DURATION_BOUNDS] = {1, 5, 10, 30, 60, 120, 300, 900};

/* The result's verdict and named node into the counters, and the job's duration; j->lock held. */
const double jobs_overhead_bounds[JOBS_OVERHEAD_BOUNDS] = {0.001, 0.002, 0.005, 0.01,
							  0.02,	 0.05,	0.1,   0.2};

/* Each level's overhead_fraction of a diagnosis's result (present with probe_stats). */
static void count_overhead(struct jobs *j, const json_t *overhead)
{
	const json_t *e;
	size_t i, k;

	json_array_foreach (overhead, i, e) {
		json_t *f = json_object_get(e, "overhead_fraction");
		double v;

		if (!json_is_number(f))
			continue;
		v = json_number_value(f);
		for (k = 0; k < JOBS_OVERHEAD_BOUNDS; k++)
			j->overhead_le[k] += v <= jobs_overhead_bounds[k];
		j->overhead_n++;
		j->overhead_sum += v;
	}
}

static void count_finished(struct jobs *j, const struct job_ctx *ctx, const json_t *res)
{
	int k = strcmp(ctx->kind, "diagnose") == 0 ? 0 : strcmp(ctx->kind, "reference") == 0 ? 1 : -1;
	const char *verdict = json_string_value(json_object_get(res, "verdict"));
	json_t *path = json_object_get(res, "path"), *by;
	const char *node = json_string_value(json_array_get(path, json_array_size(path) - 1));
	double s;
	size_t i;

	if (k < 0 || !ctx->started_ns)
		return;
	s = (now_mono_ns() - ctx->started_ns) / 1e9;
	for (i = 0; i < JOBS_DURATION_BOUNDS; i++)
		j->durations[k].le[i] += s <= jobs_duration_bounds[i];
	j->durations[k].n++;
	j->durations[k].sum += s;
	if (k != 0 || !verdict || !json_is_array(path))
		return;
	if (!j->diagnoses)
		j->diagnoses = json_object();
	by = json_object_get(j->diagnoses, verdict);
	if (!by) {
		by = json_object();
		json_object_set_new(j->diagnoses, verdict, by);
	}
	json_object_set_new(by, node ?: "",
			    json_integer(json_integer_value(json_object_get(by, node ?: "")) + 1));
	count_overhead(j, json_object_get(res, "overhead"));
}

/* Record the runner's outcome; the state follows jobs.h. */
static void finish(struct jobs *j, struct job_ctx *ctx, int r, json_t *result, json_t *error)
{
	json_auto_t *err = error;
	json_auto_t *res = result;
	const char *state;
	int q;

	/* One step under j->lock: the state decided, counted, recorded, and the job no longer
	 * current. jobs_cancel then sees either a running job or a finished one, never a job
	 * whose final state is in the store but which still takes a cancel. */
	pthread_mutex_lock(&j->lock);
	if (r >= 0) {
		state = "succeeded";
		if (!res)
			res = json_object();
	} else if (r == -ECANCELED || job_ctx_cancelled(ctx)) {
		state = "cancelled";
		if (!err)
			err = job_error("cancelled", "the job was cancelled before it finished");
	} else {
		state = "failed";
		if (!err)
			err = job_error("internal", "the job failed: %s", strerror(-r));
	}
	/* counted first: whoever reads the final state from the store finds it counted */
	if (strcmp(state, "succeeded") == 0)
		j->n_succeeded++;
	else if (strcmp(state, "failed") == 0)
		j->n_failed++;
	else
		j->n_cancelled++;
	count_finished(j, ctx, r >= 0 ? res : NULL);
	q = store_job_update(j->store, ctx->id, state, r >= 0 ? 1 : -1, state, res,
			     r >= 0 ? NULL : err);
	j->current = NULL;
	pthread_mutex_unlock(&j->lock);

	if (q < 0)
		log_error_errno(q, "job %lld: cannot record final state %s: %m", (long long)ctx->id,
				state);
	else {
		json_t *path = json_object_get(res, "path");

		log_job_finished(&(struct log_job){
		    .id = ctx->id,
		    .kind = ctx->kind,
		    .subject = json_string_value(json_object_get(ctx->request, "subject")),
		    .state = state,
		    .verdict = r >= 0 ? json_string_value(json_object_get(res, "verdict")) : NULL,
		    .node = json_string_value(json_array_get(path, json_array_size(path) - 1)),
		    .error = strcmp(state, "failed") == 0
				 ? json_string_value(json_object_get(err, "message"))
				 : NULL,
		});
	}
	sd_notifyf(0, "STATUS=Idle; job %lld (%s) %s", (long long)ctx->id, ctx->kind, state);
}

json_t *jobs_diagnoses(struct jobs *j)
{
	json_t *copy;

	pthread_mutex_lock(&j->lock);
	copy = j->diagnoses ? json_deep_copy(j->diagnoses) : json_object();
	pthread_mutex_unlock(&j->lock);
	return copy;
}

void jobs_durations(struct jobs *j, const char *kind,
		    unsigned long ret_le[static JOBS_DURATION_BOUNDS], unsigned long *ret_n,
		    double *ret_sum)
{
	int k = strcmp(kind, "diagnose") == 0 ? 0 : 1;

	pthread_mutex_lock(&j->lock);
	memcpy(ret_le, j->durations[k].le, sizeof(j->durations[k].le));
	*ret_n = j->durations[k].n;
	*ret_sum = j->durations[k].sum;
	pthread_mutex_unlock(&j->lock);
}

void jobs_overhead(struct jobs *j, unsigned long ret_le[static JOBS_OVERHEAD_BOUNDS],
		   unsigned long *ret_n, double *ret_sum)
{
	pthread_mutex_lock(&j->lock);
	memcpy(ret_le, j->overhead_le, sizeof(j->overhead_le));
	*ret_n = j->overhead_n;
	*ret_sum = j->overhead_sum;
	pthread_mutex_unlock(&j->lock);
}

static void run_one(struct jobs *j, struct job_ctx *ctx)
{
	json_auto_t *job = NULL;
	json_t *result = NULL, *error = NULL;
	const char *kind;
	int r;

	r = store_job_get(j->store, ctx->id, &job);
	if (r < 0) {
		log_error_errno(r, "job %lld: cannot load it from the store: %m",
				(long long)ctx->id);
		finish(j, ctx, r, NULL, job_error("store", "the job could not be loaded"));
		return;
	}
	kind = json_string_value(json_object_get(job, "kind"));
	snprintf(ctx->kind, sizeof(ctx->kind), "%s", kind ? kind : "");
	ctx->request = json_incref(json_object_get(job, "request"));
	ctx->started_ns = now_mono_ns();

	if (job_ctx_cancelled(ctx)) {
		/* cancelled between leaving the queue and starting */
		finish(j, ctx, -ECANCELED, NULL, NULL);
		return;
	}
	if (j->admit) {
		r = j->admit(job, &error);
		if (r < 0) {
			if (!error)
				error = job_error("not_admitted", "the job may not run any more");
			finish(j, ctx, r == -ECANCELED ? -EPERM : r, NULL, error);
			return;
		}
	}
	r = store_job_update(j->store, ctx->id, "running", 0, "starting", NULL, NULL);
	if (r < 0) {
		log_error_errno(r, "job %lld: cannot mark it running: %m", (long long)ctx->id);
		finish(j, ctx, r, NULL, job_error("store", "the job could not be started"));
		return;
	}
	log_info("job %lld (%s) running", (long long)ctx->id, ctx->kind);
	sd_notifyf(0, "STATUS=Running job %lld (%s)", (long long)ctx->id, ctx->kind);

	r = j->runner(ctx, j->userdata, &result, &error);
	if (r >= 0) {
		json_decref(error);
		error = NULL;
	} else {
		json_decref(result);
		result = NULL;
	}
	finish(j, ctx, r, result, error);
}

/*
 * Under j->lock: the first chore that is due, else NULL with the time the
 * next one is (abs, monotonic) in *ret_until, *ret_timed false when none.
 */
static struct chore *chore_due(struct jobs *j, struct timespec *ret_until, bool *ret_timed)
{
	uint64_t now = now_mono_ns(), next = UINT64_MAX;
	size_t i;

	for (i = 0; i < j->n_chores; i++) {
		if (now >= j->chores[i].next_ns)
			return &j->chores[i];
		if (j->chores[i].next_ns < next)
			next = j->chores[i].next_ns;
	}
	*ret_timed = next != UINT64_MAX;
	*ret_until = (struct timespec){ next / 1000000000ull, next % 1000000000ull };
	return NULL;
}

/* The retention chore: delete what retention allows and say so. */
static void run_retention(void *userdata)
{
	struct jobs *j = userdata;
	struct store_retention policy;
	struct store_retention_stats st;
	int r;

	pthread_mutex_lock(&j->lock);
	policy = j->retention;
	pthread_mutex_unlock(&j->lock);
	r = store_apply_retention(j->store, &policy, now_real_ns(), &st);
	if (r < 0)
		log_warning_errno(r, "retention: deleting old jobs failed: %m");
	else if (st.jobs_deleted || st.pages_freed)
		log_info("retention: %u finished job(s) deleted (retention_days %u, max_jobs %u), "
			 "%lld database page(s) given back",
			 st.jobs_deleted, policy.retention_days, policy.max_jobs, st.pages_freed);
}

static void *worker(void *arg)
{
	struct jobs *j = arg;

	for (;;) {
		struct job_ctx ctx = {.jobs = j};
		struct chore *due = NULL, chore;
		struct timespec until;
		bool timed;

		pthread_mutex_lock(&j->lock);
		while (!j->stopping && !(due = chore_due(j, &until, &timed)) && j->n == 0) {
			if (timed)
				pthread_cond_timedwait(&j->wake, &j->lock, &until);
			else
				pthread_cond_wait(&j->wake, &j->lock);
		}
		if (j->stopping) {
			/* what is still queued stays "queued" in the store for the next start */
			pthread_mutex_unlock(&j->lock);
			break;
		}
		if (due) {
			/* between jobs, never during one: not to disturb a measurement */
			due->next_ns = now_mono_ns() + due->every_ns;
			chore = *due;
			pthread_mutex_unlock(&j->lock);
			chore.fn(chore.userdata);
			continue;
		}
		/* leave the queue and become current in one step: jobs_cancel sees one or the other
		 */
		ctx.id = queue_pop(j);
		j->current = &ctx;
		pthread_mutex_unlock(&j->lock);

		run_one(j, &ctx); /* its finish() leaves j->current */
		json_decref(ctx.request);
	}
	return NULL;
}

/* ---- public ---- */

int jobs_start(struct store *s, unsigned queue_max, job_runner_t runner, void *userdata,
	       struct jobs **ret)
{
	return jobs_start_admitted(s, queue_max, runner, userdata, NULL, ret);
}

int jobs_start_admitted(struct store *s, unsigned queue_max, job_runner_t runner, void *userdata,
			job_admit_t admit, struct jobs **ret)
{
	_cleanup_free_ int64_t *ids = NULL;
	struct jobs *j;
	size_t n = 0, i;
	int r, interrupted;

	if (!s || !runner || queue_max == 0)
		return -EINVAL;

	interrupted = store_jobs_interrupt_running(s);
	if (interrupted < 0)
		return interrupted;
	if (interrupted > 0)
		log_notice("jobs: %d job(s) cut off by the last stop marked interrupted",
			   interrupted);
	r = store_jobs_queued(s, &ids, &n);
	if (r < 0)
		return r;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->n_interrupted = (unsigned long)interrupted;
	j->store = s;
	j->runner = runner;
	j->userdata = userdata;
	j->admit = admit;
	j->queue_max = queue_max;
	pthread_mutex_init(&j->lock, NULL);
	{
		/* timed waits (retention) on the monotonic clock */
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&j->wake, &attr);
		pthread_condattr_destroy(&attr);
	}

	/* recovered jobs are all queued again, in order, even beyond queue_max */
	for (i = 0; i < n; i++) {
		r = queue_push(j, ids[i]);
		if (r < 0)
			goto fail;
	}
	if (n > 0)
		log_info("jobs: %zu queued job(s) resumed", n);

	r = -pthread_create(&j->thread, NULL, worker, j);
	if (r < 0) {
		log_error_errno(r, "jobs: cannot start the worker thread: %m");
		goto fail;
	}
	j->thread_started = true;
	*ret = j;
	return 0;

fail:
	jobs_stop(j);
	return r;
}

int jobs_submit(struct jobs *j, const char *kind, const json_t *request, int64_t *ret_id)
{
	return jobs_submit_as(j, kind, request, NULL, 0, ret_id);
}

int jobs_submit_as(struct jobs *j, const char *kind, const json_t *request, const char *submitter,
		   unsigned per_submitter, int64_t *ret_id)
{
	unsigned waiting;
	int64_t id;
	int r;

	pthread_mutex_lock(&j->lock);
	if (j->stopping) {
		r = -ESHUTDOWN;
		goto out;
	}
	if (j->n >= j->queue_max) {
		r = -EAGAIN;
		goto out;
	}
	/*
	 * Counted in the store, under the queue lock like the creation below, so
	 * that concurrent submits of one submitter cannot both pass the bound.
	 */
	if (submitter && per_submitter > 0) {
		r = store_jobs_queued_by(j->store, submitter, &waiting);
		if (r < 0)
			goto out;
		if (waiting >= per_submitter) {
			r = -EDQUOT;
			goto out;
		}
	}
	/* created under the lock so that the bound holds under concurrent submits */
	r = store_job_create_by(j->store, kind, request, submitter, &id);
	if (r < 0)
		goto out;
	r = queue_push(j, id);
	if (r < 0) {
		json_auto_t *err = job_error("internal", "out of memory while queueing");

		(void)store_job_update(j->store, id, "failed", -1, NULL, NULL, err);
		goto out;
	}
	pthread_cond_signal(&j->wake);
	*ret_id = id;
out:
	pthread_mutex_unlock(&j->lock);
	return r;
}

int jobs_cancel(struct jobs *j, int64_t id)
{
	char state[16];
	int r;

	pthread_mutex_lock(&j->lock);
	if (j->current && j->current->id == id) {
		atomic_store(&j->current->cancel, true);
		r = 0;
		goto out;
	}
	if (queue_remove(j, id)) {
		json_auto_t *err =
		    job_error("cancelled", "the job was cancelled before it started");

		r = store_job_update(j->store, id, "cancelled", -1, "cancelled", NULL, err);
		if (r >= 0)
			j->n_cancelled++;
		goto out;
	}
	r = store_job_state(j->store, id, state, sizeof(state));
	if (r >= 0)
		/* not ours to run (any more): it ended, or was cut off by an earlier stop */
		r = -EALREADY;
out:
	pthread_mutex_unlock(&j->lock);
	return r;
}

int jobs_add_chore(struct jobs *j, unsigned interval_s, jobs_chore_t fn, void *userdata)
{
	int r = 0;

	if (!fn)
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	if (j->n_chores == JOBS_CHORES_MAX)
		r = -ENOSPC;
	else
		j->chores[j->n_chores++] = (struct chore){
			.fn = fn, .userdata = userdata,
			.every_ns = (uint64_t)(interval_s ?: 1) * 1000000000ull,
			.next_ns = now_mono_ns(),
		};
	pthread_cond_signal(&j->wake);
	pthread_mutex_unlock(&j->lock);
	return r;
}

void jobs_set_retention(struct jobs *j, const struct store_retention *p, unsigned interval_s)
{
	bool add;

	pthread_mutex_lock(&j->lock);
	j->retention = *p;
	add = (p->retention_days || p->max_jobs) && !j->retention_added;
	j->retention_added |= add;
	pthread_mutex_unlock(&j->lock);
	if (add && jobs_add_chore(j, interval_s, run_retention, j) < 0)
		log_error("retention: no room for its chore: finished jobs are kept");
}

unsigned jobs_queued(struct jobs *j)
{
	unsigned n;

	pthread_mutex_lock(&j->lock);
	n = j->n;
	pthread_mutex_unlock(&j->lock);
	return n;
}

bool jobs_busy(struct jobs *j)
{
	bool busy;

	pthread_mutex_lock(&j->lock);
	busy = j->current != NULL;
	pthread_mutex_unlock(&j->lock);
	return busy;
}

void jobs_counts(struct jobs *j, unsigned long *succeeded, unsigned long *failed,
		 unsigned long *cancelled, unsigned long *interrupted)
{
	pthread_mutex_lock(&j->lock);
	if (interrupted)
		*interrupted = j->n_interrupted;
	if (succeeded)
		*succeeded = j->n_succeeded;
	if (failed)
		*failed = j->n_failed;
	if (cancelled)
		*cancelled = j->n_cancelled;
	pthread_mutex_unlock(&j->lock);
}

void jobs_stop(struct jobs *j)
{
	if (!j)
		return;

	pthread_mutex_lock(&j->lock);
	j->stopping = true;
	if (j->current)
		atomic_store(&j->current->cancel, true);
	pthread_cond_broadcast(&j->wake);
	pthread_mutex_unlock(&j->lock);

	if (j->thread_started)
		pthread_join(j->thread, NULL);

	pthread_cond_destroy(&j->wake);
	pthread_mutex_destroy(&j->lock);
	free(j->queue);
	json_decref(j->diagnoses);
	free(j);
}
