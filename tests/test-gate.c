// SPDX-License-Identifier: MIT
/*
 * The authored-probe pipeline without a model: the source check (what the
 * preprocessor may reach), the compiler sandbox, the safety gate on small
 * objects compiled here from source strings, and (as root) the trial load
 * that gives the verifier's log back.
 */
#include "daemon/compile.h"
#include "daemon/gate.h"
#include "daemon/probe_authored.h"
#include "daemon/tree.h"
#include "tests/tap.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static char clang_path[256], include_dir[512];
static struct tree *tree;
static struct gate_policy policy;

static bool source_ok(const char *src)
{
	char *err = NULL;
	int r = compile_check_source(src, strlen(src), COMPILE_SOURCE_MAX, &err);

	free(err);
	return r == 0;
}

static void test_source_check(void)
{
	char *err = NULL, *big;

	CHECK(source_ok("#include \"argus_authored.h\"\nint x;\n"));
	CHECK(source_ok("#include <vmlinux.h>\n#include <bpf/bpf_helpers.h>\n"));
	CHECK(source_ok("#define A 1\n#if A\n#endif\n#pragma unroll\n"));
	/* a string or a comment that looks like a directive is not one */
	CHECK(source_ok("const char s[] = \"#include </etc/passwd>\";\n"));
	CHECK(source_ok("int a; // #include </etc/passwd>\n"));

	CHECK(!source_ok("#include \"/etc/passwd\"\n"));
	CHECK(!source_ok("#include <stdio.h>\n"));
	CHECK(!source_ok("#include \"../bpf/argus_authored.h\"\n"));
	CHECK(!source_ok("#include_next <vmlinux.h>\n"));
	CHECK(!source_ok("#import \"argus_authored.h\"\n"));
	CHECK(!source_ok("#embed \"/etc/shadow\"\n"));
	CHECK(!source_ok("#line 1 \"/etc/passwd\"\n"));
	CHECK(!source_ok("#define F </etc/passwd>\n#include F\n"));
	CHECK(!source_ok("#inc\\\nlude </etc/passwd>\n"));
	CHECK(!source_ok("#include \\\n\"argus_authored.h\"\n"));
	CHECK(!source_ok("/* a comment */ #include </etc/passwd>\n"));
	CHECK(!source_ok("/* a comment\n spanning lines */ #include </etc/passwd>\n"));
	CHECK(!source_ok("%:include </etc/passwd>\n"));
	CHECK(!source_ok("#if __has_include(</etc/passwd>)\n#endif\n"));
	CHECK(!source_ok("_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n"));
	CHECK(!source_ok("#pragma GCC dependency \"/etc/passwd\"\n"));
	CHECK(!source_ok("#define P(a, b) a##b\n"));
	CHECK(!source_ok("int caf\xc3\xa9;\n"));
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

/* Compile a source; returns the object or NULL, *diag the compiler's words. */
static void *compile(const char *src, size_t *len, char **diag, int *ret_r)
{
	struct compile_opts o = { .clang = clang_path, .include_dir = include_dir };
	void *obj = NULL;
	int r;

	*diag = NULL;
	r = compile_probe(&o, src, strlen(src), &obj, len, diag);
	if (ret_r)
		*ret_r = r;
	return r == 0 ? obj : NULL;
}

#define GOOD_PROBE                                                                                 \
	"#include \"argus_authored.h\"\n"                                                          \
	"SEC(\"tp_btf/page_fault_user\")\n"                                                       \
	"int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long ec)\n"  \
	"{\n"                                                                                      \
	"	if (argus_current_is_target())\n"                                                    \
	"		argus_account(0, 1, 0);\n"                                                  \
	"	return 0;\n"                                                                         \
	"}\n"

/* Gate a source; true when it passes. *err (owned) says why not. */
static bool gated(const char *src, char **err)
{
	size_t len = 0;
	char *diag = NULL;
	void *obj = compile(src, &len, &diag, NULL);
	bool ok;

	*err = NULL;
	if (!obj) {
		*err = diag ?: strdup("did not compile");
		fprintf(stderr, "compile failed: %s\n", *err);
		return false;
	}
	free(diag);
	ok = gate_check(obj, len, &policy, NULL, err) == 0;
	free(obj);
	return ok;
}

static void expect_refused(const char *what, const char *src, const char *needle)
{
	char *err = NULL;
	bool ok = gated(src, &err);

	CHECKF(!ok && err && strstr(err, needle), "%s: %s", what, err ?: "passed the gate");
	free(err);
}

static void test_compile(void)
{
	size_t len = 0;
	char *diag = NULL;
	void *obj;
	int r;

	obj = compile(GOOD_PROBE, &len, &diag, &r);
	CHECKF(obj && len > 0, "good probe: %d %s", r, diag ?: "");
	free(obj);
	free(diag);

	obj = compile("#include \"argus_authored.h\"\nint f(void) { return undeclared; }\n", &len,
		      &diag, &r);
	CHECKF(!obj && r == -ENOEXEC && diag && strstr(diag, "undeclared"), "%d %s", r,
	       diag ?: "");
	free(diag);

	obj = compile("#include </etc/passwd>\n", &len, &diag, &r);
	CHECKF(!obj && r == -EINVAL && diag && strstr(diag, "not allowed"), "%d %s", r,
	       diag ?: "");
	free(diag);

	/* the sandbox directory is gone afterwards */
	CHECK(system("ls -d /tmp/argusd-probe-* >/dev/null 2>&1") != 0);
}

static void test_gate(void)
{
	char *err = NULL;
	json_t *info = NULL;
	size_t len;
	char *diag;
	void *obj;

	CHECKF(gated(GOOD_PROBE, &err), "good probe refused: %s", err ?: "");
	free(err);

	obj = compile(GOOD_PROBE, &len, &diag, NULL);
	REQUIRE(obj);
	CHECK(gate_check(obj, len, &policy, &info, &err) == 0);
	CHECK(json_array_size(json_object_get(info, "programs")) == 2);
	json_decref(info);
	free(diag);
	free(obj);

	expect_refused("send_signal",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ bpf_send_signal(9); return 0; }\n",
		       "bpf_send_signal");
	expect_refused("send_signal in a subprogram",
		       "#include \"argus_authored.h\"\n"
		       "static __noinline int quiet(int s) { return bpf_send_signal(s); }\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ return quiet(a & 7) & 0; }\n",
		       "bpf_send_signal");
	expect_refused("probe_write_user",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ int v = 0; bpf_probe_write_user((void *)a, &v, 4); return 0; }\n",
		       "bpf_probe_write_user");
	expect_refused("outside the level",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/kmem_cache_alloc\")\n"
		       "int BPF_PROG(p) { argus_account(0, 1, 0); return 0; }\n",
		       "outside this level");
	expect_refused("fentry where the node resolved to a tracepoint",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"fentry/filemap_fault\")\n"
		       "int BPF_PROG(p) { argus_account(0, 1, 0); return 0; }\n",
		       "outside this level");
	expect_refused("fmod_ret",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"fmod_ret/filemap_fault\")\n"
		       "int BPF_PROG(p) { return 0; }\n",
		       "not allowed");
	expect_refused("classic tracepoint",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp/exceptions/page_fault_user\")\n"
		       "int p(void *ctx) { return 0; }\n",
		       "not allowed");
	expect_refused("kfunc",
		       "#include \"argus_authored.h\"\n"
		       "extern struct task_struct *bpf_task_acquire(struct task_struct *p) __ksym;\n"
		       "extern void bpf_task_release(struct task_struct *p) __ksym;\n"
		       "SEC(\"tp_btf/sched_switch\")\n"
		       "int BPF_PROG(p, bool pr, struct task_struct *a, struct task_struct *b)\n"
		       "{ struct task_struct *t = bpf_task_acquire(a);\n"
		       "  if (t) bpf_task_release(t); return 0; }\n",
		       "extern");
	expect_refused("ring buffer",
		       "#include \"argus_authored.h\"\n"
		       "struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 4096); } "
		       "rb SEC(\".maps\");\n" GOOD_PROBE,
		       "not allowed");
	expect_refused("huge map",
		       "#include \"argus_authored.h\"\n"
		       "struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 1 << 20);\n"
		       "  __type(key, __u32); __type(value, __u64); } big SEC(\".maps\");\n" GOOD_PROBE,
		       "entries");
	expect_refused("pinned map",
		       "#include \"argus_authored.h\"\n"
		       "struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 16);\n"
		       "  __type(key, __u32); __type(value, __u64);\n"
		       "  __uint(pinning, LIBBPF_PIN_BY_NAME); } pinned SEC(\".maps\");\n" GOOD_PROBE,
		       "pinned");
	expect_refused("too many maps",
		       "#include \"argus_authored.h\"\n"
		       "#define M(n) struct { __uint(type, BPF_MAP_TYPE_ARRAY); "
		       "__uint(max_entries, 1); __type(key, __u32); __type(value, __u64); } n "
		       "SEC(\".maps\");\n"
		       "M(m1) M(m2) M(m3) M(m4) M(m5) M(m6) M(m7)\n" GOOD_PROBE,
		       "more than");
	expect_refused("no header",
		       "#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n"
		       "#include <bpf/bpf_tracing.h>\n"
		       "char l[] SEC(\"license\") = \"GPL\";\n"
		       "SEC(\"tp_btf/page_fault_user\") int BPF_PROG(p) { return 0; }\n",
		       "argus_authored.h");
}

static void test_trial_load(void)
{
	struct probe_authored *p = NULL;
	char *log = NULL, *diag = NULL;
	size_t len;
	void *obj;
	int r;

	if (geteuid() != 0) {
		tap_skip("trial_loads", "not root");
		return;
	}
	obj = compile(GOOD_PROBE, &len, &diag, NULL);
	REQUIRE(obj);
	r = probe_authored_load(obj, len, &p, &log);
	CHECKF(r == 0, "good probe: %d %s", r, log ?: "");
	probe_authored_free(p);
	free(log);
	free(obj);
	free(diag);

	/* a map value used without its NULL check: the verifier refuses, its log says why */
	obj = compile("#include \"argus_authored.h\"\n"
		      "SEC(\"tp_btf/page_fault_user\")\n"
		      "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		      "{ __u32 k = a; __u8 *v = bpf_map_lookup_elem(&targets, &k);\n"
		      "  argus_account(0, *v, 0); return 0; }\n",
		      &len, &diag, NULL);
	REQUIRE(obj);
	log = NULL;
	p = NULL;
	r = probe_authored_load(obj, len, &p, &log);
	CHECKF(r < 0 && !p && log && strstr(log, "invalid mem access"), "%d %s", r, log ?: "");
	free(log);
	free(obj);
	free(diag);
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");
	char *err = NULL, path[512];
	int active[2];

	if (!src || !build) {
		tap_skip_all("ARGUS_SOURCE_DIR and ARGUS_BUILD_DIR unset");
	}
	snprintf(clang_path, sizeof(clang_path), "%s", ARGUS_TEST_CLANG);
	snprintf(include_dir, sizeof(include_dir), "%s/bpf/authored-include", build);
	snprintf(path, sizeof(path), "%s/tree-data/tree.json", src);
	REQUIRE(tree_load_file(path, &tree, &err) == 0);
	libbpf_set_print(NULL);

	/* a level as resolution leaves it here: the file-fault leaves on tracepoints */
	active[0] = tree_find(tree, "kernel_paging.file_fault.page_cache");
	active[1] = tree_find(tree, "kernel_paging.file_fault.major");
	REQUIRE(active[0] >= 0 && active[1] >= 0);
	tree->nodes[active[0]].backend = BACKEND_TRACEPOINT;
	tree->nodes[active[0]].hook = strdup("page_fault_user+rss_stat");
	tree->nodes[active[1]].backend = BACKEND_TRACEPOINT;
	tree->nodes[active[1]].hook = strdup("page_fault_user+sched_switch+mm_filemap_add_to_page_cache");
	REQUIRE(gate_policy_for_level(tree, active, 2, 2, &policy) == 0);

	test_source_check();
	test_compile();
	test_gate();
	test_trial_load();

	gate_policy_free(&policy);
	tree_free(tree);
	return tap_done("test-gate");
}
