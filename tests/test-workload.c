// SPDX-License-Identifier: MIT
/* The workload registry: definition parsing, CPU lists, loading a directory. */
#include "daemon/util.h"
#include "daemon/workload.h"
#include "tests/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static int parse(const char *text, struct workload **ret, char **ret_err)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, JSON_ALLOW_NUL, &jerr);
	int r;

	REQUIRE(doc);
	r = workload_from_json(doc, ret, ret_err);
	json_decref(doc);
	return r;
}

/* text must be rejected with -EINVAL and an error naming field. */
static void expect_bad(const char *text, const char *field)
{
	struct workload *w = NULL;
	char *err = NULL;
	int r = parse(text, &w, &err);

	CHECKF(r == -EINVAL, "%s: r=%d", text, r);
	CHECKF(w == NULL, "%s: output written on failure", text);
	CHECKF(err && strstr(err, field), "%s: error \"%s\" does not name %s", text,
	       err ? err : "(null)", field);
	free(err);
	workload_free(w);
}

static void test_good(void)
{
	struct workload *w = NULL;
	char *err = NULL;
	json_t *j;
	int r;

	r = parse("{\"name\": \"pf_major\", \"argv\": [\"pf_major\", \"--pages\", \"65536\"],"
		  " \"user\": \"nobody\", \"cpus\": \"0-1,3\", \"timeout_s\": 60,"
		  " \"description\": \"major faults\"}",
		  &w, &err);
	CHECKF(r == 0, "r=%d err=%s", r, err ? err : "");
	REQUIRE(w);
	CHECK(strcmp(w->name, "pf_major") == 0);
	CHECK(w->argc == 3);
	CHECK(w->argv[3] == NULL);
	CHECK(strcmp(w->argv[2], "65536") == 0);
	CHECK(strcmp(w->user, "nobody") == 0);
	CHECK(strcmp(w->cpus, "0-1,3") == 0);
	CHECK(CPU_COUNT(&w->cpuset) == 3);
	CHECK(CPU_ISSET(0, &w->cpuset) && CPU_ISSET(1, &w->cpuset) && CPU_ISSET(3, &w->cpuset));
	CHECK(w->timeout_s == 60);
	CHECK(strcmp(w->description, "major faults") == 0);

	/* Round trip through JSON. */
	j = workload_to_json(w);
	REQUIRE(j);
	CHECK(json_integer_value(json_object_get(j, "timeout_s")) == 60);
	{
		struct workload *w2 = NULL;

		CHECK(workload_from_json(j, &w2, NULL) == 0);
		CHECK(w2 && strcmp(w2->name, w->name) == 0 && w2->argc == 3 &&
		      CPU_EQUAL(&w2->cpuset, &w->cpuset));
		workload_free(w2);
	}
	json_decref(j);
	workload_free(w);

	/* Defaults: user nobody, every CPU, absolute program path. */
	w = NULL;
	r = parse("{\"name\": \"x\", \"argv\": [\"/bin/true\"], \"timeout_s\": 1}", &w, &err);
	CHECK(r == 0);
	REQUIRE(w);
	CHECK(strcmp(w->user, "nobody") == 0);
	CHECK(w->cpus == NULL);
	CHECK(CPU_ISSET(0, &w->cpuset));
	CHECK(w->description == NULL);
	j = workload_to_json(w);
	CHECK(json_is_null(json_object_get(j, "cpus")));
	/* the null it writes for "not given" parses back as not given */
	{
		struct workload *w2 = NULL;

		CHECK(workload_from_json(j, &w2, NULL) == 0);
		CHECK(w2 && w2->cpus == NULL && CPU_EQUAL(&w2->cpuset, &w->cpuset));
		workload_free(w2);
	}
	json_decref(j);
	workload_free(w);
}

static void test_bad(void)
{
	expect_bad("[1]", "object");
	expect_bad("{\"argv\": [\"a\"], \"timeout_s\": 1}", "name");
	expect_bad("{\"name\": \"Bad Name\", \"argv\": [\"a\"], \"timeout_s\": 1}", "name");
	expect_bad("{\"name\": \"-x\", \"argv\": [\"a\"], \"timeout_s\": 1}", "name");
	expect_bad("{\"name\": 5, \"argv\": [\"a\"], \"timeout_s\": 1}", "name");
	expect_bad("{\"name\": \"x\", \"timeout_s\": 1}", "argv");
	expect_bad("{\"name\": \"x\", \"argv\": [], \"timeout_s\": 1}", "argv");
	expect_bad("{\"name\": \"x\", \"argv\": \"a b\", \"timeout_s\": 1}", "argv");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\", 3], \"timeout_s\": 1}", "argv[1]");
	expect_bad("{\"name\": \"x\", \"argv\": [\"bin/x\"], \"timeout_s\": 1}", "argv[0]");
	expect_bad("{\"name\": \"x\", \"argv\": [\"..\"], \"timeout_s\": 1}", "argv[0]");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\\u0000b\"], \"timeout_s\": 1}", "argv[0]");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"]}", "timeout_s");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 0}", "timeout_s");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 86401}", "timeout_s");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1.5}", "timeout_s");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": \"1\"}", "timeout_s");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"user\": \"Root!\"}",
		   "user");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"user\": 0}", "user");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"cpus\": \"1-0\"}",
		   "cpus");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"cpus\": \"\"}",
		   "cpus");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"cpus\": \"99999\"}",
		   "cpus");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"description\": 1}",
		   "description");
	expect_bad("{\"name\": \"x\", \"argv\": [\"a\"], \"timeout_s\": 1, \"nice\": 5}",
		   "unknown field \"nice\"");

	/* Limits on what a definition may hold. */
	{
		json_t *doc = json_pack("{s:s, s:[], s:i}", "name", "x", "argv", "timeout_s", 1);
		json_t *argv = json_object_get(doc, "argv");
		struct workload *w = NULL;
		char *err = NULL, *big;
		int i;

		for (i = 0; i <= WORKLOAD_ARGV_MAX; i++)
			json_array_append_new(argv, json_string("a"));
		CHECK(workload_from_json(doc, &w, &err) == -EINVAL && !w);
		CHECK(err && strstr(err, "argv"));
		free(err);
		err = NULL;

		json_array_clear(argv);
		big = malloc(WORKLOAD_ARG_LEN_MAX + 2);
		memset(big, 'a', WORKLOAD_ARG_LEN_MAX + 1);
		big[WORKLOAD_ARG_LEN_MAX + 1] = 0;
		json_array_append_new(argv, json_string("a"));
		json_array_append_new(argv, json_string(big));
		CHECK(workload_from_json(doc, &w, &err) == -EINVAL && !w);
		CHECK(err && strstr(err, "argv[1]"));
		free(err);
		free(big);
		json_decref(doc);
	}
	/* ret_err may be NULL. */
	{
		struct workload *w = NULL;

		CHECK(parse("{\"name\": \"x\"}", &w, NULL) == -EINVAL && !w);
	}
}

static void test_cpu_list(void)
{
	cpu_set_t s, keep;

	CHECK(parse_cpu_list("0", &s) == 0 && CPU_COUNT(&s) == 1 && CPU_ISSET(0, &s));
	CHECK(parse_cpu_list("0-2,5", &s) == 0 && CPU_COUNT(&s) == 4 && CPU_ISSET(5, &s) &&
	      !CPU_ISSET(3, &s));
	CHECK(parse_cpu_list("3,1", &s) == 0 && CPU_COUNT(&s) == 2);
	CHECK(parse_cpu_list("0-1\n", &s) == 0 && CPU_COUNT(&s) == 2);
	CHECK(parse_cpu_list("1023", &s) == 0 && CPU_ISSET(1023, &s));

	CPU_ZERO(&keep);
	CPU_SET(7, &keep);
	s = keep;
	CHECK(parse_cpu_list("", &s) == -EINVAL);
	CHECK(parse_cpu_list("1024", &s) == -EINVAL);
	CHECK(parse_cpu_list("99999999999999999999", &s) == -EINVAL);
	CHECK(parse_cpu_list("2-1", &s) == -EINVAL);
	CHECK(parse_cpu_list("1,", &s) == -EINVAL);
	CHECK(parse_cpu_list(",1", &s) == -EINVAL);
	CHECK(parse_cpu_list("1-", &s) == -EINVAL);
	CHECK(parse_cpu_list("a", &s) == -EINVAL);
	CHECK(parse_cpu_list(" 1", &s) == -EINVAL);
	CHECK(parse_cpu_list("-1", &s) == -EINVAL);
	CHECK(parse_cpu_list("1\n\n", &s) == -EINVAL);
	/* Untouched on failure. */
	CHECK(CPU_EQUAL(&s, &keep));
}

static void write_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	REQUIRE(f);
	fputs(text, f);
	fclose(f);
}

static bool has_error(const struct workload_registry *r, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < r->n_errors; i++)
		if (strstr(r->errors[i], a) && (!b || strstr(r->errors[i], b)))
			return true;
	return false;
}

static void test_registry(void)
{
	char dir[] = "/tmp/test-workload.XXXXXX";
	struct workload_registry *r = NULL;
	const struct workload *w;
	json_t *j;
	int rc;

	REQUIRE(mkdtemp(dir));
	write_file(dir, "b.json",
		   "{\"name\": \"beta\", \"argv\": [\"pf_major\"], \"timeout_s\": 5}");
	write_file(dir, "a.json",
		   "{\"name\": \"alpha\", \"argv\": [\"/bin/true\"], \"timeout_s\": 5}");
	write_file(dir, "c.json",
		   "{\"name\": \"alpha\", \"argv\": [\"/bin/false\"], \"timeout_s\": 5}");
	write_file(dir, "d.json", "{\"name\": \"delta\", \"argv\": [], \"timeout_s\": 5}");
	write_file(dir, "e.json", "{not json");
	write_file(dir, "f.json",
		   "{\"name\": \"f\", \"name\": \"g\", \"argv\": [\"x\"], \"timeout_s\": 5}");
	write_file(dir, "README", "not a definition");
	write_file(dir, ".hidden.json", "{}");
	{
		_cleanup_free_ char *sub = xasprintf("%s/sub.json", dir);

		REQUIRE(mkdir(sub, 0755) == 0);
	}

	rc = workload_registry_load(dir, &r);
	CHECK(rc == 0);
	REQUIRE(r);
	CHECKF(r->n == 2, "n=%zu", r->n);
	CHECK(r->n == 2 && strcmp(r->items[0]->name, "alpha") == 0 &&
	      strcmp(r->items[1]->name, "beta") == 0);
	w = workload_find(r, "alpha");
	CHECK(w && strcmp(w->argv[0], "/bin/true") == 0); /* the first file by name wins */
	CHECK(w && w->source && strstr(w->source, "/a.json"));
	CHECK(workload_find(r, "beta") != NULL);
	CHECK(workload_find(r, "delta") == NULL);
	CHECK(workload_find(r, "gamma") == NULL);
	CHECKF(r->n_errors == 5, "n_errors=%zu", r->n_errors);
	CHECK(has_error(r, "c.json", "duplicate"));
	CHECK(has_error(r, "d.json", "argv"));
	CHECK(has_error(r, "e.json", NULL));
	CHECK(has_error(r, "f.json", "duplicate"));
	CHECK(has_error(r, "sub.json", "regular"));
	CHECK(!has_error(r, "README", NULL));
	CHECK(!has_error(r, "hidden", NULL));

	j = workload_registry_to_json(r);
	CHECK(json_array_size(json_object_get(j, "workloads")) == 2);
	CHECK(json_array_size(json_object_get(j, "errors")) == 5);
	json_decref(j);
	workload_registry_free(r);

	r = NULL;
	CHECK(workload_registry_load("/nonexistent/argus-workloads", &r) == -ENOENT && !r);
	workload_registry_free(NULL);

	{
		_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);

		CHECK(system(cmd) == 0);
	}
}

/* The bundled definitions all load, and each names a victim that was built. */
static void test_bundled(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");
	_cleanup_free_ char *dir = NULL;
	struct workload_registry *r = NULL;
	static const char *const expected[] = {
	    "pf_anon_write", "pf_zero_page", "pf_cow",	      "pf_page_cache",
	    "pf_major",	     "fork_storm",   "stream",	      "gups",
	    "futex_contend", "sync_write",   "llama_pattern",
	};
	size_t i;

	if (!src || !build) {
		tap_skip("bundled_workloads", "ARGUS_SOURCE_DIR/ARGUS_BUILD_DIR unset");
		return;
	}
	dir = xasprintf("%s/workloads", src);
	CHECK(workload_registry_load(dir, &r) == 0);
	REQUIRE(r);
	for (i = 0; i < r->n_errors; i++)
		CHECKF(false, "bundled definition rejected: %s", r->errors[i]);
	for (i = 0; i < ARRAY_SIZE(expected); i++)
		CHECKF(workload_find(r, expected[i]), "workload %s missing", expected[i]);
	for (i = 0; i < r->n; i++) {
		const struct workload *w = r->items[i];
		_cleanup_free_ char *prog = xasprintf("%s/bench/victims/%s", build, w->argv[0]);

		CHECKF(!strchr(w->argv[0], '/'), "%s: argv[0] is not a bundled victim", w->name);
		CHECKF(access(prog, X_OK) == 0, "%s: %s not built", w->name, prog);
		CHECKF(strcmp(w->user, "nobody") == 0, "%s: user %s", w->name, w->user);
		CHECKF(w->cpus && strcmp(w->cpus, "0") == 0, "%s: cpus", w->name);
		CHECKF(w->description != NULL, "%s: no description", w->name);
	}
	workload_registry_free(r);
}

int main(void)
{
	test_good();
	test_bad();
	test_cpu_list();
	test_registry();
	test_bundled();
	return tap_done("test-workload");
}
