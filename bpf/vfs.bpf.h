/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Waits on the file system, seen from the scheduler: a target thread that
 * blocks outside every path that counts its own sleeps (a fault, an
 * iowait, which is block I/O, reclaim, compaction, an mmap_lock wait, a
 * futex or a call the syscall programs follow), inside a read or write of
 * a regular file or a call on the file system's names or sizes (open,
 * create, link, remove, rename, look up, list, truncate, allocate), waits
 * for the file system itself (kernel_sync.vfs_wait): an inode's or a
 * directory's lock that another task holds, a lease's holder, a permission
 * listener, a pseudo-file's mutex. Inside a call that makes data durable
 * (fsync, fdatasync, sync_file_range, syncfs, sync, or a write to a file
 * opened O_SYNC or O_DSYNC) it waits for writes that another task makes
 * for it (kernel_block_io.commit): a journal's commit, the flusher's
 * writeback; its own writes are its iowait. The wait runs from the switch
 * out to the wakeup; who woke it is noted as for any wait (the causal
 * chain).
 *
 * No system call event is needed, so none of the host's calls pays for it:
 * the call is read from the registers it saved (blocked_call, once per
 * blocking switch, in sched.bpf.h).
 * Part of the multiplexed probe: included by paths.bpf.c, after calls.bpf.h
 * (the calls' roles, the file behind a descriptor, note_waker).
 */
#ifndef ARGUS_VFS_BPF_H
#define ARGUS_VFS_BPF_H

#define REGULAR_FILE_TYPE 0100000 /* S_IFREG */
#define O_DSYNC_FLAG 010000	  /* O_DSYNC; O_SYNC includes it */

/*
 * Target thread ts (current: the switch is on its way out) blocks at now,
 * outside every path that counts its own sleep, in a call of this role
 * whose first argument is fd (blocked_call): if it is a call on the file
 * system's names or sizes (whatever its descriptor), or a read or write of
 * a regular file, a wait on the file system begins; if it makes data
 * durable, a wait for the writes made for it.
 */
static __always_inline void vfs_wait_begin(struct thread_state *ts, __u32 role, long fd,
					   __u64 now)
{
	__u32 cls = ARGUS_CLS_VFS_WAIT;
	struct file *f;

	if (role == ARGUS_SYS_SYNC) {
		cls = ARGUS_CLS_BLOCK_COMMIT;
	} else if (role != ARGUS_SYS_PATH) {
		if (role != ARGUS_SYS_READ && role != ARGUS_SYS_WRITE && role != ARGUS_SYS_PREAD &&
		    role != ARGUS_SYS_PWRITE)
			return;
		f = fd_file(fd);
		if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & FILE_TYPE_MASK) != REGULAR_FILE_TYPE)
			return;
		/* a write to a file opened for synchronous writes syncs it before returning */
		if ((role == ARGUS_SYS_WRITE || role == ARGUS_SYS_PWRITE) &&
		    (BPF_CORE_READ(f, f_flags) & O_DSYNC_FLAG))
			cls = ARGUS_CLS_BLOCK_COMMIT;
	}
	ts->sync.vfs_since = now;
	ts->sync.vfs_cls = cls;
	ts->waker.seen = 0;
}

/* The thread's wait on the file system or for a commit, if in one, ended at now (its wakeup). */
static __always_inline void vfs_wait_end(struct thread_state *ts, __u64 now)
{
	__u64 t;

	if (!ts->sync.vfs_since)
		return;
	t = now > ts->sync.vfs_since ? now - ts->sync.vfs_since : 0;
	ts->sync.vfs_since = 0;
	account_thread(ts, ts->sync.vfs_cls, 1, t);
	note_waker(ts, ts->sync.vfs_cls, t);
}

#endif /* ARGUS_VFS_BPF_H */
