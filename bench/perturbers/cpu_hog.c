// SPDX-License-Identifier: MIT
/*
 * cpu_hog: runqueue contention. --threads busy loops pinned to --cpu
 * (default CPU 0, where the bundled victims run).
 */
#include "bench/common.h"

#include <getopt.h>
#include <pthread.h>

static int hog_cpu;

static void *spin(void *arg)
{
	volatile uint64_t n = 0;

	(void)arg;
	bench_pin_cpu(hog_cpu);
	while (!perturb_stop)
		n++;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    PERTURB_COMMON_OPTIONS,
	    {"threads", required_argument, NULL, 't'},
	    {},
	};
	bool restore_only = false;
	pthread_t th[64];
	uint64_t threads = 1, i;
	sigset_t old;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			hog_cpu =
			    (int)bench_parse_u64("cpu_hog", "cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 't':
			threads = bench_parse_u64("cpu_hog", "threads", optarg, 1, 64);
			break;
		case 'R':
			restore_only = true;
			break;
		case 'h':
			printf(
			    "usage: cpu_hog [--cpu N] [--threads N]   (default CPU 0, 1 thread)\n");
			return 0;
		default:
			return 2;
		}
	}
	perturb_begin("cpu_hog", restore_only, hog_cpu);
	/* Workers never take the stop signals: the main thread must wake from its wait. */
	perturb_block_signals(&old);
	for (i = 0; i < threads; i++) {
		r = pthread_create(&th[i], NULL, spin, NULL);
		if (r)
			bench_die("cpu_hog", "pthread_create: %s", strerror(r));
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	perturb_ready();
	perturb_wait();
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	perturb_end();
	return 0;
}
