#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole test suite: dependencies, a normal build and its tests, then an
# ASan+UBSan build and its tests. Needs root (probes load into the kernel).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh

echo "== build"
BUILD_DIR=build ./scripts/build.sh
echo "== tests"
(cd build && ctest --output-on-failure --timeout 900)

echo "== sanitizer build (ASan + UBSan)"
BUILD_DIR=build-asan ./scripts/build.sh -DARGUS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
echo "== tests under sanitizers"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --output-on-failure --timeout 900 -LE slow)
echo "== all tests passed"
