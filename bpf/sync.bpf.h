/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Locks (kernel_sync): mmap_lock waits; futex waits are opened and closed
 * by the syscall programs and ended by the scheduler's wakeups.
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_SYNC_BPF_H
#define ARGUS_SYNC_BPF_H

/* ---- mmap_lock ---- */

SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(handle_mmap_lock_start_locking, struct mm_struct *mm, bool write)
{
	struct thread_state *ts = current_state();

	if (ts)
		span_begin(ts, &ts->sync.lock);
	return 0;
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(handle_mmap_lock_acquire_returned, struct mm_struct *mm, bool write, bool success)
{
	struct thread_state *ts = current_state();
	__u64 dt, since;

	if (!ts || !ts->sync.lock.start)
		return 0;
	since = ts->sync.lock.start;
	dt = span_end(ts, &ts->sync.lock, bpf_ktime_get_ns());
	account_thread(ts, ARGUS_CLS_MMAP_LOCK, 1, dt);
	fault_nest(ts, bpf_get_current_task_btf(), dt, since);
	return 0;
}

#endif /* ARGUS_SYNC_BPF_H */
