// SPDX-License-Identifier: MIT
/*
 * Definition directories (defs.h): the files are listed in name order, so
 * that of two definitions with one name the first by file name wins on
 * every load, and each is read bounded before any parser sees it.
 */
#include "daemon/defs.h"
#include "daemon/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_files(const char *dir, size_t max, char ***ret, size_t *ret_n, bool *ret_truncated)
{
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_(strv_freep) char **names = NULL;
	size_t n = 0;
	bool truncated = false;
	struct dirent *de;

	d = opendir(dir);
	if (!d)
		return -errno;
	names = calloc(1, sizeof(char *));
	if (!names)
		abort();
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **p;

		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		if (n >= max) {
			truncated = true;
			continue;
		}
		p = realloc(names, (n + 2) * sizeof(char *));
		if (!p)
			abort();
		names = p;
		names[n++] = xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (errno)
		return -errno;
	qsort(names, n, sizeof(char *), cmp_str);
	*ret = TAKE_PTR(names);
	*ret_n = n;
	*ret_truncated = truncated;
	return 0;
}

static int read_one(const char *dir, const char *file, size_t max_bytes, json_t **ret_doc,
		    char **ret_path, char **ret_err)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *text = NULL;
	json_error_t jerr;
	struct stat st;
	json_t *doc;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		*ret_err = xasprintf("%s: %s", file, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_err = xasprintf("%s: not a regular file", file);
		return -EINVAL;
	}
	r = read_file_bounded(path, max_bytes, &text, NULL);
	if (r == -EFBIG) {
		*ret_err = xasprintf("%s: larger than %zu bytes", file, max_bytes);
		return r;
	}
	if (r < 0) {
		*ret_err = xasprintf("%s: %s", file, strerror(-r));
		return r;
	}
	doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		*ret_err = xasprintf("%s: line %d: %s", file, jerr.line, jerr.text);
		return -EINVAL;
	}
	*ret_doc = doc;
	*ret_path = TAKE_PTR(path);
	return 0;
}

int defs_load(const char *dir, size_t max, size_t file_max, void *ctx,
	      int (*add)(void *ctx, const json_t *doc, char *path, char **ret_err),
	      void (*error)(void *ctx, char *msg))
{
	_cleanup_(strv_freep) char **files = NULL;
	size_t n = 0, i;
	bool truncated = false;
	int r;

	r = list_files(dir, max, &files, &n, &truncated);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		_cleanup_(json_decrefp) json_t *doc = NULL;
		char *path = NULL, *err = NULL;

		if (read_one(dir, files[i], file_max, &doc, &path, &err) < 0) {
			error(ctx, err);
			continue;
		}
		r = add(ctx, doc, path, &err);
		if (r < 0) {
			error(ctx, xasprintf("%s: %s", files[i], err ?: strerror(-r)));
			free(err);
			free(path);
		}
	}
	if (truncated)
		error(ctx, xasprintf("more than %zu definition files, the rest skipped", max));
	return 0;
}
