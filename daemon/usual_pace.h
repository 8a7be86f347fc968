/* SPDX-License-Identifier: MIT */
/*
 * The host's usual pace: what a reference's runs are judged against when
 * argusd asks whether the host ran slow while it was recorded
 * (reference.c, host_pace_slow). Two sources, kept a day on this host:
 * argusd's own readings of its fixed memory loop (host_pace.h), taken on
 * each of its CPUs between jobs (never during one), and the runs' median
 * reading of each reference. The usual pace on a CPU is the median of
 * both: on a host that records a reference now and then, the readings
 * between jobs are most of it, so that the day's first reference, or one
 * recorded while the host ran slow after a quiet day without references,
 * is judged against the day and not against itself.
 */
#pragma once

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* A day: how long readings and references count towards the usual pace. */
#define USUAL_PACE_DAY_NS (86400ull * 1000000000ull)
/* Readings of the last day a CPU's usual pace is taken from, at most (the newest). */
#define USUAL_PACE_READINGS 2048
/* References of the last day on this host whose pace counts, at most (the newest). */
#define USUAL_PACE_REFERENCES 100
/*
 * How often the readings' chore is called (jobs_add_chore; interval_s when
 * that is shorter): while the last day holds fewer than USUAL_PACE_FIRST
 * rounds of readings it reads at each call (a new host learns its pace in
 * its first minute), then every interval_s.
 */
#define USUAL_PACE_CALL_S 10
#define USUAL_PACE_FIRST 6

struct jobs;

/* The chore's state: where and how often to read. */
struct usual_pace_reader {
	struct store *store;
	struct jobs *jobs; /* a job queued there cuts a round short; NULL: none does */
	const char *hostname;
	cpu_set_t cpus;	     /* each read in turn */
	unsigned interval_s; /* host_pace_idle_s */
	unsigned rounds;     /* since start, and the day's before it (counted at the first call) */
	uint64_t last_ns;    /* the last round's end, CLOCK_MONOTONIC; 0: none yet */
	int next_cpu;	     /* where the round under way goes on; 0: none under way */
};

/*
 * The chore (jobs_chore_t; userdata a struct usual_pace_reader): one round
 * of readings, one on each CPU of cpus, stored, when one is due; the
 * readings older than a day forgotten. A reading takes a few ms, so on a
 * host of hundreds of CPUs a round would hold a submitted job for a second
 * or more: once a job is queued the chore stops after the reading it took
 * and the round goes on at its next call. Each call takes one reading at
 * least, so that rounds end on a host that is never without a job queued.
 */
void usual_pace_chore(void *userdata);

struct usual_pace {
	double ns;	   /* the median; 0 when there is nothing to take it from */
	size_t readings;   /* readings between jobs it was taken from */
	size_t references; /* references it was taken from */
};

/*
 * The host's usual pace on cpu (-1: a reference whose runs were not
 * pinned; every CPU's readings, and the references read unpinned), at
 * now_real_ns: the median of the readings of the last day on that CPU and
 * of the runs' median reading (host_pace_ns) of the references recorded
 * on this host in the last day whose pace was read on it. The median, not
 * the fastest: one fast moment does not make every later reference slow.
 */
int usual_pace_get(struct store *s, const char *hostname, int cpu, uint64_t now_real_ns,
		   struct usual_pace *ret);
