#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# nginx's SLI without argusd, with argusd idle, after a reference, and without argusd again.
import os, sys, time, tempfile, statistics
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
import services
from matrix import Argusd
kind, n = sys.argv[1], int(sys.argv[2])
top = tempfile.mkdtemp(prefix="argus-idle2-"); os.chmod(top, 0o755)
def runs(label, svc, cmd):
    v = []
    for _ in range(n):
        svc.warm(); v.append(services.sli_alone(cmd))
    print("%-28s median %.4g  %s" % (label, statistics.median(v), " ".join("%.4g" % x for x in v)), flush=True)
with services.running_service(kind, top) as (svc, cg):
    cmd = svc.sli()["command"]
    svc.warm(); services.sli_alone(cmd)
    runs("no argusd", svc, cmd)
    services.define_service(os.path.join(top, "argusd"), svc, cg)
    d = Argusd(os.path.abspath("build"), os.path.join(top, "argusd"),
               extra="services_dir = %s/argusd/services\n" % top)
    try:
        runs("argusd idle", svc, cmd)
        ref = services.record_reference(d, svc)
        runs("argusd after a reference", svc, cmd)
    finally:
        d.stop()
    runs("no argusd again", svc, cmd)
