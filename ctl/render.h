/* SPDX-License-Identifier: MIT */
/*
 * The API's documents as argusctl prints them: the descent of a trace, a
 * diagnosis's verdict, a reference, the registries, the tree, job lists.
 * Pure functions of the JSON: a field missing or of the wrong type prints
 * as "?" or is left out, never crashes. The caller cleans the text for the
 * terminal (text_emit).
 */
#pragma once

#include <stdio.h>

#include <jansson.h>

/* argusctl's exit statuses (the man page's EXIT STATUS). */
enum ctl_exit {
	CTL_EXIT_CLEAN = 0, /* no bottleneck, or a command that is not a diagnosis succeeded */
	CTL_EXIT_PATH = 1,  /* a diagnosis named a path: bottleneck or deviation */
	CTL_EXIT_ERROR =
	    2, /* bad usage, no connection, an HTTP error, a job that did not succeed */
};

/*
 * The exit status of a diagnosis's result: CTL_EXIT_CLEAN for no_bottleneck,
 * CTL_EXIT_PATH for bottleneck or deviation (and for a verdict this
 * argusctl does not know that names a path), CTL_EXIT_ERROR for a result
 * without a verdict.
 */
enum ctl_exit verdict_exit(const json_t *result);

/* The decision steps of a trace (GET /jobs/ID/trace), each with its four most flagged metrics. */
void render_descent(FILE *f, const json_t *trace);
/* A diagnosis's result: verdict, path, leaf, summary, what was not measurable, probe overhead. */
void render_verdict(FILE *f, const json_t *result);
/* A reference job's result: its id, mean wall time, warnings. */
void render_reference(FILE *f, const json_t *result);
/* GET /jobs/ID: kind, subject, state and times, then what its result or error says. */
void render_job(FILE *f, const json_t *job);
/* GET /jobs: one line per job, newest first, and how to ask for the next page. */
void render_jobs(FILE *f, const json_t *doc);
/* GET /workloads: one line per workload, then the definition files that were refused. */
void render_workloads(FILE *f, const json_t *doc);
/* GET /services: one line per service, then the definition files that were refused. */
void render_services(FILE *f, const json_t *doc);
/* GET /tree: the resolved tree indented by depth, each node's backend or why it has none. */
void render_tree(FILE *f, const json_t *doc);

/*
 * The words of a job's progress: "level 2 under kernel_paging", "level 1:
 * probing every subsystem", or the step as argusd wrote it (caller frees).
 */
char *progress_words(const json_t *job);
