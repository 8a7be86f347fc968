// SPDX-License-Identifier: MIT
/*
 * libbpf's messages into the daemon's log, one line each; quiet (warnings
 * at the debug level) on a thread between bpf_log_quiet_begin and
 * bpf_log_quiet_end. See bpf_log.h.
 */
#include "daemon/bpf_log.h"
#include "daemon/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

/* Longest libbpf line kept; the rest of a longer one is cut. */
#define BPF_LOG_LINE_MAX 1024

static __thread bool quiet;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[BPF_LOG_LINE_MAX];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	if (level == LIBBPF_WARN && !quiet)
		log_warning("libbpf: %s", line);
	else
		log_debug("libbpf: %s", line);
	return 0;
}

void bpf_log_setup(void)
{
	libbpf_set_print(libbpf_print);
}

void bpf_log_quiet_begin(void)
{
	quiet = true;
}

void bpf_log_quiet_end(void)
{
	quiet = false;
}
