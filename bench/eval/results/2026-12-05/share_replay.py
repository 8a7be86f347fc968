#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Replays the services' share rule (ca1ae9a) on stored traces: for each decision that named a
node while the SLI was worse, the named node's time delta per CPU-second over rel x 1 s, rel being
the SLI cost's relative change (a latency: now / before - 1; a throughput: before / now - 1).
Prints, per run: directory, cell, rep, outcome, verdict, node, then (node, share, rel) per decision.

    share_replay.py SERVICES_RESULT_DIR...
"""
import json,gzip,sys,glob,os
def rel_of(s):
    c,v=s['reference'],s['value']
    if c==0 or v==0: return None
    return v/c-1 if c>0 else c/v-1
for dirn in sys.argv[1:]:
    sj=json.load(open(os.path.join(dirn,'services.json')))
    unit_rate = 'prometheus' in json.dumps(sj['service'].get('sli',{})) and 'rate' in json.dumps(sj['service'].get('sli',{}))
    for cell,c in sj['cells'].items():
        for i,run in enumerate(c['runs'],1):
            p=os.path.join(dirn,'traces',f'{cell}-{i}.json.gz')
            if not os.path.exists(p): continue
            d=json.load(gzip.open(p))
            vecs=[v['vector'] for v in d['vectors'] if v['kind']=='pmv']
            shares=[]; vi=0
            for e in d['steps']:
                if e.get('kind')!='decision': continue
                node=e.get('node')
                sli=[s for s in e['scores'] if s['metric']=='target/sli_cost']
                if not node or not sli or not sli[0]['flagged'] or e['action'] not in ('commit','descend'): continue
                t=[s for s in e['scores'] if s['metric']==node+'/time_ns']
                r=rel_of(sli[0])
                if not t or not r: shares.append((node,None)); continue
                denom=r*1e9  # CPU-second unit: a CPU-second of the service per unit
                shares.append((node.split('.')[-1], round(t[0]['delta']/denom,3), round(r,3)))
            print(os.path.basename(dirn), cell, i, run['outcome'], run['verdict'], '.'.join(run['path'][-1:]), shares)
