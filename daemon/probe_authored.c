// SPDX-License-Identifier: MIT
/*
 * Loader of authored probe objects. See probe_authored.h.
 */
#include "daemon/probe_authored.h"
#include "daemon/probe.h"
#include "daemon/log.h"
#include "daemon/util.h"
#include "bpf/argus_authored.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define AUTHORED_LOG_MAX (256 * 1024)
#define AUTHORED_MAX_LINKS 64

struct probe_authored {
	struct bpf_object *obj;
	struct bpf_link *links[AUTHORED_MAX_LINKS];
	size_t n_links;
};

/*
 * libbpf's own messages during a load (CO-RE relocation failures, missing
 * BTF, ...) matter to the author as much as the verifier's: while loading,
 * they are appended to the log buffer and still passed on to the daemon's
 * handler. Only the job worker loads authored objects, one at a time.
 */
static __thread char *capture;
static __thread size_t capture_len;
static libbpf_print_fn_t previous_print;

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;
	int n;

	/*
	 * Debug lines (CO-RE relocations, section bookkeeping) can run to tens
	 * of kilobytes and would push the verifier's own message out of what
	 * the author is shown: keep warnings and information only.
	 */
	if (capture && level != LIBBPF_DEBUG && capture_len + 2 < AUTHORED_LOG_MAX) {
		va_copy(copy, ap);
		n = vsnprintf(capture + capture_len, AUTHORED_LOG_MAX - capture_len, fmt, copy);
		va_end(copy);
		if (n > 0)
			capture_len += (size_t)n < AUTHORED_LOG_MAX - capture_len
					       ? (size_t)n
					       : AUTHORED_LOG_MAX - capture_len - 1;
	}
	return previous_print ? previous_print(level, fmt, ap) : 0;
}

/*
 * Tell the header's helpers argusd's PID namespace: the nsfs device and
 * inode that bpf_get_ns_current_pid_tgid compares, ino 0 in the initial
 * namespace (probe_pidns), where the kernel's numbers are argusd's.
 */
static int set_pidns(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, ARGUS_AUTHORED_PIDNS);
	struct argus_pidns ns = {};
	struct stat st;
	__u32 zero = 0;
	__u64 inum;
	int r;

	if (!m)
		return -ENOENT;
	r = probe_pidns(&inum);
	if (r < 0)
		return r;
	if (inum) {
		if (stat("/proc/self/ns/pid", &st) < 0)
			return -errno;
		ns.dev = st.st_dev;
		ns.ino = st.st_ino;
	}
	if (bpf_map__update_elem(m, &zero, sizeof(zero), &ns, sizeof(ns), BPF_ANY) < 0)
		return -errno;
	return 0;
}

/*
 * Open obj and load it, the verifier's words to vlog at log_level (0 first,
 * then PROBE_LOG_LEVEL_STATS on ENOSPC), libbpf's own to the capture.
 */
static int open_load(const void *obj, size_t len, char *vlog, __u32 log_level,
		     struct bpf_object **ret)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "authored", .kernel_log_buf = vlog,
		    .kernel_log_size = AUTHORED_LOG_MAX, .kernel_log_level = log_level);
	int r;

	vlog[0] = '\0';
	capture[0] = '\0';
	capture_len = 0;
	*ret = bpf_object__open_mem(obj, len, &opts);
	if (!*ret)
		return -errno ?: -EINVAL;
	r = bpf_object__load(*ret);
	return r < 0 ? -errno ?: r : 0;
}

int probe_authored_load(const void *obj, size_t len, struct probe_authored **ret, char **ret_log)
{
	_cleanup_free_ char *vlog = calloc(1, AUTHORED_LOG_MAX), *llog = calloc(1, AUTHORED_LOG_MAX);
	struct probe_authored *p;
	int r;

	if (!vlog || !llog)
		return -ENOMEM;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	capture = llog;
	previous_print = libbpf_set_print(capture_print);
	r = open_load(obj, len, vlog, 0, &p->obj);
	if (r == -ENOSPC) {
		bpf_object__close(p->obj);
		r = open_load(obj, len, vlog, PROBE_LOG_LEVEL_STATS, &p->obj);
	}
	libbpf_set_print(previous_print);
	capture = NULL;
	if (r < 0) {
		if (ret_log && (vlog[0] || llog[0]))
			*ret_log = xasprintf("%s%s%s", vlog, vlog[0] && llog[0] ? "\n" : "", llog);
		bpf_object__close(p->obj);
		free(p);
		return r;
	}
	r = set_pidns(p->obj);
	if (r < 0) {
		bpf_object__close(p->obj);
		free(p);
		return r;
	}
	*ret = p;
	return 0;
}

int probe_authored_add_target(struct probe_authored *p, pid_t tgid)
{
	struct bpf_map *m = bpf_object__find_map_by_name(p->obj, ARGUS_AUTHORED_TARGETS);
	__u32 key = tgid;
	__u8 one = 1;

	if (!m)
		return -ENOENT;
	if (bpf_map__update_elem(m, &key, sizeof(key), &one, sizeof(one), BPF_ANY) < 0)
		return -errno;
	return 0;
}

int probe_authored_attach(struct probe_authored *p)
{
	struct bpf_program *prog;
	int r;

	bpf_object__for_each_program(prog, p->obj)
	{
		struct bpf_link *l;

		if (p->n_links >= AUTHORED_MAX_LINKS) {
			r = -E2BIG;
			goto fail;
		}
		/* the section names the attach point; the gate allowed exactly those */
		l = bpf_program__attach(prog);
		if (!l) {
			r = -errno ?: -EINVAL;
			log_error_errno(r, "authored probe: attaching %s (%s): %m",
					bpf_program__name(prog), bpf_program__section_name(prog));
			goto fail;
		}
		p->links[p->n_links++] = l;
	}
	return 0;
fail:
	probe_authored_detach(p);
	return r;
}

void probe_authored_detach(struct probe_authored *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	p->n_links = 0;
}

int probe_authored_read(struct probe_authored *p, struct probe_counts *ret)
{
	struct bpf_map *m = bpf_object__find_map_by_name(p->obj, ARGUS_AUTHORED_COUNTERS);
	struct probe_counts out = {};
	int r;

	if (!m)
		return -ENOENT;
	r = probe_sum_counters(m, ARGUS_MAX_SLOTS, out.slot);
	if (r < 0)
		return r;
	probe_sum_run_stats(p->obj, &out);
	*ret = out;
	return 0;
}

json_t *probe_authored_programs(const struct probe_authored *p)
{
	json_t *a = json_array();
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, p->obj)
		json_array_append_new(a, json_string(bpf_program__section_name(prog)));
	return a;
}

int probe_authored_runs(const struct probe_authored *p, struct probe_program_runs *ret, size_t max,
			size_t *ret_n)
{
	struct bpf_program *prog;
	size_t n = 0;

	bpf_object__for_each_program(prog, p->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (n >= max)
			return -E2BIG;
		if (fd < 0)
			return -EBADF;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			return -errno;
		ret[n++] = (struct probe_program_runs){ .section = bpf_program__section_name(prog),
							.runs = info.run_cnt };
	}
	*ret_n = n;
	return 0;
}

void probe_authored_free(struct probe_authored *p)
{
	if (!p)
		return;
	probe_authored_detach(p);
	bpf_object__close(p->obj);
	free(p);
}
