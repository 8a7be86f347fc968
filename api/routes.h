/* SPDX-License-Identifier: MIT */
/*
 * Routing and handlers of the HTTP API, apart from the transport: http.c
 * turns a libmicrohttpd request into struct api_request and the
 * struct api_response back into a reply. Handlers run on the server's
 * threads, concurrently; everything they share is in api_ctx (thread-safe
 * store and jobs) or in api_stats (atomic counters).
 */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <jansson.h>

#include "api/access.h"
#include "api/http.h"
#include "api/json.h"
#include "api/validate.h"

struct api_request {
	const char *method;
	const char *path;
	const struct query_arg *args;
	size_t n_args;
	const char *body; /* NULL or body_len bytes, not NUL terminated */
	size_t body_len;
	/* who asks (http.c has checked the listener's rules); NULL: nobody, refused */
	const struct api_caller *caller;
	/* the path's second {id}, for routes that have two (set by routes_handle) */
	const char *id2;
};

struct api_response {
	unsigned status;
	json_t *json;		  /* the body, unless text is set */
	char *text;		  /* a non-JSON body (/metrics) */
	const char *content_type; /* for text */
	char *location;		  /* Location header, or NULL */
	char *allow;		  /* Allow header (405), or NULL */
	const char *authenticate; /* WWW-Authenticate header (401), or NULL */
	unsigned retry_after;	  /* Retry-After seconds; 429 and 503 get a default when 0 */
	/* the body never changes again (a finished job's, the tree): the transport may keep it */
	bool immutable;
	/*
	 * > 0: the caller may wait up to this many seconds for the body to
	 * change from the one it has (GET /jobs/ID?wait=S on a job that can
	 * still change). The transport then suspends the request and asks again
	 * when the store has written a job since, or when the time is up.
	 */
	unsigned wait_s;
};

/* Retry-After of a 429 or 503 that does not say better. */
#define API_RETRY_AFTER_429_S 30
#define API_RETRY_AFTER_503_S 5

/* Status codes counted one by one in argusd_http_requests_total; others count as "other". */
#define API_STATUS_CODES 200, 202, 304, 400, 401, 403, 404, 405, 409, 413, 415, 421, 429, 500, 503
enum { API_N_STATUS = 16 };

struct api_stats {
	atomic_ulong by_status[API_N_STATUS];
};

/* Count one answered request by its status. */
void api_stats_count(struct api_stats *st, unsigned status);

/* Answer one request; *ret is filled in all cases (errors included). */
void routes_handle(const struct api_ctx *ctx, struct api_stats *st, const struct api_request *req,
		   struct api_response *ret);

/*
 * Call cb for every route, in the table's order, with its method ("GET",
 * "POST" or "DELETE"; a GET route answers HEAD as well) and its path, literal
 * but for "{id}" segments ("/jobs/{id}/trace"). schema/openapi.yaml is
 * checked against it.
 */
void routes_each(void (*cb)(const char *method, const char *path, void *ud), void *ud);

/* An error response: status and {"error": {...}}. */
void api_response_error(struct api_response *r, unsigned status, const char *code,
			const char *message);

/* Free what a response owns and zero it. */
void api_response_clear(struct api_response *r);
