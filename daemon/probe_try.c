// SPDX-License-Identifier: MIT
/*
 * Resolution's trials: one hook, for real, on this kernel. Each trial opens
 * its own copy of the multiplexed object, autoloads the one program the
 * backend needs, loads, attaches, and releases it all; the reason for a
 * refusal comes from the step that failed. See probe_try.h.
 */
#include "daemon/probe_try.h"
#include "daemon/bpf_log.h"
#include "daemon/probe_skel.h"
#include "daemon/util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* Why a hook was refused; resolution prefixes the backend and hook. */
static char *reason_errno(const char *what, int err)
{
	return xasprintf("%s: %s", what, strerror(err < 0 ? -err : err));
}

/*
 * Load the object and attach prog (bpf_program__attach), then let go of the
 * link; the reason names the step that failed, the load as load_step says.
 */
static int load_and_attach(struct paths_bpf *skel, struct bpf_program *prog, const char *load_step,
			   char **ret_reason)
{
	struct bpf_link *l;
	int r;

	r = paths_bpf__load(skel);
	if (r < 0) {
		r = -errno ?: r;
		*ret_reason = reason_errno(load_step, r);
		return r;
	}
	l = bpf_program__attach(prog);
	if (!l) {
		r = -errno ?: -EINVAL;
		*ret_reason = reason_errno("attach", r);
		return r;
	}
	bpf_link__destroy(l);
	return 0;
}

static int kernel_has_type(struct probe_resolver *cache, const char *name, int kind);
static int kernel_has_func(struct probe_resolver *cache, const char *name);

/*
 * Load the programs of a stand-in (probe_plan_stand_in) together and attach
 * each; the reason names the step and the program that failed. One on a
 * function the kernel lacks is left out, as the loader leaves it out.
 */
static int try_stand_in(struct probe_resolver *cache, const struct probe_stand_in *si,
			char **ret_reason)
{
	_cleanup_(paths_bpf_destroyp) struct paths_bpf *skel = NULL;
	struct bpf_program *prog;
	struct bpf_link *l;
	size_t j;
	int r;

	r = probe_skel_open(NULL, 0, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	for (j = 0; si->programs[j]; j++) {
		prog = bpf_object__find_program_by_name(skel->obj, si->programs[j]);
		if (!prog) {
			*ret_reason = xasprintf("the probe has no program %s", si->programs[j]);
			return -ENOENT;
		}
		if (kernel_has_func(cache, probe_skel_function(prog)) == 0)
			bpf_program__set_autoload(prog, true);
	}
	r = paths_bpf__load(skel);
	if (r < 0) {
		r = -errno ?: r;
		*ret_reason = reason_errno("load", r);
		return r;
	}
	for (j = 0; si->programs[j]; j++) {
		prog = bpf_object__find_program_by_name(skel->obj, si->programs[j]);
		if (!bpf_program__autoload(prog))
			continue;
		l = bpf_program__attach(prog);
		if (!l) {
			r = -errno ?: -EINVAL;
			*ret_reason = xasprintf("attach %s: %s", bpf_program__section_name(prog),
						strerror(-r));
			return r;
		}
		bpf_link__destroy(l);
	}
	return 0;
}

/*
 * The programs that open a fault and see its page mapped, where the kernel
 * cannot do with tracepoints (probe_plan_stand_in), tried for
 * page_fault_user: every fault class stands on them. Without
 * page_fault_user (x86's tracepoint; arm64 has none) faults are opened by
 * the kprobe pair on handle_mm_fault, with the write-protect path's
 * kprobes. Kernels before 6.2 count a task's RSS changes in the task and
 * publish them every 64 faults, so rss_stat does not mark each fault there
 * (on Debian 12's 6.1, 20000 fresh anonymous pages gave 302 anonymous
 * minor faults): a pair on handle_mm_fault (fentry/fexit, or kprobe and
 * kretprobe where the backends setting puts kprobe first or leaves fentry
 * out), or the kretprobe, reads the task's counters instead. Only the
 * backends of order are used. 1 when page_fault_user's own program is not
 * used here (the kprobes stand for it), 0 when it is, or a refusal.
 */
static int try_fault_stand_ins(struct probe_resolver *cache, const struct backend_order *order,
			       const char *tp, char **ret_reason)
{
	static const char no_pfu[] = "this kernel has no page_fault_user tracepoint (it is x86's), "
				     "and the kprobes on handle_mm_fault and the write-protect path "
				     "that open faults in its place";
	static const char split_rss[] =
	    "this kernel counts a task's RSS changes in the task and publishes them every 64 faults "
	    "(kernels before 6.2), so rss_stat does not mark which page each fault mapped, and a "
	    "pair on handle_mm_fault that would";
	const struct probe_kernel *k = probe_kernel_here();
	const struct probe_stand_in *entry, *end;
	_cleanup_free_ char *why = NULL;
	int r;

	if (strcmp(tp, "page_fault_user") != 0)
		return 0;
	if (probe_plan_stand_in(k, order, tp, &entry) < 0) {
		*ret_reason = xasprintf("%s are left out by the backends setting", no_pfu);
		return -EPERM;
	}
	if (probe_plan_stand_in(k, order, "rss_stat", &end) < 0) {
		*ret_reason = xasprintf("%s (fentry/fexit or kprobe/kretprobe) is left out by the "
					"backends setting",
					split_rss);
		return -EPERM;
	}
	if (entry) {
		r = try_stand_in(cache, entry, &why);
		if (r < 0) {
			*ret_reason = xasprintf("%s are refused (%s)", no_pfu, why);
			return r;
		}
	}
	if (end && end->programs[0]) {
		r = try_stand_in(cache, end, &why);
		if (r < 0) {
			*ret_reason = xasprintf("%s (%s) is refused (%s)", split_rss, end->said[0], why);
			return r;
		}
	}
	return entry ? 1 : 0;
}

static int try_tracepoint(struct probe_resolver *cache, const struct backend_order *order,
			  const char *tp, char **ret_reason)
{
	_cleanup_(paths_bpf_destroyp) struct paths_bpf *skel = NULL;
	struct bpf_program *prog;
	int r;

	r = try_fault_stand_ins(cache, order, tp, ret_reason);
	if (r != 0)
		return r < 0 ? r : 0;
	r = probe_skel_open(NULL, 0, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	prog = probe_skel_tracepoint(skel, tp);
	if (!prog) {
		*ret_reason = xasprintf("%s: the probe has no classifier for it", tp);
		return -ENOENT;
	}
	bpf_program__set_autoload(prog, true);
	return load_and_attach(skel, prog, "load", ret_reason);
}

static int try_kprobe(const char *fn, char **ret_reason)
{
	_cleanup_(paths_bpf_destroyp) struct paths_bpf *skel = NULL;
	struct bpf_link *l;
	int r;

	/* the attach error is the authority; the PMU check below only words the reason */
	r = probe_skel_open(NULL, 0, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	bpf_program__set_autoload(skel->progs.kprobe_entry, true);
	r = paths_bpf__load(skel);
	if (r < 0) {
		r = -errno ?: r;
		*ret_reason = reason_errno("load", r);
		return r;
	}
	l = bpf_program__attach_kprobe(skel->progs.kprobe_entry, false, fn);
	if (!l) {
		r = -errno ?: -EINVAL;
		if (access("/sys/bus/event_source/devices/kprobe", F_OK) < 0)
			*ret_reason = xasprintf("attach refused (%s): this kernel has no kprobe "
						"PMU (CONFIG_KPROBES off?)",
						strerror(-r));
		else
			*ret_reason = reason_errno("attach", r);
		return r;
	}
	bpf_link__destroy(l);
	return 0;
}

/*
 * Is there a BTF type of that name and kind in the kernel? The kernel's BTF
 * is parsed once per resolution when the caller gives a cache.
 */
static int kernel_has_type(struct probe_resolver *cache, const char *name, int kind)
{
	struct btf *own = NULL, *btf;
	int id;

	if (cache && !cache->vmlinux)
		cache->vmlinux = btf__load_vmlinux_btf();
	btf = cache ? cache->vmlinux : (own = btf__load_vmlinux_btf());
	if (!btf)
		return -errno ?: -ENOENT;
	id = btf__find_by_name_kind(btf, name, kind);
	btf__free(own);
	return id > 0 ? 0 : -ENOENT;
}

/*
 * Is there a BTF function of that name? Asked before set_attach_target: when
 * that fails, libbpf 1.1 keeps the kernel BTF it loaded until a load that
 * never comes (it frees it in load, not in close).
 */
static int kernel_has_func(struct probe_resolver *cache, const char *name)
{
	return kernel_has_type(cache, name, BTF_KIND_FUNC);
}

void probe_resolver_clear(struct probe_resolver *r)
{
	if (!r)
		return;
	btf__free(r->vmlinux);
	r->vmlinux = NULL;
}

static int try_fentry(struct probe_resolver *cache, const char *fn, char **ret_reason)
{
	_cleanup_(paths_bpf_destroyp) struct paths_bpf *skel = NULL;
	struct bpf_program *fe;
	int r;

	r = kernel_has_func(cache, fn);
	if (r < 0) {
		*ret_reason = xasprintf("no such function in the kernel's BTF");
		return r;
	}
	r = probe_skel_open(NULL, 0, 0, &skel);
	if (r < 0) {
		*ret_reason = reason_errno("open", r);
		return r;
	}
	fe = skel->progs.fentry_0;
	bpf_program__set_autoload(fe, true);
	r = bpf_program__set_attach_target(fe, 0, fn);
	if (r < 0) {
		*ret_reason = reason_errno("no such function in BTF", r);
		return r;
	}
	return load_and_attach(skel, fe, "load refused", ret_reason);
}

int probe_try_hook(void *userdata, const struct backend_order *order, enum backend b,
		   const char *hook, char **ret_reason)
{
	int r;

	/* refusals are expected here: libbpf's complaints go to debug, the reason says why */
	bpf_log_quiet_begin();
	switch (b) {
	case BACKEND_FENTRY:
		r = try_fentry(userdata, hook, ret_reason);
		break;
	case BACKEND_KPROBE:
		r = try_kprobe(hook, ret_reason);
		break;
	case BACKEND_TRACEPOINT:
		r = try_tracepoint(userdata, order, hook, ret_reason);
		break;
	default:
		*ret_reason = xasprintf("unknown backend");
		r = -EINVAL;
	}
	bpf_log_quiet_end();
	return r;
}
