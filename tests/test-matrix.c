// SPDX-License-Identifier: MIT
/*
 * A slice of the accuracy matrix, so that a regression in accuracy fails
 * the suite: bench/eval/matrix.py drives the real argusd through its API
 * on three cells, one repetition each (a file-fault cell, a runqueue cell
 * and a null cell), and the test asserts the scored outcomes from its
 * results.json: no incorrect diagnosis, the null cell abstains, the other
 * two commit to a correct path. Then a victim that fails during a
 * diagnosis must be reported as a failed job, never as a diagnosis.
 */
#include "tests/daemon-harness.h"
#include "tests/tap.h"

#include <pwd.h>

#define SLICE "pf_page_cache:cache_dropper,pf_anon_write:cpu_hog,pf_anon_write:null_sleep"

/* The run of a cell in results.json's "runs" (one repetition each here), or NULL. */
static json_t *cell_run(json_t *runs, const char *cell)
{
	json_t *r;
	size_t i;

	json_array_foreach(runs, i, r)
	{
		const char *c = json_string_value(json_object_get(r, "cell"));

		if (c && strcmp(c, cell) == 0)
			return r;
	}
	return NULL;
}

static const char *run_outcome(json_t *runs, const char *cell)
{
	return json_string_value(json_object_get(cell_run(runs, cell), "outcome"));
}

/* The task a cell's run waited behind most on a runqueue, from its result. */
static const char *run_waited_behind(json_t *runs, const char *cell)
{
	json_t *behind = json_object_get(cell_run(runs, cell), "waited_behind");

	return json_string_value(json_object_get(json_array_get(behind, 0), "comm"));
}

/*
 * What each level of a cell's run saw, printed when a check on that cell
 * failed: a miss on another machine then says why in the suite's output.
 */
static void print_levels(json_t *runs, const char *cell)
{
	json_t *levels = json_object_get(cell_run(runs, cell), "levels"), *lv;
	size_t i;

	json_array_foreach(levels, i, lv)
	{
		_cleanup_free_ char *wall = json_dumps(json_object_get(lv, "wall"), JSON_COMPACT);
		_cleanup_free_ char *flagged =
		    json_dumps(json_object_get(lv, "flagged"), JSON_COMPACT | JSON_ENCODE_ANY);

		fprintf(stderr, "# %s level %lld: %s %s: %s\n#   wall %s\n#   flagged %s\n", cell,
			json_integer_value(json_object_get(lv, "level")),
			json_string_value(json_object_get(lv, "action")) ?: "?",
			json_string_value(json_object_get(lv, "node")) ?: "-",
			json_string_value(json_object_get(lv, "reason")) ?: "", wall ?: "null",
			flagged ?: "null");
	}
}

static bool is_correct_commit(const char *outcome)
{
	return outcome && (strcmp(outcome, "leaf") == 0 || strcmp(outcome, "shallow") == 0);
}

static void test_slice(const char *src, const char *build)
{
	char out[] = "/tmp/argus-matrix-test-XXXXXX";
	_cleanup_free_ char *cmd = NULL, *path = NULL;
	json_t *res, *runs, *totals;
	const char *o;
	int rc;

	REQUIRE(mkdtemp(out));
	cmd = xasprintf("/usr/bin/python3 %s/bench/eval/matrix.py --build %s --cells %s --reps 1 "
			"--no-unprobed --out %s >%s/stdout 2>&1",
			src, build, SLICE, out, out);
	rc = system(cmd);
	CHECKF(rc == 0, "matrix.py exited %d (see %s/stdout)", rc, out);
	path = xasprintf("%s/results.json", out);
	res = json_load_file(path, 0, NULL);
	REQUIRE(res);
	runs = json_object_get(res, "runs");
	CHECKF(json_array_size(runs) == 3, "%zu runs", json_array_size(runs));
	totals = json_object_get(json_object_get(res, "totals"), "calibrated");
	CHECK(json_integer_value(json_object_get(totals, "incorrect")) == 0);
	CHECK(json_integer_value(json_object_get(totals, "failed")) == 0);

	o = run_outcome(runs, "pf_anon_write:null_sleep");
	CHECKF(o && strcmp(o, "abstain") == 0, "null cell: %s", o ?: "(none)");
	if (!o || strcmp(o, "abstain") != 0)
		print_levels(runs, "pf_anon_write:null_sleep");
	/* ... and says why in a word */
	o = json_string_value(
	    json_object_get(cell_run(runs, "pf_anon_write:null_sleep"), "reason_code"));
	CHECKF(o && (!strcmp(o, "not_slower") || !strcmp(o, "unexplained") ||
		     !strcmp(o, "transient") || !strcmp(o, "reference_noisy")),
	       "null cell's reason_code %s", o ?: "(none)");
	o = run_outcome(runs, "pf_page_cache:cache_dropper");
	CHECKF(is_correct_commit(o), "pf_page_cache:cache_dropper: %s", o ?: "(none)");
	if (!is_correct_commit(o))
		print_levels(runs, "pf_page_cache:cache_dropper");
	o = run_outcome(runs, "pf_anon_write:cpu_hog");
	CHECKF(is_correct_commit(o), "pf_anon_write:cpu_hog: %s", o ?: "(none)");
	if (!is_correct_commit(o))
		print_levels(runs, "pf_anon_write:cpu_hog");
	/* ... and the result names the task the victim waited behind: the hog. */
	o = run_waited_behind(runs, "pf_anon_write:cpu_hog");
	CHECKF(o && strcmp(o, "cpu_hog") == 0, "waited behind %s", o ?: "(none)");
	/* The THP mode and friends are as before: the runner checks and records them. */
	CHECK(json_equal(json_object_get(res, "thp_before"), json_object_get(res, "thp_after")));
	json_decref(res);
	if (!tap_failures && !getenv("ARGUS_KEEP_TEST_DIRS")) {
		_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", out);

		(void)!system(rm);
	}
}

/*
 * A victim whose data directory disappears between the reference and the
 * diagnosis exits with an error: the job fails with workload_failed and
 * carries no verdict.
 */
static void test_failed_victim(void)
{
	struct daemon d;
	struct http_reply r;
	struct passwd *nobody = getpwnam("nobody");
	_cleanup_free_ char *data = NULL, *wl = NULL, *body = NULL;
	json_t *job;
	json_int_t id;

	REQUIRE(nobody);
	REQUIRE(daemon_prepare(&d, NULL) == 0);
	data = xasprintf("%s/data", d.dir);
	REQUIRE(mkdir(data, 0755) == 0 && chown(data, nobody->pw_uid, nobody->pw_gid) == 0);
	REQUIRE(chmod(d.dir, 0755) == 0);
	wl = xasprintf("{\"name\": \"pm\", \"argv\": [\"pf_major\", \"--mb\", \"4\", \"--dir\", "
		       "\"%s\"], \"user\": \"nobody\", \"cpus\": \"0\", \"timeout_s\": 60}",
		       data);
	daemon_add_workload(&d, "pm", wl);
	REQUIRE(daemon_start(&d) == 0);

	CHECK(http_post(&d, "/references", "{\"workload\": \"pm\", \"repeats\": 3}", &r) == 202);
	id = json_integer_value(json_object_get(r.json, "id"));
	reply_free(&r);
	job = wait_job(&d, id, 120);
	CHECKF(job && strcmp(job_state(job), "succeeded") == 0, "reference: %s",
	       job ? job_state(job) : "timeout");
	json_decref(job);

	/* The victim's directory becomes a plain file: bench_data_dir refuses it. */
	{
		_cleanup_free_ char *cmd = xasprintf("rm -rf '%s' && touch '%s'", data, data);

		REQUIRE(system(cmd) == 0);
	}
	CHECK(http_post(&d, "/diagnose", "{\"workload\": \"pm\"}", &r) == 202);
	id = json_integer_value(json_object_get(r.json, "id"));
	reply_free(&r);
	job = id ? wait_job(&d, id, 120) : NULL;
	CHECK(job != NULL);
	if (!job)
		goto out;
	CHECKF(strcmp(job_state(job), "failed") == 0, "state %s", job_state(job));
	body = json_dumps(job, JSON_COMPACT);
	CHECKF(
	    strcmp(json_string_value(json_object_get(json_object_get(job, "error"), "code")) ?: "",
		   "workload_failed") == 0,
	    "%s", body);
	CHECKF(json_object_get(json_object_get(job, "result"), "verdict") == NULL, "%s", body);
	json_decref(job);
out:
	daemon_stop(&d, SIGTERM);
	daemon_cleanup(&d);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");

	if (!src || !build) {
		tap_skip_all("ARGUS_SOURCE_DIR/ARGUS_BUILD_DIR unset");
	}
	if (geteuid() != 0) {
		tap_skip_all("test-matrix needs root (eBPF, perturbers)");
	}
	if (access("/usr/bin/python3", X_OK) < 0) {
		tap_skip_all("/usr/bin/python3 missing (scripts/install-deps.sh installs it)");
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_failed_victim();
	test_slice(src, build);
	curl_global_cleanup();
	return tap_done("test-matrix");
}
