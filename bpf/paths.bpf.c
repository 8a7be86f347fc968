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
 * error code, not by looking the VMA up: bpf_find_vma at page_fault_user
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

/* Diagnostics for the trace: faults that moved nothing a class recognizes. */
unsigned long long unclassified_faults = 0;
unsigned long long thread_map_full = 0; /* task storage allocation failures */

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

/* Runqueue waits (count, time) by the task that held the CPU when each ended. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_RQ_HOLDERS);
	__type(key, struct argus_rq_holder_key);
	__type(value, struct argus_counter);
} runq_holders SEC(".maps");

/* tgids that belong to the target; user space adds the root, forks add children. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* What happened inside a fault: its class is decided when it ends. */
#define F_RSS_ANON 0x01u   /* an anonymous page was mapped (new, copied or huge) */
#define F_RSS_FILE 0x02u   /* a file or shmem page was mapped */
#define F_FILEMAP 0x04u    /* filemap_fault or fault-around ran: the page is file-backed */
#define F_SLEPT 0x08u      /* the thread blocked inside the fault, outside nested paths */
#define F_CACHE_ADD 0x10u  /* a page was inserted into the page cache: read from storage */
#define F_THP_ALLOC 0x20u  /* an order-9 allocation: a transparent huge page */
#define F_WRITE 0x40u      /* error code: write access */
#define F_PROT 0x80u       /* error code: the page was present (protection fault) */
#define F_END_SEEN 0x100u  /* an event marked the fault's completion (page mapped, TLB flushed, woke) */

/* A path a thread is in: since when (0: not in it), and its runq_total then. */
struct span {
	__u64 start;
	__u64 runq;
};

struct thread_state {
	__u64 fault_start;  /* 0: not inside a fault */
	__u64 fault_end;    /* last page mapped, or last wakeup inside the fault */
	__u64 fault_nested; /* time inside nested paths during this fault */
	__u32 fault_flags;
	__u32 role; /* ROLE_TARGET or ROLE_OTHER, decided on first sight */
	__u64 runq_start;   /* runnable since (wakeup or preemption) */
	__u64 runq_total;   /* all its runqueue waits so far */
	__u64 block_start;  /* blocked since (switched out not runnable) */
	struct span reclaim, compact, lock, futex;
	__u32 futex_own;    /* the futex wait was ended by one of the target's own tasks */
	struct span fork;   /* in clone/fork/clone3 */
	__u64 io_block_start; /* blocked in iowait outside a fault */
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
 * task, not once per event. Membership cannot change after that first
 * look: children are added to targets at fork, before they run.
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

/* The state of a target thread, or NULL for any other task. */
static __always_inline struct thread_state *task_state(struct task_struct *p)
{
	struct thread_state *ts = bpf_task_storage_get(&threads, p, 0, 0);
	__u32 tgid;

	if (!ts) {
		ts = bpf_task_storage_get(&threads, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts) {
			__sync_fetch_and_add(&thread_map_full, 1);
			return NULL;
		}
		tgid = argus_tgid_in_ns(p, pidns_inum);
		ts->role = tgid && bpf_map_lookup_elem(&targets, &tgid) ? ROLE_TARGET : ROLE_OTHER;
	}
	return ts->role == ROLE_TARGET ? ts : NULL;
}

static __always_inline struct thread_state *current_state(void)
{
	return task_state(bpf_get_current_task_btf());
}

/*
 * The class of a finished fault, from what it did. A cause is named where it
 * starts: a file-backed fault that read its page from storage (a page went
 * into the page cache) or slept for it is major, whatever page it then
 * mapped, so a write to a private file mapping whose page had to be read
 * first is storage I/O, not copy-on-write. Otherwise a write that mapped an
 * anonymous page over a present page or a file page is copy-on-write (the
 * copy of a present page); a write fault on a present page that copied
 * nothing reused it (still the copy-on-write path). A fresh anonymous page
 * is minor, or THP when an order-9 allocation served it. A file-backed fault
 * that neither read nor slept was served from the page cache. A read of a
 * never-touched anonymous page maps the zero page and moves no counter.
 */
static __always_inline __u32 fault_class(__u32 f)
{
	bool write = f & F_WRITE, prot = f & F_PROT, file = f & (F_FILEMAP | F_RSS_FILE);

	if (file && (f & (F_SLEPT | F_CACHE_ADD)))
		return ARGUS_CLS_FILE_MAJOR;
	if (write && (f & F_RSS_ANON) && (prot || file))
		return ARGUS_CLS_ANON_COW;
	if (write && prot)
		return ARGUS_CLS_ANON_COW;
	if (f & F_RSS_ANON)
		return (f & F_THP_ALLOC) ? ARGUS_CLS_ANON_THP : ARGUS_CLS_ANON_MINOR;
	if (file)
		return ARGUS_CLS_FILE_CACHE;
	if (!write && !prot)
		return ARGUS_CLS_ANON_ZERO;
	return ARGUS_CLS_MAX;
}

/*
 * Close the thread's open fault, if any: the thread entered the kernel
 * again, so the fault is over. Its time runs to the last completion event
 * seen inside it (page mapped, TLB flushed after a copy, wakeup after a
 * sleep). A fault with none (a zero-page read maps no page that counts) is
 * counted without time: bounding it by the next kernel entry would charge
 * it the user time in between, which grows with any slowdown at all.
 */
static __always_inline void fault_finish(struct thread_state *ts)
{
	__u64 end, dur = 0;
	__u32 cls;

	if (!ts->fault_start)
		return;
	end = ts->fault_end;
	if ((ts->fault_flags & F_END_SEEN) && end > ts->fault_start) {
		dur = end - ts->fault_start;
		dur = dur > ts->fault_nested ? dur - ts->fault_nested : 0;
	}
	cls = fault_class(ts->fault_flags);
	if (cls < ARGUS_CLS_MAX)
		account(cls, 1, dur);
	else
		__sync_fetch_and_add(&unclassified_faults, 1);
	ts->fault_start = 0;
}

/* Time spent in a nested path counts there, not in the surrounding fault. */
static __always_inline void fault_nest(struct thread_state *ts, __u64 ns)
{
	if (ts->fault_start)
		ts->fault_nested += ns;
}

static __always_inline void span_begin(const struct thread_state *ts, struct span *s)
{
	s->start = bpf_ktime_get_ns();
	s->runq = ts->runq_total;
}

/*
 * Leave the path: its time from start to now, less the runqueue waits
 * inside it (those count as runqueue time).
 */
static __always_inline __u64 span_end(const struct thread_state *ts, struct span *s, __u64 now)
{
	__u64 dt = now > s->start ? now - s->start : 0, waited = ts->runq_total - s->runq;

	s->start = 0;
	return dt > waited ? dt - waited : 0;
}

/* ---- page faults ---- */

#define PF_PROT 0x1
#define PF_WRITE 0x2

SEC("tp_btf/page_fault_user")
int BPF_PROG(handle_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct thread_state *ts = current_state();

	__u64 now = bpf_ktime_get_ns();

	if (!ts)
		return 0;
	fault_finish(ts);
	ts->fault_start = now;
	ts->fault_end = now;
	ts->fault_nested = 0;
	ts->fault_flags = ((error_code & PF_WRITE) ? F_WRITE : 0) |
			  ((error_code & PF_PROT) ? F_PROT : 0);
	return 0;
}

/* The fault mapped its page(s): RSS counters move at the end of the fault path. */
SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	struct thread_state *ts = current_state();

	if (!ts || !ts->fault_start)
		return 0;
	if (mm != bpf_get_current_task_btf()->mm)
		return 0;
	ts->fault_end = bpf_ktime_get_ns();
	ts->fault_flags |= F_END_SEEN;
	if (member == MM_ANONPAGES)
		ts->fault_flags |= F_RSS_ANON;
	else if (member == MM_FILEPAGES || member == MM_SHMEMPAGES)
		ts->fault_flags |= F_RSS_FILE;
	return 0;
}

#define HPAGE_PMD_ORDER 9

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(handle_mm_page_alloc, struct page *page, unsigned int order, gfp_t gfp,
	     int migratetype)
{
	struct thread_state *ts;

	if (order < HPAGE_PMD_ORDER)
		return 0;
	ts = current_state();
	if (ts && ts->fault_start)
		ts->fault_flags |= F_THP_ALLOC;
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(handle_mm_filemap_add_to_page_cache, struct folio *folio)
{
	struct thread_state *ts = current_state();

	if (ts && ts->fault_start)
		ts->fault_flags |= F_CACHE_ADD;
	return 0;
}

static __always_inline void mark_file_fault(void)
{
	struct thread_state *ts = current_state();

	if (ts && ts->fault_start)
		ts->fault_flags |= F_FILEMAP;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(handle_mm_filemap_fault, struct address_space *mapping, unsigned long index)
{
	mark_file_fault();
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(handle_mm_filemap_map_pages, struct address_space *mapping, unsigned long start,
	     unsigned long last)
{
	mark_file_fault();
	return 0;
}

/* ---- scheduler ---- */

static __always_inline __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/*
 * The thread waited for I/O from t0 to t1 outside a fault: the part that
 * overlaps its last request's queueing counts as queue time, the rest as
 * device time.
 */
static __always_inline void io_wait_done(__u32 tid, __u64 t0, __u64 t1)
{
	struct rq_phases *ph = bpf_map_lookup_elem(&last_request, &tid);
	__u64 q = 0;

	if (t1 <= t0)
		return;
	if (ph && ph->insert && ph->issue > ph->insert)
		q = overlap(t0, t1, ph->insert, ph->issue);
	if (q)
		account(ARGUS_CLS_BLOCK_QUEUE, 0, q);
	account(ARGUS_CLS_BLOCK_DEVICE, 0, t1 - t0 - q);
}

static __always_inline void mark_runnable(struct task_struct *p)
{
	struct thread_state *ts = task_state(p);
	__u64 now;

	if (!ts)
		return;
	now = bpf_ktime_get_ns();
	if (!ts->runq_start)
		ts->runq_start = now;
	/* its iowait ends with the wakeup: the wait for a CPU after it is runqueue time */
	if (ts->io_block_start) {
		io_wait_done(p->pid, ts->io_block_start, now);
		ts->io_block_start = 0;
	}
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_sched_wakeup, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

/*
 * Per CPU: since when it runs an hrtimer callback (0: none), where timeouts
 * fire (a futex wait's own timeout, a POSIX timer's signal). A wakeup from
 * there comes from the timer, not from the task it interrupted. (The
 * per-CPU preempt count would say so for every interrupt, but this kernel
 * does not let BPF programs address per-CPU data by symbol.) An exit
 * clears it, nested or not; an entry whose exit came before attach is
 * forgotten after TIMER_CALLBACK_MAX_NS, longer than any callback runs.
 */
#define TIMER_CALLBACK_MAX_NS 1000000ull

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} timer_since SEC(".maps");

static __always_inline __u64 *this_cpu_timer_since(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&timer_since, &zero);
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(handle_hrtimer_expire_entry, struct hrtimer *timer)
{
	__u64 *since = this_cpu_timer_since();

	if (since)
		*since = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(handle_hrtimer_expire_exit, struct hrtimer *timer)
{
	__u64 *since = this_cpu_timer_since();

	if (since)
		*since = 0;
	return 0;
}

static __always_inline bool in_timer(void)
{
	__u64 *since = this_cpu_timer_since();

	return since && *since && bpf_ktime_get_ns() - *since < TIMER_CALLBACK_MAX_NS;
}

/*
 * In the waker's context: who ends a target thread's futex wait. A wait
 * that a timer ends (its timeout) was not ended by the task the timer
 * interrupt happened to find on the CPU.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(handle_sched_waking, struct task_struct *p)
{
	struct thread_state *ts = task_state(p);

	if (ts && ts->futex.start && !in_timer() && current_state())
		ts->futex_own = 1;
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_sched_wakeup_new, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

/* A target thread leaves the CPU: preempted (still runnable) or blocked. */
static __always_inline void switched_out(struct thread_state *ts, struct task_struct *prev,
					 bool runnable, __u64 now)
{
	if (runnable) {
		ts->runq_start = now;
		return;
	}
	ts->runq_start = 0;
	ts->block_start = now;
	if (!ts->fault_start && BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		ts->io_block_start = now;
	/*
	 * A fault that sleeps waits for its page to be read, unless it sleeps
	 * inside a nested path (reclaim, compaction, a lock), whose time and
	 * cause count there.
	 */
	if (ts->fault_start && !ts->reclaim.start && !ts->compact.start && !ts->lock.start)
		ts->fault_flags |= F_SLEPT;
}

/* A target thread's runqueue wait of wait ns ended by switching holder out. */
static __always_inline void note_holder(struct task_struct *holder, bool own, __u64 wait)
{
	struct argus_rq_holder_key k = {};
	struct argus_counter zero = {}, *c;

	k.tgid = argus_tgid_in_ns(holder, pidns_inum);
	k.own = own;
	bpf_probe_read_kernel_str(k.comm, sizeof(k.comm), holder->comm);
	c = bpf_map_lookup_elem(&runq_holders, &k);
	if (!c) {
		/* full: the run keeps the holders it met first */
		bpf_map_update_elem(&runq_holders, &k, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&runq_holders, &k);
		if (!c)
			return;
	}
	__sync_fetch_and_add(&c->count, 1);
	__sync_fetch_and_add(&c->time_ns, wait);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *ts;
	bool prev_target;

	ts = task_state(prev);
	prev_target = ts != NULL;
	if (ts)
		switched_out(ts, prev, preempt || prev_state == 0, now);

	ts = task_state(next);
	if (!ts)
		return 0;
	if (ts->runq_start && now > ts->runq_start) {
		__u64 wait = now - ts->runq_start;

		/* behind one of its own threads the CPU was the target's all along */
		account(prev_target ? ARGUS_CLS_RUNQ_OWN : ARGUS_CLS_RUNQ_WAIT, 1, wait);
		ts->runq_total += wait;
		fault_nest(ts, wait);
		note_holder(prev, prev_target, wait);
	}
	ts->runq_start = 0;
	if (ts->block_start) {
		/* blocked inside a fault: the fault lasted at least until now */
		if (ts->fault_start) {
			ts->fault_end = now;
			ts->fault_flags |= F_END_SEEN;
		}
		ts->block_start = 0;
	}
	if (ts->io_block_start) {
		/* its wakeup went unseen: the wait ends here at the latest */
		io_wait_done(next->pid, ts->io_block_start, now);
		ts->io_block_start = 0;
	}
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(handle_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	if (task_state(p))
		account(ARGUS_CLS_MIGRATE, 1, 0);
	return 0;
}

/* Target tracking: always loaded. Children of target processes are targets. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = argus_tgid_in_ns(child, pidns_inum);
	__u8 one = 1;

	if (!task_state(parent) || !tgid)
		return 0;
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	account(ARGUS_CLS_FORK, 1, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit, struct task_struct *p, bool group_dead)
{
	struct thread_state *ts = task_state(p);
	__u32 tid = p->pid;

	if (ts) {
		__u64 start = BPF_CORE_READ(p, start_time), now = bpf_ktime_get_ns();

		fault_finish(ts);
		bpf_map_delete_elem(&last_request, &tid);
		if (born_after_ns && start >= born_after_ns && now > start)
			__sync_fetch_and_add(&child_thread_ns, now - start);
	}
	return 0;
}

/* ---- syscalls: end of a fault (the thread is back in user space), futex waits ---- */

#define NR_futex 202
#define NR_futex_waitv 449
#define NR_futex_wait 455
#define NR_clone 56
#define NR_fork 57
#define NR_clone3 435
/* vfork is left out: its parent waits for the child's exec, which is not creation time */

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct thread_state *ts = current_state();

	if (!ts)
		return 0;
	fault_finish(ts);
	if (id == NR_futex || id == NR_futex_waitv || id == NR_futex_wait) {
		span_begin(ts, &ts->futex);
		ts->futex_own = 0;
	} else if (id == NR_clone || id == NR_fork || id == NR_clone3) {
		span_begin(ts, &ts->fork);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct thread_state *ts = current_state();
	__u64 now;

	if (!ts || !(ts->futex.start | ts->fork.start))
		return 0;
	now = bpf_ktime_get_ns();
	if (ts->futex.start)
		account(ts->futex_own ? ARGUS_CLS_FUTEX_OWN : ARGUS_CLS_FUTEX, 1,
			span_end(ts, &ts->futex, now));
	/* the child was counted at sched_process_fork; the parent's time in the call is here */
	if (ts->fork.start)
		account(ARGUS_CLS_FORK, 0, span_end(ts, &ts->fork, now));
	return 0;
}

/* ---- memory pressure ---- */

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(handle_mm_vmscan_direct_reclaim_begin, int order, gfp_t gfp)
{
	struct thread_state *ts = current_state();

	if (ts)
		span_begin(ts, &ts->reclaim);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(handle_mm_vmscan_direct_reclaim_end, unsigned long nr_reclaimed)
{
	struct thread_state *ts = current_state();
	__u64 dt;

	if (!ts || !ts->reclaim.start)
		return 0;
	dt = span_end(ts, &ts->reclaim, bpf_ktime_get_ns());
	account(ARGUS_CLS_DIRECT_RECLAIM, 1, dt);
	fault_nest(ts, dt);
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(handle_mm_compaction_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync)
{
	struct thread_state *ts = current_state();

	if (ts)
		span_begin(ts, &ts->compact);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(handle_mm_compaction_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync, int status)
{
	struct thread_state *ts = current_state();
	__u64 dt;

	if (!ts || !ts->compact.start)
		return 0;
	dt = span_end(ts, &ts->compact, bpf_ktime_get_ns());
	account(ARGUS_CLS_COMPACTION, 1, dt);
	fault_nest(ts, dt);
	return 0;
}

SEC("tp_btf/mm_vmscan_wakeup_kswapd")
int BPF_PROG(handle_mm_vmscan_wakeup_kswapd, int nid, int zid, int order, gfp_t gfp)
{
	if (current_state())
		account(ARGUS_CLS_KSWAPD, 1, 0);
	return 0;
}

/* ---- block I/O: requests the target submitted ---- */

SEC("tp_btf/block_rq_insert")
int BPF_PROG(handle_block_rq_insert, struct request *rq)
{
	struct request_state rs = {};
	__u64 key = (__u64)rq;

	if (!current_state())
		return 0;
	rs.insert_ts = bpf_ktime_get_ns();
	rs.tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_update_elem(&requests, &key, &rs, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(handle_block_rq_issue, struct request *rq)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct request_state *rs = bpf_map_lookup_elem(&requests, &key);
	struct request_state fresh = {};

	if (rs) {
		rs->issue_ts = now;
		account(ARGUS_CLS_BLOCK_QUEUE, 1, 0);
		return 0;
	}
	if (!current_state())
		return 0;
	/* issued directly, without a scheduler queue */
	account(ARGUS_CLS_BLOCK_QUEUE, 1, 0);
	fresh.issue_ts = now;
	fresh.tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_update_elem(&requests, &key, &fresh, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(handle_block_rq_complete, struct request *rq, blk_status_t error,
	     unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct request_state *rs = bpf_map_lookup_elem(&requests, &key);
	struct rq_phases ph;
	__u32 tid;

	if (!rs)
		return 0;
	ph = (struct rq_phases){ .insert = rs->insert_ts, .issue = rs->issue_ts, .complete = now };
	tid = rs->tid;
	account(ARGUS_CLS_BLOCK_DEVICE, 1, 0);
	bpf_map_update_elem(&last_request, &tid, &ph, BPF_ANY);
	bpf_map_delete_elem(&requests, &key);
	return 0;
}

/* ---- mmap_lock ---- */

SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(handle_mmap_lock_start_locking, struct mm_struct *mm, bool write)
{
	struct thread_state *ts = current_state();

	if (ts)
		span_begin(ts, &ts->lock);
	return 0;
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(handle_mmap_lock_acquire_returned, struct mm_struct *mm, bool write, bool success)
{
	struct thread_state *ts = current_state();
	__u64 dt;

	if (!ts || !ts->lock.start)
		return 0;
	dt = span_end(ts, &ts->lock, bpf_ktime_get_ns());
	account(ARGUS_CLS_MMAP_LOCK, 1, dt);
	fault_nest(ts, dt);
	return 0;
}

/* ---- TLB shootdowns that reach or come from the target ---- */

SEC("tp_btf/tlb_flush")
int BPF_PROG(handle_tlb_flush, int reason, unsigned long pages)
{
	struct thread_state *ts = current_state();

	if (!ts)
		return 0;
	/* a copy-on-write fault flushes the old mapping last, on its own CPU: its completion */
	if (ts->fault_start && (reason == TLB_LOCAL_SHOOTDOWN || reason == TLB_LOCAL_MM_SHOOTDOWN)) {
		ts->fault_end = bpf_ktime_get_ns();
		ts->fault_flags |= F_END_SEEN;
	}
	if (reason == TLB_REMOTE_SHOOTDOWN || reason == TLB_REMOTE_SEND_IPI)
		account(ARGUS_CLS_TLB_SHOOTDOWN, 1, 0);
	return 0;
}

/* ---- function backends: one attachment per kernel function ---- */

/* kprobe/kretprobe: the attach cookie is the slot. */
SEC("kprobe")
int BPF_KPROBE(kprobe_entry)
{
	struct call_key k = { .tid = (__u32)bpf_get_current_pid_tgid(),
			      .slot = (__u32)bpf_get_attach_cookie(ctx) };
	__u64 now = bpf_ktime_get_ns();

	if (!current_state())
		return 0;
	bpf_map_update_elem(&calls, &k, &now, BPF_ANY);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(kretprobe_exit)
{
	struct call_key k = { .tid = (__u32)bpf_get_current_pid_tgid(),
			      .slot = (__u32)bpf_get_attach_cookie(ctx) };
	__u64 *start = bpf_map_lookup_elem(&calls, &k);

	if (!start)
		return 0;
	if (k.slot < ARGUS_MAX_SLOTS)
		account_slot(k.slot, 1, bpf_ktime_get_ns() - *start);
	bpf_map_delete_elem(&calls, &k);
	return 0;
}

/* fentry/fexit: the attach target is set before load; pair i counts into fentry_slot[i]. */
static __always_inline void fentry_begin(__u32 pair)
{
	struct call_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .slot = pair };
	__u64 now = bpf_ktime_get_ns();

	if (current_state())
		bpf_map_update_elem(&calls, &k, &now, BPF_ANY);
}

static __always_inline void fentry_end(__u32 pair)
{
	struct call_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .slot = pair };
	__u64 *start = bpf_map_lookup_elem(&calls, &k);
	int slot;

	if (!start || pair >= ARGUS_FENTRY_PAIRS)
		return;
	slot = fentry_slot[pair];
	if (slot >= 0 && slot < ARGUS_MAX_SLOTS)
		account_slot(slot, 1, bpf_ktime_get_ns() - *start);
	bpf_map_delete_elem(&calls, &k);
}

#define FENTRY_PAIR(i)                                                                             \
	SEC("fentry")                                                                              \
	int BPF_PROG(fentry_##i)                                                                   \
	{                                                                                          \
		fentry_begin(i);                                                                   \
		return 0;                                                                          \
	}                                                                                          \
	SEC("fexit")                                                                               \
	int BPF_PROG(fexit_##i)                                                                    \
	{                                                                                          \
		fentry_end(i);                                                                     \
		return 0;                                                                          \
	}

FENTRY_PAIR(0)
FENTRY_PAIR(1)
FENTRY_PAIR(2)
FENTRY_PAIR(3)
FENTRY_PAIR(4)
FENTRY_PAIR(5)
FENTRY_PAIR(6)
FENTRY_PAIR(7)
FENTRY_PAIR(8)
FENTRY_PAIR(9)
FENTRY_PAIR(10)
FENTRY_PAIR(11)
FENTRY_PAIR(12)
FENTRY_PAIR(13)
FENTRY_PAIR(14)
FENTRY_PAIR(15)
FENTRY_PAIR(16)
FENTRY_PAIR(17)
FENTRY_PAIR(18)
FENTRY_PAIR(19)
FENTRY_PAIR(20)
FENTRY_PAIR(21)
FENTRY_PAIR(22)
FENTRY_PAIR(23)
