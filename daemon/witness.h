/* SPDX-License-Identifier: MIT */
/*
 * The witness of an authored measurement: what a probe written by a model
 * reports about one run must agree with what the kernel reports about the
 * same run on its own, through channels the probe cannot touch. Pure: the
 * figures are collected by measure.c; the check neither logs nor keeps
 * state. The builtin probe is not witnessed: it is the reference
 * instrument (its own vectors are what references are made of).
 *
 * The kernel's figures (struct witness_figures), each NAN when it could not
 * be had for the run:
 *   page_faults, major_faults  perf software counters of the target
 *                              ("perf/page_faults", "perf/major_faults"),
 *                              inherited by its children;
 *   context_switches           perf context switches of the target;
 *   task_clock_ns              perf task clock: the target's CPU time;
 *   thread_ns                  the lives of the target's tasks in the run,
 *                              summed (perf's fork and exit records; a lost
 *                              record counts as one more task living the
 *                              whole run);
 *   run_delay_ns               the target threads' runqueue time over the
 *                              run (schedstat's run_delay), where it can be
 *                              read: a running target whose threads stayed
 *                              the same; for a workload it is gone with its
 *                              exited tasks (run_delay_missing says why);
 *   tlb_ipis                   TLB shootdown interrupts the whole system
 *                              handled during the run (/proc/interrupts);
 *   slot_runs[i]               how many times the programs that may count
 *                              slot i ran (kernel.bpf_stats run counts of
 *                              the programs attached to the node's hooks or
 *                              its companions, witness_slot_runs).
 *
 * The checks, and which metrics they apply to. "Slot" values are the plan's
 * nodes; "node" values are every node metric in the vector (the slots, and
 * the inner nodes derived from them). Each tolerance is stated below; a
 * check whose figure is missing is reported as not checked, never as
 * passed.
 *
 *   plausible   every node's count and time: finite, not negative, count
 *               below WITNESS_COUNT_MAX, time below WITNESS_TIME_MAX_NS (a
 *               pointer-sized value fails).
 *   faults      the sum of the paging slots' counts (nodes holding fault
 *               classes, kernel_paging.tlb_shootdown included) <=
 *               page_faults (when a fault class is covered)
 *               + WITNESS_TLB_EVENTS_PER_IPI x tlb_ipis (when the TLB class
 *               is covered) + count slack.
 *   major       the major-fault leaf's count <= major_faults
 *               + context_switches + count slack: the leaf counts the file
 *               faults that read from storage or slept for it, the kernel's
 *               major count only those that found no page (or retried), and
 *               a fault that slept switched its thread out at least once.
 *   runqueue    a runqueue node's time (its classes only runqueue waits)
 *               <= run_delay + time slack; without run_delay, <= the
 *               off-CPU time (thread_ns - task_clock_ns) + time slack, and
 *               the reason says run_delay was not read. A scheduler node
 *               that also holds fork time (kernel_scheduler at level 1):
 *               <= that bound + task_clock_ns (fork time is the forking
 *               thread's time in the kernel).
 *   thread_time every node's time <= thread_ns + time slack.
 *   runs        every slot's count <= slot_runs[i]: an honest probe counts
 *               at most one event of a slot per program run (no slack:
 *               run counts are exact).
 *
 * Count slack: WITNESS_COUNT_SLACK + WITNESS_COUNT_SLACK_FRAC x the bound
 * (the probe is attached before the counters start: the faults of a
 * workload's exec, a running target's threads listed after attach). Time
 * slack: WITNESS_TIME_SLACK_NS + WITNESS_TIME_SLACK_FRAC x the bound
 * (the probe's clock reads are not the scheduler's, and its spans end a
 * little after the kernel's accounting).
 *
 * Not checked: a count or time below the truth (a probe that hides events;
 * only upper bounds are independent here), a node's time against anything
 * tighter than the thread time except runqueue time, counts of non-paging
 * nodes against anything but their programs' run counts, and the split of
 * faults between sibling nodes within the sum.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "daemon/mvec.h"
#include "daemon/probe.h"
#include "daemon/tree.h"

#define WITNESS_COUNT_MAX 1099511627776.0   /* 2^40 events in one run */
#define WITNESS_TIME_MAX_NS 140737488355328.0 /* 2^47 ns: 39 hours of thread time */
#define WITNESS_COUNT_SLACK 256.0
#define WITNESS_COUNT_SLACK_FRAC 0.02
#define WITNESS_TIME_SLACK_NS 10000000.0 /* 10 ms */
#define WITNESS_TIME_SLACK_FRAC 0.05
/* A TLB flush the target sends usually interrupts one other CPU; one it receives is one interrupt. */
#define WITNESS_TLB_EVENTS_PER_IPI 2.0

enum witness_check {
	WITNESS_PLAUSIBLE,
	WITNESS_FAULTS,
	WITNESS_MAJOR,
	WITNESS_RUNQUEUE,
	WITNESS_THREAD_TIME,
	WITNESS_RUNS,
	WITNESS_CHECK_MAX,
};

/* "plausible", "faults", ... */
const char *witness_check_name(enum witness_check c);

struct witness_figures {
	double page_faults;
	double major_faults;
	double context_switches;
	double task_clock_ns;
	double thread_ns;
	double run_delay_ns;
	const char *run_delay_missing; /* static text: why run_delay_ns is NAN */
	double tlb_ipis;
	double slot_runs[ARGUS_MAX_SLOTS];
};

/* Every figure NAN (not had), run_delay_missing NULL. */
void witness_figures_init(struct witness_figures *f);
/* {"page_faults": n or null, ..., "slot_runs": [...] (n_slots entries)}, for the trace. */
json_t *witness_figures_to_json(const struct witness_figures *f, size_t n_slots);

/* A program of an authored object and its run count (probe_authored_runs). */
struct witness_program {
	const char *section; /* "tp_btf/page_fault_user", "kprobe/do_wp_page", ... */
	double runs;
};

/*
 * slot_runs for a plan: for each slot, the runs of the programs whose
 * attach point (the section after its '/', up to a '+') is one of the
 * slot node's resolved hooks or of the companions of its classes
 * (probe_companions), or sched_process_fork/exit (which every probe may
 * use). Fills ret[0..plan->n_slots-1]. Pure.
 */
void witness_slot_runs(const struct tree *t, const struct probe_plan *plan,
		       const struct witness_program *progs, size_t n_progs, double *ret);

struct witness_result {
	bool agree;	   /* no check failed */
	json_t *failed;	   /* [{"check", "reason"}]: one per failed check */
	json_t *unchecked; /* [{"check", "reason"}]: checks that could not be made */
};
void witness_result_clear(struct witness_result *r);
/* The failed checks' reasons joined with "; " (malloc'ed), "" when none. */
char *witness_reasons(const struct witness_result *r);

/*
 * Check one authored measurement: v is the run's vector (the slots' values
 * as measure_fill_nodes put them), f the kernel's figures. Returns 0 with
 * *ret filled (ret->agree false when any check failed), -EINVAL for a plan
 * without slots. Pure.
 */
int witness_check(const struct tree *t, const struct probe_plan *plan, const struct mvec *v,
		  const struct witness_figures *f, struct witness_result *ret);
