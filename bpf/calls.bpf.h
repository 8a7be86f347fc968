/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * System calls: what a call is to the probe, however the probe learns that
 * a thread is in one (the calls' events, syscalls.bpf.h; the registers a
 * blocked call saved, call_at_switch and vfs.bpf.h): its role by its
 * number (ARGUS_SYSCALLS: the loader gives each number its role), the type
 * of the file behind its descriptor, the class its time counts in, where
 * it begins and ends (a fault before it is over: the thread is back in the
 * kernel), and the note of who ended a wait in it (the causal chain).
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_CALLS_BPF_H
#define ARGUS_CALLS_BPF_H

/* The role of each system call by its number on this architecture (the loader fills it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ARGUS_SYSCALL_NR_MAX);
	__type(key, __u32);
	__type(value, __u8);
} syscall_roles SEC(".maps");

static __always_inline __u32 syscall_role(long id)
{
	__u32 k = (__u32)id;
	__u8 *role;

	if (id < 0 || id >= ARGUS_SYSCALL_NR_MAX)
		return ARGUS_SYS_NONE;
	role = bpf_map_lookup_elem(&syscall_roles, &k);
	return role ? *role : ARGUS_SYS_NONE;
}

#define F_SETLKW_CMD 7	    /* F_SETLKW (and F_SETLKW64 on 64-bit) */
#define F_OFD_SETLKW_CMD 38 /* F_OFD_SETLKW */
#define LOCK_SH_FLAG 1	    /* flock's LOCK_SH */
#define LOCK_EX_FLAG 2	    /* flock's LOCK_EX */
#define LOCK_NB_FLAG 4	    /* flock's LOCK_NB */
#define SOCK_STREAM_TYPE 1
#define SOCK_SEQPACKET_TYPE 5

#define FILE_TYPE_MASK 0170000 /* S_IFMT */

/* Task task's open file behind descriptor fd; NULL when there is none. */
static __always_inline struct file *task_fd_file(struct task_struct *task, long fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;

	if (fd < 0 || !fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) < 0)
		return NULL;
	return f;
}

/* The current task's open file behind descriptor fd; NULL when there is none. */
static __always_inline struct file *fd_file(long fd)
{
	return task_fd_file(bpf_get_current_task_btf(), fd);
}

/*
 * The type of the file behind task's descriptor fd, as the class table's
 * file type column has it (ARGUS_FTYPE_*: the S_IFMT bits, a socket's by
 * its kind); 0 when there is none.
 */
static __always_inline __u32 fd_file_type(struct task_struct *task, long fd)
{
	struct file *f = task_fd_file(task, fd);
	struct socket *sock;
	__u32 type;
	short kind;

	if (!f)
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

/*
 * The group of a system call of this role (enum argus_calls); for locks, by
 * its second argument (flock's operation, fcntl's command).
 */
static __always_inline __u32 call_group(__u32 role, long arg1)
{
	switch (role) {
	case ARGUS_SYS_READ:
		return ARGUS_CALLS_READ;
	case ARGUS_SYS_WRITE:
		return ARGUS_CALLS_WRITE;
	case ARGUS_SYS_RECV:
		return ARGUS_CALLS_RECV;
	case ARGUS_SYS_SEND:
		return ARGUS_CALLS_SEND;
	case ARGUS_SYS_POLL:
	case ARGUS_SYS_POLL_FDS:
	case ARGUS_SYS_SELECT:
		return ARGUS_CALLS_POLL;
	case ARGUS_SYS_FLOCK:
		/* taking a lock that may wait; not a release, not a try */
		return (arg1 & (LOCK_SH_FLAG | LOCK_EX_FLAG)) && !(arg1 & LOCK_NB_FLAG)
			   ? ARGUS_CALLS_LOCK
			   : 0;
	case ARGUS_SYS_FCNTL:
		return arg1 == F_SETLKW_CMD || arg1 == F_OFD_SETLKW_CMD ? ARGUS_CALLS_LOCK : 0;
	}
	return 0;
}

/*
 * The class of a system call of task's whose time is spent on a file of
 * one kind (the file type and calls columns of ARGUS_CLASSES), by the call
 * and the type of its file descriptor (the first argument, arg0);
 * ARGUS_CLS_MAX for any other call.
 */
static __always_inline __u32 file_call_class(struct task_struct *task, __u32 role, long arg0,
					     long arg1)
{
	__u32 group = call_group(role, arg1), type = 0;

	if (!group)
		return ARGUS_CLS_MAX;
	if (group & ARGUS_CALLS_ON_FD)
		type = fd_file_type(task, arg0);
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
	struct argus_waker_value zero = {}, *c;
	__u64 then_ns;

	if (!ts->waker.seen)
		return;
	barrier();
	k.tgid = ts->waker.tgid;
	k.own = ts->waker.own;
	k.cls = cls;
	k.then_cls = ts->waker.then_cls;
	then_ns = ts->waker.then_ns;
	__builtin_memcpy(k.comm, ts->waker.comm, sizeof(k.comm));
	barrier();
	ts->waker.seen = 0;
	c = bpf_map_lookup_elem(&wakers, &k);
	if (!c) {
		/* full: the run keeps the wakers it met first, and sums the others' waits */
		bpf_map_update_elem(&wakers, &k, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&wakers, &k);
		if (!c) {
			__sync_fetch_and_add(&wakers_unkept, 1);
			__sync_fetch_and_add(&wakers_unkept_ns, time_ns);
			return;
		}
	}
	__sync_fetch_and_add(&c->count, 1);
	__sync_fetch_and_add(&c->time_ns, time_ns);
	__sync_fetch_and_add(&c->then_ns, then_ns);
}

#define ENOSYS_CODE 38

/* arm64's saved registers and call number, named for CO-RE (a cross build's vmlinux.h lacks them). */
struct pt_regs___argus_arm64 {
	__u64 regs[31];
	__u64 orig_x0;
	__s32 syscallno;
} __attribute__((preserve_access_index));

/*
 * The system call the task t (current, switching out) is blocked in, and
 * its first three arguments, from the user registers its entry into the
 * kernel saved (bpf_task_pt_regs), which the kernel keeps until the call
 * returns; false when it entered the kernel otherwise (a fault, an
 * interrupt) or the architecture does not say. On x86-64 an entry by the
 * syscall instruction is told from a fault's or an interrupt's by what
 * that instruction leaves: the saved cx is the return address and r11 the
 * flags, and ax holds -ENOSYS until the call returns; on arm64, by the
 * call number the entry saved (-1 for any other entry).
 */
static __always_inline bool blocked_call(struct task_struct *t, long *ret_nr, long *ret_arg0,
					 long *ret_arg1, long *ret_arg2)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	if (!regs)
		return false;
#if defined(__TARGET_ARCH_x86)
	if (BPF_CORE_READ(regs, cx) != BPF_CORE_READ(regs, ip) ||
	    BPF_CORE_READ(regs, r11) != BPF_CORE_READ(regs, flags) ||
	    (long)BPF_CORE_READ(regs, ax) != -ENOSYS_CODE)
		return false;
	*ret_nr = (long)BPF_CORE_READ(regs, orig_ax);
	*ret_arg0 = (long)BPF_CORE_READ(regs, di);
	*ret_arg1 = (long)BPF_CORE_READ(regs, si);
	*ret_arg2 = (long)BPF_CORE_READ(regs, dx);
	return *ret_nr >= 0;
#elif defined(__TARGET_ARCH_arm64)
	struct pt_regs___argus_arm64 *r = (struct pt_regs___argus_arm64 *)regs;

	*ret_nr = (long)BPF_CORE_READ(r, syscallno);
	*ret_arg0 = (long)BPF_CORE_READ(r, orig_x0);
	*ret_arg1 = (long)BPF_CORE_READ(r, regs[1]);
	*ret_arg2 = (long)BPF_CORE_READ(r, regs[2]);
	return *ret_nr >= 0;
#else
	return false;
#endif
}

/* A call on a file (file_call, its class set) begins at now: its span, its sleeps from here. */
static __always_inline void file_call_start(struct thread_state *ts, __u64 now)
{
	ts->file_call.span.start = now;
	ts->file_call.span.runq = ts->sched.runq_total;
	ts->file_call.slept0 = ts->sched.slept_total;
}

/* A futex wait begins at now: who ends it, and so its class, is learnt at its wakeup (sched_waking). */
static __always_inline void futex_wait_start(struct thread_state *ts, __u64 now)
{
	ts->sync.futex.start = now;
	ts->sync.futex.runq = ts->sched.runq_total;
	ts->sync.futex_own = 0;
	ts->sync.futex_timer = 0;
}

/*
 * The thread entered a system call of this role (syscall_role), with these
 * first two arguments: its fault is over, and a call the probe follows
 * begins. arg0 and arg1 are read only for the calls on a file.
 */
static __always_inline void call_begin(struct thread_state *ts, __u32 role, long arg0, long arg1)
{
	fault_finish(ts);
	ts->waker.seen = 0;
	if (role == ARGUS_SYS_FUTEX) {
		futex_wait_start(ts, bpf_ktime_get_ns());
	} else if (role == ARGUS_SYS_CREATE) {
		span_begin(ts, &ts->sched.fork);
	} else if (role != ARGUS_SYS_NONE) {
		ts->file_call.cls = file_call_class(bpf_get_current_task_btf(), role, arg0, arg1);
		if (ts->file_call.cls != ARGUS_CLS_MAX)
			file_call_start(ts, bpf_ktime_get_ns());
	}
}

/* The call on a file that ts is in (file_call.span, open) ends at now, and counts in its class. */
static __always_inline void file_call_end(struct thread_state *ts, __u64 now)
{
	__u64 t = span_end(ts, &ts->file_call.span, now);

	/* the sleep in a wait for events or connections is idle, counted apart */
	if (ts->file_call.cls == ARGUS_CLS_EPOLL) {
		__u64 slept = ts->sched.slept_total - ts->file_call.slept0;

		if (slept > t)
			slept = t;
		if (slept)
			account_thread(ts, ARGUS_CLS_WAIT_IDLE, 1, slept);
		t -= slept;
	}
	account_thread(ts, ts->file_call.cls, 1, t);
	note_waker(ts, ts->file_call.cls, t);
}

/* The thread leaves a system call at now: the call it was in, if the probe follows it, ends. */
static __always_inline void call_end(struct thread_state *ts, __u64 now)
{
	if (!(ts->sync.futex.start | ts->sched.fork.start | ts->file_call.span.start))
		return;
	if (ts->sync.futex.start) {
		/*
		 * A wait that its own timeout ended lasted as long as the thread
		 * chose to wait and no task kept it: idle, like the sleep in a
		 * wait for events (a timed condition wait that ran out, a thread
		 * that wakes up to poll).
		 */
		__u32 cls = ts->sync.futex_own	   ? ARGUS_CLS_FUTEX_OWN
			    : ts->sync.futex_timer ? ARGUS_CLS_WAIT_IDLE
						   : ARGUS_CLS_FUTEX;
		__u64 t = span_end(ts, &ts->sync.futex, now);

		account_thread(ts, cls, 1, t);
		note_waker(ts, cls, t);
	}
	/* the child was counted at sched_process_fork; the parent's time in the call is here */
	if (ts->sched.fork.start)
		account_thread(ts, ARGUS_CLS_FORK, 0, span_end(ts, &ts->sched.fork, now));
	if (ts->file_call.span.start)
		file_call_end(ts, now);
}

/*
 * syscall_events = none: target thread ts (current) blocks at now outside
 * every path that counts its own sleep, in a call of this role with these
 * first two arguments (blocked_call). If the probe tells such calls apart,
 * the call begins here, and ends at the wakeup (call_end, with the
 * wakeup's clock): the wait is what such a call loses, and the call is
 * counted once for each sleep. A call that does not sleep is not seen, nor
 * the parent's time in a creation. Returns whether it was such a call.
 */
static __always_inline bool call_at_switch(struct thread_state *ts, __u32 role, long arg0,
					   long arg1, __u64 now)
{
	if (role == ARGUS_SYS_NONE || role == ARGUS_SYS_CREATE)
		return false;
	call_begin(ts, role, arg0, arg1);
	/* the wait is the sleep, to the ns: it starts where the sleep does */
	if (ts->sync.futex.start)
		ts->sync.futex.start = now;
	if (ts->file_call.span.start)
		ts->file_call.span.start = now;
	return ts->sync.futex.start || ts->file_call.span.start;
}

#endif /* ARGUS_CALLS_BPF_H */
