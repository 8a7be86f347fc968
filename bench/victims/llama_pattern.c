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

#include <getopt.h>
#include <sys/mman.h>

static const char *prog = "llama_pattern";

static void usage(void)
{
	printf("usage: %s [--model-mb N] [--tokens N] [--kv-kb N] [--dir DIR]\n"
	       "  --model-mb N  model file size in MiB (default 128)\n"
	       "  --tokens N    tokens generated, each streaming the model (default 96)\n"
	       "  --kv-kb N     KV cache growth per token in KiB (default 1024)\n"
	       "  --dir DIR     where the model file lives (default /var/tmp/argus-victims-UID)\n",
	       prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"model-mb", required_argument, NULL, 'm'}, {"tokens", required_argument, NULL, 't'},
	    {"kv-kb", required_argument, NULL, 'k'},	{"dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},		{},
	};
	uint64_t model_mb = 128, tokens = 96, kv_kb = 1024, tok, i, sum = 0, start;
	uint64_t kv_pages_per_token, kv_bytes, kv_used = 0;
	const char *dir = NULL;
	char path[PATH_MAX], name[64];
	const uint64_t *model;
	char *kv;
	int c, fd;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			model_mb = bench_parse_u64(prog, "model-mb", optarg, 1, 1 << 16);
			break;
		case 't':
			tokens = bench_parse_u64(prog, "tokens", optarg, 1, 1 << 20);
			break;
		case 'k':
			kv_kb = bench_parse_u64(prog, "kv-kb", optarg, 4, 1 << 20);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	bench_data_dir(prog, dir, path, sizeof(path));
	snprintf(name, sizeof(name), "model_%llumb.dat", (unsigned long long)model_mb);
	kv_pages_per_token = kv_kb * 1024 / PAGE_SIZE_4K;
	kv_bytes = kv_pages_per_token * PAGE_SIZE_4K * tokens;

	start = bench_now_ns();
	fd = bench_data_file(prog, path, name, model_mb * MIB);
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
