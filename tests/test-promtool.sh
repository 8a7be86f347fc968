#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /metrics as Prometheus reads it: test-api scrapes the metrics after its
# jobs ran (ARGUS_METRICS_OUT), and `promtool check metrics` must accept the
# text. promtool is Debian's (package prometheus), taken out of the package
# into a cache rather than installed, so that no Prometheus server is set
# up on the machine: $ARGUS_ROOTFS_CACHE (default /var/cache/argusd-test)/promtool.
#
# Environment: ARGUS_SOURCE_DIR, ARGUS_BUILD_DIR (set by CTest). Exit
# status: 0 pass, 1 fail.
set -eu

BUILD=${ARGUS_BUILD_DIR:?}
CACHE=${ARGUS_ROOTFS_CACHE:-/var/cache/argusd-test}/promtool
PROMTOOL=$(command -v promtool || true)

if [ -z "$PROMTOOL" ]; then
	PROMTOOL=$CACHE/usr/bin/promtool
	if [ ! -x "$PROMTOOL" ]; then
		tmp=$(mktemp -d)
		# apt's download user cannot write into a root-only temporary directory
		chmod 0755 "$tmp"
		if ! (cd "$tmp" && apt-get download prometheus >/dev/null 2>&1); then
			rm -rf "$tmp"
			echo "test-promtool: cannot download Debian's prometheus package (apt)" >&2
			exit 1
		fi
		mkdir -p "$CACHE"
		dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
		install -D -m 0755 "$tmp/x/usr/bin/promtool" "$PROMTOOL"
		rm -rf "$tmp"
	fi
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
ARGUS_METRICS_OUT=$out "$BUILD/test-api" >/dev/null 2>&1 ||
	{ echo "test-promtool: test-api failed" >&2; exit 1; }
[ -s "$out" ] || { echo "test-promtool: test-api wrote no metrics" >&2; exit 1; }
if ! problems=$("$PROMTOOL" check metrics <"$out" 2>&1); then
	echo "test-promtool: promtool check metrics refused the text:" >&2
	echo "$problems" >&2
	exit 1
fi
if [ -n "$problems" ]; then
	echo "test-promtool: promtool check metrics: $problems" >&2
	exit 1
fi
echo "test-promtool: $(grep -c '^# TYPE' "$out") families, $(grep -vc '^#' "$out") samples accepted by promtool"

# The Grafana dashboard (packaging/grafana-argusd.json) asks only for metrics argusd exports.
dash=${ARGUS_SOURCE_DIR:?}/packaging/grafana-argusd.json
missing=0
for name in $(jq -r '.panels[].targets[].expr' "$dash" | grep -o 'argusd_[a-z_]*' | sort -u); do
	base=$(echo "$name" | sed 's/_bucket$//; s/_sum$//; s/_count$//')
	if ! grep -q "^# TYPE $base " "$out"; then
		echo "test-promtool: the dashboard asks for $name, which /metrics lacks" >&2
		missing=$((missing + 1))
	fi
done
[ "$missing" = 0 ] || exit 1
echo "test-promtool: the dashboard's $(jq '[.panels[].targets[]] | length' "$dash") queries name only exported metrics"
