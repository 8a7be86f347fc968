#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Does probing change how much a perturber slows a victim? Side by side in
one run: the victim alone under perf stat (unprobed, as truth_measure.py
runs it) and the victim run by argusd with every leaf probed (a reference
recording, as a diagnosis runs it), each on the quiet system and under the
perturber, in interleaved rounds. Prints both slowdowns and their ratio.

    bench/eval/observer.py --build build --cell pf_major:cpu_hog [--rounds 3] [--reps 3]
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402
import matrix  # noqa: E402
import truth_measure  # noqa: E402


def probed(d, victim, reps):
    """Wall seconds of reps probed runs by argusd (a reference recording)."""
    job, _ = d.follow(d.submit("/references", {"workload": victim, "repeats": reps}))
    if job["state"] != "succeeded":
        raise RuntimeError("reference of %s: %s %s" % (victim, job["state"], job.get("error")))
    return [r["wall_s"] for r in job["result"]["runs"]]


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
    walls = {k: [] for k in ("unprobed quiet", "unprobed perturbed", "probed quiet", "probed perturbed")}
    reporting = evallib.hold_page_reporting()
    d = matrix.Argusd(a.build, work)
    try:
        for rnd in range(a.rounds):
            evallib.wait_quiet()
            truth_measure.run_once(a.build, victim)  # warm-up
            walls["unprobed quiet"] += [truth_measure.run_once(a.build, victim)["wall_s"]
                                        for _ in range(a.reps)]
            walls["probed quiet"] += probed(d, victim, a.reps)
            p = evallib.Perturber(a.build, pname, spec, work)
            try:
                p.start()
                time.sleep(spec.get("settle_s", 0.5))
                walls["unprobed perturbed"] += [truth_measure.run_once(a.build, victim)["wall_s"]
                                                for _ in range(a.reps)]
                walls["probed perturbed"] += probed(d, victim, a.reps)
            finally:
                p.stop()
    finally:
        d.stop()
        evallib.release_page_reporting(reporting)
    med = {k: evallib.median(v) for k, v in walls.items()}
    for k, v in walls.items():
        print("%-20s median %.3f s  (%s)" % (k, med[k], " ".join("%.3f" % x for x in v)))
    un = med["unprobed perturbed"] / med["unprobed quiet"]
    pr = med["probed perturbed"] / med["probed quiet"]
    print("%s: slowdown unprobed %+.1f%%, probed %+.1f%%, ratio probed/unprobed %.2f" % (
        a.cell, 100 * (un - 1), 100 * (pr - 1), pr / un))


if __name__ == "__main__":
    main()
