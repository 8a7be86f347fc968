/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Block I/O (kernel_block_io): the phases of the requests the target
 * submitted; the scheduler charges iowait time to them (io_wait_done()).
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_BLOCK_BPF_H
#define ARGUS_BLOCK_BPF_H

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

#endif /* ARGUS_BLOCK_BPF_H */
