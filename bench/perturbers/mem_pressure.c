// SPDX-License-Identifier: MIT
/*
 * mem_pressure: low free memory. Takes anonymous memory in 64 MiB chunks
 * until MemAvailable is down to --reserve-mb (default 256), then keeps
 * writing its pages so they stay hot. There is no swap here, so the kernel
 * can only make room by reclaiming page cache: victims that rely on cached
 * files fault again, and allocations enter direct reclaim.
 *
 * Never the cause of an OOM kill elsewhere: this process volunteers as the
 * OOM killer's first choice (oom_score_adj 1000, its own setting), and
 * when MemAvailable falls below half the reserve (someone else needs
 * memory) it gives chunks back.
 */
#include "bench/common.h"

#include <sys/mman.h>

#define CHUNK (64 * MIB)
#define CHUNKS_MAX 4096

static const char *prog = "mem_pressure";

int main(int argc, char **argv)
{
	static char *chunks[CHUNKS_MAX];
	uint64_t reserve_mb = 256, max_mb = 1 << 24, reserve, max, held = 0, passes = 0;
	const struct bench_flag flags[] = {
	    {"reserve-mb", "N", "MemAvailable left to the others, in MiB", &reserve_mb, 128,
	     1 << 20},
	    {"max-mb", "N", "the most memory taken, in MiB", &max_mb, 64, 1 << 24},
	    {},
	};
	struct perturb_opts o;
	bool ready = false;
	size_t n = 0, i, k, cursor = 0;

	perturb_parse(prog, "Take memory until little is available; keep it hot.", -1, flags, argc,
		      argv, &o);
	reserve = reserve_mb * MIB;
	max = max_mb * MIB;
	perturb_begin(prog, o.restore_only, o.cpu);
	{
		int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "1000", 4) != 4)
			bench_die(prog, "setting oom_score_adj: %s", strerror(errno));
		close(fd);
	}

	while (!perturb_stop) {
		uint64_t avail = bench_mem_available();

		if (avail > reserve + CHUNK && held + CHUNK <= max && n < CHUNKS_MAX) {
			/* Grow: one more chunk, written through so it is really ours. */
			char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED) {
				bench_sleep_ms(100);
				continue;
			}
			(void)madvise(p, CHUNK, MADV_HUGEPAGE);
			for (k = 0; k < CHUNK; k += PAGE_SIZE_4K)
				p[k] = 1;
			chunks[n++] = p;
			held += CHUNK;
			continue;
		}
		if (avail && avail < reserve / 2 && n > 0) {
			/* Someone else needs memory: give a chunk back. */
			munmap(chunks[--n], CHUNK);
			held -= CHUNK;
			continue;
		}
		/*
		 * Keep the pages hot, one chunk per turn, so that MemAvailable is
		 * checked again after every 64 MiB.
		 */
		if (!ready) {
			fprintf(stderr, "%s: holding %llu MiB\n", prog,
				(unsigned long long)(held / MIB));
			perturb_ready();
			ready = true;
		}
		if (n == 0) {
			bench_sleep_ms(100);
			continue;
		}
		if (cursor >= n) {
			cursor = 0;
			passes++;
			bench_sleep_ms(10);
		}
		for (k = 0; k < CHUNK; k += PAGE_SIZE_4K)
			chunks[cursor][k]++;
		cursor++;
	}
	fprintf(stderr, "%s: held %llu MiB, %llu refresh passes\n", prog,
		(unsigned long long)(held / MIB), (unsigned long long)passes);
	for (i = 0; i < n; i++)
		munmap(chunks[i], CHUNK);
	perturb_end();
	return 0;
}
