// SPDX-License-Identifier: MIT
#include "daemon/perfcount.h"
#include "daemon/util.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

struct perf_event_def {
	const char *name;
	__u32 type;
	__u64 config;
};

static const struct perf_event_def events[] = {
	{ "page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

static int perf_open(const struct perf_event_def *e, pid_t tid, bool enable_on_exec)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = e->type,
		.config = e->config,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
		.inherit = 1,
		.disabled = enable_on_exec,
		.enable_on_exec = enable_on_exec,
		.exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int perfcount_open(const pid_t *tids, size_t n_tids, bool enable_on_exec, struct perfcount *ret)
{
	struct perfcount pc = { .n = 0 };
	int first_err = -ENOENT;
	size_t e, t;

	for (e = 0; e < ARRAY_SIZE(events); e++) {
		for (t = 0; t < n_tids && pc.n < PERFCOUNT_MAX; t++) {
			int fd = perf_open(&events[e], tids[t], enable_on_exec);

			if (fd < 0) {
				if (first_err == -ENOENT)
					first_err = fd;
				if (t == 0)
					break; /* not available here (e.g. no PMU) */
				continue;
			}
			pc.fds[pc.n] = fd;
			pc.event[pc.n] = e;
			pc.n++;
		}
	}
	if (pc.n == 0)
		return first_err;
	*ret = pc;
	return 0;
}

int perfcount_read(const struct perfcount *pc, struct mvec *v)
{
	double sums[ARRAY_SIZE(events)] = {};
	bool seen[ARRAY_SIZE(events)] = {};
	size_t i;

	for (i = 0; i < pc->n; i++) {
		__u64 buf[3];
		double val;

		if (read(pc->fds[i], buf, sizeof(buf)) != sizeof(buf))
			return -errno ?: -EIO;
		val = buf[0];
		if (buf[2] && buf[2] < buf[1])
			val = val * ((double)buf[1] / buf[2]);
		sums[pc->event[i]] += val;
		seen[pc->event[i]] = true;
	}
	for (i = 0; i < ARRAY_SIZE(events); i++)
		if (seen[i]) {
			char name[64];

			snprintf(name, sizeof(name), "perf/%s", events[i].name);
			mvec_set(v, name, sums[i]);
		}
	return 0;
}

void perfcount_close(struct perfcount *pc)
{
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < pc->n; i++)
		close(pc->fds[i]);
	pc->n = 0;
}
