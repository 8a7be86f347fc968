// SPDX-License-Identifier: MIT
/*
 * Workload definitions: the bytes are a definition file's text, parsed
 * and given to workload_from_json.
 *
 * Properties: a refusal says why (valid UTF-8: it is shown in GET
 * /workloads); an accepted definition is within the header's limits, and
 * workload_to_json gives a document that parses back to the same workload
 * (the header's promise), whose JSON is the same again.
 */
#include "daemon/util.h"
#include "daemon/workload.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <limits.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

static void check_limits(const struct workload *w)
{
	size_t i;

	FUZZ_CHECK(valid_name(w->name, WORKLOAD_NAME_MAX), "name");
	FUZZ_CHECK(w->argc >= 1 && w->argc <= WORKLOAD_ARGV_MAX && w->argv[w->argc] == NULL,
		   "argc %zu", w->argc);
	for (i = 0; i < w->argc; i++)
		FUZZ_CHECK(w->argv[i] && strlen(w->argv[i]) <= WORKLOAD_ARG_LEN_MAX, "argv[%zu]",
			   i);
	FUZZ_CHECK(w->argv[0][0] == '/' ? strlen(w->argv[0]) < PATH_MAX
					: valid_name(w->argv[0], WORKLOAD_NAME_MAX),
		   "argv[0] %s", w->argv[0]);
	FUZZ_CHECK(w->timeout_s >= 1 && w->timeout_s <= WORKLOAD_TIMEOUT_MAX, "timeout_s %u",
		   w->timeout_s);
	FUZZ_CHECK(w->user && *w->user && strlen(w->user) <= 32, "user");
	FUZZ_CHECK(CPU_COUNT(&w->cpuset) > 0 || w->cpus, "no CPU");
	FUZZ_CHECK(!w->description || strlen(w->description) <= WORKLOAD_DESCRIPTION_MAX,
		   "description");
}

static bool same(const struct workload *a, const struct workload *b)
{
	size_t i;

	if (strcmp(a->name, b->name) || a->argc != b->argc || strcmp(a->user, b->user) ||
	    a->timeout_s != b->timeout_s || !CPU_EQUAL(&a->cpuset, &b->cpuset) ||
	    !a->cpus != !b->cpus || (a->cpus && strcmp(a->cpus, b->cpus)) ||
	    !a->description != !b->description ||
	    (a->description && strcmp(a->description, b->description)))
		return false;
	for (i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], b->argv[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload *w = NULL, *back = NULL;
	json_t *doc, *j, *j2;
	char *err = NULL;
	int r;

	doc = json_loadb((const char *)data, size, 0, NULL);
	if (!doc)
		return 0;
	r = workload_from_json(doc, &w, &err);
	json_decref(doc);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && !w && err, "r=%d", r);
		FUZZ_CHECK(fuzz_utf8(err), "the refusal is not valid UTF-8: %s", err);
		free(err);
		return 0;
	}
	FUZZ_CHECK(w && !err, "output");
	check_limits(w);

	j = workload_to_json(w);
	FUZZ_CHECK(j, "workload_to_json");
	r = workload_from_json(j, &back, &err);
	FUZZ_CHECK(r == 0, "workload_to_json's document does not parse back: %s", err);
	FUZZ_CHECK(same(w, back), "the round trip changes the workload");
	j2 = workload_to_json(back);
	FUZZ_CHECK(json_equal(j, j2), "the round trip changes the JSON");
	json_decref(j2);
	json_decref(j);
	workload_free(back);
	workload_free(w);
	return 0;
}
