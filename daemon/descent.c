// SPDX-License-Identifier: MIT
/*
 * The descent's state machine (descent.h). Every rule about where the walk
 * goes after a level lives here; calibrate.c decides a single level.
 */
#include "daemon/descent.h"
#include "daemon/util.h"

#include <errno.h>

void descent_init(struct descent *ds, const struct tree *t, long long max_depth)
{
	if (max_depth < 1 || max_depth > TREE_MAX_DEPTH)
		max_depth = TREE_MAX_DEPTH;
	*ds = (struct descent){ .tree = t, .max_depth = (int)max_depth, .level = 1, .parent = -1, .confirming = -1 };
}

bool descent_first_run(const struct descent *ds)
{
	return !ds->remeasured && ds->confirming < 0;
}

/*
 * Only a deeper level is checked: would the calibrated rule, on this run,
 * have confirmed the descent so far (whichever agent decided), or fallen
 * back on the parent because no child deviated?
 */
enum descent_check descent_check(const struct descent *ds, const struct calib_decision *d,
				 const struct calib_decision *own)
{
	if (ds->parent < 0)
		return DESCENT_CHECK_CONFIRMED;
	if (d->action == CALIB_COMMIT && d->node == ds->parent)
		return DESCENT_CHECK_PARENT_ONLY;
	if (d->action != CALIB_ABSTAIN)
		return DESCENT_CHECK_CONFIRMED;
	if (!d->unconfirmed && own)
		d = own;
	return !d->unconfirmed ? DESCENT_CHECK_CONFIRMED
	       : d->refuted    ? DESCENT_CHECK_REFUTED
			       : DESCENT_CHECK_UNCONFIRMED;
}

static int stop(struct descent *ds, struct descent_step *ret, int node, enum calib_action action,
		char *why)
{
	ret->kind = DESCENT_STOP;
	ret->node = node;
	ret->action = action;
	ret->why = why;
	ret->abstain = node < 0 ? DESCENT_UNEXPLAINED : DESCENT_NAMED;
	ds->done = true;
	return 0;
}

/*
 * Why a level's abstention names nothing, from the calibrated rule's reason
 * on the run. An agent that abstained where the rule would have gone on
 * (its reason is a path's): not slower, or slower and left unexplained.
 */
static enum descent_abstain level_abstain(const struct calib_decision *d)
{
	bool slower = d->wall >= 0 && (size_t)d->wall < d->n_scores && d->scores[d->wall].flagged;

	switch (d->why) {
	case CALIB_WHY_NOT_SLOWER:
	case CALIB_WHY_BELOW_MIN_SLOWDOWN:
		return DESCENT_NOT_SLOWER;
	case CALIB_WHY_NOT_REPRODUCED:
		return DESCENT_TRANSIENT;
	case CALIB_WHY_UNEXPLAINED:
		return DESCENT_UNEXPLAINED;
	default:
		return slower ? DESCENT_UNEXPLAINED : DESCENT_NOT_SLOWER;
	}
}

/* Again: the same level is measured once more. */
static int again(struct descent_step *ret, enum descent_kind kind, int node, char *why)
{
	ret->kind = kind;
	ret->node = node;
	ret->why = why;
	return 0;
}

void descent_nothing_measurable(struct descent *ds, struct descent_step *ret)
{
	*ret = (struct descent_step){ .level = ds->level };
	stop(ds, ret, ds->parent, CALIB_COMMIT,
	     xstrdup("no node below is measurable on this kernel"));
}

/*
 * A deeper level whose run was slower, but not significantly, did not
 * confirm the slowdown: a perturbation that comes and goes may simply have
 * paused. Nor did one whose children all stayed flat below a level-1 node.
 * Such a level is measured once more. A run as fast as the reference runs
 * is not ambiguous: it speaks against the slowdown, and a further run
 * would only give a passing disturbance a second chance.
 *
 * A slowdown must hold while argusd looks: when a deeper level's run is
 * not slower (twice, or once and as fast as the reference runs), it has
 * gone, and a path seen only while it lasted is not named, at any depth.
 * A slower run whose children all stayed flat commits to its parent when
 * two runs agree on the parent: a node at level 2 or deeper, flagged in a
 * run that itself confirmed the node above; or any parent when this run
 * confirms a leaf another run of its level named. A level-1 node rests on
 * the level-1 run alone: if its children stay flat twice, nothing is named.
 */
static bool measure_again(const struct descent *ds, enum descent_check check, bool *ret_abstain)
{
	const struct tree *t = ds->tree;
	bool parent_agreed = (ds->parent >= 0 && t->nodes[ds->parent].level >= 2) ||
			     ds->confirming >= 0;

	*ret_abstain = false;
	switch (check) {
	case DESCENT_CHECK_CONFIRMED:
		return false;
	case DESCENT_CHECK_REFUTED:
		*ret_abstain = true;
		return false;
	case DESCENT_CHECK_PARENT_ONLY:
		if (parent_agreed)
			return false;
		/* fall through */
	case DESCENT_CHECK_UNCONFIRMED:
		*ret_abstain = ds->remeasured;
		return !ds->remeasured;
	}
	return false;
}

static char *abstain_why(const struct descent *ds, const struct calib_decision *d,
			 enum descent_check check)
{
	const struct tree *t = ds->tree;

	if (check == DESCENT_CHECK_PARENT_ONLY)
		return xasprintf("%s deviated in the level-1 run, but none of its children did in "
				 "two runs of level %d: a subsystem seen in one run is not named",
				 t->nodes[ds->parent].id, ds->level);
	return xasprintf("%s%s%s%s: the slowdown did not last, and no path is named on the runs "
			 "that saw it",
			 d->reason ?: "", ds->remeasured ? ", nor in the run before it" : "",
			 ds->confirming >= 0 ? ", which was to confirm " : "",
			 ds->confirming >= 0 ? t->nodes[ds->confirming].id : "");
}

int descent_next(struct descent *ds, const struct calib_decision *d, enum descent_check check,
		 struct descent_step *ret)
{
	const struct tree *t = ds->tree;
	bool abstain;

	*ret = (struct descent_step){ .level = ds->level, .node = -1 };
	if (ds->done || (d->action != CALIB_ABSTAIN && (d->node < 0 || (size_t)d->node >= t->n_nodes)))
		return -EINVAL;
	if (d->action == CALIB_DESCEND && ds->level == ds->max_depth)
		return stop(ds, ret, d->node, CALIB_COMMIT,
			    xstrdup("maximum depth reached: committing to the flagged node"));
	if (measure_again(ds, check, &abstain)) {
		ds->remeasured = true;
		return again(ret, DESCENT_REMEASURE, ds->parent,
			     xstrdup(check == DESCENT_CHECK_PARENT_ONLY
					 ? "none of the children deviated: measuring the level "
					   "once more"
					 : "this level's run was not slower than the reference: "
					   "measuring it once more"));
	}
	if (abstain) {
		stop(ds, ret, -1, CALIB_ABSTAIN, abstain_why(ds, d, check));
		/* children flat twice below a subsystem: slower, and nothing below explains it */
		ret->abstain =
		    check == DESCENT_CHECK_PARENT_ONLY ? DESCENT_UNEXPLAINED : DESCENT_TRANSIENT;
		return 0;
	}
	if (ds->confirming >= 0) {
		/*
		 * The second run of a leaf's level, slower again: the leaf stands
		 * if it names it again; otherwise the two runs agree only on
		 * their parent.
		 */
		int leaf = ds->confirming;

		if (d->action == CALIB_COMMIT && d->node == leaf)
			return stop(ds, ret, leaf, CALIB_COMMIT,
				    xasprintf("%s; the run before named it too", d->reason ?: ""));
		return stop(ds, ret, ds->parent, CALIB_COMMIT,
			    xasprintf("two runs of level %d named different paths (%s, then %s): "
				      "committing to %s, which both confirm",
				      ds->level, t->nodes[leaf].id,
				      d->node >= 0 ? t->nodes[d->node].id : "none",
				      t->nodes[ds->parent].id));
	}
	if (d->action == CALIB_COMMIT && ds->parent >= 0 &&
	    tree_is_leaf(t, d->node)) {
		/* A leaf is named on two runs of its level, as every node above it was. */
		ds->confirming = d->node;
		return again(ret, DESCENT_CONFIRM, d->node,
			     xstrdup("a leaf is named on two runs: measuring the level once more"));
	}
	if (d->action != CALIB_DESCEND) {
		stop(ds, ret, d->node, d->action, xstrdup(d->reason ?: ""));
		if (d->action == CALIB_ABSTAIN)
			ret->abstain = level_abstain(d);
		return 0;
	}
	ds->parent = d->node;
	ds->remeasured = false;
	ds->level++;
	ret->kind = DESCENT_DESCEND;
	ret->node = d->node;
	return 0;
}

void descent_step_clear(struct descent_step *s)
{
	free(s->why);
	*s = (struct descent_step){};
}

const char *descent_abstain_code(enum descent_abstain a)
{
	static const char *const codes[] = {
	    [DESCENT_NAMED] = NULL,
	    [DESCENT_NOT_SLOWER] = "not_slower",
	    [DESCENT_UNEXPLAINED] = "unexplained",
	    [DESCENT_TRANSIENT] = "transient",
	    [DESCENT_REFERENCE_NOISY] = "reference_noisy",
	};
	_Static_assert(ARRAY_SIZE(codes) == DESCENT_ABSTAIN_MAX, "a code for every abstention");

	return (unsigned)a < ARRAY_SIZE(codes) ? codes[a] : NULL;
}

const char *descent_kind_name(enum descent_kind k)
{
	switch (k) {
	case DESCENT_DESCEND:
		return "descend";
	case DESCENT_REMEASURE:
		return "remeasure";
	case DESCENT_CONFIRM:
		return "confirm";
	case DESCENT_STOP:
		return "stop";
	}
	return "?";
}
