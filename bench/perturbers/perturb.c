// SPDX-License-Identifier: MIT
/*
 * The perturber contract: settings recorded before they change, restored on
 * every way out.
 *
 * The restore file /run/argus-perturbers/<name>.restore holds
 *   pid <pid>
 *   set <path>\t<original value>
 *   unlink <path>
 * and is rewritten (atomically) before each change. A clean exit or a
 * caught signal restores from memory; a SIGKILL leaves the file, which the
 * next start of the same perturber (or --restore-only) applies. The crash
 * path runs in a signal handler, so it only uses open/write/close/unlink on
 * buffers prepared in advance.
 */
#include "bench/common.h"

#include <ctype.h>
#include <pthread.h>

volatile sig_atomic_t perturb_stop;

struct saved_setting {
	char path[PATH_MAX];
	char value[PERTURB_VALUE_MAX];
};

static const char *perturb_name = "perturber";
static char restore_path[PATH_MAX];
static struct saved_setting saved[PERTURB_SETTINGS_MAX];
static volatile sig_atomic_t n_saved;
static char tracked[PERTURB_SETTINGS_MAX][PATH_MAX];
static volatile sig_atomic_t n_tracked;
static volatile sig_atomic_t restoring;

static int write_all(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		s += n;
		len -= n;
	}
	return 0;
}

/* Async-signal-safe: used by the crash handler too. */
static int write_setting(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = write_all(fd, value, strlen(value));
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

/* Async-signal-safe. */
static void restore_all(void)
{
	int i;

	if (restoring)
		return;
	restoring = 1;
	for (i = n_saved - 1; i >= 0; i--)
		(void)write_setting(saved[i].path, saved[i].value);
	for (i = n_tracked - 1; i >= 0; i--)
		(void)unlink(tracked[i]);
	if (restore_path[0])
		(void)unlink(restore_path);
	n_saved = 0;
	n_tracked = 0;
	restoring = 0;
}

static void on_stop(int sig)
{
	(void)sig;
	perturb_stop = 1;
}

static void on_crash(int sig)
{
	restore_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Rewrite the restore file from what is recorded now; atomically. */
static int save_restore_file(void)
{
	char tmp[PATH_MAX + 16];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", restore_path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "pid %d\n", (int)getpid());
	for (i = 0; i < n_saved; i++)
		fprintf(f, "set %s\t%s\n", saved[i].path, saved[i].value);
	for (i = 0; i < n_tracked; i++)
		fprintf(f, "unlink %s\n", tracked[i]);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0) {
		fclose(f);
		unlink(tmp);
		return -EIO;
	}
	if (fclose(f) != 0 || rename(tmp, restore_path) < 0) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

int perturb_read_setting(const char *path, char *buf, size_t len)
{
	char text[512], *ob, *cb, *s, *e;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	text[n] = 0;
	ob = strchr(text, '[');
	cb = ob ? strchr(ob, ']') : NULL;
	if (ob && cb) {
		s = ob + 1;
		e = cb;
	} else {
		for (s = text; isspace((unsigned char)*s); s++)
			;
		for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
			;
	}
	if ((size_t)(e - s) >= len || e == s)
		return -EINVAL;
	memcpy(buf, s, e - s);
	buf[e - s] = 0;
	return 0;
}

int perturb_poke(const char *path, const char *value)
{
	return write_setting(path, value);
}

int perturb_set(const char *path, const char *value)
{
	struct saved_setting *s;
	int r, i;

	if (n_saved >= PERTURB_SETTINGS_MAX || strlen(path) >= PATH_MAX)
		return -E2BIG;
	/* Only the first change of a path records the value to return to. */
	for (i = 0; i < n_saved; i++)
		if (strcmp(saved[i].path, path) == 0)
			return write_setting(path, value);
	s = &saved[n_saved];
	r = perturb_read_setting(path, s->value, sizeof(s->value));
	if (r < 0)
		return r;
	snprintf(s->path, sizeof(s->path), "%s", path);
	n_saved++;
	r = save_restore_file();
	if (r < 0) {
		n_saved--;
		return r;
	}
	r = write_setting(path, value);
	if (r < 0)
		return r;
	fprintf(stderr, "%s: %s: %s -> %s\n", perturb_name, path, s->value, value);
	return 0;
}

int perturb_track_file(const char *path)
{
	int r;

	if (n_tracked >= PERTURB_SETTINGS_MAX || strlen(path) >= PATH_MAX)
		return -E2BIG;
	snprintf(tracked[n_tracked], PATH_MAX, "%s", path);
	n_tracked++;
	r = save_restore_file();
	if (r < 0)
		n_tracked--;
	return r;
}

/* Whether pid is a live process whose command is name (comm is cut to 15 bytes). */
static bool instance_alive(pid_t pid, const char *name)
{
	char path[64], comm[64] = "";
	ssize_t n;
	int fd;

	if (pid <= 0 || pid == getpid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return false;
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
	return strncmp(comm, name, 15) == 0;
}

/* Apply a restore file left by an instance that is gone. */
static void apply_stale(void)
{
	char line[PATH_MAX + PERTURB_VALUE_MAX + 16];
	struct saved_setting st[PERTURB_SETTINGS_MAX];
	char files[PERTURB_SETTINGS_MAX][PATH_MAX];
	int n = 0, n_files = 0, i;
	long pid = 0;
	FILE *f;

	f = fopen(restore_path, "re");
	if (!f) {
		if (errno != ENOENT)
			bench_die(perturb_name, "%s: %s", restore_path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab;

		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "pid ", 4) == 0)
			pid = strtol(line + 4, NULL, 10);
		else if (strncmp(line, "set ", 4) == 0 && (tab = strchr(line + 4, '\t')) &&
			 n < PERTURB_SETTINGS_MAX) {
			*tab = 0;
			/* Lines too long to be ours are not applied. */
			if ((size_t)snprintf(st[n].path, sizeof(st[n].path), "%s", line + 4) <
				sizeof(st[n].path) &&
			    (size_t)snprintf(st[n].value, sizeof(st[n].value), "%s", tab + 1) <
				sizeof(st[n].value))
				n++;
		} else if (strncmp(line, "unlink /", 8) == 0 && n_files < PERTURB_SETTINGS_MAX) {
			if ((size_t)snprintf(files[n_files], PATH_MAX, "%s", line + 7) < PATH_MAX)
				n_files++;
		}
	}
	fclose(f);
	if (instance_alive((pid_t)pid, perturb_name))
		bench_die(perturb_name, "another %s (pid %ld) is running", perturb_name, pid);
	for (i = n - 1; i >= 0; i--) {
		int r = write_setting(st[i].path, st[i].value);

		if (r < 0)
			bench_die(perturb_name, "restoring %s to %s: %s", st[i].path, st[i].value,
				  strerror(-r));
		fprintf(stderr, "%s: restored %s to %s (left by pid %ld)\n", perturb_name,
			st[i].path, st[i].value, pid);
	}
	for (i = 0; i < n_files; i++)
		if (unlink(files[i]) == 0)
			fprintf(stderr, "%s: removed stale %s\n", perturb_name, files[i]);
	if (unlink(restore_path) < 0 && errno != ENOENT)
		bench_die(perturb_name, "removing %s: %s", restore_path, strerror(errno));
}

void perturb_begin(const char *name, bool restore_only, int cpu)
{
	static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
	struct sigaction sa = {};
	size_t i;

	perturb_name = name;
	if (mkdir(PERTURB_RESTORE_DIR, 0700) < 0 && errno != EEXIST)
		bench_die(name, "mkdir %s: %s", PERTURB_RESTORE_DIR, strerror(errno));
	snprintf(restore_path, sizeof(restore_path), "%s/%s.restore", PERTURB_RESTORE_DIR, name);

	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
		sigaction(crash_signals[i], &sa, NULL);

	/* Before anything else: the system may still carry a killed instance's changes. */
	apply_stale();
	if (restore_only)
		exit(0);

	if (cpu >= 0) {
		int r = bench_pin_cpu(cpu);

		if (r < 0)
			bench_die(name, "pinning to CPU %d: %s", cpu, strerror(-r));
	}
	/* An empty restore file marks this instance as alive. */
	if (save_restore_file() < 0)
		bench_die(name, "writing %s: %s", restore_path, strerror(errno));
}

void perturb_ready(void)
{
	fprintf(stderr, "%s: ready\n", perturb_name);
	fflush(stderr);
}

void perturb_wait(void)
{
	sigset_t block, old;

	/* Checked with the stop signals blocked, so that none is lost before sigsuspend. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	while (!perturb_stop)
		sigsuspend(&old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void perturb_block_signals(sigset_t *ret_old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, ret_old);
}

void perturb_end(void)
{
	int i;

	for (i = n_saved - 1; i >= 0; i--) {
		int r = write_setting(saved[i].path, saved[i].value);

		if (r < 0)
			fprintf(stderr, "%s: restoring %s to %s: %s\n", perturb_name, saved[i].path,
				saved[i].value, strerror(-r));
		else
			fprintf(stderr, "%s: restored %s to %s\n", perturb_name, saved[i].path,
				saved[i].value);
	}
	n_saved = 0;
	restore_all();
}

void perturb_parse(const char *name, const char *summary, int default_cpu,
		   const struct bench_flag *own, int argc, char **argv, struct perturb_opts *ret)
{
	struct bench_flag flags[BENCH_FLAGS_MAX + 1] = {};
	uint64_t cpu = 0;
	bool cpu_given = false, restore_only = false;
	char cpu_help[64];
	size_t n = 0;

	if (default_cpu >= 0)
		snprintf(cpu_help, sizeof(cpu_help), "pin to this CPU (default %d)", default_cpu);
	else
		snprintf(cpu_help, sizeof(cpu_help), "pin to this CPU (default: not pinned)");
	flags[n++] = (struct bench_flag){
	    "cpu", "N", cpu_help, &cpu, 0, CPU_SETSIZE - 1, .given = &cpu_given};
	flags[n++] = (struct bench_flag){
	    "restore-only", NULL, "apply a restore file left by a killed instance, then exit",
	    .on = &restore_only};
	for (; own && own[n - 2].name; n++) {
		if (n >= BENCH_FLAGS_MAX)
			bench_die(name, "too many flags");
		flags[n] = own[n - 2];
	}
	bench_parse_flags(name, summary, flags, argc, argv);
	*ret = (struct perturb_opts){
	    .cpu = cpu_given ? (int)cpu : default_cpu,
	    .restore_only = restore_only,
	};
}
