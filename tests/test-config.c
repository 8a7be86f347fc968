// SPDX-License-Identifier: MIT
/*
 * The configuration file: comments after values, the README's own
 * example, and refusals that name the line; argusd --check-config and
 * --version.
 */
#include "daemon/calibrate.h"
#include "daemon/config.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *write_temp(const char *text)
{
	char path[] = "/tmp/argus-config-test-XXXXXX";
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return xstrdup(path);
}

/* Load text into a fresh default config; the error text, if any, into *ret_err. */
static int load(const char *text, struct config *c, char **ret_err)
{
	_cleanup_free_ char *path = write_temp(text);
	int r;

	config_defaults(c);
	*ret_err = NULL;
	r = config_load_file(c, path, ret_err);
	unlink(path);
	return r;
}

/* text is refused (-EINVAL) with a message holding part1 and, unless NULL, part2. */
static void expect_refused(const char *text, const char *part1, const char *part2)
{
	struct config c;
	char *err;

	CHECK(load(text, &c, &err) == -EINVAL);
	CHECKF(err && strstr(err, part1) && (!part2 || strstr(err, part2)), "%s",
	       err ?: "(no message)");
	config_free(&c);
	free(err);
}

static void test_comments(void)
{
	struct config c;
	char *err;

	tap_subtest("comments");
	CHECK(load("# a whole-line comment\n"
		   "\n"
		   "llm_timeout_s = 60                     # per request\n"
		   "llm_model = a#b\t# a '#' inside a word stays\n"
		   "tau = 4.5 #\n"
		   "llm_max_calls=7 #no space after the hash\n",
		   &c, &err) == 0);
	CHECKF(!err, "%s", err ?: "");
	CHECK_EQ(c.llm_timeout_s, 60u, "llm_timeout_s");
	CHECK_STREQ(c.llm_model ?: "", "a#b", "llm_model");
	CHECK_EQ(c.llm_max_calls, 7u, "llm_max_calls");
	CHECK(c.tau == 4.5);
	config_free(&c);
	free(err);

	/* a '#' stuck to a value is part of it, and the value is refused */
	expect_refused("tau = 4.5#\n", "line 1", "4.5#");

	/* a value that is only a comment is an empty value, refused where one is needed */
	expect_refused("llm_timeout_s = # none\n", "line 1", NULL);
}

/* Refusals name the file's line. */
static void test_refusals(void)
{
	tap_subtest("refusals");
	expect_refused("tau = 3\nno equals sign here\n", "line 2", "key = value");
	expect_refused("no_such_key = 1\n", "line 1", NULL);
	expect_refused("syscall_events = perf\n", "line 1", "perf");
	expect_refused("false_flag_rate = 0.6\n", "line 1", "0.6");
	expect_refused("false_flag_rate = nan\n", "line 1", "nan");
	expect_refused("false_flag_rate = -0.01\n", "line 1", "-0.01");
	expect_refused("quiet_sample_ms = 50\n", "line 1", "50");
	expect_refused("quiet_sample_ms = 20000\n", "line 1", "20000");
}

/* false_flag_rate: 0.05 by default, 0 to 0.5; K defaults to 5, the quiet wait's interval to 1 s. */
static void test_false_flag_rate(void)
{
	struct config c;
	char *err = NULL;

	tap_subtest("false_flag_rate");
	CHECK(load("tau = 3\n", &c, &err) == 0);
	CHECK(c.false_flag_rate == 0.05 && c.reference_repeats == 5);
	CHECK_EQ(c.quiet_sample_ms, 1000, "the quiet wait's interval by default");
	config_free(&c);
	CHECK(load("quiet_sample_ms = 250\n", &c, &err) == 0);
	CHECK_EQ(c.quiet_sample_ms, 250, "quiet_sample_ms");
	CHECK(c.reference_pace_check);
	config_free(&c);
	CHECK(load("reference_pace_check = false\n", &c, &err) == 0);
	CHECK(!c.reference_pace_check);
	config_free(&c);
	expect_refused("reference_pace_check = sometimes\n", "line 1", "sometimes");
	CHECK(load("tau = 3\n", &c, &err) == 0);
	CHECK_EQ(c.reference_pace_wait_s, 50, "the wait for the host's usual pace by default");
	config_free(&c);
	CHECK(load("reference_pace_wait_s = 0\n", &c, &err) == 0);
	CHECK_EQ(c.reference_pace_wait_s, 0, "reference_pace_wait_s");
	config_free(&c);
	expect_refused("reference_pace_wait_s = 601\n", "line 1", "601");
	CHECK(load("tau = 3\n", &c, &err) == 0);
	CHECK_EQ(c.host_pace_idle_s, 300, "the host's pace read between jobs by default");
	config_free(&c);
	CHECK(load("host_pace_idle_s = 0\n", &c, &err) == 0);
	CHECK_EQ(c.host_pace_idle_s, 0, "host_pace_idle_s");
	config_free(&c);
	expect_refused("host_pace_idle_s = 86401\n", "line 1", "86401");
	expect_refused("host_pace_idle_s = -1\n", "line 1", "-1");
	CHECK(load("false_flag_rate = 0.01\n", &c, &err) == 0);
	CHECK(c.false_flag_rate == 0.01);
	config_free(&c);
	CHECK(load("false_flag_rate = 0\n", &c, &err) == 0);
	CHECK(c.false_flag_rate == 0);
	config_free(&c);
	free(err);
}

/* min_slowdown: 0.10 by default, the calibration's own; 0 to 1. */
static void test_min_slowdown(void)
{
	struct config c;
	struct calib_params p;
	char *err = NULL;

	tap_subtest("min_slowdown");
	calib_params_default(&p);
	CHECK(load("tau = 3\n", &c, &err) == 0);
	CHECK(c.min_slowdown == 0.10 && c.min_slowdown == p.min_slowdown);
	config_free(&c);
	CHECK(load("min_slowdown = 0.25\n", &c, &err) == 0);
	CHECK(c.min_slowdown == 0.25);
	config_free(&c);
	CHECK(load("min_slowdown = 0\n", &c, &err) == 0);
	CHECK(c.min_slowdown == 0);
	config_free(&c);
	free(err);
	expect_refused("min_slowdown = 1.5\n", "line 1", "1.5");
	expect_refused("min_slowdown = -0.1\n", "line 1", "-0.1");
	expect_refused("min_slowdown = nan\n", "line 1", "nan");
}

/* syscall_events: "none" (the default), "raw" or "calls"; anything else is refused. */
static void test_syscall_events(void)
{
	struct config c;
	char *err = NULL;

	tap_subtest("syscall_events");
	CHECK(load("tau = 3\n", &c, &err) == 0);
	CHECK(c.syscall_events == SYSCALL_EVENTS_NONE);
	config_free(&c);
	CHECK(load("syscall_events = calls\n", &c, &err) == 0);
	CHECK(c.syscall_events == SYSCALL_EVENTS_CALLS);
	config_free(&c);
	CHECK(load("syscall_events = none\nsyscall_events = raw\n", &c, &err) == 0);
	CHECK(c.syscall_events == SYSCALL_EVENTS_RAW);
	config_free(&c);
	free(err);
	expect_refused("syscall_events = sleeps\n", "syscall_events", NULL);
}

/* Every ```ini block of the README loads as it is written. */
static void test_readme_examples(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *path = xasprintf("%s/README.md", src ?: ".");
	_cleanup_free_ char *text = NULL;
	char *p;
	int blocks = 0;

	tap_subtest("readme_examples");
	REQUIRE(read_file_bounded(path, 1 << 20, &text, NULL) >= 0);
	for (p = strstr(text, "```ini\n"); p; p = strstr(p, "```ini\n")) {
		char *start = p + strlen("```ini\n"), *end = strstr(start, "```");
		_cleanup_free_ char *block = NULL;
		struct config c;
		char *err;

		REQUIRE(end);
		block = strndup(start, end - start);
		CHECKF(load(block, &c, &err) == 0, "README block %d: %s", blocks + 1,
		       err ?: "(no message)");
		config_free(&c);
		free(err);
		blocks++;
		p = end + 3;
	}
	CHECKF(blocks >= 1, "%d ini blocks in the README", blocks);
}

static void put(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	REQUIRE(f);
	fputs(text, f);
	fclose(f);
}

/* Drop-ins, the files FILE.d/NAME.conf in name order after the file; nothing else there is read. */
static void test_dropins(void)
{
	char dir[] = "/tmp/argus-config-dropins-XXXXXX";
	_cleanup_free_ char *main_file = NULL, *dropins = NULL, *cmd = NULL;
	struct config c;
	char *err = NULL;

	tap_subtest("dropins");
	REQUIRE(mkdtemp(dir));
	main_file = xasprintf("%s/argusd.conf", dir);
	dropins = xasprintf("%s/argusd.conf.d", dir);
	put(dir, "argusd.conf", "tau = 3\nllm_max_calls = 5\nllm_timeout_s = 9\n");
	/* no drop-in directory: the file alone */
	config_defaults(&c);
	CHECK(config_load_with_dropins(&c, main_file, false, &err) == 0 && !err);
	CHECK_EQ(c.llm_max_calls, 5u, "without drop-ins");
	config_free(&c);
	REQUIRE(mkdir(dropins, 0755) == 0);
	put(dropins, "20-late.conf", "llm_max_calls = 7\n");
	put(dropins, "10-early.conf", "llm_max_calls = 6\ntau = 4\n");
	put(dropins, "30-notes.txt", "this is not configuration\n");
	put(dropins, ".hidden.conf", "llm_timeout_s = 1\n");
	config_defaults(&c);
	CHECK(config_load_with_dropins(&c, main_file, false, &err) == 0);
	CHECKF(!err, "%s", err ?: "");
	CHECK_EQ(c.llm_max_calls, 7u, "the last drop-in wins");
	CHECK(c.tau == 4);
	CHECK_EQ(c.llm_timeout_s, 9u, "hidden and other files are not read");
	config_free(&c);
	/* a bad drop-in names its file and line */
	put(dropins, "40-bad.conf", "\ntau = x\n");
	config_defaults(&c);
	CHECK(config_load_with_dropins(&c, main_file, false, &err) == -EINVAL);
	CHECKF(err && strstr(err, "40-bad.conf") && strstr(err, "line 2"), "%s", err ?: "");
	config_free(&c);
	free(err);
	err = NULL;
	/* a missing file: refused unless it may be missing, when the drop-ins still apply */
	unlink(main_file);
	config_defaults(&c);
	CHECK(config_load_with_dropins(&c, main_file, false, &err) == -ENOENT);
	config_free(&c);
	free(err);
	err = NULL;
	cmd = xasprintf("rm -f '%s/40-bad.conf'", dropins);
	REQUIRE(system(cmd) == 0);
	config_defaults(&c);
	CHECK(config_load_with_dropins(&c, main_file, true, &err) == 0 && !err);
	CHECK_EQ(c.llm_max_calls, 7u, "drop-ins without the file");
	config_free(&c);
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", dir);
	REQUIRE(system(cmd) == 0);
}

/* Run argusd with args, its output to out; the exit status, or -1. */
static int run_argusd(const char *args, const char *out)
{
	const char *build = getenv("ARGUS_BUILD_DIR"), *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *cmd = xasprintf("%s/argusd --tree %s/tree-data/tree.json "
					     "--victims-dir %s/bench/victims %s >%s 2>&1",
					     build ?: ".", src ?: ".", build ?: ".", args, out);
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* --check-config says whether argusd would start, and does not need the state directory. */
static void test_check_config(void)
{
	_cleanup_free_ char *good = write_temp("tau = 3   # the paper's\n"),
			    *bad = write_temp("tau = 3x\n"), *out = write_temp(""),
			    *args = NULL, *text = NULL;

	char dir[] = "/tmp/argus-config-wl-XXXXXX";
	_cleanup_free_ char *wl = NULL, *cmd = NULL;

	tap_subtest("check_config");
	/* no workload definitions: nothing to refuse, whoever may enter the checkout */
	REQUIRE(mkdtemp(dir));
	args = xasprintf("--check-config --config %s --workloads-dir %s "
			 "--state-dir /nonexistent/argus-state",
			 good, dir);
	CHECK_EQ(run_argusd(args, out), 0, "a good configuration");
	REQUIRE(read_file_bounded(out, 1 << 16, &text, NULL) >= 0);
	CHECKF(strstr(text, "ok") && strstr(text, "workloads"), "said: %s", text);
	free(text);
	text = NULL;
	free(args);
	args = xasprintf("--check-config --config %s --workloads-dir %s", bad, dir);
	CHECK_EQ(run_argusd(args, out), 1, "a bad value");
	REQUIRE(read_file_bounded(out, 1 << 16, &text, NULL) >= 0);
	CHECKF(strstr(text, "line 1") && strstr(text, "tau"), "said: %s", text);
	/* to a file, not the journal: a plain line, marked as an error, no "<3>" */
	CHECKF(strncmp(text, "error: ", 7) == 0, "said: %s", text);
	free(text);
	text = NULL;
	free(args);
	args = xasprintf("--check-config --config %s --workloads-dir /nonexistent/argus-workloads",
			 good);
	CHECK(run_argusd(args, out) != 0);
	/* a workload whose program does not exist is unusable: argusd would start without it */
	wl = xasprintf("%s/gone.json", dir);
	cmd = xasprintf("printf '%%s' '{\"name\": \"gone\", \"argv\": [\"no_such_program\"], "
			"\"user\": \"nobody\", \"cpus\": \"0\", \"timeout_s\": 10}' >%s",
			wl);
	REQUIRE(system(cmd) == 0);
	free(args);
	args = xasprintf("--check-config --config %s --workloads-dir %s", good, dir);
	CHECK_EQ(run_argusd(args, out), 1, "an unusable workload");
	REQUIRE(read_file_bounded(out, 1 << 16, &text, NULL) >= 0);
	CHECKF(strstr(text, "1 unusable") && strstr(text, "gone"), "said: %s", text);
	free(text);
	text = NULL;
	unlink(wl);
	rmdir(dir);
	CHECK_EQ(run_argusd("--version", out), 0, "--version");
	REQUIRE(read_file_bounded(out, 1 << 16, &text, NULL) >= 0);
	CHECKF(strncmp(text, "argusd ", 7) == 0 && text[7] >= '0' && text[7] <= '9', "said: %s",
	       text);
	unlink(good);
	unlink(bad);
	unlink(out);
}

int main(void)
{
	test_comments();
	test_refusals();
	test_syscall_events();
	test_false_flag_rate();
	test_min_slowdown();
	test_readme_examples();
	test_dropins();
	test_check_config();
	return tap_done("test-config");
}
