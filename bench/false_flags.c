// SPDX-License-Identifier: MIT
/*
 * The false-flag rate on null runs: how often a level flags a path of a
 * target that did not change. Reads the references of an argusd state
 * database, each recorded with many runs of one unchanged workload, and
 * holds each run out in turn: the K runs after it (cyclically) are the
 * reference, the held-out run is the measurement, and every level of the
 * tree is decided on them (level 1, then under every inner node). A flagged
 * path metric there is a false flag; a decision that names a node is a false
 * diagnosis at that level (the target's own wall time must also look slower
 * for that). Printed side by side: the default estimator and thresholds,
 * and the plain mean and sd of the runs against tau, on the same runs, for
 * each K asked for.
 *
 *   bench-false-flags --db STATE/argusd.db --tree tree.json [--k 3,5,10] [--schema DIR]
 *   bench-false-flags --thresholds [--k 3,5,10]   (the thresholds alone, no database)
 */
#include "daemon/calibrate.h"
#include "daemon/mvec.h"
#include "daemon/store.h"
#include "daemon/tree.h"
#include "daemon/util.h"

#include <getopt.h>

#define KS_MAX 20 /* reference runs, at most (REFERENCE_REPEATS_MAX) */
#define N_KS 8
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tally {
	size_t scopes;	   /* level decisions made */
	size_t flagged;	   /* ... with any path metric flagged */
	size_t named;	   /* ... that named a node */
	size_t metrics;	   /* path metrics scored */
	size_t metric_flags; /* ... flagged */
	double threshold_sum;
};

/* The inner nodes under which a level is decided: -1 (level 1) and every node with children. */
static size_t scopes_of(const struct tree *t, int *ret, size_t max)
{
	size_t n = 0, i;

	ret[n++] = -1;
	for (i = 0; i < t->n_nodes && n < max; i++)
		if (t->nodes[i].n_children > 0)
			ret[n++] = (int)i;
	return n;
}

static void decide_into(const struct calib_params *p, const struct tree *t, int parent,
			const struct mvec *ref, size_t k, const struct mvec *pmv, struct tally *tl)
{
	int active[TREE_MAX_NODES];
	size_t n_active = tree_active(t, parent, active, TREE_MAX_NODES), i;
	struct calib_decision d = {};
	bool any = false;

	if (n_active == 0 || calib_decide(p, t, active, n_active, parent, ref, k, pmv, &d) < 0)
		return;
	for (i = 0; i < d.n_scores; i++) {
		if ((int)i == d.wall)
			continue;
		tl->metrics++;
		tl->threshold_sum += d.scores[i].threshold;
		if (d.scores[i].flagged) {
			tl->metric_flags++;
			any = true;
		}
	}
	tl->scopes++;
	tl->flagged += any;
	tl->named += d.action != CALIB_ABSTAIN && d.node != parent;
	calib_decision_free(&d);
}

static void tally_add(struct tally *to, const struct tally *from)
{
	to->scopes += from->scopes;
	to->flagged += from->flagged;
	to->named += from->named;
	to->metrics += from->metrics;
	to->metric_flags += from->metric_flags;
	to->threshold_sum += from->threshold_sum;
}

/* Every run of runs held out against the k after it, every scope decided, with p. */
static void hold_out(const struct calib_params *p, const struct tree *t, const int *scopes,
		     int n_scopes, const struct mvec *runs, size_t n, size_t k, struct tally *tl)
{
	struct mvec ref[KS_MAX];
	size_t h, j;
	int sc;

	for (h = 0; h < n; h++) {
		for (j = 0; j < k; j++)
			ref[j] = runs[(h + 1 + j) % n]; /* a shallow view */
		for (sc = 0; sc < n_scopes; sc++)
			decide_into(p, t, scopes[sc], ref, k, &runs[h], tl);
	}
}

/* The default thresholds (in noises) for each K and a level of 1, 10, 20 and 40 metrics. */
static void print_thresholds(const size_t *ks, size_t n_ks)
{
	static const size_t tests[] = {1, 10, 20, 40};
	struct calib_params p;
	struct calib_null null;
	size_t q, m;

	calib_params_default(&p);
	printf("# thresholds in noises (false_flag_rate %.2f, tau %.1f) for a level of M metrics\n",
	       p.false_flag_rate, p.tau);
	printf("%3s  %11s", "K", "noise scale");
	for (m = 0; m < sizeof(tests) / sizeof(tests[0]); m++)
		printf("  M=%-4zu", tests[m]);
	printf("\n");
	for (q = 0; q < n_ks; q++) {
		calib_null_for(&p, ks[q], 1, &null);
		printf("%3zu  %11.3f", ks[q], null.noise_scale);
		for (m = 0; m < sizeof(tests) / sizeof(tests[0]); m++) {
			calib_null_for(&p, ks[q], tests[m], &null);
			printf("  %6.2f", null.threshold);
		}
		printf("\n");
	}
}

static void print_row(const char *subject, size_t runs, size_t k, const char *estimator,
		      const struct tally *tl)
{
	printf("%-16s %5zu %3zu  %-22s %7zu  %6.1f%%  %6.2f%%  %6.1f%%  %6.2f\n", subject, runs, k,
	       estimator, tl->scopes, tl->scopes ? 100.0 * tl->flagged / tl->scopes : 0,
	       tl->metrics ? 100.0 * tl->metric_flags / tl->metrics : 0,
	       tl->scopes ? 100.0 * tl->named / tl->scopes : 0,
	       tl->metrics ? tl->threshold_sum / tl->metrics : 0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
					     {"tree", required_argument, NULL, 't'},
					     {"schema", required_argument, NULL, 's'},
					     {"k", required_argument, NULL, 'k'},
					     {"thresholds", no_argument, NULL, 'T'},
					     {}};
	bool thresholds = false;
	const char *db = NULL, *tree_path = NULL, *schema = NULL, *ks_arg = "5";
	struct calib_params est[2];
	const char *names[2] = {"trimmed, thresholds", "mean and sd, tau"};
	struct tally total[N_KS][2] = {};
	size_t ks[N_KS], n_ks = 0, i, e, q;
	struct store *s = NULL;
	struct tree *t = NULL;
	json_t *list = NULL, *refs;
	char *err = NULL, *end;
	int c, scopes[TREE_MAX_NODES], n_scopes;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'd')
			db = optarg;
		else if (c == 't')
			tree_path = optarg;
		else if (c == 's')
			schema = optarg;
		else if (c == 'k')
			ks_arg = optarg;
		else if (c == 'T')
			thresholds = true;
		else
			return 2;
	}
	for (end = (char *)ks_arg; *end && n_ks < N_KS;) {
		unsigned long k = strtoul(end, &end, 10);

		if (k < 2 || k > KS_MAX || (*end && *end != ','))
			n_ks = N_KS + 1;
		else
			ks[n_ks++] = k;
		if (*end == ',')
			end++;
	}
	if (thresholds && n_ks > 0 && n_ks <= N_KS) {
		print_thresholds(ks, n_ks);
		return 0;
	}
	if (!db || !tree_path || n_ks == 0 || n_ks > N_KS) {
		fprintf(stderr, "usage: %s --db STATE/argusd.db --tree tree.json [--k K,...] "
				"[--schema DIR]\n       %s --thresholds [--k K,...]   (K from 2 to %d)\n",
			argv[0], argv[0], KS_MAX);
		return 2;
	}
	if (tree_load_file(tree_path, &t, &err) < 0) {
		fprintf(stderr, "%s: %s\n", tree_path, err ?: "cannot load");
		return 1;
	}
	c = store_open(db, schema, &s);
	if (c >= 0)
		c = store_reference_list(s, NULL, 500, &list);
	if (c < 0) {
		fprintf(stderr, "%s: cannot read its references: %s\n", db, strerror(-c));
		return 1;
	}
	refs = json_object_get(list, "references");
	calib_params_default(&est[0]);
	calib_params_default(&est[1]);
	est[1].robust = false;
	est[1].false_flag_rate = 0;
	n_scopes = (int)scopes_of(t, scopes, TREE_MAX_NODES);

	printf("# each run held out against the K after it (cyclically); %d scopes (level 1 and every "
	       "inner node)\n",
	       n_scopes);
	printf("%-16s %5s %3s  %-22s %7s  %7s  %7s  %7s  %6s\n", "subject", "runs", "K", "estimator",
	       "levels", "flagged", "metrics", "named", "thresh");
	for (i = 0; i < json_array_size(refs); i++) {
		json_t *r = json_array_get(refs, i);
		int64_t id = json_integer_value(json_object_get(r, "id"));
		const char *subject = json_string_value(json_object_get(r, "subject")) ?: "?";
		struct mvec *runs = NULL;
		size_t n = 0;

		if (store_reference_runs(s, id, &runs, &n) < 0)
			continue;
		for (q = 0; q < n_ks; q++)
			for (e = 0; e < 2 && n >= ks[q] + 1; e++) {
				struct tally tl = {};

				hold_out(&est[e], t, scopes, n_scopes, runs, n, ks[q], &tl);
				print_row(subject, n, ks[q], names[e], &tl);
				tally_add(&total[q][e], &tl);
			}
		mvec_array_free(runs, n);
	}
	for (q = 0; q < n_ks; q++)
		for (e = 0; e < 2; e++)
			print_row("all", 0, ks[q], names[e], &total[q][e]);
	printf("# flagged: levels with any path metric flagged; metrics: path metrics flagged; "
	       "named: levels whose decision named a node; thresh: mean threshold in noises\n");
	json_decref(list);
	store_close(s);
	tree_free(t);
	return 0;
}
