// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The multiplexed kernel-path probe.
 *
 * One object covers every node of a level: its programs classify kernel
 * events of the target's threads into event classes (paths.h), and each
 * class counts into the slot of the level node that covers it
 * (class_slot[], set before load). A level loads only the programs its
 * classes need; the rest are not autoloaded.
 *
 * Page faults are classified by what they did (the RSS counter that moved,
 * file-mapping tracepoints, a huge-page allocation, a sleep) and by the
 * error code (where the kernel has no page_fault_user, by the fault's
 * flags and the write-protect path: faults.bpf.h), not by looking the VMA
 * up: bpf_find_vma at page_fault_user
 * runs with interrupts off and pays an irq_work self-IPI per fault to drop
 * the mmap lock (about 6 us per fault in a VM).
 *
 * time_ns is thread time attributed exclusively to one path: a page fault's
 * time runs from fault entry to the last page mapped (or to the wakeup after
 * it slept), minus the time spent inside nested paths (runqueue waits,
 * direct reclaim, compaction, mmap_lock waits) which count in their own
 * classes; every other path's time (futex waits, creation, reclaim,
 * compaction, mmap_lock waits) likewise leaves out the runqueue waits
 * inside it. Block I/O time is thread time too: the target blocked in
 * iowait outside a fault, from switching out to its wakeup (the wait for a
 * CPU after that is runqueue time), split between the queue and device
 * phases of the request it waited for (request latency itself overlaps and
 * is device time, not the target's). Time of different nodes is therefore
 * comparable, and a single thread's classes never add up to more than its
 * life.
 *
 * Backends: the tracepoint family (tp_btf) is the classifier used here.
 * Generic kprobe/kretprobe and fentry/fexit programs count calls and
 * latency of one kernel function per attachment, on kernels that allow
 * them.
 */
#include "vmlinux.h"
/*
 * Built for arm64 against another architecture's vmlinux.h (a cross build):
 * the registers bpf_tracing.h reads there, declared for CO-RE to relocate
 * against the running kernel's BTF.
 */
#if defined(__TARGET_ARCH_arm64) && defined(ARGUS_VMLINUX_FOREIGN)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));
#endif
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "paths.h"
#include "pidns.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* argusd's PID namespace (pidns.h): the target's tgids are numbers in it. */
const volatile __u64 pidns_inum = 0;

/* Slot of each class at this level, -1 when the class is outside the active subtree. */
const volatile int class_slot[ARGUS_CLS_MAX] = {};
/* fentry/fexit pair i counts into fentry_slot[i]. */
const volatile int fentry_slot[ARGUS_FENTRY_PAIRS] = {};
/*
 * syscall_events = none: no system call event is attached, and the calls
 * the probe tells apart are seen when they sleep, at the switch
 * (calls.bpf.h, call_at_switch).
 */
const volatile bool calls_at_switch = false;
/*
 * The function of a flush's barrier (the workqueue's wq_barrier_func),
 * which only wakes the flusher: a worker is named by the work it ran
 * before it (sched.bpf.h, cpu_work). 0: not known.
 */
const volatile __u64 work_barrier = 0;

/* Diagnostics for the trace: faults that moved nothing a class recognizes. */
unsigned long long unclassified_faults = 0;
/* faults whose readahead for later pages was charged to file_fault.major (faults.bpf.h) */
unsigned long long readahead_faults = 0;
unsigned long long readahead_ns = 0;
/* faults whose nested paths outlasted them (counted without time): none should */
unsigned long long faults_overlapped = 0;
/* task-state lookups refused: storage held by an interrupted program on the CPU, or full */
unsigned long long thread_map_full = 0;

/*
 * The target's thread time beyond its first thread: the lives of the
 * threads and processes it starts, each summed when it exits. User space
 * sets born_after_ns (CLOCK_MONOTONIC, the clock of task start_time) when
 * it attaches: tasks older than that are not counted here.
 */
unsigned long long born_after_ns = 0;
unsigned long long child_thread_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ARGUS_COUNTER_ENTRIES);
	__type(key, __u32);
	__type(value, struct argus_counter);
} counters SEC(".maps");

/*
 * Runqueue waits (count, and the time each counted in runq_wait) by the
 * task that held the CPU when each ended; the waits of holders met when
 * the map was full are summed here instead.
 */
unsigned long long rq_holders_unkept = 0;
unsigned long long rq_holders_unkept_ns = 0;
/* The same for the wakers map's. */
unsigned long long wakers_unkept = 0;
unsigned long long wakers_unkept_ns = 0;

/* Runqueue waits by the task that held the CPU when each ended (see above). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_RQ_HOLDERS);
	__type(key, struct argus_rq_holder_key);
	__type(value, struct argus_counter);
} runq_holders SEC(".maps");

/*
 * tgids that belong to the target; user space adds the root, forks add
 * children. User space may add more while the probe is attached (the
 * processes that join a service's cgroup): it then bumps targets_gen, and
 * every task seen as another's is looked up again once.
 */
volatile __u32 targets_gen = 0;

/* tgids that belong to the target. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/*
 * A service on the unified hierarchy (cgroup2): the ids of its cgroup and of
 * the cgroups below it, which user space fills (and sets follow_cgroups).
 * A task in one of them is the target's whatever its tgid, from its first
 * event on: a process that was there when the probe attached, and one that
 * moves in later (cgroup_attach_task, sched.bpf.h) at its move, not when
 * user space next reads cgroup.procs. Forks are followed as for any target.
 */
volatile __u32 follow_cgroups = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u8);
} target_cgroups SEC(".maps");

/* Wait time (count, time) by the task that ended each wait and the wait's class. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_WAKERS);
	__type(key, struct argus_waker_key);
	__type(value, struct argus_waker_value);
} wakers SEC(".maps");

/* A power of two, for a mask that bounds a class index for every verifier (cpu_task_of). */
#define SPENT_SLOTS 32
_Static_assert(ARGUS_CLS_MAX <= SPENT_SLOTS, "SPENT_SLOTS: one per class");

/* What happened inside a fault: its class is decided when it ends. */
/* A path a thread is in: since when (0: not in it), and its runq_total then. */
struct span {
	__u64 start;
	__u64 runq;
};

/*
 * A runqueue wait's parts, or a CPU's times, by what ran on the CPU: the
 * target's own tasks, the idle task, the kernel's background reclaim
 * (sched.bpf.h, cpu_occupancy).
 */
struct runq_parts {
	__u64 own, idle, reclaim;
};

struct thread_state {
	__u32 role; /* ROLE_TARGET or ROLE_OTHER, decided on first sight */
	__u32 gen;  /* targets_gen when role was decided */
	struct {
		__u64 start;  /* 0: not inside a fault */
		__u64 end;    /* last page mapped, or last wakeup inside the fault */
		__u64 nested; /* time inside nested paths during this fault */
		__u64 nested_late; /* of which in paths that began after end: outside the fault */
		/* when the fault first put a folio into the page cache, and nested then */
		__u64 cache_add_at;
		__u64 nested_at_add;
		__u32 flags;  /* F_* (faults.bpf.h) */
		/* the user registers the fault's entry into the kernel saved (fault_open) */
		__u64 entry_ip;
		__u64 entry_sp;
		__u64 entry_code;
		/* the file page the fault is for (mm_filemap_fault), when F_INDEX */
		__u64 file_mapping;
		__u64 file_index;
		/* kernels that split RSS counting: the task's own counts when handle_mm_fault began */
		__s32 rss_events0;
		__s32 rss0[NR_MM_COUNTERS];
	} fault;
	struct {
		__u64 runq_start;     /* runnable since (wakeup or preemption) */
		__u32 runq_cpu;	      /* the CPU it waits on */
		/* that CPU's times with the target's tasks, idle and reclaiming, at the wait's start */
		struct runq_parts runq0;
		struct runq_parts runq; /* the wait's parts on CPUs it has left (migrations) */
		__u64 runq_total;     /* all its runqueue waits so far */
		__u64 block_start;    /* blocked since (switched out not runnable) */
		__u64 sleep_start;    /* asleep since (switched out not runnable), until the wakeup */
		__u64 slept_total;    /* all its sleeps so far, to their wakeups */
		__u64 io_block_start; /* blocked in iowait outside a fault */
		struct span fork;     /* in clone/fork/clone3 */
	} sched;
	struct {
		struct span reclaim, compact;
	} mem;
	struct {
		struct span lock, futex;
		__u32 futex_own;   /* the futex wait was ended by one of the target's own tasks */
		__u32 futex_timer; /* a timer ended it (its timeout), no task */
		__u64 vfs_since;   /* blocked on the file system since (vfs.bpf.h; 0: not) */
		__u32 vfs_cls;	   /* that wait's class: vfs_wait or block_commit */
	} sync;
	/*
	 * A task of another's (ROLE_OTHER) that has ended a target thread's
	 * wait: from then on its own iowait and runqueue waits are followed
	 * (sched.io_block_start, sched.runq_*, into spent[] alone, never into
	 * the target's counters), so that the next wait it ends can say where
	 * its time went before (the chain's next link).
	 */
	__u32 watched;
	/* who woke it last inside its current wait (futex, a call of one kind, a file): 0 none */
	struct {
		__u32 tgid;
		__u32 own;
		char comm[16];
		__u32 seen;
		/* where that waker's own time went before it woke this thread (the chain) */
		__u32 then_cls;
		__u64 then_ns;
	} waker;
	/*
	 * Its time in each class since it last ended a target thread's wait
	 * (account_thread; for a watched task of another's, spend()), indexed
	 * by class under a mask (SPENT_SLOTS).
	 */
	__u64 spent[SPENT_SLOTS];
	struct {
		struct span span; /* in a system call of one kind (syscalls.bpf.h) */
		__u32 cls;	  /* its class, from file_call_class() */
		__u64 slept0;	  /* sched.slept_total when it began */
		/* an epoll wait's last look at the process's sockets (transmit.bpf.h), what it found */
		__u64 scan_at;
		__s32 held_fd; /* the descriptor plus one; 0: none */
	} file_call;
};

/* Phases of each target thread's last completed block request, by tid. */
struct rq_phases {
	__u64 insert;
	__u64 issue;
	__u64 complete;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct rq_phases);
} last_request SEC(".maps");

/*
 * Per-thread state in task-local storage: one lookup, no hashing, freed
 * with the task. Every task the probe meets gets an entry whose role says
 * whether it belongs to the target, so the tgid table is consulted once per
 * task, not once per event. Children are added to targets at fork, before
 * they run; a task decided as another's is looked up again when user space
 * has added processes since (targets_gen). A target stays a target.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

#define ROLE_TARGET 1
#define ROLE_OTHER 2

struct request_state {
	__u64 insert_ts;
	__u64 issue_ts;
	__u32 tid; /* the target thread that submitted it */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_MAX_REQUESTS);
	__type(key, __u64);
	__type(value, struct request_state);
} requests SEC(".maps");

/* Function-latency backends: entry time by (tid, attachment). */
struct call_key {
	__u32 tid;
	__u32 slot;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_MAX_THREADS);
	__type(key, struct call_key);
	__type(value, __u64);
} calls SEC(".maps");

static __always_inline void account_slot(__u32 idx, __u64 count, __u64 time_ns)
{
	struct argus_counter *c = bpf_map_lookup_elem(&counters, &idx);

	if (!c)
		return;
	c->count += count;
	c->time_ns += time_ns;
}

/* Count one event of a class into its level slot and its class total. */
static __always_inline void account(__u32 cls, __u64 count, __u64 time_ns)
{
	int slot;

	if (cls >= ARGUS_CLS_MAX)
		return;
	slot = class_slot[cls];
	if (slot >= 0 && slot < ARGUS_MAX_SLOTS)
		account_slot(slot, count, time_ns);
	account_slot(ARGUS_CLASS_SLOT_BASE + cls, count, time_ns);
}

/*
 * account() for time that thread ts spent itself: also kept in ts's own
 * totals, so that when ts ends another target thread's wait, the chain can
 * say where ts's time went before (handle_sched_waking).
 */
/* Time thread ts spent in class cls, kept for the chain alone (spent_take). */
static __always_inline void spend(struct thread_state *ts, __u32 cls, __u64 time_ns)
{
	if (cls >= ARGUS_CLS_MAX)
		return;
	barrier_var(cls);
	ts->spent[cls & (SPENT_SLOTS - 1)] += time_ns;
}

static __always_inline void account_thread(struct thread_state *ts, __u32 cls, __u64 count,
					   __u64 time_ns)
{
	account(cls, count, time_ns);
	spend(ts, cls, time_ns);
}

/*
 * The class thread ts spent the most time in since it last ended a target
 * thread's wait, and that time (ARGUS_CLS_MAX and 0: none); its totals
 * start again from here.
 */
static __always_inline void spent_take(struct thread_state *ts, __u32 *ret_cls, __u64 *ret_ns)
{
	__u32 i, top = ARGUS_CLS_MAX;
	__u64 most = 0;

	for (i = 0; i < ARGUS_CLS_MAX; i++)
		if (ts->spent[i] > most) {
			most = ts->spent[i];
			top = i;
		}
	__builtin_memset(ts->spent, 0, sizeof(ts->spent));
	*ret_cls = top;
	*ret_ns = most;
}

/* Whether cgroup cg is one of a followed service's (on cgroup2; v1 ids are another numbering). */
static __always_inline bool cgroup_followed(struct cgroup *cg)
{
	__u64 id;

	/* cgroup2's root is the first hierarchy the kernel sets up: its id is 0 */
	if (!cg || BPF_CORE_READ(cg, root, hierarchy_id) != 0)
		return false;
	id = BPF_CORE_READ(cg, kn, id);
	return id && bpf_map_lookup_elem(&target_cgroups, &id) != NULL;
}

/* Whether p belongs to the target: its tgid (in argusd's PID namespace), or its cgroup. */
static __always_inline bool task_is_target(struct task_struct *p)
{
	__u32 tgid = argus_tgid_in_ns(p, pidns_inum);
	__u8 one = 1;

	if (!tgid)
		return false;
	if (bpf_map_lookup_elem(&targets, &tgid))
		return true;
	if (!follow_cgroups || !cgroup_followed(BPF_CORE_READ(p, cgroups, dfl_cgrp)))
		return false;
	/* its other threads, and a later decision, find it by its tgid */
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	return true;
}

/* The state of a target thread, or NULL for any other task. */
/* p's entry, made on first sight, its role decided (NULL: the map is full). */
static __always_inline struct thread_state *task_entry(struct task_struct *p)
{
	struct thread_state *ts = bpf_task_storage_get(&threads, p, 0, 0);
	__u32 gen = targets_gen;

	if (!ts) {
		ts = bpf_task_storage_get(&threads, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts) {
			__sync_fetch_and_add(&thread_map_full, 1);
			return NULL;
		}
	} else if (ts->role == ROLE_TARGET || ts->gen == gen) {
		return ts;
	}
	ts->role = task_is_target(p) ? ROLE_TARGET : ROLE_OTHER;
	ts->gen = gen;
	return ts;
}

/* p's state when p belongs to the target, else NULL. */
static __always_inline struct thread_state *task_state(struct task_struct *p)
{
	struct thread_state *ts = task_entry(p);

	return ts && ts->role == ROLE_TARGET ? ts : NULL;
}

/* A watched task of another's (thread_state.watched): its entry, else NULL. */
static __always_inline struct thread_state *watched_state(struct thread_state *entry)
{
	return entry && entry->role == ROLE_OTHER && entry->watched ? entry : NULL;
}

/*
 * Per CPU: the task it runs and whether that task belongs to the target, as
 * last decided there (when it was switched in, or at its first event on
 * this CPU). Every program's first test: another task's event leaves on
 * it, before any map lookup. The task is known by its address and pid, so
 * that a task freed and another made at the same address is not taken for
 * it; the decision holds until user space adds processes (targets_gen).
 * Only "not the target's" is answered from here: a target's state is in its
 * task storage.
 */
struct cpu_task {
	__u64 task;
	__u32 pid;
	__u32 gen;
	__u32 target;
	__u32 watched; /* a watched task of another's (thread_state.watched) */
} __attribute__((aligned(64)));

static struct cpu_task cpu_tasks[ARGUS_MAX_CPUS];

_Static_assert((ARGUS_MAX_CPUS & (ARGUS_MAX_CPUS - 1)) == 0, "ARGUS_MAX_CPUS: a power of two");

/* cpu's entry, or NULL past ARGUS_MAX_CPUS. */
static __always_inline struct cpu_task *cpu_task_of(__u32 cpu)
{
	if (cpu >= ARGUS_MAX_CPUS)
		return NULL;
	/*
	 * Older verifiers (6.1) know the bound only on the register that was
	 * tested, and the compiler may index with a copy: the mask bounds the
	 * index itself (the barrier keeps the compiler from dropping it).
	 */
	barrier_var(cpu);
	return &cpu_tasks[cpu & (ARGUS_MAX_CPUS - 1)];
}

/*
 * Record what cpu runs: p, decided as target's or not with targets_gen at
 * gen (read before), and whether it is a watched task of another's.
 */
static __always_inline void cpu_task_set(__u32 cpu, struct task_struct *p, __u32 gen, bool target,
					 bool watched)
{
	struct cpu_task *c = cpu_task_of(cpu);

	if (!c)
		return;
	c->task = (__u64)p;
	c->pid = p->pid;
	c->gen = gen;
	c->target = target;
	c->watched = watched;
}

/*
 * The task running here, when it is a watched task of another's as last
 * recorded at its switch in: its entry, else NULL (no lookup otherwise).
 */
static __always_inline struct thread_state *current_watched(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct cpu_task *c = cpu_task_of(bpf_get_smp_processor_id());

	if (!c || c->task != (__u64)cur || c->pid != cur->pid || !c->watched)
		return NULL;
	return watched_state(bpf_task_storage_get(&threads, cur, 0, 0));
}

static __always_inline struct thread_state *current_state(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id(), gen = targets_gen;
	struct cpu_task *c = cpu_task_of(cpu);
	struct thread_state *ts;

	if (c && c->task == (__u64)cur && !c->target && c->pid == cur->pid && c->gen == gen)
		return NULL;
	ts = task_entry(cur);
	cpu_task_set(cpu, cur, gen, ts && ts->role == ROLE_TARGET, watched_state(ts) != NULL);
	return ts && ts->role == ROLE_TARGET ? ts : NULL;
}

static __always_inline void span_begin(const struct thread_state *ts, struct span *s)
{
	s->start = bpf_ktime_get_ns();
	s->runq = ts->sched.runq_total;
}

/*
 * Leave the path: its time from start to now, less the runqueue waits
 * inside it (those count as runqueue time).
 */
static __always_inline __u64 span_end(const struct thread_state *ts, struct span *s, __u64 now)
{
	__u64 dt = now > s->start ? now - s->start : 0, waited = ts->sched.runq_total - s->runq;

	s->start = 0;
	return dt > waited ? dt - waited : 0;
}

/* The programs, by concern; each part uses only what the parts before it define. */
#include "faults.bpf.h"
#include "memory.bpf.h"
#include "block.bpf.h"
#include "sync.bpf.h"
#include "calls.bpf.h"
#include "vfs.bpf.h"
#include "transmit.bpf.h"
#include "sched.bpf.h"
#include "syscalls.bpf.h"
#include "edges.bpf.h"
#include "functions.bpf.h"
