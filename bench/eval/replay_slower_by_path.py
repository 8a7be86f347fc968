#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replay the level-1 rule "slower by a path" on committed matrix results.

A level-1 abstention of a calibrated run is flipped by the rule when the run
was more than min_slowdown slower than the reference's wall centre and a
flagged time metric of the level grew by at least min_slowdown of that
centre (daemon/calibrate.c, slower_by_path). The results keep each level's
wall score and flagged metrics, not the expected value from the rest of the
run, so the growth here is value - reference: the replay errs towards
flipping. Prints every flipped run with its truth, then the totals.

Usage: replay_slower_by_path.py [results.json ...]
(default: every results.json under bench/eval/results)
"""
import glob
import json
import os
import sys

MIN_SLOWDOWN = 0.10


def flipped(level):
    w = level.get('wall')
    if not w or level.get('action') != 'abstain' or not w.get('reference'):
        return None
    rel = (w['value'] - w['reference']) / w['reference']
    if rel <= MIN_SLOWDOWN:
        return None
    best = None
    for s in level.get('flagged', []):
        if not s['metric'].endswith('/time_ns'):
            continue
        share = (s['value'] - s['reference']) / w['reference']
        if share >= MIN_SLOWDOWN and (best is None or share > best[1]):
            best = (s['metric'], share)
    return (rel, best) if best else None


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')
    files = argv or sorted(glob.glob(os.path.join(root, '**', 'results.json'), recursive=True))
    seen = flips = null_flips = 0
    for f in files:
        try:
            runs = json.load(open(f)).get('runs', [])
        except (OSError, ValueError, AttributeError):
            continue
        for r in runs:
            if r.get('mode') != 'calibrated' or not r.get('levels'):
                continue
            level = r['levels'][0]
            if level.get('action') != 'abstain' or not level.get('wall'):
                continue
            seen += 1
            hit = flipped(level)
            if not hit:
                continue
            flips += 1
            truth = r.get('truth')
            null = truth in ('no_bottleneck', None) or truth == []
            null_flips += null
            print('%s  %s rep %s: truth %s, %s; %+.0f%% slower, %s grew by %.0f%% of the wall' %
                  (os.path.relpath(f, root), r.get('cell'), r.get('rep'), json.dumps(truth),
                   r.get('reason_code'), hit[0] * 100, hit[1][0], hit[1][1] * 100))
    print('%d level-1 abstentions of calibrated runs in %d files: %d flipped, %d of them null runs'
          % (seen, len(files), flips, null_flips))


if __name__ == '__main__':
    main(sys.argv[1:])
