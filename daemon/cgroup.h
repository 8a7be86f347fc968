/* SPDX-License-Identifier: MIT */
/*
 * The cgroup file system as the target of a diagnosis: a service is every
 * process of one cgroup and of the cgroups below it. One hierarchy tracks
 * services: the unified cgroup2 hierarchy when it is mounted at
 * /sys/fs/cgroup, else systemd's named v1 hierarchy (name=systemd), found
 * from the mount table. A cgroup path ("/system.slice/redis-server.service")
 * is relative to the root of that hierarchy, as in /proc/PID/cgroup; its
 * directory is the mount point joined with the path. Reads are bounded: the
 * mount table, /proc/PID/cgroup, each cgroup.procs, the depth and the number
 * of cgroups walked.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_PATH_MAX 512		 /* characters of a cgroup path */
#define CGROUP_WALK_DEPTH_MAX 32	 /* levels below a cgroup that cgroup_procs walks */
#define CGROUP_WALK_DIRS_MAX 65536	 /* cgroups that one cgroup_procs walks at most */
#define CGROUP_PROCS_FILE_MAX (4u << 20) /* bytes of one cgroup.procs (~500 000 pids) */
#define CGROUP_PROCS_PIDS_MAX (4u << 20) /* the largest max of cgroup_procs (pid_max's limit) */

/* The kinds of hierarchy (cgroup_dir's *ret_kind); compare with strcmp. */
#define CGROUP_KIND_V2 "cgroup2"
#define CGROUP_KIND_V1_SYSTEMD "cgroup1-systemd"

/*
 * Whether path is a cgroup path a caller may name: absolute, at most
 * CGROUP_PATH_MAX characters, components of [A-Za-z0-9_.:@\-] (the
 * characters of systemd unit names, escapes included), no "." or ".."
 * component, no empty component ("//", a trailing "/"), except "/" itself,
 * the root. Pure.
 */
bool cgroup_path_valid(const char *path);

/*
 * The hierarchy that tracks services, chosen from a mount table: the text of
 * /proc/self/mountinfo (mountinfo true) or of /proc/mounts (false). cgroup2
 * mounted at /sys/fs/cgroup wins; else the first cgroup v1 mount with the
 * option name=systemd (on hybrid systems that is where systemd places units,
 * the cgroup2 mount at /sys/fs/cgroup/unified beside it is not chosen). Sets
 * *ret_root (malloc'ed mount point, octal escapes undone) and *ret_kind
 * (CGROUP_KIND_*, static) and returns 0; -ENOENT when neither is mounted.
 * Pure.
 */
int cgroup_hierarchy_parse(const char *table, bool mountinfo, char **ret_root,
			   const char **ret_kind);

/*
 * The same from this process's mount table: /proc/self/mountinfo, or
 * /proc/mounts when that cannot be read. -ENOENT when no such hierarchy is
 * mounted; another negative errno when neither table can be read.
 */
int cgroup_hierarchy(char **ret_root, const char **ret_kind);

/*
 * The directory of cgroup path in the hierarchy that tracks services
 * (cgroup_hierarchy), e.g. "/sys/fs/cgroup/system.slice/x.service" for
 * "/system.slice/x.service"; "/" gives the mount point itself. *ret_dir is
 * malloc'ed, *ret_kind (may be NULL) static. The directory need not exist
 * (cgroup_procs tells). -EINVAL when path is not cgroup_path_valid, -ENOENT
 * when no hierarchy tracks services.
 */
int cgroup_dir(const char *path, char **ret_dir, const char **ret_kind);

/*
 * The cgroup path in the hierarchy of kind kind, from the text of a
 * /proc/PID/cgroup: the "0::PATH" line for cgroup2, the line whose
 * controller list holds name=systemd for cgroup1-systemd. *ret_path is
 * malloc'ed. -ENOENT when the text has no such line, -ESRCH when the kernel
 * marks the cgroup deleted (only an exited process can be in one), -EINVAL
 * for an unknown kind. Pure.
 */
int cgroup_parse_proc_cgroup(const char *text, const char *kind, char **ret_path);

/*
 * The cgroup path of process pid in the hierarchy cgroup_dir uses, as
 * /proc/PID/cgroup gives it (relative to this process's cgroup namespace).
 * *ret_path is malloc'ed. -ESRCH when there is no such process, -EINVAL for
 * pid <= 0, -ENOENT when no hierarchy tracks services or the process is not
 * in it.
 */
int cgroup_of_pid(pid_t pid, char **ret_path);

/*
 * Every process (tgid) of the cgroup at directory dir and of all the cgroups
 * below it, up to CGROUP_WALK_DEPTH_MAX levels and CGROUP_WALK_DIRS_MAX
 * cgroups: into ret (room for max, which is at most CGROUP_PROCS_PIDS_MAX;
 * ret may be NULL when max is 0), ascending, each once. *ret_n is the count
 * written. *ret_truncated (may be NULL) is true when the cgroups held more
 * than max processes, or more cgroups or a larger cgroup.procs than the
 * bounds allow: then ret holds max of them, not necessarily the smallest.
 * Cgroups that vanish while walked are skipped, threaded cgroups below dir
 * (whose processes are listed in their domain) too. -ENOENT when dir is not
 * a cgroup (gone, or never was), -EOPNOTSUPP when dir itself is threaded,
 * -EINVAL for max above the bound; ret, *ret_n and *ret_truncated are
 * written only on success.
 */
int cgroup_procs(const char *dir, pid_t *ret, size_t max, size_t *ret_n, bool *ret_truncated);

/*
 * The cgroup id of the cgroup at directory dir: the inode number of the
 * directory on cgroup2, which is what bpf_get_current_cgroup_id() returns for
 * a task in it. kind is cgroup_dir's. -EOPNOTSUPP when kind is not cgroup2 or
 * dir is not on a cgroup2 file system (v1 cgroups have no such id), -ENOENT
 * when dir does not exist, -ENOTDIR when it is no directory.
 */
int cgroup_id(const char *dir, const char *kind, uint64_t *ret);

/*
 * The usage_usec line of a cgroup2 cpu.stat file's text, in ns: the CPU time
 * of every task that has run in the cgroup or below it, the exited ones
 * included. -EIO when text has no such line. Pure.
 */
int cgroup_parse_cpu_stat(const char *text, uint64_t *ret_ns);

/*
 * The CPU time that the cgroup at directory dir (kind is cgroup_dir's) and
 * the cgroups below it have used so far, from its cpu.stat, which cgroup2
 * keeps in every cgroup, its cpu controller enabled or not. -EOPNOTSUPP
 * when kind is not cgroup2 (v1's name=systemd hierarchy counts no CPU),
 * -ENOENT when dir is gone, -EIO when cpu.stat says no usage.
 */
int cgroup_cpu_ns(const char *dir, const char *kind, uint64_t *ret_ns);

/*
 * The cgroup ids (cgroup_id) of the cgroup at directory dir and of every
 * cgroup below it, up to CGROUP_WALK_DEPTH_MAX levels: into ret (room for
 * max), dir's first. *ret_n is the count written; *ret_truncated (may be
 * NULL) is true when there were more than max, or more cgroups than
 * CGROUP_WALK_DIRS_MAX. Cgroups that vanish while walked are skipped. The
 * errors of cgroup_id for dir itself.
 */
int cgroup_subtree_ids(const char *dir, const char *kind, uint64_t *ret, size_t max,
		       size_t *ret_n, bool *ret_truncated);
