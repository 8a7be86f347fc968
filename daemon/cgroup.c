// SPDX-License-Identifier: MIT
/*
 * The cgroup file system: which mounted hierarchy tracks services, chosen
 * from the mount table (cgroup2 at /sys/fs/cgroup, else the name=systemd v1
 * hierarchy), the directory of a cgroup path in it, the cgroup of a process
 * from /proc/PID/cgroup, and the processes of a cgroup subtree, read from
 * each cgroup.procs on a bounded depth-first walk and returned sorted and
 * deduplicated: v1 lists may repeat a pid, and a process that migrates while
 * the tree is walked may be read twice. The pid set grows to twice the
 * caller's bound before it is compacted, so its memory stays bounded however
 * many cgroups repeat pids. The mount table and procfs parsers are pure and
 * tested on fixed text.
 */
#include "daemon/cgroup.h"
#include "daemon/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#define MOUNT_TABLE_MAX (4u << 20)  /* bytes of /proc/self/mountinfo (~30 000 mounts) */
#define MOUNT_FIELDS_MAX 32	    /* fields of one mount table line */
#define PROC_CGROUP_MAX (64u << 10) /* bytes of /proc/PID/cgroup */
#define CPU_STAT_MAX (16u << 10)    /* bytes of a cpu.stat */
#define SERVICES_MOUNT "/sys/fs/cgroup"

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static bool cgroup_char_valid(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == ':' || c == '@' || c == '\\' || c == '-';
}

bool cgroup_path_valid(const char *path)
{
	const char *p, *start;
	size_t len;

	if (!path || path[0] != '/')
		return false;
	len = strnlen(path, CGROUP_PATH_MAX + 1);
	if (len > CGROUP_PATH_MAX)
		return false;
	if (len == 1)
		return true;
	/* p is at a '/': its component runs to the next '/' or the end */
	for (p = path; *p;) {
		size_t n;

		start = ++p;
		while (*p && *p != '/') {
			if (!cgroup_char_valid(*p))
				return false;
			p++;
		}
		n = p - start;
		if (n == 0 || (n == 1 && start[0] == '.') ||
		    (n == 2 && start[0] == '.' && start[1] == '.'))
			return false;
	}
	return true;
}

/* Undo a mount table field's octal escapes ("\040" for a space), in place. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

/* Whether the comma-separated list opts holds opt. */
static bool has_option(const char *opts, const char *opt)
{
	size_t len = strlen(opt);
	const char *p = opts;

	while (*p) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == len && memcmp(p, opt, len) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

struct mount_entry {
	const char *point; /* unescaped */
	const char *fstype;
	const char *opts; /* the super block's options (mountinfo) or all of them (mounts) */
};

/*
 * One line of the mount table into m, its fields pointing into line (which
 * is modified); false when the line is not one. mountinfo: "ID PARENT
 * MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - TYPE SOURCE SUPEROPTS"; mounts:
 * "SOURCE POINT TYPE OPTS FREQ PASSNO".
 */
static bool parse_mount_line(char *line, bool mountinfo, struct mount_entry *m)
{
	char *fields[MOUNT_FIELDS_MAX], *tok;
	size_t n = 0, i;

	while (n < MOUNT_FIELDS_MAX && (tok = strsep(&line, " ")))
		if (*tok)
			fields[n++] = tok;
	if (!mountinfo) {
		if (n < 4)
			return false;
		unescape_octal(fields[1]);
		*m = (struct mount_entry){fields[1], fields[2], fields[3]};
		return true;
	}
	/* the optional fields end at "-", which three more fields follow */
	for (i = 6; i < n && !streq(fields[i], "-"); i++)
		;
	if (i + 3 >= n)
		return false;
	unescape_octal(fields[4]);
	*m = (struct mount_entry){fields[4], fields[i + 1], fields[i + 3]};
	return true;
}

int cgroup_hierarchy_parse(const char *table, bool mountinfo, char **ret_root,
			   const char **ret_kind)
{
	_cleanup_free_ char *copy = NULL, *v1 = NULL;
	bool v2_at_services_mount = false;
	char *rest, *line;

	if (!table || !ret_root || !ret_kind)
		return -EINVAL;
	copy = xstrdup(table);
	rest = copy;
	while ((line = strsep(&rest, "\n"))) {
		struct mount_entry m;

		if (!parse_mount_line(line, mountinfo, &m))
			continue;
		/* a later mount on the same point hides the earlier one */
		if (streq(m.point, SERVICES_MOUNT))
			v2_at_services_mount = streq(m.fstype, "cgroup2");
		if (!v1 && streq(m.fstype, "cgroup") && has_option(m.opts, "name=systemd"))
			v1 = xstrdup(m.point);
	}
	if (v2_at_services_mount) {
		*ret_root = xstrdup(SERVICES_MOUNT);
		*ret_kind = CGROUP_KIND_V2;
		return 0;
	}
	if (!v1)
		return -ENOENT;
	*ret_root = TAKE_PTR(v1);
	*ret_kind = CGROUP_KIND_V1_SYSTEMD;
	return 0;
}

int cgroup_hierarchy(char **ret_root, const char **ret_kind)
{
	_cleanup_free_ char *text = NULL;
	bool mountinfo = true;
	int r;

	r = read_file_bounded("/proc/self/mountinfo", MOUNT_TABLE_MAX, &text, NULL);
	if (r < 0) {
		mountinfo = false;
		r = read_file_bounded("/proc/mounts", MOUNT_TABLE_MAX, &text, NULL);
		if (r < 0)
			return r;
	}
	return cgroup_hierarchy_parse(text, mountinfo, ret_root, ret_kind);
}

int cgroup_dir(const char *path, char **ret_dir, const char **ret_kind)
{
	_cleanup_free_ char *root = NULL;
	const char *kind;
	int r;

	if (!cgroup_path_valid(path) || !ret_dir)
		return -EINVAL;
	r = cgroup_hierarchy(&root, &kind);
	if (r < 0)
		return r;
	if (streq(path, "/"))
		*ret_dir = TAKE_PTR(root);
	else
		*ret_dir = xasprintf("%s%s", streq(root, "/") ? "" : root, path);
	if (ret_kind)
		*ret_kind = kind;
	return 0;
}

int cgroup_parse_proc_cgroup(const char *text, const char *kind, char **ret_path)
{
	_cleanup_free_ char *copy = NULL;
	char *rest, *line;
	bool v2;

	if (!text || !kind || !ret_path)
		return -EINVAL;
	if (streq(kind, CGROUP_KIND_V2))
		v2 = true;
	else if (streq(kind, CGROUP_KIND_V1_SYSTEMD))
		v2 = false;
	else
		return -EINVAL;
	copy = xstrdup(text);
	rest = copy;
	/* "ID:CONTROLLERS:PATH"; the path may hold ':' itself (unit names do) */
	while ((line = strsep(&rest, "\n"))) {
		char *controllers, *path;

		controllers = strchr(line, ':');
		if (!controllers)
			continue;
		*controllers++ = 0;
		path = strchr(controllers, ':');
		if (!path)
			continue;
		*path++ = 0;
		if (v2 ? !(streq(line, "0") && !*controllers)
		       : !has_option(controllers, "name=systemd"))
			continue;
		if (ends_with(path, " (deleted)"))
			return -ESRCH;
		*ret_path = xstrdup(path);
		return 0;
	}
	return -ENOENT;
}

int cgroup_of_pid(pid_t pid, char **ret_path)
{
	_cleanup_free_ char *root = NULL, *text = NULL;
	char proc[64];
	const char *kind;
	int r;

	if (pid <= 0 || !ret_path)
		return -EINVAL;
	r = cgroup_hierarchy(&root, &kind);
	if (r < 0)
		return r;
	snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	r = read_file_bounded(proc, PROC_CGROUP_MAX, &text, NULL);
	if (r == -ENOENT)
		return -ESRCH;
	if (r < 0)
		return r;
	return cgroup_parse_proc_cgroup(text, kind, ret_path);
}

/* The pids a walk has collected: up to cap raw, compacted (sorted, unique) when full. */
struct pid_set {
	pid_t *pids;
	size_t n, cap, max;
	size_t dirs; /* cgroups below the first one walked so far */
	bool truncated;
};

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static void pid_set_compact(struct pid_set *s)
{
	size_t i, w = 0;

	if (s->n == 0)
		return;
	qsort(s->pids, s->n, sizeof(*s->pids), pid_cmp);
	for (i = 0; i < s->n; i++)
		if (w == 0 || s->pids[w - 1] != s->pids[i])
			s->pids[w++] = s->pids[i];
	s->n = w;
	if (s->n > s->max)
		s->truncated = true;
}

/* Add pid; false once the set holds more than max distinct pids (the walk stops). */
static bool pid_set_add(struct pid_set *s, pid_t pid)
{
	if (s->n == s->cap) {
		/* cap is 2 * max + 16: after compaction either truncated or room is left */
		pid_set_compact(s);
		if (s->truncated)
			return false;
	}
	s->pids[s->n++] = pid;
	return true;
}

/* One line of cgroup.procs: a pid in decimal, nothing else. */
static bool parse_pid(const char *s, pid_t *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT32_MAX)
		return false;
	*ret = (pid_t)v;
	return true;
}

/* Whether entry de of d is a subdirectory (not "." or ".."). */
static bool is_subdir(DIR *d, const struct dirent *de)
{
	struct stat st;

	if (streq(de->d_name, ".") || streq(de->d_name, ".."))
		return false;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Call fn(ctx, sub, depth + 1) for each cgroup sub directly below dir, until
 * *truncated is set. *dirs counts the cgroups walked; past
 * CGROUP_WALK_DIRS_MAX it sets *truncated. A cgroup that fn finds gone
 * (-ENOENT, -ENODEV: removed since readdir) or threaded (-EOPNOTSUPP: its
 * processes are listed in its domain) is skipped; another error of fn ends
 * the walk with it.
 */
static int walk_below(const char *dir, unsigned depth, size_t *dirs, bool *truncated,
		      int (*fn)(void *ctx, const char *sub, unsigned depth), void *ctx)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	int r;

	if (!d)
		return -errno;
	while (!*truncated) {
		_cleanup_free_ char *sub = NULL;
		struct dirent *de;

		errno = 0;
		de = readdir(d);
		if (!de)
			return -errno;
		if (!is_subdir(d, de))
			continue;
		if (++*dirs > CGROUP_WALK_DIRS_MAX) {
			*truncated = true;
			break;
		}
		sub = xasprintf("%s/%s", dir, de->d_name);
		r = fn(ctx, sub, depth + 1);
		if (r < 0 && r != -ENOENT && r != -ENODEV && r != -EOPNOTSUPP)
			return r;
	}
	return 0;
}

static int walk(struct pid_set *s, const char *dir, unsigned depth);

static int walk_pids_below(void *ctx, const char *sub, unsigned depth)
{
	return walk(ctx, sub, depth);
}

/*
 * Add the processes of the cgroup at dir, depth levels below the first, and
 * of those below it. A negative errno when dir's cgroup.procs or the
 * directory cannot be read (-ENOENT or -ENODEV when it vanished,
 * -EOPNOTSUPP when it is threaded); bounds reached set s->truncated and
 * return 0.
 */
static int walk(struct pid_set *s, const char *dir, unsigned depth)
{
	_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", dir);
	_cleanup_free_ char *text = NULL;
	char *rest, *line;
	int r;

	r = read_file_bounded(procs, CGROUP_PROCS_FILE_MAX, &text, NULL);
	if (r == -EFBIG) {
		s->truncated = true;
		return 0;
	}
	if (r < 0)
		return r;
	rest = text;
	while ((line = strsep(&rest, "\n"))) {
		pid_t pid;

		if (!parse_pid(line, &pid))
			continue;
		if (!pid_set_add(s, pid))
			return 0;
	}
	if (depth >= CGROUP_WALK_DEPTH_MAX)
		return 0;
	return walk_below(dir, depth, &s->dirs, &s->truncated, walk_pids_below, s);
}

int cgroup_procs(const char *dir, pid_t *ret, size_t max, size_t *ret_n, bool *ret_truncated)
{
	_cleanup_free_ pid_t *pids = NULL;
	struct pid_set s = {.max = max};
	int r;

	if (!dir || !ret_n || (max > 0 && !ret) || max > CGROUP_PROCS_PIDS_MAX)
		return -EINVAL;
	s.cap = 2 * max + 16;
	pids = malloc(s.cap * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	s.pids = pids;
	r = walk(&s, dir, 0);
	if (r == -ENODEV || r == -ENOTDIR)
		r = -ENOENT;
	if (r < 0)
		return r;
	pid_set_compact(&s);
	if (s.n > max)
		s.n = max;
	if (s.n)
		memcpy(ret, s.pids, s.n * sizeof(*s.pids));
	*ret_n = s.n;
	if (ret_truncated)
		*ret_truncated = s.truncated;
	return 0;
}

int cgroup_id(const char *dir, const char *kind, uint64_t *ret)
{
	_cleanup_close_ int fd = -1;
	struct statfs sfs;
	struct stat st;

	if (!dir || !kind || !ret)
		return -EINVAL;
	if (!streq(kind, CGROUP_KIND_V2))
		return -EOPNOTSUPP;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0)
		return -errno;
	if ((unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EOPNOTSUPP;
	/* kernfs numbers a cgroup's directory with the cgroup's 64-bit id */
	*ret = (uint64_t)st.st_ino;
	return 0;
}

int cgroup_parse_cpu_stat(const char *text, uint64_t *ret_ns)
{
	unsigned long long usec;
	const char *p = text;
	char *end;

	if (!text || !ret_ns)
		return -EINVAL;
	/* the line that starts with the name, not one that ends in it */
	while (p && strncmp(p, "usage_usec ", 11) != 0) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || p[11] < '0' || p[11] > '9')
		return -EIO;
	errno = 0;
	usec = strtoull(p + 11, &end, 10);
	if (errno || (*end != '\n' && *end != '\0') || usec > UINT64_MAX / 1000)
		return -EIO;
	*ret_ns = (uint64_t)usec * 1000;
	return 0;
}

int cgroup_cpu_ns(const char *dir, const char *kind, uint64_t *ret_ns)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	int r;

	if (!dir || !kind || !ret_ns)
		return -EINVAL;
	if (!streq(kind, CGROUP_KIND_V2))
		return -EOPNOTSUPP;
	path = xasprintf("%s/cpu.stat", dir);
	r = read_file_bounded(path, CPU_STAT_MAX, &text, NULL);
	if (r < 0)
		return r;
	return cgroup_parse_cpu_stat(text, ret_ns);
}

struct id_walk {
	const char *kind;
	uint64_t *ids;
	size_t n, max, dirs;
	bool truncated;
};

/* Add the id of the cgroup at dir, depth levels below the first, and of those below it. */
static int walk_ids(void *ctx, const char *dir, unsigned depth)
{
	struct id_walk *w = ctx;
	uint64_t id;
	int r;

	r = cgroup_id(dir, w->kind, &id);
	if (r < 0)
		return r;
	if (w->n == w->max) {
		w->truncated = true;
		return 0;
	}
	w->ids[w->n++] = id;
	if (depth >= CGROUP_WALK_DEPTH_MAX)
		return 0;
	return walk_below(dir, depth, &w->dirs, &w->truncated, walk_ids, w);
}

int cgroup_subtree_ids(const char *dir, const char *kind, uint64_t *ret, size_t max,
		       size_t *ret_n, bool *ret_truncated)
{
	struct id_walk w = {.kind = kind, .ids = ret, .max = max};
	int r;

	if (!dir || !kind || !ret_n || (max > 0 && !ret))
		return -EINVAL;
	r = walk_ids(&w, dir, 0);
	if (r < 0)
		return r;
	*ret_n = w.n;
	if (ret_truncated)
		*ret_truncated = w.truncated;
	return 0;
}
