// SPDX-License-Identifier: MIT
/*
 * Authored probe -> object: the source check, then clang in the sandbox
 * with limits. See compile.h for what the compiler can reach and why.
 *
 * The source check mirrors the translation phases as clang runs them:
 * phase 1-2 (carriage return before newline dropped, backslash, blanks and
 * a newline spliced away: clang accepts blanks between them), phase 3
 * (comments become a space, literals are kept and marked), then the
 * directives and the identifiers. Where the check and clang could read a
 * construct differently, the check refuses it: a '#' outside a directive,
 * a backslash outside a literal, a literal with a prefix other than L, u,
 * U and u8 (raw strings), trigraphs.
 */
#include "daemon/compile.h"
#include "daemon/paths-config.h"
#include "daemon/sandbox.h"
#include "daemon/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* The only headers an authored probe may include, by the name it writes. */
static const char *const allowed_headers[] = {
	"vmlinux.h",	     "argus_authored.h",    "bpf/bpf_helpers.h",
	"bpf/bpf_tracing.h", "bpf/bpf_core_read.h",
};

/* Every file those headers bring in, as include-directory paths: what clang may open. */
static const char *const include_set[] = {
	"vmlinux.h",	     "argus_authored.h",    "paths.h",		   "bpf/bpf_helpers.h",
	"bpf/bpf_helper_defs.h", "bpf/bpf_tracing.h", "bpf/bpf_core_read.h",
};

/* Directives that cannot name a file. */
static const char *const allowed_directives[] = { "define", "undef", "if",    "ifdef",
						  "ifndef", "elif",  "else",  "endif",
						  "error",  "warning", "include", "pragma" };

/* Pragmas about loops; every other pragma (GCC dependency, clang module, ...) is refused. */
static const char *const allowed_pragmas[] = { "unroll", "nounroll", "clang loop", "GCC unroll" };

/* Identifiers that reach files or the assembler. */
static const char *const banned_identifiers[] = { "asm", "__asm", "__asm__", "_Pragma",
						  "__pragma" };

/*
 * Prefixes of banned identifiers: __has_include and its kin, and libbpf's
 * internal macros (___bpf_concat, ___concat, ___apply, ...), which paste
 * two tokens of the caller's into any identifier, asm and _Pragma included.
 * libbpf's public macros paste only onto fixed prefixes.
 */
static const char *const banned_prefixes[] = { "__has_", "___" };

/* Encoding prefixes of literals, which do not change how a literal ends. */
static const char *const literal_prefixes[] = { "L", "u", "U", "u8" };

static bool is_ident(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

static bool in_list(const char *s, size_t n, const char *const *list, size_t n_list)
{
	size_t i;

	for (i = 0; i < n_list; i++)
		if (strlen(list[i]) == n && strncmp(s, list[i], n) == 0)
			return true;
	return false;
}

/*
 * The source as the preprocessor's directive parser sees it: splices
 * removed, comments replaced by a space, literals kept and marked. For each
 * character: the physical line it came from, whether it is inside a
 * literal, and whether its logical line (or a comment it replaces) held a
 * splice.
 */
struct clean {
	char *c;
	unsigned *line;
	bool *lit;
	bool *spliced;
	size_t n;
};

static void clean_free(struct clean *k)
{
	free(k->c);
	free(k->line);
	free(k->lit);
	free(k->spliced);
}

/* Phases 1 and 2: into a[] with the physical line and the splice mark of each character. */
static int splice_lines(const char *src, size_t len, char *a, unsigned *line, bool *spliced,
			size_t *ret_n)
{
	size_t i = 0, n = 0, start = 0, j;
	unsigned l = 1;
	bool sp = false;

	while (i < len) {
		char ch = src[i];

		if (ch == '\\') {
			for (j = i + 1; j < len && (src[j] == ' ' || src[j] == '\t'); j++)
				;
			if (j < len && (src[j] == '\n' || (src[j] == '\r' && j + 1 < len &&
							     src[j + 1] == '\n'))) {
				i = j + (src[j] == '\r' ? 2 : 1);
				l++;
				sp = true;
				continue;
			}
		}
		if (ch == '\r') { /* before a newline: the check refused every other */
			i++;
			continue;
		}
		a[n] = ch;
		line[n] = l;
		n++;
		if (ch == '\n') {
			for (j = start; j < n; j++)
				spliced[j] = sp;
			start = n;
			sp = false;
			l++;
		}
		i++;
	}
	for (j = start; j < n; j++)
		spliced[j] = sp;
	*ret_n = n;
	return 0;
}

/* Phase 3. Refuses literals with prefixes that could change where they end. */
static int clean_source(const char *src, size_t len, struct clean *ret, char **ret_err)
{
	enum { NORMAL, STRING, CHAR, LINE_COMMENT, BLOCK_COMMENT } st = NORMAL;
	_cleanup_free_ char *a = malloc(len + 1);
	_cleanup_free_ unsigned *aline = calloc(len + 1, sizeof(unsigned));
	_cleanup_free_ bool *asp = calloc(len + 1, sizeof(bool));
	struct clean k = { .c = malloc(len + 1),
			   .line = calloc(len + 1, sizeof(unsigned)),
			   .lit = calloc(len + 1, sizeof(bool)),
			   .spliced = calloc(len + 1, sizeof(bool)) };
	bool pending = false;
	size_t i = 0, n = 0;

	if (!a || !aline || !asp || !k.c || !k.line || !k.lit || !k.spliced) {
		clean_free(&k);
		return set_error(ret_err, -ENOMEM, "out of memory");
	}
	splice_lines(src, len, a, aline, asp, &n);
#define EMIT(ch, in_lit)                                                                           \
	do {                                                                                       \
		k.c[k.n] = (ch);                                                                   \
		k.line[k.n] = aline[i];                                                            \
		k.lit[k.n] = (in_lit);                                                             \
		k.spliced[k.n] = pending || asp[i];                                                \
		pending = false;                                                                   \
		k.n++;                                                                             \
	} while (0)
	while (i < n) {
		char ch = a[i];

		switch (st) {
		case NORMAL:
			if (ch == '/' && i + 1 < n && a[i + 1] == '/') {
				st = LINE_COMMENT;
				pending |= asp[i];
				i += 2;
				continue;
			}
			if (ch == '/' && i + 1 < n && a[i + 1] == '*') {
				st = BLOCK_COMMENT;
				EMIT(' ', false);
				i += 2;
				continue;
			}
			if (ch == '"' || ch == '\'') {
				size_t s = k.n;

				while (s > 0 && !k.lit[s - 1] && is_ident(k.c[s - 1]))
					s--;
				if (s < k.n && !in_list(k.c + s, k.n - s, literal_prefixes,
							ARRAY_SIZE(literal_prefixes))) {
					unsigned l = aline[i];

					clean_free(&k);
					return set_error(ret_err, -EINVAL,
						      "line %u: a literal right after a name or number "
						      "(raw strings, odd prefixes) is not allowed",
						      l);
				}
				st = ch == '"' ? STRING : CHAR;
			}
			EMIT(ch, st != NORMAL);
			break;
		case STRING:
		case CHAR:
			EMIT(ch, true);
			if (ch == '\\' && i + 1 < n && a[i + 1] != '\n') {
				i++;
				EMIT(a[i], true);
			} else if ((st == STRING && ch == '"') || (st == CHAR && ch == '\'') ||
				   ch == '\n') {
				st = NORMAL;
			}
			break;
		case LINE_COMMENT:
			pending |= asp[i];
			if (ch == '\n') {
				st = NORMAL;
				EMIT('\n', false);
			}
			break;
		case BLOCK_COMMENT:
			/* a block comment joins lines: the logical line goes on */
			pending |= asp[i];
			if (ch == '*' && i + 1 < n && a[i + 1] == '/') {
				st = NORMAL;
				i += 2;
				continue;
			}
			break;
		}
		i++;
	}
#undef EMIT
	k.c[k.n] = 0;
	*ret = k;
	return 0;
}

static size_t skip_blanks(const struct clean *k, size_t p, size_t e)
{
	while (p < e && (k->c[p] == ' ' || k->c[p] == '\t'))
		p++;
	return p;
}

/* One logical line that starts with '#': [p, e). */
static int check_directive(const struct clean *k, size_t p, size_t e, char **ret_err)
{
	unsigned line = k->line[p];
	size_t q, name_len, i;

	for (i = p; i <= e && i < k->n; i++)
		if (k->spliced[i])
			return set_error(ret_err, -EINVAL,
				      "line %u: a backslash-newline inside a preprocessor directive "
				      "is not allowed: write each directive on one line",
				      line);
	p = skip_blanks(k, p + 1, e);
	for (q = p; q < e && is_ident(k->c[q]); q++)
		;
	name_len = q - p;
	if (name_len == 0) {
		if (p < e)
			return set_error(ret_err, -EINVAL,
				      "line %u: '#' must be followed by a directive name", line);
		return 0; /* the null directive */
	}
	if (!in_list(k->c + p, name_len, allowed_directives, ARRAY_SIZE(allowed_directives)))
		return set_error(ret_err, -EINVAL, "line %u: the directive #%.*s is not allowed", line,
			      (int)(name_len > 64 ? 64 : name_len), k->c + p);
	if (name_len == 7 && strncmp(k->c + p, "include", 7) == 0) {
		char close;
		size_t hs, he;

		p = skip_blanks(k, q, e);
		if (p >= e || (k->c[p] != '"' && k->c[p] != '<'))
			return set_error(ret_err, -EINVAL,
				      "line %u: #include must name a header literally (\"...\" or <...>)",
				      line);
		close = k->c[p] == '"' ? '"' : '>';
		hs = p + 1;
		for (he = hs; he < e && k->c[he] != close; he++)
			;
		if (he >= e)
			return set_error(ret_err, -EINVAL, "line %u: unterminated #include", line);
		if (!in_list(k->c + hs, he - hs, allowed_headers, ARRAY_SIZE(allowed_headers)))
			return set_error(ret_err, -EINVAL,
				      "line %u: #include of %.*s is not allowed; only vmlinux.h, "
				      "argus_authored.h, bpf/bpf_helpers.h, bpf/bpf_tracing.h and "
				      "bpf/bpf_core_read.h",
				      line, (int)(he - hs > 200 ? 200 : he - hs), k->c + hs);
		if (skip_blanks(k, he + 1, e) < e)
			return set_error(ret_err, -EINVAL, "line %u: nothing may follow the header name",
				      line);
	} else if (name_len == 6 && strncmp(k->c + p, "pragma", 6) == 0) {
		p = skip_blanks(k, q, e);
		for (i = 0; i < ARRAY_SIZE(allowed_pragmas); i++) {
			size_t l = strlen(allowed_pragmas[i]);

			if (e - p >= l && strncmp(k->c + p, allowed_pragmas[i], l) == 0 &&
			    (e - p == l || !is_ident(k->c[p + l])))
				return 0;
		}
		return set_error(ret_err, -EINVAL,
			      "line %u: only loop pragmas (#pragma unroll, #pragma clang loop) are "
			      "allowed",
			      line);
	}
	return 0;
}

/* Everything outside literals on one logical line [p, e); directive: it starts with '#'. */
static int check_tokens(const struct clean *k, size_t p, size_t e, bool directive, char **ret_err)
{
	size_t q, i;

	for (; p < e; p++) {
		char ch = k->c[p];
		unsigned line = k->line[p];

		if (k->lit[p])
			continue;
		if (ch == '%' && p + 1 < e && k->c[p + 1] == ':')
			return set_error(ret_err, -EINVAL, "line %u: digraphs (%%:) are not allowed",
				      line);
		if (ch == '#' && p + 1 < e && k->c[p + 1] == '#')
			return set_error(ret_err, -EINVAL,
				      "line %u: token pasting (##) is not allowed in authored probes",
				      line);
		if (ch == '#' && !directive)
			return set_error(ret_err, -EINVAL,
				      "line %u: '#' outside a preprocessor directive is not allowed",
				      line);
		if (ch == '\\')
			return set_error(ret_err, -EINVAL,
				      "line %u: a backslash outside a literal is not allowed", line);
		if (!is_ident(ch) || (p > 0 && is_ident(k->c[p - 1]) && !k->lit[p - 1]))
			continue;
		for (q = p; q < e && is_ident(k->c[q]) && !k->lit[q]; q++)
			;
		if (in_list(k->c + p, q - p, banned_identifiers, ARRAY_SIZE(banned_identifiers)))
			return set_error(ret_err, -EINVAL, "line %u: %.*s is not allowed", line,
				      (int)(q - p), k->c + p);
		for (i = 0; i < ARRAY_SIZE(banned_prefixes); i++) {
			size_t l = strlen(banned_prefixes[i]);

			if (q - p >= l && strncmp(k->c + p, banned_prefixes[i], l) == 0)
				return set_error(ret_err, -EINVAL,
					      "line %u: %.*s is not allowed (names starting with %s "
					      "are reserved)",
					      line, (int)(q - p > 64 ? 64 : q - p), k->c + p,
					      banned_prefixes[i]);
		}
		p = q - 1;
	}
	return 0;
}

static bool is_trigraph(const char *s, size_t i, size_t len)
{
	return i + 2 < len && s[i] == '?' && s[i + 1] == '?' && strchr("=/'()!<>-", s[i + 2]) &&
	       s[i + 2] != 0;
}

int compile_check_source(const char *src, size_t len, size_t max, char **ret_err)
{
	struct clean k = {};
	unsigned line = 1;
	size_t i, p;
	int r;

	if (len == 0)
		return set_error(ret_err, -EINVAL, "the source is empty");
	if (len > max)
		return set_error(ret_err, -E2BIG, "the source is %zu bytes; at most %zu are accepted",
			      len, max);
	for (i = 0; i < len; i++) {
		unsigned char ch = src[i];

		if (ch == '\n') {
			line++;
		} else if (ch == '\r') {
			/* clang ends a line at a lone carriage return; the check would not */
			if (i + 1 >= len || src[i + 1] != '\n')
				return set_error(ret_err, -EINVAL,
					      "line %u: a carriage return not followed by a newline "
					      "is not allowed",
					      line);
		} else if (ch != '\t' && (ch < 0x20 || ch > 0x7e)) {
			return set_error(ret_err, -EINVAL,
				      "line %u: byte 0x%02x: only printable ASCII is accepted", line, ch);
		} else if (is_trigraph(src, i, len)) {
			return set_error(ret_err, -EINVAL, "line %u: trigraphs (??%c) are not allowed",
				      line, src[i + 2]);
		}
	}
	r = clean_source(src, len, &k, ret_err);
	if (r < 0)
		return r;

	/* logical lines: a directive when the first token is '#' */
	for (p = 0; p < k.n;) {
		size_t e = p, s;
		bool directive;

		while (e < k.n && k.c[e] != '\n')
			e++;
		s = skip_blanks(&k, p, e);
		directive = s < e && !k.lit[s] && k.c[s] == '#';
		if (directive) {
			r = check_directive(&k, s, e, ret_err);
			if (r < 0)
				goto out;
		}
		r = check_tokens(&k, p, e, directive, ret_err);
		if (r < 0)
			goto out;
		p = e + 1;
	}
	r = 0;
out:
	clean_free(&k);
	return r;
}

/* ---- dependencies ---- */

void compile_deps_free(char **deps, size_t n)
{
	size_t i;

	if (!deps)
		return;
	for (i = 0; i < n; i++)
		free(deps[i]);
	free(deps);
}

/* A make rule from clang -M: "target: dep dep \<newline> dep", with "\ " and "$$" escapes. */
static int parse_deps(const char *text, char ***ret, size_t *ret_n)
{
	const char *p = text;
	char **deps = NULL;
	size_t n = 0;

	/* the target is probe.bpf.o, written by clang from the input's name */
	p = strstr(text, ": ");
	if (!p && !(p = strstr(text, ":\n")))
		return -EBADMSG;
	p++;
	for (;;) {
		char *word, *w;

		while (*p == ' ' || *p == '\t' || *p == '\n' ||
		       (*p == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n'))))
			p += *p == '\\' ? (p[1] == '\n' ? 2 : 3) : 1;
		if (!*p)
			break;
		w = word = malloc(strlen(p) + 1);
		if (!word) {
			compile_deps_free(deps, n);
			return -ENOMEM;
		}
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '\\' && (p[1] == ' ' || p[1] == '#' || p[1] == '\\')) {
				*w++ = p[1];
				p += 2;
			} else if (*p == '$' && p[1] == '$') {
				*w++ = '$';
				p += 2;
			} else if (*p == '\\' && p[1] == '\n') {
				break;
			} else {
				*w++ = *p++;
			}
		}
		*w = 0;
		deps = realloc(deps, (n + 1) * sizeof(char *));
		if (!deps) {
			free(word);
			return -ENOMEM;
		}
		deps[n++] = word;
	}
	*ret = deps;
	*ret_n = n;
	return 0;
}

int compile_check_dependencies(char *const *deps, size_t n, char **ret_err)
{
	size_t i, l = strlen(COMPILE_INCLUDE_AT);

	for (i = 0; i < n; i++) {
		const char *d = deps[i];

		if (strcmp(d, "probe.bpf.c") == 0)
			continue;
		if (strncmp(d, COMPILE_INCLUDE_AT, l) == 0 && d[l] == '/' &&
		    in_list(d + l + 1, strlen(d + l + 1), include_set, ARRAY_SIZE(include_set)))
			continue;
		return set_error(ret_err, -EPERM, "the preprocessor names %.256s, which is not an "
					       "allowed header",
			      d);
	}
	return 0;
}

/* ---- the work directory and the run ---- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= w;
	}
	return 0;
}

/* Remove what the compiler left in a directory (it could write anything there). */
static void remove_tree_at(int dfd, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(dfd);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0 || errno != EISDIR || depth >= 16)
			continue;
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_tree_at(sub, depth + 1);
			close(sub);
		}
		unlinkat(dfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* The private directory: dir/root (the sandbox's mount point), dir/work (its work directory). */
struct workdir {
	char *dir, *root, *work;
	int work_fd;
};

static void workdir_remove(struct workdir *w)
{
	if (!w->dir)
		return;
	if (w->work_fd >= 0) {
		remove_tree_at(w->work_fd, 0);
		close(w->work_fd);
	}
	rmdir(w->work);
	rmdir(w->root);
	rmdir(w->dir);
	free(w->dir);
	free(w->root);
	free(w->work);
	w->dir = NULL;
}

static int workdir_make(const struct compile_opts *o, uid_t uid, gid_t gid, const char *src,
			size_t len, struct workdir *w, char **ret_diag)
{
	_cleanup_close_ int fd = -1;
	int r;

	*w = (struct workdir){ .work_fd = -1 };
	w->dir = xasprintf("%s/argusd-probe-XXXXXX", o->tmp_parent ?: "/tmp");
	if (!mkdtemp(w->dir)) { /* mode 0700, a fresh name */
		r = -errno;
		free(w->dir);
		w->dir = NULL;
		return set_error(ret_diag, r, "creating the compile directory: %s", strerror(-r));
	}
	w->root = xasprintf("%s/root", w->dir);
	w->work = xasprintf("%s/work", w->dir);
	if (mkdir(w->root, 0755) < 0 || mkdir(w->work, 0700) < 0) {
		r = -errno;
		return set_error(ret_diag, r, "creating the compile directory: %s", strerror(-r));
	}
	/*
	 * The compiler's own, and root's through the group: argusd reads the
	 * object and cleans up without needing CAP_DAC_OVERRIDE. Nobody else
	 * reaches it: dir is 0700 root.
	 */
	w->work_fd = open(w->work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->work_fd < 0 || fchown(w->work_fd, uid, 0) < 0 || fchmod(w->work_fd, 0770) < 0) {
		r = -errno;
		return set_error(ret_diag, r, "preparing the compile directory: %s", strerror(-r));
	}
	fd = openat(w->work_fd, "probe.bpf.c", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0 || fchown(fd, uid, gid) < 0 || (r = write_all(fd, src, len)) < 0) {
		r = -errno ?: -EIO;
		return set_error(ret_diag, r, "writing the source: %s", strerror(-r));
	}
	return 0;
}

/*
 * A file the compiler wrote, read without trusting it: no symlink, no
 * FIFO or device, a single link, owned by the compiler's uid, bounded.
 */
static int read_output(int dfd, const char *name, uid_t uid, size_t max, char **ret,
		       size_t *ret_len)
{
	_cleanup_close_ int fd = openat(dfd, name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != uid)
		return -EPERM;
	if ((unsigned long long)st.st_size > max)
		return -EFBIG;
	return read_fd_bounded(fd, max, ret, ret_len);
}

/* Bounded capture of the compiler's output; the rest is counted, not kept. */
struct capture {
	char *buf;
	size_t len, dropped;
};

/* Returns what read(2) returned. */
static ssize_t capture_read(struct capture *c, int fd)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	size_t keep;

	if (n <= 0)
		return n < 0 && errno == EINTR ? 1 : n;
	keep = COMPILE_OUTPUT_MAX - c->len;
	if ((size_t)n < keep)
		keep = n;
	memcpy(c->buf + c->len, tmp, keep);
	c->len += keep;
	c->buf[c->len] = 0;
	c->dropped += n - keep;
	return n;
}

struct run_result {
	int status;
	bool killed;  /* the wall-clock limit */
	char *output; /* bounded, NUL-terminated, never NULL on success */
};

/*
 * Run clang with argv (argv[0] is replaced by the configured compiler) in
 * the sandbox over the work directory, within the time limits.
 */
static int run_sandboxed(const struct compile_opts *o, const struct workdir *w, uid_t uid,
			 gid_t gid, char **argv, struct run_result *ret, char **ret_diag)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "TMPDIR=.", NULL };
	unsigned cpu_s = o->cpu_s ?: COMPILE_CPU_S, wall_s = o->wall_s ?: COMPILE_WALL_S;
	const struct sandbox_bind binds[] = {
		{ .host = o->include_dir, .inside = COMPILE_INCLUDE_AT, .writable = false },
		{ .host = w->work, .inside = COMPILE_WORK_AT, .writable = true },
	};
	const struct sandbox_spec spec = {
		.program = o->clang,
		.binds = binds,
		.n_binds = ARRAY_SIZE(binds),
		.root_dir = w->root,
		.cwd = COMPILE_WORK_AT,
		.uid = uid,
		.gid = gid,
		.limits = { .cpu_s = cpu_s,
			    .fsize = COMPILE_OBJECT_MAX * 2ull,
			    .as = 4ull << 30,
			    .nofile = 64 },
	};
	struct sandbox *sb = NULL;
	_cleanup_free_ char *outbuf = malloc(COMPILE_OUTPUT_MAX + 1);
	struct capture cap = { .buf = outbuf };
	uint64_t deadline;
	int pipefd[2], status = 0, r;
	bool killed = false;
	pid_t pid;

	if (!outbuf)
		return set_error(ret_diag, -ENOMEM, "out of memory");
	outbuf[0] = 0;
	r = sandbox_new(&spec, &sb, ret_diag);
	if (r < 0)
		return r;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		sandbox_free(sb);
		return set_error(ret_diag, r, "pipe: %s", strerror(-r));
	}
	argv[0] = (char *)o->clang;
	r = sandbox_spawn(sb, argv, envp, pipefd[1], &pid, ret_diag);
	sandbox_free(sb);
	close(pipefd[1]);
	if (r < 0) {
		close(pipefd[0]);
		return r;
	}
	deadline = now_mono_ns() + (uint64_t)wall_s * 1000000000ull;
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		uint64_t now = now_mono_ns();
		int n;

		if (now >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		n = poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pfd.revents & POLLIN) {
			if (capture_read(&cap, pipefd[0]) <= 0)
				break; /* EOF */
		} else if (pfd.revents & (POLLHUP | POLLERR)) {
			break;
		}
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (cap.dropped) {
		_cleanup_free_ char *more = xasprintf("\n[%zu more bytes of compiler output dropped]",
						      cap.dropped);
		char *grown = realloc(outbuf, cap.len + strlen(more) + 1);

		if (grown) {
			outbuf = grown;
			strcpy(outbuf + cap.len, more);
		}
	}
	ret->status = status;
	ret->killed = killed;
	ret->output = TAKE_PTR(outbuf);
	return 0;
}

/* What a failed run means; 0 when it succeeded. *ret_diag set on failure. */
static int run_verdict(const struct compile_opts *o, struct run_result *res, char **ret_diag)
{
	unsigned cpu_s = o->cpu_s ?: COMPILE_CPU_S, wall_s = o->wall_s ?: COMPILE_WALL_S;
	int st = res->status;

	if (res->killed || (WIFSIGNALED(st) && (WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGKILL)))
		return set_error(ret_diag, -ETIME,
			      "the compiler ran past its limit (%u s CPU, %u s wall) and was killed",
			      cpu_s, wall_s);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ)
		return set_error(ret_diag, -EFBIG, "the compiler's output file ran past its size limit");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (WIFEXITED(st) && WEXITSTATUS(st) >= 126)
			return set_error(ret_diag, -ENOEXEC, "could not run the compiler %s (exit %d)",
				      o->clang, WEXITSTATUS(st));
		*ret_diag = res->output[0] ? TAKE_PTR(res->output)
					   : xstrdup("the compiler failed without output");
		return -ENOEXEC;
	}
	return 0;
}

static int check_opts(const struct compile_opts *o, uid_t *uid, gid_t *gid, char **ret_diag)
{
	if (!o->clang || o->clang[0] != '/' || !o->include_dir || o->include_dir[0] != '/')
		return set_error(ret_diag, -EINVAL,
			      "the compiler and the include directory must be absolute paths");
	*uid = o->uid ?: SANDBOX_NOBODY;
	*gid = o->gid ?: SANDBOX_NOBODY;
	return 0;
}

/*
 * Compile in the sandbox: a fresh work directory holding src, argv run
 * there, its verdict, then the output file out (at most max bytes) read
 * back into *ret_out. *ret_output gets the compiler's messages (NULL: not
 * wanted). On failure *ret_diag says why; a too large output is named by
 * size when say_size.
 */
static int run_in_workdir(const struct compile_opts *o, const char *src, size_t len, char **argv,
			  const char *out, size_t max, const char *what, bool say_size,
			  char **ret_out, size_t *ret_len, char **ret_output, char **ret_diag)
{
	struct workdir w = { .work_fd = -1 };
	struct run_result res = {};
	uid_t uid = (uid_t)-1; /* set by check_opts */
	gid_t gid = (gid_t)-1;
	int r;

	r = check_opts(o, &uid, &gid, ret_diag);
	if (r < 0)
		return r;
	r = workdir_make(o, uid, gid, src, len, &w, ret_diag);
	if (r >= 0)
		r = run_sandboxed(o, &w, uid, gid, argv, &res, ret_diag);
	if (r >= 0)
		r = run_verdict(o, &res, ret_diag);
	if (r >= 0) {
		r = read_output(w.work_fd, out, uid, max, ret_out, ret_len);
		if (r == -EFBIG && say_size)
			*ret_diag = xasprintf("%s is larger than %zu bytes", what, max);
		else if (r < 0)
			*ret_diag = xasprintf("reading %s: %s", what, strerror(-r));
	}
	if (r >= 0 && ret_output)
		*ret_output = TAKE_PTR(res.output);
	free(res.output);
	workdir_remove(&w);
	return r < 0 ? r : 0;
}

int compile_probe(const struct compile_opts *o, const char *src, size_t len, void **ret_obj,
		  size_t *ret_len, char **ret_diag)
{
	char *argv[] = { NULL, "-target", "bpf", "-std=gnu11", "-O2", "-g", ARGUS_BPF_TARGET_ARCH_FLAG,
			 "-nostdinc", "-I" COMPILE_INCLUDE_AT, "-Wall", "-Wno-unused-function",
			 "-Wno-unused-variable", "-fno-color-diagnostics",
			 "-fno-crash-diagnostics", "-ferror-limit=20", "-c", "probe.bpf.c", "-o",
			 "probe.bpf.o", NULL };
	_cleanup_free_ char *obj = NULL, *output = NULL;
	size_t obj_len = 0;
	int r;

	r = compile_check_source(src, len, COMPILE_SOURCE_MAX, ret_diag);
	if (r < 0)
		return r;
	r = run_in_workdir(o, src, len, argv, "probe.bpf.o", COMPILE_OBJECT_MAX, "the object", true,
			   &obj, &obj_len, &output, ret_diag);
	if (r < 0)
		return r;
	*ret_obj = TAKE_PTR(obj);
	*ret_len = obj_len;
	*ret_diag = output && output[0] ? TAKE_PTR(output) : NULL;
	return 0;
}

int compile_dependencies(const struct compile_opts *o, const char *src, size_t len,
			 char ***ret_deps, size_t *ret_n, char **ret_diag)
{
	/* the flags of compile_probe that steer the preprocessor, then -M -MG into a file */
	char *argv[] = { NULL, "-target", "bpf", "-std=gnu11", ARGUS_BPF_TARGET_ARCH_FLAG, "-nostdinc",
			 "-I" COMPILE_INCLUDE_AT, "-fno-color-diagnostics", "-fno-crash-diagnostics",
			 "-ferror-limit=20", "-M", "-MG", "-MF", "probe.d", "probe.bpf.c", NULL };
	_cleanup_free_ char *text = NULL;
	size_t text_len;
	int r;

	if (len == 0 || len > COMPILE_SOURCE_MAX)
		return set_error(ret_diag, -E2BIG, "the source is %zu bytes; 1 to %d are accepted", len,
				 COMPILE_SOURCE_MAX);
	r = run_in_workdir(o, src, len, argv, "probe.d", COMPILE_DEPS_MAX, "the dependencies", false,
			   &text, &text_len, NULL, ret_diag);
	if (r < 0)
		return r;
	r = parse_deps(text, ret_deps, ret_n);
	*ret_diag = r < 0 ? xstrdup("the dependency list could not be parsed") : NULL;
	return r;
}
