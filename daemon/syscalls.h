/* SPDX-License-Identifier: MIT */
/*
 * The numbers of the system calls the probe tells apart (ARGUS_SYSCALLS in
 * bpf/paths.h), on the architecture argusd is built for.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct bpf_map;

struct syscall_role {
	const char *name;
	long nr; /* -1: this architecture has no such call */
	unsigned role; /* enum argus_sys_role */
};

/* The table, in ARGUS_SYSCALLS order; *ret_n entries. */
const struct syscall_role *syscall_roles(size_t *ret_n);

/* Write every present call's role into the probe's syscall_roles map. 0 or a negative errno. */
int syscall_roles_write(struct bpf_map *map);

/*
 * The kernel's own events of each call of the table (tracefs's
 * syscalls/sys_enter_NAME and sys_exit_NAME), in table order: their ids,
 * -1 where the kernel has none (or tracefs could not be read). Asked once
 * per process; the ids hold until the kernel boots again. Returns how many
 * calls have both.
 */
size_t syscall_event_ids(const int **ret_enter, const int **ret_exit);

/*
 * The syscall_events setting, for the whole process (set before the first
 * probe loads): how the probe follows the calls it tells apart.
 *  - raw: raw sys_enter and sys_exit, which every call of every task on
 *    the host runs (the process's setting until one is set: the tests of
 *    what single calls cost the target use it);
 *  - calls: the calls' own events where they can be attached (else raw);
 *  - none: no system call event. A call is seen only when it sleeps, at the
 *    switch, from the registers it saved (bpf/calls.bpf.h): its wait runs
 *    from the switch to the wakeup, a call that does not sleep is not
 *    counted, and creation is counted without the parent's time. Every
 *    other task's calls run at the kernel's full speed. argusd's default
 *    (SYSCALL_EVENTS_DEFAULT).
 */
enum syscall_events {
	SYSCALL_EVENTS_RAW,
	SYSCALL_EVENTS_CALLS,
	SYSCALL_EVENTS_NONE,
};

/* argusd.conf's syscall_events when it names none (README, "Configuration" and "Probe cost"). */
#define SYSCALL_EVENTS_DEFAULT SYSCALL_EVENTS_NONE

/* The setting by its name in argusd.conf; 0, or -EINVAL for another name. */
int syscall_events_parse(const char *name, enum syscall_events *ret);
void syscall_events_set(enum syscall_events how);
/* Does the probe follow system calls through their own events here (the setting and tracefs)? */
bool syscall_events_per_call(void);
/* Does it follow them through no event at all (none)? */
bool syscall_events_none(void);
/* Is tracepoint (a name without prefix: "sys_enter") one of the raw system call events? */
bool syscall_event_raw(const char *tracepoint);
/* What the probe follows system calls through here: "calls", "raw" or "none" (references record it). */
const char *syscall_events_name(void);
