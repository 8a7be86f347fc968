// SPDX-License-Identifier: MIT
/*
 * pf_major: file faults that read from storage. Like pf_page_cache, but
 * each round first drops the file from the page cache
 * (POSIX_FADV_DONTNEED) and maps it with MADV_RANDOM, so readahead does
 * not fetch neighbours: every 4 KiB page read is a major fault.
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "pf_major";

int main(int argc, char **argv)
{
	uint64_t mb = 48, rounds = 1, round, i, pages, sum = 0, start;
	const char *dir = NULL;
	const struct bench_flag flags[] = {
	    {"mb", "N", "data file size in MiB", &mb, 1, 1 << 16},
	    {"rounds", "N", "rounds, the file dropped from the cache before each", &rounds, 1,
	     1 << 20},
	    {"dir", "DIR", "where the data file lives (default /var/tmp/argus-victims-UID)",
	     .str = &dir},
	    {},
	};
	int fd, r;

	bench_parse_flags(prog, "File faults that read every page from storage.", flags, argc,
			  argv);
	pages = mb * MIB / PAGE_SIZE_4K;

	start = bench_now_ns();
	fd = bench_open_data(prog, dir, "major", mb);
	for (round = 0; round < rounds; round++) {
		volatile const char *p;

		/* The file is clean (synced when created), so this empties its cache. */
		r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (r)
			bench_die(prog, "posix_fadvise(DONTNEED): %s", strerror(r));
		p = mmap(NULL, mb * MIB, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			bench_die(prog, "mmap: %s", strerror(errno));
		if (madvise((void *)p, mb * MIB, MADV_RANDOM) < 0)
			bench_die(prog, "madvise(MADV_RANDOM): %s", strerror(errno));
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
