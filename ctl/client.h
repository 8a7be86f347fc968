/* SPDX-License-Identifier: MIT */
/*
 * argusctl's side of the HTTP API: where argusd listens (the control socket
 * or a TCP URL), the bearer token, one request and its bounded answer.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The largest answer argusctl reads; a larger body is refused. */
#define CLIENT_BODY_MAX (64u << 20)
/* Seconds one request may take, a long poll's wait included. */
#define CLIENT_TIMEOUT_S 60
#define CLIENT_ETAG_MAX 128

struct client;

struct client_opts {
	const char *socket;	/* control socket path; used when url is NULL */
	const char *url;	/* "http://HOST:PORT" (optional path prefix), or NULL */
	const char *token_file; /* bearer token, one line; NULL for none */
};

struct client_reply {
	long status;
	char *body; /* NUL terminated, as received */
	size_t len;
	json_t *json; /* the body parsed, NULL when it is not JSON */
	char etag[CLIENT_ETAG_MAX];
};

/*
 * Check the options and prepare a client: the URL must be http or https
 * with a host and no query, user or password; the socket path must fit a
 * sockaddr_un; the token file must hold 16 to 4096 visible characters on
 * one line. Returns 0 and *ret, or -errno and *ret_err (owned), a sentence
 * naming what is wrong.
 */
int client_new(const struct client_opts *o, struct client **ret, char **ret_err);
/* Free the client, the token erased first; NULL is fine. */
void client_free(struct client *c);
static inline void client_freep(struct client **c)
{
	client_free(*c);
}
#define _cleanup_client_ __attribute__((cleanup(client_freep)))

/* Call tick(userdata) about once a second while a request waits; NULL stops it. */
void client_set_tick(struct client *c, void (*tick)(void *userdata), void *userdata);

/* "the control socket /run/argusd/argusd.sock" or "http://127.0.0.1:8321", for messages. */
const char *client_where(const struct client *c);

/*
 * One request: method, path (with its query), an optional JSON body, an
 * optional If-None-Match value. Returns 0 when argusd answered, whatever
 * the status, with *ret filled (client_reply_clear frees it); -errno when
 * nothing usable came back (no connection, a timeout, a body larger than
 * CLIENT_BODY_MAX), with *ret_err (owned) saying what failed.
 */
int client_request(struct client *c, const char *method, const char *path, const json_t *body,
		   const char *if_none_match, struct client_reply *ret, char **ret_err);
void client_reply_clear(struct client_reply *r);

/*
 * client_request for an answer in JSON: a status other than 2xx (or 304
 * when if_none_match was given) is an error too, told with the API's error
 * code and message, and so is a 2xx body that is not JSON. Returns 0 with
 * *ret, or -errno with *ret_err (owned): "GET /jobs/9: 404 not_found: ...".
 */
int client_call(struct client *c, const char *method, const char *path, const json_t *body,
		const char *if_none_match, struct client_reply *ret, char **ret_err);

/* s percent-encoded for a query value (caller frees). */
char *client_escape(const char *s);
