// SPDX-License-Identifier: MIT
/*
 * The safety gate on objects compiled here from source strings: what it
 * refuses (helpers that read memory, hand out kernel pointers or run
 * callbacks, kfuncs, externs, global data and sections the header does not
 * declare, maps beyond the bounds, hooks outside the level), each of the
 * constructs of the hostile-model findings through whichever layer stops
 * it, the good template of tests/authored/ passing, and (as root) the
 * trial load that gives the verifier's log back. The source check and the
 * compiler's sandbox have their own test (test-compile).
 */
#include "daemon/compile.h"
#include "daemon/gate.h"
#include "daemon/probe_authored.h"
#include "daemon/tree.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static char clang_path[256], include_dir[512], scratch[256], tmp_parent[300], source_dir[512];
static struct tree *tree;
static struct gate_policy policy;

/* Compile a source; returns the object or NULL, *diag the compiler's words. */
static void *compile(const char *src, size_t *len, char **diag, int *ret_r)
{
	struct compile_opts o = { .clang = clang_path, .include_dir = include_dir,
				  .tmp_parent = tmp_parent, .wall_s = 60 };
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

/*
 * Under syscall_events = none an authored probe may not attach the raw
 * system call events (every task on the host would run it on each of its
 * calls): not as a node's hooks, not as the creation companions; and the
 * level whose node is measured through them is named as one only the
 * builtin probe measures.
 */
static void test_call_events(void)
{
	struct gate_policy saved = policy, raw = {}, none = {};
	struct hook_list hooks;
	int level[3], files[2];
	char *err = NULL;

	level[0] = tree_find(tree, "kernel_sync.futex");
	level[1] = tree_find(tree, "kernel_sync.mmap_lock");
	level[2] = tree_find(tree, "kernel_scheduler.fork");
	REQUIRE(level[0] >= 0 && level[1] >= 0 && level[2] >= 0);
	REQUIRE(hook_list_parse("sys_enter+sys_exit", HOOK_TRACEPOINT, &hooks) == 0);
	tree_node_choose(&tree->nodes[level[0]], BACKEND_TRACEPOINT, &hooks);
	REQUIRE(hook_list_parse("mmap_lock_start_locking+mmap_lock_acquire_returned",
				HOOK_TRACEPOINT, &hooks) == 0);
	tree_node_choose(&tree->nodes[level[1]], BACKEND_TRACEPOINT, &hooks);
	REQUIRE(hook_list_parse("sched_process_fork", HOOK_TRACEPOINT, &hooks) == 0);
	tree_node_choose(&tree->nodes[level[2]], BACKEND_TRACEPOINT, &hooks);

	REQUIRE(gate_policy_for_level(tree, level, 3, 2, false, &raw) == 0);
	REQUIRE(gate_policy_for_level(tree, level, 3, 2, true, &none) == 0);
	CHECK(gate_policy_allows(&raw, "tp_btf/sys_enter") && gate_policy_allows(&raw, "raw_tp/sys_exit"));
	CHECKF(!gate_policy_allows(&none, "tp_btf/sys_enter") && !gate_policy_allows(&none, "tp_btf/sys_exit") &&
		       !gate_policy_allows(&none, "raw_tp/sys_enter") &&
		       !gate_policy_allows(&none, "raw_tracepoint/sys_exit"),
	       "%zu sections under none", none.n_sections);
	/* the rest of the level stays: its own hooks, the scheduler's, fork and exit */
	CHECK(gate_policy_allows(&none, "tp_btf/mmap_lock_start_locking") &&
	      gate_policy_allows(&none, "tp_btf/sched_switch") &&
	      gate_policy_allows(&none, "tp_btf/sched_process_fork"));
	CHECK(none.n_sections + 6 == raw.n_sections);

	policy = none;
	expect_refused("sys_enter under none",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/sys_enter\")\n"
		       "int BPF_PROG(p, struct pt_regs *regs, long id)\n"
		       "{ if (argus_current_is_target()) argus_account(0, 1, 0); return 0; }\n",
		       "outside this level");
	policy = raw;
	CHECKF(gated("#include \"argus_authored.h\"\n"
		     "SEC(\"tp_btf/sys_enter\")\n"
		     "int BPF_PROG(p, struct pt_regs *regs, long id)\n"
		     "{ if (argus_current_is_target()) argus_account(0, 1, 0); return 0; }\n",
		     &err),
	       "sys_enter under raw: %s", err ?: "");
	free(err);
	policy = saved;

	CHECK(gate_level_call_node(tree, level, 3) == level[0]);
	CHECK(gate_level_call_node(tree, level + 1, 2) == -1);
	files[0] = tree_find(tree, "kernel_paging.file_fault.page_cache");
	files[1] = tree_find(tree, "kernel_paging.file_fault.major");
	CHECK(gate_level_call_node(tree, files, 2) == -1);
	gate_policy_free(&raw);
	gate_policy_free(&none);
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

	/* the compile directory is gone afterwards */
	CHECK(rmdir(tmp_parent) == 0 && mkdir(tmp_parent, 0700) == 0);
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
	expect_refused("BPF_CORE_READ (bpf_probe_read_kernel)",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/sched_switch\")\n"
		       "int BPF_PROG(p, bool pr, struct task_struct *a, struct task_struct *b)\n"
		       "{ argus_account(0, BPF_CORE_READ(a, mm, total_vm), 0); return 0; }\n",
		       "bpf_probe_read_kernel");
	expect_refused("bpf_get_current_task_btf",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ argus_account(0, bpf_get_current_task_btf()->pid, 0); return 0; }\n",
		       "bpf_get_current_task_btf");
	expect_refused("bpf_get_func_ip",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ argus_account(0, bpf_get_func_ip(ctx), 0); return 0; }\n",
		       "bpf_get_func_ip");
	expect_refused("bpf_find_vma",
		       "#include \"argus_authored.h\"\n"
		       "static long cb(struct task_struct *t, struct vm_area_struct *v, void *d)\n"
		       "{ return 0; }\n"
		       "SEC(\"tp_btf/sched_switch\")\n"
		       "int BPF_PROG(p, bool pr, struct task_struct *a, struct task_struct *b)\n"
		       "{ bpf_find_vma(a, 4096, cb, NULL, 0); return 0; }\n",
		       "callback");
	expect_refused("bpf_for_each_map_elem",
		       "#include \"argus_authored.h\"\n"
		       "static long cb(void *m, __u32 *k, __u8 *v, void *d) { return 0; }\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ bpf_for_each_map_elem(&targets, cb, NULL, 0); return 0; }\n",
		       "bpf_for_each_map_elem");
	expect_refused("a function pointer",
		       "#include \"argus_authored.h\"\n"
		       "static __noinline int f(int x) { return x + 1; }\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ int (*volatile fp)(int) = f; argus_account(0, (__u64)(long)fp, f(a)); "
		       "return 0; }\n",
		       "function pointers");
	expect_refused("global data (.bss)",
		       "#include \"argus_authored.h\"\n"
		       "static __u64 total;\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ total++; argus_account(0, total, 0); return 0; }\n",
		       ".bss");
	expect_refused("read-only data (.rodata)",
		       "#include \"argus_authored.h\"\n"
		       "const volatile __u64 knob = 7;\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ argus_account(0, knob, 0); return 0; }\n",
		       ".rodata");
	expect_refused("a section of its own",
		       "#include \"argus_authored.h\"\n"
		       "__u64 mine SEC(\".data.mine\") = 1;\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ argus_account(0, mine, 0); return 0; }\n",
		       ".data.mine");
	/* a model's own LICENSE after the header's is inert: libbpf reads the first */
	CHECKF(gated("#include \"argus_authored.h\"\n"
		     "char LICENSE[] SEC(\"license\") = \"Dual BSD/GPL\";\n" GOOD_PROBE,
		     &err),
	       "a second license: %s", err ?: "");
	free(err);
	err = NULL;
	expect_refused("a license before the header's",
		       "char LICENSE[] __attribute__((section(\"license\"), used)) = "
		       "\"Proprietary\";\n"
		       "#include \"argus_authored.h\"\n" GOOD_PROBE,
		       "license section must begin");
	expect_refused("a kconfig extern",
		       "#include \"argus_authored.h\"\n"
		       "extern int LINUX_KERNEL_VERSION __kconfig;\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ argus_account(0, LINUX_KERNEL_VERSION, 0); return 0; }\n",
		       "extern");
	expect_refused("no header",
		       "#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n"
		       "#include <bpf/bpf_tracing.h>\n"
		       "char l[] SEC(\"license\") = \"GPL\";\n"
		       "SEC(\"tp_btf/page_fault_user\") int BPF_PROG(p) { return 0; }\n",
		       "argus_authored.h");
}

/* The real clang outside any sandbox, for sources the check refuses: what would the gate see? */
static void *compile_direct(const char *src, size_t *ret_len, char **ret_out)
{
	char dir[400], file[450], obj[450], out[8192];
	char *argv[] = { clang_path, "-target", "bpf", "-O2", "-g", "-D__TARGET_ARCH_x86",
			 "-nostdinc", NULL, "-c", file, "-o", obj, NULL };
	char inc[600];
	char *bytes = NULL;
	size_t len = 0, outlen = 0;
	int pfd[2], status = 0, fd;
	ssize_t n;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/direct-XXXXXX", scratch);
	REQUIRE(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/probe.bpf.c", dir);
	snprintf(obj, sizeof(obj), "%s/probe.bpf.o", dir);
	snprintf(inc, sizeof(inc), "-I%s", include_dir);
	argv[7] = inc;
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && write(fd, src, strlen(src)) == (ssize_t)strlen(src));
	close(fd);
	REQUIRE(pipe(pfd) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execv(clang_path, argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], out + outlen, sizeof(out) - 1 - outlen)) > 0)
		outlen += n;
	out[outlen] = 0;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		read_file_bounded(obj, GATE_OBJECT_MAX, &bytes, &len);
	if (ret_out)
		*ret_out = strdup(out);
	unlink(file);
	unlink(obj);
	rmdir(dir);
	*ret_len = len;
	return bytes;
}

static bool check_refuses(const char *src, const char *needle)
{
	char *err = NULL;
	bool ok = compile_check_source(src, strlen(src), COMPILE_SOURCE_MAX, &err) == -EINVAL &&
		  err && strstr(err, needle);

	if (!ok)
		fprintf(stderr, "# source check: %s\n", err ?: "accepted");
	free(err);
	return ok;
}

/*
 * The constructs of the hostile-model findings, each stopped: the source
 * check refuses the assembler and the lone carriage return (and, should a
 * source get past it, the gate refuses the data the assembler embedded);
 * the gate refuses the kernel reads, the task pointer and bpf_loop.
 */
static void test_constructs(void)
{
	char secret[400], src[2048], *out = NULL, *err = NULL;
	size_t len = 0;
	void *obj;
	int fd;

	tap_subtest("constructs");
	snprintf(secret, sizeof(secret), "%s/secret", scratch);
	fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && write(fd, "SECRET-LINE-1\nSECRET-LINE-2\n", 28) == 28);
	close(fd);

	/* asm .incbin: a file's bytes in a data section, read into a counter */
	snprintf(src, sizeof(src),
		 "#include \"argus_authored.h\"\n"
		 "asm(\".pushsection .rodata.leak,\\\"a\\\"\\nleak:\\n.incbin \\\"%s\\\"\\n"
		 ".popsection\");\n"
		 "extern const char leak[];\n"
		 "SEC(\"tp_btf/page_fault_user\")\n"
		 "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		 "{ if (argus_current_is_target()) argus_account(0, leak[a & 7], 0); return 0; }\n",
		 secret);
	CHECK(check_refuses(src, "asm is not allowed"));
	obj = compile_direct(src, &len, &out);
	CHECKF(obj && memmem(obj, len, "SECRET-LINE-1", 13), "the unchecked compile: %s",
	       out ?: "");
	if (obj) {
		CHECKF(gate_check(obj, len, &policy, NULL, &err) == -EPERM && err &&
			       (strstr(err, ".rodata.leak") || strstr(err, "leak")),
		       "gate: %s", err ?: "passed");
		free(err);
		err = NULL;
	}
	free(obj);
	free(out);
	out = NULL;

	/* asm .include: the file's lines come back in the assembler's errors */
	snprintf(src, sizeof(src), "asm(\".include \\\"%s\\\"\");\n", secret);
	CHECK(check_refuses(src, "asm is not allowed"));
	obj = compile_direct(src, &len, &out);
	CHECKF(!obj && out && strstr(out, "SECRET-LINE-1"),
	       "unchecked and unsandboxed, the file leaks into the errors: %s", out ?: "");
	free(obj);
	free(out);
	out = NULL;

	/* a lone carriage return: a directive for clang, not for a line-based check */
	CHECK(check_refuses("int x;\r#include \"/etc/shadow\"\n", "carriage return"));

	expect_refused("bpf_probe_read_kernel",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ __u64 v = 0; bpf_probe_read_kernel(&v, 8, (void *)a);\n"
		       "  argus_account(0, v, 0); return 0; }\n",
		       "bpf_probe_read_kernel is not allowed");
	expect_refused("a task pointer copied into a counter",
		       "#include \"argus_authored.h\"\n"
		       "SEC(\"tp_btf/page_fault_user\")\n"
		       "int BPF_PROG(p, unsigned long a, struct pt_regs *r, unsigned long e)\n"
		       "{ if (argus_current_is_target())\n"
		       "    argus_account(0, 1, bpf_get_current_task()); return 0; }\n",
		       "bpf_get_current_task is not allowed");
	expect_refused("bpf_loop on a scheduler hook",
		       "#include \"argus_authored.h\"\n"
		       "static long spin(__u32 i, void *c) { return 0; }\n"
		       "SEC(\"tp_btf/sched_switch\")\n"
		       "int BPF_PROG(p, bool pr, struct task_struct *a, struct task_struct *b)\n"
		       "{ bpf_loop(1 << 20, spin, NULL, 0); return 0; }\n",
		       "bpf_loop is not allowed");
	unlink(secret);
}

/* The good model's template, for this level's hooks: checked, compiled, gated (and loaded). */
static void test_good_template(void)
{
	static const char *const hooks[] = { "page_fault_user", "rss_stat", "sched_switch",
					     "mm_filemap_add_to_page_cache", "sched_process_exit" };
	static const char *const slots[] = { "ANON_MINOR", "ANON_ZERO", "ANON_COW", "ANON_THP",
					     "FILE_CACHE", "FILE_MAJOR", "TLB_SHOOTDOWN", "RUNQ_WAIT",
					     "MIGRATE", "FORK", "DIRECT_RECLAIM", "COMPACTION",
					     "KSWAPD", "BLOCK_QUEUE", "BLOCK_DEVICE", "FUTEX",
					     "MMAP_LOCK" };
	char path[600], *tmpl = NULL, *src, *err = NULL, *diag = NULL, *log = NULL;
	size_t tlen = 0, len = 0, i, off = 0, cap;
	struct probe_authored *p = NULL;
	json_t *info = NULL;
	void *obj;
	int r;

	tap_subtest("good_template");
	snprintf(path, sizeof(path), "%s/tests/authored/good.bpf.c", source_dir);
	REQUIRE(read_file_bounded(path, COMPILE_SOURCE_MAX, &tmpl, &tlen) == 0);
	cap = tlen + 4096;
	src = malloc(cap);
	REQUIRE(src);
	/* the level's two nodes are slots 0 and 1; other classes count nowhere */
	for (i = 0; i < ARRAY_SIZE(slots); i++) {
		int slot = !strcmp(slots[i], "FILE_CACHE") ? 0 : !strcmp(slots[i], "FILE_MAJOR") ? 1 : -1;

		off += snprintf(src + off, cap - off, "#define SLOT_%s %d\n", slots[i], slot);
	}
	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		off += snprintf(src + off, cap - off, "#define HOOK_%s 1\n", hooks[i]);
	memcpy(src + off, tmpl, tlen + 1);
	free(tmpl);

	obj = compile(src, &len, &diag, &r);
	CHECKF(obj, "the template does not compile: %d %s", r, diag ?: "");
	free(diag);
	if (obj) {
		r = gate_check(obj, len, &policy, &info, &err);
		CHECKF(r == 0, "the template is refused: %s", err ?: "");
		CHECKF(json_array_size(json_object_get(info, "programs")) >= 5, "%zu programs",
		       json_array_size(json_object_get(info, "programs")));
		json_decref(info);
		free(err);
		if (r == 0 && geteuid() == 0) {
			r = probe_authored_load(obj, len, &p, &log);
			CHECKF(r == 0, "the template does not load: %d %s", r, log ?: "");
			probe_authored_free(p);
			free(log);
		}
	}
	free(obj);
	free(src);
}

/*
 * The header's identity of the target, measured: the good probe counts
 * the page faults of this process and of a child it forks (the header's
 * fork follower), as argusd numbers them, once in this PID namespace and
 * once from inside a new one (bpf_get_ns_current_pid_tgid and the pid
 * levels of the task). target 0: this process. Returns the count, or -1.
 */
static long long faults_counted(const void *obj, size_t len, pid_t target)
{
	struct probe_authored *p = NULL;
	struct probe_counts c;
	char *log = NULL;
	size_t i, page = sysconf(_SC_PAGESIZE);
	pid_t child;
	int status;

	if (probe_authored_load(obj, len, &p, &log) < 0 ||
	    probe_authored_add_target(p, target ?: getpid()) < 0 || probe_authored_attach(p) < 0) {
		fprintf(stderr, "# load: %s\n", log ?: "");
		free(log);
		probe_authored_free(p);
		return -1;
	}
	child = fork();
	if (child == 0) {
		char *m = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		for (i = 0; m != MAP_FAILED && i < 64; i++)
			m[i * page] = 1;
		_exit(0);
	}
	{
		char *m = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		for (i = 0; m != MAP_FAILED && i < 64; i++)
			m[i * page] = 1;
		if (m != MAP_FAILED)
			munmap(m, 64 * page);
	}
	if (child > 0)
		waitpid(child, &status, 0);
	probe_authored_detach(p);
	if (probe_authored_read(p, &c) < 0) {
		probe_authored_free(p);
		return -1;
	}
	probe_authored_free(p);
	return (long long)c.slot[0].count;
}

static void test_identity(void)
{
	size_t len = 0;
	char *diag = NULL;
	void *obj = compile(GOOD_PROBE, &len, &diag, NULL);
	long long n;
	int status = 0;
	pid_t pid;

	tap_subtest("identity");
	REQUIRE(obj);
	free(diag);
	n = faults_counted(obj, len, 0);
	CHECKF(n >= 128, "faults of this process and its child counted: %lld", n);
	/* and nobody else's: a target that does not exist counts nothing */
	for (pid = 4000000; pid > 1000 && (kill(pid, 0) == 0 || errno != ESRCH); pid--)
		;
	n = faults_counted(obj, len, pid);
	CHECKF(n == 0, "faults counted for the absent process %d: %lld", (int)pid, n);

	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID) < 0)
			_exit(2);
		init = fork();
		if (init == 0)
			_exit(faults_counted(obj, len, 0) >= 128 ? 0 : 1);
		if (init < 0 || waitpid(init, &status, 0) < 0)
			_exit(3);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 4);
	}
	waitpid(pid, &status, 0);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "in a new PID namespace the target's faults were not counted: status %d", status);
	free(obj);
}

/*
 * A program that dereferences a map value without its NULL check, after
 * body (which declares v and looks it up), refused by the verifier: the
 * load fails with the verifier's error, not ENOSPC, and the log says why.
 */
static void expect_load_refused(const char *what, const char *body)
{
	_cleanup_free_ char *src = xasprintf("#include \"argus_authored.h\"\n"
					     "SEC(\"tp_btf/page_fault_user\")\n"
					     "int BPF_PROG(p, unsigned long a, struct pt_regs *r, "
					     "unsigned long e)\n%s"
					     "  argus_account(0, *v, 0); return 0; }\n",
					     body);
	struct probe_authored *p = NULL;
	char *log = NULL, *diag = NULL;
	size_t len;
	void *obj = compile(src, &len, &diag, NULL);
	int r;

	REQUIRE(obj);
	r = probe_authored_load(obj, len, &p, &log);
	CHECKF(r < 0 && r != -ENOSPC && !p && log && strstr(log, "invalid mem access") &&
		       strstr(log, "processed"),
	       "%s: %d (%s) %.300s", what, r, strerror(-r), log ?: "");
	free(log);
	free(obj);
	free(diag);
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
	tap_subtest("trial_load");
	obj = compile(GOOD_PROBE, &len, &diag, NULL);
	REQUIRE(obj);
	r = probe_authored_load(obj, len, &p, &log);
	CHECKF(r == 0, "good probe: %d %s", r, log ?: "");
	probe_authored_free(p);
	free(log);
	free(obj);
	free(diag);

	/* a map value used without its NULL check: the verifier refuses, its log says why */
	expect_load_refused("no NULL check", "{ __u32 k = a; __u8 *v = bpf_map_lookup_elem(&targets, &k);\n");
	/*
	 * The same fault after a loop whose reasoning overflows the log's
	 * buffer: the kernel fails such a load with ENOSPC (before 6.4 with
	 * the reason lost past the buffer's end); loaded again with the
	 * verifier's statistics only, the error is the verifier's and the log
	 * says why.
	 */
	expect_load_refused("a long log", "{ __u64 sum = a; __u32 i, k; __u8 *v;\n"
					  "  for (i = 0; i < 20000; i++) sum += (sum << 1) ^ i;\n"
					  "  k = sum; v = bpf_map_lookup_elem(&targets, &k);\n");
}

int main(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *build = getenv("ARGUS_BUILD_DIR");
	char *err = NULL, path[512];
	struct hook_list hooks;
	int active[2];

	if (!src || !build) {
		tap_skip_all("ARGUS_SOURCE_DIR and ARGUS_BUILD_DIR unset");
	}
	snprintf(clang_path, sizeof(clang_path), "%s", ARGUS_TEST_CLANG);
	snprintf(source_dir, sizeof(source_dir), "%s", src);
	snprintf(scratch, sizeof(scratch), "/tmp/argus-test-gate-XXXXXX");
	REQUIRE(mkdtemp(scratch));
	snprintf(tmp_parent, sizeof(tmp_parent), "%s/compile", scratch);
	REQUIRE(mkdir(tmp_parent, 0700) == 0);
	snprintf(include_dir, sizeof(include_dir), "%s/bpf/authored-include", build);
	snprintf(path, sizeof(path), "%s/tree-data/tree.json", src);
	REQUIRE(tree_load_file(path, &tree, &err) == 0);
	libbpf_set_print(NULL);

	/* a level as resolution leaves it here: the file-fault leaves on tracepoints */
	active[0] = tree_find(tree, "kernel_paging.file_fault.page_cache");
	active[1] = tree_find(tree, "kernel_paging.file_fault.major");
	REQUIRE(active[0] >= 0 && active[1] >= 0);
	REQUIRE(hook_list_parse("page_fault_user+rss_stat", HOOK_TRACEPOINT, &hooks) == 0);
	tree_node_choose(&tree->nodes[active[0]], BACKEND_TRACEPOINT, &hooks);
	REQUIRE(hook_list_parse("page_fault_user+sched_switch+mm_filemap_add_to_page_cache",
				HOOK_TRACEPOINT, &hooks) == 0);
	tree_node_choose(&tree->nodes[active[1]], BACKEND_TRACEPOINT, &hooks);
	REQUIRE(gate_policy_for_level(tree, active, 2, 2, false, &policy) == 0);

	test_compile();
	test_call_events();
	test_gate();
	test_constructs();
	test_good_template();
	test_trial_load();
	if (geteuid() == 0)
		test_identity();

	gate_policy_free(&policy);
	tree_free(tree);
	rmdir(tmp_parent);
	rmdir(scratch);
	return tap_done("test-gate");
}
