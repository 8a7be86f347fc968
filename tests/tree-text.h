/* SPDX-License-Identifier: MIT */
/*
 * A tree written inside a test, with single quotes where JSON has double
 * ones ("{'version': 'v', 'nodes': [...]}"), loaded as the daemon loads
 * tree-data; a tree the loader refuses stops the test.
 */
#pragma once

#include <jansson.h>
#include <stdio.h>

#include "daemon/tree.h"
#include "daemon/util.h"
#include "tests/tap.h"

static inline struct tree *tree_load_text(const char *text)
{
	_cleanup_free_ char *s = xstrdup(text), *err = NULL;
	json_auto_t *doc = NULL;
	struct tree *t = NULL;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	doc = json_loads(s, 0, NULL);
	REQUIRE(doc);
	if (tree_from_json(doc, &t, &err) < 0)
		fprintf(stderr, "%s\n", err ? err : "bad tree");
	REQUIRE(t);
	return t;
}
