/* SPDX-License-Identifier: MIT */
/*
 * Reference calibration and the descent rule: pure functions, no logging,
 * no globals.
 *
 * score: z = (pmv - centre) / spread, where centre is the mean of the K
 * reference runs and spread = max(sample sd, rel_floor * |centre|, abs_floor)
 * so that a near-zero spread cannot make a tiny change look huge. A metric
 * is flagged when z > tau (only increases: a path doing less work is not a
 * bottleneck).
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
	double min_slowdown;  /* target wall-time increase needed to name a bottleneck, default 0.05 */
	bool calibrated;      /* false: ablation, raw deltas against the reference mean, no spread */
};

void calib_params_default(struct calib_params *p);

struct calib_score {
	char *metric; /* "kernel_paging.anon_fault/count" */
	double centre, spread, value, delta, z;
	bool flagged;
};

/*
 * Score one metric from its K reference values (k >= 1) and the perturbed
 * value. Without calibration (p->calibrated false) z is delta / max(|centre|, 1),
 * the relative change, compared against the same tau.
 */
void calib_score_metric(const struct calib_params *p, const char *metric, bool is_time,
			const double *ref, size_t k, double value, struct calib_score *ret);

enum calib_action {
	CALIB_ABSTAIN, /* nothing deviates (or the target is not slower): no_bottleneck */
	CALIB_DESCEND, /* a flagged inner node: probe its children next */
	CALIB_COMMIT,  /* a flagged leaf, or a flagged parent whose children show nothing */
};

const char *calib_action_name(enum calib_action a);

struct calib_decision {
	enum calib_action action;
	int node;	  /* tree index: the node to descend into or commit to; -1 when abstaining */
	char *reason;	  /* one sentence for the trace and the report */
	struct calib_score *scores; /* every scored metric of the level, in node order */
	size_t n_scores;
};

/*
 * The decision for one level. active[] are the level's nodes; parent is the
 * node flagged at the level above (-1 at level 1). ref[0..k) are the
 * reference runs, pmv the perturbed run; both hold "<node>/<metric>" and
 * "target/wall_ns". Rule: if the target's wall time did not rise by more
 * than tau spreads and min_slowdown, abstain (a kernel path change that does
 * not slow the target is not worth naming; skipped when the reference has no
 * wall time, as for running targets). Otherwise rank flagged nodes by their
 * largest z on time, then on count; descend into (or commit to, at a leaf)
 * the top one. No node flagged: commit to parent when parent >= 0 (shallow
 * but correct), else abstain.
 */
int calib_decide(const struct calib_params *p, const struct tree *t, const int *active,
		 size_t n_active, int parent, const struct mvec *ref, size_t k,
		 const struct mvec *pmv, struct calib_decision *ret);
void calib_decision_free(struct calib_decision *d);
json_t *calib_scores_to_json(const struct calib_decision *d);
