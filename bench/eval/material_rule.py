#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What the material rule (a named path adds at least min_slowdown of the reference's wall time)
would have said of the commits already made: for every held-out matrix run under
bench/eval/results/*/heldout-set*/matrix/results.json whose levels keep their evidence (the
committing levels' flagged metrics and wall time), each calibrated commit's path time added at its
committing runs, as a fraction of the reference's wall time, and whether the smaller of them reaches
MIN. An approximation of the rule, which argusd applies at every level's run: a subsystem's time
added at level 1 is at least its leaf's. The sets before 30 ran under earlier rules.

    material_rule.py [--min 0.10]
"""

import argparse
import json
import os

import evallib

def added_fractions(run):
    """The committed path's time added at each committing run, over the reference's wall time."""
    out = []
    for level in run["levels"]:
        if level["action"] != "commit":
            continue
        wall = level["wall"]
        for f in level["flagged"]:
            if f["metric"] == level["node"] + "/time_ns" and wall["reference"] > 0:
                out.append((f["value"] - f["reference"]) / wall["reference"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min", type=float, default=0.10)
    a = ap.parse_args()
    tally = {}
    for path in evallib.heldout_matrix_results():
        set_name = path.split(os.sep)[-3]
        with open(path) as f:
            runs = json.load(f)["runs"]
        for r in runs:
            if r["mode"] != "calibrated" or r["outcome"] not in ("leaf", "shallow", "incorrect"):
                continue
            fr = added_fractions(r)
            kept = bool(fr) and min(fr) >= a.min
            key = ("correct" if r["outcome"] != "incorrect" else "incorrect", kept)
            tally[key] = tally.get(key, 0) + 1
            if not kept:
                print("%-14s %-40s rep %d %-9s %s" % (set_name, r["cell"], r["rep"], r["outcome"],
                                                      " ".join("%.3f" % x for x in fr) or "-"))
    for outcome in ("correct", "incorrect"):
        kept, dropped = tally.get((outcome, True), 0), tally.get((outcome, False), 0)
        print("%s commits: %d, %d of them under the rule's %.0f%% (abstaining under it)" % (
            outcome, kept + dropped, dropped, a.min * 100))


if __name__ == "__main__":
    main()
