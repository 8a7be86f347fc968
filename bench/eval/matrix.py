#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The (victim, perturber) accuracy matrix, through argusd's HTTP API only.

Starts argusd with a temporary config (loopback, state under --out); for
each victim, records its reference on the quiet system (POST /references, K
runs) right before its cells, and again after a cell whose perturber leaves
lasting state, each time from data files the victim creates anew (its page
cache as a fresh write leaves it); then for each of its cells and repetitions: starts the cell's perturber pinned as
truth.json says, waits for its ready line, POSTs /diagnose, polls the job,
stops the perturber (SIGTERM; SIGKILL plus --restore-only as a last resort)
and scores the result against the cell's truth (evallib.score):

  leaf       committed to the true node (or below it, when the truth is known only that deep)
  shallow    committed to an ancestor of the true node: correct but above the leaf
  incorrect  committed to a path that leaves the true path, or any commit on a null cell
  abstain    no_bottleneck on a null cell (correct)
  miss       no_bottleneck on a cell with a bottleneck
  failed     the job failed (the victim or the measurement): never a diagnosis

Each repetition also times the victim once without argusd (perf stat, as
truth_measure.py does) under the perturber after the diagnoses, and once
more on the quiet system after the perturber stopped (before it started,
for a perturber whose state outlives it): the cell's truth checked in the
same minutes as its diagnoses (report.md, "Same-session
check of the truth"; --no-unprobed leaves it out).

Writes DIR/results.json, DIR/report.md and DIR/matrix.svg, and prints the totals.

    bench/eval/matrix.py [--build build] [--cells all|V:P,...] [--reps 3]
                         [--calibration on|off|both] [--out DIR] [--repeats 5]
                         [--syscall-events calls|raw|none]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402
import report  # noqa: E402
import truth_measure  # noqa: E402

TERMINAL = ("succeeded", "failed", "cancelled", "interrupted")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over argusd's control socket; the Host header says localhost."""

    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


class Argusd:
    """argusd on 127.0.0.1, an ephemeral port, state under dir.

    Reads go to the TCP listener, writes to the control socket
    (state/argusd.sock), where root may do everything."""

    def __init__(self, build, dir, extra="", job_timeout_s=600):
        """extra: configuration lines after the harness's own (a later key wins);
        job_timeout_s: how long follow waits for a job to end."""
        self.dir = dir
        self.job_timeout_s = job_timeout_s
        self.conf = os.path.join(dir, "argusd.conf")
        self.log = os.path.join(dir, "argusd.log")
        self.sock = os.path.join(dir, "state", "argusd.sock")
        with open(self.conf, "w") as f:
            # no services unless extra names a directory of them: never the host's /etc/argus
            f.write("listen = 127.0.0.1:0\nstate_dir = %s/state\nworkloads_dir = %s\n"
                    "services_dir = %s/no-services\n"
                    "victims_dir = %s\ntree_file = %s/tree-data/tree.json\n"
                    "schema_dir = %s/schema\n%s" % (dir, evallib.WORKLOADS, dir,
                                                     evallib.programs_dir(build), evallib.SRC,
                                                     evallib.SRC, extra))
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen([os.path.join(build, "argusd"), "--config", self.conf],
                                     stdout=logf, stderr=logf, stdin=subprocess.DEVNULL)
        logf.close()
        self.port = None
        for _ in range(600):
            with open(self.log) as f:
                m = re.search(r"argusd ready: .*\(port (\d+)\)", f.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        if not self.port:
            self.stop()
            with open(self.log) as f:
                raise RuntimeError("argusd did not start:\n" + f.read()[-2000:])

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        if method in ("GET", "HEAD"):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        else:
            conn = UnixHTTPConnection(self.sock, timeout)
        # one connection per request: argusd closes idle ones after a few seconds
        try:
            conn.request(method, path, body=data,
                         headers={"Content-Type": "application/json"} if data is not None else {})
            r = conn.getresponse()
            status, text = r.status, r.read()
        finally:
            conn.close()
        try:
            return status, json.loads(text or b"null")
        except ValueError:
            return status, {"error": {"code": "http", "message": text.decode(errors="replace")}}

    def submit(self, path, body):
        st, j = self.call("POST", path, body)
        if st != 202:
            raise RuntimeError("POST %s %s: %s %s" % (path, json.dumps(body), st, j))
        return j["id"]

    def follow(self, job_id, timeout_s=None):
        """Poll until the job ends (timeout_s, else job_timeout_s); (job, seconds from submit
        to the end seen)."""
        timeout_s = timeout_s or self.job_timeout_s
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            st, j = self.call("GET", "/jobs/%d" % job_id)
            if st == 200 and j.get("state") in TERMINAL:
                return j, time.monotonic() - t0
            time.sleep(0.25)
        self.call("DELETE", "/jobs/%d" % job_id)
        raise RuntimeError("job %d did not end in %d s" % (job_id, timeout_s))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def evidence(trace):
    """Per level: the decision, its reason, the wall score and the flagged metrics (top 4 by z)."""
    levels = []
    for s in trace.get("steps", []):
        if s.get("kind") != "decision":
            continue
        scores = s.get("scores") or []
        flagged = sorted([x for x in scores if x.get("flagged")], key=lambda x: -(x.get("z") or 0))
        wall = [x for x in scores if x.get("metric") == "target/wall_ns"]
        keep = lambda x: {k: x.get(k) for k in ("metric", "reference", "spread", "value", "z")}
        levels.append({"level": s.get("level"), "action": s.get("action"), "node": s.get("node"),
                       "reason": s.get("reason"), "wall": keep(wall[0]) if wall else None,
                       "flagged": [keep(x) for x in flagged[:4]]})
    return levels


def class_deltas(trace, ref_runs):
    """argusd's per-class counters at level 1 against the reference mean (count and time)."""
    pmv = None
    for v in trace.get("vectors", []):
        if v.get("kind") == "pmv" and v.get("level") == 1:
            pmv = v.get("vector")
            break
    if not pmv or not ref_runs:
        return {}
    out = {}
    for k, val in pmv.items():
        if not (k.startswith("class/") or k.startswith("perf/") or k == "target/wall_ns"):
            continue
        ref = [r.get(k) for r in ref_runs if r.get(k) is not None]
        if ref:
            mean = sum(ref) / len(ref)
            if val != mean:
                out[k] = [mean, val]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(evallib.SRC, "build"),
                    help="build directory with argusd and bench/ (default build)")
    ap.add_argument("--truth", default=os.path.join(evallib.SRC, "bench", "eval", "truth.json"))
    ap.add_argument("--cells", default="all", help="all, or victim:perturber,... (* matches any)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per cell (default 3)")
    ap.add_argument("--repeats", type=int, default=5, help="reference runs K (default 5)")
    ap.add_argument("--calibration", choices=("on", "off", "both"), default="on",
                    help="off: the ablation (every rule, the reference runs' spread left out); both: the two tables")
    ap.add_argument("--out", default=None, help="output directory (default bench/eval/out/DATE)")
    ap.add_argument("--syscall-events", choices=("calls", "raw", "none"), default=None,
                    help="argusd's syscall_events for the whole run (default: argusd's own)")
    ap.add_argument("--quiet-limit", type=float, default=0.15,
                    help="wait before each run until no CPU is busier than this (shared machines)")
    ap.add_argument("--harness-cpu", type=int, default=1,
                    help="CPU for this script (its polling), away from the victims' CPU 0 (-1: not pinned)")
    ap.add_argument("--no-unprobed", dest="unprobed", action="store_false",
                    help="no unprobed runs of the victim, perturbed and quiet, beside each repetition")
    ap.add_argument("--keep-state", action="store_true",
                    help="keep argusd's state directory (its database, every trace) as OUT/state")
    ap.add_argument("--timeout-scale", type=float, default=1.0,
                    help="multiply each victim's timeout_s and the harness's wait for a job "
                         "(600 s) (an emulated machine runs them tens of times slower; default 1)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="throw-away runs of each victim, outside argusd, before its reference (data files, memory)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if os.geteuid() != 0:
        sys.exit("matrix: run as root (argusd loads eBPF programs; perturbers change settings)")

    if a.unprobed and not shutil.which("perf"):
        sys.exit("matrix: the unprobed runs need perf (Debian: apt-get install linux-perf), "
                 "or leave them out with --no-unprobed")
    truth = evallib.load_truth(a.truth)
    keys = evallib.select_cells(truth, a.cells)
    out = a.out or os.path.join(evallib.SRC, "bench", "eval", "out", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    logf = open(os.path.join(out, "matrix.log"), "a")

    def log(s):
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    modes = {"on": [True], "off": [False], "both": [True, False]}[a.calibration]
    thp_before = evallib.thp_settings()
    # Held constant for the run, restored at the end (also on errors and SIGTERM).
    reporting = evallib.hold_host_reclaim()
    work = tempfile.mkdtemp(prefix="argus-matrix-", dir="/tmp")
    d = None
    refs = {}
    ref_id = {}  # the reference each victim's diagnoses use now
    current = []  # the perturber running now, stopped however the run ends
    results = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "host": os.uname().nodename, "kernel": os.uname().release,
               "cells": keys, "reps": a.reps, "repeats": a.repeats,
               "syscall_events": a.syscall_events or "argusd's default",
               "modes": ["calibrated" if m else "ablation" for m in modes],
               "references": {}, "references_again": {}, "runs": [], "unprobed": {}}
    t_start = time.monotonic()

    def record(run, job, ttd, cell):
        run["job"] = job.get("id")
        run["state"] = job.get("state")
        run["error"] = job.get("error")
        run["ttd_s"] = ttd
        res = job.get("result") or {}
        run["verdict"] = res.get("verdict")
        run["reason_code"] = res.get("reason_code")
        run["path"] = res.get("path")
        run["timings"] = res.get("timings")
        if res.get("waited_behind"):
            run["waited_behind"] = res["waited_behind"]
        # the host's pace after each run, against the reference's (daemon/host_pace.c)
        if res.get("host_pace"):
            run["host_pace"] = res["host_pace"]
        # two causes at one level: the nodes named, the followed one first
        run["causes"] = [c.get("node") for c in res.get("causes") or []]
        run["outcome"], run["node"], run["depth"] = evallib.score(
            cell["truths"], run["state"], run["verdict"], run["path"])
        if job.get("id"):
            st, trace = d.call("GET", "/jobs/%d/trace" % job["id"], timeout=60)
            if st == 200:
                run["levels"] = evidence(trace)
                run["class_deltas"] = class_deltas(trace, refs.get(run["victim"]))
        results["runs"].append(run)
        log("%-10s %-30s rep %d: %-9s %-45s %s" % (
            run["mode"], run["cell"], run["rep"], run["outcome"], run["node"] or run["verdict"] or
            (run["error"] or {}).get("code", ""), "%.1f s" % ttd if ttd else ""))

    def record_reference(v):
        # every reference starts from data files the victim creates anew
        removed = evallib.fresh_data_files(v)
        if removed:
            log("removed data files %s before the reference of %s" % (" ".join(removed), v))
        for _ in range(a.warmup):
            subprocess.run(evallib.victim_argv(a.build, v), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False,
                           preexec_fn=evallib.victim_preexec(v))
        # argusd itself waits for a quiet machine before each reference run and
        # records a noisy reference again (daemon/quiet.c, daemon/reference.c):
        # the harness submits it once, as a user does, and keeps what argusd kept
        job, secs = d.follow(d.submit("/references", {"workload": v, "repeats": a.repeats}))
        if job["state"] != "succeeded":
            raise RuntimeError("reference of %s: %s %s" % (v, job["state"], job.get("error")))
        res = job["result"]
        for w in res.get("warnings") or []:
            log("reference %-14s (wall cv %.0f%%, %d attempts) kept with a warning: %s" % (
                v, 100 * res.get("wall_cv", 0), res.get("attempts", 1), w))
        rid = job["result"]["reference"]
        st, ref = d.call("GET", "/references/%d" % rid)
        refs[v] = ref.get("runs", [])
        rec = {"id": rid, "walls_s": [r["wall_s"] for r in job["result"]["runs"]],
               "runs": refs[v], "attempts": res.get("attempts", 1),
               "kept_attempt": res.get("kept_attempt", 1),
               "warnings": job["result"].get("warnings", [])}
        # why argusd extended it or recorded it again, from its trace's notes
        st, trace = d.call("GET", "/jobs/%d/trace" % job["id"], timeout=60)
        rec["notes"] = [step for step in (trace.get("steps") or [] if st == 200 else [])
                        if step.get("kind") == "note"]
        if res.get("host_pace"):
            rec["host_pace"] = res["host_pace"]
            rec["host_paces_ns"] = [(r.get("host_pace") or {}).get("ns_per_load")
                                    for r in res["runs"]]
        # the first one is the victim's signature (signatures.py); later ones follow lasting state
        if v in results["references"]:
            results["references_again"].setdefault(v, []).append(rec)
        else:
            results["references"][v] = rec
        ref_id[v] = rid
        log("reference %-14s id %d, walls %s s" % (v, rid, " ".join(
            "%.3f" % r["wall_s"] for r in job["result"]["runs"])))

    def unprobed(v):
        """The victim's wall time without argusd, or None when it failed."""
        try:
            return truth_measure.run_once(a.build, v)["wall_s"]
        except (RuntimeError, OSError) as e:
            log("unprobed run of %s failed: %s" % (v, e))
            return None

    try:
        extra = ""
        if a.timeout_scale != 1.0:
            # the bundled definitions with their time limits scaled, in place of the checkout's
            wdir = os.path.join(work, "workloads")
            os.makedirs(wdir)
            for name in sorted(os.listdir(evallib.WORKLOADS)):
                if not name.endswith(".json"):
                    continue
                with open(os.path.join(evallib.WORKLOADS, name)) as f:
                    w = json.load(f)
                if "timeout_s" in w:
                    w["timeout_s"] = int(w["timeout_s"] * a.timeout_scale)
                with open(os.path.join(wdir, name), "w") as f:
                    json.dump(w, f, indent=1)
            extra = "workloads_dir = %s\n" % wdir
        if a.syscall_events:
            extra += "syscall_events = %s\n" % a.syscall_events
        d = Argusd(a.build, work, extra, job_timeout_s=int(600 * max(a.timeout_scale, 1.0)))
        if a.harness_cpu >= 0:
            # After argusd started: it keeps every CPU, since it places each victim on its
            # workload's CPUs within its own mask.
            os.sched_setaffinity(0, {a.harness_cpu})
        log("argusd on port %d (state in %s)" % (d.port, work))
        # One perturber session per cell and repetition; with --calibration both, the
        # calibrated diagnosis and the ablation run back to back under the same pressure.
        # Each victim's reference is recorded right before its own cells, so
        # that the slow drift of a shared machine over the run does not read
        # as a slowdown of the victims measured last; and again after a
        # perturber whose state outlives it ("lasting"), from fresh data
        # files, so that the next cell starts where the first one did, not
        # from what the last one left behind.
        for k in keys:
            cell = truth["cell_map"][k]
            v, pname = k.split(":")
            if v not in refs:
                record_reference(v)
            spec = truth["perturbers"][pname]
            for rep in range(1, a.reps + 1):
                busy, waited = evallib.wait_quiet(a.quiet_limit, log=log)
                pair = {"rep": rep, "perturbed_s": None}
                if a.unprobed and spec.get("lasting"):
                    # its state outlives it: a quiet run after it would inherit that
                    pair["quiet_s"], pair["quiet_before"] = unprobed(v), True
                p = evallib.Perturber(a.build, pname, spec, out)
                current[:] = [p]
                try:
                    p.start()
                    time.sleep(spec.get("settle_s", 0.5))
                    for calibrated in modes:
                        run = {"mode": "calibrated" if calibrated else "ablation", "cell": k,
                               "victim": v, "perturber": pname, "rep": rep, "truth": cell["truth"],
                               "busy_before": busy, "quiet_wait_s": waited,
                               "perturber_ready_s": p.ready_s, "reference": ref_id[v]}
                        body = {"workload": v, "reference": ref_id[v]}
                        if not calibrated:
                            body["calibration"] = False
                        try:
                            if not p.alive():
                                raise RuntimeError("%s exited during the run" % pname)
                            job, ttd = d.follow(d.submit("/diagnose", body))
                            run["perturber_alive_at_end"] = p.alive()
                        except RuntimeError as e:
                            job, ttd = {"state": "failed", "error": {"code": "harness", "message": str(e)}}, None
                        record(run, job, ttd, cell)
                    if a.unprobed and p.alive():
                        pair["perturbed_s"] = unprobed(v)
                except RuntimeError as e:
                    for calibrated in modes:
                        run = {"mode": "calibrated" if calibrated else "ablation", "cell": k,
                               "victim": v, "perturber": pname, "rep": rep, "truth": cell["truth"]}
                        record(run, {"state": "failed", "error": {"code": "harness", "message": str(e)}},
                               None, cell)
                finally:
                    p.stop()
                    current[:] = []
                if a.unprobed:
                    if "quiet_s" not in pair:
                        evallib.wait_quiet(a.quiet_limit, log=log)
                        pair["quiet_s"] = unprobed(v)
                    results["unprobed"].setdefault(k, []).append(pair)
            if spec.get("lasting"):
                # the quiet system the next cells run on is not the one the reference saw
                refs.pop(v, None)
    except KeyboardInterrupt:
        log("interrupted: writing what was measured")
        results["interrupted"] = True
    finally:
        for p in current:
            p.stop()
        if d:
            d.stop()
        evallib.release_host_reclaim(reporting)
        results["host_reclaim"] = reporting
        thp_after = evallib.thp_settings()
        if thp_after != thp_before:
            log("WARNING: THP settings changed during the run: %s -> %s" % (thp_before, thp_after))
        results["thp_before"], results["thp_after"] = thp_before, thp_after
        results["elapsed_s"] = time.monotonic() - t_start
        if os.path.exists(os.path.join(work, "argusd.log")):
            shutil.copy(os.path.join(work, "argusd.log"), os.path.join(out, "argusd.log"))
        if a.keep_state:
            shutil.rmtree(os.path.join(out, "state"), ignore_errors=True)
            shutil.copytree(os.path.join(work, "state"), os.path.join(out, "state"))
        shutil.rmtree(work, ignore_errors=True)
        summary = []
        try:
            summary = report.write(results, truth, out)  # also adds the totals to results
        finally:
            with open(os.path.join(out, "results.json"), "w") as f:
                json.dump(results, f, indent=1)
    for line in summary:
        log(line)
    log("wrote %s/results.json, report.md, matrix.svg" % out)


if __name__ == "__main__":
    main()
