// SPDX-License-Identifier: MIT
/*
 * io_hog: block I/O contention. Writes a file under --dir sequentially in
 * 1 MiB blocks, fsync every --sync-mb (default 64), wrapping at --size-mb
 * (default 1024). The file is removed on exit (and by a later start when a
 * killed instance left it).
 */
#include "bench/common.h"

#include <getopt.h>

static const char *prog = "io_hog";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    PERTURB_COMMON_OPTIONS,
	    {"dir", required_argument, NULL, 'd'},
	    {"size-mb", required_argument, NULL, 's'},
	    {"sync-mb", required_argument, NULL, 'y'},
	    {},
	};
	const char *dir = "/var/tmp";
	uint64_t size = 1024 * MIB, sync_every = 64 * MIB, off = 0, written = 0;
	bool restore_only = false;
	char path[PATH_MAX];
	uint64_t *block;
	int c, cpu = -1, fd, r;
	size_t i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = (int)bench_parse_u64(prog, "cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'd':
			dir = optarg;
			break;
		case 's':
			size = bench_parse_u64(prog, "size-mb", optarg, 1, 1 << 20) * MIB;
			break;
		case 'y':
			sync_every = bench_parse_u64(prog, "sync-mb", optarg, 1, 1 << 20) * MIB;
			break;
		case 'R':
			restore_only = true;
			break;
		case 'h':
			printf("usage: %s [--cpu N] [--dir DIR] [--size-mb N] [--sync-mb N]\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	perturb_begin(prog, restore_only, cpu);
	if ((size_t)snprintf(path, sizeof(path), "%s/argus-io_hog.dat", dir) >= sizeof(path))
		bench_die(prog, "--dir: path too long");
	r = perturb_track_file(path);
	if (r < 0)
		bench_die(prog, "recording %s: %s", path, strerror(-r));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		fprintf(stderr, "%s: open %s: %s\n", prog, path, strerror(errno));
		perturb_end();
		return 1;
	}
	block = malloc(MIB);
	if (!block)
		bench_die(prog, "out of memory");
	for (i = 0; i < MIB / 8; i++)
		block[i] = bench_data_word(i);

	perturb_ready();
	while (!perturb_stop) {
		ssize_t n = pwrite(fd, block, MIB, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)MIB) {
			fprintf(stderr, "%s: writing %s: %s\n", prog, path,
				n < 0 ? strerror(errno) : "short write");
			break;
		}
		block[0]++; /* not the same bytes twice */
		off = (off + MIB) % size;
		written += MIB;
		if (written % sync_every == 0)
			(void)fsync(fd);
	}
	close(fd);
	free(block);
	fprintf(stderr, "%s: wrote %llu MiB\n", prog, (unsigned long long)(written / MIB));
	perturb_end();
	return 0;
}
