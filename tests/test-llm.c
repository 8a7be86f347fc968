// SPDX-License-Identifier: MIT
/*
 * The LLM agent end to end: the real argusd pointed at a scripted
 * OpenAI-compatible endpoint on loopback (tests/fake-llm.h), one scenario
 * per diagnosis. Each must end as it should (the job's state, the trace's
 * compile/gate/verifier/fallback steps), with no program of argusd left
 * in the kernel afterwards, and the API key nowhere but in the request
 * header: not in the log, the traces or argusd's command line.
 *
 * The good scenario runs on the cell whose cause is the least disputed on
 * any host: a CPU hog pinned to the target's CPU, which takes half of it,
 * and the diagnosis must reach kernel_scheduler.runqueue_wait through both
 * of its levels, under argusd's default syscall_events = none: level 1
 * (kernel_sync is measured through system calls) with the builtin probe by
 * design, level 2 with the model's. The others run first, with
 * syscall_events = raw, where the model authors level 1 too: one level of
 * an unperturbed small workload. Every run of an honest authored probe must pass the witness.
 * On a real perturbation (the page cache dropped in a loop on the other
 * CPU), a probe that reports ten times the faults and one that reports a
 * kernel pointer's value are dropped at every level, and the job's verdict
 * and path are the builtin agent's on the same cell and reference.
 */
#include "tests/daemon-harness.h"
#include "tests/fake-llm.h"
#include "tests/tap.h"

#include <dirent.h>

#include <bpf/bpf.h>

#define KEY "sk-argus-test-5b1f0c9d7e2a4468"
#define PC_WORKLOAD                                                                                \
	"{\"name\": \"pc\", \"argv\": [\"pf_page_cache\", \"--mb\", \"128\", \"--rounds\", \"30\"], " \
	"\"user\": \"nobody\", \"cpus\": \"0\", \"timeout_s\": 180}"
#define PCS_WORKLOAD                                                                               \
	"{\"name\": \"pcs\", \"argv\": [\"pf_page_cache\", \"--mb\", \"32\", \"--rounds\", \"8\"], " \
	"\"user\": \"nobody\", \"cpus\": \"0\", \"timeout_s\": 120}"

static struct daemon d;
static struct fake_llm fake;
static struct sequence paced;

static json_t *run_job(const char *path, const char *body, int timeout_s)
{
	struct http_reply r;
	json_int_t id = 0;

	if (http_post(&d, path, body, &r) == 202)
		id = json_integer_value(json_object_get(r.json, "id"));
	CHECKF(id > 0, "POST %s %s: %ld %s", path, body, r.status, r.body ?: "");
	reply_free(&r);
	return id ? wait_job(&d, id, timeout_s) : NULL;
}

static json_t *get_trace(json_t *job)
{
	char path[64];
	struct http_reply r;
	json_t *steps;

	snprintf(path, sizeof(path), "/jobs/%lld/trace",
		 (long long)json_integer_value(json_object_get(job, "id")));
	if (http_get(&d, path, &r) != 200) {
		reply_free(&r);
		return NULL;
	}
	CHECKF(!r.body || !strstr(r.body, KEY), "the key is in the trace of %s", path);
	steps = json_incref(json_object_get(r.json, "steps"));
	reply_free(&r);
	return steps;
}

/* Steps of a kind; with field/needle, those whose field (string) contains needle. */
static size_t count_steps(json_t *steps, const char *kind, const char *field, const char *needle)
{
	size_t i, n = 0;
	json_t *s;

	json_array_foreach(steps, i, s)
	{
		const char *k = json_string_value(json_object_get(s, "kind"));
		const char *v;

		if (!k || strcmp(k, kind))
			continue;
		if (!field) {
			n++;
			continue;
		}
		v = json_string_value(json_object_get(s, field));
		if (v && strstr(v, needle))
			n++;
	}
	return n;
}

/* Steps of a kind whose boolean field is value. */
static size_t count_bool(json_t *steps, const char *kind, const char *field, bool value)
{
	size_t i, n = 0;
	json_t *s;

	json_array_foreach(steps, i, s)
	{
		const char *k = json_string_value(json_object_get(s, "kind"));

		if (k && !strcmp(k, kind) && json_is_boolean(json_object_get(s, field)) &&
		    json_is_true(json_object_get(s, field)) == value)
			n++;
	}
	return n;
}

/* BPF programs and links argusd holds (fdinfo of its descriptors). */
static unsigned argusd_bpf_fds(void)
{
	char path[64], line[256];
	struct dirent *e;
	unsigned n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)d.pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		char p[320];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "prog_id:", 8) || !strncmp(line, "link_id:", 8))
				n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

/* Is a program of this name loaded anywhere in the kernel? */
static bool kernel_has_prog(const char *name)
{
	__u32 id = 0;

	while (bpf_prog_get_next_id(id, &id) == 0) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && !strncmp(info.name, name, 15)) {
			close(fd);
			return true;
		}
		close(fd);
	}
	return false;
}

static const char *state_of(json_t *job)
{
	return job ? job_state(job) ?: "?" : "timeout";
}

static const char *result_leaf(json_t *job)
{
	json_t *path = json_object_get(json_object_get(job, "result"), "path");

	return json_string_value(json_array_get(path, json_array_size(path) - 1));
}

static bool warned(json_t *job, const char *needle)
{
	json_t *w = json_object_get(json_object_get(job, "result"), "warnings"), *s;
	size_t i;

	json_array_foreach(w, i, s)
		if (strstr(json_string_value(s) ?: "", needle))
			return true;
	return false;
}

/* One unperturbed, one-level diagnosis under a scenario; returns the job, *steps its trace. */
static json_t *scenario(const char *name, json_t **steps)
{
	json_t *job;

	fake_llm_set(&fake, name);
	job = run_job("/diagnose", "{\"workload\": \"pcs\", \"agent\": \"llm\", \"max_depth\": 1}",
		      240);
	CHECKF(job && !strcmp(state_of(job), "succeeded"), "%s: %s %s", name, state_of(job),
	       json_text(json_object_get(job, "error")));
	*steps = job ? get_trace(job) : NULL;
	CHECKF(argusd_bpf_fds() == 0, "%s: argusd still holds BPF programs or links", name);
	/* every measured authored probe was witnessed, and the honest ones all agree */
	CHECKF(count_steps(*steps, "witness", NULL, NULL) == count_bool(*steps, "verifier", "ok", true),
	       "%s: %zu witness steps for %zu accepted probes", name,
	       count_steps(*steps, "witness", NULL, NULL), count_bool(*steps, "verifier", "ok", true));
	CHECKF(count_bool(*steps, "witness", "agree", false) == 0, "%s: the witness flagged an honest probe",
	       name);
	fprintf(stderr, "# %s: %s, %u requests, verdict %s\n", name, state_of(job),
		fake_llm_requests(&fake),
		json_string_value(json_object_get(json_object_get(job, "result"), "verdict")) ?: "-");
	return job;
}

static void test_scenarios(void)
{
	json_t *job, *steps;

	job = scenario("verifier", &steps);
	CHECKF(count_steps(steps, "verifier", "log", "invalid mem access") >= 1,
	       "verifier: no rejection with its log");
	CHECK(count_bool(steps, "verifier", "ok", true) >= 1);
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 0);
	json_decref(steps);
	json_decref(job);

	job = scenario("forbidden", &steps);
	CHECKF(count_steps(steps, "gate", "error", "bpf_send_signal") == 1,
	       "forbidden: the gate did not name the helper");
	/* refused before the kernel: only the accepted object met the verifier */
	CHECK(count_steps(steps, "verifier", NULL, NULL) == count_bool(steps, "gate", "ok", true));
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 0);
	CHECK(!kernel_has_prog("fake_evil_signal"));
	json_decref(steps);
	json_decref(job);

	job = scenario("outside", &steps);
	CHECKF(count_steps(steps, "gate", "error", "outside this level") >= 3,
	       "outside: the gate did not refuse the hook");
	CHECK(count_steps(steps, "verifier", NULL, NULL) == 0);
	CHECK(count_steps(steps, "fallback", "what", "probe") == 1);
	CHECK(warned(job, "builtin probe"));
	CHECK(!kernel_has_prog("fake_outside"));
	json_decref(steps);
	json_decref(job);

	job = scenario("oversized", &steps);
	CHECKF(count_steps(steps, "compile", "output", "at most") == 1, "oversized: not refused");
	CHECKF(count_steps(steps, "compile", "output", "error") >= 1, "broken source compiled?");
	CHECK(count_bool(steps, "compile", "ok", true) == 1);
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 0);
	json_decref(steps);
	json_decref(job);

	job = scenario("alloc_cold", &steps);
	CHECKF(count_steps(steps, "llm_tool", "result", "not a node of the kernel code-path tree") ==
		       1,
	       "alloc_cold: not refused");
	CHECK(count_steps(steps, "llm_tool", "result", "accepted") == 1);
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 0);
	json_decref(steps);
	json_decref(job);

	job = scenario("bad_evidence", &steps);
	CHECKF(count_steps(steps, "llm_tool", "result", "does not exist") == 1,
	       "bad evidence: not refused");
	CHECK(count_steps(steps, "llm_tool", "result", "accepted") == 1);
	json_decref(steps);
	json_decref(job);

	/* two decide calls in one reply: the first is taken, and so are its rationale and note */
	job = scenario("two_decisions", &steps);
	CHECK_EQ(count_steps(steps, "llm_tool", "result", "accepted"), 1, "accepted calls");
	CHECK_EQ(count_steps(steps, "llm_tool", "result", "ignored"), 1, "ignored calls");
	{
		_cleanup_free_ char *res = json_dumps(json_object_get(job, "result"), JSON_COMPACT);
		json_t *s;
		size_t i, decisions = 0;

		CHECKF(res && !strstr(res, "SECOND CALL"),
		       "the ignored call's rationale reached the result");
		json_array_foreach(steps, i, s)
		{
			_cleanup_free_ char *text = NULL;

			if (strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "decision"))
				continue;
			decisions++;
			text = json_dumps(s, JSON_COMPACT);
			CHECKF(text && !strstr(text, "SECOND CALL") && strstr(text, "llm: "),
			       "decision step: %.400s", text ?: "");
		}
		CHECK_EQ(decisions, 1, "decision steps");
	}
	json_decref(steps);
	json_decref(job);

	job = scenario("no_deviation", &steps);
	CHECKF(count_steps(steps, "llm_tool", "result", "refused") == 3,
	       "no deviation: refusals missing");
	CHECK(count_steps(steps, "fallback", "what", "decision") == 1);
	CHECK(warned(job, "builtin decision"));
	json_decref(steps);
	json_decref(job);

	fake.slow_s = 4; /* llm_timeout_s is 2 */
	job = scenario("slow", &steps);
	CHECKF(count_steps(steps, "llm_call", "error", "imeout") + 
		       count_steps(steps, "llm_call", "error", "timed out") >= 1,
	       "slow: no timeout in the trace");
	CHECK(count_steps(steps, "fallback", "what", "probe") == 1);
	CHECK(count_steps(steps, "fallback", "what", "decision") == 1);
	json_decref(steps);
	json_decref(job);

	job = scenario("429", &steps);
	{
		json_t *s;
		size_t i;
		bool retried = false;

		json_array_foreach(steps, i, s)
			if (!strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "llm_call") &&
			    json_integer_value(json_object_get(s, "attempts")) == 2 &&
			    !json_object_get(s, "error"))
				retried = true;
		CHECKF(retried, "429: no call that succeeded on its second attempt");
	}
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 0);
	json_decref(steps);
	json_decref(job);

	job = scenario("garbage", &steps);
	CHECKF(count_steps(steps, "llm_call", "error", "not JSON") == 1, "garbage: not reported");
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 2);
	json_decref(steps);
	json_decref(job);

	job = scenario("silent", &steps);
	CHECKF(count_steps(steps, "fallback", "reason", "did not call decide") == 1,
	       "silent: no fallback");
	json_decref(steps);
	json_decref(job);
}

static pid_t start_perturber(const char *name, const char *cpu)
{
	char exe[256];
	pid_t pid;

	snprintf(exe, sizeof(exe), "%s/bench/perturbers/%s", getenv("ARGUS_BUILD_DIR"), name);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execl(exe, exe, "--cpu", cpu, (char *)NULL);
		_exit(127);
	}
	sleep(1);
	return pid;
}

/*
 * Record a reference of workload. argusd itself records again a reference
 * whose runs disagree (wall-time cv above 0.15, three attempts, after a
 * wait for a quiet machine), as it does for its users; one it still finds
 * noisy is said in the log, since the scenarios' verdicts then rest on it.
 */
static void record_reference(const char *workload)
{
	char body[128], path[64];
	json_t *job;
	json_int_t id;
	struct http_reply r;

	snprintf(body, sizeof(body), "{\"workload\": \"%s\", \"repeats\": 3}", workload);
	job = run_job("/references", body, 600);
	REQUIRE(job && !strcmp(state_of(job), "succeeded"));
	id = json_integer_value(json_object_get(json_object_get(job, "result"), "reference"));
	json_decref(job);
	snprintf(path, sizeof(path), "/references/%lld", (long long)id);
	REQUIRE(http_get(&d, path, &r) == 200);
	if (json_is_true(json_object_get(r.json, "noisy")))
		fprintf(stderr, "# reference %s %lld is still noisy after argusd's attempts\n",
			workload, (long long)id);
	reply_free(&r);
}

/*
 * Did the trace's probe step of this level say the builtin probe measured it
 * by design, because syscall_events = none keeps the system call events off?
 */
static bool builtin_by_design(json_t *steps, int level)
{
	json_t *s;
	size_t i;

	json_array_foreach(steps, i, s) {
		const char *why = json_string_value(
			json_object_get(json_object_get(s, "probe"), "builtin"));

		if (!strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "probe") &&
		    json_integer_value(json_object_get(s, "level")) == level && why &&
		    strstr(why, "syscall_events = none"))
			return true;
	}
	return false;
}

static void test_good(void)
{
	json_t *job, *steps, *s;
	size_t i;
	double seconds = 0;
	long long calls = 0, tokens = 0;
	_cleanup_free_ char *result = NULL;
	pid_t hog;

	fake_llm_set(&fake, "good");
	hog = start_perturber("cpu_hog", "0");
	job = run_job("/diagnose", "{\"workload\": \"pc\", \"agent\": \"llm\"}", 600);
	kill(hog, SIGTERM);
	waitpid(hog, NULL, 0);
	REQUIRE(job);
	result = json_dumps(json_object_get(job, "result") ?: json_object_get(job, "error"),
			    JSON_COMPACT);
	CHECKF(!strcmp(state_of(job), "succeeded") &&
		       !strcmp(result_leaf(job) ?: "", "kernel_scheduler.runqueue_wait"),
	       "good: %s %s", state_of(job), result ?: "?");
	CHECKF(!strcmp(json_string_value(json_object_get(json_object_get(job, "result"), "agent")) ?: "",
		       "llm"),
	       "good: agent not llm");
	steps = get_trace(job);
	/*
	 * Two levels, each decided by the model: level 1 measured with the
	 * builtin probe by design (no fallback, no warning), level 2 authored;
	 * the leaf is named on a second run of its level, measured with the
	 * same probe and decided again: four calls, three decisions.
	 */
	CHECK(count_steps(steps, "fallback", NULL, NULL) == 0);
	CHECKF(builtin_by_design(steps, 1) && !builtin_by_design(steps, 2),
	       "good: level 1 not the builtin probe's by design, or level 2 not authored");
	CHECK(!warned(job, "builtin probe"));
	CHECK(count_bool(steps, "verifier", "ok", true) == 1);
	CHECK(count_steps(steps, "confirm", "node", "kernel_scheduler.runqueue_wait") == 1);
	CHECK(count_steps(steps, "llm_tool", "result", "accepted") == 3);
	/* each of level 2's two runs measured with the authored probe, witnessed and kept */
	CHECKF(count_bool(steps, "witness", "agree", true) == 2 &&
		       count_bool(steps, "witness", "agree", false) == 0,
	       "good: %zu witnessed runs agree, %zu disagree", count_bool(steps, "witness", "agree", true),
	       count_bool(steps, "witness", "agree", false));
	/* a disagreement says why: the witness's reasons and the kernel's figures */
	json_array_foreach(steps, i, s)
		if (!strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "witness") &&
		    json_is_false(json_object_get(s, "agree"))) {
			_cleanup_free_ char *w = json_dumps(s, JSON_COMPACT);

			fprintf(stderr, "# good: a witness disagreed: %s\n", w ?: "?");
		}
	json_array_foreach(steps, i, s)
		if (!strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "llm_usage")) {
			calls = json_integer_value(json_object_get(s, "calls"));
			tokens = json_integer_value(json_object_get(s, "tokens"));
			seconds = json_number_value(json_object_get(s, "seconds"));
		}
	CHECKF(calls == 4, "good: %lld calls", calls);
	fprintf(stderr,
		"# good: %s, %lld calls, %lld tokens (as the endpoint reported), %.1f s of agent "
		"time, %.1f s in total\n",
		result_leaf(job) ?: "-", calls, tokens, seconds,
		json_number_value(json_object_get(
			json_object_get(json_object_get(job, "result"), "timings"), "total_s")));
	CHECKF(argusd_bpf_fds() == 0, "good: argusd still holds BPF programs or links");
	json_decref(steps);
	json_decref(job);
}

/* A diagnosis of the pc cell while the page cache is dropped on the other CPU. */
static json_t *perturbed(const char *agent)
{
	char body[128];
	json_t *job;
	pid_t pert;

	snprintf(body, sizeof(body), "{\"workload\": \"pc\", \"agent\": \"%s\"}", agent);
	pert = start_perturber("cache_dropper", "1");
	job = run_job("/diagnose", body, 600);
	kill(pert, SIGTERM);
	waitpid(pert, NULL, 0);
	return job;
}

static bool same_verdict(json_t *a, json_t *b)
{
	json_t *ra = json_object_get(a, "result"), *rb = json_object_get(b, "result");

	return ra && rb && json_equal(json_object_get(ra, "verdict"), json_object_get(rb, "verdict")) &&
	       json_equal(json_object_get(ra, "path"), json_object_get(rb, "path"));
}

static char *result_text(json_t *job)
{
	json_t *r = json_object_get(job, "result");
	json_t *o = json_pack("{s:O?,s:O?,s:O?}", "verdict", json_object_get(r, "verdict"), "path",
			      json_object_get(r, "path"), "error", json_object_get(job, "error"));
	char *text = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return text ?: strdup("?");
}

/*
 * A model cannot change the verdict by making up numbers: the builtin
 * diagnosis of the cell, then a model whose probe reports ten times the
 * faults and one whose probe reports a kernel pointer's value. Each of
 * their authored runs must be dropped by the witness (its reason in the
 * trace, the drop in the warnings) and the job must end as the builtin did.
 */
static void test_witness(void)
{
	static const struct {
		const char *scenario, *reason;
	} hostile[] = { { "inflated", "page faults" }, { "pointer", "no run can hold" } };
	json_t *builtin = NULL;
	size_t h, i;

	for (i = 0; i < 2; i++) {
		json_decref(builtin);
		builtin = perturbed("builtin");
		REQUIRE(builtin && !strcmp(state_of(builtin), "succeeded"));
		if (!strcmp(result_leaf(builtin) ?: "", "kernel_paging.file_fault.major"))
			break;
		fprintf(stderr, "# witness: the builtin run named %s; once more\n",
			result_leaf(builtin) ?: "nothing");
	}
	for (h = 0; h < ARRAY_SIZE(hostile); h++) {
		_cleanup_free_ char *want = result_text(builtin), *got = NULL;
		json_t *job = NULL, *steps;
		size_t levels;

		fake_llm_set(&fake, hostile[h].scenario);
		/* a second run only when the cell itself measured differently (noise) */
		for (i = 0; i < 2; i++) {
			json_decref(job);
			job = perturbed("llm");
			REQUIRE(job);
			if (same_verdict(job, builtin))
				break;
			free(got);
			got = result_text(job);
			fprintf(stderr, "# witness %s: %s, the builtin %s; once more\n",
				hostile[h].scenario, got, want);
		}
		free(got);
		got = result_text(job);
		CHECKF(!strcmp(state_of(job), "succeeded") && same_verdict(job, builtin),
		       "%s: %s, the builtin agent: %s", hostile[h].scenario, got, want);
		steps = get_trace(job);
		levels = json_array_size(json_object_get(json_object_get(job, "result"), "levels"));
		/* every authored run was dropped, for the stated reason */
		CHECKF(count_bool(steps, "witness", "agree", false) >= 1 &&
			       count_bool(steps, "witness", "agree", true) == 0,
		       "%s: %zu runs dropped, %zu kept", hostile[h].scenario,
		       count_bool(steps, "witness", "agree", false),
		       count_bool(steps, "witness", "agree", true));
		CHECKF(count_steps(steps, "witness", "reason", hostile[h].reason) ==
			       count_bool(steps, "witness", "agree", false),
		       "%s: the witness's reason does not say \"%s\"", hostile[h].scenario,
		       hostile[h].reason);
		CHECKF(count_steps(steps, "probe", "reason", "authored probe was dropped") >= 1,
		       "%s: no builtin measurement after the drop", hostile[h].scenario);
		for (i = 1; i <= levels && i <= 3; i++) {
			char needle[64];

			snprintf(needle, sizeof(needle), "level %zu: the authored probe was dropped", i);
			CHECKF(warned(job, needle), "%s: the warnings do not say \"%s\"",
			       hostile[h].scenario, needle);
		}
		CHECKF(argusd_bpf_fds() == 0, "%s: argusd still holds BPF programs or links",
		       hostile[h].scenario);
		fprintf(stderr, "# witness %s: %s, %zu runs dropped\n", hostile[h].scenario, got,
			count_bool(steps, "witness", "agree", false));
		json_decref(steps);
		json_decref(job);
	}
	json_decref(builtin);
}

/*
 * Looking again at level 1 holds for an agent that authors its probes: a
 * workload whose reference is extended to ten runs and whose run is then
 * slower within its spread (PACED_REFERENCE, PACED_SLOWER in
 * daemon-harness.h). The first run is the authored probe's, witnessed;
 * the runs after it the builtin probe's; the model decides on their mean.
 */
static void test_look_again(void)
{
	json_t *job, *steps;
	size_t measures, remeasures;
	const char *reason;

	tap_subtest("look_again");
	fake_llm_set(&fake, "good");
	REQUIRE(sequence_start(&paced, PACED_REFERENCE) == 0);
	job = run_job("/references", "{\"workload\": \"paced\", \"repeats\": 5}", 120);
	CHECKF(job && !strcmp(state_of(job), "succeeded") &&
		       json_integer_value(json_object_get(json_object_get(job, "result"),
							  "repeats")) == 10,
	       "paced reference: %s", json_text(job));
	json_decref(job);

	REQUIRE(sequence_start(&paced, PACED_SLOWER) == 0);
	job = run_job("/diagnose", "{\"workload\": \"paced\", \"agent\": \"llm\"}", 300);
	REQUIRE(job);
	CHECKF(!strcmp(state_of(job), "succeeded"), "paced diagnosis: %s",
	       json_text(job));
	steps = get_trace(job);
	level_runs(steps, 1, &measures, &remeasures, &reason);
	fprintf(stderr, "# look_again (llm): level 1 in %zu runs; %s\n", measures, reason);
	CHECKF(remeasures >= 1 && remeasures <= 2 && measures == remeasures + 1,
	       "level 1: %zu runs, %zu looks again", measures, remeasures);
	/* the first run's probe the model's, witnessed; the level decided by the model */
	CHECK(count_bool(steps, "witness", "agree", true) >= 1);
	CHECKF(strstr(reason, "judged on the mean of the level's"), "level 1's reason: %s", reason);
	CHECKF(argusd_bpf_fds() == 0, "look_again: argusd still holds BPF programs or links");
	json_decref(steps);
	json_decref(job);
}

static void test_key_hidden(void)
{
	char path[256], cmd[512];
	_cleanup_free_ char *cmdline = NULL;
	size_t len = 0, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)d.pid);
	CHECK(read_file_bounded(path, 1 << 16, &cmdline, &len) == 0);
	for (i = 0; i + 1 < len; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	CHECK(cmdline && !strstr(cmdline, KEY));
	snprintf(cmd, sizeof(cmd), "grep -q '%s' '%s/argusd.log'", KEY, d.dir);
	CHECKF(system(cmd) != 0, "the key is in the daemon's log");
	CHECKF(fake.unauthorized == 0, "%u requests without the key", fake.unauthorized);
}

int main(void)
{
	char conf[1024], tmpl[512], creds[256];

	if (geteuid() != 0) {
		tap_skip_all("test-llm needs root");
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	snprintf(tmpl, sizeof(tmpl), "%s/tests/authored/good.bpf.c", getenv("ARGUS_SOURCE_DIR"));
	REQUIRE(fake_llm_start(&fake, "fake-model", KEY, tmpl) == 0);
	snprintf(conf, sizeof(conf),
		 "llm_url = http://127.0.0.1:%u/v1/\nllm_model = fake-model\nllm_key_file = "
		 "llm-key\nllm_timeout_s = 2\nbpf_clang = %s\nbpf_include_dir = "
		 "%s/bpf/authored-include\nsyscall_events = raw\n",
		 fake.port, ARGUS_TEST_CLANG, getenv("ARGUS_BUILD_DIR"));
	REQUIRE(daemon_prepare(&d, conf) == 0);
	snprintf(creds, sizeof(creds), "%s/creds", d.dir);
	mkdir(creds, 0700);
	snprintf(creds, sizeof(creds), "%s/creds/llm-key", d.dir);
	write_text(creds, KEY "\n");
	snprintf(creds, sizeof(creds), "%s/creds", d.dir);
	setenv("CREDENTIALS_DIRECTORY", creds, 1);
	daemon_add_workload(&d, "pc", PC_WORKLOAD);
	daemon_add_workload(&d, "pcs", PCS_WORKLOAD);
	REQUIRE(sequence_make(&paced, &d, "paced", true) == 0);
	{
		char def[1024];

		snprintf(def, sizeof(def),
			 "{\"name\": \"paced\", \"argv\": [\"/bin/sh\", \"%s\", \"%s\"], "
			 "\"user\": \"nobody\", \"timeout_s\": 30}",
			 paced.script, paced.dir);
		daemon_add_workload(&d, "paced", def);
	}
	REQUIRE(daemon_start(&d) == 0);

	record_reference("pcs");
	record_reference("pc");
	CHECK(argusd_bpf_fds() == 0);

	test_scenarios();
	test_witness();
	test_key_hidden();
	test_look_again();

	/* the default again, for the good scenario: a later line of the file wins */
	REQUIRE(daemon_stop(&d, SIGTERM) == 0);
	append_text(d.conf, "syscall_events = none\n");
	REQUIRE(daemon_start(&d) == 0);
	record_reference("pc");
	test_good();

	daemon_cleanup(&d);
	fake_llm_stop(&fake);
	curl_global_cleanup();
	return tap_done("test-llm");
}
