// SPDX-License-Identifier: MIT
/*
 * Checking a remote agent's decision against the tree and the
 * calibration. See claim.h.
 */
#include "daemon/claim.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

char *claim_evidence_id(int level, const char *metric)
{
	return xasprintf("L%d/%s", level, metric);
}

static int wrong(char **ret_err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wrong(char **ret_err, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	/* it quotes the model's ids, cut at a byte count: it goes back to the model as JSON */
	*ret_err = utf8_sanitize(msg) ?: xstrdup("decision refused");
	return -EINVAL;
}

static bool is_active(const struct claim_level *cl, int node)
{
	size_t i;

	for (i = 0; i < cl->n_active; i++)
		if (cl->active[i] == node)
			return true;
	return false;
}

/* The active ids, for messages: "a, b, c" (bounded by the tree's limits). */
static char *active_list(const struct claim_level *cl)
{
	char *s = xstrdup("");
	size_t i;

	for (i = 0; i < cl->n_active; i++) {
		char *n = xasprintf("%s%s%s", s, i ? ", " : "", cl->tree->nodes[cl->active[i]].id);

		free(s);
		s = n;
	}
	return s;
}

/* Does metric ("<node id>/<m>") belong to node? */
static bool metric_of(const char *metric, const char *node_id)
{
	size_t l = strlen(node_id);

	return strncmp(metric, node_id, l) == 0 && metric[l] == '/' && !strchr(metric + l + 1, '/');
}

/* Index of the first flagged score of node at this level, or -1. */
static int flagged_score(const struct calib_decision *d, const char *node_id)
{
	size_t i;

	for (i = 0; i < d->n_scores; i++)
		if (d->scores[i].flagged && metric_of(d->scores[i].metric, node_id))
			return i;
	return -1;
}

/* The strongest reason the calibration gives against naming a path, for messages. */
static const char *calib_reason(const struct calib_decision *d)
{
	return d->reason ?: "the calibration flags nothing";
}

int claim_check(const struct claim_level *cl, const json_t *args, struct claim *ret,
		char **ret_err)
{
	const struct tree *t = cl->tree;
	const struct calib_decision *cd = cl->calib;
	const char *action = json_string_value(json_object_get(args, "action"));
	const char *node_id = json_string_value(json_object_get(args, "node"));
	json_t *ids = json_object_get(args, "evidence_ids"), *id;
	struct claim c = { .node = -1, .evidence = -1 };
	char prefix[32];
	size_t i;

	if (!json_is_object(args))
		return wrong(ret_err, "the arguments must be a JSON object");
	if (!action || (strcmp(action, "descend") && strcmp(action, "commit") &&
			strcmp(action, "abstain")))
		return wrong(ret_err, "action must be \"descend\", \"commit\" or \"abstain\"");
	c.action = !strcmp(action, "descend") ? CALIB_DESCEND
		   : !strcmp(action, "commit") ? CALIB_COMMIT
					       : CALIB_ABSTAIN;
	if (!json_is_array(ids) || json_array_size(ids) == 0 ||
	    json_array_size(ids) > CLAIM_MAX_EVIDENCE)
		return wrong(ret_err, "evidence_ids must list 1 to %d evidence ids you were given",
			     CLAIM_MAX_EVIDENCE);
	json_array_foreach(ids, i, id)
	{
		const char *s = json_string_value(id);

		if (!s)
			return wrong(ret_err, "evidence_ids[%zu] is not a string", i);
		if (!json_object_get(cl->given, s))
			return wrong(ret_err,
				     "evidence id \"%.128s\" does not exist: cite only ids given to "
				     "you, as \"L%d/<metric>\" from this level's evidence",
				     s, cl->level);
	}

	if (c.action == CALIB_ABSTAIN) {
		if (cd->action != CALIB_ABSTAIN) {
			int e = cd->evidence;

			if (e >= 0 && cd->scores[e].flagged)
				return wrong(ret_err,
					     "abstaining is not supported by the evidence: L%d/%s "
					     "deviates from the reference (z = %.1f above tau)",
					     cl->level, cd->scores[e].metric, cd->scores[e].z);
			return wrong(ret_err, "abstaining is not supported by the evidence: %s",
				     calib_reason(cd));
		}
		*ret = c;
		return 0;
	}

	if (!node_id)
		return wrong(ret_err, "%s needs a node id", action);
	c.node = tree_find(t, node_id);
	if (c.node < 0) {
		_cleanup_free_ char *list = active_list(cl);

		return wrong(ret_err,
			     "\"%.128s\" is not a node of the kernel code-path tree; argusd names "
			     "only tree nodes. The nodes of this level are: %s",
			     node_id, list);
	}
	if (cd->action == CALIB_ABSTAIN)
		return wrong(ret_err,
			     "the evidence does not support naming %s: %s. Abstain, citing the "
			     "evidence that shows it",
			     node_id, calib_reason(cd));

	if (cd->outgrown && !(c.action == CALIB_COMMIT && c.node == cl->parent))
		return wrong(ret_err,
			     "the evidence does not support naming %s: %s. Commit to %s, the "
			     "path above, citing its flagged metric",
			     node_id, calib_reason(cd),
			     cl->parent >= 0 ? t->nodes[cl->parent].id : "(none)");
	snprintf(prefix, sizeof(prefix), "L%d/", cl->level - 1);
	if (c.action == CALIB_COMMIT && c.node == cl->parent && cl->parent >= 0) {
		/* nothing below the parent deviates: the shallow but correct answer */
		if (!(cd->action == CALIB_COMMIT && cd->node == cl->parent))
			return wrong(ret_err,
				     "committing to %s is not supported: a node of this level "
				     "deviates (%s); descend or commit there",
				     node_id, calib_reason(cd));
		json_array_foreach(ids, i, id)
		{
			const char *s = json_string_value(id);
			json_t *g = json_object_get(cl->given, s);

			if (strncmp(s, prefix, strlen(prefix)) == 0 &&
			    metric_of(s + strlen(prefix), node_id) &&
			    json_is_true(json_object_get(g, "flagged"))) {
				*ret = c;
				return 0;
			}
		}
		return wrong(ret_err,
			     "committing to %s needs its flagged metric from level %d among the "
			     "evidence ids (\"%s%s/...\")",
			     node_id, cl->level - 1, prefix, node_id);
	}
	if (!is_active(cl, c.node)) {
		_cleanup_free_ char *list = active_list(cl);

		return wrong(ret_err,
			     "%s is not in the active subtree at level %d; the nodes of this level "
			     "are: %s",
			     node_id, cl->level, list);
	}
	if (c.action == CALIB_DESCEND && tree_is_leaf(t, c.node))
		return wrong(ret_err, "%s is a leaf: commit to it instead of descending", node_id);
	if (c.action == CALIB_COMMIT && !tree_is_leaf(t, c.node))
		return wrong(ret_err, "%s has children: descend into it instead of committing",
			     node_id);
	if (flagged_score(cd, node_id) < 0)
		return wrong(ret_err,
			     "no metric of %s deviates from the reference at level %d (none has z > "
			     "tau): the calibration does not support %s",
			     node_id, cl->level, action);
	snprintf(prefix, sizeof(prefix), "L%d/", cl->level);
	json_array_foreach(ids, i, id)
	{
		const char *s = json_string_value(id);
		size_t k;

		if (strncmp(s, prefix, strlen(prefix)) != 0)
			continue;
		for (k = 0; k < cd->n_scores; k++)
			if (cd->scores[k].flagged && !strcmp(cd->scores[k].metric, s + strlen(prefix)) &&
			    metric_of(cd->scores[k].metric, node_id)) {
				c.evidence = k;
				*ret = c;
				return 0;
			}
	}
	return wrong(ret_err,
		     "the evidence ids cited do not include a flagged metric of %s at this level; "
		     "cite it (\"%s%s/...\" with z above tau)",
		     node_id, prefix, node_id);
}
