#!/bin/bash
# SPDX-License-Identifier: MIT
# "A && B || fail" below means "fail unless A and B":
# shellcheck disable=SC2015
#
# The unit and the installed layout under a real systemd as PID 1.
#
#   cached Debian rootfs (scripts/make-test-rootfs.sh) -> overlay copy ->
#   cmake --install DESTDIR=<copy> (the build's prefix) -> systemd booted as PID 1 in
#   new pid/mount/cgroup/uts/ipc namespaces (the host's network namespace, so
#   loopback is shared) -> systemctl enable --now argusd -> READY, STATUS,
#   watchdog, HTTP API, a real reference measurement, journal priorities,
#   clean stop, restart with the state kept -> poweroff -> nothing left.
#
# Environment: ARGUS_SOURCE_DIR and ARGUS_BUILD_DIR (set by CTest; otherwise
# the checkout holding this script and its build/); ARGUS_ROOTFS_CACHE (see
# scripts/make-test-rootfs.sh); ARGUS_BOOT_LOGS, a directory that receives the
# run's logs (install, console, the container's journal) for a look afterwards.
# Needs root, and the first time the apt mirror of this machine. Exit status:
# 0 pass, 1 fail, 77 skipped (the reason printed).
#
# Safety: the container gets a fresh /proc with /proc/sys read-only, a
# read-only sysfs, a private /dev with a few device nodes, its own hostname and
# its own cgroup subtree, and no CAP_SYS_MODULE, CAP_SYS_TIME or audit
# capabilities, so that its systemd cannot change the host's kernel settings,
# hostname, clock, terminals or disks. Every mount lives in the container's
# private mount namespace and disappears with it; its init is killed if this
# script dies (parent-death signal), and the trap powers it off or kills it.
set -eu

SELF=$(realpath "$0")
SRC=${ARGUS_SOURCE_DIR:-$(dirname "$SELF")/..}
BUILD=${ARGUS_BUILD_DIR:-$SRC/build}
WORKLOAD=pf_cow
# The shipped unit's watchdog is 30 s; the test shortens it so that "stays
# active across several watchdog intervals" takes seconds.
WATCHDOG_SEC=2
# What the container needs besides the libraries argusd links.
BASE_PACKAGES="systemd curl jq"
# Container-specific units that cannot work or must not run here: terminals
# (this is not a console), apt's timers (network activity during measurements).
MASKED_UNITS="console-getty.service container-getty@.service getty@.service
serial-getty@.service getty.target apt-daily.timer apt-daily-upgrade.timer
systemd-sysctl.service"
# Capabilities the container's init never gets (see Safety above).
DROPPED_CAPS=-sys_module,-sys_time,-audit_control,-audit_read,-audit_write

WORK=""
CGROUP=""
UNSHARE_PID=""
CPID=""
ROOT=""
PORT=""
NTEST=0
FAILED=""
T_START=$(date +%s)

log() { echo "# $*"; }
ok() {
	NTEST=$((NTEST + 1))
	echo "ok $NTEST - $*"
}
fail() {
	NTEST=$((NTEST + 1))
	echo "not ok $NTEST - $*"
	diagnostics
	exit 1
}
# A failed check after which the others still make sense: reported, the test
# goes on and fails at the end.
fail_later() {
	NTEST=$((NTEST + 1))
	echo "not ok $NTEST - $*"
	FAILED="$FAILED $NTEST"
}
skip() {
	echo "1..0"
	echo "# SKIP all: $*"
	exit 77
}

# ---- the container side: runs as PID 1 of the new namespaces ----

# Overlay the cached rootfs (read-only lower layer) with this run's writable layer.
mount_rootfs() {
	local rootfs=$1 work=$2

	mkdir -p "$work/upper" "$work/ovlwork" "$work/merged"
	mount -t overlay overlay \
		-o "lowerdir=$rootfs,upperdir=$work/upper,workdir=$work/ovlwork" "$work/merged"
}

# Adapt the installed system to this container: the test's port, a short
# watchdog, and masks for units that cannot work here.
configure_container() {
	local root=$1 port=$2 unit

	sed -i "s/^listen = .*/listen = 127.0.0.1:$port/" "$root/etc/argus/argusd.conf"
	mkdir -p "$root/etc/systemd/system/argusd.service.d"
	printf '[Service]\nWatchdogSec=%ss\n' "$WATCHDOG_SEC" \
		>"$root/etc/systemd/system/argusd.service.d/50-boot-test.conf"
	for unit in $MASKED_UNITS; do
		ln -sfn /dev/null "$root/etc/systemd/system/$unit"
	done
	# A persistent journal, in the overlay's writable layer: the host reads
	# it after poweroff, shutdown included.
	mkdir -p "$root/etc/systemd/journald.conf.d" "$root/var/log/journal"
	printf '[Journal]\nStorage=persistent\n' >"$root/etc/systemd/journald.conf.d/50-boot-test.conf"
}

# /proc (its sysctls read-only), a read-only /sys, a private /dev and /run,
# as a container manager gives them, and the cgroup2 hierarchy: mounted inside
# the new cgroup namespace, its root is the test's own cgroup. With it mounted,
# systemd runs in unified mode; left to itself on this host it would pick the
# hybrid layout and create its cgroups in the host's v1 hierarchies.
mount_api_filesystems() {
	local root=$1 console=$2 node

	mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
	for node in sys sysrq-trigger; do
		[ -e "$root/proc/$node" ] || continue
		mount --bind "$root/proc/$node" "$root/proc/$node"
		mount -o remount,bind,ro "$root/proc/$node"
	done
	mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
	mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$root/sys/fs/cgroup"
	mount -t tmpfs -o mode=755,nosuid,size=16m tmpfs "$root/dev"
	for node in null zero full random urandom tty; do
		touch "$root/dev/$node"
		mount --bind "/dev/$node" "$root/dev/$node"
	done
	mkdir "$root/dev/pts" "$root/dev/shm"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$root/dev/pts"
	ln -s pts/ptmx "$root/dev/ptmx"
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
	ln -s /proc/self/fd "$root/dev/fd"
	ln -s /proc/self/fd/0 "$root/dev/stdin"
	ln -s /proc/self/fd/1 "$root/dev/stdout"
	ln -s /proc/self/fd/2 "$root/dev/stderr"
	# whatever writes to the console writes to a file of the test
	touch "$root/dev/console"
	mount --bind "$console" "$root/dev/console"
	mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$root/run"
}

# PID 1 of the container: prepare the root, install argusd into it, exec systemd.
container_init() {
	local work=$1 rootfs=$2 build=$3 port=$4 root=$1/merged

	mount_rootfs "$rootfs" "$work"
	echo "installing argusd: cmake --install $build (its configured prefix), DESTDIR=$root"
	DESTDIR=$root cmake --install "$build" >"$work/install.log"
	configure_container "$root" "$port"
	mount_api_filesystems "$root" "$work/console.log"
	# The root moved with pivot_root, the host's detached, as a container manager
	# does: a chroot would forbid user namespaces, which argusd's compiler sandbox
	# makes (check_sandbox_namespaces).
	cd "$root"
	mkdir -p .host-root
	pivot_root . .host-root
	cd /
	umount -l /.host-root
	rmdir /.host-root
	exec env -i container=argusd-test PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/lib/systemd/systemd --log-target=journal --log-level=info \
		--show-status=false --unit=multi-user.target
}

# ---- the host side ----

# Run a command inside the container (its namespaces and root), with a time limit.
in_ct() {
	local limit=$1

	shift
	timeout "$limit" nsenter --target "$CPID" --mount --pid --uts --ipc --root --wd -- \
		/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_PAGER= SYSTEMD_COLORS=0 \
		LANG=C.UTF-8 "$@"
}
ctl() { in_ct 120 systemctl "$@"; }
prop() { in_ct 30 systemctl show -p "$1" --value "$2"; }

# HTTP from inside the container: METHOD PATH [BODY]. The answer's body in
# $BODY, its status code in $HTTP_CODE (000 when nothing answered). Reads go
# to the TCP listener; writes to the control socket, where root may write.
# http_tcp sends a write to the TCP listener instead.
BODY=""
HTTP_CODE=""
SOCKET=/run/argusd/argusd.sock
http() {
	local out

	case $1 in
	GET | HEAD) out=$(in_ct 30 curl -sS -X "$1" -w '\n%{http_code}' "http://127.0.0.1:$PORT$2") ;;
	*) out=$(in_ct 30 curl -sS --unix-socket "$SOCKET" -X "$1" -H 'Content-Type: application/json' \
		${3:+--data "$3"} -w '\n%{http_code}' "http://localhost$2") ;;
	esac || out=$'\n000'
	HTTP_CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
}
http_tcp() {
	local out

	out=$(in_ct 30 curl -sS -X "$1" -H 'Content-Type: application/json' \
		${3:+--data "$3"} -w '\n%{http_code}' "http://127.0.0.1:$PORT$2") || out=$'\n000'
	HTTP_CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
}

# Print what helps to understand a failure: the unit, its journal, the boot.
diagnostics() {
	if [ -n "$CPID" ] && kill -0 "$CPID" 2>/dev/null; then
		log "---- systemctl status argusd"
		ctl status --no-pager -l argusd 2>&1 | sed 's/^/#   /' || true
		log "---- failed units"
		ctl --failed --no-legend --no-pager 2>&1 | sed 's/^/#   /' || true
		log "---- journalctl -u argusd (last 40)"
		in_ct 30 journalctl -u argusd --no-pager -n 40 2>&1 | sed 's/^/#   /' || true
	fi
	if [ -n "$WORK" ]; then
		for f in init.log install.log console.log journal.txt; do
			[ -s "$WORK/$f" ] || continue
			log "---- $f (last 30)"
			tail -n 30 "$WORK/$f" | sed 's/^/#   /'
		done
	fi
}

# Whether any process still lives in the pid namespace $1 (as readlink shows it).
ns_has_processes() {
	local p

	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$1" ] && return 0
	done
	return 1
}

# Remove a cgroup subtree that has no processes left, deepest first.
remove_cgroup() {
	[ -d "$1" ] || return 0
	find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
	[ ! -d "$1" ]
}

# Stop the container: poweroff through systemd if asked to and it still runs,
# SIGKILL to its init otherwise (or after 60 s); then wait for every process.
stop_container() {
	local graceful=$1 pidns=""

	[ -n "$UNSHARE_PID" ] || return 0
	[ -n "$CPID" ] && pidns=$(readlink "/proc/$CPID/ns/pid" 2>/dev/null || true)
	if [ "$graceful" = yes ] && [ -n "$CPID" ] && kill -0 "$CPID" 2>/dev/null; then
		ctl --no-block poweroff >/dev/null 2>&1 || true
		for _ in $(seq 600); do
			kill -0 "$UNSHARE_PID" 2>/dev/null || break
			sleep 0.1
		done
	fi
	# unshare --kill-child: its child, the container's init, dies with it, and
	# with the init every process of the pid namespace.
	kill -KILL "$UNSHARE_PID" 2>/dev/null || true
	wait "$UNSHARE_PID" 2>/dev/null || true
	UNSHARE_PID=""
	if [ -n "$pidns" ]; then
		for _ in $(seq 100); do
			ns_has_processes "$pidns" || break
			sleep 0.1
		done
		! ns_has_processes "$pidns" || return 1
	fi
	return 0
}

cleanup() {
	local rc=$?

	trap - EXIT INT TERM HUP
	stop_container yes || {
		echo "# processes of the container's pid namespace are still alive" >&2
		rc=1
	}
	[ -z "$CGROUP" ] || remove_cgroup "$CGROUP" || {
		echo "# could not remove cgroup $CGROUP" >&2
		rc=1
	}
	if [ -n "$WORK" ] && [ -n "${ARGUS_BOOT_LOGS:-}" ]; then
		mkdir -p "$ARGUS_BOOT_LOGS"
		cp "$WORK"/*.log "$WORK"/*.json "$WORK"/*.txt "$ARGUS_BOOT_LOGS"/ 2>/dev/null || true
	fi
	# Its mounts were in the container's mount namespace, gone with it: the
	# host must not show any.
	if [ -n "$WORK" ]; then
		if grep -qF " $WORK/" /proc/self/mountinfo; then
			echo "# mounts under $WORK remain on the host" >&2
			rc=1
		else
			rm -rf --one-file-system "$WORK"
		fi
	fi
	exit "$rc"
}

# Leftovers of runs that were killed (a SIGKILL leaves no trap): their
# containers died with them (parent-death signal); remove their work
# directories and empty cgroups.
remove_stale() {
	local d pid

	for d in /var/tmp/argusd-boot.* "$1"/argusd-boot.*; do
		[ -e "$d" ] || continue
		pid=$(cat "$d/owner" 2>/dev/null || echo "${d##*.}")
		case $pid in '' | *[!0-9]*) continue ;; esac
		kill -0 "$pid" 2>/dev/null && continue
		if [ -d "$d/merged" ] && ! grep -qF " $d/" /proc/self/mountinfo; then
			rm -rf --one-file-system "$d"
		elif [ -f "$d/cgroup.procs" ]; then
			remove_cgroup "$d" || true
		fi
	done
}

# The cgroup2 mount point of this host (hybrid: .../unified; unified: /sys/fs/cgroup).
cgroup2_mount() {
	awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo
}

# A TCP port nobody listens on (the host's network namespace is shared).
free_port() {
	local p hex

	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 20000))
		hex=$(printf ':%04X ' "$p")
		grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null || {
			echo "$p"
			return 0
		}
	done
	return 1
}

# The Debian packages holding the shared libraries the installed programs link
# directly (argusd, the victims and perturbers), found with readelf and ldd.
runtime_packages() {
	local f needed so path

	for f in "$BUILD/argusd" "$BUILD"/bench/victims/* "$BUILD"/bench/perturbers/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
		ldd "$f" | awk '$2 == "=>" { print $1, $3 }' | while read -r so path; do
			echo "$needed" | grep -qxF "$so" && echo "$path"
		done
	done | sort -u | while read -r path; do
		# dpkg knows a file by the path its package ships (merged /usr or not)
		dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null ||
			dpkg -S "${path#/usr}" 2>/dev/null || echo "unknown: $path" >&2
	done | sed 's/[:,].*//' | sort -u
}

preflight() {
	local c

	[ "$(id -u)" = 0 ] || skip "needs root (namespaces, mounts, systemd as PID 1)"
	for c in unshare nsenter setpriv pivot_root timeout readelf ldd dpkg cmake realpath; do
		command -v "$c" >/dev/null || skip "$c is not installed"
	done
	grep -qw overlay /proc/filesystems || skip "the kernel has no overlay filesystem"
	[ -x "$BUILD/argusd" ] || {
		echo "not ok - $BUILD/argusd is not built" >&2
		exit 1
	}
	[ -r /sys/kernel/btf/vmlinux ] || skip "no /sys/kernel/btf/vmlinux: argusd's probes need BTF"
	[ -n "$(cgroup2_mount)" ] || skip "no cgroup2 hierarchy mounted on the host"
}

# The rootfs for this build's libraries, in $ROOTFS: cached, or made now (minutes).
ROOTFS=""
get_rootfs() {
	local pkgs out rc=0 t0

	pkgs=$(runtime_packages | tr '\n' ' ')
	log "rootfs packages: $BASE_PACKAGES $pkgs"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	out=$("$SRC/scripts/make-test-rootfs.sh" $BASE_PACKAGES $pkgs) || rc=$?
	[ "$rc" = 77 ] && skip "no Debian rootfs (scripts/make-test-rootfs.sh said why above)"
	[ "$rc" = 0 ] || fail "scripts/make-test-rootfs.sh failed (exit $rc)"
	ROOTFS=${out##*$'\n'}
	[ -x "$ROOTFS/lib/systemd/systemd" ] || fail "no systemd in the rootfs $ROOTFS"
	log "rootfs ready in $(($(date +%s) - t0)) s"
}

# Start the container in the background and wait for its systemd's private bus.
boot_container() {
	local rootfs=$1

	CGROUP=$(cgroup2_mount)$(sed -n 's/^0:://p' /proc/self/cgroup)
	CGROUP=${CGROUP%/}/argusd-boot.$$
	mkdir "$CGROUP"
	: >"$WORK/console.log"
	# The subshell moves itself into a cgroup of its own below this script's,
	# so that the new cgroup namespace is rooted there; setpriv execs unshare
	# with this script as the parent (parent-death signal) and without the
	# dropped capabilities.
	(
		echo 0 >"$CGROUP/cgroup.procs"
		exec setpriv --pdeathsig KILL --bounding-set "$DROPPED_CAPS" \
			unshare --fork --kill-child --pid --mount --cgroup --uts --ipc \
			--propagation private -- \
			"$SELF" --container-init "$WORK" "$rootfs" "$BUILD" "$PORT"
	) >"$WORK/init.log" 2>&1 </dev/null &
	UNSHARE_PID=$!
	for _ in $(seq 300); do
		kill -0 "$UNSHARE_PID" 2>/dev/null || fail "the container exited during start-up"
		CPID=$(cat "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children" 2>/dev/null || true)
		CPID=${CPID%% *}
		if [ -n "$CPID" ] && [ "$(cat "/proc/$CPID/comm" 2>/dev/null)" = systemd ]; then
			break
		fi
		CPID=""
		sleep 0.1
	done
	[ -n "$CPID" ] || fail "systemd did not start as the container's PID 1 within 30 s"
	ROOT=/proc/$CPID/root
	for _ in $(seq 300); do
		[ -S "$ROOT/run/systemd/private" ] && return 0
		kill -0 "$CPID" 2>/dev/null || fail "the container's systemd exited during boot"
		sleep 0.1
	done
	fail "the container's systemd did not open its private bus within 30 s"
}

# ---- the checks ----

# Everything the unit and the configuration point at exists in the installed tree.
check_layout() {
	local conf=$ROOT/etc/argus/argusd.conf key path exec doc name argv0 victims missing= unit inc

	grep -q "^listen = 127.0.0.1:$PORT$" "$conf" ||
		fail "the installed argusd.conf has no 'listen = ADDR:PORT' line to point at the test's port"
	# the unit goes under the build's prefix: /usr/lib or /usr/local/lib, both searched by systemd
	unit=$ROOT/usr/lib/systemd/system/argusd.service
	[ -f "$unit" ] || unit=$ROOT/usr/local/lib/systemd/system/argusd.service
	exec=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit" 2>/dev/null)
	[ -n "$exec" ] && [ -x "$ROOT$exec" ] || fail "unit installed with an executable ExecStart ($exec)"
	doc=$(sed -n 's|^Documentation=file://||p' "$unit")
	[ -z "$doc" ] || [ -r "$ROOT$doc" ] || fail "the unit's Documentation=file://$doc is installed"
	ok "unit installed in ${unit#"$ROOT"}, ExecStart=$exec executable, Documentation there"
	for key in tree_file schema_dir workloads_dir victims_dir; do
		path=$(sed -n "s/^$key = //p" "$conf")
		[ -n "$path" ] && [ -e "$ROOT$path" ] || missing="$missing $key=$path"
	done
	[ -z "$missing" ] || fail "argusd.conf points at paths not installed:$missing"
	ls "$ROOT$(sed -n 's/^schema_dir = //p' "$conf")"/*.sql >/dev/null 2>&1 ||
		fail "schema_dir holds no .sql file"
	victims=$ROOT$(sed -n 's/^victims_dir = //p' "$conf")
	for name in "$ROOT$(sed -n 's/^workloads_dir = //p' "$conf")"/*.json; do
		argv0=$(jq -r '.argv[0]' "$name")
		case $argv0 in
		/*) [ -x "$ROOT$argv0" ] || missing="$missing $argv0" ;;
		*) [ -x "$victims/$argv0" ] || missing="$missing $argv0" ;;
		esac
	done
	[ -z "$missing" ] || fail "workloads name programs not installed:$missing"
	ok "config, tree-data, schema, workloads and every workload's victim installed"
	# the LLM agent's include set (bpf_include_dir's default)
	# next to the tree data, under the same prefix
	inc=$(dirname "$(dirname "$(sed -n 's/^tree_file = //p' "$conf")")")/include
	[ -r "$ROOT$inc/argus_authored.h" ] ||
		fail "the authored-probe include set is not installed in $inc"
	# shellcheck disable=SC2016
	missing=$(in_ct 60 sh -c 'for f in /usr/sbin/argusd /usr/libexec/argusd/*/*; do
		ldd "$f" 2>&1 | grep "not found" | sed "s|^|$f: |"; done')
	[ -z "$missing" ] || fail "libraries missing in the rootfs: $missing"
	ok "every installed program finds its libraries in the Debian rootfs"
}

check_boot() {
	local state failed

	state=$(in_ct 120 systemctl is-system-running --wait 2>/dev/null || true)
	failed=$(ctl --failed --no-legend --plain --no-pager 2>/dev/null | awk '{ print $1 }' | tr '\n' ' ')
	# Its cgroups are in the test's cgroup2 subtree only, none in v1 hierarchies.
	[ "$(grep -c 'init.scope$' "/proc/$CPID/cgroup")" = 1 ] &&
		grep -q "^0::/${CGROUP#"$(cgroup2_mount)"/}/init.scope$" "/proc/$CPID/cgroup" ||
		fail "the container's systemd in its own cgroup2 subtree only: $(tr '\n' ' ' <"/proc/$CPID/cgroup")"
	case $state in
	running) ok "systemd booted as PID 1: running" ;;
	degraded) ok "systemd booted as PID 1: degraded; failed units, unrelated to argusd: $failed" ;;
	*) fail "systemd did not finish booting: '$state' (failed: $failed)" ;;
	esac
}

check_start() {
	local status body perm

	ctl enable --now argusd >/dev/null 2>&1 || fail "systemctl enable --now argusd"
	[ "$(ctl is-enabled argusd)" = enabled ] || fail "argusd enabled (WantedBy=multi-user.target)"
	[ "$(ctl is-active argusd)" = active ] || fail "argusd active after start (Type=notify: READY=1)"
	ok "systemctl enable --now argusd: enabled, active"
	# Type=notify: active means READY=1 came, and READY=1 only after the API
	# listens, so the very first request must be answered.
	http GET /healthz
	body=$BODY
	[ "$HTTP_CODE" = 200 ] && [ "$(jq -r .status <<<"$body")" = ok ] ||
		fail "GET /healthz right after start: 200 and status ok (got $HTTP_CODE: $body)"
	ok "GET /healthz answered 200 status ok at once (READY=1 after listen)"
	# the control socket in the unit's RuntimeDirectory, for root and group argus
	# (made by the sysusers.d file at boot); TCP without a token only reads
	perm=$(in_ct 10 stat -c '%a %U %G' "$SOCKET" 2>&1 || true)
	[ "$perm" = "660 root argus" ] ||
		fail "$SOCKET: mode 660, owner root, group argus (got '$perm')"
	http_tcp POST /diagnose "{\"workload\": \"$WORKLOAD\"}"
	[ "$HTTP_CODE" = 403 ] && [ "$(jq -r .error.code <<<"$BODY")" = read_only ] ||
		fail "POST over TCP without a token: 403 read_only (got $HTTP_CODE: $BODY)"
	ok "control socket $SOCKET ($perm); TCP POST refused (403 read_only)"
	status=$(prop StatusText argusd)
	case $status in
	"Listening on port $PORT"*) ok "StatusText: $status" ;;
	*) fail "StatusText shows argusd's STATUS (got '$status')" ;;
	esac
}

# The capability bounding set the installed unit names, as /proc/PID/status
# shows it (hex), from the capability numbers of <linux/capability.h>.
unit_capbnd() {
	local unit=$1 name mask=0 bit

	for name in $(sed -n 's/^CapabilityBoundingSet=//p' "$unit"); do
		case $name in
		CAP_CHOWN) bit=0 ;; CAP_KILL) bit=5 ;; CAP_SETGID) bit=6 ;; CAP_SETUID) bit=7 ;;
		CAP_SETPCAP) bit=8 ;; CAP_SYS_PTRACE) bit=19 ;; CAP_SYS_ADMIN) bit=21 ;;
		CAP_SYS_NICE) bit=23 ;; CAP_SYS_RESOURCE) bit=24 ;; CAP_PERFMON) bit=38 ;;
		CAP_BPF) bit=39 ;; CAP_DAC_READ_SEARCH) bit=2 ;;
		*) return 1 ;;
		esac
		mask=$((mask | (1 << bit)))
	done
	printf '%016x\n' "$mask"
}

# The unit's sandbox is in force on argusd (the workloads' share of it is
# checked in check_stop_during_job): the unit's bounding set (within the
# container's own), no_new_privs, a seccomp filter, a private /tmp, the OS
# read-only but the state directory, /home empty.
CAPBND=""
check_sandbox() {
	local unit pid status mask init

	unit=$ROOT/usr/lib/systemd/system/argusd.service
	[ -f "$unit" ] || unit=$ROOT/usr/local/lib/systemd/system/argusd.service
	mask=$(unit_capbnd "$unit") || fail "a capability the test does not know in $unit"
	init=$(awk '/^CapBnd:/ { print $2 }' "/proc/$CPID/status")
	CAPBND=$(printf '%016x' $((0x$mask & 0x$init)))
	pid=$(prop MainPID argusd)
	status=$(in_ct 10 cat "/proc/$pid/status")
	grep -qx "CapBnd:[[:space:]]*$CAPBND" <<<"$status" && grep -qx "NoNewPrivs:[[:space:]]*1" <<<"$status" &&
		grep -qx "Seccomp:[[:space:]]*2" <<<"$status" ||
		fail "argusd runs with CapBnd $CAPBND, NoNewPrivs 1, Seccomp 2: $(grep -E '^(CapBnd|NoNewPrivs|Seccomp):' <<<"$status" | tr '\n\t' '  ')"
	in_ct 10 awk '$5 == "/tmp" && $4 ~ /systemd-private-/ { found = 1 } END { exit !found }' \
		"/proc/$pid/mountinfo" || fail "argusd has a private /tmp (PrivateTmp=yes)"
	# shellcheck disable=SC2016
	in_ct 10 nsenter --target "$pid" --mount --root --wd -- sh -c '! touch /usr/.argusd-w 2>/dev/null &&
		touch /var/lib/argusd/.w && rm /var/lib/argusd/.w && [ -z "$(ls -A /home)" ]' ||
		fail "in argusd's mount namespace /usr is read-only, /var/lib/argusd writable, /home empty"
	ok "argusd sandboxed: CapBnd $CAPBND, NoNewPrivs, seccomp, private /tmp, /usr read-only, /home empty"
	check_sandbox_namespaces "$unit"
}

# The compiler of authored probes (daemon/sandbox.c) makes its namespaces
# inside the unit's sandbox. A copy of the installed unit, every restriction
# kept, runs what that does with util-linux: as root, a mount namespace with a
# tmpfs root, a read-only bind mount and pivot_root; then new user, network,
# IPC, UTS and PID namespaces.
check_sandbox_namespaces() {
	local unit=$1 result
	local copy=$ROOT/etc/systemd/system/argusd-nscheck.service
	local script=$ROOT/usr/local/lib/argusd-nscheck.sh

	mkdir -p "$(dirname "$script")"
	cat >"$script" <<'EOS'
set -eu
if [ "${1:-}" = mnt ]; then
	# in the new mount namespace: a tmpfs root with /usr read-only, pivot_root, the old root detached
	d=$2
	mount -t tmpfs tmpfs "$d"
	mkdir "$d/usr" "$d/old" "$d/dev"
	mount --bind /usr "$d/usr"
	mount -o remount,bind,ro "$d/usr"
	for x in bin sbin lib lib64; do ln -s "usr/$x" "$d/$x"; done
	touch "$d/dev/null"
	mount --bind /dev/null "$d/dev/null"
	cd "$d"
	pivot_root . old
	# umount2(2) itself: umount(8) needs a /proc this root does not have
	/usr/bin/perl -e 'my $p = "/old"; syscall(166, $p, 2) == 0 or die "umount2: $!\n"'
	test ! -e /old/etc
	exit 0
fi
d=$(mktemp -d)
unshare --mount --propagation private /bin/sh "$0" mnt "$d"
# the child makes the other namespaces; the parent maps the unprivileged uid
# and gid to themselves, which the child then sees
mkfifo "$d.go"
unshare --user --net --ipc --uts --pid --fork /bin/sh -c "read x <'$d.go' &&
	read u l n </proc/self/uid_map && test \"\$u \$l \$n\" = '65534 65534 1'" &
child=$!
i=0
while [ "$(readlink /proc/$child/ns/user)" = "$(readlink /proc/self/ns/user)" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || exit 3
	sleep 0.05
done
echo '65534 65534 1' >/proc/$child/uid_map
echo '65534 65534 1' >/proc/$child/gid_map
echo go >"$d.go"
wait $child
: >/var/lib/argusd/.nscheck-passed
EOS
	sed -e 's|^ExecStart=.*|ExecStart=/bin/sh /usr/local/lib/argusd-nscheck.sh|' -e 's/^Type=.*/Type=oneshot/' \
		-e '/^\(WatchdogSec\|NotifyAccess\|Restart\|RestartSec\|StateDirectory\|StateDirectoryMode\|RuntimeDirectory\|RuntimeDirectoryMode\)=/d' \
		-e '/^\[Install\]/,$d' "$unit" >"$copy"
	ctl daemon-reload
	ctl start argusd-nscheck.service >/dev/null 2>&1 || true
	result=$(prop Result argusd-nscheck.service)
	# the script ran to its end: the file it writes last is there
	[ -e "$ROOT/var/lib/argusd/.nscheck-passed" ] || result="$result, not to the end"
	if [ "$result" != success ]; then
		in_ct 30 journalctl -u argusd-nscheck --no-pager -n 20 2>&1 | sed 's/^/#   /' || true
		fail "in the unit's sandbox, a mount namespace with pivot_root and user, network, IPC, UTS and PID namespaces can be made (Result=$result)"
	fi
	rm -f "$copy" "$script" "$ROOT/var/lib/argusd/.nscheck-passed"
	ctl daemon-reload
	ok "in the unit's sandbox the compiler sandbox's namespaces can be made (mount with pivot_root; user, net, ipc, uts, pid)"
}

check_tree() {
	local body expect n tp unav

	expect=$(jq '.nodes | length' "$SRC/tree-data/tree.json")
	http GET /tree
	body=$BODY
	[ "$HTTP_CODE" = 200 ] || fail "GET /tree answered $HTTP_CODE"
	n=$(jq .summary.nodes <<<"$body")
	tp=$(jq .summary.by_backend.tracepoint <<<"$body")
	unav=$(jq .summary.unavailable <<<"$body")
	[ "$n" = "$expect" ] && [ "$unav" = 0 ] ||
		fail "GET /tree: $expect nodes, none unavailable (got $n, $unav unavailable)"
	# This kernel has no kprobes and refuses fentry (DESIGN.md): every node
	# resolves to the tracepoint backend. Elsewhere other backends may win.
	if [ ! -e /sys/bus/event_source/devices/kprobe ]; then
		[ "$tp" = "$n" ] || fail "GET /tree: all $n nodes on the tracepoint backend (got $tp)"
	fi
	ok "GET /tree: $n nodes resolved ($(jq -c .summary.by_backend <<<"$body"))"
}

check_watchdog() {
	local wd pid ts1 ts2 restarts

	wd=$(prop WatchdogUSec argusd)
	[ "$wd" = "${WATCHDOG_SEC}s" ] || fail "WatchdogUSec=${WATCHDOG_SEC}s from the drop-in (got $wd)"
	pid=$(prop MainPID argusd)
	ts1=$(prop WatchdogTimestampMonotonic argusd)
	sleep $((WATCHDOG_SEC * 3))
	ts2=$(prop WatchdogTimestampMonotonic argusd)
	restarts=$(prop NRestarts argusd)
	[ "$(ctl is-active argusd)" = active ] && [ "$(prop MainPID argusd)" = "$pid" ] &&
		[ "$restarts" = 0 ] ||
		fail "argusd still active, same pid, not restarted after $((WATCHDOG_SEC * 3)) s"
	[ "$ts2" != "$ts1" ] || fail "WATCHDOG=1 pings arrive (WatchdogTimestamp did not move)"
	ok "watchdog armed (WatchdogUSec=$wd), pinged, active after $((WATCHDOG_SEC * 3)) s"
}

# POST a reference and follow the job; the reference id in $REF.
REF=""
REF_JOB=""
record_reference() {
	local body id state

	http POST /references "{\"workload\": \"$WORKLOAD\", \"repeats\": 3}"
	body=$BODY
	[ "$HTTP_CODE" = 202 ] || fail "POST /references answered $HTTP_CODE: $body"
	id=$(jq -r .id <<<"$body")
	for _ in $(seq 300); do
		http GET "/jobs/$id"
		body=$BODY
		state=$(jq -r .state <<<"$body")
		case $state in
		queued | running) sleep 1 ;;
		*) break ;;
		esac
	done
	[ "$state" = succeeded ] || fail "reference job $id: $state $(jq -c .error <<<"$body")"
	REF=$(jq -r .result.reference <<<"$body")
	REF_JOB=$id
}

check_reference() {
	local body t0 counts

	t0=$(date +%s)
	record_reference
	http GET "/references/$REF"
	body=$BODY
	[ "$HTTP_CODE" = 200 ] || fail "GET /references/$REF answered $HTTP_CODE"
	echo "$body" >"$WORK/reference.json"
	ok "reference $REF of $WORKLOAD (3 runs) recorded under systemd in $(($(date +%s) - t0)) s"
	check_job_entry "$REF_JOB" reference
	# A real measurement: the probe saw the workload's copy-on-write faults
	# (pf_cow's node), at least half of the page faults perf counted for it.
	counts=$(jq -r '[.runs[] | "\(.["kernel_paging.anon_fault.cow/count"])/\(.["perf/page_faults"])"]
		| join(" ")' <<<"$body")
	if jq -e '[.runs[] | select(.["kernel_paging.anon_fault.cow/count"] * 2
		< .["perf/page_faults"])] | length == 0' <<<"$body" >/dev/null; then
		ok "the probe counted $WORKLOAD's COW faults in every run (cow/page faults: $counts)"
	else
		fail_later "the probe counted $WORKLOAD's COW faults in every run (cow/page faults: $counts)"
	fi
}

# A finished job has its own journal entry, found by its fields.
check_job_entry() {
	local id=$1 kind=$2 entry

	for _ in $(seq 50); do
		entry=$(in_ct 30 journalctl -u argusd "JOB_ID=$id" -o json --no-pager 2>/dev/null |
			tail -n 1 || true)
		[ -n "$entry" ] && break
		sleep 0.1
	done
	if jq -e --arg kind "$kind" --arg wl "$WORKLOAD" \
		'.MESSAGE_ID == "11778bd5f9bf403899d9591239e9d909" and .JOB_KIND == $kind and
		 .SUBJECT == $wl and .JOB_STATE == "succeeded" and .PRIORITY == "6"' \
		<<<"$entry" >/dev/null 2>&1; then
		ok "journal: job $id's entry found by JOB_ID, with MESSAGE_ID, JOB_KIND, SUBJECT, JOB_STATE"
	else
		fail_later "journal: job $id's entry by JOB_ID with its fields (got: ${entry:-nothing})"
	fi
}

# argusd writes "<N>text" on stderr; journald must turn the prefix into the
# entry's priority, never keep it in the text.
check_journal() {
	local info warn prio raw

	for _ in $(seq 50); do
		info=$(in_ct 30 journalctl -u argusd -p info -o cat --no-pager 2>/dev/null || true)
		grep -q "argusd ready: listening" <<<"$info" && break
		sleep 0.1
	done
	grep -q "argusd ready: listening" <<<"$info" ||
		fail "'argusd ready' in journalctl -u argusd -p info"
	warn=$(in_ct 30 journalctl -u argusd -p warning -o cat --no-pager 2>/dev/null || true)
	! grep -q "argusd ready" <<<"$warn" || fail "an info line ('argusd ready') shown at -p warning"
	prio=$(in_ct 30 journalctl -u argusd -o json --no-pager 2>/dev/null |
		jq -r 'select(.MESSAGE | type == "string" and startswith("argusd ready")) | .PRIORITY' |
		head -n 1)
	[ "$prio" = 6 ] || fail "'argusd ready' logged with PRIORITY=6 (info), got '$prio'"
	raw=$(in_ct 30 journalctl -u argusd -o cat --no-pager 2>/dev/null | grep -cE '^<[0-7]>' || true)
	[ "$raw" = 0 ] || fail "$raw journal lines keep a '<N>' prefix in their text"
	ok "journal: sd-daemon prefixes became priorities ($(grep -c . <<<"$info") lines at info," \
		"$(grep -c . <<<"$warn") at warning or above)"
}

check_stop() {
	local t0 t1 limit result code status since killed

	limit=$(prop TimeoutStopUSec argusd)
	since=$(in_ct 10 date '+%Y-%m-%d %H:%M:%S')
	t0=$(date +%s%N)
	ctl stop argusd || fail "systemctl stop argusd"
	t1=$(date +%s%N)
	result=$(prop Result argusd)
	code=$(prop ExecMainCode argusd)
	status=$(prop ExecMainStatus argusd)
	[ "$(ctl is-active argusd)" = inactive ] && [ "$result" = success ] && [ "$code" = 1 ] &&
		[ "$status" = 0 ] ||
		fail "clean stop: inactive, Result=success, exited with 0 (Result=$result, ExecMainCode=$code, status $status)"
	killed=$(in_ct 30 journalctl -u argusd --since "$since" -o cat --no-pager 2>/dev/null |
		grep -E 'SIGKILL|Killing process|timed out' || true)
	[ -z "$killed" ] || fail "stop needed force: $killed"
	ok "systemctl stop: exit 0, Result=success, no SIGKILL, in $(((t1 - t0) / 1000000)) ms (TimeoutStopSec=$limit)"
}

check_restart_keeps_state() {
	local body mode

	ctl start argusd || fail "systemctl start argusd (second time)"
	http GET /references
	body=$BODY
	[ "$HTTP_CODE" = 200 ] || fail "GET /references after restart answered $HTTP_CODE"
	jq -e --argjson id "$REF" '[.references[] | select(.id == $id)] | length == 1' <<<"$body" \
		>/dev/null || fail "reference $REF kept across the restart (GET /references: $body)"
	mode=$(stat -c %a "$ROOT/var/lib/argusd")
	[ -f "$ROOT/var/lib/argusd/argusd.db" ] && [ "$mode" = 700 ] ||
		fail "state in /var/lib/argusd (StateDirectory, 0700; mode $mode)"
	ok "restarted: reference $REF still there, state in /var/lib/argusd (mode $mode)"
}

# The host pid of a process of the argusd unit that is not argusd (a
# workload), or nothing.
workload_pid() {
	local p procs=$ROOT/sys/fs/cgroup/system.slice/argusd.service/cgroup.procs

	[ -r "$procs" ] || return 0
	while read -r p; do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$WORKLOAD" ] && echo "$p" && return 0
	done <"$procs"
	return 0
}

# SIGTERM while a workload runs: the job is cancelled, the workload's process
# group killed by argusd itself (systemd finds nothing left to SIGKILL), exit 0.
check_stop_during_job() {
	local id wpid="" uid since state

	http POST /references "{\"workload\": \"$WORKLOAD\", \"repeats\": 20}"
	[ "$HTTP_CODE" = 202 ] || fail "POST /references answered $HTTP_CODE: $BODY"
	id=$(jq -r .id <<<"$BODY")
	for _ in $(seq 600); do
		wpid=$(workload_pid)
		[ -n "$wpid" ] && break
		sleep 0.05
	done
	[ -n "$wpid" ] || fail "a $WORKLOAD process in argusd.service's cgroup within 30 s"
	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$wpid/status")
	[ "$uid" = "$(in_ct 10 id -u nobody)" ] || fail "$WORKLOAD runs as nobody (uid $uid)"
	ok "job $id: $WORKLOAD runs in argusd.service's cgroup as nobody (uid $uid)"
	# what the workload inherits from the unit
	grep -qx "CapBnd:[[:space:]]*$CAPBND" "/proc/$wpid/status" &&
		grep -qx "NoNewPrivs:[[:space:]]*1" "/proc/$wpid/status" &&
		grep -qx "Seccomp:[[:space:]]*2" "/proc/$wpid/status" &&
		grep -qx "CapEff:[[:space:]]*0*" "/proc/$wpid/status" ||
		fail "the workload inherits the unit's bounding set, no_new_privs and seccomp, no capabilities: $(grep -E '^(Cap|NoNewPrivs|Seccomp)' "/proc/$wpid/status" | tr '\n\t' '  ')"
	ok "the workload inherits the unit's sandbox: CapBnd $CAPBND, NoNewPrivs, seccomp, no capabilities"
	since=$(in_ct 10 date '+%Y-%m-%d %H:%M:%S')
	ctl stop argusd || fail "systemctl stop argusd during a job"
	[ "$(prop Result argusd)" = success ] && [ "$(prop ExecMainStatus argusd)" = 0 ] ||
		fail "stop during a job: Result=success, exit 0 ($(prop Result argusd), $(prop ExecMainStatus argusd))"
	! kill -0 "$wpid" 2>/dev/null || fail "the workload (pid $wpid) is gone after the stop"
	! in_ct 30 journalctl -u argusd --since "$since" -o cat --no-pager 2>/dev/null |
		grep -E 'SIGKILL|Killing process|timed out' ||
		fail "stop during a job needed systemd to kill leftovers (above)"
	ctl start argusd || fail "systemctl start argusd after the stop during a job"
	http GET "/jobs/$id"
	state=$(jq -r .state <<<"$BODY")
	case $state in
	cancelled | interrupted) ok "stop during job $id: exit 0, no SIGKILL, workload gone; job $state after restart" ;;
	*) fail "job $id cut off by the stop is cancelled or interrupted after restart (got $state)" ;;
	esac
}

check_poweroff() {
	local pidns

	pidns=$(readlink "/proc/$CPID/ns/pid")
	ctl --no-block poweroff >/dev/null 2>&1 || fail "systemctl poweroff"
	for _ in $(seq 600); do
		kill -0 "$UNSHARE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$UNSHARE_PID" 2>/dev/null && fail "the container did not power off within 60 s"
	wait "$UNSHARE_PID" 2>/dev/null || true
	UNSHARE_PID=""
	CPID=""
	! ns_has_processes "$pidns" || fail "processes of the container remain after poweroff"
	# The journal survives in the overlay's writable layer: argusd's stop at shutdown.
	journalctl -D "$WORK/upper/var/log/journal" --no-pager -o short-monotonic \
		>"$WORK/journal.txt" 2>&1 || true
	# the shutdown: what follows argusd's last start
	awk '/Started argusd.service/ { n = 0; next } { lines[++n] = $0 }
		END { for (i = 1; i <= n; i++) print lines[i] }' "$WORK/journal.txt" >"$WORK/shutdown.txt"
	grep -q "argusd.service: Deactivated successfully" "$WORK/shutdown.txt" &&
		! grep -q "argusd.*SIGKILL\|argusd.*Killing process\|argusd.service: Failed" \
			"$WORK/shutdown.txt" ||
		fail "argusd stopped cleanly at poweroff (journal: $WORK/journal.txt)"
	remove_cgroup "$CGROUP" || fail "the container's cgroups removed after poweroff"
	CGROUP=""
	! grep -qF " $WORK/" /proc/self/mountinfo || fail "no mount of the test left on the host"
	ok "poweroff: argusd stopped cleanly at shutdown; no process, cgroup or mount left"
}

main() {
	local t_boot

	preflight
	get_rootfs
	PORT=$(free_port) || fail "no free TCP port"
	remove_stale "$(cgroup2_mount)$(sed -n 's/^0:://p' /proc/self/cgroup)"
	WORK=$(mktemp -d /var/tmp/argusd-boot.XXXXXX)
	echo $$ >"$WORK/owner"
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
	log "rootfs $ROOTFS; work $WORK; port $PORT"

	t_boot=$(date +%s)
	boot_container "$ROOTFS"
	check_layout
	check_boot
	log "booted in $(($(date +%s) - t_boot)) s"
	check_start
	check_sandbox
	check_tree
	check_watchdog
	check_reference
	check_journal
	check_stop
	check_restart_keeps_state
	check_stop_during_job
	check_poweroff
	echo "1..$NTEST"
	if [ -n "$FAILED" ]; then
		log "failed:$FAILED ($(($(date +%s) - T_START)) s)"
		exit 1
	fi
	log "passed in $(($(date +%s) - T_START)) s"
}

if [ "${1:-}" = --container-init ]; then
	shift
	container_init "$@"
fi
main "$@"
