#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replay the level-1 rule "slower by a path" on committed matrix and services results.

A level-1 abstention of a calibrated run is flipped by the rule when the run
was more than min_slowdown slower than the reference's wall centre and a
flagged time metric of the level grew by at least min_slowdown of that
centre (daemon/calibrate.c, slower_by_path). The results keep each level's
wall score and flagged metrics, not the expected value from the rest of the
run, so the growth here is value - reference: the replay errs towards
flipping. Prints every flipped run with its truth, then the totals.

A service's level-1 abstention (services.py's traces: each decision's
scores) is flipped when its SLI was more than min_slowdown worse and a
flagged time metric grew by at least what the worse SLI cost it at the
least (daemon/calibrate.c, sli_loss): the SLI's change in cost times the
service's CPU time per unit of work, one CPU-second for a command's SLI
(services.py's SLIs are all commands), which the traces do not keep.

With --cpu-time, the variant that was considered and not adopted: a run not
more than min_slowdown slower whose wall time less the change of its CPU time
(perf/task_clock_ns, means as the results keep them) is, with a flagged time
metric grown by min_slowdown of the centre, is flipped too: a faster CPU in the
run than in the reference would hide the loss. Prints those runs, then the
totals.

With --fast-centre, another variant, considered and not adopted (see its totals): the wall
time's centre is the mean of the faster half of the reference's runs (results.json keeps each
reference's wall times), as if the faster runs were the host's usual speed and the slower ones a
disturbance; a level-1 abstention more than min_slowdown slower than that centre, with a flagged
time metric grown by min_slowdown of it, is flipped. Prints those runs, then the totals.

With --pooled, a third variant, considered and not adopted: a diagnosis that abstained
`transient` (or `reference_noisy`) after level 1, because a deeper level's run did not show the
slowdown again, would instead judge the slowdown on the mean of every run of the diagnosis (each
level attaches the same programs, so each run's wall time or SLI is a sample of the same thing):
flipped when that mean is more than min_slowdown slower and more than tau of the reference's
spreads over the square root of the runs. Reads every results.json's and services.json's runs
(services: their traces), prints the flipped ones with their truth, then the totals.

With --persisting, a fourth, adopted at 6358781 and taken back after held-out set 29 (it named the
runqueue wait twice on cells the truth found under 10% slower): a deeper level's run that did not show the slowdown again (slower
by less than min_slowdown, or within tau spreads) confirms it all the same when the run was slower
than the reference's centre at all and a flagged time metric of the level (a child of the node
the run was to confirm) still grew by the bar a path is held to at level 1: min_slowdown of the
reference's wall time, or for a service min_slowdown of a CPU-second or the run's own SLI loss,
whichever is more. The cause persisted while the host's speed, or the rest of the run, moved.
Prints every run with such a decision (any not-reproduced decision: a remeasure as well as the
last) with its truth and how it ended, then the totals; the runs that ended `transient` are those
the variant would carry on, the others ended another way after the flipped decision.

With --cpu-fell, the form adopted after held-out set 39: a level-1 abstention no more than
min_slowdown slower whose CPU time (perf/task_clock_ns) fell by at least min_slowdown from the
reference's (the reference recorded while the target ran slow) is flipped when a flagged time
metric grew by twice min_slowdown of the reference's wall time, or of its threads' lives summed
(target/thread_ns, the median of the reference's runs where results.json keeps them) when they
are more. Prints those runs, then the totals.

Usage: replay_slower_by_path.py [--services | --cpu-time | --cpu-fell | --fast-centre | --pooled |
                                 --persisting] [results.json or services.json ...]
(default: every results.json, or with --services every services.json, under
bench/eval/results)
"""
import gzip
import glob
import json
import math
import os
import sys

MIN_SLOWDOWN = 0.10


def grown_path(level, scale):
    """(metric, its growth over scale) of the level's flagged time metric that grew the most, by
    at least min_slowdown of scale, else None."""
    best = None
    for s in level.get('flagged', []):
        if not s['metric'].endswith('/time_ns'):
            continue
        share = (s['value'] - s['reference']) / scale
        if share >= MIN_SLOWDOWN and (best is None or share > best[1]):
            best = (s['metric'], share)
    return best


def flipped(level):
    w = level.get('wall')
    if not w or level.get('action') != 'abstain' or not w.get('reference'):
        return None
    rel = (w['value'] - w['reference']) / w['reference']
    if rel <= MIN_SLOWDOWN:
        return None
    best = grown_path(level, w['reference'])
    return (rel, best) if best else None


def cpu_time_flipped(level, deltas):
    """(wall's change, its change less the CPU time's, (metric, growth)) for a level-1
    abstention that the CPU-time variant flips and the rule itself does not, else None."""
    w = level.get('wall')
    tc = deltas.get('perf/task_clock_ns')
    if not w or level.get('action') != 'abstain' or not w.get('reference') or not tc:
        return None
    rel = (w['value'] - w['reference']) / w['reference']
    less_cpu = (w['value'] - tc[1] + tc[0] - w['reference']) / w['reference']
    if rel > MIN_SLOWDOWN or less_cpu <= MIN_SLOWDOWN:
        return None
    best = grown_path(level, w['reference'])
    return (rel, less_cpu, best) if best else None


def replay_variant(files, root, of_file, hit_of, say, name):
    """Print every level-1 abstention that hit_of(of_file(results), run, level) flips, with its
    truth, how it ended and say(hit), then the totals; of_file runs once a file."""
    seen = flips = null_flips = 0
    known = (None, None)
    for f, results, r, level, null in level1_abstentions(files):
        seen += 1
        if known[0] != f:
            known = (f, of_file(results))
        hit = hit_of(known[1], r, level)
        if not hit:
            continue
        flips += 1
        null_flips += null
        print('%s  %s rep %s: truth %s, %s; %s' %
              (os.path.relpath(f, root), r.get('cell'), r.get('rep'), json.dumps(r.get('truth')),
               r.get('reason_code'), say(hit)))
    print('%d level-1 abstentions of calibrated runs in %d files: %d flipped by %s, %d of them '
          'null runs' % (seen, len(files), flips, name, null_flips))


def cpu_time(argv, root):
    replay_variant(results_files(argv, root), root, lambda results: None,
                   lambda _, r, level: cpu_time_flipped(level, r.get('class_deltas', {})),
                   lambda hit: '%+.0f%% slower, %+.0f%% less the CPU time\'s change, %s grew by '
                   '%.0f%% of the wall' % (hit[0] * 100, hit[1] * 100, hit[2][0], hit[2][1] * 100),
                   'the CPU-time variant')


def reference_records(results):
    """Every reference a results file kept, recorded or recorded again (after a perturber with
    lasting state)."""
    recs = list(results.get('references', {}).values())
    for again in results.get('references_again', {}).values():
        recs += again if isinstance(again, list) else [again]
    return [rec for rec in recs if isinstance(rec, dict) and 'id' in rec]


def reference_threads(results):
    """Each reference's id -> the median of its runs' threads' lives (ns), where it kept them."""
    out = {}
    for rec in reference_records(results):
        lives = sorted(run['target/thread_ns'] for run in rec.get('runs', [])
                       if 'target/thread_ns' in run)
        if lives:
            out[rec['id']] = lives[len(lives) // 2] if len(lives) % 2 else \
                (lives[len(lives) // 2 - 1] + lives[len(lives) // 2]) / 2
    return out


def cpu_fell_flipped(level, deltas, threads):
    """(wall's change, the CPU time's fall, (metric, growth over the base)) for a level-1
    abstention that the --cpu-fell form flips, else None."""
    w = level.get('wall')
    tc = deltas.get('perf/task_clock_ns')
    if not w or level.get('action') != 'abstain' or not w.get('reference') or not tc or \
            not tc[0] > 0:
        return None
    rel = (w['value'] - w['reference']) / w['reference']
    fall = 1 - tc[1] / tc[0]
    if rel > MIN_SLOWDOWN or fall < MIN_SLOWDOWN:
        return None
    base = max(w['reference'], threads or 0)
    best = grown_path(level, base)
    return (rel, fall, best) if best and best[1] >= 2 * MIN_SLOWDOWN else None


def cpu_fell(argv, root):
    replay_variant(results_files(argv, root), root, reference_threads,
                   lambda threads, r, level: cpu_fell_flipped(
                       level, r.get('class_deltas', {}), threads.get(r.get('reference'))),
                   lambda hit: '%+.0f%% slower, the CPU time %.0f%% less, %s grew by %.0f%% of '
                   'the reference\'s time' % (hit[0] * 100, hit[1] * 100, hit[2][0],
                                               hit[2][1] * 100),
                   '--cpu-fell')


def reference_walls(results):
    """Each reference's wall times (s) by its id, recorded or recorded again (after a perturber
    with lasting state)."""
    return {rec['id']: rec['walls_s'] for rec in reference_records(results) if rec.get('walls_s')}


def fast_centre_flipped(level, walls):
    """(wall's change against the faster half's centre, (metric, growth)) for a level-1
    abstention that the fast-centre variant flips and the rule itself does not, else None."""
    if flipped(level) or not walls:
        return None
    w = level['wall']
    fast = sorted(walls)[:max(1, len(walls) // 2)]
    centre = sum(fast) / len(fast) * 1e9
    rel = (w['value'] - centre) / centre
    if rel <= MIN_SLOWDOWN:
        return None
    best = grown_path(level, centre)
    return (rel, best) if best else None


def fast_centre(argv, root):
    replay_variant(results_files(argv, root), root, reference_walls,
                   lambda walls, r, level: fast_centre_flipped(level, walls.get(r.get('reference'))),
                   lambda hit: '%+.0f%% slower than the faster half, %s grew by %.0f%% of it' %
                   (hit[0] * 100, hit[1][0], hit[1][1] * 100),
                   'the fast-centre variant')


TAU = 3.0


def pooled_flip(values, centre, spread):
    """(the mean's change, its z) when the mean of values is slower than centre by more than
    min_slowdown and tau spreads over sqrt(n), else None. Costs: higher is worse."""
    n = len(values)
    mean = sum(values) / n
    rel = (mean - centre) / abs(centre)
    z = (mean - centre) / (spread / math.sqrt(n))
    return (rel, z) if rel > MIN_SLOWDOWN and z > TAU else None


def pooled(argv, root):
    seen = flips = null_flips = 0
    for f, _, r in calibrated_runs(results_files(argv, root)):
        levels = r.get('levels') or []
        if len(levels) < 2 or r.get('reason_code') not in ('transient', 'reference_noisy'):
            continue
        seen += 1
        w = levels[0]['wall']
        values = [lv['wall']['value'] for lv in levels if lv.get('wall')]
        hit = pooled_flip(values, w['reference'], w['spread'])
        if not hit:
            continue
        truth = r.get('truth')
        null = truth in ('no_bottleneck', None) or truth == []
        flips += 1
        null_flips += null
        print('%s  %s rep %s: truth %s; %d runs %s, their mean %+.0f%% (z %.1f)' %
              (os.path.relpath(f, root), r.get('cell'), r.get('rep'), json.dumps(truth),
               len(values), ' '.join('%+.0f%%' % ((v / w['reference'] - 1) * 100)
                                     for v in values), hit[0] * 100, hit[1]))
    print('%d runs of the matrices that abstained after level 1 for a slowdown not shown again: '
          '%d flipped by pooling every run, %d of them null runs' % (seen, flips, null_flips))
    seen = flips = null_flips = 0
    for tf, truth, cell, steps in services_traces(services_files([], root)):
        report = [s for s in steps if s.get('kind') == 'report']
        if not report or 'did not last' not in (report[-1].get('reason') or ''):
            continue
        slis = [sc for s in steps if s.get('kind') == 'decision'
                for sc in s.get('scores', []) if sc['metric'] == 'target/sli_cost']
        if len(slis) < 2:
            continue
        seen += 1
        centre = slis[0]['reference']
        values = [sc['value'] for sc in slis]
        hit = pooled_flip(values, centre, slis[0]['spread'])
        if not hit:
            continue
        null = bool(truth.get('null', True))
        flips += 1
        null_flips += null
        print('%s  %s: truth %s; %d runs %s worse, their mean %+.0f%% (z %.1f)' %
              (os.path.relpath(tf, root), cell, 'null' if null else 'cause', len(values),
               ' '.join('%+.0f%%' % ((v - centre) / abs(centre) * 100) for v in values),
               hit[0] * 100, hit[1]))
    print('%d services runs that abstained for a slowdown not shown again: %d flipped by pooling '
          'every run, %d of them null cells' % (seen, flips, null_flips))


def sli_abstention(step):
    """A level-1 decision that abstained with the SLI not flagged: its scores by metric, else
    None."""
    if step.get('kind') != 'decision' or step.get('level') != 1 or step.get('action') != 'abstain':
        return None
    scores = {s['metric']: s for s in step.get('scores', [])}
    w = scores.get('target/sli_cost')
    return scores if w and not w['flagged'] else None


def sli_flipped(scores):
    """(SLI worse by, (metric, its excess over the SLI's loss)) for an SLI abstention's scores
    that the SLI rule flips, else None."""
    w = scores['target/sli_cost']
    centre, value = w['reference'], w['value']
    if not centre or (w['delta'] / abs(centre)) <= MIN_SLOWDOWN:
        return None
    if centre > 0 and value > 0:
        loss = value / centre - 1
    elif centre < 0 and value < 0:
        loss = centre / value - 1
    else:
        return None
    loss *= 1e9
    best = None
    for m, s in scores.items():
        if not m.endswith('/time_ns') or not s['flagged']:
            continue
        grew = s['value'] - s['expected'] if s.get('expected', 0) > 0 else s['delta']
        if grew >= loss and (best is None or grew > best[1]):
            best = (m, grew / loss)
    return (w['delta'] / abs(centre), best) if best else None


def services_files(argv, root):
    return argv or sorted(glob.glob(os.path.join(root, '**', 'services.json'), recursive=True))


def services_traces(files):
    """(trace file, its cell's truth in the services.json beside it, the cell, the trace's steps)
    for every readable trace of every file's run."""
    for f in files:
        truth = json.load(open(f)).get('truth', {})
        for tf in sorted(glob.glob(os.path.join(os.path.dirname(f), 'traces', '*.json.gz'))):
            cell = os.path.basename(tf)[:-len('.json.gz')].rsplit('-', 1)[0]
            try:
                steps = json.load(gzip.open(tf)).get('steps', [])
            except (OSError, ValueError, AttributeError):
                continue
            yield tf, truth.get(cell, {}), cell, steps


def services(argv, root):
    files = services_files(argv, root)
    seen = flips = null_flips = 0
    for tf, t, cell, steps in services_traces(files):
        for step in steps:
            scores = sli_abstention(step)
            if not scores:
                continue
            seen += 1
            hit = sli_flipped(scores)
            if not hit:
                continue
            flips += 1
            null_flips += bool(t.get('null', True))
            print('%s  %s: truth %s%s; SLI %+.0f%% worse, %s grew by %.1f times its loss' %
                  (os.path.relpath(tf, root), cell, 'null' if t.get('null', True) else 'cause',
                   ' ' + json.dumps(t.get('truths')) if t.get('truths') else '',
                   hit[0] * 100, hit[1][0], hit[1][1]))
    print('%d level-1 abstentions of services in %d files: %d flipped, %d of them null cells'
          % (seen, len(files), flips, null_flips))


def persisting_flip(centre, value, grown, bar):
    """(the run's change, (metric, its growth)) for a deeper level's run slower than the centre
    at all (costs: higher is worse) in which a flagged time metric grew by at least bar(change),
    else None. grown: (metric, growth) of the level's flagged scores."""
    rel = (value - centre) / abs(centre) if centre else 0
    if rel <= 0:
        return None
    best = None
    for metric, grew in grown:
        if metric.endswith('/time_ns') and grew >= bar(rel) and (best is None or grew > best[1]):
            best = (metric, grew)
    return (rel, best) if best else None


def not_reproduced(reason):
    return 'did not reproduce' in (reason or '')


def persisting(argv, root):
    """Runs with a decision the variant flips; among them (under) those with one whose run was
    slower by no more than min_slowdown, which the level-1 rule of slower_by_path (more than
    min_slowdown slower) would not have flipped either."""
    seen = flips = null_flips = carried = under = null_under = 0
    for f, _, r in calibrated_runs(results_files(argv, root)):
        hits, low = [], False
        for lv in r.get('levels') or []:
            w = lv.get('wall')
            if lv.get('level', 1) < 2 or not w or not not_reproduced(lv.get('reason')):
                continue
            seen += 1
            hit = persisting_flip(w['reference'], w['value'],
                                  [(s['metric'], s['value'] - s['reference'])
                                   for s in lv.get('flagged', [])],
                                  lambda rel: MIN_SLOWDOWN * w['reference'])
            if hit:
                low = low or hit[0] <= MIN_SLOWDOWN
                hits.append('level %d %+.1f%% slower, %s grew by %.0f%% of the wall' %
                            (lv['level'], hit[0] * 100, hit[1][0], hit[1][1] / w['reference'] * 100))
        if not hits:
            continue
        truth = r.get('truth')
        null = truth in ('no_bottleneck', None) or truth == []
        flips += 1
        null_flips += null
        under += low
        null_under += null and low
        carried += r.get('reason_code') == 'transient'
        print('%s  %s rep %s: truth %s, ended %s; %s' %
              (os.path.relpath(f, root), r.get('cell'), r.get('rep'), json.dumps(truth),
               r.get('reason_code') or r.get('node'), '; '.join(hits)))
    print('%d not-reproduced decisions of the matrices\' calibrated runs: %d runs flipped, %d of '
          'them null runs, %d of them ended transient; %d flipped at a run no more than '
          'min_slowdown slower, %d of them null runs' % (seen, flips, null_flips, carried, under,
                                                          null_under))
    seen = flips = null_flips = carried = under = null_under = 0
    for tf, t, cell, steps in services_traces(services_files([], root)):
        hits, low = [], False
        for step in steps:
            if (step.get('kind') != 'decision' or (step.get('level') or 1) < 2 or
                    not not_reproduced(step.get('reason'))):
                continue
            scores = {s['metric']: s for s in step.get('scores', [])}
            w = scores.get('target/sli_cost')
            if not w:
                continue
            seen += 1
            hit = persisting_flip(w['reference'], w['value'],
                                  [(m, s['value'] - s['expected'] if s.get('expected', 0) > 0
                                    else s['delta']) for m, s in scores.items()
                                   if s['flagged'] and m != 'target/sli_cost'],
                                  lambda rel: max(rel, MIN_SLOWDOWN) * 1e9)
            if hit:
                low = low or hit[0] <= MIN_SLOWDOWN
                hits.append('level %d SLI %+.1f%% worse, %s grew by %.0f ms per CPU-second' %
                            (step['level'], hit[0] * 100, hit[1][0], hit[1][1] / 1e6))
        if not hits:
            continue
        report = [s for s in steps if s.get('kind') == 'report']
        ended = 'transient' if report and 'did not last' in (report[-1].get('reason') or '') \
            else 'otherwise'
        null = bool(t.get('null', True))
        flips += 1
        null_flips += null
        under += low
        null_under += null and low
        carried += ended == 'transient'
        print('%s  %s: truth %s, ended %s; %s' %
              (os.path.relpath(tf, root), cell,
               'null' if null else 'cause ' + json.dumps(t.get('truths')), ended, '; '.join(hits)))
    print('%d not-reproduced decisions of services runs: %d runs flipped, %d of them null cells, '
          '%d of them ended transient; %d flipped at a run no more than min_slowdown worse, %d of '
          'them null cells' % (seen, flips, null_flips, carried, under, null_under))


def results_files(argv, root):
    return argv or sorted(glob.glob(os.path.join(root, '**', 'results.json'), recursive=True))


def calibrated_runs(files):
    """(file, its results, run) for every calibrated run of every readable file, in order."""
    for f in files:
        try:
            results = json.load(open(f))
            runs = results.get('runs', [])
        except (OSError, ValueError, AttributeError):
            continue
        for r in runs:
            if r.get('mode') == 'calibrated':
                yield f, results, r


def level1_abstentions(files):
    """(file, its results, run, its level 1, whether its truth is null) for every calibrated run
    whose level 1 abstained with a wall score, in the files' order."""
    for f, results, r in calibrated_runs(files):
        if not r.get('levels'):
            continue
        level = r['levels'][0]
        if level.get('action') != 'abstain' or not level.get('wall'):
            continue
        truth = r.get('truth')
        yield f, results, r, level, truth in ('no_bottleneck', None) or truth == []


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')
    if argv[:1] == ['--services']:
        return services(argv[1:], root)
    if argv[:1] == ['--cpu-time']:
        return cpu_time(argv[1:], root)
    if argv[:1] == ['--cpu-fell']:
        return cpu_fell(argv[1:], root)
    if argv[:1] == ['--fast-centre']:
        return fast_centre(argv[1:], root)
    if argv[:1] == ['--pooled']:
        return pooled(argv[1:], root)
    if argv[:1] == ['--persisting']:
        return persisting(argv[1:], root)
    files = results_files(argv, root)
    seen = flips = null_flips = 0
    for f, _, r, level, null in level1_abstentions(files):
        seen += 1
        hit = flipped(level)
        if not hit:
            continue
        flips += 1
        null_flips += null
        print('%s  %s rep %s: truth %s, %s; %+.0f%% slower, %s grew by %.0f%% of the wall' %
              (os.path.relpath(f, root), r.get('cell'), r.get('rep'), json.dumps(r.get('truth')),
               r.get('reason_code'), hit[0] * 100, hit[1][0], hit[1][1] * 100))
    print('%d level-1 abstentions of calibrated runs in %d files: %d flipped, %d of them null runs'
          % (seen, len(files), flips, null_flips))


if __name__ == '__main__':
    main(sys.argv[1:])
