// SPDX-License-Identifier: MIT
#include "daemon/config.h"
#include "daemon/paths-config.h"
#include "daemon/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_FILE_MAX (64 * 1024)

#ifndef ARGUS_BPF_CLANG
#define ARGUS_BPF_CLANG "/usr/bin/clang"
#endif

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->listen = xstrdup("127.0.0.1:8321");
	c->state_dir = xstrdup("/var/lib/argusd");
	c->workloads_dir = xstrdup("/etc/argus/workloads");
	c->services_dir = xstrdup("/etc/argus/services");
	c->victims_dir = xstrdup(ARGUS_PKGLIBEXECDIR "/victims");
	c->tree_file = xstrdup(ARGUS_PKGDATADIR "/tree-data/tree.json");
	c->schema_dir = xstrdup(ARGUS_PKGDATADIR "/schema");
	c->queue_max = 16;
	c->max_body = 65536;
	c->reference_repeats = 5;
	c->quiet_sample_ms = 1000;
	c->tau = CONFIG_DEFAULT_TAU;
	c->false_flag_rate = CONFIG_DEFAULT_FALSE_FLAG_RATE;
	c->min_slowdown = CONFIG_DEFAULT_MIN_SLOWDOWN;
	c->window_s = 5;
	c->warmup_runs = 1;
	c->reference_pace_check = true;
	/* the host's slow stretches, by its pace read every 2 s for 40 minutes:
	 * bench/eval/results/2026-12-06/host-pace-wait/ */
	c->reference_pace_wait_s = 50;
	c->host_pace_idle_s = 300;
	c->syscall_events = SYSCALL_EVENTS_DEFAULT;
	backend_order_default(&c->backends);
	c->api_group = xstrdup("argus");
	c->queue_per_submitter = 4;
	c->retention_days = 30;
	c->max_jobs = 10000;
	c->trace_max_bytes = 8u << 20;
	c->llm_timeout_s = 60;
	c->llm_max_calls = 24;
	c->llm_max_tokens = 200000;
	c->llm_max_wall_s = 300;
	c->bpf_clang = xstrdup(ARGUS_BPF_CLANG);
	c->bpf_include_dir = xstrdup(ARGUS_PKGDATADIR "/include");
}

static int set_str(char **field, const char *value)
{
	free(*field);
	*field = value[0] ? xstrdup(value) : NULL;
	return 0;
}

/* A number from min to max; written so that NaN, which compares false with everything, is refused. */
static int set_double(double *field, const char *value, double min, double max)
{
	char *end;
	double v = strtod(value, &end);

	if (end == value || *end || !(v >= min && v <= max))
		return -EINVAL;
	*field = v;
	return 0;
}

static int set_uint(unsigned *field, const char *value, unsigned min, unsigned max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || end == value || *end || v < min || v > max || value[0] == '-')
		return -EINVAL;
	*field = v;
	return 0;
}

static int set_bool(bool *field, const char *value)
{
	if (!strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "1"))
		*field = true;
	else if (!strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "0"))
		*field = false;
	else
		return -EINVAL;
	return 0;
}

int config_set(struct config *c, const char *key, const char *value, char **ret_err)
{
	int r;

	if (!strcmp(key, "listen"))
		r = set_str(&c->listen, value);
	else if (!strcmp(key, "state_dir"))
		r = set_str(&c->state_dir, value);
	else if (!strcmp(key, "workloads_dir"))
		r = set_str(&c->workloads_dir, value);
	else if (!strcmp(key, "services_dir"))
		r = set_str(&c->services_dir, value);
	else if (!strcmp(key, "victims_dir"))
		r = set_str(&c->victims_dir, value);
	else if (!strcmp(key, "tree_file"))
		r = set_str(&c->tree_file, value);
	else if (!strcmp(key, "schema_dir"))
		r = set_str(&c->schema_dir, value);
	else if (!strcmp(key, "queue_max"))
		r = set_uint(&c->queue_max, value, 1, 1024);
	else if (!strcmp(key, "max_body"))
		r = set_uint(&c->max_body, value, 1024, 16 << 20);
	else if (!strcmp(key, "reference_repeats"))
		r = set_uint(&c->reference_repeats, value, 3, 20);
	else if (!strcmp(key, "quiet_sample_ms"))
		r = set_uint(&c->quiet_sample_ms, value, 100, 10000);
	else if (!strcmp(key, "window_s"))
		r = set_uint(&c->window_s, value, 1, 600);
	else if (!strcmp(key, "warmup_runs"))
		r = set_uint(&c->warmup_runs, value, 0, 5);
	else if (!strcmp(key, "tau"))
		r = set_double(&c->tau, value, 0.5, 100);
	else if (!strcmp(key, "false_flag_rate"))
		r = set_double(&c->false_flag_rate, value, 0, 0.5);
	else if (!strcmp(key, "min_slowdown"))
		r = set_double(&c->min_slowdown, value, 0, 1);
	else if (!strcmp(key, "reference_pace_check"))
		r = set_bool(&c->reference_pace_check, value);
	else if (!strcmp(key, "reference_pace_wait_s"))
		r = set_uint(&c->reference_pace_wait_s, value, 0, 600);
	else if (!strcmp(key, "host_pace_idle_s"))
		r = set_uint(&c->host_pace_idle_s, value, 0, 86400);
	else if (!strcmp(key, "allow_stale_reference"))
		r = set_bool(&c->allow_stale_reference, value);
	else if (!strcmp(key, "probe_stats"))
		r = set_bool(&c->probe_stats, value);
	else if (!strcmp(key, "syscall_events"))
		r = syscall_events_parse(value, &c->syscall_events);
	else if (!strcmp(key, "backends"))
		r = backend_order_parse(value, &c->backends);
	else if (!strcmp(key, "listen_unix"))
		r = value[0] == '/' || !value[0] ? set_str(&c->listen_unix, value) : -EINVAL;
	else if (!strcmp(key, "api_group"))
		r = set_str(&c->api_group, value);
	else if (!strcmp(key, "api_token_file"))
		r = set_str(&c->api_token_file, value);
	else if (!strcmp(key, "api_hostnames"))
		r = set_str(&c->api_hostnames, value);
	else if (!strcmp(key, "api_origins"))
		r = set_str(&c->api_origins, value);
	else if (!strcmp(key, "queue_per_submitter"))
		r = set_uint(&c->queue_per_submitter, value, 1, 1024);
	else if (!strcmp(key, "retention_days"))
		r = set_uint(&c->retention_days, value, 0, 36500);
	else if (!strcmp(key, "max_jobs"))
		r = set_uint(&c->max_jobs, value, 0, 100000000);
	else if (!strcmp(key, "trace_max_bytes"))
		r = set_uint(&c->trace_max_bytes, value, 64 * 1024, 1024u << 20);
	else if (!strcmp(key, "llm_allow_insecure"))
		r = set_bool(&c->llm_allow_insecure, value);
	else if (!strcmp(key, "llm_url"))
		r = set_str(&c->llm_url, value);
	else if (!strcmp(key, "llm_model"))
		r = set_str(&c->llm_model, value);
	else if (!strcmp(key, "llm_key_file"))
		r = set_str(&c->llm_key_file, value);
	else if (!strcmp(key, "llm_timeout_s"))
		r = set_uint(&c->llm_timeout_s, value, 1, 3600);
	else if (!strcmp(key, "llm_max_calls"))
		r = set_uint(&c->llm_max_calls, value, 1, 1000);
	else if (!strcmp(key, "llm_max_tokens"))
		r = set_uint(&c->llm_max_tokens, value, 100, 10000000);
	else if (!strcmp(key, "llm_max_wall_s"))
		r = set_uint(&c->llm_max_wall_s, value, 1, 86400);
	else if (!strcmp(key, "bpf_clang") || !strcmp(key, "bpf_include_dir")) {
		/* handed to execve and -I: absolute, no surprises */
		r = value[0] == '/' && !strpbrk(value, " \t\n\\\"'") ? 0 : -EINVAL;
		if (!r)
			r = set_str(!strcmp(key, "bpf_clang") ? &c->bpf_clang : &c->bpf_include_dir,
				    value);
	} else {
		*ret_err = xasprintf("unknown key '%s'", key);
		return -EINVAL;
	}
	if (r < 0)
		*ret_err = xasprintf("bad value for %s: '%s'", key, value);
	return r;
}

static char *strip(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/*
 * Cut a comment off a value: a '#' at the start of the value or after a
 * blank begins one ("60   # per request"); one inside a word stays ("a#b").
 */
static void cut_comment(char *value)
{
	char *p;

	for (p = value; *p; p++)
		if (*p == '#' && (p == value || p[-1] == ' ' || p[-1] == '\t')) {
			*p = 0;
			return;
		}
}

int config_load_file(struct config *c, const char *path, char **ret_err)
{
	_cleanup_free_ char *buf = NULL;
	char *line, *rest;
	unsigned lineno = 0;
	int r;

	r = read_file_bounded(path, CONFIG_FILE_MAX, &buf, NULL);
	if (r < 0) {
		*ret_err = xasprintf("%s: %s", path, strerror(-r));
		return r;
	}
	rest = buf;
	while ((line = strsep(&rest, "\n"))) {
		char *eq, *key, *value, *err = NULL;

		lineno++;
		line = strip(line);
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			*ret_err = xasprintf("%s: line %u: expected key = value", path, lineno);
			return -EINVAL;
		}
		*eq = 0;
		key = strip(line);
		cut_comment(eq + 1);
		value = strip(eq + 1);
		r = config_set(c, key, value, &err);
		if (r < 0) {
			*ret_err = xasprintf("%s: line %u: %s", path, lineno, err);
			free(err);
			return r;
		}
	}
	return 0;
}

static int select_conf(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

int config_load_with_dropins(struct config *c, const char *path, bool missing_ok,
			     char **ret_err)
{
	_cleanup_free_ char *dir = xasprintf("%s.d", path);
	struct dirent **names = NULL;
	int r, n, i;

	r = config_load_file(c, path, ret_err);
	if (r == -ENOENT && missing_ok) {
		free(*ret_err);
		*ret_err = NULL;
	} else if (r < 0)
		return r;
	n = scandir(dir, &names, select_conf, alphasort);
	if (n < 0) {
		int err = errno;

		if (err == ENOENT)
			return 0;
		*ret_err = xasprintf("%s: %s", dir, strerror(err));
		return -err;
	}
	for (i = 0, r = 0; i < n; i++) {
		_cleanup_free_ char *file = xasprintf("%s/%s", dir, names[i]->d_name);

		if (r >= 0)
			r = config_load_file(c, file, ret_err);
		free(names[i]);
	}
	free(names);
	return r;
}

void config_free(struct config *c)
{
	free(c->listen);
	free(c->state_dir);
	free(c->workloads_dir);
	free(c->services_dir);
	free(c->victims_dir);
	free(c->tree_file);
	free(c->schema_dir);
	free(c->listen_unix);
	free(c->api_group);
	free(c->api_token_file);
	free(c->api_hostnames);
	free(c->api_origins);
	free(c->llm_url);
	free(c->llm_model);
	free(c->llm_key_file);
	free(c->bpf_clang);
	free(c->bpf_include_dir);
	memset(c, 0, sizeof(*c));
}

char *config_unix_path(const struct config *c)
{
	if (c->listen_unix)
		return xstrdup(c->listen_unix);
	if (c->state_dir && strcmp(c->state_dir, "/var/lib/argusd") == 0)
		return xstrdup("/run/argusd/argusd.sock");
	return xasprintf("%s/argusd.sock", c->state_dir ? c->state_dir : ".");
}
