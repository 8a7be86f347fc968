/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The window's edges. A target thread asleep in a call the probe tells
 * apart (a wait for events or connections, a read or write on a pipe or a
 * socket, a file lock, a futex) when the probe attaches, or still asleep in one
 * when it detaches, waits across an edge of the window: the switch and the
 * wakeup see only one end of that wait, and without these passes its time
 * inside the window would go uncounted. A server between requests sleeps
 * there, the longer the fewer requests come; a service whose backend
 * stopped answering waits there for seconds, longer than a window.
 *
 * User space reads the task iterator window_edges once right after it
 * attaches (ARGUS_EDGE_OPEN: such a wait begins at the window's start, as
 * if the switch had seen it, its class read from the call's saved
 * registers and the thread's descriptor table) and once right before it
 * detaches (ARGUS_EDGE_CLOSE: the wait so far counts in its class, a wait
 * for events' sleep as idle, and the wait goes on from the window's end).
 * A futex wait found asleep at the start begins there too: whether it is
 * idle (its own timeout), on the target's own threads or on another task
 * is known at its wakeup, which classifies it as it does every futex wait.
 * One still asleep at the end is left out (its kind is not known yet), as
 * are the waits with a path of their own (a fault's, block I/O, the file
 * system's). A send found asleep at the start counts on its socket:
 * whether the network held what it would send (transmit.bpf.h) is read
 * when a sleep begins. A pass races with the thread's own wakeup on
 * another CPU for a few instructions, as the probe's programs on two CPUs
 * do. Each pass also counts the target's live threads where it stands,
 * which a service's idle waits are compared by (daemon/calibrate.c).
 *
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * parts whose state and helpers it uses (calls.bpf.h, sched.bpf.h).
 */
#ifndef ARGUS_EDGES_BPF_H
#define ARGUS_EDGES_BPF_H

/* Which pass the next read of window_edges makes (enum argus_edge): user space sets it. */
int window_edge = ARGUS_EDGE_NONE;
/* The waits each pass found across an edge, over the probe's life (for the trace). */
unsigned long long edge_opened = 0;
unsigned long long edge_closed = 0;
/* The target's live threads the last pass met: user space reads it after each pass, and zeroes it. */
unsigned long long edge_threads = 0;

#define TASK_ASLEEP_BITS 3 /* TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE */

/* Kernels before 5.14 name the task's state "state". */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/*
 * Whether t is asleep: not runnable, and switched out (a task about to
 * sleep sets its state first, and may find its event and run on).
 */
static __always_inline bool task_asleep(struct task_struct *t)
{
	unsigned long state;

	if (bpf_core_field_exists(t->on_cpu) && BPF_CORE_READ(t, on_cpu))
		return false;
	if (bpf_core_field_exists(t->__state))
		state = BPF_CORE_READ(t, __state);
	else
		state = BPF_CORE_READ((struct task_struct___pre514 *)t, state);
	return state & TASK_ASLEEP_BITS;
}

/*
 * Window start, target thread ts (task t): asleep in a call the probe tells
 * apart that no program has seen begin (the probe was not attached when it
 * slept). Its wait and its sleep begin now; its wakeup ends them (call_end),
 * a futex wait's classified there by who woke it (sched_waking).
 */
static __always_inline void edge_open(struct thread_state *ts, struct task_struct *t, __u64 now)
{
	long nr, arg0, arg1, arg2;
	__u32 role, cls;

	if (ts->sched.sleep_start || ts->sync.futex.start || ts->file_call.span.start ||
	    !task_asleep(t) || !blocked_call(t, &nr, &arg0, &arg1, &arg2))
		return;
	role = syscall_role(nr);
	if (role == ARGUS_SYS_FUTEX) {
		futex_wait_start(ts, now);
	} else {
		cls = file_call_class(t, role, arg0, arg1);
		if (cls >= ARGUS_CLS_MAX)
			return;
		ts->file_call.cls = cls;
		file_call_start(ts, now);
	}
	ts->sched.sleep_start = now;
	__sync_fetch_and_add(&edge_opened, 1);
}

/*
 * Window end, target thread ts: still in a call the probe tells apart.
 * What it waited so far counts now, as if the call ended here; the call
 * goes on from now, so that nothing after this pass counts it twice.
 */
static __always_inline void edge_close(struct thread_state *ts, __u64 now)
{
	if (!ts->file_call.span.start)
		return;
	if (ts->sched.sleep_start && now > ts->sched.sleep_start) {
		ts->sched.slept_total += now - ts->sched.sleep_start;
		ts->sched.sleep_start = now;
	}
	file_call_end(ts, now);
	file_call_start(ts, now);
	__sync_fetch_and_add(&edge_closed, 1);
}

SEC("iter/task")
int window_edges(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct thread_state *ts;

	/* an entry for a target's task only: the pass meets every task on the host */
	if (!t || (!bpf_task_storage_get(&threads, t, 0, 0) && !task_is_target(t)))
		return 0;
	ts = task_state(t);
	if (!ts)
		return 0;
	if (!BPF_CORE_READ(t, exit_state))
		__sync_fetch_and_add(&edge_threads, 1);
	if (window_edge == ARGUS_EDGE_OPEN)
		edge_open(ts, t, bpf_ktime_get_ns());
	else if (window_edge == ARGUS_EDGE_CLOSE)
		edge_close(ts, bpf_ktime_get_ns());
	return 0;
}

#endif /* ARGUS_EDGES_BPF_H */
