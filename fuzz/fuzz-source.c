// SPDX-License-Identifier: MIT
/*
 * The source filter, differentially: the bytes are an authored probe's
 * source, given to compile_check_source. For every source it accepts,
 * clang itself says which files the preprocessor opens: `clang -E -M`
 * with the flags of the real compile (-target bpf, -nostdinc) and the
 * authored include directory as the only -I, run on the source written as
 * probe.bpf.c in a directory of its own. Every file in that dependency list
 * must be the source itself or a header of the include directory;
 * anything else is a way past the filter, and the target aborts naming it.
 *
 * clang runs only for accepted sources in which the preprocessor could
 * name a file at all: a directive needs '#' (or the digraph "%:", or the
 * trigraph "??="), a pragma without one needs the _Pragma or __pragma
 * operator. Other sources cannot open anything, and skipping them keeps
 * the fuzzer fast on the filter itself.
 *
 * The compiler and the include directory are the build's
 * (ARGUS_FUZZ_CLANG, ARGUS_FUZZ_INCLUDE), or the same names in the
 * environment.
 */
#include "daemon/compile.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef ARGUS_FUZZ_CLANG
#define ARGUS_FUZZ_CLANG "/usr/bin/clang"
#endif
#ifndef ARGUS_FUZZ_INCLUDE
#define ARGUS_FUZZ_INCLUDE "/usr/share/argusd/include"
#endif

#define DEPS_MAX (1 << 20)
#define CLANG_WALL_MS 60000

extern char **environ;

static const char *clang_path;
static char include_dir[PATH_MAX], work_dir[PATH_MAX], src_path[PATH_MAX + 32];
static char *include_arg;

static void remove_work_dir(void)
{
	unlink(src_path);
	rmdir(work_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *inc = getenv("ARGUS_FUZZ_INCLUDE") ?: ARGUS_FUZZ_INCLUDE;
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	struct stat st;

	clang_path = getenv("ARGUS_FUZZ_CLANG") ?: ARGUS_FUZZ_CLANG;
	if (!realpath(inc, include_dir) || stat(include_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fuzz-source: no include directory %s (build authored_include)\n",
			inc);
		abort();
	}
	if (access(clang_path, X_OK) < 0) {
		fprintf(stderr, "fuzz-source: cannot run %s\n", clang_path);
		abort();
	}
	snprintf(work_dir, sizeof(work_dir), "%s/argus-fuzz-source-XXXXXX", tmp);
	if (!mkdtemp(work_dir))
		abort();
	snprintf(src_path, sizeof(src_path), "%s/probe.bpf.c", work_dir);
	include_arg = xasprintf("-I%s", include_dir);
	atexit(remove_work_dir);
	return 0;
}

static bool may_name_file(const uint8_t *p, size_t n)
{
	static const char *const operators[] = {"_Pragma", "__pragma"};
	size_t i, k;

	for (i = 0; i < n; i++)
		if (p[i] == '#' || p[i] == '%' || p[i] == '?')
			return true;
	for (k = 0; k < ARRAY_SIZE(operators); k++)
		if (memmem(p, n, operators[k], strlen(operators[k])))
			return true;
	return false;
}

/* clang -E -M on the source; returns its standard output (the dependency rule), or NULL. */
static char *dependencies(const uint8_t *data, size_t size)
{
	char *argv[] = {(char *)clang_path, "-target", "bpf", "-D__TARGET_ARCH_x86", "-nostdinc",
			include_arg,	    "-E",      "-M",  "probe.bpf.c",	     NULL};
	posix_spawn_file_actions_t fa;
	char *out = malloc(DEPS_MAX + 1);
	size_t len = 0;
	int pipefd[2], fd, status;
	pid_t pid;

	fd = open(src_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!out || fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) < 0)
		abort();
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		abort();
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, work_dir);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (posix_spawn(&pid, clang_path, &fa, NULL, argv, environ) != 0)
		abort();
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	for (;;) {
		struct pollfd pfd = {.fd = pipefd[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, CLANG_WALL_MS) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(pipefd[0], out + len, DEPS_MAX - len);
		if (n <= 0)
			break;
		len += n;
		if (len == DEPS_MAX)
			break;
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[len] = 0;
	return out;
}

/* Is this file of the dependency list one the compile may read? */
static bool allowed_file(const char *name)
{
	char full[PATH_MAX * 2], real[PATH_MAX];
	size_t n = strlen(include_dir);

	if (!strcmp(name, "probe.bpf.c"))
		return true;
	snprintf(full, sizeof(full), "%s%s%s", name[0] == '/' ? "" : work_dir,
		 name[0] == '/' ? "" : "/", name);
	if (!realpath(full, real))
		return false;
	return !strncmp(real, include_dir, n) && real[n] == '/';
}

/* Check every file of a make rule "probe.o: probe.bpf.c a.h \\\n b.h" ("\ " escapes a space). */
static void check_dependencies(char *rule, const uint8_t *data, size_t size)
{
	char *p = strchr(rule, ':'), name[PATH_MAX];

	if (!p)
		return; /* clang failed before any file: nothing was opened */
	for (p++; *p;) {
		size_t len = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n' || (p[0] == '\\' && p[1] == '\n'))
			p += p[0] == '\\' ? 2 : 1;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
		       !(p[0] == '\\' && p[1] == '\n')) {
			if (p[0] == '\\' && (p[1] == ' ' || p[1] == '#' || p[1] == '\\'))
				p++;
			else if (p[0] == '$' && p[1] == '$')
				p++;
			if (len + 1 < sizeof(name))
				name[len++] = *p;
			p++;
		}
		if (!len)
			continue;
		name[len] = 0;
		FUZZ_CHECK(allowed_file(name),
			   "the filter accepted a source that makes the compiler read %s:\n%.*s",
			   name, (int)(size > 2000 ? 2000 : size), (const char *)data);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL, *deps;
	size_t i;
	int r;

	r = compile_check_source((const char *)data, size, COMPILE_SOURCE_MAX, &err);
	if (r < 0) {
		FUZZ_CHECK((r == -EINVAL || r == -E2BIG) && err && *err, "r=%d", r);
		FUZZ_CHECK(fuzz_utf8(err), "the refusal cannot go back to the model: %s", err);
		free(err);
		return 0;
	}
	FUZZ_CHECK(size >= 1 && size <= COMPILE_SOURCE_MAX, "size %zu accepted", size);
	for (i = 0; i < size; i++)
		FUZZ_CHECK(data[i] == '\t' || data[i] == '\n' || data[i] == '\r' ||
			       (data[i] >= 0x20 && data[i] < 0x7f),
			   "byte %#x at %zu accepted", data[i], i);
	if (!may_name_file(data, size))
		return 0;
	deps = dependencies(data, size);
	check_dependencies(deps, data, size);
	free(deps);
	return 0;
}
