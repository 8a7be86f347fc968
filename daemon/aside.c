// SPDX-License-Identifier: MIT
/* Stepping aside from the target's CPUs while it runs; see aside.h. */
#include "daemon/aside.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ASIDE_THREADS_MAX 256

int aside_enter(const cpu_set_t *target, struct aside *a)
{
	DIR *d;
	struct dirent *e;

	*a = (struct aside){};
	a->threads = calloc(ASIDE_THREADS_MAX, sizeof(*a->threads));
	if (!a->threads)
		return -ENOMEM;
	d = opendir("/proc/self/task");
	if (!d) {
		int r = -errno;

		aside_leave(a);
		return r;
	}
	while ((e = readdir(d)) && a->n < ASIDE_THREADS_MAX) {
		struct aside_thread *t = &a->threads[a->n];
		cpu_set_t narrow;
		char *end;
		long tid;

		errno = 0;
		tid = strtol(e->d_name, &end, 10);
		if (e->d_name[0] == '.' || *end || errno || tid <= 0)
			continue;
		t->tid = (pid_t)tid;
		if (sched_getaffinity(t->tid, sizeof(t->mask), &t->mask) < 0)
			continue; /* exited */
		CPU_XOR(&narrow, &t->mask, target);
		CPU_AND(&narrow, &narrow, &t->mask);
		if (CPU_COUNT(&narrow) == 0 || CPU_EQUAL(&narrow, &t->mask))
			continue; /* nowhere else to go, or already away */
		if (sched_setaffinity(t->tid, sizeof(narrow), &narrow) < 0)
			continue;
		a->n++;
	}
	closedir(d);
	return (int)a->n;
}

void aside_leave(struct aside *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		(void)sched_setaffinity(a->threads[i].tid, sizeof(a->threads[i].mask),
					&a->threads[i].mask);
	free(a->threads);
	*a = (struct aside){};
}
