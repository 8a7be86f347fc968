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

/*
 * The backends resolution may choose, in the order it tries them: each of
 * fentry, kprobe, tracepoint at most once. n == 0 stands for the default.
 */
struct backend_order {
	enum backend v[BACKEND_MAX];
	size_t n;
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
#define TREE_MAX_HOOK_NAME_LEN 63 /* one function or tracepoint name */
#define TREE_MAX_NODE_HOOKS 24	  /* = ARGUS_FENTRY_PAIRS: what one node attaches fits a probe */
#define TREE_MAX_CHILDREN 32	  /* = ARGUS_MAX_SLOTS: one level must fit the probe's slots */

/* What a hook names; the backend says how it is attached. */
enum hook_kind {
	HOOK_FUNCTION,	 /* a kernel function: fentry/fexit, kprobe/kretprobe */
	HOOK_TRACEPOINT, /* a tracepoint: tp_btf */
};

/* One attach point: "do_wp_page.isra.0", "page_fault_user". */
struct hook {
	enum hook_kind kind;
	char name[TREE_MAX_HOOK_NAME_LEN + 1];
};

/*
 * Hooks used together, all of which must attach: one alternative of
 * tree-data (a function, or tracepoints joined by '+' there), or what a
 * node chose. Parsed once, when the tree is loaded: its users read these,
 * never the text.
 */
struct hook_list {
	struct hook v[TREE_MAX_NODE_HOOKS];
	size_t n;
};

/* The kind of hook a backend attaches to. */
enum hook_kind hook_kind_of(enum backend b);
/*
 * Parse one alternative as tree-data writes it: a function symbol
 * ([A-Za-z0-9_.], variants such as "do_wp_page.isra.0") for HOOK_FUNCTION,
 * tracepoint names ([A-Za-z0-9_]) joined by '+' for HOOK_TRACEPOINT; each
 * name at most TREE_MAX_HOOK_NAME_LEN characters, at most
 * TREE_MAX_NODE_HOOKS of them. Pure. Returns 0 and *ret, or -EINVAL
 * (malformed) / -E2BIG (too many or too long); *ret is written only on
 * success.
 */
int hook_list_parse(const char *text, enum hook_kind kind, struct hook_list *ret);
/* The text tree-data writes for l: its names joined by '+' (malloc'ed; "" when empty). */
char *hook_list_join(const struct hook_list *l);
/* Is one of l's hooks named name? */
bool hook_list_has(const struct hook_list *l, const char *name);
/*
 * Append h unless a hook of that name is there already. -E2BIG when l is
 * full (nothing is cut short).
 */
int hook_list_add(struct hook_list *l, const struct hook *h);

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
	 * Ordered alternatives per backend, parsed. fentry/kprobe: one function
	 * each, symbol variants included ("do_wp_page", "do_wp_page.isra.0").
	 * tracepoint: one alternative may need several tracepoints, joined by
	 * '+' in tree-data ("page_fault_user+sched_switch"); all of them must
	 * attach.
	 */
	struct hook_list *hooks[BACKEND_MAX];
	size_t n_hooks[BACKEND_MAX];

	/* Resolution (resolve.c), written through tree_node_choose */
	enum backend backend; /* chosen backend, BACKEND_NONE when unavailable */
	/*
	 * The hooks chosen, none when unavailable; an inner node measured
	 * through its children: the hooks they chose (see tree_resolve).
	 */
	struct hook_list chosen;
	/* The same as text, '+'-joined, for GET /tree and the trace; NULL when unavailable. */
	char *hook;
	char *reason; /* why unavailable; or why earlier backends were refused; NULL if none */
	/*
	 * An inner node measured through children on more than one backend:
	 * its value is the sum of theirs, each measured on its own backend
	 * (probe_plan_for gives them the slots); backend is then the one most
	 * of them use, as a label.
	 */
	bool sum_of_children;
};

struct tree {
	char *version; /* tree-data "version" */
	struct tree_node *nodes;
	size_t n_nodes;
	/* the backends setting the tree was resolved with (tree_resolve_backends) */
	struct backend_order backends;
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
 * leaves; hooks parse with hook_list_parse (function symbols, or for
 * tracepoints names joined by '+'); no duplicates in any list; unknown fields
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
/*
 * Record a resolution's choice for n: backend b and its hooks (copied),
 * n->hook their text. b == BACKEND_NONE (hooks ignored) makes n
 * unavailable. The reason is left alone.
 */
void tree_node_choose(struct tree_node *n, enum backend b, const struct hook_list *hooks);

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
