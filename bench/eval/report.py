# SPDX-License-Identifier: MIT
"""The matrix report: totals, a Markdown table per mode (one row per victim,
one column per perturber, one outcome letter per repetition), and an SVG in
the spirit of the paper's Fig. 3/4 (per-cell outcome bars, totals per mode).

    bench/eval/report.py RESULTS_DIR [TRUTH]   rewrite report.md and matrix.svg from results.json
                                               (TRUTH: the truth file, default truth.json)
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402

OUTCOMES = ["leaf", "shallow", "abstain", "miss", "incorrect", "failed"]
LETTER = {"leaf": "L", "shallow": "S", "abstain": "A", "miss": "M", "incorrect": "X", "failed": "F"}
COLOUR = {"leaf": "#2e7d32", "shallow": "#81c784", "abstain": "#1565c0", "miss": "#f9a825",
          "incorrect": "#c62828", "failed": "#757575"}


def totals(runs):
    t = {o: 0 for o in OUTCOMES}
    for r in runs:
        t[r["outcome"]] += 1
    ttd = [r["ttd_s"] for r in runs if r.get("ttd_s") is not None and r["outcome"] != "failed"]
    # commits (a path named, right or wrong) and abstentions apart: an abstention ends at level 1
    named = [r["ttd_s"] for r in runs if r.get("ttd_s") is not None and
             r["outcome"] in ("leaf", "shallow", "incorrect")]
    abstained = [r["ttd_s"] for r in runs if r.get("ttd_s") is not None and r["outcome"] in ("abstain", "miss")]
    nonnull = [r for r in runs if r["truth"] != "no_bottleneck" and r["outcome"] != "failed"]
    deep = [r for r in nonnull if r["outcome"] in ("leaf", "shallow") and r["depth"] >= 2]
    null = [r for r in runs if r["truth"] == "no_bottleneck" and r["outcome"] != "failed"]
    # a cell with two causes: both named (each a cause node on the way to its truth)
    two = [r for r in runs if r.get("two_causes") and r["outcome"] != "failed"]
    both = [r for r in two if all(any(t == c or t.startswith(c + ".") for c in r.get("causes") or [])
                                  for t in r["truth"])]
    return {
        "runs": len(runs), **t,
        "null_runs": len(null), "nonnull_runs": len(nonnull),
        "nonnull_correct_depth23": len(deep),
        "nonnull_correct_depth23_pct": 100.0 * len(deep) / len(nonnull) if nonnull else None,
        "ttd_median_s": evallib.median(ttd), "ttd_p90_s": evallib.percentile(ttd, 90),
        "ttd_commits_median_s": evallib.median(named), "ttd_abstentions_median_s": evallib.median(abstained),
        "two_cause_runs": len(two), "two_cause_runs_naming_both": len(both),
    }


def summary_lines(mode, cells, t):
    f = lambda x: "%.1f s" % x if x is not None else "-"
    return [
        "%s: cells %d, runs %d" % (mode, len(cells), t["runs"]),
        "  incorrect deep-path diagnoses: %d" % t["incorrect"],
        "  correct commits: %d (leaf %d / shallow %d)" % (t["leaf"] + t["shallow"], t["leaf"], t["shallow"]),
        "  correct abstentions: %d of %d null runs" % (t["abstain"], t["null_runs"]),
        "  misses: %d, failed runs: %d" % (t["miss"], t["failed"]),
        "  non-null runs committing to a correct path of depth 2-3: %d of %d%s" % (
            t["nonnull_correct_depth23"], t["nonnull_runs"],
            " (%.0f%%)" % t["nonnull_correct_depth23_pct"] if t["nonnull_correct_depth23_pct"] is not None else ""),
        "  time-to-diagnosis: median %s, p90 %s; commits %s, abstentions %s (medians)" % (
            f(t["ttd_median_s"]), f(t["ttd_p90_s"]), f(t.get("ttd_commits_median_s")),
            f(t.get("ttd_abstentions_median_s"))),
    ] + (["  runs of two-cause cells naming both causes: %d of %d" % (
        t["two_cause_runs_naming_both"], t["two_cause_runs"])] if t.get("two_cause_runs") else [])


def short(node):
    """A node id shortened; a list of them (a truth with several acceptable paths) joined."""
    if isinstance(node, list):
        return " or ".join(short(n) for n in node) if node else "-"
    return node.replace("kernel_", "k_") if node else "-"


def table(runs, victims, perts, truth):
    by = {}
    for r in runs:
        by.setdefault((r["victim"], r["perturber"]), []).append(r)
    lines = ["| victim \\ perturber | " + " | ".join(perts) + " |",
             "|---|" + "---|" * len(perts)]
    for v in victims:
        row = []
        for p in perts:
            rs = sorted(by.get((v, p), []), key=lambda r: r["rep"])
            if not rs:
                row.append("")
                continue
            t = truth["cell_map"]["%s:%s" % (v, p)]["truth"]
            row.append("%s<br>`%s`" % ("".join(LETTER[r["outcome"]] for r in rs),
                                         "null" if t == "no_bottleneck" else short(t if isinstance(t, str) else t[0])))
        lines.append("| %s | %s |" % (v, " | ".join(row)))
    return lines


def noisy_references(results):
    """Reference id -> wall cv, for the references argusd still called noisy when they were kept."""
    out = {}
    recs = list(results.get("references", {}).values())
    for more in results.get("references_again", {}).values():
        recs += more
    for rec in recs:
        walls = rec.get("walls_s") or []
        if rec.get("warnings") and len(walls) > 1:
            mean = sum(walls) / len(walls)
            sd = (sum((w - mean) ** 2 for w in walls) / (len(walls) - 1)) ** 0.5
            out[rec["id"]] = sd / mean if mean else 0
    return out


def cause(run, truth, noisy=None):
    """For an incorrect run or a miss, the mechanism the trace shows (None otherwise)."""
    if run["outcome"] not in ("incorrect", "miss"):
        return None
    levels = run.get("levels") or []
    last = levels[-1] if levels else {}
    wall = (last.get("wall") or {}).get("z")
    if run["outcome"] == "miss":
        if len(levels) == 1 and last.get("action") == "abstain":
            reason = last.get("reason") or ""
            if "no kernel path explains it" in reason:
                return "slower at L1, but no path held a tenth of the loss (wall z %.1f)" % (wall or 0)
            if "no kernel path deviates" in reason:
                return "slower at L1, but no path deviated (wall z %.1f)" % (wall or 0)
            if run.get("reference") in (noisy or {}):
                return "victim not significantly slower at L1 than a noisy reference (wall z %.1f, " \
                    "reference wall cv %.0f%%)" % (wall or 0, 100 * noisy[run["reference"]])
            return "victim not significantly slower at L1 (wall z %.1f)" % (wall or 0)
        if "did not reproduce" in (last.get("reason") or ""):
            return "the slowdown did not last into L%s (wall z %.1f)" % (last.get("level"), wall or 0)
        return "abstained at L%s" % last.get("level")
    if "children show no significant deviation" in (last.get("reason") or "") and (wall is None or wall <= 3):
        return "parent commit on an L1 deviation the next run did not reproduce (L%s wall z %.1f)" % (
            last.get("level"), wall or 0)
    pert_cpu = truth["perturbers"][run["perturber"]].get("cpu")
    if run.get("node") == "kernel_scheduler.runqueue_wait" and pert_cpu != 0:
        return "runqueue wait on CPU 0 from load outside the cell (the perturber runs on CPU %s)" % pert_cpu
    return "committed to %s" % run.get("node")


def details(runs):
    lines = ["| cell | rep | outcome | committed path | TtD | evidence (level: flagged metric value vs reference, z) |",
             "|---|---:|---|---|---:|---|"]
    for r in runs:
        ev = []
        for lv in r.get("levels") or []:
            fl = lv["flagged"][0] if lv["flagged"] else None
            w = lv.get("wall")
            s = "L%s %s" % (lv["level"], lv["action"])
            if fl:
                s += " %s %.3g vs %.3g (z %.1f)" % (fl["metric"], fl["value"] or 0, fl["reference"] or 0, fl["z"] or 0)
            if w and lv["level"] == 1:
                s += "; wall %.3g vs %.3g s (z %.1f)" % ((w["value"] or 0) / 1e9, (w["reference"] or 0) / 1e9, w["z"] or 0)
            ev.append(s)
        if r.get("waited_behind"):
            ev.append("behind " + ", ".join("%s %.0f ms" % (h["comm"], h["wait_ns"] / 1e6)
                                             for h in r["waited_behind"][:2]))
        if r["outcome"] == "failed":
            ev = [json.dumps(r.get("error"))[:160]]
        lines.append("| %s | %d | %s | %s | %s | %s |" % (
            r["cell"], r["rep"], r["outcome"], " > ".join(r.get("path") or []) or r.get("verdict") or "-",
            "%.1f s" % r["ttd_s"] if r.get("ttd_s") else "-", "<br>".join(ev)))
    return lines


def svg(results, truth, victims, perts, path):
    """Per mode a grid of cells, each a bar of its repetitions coloured by outcome, and a totals bar."""
    modes = results["modes"]
    cw, ch, left, top = 74, 26, 120, 60
    grid_w = left + cw * len(perts) + 20
    grid_h = top + ch * len(victims) + 90
    W, H = grid_w * len(modes), grid_h + 40
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>']
    for mi, mode in enumerate(modes):
        x0 = mi * grid_w
        runs = [r for r in results["runs"] if r["mode"] == mode]
        t = totals(runs)
        o.append('<text x="%d" y="18" font-size="14" font-weight="bold">%s: %d incorrect deep-path diagnoses in %d runs</text>'
                 % (x0 + 10, mode, t["incorrect"], t["runs"]))
        for pi, p in enumerate(perts):
            o.append('<text x="%d" y="%d" transform="rotate(-25 %d %d)">%s</text>' % (
                x0 + left + pi * cw + 4, top - 6, x0 + left + pi * cw + 4, top - 6, p))
        by = {}
        for r in runs:
            by.setdefault((r["victim"], r["perturber"]), []).append(r)
        for vi, v in enumerate(victims):
            y = top + vi * ch
            o.append('<text x="%d" y="%d">%s</text>' % (x0 + 6, y + 17, v))
            for pi, p in enumerate(perts):
                rs = sorted(by.get((v, p), []), key=lambda r: r["rep"])
                x = x0 + left + pi * cw
                o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>' % (x, y, cw - 2, ch - 2))
                for i, r in enumerate(rs):
                    bw = (cw - 6) / max(1, len(rs))
                    o.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s rep %d: %s %s</title></rect>' % (
                        x + 2 + i * bw, y + 2, bw - 1, ch - 6, COLOUR[r["outcome"]], r["cell"], r["rep"],
                        r["outcome"], r.get("node") or ""))
        # totals bar (Fig. 4): the share of each outcome
        y = top + len(victims) * ch + 20
        x = x0 + left
        width = cw * len(perts) - 2
        for oc in OUTCOMES:
            if t[oc]:
                w = width * t[oc] / max(1, t["runs"])
                o.append('<rect x="%.1f" y="%d" width="%.1f" height="18" fill="%s"><title>%s %d</title></rect>' % (x, y, w, COLOUR[oc], oc, t[oc]))
                if w > 18:
                    o.append('<text x="%.1f" y="%d" fill="white">%d</text>' % (x + 3, y + 13, t[oc]))
                x += w
        o.append('<text x="%d" y="%d">all runs</text>' % (x0 + 6, y + 13))
    # legend
    x = 10
    for oc in OUTCOMES:
        o.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>' % (
            x, H - 22, COLOUR[oc], x + 16, H - 12, oc))
        x += 90
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def same_session(results, truth):
    """The truth of each cell checked against the victim's unprobed runs of this session:
    slower by the truth file's rule when the median perturbed run is more than 10% slower
    than the median quiet one and every perturbed run is slower than every quiet one (3
    pairs cannot reach the file's p < 0.01)."""
    rows = []
    for k, pairs in results.get("unprobed", {}).items():
        q = [x["quiet_s"] for x in pairs if x.get("quiet_s")]
        if any(x.get("quiet_before") for x in pairs):
            # a lasting perturber: only the first quiet run saw what the reference saw,
            # the later ones inherit what the earlier repetitions left
            q = q[:1]
        p = [x["perturbed_s"] for x in pairs if x.get("perturbed_s")]
        cell = truth["cell_map"].get(k)
        if not q or not p or not cell:
            continue
        rel = evallib.median(p) / evallib.median(q) - 1
        prob = sum((a > b) + 0.5 * (a == b) for a in p for b in q) / (len(p) * len(q))
        slower = rel > 0.10 and prob == 1.0
        null = cell["truth"] == "no_bottleneck"
        check = "agrees" if slower != null else ("disputes: slower" if null else "disputes: not slower")
        runs = sorted((r for r in results["runs"] if r["cell"] == k and r["mode"] == "calibrated"),
                      key=lambda r: r["rep"])
        letters = "".join(LETTER[r["outcome"]] for r in runs)
        # argusd's own level-1 run, probed, against its reference: the same minutes
        walls = [(r.get("levels") or [{}])[0].get("wall") or {} for r in runs]
        probed = [w["value"] / w["reference"] - 1 for w in walls if w.get("value") and w.get("reference")]
        rows.append((k, cell["truth"], evallib.median(q), evallib.median(p), rel, prob,
                     evallib.median(probed) if probed else None, letters, check))
    return rows


def same_session_md(rows):
    if not rows:
        return []
    out = ["## Same-session check of the truth", "",
           "Each repetition timed the victim without argusd under the perturber, after its diagnoses, and on "
           "the quiet system after the perturber stopped (before it started, for a perturber with lasting "
           "state; of those, only the quiet run before the first repetition counts, since the later ones "
           "inherit what the earlier repetitions left). "
           "Slower: median more than 10% slower and every perturbed run slower than every quiet one. "
           "Scoring stays with truth.json; a cell marked \"disputes\" behaved otherwise in these minutes.", "",
           "\"argusd L1\": the median slowdown of argusd's own level-1 runs (probed) against its reference.", "",
           "| cell | truth | quiet (median) | perturbed (median) | slowdown | P(slower) | argusd L1 | calibrated | check |",
           "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for k, tr, q, p, rel, prob, probed, letters, check in rows:
        out.append("| %s | `%s` | %.3f s | %.3f s | %+.1f%% | %.2f | %s | %s | %s |" % (
            k, short(tr if tr != "no_bottleneck" else "null"), q, p, 100 * rel, prob,
            "%+.1f%%" % (100 * probed) if probed is not None else "-", letters, check))
    disputed = [r for r in rows if r[8] != "agrees"]
    out += ["", "%d of %d cells disputed: %s" % (len(disputed), len(rows),
                                                 ", ".join("%s (%s)" % (r[0], r[7]) for r in disputed) or "none"), ""]
    return out


def same_session_score(results, rows):
    """The calibrated runs scored again with each cell's truth as its same-session check found it:
    a cell with a path that was not slower in these minutes counts as a null cell; a null cell
    that was slower has no known path, and its runs are left out. Returns (totals, left out)."""
    check = {r[0]: r[8] for r in rows}
    runs, left = [], 0
    for r in results["runs"]:
        if r["mode"] != "calibrated":
            continue
        c = check.get(r["cell"], "agrees")
        if c == "disputes: slower":
            left += 1
            continue
        r2 = dict(r)
        if c == "disputes: not slower":
            r2["truth"] = "no_bottleneck"
            r2["outcome"], r2["node"], r2["depth"] = evallib.score([], r["state"], r.get("verdict"), r.get("path"))
        runs.append(r2)
    return totals(runs), left


def write(results, truth, out):
    """report.md and matrix.svg in out; returns the summary lines."""
    cells = results["cells"]
    # Scored again from the truth file as it is now, so that a corrected truth re-scores old runs.
    for r in results["runs"]:
        cell = truth["cell_map"].get(r["cell"])
        if cell:
            r["truth"] = cell["truth"]
            r["two_causes"] = cell.get("two_causes", False)
            r["outcome"], r["node"], r["depth"] = evallib.score(cell["truths"], r["state"], r.get("verdict"), r.get("path"))
    victims = [v for v in truth["victims"] if any(c.split(":")[0] == v for c in cells)]
    perts = [p for p in truth["perturbers"] if any(c.split(":")[1] == p for c in cells)]
    md = ["# argusd accuracy matrix", "",
          "Host %s, kernel %s, started %s, %d repetitions per cell, references of K=%d runs; %.0f min." % (
              results["host"], results["kernel"], results["started"], results["reps"], results["repeats"],
              results.get("elapsed_s", 0) / 60), "",
          "Outcome letters per repetition: L committed to the true leaf, S correct but shallower, "
          "A abstained on a null cell (correct), M missed (abstained on a bottleneck), "
          "X incorrect deep-path diagnosis, F failed. Under each: the true path (`null`: no bottleneck).", ""]
    lines = []
    for mode in results["modes"]:
        runs = [r for r in results["runs"] if r["mode"] == mode]
        t = totals(runs)
        results.setdefault("totals", {})[mode] = t
        s = summary_lines(mode, cells, t)
        lines += s
        md += ["## %s" % mode, ""] + ["    " + x for x in s] + [""] + table(runs, victims, perts, truth) + [""]
    md += ["## Causes of incorrect runs and misses (from each run's trace)", ""]
    noisy = noisy_references(results)
    for mode in results["modes"]:
        counts = {}
        for r in results["runs"]:
            if r["mode"] == mode:
                c = cause(r, truth, noisy)
                if c:
                    key = c.split(" (")[0]
                    counts.setdefault(key, []).append(r["cell"] + "#%d" % r["rep"])
        md += ["### %s" % mode, ""] + ["- %s: %d (%s)" % (k, len(v), ", ".join(v)) for k, v in
                                       sorted(counts.items(), key=lambda kv: -len(kv[1]))] + [""]
    rows = same_session(results, truth)
    md += same_session_md(rows)
    if rows and "calibrated" in results["modes"]:
        t2, left = same_session_score(results, rows)
        results.setdefault("totals", {})["calibrated_same_session"] = t2
        md += ["### The second score: against the same-session check", "",
               "The calibrated runs scored with each cell's truth as the same-session check found it "
               "(a cell not slower in these minutes counts as null; %d runs of cells that were slower "
               "without a known path are left out):" % left, ""]
        md += ["    " + x for x in summary_lines("calibrated, same-session truth",
                                                 sorted({r["cell"] for r in results["runs"]}), t2)] + [""]
    md += ["## Every run", ""]
    for mode in results["modes"]:
        md += ["### %s" % mode, ""] + details([r for r in results["runs"] if r["mode"] == mode]) + [""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(md))
    svg(results, truth, victims, perts, os.path.join(out, "matrix.svg"))
    return lines


if __name__ == "__main__":
    d = sys.argv[1]
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    tr = evallib.load_truth(sys.argv[2] if len(sys.argv) > 2 else
                            os.path.join(evallib.SRC, "bench", "eval", "truth.json"))
    for line in write(res, tr, d):
        print(line)
