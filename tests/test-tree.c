// SPDX-License-Identifier: MIT
/* The tree loader: the real tree-data file, malformed documents, queries, GET /tree JSON. */
#include "daemon/tree.h"
#include "daemon/util.h"
#include "bpf/paths.h"
#include "tests/tap.h"

#include <errno.h>
#include <string.h>

/* Test documents are written with ' for " to stay readable. */
static json_t *doc_from(const char *text)
{
	_cleanup_free_ char *s = xstrdup(text);
	json_error_t jerr;
	json_t *doc;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	doc = json_loads(s, 0, &jerr);
	if (!doc)
		fprintf(stderr, "bad test document: %s: %s\n", jerr.text, s);
	REQUIRE(doc);
	return doc;
}

static int load_text(const char *text, struct tree **ret, char **ret_err)
{
	json_auto_t *doc = doc_from(text);

	return tree_from_json(doc, ret, ret_err);
}

static struct tree *load_real(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *path = NULL, *err = NULL;
	struct tree *t = NULL;
	int r;

	REQUIRE(src);
	path = xasprintf("%s/tree-data/tree.json", src);
	r = tree_load_file(path, &t, &err);
	if (r < 0)
		fprintf(stderr, "loading %s: %d %s\n", path, r, err ? err : "");
	REQUIRE(r == 0 && t);
	return t;
}

static unsigned bit(int cls)
{
	return 1u << cls;
}

/* Is alternative i of backend b of n, as tree-data writes it, text? */
static bool alt_is(const struct tree_node *n, enum backend b, size_t i, const char *text)
{
	_cleanup_free_ char *joined = NULL;

	if (i >= n->n_hooks[b])
		return false;
	joined = hook_list_join(&n->hooks[b][i]);
	return strcmp(joined, text) == 0;
}

static void test_real_tree(void)
{
	/*
	 * The ids that tests and clients rely on (DESIGN.md's fixed ids, and
	 * those the README documents as fixed): they must stay, where they are.
	 * The tree may hold more; every node is checked below.
	 */
	static const struct {
		const char *id, *parent;
		int level;
	} fixed[] = {
	    {"kernel_paging", NULL, 1},
	    {"kernel_paging.anon_fault", "kernel_paging", 2},
	    {"kernel_paging.anon_fault.minor", "kernel_paging.anon_fault", 3},
	    {"kernel_paging.anon_fault.zero_page", "kernel_paging.anon_fault", 3},
	    {"kernel_paging.anon_fault.cow", "kernel_paging.anon_fault", 3},
	    {"kernel_paging.anon_fault.thp", "kernel_paging.anon_fault", 3},
	    {"kernel_paging.file_fault", "kernel_paging", 2},
	    {"kernel_paging.file_fault.page_cache", "kernel_paging.file_fault", 3},
	    {"kernel_paging.file_fault.major", "kernel_paging.file_fault", 3},
	    {"kernel_paging.tlb_shootdown", "kernel_paging", 2},
	    {"kernel_scheduler", NULL, 1},
	    {"kernel_scheduler.runqueue_wait", "kernel_scheduler", 2},
	    {"kernel_scheduler.load_balance", "kernel_scheduler", 2},
	    {"kernel_scheduler.fork", "kernel_scheduler", 2},
	    {"kernel_memory_pressure", NULL, 1},
	    {"kernel_memory_pressure.direct_reclaim", "kernel_memory_pressure", 2},
	    {"kernel_memory_pressure.compaction", "kernel_memory_pressure", 2},
	    {"kernel_memory_pressure.kswapd", "kernel_memory_pressure", 2},
	    {"kernel_block_io", NULL, 1},
	    {"kernel_block_io.queue", "kernel_block_io", 2},
	    {"kernel_block_io.device", "kernel_block_io", 2},
	    {"kernel_block_io.commit", "kernel_block_io", 2},
	    {"kernel_sync", NULL, 1},
	    {"kernel_sync.futex", "kernel_sync", 2},
	    {"kernel_sync.mmap_lock", "kernel_sync", 2},
	    {"kernel_sync.pipe", "kernel_sync", 2},
	};
	struct tree *t = load_real();
	unsigned owned = 0;
	size_t i;
	int idx;

	/* the version is tree.json's alone (a reference is kept per version): its form, not its value */
	{
		unsigned y, m, n;
		char tail;

		CHECKF(sscanf(t->version, "%4u.%2u-%u%c", &y, &m, &n, &tail) == 3 && y >= 2026 &&
			       m >= 1 && m <= 12 && n >= 1,
		       "version %s", t->version);
	}
	for (i = 0; i < ARRAY_SIZE(fixed); i++) {
		idx = tree_find(t, fixed[i].id);
		CHECKF(idx >= 0, "%s missing", fixed[i].id);
		if (idx < 0)
			continue;
		CHECKF(t->nodes[idx].level == fixed[i].level, "%s level %d", fixed[i].id,
		       t->nodes[idx].level);
		if (fixed[i].parent)
			CHECKF(t->nodes[idx].parent == tree_find(t, fixed[i].parent), "%s parent",
			       fixed[i].id);
		else
			CHECKF(t->nodes[idx].parent == -1, "%s is level 1", fixed[i].id);
	}
	/* Every node, fixed or not: an id under its parent's, a description, a count. */
	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *n = &t->nodes[i];

		if (n->parent >= 0) {
			const char *pid = t->nodes[n->parent].id;

			CHECKF(strncmp(n->id, pid, strlen(pid)) == 0 && n->id[strlen(pid)] == '.' &&
				       !strchr(n->id + strlen(pid) + 1, '.') &&
				       n->level == t->nodes[n->parent].level + 1,
			       "%s under %s", n->id, pid);
		} else
			CHECKF(n->level == 1 && !strchr(n->id, '.'), "%s is level 1", n->id);
		CHECKF(n->description && strlen(n->description) > 40, "%s: description", n->id);
		CHECKF(tree_node_has_metric(n, "count"), "%s: count", n->id);
	}

	/* Class unions: an inner node owns exactly what its children own. */
	for (i = 0; i < t->n_nodes; i++) {
		unsigned below = 0;
		size_t c;

		if (tree_is_leaf(t, (int)i))
			continue;
		for (c = 0; c < t->nodes[i].n_children; c++)
			below |= t->nodes[t->nodes[i].children[c]].classes;
		CHECKF(t->nodes[i].classes == below, "%s: classes %#x, its children's %#x",
		       t->nodes[i].id, t->nodes[i].classes, below);
	}
	idx = tree_find(t, "kernel_paging");
	CHECK(__builtin_popcount(t->nodes[idx].classes) == 7);
	idx = tree_find(t, "kernel_paging.anon_fault");
	CHECK(t->nodes[idx].classes == (bit(ARGUS_CLS_ANON_MINOR) | bit(ARGUS_CLS_ANON_ZERO) |
					bit(ARGUS_CLS_ANON_COW) | bit(ARGUS_CLS_ANON_THP)));
	idx = tree_find(t, "kernel_paging.file_fault.major");
	CHECK(t->nodes[idx].classes == bit(ARGUS_CLS_FILE_MAJOR));

	/*
	 * Every class has exactly one leaf, but the waits on the target's own
	 * tasks, the idle CPU's part of runqueue waits and the idle sleep in
	 * waits for events, which no node owns;
	 * count-only leaves as specified.
	 */
	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, (int)i)) {
			CHECK(t->nodes[i].classes != 0);
			CHECK((owned & t->nodes[i].classes) == 0);
			owned |= t->nodes[i].classes;
		}
	CHECK(owned ==
	      (((1u << ARGUS_CLS_MAX) - 1) &
	       ~(bit(ARGUS_CLS_RUNQ_OWN) | bit(ARGUS_CLS_FUTEX_OWN) | bit(ARGUS_CLS_RUNQ_IDLE) |
		 bit(ARGUS_CLS_WAIT_IDLE))));
	idx = tree_find(t, "kernel_paging.tlb_shootdown");
	CHECK(t->nodes[idx].n_metrics == 1 && !tree_node_has_metric(&t->nodes[idx], "time_ns"));
	idx = tree_find(t, "kernel_scheduler.load_balance");
	CHECK(t->nodes[idx].n_metrics == 1);
	/* kswapd: its wakeups counted, the CPU the background reclaim took timed */
	idx = tree_find(t, "kernel_memory_pressure.kswapd");
	CHECK(t->nodes[idx].n_metrics == 2 && tree_node_has_metric(&t->nodes[idx], "time_ns"));
	idx = tree_find(t, "kernel_paging.anon_fault.minor");
	CHECK(tree_node_has_metric(&t->nodes[idx], "time_ns"));

	/* Hooks: ordered alternatives, symbol variants for kprobe. */
	idx = tree_find(t, "kernel_paging.anon_fault.minor");
	CHECK(t->nodes[idx].n_hooks[BACKEND_FENTRY] == 1 &&
	      alt_is(&t->nodes[idx], BACKEND_FENTRY, 0, "do_anonymous_page"));
	CHECK(t->nodes[idx].n_hooks[BACKEND_KPROBE] == 3 &&
	      alt_is(&t->nodes[idx], BACKEND_KPROBE, 1, "do_anonymous_page.isra.0"));
	CHECK(t->nodes[idx].n_hooks[BACKEND_TRACEPOINT] == 1 &&
	      alt_is(&t->nodes[idx], BACKEND_TRACEPOINT, 0, "page_fault_user+rss_stat"));
	/* parsed at load: a function is one hook, a tracepoint alternative one per name */
	CHECK(t->nodes[idx].hooks[BACKEND_KPROBE][1].n == 1 &&
	      t->nodes[idx].hooks[BACKEND_KPROBE][1].v[0].kind == HOOK_FUNCTION &&
	      strcmp(t->nodes[idx].hooks[BACKEND_KPROBE][1].v[0].name,
		     "do_anonymous_page.isra.0") == 0);
	CHECK(t->nodes[idx].hooks[BACKEND_TRACEPOINT][0].n == 2 &&
	      t->nodes[idx].hooks[BACKEND_TRACEPOINT][0].v[1].kind == HOOK_TRACEPOINT &&
	      strcmp(t->nodes[idx].hooks[BACKEND_TRACEPOINT][0].v[0].name, "page_fault_user") ==
		  0 &&
	      strcmp(t->nodes[idx].hooks[BACKEND_TRACEPOINT][0].v[1].name, "rss_stat") == 0);
	idx = tree_find(t, "kernel_paging.anon_fault.zero_page");
	CHECK(t->nodes[idx].n_hooks[BACKEND_FENTRY] == 0 &&
	      t->nodes[idx].n_hooks[BACKEND_KPROBE] == 0);
	idx = tree_find(t, "kernel_scheduler.runqueue_wait");
	CHECK(t->nodes[idx].n_hooks[BACKEND_TRACEPOINT] == 1 &&
	      t->nodes[idx].n_hooks[BACKEND_FENTRY] == 0);
	/* Every leaf can at least use a tracepoint, the backend this machine has. */
	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, (int)i))
			CHECKF(t->nodes[i].n_hooks[BACKEND_TRACEPOINT] >= 1, "%s", t->nodes[i].id);
	/* Before resolution nothing is chosen. */
	CHECK(t->nodes[0].backend == BACKEND_NONE && !t->nodes[0].hook && !t->nodes[0].reason);
	CHECK(t->nodes[0].chosen.n == 0);

	tree_free(t);
}

static void test_queries(void)
{
	struct tree *t = load_real();
	int act[TREE_MAX_CHILDREN], paging, anon, minor, file, sched;
	size_t n;

	paging = tree_find(t, "kernel_paging");
	anon = tree_find(t, "kernel_paging.anon_fault");
	minor = tree_find(t, "kernel_paging.anon_fault.minor");
	file = tree_find(t, "kernel_paging.file_fault");
	sched = tree_find(t, "kernel_scheduler");
	CHECK(paging == 0);
	CHECK(tree_find(t, "kernel_paging.anon") == -1);
	CHECK(tree_find(t, "kernel_paging.") == -1);
	CHECK(tree_find(t, NULL) == -1);
	CHECK(tree_find(NULL, "kernel_paging") == -1);
	CHECK(strcmp(t->nodes[minor].name, "minor") == 0);
	CHECK(strcmp(t->nodes[paging].name, "kernel_paging") == 0);

	/* Level 1: the five subsystems, in file order. */
	n = tree_active(t, -1, act, ARRAY_SIZE(act));
	CHECK(n == 5);
	CHECK(n == 5 && act[0] == paging && act[1] == sched &&
	      act[2] == tree_find(t, "kernel_memory_pressure") &&
	      act[3] == tree_find(t, "kernel_block_io") && act[4] == tree_find(t, "kernel_sync"));
	n = tree_active(t, paging, act, ARRAY_SIZE(act));
	CHECK(n == 3 && act[0] == anon && act[1] == file &&
	      act[2] == tree_find(t, "kernel_paging.tlb_shootdown"));
	n = tree_active(t, anon, act, ARRAY_SIZE(act));
	CHECK(n == 4 && act[0] == minor && act[3] == tree_find(t, "kernel_paging.anon_fault.thp"));
	CHECK(tree_active(t, minor, act, ARRAY_SIZE(act)) == 0);
	CHECK(tree_active(t, 9999, act, ARRAY_SIZE(act)) == 0);
	/* Bounded by max. */
	CHECK(tree_active(t, anon, act, 2) == 2 &&
	      act[1] == tree_find(t, "kernel_paging.anon_fault.zero_page"));
	CHECK(tree_active(t, -1, act, 0) == 0);

	CHECK(tree_in_subtree(t, paging, paging));
	CHECK(tree_in_subtree(t, paging, minor));
	CHECK(tree_in_subtree(t, anon, minor));
	CHECK(!tree_in_subtree(t, file, minor));
	CHECK(!tree_in_subtree(t, minor, anon));
	CHECK(!tree_in_subtree(t, sched, minor));
	CHECK(!tree_in_subtree(t, -1, minor));
	CHECK(!tree_in_subtree(t, paging, -1));
	CHECK(!tree_in_subtree(t, paging, 9999));

	CHECK(tree_is_leaf(t, minor) && !tree_is_leaf(t, anon));

	CHECK(strcmp(backend_name(BACKEND_FENTRY), "fentry") == 0);
	CHECK(strcmp(backend_name(BACKEND_KPROBE), "kprobe") == 0);
	CHECK(strcmp(backend_name(BACKEND_TRACEPOINT), "tracepoint") == 0);
	CHECK(strcmp(backend_name(BACKEND_NONE), "none") == 0);
	CHECK(backend_from_name("tracepoint") == BACKEND_TRACEPOINT);
	CHECK(backend_from_name("kprobe") == BACKEND_KPROBE);
	CHECK(backend_from_name("uprobe") == BACKEND_NONE);
	CHECK(backend_from_name(NULL) == BACKEND_NONE);
	CHECK(strcmp(tree_class_name(ARGUS_CLS_MMAP_LOCK), "mmap_lock") == 0);
	CHECK(tree_class_name(ARGUS_CLS_MAX) == NULL && tree_class_name(-1) == NULL);
	CHECK(tree_class_from_name("anon_thp") == ARGUS_CLS_ANON_THP);
	CHECK(tree_class_from_name("anon") == -1);
	tree_free(t);
	tree_free(NULL);
}

static void test_to_json(void)
{
	struct tree *t = load_real();
	json_auto_t *j = NULL;
	json_t *nodes, *n, *summary;
	int minor = tree_find(t, "kernel_paging.anon_fault.minor");

	/* As after a resolution: one node on a tracepoint, one refused. */
	tree_node_choose(&t->nodes[minor], BACKEND_TRACEPOINT,
			 &t->nodes[minor].hooks[BACKEND_TRACEPOINT][0]);
	t->nodes[minor].reason = xstrdup("fentry: do_anonymous_page: Operation not permitted");

	j = tree_to_json(t);
	REQUIRE(j);
	CHECK_STREQ(json_string_value(json_object_get(j, "version")), t->version, "version");
	nodes = json_object_get(j, "nodes");
	CHECK(json_array_size(nodes) == t->n_nodes);

	n = json_array_get(nodes, 0);
	CHECK(strcmp(json_string_value(json_object_get(n, "id")), "kernel_paging") == 0);
	CHECK(json_integer_value(json_object_get(n, "level")) == 1);
	CHECK(json_is_null(json_object_get(n, "parent")));
	CHECK(json_array_size(json_object_get(n, "children")) == 3);
	CHECK(strcmp(json_string_value(json_array_get(json_object_get(n, "children"), 0)),
		     "kernel_paging.anon_fault") == 0);
	CHECK(json_array_size(json_object_get(n, "classes")) == 7);
	CHECK(json_is_false(json_object_get(n, "available")));
	CHECK(json_is_null(json_object_get(n, "backend")));
	CHECK(json_is_null(json_object_get(n, "hook")));
	CHECK(json_is_null(json_object_get(n, "reason")));
	CHECK(json_is_string(json_object_get(n, "description")));
	CHECK(json_array_size(json_object_get(n, "metrics")) == 2);

	n = json_array_get(nodes, minor);
	CHECK(strcmp(json_string_value(json_object_get(n, "parent")), "kernel_paging.anon_fault") ==
	      0);
	CHECK(json_integer_value(json_object_get(n, "level")) == 3);
	CHECK(json_array_size(json_object_get(n, "children")) == 0);
	CHECK(json_array_size(json_object_get(n, "classes")) == 1 &&
	      strcmp(json_string_value(json_array_get(json_object_get(n, "classes"), 0)),
		     "anon_minor") == 0);
	CHECK(json_is_true(json_object_get(n, "available")));
	CHECK(strcmp(json_string_value(json_object_get(n, "backend")), "tracepoint") == 0);
	CHECK(strcmp(json_string_value(json_object_get(n, "hook")), "page_fault_user+rss_stat") ==
	      0);
	CHECK(strstr(json_string_value(json_object_get(n, "reason")), "Operation not permitted"));
	CHECK(json_array_size(json_object_get(json_object_get(n, "hooks"), "kprobe")) == 3);
	CHECK(json_array_size(json_object_get(json_object_get(n, "hooks"), "tracepoint")) == 1);
	/* the alternatives as the file writes them */
	CHECK(strcmp(json_string_value(json_array_get(
			 json_object_get(json_object_get(n, "hooks"), "tracepoint"), 0)),
		     "page_fault_user+rss_stat") == 0);
	CHECK(strcmp(json_string_value(
			 json_array_get(json_object_get(json_object_get(n, "hooks"), "kprobe"), 2)),
		     "do_anonymous_page.constprop.0") == 0);

	summary = json_object_get(j, "summary");
	CHECK(json_integer_value(json_object_get(summary, "nodes")) == (json_int_t)t->n_nodes);
	CHECK(json_integer_value(json_object_get(summary, "unavailable")) ==
	      (json_int_t)t->n_nodes - 1);
	CHECK(json_integer_value(
		  json_object_get(json_object_get(summary, "by_backend"), "tracepoint")) == 1);
	CHECK(json_integer_value(
		  json_object_get(json_object_get(summary, "by_backend"), "fentry")) == 0);
	tree_free(t);
}

/* A small valid document; the malformed ones below each change one thing. */
#define LEAF(id, cls)                                                                              \
	"{'id': '" id "', 'description': 'd', 'metrics': ['count'], 'classes': ['" cls "']}"
#define INNER(id) "{'id': '" id "', 'description': 'd', 'metrics': ['count', 'time_ns']}"

static void test_small_valid(void)
{
	struct tree *t = NULL;
	char *err = NULL;
	int r;

	r = load_text(
	    "{'version': 'v1', 'nodes': [" INNER("a") ", " INNER("a.b") ", " LEAF(
		"a.b.c", "anon_minor") ", {'id': 'a.b.d', 'description': 'd', 'metrics': "
				       "['time_ns'], 'classes': ['anon_zero', 'anon_cow'],"
				       "  'hooks': {'kprobe': ['x', 'x.isra.0'], 'tracepoint': "
				       "['p+q', 'r'], 'fentry': []}}," LEAF("e", "fork") "]}",
	    &t, &err);
	CHECKF(r == 0, "%d %s", r, err ? err : "");
	if (r < 0)
		return;
	CHECK(t->n_nodes == 5);
	CHECK(t->nodes[1].parent == 0 && t->nodes[2].parent == 1 && t->nodes[3].parent == 1);
	CHECK(t->nodes[4].parent == -1 && t->nodes[4].level == 1);
	CHECK(t->nodes[1].n_children == 2 && t->nodes[1].children[1] == 3);
	CHECK(t->nodes[0].classes ==
	      (bit(ARGUS_CLS_ANON_MINOR) | bit(ARGUS_CLS_ANON_ZERO) | bit(ARGUS_CLS_ANON_COW)));
	CHECK(t->nodes[3].n_hooks[BACKEND_KPROBE] == 2 && t->nodes[3].n_hooks[BACKEND_FENTRY] == 0);
	CHECK(alt_is(&t->nodes[3], BACKEND_TRACEPOINT, 0, "p+q"));
	CHECK(t->nodes[3].hooks[BACKEND_TRACEPOINT][0].n == 2 &&
	      strcmp(t->nodes[3].hooks[BACKEND_TRACEPOINT][0].v[1].name, "q") == 0);
	CHECK(alt_is(&t->nodes[3], BACKEND_TRACEPOINT, 1, "r"));
	CHECK(alt_is(&t->nodes[3], BACKEND_KPROBE, 1, "x.isra.0"));
	CHECK(err == NULL);
	tree_free(t);
}

static bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* One alternative's text parsed into hooks: the one parser, its bounds, and back to text. */
static void test_hooks(void)
{
	static const char *const malformed_tp[] = {"", "a.b", "a++b", "+a", "a+", "a-b", "a b"};
	static const char *const malformed_fn[] = {"", "a+b", ".a", "a.", "a..b", "1a", "do-x"};
	_cleanup_free_ char *name = NULL, *most = NULL, *too_many = NULL, *text = NULL;
	struct tree_node n = {.backend = BACKEND_NONE};
	struct hook_list l, m;
	size_t i;

	CHECK(hook_list_parse("page_fault_user+rss_stat", HOOK_TRACEPOINT, &l) == 0);
	CHECK(l.n == 2 && l.v[0].kind == HOOK_TRACEPOINT && l.v[1].kind == HOOK_TRACEPOINT &&
	      streq(l.v[0].name, "page_fault_user") && streq(l.v[1].name, "rss_stat"));
	text = hook_list_join(&l);
	CHECK(streq(text, "page_fault_user+rss_stat"));
	CHECK(hook_list_has(&l, "rss_stat") && !hook_list_has(&l, "rss") &&
	      !hook_list_has(&l, "page_fault_user+rss_stat"));
	CHECK(hook_list_parse("do_wp_page.isra.0", HOOK_FUNCTION, &l) == 0);
	CHECK(l.n == 1 && l.v[0].kind == HOOK_FUNCTION && streq(l.v[0].name, "do_wp_page.isra.0"));
	CHECK(hook_kind_of(BACKEND_FENTRY) == HOOK_FUNCTION &&
	      hook_kind_of(BACKEND_KPROBE) == HOOK_FUNCTION &&
	      hook_kind_of(BACKEND_TRACEPOINT) == HOOK_TRACEPOINT);

	/* malformed: -EINVAL, nothing written */
	m.n = 7;
	for (i = 0; i < ARRAY_SIZE(malformed_tp); i++)
		CHECKF(hook_list_parse(malformed_tp[i], HOOK_TRACEPOINT, &m) == -EINVAL && m.n == 7,
		       "tracepoints \"%s\"", malformed_tp[i]);
	for (i = 0; i < ARRAY_SIZE(malformed_fn); i++)
		CHECKF(hook_list_parse(malformed_fn[i], HOOK_FUNCTION, &m) == -EINVAL && m.n == 7,
		       "function \"%s\"", malformed_fn[i]);

	/* bounds: names of TREE_MAX_HOOK_NAME_LEN characters, TREE_MAX_NODE_HOOKS of them */
	name = calloc(1, TREE_MAX_HOOK_NAME_LEN + 2);
	REQUIRE(name);
	memset(name, 'f', TREE_MAX_HOOK_NAME_LEN);
	CHECK(hook_list_parse(name, HOOK_FUNCTION, &l) == 0 && l.n == 1 &&
	      strlen(l.v[0].name) == TREE_MAX_HOOK_NAME_LEN);
	name[TREE_MAX_HOOK_NAME_LEN] = 'f';
	CHECK(hook_list_parse(name, HOOK_FUNCTION, &m) == -E2BIG && m.n == 7);
	CHECK(hook_list_parse(name, HOOK_TRACEPOINT, &m) == -E2BIG && m.n == 7);
	most = xstrdup("t0");
	for (i = 1; i < TREE_MAX_NODE_HOOKS; i++) {
		char *s = xasprintf("%s+t%zu", most, i);

		free(most);
		most = s;
	}
	CHECK(hook_list_parse(most, HOOK_TRACEPOINT, &l) == 0 && l.n == TREE_MAX_NODE_HOOKS);
	free(text);
	text = hook_list_join(&l);
	CHECK(streq(text, most));
	too_many = xasprintf("%s+t%d", most, TREE_MAX_NODE_HOOKS);
	CHECK(hook_list_parse(too_many, HOOK_TRACEPOINT, &m) == -E2BIG && m.n == 7);

	/* adding: each name once, never beyond the bound */
	CHECK(hook_list_add(&l, &l.v[3]) == 0 && l.n == TREE_MAX_NODE_HOOKS);
	CHECK(hook_list_add(&l, &(struct hook){HOOK_TRACEPOINT, "new"}) == -E2BIG &&
	      l.n == TREE_MAX_NODE_HOOKS);
	m.n = 0;
	CHECK(hook_list_add(&m, &(struct hook){HOOK_TRACEPOINT, "a"}) == 0);
	CHECK(hook_list_add(&m, &(struct hook){HOOK_TRACEPOINT, "b"}) == 0);
	CHECK(hook_list_add(&m, &(struct hook){HOOK_TRACEPOINT, "a"}) == 0);
	CHECK(m.n == 2 && streq(m.v[1].name, "b"));

	/* a choice: the backend, its hooks, and their text */
	REQUIRE(hook_list_parse("p+q", HOOK_TRACEPOINT, &l) == 0);
	tree_node_choose(&n, BACKEND_TRACEPOINT, &l);
	CHECK(n.backend == BACKEND_TRACEPOINT && n.chosen.n == 2 && streq(n.hook, "p+q"));
	REQUIRE(hook_list_parse("x", HOOK_FUNCTION, &l) == 0);
	tree_node_choose(&n, BACKEND_KPROBE, &l);
	CHECK(n.backend == BACKEND_KPROBE && n.chosen.n == 1 && streq(n.hook, "x"));
	tree_node_choose(&n, BACKEND_NONE, NULL);
	CHECK(n.backend == BACKEND_NONE && n.chosen.n == 0 && n.hook == NULL);
}

static void expect_reject(const char *text, const char *want1, const char *want2, int line)
{
	struct tree *t = (struct tree *)0x1;
	char *err = NULL;
	int r = load_text(text, &t, &err);

	CHECKF(r == -EINVAL, "line %d: r = %d", line, r);
	CHECKF(t == (struct tree *)0x1, "line %d: ret written on failure", line);
	CHECKF(err && strstr(err, want1), "line %d: error \"%s\" lacks \"%s\"", line,
	       err ? err : "(none)", want1);
	if (want2)
		CHECKF(err && strstr(err, want2), "line %d: error \"%s\" lacks \"%s\"", line,
		       err ? err : "(none)", want2);
	/* the refusal goes out as a JSON string */
	if (err) {
		json_t *s = json_string(err);

		CHECKF(s, "line %d: error \"%s\" is not UTF-8", line, err);
		json_decref(s);
	}
	free(err);
	if (r == 0 && t != (struct tree *)0x1)
		tree_free(t);
	/* ret_err is optional. */
	t = NULL;
	CHECK(load_text(text, &t, NULL) == -EINVAL && t == NULL);
}
#define REJECT(text, a, b) expect_reject(text, a, b, __LINE__)

static void test_malformed(void)
{
	_cleanup_free_ char *big = NULL, *many = NULL, *longid = NULL;
	size_t i;

	/* Ids. */
	REJECT("{'version': 'v', 'nodes': [" LEAF("Kernel", "fork") "]}", "nodes[0]", "\"id\"");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a..b", "fork") "]}", "empty component",
	       "\"id\"");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a.", "fork") "]}", "nodes[0]", "\"id\"");
	REJECT("{'version': 'v', 'nodes': [" LEAF("1a", "fork") "]}", "nodes[0]", "\"id\"");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a-b", "fork") "]}", "nodes[0]", "\"id\"");
	REJECT("{'version': 'v', 'nodes': [" INNER("a") ", " LEAF("b.c", "fork") "]}",
	       "nodes[1] (b.c)", "parent \"b\" does not appear earlier");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a.b", "fork") ", " INNER("a") "]}", "(a.b)",
	       "parent \"a\"");
	REJECT("{'version': 'v', 'nodes': [" INNER("a") ", " INNER("a.b") ", " INNER(
		   "a.b.c") ", " LEAF("a.b.c.d", "fork") "]}",
	       "(a.b.c.d)", "depth 4");
	REJECT("{'version': 'v', 'nodes': [" INNER("a") ", " LEAF("a.b", "fork") ", " LEAF(
		   "a.b", "futex") "]}",
	       "nodes[2] (a.b)", "duplicate id");
	REJECT("{'version': 'v', 'nodes': [{'description': 'd', 'metrics': ['count'], 'classes': "
	       "['fork']}]}",
	       "nodes[0]", "\"id\": missing");
	REJECT("{'version': 'v', 'nodes': [{'id': 7, 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork']}]}",
	       "nodes[0]", "\"id\"");
	longid = calloc(1, TREE_MAX_ID_LEN + 64);
	REQUIRE(longid);
	memset(longid, 'a', TREE_MAX_ID_LEN + 10);
	big = xasprintf(
	    "{'version': 'v', 'nodes': [{'id': '%s', 'description': 'd', 'metrics': ['count'], "
	    "'classes': ['fork']}]}",
	    longid);
	REJECT(big, "nodes[0]", "too long");
	free(TAKE_PTR(big));

	/* Classes. */
	REJECT("{'version': 'v', 'nodes': [" LEAF("a", "forks") "]}", "nodes[0] (a)",
	       "\"classes\": unknown class \"forks\"");
	REJECT("{'version': 'v', 'nodes': [" INNER("a") "]}", "(a)", "\"classes\": missing");
	/* the classifier measures a leaf by its classes; only functions measure one without */
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'hooks': {'fentry': ['f'], 'tracepoint': ['sched_switch']}}]}",
	       "(a)", "a leaf must own a class, unless only functions");
	{
		_cleanup_free_ char *err = NULL;
		json_auto_t *doc = json_loads("{\"version\": \"v\", \"nodes\": [{\"id\": \"a\", "
					      "\"description\": \"d\", \"metrics\": [\"count\"], "
					      "\"hooks\": {\"kprobe\": [\"f\"]}}]}",
					      0, NULL);
		struct tree *t = NULL;

		CHECKF(doc && tree_from_json(doc, &t, &err) == 0 && t && t->nodes[0].classes == 0,
		       "a leaf of functions alone: %s", err ?: "");
		tree_free(t);
	}
	REJECT(
	    "{'version': 'v', 'nodes': [" INNER("a") ", " INNER("a.b") ", " LEAF("c", "fork") "]}",
	    "nodes[1] (a.b)", "\"classes\"");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a", "fork") ", " LEAF("a.b", "futex") "]}",
	       "nodes[0] (a)", "inner node may not list classes");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a", "fork") ", " LEAF("b", "fork") "]}",
	       "nodes[1] (b)", "already belongs to a");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': []}]}",
	       "(a)", "\"classes\"");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork', 'fork']}]}",
	       "(a)", "duplicate class");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': 'fork'}]}",
	       "(a)", "\"classes\"");

	/* Metrics. */
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': [], "
	       "'classes': ['fork']}]}",
	       "(a)", "\"metrics\": must not be empty");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['bytes'], "
	       "'classes': ['fork']}]}",
	       "(a)", "unknown metric \"bytes\"");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count', "
	       "'count'], 'classes': ['fork']}]}",
	       "(a)", "\"metrics\"");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'classes': ['fork']}]}",
	       "(a)", "\"metrics\": missing");

	/* Description. */
	REJECT(
	    "{'version': 'v', 'nodes': [{'id': 'a', 'metrics': ['count'], 'classes': ['fork']}]}",
	    "(a)", "\"description\": missing");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': '', 'metrics': ['count'], "
	       "'classes': ['fork']}]}",
	       "(a)", "\"description\"");

	/* Hooks. */
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'uprobe': ['x']}}]}",
	       "(a)", "unknown backend \"uprobe\"");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'kprobe': ['do-x']}}]}",
	       "(a)", "invalid hook \"do-x\"");
	/* quoted up to 64 bytes: the cut falls inside the two bytes of 'é' */
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'tracepoint': ['a+"
	       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\u00e9']}}]}",
	       "(a)", "invalid hook \"a+xxx");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'kprobe': ['x+y']}}]}",
	       "(a)", "\"hooks\"");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'tracepoint': ['a++b']}}]}",
	       "(a)", "invalid hook");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'tracepoint': ['a+']}}]}",
	       "(a)", "invalid hook");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'fentry': ['x', 'x']}}]}",
	       "(a)", "duplicate hook");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'fentry': 'x'}}]}",
	       "(a)", "\"hooks\"");
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': ['x']}]}",
	       "(a)", "\"hooks\"");
	many = xstrdup("");
	for (i = 0; i <= TREE_MAX_HOOKS; i++) {
		char *m = xasprintf("%s%s'f%zu'", many, i ? ", " : "", i);

		free(many);
		many = m;
	}
	big = xasprintf(
	    "{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	    "'classes': ['fork'], 'hooks': {'kprobe': [%s]}}]}",
	    many);
	REJECT(big, "(a)", "more than 16 alternatives");
	free(TAKE_PTR(big));
	/* a name longer than TREE_MAX_HOOK_NAME_LEN, more than TREE_MAX_NODE_HOOKS names */
	free(TAKE_PTR(many));
	many = calloc(1, TREE_MAX_HOOK_NAME_LEN + 2);
	REQUIRE(many);
	memset(many, 'f', TREE_MAX_HOOK_NAME_LEN + 1);
	big = xasprintf(
	    "{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	    "'classes': ['fork'], 'hooks': {'fentry': ['%s']}}]}",
	    many);
	REJECT(big, "(a)", "a name longer than 63 characters");
	free(TAKE_PTR(big));
	free(TAKE_PTR(many));
	many = xstrdup("t0");
	for (i = 1; i <= TREE_MAX_NODE_HOOKS; i++) {
		char *m = xasprintf("%s+t%zu", many, i);

		free(many);
		many = m;
	}
	big = xasprintf(
	    "{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	    "'classes': ['fork'], 'hooks': {'tracepoint': ['%s']}}]}",
	    many);
	REJECT(big, "(a)", "more than 24 names");
	free(TAKE_PTR(big));
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'hooks': {'tracepoint': ['p+q', 'p+q']}}]}",
	       "(a)", "duplicate hook \"p+q\"");

	/* Unknown fields, at both levels. */
	REJECT("{'version': 'v', 'nodes': [{'id': 'a', 'description': 'd', 'metrics': ['count'], "
	       "'classes': ['fork'],"
	       " 'unit': 'ns'}]}",
	       "nodes[0] (a)", "\"unit\": unknown field");
	REJECT("{'version': 'v', 'nodes': [" LEAF("a", "fork") "], 'extra': 1}", "\"extra\"",
	       "unknown field");

	/* Document shape. */
	REJECT("{'nodes': [" LEAF("a", "fork") "]}", "\"version\"", NULL);
	REJECT("{'version': '', 'nodes': [" LEAF("a", "fork") "]}", "\"version\"", NULL);
	REJECT("{'version': 'v', 'nodes': []}", "\"nodes\"", NULL);
	REJECT("{'version': 'v'}", "\"nodes\"", NULL);
	REJECT("{'version': 'v', 'nodes': [7]}", "nodes[0]", NULL);
	REJECT("[]", "document", NULL);

	/* Too many nodes, and too many children for one level's slots. */
	free(TAKE_PTR(many));
	many = xstrdup("");
	for (i = 0; i <= TREE_MAX_NODES; i++) {
		char *m = xasprintf("%s%s" INNER("n%zu"), many, i ? ", " : "", i);

		free(many);
		many = m;
	}
	big = xasprintf("{'version': 'v', 'nodes': [%s]}", many);
	REJECT(big, "\"nodes\"", "more than the maximum 256");
	free(TAKE_PTR(big));
	free(TAKE_PTR(many));
	many = xstrdup(INNER("a"));
	for (i = 0; i <= TREE_MAX_CHILDREN; i++) {
		char *m = xasprintf("%s, " INNER("a.c%zu"), many, i);

		free(many);
		many = m;
	}
	big = xasprintf("{'version': 'v', 'nodes': [%s]}", many);
	REJECT(big, "nodes[33] (a.c32)", "more than 32 children");
}

/* A temporary file with content (len 0: up to its NUL); the caller unlinks it. */
static char *write_temp(const char *content, size_t len)
{
	char *path = xstrdup("/tmp/argus-test-tree-XXXXXX");
	int fd = mkstemp(path);

	if (len == 0)
		len = strlen(content);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, content, len) == (ssize_t)len);
	close(fd);
	return path;
}

static void test_load_file(void)
{
	_cleanup_free_ char *path = NULL, *err = NULL, *big = NULL;
	struct tree *t = NULL;
	int r;

	r = tree_load_file("/nonexistent/tree.json", &t, &err);
	CHECK(r == -ENOENT && t == NULL);
	CHECK(err && strstr(err, "/nonexistent/tree.json"));
	free(TAKE_PTR(err));

	path = write_temp("{\"version\": \"v\", \"nodes\": [\n  {\"id\": }\n]}", 0);
	r = tree_load_file(path, &t, &err);
	CHECK(r == -EINVAL && t == NULL);
	CHECKF(err && strstr(err, path) && strstr(err, ":2:"), "%s", err ? err : "(none)");
	free(TAKE_PTR(err));
	unlink(path);
	free(TAKE_PTR(path));

	/* Duplicate keys are an error, not a silent overwrite. */
	path = write_temp("{\"version\": \"v\", \"version\": \"w\", \"nodes\": []}", 0);
	r = tree_load_file(path, &t, &err);
	CHECK(r == -EINVAL && t == NULL && err);
	free(TAKE_PTR(err));
	unlink(path);
	free(TAKE_PTR(path));

	/* Loader errors keep the node and field, prefixed with the file. */
	path =
	    write_temp("{\"version\": \"v\", \"nodes\": [{\"id\": \"a\", \"description\": \"d\", "
		       "\"metrics\": [\"count\"], \"classes\": [\"nope\"]}]}",
		       0);
	r = tree_load_file(path, &t, &err);
	CHECK(r == -EINVAL && t == NULL);
	CHECKF(err && strstr(err, path) && strstr(err, "nodes[0] (a)") && strstr(err, "nope"), "%s",
	       err ? err : "(none)");
	free(TAKE_PTR(err));
	unlink(path);
	free(TAKE_PTR(path));

	big = malloc(TREE_MAX_FILE_BYTES + 2);
	REQUIRE(big);
	memset(big, ' ', TREE_MAX_FILE_BYTES + 1);
	path = write_temp(big, TREE_MAX_FILE_BYTES + 1);
	r = tree_load_file(path, &t, &err);
	CHECK(r == -EFBIG && t == NULL);
	CHECK(err && strstr(err, "larger than"));
	unlink(path);
}

int main(void)
{
	test_real_tree();
	test_queries();
	test_to_json();
	test_small_valid();
	test_hooks();
	test_malformed();
	test_load_file();
	return tap_done("test-tree");
}
