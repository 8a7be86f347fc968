/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Syscalls: the end of a fault (the thread is back in the kernel), futex
 * waits, process creation, and calls on a file of one kind (the class
 * table of paths.h), by syscall number.
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
#define NR_read 0
#define NR_write 1
#define NR_readv 19
#define NR_writev 20
#define NR_sendto 44
#define NR_recvfrom 45
#define NR_sendmsg 46
#define NR_recvmsg 47
#define NR_recvmmsg 299
#define NR_sendmmsg 307

#define FILE_TYPE_MASK 0170000 /* S_IFMT */

/* The type bits of the file behind the current task's descriptor fd; 0 when there is none. */
static __always_inline __u32 fd_file_type(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;

	if (fd < 0 || !fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) < 0 || !f)
		return 0;
	return BPF_CORE_READ(f, f_inode, i_mode) & FILE_TYPE_MASK;
}

/* The group of a call on a file descriptor (enum argus_calls), 0 for any other call. */
static __always_inline __u32 fd_call_group(long id)
{
	if (id == NR_read || id == NR_write || id == NR_readv || id == NR_writev)
		return ARGUS_CALLS_RW;
	if (id == NR_sendto || id == NR_recvfrom || id == NR_sendmsg || id == NR_recvmsg ||
	    id == NR_recvmmsg || id == NR_sendmmsg)
		return ARGUS_CALLS_MSG;
	return 0;
}

/*
 * The class of a system call whose time is spent on a file of one kind
 * (the file type and calls columns of ARGUS_CLASSES), by the call and the
 * type of its file descriptor (the first argument); ARGUS_CLS_MAX for any
 * other call.
 */
static __always_inline __u32 file_call_class(long id, struct pt_regs *regs)
{
	__u32 group = fd_call_group(id), type;

	if (!group)
		return ARGUS_CLS_MAX;
	type = fd_file_type(PT_REGS_PARM1_CORE(regs));
#define FILE_CALL_ROW(id, name, companions, with, ftype, calls)                                    \
	if (ARGUS_CALLS_##calls != ARGUS_CALLS_NONE && type == ARGUS_FTYPE_##ftype &&              \
	    (group & ARGUS_CALLS_##calls))                                                         \
		return ARGUS_CLS_##id;
	ARGUS_CLASSES(FILE_CALL_ROW)
#undef FILE_CALL_ROW
	return ARGUS_CLS_MAX;
}

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
	} else {
		ts->file_call.cls = file_call_class(id, regs);
		if (ts->file_call.cls != ARGUS_CLS_MAX)
			span_begin(ts, &ts->file_call.span);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct thread_state *ts = current_state();
	__u64 now;

	if (!ts || !(ts->sync.futex.start | ts->sched.fork.start | ts->file_call.span.start))
		return 0;
	now = bpf_ktime_get_ns();
	if (ts->sync.futex.start)
		account(ts->sync.futex_own ? ARGUS_CLS_FUTEX_OWN : ARGUS_CLS_FUTEX, 1,
			span_end(ts, &ts->sync.futex, now));
	/* the child was counted at sched_process_fork; the parent's time in the call is here */
	if (ts->sched.fork.start)
		account(ARGUS_CLS_FORK, 0, span_end(ts, &ts->sched.fork, now));
	if (ts->file_call.span.start)
		account(ts->file_call.cls, 1, span_end(ts, &ts->file_call.span, now));
	return 0;
}

#endif /* ARGUS_SYSCALLS_BPF_H */
