// SPDX-License-Identifier: MIT
/*
 * cache_dropper: page cache loss. Every --interval-ms (default 50):
 * sync, then drop the page cache, dentries and inodes (drop_caches = 3).
 * drop_caches is an action, not a setting: there is nothing to restore.
 */
#include "bench/common.h"

#define DROP_CACHES "/proc/sys/vm/drop_caches"

int main(int argc, char **argv)
{
	uint64_t interval = 50, drops = 0;
	const struct bench_flag flags[] = {
	    {"interval-ms", "N", "pause between drops", &interval, 1, 60000},
	    {},
	};
	struct perturb_opts o;
	int r;

	perturb_parse("cache_dropper", "Sync and drop the page cache in a loop.", -1, flags, argc,
		      argv, &o);
	perturb_begin("cache_dropper", o.restore_only, o.cpu);
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
		bench_sleep_ms((unsigned)interval);
	}
	fprintf(stderr, "cache_dropper: %llu drops\n", (unsigned long long)drops);
	perturb_end();
	return 0;
}
