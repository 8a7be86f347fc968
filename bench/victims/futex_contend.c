// SPDX-License-Identifier: MIT
/*
 * futex_contend: lock contention. Threads take one pthread mutex many
 * times for a short critical section; a waiter sleeps in futex_wait and the
 * holder wakes it. On a single CPU, contention comes from a holder that
 * leaves the CPU while it holds the lock: every --nap-every N iterations
 * the holder sleeps --nap-us inside the lock, the other threads run into
 * it and wait in the kernel. A nap is a sleep, not a yield: under a busy
 * task on the same CPU, a yield would hand the CPU away for a whole slice
 * each time, while a sleeper that wakes takes the CPU back, so the run
 * stays bounded under CPU sharing.
 */
#include "bench/common.h"

#include <pthread.h>
#include <time.h>

static const char *prog = "futex_contend";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_counter;
static uint64_t iterations = 3000000, nap_every = 4096, nap_us = 50;

static void *worker(void *arg)
{
	uint64_t i, local = (uintptr_t)arg, k;

	for (i = 0; i < iterations; i++) {
		pthread_mutex_lock(&lock);
		/* A short critical section: a few dependent updates. */
		for (k = 0; k < 8; k++)
			shared_counter = shared_counter * 6364136223846793005ull + k + 1;
		if (nap_every && i % nap_every == 0) {
			struct timespec ts = {.tv_nsec = (long)(nap_us * 1000)};

			nanosleep(&ts, NULL);
		}
		pthread_mutex_unlock(&lock);
		for (k = 0; k < 8; k++)
			local = local * 2862933555777941757ull + 3037000493ull;
	}
	return (void *)(uintptr_t)local;
}

int main(int argc, char **argv)
{
	uint64_t nthreads = 4, i, start;
	const struct bench_flag flags[] = {
	    {"threads", "N", "contending threads", &nthreads, 1, 256},
	    {"iterations", "N", "lock acquisitions per thread", &iterations, 1, 1ull << 32},
	    {"nap-every", "N", "sleep while holding the lock every N iterations, 0 never",
	     &nap_every, 0, 1ull << 32},
	    {"nap-us", "US", "length of that sleep in microseconds", &nap_us, 1, 999999},
	    {},
	};
	pthread_t th[256];
	int r;

	bench_parse_flags(prog, "Lock contention on one pthread mutex.", flags, argc, argv);

	start = bench_now_ns();
	for (i = 0; i < nthreads; i++) {
		r = pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
		if (r)
			bench_die(prog, "pthread_create: %s", strerror(r));
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("%s threads=%llu iterations=%llu acquisitions=%llu counter=%llu elapsed_ms=%.1f\n",
	       prog, (unsigned long long)nthreads, (unsigned long long)iterations,
	       (unsigned long long)(nthreads * iterations), (unsigned long long)shared_counter,
	       (bench_now_ns() - start) / 1e6);
	return 0;
}
