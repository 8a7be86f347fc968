// SPDX-License-Identifier: MIT
/*
 * SIGHUP reloads the workload definitions, with the real argusd: a new
 * definition is served and accepted, a removed one refused, a bad file
 * listed among the errors; a job running across the reload finishes with
 * the workload it started with; a directory that cannot be read keeps the
 * registry in use.
 */
#include "tests/daemon-harness.h"
#include "tests/tap.h"

#include <stdio.h>

static struct daemon d;

static bool listed(const json_t *reg, const char *name)
{
	json_t *w;
	size_t i;

	json_array_foreach(json_object_get(reg, "workloads"), i, w)
		if (strcmp(json_string_value(json_object_get(w, "name")) ?: "", name) == 0)
			return true;
	return false;
}

/* GET /workloads until name is listed (want) or not, 20 s at most; the last answer in *ret. */
static bool workloads_until(const char *name, bool want, json_t **ret)
{
	uint64_t deadline = now_mono_ns() + 20ull * 1000000000ull;

	*ret = NULL;
	while (now_mono_ns() < deadline) {
		struct http_reply r;

		if (http_get(&d, "/workloads", &r) == 200) {
			json_decref(*ret);
			*ret = json_incref(r.json);
			if (listed(r.json, name) == want) {
				reply_free(&r);
				return true;
			}
		}
		reply_free(&r);
		usleep(100 * 1000);
	}
	return false;
}

static json_int_t post_job(const char *path, const char *body, long *ret_status)
{
	struct http_reply r;
	json_int_t id = 0;

	*ret_status = http_post(&d, path, body, &r);
	if (*ret_status == 202)
		id = json_integer_value(json_object_get(r.json, "id"));
	reply_free(&r);
	return id;
}

static bool log_has(const char *text)
{
	char path[256], buf[65536];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/argusd.log", d.dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, text) != NULL;
}

int main(void)
{
	char path[256], moved[256];
	json_t *reg = NULL, *job;
	json_int_t running, later;
	long status;

	if (geteuid() != 0)
		tap_skip_all("test-reload needs root (the daemon loads probes)");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	REQUIRE(daemon_prepare(&d, "") == 0);
	daemon_add_workload(&d, "quick",
			    "{\"name\": \"quick\", \"argv\": [\"/bin/true\"], \"timeout_s\": 10}");
	daemon_add_workload(&d, "slow",
			    "{\"name\": \"slow\", \"argv\": [\"/bin/sleep\", \"1\"], "
			    "\"timeout_s\": 30}");
	REQUIRE(daemon_start(&d) == 0);

	tap_subtest("before");
	CHECK(workloads_until("slow", true, &reg) && listed(reg, "quick"));
	json_decref(reg);

	/* a job on "slow" that runs while its definition goes away */
	running = post_job("/references", "{\"workload\": \"slow\", \"repeats\": 3}", &status);
	REQUIRE(running > 0);
	{
		char p[64];
		int i;

		snprintf(p, sizeof(p), "/jobs/%lld", (long long)running);
		for (i = 0; i < 300; i++) {
			struct http_reply r;
			bool started;

			http_get(&d, p, &r);
			started = strcmp(json_string_value(json_object_get(r.json, "state")) ?: "",
					 "running") == 0;
			reply_free(&r);
			if (started)
				break;
			usleep(100 * 1000);
		}
	}

	tap_subtest("reload");
	snprintf(path, sizeof(path), "%s/workloads/slow.json", d.dir);
	REQUIRE(unlink(path) == 0);
	daemon_add_workload(&d, "fresh",
			    "{\"name\": \"fresh\", \"argv\": [\"/bin/true\"], \"timeout_s\": 10}");
	daemon_add_workload(&d, "broken", "{\"name\": \"broken\", \"argv\": ");
	daemon_add_service(&d, "web", "{\"name\": \"web\", \"cgroup\": \"/argus-test-reload\"}");
	{
		/* asked just before: an answer GET /services keeps a moment, for these definitions */
		struct http_reply r;

		CHECK(http_get(&d, "/services", &r) == 200);
		CHECKF(json_array_size(json_object_get(r.json, "services")) == 0,
		       "no service before SIGHUP: %s", r.body ? r.body : "");
		reply_free(&r);
	}
	REQUIRE(kill(d.pid, SIGHUP) == 0);
	CHECKF(workloads_until("fresh", true, &reg), "the new definition is served after SIGHUP");
	CHECK(!listed(reg, "slow") && listed(reg, "quick"));
	{
		/* the service definitions are read again with them */
		struct http_reply r;

		CHECK(http_get(&d, "/services", &r) == 200);
		CHECKF(strstr(json_string_value(json_object_get(
				   json_array_get(json_object_get(r.json, "services"), 0), "name")) ?: "",
			      "web"),
		       "the new service is listed after SIGHUP: %s", r.body ? r.body : "");
		reply_free(&r);
	}
	{
		json_t *e;
		size_t i;
		bool named = false;

		json_array_foreach(json_object_get(reg, "errors"), i, e)
			named |= strstr(json_string_value(e) ?: "", "broken.json") != NULL;
		CHECKF(named, "the bad file is among the errors: %s",
		       json_text(json_object_get(reg, "errors")));
	}
	json_decref(reg);
	CHECK(log_has("reload: 2 workloads"));

	/* new requests see the new registry */
	post_job("/references", "{\"workload\": \"slow\"}", &status);
	CHECKF(status == 400, "a removed workload is refused: %ld", status);
	later = post_job("/references", "{\"workload\": \"fresh\", \"repeats\": 3}", &status);
	CHECKF(later > 0, "a new workload is accepted: %ld", status);

	tap_subtest("the running job");
	job = wait_job(&d, running, 240);
	CHECKF(job && strcmp(job_state(job), "succeeded") == 0,
	       "the job running across the reload: %s",
	       job ? json_text(job) : "timeout");
	json_decref(job);
	job = later > 0 ? wait_job(&d, later, 240) : NULL;
	CHECKF(job && strcmp(job_state(job), "succeeded") == 0, "the job on the new workload: %s",
	       job ? json_text(job) : "timeout");
	json_decref(job);

	tap_subtest("a directory that cannot be read");
	snprintf(path, sizeof(path), "%s/workloads", d.dir);
	snprintf(moved, sizeof(moved), "%s/workloads.away", d.dir);
	REQUIRE(rename(path, moved) == 0);
	REQUIRE(kill(d.pid, SIGHUP) == 0);
	{
		int i;

		for (i = 0; i < 100 && !log_has("the definitions in use are kept"); i++)
			usleep(100 * 1000);
	}
	CHECK(log_has("the definitions in use are kept"));
	CHECK(workloads_until("fresh", true, &reg) && listed(reg, "quick"));
	json_decref(reg);
	REQUIRE(rename(moved, path) == 0);

	tap_subtest("stop");
	CHECK(daemon_stop(&d, SIGTERM) == 0);
	daemon_cleanup(&d);
	curl_global_cleanup();
	return tap_done("test-reload");
}
