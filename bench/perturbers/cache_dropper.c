// SPDX-License-Identifier: MIT
/*
 * cache_dropper: page cache loss. Every --interval-ms (default 50):
 * sync, then drop the page cache, dentries and inodes (drop_caches = 3).
 * drop_caches is an action, not a setting: there is nothing to restore.
 */
#include "bench/common.h"

#include <getopt.h>

#define DROP_CACHES "/proc/sys/vm/drop_caches"

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    PERTURB_COMMON_OPTIONS,
	    {"interval-ms", required_argument, NULL, 'i'},
	    {},
	};
	bool restore_only = false;
	unsigned interval = 50;
	uint64_t drops = 0;
	int c, cpu = -1, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = (int)bench_parse_u64("cache_dropper", "cpu", optarg, 0,
						   CPU_SETSIZE - 1);
			break;
		case 'i':
			interval = (unsigned)bench_parse_u64("cache_dropper", "interval-ms", optarg,
							     1, 60000);
			break;
		case 'R':
			restore_only = true;
			break;
		case 'h':
			printf("usage: cache_dropper [--cpu N] [--interval-ms N]\n");
			return 0;
		default:
			return 2;
		}
	}
	perturb_begin("cache_dropper", restore_only, cpu);
	while (!perturb_stop) {
		sync();
		r = perturb_poke(DROP_CACHES, "3");
		if (r < 0) {
			fprintf(stderr, "cache_dropper: %s: %s\n", DROP_CACHES, strerror(-r));
			perturb_end();
			return 1;
		}
		if (drops++ == 0)
			perturb_ready();
		bench_sleep_ms(interval);
	}
	fprintf(stderr, "cache_dropper: %llu drops\n", (unsigned long long)drops);
	perturb_end();
	return 0;
}
