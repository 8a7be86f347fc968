// SPDX-License-Identifier: MIT
/*
 * The host's pace over time: argusd's own reading (daemon/host_pace.h, the
 * fastest of its timed walks of a cycle of dependent loads) on each CPU
 * asked for, one after the other, every INTERVAL_MS, for SECONDS. One line
 * a reading: seconds since the start, the CPU, ns per load, the reading's
 * own ms. How long the host's slow stretches last is read from it (the
 * wait of a reference for the host's usual pace, reference.c).
 *
 *   bench-host-pace-log SECONDS INTERVAL_MS [CPU...]   (default CPUs 0 and 1)
 */
#include "daemon/host_pace.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_CPUS_MAX 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int number(const char *s, long lo, long hi, long *ret)
{
	char *end;

	errno = 0;
	*ret = strtol(s, &end, 10);
	return errno || end == s || *end || *ret < lo || *ret > hi ? -1 : 0;
}

int main(int argc, char **argv)
{
	long seconds, interval_ms, cpus[LOG_CPUS_MAX] = {0, 1};
	int n_cpus = 2, i;
	double t0;

	if (argc < 3 || number(argv[1], 1, 86400, &seconds) < 0 ||
	    number(argv[2], 10, 3600000, &interval_ms) < 0 || argc - 3 > LOG_CPUS_MAX) {
		fprintf(stderr, "usage: bench-host-pace-log SECONDS INTERVAL_MS [CPU...]\n");
		return 2;
	}
	if (argc > 3) {
		n_cpus = argc - 3;
		for (i = 0; i < n_cpus; i++)
			if (number(argv[3 + i], 0, CPU_SETSIZE - 1, &cpus[i]) < 0) {
				fprintf(stderr, "bench-host-pace-log: no CPU %s\n", argv[3 + i]);
				return 2;
			}
	}
	printf("# s cpu ns_per_load took_ms\n");
	t0 = now_s();
	while (now_s() - t0 < (double)seconds) {
		struct timespec pause = {.tv_sec = interval_ms / 1000,
					 .tv_nsec = (interval_ms % 1000) * 1000000L};

		for (i = 0; i < n_cpus; i++) {
			cpu_set_t one;
			struct host_pace p;
			int r;

			CPU_ZERO(&one);
			CPU_SET((int)cpus[i], &one);
			r = host_pace_read(&one, &p);
			if (r < 0) {
				fprintf(stderr, "bench-host-pace-log: CPU %ld: %s\n", cpus[i], strerror(-r));
				return 1;
			}
			printf("%.2f %ld %.3f %.2f\n", now_s() - t0, cpus[i], p.ns_per_load,
			       (double)p.took_ns / 1e6);
		}
		fflush(stdout);
		nanosleep(&pause, NULL);
	}
	return 0;
}
