// SPDX-License-Identifier: MIT
/*
 * Loader of the multiplexed probe: plan -> open -> rodata and autoload ->
 * load -> attach -> read -> free. See probe.h.
 */
#include "daemon/probe.h"
#include "daemon/log.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "paths.skel.h"

#define VERIFIER_LOG_MAX (256 * 1024)
#define MAX_LINKS 96

/* Per class, from the one table in bpf/paths.h: its name, companions, and the class counted with it. */
static const struct {
	const char *name;
	enum argus_companions companions;
	enum argus_class counted_with;
} classes[ARGUS_CLS_MAX] = {
#define CLASS_ROW(id, nm, comp, with)                                                              \
	[ARGUS_CLS_##id] = {#nm, ARGUS_COMPANIONS_##comp, ARGUS_CLS_##with},
    ARGUS_CLASSES(CLASS_ROW)
#undef CLASS_ROW
};

const char *probe_class_name(unsigned cls)
{
	return cls < ARGUS_CLS_MAX ? classes[cls].name : NULL;
}

/*
 * The companion tracepoints of each group. Classes whose time is thread
 * time inside a page fault need what bounds a fault and takes nested paths
 * out of it, whatever level is probed: the same metric must mean the same
 * thing in the reference and at every level.
 */
static const char *const fault_companions[] = {
	"page_fault_user",
	"rss_stat",
	"mm_page_alloc",
	"mm_filemap_fault",
	"mm_filemap_map_pages",
	"mm_filemap_add_to_page_cache",
	"tlb_flush",
	"sys_enter",
	"mm_vmscan_direct_reclaim_begin",
	"mm_vmscan_direct_reclaim_end",
	"mm_compaction_begin",
	"mm_compaction_end",
	"mmap_lock_start_locking",
	"mmap_lock_acquire_returned",
};

/*
 * Block I/O time is iowait thread time, from switching out to the wakeup
 * (both always attached): it needs every request phase.
 */
static const char *const block_companions[] = { "block_rq_insert", "block_rq_issue",
						"block_rq_complete" };

/* Creation time is the parent's time in clone/fork/clone3. */
static const char *const create_companions[] = { "sys_enter", "sys_exit" };

/* Who ends a futex wait: one of the target's own tasks, or another (a timer among them). */
static const char *const futex_companions[] = { "sched_waking", "hrtimer_expire_entry",
						"hrtimer_expire_exit" };

static const struct {
	const char *const *tracepoints;
	size_t n;
} companion_groups[ARGUS_COMPANIONS_MAX] = {
	[ARGUS_COMPANIONS_FAULT] = { fault_companions, ARRAY_SIZE(fault_companions) },
	[ARGUS_COMPANIONS_BLOCK] = { block_companions, ARRAY_SIZE(block_companions) },
	[ARGUS_COMPANIONS_CREATE] = { create_companions, ARRAY_SIZE(create_companions) },
	[ARGUS_COMPANIONS_FUTEX] = { futex_companions, ARRAY_SIZE(futex_companions) },
};

/*
 * Always attached: following the target's processes, and its runqueue
 * waits, which every path's time leaves out (they are runqueue time), so
 * that a metric means the same at every level.
 */
static const char *const always[] = { "sched_process_fork", "sched_process_exit", "sched_switch",
				      "sched_wakeup", "sched_wakeup_new" };

unsigned probe_counted_with(unsigned cls_mask)
{
	unsigned also = 0, c;

	for (c = 0; c < ARGUS_CLS_MAX; c++)
		if ((cls_mask & (1u << c)) && classes[c].counted_with < ARGUS_CLS_MAX)
			also |= 1u << classes[c].counted_with;
	return cls_mask | also;
}

size_t probe_companions(unsigned cls_mask, const char **ret, size_t max)
{
	bool wanted[ARGUS_COMPANIONS_MAX] = {};
	size_t n = 0, i;
	unsigned c, g;

	for (i = 0; i < ARRAY_SIZE(always) && n < max; i++)
		ret[n++] = always[i];
	for (c = 0; c < ARGUS_CLS_MAX; c++)
		if (cls_mask & (1u << c))
			wanted[classes[c].companions] = true;
	/* in group order, each group once, as a plan lists its tracepoints */
	for (g = ARGUS_COMPANIONS_NONE + 1; g < ARGUS_COMPANIONS_MAX; g++)
		for (i = 0; wanted[g] && i < companion_groups[g].n && n < max; i++)
			ret[n++] = companion_groups[g].tracepoints[i];
	return n;
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

/* ---- libbpf messages ---- */

static __thread char *capture_buf;
static __thread size_t capture_len;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	if (capture_buf && capture_len + n + 2 < VERIFIER_LOG_MAX) {
		memcpy(capture_buf + capture_len, line, n);
		capture_len += n;
		capture_buf[capture_len++] = '\n';
		capture_buf[capture_len] = 0;
	}
	if (level == LIBBPF_WARN && !capture_buf)
		log_warning("libbpf: %s", line);
	else
		log_debug("libbpf: %s", line);
	return 0;
}

void probe_setup_libbpf_logging(void)
{
	libbpf_set_print(libbpf_print);
}

/* ---- plans ---- */

static int split_hooks(const char *hook, char names[][64], size_t max, size_t *ret_n)
{
	size_t n = 0;
	const char *p = hook;

	while (*p) {
		const char *e = strchr(p, '+');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (n >= max || len == 0 || len >= 64)
			return -EINVAL;
		memcpy(names[n], p, len);
		names[n][len] = 0;
		n++;
		if (!e)
			break;
		p = e + 1;
	}
	*ret_n = n;
	return 0;
}

int probe_plan_for(const struct tree *t, const int *nodes, size_t n, struct probe_plan *ret)
{
	struct probe_plan plan = {};
	unsigned fn_hooks = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tree_node *node = &t->nodes[nodes[i]];
		struct probe_slot *s;

		if (node->backend == BACKEND_NONE || !node->hook)
			continue;
		if (plan.n_slots >= ARGUS_MAX_SLOTS)
			return -E2BIG;
		if (node->backend == BACKEND_FENTRY) {
			char parts[ARGUS_FENTRY_PAIRS + 1][64];
			size_t n_parts;

			/* an inner node's hook is its children's functions joined by '+' */
			if (split_hooks(node->hook, parts, ARGUS_FENTRY_PAIRS + 1, &n_parts) < 0)
				return -E2BIG;
			fn_hooks += n_parts;
			if (fn_hooks > ARGUS_FENTRY_PAIRS)
				return -E2BIG;
		}
		s = &plan.slots[plan.n_slots++];
		s->node = nodes[i];
		s->backend = node->backend;
		s->hook = node->hook;
		s->classes = node->backend == BACKEND_TRACEPOINT ? node->classes : 0;
	}
	*ret = plan;
	return 0;
}

/* The tracepoints a plan needs, as a bit set over the skeleton's programs. */
struct tp_set {
	char names[MAX_LINKS][64];
	size_t n;
};

/* Add name once; a name that does not fit, or one too many, is -E2BIG (never cut short). */
static int tp_add(struct tp_set *s, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return 0;
	if (s->n >= MAX_LINKS || len >= sizeof(s->names[0]))
		return -E2BIG;
	memcpy(s->names[s->n++], name, len + 1);
	return 0;
}

static int plan_tracepoints(const struct probe_plan *plan, struct tp_set *ret)
{
	const char *comp[MAX_LINKS];
	unsigned classes = 0;
	size_t i, j, n;

	ret->n = 0;
	for (i = 0; i < plan->n_slots; i++) {
		char names[16][64];
		int r;

		if (plan->slots[i].backend != BACKEND_TRACEPOINT)
			continue;
		r = split_hooks(plan->slots[i].hook, names, 16, &n);
		if (r < 0)
			return r;
		for (j = 0; j < n; j++) {
			r = tp_add(ret, names[j]);
			if (r < 0)
				return r;
		}
		classes |= plan->slots[i].classes;
	}
	n = probe_companions(classes, comp, MAX_LINKS);
	for (i = 0; i < n; i++) {
		int r = tp_add(ret, comp[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

json_t *probe_plan_describe(const struct tree *t, const struct probe_plan *plan)
{
	json_t *slots = json_array(), *progs = json_array();
	struct tp_set tps;
	size_t i;

	for (i = 0; i < plan->n_slots; i++) {
		const struct probe_slot *s = &plan->slots[i];
		json_t *cls = json_array();
		unsigned c;

		for (c = 0; c < ARGUS_CLS_MAX; c++)
			if (s->classes & (1u << c))
				json_array_append_new(cls, json_string(classes[c].name));
		json_array_append_new(slots, json_pack("{s:i,s:s,s:s,s:s,s:o}", "slot", (int)i, "node",
						       t->nodes[s->node].id, "backend",
						       backend_name(s->backend), "hook", s->hook,
						       "classes", cls));
		if (s->backend == BACKEND_KPROBE)
			json_array_append_new(progs, json_sprintf("kprobe+kretprobe/%s", s->hook));
		else if (s->backend == BACKEND_FENTRY)
			json_array_append_new(progs, json_sprintf("fentry+fexit/%s", s->hook));
	}
	if (plan_tracepoints(plan, &tps) == 0)
		for (i = 0; i < tps.n; i++)
			json_array_append_new(progs, json_sprintf("tp_btf/%s", tps.names[i]));
	return json_pack("{s:s,s:o,s:o}", "object", "paths.bpf.o", "slots", slots, "programs",
			 progs);
}

/* ---- loading ---- */

struct probe {
	struct paths_bpf *skel;
	struct probe_plan plan;
	struct bpf_link *links[MAX_LINKS];
	size_t n_links;
};

static struct bpf_program *tp_program(struct paths_bpf *skel, const char *tp)
{
	char name[128];

	if (snprintf(name, sizeof(name), "handle_%s", tp) >= (int)sizeof(name))
		return NULL;
	return bpf_object__find_program_by_name(skel->obj, name);
}

static void autoload_none(struct paths_bpf *skel)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
}

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

/* Open the object with a verifier-log buffer; autoload nothing yet. */
static int open_skel(char *logbuf, size_t loglen, struct paths_bpf **ret)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .kernel_log_buf = logbuf,
		    .kernel_log_size = loglen, .kernel_log_level = 0);
	struct paths_bpf *skel;

	skel = paths_bpf__open_opts(logbuf ? &opts : NULL);
	if (!skel)
		return -errno ?: -EINVAL;
	autoload_none(skel);
	*ret = skel;
	return 0;
}

int probe_load(const struct tree *t, const struct probe_plan *plan, struct probe **ret,
	       char **ret_log)
{
	_cleanup_free_ char *logbuf = NULL;
	struct probe *p;
	struct tp_set tps;
	unsigned pair = 0, c;
	size_t i;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->plan = *plan;
	logbuf = calloc(1, VERIFIER_LOG_MAX);
	if (!logbuf) {
		free(p);
		return -ENOMEM;
	}
	r = open_skel(logbuf, VERIFIER_LOG_MAX, &p->skel);
	if (r < 0) {
		free(p);
		return r;
	}

	r = probe_pidns(&p->skel->rodata->pidns_inum);
	if (r < 0) {
		log_error_errno(r, "probe: cannot tell argusd's PID namespace: %m");
		goto fail;
	}
	for (c = 0; c < ARGUS_CLS_MAX; c++)
		p->skel->rodata->class_slot[c] = -1;
	for (i = 0; i < ARGUS_FENTRY_PAIRS; i++)
		p->skel->rodata->fentry_slot[i] = -1;

	r = plan_tracepoints(plan, &tps);
	if (r < 0)
		goto fail;
	for (i = 0; i < tps.n; i++) {
		struct bpf_program *prog = tp_program(p->skel, tps.names[i]);

		if (!prog) {
			r = -ENOENT;
			log_error("probe: no program for tracepoint %s", tps.names[i]);
			goto fail;
		}
		/*
		 * A companion the kernel lacks (mm_filemap_fault and
		 * mm_filemap_map_pages are newer than 6.1) would fail the whole
		 * object: left out, and said, since what it marks goes unseen.
		 * A node's own hooks were checked by resolution.
		 */
		if (libbpf_find_vmlinux_btf_id(tps.names[i], BPF_TRACE_RAW_TP) < 0) {
			log_warning("probe: this kernel has no tracepoint %s: left out, the events "
				    "it marks are not seen",
				    tps.names[i]);
			continue;
		}
		bpf_program__set_autoload(prog, true);
	}
	for (i = 0; i < plan->n_slots; i++) {
		const struct probe_slot *s = &plan->slots[i];

		switch (s->backend) {
		case BACKEND_TRACEPOINT:
			for (c = 0; c < ARGUS_CLS_MAX; c++)
				if (s->classes & (1u << c))
					p->skel->rodata->class_slot[c] = i;
			break;
		case BACKEND_KPROBE:
			bpf_program__set_autoload(p->skel->progs.kprobe_entry, true);
			bpf_program__set_autoload(p->skel->progs.kretprobe_exit, true);
			break;
		case BACKEND_FENTRY: {
			char fns[ARGUS_FENTRY_PAIRS][64];
			size_t n_fns, f;

			r = split_hooks(s->hook, fns, ARGUS_FENTRY_PAIRS, &n_fns);
			if (r < 0)
				goto fail;
			/* one fentry/fexit pair per function, all counting into this slot */
			for (f = 0; f < n_fns; f++) {
				struct bpf_program *fe, *fx;

				if (fentry_program(p->skel, pair, false, &fe) < 0 ||
				    fentry_program(p->skel, pair, true, &fx) < 0) {
					r = -E2BIG;
					goto fail;
				}
				bpf_program__set_autoload(fe, true);
				bpf_program__set_autoload(fx, true);
				r = bpf_program__set_attach_target(fe, 0, fns[f]);
				if (!r)
					r = bpf_program__set_attach_target(fx, 0, fns[f]);
				if (r < 0)
					goto fail;
				p->skel->rodata->fentry_slot[pair++] = i;
			}
			break;
		}
		default:
			break;
		}
	}

	r = paths_bpf__load(p->skel);
	if (r < 0) {
		r = -errno ?: r;
		if (ret_log && logbuf[0])
			*ret_log = TAKE_PTR(logbuf);
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

static int add_link(struct probe *p, struct bpf_link *l)
{
	if (!l)
		return -errno ?: -EINVAL;
	if (p->n_links >= MAX_LINKS) {
		bpf_link__destroy(l);
		return -E2BIG;
	}
	p->links[p->n_links++] = l;
	return 0;
}

int probe_attach(struct probe *p)
{
	struct bpf_program *prog;
	unsigned pair = 0;
	size_t i;
	int r;

	/* tasks the target starts from now on count their lives into child_thread_ns */
	p->skel->bss->born_after_ns = now_mono_ns();
	/* tracepoint programs: everything autoloaded that is tp_btf */
	bpf_object__for_each_program(prog, p->skel->obj)
	{
		if (!bpf_program__autoload(prog))
			continue;
		if (bpf_program__type(prog) != BPF_PROG_TYPE_TRACING ||
		    bpf_program__expected_attach_type(prog) != BPF_TRACE_RAW_TP)
			continue;
		r = add_link(p, bpf_program__attach(prog));
		if (r < 0) {
			log_error_errno(r, "probe: attaching %s: %m", bpf_program__name(prog));
			goto fail;
		}
	}
	for (i = 0; i < p->plan.n_slots; i++) {
		const struct probe_slot *s = &p->plan.slots[i];

		char fns[16][64];
		size_t n_fns = 0, f;

		if (s->backend != BACKEND_KPROBE && s->backend != BACKEND_FENTRY)
			continue;
		r = split_hooks(s->hook, fns, 16, &n_fns);
		if (r < 0)
			goto fail;
		for (f = 0; f < n_fns; f++) {
			if (s->backend == BACKEND_KPROBE) {
				/* every function of the slot carries the slot as its cookie */
				LIBBPF_OPTS(bpf_kprobe_opts, ko, .bpf_cookie = i);
				LIBBPF_OPTS(bpf_kprobe_opts, kro, .bpf_cookie = i, .retprobe = true);

				r = add_link(p, bpf_program__attach_kprobe_opts(
							p->skel->progs.kprobe_entry, fns[f], &ko));
				if (!r)
					r = add_link(p, bpf_program__attach_kprobe_opts(
								p->skel->progs.kretprobe_exit, fns[f],
								&kro));
			} else {
				struct bpf_program *fe, *fx;

				if (fentry_program(p->skel, pair, false, &fe) < 0 ||
				    fentry_program(p->skel, pair, true, &fx) < 0) {
					r = -E2BIG;
					goto fail;
				}
				pair++;
				r = add_link(p, bpf_program__attach(fe));
				if (!r)
					r = add_link(p, bpf_program__attach(fx));
			}
			if (r < 0) {
				log_error_errno(r, "probe: %s %s: %m", backend_name(s->backend), fns[f]);
				goto fail;
			}
		}
	}
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
	for (i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	p->n_links = 0;
}

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

		if (bpf_map__lookup_elem(counters, &key, sizeof(key), vals, sizeof(*vals) * ncpu, 0) <
		    0)
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

	bpf_object__for_each_program(prog, obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			continue;
		c->run_cnt += info.run_cnt;
		c->run_time_ns += info.run_time_ns;
	}
}

/* Insert h into c's holders, kept sorted by wait time and cut at PROBE_RQ_HOLDERS_TOP. */
static void holder_insert(struct probe_counts *c, const struct probe_rq_holder *h)
{
	size_t i = c->n_rq_holders;

	if (i == PROBE_RQ_HOLDERS_TOP) {
		if (h->wait_ns <= c->rq_holders[i - 1].wait_ns)
			return;
		i--;
	} else
		c->n_rq_holders++;
	for (; i > 0 && c->rq_holders[i - 1].wait_ns < h->wait_ns; i--)
		c->rq_holders[i] = c->rq_holders[i - 1];
	c->rq_holders[i] = *h;
}

/*
 * A task's name is whatever the task set (prctl PR_SET_NAME): it reaches
 * JSON and HTML only as printable ASCII.
 */
static void comm_copy(char dst[16], const char src[16])
{
	size_t i;

	for (i = 0; i < 15 && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = '\0';
}

static int read_rq_holders(struct bpf_map *m, struct probe_counts *c)
{
	struct argus_rq_holder_key key, next;
	const struct argus_rq_holder_key *prev = NULL;
	struct argus_counter v;
	int r;

	while ((r = bpf_map__get_next_key(m, prev, &next, sizeof(next))) == 0) {
		struct probe_rq_holder h = {};

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(m, &key, sizeof(key), &v, sizeof(v), 0) < 0)
			continue; /* gone meanwhile: nothing to count */
		h.tgid = key.tgid;
		h.own = key.own != 0;
		comm_copy(h.comm, key.comm);
		h.waits = v.count;
		h.wait_ns = v.time_ns;
		holder_insert(c, &h);
	}
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
	out.child_thread_ns = p->skel->bss->child_thread_ns;
	r = read_rq_holders(p->skel->maps.runq_holders, &out);
	if (r < 0)
		log_warning_errno(r, "reading the runqueue holders: %m");
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

/* ---- resolution: try one hook for real ---- */

/* Why a hook was refused; resolution prefixes the backend and hook. */
static char *reason_errno(const char *what, int err)
{
	return xasprintf("%s: %s", what, strerror(err < 0 ? -err : err));
}

static int try_tracepoints(const char *hook, char **ret_reason)
{
	struct paths_bpf *skel = NULL;
	struct bpf_link *links[16] = {};
	char names[16][64];
	size_t n = 0, i;
	int r;

	r = split_hooks(hook, names, 16, &n);
	if (r < 0) {
		*ret_reason = xasprintf("malformed hook");
		return r;
	}
	r = open_skel(NULL, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	for (i = 0; i < n; i++) {
		struct bpf_program *prog = tp_program(skel, names[i]);

		if (!prog) {
			*ret_reason = xasprintf("%s: the probe has no classifier for it", names[i]);
			r = -ENOENT;
			goto out;
		}
		bpf_program__set_autoload(prog, true);
	}
	r = paths_bpf__load(skel);
	if (r < 0) {
		r = -errno ?: r;
		*ret_reason = reason_errno("load", r);
		goto out;
	}
	for (i = 0; i < n; i++) {
		links[i] = bpf_program__attach(tp_program(skel, names[i]));
		if (!links[i]) {
			r = -errno ?: -EINVAL;
			*ret_reason = reason_errno("attach", r);
			goto out;
		}
	}
	r = 0;
out:
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	paths_bpf__destroy(skel);
	return r;
}

static int try_kprobe(const char *hook, char **ret_reason)
{
	struct paths_bpf *skel = NULL;
	struct bpf_link *l;
	int r;

	/* the attach error is the authority; the PMU check below only words the reason */
	r = open_skel(NULL, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	bpf_program__set_autoload(skel->progs.kprobe_entry, true);
	r = paths_bpf__load(skel);
	if (r < 0) {
		r = -errno ?: r;
		*ret_reason = reason_errno("load", r);
		goto out;
	}
	l = bpf_program__attach_kprobe(skel->progs.kprobe_entry, false, hook);
	if (!l) {
		r = -errno ?: -EINVAL;
		if (access("/sys/bus/event_source/devices/kprobe", F_OK) < 0)
			*ret_reason = xasprintf("attach refused (%s): this kernel has no kprobe "
						"PMU (CONFIG_KPROBES off?)",
						strerror(-r));
		else
			*ret_reason = reason_errno("attach", r);
		goto out;
	}
	bpf_link__destroy(l);
	r = 0;
out:
	paths_bpf__destroy(skel);
	return r;
}

/*
 * Is there a BTF function of that name? Asked before set_attach_target: when
 * that fails, libbpf 1.1 keeps the kernel BTF it loaded until a load that
 * never comes (it frees it in load, not in close). The kernel's BTF is
 * parsed once per resolution when the caller gives a cache.
 */
static int kernel_has_func(struct probe_resolver *cache, const char *name)
{
	struct btf *own = NULL, *btf;
	int id;

	if (cache && !cache->vmlinux)
		cache->vmlinux = btf__load_vmlinux_btf();
	btf = cache ? cache->vmlinux : (own = btf__load_vmlinux_btf());
	if (!btf)
		return -errno ?: -ENOENT;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	btf__free(own);
	return id > 0 ? 0 : -ENOENT;
}

void probe_resolver_clear(struct probe_resolver *r)
{
	if (!r)
		return;
	btf__free(r->vmlinux);
	r->vmlinux = NULL;
}

static int try_fentry(struct probe_resolver *cache, const char *hook, char **ret_reason)
{
	struct paths_bpf *skel = NULL;
	struct bpf_program *fe;
	struct bpf_link *l;
	int r;

	r = kernel_has_func(cache, hook);
	if (r < 0) {
		*ret_reason = xasprintf("no such function in the kernel's BTF");
		return r;
	}
	r = open_skel(NULL, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	fe = skel->progs.fentry_0;
	bpf_program__set_autoload(fe, true);
	r = bpf_program__set_attach_target(fe, 0, hook);
	if (r < 0) {
		*ret_reason = reason_errno("no such function in BTF", r);
		goto out;
	}
	r = paths_bpf__load(skel);
	if (r < 0) {
		r = -errno ?: r;
		*ret_reason = reason_errno("load refused", r);
		goto out;
	}
	l = bpf_program__attach(fe);
	if (!l) {
		r = -errno ?: -EINVAL;
		*ret_reason = reason_errno("attach", r);
		goto out;
	}
	bpf_link__destroy(l);
	r = 0;
out:
	paths_bpf__destroy(skel);
	return r;
}

int probe_try_hook(void *userdata, enum backend b, const char *hook, char **ret_reason)
{
	_cleanup_free_ char *buf = calloc(1, VERIFIER_LOG_MAX);
	int r;

	/* refusals are expected here: libbpf's complaints go to debug, the reason says why */
	capture_buf = buf;
	capture_len = 0;
	switch (b) {
	case BACKEND_FENTRY:
		r = try_fentry(userdata, hook, ret_reason);
		break;
	case BACKEND_KPROBE:
		r = try_kprobe(hook, ret_reason);
		break;
	case BACKEND_TRACEPOINT:
		r = try_tracepoints(hook, ret_reason);
		break;
	default:
		*ret_reason = xasprintf("unknown backend");
		r = -EINVAL;
	}
	capture_buf = NULL;
	return r;
}
