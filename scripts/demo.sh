#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One real diagnosis, end to end, through the HTTP API:
#   build -> start argusd on loopback with a temporary state directory ->
#   record a reference of a bundled workload on the quiet system ->
#   start a perturber on the other CPU -> POST /diagnose -> follow it ->
#   print the verdict, the path and the descent -> stop everything.
#
# Environment: WORKLOAD (default pf_page_cache), PERTURBER (default
# cache_dropper), PERTURBER_CPU (default 1), REPEATS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
WORKLOAD=${WORKLOAD:-pf_page_cache}
PERTURBER=${PERTURBER:-cache_dropper}
PERTURBER_CPU=${PERTURBER_CPU:-1}
REPEATS=${REPEATS:-3}

if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root (argusd loads eBPF programs)" >&2
	exit 1
fi
./scripts/install-deps.sh
echo "== building"
BUILD_DIR=build ./scripts/build.sh
BUILD=$SRC/build

STATE=$(mktemp -d /tmp/argusd-demo.XXXXXX)
# The workload runs as nobody, who may not reach this checkout (under root's
# 0700 home, say): its program is staged where nobody can run it.
chmod 0755 "$STATE"
./scripts/stage-programs.sh "$BUILD" "$STATE/programs"
ARGUSD_PID=""
PERTURBER_PID=""

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$PERTURBER_PID" ] && kill -0 "$PERTURBER_PID" 2>/dev/null; then
		kill -TERM "$PERTURBER_PID" 2>/dev/null || true
		wait "$PERTURBER_PID" 2>/dev/null || true
		echo "== perturber stopped (its settings restored)"
	fi
	if [ -n "$ARGUSD_PID" ] && kill -0 "$ARGUSD_PID" 2>/dev/null; then
		kill -TERM "$ARGUSD_PID" 2>/dev/null || true
		wait "$ARGUSD_PID" 2>/dev/null || true
		echo "== argusd stopped; its log and database are in $STATE"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$STATE/argusd.conf" <<EOF
listen = 127.0.0.1:0
state_dir = $STATE/state
workloads_dir = $SRC/workloads
victims_dir = $STATE/programs
tree_file = $SRC/tree-data/tree.json
schema_dir = $SRC/schema
EOF

echo "== starting argusd (state in $STATE)"
"$BUILD/argusd" --config "$STATE/argusd.conf" 2>"$STATE/argusd.log" &
ARGUSD_PID=$!
PORT=""
for _ in $(seq 1 300); do
	PORT=$(sed -n 's/.*argusd ready: .*(port \([0-9]*\)).*/\1/p' "$STATE/argusd.log")
	[ -n "$PORT" ] && break
	kill -0 "$ARGUSD_PID" 2>/dev/null || { cat "$STATE/argusd.log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$PORT" ] || { echo "argusd did not become ready" >&2; exit 1; }
# Reads over TCP; writes over the control socket, where root may do everything.
API="http://127.0.0.1:$PORT"
SOCK=$STATE/state/argusd.sock
grep -E "tree .* resolved" "$STATE/argusd.log" | sed 's/^<[0-9]>/   /'
echo "   API on $API (reads), control socket $SOCK (writes)"

# Follow a job until it ends; print progress lines as they change.
follow() {
	local id=$1 last="" job state line
	while :; do
		job=$(curl -sf "$API/jobs/$id")
		state=$(jq -r .state <<<"$job")
		line=$(jq -r '"   [\(.state)] \((.progress * 100) | floor)% \(.step // "")"' <<<"$job")
		[ "$line" != "$last" ] && echo "$line" && last=$line
		case $state in
		succeeded | failed | cancelled | interrupted) break ;;
		esac
		sleep 0.5
	done
	[ "$state" = succeeded ] || {
		echo "job $id $state: $(jq -c .error <<<"$job")" >&2
		exit 1
	}
}

post() {
	curl -sf --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' -d "$2" \
		"http://localhost$1"
}

echo "== recording a reference for $WORKLOAD on the quiet system ($REPEATS runs)"
REF_JOB=$(post /references "{\"workload\": \"$WORKLOAD\", \"repeats\": $REPEATS}" | jq -r .id)
follow "$REF_JOB"
REF=$(curl -sf "$API/jobs/$REF_JOB" | jq -r .result.reference)
curl -sf "$API/jobs/$REF_JOB" | jq -r '"   reference \(.result.reference): mean wall \(.result.mean_wall_s * 1000 | floor) ms"'

echo "== perturbing: $PERTURBER on CPU $PERTURBER_CPU"
"$BUILD/bench/perturbers/$PERTURBER" --cpu "$PERTURBER_CPU" >"$STATE/perturber.log" 2>&1 &
PERTURBER_PID=$!
sleep 1

echo "== POST /diagnose {\"workload\": \"$WORKLOAD\"}"
T0=$(date +%s.%N)
JOB=$(post /diagnose "{\"workload\": \"$WORKLOAD\", \"reference\": $REF}" | jq -r .id)
follow "$JOB"
T1=$(date +%s.%N)

kill -TERM "$PERTURBER_PID" && wait "$PERTURBER_PID" 2>/dev/null || true
PERTURBER_PID=""

RESULT=$(curl -sf "$API/jobs/$JOB")
echo
echo "== the descent (GET /jobs/$JOB/trace)"
curl -sf "$API/jobs/$JOB/trace" | jq -r '
  .steps[] | select(.kind == "decision") |
  "   L\(.level) \(.action)\(if .node then " -> " + .node else "" end): \(.reason)",
  (.scores | map(select(.flagged)) | sort_by(-.z) | .[:4][] |
     "        flagged \(.metric): \(.value | floor) vs \(.reference | floor) +- \(.spread | floor) (z \(.z * 10 | floor / 10))")'
echo
echo "== verdict"
jq -r '.result | "   verdict: \(.verdict)", "   path:    \(.path | join(" -> "))", "   leaf:    \(.leaf)", "   summary: \(.summary)"' <<<"$RESULT"
jq -r '.result.unavailable | if length > 0 then "   not measurable here: " + (map(.node) | join(", ")) else empty end' <<<"$RESULT"
jq -r '.result.overhead[] | select(.ns_per_run) | "   probe overhead L\(.level): \(.ns_per_run | floor) ns per program run, \(.overhead_fraction * 10000 | floor / 100)% of the run"' <<<"$RESULT"
awk -v a="$T0" -v b="$T1" 'BEGIN { printf "   time to diagnosis: %.1f s (with a stored reference)\n", b - a }'
