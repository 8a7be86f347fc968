// SPDX-License-Identifier: MIT
/*
 * Probe plans on kernels of every kind (fake provers standing in for what
 * resolution would find there), and the derivation of node values from the
 * probe's counters. No kernel needed.
 */
#include <errno.h>
#include <string.h>

#include "daemon/measure.h"
#include "daemon/probe_plan.h"
#include "daemon/resolve.h"
#include "daemon/tree.h"
#include "daemon/util.h"
#include "tests/real-tree.h"
#include "tests/tap.h"
#include "tests/tree-text.h"

static enum backend accepted;

/* A kernel where only `accepted` works (tracepoints everywhere as a fallback). */
static int fake_try(void *ud, const struct backend_order *order, enum backend b, const char *hook,
		    char **ret_reason)
{
	if (b == accepted || b == BACKEND_TRACEPOINT)
		return 0;
	*ret_reason = xasprintf("refused by the fake kernel");
	return -EPERM;
}

/*
 * The real tree resolved on a kernel where backend b alone attaches; for
 * the function backends, the tree as only functions would measure it
 * (real-tree.h), since they give no classified leaf its meaning.
 */
static struct tree *load(enum backend b)
{
	struct prober pr = { .try_hook = fake_try };
	struct tree *t = real_tree_load(b != BACKEND_TRACEPOINT);

	accepted = b;
	tree_resolve(t, &pr);
	return t;
}

static bool listed(const char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The plan attaches the same tracepoints as the reference plan, whatever their order. */
static void check_same_tracepoints(const struct tree *t, const struct probe_plan *plan,
				   const char *const *ref, size_t n_ref, const char *what)
{
	const char *tps[PROBE_MAX_LINKS];
	size_t n = 0, i;

	REQUIRE(probe_plan_tracepoints(t, plan, tps, ARRAY_SIZE(tps), &n) == 0);
	CHECKF(n == n_ref, "%s attaches %zu tracepoints, the reference %zu", what, n, n_ref);
	for (i = 0; i < n_ref; i++)
		CHECKF(listed(tps, n, ref[i]), "%s leaves out the reference's %s", what, ref[i]);
}

/*
 * Every available node of a level has a value in the run's vector: a slot of
 * its own, or (a sum of children on several backends) its children's slots,
 * and no slot is given twice.
 */
static void check_covered(const struct tree *t, const struct probe_plan *plan, const int *nodes,
			  size_t n, const char *what)
{
	struct probe_counts c = {};
	struct mvec v = {};
	size_t i, j;

	for (i = 0; i < plan->n_slots; i++) {
		c.slot[i] = (struct argus_counter){ .count = 1, .time_ns = 1 };
		for (j = 0; j < i; j++)
			CHECKF(plan->slots[j].node != plan->slots[i].node, "%s: %s has two slots",
			       what, t->nodes[plan->slots[i].node].id);
	}
	for (i = 0; i < ARGUS_CLS_MAX; i++)
		c.cls[i] = (struct argus_counter){ .count = 1, .time_ns = 1 };
	measure_fill_nodes(t, plan, &c, &v);
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *key = xasprintf("%s/count", t->nodes[nodes[i]].id);

		if (t->nodes[nodes[i]].backend == BACKEND_NONE)
			continue;
		CHECKF(mvec_get(&v, key) != NULL, "%s: no value for %s", what, key);
	}
	mvec_free(&v);
}

/*
 * Every level of the tree and the reference must plan without running out
 * of slots or pairs, and every level attaches the reference's tracepoints:
 * a level costs the target what the reference did.
 */
static void check_all_levels(struct tree *t, const char *kind)
{
	int nodes[TREE_MAX_NODES], leaves[TREE_MAX_NODES];
	const char *ref_tps[PROBE_MAX_LINKS];
	struct probe_plan plan, ref;
	size_t n, n_leaves = 0, n_ref_tps = 0, i;
	int r;

	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, i))
			leaves[n_leaves++] = i;
	r = probe_plan_for(t, leaves, n_leaves, &ref);
	CHECKF(r == 0 && ref.n_slots == n_leaves, "%s reference: r=%d", kind, r);
	REQUIRE(probe_plan_tracepoints(t, &ref, ref_tps, ARRAY_SIZE(ref_tps), &n_ref_tps) == 0);

	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	r = probe_plan_for(t, nodes, n, &plan);
	CHECKF(r == 0, "%s level 1: r=%d", kind, r);
	check_covered(t, &plan, nodes, n, "level 1");
	check_same_tracepoints(t, &plan, ref_tps, n_ref_tps, "level 1");
	for (i = 0; i < t->n_nodes; i++) {
		_cleanup_free_ char *what = NULL;

		if (tree_is_leaf(t, i))
			continue;
		n = tree_active(t, i, nodes, TREE_MAX_NODES);
		r = probe_plan_for(t, nodes, n, &plan);
		CHECKF(r == 0, "%s below %s: r=%d", kind, t->nodes[i].id, r);
		what = xasprintf("%s below %s", kind, t->nodes[i].id);
		check_covered(t, &plan, nodes, n, what);
		check_same_tracepoints(t, &plan, ref_tps, n_ref_tps, what);
	}
}

static void test_fentry_kernel(void)
{
	struct tree *t = load(BACKEND_FENTRY);
	int nodes[TREE_MAX_NODES], paging = tree_find(t, "kernel_paging");
	struct probe_plan plan;
	size_t n, i;
	json_t *desc;
	bool fentry_prog = false;

	REQUIRE(paging >= 0);
	/* leaves with functions use fentry; the zero page has only a tracepoint */
	CHECK(t->nodes[tree_find(t, "kernel_paging.anon_fault.minor")].backend == BACKEND_FENTRY);
	CHECK(t->nodes[tree_find(t, "kernel_paging.anon_fault.zero_page")].backend ==
	      BACKEND_TRACEPOINT);
	/* an inner node on fentry carries its children's functions, joined */
	CHECK(t->nodes[paging].backend == BACKEND_FENTRY);
	CHECKF(t->nodes[paging].hook && strchr(t->nodes[paging].hook, '+'), "hook %s",
	       t->nodes[paging].hook ?: "(null)");
	check_all_levels(t, "fentry");

	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	desc = probe_plan_describe(t, &plan);
	for (i = 0; i < json_array_size(json_object_get(desc, "programs")); i++) {
		const char *prog = json_string_value(json_array_get(json_object_get(desc, "programs"), i));

		fentry_prog |= prog && strncmp(prog, "fentry+fexit/", 13) == 0;
	}
	CHECK(fentry_prog);
	json_decref(desc);
	tree_free(t);
}

static void test_kprobe_kernel(void)
{
	struct tree *t = load(BACKEND_KPROBE);

	CHECK(t->nodes[tree_find(t, "kernel_paging.file_fault.major")].backend == BACKEND_KPROBE);
	check_all_levels(t, "kprobe");
	tree_free(t);
}

static void test_tracepoint_kernel(void)
{
	struct tree *t = load(BACKEND_TRACEPOINT);
	int nodes[TREE_MAX_NODES], anon = tree_find(t, "kernel_paging.anon_fault");
	const char *tps[PROBE_MAX_LINKS];
	struct probe_plan plan;
	size_t n, i, j, n_tps;
	unsigned all = 0;
	json_t *desc, *progs;

	check_all_levels(t, "tracepoint");
	/* level 3 below anon_fault: four slots, each its own class */
	n = tree_active(t, anon, nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	CHECK(plan.n_slots == 4);
	for (i = 0; i < plan.n_slots; i++) {
		CHECK(plan.slots[i].backend == BACKEND_TRACEPOINT);
		CHECK(__builtin_popcount(plan.slots[i].classes) == 1);
		CHECK((all & plan.slots[i].classes) == 0);
		all |= plan.slots[i].classes;
	}
	CHECK(all == t->nodes[anon].classes);

	/* level 1: the slots' own tracepoints first, in slot order, then companions, each once */
	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	REQUIRE(probe_plan_tracepoints(t, &plan, tps, ARRAY_SIZE(tps), &n_tps) == 0);
	CHECK(n_tps > 6);
	CHECK_STREQ(tps[0], "page_fault_user", "kernel_paging's first hook first");
	for (i = 0; i < n_tps; i++)
		for (j = 0; j < i; j++)
			CHECKF(strcmp(tps[i], tps[j]) != 0, "%s twice", tps[i]);
	for (i = 0; i < plan.n_slots; i++) {
		const struct hook_list *h = &t->nodes[plan.slots[i].node].chosen;

		for (j = 0; j < h->n; j++)
			CHECKF(listed(tps, n_tps, h->v[j].name), "%s missing", h->v[j].name);
	}
	CHECK(listed(tps, n_tps, "sched_process_fork") &&
	      listed(tps, n_tps, "hrtimer_expire_exit"));
	CHECK(probe_plan_tracepoints(t, &plan, tps, 3, &n_tps) == -E2BIG);
	REQUIRE(probe_plan_tracepoints(t, &plan, tps, ARRAY_SIZE(tps), &n_tps) == 0);
	/* the trace lists the same programs, in the same order */
	desc = probe_plan_describe(t, &plan);
	progs = json_object_get(desc, "programs");
	CHECK_EQ(json_array_size(progs), n_tps, "programs");
	for (i = 0; i < n_tps && i < json_array_size(progs); i++) {
		_cleanup_free_ char *want = xasprintf("tp_btf/%s", tps[i]);

		CHECK_STREQ(json_string_value(json_array_get(progs, i)), want, "program");
	}
	json_decref(desc);
	tree_free(t);
}

/* Node values: slots for the plan's nodes, class totals for leaves, sums for parents. */
static void test_fill_nodes(void)
{
	struct tree *t = load(BACKEND_TRACEPOINT);
	int leaves[TREE_MAX_NODES];
	struct probe_counts c = {};
	struct probe_plan plan;
	struct mvec v = {};
	size_t n = 0, i;
	const double *x;

	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, i))
			leaves[n++] = i;
	REQUIRE(probe_plan_for(t, leaves, n, &plan) == 0);
	for (i = 0; i < plan.n_slots; i++)
		c.slot[i] = (struct argus_counter){ .count = 1000 + i, .time_ns = 7 };
	c.cls[ARGUS_CLS_ANON_MINOR] = (struct argus_counter){ 100, 1000 };
	c.cls[ARGUS_CLS_ANON_ZERO] = (struct argus_counter){ 10, 50 };
	c.cls[ARGUS_CLS_FILE_MAJOR] = (struct argus_counter){ 5, 5000000 };
	measure_fill_nodes(t, &plan, &c, &v);

	/* a leaf in the plan takes its slot */
	for (i = 0; i < plan.n_slots; i++)
		if (plan.slots[i].node == tree_find(t, "kernel_paging.anon_fault.minor")) {
			x = mvec_get(&v, "kernel_paging.anon_fault.minor/count");
			CHECK(x && *x == 1000 + i);
		}
	/* class totals are kept as such */
	x = mvec_get(&v, "class/file_major/time_ns");
	CHECK(x && *x == 5000000);
	/* a parent is the sum of its children's slots */
	x = mvec_get(&v, "kernel_paging.file_fault/time_ns");
	CHECK(x && *x == 14);
	/* a node declaring only "count" has no time metric */
	CHECK(mvec_get(&v, "kernel_paging.tlb_shootdown/time_ns") == NULL);
	CHECK(mvec_get(&v, "kernel_paging.tlb_shootdown/count") != NULL);
	mvec_free(&v);

	/* level-1 plan: the subsystems come from slots, leaves from class totals */
	n = tree_active(t, -1, leaves, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, leaves, n, &plan) == 0);
	memset(&c, 0, sizeof(c));
	c.cls[ARGUS_CLS_ANON_MINOR] = (struct argus_counter){ 100, 1000 };
	c.slot[0] = (struct argus_counter){ 100, 1000 };
	measure_fill_nodes(t, &plan, &c, &v);
	x = mvec_get(&v, "kernel_paging.anon_fault.minor/count");
	CHECK(x && *x == 100);
	x = mvec_get(&v, "kernel_paging/count");
	CHECK(x && *x == 100);
	mvec_free(&v);
	tree_free(t);
}

static double value_of(const struct mvec *v, const char *key)
{
	const double *x = mvec_get(v, key);

	return x ? *x : -1;
}

/*
 * An inner node whose children are measured on different backends is the
 * sum of its children, each on its own backend: a function leaf and a
 * classified leaf under one parent, and a parent of such a sum.
 */
static void test_sum_of_children(void)
{
#define N(id, hooks) " {'id': '" id "', 'description': 'd', 'metrics': ['count', 'time_ns']" hooks "}"
	static const char text[] =
	    "{'version': 'v', 'nodes': [" N("p", "") "," N("p.f", ", 'hooks': {'fentry': ['ff']}")
	    "," N("p.t", ", 'classes': ['mmap_lock'], 'hooks': {'tracepoint': ['t1']}")
	    "," N("q", "") "," N("q.s", "") "," N("q.s.f", ", 'hooks': {'fentry': ['gg']}")
	    "," N("q.s.t", ", 'classes': ['migrate'], 'hooks': {'tracepoint': ['t2']}")
	    "," N("q.t", ", 'classes': ['futex'], 'hooks': {'tracepoint': ['t3']}") "]}";
#undef N
	static const char *const slots[] = {"p.f", "p.t", "q.s.f", "q.s.t", "q.t"};
	static const enum backend on[] = {BACKEND_FENTRY, BACKEND_TRACEPOINT, BACKEND_FENTRY,
					  BACKEND_TRACEPOINT, BACKEND_TRACEPOINT};
	struct prober pr = { .try_hook = fake_try };
	struct tree *t = tree_load_text(text);
	int nodes[TREE_MAX_NODES];
	struct probe_counts c = {};
	struct probe_plan plan;
	struct mvec v = {};
	json_auto_t *doc = NULL;
	size_t n, i;

	accepted = BACKEND_FENTRY;
	CHECK(tree_resolve(t, &pr) == 0);
	CHECK(t->nodes[tree_find(t, "p")].sum_of_children);
	CHECK(t->nodes[tree_find(t, "q.s")].sum_of_children);
	/* a child that is a sum makes its parent one, whatever the other children use */
	CHECK(t->nodes[tree_find(t, "q")].sum_of_children);
	CHECK(!t->nodes[tree_find(t, "p.f")].sum_of_children);
	CHECKF(t->nodes[tree_find(t, "p")].reason &&
	       strstr(t->nodes[tree_find(t, "p")].reason,
		      "the sum of its children, each on its own backend (fentry 1, tracepoint 1)"),
	       "%s", t->nodes[tree_find(t, "p")].reason);
	doc = tree_to_json(t);
	CHECK(json_is_true(json_object_get(json_array_get(json_object_get(doc, "nodes"), 0),
					   "sum_of_children")));
	CHECK(json_is_false(json_object_get(json_array_get(json_object_get(doc, "nodes"), 1),
					    "sum_of_children")));

	/* level 1: no slot for the sums, one for each leaf below them, on its own backend */
	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	CHECKF(plan.n_slots == ARRAY_SIZE(slots), "%zu slots", plan.n_slots);
	for (i = 0; i < plan.n_slots && i < ARRAY_SIZE(slots); i++) {
		CHECK_STREQ(t->nodes[plan.slots[i].node].id, slots[i], "slot");
		CHECK(plan.slots[i].backend == on[i]);
		c.slot[i] = (struct argus_counter){ .count = 1u << i, .time_ns = 10u << i };
	}
	measure_fill_nodes(t, &plan, &c, &v);
	CHECK(value_of(&v, "p/count") == 1 + 2 && value_of(&v, "p/time_ns") == 10 + 20);
	CHECK(value_of(&v, "q.s/count") == 4 + 8);
	CHECK(value_of(&v, "q/count") == 4 + 8 + 16 && value_of(&v, "q/time_ns") == 40 + 80 + 160);
	mvec_free(&v);

	/* below q: the sum q.s again through its children, q.t on its own */
	n = tree_active(t, tree_find(t, "q"), nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	CHECK(plan.n_slots == 3);
	check_covered(t, &plan, nodes, n, "below q");

	/* where the function leaves are refused, the parents are tracepoint nodes, not sums */
	accepted = BACKEND_TRACEPOINT;
	CHECK(tree_resolve(t, &pr) == 2);
	CHECK(!t->nodes[tree_find(t, "p")].sum_of_children &&
	      t->nodes[tree_find(t, "p")].backend == BACKEND_TRACEPOINT);
	CHECK(!t->nodes[tree_find(t, "q")].sum_of_children);
	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	CHECK(plan.n_slots == 2);
	tree_free(t);
}

/* A kernel without page_fault_user (arm64's: the tracepoint is x86's); function backends refused. */
static int no_fault_entry_try(void *ud, const struct backend_order *order, enum backend b,
			      const char *hook, char **ret_reason)
{
	if (b == BACKEND_TRACEPOINT && strcmp(hook, "page_fault_user") != 0)
		return 0;
	*ret_reason = xasprintf("refused by the fake kernel");
	return -EPERM;
}

/*
 * Where the fault leaves are unavailable, kernel_paging is still measured
 * through its tracepoint leaf (tlb_shootdown), and neither its slot nor the
 * plan's tracepoints bring in the fault classes or their companions: on
 * Debian's arm64 6.1, their rss_stat stood for a pair of fentry programs
 * that cannot attach there, and every probe failed to load.
 */
static void test_no_fault_entry(void)
{
	struct prober pr = { .try_hook = no_fault_entry_try };
	struct tree *t = real_tree_load(false);
	const char *tps[PROBE_MAX_LINKS];
	int nodes[TREE_MAX_NODES], paging;
	struct probe_plan plan;
	size_t n, n_tps, i;

	tap_subtest("no_fault_entry");
	tree_resolve(t, &pr);
	paging = tree_find(t, "kernel_paging");
	REQUIRE(paging >= 0);
	CHECK(t->nodes[tree_find(t, "kernel_paging.anon_fault.minor")].backend == BACKEND_NONE);
	CHECK(t->nodes[tree_find(t, "kernel_paging.tlb_shootdown")].backend == BACKEND_TRACEPOINT);
	CHECK(t->nodes[paging].backend == BACKEND_TRACEPOINT);
	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	REQUIRE(probe_plan_for(t, nodes, n, &plan) == 0);
	for (i = 0; i < plan.n_slots; i++)
		if (plan.slots[i].node == paging)
			CHECKF(plan.slots[i].classes == 1u << ARGUS_CLS_TLB_SHOOTDOWN,
			       "kernel_paging's slot classes %#x", plan.slots[i].classes);
	REQUIRE(probe_plan_tracepoints(t, &plan, tps, ARRAY_SIZE(tps), &n_tps) == 0);
	CHECK(listed(tps, n_tps, "tlb_flush"));
	CHECK(!listed(tps, n_tps, "rss_stat") && !listed(tps, n_tps, "page_fault_user") &&
	      !listed(tps, n_tps, "mm_filemap_add_to_page_cache"));
	tree_free(t);
}

/* Index of program s in the array of strings programs, -1 when absent. */
static int program_at(json_t *programs, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach (programs, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return (int)i;
	return -1;
}

/* The level-1 plan's programs on kernel k, as the loader attaches them there under order. */
static json_t *programs_under(const struct tree *t, const struct probe_kernel *k,
			      const struct backend_order *order)
{
	int nodes[TREE_MAX_NODES];
	struct probe_plan plan;
	json_t *desc, *progs;
	size_t n;

	n = tree_active(t, -1, nodes, TREE_MAX_NODES);
	if (probe_plan_for(t, nodes, n, &plan) < 0)
		return json_array();
	desc = probe_plan_describe(t, &plan);
	progs = json_incref(json_object_get(desc, "programs"));
	json_decref(desc);
	probe_plan_programs_on(k, order, progs);
	return progs;
}

/* The same under the default order. */
static json_t *programs_on(const struct tree *t, const struct probe_kernel *k)
{
	return programs_under(t, k, NULL);
}

/* The stand-in for tp on k under order (the default: NULL), and probe_plan_stand_in's return. */
static const struct probe_stand_in *stand_in(const struct probe_kernel *k, const char *order,
					     const char *tp, int *ret)
{
	const struct probe_stand_in *si = (void *)1;
	struct backend_order o = {};

	REQUIRE(!order || backend_order_parse(order, &o) == 0);
	*ret = probe_plan_stand_in(k, &o, tp, &si);
	return si;
}

/*
 * Which programs stand for the fault classifier's tracepoints, by the
 * kernel's facts: x86 keeps page_fault_user (and, before 6.2, reads RSS at
 * fentry/fexit); a kernel without page_fault_user (Debian's arm64 6.1)
 * opens faults by the kprobes on handle_mm_fault and marks the
 * write-protect path by kprobes, and its kretprobe reads the split RSS
 * counters, so neither rss_stat nor the fentry pair is attached there.
 */
static void test_fault_stand_ins(void)
{
	const struct probe_kernel x86 = {}, x86_61 = { .splits_rss = true },
				  arm64_61 = { .faults_by_kprobe = true, .splits_rss = true },
				  arm64_new = { .faults_by_kprobe = true },
				  per_call = { .syscall_per_call = true },
				  no_events = { .syscall_none = true };
	const char *const kprobes[] = { "kprobe+kretprobe/handle_mm_fault", "kprobe/do_wp_page",
					"kprobe/do_huge_pmd_wp_page", "kretprobe/wp_page_copy" };
	struct tree *t = load(BACKEND_TRACEPOINT);
	json_t *plain = programs_on(t, &x86), *v;
	const struct probe_stand_in *si;
	struct backend_order order;
	int pfu, rss, r;
	size_t i;

	tap_subtest("fault_stand_ins");
	pfu = program_at(plain, "tp_btf/page_fault_user");
	rss = program_at(plain, "tp_btf/rss_stat");
	REQUIRE(pfu >= 0 && rss > pfu);

	CHECK(stand_in(&x86, NULL, "page_fault_user", &r) == NULL && r == 0);
	CHECK(stand_in(&x86, NULL, "rss_stat", &r) == NULL && r == 0);
	CHECK(stand_in(&x86_61, NULL, "page_fault_user", &r) == NULL && r == 0);
	si = stand_in(&x86_61, NULL, "rss_stat", &r);
	CHECK(r == 0 && si && si->backend == BACKEND_FENTRY && si->programs[0] &&
	      strcmp(si->programs[0], "handle_mm_fault_entry") == 0);
	si = stand_in(&arm64_61, NULL, "page_fault_user", &r);
	CHECK(r == 0 && si && si->programs[0] &&
	      strcmp(si->programs[0], "handle_mm_fault_kprobe") == 0 &&
	      strcmp(si->programs[1], "handle_mm_fault_kretprobe") == 0);
	si = stand_in(&arm64_61, NULL, "rss_stat", &r);
	CHECK(r == 0 && si && si->programs[0] == NULL);
	CHECK(stand_in(&arm64_new, NULL, "rss_stat", &r) == NULL && r == 0);
	CHECK(stand_in(&arm64_61, NULL, "tlb_flush", &r) == NULL && r == 0);

	/*
	 * The backends setting decides which function backend reads RSS on x86
	 * 6.1, and refuses a stand-in on a backend it leaves out; a kernel that
	 * needs none is not affected by it.
	 */
	si = stand_in(&x86_61, "kprobe fentry tracepoint", "rss_stat", &r);
	CHECK(r == 0 && si && si->backend == BACKEND_KPROBE &&
	      strcmp(si->programs[0], "handle_mm_fault_rss") == 0 &&
	      strcmp(si->programs[1], "handle_mm_fault_kretprobe") == 0 && !si->programs[2]);
	si = stand_in(&x86_61, "tracepoint kprobe", "rss_stat", &r);
	CHECK(r == 0 && si && si->backend == BACKEND_KPROBE);
	si = stand_in(&x86_61, "tracepoint fentry", "rss_stat", &r);
	CHECK(r == 0 && si && si->backend == BACKEND_FENTRY);
	CHECK(stand_in(&x86_61, "tracepoint", "rss_stat", &r) == NULL && r == -EPERM);
	CHECK(stand_in(&x86_61, "tracepoint", "page_fault_user", &r) == NULL && r == 0);
	CHECK(stand_in(&x86, "tracepoint", "rss_stat", &r) == NULL && r == 0);
	si = stand_in(&arm64_61, "fentry tracepoint", "page_fault_user", &r);
	CHECK(r == -EPERM && si && si->backend == BACKEND_KPROBE);
	si = stand_in(&arm64_61, "fentry tracepoint", "rss_stat", &r);
	CHECK(r == -EPERM && si && si->backend == BACKEND_KPROBE);
	si = stand_in(&arm64_61, "kprobe tracepoint", "rss_stat", &r);
	CHECK(r == 0 && si && !si->programs[0]);

	/* x86 since 6.2: the tracepoints as the plan names them */
	v = programs_on(t, &x86);
	CHECK(json_equal(v, plain));
	json_decref(v);

	/* x86 6.1: the fentry pair in rss_stat's place, page_fault_user kept */
	v = programs_on(t, &x86_61);
	CHECK_EQ(json_array_size(v), json_array_size(plain), "x86 6.1 programs");
	CHECK_EQ(program_at(v, "tp_btf/page_fault_user"), pfu, "page_fault_user");
	CHECK_EQ(program_at(v, "fentry+fexit/handle_mm_fault"), rss, "the fentry pair");
	CHECK(program_at(v, "tp_btf/rss_stat") < 0);
	json_decref(v);

	/* x86 6.1 without fentry: the kprobe pair in rss_stat's place */
	REQUIRE(backend_order_parse("kprobe tracepoint", &order) == 0);
	v = programs_under(t, &x86_61, &order);
	CHECK_EQ(json_array_size(v), json_array_size(plain), "x86 6.1 programs, kprobe");
	CHECK_EQ(program_at(v, "kprobe+kretprobe/handle_mm_fault"), rss, "the kprobe pair");
	CHECK(program_at(v, "fentry+fexit/handle_mm_fault") < 0);
	json_decref(v);

	/* arm64 6.1: the kprobes in page_fault_user's place, nothing for rss_stat */
	v = programs_on(t, &arm64_61);
	CHECK_EQ(json_array_size(v), json_array_size(plain) - 2 + ARRAY_SIZE(kprobes),
		 "arm64 6.1 programs");
	for (i = 0; i < ARRAY_SIZE(kprobes); i++)
		CHECKF(program_at(v, kprobes[i]) == pfu + (int)i, "%s at %d", kprobes[i],
		       program_at(v, kprobes[i]));
	CHECK(program_at(v, "tp_btf/page_fault_user") < 0 && program_at(v, "tp_btf/rss_stat") < 0 &&
	      program_at(v, "fentry+fexit/handle_mm_fault") < 0);
	CHECK(program_at(v, "tp_btf/tlb_flush") >= 0 && program_at(v, "tp_btf/mm_page_alloc") >= 0);
	json_decref(v);

	/* a kernel without page_fault_user that does not split RSS: rss_stat marks the page */
	v = programs_on(t, &arm64_new);
	CHECK(program_at(v, kprobes[0]) == pfu && program_at(v, "tp_btf/rss_stat") >= 0);
	json_decref(v);

	/* the calls' own events for the raw system call tracepoints */
	v = programs_on(t, &per_call);
	CHECK(program_at(v, "tp_btf/sys_enter") < 0 &&
	      program_at(v, "tracepoint/syscalls/sys_enter_*") ==
		  program_at(plain, "tp_btf/sys_enter"));
	json_decref(v);

	/*
	 * syscall_events = none: the scheduler's programs that see such a call
	 * stand for the two raw tracepoints, once each, in a node that has
	 * only those (kernel_sync.pipe's hooks) and in one that has them too
	 */
	v = programs_on(t, &no_events);
	CHECK(program_at(v, "tp_btf/sys_enter") < 0 && program_at(v, "tp_btf/sys_exit") < 0 &&
	      program_at(v, "tp_btf/sched_switch") >= 0 && program_at(v, "tp_btf/sched_wakeup") >= 0);
	json_decref(v);
	v = json_pack("[s,s]", "tp_btf/sys_enter", "tp_btf/sys_exit");
	probe_plan_programs_on(&no_events, NULL, v);
	CHECKF(json_array_size(v) == 2 && program_at(v, "tp_btf/sched_switch") == 0 &&
		       program_at(v, "tp_btf/sched_wakeup") == 1,
	       "none, a call's node: %zu programs", json_array_size(v));
	json_decref(v);
	v = json_pack("[s,s,s]", "tp_btf/sched_switch", "tp_btf/sys_enter", "tp_btf/sys_exit");
	probe_plan_programs_on(&no_events, NULL, v);
	CHECKF(json_array_size(v) == 2 && program_at(v, "tp_btf/sched_switch") == 0 &&
		       program_at(v, "tp_btf/sched_wakeup") == 1,
	       "none, with the switch: %zu programs", json_array_size(v));
	json_decref(v);

	json_decref(plain);
	tree_free(t);
}

/* The class table: names agree everywhere, companions come by group, each once. */
static void test_class_table(void)
{
	const char *comp[128];
	size_t n, i, j;
	unsigned c, all = 0;

	tap_subtest("class_table");
	for (c = 0; c < ARGUS_CLS_MAX; c++) {
		CHECK_STREQ(probe_class_name(c), tree_class_name((int)c), "class name");
		CHECK_EQ(tree_class_from_name(probe_class_name(c)), c, "name round trip");
		all |= 1u << c;
	}
	CHECK(probe_class_name(ARGUS_CLS_MAX) == NULL);

	/* always the six that follow the target first; a fault class adds what bounds a fault */
	n = probe_companions(1u << ARGUS_CLS_FILE_MAJOR, comp, ARRAY_SIZE(comp));
	CHECK_EQ(n, 6 + 13, "file_major companions");
	CHECK_STREQ(comp[0], "sched_process_fork", "first");
	CHECK(listed(comp, n, "mm_filemap_add_to_page_cache") && listed(comp, n, "rss_stat"));
	CHECK(!listed(comp, n, "block_rq_issue") && !listed(comp, n, "sched_waking"));
	n = probe_companions(1u << ARGUS_CLS_BLOCK_DEVICE, comp, ARRAY_SIZE(comp));
	CHECK(n == 9 && listed(comp, n, "block_rq_issue") && !listed(comp, n, "rss_stat"));
	n = probe_companions(1u << ARGUS_CLS_MIGRATE, comp, ARRAY_SIZE(comp));
	CHECK_EQ(n, 6, "migrate: the always-attached only");
	CHECK(listed(comp, n, "cgroup_attach_task"));
	/* a runqueue wait names the work a kernel worker that held the CPU ran */
	n = probe_companions(1u << ARGUS_CLS_RUNQ_WAIT, comp, ARRAY_SIZE(comp));
	CHECK(n == 7 && listed(comp, n, "workqueue_execute_start"));
	/* every class: each group once, in group order */
	n = probe_companions(all, comp, ARRAY_SIZE(comp));
	CHECK_EQ(n, 6 + 13 + 3 + 2 + 3 + 1, "all companions");
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			CHECKF(strcmp(comp[i], comp[j]) != 0, "%s twice", comp[i]);
	CHECK(probe_companions(all, comp, 3) == 3);

	CHECK_EQ(probe_counted_with(1u << ARGUS_CLS_RUNQ_WAIT),
		 (1u << ARGUS_CLS_RUNQ_WAIT) | (1u << ARGUS_CLS_RUNQ_OWN) | (1u << ARGUS_CLS_RUNQ_IDLE),
		 "runq_wait counts own and idle (through own)");
	CHECK_EQ(probe_counted_with(1u << ARGUS_CLS_FUTEX),
		 (1u << ARGUS_CLS_FUTEX) | (1u << ARGUS_CLS_FUTEX_OWN) | (1u << ARGUS_CLS_WAIT_IDLE),
		 "futex counts own and idle (through own)");
	CHECK_EQ(probe_counted_with(1u << ARGUS_CLS_ANON_COW), 1u << ARGUS_CLS_ANON_COW, "cow");
}

int main(void)
{
	test_class_table();
	test_no_fault_entry();
	test_fault_stand_ins();
	test_fentry_kernel();
	test_kprobe_kernel();
	test_tracepoint_kernel();
	test_fill_nodes();
	test_sum_of_children();
	return tap_done("test-plan");
}
