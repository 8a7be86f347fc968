/* SPDX-License-Identifier: MIT */
/*
 * The multiplexed object's skeleton as the loader (probe.c) and the hook
 * trials (probe_try.c) open it, and how they find its programs: by the
 * section each declares (its SEC() in the bpf/ headers). Internal to those two.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "daemon/probe_plan.h"
#include "paths.skel.h"

/* The section prefix of the probe's tracepoint programs: "tp_btf/<tracepoint>". */
#define PROBE_TP_SECTION "tp_btf/"

/*
 * Open the object, with a verifier-log buffer when logbuf is not NULL, the
 * kernel's log level log_level (0: libbpf asks for level 1 when a load
 * fails); autoload nothing yet. -errno on failure.
 */
int probe_skel_open(char *logbuf, size_t loglen, __u32 log_level, struct paths_bpf **ret);
/* The program whose section is "tp_btf/<tp>", or NULL when the probe has none. */
struct bpf_program *probe_skel_tracepoint(struct paths_bpf *skel, const char *tp);

/* The function a program attaches to, from its section ("kprobe/handle_mm_fault"): "handle_mm_fault". */
const char *probe_skel_function(const struct bpf_program *prog);

/*
 * The running kernel's facts that decide which programs stand for the
 * plan's tracepoints (probe_plan_stand_in): asked of its BTF once per
 * process. The one place that says whether this kernel opens faults by
 * kprobe (no page_fault_user) and whether it splits RSS counting (struct
 * task_rss_stat: kernels before 6.2).
 */
const struct probe_kernel *probe_kernel_here(void);

static inline void paths_bpf_destroyp(struct paths_bpf **skel)
{
	paths_bpf__destroy(*skel);
}
