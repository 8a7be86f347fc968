/* SPDX-License-Identifier: MIT */
/*
 * The kernel code-path tree (the JSON files of tree-data/): nodes with dotted ids,
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
/* Bounds on what a tree document may hold (the loader rejects more). */
#define TREE_MAX_FILE_BYTES (1024 * 1024)
#define TREE_MAX_VERSION_LEN 64
#define TREE_MAX_ID_LEN 128	  /* whole dotted id */
#define TREE_MAX_DESCRIPTION_LEN 1024
#define TREE_MAX_HOOKS 16	  /* alternatives per backend */
#define TREE_MAX_HOOK_LEN 256	  /* one alternative, '+'-joined tracepoints included */
#define TREE_MAX_HOOK_PARTS 8	  /* tracepoints joined in one alternative */
#define TREE_MAX_CHILDREN 32	  /* = ARGUS_MAX_SLOTS: one level must fit the probe's slots */

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
	char *hook;		/* chosen hook, NULL when unavailable; inner nodes measured
				 * through their children: the children's hooks joined by '+'
				 * (see tree_resolve) */
	char *reason;		/* why unavailable; or why earlier backends were refused; NULL if none */
};

struct tree {
	char *version; /* tree-data "version" */
	struct tree_node *nodes;
	size_t n_nodes;
};

/*
 * Parse a tree document: {"version": "...", "nodes": [...]}, nodes in
 * parent-before-child order, each {"id", "description", "metrics",
 * "classes" (leaves only), "hooks" (optional: {"fentry": [...], "kprobe":
 * [...], "tracepoint": [...]})}. Rules: ids match
 * [a-z][a-z0-9_]*(.[a-z][a-z0-9_]*)*, are unique, and their parent (the id
 * minus its last component) appears earlier; depth <= TREE_MAX_DEPTH; at
 * most TREE_MAX_NODES nodes and TREE_MAX_CHILDREN children (level-1 nodes
 * included); metrics a non-empty subset of "count", "time_ns"; every leaf
 * lists at least one class of the class table (ARGUS_CLASSES), an inner node lists none
 * (it gets the union of its descendants), and no class belongs to two
 * leaves; hook names are symbols ([A-Za-z0-9_.]) or, for tracepoints,
 * tracepoint names joined by '+'; no duplicates in any list; unknown fields
 * and backends are rejected. On error returns -EINVAL (-ENOMEM for
 * allocation failure) and, when ret_err is not NULL, *ret_err (malloc'ed)
 * names the offending node and field. *ret is written only on success.
 */
int tree_from_json(const json_t *doc, struct tree **ret, char **ret_err);
/*
 * Read (at most TREE_MAX_FILE_BYTES) and parse a file. A read error is its
 * negative errno, a JSON syntax error -EINVAL; *ret_err as above.
 */
int tree_load_file(const char *path, struct tree **ret, char **ret_err);
/* NULL is fine. */
void tree_free(struct tree *t);

/* Class name (ARGUS_CLASSES) of an enum argus_class, NULL when out of range. */
const char *tree_class_name(int cls);
/* Inverse of tree_class_name; -1 when unknown. */
int tree_class_from_name(const char *name);
/* Does the node declare this metric ("count", "time_ns")? */
bool tree_node_has_metric(const struct tree_node *n, const char *metric);

/* Index of the node with this id, or -1 (also for NULL). */
int tree_find(const struct tree *t, const char *id);
static inline bool tree_is_leaf(const struct tree *t, int idx)
{
	return t->nodes[idx].n_children == 0;
}
/*
 * The nodes probed at one step: level-1 nodes when parent < 0, else parent's
 * children, in file order. Writes at most max indexes and returns how many
 * it wrote (never more than TREE_MAX_CHILDREN for a loaded tree); 0 for a
 * leaf or an out-of-range parent.
 */
size_t tree_active(const struct tree *t, int parent, int *ret_idx, size_t max);
/* Is node idx inside the subtree rooted at root (root itself included)? False for bad indexes. */
bool tree_in_subtree(const struct tree *t, int root, int idx);
/*
 * GET /tree representation, resolution included: {"version", "nodes": [{"id",
 * "description", "level", "parent" (id or null), "children" [ids], "metrics",
 * "classes" [names], "hooks" {backend: [...]}, "backend" (name or null),
 * "hook", "available", "reason"}], "summary": {"nodes", "by_backend"
 * {backend: n}, "unavailable"}}.
 */
json_t *tree_to_json(const struct tree *t);
