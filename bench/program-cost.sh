#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What argusd's reference probe costs a real program: the workload's runs
# under a reference job beside the same runs without argusd, alternated
# round after round (the host's pace moves by more than the probe costs
# between minutes, so only runs side by side compare). Each round runs the
# workload RUNS times by itself (as its user, on its CPUs, from an empty
# environment) and records a reference of RUNS runs (argusd extends a noisy
# one to ten); the order flips every round. Prints each round's medians and
# their ratio (and the host's pace argusd read after the reference's runs),
# then the median of the rounds' ratios and the medians of all
# runs.
#
#   bench/program-cost.sh WORKLOAD [ROUNDS] [RUNS]   (default 5 rounds of 3 runs)
#
# WORKLOADS_DIR names the directory of the workload's definition (default
# the bundled workloads/). Needs root and a build in build/ (BUILD to
# override). The unprobed runs are timed from outside (date around the
# exec), argusd's by argusd (target/wall_ns): a few ms apart on a program's
# start, which matters only for runs of a few tens of ms.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${BUILD:-$SRC/build}
WORKLOADS_DIR=${WORKLOADS_DIR:-$SRC/workloads}
WL=${1:?usage: bench/program-cost.sh WORKLOAD [ROUNDS] [RUNS]}
ROUNDS=${2:-5}
RUNS=${3:-3}
DEF=$WORKLOADS_DIR/$WL.json

[ "$(id -u)" = 0 ] || { echo "program-cost: run as root" >&2; exit 2; }
[ -x "$BUILD/argusd" ] || { echo "program-cost: build first (scripts/build.sh)" >&2; exit 2; }
[ -r "$DEF" ] || { echo "program-cost: no workload $DEF" >&2; exit 2; }
case "$ROUNDS$RUNS" in *[!0-9]*) echo "program-cost: ROUNDS and RUNS are numbers" >&2; exit 2 ;; esac
[ "$ROUNDS" -ge 1 ] && [ "$RUNS" -ge 3 ] && [ "$RUNS" -le 20 ] ||
	{ echo "program-cost: at least 1 round, 3 to 20 runs (a reference's K)" >&2; exit 2; }
. "$SRC/bench/argusd-run.sh"
argusd_workdir program-cost

argusd_start
mapfile -t ARGV < <(jq -r '.argv[]' "$DEF")
[[ "${ARGV[0]}" == */* ]] || ARGV[0]=$D/programs/${ARGV[0]}
USER_=$(jq -r '.user // "nobody"' "$DEF")
CPUS=$(jq -r '.cpus // empty' "$DEF")
PIN=()
[ -z "$CPUS" ] || PIN=(taskset -c "$CPUS")

# One run of the workload without argusd; prints its wall time in s.
unprobed_run() {
	local t0 t1
	t0=$(date +%s.%N)
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin runuser -u "$USER_" -- "${PIN[@]}" \
		"${ARGV[@]}" >/dev/null 2>&1 ||
		{ echo "program-cost: $WL failed without argusd" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# One reference job of RUNS runs; prints its runs' wall times in s and the
# host's pace read after each (ns a load, daemon/host_pace.h), a line each.
probed_runs() {
	local job
	job=$(argusd_post /references "{\"workload\": \"$WL\", \"repeats\": $RUNS}")
	[ -n "$job" ] || { echo "program-cost: argusd refused the reference" >&2; exit 1; }
	argusd_finish "$job"
	curl -sf "$API/jobs/$job" | jq -r '.result.runs[] | "\(.wall_s) \(.host_pace.ns_per_load // "")"'
}

echo "# $WL ($DEF): $ROUNDS rounds of $RUNS runs each way, order flipped each round"
printf '%-6s %-9s %14s %14s %8s %7s\n' round first "unprobed s" "reference s" ratio pace
: >"$D/all-unprobed"
: >"$D/all-probed"
: >"$D/ratios"
for r in $(seq 1 "$ROUNDS"); do
	: >"$D/unprobed"
	: >"$D/probed"
	if [ $((r % 2)) = 1 ]; then first=unprobed; else first=reference; fi
	for side in $first $([ $first = unprobed ] && echo reference || echo unprobed); do
		if [ "$side" = unprobed ]; then
			for _ in $(seq 1 "$RUNS"); do unprobed_run >>"$D/unprobed"; done
		else
			probed_runs >>"$D/probed"
		fi
	done
	u=$(median <"$D/unprobed")
	p=$(cut -d' ' -f1 "$D/probed" | median)
	pace=$(cut -d' ' -f2 -s "$D/probed" | median)
	ratio=$(echo "$p / $u" | bc -l)
	cat "$D/unprobed" >>"$D/all-unprobed"
	cat "$D/probed" >>"$D/all-probed"
	echo "$ratio" >>"$D/ratios"
	printf '%-6s %-9s %14.3f %14.3f %8.3f %7s   unprobed %s; reference %s\n' "$r" "$first" "$u" \
		"$p" "$ratio" "${pace:--}" "$(printf '%.3f ' $(cat "$D/unprobed"))" \
		"$(printf '%.3f ' $(cut -d' ' -f1 "$D/probed"))"
done
printf 'median of the rounds'"'"' ratios: %.3f (reference over unprobed)\n' "$(median <"$D/ratios")"
printf 'all runs: unprobed median %.3f s (%d runs), reference median %.3f s (%d runs)\n' \
	"$(median <"$D/all-unprobed")" "$(wc -l <"$D/all-unprobed")" \
	"$(cut -d' ' -f1 "$D/all-probed" | median)" "$(wc -l <"$D/all-probed")"
# Whether the host's pace followed the program's speed: Pearson's r of the
# reference's runs' wall times against the readings after them.
awk 'NF == 2 { n++; x += $1; y += $2; xx += $1 * $1; yy += $2 * $2; xy += $1 * $2 }
	END { d = sqrt((n * xx - x * x) * (n * yy - y * y));
	      if (n > 2 && d > 0) printf "the reference runs'"'"' wall against the host'"'"'s pace read after each: r %.2f over %d runs\n", (n * xy - x * y) / d, n }' \
	"$D/all-probed"
