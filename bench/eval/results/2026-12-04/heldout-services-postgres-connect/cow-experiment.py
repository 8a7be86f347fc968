# python3 cow-experiment.py [BUILD [file]]: the copy-on-write loop (./cow [file]) quiet and beside BUILD's mem_pressure
import subprocess, time, sys, os
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..', '..'))
BUILD = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else os.path.join(REPO, 'build')
COW = [os.path.join(HERE, 'cow')] + sys.argv[2:3]
sys.path.insert(0, os.path.join(REPO, 'bench', 'eval'))
import evallib
held = evallib.hold_host_reclaim()
try:
    print("quiet:", subprocess.run(["taskset","-c","0",*COW],capture_output=True,text=True).stdout.strip(), flush=True)
    p = subprocess.Popen([os.path.join(BUILD, "bench", "perturbers", "mem_pressure"),"--cpu","1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout:
        if "ready" in line: break
    time.sleep(2)
    print("mem_pressure:", subprocess.run(["taskset","-c","0",*COW],capture_output=True,text=True).stdout.strip(), flush=True)
    print("mem_pressure:", subprocess.run(["taskset","-c","0",*COW],capture_output=True,text=True).stdout.strip(), flush=True)
    p.terminate(); p.wait()
    time.sleep(3)
    print("quiet after:", subprocess.run(["taskset","-c","0",*COW],capture_output=True,text=True).stdout.strip(), flush=True)
finally:
    evallib.release_host_reclaim(held)
