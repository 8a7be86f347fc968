// SPDX-License-Identifier: MIT
/*
 * argusctl's printouts (render.h). The descent and the verdict read as
 * scripts/demo.sh printed them from the same fields: each decision as
 * "L<level> <action> -> <node>: <reason>" with its flagged metrics, most
 * significant first, then the verdict block. Every value is read through
 * the accessors below, which turn a missing or mistyped field into "?" or
 * 0, so that no answer, however malformed, can crash a printout.
 */
#include "ctl/render.h"
#include "ctl/text.h"

#include <math.h>
#include <string.h>

#define FLAGGED_SHOWN 4	  /* flagged metrics shown per decision */
#define TREE_DEPTH_MAX 16 /* deeper nesting in GET /tree is not followed */

/* ---- accessors ---- */

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

static const char *str(const json_t *o, const char *key)
{
	return str_or(o, key, "?");
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The strings of array a joined by sep, a non-string as "?" (caller frees). */
static char *join(const json_t *a, const char *sep)
{
	char *text = strprintf("%s", ""), *next;
	const json_t *v;
	size_t i;

	json_array_foreach (a, i, v) {
		next = strprintf("%s%s%s", text, i ? sep : "", json_string_value(v) ?: "?");
		free(text);
		text = next;
	}
	return text;
}

/* A JSON value as jq's string interpolation prints it: strings bare, the rest encoded. */
static char *value_text(const json_t *v)
{
	char *s;

	if (!v)
		return strprintf("null");
	if (json_is_string(v))
		return strprintf("%s", json_string_value(v));
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	return s ? s : strprintf("?");
}

/* ---- verdicts ---- */

enum ctl_exit verdict_exit(const json_t *result)
{
	const char *verdict = json_string_value(json_object_get(result, "verdict"));

	if (!verdict)
		return CTL_EXIT_ERROR;
	if (strcmp(verdict, "no_bottleneck") == 0)
		return CTL_EXIT_CLEAN;
	if (strcmp(verdict, "bottleneck") == 0 || strcmp(verdict, "deviation") == 0)
		return CTL_EXIT_PATH;
	return json_array_size(json_object_get(result, "path")) > 0 ? CTL_EXIT_PATH
								    : CTL_EXIT_CLEAN;
}

/* ---- the descent ---- */

static int by_z_desc(const void *a, const void *b)
{
	double za = num(*(const json_t *const *)a, "z"), zb = num(*(const json_t *const *)b, "z");

	return za < zb ? 1 : za > zb ? -1 : 0;
}

static void render_flagged(FILE *f, const json_t *scores)
{
	size_t n = 0, i;
	const json_t **flagged = calloc(json_array_size(scores) + 1, sizeof(*flagged));
	const json_t *s;

	if (!flagged)
		abort();
	json_array_foreach (scores, i, s)
		if (json_is_true(json_object_get(s, "flagged")))
			flagged[n++] = s;
	qsort(flagged, n, sizeof(*flagged), by_z_desc);
	for (i = 0; i < n && i < FLAGGED_SHOWN; i++)
		fprintf(f, "        flagged %s: %.0f vs %.0f +- %.0f (z %.1f)\n",
			str(flagged[i], "metric"), floor(num(flagged[i], "value")),
			floor(num(flagged[i], "reference")), floor(num(flagged[i], "spread")),
			floor(num(flagged[i], "z") * 10) / 10);
	free(flagged);
}

void render_descent(FILE *f, const json_t *trace)
{
	const json_t *step;
	size_t i, n = 0;

	json_array_foreach (json_object_get(trace, "steps"), i, step) {
		const char *node = json_string_value(json_object_get(step, "node"));

		if (strcmp(str(step, "kind"), "decision") != 0)
			continue;
		fprintf(f, "   L%lld %s%s%s: %s\n",
			(long long)json_integer_value(json_object_get(step, "level")),
			str(step, "action"), node ? " -> " : "", node ?: "",
			str_or(step, "reason", ""));
		render_flagged(f, json_object_get(step, "scores"));
		n++;
	}
	if (!n)
		fputs("   (no decision in the trace)\n", f);
}

/* ---- results ---- */

/* One line per message of list (strings, or objects with "message"), after prefix. */
static void render_messages(FILE *f, const char *prefix, const json_t *list)
{
	const json_t *m;
	size_t i;

	json_array_foreach (list, i, m)
		fprintf(f, "%s%s\n", prefix,
			json_is_string(m) ? json_string_value(m) : str(m, "message"));
}

void render_verdict(FILE *f, const json_t *result)
{
	const json_t *unavailable = json_object_get(result, "unavailable"), *o;
	_cleanup_free_ char *path = join(json_object_get(result, "path"), " -> ");
	_cleanup_free_ char *leaf = value_text(json_object_get(result, "leaf"));
	const char *code = json_string_value(json_object_get(result, "reason_code"));
	size_t i;

	fprintf(f, "   verdict: %s\n", str(result, "verdict"));
	fprintf(f, "   path:    %s\n", path);
	fprintf(f, "   leaf:    %s\n", leaf);
	fprintf(f, "   summary: %s\n", str(result, "summary"));
	if (code)
		fprintf(f, "   reason:  %s\n", code);
	if (json_array_size(unavailable) > 0) {
		fputs("   not measurable here: ", f);
		json_array_foreach (unavailable, i, o)
			fprintf(f, "%s%s", i ? ", " : "", str(o, "node"));
		fputc('\n', f);
	}
	json_array_foreach (json_object_get(result, "overhead"), i, o) {
		const json_t *ns = json_object_get(o, "ns_per_run");

		/* as jq's select(.ns_per_run): present, not null, not false */
		if (!ns || json_is_null(ns) || json_is_false(ns))
			continue;
		fprintf(f, "   probe overhead L%lld: %.0f ns per program run, %g%% of the run\n",
			(long long)json_integer_value(json_object_get(o, "level")),
			floor(json_number_value(ns)),
			floor(num(o, "overhead_fraction") * 10000) / 100);
	}
	render_messages(f, "   warning: ", json_object_get(result, "warnings"));
}

/*
 * A reference: a workload's mean wall time, or a service's SLI (its runs'
 * median and how much they vary), over its runs, a service's windows.
 */
void render_reference(FILE *f, const json_t *result)
{
	const json_t *sli = json_object_get(result, "sli_median");
	long long runs = json_integer_value(json_object_get(result, "repeats"));

	fprintf(f, "   reference %lld: ",
		(long long)json_integer_value(json_object_get(result, "reference")));
	if (json_is_number(sli))
		fprintf(f, "SLI %.6g%s%s (median; varies %.1f%%)", json_number_value(sli),
			str(result, "sli_unit") ? " " : "", str(result, "sli_unit") ?: "",
			num(result, "sli_cv") * 100);
	else
		fprintf(f, "mean wall %.0f ms", floor(num(result, "mean_wall_s") * 1000));
	if (runs > 0)
		fprintf(f, " over %lld %s", runs, json_is_number(sli) ? "windows" : "runs");
	fputc('\n', f);
	render_messages(f, "   warning: ", json_object_get(result, "warnings"));
}

void render_job(FILE *f, const json_t *job)
{
	const json_t *result = json_object_get(job, "result"),
		     *error = json_object_get(job, "error");
	const char *kind = str(job, "kind");
	_cleanup_free_ char *words = progress_words(job);

	fprintf(f, "job %lld: %s of %s, %s\n",
		(long long)json_integer_value(json_object_get(job, "id")), kind,
		str(job, "subject"), str(job, "state"));
	fprintf(f, "   created %s, started %s, finished %s\n", str_or(job, "created", "-"),
		str_or(job, "started", "-"), str_or(job, "finished", "-"));
	fprintf(f, "   progress: %.0f%% %s\n", floor(num(job, "progress") * 100), words);
	if (error)
		fprintf(f, "   error: %s: %s\n", str(error, "code"), str(error, "message"));
	if (!json_is_object(result))
		return;
	if (strcmp(kind, "reference") == 0)
		render_reference(f, result);
	else
		render_verdict(f, result);
}

/* ---- lists ---- */

void render_jobs(FILE *f, const json_t *doc)
{
	const json_t *jobs = json_object_get(doc, "jobs"), *j;
	const json_t *next = json_object_get(doc, "next_before");
	size_t i;

	fprintf(f, "%-6s %-9s %-11s %-20s %-24s %s\n", "ID", "KIND", "STATE", "CREATED", "SUBJECT",
		"RESULT");
	json_array_foreach (jobs, i, j) {
		const json_t *path = json_object_get(j, "path");
		const char *leaf =
		    json_string_value(json_array_get(path, json_array_size(path) - 1));

		fprintf(f, "%-6lld %-9s %-11s %-20s %-24s %s%s%s\n",
			(long long)json_integer_value(json_object_get(j, "id")), str(j, "kind"),
			str(j, "state"), str_or(j, "created", "-"), str_or(j, "subject", "-"),
			str_or(j, "verdict", "-"), leaf ? " " : "", leaf ?: "");
	}
	if (json_integer_value(next) > 0)
		fprintf(f, "(older jobs: argusctl jobs --before %lld)\n",
			(long long)json_integer_value(next));
}

void render_workloads(FILE *f, const json_t *doc)
{
	const json_t *w;
	size_t i;

	fprintf(f, "%-20s %-8s %-6s %-8s %s\n", "NAME", "USER", "CPUS", "TIMEOUT", "DESCRIPTION");
	json_array_foreach (json_object_get(doc, "workloads"), i, w) {
		const json_t *usable = json_object_get(w, "usable");

		fprintf(f, "%-20s %-8s %-6s %-8lld %s", str(w, "name"), str_or(w, "user", "-"),
			str_or(w, "cpus", "-"),
			(long long)json_integer_value(json_object_get(w, "timeout_s")),
			str_or(w, "description", ""));
		if (json_is_false(usable))
			fprintf(f, " (unusable: %s)", str(w, "unusable_reason"));
		fputc('\n', f);
	}
	render_messages(f, "refused definition: ", json_object_get(doc, "errors"));
}

void render_services(FILE *f, const json_t *doc)
{
	const json_t *s;
	size_t i;

	fprintf(f, "%-20s %-32s %-4s %s\n", "NAME", "UNIT OR CGROUP", "SLI", "NOW");
	json_array_foreach (json_object_get(doc, "services"), i, s) {
		const char *unit = json_string_value(json_object_get(s, "unit"));
		const json_t *now = json_object_get(s, "now");

		fprintf(f, "%-20s %-32s %-4s ", str(s, "name"), unit ?: str_or(s, "cgroup", "-"),
			json_object_get(s, "sli") ? "yes" : "no");
		if (json_is_object(now))
			fprintf(f, "%lld processes in %s\n",
				(long long)json_integer_value(json_object_get(now, "processes")),
				str_or(now, "cgroup", "?"));
		else
			fprintf(f, "%s\n", str_or(s, "error", "-"));
	}
	render_messages(f, "refused definition: ", json_object_get(doc, "errors"));
}

/* ---- the tree ---- */

/* The node of doc's nodes whose id is id, or NULL. */
static const json_t *node_by_id(const json_t *nodes, const char *id)
{
	const json_t *n;
	size_t i;

	json_array_foreach (nodes, i, n)
		if (strcmp(str_or(n, "id", ""), id) == 0)
			return n;
	return NULL;
}

static void render_node(FILE *f, const json_t *nodes, const json_t *n, int depth)
{
	const json_t *child;
	size_t i;
	int width = 44 - 2 * depth;

	if (json_is_true(json_object_get(n, "sum_of_children")))
		fprintf(f, "%*s%-*s %-10s its children's sum\n", 2 * depth, "", width > 0 ? width : 0,
			str(n, "id"), "mixed");
	else if (json_is_true(json_object_get(n, "available")))
		fprintf(f, "%*s%-*s %-10s %s\n", 2 * depth, "", width > 0 ? width : 0, str(n, "id"),
			str(n, "backend"), str_or(n, "hook", ""));
	else
		fprintf(f, "%*s%-*s unavailable: %s\n", 2 * depth, "", width > 0 ? width : 0,
			str(n, "id"), str_or(n, "reason", "no reason given"));
	if (depth + 1 >= TREE_DEPTH_MAX)
		return;
	json_array_foreach (json_object_get(n, "children"), i, child) {
		const json_t *c = node_by_id(nodes, json_string_value(child) ?: "");

		if (c)
			render_node(f, nodes, c, depth + 1);
	}
}

void render_tree(FILE *f, const json_t *doc)
{
	const json_t *nodes = json_object_get(doc, "nodes"),
		     *summary = json_object_get(doc, "summary");
	const json_t *n, *count;
	const char *backend;
	size_t i;

	fprintf(f, "tree %s: %lld nodes, %lld unavailable here", str_or(doc, "version", "?"),
		(long long)json_integer_value(json_object_get(summary, "nodes")),
		(long long)json_integer_value(json_object_get(summary, "unavailable")));
	json_object_foreach ((json_t *)json_object_get(summary, "by_backend"), backend, count)
		fprintf(f, ", %s %lld", backend, (long long)json_integer_value(count));
	fputc('\n', f);
	if (json_array_size(json_object_get(doc, "backends")) > 0) {
		_cleanup_free_ char *order = join(json_object_get(doc, "backends"), " ");

		fprintf(f, "backends tried in order: %s\n", order);
	}
	/* the roots, then each node's children below it */
	json_array_foreach (nodes, i, n)
		if (!json_string_value(json_object_get(n, "parent")))
			render_node(f, nodes, n, 0);
}

/* ---- progress ---- */

/*
 * Whether step names a tree node: argusd's step while it probes the
 * children of a node is that node's id, a dotted path of [a-z0-9_] words.
 * The other steps are sentences; a single plain word ("done") is not an id.
 */
static bool is_node_id(const char *step)
{
	size_t n = strspn(step, "abcdefghijklmnopqrstuvwxyz0123456789_.");

	return n > 0 && step[n] == 0 && strpbrk(step, "_.") && step[0] != '.';
}

char *progress_words(const json_t *job)
{
	const char *step = str_or(job, "step", "");
	const json_t *level = json_object_get(job, "level");
	const char *node = json_string_value(json_object_get(job, "node"));
	size_t dots = 0;
	const char *p;

	/* a daemon that says level and node itself is believed */
	if (json_is_integer(level) && node)
		return strprintf("level %lld under %s", (long long)json_integer_value(level), node);
	if (!is_node_id(step))
		return strprintf("%s", step);
	/* the children of a node at depth d (d - 1 dots) are probed at level d + 1 */
	for (p = step; *p; p++)
		dots += *p == '.';
	return strprintf("level %zu under %s", dots + 2, step);
}
