/* SPDX-License-Identifier: MIT */
/*
 * What the multiplexed kernel-path probe (paths.bpf.c) and its loader
 * (daemon/probe.c) share.
 *
 * The probe classifies kernel events of the target's threads into fixed
 * event classes. Each tree node owns a set of classes (tree-data names them
 * by ARGUS_CLASS_NAMES). For one level, user space fills class_slot[] so that
 * every class of the active subtree counts into the slot of the level node
 * that covers it, and -1 elsewhere: one program set, one counter map, the
 * whole level.
 */
#ifndef ARGUS_PATHS_H
#define ARGUS_PATHS_H

enum argus_class {
	/* kernel_paging */
	ARGUS_CLS_ANON_MINOR,	/* anonymous not-present write fault: a fresh page */
	ARGUS_CLS_ANON_ZERO,	/* anonymous not-present read fault: the zero page */
	ARGUS_CLS_ANON_COW,	/* write to a present read-only page: copy-on-write */
	ARGUS_CLS_ANON_THP,	/* anonymous fault served with a transparent huge page */
	ARGUS_CLS_FILE_CACHE,	/* file-backed fault served from the page cache */
	ARGUS_CLS_FILE_MAJOR,	/* file-backed fault that read from storage or slept for it */
	ARGUS_CLS_TLB_SHOOTDOWN,/* TLB flushes caused by or delivered to the target */
	/* kernel_scheduler */
	ARGUS_CLS_RUNQ_WAIT,	/* runnable but not running, ended by a task outside the target */
	ARGUS_CLS_MIGRATE,	/* task moved between CPUs (load balancing) */
	ARGUS_CLS_FORK,		/* process and thread creation */
	/* kernel_memory_pressure */
	ARGUS_CLS_DIRECT_RECLAIM, /* direct reclaim begin..end in the target */
	ARGUS_CLS_COMPACTION,	/* direct compaction begin..end in the target */
	ARGUS_CLS_KSWAPD,	/* the target woke kswapd */
	/* kernel_block_io */
	ARGUS_CLS_BLOCK_QUEUE,	/* block request insert..issue */
	ARGUS_CLS_BLOCK_DEVICE,	/* block request issue..complete */
	/* kernel_sync */
	ARGUS_CLS_FUTEX,	/* futex(2) wait time, not ended by the target's own tasks */
	ARGUS_CLS_MMAP_LOCK,	/* mmap_lock start_locking..acquire_returned */
	/*
	 * Waits on the target's own tasks, owned by no node: a runqueue wait
	 * ended by one of its own threads (the CPU ran the target), a futex
	 * wait that one of its own threads ended (a dependency between its
	 * threads; where the thread it waited for lost time counts in that
	 * thread's paths). Counted with runq_wait and futex.
	 */
	ARGUS_CLS_RUNQ_OWN,
	ARGUS_CLS_FUTEX_OWN,
	ARGUS_CLS_MAX,
};

/* The names tree-data uses for the classes, in enum order. */
#define ARGUS_CLASS_NAMES                                                                          \
	"anon_minor", "anon_zero", "anon_cow", "anon_thp", "file_cache", "file_major",             \
		"tlb_shootdown", "runq_wait", "migrate", "fork", "direct_reclaim", "compaction",   \
		"kswapd", "block_queue", "block_device", "futex", "mmap_lock", "runq_own",          \
		"futex_own"

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
