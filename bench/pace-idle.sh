#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Whether the host's pace read on an idle CPU is the pace argusd reads after
# a reference's runs on it: round after round, IDLE_S seconds with argusd
# idle, one reading on the workload's CPU by bench-host-pace-log (the same
# reading, daemon/host_pace.c), then a reference job of the workload, whose
# runs each carry the reading argusd took after them. Prints each round's
# idle reading, the reference runs' readings and the ratio of the idle
# reading to their median, then the medians of each kind and of the rounds'
# ratios: what a usual pace taken from idle readings would be worth beside
# one taken from references (reference.c, usual_pace).
#
#   bench/pace-idle.sh WORKLOAD [ROUNDS] [IDLE_S]   (default 10 rounds, 5 s)
#
# WORKLOADS_DIR names the directory of the workload's definition (default
# the bundled workloads/). argusd runs with reference_pace_check off, so
# that each reference keeps its first attempt's readings, slow or not.
# Needs root and a build in build/ (BUILD to override).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${BUILD:-$SRC/build}
WORKLOADS_DIR=${WORKLOADS_DIR:-$SRC/workloads}
WL=${1:?usage: bench/pace-idle.sh WORKLOAD [ROUNDS] [IDLE_S]}
ROUNDS=${2:-10}
IDLE_S=${3:-5}
DEF=$WORKLOADS_DIR/$WL.json

[ "$(id -u)" = 0 ] || { echo "pace-idle: run as root" >&2; exit 2; }
[ -x "$BUILD/argusd" ] && [ -x "$BUILD/bench-host-pace-log" ] ||
	{ echo "pace-idle: build first (scripts/build.sh)" >&2; exit 2; }
[ -r "$DEF" ] || { echo "pace-idle: no workload $DEF" >&2; exit 2; }
case "$ROUNDS$IDLE_S" in *[!0-9]*) echo "pace-idle: ROUNDS and IDLE_S are numbers" >&2; exit 2 ;; esac
[ "$ROUNDS" -ge 1 ] || { echo "pace-idle: at least 1 round" >&2; exit 2; }
CPU=$(jq -r '.cpus // empty' "$DEF" | cut -d, -f1 | cut -d- -f1)
[ -n "$CPU" ] || { echo "pace-idle: $WL names no CPUs; argusd reads the pace where it runs" >&2; exit 2; }
. "$SRC/bench/argusd-run.sh"
argusd_workdir pace-idle
ARGUSD_CONF_EXTRA="reference_pace_check = false"

argusd_start

echo "# $WL ($DEF): $ROUNDS rounds on CPU $CPU, $IDLE_S s idle before each idle reading"
printf '%-6s %9s %12s %8s   %s\n' round "idle ns" "after runs" ratio "the reference runs' readings"
: >"$D/idle"
: >"$D/after"
: >"$D/ratios"
for r in $(seq 1 "$ROUNDS"); do
	sleep "$IDLE_S"
	idle=$("$BUILD/bench-host-pace-log" 1 1000 "$CPU" | awk '!/^#/ { print $3; exit }')
	job=$(argusd_post /references "{\"workload\": \"$WL\"}")
	[ -n "$job" ] || { echo "pace-idle: argusd refused the reference" >&2; exit 1; }
	argusd_finish "$job"
	curl -sf "$API/jobs/$job" | jq -r '.result.runs[].host_pace.ns_per_load // empty' >"$D/round"
	after=$(median <"$D/round")
	ratio=$(echo "$idle / $after" | bc -l)
	echo "$idle" >>"$D/idle"
	cat "$D/round" >>"$D/after"
	echo "$ratio" >>"$D/ratios"
	printf '%-6s %9.2f %12.2f %8.3f   %s\n' "$r" "$idle" "$after" "$ratio" "$(tr '\n' ' ' <"$D/round")"
done
printf 'medians: idle %.2f ns (%d readings), after the runs %.2f ns (%d readings)\n' \
	"$(median <"$D/idle")" "$(wc -l <"$D/idle")" "$(median <"$D/after")" "$(wc -l <"$D/after")"
printf 'median of the rounds'"'"' ratios: %.3f (idle over after the runs)\n' "$(median <"$D/ratios")"
