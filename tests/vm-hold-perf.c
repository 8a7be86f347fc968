// SPDX-License-Identifier: MIT
/*
 * Holds open, on itself, every perf counter that a run opens on its target
 * (daemon/perfcount.c), until it is killed. scripts/test-stock-kernel.sh
 * starts it at the guest's boot, as it holds the probe's tracepoints there:
 * the kernel patches a static branch in its code when the first counter of a
 * kind opens and when the last one closes (the software events' branches in
 * the fault and scheduler paths, and the scheduler's per-task hooks), and
 * under TCG a CPU can loop for good at such a patch site. With one counter of
 * each kind held for the whole boot, no run's counters patch anything.
 *
 * Prints "perf counters held: N" once they are open; exits 1 when none opens.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/perfcount.h"

int main(void)
{
	struct perfcount pc;
	pid_t self = getpid();
	int r;

	r = perfcount_open(&self, 1, false, &pc);
	if (r < 0) {
		fprintf(stderr, "vm-hold-perf: no perf counter opens: %s\n", strerror(-r));
		return 1;
	}
	printf("perf counters held: %zu\n", pc.n);
	fflush(stdout);
	for (;;)
		pause();
}
