/* SPDX-License-Identifier: MIT */
/*
 * Resolving the tree against the running kernel: for every node, try its
 * backends in order (fentry, kprobe, tracepoint, or the order the "backends"
 * setting gives) and each backend's hooks in order, by actually loading and
 * attaching; record the first that works, or why none did. The probing itself
 * is behind an interface so that the choice logic is tested without a kernel.
 */
#pragma once

#include "daemon/tree.h"

struct prober {
	/*
	 * Try one hook by its name (a function symbol, or one tracepoint: the
	 * resolver tries an alternative's hooks one at a time): 0 when a
	 * program of this backend loads and attaches to it here; else a
	 * negative errno and *ret_reason (malloc'ed) saying why, e.g. "kprobe:
	 * kernel has no kprobe support (CONFIG_KPROBES off)". order is the
	 * resolution's: a tracepoint's program may need programs on function
	 * backends beside it (probe_plan_stand_in), which it must allow.
	 */
	int (*try_hook)(void *userdata, const struct backend_order *order, enum backend b,
			const char *hook, char **ret_reason);
	void *userdata;
};

/* The default order: fentry, kprobe, tracepoint. */
void backend_order_default(struct backend_order *ret);
/*
 * Parse the "backends" setting: backend names separated by spaces, tabs or
 * commas ("kprobe tracepoint"), at least one, none twice, no other word.
 * Returns 0 and *ret, or -EINVAL (*ret untouched).
 */
int backend_order_parse(const char *text, struct backend_order *ret);
/* Is b in the order (NULL or n == 0: the default, which holds every backend)? */
bool backend_order_has(const struct backend_order *o, enum backend b);
/* ["fentry", ...] in order; NULL or n == 0: the default. NULL only on allocation failure. */
json_t *backend_order_to_json(const struct backend_order *o);
/* "fentry kprobe tracepoint" (malloc'ed), as the setting writes it; NULL or n == 0: the default. */
char *backend_order_to_string(const struct backend_order *o);

/*
 * Resolve every node (earlier results are replaced), trying the backends of
 * order (NULL or n == 0: the default) and no others. Rules:
 *  - A node with hooks tries the backends in order (default fentry, kprobe,
 *    tracepoint) and each backend's alternatives in file order; the first accepted is
 *    chosen (tree_node_choose: node->backend, node->chosen, node->hook). An
 *    alternative of several tracepoints is probed one tracepoint at a time
 *    and chosen when all attach.
 *  - try_hook is called once per (backend, hook) for the whole tree; later
 *    uses of the same pair reuse its answer.
 *  - node->reason lists the refusals met before the choice, or all of them
 *    when nothing was accepted, as "<backend>: <hook>: <why>" joined by "; "
 *    (a leading "<backend>: " in the prober's reason is dropped; a missing
 *    reason is strerror of the error); NULL when the first try worked.
 *  - An inner node without hooks, or whose hooks were all refused, is
 *    measured through its children's classes: available when at least one
 *    child is, backend = the one most of its available children use (ties:
 *    the earlier backend of the order), chosen = the hooks the children on
 *    that backend chose, each once, in child order (node->hook
 *    "page_fault_user+rss_stat+mm_page_alloc"; for fentry/kprobe, a list of
 *    functions); the reason names the children that are not available. When
 *    none is, the reason quotes each child's reason ("no child is
 *    available: id [reason], ..."). Children's hooks beyond
 *    TREE_MAX_NODE_HOOKS leave the node unavailable, and its reason says so.
 *  - A leaf without hooks is unavailable: "no hooks declared".
 *  - A backend left out of the order is never tried; a node that declares
 *    hooks for it starts its reason with "<backend>: not in the backends
 *    setting" (in the default order of backends), so that whoever reads
 *    GET /tree sees why the node is not on it.
 *  - t->backends keeps order (as given: n == 0 for the default), for the
 *    loader to choose the same stand-ins the tries did.
 * Returns the number of unavailable nodes, or -EINVAL (also for an order that
 * repeats or names an unknown backend) / -ENOMEM.
 */
int tree_resolve_backends(struct tree *t, const struct prober *p,
			  const struct backend_order *order);
/* tree_resolve_backends with the default order. */
int tree_resolve(struct tree *t, const struct prober *p);
