// SPDX-License-Identifier: MIT
/*
 * pf_cow: copy-on-write faults. The parent fills a private anonymous
 * region once; each round forks a child that writes one byte per 4 KiB
 * page, so every page is a write-protect fault that copies it (wp_page_copy)
 * in the child. The parent only waits, so its pages stay shared read-only
 * until the child exits.
 */
#include "bench/common.h"

#include <sys/mman.h>
#include <sys/wait.h>

static const char *prog = "pf_cow";

int main(int argc, char **argv)
{
	uint64_t mb = 64, rounds = 4, round, i, pages, start;
	char *p;
	const struct bench_flag flags[] = {
	    {"mb", "N", "region size in MiB", &mb, 1, 1 << 16},
	    {"rounds", "N", "children forked, each writing the region", &rounds, 1, 1 << 20},
	    {},
	};

	bench_parse_flags(prog, "Copy-on-write faults in forked children.", flags, argc, argv);
	pages = mb * MIB / PAGE_SIZE_4K;

	start = bench_now_ns();
	p = mmap(NULL, mb * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		bench_die(prog, "mmap %llu MiB: %s", (unsigned long long)mb, strerror(errno));
	/* Small pages, so that each child write copies 4 KiB, whatever the THP mode. */
	(void)madvise(p, mb * MIB, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		p[i * PAGE_SIZE_4K] = 1;

	for (round = 0; round < rounds; round++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			bench_die(prog, "fork: %s", strerror(errno));
		if (pid == 0) {
			volatile char *q = p;
			uint64_t sum = 0;

			for (i = 0; i < pages; i++) {
				q[i * PAGE_SIZE_4K] = (char)(i + round);
				sum += (unsigned char)q[i * PAGE_SIZE_4K];
			}
			_exit(sum ? 0 : 3);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bench_die(prog, "child %d failed", (int)pid);
	}
	printf("%s mb=%llu rounds=%llu cow_pages=%llu elapsed_ms=%.1f\n", prog,
	       (unsigned long long)mb, (unsigned long long)rounds,
	       (unsigned long long)(pages * rounds), (bench_now_ns() - start) / 1e6);
	return 0;
}
