/* SPDX-License-Identifier: MIT */
/*
 * The ids of the kernel's trace events (tracefs's events/SYSTEM/EVENT/id),
 * which a perf event needs to attach a program to one of them. Where the
 * host has not mounted tracefs, a child process mounts it in a mount
 * namespace of its own, reads the ids there and exits: nothing changes on
 * the host.
 */
#pragma once

#include <stddef.h>

/*
 * The id of each event events[i] ("syscalls/sys_enter_futex"), into
 * ret_ids[i]; -1 for an event this kernel does not have. 0, or a negative
 * errno when tracefs could not be read at all (then every id is -1).
 */
int tracefs_event_ids(const char *const *events, size_t n, int *ret_ids);

/*
 * A perf event of trace event id on every CPU (a program attached to it
 * runs wherever the event fires): its fd, or a negative errno.
 */
int tracefs_event_open(int id);
