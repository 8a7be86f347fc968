#!/usr/bin/env python3
"""Pearson correlations of the victims' wall times with the probes of the host's speed, in
log1.txt (columns: time, register loop on CPU 0 min/p10/median us, the same on CPU 1, m4 wall
and CPU s, gzip wall and CPU s, the register loop again, steal jiffies) and log2.txt (time,
register loop on CPU 0, a 16 MiB pointer chase min/median ns and fill, a 1 MiB chase min/median
ns, m4 wall and CPU s, gzip wall and CPU s, the register loop again, steal jiffies)."""
import statistics as st


def corr(x, y):
    mx, my = st.mean(x), st.mean(y)
    return (sum((a - mx) * (b - my) for a, b in zip(x, y)) /
            (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** .5)


def report(name, cols, m4, gz):
    rows = [line.split() for line in open(name)]
    m = [float(r[m4]) for r in rows]
    g = [float(r[gz]) for r in rows]
    print("%s: %d rows; m4 %.3f-%.3f s, gzip %.3f-%.3f s; m4 with gzip %.2f" %
          (name, len(rows), min(m), max(m), min(g), max(g), corr(m, g)))
    for label, i in cols:
        x = [float(r[i]) for r in rows]
        print("  %-28s %7.2f-%7.2f   with m4 %.2f, with gzip %.2f" %
              (label, min(x), max(x), corr(x, m), corr(x, g)))


report("log1.txt", [("register loop CPU 0, min us", 1), ("register loop CPU 1, min us", 4),
                    ("register loop after, min us", 11)], 7, 9)
report("log2.txt", [("register loop CPU 0, min us", 1), ("16 MiB chase, min ns", 4),
                    ("16 MiB chase, median ns", 5), ("1 MiB chase, min ns", 7),
                    ("1 MiB chase, median ns", 8)], 9, 11)
