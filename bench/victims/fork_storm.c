// SPDX-License-Identifier: MIT
/*
 * fork_storm: process creation. Forks children that exit at once and
 * reaps each before the next, many times; the parent holds a touched
 * anonymous region so that every fork copies some page tables.
 */
#include "bench/common.h"

#include <sys/mman.h>
#include <sys/wait.h>

static const char *prog = "fork_storm";

int main(int argc, char **argv)
{
	uint64_t forks = 1200, mb = 16, i, start;
	const struct bench_flag flags[] = {
	    {"forks", "N", "children forked and reaped", &forks, 1, 1 << 24},
	    {"mb", "N", "anonymous memory the parent holds, in MiB", &mb, 1, 1 << 12},
	    {},
	};
	char *p;

	bench_parse_flags(prog, "Process creation: fork, exit, reap.", flags, argc, argv);

	start = bench_now_ns();
	p = mmap(NULL, mb * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		bench_die(prog, "mmap: %s", strerror(errno));
	(void)madvise(p, mb * MIB, MADV_NOHUGEPAGE);
	for (i = 0; i < mb * MIB / PAGE_SIZE_4K; i++)
		p[i * PAGE_SIZE_4K] = 1;

	for (i = 0; i < forks; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			bench_die(prog, "fork: %s", strerror(errno));
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bench_die(prog, "child %d failed", (int)pid);
	}
	printf("%s forks=%llu mb=%llu elapsed_ms=%.1f\n", prog, (unsigned long long)forks,
	       (unsigned long long)mb, (bench_now_ns() - start) / 1e6);
	return 0;
}
