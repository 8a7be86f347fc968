// SPDX-License-Identifier: MIT
/*
 * Authored probe -> object: the source check, then clang in a sandbox
 * directory with limits. See compile.h for what the compiler can read and
 * why.
 */
#include "daemon/compile.h"
#include "daemon/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* The only headers an authored probe may include, by the name it writes. */
static const char *const allowed_headers[] = {
	"vmlinux.h",	     "argus_authored.h",    "bpf/bpf_helpers.h",
	"bpf/bpf_tracing.h", "bpf/bpf_core_read.h",
};

/* Directives that cannot name a file. */
static const char *const allowed_directives[] = { "define", "undef", "if",    "ifdef",
						  "ifndef", "elif",  "else",  "endif",
						  "error",  "warning", "include", "pragma" };

/* Pragmas about loops; every other pragma (GCC dependency, clang module, ...) is refused. */
static const char *const allowed_pragmas[] = { "unroll", "nounroll", "clang loop", "GCC unroll" };

/* Identifiers that reach files or build directives from macros. */
static const char *const banned_identifiers[] = { "__has_include", "__has_include_next",
						  "__has_embed", "_Pragma", "__pragma" };

static int refuse(char **ret_err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char **ret_err, int r, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	*ret_err = msg ?: xstrdup("source refused");
	return r;
}

/*
 * The source as the preprocessor's directive parser sees it: line splices
 * removed, comments replaced by a space, literals kept and marked. For each
 * character: the line it came from, whether a splice preceded it on its
 * logical line, whether it is inside a literal.
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

static int clean_source(const char *src, size_t len, struct clean *ret)
{
	enum { NORMAL, STRING, CHAR, LINE_COMMENT, BLOCK_COMMENT } st = NORMAL;
	struct clean k = { .c = malloc(len + 1),
			   .line = calloc(len + 1, sizeof(unsigned)),
			   .lit = calloc(len + 1, sizeof(bool)),
			   .spliced = calloc(len + 1, sizeof(bool)) };
	unsigned line = 1;
	bool splice_on_line = false;
	size_t i = 0;

	if (!k.c || !k.line || !k.lit || !k.spliced) {
		clean_free(&k);
		return -ENOMEM;
	}
#define EMIT(ch, in_lit)                                                                           \
	do {                                                                                       \
		k.c[k.n] = (ch);                                                                   \
		k.line[k.n] = line;                                                                \
		k.lit[k.n] = (in_lit);                                                             \
		k.spliced[k.n] = splice_on_line;                                                   \
		k.n++;                                                                             \
	} while (0)
	while (i < len) {
		char ch = src[i];

		/* phase 2: backslash-newline joins lines, everywhere */
		if (ch == '\\' && (i + 1 < len && src[i + 1] == '\n')) {
			i += 2;
			line++;
			splice_on_line = true;
			continue;
		}
		if (ch == '\\' && i + 2 < len && src[i + 1] == '\r' && src[i + 2] == '\n') {
			i += 3;
			line++;
			splice_on_line = true;
			continue;
		}
		switch (st) {
		case NORMAL:
			if (ch == '/' && i + 1 < len && src[i + 1] == '/') {
				st = LINE_COMMENT;
				i += 2;
				continue;
			}
			if (ch == '/' && i + 1 < len && src[i + 1] == '*') {
				st = BLOCK_COMMENT;
				EMIT(' ', false);
				i += 2;
				continue;
			}
			if (ch == '"')
				st = STRING;
			else if (ch == '\'')
				st = CHAR;
			EMIT(ch, st != NORMAL);
			break;
		case STRING:
		case CHAR:
			EMIT(ch, true);
			if (ch == '\\' && i + 1 < len && src[i + 1] != '\n') {
				i++;
				EMIT(src[i], true);
			} else if ((st == STRING && ch == '"') || (st == CHAR && ch == '\'') ||
				   ch == '\n') {
				st = NORMAL;
			}
			break;
		case LINE_COMMENT:
			if (ch == '\n') {
				st = NORMAL;
				EMIT('\n', false);
			}
			break;
		case BLOCK_COMMENT:
			if (ch == '*' && i + 1 < len && src[i + 1] == '/') {
				st = NORMAL;
				i += 2;
				continue;
			}
			break;
		}
		if (ch == '\n') {
			line++;
			/* a block comment joins lines: the logical line goes on */
			if (st != BLOCK_COMMENT)
				splice_on_line = false;
		}
		i++;
	}
#undef EMIT
	k.c[k.n] = 0;
	*ret = k;
	return 0;
}

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

/* One logical line that starts with '#' (or "%:"): [p, e). */
static int check_directive(const struct clean *k, size_t p, size_t e, char **ret_err)
{
	unsigned line = k->line[p];
	size_t q, name_len;

	if (k->spliced[p] || (e > p && k->spliced[e - 1]))
		return refuse(ret_err, -EINVAL,
			      "line %u: a backslash-newline inside a preprocessor directive is not "
			      "allowed: write each directive on one line",
			      line);
	p += k->c[p] == '#' ? 1 : 2;
	while (p < e && (k->c[p] == ' ' || k->c[p] == '\t'))
		p++;
	for (q = p; q < e && is_ident(k->c[q]); q++)
		;
	name_len = q - p;
	if (name_len == 0)
		return 0; /* the null directive */
	if (!in_list(k->c + p, name_len, allowed_directives, ARRAY_SIZE(allowed_directives)))
		return refuse(ret_err, -EINVAL, "line %u: the directive #%.*s is not allowed", line,
			      (int)name_len, k->c + p);
	if (name_len == 7 && strncmp(k->c + p, "include", 7) == 0) {
		char close;
		size_t hs, he;

		p = q;
		while (p < e && (k->c[p] == ' ' || k->c[p] == '\t'))
			p++;
		if (p >= e || (k->c[p] != '"' && k->c[p] != '<'))
			return refuse(ret_err, -EINVAL,
				      "line %u: #include must name a header literally (\"...\" or <...>)",
				      line);
		close = k->c[p] == '"' ? '"' : '>';
		hs = p + 1;
		for (he = hs; he < e && k->c[he] != close; he++)
			;
		if (he >= e)
			return refuse(ret_err, -EINVAL, "line %u: unterminated #include", line);
		if (!in_list(k->c + hs, he - hs, allowed_headers, ARRAY_SIZE(allowed_headers)))
			return refuse(ret_err, -EINVAL,
				      "line %u: #include of %.*s is not allowed; only vmlinux.h, "
				      "argus_authored.h, bpf/bpf_helpers.h, bpf/bpf_tracing.h and "
				      "bpf/bpf_core_read.h",
				      line, (int)(he - hs > 200 ? 200 : he - hs), k->c + hs);
		for (p = he + 1; p < e; p++)
			if (k->c[p] != ' ' && k->c[p] != '\t' && k->c[p] != '\r')
				return refuse(ret_err, -EINVAL,
					      "line %u: nothing may follow the header name", line);
	} else if (name_len == 6 && strncmp(k->c + p, "pragma", 6) == 0) {
		size_t i;

		p = q;
		while (p < e && (k->c[p] == ' ' || k->c[p] == '\t'))
			p++;
		for (i = 0; i < ARRAY_SIZE(allowed_pragmas); i++) {
			size_t l = strlen(allowed_pragmas[i]);

			if (e - p >= l && strncmp(k->c + p, allowed_pragmas[i], l) == 0 &&
			    (e - p == l || !is_ident(k->c[p + l])))
				return 0;
		}
		return refuse(ret_err, -EINVAL,
			      "line %u: only loop pragmas (#pragma unroll, #pragma clang loop) are "
			      "allowed",
			      line);
	}
	return 0;
}

int compile_check_source(const char *src, size_t len, size_t max, char **ret_err)
{
	struct clean k;
	unsigned line = 1;
	size_t i, p;
	int r;

	if (len == 0)
		return refuse(ret_err, -EINVAL, "the source is empty");
	if (len > max)
		return refuse(ret_err, -E2BIG, "the source is %zu bytes; at most %zu are accepted",
			      len, max);
	for (i = 0; i < len; i++) {
		unsigned char ch = src[i];

		if (ch == '\n')
			line++;
		else if (ch != '\t' && ch != '\r' && (ch < 0x20 || ch > 0x7e))
			return refuse(ret_err, -EINVAL,
				      "line %u: byte 0x%02x: only printable ASCII is accepted", line, ch);
	}
	r = clean_source(src, len, &k);
	if (r < 0)
		return refuse(ret_err, r, "out of memory");

	/* directives: the first token of a logical line is '#' or the digraph "%:" */
	for (p = 0; p < k.n;) {
		size_t e = p, s = p;

		while (e < k.n && k.c[e] != '\n')
			e++;
		while (s < e && (k.c[s] == ' ' || k.c[s] == '\t' || k.c[s] == '\r'))
			s++;
		if (s < e && !k.lit[s] &&
		    (k.c[s] == '#' || (k.c[s] == '%' && s + 1 < e && k.c[s + 1] == ':'))) {
			r = check_directive(&k, s, e, ret_err);
			if (r < 0)
				goto out;
		}
		p = e + 1;
	}
	/* outside literals: no identifiers that reach files, no pasting that could build them */
	for (p = 0; p < k.n; p++) {
		size_t q;

		if (k.lit[p])
			continue;
		if (k.c[p] == '%' && p + 1 < k.n && k.c[p + 1] == ':') {
			r = refuse(ret_err, -EINVAL, "line %u: digraphs (%%:) are not allowed",
				   k.line[p]);
			goto out;
		}
		if (k.c[p] == '#' && p + 1 < k.n && k.c[p + 1] == '#') {
			r = refuse(ret_err, -EINVAL,
				   "line %u: token pasting (##) is not allowed in authored probes",
				   k.line[p]);
			goto out;
		}
		if (!is_ident(k.c[p]) || (p > 0 && is_ident(k.c[p - 1])))
			continue;
		for (q = p; q < k.n && is_ident(k.c[q]); q++)
			;
		if (in_list(k.c + p, q - p, banned_identifiers, ARRAY_SIZE(banned_identifiers))) {
			r = refuse(ret_err, -EINVAL, "line %u: %.*s is not allowed", k.line[p],
				   (int)(q - p), k.c + p);
			goto out;
		}
	}
	r = 0;
out:
	clean_free(&k);
	return r;
}

/* ---- the sandbox ---- */

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

/* Remove the sandbox: it holds only files this module created. */
static void sandbox_remove(const char *dir)
{
	static const char *const files[] = { "probe.bpf.c", "probe.bpf.o" };
	size_t i;

	if (!dir)
		return;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, files[i]);

		unlink(p);
	}
	rmdir(dir);
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

/* In the child, between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
run_clang(const char *dir, int out_fd, char *const argv[], unsigned cpu_s)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "TMPDIR=.", NULL };
	struct rlimit cpu = { cpu_s, cpu_s + 1 };
	struct rlimit fsize = { COMPILE_OBJECT_MAX * 2, COMPILE_OBJECT_MAX * 2 };
	struct rlimit as = { 4ull << 30, 4ull << 30 };
	struct rlimit core = { 0, 0 };
	struct rlimit nofile = { 64, 64 };
	int nul;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (setrlimit(RLIMIT_CPU, &cpu) < 0 || setrlimit(RLIMIT_FSIZE, &fsize) < 0 ||
	    setrlimit(RLIMIT_AS, &as) < 0 || setrlimit(RLIMIT_CORE, &core) < 0 ||
	    setrlimit(RLIMIT_NOFILE, &nofile) < 0)
		_exit(126);
	if (chdir(dir) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(126);
	nul = open("/dev/null", O_RDONLY);
	if (nul < 0 || dup2(nul, 0) < 0)
		_exit(126);
	closefrom(3);
	execve(argv[0], argv, envp);
	_exit(127);
}

int compile_probe(const struct compile_opts *o, const char *src, size_t len, void **ret_obj,
		  size_t *ret_len, char **ret_diag)
{
	_cleanup_free_ char *dir = NULL, *src_path = NULL, *obj_path = NULL, *inc = NULL;
	_cleanup_free_ char *outbuf = NULL, *obj = NULL;
	struct capture cap;
	unsigned cpu_s = o->cpu_s ?: COMPILE_CPU_S, wall_s = o->wall_s ?: COMPILE_WALL_S;
	uint64_t deadline;
	_cleanup_close_ int fd = -1;
	int pipefd[2], status = 0, r;
	bool killed = false;
	size_t obj_len;
	pid_t pid;

	r = compile_check_source(src, len, COMPILE_SOURCE_MAX, ret_diag);
	if (r < 0)
		return r;
	if (!o->clang || o->clang[0] != '/' || !o->include_dir || o->include_dir[0] != '/') {
		*ret_diag = xstrdup("the compiler and the include directory must be absolute paths");
		return -EINVAL;
	}

	dir = xasprintf("%s/argusd-probe-XXXXXX", o->tmp_parent ?: "/tmp");
	if (!mkdtemp(dir)) { /* mode 0700, a fresh name */
		r = -errno;
		*ret_diag = xasprintf("creating the compile directory: %s", strerror(-r));
		return r;
	}
	src_path = xasprintf("%s/probe.bpf.c", dir);
	obj_path = xasprintf("%s/probe.bpf.o", dir);
	fd = open(src_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, src, len) < 0) {
		r = -errno ?: -EIO;
		*ret_diag = xasprintf("writing the source: %s", strerror(-r));
		goto out;
	}
	close(TAKE_FD(fd));

	inc = xasprintf("-I%s", o->include_dir);
	{
		char *argv[] = { (char *)o->clang, "-target", "bpf", "-O2", "-g",
				 "-D__TARGET_ARCH_x86", "-nostdinc", inc, "-Wall",
				 "-Wno-unused-function", "-Wno-unused-variable",
				 "-fno-color-diagnostics", "-ferror-limit=20", "-c", "probe.bpf.c",
				 "-o", "probe.bpf.o", NULL };

		outbuf = malloc(COMPILE_OUTPUT_MAX + 1);
		if (!outbuf) {
			r = -ENOMEM;
			*ret_diag = xstrdup("out of memory");
			goto out;
		}
		outbuf[0] = 0;
		cap = (struct capture){ .buf = outbuf };
		if (pipe2(pipefd, O_CLOEXEC) < 0) {
			r = -errno;
			*ret_diag = xasprintf("pipe: %s", strerror(-r));
			goto out;
		}
		pid = fork();
		if (pid < 0) {
			r = -errno;
			close(pipefd[0]);
			close(pipefd[1]);
			*ret_diag = xasprintf("fork: %s", strerror(-r));
			goto out;
		}
		if (pid == 0)
			run_clang(dir, pipefd[1], argv, cpu_s);
	}
	close(pipefd[1]);
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

		outbuf = realloc(outbuf, cap.len + strlen(more) + 1);
		if (outbuf)
			strcpy(outbuf + cap.len, more);
	}
	if (killed || (WIFSIGNALED(status) &&
		       (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))) {
		r = -ETIME;
		*ret_diag = xasprintf("the compiler ran past its limit (%u s CPU, %u s wall) and was "
				      "killed",
				      cpu_s, wall_s);
		goto out;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) {
		r = -EFBIG;
		*ret_diag = xstrdup("the compiler's output file ran past its size limit");
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		r = -ENOEXEC;
		if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
			*ret_diag = xasprintf("could not run the compiler %s (exit %d)", o->clang,
					      WEXITSTATUS(status));
		else
			*ret_diag = outbuf && outbuf[0] ? TAKE_PTR(outbuf)
							: xstrdup("the compiler failed without output");
		goto out;
	}
	r = read_file_bounded(obj_path, COMPILE_OBJECT_MAX, &obj, &obj_len);
	if (r < 0) {
		*ret_diag = r == -EFBIG ? xasprintf("the object is larger than %d bytes",
						     COMPILE_OBJECT_MAX)
					: xasprintf("reading the object: %s", strerror(-r));
		goto out;
	}
	*ret_obj = TAKE_PTR(obj);
	*ret_len = obj_len;
	*ret_diag = outbuf && outbuf[0] ? TAKE_PTR(outbuf) : NULL;
	r = 0;
out:
	sandbox_remove(dir);
	return r;
}
