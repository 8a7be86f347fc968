#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole test suite: dependencies, a release build and its tests, then an
# ASan+UBSan build and its tests, then the fuzzers. Needs root (probes load into the kernel).
# A skip that tests/skips.allowed does not list fails the suite.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh

# The host's own memory reclaim (DAMON's pageout, free page reporting) held
# for the suite, given back however it ends (scripts/reclaim.sh says why).
. ./scripts/reclaim.sh
trap 'reclaim_release' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
reclaim_hold

# Run ctest in build dir $1 with the remaining arguments, one test per CPU
# where a test may run beside another (CMakeLists.txt: the rest run alone);
# fail on a failed test or on a skip that is not allowed.
run_ctest() {
	dir=$1
	shift
	out=$(mktemp)
	rc=0
	(cd "$dir" && ctest --output-on-failure --timeout 900 -j"$(nproc)" "$@") 2>&1 | tee "$out" || rc=$?
	# tee hides ctest's status in a plain sh pipeline: read it from the summary.
	grep -q '^100% tests passed' "$out" || rc=1
	./scripts/check-skips.sh "$dir" "$out" || rc=1
	# A log that is cut in the middle keeps its end: the failures again, last.
	if [ $rc -ne 0 ]; then
		echo "== what failed in $dir"
		grep -E '^(FAIL|FATAL) |^SUMMARY: |^(free|malloc|realloc)\(\)|^double free|^corrupted|Sanitizer|runtime error|\(\+0x[0-9a-f]+\)\[0x|\*\*\*|^[[:space:]]+[0-9]+ - ' \
			"$out" | head -n 80 || true
	fi
	rm -f "$out"
	return $rc
}

# Every test runs at least once. On the release build (what the package
# ships) the test labelled release, the probe's measurements, and those
# labelled slow too (the matrix slice, which drives the daemon through
# diagnoses of perturbed workloads, the packages under systemd, the probe in
# a new PID namespace, the probe's reclaim test, which fills the memory),
# which the sanitizers would distort or make too long.
# Under ASan and UBSan every test that is not slow, the release one again. test-stock-kernel (label vm) boots Debian's stock
# kernel in QEMU: run by scripts/test-stock-kernel.sh, apart (README,
# "Testing").
echo "== build"
BUILD_DIR=build ./scripts/build.sh
echo "== tests on the release build (labels release and slow)"
run_ctest build -L 'release|slow' -LE vm

echo "== sanitizer build (ASan + UBSan)"
BUILD_DIR=build-asan ./scripts/build.sh -DARGUS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
echo "== tests under sanitizers (all but those labelled slow)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_ctest build-asan -LE 'slow|vm'
echo "== fuzzing (libFuzzer targets of fuzz/, clang, 10 s each)"
./scripts/fuzz.sh --build 10
echo "== all tests passed"
