#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Diagnose a real service in place: nginx from Debian's package, a prefork
server (a master and its workers) in a cgroup of its own, defined to argusd
as a service whose SLI is the p99 latency that wrk (Debian's package)
measures against it in each window.

    services.py --build BUILD [--reps N] [--out DIR] [--cells a,b]

The cells, and their truth, are fixed before anything runs (CELLS below):
each names the perturber and the paths a correct diagnosis may name, or
none. Truth is then measured without argusd: the SLI command alone, with
and without the perturber, --reps times each; a cell whose SLI is not worse
by at least MIN_SLOWER (argusd's own min_slowdown) is a null cell whatever
the perturber, and a diagnosis there must abstain. The raw results (every
job's result, the SLI values, the truth measured) go to DIR/services.json;
a table to stdout.

Root only; every process started is stopped by pid, the cgroup removed.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402
from matrix import Argusd  # noqa: E402

MIN_SLOWER = 0.10
NGINX_CPU = 0
CLIENT_CPU = 1
FILES = 400            # static files served, 256 KiB each: 100 MiB to read back when dropped
FILE_KB = 256
WINDOW_S = 3

# cell: (perturber or None, extra traffic, truths: paths a correct diagnosis may name)
CELLS = {
    "none": (None, False, []),
    "traffic": (None, True, []),
    "cpu_hog": ("cpu_hog", False, ["kernel_scheduler.runqueue_wait"]),
    "cache_dropper": ("cache_dropper", False,
                      ["kernel_block_io", "kernel_paging.file_fault.major"]),
    # the device busy: it slows the service only if its files are read from storage
    "io_hog": ("io_hog", False, ["kernel_block_io"]),
    # page cache reclaimed: the files come back from storage, or the service reclaims
    "mem_pressure": ("mem_pressure", False,
                     ["kernel_memory_pressure", "kernel_block_io", "kernel_paging.file_fault.major"]),
}

WRK_LUA = r"""
-- each request a random file; done() prints the p99 latency in ms, last
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/f" .. math.random(0, %d) .. ".bin")
end
done = function(summary, latency, requests)
  io.write(string.format("%%.3f\n", latency:percentile(99) / 1000))
end
""" % (FILES - 1)

NGINX_CONF = """
worker_processes 2;
daemon off;
user nobody nogroup;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off;
  sendfile on;
  client_body_temp_path {dir}/tmp;
  proxy_temp_path {dir}/tmp;
  fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp;
  scgi_temp_path {dir}/tmp;
  server {{ listen 127.0.0.1:{port}; root {dir}/www; }}
}}
"""


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cgroup_root():
    """The hierarchy argusd follows services in (daemon/cgroup.h): cgroup2 at /sys/fs/cgroup, else name=systemd."""
    with open("/proc/self/mounts") as f:
        mounts = [line.split() for line in f]
    for dev, mnt, fs, opts, *_ in mounts:
        if mnt == "/sys/fs/cgroup" and fs == "cgroup2":
            return mnt
    for dev, mnt, fs, opts, *_ in mounts:
        if fs == "cgroup" and "name=systemd" in opts.split(","):
            return mnt
    raise RuntimeError("no cgroup hierarchy that tracks services")


class Nginx:
    def __init__(self, dir, port, cgroup_dir):
        self.dir, self.port, self.cg = dir, port, cgroup_dir
        os.makedirs(os.path.join(dir, "www"))
        os.makedirs(os.path.join(dir, "tmp"))
        block = os.urandom(FILE_KB * 1024)
        for i in range(FILES):
            with open(os.path.join(dir, "www", "f%d.bin" % i), "wb") as f:
                f.write(block[i:] + block[:i])
        with open(os.path.join(dir, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF.format(dir=dir, port=port))
        self.proc = None

    def start(self):
        """The master joins the cgroup before it execs, so that its workers are born there."""
        log = open(os.path.join(self.dir, "nginx.out"), "ab")
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", 'echo $$ > "$1/cgroup.procs" && exec taskset -c %d nginx -c "$2"'
             % NGINX_CPU, "sh", self.cg, os.path.join(self.dir, "nginx.conf")],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        for _ in range(100):
            if self.procs() >= 3:
                return
            time.sleep(0.1)
        raise RuntimeError("nginx did not start its workers (see %s)" % self.dir)

    def procs(self):
        with open(os.path.join(self.cg, "cgroup.procs")) as f:
            return len(f.read().split())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class Traffic:
    """More requests at the same cost each: a client on the client CPU, one connection, paced."""

    def __init__(self, port, rate=200):
        code = ("import http.client,time,random\n"
                "c=http.client.HTTPConnection('127.0.0.1',%d)\n"
                "while True:\n"
                " t=time.monotonic()\n"
                " c.request('GET','/f%%d.bin'%%random.randrange(%d)); c.getresponse().read()\n"
                " time.sleep(max(0,%f-(time.monotonic()-t)))\n" % (port, FILES, 1.0 / rate))
        self.proc = subprocess.Popen(["taskset", "-c", str(CLIENT_CPU), sys.executable, "-c", code],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def sli_command(lua, port):
    """wrk on the client CPU at a real-time priority (it runs as root): a perturber beside it on
    that CPU must not slow the client that measures the service."""
    return ["/usr/bin/chrt", "-f", "10", "/usr/bin/taskset", "-c", str(CLIENT_CPU), "/usr/bin/wrk",
            "-t1", "-c4", "-d2s", "-s", lua, "http://127.0.0.1:%d/" % port]


def sli_alone(cmd):
    """The SLI as argusd would take it, without argusd: the command run as nobody, its last line."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=30)
    return float(out.stdout.strip().splitlines()[-1])


def warm(nginx):
    """The served files back in the page cache: every run starts from the same service, whatever
    a perturber before evicted (cache_dropper and mem_pressure last past their cells)."""
    subprocess.run(["cat"] + [os.path.join(nginx.dir, "www", "f%d.bin" % i) for i in range(FILES)],
                   stdout=subprocess.DEVNULL, check=True)


def with_cell(build, name, logdir, fn):
    perturber, traffic, _ = CELLS[name]
    warm(NGINX)
    truth_spec = evallib.load_truth(os.path.join(evallib.SRC, "bench", "eval", "truth.json"))
    p = t = None
    try:
        if perturber:
            p = evallib.Perturber(build, perturber, truth_spec["perturbers"][perturber], logdir)
            p.start()
        if traffic:
            t = Traffic(PORT)
            time.sleep(1)
        return fn()
    finally:
        if t:
            t.stop()
        if p:
            p.stop()


PORT = None
NGINX = None


def main():
    global PORT, NGINX
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cells", default=",".join(CELLS))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    cells = [c.strip() for c in a.cells.split(",") if c.strip()]
    for c in cells:
        if c not in CELLS:
            sys.exit("unknown cell %s (cells: %s)" % (c, ", ".join(CELLS)))
    top = tempfile.mkdtemp(prefix="argus-eval-services-")
    os.chmod(top, 0o755)
    out = a.out or os.path.join(top, "out")
    os.makedirs(out, exist_ok=True)
    PORT = free_port()
    cg_path = "/argus-eval-nginx-%d" % os.getpid()
    cg_dir = cgroup_root() + cg_path
    os.mkdir(cg_dir)
    held = evallib.hold_host_reclaim()
    nginx = NGINX = Nginx(os.path.join(top, "nginx"), PORT, cg_dir)
    argusd = None
    lua = os.path.join(top, "p99.lua")
    with open(lua, "w") as f:
        f.write(WRK_LUA)
    os.chmod(lua, 0o644)
    cmd = sli_command(lua, PORT)
    results = {"cells": {}, "truth": {}, "service": None, "reference": None,
               "min_slower": MIN_SLOWER, "reps": a.reps}
    try:
        nginx.start()
        # truth, without argusd: the SLI alone, in the cell and without
        warm(nginx)
        base = [sli_alone(cmd) for _ in range(a.reps)]
        results["truth"]["baseline_p99_ms"] = base
        for c in cells:
            vals = with_cell(build, c, out, lambda: [sli_alone(cmd) for _ in range(a.reps)])
            slower = evallib.median(vals) / evallib.median(base) - 1
            results["truth"][c] = {"p99_ms": vals, "slower": slower,
                                   "null": slower < MIN_SLOWER or not CELLS[c][2]}
            print("truth %-14s p99 %s ms vs %s: %+.0f%%" % (c, vals, base, slower * 100), flush=True)

        os.makedirs(os.path.join(top, "argusd", "services"))
        os.makedirs(os.path.join(top, "argusd", "workloads"))
        service = {"name": "web", "cgroup": cg_path, "window_s": WINDOW_S, "user": "root",
                   "sli": {"command": cmd, "better": "lower", "unit": "ms"},
                   "description": "nginx, a master and 2 workers on CPU %d" % NGINX_CPU}
        results["service"] = service
        with open(os.path.join(top, "argusd", "services", "web.json"), "w") as f:
            json.dump(service, f)
        argusd = Argusd(build, os.path.join(top, "argusd"),
                        extra="services_dir = %s/argusd/services\n" % top)
        warm(nginx)
        job, secs = argusd.follow(argusd.submit("/references", {"service": "web"}))
        if job["state"] != "succeeded":
            raise RuntimeError("reference: %s" % json.dumps(job.get("error")))
        results["reference"] = {"id": job["result"]["reference"], "seconds": secs,
                                "sli_cv": job["result"].get("sli_cv"),
                                "warnings": job["result"].get("warnings")}
        print("reference %d in %.0f s (SLI cv %.2f)" % (job["result"]["reference"], secs,
                                                        job["result"].get("sli_cv") or 0), flush=True)
        for c in cells:
            truths = [] if results["truth"][c]["null"] else CELLS[c][2]
            runs = []
            for rep in range(a.reps):
                def diagnose():
                    return argusd.follow(argusd.submit("/diagnose", {"service": "web"}))
                job, secs = with_cell(build, c, out, diagnose)
                res = job.get("result") or {}
                outcome, node, depth = evallib.score(truths, job["state"], res.get("verdict"),
                                                     res.get("path"))
                runs.append({"job": job["id"], "state": job["state"], "outcome": outcome,
                             "verdict": res.get("verdict"), "path": res.get("path"),
                             "reason_code": res.get("reason_code"), "summary": res.get("summary"),
                             "error": job.get("error"), "seconds": secs})
                print("%-14s rep %d: %-9s %s %s" % (c, rep + 1, outcome, res.get("verdict"),
                                                    "/".join(res.get("path") or [])
                                                    or res.get("reason_code") or ""), flush=True)
            results["cells"][c] = {"truths": truths, "runs": runs}
    finally:
        if argusd:
            argusd.stop()
        nginx.stop()
        evallib.release_host_reclaim(held)
        for _ in range(50):
            try:
                os.rmdir(cg_dir)
                break
            except OSError:
                time.sleep(0.1)
        with open(os.path.join(out, "services.json"), "w") as f:
            json.dump(results, f, indent=1)
        print("results: %s" % os.path.join(out, "services.json"))
        if not a.out:
            shutil.rmtree(os.path.join(top, "nginx"), True)


if __name__ == "__main__":
    main()
