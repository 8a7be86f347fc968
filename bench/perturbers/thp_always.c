// SPDX-License-Identifier: MIT
/*
 * thp_always: transparent huge pages for every anonymous mapping (enabled=always) until stopped;
 * the previous mode is restored on exit.
 */
#include "bench/common.h"

#include <getopt.h>

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

int main(int argc, char **argv)
{
	static const struct option opts[] = {PERTURB_COMMON_OPTIONS, {}};
	bool restore_only = false;
	int c, cpu = -1, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = (int)bench_parse_u64("thp_always", "cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'R':
			restore_only = true;
			break;
		case 'h':
			printf("usage: thp_always [--cpu N] [--restore-only]\n");
			return 0;
		default:
			return 2;
		}
	}
	perturb_begin("thp_always", restore_only, cpu);
	r = perturb_set(THP_ENABLED, "always");
	if (r < 0) {
		fprintf(stderr, "thp_always: %s: %s\n", THP_ENABLED, strerror(-r));
		perturb_end();
		return 1;
	}
	perturb_ready();
	perturb_wait();
	perturb_end();
	return 0;
}
