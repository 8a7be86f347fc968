/* SPDX-License-Identifier: MIT */
/* The tests' copy of the real tree: tree-data/tree.json of the checkout under test. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "daemon/tree.h"
#include "daemon/util.h"
#include "tests/tap.h"

/* Load $ARGUS_SOURCE_DIR/tree-data/tree.json, unresolved; aborts the test when it cannot. */
static inline struct tree *load_real(void)
{
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *path = NULL, *err = NULL;
	struct tree *t = NULL;

	REQUIRE(src);
	path = xasprintf("%s/tree-data/tree.json", src);
	if (tree_load_file(path, &t, &err) < 0)
		fprintf(stderr, "%s\n", err ? err : path);
	REQUIRE(t);
	return t;
}
