/* SPDX-License-Identifier: MIT */
/*
 * The real prober of resolution (resolve.h): one hook tried on the running
 * kernel by loading and attaching a program of the multiplexed probe to it,
 * then releasing everything. A refusal is an answer, said in the reason,
 * not logged.
 */
#pragma once

#include "daemon/tree.h"

struct btf;

/* What probe_try_hook keeps between hooks of one resolution (its userdata). */
struct probe_resolver {
	struct btf *vmlinux; /* the kernel's BTF, parsed on first need */
};
void probe_resolver_clear(struct probe_resolver *r);

/*
 * The real prober for tree_resolve: loads and attaches a program of that
 * backend to the hook of that name (a function, or one tracepoint) here,
 * then releases it. userdata: a struct probe_resolver (cleared by the
 * caller afterwards), or NULL.
 */
int probe_try_hook(void *userdata, const struct backend_order *order, enum backend b,
		   const char *hook, char **ret_reason);
