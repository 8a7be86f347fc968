/* SPDX-License-Identifier: MIT */
/*
 * Staging the bundled programs for a test, as the README's commands do
 * (scripts/stage-programs.sh): the build directory may sit where the
 * workloads' user cannot reach it (a checkout under root's 0700 home).
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run argv to its end; 0 when it exited 0, else -ECHILD (its stderr goes to ours). */
static inline int run_argv(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* Copy build's bundled programs into dest, whose parent the workloads' user can search. */
static inline int stage_programs_from(const char *build, const char *dest)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	char script[1024];

	if (!src || !build)
		return -EINVAL;
	snprintf(script, sizeof(script), "%s/scripts/stage-programs.sh", src);
	return run_argv((char *const[]){script, (char *)build, (char *)dest, NULL});
}

static inline int stage_programs(const char *dest)
{
	return stage_programs_from(getenv("ARGUS_BUILD_DIR"), dest);
}

/*
 * A new directory under /tmp (mode 0755) holding the staged programs in
 * "programs"; its path (malloc'd; the programs are in PATH/programs), or NULL.
 * Remove it with stage_remove().
 */
static inline char *stage_tmpdir(void)
{
	char tmpl[] = "/tmp/argus-stage-XXXXXX", dest[64];

	if (!mkdtemp(tmpl) || chmod(tmpl, 0755) < 0)
		return NULL;
	snprintf(dest, sizeof(dest), "%s/programs", tmpl);
	if (stage_programs(dest) < 0)
		return NULL;
	return strdup(tmpl);
}

static inline void stage_remove(const char *dir)
{
	if (dir && dir[0] == '/')
		(void)run_argv((char *const[]){"/bin/rm", "-rf", "--", (char *)dir, NULL});
}
