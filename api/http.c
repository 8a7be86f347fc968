// SPDX-License-Identifier: MIT
/*
 * The HTTP transport: one libmicrohttpd daemon per listener (TCP for
 * dashboards, a Unix socket for control), each with a small pool of epoll
 * threads, request bodies collected up to cfg->max_body, and the rules of
 * who may ask (access.h) applied before a body is read. Everything about
 * what a request means is in routes.c.
 *
 * Availability: a connection costs no thread, so the limits are on
 * connections (many on each listener, a few per uid on the socket) and on
 * time. Every connection is tracked from accept to close with a deadline
 * for its current phase (headers, body, answer, waiting for the next
 * request); a reaper thread shuts down the socket of one that overruns it,
 * which MHD then closes. MHD's own timeout only counts idle time, which a
 * client that sends a byte now and then never reaches.
 *
 * Answers to GET carry an ETag, and If-None-Match gets 304. A finished
 * job's answers are kept built (answer_cache.h). A long poll (a route's
 * wait_s) suspends its connection, and the reaper resumes it when the store
 * has written a job since or its time is up; the route is then asked again.
 */
#include "api/http.h"
#include "api/answer_cache.h"
#include "api/etag.h"
#include "api/routes.h"
#include "daemon/log.h"
#include "daemon/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define HTTP_THREADS 4
/* per listener; a few fds each, argusd raises its RLIMIT_NOFILE to fit both */
#define HTTP_CONNECTIONS_MAX 1024
/* connections one uid may hold on the control socket at once */
#define HTTP_UNIX_PER_UID_MAX 32
/* MHD's idle timeout, behind the deadlines below */
#define HTTP_TIMEOUT_S 60
#define HTTP_BACKLOG 1024
#define HTTP_MAX_BODY_DEFAULT (64 * 1024)
/* A chunked body past the limit is read and dropped up to this, then the connection is cut. */
#define HTTP_DISCARD_MAX (1024 * 1024)
/* Deadlines of a connection's phases: a request's headers, its body, the answer. */
#define HTTP_HEADER_DEADLINE_S 5
#define HTTP_BODY_DEADLINE_S 5
#define HTTP_ANSWER_DEADLINE_S 60
#define HTTP_REAPER_TICK_MS 200
/* how long a stop waits for the long polls it resumed to be answered */
#define HTTP_STOP_ANSWER_MS 2000
/* MHD's own messages (one per refused connection under a flood) at most this many a second */
#define HTTP_LOG_PER_S 10

#define NS_PER_S 1000000000ull

struct http_server;

struct listener {
	struct http_server *h;
	enum api_listener kind;
	struct MHD_Daemon *mhd;
};

/* One accepted connection, from MHD's NOTIFY_STARTED to NOTIFY_CLOSED. */
struct conn {
	struct conn *prev, *next;
	struct listener *l;
	int fd;
	struct api_caller caller; /* socket peers; TCP callers are decided per request */
	bool counted;		  /* holds one of its uid's connection slots */
	bool cut;		  /* shut down by the reaper */
	_Atomic uint64_t deadline_ns;
};

struct uid_count {
	uid_t uid;
	unsigned n;
};

struct http_server {
	struct api_ctx *ctx;
	struct api_stats stats;
	size_t max_body;
	unsigned port;
	char *listen_host; /* the TCP listener's address as a Host header names it */
	char *unix_path;
	dev_t unix_dev;
	ino_t unix_ino;
	char *token;
	bool have_group;
	gid_t api_gid;
	uid_t self_uid;
	struct listener tcp, local;

	pthread_mutex_t lock; /* the connection list and the per-uid counts */
	struct conn *conns;
	struct uid_count *uids;
	size_t n_uids, cap_uids;

	pthread_t reaper;
	bool reaper_started;
	bool stopping;
	pthread_cond_t wake;

	struct answer_cache *cache;
	/*
	 * The suspended long polls. Its own lock, taken around MHD's suspend and
	 * resume and never with h->lock held, which MHD's callbacks take.
	 */
	pthread_mutex_t wait_lock;
	struct request_state *waiters;
	bool waits_closed; /* stopping: no request waits any more */
	atomic_uint closing; /* long polls resumed to be answered before the stop */
};

/* Per request, kept by MHD in *req_cls. */
struct request_state {
	char *body;
	size_t len;
	bool too_large;
	size_t discarded;
	struct api_caller caller;

	/* a long poll: asked first at wait_deadline_ns - wait_s, answered by the deadline */
	uint64_t wait_deadline_ns;
	char baseline[ETAG_LEN]; /* the body it waits to change from, without If-None-Match */
	/* while suspended (on h->waiters): its connection, the store's write count then */
	struct MHD_Connection *mc;
	uint64_t writes_seen;
	struct request_state *wprev, *wnext;
	bool closing; /* resumed by the stop: counted in h->closing until completed */
};

/* What the transport knows of a request that routes does not: for the answer. */
struct ask {
	bool reading;		   /* GET or HEAD */
	const char *if_none_match; /* the header, or NULL */
	const char *key;	   /* its cache key, NULL when it has none */
	uint64_t epoch, writes;	   /* the store's counters before the route read anything */
};

static void request_state_free(struct request_state *st)
{
	if (!st)
		return;
	free(st->body);
	free(st);
}

/* ---- listening addresses ---- */

/* "ADDR:PORT" or "[ADDR6]:PORT" into a socket address and its host part; port 0 allowed. */
static int parse_listen(const char *address, struct sockaddr_storage *ret, socklen_t *ret_len,
			char **ret_host)
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
	if (ret_host)
		*ret_host = address[0] == '[' ? xasprintf("[%s]", host) : TAKE_PTR(host);
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

bool http_listen_is_loopback(const char *listen)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_listen(listen, &ss, &len, NULL) == 0 && is_loopback(&ss);
}

int http_listen_check(const char *listen, bool have_token)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int r = parse_listen(listen, &ss, &len, NULL);

	if (r < 0)
		return r;
	return is_loopback(&ss) || have_token ? 0 : -EPERM;
}

static bool is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Our own listening socket, so that bind errors come back as errno. */
static int open_tcp_listener(const char *address, bool have_token, unsigned *ret_port,
			     char **ret_host, int *ret_fd)
{
	struct sockaddr_storage ss, bound;
	socklen_t len, blen = sizeof(bound);
	_cleanup_free_ char *host = NULL;
	_cleanup_close_ int fd = -1;
	int one = 1, r;

	r = parse_listen(address, &ss, &len, &host);
	if (r < 0)
		return r;
	/* writes need the token anywhere, but an exposed listener without one is a mistake */
	if (!is_loopback(&ss) && !have_token)
		return -EPERM;
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
	/* a wildcard address is no name a client puts in Host */
	*ret_host = is_wildcard(&ss) ? NULL : TAKE_PTR(host);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* Whether something accepts connections at the socket path (a live argusd). */
static bool unix_alive(const struct sockaddr_un *sa)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	return fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
}

/*
 * The control socket at path: a stale socket there is replaced, any other
 * file is left alone (-EEXIST). Owner root (argusd), group gid when given,
 * mode 0660 (0600 without a group) set before listen(2): nobody connects
 * before the permissions hold. The parent directory is made (0755) when
 * missing, as /run/argusd is outside systemd. *ret_group_ok false when the
 * group could not be given to the socket (it is then 0600).
 */
static int open_unix_listener(const char *path, bool have_group, gid_t gid, bool *ret_group_ok,
			      dev_t *ret_dev, ino_t *ret_ino, int *ret_fd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *parent = NULL;
	_cleanup_close_ int fd = -1;
	bool group_ok = have_group;
	struct stat st;
	char *slash;

	if (!path || path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);

	parent = xstrdup(path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unix_alive(&sa))
			return -EADDRINUSE;
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
	} else if (errno != ENOENT) {
		return -errno;
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* the socket file is made with these bits (less the umask), then set exactly below */
	(void)fchmod(fd, 0600);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	if (group_ok && lchown(path, (uid_t)-1, gid) < 0)
		group_ok = false;
	if (chmod(path, group_ok ? 0660 : 0600) < 0 || listen(fd, HTTP_BACKLOG) < 0 ||
	    lstat(path, &st) < 0) {
		int err = -errno;

		(void)unlink(path);
		return err;
	}
	*ret_group_ok = group_ok;
	*ret_dev = st.st_dev;
	*ret_ino = st.st_ino;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* ---- long polls ---- */

/*
 * Whether a request allowed to wait wait_s seconds (r->wait_s) should wait
 * for a body other than the one of tag etag: until its deadline, while
 * that is the body the caller has (If-None-Match names it) or, without the
 * header, the body there was when it first asked.
 */
static bool wait_more(struct request_state *st, const char *if_none_match, const char *etag,
		      unsigned wait_s)
{
	uint64_t now = now_mono_ns();

	if (!st->wait_deadline_ns) {
		st->wait_deadline_ns = now + (uint64_t)wait_s * NS_PER_S;
		memcpy(st->baseline, etag, ETAG_LEN);
	}
	if (now >= st->wait_deadline_ns)
		return false;
	return if_none_match ? etag_listed(if_none_match, etag) : strcmp(st->baseline, etag) == 0;
}

/* Suspend c until wake_waiters resumes it; false (answer now) once waits are closed. */
static bool suspend(struct http_server *h, struct MHD_Connection *c, struct conn *conn,
		    struct request_state *st, uint64_t writes)
{
	/* the reaper's cut stays behind the wait's end */
	atomic_store(&conn->deadline_ns, st->wait_deadline_ns + HTTP_ANSWER_DEADLINE_S * NS_PER_S);
	pthread_mutex_lock(&h->wait_lock);
	if (h->waits_closed) {
		pthread_mutex_unlock(&h->wait_lock);
		return false;
	}
	st->mc = c;
	st->writes_seen = writes;
	MHD_suspend_connection(c);
	st->wprev = NULL;
	st->wnext = h->waiters;
	if (h->waiters)
		h->waiters->wprev = st;
	h->waiters = st;
	pthread_mutex_unlock(&h->wait_lock);
	return true;
}

/*
 * Resume the long polls that may have something new (the store has written
 * a job since they asked) or whose time is up; every one, and no more
 * waiting after, when close is set. Never under h->lock.
 */
static void wake_waiters(struct http_server *h, bool close)
{
	uint64_t now = now_mono_ns(), writes = store_job_writes(h->ctx->store);
	struct request_state *st, *next;

	pthread_mutex_lock(&h->wait_lock);
	if (close)
		h->waits_closed = true;
	for (st = h->waiters; st; st = next) {
		next = st->wnext;
		if (!close && st->writes_seen == writes && now < st->wait_deadline_ns)
			continue;
		if (st->wprev)
			st->wprev->wnext = st->wnext;
		else
			h->waiters = st->wnext;
		if (st->wnext)
			st->wnext->wprev = st->wprev;
		st->wprev = st->wnext = NULL;
		if (close) {
			st->closing = true;
			atomic_fetch_add(&h->closing, 1);
		}
		MHD_resume_connection(st->mc);
	}
	pthread_mutex_unlock(&h->wait_lock);
}

/* ---- connections ---- */

static void conn_set_deadline(struct conn *c, unsigned seconds)
{
	atomic_store(&c->deadline_ns, now_mono_ns() + seconds * NS_PER_S);
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* The peer's uid and whether it is an admin (uid 0, argusd's uid, a member of api_group). */
static void read_peer(struct http_server *h, int fd, uid_t *ret_uid, bool *ret_admin)
{
	_cleanup_free_ gid_t *groups = NULL;
	socklen_t len = sizeof(struct ucred);
	struct ucred uc;
	size_t n = 0;

	*ret_admin = false;
	*ret_uid = (uid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0 || len != sizeof(uc))
		return;
	*ret_uid = uc.uid;
	if (uc.uid == 0 || uc.uid == h->self_uid) {
		*ret_admin = true;
		return;
	}
	/*
	 * The supplementary groups as they were at connect(2), like the uid:
	 * neither /proc/PID (the pid may be reused) nor the group database
	 * (what the user would get at a new login) says what this peer has.
	 */
	if (h->have_group) {
		len = 64 * sizeof(gid_t);
		for (int tries = 0; tries < 2; tries++) {
			gid_t *g = realloc(groups, len ? len : sizeof(gid_t));

			if (!g)
				return;
			groups = g;
			if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
				n = len / sizeof(gid_t);
				break;
			}
			if (errno != ERANGE)
				break;
		}
	}
	*ret_admin = access_in_group(uc.gid, groups, n, h->have_group, h->api_gid);
}

/* Take one of uid's connection slots; false when it has them all. Under h->lock. */
static bool uid_take(struct http_server *h, uid_t uid)
{
	size_t i;

	for (i = 0; i < h->n_uids; i++)
		if (h->uids[i].uid == uid) {
			if (h->uids[i].n >= HTTP_UNIX_PER_UID_MAX)
				return false;
			h->uids[i].n++;
			return true;
		}
	if (h->n_uids == h->cap_uids) {
		size_t cap = h->cap_uids ? h->cap_uids * 2 : 8;
		struct uid_count *p = realloc(h->uids, cap * sizeof(*p));

		if (!p)
			return false;
		h->uids = p;
		h->cap_uids = cap;
	}
	h->uids[h->n_uids++] = (struct uid_count){uid, 1};
	return true;
}

static void uid_put(struct http_server *h, uid_t uid)
{
	size_t i;

	for (i = 0; i < h->n_uids; i++)
		if (h->uids[i].uid == uid) {
			if (--h->uids[i].n == 0)
				h->uids[i] = h->uids[--h->n_uids];
			return;
		}
}

/*
 * A connection over its uid's limit is answered at once, before MHD reads
 * anything from it, and shut down: it holds no slot and costs no time.
 */
static void refuse_over_limit(struct http_server *h, int fd, uid_t uid)
{
	_cleanup_free_ char *body =
	    xasprintf("{\"error\":{\"code\":\"too_many_connections\",\"message\":\"uid %u has %d "
		      "connections open to argusd's socket, the most one user may; close some and "
		      "retry\"}}\n",
		      (unsigned)uid, HTTP_UNIX_PER_UID_MAX);
	_cleanup_free_ char *reply =
	    xasprintf("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
		      "Retry-After: %d\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
		      HTTP_HEADER_DEADLINE_S, strlen(body), body);

	(void)!send(fd, reply, strlen(reply), MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)shutdown(fd, SHUT_RDWR);
	api_stats_count(&h->stats, 429);
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct listener *l = cls;
	struct http_server *h = l->h;
	struct conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		pthread_mutex_lock(&h->lock);
		if (c->prev)
			c->prev->next = c->next;
		else
			h->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		if (c->counted)
			uid_put(h, c->caller.uid);
		pthread_mutex_unlock(&h->lock);
		free(c);
		*socket_context = NULL;
		return;
	}

	{
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		bool admin = false, over = false;
		uid_t uid = (uid_t)-1;

		if (!ci)
			return;
		c = calloc(1, sizeof(*c));
		if (!c) {
			/* untracked, it would have no deadline: not kept */
			(void)shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		c->l = l;
		c->fd = ci->connect_fd;
		conn_set_deadline(c, HTTP_HEADER_DEADLINE_S);
		if (l->kind == API_LISTENER_UNIX) {
			read_peer(h, c->fd, &uid, &admin);
			access_caller_unix(&c->caller, uid, admin);
		} else {
			access_caller_tcp(&c->caller, false);
		}

		pthread_mutex_lock(&h->lock);
		if (l->kind == API_LISTENER_UNIX) {
			c->counted = uid_take(h, uid);
			over = !c->counted;
		}
		c->next = h->conns;
		if (h->conns)
			h->conns->prev = c;
		h->conns = c;
		if (over)
			c->cut = true;
		pthread_mutex_unlock(&h->lock);
		if (over)
			refuse_over_limit(h, c->fd, uid);
		*socket_context = c;
	}
}

/*
 * Shut down every connection past its deadline; MHD sees the end and closes
 * it. And each tick, the long polls that may be answered are resumed.
 */
static void *reaper(void *arg)
{
	struct http_server *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		struct timespec ts;
		uint64_t now = now_mono_ns();
		struct conn *c;

		/* under the lock, a listed connection's fd is still its own (closed after
		 * NOTIFY_CLOSED) */
		for (c = h->conns; c; c = c->next) {
			uint64_t deadline = atomic_load(&c->deadline_ns);

			if (!c->cut && deadline && now > deadline) {
				(void)shutdown(c->fd, SHUT_RDWR);
				c->cut = true;
			}
		}
		pthread_mutex_unlock(&h->lock);
		wake_waiters(h, false);
		pthread_mutex_lock(&h->lock);
		if (h->stopping)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += HTTP_REAPER_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->wake, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* ---- replies ---- */

/* The body of r as text (r's text taken, or its JSON dumped) and its type. */
static char *response_text(struct api_response *r, const char **ret_type)
{
	char *dumped;
	char *text;

	if (r->text) {
		*ret_type = r->content_type ? r->content_type : "text/plain; charset=utf-8";
		return TAKE_PTR(r->text);
	}
	*ret_type = "application/json";
	dumped = r->json ? api_dump(r->json) : NULL;
	/* one newline at the end: friendlier to curl in a terminal */
	text = dumped ? xasprintf("%s\n", dumped) : xstrdup("{}\n");
	free(dumped);
	return text;
}

/* The reply to r with body text (taken) and its headers; etag NULL: not to be kept. */
static struct MHD_Response *build_response(const struct api_response *r, char *text,
					   const char *type, const char *etag)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (etag)
		answer_add_validators(resp, etag);
	else
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
	if (r->authenticate)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, r->authenticate);
	if (r->status == 429 || r->status == 503) {
		unsigned s = r->status == 429 ? API_RETRY_AFTER_429_S : API_RETRY_AFTER_503_S;
		char secs[16];

		if (r->retry_after)
			s = r->retry_after;
		snprintf(secs, sizeof(secs), "%u", s);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	}
	return resp;
}

static enum MHD_Result send_response(struct http_server *h, struct MHD_Connection *c,
				     struct api_response *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	const char *type;
	char *text;

	text = response_text(r, &type);
	resp = build_response(r, text, type, NULL);
	if (!resp)
		return MHD_NO;
	api_stats_count(&h->stats, r->status);
	ret = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * Answer a request that routes has handled. A 200 to a GET or HEAD carries
 * an ETag and is 304 when If-None-Match names it; a route's wait suspends
 * the request while its body is still the one the caller has; a body that
 * never changes is kept (answer_cache.h). *ret_suspended: nothing was
 * queued, MHD will ask again.
 */
static enum MHD_Result answer(struct http_server *h, struct MHD_Connection *c, struct conn *conn,
			      struct request_state *st, struct api_response *r,
			      const struct ask *ask)
{
	struct MHD_Response *resp;
	char etag[ETAG_LEN];
	enum MHD_Result ret;
	const char *type;
	size_t len;
	char *text;

	if (!ask->reading || r->status != MHD_HTTP_OK)
		return send_response(h, c, r);
	text = response_text(r, &type);
	len = strlen(text);
	etag_of(text, len, etag);
	if (r->wait_s && wait_more(st, ask->if_none_match, etag, r->wait_s) &&
	    suspend(h, c, conn, st, ask->writes)) {
		free(text);
		return MHD_YES;
	}
	if (etag_listed(ask->if_none_match, etag)) {
		free(text);
		api_stats_count(&h->stats, MHD_HTTP_NOT_MODIFIED);
		return answer_not_modified(c, etag);
	}
	resp = build_response(r, text, type, etag);
	if (!resp)
		return MHD_NO;
	api_stats_count(&h->stats, r->status);
	ret = MHD_queue_response(c, r->status, resp);
	if (r->immutable && ask->key && ret == MHD_YES)
		answer_cache_put(h->cache, ask->key, ask->epoch, resp, etag, len);
	else
		MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_error(struct http_server *h, struct MHD_Connection *c, unsigned status,
				  const char *code, const char *message)
{
	struct api_response r = {};
	enum MHD_Result ret;

	api_response_error(&r, status, code, message);
	if (status == 401)
		r.authenticate = "Bearer realm=\"argusd\"";
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

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/*
 * The rules that hold before any body is read: the Host and Origin a
 * browser would send, who the caller is and whether this listener lets it
 * write, and what the body may be. false when the request may go on; true
 * with the refusal queued (MHD's answer in *ret) otherwise.
 */
static bool refuse_early(struct http_server *h, struct MHD_Connection *c, struct conn *conn,
			 const char *method, struct request_state *st, enum MHD_Result *ret)
{
	const struct config *cfg = h->ctx->cfg;
	const char *host = header(c, MHD_HTTP_HEADER_HOST);
	const char *origin = header(c, "Origin");
	const char *length = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *type = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	bool read_only = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	_cleanup_free_ char *msg = NULL;
	struct api_error e;

	/* api_error_set: the caller's bytes quoted, cut, and fit for JSON */
	if (!access_host_allowed(host, cfg ? cfg->api_hostnames : NULL,
				 conn->l->kind == API_LISTENER_TCP ? h->listen_host : NULL)) {
		api_error_set(&e, 421, "misdirected_request",
			      "Host \"%.*s\" is not a name of this argusd: use localhost, "
			      "127.0.0.1 or [::1], or list it in api_hostnames",
			      API_QUOTE_MAX, host);
		*ret = send_error(h, c, e.status, e.code, e.message);
		return true;
	}
	if (!access_origin_allowed(origin, cfg ? cfg->api_origins : NULL)) {
		api_error_set(&e, 403, "origin_not_allowed",
			      "requests from the page at %.*s are not accepted; list the origin in "
			      "api_origins to allow it",
			      API_QUOTE_MAX, origin);
		*ret = send_error(h, c, e.status, e.code, e.message);
		return true;
	}

	if (conn->l->kind == API_LISTENER_UNIX) {
		st->caller = conn->caller;
		if (!st->caller.admin) {
			msg = xasprintf("uid %u may not use argusd: the control socket is for root "
					"and the members of group %s",
					(unsigned)st->caller.uid,
					cfg && cfg->api_group ? cfg->api_group : "(none)");
			*ret = send_error(h, c, 403, "forbidden", msg);
			return true;
		}
	} else {
		bool token = h->token &&
			     access_bearer_ok(header(c, MHD_HTTP_HEADER_AUTHORIZATION), h->token);

		access_caller_tcp(&st->caller, token);
		if (!read_only && !h->token) {
			msg = xasprintf("this listener serves GET and HEAD only; write through the "
					"control socket%s%s, or configure api_token_file",
					h->unix_path ? " " : "", h->unix_path ? h->unix_path : "");
			*ret = send_error(h, c, 403, "read_only", msg);
			return true;
		}
		if (!read_only && !token) {
			*ret = send_error(h, c, 401, "unauthorized",
					  "writes over TCP need the header \"Authorization: Bearer "
					  "<token>\" with the token of api_token_file");
			return true;
		}
	}

	if (length && strtoull(length, NULL, 10) > h->max_body) {
		/*
		 * Read and dropped when not too large, then answered: a client
		 * still sending when the connection closes (a Unix socket's
		 * buffer is small) may never read an early answer.
		 */
		if (strtoull(length, NULL, 10) <= HTTP_DISCARD_MAX) {
			st->too_large = true;
			return false;
		}
		*ret = send_too_large(h, c);
		return true;
	}
	/* a form or a text/plain body is what a cross-site page can send without asking */
	if (strcmp(method, "POST") == 0 && !access_json_type(type)) {
		*ret = send_error(h, c, 415, "unsupported_media_type",
				  "send the body as application/json (Content-Type: "
				  "application/json)");
		return true;
	}
	return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct listener *l = cls;
	struct http_server *h = l->h;
	struct request_state *st = *req_cls;
	struct conn *conn = conn_of(c);
	struct arg_collector args = {};
	struct api_response resp = {};
	char key[ANSWER_CACHE_KEY_MAX + 1];
	struct api_request req;
	struct ask ask = {};
	enum MHD_Result ret;
	unsigned status;

	if (!conn)
		return MHD_NO;
	if (!st) {
		/* headers are in: refuse what cannot succeed before reading any body */
		st = calloc(1, sizeof(*st));
		if (!st)
			return MHD_NO;
		*req_cls = st;
		conn_set_deadline(conn, HTTP_BODY_DEADLINE_S);
		if (refuse_early(h, c, conn, method, st, &ret))
			return ret;
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
	if (!st->wait_deadline_ns)
		conn_set_deadline(conn, HTTP_ANSWER_DEADLINE_S);
	if (st->too_large)
		return send_too_large(h, c);

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	ask.reading = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	if (ask.reading) {
		ask.if_none_match = header(c, MHD_HTTP_HEADER_IF_NONE_MATCH);
		/* before the route reads: a job written or removed after is noticed */
		ask.epoch = store_job_removals(h->ctx->store);
		ask.writes = store_job_writes(h->ctx->store);
		if (answer_cache_key(url, args.args, args.n, key)) {
			ask.key = key;
			if (answer_cache_serve(h->cache, key, ask.epoch, c, ask.if_none_match,
					       &status, &ret)) {
				api_stats_count(&h->stats, status);
				return ret;
			}
		}
	}
	req = (struct api_request){
	    .method = method,
	    .path = url,
	    .args = args.args,
	    .n_args = args.n,
	    .body = st->body,
	    .body_len = st->len,
	    .caller = &st->caller,
	};
	routes_handle(h->ctx, &h->stats, &req, &resp);
	ret = answer(h, c, conn, st, &resp, &ask);
	api_response_clear(&resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct listener *l = cls;
	struct request_state *st = *req_cls;
	struct conn *conn = conn_of(c);

	/* kept alive, it has the header deadline again to send its next request */
	if (conn)
		conn_set_deadline(conn, HTTP_HEADER_DEADLINE_S);
	if (st && st->closing)
		atomic_fetch_sub(&l->h->closing, 1);
	request_state_free(*req_cls);
	*req_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	static _Atomic uint64_t window;
	static atomic_uint in_window;
	_cleanup_free_ char *line = NULL;
	uint64_t now = now_mono_ns() / NS_PER_S;
	size_t n;

	/* a flood of refused connections is one problem, not a line each */
	if (atomic_exchange(&window, now) != now)
		atomic_store(&in_window, 0);
	if (atomic_fetch_add(&in_window, 1) >= HTTP_LOG_PER_S)
		return;
	if (vasprintf(&line, fmt, ap) < 0)
		return;
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = 0;
	log_warning("http: %s", line);
}

/* ---- public ---- */

static int start_daemon(struct http_server *h, struct listener *l, int fd)
{
	l->h = h;
	l->mhd = MHD_start_daemon(
	    MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
		MHD_USE_ERROR_LOG,
	    0, NULL, NULL,
	    on_request, l,
	    /* the logger first, so that MHD's own messages about later options reach it */
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)HTTP_CONNECTIONS_MAX, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, l, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, l, MHD_OPTION_END);
	return l->mhd ? 0 : errno > 0 ? -errno : -EIO;
}

static void stop_daemon(struct listener *l)
{
	if (!l->mhd)
		return;
	/*
	 * MHD_stop_daemon stops accepting, lets the threads finish and closes
	 * the listen socket. Not MHD_quiesce_daemon first: with a pool of epoll
	 * threads it races a worker that took the listen socket out of its
	 * epoll set at the connection limit, and libmicrohttpd 0.9.75 aborts
	 * the process ("Failed to remove listen FD from epoll set").
	 */
	MHD_stop_daemon(l->mhd);
	l->mhd = NULL;
}

/* api_group's gid; false (with the reason logged) when there is none. */
static bool resolve_group(const char *name, gid_t *ret)
{
	char buf[16384];
	struct group g, *res = NULL;
	int r;

	if (!name || !*name)
		return false;
	r = getgrnam_r(name, &g, buf, sizeof(buf), &res);
	if (r != 0 || !res) {
		log_warning(
		    "http: group '%s' (api_group) %s: only root may use the control socket, "
		    "and it is 0600; create the group (the package's sysusers.d file does) "
		    "or set api_group",
		    name, r ? strerror(r) : "does not exist");
		return false;
	}
	*ret = res->gr_gid;
	return true;
}

int http_start(const struct http_options *o, struct api_ctx *ctx, struct http_server **ret)
{
	const char *group = ctx && ctx->cfg ? ctx->cfg->api_group : NULL;
	struct http_server *h;
	int tcp_fd = -1, unix_fd = -1, r;
	bool group_ok = false;

	if (!o || !ctx || !ctx->store || (!o->listen && !o->unix_path))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->ctx = ctx;
	h->self_uid = geteuid();
	h->max_body = ctx->cfg && ctx->cfg->max_body ? ctx->cfg->max_body : HTTP_MAX_BODY_DEFAULT;
	h->token = o->token ? xstrdup(o->token) : NULL;
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->wait_lock, NULL);
	r = answer_cache_new(ANSWER_CACHE_BYTES, &h->cache);
	if (r < 0) {
		pthread_mutex_destroy(&h->wait_lock);
		pthread_mutex_destroy(&h->lock);
		free(h);
		return r;
	}
	{
		pthread_condattr_t attr;

		/* the reaper's ticks are on the clock of the deadlines */
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&h->wake, &attr);
		pthread_condattr_destroy(&attr);
	}
	h->tcp.kind = API_LISTENER_TCP;
	h->local.kind = API_LISTENER_UNIX;

	if (o->listen) {
		r = open_tcp_listener(o->listen, h->token != NULL, &h->port, &h->listen_host,
				      &tcp_fd);
		if (r == -EPERM) {
			log_error(
			    "http: listen = %s is not a loopback address and no api_token_file "
			    "is set: refusing to expose the API; set api_token_file (writes "
			    "then need the token) or listen on 127.0.0.1",
			    o->listen);
			goto fail;
		}
		if (r < 0) {
			log_error_errno(r, "http: cannot listen on %s: %m", o->listen);
			goto fail;
		}
	}
	if (o->unix_path) {
		h->have_group = resolve_group(group, &h->api_gid);
		r = open_unix_listener(o->unix_path, h->have_group, h->api_gid, &group_ok,
				       &h->unix_dev, &h->unix_ino, &unix_fd);
		if (r == -EEXIST) {
			log_error("http: %s exists and is not a socket; refusing to replace it "
				  "(listen_unix)",
				  o->unix_path);
			goto fail;
		}
		if (r < 0) {
			log_error_errno(r, "http: cannot listen on socket %s: %m", o->unix_path);
			goto fail;
		}
		h->unix_path = xstrdup(o->unix_path);
		if (h->have_group && !group_ok)
			log_warning("http: cannot give %s to group %s: it is root-only (0600)",
				    o->unix_path, group);
	}

	r = -pthread_create(&h->reaper, NULL, reaper, h);
	if (r < 0) {
		log_error_errno(r, "http: cannot start the connection reaper: %m");
		goto fail;
	}
	h->reaper_started = true;
	if (tcp_fd >= 0) {
		r = start_daemon(h, &h->tcp, tcp_fd);
		if (r < 0) {
			log_error_errno(r, "http: cannot start the server on %s: %m", o->listen);
			goto fail;
		}
		tcp_fd = -1; /* MHD's now: closed by stop_daemon */
	}
	if (unix_fd >= 0) {
		r = start_daemon(h, &h->local, unix_fd);
		if (r < 0) {
			log_error_errno(r, "http: cannot start the server on %s: %m", o->unix_path);
			goto fail;
		}
		unix_fd = -1;
	}
	if (h->unix_path)
		log_info("http: control socket %s (mode %s, group %s)", h->unix_path,
			 group_ok ? "0660" : "0600", group_ok ? group : "root");
	/* last: scripts take "(port N)" as the sign that every listener is up */
	if (o->listen)
		log_info("http: listening on %s (port %u), %s", o->listen, h->port,
			 h->token ? "writes with the bearer token" : "read-only");
	*ret = h;
	return 0;

fail:
	if (tcp_fd >= 0)
		close(tcp_fd);
	if (unix_fd >= 0)
		close(unix_fd);
	http_stop(h);
	return r < 0 ? r : -EIO;
}

unsigned http_port(const struct http_server *h)
{
	return h ? h->port : 0;
}

const char *http_unix_path(const struct http_server *h)
{
	return h ? h->unix_path : NULL;
}

void http_stop(struct http_server *h)
{
	struct stat st;

	if (!h)
		return;
	/*
	 * MHD must not stop with a connection suspended: every long poll is
	 * resumed, and given a moment to be answered (with what there is now).
	 */
	wake_waiters(h, true);
	for (int i = 0; i < HTTP_STOP_ANSWER_MS / 10 && atomic_load(&h->closing) > 0; i++)
		usleep(10000);
	stop_daemon(&h->tcp);
	stop_daemon(&h->local);
	if (h->reaper_started) {
		pthread_mutex_lock(&h->lock);
		h->stopping = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->reaper, NULL);
	}
	/* only our own socket: not one that another process has put there since */
	if (h->unix_path && lstat(h->unix_path, &st) == 0 && st.st_dev == h->unix_dev &&
	    st.st_ino == h->unix_ino)
		(void)unlink(h->unix_path);
	if (h->token)
		explicit_bzero(h->token, strlen(h->token));
	free(h->token);
	free(h->unix_path);
	free(h->listen_host);
	free(h->uids);
	answer_cache_free(h->cache);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->wait_lock);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
