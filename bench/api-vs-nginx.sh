#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The API's speed against a static server, side by side in one run: argusd
# answers GET /jobs/ID, its trace and GET /tree for a real finished
# diagnosis; nginx (Debian's package) serves the same bytes from files; wrk
# loads each with 64 connections from the other CPU. Rounds alternate the
# two servers and the routes, so the machine's drift falls on both alike.
#
#   bench/api-vs-nginx.sh [ROUNDS] [SECONDS]     (default 3 rounds of 5 s)
#
# Both servers run on CPU 0 (argusd's threads moved there after the
# diagnosis, nginx with one worker pinned there), wrk on CPU 1. Prints
# requests per second, errors, and argusd/nginx per route (the median of
# the rounds' ratios). Needs root (the diagnosis loads probes), nginx and
# wrk (installed with apt when missing), and a build in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${BUILD:-$SRC/build}
ROUNDS=${1:-3}
SECS=${2:-5}
CONNS=64

[ "$(id -u)" = 0 ] || { echo "api-vs-nginx: run as root" >&2; exit 2; }
for tool in nginx wrk jq curl; do
	if ! command -v "$tool" >/dev/null; then
		pkg=$tool
		[ "$tool" = nginx ] && pkg=nginx-light
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null
	fi
done
[ -x "$BUILD/argusd" ] || { echo "api-vs-nginx: build first (scripts/build.sh)" >&2; exit 2; }

D=$(mktemp -d /tmp/argusd-api-bench.XXXXXX)
chmod 0755 "$D"
ARGUSD_PID="" NGINX_PID="" HOG_PID=""
cleanup() {
	for pid in $HOG_PID $NGINX_PID $ARGUSD_PID; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$D"
}
trap cleanup EXIT

# ---- argusd with one finished diagnosis (a CPU hog beside pf_zero_page) ----
. "$SRC/bench/argusd-run.sh"
argusd_start
echo "== a finished diagnosis to serve (reference of pf_zero_page, then a CPU hog on CPU 0)"
REF_JOB=$(argusd_post /references '{"workload": "pf_zero_page", "repeats": 3}')
argusd_finish "$REF_JOB"
"$BUILD/bench/perturbers/cpu_hog" --cpu 0 >"$D/hog.log" 2>&1 &
HOG_PID=$!
sleep 1
JOB=$(argusd_post /diagnose '{"workload": "pf_zero_page"}')
argusd_finish "$JOB"
kill -TERM "$HOG_PID" && wait "$HOG_PID" 2>/dev/null || true
HOG_PID=""
echo "   job $JOB: $(curl -sf "$API/jobs/$JOB" | jq -r '.result | "\(.verdict) \(.path | join("."))"')"

# ---- the same bytes for nginx ----
mkdir -p "$D/www"
curl -sf "$API/jobs/$JOB" >"$D/www/job.json"
curl -sf "$API/jobs/$JOB/trace" >"$D/www/trace.json"
curl -sf "$API/tree" >"$D/www/tree.json"
chmod -R a+rX "$D/www"
NPORT=$((PORT + 1))
while curl -s "http://127.0.0.1:$NPORT/" >/dev/null 2>&1; do NPORT=$((NPORT + 1)); done
cat >"$D/nginx.conf" <<EOF
daemon off;
worker_processes 1;
worker_cpu_affinity 01;
pid $D/nginx.pid;
error_log $D/nginx-error.log;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	default_type application/json;
	server {
		listen 127.0.0.1:$NPORT;
		root $D/www;
	}
}
EOF
nginx -c "$D/nginx.conf" -p "$D" &
NGINX_PID=$!
for _ in $(seq 1 50); do
	curl -sf "http://127.0.0.1:$NPORT/job.json" >/dev/null 2>&1 && break
	sleep 0.1
done
taskset -a -p -c 0 "$ARGUSD_PID" >/dev/null
for f in job trace tree; do
	cmp -s <(curl -sf "http://127.0.0.1:$NPORT/$f.json") "$D/www/$f.json" ||
		{ echo "nginx does not serve $f.json" >&2; exit 1; }
done
ETAG=$(curl -sfI "$API/jobs/$JOB" | sed -n 's/^ETag: *\(.*\)\r$/\1/ip')
NETAG=$(curl -sfI "http://127.0.0.1:$NPORT/job.json" | sed -n 's/^ETag: *\(.*\)\r$/\1/ip')
echo "   bodies: job $(stat -c %s "$D/www/job.json") B, trace $(stat -c %s "$D/www/trace.json") B, tree $(stat -c %s "$D/www/tree.json") B"

# ---- load ----
# wrk on CPU 1: "REQS ERRORS" (errors: non-2xx/3xx answers and socket errors)
load() {
	local url=$1 header=${2:-} out
	if [ -n "$header" ]; then
		out=$(taskset -c 1 wrk -t1 -c$CONNS -d"${SECS}s" -H "$header" "$url")
	else
		out=$(taskset -c 1 wrk -t1 -c$CONNS -d"${SECS}s" "$url")
	fi
	awk '/Requests\/sec:/ { r = $2 }
	     /Non-2xx or 3xx responses:/ { e += $NF }
	     /Socket errors:/ { gsub(",", ""); e += $4 + $6 + $8 + $10 }
	     END { printf "%.0f %d\n", r, e }' <<<"$out"
}

ROUTES=("GET /jobs/ID" "GET /jobs/ID/trace" "GET /tree" "GET /jobs/ID, If-None-Match")
A_URL=("$API/jobs/$JOB" "$API/jobs/$JOB/trace" "$API/tree" "$API/jobs/$JOB")
N_URL=("http://127.0.0.1:$NPORT/job.json" "http://127.0.0.1:$NPORT/trace.json"
	"http://127.0.0.1:$NPORT/tree.json" "http://127.0.0.1:$NPORT/job.json")
A_HDR=("" "" "" "If-None-Match: $ETAG")
N_HDR=("" "" "" "If-None-Match: $NETAG")
declare -A A N AE NE
echo "== $ROUNDS rounds of ${SECS} s per route and server, $CONNS connections, wrk on CPU 1"
for r in $(seq 1 "$ROUNDS"); do
	for i in "${!ROUTES[@]}"; do
		# alternate which server goes first
		if [ $(((r + i) % 2)) = 0 ]; then order="a n"; else order="n a"; fi
		for who in $order; do
			if [ "$who" = a ]; then
				read -r q e < <(load "${A_URL[$i]}" "${A_HDR[$i]}")
				A[$i,$r]=$q AE[$i]=$((${AE[$i]:-0} + e))
			else
				read -r q e < <(load "${N_URL[$i]}" "${N_HDR[$i]}")
				N[$i,$r]=$q NE[$i]=$((${NE[$i]:-0} + e))
			fi
		done
	done
done

printf '\n%-28s %12s %12s %8s %8s %8s\n' route "argusd r/s" "nginx r/s" ratio "err a" "err n"
for i in "${!ROUTES[@]}"; do
	am=$(for r in $(seq 1 "$ROUNDS"); do echo "${A[$i,$r]}"; done | median)
	nm=$(for r in $(seq 1 "$ROUNDS"); do echo "${N[$i,$r]}"; done | median)
	ratio=$(for r in $(seq 1 "$ROUNDS"); do
		awk -v a="${A[$i,$r]}" -v n="${N[$i,$r]}" 'BEGIN { print (n > 0) ? a / n : 0 }'
	done | median)
	printf '%-28s %12.0f %12.0f %7.2fx %8d %8d\n' "${ROUTES[$i]}" "$am" "$nm" "$ratio" \
		"${AE[$i]}" "${NE[$i]}"
done
