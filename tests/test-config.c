// SPDX-License-Identifier: MIT
/*
 * The configuration file: comments after values, the README's own
 * example, and refusals that name the line.
 */
#include "daemon/config.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
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
	CHECK(load("tau = 4.5#\n", &c, &err) == -EINVAL);
	CHECKF(err && strstr(err, "line 1") && strstr(err, "4.5#"), "%s", err ?: "(no message)");
	config_free(&c);
	free(err);

	/* a value that is only a comment is an empty value, refused where one is needed */
	CHECK(load("llm_timeout_s = # none\n", &c, &err) == -EINVAL);
	CHECKF(err && strstr(err, "line 1"), "%s", err ?: "(no message)");
	config_free(&c);
	free(err);
}

/* Refusals name the file's line. */
static void test_refusals(void)
{
	struct config c;
	char *err;

	tap_subtest("refusals");
	CHECK(load("tau = 3\nno equals sign here\n", &c, &err) == -EINVAL);
	CHECKF(err && strstr(err, "line 2") && strstr(err, "key = value"), "%s",
	       err ?: "(no message)");
	config_free(&c);
	free(err);
	CHECK(load("no_such_key = 1\n", &c, &err) == -EINVAL);
	CHECKF(err && strstr(err, "line 1"), "%s", err ?: "(no message)");
	config_free(&c);
	free(err);
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

int main(void)
{
	test_comments();
	test_refusals();
	test_readme_examples();
	return tap_done("test-config");
}
