// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What the scripted "good model" of tests/fake-llm.h authors: one probe
 * for the whole level, written against argus_authored.h. The fake prepends
 * "#define SLOT_<CLASS> n" (the slot of the active node covering that
 * event class, -1 when none) and "#define HOOK_<tracepoint> 1" for every
 * attach point the level allows, as a model would from the prompt.
 *
 * Semantics follow the node descriptions: a fault's time runs from the
 * fault to the last page mapped (or the wakeup after it slept), minus
 * nested runqueue, reclaim, compaction and mmap_lock waits; faults are
 * classified by what they did (the RSS counter that moved, the page-cache
 * tracepoints, a huge-page allocation, a sleep).
 */
#include "argus_authored.h"

#define F_WRITE 1u
#define F_PROT 2u
#define F_ANON 4u
#define F_FILE 8u
#define F_THP 16u
#define F_MAJOR 32u
#define F_INDEX 64u

struct tstate {
	__u64 fault_start, fault_end, nested;
	__u64 file_mapping, file_index; /* the file page the fault is for, once known */
	__u64 runq_start, io_start, futex_start, reclaim_start, compact_start, lock_start;
	__u32 flags, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct tstate);
} tstates SEC(".maps");

static __always_inline void count_into(int slot, __u64 n, __u64 ns)
{
	if (slot >= 0)
		argus_account(slot, n, ns);
}

static __always_inline struct tstate *state_of(__u32 tid, bool create)
{
	struct tstate *s = bpf_map_lookup_elem(&tstates, &tid);
	struct tstate zero = {};

	if (s || !create)
		return s;
	bpf_map_update_elem(&tstates, &tid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&tstates, &tid);
}

static __always_inline struct tstate *current_state(bool create)
{
	if (!argus_current_is_target())
		return NULL;
	return state_of((__u32)bpf_get_current_pid_tgid(), create);
}

static __always_inline int fault_slot(__u32 f)
{
	bool w = f & F_WRITE, p = f & F_PROT;

	if (w && (f & F_ANON) && (p || (f & F_FILE)))
		return SLOT_ANON_COW;
	if (w && p)
		return SLOT_ANON_COW;
	if (f & F_ANON)
		return (f & F_THP) ? SLOT_ANON_THP : SLOT_ANON_MINOR;
	if (f & F_FILE)
		return (f & F_MAJOR) ? SLOT_FILE_MAJOR : SLOT_FILE_CACHE;
	if (!w && !p)
		return SLOT_ANON_ZERO;
	return -1;
}

static __always_inline void fault_done(struct tstate *s)
{
	__u64 d = 0;

	if (!s->fault_start)
		return;
	if (s->fault_end > s->fault_start) {
		d = s->fault_end - s->fault_start;
		d = d > s->nested ? d - s->nested : 0;
	}
	count_into(fault_slot(s->flags), 1, d);
	s->fault_start = 0;
}

static __always_inline void nest(struct tstate *s, __u64 ns)
{
	if (s->fault_start)
		s->nested += ns;
}

#ifdef HOOK_page_fault_user
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	struct tstate *s = current_state(true);

	if (!s)
		return 0;
	fault_done(s);
	s->fault_start = bpf_ktime_get_ns();
	s->fault_end = s->fault_start;
	s->nested = 0;
	s->flags = ((error_code & 2) ? F_WRITE : 0) | ((error_code & 1) ? F_PROT : 0);
	return 0;
}
#endif

#ifdef HOOK_rss_stat
SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss, struct mm_struct *mm, int member)
{
	struct tstate *s = current_state(false);

	/*
	 * The RSS counter of the faulting thread's own mm moves inside its
	 * fault; the probe cannot tell another mm apart (no task pointer of
	 * the running thread), so any RSS change during the fault counts.
	 */
	if (!s || !s->fault_start)
		return 0;
	s->fault_end = bpf_ktime_get_ns();
	if (member == MM_ANONPAGES)
		s->flags |= F_ANON;
	else if (member == MM_FILEPAGES || member == MM_SHMEMPAGES)
		s->flags |= F_FILE;
	return 0;
}
#endif

#ifdef HOOK_mm_page_alloc
SEC("tp_btf/mm_page_alloc")
int BPF_PROG(on_alloc, struct page *page, unsigned int order, gfp_t gfp, int migratetype)
{
	struct tstate *s;

	if (order < 9)
		return 0;
	s = current_state(false);
	if (s && s->fault_start)
		s->flags |= F_THP;
	return 0;
}
#endif

static __always_inline void file_flag(__u32 flag)
{
	struct tstate *s = current_state(false);

	if (s && s->fault_start)
		s->flags |= flag;
}

/*
 * A folio that went into the page cache for the fault's own page (at or
 * before it) means the fault read it; one after it is readahead for later
 * faults, which this one did not wait for.
 */
#ifdef HOOK_mm_filemap_add_to_page_cache
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_cache_add, struct folio *folio)
{
	struct tstate *s = current_state(false);

	if (!s || !s->fault_start)
		return 0;
	if ((s->flags & F_INDEX) &&
	    ((__u64)folio->mapping != s->file_mapping || folio->index > s->file_index))
		return 0;
	s->flags |= F_FILE | F_MAJOR;
	return 0;
}
#endif

#ifdef HOOK_mm_filemap_fault
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(on_filemap_fault, struct address_space *mapping, unsigned long index)
{
	struct tstate *s = current_state(false);

	if (!s || !s->fault_start)
		return 0;
	s->flags |= F_FILE | F_INDEX;
	s->file_mapping = (__u64)mapping;
	s->file_index = index;
	return 0;
}
#endif

#ifdef HOOK_mm_filemap_map_pages
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(on_map_pages, struct address_space *mapping, unsigned long start, unsigned long last)
{
	file_flag(F_FILE);
	return 0;
}
#endif

static __always_inline void runnable(struct task_struct *p)
{
	struct tstate *s;

	if (!argus_task_is_target(p))
		return;
	s = state_of(p->pid, true);
	if (s && !s->runq_start)
		s->runq_start = bpf_ktime_get_ns();
}

#ifdef HOOK_sched_wakeup
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	runnable(p);
	return 0;
}
#endif

#ifdef HOOK_sched_wakeup_new
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	runnable(p);
	return 0;
}
#endif

#ifdef HOOK_sched_switch
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct tstate *s;

	if (argus_task_is_target(prev) && (s = state_of(prev->pid, true))) {
		if (preempt || prev_state == 0) {
			s->runq_start = now;
		} else {
			s->runq_start = 0;
			if (s->fault_start)
				s->flags |= F_MAJOR; /* a fault that sleeps waits for its page */
			else if (BPF_CORE_READ_BITFIELD(prev, in_iowait))
				s->io_start = now;
		}
	}
	if (argus_task_is_target(next) && (s = state_of(next->pid, false))) {
		if (s->runq_start && now > s->runq_start) {
			count_into(SLOT_RUNQ_WAIT, 1, now - s->runq_start);
			nest(s, now - s->runq_start);
		} else if (s->fault_start) {
			s->fault_end = now; /* woke up inside the fault */
		}
		s->runq_start = 0;
		if (s->io_start && now > s->io_start)
			count_into(SLOT_BLOCK_DEVICE, 0, now - s->io_start);
		s->io_start = 0;
	}
	return 0;
}
#endif

#ifdef HOOK_sched_migrate_task
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
	if (argus_task_is_target(p))
		count_into(SLOT_MIGRATE, 1, 0);
	return 0;
}
#endif

#ifdef HOOK_sched_process_fork
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	if (argus_task_is_target(parent))
		count_into(SLOT_FORK, 1, 0);
	return 0;
}
#endif

#ifdef HOOK_sched_process_exit
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	__u32 tid = p->pid;
	struct tstate *s;

	if (!argus_task_is_target(p))
		return 0;
	s = state_of(tid, false);
	if (s) {
		fault_done(s);
		bpf_map_delete_elem(&tstates, &tid);
	}
	return 0;
}
#endif

#ifdef HOOK_sys_enter
SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	bool futex = id == 202 || id == 449 || id == 455;
	struct tstate *s = current_state(futex);

	if (!s)
		return 0;
	fault_done(s);
	if (futex)
		s->futex_start = bpf_ktime_get_ns();
	return 0;
}
#endif

#ifdef HOOK_sys_exit
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct tstate *s = current_state(false);

	if (!s || !s->futex_start)
		return 0;
	count_into(SLOT_FUTEX, 1, bpf_ktime_get_ns() - s->futex_start);
	s->futex_start = 0;
	return 0;
}
#endif

#ifdef HOOK_mm_vmscan_direct_reclaim_begin
SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(on_reclaim_begin, int order, gfp_t gfp)
{
	struct tstate *s = current_state(true);

	if (s)
		s->reclaim_start = bpf_ktime_get_ns();
	return 0;
}
#endif

#ifdef HOOK_mm_vmscan_direct_reclaim_end
SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(on_reclaim_end, unsigned long nr_reclaimed)
{
	struct tstate *s = current_state(false);
	__u64 d;

	if (!s || !s->reclaim_start)
		return 0;
	d = bpf_ktime_get_ns() - s->reclaim_start;
	s->reclaim_start = 0;
	count_into(SLOT_DIRECT_RECLAIM, 1, d);
	nest(s, d);
	return 0;
}
#endif

#ifdef HOOK_mm_compaction_begin
SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(on_compact_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync)
{
	struct tstate *s = current_state(true);

	if (s)
		s->compact_start = bpf_ktime_get_ns();
	return 0;
}
#endif

#ifdef HOOK_mm_compaction_end
SEC("tp_btf/mm_compaction_end")
int BPF_PROG(on_compact_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync, int status)
{
	struct tstate *s = current_state(false);
	__u64 d;

	if (!s || !s->compact_start)
		return 0;
	d = bpf_ktime_get_ns() - s->compact_start;
	s->compact_start = 0;
	count_into(SLOT_COMPACTION, 1, d);
	nest(s, d);
	return 0;
}
#endif

#ifdef HOOK_mm_vmscan_wakeup_kswapd
SEC("tp_btf/mm_vmscan_wakeup_kswapd")
int BPF_PROG(on_kswapd, int nid, int zid, int order, gfp_t gfp)
{
	if (argus_current_is_target())
		count_into(SLOT_KSWAPD, 1, 0);
	return 0;
}
#endif

#ifdef HOOK_mmap_lock_start_locking
SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(on_lock_start, struct mm_struct *mm, bool write)
{
	struct tstate *s = current_state(true);

	if (s)
		s->lock_start = bpf_ktime_get_ns();
	return 0;
}
#endif

#ifdef HOOK_mmap_lock_acquire_returned
SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(on_lock_acquired, struct mm_struct *mm, bool write, bool success)
{
	struct tstate *s = current_state(false);
	__u64 d;

	if (!s || !s->lock_start)
		return 0;
	d = bpf_ktime_get_ns() - s->lock_start;
	s->lock_start = 0;
	count_into(SLOT_MMAP_LOCK, 1, d);
	nest(s, d);
	return 0;
}
#endif

#ifdef HOOK_block_rq_issue
SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_rq_issue, struct request *rq)
{
	if (argus_current_is_target())
		count_into(SLOT_BLOCK_QUEUE, 1, 0);
	return 0;
}
#endif

#ifdef HOOK_tlb_flush
SEC("tp_btf/tlb_flush")
int BPF_PROG(on_tlb_flush, int reason, unsigned long pages)
{
	if ((reason == TLB_REMOTE_SHOOTDOWN || reason == TLB_REMOTE_SEND_IPI) &&
	    argus_current_is_target())
		count_into(SLOT_TLB_SHOOTDOWN, 1, 0);
	return 0;
}
#endif
