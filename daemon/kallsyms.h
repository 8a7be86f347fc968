/* SPDX-License-Identifier: MIT */
/*
 * The names of kernel functions by address, from /proc/kallsyms: how a
 * kernel worker that held a target's CPU is named by the work it ran. Only
 * names leave this file; addresses never reach a result or a log.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A kernel symbol's name fits in this, NUL included (KSYM_NAME_LEN is 512; longer ones are cut). */
#define KALLSYMS_NAME_MAX 64

/*
 * The name of each address addrs[i] into names[i]: the symbol that starts
 * exactly there, "" where none does (or for 0). One read of /proc/kallsyms
 * for all the addresses not named before; names are kept for the process's
 * life (a kernel function does not move). 0, or a negative errno when the
 * file could not be read (then the names not known before are "").
 */
int kallsyms_names(const uint64_t *addrs, size_t n, char (*names)[KALLSYMS_NAME_MAX]);

/*
 * The address of the text symbol name (the first one the file lists by
 * that name) into *ret; -ENOENT when it has none, or a negative errno
 * when the file could not be read. Kept like the names, a name it lacks too.
 */
int kallsyms_address(const char *name, uint64_t *ret);
