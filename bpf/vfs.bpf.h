/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Waits on the file system (kernel_sync.vfs_wait), seen from the scheduler:
 * a target thread that blocks outside every path that counts its own
 * sleeps (a fault, an iowait, which is block I/O, reclaim, compaction, an
 * mmap_lock wait, a futex or a call the syscall programs follow), inside a
 * read or write of a regular file or a call on the file system's names,
 * sizes or durability (open, create, link, remove, rename, look up, list,
 * truncate, allocate, sync), waits for the file system itself: an inode's
 * or a directory's lock that another task holds, a journal's commit, a
 * lease's holder, a permission listener, a pseudo-file's mutex. The wait
 * runs from the switch out to the wakeup; who woke it is noted as for any
 * wait (the causal chain).
 *
 * No system call event is needed, so none of the host's calls pays for it:
 * the call is read from the registers it saved (blocked_call, once per
 * blocking switch, in sched.bpf.h).
 * Part of the multiplexed probe: included by paths.bpf.c, after calls.bpf.h
 * (the calls' roles, the file type behind a descriptor, note_waker).
 */
#ifndef ARGUS_VFS_BPF_H
#define ARGUS_VFS_BPF_H

#define REGULAR_FILE_TYPE 0100000 /* S_IFREG */

/*
 * Target thread ts (current: the switch is on its way out) blocks at now,
 * outside every path that counts its own sleep, in a call of this role
 * whose first argument is fd (blocked_call): if it is a read or write of a
 * regular file, or a call on the file system's names, sizes or durability
 * (ARGUS_SYS_PATH, whatever its descriptor), a wait on the file system
 * begins.
 */
static __always_inline void vfs_wait_begin(struct thread_state *ts, __u32 role, long fd,
					   __u64 now)
{
	if (role != ARGUS_SYS_PATH) {
		if (role != ARGUS_SYS_READ && role != ARGUS_SYS_WRITE && role != ARGUS_SYS_PREAD &&
		    role != ARGUS_SYS_PWRITE)
			return;
		if (fd_file_type(fd) != REGULAR_FILE_TYPE)
			return;
	}
	ts->sync.vfs_since = now;
	ts->waker.seen = 0;
}

/* The thread's wait on the file system, if it was in one, ended at now (its wakeup). */
static __always_inline void vfs_wait_end(struct thread_state *ts, __u64 now)
{
	__u64 t;

	if (!ts->sync.vfs_since)
		return;
	t = now > ts->sync.vfs_since ? now - ts->sync.vfs_since : 0;
	ts->sync.vfs_since = 0;
	account_thread(ts, ARGUS_CLS_VFS_WAIT, 1, t);
	note_waker(ts, ARGUS_CLS_VFS_WAIT, t);
}

#endif /* ARGUS_VFS_BPF_H */
