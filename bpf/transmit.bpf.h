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
 * families (Unix sockets) wait on their peer, never on a device. Programs
 * that write through poll or select (socat, nc, iperf3, rsync) sleep
 * there, not in the send: such a wait for events is a transmit wait when
 * one of the sockets it waits to write on is held so (their descriptors
 * read from the call's arguments in user memory), and is then not idle.
 * An epoll wait's descriptors are in the kernel's epoll instance, and a
 * server registers EPOLLOUT on every connection whether it has anything
 * to write or not (nginx): there, the process's own descriptors are asked
 * instead, for a socket that takes no more by the kernel's own rule for
 * waking a writer (not writeable) while the transmit path holds its data
 * (epoll_holds).
 *
 * The call is read from the registers it saved (blocked_call), once per
 * sleep of a send or a wait, whatever follows system calls (syscall_events): with
 * call events the whole call counts as a transmit wait once one of its
 * sleeps was, without them each such sleep is one.
 * Part of the multiplexed probe: included by paths.bpf.c, after calls.bpf.h
 * (fd_file, blocked_call, syscall_role, the call's class).
 */
#ifndef ARGUS_TRANSMIT_BPF_H
#define ARGUS_TRANSMIT_BPF_H

#define SOCKET_FILE_TYPE 0140000 /* S_IFSOCK */
#define AF_INET_FAMILY 2
#define AF_INET6_FAMILY 10
#define TCP_PROTOCOL 6
#define UDP_PROTOCOL 17

/*
 * Does this socket file wait for the transmit path? With full, only when it
 * also takes no more, as the kernel judges before it wakes a writer: a TCP
 * socket whose free send buffer is less than half of what it holds
 * (sk_stream_is_writeable), a UDP socket whose datagrams below hold half
 * its buffer (sock_writeable). A subprogram: waits for events ask it for
 * several descriptors.
 */
static __always_inline bool file_is_socket(struct file *f)
{
	return f && (BPF_CORE_READ(f, f_inode, i_mode) & FILE_TYPE_MASK) == SOCKET_FILE_TYPE;
}

static __noinline bool file_transmit_held(struct file *f, bool full)
{
	struct socket *sock;
	struct sock *sk;
	__u16 family, protocol;
	int below, queued, sndbuf;

	if (!file_is_socket(f))
		return false;
	sock = (struct socket *)BPF_CORE_READ(f, private_data);
	sk = sock ? BPF_CORE_READ(sock, sk) : NULL;
	if (!sk)
		return false;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET_FAMILY && family != AF_INET6_FAMILY)
		return false;
	protocol = BPF_CORE_READ(sk, sk_protocol);
	/* the refcount is one more than the bytes charged; queued counts all it has not had acked */
	below = BPF_CORE_READ(sk, sk_wmem_alloc.refs.counter) - 1;
	sndbuf = full ? BPF_CORE_READ(sk, sk_sndbuf) : 0;
	if (protocol == UDP_PROTOCOL)
		return !full || 2ll * below >= sndbuf;
	if (protocol != TCP_PROTOCOL)
		return false;
	queued = BPF_CORE_READ(sk, sk_wmem_queued);
	if (full && 2ll * (sndbuf - queued) >= queued)
		return false;
	if (BPF_CORE_READ(sk, sk_tsq_flags) & ((1ul << TSQ_THROTTLED) | (1ul << TSQ_QUEUED)))
		return true;
	return queued > 0 && 2ll * below >= queued;
}

/* Does the socket behind the current task's descriptor fd wait for the transmit path? */
static __always_inline bool transmit_holds(long fd)
{
	return file_transmit_held(fd_file(fd), false);
}

#define POLLOUT_EVENT 0x4
#define TRANSMIT_SOCKETS 4 /* descriptors asked at most for one sleep */

struct pollfd___argus {
	int fd;
	short events;
	short revents;
};

/* The index of a 64-bit word's only set bit: a de Bruijn sequence's table, no loop. */
static const __u8 bit_index[64] = {
	0,  1,	48, 2,	57, 49, 28, 3,	61, 58, 50, 42, 38, 29, 17, 4,	62, 55, 59, 36, 53, 51,
	43, 22, 45, 39, 33, 30, 24, 18, 12, 5,	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21,
	44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,	13, 8,	7,  6,
};

/*
 * Does a wait for events of this role, with these arguments, wait to write
 * on a socket whose data the transmit path holds? Asked of the first
 * TRANSMIT_SOCKETS descriptors it waits to write on: the first entries of
 * poll and ppoll's array, the lowest of select and pselect6's write set
 * (descriptors 0 to 63). False for other roles (epoll: epoll_holds), and
 * when user memory cannot be read.
 */
static __always_inline bool wait_holds(__u32 role, long arg0, long arg1, long arg2)
{
	struct pollfd___argus p;
	__u64 set = 0, low;
	long i;

	if (role == ARGUS_SYS_POLL_FDS) {
		/* an entry at a time: a read of a constant size, whatever the kernel's verifier */
		for (i = 0; i < TRANSMIT_SOCKETS && i < arg1; i++) {
			if (bpf_probe_read_user(&p, sizeof(p), (void *)(arg0 + i * sizeof(p))) < 0)
				return false;
			if ((p.events & POLLOUT_EVENT) && transmit_holds(p.fd))
				return true;
		}
		return false;
	}
	if (role != ARGUS_SYS_SELECT || !arg2 ||
	    bpf_probe_read_user(&set, sizeof(set), (void *)arg2) < 0)
		return false;
	if (arg0 < 64)
		set &= (1ull << (arg0 > 0 ? arg0 : 0)) - 1;
	for (i = 0; i < TRANSMIT_SOCKETS && set; i++) {
		low = set & -set;
		if (transmit_holds(bit_index[((low * 0x03f79d71b4cb0a89ull) >> 58) & 63]))
			return true;
		set ^= low;
	}
	return false;
}

/* One look at the descriptor table for epoll_holds: the table, its size, what was found. */
struct epoll_scan {
	struct file **fds;
	long max;
	long found; /* the descriptor plus one; 0: none */
};

/* bpf_loop's step: descriptor i (a callback, so the verifier walks it once, not per step). */
static long epoll_scan_step(__u64 i, void *data)
{
	struct epoll_scan *s = data;
	struct file *f = NULL;

	if ((long)i >= s->max || bpf_probe_read_kernel(&f, sizeof(f), &s->fds[i]) < 0)
		return 1;
	if (f && file_transmit_held(f, true)) {
		s->found = (long)i + 1;
		return 1;
	}
	return 0;
}

/*
 * An epoll wait of target thread ts, asleep: does its process have a socket
 * that takes no more while the transmit path holds its data? Asked of its
 * first EPOLL_SCAN_FDS descriptors, at most once every EPOLL_SCAN_GAP_NS
 * per thread (a busy server sleeps in epoll thousands of times a second),
 * the socket last found so asked first at every sleep. A process with many
 * connections is asked about the first ones: when the network holds its
 * writes back it holds most of them.
 */
#define EPOLL_SCAN_FDS 64
#define EPOLL_SCAN_GAP_NS 10000000ull
static __always_inline bool epoll_holds(struct thread_state *ts, __u64 now)
{
	struct fdtable *fdt;
	struct epoll_scan s = {};

	if (ts->file_call.held_fd > 0 &&
	    file_transmit_held(fd_file(ts->file_call.held_fd - 1), true))
		return true;
	if (now - ts->file_call.scan_at < EPOLL_SCAN_GAP_NS)
		return false;
	ts->file_call.scan_at = now;
	ts->file_call.held_fd = 0;
	fdt = BPF_CORE_READ((struct task_struct *)bpf_get_current_task_btf(), files, fdt);
	if (!fdt)
		return false;
	s.fds = BPF_CORE_READ(fdt, fd);
	s.max = BPF_CORE_READ(fdt, max_fds);
	bpf_loop(EPOLL_SCAN_FDS, epoll_scan_step, &s, 0);
	ts->file_call.held_fd = s.found;
	return s.found > 0;
}

/*
 * Target thread ts (prev, switching out) sleeps in the call it is in: a
 * send whose socket waits for the transmit path, or a wait for events to
 * write on such a socket (then not idle: the network holds what it would
 * write), becomes a transmit wait.
 */
static __always_inline void transmit_at_sleep(struct thread_state *ts, struct task_struct *prev)
{
	__u32 cls = ts->file_call.cls;
	long nr, arg0, arg1, arg2;
	__u32 role;
	bool held;

	if (cls != ARGUS_CLS_STREAM_SEND && cls != ARGUS_CLS_DGRAM_SEND && cls != ARGUS_CLS_EPOLL)
		return;
	if (!blocked_call(prev, &nr, &arg0, &arg1, &arg2))
		return;
	role = syscall_role(nr);
	if (cls != ARGUS_CLS_EPOLL)
		held = transmit_holds(arg0);
	else if (role == ARGUS_SYS_POLL) /* epoll's instance is no socket; accept's is */
		held = !file_is_socket(fd_file(arg0)) && epoll_holds(ts, bpf_ktime_get_ns());
	else
		held = wait_holds(role, arg0, arg1, arg2);
	if (held)
		ts->file_call.cls = ARGUS_CLS_TRANSMIT;
}

#endif /* ARGUS_TRANSMIT_BPF_H */
