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
	/* the registry requests are checked against: live's (reloaded by SIGHUP), else workloads */
	const struct workload_registry *workloads;
	struct workloads_live *live;
	const struct tree *tree;
	bool llm_configured;
	uint64_t started_mono_ns;
	const char *kernel_release; /* uname -r */
	const char *hostname;	    /* uname -n: whose host pace readings are shown */
};

struct http_server;

/* Where the API listens and with which secret (README "Security model"). */
struct http_options {
	/*
	 * TCP "ADDR:PORT" (IPv4 or [IPv6]:PORT; port 0 picks a free one), NULL
	 * for none. Serves GET and HEAD; writes only with the token. A
	 * non-loopback address without a token is refused (-EPERM).
	 */
	const char *listen;
	/*
	 * The control socket's path, NULL for none. Mode 0660 and group
	 * ctx->cfg->api_group (0600 when there is no such group); a stale socket
	 * there is replaced, anything else is -EEXIST, a live one -EADDRINUSE.
	 */
	const char *unix_path;
	/* Bearer token that allows writes over TCP (copied); NULL: TCP is read-only. */
	const char *token;
};

/*
 * Start the listeners of o (at least one) on their own threads. Errors are
 * logged here, with what failed, and returned (-EADDRINUSE, -EINVAL for a
 * bad address, -EPERM for an exposed listener without a token, ...).
 */
int http_start(const struct http_options *o, struct api_ctx *ctx, struct http_server **ret);
/* The TCP port listened on (0 without a TCP listener). */
unsigned http_port(const struct http_server *h);
/* The control socket's path, or NULL. */
const char *http_unix_path(const struct http_server *h);
/* Stop accepting, finish in-flight requests, remove the socket, free. NULL is fine. */
void http_stop(struct http_server *h);

/* "ADDR:PORT" is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x); false when malformed. */
bool http_listen_is_loopback(const char *listen);
/*
 * Whether listen may be served: -EINVAL when it is no "ADDR:PORT", -EPERM
 * when it is not loopback and there is no token (http_start refuses both).
 */
int http_listen_check(const char *listen, bool have_token);
