// SPDX-License-Identifier: MIT
/*
 * Loader of the multiplexed probe: open -> rodata and autoload -> load ->
 * attach -> read -> free, for a plan that probe_plan.c made. See probe.h.
 */
#include "daemon/probe.h"
#include "daemon/probe_skel.h"
#include "daemon/syscalls.h"
#include "daemon/tracefs.h"
#include "daemon/log.h"
#include "daemon/util.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define VERIFIER_LOG_MAX (256 * 1024)

/* ---- the skeleton (probe_skel.h) ---- */

int probe_skel_open(char *logbuf, size_t loglen, __u32 log_level, struct paths_bpf **ret)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .kernel_log_buf = logbuf, .kernel_log_size = loglen,
		    .kernel_log_level = log_level);
	struct paths_bpf *skel;
	struct bpf_program *prog;

	skel = paths_bpf__open_opts(logbuf ? &opts : NULL);
	if (!skel)
		return -errno ?: -EINVAL;
	bpf_object__for_each_program (prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	*ret = skel;
	return 0;
}

struct bpf_program *probe_skel_tracepoint(struct paths_bpf *skel, const char *tp)
{
	const size_t plen = strlen(PROBE_TP_SECTION);
	struct bpf_program *prog;

	bpf_object__for_each_program (prog, skel->obj) {
		const char *sec = bpf_program__section_name(prog);

		if (strncmp(sec, PROBE_TP_SECTION, plen) == 0 && strcmp(sec + plen, tp) == 0)
			return prog;
	}
	return NULL;
}

const char *probe_skel_function(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog), *slash = strchr(sec, '/');

	return slash ? slash + 1 : sec;
}

/* Does the kernel (its BTF, parsed by the caller) have the BTF-enabled tracepoint tp? */
static bool kernel_has_tracepoint(const struct btf *vmlinux, const char *tp)
{
	char name[128];

	/* a raw tracepoint's type, as the kernel names it (libbpf looks it up so too) */
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0;
}

static struct probe_kernel kernel_here;

static void kernel_here_ask(void)
{
	struct btf *btf = btf__load_vmlinux_btf();

	/* without BTF nothing loads anyway */
	kernel_here.splits_rss =
	    btf && btf__find_by_name_kind(btf, "task_rss_stat", BTF_KIND_STRUCT) > 0;
	kernel_here.faults_by_kprobe = btf && !kernel_has_tracepoint(btf, "page_fault_user");
	kernel_here.syscall_per_call = syscall_events_per_call();
	kernel_here.syscall_none = syscall_events_none();
	btf__free(btf);
}

const struct probe_kernel *probe_kernel_here(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, kernel_here_ask);
	return &kernel_here;
}

void probe_programs_here(const struct tree *t, json_t *programs)
{
	probe_plan_programs_on(probe_kernel_here(), &t->backends, programs);
}

int probe_tree_programs_here(const struct tree *t, json_t *nodes)
{
	size_t i, h;

	if (json_array_size(nodes) != t->n_nodes)
		return -EINVAL;
	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *n = &t->nodes[i];
		json_t *progs = json_array();

		for (h = 0; n->backend >= 0 && n->backend < BACKEND_MAX && h < n->chosen.n; h++) {
			const char *name = n->chosen.v[h].name;

			if (n->backend == BACKEND_FENTRY)
				json_array_append_new(progs, json_sprintf("fentry+fexit/%s", name));
			else if (n->backend == BACKEND_KPROBE)
				json_array_append_new(progs, json_sprintf("kprobe+kretprobe/%s", name));
			else
				json_array_append_new(progs, json_sprintf("tp_btf/%s", name));
		}
		probe_programs_here(t, progs);
		if (json_object_set_new(json_array_get(nodes, i), "programs", progs) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Pair `pair` of the fentry/fexit programs: fentry_<pair> and fexit_<pair> (bpf/functions.bpf.h).
 */
static int fentry_program(struct paths_bpf *skel, unsigned pair, bool exit,
			  struct bpf_program **ret)
{
	char name[32];
	struct bpf_program *p;

	snprintf(name, sizeof(name), "%s_%u", exit ? "fexit" : "fentry", pair);
	p = bpf_object__find_program_by_name(skel->obj, name);
	if (!p)
		return -ENOENT;
	*ret = p;
	return 0;
}

/* ---- argusd's PID namespace (bpf/pidns.h) ---- */

/* The initial PID namespace's inode (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCu

int probe_pidns(__u64 *ret_inum)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -errno;
	/* in the initial namespace task->tgid is argusd's number already: 0, no translation */
	*ret_inum = st.st_ino == PID_NS_INIT_INO ? 0 : st.st_ino;
	return 0;
}

/* ---- loading ---- */

struct probe {
	struct paths_bpf *skel;
	struct probe_plan plan;
	/* Slots on a function backend: the functions attached, copied from the tree at load. */
	struct hook_list fns[ARGUS_MAX_SLOTS];
	struct bpf_link *links[PROBE_MAX_LINKS];
	size_t n_links;
	/* the calls' own events stand in for raw sys_enter, sys_exit (syscall_event_ids) */
	bool call_enter, call_exit;
	/* the fault classifier's stand-ins for its tracepoints (probe_plan_stand_in), to attach */
	struct bpf_program *stand_ins[2 * PROBE_STAND_IN_MAX];
	size_t n_stand_ins;
	/* the task iterator of the window's edges (bpf/edges.bpf.h); NULL: none here */
	struct bpf_link *edges;
	bool edges_counted; /* both passes made: the window's edges were counted */
	uint64_t edge_pass_ns; /* the longest pass took so long */
	uint64_t edge_threads[2]; /* the target's live threads at the start and at the end */
};

/*
 * Say once per process that the kernel lacks what a program attaches to
 * (kind "function" or "tracepoint"): the kernel does not change under a
 * running daemon, and every probe load would say it again.
 */
static void warn_missing_once(const char *kind, const char *name, const char *prog)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char said[16][64];
	static size_t n;
	bool first = true;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n && first; i++)
		first = strcmp(said[i], name) != 0;
	if (first && n < ARRAY_SIZE(said))
		snprintf(said[n++], sizeof(said[0]), "%s", name);
	pthread_mutex_unlock(&lock);
	if (first)
		log_warning("probe: this kernel has no %s %s: %s left out, the events it marks "
			    "are not seen",
			    kind, name, prog);
}

/*
 * Autoload the programs of a stand-in (probe_plan_stand_in) and keep them
 * for probe_attach. One on a function the kernel lacks (do_huge_pmd_wp_page
 * without transparent huge pages) is left out, and said: the events it
 * marks go unseen.
 */
static int autoload_stand_in(struct probe *p, const struct probe_stand_in *si,
			     const struct btf *vmlinux, char **ret_err)
{
	size_t j;

	for (j = 0; si->programs[j]; j++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(p->skel->obj,
									     si->programs[j]);
		const char *fn = prog ? probe_skel_function(prog) : NULL;

		if (!prog || p->n_stand_ins == ARRAY_SIZE(p->stand_ins)) {
			if (ret_err)
				*ret_err = xasprintf("no program %s", si->programs[j]);
			return -ENOENT;
		}
		if (bpf_program__autoload(prog))
			continue;
		if (vmlinux && btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) <= 0) {
			warn_missing_once("function", fn, bpf_program__section_name(prog));
			continue;
		}
		bpf_program__set_autoload(prog, true);
		p->stand_ins[p->n_stand_ins++] = prog;
	}
	return 0;
}

/* Autoload the plan's tracepoint programs. */
static int autoload_tracepoints(const struct tree *t, struct probe *p, char **ret_err)
{
	const char *tps[PROBE_MAX_LINKS];
	struct btf *vmlinux = NULL;
	size_t n, i;
	int r;

	r = probe_plan_tracepoints(t, &p->plan, tps, ARRAY_SIZE(tps), &n);
	if (r < 0)
		return r;
	/* parsed once for the whole plan: a parse of the kernel's BTF takes tenths of a second */
	vmlinux = btf__load_vmlinux_btf();
	for (i = 0; i < n; i++) {
		const struct probe_stand_in *si;
		struct bpf_program *prog;

		/*
		 * where the kernel lacks page_fault_user, or rss_stat cannot say
		 * which page a fault mapped, programs on handle_mm_fault do
		 */
		r = probe_plan_stand_in(probe_kernel_here(), &t->backends, tps[i], &si);
		if (r < 0) {
			/* resolution left the nodes that need it unavailable: a plan that has it is wrong */
			if (ret_err)
				*ret_err = xasprintf("%s: this kernel needs programs in its place that "
						     "the backends setting does not allow",
						     tps[i]);
			btf__free(vmlinux);
			return r;
		}
		if (si) {
			r = autoload_stand_in(p, si, vmlinux, ret_err);
			if (r < 0) {
				btf__free(vmlinux);
				return r;
			}
			continue;
		}
		/* syscall_events = none: the calls are seen at the switch, with no event */
		if (syscall_event_raw(tps[i]) && syscall_events_none())
			continue;
		/* where the calls' own events can be attached, those of the calls it follows */
		if (strcmp(tps[i], "sys_enter") == 0 && syscall_events_per_call()) {
			bpf_program__set_autoload(p->skel->progs.handle_call_enter, true);
			bpf_program__set_autoload(p->skel->progs.handle_call_enter_file, true);
			p->call_enter = true;
			continue;
		}
		if (strcmp(tps[i], "sys_exit") == 0 && syscall_events_per_call()) {
			bpf_program__set_autoload(p->skel->progs.handle_call_exit, true);
			p->call_exit = true;
			continue;
		}
		prog = probe_skel_tracepoint(p->skel, tps[i]);
		if (!prog) {
			if (ret_err)
				*ret_err = xasprintf("no program for tracepoint %s", tps[i]);
			btf__free(vmlinux);
			return -ENOENT;
		}
		/*
		 * A companion the kernel lacks (mm_filemap_fault and
		 * mm_filemap_map_pages are newer than 6.1) would fail the whole
		 * object: left out, and said, since what it marks goes unseen.
		 * A node's own hooks were checked by resolution.
		 */
		if (vmlinux && !kernel_has_tracepoint(vmlinux, tps[i])) {
			warn_missing_once("tracepoint", tps[i], bpf_program__section_name(prog));
			continue;
		}
		bpf_program__set_autoload(prog, true);
	}
	/*
	 * The waits in calls that cross the window's edges, where the
	 * switch counts waits and the kernel iterates over tasks (5.8 on)
	 */
	if (bpf_program__autoload(p->skel->progs.handle_sched_switch) && vmlinux &&
	    btf__find_by_name_kind(vmlinux, "bpf_iter__task", BTF_KIND_STRUCT) > 0)
		bpf_program__set_autoload(p->skel->progs.window_edges, true);
	btf__free(vmlinux);
	return 0;
}

/* Point one fentry/fexit pair per function of slot i at it, from pair *pair on. */
static int set_fentry_targets(struct probe *p, size_t i, unsigned *pair)
{
	const struct hook_list *fns = &p->fns[i];
	size_t f;
	int r;

	for (f = 0; f < fns->n; f++) {
		struct bpf_program *fe, *fx;

		if (fentry_program(p->skel, *pair, false, &fe) < 0 ||
		    fentry_program(p->skel, *pair, true, &fx) < 0)
			return -E2BIG;
		bpf_program__set_autoload(fe, true);
		bpf_program__set_autoload(fx, true);
		r = bpf_program__set_attach_target(fe, 0, fns->v[f].name);
		if (!r)
			r = bpf_program__set_attach_target(fx, 0, fns->v[f].name);
		if (r < 0)
			return r;
		p->skel->rodata->fentry_slot[(*pair)++] = i;
	}
	return 0;
}

/*
 * Open the object for plan into p (its skeleton and its settings, from
 * nothing), the verifier's words to logbuf at log_level.
 */
static int probe_prepare(const struct tree *t, const struct probe_plan *plan, struct probe *p,
			 char *logbuf, __u32 log_level, char **ret_err)
{
	unsigned pair = 0, c;
	uint64_t barrier;
	size_t i;
	int r;

	*p = (struct probe){.plan = *plan};
	logbuf[0] = '\0';
	r = probe_skel_open(logbuf, VERIFIER_LOG_MAX, log_level, &p->skel);
	if (r < 0)
		return r;
	r = probe_pidns(&p->skel->rodata->pidns_inum);
	if (r < 0) {
		if (ret_err)
			*ret_err =
			    xasprintf("cannot tell argusd's PID namespace: %s", strerror(-r));
		return r;
	}
	for (c = 0; c < ARGUS_CLS_MAX; c++)
		p->skel->rodata->class_slot[c] = -1;
	for (i = 0; i < ARGUS_FENTRY_PAIRS; i++)
		p->skel->rodata->fentry_slot[i] = -1;
	p->skel->rodata->calls_at_switch = syscall_events_none();
	/* unknown, a worker may be named by a flush's barrier it ran last */
	if (kallsyms_address("wq_barrier_func", &barrier) == 0)
		p->skel->rodata->work_barrier = barrier;

	r = autoload_tracepoints(t, p, ret_err);
	if (r < 0)
		return r;
	for (i = 0; i < plan->n_slots; i++) {
		const struct probe_slot *s = &plan->slots[i];

		switch (s->backend) {
		case BACKEND_TRACEPOINT:
			for (c = 0; c < ARGUS_CLS_MAX; c++)
				if (s->classes & (1u << c))
					p->skel->rodata->class_slot[c] = i;
			break;
		case BACKEND_KPROBE:
			p->fns[i] = t->nodes[s->node].chosen;
			bpf_program__set_autoload(p->skel->progs.kprobe_entry, true);
			bpf_program__set_autoload(p->skel->progs.kretprobe_exit, true);
			break;
		case BACKEND_FENTRY:
			/* one fentry/fexit pair per function, all counting into this slot */
			p->fns[i] = t->nodes[s->node].chosen;
			r = set_fentry_targets(p, i, &pair);
			if (r < 0)
				return r;
			break;
		default:
			break;
		}
	}
	return 0;
}

int probe_load(const struct tree *t, const struct probe_plan *plan, struct probe **ret,
	       char **ret_log, char **ret_err)
{
	_cleanup_free_ char *logbuf = NULL;
	__u32 level = 0;
	struct probe *p;
	int r;

	p = calloc(1, sizeof(*p));
	logbuf = calloc(1, VERIFIER_LOG_MAX);
	if (!p || !logbuf) {
		free(p);
		return -ENOMEM;
	}
	for (;;) {
		r = probe_prepare(t, plan, p, logbuf, level, ret_err);
		if (r < 0)
			goto fail;
		r = paths_bpf__load(p->skel);
		if (r >= 0)
			break;
		r = -errno ?: r;
		if (r != -ENOSPC || level == PROBE_LOG_LEVEL_STATS) {
			if (ret_log && logbuf[0])
				*ret_log = TAKE_PTR(logbuf);
			goto fail;
		}
		paths_bpf__destroy(p->skel);
		level = PROBE_LOG_LEVEL_STATS;
	}
	r = syscall_roles_write(p->skel->maps.syscall_roles);
	if (r < 0) {
		if (ret_err)
			*ret_err = xasprintf("cannot write the system calls' roles: %s",
					     strerror(-r));
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	paths_bpf__destroy(p->skel);
	free(p);
	return r;
}

int probe_add_target(struct probe *p, pid_t tgid)
{
	__u32 key = tgid;
	__u8 one = 1;

	if (bpf_map__update_elem(p->skel->maps.targets, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY) < 0)
		return -errno;
	return 0;
}

int probe_follow_cgroup(struct probe *p, uint64_t cgroup_id)
{
	__u64 key = cgroup_id;
	__u8 one = 1;

	if (bpf_map__update_elem(p->skel->maps.target_cgroups, &key, sizeof(key), &one,
				 sizeof(one), BPF_ANY) < 0)
		return -errno; /* -E2BIG when full */
	if (!__atomic_exchange_n(&p->skel->bss->follow_cgroups, 1, __ATOMIC_SEQ_CST))
		probe_targets_changed(p);
	return 0;
}

void probe_targets_changed(struct probe *p)
{
	__atomic_add_fetch(&p->skel->bss->targets_gen, 1, __ATOMIC_SEQ_CST);
}

static int add_link(struct probe *p, struct bpf_link *l)
{
	if (!l)
		return -errno ?: -EINVAL;
	if (p->n_links >= PROBE_MAX_LINKS) {
		bpf_link__destroy(l);
		return -E2BIG;
	}
	p->links[p->n_links++] = l;
	return 0;
}

/* Attach prog to the trace event id, on every CPU. */
static int attach_trace_event(struct probe *p, struct bpf_program *prog, int id)
{
	struct bpf_link *l;
	int fd = tracefs_event_open(id), r;

	if (fd < 0)
		return fd;
	l = bpf_program__attach_perf_event(prog, fd);
	if (!l) {
		r = -errno ?: -EINVAL;
		close(fd);
		return r;
	}
	/* the link owns the perf event from here: destroying it closes the fd */
	return add_link(p, l);
}

/*
 * The calls' own enter and exit events, for each call of the table the
 * kernel has but those at an offset: the calls on a file get the program
 * that reads their first two arguments, the others the one that reads none
 * (bpf/syscalls.bpf.h).
 */
static int attach_call_events(struct probe *p, char **ret_err)
{
	const struct syscall_role *calls;
	const int *enter, *exit;
	size_t n, i;
	int r;

	calls = syscall_roles(&n);
	syscall_event_ids(&enter, &exit);
	for (i = 0; i < n; i++) {
		bool on_file = calls[i].role != ARGUS_SYS_FUTEX && calls[i].role != ARGUS_SYS_CREATE;
		const char *what = "sys_enter";

		/* the waits on files read their calls from the registers the calls saved */
		if (enter[i] < 0 || exit[i] < 0 || ARGUS_SYS_AT_SWITCH_ONLY(calls[i].role))
			continue;
		r = 0;
		if (p->call_enter)
			r = attach_trace_event(p,
					       on_file ? p->skel->progs.handle_call_enter_file
						       : p->skel->progs.handle_call_enter,
					       enter[i]);
		if (r == 0 && p->call_exit) {
			what = "sys_exit";
			r = attach_trace_event(p, p->skel->progs.handle_call_exit, exit[i]);
		}
		if (r < 0) {
			if (ret_err)
				*ret_err = xasprintf("tracepoint/syscalls/%s_%s: %s", what,
						     calls[i].name, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Attach slot i's functions: kprobe/kretprobe, or the fentry/fexit pairs from *pair on. */
static int attach_functions(struct probe *p, size_t i, unsigned *pair, char **ret_err)
{
	const struct probe_slot *s = &p->plan.slots[i];
	const struct hook_list *fns = &p->fns[i];
	size_t f;
	int r;

	for (f = 0; f < fns->n; f++) {
		const char *fn = fns->v[f].name;

		if (s->backend == BACKEND_KPROBE) {
			/* every function of the slot carries the slot as its cookie */
			LIBBPF_OPTS(bpf_kprobe_opts, ko, .bpf_cookie = i);
			LIBBPF_OPTS(bpf_kprobe_opts, kro, .bpf_cookie = i, .retprobe = true);

			r = add_link(p, bpf_program__attach_kprobe_opts(p->skel->progs.kprobe_entry,
									fn, &ko));
			if (!r)
				r = add_link(p, bpf_program__attach_kprobe_opts(
						    p->skel->progs.kretprobe_exit, fn, &kro));
		} else {
			struct bpf_program *fe, *fx;

			if (fentry_program(p->skel, *pair, false, &fe) < 0 ||
			    fentry_program(p->skel, *pair, true, &fx) < 0)
				return -E2BIG;
			(*pair)++;
			r = add_link(p, bpf_program__attach(fe));
			if (!r)
				r = add_link(p, bpf_program__attach(fx));
		}
		if (r < 0) {
			if (ret_err)
				*ret_err = xasprintf("%s %s: %s", backend_name(s->backend), fn,
						     strerror(-r));
			return r;
		}
	}
	return 0;
}

/*
 * Make the pass over every task that the window's edge needs (bpf/edges.bpf.h):
 * the program runs as its iterator is read, and prints nothing.
 */
static int window_edge(struct probe *p, enum argus_edge edge)
{
	_cleanup_close_ int fd = -1;
	uint64_t start = now_mono_ns();
	char buf[64];
	ssize_t n;
	int r;

	p->skel->bss->window_edge = edge;
	fd = bpf_iter_create(bpf_link__fd(p->edges));
	if (fd < 0)
		n = -1;
	else
		do
			n = read(fd, buf, sizeof(buf));
		while (n > 0 || (n < 0 && errno == EINTR));
	if (n == 0) {
		uint64_t took = now_mono_ns() - start;

		if (took > p->edge_pass_ns)
			p->edge_pass_ns = took;
		p->edge_threads[edge == ARGUS_EDGE_CLOSE] = p->skel->bss->edge_threads;
		p->skel->bss->edge_threads = 0;
		return 0;
	}
	r = -errno;
	log_warning_errno(r, "the waits in calls across the window's %s go uncounted: %m",
			  edge == ARGUS_EDGE_OPEN ? "start" : "end");
	return r;
}

/* The task iterator of the window's edges, when loaded: without it, they go uncounted. */
static void attach_edges(struct probe *p)
{
	struct bpf_program *prog = p->skel->progs.window_edges;
	int r;

	if (!bpf_program__autoload(prog))
		return;
	p->edges = bpf_program__attach_iter(prog, NULL);
	if (!p->edges) {
		r = -errno;
		log_warning_errno(r, "the waits in calls across a window's edges go uncounted: "
				     "attaching the task iterator: %m");
		return;
	}
	p->edges_counted = window_edge(p, ARGUS_EDGE_OPEN) == 0;
}

int probe_attach(struct probe *p, char **ret_err)
{
	struct bpf_program *prog;
	unsigned pair = 0;
	size_t i;
	int r;

	/* tasks the target starts from now on count their lives into child_thread_ns */
	p->skel->bss->born_after_ns = now_mono_ns();
	/* tracepoint programs: everything autoloaded that is tp_btf */
	bpf_object__for_each_program (prog, p->skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (bpf_program__type(prog) != BPF_PROG_TYPE_TRACING ||
		    bpf_program__expected_attach_type(prog) != BPF_TRACE_RAW_TP)
			continue;
		r = add_link(p, bpf_program__attach(prog));
		if (r < 0) {
			if (ret_err)
				*ret_err = xasprintf("%s: %s", bpf_program__section_name(prog),
						     strerror(-r));
			goto fail;
		}
	}
	if (p->call_enter || p->call_exit) {
		r = attach_call_events(p, ret_err);
		if (r < 0)
			goto fail;
	}
	/* the fault classifier's stand-ins for tracepoints this kernel lacks or cannot use */
	for (i = 0; i < p->n_stand_ins; i++) {
		r = add_link(p, bpf_program__attach(p->stand_ins[i]));
		if (r < 0) {
			if (ret_err)
				*ret_err = xasprintf("%s: %s",
						     bpf_program__section_name(p->stand_ins[i]),
						     strerror(-r));
			goto fail;
		}
	}
	for (i = 0; i < p->plan.n_slots; i++) {
		const struct probe_slot *s = &p->plan.slots[i];

		if (s->backend != BACKEND_KPROBE && s->backend != BACKEND_FENTRY)
			continue;
		r = attach_functions(p, i, &pair, ret_err);
		if (r < 0)
			goto fail;
	}
	/* last: the waits already under way when the window starts */
	attach_edges(p);
	return 0;
fail:
	probe_detach(p);
	return r;
}

void probe_detach(struct probe *p)
{
	size_t i;

	if (!p)
		return;
	/* first: the waits still under way when the window ends */
	if (p->edges) {
		if (window_edge(p, ARGUS_EDGE_CLOSE) < 0)
			p->edges_counted = false;
		bpf_link__destroy(p->edges);
		p->edges = NULL;
	}
	for (i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	p->n_links = 0;
}

/* ---- reading ---- */

int probe_sum_counters(struct bpf_map *counters, unsigned n, struct argus_counter *ret)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	_cleanup_free_ struct argus_counter *vals = NULL;
	__u32 key;

	if (ncpu <= 0)
		return ncpu ?: -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (key = 0; key < n; key++) {
		struct argus_counter sum = {};

		if (bpf_map__lookup_elem(counters, &key, sizeof(key), vals, sizeof(*vals) * ncpu,
					 0) < 0)
			return -errno;
		for (c = 0; c < ncpu; c++) {
			sum.count += vals[c].count;
			sum.time_ns += vals[c].time_ns;
		}
		ret[key] = sum;
	}
	return 0;
}

void probe_sum_run_stats(struct bpf_object *obj, struct probe_counts *c)
{
	struct bpf_program *prog;

	bpf_object__for_each_program (prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			continue;
		c->run_cnt += info.run_cnt;
		c->run_time_ns += info.run_time_ns;
	}
}

/*
 * A task's name is whatever the task set (prctl PR_SET_NAME): it reaches
 * JSON and HTML only as printable ASCII.
 */
static void printable_copy(char *dst, const char *src, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = '\0';
}

static void comm_copy(char dst[16], const char src[16])
{
	printable_copy(dst, src, 16);
}

/* Most wait time first. */
static int task_cmp(const void *a, const void *b)
{
	const struct probe_task *x = a, *y = b;

	return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : 0;
}

/* Insert t into top (*n of max), kept sorted by wait time and cut at max. */
static void task_insert(struct probe_task *top, size_t *n, size_t max, const struct probe_task *t)
{
	size_t i = *n;

	if (i == max) {
		if (t->wait_ns <= top[i - 1].wait_ns)
			return;
		i--;
	} else
		(*n)++;
	for (; i > 0 && top[i - 1].wait_ns < t->wait_ns; i--)
		top[i] = top[i - 1];
	top[i] = *t;
}

/*
 * Add src's waits to dst's. Their time before (wakers): of one class, the
 * sum; of two, the larger, since an entry names one.
 */
static void task_merge(struct probe_task *dst, const struct probe_task *src)
{
	dst->waits += src->waits;
	dst->wait_ns += src->wait_ns;
	if (dst->then_cls == src->then_cls)
		dst->then_ns += src->then_ns;
	else if (src->then_ns > dst->then_ns) {
		dst->then_cls = src->then_cls;
		dst->then_ns = src->then_ns;
	}
}

/*
 * The tasks v (n of them, one per process) by name, own and class, into
 * top (*ret_n of max): sorted by wait time first, so that an entry keeps
 * the pid of its process with the most.
 */
static void tasks_by_name(struct probe_task *v, size_t n, struct probe_task *top, size_t *ret_n,
			  size_t max)
{
	size_t i, j, groups = 0;

	qsort(v, n, sizeof(v[0]), task_cmp);
	for (i = 0; i < n; i++) {
		for (j = 0; j < groups && !(v[j].own == v[i].own && v[j].cls == v[i].cls &&
					    strcmp(v[j].comm, v[i].comm) == 0 &&
					    strcmp(v[j].work, v[i].work) == 0);
		     j++)
			;
		if (j == groups) {
			v[groups++] = v[i];
			continue;
		}
		v[j].processes++;
		task_merge(&v[j], &v[i]);
	}
	for (i = 0; i < groups; i++)
		task_insert(top, ret_n, max, &v[i]);
}

/* One process's entry of a holders' or wakers' map, counted into total and kept in all (max). */
static void task_add(struct probe_task *all, size_t *n, size_t max, struct probe_task_totals *total,
		     const struct probe_task *t)
{
	total->waits += t->waits;
	total->wait_ns += t->wait_ns;
	if (*n < max)
		all[(*n)++] = *t;
}

static int read_rq_holders(struct bpf_map *m, struct probe_counts *c)
{
	struct argus_rq_holder_key key, next;
	const struct argus_rq_holder_key *prev = NULL;
	struct probe_task all[ARGUS_RQ_HOLDERS];
	uint64_t work[ARGUS_RQ_HOLDERS];
	char names[ARGUS_RQ_HOLDERS][KALLSYMS_NAME_MAX];
	struct argus_counter v;
	size_t n = 0, i;
	int r;

	while ((r = bpf_map__get_next_key(m, prev, &next, sizeof(next))) == 0) {
		struct probe_task h = {
		    .cls = ARGUS_CLS_RUNQ_WAIT, .processes = 1, .then_cls = ARGUS_CLS_MAX};

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(m, &key, sizeof(key), &v, sizeof(v), 0) < 0)
			continue; /* gone meanwhile: nothing to count */
		h.tgid = key.tgid;
		h.own = key.own != 0;
		comm_copy(h.comm, key.comm);
		h.waits = v.count;
		h.wait_ns = v.time_ns;
		if (n < ARRAY_SIZE(work))
			work[n] = key.work;
		task_add(all, &n, ARRAY_SIZE(all), &c->rq_holders_total, &h);
	}
	if (r != -ENOENT)
		return r;
	/* a worker by the work it ran: unnamed where the kernel's symbols cannot be read */
	if (kallsyms_names(work, n, names) < 0)
		log_warning("runqueue holders: /proc/kallsyms unreadable, workers' work not named");
	for (i = 0; i < n; i++)
		printable_copy(all[i].work, names[i], sizeof(all[i].work));
	tasks_by_name(all, n, c->rq_holders, &c->n_rq_holders, PROBE_RQ_HOLDERS_TOP);
	return 0;
}

static int read_wakers(struct bpf_map *m, struct probe_counts *c)
{
	struct argus_waker_key key, next;
	const struct argus_waker_key *prev = NULL;
	struct probe_task all[ARGUS_WAKERS];
	struct argus_waker_value v;
	size_t n = 0, i;
	int r;

	while ((r = bpf_map__get_next_key(m, prev, &next, sizeof(next))) == 0) {
		struct probe_task w = {.processes = 1};

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(m, &key, sizeof(key), &v, sizeof(v), 0) < 0 ||
		    key.cls >= ARGUS_CLS_MAX)
			continue;
		w.tgid = key.tgid;
		w.own = key.own != 0;
		w.cls = key.cls;
		comm_copy(w.comm, key.comm);
		w.waits = v.count;
		w.wait_ns = v.time_ns;
		/* an own waker's next link, when it spent time in a class before */
		w.then_cls = key.then_cls < ARGUS_CLS_MAX && v.then_ns ? key.then_cls : ARGUS_CLS_MAX;
		w.then_ns = w.then_cls < ARGUS_CLS_MAX ? v.then_ns : 0;
		/* the map keeps a process apart per class of its time before: one entry here */
		for (i = 0; i < n && !(all[i].tgid == w.tgid && all[i].own == w.own &&
				       all[i].cls == w.cls && strcmp(all[i].comm, w.comm) == 0);
		     i++)
			;
		if (i < n) {
			c->wakers_total.waits += w.waits;
			c->wakers_total.wait_ns += w.wait_ns;
			task_merge(&all[i], &w);
			continue;
		}
		task_add(all, &n, ARRAY_SIZE(all), &c->wakers_total, &w);
	}
	tasks_by_name(all, n, c->wakers, &c->n_wakers, PROBE_WAKERS_TOP);
	return r == -ENOENT ? 0 : r;
}

int probe_read(struct probe *p, struct probe_counts *ret)
{
	struct argus_counter all[ARGUS_COUNTER_ENTRIES];
	struct probe_counts out = {};
	int r;

	r = probe_sum_counters(p->skel->maps.counters, ARGUS_COUNTER_ENTRIES, all);
	if (r < 0)
		return r;
	memcpy(out.slot, all, sizeof(out.slot));
	memcpy(out.cls, all + ARGUS_CLASS_SLOT_BASE, sizeof(out.cls));
	out.unclassified_faults = p->skel->bss->unclassified_faults;
	out.readahead_faults = p->skel->bss->readahead_faults;
	out.readahead_ns = p->skel->bss->readahead_ns;
	out.faults_overlapped = p->skel->bss->faults_overlapped;
	out.state_misses = p->skel->bss->thread_map_full;
	out.child_thread_ns = p->skel->bss->child_thread_ns;
	out.edges = p->edges_counted;
	out.edge_opened = p->skel->bss->edge_opened;
	out.edge_closed = p->skel->bss->edge_closed;
	out.edge_pass_ns = p->edge_pass_ns;
	out.edge_threads_start = p->edge_threads[0];
	out.edge_threads_end = p->edge_threads[1];
	out.rq_holders_total.unkept = p->skel->bss->rq_holders_unkept;
	out.rq_holders_total.unkept_ns = p->skel->bss->rq_holders_unkept_ns;
	out.wakers_total.unkept = p->skel->bss->wakers_unkept;
	out.wakers_total.unkept_ns = p->skel->bss->wakers_unkept_ns;
	r = read_rq_holders(p->skel->maps.runq_holders, &out);
	if (r < 0)
		log_warning_errno(r, "reading the runqueue holders: %m");
	r = read_wakers(p->skel->maps.wakers, &out);
	if (r < 0)
		log_warning_errno(r, "reading the wakers: %m");
	probe_sum_run_stats(p->skel->obj, &out);
	*ret = out;
	return 0;
}

void probe_free(struct probe *p)
{
	if (!p)
		return;
	probe_detach(p);
	paths_bpf__destroy(p->skel);
	free(p);
}

int probe_stats_enable(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}
