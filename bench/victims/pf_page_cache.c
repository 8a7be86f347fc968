// SPDX-License-Identifier: MIT
/*
 * pf_page_cache: file read faults served from the page cache. A data file
 * (created on the first run, then read once so it is cached) is mapped
 * private and read-only each round, one byte read per 4 KiB page. The
 * pages are cached, so the faults are minor: the fault finds the cached
 * folio and maps its neighbours too (fault-around; large folios map whole),
 * so there are far fewer faults than pages, about 270 per 256 MiB here.
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "pf_page_cache";

int main(int argc, char **argv)
{
	uint64_t mb = 256, rounds = 40, round, i, pages, sum = 0, start;
	const char *dir = NULL;
	const struct bench_flag flags[] = {
	    {"mb", "N", "data file size in MiB", &mb, 1, 1 << 16},
	    {"rounds", "N", "rounds, a fresh mapping each", &rounds, 1, 1 << 20},
	    {"dir", "DIR", "where the data file lives (default /var/tmp/argus-victims-UID)",
	     .str = &dir},
	    {},
	};
	int fd;

	bench_parse_flags(prog, "File read faults served from the page cache.", flags, argc, argv);
	pages = mb * MIB / PAGE_SIZE_4K;

	start = bench_now_ns();
	fd = bench_open_data(prog, dir, "page_cache", mb);
	bench_warm_file(prog, fd);
	for (round = 0; round < rounds; round++) {
		volatile const char *p = mmap(NULL, mb * MIB, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			bench_die(prog, "mmap: %s", strerror(errno));
		for (i = 0; i < pages; i++)
			sum += (unsigned char)p[i * PAGE_SIZE_4K];
		munmap((void *)p, mb * MIB);
	}
	close(fd);
	printf("%s mb=%llu rounds=%llu pages_read=%llu checksum=%llu elapsed_ms=%.1f\n", prog,
	       (unsigned long long)mb, (unsigned long long)rounds,
	       (unsigned long long)(pages * rounds), (unsigned long long)sum,
	       (bench_now_ns() - start) / 1e6);
	return 0;
}
