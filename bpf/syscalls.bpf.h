/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The system call events: where a call the probe follows begins and ends
 * (calls.bpf.h says what it is and where its time counts), under
 * syscall_events raw or calls. Under none nothing here is attached.
 * Part of the multiplexed probe: included by paths.bpf.c, after the
 * shared state (thread_state, account(), task_state(), spans) it uses.
 */
#ifndef ARGUS_SYSCALLS_BPF_H
#define ARGUS_SYSCALLS_BPF_H

/*
 * Two ways in. Where the kernel's per-call events can be attached (their
 * ids are in tracefs), the loader attaches the programs below to the
 * enter and exit events of the calls ARGUS_SYSCALLS names and no others,
 * so that another process's other calls run no program at all. Elsewhere,
 * it attaches the raw sys_enter and sys_exit tracepoints, which every call
 * of every task goes through.
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct thread_state *ts = current_state();
	__u32 role;

	if (!ts)
		return 0;
	role = syscall_role(id);
	if (role == ARGUS_SYS_NONE || role == ARGUS_SYS_FUTEX || role == ARGUS_SYS_CREATE)
		call_begin(ts, role, 0, 0);
	else
		call_begin(ts, role, PT_REGS_PARM1_CORE(regs), PT_REGS_PARM2_CORE(regs));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct thread_state *ts = current_state();

	if (ts)
		call_end(ts, bpf_ktime_get_ns());
	return 0;
}

/*
 * A per-call event's record (the kernel's syscall_trace_enter and
 * syscall_trace_exit): the common header, the call's number, then its
 * arguments (enter) or its return value (exit). The kernel refuses to
 * attach a program that reads past an event's last field, so the calls on
 * a file, which all have two arguments or more, get the program that reads
 * two; the others get the one that reads only the number.
 */
struct syscall_enter_record {
	__u64 common;
	int nr;
	long args[2];
};

SEC("tracepoint")
int handle_call_enter_file(struct syscall_enter_record *ctx)
{
	struct thread_state *ts = current_state();

	if (ts)
		call_begin(ts, syscall_role(ctx->nr), ctx->args[0], ctx->args[1]);
	return 0;
}

SEC("tracepoint")
int handle_call_enter(struct syscall_enter_record *ctx)
{
	struct thread_state *ts = current_state();

	if (ts)
		call_begin(ts, syscall_role(ctx->nr), 0, 0);
	return 0;
}

SEC("tracepoint")
int handle_call_exit(void *ctx)
{
	struct thread_state *ts = current_state();

	if (ts)
		call_end(ts, bpf_ktime_get_ns());
	return 0;
}

#endif /* ARGUS_SYSCALLS_BPF_H */
