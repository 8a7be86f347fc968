// SPDX-License-Identifier: MIT
/*
 * The trace page: the bytes build a job (as GET /jobs/ID) and its trace
 * (as GET /jobs/ID/trace): the fields the page shows, its picture of the
 * descent included, each present or not, of the expected type or another,
 * strings full of HTML's special characters; then trace_render_html. The
 * job list page too: the job as an entry of GET /jobs, among others, then
 * job_list_render_html.
 *
 * Property: every string of the input reaches the page escaped. The same
 * job and trace are rendered a second time with each '<', '>', '&' and '"'
 * of every string replaced by a control byte (\1 to \4; the generated
 * strings hold none); turning those bytes into "&lt;", "&gt;", "&amp;" and
 * "&quot;" must give the first page exactly. A string written without
 * escaping, in part or whole, shows as a raw character in the first page
 * where the second has the entity. The same holds for the job list page.
 */
#include "api/job_list_html.h"
#include "api/trace_html.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#define DEPTH_MAX 3

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

/* Strings: HTML's specials often, letters, white space, a few multibyte characters. */
static json_t *gen_string(struct fuzz_bytes *b)
{
	static const char *const pieces[] = {"<",
					     ">",
					     "&",
					     "\"",
					     "'",
					     "a",
					     "Z",
					     " ",
					     "\t",
					     "/",
					     "=",
					     "<script>",
					     "</p>",
					     "&amp;",
					     "&lt;",
					     "`",
					     "\xc3\xa9",
					     "\xe2\x86\x92",
					     "kernel_paging",
					     "bottleneck",
					     "1",
					     ";",
					     "<!--",
					     "]]>"};
	size_t n = fuzz_u8(b) % 24, i;
	char *s = xstrdup("");

	for (i = 0; i < n && b->n; i++) {
		uint8_t c = fuzz_u8(b);
		char *t;

		if (c < 128)
			t = xasprintf("%s%s", s, pieces[c % ARRAY_SIZE(pieces)]);
		else
			/* any other printable ASCII character */
			t = xasprintf("%s%c", s, 0x20 + c % 95);
		free(s);
		s = t;
	}
	{
		json_t *j = json_string(s);

		free(s);
		return j;
	}
}

enum shape { S_STRING, S_INT, S_REAL, S_BOOL, S_ARRAY_STRINGS, S_ANY };

static json_t *gen_any(struct fuzz_bytes *b, int depth);

/* A value of the expected shape most of the time, of another shape sometimes, or absent (NULL). */
static json_t *gen(struct fuzz_bytes *b, enum shape want, int depth)
{
	uint8_t c = fuzz_u8(b);

	if (c % 8 == 7)
		return NULL;
	if (c % 8 == 6 || want == S_ANY)
		return gen_any(b, depth);
	switch (want) {
	case S_STRING:
		return gen_string(b);
	case S_INT:
		return json_integer((json_int_t)(int32_t)fuzz_u32(b));
	case S_REAL:
		return json_real((double)(int32_t)fuzz_u32(b) / (1 + fuzz_u8(b)));
	case S_BOOL:
		return json_boolean(c & 8);
	case S_ARRAY_STRINGS: {
		json_t *a = json_array();
		size_t n = fuzz_u8(b) % 6, i;

		for (i = 0; i < n && b->n; i++)
			json_array_append_new(a, gen_string(b));
		return a;
	}
	default:
		return json_null();
	}
}

static json_t *gen_any(struct fuzz_bytes *b, int depth)
{
	uint8_t c = fuzz_u8(b);
	json_t *v;
	size_t n, i;

	switch (depth >= DEPTH_MAX ? c % 5 : c % 7) {
	case 0:
		return gen_string(b);
	case 1:
		return json_integer(
		    (json_int_t)(int64_t)((uint64_t)fuzz_u32(b) << 32 | fuzz_u32(b)));
	case 2:
		return json_real((double)fuzz_u32(b) * 1e-3);
	case 3:
		return json_boolean(c & 8);
	case 4:
		return json_null();
	case 5:
		v = json_array();
		n = fuzz_u8(b) % 4;
		for (i = 0; i < n && b->n; i++)
			json_array_append_new(v, gen_any(b, depth + 1));
		return v;
	default:
		v = json_object();
		n = fuzz_u8(b) % 4;
		for (i = 0; i < n && b->n; i++) {
			json_t *k = gen_string(b);

			json_object_set_new(v, json_string_value(k), gen_any(b, depth + 1));
			json_decref(k);
		}
		return v;
	}
}

static void set(json_t *o, const char *key, json_t *v)
{
	if (v)
		json_object_set_new(o, key, v);
}

/* One of the names the page switches on, or any string. */
static json_t *gen_name(struct fuzz_bytes *b, const char *const *names, size_t n)
{
	uint8_t c = fuzz_u8(b);

	if (c % 8 == 7)
		return gen(b, S_STRING, 0);
	return json_string(names[c % n]);
}

static json_t *gen_score(struct fuzz_bytes *b)
{
	json_t *s = json_object();

	static const char *const metrics[] = {"kernel_paging/count", "kernel_paging/time_ns",
					      "kernel_sync/count", "target/wall_ns"};

	/* the picture groups scores by the node before the last '/' */
	set(s, "metric", fuzz_u8(b) % 2 ? gen(b, S_STRING, 1)
					 : gen_name(b, metrics, ARRAY_SIZE(metrics)));
	set(s, "flagged", gen(b, S_BOOL, 1));
	set(s, "reference", gen(b, S_REAL, 1));
	set(s, "spread", gen(b, S_REAL, 1));
	set(s, "value", gen(b, S_REAL, 1));
	set(s, "z", gen(b, S_REAL, 1));
	set(s, "expected", gen(b, S_REAL, 1));
	return s;
}

static json_t *gen_step(struct fuzz_bytes *b, const char *const *actions, size_t n_actions)
{
	static const char *const kinds[] = {
	    "probe",	      "measure",	  "decision", "remeasure", "fallback",
	    "probe_rejected", "decision_refused", "llm_call", "compile",   "gate",
	};
	json_t *st = json_object(), *probe = json_object(), *scores = json_array();
	size_t n, i;

	set(st, "kind", gen_name(b, kinds, ARRAY_SIZE(kinds)));
	set(st, "level", gen(b, S_INT, 1));
	set(st, "parent", gen(b, S_STRING, 1));
	set(st, "action", gen_name(b, actions, n_actions));
	/* the node taken is one of the run's, often: the picture outlines it */
	set(st, "node", fuzz_u8(b) % 2 ? gen(b, S_STRING, 1) : json_string("kernel_paging"));
	set(st, "reason", gen(b, S_STRING, 1));
	set(st, "error", gen(b, S_STRING, 1));
	set(st, "wall_ns", gen(b, S_REAL, 1));
	set(probe, "programs", gen(b, S_ARRAY_STRINGS, 1));
	set(probe, "ns_per_run", gen(b, S_REAL, 1));
	set(probe, "overhead_fraction", gen(b, S_REAL, 1));
	json_object_set_new(st, "probe", probe);
	n = fuzz_u8(b) % 5;
	for (i = 0; i < n && b->n; i++)
		json_array_append_new(scores, gen_score(b));
	json_object_set_new(st, "scores", scores);
	if (fuzz_u8(b) % 4 == 0)
		set(st, "extra", gen_any(b, 1));
	return st;
}

static json_t *gen_unavailable(struct fuzz_bytes *b)
{
	json_t *a = json_array();
	size_t n = fuzz_u8(b) % 4, i;

	for (i = 0; i < n && b->n; i++) {
		json_t *u = json_object();

		if (fuzz_u8(b) % 3 == 0) {
			json_array_append_new(a, gen_string(b));
			json_decref(u);
			continue;
		}
		set(u, "node", gen(b, S_STRING, 1));
		set(u, "reason", gen(b, S_STRING, 1));
		json_array_append_new(a, u);
	}
	return a;
}

static void gen_job(struct fuzz_bytes *b, json_t **ret_job, json_t **ret_trace)
{
	static const char *const verdicts[] = {"bottleneck", "no_bottleneck", "deviation"};
	static const char *const actions[] = {"descend", "commit", "abstain"};
	json_t *job = json_object(), *res = json_object(), *req = json_object(),
	       *err = json_object(), *timings = json_object(), *trace = json_object(),
	       *steps = json_array();
	size_t n, i;

	set(job, "id", gen(b, S_INT, 0));
	set(job, "kind", gen(b, S_STRING, 0));
	set(job, "state", gen(b, S_STRING, 0));
	set(job, "created", gen(b, S_STRING, 0));
	set(job, "finished", gen(b, S_STRING, 0));
	set(job, "step", gen(b, S_STRING, 0));
	set(job, "subject", gen(b, S_STRING, 0));
	set(req, "subject", gen(b, S_STRING, 1));
	set(req, "reference", gen(b, S_INT, 1));
	set(req, "tau", gen(b, S_REAL, 1));
	json_object_set_new(job, "request", req);
	set(res, "verdict", gen_name(b, verdicts, ARRAY_SIZE(verdicts)));
	set(res, "path", gen(b, S_ARRAY_STRINGS, 1));
	set(res, "summary", gen(b, S_STRING, 1));
	set(res, "reference", gen(b, S_INT, 1));
	set(res, "reason", gen(b, S_STRING, 1));
	set(res, "reason_code", gen(b, S_STRING, 1));
	set(res, "tau", gen(b, S_REAL, 1));
	set(timings, "total_s", gen(b, S_REAL, 2));
	json_object_set_new(res, "timings", timings);
	set(res, "warnings", gen(b, S_ARRAY_STRINGS, 1));
	json_object_set_new(res, "unavailable", gen_unavailable(b));
	if (fuzz_u8(b) % 3)
		json_object_set_new(job, "result", res);
	else
		json_decref(res);
	set(err, "code", gen(b, S_STRING, 1));
	set(err, "message", gen(b, S_STRING, 1));
	if (fuzz_u8(b) % 3 == 0)
		json_object_set_new(job, "error", err);
	else
		json_decref(err);

	n = fuzz_u8(b) % 12;
	for (i = 0; i < n && b->n; i++)
		json_array_append_new(steps, gen_step(b, actions, ARRAY_SIZE(actions)));
	set(trace, "job", gen(b, S_INT, 0));
	json_object_set_new(trace, "steps", steps);
	*ret_job = job;
	*ret_trace = trace;
}

/* A copy of v with '<', '>', '&', '"' of every string as \1..\4. */
static json_t *marked(const json_t *v)
{
	static const char specials[] = "<>&\"";
	const char *key;
	json_t *x, *out;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING: {
		char *s = xstrdup(json_string_value(v)), *p;

		for (p = s; *p; p++)
			if (strchr(specials, *p))
				*p = (char)(1 + (strchr(specials, *p) - specials));
		out = json_string(s);
		free(s);
		return out;
	}
	case JSON_ARRAY:
		out = json_array();
		json_array_foreach (v, i, x)
			json_array_append_new(out, marked(x));
		return out;
	case JSON_OBJECT:
		out = json_object();
		json_object_foreach ((json_t *)v, key, x)
			json_object_set_new(out, key, marked(x));
		return out;
	default:
		return json_deep_copy(v);
	}
}

/* The marked page with its marks turned into the entities escaping gives. */
static char *expanded(const char *page)
{
	static const char *const entities[] = {"&lt;", "&gt;", "&amp;", "&quot;"};
	size_t n = 0;
	const char *p;
	char *out, *o;

	for (p = page; *p; p++)
		n += (*p >= 1 && *p <= 4) ? strlen(entities[*p - 1]) : 1;
	out = o = malloc(n + 1);
	if (!out)
		abort();
	for (p = page; *p; p++) {
		if (*p >= 1 && *p <= 4) {
			strcpy(o, entities[*p - 1]);
			o += strlen(entities[*p - 1]);
		} else {
			*o++ = *p;
		}
	}
	*o = 0;
	return out;
}

/* The property: page2 (of the marked input), its marks expanded, is page. */
static void check_escaped(const char *what, const char *page, const char *page2)
{
	char *want;
	size_t i;

	FUZZ_CHECK(page && page2, "no %s", what);
	for (i = 0; page[i]; i++)
		FUZZ_CHECK(page[i] < 1 || page[i] > 4, "a control byte in the %s", what);
	want = expanded(page2);
	if (strcmp(page, want)) {
		size_t at = 0;

		while (page[at] == want[at])
			at++;
		FUZZ_CHECK(false, "an input string reaches the %s unescaped at byte %zu: %.80s", what,
			   at, page + (at > 20 ? at - 20 : 0));
	}
	free(want);
}

/* The job as GET /jobs lists it: the entry's fields, verdict and path from its result. */
static json_t *list_of(struct fuzz_bytes *b, const json_t *job)
{
	json_t *entry = json_deep_copy(job), *res = json_object_get(job, "result");

	json_object_del(entry, "result");
	json_object_del(entry, "request");
	json_object_del(entry, "error");
	if (json_object_get(res, "verdict"))
		json_object_set(entry, "verdict", json_object_get(res, "verdict"));
	if (json_object_get(res, "path"))
		json_object_set(entry, "path", json_object_get(res, "path"));
	return json_pack("{s:[o,O],s:o*}", "jobs", entry, job, "next_before", gen(b, S_INT, 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_bytes b = {data, size};
	json_t *job, *trace, *job2, *trace2, *list, *list2;
	char *page, *page2;

	gen_job(&b, &job, &trace);
	job2 = marked(job);
	trace2 = marked(trace);
	page = trace_render_html(job, trace);
	page2 = trace_render_html(job2, trace2);
	check_escaped("trace page", page, page2);
	free(page);
	free(page2);

	list = list_of(&b, job);
	FUZZ_CHECK(list, "no list");
	list2 = marked(list);
	page = job_list_render_html(list);
	page2 = job_list_render_html(list2);
	check_escaped("job list page", page, page2);
	free(page);
	free(page2);
	json_decref(list);
	json_decref(list2);
	json_decref(job);
	json_decref(trace);
	json_decref(job2);
	json_decref(trace2);
	return 0;
}
