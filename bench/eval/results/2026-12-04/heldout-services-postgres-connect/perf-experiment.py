import os, sys, subprocess, time, tempfile, shutil
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'bench', 'eval'))
import services, evallib
top = tempfile.mkdtemp(prefix="argus-pgperf-"); os.chmod(top, 0o755)
try:
    with services.running_service("postgres-connect", top) as (svc, cg):
        svc.warm()
        sli = svc.sli()["command"]
        def rec(tag):
            p = subprocess.Popen(["perf", "record", "-C", "0", "-g", "-o", "/tmp/perf-%s.data" % tag, "--", "sleep", "4"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            t = subprocess.Popen(svc.traffic_argv()[:0] + ["taskset", "-c", "1"] + svc.client("pgbench", "-C", "-n", "-S", "-c", "2", "-T", "3", "postgres"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            out = t.communicate()[0]; p.wait()
            print(tag, [l for l in out.splitlines() if "tps" in l], flush=True)
        rec("quiet")
        pert = evallib.Perturber(os.path.join(REPO, 'build'), "mem_pressure", {"program": "mem_pressure", "cpu": 1}, top)
        pert.start()
        try:
            rec("mem")
        finally:
            pert.stop()
finally:
    shutil.rmtree(top, True)
