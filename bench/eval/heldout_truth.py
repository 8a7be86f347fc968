#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The held-out cells' truth, by the rule stated in heldout/cells.json before
they were measured: reads truth_measure.py's measurements of those cells and
writes a truth file in truth.json's form, every cell's reasoning with its
numbers, the cells that no rule explains left out. A set whose cells.json says
"undetermined_left_out": true (stated with its rule, before it is measured)
also leaves out a cell whose median perturbed run is more than 10% slower but
not beyond chance: neither a slowdown nor its absence is shown, and such a cell
is not a null cell that argusd must abstain on.

    bench/eval/heldout_truth.py MEASURED_DIR/truth-measured.json [--out heldout/truth.json]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402
import truth_measure  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "heldout")


def rose(q, p, key):
    """key's median rose as truth_measure counts a counter that moved."""
    return any(k == key and b > a for k, a, b in truth_measure.moved(q, p))


def off_cpu_s(s):
    return s["wall_s"] - (s.get("perf/task-clock") or 0) / 1e3  # task-clock is in ms


def paths(cell, perturber, victim_cpu, extra_rules=()):
    """The acceptable paths of a slower cell, and the rules that gave them: rules (1) to (4), and
    those of extra_rules that a set's rule adds."""
    q, p = cell["quiet"], cell["perturbed"]
    out, why = [], []
    if rose(q, p, "perf/major-faults"):
        out.append("kernel_paging.file_fault.major")
        why.append("(1) major faults %g -> %g" % (q["perf/major-faults"], p["perf/major-faults"]))
    if any(rose(q, p, "vmstat/" + k) for k in ("allocstall_normal", "allocstall_movable", "pgscan_direct")):
        out.append("kernel_memory_pressure.direct_reclaim")
        why.append("(2) direct reclaim rose")
    wall_rise = p["wall_s"] - q["wall_s"]
    off_rise = off_cpu_s(p) - off_cpu_s(q)
    waited = wall_rise > 0 and off_rise >= 0.5 * wall_rise
    if waited and perturber["cpu"] == victim_cpu:
        out.append("kernel_scheduler.runqueue_wait")
        why.append("(3) off the CPU %.3f -> %.3f s on a shared CPU" % (off_cpu_s(q), off_cpu_s(p)))
    if waited and perturber["cpu"] != victim_cpu and (rose(q, p, "vmstat/pgpgin") or rose(q, p, "vmstat/pgpgout")):
        # every leaf of kernel_block_io: its own requests, and the writes made for its syncs
        out += ["kernel_block_io.queue", "kernel_block_io.device", "kernel_block_io.commit"]
        why.append("(4) off the CPU %.3f -> %.3f s, pgpgin %g -> %g, pgpgout %g -> %g" % (
            off_cpu_s(q), off_cpu_s(p), q["vmstat/pgpgin"], p["vmstat/pgpgin"],
            q["vmstat/pgpgout"], p["vmstat/pgpgout"]))
    if 5 in extra_rules and waited and rose(q, p, "vmstat/pgscan_kswapd"):
        out.append("kernel_memory_pressure.kswapd")
        why.append("(5) off the CPU %.3f -> %.3f s, pgscan_kswapd %g -> %g" % (
            off_cpu_s(q), off_cpu_s(p), q["vmstat/pgscan_kswapd"], p["vmstat/pgscan_kswapd"]))
    return out, why


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measured")
    ap.add_argument("--cells", default=os.path.join(HERE, "cells.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "truth.json"))
    a = ap.parse_args()
    with open(a.cells) as f:
        spec = json.load(f)
    with open(a.measured) as f:
        measured = json.load(f)["cells"]
    cells, left_out, undetermined = [], [], []
    for c in spec["cells"]:
        k = "%s:%s" % (c["victim"], c["perturber"])
        m = measured.get(k)
        if not m:
            continue
        pert = spec["perturbers"][c["perturber"]]
        cpus = evallib.workload(c["victim"]).get("cpus", "0")
        numbers = "%+.0f%% median wall (%.3f -> %.3f s), P(perturbed > quiet) %.2f, %d + %d runs" % (
            100 * m["slowdown"], m["quiet"]["wall_s"], m["perturbed"]["wall_s"], m["p_slower"],
            len(m["quiet_runs"]), len(m["runs"]))
        if not truth_measure.slower(m["quiet_runs"], m["runs"]):
            if spec.get("undetermined_left_out") and m["slowdown"] > truth_measure.SLOWER_REL:
                undetermined.append("%s: slower by the median, not beyond chance: %s" % (k, numbers))
                continue
            cells.append({"victim": c["victim"], "perturber": c["perturber"], "truth": "no_bottleneck",
                          "why": "not slower: " + numbers})
            continue
        found, why = paths(m, pert, int(cpus.split(",")[0].split("-")[0]),
                           spec.get("extra_rules", ()))
        if not found:
            left_out.append("%s: slower, no rule explains it: %s" % (k, numbers))
            continue
        cells.append({"victim": c["victim"], "perturber": c["perturber"], "truth": found,
                      "why": "slower: %s; %s" % (numbers, "; ".join(why))})
    out = {"version": 1, "victims": spec["victims"], "perturbers": spec["perturbers"],
           "rule": spec["rule"], "measured_by": "bench/eval/truth_measure.py on " + a.measured,
           "cells": cells, "left_out": {"no rule explains the slowdown": left_out}}
    if spec.get("undetermined_left_out"):
        out["left_out"]["slower by the median, not beyond chance"] = undetermined
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for c in cells:
        print("%-28s %s" % (c["victim"] + ":" + c["perturber"],
                            c["truth"] if isinstance(c["truth"], str) else " | ".join(c["truth"])))
    for l in left_out + undetermined:
        print("left out: " + l)


if __name__ == "__main__":
    main()
