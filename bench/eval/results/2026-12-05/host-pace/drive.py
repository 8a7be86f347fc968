import subprocess, time, os, resource, sys
end = time.time() + float(sys.argv[1])
out = open(sys.argv[2], "w")
def run(argv):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    w = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
def canary(cpu):
    o = subprocess.run(["taskset", "-c", str(cpu), "./canary", "100"], capture_output=True, text=True, check=True).stdout.split()
    return o
def steal():
    f = open("/proc/stat").readline().split()
    return int(f[8])
while time.time() < end:
    s0 = steal()
    c0 = canary(0); c1 = subprocess.run(["taskset","-c","0","./canary2","16","10","100000"],capture_output=True,text=True,check=True).stdout.split()[:3] + subprocess.run(["taskset","-c","0","./canary2","1","10","100000"],capture_output=True,text=True,check=True).stdout.split()[:2]
    mw, mc = run(["taskset", "-c", "0", "m4", "calls.m4"])
    gw, gc = run(["taskset", "-c", "0", "gzip", "-6", "-c", "text.b64"])
    c0b = canary(0)
    print(time.strftime("%H:%M:%S"), " ".join(c0), " ".join(c1), "%.4f %.4f %.4f %.4f" % (mw, mc, gw, gc), " ".join(c0b), steal() - s0, file=out, flush=True)
    time.sleep(2)
