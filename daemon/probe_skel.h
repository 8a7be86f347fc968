/* SPDX-License-Identifier: MIT */
/*
 * The multiplexed object's skeleton as the loader (probe.c) and the hook
 * trials (probe_try.c) open it, and how they find its programs: by the
 * section each declares (its SEC() in the bpf/ headers). Internal to those two.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "paths.skel.h"

/* The section prefix of the probe's tracepoint programs: "tp_btf/<tracepoint>". */
#define PROBE_TP_SECTION "tp_btf/"

/*
 * Open the object, with a verifier-log buffer when logbuf is not NULL;
 * autoload nothing yet. -errno on failure.
 */
int probe_skel_open(char *logbuf, size_t loglen, struct paths_bpf **ret);
/* The program whose section is "tp_btf/<tp>", or NULL when the probe has none. */
struct bpf_program *probe_skel_tracepoint(struct paths_bpf *skel, const char *tp);

/*
 * Does this kernel keep a task's RSS counts in the task (struct
 * task_rss_stat in its BTF: kernels before 6.2), publishing them to the mm
 * every 64 faults? There rss_stat cannot say which page a fault mapped,
 * and the fault companions take the pair on handle_mm_fault instead
 * (bpf/faults.bpf.h). Asked of the kernel's BTF once per process.
 */
bool probe_kernel_splits_rss(void);
/* The companion tracepoint that the fault-end pair stands in for on such a kernel. */
#define PROBE_RSS_TRACEPOINT "rss_stat"

static inline void paths_bpf_destroyp(struct paths_bpf **skel)
{
	paths_bpf__destroy(*skel);
}
