// SPDX-License-Identifier: MIT
/*
 * The builtin agent: the level's probe is the resolved hooks of its nodes,
 * multiplexed into one object with one slot per node; the decision is the
 * calibration rule itself. Deterministic and offline.
 */
#include "daemon/agent.h"
#include "daemon/util.h"

#include <errno.h>

static int builtin_author(struct agent *a, const struct agent_level *lvl,
			  struct probe_plan *ret_plan, json_t **ret_note)
{
	int r = probe_plan_for(lvl->tree, lvl->active, lvl->n_active, ret_plan);

	if (r < 0)
		return r;
	*ret_note = probe_plan_describe(lvl->tree, ret_plan);
	return 0;
}

static int builtin_rejected(struct agent *a, const struct agent_level *lvl, const char *log)
{
	/* The plan is derived from hooks that resolution loaded here: a
	 * rejection will not change on a second try. */
	return -ENOEXEC;
}

static int builtin_decide(struct agent *a, const struct agent_level *lvl, const struct mvec *pmv,
			  struct calib_decision *ret, json_t **ret_note)
{
	*ret_note = NULL;
	return calib_decide(lvl->params, lvl->tree, lvl->active, lvl->n_active, lvl->parent,
			    lvl->ref, lvl->k, pmv, ret);
}

static void builtin_free(struct agent *a)
{
	free(a);
}

int agent_builtin_new(struct agent **ret)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->name = "builtin";
	a->author = builtin_author;
	a->rejected = builtin_rejected;
	a->decide = builtin_decide;
	a->free = builtin_free;
	*ret = a;
	return 0;
}
