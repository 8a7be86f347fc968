// SPDX-License-Identifier: MIT
/*
 * The HTTP transport: libmicrohttpd with a small pool of internal threads,
 * a bounded number of connections, an idle timeout, and request bodies
 * collected up to cfg->max_body. Everything about what a request means is
 * in routes.c.
 */
#include "api/http.h"
#include "api/routes.h"
#include "daemon/log.h"
#include "daemon/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define HTTP_THREADS 4
#define HTTP_CONNECTIONS_MAX 64
#define HTTP_TIMEOUT_S 30
#define HTTP_BACKLOG 64
#define HTTP_MAX_BODY_DEFAULT (64 * 1024)
/* A chunked body past the limit is read and dropped up to this, then the connection is cut. */
#define HTTP_DISCARD_MAX (1024 * 1024)

struct http_server {
	struct MHD_Daemon *mhd;
	struct api_ctx *ctx;
	struct api_stats stats;
	size_t max_body;
	unsigned port;
};

/* Per request, kept by MHD in *req_cls. */
struct request_state {
	char *body;
	size_t len;
	bool too_large;
	size_t discarded;
};

static void request_state_free(struct request_state *st)
{
	if (!st)
		return;
	free(st->body);
	free(st);
}

/* ---- listening address ---- */

/* "ADDR:PORT" or "[ADDR6]:PORT" into a socket address; port 0 allowed. */
static int parse_listen(const char *address, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	_cleanup_free_ char *host = NULL;
	const char *colon, *port_str;
	struct sockaddr_storage ss = {};
	char *end;
	long port;

	if (!address)
		return -EINVAL;
	if (address[0] == '[') {
		const char *close = strchr(address, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		host = strndup(address + 1, close - address - 1);
		port_str = close + 2;
	} else {
		colon = strrchr(address, ':');
		if (!colon)
			return -EINVAL;
		host = strndup(address, colon - address);
		port_str = colon + 1;
	}
	if (!host)
		return -ENOMEM;
	errno = 0;
	port = strtol(port_str, &end, 10);
	if (!*port_str || *end || errno || port < 0 || port > 65535)
		return -EINVAL;

	if (address[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		*ret_len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		*ret_len = sizeof(*a);
	}
	*ret = ss;
	return 0;
}

/* Our own listening socket, so that bind errors come back as errno. */
static int open_listener(const char *address, unsigned *ret_port, int *ret_fd)
{
	struct sockaddr_storage ss, bound;
	socklen_t len, blen = sizeof(bound);
	_cleanup_close_ int fd = -1;
	int one = 1, r;

	r = parse_listen(address, &ss, &len);
	if (r < 0)
		return r;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, HTTP_BACKLOG) < 0 ||
	    getsockname(fd, (struct sockaddr *)&bound, &blen) < 0)
		return -errno;
	*ret_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						      : ((struct sockaddr_in *)&bound)->sin_port);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* ---- replies ---- */

static enum MHD_Result send_response(struct http_server *h, struct MHD_Connection *c,
				     struct api_response *r)
{
	struct MHD_Response *resp;
	const char *type = "application/json";
	enum MHD_Result ret;
	char *text;

	if (r->text) {
		text = TAKE_PTR(r->text);
		type = r->content_type ? r->content_type : "text/plain; charset=utf-8";
	} else {
		char *dumped = r->json ? api_dump(r->json) : NULL;

		/* one newline at the end: friendlier to curl in a terminal */
		text = dumped ? xasprintf("%s\n", dumped) : xstrdup("{}\n");
		free(dumped);
	}
	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* pages carry data from jobs: no scripts, no fetches, only their own inline style */
	if (strncmp(type, "text/html", 9) == 0)
		MHD_add_response_header(resp, "Content-Security-Policy",
					"default-src 'none'; style-src 'unsafe-inline'");
	if (r->location)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
	if (r->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);

	api_stats_count(&h->stats, r->status);
	ret = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_error(struct http_server *h, struct MHD_Connection *c, unsigned status,
				  const char *code, const char *message)
{
	struct api_response r = {};
	enum MHD_Result ret;

	api_response_error(&r, status, code, message);
	ret = send_response(h, c, &r);
	api_response_clear(&r);
	return ret;
}

static enum MHD_Result send_too_large(struct http_server *h, struct MHD_Connection *c)
{
	_cleanup_free_ char *msg =
	    xasprintf("the request body is larger than %zu bytes", h->max_body);

	return send_error(h, c, 413, "body_too_large", msg);
}

/* ---- requests ---- */

/*
 * JSON, a missing type, and curl's default for -d (form encoding, which
 * is what "curl -d '{...}'" sends) are accepted; any other type is 415.
 */
static bool acceptable_type(const char *type)
{
	static const char *const ok[] = {"application/json", "application/x-www-form-urlencoded"};
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		n = strlen(ok[i]);
		if (strncasecmp(type, ok[i], n) == 0 &&
		    (type[n] == 0 || type[n] == ';' || type[n] == ' '))
			return true;
	}
	return false;
}

struct arg_collector {
	struct query_arg args[API_QUERY_ARGS_MAX + 1];
	size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct arg_collector *a = cls;

	/* one past the limit is kept so that validation can refuse "too many" */
	if (a->n < ARRAY_SIZE(a->args))
		a->args[a->n++] = (struct query_arg){key, value};
	return a->n < ARRAY_SIZE(a->args) ? MHD_YES : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct http_server *h = cls;
	struct request_state *st = *req_cls;
	struct arg_collector args = {};
	struct api_response resp = {};
	struct api_request req;
	enum MHD_Result ret;

	if (!st) {
		/* headers are in: refuse what cannot succeed before reading any body */
		const char *length =
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		const char *type =
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);

		st = calloc(1, sizeof(*st));
		if (!st)
			return MHD_NO;
		*req_cls = st;
		if (length && strtoull(length, NULL, 10) > h->max_body)
			return send_too_large(h, c);
		if (type && strcmp(method, "POST") == 0 && !acceptable_type(type))
			return send_error(h, c, 415, "unsupported_media_type",
					  "send the body as application/json");
		return MHD_YES;
	}

	if (*upload_size > 0) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (!st->too_large && st->len + n <= h->max_body) {
			char *p = realloc(st->body, st->len + n);

			if (!p)
				return MHD_NO;
			memcpy(p + st->len, upload, n);
			st->body = p;
			st->len += n;
			return MHD_YES;
		}
		/* a chunked body past the limit: drop it, answer 413 at its end, or cut it */
		st->too_large = true;
		free(TAKE_PTR(st->body));
		st->discarded += n;
		return st->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (st->too_large)
		return send_too_large(h, c);

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	req = (struct api_request){
	    .method = method,
	    .path = url,
	    .args = args.args,
	    .n_args = args.n,
	    .body = st->body,
	    .body_len = st->len,
	};
	routes_handle(h->ctx, &h->stats, &req, &resp);
	ret = send_response(h, c, &resp);
	api_response_clear(&resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	request_state_free(*req_cls);
	*req_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	_cleanup_free_ char *line = NULL;
	size_t n;

	if (vasprintf(&line, fmt, ap) < 0)
		return;
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = 0;
	log_warning("http: %s", line);
}

/* ---- public ---- */

int http_start(const char *listen, struct api_ctx *ctx, struct http_server **ret)
{
	struct http_server *h;
	unsigned port = 0;
	int fd = -1, r;

	if (!ctx || !ctx->store)
		return -EINVAL;
	r = open_listener(listen, &port, &fd);
	if (r < 0)
		return log_error_errno(r, "http: cannot listen on %s: %m",
				       listen ? listen : "(null)");

	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->ctx = ctx;
	h->port = port;
	h->max_body = ctx->cfg && ctx->cfg->max_body ? ctx->cfg->max_body : HTTP_MAX_BODY_DEFAULT;

	h->mhd = MHD_start_daemon(
	    MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG, 0, NULL, NULL,
	    on_request, h,
	    /* the logger first, so that MHD's own messages about later options reach it */
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)HTTP_CONNECTIONS_MAX, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
	if (!h->mhd) {
		r = errno > 0 ? -errno : -EIO;
		close(fd);
		free(h);
		return log_error_errno(r, "http: cannot start the server on %s: %m", listen);
	}
	log_info("http: listening on %s (port %u)", listen, port);
	*ret = h;
	return 0;
}

unsigned http_port(const struct http_server *h)
{
	return h ? h->port : 0;
}

void http_stop(struct http_server *h)
{
	MHD_socket fd;

	if (!h)
		return;
	/* stop accepting first; MHD_stop_daemon then lets the threads finish their requests */
	fd = MHD_quiesce_daemon(h->mhd);
	MHD_stop_daemon(h->mhd);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	free(h);
}
