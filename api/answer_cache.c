// SPDX-License-Identifier: MIT
/*
 * The cache of finished answers: a hash table of keys over a list in the
 * order they were last served, under one mutex. A kept response is queued
 * while the mutex is held: libmicrohttpd takes its own reference then, so
 * an eviction right after cannot free it under the connection.
 */
#include "api/answer_cache.h"
#include "api/etag.h"
#include "daemon/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_CACHE_BUCKETS 1024

struct entry {
	struct entry *hnext;	   /* in its bucket */
	struct entry *prev, *next; /* most recently served first */
	struct MHD_Response *resp;
	size_t bytes;
	char etag[ETAG_LEN];
	char key[];
};

struct answer_cache {
	pthread_mutex_t lock;
	size_t max_bytes, bytes;
	uint64_t epoch;
	struct entry *head, *tail;
	struct entry *buckets[ANSWER_CACHE_BUCKETS];
};

static size_t bucket_of(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *key; key++) {
		h ^= (unsigned char)*key;
		h *= 0x100000001b3ull;
	}
	return h % ANSWER_CACHE_BUCKETS;
}

int answer_cache_new(size_t max_bytes, struct answer_cache **ret)
{
	struct answer_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = max_bytes;
	*ret = c;
	return 0;
}

static void list_unlink(struct answer_cache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push_front(struct answer_cache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void entry_drop(struct answer_cache *c, struct entry *e)
{
	struct entry **p = &c->buckets[bucket_of(e->key)];

	while (*p != e)
		p = &(*p)->hnext;
	*p = e->hnext;
	list_unlink(c, e);
	c->bytes -= e->bytes;
	MHD_destroy_response(e->resp);
	free(e);
}

static void drop_all(struct answer_cache *c)
{
	while (c->head)
		entry_drop(c, c->head);
}

/* Under c->lock: a new epoch empties the cache. */
static void sync_epoch(struct answer_cache *c, uint64_t epoch)
{
	if (c->epoch != epoch) {
		drop_all(c);
		c->epoch = epoch;
	}
}

static struct entry *find(struct answer_cache *c, const char *key)
{
	struct entry *e;

	for (e = c->buckets[bucket_of(key)]; e; e = e->hnext)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

void answer_cache_free(struct answer_cache *c)
{
	if (!c)
		return;
	drop_all(c);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

bool answer_cache_key(const char *path, const struct query_arg *args, size_t n,
		      char buf[static ANSWER_CACHE_KEY_MAX + 1])
{
	size_t len = 0, i;
	int w;

	w = snprintf(buf, ANSWER_CACHE_KEY_MAX + 1, "%s", path);
	if (w < 0 || (size_t)w > ANSWER_CACHE_KEY_MAX)
		return false;
	len = (size_t)w;
	for (i = 0; i < n; i++) {
		/* '\x01' apart: no value's bytes can make two different queries one key */
		w = snprintf(buf + len, ANSWER_CACHE_KEY_MAX + 1 - len, "%c%s\x01%s",
			     i ? '\x02' : '?', args[i].key, args[i].value ? args[i].value : "");
		if (w < 0 || (size_t)w > ANSWER_CACHE_KEY_MAX - len)
			return false;
		len += (size_t)w;
	}
	return true;
}

void answer_add_validators(struct MHD_Response *resp, const char *etag)
{
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
	/* kept, but asked again each time: a job's answer changes until it ends */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
}

enum MHD_Result answer_not_modified(struct MHD_Connection *mc, const char *etag)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	answer_add_validators(resp, etag);
	ret = MHD_queue_response(mc, MHD_HTTP_NOT_MODIFIED, resp);
	MHD_destroy_response(resp);
	return ret;
}

bool answer_cache_serve(struct answer_cache *c, const char *key, uint64_t epoch,
			struct MHD_Connection *mc, const char *if_none_match, unsigned *ret_status,
			enum MHD_Result *ret)
{
	char etag[ETAG_LEN];
	struct entry *e;

	pthread_mutex_lock(&c->lock);
	sync_epoch(c, epoch);
	e = find(c, key);
	if (!e) {
		pthread_mutex_unlock(&c->lock);
		return false;
	}
	list_unlink(c, e);
	list_push_front(c, e);
	if (etag_listed(if_none_match, e->etag)) {
		memcpy(etag, e->etag, sizeof(etag));
		pthread_mutex_unlock(&c->lock);
		*ret_status = MHD_HTTP_NOT_MODIFIED;
		*ret = answer_not_modified(mc, etag);
		return true;
	}
	*ret_status = MHD_HTTP_OK;
	*ret = MHD_queue_response(mc, MHD_HTTP_OK, e->resp);
	pthread_mutex_unlock(&c->lock);
	return true;
}

void answer_cache_put(struct answer_cache *c, const char *key, uint64_t epoch,
		      struct MHD_Response *resp, const char *etag, size_t bytes)
{
	size_t key_len = strlen(key);
	struct entry *e;

	if (bytes > c->max_bytes / 4 || key_len > ANSWER_CACHE_KEY_MAX) {
		MHD_destroy_response(resp);
		return;
	}
	pthread_mutex_lock(&c->lock);
	/* jobs were removed since the body was read: it may be one of them */
	if (epoch < c->epoch) {
		pthread_mutex_unlock(&c->lock);
		MHD_destroy_response(resp);
		return;
	}
	sync_epoch(c, epoch);
	if (find(c, key)) {
		/* another thread built the same answer first */
		pthread_mutex_unlock(&c->lock);
		MHD_destroy_response(resp);
		return;
	}
	e = malloc(sizeof(*e) + key_len + 1);
	if (!e) {
		pthread_mutex_unlock(&c->lock);
		MHD_destroy_response(resp);
		return;
	}
	memcpy(e->key, key, key_len + 1);
	memcpy(e->etag, etag, ETAG_LEN);
	e->resp = resp;
	e->bytes = bytes;
	e->hnext = c->buckets[bucket_of(key)];
	c->buckets[bucket_of(key)] = e;
	list_push_front(c, e);
	c->bytes += bytes;
	while (c->bytes > c->max_bytes && c->tail != e)
		entry_drop(c, c->tail);
	pthread_mutex_unlock(&c->lock);
}
