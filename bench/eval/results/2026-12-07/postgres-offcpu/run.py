import os, sys, subprocess, time, tempfile, shutil
sys.path.insert(0, "/work/main/bench/eval")
import services, evallib
top = tempfile.mkdtemp(prefix="pgx-"); os.chmod(top, 0o755)
out = sys.argv[1]
try:
    with services.running_service("postgres", top) as (svc, cg):
        runner = services.CellRunner("/work/main/build", svc, top)
        cmd = svc.sli()["command"]
        for cell in ("none", "cache_dropper"):
            def fn():
                bt = subprocess.Popen(["bpftrace", "/tmp/pgx/offcpu.bt"], stdout=open(os.path.join(out, cell + ".txt"), "w"), stderr=subprocess.STDOUT)
                time.sleep(2.0)
                v = [services.sli_alone(cmd) for _ in range(2)]
                bt.wait()
                return v
            print(cell, runner.run(cell, fn), flush=True)
finally:
    shutil.rmtree(top, True)
