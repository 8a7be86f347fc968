// SPDX-License-Identifier: MIT
/*
 * The host's pace: a timed chase of dependent loads around a cycle that
 * fits a core's own cache. See host_pace.h.
 */
#include "daemon/host_pace.h"
#include "daemon/calibrate.h"
#include "daemon/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64*: the cycle's order, the same for every reading */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

void **host_pace_cycle(void *buf, size_t n, uint64_t seed)
{
	size_t *order = malloc(n * sizeof(*order));
	char *base = buf;
	size_t i;

	if (!order)
		abort();
	seed = seed ?: 1;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t j = next_random(&seed) % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++)
		*(void **)(base + order[i] * HOST_PACE_LINE) = base + order[(i + 1) % n] * HOST_PACE_LINE;
	base += order[0] * HOST_PACE_LINE;
	free(order);
	return (void **)base;
}

/* One walk of n loads from p; the last pointer, so that the walk is not optimized away. */
static void *walk(void **p, size_t n)
{
	while (n--)
		p = *p;
	return p;
}

static int first_cpu(const cpu_set_t *cpus)
{
	int c;

	for (c = 0; cpus && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus))
			return c;
	return -1;
}

int host_pace_read(const cpu_set_t *cpus, struct host_pace *ret)
{
	const size_t n = HOST_PACE_BYTES / HOST_PACE_LINE;
	uint64_t t0 = now_mono_ns(), best = UINT64_MAX;
	void *volatile sink;
	cpu_set_t was, one;
	void **start;
	void *buf;
	int cpu = first_cpu(cpus), k;

	if (cpu >= 0) {
		if (sched_getaffinity(0, sizeof(was), &was) < 0)
			return -errno;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			return -errno;
	}
	buf = aligned_alloc(HOST_PACE_LINE, HOST_PACE_BYTES);
	if (!buf) {
		if (cpu >= 0)
			(void)sched_setaffinity(0, sizeof(was), &was);
		return -ENOMEM;
	}
	start = host_pace_cycle(buf, n, 0x9e3779b97f4a7c15ULL);
	for (k = 0; k < HOST_PACE_TRIALS; k++) {
		uint64_t a;

		sink = walk(start, n); /* warm */
		a = now_mono_ns();
		sink = walk(start, n);
		a = now_mono_ns() - a;
		if (a < best)
			best = a;
	}
	(void)sink;
	free(buf);
	if (cpu >= 0 && sched_setaffinity(0, sizeof(was), &was) < 0)
		return -errno;
	*ret = (struct host_pace){ .ns_per_load = (double)best / (double)n, .cpu = cpu,
				   .took_ns = now_mono_ns() - t0 };
	return 0;
}

double host_pace_median(const double *ns, size_t n)
{
	_cleanup_free_ double *v = malloc((n ?: 1) * sizeof(*v));
	size_t i, got = 0;

	if (!v)
		abort();
	for (i = 0; i < n; i++)
		if (ns[i] > 0)
			v[got++] = ns[i];
	return got ? calib_median_sorting(v, got) : 0;
}

char *host_pace_moved(double now, double ref)
{
	double ratio;

	if (!(now > 0) || !(ref > 0))
		return NULL;
	ratio = now / ref;
	if (ratio >= HOST_PACE_MOVED)
		return xasprintf("the CPUs ran argusd's fixed memory loop %.2fx as slow as when the "
				 "reference was recorded (%.1f ns per load against %.1f): slower cores "
				 "(the host under a virtual machine, a lower clock, or work that slows "
				 "every core's caches), which no kernel path shows, may be part of the "
				 "slowdown",
				 ratio, now, ref);
	if (ratio <= 1 / HOST_PACE_MOVED)
		return xasprintf("the CPUs ran argusd's fixed memory loop %.2fx as fast as when the "
				 "reference was recorded (%.1f ns per load against %.1f): faster cores "
				 "may hide part of a slowdown",
				 1 / ratio, now, ref);
	return NULL;
}

char *host_pace_unsteady(double min, double max)
{
	if (!(min > 0) || !(max >= min * HOST_PACE_MOVED))
		return NULL;
	return xasprintf("the CPUs' own speed moved while the reference was recorded: argusd's "
			 "fixed memory loop took %.1f to %.1f ns per load between its runs, which "
			 "may be why they vary; a reference recorded at two speeds misjudges runs at "
			 "either, record it again when the machine is steady",
			 min, max);
}

char *host_pace_slow(double now, double usual)
{
	if (!(now > 0) || !(usual > 0) || !(now >= usual * HOST_PACE_MOVED))
		return NULL;
	return xasprintf("recorded while the host ran slow: argusd's fixed memory loop took %.1f ns "
			 "per load over its runs, %.2fx the host's usual %.1f (the median of argusd's "
			 "readings between jobs and of its references, over the last day on the same "
			 "CPU); a diagnosis against it would "
			 "not see a slowdown of that size: record it again when the host runs at its "
			 "usual speed",
			 now, now / usual, usual);
}

bool host_pace_back(double prev, double now, double usual)
{
	double bound = usual * HOST_PACE_MOVED;

	return usual > 0 && prev > 0 && now > 0 && prev < bound && now < bound;
}

json_t *host_pace_to_json(const struct host_pace *p)
{
	json_t *o = json_pack("{s:f,s:f}", "ns_per_load", round(p->ns_per_load * 100) / 100,
			      "took_ms", p->took_ns / 1e6);

	if (p->cpu >= 0)
		json_object_set_new(o, "cpu", json_integer(p->cpu));
	return o;
}
