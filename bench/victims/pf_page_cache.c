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

#include <getopt.h>
#include <sys/mman.h>

static const char *prog = "pf_page_cache";

static void usage(void)
{
	printf("usage: %s [--mb N] [--rounds N] [--dir DIR]\n"
	       "  --mb N      data file size in MiB (default 256)\n"
	       "  --rounds N  rounds, a fresh mapping each (default 100)\n"
	       "  --dir DIR   where the data file lives (default /var/tmp/argus-victims-UID)\n",
	       prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"mb", required_argument, NULL, 'm'},
	    {"rounds", required_argument, NULL, 'r'},
	    {"dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	uint64_t mb = 256, rounds = 100, round, i, pages, sum = 0, start;
	const char *dir = NULL;
	char path[PATH_MAX], name[64];
	int c, fd;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mb = bench_parse_u64(prog, "mb", optarg, 1, 1 << 16);
			break;
		case 'r':
			rounds = bench_parse_u64(prog, "rounds", optarg, 1, 1 << 20);
			break;
		case 'd':
			dir = optarg;
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
	bench_data_dir(prog, dir, path, sizeof(path));
	snprintf(name, sizeof(name), "page_cache_%llumb.dat", (unsigned long long)mb);

	start = bench_now_ns();
	fd = bench_data_file(prog, path, name, mb * MIB);
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
