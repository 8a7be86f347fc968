// SPDX-License-Identifier: MIT
/*
 * A stand-in for clang (configured as bpf_clang) that reports where it
 * runs instead of compiling: its ids, its capability sets, no_new_privs,
 * its network interfaces, whether it can reach the daemon's network
 * namespace (an abstract Unix socket and a loopback TCP port the test
 * listens on), whether it can read a root-only file, where it can write,
 * and every path it can see from "/". test-compile reads the report from
 * the compiler output argusd captures.
 *
 * Its instructions come from "fake-clang.conf" in the include directory
 * (the -I argument), lines of key=value: secret (a path), abstract (a
 * socket name), port, fifo_out and fifo_in (FIFOs in the include
 * directory: it writes "ready" into the first, then waits for the test to
 * write into the second, so that the test can look at it from outside).
 * It exits 1, as a compiler that failed.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/capability.h>

#define MAX_ENTRIES 4000

static char incdir[PATH_MAX], secret[PATH_MAX], abstract_name[108], fifo_out[2 * PATH_MAX + 2],
	fifo_in[2 * PATH_MAX + 2];
static int port;
static unsigned entries;

static void read_conf(void)
{
	char path[PATH_MAX + 32], line[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fake-clang.conf", incdir);
	f = fopen(path, "r");
	if (!f) {
		printf("conf=%s\n", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '='), *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		if (!eq)
			continue;
		*eq++ = 0;
		if (!strcmp(line, "secret"))
			snprintf(secret, sizeof(secret), "%s", eq);
		else if (!strcmp(line, "abstract"))
			snprintf(abstract_name, sizeof(abstract_name), "%s", eq);
		else if (!strcmp(line, "port"))
			port = atoi(eq);
		else if (!strcmp(line, "fifo_out"))
			snprintf(fifo_out, sizeof(fifo_out), "%s/%s", incdir, eq);
		else if (!strcmp(line, "fifo_in"))
			snprintf(fifo_in, sizeof(fifo_in), "%s/%s", incdir, eq);
	}
	fclose(f);
	printf("conf=ok\n");
}

static const char *result(int ok)
{
	return ok ? "ok" : strerror(errno);
}

static void report_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};
	unsigned long long bnd = 0, amb = 0;
	int cap;

	if (syscall(SYS_capget, &h, d) == 0)
		printf("cap_eff=%016llx\ncap_prm=%016llx\ncap_inh=%016llx\n",
		       (unsigned long long)d[1].effective << 32 | d[0].effective,
		       (unsigned long long)d[1].permitted << 32 | d[0].permitted,
		       (unsigned long long)d[1].inheritable << 32 | d[0].inheritable);
	else
		printf("cap_eff=capget:%s\n", strerror(errno));
	for (cap = 0; cap < 64; cap++) {
		int b = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		int a = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);

		if (b < 0)
			break;
		if (b > 0)
			bnd |= 1ull << cap;
		if (a > 0)
			amb |= 1ull << cap;
	}
	printf("cap_bnd=%016llx\ncap_amb=%016llx\n", bnd, amb);
	printf("no_new_privs=%d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
}

static void report_network(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int fd;

	printf("ifaces=");
	for (i = ifs; i && i->if_index; i++)
		printf("%s%s", i == ifs ? "" : ",", i->if_name);
	printf("\n");
	if (ifs)
		if_freenameindex(ifs);
	if (abstract_name[0]) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		socklen_t l = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name);

		memcpy(a.sun_path + 1, abstract_name, strlen(abstract_name));
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		printf("abstract_connect=%s\n", result(fd >= 0 && connect(fd, (void *)&a, l) == 0));
		if (fd >= 0)
			close(fd);
	}
	if (port) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		printf("tcp_connect=%s\n", result(fd >= 0 && connect(fd, (void *)&a, sizeof(a)) == 0));
		if (fd >= 0)
			close(fd);
	}
}

static void report_files(void)
{
	char path[PATH_MAX + 32];
	int fd;

	if (secret[0]) {
		fd = open(secret, O_RDONLY);
		printf("secret_open=%s\n", result(fd >= 0));
		if (fd >= 0)
			close(fd);
	}
	fd = open("/etc/shadow", O_RDONLY);
	printf("shadow_open=%s\n", result(fd >= 0));
	if (fd >= 0)
		close(fd);
	fd = open("/probe-write-test", O_WRONLY | O_CREAT | O_EXCL, 0600);
	printf("write_root=%s\n", result(fd >= 0));
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/probe-write-test", incdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	printf("write_include=%s\n", result(fd >= 0));
	if (fd >= 0)
		close(fd);
	fd = open("probe-write-test", O_WRONLY | O_CREAT | O_EXCL, 0600);
	printf("write_work=%s\n", result(fd >= 0));
	if (fd >= 0)
		close(fd);
}

/* Every path under dir, without following symlinks: "see=TYPE PATH". */
static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		printf("see=unreadable %s %s\n", dir, strerror(errno));
		return;
	}
	while ((e = readdir(d)) && entries < MAX_ENTRIES) {
		char p[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s%s%s", strcmp(dir, "/") ? dir : "", "/", e->d_name);
		entries++;
		if (lstat(p, &st) < 0) {
			printf("see=? %s\n", p);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			printf("see=d %s\n", p);
			if (depth < 32)
				walk(p, depth + 1);
		} else if (S_ISLNK(st.st_mode)) {
			printf("see=l %s\n", p);
		} else if (S_ISREG(st.st_mode)) {
			printf("see=f %s\n", p);
		} else {
			printf("see=o %s\n", p);
		}
	}
	closedir(d);
}

/* Tell the test it may look at this process now, and wait until it has. */
static void rendezvous(void)
{
	char c;
	int fd;

	if (!fifo_out[0] || !fifo_in[0])
		return;
	fd = open(fifo_out, O_WRONLY);
	printf("fifo_out=%s\n", result(fd >= 0));
	if (fd < 0)
		return;
	if (write(fd, "ready\n", 6) != 6)
		printf("fifo_write=%s\n", strerror(errno));
	close(fd);
	fd = open(fifo_in, O_RDONLY);
	printf("fifo_in=%s\n", result(fd >= 0));
	if (fd < 0)
		return;
	while (read(fd, &c, 1) > 0)
		;
	close(fd);
}

int main(int argc, char **argv)
{
	gid_t groups[64];
	int i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], "-I", 2))
			snprintf(incdir, sizeof(incdir), "%s", argv[i] + 2);
	printf("fake-bpf-clang\n");
	read_conf();
	printf("uid=%u\neuid=%u\ngid=%u\negid=%u\n", (unsigned)getuid(), (unsigned)geteuid(),
	       (unsigned)getgid(), (unsigned)getegid());
	n = getgroups(64, groups);
	printf("groups=%d\n", n);
	printf("pid=%d\n", (int)getpid());
	report_caps();
	report_network();
	report_files();
	walk("/", 0);
	rendezvous();
	printf("end\n");
	return 1;
}
