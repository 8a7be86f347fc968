/* SPDX-License-Identifier: MIT */
/*
 * The walk down the tree, as a pure state machine: given what a level's
 * run decided and what that run said about the levels above it, where the
 * walk goes next. No measuring, no logging, no globals; diagnose.c runs it.
 *
 * A level is measured, decided (calibrate.c or the agent) and checked
 * (descent_check); descent_next then returns one step:
 *   DESCENT_DESCEND    measure the children of the decided node
 *   DESCENT_REMEASURE  measure the same level once more
 *   DESCENT_CONFIRM    measure the same level once more: a leaf is named
 *                      only on two runs of its level
 *   DESCENT_STOP       the walk ends: commit to a node or abstain
 */
#pragma once

#include <stdbool.h>

#include "daemon/calibrate.h"
#include "daemon/tree.h"

/* What a deeper level's run said about the descent so far. */
enum descent_check {
	DESCENT_CHECK_CONFIRMED,   /* the decision stands on this run */
	DESCENT_CHECK_UNCONFIRMED, /* abstained: slower, but not significantly */
	DESCENT_CHECK_REFUTED,	   /* abstained: no slower than the reference runs */
	/*
	 * Slower, but none of the parent's children deviated: the parent's
	 * own deviation was not seen again in this run.
	 */
	DESCENT_CHECK_PARENT_ONLY,
};

struct descent {
	const struct tree *tree;
	int max_depth;	 /* 1..TREE_MAX_DEPTH */
	int level;	 /* the level measured next, 1-based */
	int parent;	 /* the node whose children it measures; -1 at level 1 */
	int confirming;	 /* the leaf a second run of its level must name again, or -1 */
	bool remeasured; /* the level's run is its second (after DESCENT_REMEASURE) */
	bool done;	 /* a DESCENT_STOP was returned */
};

enum descent_kind {
	DESCENT_DESCEND,
	DESCENT_REMEASURE,
	DESCENT_CONFIRM,
	DESCENT_STOP,
};

/* Why a descent that names nothing stopped: the result's "reason_code". */
enum descent_abstain {
	DESCENT_NAMED,			 /* not an abstention: a path was named */
	DESCENT_NOT_SLOWER,		 /* the target was not slower than its reference */
	DESCENT_UNEXPLAINED,		 /* slower, and no path explains the loss */
	DESCENT_TRANSIENT,		 /* the slowdown did not last while argusd looked */
	DESCENT_REFERENCE_NOISY,	 /* not slower, or not lasting, against a noisy reference */
	DESCENT_ABSTAIN_MAX,
};

struct descent_step {
	enum descent_kind kind;
	int level;		  /* the level whose decision this step follows */
	int node;		  /* STOP: the node named or -1; CONFIRM: the leaf; DESCEND: the parent */
	enum calib_action action; /* STOP: commit or abstain */
	char *why;		  /* the sentence for the trace or the report; NULL for DESCEND */
	enum descent_abstain abstain; /* STOP naming nothing: why; else DESCENT_NAMED */
};

/* max_depth outside 1..TREE_MAX_DEPTH means TREE_MAX_DEPTH. */
void descent_init(struct descent *ds, const struct tree *t, long long max_depth);

/*
 * Whether this run of the level is its first: nodes the kernel cannot
 * measure are reported once, not again on a remeasure or a confirmation.
 */
bool descent_first_run(const struct descent *ds);

/*
 * The check of a decision that calib_decide made (or would make) on the
 * same run: d is the level's decision, own the calibrated rule's own on
 * the run when d came from another agent and abstained (NULL: d is it).
 * Level 1 always confirms.
 */
enum descent_check descent_check(const struct descent *ds, const struct calib_decision *d,
				 const struct calib_decision *own);

/*
 * The level has no node the kernel can measure: the walk stops at its
 * parent (or names nothing at level 1). Fills *ret; release with
 * descent_step_clear.
 */
void descent_nothing_measurable(struct descent *ds, struct descent_step *ret);

/*
 * The step after the level's decision d and its check. Advances *ds and
 * fills *ret (release with descent_step_clear). Returns 0, or -EINVAL when
 * the walk is already done or d names no node where the step needs one.
 */
int descent_next(struct descent *ds, const struct calib_decision *d, enum descent_check check,
		 struct descent_step *ret);

void descent_step_clear(struct descent_step *s);

const char *descent_kind_name(enum descent_kind k);
/* "not_slower", "unexplained", "transient", "reference_noisy"; NULL for DESCENT_NAMED. */
const char *descent_abstain_code(enum descent_abstain a);
