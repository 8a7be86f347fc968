// SPDX-License-Identifier: MIT
/*
 * The LLM agent: a remote model behind an OpenAI-compatible endpoint
 * authors each level's probe and makes each decision, through two tools:
 *
 *   author_probe(source)  -> compiled (compile.h), checked by the safety
 *                            gate (gate.h), trial-loaded by the kernel
 *                            verifier and freed at once (never attached);
 *                            the first error goes back as the tool result.
 *   decide(action, node, evidence_ids, rationale)
 *                         -> checked against the tree and the calibration
 *                            (claim.h); a refusal goes back as the result.
 *
 * One conversation per job; each level adds the active nodes (slot order,
 * descriptions, metrics, resolved backend and hooks) and, after the
 * measurement, the evidence under the report's ids. Both phases of a level
 * (author, decide) run in one loop, run_conversation(), each described by
 * a struct phase: the tool it waits for, what it does with a call of each
 * tool, its bounds. Bounded: calls, tokens and wall time per job (config),
 * probes per level, refused decisions per level, turns without a tool
 * call. When a bound is hit or the endpoint fails, the level falls back to
 * the builtin probe or decision, and the trace ("fallback") and the
 * report's warnings say why; after a transport failure the endpoint is not
 * asked again in this job. Under syscall_events = none a level with a node
 * measured through system calls is the builtin probe's by design (the
 * trace's "probe" step says why under "builtin"; no warning): an authored probe could see
 * the calls only through the events that setting keeps off the host. Everything the model saw and said goes to the
 * trace ("llm_prompt", "llm_call", "llm_tool", "compile", "gate",
 * "verifier"), with the API key scrubbed.
 */
#include "daemon/agent.h"
#include "daemon/claim.h"
#include "daemon/compile.h"
#include "daemon/gate.h"
#include "daemon/llm_client.h"
#include "daemon/probe_authored.h"
#include "daemon/syscalls.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <bpf/libbpf.h>

#define AUTHOR_TRIES 4	     /* author_probe calls per level */
#define DECIDE_TRIES 3	     /* refused decide calls per level */
#define NUDGES 2	     /* turns without the expected tool call, per phase */
#define TURNS 10	     /* model turns per phase */
/* every agent's requests and tokens, for /metrics (agent_llm_usage) */
static struct {
	atomic_ulong requests_ok, requests_failed;
	atomic_ullong prompt_tokens, completion_tokens, estimated_tokens;
} usage;

#define REPLY_TOKENS 4096    /* max_tokens of one answer (less when the budget is lower) */
#define TOOL_TEXT_MAX 6000   /* compiler output and verifier log given back (the log's tail) */
#define TRACE_TEXT_MAX 65536 /* compiler output and verifier log kept in the trace */

static const char system_prompt[] =
	"You are the agent of argusd, which finds where in the Linux kernel a workload loses "
	"time (the Argus method). A tree of kernel code paths is descended level by level. At "
	"each level you write ONE multiplexed eBPF probe that measures every active node; argusd "
	"runs the target under it and compares each metric with a reference recorded on a quiet "
	"system: z = (value - reference) / spread, and a metric deviates when z > tau (for a "
	"slower target, a time metric must also hold enough of the added wall time, its "
	"\"share\"). Then you decide: descend into a deviating inner node, commit to a "
	"deviating leaf (or to the parent when nothing below it deviates), or abstain when "
	"nothing deviates (and at level 1 when the target is not slower than its reference).\n\n"
	"Rules:\n"
	"1. Name only node ids given to you. Cite only evidence ids given to you "
	"(\"L<level>/<metric>\"). argusd checks every decision against the tree and the "
	"calibration and refuses unsupported ones.\n"
	"2. The probe is one BPF C file for clang -target bpf -O2 -g (CO-RE). Begin it with "
	"#include \"argus_authored.h\": it includes vmlinux.h, bpf/bpf_helpers.h, "
	"bpf/bpf_tracing.h and bpf/bpf_core_read.h and declares the license, the maps "
	"`counters` and `targets`, argus_current_is_target(), argus_task_is_target(task), "
	"argus_account(slot, count, time_ns), and a program that follows the target's forks. "
	"No other #include; no #include_next, #embed, #line, __has_include, ##, names starting "
	"with ___, _Pragma or asm; every preprocessor directive on one line; at most 64 KiB.\n"
	"3. Slot i is the i-th node listed for the level: account its events with "
	"argus_account(i, ...). count and time_ns must mean exactly what the node's "
	"description says, because they are compared with a reference recorded by argusd's own "
	"probe: count is the number of events of that path in the target's threads, time_ns the "
	"target threads' time spent in it, excluding time inside other listed paths.\n"
	"4. Programs: SEC(\"tp_btf/<tracepoint>\") with BPF_PROG(...), only on the attach "
	"points listed for the level. Count only the target (argus_current_is_target, "
	"argus_task_is_target). Read task fields with typed loads from the tracepoint's task "
	"arguments (p->pid, BPF_CORE_READ_BITFIELD(p, f)), never with bpf_probe_read*. Helpers "
	"allowed: map lookup/update/delete, ktime_get_ns, ktime_get_boot_ns, "
	"get_current_pid_tgid, get_ns_current_pid_tgid, get_smp_processor_id, "
	"get_attach_cookie, task_storage_get/delete. No global or static variables (use maps "
	"or locals). Maps: at most 8 counting the header's three, array or hash kinds, at most "
	"65536 entries, values up to 4096 bytes.\n"
	"5. Call author_probe with the whole source. Read the compiler's, the safety gate's or "
	"the verifier's message and fix the source. After the measurement, call decide once, "
	"with the evidence ids the decision rests on and a short rationale.";

struct llm_agent {
	struct agent base;
	const struct config *cfg;
	void (*trace_fn)(void *userdata, const char *kind, json_t *data);
	bool (*should_stop)(void *userdata);
	void *userdata;

	struct llm_client *client;
	char *key;
	json_t *messages;
	json_t *tools;
	size_t traced; /* messages already in the trace */

	unsigned calls;
	long long tokens;
	uint64_t t0, deadline_ns;
	char *disabled; /* why the endpoint is not asked any more; NULL while it is */

	void *object; /* the level's accepted object, and its source */
	size_t object_len;
	char *source;
	bool plan_builtin;   /* this level measures with the builtin probe */
	bool plan_fallback;  /* ... because authoring failed (else by design: syscall_events = none) */
	char *probe_note;    /* why, for the decide message */
	char *pending_reject; /* the measurement refused the object: the log */
	int intro_level;     /* the level whose nodes were sent */
	json_t *given;	     /* evidence ids given: {"L1/...": {"flagged": bool}} */
};

/* ---- trace, with the key scrubbed from whatever the endpoint sent ---- */

static void trace(struct llm_agent *g, const char *kind, json_t *data)
{
	/* every string of the step, raw and JSON-escaped forms (llm_scrub_json) */
	data = llm_scrub_json(data, g->key);
	if (g->trace_fn)
		g->trace_fn(g->userdata, kind, data);
	else
		json_decref(data);
}

static void warn(struct llm_agent *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct llm_agent *g, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	utf8_sanitize(msg); /* json_string refuses what is not UTF-8: the warning would be lost */
	if (!g->base.warnings)
		g->base.warnings = json_array();
	json_array_append_new(g->base.warnings, llm_scrub_json(json_string(msg), g->key));
	free(msg);
}

/* The head (or tail) of a text, bounded, for the model or the trace. */
static char *bounded(const char *s, size_t max, bool tail)
{
	size_t n = s ? strlen(s) : 0;

	if (!s)
		return xstrdup("");
	if (n <= max)
		return xstrdup(s);
	if (tail)
		return xasprintf("[%zu bytes before]\n%s", n - max, s + n - max);
	return xasprintf("%.*s\n[%zu more bytes]", (int)max, s, n - max);
}

/* ---- messages ---- */

static void add_message(struct llm_agent *g, const char *role, const char *content)
{
	json_array_append_new(g->messages, json_pack("{s:s,s:s}", "role", role, "content", content));
}

static void add_user_json(struct llm_agent *g, const char *text, json_t *data)
{
	_cleanup_free_ char *dump = json_dumps(data, JSON_INDENT(1));
	_cleanup_free_ char *content = xasprintf("%s\n\n%s", text, dump ?: "{}");

	json_decref(data);
	add_message(g, "user", content);
}

static void add_tool_result(struct llm_agent *g, const char *id, const char *content)
{
	json_array_append_new(g->messages, json_pack("{s:s,s:s,s:s}", "role", "tool",
						     "tool_call_id", id, "content", content));
}

static json_t *budget_json(struct llm_agent *g)
{
	uint64_t now = now_mono_ns();
	long long tokens_left = (long long)g->cfg->llm_max_tokens - g->tokens;

	return json_pack("{s:i,s:I,s:i}", "calls_left",
			 (int)(g->cfg->llm_max_calls > g->calls ? g->cfg->llm_max_calls - g->calls
								: 0),
			 "tokens_left", (json_int_t)(tokens_left > 0 ? tokens_left : 0), "seconds_left",
			 (int)(g->deadline_ns > now ? (g->deadline_ns - now) / 1000000000ull : 0));
}

/* The tools, as OpenAI-compatible function definitions; the phases' tables are keyed by tool. */
enum tool { TOOL_AUTHOR_PROBE, TOOL_DECIDE, _TOOL_MAX };

static const struct tool_def {
	const char *name;
	const char *description;
	const char *parameters; /* JSON schema of the arguments */
} tool_defs[_TOOL_MAX] = {
	[TOOL_AUTHOR_PROBE] = {
		"author_probe",
		"Submit the level's probe: one BPF C source covering every active node. "
		"argusd compiles it, checks it with its safety gate and loads it into the "
		"kernel verifier; the result or the first error comes back.",
		"{\"type\": \"object\", \"properties\": {\"source\": {\"type\": \"string\","
		" \"description\": \"the whole BPF C source\"}}, \"required\": [\"source\"]}",
	},
	[TOOL_DECIDE] = {
		"decide",
		"Decide from the level's evidence: descend into a deviating inner node, commit "
		"to a deviating leaf (or to the parent when nothing below it deviates), or "
		"abstain.",
		"{\"type\": \"object\", \"properties\": {"
		"\"action\": {\"type\": \"string\","
		" \"enum\": [\"descend\", \"commit\", \"abstain\"]},"
		" \"node\": {\"type\": \"string\", \"description\": \"a node id given to you\"},"
		" \"evidence_ids\": {\"type\": \"array\", \"items\": {\"type\": \"string\"},"
		" \"description\": \"evidence ids given to you that the decision rests on\"},"
		" \"rationale\": {\"type\": \"string\"}},"
		" \"required\": [\"action\", \"evidence_ids\", \"rationale\"]}",
	},
};

static json_t *tools_json(void)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tool_defs); i++)
		json_array_append_new(a, json_pack("{s:s,s:{s:s,s:s,s:o}}", "type", "function",
						   "function", "name", tool_defs[i].name,
						   "description", tool_defs[i].description,
						   "parameters",
						   json_loads(tool_defs[i].parameters, 0, NULL)));
	return a;
}

/* The active nodes as the model sees them, slot by slot. */
static json_t *nodes_json(const struct agent_level *lvl)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < lvl->n_active; i++) {
		const struct tree_node *n = &lvl->tree->nodes[lvl->active[i]];
		json_t *metrics = json_array(), *hooks = json_array();
		size_t m, h;

		for (m = 0; m < n->n_metrics; m++)
			json_array_append_new(metrics, json_string(n->metrics[m]));
		for (h = 0; h < n->chosen.n; h++)
			json_array_append_new(hooks, json_string(n->chosen.v[h].name));
		json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:o,s:b,s:s,s:o}", "slot", (int)i,
						   "id", n->id, "description", n->description ?: "",
						   "metrics", metrics, "leaf",
						   tree_is_leaf(lvl->tree, lvl->active[i]), "backend",
						   backend_name(n->backend), "hooks", hooks));
	}
	return a;
}

/* ---- one model turn ---- */

static void disable(struct llm_agent *g, const char *why)
{
	if (!g->disabled)
		g->disabled = xstrdup(why);
}

/* Ask the model; on failure the endpoint is disabled for this job with the reason. */
static int ask(struct llm_agent *g, int level, const char *phase, struct llm_reply *ret)
{
	uint64_t now = now_mono_ns();
	long long tokens_left = (long long)g->cfg->llm_max_tokens - g->tokens;
	struct llm_reply reply = {};
	json_t *sent = json_array();
	_cleanup_free_ char *err = NULL;
	size_t i;
	long long used;
	int r;

	if (g->calls >= g->cfg->llm_max_calls) {
		json_decref(sent);
		disable(g, "the call budget (llm_max_calls) is spent");
		return -EDQUOT;
	}
	if (tokens_left <= 0) {
		json_decref(sent);
		disable(g, "the token budget (llm_max_tokens) is spent");
		return -EDQUOT;
	}
	if (now >= g->deadline_ns) {
		json_decref(sent);
		disable(g, "the wall-time budget (llm_max_wall_s) is spent");
		return -ETIMEDOUT;
	}
	for (i = g->traced; i < json_array_size(g->messages); i++)
		json_array_append(sent, json_array_get(g->messages, i));

	r = llm_chat(g->client, g->messages, g->tools,
		     tokens_left < REPLY_TOKENS ? (unsigned)tokens_left : REPLY_TOKENS,
		     g->deadline_ns, &reply, &err);
	g->calls++;
	if (r < 0) {
		_cleanup_free_ char *why = xasprintf("the endpoint failed: %s", err ?: strerror(-r));

		atomic_fetch_add(&usage.requests_failed, 1);

		trace(g, "llm_call",
		      json_pack("{s:i,s:s,s:i,s:o,s:s,s:i,s:i,s:f}", "level", level, "phase", phase,
				"call", (int)g->calls, "sent", sent, "error", err ?: strerror(-r),
				"attempts", (int)reply.attempts, "http_status",
				(int)reply.http_status, "seconds", reply.elapsed_ns / 1e9));
		g->traced = json_array_size(g->messages);
		disable(g, why);
		llm_reply_clear(&reply);
		return r;
	}
	used = reply.total_tokens >= 0 ? reply.total_tokens : 0;
	if (reply.total_tokens < 0) {
		/* no usage reported: about four bytes a token, prompt and answer */
		_cleanup_free_ char *a = json_dumps(g->messages, JSON_COMPACT),
				    *b = json_dumps(reply.message, JSON_COMPACT);

		used = ((a ? strlen(a) : 0) + (b ? strlen(b) : 0)) / 4;
	}
	g->tokens += used;
	atomic_fetch_add(&usage.requests_ok, 1);
	if (reply.total_tokens >= 0) {
		atomic_fetch_add(&usage.prompt_tokens, reply.prompt_tokens > 0 ? reply.prompt_tokens : 0);
		atomic_fetch_add(&usage.completion_tokens,
				 reply.completion_tokens > 0 ? reply.completion_tokens : 0);
	} else {
		atomic_fetch_add(&usage.estimated_tokens, used);
	}
	json_array_append(g->messages, reply.message);
	g->traced = json_array_size(g->messages);
	trace(g, "llm_call",
	      json_pack("{s:i,s:s,s:i,s:o,s:O,s:s?,s:i,s:i,s:{s:I,s:I,s:I,s:b},s:f,s:{s:i,s:I,s:f}}",
			"level", level, "phase", phase, "call", (int)g->calls, "sent", sent,
			"reply", reply.message, "finish_reason", reply.finish_reason, "attempts",
			(int)reply.attempts, "http_status", (int)reply.http_status, "tokens",
			"prompt", (json_int_t)reply.prompt_tokens, "completion",
			(json_int_t)reply.completion_tokens, "total", (json_int_t)used, "reported",
			reply.total_tokens >= 0, "seconds", reply.elapsed_ns / 1e9, "totals",
			"calls", (int)g->calls, "tokens", (json_int_t)g->tokens, "seconds",
			(now_mono_ns() - g->t0) / 1e9));
	*ret = reply;
	return 0;
}

/* ---- the conversation: one loop runs each phase of a level ---- */

struct conversation;

/* What a phase does with a call of one tool. */
struct phase_tool {
	/*
	 * Handle the call; *ret_result (malloc'ed) goes back to the model.
	 * Returns true when the call ends the phase. NULL when the phase does
	 * not take the tool: refusal is the result.
	 */
	bool (*handle)(struct conversation *c, json_t *call, char **ret_result);
	const char *refusal;
};

/*
 * A phase of a level: the tool whose accepted call ends it, what it does
 * with a call of each tool, its bounds. Every tool is offered in every
 * phase (the request's "tools" never change within a job).
 */
struct phase {
	const char *name;		    /* "author", "decide": the trace's phase */
	const char *goal;		    /* what an accepted call gives: "probe", "decision" */
	enum tool tool;			    /* the tool the phase waits for */
	struct phase_tool tools[_TOOL_MAX]; /* by tool */
	const char *unknown;		    /* the result of a call of no tool */
	const char *nudge;		    /* the user message after a turn without a call */
	unsigned max_turns;		    /* model turns */
	unsigned max_nudges;		    /* turns without a tool call */
	unsigned max_tries;		    /* calls of the tool that count against the phase */
	bool trace_calls;		    /* every call and its result go to the trace */
	/* after a turn that did not end the phase: why it gives up (malloc'ed), or NULL */
	char *(*spent)(struct conversation *c);
};

/* One run of a phase. */
struct conversation {
	const struct phase *ph;
	struct llm_agent *g;
	const struct agent_level *lvl;
	void *st;  /* the phase's own state */
	bool done; /* a call ended the phase: the reply's later calls are ignored */
};

static const struct phase_tool *find_tool(const struct phase *ph, const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(tool_defs); i++)
		if (!strcmp(name, tool_defs[i].name))
			return &ph->tools[i];
	return NULL;
}

/* One tool call of a reply, by the phase's table: true when it ends the phase. */
static bool tool_call(struct conversation *c, json_t *call)
{
	const char *id = json_string_value(json_object_get(call, "id"));
	const char *name = json_string_value(json_object_get(call, "name"));
	const struct phase_tool *t = find_tool(c->ph, name);
	_cleanup_free_ char *result = NULL;
	bool ends = false;

	if (t && t->handle)
		ends = t->handle(c, call, &result);
	else
		result = xstrdup(t ? t->refusal : c->ph->unknown);
	if (c->ph->trace_calls)
		trace(c->g, "llm_tool",
		      json_pack("{s:i,s:s,s:O*,s:s}", "level", c->lvl->level, "tool", name ?: "",
				"arguments", json_object_get(call, "arguments"), "result", result));
	add_tool_result(c->g, id, result);
	return ends;
}

/*
 * Run a phase of the level's conversation (its first message already
 * added): ask the model, answer each tool call of the reply by the
 * phase's table, nudge the model after a turn without one. Returns true
 * when a call ended the phase; false when a bound was hit or the endpoint
 * failed, with *ret_why (malloc'ed) saying which. st is the phase's state,
 * given to its handlers.
 */
static bool run_conversation(const struct phase *ph, struct llm_agent *g,
			     const struct agent_level *lvl, void *st, char **ret_why)
{
	struct conversation c = { .ph = ph, .g = g, .lvl = lvl, .st = st };
	unsigned turns = 0, nudges = 0;

	for (;;) {
		struct llm_reply reply = {};
		char *why = NULL;
		json_t *call;
		size_t i;

		if (turns++ >= ph->max_turns) {
			*ret_why =
				xasprintf("no accepted %s after %u turns", ph->goal, ph->max_turns);
			return false;
		}
		if (ask(g, lvl->level, ph->name, &reply) < 0) {
			*ret_why = xstrdup(g->disabled);
			return false;
		}
		json_array_foreach(reply.tool_calls, i, call)
			if (tool_call(&c, call))
				c.done = true;
		if (json_array_size(reply.tool_calls) == 0) {
			if (++nudges > ph->max_nudges)
				why = xasprintf("the model did not call %s (%u turns without "
						"a tool call)",
						tool_defs[ph->tool].name, nudges);
			else
				add_message(g, "user", ph->nudge);
		}
		llm_reply_clear(&reply);
		if (c.done)
			return true;
		if (!why)
			why = ph->spent(&c);
		if (why) {
			*ret_why = why;
			return false;
		}
	}
}

/* ---- author_probe ---- */

static void drop_object(struct llm_agent *g)
{
	free(g->object);
	free(g->source);
	g->object = NULL;
	g->source = NULL;
	g->object_len = 0;
}

/*
 * Compile, gate and trial-load a source. Returns true when accepted (the
 * object kept in g); *ret_result is the tool result for the model.
 */
static bool try_source(struct llm_agent *g, const struct agent_level *lvl,
		       const struct gate_policy *pol, const char *src, char **ret_result)
{
	struct compile_opts co = { .clang = g->cfg->bpf_clang,
				   .include_dir = g->cfg->bpf_include_dir };
	_cleanup_free_ char *diag = NULL, *gate_err = NULL, *vlog = NULL;
	_cleanup_free_ void *obj = NULL;
	struct probe_authored *trial = NULL;
	json_t *info = NULL;
	size_t len = 0;
	uint64_t t;
	int r;

	t = now_mono_ns();
	r = compile_probe(&co, src, strlen(src), &obj, &len, &diag);
	{
		_cleanup_free_ char *kept = bounded(diag, TRACE_TEXT_MAX, false);

		trace(g, "compile", json_pack("{s:i,s:b,s:s,s:I,s:f}", "level", lvl->level, "ok",
					      r >= 0, "output", kept, "object_bytes",
					      (json_int_t)len, "seconds",
					      (now_mono_ns() - t) / 1e9));
	}
	if (r < 0) {
		_cleanup_free_ char *shown = bounded(diag, TOOL_TEXT_MAX, false);

		*ret_result = xasprintf("error: %s:\n%s",
					r == -EINVAL || r == -E2BIG ? "the source was refused before "
								      "compiling"
								    : "compiling failed",
					shown);
		return false;
	}

	r = gate_check(obj, len, pol, &info, &gate_err);
	trace(g, "gate", json_pack("{s:i,s:b,s:s?,s:o*}", "level", lvl->level, "ok", r >= 0,
				   "error", gate_err, "object", info));
	if (r < 0) {
		*ret_result = xasprintf("error: refused by argusd's safety gate: %s", gate_err);
		return false;
	}

	/* the verifier's verdict now, so that the model can repair before the measurement */
	t = now_mono_ns();
	r = probe_authored_load(obj, len, &trial, &vlog);
	probe_authored_free(trial);
	{
		_cleanup_free_ char *kept = bounded(vlog, TRACE_TEXT_MAX, true);

		trace(g, "verifier", json_pack("{s:i,s:b,s:s?,s:s,s:f}", "level", lvl->level, "ok",
					       r >= 0, "error", r < 0 ? strerror(-r) : NULL, "log",
					       kept, "seconds", (now_mono_ns() - t) / 1e9));
	}
	if (r < 0) {
		_cleanup_free_ char *shown = bounded(vlog, TOOL_TEXT_MAX, true);

		*ret_result = xasprintf("error: the kernel rejected the probe (%s). Verifier and "
					"libbpf log:\n%s",
					strerror(-r), shown);
		return false;
	}
	drop_object(g);
	g->object = TAKE_PTR(obj);
	g->object_len = len;
	g->source = xstrdup(src);
	*ret_result = xstrdup("accepted: compiled, passed the safety gate and the kernel verifier. "
			      "argusd now runs the target under it; the evidence follows.");
	return true;
}

static int builtin_plan(struct llm_agent *g, const struct agent_level *lvl, const char *why,
			bool fallback, struct probe_plan *ret_plan, json_t **ret_note)
{
	int r;

	if (fallback) {
		trace(g, "fallback", json_pack("{s:i,s:s,s:s}", "level", lvl->level, "what",
					       "probe", "reason", why));
		warn(g, "level %d: measured with the builtin probe: %s", lvl->level, why);
	}
	g->plan_fallback = fallback;
	free(g->probe_note);
	g->probe_note = xasprintf("argusd measured this level with its builtin probe: %s", why);
	g->plan_builtin = true;
	drop_object(g);
	r = probe_plan_for(lvl->tree, lvl->active, lvl->n_active, ret_plan);
	if (r < 0)
		return r;
	*ret_note = json_pack("{s:s,s:o}", fallback ? "fallback" : "builtin", why, "plan",
			      probe_plan_describe(lvl->tree, ret_plan));
	return 0;
}

/* The plan of the level's accepted object: slot i is node i. */
static void authored_plan(struct llm_agent *g, const struct agent_level *lvl,
			  struct probe_plan *ret_plan)
{
	size_t i;

	memset(ret_plan, 0, sizeof(*ret_plan));
	for (i = 0; i < lvl->n_active && i < ARGUS_MAX_SLOTS; i++) {
		const struct tree_node *n = &lvl->tree->nodes[lvl->active[i]];

		ret_plan->slots[i] = (struct probe_slot){ .node = lvl->active[i],
							  .backend = n->backend,
							  .hook = n->hook };
	}
	ret_plan->n_slots = i;
	ret_plan->object = g->object;
	ret_plan->object_len = g->object_len;
}

struct author_state {
	const struct gate_policy *pol;
	unsigned tries; /* author_probe calls that went to the compiler */
};

static bool author_probe_call(struct conversation *c, json_t *call, char **ret_result)
{
	struct author_state *st = c->st;
	const char *src =
		json_string_value(json_object_get(json_object_get(call, "arguments"), "source"));

	if (c->done || st->tries >= c->ph->max_tries) {
		*ret_result = xstrdup("ignored: one probe per level");
		return false;
	}
	if (!src) {
		*ret_result = xasprintf("error: %s",
					json_string_value(json_object_get(call, "arguments_error"))
						?: "author_probe needs {\"source\": \"...\"}");
		return false;
	}
	st->tries++;
	trace(c->g, "llm_tool",
	      json_pack("{s:i,s:s,s:i,s:s}", "level", c->lvl->level, "tool", "author_probe", "try",
			(int)st->tries, "source", src));
	return try_source(c->g, c->lvl, st->pol, src, ret_result);
}

static char *author_spent(struct conversation *c)
{
	struct author_state *st = c->st;

	if (st->tries < c->ph->max_tries)
		return NULL;
	return xasprintf("%u probes were refused", st->tries);
}

static const struct phase author_phase = {
	.name = "author",
	.goal = "probe",
	.tool = TOOL_AUTHOR_PROBE,
	.tools = {
		[TOOL_AUTHOR_PROBE] = { .handle = author_probe_call },
		[TOOL_DECIDE] = { .refusal = "error: nothing is measured at this level yet; "
					     "call author_probe first" },
	},
	.unknown = "error: unknown tool; the tools are author_probe and decide",
	.nudge = "Call the author_probe tool with the whole source of the probe.",
	.max_turns = TURNS,
	.max_nudges = NUDGES,
	.max_tries = AUTHOR_TRIES,
	.spent = author_spent,
};

/*
 * The same level measured again (its run did not confirm the slowdown, or
 * it named a leaf that a second run must name too) is measured with the
 * same probe: the model is not asked twice. Returns 1 when the level's
 * plan was given again, 0 when the model is to be asked.
 */
static int author_again(struct llm_agent *g, const struct agent_level *lvl,
			struct probe_plan *ret_plan, json_t **ret_note)
{
	int r;

	if (g->intro_level != lvl->level || g->pending_reject)
		return 0;
	if (g->object) {
		authored_plan(g, lvl, ret_plan);
		*ret_note = json_pack("{s:s,s:b,s:I}", "object", "authored", "again", true,
				      "object_bytes", (json_int_t)g->object_len);
		return 1;
	}
	if (g->plan_builtin) {
		r = probe_plan_for(lvl->tree, lvl->active, lvl->n_active, ret_plan);
		if (r < 0)
			return r;
		*ret_note = json_pack("{s:s,s:b,s:o}", g->plan_fallback ? "fallback" : "builtin",
				      g->probe_note ?: "", "again", true, "plan",
				      probe_plan_describe(lvl->tree, ret_plan));
		return 1;
	}
	return 0;
}

/*
 * The author phase's first message: the level's nodes and attach points,
 * or, for the level again after the measurement refused the object, the
 * loader's log.
 */
static void author_prompt(struct llm_agent *g, const struct agent_level *lvl,
			  const struct gate_policy *pol)
{
	if (g->intro_level != lvl->level) {
		g->intro_level = lvl->level;
		add_user_json(
			g,
			lvl->level == 1
				? "Level 1: the whole kernel. Author one probe covering every node "
				  "below (slot i = node i), on the attach points listed."
				: "Next level: the children of the node you descended into. Author "
				  "one probe covering every node below (slot i = node i), on the "
				  "attach points listed.",
			json_pack("{s:i,s:s,s:s?,s:o,s:o,s:o}", "level", lvl->level, "phase", "author",
				  "parent",
				  lvl->parent >= 0 ? lvl->tree->nodes[lvl->parent].id : NULL,
				  "nodes", nodes_json(lvl), "attach_points",
				  gate_policy_to_json(pol), "budget", budget_json(g)));
	} else if (g->pending_reject) {
		_cleanup_free_ char *shown = bounded(g->pending_reject, TOOL_TEXT_MAX, true);
		_cleanup_free_ char *text = xasprintf(
			"Loading your probe for the measurement failed:\n%s\nAuthor it again.", shown);

		add_message(g, "user", text);
	}
	free(g->pending_reject);
	g->pending_reject = NULL;
}

static int llm_author(struct agent *a, const struct agent_level *lvl, struct probe_plan *ret_plan,
		      json_t **ret_note)
{
	struct llm_agent *g = (struct llm_agent *)a;
	struct gate_policy pol = {};
	struct author_state st = { .pol = &pol };
	_cleanup_free_ char *why = NULL;
	bool accepted;
	int r, call_node;

	*ret_note = NULL;
	r = author_again(g, lvl, ret_plan, ret_note);
	if (r != 0)
		return r < 0 ? r : 0;
	drop_object(g);
	g->plan_builtin = false;
	free(g->probe_note);
	g->probe_note = NULL;
	if (g->disabled)
		return builtin_plan(g, lvl, g->disabled, true, ret_plan, ret_note);
	/*
	 * A node measured through system calls, under syscall_events = none:
	 * an authored probe could see the calls only through the events that
	 * setting keeps off the host, so the level is argusd's probe's, by
	 * design (no fallback, no warning); the model still decides it.
	 */
	call_node = syscall_events_none()
			    ? gate_level_call_node(lvl->tree, lvl->active, lvl->n_active)
			    : -1;
	if (call_node >= 0) {
		_cleanup_free_ char *by_design = xasprintf(
			"%s is measured through system calls; under syscall_events = none argusd "
			"attaches no system call event (every task on the host would run it) and "
			"only its builtin probe sees the calls, at the switch",
			lvl->tree->nodes[call_node].id);

		g->intro_level = lvl->level;
		return builtin_plan(g, lvl, by_design, false, ret_plan, ret_note);
	}
	r = gate_policy_for_level(lvl->tree, lvl->active, lvl->n_active,
				  libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 1,
				  syscall_events_none(), &pol);
	if (r < 0)
		return r;

	author_prompt(g, lvl, &pol);
	accepted = run_conversation(&author_phase, g, lvl, &st, &why);
	gate_policy_free(&pol);
	if (!accepted)
		return builtin_plan(g, lvl, why ?: "no probe", true, ret_plan, ret_note);
	authored_plan(g, lvl, ret_plan);
	*ret_note = json_pack("{s:s,s:i,s:I,s:s}", "object", "authored", "tries", (int)st.tries,
			      "object_bytes", (json_int_t)g->object_len, "source", g->source);
	return 0;
}

static int llm_rejected(struct agent *a, const struct agent_level *lvl, const char *log)
{
	struct llm_agent *g = (struct llm_agent *)a;

	/* the builtin probe was loaded at resolution: a second try will not differ */
	if (g->plan_builtin || g->disabled)
		return -ENOEXEC;
	free(g->pending_reject);
	g->pending_reject = xstrdup(log ?: "the probe could not be loaded");
	return 0;
}

/* ---- decide ---- */

/* A number for JSON; null when not finite (jansson refuses those). */
static json_t *number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *evidence_json(struct llm_agent *g, const struct agent_level *lvl,
			     const struct calib_decision *cd)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < cd->n_scores; i++) {
		const struct calib_score *s = &cd->scores[i];
		_cleanup_free_ char *id = claim_evidence_id(lvl->level, s->metric);

		json_t *e = json_pack("{s:s,s:o,s:o,s:o,s:o,s:b}", "id", id, "reference",
				      number(s->centre), "spread", number(s->spread), "value",
				      number(s->value), "z", number(s->z), "deviates", s->flagged);

		json_object_set_new(g->given, id, json_pack("{s:b}", "flagged", s->flagged));
		if (e && isfinite(s->share))
			json_object_set_new(e, "share", number(s->share));
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *parent_evidence(struct llm_agent *g, const struct agent_level *lvl)
{
	json_t *a = json_array(), *v;
	const char *key;
	_cleanup_free_ char *prefix = NULL;

	if (lvl->parent < 0)
		return a;
	prefix = xasprintf("L%d/%s/", lvl->level - 1, lvl->tree->nodes[lvl->parent].id);
	json_object_foreach(g->given, key, v)
		if (strncmp(key, prefix, strlen(prefix)) == 0 &&
		    json_is_true(json_object_get(v, "flagged")))
			json_array_append_new(a, json_string(key));
	return a;
}

static int decide_fallback(struct llm_agent *g, const struct agent_level *lvl, const char *why,
			   struct calib_decision *cd, struct calib_decision *ret, json_t **ret_note)
{
	trace(g, "fallback", json_pack("{s:i,s:s,s:s,s:s}", "level", lvl->level, "what",
				       "decision", "reason", why, "builtin_action",
				       calib_action_name(cd->action)));
	warn(g, "level %d: the builtin decision was taken: %s", lvl->level, why);
	*ret_note = json_pack("{s:s}", "fallback", why);
	*ret = *cd;
	return 0;
}

struct decide_state {
	struct claim_level cl;
	unsigned refused;
	char *last_error; /* why the last refused decision was refused */
	struct claim accepted;
	json_t *args; /* the arguments of the last decide call (a reference) */
};

static bool decide_call(struct conversation *c, json_t *call, char **ret_result)
{
	struct decide_state *st = c->st;
	json_t *args = json_object_get(call, "arguments");
	_cleanup_free_ char *err = NULL;
	struct claim claim;

	if (c->done || st->refused >= c->ph->max_tries) {
		*ret_result = xstrdup("ignored: one decision per level");
		return false;
	}
	if (!json_is_object(args)) {
		st->refused++;
		*ret_result = xasprintf("error: %s",
					json_string_value(json_object_get(call, "arguments_error"))
						?: "bad arguments");
		return false;
	}
	if (claim_check(&st->cl, args, &claim, &err) < 0) {
		st->refused++;
		free(st->last_error);
		st->last_error = xstrdup(err);
		*ret_result = xasprintf("refused: %s", err);
		return false;
	}
	st->accepted = claim;
	/* the decision's note and rationale: the call that was accepted */
	json_decref(st->args);
	st->args = json_incref(args);
	*ret_result = xstrdup("accepted");
	return true;
}

static char *decide_spent(struct conversation *c)
{
	struct decide_state *st = c->st;

	if (st->refused < c->ph->max_tries)
		return NULL;
	return xasprintf("%u decisions were refused; the last: %s", st->refused,
			 st->last_error ?: "?");
}

static const struct phase decide_phase = {
	.name = "decide",
	.goal = "decision",
	.tool = TOOL_DECIDE,
	.tools = {
		[TOOL_AUTHOR_PROBE] = { .refusal = "error: this level is already measured; "
						   "call decide" },
		[TOOL_DECIDE] = { .handle = decide_call },
	},
	.unknown = "error: unknown tool; call decide",
	.nudge = "Call the decide tool: action, node, evidence_ids, rationale.",
	.max_turns = TURNS,
	.max_nudges = NUDGES,
	.max_tries = DECIDE_TRIES,
	.trace_calls = true,
	.spent = decide_spent,
};

/* The decide phase's first message: the level's nodes and evidence (ev, taken), the budget. */
static void decide_prompt(struct llm_agent *g, const struct agent_level *lvl, json_t *ev)
{
	json_t *nodes = json_array();
	size_t i;

	for (i = 0; i < lvl->n_active; i++)
		json_array_append_new(nodes, json_pack("{s:s,s:b}", "id",
						       lvl->tree->nodes[lvl->active[i]].id, "leaf",
						       tree_is_leaf(lvl->tree, lvl->active[i])));
	add_user_json(g,
		      "The level is measured. Decide with the decide tool, citing the evidence ids "
		      "your decision rests on.",
		      json_pack("{s:i,s:s,s:s?,s:s,s:o,s:f,s:o,s:o,s:o}", "level", lvl->level,
				"phase", "decide", "parent",
				lvl->parent >= 0 ? lvl->tree->nodes[lvl->parent].id : NULL, "probe",
				g->probe_note ?: "yours", "nodes", nodes, "tau",
				lvl->params ? lvl->params->tau : 3.0, "evidence", ev,
				"parent_evidence", parent_evidence(g, lvl), "budget",
				budget_json(g)));
}

static int llm_decide(struct agent *a, const struct agent_level *lvl, const struct mvec *pmv,
		      struct calib_decision *ret, json_t **ret_note)
{
	struct llm_agent *g = (struct llm_agent *)a;
	struct decide_state st = {};
	struct calib_decision cd;
	_cleanup_free_ char *why = NULL, *rationale = NULL;
	json_t *ev;
	int r;

	*ret_note = NULL;
	r = calib_decide(lvl->params, lvl->tree, lvl->active, lvl->n_active, lvl->parent,
			 lvl->ref, lvl->k, pmv, &cd);
	if (r < 0)
		return r;
	ev = evidence_json(g, lvl, &cd);
	if (g->disabled) {
		json_decref(ev);
		return decide_fallback(g, lvl, g->disabled, &cd, ret, ret_note);
	}
	decide_prompt(g, lvl, ev);

	st.cl = (struct claim_level){ .tree = lvl->tree, .level = lvl->level,
				      .parent = lvl->parent, .active = lvl->active,
				      .n_active = lvl->n_active, .calib = &cd, .given = g->given };
	if (!run_conversation(&decide_phase, g, lvl, &st, &why)) {
		r = decide_fallback(g, lvl, why ?: "no decision", &cd, ret, ret_note);
	} else {
		rationale = bounded(json_string_value(json_object_get(st.args, "rationale")) ?: "",
				    CLAIM_RATIONALE_MAX, false);
		free(cd.reason);
		cd.reason = xasprintf("llm: %s", rationale);
		cd.action = st.accepted.action;
		cd.node = st.accepted.node;
		if (st.accepted.evidence >= 0)
			cd.evidence = st.accepted.evidence;
		*ret_note = json_pack("{s:s,s:O*,s:i}", "agent", "llm", "decision", st.args,
				      "refused_before", (int)st.refused);
		*ret = cd;
		r = 0;
	}
	json_decref(st.args);
	free(st.last_error);
	return r;
}

static void llm_free(struct agent *a)
{
	struct llm_agent *g = (struct llm_agent *)a;

	if (!g)
		return;
	if (g->calls)
		trace(g, "llm_usage",
		      json_pack("{s:i,s:I,s:f,s:s?}", "calls", (int)g->calls, "tokens",
				(json_int_t)g->tokens, "seconds", (now_mono_ns() - g->t0) / 1e9,
				"disabled", g->disabled));
	llm_client_free(g->client);
	if (g->key) {
		explicit_bzero(g->key, strlen(g->key));
		free(g->key);
	}
	json_decref(g->messages);
	json_decref(g->tools);
	json_decref(g->given);
	json_decref(g->base.warnings);
	free(g->disabled);
	drop_object(g);
	free(g->probe_note);
	free(g->pending_reject);
	free(g);
}

/*
 * What the agent hands to the level loop holds model text too (the probe
 * source in the author's note, the decision's arguments and its reason
 * for the report): scrubbed of the key as the agent's own trace steps.
 */
static int llm_author_scrubbed(struct agent *a, const struct agent_level *lvl,
			       struct probe_plan *ret_plan, json_t **ret_note)
{
	struct llm_agent *g = (struct llm_agent *)a;
	int r = llm_author(a, lvl, ret_plan, ret_note);

	*ret_note = llm_scrub_json(*ret_note, g->key);
	return r;
}

static int llm_decide_scrubbed(struct agent *a, const struct agent_level *lvl,
			       const struct mvec *pmv, struct calib_decision *ret, json_t **ret_note)
{
	struct llm_agent *g = (struct llm_agent *)a;
	int r = llm_decide(a, lvl, pmv, ret, ret_note);

	*ret_note = llm_scrub_json(*ret_note, g->key);
	if (r >= 0 && g->key && ret->reason) {
		char *clean = llm_scrub(ret->reason, g->key);

		free(ret->reason);
		ret->reason = clean;
	}
	return r;
}

int agent_llm_new(const struct agent_llm_env *env, struct agent **ret, char **ret_err)
{
	const struct config *cfg = env->cfg;
	_cleanup_free_ char *endpoint = NULL;
	struct llm_agent *g;
	struct llm_client_opts co;
	int r;

	if (!cfg->llm_url || !cfg->llm_model) {
		*ret_err = xstrdup("the llm agent needs llm_url and llm_model in argusd.conf");
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->base = (struct agent){ .name = "llm", .author = llm_author_scrubbed,
				  .rejected = llm_rejected, .decide = llm_decide_scrubbed,
				  .free = llm_free };
	g->cfg = cfg;
	g->trace_fn = env->trace;
	g->should_stop = env->should_stop;
	g->userdata = env->userdata;
	if (cfg->llm_key_file) {
		r = llm_read_key(cfg->llm_key_file, getenv("CREDENTIALS_DIRECTORY"), &g->key,
				 ret_err);
		if (r < 0) {
			llm_free(&g->base);
			return r;
		}
	}
	co = (struct llm_client_opts){ .base_url = cfg->llm_url, .model = cfg->llm_model,
				       .key = g->key, .allow_insecure = cfg->llm_allow_insecure,
				       .timeout_s = cfg->llm_timeout_s,
				       .should_stop = env->should_stop,
				       .userdata = env->userdata };
	r = llm_url_check(cfg->llm_url, cfg->llm_allow_insecure, ret_err);
	if (r >= 0) {
		r = llm_client_new(&co, &g->client);
		if (r < 0)
			*ret_err = xasprintf("llm client: %s", strerror(-r));
	}
	if (r < 0) {
		llm_free(&g->base);
		return r;
	}
	endpoint = llm_url_redact(cfg->llm_url);
	g->messages = json_array();
	g->tools = tools_json();
	g->given = json_object();
	g->t0 = now_mono_ns();
	g->deadline_ns = g->t0 + (uint64_t)cfg->llm_max_wall_s * 1000000000ull;
	add_message(g, "system", system_prompt);
	/* the endpoint redacted: its userinfo or query may carry credentials */
	trace(g, "llm_prompt",
	      json_pack("{s:s,s:s,s:O,s:{s:i,s:i,s:i,s:i}}", "endpoint", endpoint, "model",
			cfg->llm_model, "tools", g->tools, "budget", "calls",
			(int)cfg->llm_max_calls, "tokens", (int)cfg->llm_max_tokens, "wall_s",
			(int)cfg->llm_max_wall_s, "timeout_s", (int)cfg->llm_timeout_s));
	*ret = &g->base;
	return 0;
}

void agent_llm_usage(struct agent_llm_usage *ret)
{
	*ret = (struct agent_llm_usage){
		.requests_ok = atomic_load(&usage.requests_ok),
		.requests_failed = atomic_load(&usage.requests_failed),
		.prompt_tokens = atomic_load(&usage.prompt_tokens),
		.completion_tokens = atomic_load(&usage.completion_tokens),
		.estimated_tokens = atomic_load(&usage.estimated_tokens),
	};
}
