/* SPDX-License-Identifier: MIT */
/*
 * Running a program where it can read only what it needs (the compiler of
 * authored probes: compile.h).
 *
 * The child gets its own mount namespace, made by root before anything
 * else, whose root is a fresh tmpfs holding exactly: the program, its ELF
 * interpreter and the shared libraries it needs (read-only bind mounts at
 * their own paths, the symlinks on the way recreated as symlinks), and the
 * directories the caller binds (read-only or read-write). It then pivots
 * into that root, detaches the old one and remounts the root read-only.
 * Next come new user, network, IPC, UTS and PID namespaces: the user
 * namespace maps only the sandbox's uid and gid to themselves, so inside
 * and outside the program runs as that unprivileged uid, with no
 * supplementary groups, empty effective, permitted, inheritable, ambient
 * and bounding capability sets, locked securebits and no_new_privs; the
 * mount namespace belongs to the initial user namespace, so it cannot undo
 * a mount. The network namespace has nothing but a loopback interface that
 * is down. The program is the PID namespace's first process: whatever it
 * leaves running dies with it.
 *
 * Everything that can fail and needs memory happens in the parent; the
 * child between fork and exec makes system calls only, and reports the
 * step that failed over a pipe. When a namespace cannot be made (user
 * namespaces disabled, a chroot, a seccomp or systemd restriction) the
 * spawn fails with that step named: nothing runs outside the sandbox.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SANDBOX_MAX_OPS 512   /* directories, symlinks, files and binds in one root */
#define SANDBOX_MAX_BINDS 8
#define SANDBOX_MAX_DEPTH 40  /* symlinks followed and libraries nested, like the loader */
#define SANDBOX_NOBODY 65534u /* the default uid and gid */

struct sandbox_bind {
	const char *host;   /* an existing directory on the host, absolute */
	const char *inside; /* where it appears in the sandbox, absolute, no "." or ".." */
	bool writable;	    /* else read-only; both are nosuid, nodev, noexec */
};

struct sandbox_limits {
	unsigned cpu_s;		  /* RLIMIT_CPU (the hard limit one second later); 0: none */
	unsigned long long fsize; /* RLIMIT_FSIZE bytes; 0: none */
	unsigned long long as;	  /* RLIMIT_AS bytes; 0: none */
	unsigned nofile;	  /* RLIMIT_NOFILE; 0: none */
};

struct sandbox_spec {
	const char *program;  /* absolute path of an ELF executable */
	const struct sandbox_bind *binds;
	size_t n_binds;
	const char *root_dir; /* an empty host directory: the new root is mounted on it (privately) */
	const char *cwd;      /* working directory inside; NULL: "/" */
	uid_t uid;	      /* the sandbox's identity, not 0 */
	gid_t gid;	      /* not 0 */
	struct sandbox_limits limits;
};

struct sandbox;

/*
 * Plan a sandbox: resolve the program's interpreter and libraries (its
 * DT_NEEDED entries, recursively, through DT_RPATH/DT_RUNPATH,
 * /etc/ld.so.cache and the default directories, as the dynamic loader
 * does) and the symlinks on the way. Reads the host's files; starts
 * nothing. Returns 0 and *ret, or a negative errno and *ret_err (malloc'ed)
 * saying what could not be resolved.
 */
int sandbox_new(const struct sandbox_spec *spec, struct sandbox **ret, char **ret_err);
void sandbox_free(struct sandbox *s);

/*
 * What the sandbox holds besides the binds: the paths (as seen inside) of
 * every directory, symlink and file it creates, in creation order. For
 * tests and diagnostics; the array belongs to s.
 */
size_t sandbox_paths(const struct sandbox *s, const char *const **ret);

/*
 * Start argv (argv[0]: the program's path) in the sandbox with envp (and
 * LD_LIBRARY_PATH naming the library directories), stdin /dev/null, stdout
 * and stderr on out_fd. Returns 0 with *ret_pid once the program has been
 * executed: the caller waits for it (and may kill its process group,
 * -pid). On failure nothing runs any more, the child has been reaped, and
 * *ret_err (malloc'ed) names the step that failed.
 */
int sandbox_spawn(const struct sandbox *s, char *const argv[], char *const envp[], int out_fd,
		  pid_t *ret_pid, char **ret_err);
