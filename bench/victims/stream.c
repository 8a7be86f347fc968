// SPDX-License-Identifier: MIT
/*
 * stream: memory bandwidth, as STREAM's copy, scale, add and triad over
 * three arrays. The arrays are populated when mapped (MAP_POPULATE), so
 * the timed loops take no page faults: the kernel is off the hot path.
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "stream";

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
	uint64_t mb = 16, iterations = 80, it, start;
	const struct bench_flag flags[] = {
	    {"mb", "N", "size of each of the three arrays in MiB", &mb, 1, 1 << 14},
	    {"iterations", "N", "copy+scale+add+triad passes", &iterations, 1, 1 << 20},
	    {},
	};
	size_t n, j;
	double *a, *b, *cc, check = 0;
	const double s = 3.0;

	bench_parse_flags(prog, "Memory bandwidth over pre-populated arrays.", flags, argc, argv);
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
