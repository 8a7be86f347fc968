/* SPDX-License-Identifier: MIT */
/*
 * The picture of a descent on the trace page: an inline SVG drawn from a
 * job and its trace, one row per measured run of a level, each node of the
 * run as a box of small bars (the reference centre +- spread as a band, the
 * measured value as a dot, its z beside it), the node taken outlined with
 * an arrow to the run below, and a box saying where and why the descent
 * stopped. No scripts; every string is escaped as the page escapes HTML.
 * Pure.
 */
#pragma once

#include <jansson.h>

/*
 * job: as GET /jobs/ID; trace: as GET /jobs/ID/trace. Returns the malloc'ed
 * text of one <svg> element, "" when the trace has no decision to draw (a
 * reference, a job that ended before its first level), NULL when memory
 * ran out.
 */
char *descent_svg_render(const json_t *job, const json_t *trace);
