// SPDX-License-Identifier: MIT
/*
 * System call numbers from <sys/syscall.h>, so that the probe carries none.
 * See syscalls.h.
 */
#include "daemon/syscalls.h"
#include "daemon/log.h"
#include "daemon/tracefs.h"
#include "bpf/paths.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

/*
 * Calls some architectures lack (arm64 has no fork, poll, select or
 * epoll_wait, nor the calls on a path that the *at calls replaced), or that
 * the C library's headers may predate. Calls from
 * pidfd_send_signal (424) on have one number on every architecture, so the
 * newer ones can be named when the headers are older than the kernel.
 */
#ifndef SYS_fork
#define SYS_fork -1
#endif
#ifndef SYS_poll
#define SYS_poll -1
#endif
#ifndef SYS_select
#define SYS_select -1
#endif
#ifndef SYS_epoll_wait
#define SYS_epoll_wait -1
#endif
#ifndef SYS_accept
#define SYS_accept -1
#endif
#ifndef SYS_recvfrom
#define SYS_recvfrom -1
#endif
#ifndef SYS_sendto
#define SYS_sendto -1
#endif
#ifndef SYS_open
#define SYS_open -1
#endif
#ifndef SYS_creat
#define SYS_creat -1
#endif
#ifndef SYS_mkdir
#define SYS_mkdir -1
#endif
#ifndef SYS_mknod
#define SYS_mknod -1
#endif
#ifndef SYS_unlink
#define SYS_unlink -1
#endif
#ifndef SYS_rmdir
#define SYS_rmdir -1
#endif
#ifndef SYS_rename
#define SYS_rename -1
#endif
#ifndef SYS_renameat
#define SYS_renameat -1
#endif
#ifndef SYS_link
#define SYS_link -1
#endif
#ifndef SYS_symlink
#define SYS_symlink -1
#endif
#ifndef SYS_stat
#define SYS_stat -1
#endif
#ifndef SYS_lstat
#define SYS_lstat -1
#endif
#ifndef SYS_getdents
#define SYS_getdents -1
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef SYS_futex_wait
#define SYS_futex_wait 455
#endif

static const struct syscall_role table[] = {
#define SYSCALL_ROW(name, role) {#name, SYS_##name, ARGUS_SYS_##role},
    ARGUS_SYSCALLS(SYSCALL_ROW)
#undef SYSCALL_ROW
};

const struct syscall_role *syscall_roles(size_t *ret_n)
{
	*ret_n = sizeof(table) / sizeof(table[0]);
	return table;
}

int syscall_roles_write(struct bpf_map *map)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		__u32 key = (__u32)table[i].nr;
		__u8 role = (__u8)table[i].role;

		if (table[i].nr < 0)
			continue;
		if (table[i].nr >= ARGUS_SYSCALL_NR_MAX)
			return -ERANGE;
		if (bpf_map__update_elem(map, &key, sizeof(key), &role, sizeof(role), BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

#define N_CALLS (sizeof(table) / sizeof(table[0]))

static int enter_ids[N_CALLS], exit_ids[N_CALLS];
static size_t n_with_events;

/* The name of a call's events in tracefs: the call's own, but sendfile's are sendfile64's. */
static const char *event_name(const char *call)
{
	return strcmp(call, "sendfile") == 0 ? "sendfile64" : call;
}

static void event_ids_ask(void)
{
	char names[2 * N_CALLS][64];
	const char *events[2 * N_CALLS];
	int ids[2 * N_CALLS];
	size_t i;
	int r;

	for (i = 0; i < N_CALLS; i++) {
		snprintf(names[2 * i], sizeof(names[0]), "syscalls/sys_enter_%s",
			 event_name(table[i].name));
		snprintf(names[2 * i + 1], sizeof(names[0]), "syscalls/sys_exit_%s",
			 event_name(table[i].name));
		events[2 * i] = names[2 * i];
		events[2 * i + 1] = names[2 * i + 1];
	}
	r = tracefs_event_ids(events, 2 * N_CALLS, ids);
	if (r < 0)
		log_warning("system call events: tracefs cannot be read (%s): the probe follows "
			    "system calls through raw_syscalls, which every call of every task runs",
			    strerror(-r));
	for (i = 0; i < N_CALLS; i++) {
		/* a call this architecture lacks has no event to attach either */
		enter_ids[i] = table[i].nr >= 0 ? ids[2 * i] : -1;
		exit_ids[i] = table[i].nr >= 0 ? ids[2 * i + 1] : -1;
		if (enter_ids[i] >= 0 && exit_ids[i] >= 0)
			n_with_events++;
	}
}

size_t syscall_event_ids(const int **ret_enter, const int **ret_exit)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, event_ids_ask);
	*ret_enter = enter_ids;
	*ret_exit = exit_ids;
	return n_with_events;
}

static enum syscall_events chosen = SYSCALL_EVENTS_RAW;

int syscall_events_parse(const char *name, enum syscall_events *ret)
{
	if (!strcmp(name, "raw"))
		*ret = SYSCALL_EVENTS_RAW;
	else if (!strcmp(name, "calls"))
		*ret = SYSCALL_EVENTS_CALLS;
	else if (!strcmp(name, "none"))
		*ret = SYSCALL_EVENTS_NONE;
	else
		return -EINVAL;
	return 0;
}

void syscall_events_set(enum syscall_events how)
{
	__atomic_store_n(&chosen, how, __ATOMIC_RELAXED);
}

bool syscall_events_per_call(void)
{
	const int *enter, *exit;

	return __atomic_load_n(&chosen, __ATOMIC_RELAXED) == SYSCALL_EVENTS_CALLS &&
	       syscall_event_ids(&enter, &exit) > 0;
}

bool syscall_events_none(void)
{
	return __atomic_load_n(&chosen, __ATOMIC_RELAXED) == SYSCALL_EVENTS_NONE;
}

bool syscall_event_raw(const char *tracepoint)
{
	return strcmp(tracepoint, "sys_enter") == 0 || strcmp(tracepoint, "sys_exit") == 0;
}

const char *syscall_events_name(void)
{
	return syscall_events_none() ? "none" : syscall_events_per_call() ? "calls" : "raw";
}
