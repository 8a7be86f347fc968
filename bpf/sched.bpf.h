/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The scheduler (kernel_scheduler): runqueue waits and who held the CPU,
 * wakeups (who ended a wait), blocking (a fault's sleep, iowait, a wait on
 * the file system: vfs.bpf.h),
 * migrations, the target's processes followed through fork and exit.
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_SCHED_BPF_H
#define ARGUS_SCHED_BPF_H

/* ---- scheduler ---- */

/*
 * Per CPU: how long it has run the target's tasks, and since when it runs
 * one now (0: another task); the same for its idle task, and for the
 * kernel's background reclaim (kswapd, kcompactd). A runqueue wait is
 * split by them: the part of the wait in which the CPU ran the target's
 * own tasks lost the target no CPU and counts apart (runq_own), so does
 * the part in which it was idle (runq_idle: no task held it, the CPU was
 * coming out of idle); the part in which it reclaimed memory is memory
 * pressure's, named where it starts (kswapd); the rest, whoever held the
 * CPU then, counts as runqueue wait. An array indexed by CPU, not a
 * per-CPU map, so that a wait can read the CPU it waits on from the one it
 * ends on.
 */
struct occupant {
	__u64 ns;    /* its time on the CPU so far, the current run left out */
	__u64 since; /* since when it runs now (0: it does not) */
};

struct cpu_occupancy {
	struct occupant target, idle, reclaim;
	/*
	 * The last task switched out here that was neither one of the
	 * target's nor the idle task (a struct task_struct *, read only with
	 * BPF_CORE_READ): whose the foreign part of a wait was when the task
	 * switched out for the waiter was one of the target's own, or idle.
	 */
	__u64 foreign;
} __attribute__((aligned(64)));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ARGUS_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct cpu_occupancy);
} cpu_occupancy SEC(".maps");

/* An occupant's time on the CPU until now, its current run included. */
static __always_inline __u64 occupied(const struct occupant *o, __u64 now)
{
	return o->ns + (o->since && now > o->since ? now - o->since : 0);
}

/* An occupant's run ends now (if it was running); since: when the next one starts (0: none). */
static __always_inline void occupant_switch(struct occupant *o, __u64 now, __u64 since)
{
	if (o->since && now > o->since)
		o->ns += now - o->since;
	o->since = since;
}

/*
 * The target's time on cpu until now, the CPU's idle time and its time in
 * background reclaim, each with the run it is in now: one lookup for all.
 */
static __always_inline void cpu_occupied(__u32 cpu, __u64 now, struct runq_parts *ret)
{
	struct cpu_occupancy *o = bpf_map_lookup_elem(&cpu_occupancy, &cpu);

	ret->own = o ? occupied(&o->target, now) : 0;
	ret->idle = o ? occupied(&o->idle, now) : 0;
	ret->reclaim = o ? occupied(&o->reclaim, now) : 0;
}

/* PF_KTHREAD and PF_KSWAPD (include/linux/sched.h): a kernel thread; kswapd. */
#define ARGUS_PF_KTHREAD 0x00200000
#define ARGUS_PF_KSWAPD 0x00020000

/*
 * The kernel's background reclaim: kswapd, which frees memory when a
 * zone runs low, and kcompactd, which it wakes to compact it. Kernel
 * threads only: a task may name itself anything, not set these flags.
 */
static __always_inline bool reclaimer(struct task_struct *p)
{
	unsigned int flags = p->flags;
	char comm[10];

	if (!(flags & ARGUS_PF_KTHREAD))
		return false;
	if (flags & ARGUS_PF_KSWAPD)
		return true;
	bpf_probe_read_kernel(comm, sizeof(comm), p->comm);
	return comm[0] == 'k' && comm[1] == 'c' && comm[2] == 'o' && comm[3] == 'm' &&
	       comm[4] == 'p' && comm[5] == 'a' && comm[6] == 'c' && comm[7] == 't' &&
	       comm[8] == 'd';
}

/* Kernels before 5.16 keep a task's CPU in the task, later ones in its thread_info. */
struct task_struct___cpu_in_task {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_cpu_of(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return BPF_CORE_READ(p, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___cpu_in_task *)p, cpu);
}

/* A target thread becomes runnable on cpu: its wait starts. */
static __always_inline void runq_enter(struct thread_state *ts, __u32 cpu, __u64 now)
{
	ts->sched.runq_start = now;
	ts->sched.runq_cpu = cpu;
	ts->sched.runq = (struct runq_parts){};
	cpu_occupied(cpu, now, &ts->sched.runq0);
}

static __always_inline void part_add(__u64 *part, __u64 now_total, __u64 then_total)
{
	if (now_total > then_total)
		*part += now_total - then_total;
}

/* The waiting thread leaves the CPU it waits on: the parts there so far are kept. */
static __always_inline void runq_leave_cpu(struct thread_state *ts, __u64 now)
{
	struct runq_parts o;

	cpu_occupied(ts->sched.runq_cpu, now, &o);
	part_add(&ts->sched.runq.own, o.own, ts->sched.runq0.own);
	part_add(&ts->sched.runq.idle, o.idle, ts->sched.runq0.idle);
	part_add(&ts->sched.runq.reclaim, o.reclaim, ts->sched.runq0.reclaim);
}

static __always_inline __u64 at_most(__u64 x, __u64 bound)
{
	return x < bound ? x : bound;
}

/*
 * A wait of wait ns ends now: its own part, at most the wait, its idle
 * part, at most what the own part left of it, and its reclaim part, at
 * most what those left (the CPU it was last known to wait on counts too:
 * a move the probe did not see). The rest of the wait is another task's.
 */
static __always_inline void runq_parts(struct thread_state *ts, __u64 now, __u64 wait,
				       struct runq_parts *ret)
{
	runq_leave_cpu(ts, now);
	ret->own = at_most(ts->sched.runq.own, wait);
	ret->idle = at_most(ts->sched.runq.idle, wait - ret->own);
	ret->reclaim = at_most(ts->sched.runq.reclaim, wait - ret->own - ret->idle);
}

/* What of a wait of wait ns another task held the CPU for, its parts p taken out. */
static __always_inline __u64 runq_others(__u64 wait, const struct runq_parts *p)
{
	return wait - p->own - p->idle - p->reclaim;
}

static __always_inline __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/*
 * The thread waited for I/O from t0 to t1 outside a fault: the part that
 * overlaps its last request's queueing counts as queue time, the rest as
 * device time.
 */
static __always_inline void io_wait_done(struct thread_state *ts, __u32 tid, __u64 t0, __u64 t1)
{
	struct rq_phases *ph = bpf_map_lookup_elem(&last_request, &tid);
	__u64 q = 0;

	if (t1 <= t0)
		return;
	if (ph && ph->insert && ph->issue > ph->insert)
		q = overlap(t0, t1, ph->insert, ph->issue);
	if (q)
		account_thread(ts, ARGUS_CLS_BLOCK_QUEUE, 0, q);
	account_thread(ts, ARGUS_CLS_BLOCK_DEVICE, 0, t1 - t0 - q);
}

/*
 * A watched task of another's (thread_state.watched): its waits, kept for
 * the chain alone. Leaving the CPU, it waits for it again (preempted) or
 * blocks, in iowait or not; woken, an iowait ends (its time went to
 * storage) and a wait for a CPU starts; back on a CPU, that wait ends, but
 * for the parts in which the CPU ran the target's own tasks or idled.
 * Other sleeps are not followed: the chain names no cause for them.
 */
static __always_inline void watched_out(struct thread_state *ws, struct task_struct *prev,
					bool runnable, __u32 cpu, __u64 now)
{
	if (runnable)
		runq_enter(ws, cpu, now);
	else if (BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		ws->sched.io_block_start = now;
}

static __always_inline void watched_iowait_end(struct thread_state *ws, __u64 now)
{
	if (ws->sched.io_block_start && now > ws->sched.io_block_start)
		spend(ws, ARGUS_CLS_BLOCK_DEVICE, now - ws->sched.io_block_start);
	ws->sched.io_block_start = 0;
}

static __always_inline void watched_runnable(struct thread_state *ws, struct task_struct *p,
					     __u64 now)
{
	watched_iowait_end(ws, now);
	if (!ws->sched.runq_start)
		runq_enter(ws, task_cpu_of(p), now);
}

static __always_inline void watched_in(struct thread_state *ws, __u64 now)
{
	if (ws->sched.runq_start && now > ws->sched.runq_start) {
		__u64 wait = now - ws->sched.runq_start;
		struct runq_parts p;

		runq_parts(ws, now, wait, &p);
		if (runq_others(wait, &p))
			spend(ws, ARGUS_CLS_RUNQ_WAIT, runq_others(wait, &p));
		if (p.reclaim)
			spend(ws, ARGUS_CLS_KSWAPD, p.reclaim);
	}
	ws->sched.runq_start = 0;
	watched_iowait_end(ws, now);
}

static __always_inline void mark_runnable(struct task_struct *p)
{
	struct thread_state *ts = task_entry(p), *ws = watched_state(ts);
	__u64 now;

	if (ws) {
		watched_runnable(ws, p, bpf_ktime_get_ns());
		return;
	}
	if (!ts || ts->role != ROLE_TARGET)
		return;
	now = bpf_ktime_get_ns();
	if (ts->sched.sleep_start) {
		ts->sched.slept_total += now - ts->sched.sleep_start;
		ts->sched.sleep_start = 0;
	}
	/* a wait seen at the switch ends with its wakeup */
	if (calls_at_switch)
		call_end(ts, now);
	vfs_wait_end(ts, now);
	if (!ts->sched.runq_start)
		runq_enter(ts, task_cpu_of(p), now);
	/* its iowait ends with the wakeup: the wait for a CPU after it is runqueue time */
	if (ts->sched.io_block_start) {
		io_wait_done(ts, p->pid, ts->sched.io_block_start, now);
		ts->sched.io_block_start = 0;
	}
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_sched_wakeup, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

/*
 * Per CPU: since when it runs an hrtimer callback (0: none), where timeouts
 * fire (a futex wait's own timeout, a POSIX timer's signal). A wakeup from
 * there comes from the timer, not from the task it interrupted. (The
 * per-CPU preempt count would say so for every interrupt, but this kernel
 * does not let BPF programs address per-CPU data by symbol.) An exit
 * clears it, nested or not; an entry whose exit came before attach is
 * forgotten after TIMER_CALLBACK_MAX_NS, longer than any callback runs,
 * even where the kernel runs tens of times slower than on hardware or its
 * CPU is taken away for milliseconds (a guest under QEMU's TCG on a busy
 * host, where a 1 ms bound once let a futex timeout count as the waking
 * thread's own). A stale entry can only be met around attach.
 */
#define TIMER_CALLBACK_MAX_NS 20000000ull

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} timer_since SEC(".maps");

static __always_inline __u64 *this_cpu_timer_since(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&timer_since, &zero);
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(handle_hrtimer_expire_entry, struct hrtimer *timer)
{
	__u64 *since = this_cpu_timer_since();

	if (since)
		*since = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(handle_hrtimer_expire_exit, struct hrtimer *timer)
{
	__u64 *since = this_cpu_timer_since();

	if (since)
		*since = 0;
	return 0;
}

static __always_inline bool in_timer(void)
{
	__u64 *since = this_cpu_timer_since();

	return since && *since && bpf_ktime_get_ns() - *since < TIMER_CALLBACK_MAX_NS;
}

/*
 * In the waker's context: who ends a target thread's futex wait. A wait
 * that a timer ends (its timeout) was not ended by the task the timer
 * interrupt happened to find on the CPU, nor by any: it ran out (idle,
 * call_end).
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(handle_sched_waking, struct task_struct *p)
{
	struct thread_state *ts = task_state(p), *ws;
	struct task_struct *waker;
	struct cpu_task *c;
	bool own;

	if (!ts || !(ts->sync.futex.start | ts->file_call.span.start | ts->sync.vfs_since))
		return 0;
	if (in_timer()) {
		if (ts->sync.futex.start)
			ts->sync.futex_timer = 1;
		return 0;
	}
	ws = current_state();
	own = ws != NULL;
	if (ts->sync.futex.start && own)
		ts->sync.futex_own = 1;
	/* the causal chain: who ended the wait (the last waker when several did) */
	waker = bpf_get_current_task_btf();
	/*
	 * Marked seen once whole: the woken thread may end its wait on another
	 * CPU while this runs, and takes the waker's fields only when seen
	 * (note_waker). Program order; x86 keeps stores in that order.
	 */
	ts->waker.seen = 0;
	barrier();
	ts->waker.tgid = argus_tgid_in_ns(waker, pidns_inum);
	ts->waker.own = own;
	bpf_get_current_comm(ts->waker.comm, sizeof(ts->waker.comm));
	/* and where its time went before, as far as the probe followed it: the next link */
	ts->waker.then_cls = ARGUS_CLS_MAX;
	ts->waker.then_ns = 0;
	if (!own) {
		/* another's task: followed from its first such wakeup on (watched_out) */
		ws = task_entry(waker);
		if (ws && ws->role != ROLE_OTHER) {
			ws = NULL;
		} else if (ws && !ws->watched) {
			/* its first: watched from here on, nothing of its time followed yet */
			ws->watched = 1;
			c = cpu_task_of(bpf_get_smp_processor_id());
			if (c && c->task == (__u64)waker)
				c->watched = 1;
			ws = NULL;
		}
	}
	if (ws && ws != ts)
		spent_take(ws, &ts->waker.then_cls, &ts->waker.then_ns);
	barrier();
	ts->waker.seen = 1;
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_sched_wakeup_new, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

/* A target thread leaves the CPU: preempted (still runnable) or blocked. */
static __always_inline void switched_out(struct thread_state *ts, struct task_struct *prev,
					 bool runnable, __u64 now)
{
	long nr, arg0, arg1, arg2;
	bool in_fault;
	__u32 role;

	if (runnable) {
		runq_enter(ts, bpf_get_smp_processor_id(), now);
		return;
	}
	ts->sched.runq_start = 0;
	ts->sched.block_start = now;
	ts->sched.sleep_start = now;
	/* prev is current: the switch is on its way out */
	in_fault = fault_open(ts, prev);
	if (!in_fault && BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		ts->sched.io_block_start = now;
	/*
	 * A fault that sleeps waits for its page to be read, unless it sleeps
	 * inside a nested path (reclaim, compaction, a lock), whose time and
	 * cause count there.
	 */
	if (in_fault && !ts->mem.reclaim.start && !ts->mem.compact.start && !ts->sync.lock.start)
		ts->fault.flags |= F_SLEPT;
	/* a send the call events follow, asleep outside a fault: on the transmit path? */
	if (ts->file_call.span.start && !in_fault && !ts->sched.io_block_start)
		transmit_at_sleep(ts, prev);
	/*
	 * A sleep that no path counts as its own, in a system call (its saved
	 * registers say which, read once here), may be a call the probe tells
	 * apart (seen here when no call event is attached), or else a wait on
	 * the file system.
	 */
	if (in_fault || ts->sched.io_block_start || ts->mem.reclaim.start ||
	    ts->mem.compact.start || ts->sync.lock.start || ts->sync.futex.start ||
	    ts->file_call.span.start || !blocked_call(prev, &nr, &arg0, &arg1, &arg2))
		return;
	role = syscall_role(nr);
	if (calls_at_switch && call_at_switch(ts, role, arg0, arg1, now))
		transmit_at_sleep(ts, prev);
	else
		vfs_wait_begin(ts, role, arg0, now);
}

/*
 * Per CPU, the work item a workqueue worker started last there: the worker
 * and the item's function. A worker that held a target's CPU is named by
 * what it ran (a block driver's, reclaim's, a file system's work).
 */
struct cpu_work {
	__u32 pid;  /* the worker's thread */
	__u64 func; /* the item's function, a kernel address */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_work);
} cpu_work SEC(".maps");

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(handle_workqueue_execute_start, struct work_struct *work)
{
	__u32 zero = 0;
	struct cpu_work *w = bpf_map_lookup_elem(&cpu_work, &zero);
	__u64 func = (__u64)BPF_CORE_READ(work, func);

	if (w && !(work_barrier && func == work_barrier)) {
		w->pid = (__u32)bpf_get_current_pid_tgid();
		w->func = func;
	}
	return 0;
}

/* PF_WQ_WORKER (include/linux/sched.h): the task is a workqueue worker. */
#define ARGUS_PF_WQ_WORKER 0x00000020

/* The function of the work item holder, a worker switched out on this CPU, started last; 0: none. */
static __always_inline __u64 holder_work(struct task_struct *holder)
{
	__u32 zero = 0;
	struct cpu_work *w;

	if (!(BPF_CORE_READ(holder, flags) & ARGUS_PF_WQ_WORKER))
		return 0;
	w = bpf_map_lookup_elem(&cpu_work, &zero);
	return w && w->pid == (__u32)BPF_CORE_READ(holder, pid) ? w->func : 0;
}

/*
 * A target thread's runqueue wait ended by switching holder out; lost ns
 * of it counted in runq_wait (the holder, or tasks before it on that CPU,
 * had it: not the target's own, not the idle task). holder may be a
 * pointer kept from an earlier switch (cpu_occupancy.foreign): every read
 * of it goes through BPF_CORE_READ.
 */
static __always_inline void note_holder(struct task_struct *holder, bool own, __u64 lost)
{
	struct argus_rq_holder_key k = {};
	struct argus_counter zero = {}, *c;

	k.tgid = argus_tgid_in_ns(holder, pidns_inum);
	k.own = own;
	k.work = holder_work(holder);
	BPF_CORE_READ_STR_INTO(&k.comm, holder, comm);
	c = bpf_map_lookup_elem(&runq_holders, &k);
	if (!c) {
		/* full: the run keeps the holders it met first, and sums the others' waits */
		bpf_map_update_elem(&runq_holders, &k, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&runq_holders, &k);
		if (!c) {
			__sync_fetch_and_add(&rq_holders_unkept, 1);
			__sync_fetch_and_add(&rq_holders_unkept_ns, lost);
			return;
		}
	}
	__sync_fetch_and_add(&c->count, 1);
	__sync_fetch_and_add(&c->time_ns, lost);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id(), gen;
	struct cpu_occupancy *occ = bpf_map_lookup_elem(&cpu_occupancy, &cpu);
	struct thread_state *ts, *ws;
	bool prev_target;

	/* the CPU's run of a target task or of its idle task, if it was one, ends here */
	if (occ) {
		occupant_switch(&occ->target, now, 0); /* set again below for a target task */
		/* the idle task is pid 0, on every CPU */
		occupant_switch(&occ->idle, now, next->pid == 0 ? now : 0);
		occupant_switch(&occ->reclaim, now, reclaimer(next) ? now : 0);
	}
	ts = current_state(); /* prev: the switch is on its way out */
	prev_target = ts != NULL;
	if (occ && !prev_target && prev->pid != 0)
		occ->foreign = (__u64)prev;
	if (ts)
		switched_out(ts, prev, preempt || prev_state == 0, now);
	else if ((ws = current_watched()))
		watched_out(ws, prev, preempt || prev_state == 0, cpu, now);

	gen = targets_gen;
	ts = task_entry(next);
	ws = watched_state(ts);
	/* what runs here from now on: the first test of every program (current_state) */
	cpu_task_set(cpu, next, gen, ts && ts->role == ROLE_TARGET, ws != NULL);
	if (ws)
		watched_in(ws, now);
	if (!ts || ts->role != ROLE_TARGET)
		return 0;
	if (ts->sched.runq_start && now > ts->sched.runq_start) {
		__u64 wait = now - ts->sched.runq_start, others;
		struct runq_parts p;

		runq_parts(ts, now, wait, &p);
		others = runq_others(wait, &p);

		/*
		 * while the CPU ran the target's own tasks, or was idle, the target
		 * lost no CPU; others ran here too during the wait: when the last
		 * task before the waiter was the target's own or idle, the foreign
		 * part was the last other task's (kept since its switch out)
		 */
		if (others) {
			bool behind_own = (prev_target || prev->pid == 0) && occ && occ->foreign;

			account_thread(ts, ARGUS_CLS_RUNQ_WAIT, 1, others);
			note_holder(behind_own ? (struct task_struct *)occ->foreign : prev,
				    behind_own ? false : prev_target, others);
		}
		if (p.own)
			account_thread(ts, ARGUS_CLS_RUNQ_OWN, 1, p.own);
		if (p.idle)
			account_thread(ts, ARGUS_CLS_RUNQ_IDLE, 1, p.idle);
		/* memory pressure's, counted as time: kswapd's count is its wakeups */
		if (p.reclaim)
			account_thread(ts, ARGUS_CLS_KSWAPD, 0, p.reclaim);
		ts->sched.runq_total += wait;
		fault_nest(ts, next, wait, ts->sched.runq_start);
	}
	if (occ)
		occ->target.since = now;
	ts->sched.runq_start = 0;
	/* its wakeup went unseen: the sleep, and a wait seen at the switch, end here at the latest */
	if (ts->sched.sleep_start) {
		if (now > ts->sched.sleep_start)
			ts->sched.slept_total += now - ts->sched.sleep_start;
		ts->sched.sleep_start = 0;
	}
	if (calls_at_switch)
		call_end(ts, now);
	vfs_wait_end(ts, now);
	if (ts->sched.block_start) {
		/* blocked inside a fault: the fault lasted at least until now */
		if (fault_open(ts, next))
			fault_completed(ts, now);
		ts->sched.block_start = 0;
	}
	if (ts->sched.io_block_start) {
		/* its wakeup went unseen: the wait ends here at the latest */
		io_wait_done(ts, next->pid, ts->sched.io_block_start, now);
		ts->sched.io_block_start = 0;
	}
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(handle_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	struct thread_state *ts = task_entry(p);

	if (!ts || !(ts->role == ROLE_TARGET || watched_state(ts)))
		return 0;
	if (ts->role == ROLE_TARGET)
		account(ARGUS_CLS_MIGRATE, 1, 0);
	/* a waiting thread moved: its wait goes on against the new CPU's occupancy */
	if (ts->sched.runq_start) {
		__u64 now = bpf_ktime_get_ns();

		runq_leave_cpu(ts, now);
		ts->sched.runq_cpu = dest_cpu;
		cpu_occupied(dest_cpu, now, &ts->sched.runq0);
	}
	return 0;
}

/* Target tracking: always loaded. Children of target processes are targets. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = argus_tgid_in_ns(child, pidns_inum);
	__u8 one = 1;

	if (!task_state(parent) || !tgid)
		return 0;
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	account(ARGUS_CLS_FORK, 1, 0);
	return 0;
}

/*
 * A process moved into a followed service's cgroup (cgroup.procs written,
 * systemd starting a unit's process) is the target's from its move on.
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(handle_cgroup_attach_task, struct cgroup *dst_cgrp, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	__u32 tgid;
	__u8 one = 1;

	if (!follow_cgroups || !cgroup_followed(dst_cgrp))
		return 0;
	tgid = argus_tgid_in_ns(task, pidns_inum);
	if (!tgid)
		return 0;
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	/* its tasks, decided as another's before the move, are looked up again */
	__sync_fetch_and_add(&targets_gen, 1);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit, struct task_struct *p, bool group_dead)
{
	struct thread_state *ts = task_state(p);
	__u32 tid = p->pid;

	if (ts) {
		__u64 start = BPF_CORE_READ(p, start_time), now = bpf_ktime_get_ns();

		fault_finish(ts);
		bpf_map_delete_elem(&last_request, &tid);
		if (born_after_ns && start >= born_after_ns && now > start)
			__sync_fetch_and_add(&child_thread_ns, now - start);
	}
	return 0;
}

#endif /* ARGUS_SCHED_BPF_H */
