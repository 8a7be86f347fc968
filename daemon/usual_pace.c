// SPDX-License-Identifier: MIT
/*
 * The host's usual pace: readings between jobs, kept a day, and the median
 * a reference is judged against. See usual_pace.h.
 */
#include "daemon/usual_pace.h"
#include "daemon/host_pace.h"
#include "daemon/jobs.h"
#include "daemon/log.h"
#include "daemon/store.h"
#include "daemon/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The fewest readings of the last day any CPU of cpus holds: the rounds the day already had. */
static unsigned rounds_stored(struct usual_pace_reader *rd, uint64_t since)
{
	double ns[USUAL_PACE_FIRST];
	size_t n, fewest = USUAL_PACE_FIRST;
	int c, r;

	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &rd->cpus))
			continue;
		r = store_pace_since(rd->store, rd->hostname, c, since, ns, USUAL_PACE_FIRST, &n);
		if (r < 0)
			return 0;
		if (n < fewest)
			fewest = n;
	}
	return (unsigned)fewest;
}

void usual_pace_chore(void *userdata)
{
	struct usual_pace_reader *rd = userdata;
	uint64_t now = now_mono_ns(), real = now_real_ns();
	uint64_t since = real > USUAL_PACE_DAY_NS ? real - USUAL_PACE_DAY_NS : 0;
	unsigned forgotten = 0, read = 0, tried = 0;
	int c, r;

	if (rd->last_ns == 0 && rd->next_cpu == 0)
		rd->rounds = rounds_stored(rd, since);
	if (rd->next_cpu == 0 && rd->rounds >= USUAL_PACE_FIRST && rd->last_ns &&
	    now - rd->last_ns < (uint64_t)rd->interval_s * 1000000000ull)
		return;
	for (c = rd->next_cpu; c < CPU_SETSIZE; c++) {
		struct host_pace hp;
		cpu_set_t one;

		if (!CPU_ISSET(c, &rd->cpus))
			continue;
		if (tried++ && rd->jobs && jobs_queued(rd->jobs) > 0) {
			rd->next_cpu = c;
			log_debug("host pace: a job waits; the round goes on at CPU %d next time", c);
			return;
		}
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		r = host_pace_read(&one, &hp);
		if (r < 0) {
			log_warning_errno(r, "host pace: reading it on CPU %d failed: %m", c);
			continue;
		}
		r = store_pace_add(rd->store, now_real_ns(), rd->hostname, c, hp.ns_per_load);
		if (r < 0)
			log_warning_errno(r, "host pace: storing a reading failed: %m");
		else
			read++;
	}
	rd->next_cpu = 0;
	rd->rounds++;
	rd->last_ns = now_mono_ns();
	if (store_pace_forget(rd->store, since, &forgotten) < 0)
		forgotten = 0;
	log_debug("host pace: %u reading(s) between jobs ending round %u; %u older than a day "
		  "forgotten",
		  read, rd->rounds, forgotten);
}

/* The references' share: their runs' median readings on cpu of the last day, into ns. */
static int reference_paces(struct store *s, const char *hostname, int cpu, uint64_t since,
			   double *ns, size_t *n)
{
	json_auto_t *list = NULL;
	const json_t *ref;
	char cutoff[32];
	size_t i;
	int r;

	r = store_reference_list(s, NULL, USUAL_PACE_REFERENCES, &list);
	if (r < 0)
		return r;
	format_iso8601(since, cutoff, sizeof(cutoff));
	json_array_foreach(json_object_get(list, "references"), i, ref)
	{
		const json_t *pcpu = json_object_get(ref, "host_pace_cpu");
		double pace = json_number_value(json_object_get(ref, "host_pace_ns"));

		if (strcmp(json_string_value(json_object_get(ref, "host")) ?: "", hostname) != 0 ||
		    strcmp(json_string_value(json_object_get(ref, "created")) ?: "", cutoff) < 0 ||
		    !json_is_integer(pcpu) || json_integer_value(pcpu) != cpu || !(pace > 0))
			continue;
		ns[(*n)++] = pace;
	}
	return 0;
}

int usual_pace_get(struct store *s, const char *hostname, int cpu, uint64_t now_real_ns,
		   struct usual_pace *ret)
{
	_cleanup_free_ double *ns = malloc((USUAL_PACE_READINGS + USUAL_PACE_REFERENCES) *
					   sizeof(*ns));
	uint64_t since = now_real_ns > USUAL_PACE_DAY_NS ? now_real_ns - USUAL_PACE_DAY_NS : 0;
	size_t readings = 0, n;
	int r;

	if (!ns)
		return -ENOMEM;
	r = store_pace_since(s, hostname, cpu, since, ns, USUAL_PACE_READINGS, &readings);
	if (r < 0)
		return r;
	n = readings;
	r = reference_paces(s, hostname, cpu, since, ns, &n);
	if (r < 0)
		return r;
	*ret = (struct usual_pace){ .ns = host_pace_median(ns, n), .readings = readings,
				    .references = n - readings };
	return 0;
}
