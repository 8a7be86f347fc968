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
 * time_ns is thread time attributed exclusively to one path: a page fault's
 * time runs from fault entry to the last page mapped (or to the wakeup after
 * it slept), minus the time spent inside nested paths (runqueue waits,
 * direct reclaim, compaction, mmap_lock waits) which count in their own
 * classes. Block I/O time is likewise thread time: the target blocked in
 * iowait outside a fault, split between the queue and device phases of the
 * request it waited for (request latency itself overlaps and is device
 * time, not the target's). Time of different nodes is therefore comparable.
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

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Slot of each class at this level, -1 when the class is outside the active subtree. */
const volatile int class_slot[ARGUS_CLS_MAX] = {};
/* fentry/fexit pair i counts into fentry_slot[i]. */
#define ARGUS_FENTRY_PAIRS 8
const volatile int fentry_slot[ARGUS_FENTRY_PAIRS] = {};

/* Diagnostics for the trace: faults whose VMA could not be looked up. */
unsigned long long unclassified_faults = 0;
unsigned long long thread_map_full = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ARGUS_COUNTER_ENTRIES);
	__type(key, __u32);
	__type(value, struct argus_counter);
} counters SEC(".maps");

/* tgids that belong to the target; user space adds the root, forks add children. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

#define F_RSS_SEEN 1u
#define F_SLEPT 2u

struct thread_state {
	__u64 fault_start;  /* 0: not inside a fault */
	__u64 fault_end;    /* last page mapped, or last wakeup inside the fault */
	__u64 fault_nested; /* time inside nested paths during this fault */
	__u32 fault_class;
	__u32 fault_flags;
	__u64 runq_start;   /* runnable since (wakeup or preemption) */
	__u64 block_start;  /* blocked since (switched out not runnable) */
	__u64 reclaim_start;
	__u64 compact_start;
	__u64 lock_start;
	__u64 futex_start;
	__u64 io_block_start; /* blocked in iowait outside a fault */
	__u64 rq_insert;      /* phases of the thread's last completed request */
	__u64 rq_issue;
	__u64 rq_complete;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct thread_state);
} threads SEC(".maps");

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

static __always_inline bool task_is_target(struct task_struct *p)
{
	__u32 tgid = p->tgid;

	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline bool current_is_target(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline struct thread_state *thread_get(__u32 tid, bool create)
{
	struct thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
	struct thread_state zero = {};

	if (ts || !create)
		return ts;
	if (bpf_map_update_elem(&threads, &tid, &zero, BPF_NOEXIST) && !bpf_map_lookup_elem(&threads, &tid))
		__sync_fetch_and_add(&thread_map_full, 1);
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline struct thread_state *current_thread(bool create)
{
	if (!current_is_target())
		return NULL;
	return thread_get((__u32)bpf_get_current_pid_tgid(), create);
}

/* Close the thread's open fault, if any: the thread left the fault path. */
static __always_inline void fault_finish(struct thread_state *ts)
{
	__u64 end, dur = 0;

	if (!ts->fault_start)
		return;
	end = ts->fault_end;
	if (end > ts->fault_start) {
		dur = end - ts->fault_start;
		dur = dur > ts->fault_nested ? dur - ts->fault_nested : 0;
	}
	account(ts->fault_class, 1, dur);
	ts->fault_start = 0;
}

/* Time spent in a nested path counts there, not in the surrounding fault. */
static __always_inline void fault_nest(struct thread_state *ts, __u64 ns)
{
	if (ts->fault_start)
		ts->fault_nested += ns;
}

/* ---- page faults ---- */

#define PF_PROT 0x1
#define PF_WRITE 0x2
#define VM_SHARED_FLAG 0x8

struct vma_info {
	bool file;
	bool shared;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_info *vi = data;

	vi->file = vma->vm_file != NULL;
	vi->shared = (vma->vm_flags & VM_SHARED_FLAG) != 0;
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(handle_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_info vi = {};
	struct thread_state *ts;
	bool write = error_code & PF_WRITE, prot = error_code & PF_PROT;
	__u32 cls;

	ts = current_thread(true);
	if (!ts)
		return 0;
	fault_finish(ts);

	if (bpf_find_vma(task, address, vma_cb, &vi, 0)) {
		__sync_fetch_and_add(&unclassified_faults, 1);
		return 0;
	}
	if (vi.file && !(write && !vi.shared))
		cls = ARGUS_CLS_FILE_CACHE;
	else if (write && (prot || vi.file))
		cls = ARGUS_CLS_ANON_COW; /* write to a present read-only or private file page */
	else if (!write && !prot)
		cls = ARGUS_CLS_ANON_ZERO;
	else
		cls = ARGUS_CLS_ANON_MINOR;

	ts->fault_start = bpf_ktime_get_ns();
	ts->fault_end = ts->fault_start;
	ts->fault_nested = 0;
	ts->fault_class = cls;
	ts->fault_flags = 0;
	return 0;
}

/* The fault mapped its page(s): RSS counters move at the end of the fault path. */
SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	struct thread_state *ts = current_thread(false);

	if (!ts || !ts->fault_start)
		return 0;
	if (mm != bpf_get_current_task_btf()->mm)
		return 0;
	ts->fault_end = bpf_ktime_get_ns();
	ts->fault_flags |= F_RSS_SEEN;
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
	ts = current_thread(false);
	if (ts && ts->fault_start && ts->fault_class == ARGUS_CLS_ANON_MINOR)
		ts->fault_class = ARGUS_CLS_ANON_THP;
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(handle_mm_filemap_add_to_page_cache, struct folio *folio)
{
	struct thread_state *ts = current_thread(false);

	if (ts && ts->fault_start && ts->fault_class == ARGUS_CLS_FILE_CACHE)
		ts->fault_class = ARGUS_CLS_FILE_MAJOR;
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
static __always_inline void io_wait_done(struct thread_state *ts, __u64 t0, __u64 t1)
{
	__u64 q = 0;

	if (t1 <= t0)
		return;
	if (ts->rq_insert && ts->rq_issue > ts->rq_insert)
		q = overlap(t0, t1, ts->rq_insert, ts->rq_issue);
	if (q)
		account(ARGUS_CLS_BLOCK_QUEUE, 0, q);
	account(ARGUS_CLS_BLOCK_DEVICE, 0, t1 - t0 - q);
}

static __always_inline void mark_runnable(struct task_struct *p)
{
	struct thread_state *ts;

	if (!task_is_target(p))
		return;
	ts = thread_get(p->pid, true);
	if (ts && !ts->runq_start)
		ts->runq_start = bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_sched_wakeup, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_sched_wakeup_new, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *ts;

	if (task_is_target(prev)) {
		ts = thread_get(prev->pid, true);
		if (ts) {
			if (preempt || prev_state == 0) {
				ts->runq_start = now;
			} else {
				ts->runq_start = 0;
				ts->block_start = now;
				if (!ts->fault_start &&
				    BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
					ts->io_block_start = now;
				if (ts->fault_start) {
					ts->fault_flags |= F_SLEPT;
					/* a file fault that sleeps waits for its page to be read */
					if (ts->fault_class == ARGUS_CLS_FILE_CACHE)
						ts->fault_class = ARGUS_CLS_FILE_MAJOR;
				}
			}
		}
	}
	if (task_is_target(next)) {
		ts = thread_get(next->pid, false);
		if (ts) {
			if (ts->runq_start && now > ts->runq_start) {
				__u64 wait = now - ts->runq_start;

				account(ARGUS_CLS_RUNQ_WAIT, 1, wait);
				fault_nest(ts, wait);
			}
			ts->runq_start = 0;
			if (ts->block_start) {
				/* blocked inside a fault: the fault lasted at least until now */
				if (ts->fault_start)
					ts->fault_end = now;
				ts->block_start = 0;
			}
			if (ts->io_block_start) {
				io_wait_done(ts, ts->io_block_start, now);
				ts->io_block_start = 0;
			}
		}
	}
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(handle_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	if (task_is_target(p))
		account(ARGUS_CLS_MIGRATE, 1, 0);
	return 0;
}

/* Target tracking: always loaded. Children of target processes are targets. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = child->tgid;
	__u8 one = 1;

	if (!task_is_target(parent))
		return 0;
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	account(ARGUS_CLS_FORK, 1, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit, struct task_struct *p, bool group_dead)
{
	__u32 tid = p->pid;
	struct thread_state *ts;

	if (!task_is_target(p))
		return 0;
	ts = thread_get(tid, false);
	if (ts) {
		fault_finish(ts);
		bpf_map_delete_elem(&threads, &tid);
	}
	return 0;
}

/* ---- syscalls: end of a fault (the thread is back in user space), futex waits ---- */

#define NR_futex 202
#define NR_futex_waitv 449
#define NR_futex_wait 455

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct thread_state *ts = current_thread(false);

	if (!ts) {
		if (id != NR_futex && id != NR_futex_waitv && id != NR_futex_wait)
			return 0;
		ts = current_thread(true);
		if (!ts)
			return 0;
	}
	fault_finish(ts);
	if (id == NR_futex || id == NR_futex_waitv || id == NR_futex_wait)
		ts->futex_start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct thread_state *ts = current_thread(false);
	__u64 now;

	if (!ts || !ts->futex_start)
		return 0;
	now = bpf_ktime_get_ns();
	account(ARGUS_CLS_FUTEX, 1, now - ts->futex_start);
	ts->futex_start = 0;
	return 0;
}

/* ---- memory pressure ---- */

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(handle_mm_vmscan_direct_reclaim_begin, int order, gfp_t gfp)
{
	struct thread_state *ts = current_thread(true);

	if (ts)
		ts->reclaim_start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(handle_mm_vmscan_direct_reclaim_end, unsigned long nr_reclaimed)
{
	struct thread_state *ts = current_thread(false);
	__u64 dt;

	if (!ts || !ts->reclaim_start)
		return 0;
	dt = bpf_ktime_get_ns() - ts->reclaim_start;
	ts->reclaim_start = 0;
	account(ARGUS_CLS_DIRECT_RECLAIM, 1, dt);
	fault_nest(ts, dt);
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(handle_mm_compaction_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync)
{
	struct thread_state *ts = current_thread(true);

	if (ts)
		ts->compact_start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(handle_mm_compaction_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync, int status)
{
	struct thread_state *ts = current_thread(false);
	__u64 dt;

	if (!ts || !ts->compact_start)
		return 0;
	dt = bpf_ktime_get_ns() - ts->compact_start;
	ts->compact_start = 0;
	account(ARGUS_CLS_COMPACTION, 1, dt);
	fault_nest(ts, dt);
	return 0;
}

SEC("tp_btf/mm_vmscan_wakeup_kswapd")
int BPF_PROG(handle_mm_vmscan_wakeup_kswapd, int nid, int zid, int order, gfp_t gfp)
{
	if (current_is_target())
		account(ARGUS_CLS_KSWAPD, 1, 0);
	return 0;
}

/* ---- block I/O: requests the target submitted ---- */

SEC("tp_btf/block_rq_insert")
int BPF_PROG(handle_block_rq_insert, struct request *rq)
{
	struct request_state rs = {};
	__u64 key = (__u64)rq;

	if (!current_is_target())
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
	if (!current_is_target())
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
	struct thread_state *ts;

	if (!rs)
		return 0;
	account(ARGUS_CLS_BLOCK_DEVICE, 1, 0);
	ts = thread_get(rs->tid, false);
	if (ts) {
		ts->rq_insert = rs->insert_ts;
		ts->rq_issue = rs->issue_ts;
		ts->rq_complete = now;
	}
	bpf_map_delete_elem(&requests, &key);
	return 0;
}

/* ---- mmap_lock ---- */

SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(handle_mmap_lock_start_locking, struct mm_struct *mm, bool write)
{
	struct thread_state *ts = current_thread(true);

	if (ts)
		ts->lock_start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(handle_mmap_lock_acquire_returned, struct mm_struct *mm, bool write, bool success)
{
	struct thread_state *ts = current_thread(false);
	__u64 dt;

	if (!ts || !ts->lock_start)
		return 0;
	dt = bpf_ktime_get_ns() - ts->lock_start;
	ts->lock_start = 0;
	account(ARGUS_CLS_MMAP_LOCK, 1, dt);
	fault_nest(ts, dt);
	return 0;
}

/* ---- TLB shootdowns that reach or come from the target ---- */

SEC("tp_btf/tlb_flush")
int BPF_PROG(handle_tlb_flush, int reason, unsigned long pages)
{
	if (reason != TLB_REMOTE_SHOOTDOWN && reason != TLB_REMOTE_SEND_IPI)
		return 0;
	if (current_is_target())
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

	if (!current_is_target())
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

	if (current_is_target())
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
