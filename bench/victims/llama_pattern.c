// SPDX-License-Identifier: MIT
/*
 * llama_pattern: the memory pattern of LLM inference on a CPU host. A
 * read-only "model" file is mapped and streamed in full for every token
 * (weights read in order), while an anonymous "KV cache" grows by a few
 * pages per token. The model's pages come from the page cache (file
 * faults on the first token, none after while mapped); the KV cache's from
 * anonymous faults.
 */
#include "bench/common.h"

#include <sys/mman.h>

static const char *prog = "llama_pattern";

int main(int argc, char **argv)
{
	uint64_t model_mb = 128, tokens = 96, kv_kb = 1024, tok, i, sum = 0, start;
	uint64_t kv_pages_per_token, kv_bytes, kv_used = 0;
	const char *dir = NULL;
	const struct bench_flag flags[] = {
	    {"model-mb", "N", "model file size in MiB", &model_mb, 1, 1 << 16},
	    {"tokens", "N", "tokens generated, each streaming the model", &tokens, 1, 1 << 20},
	    {"kv-kb", "N", "KV cache growth per token in KiB", &kv_kb, 4, 1 << 20},
	    {"dir", "DIR", "where the model file lives (default /var/tmp/argus-victims-UID)",
	     .str = &dir},
	    {},
	};
	const uint64_t *model;
	char *kv;
	int fd;

	bench_parse_flags(prog, "The memory pattern of LLM inference on a CPU host.", flags, argc,
			  argv);
	kv_pages_per_token = kv_kb * 1024 / PAGE_SIZE_4K;
	kv_bytes = kv_pages_per_token * PAGE_SIZE_4K * tokens;

	start = bench_now_ns();
	fd = bench_open_data(prog, dir, "model", model_mb);
	model = mmap(NULL, model_mb * MIB, PROT_READ, MAP_PRIVATE, fd, 0);
	if (model == MAP_FAILED)
		bench_die(prog, "mmap model: %s", strerror(errno));
	(void)madvise((void *)model, model_mb * MIB, MADV_SEQUENTIAL);
	/* Reserved up front, touched page by page as tokens are generated. */
	kv = mmap(NULL, kv_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (kv == MAP_FAILED)
		bench_die(prog, "mmap kv cache: %s", strerror(errno));

	for (tok = 0; tok < tokens; tok++) {
		uint64_t words = model_mb * MIB / 8, acc = tok;

		/* "Weights": every cache line of the model, in order. */
		for (i = 0; i < words; i += 8)
			acc += model[i];
		for (i = 0; i < kv_pages_per_token; i++, kv_used++)
			kv[kv_used * PAGE_SIZE_4K] = (char)(acc + i);
		sum += acc;
	}
	printf("%s model_mb=%llu tokens=%llu kv_pages=%llu checksum=%llu elapsed_ms=%.1f\n", prog,
	       (unsigned long long)model_mb, (unsigned long long)tokens,
	       (unsigned long long)kv_used, (unsigned long long)sum,
	       (bench_now_ns() - start) / 1e6);
	munmap(kv, kv_bytes);
	munmap((void *)model, model_mb * MIB);
	close(fd);
	return 0;
}
