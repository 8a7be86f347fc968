#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every libFuzzer target of fuzz/ for SECONDS each (default 30) on its
# seed corpus (fuzz/corpus/TARGET, read only) and its working corpus
# (BUILD_DIR/fuzz-corpus/TARGET, kept between runs), as many targets at a
# time as there are CPUs. Prints each target's
# executions and whether it found anything; exits non-zero when one found
# a crash, a leak, a timeout or a broken property (the input is kept under
# BUILD_DIR/fuzz-artifacts/TARGET, the output in BUILD_DIR/fuzz-logs).
#
#   scripts/fuzz.sh [--build] [SECONDS] [TARGET...]
#
# --build first configures and builds BUILD_DIR (default build-fuzz) with
# clang and -DARGUS_FUZZ=ON. TARGET is a name such as "gate" (fuzz/fuzz-gate.c);
# none means all of them.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-fuzz}

build=0
if [ "${1:-}" = "--build" ]; then
	build=1
	shift
fi
seconds=${1:-30}
case $seconds in
'' | *[!0-9]* | 0)
	echo "usage: $0 [--build] [SECONDS] [TARGET...]" >&2
	exit 2
	;;
esac
[ $# -gt 0 ] && shift

targets=$*
if [ -z "$targets" ]; then
	for src in fuzz/fuzz-*.c; do
		t=${src#fuzz/fuzz-}
		targets="$targets ${t%.c}"
	done
fi

if [ $build = 1 ]; then
	clang=$(command -v clang || true)
	if [ -z "$clang" ]; then
		echo "fuzz: clang is not installed (scripts/install-deps.sh)" >&2
		exit 1
	fi
	log=$(mktemp)
	if ! cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER="$clang" -DARGUS_FUZZ=ON \
		-DARGUS_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 ||
		! make -C "$BUILD_DIR" -j"$(nproc)" --no-print-directory fuzz >>"$log" 2>&1; then
		grep -v -E '^\[|Built target|Generating|Scanning|Consolidate' "$log" >&2 || true
		rm -f "$log"
		echo "fuzz: building $BUILD_DIR failed" >&2
		exit 1
	fi
	rm -f "$log"
fi

# Per-target options: objects are larger than text inputs; the source
# target runs clang for the sources the filter accepts.
options() {
	case $1 in
	gate) echo "-max_len=65536 -timeout=20" ;;
	source) echo "-max_len=8192 -timeout=90" ;;
	*) echo "-max_len=8192 -timeout=20" ;;
	esac
}

# One target: its log in BUILD_DIR/fuzz-logs/TARGET.log, its line of the
# report in TARGET.result, and TARGET.failed when it found something.
fuzz_one() {
	t=$1
	bin=$BUILD_DIR/fuzz-$t
	work=$BUILD_DIR/fuzz-corpus/$t
	artifacts=$BUILD_DIR/fuzz-artifacts/$t
	logs=$BUILD_DIR/fuzz-logs
	mkdir -p "$work" "$artifacts" "$logs"
	log=$logs/$t.log
	rm -f "$logs/$t.result" "$logs/$t.failed"
	# shellcheck disable=SC2046 # the options are words to split
	set -- -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 \
		-artifact_prefix="$artifacts/" $(options "$t")
	[ -f "fuzz/dict/$t.dict" ] && set -- "$@" -dict="fuzz/dict/$t.dict"
	set -- "$@" "$work"
	[ -d "fuzz/corpus/$t" ] && set -- "$@" "fuzz/corpus/$t"
	rc=0
	ARGUS_SOURCE_DIR=$(pwd) ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" "$@" >"$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	[ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
	corpus=$(find "$work" -type f | wc -l)
	if [ $rc = 0 ]; then
		echo "fuzz-$t: ${runs:-?} executions in ${seconds} s, corpus $corpus, nothing found" \
			>"$logs/$t.result"
	else
		found=$(grep -a -o -E "Test unit written to [^ ]*" "$log" |
			sed 's/.* written to //' | tail -n 1)
		{
			echo "fuzz-$t: FOUND after ${runs:-?} executions (exit $rc): ${found:-see $log}"
			grep -a -E 'ERROR|SUMMARY|property failed|runtime error|deadly signal|timeout' \
				"$log" | head -n 8 | sed 's/^/    /'
		} >"$logs/$t.result"
		: >"$logs/$t.failed"
	fi
}

for t in $targets; do
	if [ ! -x "$BUILD_DIR/fuzz-$t" ]; then
		echo "fuzz: $BUILD_DIR/fuzz-$t is missing: run $0 --build" >&2
		exit 1
	fi
done
# Each target is one process on one CPU: as many lanes as CPUs, each
# running its share of the targets in turn, so that the whole takes
# SECONDS x targets / CPUs and every target still gets its SECONDS.
lanes=$(nproc)
lane=0
while [ $lane -lt "$lanes" ]; do
	(
		i=0
		for t in $targets; do
			[ $((i % lanes)) = $lane ] && fuzz_one "$t"
			i=$((i + 1))
		done
	) &
	lane=$((lane + 1))
done
wait
failed=""
for t in $targets; do
	cat "$BUILD_DIR/fuzz-logs/$t.result"
	[ -e "$BUILD_DIR/fuzz-logs/$t.failed" ] && failed="$failed $t"
done
if [ -n "$failed" ]; then
	echo "fuzz: found something in:$failed (logs in $BUILD_DIR/fuzz-logs)" >&2
	exit 1
fi
