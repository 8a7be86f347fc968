// SPDX-License-Identifier: MIT
/*
 * Resolution rules with fake probers: backend order, symbol variants, caching, inner nodes,
 * and the backends setting that restricts and reorders the backends.
 */
#include "daemon/config.h"
#include "daemon/resolve.h"
#include "daemon/util.h"
#include "tests/real-tree.h"
#include "tests/tap.h"
#include "tests/tree-text.h"

#include <errno.h>
#include <string.h>

#define MAX_CALLS 512

/* A fake kernel: decide() says whether (backend, hook) attaches; every call is logged. */
struct fake {
	int (*decide)(enum backend b, const char *hook, char **ret_reason);
	struct {
		enum backend b;
		char hook[128];
	} calls[MAX_CALLS];
	size_t n_calls;
};

static int fake_try(void *userdata, const struct backend_order *order, enum backend b,
		    const char *hook, char **ret_reason)
{
	struct fake *f = userdata;

	REQUIRE(f->n_calls < MAX_CALLS);
	f->calls[f->n_calls].b = b;
	snprintf(f->calls[f->n_calls].hook, sizeof(f->calls[0].hook), "%s", hook);
	f->n_calls++;
	return f->decide(b, hook, ret_reason);
}

static size_t calls_of(const struct fake *f, enum backend b, const char *hook)
{
	size_t i, n = 0;

	for (i = 0; i < f->n_calls; i++)
		if (f->calls[i].b == b && strcmp(f->calls[i].hook, hook) == 0)
			n++;
	return n;
}

static size_t calls_of_backend(const struct fake *f, enum backend b)
{
	size_t i, n = 0;

	for (i = 0; i < f->n_calls; i++)
		n += f->calls[i].b == b;
	return n;
}

/* Every (backend, hook) at most once, and never a '+'-joined name. */
static void check_probed_once(const struct fake *f)
{
	size_t i;

	for (i = 0; i < f->n_calls; i++) {
		CHECKF(calls_of(f, f->calls[i].b, f->calls[i].hook) == 1, "%s %s probed %zu times",
		       backend_name(f->calls[i].b), f->calls[i].hook,
		       calls_of(f, f->calls[i].b, f->calls[i].hook));
		CHECKF(!strchr(f->calls[i].hook, '+'), "joined hook %s", f->calls[i].hook);
	}
}

/* A leaf of the real tree with only tracepoint hooks: what fentry alone leaves unavailable. */
static bool tracepoint_only(const struct tree_node *n)
{
	return n->n_children == 0 && n->n_hooks[BACKEND_FENTRY] == 0 &&
	       n->n_hooks[BACKEND_KPROBE] == 0;
}

/* Unavailable with fentry alone: such a leaf, or an inner node all of whose children are. */
static bool fentry_unavailable(const struct tree *t, const struct tree_node *n)
{
	size_t i;

	if (n->n_children == 0)
		return tracepoint_only(n);
	for (i = 0; i < n->n_children; i++)
		if (!fentry_unavailable(t, &t->nodes[n->children[i]]))
			return false;
	return true;
}

static size_t count_tracepoint_only(const struct tree *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->n_nodes; i++)
		n += fentry_unavailable(t, &t->nodes[i]);
	return n;
}

/* The distinct tracepoints of the first alternative of those leaves: each is tried once. */
static size_t count_tracepoint_only_hooks(const struct tree *t)
{
	const char *seen[64];
	size_t i, h, k, n = 0;

	for (i = 0; i < t->n_nodes; i++) {
		const struct hook_list *l = t->nodes[i].hooks[BACKEND_TRACEPOINT];

		if (!tracepoint_only(&t->nodes[i]) || !t->nodes[i].n_hooks[BACKEND_TRACEPOINT])
			continue;
		for (h = 0; h < l[0].n; h++) {
			for (k = 0; k < n && strcmp(seen[k], l[0].v[h].name); k++)
				;
			if (k == n && n < ARRAY_SIZE(seen))
				seen[n++] = l[0].v[h].name;
		}
	}
	return n;
}

/* A node and everything below it. */
static size_t subtree_size(const struct tree *t, int root)
{
	size_t i, n = 0;

	for (i = 0; i < t->n_nodes; i++)
		n += tree_in_subtree(t, root, (int)i);
	return n;
}

static struct tree *load_real(void)
{
	return real_tree_load(false);
}

/* The real tree as only functions would measure it (real-tree.h). */
static struct tree *load_real_functions(void)
{
	return real_tree_load(true);
}

static const struct tree_node *node(const struct tree *t, const char *id)
{
	int i = tree_find(t, id);

	REQUIRE(i >= 0);
	return &t->nodes[i];
}

static bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* This machine: fentry refused at load (EPERM), no kprobes, tracepoints attach. */
static int decide_tracepoint_only(enum backend b, const char *hook, char **ret_reason)
{
	if (b == BACKEND_FENTRY)
		return -EPERM; /* no reason: the resolver says strerror */
	if (b == BACKEND_KPROBE) {
		*ret_reason = xstrdup("kprobe: kernel has no kprobe support (CONFIG_KPROBES off)");
		return -EOPNOTSUPP;
	}
	return 0;
}

static void test_tracepoint_only(void)
{
	struct tree *t = load_real();
	struct fake f = {.decide = decide_tracepoint_only};
	struct prober p = {fake_try, &f};
	const struct tree_node *n;
	json_auto_t *j = NULL;
	size_t i;
	int r;

	r = tree_resolve(t, &p);
	CHECK(r == 0);
	check_probed_once(&f);

	n = node(t, "kernel_paging.anon_fault.minor");
	CHECK(n->backend == BACKEND_TRACEPOINT);
	CHECK(streq(n->hook, "page_fault_user+rss_stat"));
	/* One meaning per node: the function backends are not tried for a leaf with classes. */
	CHECKF(streq(n->reason, "fentry: do_anonymous_page gives its calls and their inclusive "
				"time, not this node's measure (the classifier's exclusive thread "
				"time, runqueue waits and nested paths left out); "
				"kprobe: do_anonymous_page gives its calls and their inclusive "
				"time, not this node's measure (the classifier's exclusive thread "
				"time, runqueue waits and nested paths left out)"),
	       "%s", n->reason);

	/* Only a tracepoint declared: nothing refused, nothing to explain. */
	n = node(t, "kernel_paging.anon_fault.zero_page");
	CHECK(n->backend == BACKEND_TRACEPOINT && streq(n->hook, "page_fault_user") && !n->reason);
	n = node(t, "kernel_scheduler.runqueue_wait");
	CHECK(n->backend == BACKEND_TRACEPOINT &&
	      streq(n->hook, "sched_wakeup+sched_wakeup_new+sched_switch") && !n->reason);

	n = node(t, "kernel_paging.file_fault.major");
	CHECK(n->backend == BACKEND_TRACEPOINT &&
	      streq(n->hook, "page_fault_user+sched_switch+mm_filemap_add_to_page_cache"));
	CHECK(n->reason && strstr(n->reason, "fentry: filemap_fault gives its calls"));

	/* Inner nodes: measured through their children, on the tracepoint backend. */
	n = node(t, "kernel_paging");
	CHECK(n->backend == BACKEND_TRACEPOINT &&
	      streq(n->hook, "page_fault_user+rss_stat+mm_page_alloc+sched_switch+"
			     "mm_filemap_add_to_page_cache+tlb_flush") &&
	      n->reason == NULL);
	n = node(t, "kernel_paging.anon_fault");
	CHECK(n->backend == BACKEND_TRACEPOINT &&
	      streq(n->hook, "page_fault_user+rss_stat+mm_page_alloc") && n->reason == NULL);
	/* the choice parsed: one hook per tracepoint, each once */
	CHECK(n->chosen.n == 3 && n->chosen.v[2].kind == HOOK_TRACEPOINT &&
	      streq(n->chosen.v[0].name, "page_fault_user") &&
	      streq(n->chosen.v[2].name, "mm_page_alloc"));
	CHECK(node(t, "kernel_paging")->chosen.n == 6);
	n = node(t, "kernel_paging.anon_fault.minor");
	CHECK(n->chosen.n == 2 && streq(n->chosen.v[1].name, "rss_stat"));

	for (i = 0; i < t->n_nodes; i++)
		CHECKF(t->nodes[i].backend == BACKEND_TRACEPOINT, "%s", t->nodes[i].id);

	/* Shared tracepoints are probed once for the whole tree. */
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "page_fault_user") == 1);
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "rss_stat") == 1);
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "sched_switch") == 1);
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "block_rq_issue") == 1);
	/* nothing was asked of the function backends: no leaf of this tree is theirs */
	CHECK(calls_of(&f, BACKEND_KPROBE, "do_anonymous_page.isra.0") == 0);
	CHECK(calls_of(&f, BACKEND_FENTRY, "do_anonymous_page") == 0);
	CHECK(calls_of(&f, BACKEND_FENTRY, "kernel_clone") == 0);

	j = tree_to_json(t);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "summary"), "unavailable")) ==
	      0);
	CHECK(json_integer_value(json_object_get(
		  json_object_get(json_object_get(j, "summary"), "by_backend"), "tracepoint")) ==
	      (json_int_t)t->n_nodes);
	tree_free(t);
}

/* kprobes work, but only the renamed ".isra.0" symbols exist; no fentry, no tracepoints. */
static int decide_isra_only(enum backend b, const char *hook, char **ret_reason)
{
	if (b == BACKEND_FENTRY) {
		*ret_reason = xstrdup("fentry: no BTF for the function");
		return -ENOENT;
	}
	if (b == BACKEND_KPROBE) {
		if (strstr(hook, ".isra.0"))
			return 0;
		*ret_reason = xasprintf("symbol %s not in kallsyms", hook);
		return -ENOENT;
	}
	*ret_reason = xstrdup("no such tracepoint");
	return -ENOENT;
}

static void test_symbol_variants(void)
{
	struct tree *t = load_real_functions();
	struct fake f = {.decide = decide_isra_only};
	struct prober p = {fake_try, &f};
	const struct tree_node *n;
	int r, unavailable = 0;
	size_t i;

	r = tree_resolve(t, &p);
	check_probed_once(&f);
	for (i = 0; i < t->n_nodes; i++)
		unavailable += t->nodes[i].backend == BACKEND_NONE;
	CHECK(r == unavailable);

	n = node(t, "kernel_paging.anon_fault.minor");
	CHECK(n->backend == BACKEND_KPROBE && streq(n->hook, "do_anonymous_page.isra.0"));
	/* The refusals before the choice, the prober's "fentry: " prefix said once. */
	CHECKF(streq(n->reason,
		     "fentry: do_anonymous_page: no BTF for the function; "
		     "kprobe: do_anonymous_page: symbol do_anonymous_page not in kallsyms"),
	       "%s", n->reason);
	/* Later alternatives are not tried once one works. */
	CHECK(calls_of(&f, BACKEND_KPROBE, "do_anonymous_page.constprop.0") == 0);
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "page_fault_user") == 1);

	n = node(t, "kernel_paging.anon_fault.cow");
	CHECK(n->backend == BACKEND_KPROBE && streq(n->hook, "wp_page_copy.isra.0"));
	CHECK(calls_of(&f, BACKEND_KPROBE, "do_wp_page") == 0);

	n = node(t, "kernel_scheduler.load_balance");
	CHECK(n->backend == BACKEND_KPROBE && streq(n->hook, "load_balance.isra.0"));
	CHECK(n->reason && strstr(n->reason, "fentry: sched_balance_rq: ") &&
	      strstr(n->reason, "fentry: load_balance: ") &&
	      strstr(n->reason, "kprobe: sched_balance_rq: ") &&
	      strstr(n->reason, "kprobe: load_balance: "));

	/* No variant and no tracepoint: every refusal is listed. */
	n = node(t, "kernel_paging.anon_fault.thp");
	CHECK(n->backend == BACKEND_NONE && n->hook == NULL);
	CHECKF(streq(n->reason, "fentry: do_huge_pmd_anonymous_page: no BTF for the function; "
				"kprobe: do_huge_pmd_anonymous_page: symbol "
				"do_huge_pmd_anonymous_page not in kallsyms"),
	       "%s", n->reason);
	/* The first tracepoint of a joined alternative failed: the rest are not tried. */
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "mm_page_alloc") == 0);

	n = node(t, "kernel_paging.anon_fault.zero_page");
	CHECK(n->backend == BACKEND_NONE &&
	      streq(n->reason, "tracepoint: page_fault_user: no such tracepoint"));

	/* anon_fault: two of four children measurable, the others named. */
	n = node(t, "kernel_paging.anon_fault");
	CHECK(n->backend == BACKEND_KPROBE &&
	      streq(n->hook, "do_anonymous_page.isra.0+wp_page_copy.isra.0"));
	CHECKF(streq(n->reason, "measured through 2 of 4 children; unavailable: "
				"kernel_paging.anon_fault.zero_page, kernel_paging.anon_fault.thp"),
	       "%s", n->reason);

	/* file_fault: no child has an .isra.0 variant. */
	n = node(t, "kernel_paging.file_fault");
	CHECK(n->backend == BACKEND_NONE);
	CHECK(n->reason &&
	      strncmp(n->reason, "no child is available: kernel_paging.file_fault.page_cache [",
		      60) == 0);
	CHECK(n->reason &&
	      strstr(n->reason, "kernel_paging.file_fault.major [fentry: filemap_fault: "));
	n = node(t, "kernel_paging");
	CHECK(n->backend == BACKEND_KPROBE);
	CHECK(streq(n->reason, "measured through 1 of 3 children; unavailable: "
			       "kernel_paging.file_fault, kernel_paging.tlb_shootdown"));
	tree_free(t);
}

/* A kernel that allows fentry everywhere (and tracepoints); kprobes must never be asked. */
static int decide_fentry(enum backend b, const char *hook, char **ret_reason)
{
	if (b == BACKEND_KPROBE) {
		*ret_reason = xstrdup("should not be tried");
		return -EINVAL;
	}
	return 0;
}

static void test_fentry_everywhere(void)
{
	struct tree *t = load_real_functions();
	struct fake f = {.decide = decide_fentry};
	struct prober p = {fake_try, &f};
	const struct tree_node *n;
	size_t i;

	CHECK(tree_resolve(t, &p) == 0);
	check_probed_once(&f);
	CHECK(calls_of_backend(&f, BACKEND_KPROBE) == 0);

	n = node(t, "kernel_paging.anon_fault.minor");
	CHECK(n->backend == BACKEND_FENTRY && streq(n->hook, "do_anonymous_page") && !n->reason);
	n = node(t, "kernel_paging.anon_fault.cow");
	CHECK(n->backend == BACKEND_FENTRY && streq(n->hook, "wp_page_copy"));
	CHECK(calls_of(&f, BACKEND_FENTRY, "do_wp_page") == 0);
	n = node(t, "kernel_scheduler.load_balance");
	CHECK(n->backend == BACKEND_FENTRY && streq(n->hook, "sched_balance_rq"));
	/* Nodes with only tracepoints still get them. */
	n = node(t, "kernel_paging.anon_fault.zero_page");
	CHECK(n->backend == BACKEND_TRACEPOINT && !n->reason);
	/* Inner: the backend most children use (3 fentry, 1 tracepoint). */
	n = node(t, "kernel_paging.anon_fault");
	CHECK(n->backend == BACKEND_FENTRY);
	/* ... measured through the hooks its fentry children chose; zero_page is not on it. */
	CHECK(streq(n->hook, "do_anonymous_page+wp_page_copy+do_huge_pmd_anonymous_page"));
	CHECK(n->chosen.n == 3 && n->chosen.v[1].kind == HOOK_FUNCTION &&
	      streq(n->chosen.v[1].name, "wp_page_copy"));
	CHECK(node(t, "kernel_scheduler")->backend == BACKEND_FENTRY);

	/* Tracepoints asked only for the nodes that have nothing else. */
	CHECK_EQ(calls_of_backend(&f, BACKEND_TRACEPOINT), count_tracepoint_only_hooks(t),
		 "tracepoint trials");
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "page_fault_user") == 1);
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "sched_wakeup_new") == 1);
	for (i = 0; i < t->n_nodes; i++)
		CHECK(t->nodes[i].backend != BACKEND_NONE);
	tree_free(t);
}

/* Tracepoints attach, except the system call events and mmap_lock's. */
static int decide_no_sync(enum backend b, const char *hook, char **ret_reason)
{
	static const char *const sync_hooks[] = {"sys_enter", "sys_exit", "mmap_lock_start_locking",
						 "mmap_lock_acquire_returned"};
	size_t i;

	if (b != BACKEND_TRACEPOINT)
		return decide_tracepoint_only(b, hook, ret_reason);
	for (i = 0; i < ARRAY_SIZE(sync_hooks); i++)
		if (strcmp(hook, sync_hooks[i]) == 0) {
			*ret_reason = xasprintf("verifier rejected %s", hook);
			return -EACCES;
		}
	return 0;
}

/*
 * kernel_sync's leaves on those hooks are unavailable, and so is
 * kernel_sync.socket, none of whose children is left; kernel_sync stays,
 * through the one leaf on the scheduler's tracepoints (vfs_wait), whose
 * hook alone it now has.
 */
static void test_subtree_refused(void)
{
	struct tree *t = load_real();
	struct fake f = {.decide = decide_no_sync};
	struct prober p = {fake_try, &f};
	const struct tree_node *n;
	json_auto_t *j = NULL;
	json_t *jn;
	size_t gone = subtree_size(t, tree_find(t, "kernel_sync")) - 2;

	CHECK_EQ(tree_resolve(t, &p), gone, "unavailable");
	check_probed_once(&f);

	n = node(t, "kernel_sync.futex");
	CHECK(n->backend == BACKEND_NONE && n->hook == NULL);
	CHECKF(streq(n->reason,
		     "fentry: futex_wait gives its calls and their inclusive time, not this "
		     "node's measure (the classifier's exclusive thread time, runqueue waits "
		     "and nested paths left out); "
		     "kprobe: futex_wait gives its calls and their inclusive time, not this "
		     "node's measure (the classifier's exclusive thread time, runqueue waits "
		     "and nested paths left out); "
		     "tracepoint: sys_enter: verifier rejected sys_enter"),
	       "%s", n->reason);
	n = node(t, "kernel_sync.mmap_lock");
	CHECK(n->backend == BACKEND_NONE && n->reason &&
	      strstr(n->reason, "tracepoint: mmap_lock_start_locking: verifier rejected"));
	n = node(t, "kernel_sync.socket");
	CHECK(n->backend == BACKEND_NONE && n->hook == NULL);
	CHECKF(n->reason &&
		   strstr(n->reason, "no child is available: kernel_sync.socket.stream_recv [") &&
		   strstr(n->reason, "verifier rejected sys_enter"),
	       "%s", n->reason ?: "(none)");
	n = node(t, "kernel_sync.vfs_wait");
	CHECK(n->backend == BACKEND_TRACEPOINT && streq(n->hook, "sched_switch+sched_wakeup"));
	n = node(t, "kernel_sync");
	CHECKF(n->backend == BACKEND_TRACEPOINT && streq(n->hook, "sched_switch+sched_wakeup"),
	       "kernel_sync: %s", n->hook ?: "(none)");
	CHECKF(streq(n->reason, "measured through 1 of 7 children; unavailable: kernel_sync.futex, "
				"kernel_sync.mmap_lock, kernel_sync.pipe, kernel_sync.socket, "
				"kernel_sync.epoll, kernel_sync.file_lock"),
	       "%s", n->reason ?: "(none)");

	/* Everything else is untouched. */
	CHECK(node(t, "kernel_block_io")->backend == BACKEND_TRACEPOINT);
	CHECK(node(t, "kernel_paging.anon_fault.thp")->backend == BACKEND_TRACEPOINT);

	j = tree_to_json(t);
	CHECK_EQ(json_integer_value(json_object_get(json_object_get(j, "summary"), "unavailable")),
		 gone, "unavailable");
	jn = json_array_get(json_object_get(j, "nodes"), tree_find(t, "kernel_sync.socket"));
	CHECK(json_is_false(json_object_get(jn, "available")));
	CHECK(json_is_null(json_object_get(jn, "backend")) &&
	      json_is_null(json_object_get(jn, "hook")));
	CHECK(json_is_string(json_object_get(jn, "reason")));

	/* A second resolution replaces the first. */
	f.n_calls = 0;
	f.decide = decide_tracepoint_only;
	CHECK(tree_resolve(t, &p) == 0);
	n = node(t, "kernel_sync");
	CHECK(n->backend == BACKEND_TRACEPOINT && n->reason == NULL);
	CHECKF(streq(n->hook, "sys_enter+sys_exit+mmap_lock_start_locking+mmap_lock_acquire_returned+"
			      "sched_switch+sched_wakeup"),
	       "kernel_sync: %s", n->hook ?: "(none)");
	CHECK(calls_of(&f, BACKEND_TRACEPOINT, "sys_enter") == 1);
	tree_free(t);
}

static int decide_refuse_x_and_fentry_y(enum backend b, const char *hook, char **ret_reason)
{
	if (strcmp(hook, "x") == 0)
		return -ENOENT;
	if (strcmp(hook, "y") == 0)
		return b == BACKEND_FENTRY ? 0 : -ENOENT;
	return b == BACKEND_TRACEPOINT ? 0 : -EPERM;
}

static void test_inner_hooks_and_ties(void)
{
	struct tree *t = tree_load_text(
	    "{'version': 'v', 'nodes': ["
	    " {'id': 'a', 'description': 'd', 'metrics': ['count'], 'hooks': {'fentry': ['y']}},"
	    " {'id': 'a.l', 'description': 'd', 'metrics': ['count'], 'hooks': {'fentry': ['y']}},"
	    " {'id': 'b', 'description': 'd', 'metrics': ['count'], 'hooks': {'kprobe': ['x']}},"
	    " {'id': 'b.l1', 'description': 'd', 'metrics': ['count'], 'hooks': {'fentry': ['y']}},"
	    " {'id': 'b.l2', 'description': 'd', 'metrics': ['count'], 'classes': ['mmap_lock'], "
	    "'hooks': {'tracepoint': ['t1']}},"
	    " {'id': 'c', 'description': 'd', 'metrics': ['count'], 'classes': ['migrate']},"
	    " {'id': 'd', 'description': 'd', 'metrics': ['count'], "
	    "'hooks': {'fentry': ['x'], 'kprobe': ['z']}}"
	    "]}");
	struct fake f = {.decide = decide_refuse_x_and_fentry_y};
	struct prober p = {fake_try, &f};

	CHECK(tree_resolve(t, &p) == 2);
	check_probed_once(&f);
	/* An inner node with a hook that works uses it. */
	CHECK(t->nodes[0].backend == BACKEND_FENTRY && streq(t->nodes[0].hook, "y") &&
	      !t->nodes[0].reason);
	CHECK(calls_of(&f, BACKEND_FENTRY, "y") == 1);
	/* Its own hook refused: through its children; one fentry, one tracepoint: the sum of
	 * both, labelled with the earlier backend of the order. */
	CHECK(t->nodes[2].backend == BACKEND_FENTRY && streq(t->nodes[2].hook, "y"));
	CHECKF(streq(t->nodes[2].reason,
		     "kprobe: x gives its calls and their inclusive time, not this node's measure "
		     "(the classifier's exclusive thread time, runqueue waits and nested paths "
		     "left out); the sum of its children, each on its own backend (fentry 1, "
		     "tracepoint 1)"),
	       "%s", t->nodes[2].reason);
	CHECK(t->nodes[2].sum_of_children && !t->nodes[0].sum_of_children);
	CHECK(t->nodes[4].backend == BACKEND_TRACEPOINT && streq(t->nodes[4].hook, "t1"));
	/* A leaf without hooks. */
	CHECK(t->nodes[5].backend == BACKEND_NONE &&
	      streq(t->nodes[5].reason, "no hooks declared"));
	CHECKF(streq(t->nodes[6].reason,
		     "fentry: x: No such file or directory; kprobe: z: Operation not permitted"),
	       "%s", t->nodes[6].reason);
	CHECK(calls_of(&f, BACKEND_FENTRY, "x") == 1 && calls_of(&f, BACKEND_KPROBE, "x") == 0);

	CHECK(tree_resolve(NULL, &p) == -EINVAL);
	CHECK(tree_resolve(t, NULL) == -EINVAL);
	CHECK(tree_resolve(t, &(struct prober){NULL, NULL}) == -EINVAL);
	tree_free(t);
}

static struct backend_order order_of(const char *text)
{
	struct backend_order o;

	REQUIRE(backend_order_parse(text, &o) == 0);
	return o;
}

/* The "backends" setting: names in order, each once, nothing else. */
static void test_order_parse(void)
{
	static const char *const bad[] = {"",	    " , ",	     "uprobe",
					  "none",   "fentry fentry", "kprobe,tracepoint,kprobe",
					  "Fentry", "tracepoint2",   "fentry kprobe tracepoint x",
					  "tp_btf"};
	struct backend_order o = order_of("kprobe tracepoint"), def;
	_cleanup_free_ char *text = NULL, *deftext = NULL;
	struct config cfg;
	char *err = NULL;
	json_auto_t *j = NULL;
	size_t i;

	CHECK(o.n == 2 && o.v[0] == BACKEND_KPROBE && o.v[1] == BACKEND_TRACEPOINT);
	CHECK(!backend_order_has(&o, BACKEND_FENTRY) && backend_order_has(&o, BACKEND_KPROBE));
	o = order_of(" tracepoint,\tfentry ,kprobe ");
	CHECK(o.n == 3 && o.v[0] == BACKEND_TRACEPOINT && o.v[1] == BACKEND_FENTRY &&
	      o.v[2] == BACKEND_KPROBE);
	text = backend_order_to_string(&o);
	CHECKF(streq(text, "tracepoint fentry kprobe"), "%s", text);
	j = backend_order_to_json(&o);
	CHECK(json_array_size(j) == 3 &&
	      streq(json_string_value(json_array_get(j, 0)), "tracepoint"));

	/* A refused value leaves the order as it was. */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		o = order_of("fentry");
		CHECKF(backend_order_parse(bad[i], &o) == -EINVAL, "'%s' accepted", bad[i]);
		CHECKF(o.n == 1 && o.v[0] == BACKEND_FENTRY, "'%s' changed the order", bad[i]);
	}
	CHECK(backend_order_parse(NULL, &o) == -EINVAL);

	/* The default, and an unset order (n == 0), are fentry kprobe tracepoint. */
	backend_order_default(&def);
	deftext = backend_order_to_string(&def);
	CHECK(streq(deftext, "fentry kprobe tracepoint"));
	free(deftext);
	deftext = backend_order_to_string(&(struct backend_order){});
	CHECK(streq(deftext, "fentry kprobe tracepoint"));
	CHECK(backend_order_has(NULL, BACKEND_KPROBE) && !backend_order_has(NULL, BACKEND_NONE));

	/* The configuration key. */
	config_defaults(&cfg);
	CHECK(cfg.backends.n == 3 && cfg.backends.v[0] == BACKEND_FENTRY &&
	      cfg.backends.v[2] == BACKEND_TRACEPOINT);
	CHECK(config_set(&cfg, "backends", "kprobe tracepoint", &err) == 0 && !err);
	CHECK(cfg.backends.n == 2 && cfg.backends.v[0] == BACKEND_KPROBE);
	CHECK(config_set(&cfg, "backends", "kprobe uprobe", &err) == -EINVAL);
	CHECKF(err && strstr(err, "backends"), "%s", err ?: "(no message)");
	CHECK(cfg.backends.n == 2 && cfg.backends.v[1] == BACKEND_TRACEPOINT);
	free(err);
	config_free(&cfg);
}

/* Every backend attaches everywhere: what is chosen is the order's doing alone. */
static int decide_all(enum backend b, const char *hook, char **ret_reason)
{
	return 0;
}

/* A backend left out is never asked, and the nodes that declare it say so. */
static void test_order_restricts(void)
{
	struct tree *t = load_real_functions(), *real = load_real();
	struct fake f = {.decide = decide_all};
	struct prober p = {fake_try, &f};
	struct backend_order o = order_of("kprobe tracepoint");
	const struct tree_node *n;
	size_t i;

	CHECK(tree_resolve_backends(t, &p, &o) == 0);
	check_probed_once(&f);
	CHECK(calls_of_backend(&f, BACKEND_FENTRY) == 0);
	n = node(t, "kernel_paging.anon_fault.minor");
	CHECK(n->backend == BACKEND_KPROBE && streq(n->hook, "do_anonymous_page"));
	CHECKF(streq(n->reason, "fentry: not in the backends setting"), "%s", n->reason);
	/* only a tracepoint declared: nothing left out, nothing to say */
	n = node(t, "kernel_paging.anon_fault.zero_page");
	CHECK(n->backend == BACKEND_TRACEPOINT && !n->reason);
	CHECK(node(t, "kernel_paging.anon_fault")->backend == BACKEND_KPROBE);
	CHECK(node(t, "kernel_scheduler")->backend == BACKEND_KPROBE);

	/* tracepoint alone, the real tree: the tree this machine resolves to, the others named */
	f.n_calls = 0;
	o = order_of("tracepoint");
	CHECK(tree_resolve_backends(real, &p, &o) == 0);
	check_probed_once(&f);
	CHECK(calls_of_backend(&f, BACKEND_FENTRY) == 0 &&
	      calls_of_backend(&f, BACKEND_KPROBE) == 0);
	for (i = 0; i < real->n_nodes; i++)
		CHECKF(real->nodes[i].backend == BACKEND_TRACEPOINT, "%s", real->nodes[i].id);
	n = node(real, "kernel_paging.anon_fault.minor");
	CHECK(streq(n->hook, "page_fault_user+rss_stat"));
	CHECKF(streq(n->reason,
		     "fentry: not in the backends setting; kprobe: not in the backends setting"),
	       "%s", n->reason);
	CHECK(streq(node(real, "kernel_paging")->hook,
		    "page_fault_user+rss_stat+mm_page_alloc+sched_switch+"
		    "mm_filemap_add_to_page_cache+tlb_flush"));
	/* fentry alone, the real tree: no leaf is the function backends', all say why */
	f.n_calls = 0;
	o = order_of("fentry");
	CHECK_EQ(tree_resolve_backends(real, &p, &o), real->n_nodes, "unavailable");
	CHECK(f.n_calls == 0);
	n = node(real, "kernel_scheduler.fork");
	CHECKF(streq(n->reason, "fentry: kernel_clone gives its calls and their inclusive time, "
				"not this node's measure (the classifier's exclusive thread time, "
				"runqueue waits and nested paths left out); kprobe: not in the "
				"backends setting; tracepoint: not in the backends setting"),
	       "%s", n->reason);
	tree_free(real);

	/* fentry alone: the nodes with only tracepoints become unavailable, and say why */
	f.n_calls = 0;
	o = order_of("fentry");
	CHECK_EQ(tree_resolve_backends(t, &p, &o), count_tracepoint_only(t),
		 "unavailable with fentry alone");
	check_probed_once(&f);
	CHECK(calls_of_backend(&f, BACKEND_TRACEPOINT) == 0 &&
	      calls_of_backend(&f, BACKEND_KPROBE) == 0);
	n = node(t, "kernel_scheduler.runqueue_wait");
	CHECK(n->backend == BACKEND_NONE && !n->hook);
	CHECKF(streq(n->reason, "tracepoint: not in the backends setting"), "%s", n->reason);
	n = node(t, "kernel_paging.anon_fault.zero_page");
	CHECK(n->backend == BACKEND_NONE &&
	      streq(n->reason, "tracepoint: not in the backends setting"));
	n = node(t, "kernel_scheduler");
	CHECK(n->backend == BACKEND_FENTRY && streq(n->hook, "sched_balance_rq+kernel_clone"));
	CHECKF(streq(n->reason, "measured through 2 of 3 children; unavailable: "
				"kernel_scheduler.runqueue_wait"),
	       "%s", n->reason);
	n = node(t, "kernel_paging.anon_fault.minor");
	CHECKF(streq(n->reason, "kprobe: not in the backends setting"), "%s", n->reason);

	/* An order that repeats or names no backend is refused before anything is probed. */
	f.n_calls = 0;
	CHECK(tree_resolve_backends(
		  t, &p, &(struct backend_order){{BACKEND_KPROBE, BACKEND_KPROBE}, 2}) == -EINVAL);
	CHECK(tree_resolve_backends(t, &p, &(struct backend_order){{(enum backend)7}, 1}) ==
	      -EINVAL);
	CHECK(tree_resolve_backends(t, &p, &(struct backend_order){{BACKEND_NONE}, 1}) == -EINVAL);
	CHECK(f.n_calls == 0);
	tree_free(t);
}

/* Tracepoints attach except tlb_flush; fentry everywhere; kprobes must never be asked. */
static int decide_no_tlb_tracepoint(enum backend b, const char *hook, char **ret_reason)
{
	if (b == BACKEND_TRACEPOINT && strcmp(hook, "tlb_flush") == 0) {
		*ret_reason = xstrdup("tracepoint: no such tracepoint");
		return -ENOENT;
	}
	return decide_fentry(b, hook, ret_reason);
}

/* The order is the order of trying: tracepoint before fentry, and inner ties follow it. */
static void test_order_reorders(void)
{
	struct tree *t = load_real();
	struct fake f = {.decide = decide_no_tlb_tracepoint};
	struct prober p = {fake_try, &f};
	struct backend_order o = order_of("tracepoint fentry");
	const struct tree_node *n;

	CHECK(tree_resolve_backends(t, &p, &o) == 1); /* tlb_shootdown */
	check_probed_once(&f);
	CHECK(calls_of_backend(&f, BACKEND_KPROBE) == 0);
	/* the tracepoint worked: fentry is not even asked */
	n = node(t, "kernel_paging.anon_fault.minor");
	CHECK(n->backend == BACKEND_TRACEPOINT && streq(n->hook, "page_fault_user+rss_stat"));
	CHECK(calls_of(&f, BACKEND_FENTRY, "do_anonymous_page") == 0);
	CHECKF(streq(n->reason, "fentry: do_anonymous_page gives its calls and their inclusive "
				"time, not this node's measure (the classifier's exclusive thread "
				"time, runqueue waits and nested paths left out); kprobe: not in "
				"the backends setting"),
	       "%s", n->reason);
	/* the tracepoint refused: a function does not stand in for the classifier */
	n = node(t, "kernel_paging.tlb_shootdown");
	CHECK(n->backend == BACKEND_NONE && !n->hook);
	CHECK(calls_of(&f, BACKEND_FENTRY, "flush_tlb_mm_range") == 0);
	CHECKF(n->reason && strstr(n->reason, "; tracepoint: tlb_flush: no such tracepoint"), "%s",
	       n->reason);
	CHECK(node(t, "kernel_paging")->backend == BACKEND_TRACEPOINT);
	tree_free(t);

	/* a leaf only functions measure: the order's first that works */
	t = load_real_functions();
	f = (struct fake){.decide = decide_no_tlb_tracepoint};
	o = order_of("kprobe fentry");
	CHECK_EQ(tree_resolve_backends(t, &p, &o), count_tracepoint_only(t), "unavailable");
	n = node(t, "kernel_paging.tlb_shootdown");
	CHECK(n->backend == BACKEND_FENTRY && streq(n->hook, "flush_tlb_mm_range"));
	CHECK(calls_of(&f, BACKEND_KPROBE, "flush_tlb_mm_range") == 1);
	tree_free(t);
	o = order_of("tracepoint fentry");

	/* One child on fentry, one on tracepoint: the tie goes to the order's first. */
	t = tree_load_text(
	    "{'version': 'v', 'nodes': ["
	    " {'id': 'a', 'description': 'd', 'metrics': ['count']},"
	    " {'id': 'a.f', 'description': 'd', 'metrics': ['count'], 'hooks': {'fentry': ['y']}},"
	    " {'id': 'a.t', 'description': 'd', 'metrics': ['count'], 'classes': ['futex'], "
	    "'hooks': {'tracepoint': ['t1']}}"
	    "]}");
	f = (struct fake){.decide = decide_all};
	CHECK(tree_resolve_backends(t, &p, &o) == 0);
	CHECK(t->nodes[0].backend == BACKEND_TRACEPOINT && streq(t->nodes[0].hook, "t1"));
	o = order_of("fentry tracepoint");
	CHECK(tree_resolve_backends(t, &p, &o) == 0);
	CHECK(t->nodes[0].backend == BACKEND_FENTRY && streq(t->nodes[0].hook, "y"));
	/* NULL and an empty order are the default */
	CHECK(tree_resolve_backends(t, &p, NULL) == 0 && t->nodes[0].backend == BACKEND_FENTRY);
	CHECK(tree_resolve_backends(t, &p, &(struct backend_order){}) == 0 &&
	      t->nodes[0].backend == BACKEND_FENTRY);
	tree_free(t);
}

/*
 * An inner node measured through children whose hooks together are more
 * than one node may attach: unavailable, and its reason says so; the
 * children keep theirs.
 */
static void test_children_beyond_bound(void)
{
	struct tree *t;
	struct fake f = {.decide = decide_all};
	struct prober p = {fake_try, &f};
	_cleanup_free_ char *doc = NULL;
	char alt[4][256];
	size_t i, j;

	for (i = 0; i < 4; i++) {
		int off = 0;

		/* 7 distinct tracepoints per child: 28 in all, more than TREE_MAX_NODE_HOOKS */
		for (j = 0; j < 7; j++)
			off += snprintf(alt[i] + off, sizeof(alt[i]) - off, "%st%zu_%zu",
					j ? "+" : "", i, j);
	}
	doc = xasprintf("{'version': 'v', 'nodes': ["
			" {'id': 'a', 'description': 'd', 'metrics': ['count']},"
			" {'id': 'a.w', 'description': 'd', 'metrics': ['count'], 'classes': "
			"['fork'], 'hooks': {'tracepoint': ['%s']}},"
			" {'id': 'a.x', 'description': 'd', 'metrics': ['count'], 'classes': "
			"['futex'], 'hooks': {'tracepoint': ['%s']}},"
			" {'id': 'a.y', 'description': 'd', 'metrics': ['count'], 'classes': "
			"['mmap_lock'], 'hooks': {'tracepoint': ['%s']}},"
			" {'id': 'a.z', 'description': 'd', 'metrics': ['count'], 'classes': "
			"['migrate'], 'hooks': {'tracepoint': ['%s']}}"
			"]}",
			alt[0], alt[1], alt[2], alt[3]);
	t = tree_load_text(doc);
	CHECK(tree_resolve(t, &p) == 1);
	check_probed_once(&f);
	CHECK(f.n_calls == 28);
	CHECK(t->nodes[0].backend == BACKEND_NONE && !t->nodes[0].hook &&
	      t->nodes[0].chosen.n == 0);
	CHECKF(t->nodes[0].reason && strstr(t->nodes[0].reason, "tracepoint: its children's hooks "
								"are more than 24"),
	       "%s", t->nodes[0].reason ?: "(none)");
	for (i = 1; i < 5; i++)
		CHECK(t->nodes[i].backend == BACKEND_TRACEPOINT && t->nodes[i].chosen.n == 7 &&
		      streq(t->nodes[i].hook, alt[i - 1]));
	tree_free(t);
}

int main(void)
{
	test_tracepoint_only();
	test_symbol_variants();
	test_fentry_everywhere();
	test_subtree_refused();
	test_inner_hooks_and_ties();
	test_children_beyond_bound();
	test_order_parse();
	test_order_restricts();
	test_order_reorders();
	return tap_done("test-resolve");
}
