/* SPDX-License-Identifier: MIT */
/*
 * The loaded multiplexed kernel-path probe (bpf/paths.bpf.c), from a plan
 * (probe_plan.h) to its counters.
 *
 * The loader opens the object, sets class_slot[] and the fentry targets in
 * rodata, autoloads only the programs the plan needs, loads (capturing the
 * verifier's log on failure), attaches, and reads the counters. Every
 * attachment is released by probe_free, whatever happened. It returns
 * errors, with a message where there is more to say than the errno, and
 * leaves logging them to its callers.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bpf/paths.h"
#include "daemon/kallsyms.h"
#include "daemon/probe_plan.h"
#include "daemon/tree.h"

/*
 * The verifier's log level of a second load after ENOSPC. A load starts at
 * level 0 and libbpf loads once more at level 1, for the verifier's
 * reasoning, when it fails. A kernel before 6.4 fails a load whose
 * reasoning overflows the buffer with ENOSPC, the reason (at its end) lost:
 * the builtin probe and an authored one are then loaded again at level 4
 * (BPF_LOG_STATS), whose log is the verifier's error and statistics only.
 */
#define PROBE_LOG_LEVEL_STATS 4

struct probe;

/*
 * Open and load a plan. On a load failure returns the error and, when the
 * verifier said why, *ret_log (malloc'ed, bounded) holds its log; when
 * there is more to say than the errno, *ret_err (malloc'ed) says what
 * failed. Either may be NULL.
 */
int probe_load(const struct tree *t, const struct probe_plan *plan, struct probe **ret,
	       char **ret_log, char **ret_err);
/* Follow a process (and its future children and threads). */
int probe_add_target(struct probe *p, pid_t tgid);
/*
 * Follow every process of a cgroup of the unified hierarchy (cgroup2), by
 * the cgroup's id (cgroup_id): the processes in it when the probe attaches
 * and those that move into it later, from their move on (their forks as
 * for any target). A service's cgroups below its own are added each; a
 * cgroup added after attach takes effect at once. -E2BIG past
 * ARGUS_MAX_CGROUPS.
 */
int probe_follow_cgroup(struct probe *p, uint64_t cgroup_id);
/*
 * Processes were added while the probe is attached: every task it has
 * seen as another's is looked up again (a process that joined a service's
 * cgroup after its threads were first seen).
 */
void probe_targets_changed(struct probe *p);
/*
 * Attach every loaded program; on failure nothing stays attached and
 * *ret_err (malloc'ed; ret_err may be NULL) names the program or function
 * that failed and why.
 */
int probe_attach(struct probe *p, char **ret_err);
/* Detach every program (counters stay readable). Idempotent. */
void probe_detach(struct probe *p);
/*
 * A plan's programs (probe_plan_describe's "programs") as the loader
 * attaches them on this kernel under the backends t was resolved with
 * (probe_plan_programs_on): where it has no page_fault_user,
 * "kprobe+kretprobe/handle_mm_fault" and the write-protect path's kprobes
 * in its place; where it splits RSS counting (before 6.2),
 * "fentry+fexit/handle_mm_fault" (or the kprobe pair, where fentry is not
 * allowed) in place of "tp_btf/rss_stat", or nothing where the kprobes
 * read the counters. programs NULL is fine.
 */
void probe_programs_here(const struct tree *t, json_t *programs);
/*
 * Add to each node of GET /tree's "nodes" (tree_to_json's, in t's order)
 * "programs": the programs its chosen hooks attach on this kernel, as
 * probe_programs_here names them (an empty list for a node with none).
 */
int probe_tree_programs_here(const struct tree *t, json_t *nodes);

/*
 * Tasks that ended target waits, by name (the processes of one name are one
 * entry: a prefork server's workers), most wait time first: the runqueue
 * holders (the tasks on the CPU when a wait ended, bpf/paths.h), and the
 * wakers of waits on other tasks (argus_waker_key).
 */
struct probe_task {
	unsigned int tgid;	/* the one of most wait time; 0: idle, or a process argusd cannot see */
	char comm[16];		/* NUL-terminated, printable ASCII ('?' for anything else) */
	/* holders: a kernel worker's work, the function of the item it ran last; "" for others */
	char work[KALLSYMS_NAME_MAX];
	bool own;		/* the target's own tasks */
	unsigned int cls;	/* the class the waits counted in (enum argus_class) */
	unsigned int processes; /* how many processes of this name */
	unsigned long long waits;   /* holders: the waits that lost time to them */
	unsigned long long wait_ns; /* holders: that time, what counted in runq_wait */
	/* wakers: where their time went before they ended the waits (bpf/paths.h) */
	unsigned int then_cls;	    /* ARGUS_CLS_MAX: unknown (holders, other processes) */
	unsigned long long then_ns; /* their time in then_cls before */
};
#define PROBE_RQ_HOLDERS_TOP 5
#define PROBE_WAKERS_TOP 8

/*
 * All the holders (or wakers) a run met, not only the top ones: the waits
 * and time of those kept by the probe, and of those it met when its table
 * was full (counted, not named).
 */
struct probe_task_totals {
	unsigned long long waits, wait_ns;
	unsigned long long unkept, unkept_ns;
};

struct probe_counts {
	struct argus_counter slot[ARGUS_MAX_SLOTS];
	struct argus_counter cls[ARGUS_CLS_MAX];
	unsigned long long unclassified_faults;
	/* faults that started readahead for later pages: that time went to file_fault.major */
	unsigned long long readahead_faults;
	unsigned long long readahead_ns;
	/* faults whose nested paths outlasted their span (counted without time): a defect if any */
	unsigned long long faults_overlapped;
	/*
	 * Lookups of a task's state the kernel refused, for any task (its task
	 * storage held by a program this one interrupted on the CPU, or no
	 * memory): an event of the target's among them went uncounted.
	 */
	unsigned long long state_misses;
	/* Lives of the threads and processes the target started after attach, summed at exit. */
	unsigned long long child_thread_ns;
	/*
	 * The waits in calls under way at the window's start and end, counted
	 * by the passes over every task there (bpf/edges.bpf.h): whether the
	 * passes were made, the waits each found, how long the longer pass
	 * took (it visits every task on the host), and the target's live
	 * threads at the window's start and at its end.
	 */
	bool edges;
	unsigned long long edge_opened, edge_closed, edge_pass_ns;
	unsigned long long edge_threads_start, edge_threads_end;
	unsigned long long run_cnt;	/* program runs, when stats were on */
	unsigned long long run_time_ns; /* program run time, when stats were on */
	/* The holders with the most wait time, most first (built-in probe only). */
	struct probe_task rq_holders[PROBE_RQ_HOLDERS_TOP];
	size_t n_rq_holders;
	struct probe_task_totals rq_holders_total;
	/* The wakers with the most wait time, most first (built-in probe only). */
	struct probe_task wakers[PROBE_WAKERS_TOP];
	size_t n_wakers;
	struct probe_task_totals wakers_total;
};

/* Sum the per-CPU counters. */
int probe_read(struct probe *p, struct probe_counts *ret);
/* Detach and destroy. NULL is fine. */
void probe_free(struct probe *p);

struct bpf_map;
struct bpf_object;
/* Sum entries 0..n-1 of a per-CPU counters map over the CPUs (shared with probe_authored.c). */
int probe_sum_counters(struct bpf_map *counters, unsigned n, struct argus_counter *ret);
/* Add the programs' run counts and run time (kernel.bpf_stats) of obj to c. */
void probe_sum_run_stats(struct bpf_object *obj, struct probe_counts *c);

/*
 * Turn on kernel.bpf_stats_enabled for as long as the returned fd is open
 * (BPF_ENABLE_STATS); -errno when refused.
 */
int probe_stats_enable(void);

/* argusd's PID namespace for the probes (bpf/pidns.h): its inode, 0 for the initial one. */
int probe_pidns(__u64 *ret_inum);
