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

    network.py --build BUILD [--reps N] [--out DIR] [--syscall-events calls|raw|none]

Root only. Needs socat, netcat-openbsd and iperf3 (Debian). The namespace, the veth pair, the
sinks and the tbf qdisc are removed at the end, also when it fails; processes are stopped by
their pids.
"""

import argparse
import json
import os
import pwd
import re
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

SENDERS = {
    "net_socat": ["/usr/bin/socat", "-u", "FILE:" + DATA, "TCP:%s:%d" % (PEER_IP, SINK_PORT)],
    "net_nc": ["/bin/sh", "-c", "exec /usr/bin/nc -N %s %d < %s" % (PEER_IP, SINK_PORT, DATA)],
    "net_iperf3": ["/usr/bin/iperf3", "-c", PEER_IP, "-p", str(IPERF_PORT), "-n", str(NBYTES)],
}
TRUTHS = {"quiet": [], "shaped": ["kernel_sync.socket.transmit"],
          "cpu_hog": ["kernel_scheduler.runqueue_wait"]}


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


class Network:
    """The namespace, the veth pair and the sinks; stop() removes them all."""

    def __init__(self):
        self.sinks = []
        sh("ip", "netns", "add", NS)
        sh("ip", "link", "add", HOST_DEV, "type", "veth", "peer", "name", PEER_DEV, "netns", NS)
        sh("ip", "addr", "add", HOST_IP + "/30", "dev", HOST_DEV)
        sh("ip", "link", "set", HOST_DEV, "up")
        for argv in (["ip", "addr", "add", PEER_IP + "/30", "dev", PEER_DEV],
                     ["ip", "link", "set", PEER_DEV, "up"], ["ip", "link", "set", "lo", "up"]):
            sh("ip", "netns", "exec", NS, *argv)
        for argv in (["socat", "-u", "TCP-LISTEN:%d,reuseaddr,fork" % SINK_PORT, "OPEN:/dev/null"],
                     ["iperf3", "-s", "-p", str(IPERF_PORT)]):
            self.sinks.append(subprocess.Popen(["ip", "netns", "exec", NS] + argv,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
        time.sleep(1.0)

    def shape(self, on):
        if on:
            sh("tc", "qdisc", "replace", "dev", HOST_DEV, "root", "tbf", "rate", RATE, "burst",
               "1mb", "limit", "32mb")
        else:
            sh("tc", "qdisc", "del", "dev", HOST_DEV, "root", check=False)

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
    """A cell's perturbation, on and off."""

    def __init__(self, name, net, build, logdir):
        self.name, self.net = name, net
        self.hog = (evallib.Perturber(build, "cpu_hog", {"program": "cpu_hog", "cpu": SENDER_CPU},
                                      logdir) if name == "cpu_hog" else None)

    def __enter__(self):
        if self.name == "shaped":
            self.net.shape(True)
        if self.hog:
            self.hog.start()
        return self

    def __exit__(self, *exc):
        if self.hog:
            self.hog.stop()
        if self.name == "shaped":
            self.net.shape(False)


def run_alone(argv):
    """The sender as argusd runs it (nobody, CPU 0), alone: its wall seconds."""
    nobody = pwd.getpwnam("nobody")

    def place():
        os.sched_setaffinity(0, {SENDER_CPU})
        os.setgid(nobody.pw_gid)
        os.setgroups([])
        os.setuid(nobody.pw_uid)

    t0 = time.monotonic()
    r = subprocess.run(argv, preexec_fn=place, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d" % (argv, r.returncode))
    return time.monotonic() - t0


def write_inputs(workloads):
    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    with open("/dev/urandom", "rb") as src, open(DATA, "wb") as f:
        f.write(src.read(NBYTES))
    os.chmod(os.path.dirname(DATA), 0o755)
    os.chmod(DATA, 0o644)
    for name, argv in SENDERS.items():
        with open(os.path.join(workloads, name + ".json"), "w") as f:
            json.dump({"name": name, "description": "sends %d MiB over TCP through a veth pair"
                       % (NBYTES >> 20), "argv": argv, "user": "nobody",
                       "cpus": str(SENDER_CPU), "timeout_s": 120}, f, indent=2)


def measure_truth(net, build, logdir, reps, out):
    truth = {}
    for v, argv in SENDERS.items():
        for cell in ("quiet", "shaped", "cpu_hog"):
            quiet, slow, over = [], [], 0
            for _ in range(reps):
                quiet.append(run_alone(argv))
                with Cell(cell, net, build, logdir):
                    before = net.overlimits() if cell == "shaped" else 0
                    slow.append(run_alone(argv))
                    over += net.overlimits() - before if cell == "shaped" else 0
            qm, sm = evallib.median(quiet), evallib.median(slow)
            slower = sm > qm * (1 + MIN_SLOWER)
            paths = TRUTHS[cell] if slower and (cell != "shaped" or over > 0) else []
            truth["%s:%s" % (v, cell)] = {"quiet_s": quiet, "cell_s": slow, "overlimits": over,
                                          "slower": sm / qm - 1, "truth": paths}
            out("truth %-11s %-8s quiet %.3f s, cell %.3f s (%+.0f%%), overlimits %d: %s" %
                (v, cell, qm, sm, 100 * (sm / qm - 1), over, ", ".join(paths) or "null"))
    return truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(evallib.SRC, "build"))
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
    write_inputs(workloads)
    evallib.WORKLOADS = workloads
    from matrix import Argusd  # after WORKLOADS: the daemon's configuration names it

    def out(line):
        print(line, flush=True)

    results = {"nbytes": NBYTES, "rate": RATE, "reps": args.reps,
               "syscall_events": args.syscall_events or "default", "diagnoses": []}
    held = evallib.hold_host_reclaim()
    net = Network()
    argusd = None
    try:
        results["truth"] = measure_truth(net, args.build, work, 3, out)
        extra = "syscall_events = %s\n" % args.syscall_events if args.syscall_events else ""
        argusd = Argusd(args.build, work, extra)
        for v in SENDERS:
            job, _ = argusd.follow(argusd.submit("/references", {"workload": v}))
            out("reference %s: %s" % (v, job.get("state")))
            for cell in ("quiet", "shaped", "cpu_hog"):
                truths = results["truth"]["%s:%s" % (v, cell)]["truth"]
                for rep in range(args.reps):
                    with Cell(cell, net, args.build, work):
                        job, secs = argusd.follow(argusd.submit("/diagnose", {"workload": v}))
                    res = job.get("result") or {}
                    outcome, node, depth = evallib.score(truths, job.get("state"),
                                                         res.get("verdict"), res.get("path"))
                    results["diagnoses"].append({
                        "victim": v, "cell": cell, "rep": rep, "truth": truths,
                        "state": job.get("state"), "verdict": res.get("verdict"),
                        "path": res.get("path"), "reason_code": res.get("reason_code"),
                        "summary": res.get("summary"), "outcome": outcome, "seconds": secs})
                    out("diagnose %-11s %-8s %d: %-9s %s (%s)" %
                        (v, cell, rep, outcome, node or res.get("reason_code") or "-",
                         res.get("verdict")))
    finally:
        if argusd:
            argusd.stop()
        net.shape(False)
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
