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
 * X(ID, name, companions, counted_with, file type, calls). ID names the
 * constant ARGUS_CLS_<ID> (the enum below, in table order), name is how
 * tree-data refers to it (unique; tree.c and probe_plan.c derive their name
 * tables from it), companions is the group of tracepoints that a plan
 * counting the class must attach besides the node's own hooks (enum
 * argus_companions, lists in daemon/probe_plan.c), and counted_with is a
 * class that the probe counts along with it and that no node owns
 * (ARGUS_CLS_MAX: none; what that class is counted with comes along too). A class of system calls whose time is spent on a
 * file of one kind has its file type (ARGUS_FTYPE_<type>, ANY for calls
 * whatever their descriptor) and its group of calls (ARGUS_CALLS_<calls>):
 * it counts those calls on a file of that type, by the type of the
 * descriptor in their first argument, from entry to return, less the
 * runqueue waits inside (bpf/syscalls.bpf.h); the first such row that
 * matches wins. Other classes have NONE, NONE.
 */
#define ARGUS_CLASSES(X)                                                                           \
	/* kernel_paging */                                                                        \
	X(ANON_MINOR, anon_minor, FAULT, MAX, NONE, NONE) /* anonymous write: a fresh page */      \
	X(ANON_ZERO, anon_zero, FAULT, MAX, NONE, NONE) /* anonymous read: the zero page */        \
	X(ANON_COW, anon_cow, FAULT, MAX, NONE, NONE) /* write to a present page: a copy */        \
	X(ANON_THP, anon_thp, FAULT, MAX, NONE, NONE) /* served with a huge page */                \
	X(FILE_CACHE, file_cache, FAULT, MAX, NONE, NONE) /* file-backed, page cache */            \
	X(FILE_MAJOR, file_major, FAULT, MAX, NONE, NONE) /* file-backed, storage or slept */      \
	X(TLB_SHOOTDOWN, tlb_shootdown, NONE, MAX, NONE, NONE) /* TLB flushes */                   \
	/* kernel_scheduler */                                                                     \
	X(RUNQ_WAIT, runq_wait, HOLDER, RUNQ_OWN, NONE, NONE) /* runnable, not running */          \
	X(MIGRATE, migrate, NONE, MAX, NONE, NONE) /* moved between CPUs */                        \
	X(FORK, fork, CREATE, MAX, NONE, NONE) /* process and thread creation */                   \
	/* kernel_memory_pressure */                                                               \
	X(DIRECT_RECLAIM, direct_reclaim, NONE, MAX, NONE, NONE) /* begin..end */                  \
	X(COMPACTION, compaction, NONE, MAX, NONE, NONE) /* direct, begin..end */                  \
	X(KSWAPD, kswapd, NONE, MAX, NONE, NONE) /* the target woke kswapd */                      \
	/* kernel_block_io */                                                                      \
	X(BLOCK_QUEUE, block_queue, BLOCK, MAX, NONE, NONE) /* request insert..issue */            \
	X(BLOCK_DEVICE, block_device, BLOCK, MAX, NONE, NONE) /* request issue..complete */        \
	/* a call that makes data durable waits for writes another task makes (vfs.bpf.h) */       \
	X(BLOCK_COMMIT, block_commit, WAKE, MAX, NONE, NONE)                                       \
	/* kernel_sync */                                                                          \
	X(FUTEX, futex, WAKE, FUTEX_OWN, NONE, NONE) /* not ended by its own tasks */             \
	X(MMAP_LOCK, mmap_lock, NONE, MAX, NONE, NONE) /* start_locking..acquired */               \
	X(PIPE, pipe, WAKE, MAX, FIFO, RW) /* reads and writes on a pipe */                        \
	X(STREAM_RECV, stream_recv, WAKE, MAX, STREAM, IN) /* receives on a stream socket */       \
	X(STREAM_SEND, stream_send, WAKE, MAX, STREAM, OUT) /* sends on a stream socket */         \
	X(DGRAM_RECV, dgram_recv, WAKE, MAX, DGRAM, IN) /* receives on a datagram socket */        \
	X(DGRAM_SEND, dgram_send, WAKE, MAX, DGRAM, OUT) /* sends on a datagram socket */          \
	/* sends that slept on the network's transmit path (transmit.bpf.h) */                   \
	X(TRANSMIT, transmit, WAKE, MAX, NONE, NONE)                                               \
	/* waits for events or connections, the sleep for them apart (wait_idle) */                \
	X(EPOLL, epoll, WAKE, WAIT_IDLE, ANY, POLL)                                                \
	X(FILE_LOCK, file_lock, WAKE, MAX, ANY, LOCK) /* flock, fcntl F_SETLKW waits */            \
	/* reads and writes of regular files that sleep on the file system (vfs.bpf.h) */        \
	X(VFS_WAIT, vfs_wait, WAKE, MAX, NONE, NONE)                                               \
	/*                                                                                         \
	 * Waits on the target's own tasks, owned by no node: a runqueue wait                      \
	 * ended by one of its own threads (the CPU ran the target), a futex wait                  \
	 * that one of its own threads ended (a dependency between its threads;                    \
	 * where the thread it waited for lost time counts in that thread's                        \
	 * paths). Counted with runq_wait and futex.                                               \
	 */                                                                                        \
	X(RUNQ_OWN, runq_own, NONE, RUNQ_IDLE, NONE, NONE)                                         \
	X(FUTEX_OWN, futex_own, NONE, WAIT_IDLE, NONE, NONE)                                       \
	/*                                                                                         \
	 * The part of a runqueue wait in which its CPU was idle, owned by no                      \
	 * node: the time the CPU took to come out of idle and switch to the                       \
	 * woken thread (a deep C-state's exit, a virtual CPU the hypervisor                       \
	 * runs again). No task held the CPU. Counted with runq_wait (through                      \
	 * runq_own).                                                                              \
	 */                                                                                        \
	X(RUNQ_IDLE, runq_idle, NONE, MAX, NONE, NONE)                                             \
	/*                                                                                         \
	 * Idle, owned by no node: the sleep inside a wait for events or                           \
	 * connections (epoll_wait, poll, select, accept), and a futex wait                        \
	 * that its own timeout ended. A server with nothing to do waits                           \
	 * there, a thread that wakes up to poll; it loses no time. Counted                        \
	 * with epoll, and with futex (through futex_own).                                         \
	 */                                                                                        \
	X(WAIT_IDLE, wait_idle, NONE, MAX, NONE, NONE)

enum argus_class {
#define ARGUS_CLASS_ENUM(id, name, companions, with, ftype, calls) ARGUS_CLS_##id,
	ARGUS_CLASSES(ARGUS_CLASS_ENUM)
#undef ARGUS_CLASS_ENUM
	ARGUS_CLS_MAX,
};

/*
 * File types of a class's calls (its file type column): the S_IFMT bits of
 * i_mode, a socket's by its kind (S_IFSOCK with 1 for stream, 2 for
 * datagram: values no i_mode has), ANY for calls whatever their descriptor.
 */
#define ARGUS_FTYPE_NONE 0
#define ARGUS_FTYPE_ANY 1
#define ARGUS_FTYPE_FIFO 0010000
#define ARGUS_FTYPE_STREAM 0140001
#define ARGUS_FTYPE_DGRAM 0140002

/*
 * The system calls the probe tells apart, by role: name (SYS_<name> in
 * <sys/syscall.h>) and role. The probe knows no numbers: before it attaches,
 * the loader writes each call's number on this architecture into the probe's
 * syscall_roles map, and a call the architecture lacks (fork, poll and
 * select on arm64) is left out. vfork is not a creation: its parent waits
 * for the child's exec.
 */
#define ARGUS_SYSCALLS(X)                                                                          \
	X(futex, FUTEX)                                                                            \
	X(futex_waitv, FUTEX)                                                                      \
	X(futex_wait, FUTEX)                                                                       \
	X(clone, CREATE)                                                                           \
	X(fork, CREATE)                                                                            \
	X(clone3, CREATE)                                                                          \
	X(read, READ)                                                                              \
	X(readv, READ)                                                                             \
	X(pread64, PREAD)                                                                          \
	X(preadv, PREAD)                                                                           \
	X(preadv2, PREAD)                                                                          \
	X(write, WRITE)                                                                            \
	X(writev, WRITE)                                                                           \
	X(pwrite64, PWRITE)                                                                        \
	X(pwritev, PWRITE)                                                                         \
	X(pwritev2, PWRITE)                                                                        \
	X(recvfrom, RECV)                                                                          \
	X(recvmsg, RECV)                                                                           \
	X(recvmmsg, RECV)                                                                          \
	X(sendto, SEND)                                                                            \
	X(sendmsg, SEND)                                                                           \
	X(sendmmsg, SEND)                                                                          \
	X(sendfile, SEND) /* its first argument is the socket (or file) written to */             \
	X(poll, POLL_FDS)                                                                          \
	X(ppoll, POLL_FDS)                                                                         \
	X(select, SELECT)                                                                          \
	X(pselect6, SELECT)                                                                        \
	X(epoll_wait, POLL)                                                                        \
	X(epoll_pwait, POLL)                                                                       \
	X(epoll_pwait2, POLL)                                                                      \
	X(accept, POLL)                                                                            \
	X(accept4, POLL)                                                                           \
	X(flock, FLOCK)                                                                            \
	X(fcntl, FCNTL)                                                                            \
	X(open, PATH) /* the file system's names and sizes */                                      \
	X(openat, PATH)                                                                            \
	X(openat2, PATH)                                                                           \
	X(creat, PATH)                                                                             \
	X(mkdir, PATH)                                                                             \
	X(mkdirat, PATH)                                                                           \
	X(mknod, PATH)                                                                             \
	X(mknodat, PATH)                                                                           \
	X(unlink, PATH)                                                                            \
	X(unlinkat, PATH)                                                                          \
	X(rmdir, PATH)                                                                             \
	X(rename, PATH)                                                                            \
	X(renameat, PATH)                                                                          \
	X(renameat2, PATH)                                                                         \
	X(link, PATH)                                                                              \
	X(linkat, PATH)                                                                            \
	X(symlink, PATH)                                                                           \
	X(symlinkat, PATH)                                                                         \
	X(truncate, PATH)                                                                          \
	X(ftruncate, PATH)                                                                         \
	X(fallocate, PATH)                                                                         \
	X(stat, PATH)                                                                              \
	X(lstat, PATH)                                                                             \
	X(newfstatat, PATH)                                                                        \
	X(statx, PATH)                                                                             \
	X(getdents, PATH)                                                                          \
	X(getdents64, PATH)                                                                        \
	X(fsync, SYNC) /* the calls that make data durable */                                      \
	X(fdatasync, SYNC)                                                                         \
	X(sync_file_range, SYNC)                                                                   \
	X(syncfs, SYNC)                                                                            \
	X(sync, SYNC)

enum argus_sys_role {
	ARGUS_SYS_NONE = 0,
	ARGUS_SYS_FUTEX,  /* a futex wait or wake */
	ARGUS_SYS_CREATE, /* a new process or thread */
	ARGUS_SYS_READ,
	ARGUS_SYS_WRITE,
	ARGUS_SYS_RECV,
	ARGUS_SYS_SEND,
	ARGUS_SYS_POLL,	 /* a wait for events or connections */
	ARGUS_SYS_FLOCK, /* flock: a lock wait unless LOCK_NB or a release */
	ARGUS_SYS_FCNTL, /* fcntl: a lock wait for F_SETLKW and F_OFD_SETLKW */
	/*
	 * Reads and writes at an offset: never on a pipe or a socket, so only
	 * the waits on files look at them (bpf/vfs.bpf.h, from the registers
	 * a blocked call saved); no call event is attached for them.
	 */
	ARGUS_SYS_PREAD,
	ARGUS_SYS_PWRITE,
	/*
	 * Waits for events on a list of descriptors the call names: poll and
	 * ppoll (an array of struct pollfd, its length), select and pselect6
	 * (the number of descriptors, then the read, write and exception
	 * sets). Waits for events like ARGUS_SYS_POLL; a wait to write on a
	 * socket whose data the transmit path holds is not idle
	 * (bpf/transmit.bpf.h).
	 */
	ARGUS_SYS_POLL_FDS,
	ARGUS_SYS_SELECT,
	/*
	 * Calls on the file system's names and sizes: opening and creating,
	 * the directory operations (links, removals, renames, lookups,
	 * listings), truncation and allocation; and the calls that wait for
	 * data to be durable (fsync, fdatasync, sync_file_range, syncfs,
	 * sync). Like PREAD and PWRITE, only the waits on files look at them
	 * (bpf/vfs.bpf.h), and no call event is attached for them.
	 */
	ARGUS_SYS_PATH,
	ARGUS_SYS_SYNC,
};

/* The roles the probe reads only at a blocking switch: no call event is ever attached for them. */
#define ARGUS_SYS_AT_SWITCH_ONLY(role)                                                             \
	((role) == ARGUS_SYS_PREAD || (role) == ARGUS_SYS_PWRITE || (role) == ARGUS_SYS_PATH ||    \
	 (role) == ARGUS_SYS_SYNC)

/* syscall_roles is indexed by the call's number: numbers at or above this are no call's. */
#define ARGUS_SYSCALL_NR_MAX 1024

/* Groups of calls on a file descriptor (its calls column; ARGUS_SYSCALLS names their calls). */
enum argus_calls {
	ARGUS_CALLS_NONE = 0,
	ARGUS_CALLS_READ = 1,	/* read, readv */
	ARGUS_CALLS_WRITE = 2,	/* write, writev */
	ARGUS_CALLS_RECV = 4,	/* recvfrom, recvmsg, recvmmsg */
	ARGUS_CALLS_SEND = 8,	/* sendto, sendmsg, sendmmsg */
	ARGUS_CALLS_POLL = 16,	/* epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll, select,
				 * pselect6, accept, accept4 */
	ARGUS_CALLS_LOCK = 32,	/* flock without LOCK_NB, fcntl F_SETLKW and F_OFD_SETLKW */
	ARGUS_CALLS_RW = ARGUS_CALLS_READ | ARGUS_CALLS_WRITE,
	ARGUS_CALLS_IN = ARGUS_CALLS_READ | ARGUS_CALLS_RECV,
	ARGUS_CALLS_OUT = ARGUS_CALLS_WRITE | ARGUS_CALLS_SEND,
	/* the calls whose class depends on their descriptor's type */
	ARGUS_CALLS_ON_FD = ARGUS_CALLS_IN | ARGUS_CALLS_OUT,
};

/* The tracepoints a class needs besides its node's hooks (their lists: daemon/probe_plan.c). */
enum argus_companions {
	ARGUS_COMPANIONS_NONE,
	ARGUS_COMPANIONS_FAULT,	 /* what bounds a fault and takes nested paths out of it */
	ARGUS_COMPANIONS_BLOCK,	 /* every phase of a block request */
	ARGUS_COMPANIONS_CREATE, /* the parent's time in clone/fork/clone3 */
	ARGUS_COMPANIONS_WAKE,	 /* who ends a wait: its own tasks, others, timers */
	ARGUS_COMPANIONS_HOLDER, /* what a kernel worker that held the CPU was running */
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
/* cgroups of a followed service (its own and those below it) */
#define ARGUS_MAX_CGROUPS 1024
/* In-flight block requests tracked. */
#define ARGUS_MAX_REQUESTS 8192
/* CPUs whose occupancy by the target is kept (a runqueue wait on a CPU past them is split by its end). */
#define ARGUS_MAX_CPUS 1024

/* One slot's counters; per CPU in the map, summed by user space. */
struct argus_counter {
	unsigned long long count;   /* events */
	unsigned long long time_ns; /* time attributed (latency or stall), 0 if none */
};

/*
 * Who had the CPU when a target thread's runqueue wait ended: the task
 * switched out for it, by process and name, for the trace; for each, the
 * waits that lost time and that time (what counted in runq_wait). At most
 * this many distinct holders are kept in one run; the rest are summed
 * apart (rq_holders_unkept in paths.bpf.c).
 */
#define ARGUS_RQ_HOLDERS 256
struct argus_rq_holder_key {
	unsigned int tgid; /* in argusd's PID namespace; 0: the idle task, or not visible */
	char comm[16];	   /* the task's name (TASK_COMM_LEN) */
	unsigned int own;  /* 1: one of the target's own tasks (the time it held the CPU counts in runq_own) */
	/*
	 * A workqueue worker's work: the function of the work item it started
	 * last on that CPU (a kernel address, named by user space); 0 for any
	 * other task, or where the workqueue's companion is not attached.
	 */
	unsigned long long work;
};

/*
 * Who ended a target thread's wait on another task (a futex wait, a call
 * on a pipe or socket, a file lock, a wait for events): the task that woke
 * it, by process and name and by the class the wait counted in, for the
 * causal chain of a result. Wakeups from a timer callback are not a task's.
 * A waker that is one of the target's own threads was itself measured: the
 * class it spent the most time in since it last ended such a wait is the
 * chain's next link (then_cls, and that time in the value's then_ns). A
 * waker of another's is followed from the first wait it ends on: its
 * iowait (block_device) and runqueue waits (runq_wait) since the last
 * wait it ended make its next link, never the target's counters.
 * At most this many distinct wakers are kept in one run.
 */
#define ARGUS_WAKERS 256
struct argus_waker_key {
	unsigned int tgid;     /* in argusd's PID namespace; 0: not visible */
	char comm[16];	       /* the waker's name (TASK_COMM_LEN) */
	unsigned int own;      /* 1: one of the target's own tasks */
	unsigned int cls;      /* the class the wait counted in (enum argus_class) */
	unsigned int then_cls; /* where the waker's time went before (ARGUS_CLS_MAX: unknown) */
};

struct argus_waker_value {
	unsigned long long count;   /* the waits it ended */
	unsigned long long time_ns; /* their time */
	unsigned long long then_ns; /* the waker's time in then_cls before it ended them */
};

/*
 * The passes over every task at a window's edges (bpf/edges.bpf.h), as
 * user space sets window_edge before each: right after attaching, right
 * before detaching.
 */
enum argus_edge {
	ARGUS_EDGE_NONE = 0,
	ARGUS_EDGE_OPEN = 1,
	ARGUS_EDGE_CLOSE = 2,
};

/* Per-class totals are also kept, for the trace and the signature table. */
#define ARGUS_CLASS_SLOT_BASE ARGUS_MAX_SLOTS
#define ARGUS_COUNTER_ENTRIES (ARGUS_MAX_SLOTS + ARGUS_CLS_MAX)

#endif
