/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the bundled victims and perturbers: clocks, flag
 * parsing, the per-user data directory, deterministic data files, CPU
 * pinning; and the perturber contract (perturb.c): every system setting a
 * perturber changes is recorded in a restore file before the change and
 * put back on exit, on SIGTERM/SIGINT/SIGHUP, on a crash, and (from the
 * restore file) by the next start after a SIGKILL.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SIZE_4K 4096UL
#define MIB (1024UL * 1024UL)

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep; a signal ends it early, so that a stop request is seen at once. */
static inline void bench_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	(void)nanosleep(&ts, NULL);
}

static inline __attribute__((noreturn, format(printf, 2, 3))) void bench_die(const char *prog,
									     const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A decimal flag value in [min, max], or exit with a message naming the flag. */
static inline uint64_t bench_parse_u64(const char *prog, const char *flag, const char *s,
				       uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		bench_die(prog, "--%s: \"%s\" is not a number in %llu..%llu", flag, s,
			  (unsigned long long)min, (unsigned long long)max);
	return v;
}

/*
 * One command-line flag of a bundled program, as a table entry: a number
 * (num, in [min, max]), a string (str) or a switch (on); exactly one of
 * the three is set. given, when set, becomes true once the flag is seen.
 */
struct bench_flag {
	const char *name; /* --name */
	const char *arg;  /* the value's name in the usage text: "N", "DIR"; NULL for a switch */
	const char *help;
	uint64_t *num;
	uint64_t min, max;
	const char **str;
	bool *on;
	bool *given;
};

#define BENCH_FLAGS_MAX 16

/* The usage text, from the table; a number's default is its value before parsing. */
static inline void bench_usage(FILE *out, const char *prog, const char *summary,
			       const struct bench_flag *flags)
{
	const struct bench_flag *f;

	fprintf(out, "usage: %s [options]\n%s\n", prog, summary);
	for (f = flags; f->name; f++) {
		char lhs[48];

		snprintf(lhs, sizeof(lhs), "--%s%s%s", f->name, f->arg ? " " : "", f->arg ?: "");
		if (f->num && !strstr(f->help, "(default"))
			fprintf(out, "  %-18s %s (default %llu)\n", lhs, f->help,
				(unsigned long long)*f->num);
		else
			fprintf(out, "  %-18s %s\n", lhs, f->help);
	}
}

/*
 * Parse argv against flags (ended by an entry without a name). --help
 * prints the usage and exits 0; an unknown flag, a missing value or a
 * number out of range exits 2 with a message naming the flag. Positional
 * arguments are refused.
 */
static inline void bench_parse_flags(const char *prog, const char *summary,
				     const struct bench_flag *flags, int argc, char **argv)
{
	struct option opts[BENCH_FLAGS_MAX + 2] = {};
	size_t n = 0;
	int c;

	for (; flags[n].name; n++) {
		if (n >= BENCH_FLAGS_MAX)
			bench_die(prog, "too many flags");
		opts[n] =
		    (struct option){flags[n].name, flags[n].on ? no_argument : required_argument,
				    NULL, 256 + (int)n};
	}
	opts[n] = (struct option){"help", no_argument, NULL, 'h'};
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		const struct bench_flag *f;

		if (c == 'h') {
			bench_usage(stdout, prog, summary, flags);
			exit(0);
		}
		if (c < 256 || (size_t)(c - 256) >= n) {
			bench_usage(stderr, prog, summary, flags);
			exit(2);
		}
		f = &flags[c - 256];
		if (f->num)
			*f->num = bench_parse_u64(prog, f->name, optarg, f->min, f->max);
		else if (f->str)
			*f->str = optarg;
		else if (f->on)
			*f->on = true;
		if (f->given)
			*f->given = true;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", prog, argv[optind]);
		exit(2);
	}
}

/* MemAvailable in bytes, or 0 when unknown. */
static inline uint64_t bench_mem_available(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* The 64-bit word at index i of every bundled data file: content is fixed. */
static inline uint64_t bench_data_word(uint64_t i)
{
	uint64_t z = i + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The directory for data files: dir when given, else
 * /var/tmp/argus-victims-<uid>, created 0755 when missing. /var/tmp is
 * world-writable, so the directory must be ours and not a symlink.
 */
static inline void bench_data_dir(const char *prog, const char *dir, char *buf, size_t len)
{
	struct stat st;

	int n;

	if (dir)
		n = snprintf(buf, len, "%s", dir);
	else
		n = snprintf(buf, len, "/var/tmp/argus-victims-%u", (unsigned)getuid());
	if (n < 0 || (size_t)n >= len)
		bench_die(prog, "--dir: path too long");
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		bench_die(prog, "mkdir %s: %s", buf, strerror(errno));
	if (lstat(buf, &st) < 0)
		bench_die(prog, "%s: %s", buf, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		bench_die(prog, "%s: not a directory", buf);
	if (!dir && st.st_uid != getuid())
		bench_die(prog, "%s: owned by uid %u, not by us", buf, (unsigned)st.st_uid);
}

/*
 * Open dir/name, a file of exactly size bytes of bench_data_word()s,
 * creating it first when missing or of another size: written to a
 * temporary name, synced and renamed, so that a run killed half way
 * never leaves a short file behind. Returns an O_RDONLY fd.
 */
static inline int bench_data_file(const char *prog, const char *dir, const char *name,
				  uint64_t size)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	uint64_t *buf, off, i;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		bench_die(prog, "%s/%s: path too long", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size)
		return fd;
	if (fd >= 0)
		close(fd);

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", dir, name, (int)getpid()) >=
	    sizeof(tmp))
		bench_die(prog, "%s/%s: path too long", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		bench_die(prog, "creating %s: %s", tmp, strerror(errno));
	buf = malloc(MIB);
	if (!buf)
		bench_die(prog, "out of memory");
	for (off = 0; off < size; off += MIB) {
		size_t chunk = size - off < MIB ? size - off : MIB;
		size_t done = 0;

		for (i = 0; i < chunk / 8; i++)
			buf[i] = bench_data_word(off / 8 + i);
		while (done < chunk) {
			ssize_t n = write(fd, (char *)buf + done, chunk - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				bench_die(prog, "writing %s: %s", tmp, strerror(errno));
			done += n;
		}
	}
	free(buf);
	if (fsync(fd) < 0)
		bench_die(prog, "syncing %s: %s", tmp, strerror(errno));
	/*
	 * The page cache the writes left behind is not what a reader of the file
	 * gets: here (Linux 6.18, ext4) the writes leave small folios, and a read
	 * brings the file in as large ones (FileHugePages), which a victim that
	 * maps the file reads up to 5x faster (pf_page_cache: 3.9-4.5 s just
	 * after the file was written, 0.8-0.9 s once dropped and read back). A
	 * victim whose data was just written would then run faster under a
	 * cache dropper than on a quiet machine. Dropped here, so that the
	 * first read caches the file as every later reader and every dropper's
	 * victim finds it.
	 */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (close(fd) < 0)
		bench_die(prog, "closing %s: %s", tmp, strerror(errno));
	if (rename(tmp, path) < 0)
		bench_die(prog, "renaming %s: %s", tmp, strerror(errno));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		bench_die(prog, "opening %s: %s", path, strerror(errno));
	return fd;
}

/*
 * The data file <stem>_<mb>mb.dat of mb MiB in dir (NULL: the default data
 * directory), created when missing; an O_RDONLY fd.
 */
static inline int bench_open_data(const char *prog, const char *dir, const char *stem, uint64_t mb)
{
	char path[PATH_MAX], name[64];

	bench_data_dir(prog, dir, path, sizeof(path));
	snprintf(name, sizeof(name), "%s_%llumb.dat", stem, (unsigned long long)mb);
	return bench_data_file(prog, path, name, mb * MIB);
}

/* Read the whole file once so that it sits in the page cache. */
static inline void bench_warm_file(const char *prog, int fd)
{
	char *buf = malloc(MIB);
	ssize_t n;

	if (!buf)
		bench_die(prog, "out of memory");
	if (lseek(fd, 0, SEEK_SET) < 0)
		bench_die(prog, "lseek: %s", strerror(errno));
	while ((n = read(fd, buf, MIB)) != 0)
		if (n < 0 && errno != EINTR)
			bench_die(prog, "read: %s", strerror(errno));
	free(buf);
}

/* Pin the calling thread to one CPU. */
static inline int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/* Online CPUs as the scheduler sees them. */
static inline int bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* ---- perturbers (perturb.c) ---- */

#define PERTURB_RESTORE_DIR "/run/argus-perturbers"
#define PERTURB_SETTINGS_MAX 8
#define PERTURB_VALUE_MAX 64

/* Set by SIGTERM, SIGINT and SIGHUP: every loop of a perturber checks it. */
extern volatile sig_atomic_t perturb_stop;

/*
 * Start a perturber called name: install the signal handlers (stop on
 * SIGTERM/SIGINT/SIGHUP; restore and re-raise on SIGSEGV, SIGBUS, SIGABRT,
 * SIGFPE, SIGILL), refuse to run next to a live instance of itself, and
 * apply a stale restore file left by a killed one. With restore_only, exit
 * after that. Pins to cpu when cpu >= 0. Exits on failure.
 */
void perturb_begin(const char *name, bool restore_only, int cpu);
/*
 * Write value into a sysfs or procfs setting, after its current value (the
 * [bracketed] choice of a list, or the whole content) was recorded for
 * restoring. Negative errno, the setting untouched, on failure.
 */
int perturb_set(const char *path, const char *value);
/* A setting's current value ([choice] of a list, or the trimmed content). */
int perturb_read_setting(const char *path, char *buf, size_t len);
/* Write to a procfs/sysfs file without recording it (drop_caches, compact_memory). */
int perturb_poke(const char *path, const char *value);
/* A file the perturber creates: removed on exit and by a later stale restore. */
int perturb_track_file(const char *path);
/*
 * Say "<name>: ready" on stderr, once the pressure is on (settings changed,
 * memory taken): a harness waits for this line before it starts a victim.
 */
void perturb_ready(void);
/* Sleep until perturb_stop. */
void perturb_wait(void);
/* Put every recorded setting back, remove tracked files and the restore file. */
void perturb_end(void);
/* Block the stop signals in the calling thread (worker threads, before creation). */
void perturb_block_signals(sigset_t *ret_old);

/* What every perturber accepts besides its own flags: --cpu N, --restore-only, --help. */
struct perturb_opts {
	int cpu; /* -1: not pinned */
	bool restore_only;
};

/*
 * Parse a perturber's command line: --cpu N (default default_cpu, -1 for
 * none), --restore-only and the perturber's own flags (a bench_flag table,
 * NULL for none). Exits as bench_parse_flags does.
 */
void perturb_parse(const char *name, const char *summary, int default_cpu,
		   const struct bench_flag *own, int argc, char **argv, struct perturb_opts *ret);
