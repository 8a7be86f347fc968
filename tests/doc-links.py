#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The project's documents link where they say: every link of README.md,
docs/*.md and bench/eval/README.md to a heading of its own file (#anchor),
to a file or directory of the checkout, or to a heading of another Markdown
file of it, resolves. A section lost in an edit leaves its links dangling,
and this says which.

    doc-links.py SOURCE_DIR
"""
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    h = re.sub(r"[`*]", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path) as f:
            text = FENCE.sub("", f.read())
        cache[path] = {anchor(m.group(2)) for m in HEADING.finditer(text)}
    return cache[path]


def check(src, rel):
    path = os.path.join(src, rel)
    with open(path) as f:
        text = FENCE.sub("", f.read())
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, mailto:: not the checkout's
        file, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append("%s: %s: no such file" % (rel, target))
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            bad.append("%s: %s: no such heading" % (rel, target))
    return bad


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ARGUS_SOURCE_DIR", ".")
    docs = ["README.md", "bench/eval/README.md"] + sorted(
        os.path.join("docs", n) for n in os.listdir(os.path.join(src, "docs")) if n.endswith(".md"))
    bad = []
    for rel in docs:
        bad += check(src, rel)
    for b in bad:
        print("not ok: " + b)
    print("doc-links: %d documents, %d links that lead nowhere" % (len(docs), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
