// SPDX-License-Identifier: MIT
/*
 * pf_zero_page: anonymous read faults. Each round maps a fresh private
 * anonymous region and reads one byte per 4 KiB page: every page is a
 * minor fault that maps the shared zero page (no allocation, no zeroing).
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "pf_zero_page";

int main(int argc, char **argv)
{
	uint64_t mb = 256, rounds = 2, round, i, pages, sum = 0, start;
	const struct bench_flag flags[] = {
	    {"mb", "N", "region size per round in MiB", &mb, 1, 1 << 20},
	    {"rounds", "N", "rounds, a fresh region each", &rounds, 1, 1 << 20},
	    {},
	};

	bench_parse_flags(prog, "Anonymous read faults that map the shared zero page.", flags, argc,
			  argv);
	pages = mb * MIB / PAGE_SIZE_4K;

	start = bench_now_ns();
	for (round = 0; round < rounds; round++) {
		volatile const char *p = mmap(NULL, mb * MIB, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			bench_die(prog, "mmap %llu MiB: %s", (unsigned long long)mb,
				  strerror(errno));
		for (i = 0; i < pages; i++)
			sum += (unsigned char)p[i * PAGE_SIZE_4K];
		munmap((void *)p, mb * MIB);
	}
	printf("%s mb=%llu rounds=%llu pages_read=%llu checksum=%llu elapsed_ms=%.1f\n", prog,
	       (unsigned long long)mb, (unsigned long long)rounds,
	       (unsigned long long)(pages * rounds), (unsigned long long)sum,
	       (bench_now_ns() - start) / 1e6);
	return sum != 0; /* the zero page reads as zeros */
}
