#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Create the held-out victims' input files in /var/tmp/argus-heldout (owned by
nobody, who runs the victims): text for gzip and xz, an SQL script of
single-row transactions for sqlite3, and a C file for gcc. Deterministic (a
fixed seed): every run of the evaluation compresses and compiles the same
bytes. Run as root before truth_measure.py and matrix.py."""

import os
import pwd
import random

DIR = "/var/tmp/argus-heldout"


def vocabulary(rng):
    return ["".join(rng.choice("etaoinshrdlcumwfgypbvkjxqz") for _ in range(rng.randint(2, 9)))
            for _ in range(5000)]


def words(rng, vocab, n):
    return " ".join(rng.choice(vocab) for _ in range(n))


def write(name, text, uid, gid):
    path = os.path.join(DIR, name)
    with open(path, "w") as f:
        f.write(text)
    os.chown(path, uid, gid)
    os.chmod(path, 0o644)


def main():
    nobody = pwd.getpwnam("nobody")
    os.makedirs(DIR, exist_ok=True)
    os.chown(DIR, nobody.pw_uid, nobody.pw_gid)
    os.chmod(DIR, 0o755)
    rng = random.Random(20261202)
    vocab = vocabulary(rng)
    # 2.5 MB of words, repeated with a running line number: farther apart than
    # gzip's window and xz -1's dictionary, so each copy is compressed anew
    block = [words(rng, vocab, 12) for _ in range(32000)]
    text = lambda copies: "".join("%d %s\n" % (i, block[i % len(block)])
                                  for i in range(copies * len(block)))
    write("text.dat", text(10), nobody.pw_uid, nobody.pw_gid)
    write("text2.dat", text(3), nobody.pw_uid, nobody.pw_gid)
    sql = ["PRAGMA journal_mode=DELETE;", "PRAGMA synchronous=FULL;",
           "DROP TABLE IF EXISTS t;", "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"]
    sql += ["INSERT INTO t(v) VALUES ('%s');" % words(rng, vocab, 20) for _ in range(150)]
    sql += ["SELECT count(*) FROM t;"]
    write("txn.sql", "\n".join(sql) + "\n", nobody.pw_uid, nobody.pw_gid)
    fns = []
    for i in range(900):
        fns.append("int f%d(int x)\n{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n"
                   "\t\ts += (i * %d) ^ (s >> 3);\n\treturn s + %d;\n}\n" % (i, rng.randint(3, 97), i))
    fns.append("int main(void)\n{\n\treturn f0(3) & 1;\n}\n")
    write("gen.c", "\n".join(fns), nobody.pw_uid, nobody.pw_gid)
    print("prepared %s" % DIR)


if __name__ == "__main__":
    main()
