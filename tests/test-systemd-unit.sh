#!/bin/sh
# SPDX-License-Identifier: MIT
# systemd-analyze verify accepts the unit, with ExecStart pointing at the
# binary just built (verify checks that the executable exists).
set -eu
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=[^ ]*/argusd|ExecStart=$build/argusd|" "$build/argusd.service" >"$tmp/argusd.service"
out=$(systemd-analyze verify "$tmp/argusd.service" 2>&1) || {
	echo "$out"
	exit 1
}
# verify prints warnings without failing: any line about our unit is a failure
if echo "$out" | grep -q "argusd.service"; then
	echo "$out"
	exit 1
fi
grep -q '^Type=notify' "$tmp/argusd.service"
grep -q '^WatchdogSec=' "$tmp/argusd.service"
echo "unit accepted"
