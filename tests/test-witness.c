// SPDX-License-Identifier: MIT
/*
 * The witness of authored measurements (daemon/witness.h), as tables: a
 * plan on the real tree, the vector an authored probe would report and the
 * kernel's figures of the same run; each row says which checks must fail
 * and which could not be made. The numbers of the honest rows are of the
 * size this machine's runs give (pf_page_cache, pf_major, futex_contend).
 */
#include "daemon/witness.h"
#include "daemon/util.h"
#include "tests/tap.h"
#include "tests/tree-fixture.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define POINTER 18446612682702624376.0 /* 0xffff888012345678 */
#define ABSENT (-1.5e300)		/* a metric the vector does not hold */
#define MAX_NODES 8

static struct tree *tree;

static int node(const char *id)
{
	int i = tree_find(tree, id);

	REQUIRE(i >= 0);
	return i;
}

/* As resolution would leave node i: backend b, on the hooks text names ('+'-joined). */
static void choose(int i, enum backend b, const char *text)
{
	struct hook_list h;

	REQUIRE(hook_list_parse(text, hook_kind_of(b), &h) == 0);
	tree_node_choose(&tree->nodes[i], b, &h);
}

/* One node of a row: its id and the count and time the probe reports (or ABSENT). */
struct reported {
	const char *id;
	double count, time_ns;
};

struct row {
	const char *name;
	struct reported slots[MAX_NODES];  /* the plan's slots, in order */
	struct reported derived[MAX_NODES]; /* inner nodes the vector derives from the slots */
	struct witness_figures fig;
	unsigned fail;	    /* bit mask of enum witness_check that must fail */
	unsigned unchecked; /* checks that must say they were not made */
	const char *needle; /* a word the reasons must hold, or NULL */
};

#define BIT(c) (1u << (c))

/* The figures of a quiet single-threaded run of 0.63 s (pf_page_cache here). */
static struct witness_figures quiet_run(void)
{
	struct witness_figures f;
	size_t i;

	witness_figures_init(&f);
	f.page_faults = 15401;
	f.major_faults = 0;
	f.context_switches = 127;
	f.task_clock_ns = 273.8e6;
	f.thread_ns = 631.2e6;
	f.run_delay_missing = "a workload's tasks take their run_delay with them when they exit";
	f.tlb_ipis = 17;
	for (i = 0; i < ARGUS_MAX_SLOTS; i++)
		f.slot_runs[i] = 221148;
	return f;
}

static void put(struct mvec *v, const struct reported *r)
{
	char key[192];

	if (r->count != ABSENT) {
		snprintf(key, sizeof(key), "%s/count", r->id);
		mvec_set(v, key, r->count);
	}
	if (r->time_ns != ABSENT) {
		snprintf(key, sizeof(key), "%s/time_ns", r->id);
		mvec_set(v, key, r->time_ns);
	}
}

static unsigned checks_in(const json_t *list)
{
	unsigned mask = 0;
	json_t *e;
	size_t i;
	int c;

	json_array_foreach(list, i, e)
		for (c = 0; c < WITNESS_CHECK_MAX; c++)
			if (!strcmp(json_string_value(json_object_get(e, "check")) ?: "",
				    witness_check_name(c)))
				mask |= BIT(c);
	return mask;
}

static void run_row(const struct row *row)
{
	struct probe_plan plan = {};
	struct mvec v = {};
	struct witness_result w;
	_cleanup_free_ char *why = NULL;
	size_t i;

	tap_subtest(row->name);
	for (i = 0; i < MAX_NODES && row->slots[i].id; i++) {
		plan.slots[i] = (struct probe_slot){ .node = node(row->slots[i].id),
						     .backend = BACKEND_TRACEPOINT };
		put(&v, &row->slots[i]);
	}
	plan.n_slots = i;
	for (i = 0; i < MAX_NODES && row->derived[i].id; i++)
		put(&v, &row->derived[i]);
	REQUIRE(witness_check(tree, &plan, &v, &row->fig, &w) == 0);
	why = witness_reasons(&w);
	CHECK_EQ(checks_in(w.failed), row->fail, "failed checks");
	/* one reason per failed check */
	CHECK_EQ(json_array_size(w.failed), __builtin_popcount(row->fail), "reasons");
	CHECK_EQ(w.agree, row->fail == 0, "agree");
	CHECK_EQ(checks_in(w.unchecked) & row->unchecked, row->unchecked, "unchecked");
	CHECKF(!row->needle || strstr(why, row->needle), "\"%s\" not in: %s", row->needle, why);
	CHECK(!*why == w.agree);
	if (row->fail != checks_in(w.failed))
		fprintf(stderr, "# %s: %s\n", row->name, why);
	witness_result_clear(&w);
	mvec_free(&v);
}

static void test_table(void)
{
	struct witness_figures quiet = quiet_run(), delay = quiet_run(), noperf = quiet_run(),
			       norun = quiet_run(), nothing, major = quiet_run(),
			       threads = quiet_run(), slept = quiet_run();

	witness_figures_init(&nothing);
	/* a running target whose threads stayed: run_delay was read */
	delay.run_delay_ns = 120e6;
	delay.run_delay_missing = NULL;
	noperf.page_faults = noperf.major_faults = noperf.task_clock_ns = NAN;
	noperf.context_switches = NAN;
	norun.slot_runs[0] = norun.slot_runs[1] = NAN;
	norun.tlb_ipis = NAN;
	/* pf_major: every file fault read from storage and slept for it */
	major.page_faults = 12354;
	major.major_faults = 12288;
	major.context_switches = 12305;
	/* pf_page_cache while the cache is dropped: faults that slept, few the kernel calls major */
	slept.page_faults = 35885;
	slept.major_faults = 9;
	slept.context_switches = 420;
	slept.task_clock_ns = 342e6;
	slept.thread_ns = 1.538e9;
	/* futex_contend: five threads */
	threads.thread_ns = 4.85e9;
	threads.task_clock_ns = 0.59e9;

	const struct row rows[] = {
		{ "honest-level1",
		  { { "kernel_paging", 15380, 90e6 },
		    { "kernel_scheduler", 130, 96e6 },
		    { "kernel_memory_pressure", 0, 0 },
		    { "kernel_block_io", 0, 0 },
		    { "kernel_sync", 3, 1e5 } },
		  {},
		  quiet,
		  0,
		  BIT(WITNESS_RUNQUEUE) },
		{ "ten-times-faults",
		  { { "kernel_paging", 153800, 90e6 },
		    { "kernel_scheduler", 130, 96e6 },
		    { "kernel_sync", 3, 1e5 } },
		  {},
		  quiet,
		  BIT(WITNESS_FAULTS),
		  0,
		  "page faults" },
		/* counts at the tolerance pass; one more fails */
		{ "faults-at-tolerance",
		  { { "kernel_paging", 15401 + 2 * 17 + WITNESS_COUNT_SLACK +
					       WITNESS_COUNT_SLACK_FRAC * (15401 + 2 * 17),
		      1e6 } },
		  {},
		  quiet,
		  0 },
		{ "faults-beyond-tolerance",
		  { { "kernel_paging", 15401 + 2 * 17 + WITNESS_COUNT_SLACK +
					       WITNESS_COUNT_SLACK_FRAC * (15401 + 2 * 17) + 1,
		      1e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_FAULTS) },
		{ "pointer-count",
		  { { "kernel_paging", POINTER, 90e6 }, { "kernel_scheduler", 130, 96e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_PLAUSIBLE) | BIT(WITNESS_FAULTS) | BIT(WITNESS_RUNS),
		  0,
		  "kernel_paging/count" },
		{ "pointer-time",
		  { { "kernel_paging", 15000, POINTER }, { "kernel_scheduler", 130, 96e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_PLAUSIBLE) | BIT(WITNESS_THREAD_TIME),
		  0,
		  "kernel_paging/time_ns" },
		/* user-space pointers are smaller, still beyond any run */
		{ "user-pointer-count",
		  { { "kernel_scheduler", 140737488355000.0, 96e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_PLAUSIBLE) | BIT(WITNESS_RUNS) },
		{ "not-finite",
		  { { "kernel_paging", NAN, 1e6 }, { "kernel_scheduler", 10, INFINITY } },
		  {},
		  quiet,
		  BIT(WITNESS_PLAUSIBLE) | BIT(WITNESS_FAULTS) | BIT(WITNESS_RUNQUEUE) |
			  BIT(WITNESS_THREAD_TIME) | BIT(WITNESS_RUNS) },
		{ "negative",
		  { { "kernel_sync", -5, 1e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_PLAUSIBLE),
		  0,
		  "not negative" },
		/* level 2 under kernel_paging: the parent derived from the slots */
		{ "honest-paging-level2",
		  { { "kernel_paging.anon_fault", 60, 1e5 },
		    { "kernel_paging.file_fault", 15300, 88e6 },
		    { "kernel_paging.tlb_shootdown", 1, ABSENT } },
		  { { "kernel_paging", 15361, 88.1e6 } },
		  quiet,
		  0 },
		{ "tlb-unknown",
		  { { "kernel_paging.anon_fault", 60, 1e5 },
		    { "kernel_paging.file_fault", 15300, 88e6 },
		    { "kernel_paging.tlb_shootdown", 1, ABSENT } },
		  {},
		  norun,
		  0,
		  BIT(WITNESS_FAULTS) | BIT(WITNESS_RUNS) },
		{ "tlb-flood",
		  { { "kernel_paging.anon_fault", 60, 1e5 },
		    { "kernel_paging.file_fault", 15300, 88e6 },
		    { "kernel_paging.tlb_shootdown", 20000, ABSENT } },
		  {},
		  quiet,
		  BIT(WITNESS_FAULTS),
		  0,
		  "TLB shootdown interrupts" },
		/* level 3 under file_fault: the major leaf against perf's major faults */
		{ "honest-major",
		  { { "kernel_paging.file_fault.page_cache", 60, 1e5 },
		    { "kernel_paging.file_fault.major", 12290, 400e6 } },
		  {},
		  major,
		  0 },
		{ "slept-major",
		  { { "kernel_paging.file_fault.page_cache", 35463, 83e6 },
		    { "kernel_paging.file_fault.major", 163, 776e6 } },
		  {},
		  slept,
		  0 },
		{ "beyond-slept-major",
		  { { "kernel_paging.file_fault.page_cache", 33000, 83e6 },
		    { "kernel_paging.file_fault.major", 1630, 776e6 } },
		  {},
		  slept,
		  BIT(WITNESS_MAJOR),
		  0,
		  "context switches" },
		{ "made-up-major",
		  { { "kernel_paging.file_fault.page_cache", 10, 1e5 },
		    { "kernel_paging.file_fault.major", 12000, 400e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_MAJOR),
		  0,
		  "major faults" },
		{ "no-perf",
		  { { "kernel_paging.file_fault.page_cache", 10, 1e5 },
		    { "kernel_paging.file_fault.major", 200000, 400e6 } },
		  {},
		  noperf,
		  0,
		  BIT(WITNESS_FAULTS) | BIT(WITNESS_MAJOR) },
		/* runqueue time against run_delay, where it was read */
		{ "runqueue-within-run-delay",
		  { { "kernel_scheduler.runqueue_wait", 400, 125e6 },
		    { "kernel_scheduler.load_balance", 3, ABSENT },
		    { "kernel_scheduler.fork", 0, 0 } },
		  { { "kernel_scheduler", 403, 125e6 } },
		  delay,
		  0 },
		{ "runqueue-beyond-run-delay",
		  { { "kernel_scheduler.runqueue_wait", 400, 300e6 },
		    { "kernel_scheduler.load_balance", 3, ABSENT },
		    { "kernel_scheduler.fork", 0, 0 } },
		  {},
		  delay,
		  BIT(WITNESS_RUNQUEUE),
		  0,
		  "run_delay" },
		/* without run_delay: against the off-CPU time (357 ms here) */
		{ "runqueue-beyond-off-cpu",
		  { { "kernel_scheduler.runqueue_wait", 400, 500e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_RUNQUEUE),
		  BIT(WITNESS_RUNQUEUE),
		  "off-CPU" },
		/* level 1: the scheduler's time also holds fork time, the forking thread's CPU */
		{ "scheduler-with-fork-time",
		  { { "kernel_scheduler", 1330, 350e6 } },
		  {},
		  delay,
		  0 },
		{ "scheduler-beyond-cpu-and-delay",
		  { { "kernel_scheduler", 1330, 450e6 } },
		  {},
		  delay,
		  BIT(WITNESS_RUNQUEUE) },
		/* five threads lived 4.85 s: a futex time of 3 s is possible, 6 s is not */
		{ "threads-honest",
		  { { "kernel_sync", 30000, 3e9 } },
		  {},
		  threads,
		  0 },
		{ "beyond-thread-time",
		  { { "kernel_sync", 30000, 6e9 } },
		  {},
		  threads,
		  BIT(WITNESS_THREAD_TIME),
		  0,
		  "lived" },
		{ "more-than-its-programs-ran",
		  { { "kernel_sync", 300000, 1e6 } },
		  {},
		  quiet,
		  BIT(WITNESS_RUNS),
		  0,
		  "ran 221148 times" },
		{ "nothing-known",
		  { { "kernel_paging", 1e9, 1e13 }, { "kernel_scheduler", 5, 5e9 } },
		  {},
		  nothing,
		  0,
		  BIT(WITNESS_FAULTS) | BIT(WITNESS_RUNQUEUE) | BIT(WITNESS_THREAD_TIME) |
			  BIT(WITNESS_RUNS) },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		run_row(&rows[i]);
	tap_subtest_name = NULL;
}

/* Which programs may count a slot: the node's hooks, its classes' companions, fork and exit. */
static void test_slot_runs(void)
{
	int major = node("kernel_paging.file_fault.major"), runq = node("kernel_scheduler.runqueue_wait");
	struct probe_plan plan = { .slots = { { .node = major }, { .node = runq } }, .n_slots = 2 };
	const struct witness_program progs[] = {
		{ "tp_btf/page_fault_user", 1000 },   { "tp_btf/sched_switch", 500 },
		{ "raw_tp/sys_enter", 70 },	      { "tp_btf/block_rq_issue", 7 },
		{ "tp_btf/sched_process_fork", 3 },   { "tp_btf/sched_wakeup", 20 },
		{ "kprobe/filemap_fault+0x10", 100000 }, { NULL, 1e9 },
	};
	double runs[ARGUS_MAX_SLOTS];

	tap_subtest("slot-runs");
	choose(major, BACKEND_TRACEPOINT,
	       "page_fault_user+sched_switch+mm_filemap_add_to_page_cache");
	choose(runq, BACKEND_TRACEPOINT, "sched_wakeup+sched_wakeup_new+sched_switch");
	witness_slot_runs(tree, &plan, progs, ARRAY_SIZE(progs), runs);
	/*
	 * the major leaf: its hooks, fork; not block_rq_issue, and not sys_enter
	 * (a fault closes without it: bpf/faults.bpf.h, fault_open)
	 */
	CHECKF(runs[0] == 1000 + 500 + 3 + 20, "major: %.0f", runs[0]);
	/* runqueue waits: switch, wakeup, fork; not the fault or syscall programs */
	CHECKF(runs[1] == 500 + 3 + 20, "runqueue: %.0f", runs[1]);
	choose(runq, BACKEND_TRACEPOINT, "sched_wakeup");
	/* kprobe on a node function counts for it, offset and all */
	choose(major, BACKEND_KPROBE, "filemap_fault");
	witness_slot_runs(tree, &plan, progs, ARRAY_SIZE(progs), runs);
	CHECKF(runs[0] == 100000 + 500 + 3 + 20 + 1000, "kprobe: %.0f", runs[0]);
	/* back to the unresolved tree the other tests use */
	tree_node_choose(&tree->nodes[major], BACKEND_NONE, NULL);
	tree_node_choose(&tree->nodes[runq], BACKEND_NONE, NULL);
	tap_subtest_name = NULL;
}

static void test_misc(void)
{
	struct witness_figures f;
	struct probe_plan empty = {}, bad = { .slots = { { .node = 9999 } }, .n_slots = 1 };
	struct mvec v = {};
	struct witness_result w = {};
	json_t *j;
	char *s;

	tap_subtest("misc");
	witness_figures_init(&f);
	CHECK(isnan(f.page_faults) && isnan(f.thread_ns) && isnan(f.slot_runs[ARGUS_MAX_SLOTS - 1]));
	CHECK(witness_check(tree, &empty, &v, &f, &w) == -EINVAL);
	CHECK(witness_check(tree, &bad, &v, &f, &w) == -EINVAL);
	CHECK(!w.failed && !w.unchecked);
	f.page_faults = 12;
	f.slot_runs[1] = 7;
	j = witness_figures_to_json(&f, 2);
	CHECK(json_is_null(json_object_get(j, "thread_ns")));
	CHECK(json_number_value(json_object_get(j, "page_faults")) == 12);
	CHECK(json_array_size(json_object_get(j, "slot_runs")) == 2 &&
	      json_is_null(json_array_get(json_object_get(j, "slot_runs"), 0)) &&
	      json_number_value(json_array_get(json_object_get(j, "slot_runs"), 1)) == 7);
	json_decref(j);
	CHECK_STREQ(witness_check_name(WITNESS_RUNS), "runs", "name");
	CHECK_STREQ(witness_check_name(WITNESS_CHECK_MAX), "?", "out of range");
	w.failed = json_pack("[{s:s,s:s},{s:s,s:s}]", "check", "faults", "reason", "a", "check",
			     "runs", "reason", "b");
	s = witness_reasons(&w);
	CHECK_STREQ(s, "a; b", "reasons joined");
	free(s);
	witness_result_clear(&w);
	witness_result_clear(NULL);
	tap_subtest_name = NULL;
}

int main(void)
{
	tree = load_real();
	test_table();
	test_slot_runs();
	test_misc();
	tree_free(tree);
	return tap_done("test-witness");
}
