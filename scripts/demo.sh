#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One real diagnosis, end to end, through the HTTP API with argusctl:
#   build -> start argusd on loopback with a temporary state directory ->
#   record a reference of a bundled workload on the quiet system ->
#   start a perturber on the other CPU -> POST /diagnose -> follow it ->
#   print the verdict, the path and the descent -> stop everything.
#
# Environment: WORKLOAD (default pf_page_cache), PERTURBER (default
# cache_dropper), PERTURBER_CPU (default 1), REPEATS (default 3),
# BUILD_DIR (default build, under the checkout).
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
BUILD_DIR=${BUILD_DIR:-build}
BUILD_DIR=$BUILD_DIR ./scripts/build.sh
BUILD=$SRC/$BUILD_DIR

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
services_dir = $STATE/no-services
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
# Reads over TCP; writes over the control socket, where root may do everything:
# argusctl uses the socket for all of it.
API="http://127.0.0.1:$PORT"
SOCK=$STATE/state/argusd.sock
CTL=("$BUILD/ctl/argusctl" --socket "$SOCK")
grep -E "tree .* resolved" "$STATE/argusd.log" | sed 's/^<[0-9]>/   /'
echo "   API on $API (reads), control socket $SOCK (writes)"

# argusctl follows each job: progress lines as they change (one line rewritten
# in place on a terminal); a job that does not succeed exits 2, saying why.
echo "== recording a reference for $WORKLOAD on the quiet system ($REPEATS runs)"
"${CTL[@]}" reference "$WORKLOAD" --repeats "$REPEATS" | tee "$STATE/reference.out"
REF=$(sed -n 's/^   reference \([0-9][0-9]*\): .*/\1/p' "$STATE/reference.out")
[ -n "$REF" ] || { echo "demo: argusctl named no reference" >&2; exit 1; }

echo "== perturbing: $PERTURBER on CPU $PERTURBER_CPU"
"$BUILD/bench/perturbers/$PERTURBER" --cpu "$PERTURBER_CPU" >"$STATE/perturber.log" 2>&1 &
PERTURBER_PID=$!
sleep 1

echo "== POST /diagnose {\"workload\": \"$WORKLOAD\", \"reference\": $REF}: argusctl diagnose --follow"
T0=$(date +%s.%N)
# then the descent (GET /jobs/ID/trace) and the verdict; exit 0: no bottleneck,
# 1: a path named, 2: the job or a request failed
DIAG_RC=0
"${CTL[@]}" diagnose "$WORKLOAD" --reference "$REF" --follow || DIAG_RC=$?
T1=$(date +%s.%N)
[ "$DIAG_RC" -le 1 ] || exit 1

kill -TERM "$PERTURBER_PID" && wait "$PERTURBER_PID" 2>/dev/null || true
PERTURBER_PID=""

awk -v a="$T0" -v b="$T1" 'BEGIN { printf "   time to diagnosis: %.1f s (with a stored reference)\n", b - a }'
