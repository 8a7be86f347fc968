#!/bin/sh
# SPDX-License-Identifier: MIT
# Install what argusd needs to build, test and run, from Debian 12's archive.
# Only missing packages are installed; safe to run again.
set -eu

# libclang-rt-dev: clang's libFuzzer and sanitizer runtimes (scripts/fuzz.sh);
# debhelper and lintian: the Debian packages (debian/), built and checked by
# tests/test-systemd-boot.sh; python3-yaml and python3-jsonschema: the check of
# schema/openapi.yaml (test-openapi); chromium: the trace page rendered
# headless (test-trace-page); iproute2: tc, the rate limit on a test's own
# loopback (test-probe transmit); e2fsprogs: the journaled file system
# test-probe's journal test mounts. QEMU, for the stock kernel's tests, which
# run apart, is installed by scripts/test-stock-kernel.sh.
PACKAGES="build-essential cmake pkg-config clang libclang-rt-dev llvm bpftool libbpf-dev \
libelf-dev libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev libsystemd-dev libsqlite3-dev \
sqlite3 curl jq systemd debootstrap python3 util-linux debhelper lintian \
python3-yaml python3-jsonschema chromium iproute2 e2fsprogs"

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root" >&2
	exit 1
fi
missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "install-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
