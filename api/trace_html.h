/* SPDX-License-Identifier: MIT */
/*
 * The trace page: a job and its trace rendered as one self-contained HTML
 * page for a browser (GET /jobs/ID/trace?format=html): the verdict and the
 * path, then the descent level by level (decision, reason, every score with
 * the flagged ones marked, the probe's programs and overhead), warnings,
 * unmeasurable nodes, timings. No scripts; every string is escaped. Pure.
 */
#pragma once

#include <jansson.h>

/* job: as GET /jobs/ID; trace: as GET /jobs/ID/trace. Returns a malloc'ed page. */
char *trace_render_html(const json_t *job, const json_t *trace);
