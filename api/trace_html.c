// SPDX-License-Identifier: MIT
#include "api/trace_html.h"
#include "api/descent_svg.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
    ".verdict{padding:.8em 1em;border-radius:6px;background:#eef4ff}"
    ".bottleneck{background:#fff1e6}.failed{background:#fde8e8}"
    ".path{font-family:monospace;font-size:1.1em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 10px;text-align:right}"
    "td:first-child,th:first-child{text-align:left;font-family:monospace}"
    "tr.flag{background:#ffe2c2;font-weight:600}.muted{color:#777}"
    "code{font-size:.95em}ul{margin:.3em 0}"
    "nav{font-size:.9em}nav a{margin-right:1.2em}"
    ".picture svg{max-width:100%;height:auto;display:block;margin:.5em 0}";

void trace_html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static void esc(FILE *f, const char *s)
{
	trace_html_escape(f, s);
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A metric value in its unit: times in ms or s, counts as integers. */
static void value(FILE *f, const char *metric, double v)
{
	bool time = metric && (strstr(metric, "time_ns") || strstr(metric, "wall_ns"));

	if (isnan(v))
		fputs("&ndash;", f);
	else if (time && fabs(v) >= 1e9)
		fprintf(f, "%.2f s", v / 1e9);
	else if (time)
		fprintf(f, "%.1f ms", v / 1e6);
	else
		fprintf(f, "%.0f", v);
}

static void scores_table(FILE *f, const json_t *scores)
{
	const json_t *sc;
	size_t i;

	if (!json_array_size(scores))
		return;
	fputs("<table><tr><th>metric</th><th>reference</th><th>spread</th><th>now</th>"
	      "<th>z</th></tr>",
	      f);
	json_array_foreach(scores, i, sc)
	{
		const char *m = str(sc, "metric");

		fprintf(f, "<tr%s><td>",
			json_is_true(json_object_get(sc, "flagged")) ? " class=\"flag\"" : "");
		esc(f, m);
		fputs("</td><td>", f);
		value(f, m, num(sc, "reference"));
		fputs("</td><td>&plusmn; ", f);
		value(f, m, num(sc, "spread"));
		fputs("</td><td>", f);
		value(f, m, num(sc, "value"));
		fprintf(f, "</td><td>%.1f</td></tr>", num(sc, "z"));
	}
	fputs("</table>", f);
}

static void string_list(FILE *f, const char *title, const json_t *arr)
{
	const json_t *x;
	size_t i;

	if (!json_array_size(arr))
		return;
	fprintf(f, "<h2>%s</h2><ul>", title);
	json_array_foreach(arr, i, x)
	{
		fputs("<li>", f);
		if (json_is_string(x))
			esc(f, json_string_value(x));
		else {
			fputs("<code>", f);
			esc(f, str(x, "node"));
			fputs("</code>: ", f);
			esc(f, str(x, "reason"));
		}
		fputs("</li>", f);
	}
	fputs("</ul>", f);
}

/* The reference the diagnosis was scored against (its result's, else its request's); 0: none. */
static long long reference_of(const json_t *job)
{
	const json_t *ref = json_object_get(json_object_get(job, "result"), "reference");

	if (!json_is_integer(ref))
		ref = json_object_get(json_object_get(job, "request"), "reference");
	return json_is_integer(ref) ? json_integer_value(ref) : 0;
}

/* Where a reader goes from here: every link is built from integers, nothing else. */
static void links(FILE *f, const json_t *job)
{
	long long id = json_integer_value(json_object_get(job, "id"));

	fprintf(f,
		"<nav><a href=\"/\">&larr; all jobs</a><a href=\"/jobs/%lld\">job %lld (JSON)</a>"
		"<a href=\"/jobs/%lld/trace\">trace (JSON)</a>",
		id, id, id);
	if (reference_of(job) > 0)
		fprintf(f, "<a href=\"/references/%lld\">reference %lld (JSON)</a>",
			reference_of(job), reference_of(job));
	fputs("</nav>", f);
}

/* The descent as a picture, when the trace has a decision to draw. */
static int picture(FILE *f, const json_t *job, const json_t *trace)
{
	char *svg = descent_svg_render(job, trace);

	if (!svg)
		return -1;
	if (*svg)
		fprintf(f, "<h2>The descent at a glance</h2><div class=\"picture\">%s</div>", svg);
	free(svg);
	return 0;
}

static void header(FILE *f, const json_t *job)
{
	const json_t *res = json_object_get(job, "result"), *err = json_object_get(job, "error");
	const json_t *path = json_object_get(res, "path"), *p;
	const char *state = str(job, "state") ?: "?", *verdict = str(res, "verdict");
	const char *subject = str(json_object_get(job, "request"), "subject");
	size_t i;

	fprintf(f,
		"<h1>argusd job %lld: ", (long long)json_integer_value(json_object_get(job, "id")));
	esc(f, str(job, "kind"));
	fputs(" of <code>", f);
	esc(f, subject ?: "?");
	fputs("</code></h1>", f);

	fprintf(f, "<div class=\"verdict%s\">",
		err					    ? " failed"
		: verdict && !strcmp(verdict, "bottleneck") ? " bottleneck"
							    : "");
	fputs("<b>", f);
	esc(f, state);
	fputs("</b>", f);
	if (verdict) {
		fputs(": <b>", f);
		esc(f, verdict);
		fputs("</b>", f);
	}
	if (str(res, "reason_code")) {
		fputs(" (<code>", f);
		esc(f, str(res, "reason_code"));
		fputs("</code>)", f);
	}
	if (json_array_size(path)) {
		fputs("<div class=\"path\">", f);
		json_array_foreach(path, i, p)
		{
			if (i)
				fputs(" &rarr; ", f);
			esc(f, json_string_value(p));
		}
		fputs("</div>", f);
	}
	if (str(res, "summary")) {
		fputs("<p>", f);
		esc(f, str(res, "summary"));
		fputs("</p>", f);
	}
	if (err) {
		fputs("<p><code>", f);
		esc(f, str(err, "code"));
		fputs("</code>: ", f);
		esc(f, str(err, "message"));
		fputs("</p>", f);
	}
	fputs("<p class=\"muted\">created ", f);
	esc(f, str(job, "created"));
	if (str(job, "finished")) {
		fputs(", finished ", f);
		esc(f, str(job, "finished"));
	}
	if (reference_of(job) > 0)
		fprintf(f, ", %s <a href=\"/references/%lld\">reference %lld</a>",
			str(job, "kind") && !strcmp(str(job, "kind"), "reference") ? "recorded"
										    : "against",
			reference_of(job), reference_of(job));
	if (!isnan(num(json_object_get(res, "timings"), "total_s")))
		fprintf(f, ", %.1f s to diagnose", num(json_object_get(res, "timings"), "total_s"));
	fputs("</p></div>", f);
}

/* The descent: probe, measurement and decision steps in order. */
static void steps(FILE *f, const json_t *trace)
{
	const json_t *st;
	size_t i;

	fputs("<h2>The descent, step by step</h2>", f);
	json_array_foreach(json_object_get(trace, "steps"), i, st)
	{
		const char *kind = str(st, "kind");
		int level = json_integer_value(json_object_get(st, "level"));

		if (!kind)
			continue;
		if (!strcmp(kind, "probe")) {
			const json_t *progs =
					 json_object_get(json_object_get(st, "probe"), "programs"),
				     *pg;
			size_t j;

			fprintf(f, "<h3>Level %d</h3><p class=\"muted\">probe", level);
			if (str(st, "parent")) {
				fputs(" below <code>", f);
				esc(f, str(st, "parent"));
				fputs("</code>", f);
			}
			fputs(": ", f);
			json_array_foreach(progs, j, pg)
			{
				if (j)
					fputs(", ", f);
				esc(f, json_string_value(pg));
			}
			fputs("</p>", f);
		} else if (!strcmp(kind, "measure") && json_object_get(st, "level")) {
			const json_t *pr = json_object_get(st, "probe");

			fprintf(f, "<p class=\"muted\">measured: target wall %.1f ms",
				num(st, "wall_ns") / 1e6);
			if (!isnan(num(pr, "ns_per_run")))
				fprintf(f, "; probe %.0f ns per program run, %.2f%% of the run",
					num(pr, "ns_per_run"), num(pr, "overhead_fraction") * 100);
			fputs("</p>", f);
		} else if (!strcmp(kind, "decision")) {
			fputs("<p><b>", f);
			esc(f, str(st, "action"));
			if (str(st, "node")) {
				fputs(" &rarr; <code>", f);
				esc(f, str(st, "node"));
				fputs("</code>", f);
			}
			fputs("</b>: ", f);
			esc(f, str(st, "reason"));
			fputs("</p>", f);
			scores_table(f, json_object_get(st, "scores"));
		} else if (!strcmp(kind, "remeasure") || !strcmp(kind, "fallback") ||
			   !strcmp(kind, "probe_rejected") || !strcmp(kind, "decision_refused")) {
			fputs("<p class=\"muted\">", f);
			esc(f, kind);
			fputs(": ", f);
			esc(f, str(st, "reason") ?: str(st, "error"));
			fputs("</p>", f);
		}
	}
}

char *trace_render_html(const json_t *job, const json_t *trace)
{
	const json_t *res = json_object_get(job, "result");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f,
		"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>argusd job %lld</title>"
		"<style>%s</style></head><body>",
		(long long)json_integer_value(json_object_get(job, "id")), style);
	links(f, job);
	header(f, job);
	if (picture(f, job, trace) < 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	steps(f, trace);
	string_list(f, "Warnings", json_object_get(res, "warnings"));
	string_list(f, "Not measurable on this kernel", json_object_get(res, "unavailable"));
	fputs("<p class=\"muted\">The same trace as JSON: drop <code>?format=html</code>.</p>"
	      "</body></html>\n",
	      f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
