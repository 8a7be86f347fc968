// SPDX-License-Identifier: MIT
/*
 * The target runner: real children (/bin/true and shell scripts in a
 * temporary directory) spawned, released, waited for, killed; running pids
 * observed.
 */
#include "daemon/aside.h"
#include "daemon/target.h"
#include "daemon/util.h"
#include "tests/stage.h"
#include "tests/tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>

static char dir[] = "/tmp/test-target.XXXXXX";

static void write_script(const char *name, const char *body, mode_t mode)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	REQUIRE(f);
	fputs(body, f);
	fclose(f);
	REQUIRE(chmod(path, mode) == 0);
}

/* A workload running dir/name (or an absolute program) as user, on cpus. */
static struct workload *make_workload(const char *prog, const char *user, const char *cpus,
				      unsigned timeout_s)
{
	struct workload *w = calloc(1, sizeof(*w));

	REQUIRE(w);
	w->name = xstrdup("t");
	w->argv = calloc(2, sizeof(char *));
	w->argv[0] = prog[0] == '/' ? xstrdup(prog) : xasprintf("%s/%s", dir, prog);
	w->argc = 1;
	w->user = xstrdup(user);
	if (cpus) {
		w->cpus = xstrdup(cpus);
		REQUIRE(parse_cpu_list(cpus, &w->cpuset) == 0);
	} else {
		CPU_ZERO(&w->cpuset);
		for (int c = 0; c < get_nprocs_conf(); c++)
			CPU_SET(c, &w->cpuset);
	}
	w->timeout_s = timeout_s;
	return w;
}

/* Spawn, release and wait; the result, or a failed check when anything returns an error. */
static int run_workload(struct workload *w, bool (*stop)(void *), void *ud,
			struct target_result *res)
{
	struct target_run *t = NULL;
	char *err = NULL;
	int r;

	r = target_spawn(w, NULL, &t, &err);
	CHECKF(r == 0, "spawn %s: %d %s", w->argv[0], r, err ? err : "");
	free(err);
	if (r < 0)
		return r;
	CHECK(target_pid(t) > 0);
	CHECK(getpgid(target_pid(t)) == target_pid(t) || errno == ESRCH);
	CHECK(target_release(t) == 0);
	CHECK(target_release(t) == -EINVAL);
	r = target_wait(t, stop, ud, res);
	CHECKF(r == 0, "wait: %d", r);
	CHECK(target_wait(t, stop, ud, res) == -EINVAL || r < 0);
	target_free(t);
	workload_free(w);
	return r;
}

static bool process_gone(pid_t pid)
{
	_cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)pid);
	_cleanup_free_ char *text = NULL;
	const char *p;

	/* Dead, or a zombie waiting for init to reap it. */
	for (int i = 0; i < 100; i++) {
		free(text);
		text = NULL;
		if (read_file_bounded(path, 4096, &text, NULL) < 0)
			return true;
		p = strrchr(text, ')');
		if (p && (p[2] == 'Z' || p[2] == 'X'))
			return true;
		usleep(20000);
	}
	return false;
}

static void test_exit_status(void)
{
	struct target_result res = {};

	CHECK(run_workload(make_workload("/bin/true", "nobody", NULL, 10), NULL, NULL, &res) == 0);
	CHECK(res.exit_status == 0 && res.term_signal == 0 && !res.timed_out && !res.stopped &&
	      !res.exec_failed);
	CHECKF(res.error == NULL, "error %s", res.error);
	CHECK(res.wall_ns > 0);
	CHECK(res.output_tail && res.output_tail[0] == 0);
	target_result_clear(&res);
	CHECK(res.error == NULL && res.output_tail == NULL);

	write_script("exit3.sh", "#!/bin/sh\necho to-stdout\necho to-stderr >&2\nexit 3\n", 0755);
	CHECK(run_workload(make_workload("exit3.sh", "nobody", NULL, 10), NULL, NULL, &res) == 0);
	CHECK(res.exit_status == 3 && res.term_signal == 0 && !res.exec_failed);
	CHECKF(res.error && strcmp(res.error, "exited with status 3") == 0, "error %s", res.error);
	CHECKF(res.output_tail && strstr(res.output_tail, "to-stdout\n") &&
		   strstr(res.output_tail, "to-stderr\n"),
	       "output %s", res.output_tail);
	target_result_clear(&res);

	write_script("segv.sh", "#!/bin/sh\nkill -SEGV $$\nsleep 5\n", 0755);
	CHECK(run_workload(make_workload("segv.sh", "nobody", NULL, 10), NULL, NULL, &res) == 0);
	CHECK(res.term_signal == SIGSEGV);
	CHECKF(res.error && strcmp(res.error, "killed by signal SIGSEGV") == 0, "error %s",
	       res.error);
	target_result_clear(&res);

	/* The wall clock runs from the release to the exit. */
	write_script("sleep.sh", "#!/bin/sh\nsleep 0.3\n", 0755);
	CHECK(run_workload(make_workload("sleep.sh", "nobody", NULL, 10), NULL, NULL, &res) == 0);
	CHECKF(res.wall_ns >= 300000000ull, "wall %llu", (unsigned long long)res.wall_ns);
	CHECKF(res.user_ns + res.sys_ns < 100000000ull, "cpu %llu + %llu ns asleep",
	       (unsigned long long)res.user_ns, (unsigned long long)res.sys_ns);
	target_result_clear(&res);

	/*
	 * Its CPU time, in user space and in the kernel, with its children's: a
	 * shell's loop is user time; zeros copied by dd, its child, mostly the
	 * kernel's (the kernel splits the time by where its ticks land: dd's
	 * user time was a tenth of its system time in one minute on this VM,
	 * 0.4 to 0.6 of it in another).
	 */
	write_script("spin.sh", "#!/bin/sh\ni=0\nwhile [ $i -lt 300000 ]; do i=$((i+1)); done\n",
		     0755);
	CHECK(run_workload(make_workload("spin.sh", "nobody", NULL, 30), NULL, NULL, &res) == 0);
	CHECKF(res.user_ns >= 100000000ull && res.user_ns > 4 * res.sys_ns, "user %llu sys %llu",
	       (unsigned long long)res.user_ns, (unsigned long long)res.sys_ns);
	target_result_clear(&res);
	write_script("zeros.sh",
		     "#!/bin/sh\ndd if=/dev/zero of=/dev/null bs=64k count=200000 2>/dev/null\n", 0755);
	CHECK(run_workload(make_workload("zeros.sh", "nobody", NULL, 30), NULL, NULL, &res) == 0);
	CHECKF(res.sys_ns >= 100000000ull && res.sys_ns > res.user_ns, "user %llu sys %llu",
	       (unsigned long long)res.user_ns, (unsigned long long)res.sys_ns);
	target_result_clear(&res);
}

static void test_timeout_kills_group(void)
{
	struct target_result res = {};
	long grandchild;

	/* The grandchild reports its pid, then both sleep past the limit. */
	write_script("forever.sh", "#!/bin/sh\nsleep 100 &\necho \"grandchild $!\"\nsleep 100\n",
		     0755);
	CHECK(run_workload(make_workload("forever.sh", "nobody", NULL, 1), NULL, NULL, &res) == 0);
	CHECK(res.timed_out && !res.stopped && res.term_signal == SIGKILL);
	CHECKF(res.error && strcmp(res.error, "timed out after 1 s") == 0, "error %s", res.error);
	CHECK(res.wall_ns >= 1000000000ull);
	REQUIRE(res.output_tail);
	CHECKF(sscanf(res.output_tail, "grandchild %ld", &grandchild) == 1, "output %s",
	       res.output_tail);
	CHECKF(grandchild > 0 && process_gone((pid_t)grandchild), "grandchild %ld survived",
	       grandchild);
	target_result_clear(&res);
}

static void test_output_tail(void)
{
	struct target_result res = {};
	size_t len;

	/* About 48 KiB, more than the tail holds. */
	write_script(
	    "chatty.sh",
	    "#!/bin/sh\ni=0\nwhile [ $i -lt 4000 ]; do echo \"line $i\"; i=$((i+1)); done\n"
	    "echo last >&2\n",
	    0755);
	CHECK(run_workload(make_workload("chatty.sh", "nobody", NULL, 30), NULL, NULL, &res) == 0);
	CHECK(res.exit_status == 0);
	REQUIRE(res.output_tail);
	len = strlen(res.output_tail);
	CHECKF(len == TARGET_OUTPUT_MAX, "tail of %zu bytes", len);
	CHECK(len >= 15 && strcmp(res.output_tail + len - 15, "line 3999\nlast\n") == 0);
	CHECK(strstr(res.output_tail, "line 10\n") == NULL);
	target_result_clear(&res);
}

static void test_spawn_errors(void)
{
	struct target_run *t = NULL;
	struct workload *w;
	char *err = NULL;
	int r;

	/* Missing program: refused before any fork. */
	w = make_workload("missing", "nobody", NULL, 10);
	r = target_spawn(w, NULL, &t, &err);
	CHECKF(r == -ENOENT, "r=%d", r);
	CHECK(t == NULL);
	CHECKF(err && strstr(err, "missing") && strstr(err, "No such file or directory"),
	       "error %s", err);
	free(err);
	err = NULL;
	workload_free(w);

	/* A bare name resolves against the victims directory, or needs one. */
	w = make_workload("/x", "nobody", NULL, 10);
	free(w->argv[0]);
	w->argv[0] = xstrdup("exit3.sh");
	r = target_spawn(w, NULL, &t, &err);
	CHECK(r == -EINVAL && !t && err);
	free(err);
	err = NULL;
	r = target_spawn(w, dir, &t, &err);
	CHECKF(r == 0 && t, "r=%d %s", r, err ? err : "");
	CHECK(t && strstr(target_path(t), "/exit3.sh"));
	/* Freed without release: the stopped child is killed and reaped. */
	if (t) {
		pid_t pid = target_pid(t);

		target_free(t);
		t = NULL;
		CHECK(kill(pid, 0) < 0 && errno == ESRCH);
	}
	workload_free(w);

	/* Not executable by anyone. */
	write_script("noexec.sh", "#!/bin/sh\nexit 0\n", 0644);
	w = make_workload("noexec.sh", "nobody", NULL, 10);
	r = target_spawn(w, NULL, &t, &err);
	CHECK(r == -EACCES && !t);
	CHECKF(err && strstr(err, "not executable"), "error %s", err);
	free(err);
	err = NULL;
	workload_free(w);

	/* Executable by its owner (root) only: not by nobody. */
	write_script("rootonly.sh", "#!/bin/sh\nexit 0\n", 0700);
	w = make_workload("rootonly.sh", "nobody", NULL, 10);
	r = target_spawn(w, NULL, &t, &err);
	CHECK(r == -EACCES && !t);
	free(err);
	err = NULL;
	workload_free(w);

	/* Unknown user. */
	w = make_workload("/bin/true", "no_such_user_argus", NULL, 10);
	r = target_spawn(w, NULL, &t, &err);
	CHECK(r == -ESRCH && !t);
	CHECKF(err && strstr(err, "no_such_user_argus"), "error %s", err);
	free(err);
	err = NULL;
	workload_free(w);

	/* CPUs that do not exist here. */
	w = make_workload("/bin/true", "nobody", "1000", 10);
	r = target_spawn(w, NULL, &t, &err);
	CHECK(r == -EINVAL && !t && err);
	free(err);
	err = NULL;
	workload_free(w);

	/* Waiting before the release is a caller error. */
	w = make_workload("/bin/true", "nobody", NULL, 10);
	r = target_spawn(w, NULL, &t, &err);
	CHECK(r == 0);
	if (r == 0) {
		struct target_result res = {};

		CHECK(target_wait(t, NULL, NULL, &res) == -EINVAL);
		target_free(t);
		t = NULL;
	}
	workload_free(w);
	target_free(NULL);
}

static void test_exec_failures(void)
{
	struct target_result res = {};
	_cleanup_free_ char *priv = xasprintf("%s/private", dir);
	_cleanup_free_ char *hidden = NULL, *expect = NULL;

	/* Executable bits but no valid format: execve fails with ENOEXEC in the child. */
	write_script("garbage", "this is not a program\n", 0755);
	CHECK(run_workload(make_workload("garbage", "nobody", NULL, 10), NULL, NULL, &res) == 0);
	CHECK(res.exec_failed && res.exit_status == 127);
	expect = xasprintf("exec %s/garbage: Exec format error", dir);
	CHECKF(res.error && strcmp(res.error, expect) == 0, "error %s", res.error);
	target_result_clear(&res);

	/* In a directory nobody may not search: refused before fork, naming the directory. */
	REQUIRE(mkdir(priv, 0700) == 0);
	write_script("private/ok.sh", "#!/bin/sh\nexit 0\n", 0755);
	hidden = xasprintf("%s/ok.sh", priv);
	{
		struct workload *w = make_workload(hidden, "nobody", NULL, 10);
		struct target_run *t = NULL;
		_cleanup_free_ char *err = NULL;

		CHECK(target_spawn(w, NULL, &t, &err) == -EACCES && !t);
		CHECKF(err && strstr(err, priv) && strstr(err, "not searchable"), "error %s",
		       err ?: "(none)");
		workload_free(w);
	}

	/* The same as root runs. */
	CHECK(run_workload(make_workload(hidden, "root", NULL, 10), NULL, NULL, &res) == 0);
	CHECKF(!res.exec_failed && res.exit_status == 0 && !res.error, "error %s", res.error);
	target_result_clear(&res);
}

static void test_child_setup(void)
{
	struct target_result res = {};
	char want[64];
	int leak, ncpu = get_nprocs();
	const char *cpu = ncpu > 1 ? "1" : "0";

	/* An fd the daemon leaked without O_CLOEXEC must not reach the victim. */
	leak = open("/dev/null", O_RDONLY);
	REQUIRE(leak >= 0);
	REQUIRE(dup2(leak, 50) == 50);
	close(leak);

	write_script("ident.sh",
		     "#!/bin/sh\n"
		     "echo \"uid $(id -u) gid $(id -g) groups $(id -G)\"\n"
		     "grep Cpus_allowed_list /proc/self/status\n"
		     "if [ -e /proc/self/fd/50 ]; then echo fd-leaked; else echo fd-clean; fi\n"
		     "if read x; then echo stdin-data; else echo stdin-eof; fi\n"
		     "echo \"cwd $(pwd) home $HOME notify ${NOTIFY_SOCKET:-unset}\"\n",
		     0755);
	setenv("NOTIFY_SOCKET", "/run/should-not-leak", 1);
	CHECK(run_workload(make_workload("ident.sh", "nobody", cpu, 10), NULL, NULL, &res) == 0);
	unsetenv("NOTIFY_SOCKET");
	close(50);
	REQUIRE(res.output_tail);
	CHECKF(strstr(res.output_tail, "uid 65534 gid 65534 groups 65534\n"), "output %s",
	       res.output_tail);
	snprintf(want, sizeof(want), "Cpus_allowed_list:\t%s\n", cpu);
	CHECKF(strstr(res.output_tail, want), "output %s", res.output_tail);
	CHECK(strstr(res.output_tail, "fd-clean"));
	CHECK(strstr(res.output_tail, "stdin-eof"));
	CHECKF(strstr(res.output_tail, "cwd / home /nonexistent notify unset"), "output %s",
	       res.output_tail);
	target_result_clear(&res);

	/* And as root. */
	CHECK(run_workload(make_workload("ident.sh", "root", "0", 10), NULL, NULL, &res) == 0);
	CHECKF(res.output_tail && strstr(res.output_tail, "uid 0 gid 0"), "output %s",
	       res.output_tail);
	CHECK(res.output_tail && strstr(res.output_tail, "Cpus_allowed_list:\t0\n"));
	target_result_clear(&res);
}

struct stopper {
	int calls;
	int stop_after;
};

static bool stop_after(void *ud)
{
	struct stopper *s = ud;

	return ++s->calls >= s->stop_after;
}

static void test_should_stop(void)
{
	struct target_result res = {};
	struct stopper s = {.stop_after = 10};

	write_script("long.sh", "#!/bin/sh\nsleep 100\n", 0755);
	CHECK(run_workload(make_workload("long.sh", "nobody", NULL, 60), stop_after, &s, &res) ==
	      0);
	CHECK(res.stopped && !res.timed_out && res.term_signal == SIGKILL);
	CHECK(s.calls >= 10);
	CHECKF(res.error && strcmp(res.error, "stopped") == 0, "error %s", res.error);
	CHECK(res.wall_ns < 60000000000ull);
	target_result_clear(&res);
}

static pid_t fork_sleeper(unsigned ms)
{
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
		_exit(0);
	}
	return pid;
}

static void *idle_thread(void *arg)
{
	pause();
	return arg;
}

static void test_observe(void)
{
	struct target_result res = {};
	struct stopper s = {.stop_after = 3};
	pid_t pid, tids[8];
	pthread_t th;
	char *err = NULL;
	size_t n = 0;
	int r;

	pid = fork_sleeper(5000);
	CHECK(target_pid_check(pid, &err) == 0);
	r = target_observe(pid, 200, NULL, NULL, &res);
	CHECKF(r == 0, "observe: %d", r);
	CHECK(res.wall_ns >= 200000000ull && !res.error);
	target_result_clear(&res);

	r = target_observe(pid, 10000, stop_after, &s, &res);
	CHECK(r == 0 && res.stopped && res.wall_ns < 10000000000ull);
	target_result_clear(&res);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	/* Exits 100 ms into a 3 s window. */
	pid = fork_sleeper(100);
	r = target_observe(pid, 3000, NULL, NULL, &res);
	CHECKF(r == -ESRCH, "observe of an exiting pid: %d", r);
	CHECK(res.error && strstr(res.error, "exited"));
	CHECK(res.wall_ns < 3000000000ull);
	target_result_clear(&res);
	/* A zombie is no target either. */
	CHECK(target_pid_check(pid, &err) == -ESRCH);
	free(err);
	err = NULL;
	waitpid(pid, NULL, 0);
	CHECK(target_pid_check(pid, &err) == -ESRCH);
	free(err);
	err = NULL;

	CHECK(target_pid_check(1, &err) == -EPERM);
	free(err);
	err = NULL;
	CHECK(target_pid_check(getpid(), &err) == -EPERM);
	CHECK(err && strstr(err, "argusd"));
	free(err);
	err = NULL;
	CHECK(target_pid_check(2, &err) == -EPERM); /* kthreadd */
	CHECKF(err && strstr(err, "kernel thread"), "error %s", err);
	free(err);
	err = NULL;
	CHECK(target_pid_check(-5, &err) == -ESRCH);
	free(err);
	err = NULL;

	/* Threads of this process: the main one and one more. */
	REQUIRE(pthread_create(&th, NULL, idle_thread, NULL) == 0);
	r = target_threads(getpid(), tids, ARRAY_SIZE(tids), &n);
	CHECK(r == 0 && n == 2);
	CHECK(n >= 1 && tids[0] == getpid());
	r = target_threads(getpid(), tids, 1, &n);
	CHECK(r == 0 && n == 1);
	CHECK(target_threads(999999999, tids, 8, &n) == -ESRCH);
	pthread_cancel(th);
	pthread_join(th, NULL);
}

/* A bundled definition run as argusd runs it: argv[0] resolved against the victims directory. */
static void test_bundled_victim(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");
	_cleanup_free_ char *defs = NULL, *victims = NULL, *err = NULL, *stage = NULL;
	struct workload_registry *reg = NULL;
	struct target_result res = {};
	struct target_run *t = NULL;
	struct workload *w = NULL;
	json_t *j;
	int r;

	if (!src || !build) {
		tap_skip("bundled_victim", "ARGUS_SOURCE_DIR/ARGUS_BUILD_DIR unset");
		return;
	}
	defs = xasprintf("%s/workloads", src);
	stage = stage_tmpdir();
	REQUIRE(stage);
	victims = xasprintf("%s/programs", stage);
	REQUIRE(workload_registry_load(defs, &reg) == 0);
	REQUIRE(workload_find(reg, "pf_anon_write"));
	/* The real definition, with a smaller amount of work. */
	j = workload_to_json(workload_find(reg, "pf_anon_write"));
	json_object_del(j, "source");
	{
		json_t *more = json_pack("[s,s,s,s]", "--mb", "8", "--rounds", "1");

		json_array_extend(json_object_get(j, "argv"), more);
		json_decref(more);
	}
	REQUIRE(workload_from_json(j, &w, NULL) == 0);
	json_decref(j);

	r = target_spawn(w, victims, &t, &err);
	CHECKF(r == 0, "spawn: %s", err ? err : "");
	if (r == 0) {
		CHECK(target_release(t) == 0);
		CHECK(target_wait(t, NULL, NULL, &res) == 0);
		CHECKF(res.exit_status == 0 && !res.error, "error %s", res.error);
		CHECKF(res.output_tail && strstr(res.output_tail, "pf_anon_write mb=8 rounds=1 "
								  "pages_touched=2048"),
		       "output %s", res.output_tail);
		target_result_clear(&res);
		target_free(t);
	}
	workload_free(w);
	workload_registry_free(reg);
	stage_remove(stage);
}

/*
 * The program check uses the user's own credentials: a 0700 directory on the
 * path (root's home, say) stops nobody though the file itself is 0755.
 */
static void test_check_program(void)
{
	char tmpl[] = "/tmp/argus-check-XXXXXX";
	_cleanup_free_ char *home = NULL, *prog = NULL, *shut = NULL, *err = NULL;
	struct workload *w;
	int r;

	REQUIRE(mkdtemp(tmpl) && chmod(tmpl, 0755) == 0);
	home = xasprintf("%s/home", tmpl);
	REQUIRE(mkdir(home, 0700) == 0);
	prog = xasprintf("%s/prog", home);
	REQUIRE(run_argv((char *const[]){"/bin/cp", "/bin/true", prog, NULL}) == 0);
	REQUIRE(chmod(prog, 0755) == 0);

	/* root passes; nobody is stopped at the 0700 directory, which the reason names */
	w = make_workload(prog, "root", NULL, 10);
	CHECK(target_check_program(w, NULL, &err) == 0);
	workload_free(w);
	w = make_workload(prog, "nobody", NULL, 10);
	r = target_check_program(w, NULL, &err);
	CHECKF(r == -EACCES, "r %d", r);
	CHECKF(err && strstr(err, home) && strstr(err, "not searchable by that user") &&
		       strstr(err, "mode 0700") && strstr(err, "\"user\""),
	       "reason: %s", err ?: "(none)");
	/* spawning refuses it early, with the same reason */
	{
		struct target_run *t = NULL;
		_cleanup_free_ char *err2 = NULL;

		CHECK(target_spawn(w, NULL, &t, &err2) == -EACCES && !t);
		CHECKF(err2 && strstr(err2, "not searchable"), "spawn: %s", err2 ?: "(none)");
	}
	free(TAKE_PTR(err));

	/* searchable now, but the file is not executable by others */
	REQUIRE(chmod(home, 0755) == 0 && chmod(prog, 0700) == 0);
	r = target_check_program(w, NULL, &err);
	CHECKF(r == -EACCES && err && strstr(err, "not executable by user nobody"), "r %d: %s",
	       r, err ?: "(none)");
	free(TAKE_PTR(err));
	REQUIRE(chmod(prog, 0755) == 0);
	CHECK(target_check_program(w, NULL, &err) == 0);
	workload_free(w);

	/* missing: the reason says to build or fix the path */
	shut = xasprintf("%s/missing", tmpl);
	w = make_workload(shut, "nobody", NULL, 10);
	r = target_check_program(w, NULL, &err);
	CHECKF(r == -ENOENT && err && strstr(err, "build or install it"), "r %d: %s", r,
	       err ?: "(none)");
	workload_free(w);
	stage_remove(tmpl);
}

static void *park(void *arg)
{
	int *fd = arg;
	char c;

	(void)!read(*fd, &c, 1);
	return NULL;
}

/*
 * Stepping aside: every thread leaves the target's CPUs while it runs and
 * gets its own mask back after; a target on every CPU leaves all in place.
 */
static void test_aside(void)
{
	cpu_set_t target, all, before, during, during_other;
	struct aside a;
	pthread_t th;
	pid_t other;
	int p[2], c;

	CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	if (CPU_COUNT(&all) < 2 || !CPU_ISSET(0, &all)) {
		tap_skip("aside", "needs CPU 0 and another CPU allowed");
		return;
	}
	REQUIRE(pipe(p) == 0);
	REQUIRE(pthread_create(&th, NULL, park, &p[0]) == 0);
	/* The parked thread's tid: the newest entry of /proc/self/task but ours. */
	other = 0;
	for (c = 0; c < 100 && !other; c++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		while (d && (e = readdir(d)))
			if (atoi(e->d_name) > 0 && atoi(e->d_name) != gettid())
				other = atoi(e->d_name);
		if (d)
			closedir(d);
	}
	REQUIRE(other > 0);

	CPU_ZERO(&target);
	CPU_SET(0, &target);
	CHECK(sched_getaffinity(0, sizeof(before), &before) == 0);
	CHECK(aside_enter(&target, &a) >= 2);
	CHECK(sched_getaffinity(0, sizeof(during), &during) == 0);
	CHECK(sched_getaffinity(other, sizeof(during_other), &during_other) == 0);
	CHECK(!CPU_ISSET(0, &during) && CPU_COUNT(&during) == CPU_COUNT(&before) - 1);
	CHECK(!CPU_ISSET(0, &during_other) && CPU_COUNT(&during_other) > 0);
	aside_leave(&a);
	CHECK(sched_getaffinity(0, sizeof(during), &during) == 0);
	CHECK(CPU_EQUAL(&during, &before));
	CHECK(sched_getaffinity(other, sizeof(during_other), &during_other) == 0);
	CHECK(CPU_ISSET(0, &during_other));

	/* A target on every allowed CPU: nowhere to go, nothing changes. */
	CHECK(aside_enter(&all, &a) == 0 && a.n == 0);
	CHECK(sched_getaffinity(0, sizeof(during), &during) == 0);
	CHECK(CPU_EQUAL(&during, &before));
	aside_leave(&a);

	REQUIRE(write(p[1], "x", 1) == 1);
	pthread_join(th, NULL);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	_cleanup_free_ char *cmd = NULL;

	if (geteuid() != 0) {
		tap_skip_all("test-target needs root (it runs children as nobody)");
	}
	REQUIRE(mkdtemp(dir));
	REQUIRE(chmod(dir, 0755) == 0);

	test_exit_status();
	test_timeout_kills_group();
	test_output_tail();
	test_spawn_errors();
	test_exec_failures();
	test_child_setup();
	test_should_stop();
	test_observe();
	test_bundled_victim();
	test_check_program();
	test_aside();

	cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return tap_done("test-target");
}
