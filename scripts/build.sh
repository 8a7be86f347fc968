#!/bin/sh
# SPDX-License-Identifier: MIT
# Configure and build into BUILD_DIR (default: build). Extra arguments go to cmake.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr "$@" >/dev/null
make -C "$BUILD_DIR" -j"$(nproc)" --no-print-directory 2>&1 | grep -v -E '^\[|Built target|Generating|Scanning|Consolidate' || true
test -x "$BUILD_DIR/argusd"
