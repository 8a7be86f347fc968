#!/bin/sh
# SPDX-License-Identifier: MIT
# systemd-analyze verify accepts the unit, with ExecStart pointing at the
# binary just built (verify checks that the executable exists), and
# systemd-analyze security rates its exposure at most MAX_EXPOSURE.
set -eu
src=$1
build=$2
MAX_EXPOSURE=4.0
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

# The unit file as installed, judged without a running manager (systemd is not
# PID 1 here). "→ Overall exposure level for argusd.service: 3.9 OK 🙂"
out=$(systemd-analyze security --offline=yes --no-pager "$tmp/argusd.service" 2>&1) || {
	echo "$out"
	echo "systemd-analyze security failed"
	exit 1
}
level=$(echo "$out" | sed -n 's/.*Overall exposure level for argusd\.service: \([0-9][0-9.]*\).*/\1/p')
if [ -z "$level" ]; then
	echo "$out"
	echo "no 'Overall exposure level' line in systemd-analyze security's output"
	exit 1
fi
if ! awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(l + 0 <= m + 0) }'; then
	# what is still exposed, for whoever tightens the unit
	echo "$out" | grep '✗' || true
	echo "exposure $level is above $MAX_EXPOSURE"
	exit 1
fi
echo "exposure $level (at most $MAX_EXPOSURE)"
