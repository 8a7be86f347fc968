#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How long the host's slow stretches last, from a log of bench-host-pace-log
(one line a reading: seconds, CPU, ns per load, the reading's ms). Per CPU:
the usual pace (the median of its readings), the slow readings (1.25 times
that or more, HOST_PACE_MOVED), and for each slow reading the time until the
host is back (the first of two consecutive readings on that CPU under the
bound, daemon/host_pace.c's host_pace_back), or censored when the log ends
first. Prints their distribution and the bound a reference's wait for the
usual pace gets by the rule stated beforehand
(bench/eval/results/2026-12-06/host-pace-wait/RULE.md): the 90th percentile
over both CPUs, rounded up to 10 s, at most 300 s.

    host_pace_stretches.py LOG
"""

import math
import statistics
import sys

MOVED = 1.25


def percentile(xs, p):
    """The p-th percentile (0 to 100) by linear interpolation between the sorted values."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def back(marked, i):
    """When the host is back after reading i of marked ((seconds, ns, slow) readings): the time of
    the first of two consecutive readings after it under the bound; None when the log ends first."""
    for j in range(i + 1, len(marked) - 1):
        if not marked[j][2] and not marked[j + 1][2]:
            return marked[j][0]
    return None


def stretches(marked):
    """Slow stretches of one CPU's (seconds, ns, slow) readings: (start, end), end the host's
    return after the stretch's first reading (back(); None: the log ended first). A stretch runs
    through single readings under the bound."""
    out, until = [], -1.0
    for i, (t, _ns, slow) in enumerate(marked):
        if not slow or t < until:
            continue
        end = back(marked, i)
        out.append((t, end))
        if end is None:
            break
        until = end
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[-1].strip())
    by_cpu = {}
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            t, cpu, ns, _took = line.split()
            by_cpu.setdefault(int(cpu), []).append((float(t), float(ns)))
    waits, censored_all = [], 0
    for cpu, rows in sorted(by_cpu.items()):
        usual = statistics.median(ns for _, ns in rows)
        bound = usual * MOVED
        marked = [(t, ns, ns >= bound) for t, ns in rows]
        back_at = [back(marked, i) for i in range(len(marked))]
        cpu_waits, censored = [], 0
        for i, (t, ns, slow) in enumerate(marked):
            if not slow:
                continue
            if back_at[i] is None:
                censored += 1
            else:
                cpu_waits.append(back_at[i] - t)
        waits += cpu_waits
        censored_all += censored
        st = stretches(marked)
        span = rows[-1][0] - rows[0][0]
        print("CPU %d: %d readings over %.0f s, usual %.2f ns, bound %.2f; %d slow (%.0f%%), "
              "%d slow stretches" % (cpu, len(rows), span, usual, bound,
                                     sum(1 for m in marked if m[2]),
                                     100.0 * sum(1 for m in marked if m[2]) / len(rows), len(st)))
        lengths = [e - s for s, e in st if e is not None]
        if lengths:
            print("  stretch lengths (s), start to the host's return: median %.1f, 90th %.1f, "
                  "longest %.1f; %d of %d longer than 15 s (the fixed pauses' sum)"
                  % (statistics.median(lengths), percentile(lengths, 90), max(lengths),
                     sum(1 for x in lengths if x > 15), len(lengths)))
        open_ = [s for s, e in st if e is None]
        if open_:
            print("  a stretch still open when the log ended, from %.0f s" % open_[0])
        if cpu_waits:
            print("  from a slow reading to the host's return (s): median %.1f, 80th %.1f, 90th %.1f, "
                  "longest %.1f (%d readings; %d censored)"
                  % (statistics.median(cpu_waits), percentile(cpu_waits, 80),
                     percentile(cpu_waits, 90), max(cpu_waits), len(cpu_waits), censored))
    if not waits:
        print("no slow reading with a return: the rule gives no bound")
        return
    p90 = percentile(waits, 90)
    bound_s = min(300, int(math.ceil(p90 / 10.0)) * 10)
    print("both CPUs: from a slow reading to the host's return, %d readings (%d censored): "
          "median %.1f s, 90th percentile %.1f s" % (len(waits), censored_all,
                                                   statistics.median(waits), p90))
    print("the wait's bound by the rule: %d s" % bound_s)
    for b in (5, 15, 30, 60, 120, bound_s):
        print("  back within %3d s: %.0f%% of the slow readings" % (
            b, 100.0 * sum(1 for w in waits if w <= b) / (len(waits) + censored_all)))


if __name__ == "__main__":
    main()
