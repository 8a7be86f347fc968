/* SPDX-License-Identifier: MIT */
/*
 * The loader of the multiplexed kernel-path probe (bpf/paths.bpf.c).
 *
 * A probe plan names the level's nodes and gives each a slot; the loader
 * opens the object, sets class_slot[] and the fentry targets in rodata,
 * autoloads only the programs the plan needs, loads (capturing the
 * verifier's log on failure), attaches, and reads the counters. Every
 * attachment is released by probe_free, whatever happened.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include <jansson.h>

#include "bpf/paths.h"
#include "daemon/tree.h"

struct probe_slot {
	int node;	      /* tree index */
	enum backend backend; /* from resolution */
	const char *hook;     /* from resolution */
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
 * for a reference). Unavailable nodes are left out. -E2BIG beyond
 * ARGUS_MAX_SLOTS or ARGUS_FENTRY_PAIRS function hooks.
 */
int probe_plan_for(const struct tree *t, const int *nodes, size_t n, struct probe_plan *ret);
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
/* The programs (tracepoints and functions) a plan attaches, for the trace: ["tp_btf/page_fault_user", ...]. */
json_t *probe_plan_describe(const struct tree *t, const struct probe_plan *plan);

struct probe;
struct btf;

/*
 * Open and load a plan. On a load failure returns the error and, when the
 * verifier said why, *ret_log (malloc'ed, bounded) holds its log.
 */
int probe_load(const struct tree *t, const struct probe_plan *plan, struct probe **ret,
	       char **ret_log);
/* Follow a process (and its future children and threads). */
int probe_add_target(struct probe *p, pid_t tgid);
/* Attach every loaded program; on failure nothing stays attached. */
int probe_attach(struct probe *p);
/* Detach every program (counters stay readable). Idempotent. */
void probe_detach(struct probe *p);

/* A task that held the CPU when target runqueue waits ended (bpf/paths.h). */
struct probe_rq_holder {
	unsigned int tgid; /* 0: the idle task, or a process argusd cannot see */
	char comm[16];	   /* NUL-terminated, printable ASCII ('?' for anything else) */
	bool own;	   /* one of the target's own tasks: the waits count in runq_own */
	unsigned long long waits;
	unsigned long long wait_ns;
};
#define PROBE_RQ_HOLDERS_TOP 5

struct probe_counts {
	struct argus_counter slot[ARGUS_MAX_SLOTS];
	struct argus_counter cls[ARGUS_CLS_MAX];
	unsigned long long unclassified_faults;
	/* Lives of the threads and processes the target started after attach, summed at exit. */
	unsigned long long child_thread_ns;
	unsigned long long run_cnt;	/* program runs, when stats were on */
	unsigned long long run_time_ns; /* program run time, when stats were on */
	/* The holders with the most wait time, most first (built-in probe only). */
	struct probe_rq_holder rq_holders[PROBE_RQ_HOLDERS_TOP];
	size_t n_rq_holders;
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

/* Class names, in enum order ("anon_minor", ...). */
const char *probe_class_name(unsigned cls);

/* What probe_try_hook keeps between hooks of one resolution (its userdata). */
struct probe_resolver {
	struct btf *vmlinux; /* the kernel's BTF, parsed on first need */
};
void probe_resolver_clear(struct probe_resolver *r);

/*
 * The real prober for tree_resolve: loads and attaches a program of that
 * backend to that hook here, then releases it. userdata: a struct
 * probe_resolver (cleared by the caller afterwards), or NULL.
 */
int probe_try_hook(void *userdata, enum backend b, const char *hook, char **ret_reason);

/* Route libbpf's messages into the daemon's log (debug level; warnings as warnings). */
void probe_setup_libbpf_logging(void);
