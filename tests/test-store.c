// SPDX-License-Identifier: MIT
/* The store against a real SQLite file in a temporary directory. */
#include "daemon/store.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/argus-test-store-XXXXXX";
static char *schema_dir;
static char *db_path;

static struct store *open_store(void)
{
	struct store *s = NULL;
	int r = store_open(db_path, schema_dir, &s);

	REQUIRE(r == 0 && s);
	return s;
}

static int64_t create_job(struct store *s, const char *kind, const char *workload)
{
	json_auto_t *req = json_pack("{s:s,s:s}", "workload", workload, "subject", workload);
	int64_t id = 0;

	CHECK(store_job_create(s, kind, req, &id) == 0);
	CHECK(id > 0);
	return id;
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The number of the repository's newest schema file (schema/NNN-name.sql): the version a new database gets. */
static int newest_schema(void)
{
	struct dirent **list = NULL;
	int n, i, newest = 0;

	n = scandir(schema_dir, &list, NULL, alphasort);
	for (i = 0; i < n; i++) {
		int v = atoi(list[i]->d_name);

		if (v > newest && strstr(list[i]->d_name, ".sql"))
			newest = v;
		free(list[i]);
	}
	free(list);
	return newest;
}

static void test_open_and_version(void)
{
	struct store *s = open_store();
	struct store *bad = NULL;
	int newest = newest_schema();

	CHECK(newest >= 1);
	CHECKF(store_schema_version(s) == newest, "version %d, newest schema file %d",
	       store_schema_version(s), newest);
	store_close(s);

	/* Reopen: nothing re-applied, same version. */
	s = open_store();
	CHECK(store_schema_version(s) == newest);
	store_close(s);

	/* A schema directory without files is refused. */
	CHECK(store_open(db_path, tmpdir, &bad) == -ENOENT);
	CHECK(bad == NULL);
	store_close(NULL);
}

static void test_jobs(void)
{
	struct store *s = open_store();
	json_auto_t *job = NULL, *bad = json_pack("[i]", 1), *req = json_pack("{s:s}", "x", "y");
	int64_t a, b, c, id = 0;
	char state[16];

	CHECK(store_job_create(s, "bogus", req, &id) == -EINVAL);
	CHECK(store_job_create(s, "diagnose", bad, &id) == -EINVAL);
	CHECK(id == 0);

	a = create_job(s, "diagnose", "alpha");
	b = create_job(s, "reference", "beta");
	c = create_job(s, "diagnose", "alpha");
	CHECK(a < b && b < c);

	CHECK(store_job_get(s, a, &job) == 0);
	CHECK(json_integer_value(json_object_get(job, "id")) == a);
	CHECK(strcmp(str(job, "kind"), "diagnose") == 0);
	CHECK(strcmp(str(job, "state"), "queued") == 0);
	CHECK(json_real_value(json_object_get(job, "progress")) == 0);
	CHECK(json_is_null(json_object_get(job, "started")));
	CHECK(json_is_null(json_object_get(job, "finished")));
	CHECK(strlen(str(job, "created")) == 20 && str(job, "created")[19] == 'Z');
	CHECK(strcmp(str(json_object_get(job, "request"), "workload"), "alpha") == 0);
	CHECK(!json_object_get(job, "result"));
	CHECK(!json_object_get(job, "error"));
	json_decref(TAKE_PTR(job));

	CHECK(store_job_get(s, 9999, &job) == -ENOENT);
	CHECK(store_job_update(s, 9999, "running", -1, NULL, NULL, NULL) == -ENOENT);
	CHECK(store_job_update(s, a, "sleeping", -1, NULL, NULL, NULL) == -EINVAL);

	/* running: started set, step and progress recorded */
	CHECK(store_job_update(s, a, "running", 0.25, "probing level 1", NULL, NULL) == 0);
	CHECK(store_job_get(s, a, &job) == 0);
	CHECK(strcmp(str(job, "state"), "running") == 0);
	CHECK(json_real_value(json_object_get(job, "progress")) == 0.25);
	CHECK(strcmp(str(job, "step"), "probing level 1") == 0);
	CHECK(json_is_string(json_object_get(job, "started")));
	CHECK(json_is_null(json_object_get(job, "finished")));
	json_decref(TAKE_PTR(job));

	/* NULL/negative keep the old values */
	CHECK(store_job_update(s, a, NULL, -1, NULL, NULL, NULL) == 0);
	CHECK(store_job_get(s, a, &job) == 0);
	CHECK(strcmp(str(job, "step"), "probing level 1") == 0);
	CHECK(json_real_value(json_object_get(job, "progress")) == 0.25);
	json_decref(TAKE_PTR(job));

	/* final: finished set, result stored */
	{
		json_auto_t *result =
		    json_pack("{s:s,s:[s]}", "verdict", "bottleneck", "path", "kernel_paging");
		CHECK(store_job_update(s, a, "succeeded", 1, "done", result, NULL) == 0);
	}
	CHECK(store_job_get(s, a, &job) == 0);
	CHECK(strcmp(str(job, "state"), "succeeded") == 0);
	CHECK(json_is_string(json_object_get(job, "finished")));
	CHECK(strcmp(str(json_object_get(job, "result"), "verdict"), "bottleneck") == 0);
	json_decref(TAKE_PTR(job));

	{
		json_auto_t *err =
		    json_pack("{s:s,s:s}", "code", "spawn", "message", "no such file");
		CHECK(store_job_update(s, b, "failed", -1, NULL, NULL, err) == 0);
	}
	CHECK(store_job_get(s, b, &job) == 0);
	CHECK(strcmp(str(json_object_get(job, "error"), "code"), "spawn") == 0);
	json_decref(TAKE_PTR(job));

	CHECK(store_job_state(s, a, state, sizeof(state)) == 0);
	CHECK(strcmp(state, "succeeded") == 0);
	CHECK(store_job_state(s, c, state, sizeof(state)) == 0);
	CHECK(strcmp(state, "queued") == 0);
	CHECK(store_job_state(s, 9999, state, sizeof(state)) == -ENOENT);
	store_close(s);
}

static size_t list_len(const json_t *l)
{
	return json_array_size(json_object_get(l, "jobs"));
}

static int64_t list_id(const json_t *l, size_t i)
{
	return json_integer_value(
	    json_object_get(json_array_get(json_object_get(l, "jobs"), i), "id"));
}

static void test_list(void)
{
	struct store *s = open_store();
	struct job_filter f = {.limit = 500};
	json_auto_t *all = NULL, *page = NULL;
	int64_t ids[7], seen = 0;
	size_t i, total;
	int pages = 0;

	CHECK(store_job_list(s, &f, &all) == 0);
	total = list_len(all);
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		ids[i] = create_job(s, i % 2 ? "reference" : "diagnose", i < 3 ? "gamma" : "delta");
	json_decref(TAKE_PTR(all));

	CHECK(store_job_list(s, &f, &all) == 0);
	CHECK(list_len(all) == total + ARRAY_SIZE(ids));
	CHECK(list_id(all, 0) == ids[6]); /* newest first */
	CHECK(json_is_null(json_object_get(all, "next_before")));
	/* summaries carry no request/result bodies */
	CHECK(!json_object_get(json_array_get(json_object_get(all, "jobs"), 0), "request"));
	CHECK(strcmp(str(json_array_get(json_object_get(all, "jobs"), 0), "subject"), "delta") ==
	      0);

	/* filters */
	f = (struct job_filter){.workload = "gamma", .limit = 50};
	json_decref(TAKE_PTR(all));
	CHECK(store_job_list(s, &f, &all) == 0);
	CHECK(list_len(all) == 3);
	f = (struct job_filter){.workload = "delta", .kind = "reference", .limit = 50};
	json_decref(TAKE_PTR(all));
	CHECK(store_job_list(s, &f, &all) == 0);
	CHECK(list_len(all) == 2); /* i = 3, 5 */
	CHECK(list_id(all, 0) == ids[5] && list_id(all, 1) == ids[3]);
	f = (struct job_filter){.state = "succeeded", .limit = 50};
	json_decref(TAKE_PTR(all));
	CHECK(store_job_list(s, &f, &all) == 0);
	CHECK(list_len(all) == 1); /* from test_jobs */

	/* paging by 3 over the delta jobs: 3 + 1 */
	f = (struct job_filter){.workload = "delta", .limit = 3};
	for (;;) {
		json_t *next;

		json_decref(TAKE_PTR(page));
		CHECK(store_job_list(s, &f, &page) == 0);
		pages++;
		for (i = 0; i < list_len(page); i++) {
			CHECK(seen == 0 || list_id(page, i) < seen);
			seen = list_id(page, i);
		}
		next = json_object_get(page, "next_before");
		if (json_is_null(next))
			break;
		CHECK(json_integer_value(next) == seen);
		f.before_id = json_integer_value(next);
		if (pages > 5)
			break;
	}
	CHECK(pages == 2);
	CHECK(seen == ids[3]);

	/* limits */
	f = (struct job_filter){.limit = 0};
	CHECK(store_job_list(s, &f, &page) == -EINVAL);
	f.limit = 501;
	CHECK(store_job_list(s, &f, &page) == -EINVAL);
	store_close(s);
}

static void test_interrupt_and_queue(void)
{
	struct store *s = open_store();
	json_auto_t *job = NULL;
	int64_t running, q1, q2, *ids = NULL;
	size_t n = 0, i;
	bool found1 = false, found2 = false;

	running = create_job(s, "diagnose", "epsilon");
	q1 = create_job(s, "diagnose", "epsilon");
	q2 = create_job(s, "diagnose", "epsilon");
	CHECK(store_job_update(s, running, "running", 0.5, "measuring", NULL, NULL) == 0);
	store_close(s);

	/* as after a crash: reopen, the running job becomes interrupted */
	s = open_store();
	CHECK(store_jobs_interrupt_running(s) == 1);
	CHECK(store_jobs_interrupt_running(s) == 0);
	CHECK(store_job_get(s, running, &job) == 0);
	CHECK(strcmp(str(job, "state"), "interrupted") == 0);
	CHECK(json_is_string(json_object_get(job, "finished")));
	CHECK(strcmp(str(json_object_get(job, "error"), "code"), "interrupted") == 0);

	CHECK(store_jobs_queued(s, &ids, &n) == 0);
	for (i = 0; i < n; i++) {
		CHECK(ids[i] != running);
		if (i > 0)
			CHECK(ids[i] > ids[i - 1]); /* oldest first */
		found1 |= ids[i] == q1;
		found2 |= ids[i] == q2;
	}
	CHECK(found1 && found2);
	free(ids);
	store_close(s);
}

static void test_trace(void)
{
	struct store *s = open_store();
	json_auto_t *trace = NULL, *empty = NULL;
	int64_t id = create_job(s, "diagnose", "zeta"), other = create_job(s, "diagnose", "zeta");
	json_t *steps;
	int i;

	CHECK(store_trace_get(s, other, &empty) == 0);
	CHECK(json_array_size(json_object_get(empty, "steps")) == 0);

	for (i = 0; i < 20; i++) {
		json_auto_t *step = json_pack("{s:s,s:i}", "kind", "measure", "i", i);
		CHECK(store_trace_append(s, id, step) == 0);
	}
	{
		json_auto_t *step = json_pack("{s:s}", "kind", "x");
		json_auto_t *notobj = json_pack("[]");
		CHECK(store_trace_append(s, 424242, step) == -ENOENT);
		CHECK(store_trace_append(s, id, notobj) == -EINVAL);
	}
	CHECK(store_trace_get(s, id, &trace) == 0);
	CHECK(json_integer_value(json_object_get(trace, "job")) == id);
	steps = json_object_get(trace, "steps");
	CHECK(json_array_size(steps) == 20);
	for (i = 0; i < 20; i++)
		CHECK(json_integer_value(json_object_get(json_array_get(steps, i), "i")) == i);
	CHECK(store_trace_get(s, 424242, &empty) == -ENOENT);

	{
		json_auto_t *probe = json_pack("{s:s,s:s}", "backend", "tracepoint", "source", "x");
		CHECK(store_probe_add(s, id, 1, probe) == 0);
		CHECK(store_probe_add(s, id, 4, probe) == -EINVAL);
		CHECK(store_probe_add(s, 424242, 1, probe) == -ENOENT);
	}
	{
		struct mvec v = {};
		json_auto_t *vecs = NULL;

		mvec_set(&v, "kernel_paging/count", 12);
		CHECK(store_vector_add(s, id, "pmv", 1, "", &v) == 0);
		CHECK(store_vector_add(s, id, "pmv", 2, "kernel_paging", &v) == 0);
		CHECK(store_vector_add(s, id, "xmv", 1, "", &v) == -EINVAL);
		CHECK(store_vector_add(s, 424242, "pmv", 1, "", &v) == -ENOENT);
		CHECK(store_vectors_get(s, id, &vecs) == 0);
		CHECK(json_array_size(vecs) == 2);
		CHECK(strcmp(str(json_array_get(vecs, 1), "parent"), "kernel_paging") == 0);
		mvec_free(&v);
	}
	store_close(s);
}

static void test_references(void)
{
	struct store *s = open_store();
	json_auto_t *meta =
	    json_pack("{s:s,s:s,s:i}", "subject", "pf_major", "kernel", "6.18.0", "repeats", 3);
	json_auto_t *meta2 = json_pack("{s:s}", "subject", "pf_major");
	json_auto_t *other = json_pack("{s:s}", "subject", "unit:x.service");
	json_auto_t *nosubject = json_pack("{s:s}", "kernel", "6.18");
	json_auto_t *ref = NULL, *list = NULL;
	int64_t job = create_job(s, "reference", "pf_major"), r1 = 0, r2 = 0, r3 = 0, latest = 0;
	struct mvec *runs = NULL;
	size_t n = 0, i;
	int k;

	CHECK(store_reference_create(s, job, nosubject, &r1) == -EINVAL);
	CHECK(store_reference_create(s, job, meta, &r1) == 0);
	for (k = 0; k < 3; k++) {
		struct mvec v = {};

		mvec_set(&v, "kernel_paging/count", 100 + k);
		mvec_set(&v, "perf/page-faults", 1000.5 * k);
		CHECK(store_reference_add_run(s, r1, k, &v) == 0);
		mvec_free(&v);
	}
	{
		struct mvec v = {};
		mvec_set(&v, "a", 1);
		CHECK(store_reference_add_run(s, 999999, 0, &v) == -ENOENT);
		mvec_free(&v);
	}
	CHECK(store_reference_create(s, 0, other, &r2) == 0);
	CHECK(store_reference_create(s, job, meta2, &r3) == 0);
	CHECK(r1 < r2 && r2 < r3);

	CHECK(store_reference_exists(s, r1) == 0);
	CHECK(store_reference_exists(s, 999999) == -ENOENT);
	CHECK(store_reference_latest(s, "pf_major", &latest) == 0);
	CHECK(latest == r3);
	CHECK(store_reference_latest(s, "unit:x.service", &latest) == 0);
	CHECK(latest == r2);
	CHECK(store_reference_latest(s, "nothing", &latest) == -ENOENT);

	CHECK(store_reference_get(s, r1, &ref) == 0);
	CHECK(strcmp(str(ref, "subject"), "pf_major") == 0);
	CHECK(strcmp(str(ref, "kernel"), "6.18.0") == 0);
	CHECK(json_integer_value(json_object_get(ref, "id")) == r1);
	CHECK(json_integer_value(json_object_get(ref, "job")) == job);
	CHECK(json_is_string(json_object_get(ref, "created")));
	CHECK(json_array_size(json_object_get(ref, "runs")) == 3);
	CHECK(json_number_value(json_object_get(json_array_get(json_object_get(ref, "runs"), 2),
						"kernel_paging/count")) == 102);
	json_decref(TAKE_PTR(ref));
	CHECK(store_reference_get(s, r2, &ref) == 0);
	CHECK(json_is_null(json_object_get(ref, "job")));
	json_decref(TAKE_PTR(ref));
	CHECK(store_reference_get(s, 999999, &list) == -ENOENT);

	CHECK(store_reference_runs(s, r1, &runs, &n) == 0);
	CHECK(n == 3);
	for (i = 0; i < n; i++) {
		const double *v = mvec_get(&runs[i], "perf/page-faults");

		CHECK(v && *v == 1000.5 * i);
		CHECK(runs[i].n == 2);
		CHECK(strcmp(runs[i].v[0].metric, "kernel_paging/count") == 0); /* order kept */
		mvec_free(&runs[i]);
	}
	free(runs);
	CHECK(store_reference_runs(s, 999999, &runs, &n) == -ENOENT);

	CHECK(store_reference_list(s, NULL, 50, &list) == 0);
	CHECK(json_array_size(json_object_get(list, "references")) == 3);
	CHECK(json_integer_value(json_object_get(
		  json_array_get(json_object_get(list, "references"), 0), "id")) == r3);
	CHECK(!json_object_get(json_array_get(json_object_get(list, "references"), 0), "runs"));
	json_decref(TAKE_PTR(list));
	CHECK(store_reference_list(s, "pf_major", 1, &list) == 0);
	CHECK(json_array_size(json_object_get(list, "references")) == 1);
	json_decref(TAKE_PTR(list));
	CHECK(store_reference_list(s, NULL, 0, &list) == -EINVAL);
	store_close(s);

	/* reopen keeps everything */
	s = open_store();
	CHECK(store_reference_get(s, r1, &ref) == 0);
	CHECK(json_array_size(json_object_get(ref, "runs")) == 3);
	CHECK(store_reference_latest(s, "pf_major", &latest) == 0 && latest == r3);
	store_close(s);
}

static void test_reopen_keeps_jobs(void)
{
	struct store *s = open_store();
	struct job_filter f = {.limit = 500};
	json_auto_t *before = NULL, *after = NULL;

	CHECK(store_job_list(s, &f, &before) == 0);
	store_close(s);
	s = open_store();
	CHECK(store_job_list(s, &f, &after) == 0);
	CHECK(json_equal(before, after));
	CHECK(list_len(after) > 10);
	store_close(s);
}

/*
 * The host's pace read between jobs (schema 004): readings kept by host
 * and CPU, read back newest first since a time, at most as many as asked;
 * forgotten by age; bad readings refused. A database of version 3 (before
 * them) is upgraded with its references kept.
 */
static void test_host_pace(void)
{
	_cleanup_free_ char *dir = xasprintf("%s/schema-3", tmpdir);
	_cleanup_free_ char *path = xasprintf("%s/pace.db", tmpdir);
	static const char *const before[] = {"001-initial.sql", "002-submitter.sql",
					     "003-retention.sql"};
	const uint64_t day = 86400ull * 1000000000ull, now = now_real_ns();
	json_auto_t *meta = json_pack("{s:s}", "subject", "pf_major");
	struct store *s = NULL;
	int64_t ref = 0;
	double ns[8];
	size_t n = 99, i;
	unsigned gone = 0;

	REQUIRE(mkdir(dir, 0700) == 0);
	for (i = 0; i < ARRAY_SIZE(before); i++) {
		_cleanup_free_ char *from = xasprintf("%s/%s", schema_dir, before[i]);
		_cleanup_free_ char *to = xasprintf("%s/%s", dir, before[i]);

		REQUIRE(symlink(from, to) == 0);
	}
	REQUIRE(store_open(path, dir, &s) == 0);
	CHECK(store_schema_version(s) == 3);
	CHECK(store_reference_create(s, 0, meta, &ref) == 0);
	store_close(TAKE_PTR(s));
	REQUIRE(store_open(path, schema_dir, &s) == 0);
	CHECK(store_schema_version(s) == newest_schema() && newest_schema() >= 4);
	CHECK(store_reference_exists(s, ref) == 0);

	CHECK(store_pace_since(s, "h", 0, 0, ns, ARRAY_SIZE(ns), &n) == 0 && n == 0);
	CHECK(store_pace_add(s, now - 2 * day, "h", 0, 9.0) == 0);
	CHECK(store_pace_add(s, now - 60000000000ull, "h", 0, 8.0) == 0);
	CHECK(store_pace_add(s, now - 30000000000ull, "h", 1, 7.5) == 0);
	CHECK(store_pace_add(s, now, "h", 0, 8.5) == 0);
	CHECK(store_pace_add(s, now, "other", 0, 20.0) == 0);
	CHECK(store_pace_add(s, now, "h", -1, 8.0) == -EINVAL);
	CHECK(store_pace_add(s, now, "h", 0, 0) == -EINVAL);
	CHECK(store_pace_add(s, now, "h", 0, -3) == -EINVAL);
	CHECK(store_pace_add(s, now, "h", 0, NAN) == -EINVAL);
	CHECK(store_pace_add(s, now, NULL, 0, 8.0) == -EINVAL);

	/* the last day on CPU 0 of host h, newest first */
	CHECK(store_pace_since(s, "h", 0, now - day, ns, ARRAY_SIZE(ns), &n) == 0);
	CHECKF(n == 2 && ns[0] == 8.5 && ns[1] == 8.0, "%zu readings", n);
	/* every CPU */
	CHECK(store_pace_since(s, "h", -1, now - day, ns, ARRAY_SIZE(ns), &n) == 0);
	CHECKF(n == 3 && ns[0] == 8.5 && ns[1] == 7.5 && ns[2] == 8.0, "%zu readings", n);
	/* at most max */
	CHECK(store_pace_since(s, "h", -1, 0, ns, 1, &n) == 0);
	CHECK(n == 1 && ns[0] == 8.5);
	CHECK(store_pace_since(s, "h", -1, 0, ns, ARRAY_SIZE(ns), &n) == 0 && n == 4);

	/* older than a day: forgotten; the rest stays */
	CHECK(store_pace_forget(s, now - day, &gone) == 0 && gone == 1);
	CHECK(store_pace_since(s, "h", -1, 0, ns, ARRAY_SIZE(ns), &n) == 0 && n == 3);
	CHECK(store_pace_forget(s, now - day, NULL) == 0);
	store_close(s);
	for (i = 0; i < ARRAY_SIZE(before); i++) {
		_cleanup_free_ char *to = xasprintf("%s/%s", dir, before[i]);

		unlink(to);
	}
	rmdir(dir);
}

static void test_newer_database_refused(void)
{
	_cleanup_free_ char *dir = xasprintf("%s/schema-new", tmpdir);
	_cleanup_free_ char *file = xasprintf("%s/001-initial.sql", dir);
	_cleanup_free_ char *file2 = xasprintf("%s/002-more.sql", dir);
	_cleanup_free_ char *path = xasprintf("%s/new.db", tmpdir);
	struct store *s = NULL;
	FILE *f;

	REQUIRE(mkdir(dir, 0700) == 0);
	f = fopen(file, "w");
	REQUIRE(f);
	fputs("CREATE TABLE a (x INTEGER);\n", f);
	fclose(f);
	f = fopen(file2, "w");
	REQUIRE(f);
	fputs("CREATE TABLE b (y INTEGER);\n", f);
	fclose(f);
	CHECK(store_open(path, dir, &s) == 0);
	CHECK(s && store_schema_version(s) == 2);
	store_close(TAKE_PTR(s));

	/* a broken upgrade rolls back and leaves the version as it was */
	unlink(file2);
	{
		_cleanup_free_ char *file3 = xasprintf("%s/003-broken.sql", dir);
		f = fopen(file3, "w");
		REQUIRE(f);
		fputs("CREATE TABLE c (z INTEGER); SELECT * FROM nonexistent;\n", f);
		fclose(f);
		CHECK(store_open(path, dir, &s) == -EIO);
		unlink(file3);
	}
	/* the database (version 2) is newer than the files (version 1) */
	CHECK(store_open(path, dir, &s) == -EPROTO);
	CHECK(s == NULL);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *cmd = NULL;

	REQUIRE(src);
	REQUIRE(mkdtemp(tmpdir));
	schema_dir = xasprintf("%s/schema", src);
	db_path = xasprintf("%s/argusd.db", tmpdir);

	test_open_and_version();
	test_jobs();
	test_list();
	test_interrupt_and_queue();
	test_trace();
	test_references();
	test_reopen_keeps_jobs();
	test_host_pace();
	test_newer_database_refused();

	cmd = xasprintf("rm -rf '%s'", tmpdir);
	CHECK(system(cmd) == 0);
	free(schema_dir);
	free(db_path);
	return tap_done("test-store");
}
