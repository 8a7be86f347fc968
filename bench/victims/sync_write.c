// SPDX-License-Identifier: MIT
/*
 * sync_write: synchronous small writes. Writes 4 KiB blocks cyclically over
 * a fixed file under --dir, each followed by fdatasync(), so every
 * iteration waits for the block layer and the device.
 */
#include "bench/common.h"

static const char *prog = "sync_write";

#define FILE_BLOCKS 256 /* a 1 MiB file, written round robin */

int main(int argc, char **argv)
{
	uint64_t writes = 1000, i, j, start, block[PAGE_SIZE_4K / 8];
	const char *dir = NULL;
	const struct bench_flag flags[] = {
	    {"writes", "N", "4 KiB write+fdatasync pairs", &writes, 1, 1 << 24},
	    {"dir", "DIR", "where the file lives (default /var/tmp/argus-victims-UID)",
	     .str = &dir},
	    {},
	};
	char path[PATH_MAX], file[PATH_MAX + 32];
	int fd;

	bench_parse_flags(prog, "Synchronous small writes.", flags, argc, argv);
	bench_data_dir(prog, dir, path, sizeof(path));
	snprintf(file, sizeof(file), "%s/sync_write.dat", path);

	start = bench_now_ns();
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		bench_die(prog, "open %s: %s", file, strerror(errno));
	for (i = 0; i < writes; i++) {
		off_t off = (off_t)(i % FILE_BLOCKS) * PAGE_SIZE_4K;

		for (j = 0; j < PAGE_SIZE_4K / 8; j++)
			block[j] = bench_data_word(i * 512 + j);
		if (pwrite(fd, block, sizeof(block), off) != (ssize_t)sizeof(block))
			bench_die(prog, "pwrite %s: %s", file, strerror(errno));
		if (fdatasync(fd) < 0)
			bench_die(prog, "fdatasync %s: %s", file, strerror(errno));
	}
	close(fd);
	printf("%s writes=%llu bytes=%llu elapsed_ms=%.1f\n", prog, (unsigned long long)writes,
	       (unsigned long long)(writes * PAGE_SIZE_4K), (bench_now_ns() - start) / 1e6);
	return 0;
}
