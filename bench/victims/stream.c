// SPDX-License-Identifier: MIT
/*
 * stream: memory bandwidth, as STREAM's copy, scale, add and triad over
 * three arrays. The arrays are populated when mapped (MAP_POPULATE), so
 * the timed loops take no page faults: the kernel is off the hot path.
 */
#include "bench/common.h"

#include <getopt.h>
#include <sys/mman.h>

static const char *prog = "stream";

static void usage(void)
{
	printf("usage: %s [--mb N] [--iterations N]\n"
	       "  --mb N          size of each of the three arrays in MiB (default 16)\n"
	       "  --iterations N  copy+scale+add+triad passes (default 80)\n",
	       prog);
}

static double *alloc_array(size_t bytes)
{
	double *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (a == MAP_FAILED)
		bench_die(prog, "mmap: %s", strerror(errno));
	return a;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"mb", required_argument, NULL, 'm'},
	    {"iterations", required_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	uint64_t mb = 16, iterations = 80, it, start;
	size_t n, j;
	double *a, *b, *cc, check = 0;
	const double s = 3.0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mb = bench_parse_u64(prog, "mb", optarg, 1, 1 << 14);
			break;
		case 'i':
			iterations = bench_parse_u64(prog, "iterations", optarg, 1, 1 << 20);
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	n = mb * MIB / sizeof(double);

	start = bench_now_ns();
	a = alloc_array(mb * MIB);
	b = alloc_array(mb * MIB);
	cc = alloc_array(mb * MIB);
	for (j = 0; j < n; j++) {
		a[j] = 1.0;
		b[j] = 2.0;
		cc[j] = 0.0;
	}
	for (it = 0; it < iterations; it++) {
		for (j = 0; j < n; j++)
			cc[j] = a[j];
		for (j = 0; j < n; j++)
			b[j] = s * cc[j];
		for (j = 0; j < n; j++)
			cc[j] = a[j] + b[j];
		for (j = 0; j < n; j++)
			a[j] = (b[j] + s * cc[j]) * 0.0625;
	}
	for (j = 0; j < n; j += 4096)
		check += a[j] + b[j] + cc[j];
	printf("%s mb=%llu iterations=%llu bytes_moved=%llu check=%.6g elapsed_ms=%.1f\n", prog,
	       (unsigned long long)mb, (unsigned long long)iterations,
	       (unsigned long long)(iterations * 10 * n * sizeof(double)), check,
	       (bench_now_ns() - start) / 1e6);
	return 0;
}
