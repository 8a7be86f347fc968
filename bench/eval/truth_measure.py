#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Measure each cell's ground truth without argusd: run the victim alone on
its CPU (as its workload file says: argv, user, cpus) on the quiet system and
under the cell's perturber, under `perf stat` (software events) with
/proc/vmstat deltas around each run, and report the slowdown and the
counters that move. Writes DIR/truth-measured.json and DIR/truth-measured.md.

    bench/eval/truth_measure.py [--build build] [--cells all] [--reps 3] [--rounds 1] [--out DIR]

With --rounds R, each perturber is started and stopped R times, and each round
runs every victim --reps times quiet, then --reps times perturbed: quiet and
perturbed runs interleave, so that a victim whose own speed drifts (a disk's
latency) is compared with quiet runs of the same minutes. A perturber marked
"lasting" in the truth file leaves state behind that a quiet run after it
would inherit (the victim's cached file split into small folios); it runs as
one round of --reps x --rounds runs, its quiet runs all before it starts.
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402

# duration_time: the victim's own wall time, from its exec to its exit, without
# the launcher's start-up (after a cache drop, perf's own page-ins would count).
PERF_EVENTS = ["duration_time", "task-clock", "page-faults", "minor-faults", "major-faults",
               "context-switches", "cpu-migrations"]
# The /proc/vmstat counters that tell the paths apart.
VMSTAT = ["pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "compact_stall",
          "compact_fail", "compact_success", "allocstall_normal", "allocstall_movable",
          "pgscan_direct", "pgsteal_direct", "pgscan_kswapd", "nr_tlb_remote_flush",
          "nr_tlb_remote_flush_received", "pgpgin", "pgpgout", "workingset_refault_file"]


def run_once(build, name):
    # perf itself runs placed as the victim, so that its counting starts at the victim's exec.
    cmd = ["perf", "stat", "-x", ";", "-e", ",".join(PERF_EVENTS), "--"] + evallib.victim_argv(build, name)
    v0 = evallib.vmstat()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=evallib.victim_preexec(name))
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    v1 = evallib.vmstat()
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (name, p.returncode, p.stderr[-400:]))
    perf = {}
    for line in p.stderr.splitlines():
        f = line.split(";")
        name = f[2].split(":")[0] if len(f) > 3 else ""  # "major-faults:u" when not root
        if name in PERF_EVENTS:
            try:
                perf[name] = float(f[0])
            except ValueError:
                perf[name] = None
    if perf.get("duration_time"):
        wall = perf["duration_time"] / 1e9
    # User and system CPU time of perf and the victim (perf's own is a few ms):
    # a slowdown only in user time is not the kernel's.
    return {"wall_s": wall, "user_s": r1.ru_utime - r0.ru_utime, "sys_s": r1.ru_stime - r0.ru_stime,
            "perf": perf,
            "vmstat": {k: v1.get(k, 0) - v0.get(k, 0) for k in VMSTAT}}


def summarize(runs):
    walls = [r["wall_s"] for r in runs]
    out = {"wall_s": evallib.median(walls), "wall_min_s": min(walls), "wall_max_s": max(walls),
           "user_s": evallib.median([r["user_s"] for r in runs]),
           "sys_s": evallib.median([r["sys_s"] for r in runs])}
    for k in PERF_EVENTS:
        out["perf/" + k] = evallib.median([r["perf"].get(k) or 0 for r in runs])
    for k in VMSTAT:
        out["vmstat/" + k] = evallib.median([r["vmstat"][k] for r in runs])
    return out


def moved(quiet, pert, min_rel=0.25, min_abs=50):
    """Counters whose median moved by > min_rel and > min_abs (wall and task-clock excluded)."""
    out = []
    for k in quiet:
        if k.startswith("wall_") or k in ("user_s", "sys_s", "perf/task-clock", "perf/duration_time"):
            continue
        a, b = quiet[k] or 0, pert[k] or 0
        if abs(b - a) > min_abs and abs(b - a) > min_rel * max(abs(a), 1):
            out.append((k, a, b))
    return out


SLOWER_REL = 0.10


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(evallib.SRC, "build"))
    ap.add_argument("--truth", default=os.path.join(evallib.SRC, "bench", "eval", "truth.json"))
    ap.add_argument("--cells", default="all")
    ap.add_argument("--reps", type=int, default=3, help="runs per victim per round, quiet and perturbed each")
    ap.add_argument("--rounds", type=int, default=1, help="perturber starts per cell")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if os.geteuid() != 0:
        sys.exit("truth_measure: run as root (perturbers change system settings)")
    truth = evallib.load_truth(a.truth)
    keys = evallib.select_cells(truth, a.cells)
    out = a.out or os.path.join(evallib.SRC, "bench", "eval", "out", "truth-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    log = lambda s: print(s, flush=True)

    # As in the matrix: free page reporting held, so that no run pays host faults after idle.
    reporting = evallib.hold_host_reclaim()
    try:
        measure(a, truth, keys, out, log)
    finally:
        evallib.release_host_reclaim(reporting)


def p_slower(quiet_runs, runs):
    """P(a perturbed run is slower than a quiet one), over all pairs (Mann-Whitney U / n1 n2)."""
    q = [r["wall_s"] for r in quiet_runs]
    p = [r["wall_s"] for r in runs]
    return sum((a > b) + 0.5 * (a == b) for a in p for b in q) / (len(p) * len(q))


def slower(quiet_runs, runs, min_rel=SLOWER_REL):
    """The rule of truth.json for a cell with a bottleneck: the median perturbed
    run is more than min_rel slower than the median quiet one, and perturbed
    runs are slower than quiet ones beyond chance (one-sided Mann-Whitney,
    normal approximation, p < 0.01: P >= 0.96 over 5x5 runs, 0.81 over 10x10)."""
    n1, n2 = len(quiet_runs), len(runs)
    q, s = summarize(quiet_runs), summarize(runs)
    u_crit = n1 * n2 / 2 + 2.326 * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return s["wall_s"] > (1 + min_rel) * q["wall_s"] and p_slower(quiet_runs, runs) * n1 * n2 > u_crit


def measure(a, truth, keys, out, log):
    # The quiet runs of a perturber's victims come right before it starts, so
    # that a slow drift of this shared machine does not read as a slowdown.
    quiet = {}
    pert = {}
    results = {}
    by_pert = {}
    for k in keys:
        by_pert.setdefault(k.split(":")[1], []).append(k)
    for pname, cell_keys in by_pert.items():
        spec = truth["perturbers"][pname]
        rounds, reps = (1, a.reps * a.rounds) if spec.get("lasting") else (a.rounds, a.reps)
        for rnd in range(rounds):
            evallib.wait_quiet(log=log)
            for k in cell_keys:
                v = k.split(":")[0]
                run_once(a.build, v)  # warm-up: data files, page cache
                quiet.setdefault(k, []).extend(run_once(a.build, v) for _ in range(reps))
            p = evallib.Perturber(a.build, pname, spec, out)
            try:
                p.start()
                time.sleep(spec.get("settle_s", 0.5))
                for k in cell_keys:
                    v = k.split(":")[0]
                    pert.setdefault(k, []).extend(run_once(a.build, v) for _ in range(reps))
            finally:
                p.stop()
        for k in cell_keys:
            runs = pert[k]
            q, s = summarize(quiet[k]), summarize(runs)
            slow = s["wall_s"] / q["wall_s"] - 1
            is_slower = slower(quiet[k], runs)
            results[k] = {"quiet": q, "perturbed": s, "slowdown": slow, "slower": is_slower,
                          "p_slower": p_slower(quiet[k], runs), "rounds": rounds,
                          "moved": moved(q, s), "quiet_runs": quiet[k], "runs": runs}
            log("%-30s %.3f -> %.3f s, %+6.1f%% %-6s P %.2f user %+.3f sys %+.3f s  %s" % (
                k, q["wall_s"], s["wall_s"], 100 * slow, "slower" if is_slower else "",
                results[k]["p_slower"], s["user_s"] - q["user_s"], s["sys_s"] - q["sys_s"],
                ", ".join("%s %g->%g" % m for m in moved(q, s)[:6])))
    with open(os.path.join(out, "truth-measured.json"), "w") as f:
        json.dump({"slower_rel": SLOWER_REL, "cells": results}, f, indent=1)
    with open(os.path.join(out, "truth-measured.md"), "w") as f:
        f.write("A cell is slower when its median run is more than %d%% slower than on the quiet "
                "system and its runs are slower than the quiet ones beyond chance (one-sided "
                "Mann-Whitney, p < 0.01).\n\n" % (100 * SLOWER_REL))
        f.write("| cell | quiet s (min-max) | perturbed s (min-max) | slowdown | slower | "
                "user s | sys s | counters that moved (quiet -> perturbed, medians) |\n")
        f.write("|---|---:|---:|---:|---|---|---|---|\n")
        for k, r in results.items():
            q, s = r["quiet"], r["perturbed"]
            f.write("| %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %+.0f%% | %s | %.3f -> %.3f | "
                    "%.3f -> %.3f | %s |\n" % (
                k, q["wall_s"], q["wall_min_s"], q["wall_max_s"], s["wall_s"], s["wall_min_s"],
                s["wall_max_s"], 100 * r["slowdown"], "yes" if r["slower"] else "no",
                q["user_s"], s["user_s"], q["sys_s"], s["sys_s"],
                "; ".join("%s %g -> %g" % m for m in r["moved"][:8])))
    log("wrote %s/truth-measured.{json,md}" % out)


if __name__ == "__main__":
    main()
