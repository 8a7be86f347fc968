// SPDX-License-Identifier: MIT
/*
 * LLM replies and the claim check: the first three bytes choose a level of
 * the real tree (tree-data/) and what its measurement showed; the rest is
 * a chat completion body as the endpoint would send it. The body goes
 * through llm_parse_reply; every decide call in it goes through
 * claim_check against the calibration's decision for that measurement, as
 * the llm agent does.
 *
 * Properties: a parsed reply is what the agent relies on (an assistant
 * message to append, every tool call with an id, a name and object
 * arguments or an arguments_error; the history keeps every call); a
 * refused claim says why in text that can go back to the model (valid
 * UTF-8, it is sent as JSON); an accepted claim is one the calibration
 * supports: abstain only when it abstains, otherwise an active node of the
 * right kind that it flags, cited by a flagged evidence id given to the
 * model, or the parent fallback when it commits to the parent.
 */
#include "daemon/calibrate.h"
#include "daemon/claim.h"
#include "daemon/llm_client.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>

static int inner[TREE_MAX_NODES];
static size_t n_inner;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct tree *t;
	size_t i;

	fuzz_json_init();
	t = fuzz_tree();
	for (i = 0; i < t->n_nodes; i++)
		if (!tree_is_leaf(t, i) && t->nodes[i].level < TREE_MAX_DEPTH)
			inner[n_inner++] = i;
	return 0;
}

/* One level's measurement: the reference runs, the run, the calibration's decision. */
struct scenario {
	int level, parent;
	int active[TREE_MAX_CHILDREN];
	size_t n_active;
	struct mvec ref[3], pmv;
	struct calib_decision cd;
	json_t *given;
};

static void put(struct scenario *s, const char *metric, double centre, bool up)
{
	static const double spread[3] = {1.0, 1.01, 0.99};
	int k;

	for (k = 0; k < 3; k++)
		mvec_set(&s->ref[k], metric, centre * spread[k]);
	mvec_set(&s->pmv, metric, up ? centre * 10 : centre);
}

static void scenario_make(struct scenario *s, const struct tree *t, struct fuzz_bytes *b)
{
	uint8_t where = fuzz_u8(b), shown = fuzz_u8(b), flags = fuzz_u8(b);
	size_t i, m;

	memset(s, 0, sizeof(*s));
	s->parent = where % (n_inner + 1) == n_inner ? -1 : inner[where % (n_inner + 1)];
	s->level = s->parent < 0 ? 1 : t->nodes[s->parent].level + 1;
	s->n_active = tree_active(t, s->parent, s->active, TREE_MAX_CHILDREN);
	for (i = 0; i < s->n_active; i++) {
		const struct tree_node *n = &t->nodes[s->active[i]];
		/* two bits a node: count up, time up */
		unsigned pattern = (shown >> (2 * (i % 4))) & 3;

		if (i % 8 >= 4)
			pattern = (flags >> (2 * (i % 4))) & 3;
		for (m = 0; m < n->n_metrics; m++) {
			_cleanup_free_ char *id = xasprintf("%s/%s", n->id, n->metrics[m]);
			bool time = !strcmp(n->metrics[m], "time_ns");

			put(s, id, time ? 2e8 : 5000, pattern & (time ? 2 : 1));
		}
	}
	put(s, "target/wall_ns", 1e9, flags & 0x80);
	if (calib_decide(NULL, t, s->active, s->n_active, s->parent, s->ref, 3, &s->pmv, &s->cd) <
	    0)
		abort();

	/* what the model was given: this level's scores, and the parent's from the level above */
	s->given = json_object();
	for (i = 0; i < s->cd.n_scores; i++) {
		_cleanup_free_ char *id = claim_evidence_id(s->level, s->cd.scores[i].metric);

		json_object_set_new(s->given, id,
				    json_pack("{s:b}", "flagged", s->cd.scores[i].flagged));
	}
	if (s->parent >= 0) {
		_cleanup_free_ char *id =
		    xasprintf("L%d/%s/count", s->level - 1, t->nodes[s->parent].id);
		_cleanup_free_ char *wall = xasprintf("L%d/target/wall_ns", s->level - 1);

		json_object_set_new(s->given, id, json_pack("{s:b}", "flagged", flags & 0x40));
		json_object_set_new(s->given, wall, json_pack("{s:b}", "flagged", 1));
	}
}

static void scenario_free(struct scenario *s)
{
	int k;

	for (k = 0; k < 3; k++)
		mvec_free(&s->ref[k]);
	mvec_free(&s->pmv);
	calib_decision_free(&s->cd);
	json_decref(s->given);
}

static bool is_active(const struct scenario *s, int node)
{
	size_t i;

	for (i = 0; i < s->n_active; i++)
		if (s->active[i] == node)
			return true;
	return false;
}

static bool metric_of(const char *metric, const char *node_id)
{
	size_t l = strlen(node_id);

	return !strncmp(metric, node_id, l) && metric[l] == '/' && !strchr(metric + l + 1, '/');
}

static bool cites(const json_t *ids, const char *id)
{
	const json_t *v;
	size_t i;

	json_array_foreach (ids, i, v)
		if (!strcmp(json_string_value(v), id))
			return true;
	return false;
}

static void check_claim(const struct tree *t, const struct scenario *s, const json_t *args)
{
	const struct calib_decision *cd = &s->cd;
	struct claim_level cl = {.tree = t,
				 .level = s->level,
				 .parent = s->parent,
				 .active = s->active,
				 .n_active = s->n_active,
				 .calib = cd,
				 .given = s->given};
	struct claim c = {.node = -7, .evidence = -7};
	const json_t *ids = json_object_get(args, "evidence_ids"), *v;
	char *err = NULL;
	size_t i;
	int r;

	r = claim_check(&cl, args, &c, &err);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && err && *err, "r=%d", r);
		FUZZ_CHECK(c.node == -7 && c.evidence == -7, "claim written on refusal");
		FUZZ_CHECK(fuzz_utf8(err), "the refusal cannot be sent to the model: %s", err);
		free(err);
		return;
	}
	FUZZ_CHECK(json_array_size(ids) >= 1 && json_array_size(ids) <= CLAIM_MAX_EVIDENCE,
		   "evidence_ids");
	json_array_foreach (ids, i, v)
		FUZZ_CHECK(json_is_string(v) && json_object_get(s->given, json_string_value(v)),
			   "an evidence id never given was accepted");
	if (c.action == CALIB_ABSTAIN) {
		FUZZ_CHECK(cd->action == CALIB_ABSTAIN, "abstaining accepted against %s",
			   calib_action_name(cd->action));
		return;
	}
	FUZZ_CHECK(c.action == CALIB_DESCEND || c.action == CALIB_COMMIT, "action %d", c.action);
	FUZZ_CHECK(cd->action != CALIB_ABSTAIN, "a node named where the calibration abstains");
	FUZZ_CHECK(c.node >= 0 && (size_t)c.node < t->n_nodes, "node %d", c.node);
	if (c.action == CALIB_COMMIT && c.node == s->parent) {
		FUZZ_CHECK(cd->action == CALIB_COMMIT && cd->node == s->parent,
			   "the parent fallback accepted while a child deviates");
		return;
	}
	FUZZ_CHECK(is_active(s, c.node), "%s is not active", t->nodes[c.node].id);
	FUZZ_CHECK((c.action == CALIB_COMMIT) == tree_is_leaf(t, c.node), "%s on %s",
		   calib_action_name(c.action), t->nodes[c.node].id);
	FUZZ_CHECK(c.evidence >= 0 && (size_t)c.evidence < cd->n_scores, "evidence %d", c.evidence);
	FUZZ_CHECK(cd->scores[c.evidence].flagged &&
		       metric_of(cd->scores[c.evidence].metric, t->nodes[c.node].id),
		   "the claim rests on %s", cd->scores[c.evidence].metric);
	{
		_cleanup_free_ char *id =
		    claim_evidence_id(s->level, cd->scores[c.evidence].metric);

		FUZZ_CHECK(cites(ids, id), "the evidence %s is not cited", id);
	}
}

static void check_reply(const struct llm_reply *r)
{
	json_t *call, *hist = json_object_get(r->message, "tool_calls");
	size_t i;

	FUZZ_CHECK(
	    json_is_object(r->message) &&
		!strcmp(json_string_value(json_object_get(r->message, "role")) ?: "", "assistant"),
	    "no assistant message to keep in the conversation");
	FUZZ_CHECK(json_is_array(r->tool_calls), "tool_calls");
	FUZZ_CHECK(json_array_size(hist) == json_array_size(r->tool_calls),
		   "the history keeps %zu of %zu tool calls", json_array_size(hist),
		   json_array_size(r->tool_calls));
	json_array_foreach (r->tool_calls, i, call) {
		json_t *args = json_object_get(call, "arguments");

		FUZZ_CHECK(json_string_value(json_object_get(call, "id")) &&
			       *json_string_value(json_object_get(call, "id")),
			   "call %zu has no id", i);
		FUZZ_CHECK(json_string_value(json_object_get(call, "name")), "call %zu has no name",
			   i);
		FUZZ_CHECK(json_is_object(args) ||
			       (json_is_null(args) &&
				json_string_value(json_object_get(call, "arguments_error"))),
			   "call %zu arguments", i);
	}
	FUZZ_CHECK(!r->content || fuzz_utf8(r->content), "content");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree *t = fuzz_tree();
	struct fuzz_bytes b = {data, size};
	struct llm_reply reply = {};
	struct scenario s;
	char *err = NULL;
	json_t *call;
	size_t i;
	int r;

	scenario_make(&s, t, &b);
	r = llm_parse_reply((const char *)b.p, b.n, &reply, &err);
	if (r < 0) {
		FUZZ_CHECK(r == -EBADMSG && err, "r=%d", r);
		FUZZ_CHECK(fuzz_utf8(err), "the error cannot go into the trace: %s", err);
		free(err);
		scenario_free(&s);
		return 0;
	}
	check_reply(&reply);
	json_array_foreach (reply.tool_calls, i, call) {
		json_t *args = json_object_get(call, "arguments");

		if (!strcmp(json_string_value(json_object_get(call, "name")), "decide") &&
		    json_is_object(args))
			check_claim(t, &s, args);
	}
	llm_reply_clear(&reply);
	scenario_free(&s);
	return 0;
}
