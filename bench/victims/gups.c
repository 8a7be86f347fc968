// SPDX-License-Identifier: MIT
/*
 * gups: random 8-byte read-modify-write updates (HPCC RandomAccess style)
 * over a table populated when mapped, so that the timed loop is TLB and
 * cache misses without page faults.
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "gups";

int main(int argc, char **argv)
{
	uint64_t mb = 128, updates = 16, n, mask, i, x = 1, sum = 0, start;
	const struct bench_flag flags[] = {
	    {"mb", "N", "table size in MiB, a power of two", &mb, 1, 1 << 14},
	    {"updates", "N", "random updates, in millions", &updates, 1, 1 << 20},
	    {},
	};
	uint64_t *t;

	bench_parse_flags(prog, "Random updates over a pre-populated table.", flags, argc, argv);
	if (mb & (mb - 1))
		bench_die(prog, "--mb: %llu is not a power of two", (unsigned long long)mb);
	n = mb * MIB / sizeof(uint64_t);
	mask = n - 1;

	start = bench_now_ns();
	t = mmap(NULL, mb * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (t == MAP_FAILED)
		bench_die(prog, "mmap: %s", strerror(errno));
	for (i = 0; i < n; i++)
		t[i] = i;
	for (i = 0; i < updates * 1000000; i++) {
		/* xorshift64: a fixed pseudo-random sequence. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		t[x & mask] ^= x;
	}
	for (i = 0; i < n; i += 512)
		sum += t[i];
	printf("%s mb=%llu updates=%llu checksum=%llu elapsed_ms=%.1f\n", prog,
	       (unsigned long long)mb, (unsigned long long)(updates * 1000000),
	       (unsigned long long)sum, (bench_now_ns() - start) / 1e6);
	return 0;
}
