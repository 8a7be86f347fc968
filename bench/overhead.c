// SPDX-License-Identifier: MIT
/*
 * Probe overhead on the hot path, measured side by side: a page-fault loop
 * (N fresh anonymous pages written, in a child pinned to one CPU) runs with
 * no probe and under the level probes argusd uses, alternating the
 * configurations round after round so that machine noise hits them alike.
 * Prints the median cost per fault of each configuration, its difference
 * from the unprobed loop (the probe's cost per fault) and the ratio.
 *
 *   bench-overhead [--pages N] [--rounds R] [--cpu C] [--tree FILE]
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bpf_log.h"
#include "daemon/log.h"
#include "daemon/probe.h"
#include "daemon/probe_try.h"
#include "daemon/resolve.h"
#include "daemon/tree.h"
#include "daemon/util.h"

#define PAGE 4096
#define MAX_ROUNDS 200

enum config { CFG_NONE, CFG_LEVEL1, CFG_ANON_L3, CFG_REFERENCE, CFG_MAX };
static const char *const config_names[CFG_MAX] = {
	"no probe", "level 1 (all subsystems)", "level 3 (anon_fault leaves)",
	"reference (every leaf)"
};

static struct tree *tree;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The nodes of a configuration. */
static size_t config_nodes(enum config c, int *nodes)
{
	size_t n = 0, i;

	switch (c) {
	case CFG_LEVEL1:
		return tree_active(tree, -1, nodes, TREE_MAX_NODES);
	case CFG_ANON_L3:
		return tree_active(tree, tree_find(tree, "kernel_paging.anon_fault"), nodes,
				   TREE_MAX_NODES);
	case CFG_REFERENCE:
		for (i = 0; i < tree->n_nodes; i++)
			if (tree_is_leaf(tree, i) && tree->nodes[i].backend != BACKEND_NONE)
				nodes[n++] = i;
		return n;
	default:
		return 0;
	}
}

/* One run: ns per fault of the touch loop, measured inside the child. */
static int run_once(enum config c, size_t pages, int cpu, double *ret_ns)
{
	int nodes[TREE_MAX_NODES], go[2], res[2], status, r = 0;
	struct probe_plan plan;
	struct probe *p = NULL;
	_cleanup_free_ char *err = NULL;
	size_t n = config_nodes(c, nodes);
	uint64_t ns = 0;
	pid_t pid;

	if (n) {
		r = probe_plan_for(tree, nodes, n, &plan);
		if (!r)
			r = probe_load(tree, &plan, &p, NULL, &err);
		if (r < 0) {
			if (err)
				fprintf(stderr, "bench-overhead: loading the probe: %s\n", err);
			return r;
		}
	}
	if (pipe(go) < 0 || pipe(res) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		cpu_set_t set;
		uint64_t t0, t1;
		char *m, ch;
		size_t i;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
		if (read(go[0], &ch, 1) != 1)
			_exit(2);
		m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (m == MAP_FAILED)
			_exit(3);
		madvise(m, pages * PAGE, MADV_NOHUGEPAGE);
		t0 = now_mono_ns();
		for (i = 0; i < pages; i++)
			m[i * PAGE] = 1;
		t1 = now_mono_ns() - t0;
		(void)!write(res[1], &t1, sizeof(t1));
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	if (p) {
		r = probe_add_target(p, pid);
		if (!r)
			r = probe_attach(p, &err);
		if (r < 0 && err)
			fprintf(stderr, "bench-overhead: attaching the probe: %s\n", err);
	}
	(void)!write(go[1], "g", 1);
	close(go[1]);
	if (read(res[0], &ns, sizeof(ns)) != sizeof(ns))
		r = r ?: -EIO;
	close(res[0]);
	waitpid(pid, &status, 0);
	probe_free(p);
	if (r < 0)
		return r;
	*ret_ns = (double)ns / pages;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "pages", required_argument, NULL, 'p' },
					       { "rounds", required_argument, NULL, 'r' },
					       { "cpu", required_argument, NULL, 'c' },
					       { "tree", required_argument, NULL, 't' },
					       {} };
	const char *src = getenv("ARGUS_SOURCE_DIR");
	_cleanup_free_ char *tree_path = xasprintf("%s/tree-data/tree.json", src ?: ".");
	struct prober pr = { .try_hook = probe_try_hook };
	static double samples[CFG_MAX][MAX_ROUNDS];
	size_t pages = 50000, rounds = 15, k;
	int cpu = 0, c, r;
	char *err = NULL;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pages = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 't':
			free(tree_path);
			tree_path = xstrdup(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench-overhead [--pages N] [--rounds R] [--cpu C] "
					"[--tree FILE]\n");
			return 2;
		}
	}
	if (rounds < 3 || rounds > MAX_ROUNDS || pages < 1000) {
		fprintf(stderr, "bench-overhead: rounds 3..%d, pages >= 1000\n", MAX_ROUNDS);
		return 2;
	}
	log_set_max_level(LOG_WARNING);
	bpf_log_setup();
	if (tree_load_file(tree_path, &tree, &err) < 0) {
		fprintf(stderr, "bench-overhead: %s\n", err);
		return 1;
	}
	tree_resolve(tree, &pr);

	for (k = 0; k < rounds; k++)
		for (c = 0; c < CFG_MAX; c++) {
			enum config cfg = (c + k) % CFG_MAX; /* rotate the order every round */

			r = run_once(cfg, pages, cpu, &samples[cfg][k]);
			if (r < 0) {
				fprintf(stderr, "bench-overhead: %s: %s\n", config_names[cfg],
					strerror(-r));
				return 1;
			}
		}

	printf("page-fault loop: %zu fresh anonymous pages per run, %zu rounds, CPU %d, "
	       "configurations alternated\n",
	       pages, rounds, cpu);
	printf("%-30s %14s %14s %8s\n", "configuration", "ns per fault", "probe ns/fault",
	       "ratio");
	for (c = 0; c < CFG_MAX; c++)
		qsort(samples[c], rounds, sizeof(double), cmp_double);
	for (c = 0; c < CFG_MAX; c++) {
		double med = samples[c][rounds / 2], base = samples[CFG_NONE][rounds / 2];

		printf("%-30s %14.0f %14.0f %8.2f\n", config_names[c], med, med - base, med / base);
	}
	tree_free(tree);
	return 0;
}
