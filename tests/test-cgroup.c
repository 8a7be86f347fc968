// SPDX-License-Identifier: MIT
/*
 * The cgroup file system and units: the path and unit name rules, the mount
 * table and /proc/PID/cgroup parsers on fixed text (Debian 12's pure
 * cgroup2, systemd's hybrid layout, v1 alone), then real cgroups made in the
 * hierarchy that tracks services: a prefork server (a parent and three
 * sleeping workers) spread over a cgroup and its child, listed by
 * cgroup_procs, placed by cgroup_of_pid, truncated at the caller's bound and
 * cut at the depth bound; a unit's cgroup found by unit_resolve on this
 * machine (by searching the hierarchy where systemd does not answer), and
 * over D-Bus from a stand-in for systemd on its private socket, in a mount
 * namespace of its own, a hung one included; cgroup ids against the
 * directories' inode numbers. What the test starts and makes is killed,
 * reaped and removed on every exit path.
 */
#include "daemon/cgroup.h"
#include "daemon/unit.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>

#define TRACK_MAX 64
#define WORKERS 3

/* What the test started (parents before their children) and made (parents first). */
static pid_t started[TRACK_MAX];
static size_t n_started;
static struct {
	char *dir;
	bool shared; /* another run of the test may have put its cgroups in it */
} made[TRACK_MAX];
static size_t n_made;
static pid_t test_pid; /* children inherit the atexit handler; only the test cleans up */

static void track_pid(pid_t pid)
{
	REQUIRE(n_started < TRACK_MAX);
	started[n_started++] = pid;
}

/* Forget pid, reaped by the test itself. */
static void untrack_pid(pid_t pid)
{
	size_t i;

	for (i = 0; i < n_started; i++)
		if (started[i] == pid) {
			memmove(started + i, started + i + 1,
				(n_started - i - 1) * sizeof(*started));
			n_started--;
			return;
		}
}

/* mkdir dir and remember to remove it; an existing shared one is left to whoever made it. */
static void make_cgroup(const char *dir, bool shared)
{
	if (mkdir(dir, 0755) < 0) {
		REQUIRE(shared && errno == EEXIST);
		return;
	}
	REQUIRE(n_made < TRACK_MAX);
	made[n_made].dir = xstrdup(dir);
	made[n_made].shared = shared;
	n_made++;
}

/*
 * Kill what the test started, by pid, reap it, then remove the cgroups it
 * made, children first. Parents are reaped first: a parent's exit hands its
 * killed workers to the test, the subreaper, which reaps them next.
 */
static void cleanup(void)
{
	size_t i;

	if (getpid() != test_pid)
		return;
	for (i = 0; i < n_started; i++)
		kill(started[i], SIGKILL);
	for (i = 0; i < n_started; i++)
		while (waitpid(started[i], NULL, 0) < 0 && errno == EINTR)
			;
	n_started = 0;
	/* workers a failed start left untracked died with their parent: reap what is dead */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	for (i = n_made; i > 0; i--) {
		const char *dir = made[i - 1].dir;
		int tries, r = 0;

		/* the last exit may still be leaving the cgroup */
		for (tries = 0; tries < 100; tries++) {
			r = rmdir(dir) < 0 ? -errno : 0;
			if (r != -EBUSY)
				break;
			usleep(10000);
		}
		if (r == -EBUSY && made[i - 1].shared)
			r = 0;
		CHECKF(r == 0 || r == -ENOENT, "cleanup: rmdir %s: %s", dir, strerror(-r));
		free(made[i - 1].dir);
	}
	n_made = 0;
}

static int move_to_cgroup(const char *dir, pid_t pid)
{
	_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", dir);
	_cleanup_close_ int fd = open(procs, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%d\n", (int)pid) < 0)
		return -errno;
	return 0;
}

static void read_exactly(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		REQUIRE(n > 0);
		done += n;
	}
}

/* A child that sleeps until killed, and dies with the test. */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != test_pid)
			_exit(1);
		for (;;)
			pause();
	}
	track_pid(pid);
	return pid;
}

/*
 * A prefork server: a parent, moved into the cgroup at dir, that then forks
 * WORKERS workers (in dir too, by inheritance) which sleep. The workers'
 * pids into workers; returns the parent's.
 */
static pid_t start_server(const char *dir, pid_t workers[WORKERS])
{
	int go[2], report[2];
	pid_t parent;
	char c = 'x';
	int i;

	REQUIRE(pipe2(go, O_CLOEXEC) == 0 && pipe2(report, O_CLOEXEC) == 0);
	parent = fork();
	REQUIRE(parent >= 0);
	if (parent == 0) {
		pid_t self = getpid();

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != test_pid)
			_exit(1);
		close(go[1]);
		close(report[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < WORKERS; i++) {
			pid_t w = fork();

			if (w < 0)
				_exit(1);
			if (w == 0) {
				close(go[0]);
				close(report[1]);
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != self)
					_exit(1);
				for (;;)
					pause();
			}
			if (write(report[1], &w, sizeof(w)) != sizeof(w))
				_exit(1);
		}
		for (;;)
			pause();
	}
	track_pid(parent);
	close(go[0]);
	close(report[1]);
	REQUIRE(move_to_cgroup(dir, parent) == 0);
	REQUIRE(write(go[1], &c, 1) == 1);
	for (i = 0; i < WORKERS; i++) {
		read_exactly(report[0], &workers[i], sizeof(workers[i]));
		track_pid(workers[i]);
	}
	close(go[1]);
	close(report[0]);
	return parent;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static bool ascending_subset(const pid_t *got, size_t n, const pid_t *all, size_t n_all)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0 && got[i - 1] >= got[i])
			return false;
		if (!bsearch(&got[i], all, n_all, sizeof(*all), pid_cmp))
			return false;
	}
	return true;
}

static void test_path_valid(void)
{
	static const char *const good[] = {
	    "/",
	    "/argus/cache",
	    "/system.slice/redis-server.service",
	    "/system.slice/system-getty.slice/getty@tty1.service",
	    "/user.slice/user-1000.slice/user@1000.service/app.slice/a:b.scope",
	    "/system.slice/system-foo\\x2dbar.slice",
	    "/...",
	    "/.hidden/x..y",
	};
	static const char *const bad[] = {
	    "",	     "argus", "argus/cache",  "//",	 "/argus//cache", "/argus/",
	    "/.",    "/..",   "/a/./b",	      "/a/../b", "/a/..",	  "/a b",
	    "/a\nb", "/a\tb", "/caf\xc3\xa9", "/a$b",	 "/a*",		  "/a,b",
	    "/a\"b", "/a/b/", " /a",
	};
	char longest[CGROUP_PATH_MAX + 2];
	size_t i;

	tap_subtest("cgroup_path_valid");
	for (i = 0; i < ARRAY_SIZE(good); i++)
		CHECKF(cgroup_path_valid(good[i]), "%s", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECKF(!cgroup_path_valid(bad[i]), "\"%s\"", bad[i]);
	CHECK(!cgroup_path_valid(NULL));
	memset(longest, 'a', sizeof(longest));
	longest[0] = '/';
	longest[CGROUP_PATH_MAX] = 0;
	CHECK(cgroup_path_valid(longest)); /* 512 characters */
	longest[CGROUP_PATH_MAX] = 'a';
	longest[CGROUP_PATH_MAX + 1] = 0;
	CHECK(!cgroup_path_valid(longest)); /* 513 */
}

static void test_unit_name_valid(void)
{
	static const char *const good[] = {
	    "redis-server.service",	  "session-3.scope",   "getty@tty1.service", "init.scope",
	    "system-foo\\x2dbar.service", "Foo_Bar:1.service",
	};
	static const char *const bad[] = {
	    "",
	    "redis",
	    "redis.socket",
	    "system.slice",
	    "redis.service.d",
	    "a/b.service",
	    "../x.service",
	    "a b.service",
	    "redis.service\n",
	    "caf\xc3\xa9.service",
	    "redis$.service",
	    /* a suffix with no name before it (fuzz-validate found it accepted) */
	    ".service",
	    ".scope",
	};
	char name[UNIT_NAME_MAX + 2];
	size_t i;

	tap_subtest("unit_name_valid");
	for (i = 0; i < ARRAY_SIZE(good); i++)
		CHECKF(unit_name_valid(good[i]), "%s", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECKF(!unit_name_valid(bad[i]), "\"%s\"", bad[i]);
	CHECK(!unit_name_valid(NULL));
	memset(name, 'a', sizeof(name));
	strcpy(name + UNIT_NAME_MAX - strlen(".service"), ".service");
	CHECK(strlen(name) == UNIT_NAME_MAX && unit_name_valid(name));
	memset(name, 'a', sizeof(name));
	strcpy(name + UNIT_NAME_MAX + 1 - strlen(".service"), ".service");
	CHECK(strlen(name) == UNIT_NAME_MAX + 1 && !unit_name_valid(name));
}

/* cgroup_hierarchy_parse of table gives root and kind, or (root NULL) the error r. */
static void expect_hierarchy(const char *what, const char *table, bool mountinfo, const char *root,
			     const char *kind, int r)
{
	char *got = NULL;
	const char *got_kind = NULL;
	int rr = cgroup_hierarchy_parse(table, mountinfo, &got, &got_kind);

	CHECKF(rr == r, "%s: got %d, expected %d", what, rr, r);
	if (rr == 0 && r == 0) {
		CHECK_STREQ(got, root, what);
		CHECK_STREQ(got_kind, kind, what);
	}
	free(got);
}

static void test_hierarchy_parse(void)
{
	/* Debian 12: cgroup2 alone, at /sys/fs/cgroup */
	static const char debian12[] =
	    "22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	    "26 22 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 "
	    "cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	    "35 22 0:30 / /sys/fs/bpf rw,nosuid,nodev,noexec,relatime shared:12 - bpf bpf "
	    "rw,mode=700\n";
	/* systemd's hybrid layout: units live in name=systemd, not in unified */
	static const char hybrid[] =
	    "25 22 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:4 - tmpfs tmpfs "
	    "ro,mode=755\n"
	    "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - "
	    "cgroup2 cgroup2 rw,nsdelegate\n"
	    "27 25 0:25 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:6 - "
	    "cgroup cgroup rw,xattr,name=systemd\n"
	    "30 25 0:28 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:10 - "
	    "cgroup cgroup rw,memory\n";
	/* a machine without optional fields, the name=systemd hierarchy listed after the others */
	static const char no_optional[] =
	    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	static const char v1_controllers_only[] =
	    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	    "33 31 0:30 / /sys/fs/cgroup/x rw,relatime - cgroup cgroup rw,name=systemdx\n"
	    "34 31 0:31 / /sys/fs/cgroup/y rw,relatime - cgroup2 cgroup2 rw,name=systemd\n";
	static const char escaped[] =
	    "40 31 0:37 / /srv/c\\040g rw,relatime - cgroup cgroup rw,name=systemd\n";
	static const char hidden_v2[] =
	    "26 22 0:24 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw\n"
	    "27 26 0:25 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n";
	static const char v2_on_top[] = "27 22 0:25 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
					"28 27 0:24 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	static const char malformed[] = "26 22 0:24 / /sys/fs/cgroup rw - cgroup2\n"
					"26 22 0:24\n"
					"\n"
					"- - - - - - - - - -\n";
	static const char mounts_debian12[] =
	    "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
	    "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n";
	static const char mounts_hybrid[] =
	    "tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,mode=755 0 0\n"
	    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"
	    "cgroup /sys/fs/cgroup/systemd cgroup rw,nosuid,nodev,noexec,relatime,xattr,"
	    "name=systemd 0 0\n";
	char *root = NULL;
	const char *kind = NULL;

	tap_subtest("cgroup_hierarchy_parse");
	expect_hierarchy("debian12", debian12, true, "/sys/fs/cgroup", CGROUP_KIND_V2, 0);
	expect_hierarchy("hybrid", hybrid, true, "/sys/fs/cgroup/systemd", CGROUP_KIND_V1_SYSTEMD,
			 0);
	expect_hierarchy("no_optional", no_optional, true, "/sys/fs/cgroup/systemd",
			 CGROUP_KIND_V1_SYSTEMD, 0);
	expect_hierarchy("v1_controllers_only", v1_controllers_only, true, NULL, NULL, -ENOENT);
	expect_hierarchy("escaped", escaped, true, "/srv/c g", CGROUP_KIND_V1_SYSTEMD, 0);
	expect_hierarchy("hidden_v2", hidden_v2, true, NULL, NULL, -ENOENT);
	expect_hierarchy("v2_on_top", v2_on_top, true, "/sys/fs/cgroup", CGROUP_KIND_V2, 0);
	expect_hierarchy("malformed", malformed, true, NULL, NULL, -ENOENT);
	expect_hierarchy("empty", "", true, NULL, NULL, -ENOENT);
	expect_hierarchy("mounts_debian12", mounts_debian12, false, "/sys/fs/cgroup",
			 CGROUP_KIND_V2, 0);
	expect_hierarchy("mounts_hybrid", mounts_hybrid, false, "/sys/fs/cgroup/systemd",
			 CGROUP_KIND_V1_SYSTEMD, 0);
	/* a /proc/mounts line read as mountinfo is no mount */
	expect_hierarchy("mounts_as_mountinfo", mounts_debian12, true, NULL, NULL, -ENOENT);
	CHECK(cgroup_hierarchy_parse(NULL, true, &root, &kind) == -EINVAL);
	CHECK(root == NULL && kind == NULL);
}

static void expect_proc_cgroup(const char *what, const char *text, const char *kind,
			       const char *path, int r)
{
	char *got = NULL;
	int rr = cgroup_parse_proc_cgroup(text, kind, &got);

	CHECKF(rr == r, "%s: got %d, expected %d", what, rr, r);
	if (rr == 0 && r == 0)
		CHECK_STREQ(got, path, what);
	if (rr < 0)
		CHECKF(got == NULL, "%s: output written on failure", what);
	free(got);
}

static void test_proc_cgroup_parse(void)
{
	static const char v2[] = "0::/system.slice/redis-server.service\n";
	static const char hybrid[] = "12:memory:/system.slice/redis-server.service\n"
				     "2:cpu,cpuacct:/\n"
				     "1:name=systemd:/system.slice/redis-server.service\n"
				     "0::/system.slice/redis-server.service\n";
	static const char colon[] = "1:name=systemd:/system.slice/a:b.service\n0::/x:y\n";
	static const char deleted[] = "0::/argus/gone (deleted)\n";
	static const char lookalike[] = "1:name=systemdx:/x\n3::/y\n0:cpu:/z\n";

	tap_subtest("cgroup_parse_proc_cgroup");
	expect_proc_cgroup("v2", v2, CGROUP_KIND_V2, "/system.slice/redis-server.service", 0);
	expect_proc_cgroup("v2 as v1", v2, CGROUP_KIND_V1_SYSTEMD, NULL, -ENOENT);
	expect_proc_cgroup("hybrid v1", hybrid, CGROUP_KIND_V1_SYSTEMD,
			   "/system.slice/redis-server.service", 0);
	expect_proc_cgroup("hybrid v2", hybrid, CGROUP_KIND_V2,
			   "/system.slice/redis-server.service", 0);
	expect_proc_cgroup("colon v1", colon, CGROUP_KIND_V1_SYSTEMD, "/system.slice/a:b.service",
			   0);
	expect_proc_cgroup("colon v2", colon, CGROUP_KIND_V2, "/x:y", 0);
	expect_proc_cgroup("deleted", deleted, CGROUP_KIND_V2, NULL, -ESRCH);
	expect_proc_cgroup("lookalike v1", lookalike, CGROUP_KIND_V1_SYSTEMD, NULL, -ENOENT);
	expect_proc_cgroup("lookalike v2", lookalike, CGROUP_KIND_V2, NULL, -ENOENT);
	expect_proc_cgroup("kind", v2, "cgroup3", NULL, -EINVAL);
	expect_proc_cgroup("empty", "", CGROUP_KIND_V2, NULL, -ENOENT);
}

static void expect_cpu_stat(const char *what, const char *text, int r_expect, uint64_t ns)
{
	uint64_t got = 12345;
	int r = cgroup_parse_cpu_stat(text, &got);

	CHECKF(r == r_expect, "%s: %d, expected %d", what, r, r_expect);
	if (r == 0)
		CHECKF(got == ns, "%s: %llu ns, expected %llu", what, (unsigned long long)got,
		       (unsigned long long)ns);
	else
		CHECKF(got == 12345, "%s: written on failure", what);
}

static void test_cpu_stat_parse(void)
{
	tap_subtest("cgroup_parse_cpu_stat");
	expect_cpu_stat("plain", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n", 0,
			1500000);
	/* with the cpu controller on, more lines follow; a line only ending in the name is not it */
	expect_cpu_stat("later", "nr_periods 0\nxusage_usec 9\nusage_usec 42", 0, 42000);
	expect_cpu_stat("zero", "usage_usec 0\n", 0, 0);
	expect_cpu_stat("none", "user_usec 1000\n", -EIO, 0);
	expect_cpu_stat("empty", "", -EIO, 0);
	expect_cpu_stat("not a number", "usage_usec x\n", -EIO, 0);
	expect_cpu_stat("negative", "usage_usec -5\n", -EIO, 0);
	expect_cpu_stat("trailing", "usage_usec 5ms\n", -EIO, 0);
	expect_cpu_stat("overflow", "usage_usec 99999999999999999999\n", -EIO, 0);
	expect_cpu_stat("too large for ns", "usage_usec 18446744073709552\n", -EIO, 0);
	CHECK(cgroup_cpu_ns("/sys/fs/cgroup", CGROUP_KIND_V1_SYSTEMD, &(uint64_t){0}) ==
	      -EOPNOTSUPP);
}

/* The file system type that kind names. */
static unsigned long magic_of_kind(const char *kind)
{
	return strcmp(kind, CGROUP_KIND_V2) == 0 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC;
}

static void test_dir_and_pid(void)
{
	_cleanup_free_ char *root = NULL, *dir = NULL, *sub = NULL, *expected = NULL;
	_cleanup_free_ char *self = NULL, *text = NULL, *parsed = NULL;
	const char *kind = NULL, *dir_kind = NULL;
	struct statfs sfs;
	char *out = NULL;
	pid_t dead;

	tap_subtest("cgroup_dir");
	REQUIRE(cgroup_hierarchy(&root, &kind) == 0);
	REQUIRE(statfs(root, &sfs) == 0);
	CHECK_EQ((unsigned long)sfs.f_type, magic_of_kind(kind), "file system type of the root");
	CHECK(cgroup_dir("/", &dir, &dir_kind) == 0);
	CHECK_STREQ(dir, root, "cgroup_dir(\"/\")");
	CHECK_STREQ(dir_kind, kind, "kind");
	CHECK(cgroup_dir("/argus/cache", &sub, NULL) == 0);
	expected = xasprintf("%s/argus/cache", root);
	CHECK_STREQ(sub, expected, "cgroup_dir(\"/argus/cache\")");
	CHECK(cgroup_dir("argus", &out, NULL) == -EINVAL && out == NULL);
	CHECK(cgroup_dir("/argus/", &out, NULL) == -EINVAL && out == NULL);
	CHECK(cgroup_dir("/../etc", &out, NULL) == -EINVAL && out == NULL);
	CHECK(cgroup_dir(NULL, &out, NULL) == -EINVAL && out == NULL);

	tap_subtest("cgroup_of_pid");
	CHECK(cgroup_of_pid(getpid(), &self) == 0);
	REQUIRE(read_file_bounded("/proc/self/cgroup", 65536, &text, NULL) == 0);
	CHECK(cgroup_parse_proc_cgroup(text, kind, &parsed) == 0);
	CHECK_STREQ(self, parsed, "cgroup_of_pid(self)");
	CHECK(self && cgroup_path_valid(self));
	CHECK(cgroup_of_pid(0, &out) == -EINVAL && out == NULL);
	CHECK(cgroup_of_pid(-1, &out) == -EINVAL && out == NULL);
	dead = fork();
	REQUIRE(dead >= 0);
	if (dead == 0)
		_exit(0);
	REQUIRE(waitpid(dead, NULL, 0) == dead);
	CHECK_EQ(cgroup_of_pid(dead, &out), -ESRCH, "cgroup_of_pid(reaped child)");
	CHECK(out == NULL);
}

static bool has_pid(const pid_t *pids, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static void test_real_cgroups(void)
{
	_cleanup_free_ char *root = NULL, *test = NULL, *test_dir = NULL, *child = NULL;
	_cleanup_free_ char *child_dir = NULL, *path = NULL, *deep = NULL, *deep1 = NULL;
	_cleanup_free_ char *missing = NULL, *file = NULL;
	_cleanup_free_ pid_t *everyone = NULL;
	pid_t workers[WORKERS], all[WORKERS + 1], got[16], parent;
	bool truncated = false;
	const char *kind = NULL;
	struct stat st;
	uint64_t id = 0;
	size_t n = 0, i, max;
	int r;

	tap_subtest("cgroup_procs");
	REQUIRE(cgroup_dir("/", &root, &kind) == 0);
	test = xasprintf("/argus-test-cgroup-%d", (int)getpid());
	child = xasprintf("%s/child", test);
	REQUIRE(cgroup_dir(test, &test_dir, NULL) == 0);
	REQUIRE(cgroup_dir(child, &child_dir, NULL) == 0);
	make_cgroup(test_dir, false);
	make_cgroup(child_dir, false);
	parent = start_server(test_dir, workers);
	REQUIRE(move_to_cgroup(child_dir, workers[0]) == 0);
	all[0] = parent;
	memcpy(all + 1, workers, sizeof(workers));
	qsort(all, ARRAY_SIZE(all), sizeof(*all), pid_cmp);

	CHECK(cgroup_procs(test_dir, got, ARRAY_SIZE(got), &n, &truncated) == 0);
	CHECK_EQ(n, ARRAY_SIZE(all), "processes of the server, the child cgroup's included");
	CHECK(!truncated);
	for (i = 0; i < n && i < ARRAY_SIZE(all); i++)
		CHECK_EQ(got[i], all[i], "pid (ascending)");
	CHECK(cgroup_procs(child_dir, got, ARRAY_SIZE(got), &n, &truncated) == 0);
	CHECK_EQ(n, 1, "processes of the child cgroup");
	CHECK_EQ(got[0], workers[0], "the moved worker");
	CHECK(!truncated);

	/* the whole hierarchy holds the test and the server */
	everyone = malloc(65536 * sizeof(*everyone));
	REQUIRE(everyone);
	CHECK(cgroup_procs(root, everyone, 65536, &n, &truncated) == 0);
	CHECK(ascending_subset(everyone, n, everyone, n));
	if (!truncated) {
		CHECKF(has_pid(everyone, n, getpid()), "the test is in %s", root);
		for (i = 0; i < ARRAY_SIZE(all); i++)
			CHECK(has_pid(everyone, n, all[i]));
	}

	tap_subtest("cgroup_of_pid_real");
	CHECK(cgroup_of_pid(workers[0], &path) == 0);
	CHECK_STREQ(path, child, "cgroup of the moved worker");
	free(path);
	path = NULL;
	CHECK(cgroup_of_pid(workers[1], &path) == 0);
	CHECK_STREQ(path, test, "cgroup of a worker");
	free(path);
	path = NULL;
	CHECK(cgroup_of_pid(parent, &path) == 0);
	CHECK_STREQ(path, test, "cgroup of the parent");

	tap_subtest("cgroup_procs_bounds");
	for (max = 0; max <= ARRAY_SIZE(all) + 1; max++) {
		pid_t out[ARRAY_SIZE(all) + 2];

		for (i = 0; i < ARRAY_SIZE(out); i++)
			out[i] = -7;
		n = 99;
		r = cgroup_procs(test_dir, max ? out : NULL, max, &n, &truncated);
		CHECK_EQ(r, 0, "cgroup_procs with a bound");
		CHECK_EQ(n, max < ARRAY_SIZE(all) ? max : ARRAY_SIZE(all), "count at the bound");
		CHECK_EQ(truncated, max < ARRAY_SIZE(all), "truncated");
		CHECK(ascending_subset(out, n, all, ARRAY_SIZE(all)));
		CHECK_EQ(out[n], -7, "nothing written past the count");
	}
	missing = xasprintf("%s/missing", test_dir);
	file = xasprintf("%s/cgroup.procs", test_dir);
	n = 99;
	truncated = true;
	CHECK_EQ(cgroup_procs(missing, got, 4, &n, &truncated), -ENOENT, "a missing cgroup");
	CHECK_EQ(cgroup_procs(file, got, 4, &n, &truncated), -ENOENT, "a file");
	CHECK_EQ(cgroup_procs("/proc/self", got, 4, &n, &truncated), -ENOENT, "no cgroup");
	CHECK(n == 99 && truncated);
	CHECK_EQ(cgroup_procs(test_dir, NULL, 1, &n, NULL), -EINVAL, "no room");
	CHECK_EQ(cgroup_procs(test_dir, got, CGROUP_PROCS_PIDS_MAX + 1, &n, NULL), -EINVAL,
		 "max above the bound");
	CHECK(cgroup_procs(test_dir, got, ARRAY_SIZE(got), &n, NULL) == 0 && n == ARRAY_SIZE(all));

	tap_subtest("cgroup_procs_depth");
	/* a worker CGROUP_WALK_DEPTH_MAX + 1 levels below the test cgroup is past the walk */
	deep = xstrdup(test_dir);
	for (i = 1; i <= CGROUP_WALK_DEPTH_MAX + 1; i++) {
		char *d = xasprintf("%s/d", deep);

		free(deep);
		deep = d;
		make_cgroup(deep, false);
		if (i == 1)
			deep1 = xstrdup(deep);
	}
	REQUIRE(move_to_cgroup(deep, workers[1]) == 0);
	CHECK(cgroup_procs(test_dir, got, ARRAY_SIZE(got), &n, &truncated) == 0);
	CHECK_EQ(n, ARRAY_SIZE(all) - 1, "processes within the depth bound");
	CHECK(!has_pid(got, n, workers[1]));
	CHECK(cgroup_procs(deep1, got, ARRAY_SIZE(got), &n, &truncated) == 0);
	CHECK_EQ(n, 1, "processes CGROUP_WALK_DEPTH_MAX levels down");
	CHECK_EQ(got[0], workers[1], "the deep worker");

	tap_subtest("cgroup_id_hierarchy");
	r = cgroup_id(test_dir, kind, &id);
	if (strcmp(kind, CGROUP_KIND_V2) == 0) {
		REQUIRE(stat(test_dir, &st) == 0);
		CHECK_EQ(r, 0, "cgroup_id on cgroup2");
		CHECK_EQ(id, st.st_ino, "cgroup id is the inode number");
	} else {
		CHECK_EQ(r, -EOPNOTSUPP, "cgroup_id on cgroup v1");
	}

	cleanup();
	CHECKF(access(test_dir, F_OK) < 0 && errno == ENOENT, "%s removed", test_dir);
}

/* Whether systemd might answer over D-Bus here. */
static bool bus_possible(void)
{
	sd_bus *bus = NULL;

	if (access("/run/systemd/private", F_OK) == 0)
		return true;
	if (sd_bus_open_system(&bus) < 0)
		return false;
	sd_bus_flush_close_unref(bus);
	return true;
}

static void test_unit_resolve(void)
{
	_cleanup_free_ char *slice = NULL, *service = NULL, *empty = NULL, *name = NULL;
	_cleanup_free_ char *empty_name = NULL, *missing = NULL, *expected = NULL, *cg = NULL;
	_cleanup_free_ char *deep = NULL, *deep_name = NULL, *shallow_name = NULL;
	struct unit_info u = {0};
	bool bus = bus_possible();
	char *err = NULL;
	int r, i;
	pid_t pid;

	tap_subtest("unit_resolve");
	fprintf(stderr, "# systemd %s be reachable over D-Bus here\n", bus ? "may" : "cannot");
	name = xasprintf("argus-test-%d.service", (int)getpid());
	empty_name = xasprintf("argus-test-empty-%d.service", (int)getpid());
	missing = xasprintf("argus-test-missing-%d.service", (int)getpid());
	expected = xasprintf("/argus-test.slice/%s", name);
	REQUIRE(cgroup_dir("/argus-test.slice", &slice, NULL) == 0);
	service = xasprintf("%s/%s", slice, name);
	empty = xasprintf("%s/%s", slice, empty_name);
	make_cgroup(slice, true);
	make_cgroup(service, false);
	make_cgroup(empty, false);
	pid = start_sleeper();
	REQUIRE(move_to_cgroup(service, pid) == 0);

	r = unit_resolve(name, &u, &err);
	if (!bus) {
		CHECKF(r == 0, "unit_resolve(%s): %d %s", name, r, err ? err : "");
		CHECK_STREQ(u.via, UNIT_VIA_CGROUPFS, "via");
		CHECK_STREQ(u.cgroup, expected, "cgroup");
		CHECK_EQ(u.main_pid, 0, "main_pid");
		CHECK(u.active_state == NULL);
	} else {
		/* systemd answers for the units it loaded only */
		CHECKF((r == 0 && u.via && strcmp(u.via, UNIT_VIA_CGROUPFS) == 0 && u.cgroup &&
			strcmp(u.cgroup, expected) == 0) ||
			   (r == -ENOENT && err && strstr(err, "not loaded")),
		       "unit_resolve(%s): %d %s", name, r, err ? err : "");
	}
	if (r == 0) {
		CHECK(err == NULL);
		CHECK(cgroup_of_pid(pid, &cg) == 0);
		CHECK_STREQ(cg, u.cgroup, "the process is in the cgroup found");
	}
	unit_info_clear(&u);
	free(err);
	err = NULL;

	/* a cgroup that holds no process is a unit that is not running */
	r = unit_resolve(empty_name, &u, &err);
	if (!bus) {
		CHECK_EQ(r, -ESRCH, "unit_resolve(empty cgroup)");
		CHECKF(err && strstr(err, "not running") && strstr(err, empty_name), "%s",
		       err ? err : "(no message)");
	} else {
		CHECK(r == -ESRCH || r == -ENOENT);
	}
	CHECK(u.cgroup == NULL && u.via == NULL);
	free(err);
	err = NULL;

	/* a unit that exists nowhere */
	r = unit_resolve(missing, &u, &err);
	CHECK_EQ(r, -ENOENT, "unit_resolve(missing unit)");
	CHECKF(err && strstr(err, missing), "%s", err ? err : "(no message)");
	if (!bus)
		CHECKF(err && strstr(err, "no cgroup named"), "%s", err ? err : "(no message)");
	CHECK(u.cgroup == NULL);
	free(err);
	err = NULL;

	/* the search goes UNIT_SEARCH_DEPTH_MAX levels deep, no deeper */
	shallow_name = xasprintf("argus-test-d6-%d.service", (int)getpid());
	deep_name = xasprintf("argus-test-d7-%d.service", (int)getpid());
	deep = xstrdup(slice);
	for (i = 2; i <= UNIT_SEARCH_DEPTH_MAX; i++) {
		char *d;

		if (i == UNIT_SEARCH_DEPTH_MAX) {
			d = xasprintf("%s/%s", deep, shallow_name);
			make_cgroup(d, false);
			free(d);
		}
		d = xasprintf("%s/l%d", deep, i);
		free(deep);
		deep = d;
		make_cgroup(deep, false);
	}
	{
		_cleanup_free_ char *d = xasprintf("%s/%s", deep, deep_name);

		make_cgroup(d, false);
	}
	if (!bus) {
		r = unit_resolve(shallow_name, &u, &err);
		CHECKF(r == -ESRCH, "found %d levels deep: %d %s", UNIT_SEARCH_DEPTH_MAX, r,
		       err ? err : "");
		free(err);
		err = NULL;
		r = unit_resolve(deep_name, &u, &err);
		CHECKF(r == -ENOENT, "not found %d levels deep: %d %s", UNIT_SEARCH_DEPTH_MAX + 1,
		       r, err ? err : "");
		free(err);
		err = NULL;
	}

	/* names that are no units */
	CHECK_EQ(unit_resolve("redis", &u, &err), -EINVAL, "unit_resolve(\"redis\")");
	CHECK(err != NULL);
	free(err);
	err = NULL;
	CHECK_EQ(unit_resolve("../x.service", &u, &err), -EINVAL, "unit_resolve(\"../x.service\")");
	free(err);
	err = NULL;
	CHECK_EQ(unit_resolve(NULL, &u, &err), -EINVAL, "unit_resolve(NULL)");
	free(err);
	err = NULL;
	CHECK_EQ(unit_resolve(name, NULL, &err), -EINVAL, "unit_resolve without ret");
	CHECK(err == NULL);
	CHECK(u.cgroup == NULL && u.via == NULL);

	/* where systemd answers, its own scope is where PID 1 is */
	if (bus) {
		_cleanup_free_ char *init = NULL;

		r = unit_resolve("init.scope", &u, &err);
		if (r == 0 && strcmp(u.via, UNIT_VIA_DBUS) == 0) {
			CHECK(cgroup_of_pid(1, &init) == 0);
			CHECK_STREQ(u.cgroup, init, "init.scope's cgroup is PID 1's");
			CHECK_STREQ(u.active_state, "active", "init.scope's ActiveState");
			CHECK_EQ(u.main_pid, 0, "a scope has no MainPID");
		} else {
			CHECKF(r == 0 || r == -ENOENT, "unit_resolve(init.scope): %d %s", r,
			       err ? err : "");
		}
		unit_info_clear(&u);
		free(err);
		err = NULL;
	}
	unit_info_clear(NULL);

	cleanup();
}

/*
 * A stand-in for systemd on its private socket: Manager.GetUnit and the
 * properties unit_resolve reads, for a fixed table of units. It refuses
 * calls that name a destination, as a peer-to-peer connection has no bus
 * names.
 */
static const struct fake_unit {
	const char *name, *object, *cgroup, *state;
	uint32_t main_pid;
} fake_units[] = {
    {"argus-fake.service", "/org/freedesktop/systemd1/unit/argus_2dfake_2eservice",
     "/system.slice/argus-fake.service", "active", 4242},
    {"argus-stopped.service", "/org/freedesktop/systemd1/unit/argus_2dstopped_2eservice", "",
     "inactive", 0},
    {"argus-fake.scope", "/org/freedesktop/systemd1/unit/argus_2dfake_2escope",
     "/user.slice/argus-fake.scope", "active", 0},
};

static const struct fake_unit *fake_unit_at(const char *object)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fake_units); i++)
		if (strcmp(fake_units[i].object, object) == 0)
			return &fake_units[i];
	return NULL;
}

static int fake_get_unit(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *name;
	size_t i;
	int r;

	if (sd_bus_message_get_destination(m))
		return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "a destination on p2p");
	r = sd_bus_message_read(m, "s", &name);
	if (r < 0)
		return r;
	for (i = 0; i < ARRAY_SIZE(fake_units); i++)
		if (strcmp(fake_units[i].name, name) == 0)
			return sd_bus_reply_method_return(m, "o", fake_units[i].object);
	return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit",
				 "Unit %s not loaded.", name);
}

static int fake_property(sd_bus *bus, const char *object, const char *interface,
			 const char *property, sd_bus_message *reply, void *userdata,
			 sd_bus_error *error)
{
	const struct fake_unit *u = userdata;

	if (strcmp(property, "ControlGroup") == 0)
		return sd_bus_message_append(reply, "s", u->cgroup);
	if (strcmp(property, "ActiveState") == 0)
		return sd_bus_message_append(reply, "s", u->state);
	return sd_bus_message_append(reply, "u", u->main_pid);
}

/* The unit object at object, if it has interface (Service for services, Scope for scopes). */
static int fake_find(sd_bus *bus, const char *object, const char *interface, void *userdata,
		     void **ret_found, sd_bus_error *error)
{
	const struct fake_unit *u = fake_unit_at(object);
	const char *suffix = strrchr(interface, '.');

	if (!u || (strcmp(suffix, ".Service") == 0 && !strstr(u->name, ".service")) ||
	    (strcmp(suffix, ".Scope") == 0 && !strstr(u->name, ".scope")))
		return 0;
	*ret_found = (void *)u;
	return 1;
}

static const sd_bus_vtable fake_manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("GetUnit", "s", "o", fake_get_unit, 0),
    SD_BUS_VTABLE_END,
};
static const sd_bus_vtable fake_unit_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("ActiveState", "s", fake_property, 0, 0),
    SD_BUS_VTABLE_END,
};
static const sd_bus_vtable fake_service_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("ControlGroup", "s", fake_property, 0, 0),
    SD_BUS_PROPERTY("MainPID", "u", fake_property, 0, 0),
    SD_BUS_VTABLE_END,
};
static const sd_bus_vtable fake_scope_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("ControlGroup", "s", fake_property, 0, 0),
    SD_BUS_VTABLE_END,
};

/* Serve the connections of listen_fd one after another, until killed. */
static void __attribute__((noreturn)) fake_systemd(int listen_fd)
{
	static const struct {
		const char *interface;
		const sd_bus_vtable *vtable;
	} units[] = {
	    {"org.freedesktop.systemd1.Unit", fake_unit_vtable},
	    {"org.freedesktop.systemd1.Service", fake_service_vtable},
	    {"org.freedesktop.systemd1.Scope", fake_scope_vtable},
	};
	sd_id128_t id = {{0x61, 0x72, 0x67, 0x75, 0x73}};

	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		sd_bus *bus = NULL;
		size_t i;
		int r;

		if (fd < 0)
			_exit(1);
		r = sd_bus_new(&bus);
		if (r >= 0)
			r = sd_bus_set_fd(bus, fd, fd);
		if (r >= 0)
			r = sd_bus_set_server(bus, 1, id);
		if (r >= 0)
			r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1",
						     "org.freedesktop.systemd1.Manager",
						     fake_manager_vtable, NULL);
		for (i = 0; r >= 0 && i < ARRAY_SIZE(units); i++)
			r = sd_bus_add_fallback_vtable(bus, NULL, "/org/freedesktop/systemd1/unit",
						       units[i].interface, units[i].vtable,
						       fake_find, NULL);
		if (r >= 0)
			r = sd_bus_start(bus);
		while (r >= 0) {
			r = sd_bus_process(bus, NULL);
			if (r == 0)
				r = sd_bus_wait(bus, UINT64_MAX);
		}
		sd_bus_flush_close_unref(bus);
	}
}

/* A socket listening at path. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	REQUIRE(fd >= 0 && strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	REQUIRE(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	REQUIRE(listen(fd, 16) == 0);
	return fd;
}

/* unit_resolve against the stand-in, in the mount namespace made for it. */
static void unit_dbus_checks(void)
{
	struct unit_info u = {0};
	char *err = NULL;
	pid_t server;
	int fd, r;

	fd = listen_at("/run/systemd/private");
	server = fork();
	REQUIRE(server >= 0);
	if (server == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fake_systemd(fd);
	}
	close(fd);

	r = unit_resolve("argus-fake.service", &u, &err);
	CHECKF(r == 0, "unit_resolve(argus-fake.service): %d %s", r, err ? err : "");
	CHECK_STREQ(u.via, UNIT_VIA_DBUS, "via");
	CHECK_STREQ(u.cgroup, "/system.slice/argus-fake.service", "ControlGroup");
	CHECK_EQ(u.main_pid, 4242, "MainPID");
	CHECK_STREQ(u.active_state, "active", "ActiveState");
	unit_info_clear(&u);
	free(err);
	err = NULL;

	r = unit_resolve("argus-fake.scope", &u, &err);
	CHECKF(r == 0, "unit_resolve(argus-fake.scope): %d %s", r, err ? err : "");
	CHECK_STREQ(u.cgroup, "/user.slice/argus-fake.scope", "a scope's ControlGroup");
	CHECK_EQ(u.main_pid, 0, "a scope has no MainPID");
	unit_info_clear(&u);
	free(err);
	err = NULL;

	r = unit_resolve("argus-stopped.service", &u, &err);
	CHECK_EQ(r, -ESRCH, "a loaded unit without a cgroup");
	CHECKF(err && strstr(err, "not running (ActiveState inactive)"), "%s",
	       err ? err : "(no message)");
	CHECK(u.cgroup == NULL);
	free(err);
	err = NULL;

	r = unit_resolve("argus-unknown.service", &u, &err);
	CHECK_EQ(r, -ENOENT, "a unit systemd has not loaded");
	CHECKF(err && strstr(err, "argus-unknown.service is not loaded"), "%s",
	       err ? err : "(no message)");
	free(err);
	err = NULL;

	kill(server, SIGKILL);
	REQUIRE(waitpid(server, NULL, 0) == server);

	/* a systemd that never answers: bounded, then the hierarchy is searched */
	REQUIRE(unlink("/run/systemd/private") == 0);
	fd = listen_at("/run/systemd/private");
	r = unit_resolve("argus-fake.service", &u, &err);
	CHECK_EQ(r, -ENOENT, "unit_resolve with a hung systemd");
	CHECKF(err && strstr(err, "no cgroup named argus-fake.service") &&
		   strstr(err, "/run/systemd/private: Connection timed out"),
	       "%s", err ? err : "(no message)");
	free(err);
	close(fd);
}

/*
 * unit_resolve over D-Bus, whatever this machine runs: in a child with a
 * mount namespace of its own, a tmpfs over /run hides the system bus and
 * systemd's socket, and the stand-in listens at /run/systemd/private. The
 * child's checks are added to the test's.
 */
static void test_unit_dbus(void)
{
	int counts[2] = {0, 0}, report[2], status;
	pid_t child;

	tap_subtest("unit_resolve_dbus");
	REQUIRE(pipe2(report, O_CLOEXEC) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		int checks = tap_checks, failures = tap_failures;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(report[0]);
		REQUIRE(unshare(CLONE_NEWNS) == 0);
		REQUIRE(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		REQUIRE(mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0);
		REQUIRE(mkdir("/run/systemd", 0755) == 0);
		unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
		unit_dbus_checks();
		counts[0] = tap_checks - checks;
		counts[1] = tap_failures - failures;
		REQUIRE(write(report[1], counts, sizeof(counts)) == sizeof(counts));
		_exit(0);
	}
	track_pid(child);
	close(report[1]);
	read_exactly(report[0], counts, sizeof(counts));
	close(report[0]);
	REQUIRE(waitpid(child, &status, 0) == child);
	untrack_pid(child);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's status %d", status);
	tap_checks += counts[0];
	tap_failures += counts[1];
	CHECK(counts[0] > 0);
}

/* The mount point of the first mount of fstype with option (NULL: any), from mountinfo. */
static char *find_mount(const char *fstype, const char *option)
{
	_cleanup_free_ char *text = NULL;
	char *rest, *line;

	REQUIRE(read_file_bounded("/proc/self/mountinfo", 4 << 20, &text, NULL) == 0);
	rest = text;
	while ((line = strsep(&rest, "\n"))) {
		char point[4096], type[256], source[256], opts[4096];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%255s %255s %4095s", type, source, opts) != 3)
			continue;
		if (strcmp(type, fstype) != 0)
			continue;
		if (option) {
			_cleanup_free_ char *list = xasprintf(",%s,", opts);
			_cleanup_free_ char *want = xasprintf(",%s,", option);

			if (!strstr(list, want))
				continue;
		}
		return xstrdup(point);
	}
	return NULL;
}

/* The ids of a cgroup and of those below it, its own first; bounded by max. */
static void test_subtree_ids(const char *dir)
{
	_cleanup_free_ char *a = xasprintf("%s/a", dir), *b = xasprintf("%s/a/b", dir);
	_cleanup_free_ char *c = xasprintf("%s/c", dir);
	uint64_t ids[8], want[4];
	size_t n = 99, i, j, found = 0;
	bool truncated = true;

	make_cgroup(a, false);
	make_cgroup(b, false);
	make_cgroup(c, false);
	REQUIRE(cgroup_id(dir, CGROUP_KIND_V2, &want[0]) == 0);
	REQUIRE(cgroup_id(a, CGROUP_KIND_V2, &want[1]) == 0);
	REQUIRE(cgroup_id(b, CGROUP_KIND_V2, &want[2]) == 0);
	REQUIRE(cgroup_id(c, CGROUP_KIND_V2, &want[3]) == 0);
	CHECK(cgroup_subtree_ids(dir, CGROUP_KIND_V2, ids, 8, &n, &truncated) == 0);
	CHECK_EQ(n, 4, "a cgroup and the three below it");
	CHECK(!truncated);
	CHECK(n > 0 && ids[0] == want[0]);
	for (i = 0; i < 4; i++)
		for (j = 0; j < n; j++)
			found += ids[j] == want[i];
	CHECK_EQ(found, 4, "every id once");
	CHECK(cgroup_subtree_ids(dir, CGROUP_KIND_V2, ids, 2, &n, &truncated) == 0);
	CHECK_EQ(n, 2, "bounded by max");
	CHECK(truncated);
	CHECK(cgroup_subtree_ids(b, CGROUP_KIND_V2, ids, 8, &n, NULL) == 0);
	CHECK(n == 1 && ids[0] == want[2]);
	CHECK_EQ(cgroup_subtree_ids(dir, CGROUP_KIND_V1_SYSTEMD, ids, 8, &n, NULL), -EOPNOTSUPP,
		 "not on v1");
}

/*
 * A cgroup2 cgroup's CPU time keeps what a process that has ended spent in
 * it: a child moved in, told to spend 200 ms of CPU, exits and is reaped.
 */
static void test_cpu_ns(const char *dir)
{
	_cleanup_free_ char *sub = xasprintf("%s/cpu", dir);
	uint64_t before = 0, after = 0;
	int go[2];
	pid_t child;
	char c;

	make_cgroup(sub, false);
	REQUIRE(pipe(go) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		struct timespec t0, t;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000000L);
		_exit(0);
	}
	track_pid(child);
	close(go[0]);
	REQUIRE(move_to_cgroup(sub, child) == 0);
	CHECK(cgroup_cpu_ns(sub, CGROUP_KIND_V2, &before) == 0);
	REQUIRE(write(go[1], "g", 1) == 1);
	close(go[1]);
	REQUIRE(waitpid(child, NULL, 0) == child);
	untrack_pid(child);
	CHECK(cgroup_cpu_ns(sub, CGROUP_KIND_V2, &after) == 0);
	CHECKF(after >= before + 190000000ull && after <= before + 400000000ull,
	       "a cgroup's CPU time after a process that spent 200 ms in it ended: %.1f ms",
	       (after - before) / 1e6);
	CHECK_EQ(cgroup_cpu_ns(sub, CGROUP_KIND_V1_SYSTEMD, &after), -EOPNOTSUPP, "not on v1");
	CHECK(cgroup_cpu_ns("/nonexistent-cgroup", CGROUP_KIND_V2, &after) == -ENOENT);
}

static void test_cgroup_id(void)
{
	_cleanup_free_ char *v2 = find_mount("cgroup2", NULL);
	_cleanup_free_ char *v1 = find_mount("cgroup", "name=systemd");
	struct stat st;
	uint64_t id;

	tap_subtest("cgroup_id");
	CHECK(v1 || v2);
	if (v2) {
		_cleanup_free_ char *dir =
		    xasprintf("%s/argus-test-cgroup-%d-id", v2, (int)getpid());
		_cleanup_free_ char *missing = xasprintf("%s/missing", dir);
		_cleanup_free_ char *file = xasprintf("%s/cgroup.procs", dir);

		fprintf(stderr, "# cgroup2 at %s\n", v2);
		make_cgroup(dir, false);
		REQUIRE(stat(dir, &st) == 0);
		CHECK(cgroup_id(dir, CGROUP_KIND_V2, &id) == 0);
		CHECK_EQ(id, st.st_ino, "id of a new cgroup2 cgroup");
		REQUIRE(stat(v2, &st) == 0);
		CHECK(cgroup_id(v2, CGROUP_KIND_V2, &id) == 0);
		CHECK_EQ(id, st.st_ino, "id of the cgroup2 root");
		id = 7;
		CHECK_EQ(cgroup_id(missing, CGROUP_KIND_V2, &id), -ENOENT, "a missing cgroup");
		CHECK_EQ(cgroup_id(file, CGROUP_KIND_V2, &id), -ENOTDIR, "a file");
		CHECK_EQ(cgroup_id(dir, CGROUP_KIND_V1_SYSTEMD, &id), -EOPNOTSUPP, "the v1 kind");
		CHECK_EQ(cgroup_id(dir, NULL, &id), -EINVAL, "no kind");
		CHECK_EQ(id, 7, "nothing written on failure");
		test_subtree_ids(dir);
		test_cpu_ns(dir);
	}
	if (v1) {
		fprintf(stderr, "# name=systemd at %s\n", v1);
		id = 7;
		CHECK_EQ(cgroup_id(v1, CGROUP_KIND_V1_SYSTEMD, &id), -EOPNOTSUPP, "a v1 cgroup");
		/* whatever kind the caller says, a v1 directory has no cgroup2 id */
		CHECK_EQ(cgroup_id(v1, CGROUP_KIND_V2, &id), -EOPNOTSUPP, "a v1 cgroup as cgroup2");
		CHECK_EQ(id, 7, "nothing written on failure");
	}
	cleanup();
}

int main(void)
{
	test_pid = getpid();
	test_path_valid();
	test_unit_name_valid();
	test_hierarchy_parse();
	test_proc_cgroup_parse();
	test_cpu_stat_parse();
	if (geteuid() != 0) {
		tap_skip("cgroups", "making cgroups and moving processes needs root");
		return tap_done("test-cgroup");
	}
	/* the workers of a killed server are handed to the test, which reaps them */
	REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	REQUIRE(atexit(cleanup) == 0);
	test_dir_and_pid();
	test_real_cgroups();
	test_unit_resolve();
	test_unit_dbus();
	test_cgroup_id();
	cleanup();
	return tap_done("test-cgroup");
}
