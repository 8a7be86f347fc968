/* SPDX-License-Identifier: MIT */
/*
 * The agent behind the level loop: it authors each level's multiplexed
 * probe and decides, from the measurement, whether to descend, commit or
 * abstain. The builtin agent does both from the tree data and the
 * calibration rule; another agent (a remote model) takes its place through
 * the same operations, and diagnose.c checks whatever it claims.
 */
#pragma once

#include <stddef.h>
#include <jansson.h>

#include "daemon/calibrate.h"
#include "daemon/config.h"
#include "daemon/mvec.h"
#include "daemon/probe.h"
#include "daemon/tree.h"

/* What the agent sees at one level. */
struct agent_level {
	const struct tree *tree;
	int level;	   /* 1..3 */
	int parent;	   /* node flagged at the level above, -1 at level 1 */
	const int *active; /* the level's available nodes */
	size_t n_active;
	const struct mvec *ref; /* the K reference runs */
	size_t k;
	const struct calib_params *params;
};

struct agent {
	const char *name;
	/*
	 * Author the level's probe. *ret_note (owned, may be NULL) goes to the
	 * trace: the source or a description of what was authored.
	 */
	int (*author)(struct agent *a, const struct agent_level *lvl, struct probe_plan *ret_plan,
		      json_t **ret_note);
	/*
	 * The probe was rejected (verifier log, or gate message). Return 0 to
	 * author again, a negative errno to give up.
	 */
	int (*rejected)(struct agent *a, const struct agent_level *lvl, const char *log);
	/* Decide from the level's PMV. *ret_note (owned, may be NULL) goes to the trace. */
	int (*decide)(struct agent *a, const struct agent_level *lvl, const struct mvec *pmv,
		      struct calib_decision *ret, json_t **ret_note);
	void (*free)(struct agent *a);
	/* What the report should say about this agent's run ([strings], owned; NULL for none). */
	json_t *warnings;
};

/* The builtin agent: the tree's resolved hooks, the calibration rule. */
int agent_builtin_new(struct agent **ret);

/* What the LLM agent needs from the daemon and the job. */
struct agent_llm_env {
	const struct config *cfg; /* llm_*, bpf_clang, bpf_include_dir */
	/* a trace step: kind and data (stolen); the job's trace */
	void (*trace)(void *userdata, const char *kind, json_t *data);
	bool (*should_stop)(void *userdata);
	void *userdata;
};

/*
 * The LLM agent (agent_llm.c): a remote model authors each level's probe
 * (compiled, gated, trial-loaded here) and decides; every decision is
 * checked against the tree and the evidence (claim.h). Where the endpoint
 * fails, the budget runs out or the model keeps being refused, the level
 * falls back to the builtin probe or decision, and the trace says why.
 * -errno with *ret_err (malloc'ed) when it cannot start (no endpoint, an
 * unreadable key file).
 */
int agent_llm_new(const struct agent_llm_env *env, struct agent **ret, char **ret_err);

/*
 * What the LLM agents of this process have asked since start, for
 * /metrics: requests by outcome, and tokens as the endpoint reported them
 * (prompt, completion) or, where it reported none, as estimated.
 */
struct agent_llm_usage {
	unsigned long requests_ok, requests_failed;
	unsigned long long prompt_tokens, completion_tokens, estimated_tokens;
};
void agent_llm_usage(struct agent_llm_usage *ret);
static inline void agent_free(struct agent *a)
{
	if (a)
		a->free(a);
}
