# SPDX-License-Identifier: MIT
# Sourced by the benchmarks that drive a real argusd (bash): start one on
# loopback with a state directory under $D, submit jobs over its control
# socket, follow them by long polls. Needs SRC (the checkout), BUILD and D
# (a directory of the caller's, 0755, removed by it; argusd_workdir makes one);
# WORKLOADS_DIR, where set, the workloads' directory (default the bundled
# workloads/); ARGUSD_CONF_EXTRA, where set, lines added to its configuration.

# Start argusd on a free port; sets ARGUSD_PID, PORT, API and ARGUSD_T0 (when it was
# started, date +%s.%N: the programs are staged before), or exits.
argusd_start() {
	local _
	"$SRC/scripts/stage-programs.sh" "$BUILD" "$D/programs"
	cat >"$D/argusd.conf" <<CONF
listen = 127.0.0.1:0
state_dir = $D/state
workloads_dir = ${WORKLOADS_DIR:-$SRC/workloads}
services_dir = $D/no-services
victims_dir = $D/programs
tree_file = $SRC/tree-data/tree.json
schema_dir = $SRC/schema
${ARGUSD_CONF_EXTRA:-}
CONF
	ARGUSD_T0=$(date +%s.%N)
	"$BUILD/argusd" --config "$D/argusd.conf" 2>"$D/argusd.log" &
	ARGUSD_PID=$!
	PORT=""
	for _ in $(seq 1 3000); do
		PORT=$(sed -n 's/.*argusd ready: .*(port \([0-9]*\)).*/\1/p' "$D/argusd.log")
		[ -n "$PORT" ] && break
		kill -0 "$ARGUSD_PID" 2>/dev/null || { cat "$D/argusd.log" >&2; exit 1; }
		sleep 0.01
	done
	[ -n "$PORT" ] || { echo "argusd did not become ready" >&2; exit 1; }
	API=http://127.0.0.1:$PORT
}

# POST body $2 to path $1 over the control socket; prints the job's id.
argusd_post() {
	curl -sf --unix-socket "$D/state/argusd.sock" -X POST \
		-H 'Content-Type: application/json' -d "$2" "http://localhost$1" | jq -r .id
}

# Follow job $1 to its end by long polls (each answers when the job changes); exits unless it succeeded.
argusd_finish() {
	local job
	job=$(curl -sf "$API/jobs/$1")
	while ! jq -e '.state | IN("succeeded", "failed", "cancelled", "interrupted")' \
		<<<"$job" >/dev/null; do
		job=$(curl -sf "$API/jobs/$1?wait=30")
	done
	jq -e '.state == "succeeded"' <<<"$job" >/dev/null || { echo "job $1: $job" >&2; exit 1; }
}

# Stop the argusd argusd_start started, if it runs (for a caller's exit trap too).
argusd_stop() {
	[ -n "${ARGUSD_PID:-}" ] || return 0
	kill -TERM "$ARGUSD_PID" 2>/dev/null || true
	wait "$ARGUSD_PID" 2>/dev/null || true
	ARGUSD_PID=""
}

# For a benchmark whose only state is argusd's: make D, a fresh 0755 directory
# named after $1, and on exit stop argusd and remove D.
argusd_workdir() {
	D=$(mktemp -d "/tmp/argusd-$1.XXXXXX")
	chmod 0755 "$D"
	ARGUSD_PID=""
	trap 'argusd_stop; rm -rf "$D"' EXIT
}

# The median of the numbers on standard input, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
