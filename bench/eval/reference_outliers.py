#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""How the held-out matrices' diagnoses went against references that had one run far from the
others: for every bench/eval/results/*/heldout-set*/matrix/results.json, each reference recorded
(at the start and again after a lasting perturber) is flagged when one of its runs' wall times lies
more than a bound from the median of its runs; the calibrated runs judged against flagged and
unflagged references are tallied apart (null runs: incorrect or abstaining; runs with a cause:
correct, incorrect or missed), for each bound. argusd's reference takes the median and a scaled MAD
of its runs, so one such run does not make it noisy: this is what a rule that records such a
reference again would have had to go on. A guide over results of many rules, not a result.

    reference_outliers.py [--bounds 0.1,0.2,0.3,0.5] [--list 0.3]
"""

import argparse
import json
import os
import statistics

import evallib

def references(results):
    """{id: (victim, walls)} of every reference a matrix run recorded."""
    out = {}
    for victim, ref in (results.get("references") or {}).items():
        out[ref["id"]] = (victim, ref["walls_s"])
    for victim, refs in (results.get("references_again") or {}).items():
        for ref in refs:
            out[ref["id"]] = (victim, ref["walls_s"])
    return out


def farthest(walls):
    """The largest distance of a run from the median of the runs, relative to it."""
    m = statistics.median(walls)
    return max(abs(w - m) for w in walls) / m


def tally_runs(results, flagged, into):
    """Count each calibrated run judged against a flagged or an unflagged reference, by its
    outcome: ("null", outcome) on a cell without a bottleneck, ("cause", outcome) on one with,
    a commit at depth 1 to 3 counted as correct."""
    for run in results["runs"]:
        if run["mode"] != "calibrated" or run["reference"] not in flagged:
            continue
        outcome = run["outcome"]
        if run["truth"] == "no_bottleneck":
            key = ("null", outcome)
        else:
            key = ("cause", "correct" if outcome in ("leaf", "shallow") else outcome)
        t = into[flagged[run["reference"]]]
        t[key] = t.get(key, 0) + 1


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bounds", default="0.1,0.2,0.3,0.5")
    ap.add_argument("--list", type=float, default=0.3, help="list the references flagged at this bound")
    a = ap.parse_args()
    loaded = [(p, load(p)) for p in evallib.heldout_matrix_results()]
    print("%d held-out matrix results" % len(loaded))
    for bound in [float(b) for b in a.bounds.split(",")]:
        into = {True: {}, False: {}}
        n = {True: 0, False: 0}
        for _, r in loaded:
            flagged = {i: farthest(w) > bound for i, (v, w) in references(r).items() if len(w) >= 3}
            for f in flagged.values():
                n[f] += 1
            tally_runs(r, flagged, into)
        print("\nbound %.0f%%: %d references flagged, %d not" % (bound * 100, n[True], n[False]))
        for f in (True, False):
            t = into[f]
            nulls = sum(v for (k, _), v in t.items() if k == "null")
            causes = sum(v for (k, _), v in t.items() if k == "cause")
            print("  %-8s null runs %4d: %3d incorrect; runs with a cause %4d: %3d correct, %3d incorrect, %3d missed"
                  % ("flagged" if f else "others", nulls, t.get(("null", "incorrect"), 0), causes,
                     t.get(("cause", "correct"), 0), t.get(("cause", "incorrect"), 0),
                     t.get(("cause", "miss"), 0)))
    print("\nreferences with a run more than %.0f%% from their median:" % (a.list * 100))
    for p, r in loaded:
        for i, (v, w) in sorted(references(r).items()):
            if len(w) >= 3 and farthest(w) > a.list:
                print("  %s %s id %d: %s" % (os.path.relpath(p, evallib.RESULTS).split("/matrix")[0], v, i,
                                            " ".join("%.2f" % x for x in w)))


if __name__ == "__main__":
    main()
