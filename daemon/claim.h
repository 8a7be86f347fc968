/* SPDX-License-Identifier: MIT */
/*
 * A remote agent's decision, checked against the tree and the evidence
 * before it counts (seeds/002: the model may cite only evidence ids that
 * exist and were given to it; code validates). Pure: no logging, no
 * globals.
 *
 * Evidence ids are "L<level>/<metric>", the ids of the report: one per
 * score the calibration computed at that level ("L2/kernel_paging.file_fault/time_ns",
 * "L1/target/wall_ns").
 */
#pragma once

#include <jansson.h>

#include "daemon/calibrate.h"
#include "daemon/tree.h"

#define CLAIM_MAX_EVIDENCE 32
#define CLAIM_RATIONALE_MAX 2000

struct claim_level {
	const struct tree *tree;
	int level;
	int parent; /* node descended into at the level above, -1 at level 1 */
	const int *active;
	size_t n_active;
	const struct calib_decision *calib; /* the calibration's decision for this level */
	/* every id given so far: {"L1/...": {"flagged": bool}, ...} */
	const json_t *given;
};

struct claim {
	enum calib_action action;
	int node;     /* -1 when abstaining */
	int evidence; /* index in calib->scores of the flagged metric the claim rests on, -1 */
};

/*
 * Check decide(action, node, evidence_ids, rationale) arguments:
 *   - action is descend, commit or abstain; evidence_ids 1..CLAIM_MAX_EVIDENCE
 *     strings, every one given to the model;
 *   - descend/commit: node is a tree node of the active subtree (commit to
 *     the parent is the fallback when nothing below it deviates), descend
 *     on an inner node, commit on a leaf; the calibration flags that node
 *     at this level (or flagged the parent at the level above, for the
 *     parent fallback) and the cited ids include such a flagged metric; not
 *     when the calibration abstains (nothing deviates, or at level 1 the
 *     target is not slower than its reference);
 *   - abstain: only when the calibration abstains too.
 * Returns 0 with *ret, or -EINVAL with *ret_err (malloc'ed) written for
 * the model: what is wrong and what is allowed.
 */
int claim_check(const struct claim_level *cl, const json_t *args, struct claim *ret,
		char **ret_err);

/* "L<level>/<metric>" (malloc'ed). */
char *claim_evidence_id(int level, const char *metric);
