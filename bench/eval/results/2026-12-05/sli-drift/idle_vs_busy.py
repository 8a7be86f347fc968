#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The SLI after an idle pause against the SLI right after another SLI run, alternated.
import os, sys, time, tempfile, statistics
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
import services, evallib
kind, n = sys.argv[1], int(sys.argv[2])
top = tempfile.mkdtemp(prefix="argus-idle-"); os.chmod(top, 0o755)
with services.running_service(kind, top) as (svc, cg):
    cmd = svc.sli()["command"]
    svc.warm(); services.sli_alone(cmd)
    idle, busy = [], []
    for i in range(n):
        time.sleep(2.0)
        idle.append(services.sli_alone(cmd))
        busy.append(services.sli_alone(cmd))
        print("pair %d: after 2 s idle %.4g, right after %.4g" % (i + 1, idle[-1], busy[-1]), flush=True)
    print("%s: median after idle %.4g, right after %.4g, ratio %.3f" % (
        kind, statistics.median(idle), statistics.median(busy), statistics.median(idle) / statistics.median(busy)))
