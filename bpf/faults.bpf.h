/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Page faults and TLB shootdowns (kernel_paging): a fault is opened at
 * page_fault_user (where the kernel has none, at handle_mm_fault by
 * kprobe), marked by what it does, and closed (classified and
 * counted) once the thread has entered the kernel again: at its next fault,
 * at a system call the probe follows, at exit, or at the first event that
 * finds the thread in another entry (fault_open). Other concerns call
 * fault_open() before they mark a fault, fault_finish() (syscalls, exit),
 * fault_nest() (memory pressure, mmap_lock, runqueue waits), and
 * fault_completed() and F_SLEPT (the scheduler).
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_FAULTS_BPF_H
#define ARGUS_FAULTS_BPF_H

#define F_RSS_ANON 0x01u   /* an anonymous page was mapped (new, copied or huge) */
#define F_RSS_FILE 0x02u   /* a file or shmem page was mapped */
#define F_FILEMAP 0x04u    /* filemap_fault or fault-around ran: the page is file-backed */
#define F_SLEPT 0x08u      /* the thread blocked inside the fault, outside nested paths */
#define F_CACHE_ADD 0x10u  /* a page was inserted into the page cache: read from storage */
#define F_THP_ALLOC 0x20u  /* an order-9 allocation: a transparent huge page */
#define F_WRITE 0x40u      /* error code (or FAULT_FLAG_WRITE): write access */
#define F_PROT 0x80u       /* error code (or the write-protect path): the page was present */
#define F_END_SEEN 0x100u  /* an event marked the fault's completion (page mapped, TLB flushed, woke) */
#define F_MAJOR 0x200u	   /* the kernel called it major (VM_FAULT_MAJOR: it read or waited for I/O) */
#define F_INDEX 0x400u	   /* the file page the fault is for is known (fault.file_mapping, file_index) */
#define F_MAJOR_KNOWN 0x800u /* handle_mm_fault returned: F_MAJOR is the kernel's word on the read */

/*
 * The class of a finished fault, from what it did. A cause is named where it
 * starts: a file-backed fault that read its page from storage (a folio for
 * it went into the page cache, or the kernel called it major where its word
 * is seen) or slept for it is major, whatever page it then
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
	/* the kernel says whether the fault read its page where it can, else a folio added for it */
	bool read = f & ((f & F_MAJOR_KNOWN) ? F_MAJOR : F_CACHE_ADD);

	if (file && ((f & F_SLEPT) || read))
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
	__u64 end, dur = 0, ra = 0, ra_nested, nested;
	__u32 cls;

	if (!ts->fault.start)
		return;
	end = ts->fault.end;
	/* paths that began after its last completion (a wait on the way out) are not inside it */
	nested = ts->fault.nested - ts->fault.nested_late;
	if ((ts->fault.flags & F_END_SEEN) && end > ts->fault.start) {
		dur = end - ts->fault.start;
		if (nested > dur)
			__sync_fetch_and_add(&faults_overlapped, 1);
		dur = dur > nested ? dur - nested : 0;
	}
	cls = fault_class(ts->fault.flags);
	/*
	 * A fault that did not read its own page but put folios into the page
	 * cache started readahead for later pages: the time from that start
	 * to its end (nested paths left out) went to storage, not to the path
	 * the fault counts in.
	 */
	if (cls != ARGUS_CLS_FILE_MAJOR && cls < ARGUS_CLS_MAX && ts->fault.cache_add_at &&
	    end > ts->fault.cache_add_at) {
		ra = end - ts->fault.cache_add_at;
		ra_nested = nested > ts->fault.nested_at_add ? nested - ts->fault.nested_at_add : 0;
		ra = ra > ra_nested ? ra - ra_nested : 0;
		ra = ra < dur ? ra : dur;
		dur -= ra;
		account_thread(ts, ARGUS_CLS_FILE_MAJOR, 0, ra);
		__sync_fetch_and_add(&readahead_faults, 1);
		__sync_fetch_and_add(&readahead_ns, ra);
	}
	if (cls < ARGUS_CLS_MAX)
		account_thread(ts, cls, 1, dur);
	else
		__sync_fetch_and_add(&unclassified_faults, 1);
	ts->fault.start = 0;
}

/*
 * The user registers saved at the entry into the kernel that regs belongs
 * to: the instruction and stack pointers, and on x86 the error code or
 * system call number the entry saved, which tells a fault from an
 * interrupt that arrives at the faulting instruction when the fault returns
 * (other architectures: the two pointers alone).
 */
static __always_inline __u64 entry_code_of(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#else
	return 0;
#endif
}

/*
 * Is the thread t (its state ts) still inside its fault? A fault ends when
 * its thread returns to user space, and no event marks that return: the
 * thread's next entry into the kernel saves other user registers than the
 * fault's (a system call returns past its instruction, an interrupt or
 * another exception saves another code), so an event that finds other
 * registers closes the fault before it marks anything. Without this, a
 * later system call's page-cache insertions, sleeps or mappings would be
 * taken for the fault's. Only the target's events with a fault open ask.
 */
static __always_inline bool fault_open(struct thread_state *ts, struct task_struct *t)
{
	struct pt_regs *regs;

	if (!ts->fault.start)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (PT_REGS_IP(regs) == ts->fault.entry_ip && PT_REGS_SP(regs) == ts->fault.entry_sp &&
	    entry_code_of(regs) == ts->fault.entry_code)
		return true;
	fault_finish(ts);
	return false;
}

/* The current thread's fault, if it is still inside it. */
static __always_inline bool fault_open_here(struct thread_state *ts)
{
	return fault_open(ts, bpf_get_current_task_btf());
}

/*
 * Time spent in a nested path (one that began at since) counts there, not in
 * the surrounding fault. A path that began after the fault's last
 * completion (a thread preempted on its way back to user space, its
 * registers still the fault's) is outside the fault's span, unless a later
 * completion takes it in (fault_completed).
 */
static __always_inline void fault_nest(struct thread_state *ts, struct task_struct *t, __u64 ns,
				       __u64 since)
{
	if (!fault_open(ts, t))
		return;
	ts->fault.nested += ns;
	if (since >= ts->fault.end)
		ts->fault.nested_late += ns;
}

/* An event marked the open fault's completion at now: every nested path so far is inside it. */
static __always_inline void fault_completed(struct thread_state *ts, __u64 now)
{
	ts->fault.end = now;
	ts->fault.flags |= F_END_SEEN;
	ts->fault.nested_late = 0;
}

/* Mark the current thread's fault, if it is still inside it, with flags. */
static __always_inline void mark_fault(__u32 flags)
{
	struct thread_state *ts = current_state();

	if (ts && fault_open_here(ts))
		ts->fault.flags |= flags;
}

/* ---- page faults ---- */

/*
 * page_fault_user's error code bits, x86's (the tracepoint is x86's alone),
 * taken from the running kernel's BTF by CO-RE: the flavour below only
 * names them, and builds for other architectures, whose vmlinux.h lacks
 * the kernel's enum, compile as well (the program is not loaded there).
 */
enum x86_pf_error_code___argus {
	X86_PF_PROT___argus = 1,
	X86_PF_WRITE___argus = 2,
};
#define PF_PROT bpf_core_enum_value(enum x86_pf_error_code___argus, X86_PF_PROT___argus)
#define PF_WRITE bpf_core_enum_value(enum x86_pf_error_code___argus, X86_PF_WRITE___argus)

/*
 * Open a fault for the thread (its state ts) with its first flags: the
 * thread's previous fault is over, since it entered the kernel again, and
 * regs are the user registers this entry saved (fault_open compares them).
 */
static __always_inline void fault_begin(struct thread_state *ts, struct pt_regs *regs,
					__u32 flags)
{
	__u64 now = bpf_ktime_get_ns();

	fault_finish(ts);
	ts->fault.start = now;
	ts->fault.end = now;
	ts->fault.nested = 0;
	ts->fault.nested_late = 0;
	ts->fault.cache_add_at = 0;
	ts->fault.entry_ip = PT_REGS_IP(regs);
	ts->fault.entry_sp = PT_REGS_SP(regs);
	ts->fault.entry_code = entry_code_of(regs);
	ts->fault.flags = flags;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(handle_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct thread_state *ts = current_state();

	if (!ts)
		return 0;
	fault_begin(ts, regs,
		    ((error_code & PF_WRITE) ? F_WRITE : 0) | ((error_code & PF_PROT) ? F_PROT : 0));
	return 0;
}

/* The fault mapped its page(s): RSS counters move at the end of the fault path. */
SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	if (mm != bpf_get_current_task_btf()->mm)
		return 0;
	fault_completed(ts, bpf_ktime_get_ns());
	if (member == MM_ANONPAGES)
		ts->fault.flags |= F_RSS_ANON;
	else if (member == MM_FILEPAGES || member == MM_SHMEMPAGES)
		ts->fault.flags |= F_RSS_FILE;
	return 0;
}

/*
 * Kernels before 6.2 (struct task_rss_stat in their BTF) count a task's
 * RSS changes in the task and publish them to the mm every 64 faults, so
 * rss_stat fires for one fault in 65 there and cannot say which page a
 * fault mapped. On such a kernel the loader attaches this pair on
 * handle_mm_fault instead of rss_stat (daemon/probe.c), or the kprobe pair
 * below where that opens faults: the task's own
 * counters, read when the fault's handling begins and when it returns, say
 * which kind of page it mapped, as rss_stat does elsewhere, and the return
 * is the fault's completion when a counter moved. The VMA says whether the
 * fault is file-backed (6.1 has neither mm_filemap_fault nor
 * mm_filemap_map_pages), and VM_FAULT_MAJOR whether the kernel read or
 * waited for the page. A fault retried after I/O calls handle_mm_fault
 * again: its flags add up. Calls outside a user fault of the target's
 * (get_user_pages in a system call, which closed the fault at its entry)
 * find no open fault and do nothing.
 */
struct task_rss_stat___split {
	int events;
	int count[NR_MM_COUNTERS];
} __attribute__((preserve_access_index));

struct task_struct___split_rss {
	struct task_rss_stat___split rss_stat;
} __attribute__((preserve_access_index));

/* The current task's own RSS counts, on a kernel that keeps them in the task. */
static __always_inline bool task_rss_read(struct task_rss_stat___split *ret)
{
	struct task_struct___split_rss *t = (void *)bpf_get_current_task_btf();

	if (!bpf_core_field_exists(t->rss_stat))
		return false;
	return bpf_core_read(ret, sizeof(*ret), &t->rss_stat) == 0;
}

/*
 * handle_mm_fault began for the thread's open fault: a fault on a file
 * mapping is file-backed (the VMA's file), and on a kernel that splits RSS
 * counting the task's own counters are kept for the return to diff.
 */
static __always_inline void mm_fault_enter(struct thread_state *ts, bool file)
{
	struct task_rss_stat___split rss;
	int i;

	if (file)
		ts->fault.flags |= F_FILEMAP;
	if (!task_rss_read(&rss))
		return;
	ts->fault.rss_events0 = rss.events;
	for (i = 0; i < NR_MM_COUNTERS; i++)
		ts->fault.rss0[i] = rss.count[i];
}

/*
 * handle_mm_fault returned ret for the thread's open fault: on a kernel
 * that splits RSS counting, the counters that moved since it began say
 * which kind of page it mapped, and such a mapping is the fault's
 * completion; VM_FAULT_MAJOR is the kernel's word on whether it read or
 * waited for its page.
 */
static __always_inline void mm_fault_return(struct thread_state *ts, vm_fault_t ret)
{
	struct task_rss_stat___split rss;
	__u32 moved = 0;
	bool synced;
	int i;

	if (task_rss_read(&rss)) {
		/* published at the start of this call (its events past the threshold): counted from 0 */
		synced = rss.events < ts->fault.rss_events0;
		for (i = 0; i < NR_MM_COUNTERS; i++)
			if (rss.count[i] != (synced ? 0 : ts->fault.rss0[i]))
				moved |= 1u << i;
	}
	if (moved & (1u << MM_ANONPAGES))
		ts->fault.flags |= F_RSS_ANON;
	if (moved & ((1u << MM_FILEPAGES) | (1u << MM_SHMEMPAGES)))
		ts->fault.flags |= F_RSS_FILE;
	/* a page that counts was mapped: the fault's completion, as rss_stat marks it elsewhere */
	if (moved & ((1u << MM_ANONPAGES) | (1u << MM_FILEPAGES) | (1u << MM_SHMEMPAGES)))
		fault_completed(ts, bpf_ktime_get_ns());
	ts->fault.flags |= F_MAJOR_KNOWN;
	if (ret & VM_FAULT_MAJOR)
		ts->fault.flags |= F_MAJOR;
}

SEC("fentry/handle_mm_fault")
int BPF_PROG(handle_mm_fault_entry, struct vm_area_struct *vma, unsigned long address,
	     unsigned int flags)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	mm_fault_enter(ts, vma->vm_file);
	return 0;
}

SEC("fexit/handle_mm_fault")
int BPF_PROG(handle_mm_fault_exit, struct vm_area_struct *vma, unsigned long address,
	     unsigned int flags, struct pt_regs *regs, vm_fault_t ret)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	mm_fault_return(ts, ret);
	return 0;
}

/*
 * Kernels without page_fault_user (it is x86's: arm64 has none) open a
 * fault where its handling begins, at handle_mm_fault, with kprobes: on
 * Debian 12's arm64 6.1 fentry/fexit are refused (no BPF trampoline on
 * arm64 before 6.4) and kprobes are not (the loader, daemon/probe.c, and
 * resolution, daemon/probe_try.c, take this pair there). A user fault
 * (FAULT_FLAG_USER: the architecture's handler sets it for a fault from
 * user mode, as x86 traces page_fault_user for those alone) of a target
 * thread opens a fault, its entry registers those the exception saved;
 * a retry (FAULT_FLAG_TRIED: the handler calls handle_mm_fault again after
 * it returned VM_FAULT_RETRY, having dropped mmap_lock to wait for I/O)
 * with the same registers continues the fault it retries. Registers alone
 * would not tell: a loop that faults at one instruction faults with the
 * same instruction and stack pointers page after page, and outside x86
 * nothing else of the entry is compared. Then as the fentry/fexit pair:
 * file-backed, the RSS counters, VM_FAULT_MAJOR. The fault starts after
 * the handler took mmap_lock (a wait there counts in its own class, as it
 * is nested and left out of the fault on x86). A call outside a user fault
 * (get_user_pages in a system call) opens nothing, and its return finds
 * the registers of that call's entry, which close the fault (fault_open).
 */
SEC("kprobe/handle_mm_fault")
int BPF_KPROBE(handle_mm_fault_kprobe, struct vm_area_struct *vma, unsigned long address,
	       unsigned int flags)
{
	struct thread_state *ts;

	if (!(flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_USER)))
		return 0;
	ts = current_state();
	if (!ts)
		return 0;
	if (!(flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_TRIED)) ||
	    !fault_open_here(ts))
		fault_begin(ts, (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()),
			    (flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_WRITE)) ?
				    F_WRITE :
				    0);
	mm_fault_enter(ts, BPF_CORE_READ(vma, vm_file));
	return 0;
}

SEC("kretprobe/handle_mm_fault")
int BPF_KRETPROBE(handle_mm_fault_kretprobe, vm_fault_t ret)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	mm_fault_return(ts, ret);
	return 0;
}

/*
 * Where page_fault_user opens faults but the kernel splits RSS counting
 * and the backends setting leaves fentry out (or puts kprobe first): the
 * entry of handle_mm_fault keeps the counters for the kretprobe above to
 * diff, as the fentry program does; it opens nothing.
 */
SEC("kprobe/handle_mm_fault")
int BPF_KPROBE(handle_mm_fault_rss, struct vm_area_struct *vma)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	mm_fault_enter(ts, BPF_CORE_READ(vma, vm_file));
	return 0;
}

/*
 * Where faults open at handle_mm_fault, F_PROT (x86's error code: the page
 * was present) is not passed down by the handler: the write-protect path
 * says it instead. A write fault on a present page that does not allow it
 * goes through do_wp_page (a page table entry) or do_huge_pmd_wp_page (a
 * huge page's), and nothing else does, which is what the error code's bit
 * means for a write fault. wp_page_copy is where that path copies the page
 * (do_wp_page's copy-on-write, and a write over the zero page); its return
 * is the copy's completion, the new page mapped and the old mapping
 * flushed, where x86 marks it by the TLB flush inside (tlb_flush is traced
 * on x86 alone). An anonymous copy moves no RSS counter, so nothing else
 * marks it. A reuse (the page was the thread's own) copies nothing and is
 * counted without time, as on x86. Read faults on present pages (NUMA
 * hinting) are not marked: they take neither function.
 */
SEC("kprobe/do_wp_page")
int BPF_KPROBE(handle_do_wp_page)
{
	mark_fault(F_PROT);
	return 0;
}

SEC("kprobe/do_huge_pmd_wp_page")
int BPF_KPROBE(handle_do_huge_pmd_wp_page)
{
	mark_fault(F_PROT);
	return 0;
}

SEC("kretprobe/wp_page_copy")
int BPF_KRETPROBE(handle_wp_page_copy_exit)
{
	struct thread_state *ts = current_state();

	if (ts && fault_open_here(ts))
		fault_completed(ts, bpf_ktime_get_ns());
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
	if (ts && fault_open_here(ts))
		ts->fault.flags |= F_THP_ALLOC;
	return 0;
}

/*
 * A folio went into the page cache during the fault: the fault read its
 * page from storage when the folio starts at or before that page (the page
 * itself, or the window of a synchronous readahead around it). A folio
 * after it is asynchronous readahead for later faults, which this fault
 * only started and did not wait for (the kernel counts it minor too): with
 * large folios such faults are many; their time from the first folio on
 * is storage's all the same (fault_finish). Where the fault's page is not known
 * (a kernel without mm_filemap_fault, 6.1 among them), any folio
 * counts; where handle_mm_fault's return is seen (kernels before 6.2, and
 * those without page_fault_user: the pairs above), VM_FAULT_MAJOR says it
 * instead.
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(handle_mm_filemap_add_to_page_cache, struct folio *folio)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	if (!ts->fault.cache_add_at) {
		ts->fault.cache_add_at = bpf_ktime_get_ns();
		ts->fault.nested_at_add = ts->fault.nested;
	}
	if ((ts->fault.flags & F_INDEX) &&
	    ((__u64)folio->mapping != ts->fault.file_mapping || folio->index > ts->fault.file_index))
		return 0;
	ts->fault.flags |= F_CACHE_ADD;
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(handle_mm_filemap_fault, struct address_space *mapping, unsigned long index)
{
	struct thread_state *ts = current_state();

	if (!ts || !fault_open_here(ts))
		return 0;
	ts->fault.flags |= F_FILEMAP | F_INDEX;
	ts->fault.file_mapping = (__u64)mapping;
	ts->fault.file_index = index;
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(handle_mm_filemap_map_pages, struct address_space *mapping, unsigned long start,
	     unsigned long last)
{
	mark_fault(F_FILEMAP);
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
	if ((reason == TLB_LOCAL_SHOOTDOWN || reason == TLB_LOCAL_MM_SHOOTDOWN) &&
	    fault_open_here(ts))
		fault_completed(ts, bpf_ktime_get_ns());
	if (reason == TLB_REMOTE_SHOOTDOWN || reason == TLB_REMOTE_SEND_IPI)
		account(ARGUS_CLS_TLB_SHOOTDOWN, 1, 0);
	return 0;
}

#endif /* ARGUS_FAULTS_BPF_H */
