/* SPDX-License-Identifier: MIT */
/*
 * Stepping aside: while a workload pinned to some CPUs runs, argusd's own
 * threads (HTTP, the job worker, the main loop) keep off those CPUs when
 * they may run elsewhere, so that serving a poll or writing the store does
 * not preempt the target and read as its runqueue wait.
 *
 * aside_enter() narrows every thread of this process to its allowed CPUs
 * minus the target's, when that leaves any; aside_leave() gives each back
 * the mask it had. Threads started in between inherit the narrowed mask of
 * their creator and keep it. Best effort: a thread that exits in between is
 * skipped.
 */
#pragma once

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

struct aside_thread {
	pid_t tid;
	cpu_set_t mask; /* before aside_enter() */
};

struct aside {
	struct aside_thread *threads; /* the threads aside_enter() narrowed */
	size_t n;
};

/* Returns the number of threads narrowed (0: none could step aside), or -errno. */
int aside_enter(const cpu_set_t *target, struct aside *a);
void aside_leave(struct aside *a);
