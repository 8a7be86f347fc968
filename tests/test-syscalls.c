// SPDX-License-Identifier: MIT
/*
 * The system calls the probe tells apart (daemon/syscalls.c): every call of
 * ARGUS_SYSCALLS once, with a role, and a number that this kernel runs.
 * The numbers written without the C library's help (the calls from 424 on,
 * one number on every architecture) must not be ENOSYS here, called with
 * arguments that make each fail at once. test-probe shows the roles at work:
 * pipe, socket, epoll, lock and futex waits counted from real calls.
 */
#include "bpf/paths.h"
#include "daemon/syscalls.h"
#include "tests/tap.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

static const struct syscall_role *find(const struct syscall_role *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

static void test_table(void)
{
	size_t n, i, j;
	const struct syscall_role *v = syscall_roles(&n);
	static const char *const names[] = {
#define NAME_ROW(name, role) #name,
	    ARGUS_SYSCALLS(NAME_ROW)
#undef NAME_ROW
	};

	CHECK_EQ(n, sizeof(names) / sizeof(names[0]), "rows");
	for (i = 0; i < n; i++) {
		CHECKF(v[i].role > ARGUS_SYS_NONE && v[i].role <= ARGUS_SYS_SYNC, "%s: role %u",
		       v[i].name, v[i].role);
		CHECKF(v[i].nr >= -1 && v[i].nr < ARGUS_SYSCALL_NR_MAX, "%s: %ld", v[i].name,
		       v[i].nr);
		for (j = 0; j < i; j++)
			CHECKF(v[j].nr < 0 || v[j].nr != v[i].nr, "%s and %s share %ld", v[j].name,
			       v[i].name, v[i].nr);
	}
	/* what every architecture has, from the C library's headers */
	CHECK(find(v, n, "futex") && find(v, n, "futex")->nr == SYS_futex);
	CHECK(find(v, n, "read") && find(v, n, "read")->nr == SYS_read);
	CHECK(find(v, n, "epoll_pwait") && find(v, n, "epoll_pwait")->nr == SYS_epoll_pwait);
	CHECK(find(v, n, "fcntl") && find(v, n, "fcntl")->role == ARGUS_SYS_FCNTL);
	CHECK(find(v, n, "pread64") && find(v, n, "pread64")->nr == SYS_pread64 &&
	      find(v, n, "pread64")->role == ARGUS_SYS_PREAD);
	CHECK(find(v, n, "pwritev2") && find(v, n, "pwritev2")->role == ARGUS_SYS_PWRITE);
	CHECK(find(v, n, "sendfile") && find(v, n, "sendfile")->nr == SYS_sendfile &&
	      find(v, n, "sendfile")->role == ARGUS_SYS_SEND);
	CHECK(find(v, n, "openat") && find(v, n, "openat")->nr == SYS_openat &&
	      find(v, n, "openat")->role == ARGUS_SYS_PATH);
	CHECK(find(v, n, "renameat2") && find(v, n, "renameat2")->nr == SYS_renameat2 &&
	      find(v, n, "renameat2")->role == ARGUS_SYS_PATH);
	CHECK(find(v, n, "fsync") && find(v, n, "fsync")->role == ARGUS_SYS_SYNC);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;

	REQUIRE(uname(&u) == 0 && sscanf(u.release, "%d.%d", &a, &b) == 2);
	return a > major || (a == major && b >= minor);
}

/* The calls numbered by hand: the kernel knows each (an error, never ENOSYS). */
static void test_kernel_knows(void)
{
	size_t n;
	const struct syscall_role *v = syscall_roles(&n);
	const struct syscall_role *r;
	long rc;

	/* clone3 with a size of 0: EINVAL before anything is created */
	r = find(v, n, "clone3");
	REQUIRE(r);
	errno = 0;
	rc = syscall(r->nr, NULL, 0);
	CHECKF(rc == -1 && errno != ENOSYS, "clone3 (%ld): rc %ld errno %d", r->nr, rc, errno);
	/* epoll_pwait2 on descriptor -1: EBADF */
	r = find(v, n, "epoll_pwait2");
	REQUIRE(r);
	errno = 0;
	rc = syscall(r->nr, -1, NULL, 1, NULL, NULL, 0);
	CHECKF(rc == -1 && errno != ENOSYS, "epoll_pwait2 (%ld): rc %ld errno %d", r->nr, rc,
	       errno);
	/* openat2 with a how of size 0: EINVAL */
	r = find(v, n, "openat2");
	REQUIRE(r);
	errno = 0;
	rc = syscall(r->nr, -1, "", NULL, 0);
	CHECKF(rc == -1 && errno != ENOSYS, "openat2 (%ld): rc %ld errno %d", r->nr, rc, errno);
	/* futex_waitv with no waiters: EINVAL */
	r = find(v, n, "futex_waitv");
	REQUIRE(r);
	errno = 0;
	rc = syscall(r->nr, NULL, 0, 0, NULL, 0);
	CHECKF(rc == -1 && errno != ENOSYS, "futex_waitv (%ld): rc %ld errno %d", r->nr, rc,
	       errno);
	/* futex_wait on no address: EINVAL or EFAULT; kernels before 6.7 lack it */
	r = find(v, n, "futex_wait");
	REQUIRE(r);
	errno = 0;
	rc = syscall(r->nr, NULL, 0, 0, 0, NULL, 0);
	CHECKF(rc == -1 && (errno != ENOSYS || !kernel_at_least(6, 7)),
	       "futex_wait (%ld): rc %ld errno %d", r->nr, rc, errno);
}

int main(void)
{
	tap_subtest("table");
	test_table();
	tap_subtest("kernel_knows");
	test_kernel_knows();
	return tap_done("test-syscalls");
}
