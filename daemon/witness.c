// SPDX-License-Identifier: MIT
/*
 * The witness of an authored measurement: the checks of witness.h, each a
 * small pure function over the plan's nodes, the vector and the kernel's
 * figures, each adding at most one reason (its worst offender) to the
 * result.
 */
#include "daemon/witness.h"
#include "daemon/util.h"
#include "bpf/paths.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CLS(c) (1u << (c))
#define FAULT_CLASSES                                                                              \
	(CLS(ARGUS_CLS_ANON_MINOR) | CLS(ARGUS_CLS_ANON_ZERO) | CLS(ARGUS_CLS_ANON_COW) |          \
	 CLS(ARGUS_CLS_ANON_THP) | CLS(ARGUS_CLS_FILE_CACHE) | CLS(ARGUS_CLS_FILE_MAJOR))
#define TLB_CLASSES CLS(ARGUS_CLS_TLB_SHOOTDOWN)
#define PAGING_CLASSES (FAULT_CLASSES | TLB_CLASSES)
#define RUNQ_CLASSES (CLS(ARGUS_CLS_RUNQ_WAIT) | CLS(ARGUS_CLS_RUNQ_OWN))
#define COMPANIONS_MAX 64
#define PLAUSIBLE_NAMED 3 /* offenders named in the plausibility reason */

static const char *const check_names[WITNESS_CHECK_MAX] = {
	[WITNESS_PLAUSIBLE] = "plausible", [WITNESS_FAULTS] = "faults",
	[WITNESS_MAJOR] = "major",	   [WITNESS_RUNQUEUE] = "runqueue",
	[WITNESS_THREAD_TIME] = "thread_time", [WITNESS_RUNS] = "runs",
};

const char *witness_check_name(enum witness_check c)
{
	return (int)c >= 0 && (int)c < WITNESS_CHECK_MAX ? check_names[c] : "?";
}

void witness_figures_init(struct witness_figures *f)
{
	size_t i;

	*f = (struct witness_figures){ .page_faults = NAN, .major_faults = NAN,
				       .context_switches = NAN, .task_clock_ns = NAN,
				       .thread_ns = NAN, .run_delay_ns = NAN, .tlb_ipis = NAN };
	for (i = 0; i < ARGUS_MAX_SLOTS; i++)
		f->slot_runs[i] = NAN;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *witness_figures_to_json(const struct witness_figures *f, size_t n_slots)
{
	json_t *runs = json_array();
	size_t i;

	for (i = 0; i < n_slots && i < ARGUS_MAX_SLOTS; i++)
		json_array_append_new(runs, num_or_null(f->slot_runs[i]));
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:s?,s:o,s:o}", "page_faults",
			 num_or_null(f->page_faults), "major_faults", num_or_null(f->major_faults),
			 "context_switches", num_or_null(f->context_switches), "task_clock_ns",
			 num_or_null(f->task_clock_ns), "thread_ns",
			 num_or_null(f->thread_ns), "run_delay_ns", num_or_null(f->run_delay_ns),
			 "run_delay_missing", f->run_delay_missing, "tlb_ipis",
			 num_or_null(f->tlb_ipis), "slot_runs", runs);
}

/* ---- program runs per slot ---- */

/* The attach point a section names: after its last '/', up to a '+' (a kprobe offset). */
static void attach_name(const char *section, char *buf, size_t len)
{
	const char *s = strrchr(section, '/');
	size_t n;

	s = s ? s + 1 : section;
	n = strcspn(s, "+");
	snprintf(buf, len, "%.*s", (int)n, s);
}

static bool slot_may_use(const struct tree_node *n, const char *name)
{
	const char *comp[COMPANIONS_MAX];
	size_t nc, i;

	if (!strcmp(name, "sched_process_fork") || !strcmp(name, "sched_process_exit"))
		return true;
	if (hook_list_has(&n->chosen, name))
		return true;
	nc = probe_companions(n->classes, comp, COMPANIONS_MAX);
	for (i = 0; i < nc; i++)
		if (!strcmp(comp[i], name))
			return true;
	return false;
}

void witness_slot_runs(const struct tree *t, const struct probe_plan *plan,
		       const struct witness_program *progs, size_t n_progs, double *ret)
{
	size_t s, p;

	for (s = 0; s < plan->n_slots && s < ARGUS_MAX_SLOTS; s++) {
		const struct tree_node *n = &t->nodes[plan->slots[s].node];
		double runs = 0;

		for (p = 0; p < n_progs; p++) {
			char name[128];

			if (!progs[p].section)
				continue;
			attach_name(progs[p].section, name, sizeof(name));
			if (slot_may_use(n, name))
				runs += progs[p].runs;
		}
		ret[s] = runs;
	}
}

/* ---- result ---- */

void witness_result_clear(struct witness_result *r)
{
	if (!r)
		return;
	json_decref(r->failed);
	json_decref(r->unchecked);
	*r = (struct witness_result){};
}

char *witness_reasons(const struct witness_result *r)
{
	char *out = xstrdup("");
	json_t *e;
	size_t i;

	json_array_foreach(r->failed, i, e)
	{
		char *next = xasprintf("%s%s%s", out, i ? "; " : "",
				       json_string_value(json_object_get(e, "reason")) ?: "?");

		free(out);
		out = next;
	}
	return out;
}

static void add(json_t *list, enum witness_check c, char *reason)
{
	json_array_append_new(list, json_pack("{s:s,s:s}", "check", witness_check_name(c), "reason",
					      reason ?: "?"));
	free(reason);
}

static double count_slack(double bound)
{
	return WITNESS_COUNT_SLACK + WITNESS_COUNT_SLACK_FRAC * bound;
}

static double time_slack(double bound)
{
	return WITNESS_TIME_SLACK_NS + WITNESS_TIME_SLACK_FRAC * bound;
}

static const double *node_metric(const struct tree *t, const struct mvec *v, int idx,
				 const char *metric)
{
	char key[TREE_MAX_ID_LEN + 16];

	snprintf(key, sizeof(key), "%s/%s", t->nodes[idx].id, metric);
	return mvec_get(v, key);
}

static bool implausible(double v, double max)
{
	return !isfinite(v) || v < 0 || v >= max;
}

/* Every node metric in the vector: finite, not negative, below its bound. */
static void check_plausible(const struct tree *t, const struct mvec *v, struct witness_result *r)
{
	char *names = NULL;
	size_t i, bad = 0;

	for (i = 0; i < t->n_nodes; i++) {
		static const char *const metrics[] = { "count", "time_ns" };
		size_t m;

		for (m = 0; m < ARRAY_SIZE(metrics); m++) {
			const double *x = node_metric(t, v, i, metrics[m]);
			char *next;

			if (!x || !implausible(*x, m == 0 ? WITNESS_COUNT_MAX : WITNESS_TIME_MAX_NS))
				continue;
			if (bad++ >= PLAUSIBLE_NAMED)
				continue;
			next = xasprintf("%s%s%s/%s = %.17g", names ?: "", names ? ", " : "",
					 t->nodes[i].id, metrics[m], *x);
			free(names);
			names = next;
		}
	}
	if (bad)
		add(r->failed, WITNESS_PLAUSIBLE,
		    xasprintf("%zu value%s no run can hold (a count below %.0f, a time below %.0f s, "
			      "finite and not negative): %s%s",
			      bad, bad == 1 ? "" : "s", WITNESS_COUNT_MAX, WITNESS_TIME_MAX_NS / 1e9,
			      names, bad > PLAUSIBLE_NAMED ? ", ..." : ""));
	free(names);
}

/* The sum of the paging slots' counts against the kernel's page faults and TLB interrupts. */
static void check_faults(const struct tree *t, const struct probe_plan *plan, const struct mvec *v,
			 const struct witness_figures *f, struct witness_result *r)
{
	unsigned covered = 0;
	double sum = 0, bound = 0, limit;
	char *parts = NULL;
	size_t s;

	for (s = 0; s < plan->n_slots; s++) {
		const struct tree_node *n = &t->nodes[plan->slots[s].node];
		const double *c = node_metric(t, v, plan->slots[s].node, "count");
		char *next;

		if (!(n->classes & PAGING_CLASSES) || !c)
			continue;
		if (n->classes & ~PAGING_CLASSES) {
			add(r->unchecked, WITNESS_FAULTS,
			    xasprintf("%s counts paging and other events in one slot", n->id));
			continue;
		}
		covered |= n->classes;
		sum += *c;
		next = xasprintf("%s%s%s %.0f", parts ?: "", parts ? ", " : "", n->id, *c);
		free(parts);
		parts = next;
	}
	if (!covered)
		goto out;
	if ((covered & FAULT_CLASSES) && isnan(f->page_faults)) {
		add(r->unchecked, WITNESS_FAULTS, xstrdup("the perf page-fault counter did not cover "
							  "the run"));
		goto out;
	}
	if ((covered & TLB_CLASSES) && isnan(f->tlb_ipis)) {
		add(r->unchecked, WITNESS_FAULTS,
		    xstrdup("the TLB shootdown interrupts of the run are not known here"));
		goto out;
	}
	if (covered & FAULT_CLASSES)
		bound += f->page_faults;
	if (covered & TLB_CLASSES)
		bound += WITNESS_TLB_EVENTS_PER_IPI * f->tlb_ipis;
	limit = bound + count_slack(bound);
	if (!(sum <= limit))
		add(r->failed, WITNESS_FAULTS,
		    xasprintf("the paging nodes count %.0f events (%s) but the kernel counted %.0f page "
			      "faults%s%.0f%s in the run: at most %.0f with the tolerance",
			      sum, parts, covered & FAULT_CLASSES ? f->page_faults : 0,
			      covered & TLB_CLASSES ? " and " : "",
			      covered & TLB_CLASSES ? f->tlb_ipis : 0,
			      covered & TLB_CLASSES ? " TLB shootdown interrupts" : "", limit));
out:
	free(parts);
}

/* The major-fault leaf against perf's major faults and the faults that slept. */
static void check_major(const struct tree *t, const struct probe_plan *plan, const struct mvec *v,
			const struct witness_figures *f, struct witness_result *r)
{
	size_t s;

	for (s = 0; s < plan->n_slots; s++) {
		const struct tree_node *n = &t->nodes[plan->slots[s].node];
		const double *c = node_metric(t, v, plan->slots[s].node, "count");
		double bound, limit;

		if (n->classes != CLS(ARGUS_CLS_FILE_MAJOR) || !c)
			continue;
		if (isnan(f->major_faults) || isnan(f->context_switches)) {
			add(r->unchecked, WITNESS_MAJOR,
			    xstrdup("the perf major-fault and context-switch counters did not cover "
				    "the run"));
			return;
		}
		bound = f->major_faults + f->context_switches;
		limit = bound + count_slack(bound);
		if (!(*c <= limit))
			add(r->failed, WITNESS_MAJOR,
			    xasprintf("%s counts %.0f major faults but the kernel counted %.0f, and "
				      "%.0f context switches for faults that slept: at most %.0f with "
				      "the tolerance",
				      n->id, *c, f->major_faults, f->context_switches, limit));
		return;
	}
}

/* Runqueue time against run_delay, or against the off-CPU time when run_delay was not read. */
static void check_runqueue(const struct tree *t, const struct mvec *v,
			   const struct witness_figures *f, struct witness_result *r)
{
	bool have_delay = !isnan(f->run_delay_ns), any = false;
	double runq = have_delay ? f->run_delay_ns : f->thread_ns - f->task_clock_ns;
	double worst = 0, worst_x = 0, worst_limit = 0;
	int worst_node = -1;
	size_t i;

	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *n = &t->nodes[i];
		const double *x = node_metric(t, v, i, "time_ns");
		double bound, limit;

		if (!(n->classes & RUNQ_CLASSES) || !x)
			continue;
		any = true;
		bound = runq;
		if (n->classes & ~RUNQ_CLASSES)
			bound += f->task_clock_ns; /* its fork time: the forking thread's kernel time */
		if (isnan(bound))
			continue;
		if (bound < 0)
			bound = 0;
		limit = bound + time_slack(bound);
		if (!(*x <= limit) && (isnan(*x) || *x / limit > worst)) {
			worst = isnan(*x) ? INFINITY : *x / limit;
			worst_node = i;
			worst_x = *x;
			worst_limit = limit;
		}
	}
	if (!any)
		return;
	if (!have_delay)
		add(r->unchecked, WITNESS_RUNQUEUE,
		    xasprintf("run_delay not read (%s)%s", f->run_delay_missing ?: "not available",
			      isnan(runq) ? ": runqueue time not checked"
					  : ": runqueue time checked against the off-CPU time"));
	if (isnan(runq))
		return;
	if (worst_node >= 0)
		add(r->failed, WITNESS_RUNQUEUE,
		    xasprintf("%s/time_ns is %.3f s but the target's %s was %.3f s: at most %.3f s "
			      "with the tolerance",
			      t->nodes[worst_node].id, worst_x / 1e9,
			      have_delay ? "runqueue time (run_delay)" : "off-CPU time", runq / 1e9,
			      worst_limit / 1e9));
}

/* Every node's time against the lives of the target's tasks. */
static void check_thread_time(const struct tree *t, const struct mvec *v,
			      const struct witness_figures *f, struct witness_result *r)
{
	double limit = f->thread_ns + time_slack(f->thread_ns), worst = -1;
	int worst_node = -1;
	bool any = false;
	size_t i;

	for (i = 0; i < t->n_nodes; i++) {
		const double *x = node_metric(t, v, i, "time_ns");

		if (!x)
			continue;
		any = true;
		if (!(*x <= limit) && (isnan(*x) || *x > worst)) {
			worst = isnan(*x) ? INFINITY : *x;
			worst_node = i;
		}
	}
	if (!any)
		return;
	if (isnan(f->thread_ns)) {
		add(r->unchecked, WITNESS_THREAD_TIME,
		    xstrdup("the lives of the target's tasks could not be followed"));
		return;
	}
	if (worst_node >= 0)
		add(r->failed, WITNESS_THREAD_TIME,
		    xasprintf("%s/time_ns is %.3f s, more than the %.3f s the target's tasks lived "
			      "in the run: at most %.3f s with the tolerance",
			      t->nodes[worst_node].id, worst / 1e9, f->thread_ns / 1e9, limit / 1e9));
}

/* Every slot's count against the runs of the programs that may count it. */
static void check_runs(const struct tree *t, const struct probe_plan *plan, const struct mvec *v,
		       const struct witness_figures *f, struct witness_result *r)
{
	double worst = 0, worst_x = 0, worst_runs = 0;
	int worst_node = -1;
	size_t s;

	for (s = 0; s < plan->n_slots && s < ARGUS_MAX_SLOTS; s++) {
		const double *c = node_metric(t, v, plan->slots[s].node, "count");
		double runs = f->slot_runs[s];

		if (!c)
			continue;
		if (isnan(runs)) {
			add(r->unchecked, WITNESS_RUNS,
			    xstrdup("the programs' run counts were not kept (kernel.bpf_stats)"));
			return;
		}
		if (!(*c <= runs) && (isnan(*c) || *c - runs > worst)) {
			worst = isnan(*c) ? INFINITY : *c - runs;
			worst_node = plan->slots[s].node;
			worst_x = *c;
			worst_runs = runs;
		}
	}
	if (worst_node >= 0)
		add(r->failed, WITNESS_RUNS,
		    xasprintf("%s/count is %.0f but the programs that may count it ran %.0f times",
			      t->nodes[worst_node].id, worst_x, worst_runs));
}

int witness_check(const struct tree *t, const struct probe_plan *plan, const struct mvec *v,
		  const struct witness_figures *f, struct witness_result *ret)
{
	struct witness_result r;
	size_t s;

	if (!plan || plan->n_slots == 0 || plan->n_slots > ARGUS_MAX_SLOTS)
		return -EINVAL;
	for (s = 0; s < plan->n_slots; s++)
		if (plan->slots[s].node < 0 || (size_t)plan->slots[s].node >= t->n_nodes)
			return -EINVAL;
	r = (struct witness_result){ .failed = json_array(), .unchecked = json_array() };
	check_plausible(t, v, &r);
	check_faults(t, plan, v, f, &r);
	check_major(t, plan, v, f, &r);
	check_runqueue(t, v, f, &r);
	check_thread_time(t, v, f, &r);
	check_runs(t, plan, v, f, &r);
	r.agree = json_array_size(r.failed) == 0;
	*ret = r;
	return 0;
}
