#!/bin/sh
# SPDX-License-Identifier: MIT
# Configure and build into BUILD_DIR (default: build). Extra arguments go to cmake.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr -DARGUS_WERROR=ON "$@" >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A failed build stops here, tests included: nothing runs on a partial build.
if ! make -C "$BUILD_DIR" -j"$(nproc)" --no-print-directory >"$log" 2>&1; then
	cat "$log" >&2
	echo "build: make failed in $BUILD_DIR" >&2
	exit 1
fi
grep -v -E '^\[|Built target|Generating|Scanning|Consolidate' "$log" || true
test -x "$BUILD_DIR/argusd"
