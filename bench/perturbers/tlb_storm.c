// SPDX-License-Identifier: MIT
/*
 * tlb_storm: TLB shootdown IPIs. One process, --threads threads pinned to
 * --cpu (default 0, the victims' CPU) and one more on another CPU, all
 * touching a shared mapping that they keep write-protecting, unmapping
 * and re-mapping. Each permission drop or unmap of pages another CPU may
 * have cached in its TLB sends that CPU a flush IPI.
 */
#include "bench/common.h"

#include <pthread.h>
#include <sys/mman.h>

#define REGION_PAGES 64
#define SLICES 8

static const char *prog = "tlb_storm";
static char *region;

struct worker {
	pthread_t th;
	int cpu;
	int index;
	uint64_t flushes;
};

static void *storm(void *arg)
{
	struct worker *w = arg;
	size_t slice = REGION_PAGES / SLICES * PAGE_SIZE_4K, k;
	char *mine = region + (size_t)(w->index % SLICES) * slice;

	bench_pin_cpu(w->cpu);
	while (!perturb_stop) {
		/* Everyone's TLB gets entries for the whole region... */
		for (k = 0; k < (size_t)REGION_PAGES * PAGE_SIZE_4K; k += PAGE_SIZE_4K)
			(void)*(volatile char *)(region + k);
		for (k = 0; k < slice; k += PAGE_SIZE_4K)
			mine[k]++;
		/* ...and every change of this slice must be flushed from the others'. */
		if (mprotect(mine, slice, PROT_READ) == 0)
			w->flushes++;
		(void)mprotect(mine, slice, PROT_READ | PROT_WRITE);
		if (madvise(mine, slice, MADV_DONTNEED) == 0)
			w->flushes++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker workers[65];
	uint64_t threads = 1, i, total = 0;
	const struct bench_flag flags[] = {
	    {"threads", "N", "threads on --cpu (one more runs on the next CPU)", &threads, 1, 64},
	    {},
	};
	struct perturb_opts o;
	int cpu, other, r;
	sigset_t old;

	perturb_parse(prog, "Shootdown IPIs from a multi-threaded mapping churn.", 0, flags, argc,
		      argv, &o);
	cpu = o.cpu;
	perturb_begin(prog, o.restore_only, -1);
	other = (cpu + 1) % bench_ncpus();
	region = mmap(NULL, REGION_PAGES * PAGE_SIZE_4K, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		bench_die(prog, "mmap: %s", strerror(errno));

	perturb_block_signals(&old);
	for (i = 0; i <= threads; i++) {
		workers[i].cpu = i < threads ? cpu : other;
		workers[i].index = (int)i;
		r = pthread_create(&workers[i].th, NULL, storm, &workers[i]);
		if (r)
			bench_die(prog, "pthread_create: %s", strerror(r));
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	perturb_ready();
	perturb_wait();
	for (i = 0; i <= threads; i++) {
		pthread_join(workers[i].th, NULL);
		total += workers[i].flushes;
	}
	fprintf(stderr, "%s: %llu flushing calls\n", prog, (unsigned long long)total);
	perturb_end();
	return 0;
}
