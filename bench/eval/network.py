#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Network transmit waits on real senders from Debian: socat, nc (netcat-openbsd) and iperf3
each send NBYTES over TCP to a sink (socat, iperf3's server) in a network namespace of this
script's own, through a veth pair whose host side is the senders' way out. argusd runs each
sender as a fixed-work workload (nobody, CPU 0). The cells and their truth, fixed before
anything runs:

    quiet    nothing changed: a null cell, a diagnosis must abstain
    shaped   the veth's host side limited by tbf to RATE, a queue that drops nothing: the
             senders wait for the device's queue; kernel_sync.socket.transmit
    cpu_hog  argusd's bundled CPU hog on the senders' CPU: kernel_scheduler.runqueue_wait

Truth is measured without argusd first: the sender alone, quiet and in the cell in turn,
--reps times each. A cell whose median run is not slower than the quiet median by MIN_SLOWER
is a null cell whatever its perturbation, and so is a shaped cell whose queue held nothing back
(no overlimits in `tc -s qdisc` over its runs). The raw results (each truth run, each job's
verdict, path and reason) go to DIR/network.json, a line each to stdout.

    network.py --build BUILD [--set FILE] [--reps N] [--out DIR] [--syscall-events calls|raw|none]

--set FILE takes the senders, the cells and their truth from FILE (bench/eval/heldout/set8/cells.json
says how): a set written before it was run, with its own truth rule, which the script applies to
its measurements: a cell is slower when its median run is slower than the quiet median by
MIN_SLOWER; its paths are those of its perturber's "paths" whose condition held ("overlimits": the
perturber's qdisc held packets back during its runs; "off_cpu": the sender's time off the CPU,
wall less user and system time of it and its children, rose by at least half of its wall time's
rise); a slower cell with no such path is left out, a cell not slower is null.

Root only. Needs socat, netcat-openbsd and iperf3 (Debian). The namespace, the veth pair, the
sinks and the tbf qdisc are removed at the end, also when it fails; processes are stopped by
their pids.
"""

import argparse
import json
import os
import pwd
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402

MIN_SLOWER = 0.10
NBYTES = 96 << 20
RATE = "1600mbit"
NS = "argus-tx-%d" % os.getpid()
HOST_DEV = "argus-txh"
PEER_DEV = "argus-txn"
HOST_IP, PEER_IP = "10.231.0.1", "10.231.0.2"
SINK_PORT, IPERF_PORT = 5001, 5201
DATA = "/var/tmp/argus-network/blob"
SENDER_CPU = 0

RSYNC_PORT, REDIS_PORT = 873, 6379
REDIS_INPUT = "/var/tmp/argus-network/sets.resp"

# The first set: its senders and cells, the truth of a slower cell by its perturber ("paths": each
# path with the condition that must also hold; "slower": none beyond the cell being slower).
DEFAULT_SET = {
    "senders": {
        "net_socat": ["/usr/bin/socat", "-u", "FILE:@DATA@", "TCP:@PEER@:5001"],
        "net_nc": ["/bin/sh", "-c", "exec /usr/bin/nc -N @PEER@ 5001 < @DATA@"],
        "net_iperf3": ["/usr/bin/iperf3", "-c", "@PEER@", "-p", "5201", "-n", "@NBYTES@"],
    },
    "perturbers": {
        "quiet": {"kind": "none", "paths": {}},
        "shaped": {"kind": "tbf", "rate": RATE,
                   "paths": {"kernel_sync.socket.transmit": "overlimits"}},
        "cpu_hog": {"kind": "program", "program": "cpu_hog", "cpu": SENDER_CPU,
                    "paths": {"kernel_scheduler.runqueue_wait": "slower"}},
    },
}


def expand(argv):
    subst = {"@DATA@": DATA, "@PEER@": PEER_IP, "@NBYTES@": str(NBYTES),
             "@REDIS_INPUT@": REDIS_INPUT}
    out = []
    for a in argv:
        for k, v in subst.items():
            a = a.replace(k, v)
        out.append(a)
    return out


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


class Network:
    """The namespace, the veth pair and the sinks; stop() removes them all."""

    def __init__(self, work):
        self.sinks = []
        sh("ip", "netns", "add", NS)
        sh("ip", "link", "add", HOST_DEV, "type", "veth", "peer", "name", PEER_DEV, "netns", NS)
        sh("ip", "addr", "add", HOST_IP + "/30", "dev", HOST_DEV)
        sh("ip", "link", "set", HOST_DEV, "up")
        for argv in (["ip", "addr", "add", PEER_IP + "/30", "dev", PEER_DEV],
                     ["ip", "link", "set", PEER_DEV, "up"], ["ip", "link", "set", "lo", "up"]):
            sh("ip", "netns", "exec", NS, *argv)
        sink_dir = os.path.join(os.path.dirname(DATA), "rsync-sink")
        os.makedirs(sink_dir, exist_ok=True)
        rsyncd = os.path.join(work, "rsyncd.conf")
        with open(rsyncd, "w") as f:
            f.write("[sink]\npath = %s\nread only = false\nuse chroot = false\nuid = root\n"
                    "gid = root\n" % sink_dir)
        for argv in (["socat", "-u", "TCP-LISTEN:%d,reuseaddr,fork" % SINK_PORT, "OPEN:/dev/null"],
                     ["iperf3", "-s", "-p", str(IPERF_PORT)],
                     ["rsync", "--daemon", "--no-detach", "--config=" + rsyncd,
                      "--port=%d" % RSYNC_PORT, "--address=" + PEER_IP],
                     ["redis-server", "--port", str(REDIS_PORT), "--bind", PEER_IP, "--save", "",
                      "--appendonly", "no", "--protected-mode", "no"]):
            # on the other CPU: a sink on the senders' CPU would hold it (set 8's first run)
            self.sinks.append(subprocess.Popen(["ip", "netns", "exec", NS, "taskset", "-c",
                                                str(1 - SENDER_CPU)] + argv,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
        time.sleep(1.0)

    def shape(self, spec):
        """The perturber's qdisc on the senders' way out (spec None: none)."""
        if spec is None:
            sh("tc", "qdisc", "del", "dev", HOST_DEV, "root", check=False)
        elif spec["kind"] == "tbf":
            sh("tc", "qdisc", "replace", "dev", HOST_DEV, "root", "tbf", "rate", spec["rate"],
               "burst", "1mb", "limit", "32mb")
        elif spec["kind"] == "htb":
            sh("tc", "qdisc", "replace", "dev", HOST_DEV, "root", "handle", "1:", "htb",
               "default", "10")
            sh("tc", "class", "add", "dev", HOST_DEV, "parent", "1:", "classid", "1:10", "htb",
               "rate", spec["rate"], "ceil", spec["rate"])

    def overlimits(self):
        m = re.search(r"overlimits (\d+)", sh("tc", "-s", "qdisc", "show", "dev", HOST_DEV).stdout)
        return int(m.group(1)) if m else 0

    def stop(self):
        for p in self.sinks:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        sh("ip", "link", "del", HOST_DEV, check=False)
        sh("ip", "netns", "del", NS, check=False)


class Cell:
    """A cell's perturbation, on and off: a qdisc, or a perturber process (evallib.Perturber)."""

    def __init__(self, name, spec, net, build, logdir):
        self.name, self.spec, self.net = name, spec, net
        self.qdisc = spec["kind"] in ("tbf", "htb")
        self.proc = (evallib.Perturber(build, name, spec, logdir)
                     if spec["kind"] in ("program", "command") else None)

    def __enter__(self):
        if self.qdisc:
            self.net.shape(self.spec)
        if self.proc:
            self.proc.start()
            time.sleep(self.spec.get("settle_s", 0))
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.stop()
        if self.qdisc:
            self.net.shape(None)


def run_alone(argv):
    """The sender as argusd runs it (nobody, CPU 0), alone: its wall seconds, and its CPU
    seconds (user and system, its children's included)."""
    nobody = pwd.getpwnam("nobody")

    def place():
        os.sched_setaffinity(0, {SENDER_CPU})
        os.setgid(nobody.pw_gid)
        os.setgroups([])
        os.setuid(nobody.pw_uid)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(argv, preexec_fn=place, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d" % (argv, r.returncode))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_inputs(workloads, senders):
    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    with open("/dev/urandom", "rb") as src, open(DATA, "wb") as f:
        f.write(src.read(NBYTES))
    # redis-cli --pipe's input: 300000 SETs of 100-byte values over the same keys at every run
    with open(REDIS_INPUT, "wb") as f:
        value = b"v" * 100
        for i in range(300000):
            key = b"key:%d" % (i % 50000)
            f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" %
                    (len(key), key, len(value), value))
    os.chmod(os.path.dirname(DATA), 0o755)
    for path in (DATA, REDIS_INPUT):
        os.chmod(path, 0o644)
    for name, argv in senders.items():
        with open(os.path.join(workloads, name + ".json"), "w") as f:
            json.dump({"name": name, "description": "a sender through a veth pair",
                       "argv": expand(argv), "user": "nobody", "cpus": str(SENDER_CPU),
                       "timeout_s": 120}, f, indent=2)


def measure_truth(net, build, logdir, reps, the_set, out):
    """Each cell's truth by the rule (the docstring), from the sender alone, quiet and in the
    cell in turn. A slower cell that no path explains is left out (truth None)."""
    truth = {}
    for v, argv in the_set["senders"].items():
        for cell, spec in the_set["perturbers"].items():
            quiet, slow, over = [], [], 0
            for _ in range(reps):
                quiet.append(run_alone(expand(argv)))
                with Cell(cell, spec, net, build, logdir):
                    before = net.overlimits() if spec["kind"] in ("tbf", "htb") else 0
                    slow.append(run_alone(expand(argv)))
                    if spec["kind"] in ("tbf", "htb"):
                        over += net.overlimits() - before
            qm, sm = evallib.median([w for w, _ in quiet]), evallib.median([w for w, _ in slow])
            qoff = evallib.median([w - c for w, c in quiet])
            soff = evallib.median([w - c for w, c in slow])
            held = {"slower": True, "overlimits": over > 0,
                    "off_cpu": soff - qoff >= 0.5 * (sm - qm)}
            slower = sm > qm * (1 + MIN_SLOWER)
            paths = [p for p, cond in spec["paths"].items() if held[cond]] if slower else []
            truth["%s:%s" % (v, cell)] = {
                "quiet_s": [w for w, _ in quiet], "cell_s": [w for w, _ in slow],
                "quiet_cpu_s": [c for _, c in quiet], "cell_cpu_s": [c for _, c in slow],
                "overlimits": over, "slower": sm / qm - 1,
                "truth": None if slower and not paths else paths}
            out("truth %-13s %-12s quiet %.3f s, cell %.3f s (%+.0f%%), off-CPU %.3f -> %.3f s, "
                "overlimits %d: %s" % (v, cell, qm, sm, 100 * (sm / qm - 1), qoff, soff, over,
                                       "left out" if slower and not paths
                                       else ", ".join(paths) or "null"))
    return truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(evallib.SRC, "build"))
    ap.add_argument("--set", help="the senders, cells and truth rule (default: the first set)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--syscall-events", choices=("calls", "raw", "none"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("network.py: root only")
    out_dir = args.out or tempfile.mkdtemp(prefix="argus-network-")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="argus-network-run-")
    workloads = os.path.join(work, "workloads")
    os.makedirs(workloads)
    the_set = DEFAULT_SET
    if args.set:
        with open(args.set) as f:
            the_set = json.load(f)
    write_inputs(workloads, the_set["senders"])
    evallib.WORKLOADS = workloads
    from matrix import Argusd  # after WORKLOADS: the daemon's configuration names it

    def out(line):
        print(line, flush=True)

    results = {"set": args.set or "default", "senders": the_set["senders"],
               "perturbers": the_set["perturbers"], "nbytes": NBYTES, "reps": args.reps,
               "syscall_events": args.syscall_events or "default", "diagnoses": []}
    held = evallib.hold_host_reclaim()
    net = Network(work)
    argusd = None
    try:
        results["truth"] = measure_truth(net, args.build, work, 3, the_set, out)
        extra = "syscall_events = %s\n" % args.syscall_events if args.syscall_events else ""
        argusd = Argusd(args.build, work, extra)
        for v in the_set["senders"]:
            job, _ = argusd.follow(argusd.submit("/references", {"workload": v}))
            out("reference %s: %s" % (v, job.get("state")))
            for cell, spec in the_set["perturbers"].items():
                truths = results["truth"]["%s:%s" % (v, cell)]["truth"]
                if truths is None:
                    continue
                for rep in range(args.reps):
                    with Cell(cell, spec, net, args.build, work):
                        job, secs = argusd.follow(argusd.submit("/diagnose", {"workload": v}))
                    res = job.get("result") or {}
                    outcome, node, depth = evallib.score(truths, job.get("state"),
                                                         res.get("verdict"), res.get("path"))
                    results["diagnoses"].append({
                        "victim": v, "cell": cell, "rep": rep, "truth": truths,
                        "state": job.get("state"), "verdict": res.get("verdict"),
                        "path": res.get("path"), "reason_code": res.get("reason_code"),
                        "summary": res.get("summary"), "outcome": outcome, "seconds": secs})
                    out("diagnose %-13s %-12s %d: %-9s %s (%s)" %
                        (v, cell, rep, outcome, node or res.get("reason_code") or "-",
                         res.get("verdict")))
    finally:
        if argusd:
            argusd.stop()
        net.shape(None)
        net.stop()
        evallib.release_host_reclaim(held)
        with open(os.path.join(out_dir, "network.json"), "w") as f:
            json.dump(results, f, indent=1)
    d = results["diagnoses"]
    null = [x for x in d if not x["truth"]]
    cause = [x for x in d if x["truth"]]
    out("incorrect %d of %d; null runs abstaining %d of %d; runs with a cause at the true leaf "
        "%d of %d; results %s" % (sum(x["outcome"] == "incorrect" for x in d), len(d),
                                  sum(x["outcome"] == "abstain" for x in null), len(null),
                                  sum(x["outcome"] == "leaf" for x in cause), len(cause),
                                  os.path.join(out_dir, "network.json")))


if __name__ == "__main__":
    main()
