/* SPDX-License-Identifier: MIT */
/*
 * The HTTP API (libmicrohttpd + jansson): routes of DESIGN.md, JSON in and
 * out, errors as {"error": {"code", "message"}}. Answers on its own threads;
 * long work goes through the job queue.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "daemon/config.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/tree.h"
#include "daemon/workload.h"

struct api_ctx {
	const struct config *cfg;
	struct store *store;
	struct jobs *jobs;
	const struct workload_registry *workloads;
	const struct tree *tree;
	bool llm_configured;
	uint64_t started_mono_ns;
	const char *kernel_release; /* uname -r */
};

struct http_server;

/*
 * Listen on "ADDR:PORT" (IPv4 or [IPv6]:PORT). Port 0 picks a free one;
 * http_port() tells which. -EADDRINUSE etc. on failure.
 */
int http_start(const char *listen, struct api_ctx *ctx, struct http_server **ret);
unsigned http_port(const struct http_server *h);
/* Stop accepting, finish in-flight requests, free. NULL is fine. */
void http_stop(struct http_server *h);
