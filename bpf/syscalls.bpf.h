/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Syscalls: the end of a fault (the thread is back in the kernel), futex
 * waits and process creation, by syscall number.
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_SYSCALLS_BPF_H
#define ARGUS_SYSCALLS_BPF_H

/* ---- syscalls: end of a fault (the thread is back in user space), futex waits ---- */

#define NR_futex 202
#define NR_futex_waitv 449
#define NR_futex_wait 455
#define NR_clone 56
#define NR_fork 57
#define NR_clone3 435
/* vfork is left out: its parent waits for the child's exec, which is not creation time */

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct thread_state *ts = current_state();

	if (!ts)
		return 0;
	fault_finish(ts);
	if (id == NR_futex || id == NR_futex_waitv || id == NR_futex_wait) {
		span_begin(ts, &ts->sync.futex);
		ts->sync.futex_own = 0;
	} else if (id == NR_clone || id == NR_fork || id == NR_clone3) {
		span_begin(ts, &ts->sched.fork);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct thread_state *ts = current_state();
	__u64 now;

	if (!ts || !(ts->sync.futex.start | ts->sched.fork.start))
		return 0;
	now = bpf_ktime_get_ns();
	if (ts->sync.futex.start)
		account(ts->sync.futex_own ? ARGUS_CLS_FUTEX_OWN : ARGUS_CLS_FUTEX, 1,
			span_end(ts, &ts->sync.futex, now));
	/* the child was counted at sched_process_fork; the parent's time in the call is here */
	if (ts->sched.fork.start)
		account(ARGUS_CLS_FORK, 0, span_end(ts, &ts->sched.fork, now));
	return 0;
}

#endif /* ARGUS_SYSCALLS_BPF_H */
