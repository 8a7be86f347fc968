/* SPDX-License-Identifier: MIT */
/*
 * The tree the daemon embeds (tree-data/tree.json under ARGUS_SOURCE_DIR),
 * for tests, as it is or as only functions would measure it: every leaf
 * that declares fentry or kprobe hooks loses its classes and tracepoint
 * hooks, so that the function backends give its meaning (resolve.c) and
 * their choice and plans can be tested on the real hooks.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/tree.h"
#include "daemon/util.h"
#include "tests/tap.h"

static inline struct tree *real_tree_load(bool functions_only)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *path = xasprintf("%s/tree-data/tree.json", src ?: ".");
	_cleanup_free_ char *err = NULL;
	json_auto_t *doc = json_load_file(path, 0, NULL);
	struct tree *t = NULL;
	json_t *n, *hooks;
	size_t i;

	REQUIRE(doc);
	json_array_foreach(json_object_get(doc, "nodes"), i, n) {
		hooks = json_object_get(n, "hooks");
		if (!functions_only || !hooks ||
		    (!json_object_get(hooks, "fentry") && !json_object_get(hooks, "kprobe")))
			continue;
		json_object_del(n, "classes");
		json_object_del(hooks, "tracepoint");
	}
	if (tree_from_json(doc, &t, &err) < 0)
		fprintf(stderr, "%s: %s\n", path, err ? err : "bad tree");
	REQUIRE(t);
	return t;
}
