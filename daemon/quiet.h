/* SPDX-License-Identifier: MIT */
/*
 * Waiting for a quiet machine. A reference is the yardstick of every later
 * diagnosis, so its runs should not share the machine with someone else's
 * burst of work: before each reference run argusd writes dirty data out and
 * waits, up to a time limit, until no CPU is busier than a limit over one
 * sampling interval, and says how long it waited and how busy the CPUs were.
 * A machine that never quiets is measured anyway, and the trace says so.
 *
 * A running target (a process, a service) is not waited for: its own work
 * is what the reference records. Its CPU time over the interval, in CPUs'
 * worth, is taken off the busiest CPU's fraction: a CPU counts as busy with
 * others' work only beyond all the time the target could have spent on it,
 * so the target alone never keeps the machine from being quiet, and
 * someone else's burst shows as long as the target uses less than the rest
 * of a CPU.
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
	unsigned sample_ms;  /* one sampling interval, 1000 (quiet_sample_ms of argusd.conf) */
	unsigned timeout_ms; /* give up waiting after this, 10000 */
	bool (*should_stop)(void *userdata);
	void *userdata;
	/* a running target's CPU time so far, in ns; NULL when there is none */
	uint64_t (*target_ns)(void *target);
	void *target;
};

/*
 * The busiest CPU's fraction less a running target's share (its CPU time
 * over the interval, in CPUs' worth), at least 0 (pure).
 */
double quiet_others(double busiest, double target_cpus);

void quiet_opts_default(struct quiet_opts *o);

struct quiet_report {
	bool quiet;	   /* reached the limit before the timeout */
	uint64_t waited_ms; /* time spent waiting, sync included */
	double busiest;	   /* the last sample's busiest CPU fraction */
	int busiest_cpu;   /* ... and which CPU */
	bool stopped;	   /* should_stop said so while waiting */
	bool has_target;   /* a running target's share was taken off */
	double target_cpus; /* ... the last sample's, in CPUs' worth */
};

/*
 * sync(), then sample /proc/stat (and the target's CPU time) every
 * sample_ms until the busiest CPU, less the target's share, is at most
 * limit busy or timeout_ms passed. 0 with *ret filled (quiet or not); a
 * negative errno when /proc/stat cannot be read.
 */
int quiet_wait(const struct quiet_opts *o, struct quiet_report *ret);

/* {"quiet", "waited_ms", "busiest_cpu", "busiest"}, and "target_cpus" with a target, for the trace. */
json_t *quiet_report_to_json(const struct quiet_report *r);
