// SPDX-License-Identifier: MIT
/*
 * The compiler of authored probes: the source check (what it lets clang
 * read), the differential check against clang's own preprocessor run in
 * the sandbox (every accepted source names only the allowed headers), and
 * the sandbox itself: a stand-in compiler reports its ids, capabilities,
 * namespaces and every path it can see while the test looks at it from
 * outside; the real clang, handed assembler directives past the check,
 * cannot reach the files they name; and without user namespaces nothing
 * runs at all.
 */
#include "daemon/compile.h"
#include "daemon/sandbox.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

static char clang_path[256], include_dir[512], fake_path[512], authored_dir[512];
static char scratch[256]; /* this test's temporary directory */

/* ---- the source check ---- */

static bool accepted_n(const char *src, size_t len)
{
	char *err = NULL;
	int r = compile_check_source(src, len, COMPILE_SOURCE_MAX, &err);

	free(err);
	return r == 0;
}

static bool accepted(const char *src)
{
	return accepted_n(src, strlen(src));
}

#define REFUSED(src, needle)                                                                       \
	do {                                                                                       \
		char *err_ = NULL;                                                                 \
		int r_ = compile_check_source(src, strlen(src), COMPILE_SOURCE_MAX, &err_);        \
		CHECKF(r_ == -EINVAL && err_ && strstr(err_, needle), "%s -> %d %s", #src, r_,     \
		       err_ ?: "(accepted)");                                                      \
		free(err_);                                                                        \
	} while (0)

static void test_source_check(void)
{
	char *err = NULL, *big;

	tap_subtest("source_check");
	CHECK(accepted("#include \"argus_authored.h\"\nint x;\n"));
	CHECK(accepted("#include <vmlinux.h>\n#include <bpf/bpf_helpers.h>\n"));
	CHECK(accepted("#define A 1\n#if A\n#endif\n#pragma unroll\n"));
	CHECK(accepted("#define S(x) #x\nconst char *s = S(a);\n"));
	/* a string or a comment that looks like a directive or asm is not one */
	CHECK(accepted("const char s[] = \"#include </etc/passwd>\";\n"));
	CHECK(accepted("int a; // #include </etc/passwd>\n"));
	CHECK(accepted("const char *s = \"asm(\\\".incbin \\\\\\\"/etc/shadow\\\\\\\"\\\")\";\n"));
	CHECK(accepted("/* asm(\".include \\\"/etc/passwd\\\"\") */ int x;\n"));
	CHECK(accepted("int asmx, x_asm, my__asm__;\n"));
	CHECK(accepted("const char *a = u8\"x\", *b = L\"y\"; int c = L'z', d = u'q';\n"));
	/* line ends in CRLF, and a directive after a comment at the start of a line */
	CHECK(accepted("#include \"argus_authored.h\"\r\nint x;\r\n"));
	CHECK(accepted("/* a\n comment */ #include \"argus_authored.h\"\n"));

	/* files */
	REFUSED("#include \"/etc/passwd\"\n", "not allowed");
	REFUSED("#include <stdio.h>\n", "not allowed");
	REFUSED("#include \"../bpf/argus_authored.h\"\n", "not allowed");
	REFUSED("#include \"pidns.h\"\n", "not allowed");
	REFUSED("#include_next <vmlinux.h>\n", "#include_next");
	REFUSED("#import \"argus_authored.h\"\n", "#import");
	REFUSED("#embed \"/etc/shadow\"\n", "#embed");
	REFUSED("#line 1 \"/etc/passwd\"\n", "#line");
	REFUSED("# 1 \"/etc/passwd\"\n", "#1");
	REFUSED("# \"/etc/passwd\"\n", "directive name");
	REFUSED("#define F </etc/passwd>\n#include F\n", "literally");
	REFUSED("#include \"argus_authored.h\" \"/etc/passwd\"\n", "nothing may follow");
	REFUSED("#inc\\\nlude </etc/passwd>\n", "backslash-newline");
	REFUSED("#include \\\n\"argus_authored.h\"\n", "backslash-newline");
	REFUSED("#include \\  \n\"/etc/passwd\"\n", "backslash-newline");
	REFUSED("/* a comment */ #include </etc/passwd>\n", "not allowed");
	REFUSED("/* a comment\n spanning lines */ #include </etc/passwd>\n", "not allowed");
	REFUSED("int x; /*\n*/ #include </etc/passwd>\n", "outside a preprocessor directive");
	REFUSED("%:include </etc/passwd>\n", "digraphs");
	REFUSED("#define P %:%: x\n", "digraphs");
	REFUSED("?\?=include </etc/passwd>\n", "trigraphs");
	REFUSED("int a; // ?\?/\n#include </etc/passwd>\n", "trigraphs");
	REFUSED("#if __has_include(</etc/passwd>)\n#endif\n", "__has_include");
	REFUSED("#if __has_include_next(<x>)\n#endif\n", "__has_include_next");
	REFUSED("#if __has_embed(\"/etc/shadow\")\n#endif\n", "__has_embed");
	REFUSED("_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", "_Pragma");
	REFUSED("#pragma GCC dependency \"/etc/passwd\"\n", "loop pragmas");
	REFUSED("#pragma clang module import x\n", "loop pragmas");
	REFUSED("#pragma GCC system_header\n", "loop pragmas");
	/* lone carriage returns: clang ends the line there, so the directive is real */
	REFUSED("int x;\r#include \"/etc/shadow\"\n", "carriage return");
	REFUSED("int x; // \r#include \"/etc/shadow\"\n", "carriage return");
	REFUSED("int x;\n\r", "carriage return");

	/* the assembler: .incbin and .include read files */
	REFUSED("asm(\".incbin \\\"/etc/shadow\\\"\");\n", "asm is not allowed");
	REFUSED("__asm__(\".include \\\"/etc/passwd\\\"\");\n", "__asm__ is not allowed");
	REFUSED("void f(void) { __asm volatile(\"\"); }\n", "__asm is not allowed");
	REFUSED("int x __asm(\"y\");\n", "__asm is not allowed");
	REFUSED("#define A asm\n", "asm is not allowed");
	REFUSED("a\\\nsm(\".incbin \\\"/etc/shadow\\\"\");\n", "asm is not allowed");
	REFUSED("a\\  \nsm(\".incbin \\\"/etc/shadow\\\"\");\n", "asm is not allowed");
	REFUSED("a\\\r\nsm(\"\");\n", "asm is not allowed");
	/* token pasting that could spell asm, _Pragma or __has_include */
	REFUSED("#define P(a, b) a##b\n", "##");
	REFUSED("#include \"argus_authored.h\"\n___bpf_concat(as, m)(\".incbin \\\"/x\\\"\");\n",
		"___bpf_concat");
	REFUSED("#include \"argus_authored.h\"\n___concat(_Pra, gma)(\"x\")\n", "___concat");
	REFUSED("#include \"argus_authored.h\"\n___apply(as, m)(\"\")\n", "___apply");
	/* what the check and clang could read differently */
	REFUSED("const char *s = R\"(\" asm(\"\") \")\";\n", "raw strings");
	REFUSED("int x = 1'000;\n", "after a name or number");
	REFUSED("int \\u0061sm;\n", "backslash outside a literal");

	REFUSED("int caf\xc3\xa9;\n", "printable ASCII");
	CHECK(compile_check_source("int a;\0int b;\n", 14, 100, &err) == -EINVAL);
	free(err);
	err = NULL;
	CHECK(compile_check_source("", 0, 100, &err) == -EINVAL);
	free(err);
	err = NULL;
	big = malloc(COMPILE_SOURCE_MAX + 2);
	REQUIRE(big);
	memset(big, ' ', COMPILE_SOURCE_MAX + 1);
	big[COMPILE_SOURCE_MAX + 1] = 0;
	CHECK(compile_check_source(big, COMPILE_SOURCE_MAX + 1, COMPILE_SOURCE_MAX, &err) ==
	      -E2BIG);
	CHECKF(err && strstr(err, "at most"), "%s", err ?: "");
	free(err);
	free(big);
}

/* ---- the differential check ---- */

static struct compile_opts real_opts(void)
{
	return (struct compile_opts){ .clang = clang_path, .include_dir = include_dir,
				      .tmp_parent = scratch, .wall_s = 60 };
}

/* The dependencies of src by clang in the sandbox; 0 allowed, -EPERM not, <0 clang failed. */
static int deps_verdict(const char *src, size_t len, char **ret_why)
{
	struct compile_opts o = real_opts();
	char **deps = NULL, *diag = NULL;
	size_t n = 0;
	int r;

	*ret_why = NULL;
	r = compile_dependencies(&o, src, len, &deps, &n, &diag);
	if (r < 0) {
		*ret_why = diag;
		return r == -EPERM ? -EIO : r;
	}
	free(diag);
	r = compile_check_dependencies(deps, n, ret_why);
	compile_deps_free(deps, n);
	return r;
}

/* Accepted by the check: clang names nothing but the allowed headers. */
static void differential_accepted(const char *what, const char *src, size_t len)
{
	char *why = NULL;
	int r;

	if (!accepted_n(src, len))
		return;
	r = deps_verdict(src, len, &why);
	/* a source clang cannot preprocess names nothing either; it must not be a refusal */
	CHECKF(r != -EPERM, "%s: accepted by the check, yet: %s", what, why ?: "");
	free(why);
}

/* Refused by the check, and rightly: clang would have named a file. */
static void differential_refused(const char *what, const char *src)
{
	char *why = NULL;
	int r;

	CHECKF(!accepted(src), "%s: accepted", what);
	r = deps_verdict(src, strlen(src), &why);
	CHECKF(r == -EPERM && why && strstr(why, "/etc/passwd"),
	       "%s: clang's preprocessor does not name the file: %d %s", what, r, why ?: "");
	free(why);
}

static char *read_all(const char *path, size_t *len)
{
	char *buf = NULL;

	if (read_file_bounded(path, COMPILE_SOURCE_MAX, &buf, len) < 0)
		return NULL;
	return buf;
}

static void test_differential(void)
{
	static const char *const tricky[] = {
		"#include \"argus_authored.h\"\r\nint x;\r\n",
		"/* a\n comment */ #include \"argus_authored.h\"\n",
		"#include \"argus_authored.h\" // \"/etc/passwd\"\n",
		"#include \"argus_authored.h\" /* </etc/passwd> */\n",
		"const char *s = \"\\\n#include </etc/passwd>\";\n",
		"// a comment \\\n#include </etc/passwd>\n",
		"#define X \"/etc/passwd\"\nconst char *p = X;\n",
		"#if 0\n#include \"argus_authored.h\"\n#endif\n",
		"char c = '\"'; const char *s = \"'\"; // \"\n#include \"vmlinux.h\"\n",
		"#include <bpf/bpf_helpers.h>\n#include <bpf/bpf_tracing.h>\n"
		"#include <bpf/bpf_core_read.h>\n#include \"vmlinux.h\"\n",
	};
	static const char *const fragments[] = {
		"#include ", "\"argus_authored.h\"", "<vmlinux.h>", "\"/etc/passwd\"",
		"</etc/passwd>", "/*", "*/", "//", "\\\n", "\\ \n", "\r\n", "\r", "\n", "\"", "'",
		" ", "\t", "%:", "?\?/", "#", "x", "asm", "a", "sm", "(", ")", ";", "_Pragma",
		"#define P ", "P",
	};
	DIR *d;
	struct dirent *e;
	unsigned n_files = 0, i, seed = 12345, n_accepted = 0;
	char path[1024];

	tap_subtest("differential");
	/* every accepted source of tests/authored/ */
	d = opendir(authored_dir);
	REQUIRE(d);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), len = 0;
		char *src;

		if (l < 6 || strcmp(e->d_name + l - 6, ".bpf.c"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", authored_dir, e->d_name);
		src = read_all(path, &len);
		REQUIRE(src);
		CHECKF(accepted_n(src, len), "%s is refused by the check", e->d_name);
		{
			char *why = NULL;
			int r = deps_verdict(src, len, &why);

			CHECKF(r == 0, "%s: %d %s", e->d_name, r, why ?: "");
			free(why);
		}
		free(src);
		n_files++;
	}
	closedir(d);
	CHECKF(n_files >= 1, "no sources in %s", authored_dir);

	for (i = 0; i < ARRAY_SIZE(tricky); i++) {
		char *why = NULL;
		int r;

		CHECKF(accepted(tricky[i]), "tricky %u is refused", i);
		r = deps_verdict(tricky[i], strlen(tricky[i]), &why);
		CHECKF(r == 0, "tricky %u: %d %s", i, r, why ?: "");
		free(why);
	}

	/* the constructs the check refuses name the file indeed */
	differential_refused("lone CR", "int x;\r#include \"/etc/passwd\"\n");
	differential_refused("lone CR in a comment", "int x; // \r#include \"/etc/passwd\"\n");
	differential_refused("splice in a directive", "#inc\\\nlude \"/etc/passwd\"\n");
	differential_refused("blank before the splice", "#include \\  \n\"/etc/passwd\"\n");
	differential_refused("digraph", "%:include \"/etc/passwd\"\n");
	differential_refused("#include_next", "#include_next \"/etc/passwd\"\n");
	differential_refused("#import", "#import \"/etc/passwd\"\n");
	differential_refused("macro header", "#define F \"/etc/passwd\"\n#include F\n");

	/* random sources from fragments that matter to the lexer, with a fixed seed */
	for (i = 0; i < 120; i++) {
		char src[512];
		size_t len = 0, k, parts = 2 + rand_r(&seed) % 14;

		for (k = 0; k < parts; k++) {
			const char *f = fragments[rand_r(&seed) % ARRAY_SIZE(fragments)];
			size_t l = strlen(f);

			if (len + l + 2 >= sizeof(src))
				break;
			memcpy(src + len, f, l);
			len += l;
		}
		src[len++] = '\n';
		src[len] = 0;
		if (accepted_n(src, len))
			n_accepted++;
		differential_accepted("random", src, len);
	}
	fprintf(stderr, "# differential: %u files, %zu tricky, 120 random (%u accepted)\n",
		n_files, ARRAY_SIZE(tricky), n_accepted);
}

/* ---- the sandbox, seen by a stand-in compiler and from outside ---- */

struct inspect {
	char fifo_out[600], fifo_in[600];
	bool ready;
	int ns_differ, ns_checked;
	char status[4096];
};

/* The fake's host pid: a process running fake_path, found through /proc. */
static pid_t find_fake(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char link[300], target[600];
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "/proc/%s/exe", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strcmp(target, fake_path) == 0)
			found = atoi(e->d_name);
	}
	closedir(d);
	return found;
}

static void *inspector(void *arg)
{
	static const char *const kinds[] = { "user", "mnt", "net", "ipc", "pid", "uts" };
	struct inspect *in = arg;
	int fd = open(in->fifo_out, O_RDONLY | O_NONBLOCK | O_CLOEXEC), w = -1;
	char buf[64];
	uint64_t deadline = now_mono_ns() + 60ull * 1000000000ull;
	pid_t pid;
	size_t i;

	if (fd < 0)
		return NULL;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (now_mono_ns() > deadline)
			break;
		if (poll(&p, 1, 1000) > 0 && read(fd, buf, sizeof(buf)) > 0) {
			in->ready = true;
			break;
		}
	}
	close(fd);
	if (in->ready && (pid = find_fake()) > 0) {
		char path[128], mine[128], theirs[128];
		ssize_t a, b;
		_cleanup_free_ char *status = NULL;
		size_t len = 0;

		for (i = 0; i < ARRAY_SIZE(kinds); i++) {
			snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i]);
			a = readlink(path, mine, sizeof(mine) - 1);
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kinds[i]);
			b = readlink(path, theirs, sizeof(theirs) - 1);
			if (a <= 0 || b <= 0)
				continue;
			mine[a] = theirs[b] = 0;
			in->ns_checked++;
			if (strcmp(mine, theirs) != 0)
				in->ns_differ++;
			else
				fprintf(stderr, "# same %s namespace: %s\n", kinds[i], mine);
		}
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		if (read_file_bounded(path, sizeof(in->status) - 1, &status, &len) == 0)
			memcpy(in->status, status, len + 1);
	}
	/* let it finish */
	while (now_mono_ns() < deadline) {
		w = open(in->fifo_in, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (w >= 0 || errno != ENXIO)
			break;
		usleep(20000);
	}
	if (w >= 0) {
		if (write(w, "g", 1) < 0) {
			/* it may be gone already */
		}
		close(w);
	}
	return NULL;
}

/* "key=value" from the fake's report; "" when absent. */
static const char *report_get(const char *report, const char *key, char *buf, size_t len)
{
	size_t l = strlen(key);
	const char *p = report;

	buf[0] = 0;
	while (p && *p) {
		if (!strncmp(p, key, l) && p[l] == '=') {
			size_t n = strcspn(p + l + 1, "\n");

			snprintf(buf, len, "%.*s", (int)n, p + l + 1);
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return buf;
}

static const char *status_get(const char *status, const char *key, char *buf, size_t len)
{
	size_t l = strlen(key);
	const char *p = status;

	buf[0] = 0;
	while (p && *p) {
		if (!strncmp(p, key, l) && p[l] == ':') {
			const char *v = p + l + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(buf, len, "%.*s", (int)strcspn(v, "\n"), v);
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return buf;
}

static bool plan_has(const char *const *paths, size_t n, const char *p)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(paths[i], p))
			return true;
	return false;
}

static bool under(const char *p, const char *dir)
{
	size_t l = strlen(dir);

	return !strncmp(p, dir, l) && (p[l] == 0 || p[l] == '/');
}

static void test_sandbox_identity(void)
{
	char inc[512], priv[512], secret_root[256], secret_priv[600], conf[600], v[256];
	char abstract[64], parent[512], root_probe[600];
	struct inspect in = {};
	struct sockaddr_un ua = { .sun_family = AF_UNIX };
	struct sockaddr_in ta = { .sin_family = AF_INET };
	socklen_t tl = sizeof(ta);
	struct compile_opts o;
	void *obj = NULL;
	size_t len = 0, n_paths, i;
	char *diag = NULL;
	const char *p;
	const char *const *paths;
	struct sandbox *sb = NULL;
	pthread_t th;
	int us, ts, r, fd;
	FILE *f;

	tap_subtest("sandbox_identity");
	snprintf(inc, sizeof(inc), "%s/include", scratch);
	snprintf(priv, sizeof(priv), "%s/private", scratch);
	snprintf(parent, sizeof(parent), "%s/compile", scratch);
	REQUIRE(mkdir(inc, 0755) == 0 && mkdir(priv, 0700) == 0 && mkdir(parent, 0700) == 0);
	/* root-only files: one in /root, one under a 0700 directory */
	snprintf(secret_root, sizeof(secret_root), "/root/argus-test-compile-%d", (int)getpid());
	snprintf(secret_priv, sizeof(secret_priv), "%s/secret", priv);
	fd = open(secret_root, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && write(fd, "TOPSECRET\n", 10) == 10);
	close(fd);
	fd = open(secret_priv, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && write(fd, "TOPSECRET\n", 10) == 10);
	close(fd);
	/* the daemon's network namespace: an abstract socket and a loopback port */
	snprintf(abstract, sizeof(abstract), "argus-test-compile-%d", (int)getpid());
	memcpy(ua.sun_path + 1, abstract, strlen(abstract));
	us = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(us >= 0 &&
		bind(us, (void *)&ua, offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract)) ==
			0 &&
		listen(us, 4) == 0);
	ta.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ts = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(ts >= 0 && bind(ts, (void *)&ta, sizeof(ta)) == 0 && listen(ts, 4) == 0 &&
		getsockname(ts, (void *)&ta, &tl) == 0);
	/* what the fake is told, and the FIFOs it meets the inspector at */
	snprintf(in.fifo_out, sizeof(in.fifo_out), "%s/out.fifo", inc);
	snprintf(in.fifo_in, sizeof(in.fifo_in), "%s/in.fifo", inc);
	REQUIRE(mkfifo(in.fifo_out, 0666) == 0 && mkfifo(in.fifo_in, 0666) == 0);
	REQUIRE(chmod(in.fifo_out, 0666) == 0 && chmod(in.fifo_in, 0666) == 0);
	snprintf(conf, sizeof(conf), "%s/fake-clang.conf", inc);
	f = fopen(conf, "w");
	REQUIRE(f);
	fprintf(f, "secret=%s\nabstract=%s\nport=%d\nfifo_out=out.fifo\nfifo_in=in.fifo\n",
		secret_root, abstract, ntohs(ta.sin_port));
	fclose(f);
	chmod(conf, 0644);

	REQUIRE(pthread_create(&th, NULL, inspector, &in) == 0);
	o = (struct compile_opts){ .clang = fake_path, .include_dir = inc, .tmp_parent = parent,
				   .wall_s = 90 };
	r = compile_probe(&o, "int x;\n", 7, &obj, &len, &diag);
	pthread_join(th, NULL);
	CHECKF(r == -ENOEXEC && diag && strstr(diag, "fake-bpf-clang"), "%d %s", r, diag ?: "");
	fprintf(stderr, "# the fake's report:\n%s\n", diag ?: "");
	REQUIRE(diag);

	/* its own view */
	CHECK_STREQ(report_get(diag, "conf", v, sizeof(v)), "ok", "conf");
	CHECK_STREQ(report_get(diag, "uid", v, sizeof(v)), "65534", "uid");
	CHECK_STREQ(report_get(diag, "euid", v, sizeof(v)), "65534", "euid");
	CHECK_STREQ(report_get(diag, "gid", v, sizeof(v)), "65534", "gid");
	CHECK_STREQ(report_get(diag, "groups", v, sizeof(v)), "0", "supplementary groups");
	CHECK_STREQ(report_get(diag, "cap_eff", v, sizeof(v)), "0000000000000000", "CapEff");
	CHECK_STREQ(report_get(diag, "cap_prm", v, sizeof(v)), "0000000000000000", "CapPrm");
	CHECK_STREQ(report_get(diag, "cap_inh", v, sizeof(v)), "0000000000000000", "CapInh");
	CHECK_STREQ(report_get(diag, "cap_bnd", v, sizeof(v)), "0000000000000000", "CapBnd");
	CHECK_STREQ(report_get(diag, "cap_amb", v, sizeof(v)), "0000000000000000", "CapAmb");
	CHECK_STREQ(report_get(diag, "no_new_privs", v, sizeof(v)), "1", "no_new_privs");
	CHECK_STREQ(report_get(diag, "pid", v, sizeof(v)), "1", "pid in its own namespace");
	CHECK_STREQ(report_get(diag, "ifaces", v, sizeof(v)), "lo", "interfaces");
	CHECKF(strcmp(report_get(diag, "abstract_connect", v, sizeof(v)), "ok") && v[0],
	       "the daemon's abstract socket: %s", v);
	CHECKF(strcmp(report_get(diag, "tcp_connect", v, sizeof(v)), "ok") && v[0],
	       "the daemon's loopback port: %s", v);
	CHECKF(strcmp(report_get(diag, "secret_open", v, sizeof(v)), "ok") && v[0],
	       "a root-only file: %s", v);
	CHECKF(strcmp(report_get(diag, "shadow_open", v, sizeof(v)), "ok") && v[0],
	       "/etc/shadow: %s", v);
	CHECKF(strcmp(report_get(diag, "write_root", v, sizeof(v)), "ok") && v[0],
	       "writing /: %s", v);
	CHECKF(strcmp(report_get(diag, "write_include", v, sizeof(v)), "ok") && v[0],
	       "writing the include directory: %s", v);
	CHECK_STREQ(report_get(diag, "write_work", v, sizeof(v)), "ok", "writing the work directory");
	CHECK(!strstr(diag, "TOPSECRET"));

	/* seen from outside while it waited */
	CHECK(in.ready);
	CHECK_EQ(in.ns_checked, 6, "namespaces looked at");
	CHECK_EQ(in.ns_differ, 6, "namespaces not the daemon's");
	CHECK_STREQ(status_get(in.status, "Uid", v, sizeof(v)), "65534\t65534\t65534\t65534", "Uid");
	CHECK_STREQ(status_get(in.status, "Gid", v, sizeof(v)), "65534\t65534\t65534\t65534", "Gid");
	CHECK_STREQ(status_get(in.status, "CapEff", v, sizeof(v)), "0000000000000000", "CapEff");
	CHECK_STREQ(status_get(in.status, "CapPrm", v, sizeof(v)), "0000000000000000", "CapPrm");
	CHECK_STREQ(status_get(in.status, "CapBnd", v, sizeof(v)), "0000000000000000", "CapBnd");
	CHECK_STREQ(status_get(in.status, "CapAmb", v, sizeof(v)), "0000000000000000", "CapAmb");
	CHECK_STREQ(status_get(in.status, "NoNewPrivs", v, sizeof(v)), "1", "NoNewPrivs");

	/* what it could see: the include and work directories, and only its own files besides */
	{
		struct sandbox_bind binds[] = {
			{ .host = inc, .inside = COMPILE_INCLUDE_AT },
			{ .host = inc, .inside = COMPILE_WORK_AT, .writable = true },
		};
		struct sandbox_spec spec = { .program = fake_path, .binds = binds, .n_binds = 2,
					     .root_dir = priv, .cwd = COMPILE_WORK_AT,
					     .uid = SANDBOX_NOBODY, .gid = SANDBOX_NOBODY };
		char *err = NULL;

		REQUIRE(sandbox_new(&spec, &sb, &err) == 0);
		free(err);
	}
	n_paths = sandbox_paths(sb, &paths);
	/* the compiler itself and the directories that lead to it may sit anywhere (/tmp, /root) */
	for (i = 0; i < n_paths; i++)
		CHECKF(under(fake_path, paths[i]) ||
			       (!under(paths[i], "/etc") && !under(paths[i], "/proc") &&
				!under(paths[i], "/root") && !under(paths[i], "/dev") &&
				!under(paths[i], "/sys") && !under(paths[i], "/tmp")),
		       "the plan holds %s", paths[i]);
	snprintf(root_probe, sizeof(root_probe), "see=f %s/fake-clang.conf", COMPILE_INCLUDE_AT);
	CHECKF(strstr(diag, root_probe), "the include directory is not visible");
	snprintf(root_probe, sizeof(root_probe), "see=f %s/probe.bpf.c", COMPILE_WORK_AT);
	CHECKF(strstr(diag, root_probe), "the work directory is not visible");
	{
		unsigned seen = 0, outside = 0;

		for (p = strstr(diag, "see="); p; p = strstr(p + 1, "\nsee=")) {
			char path[600];
			const char *s = p[0] == '\n' ? p + 1 : p;

			snprintf(path, sizeof(path), "%.*s", (int)strcspn(s + 6, "\n"), s + 6);
			seen++;
			if (under(path, COMPILE_INCLUDE_AT) || under(path, COMPILE_WORK_AT) ||
			    !strcmp(path, "/argus"))
				continue;
			outside++;
			CHECKF(plan_has(paths, n_paths, path),
			       "the sandbox shows %s, which is neither its program's nor a bind",
			       path);
		}
		CHECKF(seen > 5 && outside > 0, "%u paths seen, %u outside the binds", seen, outside);
	}
	sandbox_free(sb);

	/* nothing left behind */
	{
		DIR *d = opendir(parent);
		struct dirent *e;
		unsigned left = 0;

		REQUIRE(d);
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				left++;
		closedir(d);
		CHECK_EQ(left, 0, "directories left in tmp_parent");
	}
	free(diag);
	close(us);
	close(ts);
	unlink(secret_root);
	unlink(secret_priv);
	unlink(conf);
	unlink(in.fifo_out);
	unlink(in.fifo_in);
	rmdir(priv);
	rmdir(inc);
	rmdir(parent);
}

/* Without user namespaces (here: a seccomp filter refusing them) nothing is compiled. */
static void test_sandbox_refused(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(code), .filter = code };
	int status = 0, pfd[2];
	char buf[2048] = "";
	ssize_t n;
	pid_t pid;

	tap_subtest("sandbox_refused");
	REQUIRE(pipe(pfd) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct compile_opts o = { .clang = fake_path, .include_dir = include_dir,
					  .tmp_parent = scratch };
		void *obj = NULL;
		size_t len = 0;
		char *diag = NULL;
		int r;

		close(pfd[0]);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(3);
		r = compile_probe(&o, "int x;\n", 7, &obj, &len, &diag);
		if (diag && write(pfd[1], diag, strlen(diag)) < 0)
			_exit(4);
		_exit(r < 0 && r != -ENOEXEC ? 0 : 1);
	}
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s", status, buf);
	CHECKF(strstr(buf, "namespaces") && strstr(buf, "Operation not permitted"), "%s", buf);
	CHECKF(!strstr(buf, "fake-bpf-clang"), "the compiler ran: %s", buf);
}

/* ---- the real clang ---- */

#define GOOD_PROBE                                                                                 \
	"#include \"argus_authored.h\"\n"                                                          \
	"SEC(\"tp_btf/page_fault_user\")\n"                                                       \
	"int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long ec)\n"  \
	"{\n"                                                                                      \
	"	if (argus_current_is_target())\n"                                                    \
	"		argus_account(0, 1, 0);\n"                                                  \
	"	return 0;\n"                                                                         \
	"}\n"

/*
 * clang in the sandbox on a source the check would refuse (the test plays
 * a filter that let it through): the assembler's .include and .incbin name
 * files that are not there.
 */
static int unfiltered(const char *src, char **ret_out)
{
	char dir[600], root[700], work[700], file[800], out[16384];
	char *argv[] = { clang_path, "-target", "bpf", "-O2", "-nostdinc", "-I" COMPILE_INCLUDE_AT,
			 "-fno-crash-diagnostics", "-c", "probe.bpf.c", "-o", "probe.bpf.o", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
	struct sandbox_bind binds[2];
	struct sandbox_spec spec = {};
	struct sandbox *sb = NULL;
	char *err = NULL;
	size_t len = 0;
	int pfd[2], status = 0, fd;
	ssize_t n;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/unfiltered-XXXXXX", scratch);
	if (!mkdtemp(dir))
		return -errno;
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(file, sizeof(file), "%s/probe.bpf.c", work);
	if (mkdir(root, 0755) < 0 || mkdir(work, 0700) < 0 ||
	    chown(work, SANDBOX_NOBODY, SANDBOX_NOBODY) < 0)
		return -errno;
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, src, strlen(src)) != (ssize_t)strlen(src))
		return -EIO;
	close(fd);
	binds[0] = (struct sandbox_bind){ .host = include_dir, .inside = COMPILE_INCLUDE_AT };
	binds[1] = (struct sandbox_bind){ .host = work, .inside = COMPILE_WORK_AT, .writable = true };
	spec = (struct sandbox_spec){ .program = clang_path, .binds = binds, .n_binds = 2,
				      .root_dir = root, .cwd = COMPILE_WORK_AT,
				      .uid = SANDBOX_NOBODY, .gid = SANDBOX_NOBODY,
				      .limits = { .cpu_s = 30, .nofile = 64 } };
	if (sandbox_new(&spec, &sb, &err) < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		fprintf(stderr, "# %s\n", err ?: "pipe");
		free(err);
		return -EIO;
	}
	if (sandbox_spawn(sb, argv, envp, pfd[1], &pid, &err) < 0) {
		fprintf(stderr, "# %s\n", err);
		free(err);
		sandbox_free(sb);
		return -EIO;
	}
	sandbox_free(sb);
	close(pfd[1]);
	while ((n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	out[len] = 0;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	*ret_out = xstrdup(out);
	unlink(file);
	snprintf(file, sizeof(file), "%s/probe.bpf.o", work);
	unlink(file);
	rmdir(work);
	rmdir(root);
	rmdir(dir);
	return status;
}

static void test_real_clang(void)
{
	struct compile_opts o = real_opts();
	char *diag = NULL, *out = NULL;
	void *obj = NULL;
	size_t len = 0;
	int r;

	tap_subtest("real_clang");
	r = compile_probe(&o, GOOD_PROBE, strlen(GOOD_PROBE), &obj, &len, &diag);
	CHECKF(r == 0 && obj && len > 0, "good probe: %d %s", r, diag ?: "");
	free(obj);
	free(diag);
	obj = NULL;
	diag = NULL;

	{
		static const char bad[] =
			"#include \"argus_authored.h\"\nint f(void) { return undeclared; }\n";

		r = compile_probe(&o, bad, strlen(bad), &obj, &len, &diag);
	}
	CHECKF(r == -ENOEXEC && diag && strstr(diag, "undeclared") &&
		       strstr(diag, "probe.bpf.c"),
	       "%d %s", r, diag ?: "");
	free(diag);
	diag = NULL;

	r = compile_probe(&o, "#include </etc/passwd>\n", strlen("#include </etc/passwd>\n"), &obj,
			  &len, &diag);
	CHECKF(r == -EINVAL && diag && strstr(diag, "not allowed"), "%d %s", r, diag ?: "");
	free(diag);
	diag = NULL;

	/* past the check, the assembler finds nothing to read */
	r = unfiltered("asm(\".include \\\"/etc/passwd\\\"\");\n", &out);
	CHECKF(r != 0 && out && !strstr(out, "root:x:0:0") && strstr(out, "/etc/passwd"),
	       "asm .include: status %d: %s", r, out ?: "");
	free(out);
	out = NULL;
	r = unfiltered("asm(\".section .rodata\\n.incbin \\\"/etc/shadow\\\"\");\n", &out);
	CHECKF(r != 0 && out && strstr(out, "/etc/shadow"), "asm .incbin: status %d: %s", r,
	       out ?: "");
	free(out);
	out = NULL;
	/* and the include directory is there: the same directive on one of its headers works */
	r = unfiltered("asm(\".section .rodata\\n.incbin \\\"" COMPILE_INCLUDE_AT
		       "/paths.h\\\"\");\n",
		       &out);
	CHECKF(r == 0, "asm .incbin of an included header: status %d: %s", r, out ?: "");
	free(out);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");

	if (!src || !build)
		tap_skip_all("ARGUS_SOURCE_DIR and ARGUS_BUILD_DIR unset");
	snprintf(clang_path, sizeof(clang_path), "%s", ARGUS_TEST_CLANG);
	snprintf(include_dir, sizeof(include_dir), "%s/bpf/authored-include", build);
	snprintf(fake_path, sizeof(fake_path), "%s/fake-bpf-clang", build);
	snprintf(authored_dir, sizeof(authored_dir), "%s/tests/authored", src);

	test_source_check();
	if (geteuid() != 0) {
		/* the sandbox is made by root: argusd's own identity */
		tap_skip("sandbox", "not root");
		return tap_done("test-compile");
	}
	snprintf(scratch, sizeof(scratch), "/tmp/argus-test-compile-XXXXXX");
	REQUIRE(mkdtemp(scratch));
	chmod(scratch, 0755);

	test_sandbox_identity();
	test_sandbox_refused();
	test_real_clang();
	test_differential();

	CHECKF(rmdir(scratch) == 0, "%s is not empty: %s", scratch, strerror(errno));
	return tap_done("test-compile");
}
