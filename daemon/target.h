/* SPDX-License-Identifier: MIT */
/*
 * Running and observing targets.
 *
 * A registered workload is spawned stopped: the child is forked into its own
 * process group, pinned to the workload's CPUs, its credentials dropped to
 * the workload's user, its stdout and stderr captured (bounded), and it
 * waits on a pipe before exec so that probes and counters can be attached
 * to its pid first. target_release() lets it exec; target_wait() waits for
 * it, killing the whole process group at the time limit or when asked to
 * stop.
 *
 * A running target (pid) is observed for a window instead.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/workload.h"

#define TARGET_OUTPUT_MAX (16 * 1024) /* bytes of output kept (the tail) */

struct target_run;

struct target_result {
	uint64_t wall_ns;  /* exec to exit (or to the kill) */
	/* its CPU time in user space and in the kernel, with its reaped children's (wait4) */
	uint64_t user_ns, sys_ns;
	int exit_status;   /* when exited normally */
	int term_signal;   /* when killed by a signal, 0 otherwise */
	bool timed_out;	   /* killed at its time limit */
	bool stopped;	   /* killed because should_stop said so */
	bool exec_failed;  /* never ran: see error */
	char *error;	   /* human reason when it did not run or exit 0, else NULL */
	char *output_tail; /* last TARGET_OUTPUT_MAX bytes of stdout+stderr */
};
void target_result_clear(struct target_result *r);

/*
 * The program a workload runs: argv[0] when absolute, else victims_dir/argv[0].
 * -EINVAL (with *ret_err) when it cannot be resolved.
 */
int target_resolve_program(const struct workload *w, const char *victims_dir, char **ret_path,
			   char **ret_err);
/*
 * Whether the workload's user can run its program, checked with that user's
 * credentials: the program exists, is a regular file, and the kernel lets the
 * user search every directory on its path and execute it. 0, or a negative
 * errno with *ret_err naming what stops it and the fix. Forks a short-lived
 * child; safe in a multithreaded process.
 */
int target_check_program(const struct workload *w, const char *victims_dir, char **ret_err);
/*
 * Fork the workload, stopped before exec. victims_dir resolves argv[0]
 * without '/'. Fails early (-ENOENT, -EACCES) with *ret_err when the
 * program is missing or not executable, or the user unknown (-ESRCH);
 * -EINVAL when none of the workload's CPUs is online and allowed to us.
 * The child gets a clean environment (PATH, HOME, USER, LOGNAME, LANG,
 * ARGUS_TARGET=1), "/" as working directory and umask 022.
 * The child's parent death signal follows the calling thread: that thread
 * must outlive the run. The process must not ignore SIGCHLD nor let another
 * thread reap with waitpid(-1).
 */
int target_spawn(const struct workload *w, const char *victims_dir, struct target_run **ret,
		 char **ret_err);
/* The child's pid (also its process group id). */
pid_t target_pid(const struct target_run *t);
/* The resolved program path. */
const char *target_path(const struct target_run *t);
/* Let the child exec; its wall clock starts now. */
int target_release(struct target_run *t);
/*
 * Wait for the child to end. should_stop (may be NULL) is polled about
 * every 20 ms; when it returns true the process group is killed and
 * ret->stopped set. On the time limit the group gets SIGKILL and
 * ret->timed_out is set. Returns 0 once the child is reaped (whatever its
 * status), negative errno only on internal failure.
 */
int target_wait(struct target_run *t, bool (*should_stop)(void *), void *userdata,
		struct target_result *ret);
/* Kill the process group if still running, reap, free. NULL is fine. */
void target_free(struct target_run *t);

/*
 * Check that pid may be observed: it exists, is not a kernel thread, not
 * pid 1 and not argusd itself. -ESRCH/-EPERM with *ret_err.
 */
int target_pid_check(pid_t pid, char **ret_err);
/*
 * Observe a running pid for window_ms (polling should_stop). ret->wall_ns is
 * the window actually observed; when the process exits before the end,
 * ret->error says so and the function returns -ESRCH.
 */
int target_observe(pid_t pid, unsigned window_ms, bool (*should_stop)(void *), void *userdata,
		   struct target_result *ret);
/* A process's CPU time (user and system, in ns, at clock-tick resolution), from /proc/PID/stat. */
struct target_cpu {
	uint64_t own_ns;    /* its threads', the ones that have exited included */
	uint64_t reaped_ns; /* its children's that it has waited for (and theirs, waited for) */
	uint64_t start_ns;  /* when it started, on CLOCK_BOOTTIME */
	pid_t ppid;
};
/* Process pid's CPU time so far. -ESRCH when gone. */
int target_cpu(pid_t pid, struct target_cpu *ret);
/* Thread ids of pid (from /proc/PID/task), ascending; the first max when there are more. */
int target_threads(pid_t pid, pid_t *ret_tids, size_t max, size_t *ret_n);
