// SPDX-License-Identifier: MIT
/*
 * gups: random 8-byte read-modify-write updates (HPCC RandomAccess style)
 * over a table populated when mapped, so that the timed loop is TLB and
 * cache misses without page faults.
 */
#include "bench/common.h"

#include <getopt.h>
#include <sys/mman.h>

static const char *prog = "gups";

static void usage(void)
{
	printf("usage: %s [--mb N] [--updates N]\n"
	       "  --mb N       table size in MiB, a power of two (default 128)\n"
	       "  --updates N  random updates, in millions (default 16)\n",
	       prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"mb", required_argument, NULL, 'm'},
	    {"updates", required_argument, NULL, 'u'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	uint64_t mb = 128, updates = 16, n, mask, i, x = 1, sum = 0, start;
	uint64_t *t;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mb = bench_parse_u64(prog, "mb", optarg, 1, 1 << 14);
			if (mb & (mb - 1))
				bench_die(prog, "--mb: %llu is not a power of two",
					  (unsigned long long)mb);
			break;
		case 'u':
			updates = bench_parse_u64(prog, "updates", optarg, 1, 1 << 20);
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
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
