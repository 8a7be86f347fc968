/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Process ids as argusd sees them. argusd names its target by the pid it
 * knows, a number in its own PID namespace; the kernel's task->tgid is the
 * number in the initial namespace. When argusd runs in a container the two
 * differ, so the probes translate: a task's thread-group id in the
 * namespace whose inode is `inum`, found among the levels of the task's pid
 * (inum 0: argusd runs in the initial namespace and task->tgid is already
 * right). A task outside that namespace has no number there: 0, never a
 * target.
 */
#ifndef ARGUS_PIDNS_H
#define ARGUS_PIDNS_H

/* Namespace nesting followed; deeper containers are not seen. */
#define ARGUS_PIDNS_LEVELS 8

static __always_inline __u32 argus_tgid_in_ns(struct task_struct *t, __u64 inum)
{
	struct pid *pid;
	unsigned int level, i;

	if (!inum)
		return BPF_CORE_READ(t, tgid);
	pid = BPF_CORE_READ(t, group_leader, thread_pid);
	if (!pid)
		return 0;
	level = BPF_CORE_READ(pid, level);
#pragma unroll
	for (i = 0; i < ARGUS_PIDNS_LEVELS; i++) {
		struct upid up;

		if (i > level)
			break;
		if (bpf_probe_read_kernel(&up, sizeof(up), &pid->numbers[i]))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == inum)
			return up.nr;
	}
	return 0;
}

#endif
