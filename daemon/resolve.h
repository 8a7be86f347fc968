/* SPDX-License-Identifier: MIT */
/*
 * Resolving the tree against the running kernel: for every node, try its
 * backends in order (fentry, kprobe, tracepoint) and each backend's hooks in
 * order, by actually loading and attaching; record the first that works, or
 * why none did. The probing itself is behind an interface so that the choice
 * logic is tested without a kernel.
 */
#pragma once

#include "daemon/tree.h"

struct prober {
	/*
	 * Try one hook: 0 when a program of this backend loads and attaches
	 * to it here; else a negative errno and *ret_reason (malloc'ed) saying
	 * why, e.g. "kprobe: kernel has no kprobe support (CONFIG_KPROBES off)".
	 */
	int (*try_hook)(void *userdata, enum backend b, const char *hook, char **ret_reason);
	void *userdata;
};

/*
 * Resolve every node. Leaves: first (backend, hook) that try_hook accepts.
 * Inner nodes: their own hooks if they have any, else available when at
 * least one descendant is (backend = the one most children use).
 * Results cached per (backend, hook) so each is tried once. Returns the
 * number of unavailable nodes.
 */
int tree_resolve(struct tree *t, const struct prober *p);
