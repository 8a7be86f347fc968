// SPDX-License-Identifier: MIT
/*
 * Probe plans and the policy of the probe's event classes: which slots a
 * level's nodes get, which tracepoints and functions the plan attaches
 * (the nodes' chosen hooks and their classes' companions), and how a plan
 * reads in the trace. See probe_plan.h.
 */
#include "daemon/probe_plan.h"
#include "daemon/resolve.h"
#include "daemon/syscalls.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Per class, from the one table of bpf/paths.h: name, companions, the class counted with it. */
static const struct {
	const char *name;
	enum argus_companions companions;
	enum argus_class counted_with;
} classes[ARGUS_CLS_MAX] = {
#define CLASS_ROW(id, nm, comp, with, ftype, calls)                                                \
	[ARGUS_CLS_##id] = {#nm, ARGUS_COMPANIONS_##comp, ARGUS_CLS_##with},
    ARGUS_CLASSES(CLASS_ROW)
#undef CLASS_ROW
};

/* a plan's classes are a bit mask of unsigned: one bit per class */
_Static_assert(ARGUS_CLS_MAX <= 32, "classes fit in an unsigned mask");

const char *probe_class_name(unsigned cls)
{
	return cls < ARGUS_CLS_MAX ? classes[cls].name : NULL;
}

/*
 * The companion tracepoints of each group. Classes whose time is thread
 * time inside a page fault need what bounds a fault and takes nested paths
 * out of it, whatever level is probed: the same metric must mean the same
 * thing in the reference and at every level.
 */
static const char *const fault_companions[] = {
    "page_fault_user",
    "rss_stat",
    "mm_page_alloc",
    "mm_filemap_fault",
    "mm_filemap_map_pages",
    "mm_filemap_add_to_page_cache",
    "tlb_flush",
    "mm_vmscan_direct_reclaim_begin",
    "mm_vmscan_direct_reclaim_end",
    "mm_compaction_begin",
    "mm_compaction_end",
    "mmap_lock_start_locking",
    "mmap_lock_acquire_returned",
};

/*
 * Block I/O time is iowait thread time, from switching out to the wakeup
 * (both always attached): it needs every request phase.
 */
static const char *const block_companions[] = {"block_rq_insert", "block_rq_issue",
					       "block_rq_complete"};

/* Creation time is the parent's time in clone/fork/clone3. */
static const char *const create_companions[] = {"sys_enter", "sys_exit"};

/*
 * Who ends a wait (a futex, a call on a pipe or socket, a lock, a wait for
 * events): one of the target's own tasks, another, or a timer.
 */
static const char *const wake_companions[] = {"sched_waking", "hrtimer_expire_entry",
					      "hrtimer_expire_exit"};

/* A workqueue worker that held a target's CPU is named by the work it ran. */
static const char *const holder_companions[] = {"workqueue_execute_start"};

static const struct {
	const char *const *tracepoints;
	size_t n;
} companion_groups[ARGUS_COMPANIONS_MAX] = {
    [ARGUS_COMPANIONS_FAULT] = {fault_companions, ARRAY_SIZE(fault_companions)},
    [ARGUS_COMPANIONS_BLOCK] = {block_companions, ARRAY_SIZE(block_companions)},
    [ARGUS_COMPANIONS_CREATE] = {create_companions, ARRAY_SIZE(create_companions)},
    [ARGUS_COMPANIONS_WAKE] = {wake_companions, ARRAY_SIZE(wake_companions)},
    [ARGUS_COMPANIONS_HOLDER] = {holder_companions, ARRAY_SIZE(holder_companions)},
};

/*
 * Always attached: following the target's processes (forks, and moves into
 * a followed service's cgroup), and its runqueue waits, which every path's
 * time leaves out (they are runqueue time), so that a metric means the same
 * at every level.
 */
static const char *const always[] = {"sched_process_fork", "sched_process_exit",
				     "cgroup_attach_task", "sched_switch", "sched_wakeup",
				     "sched_wakeup_new"};

unsigned probe_counted_with(unsigned cls_mask)
{
	unsigned before, c;

	/* a class counted with one is counted with what that one is counted with */
	do {
		before = cls_mask;
		for (c = 0; c < ARGUS_CLS_MAX; c++)
			if ((cls_mask & (1u << c)) && classes[c].counted_with < ARGUS_CLS_MAX)
				cls_mask |= 1u << classes[c].counted_with;
	} while (cls_mask != before);
	return cls_mask;
}

size_t probe_companions(unsigned cls_mask, const char **ret, size_t max)
{
	bool wanted[ARGUS_COMPANIONS_MAX] = {};
	size_t n = 0, i;
	unsigned c, g;

	for (i = 0; i < ARRAY_SIZE(always) && n < max; i++)
		ret[n++] = always[i];
	for (c = 0; c < ARGUS_CLS_MAX; c++)
		if (cls_mask & (1u << c))
			wanted[classes[c].companions] = true;
	/* in group order, each group once, as a plan lists its tracepoints */
	for (g = ARGUS_COMPANIONS_NONE + 1; g < ARGUS_COMPANIONS_MAX; g++)
		for (i = 0; wanted[g] && i < companion_groups[g].n && n < max; i++)
			ret[n++] = companion_groups[g].tracepoints[i];
	return n;
}

/*
 * The classes that node idx counts through the tracepoint classifier: a
 * leaf on tracepoints, its own; an inner node on tracepoints, those of its
 * descendants that resolution put on tracepoints. A leaf left unavailable
 * on this kernel (page_fault_user is x86's: no fault leaf on arm64) brings
 * neither its classes nor their companions into a plan.
 */
static unsigned tp_classes(const struct tree *t, int idx, int depth)
{
	const struct tree_node *node = &t->nodes[idx];
	unsigned mask = 0;
	size_t i;

	if (node->backend != BACKEND_TRACEPOINT || depth > TREE_MAX_DEPTH)
		return 0;
	if (node->n_children == 0)
		return node->classes;
	for (i = 0; i < node->n_children; i++)
		mask |= tp_classes(t, node->children[i], depth + 1);
	return mask;
}

/*
 * Give node idx a slot; a sum of children (tree_node.sum_of_children) gets
 * none, its available children do, each on its own backend, and its value
 * is derived from theirs (measure_fill_nodes).
 */
static int plan_add(const struct tree *t, int idx, struct probe_plan *plan, size_t *fn_hooks,
		    int depth)
{
	const struct tree_node *node = &t->nodes[idx];
	struct probe_slot *s;
	size_t i;
	int r;

	if (node->backend == BACKEND_NONE || !node->hook)
		return 0;
	if (node->sum_of_children) {
		if (depth > TREE_MAX_DEPTH)
			return -ELOOP;
		for (i = 0; i < node->n_children; i++) {
			r = plan_add(t, node->children[i], plan, fn_hooks, depth + 1);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (plan->n_slots >= ARGUS_MAX_SLOTS)
		return -E2BIG;
	/* an inner node's functions are its children's, each an fentry/fexit pair */
	if (node->backend == BACKEND_FENTRY) {
		*fn_hooks += node->chosen.n;
		if (*fn_hooks > ARGUS_FENTRY_PAIRS)
			return -E2BIG;
	}
	s = &plan->slots[plan->n_slots++];
	s->node = idx;
	s->backend = node->backend;
	s->hook = node->hook;
	s->classes = tp_classes(t, idx, 0);
	return 0;
}

int probe_plan_for(const struct tree *t, const int *nodes, size_t n, struct probe_plan *ret)
{
	struct probe_plan plan = {};
	size_t fn_hooks = 0, i;
	int r;

	for (i = 0; i < n; i++) {
		r = plan_add(t, nodes[i], &plan, &fn_hooks, 0);
		if (r < 0)
			return r;
	}
	*ret = plan;
	return 0;
}

/* Add name to v[0..*n) once; one too many is -E2BIG (never cut short). */
static int tp_add(const char **v, size_t max, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i], name) == 0)
			return 0;
	if (*n >= max)
		return -E2BIG;
	v[(*n)++] = name;
	return 0;
}

/* Add tracepoint node idx's chosen hooks to v, and its classes (tp_classes) to *cls_mask. */
static int tp_add_node(const struct tree *t, int idx, const char **v, size_t max, size_t *n,
		       unsigned *cls_mask)
{
	const struct tree_node *node = &t->nodes[idx];
	size_t j;
	int r;

	for (j = 0; j < node->chosen.n; j++) {
		r = tp_add(v, max, n, node->chosen.v[j].name);
		if (r < 0)
			return r;
	}
	*cls_mask |= tp_classes(t, idx, 0);
	return 0;
}

/*
 * Every plan attaches the tracepoints of every node available on the
 * tracepoint backend, as the reference does, whichever nodes have slots: a level's events cost the
 * target what they cost while the reference was recorded, so that its wall
 * time and its waits compare with the reference's. A lighter probe below
 * level 1 would make the target faster than its reference, and hide a
 * slowdown at the very level that must confirm it. Classes outside the
 * slots are classified and count only in their class totals.
 */
int probe_plan_tracepoints(const struct tree *t, const struct probe_plan *plan, const char **ret,
			   size_t max, size_t *ret_n)
{
	const char *comp[PROBE_MAX_LINKS];
	unsigned cls_mask = 0;
	size_t n = 0, n_comp, i;
	int r;

	for (i = 0; i < plan->n_slots; i++) {
		const struct probe_slot *s = &plan->slots[i];

		if (s->backend != BACKEND_TRACEPOINT)
			continue;
		r = tp_add_node(t, s->node, ret, max, &n, &cls_mask);
		if (r < 0)
			return r;
	}
	/*
	 * Every node on the tracepoint backend, inner ones too: an inner node
	 * measured through tracepoints counts the classes of its descendants
	 * on tracepoints, and a level with a slot for it must not attach what
	 * the reference did not.
	 */
	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *node = &t->nodes[i];

		if (node->backend != BACKEND_TRACEPOINT || !node->hook)
			continue;
		r = tp_add_node(t, (int)i, ret, max, &n, &cls_mask);
		if (r < 0)
			return r;
	}
	n_comp = probe_companions(cls_mask, comp, ARRAY_SIZE(comp));
	for (i = 0; i < n_comp; i++) {
		r = tp_add(ret, max, &n, comp[i]);
		if (r < 0)
			return r;
	}
	*ret_n = n;
	return 0;
}

json_t *probe_plan_describe(const struct tree *t, const struct probe_plan *plan)
{
	json_t *slots = json_array(), *progs = json_array();
	const char *tps[PROBE_MAX_LINKS];
	size_t n_tps, i;

	for (i = 0; i < plan->n_slots; i++) {
		const struct probe_slot *s = &plan->slots[i];
		json_t *cls = json_array();
		unsigned c;

		for (c = 0; c < ARGUS_CLS_MAX; c++)
			if (s->classes & (1u << c))
				json_array_append_new(cls, json_string(classes[c].name));
		json_array_append_new(slots, json_pack("{s:i,s:s,s:s,s:s,s:o}", "slot", (int)i,
						       "node", t->nodes[s->node].id, "backend",
						       backend_name(s->backend), "hook", s->hook,
						       "classes", cls));
		if (s->backend == BACKEND_KPROBE)
			json_array_append_new(progs, json_sprintf("kprobe+kretprobe/%s", s->hook));
		else if (s->backend == BACKEND_FENTRY)
			json_array_append_new(progs, json_sprintf("fentry+fexit/%s", s->hook));
	}
	if (probe_plan_tracepoints(t, plan, tps, ARRAY_SIZE(tps), &n_tps) == 0)
		for (i = 0; i < n_tps; i++)
			json_array_append_new(progs, json_sprintf("tp_btf/%s", tps[i]));
	return json_pack("{s:s,s:o,s:o}", "object", "paths.bpf.o", "slots", slots, "programs",
			 progs);
}

/*
 * The fault classifier's stand-ins (bpf/faults.bpf.h), by the kernel facts
 * and the backends that call for them.
 */
static const struct probe_stand_in fault_by_kprobe = {
    .backend = BACKEND_KPROBE,
    .programs = {"handle_mm_fault_kprobe", "handle_mm_fault_kretprobe", "handle_do_wp_page",
		 "handle_do_huge_pmd_wp_page", "handle_wp_page_copy_exit"},
    .said = {"kprobe+kretprobe/handle_mm_fault", "kprobe/do_wp_page", "kprobe/do_huge_pmd_wp_page",
	     "kretprobe/wp_page_copy"},
};
static const struct probe_stand_in rss_by_fentry = {
    .backend = BACKEND_FENTRY,
    .programs = {"handle_mm_fault_entry", "handle_mm_fault_exit"},
    .said = {"fentry+fexit/handle_mm_fault"},
};
static const struct probe_stand_in rss_by_kprobe = {
    .backend = BACKEND_KPROBE,
    .programs = {"handle_mm_fault_rss", "handle_mm_fault_kretprobe"},
    .said = {"kprobe+kretprobe/handle_mm_fault"},
};
/* the fault's own kretprobe (fault_by_kprobe) reads the counters */
static const struct probe_stand_in rss_by_fault_kprobes = {.backend = BACKEND_KPROBE};

/* The first of fentry and kprobe in order, as the stand-in that reads RSS; NULL for neither. */
static const struct probe_stand_in *rss_reader(const struct backend_order *order)
{
	struct backend_order def;
	size_t i;

	if (!order || order->n == 0) {
		backend_order_default(&def);
		order = &def;
	}
	for (i = 0; i < order->n; i++)
		if (order->v[i] == BACKEND_FENTRY)
			return &rss_by_fentry;
		else if (order->v[i] == BACKEND_KPROBE)
			return &rss_by_kprobe;
	return NULL;
}

int probe_plan_stand_in(const struct probe_kernel *k, const struct backend_order *order,
			const char *tp, const struct probe_stand_in **ret)
{
	const struct probe_stand_in *si = NULL;

	if (strcmp(tp, "page_fault_user") == 0 && k->faults_by_kprobe)
		si = &fault_by_kprobe;
	else if (strcmp(tp, "rss_stat") == 0 && k->splits_rss && k->faults_by_kprobe)
		si = &rss_by_fault_kprobes;
	else if (strcmp(tp, "rss_stat") == 0 && k->splits_rss && !(si = rss_reader(order))) {
		*ret = NULL;
		return -EPERM;
	}
	*ret = si;
	return si && !backend_order_has(order, si->backend) ? -EPERM : 0;
}

void probe_plan_programs_on(const struct probe_kernel *k, const struct backend_order *order,
			    json_t *programs)
{
	const size_t plen = strlen("tp_btf/");
	size_t i = 0, j;

	while (i < json_array_size(programs)) {
		const char *prog = json_string_value(json_array_get(programs, i)) ?: "";
		const struct probe_stand_in *si = NULL;
		const char *call = NULL;

		if (k->syscall_none && strncmp(prog, "tp_btf/", plen) == 0 &&
		    syscall_event_raw(prog + plen)) {
			const char *by = strcmp(prog, "tp_btf/sys_enter") == 0 ? "tp_btf/sched_switch"
									   : "tp_btf/sched_wakeup";

			if (json_strings_have(programs, by))
				json_array_remove(programs, i);
			else
				json_array_set_new(programs, i++, json_string(by));
			continue;
		}
		if (strncmp(prog, "tp_btf/", plen) == 0) {
			/* one the order refuses is named as the plan has it: the loader refuses it */
			if (probe_plan_stand_in(k, order, prog + plen, &si) < 0)
				si = NULL;
			if (k->syscall_per_call && strcmp(prog + plen, "sys_enter") == 0)
				call = "tracepoint/syscalls/sys_enter_*";
			else if (k->syscall_per_call && strcmp(prog + plen, "sys_exit") == 0)
				call = "tracepoint/syscalls/sys_exit_*";
		}
		if (call) {
			json_array_set_new(programs, i++, json_string(call));
			continue;
		}
		if (!si) {
			i++;
			continue;
		}
		json_array_remove(programs, i);
		for (j = 0; si->said[j]; j++)
			json_array_insert_new(programs, i++, json_string(si->said[j]));
	}
}
