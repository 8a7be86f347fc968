#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Does probing change how much a perturber slows a victim? Side by side in
one run: the victim alone (bare: started here as argusd places it, its CPU
time and its runqueue delay read from the kernel's own schedstat) and the
victim run by argusd with every leaf probed (a reference recording, as a
diagnosis runs it: its runqueue time is the probe's runq_wait), each on the
quiet system and under the perturber, in interleaved rounds. Prints both
slowdowns, their ratio, and how much runqueue time the perturber added in
each kind of run.

    bench/eval/observer.py --build build --cell pf_major:cpu_hog [--rounds 3] [--reps 3]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402
import matrix  # noqa: E402

KINDS = ("bare quiet", "bare perturbed", "probed quiet", "probed perturbed")


def bare(build, victim):
    """One run without argusd: (wall s, CPU ms, runqueue ms). The kernel's
    schedstat of the exited child is read before it is reaped."""
    t0 = time.monotonic()
    p = subprocess.Popen(evallib.victim_argv(build, victim), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         preexec_fn=evallib.victim_preexec(victim))
    try:
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
        wall = time.monotonic() - t0
        with open("/proc/%d/schedstat" % p.pid) as f:
            on_cpu, run_delay = (int(x) for x in f.read().split()[:2])
    finally:
        p.wait()
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d)" % (victim, p.returncode))
    return wall, on_cpu / 1e6, run_delay / 1e6


def probed(d, victim, reps):
    """reps runs by argusd (a reference recording): (wall s, CPU ms, runqueue ms) each."""
    job, _ = d.follow(d.submit("/references", {"workload": victim, "repeats": reps}))
    if job["state"] != "succeeded":
        raise RuntimeError("reference of %s: %s %s" % (victim, job["state"], job.get("error")))
    st, ref = d.call("GET", "/references/%d" % job["result"]["reference"])
    if st != 200:
        raise RuntimeError("GET /references/%d: %d" % (job["result"]["reference"], st))
    out = []
    for r in ref["runs"]:
        runq = r.get("class/runq_wait/time_ns", 0) + r.get("class/runq_own/time_ns", 0)
        out.append((r["target/wall_ns"] / 1e9, r.get("perf/task_clock_ns", 0) / 1e6, runq / 1e6))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(evallib.SRC, "build"))
    ap.add_argument("--truth", default=os.path.join(evallib.SRC, "bench", "eval", "truth.json"))
    ap.add_argument("--cell", required=True, help="victim:perturber")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3, help="runs of each kind per round (argusd records 3 at least)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if os.geteuid() != 0:
        sys.exit("observer: run as root (argusd loads eBPF programs; perturbers change settings)")
    victim, pname = a.cell.split(":")
    spec = evallib.load_truth(a.truth)["perturbers"][pname]
    work = tempfile.mkdtemp(prefix="argus-observer-")
    runs = {k: [] for k in KINDS}
    reporting = evallib.hold_host_reclaim()
    d = matrix.Argusd(a.build, work)
    try:
        os.sched_setaffinity(0, {1})  # away from the victims' CPU 0, as matrix.py
        for rnd in range(a.rounds):
            evallib.wait_quiet()
            bare(a.build, victim)  # warm-up
            runs["bare quiet"] += [bare(a.build, victim) for _ in range(a.reps)]
            runs["probed quiet"] += probed(d, victim, a.reps)
            p = evallib.Perturber(a.build, pname, spec, work)
            try:
                p.start()
                time.sleep(spec.get("settle_s", 0.5))
                runs["bare perturbed"] += [bare(a.build, victim) for _ in range(a.reps)]
                runs["probed perturbed"] += probed(d, victim, a.reps)
            finally:
                p.stop()
    finally:
        d.stop()
        evallib.release_host_reclaim(reporting)
    med = {k: [evallib.median([r[i] for r in v]) for i in range(3)] for k, v in runs.items()}
    for k in KINDS:
        print("%-17s wall %.3f s  CPU %7.1f ms  runqueue %7.1f ms  (walls %s)" % (
            k, med[k][0], med[k][1], med[k][2], " ".join("%.3f" % r[0] for r in runs[k])))
    un = med["bare perturbed"][0] / med["bare quiet"][0]
    pr = med["probed perturbed"][0] / med["probed quiet"][0]
    print("%s: slowdown bare %+.1f%%, probed %+.1f%%, ratio probed/bare %.2f" % (
        a.cell, 100 * (un - 1), 100 * (pr - 1), pr / un))
    print("runqueue time added by %s: bare %+.1f ms (kernel run_delay), probed %+.1f ms "
          "(runq_wait)" % (pname, med["bare perturbed"][2] - med["bare quiet"][2],
                           med["probed perturbed"][2] - med["probed quiet"][2]))


if __name__ == "__main__":
    main()
