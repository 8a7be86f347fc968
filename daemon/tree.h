/* SPDX-License-Identifier: MIT */
/*
 * The kernel code-path tree (tree-data/*.json): nodes with dotted ids,
 * metrics, the probe event classes they own, and hooks as ordered
 * alternatives per backend. Loading is pure; resolution against the running
 * kernel lives in resolve.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum backend {
	BACKEND_FENTRY,	    /* fentry/fexit: per-call count and latency */
	BACKEND_KPROBE,	    /* kprobe/kretprobe: per-call count and latency */
	BACKEND_TRACEPOINT, /* tracepoint family (tp_btf, raw_tp) with a classifier */
	BACKEND_MAX,
	BACKEND_NONE = -1,
};

/* "fentry", "kprobe", "tracepoint"; "none" for BACKEND_NONE. */
const char *backend_name(enum backend b);
/* Inverse of backend_name; BACKEND_NONE when unknown. */
enum backend backend_from_name(const char *s);

#define TREE_MAX_DEPTH 3
#define TREE_MAX_NODES 256

struct tree_node {
	char *id;	   /* "kernel_paging.anon_fault.minor" */
	char *name;	   /* last component: "minor" */
	char *description;
	int level;	   /* 1..TREE_MAX_DEPTH */
	int parent;	   /* index into tree.nodes, -1 at level 1 */
	int *children;	   /* indexes, in file order */
	size_t n_children;
	char **metrics;	   /* "count", "time_ns" */
	size_t n_metrics;
	unsigned classes;  /* bit mask of enum argus_class; inner nodes: union of descendants */
	/*
	 * Ordered alternatives per backend. fentry/kprobe: function names, symbol
	 * variants included ("do_wp_page", "do_wp_page.isra.0"). tracepoint: one
	 * alternative may need several tracepoints, joined by '+'
	 * ("page_fault_user+sched_switch"); all of them must attach.
	 */
	char **hooks[BACKEND_MAX];
	size_t n_hooks[BACKEND_MAX];

	/* Resolution (resolve.c) */
	enum backend backend;	/* chosen backend, BACKEND_NONE when unavailable */
	char *hook;		/* chosen hook, NULL when unavailable */
	char *reason;		/* why unavailable; or why earlier backends were refused */
};

struct tree {
	char *version; /* tree-data "version" */
	struct tree_node *nodes;
	size_t n_nodes;
};

/*
 * Parse a tree document. Rules: ids are dotted paths whose parent is the id
 * minus its last component and appears earlier; depth <= TREE_MAX_DEPTH;
 * class names are ARGUS_CLASS_NAMES; every leaf owns at least one class or
 * hook. On error returns -EINVAL and *ret_err names the offending node/field.
 */
int tree_from_json(const json_t *doc, struct tree **ret, char **ret_err);
/* Read and parse a file (bounded size). */
int tree_load_file(const char *path, struct tree **ret, char **ret_err);
void tree_free(struct tree *t);

/* Index of the node with this id, or -1. */
int tree_find(const struct tree *t, const char *id);
static inline bool tree_is_leaf(const struct tree *t, int idx)
{
	return t->nodes[idx].n_children == 0;
}
/* The nodes probed at one step: level-1 nodes when parent < 0, else parent's children. */
size_t tree_active(const struct tree *t, int parent, int *ret_idx, size_t max);
/* Is node idx inside the subtree rooted at root (root itself included)? */
bool tree_in_subtree(const struct tree *t, int root, int idx);
/* GET /tree representation, resolution included. */
json_t *tree_to_json(const struct tree *t);
