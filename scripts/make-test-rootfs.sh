#!/bin/bash
# SPDX-License-Identifier: MIT
# Make (or reuse) a cached Debian root filesystem for the systemd boot test.
#
#   make-test-rootfs.sh PACKAGE...
#
# Prints the path of the root filesystem on its last line of stdout. The
# rootfs is a debootstrap minbase of $SUITE with PACKAGE... included, cached
# under $ARGUS_ROOTFS_CACHE (default /var/cache/argusd-test) in a directory
# named by a hash of the suite, architecture and package list, so a later run
# with the same list reuses it. It is built in a temporary directory and
# renamed into place only when complete: an interrupted build leaves no half
# rootfs (a leftover temporary directory is removed by the next build).
#
# The mirror is taken at run time from this machine's apt configuration
# (sources.list, sources.list.d/*.list and *.sources); no host name is written
# here. Exit status: 0 with the path printed; 77 when the rootfs cannot be made
# here (not root, no debootstrap, no mirror configured or reachable; the
# reason on stderr); 1 on any other failure.
set -eu

SUITE=${ARGUS_ROOTFS_SUITE:-bookworm}
CACHE=${ARGUS_ROOTFS_CACHE:-/var/cache/argusd-test}
# Bump when the way the rootfs is made changes, so that old caches are not reused.
FORMAT=1

log() { echo "make-test-rootfs: $*" >&2; }
skip() {
	log "cannot make the rootfs: $*"
	exit 77
}
die() {
	log "$*"
	exit 1
}

# Print the URIs of deb (binary) entries for $SUITE in one-line format files.
uris_from_list() {
	# deb [opts] URI SUITE COMPONENTS...; the [opts] may contain spaces
	sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$@" 2>/dev/null |
		awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2 }'
}

# Print the URIs of enabled deb entries for $SUITE in deb822 .sources files.
uris_from_sources() {
	awk -v suite="$SUITE" '
	function flush() {
		if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " suite " "))
			print uris
		types = ""; uris = ""; suites = ""; enabled = ""
	}
	FNR == 1 { flush() }
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	{
		key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
		if (key == "types") types = $0
		else if (key == "uris") uris = $0
		else if (key == "suites") suites = $0
		else if (key == "enabled") enabled = tolower($0)
	}
	END { flush() }' "$@" 2>/dev/null | tr ' ' '\n' | sed '/^$/d'
}

# The first http(s) mirror this machine's apt uses for $SUITE, without a trailing slash.
find_mirror() {
	local lists="" sources="" f

	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && lists="$lists $f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && sources="$sources $f"
	done
	{
		# shellcheck disable=SC2086
		[ -z "$lists" ] || uris_from_list $lists
		# shellcheck disable=SC2086
		[ -z "$sources" ] || uris_from_sources $sources
	} | grep -E '^https?://' | head -n 1 | sed 's|/*$||'
}

# Export apt's HTTP proxy for debootstrap's downloads, unless one is set already.
use_apt_proxy() {
	local proxy

	[ -z "${http_proxy:-}" ] || return 0
	proxy=$(apt-config shell P Acquire::http::Proxy 2>/dev/null | sed -n "s/^P='\(.*\)'$/\1/p")
	if [ -n "$proxy" ] && [ "$proxy" != DIRECT ]; then
		export http_proxy="$proxy" https_proxy="$proxy"
	fi
}

# Build the rootfs in $1/root from $2 (mirror) with the packages in $3
# (comma-separated). debootstrap runs in a private mount namespace, so that the
# /proc and /sys it mounts in the target never reach the host, even if it is
# interrupted, and in its own session, so that an interruption stops all of
# it (see stop_debootstrap); waiting in the background lets the trap run at once.
DEBOOTSTRAP_PID=""
build_rootfs() {
	local dir=$1 mirror=$2 include=$3 rc=0

	log "debootstrap $SUITE (minbase + $include): this takes a few minutes"
	setsid unshare --mount --propagation private \
		debootstrap --variant=minbase --arch="$ARCH" --include="$include" \
		"$SUITE" "$dir/root" "$mirror" >"$dir/debootstrap.log" 2>&1 </dev/null &
	DEBOOTSTRAP_PID=$!
	wait "$DEBOOTSTRAP_PID" || rc=$?
	DEBOOTSTRAP_PID=""
	if [ "$rc" != 0 ]; then
		tail -n 20 "$dir/debootstrap.log" >&2
		# Downloads that fail mean the mirror is not reachable from here.
		if grep -qE "Failed getting release file|Couldn't download|Couldn't retrieve|Failed to fetch" \
			"$dir/debootstrap.log"; then
			skip "debootstrap could not download from the mirror (see above)"
		fi
		die "debootstrap failed (exit $rc); log above"
	fi
	# The downloaded .debs are not needed any more.
	rm -f "$dir"/root/var/cache/apt/archives/*.deb
	mv "$dir/debootstrap.log" "$dir/root/var/log/argus-debootstrap.log"
}

# On interruption: end debootstrap's whole session (its downloads, dpkg), then
# let the EXIT trap remove the temporary directory.
stop_debootstrap() {
	if [ -n "$DEBOOTSTRAP_PID" ]; then
		kill -TERM -- "-$DEBOOTSTRAP_PID" 2>/dev/null || true
		wait "$DEBOOTSTRAP_PID" 2>/dev/null || true
	fi
	exit 1
}

main() {
	local packages include key dest tmp mirror

	[ "$(id -u)" = 0 ] || skip "not root"
	command -v debootstrap >/dev/null || skip "debootstrap is not installed (scripts/install-deps.sh)"
	command -v unshare >/dev/null || skip "unshare (util-linux) is missing"
	ARCH=$(dpkg --print-architecture 2>/dev/null) || skip "no dpkg: not a Debian host"

	packages=$(printf '%s\n' "$@" | sed '/^$/d' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
	[ -n "$packages" ] || die "usage: make-test-rootfs.sh PACKAGE..."
	include=$(echo "$packages" | tr ' ' ',')
	key=$(printf 'format=%s suite=%s arch=%s variant=minbase packages=%s\n' \
		"$FORMAT" "$SUITE" "$ARCH" "$packages" | sha256sum | cut -c1-16)
	dest=$CACHE/rootfs-$SUITE-$key

	if [ -f "$dest/complete" ]; then
		echo "$dest/root"
		return 0
	fi

	mkdir -p "$CACHE"
	# One builder at a time; the others wait and then find it done.
	exec 9>"$CACHE/.lock"
	flock -w 1800 9 || die "timed out waiting for another rootfs build ($CACHE/.lock)"
	if [ -f "$dest/complete" ]; then
		echo "$dest/root"
		return 0
	fi
	# Leftovers of interrupted builds (they hold no mounts: see build_rootfs).
	rm -rf --one-file-system "$CACHE"/.build.*

	mirror=$(find_mirror)
	[ -n "$mirror" ] || skip "no http(s) apt source for $SUITE in /etc/apt/sources.list{,.d}"
	use_apt_proxy
	curl -fsS -o /dev/null --max-time 20 "$mirror/dists/$SUITE/Release" ||
		skip "the apt mirror of this machine does not answer ($mirror/dists/$SUITE/Release)"

	tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf --one-file-system '$tmp'" EXIT
	trap stop_debootstrap INT TERM HUP
	build_rootfs "$tmp" "$mirror" "$include"
	echo "$packages" >"$tmp/packages"
	touch "$tmp/complete"
	mv -T "$tmp" "$dest"
	trap - EXIT
	log "rootfs ready in $dest"
	echo "$dest/root"
}

main "$@"
