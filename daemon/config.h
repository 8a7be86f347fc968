/* SPDX-License-Identifier: MIT */
/*
 * Configuration: /etc/argus/argusd.conf, "key = value" lines, '#' comments.
 * Command-line overrides are applied after the file.
 */
#pragma once

#include <stdbool.h>

#include "daemon/resolve.h"
#include "daemon/syscalls.h"

/*
 * The decision's defaults an admin may change (argusd.conf): the one place
 * of each, for the configuration and for calib_params_default alike.
 */
#define CONFIG_DEFAULT_TAU 3.0
#define CONFIG_DEFAULT_FALSE_FLAG_RATE 0.05
#define CONFIG_DEFAULT_MIN_SLOWDOWN 0.10

struct config {
	char *listen;	     /* "127.0.0.1:8321" */
	char *state_dir;     /* "/var/lib/argusd": store and lock */
	char *workloads_dir; /* "/etc/argus/workloads" */
	char *services_dir;  /* "/etc/argus/services": service definitions (service.h) */
	char *victims_dir;   /* where bundled victims live; relative argv[0] resolves here */
	char *tree_file;     /* tree-data file */
	char *schema_dir;    /* directory of the schema files */
	unsigned queue_max;  /* waiting jobs, default 16 */
	unsigned max_body;   /* request body bytes, default 65536 */
	unsigned reference_repeats; /* default K, 5 */
	unsigned quiet_sample_ms;   /* the wait for a quiet machine's interval (quiet.h), 1000 */
	double tau;	     /* default 3 */
	/* the chance a level of an unchanged target flags a path (calib_params), default 0.05 */
	double false_flag_rate;
	/* what "slower" means for a wall time or an SLI (calib_params), default 0.10 */
	double min_slowdown;
	unsigned window_s;   /* default observation window for running targets, 5 */
	unsigned warmup_runs; /* unmeasured runs of a workload before a job measures it, 1 */
	/*
	 * A reference recorded while the host ran slower than its usual pace
	 * (usual_pace.h: the median of the last day's readings between jobs and
	 * references, host_pace_slow) is recorded again, as a noisy one is;
	 * true by default.
	 */
	bool reference_pace_check;
	/*
	 * With it, an attempt that ran slow is followed by a wait of at most
	 * this long for the host's usual pace (two readings in a row under the
	 * bound) instead of the fixed pause; 0: the fixed pause.
	 */
	unsigned reference_pace_wait_s;
	/*
	 * How often argusd reads the host's pace on each of its CPUs between
	 * jobs (usual_pace.h), in seconds; 0: never, the usual pace is the
	 * references' alone.
	 */
	unsigned host_pace_idle_s;
	bool allow_stale_reference; /* diagnose against a reference from another kernel/tree (warns) */
	/*
	 * kernel.bpf_stats on while argusd measures, for the report's probe
	 * overhead (ns per program run). Off by default: while it is on, every
	 * process on the host pays for it on each probe event, not only the target.
	 */
	bool probe_stats;
	/*
	 * How the probe follows system calls (syscall_events: raw, calls or
	 * none; what each costs and sees: daemon/syscalls.h, README "Probe cost").
	 */
	enum syscall_events syscall_events;
	struct backend_order backends; /* resolution tries these, in order: fentry kprobe tracepoint */

	/* access (the API's security model: README "Security") */
	char *listen_unix;    /* control socket; NULL: derived from state_dir (config_unix_path) */
	char *api_group;      /* group whose members (and root) may do everything, "argus" */
	char *api_token_file; /* bearer token for writes over TCP; relative: $CREDENTIALS_DIRECTORY */
	char *api_hostnames;  /* Host names accepted besides loopback ones, space separated */
	char *api_origins;    /* Origins accepted on requests that carry one, space separated */
	unsigned queue_per_submitter; /* waiting jobs one submitter may have, default 4 */

	/* retention */
	unsigned retention_days;  /* finished jobs older than this are deleted, 0: never; 30 */
	unsigned max_jobs;	  /* finished jobs kept at most, 0: no limit; 10000 */
	unsigned trace_max_bytes; /* a job's trace is cut beyond this, 8 MiB */

	/* the LLM agent */
	char *llm_url;	     /* base URL of an OpenAI-compatible API, NULL: not configured */
	char *llm_model;
	char *llm_key_file;  /* relative names are looked up in $CREDENTIALS_DIRECTORY */
	unsigned llm_timeout_s;
	unsigned llm_max_calls;
	unsigned llm_max_tokens;
	unsigned llm_max_wall_s;
	bool llm_allow_insecure; /* plain http:// to a non-loopback endpoint */
	char *bpf_clang;       /* the compiler of authored probes (absolute path) */
	char *bpf_include_dir; /* the only include directory authored probes see */
};

/* Defaults, with paths relative to the given prefixes. */
void config_defaults(struct config *c);
/*
 * Apply a config file: "key = value" lines; blank lines and lines whose
 * first character is '#' are skipped, and a '#' at the start of a value or
 * after a blank begins a comment to the end of the line. Unknown keys and
 * bad values are -EINVAL with *ret_err naming the line. A missing file is
 * -ENOENT.
 */
int config_load_file(struct config *c, const char *path, char **ret_err);
/*
 * Apply path, then every "*.conf" of the directory path + ".d" in name
 * order (drop-ins: a later one wins). A missing path is -ENOENT unless
 * missing_ok; a missing drop-in directory is no error.
 */
int config_load_with_dropins(struct config *c, const char *path, bool missing_ok,
			     char **ret_err);
/* Set one key from a string (used by the file parser and by overrides). */
int config_set(struct config *c, const char *key, const char *value, char **ret_err);
void config_free(struct config *c);
/*
 * The control socket's path (caller frees): listen_unix when set, else
 * /run/argusd/argusd.sock for the packaged state directory /var/lib/argusd
 * (the unit's RuntimeDirectory), else $state_dir/argusd.sock.
 */
char *config_unix_path(const struct config *c);
