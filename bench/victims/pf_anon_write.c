// SPDX-License-Identifier: MIT
/*
 * pf_anon_write: anonymous write faults. Each round maps a fresh private
 * anonymous region and writes one byte per 4 KiB page, so every page is a
 * minor fault that allocates and zeroes a page (do_anonymous_page); with
 * --thp the region asks for huge pages (MADV_HUGEPAGE) instead. Without
 * it, huge pages depend on the system's THP mode, which perturbers change.
 */
#include "bench/common.h"

#include <getopt.h>
#include <sys/mman.h>

static const char *prog = "pf_anon_write";

static void usage(void)
{
	printf("usage: %s [--mb N] [--rounds N] [--thp]\n"
	       "  --mb N      region size per round in MiB (default 256)\n"
	       "  --rounds N  rounds, a fresh region each (default 2)\n"
	       "  --thp       madvise(MADV_HUGEPAGE) on the region\n",
	       prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"mb", required_argument, NULL, 'm'},
	    {"rounds", required_argument, NULL, 'r'},
	    {"thp", no_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	uint64_t mb = 256, rounds = 2, round, i, pages, sum = 0, start;
	bool thp = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mb = bench_parse_u64(prog, "mb", optarg, 1, 1 << 20);
			break;
		case 'r':
			rounds = bench_parse_u64(prog, "rounds", optarg, 1, 1 << 20);
			break;
		case 't':
			thp = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
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
