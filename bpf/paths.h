/* SPDX-License-Identifier: MIT */
/*
 * What the multiplexed kernel-path probe (paths.bpf.c) and its user side
 * (daemon/probe_plan.c, daemon/probe.c) share.
 *
 * The probe classifies kernel events of the target's threads into fixed
 * event classes. Each tree node owns a set of classes (tree-data names them
 * by name, ARGUS_CLASSES below). For one level, user space fills class_slot[] so that
 * every class of the active subtree counts into the slot of the level node
 * that covers it, and -1 elsewhere: one program set, one counter map, the
 * whole level.
 */
#ifndef ARGUS_PATHS_H
#define ARGUS_PATHS_H

/*
 * The event classes, one table from which everything about a class comes:
 * X(ID, name, companions, counted_with). ID names the constant ARGUS_CLS_<ID>
 * (the enum below, in table order), name is how tree-data refers to it
 * (unique; tree.c and probe_plan.c derive their name tables from it),
 * companions is the group of tracepoints that a plan counting the class
 * must attach besides the node's own hooks (enum argus_companions, lists in
 * daemon/probe_plan.c), and counted_with is a class that the probe counts along
 * with it and that no node owns (ARGUS_CLS_MAX: none).
 */
#define ARGUS_CLASSES(X)                                                                           \
	/* kernel_paging */                                                                        \
	X(ANON_MINOR, anon_minor, FAULT, MAX)	  /* anonymous not-present write: a fresh page */  \
	X(ANON_ZERO, anon_zero, FAULT, MAX)	  /* anonymous not-present read: the zero page */  \
	X(ANON_COW, anon_cow, FAULT, MAX)	  /* write to a present read-only page: a copy */  \
	X(ANON_THP, anon_thp, FAULT, MAX)	  /* served with a transparent huge page */        \
	X(FILE_CACHE, file_cache, FAULT, MAX)	  /* file-backed, served from the page cache */    \
	X(FILE_MAJOR, file_major, FAULT, MAX)	  /* file-backed, read from storage or slept */    \
	X(TLB_SHOOTDOWN, tlb_shootdown, NONE, MAX) /* TLB flushes caused by or sent to it */       \
	/* kernel_scheduler */                                                                     \
	X(RUNQ_WAIT, runq_wait, NONE, RUNQ_OWN)	  /* runnable, not running, ended by others */     \
	X(MIGRATE, migrate, NONE, MAX)		  /* moved between CPUs (load balancing) */        \
	X(FORK, fork, CREATE, MAX)		  /* process and thread creation */                \
	/* kernel_memory_pressure */                                                               \
	X(DIRECT_RECLAIM, direct_reclaim, NONE, MAX) /* direct reclaim begin..end */               \
	X(COMPACTION, compaction, NONE, MAX)	  /* direct compaction begin..end */               \
	X(KSWAPD, kswapd, NONE, MAX)		  /* the target woke kswapd */                     \
	/* kernel_block_io */                                                                      \
	X(BLOCK_QUEUE, block_queue, BLOCK, MAX)	  /* block request insert..issue */                \
	X(BLOCK_DEVICE, block_device, BLOCK, MAX) /* block request issue..complete */              \
	/* kernel_sync */                                                                          \
	X(FUTEX, futex, FUTEX, FUTEX_OWN)	  /* futex wait not ended by its own tasks */      \
	X(MMAP_LOCK, mmap_lock, NONE, MAX)	  /* mmap_lock start_locking..acquire_returned */  \
	X(PIPE, pipe, NONE, MAX)		  /* read and write calls on a pipe or FIFO */     \
	/*                                                                                         \
	 * Waits on the target's own tasks, owned by no node: a runqueue wait                      \
	 * ended by one of its own threads (the CPU ran the target), a futex wait                  \
	 * that one of its own threads ended (a dependency between its threads;                    \
	 * where the thread it waited for lost time counts in that thread's                        \
	 * paths). Counted with runq_wait and futex.                                               \
	 */                                                                                        \
	X(RUNQ_OWN, runq_own, NONE, MAX)                                                           \
	X(FUTEX_OWN, futex_own, NONE, MAX)

enum argus_class {
#define ARGUS_CLASS_ENUM(id, name, companions, with) ARGUS_CLS_##id,
	ARGUS_CLASSES(ARGUS_CLASS_ENUM)
#undef ARGUS_CLASS_ENUM
	ARGUS_CLS_MAX,
};

/*
 * Classes of system calls whose time is spent on a file of one kind, by
 * the call and the type of the file behind its first argument (a file
 * descriptor): X(ID, type, calls) counts the calls of group
 * ARGUS_CALLS_<calls> on a file of type ARGUS_FTYPE_<type> in class
 * ARGUS_CLS_<ID>, from the call's entry to its return, less the runqueue
 * waits inside it (bpf/syscalls.bpf.h). The first row that matches wins.
 */
#define ARGUS_FILE_CALLS(X)                                                                        \
	X(PIPE, FIFO, RW) /* read, write, readv, writev on a pipe or FIFO */

/* File types, as the S_IFMT bits of i_mode. */
#define ARGUS_FTYPE_FIFO 0010000
#define ARGUS_FTYPE_SOCK 0140000

/* Groups of calls on a file descriptor (bpf/syscalls.bpf.h has their numbers). */
enum argus_calls {
	ARGUS_CALLS_RW = 1,		  /* read, write, readv, writev */
	ARGUS_CALLS_MSG = 2,		  /* sendto, recvfrom, sendmsg, recvmsg, sendmmsg, recvmmsg */
	ARGUS_CALLS_ANY = ARGUS_CALLS_RW | ARGUS_CALLS_MSG,
};

/* The tracepoints a class needs besides its node's hooks (their lists: daemon/probe_plan.c). */
enum argus_companions {
	ARGUS_COMPANIONS_NONE,
	ARGUS_COMPANIONS_FAULT,	 /* what bounds a fault and takes nested paths out of it */
	ARGUS_COMPANIONS_BLOCK,	 /* every phase of a block request */
	ARGUS_COMPANIONS_CREATE, /* the parent's time in clone/fork/clone3 */
	ARGUS_COMPANIONS_FUTEX,	 /* who ends a futex wait: its own tasks, others, timers */
	ARGUS_COMPANIONS_MAX,
};

/* Slots: at most this many nodes in one level's active subtree. */
#define ARGUS_MAX_SLOTS 32
/* fentry/fexit program pairs in the object: one per kernel function a plan attaches. */
#define ARGUS_FENTRY_PAIRS 24
/* Threads of the target tracked at once (fault and wait state). */
#define ARGUS_MAX_THREADS 16384
/* Processes (tgids) that belong to the target. */
#define ARGUS_MAX_TGIDS 4096
/* In-flight block requests tracked. */
#define ARGUS_MAX_REQUESTS 8192

/* One slot's counters; per CPU in the map, summed by user space. */
struct argus_counter {
	unsigned long long count;   /* events */
	unsigned long long time_ns; /* time attributed (latency or stall), 0 if none */
};

/*
 * Who had the CPU when a target thread's runqueue wait ended: the task
 * switched out for it, by process and name, for the trace. At most this
 * many distinct holders are kept in one run.
 */
#define ARGUS_RQ_HOLDERS 256
struct argus_rq_holder_key {
	unsigned int tgid; /* in argusd's PID namespace; 0: the idle task, or not visible */
	char comm[16];	   /* the task's name (TASK_COMM_LEN) */
	unsigned int own;  /* 1: one of the target's own tasks (its waits count in runq_own) */
};

/* Per-class totals are also kept, for the trace and the signature table. */
#define ARGUS_CLASS_SLOT_BASE ARGUS_MAX_SLOTS
#define ARGUS_COUNTER_ENTRIES (ARGUS_MAX_SLOTS + ARGUS_CLS_MAX)

#endif
