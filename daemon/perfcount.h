/* SPDX-License-Identifier: MIT */
/*
 * perf counters of the target: software events always (page faults, minor
 * and major faults, context switches, CPU migrations, task clock), hardware
 * cycles and instructions where a PMU exists. Counters follow children
 * (inherit) and, for a spawned workload, start at its exec.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "daemon/mvec.h"

#define PERFCOUNT_MAX 64

struct perfcount {
	int fds[PERFCOUNT_MAX];
	int event[PERFCOUNT_MAX]; /* index into the event table */
	size_t n;
};

/*
 * Open every available counter on each thread in tids (inherit to future
 * children). enable_on_exec: count from the next exec (a spawned workload
 * held before exec); otherwise counting starts at once. Events the kernel
 * refuses (no PMU) are skipped; returns -errno only when none opens.
 */
int perfcount_open(const pid_t *tids, size_t n_tids, bool enable_on_exec, struct perfcount *ret);
/* Add "perf/<event>" values (summed over threads, scaled for multiplexing) to v. */
int perfcount_read(const struct perfcount *pc, struct mvec *v);
void perfcount_close(struct perfcount *pc);
