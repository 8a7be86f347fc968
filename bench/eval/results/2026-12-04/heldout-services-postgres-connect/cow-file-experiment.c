#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* A private mapping of a 64 MiB file, read page by page by the parent; 20 times: fork, the child writes one byte per page (a copy of a file page), exits. */
int main(void)
{
	size_t sz = 64 << 20, pg = 4096, i;
	int fd = open("/var/tmp/cowf.dat", O_RDWR | O_CREAT, 0600), r;
	char *buf = malloc(1 << 20);
	double sum = 0, best = 1e9;
	volatile char s = 0;
	memset(buf, 7, 1 << 20);
	for (i = 0; i < 64; i++) write(fd, buf, 1 << 20);
	fsync(fd);
	char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	for (r = 0; r < 20; r++) {
		int p[2]; double us;
		for (i = 0; i < sz; i += pg) s += m[i];
		pipe(p);
		pid_t c = fork();
		if (c == 0) {
			struct timespec a, b;
			clock_gettime(CLOCK_MONOTONIC, &a);
			for (i = 0; i < sz; i += pg) m[i] = 2;
			clock_gettime(CLOCK_MONOTONIC, &b);
			us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / (sz / pg);
			write(p[1], &us, sizeof(us));
			_exit(0);
		}
		read(p[0], &us, sizeof(us));
		waitpid(c, NULL, 0);
		close(p[0]); close(p[1]);
		sum += us; if (us < best) best = us;
	}
	printf("per file-page copy: mean %.2f us, best %.2f us\n", sum / 20, best);
	unlink("/var/tmp/cowf.dat");
	return 0;
}
