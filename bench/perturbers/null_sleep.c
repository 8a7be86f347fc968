// SPDX-License-Identifier: MIT
/* null_sleep: a control perturber that only sleeps until stopped. */
#include "bench/common.h"

#include <getopt.h>

int main(int argc, char **argv)
{
	static const struct option opts[] = {PERTURB_COMMON_OPTIONS, {}};
	bool restore_only = false;
	int c, cpu = -1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = (int)bench_parse_u64("null_sleep", "cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'R':
			restore_only = true;
			break;
		case 'h':
			printf("usage: null_sleep [--cpu N]\n");
			return 0;
		default:
			return 2;
		}
	}
	perturb_begin("null_sleep", restore_only, cpu);
	perturb_ready();
	perturb_wait();
	perturb_end();
	return 0;
}
