// SPDX-License-Identifier: MIT
#include "daemon/report.h"
#include "daemon/host_pace.h"
#include "daemon/probe.h"
#include "daemon/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void report_init(struct report *r, const struct tree *t)
{
	memset(r, 0, sizeof(*r));
	r->tree = t;
	r->agent = "builtin";
	r->levels = json_array();
	r->unavailable = json_array();
	r->warnings = json_array();
	r->timings = json_pack("{s:f,s:[]}", "total_s", 0.0, "levels");
	r->overhead = json_array();
	r->pace_runs = json_array();
	r->stop_node = -1;
	r->stop_action = -1;
}

void report_free(struct report *r)
{
	json_decref(r->levels);
	json_decref(r->unavailable);
	json_decref(r->warnings);
	json_decref(r->timings);
	json_decref(r->overhead);
	json_decref(r->rq_holders);
	json_decref(r->rq_holders_total);
	json_decref(r->wakers);
	json_decref(r->wakers_total);
	json_decref(r->causes);
	json_decref(r->pace_runs);
	free(r->stop_reason);
	memset(r, 0, sizeof(*r));
}

void report_warn(struct report *r, const char *msg)
{
	json_array_append_new(r->warnings, json_string(msg));
}

void report_unavailable(struct report *r, const struct tree_node *n)
{
	json_array_append_new(r->unavailable, json_pack("{s:s,s:s}", "node", n->id, "reason",
							n->reason ?: "no backend"));
}

static json_t *level_entry(json_t *arr, int level)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e) if (json_integer_value(json_object_get(e, "level")) == level)
		return e;
	e = json_pack("{s:i}", "level", level);
	json_array_append_new(arr, e);
	return e;
}

void report_timing(struct report *r, int level, const char *what, uint64_t ns)
{
	char key[64];
	json_t *e;
	double s = ns / 1e9;

	if (level == 0) {
		json_object_set_new(r->timings, "total_s", json_real(s));
		return;
	}
	e = level_entry(json_object_get(r->timings, "levels"), level);
	snprintf(key, sizeof(key), "%s_s", what);
	s += json_real_value(json_object_get(e, key));
	json_object_set_new(e, key, json_real(s));
}

void report_probe(struct report *r, int level, const json_t *probe)
{
	static const char *const keys[] = { "program_runs", "program_time_ns", "ns_per_run",
					     "overhead_fraction" };
	json_t *e;
	size_t i;

	if (!probe)
		return;
	e = level_entry(r->overhead, level);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		json_t *v = json_object_get(probe, keys[i]);

		if (v)
			json_object_set(e, keys[i], v);
	}
	json_object_set(e, "programs", json_object_get(probe, "programs"));
	json_decref(r->rq_holders);
	r->rq_holders = json_incref(json_object_get(probe, "runq_holders"));
	json_decref(r->rq_holders_total);
	r->rq_holders_total = json_incref(json_object_get(probe, "runq_holders_total"));
	json_decref(r->wakers);
	r->wakers = json_incref(json_object_get(probe, "wakers"));
	json_decref(r->wakers_total);
	r->wakers_total = json_incref(json_object_get(probe, "wakers_total"));
}

/* One cause: the node and the time score that makes it one. */
static json_t *cause(const struct report *r, int level, int node, const json_t *scores, int score)
{
	json_t *s = json_array_get(scores, score);

	return json_pack("{s:s,s:i,s:O,s:O}", "node", r->tree->nodes[node].id, "level", level,
			 "share", json_object_get(s, "share") ?: json_null(), "evidence", s);
}

void report_level(struct report *r, int level, int parent, const struct calib_decision *d)
{
	json_t *scores = calib_scores_to_json(d);
	json_t *lv = json_pack("{s:i,s:s?,s:s,s:s?,s:s,s:O}", "level", level, "parent",
			       parent >= 0 ? r->tree->nodes[parent].id : NULL, "action",
			       calib_action_name(d->action), "node",
			       d->node >= 0 ? r->tree->nodes[d->node].id : NULL, "reason",
			       d->reason ?: "", "scores", scores);

	if (d->has_also && d->node >= 0 && d->evidence >= 0) {
		json_object_set_new(lv, "also", json_string(r->tree->nodes[d->also].id));
		if (!r->causes)
			r->causes = json_pack("[o,o]", cause(r, level, d->node, scores, d->evidence),
					      cause(r, level, d->also, scores, d->also_evidence));
	}
	json_array_append_new(r->levels, lv);
	json_decref(scores);
}

void report_stop(struct report *r, int node, int action, const char *reason, const char *code)
{
	r->stop_node = node;
	r->stop_action = action;
	r->stop_code = code;
	free(r->stop_reason);
	r->stop_reason = xstrdup(reason ?: "");
}

/* Does metric id "<node>/<m>" belong to node id or one of its ancestors on the path? */
static bool metric_on_path(const char *metric, json_t *path)
{
	size_t i, len;
	json_t *p;

	json_array_foreach(path, i, p)
	{
		const char *id = json_string_value(p);

		len = strlen(id);
		if (strncmp(metric, id, len) == 0 && metric[len] == '/')
			return true;
	}
	return strncmp(metric, "target/", 7) == 0;
}

/* Is levels[i] followed by another run of the same level? */
static bool measured_again(json_t *levels, size_t i)
{
	json_int_t level = json_integer_value(json_object_get(json_array_get(levels, i), "level"));

	for (i++; i < json_array_size(levels); i++)
		if (json_integer_value(json_object_get(json_array_get(levels, i), "level")) == level)
			return true;
	return false;
}

/* The flagged metrics on the path and the wall times, from the last run of each level. */
static json_t *evidence_of(const struct report *r, json_t *path)
{
	json_t *ev = json_array(), *lv, *sc;
	size_t i, j;

	json_array_foreach(r->levels, i, lv)
	{
		int level = json_integer_value(json_object_get(lv, "level"));

		if (measured_again(r->levels, i))
			continue; /* ids stay unique: "L3/..." is the level's last run */

		json_array_foreach(json_object_get(lv, "scores"), j, sc)
		{
			const char *m = json_string_value(json_object_get(sc, "metric"));
			json_t *e;

			if (!m || !metric_on_path(m, path))
				continue;
			if (!json_is_true(json_object_get(sc, "flagged")) && strncmp(m, "target/", 7))
				continue;
			e = json_deep_copy(sc);
			json_object_set_new(e, "id", json_sprintf("L%d/%s", level, m));
			json_object_set_new(e, "level", json_integer(level));
			json_array_append_new(ev, e);
		}
	}
	return ev;
}

/* Does the path name runqueue waiting (a node counting that class)? */
static bool path_waits(const struct report *r, const int *chain, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (r->tree->nodes[chain[i]].classes & (1u << ARGUS_CLS_RUNQ_WAIT))
			return true;
	return false;
}

/* The leaf that counts class cls, or -1 (a class no node owns, an unknown name). */
static int leaf_of_class(const struct tree *t, const char *cls_name)
{
	int cls = tree_class_from_name(cls_name);
	size_t i;

	if (cls < 0)
		return -1;
	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, (int)i) && (t->nodes[i].classes & (1u << cls)))
			return (int)i;
	return -1;
}

/*
 * The next link of a waker, where its time went before
 * it ended the waits: ", after 170.0 ms of its own in kernel_block_io.device"
 * (the class's name where no node counts it); "" when unknown.
 */
static char *then_text(const struct tree *t, json_t *task)
{
	const char *cls = json_string_value(json_object_get(task, "then_class"));
	int leaf;

	if (!t || !cls)
		return xstrdup("");
	leaf = leaf_of_class(t, cls);
	return xasprintf(", after %.1f ms of its own in %s",
			 json_number_value(json_object_get(task, "then_ns")) / 1e6,
			 leaf >= 0 ? t->nodes[leaf].id : cls);
}

/*
 * The tasks a target's waits went to, runqueue holders or wakers: "cpu_hog
 * (pid 812): 9812 waits, 280.1 ms; app (pid 90, the target's own): 12 waits,
 * 0.4 ms; kworker/0:1 (pid 33, running loop_workfn): 40 waits, 16.0 ms",
 * each with " in CLASS" when it names the class of its waits, and
 * for a waker where its time went before (then_text;
 * t NULL: not said). unseen: what a pid of 0 means for these tasks.
 */
static char *tasks_text(const struct tree *tree, json_t *tasks, const char *unseen)
{
	char *text = xstrdup(""), *next;
	json_t *t;
	size_t i;

	json_array_foreach(tasks, i, t)
	{
		json_int_t pid = json_integer_value(json_object_get(t, "pid"));
		const char *cls = json_string_value(json_object_get(t, "class"));
		json_int_t procs = json_integer_value(json_object_get(t, "processes"));
		const char *work = json_string_value(json_object_get(t, "work"));
		_cleanup_free_ char *own = xasprintf(
		    "%s%s%s", json_is_true(json_object_get(t, "own")) ? ", the target's own" : "",
		    work ? ", running " : "", work ?: "");
		_cleanup_free_ char *who =
		    procs > 1 && pid ? xasprintf("%lld processes, pid %lld the most%s", (long long)procs,
						 (long long)pid, own)
		    : procs > 1	     ? xasprintf("%lld processes%s", (long long)procs, own)
		    : pid	     ? xasprintf("pid %lld%s", (long long)pid, own)
				     : xasprintf("%s%s", unseen, own);

		_cleanup_free_ char *then = then_text(tree, t);

		next = xasprintf("%s%s%s (%s): %lld waits, %.1f ms%s%s%s", text, i ? "; " : "",
				 json_string_value(json_object_get(t, "comm")), who,
				 (long long)json_integer_value(json_object_get(t, "waits")),
				 json_integer_value(json_object_get(t, "wait_ns")) / 1e6,
				 cls ? " in " : "", cls ?: "", then);
		free(text);
		text = next;
	}
	return text;
}

/*
 * How much of what the tasks of total met the listed tasks hold, where not
 * all: " (those named: 12% of the 4400.0 ms these waits lost; 3200.0 ms
 * went to tasks met when the probe's table of them was full, not named)".
 * "" when they hold it all (but half a percent) and none went unkept, or
 * nothing is known.
 */
static char *coverage_text(json_t *listed, json_t *total, const char *lost)
{
	double named = 0, all, unkept;
	json_t *t;
	size_t i;

	if (!json_is_object(total))
		return xstrdup("");
	json_array_foreach(listed, i, t)
		named += json_integer_value(json_object_get(t, "wait_ns"));
	unkept = json_integer_value(json_object_get(total, "unkept_ns"));
	all = json_integer_value(json_object_get(total, "wait_ns")) + unkept;
	/* what would read "100%": the tasks left out hold less than half a percent */
	if (all <= 0 || (unkept <= 0 && named >= 0.995 * all))
		return xstrdup("");
	if (unkept > 0)
		return xasprintf(" (those named: %.0f%% of the %.1f ms these waits %s; %.1f ms went "
				 "to tasks met when the probe's table of them was full, not named)",
				 100.0 * named / all, all / 1e6, lost, unkept / 1e6);
	return xasprintf(" (those named: %.0f%% of the %.1f ms these waits %s)", 100.0 * named / all,
			 all / 1e6, lost);
}

/*
 * The wakers whose waits count in node's classes, and those whose time
 * before went to them (node's cause held up the threads they woke), most
 * wait time first (as the probe keeps them).
 */
static json_t *node_wakers(const struct report *r, int node)
{
	unsigned classes = r->tree->nodes[node].classes;
	json_t *out = json_array(), *w;
	size_t i;

	json_array_foreach(r->wakers, i, w)
	{
		int cls = tree_class_from_name(json_string_value(json_object_get(w, "class")));
		int then = tree_class_from_name(json_string_value(json_object_get(w, "then_class")));

		if ((cls >= 0 && (classes & (1u << cls))) || (then >= 0 && (classes & (1u << then))))
			json_array_append(out, w);
	}
	return out;
}

/* ". Two causes at level 1: kernel_paging (100% of the added time), followed, and kernel_scheduler (33%)" */
static char *causes_text(json_t *causes)
{
	json_t *a = json_array_get(causes, 0), *b = json_array_get(causes, 1);

	return xasprintf(". Two causes at level %lld: %s (%.0f%% of the added time), followed, and "
			 "%s (%.0f%%)",
			 (long long)json_integer_value(json_object_get(a, "level")),
			 json_string_value(json_object_get(a, "node")),
			 json_number_value(json_object_get(a, "share")) * 100.0,
			 json_string_value(json_object_get(b, "node")),
			 json_number_value(json_object_get(b, "share")) * 100.0);
}

void report_pace(struct report *r, int level, double ns_per_load)
{
	json_array_append_new(r->pace_runs, json_pack("{s:i,s:f}", "level", level, "ns_per_load",
						      round(ns_per_load * 100) / 100));
}

/*
 * {"reference_ns", "runs", "median_ns", "ratio"} of the host's pace, the
 * ratio the runs' median over the reference's; NULL without readings.
 * *ret_moved: the summary's sentence when the host ran at another speed.
 */
static json_t *pace_of(const struct report *r, char **ret_moved)
{
	size_t n = json_array_size(r->pace_runs), i;
	_cleanup_free_ double *ns = NULL;
	double median;
	json_t *o;

	*ret_moved = NULL;
	if (!n)
		return NULL;
	ns = calloc(n, sizeof(*ns));
	if (!ns)
		abort();
	for (i = 0; i < n; i++)
		ns[i] = json_number_value(json_object_get(json_array_get(r->pace_runs, i), "ns_per_load"));
	median = host_pace_median(ns, n);
	o = json_pack("{s:O,s:f}", "runs", r->pace_runs, "median_ns", round(median * 100) / 100);
	if (r->pace_reference > 0) {
		json_object_set_new(o, "reference_ns", json_real(round(r->pace_reference * 100) / 100));
		json_object_set_new(o, "ratio", json_real(round(median / r->pace_reference * 1000) / 1000));
		*ret_moved = host_pace_moved(median, r->pace_reference);
	}
	return o;
}

json_t *report_result(const struct report *r, const struct calib_params *p)
{
	json_t *path = json_array(), *res;
	bool bottleneck = r->stop_action == CALIB_COMMIT && r->stop_node >= 0;
	int chain[TREE_MAX_DEPTH + 1], n = 0, i, idx;
	_cleanup_free_ char *summary = NULL, *behind = NULL, *both = NULL, *woken = NULL;
	_cleanup_free_ char *moved = NULL;
	json_auto_t *waited_for = NULL;
	json_t *pace = pace_of(r, &moved);

	for (idx = bottleneck ? r->stop_node : -1; idx >= 0 && n <= TREE_MAX_DEPTH;
	     idx = r->tree->nodes[idx].parent)
		chain[n++] = idx;
	for (i = n - 1; i >= 0; i--)
		json_array_append_new(path, json_string(r->tree->nodes[chain[i]].id));

	if (bottleneck && json_array_size(r->rq_holders) > 0 && path_waits(r, chain, n)) {
		_cleanup_free_ char *list = tasks_text(NULL, r->rq_holders, "idle, or not visible");
		_cleanup_free_ char *cover = coverage_text(r->rq_holders, r->rq_holders_total,
							   "lost to other tasks");

		behind = xasprintf("%s%s", list, cover);
	}
	if (r->causes)
		both = causes_text(r->causes);
	if (bottleneck && r->wakers) {
		waited_for = node_wakers(r, r->stop_node);
		if (json_array_size(waited_for) > 0) {
			_cleanup_free_ char *list = tasks_text(r->tree, waited_for, "not visible");
			json_int_t unkept = json_integer_value(
			    json_object_get(r->wakers_total, "unkept_waits"));

			woken = unkept > 0 ? xasprintf("%s (and %lld waits ended by tasks met when "
						       "the probe's table of them was full, not "
						       "named)",
						       list, (long long)unkept)
					   : TAKE_PTR(list);
		}
	}
	if (bottleneck)
		summary = xasprintf("%s at %s%s. %s%s%s Why: %s%s%s%s%s%s",
				    r->unproven ? "Deviation" : "Bottleneck",
				    r->tree->nodes[r->stop_node].id,
				    tree_is_leaf(r->tree, r->stop_node) ? ""
									 : " (not narrowed to a leaf)",
				    r->tree->nodes[r->stop_node].description,
				    r->unproven ? " The slowdown was not established: " : "",
				    r->unproven ?: "", r->stop_reason ?: "",
				    behind ? ". Holding the CPU while its runqueue waits lost time: " : "",
				    behind ?: "", woken ? ". Its waits were ended by: " : "", woken ?: "",
				    both ?: "");
	else
		summary = xasprintf("No kernel bottleneck: %s", r->stop_reason ?: "");
	if (moved) {
		char *with = xasprintf("%s. Note: %s", summary, moved);

		free(summary);
		summary = with;
	}

	res = json_pack("{s:s,s:o,s:b,s:i,s:s,s:s,s:o,s:O,s:O,s:O,s:O,s:O,s:s,s:I,s:f,s:b}",
			"verdict",
			!bottleneck ? "no_bottleneck" : r->unproven ? "deviation" : "bottleneck",
			"path", path, "leaf",
			bottleneck && tree_is_leaf(r->tree, r->stop_node), "depth", n, "summary",
			summary, "reason", r->stop_reason ?: "", "evidence", evidence_of(r, path),
			"levels", r->levels, "unavailable", r->unavailable, "warnings", r->warnings,
			"overhead", r->overhead, "timings", r->timings, "agent", r->agent,
			"reference", (json_int_t)r->reference_id, "tau", p->tau, "calibrated",
			p->calibrated);
	json_object_set_new(res, "false_flag_rate", json_real(p->false_flag_rate));
	if (!bottleneck)
		json_object_set_new(res, "reason_code", json_string(r->stop_code ?: "unexplained"));
	if (behind)
		json_object_set(res, "waited_behind", r->rq_holders);
	if (woken)
		json_object_set(res, "waited_for", waited_for);
	if (bottleneck && r->causes)
		json_object_set(res, "causes", r->causes);
	if (pace)
		json_object_set_new(res, "host_pace", pace);
	return res;
}
