// SPDX-License-Identifier: MIT
/*
 * System call numbers from <sys/syscall.h>, so that the probe carries none.
 * See syscalls.h.
 */
#include "daemon/syscalls.h"
#include "bpf/paths.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <sys/syscall.h>

/*
 * Calls some architectures lack (arm64 has no fork, poll, select or
 * epoll_wait), or that the C library's headers may predate. Calls from
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
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
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
