/* SPDX-License-Identifier: MIT */
/*
 * Configuration: /etc/argus/argusd.conf, "key = value" lines, '#' comments.
 * Command-line overrides are applied after the file.
 */
#pragma once

#include <stdbool.h>

struct config {
	char *listen;	     /* "127.0.0.1:8321" */
	char *state_dir;     /* "/var/lib/argusd": store and lock */
	char *workloads_dir; /* "/etc/argus/workloads" */
	char *victims_dir;   /* where bundled victims live; relative argv[0] resolves here */
	char *tree_file;     /* tree-data file */
	char *schema_dir;    /* directory of the schema files */
	unsigned queue_max;  /* waiting jobs, default 16 */
	unsigned max_body;   /* request body bytes, default 65536 */
	unsigned reference_repeats; /* default K, 3 */
	double tau;	     /* default 3 */
	unsigned window_s;   /* default observation window for running targets, 5 */
	unsigned warmup_runs; /* unmeasured runs of a workload before a job measures it, 1 */
	bool allow_stale_reference; /* diagnose against a reference from another kernel/tree (warns) */

	/* the LLM agent */
	char *llm_url;	     /* base URL of an OpenAI-compatible API, NULL: not configured */
	char *llm_model;
	char *llm_key_file;  /* relative names are looked up in $CREDENTIALS_DIRECTORY */
	unsigned llm_timeout_s;
	unsigned llm_max_calls;
	unsigned llm_max_tokens;
	unsigned llm_max_wall_s;
	char *bpf_clang;       /* the compiler of authored probes (absolute path) */
	char *bpf_include_dir; /* the only include directory authored probes see */
};

/* Defaults, with paths relative to the given prefixes. */
void config_defaults(struct config *c);
/*
 * Apply a config file. Unknown keys and bad values are -EINVAL with
 * *ret_err naming the line. A missing file is -ENOENT.
 */
int config_load_file(struct config *c, const char *path, char **ret_err);
/* Set one key from a string (used by the file parser and by overrides). */
int config_set(struct config *c, const char *key, const char *value, char **ret_err);
void config_free(struct config *c);
