/* SPDX-License-Identifier: MIT */
/*
 * Probe plans: which programs of the multiplexed probe (bpf/paths.bpf.c)
 * one level attaches. A plan names the level's nodes and gives each a
 * slot; the programs follow from the nodes' chosen hooks, and from the
 * policy of the probe's event classes (the ARGUS_CLASSES table of
 * bpf/paths.h): the companion tracepoints each class needs besides its
 * node's hooks, and the classes counted with it. Pure: no kernel, no log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "bpf/paths.h"
#include "daemon/tree.h"

/*
 * Attachments of one probe: tracepoints, functions, and the enter and exit
 * events of each system call the probe follows, together.
 */
#define PROBE_MAX_LINKS 160

struct probe_slot {
	int node;	      /* tree index; the node's chosen hooks are the slot's */
	enum backend backend; /* from resolution */
	const char *hook;     /* from resolution: the node's hooks as text, for the trace */
	unsigned classes;     /* tracepoint backend: classes counted into this slot */
};

struct probe_plan {
	struct probe_slot slots[ARGUS_MAX_SLOTS];
	size_t n_slots;
	/*
	 * An authored object (LLM agent) instead of paths.bpf.o, already through
	 * the safety gate; borrowed, NULL for the builtin probe. Slot i of its
	 * counters is slots[i].node; slots carry no classes (nothing is derived
	 * from class totals).
	 */
	const void *object;
	size_t object_len;
};

/*
 * Build the plan for a set of nodes (a level's active subtree, or every leaf
 * for a reference). Unavailable nodes are left out. A node that is the sum
 * of its children on several backends has no slot: its available children
 * have one each, on their own backends. -E2BIG beyond ARGUS_MAX_SLOTS or
 * ARGUS_FENTRY_PAIRS function hooks.
 */
int probe_plan_for(const struct tree *t, const int *nodes, size_t n, struct probe_plan *ret);
/*
 * The tracepoints a plan attaches: its tracepoint slots' hooks, then those
 * of every other available tracepoint leaf (every plan costs the target
 * what the reference's does), then the companions of all their classes
 * (probe_companions), each once, in that order. Names borrowed from t and
 * static tables. -E2BIG beyond max.
 */
int probe_plan_tracepoints(const struct tree *t, const struct probe_plan *plan, const char **ret,
			   size_t max, size_t *ret_n);
/*
 * The plan for the trace: its slots, and the programs (tracepoints and
 * functions) it attaches: ["tp_btf/page_fault_user", ...].
 */
json_t *probe_plan_describe(const struct tree *t, const struct probe_plan *plan);

/*
 * What a kernel offers that decides which programs stand for a plan's
 * tracepoints (probe_kernel_here in probe.c asks the running kernel).
 */
struct probe_kernel {
	/*
	 * No page_fault_user (the tracepoint is x86's): faults are opened at
	 * handle_mm_fault by kprobe, with the write-protect path's kprobes
	 * (bpf/faults.bpf.h).
	 */
	bool faults_by_kprobe;
	/* task_rss_stat (before 6.2): rss_stat does not mark each fault */
	bool splits_rss;
	/* the system calls' own tracepoints stand for sys_enter and sys_exit (syscalls.h) */
	bool syscall_per_call;
	/* syscall_events = none: nothing stands for them, the switch sees the calls (syscalls.h) */
	bool syscall_none;
};

/* The programs that stand for one of the fault classifier's tracepoints on a kernel. */
#define PROBE_STAND_IN_MAX 5
struct probe_stand_in {
	/* the backend they are (the backends setting must hold it) */
	enum backend backend;
	/* the probe's programs, by their names in bpf/faults.bpf.h; NULL-terminated */
	const char *programs[PROBE_STAND_IN_MAX + 1];
	/* how the probe's information names them, a pair joined ("fentry+fexit/f"); NULL-ended */
	const char *said[PROBE_STAND_IN_MAX + 1];
};

/*
 * The programs that stand for fault tracepoint tp on kernel k, under the
 * backends setting order (NULL or n == 0: the default): *ret NULL when tp's
 * own program does. Where faults are opened by kprobe, the kprobe pair on
 * handle_mm_fault and the write-protect path's kprobes for
 * page_fault_user. Where the kernel splits RSS counting, for rss_stat:
 * nothing (an empty list: the kretprobe reads the counters) where faults
 * are opened by kprobe, else a pair on handle_mm_fault that reads the
 * counters, of the first of fentry and kprobe in order. Returns 0, or
 * -EPERM when order holds no backend that can stand for tp here (*ret then
 * the stand-in it would take, or NULL when neither function backend is in
 * order).
 */
int probe_plan_stand_in(const struct probe_kernel *k, const struct backend_order *order,
			const char *tp, const struct probe_stand_in **ret);
/*
 * A plan's programs (probe_plan_describe's "programs") as the loader
 * attaches them on kernel k under order: stand-ins in place of the
 * tracepoints they stand for, the calls' own events for sys_enter and
 * sys_exit, or under syscall_events = none the scheduler's two programs
 * that see such a call instead (sched_switch opens it, sched_wakeup ends
 * it; both always attached), each named once.
 */
void probe_plan_programs_on(const struct probe_kernel *k, const struct backend_order *order,
			    json_t *programs);

/*
 * The tracepoints attached with any plan counting these classes, besides
 * the nodes' own hooks: process tracking always; the hooks that bound a
 * page fault and take nested paths out of its time; the request phases
 * and switches of iowait; the waker of a futex wait. Fills ret (at most
 * max), returns the count.
 * The safety gate allows the same set to authored probes.
 */
size_t probe_companions(unsigned classes, const char **ret, size_t max);
/* classes, with the classes no node owns that their programs count too (paths.h) */
unsigned probe_counted_with(unsigned classes);
/* Class names, in enum order ("anon_minor", ...). */
const char *probe_class_name(unsigned cls);
