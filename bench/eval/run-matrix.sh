#!/bin/sh
# SPDX-License-Identifier: MIT
# The accuracy matrix of README "Accuracy", as one command: build, then the
# calibrated matrix and its ablation (calibration off), 3 repetitions per
# cell, and the page-fault signature table. Output in bench/eval/out/DATE
# (results.json, report.md, matrix.svg, signatures.md). Root; about an hour
# (the unprobed runs of the same-session check need perf: Debian linux-perf).
# Extra arguments go to matrix.py (e.g. --cells pf_cow:* --reps 1).
set -eu
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then
	echo "run-matrix: run as root (argusd loads eBPF programs; perturbers change settings)" >&2
	exit 1
fi
BUILD_DIR=${BUILD_DIR:-build}
BUILD_DIR=$BUILD_DIR ./scripts/build.sh
OUT=${OUT:-bench/eval/out/$(date +%Y%m%d-%H%M%S)}
/usr/bin/python3 bench/eval/matrix.py --build "$BUILD_DIR" --calibration both --reps 3 --out "$OUT" "$@"
/usr/bin/python3 bench/eval/signatures.py "$OUT"
