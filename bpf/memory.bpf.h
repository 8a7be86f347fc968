/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Memory pressure (kernel_memory_pressure): direct reclaim, compaction,
 * kswapd wakeups; nested in a fault, their time is taken out of it.
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_MEMORY_BPF_H
#define ARGUS_MEMORY_BPF_H

/* ---- memory pressure ---- */

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(handle_mm_vmscan_direct_reclaim_begin, int order, gfp_t gfp)
{
	struct thread_state *ts = current_state();

	if (ts)
		span_begin(ts, &ts->mem.reclaim);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(handle_mm_vmscan_direct_reclaim_end, unsigned long nr_reclaimed)
{
	struct thread_state *ts = current_state();
	__u64 dt, since;

	if (!ts || !ts->mem.reclaim.start)
		return 0;
	since = ts->mem.reclaim.start;
	dt = span_end(ts, &ts->mem.reclaim, bpf_ktime_get_ns());
	account_thread(ts, ARGUS_CLS_DIRECT_RECLAIM, 1, dt);
	fault_nest(ts, bpf_get_current_task_btf(), dt, since);
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(handle_mm_compaction_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync)
{
	struct thread_state *ts = current_state();

	if (ts)
		span_begin(ts, &ts->mem.compact);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(handle_mm_compaction_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, bool sync, int status)
{
	struct thread_state *ts = current_state();
	__u64 dt, since;

	if (!ts || !ts->mem.compact.start)
		return 0;
	since = ts->mem.compact.start;
	dt = span_end(ts, &ts->mem.compact, bpf_ktime_get_ns());
	account_thread(ts, ARGUS_CLS_COMPACTION, 1, dt);
	fault_nest(ts, bpf_get_current_task_btf(), dt, since);
	return 0;
}

SEC("tp_btf/mm_vmscan_wakeup_kswapd")
int BPF_PROG(handle_mm_vmscan_wakeup_kswapd, int nid, int zid, int order, gfp_t gfp)
{
	if (current_state())
		account(ARGUS_CLS_KSWAPD, 1, 0);
	return 0;
}

#endif /* ARGUS_MEMORY_BPF_H */
