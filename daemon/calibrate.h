/* SPDX-License-Identifier: MIT */
/*
 * Reference calibration and the decision of one level: pure functions, no
 * logging, no globals. Where the walk goes after a level is descent.h.
 *
 * score: z = (pmv - centre) / spread. The centre and the noise are the mean
 * and the standard deviation of the K reference runs, with five runs or more
 * after the one farthest from their median is set aside (a trimmed
 * estimate), so that one run that something else on the machine disturbed
 * moves neither. A metric is flagged when z >
 * tau (only increases: a path doing less work is not a bottleneck), where
 *
 *   spread = max(rel_floor * |centre|, abs_floor, noise * threshold / tau)
 *
 * The floors are the smallest change worth naming, so that a near-zero
 * noise cannot make a tiny change look huge. threshold is how many noises a
 * value of an unchanged target stays under, with probability 1 -
 * false_flag_rate / (the metrics tested at the level), given that the noise
 * was estimated from only K runs (calib_null_for): the fewer the runs and
 * the more the metrics, the larger it is, and never below tau.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "daemon/mvec.h"
#include "daemon/tree.h"

struct calib_params {
	double tau;	      /* flag threshold, default 3 */
	double rel_floor;     /* spread floor relative to the centre, default 0.05 */
	double count_floor;   /* absolute spread floor for counts, default 20 events */
	double time_floor_ns; /* absolute spread floor for times, default 2 ms */
	/*
	 * What "slower" means, default 0.10: the relative increase of the
	 * target's wall time, or of a service's SLI (its cost), beyond tau
	 * spreads, that is needed to name a bottleneck. The matrix's truth rule
	 * (bench/eval/truth.json) calls a cell slower at the same 10%.
	 */
	double min_slowdown;
	/*
	 * Spread floor of the target's wall time, relative to its centre,
	 * default 0.01. Not rel_floor: with tau 3 a 5% floor would demand a
	 * 15% slowdown, beyond min_slowdown; the wall time's own sample
	 * spread is the noise that counts, and min_slowdown guards the rest.
	 */
	double wall_rel_floor;
	/*
	 * A deeper level's run whose wall time is less than refute_z spreads
	 * above the reference (default 1) sits with the reference runs: it
	 * speaks against the slowdown rather than failing to show it, and is
	 * not measured again.
	 */
	double refute_z;
	/*
	 * A path explains a slowdown only when the time it added (value -
	 * centre) is at least min_share of the time the target lost
	 * (calib_decision.loss: the time its wall added, or what a service's
	 * worse SLI cost it per unit of its work), default 0.10. A path that
	 * deviates but took a few percent of the lost time is not where the
	 * time went: naming it would send the engineer to the wrong place. A
	 * path must also have added at least min_slowdown of the reference's
	 * wall time (calib_decision.material), a slowdown of its own.
	 */
	double min_share;
	/*
	 * Two causes: when the node named and another flagged node each took at
	 * least cause_share of the target's added wall time (default 0.30), the
	 * decision names the other too (calib_decision.also); the descent still
	 * follows the first, which ranks higher.
	 */
	double cause_share;
	/*
	 * A service judged by its SLI ("target/sli_cost", larger is worse):
	 * the SLI's spread floor relative to its centre (default 0.02).
	 */
	double sli_rel_floor;
	/*
	 * The chance that a level of an unchanged target flags any of its path
	 * metrics on noise alone, default 0.05: divided among the metrics
	 * tested (Bonferroni), each metric's share sets its threshold for the
	 * number of reference runs. The target's own wall time (or SLI) is one
	 * test of its own. 0: a fixed threshold of tau noises.
	 */
	double false_flag_rate;
	/*
	 * The part of false_flag_rate this decision may spend (default 1; 0
	 * reads as 1): a level measured again after an ambiguous run
	 * (diagnose.c) spends the rate in parts, one per look, that add up to
	 * it, so that an unchanged target is flagged on any of the looks with
	 * at most false_flag_rate.
	 */
	double look_share;
	/*
	 * The measured vector is the mean of this many runs of the level
	 * (default 1; 0 reads as 1): each metric's noise is the reference
	 * runs' over sqrt(runs), and its threshold is that of such a mean.
	 */
	size_t runs;
	/*
	 * Below level 1: how much the run outside the node this level descends
	 * from had slowed at the level above (calib_rest_ratio of its
	 * decision; 0, the default: none). A path's expected time grows at
	 * most by it. A level measures only its node's subtree, so the rest of
	 * its run holds the paths outside, unmeasured: their growth (waits
	 * behind a CPU hog, idle threads that the level above told apart)
	 * would pass for a slowdown of everything and discount the subtree's
	 * paths by it.
	 */
	double rest_above;
	/*
	 * true (the default): the trimmed estimate above. false: the mean and
	 * the sample standard deviation of all K runs, as before, for the
	 * false-flag bench's side-by-side and the references' comparison.
	 */
	bool robust;
	/*
	 * false: the ablation, every rule as calibrated (gate, floors, shares,
	 * confirmations) with the reference runs' spread left out, so that a
	 * metric's spread is its floor.
	 */
	bool calibrated;
	/*
	 * What a path's metrics are divided by, when they are judged per unit of
	 * the target's work (a service's: "CPU-second of the service",
	 * "request"), to say so beside each value; NULL (the default): as
	 * measured.
	 */
	const char *per_unit;
	/*
	 * The unit is a request of the SLI's (a throughput's), so that the
	 * target's CPU time per unit is its work per request, and the
	 * absolute floors above, a CPU-second's, scale to a request's share of
	 * one; false for a CPU-second, which its CPU time per unit only
	 * restates.
	 */
	bool per_request;
};

void calib_params_default(struct calib_params *p);
/* The defaults with the configuration's tau, min_slowdown and false_flag_rate. */
struct config;
void calib_params_configured(struct calib_params *p, const struct config *cfg);

/*
 * What the score of K reference runs needs from a Gaussian null: the
 * noise's scale (the factor that makes the trimmed sd an unbiased estimate
 * of the standard deviation for k runs; 1 for the plain sample sd) and the
 * threshold on (value - centre) / noise that an
 * unchanged target exceeds with probability false_flag_rate / n_tests.
 * Found by a seeded simulation of k runs (the same numbers every call): the
 * chance that a fresh value passes centre + t x noise is averaged over the
 * simulated references in closed form, and t is bisected. threshold is at
 * least tau; it is tau when false_flag_rate is 0 or k < 2.
 */
struct calib_null {
	double noise_scale;
	double threshold;
};

void calib_null_for(const struct calib_params *p, size_t k, size_t n_tests,
		    struct calib_null *ret);

struct calib_score {
	char *metric; /* "kernel_paging.anon_fault/count" */
	double centre, spread, value, delta, z;
	/* the reference runs' own noise, and the z on it that flags (see above) */
	double noise, threshold;
	/*
	 * Time metrics of a slower workload: what this path would take had it
	 * slowed only as much as the rest of the run (centre x that ratio, see
	 * calib_decide); z is measured from it. 0 when not applied.
	 */
	double expected;
	/*
	 * Time metrics of a slower workload: delta / the target's added wall
	 * time. NAN when not applied (counts, no wall time, not slower).
	 */
	double share;
	bool flagged;
};

/*
 * Score one metric from its K reference values (k >= 1) and the perturbed
 * value: centre and spread as above (noise 0 when k == 1), with null from
 * calib_null_for(p, k, the metrics tested with it), or NULL for a metric
 * tested alone. z = delta / spread, flagged = z > tau. A non-finite input
 * is reported, never flagged. ret->metric is a copy of metric (freed by
 * calib_decision_free, or by the caller for a lone score).
 *
 * Without calibration (p->calibrated false, the ablation) the noise is
 * still reported, but the spread is the floor alone.
 */
void calib_score_metric(const struct calib_params *p, const struct calib_null *null,
			const char *metric, bool is_time, const double *ref, size_t k, double value,
			struct calib_score *ret);

/*
 * How much metric varies over n runs (those that have it, finite): the
 * noise a score sees in them (calib_score_metric: robust when p->robust,
 * scaled as the null is) over the magnitude of their centre, before any
 * floor. 0 with fewer than two runs or a centre of 0. What a reference's
 * agreement is judged by (reference.c, diagnose.c).
 */
double calib_runs_cv(const struct calib_params *p, const struct mvec *runs, size_t n,
		     const char *metric);

/* The median of n values (n >= 1), sorting v. */
double calib_median_sorting(double *v, size_t n);

/*
 * The target's slowdown in pmv against the k reference runs, scored as
 * calib_decide scores it at level 1: its wall time, or a service's SLI
 * cost; flagged when slower beyond tau spreads and min_slowdown. 0, or
 * -ENOENT for a target with neither (ret->metric is then NULL). The caller
 * frees ret->metric.
 */
int calib_score_wall(const struct calib_params *p, const struct mvec *ref, size_t k,
		     const struct mvec *pmv, struct calib_score *ret);

enum calib_action {
	CALIB_ABSTAIN, /* nothing deviates (or the target is not slower): no_bottleneck */
	CALIB_DESCEND, /* a flagged inner node: probe its children next */
	CALIB_COMMIT,  /* a flagged leaf, or a flagged parent whose children show nothing */
};

const char *calib_action_name(enum calib_action a);

/* Why a level decided as it did: the decision's sentence is rendered from it. */
enum calib_why {
	CALIB_WHY_NONE,		      /* (no decision yet) */
	CALIB_WHY_NOT_REPRODUCED,     /* abstain: a deeper level's run is not slower */
	CALIB_WHY_NOT_SLOWER,	      /* abstain at level 1: the target is not slower */
	CALIB_WHY_BELOW_MIN_SLOWDOWN, /* ... beyond tau spreads, but under min_slowdown */
	CALIB_WHY_LEAF,		      /* commit: the top flagged node is a leaf */
	CALIB_WHY_INNER,	      /* descend into the top flagged node */
	CALIB_WHY_CHILDREN_FLAT,      /* commit to parent: none of its children flagged */
	CALIB_WHY_UNEXPLAINED,	      /* abstain: slower, a path deviated, none took its share */
	CALIB_WHY_NO_DEVIATION,	      /* abstain: no path deviates */
	CALIB_WHY_MAX,
};

/* "not_reproduced", "leaf", ...: stable names for the trace and tests. */
const char *calib_why_name(enum calib_why w);

struct calib_decision {
	enum calib_action action;
	enum calib_why why;
	int node;     /* tree index: the node to descend into or commit to; -1 when abstaining */
	char *reason; /* one sentence for the trace and the report */
	struct calib_score *scores; /* every scored metric of the level, in node order */
	size_t n_scores;
	bool unconfirmed; /* abstaining because this deeper level's run was not slower */
	bool refuted;	  /* ... and not even refute_z spreads slower: not worth measuring again */
	/* the evidence deviated but took less than min_share of the loss, or added less than material */
	bool dismissed;
	int wall;	  /* index in scores[] of "target/wall_ns" (or of the SLI), -1 without */
	bool wall_is_sli; /* the slowdown is the service's SLI, not a wall time */
	/*
	 * The wall time is flagged though within the reference's spread: the
	 * index in scores[] of the path's time that shows the loss (see the
	 * rule below); -1 when the wall time stands on its own z.
	 */
	int slower_by;
	/*
	 * The time the slower target lost, that a path's share is of: the wall
	 * time's delta, or what a service's SLI's change cost it at the least,
	 * per unit of its work ("target/unit_cpu_ns" times the SLI's relative
	 * change in cost); NAN when the target is not slower or nothing says.
	 */
	double loss;
	/*
	 * The least time a path must add to be named, by itself a slowdown of
	 * min_slowdown: that part of the reference's wall time, or of a
	 * service's CPU time per unit of its work ("target/unit_cpu_ns"); also
	 * where the target is not slower (why NOT_SLOWER), for the path its
	 * sentence says deviated all the same; 0 when nothing says.
	 */
	double material;
	/*
	 * How much less CPU time the target took than in its reference (1 -
	 * now / centre), where the slowdown rests on a path while the wall
	 * grew by less than min_slowdown; NAN otherwise.
	 */
	double cpu_fall;
	/*
	 * A slower target that no path explained (why UNEXPLAINED, or
	 * NO_DEVIATION with its wall time flagged): how much more CPU time it
	 * took than in its reference (perf/task_clock_ns, now minus centre;
	 * a service's per unit of its work), which says whether the loss went
	 * to work on the CPU or to waits the tree does not cover; NAN
	 * otherwise, or without its CPU time.
	 */
	double cpu_added;
	double sys_added; /* of it, in the kernel ("target/sys_ns"); NAN when not known */
	/*
	 * The same for a service judged by its SLI: how much more of each
	 * second its threads slept idle, waiting for work ("class/wait_idle",
	 * summed over its threads; idle_share now and its reference's centre),
	 * and that growth per unit of its work now (idle_added), which can say
	 * that the loss went outside the service. Per second and not per
	 * unit, since threads that wait for work the whole time (a pool
	 * larger than its load) wait longer per unit whenever fewer units are
	 * done, for whatever reason; and per thread of the service, the
	 * reference's rate taken for as many threads as there are now (tasks,
	 * and the reference's centre tasks_ref: "target/threads", over the
	 * window), since a service that started a thread or a process for
	 * another client (a database's backend for a connection) sleeps longer
	 * in all for no slower work. Per process at the window's end where a
	 * side did not count its threads (tasks_are says which). NAN when not
	 * known.
	 */
	double idle_share, idle_share_ref, idle_added;
	double tasks, tasks_ref;
	const char *tasks_are; /* "threads" or "processes" */
	int evidence;	  /* index in scores[] of the metric the decision rests on
			   * (the top node's deciding metric, the wall time of a
			   * gate abstention, else the largest z); -1 when none */
	/*
	 * A second cause (params.cause_share): has_also, the node (tree index)
	 * and the index in scores[] of its flagged time metric.
	 */
	bool has_also;
	int also, also_evidence;
	/*
	 * The path ranked first explained less than half of the loss and
	 * another path, not flagged, grew by more than its excess: which of
	 * them took the time is not shown, and neither is named. outgrown_by
	 * is that path's time score in scores[]; evidence is the first's.
	 */
	bool outgrown;
	int outgrown_by;
	/*
	 * The growth of the run without the paths that did other work (whose
	 * counts grew: each is judged against its own reference), at most
	 * rest_above; 1 when the run was not slower (calib_rest_ratio).
	 */
	double rest_others;
};

/*
 * The decision for one level. active[] are the level's nodes; parent is the
 * node flagged at the level above (-1 at level 1). ref[0..k) are the
 * reference runs, pmv the perturbed run; both hold "<node>/<metric>" (the
 * metrics the node declares), "target/wall_ns" and, from the built-in
 * probe, "target/thread_ns". A metric absent from the PMV or from any
 * reference run is not scored and cannot flag.
 *
 * Scores: every scored metric of every active node in node and declaration
 * order, then "target/wall_ns" when present; for the wall time "flagged"
 * means the target is slower: a relative increase above min_slowdown, and
 * either z > tau or, where a noisy reference's spread hides it, a path's
 * flagged time whose excess (below) is itself at least min_slowdown of the
 * reference's wall time (slower_by): the loss is measured where it went.
 * A run whose wall grew by less than min_slowdown while the target's CPU
 * time ("perf/task_clock_ns") fell by at least min_slowdown (the reference
 * was recorded while it ran slow: cpu_fall) is slower where a path's
 * excess is twice min_slowdown of the reference's wall time, or of its
 * threads' lives summed when they are more; the loss is then at least
 * that excess.
 * A service's SLI worse by more than min_slowdown is shown the same way by
 * a path whose excess per unit of work is at least the SLI's loss (below),
 * when the service's CPU time per unit is known.
 *
 * Rule (calibrated): when the wall time is scored and the target is not
 * slower, abstain (a kernel path change that does not slow the target is not
 * worth naming; skipped without wall times, as for running targets). Each
 * level is a run of its own: below level 1 this means the slowdown did not
 * reproduce, and the decision is marked unconfirmed (the caller may measure
 * the level once more); refuted as well when the run's wall time is within
 * refute_z spreads of the reference (nothing to measure again: the run
 * looks like a reference run).
 * A path's time is judged against the slowdown of the rest of the run:
 * when the target's wall time grew, a time metric's z is taken from
 * centre x r_rest (score.expected), not from the centre, where
 * r_rest = (run - value) / (run_ref - centre), the growth of the run's time
 * outside the path, held between 1 and r = run / run_ref. The run's time is
 * "target/thread_ns" (every thread's life, summed) when the reference and
 * the run both have it, else the wall time; r_rest is r itself when the
 * path is not inside it. A path that only slowed with everything else (CPU
 * stolen by the host, a slower clock) grows as the rest does and is not
 * named; the path the added time went to outgrows the rest, even when it
 * is most of the run. A path whose count is flagged did other work, not
 * the same work slower, and its time is judged against its own centre. When the target is slower, a time metric must also
 * account for min_share of the loss (score.share; calib_decision.loss),
 * and add at least min_slowdown of the reference's wall time (of a
 * service's CPU time per unit: calib_decision.material), to be flagged:
 * a path that alone would not have made the target slower is not the
 * cause of a run slower for other reasons. A level left with nothing
 * flagged that way says which path deviated without explaining the
 * slowdown.
 *
 * A node is flagged when any of its metrics is. Flagged nodes rank first by
 * a flagged time_ns, largest excess over what the rest of the run predicts
 * (value - expected, or value - centre when nothing is predicted; in ns:
 * time is the target threads' exclusive time, so it compares across
 * nodes), then nodes whose time is not measured by a flagged count's z; ties
 * keep active[] order. Descend
 * into the top node, or commit to it at a leaf. No node flagged: commit to
 * parent when parent >= 0 (shallow but correct), else abstain.
 *
 * Uncalibrated (the ablation): the same rule, with every spread its floor
 * (calib_score_metric).
 *
 * p NULL means calib_params_default. Returns 0 and fills *ret, or -EINVAL
 * (bad index, k == 0, NULL vectors) / -ENOMEM; *ret is written only on
 * success and released with calib_decision_free.
 */
int calib_decide(const struct calib_params *p, const struct tree *t, const int *active,
		 size_t n_active, int parent, const struct mvec *ref, size_t k,
		 const struct mvec *pmv, struct calib_decision *ret);

/*
 * How much the run outside node (a tree index among the decision's) had
 * slowed at this level: the ratio its time's expected value was taken at,
 * or, for a path that did other work or whose time was not judged against
 * the rest of the run, the growth of the run without the paths that did
 * other work (rest_others); 1 when the run was not slower. What the next
 * level below node takes as params.rest_above, whichever agent chose node.
 */
double calib_rest_ratio(const struct calib_decision *d, const struct tree *t, int node);

/* Frees what *d holds (not d itself); NULL is fine. */
void calib_decision_free(struct calib_decision *d);

/*
 * [{"metric", "reference" (centre), "spread", "value", "delta", "z",
 * "flagged"}, plus "expected" and "share" where applied] in scores order;
 * non-finite numbers are null.
 */
json_t *calib_scores_to_json(const struct calib_decision *d);
