/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Function backends (fentry/fexit, kprobe/kretprobe): one attachment per
 * kernel function, its calls and latency.
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_FUNCTIONS_BPF_H
#define ARGUS_FUNCTIONS_BPF_H

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

#endif /* ARGUS_FUNCTIONS_BPF_H */
