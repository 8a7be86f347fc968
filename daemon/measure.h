/* SPDX-License-Identifier: MIT */
/*
 * One measured run: the target runs (or is observed) under a level's probe
 * and its perf counters; the result is a measurement vector.
 *
 * Vector contents: "<node>/count" and "<node>/time_ns" (the metrics each
 * node declares) for every node the run covers: the plan's slots directly,
 * other nodes derived from the per-class totals (tracepoint leaves) and
 * from their children (inner nodes); "class/<name>/count|time_ns" for every
 * class counted; "perf/<event>"; "target/wall_ns" for workloads, and
 * "target/thread_ns" (the lives of all its threads and processes, summed)
 * when the built-in probe ran. A service (or unit) adds "target/window_ns"
 * (the window observed), "target/cpu_ns" (its processes' CPU time in it),
 * "target/processes" (at the end) and, with an SLI, "target/sli" (the
 * window's value) and "target/sli_cost" (the same, oriented so that larger
 * is worse: the value when lower is better, its negative when higher is),
 * and for an SLI command "target/sli_ns", how long it ran.
 * A running target's "target/window_edges" (1) says that the waits in
 * calls under way at the window's start and end were counted, their part
 * inside it (bpf/edges.bpf.h); those passes also count its live threads,
 * and "target/threads" is their mean over the two.
 *
 * With measure_opts.witness, the run also collects what the kernel says of
 * it on its own (witness.h): perf's fork and exit records of the target's
 * tasks (their lives), the target threads' run_delay where it can be read,
 * the system's TLB shootdown interrupts, and each authored program's run
 * count. They go to measure_result.witness and are never part of the vector.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#include "daemon/mvec.h"
#include "daemon/probe.h"
#include "daemon/service.h"
#include "daemon/target.h"
#include "daemon/tree.h"
#include "daemon/witness.h"
#include "daemon/workload.h"

struct measure_target {
	const struct workload *workload; /* a registered workload, or NULL */
	const char *victims_dir;
	pid_t pid;			/* a running process when workload is NULL, or 0 */
	const struct service *service;	/* a defined service: every process of its cgroup */
	const char *unit;		/* a systemd unit: as a service with no SLI */
	unsigned window_ms;		/* the observation window of a running target */
	/* a service's SLI command: its longest run in the reference (0: none known), for its limit */
	uint64_t sli_reference_ns;
};

struct measure_opts {
	bool probe_stats; /* kernel.bpf_stats while measuring, for the overhead figure */
	bool witness;	  /* collect the kernel's own figures of the run (measure_result.witness) */
	bool (*should_stop)(void *userdata);
	void *userdata;
};

struct measure_result {
	struct mvec vec;
	struct target_result target;
	json_t *probe;	  /* plan, programs, run counts and overhead */
	char *error;	  /* why the run failed, for the job's error */
	char *error_code; /* "probe_rejected", "workload_failed", "target_gone", ... */
	char *verifier_log;
	struct witness_figures witness; /* each NAN unless opts.witness had it collected */
};
void measure_result_clear(struct measure_result *r);

/*
 * A service's SLI command may run for the window and SLI_GRACE_S seconds
 * more; in a diagnosis, also as long as SLI_SLOWER_MAX times its longest
 * run in the reference, up to SLI_LIMIT_MAX_S, since a command that does a
 * fixed amount of work (N requests) takes as much longer as the service is
 * slower, which is when it is diagnosed. The longest run of an SLI command
 * in a reference's runs (0 where none says), for measure_target.
 */
uint64_t measure_sli_longest_ns(const struct mvec *runs, size_t n);
/* How long tg's SLI command may run, in seconds. */
unsigned measure_sli_limit_s(const struct measure_target *tg);

/*
 * Run once. Returns 0 with ret filled when the target ran to completion
 * (exit status 0) or the window ended; otherwise a negative errno with
 * ret->error and ret->error_code set (-ECANCELED when should_stop said so).
 * Every program is detached before this returns.
 */
int measure_run(const struct tree *t, const struct probe_plan *plan,
		const struct measure_target *tg, const struct measure_opts *o,
		struct measure_result *ret);

/*
 * An unmeasured run of a workload (no probe), discarded: the first run
 * after an idle period pays for what the idle period took away (caches,
 * and on a VM memory handed back to the host), and a reference and a
 * diagnosis must both start warm. Fails as measure_run does (a workload
 * that cannot run is found here). Running targets: nothing to do.
 */
int measure_warmup(const struct measure_target *tg, const struct measure_opts *o,
		   struct measure_result *ret);

/*
 * The CPU time a running target (a process, a service, a unit) spends from
 * the clock's start, counted as a window counts it: its processes', those
 * that join and those that end included. For the wait for a quiet machine
 * before a reference's run. -EINVAL for a workload; service_locate's and
 * target_cpu's errors when the target is not there.
 */
struct target_clock;
int target_clock_start(const struct measure_target *tg, struct target_clock **ret);
uint64_t target_clock_ns(struct target_clock *c);
void target_clock_free(struct target_clock *c);

/* Node values from raw counters (pure; exposed for tests). active: classes counted. */
void measure_fill_nodes(const struct tree *t, const struct probe_plan *plan,
			const struct probe_counts *c, struct mvec *v);
