#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Case study 2 of the paper (page-fault disambiguation): the signatures of
the page-fault victims across anon_fault, file_fault and tlb_shootdown, from
the reference vectors argusd recorded (GET /references/ID, kept by matrix.py
in results.json), and the signature class each victim falls in.

    bench/eval/signatures.py RESULTS_DIR     writes RESULTS_DIR/signatures.md and prints it
"""

import json
import os
import sys

VICTIMS = ["pf_anon_write", "pf_zero_page", "pf_cow", "pf_page_cache", "pf_major"]
NODES = [("anon_fault", "kernel_paging.anon_fault"), ("file_fault", "kernel_paging.file_fault"),
         ("tlb_shootdown", "kernel_paging.tlb_shootdown")]
CLASSES = ["anon_minor", "anon_zero", "anon_cow", "anon_thp", "file_cache", "file_major", "tlb_shootdown"]


def mean(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else 0.0


def classify(sig):
    """The paper's four classes, from measured quantities only: which fault
    kind holds the time, shootdowns per 1000 faults, file time per fault."""
    anon_t, file_t = sig["anon_fault"]["time_ns"], sig["file_fault"]["time_ns"]
    faults = sig["anon_fault"]["count"] + sig["file_fault"]["count"]
    tlb_per_k = 1000.0 * sig["tlb_shootdown"]["count"] / max(1.0, faults)
    if anon_t >= file_t:
        return "anon+TLB" if tlb_per_k >= 0.1 else "anon-only"
    per_fault = file_t / max(1.0, sig["file_fault"]["count"])
    return "file-with-IO" if per_fault >= 20000 else "file-light"


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    rows, sigs = [], {}
    for v in VICTIMS:
        ref = res["references"].get(v)
        if not ref:
            continue
        runs = ref["runs"]
        sig = {}
        for label, node in NODES:
            sig[label] = {"count": mean(runs, node + "/count"), "time_ns": mean(runs, node + "/time_ns")}
        sig["classes"] = {c: (mean(runs, "class/%s/count" % c), mean(runs, "class/%s/time_ns" % c)) for c in CLASSES}
        sig["wall_s"] = mean(runs, "target/wall_ns") / 1e9
        sigs[v] = sig
    out = ["# Page-fault signatures (case study 2)", "",
           "Means of the K reference runs of each victim (quiet system, every leaf probed). "
           "Per node: faults (count), total time, and time per fault.", "",
           "| victim | wall s | anon_fault count | anon time ms | anon us/fault | file_fault count | file time ms | file us/fault | tlb_shootdown count | TLB per 1000 faults | class |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for v, s in sigs.items():
        a, fl, t = s["anon_fault"], s["file_fault"], s["tlb_shootdown"]
        faults = a["count"] + fl["count"]
        out.append("| %s | %.2f | %.0f | %.1f | %.2f | %.0f | %.1f | %.2f | %.0f | %.2f | %s |" % (
            v, s["wall_s"], a["count"], a["time_ns"] / 1e6, a["time_ns"] / 1e3 / max(1, a["count"]),
            fl["count"], fl["time_ns"] / 1e6, fl["time_ns"] / 1e3 / max(1, fl["count"]),
            t["count"], 1000.0 * t["count"] / max(1, faults), classify(s)))
    out += ["", "Leaf classes (count / time ms):", "",
            "| victim | " + " | ".join(CLASSES) + " |", "|---|" + "---:|" * len(CLASSES)]
    for v, s in sigs.items():
        out.append("| %s | %s |" % (v, " | ".join("%.0f / %.1f" % (c, t / 1e6) for c, t in
                                                    (s["classes"][k] for k in CLASSES))))
    text = "\n".join(out) + "\n"
    with open(os.path.join(d, "signatures.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
