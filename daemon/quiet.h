/* SPDX-License-Identifier: MIT */
/*
 * Waiting for a quiet machine. A reference is the yardstick of every later
 * diagnosis, so its runs should not share the machine with someone else's
 * burst of work: before each reference run argusd writes dirty data out and
 * waits, up to a time limit, until no CPU is busier than a limit over one
 * sampling interval, and says how long it waited and how busy the CPUs were.
 * A machine that never quiets is measured anyway, and the trace says so.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define QUIET_CPUS_MAX 1024

/* Cumulative jiffies of one CPU, from a "cpuN ..." line of /proc/stat. */
struct cpu_times {
	int cpu;
	uint64_t busy;	/* user + nice + system + irq + softirq + steal */
	uint64_t total; /* busy + idle + iowait */
};

/*
 * Parse the per-CPU lines of /proc/stat text (pure). Returns the number of
 * CPUs written to ret (at most max), or -EINVAL when there is none.
 */
int cpu_times_parse(const char *text, struct cpu_times *ret, size_t max);

/*
 * The busiest CPU's busy fraction between two samples of the same CPUs
 * (pure): busy delta / total delta per CPU, the largest; 0 when no time
 * passed. CPUs missing from either sample are left out.
 */
double cpu_busiest(const struct cpu_times *a, size_t na, const struct cpu_times *b, size_t nb);

struct quiet_opts {
	double limit;	     /* busiest CPU's fraction that counts as quiet, 0.15 */
	unsigned sample_ms;  /* one sampling interval, 1000 */
	unsigned timeout_ms; /* give up waiting after this, 10000 */
	bool (*should_stop)(void *userdata);
	void *userdata;
};

void quiet_opts_default(struct quiet_opts *o);

struct quiet_report {
	bool quiet;	   /* reached the limit before the timeout */
	uint64_t waited_ms; /* time spent waiting, sync included */
	double busiest;	   /* the last sample's busiest CPU fraction */
	int busiest_cpu;   /* ... and which CPU */
	bool stopped;	   /* should_stop said so while waiting */
};

/*
 * sync(), then sample /proc/stat every sample_ms until the busiest CPU is at
 * most limit busy or timeout_ms passed. 0 with *ret filled (quiet or not);
 * a negative errno when /proc/stat cannot be read.
 */
int quiet_wait(const struct quiet_opts *o, struct quiet_report *ret);

/* {"quiet", "waited_ms", "busiest_cpu", "busiest"} for the trace. */
json_t *quiet_report_to_json(const struct quiet_report *r);
