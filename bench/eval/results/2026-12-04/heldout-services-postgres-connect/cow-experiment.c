#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/*
 * cow [file]: 64 MiB of written anonymous memory (with "file": a private
 * mapping of a 64 MiB file in /var/tmp, read page by page); 20 times: fork,
 * the child writes one byte per page (each write a copy-on-write fault),
 * exits. Prints the time per fault, mean and best of the 20.
 */
#define SZ (64ul << 20)
#define PG 4096ul

static char *anon_pages(void)
{
	char *m = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	madvise(m, SZ, MADV_NOHUGEPAGE);
	memset(m, 1, SZ);
	return m;
}

static char *file_pages(void)
{
	int fd = open("/var/tmp/cowf.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *buf = malloc(1 << 20);
	size_t i;

	memset(buf, 7, 1 << 20);
	for (i = 0; i < SZ >> 20; i++)
		write(fd, buf, 1 << 20);
	fsync(fd);
	unlink("/var/tmp/cowf.dat");
	return mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
}

int main(int argc, char **argv)
{
	int file = argc > 1 && strcmp(argv[1], "file") == 0, r;
	char *m = file ? file_pages() : anon_pages();
	double best = 1e9, sum = 0, us;
	volatile char s = 0;
	size_t i;

	for (r = 0; r < 20; r++) {
		int p[2];
		pid_t c;

		for (i = 0; file && i < SZ; i += PG)
			s += m[i]; /* the parent maps every page of the file */
		pipe(p);
		c = fork();
		if (c == 0) {
			struct timespec a, b;

			clock_gettime(CLOCK_MONOTONIC, &a);
			for (i = 0; i < SZ; i += PG)
				m[i] = 2;
			clock_gettime(CLOCK_MONOTONIC, &b);
			us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / (SZ / PG);
			write(p[1], &us, sizeof(us));
			_exit(0);
		}
		read(p[0], &us, sizeof(us));
		waitpid(c, NULL, 0);
		close(p[0]);
		close(p[1]);
		sum += us;
		if (us < best)
			best = us;
	}
	printf("per %s: mean %.2f us, best %.2f us\n", file ? "file-page copy" : "COW fault", sum / 20,
	       best);
	return 0;
}
