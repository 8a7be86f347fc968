/* SPDX-License-Identifier: MIT */
/*
 * The safety gate for authored probes: what an object compiled from the
 * LLM agent's source may contain, checked before the kernel sees it.
 *
 *   - Programs: tp_btf and raw_tp on the tracepoints of the active level
 *     (its nodes' resolved hooks, the companions the builtin probe uses
 *     with them, sched_process_fork/exit); kprobe/kretprobe and
 *     fentry/fexit only on functions of active nodes that resolved to
 *     those backends. Nothing sleepable, nothing that modifies returns.
 *   - Instructions, read from every executable section of the ELF
 *     (programs and the subprograms libbpf would append): helper calls only
 *     from an allowlist that has no memory reads (bpf_probe_read*), no
 *     kernel pointers or addresses (bpf_get_current_task*,
 *     bpf_get_func_ip, bpf_task_pt_regs, bpf_get_stack*) and no callbacks
 *     (bpf_loop, bpf_for_each_map_elem, bpf_find_vma, timers,
 *     bpf_user_ringbuf_drain); bpf-to-bpf calls fine; kfunc calls refused;
 *     64-bit loads only of maps (no function pointers, no data addresses).
 *   - Sections, symbols and BTF: only what bpf/argus_authored.h and the
 *     program's own functions account for: program sections, .text, .maps,
 *     the header's license, BTF and debug information. No global or static
 *     data (.rodata, .data, .bss and their kin, in the ELF or in BTF), no
 *     extern symbols at all (kfuncs, kernel symbols, kconfig), no other
 *     section.
 *   - Maps: at most GATE_MAX_MAPS, of the hash and array kinds and task
 *     storage, bounded entries, key and value sizes and total memory, none
 *     pinned, no maps of maps; `counters`, `targets` and `argus_pidns`
 *     exactly as bpf/argus_authored.h declares them, and its fork follower
 *     present.
 *   - Sizes: the object, the programs, the instructions.
 *
 * What the gate cannot see: a typed task pointer that a tp_btf program
 * receives as an argument can still be cast to an integer and counted;
 * the witness of the measurement refuses such numbers.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "daemon/tree.h"

#define GATE_OBJECT_MAX (4 * 1024 * 1024)
#define GATE_MAX_PROGRAMS 64
#define GATE_MAX_INSNS 200000
#define GATE_MAX_MAPS 8		  /* declared maps, the header's three included */
#define GATE_MAX_ENTRIES 65536
#define GATE_MAX_KEY 512
#define GATE_MAX_VALUE 4096
#define GATE_MAX_MAP_MEMORY (64ull << 20)

struct gate_policy {
	char **sections; /* allowed attach points as section names: "tp_btf/page_fault_user", ... */
	size_t n_sections;
	unsigned ncpu;	 /* for the memory bound of per-CPU maps; 0 counts as 1 */
	bool no_call_events; /* the raw system call events are left out */
};

/*
 * The policy for one level: the attach points of the active nodes as they
 * resolved on this kernel (node->hook split on '+', by backend), the
 * companions, fork/exit. With no_call_events (syscall_events = none) the
 * raw sys_enter and sys_exit are left out, hooks and companions alike:
 * every task on the host would run the probe's programs on each of its
 * system calls, which is the cost that setting removes. Pure.
 */
int gate_policy_for_level(const struct tree *t, const int *active, size_t n_active,
			  unsigned ncpu, bool no_call_events, struct gate_policy *ret);
/*
 * The first active node (its index in t) measured through the raw system
 * call events on this kernel, or -1. Under syscall_events = none only the
 * builtin probe measures such a node: it reads the call a thread sleeps in
 * from the registers the thread saved (bpf/calls.bpf.h), a read the gate
 * refuses authored code. Pure.
 */
int gate_level_call_node(const struct tree *t, const int *active, size_t n_active);
void gate_policy_free(struct gate_policy *p);
/* Is section ("tp_btf/page_fault_user") one of the policy's attach points? */
bool gate_policy_allows(const struct gate_policy *p, const char *section);
/* The allowed attach points, for the model and the trace: ["tp_btf/...", ...]. */
json_t *gate_policy_to_json(const struct gate_policy *p);

/*
 * Check an object. Returns 0 when it passes, with *ret_info (may be NULL
 * to skip) describing what it holds: {"programs": [{"name", "section",
 * "insns"}], "maps": [...], "helpers": [names], "bytes"}. On refusal
 * returns -EPERM (or -EINVAL for an object libbpf or libelf cannot read)
 * and *ret_err (malloc'ed) says what and where, written for the author.
 * Loads nothing.
 */
int gate_check(const void *obj, size_t len, const struct gate_policy *p, json_t **ret_info,
	       char **ret_err);

/* "bpf_send_signal" for a helper id; "helper#<id>" when unknown (static storage or buf). */
const char *gate_helper_name(int id, char *buf, size_t len);
