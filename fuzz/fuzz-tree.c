// SPDX-License-Identifier: MIT
/*
 * The tree file: the bytes are a tree-data document, parsed and given to
 * tree_from_json; an accepted tree is then resolved with a prober that
 * accepts or refuses each hook by a hash of its name, and turned into the
 * gate's policy for level 1 and into GET /tree's JSON.
 *
 * Properties: the shape tree.h promises (ids, levels, parents and
 * children agree; limits; classes on leaves only, disjoint, inner nodes the
 * union of their descendants); after resolution every available node has a
 * hook and every unavailable one a reason; a refusal says why.
 */
#include "daemon/gate.h"
#include "daemon/resolve.h"
#include "daemon/syscalls.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

static int try_hook(void *userdata, const struct backend_order *order, enum backend b,
		    const char *hook, char **ret_reason)
{
	unsigned h = 5381 + (unsigned)b;

	for (; *hook; hook++)
		h = h * 33 + (unsigned char)*hook;
	if (h % 3) {
		return 0;
	}
	*ret_reason = xstrdup("refused by the fuzzer's prober");
	return -EOPNOTSUPP;
}

static int depth_of(const char *id)
{
	int d = 1;

	for (; *id; id++)
		d += *id == '.';
	return d;
}

static void check_shape(const struct tree *t)
{
	unsigned leaf_classes = 0;
	size_t i, j, level1 = 0;
	int active[TREE_MAX_NODES];

	FUZZ_CHECK(t->n_nodes >= 1 && t->n_nodes <= TREE_MAX_NODES, "%zu nodes", t->n_nodes);
	FUZZ_CHECK(t->version && *t->version && strlen(t->version) <= TREE_MAX_VERSION_LEN,
		   "version");
	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *n = &t->nodes[i];
		unsigned union_classes = 0;
		int b;

		FUZZ_CHECK(n->id && strlen(n->id) <= TREE_MAX_ID_LEN, "node %zu id", i);
		FUZZ_CHECK(tree_find(t, n->id) == (int)i, "%s is not unique", n->id);
		FUZZ_CHECK(n->level == depth_of(n->id) && n->level <= TREE_MAX_DEPTH, "%s level %d",
			   n->id, n->level);
		FUZZ_CHECK(n->name && !strcmp(n->name, strrchr(n->id, '.') ? strrchr(n->id, '.') + 1
									   : n->id),
			   "%s name", n->id);
		if (n->level == 1) {
			FUZZ_CHECK(n->parent == -1, "%s parent", n->id);
			level1++;
		} else {
			const struct tree_node *p = &t->nodes[n->parent];
			size_t seen = 0;

			FUZZ_CHECK(n->parent >= 0 && (size_t)n->parent < i, "%s parent %d", n->id,
				   n->parent);
			FUZZ_CHECK(p->level == n->level - 1 &&
				       !strncmp(n->id, p->id, strlen(p->id)) &&
				       n->id[strlen(p->id)] == '.',
				   "%s under %s", n->id, p->id);
			for (j = 0; j < p->n_children; j++)
				seen += p->children[j] == (int)i;
			FUZZ_CHECK(seen == 1, "%s listed %zu times by its parent", n->id, seen);
		}
		FUZZ_CHECK(n->n_children <= TREE_MAX_CHILDREN, "%s children", n->id);
		for (j = 0; j < n->n_children; j++) {
			int c = n->children[j];

			FUZZ_CHECK(c > (int)i && (size_t)c < t->n_nodes &&
				       t->nodes[c].parent == (int)i,
				   "%s child %d", n->id, c);
			union_classes |= t->nodes[c].classes;
		}
		FUZZ_CHECK(n->n_metrics >= 1 && n->n_metrics <= 2, "%s metrics", n->id);
		for (j = 0; j < n->n_metrics; j++)
			FUZZ_CHECK(!strcmp(n->metrics[j], "count") ||
				       !strcmp(n->metrics[j], "time_ns"),
				   "%s metric %s", n->id, n->metrics[j]);
		FUZZ_CHECK(n->n_metrics == 1 || strcmp(n->metrics[0], n->metrics[1]), "%s metrics",
			   n->id);
		if (n->n_children == 0) {
			/* a leaf owns a class, unless only functions measure it */
			FUZZ_CHECK(n->classes != 0 ||
				       (n->n_hooks[BACKEND_TRACEPOINT] == 0 &&
					n->n_hooks[BACKEND_FENTRY] + n->n_hooks[BACKEND_KPROBE] > 0),
				   "%s: leaf classes %#x", n->id, n->classes);
			FUZZ_CHECK(!(n->classes & leaf_classes), "%s: leaf classes %#x", n->id,
				   n->classes);
			leaf_classes |= n->classes;
		} else {
			FUZZ_CHECK(n->classes == union_classes, "%s: classes %#x, children %#x",
				   n->id, n->classes, union_classes);
		}
		for (b = 0; b < BACKEND_MAX; b++) {
			FUZZ_CHECK(n->n_hooks[b] <= TREE_MAX_HOOKS, "%s hooks", n->id);
			for (j = 0; j < n->n_hooks[b]; j++) {
				const struct hook_list *alt = &n->hooks[b][j];
				size_t k;

				FUZZ_CHECK(alt->n >= 1 && alt->n <= TREE_MAX_NODE_HOOKS &&
					       (b == BACKEND_TRACEPOINT || alt->n == 1),
					   "%s hook %zu", n->id, j);
				for (k = 0; k < alt->n; k++) {
					const struct hook *h = &alt->v[k];

					FUZZ_CHECK(h->kind == hook_kind_of(b) && *h->name &&
						       strlen(h->name) <= TREE_MAX_HOOK_NAME_LEN,
						   "%s hook %zu", n->id, j);
				}
			}
		}
	}
	FUZZ_CHECK(level1 <= TREE_MAX_CHILDREN, "%zu level-1 nodes", level1);
	FUZZ_CHECK(tree_active(t, -1, active, ARRAY_SIZE(active)) == level1, "tree_active");
}

static void check_resolved(struct tree *t)
{
	struct prober p = {.try_hook = try_hook};
	struct gate_policy pol = {};
	int active[TREE_MAX_CHILDREN], r;
	size_t i, n;
	json_t *j;

	r = tree_resolve(t, &p);
	FUZZ_CHECK(r >= 0 && (size_t)r <= t->n_nodes, "tree_resolve = %d", r);
	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *nd = &t->nodes[i];

		if (nd->backend == BACKEND_NONE) {
			FUZZ_CHECK(nd->reason && *nd->reason, "%s: unavailable without a reason",
				   nd->id);
		} else {
			char *text;

			FUZZ_CHECK(nd->backend >= 0 && nd->backend < BACKEND_MAX && nd->hook &&
				       *nd->hook && nd->chosen.n >= 1,
				   "%s: available without a hook", nd->id);
			/* the text GET /tree shows is the parsed choice, joined */
			text = hook_list_join(&nd->chosen);
			FUZZ_CHECK(!strcmp(text, nd->hook), "%s: hook %s, chosen %s", nd->id,
				   nd->hook, text);
			free(text);
		}
	}
	n = tree_active(t, -1, active, ARRAY_SIZE(active));
	FUZZ_CHECK(gate_policy_for_level(t, active, n, 2, false, &pol) == 0, "gate policy");
	gate_policy_free(&pol);
	FUZZ_CHECK(gate_policy_for_level(t, active, n, 2, true, &pol) == 0, "gate policy, none");
	for (i = 0; i < pol.n_sections; i++) {
		const char *tp = strchr(pol.sections[i], '/');

		FUZZ_CHECK(tp && !syscall_event_raw(tp + 1), "%s under syscall_events none",
			   pol.sections[i]);
	}
	gate_policy_free(&pol);
	j = tree_to_json(t);
	FUZZ_CHECK(j && json_array_size(json_object_get(j, "nodes")) == t->n_nodes, "tree_to_json");
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree *t = NULL;
	char *err = NULL;
	json_t *doc;
	int r;

	doc = json_loadb((const char *)data, size, 0, NULL);
	if (!doc)
		return 0;
	r = tree_from_json(doc, &t, &err);
	json_decref(doc);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && !t && err, "r=%d", r);
		FUZZ_CHECK(fuzz_utf8(err), "the refusal is not valid UTF-8: %s", err);
		free(err);
		return 0;
	}
	check_shape(t);
	check_resolved(t);
	tree_free(t);
	return 0;
}
