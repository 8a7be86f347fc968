/* SPDX-License-Identifier: MIT */
/*
 * libbpf's own messages in the daemon's log. libbpf prints through one
 * process-wide function (libbpf_set_print); this module is that function:
 * each message becomes one line of the daemon's log, at the debug level,
 * warnings as warnings, except on a thread that is trying hooks, where a
 * refusal is the expected answer and its warnings stay at the debug level.
 */
#pragma once

/* Route libbpf's messages into the daemon's log. Once, at start. */
void bpf_log_setup(void);
/*
 * From now until bpf_log_quiet_end, on this thread, libbpf's warnings are
 * debug lines: what is tried here may be refused, and the caller reports
 * why. Not nested.
 */
void bpf_log_quiet_begin(void);
/* Warnings on this thread are warnings again. */
void bpf_log_quiet_end(void);
