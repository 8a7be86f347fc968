// SPDX-License-Identifier: MIT
/*
 * Trace event ids from tracefs. See tracefs.h.
 */
#include "daemon/tracefs.h"
#include "daemon/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACEFS_MAGIC 0x74726163
#define TRACEFS_MOUNT "/sys/kernel/tracing"

/* Where tracefs is mounted already: its usual place, or debugfs's tracing directory. */
static const char *const tracefs_dirs[] = {TRACEFS_MOUNT, "/sys/kernel/debug/tracing"};

static bool is_tracefs(const char *dir)
{
	struct statfs st;

	return statfs(dir, &st) == 0 && st.f_type == TRACEFS_MAGIC;
}

/* One id file's number, or -1. Only read(2) and the like: the child after fork calls it. */
static int read_id(const char *path)
{
	char buf[24];
	ssize_t len;
	int fd, id = 0, i;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	for (i = 0; i < len && buf[i] != '\n'; i++) {
		if (buf[i] < '0' || buf[i] > '9' || id > (INT_MAX - 9) / 10)
			return -1;
		id = id * 10 + (buf[i] - '0');
	}
	return i > 0 ? id : -1;
}

static void read_ids(char *const *paths, size_t n, int *ret_ids)
{
	size_t i;

	for (i = 0; i < n; i++)
		ret_ids[i] = read_id(paths[i]);
}

/* Write all of buf to fd; the child's only output. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * In a child: a mount namespace of its own, whose mounts do not propagate
 * to the host's, tracefs mounted in it, the ids read and sent back.
 */
static int read_ids_private(char *const *paths, size_t n, int *ret_ids)
{
	size_t want = n * sizeof(int), got = 0;
	int fds[2], status, r = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tracefs", TRACEFS_MOUNT, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) < 0)
			_exit(1);
		read_ids(paths, n, ret_ids);
		_exit(write_all(fds[1], ret_ids, want) < 0 ? 1 : 0);
	}
	close(fds[1]);
	while (got < want) {
		ssize_t len = read(fds[0], (char *)ret_ids + got, want - got);

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break;
		got += (size_t)len;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (got < want || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ENOENT;
	return 0;
}

int tracefs_event_ids(const char *const *events, size_t n, int *ret_ids)
{
	const char *dir = NULL;
	char **paths;
	size_t i;
	int r = 0;

	for (i = 0; i < n; i++)
		ret_ids[i] = -1;
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs) && !dir; i++)
		if (is_tracefs(tracefs_dirs[i]))
			dir = tracefs_dirs[i];
	paths = calloc(n ?: 1, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	/* built before any fork: the child only opens and reads */
	for (i = 0; i < n; i++)
		paths[i] = xasprintf("%s/events/%s/id", dir ?: TRACEFS_MOUNT, events[i]);
	if (dir)
		read_ids(paths, n, ret_ids);
	else
		r = read_ids_private(paths, n, ret_ids);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (r < 0)
		for (i = 0; i < n; i++)
			ret_ids[i] = -1;
	return r;
}

int tracefs_event_open(int id)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_TRACEPOINT,
	    .size = sizeof(attr),
	    .config = (__u64)id,
	    .sample_period = 1,
	    .wakeup_events = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}
