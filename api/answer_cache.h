/* SPDX-License-Identifier: MIT */
/*
 * Finished answers, kept built: the libmicrohttpd response of a GET whose
 * body never changes again (a finished job, its trace, its trace page, the
 * tree resolved at start),
 * under the request's path and query as received, so that later askers get
 * it without the store or jansson. Bounded by bytes, the least recently
 * served out first; emptied when the store removes jobs (its removal
 * counter, the "epoch" here, has moved).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

#include "api/validate.h"

struct answer_cache;

/* What the cache holds at most: bodies' bytes; one body over a quarter of it is not kept. */
#define ANSWER_CACHE_BYTES (32u << 20)
/* The longest key kept: path, '?', query. */
#define ANSWER_CACHE_KEY_MAX 512

int answer_cache_new(size_t max_bytes, struct answer_cache **ret);
void answer_cache_free(struct answer_cache *c);

/* The key of a request into buf (ANSWER_CACHE_KEY_MAX + 1 bytes); false when it is too long. */
bool answer_cache_key(const char *path, const struct query_arg *args, size_t n,
		      char buf[static ANSWER_CACHE_KEY_MAX + 1]);
/*
 * Queue the answer kept under key on mc, or 304 with its tag when
 * if_none_match names it; *ret_status and *ret say what was queued. false
 * when nothing is kept under key (epoch: the store's removal counter now).
 */
bool answer_cache_serve(struct answer_cache *c, const char *key, uint64_t epoch,
			struct MHD_Connection *mc, const char *if_none_match, unsigned *ret_status,
			enum MHD_Result *ret);
/*
 * Keep resp, whose body has bytes bytes and the tag etag, under key; the
 * cache takes the caller's reference (destroyed at once when not kept).
 * epoch: the removal counter read before the body was read from the store.
 */
void answer_cache_put(struct answer_cache *c, const char *key, uint64_t epoch,
		      struct MHD_Response *resp, const char *etag, size_t bytes);

/* Queue "304 Not Modified" with tag on mc. */
enum MHD_Result answer_not_modified(struct MHD_Connection *mc, const char *etag);
/* The caching headers of an answer with tag etag: ETag, Cache-Control. */
void answer_add_validators(struct MHD_Response *resp, const char *etag);
