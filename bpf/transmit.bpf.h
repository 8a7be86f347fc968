/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Waits on the network's transmit path (kernel_sync.socket.transmit), seen
 * from the scheduler: a send of a target thread on a TCP or UDP socket
 * that sleeps while what the socket already handed down still sits below
 * the protocol (the device's queueing discipline, its driver), so that the
 * socket may not take more until the network sends it. For TCP that is
 * TCP small queues holding the connection back (sk_tsq_flags: throttled,
 * or a freed packet has queued the resumption), or at least half of what
 * the connection holds (sk_wmem_queued: not yet sent or not yet acked)
 * still below it, not freed by the device (sk_wmem_alloc): where the
 * pacing rate is high (loopback) the small queues' limit is the sysctl's
 * (4 MiB), above the send buffer, and the buffer fills first. A send that
 * sleeps for the peer's window or reading, or for acknowledgements of what
 * the device already sent (a long round trip, losses), finds neither and
 * stays a stream send. For UDP, a send sleeps only for send buffer room, which
 * packets in the transmit path hold until the device frees them. Other
 * families (Unix sockets) wait on their peer, never on a device.
 *
 * The call is read from the registers it saved (blocked_call), once per
 * sleep of a send, whatever follows system calls (syscall_events): with
 * call events the whole call counts as a transmit wait once one of its
 * sleeps was, without them each such sleep is one.
 * Part of the multiplexed probe: included by paths.bpf.c, after calls.bpf.h
 * (fd_file, blocked_call, the call's class).
 */
#ifndef ARGUS_TRANSMIT_BPF_H
#define ARGUS_TRANSMIT_BPF_H

#define SOCKET_FILE_TYPE 0140000 /* S_IFSOCK */
#define AF_INET_FAMILY 2
#define AF_INET6_FAMILY 10
#define TCP_PROTOCOL 6
#define UDP_PROTOCOL 17

/* Does the socket behind the current task's descriptor fd wait for the transmit path? */
static __always_inline bool transmit_holds(long fd)
{
	struct file *f = fd_file(fd);
	struct socket *sock;
	struct sock *sk;
	__u16 family, protocol;
	int below, queued;

	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & FILE_TYPE_MASK) != SOCKET_FILE_TYPE)
		return false;
	sock = (struct socket *)BPF_CORE_READ(f, private_data);
	sk = sock ? BPF_CORE_READ(sock, sk) : NULL;
	if (!sk)
		return false;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET_FAMILY && family != AF_INET6_FAMILY)
		return false;
	protocol = BPF_CORE_READ(sk, sk_protocol);
	if (protocol == UDP_PROTOCOL)
		return true;
	if (protocol != TCP_PROTOCOL)
		return false;
	if (BPF_CORE_READ(sk, sk_tsq_flags) & ((1ul << TSQ_THROTTLED) | (1ul << TSQ_QUEUED)))
		return true;
	/* the refcount is one more than the bytes charged; queued counts all it has not had acked */
	below = BPF_CORE_READ(sk, sk_wmem_alloc.refs.counter) - 1;
	queued = BPF_CORE_READ(sk, sk_wmem_queued);
	return queued > 0 && 2ll * below >= queued;
}

/*
 * Target thread ts (prev, switching out) sleeps in the call it is in: a
 * send whose socket waits for the transmit path becomes a transmit wait.
 */
static __always_inline void transmit_at_sleep(struct thread_state *ts, struct task_struct *prev)
{
	long nr, fd, arg1;

	if (ts->file_call.cls != ARGUS_CLS_STREAM_SEND && ts->file_call.cls != ARGUS_CLS_DGRAM_SEND)
		return;
	if (blocked_call(prev, &nr, &fd, &arg1) && transmit_holds(fd))
		ts->file_call.cls = ARGUS_CLS_TRANSMIT;
}

#endif /* ARGUS_TRANSMIT_BPF_H */
