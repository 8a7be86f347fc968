/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Syscalls: the end of a fault (the thread is back in the kernel), futex
 * waits, process creation, and calls of one kind (the class table of
 * paths.h: on a pipe, a stream or datagram socket, waits for events or
 * connections, file lock waits), by syscall number and descriptor type.
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
#define NR_poll 7
#define NR_select 23
#define NR_accept 43
#define NR_fcntl 72
#define NR_flock 73
#define NR_epoll_wait 232
#define NR_pselect6 270
#define NR_ppoll 271
#define NR_epoll_pwait 281
#define NR_accept4 288
#define NR_epoll_pwait2 441

#define F_SETLKW_CMD 7	    /* F_SETLKW (and F_SETLKW64 on 64-bit) */
#define F_OFD_SETLKW_CMD 38 /* F_OFD_SETLKW */
#define LOCK_SH_FLAG 1	    /* flock's LOCK_SH */
#define LOCK_EX_FLAG 2	    /* flock's LOCK_EX */
#define LOCK_NB_FLAG 4	    /* flock's LOCK_NB */
#define SOCK_STREAM_TYPE 1
#define SOCK_SEQPACKET_TYPE 5

#define FILE_TYPE_MASK 0170000 /* S_IFMT */

/*
 * The type of the file behind the current task's descriptor fd, as the
 * class table's file type column has it (ARGUS_FTYPE_*: the S_IFMT bits,
 * a socket's by its kind); 0 when there is none.
 */
static __always_inline __u32 fd_file_type(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;
	struct socket *sock;
	__u32 type;
	short kind;

	if (fd < 0 || !fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) < 0 || !f)
		return 0;
	type = BPF_CORE_READ(f, f_inode, i_mode) & FILE_TYPE_MASK;
	if (type != (ARGUS_FTYPE_STREAM & FILE_TYPE_MASK))
		return type;
	/* a socket file's private data is its struct socket */
	sock = (struct socket *)BPF_CORE_READ(f, private_data);
	kind = sock ? BPF_CORE_READ(sock, type) : 0;
	return kind == SOCK_STREAM_TYPE || kind == SOCK_SEQPACKET_TYPE ? ARGUS_FTYPE_STREAM
								       : ARGUS_FTYPE_DGRAM;
}

/* The group of a system call (enum argus_calls), by its number and, for locks, its arguments. */
static __always_inline __u32 call_group(long id, struct pt_regs *regs)
{
	switch (id) {
	case NR_read:
	case NR_readv:
		return ARGUS_CALLS_READ;
	case NR_write:
	case NR_writev:
		return ARGUS_CALLS_WRITE;
	case NR_recvfrom:
	case NR_recvmsg:
	case NR_recvmmsg:
		return ARGUS_CALLS_RECV;
	case NR_sendto:
	case NR_sendmsg:
	case NR_sendmmsg:
		return ARGUS_CALLS_SEND;
	case NR_epoll_wait:
	case NR_epoll_pwait:
	case NR_epoll_pwait2:
	case NR_poll:
	case NR_ppoll:
	case NR_select:
	case NR_pselect6:
	case NR_accept:
	case NR_accept4:
		return ARGUS_CALLS_POLL;
	case NR_flock: {
		long op = PT_REGS_PARM2_CORE(regs);

		/* taking a lock that may wait; not a release, not a try */
		return (op & (LOCK_SH_FLAG | LOCK_EX_FLAG)) && !(op & LOCK_NB_FLAG) ? ARGUS_CALLS_LOCK
										  : 0;
	}
	case NR_fcntl: {
		long cmd = PT_REGS_PARM2_CORE(regs);

		return cmd == F_SETLKW_CMD || cmd == F_OFD_SETLKW_CMD ? ARGUS_CALLS_LOCK : 0;
	}
	}
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
	__u32 group = call_group(id, regs), type = 0;

	if (!group)
		return ARGUS_CLS_MAX;
	if (group & ARGUS_CALLS_ON_FD)
		type = fd_file_type(PT_REGS_PARM1_CORE(regs));
#define FILE_CALL_ROW(id, name, companions, with, ftype, calls)                                    \
	if (ARGUS_CALLS_##calls != ARGUS_CALLS_NONE && (group & ARGUS_CALLS_##calls) &&            \
	    (ARGUS_FTYPE_##ftype == ARGUS_FTYPE_ANY || type == ARGUS_FTYPE_##ftype))               \
		return ARGUS_CLS_##id;
	ARGUS_CLASSES(FILE_CALL_ROW)
#undef FILE_CALL_ROW
	return ARGUS_CLS_MAX;
}

/* A wait of class cls and time_ns ended: charge it to the task that woke the thread, if any. */
static __always_inline void note_waker(struct thread_state *ts, __u32 cls, __u64 time_ns)
{
	struct argus_waker_key k = {};
	struct argus_counter zero = {}, *c;

	if (!ts->waker.seen)
		return;
	ts->waker.seen = 0;
	k.tgid = ts->waker.tgid;
	k.own = ts->waker.own;
	k.cls = cls;
	__builtin_memcpy(k.comm, ts->waker.comm, sizeof(k.comm));
	c = bpf_map_lookup_elem(&wakers, &k);
	if (!c) {
		/* full: the run keeps the wakers it met first */
		bpf_map_update_elem(&wakers, &k, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&wakers, &k);
		if (!c)
			return;
	}
	__sync_fetch_and_add(&c->count, 1);
	__sync_fetch_and_add(&c->time_ns, time_ns);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct thread_state *ts = current_state();

	if (!ts)
		return 0;
	fault_finish(ts);
	ts->waker.seen = 0;
	if (id == NR_futex || id == NR_futex_waitv || id == NR_futex_wait) {
		span_begin(ts, &ts->sync.futex);
		ts->sync.futex_own = 0;
	} else if (id == NR_clone || id == NR_fork || id == NR_clone3) {
		span_begin(ts, &ts->sched.fork);
	} else {
		ts->file_call.cls = file_call_class(id, regs);
		if (ts->file_call.cls != ARGUS_CLS_MAX) {
			span_begin(ts, &ts->file_call.span);
			ts->file_call.slept0 = ts->sched.slept_total;
		}
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
	if (ts->sync.futex.start) {
		__u32 cls = ts->sync.futex_own ? ARGUS_CLS_FUTEX_OWN : ARGUS_CLS_FUTEX;
		__u64 t = span_end(ts, &ts->sync.futex, now);

		account(cls, 1, t);
		note_waker(ts, cls, t);
	}
	/* the child was counted at sched_process_fork; the parent's time in the call is here */
	if (ts->sched.fork.start)
		account(ARGUS_CLS_FORK, 0, span_end(ts, &ts->sched.fork, now));
	if (ts->file_call.span.start) {
		__u64 t = span_end(ts, &ts->file_call.span, now);

		/* the sleep in a wait for events or connections is idle, counted apart */
		if (ts->file_call.cls == ARGUS_CLS_EPOLL) {
			__u64 slept = ts->sched.slept_total - ts->file_call.slept0;

			if (slept > t)
				slept = t;
			if (slept)
				account(ARGUS_CLS_WAIT_IDLE, 1, slept);
			t -= slept;
		}
		account(ts->file_call.cls, 1, t);
		note_waker(ts, ts->file_call.cls, t);
	}
	return 0;
}

#endif /* ARGUS_SYSCALLS_BPF_H */
