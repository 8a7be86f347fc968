# SPDX-License-Identifier: MIT
"""Shared by the evaluation scripts: the cell definitions (truth.json), the
perturbers' life cycle (start pinned, wait for the ready line, stop with
SIGTERM, SIGKILL plus --restore-only as the last resort), waiting for a quiet
machine, and the victims' command lines from workloads/*.json.

Standard library only (Debian's python3). Every process started here is
remembered by pid and stopped by pid, also when the caller fails.
"""

import atexit
import glob
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The victims' workload definitions: the bundled ones, or the held-out set's
# (ARGUS_EVAL_WORKLOADS=bench/eval/heldout/workloads, see heldout/README.md).
WORKLOADS = os.path.abspath(os.environ.get("ARGUS_EVAL_WORKLOADS") or os.path.join(SRC, "workloads"))
# The committed raw results, one directory per day.
RESULTS = os.path.join(SRC, "bench", "eval", "results")


def heldout_matrix_results():
    """The results.json of every held-out set's matrix run committed under RESULTS, in order."""
    return sorted(glob.glob(os.path.join(RESULTS, "*", "heldout-set*", "matrix", "results.json")))


def load_truth(path):
    """truth.json: {"victims": [...], "perturbers": {name: {argv, cpu, ...}},
    "cells": [{victim, perturber, truth, why, ...}]}; cells keyed by "victim:perturber"."""
    with open(path) as f:
        t = json.load(f)
    cells = {}
    for c in t["cells"]:
        key = "%s:%s" % (c["victim"], c["perturber"])
        if key in cells:
            raise ValueError("%s: cell %s twice" % (path, key))
        if c["perturber"] not in t["perturbers"]:
            raise ValueError("%s: cell %s: unknown perturber" % (path, key))
        spec = t["perturbers"][c["perturber"]]
        for part in spec.get("together", []):
            if part not in t["perturbers"] or "together" in t["perturbers"][part]:
                raise ValueError("%s: perturber %s: %s is not a single perturber" % (
                    path, c["perturber"], part))
        # the parts' own specs, for Perturber: started in order, stopped in reverse
        spec["parts"] = [(part, t["perturbers"][part]) for part in spec.get("together", [])]
        truth = c["truth"]
        c["truths"] = [] if truth == "no_bottleneck" else (truth if isinstance(truth, list) else [truth])
        cells[key] = c
    t["cell_map"] = cells
    return t


def select_cells(truth, spec):
    """"all", or a comma list of victim:perturber (either side may be *)."""
    keys = list(truth["cell_map"])
    if spec in (None, "", "all"):
        return keys
    out = []
    for item in spec.split(","):
        v, _, p = item.strip().partition(":")
        hits = [k for k in keys if (v in ("*", k.split(":")[0])) and (p in ("*", k.split(":")[1]))]
        if not hits:
            raise ValueError("--cells: %s matches no cell of the truth file" % item)
        out += [k for k in hits if k not in out]
    return out


def workload(name):
    with open(os.path.join(WORKLOADS, name + ".json")) as f:
        return json.load(f)


_staged = {}


def programs_dir(build):
    """The build's bundled programs staged where the victims' user can run
    them (scripts/stage-programs.sh; the build directory may be under root's
    0700 home): a directory under /tmp, made once per process and removed at
    its exit."""
    if build not in _staged:
        top = tempfile.mkdtemp(prefix="argus-eval-programs-")
        atexit.register(shutil.rmtree, top, True)
        os.chmod(top, 0o755)
        dest = os.path.join(top, "programs")
        subprocess.run([os.path.join(SRC, "scripts", "stage-programs.sh"), build, dest], check=True)
        _staged[build] = dest
    return _staged[build]


def victim_argv(build, name):
    """The victim's command line as its workload file gives it, argv[0] resolved."""
    w = workload(name)
    exe = w["argv"][0]
    if "/" not in exe:
        exe = os.path.join(programs_dir(build), exe)
    return [exe] + w["argv"][1:]


def victim_preexec(name):
    """A preexec_fn that places a child as argusd places the victim: its CPUs, its user."""
    w = workload(name)
    cpus = set()
    for part in w.get("cpus", "0").split(","):
        lo, _, hi = part.partition("-")
        cpus |= set(range(int(lo), int(hi or lo) + 1))
    user = pwd.getpwnam(w.get("user", "nobody"))

    def place():
        os.sched_setaffinity(0, cpus)
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    return place


def fresh_data_files(name):
    """Remove the data files of the victims that run as workload name's user
    (bench/common.h: /var/tmp/argus-victims-UID/*.dat), so that its next run
    creates its own anew: page cache in the folios a fresh write leaves,
    whatever the perturbers before did to it. Returns the names removed."""
    uid = pwd.getpwnam(workload(name).get("user", "nobody")).pw_uid
    d = "/var/tmp/argus-victims-%d" % uid
    removed = []
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        return removed
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
        raise RuntimeError("%s: not a directory of uid %d" % (d, uid))
    for e in os.scandir(d):
        if e.name.endswith(".dat") and e.is_file(follow_symlinks=False):
            os.unlink(e.path)
            removed.append(e.name)
    return removed


def cpu_times():
    """{cpu: (busy_ticks, total_ticks)} from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                parts = line.split()
                vals = [int(x) for x in parts[1:9]]
                idle = vals[3] + vals[4]
                out[int(parts[0][3:])] = (sum(vals) - idle, sum(vals))
    return out


def busy_fraction(window_s=1.0):
    """Per CPU, the busy fraction over window_s seconds."""
    a = cpu_times()
    time.sleep(window_s)
    b = cpu_times()
    return {c: (b[c][0] - a[c][0]) / max(1, b[c][1] - a[c][1]) for c in b if c in a}


def wait_quiet(limit=0.15, timeout_s=20.0, log=None):
    """Wait until every CPU is busier than limit no more (others' work on a
    shared machine). Returns the last busy fractions and the seconds waited;
    a machine that never quiets is measured anyway, and the caller records it.
    Dirty data is written out first: a flush left by the cell before (io_hog's
    stream, a victim's writes) would otherwise run during the next runs."""
    t0 = time.monotonic()
    os.sync()
    while True:
        busy = busy_fraction(1.0)
        if max(busy.values()) <= limit or time.monotonic() - t0 > timeout_s:
            waited = time.monotonic() - t0
            if waited > 1.5 and log:
                log("   machine busy (%s), waited %.0f s" %
                    (", ".join("cpu%d %.0f%%" % (c, 100 * v) for c, v in sorted(busy.items())), waited))
            return busy, waited


class Perturber:
    """One running perturber: started pinned, ready when it says so. A spec
    with "together" (two causes at once) runs its parts, each as its own."""

    def __init__(self, build, name, spec, logdir):
        self.name = name
        self.parts = [Perturber(build, n, s, logdir) for n, s in spec.get("parts", [])]
        if self.parts:
            self.ready_s = None
            return
        if "command" in spec:
            # a program from the distribution (stress-ng), placed on its CPU by taskset; it
            # changes no setting that a restore would have to put back
            self.exe = None
            self.argv = ["taskset", "-c", str(spec["cpu"])] + spec["command"]
            self.ready_line = spec["ready"]
        else:
            self.exe = os.path.join(build, "bench", "perturbers", spec["program"])
            self.argv = [self.exe] + spec.get("args", []) + ["--cpu", str(spec["cpu"])]
            self.ready_line = "%s: ready" % spec["program"]
        self.log_path = os.path.join(logdir, "perturber-%s.log" % name)
        self.proc = None
        self.ready_s = None

    def start(self, timeout_s=180.0):
        """Start and wait for the ready line; raises RuntimeError when it dies or never gets ready."""
        if self.parts:
            t0 = time.monotonic()
            for p in self.parts:
                p.start(timeout_s)
            self.ready_s = time.monotonic() - t0
            return
        logf = open(self.log_path, "ab")
        # The log is shared by every start of this perturber: only what this
        # start writes (after this offset) can say that it is ready.
        since = logf.seek(0, os.SEEK_END)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdout=logf, stderr=logf, stdin=subprocess.DEVNULL)
        logf.close()
        while time.monotonic() - t0 < timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s before it was ready (log %s)" %
                                   (self.name, self.proc.returncode, self.log_path))
            with open(self.log_path, "rb") as f:
                f.seek(since)
                if self.ready_line.encode() in f.read():
                    self.ready_s = time.monotonic() - t0
                    return
            time.sleep(0.05)
        raise RuntimeError("%s not ready after %.0f s" % (self.name, timeout_s))

    def alive(self):
        if self.parts:
            return all(p.alive() for p in self.parts)
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s=30.0):
        """SIGTERM and wait; after grace_s, SIGKILL and apply its restore file."""
        if self.parts:
            rcs = [p.stop(grace_s) for p in reversed(self.parts)]
            return next((rc for rc in rcs if rc), rcs[-1] if rcs else None)
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if self.exe:
                    subprocess.run([self.exe, "--restore-only"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, check=False)
        rc = self.proc.returncode
        self.proc = None
        return rc


def vmstat():
    out = {}
    with open("/proc/vmstat") as f:
        for line in f:
            k, v = line.split()
            out[k] = int(v)
    return out


def thp_settings():
    out = {}
    for name in ("enabled", "defrag"):
        with open("/sys/kernel/mm/transparent_hugepage/" + name) as f:
            text = f.read()
        out[name] = text[text.index("[") + 1:text.index("]")]
    return out


def score(truths, state, verdict, path):
    """One run against its cell's truths (empty: no bottleneck); returns
    (outcome, committed node or None, depth). A job that did not succeed is
    "failed", never a diagnosis."""
    if state != "succeeded":
        return "failed", None, 0
    if verdict != "bottleneck":
        return ("abstain" if not truths else "miss"), None, 0
    path = path or []
    node = path[-1] if path else ""
    if not truths:
        return "incorrect", node, len(path)
    for t in truths:
        if node == t or node.startswith(t + "."):
            return "leaf", node, len(path)
    for t in truths:
        if t.startswith(node + "."):
            return "shallow", node, len(path)
    return "incorrect", node, len(path)


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def percentile(xs, p):
    """Nearest-rank percentile."""
    xs = sorted(xs)
    if not xs:
        return None
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))
    return xs[k]


# The host's own memory reclaim, held for a run as CPUs are pinned, and
# given back afterwards (the test command holds the same: scripts/reclaim.sh).
# Free page reporting (virtio-balloon) hands memory the guest frees back to
# the host; the next fault on it pays a host fault too. On this VM a THP
# victim run right after a few seconds of idle takes 0.8-1.3 s instead of
# 0.21 s (4 s idle, min_free_ms 0 vs 30000). A DAMON kdamond whose scheme
# pages out what looks cold evicts page cache a victim read a while ago
# (here an 80 MiB file just written lost 6 MiB of its page cache in 20 s).
# Which run of a reference or a diagnosis lands after an idle moment or an
# eviction is chance.
PAGE_REPORTING_MIN_FREE_MS = "/sys/module/page_reporting/parameters/min_free_ms"
DAMON_KDAMONDS = "/sys/kernel/mm/damon/admin/kdamonds"


def interrupt(sig, frame):
    raise KeyboardInterrupt


def hold_host_reclaim(delay_ms=300000):
    """Delay free page reporting and turn off every kdamond that is on;
    returns what release_host_reclaim restores. This kernel takes at most
    300000 ms (5 min) for the delay; a machine without a knob holds nothing
    there. A value the kernel refuses is an error: the run would otherwise
    go on unheld and not know it. From here on a SIGTERM interrupts the
    run as Ctrl-C does, so that the caller's finally gives back what was
    held (a harness ended by `kill` had left both held)."""
    signal.signal(signal.SIGTERM, interrupt)
    held = {"min_free_ms_before": None, "kdamonds_held": []}
    for d in sorted(glob.glob(os.path.join(DAMON_KDAMONDS, "[0-9]*"))):
        state = os.path.join(d, "state")
        try:
            with open(state) as f:
                if f.read().strip() != "on":
                    continue
            with open(state, "w") as f:
                f.write("off")
        except OSError as e:
            release_host_reclaim(held)
            raise RuntimeError("%s: cannot turn it off: %s" % (state, e))
        held["kdamonds_held"].append(d)
    try:
        with open(PAGE_REPORTING_MIN_FREE_MS) as f:
            before = f.read().strip()
    except OSError:
        return held  # no such knob here: nothing to hold
    try:
        with open(PAGE_REPORTING_MIN_FREE_MS, "w") as f:
            f.write(str(delay_ms))
    except OSError as e:
        release_host_reclaim(held)
        raise RuntimeError("%s: cannot set %d: %s" % (PAGE_REPORTING_MIN_FREE_MS, delay_ms, e))
    held.update({"min_free_ms_before": before, "min_free_ms_held": delay_ms})
    return held


def release_host_reclaim(held):
    """Give back what hold_host_reclaim held: every knob is restored even when one fails (a
    kdamond that something else turned on again meanwhile refuses "on" with EBUSY, and is on);
    the first failure is raised after."""
    failed = None
    for d in held.get("kdamonds_held", []):
        state = os.path.join(d, "state")
        try:
            with open(state) as f:
                if f.read().strip() == "on":
                    continue
            with open(state, "w") as f:
                f.write("on")
        except OSError as e:
            failed = failed or RuntimeError("%s: cannot turn it on again: %s" % (state, e))
    before = held.get("min_free_ms_before")
    if before is not None:
        try:
            with open(PAGE_REPORTING_MIN_FREE_MS, "w") as f:
                f.write(before)
        except OSError as e:
            failed = failed or RuntimeError("%s: cannot restore %s: %s" % (
                PAGE_REPORTING_MIN_FREE_MS, before, e))
    if failed:
        raise failed
