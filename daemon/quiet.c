// SPDX-License-Identifier: MIT
/*
 * Waiting for a quiet machine: /proc/stat sampled over an interval, the
 * busiest CPU (less a running target's share) compared with a limit,
 * bounded by a timeout. See quiet.h.
 */
#include "daemon/quiet.h"
#include "daemon/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROC_STAT_MAX (1024 * 1024)

void quiet_opts_default(struct quiet_opts *o)
{
	*o = (struct quiet_opts){.limit = 0.15, .sample_ms = 1000, .timeout_ms = 10000};
}

int cpu_times_parse(const char *text, struct cpu_times *ret, size_t max)
{
	const char *line = text;
	size_t n = 0;

	while (line && *line && n < max) {
		const char *next = strchr(line, '\n');
		uint64_t v[8] = {};
		int cpu, got;

		/* "cpuN user nice system idle iowait irq softirq steal ..." ("cpu " is the sum) */
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9') {
			line = next ? next + 1 : NULL;
			continue;
		}
		got = sscanf(line,
			     "cpu%d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			     " %" SCNu64 " %" SCNu64 " %" SCNu64,
			     &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
		if (got >= 5 && cpu >= 0) {
			uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];

			ret[n++] = (struct cpu_times){cpu, busy, busy + v[3] + v[4]};
		}
		line = next ? next + 1 : NULL;
	}
	return n ? (int)n : -EINVAL;
}

double cpu_busiest(const struct cpu_times *a, size_t na, const struct cpu_times *b, size_t nb)
{
	double worst = 0;
	size_t i, j;

	for (i = 0; i < nb; i++)
		for (j = 0; j < na; j++) {
			uint64_t dt, db;

			if (a[j].cpu != b[i].cpu)
				continue;
			if (b[i].total <= a[j].total || b[i].busy < a[j].busy)
				break;
			dt = b[i].total - a[j].total;
			db = b[i].busy - a[j].busy;
			if ((double)db / (double)dt > worst)
				worst = (double)db / (double)dt;
			break;
		}
	return worst > 1 ? 1 : worst;
}

/* The busiest CPU's number between two samples, -1 when none. */
static int busiest_cpu(const struct cpu_times *a, size_t na, const struct cpu_times *b, size_t nb)
{
	double worst = -1;
	int cpu = -1;
	size_t i;

	for (i = 0; i < nb; i++) {
		double f = cpu_busiest(a, na, &b[i], 1);

		if (f > worst) {
			worst = f;
			cpu = b[i].cpu;
		}
	}
	return cpu;
}

static int sample(struct cpu_times *ret, size_t max)
{
	_cleanup_free_ char *text = NULL;
	int r = read_file_bounded("/proc/stat", PROC_STAT_MAX, &text, NULL);

	return r < 0 ? r : cpu_times_parse(text, ret, max);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

double quiet_others(double busiest, double target_cpus)
{
	return busiest > target_cpus ? busiest - target_cpus : 0;
}

int quiet_wait(const struct quiet_opts *o, struct quiet_report *ret)
{
	_cleanup_free_ struct cpu_times *a = calloc(QUIET_CPUS_MAX, sizeof(*a));
	_cleanup_free_ struct cpu_times *b = calloc(QUIET_CPUS_MAX, sizeof(*b));
	struct quiet_report rep = {.busiest_cpu = -1, .has_target = o->target_ns != NULL};
	uint64_t t0 = now_mono_ns(), elapsed_ms, ta = 0, tb, at, bt;
	unsigned tick = o->sample_ms ? o->sample_ms : 1000;
	int na, nb;

	if (!a || !b)
		return -ENOMEM;
	/* dirty data left by whoever ran before would be written out during the runs */
	sync();
	na = sample(a, QUIET_CPUS_MAX);
	if (na < 0)
		return na;
	at = now_mono_ns();
	if (o->target_ns)
		ta = o->target_ns(o->target);
	for (;;) {
		sleep_ms(tick);
		nb = sample(b, QUIET_CPUS_MAX);
		if (nb < 0)
			return nb;
		bt = now_mono_ns();
		rep.busiest = cpu_busiest(a, (size_t)na, b, (size_t)nb);
		rep.busiest_cpu = busiest_cpu(a, (size_t)na, b, (size_t)nb);
		if (o->target_ns) {
			tb = o->target_ns(o->target);
			rep.target_cpus = tb > ta && bt > at ? (double)(tb - ta) / (double)(bt - at) : 0;
			ta = tb;
		}
		at = bt;
		elapsed_ms = (bt - t0) / 1000000u;
		if (quiet_others(rep.busiest, rep.target_cpus) <= o->limit) {
			rep.quiet = true;
			break;
		}
		if (elapsed_ms >= o->timeout_ms)
			break;
		if (o->should_stop && o->should_stop(o->userdata)) {
			rep.stopped = true;
			break;
		}
		memcpy(a, b, sizeof(*a) * (size_t)nb);
		na = nb;
	}
	rep.waited_ms = (now_mono_ns() - t0) / 1000000u;
	*ret = rep;
	return 0;
}

json_t *quiet_report_to_json(const struct quiet_report *r)
{
	json_t *j = json_pack("{s:b,s:I,s:i,s:f}", "quiet", r->quiet, "waited_ms",
			      (json_int_t)r->waited_ms, "busiest_cpu", r->busiest_cpu, "busiest",
			      r->busiest);

	if (r->has_target)
		json_object_set_new(j, "target_cpus", json_real(r->target_cpus));
	return j;
}
