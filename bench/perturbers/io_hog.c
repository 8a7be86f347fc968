// SPDX-License-Identifier: MIT
/*
 * io_hog: block I/O contention. Writes a file under --dir sequentially in
 * 1 MiB blocks, fsync every --sync-mb (default 64), wrapping at --size-mb
 * (default 1024). The file is removed on exit (and by a later start when a
 * killed instance left it).
 *
 * With --cpu, the kernel's writeback workers (the unbound "writeback"
 * workqueue) are kept on that CPU too, so that flushing this process's dirty
 * pages does not run on another CPU's time: the contention is the device's.
 * The mask is restored on exit, like every setting a perturber touches.
 */
#include "bench/common.h"

#define WRITEBACK_CPUMASK "/sys/devices/virtual/workqueue/writeback/cpumask"

static const char *prog = "io_hog";

int main(int argc, char **argv)
{
	const char *dir = "/var/tmp";
	uint64_t size_mb = 1024, sync_mb = 64, size, sync_every, off = 0, written = 0;
	const struct bench_flag flags[] = {
	    {"dir", "DIR", "where the file is written (default /var/tmp)", .str = &dir},
	    {"size-mb", "N", "file size, written round robin, in MiB", &size_mb, 1, 1 << 20},
	    {"sync-mb", "N", "fsync after every N MiB", &sync_mb, 1, 1 << 20},
	    {},
	};
	struct perturb_opts o;
	char path[PATH_MAX];
	uint64_t *block;
	int fd, r;
	size_t i;

	perturb_parse(prog, "Sequential buffered writes with periodic fsync.", -1, flags, argc,
		      argv, &o);
	size = size_mb * MIB;
	sync_every = sync_mb * MIB;
	perturb_begin(prog, o.restore_only, o.cpu);
	if (o.cpu >= 0 && o.cpu < 64 && access(WRITEBACK_CPUMASK, W_OK) == 0) {
		char mask[32];

		snprintf(mask, sizeof(mask), "%llx", 1ULL << o.cpu);
		r = perturb_set(WRITEBACK_CPUMASK, mask);
		if (r < 0)
			bench_die(prog, "%s: %s", WRITEBACK_CPUMASK, strerror(-r));
	}
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
