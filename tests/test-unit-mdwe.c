// SPDX-License-Identifier: MIT
/*
 * The unit sets MemoryDenyWriteExecute=yes, which argusd's children inherit,
 * the compiler of authored probes among them. systemd implements it as a
 * seccomp filter: mmap of memory both writable and executable, mprotect or
 * pkey_mprotect adding PROT_EXEC, and shmat with SHM_EXEC fail with EPERM.
 * This test installs the same filter, shows that it refuses a writable
 * executable mapping, and compiles a probe with the build's BPF clang under
 * it: clang and LLVM compile ahead of time and need no writable code, and
 * the object is the same as without the filter.
 */
#include "daemon/util.h"
#include "tests/tap.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef EM_BPF
#define EM_BPF 247
#endif

static const char probe_source[] =
    "#include \"vmlinux.h\"\n"
    "#include <bpf/bpf_helpers.h>\n"
    "#include <bpf/bpf_tracing.h>\n"
    "char LICENSE[] SEC(\"license\") = \"GPL\";\n"
    "struct {\n"
    "	__uint(type, BPF_MAP_TYPE_ARRAY);\n"
    "	__uint(max_entries, 4);\n"
    "	__type(key, __u32);\n"
    "	__type(value, __u64);\n"
    "} counts SEC(\".maps\");\n"
    "SEC(\"tp_btf/page_fault_user\")\n"
    "int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long err)\n"
    "{\n"
    "	__u32 k = err & 2 ? 1 : 0;\n"
    "	__u64 *v = bpf_map_lookup_elem(&counts, &k);\n"
    "	if (v)\n"
    "		__sync_fetch_and_add(v, 1);\n"
    "	return 0;\n"
    "}\n";

#define DENY BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

/* systemd's MemoryDenyWriteExecute= filter (x86-64; the unit allows the native ABI only). */
static int deny_write_execute(void)
{
	struct sock_filter f[] = {
		LOAD(nr),
		/* mmap: refused when both PROT_WRITE and PROT_EXEC */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 5),
		LOAD(args[2]),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 0, 1),
		DENY,
		ALLOW,
		/* mprotect, pkey_mprotect: refused with PROT_EXEC */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pkey_mprotect, 0, 5),
		LOAD(args[2]),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_EXEC),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		ALLOW,
		DENY,
		/* shmat: refused with SHM_EXEC */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_shmat, 0, 5),
		LOAD(args[2]),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, SHM_EXEC),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		ALLOW,
		DENY,
		ALLOW,
	};
	struct sock_fprog prog = { ARRAY_SIZE(f), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* Compile src into obj, with the filter or without; the exit status (or 128 + signal). */
static int compile(const char *clang, const char *inc, const char *src, const char *obj,
		   bool filtered)
{
	_cleanup_free_ char *iflag = xasprintf("-I%s", inc);
	pid_t pid = fork();
	int status = 0;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		char *argv[] = { (char *)clang, "-target", "bpf", "-O2", "-g", "-D__TARGET_ARCH_x86",
				 "-nostdinc", iflag, "-Wall", "-c", (char *)src, "-o", (char *)obj,
				 NULL };

		if (filtered && deny_write_execute() < 0)
			_exit(125);
		execv(clang, argv);
		_exit(127);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The filter does what systemd's does: refused in a child, which then exits with what it saw. */
static void test_filter_refuses(void)
{
	pid_t pid = fork();
	int status = 0;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		void *wx, *w;

		if (deny_write_execute() < 0)
			_exit(10);
		wx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (wx != MAP_FAILED || errno != EPERM)
			_exit(11);
		w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w == MAP_FAILED)
			_exit(12);
		if (mprotect(w, 4096, PROT_READ | PROT_EXEC) == 0 || errno != EPERM)
			_exit(13);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the filter: status %d (11: W+X mmap allowed, 13: mprotect(PROT_EXEC) allowed)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
}

static int read_all(const char *path, char **ret, size_t *ret_len)
{
	return read_file_bounded(path, 16 << 20, ret, ret_len);
}

int main(void)
{
	const char *build = getenv("ARGUS_BUILD_DIR");
	char dir[] = "/tmp/argus-test-mdwe-XXXXXX";
	_cleanup_free_ char *inc = NULL, *src = NULL, *obj = NULL, *plain = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	char cmd[96];
	int rc, fd;

	REQUIRE(build);
	REQUIRE(mkdtemp(dir));
	inc = xasprintf("%s/bpf/authored-include", build);
	src = xasprintf("%s/probe.bpf.c", dir);
	obj = xasprintf("%s/probe.bpf.o", dir);
	plain = xasprintf("%s/plain.bpf.o", dir);
	fd = open(src, O_WRONLY | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0 &&
		write(fd, probe_source, strlen(probe_source)) == (ssize_t)strlen(probe_source));
	close(fd);

	test_filter_refuses();

	rc = compile(ARGUS_TEST_CLANG, inc, src, obj, true);
	CHECKF(rc == 0, "%s under MemoryDenyWriteExecute: exit status %d", ARGUS_TEST_CLANG, rc);
	CHECK(compile(ARGUS_TEST_CLANG, inc, src, plain, false) == 0);
	if (rc == 0 && read_all(obj, &a, &alen) == 0 && read_all(plain, &b, &blen) == 0) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)a;

		CHECK(alen > sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
		      eh->e_machine == EM_BPF);
		CHECKF(alen == blen && !memcmp(a, b, alen), "objects differ: %zu and %zu bytes",
		       alen, blen);
	} else {
		CHECKF(false, "no object to compare");
	}

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
	return tap_done("test-unit-mdwe");
}
