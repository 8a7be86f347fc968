/* SPDX-License-Identifier: MIT */
/*
 * The host's pace: how fast this machine's CPUs run a fixed piece of work,
 * read after each reference run and each run of a diagnosis, so that a
 * result can say when the cores themselves ran at another speed than when
 * the reference was recorded.
 *
 * The work is a chase of dependent loads around a random cycle of cache
 * lines in a buffer of HOST_PACE_BYTES, small enough for a core's own
 * cache: each trial first walks the cycle once (warm), then times a walk;
 * the fastest of HOST_PACE_TRIALS counts, so a task that takes the CPU for
 * a moment only delays a walk. What moves it is the core's speed: its
 * clock, and on a virtual machine whatever else the host runs on the same
 * core. Work inside the machine can move it too: stress-ng's icache
 * stressor on the other CPU slowed it 1.2 to 5 times on the evaluation VM
 * (and the programs beside it by a third to four fifths), and one reading
 * beside a CPU hog on the same CPU was slow. On that VM a chase of this
 * size moved twofold between minutes, with Pearson's r 0.73 and 0.59
 * against two programs' run times (bench/eval/results/2026-12-05/host-pace);
 * over five runs that agreed within 2% its readings spread by up to 1.35
 * times (bench/eval/results/2026-12-06/heldout-set30/host-pace). It is a
 * report, not a correction: no verdict depends on it. A reference recorded
 * while the host ran slower than its usual pace is recorded again
 * (reference.c, host_pace_slow).
 */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define HOST_PACE_BYTES (1024 * 1024)
#define HOST_PACE_LINE 64
#define HOST_PACE_TRIALS 15
/* a reading this much slower (or faster) than the reference's is said in the summary */
#define HOST_PACE_MOVED 1.25

struct host_pace {
	double ns_per_load; /* the fastest trial's, 0 when not read */
	int cpu;	    /* where it was read, -1 when not pinned */
	uint64_t took_ns;   /* the reading's own time */
};

/*
 * Link the n lines of buf (each HOST_PACE_LINE bytes, n at least 2) into
 * one cycle in an order drawn from seed (pure): each line's first word
 * holds the address of the next. Returns the first line.
 */
void **host_pace_cycle(void *buf, size_t n, uint64_t seed);

/*
 * Read the pace on the first CPU of cpus (the calling thread moved there
 * and back), or where the thread runs when cpus is NULL or empty. 0 with
 * *ret filled; a negative errno when the buffer cannot be had or the
 * thread cannot be moved.
 */
int host_pace_read(const cpu_set_t *cpus, struct host_pace *ret);

/* The median of the n readings' ns_per_load that were read (pure); 0 when none was. */
double host_pace_median(const double *ns, size_t n);

/*
 * The sentence a summary carries when now is HOST_PACE_MOVED times slower
 * or faster than ref (malloc'd), NULL when it is not or either is 0 (pure).
 */
char *host_pace_moved(double now, double ref);

/*
 * The warning a reference carries when its runs' readings, fastest min and
 * slowest max, differ by HOST_PACE_MOVED times or more (malloc'd), NULL
 * when they do not or either is 0 (pure).
 */
char *host_pace_unsteady(double min, double max);

/*
 * The warning a reference carries when its runs' median reading now is
 * HOST_PACE_MOVED times or more the host's usual pace, usual, read on the
 * same CPU (malloc'd), NULL when it is not or either is 0 (pure).
 */
char *host_pace_slow(double now, double usual);

/*
 * The host runs at its usual pace again (pure): two readings in a row,
 * prev then now, each under HOST_PACE_MOVED times usual (one reading
 * under it inside a slow stretch is common). False when any is 0.
 */
bool host_pace_back(double prev, double now, double usual);

/* {"ns_per_load", "cpu"?, "took_ms"} for the trace. */
json_t *host_pace_to_json(const struct host_pace *p);
