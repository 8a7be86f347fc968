// SPDX-License-Identifier: MIT
/*
 * One measured run: probe load -> target spawned held before exec -> target
 * followed by the probe -> attach -> perf counters armed for exec -> run ->
 * detach -> read. The order matters: nothing of the target runs unobserved,
 * and nothing stays attached once the window ends. For the witness, the
 * kernel's own figures are taken around the probe's window so that theirs
 * encloses it: task records and perf counters open before the probe
 * counts, read after it is detached.
 */
#include "daemon/measure.h"
#include "daemon/aside.h"
#include "daemon/cgroup.h"
#include "daemon/log.h"
#include "daemon/perfcount.h"
#include "daemon/probe_authored.h"
#include "daemon/sli.h"
#include "daemon/util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#define TARGET_THREADS_MAX 256
#define LIVES_DATA_PAGES 64	 /* per CPU: about 8000 fork and exit records */
#define LIVES_DATA_PAGES_MIN 8	 /* when the locked-memory limit refuses 64 */
#define LIVES_CPUS_MAX CPU_SETSIZE
#define LIVES_PROCESSES_MAX 65536 /* target processes followed through their forks */
#define AUTHORED_PROGRAMS_MAX 64

void measure_result_clear(struct measure_result *r)
{
	if (!r)
		return;
	mvec_free(&r->vec);
	target_result_clear(&r->target);
	json_decref(r->probe);
	free(r->error);
	free(r->error_code);
	free(r->verifier_log);
	memset(r, 0, sizeof(*r));
}

static bool node_has_metric(const struct tree_node *n, const char *m)
{
	size_t i;

	for (i = 0; i < n->n_metrics; i++)
		if (strcmp(n->metrics[i], m) == 0)
			return true;
	return false;
}

static void set_node(struct mvec *v, const struct tree_node *n, double count, double time_ns)
{
	char key[256];

	if (node_has_metric(n, "count")) {
		snprintf(key, sizeof(key), "%s/count", n->id);
		mvec_set(v, key, count);
	}
	if (node_has_metric(n, "time_ns")) {
		snprintf(key, sizeof(key), "%s/time_ns", n->id);
		mvec_set(v, key, time_ns);
	}
}

/* Values of node idx; false when this run does not cover it. */
static bool node_value(const struct tree *t, const struct probe_plan *plan,
		       const struct probe_counts *c, unsigned counted, int idx, double *count,
		       double *time_ns, int depth)
{
	const struct tree_node *n = &t->nodes[idx];
	bool any = false;
	size_t i;

	for (i = 0; i < plan->n_slots; i++)
		if (plan->slots[i].node == idx) {
			*count = c->slot[i].count;
			*time_ns = c->slot[i].time_ns;
			return true;
		}
	if (n->backend == BACKEND_NONE)
		return false;
	if (n->n_children == 0) {
		unsigned k;

		if (n->backend != BACKEND_TRACEPOINT || (n->classes & counted) != n->classes)
			return false;
		*count = *time_ns = 0;
		for (k = 0; k < ARGUS_CLS_MAX; k++)
			if (n->classes & (1u << k)) {
				*count += c->cls[k].count;
				*time_ns += c->cls[k].time_ns;
			}
		return true;
	}
	if (depth > TREE_MAX_DEPTH)
		return false;
	*count = *time_ns = 0;
	for (i = 0; i < n->n_children; i++) {
		double cc, ct;

		if (t->nodes[n->children[i]].backend == BACKEND_NONE)
			continue;
		if (!node_value(t, plan, c, counted, n->children[i], &cc, &ct, depth + 1))
			return false;
		*count += cc;
		*time_ns += ct;
		any = true;
	}
	return any;
}

void measure_fill_nodes(const struct tree *t, const struct probe_plan *plan,
			const struct probe_counts *c, struct mvec *v)
{
	unsigned counted = 0, k;
	size_t i;

	for (i = 0; i < plan->n_slots; i++)
		counted |= plan->slots[i].classes;
	for (i = 0; i < t->n_nodes; i++) {
		double count, time_ns;

		if (node_value(t, plan, c, counted, i, &count, &time_ns, 0))
			set_node(v, &t->nodes[i], count, time_ns);
	}
	counted = probe_counted_with(counted);
	for (k = 0; k < ARGUS_CLS_MAX; k++) {
		char key[96];

		if (!(counted & (1u << k)))
			continue;
		snprintf(key, sizeof(key), "class/%s/count", probe_class_name(k));
		mvec_set(v, key, c->cls[k].count);
		snprintf(key, sizeof(key), "class/%s/time_ns", probe_class_name(k));
		mvec_set(v, key, c->cls[k].time_ns);
	}
}

/* ---- the kernel's own figures of a run, for the witness (witness.h) ---- */

/*
 * Perf's task records (PERF_RECORD_FORK/EXIT) of the target, one dummy
 * event per CPU: inherited by a workload's tasks (perf allows a ring buffer
 * on inherited events only per CPU), or system-wide for a running target,
 * whose existing threads no inherited event would cover (its tasks are
 * picked out by process). The buffers are read once, after the run: a
 * buffer that filled up may have dropped records, and then no figure is
 * given.
 */
struct lives {
	int fds[LIVES_CPUS_MAX];
	void *maps[LIVES_CPUS_MAX];
	size_t n, map_len;
};

struct task_record {
	__u32 type, pid, ppid, tid;
	__u64 time;
};

static void lives_close(struct lives *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->maps[i] && l->maps[i] != MAP_FAILED)
			munmap(l->maps[i], l->map_len);
		close(l->fds[i]);
	}
	l->n = 0;
}

static int lives_open(pid_t pid, struct lives *l)
{
	_cleanup_free_ char *online = NULL;
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = LIVES_DATA_PAGES;
	cpu_set_t cpus;
	int c, r;

	l->n = 0;
	r = read_file_bounded("/sys/devices/system/cpu/online", 4096, &online, NULL);
	if (r < 0)
		return r;
	r = parse_cpu_list(online, &cpus);
	if (r < 0)
		return r;
	for (c = 0; c < CPU_SETSIZE && c < LIVES_CPUS_MAX; c++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_DUMMY,
			.task = 1,
			.inherit = pid > 0,
			.use_clockid = 1,
			.clockid = CLOCK_MONOTONIC, /* the clock of now_mono_ns() */
		};
		int fd;
		void *m;

		if (!CPU_ISSET(c, &cpus))
			continue;
		fd = syscall(SYS_perf_event_open, &attr, pid > 0 ? pid : -1, c, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			goto fail;
		}
		for (;;) {
			l->map_len = (pages + 1) * page;
			m = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED || l->n > 0 || pages <= LIVES_DATA_PAGES_MIN ||
			    (errno != EPERM && errno != ENOMEM))
				break;
			pages = LIVES_DATA_PAGES_MIN;
		}
		l->fds[l->n] = fd;
		l->maps[l->n++] = m;
		if (m == MAP_FAILED) {
			r = -errno;
			goto fail;
		}
	}
	return l->n ? 0 : -ENODEV;
fail:
	lives_close(l);
	return r;
}

/*
 * Copy the fork and exit records of one buffer into recs. Nothing is
 * consumed while the run goes on, so a buffer that filled up dropped what
 * came after its last record: then *ret_complete_until is that record's
 * time (the records are complete up to it), else UINT64_MAX. False when
 * the buffer cannot be read.
 */
static bool lives_drain(void *map, size_t map_len, struct task_record **recs, size_t *n,
			size_t *cap, __u64 *ret_complete_until)
{
	struct perf_event_mmap_page *h = map;
	long page = sysconf(_SC_PAGESIZE);
	__u64 head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE), tail = h->data_tail;
	__u64 off = h->data_offset ?: (__u64)page, size = h->data_size ?: map_len - page, last = 0;
	const unsigned char *data = (const unsigned char *)map + off;
	bool full = head - tail + 2 * sizeof(struct perf_event_header) + 64 > size;

	while (tail + sizeof(struct perf_event_header) <= head) {
		unsigned char rec[64];
		struct perf_event_header eh;
		size_t i;

		for (i = 0; i < sizeof(eh); i++)
			((unsigned char *)&eh)[i] = data[(tail + i) % size];
		if (eh.size < sizeof(eh) || tail + eh.size > head)
			return false;
		if ((eh.type == PERF_RECORD_FORK || eh.type == PERF_RECORD_EXIT) &&
		    eh.size >= sizeof(eh) + 24) {
			struct task_record t = { .type = eh.type };
			__u32 ids[4];

			for (i = 0; i < sizeof(eh) + 24; i++)
				rec[i] = data[(tail + i) % size];
			memcpy(ids, rec + sizeof(eh), sizeof(ids));
			memcpy(&t.time, rec + sizeof(eh) + sizeof(ids), sizeof(t.time));
			t.pid = ids[0];
			t.ppid = ids[1];
			t.tid = ids[2];
			if (t.time > last)
				last = t.time;
			if (*n == *cap) {
				size_t ncap = *cap ? *cap * 2 : 1024;
				struct task_record *nr = reallocarray(*recs, ncap, sizeof(**recs));

				if (!nr)
					return false;
				*recs = nr;
				*cap = ncap;
			}
			(*recs)[(*n)++] = t;
		} else if (eh.type == PERF_RECORD_LOST) {
			return false;
		}
		tail += eh.size;
	}
	*ret_complete_until = full ? last : UINT64_MAX;
	return true;
}

static int record_cmp(const void *a, const void *b)
{
	const struct task_record *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static bool in_set(const __u32 *set, size_t n, __u32 v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == v)
			return true;
	return false;
}

static __u64 clamp_ns(__u64 t, __u64 lo, __u64 hi)
{
	return t < lo ? lo : t > hi ? hi : t;
}

/*
 * The lives of the target's tasks within [start, end], summed: the initial
 * threads of process target lived from start; every task a target process
 * forked (a thread of one, or a new process whose parent is one) from its
 * fork; each until its exit, or end. An exit of a target task neither
 * initial nor seen forking lived from start. Fails (-ENOBUFS) when a buffer
 * filled up before end. *ret_changed: whether any target task forked or
 * exited.
 */
static int lives_sum(const struct lives *l, pid_t target, const pid_t *initial, size_t n_initial,
		     __u64 start, __u64 end, double *ret_ns, bool *ret_changed)
{
	_cleanup_free_ struct task_record *recs = NULL;
	_cleanup_free_ __u32 *procs = NULL, *alive = NULL;
	size_t n = 0, cap = 0, n_procs = 1, n_alive = 0, i, k;
	double starts = (double)n_initial * start, ends = 0;
	bool changed = false;

	for (i = 0; i < l->n; i++) {
		__u64 until;

		if (!lives_drain(l->maps[i], l->map_len, &recs, &n, &cap, &until))
			return -EIO;
		/* a buffer that filled up before the window ended lost some of it */
		if (until < end)
			return -ENOBUFS;
	}
	qsort(recs, n, sizeof(*recs), record_cmp);
	procs = calloc(LIVES_PROCESSES_MAX, sizeof(*procs));
	alive = calloc(n_initial + n + 1, sizeof(*alive));
	if (!procs || !alive)
		return -ENOMEM;
	procs[0] = target;
	for (i = 0; i < n_initial; i++)
		alive[n_alive++] = initial[i];
	for (i = 0; i < n; i++) {
		const struct task_record *t = &recs[i];
		__u64 when = clamp_ns(t->time, start, end);

		if (t->type == PERF_RECORD_FORK) {
			bool thread = in_set(procs, n_procs, t->pid);

			if (!thread && !in_set(procs, n_procs, t->ppid))
				continue;
			if (!thread) {
				if (n_procs == LIVES_PROCESSES_MAX)
					return -E2BIG;
				procs[n_procs++] = t->pid;
			}
			starts += when;
			alive[n_alive++] = t->tid;
			changed = true;
			continue;
		}
		if (!in_set(procs, n_procs, t->pid))
			continue;
		for (k = 0; k < n_alive && alive[k] != t->tid; k++)
			;
		if (k < n_alive)
			alive[k] = alive[--n_alive];
		else
			starts += start; /* forked before the records began */
		ends += when;
		changed = true;
	}
	ends += (double)n_alive * end;
	*ret_ns = ends - starts;
	*ret_changed = changed;
	return 0;
}

/* TLB shootdown interrupts the whole system handled so far (x86's "TLB:" line); NAN elsewhere. */
static double tlb_interrupts(void)
{
	_cleanup_free_ char *buf = NULL;
	const char *line;
	double sum = 0;

	if (read_file_bounded("/proc/interrupts", 1 << 20, &buf, NULL) < 0)
		return NAN;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = line + strspn(line, " ");
		char *end;

		if (strncmp(p, "TLB:", 4) != 0)
			continue;
		for (p += 4;;) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
				break;
			sum += v;
			p = end;
		}
		return sum;
	}
	return NAN;
}

/* A thread's run_delay (ns waiting on a runqueue, /proc/PID/task/TID/schedstat). */
static int run_delay_of(pid_t pid, pid_t tid, double *ret)
{
	_cleanup_free_ char *path = xasprintf("/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	_cleanup_free_ char *buf = NULL;
	unsigned long long run, delay;
	int r;

	r = read_file_bounded(path, 256, &buf, NULL);
	if (r < 0)
		return r;
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return -EINVAL;
	*ret = delay;
	return 0;
}

/* What run_workload and run_pid collect for the witness, besides the perf counters. */
struct run_figures {
	bool on;
	struct lives lives;
	bool lives_open;
	__u64 start_ns, end_ns;
	double tlb_start;
	bool perf_partial; /* some counter missed some threads of a running target */
};

static void figures_begin(struct run_figures *f)
{
	f->start_ns = now_mono_ns();
	f->tlb_start = tlb_interrupts();
}

/*
 * Thread time and TLB interrupts once the window ended; the initial threads
 * lived from start (complete: they are all of the target's threads then).
 * Returns 1 when a target task forked or exited meanwhile, 0 when none did,
 * -errno when that is not known.
 */
static int figures_end(struct run_figures *f, pid_t target, const pid_t *initial,
		       size_t n_initial, bool complete, struct witness_figures *w)
{
	double ns = NAN;
	bool changed = true;
	int r = -ENODATA;

	f->end_ns = now_mono_ns();
	w->tlb_ipis = tlb_interrupts() - f->tlb_start;
	if (f->lives_open)
		r = lives_sum(&f->lives, target, initial, n_initial, f->start_ns, f->end_ns, &ns,
			      &changed);
	if (r < 0)
		return r;
	if (complete)
		w->thread_ns = ns;
	return changed;
}

/* The runs of each slot's programs (authored objects; kernel.bpf_stats on). */
static void figures_slot_runs(const struct tree *t, const struct probe_plan *plan,
			      const struct probe_authored *p, struct witness_figures *w)
{
	struct probe_program_runs runs[AUTHORED_PROGRAMS_MAX];
	struct witness_program progs[AUTHORED_PROGRAMS_MAX];
	size_t n = 0, i;

	if (probe_authored_runs(p, runs, AUTHORED_PROGRAMS_MAX, &n) < 0)
		return;
	for (i = 0; i < n; i++)
		progs[i] = (struct witness_program){ .section = runs[i].section,
						     .runs = (double)runs[i].runs };
	witness_slot_runs(t, plan, progs, n, w->slot_runs);
}

/* perf/<event> of the vector, NAN when absent. */
static double perf_value(const struct mvec *v, const char *metric)
{
	const double *x = mvec_get(v, metric);

	return x ? *x : NAN;
}

/* The level's probe: the builtin object or an authored one (plan->object). */
struct level_probe {
	struct probe *builtin;
	struct probe_authored *authored;
};

static int lp_load(const struct tree *t, const struct probe_plan *plan, struct level_probe *lp,
		   char **ret_log, char **ret_err)
{
	if (plan->object)
		return probe_authored_load(plan->object, plan->object_len, &lp->authored, ret_log);
	return probe_load(t, plan, &lp->builtin, ret_log, ret_err);
}

static int lp_add_target(struct level_probe *lp, pid_t pid)
{
	return lp->authored ? probe_authored_add_target(lp->authored, pid)
			    : probe_add_target(lp->builtin, pid);
}

static int lp_attach(struct level_probe *lp, char **ret_err)
{
	return lp->authored ? probe_authored_attach(lp->authored)
			    : probe_attach(lp->builtin, ret_err);
}

static void lp_detach(struct level_probe *lp)
{
	probe_authored_detach(lp->authored);
	probe_detach(lp->builtin);
}

static int lp_read(struct level_probe *lp, struct probe_counts *ret)
{
	return lp->authored ? probe_authored_read(lp->authored, ret) : probe_read(lp->builtin, ret);
}

static bool lp_loaded(const struct level_probe *lp)
{
	return lp->builtin || lp->authored;
}

static void lp_free(struct level_probe *lp)
{
	probe_authored_free(lp->authored);
	probe_free(lp->builtin);
	*lp = (struct level_probe){};
}

static int fail(struct measure_result *ret, int r, const char *code, char *msg)
{
	free(ret->error);
	free(ret->error_code);
	ret->error = msg;
	ret->error_code = xstrdup(code);
	return r;
}

/* {"waits", "wait_ns", "unkept_waits", "unkept_ns"}: every holder or waker the run met */
static json_t *task_totals(const struct probe_task_totals *t)
{
	return json_pack("{s:I,s:I,s:I,s:I}", "waits", (json_int_t)t->waits, "wait_ns",
			 (json_int_t)t->wait_ns, "unkept_waits", (json_int_t)t->unkept, "unkept_ns",
			 (json_int_t)t->unkept_ns);
}

static json_t *probe_info(const struct tree *t, const struct probe_plan *plan,
			  const struct level_probe *lp, const struct probe_counts *c, bool stats,
			  uint64_t wall_ns)
{
	json_t *o = probe_plan_describe(t, plan);

	if (lp->authored) {
		json_object_set_new(o, "object", json_string("authored"));
		json_object_set_new(o, "programs", probe_authored_programs(lp->authored));
	} else {
		probe_programs_here(t, json_object_get(o, "programs"));
	}

	json_object_set_new(o, "unclassified_faults", json_integer(c->unclassified_faults));
	json_object_set_new(o, "readahead_faults", json_integer(c->readahead_faults));
	json_object_set_new(o, "readahead_ns", json_integer(c->readahead_ns));
	json_object_set_new(o, "faults_overlapped", json_integer(c->faults_overlapped));
	json_object_set_new(o, "state_misses", json_integer(c->state_misses));
	/* the waits in calls under way at the window's start and end (bpf/edges.bpf.h) */
	if (!lp->authored)
		json_object_set_new(o, "window_edges",
				    json_pack("{s:b,s:I,s:I,s:I,s:[I,I]}", "counted", c->edges,
					      "opened", (json_int_t)c->edge_opened, "closed",
					      (json_int_t)c->edge_closed, "pass_ns",
					      (json_int_t)c->edge_pass_ns, "threads",
					      (json_int_t)c->edge_threads_start,
					      (json_int_t)c->edge_threads_end));
	if (c->n_rq_holders > 0) {
		json_t *a = json_array();
		size_t i;

		for (i = 0; i < c->n_rq_holders; i++) {
			const struct probe_task *h = &c->rq_holders[i];
			json_t *e = json_pack("{s:i,s:s,s:b,s:i,s:I,s:I}", "pid", (int)h->tgid,
					      "comm", h->comm, "own", h->own, "processes",
					      (int)h->processes, "waits", (json_int_t)h->waits,
					      "wait_ns", (json_int_t)h->wait_ns);

			if (h->work[0])
				json_object_set_new(e, "work", json_string(h->work));
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "runq_holders", a);
		json_object_set_new(o, "runq_holders_total", task_totals(&c->rq_holders_total));
	}
	if (c->n_wakers > 0) {
		json_t *a = json_array();
		size_t i;

		for (i = 0; i < c->n_wakers; i++) {
			const struct probe_task *w = &c->wakers[i];
			json_t *e = json_pack("{s:i,s:s,s:b,s:i,s:s,s:I,s:I}", "pid", (int)w->tgid,
					      "comm", w->comm, "own", w->own, "processes",
					      (int)w->processes, "class", probe_class_name(w->cls),
					      "waits", (json_int_t)w->waits, "wait_ns",
					      (json_int_t)w->wait_ns);

			if (w->then_cls < ARGUS_CLS_MAX) {
				json_object_set_new(e, "then_class",
						    json_string(probe_class_name(w->then_cls)));
				json_object_set_new(e, "then_ns", json_integer((json_int_t)w->then_ns));
			}
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "wakers", a);
		json_object_set_new(o, "wakers_total", task_totals(&c->wakers_total));
	}
	if (stats && c->run_cnt) {
		json_object_set_new(o, "program_runs", json_integer(c->run_cnt));
		json_object_set_new(o, "program_time_ns", json_integer(c->run_time_ns));
		json_object_set_new(o, "ns_per_run", json_real((double)c->run_time_ns / c->run_cnt));
		if (wall_ns)
			json_object_set_new(o, "overhead_fraction",
					    json_real((double)c->run_time_ns / wall_ns));
	}
	return o;
}

static int run_workload(const struct tree *t, const struct probe_plan *plan,
			const struct measure_target *tg, const struct measure_opts *o,
			struct level_probe *probe, struct perfcount *pc, struct run_figures *fig,
			struct measure_result *ret)
{
	struct target_run *run = NULL;
	struct aside aside = {};
	char *err = NULL;
	pid_t pid;
	int r;

	r = target_spawn(tg->workload, tg->victims_dir, &run, &err);
	if (r < 0)
		return fail(ret, r, "workload_failed",
			    err ?: xasprintf("cannot start workload: %s", strerror(-r)));
	pid = target_pid(run);
	/* held before exec: its tasks' records begin with its first fork */
	if (fig->on) {
		r = lives_open(pid, &fig->lives);
		fig->lives_open = r >= 0;
		if (r < 0)
			log_debug_errno(r, "task records of pid %d unavailable: %m", (int)pid);
	}
	if (lp_loaded(probe)) {
		_cleanup_free_ char *why = NULL;

		r = lp_add_target(probe, pid);
		if (!r)
			r = lp_attach(probe, &why);
		if (r < 0) {
			target_free(run);
			return fail(ret, r, "probe_attach_failed",
				    xasprintf("attaching the probe: %s", why ?: strerror(-r)));
		}
	}
	r = perfcount_open(&pid, 1, true, pc);
	if (r < 0)
		log_warning_errno(r, "perf counters unavailable for pid %d: %m", (int)pid);
	if (aside_enter(&tg->workload->cpuset, &aside) < 0)
		log_debug("could not step aside from the workload's CPUs");
	if (fig->on)
		figures_begin(fig);
	r = target_release(run);
	if (r >= 0)
		r = target_wait(run, o->should_stop, o->userdata, &ret->target);
	aside_leave(&aside);
	lp_detach(probe);
	if (fig->on) {
		(void)figures_end(fig, pid, &pid, 1, true, &ret->witness);
		ret->witness.run_delay_missing =
			"a workload's tasks take their run_delay with them when they exit";
	}
	target_free(run);
	if (r < 0)
		return fail(ret, r, "internal", xasprintf("waiting for the workload: %s", strerror(-r)));
	if (ret->target.stopped)
		return fail(ret, -ECANCELED, "cancelled", xstrdup("cancelled while the workload ran"));
	if (ret->target.exec_failed || ret->target.timed_out || ret->target.term_signal ||
	    ret->target.exit_status != 0)
		return fail(ret, -EIO, ret->target.timed_out ? "workload_timeout" : "workload_failed",
			    xasprintf("workload %s: %s", tg->workload->name,
				      ret->target.error ?: "failed"));
	mvec_set(&ret->vec, "target/wall_ns", ret->target.wall_ns);
	mvec_set(&ret->vec, "target/user_ns", ret->target.user_ns);
	mvec_set(&ret->vec, "target/sys_ns", ret->target.sys_ns);
	return 0;
}

/* Did every opened perf counter open on all n threads? */
static bool perf_covers(const struct perfcount *pc, size_t n)
{
	size_t i, j;

	for (i = 0; i < pc->n; i++) {
		size_t same = 0;

		for (j = 0; j < pc->n; j++)
			same += pc->event[j] == pc->event[i];
		if (same != n)
			return false;
	}
	return true;
}

/* Sum of the threads' run_delay; -errno when one cannot be read. */
static int run_delay_sum(pid_t pid, const pid_t *tids, size_t n, double *ret)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double d;
		int r = run_delay_of(pid, tids[i], &d);

		if (r < 0)
			return r;
		sum += d;
	}
	*ret = sum;
	return 0;
}

static int run_pid(const struct tree *t, const struct probe_plan *plan,
		   const struct measure_target *tg, const struct measure_opts *o,
		   struct level_probe *probe, struct perfcount *pc, struct run_figures *fig,
		   struct measure_result *ret)
{
	pid_t tids[TARGET_THREADS_MAX];
	size_t n = 0;
	double delay0 = NAN, delay1;
	bool listed, all;
	char *err = NULL;
	int changed;
	int r;

	r = target_pid_check(tg->pid, &err);
	if (r < 0)
		return fail(ret, r, "target_gone", err ?: xasprintf("pid %d: %s", (int)tg->pid,
								     strerror(-r)));
	/*
	 * Records system-wide from here, then the threads listed: a thread
	 * born in between is in both (counted twice: the bound only grows).
	 */
	if (fig->on) {
		r = lives_open(-1, &fig->lives);
		fig->lives_open = r >= 0;
		if (r < 0)
			log_debug_errno(r, "system-wide task records unavailable: %m");
		figures_begin(fig);
	}
	listed = target_threads(tg->pid, tids, TARGET_THREADS_MAX, &n) == 0 && n > 0;
	all = listed && n < TARGET_THREADS_MAX; /* at the limit, the list may be cut */
	/* counters before the probe: their window encloses its window */
	if (listed) {
		r = perfcount_open(tids, n, false, pc);
		if (r < 0)
			log_warning_errno(r, "perf counters unavailable for pid %d: %m", (int)tg->pid);
		fig->perf_partial = !all || !perf_covers(pc, n);
		if (fig->on && run_delay_sum(tg->pid, tids, n, &delay0) < 0)
			delay0 = NAN;
	}
	if (lp_loaded(probe)) {
		_cleanup_free_ char *why = NULL;

		r = lp_add_target(probe, tg->pid);
		if (!r)
			r = lp_attach(probe, &why);
		if (r < 0)
			return fail(ret, r, "probe_attach_failed",
				    xasprintf("attaching the probe: %s", why ?: strerror(-r)));
	}
	r = target_observe(tg->pid, tg->window_ms, o->should_stop, o->userdata, &ret->target);
	lp_detach(probe);
	if (fig->on) {
		changed = figures_end(fig, tg->pid, tids, all ? n : 0, all, &ret->witness);
		if (!all)
			ret->witness.run_delay_missing = "the target's threads could not all be listed";
		else if (changed < 0)
			ret->witness.run_delay_missing = "the target's forks and exits could not be "
							 "followed";
		else if (changed)
			ret->witness.run_delay_missing = "threads of the target came or went during "
							 "the window";
		else if (isnan(delay0) || run_delay_sum(tg->pid, tids, n, &delay1) < 0)
			ret->witness.run_delay_missing = "the threads' schedstat could not be read";
		else
			ret->witness.run_delay_ns = delay1 - delay0;
	}
	if (ret->target.stopped)
		return fail(ret, -ECANCELED, "cancelled", xstrdup("cancelled while observing"));
	if (r == -ESRCH)
		return fail(ret, r, "target_gone",
			    xasprintf("pid %d exited during the observation window", (int)tg->pid));
	if (r < 0)
		return fail(ret, r, "internal", xasprintf("observing pid %d: %s", (int)tg->pid,
							   strerror(-r)));
	return 0;
}

/* ---- a service: every process of its cgroup ---- */

#define RELIST_MS 100	/* how often the cgroup is read again for processes that joined */
#define SLI_GRACE_S 10	/* an SLI command may outlast the window by this much */
#define SLI_SLOWER_MAX 30 /* or, in a diagnosis, this many times its longest run in the reference */
#define SLI_LIMIT_MAX_S 600
#define SLI_NS_METRIC "target/sli_ns"

uint64_t measure_sli_longest_ns(const struct mvec *runs, size_t n)
{
	uint64_t longest = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const double *ns = mvec_get(&runs[i], SLI_NS_METRIC);

		if (ns && *ns > longest)
			longest = (uint64_t)*ns;
	}
	return longest;
}

/* The limit of an SLI command with nothing known of its runs: the window plus SLI_GRACE_S. */
static unsigned sli_window_limit_s(const struct measure_target *tg)
{
	return tg->window_ms / 1000 + SLI_GRACE_S;
}

unsigned measure_sli_limit_s(const struct measure_target *tg)
{
	unsigned limit = sli_window_limit_s(tg);
	double scaled = ceil((double)tg->sli_reference_ns * SLI_SLOWER_MAX / 1e9);

	if (scaled > SLI_LIMIT_MAX_S)
		scaled = SLI_LIMIT_MAX_S;
	return scaled > limit ? (unsigned)scaled : limit;
}

/* Which limit an SLI command that ran out of time had, for its error: " (its limit: ...)". */
static char *sli_limit_why(const struct measure_target *tg)
{
	unsigned limit = measure_sli_limit_s(tg);

	if (limit == sli_window_limit_s(tg))
		return xasprintf(" (its limit: the window plus %d s)", SLI_GRACE_S);
	return xasprintf(" (its limit: %d times its longest run in the reference, %.1f s%s)",
			 SLI_SLOWER_MAX, tg->sli_reference_ns / 1e9,
			 limit == SLI_LIMIT_MAX_S ? ", at most 10 minutes" : "");
}

/* The processes of a service followed so far, and their CPU time when first seen. */
struct group {
	struct service_where where;
	struct level_probe *probe;
	const struct measure_opts *o;
	pid_t *pids; /* ascending */
	struct target_cpu *cpu0;
	size_t n, cap;
	size_t joined; /* processes that joined during the window */
	uint64_t next_relist;
	uint64_t boot_start;  /* the window's start, on CLOCK_BOOTTIME */
	uint64_t cgroup_cpu0; /* the cgroup's CPU time then (cgroup2), UINT64_MAX when unknown */
	bool stopped;
};

static void group_clear(struct group *g)
{
	service_where_clear(&g->where);
	free(g->pids);
	free(g->cpu0);
}

static uint64_t now_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static ssize_t group_find(const struct group *g, pid_t pid)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->pids[mid] == pid)
			return (ssize_t)mid;
		if (g->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool group_has(const struct group *g, pid_t pid)
{
	return group_find(g, pid) >= 0;
}

/*
 * Follow pid from now, with its CPU time so far: none for a process born in
 * the window, whose every tick is the window's.
 */
static int group_add(struct group *g, pid_t pid)
{
	struct target_cpu cpu0 = {};
	size_t i;
	int r;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		pid_t *p = realloc(g->pids, cap * sizeof(*p));
		struct target_cpu *c = p ? realloc(g->cpu0, cap * sizeof(*c)) : NULL;

		if (!p || !c)
			abort();
		g->pids = p;
		g->cpu0 = c;
		g->cap = cap;
	}
	if (g->probe && lp_loaded(g->probe)) {
		r = lp_add_target(g->probe, pid);
		if (r < 0)
			return r;
	}
	if (target_cpu(pid, &cpu0) == 0 && cpu0.start_ns >= g->boot_start)
		cpu0.own_ns = cpu0.reaped_ns = 0;
	for (i = g->n; i > 0 && g->pids[i - 1] > pid; i--) {
		g->pids[i] = g->pids[i - 1];
		g->cpu0[i] = g->cpu0[i - 1];
	}
	g->pids[i] = pid;
	g->cpu0[i] = cpu0;
	g->n++;
	return 0;
}

/*
 * On cgroup2, hand the service's cgroups to the built-in probe, which then
 * follows every process in them, and every process that moves in, from its
 * first event (probe_follow_cgroup); reading cgroup.procs (group_relist)
 * stays for the processes' CPU time and for authored probes. A cgroup made
 * below the service's since the last call is added. 1 when followed, 0 when
 * the probe cannot follow this service by its cgroups (an authored probe, a
 * cgroup v1 hierarchy), a negative errno when it failed.
 */
static int group_follow_cgroups(struct group *g)
{
	uint64_t ids[ARGUS_MAX_CGROUPS];
	size_t n = 0, i;
	int r;

	if (!g->probe || !g->probe->builtin || strcmp(g->where.kind, CGROUP_KIND_V2) != 0)
		return 0;
	r = cgroup_subtree_ids(g->where.dir, g->where.kind, ids, ARRAY_SIZE(ids), &n, NULL);
	for (i = 0; r >= 0 && i < n; i++)
		r = probe_follow_cgroup(g->probe->builtin, ids[i]);
	return r < 0 ? r : 1;
}

/* Read the cgroup again: a process that joined it (a fork, a move) is followed from now. */
static void group_relist(struct group *g)
{
	size_t i, before = g->n;

	(void)group_follow_cgroups(g);

	if (service_relist(&g->where) < 0)
		return;
	for (i = 0; i < g->where.n_pids && g->n < SERVICE_PROCS_MAX; i++) {
		pid_t pid = g->where.pids[i];

		if (group_has(g, pid))
			continue;
		if (group_add(g, pid) < 0)
			break;
	}
	if (g->n > before) {
		g->joined += g->n - before;
		if (g->probe && g->probe->builtin)
			probe_targets_changed(g->probe->builtin);
	}
}

/* Polled about every 20 ms during the window: stop when asked; follow joiners. */
static bool group_tick(void *userdata)
{
	struct group *g = userdata;
	uint64_t now = now_mono_ns();

	if (g->o->should_stop && g->o->should_stop(g->o->userdata)) {
		g->stopped = true;
		return true;
	}
	if (now >= g->next_relist) {
		group_relist(g);
		g->next_relist = now + RELIST_MS * 1000000ull;
	}
	return false;
}

static uint64_t grown(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/*
 * The CPU time the service spent in the window, the processes that ended in
 * it included (a backend per connection, a worker that served its count):
 * on cgroup2 the cgroup's own count. Else the followed processes': what each
 * one still running spent since first seen, and what its children that it
 * waited for in the window spent; those children, when followed, are
 * counted there whole, so their part from before the window is taken off.
 * A process that ended and was not waited for by a followed one (orphaned,
 * or moved out) takes its time with it.
 */
static uint64_t group_cpu_ns(const struct group *g)
{
	_cleanup_free_ bool *alive = NULL;
	uint64_t sum = 0, before = 0, ns;
	size_t i;

	if (g->cgroup_cpu0 != UINT64_MAX && cgroup_cpu_ns(g->where.dir, g->where.kind, &ns) == 0)
		return grown(ns, g->cgroup_cpu0);
	alive = calloc(g->n ?: 1, sizeof(*alive));
	if (!alive)
		abort();
	for (i = 0; i < g->n; i++) {
		struct target_cpu now;

		if (target_cpu(g->pids[i], &now) < 0)
			continue;
		alive[i] = true;
		sum += grown(now.own_ns, g->cpu0[i].own_ns) +
		       grown(now.reaped_ns, g->cpu0[i].reaped_ns);
	}
	for (i = 0; i < g->n; i++) {
		ssize_t parent = alive[i] ? -1 : group_find(g, g->cpu0[i].ppid);

		if (parent >= 0 && alive[parent])
			before += g->cpu0[i].own_ns + g->cpu0[i].reaped_ns;
	}
	return grown(sum, before);
}

/* The threads of the first processes, for the perf counters; *ret_all when that is every one. */
static size_t group_threads(const struct group *g, pid_t *tids, size_t max, bool *ret_all)
{
	size_t n = 0, i;
	bool all = true;

	for (i = 0; i < g->n; i++) {
		size_t got = 0;

		if (n >= max || target_threads(g->pids[i], tids + n, max - n, &got) < 0) {
			all = false;
			continue;
		}
		n += got;
		all = all && n < max;
	}
	*ret_all = all;
	return n;
}

/* The service a running target names: its definition, or a unit's, filled into *unit. */
static const struct service *target_service(const struct measure_target *tg, struct service *unit)
{
	*unit = (struct service){.name = (char *)tg->unit, .unit = (char *)tg->unit,
				 .user = (char *)"nobody"};
	return tg->service ?: unit;
}

/* A running target's CPU clock: its group, followed without a probe. */
struct target_clock {
	struct group g;
};

int target_clock_start(const struct measure_target *tg, struct target_clock **ret)
{
	struct service unit;
	struct target_clock *c;
	uint64_t cpu;
	size_t i;
	int r = 0;

	if (tg->workload || (!tg->pid && !tg->service && !tg->unit))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->g = (struct group){.boot_start = now_boot_ns(), .cgroup_cpu0 = UINT64_MAX};
	if (tg->pid) {
		r = group_add(&c->g, tg->pid);
	} else {
		_cleanup_free_ char *err = NULL;

		r = service_locate(target_service(tg, &unit), &c->g.where, &err);
		for (i = 0; r >= 0 && i < c->g.where.n_pids; i++)
			r = group_add(&c->g, c->g.where.pids[i]);
		if (r >= 0 && cgroup_cpu_ns(c->g.where.dir, c->g.where.kind, &cpu) == 0)
			c->g.cgroup_cpu0 = cpu;
	}
	if (r < 0) {
		target_clock_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

uint64_t target_clock_ns(struct target_clock *c)
{
	if (c->g.where.dir)
		group_relist(&c->g);
	return group_cpu_ns(&c->g);
}

void target_clock_free(struct target_clock *c)
{
	if (!c)
		return;
	group_clear(&c->g);
	free(c);
}

static int run_service(const struct tree *t, const struct probe_plan *plan,
		       const struct measure_target *tg, const struct measure_opts *o,
		       struct level_probe *probe, struct perfcount *pc, struct run_figures *fig,
		       struct measure_result *ret)
{
	struct service unit;
	const struct service *svc = target_service(tg, &unit);
	_cleanup_(group_clear) struct group g = {.probe = probe, .o = o,
						 .boot_start = now_boot_ns(),
						 .cgroup_cpu0 = UINT64_MAX};
	struct sli_window *sw = NULL;
	pid_t tids[TARGET_THREADS_MAX];
	uint64_t start, end, cpu, sli_ns = 0;
	_cleanup_free_ char *sli_err = NULL;
	char *err = NULL;
	double sli = NAN;
	bool all = false;
	size_t n_tids, i;
	int r;

	(void)t;
	(void)plan;
	r = service_locate(svc, &g.where, &err);
	if (r < 0)
		return fail(ret, r, "target_gone", err ?: xasprintf("service %s: %s", svc->name,
								     strerror(-r)));
	for (i = 0; i < g.where.n_pids; i++) {
		r = group_add(&g, g.where.pids[i]);
		if (r < 0)
			return fail(ret, r, "probe_attach_failed",
				    xasprintf("following pid %d: %s", (int)g.where.pids[i],
					      strerror(-r)));
	}
	r = group_follow_cgroups(&g);
	if (r < 0)
		log_warning("service %s: its cgroups cannot be followed by id (%s): a process that "
			    "joins is seen when cgroup.procs is read again",
			    svc->name, strerror(-r));
	/* counters before the probe: their window encloses its window */
	n_tids = group_threads(&g, tids, TARGET_THREADS_MAX, &all);
	if (n_tids > 0 && perfcount_open(tids, n_tids, false, pc) < 0)
		log_warning("perf counters unavailable for service %s", svc->name);
	fig->perf_partial = true; /* refined below, once the window shows who came */
	if (lp_loaded(probe)) {
		_cleanup_free_ char *why = NULL;

		r = lp_attach(probe, &why);
		if (r < 0)
			return fail(ret, r, "probe_attach_failed",
				    xasprintf("attaching the probe: %s", why ?: strerror(-r)));
	}
	if (cgroup_cpu_ns(g.where.dir, g.where.kind, &cpu) < 0)
		cpu = UINT64_MAX; /* counted from the followed processes instead */
	g.cgroup_cpu0 = cpu;
	start = now_mono_ns();
	end = start + (uint64_t)tg->window_ms * 1000000ull;
	g.next_relist = start + RELIST_MS * 1000000ull;
	if (svc->sli) {
		r = sli_window_begin(svc->sli, svc->user, measure_sli_limit_s(tg), &sw, &sli_err);
		if (r >= 0)
			r = sli_window_wait(sw, group_tick, &g, &sli_err);
		if (r < 0 && !g.stopped) {
			_cleanup_free_ char *why = r == -ETIMEDOUT ? sli_limit_why(tg) : NULL;

			lp_detach(probe);
			sli_window_free(sw);
			return fail(ret, r, "sli_failed",
				    xasprintf("service %s: %s%s", svc->name, sli_err ?: strerror(-r),
					      why ?: ""));
		}
		/* cancelled while the command ran: its reason is the stop's */
		free(sli_err);
		sli_err = NULL;
	}
	while (!g.stopped && now_mono_ns() < end) {
		struct timespec ts = {0, 20 * 1000000L};

		nanosleep(&ts, NULL);
		group_tick(&g);
	}
	ret->target.wall_ns = now_mono_ns() - start;
	lp_detach(probe);
	if (g.stopped) {
		sli_window_free(sw);
		return fail(ret, -ECANCELED, "cancelled", xstrdup("cancelled while observing"));
	}
	if (sw) {
		r = sli_window_end(sw, ret->target.wall_ns, &sli, &sli_err);
		sli_ns = sli_window_ran_ns(sw);
		sli_window_free(sw);
		if (r < 0)
			return fail(ret, r, "sli_failed",
				    xasprintf("service %s: %s", svc->name, sli_err ?: strerror(-r)));
	}
	cpu = group_cpu_ns(&g);
	if (service_relist(&g.where) < 0 || g.where.n_pids == 0)
		return fail(ret, -ESRCH, "target_gone",
			    xasprintf("service %s has no process left at the end of the window "
				      "(stopped or restarted during it)",
				      svc->name));
	fig->perf_partial = !all || g.joined > 0 || !perf_covers(pc, n_tids);
	if (fig->on)
		ret->witness.run_delay_missing = "a service's processes are not listed thread by "
						 "thread";
	mvec_set(&ret->vec, "target/window_ns", ret->target.wall_ns);
	mvec_set(&ret->vec, "target/cpu_ns", cpu);
	mvec_set(&ret->vec, "target/processes", g.where.n_pids);
	if (svc->sli) {
		mvec_set(&ret->vec, "target/sli", sli);
		mvec_set(&ret->vec, "target/sli_cost", sli_lower_is_better(svc->sli) ? sli : -sli);
		if (sli_ns > 0)
			mvec_set(&ret->vec, SLI_NS_METRIC, sli_ns);
	}
	return 0;
}

/* The perf-counted figures and the authored programs' runs, once the vector holds the counters. */
static void figures_from_run(const struct tree *t, const struct probe_plan *plan,
			     const struct run_figures *fig, const struct level_probe *lp,
			     bool stats_on, struct measure_result *res)
{
	struct witness_figures *w = &res->witness;

	if (!fig->perf_partial) {
		w->page_faults = perf_value(&res->vec, "perf/page_faults");
		w->major_faults = perf_value(&res->vec, "perf/major_faults");
		w->context_switches = perf_value(&res->vec, "perf/context_switches");
		w->task_clock_ns = perf_value(&res->vec, "perf/task_clock_ns");
	}
	if (lp->authored && stats_on)
		figures_slot_runs(t, plan, lp->authored, w);
}

int measure_run(const struct tree *t, const struct probe_plan *plan,
		const struct measure_target *tg, const struct measure_opts *o,
		struct measure_result *ret)
{
	struct measure_result res = {};
	struct perfcount pc = { .n = 0 };
	struct level_probe probe = {};
	struct probe_counts counts = {};
	struct run_figures fig = { .on = o->witness };
	_cleanup_close_ int stats_fd = -1;
	char *vlog = NULL;
	int r;

	witness_figures_init(&res.witness);
	if (plan && plan->n_slots) {
		_cleanup_free_ char *why = NULL;

		r = lp_load(t, plan, &probe, &vlog, &why);
		if (r < 0) {
			res.verifier_log = vlog;
			r = fail(&res, r, "probe_rejected",
				 xasprintf("loading the level probe: %s", why ?: strerror(-r)));
			*ret = res;
			return r;
		}
	}
	if ((o->probe_stats || o->witness) && lp_loaded(&probe)) {
		stats_fd = probe_stats_enable();
		if (stats_fd < 0)
			log_debug_errno(stats_fd, "bpf stats unavailable: %m");
	}

	if (tg->workload)
		r = run_workload(t, plan, tg, o, &probe, &pc, &fig, &res);
	else if (tg->service || tg->unit)
		r = run_service(t, plan, tg, o, &probe, &pc, &fig, &res);
	else
		r = run_pid(t, plan, tg, o, &probe, &pc, &fig, &res);
	if (fig.lives_open)
		lives_close(&fig.lives);

	if (r >= 0) {
		if (pc.n)
			perfcount_read(&pc, &res.vec);
		if (lp_loaded(&probe)) {
			r = lp_read(&probe, &counts);
			if (r < 0)
				r = fail(&res, r, "internal",
					 xasprintf("reading the probe counters: %s", strerror(-r)));
			else {
				measure_fill_nodes(t, plan, &counts, &res.vec);
				/* the first thread lived the wall time; the rest, as counted */
				if (tg->workload && probe.builtin)
					mvec_set(&res.vec, "target/thread_ns",
						 res.target.wall_ns + counts.child_thread_ns);
				/*
				 * a running target's waits in calls, whole within the
				 * window, and its threads over it (those at its start
				 * and its end, by their mean)
				 */
				if (!tg->workload && counts.edges) {
					mvec_set(&res.vec, "target/window_edges", 1);
					mvec_set(&res.vec, "target/threads",
						 (counts.edge_threads_start + counts.edge_threads_end) /
						     2.0);
				}
				res.probe = probe_info(t, plan, &probe, &counts, stats_fd >= 0,
						       res.target.wall_ns);
			}
		}
		if (r >= 0 && fig.on)
			figures_from_run(t, plan, &fig, &probe, stats_fd >= 0, &res);
	}
	perfcount_close(&pc);
	lp_free(&probe);
	*ret = res;
	return r;
}

int measure_warmup(const struct measure_target *tg, const struct measure_opts *o,
		   struct measure_result *ret)
{
	if (!tg->workload) {
		*ret = (struct measure_result){};
		return 0;
	}
	return measure_run(NULL, NULL, tg, o, ret);
}
