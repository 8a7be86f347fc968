#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Diagnose a real service in place: a server from Debian's packages in a
cgroup of its own, every process of it on CPU 0, loaded by its own load
generator on CPU 1, and defined to argusd as a service whose SLI that
generator measures in each window (each class below says what it runs):

    nginx     a master and 2 workers serving static files; wrk, requests per second
    nginx-rate  the same under a steady wrk, its served rate from a Prometheus exporter (judged per request)
    redis     redis-server holding ~330 MiB of keys in memory; redis-benchmark GETs
    redis-rate  the same under a steady redis-benchmark, its served rate from a Prometheus exporter (held out)
    redis-aof  the same keys, every write appended to a file and fsynced before its reply; redis-benchmark SETs (held out)
    memcached memcached's worker threads, items in memory; memcslap's gets a second (held out)
    postgres  PostgreSQL 15 over a ~300 MiB pgbench database; pgbench select-only
    postgres-connect  the same, a connection (a forked backend) per transaction (held out)
    apache    apache2's event MPM, a child of worker threads serving nginx's files; wrk (held out)
    apache-rate  the same under a steady wrk, its served rate from a Prometheus exporter (held out)
    lighttpd  lighttpd, one process of one event loop serving nginx's files; wrk (held out)
    mariadb   MariaDB 10.11 over sysbench's tables, a small buffer pool; sysbench point selects (held out)
    unbound   Unbound answering a local zone from memory over UDP; dnsperf, queries per second (held out)
    slapd     OpenLDAP's slapd, its database a memory-mapped file (back-mdb); base searches (held out)

    services.py --build BUILD [--service nginx|nginx-rate|apache|apache-rate|lighttpd|redis|redis-rate|redis-aof|memcached|postgres|postgres-connect|mariadb|unbound|slapd] [--reps N] [--out DIR] [--cells a,b]
                [--syscall-events calls|raw|none]
    services.py --build BUILD [--service S] --spread N

The cells (CELLS) and each service's truth in them (COMMON_TRUTHS and the
service's TRUTHS: the paths a correct diagnosis may name, each with its
reason) are fixed before anything runs. argusd's reference is recorded
first, on the quiet service, as its user would, before any perturber ran
(until 1e94e10 it came after the truth's first pairs, whose last cell is the
memory hog, and two of three references were recorded slow: see
results/2026-12-04/services-8c3ae4e.md). Truth is measured without argusd,
the SLI command alone, in pairs: a quiet run, then a run in the cell. --reps
pairs per cell before any diagnosis, and two beside each diagnosis, in the
same minutes as argusd's windows: quiet, then in one run of the perturber the
cell's SLI, the diagnosis, the cell's SLI again, then quiet. A cell's truth
is the median over its pairs of how much worse the cell's run is than the
quiet run beside it (a drift of the machine over minutes moves both runs of
a pair), so each diagnosis is scored once its cell's pairs are all in. A
cell less than MIN_SLOWER (argusd's own min_slowdown) worse is a null cell
whatever the perturber, and so is a cell whose truth names no path: a
diagnosis there must abstain. A cell whose truth is the service's own storage
I/O alone (STORAGE_PATHS) names it only when the service moved STORAGE_MIN_B
more storage in the cell's run than in the quiet one beside it (/proc/PID/io,
the median pair's), or, in a cell of the service's STORAGE_MOVED, that much in
the cell's run at all (a writer whose every write waits for the device). The raw results (every
job's result, the SLI values, the truth measured) go to DIR/services.json,
each diagnosis's trace to DIR/traces/CELL-REP.json.gz, the reference as
argusd serves it to DIR/reference.json.gz; a line per
measurement and per diagnosis to stdout.

--spread N runs the SLI command N times on the quiet system and prints, for
each form that every SLI command reports on the line before its last (mean
and p99 latency, throughput), the values and their coefficient of
variation: how each service's form was chosen.

Root only; every process started is stopped by its pid, the cgroup removed,
the temporary directory removed but for the results when --out is not given.
"""

import argparse
import contextlib
import gzip
import json
import os
import pwd
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evallib  # noqa: E402
from matrix import Argusd  # noqa: E402

MIN_SLOWER = 0.10
SERVER_CPU = 0
CLIENT_CPU = 1
WINDOW_S = 3

# The SLI's load generator on the client CPU at a real-time priority (it runs as root): a
# perturber beside it on that CPU must not slow the client that measures the service.
CLIENT = ["/usr/bin/chrt", "-f", "10", "/usr/bin/taskset", "-c", str(CLIENT_CPU)]

# The forms each SLI command prints on the line before its last: which way is better, the unit.
FORMS = {"mean_ms": ("lower", "ms"), "p99_ms": ("lower", "ms"), "rps": ("higher", "req/s")}

# cell: (perturber or None, extra traffic)
CELLS = {
    "none": (None, False),
    "traffic": (None, True),
    "cpu_hog": ("cpu_hog", False),
    "cache_dropper": ("cache_dropper", False),
    "io_hog": ("io_hog", False),
    "mem_pressure": ("mem_pressure", False),
}

# cell: (paths a correct diagnosis may name, why), the same for every service; each service's
# TRUTHS gives the other cells
COMMON_TRUTHS = {
    "none": ([], "no perturber"),
    "traffic": ([], "more requests at the same cost each: no request is slower for a kernel path"),
    "cpu_hog": (["kernel_scheduler.runqueue_wait"],
                "a busy thread on the server's CPU: the server waits for that CPU on the runqueue"),
}


def free_port():
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


def placed(cgroup_dir, user=None):
    """A preexec_fn: the child joins the cgroup and the server's CPU before it execs (so that
    every process it forks is born there), then becomes user."""
    pw = pwd.getpwnam(user) if user else None

    def place():
        with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        os.sched_setaffinity(0, {SERVER_CPU})
        if pw:
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
    return place


def on_client(argv, **kw):
    """argv run to its end on the client CPU, at an ordinary priority (setting up, warming)."""
    return subprocess.run(["taskset", "-c", str(CLIENT_CPU)] + argv, check=True, **kw)


def client_process(argv):
    """argv started on the client CPU, at an ordinary priority, silent (a load, an exporter)."""
    return subprocess.Popen(["taskset", "-c", str(CLIENT_CPU)] + argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def read_back(paths):
    """The files read once, so that they are in the page cache again."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


class Service:
    """A server in a cgroup of its own, every process of it on SERVER_CPU, stopped by its pid.
    A subclass says how it is set up (in __init__), started, warmed and loaded, its SLI command
    (which prints the FORMS on the line before its last, then its form), and its TRUTHS for the
    cells where services differ."""

    kind = name = description = None
    form = "mean_ms"
    window_s = WINDOW_S
    stop_signal = signal.SIGTERM
    TRUTHS = {}
    # Cells whose storage-only truth holds when the service moved STORAGE_MIN_B of storage in the
    # cell's runs at all, not more than in the quiet runs: each of its writes waits for the device,
    # so a busy device slows the same writes (judge_truth).
    STORAGE_MOVED = frozenset()

    def __init__(self, dir, port, cgroup_dir):
        self.dir, self.port, self.cg = dir, port, cgroup_dir
        os.makedirs(dir)
        os.chmod(dir, 0o755)
        self.proc = None

    def spawn(self, argv, user=None):
        """The server's first process, as user, its output in DIR/KIND.out."""
        log = open(os.path.join(self.dir, self.kind + ".out"), "ab")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                     cwd=self.dir, preexec_fn=placed(self.cg, user))
        log.close()

    def wait_until(self, ready, timeout_s=120):
        """Until ready() holds; fails at once when the server exits."""
        t0 = time.monotonic()
        while not ready():
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %d (see %s)" % (self.kind, self.proc.returncode, self.dir))
            if time.monotonic() - t0 > timeout_s:
                raise RuntimeError("%s not ready after %d s (see %s)" % (self.kind, timeout_s, self.dir))
            time.sleep(0.2)

    def accepts(self):
        """Whether the server's port takes a connection now."""
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 1):
            return True
        return False

    def warm(self):
        """By default the SLI's command once, untimed: whatever a perturber before took from the
        server (its code's page cache) comes back before the run that counts."""
        on_client(self.sli_argv(), stdout=subprocess.DEVNULL)

    def procs(self):
        with open(os.path.join(self.cg, "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(self.stop_signal)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def truths(self, cell):
        """(paths a correct diagnosis may name, why)."""
        return {**COMMON_TRUTHS, **self.TRUTHS}[cell]

    def sli(self):
        """The SLI as argusd's service definition has it."""
        better, unit = FORMS[self.form]
        return {"command": CLIENT + self.sli_argv(), "better": better, "unit": unit}

    def sli_argv(self):
        """The SLI's own command line: by default the helper script the subclass wrote."""
        return ["/usr/bin/python3", self.helper]

    def truth_command(self):
        """What measures the SLI without argusd, for the truth and --spread: the SLI's command."""
        return self.sli()["command"]

    @property
    def data(self):
        """The server's private data directory (make_data)."""
        return os.path.join(self.dir, "data")

    def make_data(self, owner, owner_group, log_name, argv, **run_kw):
        """The data directory made, 0700 and owned by owner and owner_group, then filled by argv
        run to its end (its output in DIR/log_name; run_kw to subprocess.run)."""
        os.mkdir(self.data, 0o700)
        shutil.chown(self.data, owner, owner_group)
        with open(os.path.join(self.dir, log_name), "wb") as log:
            subprocess.run(argv, stdout=log, stderr=log, cwd=self.dir, check=True, **run_kw)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path


NGINX_FILES = 400      # static files served, 256 KiB each: 100 MiB to read back when dropped
NGINX_FILE_KB = 256

WRK_LUA = r"""
-- each request a random file; done() prints the forms, then the %(form)s, last
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/f" .. math.random(0, %(last)d) .. ".bin")
end
done = function(summary, latency, requests)
  local forms = {mean_ms = latency.mean / 1000, p99_ms = latency:percentile(99) / 1000,
                 rps = summary.requests / (summary.duration / 1e6)}
  io.write(string.format("mean_ms %%.3f p99_ms %%.3f rps %%.1f\n", forms.mean_ms, forms.p99_ms, forms.rps))
  io.write(string.format("%%.3f\n", forms["%(form)s"]))
end
"""

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


class Nginx(Service):
    """nginx from Debian's package, a prefork server: a master and 2 workers (as nobody)
    serving NGINX_FILES files of NGINX_FILE_KB KiB with sendfile, read from the page cache.
    SLI: wrk's throughput (one thread, 4 connections, 2 s of random files), the quietest form
    measured here, as for redis and postgres (`--spread 10` on the quiet system: rps cv 0.048,
    mean latency 0.17, p99 0.36; results/2026-12-04/nginx-spread.txt). The p99 of the first
    measurements (results/2026-12-01) wandered from 1.3 to 27 ms on a quiet system: every
    reference against it was noisy (cv 0.54 and 0.62) and every cell abstained."""

    kind, name, form = "nginx", "web", "rps"
    description = "nginx, a master and 2 workers on CPU %d" % SERVER_CPU
    stop_signal = signal.SIGQUIT
    CONF, conf_name = NGINX_CONF, "nginx.conf"
    TRUTHS = {
        "cache_dropper": (["kernel_block_io", "kernel_paging.file_fault.major"],
                          "the served files are dropped: they are read back from storage"),
        "io_hog": (["kernel_block_io"],
                   "the device busy: it slows the service only if its files are read from storage"),
        "mem_pressure": (["kernel_memory_pressure", "kernel_block_io", "kernel_paging.file_fault.major"],
                         "page cache reclaimed: the files come back from storage, or the service reclaims"),
    }

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        os.makedirs(os.path.join(dir, "www"))
        os.makedirs(os.path.join(dir, "tmp"))
        block = os.urandom(NGINX_FILE_KB * 1024)
        for i in range(NGINX_FILES):
            with open(self.file(i), "wb") as f:
                f.write(block[i:] + block[:i])
        self.conf = self.write(self.conf_name, self.CONF.format(dir=dir, port=port))
        self.lua = self.write("sli.lua", WRK_LUA % {"last": NGINX_FILES - 1, "form": self.form})

    def file(self, i):
        return os.path.join(self.dir, "www", "f%d.bin" % i)

    def start(self):
        self.spawn(["/usr/sbin/nginx", "-c", self.conf])
        self.wait_until(lambda: len(self.procs()) >= 3)

    def warm(self):
        """The served files back in the page cache: every run starts from the same service,
        whatever a perturber before evicted (cache_dropper and mem_pressure outlast their cells)."""
        read_back(self.file(i) for i in range(NGINX_FILES))

    def sli_argv(self):
        return ["/usr/bin/wrk", "-t1", "-c4", "-d2s", "-s", self.lua, "http://127.0.0.1:%d/" % self.port]

    def steady_argv(self):
        """The SLI's wrk, without an end: the steady load of a rated subclass (RatedService)."""
        return ["/usr/bin/wrk", "-t1", "-c4", "-d24h", "-s", self.lua, "http://127.0.0.1:%d/" % self.port]

    def traffic_argv(self, rate=200):
        """One connection, paced at rate requests a second."""
        code = ("import http.client,time,random\n"
                "c=http.client.HTTPConnection('127.0.0.1',%d)\n"
                "while True:\n"
                " t=time.monotonic()\n"
                " c.request('GET','/f%%d.bin'%%random.randrange(%d)); c.getresponse().read()\n"
                " time.sleep(max(0,%f-(time.monotonic()-t)))\n" % (self.port, NGINX_FILES, 1.0 / rate))
        return [sys.executable, "-c", code]


NGINX_STATUS_CONF = NGINX_CONF.replace(
    "root {dir}/www; }}",
    "root {dir}/www; location = /stub_status {{ stub_status; }} }}")

# The served requests' rate as Prometheus has it, over 2 s (wrk's SLI runs as long): the form,
# then the rate, last.
EXPORTER_RATE = r"""
import re, time, urllib.request
def total():
    text = urllib.request.urlopen("http://127.0.0.1:%(port)d/metrics", timeout=5).read().decode()
    return float(re.search(r"^%(metric)s (\S+)$", text, re.M).group(1))
t0, n0 = time.monotonic(), total()
time.sleep(2)
rate = (total() - n0) / (time.monotonic() - t0)
print("rps %%.1f" %% rate)
print("%%.1f" %% rate)
"""


class RatedService:
    """A service under a load that never stops (its steady_argv on the client CPU at the normal
    priority, from start to stop), its SLI the rate of the requests it served as a Prometheus
    exporter (exporter_argv, on the client CPU) counts them in `metric`, kind `rate`, so that
    argusd judges its paths per request. Truth: the same rate read from the exporter over 2 s
    (EXPORTER_RATE), quiet and in the cell, in pairs, as for every service. Mixed in before the
    service's class, whose server, truths and traffic it keeps."""

    metric = None

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        self.exporter_port = free_port()
        self.rate_helper = self.write("rate.py", EXPORTER_RATE % {"port": self.exporter_port,
                                                                  "metric": self.metric})
        self.exporter = self.steady = None

    def start(self):
        super().start()
        self.exporter = client_process(self.exporter_argv())
        self.steady = client_process(self.steady_argv())
        self.wait_until(self.exported)

    def exported(self):
        with contextlib.suppress(OSError, AttributeError, ValueError):
            return float(sli_output(self.sli_argv())[-1]) > 0
        return False

    def stop(self):
        for p in (self.steady, self.exporter):
            if p and p.poll() is None:
                p.terminate()
                p.wait()
        super().stop()

    def sli(self):
        return {"prometheus": {"url": "http://127.0.0.1:%d/metrics" % self.exporter_port,
                               "metric": self.metric, "kind": "rate"},
                "better": "higher", "unit": "req/s"}

    def sli_argv(self):
        return ["/usr/bin/python3", self.rate_helper]

    def truth_command(self):
        return self.sli_argv()


class NginxRate(RatedService, Nginx):
    """nginx as Nginx has it, under wrk (one thread and 4 connections, Nginx's files) from start
    to stop, its served rate as Debian's prometheus-nginx-exporter reads it from nginx's
    stub_status (`nginx_http_requests_total`). Stated before it ran, with nginx's truths: the
    first service judged per request, after per-request floors (9874990)."""

    kind = "nginx-rate"
    description = "nginx on CPU %d under a steady load, its served rate from Prometheus" % SERVER_CPU
    CONF, conf_name = NGINX_STATUS_CONF, "nginx.conf"
    metric = "nginx_http_requests_total"

    def exporter_argv(self):
        return ["/usr/bin/prometheus-nginx-exporter",
                "-nginx.scrape-uri", "http://127.0.0.1:%d/stub_status" % self.port,
                "-web.listen-address", "127.0.0.1:%d" % self.exporter_port]


APACHE_CONF = """
Listen 127.0.0.1:{port}
ServerName localhost
DefaultRuntimeDir {dir}/run
PidFile {dir}/run/apache2.pid
ErrorLog {dir}/error.log
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
User nobody
Group nogroup
StartServers 1
ServerLimit 1
ThreadsPerChild 8
MaxRequestWorkers 8
MinSpareThreads 1
MaxSpareThreads 8
EnableSendfile On
DocumentRoot {dir}/www
<Directory {dir}/www>
  Require all granted
</Directory>
"""


class Apache(Nginx):
    """Apache's httpd from Debian's package (apache2), the event MPM: a parent (root) and one
    child of 8 worker threads and a listener thread (as nobody), serving the same files as
    nginx with sendfile, read from the page cache: one process of threads, where nginx is
    processes. Held out: stated before it ran, with nginx's truths and wrk's requests; its
    SLI form the one `--spread 8` finds quietest on the quiet system, chosen before any cell
    runs."""

    kind, name, form = "apache", "httpd", "rps"   # --spread 8: rps cv 0.073, mean 0.15, p99 0.32
    description = "apache2 (event MPM), a parent and a child of 8 worker threads on CPU %d" % SERVER_CPU
    stop_signal = signal.SIGTERM
    CONF, conf_name = APACHE_CONF, "apache2.conf"

    def start(self):
        os.makedirs(os.path.join(self.dir, "run"), exist_ok=True)
        self.spawn(["/usr/sbin/apache2", "-f", self.conf, "-DFOREGROUND"])
        self.wait_until(lambda: len(self.procs()) >= 2 and self.accepts())


APACHE_STATUS_CONF = APACHE_CONF + """LoadModule status_module /usr/lib/apache2/modules/mod_status.so
ExtendedStatus On
<Location "/server-status">
  SetHandler server-status
</Location>
"""


class ApacheRate(RatedService, Apache):
    """apache2 as Apache has it, under wrk (one thread and 4 connections, nginx's files) from
    start to stop, its served rate as Debian's prometheus-apache-exporter reads it from
    mod_status (`apache_accesses_total`: every request, the exporter's own scrapes of
    /server-status among them). Held out: stated, with nginx's truths, before it first ran,
    beside redis-rate."""

    kind = "apache-rate"
    description = "apache2 (event MPM) on CPU %d under a steady load, its served rate from Prometheus" % SERVER_CPU
    CONF, conf_name = APACHE_STATUS_CONF, "apache2.conf"
    metric = "apache_accesses_total"

    def exporter_argv(self):
        return ["/usr/bin/prometheus-apache-exporter",
                "--scrape_uri=http://127.0.0.1:%d/server-status/?auto" % self.port,
                "--telemetry.address=127.0.0.1:%d" % self.exporter_port]


LIGHTTPD_CONF = """
server.document-root = "{dir}/www"
server.bind = "127.0.0.1"
server.port = {port}
server.username = "nobody"
server.groupname = "nogroup"
server.pid-file = "{dir}/run/lighttpd.pid"
server.errorlog = "{dir}/run/error.log"
server.network-backend = "sendfile"
server.max-connections = 256
server.modules = ( )
mimetype.assign = ( "" => "application/octet-stream" )
"""


class Lighttpd(Nginx):
    """lighttpd 1.4 from Debian's package, one process of one event loop (as nobody, after its
    start as root) serving nginx's files with sendfile, read from the page cache. Held out:
    stated before it ran, with nginx's truths and wrk's requests; its SLI form the one
    `--spread 8` finds quietest on the quiet system, chosen before any cell runs."""

    kind, name, form = "lighttpd", "files", "rps"
    description = "lighttpd, one process serving %d files of %d KiB, on CPU %d" % (NGINX_FILES, NGINX_FILE_KB,
                                                                                  SERVER_CPU)
    stop_signal = signal.SIGTERM
    CONF, conf_name = LIGHTTPD_CONF, "lighttpd.conf"

    def start(self):
        run = os.path.join(self.dir, "run")   # its log and pid file, written once it is nobody
        os.makedirs(run, exist_ok=True)
        shutil.chown(run, "nobody", "nogroup")
        self.spawn(["/usr/sbin/lighttpd", "-D", "-f", self.conf])
        self.wait_until(self.accepts)


REDIS_KEYS = 300000    # values of REDIS_VALUE_B bytes: about 330 MiB of memory with redis's own
REDIS_VALUE_B = 1000
REDIS_SLI_GETS = 40000

REDIS_CONF = """port %(port)d
bind 127.0.0.1
daemonize no
save ""
appendonly no
dir %(dir)s
"""

REDIS_SLI = r"""import csv, subprocess, sys
# %(requests)d %(test)s requests of random keys from 8 connections; the forms, then the %(form)s, last
out = subprocess.run(["/usr/bin/redis-benchmark", "-h", "127.0.0.1", "-p", "%(port)d", "-t", "%(test)s",
                      "-n", "%(requests)d", "-c", "8", "-r", "%(keys)d"%(value)s, "--csv"],
                     capture_output=True, text=True, check=True).stdout
row = dict(zip(*list(csv.reader(out.splitlines()))[-2:]))
forms = {"mean_ms": row["avg_latency_ms"], "p99_ms": row["p99_latency_ms"], "rps": row["rps"]}
print(" ".join("%%s %%s" %% f for f in forms.items()))
print(forms["%(form)s"])
"""


def resp(*args):
    """One command in redis's protocol."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


class Redis(Service):
    """redis-server from Debian's package, its own process (not the system's unit) with a
    config in the temporary directory and no persistence: one event loop and its background
    threads, REDIS_KEYS keys in anonymous memory. SLI: redis-benchmark's throughput (GETs a
    second, better higher) over REDIS_SLI_GETS GETs of random keys from 8 connections (under a
    second quiet), the quietest form and load measured here (10 runs of each load interleaved,
    beside other jobs: throughput cv 0.20 from 8 connections, 0.41 from 4, 0.38 from 1; the
    mean latency's 0.25, 0.81, 0.52, which redis-benchmark prints to the microsecond, 2% of it)."""

    kind, name, form = "redis", "cache", "rps"
    description = "redis-server, %d keys of %d bytes, on CPU %d" % (REDIS_KEYS, REDIS_VALUE_B,
                                                                     SERVER_CPU)
    TRUTHS = {
        "cache_dropper": (["kernel_paging.file_fault.major"],
                          "redis reads no file: its only page cache is its code, faulted back from "
                          "storage if dropped"),
        "io_hog": ([], "no persistence: redis does no block I/O, nothing of the device's is on its path"),
        "mem_pressure": (["kernel_memory_pressure", "kernel_paging.file_fault.major"],
                         "its data is anonymous and there is no swap: it can only reclaim when it "
                         "allocates, or fault its code back from storage"),
    }

    CONF, sli_test, sli_requests = REDIS_CONF, "get", REDIS_SLI_GETS

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        self.conf = self.write("redis.conf", self.CONF % {"port": port, "dir": dir})
        self.helper = self.write("sli.py", REDIS_SLI % {
            "port": port, "test": self.sli_test, "requests": self.sli_requests, "keys": REDIS_KEYS,
            "form": self.form,
            # a SET's value as large as the keys' (a GET reads what is there)
            "value": ', "-d", "%d"' % REDIS_VALUE_B if self.sli_test == "set" else ""})

    def cli(self, *args):
        """A redis-cli command's answer."""
        return subprocess.run(["/usr/bin/redis-cli", "-h", "127.0.0.1", "-p", str(self.port)] + list(args),
                              capture_output=True, text=True).stdout.strip()

    def start(self):
        self.spawn(["/usr/bin/redis-server", self.conf])
        self.wait_until(lambda: self.cli("ping") == "PONG")
        self.load()

    def load(self):
        """Keys key:%012d, the names redis-benchmark -r asks for, through redis-cli --pipe."""
        value = b"x" * REDIS_VALUE_B
        pipe = subprocess.Popen(["taskset", "-c", str(CLIENT_CPU), "/usr/bin/redis-cli", "-h", "127.0.0.1",
                                 "-p", str(self.port), "--pipe"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        for i in range(0, REDIS_KEYS, 1000):
            pipe.stdin.write(b"".join(resp(b"SET", b"key:%012d" % k, value)
                                      for k in range(i, min(i + 1000, REDIS_KEYS))))
        pipe.stdin.close()
        if pipe.wait() != 0:
            raise RuntimeError("redis-cli --pipe: exit %d" % pipe.returncode)
        keys = int(self.cli("dbsize"))
        if keys != REDIS_KEYS:
            raise RuntimeError("redis holds %d keys, not %d" % (keys, REDIS_KEYS))

    def traffic_argv(self):
        """One connection, a GET of one key and a 1 ms sleep, again and again (redis-cli -r -1 -i)."""
        return ["/usr/bin/redis-cli", "-h", "127.0.0.1", "-p", str(self.port), "-r", "-1", "-i", "0.001",
                "GET", "key:%012d" % 0]


class RedisRate(RatedService, Redis):
    """redis-server as Redis has it, under redis-benchmark's GETs of random keys from 8
    connections in a loop from start to stop (-l), its served rate as Debian's
    prometheus-redis-exporter reads it from INFO (`redis_commands_processed_total`: every
    command, the exporter's own few a scrape among them). Held out: stated, with redis's truths,
    before it first ran, after the per-request floors (9874990) and nginx-rate's run (28f56c9)."""

    kind = "redis-rate"
    description = "redis-server on CPU %d under a steady load, its served rate from Prometheus" % SERVER_CPU
    metric = "redis_commands_processed_total"

    def exporter_argv(self):
        return ["/usr/bin/prometheus-redis-exporter", "-redis.addr", "redis://127.0.0.1:%d" % self.port,
                "-web.listen-address", "127.0.0.1:%d" % self.exporter_port]

    def steady_argv(self):
        return ["/usr/bin/redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port), "-t", "get",
                "-n", "1000000", "-c", "8", "-r", str(REDIS_KEYS), "-l", "-q"]


REDIS_AOF_SLI_SETS = 20000  # SETs in the SLI's run: about 2 s quiet here, fsynced before their replies

REDIS_AOF_CONF = """port %(port)d
bind 127.0.0.1
daemonize no
save ""
appendonly yes
appendfsync always
auto-aof-rewrite-percentage 0
dir %(dir)s
"""


class RedisAof(Redis):
    """redis-server as Redis has it, every write appended to its file (appendonly) and fsynced
    before its reply (appendfsync always), on the host's ext4 under the temporary directory, the
    file never rewritten (a rewrite forks a child that writes it all again). SLI: redis-benchmark's
    throughput of SETs of REDIS_VALUE_B bytes over the same keys from 8 connections. Held out:
    stated, with its truths, before it first ran: the first service here whose requests write
    to storage and wait for it. Beside the I/O hog, which writes on the same device, each SET's
    fsync waits longer for the device: its truth is block I/O when the service moved storage in
    the cell's runs at all (STORAGE_MOVED), as it does in every run. Its form chosen by
    `--spread 8` on the quiet system before any cell ran."""

    kind, form = "redis-aof", "mean_ms"   # --spread 8: mean_ms cv 0.032, rps 0.034, p99 0.245
    description = "redis-server, %d keys of %d bytes, every SET fsynced, on CPU %d" % (
        REDIS_KEYS, REDIS_VALUE_B, SERVER_CPU)
    CONF, sli_test, sli_requests = REDIS_AOF_CONF, "set", REDIS_AOF_SLI_SETS
    TRUTHS = {
        **Redis.TRUTHS,
        "io_hog": (["kernel_block_io"],
                   "every SET is fsynced before its reply: the device busy with another's writes "
                   "holds each one longer"),
    }
    STORAGE_MOVED = frozenset({"io_hog"})


MEMCACHED_MB = 512     # memcached's memory for items
MEMCACHED_KEYS = 10000 # keys memcslap sets, then gets from each of its 8 threads

MEMCACHED_SLI = r"""import re, subprocess
# memcslap sets %(keys)d keys, then 8 threads (a connection each) get them all: the gets a
# second, last. memcslap prints no latency: the mean is the 8 connections over that rate (Little's
# law), and there is no p99.
out = subprocess.run(["/usr/bin/memcslap", "--servers=127.0.0.1:%(port)d", "--concurrency=8",
                      "--execute-number=%(keys)d", "--test=get"], capture_output=True, text=True,
                     check=True).stdout
m = re.search(r"Time to get\s+(\d+) keys by\s+(\d+) threads:\s+([0-9.]+) seconds", out)
rps = int(m.group(1)) / float(m.group(3))
forms = {"mean_ms": int(m.group(2)) / rps * 1000, "rps": rps}
print(" ".join("%%s %%.4f" %% f for f in forms.items()))
print("%%.4f" %% forms["%(form)s"])
"""


class Memcached(Service):
    """memcached 1.6 from Debian's package, its own server (not the system's unit), as nobody:
    one process of 2 worker threads and its own background threads, its items in MEMCACHED_MB
    MiB of anonymous memory, no persistence. SLI: memcslap's gets a second, 8 threads of a
    connection each getting the MEMCACHED_KEYS keys it set just before (memcaslap, whose
    threads spin, never ends under the client's real-time priority on one CPU). Held out: stated before it ran; a
    cache of threads where redis is one event loop; its truths are redis's (no file read, no
    block I/O, anonymous memory and no swap); its SLI form the one `--spread 8` finds
    quietest on the quiet system, chosen before any cell runs."""

    kind, name, form = "memcached", "kv", "rps"
    description = "memcached, 2 worker threads, %d MiB of items, on CPU %d" % (MEMCACHED_MB, SERVER_CPU)
    TRUTHS = Redis.TRUTHS

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        self.helper = self.write("sli.py", MEMCACHED_SLI % {"port": port, "keys": MEMCACHED_KEYS,
                                                            "form": self.form})

    def start(self):
        self.spawn(["/usr/bin/memcached", "-u", "nobody", "-l", "127.0.0.1", "-p", str(self.port),
                    "-U", "0", "-t", "2", "-m", str(MEMCACHED_MB)])
        self.wait_until(self.accepts)

    def traffic_argv(self):
        """One connection, a get of one key and a 5 ms sleep, again and again."""
        code = ("import socket,time\n"
                "s=socket.create_connection(('127.0.0.1',%d))\n"
                "while True:\n"
                " s.sendall(b'get k0\\r\\n')\n"
                " b=b''\n"
                " while not b.endswith(b'END\\r\\n'): b+=s.recv(4096)\n"
                " time.sleep(0.005)\n" % self.port)
        return [sys.executable, "-c", code]


PG_BIN = "/usr/lib/postgresql/15/bin"
PG_SCALE = 20          # pgbench's scale: 2 million accounts, about 300 MiB of tables and indexes
PG_SLI_S = 1           # the SLI's run: select-only transactions from 2 clients for a second

PG_SLI = r"""import glob, re, subprocess, sys, tempfile
# select-only transactions from 2 connections for %(secs)d s, each logged; the forms, then the %(form)s, last.
# The log is kept in memory: pgbench writes a line a transaction, and a write to a file system that
# a perturber fills with dirty pages waits for them, while replies to its other connection wait too.
with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
    out = subprocess.run(["%(bin)s/pgbench", "-h", "127.0.0.1", "-p", "%(port)d", "-U", "postgres"] + %(extra)r +
                         ["-n", "-S", "-c", "2", "-T", "%(secs)d", "-l", "--log-prefix", d + "/tx", "postgres"],
                         capture_output=True, text=True, check=True).stdout
    ms = sorted(int(line.split()[2]) / 1000 for log in glob.glob(d + "/tx.*") for line in open(log))
forms = {"mean_ms": sum(ms) / len(ms), "p99_ms": ms[int(0.99 * (len(ms) - 1))],
         "rps": float(re.search(r"tps = ([0-9.]+)", out).group(1))}
print(" ".join("%%s %%.4f" %% f for f in forms.items()))
print("%%.4f" %% forms["%(form)s"])
"""


class Postgres(Service):
    """PostgreSQL 15 from Debian's package: a private cluster (initdb as user postgres) whose
    postmaster, and every backend it forks, runs on SERVER_CPU; 16 MB of shared buffers over a
    pgbench database of scale PG_SCALE, so that its reads (pread, not faults) go through the
    page cache. SLI: pgbench select-only's mean latency from 2 connections over PG_SLI_S s, the
    quietest form and load measured here (8 runs of each interleaved: cv 0.076, as its
    throughput's; p99 0.50; from 1 connection 0.36; the mixed scripts, simple-update and
    tpcb-like, 0.16 and 0.12). The run is a fixed time, not a fixed count of transactions: under
    cache_dropper a count that took a second quiet outlasted the window plus 10 s that argusd
    gives an SLI command, and the job failed (sli_failed)."""

    kind, name = "postgres", "db"
    pgbench_extra = []   # pgbench's options beside the script's, for the SLI and the traffic
    description = "PostgreSQL 15, pgbench scale %d, 16 MB shared buffers, on CPU %d" % (PG_SCALE,
                                                                                       SERVER_CPU)
    stop_signal = signal.SIGINT   # a fast shutdown: the backends end, the postmaster last
    TRUTHS = {
        "cache_dropper": (["kernel_block_io"],
                          "its tables are read with pread through the page cache: after a drop the "
                          "reads wait for the device, outside faults"),
        "io_hog": (["kernel_block_io"],
                   "its reads that miss the page cache, and its WAL flushes, queue behind the hog's "
                   "writes on the same device"),
        "mem_pressure": (["kernel_memory_pressure", "kernel_block_io", "kernel_paging.file_fault.major"],
                         "the page cache holding its tables is reclaimed, so reads wait for the device; "
                         "or it reclaims when it allocates, or faults its code back from storage"),
    }

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        self.make_data("postgres", "postgres", "initdb.out",
                       [PG_BIN + "/initdb", "-D", self.data, "-A", "trust", "-U", "postgres"],
                       user="postgres", group="postgres", extra_groups=[])
        self.helper = self.write("sli.py", PG_SLI % {"bin": PG_BIN, "port": port, "secs": PG_SLI_S,
                                                     "form": self.form, "extra": self.pgbench_extra})

    def client(self, tool, *args):
        return [PG_BIN + "/" + tool, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"] + list(args)

    def start(self):
        self.spawn([PG_BIN + "/postgres", "-D", self.data, "-k", self.data, "-p", str(self.port),
                    "-c", "listen_addresses=127.0.0.1", "-c", "shared_buffers=16MB"], user="postgres")
        self.wait_until(lambda: subprocess.run(self.client("pg_isready", "-q")).returncode == 0)
        on_client(self.client("pgbench", "-i", "-q", "-s", str(PG_SCALE), "postgres"),
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def warm(self):
        """The database's files back in the page cache (the postgres database's directory and
        everything else under base/), whatever a perturber before evicted."""
        read_back(os.path.join(d, f) for d, _, files in os.walk(os.path.join(self.data, "base"))
                  for f in files)

    def traffic_argv(self):
        """One connection, select-only transactions paced at 200 a second (pgbench -R)."""
        return self.client("pgbench", *self.pgbench_extra, "-n", "-S", "-c", "1", "-R", "200", "-T",
                           "86400", "postgres")


class PostgresConnect(Postgres):
    """The same PostgreSQL, its clients connecting anew for every transaction (pgbench -C), as
    a web application without a connection pool does: postgres forks a backend for each, which
    ends with it, so that nearly all of the service's work is done by processes that end inside
    a window. A held-out service for argusd at aadd2d3 (a service's CPU-seconds count the
    processes that ended in the window), stated before it ran: its truths are Postgres's,
    measured the same way; its SLI form is the one `--spread 8` finds quietest on the quiet
    system, chosen before any cell runs."""

    kind = "postgres-connect"
    pgbench_extra = ["-C"]
    form = "rps"


MARIADB_TABLES = 4        # sysbench's tables of MARIADB_ROWS rows: about 230 MiB of InnoDB files
MARIADB_ROWS = 250000
MARIADB_SLI_S = 1         # the SLI's run: point selects from 2 connections for a second

MARIADB_SLI = r"""import re, subprocess, sys
# sysbench's point selects from 2 connections for %(secs)d s; the forms, then the %(form)s, last
out = subprocess.run(%(argv)r, capture_output=True, text=True, check=True).stdout
forms = {"mean_ms": float(re.search(r"avg:\s+([0-9.]+)", out).group(1)),
         "p99_ms": float(re.search(r"99th percentile:\s+([0-9.]+)", out).group(1)),
         "rps": float(re.search(r"transactions:\s+[0-9]+\s+\(([0-9.]+) per sec", out).group(1))}
print(" ".join("%%s %%.4f" %% f for f in forms.items()))
print("%%.4f" %% forms["%(form)s"])
"""


class Mariadb(Service):
    """MariaDB 10.11 from Debian's package (mariadb-server), its own server (not the system's
    unit) over a private data directory, as nobody: one process, a thread per connection and
    InnoDB's background threads. A 16 MiB buffer pool over sysbench's tables, InnoDB's files
    read and written through the page cache (innodb_flush_method = fsync), so that, as for
    postgres, its reads that miss the pool go through the page cache. SLI: sysbench's point
    selects from 2 connections over MARIADB_SLI_S s. Held out: stated before it ran, with
    postgres's truths (their reasons hold: reads through the page cache, a log flushed to the
    device); its SLI form the one `--spread 8` finds quietest on the quiet system, chosen before
    any cell runs (sysbench prints its latencies to a hundredth of a millisecond, about an
    eighth of a point select's here)."""

    kind, name, form = "mariadb", "sql", "rps"   # --spread 8: rps cv 0.014, mean 0.063, p99 0.022
    description = "MariaDB 10.11, sysbench's %d tables of %d rows, a 16 MiB buffer pool, on CPU %d" % (
        MARIADB_TABLES, MARIADB_ROWS, SERVER_CPU)
    TRUTHS = Postgres.TRUTHS

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        self.make_data("nobody", "nogroup", "install-db.out",
                       ["/usr/bin/mariadb-install-db", "--no-defaults", "--user=nobody",
                        "--datadir=" + self.data, "--auth-root-authentication-method=normal",
                        "--skip-test-db"])
        self.helper = self.write("sli.py", MARIADB_SLI % {
            "secs": MARIADB_SLI_S, "form": self.form,
            "argv": self.sysbench("--threads=2", "--time=%d" % MARIADB_SLI_S, "--percentile=99",
                                  "run")})

    def client(self, *args):
        return ["/usr/bin/mariadb", "--no-defaults", "-h", "127.0.0.1", "-P", str(self.port), "-u",
                "root"] + list(args)

    def sysbench(self, *args):
        return ["/usr/bin/sysbench", "oltp_point_select", "--db-driver=mysql", "--mysql-host=127.0.0.1",
                "--mysql-port=%d" % self.port, "--mysql-user=root", "--mysql-db=sbtest",
                "--tables=%d" % MARIADB_TABLES, "--table-size=%d" % MARIADB_ROWS] + list(args)

    def start(self):
        self.spawn(["/usr/sbin/mariadbd", "--no-defaults", "--user=nobody", "--datadir=" + self.data,
                    "--socket=" + os.path.join(self.data, "mariadb.sock"), "--port=%d" % self.port,
                    "--bind-address=127.0.0.1", "--innodb-buffer-pool-size=16M",
                    "--innodb-flush-method=fsync", "--pid-file=" + os.path.join(self.data, "mariadb.pid")])
        self.wait_until(lambda: subprocess.run(self.client("-e", "select 1"), stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL).returncode == 0)
        on_client(self.client("-e", "create database sbtest"))
        on_client(self.sysbench("--threads=2", "prepare"), stdout=subprocess.DEVNULL)

    def warm(self):
        """The database's files back in the page cache, whatever a perturber before evicted."""
        read_back(os.path.join(d, f) for d, _, files in os.walk(self.data) for f in files
                  if f.endswith(".ibd") or f.startswith("ib"))

    def traffic_argv(self):
        """Two connections of point selects paced at 200 transactions a second (sysbench --rate)."""
        return self.sysbench("--threads=2", "--rate=200", "--time=86400", "run")


UNBOUND_NAMES = 20000  # A records held in memory (local-data), each asked for in the SLI's runs
UNBOUND_SLI_S = 2      # the SLI's run: dnsperf's queries for 2 s

UNBOUND_CONF = """server:
  interface: 127.0.0.1
  port: {port}
  do-daemonize: no
  username: "nobody"
  chroot: ""
  directory: "{dir}"
  pidfile: "{dir}/unbound.pid"
  use-syslog: no
  logfile: ""
  num-threads: 2
  so-reuseport: yes
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  include: "{dir}/zone.conf"
remote-control:
  control-enable: no
"""

UNBOUND_SLI = r"""import subprocess
# dnsperf's queries over UDP from 4 clients for %(secs)d s, each query's latency printed (-v); the
# forms, then the %(form)s, last.
out = subprocess.run(["/usr/bin/dnsperf", "-s", "127.0.0.1", "-p", "%(port)d", "-d", "%(queries)s",
                      "-l", "%(secs)d", "-c", "4", "-v"], capture_output=True, text=True, check=True).stdout
ms, qps = [], None
for line in out.splitlines():
    if line.startswith("> NOERROR "):
        ms.append(float(line.split()[-1]) * 1000)
    elif line.strip().startswith("Queries per second:"):
        qps = float(line.split(":")[1])
if not ms or qps is None:
    raise SystemExit("dnsperf: no answers in its output")
ms.sort()
forms = {"mean_ms": sum(ms) / len(ms), "p99_ms": ms[int(0.99 * (len(ms) - 1))], "rps": qps}
print(" ".join("%%s %%.4f" %% f for f in forms.items()))
print("%%.4f" %% forms["%(form)s"])
"""


class Unbound(Service):
    """Unbound 1.17 from Debian's package, its own server (not the system's unit), as nobody:
    one process of 2 threads, each with its own UDP socket (so-reuseport), answering
    UNBOUND_NAMES A records of a local zone held in memory, no recursion. SLI: dnsperf's
    queries for the names in random order from 4 clients over UDP for UNBOUND_SLI_S s. Held
    out: stated before it ran; the first service here that serves datagrams, and whose threads
    wait for them in epoll. Its truths are redis's (no file read after start: its only page
    cache is its code and libraries); its SLI form the one `--spread 8` finds quietest on the
    quiet system, chosen before any cell runs."""

    kind, name, form = "unbound", "dns", "rps"
    description = "unbound, 2 threads answering %d names from memory, on CPU %d" % (UNBOUND_NAMES, SERVER_CPU)
    TRUTHS = {
        "cache_dropper": (["kernel_paging.file_fault.major"],
                          "unbound reads no file once started: its only page cache is its code, "
                          "faulted back from storage if dropped"),
        "io_hog": ([], "unbound does no block I/O: nothing of the device's is on its path"),
        "mem_pressure": (["kernel_memory_pressure", "kernel_paging.file_fault.major"],
                         "its records are anonymous memory and there is no swap: it can only reclaim "
                         "when it allocates, or fault its code back from storage"),
    }

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        names = list(range(UNBOUND_NAMES))
        self.write("zone.conf", 'local-zone: "argus.test." static\n' + "".join(
            'local-data: "h%d.argus.test. 300 IN A 10.%d.%d.%d"\n' % (i, i >> 16, (i >> 8) & 255, i & 255)
            for i in names))
        random.Random(UNBOUND_NAMES).shuffle(names)
        queries = self.write("queries", "".join("h%d.argus.test A\n" % i for i in names))
        self.conf = self.write("unbound.conf", UNBOUND_CONF.format(dir=dir, port=port))
        self.helper = self.write("sli.py", UNBOUND_SLI % {"port": port, "queries": queries,
                                                          "secs": UNBOUND_SLI_S, "form": self.form})

    def start(self):
        self.spawn(["/usr/sbin/unbound", "-d", "-c", self.conf])
        self.wait_until(lambda: subprocess.run(
            ["/usr/bin/dig", "+short", "+time=1", "+tries=1", "-p", str(self.port), "@127.0.0.1",
             "h1.argus.test"], capture_output=True, text=True).stdout.strip() == "10.0.0.1")

    def traffic_argv(self):
        """One client, its queries paced at 200 a second (dnsperf -Q)."""
        return ["/usr/bin/dnsperf", "-s", "127.0.0.1", "-p", str(self.port), "-d",
                os.path.join(self.dir, "queries"), "-c", "1", "-Q", "200", "-l", "86400"]


SLAPD_ENTRIES = 200000  # people under ou=people
SLAPD_SLI_S = 2         # the SLI's run: searches for 2 s

SLAPD_CONF = """include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile {data}/slapd.pid
argsfile {data}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
suffix "dc=argus,dc=test"
rootdn "cn=admin,dc=argus,dc=test"
directory {data}
maxsize 1073741824
index objectClass eq
index uid eq
"""

SLAPD_SLI = r"""import random, threading, time
import ldap
# base searches of random people from 2 connections (a thread each) for %(secs)d s; the forms,
# then the %(form)s, last. python-ldap lets go of the interpreter's lock while it waits for a reply.
ms = [[], []]
def client(out):
    c = ldap.initialize("ldap://127.0.0.1:%(port)d")
    c.protocol_version = 3
    c.simple_bind_s("", "")
    rnd, end = random.Random(), time.monotonic() + %(secs)d
    while True:
        t = time.monotonic()
        if t >= end:
            break
        r = c.search_s("uid=u%%d,ou=people,dc=argus,dc=test" %% rnd.randrange(%(entries)d),
                       ldap.SCOPE_BASE, "(objectClass=*)", ["mail"])
        if len(r) != 1:
            raise SystemExit("slapd: %%d entries for one uid" %% len(r))
        out.append((time.monotonic() - t) * 1000)
    c.unbind_s()
threads = [threading.Thread(target=client, args=(m,)) for m in ms]
for t in threads:
    t.start()
for t in threads:
    t.join()
all_ms = sorted(ms[0] + ms[1])
if len(ms[0]) == 0 or len(ms[1]) == 0:
    raise SystemExit("slapd: a connection got no answer")
forms = {"mean_ms": sum(all_ms) / len(all_ms), "p99_ms": all_ms[int(0.99 * (len(all_ms) - 1))],
         "rps": len(all_ms) / %(secs)d}
print(" ".join("%%s %%.4f" %% f for f in forms.items()))
print("%%.4f" %% forms["%(form)s"])
"""


class Slapd(Service):
    """OpenLDAP's slapd 2.5 from Debian's package, its own server (not the system's unit) over
    a private database, as nobody: one process of threads (its default pool), the database
    back-mdb, a memory map of its file (data.mdb, about 300 MiB: SLAPD_ENTRIES people), read by
    page faults, not by read calls. SLI: base searches of random people from 2 connections over
    SLAPD_SLI_S s (python3-ldap). Held out: stated, with its truths, before it first ran: the
    first service here whose data is a file it maps, so that what it reads from storage begins
    in a fault (named where it starts: a file fault with I/O, never block I/O alone). The page
    cache dropper drops only the file's pages the server has not mapped yet; the memory hog's
    reclaim takes mapped ones too. Its SLI form the one `--spread 8` finds quietest on the quiet
    system, chosen before any cell runs."""

    kind, name, form = "slapd", "ldap", "rps"   # --spread 8: rps cv 0.168, mean_ms 0.182, p99 0.205
    description = "slapd, back-mdb, %d entries in a memory-mapped file, on CPU %d" % (SLAPD_ENTRIES, SERVER_CPU)
    TRUTHS = {
        "cache_dropper": (["kernel_paging.file_fault.major"],
                          "its database is a map of its file: a search whose page was dropped faults "
                          "it back from storage"),
        "io_hog": (["kernel_paging.file_fault.major"],
                   "searches write nothing: the busy device is on their path only where a page of "
                   "the map faults back from storage"),
        "mem_pressure": (["kernel_memory_pressure", "kernel_paging.file_fault.major"],
                         "the map's pages are page cache, reclaimed under pressure and faulted back "
                         "from storage; or it reclaims when it allocates"),
    }

    def __init__(self, dir, port, cgroup_dir):
        super().__init__(dir, port, cgroup_dir)
        self.conf = self.write("slapd.conf", SLAPD_CONF.format(data=self.data))
        ldif = os.path.join(dir, "people.ldif")
        with open(ldif, "w") as f:
            f.write("dn: dc=argus,dc=test\nobjectClass: dcObject\nobjectClass: organization\n"
                    "dc: argus\no: argus\n\n"
                    "dn: ou=people,dc=argus,dc=test\nobjectClass: organizationalUnit\nou: people\n\n")
            filler = "x" * 300
            for i in range(SLAPD_ENTRIES):
                f.write("dn: uid=u%d,ou=people,dc=argus,dc=test\nobjectClass: inetOrgPerson\n"
                        "uid: u%d\ncn: Person %d\nsn: %d\nmail: u%d@argus.test\n"
                        "description: %d %s\n\n" % (i, i, i, i, i, i, filler))
        os.chmod(ldif, 0o644)
        self.make_data("nobody", "nogroup", "slapadd.out",
                       ["/usr/sbin/slapadd", "-q", "-f", self.conf, "-l", ldif],
                       user="nobody", group="nogroup", extra_groups=[])
        os.unlink(ldif)
        self.helper = self.write("sli.py", SLAPD_SLI % {"port": port, "secs": SLAPD_SLI_S,
                                                        "entries": SLAPD_ENTRIES, "form": self.form})

    def start(self):
        # -d 0: in the foreground, logging nothing
        self.spawn(["/usr/sbin/slapd", "-d", "0", "-f", self.conf, "-h", "ldap://127.0.0.1:%d/" % self.port,
                    "-u", "nobody", "-g", "nogroup"])
        self.wait_until(lambda: self.accepts() and subprocess.run(
            ["/usr/bin/python3", "-c", "import ldap; c = ldap.initialize('ldap://127.0.0.1:%d'); "
             "c.search_s('uid=u1,ou=people,dc=argus,dc=test', ldap.SCOPE_BASE)" % self.port],
            capture_output=True).returncode == 0)

    def warm(self):
        """The map's file back in the page cache, whatever a perturber before evicted: its data,
        not the holes of the sparse file that maxsize reserves."""
        with open(os.path.join(self.data, "data.mdb"), "rb") as f:
            at = 0
            while True:
                try:
                    at = os.lseek(f.fileno(), at, os.SEEK_DATA)
                except OSError:   # ENXIO: no data after at
                    break
                hole = os.lseek(f.fileno(), at, os.SEEK_HOLE)
                f.seek(at)
                while at < hole:
                    at += len(f.read(min(1 << 20, hole - at))) or hole - at

    def traffic_argv(self):
        """One connection, a base search of one person and a 5 ms sleep, again and again."""
        code = ("import ldap,time\n"
                "c=ldap.initialize('ldap://127.0.0.1:%d')\n"
                "while True:\n"
                " c.search_s('uid=u0,ou=people,dc=argus,dc=test',ldap.SCOPE_BASE,'(objectClass=*)',['mail'])\n"
                " time.sleep(0.005)\n" % self.port)
        return [sys.executable, "-c", code]


SERVICES = {s.kind: s for s in (Nginx, NginxRate, Apache, ApacheRate, Lighttpd, Redis, RedisRate, RedisAof, Memcached, Postgres, PostgresConnect, Mariadb, Unbound, Slapd)}


class Traffic:
    """More requests at the same cost each: the service's paced client on the client CPU."""

    def __init__(self, argv):
        self.proc = client_process(argv)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class CellRunner:
    """Runs a function in a cell: the service warmed, then the cell's perturber started and
    ready and its extra traffic on, all stopped after."""

    def __init__(self, build, service, logdir):
        self.build, self.svc, self.logdir = build, service, logdir
        truth = evallib.load_truth(os.path.join(evallib.SRC, "bench", "eval", "truth.json"))
        self.specs = truth["perturbers"]

    def run(self, cell, fn):
        perturber, traffic = CELLS[cell]
        self.svc.warm()
        p = t = None
        try:
            if perturber:
                p = evallib.Perturber(self.build, perturber, self.specs[perturber], self.logdir)
                p.start()
            if traffic:
                t = Traffic(self.svc.traffic_argv())
                time.sleep(1)
            return fn()
        finally:
            if t:
                t.stop()
            if p:
                p.stop()


def sli_output(cmd):
    """The SLI command's output lines, as argusd would take them but without argusd."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=30)
    return out.stdout.strip().splitlines()


def sli_alone(cmd):
    return float(sli_output(cmd)[-1])


def worse_by(vals, base, better):
    """How much worse vals' median is than base's, as argusd's gate has it: a latency's rise, a
    throughput's fall, relative to the quiet median."""
    v, b = evallib.median(vals), evallib.median(base)
    return (v - b) / b if better == "lower" else (b - v) / b


# Paths that are the service's own storage I/O: a cell whose truth names only these holds only
# when the service read or wrote at least STORAGE_MIN_B more storage in the cell's SLI runs than
# in the quiet ones (the median run's, from /proc/PID/io). A perturber that slows the service
# some other way (the io_hog shares the client's CPU; the host's own I/O) leaves it a null cell.
STORAGE_PATHS = {"kernel_block_io", "kernel_paging.file_fault.major"}
STORAGE_MIN_B = 1 << 20


def storage_bytes(svc):
    """The bytes the service's processes, and the children they waited for, have read from and
    written to storage (read_bytes + write_bytes - cancelled_write_bytes of /proc/PID/io)."""
    total = 0
    for pid in svc.procs():
        try:
            with open("/proc/%d/io" % pid) as f:
                io = dict(line.split(": ", 1) for line in f.read().splitlines())
            total += int(io["read_bytes"]) + int(io["write_bytes"]) - int(io["cancelled_write_bytes"])
        except (OSError, KeyError, ValueError):
            pass   # gone meanwhile: its parent, when in the service, has its bytes once it reaps it
    return total


def sli_and_storage(svc, cmd):
    """(the SLI's value, the storage bytes the service moved while it ran)."""
    before = storage_bytes(svc)
    value = sli_alone(cmd)
    return value, max(0, storage_bytes(svc) - before)


def pair(quiet, cell, when):
    """One quiet SLI run beside one in the cell, (value, storage bytes) each, measured minutes
    apart at most: how much worse the cell's is, as argusd's gate has it."""
    return {"when": when, "quiet": quiet[0], "cell": cell[0], "quiet_storage_bytes": quiet[1],
            "cell_storage_bytes": cell[1]}


def measure_pairs(runner, svc, cells, reps):
    """Per cell, reps pairs of SLI runs without argusd, quiet then in the cell, before any
    diagnosis: half of each cell's truth (diagnose_cells measures the other half beside its
    diagnoses)."""
    cmd = svc.truth_command()
    pairs = {}
    for c in cells:
        pairs[c] = []
        for _ in range(reps):
            q = runner.run("none", lambda: sli_and_storage(svc, cmd))
            v = runner.run(c, lambda: sli_and_storage(svc, cmd))
            pairs[c].append(pair(q, v, "before"))
            print("truth %-14s pair %d: %s %.4g quiet, %.4g in the cell" % (
                c, len(pairs[c]), svc.form, q[0], v[0]), flush=True)
    return pairs


def judge_truth(svc, cell, pairs):
    """The cell's truth from all its pairs: how much worse each pair's cell run is than its
    quiet run beside it, the median of those (a drift of the machine over minutes moves both
    runs of a pair alike); a null cell when that is under MIN_SLOWER or the cell's truth names
    no path; storage-only truths hold only when the service moved STORAGE_MIN_B more storage in
    the cell's runs than in their quiet ones (the median pair's difference), or, in a cell of
    the service's STORAGE_MOVED, that much in the cell's runs (the median pair's)."""
    better = svc.sli()["better"]
    worse = [worse_by([p["cell"]], [p["quiet"]], better) for p in pairs]
    slower = evallib.median(worse)
    storage = evallib.median([p["cell_storage_bytes"] - p["quiet_storage_bytes"] for p in pairs])
    moved = evallib.median([p["cell_storage_bytes"] for p in pairs])
    truths, why = svc.truths(cell)
    held, how = ((moved, "of storage in the cell's runs") if cell in svc.STORAGE_MOVED else
                 (storage, "more storage in the cell's runs than in the quiet ones beside them"))
    if truths and set(truths) <= STORAGE_PATHS and held < STORAGE_MIN_B:
        why = "%s; but the service moved %.1f MiB %s: not its storage I/O" % (why, held / 2**20, how)
        truths = []
    return {"pairs": pairs, "worse": worse, "slower": slower, "storage_bytes": storage,
            "truths": truths, "why": why, "null": slower < MIN_SLOWER or not truths}


def define_service(dir, svc, cg_path):
    """The service's definition file for argusd, in dir/services."""
    service = {"name": svc.name, "cgroup": cg_path, "window_s": svc.window_s, "user": "root",
               "sli": svc.sli(), "description": svc.description}
    os.makedirs(os.path.join(dir, "services"))
    with open(os.path.join(dir, "services", svc.name + ".json"), "w") as f:
        json.dump(service, f)
    return service


def record_reference(argusd, svc, out):
    """The service's reference, recorded; the reference as argusd serves it (its runs' vectors,
    each with its SLI) gzipped in out/reference.json.gz, so that a run judged against a
    reference recorded slow or fast can be read against the runs it was made of."""
    svc.warm()
    job, secs = argusd.follow(argusd.submit("/references", {"service": svc.name}))
    if job["state"] != "succeeded":
        raise RuntimeError("reference: %s" % json.dumps(job.get("error")))
    res = job["result"]
    print("reference %d in %.0f s (SLI cv %.2f)" % (res["reference"], secs, res.get("sli_cv") or 0),
          flush=True)
    st, ref = argusd.call("GET", "/references/%d" % res["reference"])
    with gzip.open(os.path.join(out, "reference.json.gz"), "wt") as f:
        json.dump(ref if st == 200 else {"status": st, "body": ref}, f)
    return {"id": res["reference"], "seconds": secs, "sli_cv": res.get("sli_cv"),
            "warnings": res.get("warnings")}


def save_trace(argusd, job_id, path):
    """The job's trace, as argusd serves it, gzipped at path: what each level measured and why."""
    st, trace = argusd.call("GET", "/jobs/%d/trace" % job_id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(trace if st == 200 else {"status": st, "body": trace}, f)


def diagnose_cells(runner, argusd, svc, pairs, reps, out):
    """Each cell's diagnoses, reps of them, each between two pairs of SLI runs without argusd
    (quiet, then in the same perturber's run the cell's SLI, argusd's diagnosis, the cell's SLI
    again, then quiet): the truth's other half, measured in the same minutes as argusd's
    windows. Scored once the cell's truth is known, from all its pairs."""
    cmd = svc.truth_command()
    cells, truth = {}, {}

    def sli_run():
        return sli_and_storage(svc, cmd)

    def in_cell():
        before = sli_run()
        job, secs = argusd.follow(argusd.submit("/diagnose", {"service": svc.name}))
        return before, job, secs, sli_run()

    for c in pairs:
        runs = []
        for rep in range(reps):
            q1 = runner.run("none", sli_run)
            v1, job, secs, v2 = runner.run(c, in_cell)
            q2 = runner.run("none", sli_run)
            pairs[c] += [pair(q1, v1, "diagnosis %d" % (rep + 1)), pair(q2, v2, "diagnosis %d" % (rep + 1))]
            res = job.get("result") or {}
            save_trace(argusd, job["id"], os.path.join(out, "traces", "%s-%d.json.gz" % (c, rep + 1)))
            runs.append({"job": job["id"], "state": job["state"], "verdict": res.get("verdict"),
                         "path": res.get("path"), "reason_code": res.get("reason_code"),
                         "summary": res.get("summary"), "error": job.get("error"), "seconds": secs,
                         "host_pace": res.get("host_pace")})
            named = "/".join(res.get("path") or []) or res.get("reason_code") or ""
            print("%-14s rep %d: %s %s; beside it %s %.4g, %.4g in the cell vs %.4g, %.4g quiet" % (
                c, rep + 1, res.get("verdict"), named, svc.form, v1[0], v2[0], q1[0], q2[0]), flush=True)
        truth[c] = t = judge_truth(svc, c, pairs[c])
        truths = [] if t["null"] else t["truths"]
        for r in runs:
            r["outcome"] = evallib.score(truths, r["state"], r["verdict"], r["path"])[0]
        cells[c] = {"truths": truths, "runs": runs}
        print("truth %-14s %+.0f%% worse (median of %d pairs: %s); storage %+.1f MiB: %s; %s" % (
            c, t["slower"] * 100, len(t["worse"]), " ".join("%+.0f%%" % (w * 100) for w in t["worse"]),
            t["storage_bytes"] / 2**20, "null" if t["null"] else "/".join(truths),
            " ".join(r["outcome"] for r in runs)), flush=True)
    return cells, truth


def evaluate(a, svc, cg_path, top, out):
    """argusd's reference, the truth's first pairs, then the diagnoses with the pairs beside
    them; services.json in out, also on a failure."""
    results = {"kind": svc.kind, "cells": {}, "truth": {}, "service": None, "reference": None,
               "min_slower": MIN_SLOWER, "reps": a.reps,
               "syscall_events": a.syscall_events or "argusd's default"}
    runner = CellRunner(os.path.abspath(a.build), svc, out)
    argusd = None
    try:
        results["service"] = define_service(os.path.join(top, "argusd"), svc, cg_path)
        extra = "services_dir = %s/argusd/services\n" % top
        if a.syscall_events:
            extra += "syscall_events = %s\n" % a.syscall_events
        argusd = Argusd(os.path.abspath(a.build), os.path.join(top, "argusd"), extra=extra)
        # first, as its user would: on the quiet service, before any perturber has run
        results["reference"] = record_reference(argusd, svc, out)
        pairs = measure_pairs(runner, svc, a.cells, a.reps)
        results["truth"] = pairs
        results["cells"], results["truth"] = diagnose_cells(runner, argusd, svc, pairs, a.reps, out)
    finally:
        if argusd:
            argusd.stop()
        with open(os.path.join(out, "services.json"), "w") as f:
            json.dump(results, f, indent=1)
        print("results: %s" % os.path.join(out, "services.json"))


def report_spread(svc, n):
    """The SLI command n times on the quiet system: each form's values and their coefficient of variation."""
    runs = []
    for _ in range(n):
        svc.warm()
        words = sli_output(svc.truth_command())[-2].split()
        runs.append(dict(zip(words[::2], map(float, words[1::2]))))
    for form in FORMS:
        vals = [r[form] for r in runs if form in r]
        if not vals:
            print("%-8s not printed by this SLI command" % form)
            continue
        print("%-8s cv %.3f  median %.4g  %s" % (form, statistics.pstdev(vals) / statistics.mean(vals),
                                                 evallib.median(vals), " ".join("%.4g" % v for v in vals)))


@contextlib.contextmanager
def running_service(kind, top):
    """The service started in a cgroup of its own, the host's reclaim held; (service, cgroup
    path). Afterwards the service is stopped by its pid and the cgroup removed."""
    cg_path = "/argus-eval-%s-%d" % (kind, os.getpid())
    cg_dir = cgroup_root() + cg_path
    os.mkdir(cg_dir)
    held = evallib.hold_host_reclaim()
    svc = None
    try:
        svc = SERVICES[kind](os.path.join(top, kind), free_port(), cg_dir)
        svc.start()
        yield svc, cg_path
    finally:
        if svc:
            svc.stop()
        evallib.release_host_reclaim(held)
        for _ in range(50):
            try:
                os.rmdir(cg_dir)
                break
            except OSError:
                time.sleep(0.1)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--service", choices=list(SERVICES), default="nginx")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--syscall-events", choices=("calls", "raw", "none"), default=None,
                    help="argusd's syscall_events for the whole run (default: argusd's own)")
    ap.add_argument("--spread", type=int, default=0, metavar="N",
                    help="only run the SLI N times on the quiet system and print each form's spread")
    a = ap.parse_args()
    a.cells = [c.strip() for c in a.cells.split(",") if c.strip()]
    for c in a.cells:
        if c not in CELLS:
            ap.error("unknown cell %s (cells: %s)" % (c, ", ".join(CELLS)))
    return a


def main():
    a = parse_args()
    top = tempfile.mkdtemp(prefix="argus-eval-services-")
    os.chmod(top, 0o755)
    out = a.out or os.path.join(top, "out")
    os.makedirs(out, exist_ok=True)
    try:
        with running_service(a.service, top) as (svc, cg_path):
            if a.spread:
                report_spread(svc, a.spread)
            else:
                evaluate(a, svc, cg_path, top, out)
    finally:
        if a.out or a.spread:
            shutil.rmtree(top, True)
        else:
            for name in os.listdir(top):
                if name != "out":
                    shutil.rmtree(os.path.join(top, name), True)


if __name__ == "__main__":
    main()
