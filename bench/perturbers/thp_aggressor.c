// SPDX-License-Identifier: MIT
/*
 * thp_aggressor: huge page pressure on a fragmented machine. Sets THP
 * enabled=always and defrag=always (both restored on exit), fragments
 * physical memory (a --frag-mb region of 4 KiB pages of which every other
 * page is freed), then loops asking for huge pages: map a 2 MiB aligned
 * region, MADV_HUGEPAGE, touch it, unmap. With defrag=always each miss
 * compacts synchronously. Every --compact-every regions it also asks for
 * full compaction and flips which half of its fragments it holds, so the
 * fragmentation does not settle.
 */
#include "bench/common.h"

#include <sys/mman.h>

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define THP_DEFRAG "/sys/kernel/mm/transparent_hugepage/defrag"
#define COMPACT_MEMORY "/proc/sys/vm/compact_memory"
#define HPAGE (2 * MIB)

static const char *prog = "thp_aggressor";

/* Hold the pages of one parity, free the others. */
static void fragment(char *frag, uint64_t bytes, int keep)
{
	uint64_t off;
	size_t i = 0;

	for (off = 0; off < bytes; off += PAGE_SIZE_4K, i++) {
		if ((int)(i & 1) == keep)
			frag[off] = (char)i;
		else
			(void)madvise(frag + off, PAGE_SIZE_4K, MADV_DONTNEED);
		if (perturb_stop)
			return;
	}
}

int main(int argc, char **argv)
{
	uint64_t frag_mb = 0, frag_bytes, compact_every = 256, regions = 0, off;
	const struct bench_flag flags[] = {
	    {"frag-mb", "N", "region fragmented in MiB (default a quarter of MemAvailable)",
	     &frag_mb, 2, 1 << 24},
	    {"compact-every", "N", "huge page requests between full compactions, 0 never",
	     &compact_every, 0, 1 << 24},
	    {},
	};
	struct perturb_opts o;
	int r, keep = 0;
	char *frag;

	perturb_parse(prog, "Fragment memory, then keep asking for huge pages.", -1, flags, argc,
		      argv, &o);
	frag_bytes = frag_mb * MIB;
	perturb_begin(prog, o.restore_only, o.cpu);
	if (!frag_bytes)
		frag_bytes = bench_mem_available() / 4 / HPAGE * HPAGE;
	if (frag_bytes < HPAGE)
		frag_bytes = HPAGE;
	/* Never more than half of what is available, whatever was asked. */
	if (frag_bytes > bench_mem_available() / 2)
		frag_bytes = bench_mem_available() / 2 / HPAGE * HPAGE;

	r = perturb_set(THP_ENABLED, "always");
	if (r == 0)
		r = perturb_set(THP_DEFRAG, "always");
	if (r < 0) {
		fprintf(stderr, "%s: changing THP settings: %s\n", prog, strerror(-r));
		perturb_end();
		return 1;
	}

	frag = mmap(NULL, frag_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (frag == MAP_FAILED) {
		fprintf(stderr, "%s: mmap %llu MiB: %s\n", prog,
			(unsigned long long)(frag_bytes / MIB), strerror(errno));
		perturb_end();
		return 1;
	}
	(void)madvise(frag, frag_bytes, MADV_NOHUGEPAGE);
	for (off = 0; off < frag_bytes && !perturb_stop; off += PAGE_SIZE_4K)
		frag[off] = 1;
	fragment(frag, frag_bytes, keep);
	fprintf(stderr, "%s: fragmented %llu MiB\n", prog, (unsigned long long)(frag_bytes / MIB));
	perturb_ready();

	while (!perturb_stop) {
		char *raw = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		     *p;

		if (raw == MAP_FAILED) {
			bench_sleep_ms(10);
			continue;
		}
		p = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(uintptr_t)(HPAGE - 1));
		(void)madvise(p, HPAGE, MADV_HUGEPAGE);
		for (off = 0; off < HPAGE; off += PAGE_SIZE_4K)
			p[off] = 1;
		munmap(raw, 2 * HPAGE);
		regions++;
		if (compact_every && regions % compact_every == 0) {
			(void)perturb_poke(COMPACT_MEMORY, "1");
			keep ^= 1;
			fragment(frag, frag_bytes, keep);
		}
	}
	fprintf(stderr, "%s: %llu huge page requests\n", prog, (unsigned long long)regions);
	munmap(frag, frag_bytes);
	perturb_end();
	return 0;
}
