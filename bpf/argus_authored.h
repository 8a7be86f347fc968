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
 *   - `argus_pidns`: argusd's PID namespace, written by argusd after load.
 *   - argus_current_is_target(), argus_task_is_target(task),
 *     argus_account(slot, count, time_ns).
 *   - the license section (GPL: the tracing helpers need it).
 * The safety gate (daemon/gate.c) checks that these maps are exactly the
 * ones declared here, and it refuses helpers that read kernel memory or
 * hand out kernel pointers: the header itself uses none of them. A task's
 * fields are read with typed (BTF) loads from the task pointers that tp_btf
 * programs receive as arguments; the running thread is identified by
 * bpf_get_current_pid_tgid / bpf_get_ns_current_pid_tgid, never by its
 * task pointer.
 *
 * The first part (names, limits, the namespace record) is shared with user
 * space; the rest is compiled only for the BPF target.
 */
#ifndef ARGUS_AUTHORED_H
#define ARGUS_AUTHORED_H

#define ARGUS_AUTHORED_COUNTERS "counters"
#define ARGUS_AUTHORED_TARGETS "targets"
#define ARGUS_AUTHORED_FOLLOW "argus_follow_fork"
#define ARGUS_AUTHORED_PIDNS "argus_pidns"
#define ARGUS_AUTHORED_LICENSE "GPL"

/* PID namespace nesting that argus_task_is_target follows; deeper tasks are not seen. */
#define ARGUS_AUTHORED_PIDNS_LEVELS 8

/*
 * argusd's PID namespace as the nsfs file /proc/self/ns/pid names it
 * (st_dev, st_ino). ino 0: argusd runs in the initial namespace, where the
 * kernel's own numbers are argusd's.
 */
struct argus_pidns {
	unsigned long long dev;
	unsigned long long ino;
};

#if defined(__bpf__)

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "paths.h"

char _argus_license[] SEC("license") = ARGUS_AUTHORED_LICENSE;

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct argus_pidns);
} argus_pidns SEC(".maps");

static __always_inline const struct argus_pidns *argus_ns(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&argus_pidns, &zero);
}

/*
 * A task's thread-group id as argusd numbers it: task->tgid in the initial
 * namespace, else the number among the levels of its pid whose namespace is
 * argusd's (0, never a target, when it has none there). Typed loads only:
 * the loop is unrolled, so every index is a constant the verifier checks.
 */
static __always_inline __u32 argus_tgid(struct task_struct *task)
{
	const struct argus_pidns *ns = argus_ns();
	struct pid *pid;
	unsigned int level, i;

	if (!ns || !ns->ino)
		return task->tgid;
	pid = task->group_leader->thread_pid;
	if (!pid)
		return 0;
	level = pid->level;
#pragma unroll
	for (i = 0; i < ARGUS_AUTHORED_PIDNS_LEVELS; i++) {
		if (i > level)
			break;
		if (pid->numbers[i].ns->ns.inum == ns->ino)
			return pid->numbers[i].nr;
	}
	return 0;
}

/*
 * The running thread's thread-group id as argusd numbers it. Outside the
 * initial namespace the kernel answers only for threads whose own namespace
 * is argusd's (bpf_get_ns_current_pid_tgid): 0 for the others.
 */
static __always_inline __u32 argus_current_tgid(void)
{
	const struct argus_pidns *ns = argus_ns();
	struct bpf_pidns_info info = {};

	if (!ns || !ns->ino)
		return bpf_get_current_pid_tgid() >> 32;
	if (bpf_get_ns_current_pid_tgid(ns->dev, ns->ino, &info, sizeof(info)))
		return 0;
	return info.tgid;
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
	__u32 tgid = argus_current_tgid();

	return tgid && bpf_map_lookup_elem(&targets, &tgid) != NULL;
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
