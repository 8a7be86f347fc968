#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""How the held-out matrices' diagnoses went against references that had one run far from the
others: for every bench/eval/results/*/heldout-set*/matrix/results.json, each reference recorded
(at the start and again after a lasting perturber) is flagged when one of its runs' wall times lies
more than a bound from the median of its runs; the calibrated runs judged against flagged and
unflagged references are tallied apart (null runs: incorrect or abstaining; runs with a cause:
correct, incorrect or missed), for each bound. argusd's reference sets aside the run farthest
from the median of five or more (a trimmed mean and deviation), so one such run does not make it
noisy: this is what a rule that records such a reference again would have had to go on. A guide
over results of many rules, not a result.

Then, for each reference whose first run lies more than the --list bound from the median of the
others, what that run's added wall time went to: its CPU time (perf/task_clock_ns), the host pace
read after it (argusd's fixed memory loop, daemon/host_pace.c) and the path whose time grew the
most, each against the median of the other runs. And the calibrated runs tallied apart by whether
their reference carried argusd's note that the host's pace moved while it was recorded, and by
whether it was recorded while the host ran slow as argusd's reference_pace_check judges it: the
median of its runs' pace readings 1.25 times (HOST_PACE_MOVED) or more the host's usual pace, the
median of the references the same matrix run recorded before it (what argusd knows of the host's
usual pace while recording it). The references that rule records again. Last, the calibrated runs
tallied by whether the host ran slow during the diagnosis's own runs (their pace 1.25 times or more
the reference's): what a rule that waited for the host's usual pace before a diagnosis's runs too
would have had to go on.

    reference_outliers.py [--bounds 0.1,0.2,0.3,0.5] [--list 0.3]
"""

import argparse
import json
import os
import statistics

import evallib

# argusd's own bound for a pace that moved (host_pace.h's HOST_PACE_MOVED)
PACE_SLOW = 1.25


def all_references(results):
    """(victim, reference) of every reference a matrix run recorded (at the start, and again after
    a lasting perturber), in the order recorded."""
    out = [(v, ref) for v, ref in (results.get("references") or {}).items()]
    out += [(v, ref) for v, refs in (results.get("references_again") or {}).items() for ref in refs]
    return sorted(out, key=lambda x: x[1]["id"])


def farthest(walls):
    """The largest distance of a run from the median of the runs, relative to it."""
    m = statistics.median(walls)
    return max(abs(w - m) for w in walls) / m


def tally_runs(results, flag, into):
    """Count each calibrated run that flag(run) marks True or False (None: left out), by its
    outcome: ("null", outcome) on a cell without a bottleneck, ("cause", outcome) on one with,
    a commit at depth 1 to 3 counted as correct."""
    for run in results["runs"]:
        f = flag(run) if run["mode"] == "calibrated" else None
        if f is None:
            continue
        outcome = run["outcome"]
        if run["truth"] == "no_bottleneck":
            key = ("null", outcome)
        else:
            key = ("cause", "correct" if outcome in ("leaf", "shallow") else outcome)
        into[f][key] = into[f].get(key, 0) + 1


def print_tally(into, n, names):
    """The tally of tally_runs, the flagged line first; names: (flagged, others); n: the references
    behind each line, or None where the runs were flagged by themselves."""
    for f, name in ((True, names[0]), (False, names[1])):
        t = into[f]
        nulls = sum(v for (k, _), v in t.items() if k == "null")
        causes = sum(v for (k, _), v in t.items() if k == "cause")
        refs = "%3d references; " % n[f] if n else ""
        print("  %-8s %snull runs %4d: %3d incorrect; runs with a cause %4d: %3d correct,"
              " %3d incorrect, %3d missed"
              % (name, refs, nulls, t.get(("null", "incorrect"), 0), causes,
                 t.get(("cause", "correct"), 0), t.get(("cause", "incorrect"), 0),
                 t.get(("cause", "miss"), 0)))


def tally_flagged(loaded, flag):
    """Tally every matrix run's calibrated runs by flag(its references in order), a {id: bool} of
    the references it judges."""
    into = {True: {}, False: {}}
    n = {True: 0, False: 0}
    for _, r in loaded:
        flagged = flag(all_references(r))
        for f in flagged.values():
            n[f] += 1
        tally_runs(r, lambda run: flagged.get(run["reference"]), into)
    return into, n


def slow_paced(refs, bound):
    """{id: flagged} of the references with a host pace reading, flagged as argusd's
    reference_pace_check would have found their runs (reference.c, usual_pace): the median of
    their runs' readings bound times or more the host's usual pace, the median of the pace medians
    of the references recorded before them in the same matrix run (on this VM every victim's pace
    is read on CPU 0, and a matrix run lasts under the day the rule looks back over). The first
    reference of a run has none to be judged against."""
    out, before = {}, []
    for _, ref in refs:
        hp = ref.get("host_pace")
        if not hp or not hp.get("median_ns"):
            continue
        out[ref["id"]] = bool(before) and hp["median_ns"] >= bound * statistics.median(before)
        before.append(hp["median_ns"])
    return out


def path_metrics(run):
    """The time metrics of a reference run's paths: "NODE/time_ns" with NODE a tree node."""
    return [k for k in run if k.endswith("/time_ns") and not k.startswith(("target/", "perf/", "class/"))]


def first_run_far(ref, bound):
    """When the reference's first run lies more than bound from the median of the others: its wall,
    CPU time and host pace each over the others' median, and the path whose time grew the most
    (name, ms over the others' median); None otherwise or when the runs lack what it needs."""
    runs, walls = ref.get("runs") or [], ref["walls_s"]
    if len(walls) < 3 or len(runs) != len(walls):
        return None
    rest = statistics.median(walls[1:])
    if abs(walls[0] - rest) / rest <= bound:
        return None

    def ratio(values):
        if any(v is None for v in values):
            return None
        m = statistics.median(values[1:])
        return values[0] / m if m > 0 else None

    cpu = ratio([r.get("perf/task_clock_ns") for r in runs])
    paces = ref.get("host_paces_ns") or []
    pace = ratio(paces) if len(paces) == len(walls) and all(p > 0 for p in paces) else None
    grew = [(k[:-len("/time_ns")], (runs[0][k] - statistics.median(r.get(k, 0) for r in runs[1:])) / 1e6)
            for k in path_metrics(runs[0])]
    top = max(grew, key=lambda g: g[1]) if grew else (None, 0.0)
    return {"wall": walls[0] / rest, "added_ms": (walls[0] - rest) * 1e3, "cpu": cpu, "pace": pace,
            "path": top[0], "path_ms": top[1]}


def pace_noted(ref):
    """Did argusd note that the host's pace moved while the reference was recorded?"""
    return bool((ref.get("host_pace") or {}).get("note"))


def where(path):
    """A results.json's set, as the listings name it: DAY/heldout-setN."""
    return os.path.relpath(path, evallib.RESULTS).split("/matrix")[0]


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
        into, n = tally_flagged(loaded, lambda refs: {
            ref["id"]: farthest(ref["walls_s"]) > bound for _, ref in refs if len(ref["walls_s"]) >= 3})
        print("\nbound %.0f%%: a run that far from the median of its reference's runs" % (bound * 100))
        print_tally(into, n, ("flagged", "others"))
    print("\nreferences with a run more than %.0f%% from their median:" % (a.list * 100))
    for p, r in loaded:
        for v, ref in all_references(r):
            w = ref["walls_s"]
            if len(w) >= 3 and farthest(w) > a.list:
                print("  %s %s id %d: %s" % (where(p), v, ref["id"], " ".join("%.2f" % x for x in w)))

    print("\nreferences whose first run lies more than %.0f%% from the median of the others"
          " (each figure the first run's over that median; the path's growth in ms):" % (a.list * 100))
    fmt = lambda x: "%.2f" % x if x is not None else "-"
    for p, r in loaded:
        for v, ref in all_references(r):
            f = first_run_far(ref, a.list)
            if f:
                print("  %s %s id %d: wall %.2f (%+.0f ms), CPU time %s, host pace %s; most grown path %s %+.1f ms"
                      % (where(p), v, ref["id"], f["wall"], f["added_ms"], fmt(f["cpu"]), fmt(f["pace"]),
                         f["path"], f["path_ms"]))

    into, n = tally_flagged(loaded, lambda refs: {
        ref["id"]: pace_noted(ref) for _, ref in refs if "host_pace" in ref})
    print("\nby argusd's note that the host's pace moved while the reference was recorded"
          " (references with a pace reading):")
    print_tally(into, n, ("noted", "others"))

    into, n = tally_flagged(loaded, lambda refs: slow_paced(refs, PACE_SLOW))
    print("\nby the host's pace while the reference was recorded (reference_pace_check): the median of"
          " its runs' readings %.2f times or more the median of those of the references recorded before"
          " it in the same matrix run:" % PACE_SLOW)
    print_tally(into, n, ("slow", "others"))
    for p, r in loaded:
        slow = slow_paced(all_references(r), PACE_SLOW)
        for v, ref in all_references(r):
            if slow.get(ref["id"]):
                print("  %s %s id %d: median %.2f ns a load, its runs %s" % (
                    where(p), v, ref["id"], ref["host_pace"]["median_ns"],
                    " ".join("%.2f" % x for x in ref.get("host_paces_ns") or [])))

    print("\nby the host's pace during the diagnosis's own runs: the median of their readings %.2f"
          " times or more the reference's (the result's host_pace.ratio; runs with a reading):"
          % PACE_SLOW)
    def slow_runs(run):
        ratio = (run.get("host_pace") or {}).get("ratio")
        return None if ratio is None else ratio >= PACE_SLOW

    into = {True: {}, False: {}}
    for _, r in loaded:
        tally_runs(r, slow_runs, into)
    print_tally(into, None, ("slow", "others"))


if __name__ == "__main__":
    main()
