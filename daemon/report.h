/* SPDX-License-Identifier: MIT */
/*
 * The report of a diagnosis: what each level measured and decided, where
 * the descent stopped and why, the evidence behind the verdict (under
 * stable ids "L<level>/<metric>"), nodes that could not be measured and
 * why, probe overhead, timings. Pure data assembly.
 */
#pragma once

#include <stdint.h>
#include <jansson.h>

#include "daemon/calibrate.h"
#include "daemon/tree.h"

struct report {
	const struct tree *tree;
	const char *agent;
	int64_t reference_id;
	json_t *levels;	     /* [{level, parent, action, node, reason, scores}] */
	json_t *unavailable; /* [{node, reason}] */
	json_t *warnings;    /* [string] */
	json_t *timings;     /* {"total_s", "levels": [{level, measure_s, decide_s}]} */
	json_t *overhead;    /* [{level, program_runs, program_time_ns, ns_per_run, overhead_fraction}] */
	json_t *rq_holders;  /* the last run's probe "runq_holders", or NULL */
	json_t *rq_holders_total; /* and its "runq_holders_total", or NULL */
	json_t *wakers;	     /* the last run's probe "wakers", or NULL */
	json_t *wakers_total; /* and its "wakers_total", or NULL */
	json_t *causes;	     /* the first level that named two causes: [{node, level, share, evidence}] */
	double pace_reference; /* the reference's host pace, ns per load (host_pace.h); 0 when none */
	json_t *pace_runs;     /* [{level, ns_per_load}], a reading after each run */
	int stop_node;
	int stop_action; /* enum calib_action, -1 until stopped */
	char *stop_reason;
	const char *stop_code; /* why nothing was named (static), NULL when a path was */
	/*
	 * Why the target's slowdown cannot be established (static), NULL when
	 * it can: a running target with no SLI. A path named then is a
	 * "deviation", never a "bottleneck".
	 */
	const char *unproven;
};

void report_init(struct report *r, const struct tree *t);
void report_free(struct report *r);
void report_warn(struct report *r, const char *msg);
void report_unavailable(struct report *r, const struct tree_node *n);
/* level 0 with what "total": the whole diagnosis. */
void report_timing(struct report *r, int level, const char *what, uint64_t ns);
/* The level's probe info from measure (borrowed); runs in order, the last one's holders kept. */
void report_probe(struct report *r, int level, const json_t *probe);
void report_level(struct report *r, int level, int parent, const struct calib_decision *d);
/* The host's pace read after a run of the level (host_pace.h), in ns per load. */
void report_pace(struct report *r, int level, double ns_per_load);
/*
 * Where the descent ended. node -1 with CALIB_ABSTAIN: no bottleneck, code
 * saying why in a word (static: "not_slower", ...).
 */
void report_stop(struct report *r, int node, int action, const char *reason, const char *code);
/*
 * The job's result: {"verdict" (bottleneck, deviation when r->unproven, no_bottleneck), "path", "leaf", "summary", "reason",
 * "evidence", "levels", "unavailable", "warnings", "overhead", "timings",
 * "agent", "reference", "tau", "calibrated"}, "reason_code" when no path is
 * named (not_slower, unexplained, transient, reference_noisy), and "waited_behind" when the
 * path names runqueue waiting and the last run saw any: the tasks that
 * held the CPU while the target's waits lost time ([{pid, comm, waits, wait_ns}], most
 * wait time first), also named in the summary; "waited_for" when the path
 * names waits on other tasks and the last run saw who ended them: the
 * tasks that woke the target ([{pid, comm, own, class, waits, wait_ns}],
 * most wait time first, only the classes of the node named), also in the
 * summary; "causes" when a level found
 * two paths that each took at least cause_share of the added time (the
 * first such level: [{node, level, share, evidence}], the one followed
 * first), also named in the summary.
 */
json_t *report_result(const struct report *r, const struct calib_params *p);
