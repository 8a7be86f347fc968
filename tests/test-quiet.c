// SPDX-License-Identifier: MIT
/*
 * The machine's state around a run: waiting for a quiet machine (/proc/stat
 * parsing, the busiest CPU, the wait itself, a target's share) and the
 * host's pace (the chase's cycle, the reading, its median and what a
 * summary says of it).
 */
#include "daemon/host_pace.h"
#include "daemon/quiet.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static const char stat_a[] = "cpu  100 0 50 800 50 0 0 0 0 0\n"
			     "cpu0 60 0 20 400 20 0 0 0 0 0\n"
			     "cpu1 40 0 30 400 30 0 0 0 0 0\n"
			     "intr 12345 0 0\nctxt 999\n";
/* cpu0: 90 busy of 100; cpu1: 10 busy of 100 */
static const char stat_b[] = "cpu  200 0 60 880 60 0 0 0 0 0\n"
			     "cpu0 140 0 30 410 20 0 0 0 0 0\n"
			     "cpu1 45 0 35 480 40 0 0 0 0 0\n";

static void test_parse(void)
{
	struct cpu_times a[4], b[4];
	int na, nb;

	tap_subtest("parse");
	na = cpu_times_parse(stat_a, a, 4);
	CHECK_EQ(na, 2, "cpus in a");
	CHECK_EQ(a[0].cpu, 0, "first cpu");
	CHECK_EQ(a[0].busy, 80, "cpu0 busy");
	CHECK_EQ(a[0].total, 500, "cpu0 total");
	nb = cpu_times_parse(stat_b, b, 4);
	CHECK_EQ(nb, 2, "cpus in b");
	CHECKF(fabs(cpu_busiest(a, 2, b, 2) - 0.9) < 1e-9, "busiest %f",
	       cpu_busiest(a, 2, b, 2));
	/* the same sample twice: no time passed */
	CHECK(cpu_busiest(a, 2, a, 2) == 0);
	/* only the CPUs both samples have */
	CHECKF(fabs(cpu_busiest(a, 2, &b[1], 1) - 0.1) < 1e-9, "cpu1 %f",
	       cpu_busiest(a, 2, &b[1], 1));
	CHECK_EQ(cpu_times_parse("intr 1\n", a, 4), -EINVAL, "no cpu lines");
	CHECK_EQ(cpu_times_parse(stat_a, a, 1), 1, "bounded by max");
}

static pid_t start_hog(int cpu)
{
	pid_t pid = fork();

	if (pid == 0) {
		cpu_set_t set;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
		for (;;)
			;
	}
	return pid;
}

static void test_wait(void)
{
	struct quiet_opts o;
	struct quiet_report rep;
	pid_t hog;

	tap_subtest("wait");
	quiet_opts_default(&o);
	CHECKF(o.limit == 0.15 && o.sample_ms == 1000 && o.timeout_ms == 10000, "defaults");

	/* any machine is quiet under a limit of 100%: one sample, then done */
	o.limit = 1.0;
	o.sample_ms = 100;
	o.timeout_ms = 5000;
	CHECK(quiet_wait(&o, &rep) == 0);
	CHECK(rep.quiet && !rep.stopped && rep.busiest_cpu >= 0);
	CHECKF(rep.waited_ms >= 100, "waited %llu ms", (unsigned long long)rep.waited_ms);

	/* a busy CPU keeps it from being quiet until the timeout; the report names how busy */
	hog = start_hog(0);
	REQUIRE(hog > 0);
	o.limit = 0.5;
	o.timeout_ms = 600;
	CHECK(quiet_wait(&o, &rep) == 0);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	CHECK(!rep.quiet && !rep.stopped);
	CHECKF(rep.busiest >= 0.8, "busiest %.2f on cpu %d", rep.busiest, rep.busiest_cpu);
	CHECKF(rep.waited_ms >= 600, "waited %llu ms", (unsigned long long)rep.waited_ms);
	{
		json_t *j = quiet_report_to_json(&rep);

		CHECK(json_is_false(json_object_get(j, "quiet")));
		CHECK(json_integer_value(json_object_get(j, "waited_ms")) >= 600);
		CHECK(!json_object_get(j, "target_cpus"));
		json_decref(j);
	}
}

/* A process's CPU time so far from /proc/PID/stat, the test's own reading. */
static uint64_t proc_cpu_ns(void *pid)
{
	char path[64], buf[1024], *p;
	unsigned long utime = 0, stime = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", *(pid_t *)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after the name: state, then 10 fields before utime and stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
			 &stime) != 2)
		return 0;
	return (uint64_t)(utime + stime) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/*
 * A running target's own work does not keep the machine from being quiet;
 * someone else's does, whatever the target does.
 */
static void test_target(void)
{
	struct quiet_opts o;
	struct quiet_report rep;
	pid_t hog, sleeper;

	tap_subtest("target");
	/* the busiest CPU less the target's CPUs' worth, never below 0 */
	CHECK(fabs(quiet_others(0.95, 0.9) - 0.05) < 1e-9);
	CHECK(quiet_others(0.3, 1.7) == 0);
	CHECK(quiet_others(1.0, 0) == 1.0);

	hog = start_hog(0);
	REQUIRE(hog > 0);
	sleeper = fork();
	if (sleeper == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	REQUIRE(sleeper > 0);
	quiet_opts_default(&o);
	o.sample_ms = 200;
	o.timeout_ms = 600;
	/* the hog is the target: its CPU is its own work (it gets half of it or more) */
	o.limit = 0.6;
	o.target_ns = proc_cpu_ns;
	o.target = &hog;
	CHECK(quiet_wait(&o, &rep) == 0);
	CHECKF(rep.quiet && rep.has_target && rep.target_cpus >= 0.4,
	       "quiet %d, target %.2f CPUs, busiest %.2f", rep.quiet, rep.target_cpus, rep.busiest);
	{
		json_t *j = quiet_report_to_json(&rep);

		CHECK(json_real_value(json_object_get(j, "target_cpus")) >= 0.4);
		json_decref(j);
	}
	/* a sleeping target beside the hog: the hog is someone else's, not quiet */
	o.target = &sleeper;
	CHECK(quiet_wait(&o, &rep) == 0);
	CHECKF(!rep.quiet && rep.target_cpus < 0.1 && rep.waited_ms >= 600,
	       "quiet %d, target %.2f CPUs, busiest %.2f", rep.quiet, rep.target_cpus, rep.busiest);
	kill(hog, SIGKILL);
	kill(sleeper, SIGKILL);
	waitpid(hog, NULL, 0);
	waitpid(sleeper, NULL, 0);
}

/* The chase visits every line of its buffer once per lap, in an order the seed draws. */
static void test_pace_cycle(void)
{
	enum { N = 256 };
	static _Alignas(HOST_PACE_LINE) char buf[N * HOST_PACE_LINE], other[N * HOST_PACE_LINE];
	bool seen[N] = {};
	void **p, **start, **start2;
	size_t i, visited = 0, same = 0;
	bool inside = true;

	tap_subtest("pace cycle");
	start = host_pace_cycle(buf, N, 42);
	for (p = start, i = 0; i < N; i++) {
		size_t line = (size_t)((char *)p - buf) / HOST_PACE_LINE;

		if ((char *)p < buf || (char *)p >= buf + sizeof(buf) ||
		    ((char *)p - buf) % HOST_PACE_LINE) {
			inside = false;
			break;
		}
		if (!seen[line]) {
			seen[line] = true;
			visited++;
		}
		p = *p;
	}
	CHECK(inside);
	CHECKF(visited == N && p == start, "%zu lines visited of %d, back at the start: %d", visited,
	       N, p == start);
	start2 = host_pace_cycle(other, N, 43);
	for (i = 0; i < N; i++)
		same += *(char **)(buf + i * HOST_PACE_LINE) - buf ==
			*(char **)(other + i * HOST_PACE_LINE) - other;
	CHECKF(same < N / 4, "another seed, another order: %zu of %d links the same", same, N);
	(void)start2;
}

static void test_pace_read(void)
{
	struct host_pace hp = {};
	cpu_set_t was, now, cpu0, none;
	int r;

	tap_subtest("pace read");
	REQUIRE(sched_getaffinity(0, sizeof(was), &was) == 0);
	r = host_pace_read(NULL, &hp);
	CHECKF(r == 0 && hp.ns_per_load > 0 && hp.ns_per_load < 1000 && hp.cpu == -1 &&
		       hp.took_ns > 0,
	       "r %d, %.2f ns per load on cpu %d in %.1f ms", r, hp.ns_per_load, hp.cpu,
	       hp.took_ns / 1e6);
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	hp = (struct host_pace){};
	r = host_pace_read(&cpu0, &hp);
	CHECKF(r == 0 && hp.cpu == 0 && hp.ns_per_load > 0, "r %d, cpu %d", r, hp.cpu);
	REQUIRE(sched_getaffinity(0, sizeof(now), &now) == 0);
	CHECK(CPU_EQUAL(&was, &now));
	/* a CPU the machine does not have: refused, the thread left where it was */
	CPU_ZERO(&none);
	CPU_SET(CPU_SETSIZE - 1, &none);
	hp = (struct host_pace){.ns_per_load = -1};
	r = host_pace_read(&none, &hp);
	CHECKF(r == -EINVAL && hp.ns_per_load == -1, "r %d", r);
	REQUIRE(sched_getaffinity(0, sizeof(now), &now) == 0);
	CHECK(CPU_EQUAL(&was, &now));
}

static void test_pace_said(void)
{
	const double some[] = {0, 9.0, 8.0, 0, 12.0}, two[] = {4, 2}, zeros[] = {0, 0};
	char *s;

	tap_subtest("pace said");
	CHECK(host_pace_median(some, 5) == 9.0);
	CHECK(host_pace_median(two, 2) == 3.0);
	CHECK(host_pace_median(zeros, 2) == 0);
	CHECK(host_pace_median(NULL, 0) == 0);
	s = host_pace_moved(12.5, 10.0);
	CHECKF(s && strstr(s, "1.25x as slow") && strstr(s, "12.5 ns per load against 10.0"), "%s",
	       s ?: "(none)");
	free(s);
	s = host_pace_moved(8.0, 10.0);
	CHECKF(s && strstr(s, "1.25x as fast") && strstr(s, "may hide part of a slowdown"), "%s",
	       s ?: "(none)");
	free(s);
	CHECK(!host_pace_moved(12.0, 10.0));
	CHECK(!host_pace_moved(8.5, 10.0));
	CHECK(!host_pace_moved(0, 10.0));
	CHECK(!host_pace_moved(10.0, 0));
	s = host_pace_unsteady(7.9, 13.4);
	CHECKF(s && strstr(s, "took 7.9 to 13.4 ns per load between its runs"), "%s", s ?: "(none)");
	free(s);
	CHECK(!host_pace_unsteady(8.0, 9.9));
	CHECK(!host_pace_unsteady(0, 13.4));
	s = host_pace_slow(11.9, 8.0);
	CHECKF(s && strstr(s, "recorded while the host ran slow") && strstr(s, "took 11.9 ns") &&
		       strstr(s, "1.49x the host's usual 8.0"),
	       "%s", s ?: "(none)");
	free(s);
	s = host_pace_slow(10.0, 8.0);
	CHECKF(s && strstr(s, "1.25x"), "%s", s ?: "(none)");
	free(s);
	CHECK(!host_pace_slow(9.9, 8.0));
	CHECK(!host_pace_slow(6.0, 8.0));
	CHECK(!host_pace_slow(11.9, 0));
	CHECK(!host_pace_slow(0, 8.0));
	/* back at the usual pace: two readings in a row under 1.25 times it (10.0 for 8.0) */
	CHECK(host_pace_back(9.9, 7.5, 8.0));
	CHECK(host_pace_back(6.0, 9.99, 8.0));
	CHECK(!host_pace_back(12.0, 7.5, 8.0)); /* one reading under it in a slow stretch */
	CHECK(!host_pace_back(7.5, 10.0, 8.0));
	CHECK(!host_pace_back(0, 7.5, 8.0)); /* no reading before this one */
	CHECK(!host_pace_back(7.5, 7.5, 0));
}

int main(void)
{
	test_parse();
	test_wait();
	test_target();
	test_pace_cycle();
	test_pace_read();
	test_pace_said();
	return tap_done("test-quiet");
}
