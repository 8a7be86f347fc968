// SPDX-License-Identifier: MIT
/*
 * The perturber contract, on the real thp_mode (--mode never) and
 * thp_aggressor from the build directory: the THP settings change while
 * they run and come back after SIGTERM, after a crash signal, and after a
 * SIGKILL mid-run (from the restore file, by --restore-only or by the next
 * start). The test puts the original settings back itself too, whatever
 * fails.
 */
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define THP_DEFRAG "/sys/kernel/mm/transparent_hugepage/defrag"
#define RESTORE_FILE "/run/argus-perturbers/thp_mode.restore"

static char original[32], original_defrag[32];
static char *perturbers_dir;

/* The [bracketed] choice of a sysfs list such as THP_ENABLED. */
static int read_choice(const char *path, char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;
	const char *a, *b;

	if (read_file_bounded(path, 4096, &text, NULL) < 0)
		return -1;
	a = strchr(text, '[');
	b = a ? strchr(a, ']') : NULL;
	if (!a || !b || (size_t)(b - a - 1) >= len)
		return -1;
	memcpy(buf, a + 1, b - a - 1);
	buf[b - a - 1] = 0;
	return 0;
}

static int read_thp(char *buf, size_t len)
{
	return read_choice(THP_ENABLED, buf, len);
}

static int write_setting(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		r = -errno;
	close(fd);
	return r;
}

static int write_thp(const char *value)
{
	return write_setting(THP_ENABLED, value);
}

static bool thp_is(const char *value)
{
	char now[32];

	return read_thp(now, sizeof(now)) == 0 && strcmp(now, value) == 0;
}

/* Poll until the THP mode is value (a perturber sets it shortly after start). */
static bool wait_thp(const char *value)
{
	for (int i = 0; i < 250; i++) {
		if (thp_is(value))
			return true;
		usleep(20000);
	}
	return false;
}

static bool defrag_is(const char *value)
{
	char now[32];

	return read_choice(THP_DEFRAG, now, sizeof(now)) == 0 && strcmp(now, value) == 0;
}

static void restore_original(void)
{
	if (original_defrag[0] && !defrag_is(original_defrag) &&
	    write_setting(THP_DEFRAG, original_defrag) < 0)
		fprintf(stderr, "could not restore %s to %s: %m\n", THP_DEFRAG, original_defrag);
	if (original[0] && !thp_is(original) && write_thp(original) < 0)
		fprintf(stderr, "could not restore %s to %s: %m\n", THP_ENABLED, original);
}

static void on_fatal(int sig)
{
	restore_original();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Start a perturber with up to two arguments (NULL-terminated). */
static pid_t start(const char *name, const char *arg, const char *arg2)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", perturbers_dir, name);
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct rlimit no_core = {0, 0};

		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGTERM, SIG_DFL);
		execl(path, name, arg, arg2, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int status = -1;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static bool restore_file_has(const char *needle)
{
	_cleanup_free_ char *text = NULL;

	return read_file_bounded(RESTORE_FILE, 65536, &text, NULL) == 0 && strstr(text, needle);
}

static void test_sigterm(const char *base)
{
	_cleanup_free_ char *line = xasprintf("set %s\t%s\n", THP_ENABLED, base);
	pid_t pid = start("thp_mode", "--mode", "never");
	int status;

	CHECK(wait_thp("never"));
	CHECKF(restore_file_has(line), "restore file lacks \"%s\"", line);
	CHECK(kill(pid, SIGTERM) == 0);
	status = wait_status(pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	CHECK(thp_is(base));
	CHECK(access(RESTORE_FILE, F_OK) < 0 && errno == ENOENT);
}

static void test_crash(const char *base)
{
	pid_t pid = start("thp_mode", "--mode", "never");
	int status;

	CHECK(wait_thp("never"));
	CHECK(kill(pid, SIGSEGV) == 0);
	status = wait_status(pid);
	CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x", status);
	CHECK(thp_is(base));
	CHECK(access(RESTORE_FILE, F_OK) < 0 && errno == ENOENT);
}

static void test_sigkill(const char *base)
{
	pid_t pid;
	int status;

	/* Killed: the setting stays, the restore file remembers; --restore-only applies it. */
	pid = start("thp_mode", "--mode", "never");
	CHECK(wait_thp("never"));
	CHECK(kill(pid, SIGKILL) == 0);
	wait_status(pid);
	CHECK(thp_is("never"));
	CHECK(access(RESTORE_FILE, F_OK) == 0);
	pid = start("thp_mode", "--restore-only", NULL);
	status = wait_status(pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	CHECK(thp_is(base));
	CHECK(access(RESTORE_FILE, F_OK) < 0 && errno == ENOENT);

	/* Killed again: the next ordinary start restores first, so it records the true original. */
	pid = start("thp_mode", "--mode", "never");
	CHECK(wait_thp("never"));
	CHECK(kill(pid, SIGKILL) == 0);
	wait_status(pid);
	pid = start("thp_mode", "--mode", "never");
	CHECK(wait_thp("never"));
	usleep(100000);
	{
		_cleanup_free_ char *line = xasprintf("set %s\t%s\n", THP_ENABLED, base);

		CHECKF(restore_file_has(line), "restore file lacks \"%s\"", line);
	}
	CHECK(kill(pid, SIGTERM) == 0);
	status = wait_status(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(thp_is(base));
}

static void test_second_instance(const char *base)
{
	pid_t first = start("thp_mode", "--mode", "never"), second;
	int status;

	CHECK(wait_thp("never"));
	usleep(50000);
	/* A second instance must neither run nor "restore" under the live first one. */
	second = start("thp_mode", "--mode", "never");
	status = wait_status(second);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x", status);
	CHECK(thp_is("never"));
	second = start("thp_mode", "--restore-only", NULL);
	status = wait_status(second);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	CHECK(thp_is("never"));
	CHECK(kill(first, 0) == 0);
	CHECK(kill(first, SIGTERM) == 0);
	status = wait_status(first);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(thp_is(base));
}

/*
 * thp_aggressor changes two settings (enabled and defrag); killed mid-run
 * (SIGKILL: no handler runs) it leaves both changed, and --restore-only,
 * what the matrix runner does after a kill, puts both back.
 */
static void test_aggressor_sigkill(void)
{
	pid_t pid;
	int status, i;

	REQUIRE(write_thp("madvise") == 0);
	REQUIRE(write_setting(THP_DEFRAG, "madvise") == 0);
	pid = start("thp_aggressor", "--frag-mb", "64");
	CHECK(wait_thp("always"));
	for (i = 0; i < 250 && !defrag_is("always"); i++)
		usleep(20000);
	CHECK(defrag_is("always"));
	CHECK(kill(pid, SIGKILL) == 0);
	wait_status(pid);
	CHECK(thp_is("always") && defrag_is("always"));
	status = wait_status(start("thp_aggressor", "--restore-only", NULL));
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	CHECK(thp_is("madvise"));
	CHECK(defrag_is("madvise"));
	CHECK(access("/run/argus-perturbers/thp_aggressor.restore", F_OK) < 0 && errno == ENOENT);
}

static void test_null_sleep(void)
{
	pid_t pid = start("null_sleep", NULL, NULL);
	int status;

	usleep(100000);
	CHECK(kill(pid, SIGTERM) == 0);
	status = wait_status(pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	CHECK(access("/run/argus-perturbers/null_sleep.restore", F_OK) < 0);
}

int main(void)
{
	const char *build = getenv("ARGUS_BUILD_DIR");
	_cleanup_free_ char *prog = NULL;
	const char *base;

	if (!build) {
		tap_skip_all("ARGUS_BUILD_DIR unset");
	}
	if (geteuid() != 0) {
		tap_skip_all("test-perturbers needs root");
	}
	perturbers_dir = xasprintf("%s/bench/perturbers", build);
	prog = xasprintf("%s/thp_mode", perturbers_dir);
	REQUIRE(access(prog, X_OK) == 0);
	/* A killed thp_mode of an earlier run may have left its restore file: apply it first. */
	{
		int status = wait_status(start("thp_mode", "--restore-only", NULL));

		REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	{
		int status = wait_status(start("thp_aggressor", "--restore-only", NULL));

		REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	REQUIRE(read_thp(original, sizeof(original)) == 0);
	REQUIRE(read_choice(THP_DEFRAG, original_defrag, sizeof(original_defrag)) == 0);
	/* From here on the original mode comes back however the test ends. */
	atexit(restore_original);
	signal(SIGSEGV, on_fatal);
	signal(SIGABRT, on_fatal);
	signal(SIGINT, on_fatal);
	signal(SIGTERM, on_fatal);

	/* A starting mode that thp_mode --mode never visibly changes. */
	base = strcmp(original, "never") == 0 ? "madvise" : original;
	REQUIRE(write_thp(base) == 0);

	test_sigterm(base);
	test_crash(base);
	test_sigkill(base);
	test_second_instance(base);
	test_aggressor_sigkill();
	test_null_sleep();

	restore_original();
	CHECK(thp_is(original));
	CHECK(defrag_is(original_defrag));
	free(perturbers_dir);
	return tap_done("test-perturbers");
}
