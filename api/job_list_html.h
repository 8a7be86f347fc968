/* SPDX-License-Identifier: MIT */
/*
 * The job list page (GET /): the jobs as GET /jobs lists them, newest
 * first, one table row each (id, kind, subject, state, verdict and the node
 * named for a finished diagnosis, created and finished times), each id
 * linking to the job's trace page. No scripts; every string is escaped as
 * on the trace page. Pure.
 */
#pragma once

#include <jansson.h>

/* list: {"jobs": [...], "next_before": id|null}, as store_job_list gives it; a malloc'ed page. */
char *job_list_render_html(const json_t *list);
