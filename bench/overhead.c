// SPDX-License-Identifier: MIT
/*
 * Probe overhead on the hot path, measured side by side: a page-fault loop
 * (N fresh anonymous pages written, in a child pinned to one CPU) runs with
 * no probe and under the level probes argusd uses, alternating the
 * configurations round after round so that machine noise hits them alike.
 * Prints the median cost per fault of each configuration, its difference
 * from the unprobed loop (the probe's cost per fault) and the ratio, and
 * the same paired by round (each run less the unprobed run of its round).
 * Last, for level 1, the empty programs and bpftrace, each program's own
 * time per fault (the empty programs' is what kernel.bpf_stats adds to a run).
 *
 * Then what the rest of the host pays: while a probe measures a target
 * that sleeps on CPU C, a process argusd is not diagnosing makes system
 * calls the probe does not follow (getppid) and calls it follows (one-byte
 * reads of /dev/zero), and context switches (a byte bounced between two of
 * its processes over pipes) on the other CPU; the cost of each, unprobed
 * and under each probe, alternated the same way.
 *
 * The reference probe runs three times: with syscall_events "raw" (raw
 * sys_enter and sys_exit, which every call of every task runs), with
 * "calls" (each followed call's own events) and with "none", argusd's
 * default (no system call event: a call is seen when it sleeps); level 1
 * runs with raw and with none. Every other probed row runs with raw.
 *
 * Two more configurations put the figures in scale: the floor, a program
 * that does nothing on each tracepoint the reference attaches (what any
 * eBPF tool pays on those hooks before its first instruction), and
 * bpftrace counting the fault tracepoint (`@ = count()`), the cheapest
 * thing a person would run by hand. And one more floor: a program that does
 * nothing on one system call's own events (syscalls/sys_enter_futex and
 * sys_exit_futex, through perf): once any system call event is on, the
 * kernel takes every task's system calls through its tracing path, so a
 * getppid pays that path though no program runs for it. bpftrace and the
 * system call events need tracefs: mounted for the run when it is not,
 * and unmounted after.
 *
 *   bench-overhead [--pages N] [--rounds R] [--cpu C] [--tree FILE] [--programs]
 *
 * --programs: the last part alone (each program's own time per fault,
 * one fault loop per configuration), for a change to the programs' bodies.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bpf_log.h"
#include "daemon/log.h"
#include "daemon/probe.h"
#include "daemon/probe_plan.h"
#include "daemon/probe_try.h"
#include "daemon/resolve.h"
#include "daemon/syscalls.h"
#include "daemon/tracefs.h"
#include "daemon/tree.h"
#include "daemon/util.h"

#define PAGE 4096
#define MAX_ROUNDS 200

enum config {
	CFG_NONE,
	CFG_LEVEL1,
	CFG_LEVEL1_NO_CALL_EVENTS,
	CFG_ANON_L3,
	CFG_REFERENCE,
	CFG_REFERENCE_STATS,
	CFG_REFERENCE_CALLS,
	CFG_REFERENCE_NO_CALL_EVENTS,
	CFG_REFERENCE_KPROBE,
	CFG_EMPTY,
	CFG_SYSCALL_EVENT,
	CFG_BPFTRACE,
	CFG_MAX
};
static const char *const config_names[CFG_MAX] = {
	"no probe", "level 1 (all subsystems)", "level 1, syscall_events none",
	"level 3 (anon_fault leaves)", "reference (every leaf)", "reference, bpf_stats on",
	"reference, syscall_events calls", "reference, syscall_events none",
	"reference, backends kprobe 1st", "empty programs, reference hooks",
	"empty program, futex's events", "bpftrace count() on the fault"
};

#define BPFTRACE_PROGRAM "tracepoint:exceptions:page_fault_user { @ = count(); }"
#define TRACEFS "/sys/kernel/tracing"

static struct tree *tree;
/* The tree resolved with "backends = kprobe tracepoint" (CFG_REFERENCE_KPROBE). */
static struct tree *tree_kprobe;
/* Why CFG_REFERENCE_KPROBE is not measured here, or NULL. */
static const char *kprobe_order_missing;
static const char *bpftrace_missing; /* why bpftrace cannot run here, or NULL */

/* What a configuration keeps attached while it runs, besides an argusd probe. */
struct extra {
	int fds[PROBE_MAX_LINKS]; /* empty programs' links, then the program */
	size_t n_fds;
	pid_t bpftrace;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The tree a configuration's probe is planned on. */
static const struct tree *config_tree(enum config c)
{
	return c == CFG_REFERENCE_KPROBE ? tree_kprobe : tree;
}

/* The nodes of a configuration. */
static size_t config_nodes(enum config c, int *nodes)
{
	size_t n = 0, i;

	switch (c) {
	case CFG_LEVEL1:
	case CFG_LEVEL1_NO_CALL_EVENTS:
		return tree_active(tree, -1, nodes, TREE_MAX_NODES);
	case CFG_ANON_L3:
		return tree_active(tree, tree_find(tree, "kernel_paging.anon_fault"), nodes,
				   TREE_MAX_NODES);
	case CFG_REFERENCE:
	case CFG_REFERENCE_STATS:
	case CFG_REFERENCE_CALLS:
	case CFG_REFERENCE_NO_CALL_EVENTS:
	case CFG_REFERENCE_KPROBE:
		for (i = 0; i < tree->n_nodes; i++)
			if (tree_is_leaf(tree, i) && config_tree(c)->nodes[i].backend != BACKEND_NONE)
				nodes[n++] = i;
		return n;
	default:
		return 0;
	}
}

/* The reference's programs on tree t, as the loader attaches them here. */
static json_t *reference_programs(const struct tree *t)
{
	int nodes[TREE_MAX_NODES];
	struct probe_plan plan;
	size_t n = 0, i;
	json_t *desc, *progs;

	for (i = 0; i < t->n_nodes; i++)
		if (tree_is_leaf(t, i) && t->nodes[i].backend != BACKEND_NONE)
			nodes[n++] = i;
	if (probe_plan_for(t, nodes, n, &plan) < 0)
		return json_array();
	desc = probe_plan_describe(t, &plan);
	progs = json_incref(json_object_get(desc, "programs"));
	json_decref(desc);
	probe_programs_here(t, progs);
	return progs;
}

/*
 * Resolve tree_kprobe, the tree with kprobe first; why the configuration
 * that measures it is left out (NULL: it is measured): where the order
 * gives the reference's own programs, or other leaves, it is no comparison.
 */
static const char *resolve_kprobe_first(const char *path, const struct prober *pr)
{
	struct backend_order order;
	json_t *a, *b;
	bool same, leaves = true;
	size_t i;

	if (tree_load_file(path, &tree_kprobe, NULL) < 0 ||
	    backend_order_parse("kprobe tracepoint", &order) < 0 ||
	    tree_resolve_backends(tree_kprobe, pr, &order) < 0)
		return "the tree did not resolve with backends = kprobe tracepoint";
	for (i = 0; i < tree->n_nodes; i++)
		if (tree_is_leaf(tree, i) && (tree->nodes[i].backend == BACKEND_NONE) !=
						 (tree_kprobe->nodes[i].backend == BACKEND_NONE))
			leaves = false;
	if (!leaves)
		return "backends = kprobe tracepoint leaves out other leaves here";
	a = reference_programs(tree);
	b = reference_programs(tree_kprobe);
	same = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same ? "the same programs as the reference here" : NULL;
}

/* The floors' program: return 0 at once. */
static const struct bpf_insn ret0[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* Attach the tracepoint program prog to trace event id on every CPU; its perf fd into x. */
static int attach_event(struct extra *x, int prog, int id)
{
	int fd;

	if (x->n_fds >= ARRAY_SIZE(x->fds) - 2)
		return -E2BIG;
	fd = tracefs_event_open(id);
	if (fd < 0)
		return fd;
	x->fds[x->n_fds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	return 0;
}

/*
 * A program that returns at once, on each tracepoint the reference probe
 * attaches, as the probe attaches it: the system call events of the calls
 * it follows where the probe uses them (syscall_events calls), raw
 * tracepoints for the rest.
 */
static int attach_empty(struct extra *x)
{
	const char *tps[PROBE_MAX_LINKS];
	int nodes[TREE_MAX_NODES], prog, sc_prog = -1, r;
	const int *enter = NULL, *exit = NULL;
	bool per_call = syscall_events_per_call();
	struct probe_plan plan;
	size_t n_tps, n_calls, i, k;

	syscall_event_ids(&enter, &exit);
	r = probe_plan_for(tree, nodes, config_nodes(CFG_REFERENCE, nodes), &plan);
	if (r < 0)
		return r;
	r = probe_plan_tracepoints(tree, &plan, tps, ARRAY_SIZE(tps), &n_tps);
	if (r < 0)
		return r;
	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "argus_empty", "GPL", ret0,
			     ARRAY_SIZE(ret0), NULL);
	if (prog < 0)
		return -errno;
	x->fds[x->n_fds++] = prog;
	syscall_roles(&n_calls);
	for (i = 0; i < n_tps && x->n_fds < ARRAY_SIZE(x->fds) - 1; i++) {
		bool enter_tp = strcmp(tps[i], "sys_enter") == 0, exit_tp = strcmp(tps[i], "sys_exit") == 0;
		int fd;

		if (per_call && (enter_tp || exit_tp)) {
			if (sc_prog < 0) {
				sc_prog = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "argus_empty_sc",
							"GPL", ret0, ARRAY_SIZE(ret0), NULL);
				if (sc_prog < 0)
					return -errno;
				x->fds[x->n_fds++] = sc_prog;
			}
			for (k = 0; k < n_calls; k++) {
				int id = enter_tp ? enter[k] : exit[k];

				if (id >= 0 && (r = attach_event(x, sc_prog, id)) < 0)
					return r;
			}
			continue;
		}
		fd = bpf_raw_tracepoint_open(tps[i], prog);
		/* one the kernel lacks (a companion), as argusd leaves it out */
		if (fd >= 0)
			x->fds[x->n_fds++] = fd;
	}
	return 0;
}

static const char *syscall_event_missing; /* why the system call events cannot be used */

/* futex's own events, syscalls/sys_enter_futex and sys_exit_futex: their ids, -1 where missing */
static const char *const futex_events[] = { "syscalls/sys_enter_futex", "syscalls/sys_exit_futex" };
static int futex_ids[2];

/*
 * A program that returns at once on futex's entry and exit events: what a
 * non-target getppid pays when any system call event is on. A program on a
 * tracepoint event runs wherever the event fires: one perf event each (on
 * CPU 0) attaches it for every CPU.
 */
static int attach_syscall_event(struct extra *x)
{
	int prog, r;
	size_t e;

	if (syscall_event_missing)
		return -ENOENT;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "argus_empty_sc", "GPL", ret0,
			     ARRAY_SIZE(ret0), NULL);
	if (prog < 0)
		return -errno;
	x->fds[x->n_fds++] = prog;
	for (e = 0; e < ARRAY_SIZE(futex_ids); e++) {
		r = attach_event(x, prog, futex_ids[e]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* tracefs where bpftrace looks for it; true when mounted here (to unmount after). */
static bool mount_tracefs(void)
{
	struct stat st;

	if (stat(TRACEFS "/events", &st) == 0)
		return false;
	return mount("nodev", TRACEFS, "tracefs", 0, NULL) == 0;
}

/* bpftrace counting page_fault_user, from the moment it says it has attached. */
static int start_bpftrace(struct extra *x)
{
	char line[256];
	int out[2];
	FILE *f;

	if (bpftrace_missing)
		return -ENOENT;
	if (pipe(out) < 0)
		return -errno;
	x->bpftrace = fork();
	if (x->bpftrace == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(out[1], 1);
		if (null >= 0)
			dup2(null, 2);
		close(out[0]);
		execlp("bpftrace", "bpftrace", "-e", BPFTRACE_PROGRAM, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Attaching", 9) == 0)
			break;
	/* its map is printed when it stops: the pipe stays open until then */
	if (feof(f)) {
		fclose(f);
		return -EIO;
	}
	x->fds[x->n_fds++] = dup(fileno(f));
	fclose(f);
	return 0;
}

static void release_extra(struct extra *x)
{
	size_t i;

	if (x->bpftrace > 0) {
		kill(x->bpftrace, SIGINT);
		waitpid(x->bpftrace, NULL, 0);
		x->bpftrace = 0;
	}
	for (i = 0; i < x->n_fds; i++)
		close(x->fds[i]);
	x->n_fds = 0;
}

/*
 * The probe of a configuration, loaded (NULL for no probe); *ret_stats the
 * fd that keeps kernel.bpf_stats_enabled on, as argusd has it while it
 * measures with probe_stats (-1: off; close it after the run). The floor's
 * programs and bpftrace go in *x.
 */
static int load_config(enum config c, struct probe **ret, int *ret_stats, struct extra *x)
{
	int nodes[TREE_MAX_NODES], r;
	struct probe_plan plan;
	_cleanup_free_ char *err = NULL;
	size_t n = config_nodes(c, nodes);

	*ret = NULL;
	*ret_stats = -1;
	*x = (struct extra){};
	if (c == CFG_EMPTY)
		return attach_empty(x);
	if (c == CFG_SYSCALL_EVENT)
		return attach_syscall_event(x);
	if (c == CFG_BPFTRACE)
		return start_bpftrace(x);
	if (!n)
		return 0;
	if (c == CFG_REFERENCE_STATS) {
		*ret_stats = probe_stats_enable();
		if (*ret_stats < 0)
			return *ret_stats;
	}
	r = probe_plan_for(config_tree(c), nodes, n, &plan);
	/* the loader reads the setting when it loads: another one for this one probe only */
	syscall_events_set(c == CFG_REFERENCE_CALLS ? SYSCALL_EVENTS_CALLS
			   : c == CFG_LEVEL1_NO_CALL_EVENTS || c == CFG_REFERENCE_NO_CALL_EVENTS
			       ? SYSCALL_EVENTS_NONE
			       : SYSCALL_EVENTS_RAW);
	if (!r)
		r = probe_load(config_tree(c), &plan, ret, NULL, &err);
	syscall_events_set(SYSCALL_EVENTS_RAW);
	if (r < 0 && err)
		fprintf(stderr, "bench-overhead: loading the probe: %s\n", err);
	return r;
}

/* Target pid, attached; the message on failure. */
static int attach_to(struct probe *p, pid_t pid)
{
	_cleanup_free_ char *err = NULL;
	int r;

	if (!p)
		return 0;
	r = probe_add_target(p, pid);
	if (!r)
		r = probe_attach(p, &err);
	if (r < 0 && err)
		fprintf(stderr, "bench-overhead: attaching the probe: %s\n", err);
	return r;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

#define TARGET_READS 100000

/* Write one byte to each of pages fresh anonymous small pages: a fault each; *ret_ns the loop's time. */
static int touch_pages(size_t pages, uint64_t *ret_ns)
{
	uint64_t t0;
	char *m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	size_t i;

	if (m == MAP_FAILED)
		return -errno;
	madvise(m, pages * PAGE, MADV_NOHUGEPAGE);
	t0 = now_mono_ns();
	for (i = 0; i < pages; i++)
		m[i * PAGE] = 1;
	*ret_ns = now_mono_ns() - t0;
	munmap(m, pages * PAGE);
	return 0;
}

/*
 * One run of the target, measured inside the child: ns per fault of the
 * touch loop, then ns per pread64 of one cached page of a regular file, a
 * call the probe follows (the reads of a program that reads a file a page
 * at a time: cmp, a database's page reads).
 */
static int run_once(enum config c, size_t pages, int cpu, double *ret_ns, double *ret_read)
{
	int go[2], res[2], status, stats, r;
	struct probe *p = NULL;
	struct extra x;
	uint64_t ns[2] = {};
	char file[] = "/tmp/argus-bench-XXXXXX";
	int fd = mkstemp(file);
	pid_t pid;

	if (fd < 0)
		return -errno;
	unlink(file);
	if (ftruncate(fd, PAGE) < 0 || pwrite(fd, "x", 1, 0) != 1) {
		close(fd);
		return -errno;
	}
	r = load_config(c, &p, &stats, &x);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (pipe(go) < 0 || pipe(res) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		uint64_t t0;
		char ch, buf[PAGE];
		size_t i;

		pin(cpu);
		if (read(go[0], &ch, 1) != 1)
			_exit(2);
		if (touch_pages(pages, &ns[0]) < 0)
			_exit(3);
		t0 = now_mono_ns();
		for (i = 0; i < TARGET_READS; i++)
			if (pread(fd, buf, PAGE, 0) != PAGE)
				_exit(4);
		ns[1] = now_mono_ns() - t0;
		(void)!write(res[1], ns, sizeof(ns));
		_exit(0);
	}
	close(fd);
	close(go[0]);
	close(res[1]);
	r = attach_to(p, pid);
	(void)!write(go[1], "g", 1);
	close(go[1]);
	if (read(res[0], ns, sizeof(ns)) != sizeof(ns))
		r = r ?: -EIO;
	close(res[0]);
	waitpid(pid, &status, 0);
	probe_free(p);
	release_extra(&x);
	if (stats >= 0)
		close(stats);
	if (r < 0)
		return r;
	*ret_ns = (double)ns[0] / pages;
	*ret_read = (double)ns[1] / TARGET_READS;
	return 0;
}

#define BYSTANDER_CALLS 200000
#define BYSTANDER_BOUNCES 20000

/*
 * Here on cpu: ns per getppid (a call the probe does not follow), per read
 * of one byte of /dev/zero (one it follows: its events run the probe's
 * programs, which leave at their first test), and per context switch of a
 * byte bounced over two pipes.
 */
static int bystander(int cpu, double *ret_call, double *ret_read, double *ret_switch)
{
	int ab[2], ba[2], zero, i;
	uint64_t t0;
	char ch = 'x';
	pid_t peer;

	pin(cpu);
	t0 = now_mono_ns();
	for (i = 0; i < BYSTANDER_CALLS; i++)
		syscall(SYS_getppid);
	*ret_call = (double)(now_mono_ns() - t0) / BYSTANDER_CALLS;
	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero < 0)
		return -errno;
	t0 = now_mono_ns();
	for (i = 0; i < BYSTANDER_CALLS; i++)
		if (read(zero, &ch, 1) != 1)
			break;
	*ret_read = (double)(now_mono_ns() - t0) / BYSTANDER_CALLS;
	close(zero);
	if (i != BYSTANDER_CALLS)
		return -EIO;
	if (pipe(ab) < 0 || pipe(ba) < 0)
		return -errno;
	peer = fork();
	if (peer == 0) {
		pin(cpu);
		for (i = 0; i < BYSTANDER_BOUNCES; i++)
			if (read(ab[0], &ch, 1) != 1 || write(ba[1], &ch, 1) != 1)
				_exit(1);
		_exit(0);
	}
	t0 = now_mono_ns();
	for (i = 0; i < BYSTANDER_BOUNCES; i++)
		if (write(ab[1], &ch, 1) != 1 || read(ba[0], &ch, 1) != 1)
			break;
	/* two switches per bounce, each with a read and a write around it */
	*ret_switch = (double)(now_mono_ns() - t0) / (2.0 * BYSTANDER_BOUNCES);
	waitpid(peer, NULL, 0);
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	return i == BYSTANDER_BOUNCES ? 0 : -EIO;
}

/*
 * A probe of configuration c measures a target that sleeps on cpu while a
 * process argusd is not diagnosing works on other: the bystander's costs
 * (ns per getppid, per read, per switch) in ret_call, ret_read and
 * ret_switch, or, with calls_only, only BYSTANDER_CALLS one-byte reads of
 * /dev/zero and the probe's counters after them in *ret_counts.
 */
static int run_beside(enum config c, int cpu, int other, bool calls_only, double *ret_call,
		      double *ret_read, double *ret_switch, struct probe_counts *ret_counts)
{
	int go[2], res[2], status, stats, r;
	struct probe *p = NULL;
	double v[3] = {};
	struct extra x;
	pid_t target, by;

	r = load_config(c, &p, &stats, &x);
	if (r < 0)
		return r;
	if (pipe(go) < 0)
		return -errno;
	target = fork();
	if (target == 0) {
		char ch;

		pin(cpu);
		close(go[1]);
		(void)!read(go[0], &ch, 1); /* sleeps until the end */
		_exit(0);
	}
	close(go[0]);
	r = attach_to(p, target);
	if (r >= 0 && pipe(res) < 0)
		r = -errno;
	if (r >= 0) {
		by = fork();
		if (by == 0) {
			int i;

			close(res[0]);
			if (calls_only) {
				int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);

				pin(other);
				for (i = 0; i < BYSTANDER_CALLS && zero >= 0; i++)
					(void)!read(zero, &v[0], 1);
			} else if (bystander(other, &v[0], &v[1], &v[2]) < 0) {
				_exit(1);
			}
			(void)!write(res[1], v, sizeof(v));
			_exit(0);
		}
		close(res[1]);
		if (read(res[0], v, sizeof(v)) != sizeof(v))
			r = -EIO;
		close(res[0]);
		waitpid(by, &status, 0);
		if (r >= 0 && ret_counts)
			r = probe_read(p, ret_counts);
	}
	close(go[1]);
	waitpid(target, &status, 0);
	probe_free(p);
	release_extra(&x);
	if (stats >= 0)
		close(stats);
	if (ret_call)
		*ret_call = v[0];
	if (ret_read)
		*ret_read = v[1];
	if (ret_switch)
		*ret_switch = v[2];
	return r;
}

/*
 * The programs' own time per run while they see system calls of a process
 * that is not the target: the reference probe with kernel.bpf_stats on,
 * beside a loop of reads (calls the probe follows; a getppid runs none of
 * its programs); the kernel's run time over run count is what each program
 * costs such a task (the statistics' own clock reads are in it, as they are
 * for a program that does nothing).
 */
static int programs_per_foreign_run(int cpu, int other, double *ret_ns, unsigned long long *ret_runs)
{
	struct probe_counts counts = {};
	int r = run_beside(CFG_REFERENCE_STATS, cpu, other, true, NULL, NULL, NULL, &counts);

	if (r < 0)
		return r;
	*ret_runs = counts.run_cnt;
	*ret_ns = counts.run_cnt ? (double)counts.run_time_ns / counts.run_cnt : 0;
	return 0;
}

/* One loaded program's runs and their time (kernel.bpf_stats), by id. */
struct prog_runs {
	__u32 id;
	char name[BPF_OBJ_NAME_LEN];
	__u64 cnt, ns;
};

#define MAX_PROGS 1024

/* Every loaded program's runs, into v (at most MAX_PROGS); how many. */
static size_t prog_runs_now(struct prog_runs *v)
{
	__u32 id = 0;
	size_t k = 0;

	while (k < MAX_PROGS && bpf_prog_get_next_id(id, &id) == 0) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
			v[k] = (struct prog_runs){
			    .id = id, .cnt = info.run_cnt, .ns = info.run_time_ns};
			memcpy(v[k].name, info.name, sizeof(v[k].name));
			k++;
		}
		close(fd);
	}
	return k;
}

/*
 * Where configuration c's cost per fault goes: one run of the fault loop
 * alone (no reads after it) with kernel.bpf_stats on, and every program
 * that ran during it, per fault: its runs and its own time. That time is
 * the programs' bodies and the clock reads kernel.bpf_stats adds around
 * each run (an empty program's whole time); the kernel's dispatch to them
 * is not in it, nor, for a tracepoint through perf as bpftrace's, the
 * record the kernel fills before its program runs.
 */
static int fault_programs(enum config c, size_t pages, int cpu)
{
	static struct prog_runs before[MAX_PROGS], after[MAX_PROGS];
	int go[2], done[2], stats, cfg_stats, r;
	struct probe *p = NULL;
	size_t nb, na, i, j;
	struct extra x;
	double total = 0;
	pid_t pid;
	char ch;

	stats = probe_stats_enable();
	if (stats < 0)
		return stats;
	r = load_config(c, &p, &cfg_stats, &x);
	if (r < 0 || pipe(go) < 0 || pipe(done) < 0) {
		r = r < 0 ? r : -errno;
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		uint64_t ns;

		pin(cpu);
		if (read(go[0], &ch, 1) != 1 || touch_pages(pages, &ns) < 0)
			_exit(2);
		(void)!write(done[1], "d", 1);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	r = attach_to(p, pid);
	nb = prog_runs_now(before);
	(void)!write(go[1], "g", 1);
	close(go[1]);
	if (read(done[0], &ch, 1) != 1)
		r = r ?: -EIO;
	na = prog_runs_now(after);
	close(done[0]);
	waitpid(pid, NULL, 0);
	if (r < 0)
		goto out;
	printf("\n%s: the programs that ran during one run of the fault loop (%zu faults), their own "
	       "time (kernel.bpf_stats)\n",
	       config_names[c], pages);
	printf("%-16s %14s %12s %14s\n", "program", "runs per fault", "ns per run", "ns per fault");
	for (i = 0; i < na; i++) {
		__u64 cnt = after[i].cnt, ns = after[i].ns;

		for (j = 0; j < nb; j++)
			if (before[j].id == after[i].id) {
				cnt -= before[j].cnt;
				ns -= before[j].ns;
				break;
			}
		if (!cnt)
			continue;
		printf("%-16s %14.3f %12.1f %14.1f\n", after[i].name, (double)cnt / pages,
		       (double)ns / cnt, (double)ns / pages);
		total += (double)ns / pages;
	}
	printf("%-16s %14s %12s %14.1f\n", "all", "", "", total);
out:
	probe_free(p);
	release_extra(&x);
	if (cfg_stats >= 0)
		close(cfg_stats);
	close(stats);
	return r;
}

/* Why configuration c cannot run on this machine, or NULL. */
static const char *config_missing(enum config c)
{
	if (c == CFG_BPFTRACE)
		return bpftrace_missing;
	if (c == CFG_SYSCALL_EVENT)
		return syscall_event_missing;
	if (c == CFG_REFERENCE_KPROBE)
		return kprobe_order_missing;
	return NULL;
}

/* The median of n values, v left as it was. */
static double median(const double *v, size_t n)
{
	double sorted[MAX_ROUNDS];

	memcpy(sorted, v, n * sizeof(double));
	qsort(sorted, n, sizeof(double), cmp_double);
	return sorted[n / 2];
}

/*
 * Each configuration's median and its difference from the unprobed median,
 * then the same taken round by round: the median over rounds of the
 * configuration's run less the unprobed run of the same round, and of their
 * ratio. A round's runs are seconds apart, the rounds minutes, so the paired
 * figures leave out what the host's speed did between rounds.
 */
static void print_table(const char *unit, double samples[CFG_MAX][MAX_ROUNDS], size_t rounds)
{
	const double *none = samples[CFG_NONE];
	double base = median(none, rounds);
	int c;

	printf("%-32s %12s %10s %7s %12s %8s\n", "configuration", unit, "probe ns", "ratio",
	       "paired ns", "paired x");
	for (c = 0; c < CFG_MAX; c++) {
		double med = median(samples[c], rounds), diff[MAX_ROUNDS], ratio[MAX_ROUNDS];
		size_t k;

		if (config_missing(c)) {
			printf("%-32s %s\n", config_names[c], config_missing(c));
			continue;
		}
		for (k = 0; k < rounds; k++) {
			diff[k] = samples[c][k] - none[k];
			ratio[k] = samples[c][k] / none[k];
		}
		printf("%-32s %12.0f %10.0f %7.2f %12.0f %8.3f\n", config_names[c], med, med - base,
		       med / base, median(diff, rounds), median(ratio, rounds));
	}
}

/*
 * The per-fault goal, round by round: level 1 as argusd loads it (no system
 * call event) against bpftrace's count() on the fault, each less the
 * unprobed run of its round.
 */
static void print_fault_goal(double samples[CFG_MAX][MAX_ROUNDS], size_t rounds)
{
	double ours[MAX_ROUNDS], theirs[MAX_ROUNDS];
	size_t k, under_half = 0;

	if (config_missing(CFG_BPFTRACE)) {
		printf("per-fault goal: not measured (bpftrace %s)\n", config_missing(CFG_BPFTRACE));
		return;
	}
	for (k = 0; k < rounds; k++) {
		ours[k] = samples[CFG_LEVEL1_NO_CALL_EVENTS][k] - samples[CFG_NONE][k];
		theirs[k] = samples[CFG_BPFTRACE][k] - samples[CFG_NONE][k];
		under_half += ours[k] <= 0.5 * theirs[k];
	}
	printf("per-fault goal, paired by round: level 1 (syscall_events none) %+.0f ns, bpftrace "
	       "count() %+.0f ns, ratio of the medians %.2f (goal 0.50 or less); level 1 at or under "
	       "half of bpftrace's cost in %zu of %zu rounds\n",
	       median(ours, rounds), median(theirs, rounds),
	       median(ours, rounds) / median(theirs, rounds), under_half, rounds);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "pages", required_argument, NULL, 'p' },
					       { "rounds", required_argument, NULL, 'r' },
					       { "cpu", required_argument, NULL, 'c' },
					       { "tree", required_argument, NULL, 't' },
					       { "programs", no_argument, NULL, 'P' },
					       {} };
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *tree_path = xasprintf("%s/tree-data/tree.json", src ?: ".");
	struct prober pr = { .try_hook = probe_try_hook };
	static double samples[CFG_MAX][MAX_ROUNDS], own_reads[CFG_MAX][MAX_ROUNDS],
	    calls[CFG_MAX][MAX_ROUNDS], reads[CFG_MAX][MAX_ROUNDS], switches[CFG_MAX][MAX_ROUNDS];
	size_t pages = 50000, rounds = 15, k;
	int cpu = 0, c, r;
	bool mounted = false, programs_only = false;
	char *err = NULL;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pages = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 't':
			free(tree_path);
			tree_path = xstrdup(optarg);
			break;
		case 'P':
			programs_only = true;
			break;
		default:
			fprintf(stderr, "usage: bench-overhead [--pages N] [--rounds R] [--cpu C] "
					"[--tree FILE] [--programs]\n");
			return 2;
		}
	}
	if (rounds < 3 || rounds > MAX_ROUNDS || pages < 1000) {
		fprintf(stderr, "bench-overhead: rounds 3..%d, pages >= 1000\n", MAX_ROUNDS);
		return 2;
	}
	log_set_max_level(LOG_WARNING);
	bpf_log_setup();
	if (tree_load_file(tree_path, &tree, &err) < 0) {
		fprintf(stderr, "bench-overhead: %s\n", err);
		return 1;
	}
	tree_resolve(tree, &pr);
	kprobe_order_missing = resolve_kprobe_first(tree_path, &pr);
	mounted = mount_tracefs();
	if (system("command -v bpftrace >/dev/null 2>&1") != 0)
		bpftrace_missing = "not installed (apt-get install bpftrace)";
	if (tracefs_event_ids(futex_events, ARRAY_SIZE(futex_events), futex_ids) < 0 ||
	    futex_ids[0] < 0 || futex_ids[1] < 0)
		syscall_event_missing = "no syscalls/sys_enter_futex or sys_exit_futex event in tracefs";
	if (programs_only)
		goto programs;

	for (k = 0; k < rounds; k++)
		for (c = 0; c < CFG_MAX; c++) {
			enum config cfg = (c + k) % CFG_MAX; /* rotate the order every round */

			if (config_missing(cfg))
				continue;
			r = run_once(cfg, pages, cpu, &samples[cfg][k], &own_reads[cfg][k]);
			if (r < 0) {
				fprintf(stderr, "bench-overhead: %s: %s\n", config_names[cfg],
					strerror(-r));
				goto out;
			}
		}

	for (k = 0; k < rounds; k++)
		for (c = 0; c < CFG_MAX; c++) {
			enum config cfg = (c + k) % CFG_MAX;

			if (config_missing(cfg))
				continue;
			r = run_beside(cfg, cpu, cpu ? 0 : 1, false, &calls[cfg][k],
				       &reads[cfg][k], &switches[cfg][k], NULL);
			if (r < 0) {
				fprintf(stderr, "bench-overhead: bystander under %s: %s\n",
					config_names[cfg], strerror(-r));
				goto out;
			}
		}

	printf("page-fault loop: %zu fresh anonymous pages per run, %zu rounds, CPU %d, "
	       "configurations alternated\n",
	       pages, rounds, cpu);
	print_table("ns per fault", samples, rounds);
	print_fault_goal(samples, rounds);
	printf("\nthe same target, then %d pread64 calls of one cached page of a regular file\n",
	       TARGET_READS);
	print_table("ns per read", own_reads, rounds);
	printf("\na process argusd is not diagnosing, on CPU %d, while the probe measures a "
	       "sleeping target on CPU %d: %d getppid calls, %d one-byte reads of /dev/zero and "
	       "%d pipe bounces per run\n",
	       cpu ? 0 : 1, cpu, BYSTANDER_CALLS, BYSTANDER_CALLS, BYSTANDER_BOUNCES);
	print_table("ns per getppid", calls, rounds);
	print_table("ns per read", reads, rounds);
	print_table("ns per switch", switches, rounds);
	{
		double per_run[MAX_ROUNDS];
		unsigned long long runs = 0;

		for (k = 0; k < rounds; k++) {
			r = programs_per_foreign_run(cpu, cpu ? 0 : 1, &per_run[k], &runs);
			if (r < 0) {
				fprintf(stderr, "bench-overhead: programs' run time: %s\n", strerror(-r));
				goto out;
			}
		}
		printf("\nthe reference probe's programs, their own time per run on the other "
		       "process's reads (kernel.bpf_stats): %.1f ns (median of %zu; %llu runs "
		       "in the last)\n",
		       median(per_run, rounds), rounds, runs);
	}
programs:
	for (c = 0; c < CFG_MAX; c++) {
		if ((c != CFG_LEVEL1_NO_CALL_EVENTS && c != CFG_EMPTY && c != CFG_BPFTRACE) ||
		    config_missing(c))
			continue;
		r = fault_programs(c, pages, cpu);
		if (r < 0) {
			fprintf(stderr, "bench-overhead: programs per fault under %s: %s\n",
				config_names[c], strerror(-r));
			goto out;
		}
	}
	r = 0;
out:
	if (mounted)
		umount(TRACEFS);
	tree_free(tree);
	tree_free(tree_kprobe);
	return r < 0 ? 1 : 0;
}
