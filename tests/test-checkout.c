// SPDX-License-Identifier: MIT
/*
 * A checkout where the workloads' user cannot reach it, as a clone under
 * root's 0700 home is: the build's programs are copied into a 0700 directory
 * and argusd is pointed at them. The registry marks the bundled workload
 * unusable with the reason, the log says so once, and a job on it fails at
 * once with an error naming the fix. Staged from there as the README's
 * commands stage them (scripts/stage-programs.sh), a real reference of the
 * bundled workload is recorded.
 */
#include "tests/daemon-harness.h"
#include "tests/tap.h"

#define WORKLOAD "pf_page_cache"

static struct daemon d;

static json_t *find_workload(const json_t *list, const char *name)
{
	json_t *w;
	size_t i;

	json_array_foreach(json_object_get(list, "workloads"), i, w)
	{
		if (strcmp(json_string_value(json_object_get(w, "name")) ?: "", name) == 0)
			return w;
	}
	return NULL;
}

/* The bundled definition, unchanged, in the daemon's workloads directory. */
static void add_bundled_workload(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *from = xasprintf("%s/workloads/%s.json", src, WORKLOAD);
	_cleanup_free_ char *to = xasprintf("%s/workloads/%s.json", d.dir, WORKLOAD);

	REQUIRE(run_argv((char *const[]){"/bin/cp", from, to, NULL}) == 0);
}

static size_t count_in_log(const char *needle)
{
	_cleanup_free_ char *path = xasprintf("%s/argusd.log", d.dir), *text = NULL;
	size_t n = 0;
	const char *p;

	if (read_file_bounded(path, 16 << 20, &text, NULL) < 0)
		return 0;
	for (p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static json_t *submit_reference(void)
{
	struct http_reply r;
	json_int_t id;
	json_t *job;

	CHECK(http_post(&d, "/references", "{\"workload\": \"" WORKLOAD "\", \"repeats\": 3}",
			&r) == 202);
	id = json_integer_value(json_object_get(r.json, "id"));
	reply_free(&r);
	REQUIRE(id > 0);
	job = wait_job(&d, id, 300);
	REQUIRE(job);
	return job;
}

/* Programs in a 0700 directory: unusable, said once, a job fails at once. */
static void test_unreachable(const char *hidden_build)
{
	_cleanup_free_ char *conf = xasprintf("victims_dir = %s/bench/victims\n", hidden_build);
	struct http_reply r;
	const json_t *w;
	const char *why, *msg, *code;
	json_t *job;

	REQUIRE(daemon_prepare(&d, conf) == 0);
	add_bundled_workload();
	REQUIRE(daemon_start(&d) == 0);

	CHECK(http_get(&d, "/workloads", &r) == 200);
	w = find_workload(r.json, WORKLOAD);
	REQUIRE(w);
	why = json_string_value(json_object_get(w, "unusable_reason"));
	CHECKF(json_is_false(json_object_get(w, "usable")), "%s", r.body);
	CHECKF(why && strstr(why, hidden_build) && strstr(why, "not searchable") &&
		       strstr(why, "nobody"),
	       "reason: %s", why ?: "(none)");
	reply_free(&r);
	CHECKF(count_in_log("workload " WORKLOAD " unusable: ") == 1, "said %zu times",
	       count_in_log("workload " WORKLOAD " unusable: "));

	job = submit_reference();
	code = json_string_value(json_object_get(json_object_get(job, "error"), "code"));
	msg = json_string_value(json_object_get(json_object_get(job, "error"), "message"));
	CHECKF(strcmp(job_state(job), "failed") == 0 && code &&
		       strcmp(code, "workload_unusable") == 0,
	       "%s", json_text(job));
	CHECKF(msg && strstr(msg, "victims_dir") && strstr(msg, "\"user\""), "message: %s",
	       msg ?: "(none)");
	/* at once: no run of the workload was started */
	CHECK(json_object_get(job, "result") == NULL || json_is_null(json_object_get(job, "result")));
	json_decref(job);
	daemon_cleanup(&d);
}

/*
 * The reference's trace carries each run's vector (its RMV), as measured;
 * all of the kept attempt's runs (a noisy machine makes argusd record it
 * again, and runs that vary extend it to ten): the reference's repeats.
 */
static void check_reference_trace(json_int_t id, json_int_t kept, json_int_t repeats)
{
	_cleanup_free_ char *path = xasprintf("/jobs/%lld/trace", (long long)id);
	struct http_reply r;
	json_t *step;
	size_t i, runs = 0;

	CHECK(http_get(&d, path, &r) == 200);
	json_array_foreach(json_object_get(r.json, "steps"), i, step)
	{
		const json_t *rmv;

		if (strcmp(json_string_value(json_object_get(step, "kind")) ?: "", "measure") != 0)
			continue;
		rmv = json_object_get(json_object_get(step, "data"), "rmv");
		if (!rmv)
			rmv = json_object_get(step, "rmv");
		if (json_integer_value(json_object_get(step, "attempt")) != kept)
			continue;
		runs++;
		CHECKF(json_object_size(rmv) > 0 &&
			       json_real_value(json_object_get(rmv, "target/wall_ns")) > 0 &&
			       json_is_number(json_object_get(rmv, "kernel_paging/count")),
		       "run %zu: rmv %s", runs, json_text(rmv));
	}
	CHECKF(runs == (size_t)repeats && (repeats == 3 || repeats == 10),
	       "%zu measure steps for %lld runs in %.300s", runs, (long long)repeats, r.body ?: "");
	reply_free(&r);
}

/* Staged from the 0700 build directory: a real reference is recorded. */
static void test_staged(const char *hidden_build)
{
	char tmpl[] = "/tmp/argus-staged-XXXXXX";
	_cleanup_free_ char *dest = NULL, *conf = NULL;
	struct http_reply r;
	const json_t *w, *res;
	json_t *job;

	REQUIRE(mkdtemp(tmpl) && chmod(tmpl, 0755) == 0);
	dest = xasprintf("%s/programs", tmpl);
	REQUIRE(stage_programs_from(hidden_build, dest) == 0);
	conf = xasprintf("victims_dir = %s\n", dest);
	REQUIRE(daemon_prepare(&d, conf) == 0);
	add_bundled_workload();
	REQUIRE(daemon_start(&d) == 0);

	CHECK(http_get(&d, "/workloads", &r) == 200);
	w = find_workload(r.json, WORKLOAD);
	CHECKF(w && json_is_true(json_object_get(w, "usable")), "%s", r.body);
	reply_free(&r);

	job = submit_reference();
	res = json_object_get(job, "result");
	CHECKF(strcmp(job_state(job), "succeeded") == 0 &&
		       json_integer_value(json_object_get(res, "reference")) > 0 &&
		       json_real_value(json_object_get(res, "mean_wall_s")) > 0,
	       "%s", json_text(job));
	check_reference_trace(json_integer_value(json_object_get(job, "id")),
			      json_integer_value(json_object_get(res, "kept_attempt")),
			      json_integer_value(json_object_get(res, "repeats")));
	json_decref(job);
	daemon_cleanup(&d);
	stage_remove(tmpl);
}

int main(void)
{
	const char *build = getenv("ARGUS_BUILD_DIR");
	char home[] = "/tmp/argus-home-XXXXXX";
	_cleanup_free_ char *hidden_build = NULL, *victims = NULL, *from = NULL;

	if (geteuid() != 0)
		tap_skip_all("test-checkout needs root");
	if (!build || !getenv("ARGUS_SOURCE_DIR"))
		tap_skip_all("ARGUS_SOURCE_DIR/ARGUS_BUILD_DIR unset");
	curl_global_init(CURL_GLOBAL_DEFAULT);

	/* A home as Debian makes root's (0700), with a build's programs inside. */
	REQUIRE(mkdtemp(home) && chmod(home, 0700) == 0);
	hidden_build = xasprintf("%s/argusd/build", home);
	victims = xasprintf("%s/bench", hidden_build);
	REQUIRE(run_argv((char *const[]){"/bin/mkdir", "-p", victims, NULL}) == 0);
	from = xasprintf("%s/bench/victims", build);
	REQUIRE(run_argv((char *const[]){"/bin/cp", "-a", from, victims, NULL}) == 0);

	test_unreachable(hidden_build);
	test_staged(hidden_build);

	stage_remove(home);
	curl_global_cleanup();
	return tap_done("test-checkout");
}
