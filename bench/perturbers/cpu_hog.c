// SPDX-License-Identifier: MIT
/*
 * cpu_hog: runqueue contention. --threads busy loops pinned to --cpu
 * (default CPU 0, where the bundled victims run).
 */
#include "bench/common.h"

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
	uint64_t threads = 1, i;
	const struct bench_flag flags[] = {
	    {"threads", "N", "busy threads, all on the same CPU", &threads, 1, 64},
	    {},
	};
	struct perturb_opts o;
	pthread_t th[64];
	sigset_t old;
	int r;

	perturb_parse("cpu_hog", "Busy threads on one CPU (runqueue contention).", 0, flags, argc,
		      argv, &o);
	hog_cpu = o.cpu;
	perturb_begin("cpu_hog", o.restore_only, hog_cpu);
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
