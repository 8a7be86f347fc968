// SPDX-License-Identifier: MIT
/* The descent's state machine, walked over the real tree with decisions given by hand. */
#include "daemon/descent.h"
#include "daemon/util.h"
#include "tests/tap.h"
#include "tests/tree-fixture.h"

#include <errno.h>
#include <string.h>

static const struct tree *t;

static int node(const char *id)
{
	int i = tree_find(t, id);

	REQUIRE(i >= 0);
	return i;
}

static struct calib_decision decision(enum calib_action action, const char *id)
{
	return (struct calib_decision){ .action = action, .node = id ? node(id) : -1,
					.reason = (char *)"the level's reason" };
}

/* An abstention because a deeper level's run was slower, but not significantly (refuted: not slower at all). */
static struct calib_decision unconfirmed(bool refuted)
{
	struct calib_decision d = decision(CALIB_ABSTAIN, NULL);

	d.unconfirmed = true;
	d.refuted = refuted;
	return d;
}

/* Feed d, checked as the calibrated rule would, and return the step's kind; *ret_step keeps the step. */
static enum descent_kind step(struct descent *ds, struct calib_decision d,
			      struct descent_step *ret_step)
{
	REQUIRE(descent_next(ds, &d, descent_check(ds, &d, NULL), ret_step) == 0);
	return ret_step->kind;
}

static void expect_stop_code(const struct descent_step *s, enum calib_action action,
			     const char *id, const char *why_part, enum descent_abstain code)
{
	CHECK_EQ(s->kind, DESCENT_STOP, "kind");
	CHECK_EQ(s->abstain, code, "abstain");
	CHECK_STREQ(descent_abstain_code(s->abstain) ?: "(named)",
		    descent_abstain_code(code) ?: "(named)", "reason_code");
	CHECK_EQ(s->action, action, "action");
	CHECK_STREQ(s->node >= 0 ? t->nodes[s->node].id : "(none)", id ?: "(none)", "node");
	CHECKF(s->why && strstr(s->why, why_part), "why \"%s\" lacks \"%s\"", s->why ?: "",
	       why_part);
}

/* A stop that names a path. */
static void expect_stop(const struct descent_step *s, enum calib_action action, const char *id,
			const char *why_part)
{
	expect_stop_code(s, action, id, why_part, DESCENT_NAMED);
}

/* The common start: level 1 flags kernel_paging, level 2 anon_fault. */
static void walk_to_leaf_level(struct descent *ds)
{
	struct descent_step s;

	CHECK_EQ(step(ds, decision(CALIB_DESCEND, "kernel_paging"), &s), DESCENT_DESCEND, "l1");
	descent_step_clear(&s);
	CHECK_EQ(step(ds, decision(CALIB_DESCEND, "kernel_paging.anon_fault"), &s), DESCENT_DESCEND,
		 "l2");
	descent_step_clear(&s);
	CHECK_EQ(ds->level, 3, "level");
	CHECK_EQ(ds->parent, node("kernel_paging.anon_fault"), "parent");
}

static void test_max_depth(void)
{
	struct descent ds;
	struct descent_step s;
	int depth;

	tap_subtest("max_depth");
	/* A descent at the deepest allowed level commits to the node it flagged. */
	for (depth = 1; depth <= 2; depth++) {
		descent_init(&ds, t, depth);
		CHECK_EQ(step(&ds, decision(CALIB_DESCEND, "kernel_paging"), &s),
			 depth == 1 ? DESCENT_STOP : DESCENT_DESCEND, "level 1");
		if (depth == 2) {
			descent_step_clear(&s);
			step(&ds, decision(CALIB_DESCEND, "kernel_paging.anon_fault"), &s);
		}
		expect_stop(&s, CALIB_COMMIT, depth == 1 ? "kernel_paging" : "kernel_paging.anon_fault",
			    "maximum depth reached");
		CHECK(ds.done);
		descent_step_clear(&s);
	}
	/* Out of range means the tree's depth. */
	descent_init(&ds, t, 0);
	CHECK_EQ(ds.max_depth, TREE_MAX_DEPTH, "max_depth 0");
	descent_init(&ds, t, 99);
	CHECK_EQ(ds.max_depth, TREE_MAX_DEPTH, "max_depth 99");
	/* The walk is over: no further step. */
	descent_init(&ds, t, 1);
	step(&ds, decision(CALIB_ABSTAIN, NULL), &s);
	expect_stop_code(&s, CALIB_ABSTAIN, NULL, "the level's reason", DESCENT_NOT_SLOWER);
	descent_step_clear(&s);
	{
		struct calib_decision d = decision(CALIB_ABSTAIN, NULL);

		CHECK_EQ(descent_next(&ds, &d, DESCENT_CHECK_CONFIRMED, &s), -EINVAL, "after stop");
	}
}

/* A leaf is named only when two runs of its level name it. */
static void test_confirm_leaf(void)
{
	struct descent ds;
	struct descent_step s;

	tap_subtest("confirm_leaf");
	descent_init(&ds, t, 3);
	walk_to_leaf_level(&ds);
	CHECK(descent_first_run(&ds));
	CHECK_EQ(step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.minor"), &s),
		 DESCENT_CONFIRM, "first run");
	CHECK_EQ(s.level, 3, "confirm level");
	CHECK_STREQ(t->nodes[s.node].id, "kernel_paging.anon_fault.minor", "confirm node");
	descent_step_clear(&s);
	CHECK_EQ(ds.level, 3, "same level");
	CHECK(!descent_first_run(&ds));
	step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.minor"), &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_paging.anon_fault.minor", "the run before named it too");
	descent_step_clear(&s);

	/* The second run names another leaf: only their parent is confirmed. */
	descent_init(&ds, t, 3);
	walk_to_leaf_level(&ds);
	step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.minor"), &s);
	descent_step_clear(&s);
	step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.cow"), &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_paging.anon_fault",
		    "two runs of level 3 named different paths (kernel_paging.anon_fault.minor, then "
		    "kernel_paging.anon_fault.cow)");
	descent_step_clear(&s);

	/* The second run is not slower: the slowdown did not last, nothing is named. */
	descent_init(&ds, t, 3);
	walk_to_leaf_level(&ds);
	step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.minor"), &s);
	descent_step_clear(&s);
	step(&ds, unconfirmed(true), &s);
	expect_stop_code(&s, CALIB_ABSTAIN, NULL, "which was to confirm kernel_paging.anon_fault.minor",
			 DESCENT_TRANSIENT);
	descent_step_clear(&s);

	/* A leaf named at level 2 (a path without children) is confirmed the same way. */
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_DESCEND, "kernel_scheduler"), &s);
	descent_step_clear(&s);
	CHECK_EQ(step(&ds, decision(CALIB_COMMIT, "kernel_scheduler.runqueue_wait"), &s),
		 DESCENT_CONFIRM, "level-2 leaf");
	descent_step_clear(&s);
	/*
	 * Its second run falls back on the level-1 parent: the two runs agree
	 * on that parent, so it is named although one run alone rests on it.
	 */
	step(&ds, decision(CALIB_COMMIT, "kernel_scheduler"), &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_scheduler",
		    "(kernel_scheduler.runqueue_wait, then kernel_scheduler): committing to "
		    "kernel_scheduler");
	descent_step_clear(&s);

	/* Level 1 commits without a second run. */
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_COMMIT, "kernel_scheduler"), &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_scheduler", "the level's reason");
	descent_step_clear(&s);
}

/* Slower, but not significantly: measured once more; twice, and nothing is named. */
static void test_remeasure(void)
{
	struct descent ds;
	struct descent_step s;

	tap_subtest("remeasure");
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_DESCEND, "kernel_paging"), &s);
	descent_step_clear(&s);
	CHECK_EQ(step(&ds, unconfirmed(false), &s), DESCENT_REMEASURE, "first");
	CHECK_STREQ(s.why, "this level's run was not slower than the reference: measuring it once more",
		    "why");
	CHECK_EQ(s.level, 2, "level");
	descent_step_clear(&s);
	CHECK(ds.remeasured && ds.level == 2);
	step(&ds, unconfirmed(false), &s);
	expect_stop_code(&s, CALIB_ABSTAIN, NULL, ", nor in the run before it", DESCENT_TRANSIENT);
	descent_step_clear(&s);

	/* The second run confirms: the walk goes on, and a later level gets its own second run. */
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_DESCEND, "kernel_paging"), &s);
	descent_step_clear(&s);
	step(&ds, unconfirmed(false), &s);
	descent_step_clear(&s);
	CHECK_EQ(step(&ds, decision(CALIB_DESCEND, "kernel_paging.file_fault"), &s), DESCENT_DESCEND,
		 "after remeasure");
	descent_step_clear(&s);
	CHECK(!ds.remeasured && ds.level == 3);
	CHECK_EQ(step(&ds, unconfirmed(false), &s), DESCENT_REMEASURE, "level 3");
	descent_step_clear(&s);
}

/* A run as fast as the reference speaks against the slowdown: no second chance. */
static void test_refuted(void)
{
	struct descent ds;
	struct descent_step s;
	struct calib_decision own = unconfirmed(true), d = decision(CALIB_ABSTAIN, NULL);

	tap_subtest("refuted");
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_DESCEND, "kernel_paging"), &s);
	descent_step_clear(&s);
	/* Another agent abstained; the calibrated rule, asked of the same run, refutes. */
	CHECK_EQ(descent_check(&ds, &d, &own), DESCENT_CHECK_REFUTED, "check");
	CHECK_EQ(descent_check(&ds, &d, NULL), DESCENT_CHECK_CONFIRMED, "no own decision");
	REQUIRE(descent_next(&ds, &d, DESCENT_CHECK_REFUTED, &s) == 0);
	expect_stop_code(&s, CALIB_ABSTAIN, NULL, "the slowdown did not last", DESCENT_TRANSIENT);
	descent_step_clear(&s);
	/* At level 1 every decision is taken as it comes. */
	descent_init(&ds, t, 3);
	CHECK_EQ(descent_check(&ds, &d, &own), DESCENT_CHECK_CONFIRMED, "level 1");
}

/* Children flat below their parent. */
static void test_parent_only(void)
{
	struct descent ds;
	struct descent_step s;
	struct calib_decision d;

	tap_subtest("parent_only");
	/* Below a level-1 node, which rests on one run: once more, then nothing. */
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_DESCEND, "kernel_sync"), &s);
	descent_step_clear(&s);
	d = decision(CALIB_COMMIT, "kernel_sync");
	CHECK_EQ(descent_check(&ds, &d, NULL), DESCENT_CHECK_PARENT_ONLY, "check");
	CHECK_EQ(step(&ds, d, &s), DESCENT_REMEASURE, "first");
	CHECK_STREQ(s.why, "none of the children deviated: measuring the level once more", "why");
	descent_step_clear(&s);
	step(&ds, d, &s);
	expect_stop_code(&s, CALIB_ABSTAIN, NULL,
			 "kernel_sync deviated in the level-1 run, but none of its children did in "
			 "two runs of level 2",
			 DESCENT_UNEXPLAINED);
	descent_step_clear(&s);

	/* Below a level-2 node two runs agree on: the commit to it stands at once. */
	descent_init(&ds, t, 3);
	walk_to_leaf_level(&ds);
	step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault"), &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_paging.anon_fault", "the level's reason");
	descent_step_clear(&s);
}

/*
 * A running target has no wall time, so the calibrated rule never calls
 * a run unconfirmed: its walk is driven by what deviates alone, and its
 * leaf still needs two runs.
 */
static void test_running_target(void)
{
	struct descent ds;
	struct descent_step s;

	tap_subtest("running_target");
	descent_init(&ds, t, 3);
	walk_to_leaf_level(&ds);
	CHECK_EQ(step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.thp"), &s),
		 DESCENT_CONFIRM, "first run");
	descent_step_clear(&s);
	step(&ds, decision(CALIB_COMMIT, "kernel_paging.anon_fault.thp"), &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_paging.anon_fault.thp", "named it too");
	descent_step_clear(&s);
	/* Nothing deviates at level 1: the walk ends there, naming nothing. */
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_ABSTAIN, NULL), &s);
	expect_stop_code(&s, CALIB_ABSTAIN, NULL, "the level's reason", DESCENT_NOT_SLOWER);
	descent_step_clear(&s);
}

/* Why a level-1 abstention names nothing, from the calibrated rule's reason on its run. */
static void test_reason_codes(void)
{
	static const struct {
		enum calib_why why;
		bool slower;
		enum descent_abstain code;
	} cases[] = {
	    {CALIB_WHY_NOT_SLOWER, false, DESCENT_NOT_SLOWER},
	    {CALIB_WHY_BELOW_MIN_SLOWDOWN, false, DESCENT_NOT_SLOWER},
	    {CALIB_WHY_UNEXPLAINED, true, DESCENT_UNEXPLAINED},
	    {CALIB_WHY_NO_DEVIATION, true, DESCENT_UNEXPLAINED},
	    {CALIB_WHY_NO_DEVIATION, false, DESCENT_NOT_SLOWER},
	    /* an agent that abstained where the rule named a leaf */
	    {CALIB_WHY_LEAF, true, DESCENT_UNEXPLAINED},
	    {CALIB_WHY_LEAF, false, DESCENT_NOT_SLOWER},
	};
	struct descent ds;
	struct descent_step s;
	size_t i;

	tap_subtest("reason_codes");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct calib_score wall = {.metric = (char *)"target/wall_ns",
					   .flagged = cases[i].slower};
		struct calib_decision d = decision(CALIB_ABSTAIN, NULL);

		d.why = cases[i].why;
		d.scores = &wall;
		d.n_scores = 1;
		d.wall = 0;
		descent_init(&ds, t, 3);
		REQUIRE(descent_next(&ds, &d, descent_check(&ds, &d, NULL), &s) == 0);
		CHECKF(s.kind == DESCENT_STOP && s.abstain == cases[i].code,
		       "case %zu (%s, %s): %s", i, calib_why_name(cases[i].why),
		       cases[i].slower ? "slower" : "not slower",
		       descent_abstain_code(s.abstain) ?: "(named)");
		descent_step_clear(&s);
	}
	/* nothing measurable at level 1: no path explains anything */
	descent_init(&ds, t, 3);
	descent_nothing_measurable(&ds, &s);
	CHECK_EQ(s.abstain, DESCENT_UNEXPLAINED, "nothing measurable");
	descent_step_clear(&s);
	CHECK(descent_abstain_code(DESCENT_NAMED) == NULL);
	CHECK_STREQ(descent_abstain_code(DESCENT_REFERENCE_NOISY), "reference_noisy", "code");
}

static void test_nothing_measurable(void)
{
	struct descent ds;
	struct descent_step s;

	tap_subtest("nothing_measurable");
	descent_init(&ds, t, 3);
	step(&ds, decision(CALIB_DESCEND, "kernel_block_io"), &s);
	descent_step_clear(&s);
	descent_nothing_measurable(&ds, &s);
	expect_stop(&s, CALIB_COMMIT, "kernel_block_io", "no node below is measurable");
	descent_step_clear(&s);
	/* A decision naming no node where one is needed is refused. */
	descent_init(&ds, t, 3);
	{
		struct calib_decision d = { .action = CALIB_DESCEND, .node = -1 };

		CHECK_EQ(descent_next(&ds, &d, DESCENT_CHECK_CONFIRMED, &s), -EINVAL, "no node");
		CHECK(!ds.done);
	}
	CHECK_STREQ(descent_kind_name(DESCENT_CONFIRM), "confirm", "kind name");
}

int main(void)
{
	struct tree *tree = load_real();

	t = tree;
	test_max_depth();
	test_confirm_leaf();
	test_remeasure();
	test_refuted();
	test_parent_only();
	test_running_target();
	test_reason_codes();
	test_nothing_measurable();
	tree_free(tree);
	return tap_done("test-descent");
}
