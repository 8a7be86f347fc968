/* SPDX-License-Identifier: MIT */
/*
 * The trace page: a job and its trace rendered as one self-contained HTML
 * page for a browser (GET /jobs/ID/trace?format=html): links to the job
 * list, the job, its trace and its reference; the verdict and the path;
 * the descent as a picture (descent_svg.h); then the descent level by
 * level (decision, reason, every score with the flagged ones marked, the
 * probe's programs and overhead), warnings, unmeasurable nodes, timings.
 * No scripts; every string is escaped. Pure.
 */
#pragma once

#include <jansson.h>
#include <stdio.h>

/* job: as GET /jobs/ID; trace: as GET /jobs/ID/trace. Returns a malloc'ed page. */
char *trace_render_html(const json_t *job, const json_t *trace);

/*
 * Write s with the special characters of HTML and XML (< > & " ') as
 * entities, the only escaping of the pages and of their SVG; NULL writes
 * nothing.
 */
void trace_html_escape(FILE *f, const char *s);
