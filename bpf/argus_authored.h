/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The contract between a probe authored by the LLM agent and argusd.
 *
 * An authored probe is one BPF C file that includes this header (and
 * nothing else but vmlinux.h and libbpf's bpf_helpers.h, bpf_tracing.h,
 * bpf_core_read.h). The header gives it:
 *   - `counters`: ARGUS_MAX_SLOTS per-CPU struct argus_counter; slot i is
 *     the i-th active node argusd listed for the level. argusd sums the CPUs
 *     and reads slot i as that node's "count" and "time_ns".
 *   - `targets`: the tgids of the target; argusd adds the root process,
 *     argus_follow_fork below adds its children.
 *   - argus_current_is_target(), argus_task_is_target(task),
 *     argus_account(slot, count, time_ns).
 *   - the license section (GPL: the tracing helpers need it).
 * The safety gate (daemon/gate.c) checks that `counters` and `targets` are
 * exactly these maps.
 *
 * The first part (names and limits) is shared with user space; the rest is
 * compiled only for the BPF target.
 */
#ifndef ARGUS_AUTHORED_H
#define ARGUS_AUTHORED_H

#define ARGUS_AUTHORED_COUNTERS "counters"
#define ARGUS_AUTHORED_TARGETS "targets"
#define ARGUS_AUTHORED_FOLLOW "argus_follow_fork"
#define ARGUS_AUTHORED_PIDNS "argus_pidns"

#if defined(__bpf__)

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "paths.h"
#include "pidns.h"

char _argus_license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ARGUS_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct argus_counter);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* argusd's PID namespace inode (0: the initial one), written by argusd after load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} argus_pidns SEC(".maps");

/* The task's thread-group id as argusd numbers it (pidns.h). */
static __always_inline __u32 argus_tgid(struct task_struct *task)
{
	__u32 zero = 0;
	__u64 *inum = bpf_map_lookup_elem(&argus_pidns, &zero);

	return argus_tgid_in_ns(task, inum ? *inum : 0);
}

/* Does this task belong to the target? */
static __always_inline bool argus_task_is_target(struct task_struct *task)
{
	__u32 tgid = argus_tgid(task);

	return tgid && bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* Does the running thread belong to the target? */
static __always_inline bool argus_current_is_target(void)
{
	return argus_task_is_target(bpf_get_current_task_btf());
}

/* Add count events and time_ns nanoseconds to a slot; out-of-range slots are ignored. */
static __always_inline void argus_account(__u32 slot, __u64 count, __u64 time_ns)
{
	struct argus_counter *c;

	if (slot >= ARGUS_MAX_SLOTS)
		return;
	c = bpf_map_lookup_elem(&counters, &slot);
	if (!c)
		return;
	c->count += count;
	c->time_ns += time_ns;
}

/* Children of target processes are targets: the probe need not follow forks itself. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(argus_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = argus_tgid(child);
	__u8 one = 1;

	if (tgid && argus_task_is_target(parent))
		bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	return 0;
}

#endif /* __bpf__ */
#endif
