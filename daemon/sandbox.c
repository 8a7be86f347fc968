// SPDX-License-Identifier: MIT
/*
 * The sandbox of sandbox.h. The parent plans: it follows the program's
 * path and its libraries' (symlink by symlink, DT_NEEDED by DT_NEEDED) and
 * writes down every directory, symlink, file and bind the new root needs,
 * as host paths under root_dir. The child carries the plan out with system
 * calls only, then drops into the namespaces and the unprivileged identity
 * and executes the program.
 */
#include "daemon/sandbox.h"
#include "daemon/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <gelf.h>
#include <libelf.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#define SANDBOX_MAX_ELVES 128	     /* program and libraries */
#define SANDBOX_MAX_NEEDED 256	     /* DT_NEEDED entries of one object */
#define SANDBOX_CACHE_MAX (16u << 20) /* /etc/ld.so.cache */
#define SANDBOX_SPAWN_TIMEOUT_MS 10000 /* from fork to exec: system calls only */
/* The new root holds only mount points and symlinks. */
#define SANDBOX_TMPFS_OPTS "mode=0755,size=1m,nr_inodes=4096"

enum op_kind { OP_DIR, OP_LINK, OP_FILE, OP_BIND };

struct op {
	enum op_kind kind;
	char *inside;	     /* the path in the sandbox */
	char *at;	     /* root_dir + inside: where the child makes it */
	char *src;	     /* OP_LINK: the link's text; OP_FILE, OP_BIND: the host path */
	unsigned long flags; /* OP_FILE, OP_BIND: the remount flags */
};

struct sandbox {
	struct op *ops;
	size_t n_ops;
	const char **paths; /* ops[i].inside, for sandbox_paths */
	char *root_dir, *cwd;
	uid_t uid;
	gid_t gid;
	struct sandbox_limits limits;
	char *libpath; /* "LD_LIBRARY_PATH=..." */

	/* planning */
	char **elves; /* real paths of the ELF objects already scanned */
	size_t n_elves;
	unsigned char ident[2]; /* EI_CLASS, EI_DATA of the program */
	unsigned char machine[2];
	char *exe_rpath;
	char *cache;
	size_t cache_len;
};

void sandbox_free(struct sandbox *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_ops; i++) {
		free(s->ops[i].inside);
		free(s->ops[i].at);
		free(s->ops[i].src);
	}
	for (i = 0; i < s->n_elves; i++)
		free(s->elves[i]);
	free(s->ops);
	free(s->paths);
	free(s->elves);
	free(s->root_dir);
	free(s->cwd);
	free(s->libpath);
	free(s->exe_rpath);
	free(s->cache);
	free(s);
}

size_t sandbox_paths(const struct sandbox *s, const char *const **ret)
{
	*ret = s->paths;
	return s->n_ops;
}

/* ---- planning ---- */

static struct op *find_op(const struct sandbox *s, const char *inside)
{
	size_t i;

	for (i = 0; i < s->n_ops; i++)
		if (strcmp(s->ops[i].inside, inside) == 0)
			return &s->ops[i];
	return NULL;
}

/* Add an operation; one that is there already with the same meaning is fine. */
static int add_op(struct sandbox *s, enum op_kind kind, const char *inside, const char *src,
		  unsigned long flags, char **ret_err)
{
	struct op *o = find_op(s, inside);

	if (o) {
		if (o->kind == kind && ((!o->src && !src) || (o->src && src && !strcmp(o->src, src))))
			return 0;
		return set_error(ret_err, -EEXIST, "sandbox: %s is needed twice, as different things",
			    inside);
	}
	if (s->n_ops >= SANDBOX_MAX_OPS)
		return set_error(ret_err, -E2BIG, "sandbox: more than %d paths", SANDBOX_MAX_OPS);
	s->ops[s->n_ops] = (struct op){ .kind = kind,
					.inside = xstrdup(inside),
					.at = xasprintf("%s%s", s->root_dir, inside),
					.src = src ? xstrdup(src) : NULL,
					.flags = flags };
	s->paths[s->n_ops] = s->ops[s->n_ops].inside;
	s->n_ops++;
	return 0;
}

/*
 * Make path resolvable in the sandbox as it is on the host: every
 * directory on the way, every symlink (as a symlink, then its target), and
 * the regular file it ends at, bound read-only. *ret_real: the file's path
 * with no symlink left.
 */
static int expose(struct sandbox *s, const char *path, unsigned depth, char **ret_real,
		  char **ret_err)
{
	_cleanup_free_ char *cur = xstrdup("");
	const char *p = path;
	int r;

	if (depth > SANDBOX_MAX_DEPTH)
		return set_error(ret_err, -ELOOP, "sandbox: too many symlinks resolving %s", path);
	if (path[0] != '/')
		return set_error(ret_err, -EINVAL, "sandbox: %s is not an absolute path", path);
	for (;;) {
		_cleanup_free_ char *next = NULL;
		struct stat st;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			return set_error(ret_err, -EISDIR, "sandbox: %s is a directory, not a file", path);
		n = strcspn(p, "/");
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(cur, '/');

			if (slash)
				*slash = 0;
			p += n;
			continue;
		}
		next = xasprintf("%s/%.*s", cur, (int)n, p);
		p += n;
		if (lstat(next, &st) < 0)
			return set_error(ret_err, -errno, "sandbox: %s: %s", next, strerror(errno));
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t l = readlink(next, target, sizeof(target) - 1);
			_cleanup_free_ char *resolved = NULL;

			if (l <= 0)
				return set_error(ret_err, l < 0 ? -errno : -EINVAL,
					    "sandbox: reading the symlink %s failed", next);
			target[l] = 0;
			r = add_op(s, OP_LINK, next, target, 0, ret_err);
			if (r < 0)
				return r;
			resolved = target[0] == '/' ? xasprintf("%s%s", target, p)
						    : xasprintf("%s/%s%s", cur, target, p);
			return expose(s, resolved, depth + 1, ret_real, ret_err);
		}
		if (S_ISDIR(st.st_mode)) {
			r = add_op(s, OP_DIR, next, NULL, 0, ret_err);
			if (r < 0)
				return r;
			free(cur);
			cur = TAKE_PTR(next);
			continue;
		}
		while (*p == '/')
			p++;
		if (!S_ISREG(st.st_mode) || *p)
			return set_error(ret_err, -ENOTDIR, "sandbox: %s is not a regular file", next);
		r = add_op(s, OP_FILE, next, next, MS_RDONLY | MS_NOSUID | MS_NODEV, ret_err);
		if (r < 0)
			return r;
		*ret_real = TAKE_PTR(next);
		return 0;
	}
}

/* What the dynamic loader reads of an ELF object. */
struct elf_facts {
	unsigned char ident[2], machine[2];
	char *interp, *rpath, *runpath;
	char *needed[SANDBOX_MAX_NEEDED];
	size_t n_needed;
};

static void elf_facts_free(struct elf_facts *f)
{
	size_t i;

	free(f->interp);
	free(f->rpath);
	free(f->runpath);
	for (i = 0; i < f->n_needed; i++)
		free(f->needed[i]);
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static int elf_read_facts(const char *path, struct elf_facts *f, char **ret_err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_(elf_endp) Elf *e = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t i, nph;

	memset(f, 0, sizeof(*f));
	if (fd < 0)
		return set_error(ret_err, -errno, "sandbox: %s: %s", path, strerror(errno));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return set_error(ret_err, -EINVAL, "sandbox: libelf is unusable");
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return set_error(ret_err, -ENOEXEC, "sandbox: %s is not an ELF file", path);
	f->ident[0] = eh.e_ident[EI_CLASS];
	f->ident[1] = eh.e_ident[EI_DATA];
	memcpy(f->machine, &eh.e_machine, 2);
	if (elf_getphdrnum(e, &nph) != 0)
		return set_error(ret_err, -ENOEXEC, "sandbox: %s: unreadable program headers", path);
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		char buf[PATH_MAX];
		ssize_t n;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz == 0 || ph.p_filesz >= sizeof(buf))
			return set_error(ret_err, -ENOEXEC, "sandbox: %s: bad interpreter", path);
		n = pread(fd, buf, ph.p_filesz, ph.p_offset);
		if (n != (ssize_t)ph.p_filesz)
			return set_error(ret_err, -EIO, "sandbox: %s: unreadable interpreter", path);
		buf[n] = 0;
		free(f->interp);
		f->interp = xstrdup(buf);
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t j, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (j = 0; j < n; j++) {
			GElf_Dyn dyn;
			const char *str;

			if (!gelf_getdyn(d, j, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
				continue;
			str = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!str)
				return set_error(ret_err, -ENOEXEC, "sandbox: %s: bad dynamic section",
					    path);
			if (dyn.d_tag == DT_NEEDED) {
				if (f->n_needed >= SANDBOX_MAX_NEEDED)
					return set_error(ret_err, -E2BIG,
						    "sandbox: %s needs too many libraries", path);
				f->needed[f->n_needed++] = xstrdup(str);
			} else if (dyn.d_tag == DT_RPATH) {
				free(f->rpath);
				f->rpath = xstrdup(str);
			} else {
				free(f->runpath);
				f->runpath = xstrdup(str);
			}
		}
	}
	return 0;
}

/* Is the file an ELF object for the program's class, byte order and machine? */
static bool elf_compatible(const struct sandbox *s, const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char h[20];

	if (fd < 0 || pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return false;
	return memcmp(h, ELFMAG, SELFMAG) == 0 && h[EI_CLASS] == s->ident[0] &&
	       h[EI_DATA] == s->ident[1] && h[18] == s->machine[0] && h[19] == s->machine[1];
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A directory of a search path with $ORIGIN expanded; NULL for other dynamic tokens. */
static char *expand_dir(const char *dir, size_t len, const char *origin)
{
	_cleanup_free_ char *d = xstrndup(dir, len);
	const char *tok;

	if (!strchr(d, '$'))
		return TAKE_PTR(d);
	tok = strstr(d, "$ORIGIN") ?: strstr(d, "${ORIGIN}");
	if (!tok || strchr(tok + 1, '$') || strchr(d, '$') != tok)
		return NULL;
	return xasprintf("%.*s%s%s", (int)(tok - d), d, origin,
			 tok + (tok[1] == '{' ? strlen("${ORIGIN}") : strlen("$ORIGIN")));
}

static char *search_path(const struct sandbox *s, const char *list, const char *name,
			 const char *origin)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		_cleanup_free_ char *dir = n ? expand_dir(p, n, origin) : NULL;

		if (dir) {
			char *cand = xasprintf("%s/%s", dir, name);

			if (is_file(cand) && elf_compatible(s, cand))
				return cand;
			free(cand);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return NULL;
}

/*
 * A library name in /etc/ld.so.cache (glibc's format "glibc-ld.so.cache1.1":
 * a 48-byte header, 24-byte entries whose string offsets count from the
 * header). Bounds are checked against what was read.
 */
static char *search_cache(const struct sandbox *s, const char *name)
{
	static const char magic[] = "glibc-ld.so.cache1.1";
	const char *h = s->cache ? memmem(s->cache, s->cache_len, magic, sizeof(magic) - 1) : NULL;
	size_t base, avail, i;
	uint32_t nlibs;

	if (!h)
		return NULL;
	base = h - s->cache;
	avail = s->cache_len - base;
	if (avail < 48)
		return NULL;
	memcpy(&nlibs, h + 20, sizeof(nlibs));
	for (i = 0; i < nlibs && 48 + (i + 1) * 24 <= avail; i++) {
		uint32_t key, value;
		const char *k, *v;

		memcpy(&key, h + 48 + i * 24 + 4, sizeof(key));
		memcpy(&value, h + 48 + i * 24 + 8, sizeof(value));
		if (key >= avail || value >= avail)
			continue;
		k = h + key;
		v = h + value;
		if (!memchr(k, 0, avail - key) || !memchr(v, 0, avail - value) || strcmp(k, name))
			continue;
		if (v[0] == '/' && is_file(v) && elf_compatible(s, v))
			return xstrdup(v);
	}
	return NULL;
}

static void add_libdir(struct sandbox *s, const char *lib)
{
	const char *slash = strrchr(lib, '/');
	_cleanup_free_ char *dir = xstrndup(lib, slash && slash != lib ? (size_t)(slash - lib) : 1);
	const char *cur = s->libpath ? s->libpath + strlen("LD_LIBRARY_PATH=") : NULL;
	char *n;

	/* dedupe: the loader tries each directory in turn */
	if (cur) {
		const char *q = cur;
		size_t l = strlen(dir);

		while (*q) {
			size_t m = strcspn(q, ":");

			if (m == l && strncmp(q, dir, l) == 0)
				return;
			q += m;
			if (*q == ':')
				q++;
		}
	}
	n = cur ? xasprintf("%s:%s", s->libpath, dir) : xasprintf("LD_LIBRARY_PATH=%s", dir);
	free(s->libpath);
	s->libpath = n;
}

static int scan_elf(struct sandbox *s, const char *real, unsigned depth, char **ret_err);

/* Find a DT_NEEDED library as the loader would, expose it and scan it. */
static int add_library(struct sandbox *s, const char *name, const struct elf_facts *req,
		       const char *req_real, unsigned depth, char **ret_err)
{
	static const char *const defaults = "/lib64:/usr/lib64:/lib:/usr/lib";
	_cleanup_free_ char *origin = NULL, *found = NULL, *real = NULL;
	const char *slash = strrchr(req_real, '/');
	int r;

	origin = xstrndup(req_real, slash && slash != req_real ? (size_t)(slash - req_real) : 1);
	if (strchr(name, '/')) {
		found = xstrdup(name);
	} else {
		if (!req->runpath)
			found = search_path(s, req->rpath, name, origin);
		if (!found && !req->runpath && s->exe_rpath)
			found = search_path(s, s->exe_rpath, name, origin);
		if (!found)
			found = search_path(s, req->runpath, name, origin);
		if (!found)
			found = search_cache(s, name);
		if (!found)
			found = search_path(s, defaults, name, origin);
	}
	if (!found)
		return set_error(ret_err, -ENOENT, "sandbox: the library %s (needed by %s) was not found",
			    name, req_real);
	r = expose(s, found, 0, &real, ret_err);
	if (r < 0)
		return r;
	add_libdir(s, found);
	return scan_elf(s, real, depth + 1, ret_err);
}

static int scan_elf(struct sandbox *s, const char *real, unsigned depth, char **ret_err)
{
	struct elf_facts f;
	size_t i;
	int r;

	if (depth > SANDBOX_MAX_DEPTH)
		return set_error(ret_err, -ELOOP, "sandbox: libraries nest too deeply at %s", real);
	for (i = 0; i < s->n_elves; i++)
		if (strcmp(s->elves[i], real) == 0)
			return 0;
	if (s->n_elves >= SANDBOX_MAX_ELVES)
		return set_error(ret_err, -E2BIG, "sandbox: more than %d libraries", SANDBOX_MAX_ELVES);
	s->elves[s->n_elves++] = xstrdup(real);
	r = elf_read_facts(real, &f, ret_err);
	if (r < 0)
		return r;
	if (depth == 0) {
		memcpy(s->ident, f.ident, 2);
		memcpy(s->machine, f.machine, 2);
		s->exe_rpath = f.runpath ? NULL : (f.rpath ? xstrdup(f.rpath) : NULL);
		if (f.interp) {
			_cleanup_free_ char *ireal = NULL;

			r = expose(s, f.interp, 0, &ireal, ret_err);
			if (r < 0)
				goto out;
		}
	} else if (memcmp(s->ident, f.ident, 2) || memcmp(s->machine, f.machine, 2)) {
		r = set_error(ret_err, -ENOEXEC, "sandbox: %s is not for the program's machine", real);
		goto out;
	}
	for (i = 0; i < f.n_needed; i++) {
		r = add_library(s, f.needed[i], &f, real, depth, ret_err);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	elf_facts_free(&f);
	return r;
}

/* "/a/b" with no "." or ".." components and no empty ones. */
static bool valid_inside(const char *p)
{
	if (p[0] != '/' || !p[1])
		return false;
	while (*p) {
		size_t n;

		p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	return true;
}

static bool under(const char *path, const char *dir)
{
	size_t l = strlen(dir);

	return strncmp(path, dir, l) == 0 && (path[l] == 0 || path[l] == '/');
}

static int add_bind(struct sandbox *s, const struct sandbox_bind *b, char **ret_err)
{
	struct stat st;
	const char *p;
	size_t i;
	int r;

	if (!b->host || b->host[0] != '/' || !b->inside || !valid_inside(b->inside))
		return set_error(ret_err, -EINVAL, "sandbox: a bind needs absolute paths");
	if (stat(b->host, &st) < 0 || !S_ISDIR(st.st_mode))
		return set_error(ret_err, -ENOTDIR, "sandbox: %s is not a directory", b->host);
	for (i = 0; i < s->n_ops; i++)
		if (under(s->ops[i].inside, b->inside) ||
		    (s->ops[i].kind != OP_DIR && under(b->inside, s->ops[i].inside)))
			return set_error(ret_err, -EEXIST,
				    "sandbox: %s would hide or be hidden by %s, which the program "
				    "needs",
				    b->inside, s->ops[i].inside);
	/* the parents: plain directories of the new root */
	for (p = strchr(b->inside + 1, '/'); p; p = strchr(p + 1, '/')) {
		_cleanup_free_ char *parent = xstrndup(b->inside, p - b->inside);

		r = add_op(s, OP_DIR, parent, NULL, 0, ret_err);
		if (r < 0)
			return r;
	}
	return add_op(s, OP_BIND, b->inside, b->host,
		      MS_NOSUID | MS_NODEV | MS_NOEXEC | (b->writable ? 0 : MS_RDONLY), ret_err);
}

int sandbox_new(const struct sandbox_spec *spec, struct sandbox **ret, char **ret_err)
{
	struct sandbox *s;
	_cleanup_free_ char *real = NULL;
	size_t i;
	int r;

	if (!spec->program || spec->program[0] != '/' || !spec->root_dir ||
	    spec->root_dir[0] != '/')
		return set_error(ret_err, -EINVAL, "sandbox: the program and the root need absolute paths");
	if (spec->uid == 0 || spec->gid == 0)
		return set_error(ret_err, -EPERM, "sandbox: the program may not run as root");
	if (spec->n_binds > SANDBOX_MAX_BINDS)
		return set_error(ret_err, -E2BIG, "sandbox: more than %d binds", SANDBOX_MAX_BINDS);
	if (spec->cwd && (spec->cwd[0] != '/' || (spec->cwd[1] && !valid_inside(spec->cwd))))
		return set_error(ret_err, -EINVAL, "sandbox: bad working directory %s", spec->cwd);
	s = calloc(1, sizeof(*s));
	if (!s)
		return set_error(ret_err, -ENOMEM, "out of memory");
	s->ops = calloc(SANDBOX_MAX_OPS, sizeof(*s->ops));
	s->paths = calloc(SANDBOX_MAX_OPS + 1, sizeof(*s->paths));
	s->elves = calloc(SANDBOX_MAX_ELVES, sizeof(*s->elves));
	if (!s->ops || !s->paths || !s->elves) {
		sandbox_free(s);
		return set_error(ret_err, -ENOMEM, "out of memory");
	}
	s->root_dir = xstrdup(spec->root_dir);
	s->cwd = xstrdup(spec->cwd ?: "/");
	s->uid = spec->uid;
	s->gid = spec->gid;
	s->limits = spec->limits;
	/* a missing or odd cache only means the default directories */
	if (read_file_bounded("/etc/ld.so.cache", SANDBOX_CACHE_MAX, &s->cache, &s->cache_len) < 0)
		s->cache = NULL;

	r = expose(s, spec->program, 0, &real, ret_err);
	if (r >= 0)
		r = scan_elf(s, real, 0, ret_err);
	for (i = 0; r >= 0 && i < spec->n_binds; i++)
		r = add_bind(s, &spec->binds[i], ret_err);
	if (r >= 0 && strcmp(s->cwd, "/") != 0) {
		struct op *o = find_op(s, s->cwd);

		if (!o || (o->kind != OP_DIR && o->kind != OP_BIND))
			r = set_error(ret_err, -ENOENT, "sandbox: the working directory %s is not in it",
				 s->cwd);
	}
	free(s->cache);
	s->cache = NULL;
	if (r < 0) {
		sandbox_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

/* ---- the child ---- */

enum step {
	STEP_READY, /* not a failure: the namespaces exist, the id maps are wanted */
	STEP_FDS,
	STEP_SIGNALS,
	STEP_UNSHARE_MNT,
	STEP_PRIVATE,
	STEP_TMPFS,
	STEP_MKDIR,
	STEP_SYMLINK,
	STEP_MOUNTPOINT,
	STEP_BIND,
	STEP_REMOUNT,
	STEP_PIVOT,
	STEP_DETACH,
	STEP_ROOT_RO,
	STEP_SETGROUPS,
	STEP_UNSHARE_USER,
	STEP_WAIT_MAPS,
	STEP_SETRESGID,
	STEP_SETRESUID,
	STEP_SECUREBITS,
	STEP_BOUNDING,
	STEP_AMBIENT,
	STEP_CAPSET,
	STEP_NO_NEW_PRIVS,
	STEP_PDEATHSIG,
	STEP_FORK,
	STEP_RLIMIT,
	STEP_CHDIR,
	STEP_EXEC,
};

static const char *const step_names[] = {
	[STEP_READY] = "namespaces",
	[STEP_FDS] = "arranging file descriptors",
	[STEP_SIGNALS] = "resetting signals",
	[STEP_UNSHARE_MNT] = "creating the mount namespace",
	[STEP_PRIVATE] = "making the mounts private",
	[STEP_TMPFS] = "mounting the new root",
	[STEP_MKDIR] = "creating the directory",
	[STEP_SYMLINK] = "creating the symlink",
	[STEP_MOUNTPOINT] = "creating the mount point",
	[STEP_BIND] = "binding",
	[STEP_REMOUNT] = "remounting with restrictions",
	[STEP_PIVOT] = "pivot_root into the new root (is argusd in a chroot?)",
	[STEP_DETACH] = "detaching the old root",
	[STEP_ROOT_RO] = "remounting the new root read-only",
	[STEP_SETGROUPS] = "dropping supplementary groups",
	[STEP_UNSHARE_USER] = "creating the user, network, IPC, UTS and PID namespaces",
	[STEP_WAIT_MAPS] = "waiting for the uid and gid maps",
	[STEP_SETRESGID] = "setresgid",
	[STEP_SETRESUID] = "setresuid",
	[STEP_SECUREBITS] = "locking securebits",
	[STEP_BOUNDING] = "emptying the capability bounding set",
	[STEP_AMBIENT] = "clearing ambient capabilities",
	[STEP_CAPSET] = "dropping capabilities",
	[STEP_NO_NEW_PRIVS] = "setting no_new_privs",
	[STEP_PDEATHSIG] = "tying the child to its parent",
	[STEP_FORK] = "starting the PID namespace's first process",
	[STEP_RLIMIT] = "setting resource limits",
	[STEP_CHDIR] = "entering the working directory",
	[STEP_EXEC] = "executing the program",
};

struct report {
	int step, index, err;
};

struct child_args {
	const struct sandbox *s;
	char *const *argv, *const *envp;
	int out_fd, null_fd, err_fd, go_fd;
	pid_t parent;
};

static void child_report(int fd, int step, int index, int err)
{
	struct report m = { step, index, err };

	if (write(fd, &m, sizeof(m)) < 0) {
		/* nothing to do: the parent sees the exit status */
	}
}

#define CHILD_FAIL(step, index)                                                                    \
	do {                                                                                       \
		child_report(err_fd, (step), (index), errno);                                      \
		_exit(126);                                                                        \
	} while (0)

static int child_limit(int res, unsigned long long soft, unsigned long long hard)
{
	struct rlimit l = { soft, hard };

	return setrlimit(res, &l);
}

/* Between fork and exec: system calls only, nothing that allocates or locks. */
static void __attribute__((noreturn)) sandbox_child(const struct child_args *a)
{
	const struct sandbox *s = a->s;
	struct __user_cap_header_struct caph = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct capd[2] = {};
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int err_fd, out_fd, null_fd, go_fd, sig, cap;
	pid_t init;
	sigset_t none;
	char go;
	size_t i;

	/* above the standard descriptors, whatever numbers they had */
	err_fd = fcntl(a->err_fd, F_DUPFD_CLOEXEC, 10);
	if (err_fd < 0)
		_exit(126);
	out_fd = fcntl(a->out_fd, F_DUPFD_CLOEXEC, 10);
	null_fd = fcntl(a->null_fd, F_DUPFD_CLOEXEC, 10);
	go_fd = fcntl(a->go_fd, F_DUPFD_CLOEXEC, 10);
	if (out_fd < 0 || null_fd < 0 || go_fd < 0)
		CHILD_FAIL(STEP_FDS, -1);
	setpgid(0, 0);

	/* the daemon's threads block or catch signals; the program starts clean */
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		CHILD_FAIL(STEP_SIGNALS, -1);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);

	/* the mount namespace, as root of the initial user namespace */
	if (unshare(CLONE_NEWNS) < 0)
		CHILD_FAIL(STEP_UNSHARE_MNT, -1);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		CHILD_FAIL(STEP_PRIVATE, -1);
	if (mount("tmpfs", s->root_dir, "tmpfs", MS_NOSUID | MS_NODEV, SANDBOX_TMPFS_OPTS) < 0)
		CHILD_FAIL(STEP_TMPFS, -1);
	for (i = 0; i < s->n_ops; i++) {
		const struct op *o = &s->ops[i];
		int fd;

		switch (o->kind) {
		case OP_DIR:
			if (mkdir(o->at, 0755) < 0 && errno != EEXIST)
				CHILD_FAIL(STEP_MKDIR, (int)i);
			break;
		case OP_LINK:
			if (symlink(o->src, o->at) < 0)
				CHILD_FAIL(STEP_SYMLINK, (int)i);
			break;
		case OP_FILE:
		case OP_BIND:
			if (o->kind == OP_FILE) {
				fd = open(o->at, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
				if (fd < 0)
					CHILD_FAIL(STEP_MOUNTPOINT, (int)i);
				close(fd);
			} else if (mkdir(o->at, 0755) < 0) {
				CHILD_FAIL(STEP_MOUNTPOINT, (int)i);
			}
			if (mount(o->src, o->at, NULL, MS_BIND, NULL) < 0)
				CHILD_FAIL(STEP_BIND, (int)i);
			if (mount(NULL, o->at, NULL, MS_REMOUNT | MS_BIND | o->flags, NULL) < 0)
				CHILD_FAIL(STEP_REMOUNT, (int)i);
			break;
		}
	}
	if (chdir(s->root_dir) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		CHILD_FAIL(STEP_PIVOT, -1);
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		CHILD_FAIL(STEP_DETACH, -1);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
	    0)
		CHILD_FAIL(STEP_ROOT_RO, -1);

	/* the other namespaces; the parent writes the id maps */
	/* raw system calls: the libc wrappers would signal threads this child does not have */
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		CHILD_FAIL(STEP_SETGROUPS, -1);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID) < 0)
		CHILD_FAIL(STEP_UNSHARE_USER, -1);
	child_report(err_fd, STEP_READY, -1, 0);
	if (read(go_fd, &go, 1) != 1)
		CHILD_FAIL(STEP_WAIT_MAPS, -1);

	/* the identity, then every capability away */
	if (syscall(SYS_setresgid, s->gid, s->gid, s->gid) < 0)
		CHILD_FAIL(STEP_SETRESGID, -1);
	if (syscall(SYS_setresuid, s->uid, s->uid, s->uid) < 0)
		CHILD_FAIL(STEP_SETRESUID, -1);
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
					     SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0)
		CHILD_FAIL(STEP_SECUREBITS, -1);
	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break; /* past the kernel's last capability */
			CHILD_FAIL(STEP_BOUNDING, cap);
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		CHILD_FAIL(STEP_AMBIENT, -1);
	if (syscall(SYS_capset, &caph, capd) < 0)
		CHILD_FAIL(STEP_CAPSET, -1);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		CHILD_FAIL(STEP_NO_NEW_PRIVS, -1);
	/* after the credential changes, which clear it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != a->parent)
		CHILD_FAIL(STEP_PDEATHSIG, -1);
	if (child_limit(RLIMIT_CORE, 0, 0) < 0)
		CHILD_FAIL(STEP_RLIMIT, -1);

	/*
	 * The program is the new PID namespace's first process: when it ends,
	 * the kernel ends every process it left behind. This process waits for
	 * it and exits as it did.
	 */
	/* a raw clone: no fork handlers of the daemon's libraries run in this child */
	init = syscall(SYS_clone, (unsigned long)SIGCHLD, 0ul, 0ul, 0ul, 0ul);
	if (init < 0)
		CHILD_FAIL(STEP_FORK, -1);
	if (init > 0) {
		int status = 0;

		closefrom(0);
		while (waitpid(init, &status, 0) < 0)
			if (errno != EINTR)
				_exit(126);
		if (WIFSIGNALED(status)) {
			sig = WTERMSIG(status);
			sigaction(sig, &dfl, NULL);
			raise(sig);
			_exit(128 + sig);
		}
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 126);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		CHILD_FAIL(STEP_PDEATHSIG, -1);
	if ((s->limits.cpu_s &&
	     child_limit(RLIMIT_CPU, s->limits.cpu_s, s->limits.cpu_s + 1ull) < 0) ||
	    (s->limits.fsize && child_limit(RLIMIT_FSIZE, s->limits.fsize, s->limits.fsize) < 0) ||
	    (s->limits.as && child_limit(RLIMIT_AS, s->limits.as, s->limits.as) < 0) ||
	    (s->limits.nofile && child_limit(RLIMIT_NOFILE, s->limits.nofile, s->limits.nofile) < 0))
		CHILD_FAIL(STEP_RLIMIT, -1);
	if (chdir(s->cwd) < 0)
		CHILD_FAIL(STEP_CHDIR, -1);
	if (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 ||
	    dup3(err_fd, 3, O_CLOEXEC) < 0)
		CHILD_FAIL(STEP_FDS, -1);
	err_fd = 3;
	closefrom(4);
	execve(a->argv[0], a->argv, a->envp);
	CHILD_FAIL(STEP_EXEC, -1);
}

/* ---- the parent ---- */

static int write_proc(pid_t pid, const char *file, const char *text)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	size_t n = strlen(text);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		return -errno ?: -EIO;
	return 0;
}

/* 1: a report, 0: end of file (the program was executed), <0: an error. */
static int read_report(int fd, struct report *m)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int p;

	do
		p = poll(&pfd, 1, SANDBOX_SPAWN_TIMEOUT_MS);
	while (p < 0 && errno == EINTR);
	if (p < 0)
		return -errno;
	if (p == 0)
		return -ETIMEDOUT;
	do
		n = read(fd, m, sizeof(*m));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m) || m->step < 0 || (size_t)m->step >= ARRAY_SIZE(step_names))
		return -EPROTO;
	return 1;
}

static char *describe(const struct sandbox *s, const struct report *m)
{
	const char *what = step_names[m->step];
	const char *path = m->index >= 0 && (size_t)m->index < s->n_ops ? s->ops[m->index].inside
									  : NULL;

	if (m->step == STEP_UNSHARE_USER || m->step == STEP_UNSHARE_MNT)
		return xasprintf("sandbox: %s failed: %s. argusd runs the compiler only inside its "
				 "namespaces: allow user, mount, network and IPC namespaces for "
				 "argusd (user.max_user_namespaces, RestrictNamespaces=, seccomp)",
				 what, strerror(m->err));
	return xasprintf("sandbox: %s%s%s failed: %s", what, path ? " " : "", path ?: "",
			 strerror(m->err));
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int sandbox_spawn(const struct sandbox *s, char *const argv[], char *const envp[], int out_fd,
		  pid_t *ret_pid, char **ret_err)
{
	_cleanup_free_ char **env = NULL;
	_cleanup_close_ int null_fd = -1, err_r = -1, go_w = -1;
	char maps[64];
	struct child_args a = { .s = s, .argv = argv, .out_fd = out_fd, .parent = getpid() };
	struct report m;
	size_t n_env = 0, i;
	int errp[2], gop[2], r;
	pid_t pid;

	if (geteuid() != 0)
		return set_error(ret_err, -EPERM, "sandbox: making it needs root");
	while (envp && envp[n_env])
		n_env++;
	env = calloc(n_env + 2, sizeof(char *));
	if (!env)
		return set_error(ret_err, -ENOMEM, "out of memory");
	for (i = 0; i < n_env; i++)
		env[i] = envp[i];
	if (s->libpath)
		env[n_env++] = s->libpath;
	a.envp = env;

	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0)
		return set_error(ret_err, -errno, "sandbox: /dev/null: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0)
		return set_error(ret_err, -errno, "sandbox: pipe: %s", strerror(errno));
	if (pipe2(gop, O_CLOEXEC) < 0) {
		r = -errno;
		close(errp[0]);
		close(errp[1]);
		return set_error(ret_err, r, "sandbox: pipe: %s", strerror(-r));
	}
	a.null_fd = null_fd;
	a.err_fd = errp[1];
	a.go_fd = gop[0];
	pid = fork();
	if (pid == 0)
		sandbox_child(&a);
	r = -errno;
	close(errp[1]);
	close(gop[0]);
	err_r = errp[0];
	go_w = gop[1];
	if (pid < 0)
		return set_error(ret_err, r, "sandbox: fork: %s", strerror(-r));

	r = read_report(err_r, &m);
	if (r == 1 && m.step == STEP_READY) {
		/* the map of a uid other than the writer's own needs root of the parent namespace */
		snprintf(maps, sizeof(maps), "%u %u 1\n", (unsigned)s->uid, (unsigned)s->uid);
		r = write_proc(pid, "uid_map", maps);
		if (r >= 0)
			r = write_proc(pid, "setgroups", "deny");
		if (r >= 0) {
			snprintf(maps, sizeof(maps), "%u %u 1\n", (unsigned)s->gid, (unsigned)s->gid);
			r = write_proc(pid, "gid_map", maps);
		}
		if (r < 0) {
			kill_and_reap(pid);
			return set_error(ret_err, r, "sandbox: writing the id maps: %s", strerror(-r));
		}
		if (write(go_w, "g", 1) != 1) {
			r = -errno;
			kill_and_reap(pid);
			return set_error(ret_err, r, "sandbox: starting the child: %s", strerror(-r));
		}
		r = read_report(err_r, &m);
	}
	if (r == 0) {
		*ret_pid = pid;
		return 0;
	}
	kill_and_reap(pid);
	if (r == 1) {
		*ret_err = describe(s, &m);
		return m.err ? -m.err : -EIO;
	}
	return set_error(ret_err, r, "sandbox: the child did not report: %s", strerror(-r));
}
