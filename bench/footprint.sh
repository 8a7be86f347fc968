#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What argusd itself costs the host: the time from its start to READY, its
# resident memory and CPU while idle (sampled over IDLE_S seconds), its
# resident memory during a diagnosis (a reference of WORKLOAD, then a
# diagnosis under a CPU hog on the workload's CPU: the demo's kind of cell),
# and that diagnosis's time per level.
#
#   bench/footprint.sh [IDLE_S]      (default 600: ten minutes)
#
# Needs root and a build in build/ (BUILD to override). Prints one table.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${BUILD:-$SRC/build}
IDLE_S=${1:-600}
WORKLOAD=${WORKLOAD:-pf_zero_page}

[ "$(id -u)" = 0 ] || { echo "footprint: run as root" >&2; exit 2; }
[ -x "$BUILD/argusd" ] || { echo "footprint: build first (scripts/build.sh)" >&2; exit 2; }
HZ=$(getconf CLK_TCK)
D=$(mktemp -d /tmp/argusd-footprint.XXXXXX)
chmod 0755 "$D"
ARGUSD_PID="" HOG_PID="" SAMPLER_PID=""
cleanup() {
	for pid in $SAMPLER_PID $HOG_PID $ARGUSD_PID; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$D"
}
trap cleanup EXIT

. "$SRC/bench/argusd-run.sh"

# kB resident now, and at most so far
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
# CPU seconds (user + system) of the whole process so far
cpu_s() { awk -v hz="$HZ" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

argusd_start
READY_S=$(awk -v a="$ARGUSD_T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

echo "== idle for $IDLE_S s (samples every 10 s)"
RSS_START=$(rss "$ARGUSD_PID")
CPU0=$(cpu_s "$ARGUSD_PID")
W0=$(date +%s.%N)
RSS_MAX=$RSS_START
for _ in $(seq 1 $((IDLE_S / 10))); do
	sleep 10
	r=$(rss "$ARGUSD_PID")
	[ "$r" -gt "$RSS_MAX" ] && RSS_MAX=$r
done
W1=$(date +%s.%N)
CPU1=$(cpu_s "$ARGUSD_PID")
RSS_END=$(rss "$ARGUSD_PID")
IDLE_CPU=$(awk -v c0="$CPU0" -v c1="$CPU1" -v a="$W0" -v b="$W1" \
	'BEGIN { printf "%.3f s CPU in %.0f s (%.4f%% of one CPU)", c1 - c0, b - a, 100 * (c1 - c0) / (b - a) }')

echo "== a reference of $WORKLOAD, then a diagnosis under a CPU hog on its CPU"
# RSS every 100 ms while the jobs run
(while kill -0 "$ARGUSD_PID" 2>/dev/null; do rss "$ARGUSD_PID"; sleep 0.1; done) >"$D/rss.txt" &
SAMPLER_PID=$!
REF_JOB=$(argusd_post /references "{\"workload\": \"$WORKLOAD\", \"repeats\": 3}")
argusd_finish "$REF_JOB"
CPU_OF=$(jq -r '.cpus // "0"' "$SRC/workloads/$WORKLOAD.json" | cut -d, -f1 | cut -d- -f1)
"$BUILD/bench/perturbers/cpu_hog" --cpu "$CPU_OF" >"$D/hog.log" 2>&1 &
HOG_PID=$!
sleep 1
JOB=$(argusd_post /diagnose "{\"workload\": \"$WORKLOAD\"}")
argusd_finish "$JOB"
kill -TERM "$HOG_PID" && wait "$HOG_PID" 2>/dev/null || true
HOG_PID=""
kill -TERM "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""
RSS_JOB_MAX=$(sort -n "$D/rss.txt" | tail -1)
RESULT=$(curl -sf "$API/jobs/$JOB")

echo
printf '%-44s %s\n' "start to READY" "$READY_S s"
printf '%-44s %s\n' "idle RSS (start, end, most)" "$((RSS_START / 1024)) MiB, $((RSS_END / 1024)) MiB, $((RSS_MAX / 1024)) MiB"
printf '%-44s %s\n' "idle CPU" "$IDLE_CPU"
printf '%-44s %s\n' "RSS during the reference and diagnosis (most)" "$((RSS_JOB_MAX / 1024)) MiB (VmHWM $(($(hwm "$ARGUSD_PID") / 1024)) MiB)"
printf '%-44s %s\n' "diagnosis" "$(jq -r '.result | "\(.verdict) \(.path | join(" -> "))"' <<<"$RESULT")"
jq -r '.result.timings.levels[] | "  level \(.level): measure \(.measure_s * 100 | round / 100) s, decide \((.decide_s // 0) * 1000 | round) ms"' <<<"$RESULT" |
	while read -r line; do printf '%-44s\n' "$line"; done
printf '%-44s %s\n' "time to diagnosis (the job's total)" "$(jq -r '.result.timings.total_s * 100 | round / 100' <<<"$RESULT") s"
