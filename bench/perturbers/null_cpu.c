// SPDX-License-Identifier: MIT
/*
 * null_cpu: a control perturber: a busy loop on a CPU the victim does not
 * use (default the last CPU), touching no memory beyond its registers.
 */
#include "bench/common.h"

#include <getopt.h>

int main(int argc, char **argv)
{
	static const struct option opts[] = {PERTURB_COMMON_OPTIONS, {}};
	bool restore_only = false;
	int c, cpu = bench_ncpus() - 1;
	volatile uint64_t spin = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = (int)bench_parse_u64("null_cpu", "cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'R':
			restore_only = true;
			break;
		case 'h':
			printf("usage: null_cpu [--cpu N]   (default: the last CPU)\n");
			return 0;
		default:
			return 2;
		}
	}
	perturb_begin("null_cpu", restore_only, cpu);
	perturb_ready();
	while (!perturb_stop)
		spin++;
	perturb_end();
	return 0;
}
