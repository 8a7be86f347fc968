// SPDX-License-Identifier: MIT
/*
 * The job list page: store_job_list's entries as one HTML table for a
 * browser, the way in to the trace pages. Strings go through
 * trace_html_escape; links are built from integers only.
 */
#include "api/job_list_html.h"
#include "api/trace_html.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:80em;color:#222}"
    "h1{font-size:1.4em}table{border-collapse:collapse}"
    "td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #eee}"
    "tr.bottleneck td{background:#fff1e6}tr.failed td{background:#fde8e8}"
    ".muted{color:#777}code{font-size:.95em}";

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void cell(FILE *f, const char *s, bool code)
{
	fputs(code && s ? "<td><code>" : "<td>", f);
	trace_html_escape(f, s);
	fputs(code && s ? "</code></td>" : "</td>", f);
}

/* A row stands out for a bottleneck named and for a job that did not end well. */
static const char *row_class(const char *verdict, const char *state)
{
	if (verdict && strcmp(verdict, "bottleneck") == 0)
		return " class=\"bottleneck\"";
	if (state && (strcmp(state, "failed") == 0 || strcmp(state, "interrupted") == 0))
		return " class=\"failed\"";
	return "";
}

static void row(FILE *f, const json_t *job)
{
	const json_t *path = json_object_get(job, "path");
	const char *state = str(job, "state"), *verdict = str(job, "verdict");
	long long id = json_integer_value(json_object_get(job, "id"));

	fprintf(f, "<tr%s><td><a href=\"/jobs/%lld/trace?format=html\">%lld</a></td>",
		row_class(verdict, state), id, id);
	cell(f, str(job, "kind"), false);
	cell(f, str(job, "subject"), true);
	cell(f, state, false);
	cell(f, verdict, false);
	/* the node named: its dotted id is the path */
	cell(f, json_string_value(json_array_get(path, json_array_size(path) - 1)), true);
	cell(f, str(job, "created"), false);
	cell(f, str(job, "finished"), false);
	fputs("</tr>", f);
}

char *job_list_render_html(const json_t *list)
{
	const json_t *jobs = json_object_get(list, "jobs"), *job;
	const json_t *next = json_object_get(list, "next_before");
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(
	    f,
	    "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>argusd jobs</title>"
	    "<style>%s</style></head><body><h1>argusd: recent jobs</h1>"
	    "<p class=\"muted\">Newest first; a job's id opens its trace page. The same list as "
	    "JSON: <a href=\"/jobs\">/jobs</a>.</p>",
	    style);
	if (!json_array_size(jobs)) {
		fputs("<p>No jobs yet.</p>", f);
	} else {
		fputs("<table><tr><th>job</th><th>kind</th><th>subject</th><th>state</th>"
		      "<th>verdict</th><th>node named</th><th>created</th><th>finished</th></tr>",
		      f);
		json_array_foreach (jobs, i, job)
			row(f, job);
		fputs("</table>", f);
	}
	if (json_is_integer(next))
		fprintf(f, "<p><a href=\"/?before=%lld\">older jobs</a></p>",
			(long long)json_integer_value(next));
	fputs("</body></html>\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
