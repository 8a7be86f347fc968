// SPDX-License-Identifier: MIT
/*
 * Request validation: the bytes are a POST body, parsed as argusd parses
 * one (api_parse_body) and validated as /diagnose and as /references, with
 * the llm agent configured and not.
 *
 * Properties: a refusal is a 4xx with a code and a message that can be sent
 * (valid UTF-8: the error body is JSON); an accepted body comes back
 * normalized with every field in its documented range, its subject is one
 * GET /references?subject= accepts, and validating the normalized form
 * again gives the same form (what a job stores is what would be run).
 */
#include "api/json.h"
#include "api/validate.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

static struct workload_registry *registry;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const defs[] = {
	    "{\"name\": \"checkout\", \"argv\": [\"checkout\"], \"timeout_s\": 60}",
	    ("{\"name\": \"pf_major\", \"argv\": [\"pf_major\", \"--pages\", \"64\"], "
	     "\"timeout_s\": 60}"),
	    "{\"name\": \"cpu.hog-1\", \"argv\": [\"/bin/true\"], \"timeout_s\": 1}",
	};
	size_t i;

	fuzz_json_init();
	registry = calloc(1, sizeof(*registry));
	registry->items = calloc(ARRAY_SIZE(defs), sizeof(struct workload *));
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		json_t *doc = json_loads(defs[i], 0, NULL);

		if (!doc || workload_from_json(doc, &registry->items[i], NULL) < 0)
			abort();
		json_decref(doc);
	}
	registry->n = ARRAY_SIZE(defs);
	return 0;
}

static void check_error(const struct api_error *e)
{
	json_t *body;

	FUZZ_CHECK(e->status >= 400 && e->status < 500, "status %u", e->status);
	FUZZ_CHECK(memchr(e->code, 0, sizeof(e->code)) && e->code[0], "code");
	FUZZ_CHECK(memchr(e->message, 0, sizeof(e->message)) && e->message[0], "message");
	body = api_error_json(e->code, e->message);
	FUZZ_CHECK(body != NULL, "the error cannot be sent as JSON: code %s, message \"%s\"",
		   e->code, e->message);
	json_decref(body);
}

static bool is_registered(const char *name)
{
	size_t i;

	for (i = 0; i < registry->n; i++)
		if (!strcmp(registry->items[i]->name, name))
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/* The subject and the workload or target of a normalized request; returns whether a target. */
static bool check_subject(const json_t *out)
{
	const char *subject = json_string_value(json_object_get(out, "subject"));
	json_t *workload = json_object_get(out, "workload"),
	       *target = json_object_get(out, "target");
	struct query_arg q = {"subject", subject};
	struct api_error e = {};
	const char *got = NULL;
	int limit = 0;
	char buf[64];

	FUZZ_CHECK(subject && *subject, "no subject");
	FUZZ_CHECK(!workload != !target, "exactly one of workload and target");
	FUZZ_CHECK(validate_reference_query(&q, 1, &got, &limit, &e) == 0 && got == subject,
		   "GET /references refuses the subject \"%s\" a request was stored under: %s",
		   subject, e.message);
	if (workload) {
		FUZZ_CHECK(json_is_string(workload) && is_registered(json_string_value(workload)),
			   "workload");
		FUZZ_CHECK(!strcmp(subject, json_string_value(workload)), "subject %s", subject);
		return false;
	}
	FUZZ_CHECK(json_is_object(target) && json_object_size(target) == 1, "target");
	if (json_object_get(target, "pid")) {
		json_t *pid = json_object_get(target, "pid");

		FUZZ_CHECK(json_is_integer(pid) && json_integer_value(pid) >= 1 &&
			       json_integer_value(pid) <= INT32_MAX,
			   "pid");
		snprintf(buf, sizeof(buf), "pid:%" JSON_INTEGER_FORMAT, json_integer_value(pid));
		FUZZ_CHECK(!strcmp(subject, buf), "subject %s", subject);
	} else {
		const char *unit = json_string_value(json_object_get(target, "unit"));

		FUZZ_CHECK(unit && strlen(unit) <= API_UNIT_MAX &&
			       (ends_with(unit, ".service") || ends_with(unit, ".scope")),
			   "unit");
		FUZZ_CHECK(!strncmp(subject, "unit:", 5) && !strcmp(subject + 5, unit),
			   "subject %s", subject);
	}
	return true;
}

static void check_int(const json_t *out, const char *key, long long min, long long max)
{
	json_t *v = json_object_get(out, key);

	FUZZ_CHECK(json_is_integer(v) && json_integer_value(v) >= min &&
		       json_integer_value(v) <= max,
		   "%s", key);
}

static void check_diagnose(const json_t *out, bool llm)
{
	const char *agent = json_string_value(json_object_get(out, "agent"));
	json_t *tau = json_object_get(out, "tau");
	bool target = check_subject(out);
	size_t fields = 6; /* subject, workload or target, agent, tau, max_depth, calibration */

	FUZZ_CHECK(agent && (!strcmp(agent, "builtin") || (llm && !strcmp(agent, "llm"))), "agent");
	FUZZ_CHECK(json_is_real(tau) && isfinite(json_real_value(tau)) &&
		       json_real_value(tau) >= API_TAU_MIN && json_real_value(tau) <= API_TAU_MAX,
		   "tau");
	check_int(out, "max_depth", 1, API_DEPTH_MAX);
	FUZZ_CHECK(json_is_boolean(json_object_get(out, "calibration")), "calibration");
	if (json_object_get(out, "reference")) {
		check_int(out, "reference", 1, INT64_MAX);
		fields++;
	}
	if (target) {
		check_int(out, "window_s", 1, API_WINDOW_MAX_S);
		fields++;
	}
	FUZZ_CHECK(json_object_size(out) == fields, "%zu fields", json_object_size(out));
}

static void check_reference(const json_t *out)
{
	bool target = check_subject(out);

	check_int(out, "repeats", API_REPEATS_MIN, API_REPEATS_MAX);
	if (target)
		check_int(out, "window_s", 1, API_WINDOW_MAX_S);
	FUZZ_CHECK(json_object_size(out) == 3u + target, "%zu fields", json_object_size(out));
}

typedef int (*validator)(const json_t *body, const struct request_defaults *d,
			 const struct workload_registry *workloads, json_t **ret,
			 struct api_error *err);

static void one(validator v, const json_t *body, bool llm)
{
	const struct request_defaults d = {
	    .tau = 3, .window_s = 5, .repeats = API_REPEATS_MIN, .llm_configured = llm};
	struct api_error e = {};
	json_t *out = NULL, *again = NULL, *copy;
	int r;

	r = v(body, &d, registry, &out, &e);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && out == NULL, "r=%d", r);
		check_error(&e);
		return;
	}
	FUZZ_CHECK(json_is_object(out), "normalized body");
	if (v == validate_diagnose)
		check_diagnose(out, llm);
	else
		check_reference(out);

	copy = json_deep_copy(out);
	json_object_del(copy, "subject");
	r = v(copy, &d, registry, &again, &e);
	FUZZ_CHECK(r == 0, "the normalized body is refused: %s", e.message);
	FUZZ_CHECK(json_equal(out, again), "normalizing twice changes the request");
	json_decref(copy);
	json_decref(again);
	json_decref(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_error e = {};
	json_t *body = NULL;

	if (api_parse_body((const char *)data, size, &body, &e) < 0) {
		FUZZ_CHECK(body == NULL, "body");
		check_error(&e);
		return 0;
	}
	FUZZ_CHECK(json_is_object(body), "api_parse_body returned a non-object");
	one(validate_diagnose, body, false);
	one(validate_diagnose, body, true);
	one(validate_reference_request, body, false);
	json_decref(body);
	return 0;
}
