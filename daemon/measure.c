// SPDX-License-Identifier: MIT
/*
 * One measured run: probe load -> target spawned held before exec -> target
 * followed by the probe -> attach -> perf counters armed for exec -> run ->
 * detach -> read. The order matters: nothing of the target runs unobserved,
 * and nothing stays attached once the window ends.
 */
#include "daemon/measure.h"
#include "daemon/aside.h"
#include "daemon/log.h"
#include "daemon/perfcount.h"
#include "daemon/probe_authored.h"
#include "daemon/util.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define TARGET_THREADS_MAX 256

void measure_result_clear(struct measure_result *r)
{
	if (!r)
		return;
	mvec_free(&r->vec);
	target_result_clear(&r->target);
	json_decref(r->probe);
	free(r->error);
	free(r->error_code);
	free(r->verifier_log);
	memset(r, 0, sizeof(*r));
}

static bool node_has_metric(const struct tree_node *n, const char *m)
{
	size_t i;

	for (i = 0; i < n->n_metrics; i++)
		if (strcmp(n->metrics[i], m) == 0)
			return true;
	return false;
}

static void set_node(struct mvec *v, const struct tree_node *n, double count, double time_ns)
{
	char key[256];

	if (node_has_metric(n, "count")) {
		snprintf(key, sizeof(key), "%s/count", n->id);
		mvec_set(v, key, count);
	}
	if (node_has_metric(n, "time_ns")) {
		snprintf(key, sizeof(key), "%s/time_ns", n->id);
		mvec_set(v, key, time_ns);
	}
}

/* Values of node idx; false when this run does not cover it. */
static bool node_value(const struct tree *t, const struct probe_plan *plan,
		       const struct probe_counts *c, unsigned counted, int idx, double *count,
		       double *time_ns, int depth)
{
	const struct tree_node *n = &t->nodes[idx];
	bool any = false;
	size_t i;

	for (i = 0; i < plan->n_slots; i++)
		if (plan->slots[i].node == idx) {
			*count = c->slot[i].count;
			*time_ns = c->slot[i].time_ns;
			return true;
		}
	if (n->backend == BACKEND_NONE)
		return false;
	if (n->n_children == 0) {
		unsigned k;

		if (n->backend != BACKEND_TRACEPOINT || (n->classes & counted) != n->classes)
			return false;
		*count = *time_ns = 0;
		for (k = 0; k < ARGUS_CLS_MAX; k++)
			if (n->classes & (1u << k)) {
				*count += c->cls[k].count;
				*time_ns += c->cls[k].time_ns;
			}
		return true;
	}
	if (depth > TREE_MAX_DEPTH)
		return false;
	*count = *time_ns = 0;
	for (i = 0; i < n->n_children; i++) {
		double cc, ct;

		if (t->nodes[n->children[i]].backend == BACKEND_NONE)
			continue;
		if (!node_value(t, plan, c, counted, n->children[i], &cc, &ct, depth + 1))
			return false;
		*count += cc;
		*time_ns += ct;
		any = true;
	}
	return any;
}

void measure_fill_nodes(const struct tree *t, const struct probe_plan *plan,
			const struct probe_counts *c, struct mvec *v)
{
	unsigned counted = 0, k;
	size_t i;

	for (i = 0; i < plan->n_slots; i++)
		counted |= plan->slots[i].classes;
	for (i = 0; i < t->n_nodes; i++) {
		double count, time_ns;

		if (node_value(t, plan, c, counted, i, &count, &time_ns, 0))
			set_node(v, &t->nodes[i], count, time_ns);
	}
	counted = probe_counted_with(counted);
	for (k = 0; k < ARGUS_CLS_MAX; k++) {
		char key[96];

		if (!(counted & (1u << k)))
			continue;
		snprintf(key, sizeof(key), "class/%s/count", probe_class_name(k));
		mvec_set(v, key, c->cls[k].count);
		snprintf(key, sizeof(key), "class/%s/time_ns", probe_class_name(k));
		mvec_set(v, key, c->cls[k].time_ns);
	}
}

/* The level's probe: the builtin object or an authored one (plan->object). */
struct level_probe {
	struct probe *builtin;
	struct probe_authored *authored;
};

static int lp_load(const struct tree *t, const struct probe_plan *plan, struct level_probe *lp,
		   char **ret_log)
{
	if (plan->object)
		return probe_authored_load(plan->object, plan->object_len, &lp->authored, ret_log);
	return probe_load(t, plan, &lp->builtin, ret_log);
}

static int lp_add_target(struct level_probe *lp, pid_t pid)
{
	return lp->authored ? probe_authored_add_target(lp->authored, pid)
			    : probe_add_target(lp->builtin, pid);
}

static int lp_attach(struct level_probe *lp)
{
	return lp->authored ? probe_authored_attach(lp->authored) : probe_attach(lp->builtin);
}

static void lp_detach(struct level_probe *lp)
{
	probe_authored_detach(lp->authored);
	probe_detach(lp->builtin);
}

static int lp_read(struct level_probe *lp, struct probe_counts *ret)
{
	return lp->authored ? probe_authored_read(lp->authored, ret) : probe_read(lp->builtin, ret);
}

static bool lp_loaded(const struct level_probe *lp)
{
	return lp->builtin || lp->authored;
}

static void lp_free(struct level_probe *lp)
{
	probe_authored_free(lp->authored);
	probe_free(lp->builtin);
	*lp = (struct level_probe){};
}

static int fail(struct measure_result *ret, int r, const char *code, char *msg)
{
	free(ret->error);
	free(ret->error_code);
	ret->error = msg;
	ret->error_code = xstrdup(code);
	return r;
}

static json_t *probe_info(const struct tree *t, const struct probe_plan *plan,
			  const struct level_probe *lp, const struct probe_counts *c, bool stats,
			  uint64_t wall_ns)
{
	json_t *o = probe_plan_describe(t, plan);

	if (lp->authored) {
		json_object_set_new(o, "object", json_string("authored"));
		json_object_set_new(o, "programs", probe_authored_programs(lp->authored));
	}

	json_object_set_new(o, "unclassified_faults", json_integer(c->unclassified_faults));
	if (c->n_rq_holders > 0) {
		json_t *a = json_array();
		size_t i;

		for (i = 0; i < c->n_rq_holders; i++) {
			const struct probe_rq_holder *h = &c->rq_holders[i];

			json_array_append_new(a, json_pack("{s:i,s:s,s:b,s:I,s:I}", "pid",
							   (int)h->tgid, "comm", h->comm, "own",
							   h->own, "waits", (json_int_t)h->waits,
							   "wait_ns", (json_int_t)h->wait_ns));
		}
		json_object_set_new(o, "runq_holders", a);
	}
	if (stats && c->run_cnt) {
		json_object_set_new(o, "program_runs", json_integer(c->run_cnt));
		json_object_set_new(o, "program_time_ns", json_integer(c->run_time_ns));
		json_object_set_new(o, "ns_per_run", json_real((double)c->run_time_ns / c->run_cnt));
		if (wall_ns)
			json_object_set_new(o, "overhead_fraction",
					    json_real((double)c->run_time_ns / wall_ns));
	}
	return o;
}

static int run_workload(const struct tree *t, const struct probe_plan *plan,
			const struct measure_target *tg, const struct measure_opts *o,
			struct level_probe *probe, struct perfcount *pc, struct measure_result *ret)
{
	struct target_run *run = NULL;
	struct aside aside = {};
	char *err = NULL;
	pid_t pid;
	int r;

	r = target_spawn(tg->workload, tg->victims_dir, &run, &err);
	if (r < 0)
		return fail(ret, r, "workload_failed",
			    err ?: xasprintf("cannot start workload: %s", strerror(-r)));
	pid = target_pid(run);
	if (lp_loaded(probe)) {
		r = lp_add_target(probe, pid);
		if (!r)
			r = lp_attach(probe);
		if (r < 0) {
			target_free(run);
			return fail(ret, r, "probe_attach_failed",
				    xasprintf("attaching the probe: %s", strerror(-r)));
		}
	}
	r = perfcount_open(&pid, 1, true, pc);
	if (r < 0)
		log_warning_errno(r, "perf counters unavailable for pid %d: %m", (int)pid);
	if (aside_enter(&tg->workload->cpuset, &aside) < 0)
		log_debug("could not step aside from the workload's CPUs");
	r = target_release(run);
	if (r >= 0)
		r = target_wait(run, o->should_stop, o->userdata, &ret->target);
	aside_leave(&aside);
	lp_detach(probe);
	target_free(run);
	if (r < 0)
		return fail(ret, r, "internal", xasprintf("waiting for the workload: %s", strerror(-r)));
	if (ret->target.stopped)
		return fail(ret, -ECANCELED, "cancelled", xstrdup("cancelled while the workload ran"));
	if (ret->target.exec_failed || ret->target.timed_out || ret->target.term_signal ||
	    ret->target.exit_status != 0)
		return fail(ret, -EIO, ret->target.timed_out ? "workload_timeout" : "workload_failed",
			    xasprintf("workload %s: %s", tg->workload->name,
				      ret->target.error ?: "failed"));
	mvec_set(&ret->vec, "target/wall_ns", ret->target.wall_ns);
	return 0;
}

static int run_pid(const struct tree *t, const struct probe_plan *plan,
		   const struct measure_target *tg, const struct measure_opts *o,
		   struct level_probe *probe, struct perfcount *pc, struct measure_result *ret)
{
	pid_t tids[TARGET_THREADS_MAX];
	size_t n = 0;
	char *err = NULL;
	int r;

	r = target_pid_check(tg->pid, &err);
	if (r < 0)
		return fail(ret, r, "target_gone", err ?: xasprintf("pid %d: %s", (int)tg->pid,
								     strerror(-r)));
	if (lp_loaded(probe)) {
		r = lp_add_target(probe, tg->pid);
		if (!r)
			r = lp_attach(probe);
		if (r < 0)
			return fail(ret, r, "probe_attach_failed",
				    xasprintf("attaching the probe: %s", strerror(-r)));
	}
	if (target_threads(tg->pid, tids, TARGET_THREADS_MAX, &n) == 0 && n > 0) {
		r = perfcount_open(tids, n, false, pc);
		if (r < 0)
			log_warning_errno(r, "perf counters unavailable for pid %d: %m", (int)tg->pid);
	}
	r = target_observe(tg->pid, tg->window_ms, o->should_stop, o->userdata, &ret->target);
	lp_detach(probe);
	if (ret->target.stopped)
		return fail(ret, -ECANCELED, "cancelled", xstrdup("cancelled while observing"));
	if (r == -ESRCH)
		return fail(ret, r, "target_gone",
			    xasprintf("pid %d exited during the observation window", (int)tg->pid));
	if (r < 0)
		return fail(ret, r, "internal", xasprintf("observing pid %d: %s", (int)tg->pid,
							   strerror(-r)));
	return 0;
}

int measure_run(const struct tree *t, const struct probe_plan *plan,
		const struct measure_target *tg, const struct measure_opts *o,
		struct measure_result *ret)
{
	struct measure_result res = {};
	struct perfcount pc = { .n = 0 };
	struct level_probe probe = {};
	struct probe_counts counts = {};
	_cleanup_close_ int stats_fd = -1;
	char *vlog = NULL;
	int r;

	if (plan && plan->n_slots) {
		r = lp_load(t, plan, &probe, &vlog);
		if (r < 0) {
			res.verifier_log = vlog;
			r = fail(&res, r, "probe_rejected",
				 xasprintf("loading the level probe: %s", strerror(-r)));
			*ret = res;
			return r;
		}
	}
	if (o->probe_stats && lp_loaded(&probe)) {
		stats_fd = probe_stats_enable();
		if (stats_fd < 0)
			log_debug_errno(stats_fd, "bpf stats unavailable: %m");
	}

	if (tg->workload)
		r = run_workload(t, plan, tg, o, &probe, &pc, &res);
	else
		r = run_pid(t, plan, tg, o, &probe, &pc, &res);

	if (r >= 0) {
		if (pc.n)
			perfcount_read(&pc, &res.vec);
		if (lp_loaded(&probe)) {
			r = lp_read(&probe, &counts);
			if (r < 0)
				r = fail(&res, r, "internal",
					 xasprintf("reading the probe counters: %s", strerror(-r)));
			else {
				measure_fill_nodes(t, plan, &counts, &res.vec);
				/* the first thread lived the wall time; the rest, as counted */
				if (tg->workload && probe.builtin)
					mvec_set(&res.vec, "target/thread_ns",
						 res.target.wall_ns + counts.child_thread_ns);
				res.probe = probe_info(t, plan, &probe, &counts, stats_fd >= 0,
						       res.target.wall_ns);
			}
		}
	}
	perfcount_close(&pc);
	lp_free(&probe);
	*ret = res;
	return r;
}

int measure_warmup(const struct measure_target *tg, const struct measure_opts *o,
		   struct measure_result *ret)
{
	if (!tg->workload) {
		*ret = (struct measure_result){};
		return 0;
	}
	return measure_run(NULL, NULL, tg, o, ret);
}
