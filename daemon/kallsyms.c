// SPDX-License-Identifier: MIT
/*
 * Kernel function names by address, read from /proc/kallsyms once for each
 * batch of addresses not met before, and kept. See kallsyms.h.
 */
#include "daemon/kallsyms.h"
#include "daemon/util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Addresses named so far (a name "" when the file has none there); the first ones kept when full. */
#define KEPT_MAX 256

static struct kept_symbol {
	uint64_t addr;
	char name[KALLSYMS_NAME_MAX];
} kept[KEPT_MAX];
static size_t n_kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *kept_name(uint64_t addr)
{
	size_t i;

	for (i = 0; i < n_kept; i++)
		if (kept[i].addr == addr)
			return kept[i].name;
	return NULL;
}

/* A kept name's entry (its address 0: the file has no such text symbol), or NULL. */
static const struct kept_symbol *kept_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < n_kept; i++)
		if (strcmp(kept[i].name, name) == 0)
			return &kept[i];
	return NULL;
}

static void keep(uint64_t addr, const char *name)
{
	if (n_kept == KEPT_MAX)
		return;
	kept[n_kept].addr = addr;
	memcpy(kept[n_kept].name, name, KALLSYMS_NAME_MAX);
	n_kept++;
}

/* One line of the file: a text symbol (t, T, w, W) and its name, cut to fit; false for others. */
static bool text_symbol(const char *line, uint64_t *addr, char name[KALLSYMS_NAME_MAX])
{
	char type, full[KALLSYMS_NAME_MAX * 8];
	size_t len;

	if (sscanf(line, "%" SCNx64 " %c %511s", addr, &type, full) != 3 || *addr == 0 ||
	    !strchr("tTwW", type))
		return false;
	len = strnlen(full, KALLSYMS_NAME_MAX - 1);
	memcpy(name, full, len);
	name[len] = '\0';
	return true;
}

/* The file's text symbols (t, T, w, W) that start at one of want[] (n), named into got[]. */
static int scan(const uint64_t *want, size_t n, char (*got)[KALLSYMS_NAME_MAX])
{
	_cleanup_fclose_ FILE *f = fopen("/proc/kallsyms", "re");
	char line[640];
	size_t i;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[KALLSYMS_NAME_MAX];
		uint64_t addr;

		if (!text_symbol(line, &addr, name))
			continue;
		for (i = 0; i < n; i++)
			if (want[i] == addr && !got[i][0])
				memcpy(got[i], name, KALLSYMS_NAME_MAX);
	}
	return ferror(f) ? -EIO : 0;
}

int kallsyms_names(const uint64_t *addrs, size_t n, char (*names)[KALLSYMS_NAME_MAX])
{
	uint64_t want[KEPT_MAX];
	char got[KEPT_MAX][KALLSYMS_NAME_MAX];
	size_t i, j, n_want = 0;
	int r = 0;

	pthread_mutex_lock(&kept_lock);
	for (i = 0; i < n; i++) {
		const char *k;

		names[i][0] = '\0';
		if (addrs[i] == 0)
			continue;
		k = kept_name(addrs[i]);
		if (k) {
			memcpy(names[i], k, KALLSYMS_NAME_MAX);
			continue;
		}
		for (j = 0; j < n_want && want[j] != addrs[i]; j++)
			;
		if (j == n_want && n_want < KEPT_MAX)
			want[n_want++] = addrs[i];
	}
	if (n_want > 0) {
		memset(got, 0, sizeof(got[0]) * n_want);
		r = scan(want, n_want, got);
		for (j = 0; r == 0 && j < n_want; j++)
			keep(want[j], got[j]);
		for (i = 0; r == 0 && i < n; i++)
			for (j = 0; !names[i][0] && j < n_want; j++)
				if (want[j] == addrs[i])
					memcpy(names[i], got[j], KALLSYMS_NAME_MAX);
	}
	pthread_mutex_unlock(&kept_lock);
	return r;
}

int kallsyms_address(const char *name, uint64_t *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	const struct kept_symbol *k;
	char line[640];
	int r = -ENOENT;

	*ret = 0;
	pthread_mutex_lock(&kept_lock);
	k = kept_by_name(name);
	if (k) {
		/* known, found or not: the file is read once per name */
		*ret = k->addr;
		pthread_mutex_unlock(&kept_lock);
		return k->addr ? 0 : -ENOENT;
	}
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		r = -errno;
	while (f && r == -ENOENT && fgets(line, sizeof(line), f)) {
		char sym[KALLSYMS_NAME_MAX];
		uint64_t addr;

		if (text_symbol(line, &addr, sym) && strcmp(sym, name) == 0) {
			*ret = addr;
			r = 0;
		}
	}
	if (f && r == -ENOENT && ferror(f))
		r = -EIO;
	if (r == 0 || r == -ENOENT) {
		char copy[KALLSYMS_NAME_MAX] = "";

		strncpy(copy, name, KALLSYMS_NAME_MAX - 1);
		keep(*ret, copy);
	}
	pthread_mutex_unlock(&kept_lock);
	return r;
}
