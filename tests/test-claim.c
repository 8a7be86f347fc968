// SPDX-License-Identifier: MIT
/*
 * Checking a remote agent's decisions (claim.c): invented nodes, nodes of
 * another level, evidence ids never given, claims the calibration does not
 * support, the parent fallback, abstaining against a deviation, a path
 * outgrown by another.
 */
#include "daemon/claim.h"
#include "tests/tap.h"

#include <errno.h>
#include <string.h>

static struct tree *tree;

static bool check(const struct claim_level *cl, const char *args_text, struct claim *c,
		  const char *want_err)
{
	json_t *args = json_loads(args_text, 0, NULL);
	char *err = NULL;
	int r;

	REQUIRE(args);
	r = claim_check(cl, args, c, &err);
	json_decref(args);
	if (want_err) {
		bool ok = r == -EINVAL && err && strstr(err, want_err);

		if (!ok)
			fprintf(stderr, "  %s -> %d %s\n", args_text, r, err ?: "(accepted)");
		free(err);
		return ok;
	}
	if (r)
		fprintf(stderr, "  %s -> refused: %s\n", args_text, err);
	free(err);
	return r == 0;
}

int main(void)
{
	char path[512], *err = NULL;
	int active[TREE_MAX_CHILDREN], paging, file_fault, major, page_cache;
	size_t n;
	struct calib_score s1[] = {
		{ .metric = "kernel_paging/time_ns", .z = 40, .flagged = true },
		{ .metric = "kernel_paging/count", .z = 1, .flagged = false },
		{ .metric = "kernel_scheduler/time_ns", .z = 0.5, .flagged = false },
		{ .metric = "target/wall_ns", .z = 30, .flagged = true },
	};
	struct calib_decision cd1 = { .action = CALIB_DESCEND, .scores = s1, .n_scores = 4,
				      .evidence = 0 };
	json_t *given = json_pack("{s:{s:b},s:{s:b},s:{s:b},s:{s:b}}", "L1/kernel_paging/time_ns",
				  "flagged", 1, "L1/kernel_paging/count", "flagged", 0,
				  "L1/kernel_scheduler/time_ns", "flagged", 0, "L1/target/wall_ns",
				  "flagged", 1);
	struct claim_level cl;
	struct claim c;

	snprintf(path, sizeof(path), "%s/tree-data/tree.json", getenv("ARGUS_SOURCE_DIR") ?: ".");
	REQUIRE(tree_load_file(path, &tree, &err) == 0);
	paging = tree_find(tree, "kernel_paging");
	file_fault = tree_find(tree, "kernel_paging.file_fault");
	major = tree_find(tree, "kernel_paging.file_fault.major");
	page_cache = tree_find(tree, "kernel_paging.file_fault.page_cache");
	cd1.node = paging;
	n = tree_active(tree, -1, active, TREE_MAX_CHILDREN);
	cl = (struct claim_level){ .tree = tree, .level = 1, .parent = -1, .active = active,
				   .n_active = n, .calib = &cd1, .given = given };

	CHECK(check(&cl,
		    "{\"action\": \"descend\", \"node\": \"kernel_paging\", \"evidence_ids\": "
		    "[\"L1/kernel_paging/time_ns\"], \"rationale\": \"x\"}",
		    &c, NULL));
	CHECK(c.action == CALIB_DESCEND && c.node == paging && c.evidence == 0);
	CHECK(check(&cl,
		    "{\"action\": \"commit\", \"node\": \"kernel_paging.anon_fault.alloc_cold\", "
		    "\"evidence_ids\": [\"L1/kernel_paging/time_ns\"]}",
		    &c, "not a node of the kernel code-path tree"));
	CHECK(check(&cl,
		    "{\"action\": \"commit\", \"node\": \"kernel_paging.file_fault.major\", "
		    "\"evidence_ids\": [\"L1/kernel_paging/time_ns\"]}",
		    &c, "not in the active subtree"));
	CHECK(check(&cl,
		    "{\"action\": \"descend\", \"node\": \"kernel_paging\", \"evidence_ids\": "
		    "[\"L1/kernel_paging/latency_p99\"]}",
		    &c, "does not exist"));
	CHECK(check(&cl,
		    "{\"action\": \"descend\", \"node\": \"kernel_scheduler\", \"evidence_ids\": "
		    "[\"L1/kernel_scheduler/time_ns\"]}",
		    &c, "deviates"));
	/* the right node, but citing only metrics that do not deviate */
	CHECK(check(&cl,
		    "{\"action\": \"descend\", \"node\": \"kernel_paging\", \"evidence_ids\": "
		    "[\"L1/kernel_paging/count\"]}",
		    &c, "do not include a flagged metric"));
	CHECK(check(&cl,
		    "{\"action\": \"commit\", \"node\": \"kernel_paging\", \"evidence_ids\": "
		    "[\"L1/kernel_paging/time_ns\"]}",
		    &c, "descend into it"));
	CHECK(check(&cl, "{\"action\": \"abstain\", \"evidence_ids\": [\"L1/target/wall_ns\"]}", &c,
		    "not supported"));
	CHECK(check(&cl, "{\"action\": \"skip\", \"evidence_ids\": [\"L1/target/wall_ns\"]}", &c,
		    "action must be"));
	CHECK(check(&cl, "{\"action\": \"abstain\", \"evidence_ids\": []}", &c, "evidence_ids"));

	/* the calibration abstains (the target is not slower): only abstaining stands */
	cd1.action = CALIB_ABSTAIN;
	cd1.reason = "target not slower than its reference";
	CHECK(check(&cl,
		    "{\"action\": \"descend\", \"node\": \"kernel_paging\", \"evidence_ids\": "
		    "[\"L1/kernel_paging/time_ns\"]}",
		    &c, "not slower"));
	CHECK(check(&cl, "{\"action\": \"abstain\", \"evidence_ids\": [\"L1/target/wall_ns\"]}", &c,
		    NULL));
	CHECK(c.action == CALIB_ABSTAIN && c.node == -1);

	/* level 3 below file_fault, nothing deviates: commit to the parent with its L2 evidence */
	{
		struct calib_score s3[] = {
			{ .metric = "kernel_paging.file_fault.page_cache/time_ns", .flagged = false },
			{ .metric = "kernel_paging.file_fault.major/time_ns", .flagged = false },
		};
		struct calib_decision cd3 = { .action = CALIB_COMMIT, .node = file_fault,
					      .scores = s3, .n_scores = 2, .evidence = -1 };
		int act3[2] = { page_cache, major };

		json_object_set_new(given, "L2/kernel_paging.file_fault/time_ns",
				    json_pack("{s:b}", "flagged", 1));
		json_object_set_new(given, "L3/kernel_paging.file_fault.major/time_ns",
				    json_pack("{s:b}", "flagged", 0));
		cl = (struct claim_level){ .tree = tree, .level = 3, .parent = file_fault,
					   .active = act3, .n_active = 2, .calib = &cd3,
					   .given = given };
		CHECK(check(&cl,
			    "{\"action\": \"commit\", \"node\": \"kernel_paging.file_fault\", "
			    "\"evidence_ids\": [\"L2/kernel_paging.file_fault/time_ns\"]}",
			    &c, NULL));
		CHECK(c.action == CALIB_COMMIT && c.node == file_fault);
		CHECK(check(&cl,
			    "{\"action\": \"commit\", \"node\": \"kernel_paging.file_fault.major\", "
			    "\"evidence_ids\": [\"L3/kernel_paging.file_fault.major/time_ns\"]}",
			    &c, "no metric"));
		CHECK(check(&cl,
			    "{\"action\": \"commit\", \"node\": \"kernel_paging.file_fault\", "
			    "\"evidence_ids\": [\"L3/kernel_paging.file_fault.major/time_ns\"]}",
			    &c, "needs its flagged metric"));
		CHECK(check(&cl,
			    "{\"action\": \"abstain\", \"evidence_ids\": "
			    "[\"L3/kernel_paging.file_fault.major/time_ns\"]}",
			    &c, "not supported"));

		/*
		 * major deviates, but page_cache, within its spread, grew by
		 * more (calib_decision.outgrown): the parent stands, and naming
		 * major is refused though its metric is flagged.
		 */
		s3[1].flagged = true;
		cd3.outgrown = true;
		cd3.outgrown_by = 0;
		cd3.evidence = 1;
		cd3.reason = "which took the time is not shown";
		json_object_set_new(given, "L3/kernel_paging.file_fault.major/time_ns",
				    json_pack("{s:b}", "flagged", 1));
		CHECK(check(&cl,
			    "{\"action\": \"commit\", \"node\": \"kernel_paging.file_fault.major\", "
			    "\"evidence_ids\": [\"L3/kernel_paging.file_fault.major/time_ns\"]}",
			    &c, "Commit to kernel_paging.file_fault, the path above"));
		CHECK(check(&cl,
			    "{\"action\": \"commit\", \"node\": \"kernel_paging.file_fault\", "
			    "\"evidence_ids\": [\"L2/kernel_paging.file_fault/time_ns\"]}",
			    &c, NULL));
		CHECK(c.action == CALIB_COMMIT && c.node == file_fault);
	}

	json_decref(given);
	tree_free(tree);
	return tap_done("test-claim");
}
