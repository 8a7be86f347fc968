// SPDX-License-Identifier: MIT
/*
 * pf_anon_write: anonymous write faults. Each round maps a fresh private
 * anonymous region and writes one byte per 4 KiB page, so every page is a
 * minor fault that allocates and zeroes a page (do_anonymous_page); with
 * --thp the region asks for huge pages (MADV_HUGEPAGE) instead. Without
 * it, huge pages depend on the system's THP mode, which perturbers change.
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "pf_anon_write";

int main(int argc, char **argv)
{
	uint64_t mb = 128, rounds = 2, round, i, pages, sum = 0, start;
	bool thp = false;
	const struct bench_flag flags[] = {
	    {"mb", "N", "region size per round in MiB", &mb, 1, 1 << 20},
	    {"rounds", "N", "rounds, a fresh region each", &rounds, 1, 1 << 20},
	    {"thp", NULL, "madvise(MADV_HUGEPAGE) on the region", .on = &thp},
	    {},
	};

	bench_parse_flags(prog, "Anonymous write faults on fresh private regions.", flags, argc,
			  argv);
	pages = mb * MIB / PAGE_SIZE_4K;

	start = bench_now_ns();
	for (round = 0; round < rounds; round++) {
		volatile char *p = mmap(NULL, mb * MIB, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			bench_die(prog, "mmap %llu MiB: %s", (unsigned long long)mb,
				  strerror(errno));
		if (thp && madvise((void *)p, mb * MIB, MADV_HUGEPAGE) < 0)
			bench_die(prog, "madvise(MADV_HUGEPAGE): %s", strerror(errno));
		for (i = 0; i < pages; i++)
			p[i * PAGE_SIZE_4K] = (char)(i + round);
		for (i = 0; i < pages; i += 4096)
			sum += (unsigned char)p[i * PAGE_SIZE_4K];
		munmap((void *)p, mb * MIB);
	}
	printf("%s mb=%llu rounds=%llu pages_touched=%llu thp=%d checksum=%llu elapsed_ms=%.1f\n",
	       prog, (unsigned long long)mb, (unsigned long long)rounds,
	       (unsigned long long)(pages * rounds), thp, (unsigned long long)sum,
	       (bench_now_ns() - start) / 1e6);
	return 0;
}
