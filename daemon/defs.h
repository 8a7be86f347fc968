/* SPDX-License-Identifier: MIT */
/*
 * Definition directories: the admin's "*.json" files, one definition per
 * file (workloads_dir, services_dir). Listing and reading them is the same
 * for every kind; what a file must hold is the kind's own parser.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/*
 * Read every "*.json" of dir (no hidden files) in name order, at most max
 * of them, each a regular file of at most file_max bytes holding one JSON
 * document (duplicate keys refused), and hand each to add(ctx, doc, path):
 * add takes path (dir/file, owned) when it returns 0, or refuses the
 * definition with a negative errno and *ret_err (the reason). Every file
 * that cannot be read or is refused becomes one "file: reason" message
 * given to error(ctx, msg) (owned), and so do the files beyond max. A
 * directory that cannot be listed is a negative errno (-ENOENT when it
 * does not exist), with nothing added.
 */
int defs_load(const char *dir, size_t max, size_t file_max, void *ctx,
	      int (*add)(void *ctx, const json_t *doc, char *path, char **ret_err),
	      void (*error)(void *ctx, char *msg));
