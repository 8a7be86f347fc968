/* SPDX-License-Identifier: MIT */
/*
 * A scripted OpenAI-compatible chat-completions endpoint on loopback, for
 * tests: POST /v1/chat/completions answers as the scenario set with
 * fake_llm_set() plays it. Stateless per request: the phase, the level and
 * the attempt are read from the conversation argusd sends (the JSON of the
 * last user message with data, the assistant turns after it, the last tool
 * result), as a model would read them.
 *
 * Scenarios: "good", "verifier" (a probe the verifier rejects, then the
 * fix once the log names the problem), "forbidden" (bpf_send_signal, then
 * good), "outside" (always a hook outside the level), "oversized" (too
 * large, then not compiling, then good), "alloc_cold" (a decision naming
 * an invented function, then good), "bad_evidence" (citing ids that do
 * not exist, then good), "no_deviation" (always descending into a node
 * that does not deviate), "slow" (answers after slow_s), "429" (the first
 * request of the scenario is 429, then good), "garbage" (200 with a body
 * that is not JSON), "silent" (authors well, never calls decide),
 * "inflated" (the good probe with every count added ten times over),
 * "pointer" (the good probe with each counted slot's count set to a
 * kernel pointer's value). The hostile two use allowed helpers only.
 */
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon/util.h"

#define FAKE_BODY_MAX (8 * 1024 * 1024)

struct fake_llm {
	struct MHD_Daemon *mhd;
	unsigned port;
	pthread_mutex_t lock;
	char scenario[32];
	unsigned requests;	/* since the scenario was set */
	unsigned unauthorized;	/* requests without the expected Authorization */
	unsigned slow_s;
	char auth[256];		/* expected "Bearer ..." */
	char template_path[512]; /* tests/authored/good.bpf.c */
	char model[64];
};

/* The class -> leaf table of tree-data, as the fake model "knows" the tree. */
static const struct {
	const char *macro, *leaf;
} fake_classes[] = {
	{ "SLOT_ANON_MINOR", "kernel_paging.anon_fault.minor" },
	{ "SLOT_ANON_ZERO", "kernel_paging.anon_fault.zero_page" },
	{ "SLOT_ANON_COW", "kernel_paging.anon_fault.cow" },
	{ "SLOT_ANON_THP", "kernel_paging.anon_fault.thp" },
	{ "SLOT_FILE_CACHE", "kernel_paging.file_fault.page_cache" },
	{ "SLOT_FILE_MAJOR", "kernel_paging.file_fault.major" },
	{ "SLOT_TLB_SHOOTDOWN", "kernel_paging.tlb_shootdown" },
	{ "SLOT_RUNQ_WAIT", "kernel_scheduler.runqueue_wait" },
	{ "SLOT_MIGRATE", "kernel_scheduler.load_balance" },
	{ "SLOT_FORK", "kernel_scheduler.fork" },
	{ "SLOT_DIRECT_RECLAIM", "kernel_memory_pressure.direct_reclaim" },
	{ "SLOT_COMPACTION", "kernel_memory_pressure.compaction" },
	{ "SLOT_KSWAPD", "kernel_memory_pressure.kswapd" },
	{ "SLOT_BLOCK_QUEUE", "kernel_block_io.queue" },
	{ "SLOT_BLOCK_DEVICE", "kernel_block_io.device" },
	{ "SLOT_FUTEX", "kernel_sync.futex" },
	{ "SLOT_MMAP_LOCK", "kernel_sync.mmap_lock" },
};

static char *fake_strcat(char *a, const char *b)
{
	size_t la = a ? strlen(a) : 0, lb = strlen(b);
	char *r = realloc(a, la + lb + 1);

	if (!r)
		abort();
	memcpy(r + la, b, lb + 1);
	return r;
}

/* The good probe for a level: slot and hook macros from the data, then the template. */
static char *fake_good_source(struct fake_llm *f, const json_t *data)
{
	json_t *nodes = json_object_get(data, "nodes"), *aps = json_object_get(data, "attach_points");
	char *src = NULL, line[256], *tmpl = NULL;
	size_t i, j, n = 0;
	FILE *fp;

	for (i = 0; i < sizeof(fake_classes) / sizeof(fake_classes[0]); i++) {
		int slot = -1;

		for (j = 0; j < json_array_size(nodes); j++) {
			const char *id = json_string_value(json_object_get(json_array_get(nodes, j), "id"));
			size_t l = id ? strlen(id) : 0;

			if (id && strncmp(fake_classes[i].leaf, id, l) == 0 &&
			    (fake_classes[i].leaf[l] == 0 || fake_classes[i].leaf[l] == '.'))
				slot = json_integer_value(json_object_get(json_array_get(nodes, j), "slot"));
		}
		snprintf(line, sizeof(line), "#define %s %d\n", fake_classes[i].macro, slot);
		src = fake_strcat(src, line);
	}
	for (j = 0; j < json_array_size(aps); j++) {
		const char *ap = json_string_value(json_array_get(aps, j));

		if (ap && strncmp(ap, "tp_btf/", 7) == 0) {
			snprintf(line, sizeof(line), "#define HOOK_%s 1\n", ap + 7);
			src = fake_strcat(src, line);
		}
	}
	fp = fopen(f->template_path, "r");
	if (fp) {
		tmpl = calloc(1, 256 * 1024);
		if (tmpl)
			n = fread(tmpl, 1, 256 * 1024 - 1, fp);
		fclose(fp);
	}
	if (tmpl)
		tmpl[n] = 0;
	src = fake_strcat(src, tmpl ?: "#error no template\n");
	free(tmpl);
	return src;
}

/*
 * Hostile variants of the good probe: a wrapper around the header's
 * argus_account, put after the header's #include, that every count of the
 * template then goes through.
 */
#define FAKE_INFLATED                                                                              \
	"static __always_inline void fake_account_x10(__u32 slot, __u64 count, __u64 time_ns)\n"  \
	"{\n"                                                                                      \
	"	argus_account(slot, count * 10, time_ns);\n"                                         \
	"}\n"                                                                                      \
	"#define argus_account fake_account_x10\n"
#define FAKE_POINTER                                                                               \
	"static __always_inline void fake_account_ptr(__u32 slot, __u64 count, __u64 time_ns)\n"  \
	"{\n"                                                                                      \
	"	struct argus_counter *c = bpf_map_lookup_elem(&counters, &slot);\n"                  \
	"\n"                                                                                       \
	"	if (!c)\n"                                                                           \
	"		return;\n"                                                                  \
	"	if (count)\n"                                                                        \
	"		c->count = 0xffff888012345678ull;\n"                                        \
	"	c->time_ns += time_ns;\n"                                                            \
	"}\n"                                                                                      \
	"#define argus_account fake_account_ptr\n"

/* The good probe with text inserted right after its #include of the header. */
static char *fake_good_with(struct fake_llm *f, const json_t *data, const char *insert)
{
	static const char include[] = "#include \"argus_authored.h\"\n";
	char *src = fake_good_source(f, data), *at = strstr(src, include), *out;
	size_t head;

	if (!at)
		return src;
	head = at - src + strlen(include);
	out = calloc(1, strlen(src) + strlen(insert) + 1);
	if (!out)
		abort();
	memcpy(out, src, head);
	strcpy(out + head, insert);
	strcat(out, src + head);
	free(src);
	return out;
}

#define FAKE_BAD_VERIFIER                                                                          \
	"#include \"argus_authored.h\"\n"                                                          \
	"SEC(\"tp_btf/page_fault_user\")\n"                                                       \
	"int BPF_PROG(on_fault, unsigned long a, struct pt_regs *r, unsigned long e)\n"            \
	"{\n"                                                                                      \
	"	__u32 tgid = bpf_get_current_pid_tgid() >> 32;\n"                                    \
	"	__u8 *t = bpf_map_lookup_elem(&targets, &tgid);\n"                                   \
	"	argus_account(0, *t, 0);\n"                                                          \
	"	return 0;\n"                                                                         \
	"}\n"
#define FAKE_FORBIDDEN                                                                             \
	"#include \"argus_authored.h\"\n"                                                          \
	"SEC(\"tp_btf/page_fault_user\")\n"                                                       \
	"int BPF_PROG(fake_evil_signal, unsigned long a, struct pt_regs *r, unsigned long e)\n"    \
	"{\n"                                                                                      \
	"	if (argus_current_is_target())\n"                                                    \
	"		bpf_send_signal(19);\n"                                                     \
	"	return 0;\n"                                                                         \
	"}\n"
#define FAKE_OUTSIDE                                                                               \
	"#include \"argus_authored.h\"\n"                                                          \
	"SEC(\"tp_btf/kmem_cache_alloc\")\n"                                                      \
	"int BPF_PROG(fake_outside)\n"                                                             \
	"{\n"                                                                                      \
	"	if (argus_current_is_target())\n"                                                    \
	"		argus_account(0, 1, 0);\n"                                                  \
	"	return 0;\n"                                                                         \
	"}\n"
#define FAKE_BROKEN "#include \"argus_authored.h\"\nint broken( { return nonsense; }\n"

/* A chat completion message with its tool calls (args2 NULL: one call) as a response body. */
static char *fake_response(json_t *msg, bool calls);

/* A chat completion carrying one tool call (or only text when tool is NULL). */
static char *fake_completion(const char *tool, json_t *args, const char *text)
{
	_cleanup_free_ char *astr = args ? json_dumps(args, JSON_COMPACT) : NULL;
	json_t *msg = json_pack("{s:s,s:s?}", "role", "assistant", "content", text);

	if (tool)
		json_object_set_new(msg, "tool_calls",
				    json_pack("[{s:s,s:s,s:{s:s,s:s}}]", "id", "call_1", "type",
					      "function", "function", "name", tool, "arguments",
					      astr ?: "{}"));
	json_decref(args);
	return fake_response(msg, tool != NULL);
}

/* Two calls of one tool in one reply. */
static char *fake_completion2(const char *tool, json_t *args1, json_t *args2)
{
	_cleanup_free_ char *a1 = json_dumps(args1, JSON_COMPACT), *a2 = json_dumps(args2, JSON_COMPACT);
	json_t *msg = json_pack("{s:s,s:n}", "role", "assistant", "content");

	json_object_set_new(msg, "tool_calls",
			    json_pack("[{s:s,s:s,s:{s:s,s:s}},{s:s,s:s,s:{s:s,s:s}}]", "id",
				      "call_1", "type", "function", "function", "name", tool,
				      "arguments", a1, "id", "call_2", "type", "function",
				      "function", "name", tool, "arguments", a2));
	json_decref(args1);
	json_decref(args2);
	return fake_response(msg, true);
}

static char *fake_response(json_t *msg, bool calls)
{
	json_t *resp;
	char *out;

	resp = json_pack("{s:s,s:s,s:[{s:i,s:o,s:s}],s:{s:i,s:i,s:i}}", "id", "fake", "object",
			 "chat.completion", "choices", "index", 0, "message", msg,
			 "finish_reason", calls ? "tool_calls" : "stop", "usage", "prompt_tokens",
			 1000, "completion_tokens", 200, "total_tokens", 1200);
	out = json_dumps(resp, JSON_COMPACT);
	json_decref(resp);
	return out;
}

/* The data of the last user message that carries JSON, its index, and what followed. */
struct fake_view {
	json_t *data; /* borrowed from the request */
	json_t *owned;
	unsigned attempt;     /* assistant turns after that message */
	const char *last_tool; /* content of the last tool message, or NULL */
};

static void fake_view_of(const json_t *req, struct fake_view *v)
{
	json_t *msgs = json_object_get(req, "messages");
	size_t i = json_array_size(msgs);

	memset(v, 0, sizeof(*v));
	while (i-- > 0) {
		json_t *m = json_array_get(msgs, i);
		const char *role = json_string_value(json_object_get(m, "role"));
		const char *content = json_string_value(json_object_get(m, "content"));

		if (role && !strcmp(role, "assistant"))
			v->attempt++;
		if (role && !strcmp(role, "tool") && !v->last_tool)
			v->last_tool = content;
		if (role && !strcmp(role, "user") && content && strstr(content, "\n\n{")) {
			v->owned = json_loads(strstr(content, "\n\n{") + 2, 0, NULL);
			v->data = v->owned;
			return;
		}
	}
}

/* The decision a careful model takes from the evidence. */
static json_t *fake_good_decision(const json_t *data)
{
	json_t *ev = json_object_get(data, "evidence"), *nodes = json_object_get(data, "nodes"), *e;
	const char *best = NULL, *best_id = NULL, *wall_id = NULL;
	double best_delta = -1;
	int level = json_integer_value(json_object_get(data, "level"));
	bool best_leaf = false, wall_slower = true;
	size_t i, j;

	json_array_foreach(ev, i, e)
	{
		const char *id = json_string_value(json_object_get(e, "id"));
		bool dev = json_is_true(json_object_get(e, "deviates"));
		double delta = json_real_value(json_object_get(e, "value")) -
			       json_real_value(json_object_get(e, "reference"));

		if (strstr(id, "/target/wall_ns")) {
			wall_id = id;
			wall_slower = dev;
			continue;
		}
		if (!dev)
			continue;
		if (strstr(id, "/count"))
			delta = json_real_value(json_object_get(e, "z")); /* behind any time */
		else
			delta += 1e12;
		if (delta <= best_delta)
			continue;
		json_array_foreach(nodes, j, e)
		{
			const char *nid = json_string_value(json_object_get(e, "id"));
			size_t l = strlen(nid);

			if (!strncmp(id + 3, nid, l) && id[3 + l] == '/' && !strchr(id + 4 + l, '/')) {
				best = nid;
				best_id = id;
				best_delta = delta;
				best_leaf = json_is_true(json_object_get(e, "leaf"));
			}
		}
	}
	if (level == 1 && wall_id && !wall_slower)
		return json_pack("{s:s,s:[s],s:s}", "action", "abstain", "evidence_ids", wall_id,
				 "rationale", "the target is not slower than its reference");
	if (best)
		return json_pack("{s:s,s:s,s:[s],s:s}", "action", best_leaf ? "commit" : "descend",
				 "node", best, "evidence_ids", best_id, "rationale",
				 "the largest deviation from the reference");
	if (json_array_size(json_object_get(data, "parent_evidence")))
		return json_pack("{s:s,s:s,s:[O],s:s}", "action", "commit", "node",
				 json_string_value(json_object_get(data, "parent")), "evidence_ids",
				 json_array_get(json_object_get(data, "parent_evidence"), 0),
				 "rationale", "nothing below deviates");
	return json_pack("{s:s,s:[s],s:s}", "action", "abstain", "evidence_ids",
			 wall_id ?: json_string_value(json_object_get(json_array_get(ev, 0), "id")),
			 "rationale", "nothing deviates");
}

/* A descend into a node of the level whose metrics do not deviate. */
static json_t *fake_unsupported_decision(const json_t *data)
{
	json_t *ev = json_object_get(data, "evidence"), *nodes = json_object_get(data, "nodes"), *n, *e;
	size_t i, j;

	json_array_foreach(nodes, i, n)
	{
		const char *nid = json_string_value(json_object_get(n, "id"));
		const char *cite = NULL;
		bool dev = false;

		json_array_foreach(ev, j, e)
		{
			const char *id = json_string_value(json_object_get(e, "id"));
			size_t l = strlen(nid);

			if (!strncmp(id + 3, nid, l) && id[3 + l] == '/') {
				cite = id;
				dev |= json_is_true(json_object_get(e, "deviates"));
			}
		}
		if (cite && !dev)
			return json_pack("{s:s,s:s,s:[s],s:s}", "action",
					 json_is_true(json_object_get(n, "leaf")) ? "commit" : "descend",
					 "node", nid, "evidence_ids", cite, "rationale",
					 "it looks suspicious");
	}
	return fake_good_decision(data);
}

/* The answer to one request: status and body; *sleep_s before answering. */
static int fake_answer(struct fake_llm *f, const char *scenario, unsigned nreq, const json_t *req,
		       char **ret_body, unsigned *sleep_s, bool *retry_after)
{
	struct fake_view v;
	const char *phase;
	int status = 200;

	*ret_body = NULL;
	if (!strcmp(scenario, "garbage")) {
		*ret_body = strdup("{\"choices\": [{\"message\": {\"role\": \"assis");
		return 200;
	}
	if (!strcmp(scenario, "429") && nreq == 1) {
		*ret_body = strdup("{\"error\": {\"message\": \"rate limited\"}}");
		*retry_after = true;
		return 429;
	}
	if (!strcmp(scenario, "slow"))
		*sleep_s = f->slow_s;
	fake_view_of(req, &v);
	phase = json_string_value(json_object_get(v.data, "phase"));
	if (!phase) {
		*ret_body = fake_completion(NULL, NULL, "I need the level's data.");
	} else if (!strcmp(phase, "author")) {
		char *src = NULL;

		if (!strcmp(scenario, "verifier") &&
		    (v.attempt == 0 || !v.last_tool || !strstr(v.last_tool, "invalid mem access")))
			src = strdup(FAKE_BAD_VERIFIER);
		else if (!strcmp(scenario, "forbidden") && v.attempt == 0)
			src = strdup(FAKE_FORBIDDEN);
		else if (!strcmp(scenario, "outside"))
			src = strdup(FAKE_OUTSIDE);
		else if (!strcmp(scenario, "inflated"))
			src = fake_good_with(f, v.data, FAKE_INFLATED);
		else if (!strcmp(scenario, "pointer"))
			src = fake_good_with(f, v.data, FAKE_POINTER);
		else if (!strcmp(scenario, "oversized") && v.attempt == 0) {
			src = calloc(1, 70 * 1024 + 64);
			strcpy(src, "#include \"argus_authored.h\"\n");
			memset(src + strlen(src), ' ', 70 * 1024);
		} else if (!strcmp(scenario, "oversized") && v.attempt == 1)
			src = strdup(FAKE_BROKEN);
		else
			src = fake_good_source(f, v.data);
		*ret_body = fake_completion("author_probe", json_pack("{s:s}", "source", src), NULL);
		free(src);
	} else {
		json_t *d;

		if (!strcmp(scenario, "silent")) {
			*ret_body = fake_completion(NULL, NULL,
						    "It is probably the page cache; I am sure.");
			json_decref(v.owned);
			return 200;
		}
		if (!strcmp(scenario, "alloc_cold") && v.attempt == 0)
			d = json_pack("{s:s,s:s,s:[s],s:s}", "action", "commit", "node",
				      "kernel_paging.anon_fault.alloc_cold", "evidence_ids",
				      json_string_value(json_object_get(
					      json_array_get(json_object_get(v.data, "evidence"), 0),
					      "id")),
				      "rationale", "alloc_cold is slow");
		else if (!strcmp(scenario, "bad_evidence") && v.attempt == 0)
			d = json_pack("{s:s,s:[s,s],s:s}", "action", "abstain", "evidence_ids",
				      "L1/kernel_paging/latency_p99", "L7/made_up/count", "rationale",
				      "as the evidence shows");
		else if (!strcmp(scenario, "no_deviation"))
			d = fake_unsupported_decision(v.data);
		else
			d = fake_good_decision(v.data);
		if (!strcmp(scenario, "two_decisions")) {
			/* a second decide call in the same reply, after the accepted one */
			json_t *again = json_deep_copy(d);

			json_object_set_new(again, "rationale", json_string("SECOND CALL, IGNORED"));
			*ret_body = fake_completion2("decide", d, again);
		} else
			*ret_body = fake_completion("decide", d, NULL);
	}
	json_decref(v.owned);
	return status;
}

struct fake_conn {
	char *body;
	size_t len;
	bool too_big;
};

static enum MHD_Result fake_handler(void *cls, struct MHD_Connection *conn, const char *url,
				    const char *method, const char *version, const char *upload,
				    size_t *upload_size, void **con_cls)
{
	struct fake_llm *f = cls;
	struct fake_conn *c = *con_cls;
	struct MHD_Response *resp;
	char scenario[32], *body = NULL;
	const char *auth;
	unsigned nreq, sleep_s = 0;
	bool retry_after = false;
	json_t *req;
	int status;
	enum MHD_Result ret;

	if (!c) {
		c = calloc(1, sizeof(*c));
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		if (c->len + *upload_size > FAKE_BODY_MAX) {
			c->too_big = true;
		} else {
			c->body = realloc(c->body, c->len + *upload_size + 1);
			memcpy(c->body + c->len, upload, *upload_size);
			c->len += *upload_size;
			c->body[c->len] = 0;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	pthread_mutex_lock(&f->lock);
	snprintf(scenario, sizeof(scenario), "%s", f->scenario);
	nreq = ++f->requests;
	auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	if (f->auth[0] && (!auth || strcmp(auth, f->auth) != 0))
		f->unauthorized++;
	pthread_mutex_unlock(&f->lock);

	req = c->body ? json_loads(c->body, 0, NULL) : NULL;
	if (strcmp(method, "POST") || !strstr(url, "/chat/completions") || !req || c->too_big) {
		status = 400;
		body = strdup("{\"error\": {\"message\": \"bad request\"}}");
	} else if (strcmp(json_string_value(json_object_get(req, "model")) ?: "", f->model)) {
		status = 404;
		body = strdup("{\"error\": {\"message\": \"unknown model\"}}");
	} else {
		status = fake_answer(f, scenario, nreq, req, &body, &sleep_s, &retry_after);
	}
	json_decref(req);
	if (sleep_s)
		sleep(sleep_s);
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	if (retry_after)
		MHD_add_response_header(resp, "Retry-After", "1");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void fake_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			   enum MHD_RequestTerminationCode toe)
{
	struct fake_conn *c = *con_cls;

	if (c) {
		free(c->body);
		free(c);
		*con_cls = NULL;
	}
}

/* libmicrohttpd's fatal errors (it aborts after them) said before the abort, with their place. */
static void fake_panic(void *cls, const char *file, unsigned int line, const char *reason)
{
	fprintf(stderr, "FATAL fake-llm: libmicrohttpd panic at %s:%u: %s\n", file ?: "?", line,
		reason ?: "(no reason)");
	abort();
}

static inline int fake_llm_start(struct fake_llm *f, const char *model, const char *key,
				 const char *template_path)
{
	const union MHD_DaemonInfo *info;

	MHD_set_panic_func(fake_panic, NULL);
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	snprintf(f->model, sizeof(f->model), "%s", model);
	snprintf(f->template_path, sizeof(f->template_path), "%s", template_path);
	if (key)
		snprintf(f->auth, sizeof(f->auth), "Bearer %s", key);
	snprintf(f->scenario, sizeof(f->scenario), "good");
	f->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
				  0, NULL, NULL, fake_handler, f, MHD_OPTION_NOTIFY_COMPLETED,
				  fake_completed, f, MHD_OPTION_SOCK_ADDR,
				  (const struct sockaddr *)&(struct sockaddr_in){
					  .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) },
				  MHD_OPTION_END);
	if (!f->mhd)
		return -EIO;
	info = MHD_get_daemon_info(f->mhd, MHD_DAEMON_INFO_BIND_PORT);
	f->port = info ? info->port : 0;
	return f->port ? 0 : -EIO;
}

static inline void fake_llm_set(struct fake_llm *f, const char *scenario)
{
	pthread_mutex_lock(&f->lock);
	snprintf(f->scenario, sizeof(f->scenario), "%s", scenario);
	f->requests = 0;
	pthread_mutex_unlock(&f->lock);
}

static inline unsigned fake_llm_requests(struct fake_llm *f)
{
	unsigned n;

	pthread_mutex_lock(&f->lock);
	n = f->requests;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static inline void fake_llm_stop(struct fake_llm *f)
{
	if (f->mhd)
		MHD_stop_daemon(f->mhd);
	f->mhd = NULL;
}
