// SPDX-License-Identifier: MIT
/*
 * Running registered workloads and observing running pids.
 *
 * target_spawn() does everything that may allocate, look up users or fail
 * with a message before fork(): the child of a multithreaded process may
 * only call async-signal-safe functions until it execs. The child reports
 * a failure before exec as {stage, errno} on a close-on-exec pipe, so the
 * parent sees either that record or EOF (the exec succeeded).
 */
#include "daemon/target.h"
#include "daemon/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_TICK_MS 20
#define DRAIN_AFTER_EXIT_MS 200 /* output of stragglers read after the reap, at most */
#define GROUPS_MAX 256

/* Where the child failed before exec: reported to the parent with errno. */
enum child_stage {
	STAGE_SETPGID,
	STAGE_STDIO,
	STAGE_FDS,
	STAGE_AFFINITY,
	STAGE_SETGROUPS,
	STAGE_SETGID,
	STAGE_SETUID,
	STAGE_PDEATHSIG,
	STAGE_CHDIR,
	STAGE_EXEC,
};

static const char *const stage_names[] = {
    [STAGE_SETPGID] = "setpgid",
    [STAGE_STDIO] = "redirecting stdio",
    [STAGE_FDS] = "closing inherited fds",
    [STAGE_AFFINITY] = "pinning to cpus",
    [STAGE_SETGROUPS] = "setgroups",
    [STAGE_SETGID] = "setgid",
    [STAGE_SETUID] = "setuid",
    [STAGE_PDEATHSIG] = "setting the parent death signal",
    [STAGE_CHDIR] = "chdir /",
    [STAGE_EXEC] = "exec",
};

struct child_error {
	int stage;
	int err;
};

struct target_run {
	pid_t pid;
	char *path;
	char *user;
	unsigned timeout_s;
	int go_fd;  /* our end of the go socket; closed by release */
	int out_fd; /* read end of the child's stdout+stderr */
	int err_fd; /* read end of the pre-exec error pipe */
	bool released, reaped;
	uint64_t release_ns;
	/* The output tail: the last TARGET_OUTPUT_MAX bytes, as a ring. */
	char *ring;
	size_t ring_head, ring_len;
	bool output_truncated;
	struct child_error cerr;
	size_t cerr_len;
};

void target_result_clear(struct target_result *r)
{
	if (!r)
		return;
	free(r->error);
	free(r->output_tail);
	*r = (struct target_result){};
}

static int fd_above_stdio(int fd)
{
	int nfd;

	/* A daemon started with 0-2 closed gets them back from pipe2(); move ours away. */
	if (fd > STDERR_FILENO)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return nfd < 0 ? -errno : nfd;
}

static int pipe_cloexec(int fds[2])
{
	int p[2], r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	p[0] = fd_above_stdio(p[0]);
	p[1] = fd_above_stdio(p[1]);
	if (p[0] < 0 || p[1] < 0) {
		r = p[0] < 0 ? p[0] : p[1];
		if (p[0] >= 0)
			close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
		return r;
	}
	fds[0] = p[0];
	fds[1] = p[1];
	return 0;
}

static void close_pair(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	fds[0] = fds[1] = -1;
}

/* Everything the child needs, prepared before fork. */
struct child_plan {
	const char *path;
	char *const *argv;
	char **envp;
	uid_t uid;
	gid_t gid;
	gid_t groups[GROUPS_MAX];
	int n_groups;
	cpu_set_t cpuset;
	int devnull, go_fd, out_fd, err_fd; /* the child's ends */
	pid_t parent;
};

int target_resolve_program(const struct workload *w, const char *victims_dir, char **ret_path,
			   char **ret_err)
{
	const char *a0 = w->argv ? w->argv[0] : NULL;
	char *path;

	if (!a0 || !*a0) {
		if (ret_err)
			*ret_err = xstrdup("workload has no program");
		return -EINVAL;
	}
	if (strchr(a0, '/')) {
		if (a0[0] != '/') {
			if (ret_err)
				*ret_err = xasprintf("program %s: not an absolute path", a0);
			return -EINVAL;
		}
		path = xstrdup(a0);
	} else {
		if (!victims_dir || !*victims_dir) {
			if (ret_err)
				*ret_err =
				    xasprintf("program %s: no victims directory to find it in", a0);
			return -EINVAL;
		}
		path = xasprintf("%s/%s", victims_dir, a0);
	}
	if (strlen(path) >= PATH_MAX) {
		free(path);
		if (ret_err)
			*ret_err = xstrdup("program path too long");
		return -ENAMETOOLONG;
	}
	*ret_path = path;
	return 0;
}

/* Look up the user and its groups; -ESRCH when unknown. */
static int lookup_user(const char *user, struct child_plan *plan, char **ret_home, char **ret_err)
{
	struct passwd pw, *res = NULL;
	_cleanup_free_ char *buf = NULL;
	long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	int r, n = GROUPS_MAX;

	if (sz < 16384)
		sz = 16384;
	buf = malloc(sz);
	if (!buf)
		return -ENOMEM;
	r = getpwnam_r(user, &pw, buf, sz, &res);
	if (r != 0 || !res) {
		*ret_err = r ? xasprintf("user %s: lookup failed: %s", user, strerror(r))
			     : xasprintf("user %s does not exist", user);
		return r ? -r : -ESRCH;
	}
	plan->uid = pw.pw_uid;
	plan->gid = pw.pw_gid;
	if (getgrouplist(user, pw.pw_gid, plan->groups, &n) < 0) {
		*ret_err = xasprintf("user %s: in more than %d groups", user, GROUPS_MAX);
		return -E2BIG;
	}
	plan->n_groups = n;
	*ret_home = xstrdup(pw.pw_dir && *pw.pw_dir ? pw.pw_dir : "/");
	return 0;
}

/* The directories that lead to path ("/a", "/a/b" for "/a/b/c"), then path itself. */
static char **path_steps(const char *path, size_t *ret_n)
{
	size_t n = 0, len = strlen(path), i;
	char **v = calloc(len + 2, sizeof(char *));

	if (!v)
		abort();
	for (i = 1; i < len; i++)
		if (path[i] == '/')
			v[n++] = xstrndup(path, i);
	v[n++] = xstrdup(path);
	*ret_n = n;
	return v;
}

/*
 * Whether the plan's user may run path, as the kernel decides for that user:
 * a child takes the user's groups, gid and uid and calls access(X_OK) on every
 * directory that leads to the file and on the file (noexec mounts, ACLs and
 * modes included). -EACCES (or the errno) with *ret_err naming the directory
 * or file that stops it and the fix.
 */
static int check_executable(const char *path, const struct child_plan *plan, const char *user,
			    const char *definition, char **ret_err)
{
	_cleanup_(strv_freep) char **steps = NULL;
	struct {
		int step, err;
	} res = {-1, 0};
	struct stat st;
	size_t n_steps;
	int p[2], status;
	ssize_t got;
	pid_t pid;

	if (stat(path, &st) < 0) {
		int r = -errno;

		*ret_err = xasprintf("program %s: %s; build or install it, or fix victims_dir or "
				     "argv[0] in %s",
				     path, strerror(-r), definition);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_err = xasprintf("program %s: not a regular file", path);
		return -EACCES;
	}
	steps = path_steps(path, &n_steps);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close_pair(p);
		return r;
	}
	if (pid == 0) {
		/* Async-signal-safe calls only: the daemon has threads. */
		size_t i;

		close(p[0]);
		if (setgroups(plan->n_groups, plan->groups) < 0 ||
		    setresgid(plan->gid, plan->gid, plan->gid) < 0 ||
		    setresuid(plan->uid, plan->uid, plan->uid) < 0) {
			res.err = errno;
			(void)!write(p[1], &res, sizeof(res));
			_exit(1);
		}
		for (i = 0; i < n_steps; i++)
			if (access(steps[i], X_OK) < 0) {
				res.step = (int)i;
				res.err = errno;
				break;
			}
		(void)!write(p[1], &res, sizeof(res));
		_exit(0);
	}
	close(p[1]);
	do
		got = read(p[0], &res, sizeof(res));
	while (got < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(res))
		return -EIO;
	if (res.err == 0)
		return 0;
	if (res.step < 0) {
		*ret_err = xasprintf("checking program %s as user %s: taking its credentials: %s",
				     path, user, strerror(res.err));
		return -res.err;
	}
	if ((size_t)res.step < n_steps - 1) {
		const char *dir = steps[res.step];
		struct stat ds = {};

		(void)stat(dir, &ds);
		*ret_err = xasprintf("program %s cannot be run by user %s: directory %s is not "
				     "searchable by that user (%s, mode %04o); install the program "
				     "where %s can search every directory and execute it (victims_dir), "
				     "or change \"user\" in %s",
				     path, user, dir, strerror(res.err), ds.st_mode & 07777, user,
				     definition);
	} else
		*ret_err = xasprintf("program %s is not executable by user %s (%s, mode %04o); "
				     "make it executable for that user, or change \"user\" in %s",
				     path, user, strerror(res.err), st.st_mode & 07777, definition);
	return -res.err;
}

int target_check_program(const struct workload *w, const char *victims_dir, char **ret_err)
{
	_cleanup_free_ char *path = NULL, *home = NULL, *err = NULL;
	struct child_plan plan = {};
	const char *user = w->user ? w->user : "nobody";
	int r;

	r = target_resolve_program(w, victims_dir, &path, &err);
	if (r == 0)
		r = lookup_user(user, &plan, &home, &err);
	if (r == 0)
		r = check_executable(path, &plan, user, w->source ? w->source : w->name, &err);
	if (r < 0 && ret_err)
		*ret_err = err ? TAKE_PTR(err) : xasprintf("program check: %s", strerror(-r));
	return r;
}

/*
 * A clean environment: the daemon's own (NOTIFY_SOCKET, credentials
 * directories, ...) is not the victim's business.
 */
static char **child_environment(const char *user, const char *home)
{
	char **envp = calloc(7, sizeof(char *));

	if (!envp)
		abort();
	envp[0] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	envp[1] = xasprintf("HOME=%s", home);
	envp[2] = xasprintf("USER=%s", user);
	envp[3] = xasprintf("LOGNAME=%s", user);
	envp[4] = xstrdup("LANG=C.UTF-8");
	envp[5] = xstrdup("ARGUS_TARGET=1");
	return envp;
}

/* close_range() (Linux 5.9) over [first, last], or one by one where it is missing. */
static int close_span(unsigned first, unsigned last)
{
	if (first > last)
		return 0;
	if (syscall(SYS_close_range, first, last, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	for (unsigned fd = first; fd <= last && fd < 65536; fd++)
		close((int)fd);
	return 0;
}

/* Close every fd above stderr except a and b (both above stderr). */
static int close_fds_except(int a, int b)
{
	unsigned lo = (unsigned)(a < b ? a : b), hi = (unsigned)(a < b ? b : a);
	int r;

	r = close_span(STDERR_FILENO + 1, lo - 1);
	if (r == 0)
		r = close_span(lo + 1, hi - 1);
	if (r == 0)
		r = close_span(hi + 1, ~0U);
	return r;
}

static _Noreturn void child_fail(int err_fd, int stage, int err)
{
	struct child_error ce = {.stage = stage, .err = err};
	ssize_t n;

	do
		n = write(err_fd, &ce, sizeof(ce));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

/* The child, between fork and exec: async-signal-safe calls only. */
static _Noreturn void child_run(const struct child_plan *p)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	sigset_t empty;
	char go;
	ssize_t n;
	int sig;

	if (setpgid(0, 0) < 0)
		child_fail(p->err_fd, STAGE_SETPGID, errno);

	/* Dispositions and the mask are inherited from the daemon: reset them. */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &sa, NULL);
	sigemptyset(&empty);
	(void)sigprocmask(SIG_SETMASK, &empty, NULL);

	if (dup2(p->devnull, STDIN_FILENO) < 0 || dup2(p->out_fd, STDOUT_FILENO) < 0 ||
	    dup2(p->out_fd, STDERR_FILENO) < 0)
		child_fail(p->err_fd, STAGE_STDIO, errno);
	if (close_fds_except(p->go_fd, p->err_fd) < 0)
		child_fail(p->err_fd, STAGE_FDS, errno);

	if (sched_setaffinity(0, sizeof(p->cpuset), &p->cpuset) < 0)
		child_fail(p->err_fd, STAGE_AFFINITY, errno);
	if (setgroups(p->n_groups, p->groups) < 0)
		child_fail(p->err_fd, STAGE_SETGROUPS, errno);
	if (setresgid(p->gid, p->gid, p->gid) < 0)
		child_fail(p->err_fd, STAGE_SETGID, errno);
	if (setresuid(p->uid, p->uid, p->uid) < 0)
		child_fail(p->err_fd, STAGE_SETUID, errno);
	/* After the uid change, which clears the parent death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(p->err_fd, STAGE_PDEATHSIG, errno);
	if (getppid() != p->parent)
		_exit(127);
	if (chdir("/") < 0)
		child_fail(p->err_fd, STAGE_CHDIR, errno);
	umask(022);

	/* Wait for target_release(); EOF means the run was abandoned. */
	do
		n = read(p->go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'g')
		_exit(127);
	close(p->go_fd);

	execve(p->path, p->argv, p->envp);
	child_fail(p->err_fd, STAGE_EXEC, errno);
}

int target_spawn(const struct workload *w, const char *victims_dir, struct target_run **ret,
		 char **ret_err)
{
	_cleanup_free_ char *path = NULL, *home = NULL, *err = NULL;
	_cleanup_(strv_freep) char **envp = NULL;
	_cleanup_close_ int devnull = -1;
	int go[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct child_plan plan = {};
	struct target_run *t;
	cpu_set_t allowed;
	pid_t pid;
	int r;

	if (!w || !ret)
		return -EINVAL;
	r = target_resolve_program(w, victims_dir, &path, &err);
	if (r < 0)
		goto fail;
	r = lookup_user(w->user ? w->user : "nobody", &plan, &home, &err);
	if (r < 0)
		goto fail;

	r = check_executable(path, &plan, w->user ? w->user : "nobody",
			     w->source ? w->source : w->name, &err);
	if (r < 0)
		goto fail;

	/* Pinning to CPUs that are offline or outside our own set would fail in the child. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		r = -errno;
		err = xasprintf("reading our CPU affinity: %s", strerror(-r));
		goto fail;
	}
	CPU_AND(&plan.cpuset, &w->cpuset, &allowed);
	if (CPU_COUNT(&plan.cpuset) == 0) {
		r = -EINVAL;
		err = xasprintf("cpus %s: none of them is online and allowed",
				w->cpus ? w->cpus : "(all)");
		goto fail;
	}

	envp = child_environment(w->user ? w->user : "nobody", home);
	r = open("/dev/null", O_RDONLY | O_CLOEXEC);
	r = r < 0 ? -errno : fd_above_stdio(r);
	if (r < 0) {
		err = xasprintf("opening /dev/null: %s", strerror(-r));
		goto fail;
	}
	devnull = r;
	/* A socket, not a pipe: send(MSG_NOSIGNAL) cannot raise SIGPIPE in the daemon. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0) {
		r = -errno;
		goto fail_fds;
	}
	go[0] = fd_above_stdio(go[0]);
	go[1] = fd_above_stdio(go[1]);
	if (go[0] < 0 || go[1] < 0) {
		r = go[0] < 0 ? go[0] : go[1];
		goto fail_fds;
	}
	r = pipe_cloexec(out);
	if (r < 0)
		goto fail_fds;
	r = pipe_cloexec(errp);
	if (r < 0)
		goto fail_fds;
	/* Our ends only: the loop in target_wait() reads what is there and polls again. */
	if (fcntl(out[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(errp[0], F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		goto fail_fds;
	}

	t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	t->ring = malloc(TARGET_OUTPUT_MAX);
	if (!t->ring)
		abort();

	plan.path = path;
	plan.argv = w->argv;
	plan.envp = envp;
	plan.devnull = devnull;
	plan.go_fd = go[1];
	plan.out_fd = out[1];
	plan.err_fd = errp[1];
	plan.parent = getpid();

	pid = fork();
	if (pid < 0) {
		r = -errno;
		free(t->ring);
		free(t);
		goto fail_fds;
	}
	if (pid == 0)
		child_run(&plan);

	/* Also here, so the group exists whichever of us runs first. */
	(void)setpgid(pid, pid);

	close(go[1]);
	close(out[1]);
	close(errp[1]);
	t->pid = pid;
	t->path = TAKE_PTR(path);
	t->user = xstrdup(w->user ? w->user : "nobody");
	t->timeout_s = w->timeout_s;
	t->go_fd = go[0];
	t->out_fd = out[0];
	t->err_fd = errp[0];
	*ret = t;
	return 0;

fail_fds:
	if (!err)
		err = xasprintf("preparing the child: %s", strerror(-r));
	close_pair(go);
	close_pair(out);
	close_pair(errp);
fail:
	if (ret_err)
		*ret_err = TAKE_PTR(err);
	return r;
}

pid_t target_pid(const struct target_run *t)
{
	return t ? t->pid : -1;
}

const char *target_path(const struct target_run *t)
{
	return t ? t->path : NULL;
}

int target_release(struct target_run *t)
{
	char go = 'g';
	ssize_t n;

	if (!t || t->released || t->go_fd < 0)
		return -EINVAL;
	t->released = true;
	t->release_ns = now_mono_ns();
	do
		n = send(t->go_fd, &go, 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* A child that already died shows up in target_wait(); that is not our error here. */
	close(t->go_fd);
	t->go_fd = -1;
	if (n < 0 && errno != EPIPE && errno != ECONNRESET)
		return -errno;
	return 0;
}

static void ring_append(struct target_run *t, const char *buf, size_t n)
{
	size_t i;

	if (n > TARGET_OUTPUT_MAX) {
		buf += n - TARGET_OUTPUT_MAX;
		n = TARGET_OUTPUT_MAX;
		t->output_truncated = true;
	}
	for (i = 0; i < n; i++) {
		size_t pos = (t->ring_head + t->ring_len) % TARGET_OUTPUT_MAX;

		t->ring[pos] = buf[i];
		if (t->ring_len < TARGET_OUTPUT_MAX)
			t->ring_len++;
		else {
			t->ring_head = (t->ring_head + 1) % TARGET_OUTPUT_MAX;
			t->output_truncated = true;
		}
	}
}

/* Read what the pipe holds now; false at EOF or error (stop polling it). */
static bool drain_output(struct target_run *t)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(t->out_fd, buf, sizeof(buf));
		if (n > 0) {
			ring_append(t, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		return false;
	}
}

/* Read the child's pre-exec error record; false once EOF or a full record was seen. */
static bool read_child_error(struct target_run *t)
{
	ssize_t n;

	for (;;) {
		if (t->cerr_len >= sizeof(t->cerr))
			return false;
		n = read(t->err_fd, (char *)&t->cerr + t->cerr_len, sizeof(t->cerr) - t->cerr_len);
		if (n > 0) {
			t->cerr_len += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

/* The tail as a C string: NUL bytes shown as '?', no split UTF-8 sequence at the start. */
static char *output_tail_string(const struct target_run *t)
{
	char *s = malloc(t->ring_len + 1);
	size_t i, skip = 0, j = 0;

	if (!s)
		abort();
	for (i = 0; i < t->ring_len; i++) {
		char c = t->ring[(t->ring_head + i) % TARGET_OUTPUT_MAX];

		if (t->output_truncated && j == 0 && skip < 3 &&
		    ((unsigned char)c & 0xc0) == 0x80) {
			skip++;
			continue;
		}
		s[j++] = c ? c : '?';
	}
	s[j] = 0;
	return s;
}

static void kill_group(const struct target_run *t)
{
	(void)kill(-t->pid, SIGKILL);
	(void)kill(t->pid, SIGKILL); /* in case the child had not reached setpgid yet */
}

static int pidfd_open_nocheck(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

int target_wait(struct target_run *t, bool (*should_stop)(void *), void *userdata,
		struct target_result *ret)
{
	struct target_result res = {};
	_cleanup_close_ int pidfd = -1;
	struct rusage usage = {};
	uint64_t deadline, end_ns;
	bool out_open = true, err_open = true, killed = false;
	int status = 0;

	if (!t || !ret || !t->released || t->reaped)
		return -EINVAL;

	/* A pidfd wakes us when the child exits, so the wall clock is not rounded to the tick. */
	pidfd = pidfd_open_nocheck(t->pid);
	deadline = t->release_ns + (uint64_t)t->timeout_s * 1000000000ull;

	for (;;) {
		struct pollfd pfd[3];
		int n = 0, timeout = POLL_TICK_MS, pout = -1, perr = -1;
		uint64_t now;
		pid_t p;

		if (out_open) {
			pout = n;
			pfd[n++] = (struct pollfd){.fd = t->out_fd, .events = POLLIN};
		}
		if (err_open) {
			perr = n;
			pfd[n++] = (struct pollfd){.fd = t->err_fd, .events = POLLIN};
		}
		if (pidfd >= 0)
			pfd[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		now = now_mono_ns();
		if (!killed && deadline > now && (deadline - now) / 1000000 < (uint64_t)timeout)
			timeout = (int)((deadline - now) / 1000000) + 1;
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			return -errno;

		if (pout >= 0 && pfd[pout].revents)
			out_open = drain_output(t);
		if (perr >= 0 && pfd[perr].revents)
			err_open = read_child_error(t);

		p = wait4(t->pid, &status, WNOHANG, &usage);
		if (p < 0 && errno != EINTR)
			return -errno;
		if (p == t->pid)
			break;

		if (killed)
			continue;
		now = now_mono_ns();
		if (now >= deadline) {
			kill_group(t);
			killed = res.timed_out = true;
		} else if (should_stop && should_stop(userdata)) {
			kill_group(t);
			killed = res.stopped = true;
		}
	}
	end_ns = now_mono_ns();
	t->reaped = true;

	/* Stragglers in the group (grandchildren) go with the leader. */
	(void)kill(-t->pid, SIGKILL);

	/* What is still in the pipes; bounded, since an escaped grandchild may hold them open. */
	for (uint64_t stop = end_ns + DRAIN_AFTER_EXIT_MS * 1000000ull;
	     (out_open || err_open) && now_mono_ns() < stop;) {
		struct pollfd pfd[2];
		int n = 0, pout = -1, perr = -1;

		if (out_open) {
			pout = n;
			pfd[n++] = (struct pollfd){.fd = t->out_fd, .events = POLLIN};
		}
		if (err_open) {
			perr = n;
			pfd[n++] = (struct pollfd){.fd = t->err_fd, .events = POLLIN};
		}
		if (poll(pfd, n, POLL_TICK_MS) < 0 && errno != EINTR)
			break;
		if (pout >= 0 && pfd[pout].revents)
			out_open = drain_output(t);
		if (perr >= 0 && pfd[perr].revents)
			err_open = read_child_error(t);
	}

	res.wall_ns = end_ns - t->release_ns;
	res.user_ns = timeval_ns(&usage.ru_utime);
	res.sys_ns = timeval_ns(&usage.ru_stime);
	if (WIFEXITED(status))
		res.exit_status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res.term_signal = WTERMSIG(status);

	if (t->cerr_len == sizeof(t->cerr)) {
		int stage = t->cerr.stage;
		const char *what =
		    stage >= 0 && stage < (int)ARRAY_SIZE(stage_names) && stage_names[stage]
			? stage_names[stage]
			: "preparing";

		res.exec_failed = true;
		if (stage == STAGE_EXEC)
			res.error = xasprintf("exec %s: %s", t->path, strerror(t->cerr.err));
		else if (stage == STAGE_SETUID || stage == STAGE_SETGID)
			res.error = xasprintf("%s %s: %s", what, t->user, strerror(t->cerr.err));
		else
			res.error = xasprintf("%s: %s", what, strerror(t->cerr.err));
	} else if (res.timed_out)
		res.error = xasprintf("timed out after %u s", t->timeout_s);
	else if (res.stopped)
		res.error = xstrdup("stopped");
	else if (res.term_signal) {
		const char *abbrev = sigabbrev_np(res.term_signal);

		res.error = abbrev ? xasprintf("killed by signal SIG%s", abbrev)
				   : xasprintf("killed by signal %d", res.term_signal);
	} else if (res.exit_status != 0)
		res.error = xasprintf("exited with status %d", res.exit_status);

	res.output_tail = output_tail_string(t);
	*ret = res;
	return 0;
}

void target_free(struct target_run *t)
{
	int status;

	if (!t)
		return;
	if (!t->reaped && t->pid > 0) {
		kill_group(t);
		while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
			;
		(void)kill(-t->pid, SIGKILL);
	}
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->out_fd >= 0)
		close(t->out_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	free(t->ring);
	free(t->path);
	free(t->user);
	free(t);
}

/*
 * /proc/PID/stat read whole into *ret_text; *ret_fields points past the
 * command (which may hold any character), at the state. -ESRCH when gone.
 */
static int proc_stat_fields(pid_t pid, char **ret_text, const char **ret_fields)
{
	char path[64];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_file_bounded(path, 4096, ret_text, NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	p = strrchr(*ret_text, ')');
	if (!p)
		return -EIO;
	*ret_fields = p + 1;
	return 0;
}

/* Fields of /proc/PID/stat after the command: state (field 3) and flags (field 9). */
static int read_proc_stat(pid_t pid, char *ret_state, unsigned long *ret_flags, pid_t *ret_ppid)
{
	_cleanup_free_ char *text = NULL;
	unsigned long flags;
	const char *p;
	int ppid, r;
	char state;

	r = proc_stat_fields(pid, &text, &p);
	if (r < 0)
		return r;
	/* state ppid pgrp session tty_nr tpgid flags */
	if (sscanf(p, " %c %d %*d %*d %*d %*d %lu", &state, &ppid, &flags) != 3)
		return -EIO;
	*ret_state = state;
	*ret_flags = flags;
	if (ret_ppid)
		*ret_ppid = ppid;
	return 0;
}

int target_cpu(pid_t pid, struct target_cpu *ret)
{
	_cleanup_free_ char *text = NULL;
	unsigned long long utime, stime, cutime, cstime, start;
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long tick;
	const char *p;
	int ppid, r;

	if (hz <= 0)
		return -EIO;
	r = proc_stat_fields(pid, &text, &p);
	if (r < 0)
		return r;
	/*
	 * state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime
	 */
	if (sscanf(p,
		   " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d "
		   "%llu",
		   &ppid, &utime, &stime, &cutime, &cstime, &start) != 6)
		return -EIO;
	tick = 1000000000ull / (unsigned long long)hz;
	ret->own_ns = (utime + stime) * tick;
	ret->reaped_ns = (cutime + cstime) * tick;
	ret->start_ns = start * tick;
	ret->ppid = ppid;
	return 0;
}

/* The Tgid line of /proc/PID/status. */
static int read_tgid(pid_t pid, pid_t *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = read_file_bounded(path, 64 * 1024, &text, NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	p = strstr(text, "\nTgid:");
	if (!p)
		return -EIO;
	*ret = (pid_t)strtol(p + 6, NULL, 10);
	return 0;
}

#define PF_KTHREAD_FLAG 0x00200000UL

int target_pid_check(pid_t pid, char **ret_err)
{
	unsigned long flags;
	pid_t tgid = 0;
	char state;
	int r;

	if (pid <= 0) {
		if (ret_err)
			*ret_err = xasprintf("pid %d is not a process id", (int)pid);
		return -ESRCH;
	}
	if (pid == 1) {
		if (ret_err)
			*ret_err = xstrdup("pid 1 (init) may not be observed");
		return -EPERM;
	}
	r = read_proc_stat(pid, &state, &flags, NULL);
	if (r == 0)
		r = read_tgid(pid, &tgid);
	if (r < 0) {
		if (ret_err)
			*ret_err = r == -ESRCH
				       ? xasprintf("no process with pid %d", (int)pid)
				       : xasprintf("reading /proc/%d: %s", (int)pid, strerror(-r));
		return r;
	}
	if (tgid == getpid()) {
		if (ret_err)
			*ret_err = xasprintf("pid %d is argusd itself", (int)pid);
		return -EPERM;
	}
	if (tgid != pid) {
		if (ret_err)
			*ret_err = xasprintf("pid %d is a thread of process %d; give the process",
					     (int)pid, (int)tgid);
		return -ESRCH;
	}
	if (flags & PF_KTHREAD_FLAG) {
		if (ret_err)
			*ret_err = xasprintf("pid %d is a kernel thread", (int)pid);
		return -EPERM;
	}
	if (state == 'Z' || state == 'X') {
		if (ret_err)
			*ret_err = xasprintf("pid %d has exited", (int)pid);
		return -ESRCH;
	}
	return 0;
}

static bool pid_gone(pid_t pid)
{
	unsigned long flags;
	char state;

	return read_proc_stat(pid, &state, &flags, NULL) < 0 || state == 'Z' || state == 'X';
}

int target_observe(pid_t pid, unsigned window_ms, bool (*should_stop)(void *), void *userdata,
		   struct target_result *ret)
{
	_cleanup_close_ int pidfd = -1;
	struct target_result res = {};
	uint64_t start, end;
	bool exited = false;

	if (pid <= 0 || !ret)
		return -EINVAL;
	/* The pidfd pins the process identity: a recycled pid cannot fool the window. */
	pidfd = pidfd_open_nocheck(pid);
	if (pidfd < 0 && errno == ESRCH)
		return -ESRCH;
	start = now_mono_ns();
	end = start + (uint64_t)window_ms * 1000000ull;

	for (;;) {
		uint64_t now = now_mono_ns();
		int timeout = POLL_TICK_MS;

		if (now >= end)
			break;
		if ((end - now) / 1000000 < (uint64_t)timeout)
			timeout = (int)((end - now) / 1000000) + 1;
		if (pidfd >= 0) {
			struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
			int n = poll(&pfd, 1, timeout);

			if (n < 0 && errno != EINTR)
				return -errno;
			/* Readable: exited; a zombie counts as gone for us. */
			if (n > 0 && pfd.revents) {
				exited = true;
				break;
			}
		} else {
			struct timespec ts = {0, (long)timeout * 1000000L};

			nanosleep(&ts, NULL);
			if (pid_gone(pid)) {
				exited = true;
				break;
			}
		}
		if (should_stop && should_stop(userdata)) {
			res.stopped = true;
			res.error = xstrdup("stopped");
			break;
		}
	}
	res.wall_ns = now_mono_ns() - start;
	if (exited) {
		res.error = xasprintf("pid %d exited %.3f s into the %.3f s window", (int)pid,
				      res.wall_ns / 1e9, window_ms / 1e3);
		*ret = res;
		return -ESRCH;
	}
	*ret = res;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int target_threads(pid_t pid, pid_t *ret_tids, size_t max, size_t *ret_n)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char path[64];
	struct dirent *de;
	size_t n = 0;

	if (pid <= 0 || (!ret_tids && max > 0) || !ret_n)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((errno = 0, de = readdir(d))) {
		char *end;
		long tid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (n < max)
			ret_tids[n++] = (pid_t)tid;
	}
	if (errno)
		return -errno;
	if (n > 1)
		qsort(ret_tids, n, sizeof(pid_t), cmp_pid);
	*ret_n = n;
	return 0;
}
