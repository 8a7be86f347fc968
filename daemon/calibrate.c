// SPDX-License-Identifier: MIT
/*
 * Reference calibration: scores of PMV against the K reference runs, and
 * the per-level decision of the descent (abstain, descend, commit). Pure
 * functions: no logging, no globals.
 */
#include "daemon/calibrate.h"
#include "daemon/config.h"
#include "daemon/util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WALL_METRIC "target/wall_ns"
#define THREAD_METRIC "target/thread_ns"
#define SLI_METRIC "target/sli_cost"
#define UNIT_CPU_METRIC "target/unit_cpu_ns"
#define CPU_METRIC "perf/task_clock_ns"
#define SYS_METRIC "target/sys_ns"
#define IDLE_METRIC "class/wait_idle/time_ns"
#define UNITS_METRIC "target/units"
#define WINDOW_NS_METRIC "target/window_ns"
#define WINDOW_EDGES_METRIC "target/window_edges"
#define PROCESSES_METRIC "target/processes"
#define THREADS_METRIC "target/threads"
/* below this share of the loss, the first path may be outgrown by another (outgrown_by) */
#define OUTGROWN_SHARE 0.5

void calib_params_default(struct calib_params *p)
{
	*p = (struct calib_params){
	    .tau = CONFIG_DEFAULT_TAU,
	    .rel_floor = 0.05,
	    .count_floor = 20.0,
	    .time_floor_ns = 2e6,
	    .min_slowdown = CONFIG_DEFAULT_MIN_SLOWDOWN,
	    .wall_rel_floor = 0.01,
	    .refute_z = 1.0,
	    .min_share = 0.10,
	    .cause_share = 0.30,
	    .sli_rel_floor = 0.02,
	    .false_flag_rate = CONFIG_DEFAULT_FALSE_FLAG_RATE,
	    .look_share = 1.0,
	    .runs = 1,
	    .robust = true,
	    .calibrated = true,
	};
}

void calib_params_configured(struct calib_params *p, const struct config *cfg)
{
	calib_params_default(p);
	p->tau = cfg->tau;
	p->min_slowdown = cfg->min_slowdown;
	p->false_flag_rate = cfg->false_flag_rate;
}

const char *calib_action_name(enum calib_action a)
{
	switch (a) {
	case CALIB_ABSTAIN:
		return "abstain";
	case CALIB_DESCEND:
		return "descend";
	case CALIB_COMMIT:
		return "commit";
	}
	return "unknown";
}

/* delta / spread, with a zero spread (floors disabled) giving +-inf or 0. */
static double ratio(double delta, double spread)
{
	if (spread > 0)
		return delta / spread;
	if (delta == 0)
		return 0;
	return delta > 0 ? INFINITY : -INFINITY;
}

/* A seeded source of standard normal draws: splitmix64, then Box-Muller. */
struct normal_draws {
	uint64_t state;
	double spare;
	bool has_spare;
};

static double uniform01(struct normal_draws *g)
{
	uint64_t z = (g->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0; /* in (0, 1) */
}

static double normal(struct normal_draws *g)
{
	double r, a;

	if (g->has_spare) {
		g->has_spare = false;
		return g->spare;
	}
	r = sqrt(-2.0 * log(uniform01(g)));
	a = 2.0 * M_PI * uniform01(g);
	g->spare = r * sin(a);
	g->has_spare = true;
	return r * cos(a);
}

static int by_value(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double calib_median_sorting(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The centre of k runs and their unscaled noise: the mean and sample sd of
 * the runs, robust leaving out the one farthest from their median, so that
 * a single run that something else on the machine disturbed moves neither.
 * Only with runs to spare (TRIM_MIN_RUNS): the sd of the two closest of
 * three runs says little, and a reference whose runs disagree is recorded
 * again (reference.c). work holds k values.
 */
#define TRIM_MIN_RUNS 5

static void centre_noise(bool robust, const double *ref, size_t k, double *work,
			 double *ret_centre, double *ret_noise)
{
	double centre = 0, ss = 0, median;
	size_t i, n = 0, far = k;

	if (robust && k >= TRIM_MIN_RUNS) {
		memcpy(work, ref, k * sizeof(*work));
		median = calib_median_sorting(work, k);
		far = 0;
		for (i = 1; i < k; i++)
			if (fabs(ref[i] - median) > fabs(ref[far] - median))
				far = i;
	}
	for (i = 0; i < k; i++)
		if (i != far)
			work[n++] = ref[i];
	for (i = 0; i < n; i++)
		centre += work[i] / (double)n;
	for (i = 0; i < n; i++)
		ss += (work[i] - centre) * (work[i] - centre);
	*ret_centre = centre;
	*ret_noise = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

#define NULL_DRAWS 4096
#define NULL_SEED 0x61726775732d6e75ULL
#define NULL_KMAX 64

static size_t runs_of(const struct calib_params *p)
{
	return p->runs ? p->runs : 1;
}

/*
 * The mean over the simulated references of P(X > centre + t noise / sqrt(runs)),
 * X the mean of runs draws of N(0, 1): P(Z > sqrt(runs) centre + t noise).
 */
static double tail_beyond(const double *centre, const double *noise, size_t n, double t,
			  size_t runs)
{
	double sum = 0, root = sqrt((double)runs);
	size_t i;

	for (i = 0; i < n; i++)
		sum += 0.5 * erfc((root * centre[i] + t * noise[i]) / M_SQRT2);
	return sum / (double)n;
}

void calib_null_for(const struct calib_params *p, size_t k, size_t n_tests, struct calib_null *ret)
{
	struct normal_draws g = {.state = NULL_SEED ^ (uint64_t)k ^ ((uint64_t)p->robust << 32)};
	double run[NULL_KMAX], work[NULL_KMAX], noise_sum = 0, p_tail, lo, hi;
	_cleanup_free_ double *centre = NULL, *noise = NULL;
	size_t i, j;

	*ret = (struct calib_null){.noise_scale = 1, .threshold = p->tau};
	/* the plain sd against tau needs nothing from the null */
	if (k < 2 || (!p->robust && !(p->false_flag_rate > 0)))
		return;
	/* more runs than simulated: their estimate is as good as NULL_KMAX's, or better */
	k = k < NULL_KMAX ? k : NULL_KMAX;
	centre = calloc(NULL_DRAWS, sizeof(*centre));
	noise = calloc(NULL_DRAWS, sizeof(*noise));
	if (!centre || !noise)
		return;
	for (i = 0; i < NULL_DRAWS; i++) {
		for (j = 0; j < k; j++)
			run[j] = normal(&g);
		centre_noise(p->robust, run, k, work, &centre[i], &noise[i]);
		noise_sum += noise[i];
	}
	if (p->robust)
		ret->noise_scale = (double)NULL_DRAWS / noise_sum;
	if (!(p->false_flag_rate > 0))
		return;
	for (i = 0; i < NULL_DRAWS; i++)
		noise[i] *= ret->noise_scale;
	p_tail = p->false_flag_rate * (p->look_share > 0 ? p->look_share : 1) /
		 (double)(n_tests ? n_tests : 1);
	if (tail_beyond(centre, noise, NULL_DRAWS, p->tau, runs_of(p)) <= p_tail)
		return;
	/* the tail falls as t grows: bisect on log t between tau and a bound that is past it */
	lo = p->tau;
	hi = p->tau * 2;
	while (hi < 1e6 && tail_beyond(centre, noise, NULL_DRAWS, hi, runs_of(p)) > p_tail)
		hi *= 2;
	for (i = 0; i < 40 && hi / lo > 1.001; i++) {
		double mid = sqrt(lo * hi);

		if (tail_beyond(centre, noise, NULL_DRAWS, mid, runs_of(p)) > p_tail)
			lo = mid;
		else
			hi = mid;
	}
	ret->threshold = hi;
}

double calib_runs_cv(const struct calib_params *p, const struct mvec *runs, size_t n,
		     const char *metric)
{
	_cleanup_free_ double *vals = calloc(n ? n : 1, sizeof(double));
	_cleanup_free_ double *work = calloc(n ? n : 1, sizeof(double));
	struct calib_null nul;
	double centre, noise;
	size_t i, k = 0;

	if (!vals || !work)
		abort();
	for (i = 0; i < n; i++) {
		const double *x = mvec_get(&runs[i], metric);

		if (x && isfinite(*x))
			vals[k++] = *x;
	}
	if (k < 2)
		return 0;
	centre_noise(p->robust, vals, k, work, &centre, &noise);
	calib_null_for(p, k, 1, &nul);
	return centre != 0 ? noise * nul.noise_scale / fabs(centre) : 0;
}

void calib_score_metric(const struct calib_params *p, const struct calib_null *null,
			const char *metric, bool is_time, const double *ref, size_t k, double value,
			struct calib_score *ret)
{
	_cleanup_free_ double *work = calloc(k ? k : 1, sizeof(double));
	double centre = 0, noise = 0, floor, spread;
	struct calib_null alone;
	bool refs_finite = true, finite;
	size_t i;

	for (i = 0; i < k; i++)
		refs_finite = refs_finite && isfinite(ref[i]);
	finite = refs_finite && isfinite(value);
	if (!null) {
		calib_null_for(p, k, 1, &alone);
		null = &alone;
	}
	/* the reference's centre is reported beside a broken value, as it was measured */
	if (k > 0 && work && refs_finite) {
		centre_noise(p->robust, ref, k, work, &centre, &noise);
		noise *= null->noise_scale;
	}

	*ret = (struct calib_score){
	    .metric = xstrdup(metric),
	    .centre = centre,
	    .value = value,
	    .delta = value - centre,
	    .noise = noise,
	    .threshold = null->threshold,
	    .share = NAN,
	};
	if (!finite) {
		/* A broken measurement is reported, never flagged. */
		ret->spread = noise;
		ret->z = 0;
		return;
	}
	floor = fmax(p->rel_floor * fabs(centre), is_time ? p->time_floor_ns : p->count_floor);
	/* the ablation leaves the reference runs' spread out, and nothing else */
	spread = p->calibrated
		     ? fmax(floor, noise / sqrt((double)runs_of(p)) * null->threshold / p->tau)
		     : floor;
	ret->spread = spread;
	ret->z = ratio(ret->delta, spread);
	ret->flagged = ret->z > p->tau;
}

static void score_clear(struct calib_score *s)
{
	free(s->metric);
	s->metric = NULL;
}

void calib_decision_free(struct calib_decision *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n_scores; i++)
		score_clear(&d->scores[i]);
	free(d->scores);
	free(d->reason);
	d->scores = NULL;
	d->n_scores = 0;
	d->reason = NULL;
}

static void decision_freep(struct calib_decision *d)
{
	calib_decision_free(d);
}

/* "2.41 s", "812.3 ms": values of one metric share the unit of the largest. */
static const char *time_unit(double magnitude, double *ret_div, int *ret_prec)
{
	magnitude = fabs(magnitude);
	if (magnitude >= 1e9) {
		*ret_div = 1e9;
		*ret_prec = 2;
		return "s";
	}
	if (magnitude >= 1e6) {
		*ret_div = 1e6;
		*ret_prec = 1;
		return "ms";
	}
	if (magnitude >= 1e3) {
		*ret_div = 1e3;
		*ret_prec = 1;
		return "us";
	}
	*ret_div = 1;
	*ret_prec = 0;
	return "ns";
}

/*
 * "time_ns 2.41 s vs 0.01 +- 0.00 s (z 812.4)", "count 1500 vs 1200.0 +- 60.0
 * (z 5.0)"; per (a service's unit of work, NULL: none) after the label:
 * "time_ns per CPU-second 0.05 s vs ...".
 */
static char *describe(const char *metric, bool is_time, const char *per,
		      const struct calib_score *s)
{
	_cleanup_free_ char *label = per ? xasprintf("%s per %s", metric, per) : xstrdup(metric);

	if (is_time) {
		double div, small = fmin(fabs(s->value), fabs(s->centre));
		int prec;
		const char *unit = time_unit(fmax(fabs(s->value), fabs(s->centre)), &div, &prec);

		/* the smaller of the two to two digits at least: 21 ms beside 1.01 s reads 0.021 s */
		while (small > 0 && prec < 4 && small / div < 10 * pow(10, -prec))
			prec++;
		if (s->expected > 0)
			return xasprintf("%s %.*f %s vs %.*f +- %.*f %s, %.*f %s expected from the "
					 "rest of the run's slowdown (z %.1f)",
					 label, prec, s->value / div, unit, prec, s->centre / div,
					 prec, s->spread / div, unit, prec, s->expected / div, unit,
					 s->z);
		return xasprintf("%s %.*f %s vs %.*f +- %.*f %s (z %.1f)", label, prec,
				 s->value / div, unit, prec, s->centre / div, prec, s->spread / div,
				 unit, s->z);
	}
	return xasprintf("%s %.0f vs %.1f +- %.1f (z %.1f)", label, s->value, s->centre, s->spread,
			 s->z);
}

static bool metric_is_time(const char *m)
{
	return strcmp(m, "time_ns") == 0;
}

/*
 * A count as a reader takes it in: from 10 up to prec decimals, as a run
 * has them; under 10 (a service's count per request, 0.5 against 0.013)
 * to three significant figures, where those decimals would print 1 vs 0.0.
 */
static char *count_number(double v, int prec)
{
	return fabs(v) >= 10 ? xasprintf("%.*f", prec, v) : xasprintf("%.3g", v);
}

/*
 * What a path's count says of its time (the score time, "NODE/time_ns"):
 * whether it ran more often (or less: beyond tau spreads either way) or
 * each run took longer. "count 9612 vs 9500.0 +- 120.0: as many, 15.7 us
 * each vs 6.8 us"; NULL when the level has no count for the path, or none
 * ran.
 */
static char *describe_each(const struct calib_decision *d, const struct calib_score *time,
			   double tau)
{
	size_t len = strrchr(time->metric, '/') - time->metric, i;
	const struct calib_score *c = NULL;
	_cleanup_free_ char *value = NULL, *centre = NULL, *spread = NULL;
	double div, now, was;
	const char *unit, *how;
	int prec;

	for (i = 0; i < d->n_scores && !c; i++)
		if (strncmp(d->scores[i].metric, time->metric, len) == 0 &&
		    strcmp(d->scores[i].metric + len, "/count") == 0)
			c = &d->scores[i];
	if (!c || !(c->value > 0) || !(c->centre > 0) || !isfinite(time->value))
		return NULL;
	now = time->value / c->value;
	was = time->centre / c->centre;
	unit = time_unit(fmax(now, was), &div, &prec);
	how = c->flagged ? "more of them" : c->z < -tau ? "fewer of them" : "as many";
	value = count_number(c->value, 0);
	centre = count_number(c->centre, 1);
	spread = count_number(c->spread, 1);
	return xasprintf("count %s vs %s +- %s: %s, %.*f %s each vs %.*f %s", value, centre, spread,
			 how, prec, now / div, unit, prec, was / div, unit);
}

/*
 * Gather metric from every reference run and the PMV. False when any of
 * them lacks it: such a metric is not scored.
 */
static bool gather(const char *metric, const struct mvec *ref, size_t k, const struct mvec *pmv,
		   double *vals, double *ret_value)
{
	const double *v;
	size_t i;

	for (i = 0; i < k; i++) {
		v = mvec_get(&ref[i], metric);
		if (!v)
			return false;
		vals[i] = *v;
	}
	v = mvec_get(pmv, metric);
	if (!v)
		return false;
	*ret_value = *v;
	return true;
}

/*
 * The growth of a run's time outside a path of centre path_ref and value
 * path now: between 1 and the whole run's, and at most the level above's
 * (params.rest_above).
 */
static double rest_ratio(const struct calib_params *p, double run_centre, double run_value,
			 double path_ref, double path)
{
	double whole = fmax(1.0, run_value / run_centre), ratio = whole;
	double rest_ref = run_centre - path_ref, rest = run_value - path;

	if (rest_ref > 0 && rest > 0)
		ratio = fmin(whole, fmax(1.0, rest / rest_ref));
	return p->rest_above > 0 ? fmin(ratio, fmax(1.0, p->rest_above)) : ratio;
}

/*
 * z of a time metric from the slowdown of the rest of the run: what the
 * path would take had it grown only as much as the run's time outside it,
 * (run - path) / (run_ref - path_ref), between 1 and the whole run's
 * ratio. Judging a path against the whole run's ratio would count its own
 * growth as the norm: a path that is most of the run could barely rise
 * above it. The run's time is the target's thread time when the probe
 * counted it (a path's time is summed over threads, so four threads
 * waiting on one CPU hold more of it than the wall), else the wall time,
 * less its shadows (slower_run_time) and the paths that did other work
 * (run_without_other_work). When the path is not inside it, the whole
 * run's ratio is all there is.
 */
static void judge_against_slowdown(const struct calib_params *p, struct calib_score *s,
				   double run_centre, double run_value)
{
	s->expected = s->centre * rest_ratio(p, run_centre, run_value, s->centre, s->value);
	s->z = s->spread > 0 ? (s->value - s->expected) / s->spread : 0;
	s->flagged = s->z > p->tau;
}

/* The centre of metric over the reference runs and its value now; false when any lacks it. */
static bool gather_centre(const struct calib_params *p, const char *metric,
			  const struct mvec *ref, size_t k, const struct mvec *pmv, double *vals,
			  double *ret_centre, double *ret_value)
{
	_cleanup_free_ double *work = calloc(k, sizeof(double));
	double noise;

	if (!work || !gather(metric, ref, k, pmv, vals, ret_value))
		return false;
	centre_noise(p->robust, vals, k, work, ret_centre, &noise);
	return true;
}

/*
 * The params a service's paths are judged by per request (params.
 * per_request): the absolute spread floors (time_floor_ns, count_floor)
 * are the least change worth naming in a run of about a second, and in a
 * CPU-second of a service's work; a request takes a share of that, its
 * CPU time in the reference, and its paths' times are that much smaller
 * (microseconds where a CPU-second's are milliseconds), so the floors
 * scale with it: unscaled, a floor of 2 ms a request would hide every
 * path. p itself for any other unit, or without the reference's CPU time
 * per request.
 */
static const struct calib_params *per_request_floors(const struct calib_params *p,
						      const struct mvec *ref, size_t k,
						      const struct mvec *pmv, double *vals,
						      struct calib_params *scaled)
{
	double cpu, cpu_now, share;

	if (!p->per_request ||
	    !gather_centre(p, UNIT_CPU_METRIC, ref, k, pmv, vals, &cpu, &cpu_now) || !(cpu > 0))
		return p;
	share = fmin(cpu / 1e9, 1.0);
	*scaled = *p;
	scaled->time_floor_ns = p->time_floor_ns * share;
	scaled->count_floor = p->count_floor * share;
	return scaled;
}

/*
 * A slower target's time metrics: the share of the loss (d->loss) each path
 * took. One below min_share, or whose added time is under d->material (by
 * itself it would not have made the target min_slowdown slower), is not
 * flagged: it did not cost the target its time. Returns the index of the
 * largest such z, or -1.
 */
static int judge_share(const struct calib_params *p, struct calib_decision *d)
{
	int dismissed = -1;
	size_t i;

	for (i = 0; i < d->n_scores; i++) {
		struct calib_score *s = &d->scores[i];
		const char *metric = strrchr(s->metric, '/');

		if ((int)i == d->wall || !metric || !metric_is_time(metric + 1))
			continue;
		s->share = s->delta / d->loss;
		if (s->flagged && (s->share < p->min_share || s->delta < d->material)) {
			s->flagged = false;
			if (dismissed < 0 || s->z > d->scores[dismissed].z)
				dismissed = (int)i;
		}
	}
	return dismissed;
}

/*
 * What a service's worse SLI cost it, as time per unit of its work: its
 * CPU time per unit in the reference ("target/unit_cpu_ns") times the
 * SLI's relative change in cost, a latency's growth or, for a throughput,
 * the growth of the time each request took (before / now - 1). The
 * service's time per unit is its CPU time and its waits, so this is the
 * least the loss can be and a path's share of it errs high: a path under
 * min_share of even this is not where the service lost its time. NAN
 * without the CPU time, or when the SLI fell to nothing or changed sign.
 */
static double sli_loss(const struct calib_params *p, const struct mvec *ref, size_t k,
		       const struct mvec *pmv, double *vals, const struct calib_score *w)
{
	double cpu, cpu_now, rel = NAN;

	if (!gather_centre(p, UNIT_CPU_METRIC, ref, k, pmv, vals, &cpu, &cpu_now) || cpu <= 0)
		return NAN;
	if (w->centre > 0 && w->value > 0)
		rel = w->value / w->centre - 1;
	else if (w->centre < 0 && w->value < 0)
		rel = w->centre / w->value - 1;
	return isfinite(rel) && rel > 0 ? rel * cpu : NAN;
}

/*
 * The least time a path must add to be a cause by itself: min_slowdown of
 * the reference's wall time (d's wall score), or for a service of its
 * CPU time per unit of work, the least its time per unit can be. A run
 * slower for reasons the probe does not see (a slower host, work outside
 * the tree) can carry a path that grew by less: naming it would blame a
 * path that alone would not have made the target slower. 0 without the
 * service's CPU time: min_share alone then.
 */
static double material_time(const struct calib_params *p, const struct mvec *ref, size_t k,
			    const struct mvec *pmv, double *vals, const struct calib_decision *d)
{
	double cpu, cpu_now;

	if (!d->wall_is_sli)
		return p->min_slowdown * d->scores[d->wall].centre;
	if (!gather_centre(p, UNIT_CPU_METRIC, ref, k, pmv, vals, &cpu, &cpu_now) || cpu <= 0)
		return 0;
	return p->min_slowdown * cpu;
}

/* Per active node: where its scores are, and how it ranks. */
struct node_eval {
	int node;
	int time_score;	 /* index into scores, -1 when not scored */
	int count_score; /* index into scores, -1 when not scored */
	bool flagged;
	int rank_class; /* 0 ranks before 1 */
	double key;	/* larger first within a class */
	int evidence;	/* the score that ranks it */
};

/* The run's time that a path's time is judged against; centre 0 when not slower. */
struct run_time {
	double centre, value;
};

/*
 * The target's time that no path owns and that is not the target's own
 * work (bpf/paths.h): its threads' waits on one another (a runqueue wait
 * while its own thread ran, a futex wait its own thread ended), which
 * mirror time counted where the other thread spent it, and the sleep in a
 * wait for events, which loses nothing and lasts as long as the run does.
 */
static const char *const shadow_metrics[] = {
    "class/runq_own/time_ns",
    "class/futex_own/time_ns",
    IDLE_METRIC,
};

/*
 * A slower run (with wall times: running targets have none): its thread
 * time when the reference and the run both have it, else its wall time,
 * less the shadows above where both have them: a second thread waiting for
 * the first would otherwise grow the rest of the run by whatever a path of
 * the first took, and discount that path by its own growth.
 */
static struct run_time slower_run_time(const struct calib_params *p, const struct mvec *ref,
				       size_t k, const struct mvec *pmv, double *vals)
{
	struct run_time rt = {}, rest;
	double centre, value;
	size_t i;

	if (!gather_centre(p, WALL_METRIC, ref, k, pmv, vals, &centre, &value) ||
	    centre <= 0 || value <= centre)
		return rt;
	rt = (struct run_time){centre, value};
	if (gather_centre(p, THREAD_METRIC, ref, k, pmv, vals, &centre, &value) && centre > 0)
		rt = (struct run_time){centre, value};
	rest = rt;
	for (i = 0; i < ARRAY_SIZE(shadow_metrics); i++)
		if (gather_centre(p, shadow_metrics[i], ref, k, pmv, vals, &centre, &value)) {
			rest.centre -= centre;
			rest.value -= value;
		}
	return rest.centre > 0 && rest.value > 0 ? rest : rt;
}

/*
 * A path whose events grew in number did other work, not the same work
 * slower with everything else: its time is judged against its own
 * reference, not against the rest of the run.
 */
static bool did_other_work(const struct calib_decision *d, const struct node_eval *e)
{
	return e->count_score >= 0 && d->scores[e->count_score].flagged;
}

/*
 * The run's time that the other paths' growth is measured against: less
 * the time of the paths that did other work, whose growth is their own and
 * not a slowdown of everything else (counted in, it would set the norm that
 * a path growing beside them is discounted by, and the path that did other
 * work, judged against its own reference, would outrank it on the same
 * added time). The whole run when nothing is left.
 */
static struct run_time run_without_other_work(const struct calib_decision *d,
					      const struct node_eval *ev, size_t n_active,
					      struct run_time rt)
{
	struct run_time rest = rt;
	size_t i;

	for (i = 0; i < n_active; i++) {
		const struct calib_score *s;

		if (ev[i].time_score < 0 || !did_other_work(d, &ev[i]))
			continue;
		s = &d->scores[ev[i].time_score];
		rest.centre -= s->centre;
		rest.value -= s->value;
	}
	return rest.centre > 0 && rest.value > 0 ? rest : rt;
}

/* Score every declared metric of every active node, in node order; the largest z's index. */
static int score_nodes(const struct calib_params *p, const struct tree *t, const int *active,
		       size_t n_active, const struct mvec *ref, size_t k, const struct mvec *pmv,
		       struct run_time rt, double *vals, struct calib_decision *d,
		       struct node_eval *ev)
{
	struct calib_null nul;
	const struct calib_null *null = &nul;
	int largest = -1;
	size_t i, m, n_tests = 0;

	/* every declared metric of the level is a test, scored or not: the threshold errs high */
	for (i = 0; i < n_active; i++)
		n_tests += t->nodes[active[i]].n_metrics;
	calib_null_for(p, k, n_tests, &nul);

	for (i = 0; i < n_active; i++) {
		const struct tree_node *n = &t->nodes[active[i]];

		ev[i] = (struct node_eval){
		    .node = active[i], .time_score = -1, .count_score = -1, .evidence = -1};
		for (m = 0; m < n->n_metrics; m++) {
			_cleanup_free_ char *id = xasprintf("%s/%s", n->id, n->metrics[m]);
			bool is_time = metric_is_time(n->metrics[m]);
			int si = (int)d->n_scores;
			double value;

			if (!gather(id, ref, k, pmv, vals, &value))
				continue;
			calib_score_metric(p, null, id, is_time, vals, k, value,
					   &d->scores[d->n_scores++]);
			if (is_time)
				ev[i].time_score = si;
			else
				ev[i].count_score = si;
		}
	}
	if (rt.centre > 0) {
		struct run_time rest = run_without_other_work(d, ev, n_active, rt);

		d->rest_others = rest_ratio(p, rest.centre, rest.value, 0, 0);
		for (i = 0; i < n_active; i++)
			if (ev[i].time_score >= 0 && !did_other_work(d, &ev[i]))
				judge_against_slowdown(p, &d->scores[ev[i].time_score], rest.centre,
						       rest.value);
	}
	for (i = 0; i < d->n_scores; i++)
		if (largest < 0 || d->scores[i].z > d->scores[largest].z)
			largest = (int)i;
	return largest;
}

/* A time's excess over what the rest of the run predicts, or its increase when nothing is. */
static double excess(const struct calib_score *s)
{
	return s->expected > 0 ? s->value - s->expected : s->delta;
}

/*
 * How much less CPU time the target's own work took than in its reference
 * (1 - now / centre), NAN without its CPU time. At least min_slowdown: the
 * host's cores, or the target's, ran slower while the reference was
 * recorded.
 */
static double cpu_fall(const struct calib_params *p, const struct mvec *ref, size_t k,
		       const struct mvec *pmv, double *vals)
{
	double cpu, cpu_now;

	if (!gather_centre(p, CPU_METRIC, ref, k, pmv, vals, &cpu, &cpu_now) || !(cpu > 0))
		return NAN;
	return 1 - cpu_now / cpu;
}

/*
 * The index in d->scores of the path time, flagged, that grew most, by bar
 * at least (excess); -1 when none did.
 */
static int grew_most(const struct calib_decision *d, double bar)
{
	int top = -1;
	size_t i;

	for (i = 0; i < d->n_scores; i++) {
		const struct calib_score *s = &d->scores[i];
		const char *metric = strrchr(s->metric, '/');

		if ((int)i == d->wall || !s->flagged || !metric || !metric_is_time(metric + 1) ||
		    !(excess(s) >= bar))
			continue;
		if (top < 0 || excess(s) > excess(&d->scores[top]))
			top = (int)i;
	}
	return top;
}

/*
 * A run more than min_slowdown slower whose wall time a noisy reference's
 * spread hides is slower all the same where a path's own time, flagged
 * against its own spread, grew by at least min_slowdown of the reference's
 * wall time: the loss is measured where it went, which the wall time
 * alone cannot tell from the reference runs' scatter.
 *
 * A run whose wall time grew by less than min_slowdown, or not at all,
 * while its own work took at least min_slowdown less CPU time than in the
 * reference (cpu_fall: the reference was recorded while the host's cores
 * or the target's ran slow), is slower where a path grew by twice
 * min_slowdown of the reference's time (its wall, or its threads' lives
 * summed when they are more: a path's time is summed over threads). The
 * wall and the path disagree; the path is believed when it would be a
 * slowdown even had the rest of the run been min_slowdown faster than in
 * the reference. A target whose work did not run faster (a path's time
 * spent where it would have slept) is left to its wall.
 *
 * A service's SLI worse by more than min_slowdown is, in the same way,
 * shown by a path whose time per unit of work grew by at least what the
 * worse SLI cost it at the least (sli_loss: its CPU time per unit, the
 * least its time per unit can be, times the SLI's change in cost; above
 * min_slowdown of that CPU time, since the SLI's change is); without its
 * CPU time the SLI is left to its z.
 *
 * Flags the wall score and names the largest such path's score in
 * d->slower_by.
 */
static void slower_by_path(const struct calib_params *p, const struct mvec *ref, size_t k,
			   const struct mvec *pmv, double *vals, struct calib_decision *d,
			   double wall_rel)
{
	struct calib_score *w = d->wall >= 0 ? &d->scores[d->wall] : NULL;
	double bar, fall = NAN, threads, threads_now;

	if (!w || w->flagged || (d->wall_is_sli && !(wall_rel > p->min_slowdown)))
		return;
	if (d->wall_is_sli)
		bar = sli_loss(p, ref, k, pmv, vals, w);
	else if (!(w->centre > 0))
		bar = NAN;
	else if (wall_rel > p->min_slowdown)
		bar = p->min_slowdown * w->centre;
	else if (!((fall = cpu_fall(p, ref, k, pmv, vals)) >= p->min_slowdown))
		bar = NAN;
	else if (gather_centre(p, THREAD_METRIC, ref, k, pmv, vals, &threads, &threads_now))
		bar = 2 * p->min_slowdown * fmax(w->centre, threads);
	else
		bar = 2 * p->min_slowdown * w->centre;
	if (!(bar > 0))
		return;
	d->slower_by = grew_most(d, bar);
	w->flagged = d->slower_by >= 0;
	if (w->flagged)
		d->cpu_fall = fall;
}

/*
 * The target's wall time as the level's last score (d->wall), "flagged"
 * meaning slower: beyond tau and min_slowdown (or shown by a path,
 * slower_by_path). Returns the relative increase; d->wall stays -1
 * without wall times.
 */
static double score_wall(const struct calib_params *p, const struct mvec *ref, size_t k,
			 const struct mvec *pmv, double *vals, struct calib_decision *d)
{
	struct calib_params wp = *p;
	struct calib_score *w;
	double value, rel;

	if (gather(WALL_METRIC, ref, k, pmv, vals, &value)) {
		d->wall = (int)d->n_scores++;
		w = &d->scores[d->wall];
		wp.rel_floor = p->wall_rel_floor;
		calib_score_metric(&wp, NULL, WALL_METRIC, true, vals, k, value, w);
	} else if (gather(SLI_METRIC, ref, k, pmv, vals, &value)) {
		/* a throughput's cost is its negative: the centre's magnitude is the scale */
		d->wall = (int)d->n_scores++;
		d->wall_is_sli = true;
		w = &d->scores[d->wall];
		wp.rel_floor = p->sli_rel_floor;
		wp.count_floor = 0;
		calib_score_metric(&wp, NULL, SLI_METRIC, false, vals, k, value, w);
	} else {
		return 0;
	}
	rel = w->centre != 0 ? w->delta / fabs(w->centre) : (w->delta > 0 ? INFINITY : 0);
	w->flagged = w->flagged && rel > p->min_slowdown;
	slower_by_path(p, ref, k, pmv, vals, d, rel);
	return rel;
}

int calib_score_wall(const struct calib_params *p, const struct mvec *ref, size_t k,
		     const struct mvec *pmv, struct calib_score *ret)
{
	struct calib_decision d = {
	    .node = -1, .evidence = -1, .wall = -1, .slower_by = -1, .cpu_fall = NAN,
	    .cpu_added = NAN, .sys_added = NAN, .idle_share = NAN, .idle_share_ref = NAN,
	    .idle_added = NAN, .tasks = NAN, .tasks_ref = NAN};
	_cleanup_free_ double *vals = calloc(k ? k : 1, sizeof(double));
	struct calib_score score = {};

	*ret = (struct calib_score){};
	if (!vals)
		return -ENOMEM;
	d.scores = &score;
	score_wall(p, ref, k, pmv, vals, &d);
	if (d.wall < 0)
		return -ENOENT;
	*ret = score;
	return 0;
}

/*
 * The gate: a path that changed without slowing the target is not named.
 * Every level is a run of its own, so a deeper level must see the slowdown
 * again before anything below is named on its evidence. CALIB_WHY_NONE
 * when the level goes on to ranking.
 */
static enum calib_why gate(const struct calib_params *p, struct calib_decision *d, int parent,
			   double wall_rel)
{
	const struct calib_score *w = d->wall >= 0 ? &d->scores[d->wall] : NULL;

	if (!w || w->flagged)
		return CALIB_WHY_NONE;
	if (parent >= 0) {
		d->unconfirmed = true;
		d->refuted = w->z < p->refute_z;
		return CALIB_WHY_NOT_REPRODUCED;
	}
	return w->z > p->tau &&
		       wall_rel <= p->min_slowdown
		   ? CALIB_WHY_BELOW_MIN_SLOWDOWN
		   : CALIB_WHY_NOT_SLOWER;
}

/*
 * Calibrated ranking: a flagged time first, by its excess over what the
 * rest of the run predicts (its increase when nothing is predicted), in ns:
 * exclusive thread time compares across nodes. A count leads only where the
 * node's time is not measured: a path that did more without taking more
 * time is not where the time went.
 */
static void rank_node(const struct calib_score *ts, const struct calib_score *cs,
			    struct node_eval *e)
{
	if (ts && ts->flagged)
		*e = (struct node_eval){e->node,
					e->time_score,
					e->count_score,
					true,
					0,
					excess(ts),
					e->time_score};
	else if (!ts && cs && cs->flagged)
		*e = (struct node_eval){e->node, e->time_score, e->count_score, true, 1, cs->z,
					e->count_score};
}

static bool ranks_before(const struct node_eval *a, const struct node_eval *b)
{
	if (a->rank_class != b->rank_class)
		return a->rank_class < b->rank_class;
	return a->key > b->key;
}

/* Flag and rank the active nodes; the top one, or NULL. Ties keep active[] order. */
static const struct node_eval *rank_nodes(const struct calib_decision *d, struct node_eval *ev,
					  size_t n_active)
{
	const struct node_eval *top = NULL;
	size_t i;

	for (i = 0; i < n_active; i++) {
		struct node_eval *e = &ev[i];
		const struct calib_score *ts = e->time_score >= 0 ? &d->scores[e->time_score] : NULL;
		const struct calib_score *cs =
		    e->count_score >= 0 ? &d->scores[e->count_score] : NULL;

		rank_node(ts, cs, e);
		if (e->flagged && (!top || ranks_before(e, top)))
			top = e;
	}
	return top;
}

/*
 * The second cause beside top: the next flagged node whose time score is
 * flagged with at least cause_share of the added wall time, as top's is.
 */
static void second_cause(const struct calib_params *p, const struct calib_decision *d,
			 const struct node_eval *ev, size_t n_active, const struct node_eval *top,
			 struct calib_decision *ret)
{
	const struct node_eval *next = NULL;
	size_t i;

	if (!top || top->time_score < 0 ||
	    !d->scores[top->time_score].flagged || !(d->scores[top->time_score].share >= p->cause_share))
		return;
	for (i = 0; i < n_active; i++) {
		const struct node_eval *e = &ev[i];
		const struct calib_score *s = e->time_score >= 0 ? &d->scores[e->time_score] : NULL;

		if (e == top || !e->flagged || !s || !s->flagged || !(s->share >= p->cause_share))
			continue;
		if (!next || ranks_before(e, next))
			next = e;
	}
	if (next) {
		ret->has_also = true;
		ret->also = next->node;
		ret->also_evidence = next->time_score;
	}
}

/*
 * A path is named as where the time went only when no other path may have
 * taken more of it. When the one ranked first explains less than half of
 * the target's added time, the rest went elsewhere: if another path, not
 * flagged (within its spread), grew by more than the first's excess (its
 * own excess over what the rest of the run predicts, or its increase when
 * nothing is predicted), the level cannot tell which took the time. That
 * path, the one that grew the most, or NULL.
 */
static const struct node_eval *outgrown_by(const struct calib_decision *d,
					   const struct node_eval *ev, size_t n_active,
					   const struct node_eval *top)
{
	const struct calib_score *ts;
	const struct node_eval *most = NULL;
	double most_key = 0;
	size_t i;

	if (!top || top->rank_class != 0 || top->time_score < 0)
		return NULL;
	ts = &d->scores[top->time_score];
	if (!(ts->share < OUTGROWN_SHARE))
		return NULL;
	for (i = 0; i < n_active; i++) {
		const struct calib_score *s =
		    ev[i].time_score >= 0 ? &d->scores[ev[i].time_score] : NULL;
		double key;

		if (&ev[i] == top || !s || s->flagged || !isfinite(s->value))
			continue;
		key = excess(s);
		if (key > top->key && (!most || key > most_key)) {
			most = &ev[i];
			most_key = key;
		}
	}
	return most;
}

/* The action, node and evidence that follow from the ranking. */
static void decide(const struct tree *t, const struct node_eval *top, int parent, int largest,
		   int dismissed, struct calib_decision *d)
{
	if (top) {
		d->node = top->node;
		d->evidence = top->evidence;
		if (t->nodes[top->node].n_children == 0) {
			d->action = CALIB_COMMIT;
			d->why = CALIB_WHY_LEAF;
		} else {
			d->action = CALIB_DESCEND;
			d->why = CALIB_WHY_INNER;
		}
		return;
	}
	d->dismissed = dismissed >= 0;
	d->evidence = dismissed >= 0 ? dismissed : largest;
	if (parent >= 0) {
		d->action = CALIB_COMMIT;
		d->node = parent;
		d->why = CALIB_WHY_CHILDREN_FLAT;
	} else {
		d->action = CALIB_ABSTAIN;
		d->why = dismissed >= 0 ? CALIB_WHY_UNEXPLAINED : CALIB_WHY_NO_DEVIATION;
	}
}

/*
 * An SLI's number as a reader takes it in: to digits significant figures,
 * and whole where that would take an exponent (a throughput of 48125, not
 * 4.812e+04).
 */
static char *sli_number(double v, int digits)
{
	return fabs(v) >= pow(10, digits) && fabs(v) < 1e15 ? xasprintf("%.0f", v)
							    : xasprintf("%.*g", digits, v);
}

/*
 * The SLI's score in its own terms: a throughput (a negative cost) is shown
 * as the positive number the service reports.
 */
static char *describe_sli(const struct calib_score *s)
{
	bool higher = s->centre < 0;
	double sign = higher ? -1 : 1;
	_cleanup_free_ char *value = sli_number(sign * s->value, 4),
			    *centre = sli_number(sign * s->centre, 4),
			    *spread = sli_number(s->spread, 2);

	return xasprintf("SLI %s vs %s +- %s, %s is better (z %.1f)", value, centre, spread,
			 higher ? "higher" : "lower", s->z);
}

/*
 * The loss a share is of, in words and in div's unit: "the target's added
 * 300 ms", or for a service "the 220 ms per CPU-second of the service that
 * its SLI's change cost at the least".
 */
static char *describe_loss(const struct calib_params *p, const struct calib_decision *d,
			   double div, int prec, const char *unit)
{
	if (!d->wall_is_sli)
		return xasprintf("the target's added %.*f %s", prec, d->loss / div, unit);
	return xasprintf("the %.*f %s%s%s that its SLI's change cost at the least", prec,
			 d->loss / div, unit, p->per_unit ? " per " : "", p->per_unit ?: "");
}

/* What the level's largest deviation was, for a level that names nothing below it. */
static char *describe_most(const struct calib_params *p, const struct calib_decision *d)
{
	const struct calib_score *s = d->evidence >= 0 ? &d->scores[d->evidence] : NULL;
	_cleanup_free_ char *loss = NULL;
	double div;
	int prec;
	const char *unit = time_unit(d->loss, &div, &prec);

	if (s && (d->outgrown || d->dismissed))
		loss = describe_loss(p, d, div, prec, unit);
	if (s && d->outgrown) {
		const struct calib_score *o = &d->scores[d->outgrown_by];
		double grew = excess(o), lead = excess(s);

		/* It deviated, but another path may have taken more: say which. */
		return xasprintf("%s added %.*f %s%s, %.1f%% of %s, and %s grew by %.*f %s%s, "
				 "more, within its spread (z %.1f): which took the time is not "
				 "shown",
				 s->metric, prec, lead / div, unit,
				 s->expected > 0 ? " beyond the rest of the run's slowdown" : "",
				 s->share * 100.0, loss, o->metric, prec, grew / div, unit,
				 o->expected > 0 ? " beyond the rest of the run's slowdown" : "", o->z);
	}
	if (s && d->dismissed && s->share < p->min_share)
		/* It deviated, but the time went elsewhere: say so. */
		return xasprintf("%s added %.*f %s, %.1f%% of %s, under the %.0f%% a cause must "
				 "account for",
				 s->metric, prec, s->delta / div, unit, s->share * 100.0, loss,
				 p->min_share * 100.0);
	if (s && d->dismissed)
		/* It took its share, but by itself it would not have made the target slower. */
		return xasprintf("%s added %.*f %s, %.1f%% of %s, under the %.*f %s%s%s (%.0f%% of "
				 "the reference's %s) that a cause must add by itself: the rest of "
				 "the loss went where no path shows it",
				 s->metric, prec, s->delta / div, unit, s->share * 100.0, loss, prec,
				 d->material / div, unit, p->per_unit ? " per " : "",
				 p->per_unit ?: "", p->min_slowdown * 100.0,
				 d->wall_is_sli ? "CPU time per unit of work" : "wall time");
	if (!s)
		return xstrdup("no path metric could be scored");
	return xasprintf("largest z: %s%s%s %.1f, tau %.1f", s->metric, p->per_unit ? " per " : "",
			 p->per_unit ?: "", s->z, p->tau);
}

/*
 * The part of each second a service's threads slept idle, summed over its
 * threads: its idle waits per unit of work (per_unit_of_work in
 * diagnose.c divides them) times its units, over the window. NAN without
 * them.
 */
static double idle_share(const struct mvec *v)
{
	const double *idle = mvec_get(v, IDLE_METRIC), *units = mvec_get(v, UNITS_METRIC);
	const double *window = mvec_get(v, WINDOW_NS_METRIC);

	if (!idle || !units || !window || !(*window > 0))
		return NAN;
	return *idle * *units / *window;
}

/*
 * The service's threads over the window (the mean of their numbers at its
 * start and end, counted by the passes there), or its processes at its end;
 * 1 when the vector does not say.
 */
static double tasks_of(const struct mvec *v, bool threads)
{
	const double *n = mvec_get(v, threads ? THREADS_METRIC : PROCESSES_METRIC);

	return n && *n >= 1 ? *n : 1;
}

/*
 * A service's idle waits now against its reference's (calib_decision.idle_added).
 * Not where one side counted the sleeps that span a window's edges
 * ("target/window_edges", bpf/edges.bpf.h) and the other did not (a
 * reference recorded before they were counted): the idle time of the one
 * would have grown by what the other left out.
 */
static void service_idle_added(const struct calib_params *p, const struct mvec *ref, size_t k,
			       const struct mvec *pmv, double *vals, struct calib_decision *d)
{
	_cleanup_free_ double *work = calloc(k, sizeof(double));
	const double *units = mvec_get(pmv, UNITS_METRIC), *window = mvec_get(pmv, WINDOW_NS_METRIC);
	double noise, now = idle_share(pmv), per_task;
	bool edges = mvec_get(pmv, WINDOW_EDGES_METRIC) != NULL;
	bool threads = mvec_get(pmv, THREADS_METRIC) != NULL;
	size_t i;

	if (!work || !units || !window || !(*units > 0) || !isfinite(now))
		return;
	for (i = 0; i < k; i++) {
		if ((mvec_get(&ref[i], WINDOW_EDGES_METRIC) != NULL) != edges)
			return;
		threads = threads && mvec_get(&ref[i], THREADS_METRIC);
	}
	for (i = 0; i < k; i++)
		if (!isfinite(vals[i] = idle_share(&ref[i]) / tasks_of(&ref[i], threads)))
			return;
	centre_noise(p->robust, vals, k, work, &per_task, &noise);
	for (i = 0; i < k; i++)
		vals[i] = tasks_of(&ref[i], threads);
	centre_noise(p->robust, vals, k, work, &d->tasks_ref, &noise);
	d->tasks = tasks_of(pmv, threads);
	d->tasks_are = threads ? "threads" : "processes";
	d->idle_share = now;
	d->idle_share_ref = per_task * d->tasks;
	d->idle_added = (now - d->idle_share_ref) * *window / *units;
}

/*
 * A service's version of unexplained_where below. When its threads slept
 * idle more of each second, by half of what the SLI's change cost it per
 * unit of its work or more (d->idle_added), the service waited for its
 * work: the time went outside it, to a client slower to send or a service
 * it calls slower to answer, either of which leaves it asleep in its waits
 * for events. Else, for an SLI that is a throughput, its CPU time per
 * request against that loss (d->loss, the reference's CPU time per request
 * times the change): grown by half of it or more, each request took more
 * work on the CPU (the request's own, the work of requests beside the
 * SLI's, which the unit does not count, or slower cores); else the time
 * went off the CPU, to waits no path covers or outside the service. Idle
 * waits that grew by less do not rule out the outside: a server that
 * blocks in a socket's receive waits there, not idle, for a slow client,
 * and workers that wait on a condition for the thread that takes the
 * requests in wait on a futex that their own thread ends (futex_own). The
 * sleeps that span a window's start and end are counted by the passes at
 * its edges (bpf/edges.bpf.h), where the kernel iterates over tasks;
 * without them a window would leave out more of them the longer a thread
 * sleeps between requests (test-service `rated`, 50 requests a second over
 * three workers in 1 s windows: 0.03 s more of each second, where its CPU
 * time fell by 0.13). Per CPU-second (a latency's unit) the CPU time per
 * unit is the unit itself and says nothing.
 */
static char *service_unexplained_where(const struct calib_params *p,
				       const struct calib_decision *d)
{
	double lost = d->loss, div;
	int prec;
	const char *unit = time_unit(lost, &div, &prec);
	_cleanup_free_ char *grew = NULL, *scaled = NULL;

	if (!(lost > 0))
		return NULL;
	if (p->per_request && isfinite(d->cpu_added))
		grew = xasprintf("its CPU time per request %s by %.*f %s of the %.*f %s per request "
				 "that its SLI's change cost at the least",
				 d->cpu_added >= 0 ? "grew" : "fell", prec, fabs(d->cpu_added) / div,
				 unit, prec, lost / div, unit);
	if (d->idle_added >= lost / 2) {
		/* the reference's rate for as many threads (or processes) as now, when that moved */
		if (fabs(d->tasks - d->tasks_ref) >= 0.5)
			scaled = xasprintf(" for as many %s (%.*f now, %.*f there)", d->tasks_are,
					   d->tasks == round(d->tasks) ? 0 : 1, d->tasks,
					   d->tasks_ref == round(d->tasks_ref) ? 0 : 1, d->tasks_ref);
		return xasprintf("; %s%sits threads slept idle (waiting for events, connections or "
				 "their own timeouts) %.2f s of each second, summed over them, against "
				 "%.2f s in its reference%s, +%.*f %s per %s: the time went outside the "
				 "service, which waited for its work (a client slower to send, or a "
				 "service it calls slower to answer)",
				 grew ?: "", grew ? ", and " : "", d->idle_share, d->idle_share_ref,
				 scaled ?: "", prec, d->idle_added / div, unit,
				 p->per_request ? "request" : "CPU-second of its work");
	}
	if (!grew)
		return NULL;
	if (d->cpu_added >= lost / 2)
		return xasprintf("; %s: the time went to work on the CPU (more for each request, "
				 "requests beside the SLI's, or slower cores)",
				 grew);
	return xasprintf("; %s: most of the time went off the CPU, to waits no path of the tree "
			 "covers or outside the service (a client slower to send, or a service "
			 "it calls slower to answer, leaves it idle in its waits for events)",
			 grew);
}

/*
 * Where the loss of a slower target went that no path explained (NULL when
 * not known): to work on the CPU when its CPU time grew by half the loss
 * or more (in the kernel, when its system time grew by half of that or
 * more; else in its own code), else mostly off the CPU, to waits the tree
 * does not cover; for a service, service_unexplained_where. Not said when
 * a path took half the loss or more but too little by itself to be named:
 * the loss went there (describe_most says so), and the target's CPU time
 * would tell only where that path's time is spent (on the CPU for a
 * fault, off it for a wait).
 */
static char *unexplained_where(const struct calib_params *p, const struct calib_decision *d)
{
	const struct calib_score *w = d->wall >= 0 ? &d->scores[d->wall] : NULL;
	double lost = w ? w->delta : NAN;
	_cleanup_free_ char *grew = NULL;

	if (!w || !isfinite(d->cpu_added))
		return NULL;
	if (d->evidence >= 0 && d->dismissed && d->scores[d->evidence].share >= 0.5)
		return NULL;
	if (d->wall_is_sli)
		return service_unexplained_where(p, d);
	if (!(lost > 0))
		return NULL;
	grew = isfinite(d->sys_added)
		   ? xasprintf("its CPU time grew by %.1f ms of the %.1f ms it lost, %.1f ms of "
			       "that in the kernel",
			       d->cpu_added / 1e6, lost / 1e6, d->sys_added / 1e6)
		   : xasprintf("its CPU time grew by %.1f ms of the %.1f ms it lost",
			       d->cpu_added / 1e6, lost / 1e6);
	if (d->cpu_added < lost / 2)
		return xasprintf("; %s: most of the time went off the CPU, to waits no path of the "
				 "tree covers",
				 grew);
	if (!isfinite(d->sys_added))
		return xasprintf("; %s: the time went to work on the CPU, in its own code or in "
				 "kernel code no path of the tree times (a system call's own work, "
				 "for one)",
				 grew);
	if (d->sys_added >= d->cpu_added / 2)
		return xasprintf("; %s: the time went to kernel work on the CPU that no path of the "
				 "tree times (a system call's own work, for one)",
				 grew);
	return xasprintf("; %s: the time went to its own code on the CPU, in user space (slower "
			 "there, or doing more)",
			 grew);
}

/*
 * A target that did better than its reference by more than the reference's
 * spread and the minimum change (wall score w, its relative change rel):
 * said after "not slower", since the reference may have been recorded while
 * the target ran slow, and then a slowdown smaller than the gap would not
 * show against it. NULL otherwise.
 */
static char *better_than_reference(const struct calib_params *p, const struct calib_score *w,
				   double rel)
{
	if (!w || !(w->z <= -p->tau) || !(rel <= -p->min_slowdown))
		return NULL;
	return xasprintf("; it did %.0f%% better than its reference, beyond the reference's "
			 "spread: the reference may have been recorded while the target ran slow, "
			 "and a slowdown smaller than that would not show against it (record the "
			 "reference again while the target is healthy)",
			 -rel * 100.0);
}

/*
 * A target not slower than its reference whose path's time deviates beyond
 * tau all the same, and grew by what would make a cause by itself were the
 * target slower (d->material): the one that grew most, said without naming
 * it a cause, and, unless the target did better than its reference
 * (better, which says as much), what it may mean. Against a reference
 * recorded while the target ran slow a real slowdown reads so (nginx
 * beside a CPU hog, its reference recorded under the service's usual
 * speed: its scheduler's time 48 times the reference's, its SLI no worse:
 * bench/eval/results/2026-12-07/services-nginx-3a6ca5f); where the
 * reference is right, the path's change cost the target nothing it
 * measures. NULL when no path's time is flagged and grew that much.
 */
static char *deviates_anyway(const struct calib_params *p, const struct calib_decision *d,
			     bool better)
{
	int top = grew_most(d, d->material);
	_cleanup_free_ char *what = NULL;

	if (top < 0)
		return NULL;
	what = describe(d->scores[top].metric, true, p->per_unit, &d->scores[top]);
	return xasprintf("; a path's time deviates all the same (%s), not named since the target "
			 "is not slower%s",
			 what,
			 better ? ""
				: ": were it slower than it usually is, its reference may have been "
				  "recorded while it ran slow (record the reference again while the "
				  "target is healthy)");
}

/* The decision's sentence, from d->why: the only place the prose is written. */
static char *render_reason(const struct calib_params *p, const struct tree *t,
			   const struct calib_decision *d, double wall_rel)
{
	_cleanup_free_ char *wall = NULL, *what = NULL, *most = NULL, *target = NULL;
	_cleanup_free_ char *where = NULL, *better = NULL;
	const struct calib_score *w = d->wall >= 0 ? &d->scores[d->wall] : NULL;

	if (w) {
		wall = d->wall_is_sli ? describe_sli(w) : describe("wall", true, NULL, w);
		if (d->slower_by >= 0) {
			const struct calib_score *b = &d->scores[d->slower_by];
			/* what the path's growth is held to: the SLI's loss, or the wall time */
			_cleanup_free_ char *against =
			    d->wall_is_sli
				? xasprintf("%s%s, %.1f times the %.1f ms that the SLI's change "
					    "cost at the least",
					    p->per_unit ? " per " : "", p->per_unit ?: "",
					    excess(b) / d->loss, d->loss / 1e6)
				: isfinite(d->cpu_fall)
				? xasprintf(", %.0f%% of the reference's wall time, while the "
					    "target's CPU time fell by %.0f%%: the reference was "
					    "recorded while the target ran slower, and the path is "
					    "a slowdown even had the rest of the run been faster by "
					    "the minimum",
					    excess(b) / w->centre * 100.0, d->cpu_fall * 100.0)
				: xasprintf(", %.0f%% of the reference's wall time",
					    excess(b) / w->centre * 100.0);
			char *shown = xasprintf("%s, %s, but %s grew by %.1f ms%s", wall,
						isfinite(d->cpu_fall)
						    ? "less than the minimum slowdown"
						    : "within the reference's spread",
						b->metric, excess(b) / 1e6, against);

			free(wall);
			wall = shown;
		}
		target = xasprintf(" (target %s)", wall);
	}
	switch (d->why) {
	case CALIB_WHY_NOT_REPRODUCED:
		return xasprintf("the slowdown seen above did not reproduce in this level's run: "
				 "%s%s",
				 wall, d->refuted ? ", within the reference runs' own spread" : "");
	case CALIB_WHY_BELOW_MIN_SLOWDOWN:
		return xasprintf("target not slower than its reference: %s, %+.1f%% is below the "
				 "%.1f%% minimum %s",
				 wall, wall_rel * 100.0,
				 p->min_slowdown * 100.0,
				 d->wall_is_sli ? "change of the SLI" : "slowdown");
	case CALIB_WHY_NOT_SLOWER:
		better = better_than_reference(p, w, wall_rel);
		most = deviates_anyway(p, d, better != NULL);
		return xasprintf("target not slower than its reference: %s%s%s", wall, better ?: "",
				 most ?: "");
	case CALIB_WHY_LEAF:
	case CALIB_WHY_INNER: {
		const struct tree_node *n = &t->nodes[d->node];
		const struct calib_score *s = &d->scores[d->evidence];
		const char *metric = strrchr(s->metric, '/') + 1;

		what = describe(metric, metric_is_time(metric), p->per_unit, s);
		if (metric_is_time(metric)) {
			_cleanup_free_ char *each = describe_each(d, s, p->tau);

			if (each) {
				char *with = xasprintf("%s; %s", what, each);

				free(what);
				what = with;
			}
		}
		if (d->has_also) {
			const struct calib_score *a = &d->scores[d->also_evidence];
			char *both = xasprintf(
			    "%s (%.0f%% of the added time), and %s took %.0f%% too (time_ns z %.1f)",
			    what, s->share * 100.0, t->nodes[d->also].id, a->share * 100.0, a->z);

			free(what);
			what = both;
		}
		if (d->why == CALIB_WHY_LEAF)
			return xasprintf("%s: %s; a leaf: committing%s", n->id, what,
					 target ?: "");
		return xasprintf("%s: %s; descending into its %zu children%s", n->id, what,
				 n->n_children, target ?: "");
	}
	case CALIB_WHY_CHILDREN_FLAT:
		most = describe_most(p, d);
		return xasprintf("%s: its children show no significant deviation (%s); committing "
				 "to %s, the deepest flagged path",
				 t->nodes[d->node].id, most, t->nodes[d->node].id);
	case CALIB_WHY_UNEXPLAINED:
		most = describe_most(p, d);
		where = unexplained_where(p, d);
		return xasprintf("the target is slower (%s), but no kernel path explains it: %s%s",
				 wall, most, where ?: "");
	case CALIB_WHY_NO_DEVIATION:
		most = describe_most(p, d);
		where = unexplained_where(p, d);
		if (w && w->flagged)
			return xasprintf("the target is slower (%s), but no kernel path deviates from "
					 "the reference (%s)%s",
					 wall, most, where ?: "");
		return xasprintf("no kernel path deviates from the reference (%s)", most);
	case CALIB_WHY_NONE:
	case CALIB_WHY_MAX:
		break;
	}
	return xstrdup("no decision");
}

const char *calib_why_name(enum calib_why w)
{
	static const char *const names[] = {
	    [CALIB_WHY_NONE] = "none",
	    [CALIB_WHY_NOT_REPRODUCED] = "not_reproduced",
	    [CALIB_WHY_NOT_SLOWER] = "not_slower",
	    [CALIB_WHY_BELOW_MIN_SLOWDOWN] = "below_min_slowdown",
	    [CALIB_WHY_LEAF] = "leaf",
	    [CALIB_WHY_INNER] = "inner",
	    [CALIB_WHY_CHILDREN_FLAT] = "children_flat",
	    [CALIB_WHY_UNEXPLAINED] = "unexplained",
	    [CALIB_WHY_NO_DEVIATION] = "no_deviation",
	};
	_Static_assert(ARRAY_SIZE(names) == CALIB_WHY_MAX, "a name for every calib_why");

	return (unsigned)w < ARRAY_SIZE(names) ? names[w] : "unknown";
}

int calib_decide(const struct calib_params *params, const struct tree *t, const int *active,
		 size_t n_active, int parent, const struct mvec *ref, size_t k,
		 const struct mvec *pmv, struct calib_decision *ret)
{
	_cleanup_(decision_freep) struct calib_decision d = {
	    .node = -1, .evidence = -1, .wall = -1, .slower_by = -1, .cpu_fall = NAN,
	    .cpu_added = NAN, .sys_added = NAN, .idle_share = NAN, .idle_share_ref = NAN,
	    .idle_added = NAN, .tasks = NAN, .tasks_ref = NAN, .rest_others = 1.0,
	    .loss = NAN};
	_cleanup_free_ struct node_eval *ev = NULL;
	_cleanup_free_ double *vals = NULL;
	struct calib_params defaults, scaled;
	const struct calib_params *p = params;
	int largest, dismissed = -1;
	double wall_rel;
	size_t i, max_scores;

	if (!p) {
		calib_params_default(&defaults);
		p = &defaults;
	}
	if (!t || (!active && n_active > 0) || !ref || k == 0 || !pmv || !ret)
		return -EINVAL;
	if (parent >= (int)t->n_nodes)
		return -EINVAL;
	for (i = 0; i < n_active; i++)
		if (active[i] < 0 || (size_t)active[i] >= t->n_nodes)
			return -EINVAL;

	max_scores = 1;
	for (i = 0; i < n_active; i++)
		max_scores += t->nodes[active[i]].n_metrics;
	d.scores = calloc(max_scores, sizeof(*d.scores));
	ev = calloc(n_active ? n_active : 1, sizeof(*ev));
	vals = calloc(k, sizeof(*vals));
	if (!d.scores || !ev || !vals)
		return -ENOMEM;
	p = per_request_floors(p, ref, k, pmv, vals, &scaled);

	/* scores -> the run's slowdown -> gate -> ranking -> decision -> its sentence */
	largest = score_nodes(p, t, active, n_active, ref, k, pmv,
			      slower_run_time(p, ref, k, pmv, vals), vals, &d, ev);
	wall_rel = score_wall(p, ref, k, pmv, vals, &d);
	if (d.wall >= 0 && d.scores[d.wall].flagged) {
		d.loss = d.wall_is_sli ? sli_loss(p, ref, k, pmv, vals, &d.scores[d.wall])
				       : d.scores[d.wall].delta;
		/* a path that showed the slowdown: the loss is at least what it added */
		if (!d.wall_is_sli && d.slower_by >= 0)
			d.loss = fmax(d.loss, excess(&d.scores[d.slower_by]));
		d.material = material_time(p, ref, k, pmv, vals, &d);
		if (isfinite(d.loss) && d.loss > 0)
			dismissed = judge_share(p, &d);
	}
	d.why = gate(p, &d, parent, wall_rel);
	/* what a path must add to be worth a word where the target is not slower (deviates_anyway) */
	if (d.why == CALIB_WHY_NOT_SLOWER && d.wall >= 0)
		d.material = material_time(p, ref, k, pmv, vals, &d);
	if (d.why != CALIB_WHY_NONE) {
		d.action = CALIB_ABSTAIN;
		d.evidence = d.wall;
	} else {
		const struct node_eval *top = rank_nodes(&d, ev, n_active);
		const struct node_eval *over = outgrown_by(&d, ev, n_active, top);

		if (over) {
			decide(t, NULL, parent, largest, -1, &d);
			d.outgrown = true;
			d.outgrown_by = over->time_score;
			d.evidence = top->time_score;
			if (parent < 0)
				d.why = CALIB_WHY_UNEXPLAINED;
		} else {
			decide(t, top, parent, largest, dismissed, &d);
			second_cause(p, &d, ev, n_active, top, &d);
		}
	}
	if (d.why == CALIB_WHY_UNEXPLAINED ||
	    (d.why == CALIB_WHY_NO_DEVIATION && d.wall >= 0 && d.scores[d.wall].flagged)) {
		double cpu, cpu_now;

		if (gather_centre(p, CPU_METRIC, ref, k, pmv, vals, &cpu, &cpu_now))
			d.cpu_added = cpu_now - cpu;
		if (isfinite(d.cpu_added) &&
		    gather_centre(p, SYS_METRIC, ref, k, pmv, vals, &cpu, &cpu_now))
			d.sys_added = cpu_now - cpu;
		if (d.wall_is_sli)
			service_idle_added(p, ref, k, pmv, vals, &d);
	}
	d.reason = render_reason(p, t, &d, wall_rel);
	*ret = d;
	d = (struct calib_decision){};
	return 0;
}

double calib_rest_ratio(const struct calib_decision *d, const struct tree *t, int node)
{
	size_t i, len;

	if (!d || !t || node < 0 || (size_t)node >= t->n_nodes)
		return 1.0;
	len = strlen(t->nodes[node].id);
	for (i = 0; i < d->n_scores; i++) {
		const struct calib_score *s = &d->scores[i];

		if (strncmp(s->metric, t->nodes[node].id, len) == 0 && s->metric[len] == '/' &&
		    metric_is_time(s->metric + len + 1) && s->expected > 0 && s->centre > 0)
			return s->expected / s->centre;
	}
	return d->rest_others > 0 ? d->rest_others : 1.0;
}

/* JSON has no infinities: they (and NaN) are null. */
static json_t *number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *calib_scores_to_json(const struct calib_decision *d)
{
	json_t *a = json_array();
	size_t i;

	if (!d)
		return a;
	for (i = 0; i < d->n_scores; i++) {
		const struct calib_score *s = &d->scores[i];
		json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "metric",
				      s->metric, "reference", number(s->centre), "spread",
				      number(s->spread), "noise", number(s->noise), "threshold",
				      number(s->threshold), "value", number(s->value), "delta",
				      number(s->delta), "z", number(s->z), "flagged", s->flagged);

		if (o && s->expected > 0)
			json_object_set_new(o, "expected", number(s->expected));
		if (o && isfinite(s->share))
			json_object_set_new(o, "share", number(s->share));
		if (o)
			json_array_append_new(a, o);
	}
	return a;
}
