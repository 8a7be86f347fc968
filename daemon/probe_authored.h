/* SPDX-License-Identifier: MIT */
/*
 * The loader of authored probe objects (LLM agent), in the shape of
 * probe.h: load (verifier log captured) -> add the target -> attach every
 * program -> detach -> read the slots -> free. The object must have passed
 * the safety gate (gate.h) first; this module trusts nothing else about it
 * and looks up the maps argus_authored.h declares by name.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "daemon/probe.h"

struct probe_authored;

/*
 * Open and load an object (bytes copied). On a load failure returns the
 * error and *ret_log (malloc'ed, bounded) holds the verifier's log and
 * libbpf's messages when there were any.
 */
int probe_authored_load(const void *obj, size_t len, struct probe_authored **ret, char **ret_log);
/* Follow a process (its forks are followed by the header's program). */
int probe_authored_add_target(struct probe_authored *p, pid_t tgid);
/* Attach every program; on failure nothing stays attached. */
int probe_authored_attach(struct probe_authored *p);
/* Detach every program (counters stay readable). Idempotent; NULL is fine. */
void probe_authored_detach(struct probe_authored *p);
/* Sum the per-CPU slots into ret->slot[]; run counts when stats were on. cls[] stays zero. */
int probe_authored_read(struct probe_authored *p, struct probe_counts *ret);
/* The programs, for the trace: ["tp_btf/page_fault_user", ...]. */
json_t *probe_authored_programs(const struct probe_authored *p);
/* A program's section and how many times it ran (kernel.bpf_stats; 0 while they are off). */
struct probe_program_runs {
	const char *section; /* the object's own: valid until probe_authored_free */
	unsigned long long runs;
};
/*
 * The run counts of the programs, in the object's order, into ret (room for
 * max) and *ret_n. -E2BIG with more than max programs, -errno when a
 * program's info cannot be read.
 */
int probe_authored_runs(const struct probe_authored *p, struct probe_program_runs *ret, size_t max,
			size_t *ret_n);
/* Detach and destroy. NULL is fine. */
void probe_authored_free(struct probe_authored *p);
