// SPDX-License-Identifier: MIT
/*
 * Retention: finished jobs deleted by age (retention_days) and by count
 * (max_jobs) with their traces, vectors and probes; queued and running jobs
 * and references kept; the freed pages given back (incremental vacuum) on
 * a new database, reused on one created without it. The per-job trace cap
 * (trace_max_bytes): steps beyond it left out and the cut noted, also for a
 * hostile endpoint's 24 replies of 4 MiB. The worker's tick (at once, then
 * every interval) and argusd applying it at start.
 *
 * Times are moved into the past by writing the job's timestamps in the
 * test's own database with SQLite, as the store writes them.
 */
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/util.h"
#include "tests/daemon-harness.h"
#include "tests/tap.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

static char tmpdir[] = "/tmp/argus-test-retention-XXXXXX";
static char *schema_dir;
static int n_db;

/* A fresh database file of its own for each case. */
static struct store *open_new(char **ret_path)
{
	struct store *s = NULL;

	*ret_path = xasprintf("%s/db-%d.sqlite", tmpdir, n_db++);
	REQUIRE(store_open(*ret_path, schema_dir, &s) == 0 && s);
	return s;
}

/* Run SQL on the database file beside the store's own connection (WAL lets both). */
static void sql(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sql(const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	sqlite3 *db = NULL;
	char *err = NULL;
	va_list ap;

	va_start(ap, fmt);
	REQUIRE(vasprintf(&text, fmt, ap) >= 0);
	va_end(ap);
	REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	CHECKF(sqlite3_exec(db, text, NULL, NULL, &err) == SQLITE_OK, "%s: %s", text, err ?: "");
	sqlite3_free(err);
	sqlite3_close(db);
}

/* One integer from a query on the database file. */
static long long sql_int(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static long long sql_int(const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	sqlite3_stmt *stmt = NULL;
	sqlite3 *db = NULL;
	long long v = -1;
	va_list ap;

	va_start(ap, fmt);
	REQUIRE(vasprintf(&text, fmt, ap) >= 0);
	va_end(ap);
	REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_prepare_v2(db, text, -1, &stmt, NULL) == SQLITE_OK &&
	    sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int64(stmt, 0);
	else
		fprintf(stderr, "query %s: %s\n", text, sqlite3_errmsg(db));
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return v;
}

static int64_t new_job(struct store *s, const char *workload, const char *state)
{
	json_auto_t *req = json_pack("{s:s,s:s}", "workload", workload, "subject", workload);
	int64_t id = 0;

	REQUIRE(store_job_create(s, "diagnose", req, &id) == 0 && id > 0);
	if (strcmp(state, "queued") != 0) {
		REQUIRE(store_job_update(s, id, "running", 0.1, "measuring", NULL, NULL) == 0);
		if (strcmp(state, "running") != 0)
			REQUIRE(store_job_update(s, id, state, 1, state, NULL, NULL) == 0);
	}
	return id;
}

/* A trace, a probe and a vector for the job; the trace about bytes long. */
static void fill_job(struct store *s, int64_t id, size_t bytes)
{
	_cleanup_free_ char *pad = malloc(bytes + 1);
	json_auto_t *step = NULL,
		    *probe = json_pack("{s:s,s:s}", "backend", "tracepoint", "source", "int x;");
	struct mvec v = {};

	REQUIRE(pad);
	memset(pad, 'x', bytes);
	pad[bytes] = 0;
	step = json_pack("{s:f,s:s,s:s}", "t", 0.5, "kind", "measure", "pad", pad);
	CHECK(store_trace_append(s, id, step) == 0);
	CHECK(store_probe_add(s, id, 1, probe) == 0);
	mvec_set(&v, "kernel_paging/count", 42);
	CHECK(store_vector_add(s, id, "pmv", 1, "", &v) == 0);
	mvec_free(&v);
}

static bool job_exists(struct store *s, int64_t id)
{
	json_t *j = NULL;
	int r = store_job_get(s, id, &j);

	json_decref(j);
	return r == 0;
}

static long long rows_of(const char *path, const char *table, int64_t id)
{
	return sql_int(path, "SELECT COUNT(*) FROM %s WHERE job_id = %lld", table, (long long)id);
}

/* Jobs finished long ago go, with everything of theirs; recent, queued and running ones stay. */
static void test_by_age(void)
{
	_cleanup_free_ char *path = NULL;
	struct store *s = open_new(&path);
	struct store_retention_stats st = {};
	json_auto_t *meta = NULL, *ref = NULL, *naming = NULL;
	int64_t old_ok, old_failed, old_cancelled, recent, queued, running, ref_id = 0, user;
	long long pages_before, pages_after;

	/* a new database gives freed pages back */
	CHECK(sql_int(path, "PRAGMA auto_vacuum") == 2);

	old_ok = new_job(s, "w", "succeeded");
	old_failed = new_job(s, "w", "failed");
	old_cancelled = new_job(s, "w", "cancelled");
	recent = new_job(s, "w", "succeeded");
	queued = new_job(s, "w", "queued");
	running = new_job(s, "w", "running");
	fill_job(s, old_ok, 2 << 20); /* 2 MiB: pages worth giving back */
	fill_job(s, old_failed, 1000);
	fill_job(s, recent, 1000);
	fill_job(s, running, 1000);

	/* a reference recorded by an old job and named by a kept one */
	meta = json_pack("{s:s,s:s}", "subject", "w", "kernel", "6.1");
	CHECK(store_reference_create(s, old_ok, meta, &ref_id) == 0 && ref_id > 0);
	naming = json_pack("{s:s,s:s,s:I}", "workload", "w", "subject", "w", "reference",
			   (json_int_t)ref_id);
	CHECK(store_job_create(s, "diagnose", naming, &user) == 0);
	CHECK(store_job_update(s, user, "running", 0, NULL, NULL, NULL) == 0);
	CHECK(store_job_update(s, user, "succeeded", 1, NULL, NULL, NULL) == 0);

	/* 31 days ago and more; the queued and running ones too, which must still stay */
	sql(path,
	    "UPDATE jobs SET created = '2020-01-01T00:00:00Z', started = '2020-01-01T00:00:01Z',"
	    " finished = CASE WHEN finished IS NULL THEN NULL ELSE '2020-01-01T00:01:00Z' END"
	    " WHERE id IN (%lld, %lld, %lld, %lld, %lld)",
	    (long long)old_ok, (long long)old_failed, (long long)old_cancelled, (long long)queued,
	    (long long)running);
	sql(path,
	    "UPDATE jobs SET finished = strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', 'now', '-31 days')"
	    " WHERE id = %lld",
	    (long long)old_cancelled);
	/* 29 days ago: within 30 */
	sql(path,
	    "UPDATE jobs SET finished = strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', 'now', '-29 days')"
	    " WHERE id = %lld",
	    (long long)recent);
	CHECK(rows_of(path, "trace_steps", old_ok) == 1 && rows_of(path, "probes", old_ok) == 1 &&
	      rows_of(path, "vectors", old_ok) == 1);
	pages_before = sql_int(path, "PRAGMA page_count");

	CHECK(store_apply_retention(s, &(struct store_retention){ .retention_days = 30 },
				    now_real_ns(), &st) == 0);
	CHECKF(st.jobs_deleted == 3, "deleted %u", st.jobs_deleted);
	CHECK(!job_exists(s, old_ok) && !job_exists(s, old_failed) &&
	      !job_exists(s, old_cancelled));
	CHECK(job_exists(s, recent) && job_exists(s, queued) && job_exists(s, running) &&
	      job_exists(s, user));
	/* their traces, probes, vectors and trace sizes went with them */
	CHECK(rows_of(path, "trace_steps", old_ok) == 0 && rows_of(path, "probes", old_ok) == 0 &&
	      rows_of(path, "vectors", old_ok) == 0 && rows_of(path, "trace_sizes", old_ok) == 0);
	CHECK(rows_of(path, "trace_steps", old_failed) == 0);
	CHECK(rows_of(path, "trace_steps", running) == 1 && rows_of(path, "vectors", recent) == 1);
	{
		json_t *tr = NULL;

		CHECK(store_trace_get(s, old_ok, &tr) == -ENOENT);
		json_decref(tr);
	}
	/* the reference stays, named by a kept job; the job that recorded it is gone */
	CHECK(store_reference_get(s, ref_id, &ref) == 0);
	CHECK(json_is_null(json_object_get(ref, "job")));
	/* the 2 MiB of the old trace given back to the file system */
	pages_after = sql_int(path, "PRAGMA page_count");
	CHECKF(st.incremental && st.pages_freed > 0 && pages_after < pages_before,
	       "incremental %d, freed %lld, pages %lld -> %lld", st.incremental, st.pages_freed,
	       pages_before, pages_after);
	CHECK(sql_int(path, "PRAGMA freelist_count") == 0);

	/* again: nothing more to delete */
	CHECK(store_apply_retention(s, &(struct store_retention){ .retention_days = 30 },
				    now_real_ns(), &st) == 0 &&
	      st.jobs_deleted == 0);
	/* no limits: nothing deleted, however old */
	CHECK(store_apply_retention(s, &(struct store_retention){}, now_real_ns(), &st) == 0 &&
	      st.jobs_deleted == 0 && job_exists(s, recent));
	store_close(s);
}

/* max_jobs keeps the N that finished last; queued and running jobs do not count. */
static void test_by_count(void)
{
	_cleanup_free_ char *path = NULL;
	struct store *s = open_new(&path);
	struct store_retention_stats st = {};
	int64_t ids[10], queued, running;
	int i;

	for (i = 0; i < 10; i++) {
		ids[i] = new_job(s, "w", i % 3 ? "succeeded" : "failed");
		fill_job(s, ids[i], 100);
		/* distinct finish times, in an order that is not the ids' */
		sql(path, "UPDATE jobs SET finished = '2030-01-01T00:00:%02dZ' WHERE id = %lld",
		    (i * 7) % 10, (long long)ids[i]);
	}
	queued = new_job(s, "w", "queued");
	running = new_job(s, "w", "running");

	CHECK(store_apply_retention(s, &(struct store_retention){ .max_jobs = 4 }, now_real_ns(),
				    &st) == 0);
	CHECKF(st.jobs_deleted == 6, "deleted %u", st.jobs_deleted);
	/* kept: the four that finished last, at seconds 9, 8, 7 and 6 */
	for (i = 0; i < 10; i++) {
		bool newest = (i * 7) % 10 >= 6;

		CHECKF(job_exists(s, ids[i]) == newest, "job %d (finished at :%02d) %s", i,
		       (i * 7) % 10, newest ? "deleted" : "kept");
		if (!newest)
			CHECK(rows_of(path, "trace_steps", ids[i]) == 0 &&
			      rows_of(path, "vectors", ids[i]) == 0);
	}
	CHECK(job_exists(s, queued) && job_exists(s, running));
	CHECK(sql_int(path, "SELECT COUNT(*) FROM jobs") == 6);

	/* more jobs than a batch deletes at once, by age and count together */
	for (i = 0; i < 600; i++)
		new_job(s, "many", "succeeded");
	sql(path, "UPDATE jobs SET finished = '2001-01-01T00:00:00Z' WHERE workload = 'many'");
	CHECK(store_apply_retention(s,
				    &(struct store_retention){ .retention_days = 1, .max_jobs = 4 },
				    now_real_ns(), &st) == 0);
	CHECKF(st.jobs_deleted == 600, "deleted %u", st.jobs_deleted);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM jobs") == 6);
	store_close(s);
}

/* A database made before auto_vacuum was set keeps working; its free pages are reused. */
static void test_existing_database(void)
{
	_cleanup_free_ char *path = xasprintf("%s/old.sqlite", tmpdir);
	struct store *s = NULL;
	struct store_retention_stats st = {};
	int64_t id;
	long long pages;

	sql(path, "PRAGMA journal_mode = WAL; CREATE TABLE made_before (x)");
	CHECK(sql_int(path, "PRAGMA auto_vacuum") == 0);
	REQUIRE(store_open(path, schema_dir, &s) == 0);
	CHECK(sql_int(path, "PRAGMA auto_vacuum") == 0);
	id = new_job(s, "w", "succeeded");
	fill_job(s, id, 1 << 20);
	sql(path, "UPDATE jobs SET finished = '2001-01-01T00:00:00Z'");
	pages = sql_int(path, "PRAGMA page_count");
	CHECK(store_apply_retention(s, &(struct store_retention){ .retention_days = 30 },
				    now_real_ns(), &st) == 0);
	CHECK(st.jobs_deleted == 1 && !st.incremental && st.pages_freed == 0);
	CHECK(sql_int(path, "PRAGMA freelist_count") > 0);
	/* the next job's megabyte goes into the free pages: the file does not grow by another */
	id = new_job(s, "w", "succeeded");
	fill_job(s, id, 1 << 20);
	CHECKF(sql_int(path, "PRAGMA page_count") < pages + 32, "pages %lld -> %lld", pages,
	       sql_int(path, "PRAGMA page_count"));
	store_close(s);
}

/* The JSON text of every stored step of a job, summed. */
static long long trace_bytes(const char *path, int64_t id)
{
	return sql_int(path,
		       "SELECT COALESCE(SUM(length(CAST(step AS BLOB))), 0) FROM trace_steps"
		       " WHERE job_id = %lld",
		       (long long)id);
}

static const json_t *last_step(const json_t *trace)
{
	const json_t *steps = json_object_get(trace, "steps");

	return json_array_get(steps, json_array_size(steps) - 1);
}

static long long int_of(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* trace_max_bytes of 64 KiB: the steps that fit stored whole and in order, then the cut noted. */
static void test_trace_cut(void)
{
	_cleanup_free_ char *path = NULL, *pad = NULL;
	struct store *s = open_new(&path);
	json_auto_t *trace = NULL;
	const size_t max = 64 * 1024;
	int64_t id = new_job(s, "w", "running"), other = new_job(s, "w", "running");
	size_t stored = 0, left_bytes = 0, step_len = 0;
	int i, n_stored = 0, n_left = 0, r;
	const json_t *cut, *steps;

	store_set_trace_max(s, max);
	pad = malloc(1001);
	REQUIRE(pad);
	memset(pad, 'p', 1000);
	pad[1000] = 0;
	for (i = 0; i < 100; i++) {
		json_auto_t *step = json_pack("{s:f,s:s,s:i,s:s}", "t", i / 10.0, "kind",
					      i < 99 ? "measure" : "report", "i", i, "pad", pad);
		_cleanup_free_ char *text = json_dumps(step, JSON_COMPACT);

		step_len = strlen(text);
		r = store_trace_append(s, id, step);
		CHECK(r == 0 || r == 1);
		if (r == 0) {
			CHECKF(n_left == 0, "step %d stored after one was left out", i);
			n_stored++;
			stored += step_len;
		} else if (r == 1) {
			n_left++;
			left_bytes += step_len;
		}
	}
	CHECKF(n_stored > 50 && n_left > 0 && n_stored + n_left == 100, "stored %d, left out %d",
	       n_stored, n_left);
	/* nothing beyond the cap, the cut step included; and no more room for a step */
	CHECKF(trace_bytes(path, id) <= (long long)max, "%lld bytes stored", trace_bytes(path, id));
	CHECK(stored + step_len > max - 1024);

	CHECK(store_trace_get(s, id, &trace) == 0);
	steps = json_object_get(trace, "steps");
	CHECK(json_array_size(steps) == (size_t)n_stored + 1);
	for (i = 0; i < n_stored; i++)
		CHECKF(int_of(json_array_get(steps, i), "i") == i, "step %d in place", i);
	cut = last_step(trace);
	CHECK(!strcmp(json_string_value(json_object_get(cut, "kind")) ?: "", "trace_cut"));
	CHECKF(int_of(cut, "omitted_steps") == n_left &&
		   int_of(cut, "omitted_bytes") == (long long)left_bytes,
	       "cut: %lld steps %lld bytes, want %d %zu", int_of(cut, "omitted_steps"),
	       int_of(cut, "omitted_bytes"), n_left, left_bytes);
	CHECK(int_of(cut, "limit_bytes") == (long long)max &&
	      int_of(cut, "stored_bytes") == (long long)stored);
	CHECK(!strcmp(json_string_value(json_object_get(cut, "first_omitted_kind")) ?: "",
		      "measure"));
	CHECK(json_string_length(json_object_get(cut, "message")) > 0);

	/* a small step after the cut is left out too: the cut stays the last step */
	{
		json_auto_t *small = json_pack("{s:f,s:s}", "t", 11.0, "kind", "note");
		json_auto_t *again = NULL;

		CHECK(store_trace_append(s, id, small) == 1);
		CHECK(store_trace_get(s, id, &again) == 0);
		CHECK(json_array_size(json_object_get(again, "steps")) == (size_t)n_stored + 1);
		CHECK(int_of(last_step(again), "omitted_steps") == n_left + 1);
	}
	/* another job's trace has a cap of its own */
	{
		json_auto_t *step = json_pack("{s:f,s:s}", "t", 0.0, "kind", "probe");

		CHECK(store_trace_append(s, other, step) == 0);
		CHECK(store_trace_append(s, 424242, step) == -ENOENT);
	}
	store_close(s);
}

/*
 * The hostile endpoint of the issue: 24 replies of 4 MiB, each stored
 * twice (the call step and the tool step): at most trace_max_bytes of them
 * (the default, 8 MiB) reach the job's trace.
 */
static void test_hostile_endpoint(void)
{
	_cleanup_free_ char *path = NULL, *reply = NULL;
	struct store *s = open_new(&path);
	json_auto_t *trace = NULL;
	int64_t id = new_job(s, "w", "running");
	const size_t four_mib = 4u << 20;
	int i, left = 0;

	reply = malloc(four_mib + 1);
	REQUIRE(reply);
	memset(reply, 'A', four_mib);
	reply[four_mib] = 0;
	for (i = 0; i < 48; i++) {
		json_auto_t *step = json_pack("{s:f,s:s,s:i,s:{s:s}}", "t", (double)i, "kind",
					      i % 2 ? "llm_tool" : "llm_call", "call", i / 2 + 1,
					      "reply", "content", reply);

		left += store_trace_append(s, id, step) == 1;
	}
	CHECKF(trace_bytes(path, id) <= (long long)STORE_TRACE_MAX_DEFAULT, "%lld bytes stored",
	       trace_bytes(path, id));
	CHECK(store_trace_get(s, id, &trace) == 0);
	CHECK(!strcmp(json_string_value(json_object_get(last_step(trace), "kind")) ?: "",
		      "trace_cut"));
	CHECKF(int_of(last_step(trace), "omitted_steps") == left && left >= 46,
	       "left out %d, the cut says %lld", left, int_of(last_step(trace), "omitted_steps"));
	store_close(s);
}

static int runner(struct job_ctx *ctx, void *userdata, json_t **ret_result, json_t **ret_error)
{
	*ret_result = json_object();
	return 0;
}

static bool wait_gone(struct store *s, int64_t id, int timeout_s)
{
	uint64_t deadline = now_mono_ns() + (uint64_t)timeout_s * 1000000000ull;

	while (now_mono_ns() < deadline) {
		if (!job_exists(s, id))
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* The worker applies retention at once, then at every interval. */
static void test_worker_tick(void)
{
	_cleanup_free_ char *path = NULL;
	struct store *s = open_new(&path);
	struct jobs *j = NULL;
	int64_t before, later, recent;

	before = new_job(s, "w", "succeeded");
	recent = new_job(s, "w", "succeeded");
	sql(path, "UPDATE jobs SET finished = '2001-01-01T00:00:00Z' WHERE id = %lld",
	    (long long)before);
	REQUIRE(jobs_start(s, 4, runner, NULL, &j) == 0);
	jobs_set_retention(j, &(struct store_retention){ .retention_days = 7 }, 1);
	CHECK(wait_gone(s, before, 20));

	later = new_job(s, "w", "succeeded");
	sql(path, "UPDATE jobs SET finished = '2001-01-01T00:00:00Z' WHERE id = %lld",
	    (long long)later);
	CHECK(wait_gone(s, later, 20));
	CHECK(job_exists(s, recent));
	jobs_stop(j);
	store_close(s);
}

/* argusd applies retention_days at start: the old job is gone before anyone asks. */
static void test_daemon_start(void)
{
	struct daemon d;
	struct store *s = NULL;
	struct http_reply rep;
	char state[256], db[300], path[64];
	int64_t old, recent;
	uint64_t deadline;
	long status = 0;

	REQUIRE(daemon_prepare(&d, "retention_days = 30\nmax_jobs = 100\n") == 0);
	snprintf(state, sizeof(state), "%s/state", d.dir);
	REQUIRE(mkdir(state, 0700) == 0);
	snprintf(db, sizeof(db), "%s/argusd.db", state);
	REQUIRE(store_open(db, schema_dir, &s) == 0);
	old = new_job(s, "w", "succeeded");
	recent = new_job(s, "w", "succeeded");
	store_close(s);
	sql(db, "UPDATE jobs SET finished = '2001-01-01T00:00:00Z' WHERE id = %lld",
	    (long long)old);

	REQUIRE(daemon_start(&d) == 0);
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)old);
	deadline = now_mono_ns() + 30ull * 1000000000ull;
	while (now_mono_ns() < deadline) {
		status = http_get(&d, path, &rep);
		reply_free(&rep);
		if (status == 404)
			break;
		usleep(100 * 1000);
	}
	CHECKF(status == 404, "GET %s: %ld", path, status);
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)recent);
	CHECK(http_get(&d, path, &rep) == 200);
	reply_free(&rep);
	CHECK(daemon_stop(&d, SIGTERM) == 0);
	daemon_cleanup(&d);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	char cmd[128];

	REQUIRE(src);
	REQUIRE(mkdtemp(tmpdir));
	schema_dir = xasprintf("%s/schema", src);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	test_by_age();
	test_by_count();
	test_existing_database();
	test_trace_cut();
	test_hostile_endpoint();
	test_worker_tick();
	test_daemon_start();

	curl_global_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	(void)!system(cmd);
	free(schema_dir);
	return tap_done("test-retention");
}
