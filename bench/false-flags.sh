#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The false-flag rate on null runs (README "How argusd decides"): records one
# reference of RUNS runs of each WORKLOAD with nothing perturbing it, then
# holds each run out against the K after it and decides every level of the
# tree on them (bench-false-flags). Nothing changed between the runs, so
# every flagged path is a false flag. Prints one table, the default
# estimator and thresholds beside the plain mean and sd against tau, for K
# of 3, 5 (argusd's default) and 10 (KS to override, "3,5,10").
#
#   bench/false-flags.sh [RUNS] [WORKLOAD...]   (default 20 runs of four workloads)
#
# Needs root and a build in build/ (BUILD to override). KEEP=FILE keeps the
# state database, to run bench-false-flags on it again.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${BUILD:-$SRC/build}
RUNS=${1:-20}
shift || true
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(pf_anon_write pf_page_cache fork_storm futex_contend)
KS=${KS:-3,5,10}

[ "$(id -u)" = 0 ] || { echo "false-flags: run as root" >&2; exit 2; }
[ -x "$BUILD/argusd" ] && [ -x "$BUILD/bench-false-flags" ] ||
	{ echo "false-flags: build first (scripts/build.sh)" >&2; exit 2; }
. "$SRC/bench/argusd-run.sh"
argusd_workdir false-flags

argusd_start
for w in "${WORKLOADS[@]}"; do
	t0=$(date +%s)
	job=$(argusd_post /references "{\"workload\": \"$w\", \"repeats\": $RUNS}")
	argusd_finish "$job"
	echo "# $w: $RUNS runs recorded in $(($(date +%s) - t0)) s"
done
argusd_stop
[ -z "${KEEP:-}" ] || cp "$D/state/argusd.db" "$KEEP"
"$BUILD/bench-false-flags" --db "$D/state/argusd.db" --tree "$SRC/tree-data/tree.json" \
	--schema "$SRC/schema" --k "$KS"
