// SPDX-License-Identifier: MIT
/*
 * Service definitions: the bytes are a definition file's text, parsed and
 * given to service_from_json (its "sli" to sli_from_json).
 *
 * Properties: a refusal says why (valid UTF-8: it is shown in GET
 * /services); an accepted definition has a valid name, exactly one of a
 * valid unit and a valid cgroup path, a window in range and a user; and
 * service_to_json gives a document that parses back to the same JSON.
 */
#include "daemon/cgroup.h"
#include "daemon/service.h"
#include "daemon/unit.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct service *s = NULL, *back = NULL;
	json_t *doc, *j, *j2;
	char *err = NULL;
	int r;

	doc = json_loadb((const char *)data, size, 0, NULL);
	if (!doc)
		return 0;
	r = service_from_json(doc, &s, &err);
	json_decref(doc);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && !s && err, "r=%d", r);
		FUZZ_CHECK(fuzz_utf8(err), "the refusal is not valid UTF-8: %s", err);
		free(err);
		return 0;
	}
	FUZZ_CHECK(s && !err, "output");
	FUZZ_CHECK(valid_name(s->name, SERVICE_NAME_MAX), "name");
	FUZZ_CHECK(!s->unit != !s->cgroup, "unit and cgroup");
	FUZZ_CHECK(!s->unit || unit_name_valid(s->unit), "unit %s", s->unit);
	FUZZ_CHECK(!s->cgroup || cgroup_path_valid(s->cgroup), "cgroup %s", s->cgroup);
	FUZZ_CHECK(s->window_s <= SERVICE_WINDOW_MAX_S, "window_s %u", s->window_s);
	FUZZ_CHECK(s->user && valid_user_name(s->user), "user");

	j = service_to_json(s);
	FUZZ_CHECK(j, "service_to_json");
	r = service_from_json(j, &back, &err);
	FUZZ_CHECK(r == 0, "service_to_json's document does not parse back: %s", err);
	j2 = service_to_json(back);
	FUZZ_CHECK(json_equal(j, j2), "the round trip changes the JSON");
	json_decref(j2);
	json_decref(j);
	service_free(back);
	service_free(s);
	return 0;
}
