#!/bin/bash
# SPDX-License-Identifier: MIT
# The BPF tests, the daemon and a slice of the matrix on Debian 12's stock
# kernel (linux-image-amd64, 6.1: kprobes and fentry work there), booted in
# QEMU, so that the fentry and kprobe backends are exercised for real.
#
#   scripts/test-stock-kernel.sh
#
# On the host: builds into build-vm (scripts/build.sh), makes or reuses the
# boot image (scripts/make-vm-image.sh: a cached debootstrap rootfs with the
# kernel, its initrd and the libraries the build links) and boots it with TCG
# (-accel tcg -cpu max: guests stall at boot under KVM on some hosts), its
# virtual CPUs run by one host thread (thread=single, below), once
# per part below, so that a guest that hangs on one backend does not hide
# the others. The checkout is shared with the guest over 9p, read-only, at
# the same path, and a results directory writable. The guest's init runs
# this script with --in-guest; it mounts what a booted Debian system has
# (tracefs, debugfs, bpffs, cgroup2) and runs its part, each test for its
# own verdict:
#
#   part B (tracepoint, kprobe, fentry), with the order O = "B tracepoint"
#   ("tracepoint fentry" for B = tracepoint, see BACKEND_ORDERS): B forced,
#   the tracepoint backend kept for the nodes that declare nothing else (the
#   runqueue wait, the zero page)
#     resolve[B]           argusd started with "backends = O", GET /tree read
#                          back: its "backends" field is O, every node is on
#                          a backend of O or says why it is on none, and no
#                          node's programs use a backend O leaves out
#     resolve[tracepoint-alone]  (part tracepoint) the same for "tracepoint"
#     test-probe[B]        tests/test-probe.c with ARGUS_BACKENDS=O
#     test-probe-pidns[B]  all of it again in a new PID namespace (CTest runs its pid parts)
#   part default, the backends argusd chooses by itself:
#     resolve[default]     as above, "backends = fentry kprobe tracepoint"
#     test-daemon          the daemon integration test
#     matrix               bench/eval/matrix.py on a few cells, one repetition:
#                          no incorrect and no failed run, the null cell
#                          abstains, the others commit to a correct path
#   part faults, the page-fault classes alone (a short run, not in the default
#   parts: test-probe[tracepoint] runs the same tests among the others):
#     resolve[faults]      as resolve[default]
#     test-probe[faults]   test-probe's fault tests, on the backends argusd chooses
#   part bench, what the probe costs on this kernel (not in the default parts):
#     resolve[bench]       as resolve[default]
#     bench-overhead       bench/overhead.c, its table in the log (ratios: TCG)
#
# Then prints what the kernel allows, the resolved tree per order (leaves by
# backend, and why each node that is not on the order's first backend is
# not), the failed checks of each test, and last the line "N passed, N
# failed". A test that did not finish (the guest hung: a soft lockup panics
# it; crashed; ran out of time) counts as failed, and its console is printed.
#
# Why thread=single. With one host thread per virtual CPU, a guest CPU can
# keep running its translation of kernel text another guest CPU has just
# patched. The kernel patches with int3 first (text_poke_bp); a CPU that
# meets the stale int3 after the patch is done is sent back to the patched
# address (the int3 there is gone, so the handler backs up), finds the same
# stale translation, and loops. That is what the soft lockups of whole
# runs here looked like: RIP on the first byte of a site patched by an
# attach or a detach (a tracepoint's static key; the page-fault perf event's branch at
# handle_mm_fault+0x229; the fentry trampoline's call at handle_mm_fault+0x0),
# its memory already holding the new instruction. Real CPUs serialize such
# patches; one host thread for all virtual CPUs does too. On a host with
# cores to spare it can halve the guest's parallel speed (on a 2-core host
# the whole run was no slower), hence the longer limits.
#
# Environment: ARGUS_VM_PARTS (the parts to run, default "tracepoint kprobe
# fentry default"), ARGUS_VM_CELLS (matrix cells, default below),
# ARGUS_VM_FAULT_TESTS (the faults part's test-probe tests, default below),
# ARGUS_VM_BENCH_ROUNDS (the bench part's rounds, 5), ARGUS_VM_SMP
# and ARGUS_VM_MEM_MB (the guest's CPUs and memory, 2 and 3072),
# ARGUS_VM_TCG_THREAD (single or multi, single: see above),
# ARGUS_VM_PART_TIMEOUT_S and ARGUS_VM_DEFAULT_TIMEOUT_S (one boot's limit,
# 3600 and 4800), ARGUS_VM_STALL_S (how long a silent guest may stay silent
# before its CPUs are dumped and it is stopped, 600), ARGUS_VM_LOGS (a
# directory that receives every log of the run), ARGUS_ROOTFS_CACHE (see
# scripts/make-test-rootfs.sh). Needs root,
# and the first time this machine's apt mirror. TCG is slow (tens of times
# slower than the host): the times in the logs are worth ratios at most.
#
# Exit status: 0 when everything passed, 1 when something failed, 77 when this
# machine cannot run it (not root, no qemu-system-x86_64, no 9p in QEMU, no
# debootstrap mirror: the reason printed).
set -eu

SELF=$(realpath "$0")
SRC=$(realpath "$(dirname "$SELF")/..")
BUILD=$SRC/build-vm
# The tracepoint part keeps fentry second: before 6.2 the fault classifier
# reads RSS at handle_mm_fault by a function backend (daemon/probe_plan.c),
# and every node declares tracepoint hooks, so each stays on tracepoint.
# "tracepoint" alone is resolved too (resolve[tracepoint-alone]).
BACKEND_ORDERS=("fentry tracepoint" "kprobe tracepoint" "tracepoint fentry")
# One boot each, so that a guest that hangs on one backend does not hide the others.
read -ra PARTS <<<"${ARGUS_VM_PARTS:-tracepoint kprobe fentry default}"
# test-probe's tests of the page-fault classes (the faults part)
FAULT_TESTS=${ARGUS_VM_FAULT_TESTS:-resolution anon_minor zero_page cow file file_private_write file_readahead fault_then_call}
CELLS=${ARGUS_VM_CELLS:-pf_page_cache:cache_dropper,pf_anon_write:cpu_hog,pf_anon_write:null_sleep}
# Per test inside the guest (TCG: tens of times the host's minutes).
TEST_TIMEOUT_S=2400
MATRIX_TIMEOUT_S=3000
# test-daemon's and the other daemon tests' waits for a job (daemon-harness.h)
JOB_TIME_SCALE=4
# The victims' own time limits are made for real machines: TCG runs them tens
# of times slower (pf_page_cache under the dropper outlived its 30 s here).
VICTIM_TIMEOUT_SCALE=10
# The guest says what runs every HEARTBEAT_S; one silent for STALL_S has
# stalled (its CPUs are dumped, and the part ends there).
HEARTBEAT_S=120
STALL_S=${ARGUS_VM_STALL_S:-600}
# Per boot: a backend's part (resolution, test-probe twice), the default part.
PART_TIMEOUT_S=${ARGUS_VM_PART_TIMEOUT_S:-3600}
DEFAULT_TIMEOUT_S=${ARGUS_VM_DEFAULT_TIMEOUT_S:-4800}

log() { echo "# $*"; }
skip() {
	echo "test-stock-kernel: cannot run here: $*" >&2
	exit 77
}
die() {
	echo "test-stock-kernel: $*" >&2
	exit 1
}

# ---- the guest side: run by the guest's init (scripts/make-vm-image.sh) ----

# What a booted Debian system has mounted, which the tests and libbpf expect.
# A mount that fails is said and the run goes on: the tests then say what is missing.
guest_mount() {
	local type=$1 dir=$2 opts=${3:-defaults}

	mkdir -p "$dir"
	mountpoint -q "$dir" || mount -t "$type" -o "$opts" "$type" "$dir" ||
		echo "argus-vm: cannot mount $type on $dir"
}

guest_mounts() {
	guest_mount tracefs /sys/kernel/tracing
	guest_mount debugfs /sys/kernel/debug
	guest_mount bpf /sys/fs/bpf
	guest_mount cgroup2 /sys/fs/cgroup
	guest_mount tmpfs /run mode=755,nosuid,nodev
	guest_mount devpts /dev/pts ptmxmode=0666,mode=620
	guest_mount tmpfs /dev/shm mode=1777,nosuid,nodev
	ip link set lo up || echo "argus-vm: no loopback interface"
	# the queueing disciplines test-probe's transmit tests put on their own loopback
	modprobe -a sch_tbf sch_htb || echo "argus-vm: no sch_tbf or sch_htb module"
	# the loop device test-probe's journal test mounts its file system on
	modprobe loop || echo "argus-vm: no loop module"
	hostname argus-vm || true
	ulimit -l unlimited
}

# Keep every tracepoint the probe uses armed for the whole boot: each enabled
# in two tracefs instances whose buffers are off, so that it has two probes
# before any test attaches one. Attaching or detaching a probe then never
# patches kernel text (a tracepoint's static branch flips at its first probe,
# its static call at its second), and under TCG a CPU can loop for good on
# the int3 that such a patch leaves (stall-at-28dfcb0 in the results of
# 2026-12-02). Said on the console, and in the results when it fails.
guest_hold_tracepoints() {
	local t=/sys/kernel/tracing inst name ev held=0 missing=""

	for inst in argus-hold-a argus-hold-b; do
		mkdir -p "$t/instances/$inst" && echo 0 >"$t/instances/$inst/tracing_on" || {
			echo "argus-vm: tracepoints not held: no tracefs instance"
			return
		}
		for name in $(sed -n 's/.*SEC("tp_btf\/\([a-z0-9_]*\)").*/\1/p' "$SRC"/bpf/*.h "$SRC"/bpf/*.c | sort -u); do
			ev=$(find "$t/instances/$inst/events" -mindepth 2 -maxdepth 2 -name "$name" | head -n 1)
			if [ -n "$ev" ] && echo 1 >"$ev/enable" 2>/dev/null; then
				held=$((held + 1))
			elif [ "$inst" = argus-hold-a ]; then
				missing="$missing $name"
			fi
		done
	done
	echo "argus-vm: tracepoints held twice: $((held / 2)); not held:${missing:- none}"
}

# Keep one perf counter of each kind that a run opens on its target held
# for the whole boot (tests/vm-hold-perf.c), for the same reason: the first
# counter of a kind flips static branches in the fault and scheduler paths.
# The default part's guest soft-locked at such a branch in handle_mm_fault
# as argusd started (stock-kernel-6.1-full-cd8ef3c in the results of
# 2026-12-02). The holder lives until the guest powers off.
guest_hold_perf() {
	local log=/tmp/argus-hold-perf.log

	"$BUILD/vm-hold-perf" </dev/null >"$log" 2>&1 &
	sleep 1
	if kill -0 $! 2>/dev/null; then
		echo "argus-vm: $(head -n 1 "$log")"
	else
		echo "argus-vm: perf counters not held: $(head -n 1 "$log")"
	fi
}

# What the kernel allows, as key: value lines.
guest_facts() {
	local cfg k

	cfg=/boot/config-$(uname -r)
	echo "kernel: $(uname -r) ($(uname -v))"
	echo "cpus: $(nproc), memory: $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
	[ -r /sys/kernel/btf/vmlinux ] && echo "btf: /sys/kernel/btf/vmlinux present ($(stat -c %s /sys/kernel/btf/vmlinux) bytes)" ||
		echo "btf: absent"
	for k in CONFIG_KPROBES CONFIG_KPROBE_EVENTS CONFIG_FUNCTION_TRACER \
		CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS CONFIG_DEBUG_INFO_BTF CONFIG_BPF_JIT \
		CONFIG_BPF_LSM CONFIG_TRANSPARENT_HUGEPAGE; do
		echo "$k: $(sed -n "s/^$k=//p" "$cfg" 2>/dev/null | grep . || echo 'not set')"
	done
	echo "kprobes enabled: $(cat /sys/kernel/debug/kprobes/enabled 2>/dev/null || echo '?')"
	echo "unprivileged_bpf_disabled: $(cat /proc/sys/kernel/unprivileged_bpf_disabled 2>/dev/null || echo '?')"
	echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
}

# One result line: NAME VERDICT SECONDS DETAIL.
result() {
	echo "$1 $2 $3 ${4:-}" >>"$OUT/results"
	rm -f "$OUT/current"
	echo "argus-vm: $1: $2 (${3} s) ${4:-}"
}

# Run one test program to its end: result NAME pass|fail|skip with its log in
# $OUT/NAME.log. The rest of the arguments are the command.
guest_test() {
	local name=$1 t0 rc=0 verdict
	shift

	echo "argus-vm: $name: running"
	echo "$name" >"$OUT/current"
	t0=$(date +%s)
	timeout --kill-after=20 "$TEST_TIMEOUT_S" env ARGUS_SOURCE_DIR="$SRC" \
		ARGUS_BUILD_DIR="$BUILD" ARGUS_TEST_JOB_TIME_SCALE="$JOB_TIME_SCALE" "$@" >"$OUT/$name.log" 2>&1 </dev/null || rc=$?
	case $rc in
	0) verdict=pass ;;
	77) verdict=skip ;;
	*) verdict=fail ;;
	esac
	case $rc in 124 | 137) echo "timed out after $TEST_TIMEOUT_S s" >>"$OUT/$name.log" ;; esac
	result "$name" "$verdict" $(($(date +%s) - t0)) "exit $rc"
}

# argusd with "backends = $2" until it listens; GET /tree read back into
# $OUT/tree-$1.json and summarized in $OUT/tree-$1.txt.
guest_resolve() {
	local label=$1 order=$2 dir t0 rc=0 pid port=""

	echo "argus-vm: resolve[$label]: running"
	echo "resolve[$label]" >"$OUT/current"
	t0=$(date +%s)
	dir=$(mktemp -d /tmp/argus-resolve.XXXXXX)
	mkdir "$dir/workloads"
	cat >"$dir/argusd.conf" <<-EOF
		listen = 127.0.0.1:0
		state_dir = $dir/state
		workloads_dir = $dir/workloads
		services_dir = $dir/no-services
		victims_dir = $BUILD/bench/victims
		tree_file = $SRC/tree-data/tree.json
		schema_dir = $SRC/schema
		backends = $order
	EOF
	"$BUILD/argusd" --config "$dir/argusd.conf" >"$dir/argusd.log" 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 600); do
		port=$(sed -n 's/.*argusd ready: .*(port \([0-9]*\)).*/\1/p' "$dir/argusd.log")
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	if [ -n "$port" ]; then
		python3 - "$port" "$order" "$OUT/tree-$label.json" "$OUT/tree-$label.txt" \
			>>"$dir/argusd.log" 2>&1 <<-'EOF' || rc=$?
			import json, sys, urllib.request
			port, order, jpath, tpath = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4]
			tree = json.load(urllib.request.urlopen("http://127.0.0.1:%s/tree" % port, timeout=60))
			json.dump(tree, open(jpath, "w"), indent=1)
			ok = tree.get("backends") == order
			by = tree["summary"]["by_backend"]
			out = ["backends = %s: %s; unavailable %d" % (" ".join(order), ", ".join(
			    "%s %d" % (b, by.get(b, 0)) for b in ("fentry", "kprobe", "tracepoint")),
			    tree["summary"]["unavailable"])]
			if not ok:
			    out.append("  GET /tree says backends = %s" % tree.get("backends"))
			for b in order:
			    leaves = ["%s (%s)" % (n["id"], n["hook"]) for n in tree["nodes"]
			              if n["backend"] == b and not n["children"]]
			    out.append("  leaves on %s: %s" % (b, ", ".join(leaves) or "none"))
			out.append("  not on %s, and why:%s" % (order[0], "" if any(
			    n["backend"] != order[0] for n in tree["nodes"]) else " (every node is)"))
			# what a node's programs attach with ("kprobe+kretprobe/f": kprobe)
			kind = {"fentry": "fentry", "fexit": "fentry", "kprobe": "kprobe",
			        "kretprobe": "kprobe", "tp_btf": "tracepoint", "tracepoint": "tracepoint"}
			for n in tree["nodes"]:
			    for prog in n.get("programs", []):
			        used = {kind.get(k) for k in prog.split("/")[0].split("+")}
			        if not used <= set(order):
			            ok = False
			            out.append("  %s attaches %s, which the order leaves out" % (n["id"], prog))
			for n in tree["nodes"]:
			    b = n["backend"]
			    if b is not None and b not in order:
			        ok = False
			        out.append("  %s on %s, which is not in the order" % (n["id"], b))
			    if b is None and not n["reason"]:
			        ok = False
			    if b == order[0]:
			        continue
			    why = n["reason"] or "declares no %s hook" % order[0]
			    out.append("    %-36s %-10s %s" % (n["id"], b or "none", why))
			open(tpath, "w").write("\n".join(out) + "\n")
			sys.exit(0 if ok else 1)
		EOF
	else
		rc=1
	fi
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	cp "$dir/argusd.log" "$OUT/resolve-$label.log"
	rm -rf "$dir"
	result "resolve[$label]" "$([ "$rc" = 0 ] && echo pass || echo fail)" $(($(date +%s) - t0)) \
		"$([ -n "$port" ] || echo 'argusd did not start')"
}

# The matrix slice, scored as tests/test-matrix.c scores it: no incorrect and no
# failed run, every cell right (the null cell abstains, the others commit to
# the true path or above it).
guest_matrix() {
	local dir t0 rc=0 verdict=pass detail

	echo "argus-vm: matrix: running $CELLS"
	echo matrix >"$OUT/current"
	t0=$(date +%s)
	dir=$(mktemp -d /tmp/argus-matrix.XXXXXX)
	timeout --kill-after=30 "$MATRIX_TIMEOUT_S" python3 "$SRC/bench/eval/matrix.py" \
		--build "$BUILD" --cells "$CELLS" --reps 1 --repeats 3 --no-unprobed --out "$dir" \
		--timeout-scale "$VICTIM_TIMEOUT_SCALE" \
		>"$OUT/matrix.log" 2>&1 </dev/null || rc=$?
	cp "$dir/results.json" "$OUT/matrix-results.json" 2>/dev/null || true
	detail=$(python3 - "$dir/results.json" "$CELLS" <<-'EOF'
		import json, sys
		try:
		    res = json.load(open(sys.argv[1]))
		except (OSError, ValueError) as e:
		    print("no results.json (%s)" % e)
		    sys.exit(1)
		bad = []
		runs = {r["cell"]: r for r in res.get("runs", [])}
		# evallib.score: abstain is right on a null cell, leaf or shallow on the others
		for cell in sys.argv[2].split(","):
		    r = runs.get(cell) or {}
		    o = r.get("outcome")
		    print("%s: %s %s" % (cell, o, r.get("node") or r.get("verdict") or
		                         (r.get("error") or {}).get("code", "")))
		    if o not in ("leaf", "shallow", "abstain"):
		        bad.append(cell)
		t = res.get("totals", {}).get("calibrated", {})
		if t.get("incorrect") or t.get("failed"):
		    bad.append("incorrect %s, failed %s" % (t.get("incorrect"), t.get("failed")))
		print("failed: %s" % (", ".join(bad) if bad else "none"))
		sys.exit(1 if bad else 0)
	EOF
	) || verdict=fail
	[ "$rc" = 0 ] || verdict=fail
	echo "$detail" >>"$OUT/matrix.log"
	rm -rf "$dir"
	result matrix "$verdict" $(($(date +%s) - t0)) "exit $rc; $(echo "$detail" | tr '\n' ';')"
}

# One boot's part of the run: "tracepoint", "kprobe" or "fentry" (the
# resolution and the BPF tests with that backend forced), "default" (the
# daemon test and the matrix, on the backends argusd chooses by itself),
# "faults" (test-probe's fault tests alone, on those backends), or "bench"
# (bench-overhead, ARGUS_VM_BENCH_ROUNDS rounds, 5 by default).
guest_part() {
	local part=$1 order

	case $part in
	default)
		guest_resolve default "fentry kprobe tracepoint"
		guest_test test-daemon "$BUILD/test-daemon"
		guest_matrix
		;;
	faults)
		guest_resolve faults "fentry kprobe tracepoint"
		# shellcheck disable=SC2086 # the tests' names, one argument each
		guest_test "test-probe[faults]" "$BUILD/test-probe" $FAULT_TESTS
		;;
	bench)
		guest_resolve bench "fentry kprobe tracepoint"
		guest_test bench-overhead "$BUILD/bench-overhead" --rounds "$BENCH_ROUNDS" \
			--pages 5000
		;;
	*)
		order=$(printf '%s\n' "${BACKEND_ORDERS[@]}" | awk -v b="$part" '$1 == b')
		[ -n "$order" ] || die "unknown part $part"
		guest_resolve "$part" "$order"
		[ "$part" != tracepoint ] || guest_resolve tracepoint-alone tracepoint
		guest_test "test-probe[$part]" env ARGUS_BACKENDS="$order" "$BUILD/test-probe"
		guest_test "test-probe-pidns[$part]" env ARGUS_BACKENDS="$order" \
			unshare --pid --fork --mount-proc "$BUILD/test-probe"
		;;
	esac
}

guest_main() {
	local part="" arg args beat

	OUT=$1
	read -ra args </proc/cmdline
	for arg in "${args[@]}"; do
		case $arg in argus_part=*) part=${arg#argus_part=} ;; esac
	done
	guest_mounts
	guest_hold_tracepoints
	guest_hold_perf
	# shellcheck disable=SC1091
	. "$OUT/params"
	[ -f "$OUT/kernel.txt" ] || guest_facts >"$OUT/kernel.txt"
	# The kernel's code symbols at this boot's addresses (Debian's System.map
	# is a stub): the host names what a stalled guest's CPUs ran (stall_dump).
	awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' /proc/kallsyms >"$OUT/kallsyms"
	# Every HEARTBEAT_S, what runs: a test that hangs shows where, and a
	# guest that says nothing for STALL_S has stalled (boot).
	while sleep "$HEARTBEAT_S"; do
		echo "argus-vm: busiest: $(top -bn1 -o %CPU -w 200 | sed -n '8,10p' |
			awk '{ printf "%s %s%% %s; ", $12, $9, $11 }')"
	done &
	beat=$!
	# The build links Debian 12's libraries: all of them must be in the image.
	if ldd "$BUILD/argusd" "$BUILD/test-probe" "$BUILD/test-daemon" | grep 'not found' \
		>"$OUT/libraries.log"; then
		result "libraries[$part]" fail 0 "missing: $(tr -s ' \t\n' ' ' <"$OUT/libraries.log")"
	fi
	guest_part "$part"
	kill "$beat" 2>/dev/null || true
	touch "$OUT/done-$part"
}

# ---- the host side ----

preflight() {
	[ "$(id -u)" = 0 ] || skip "needs root (the rootfs, and the tests inside run as root)"
	# QEMU is this script's alone: installed here, not with the suite's dependencies
	if ! command -v qemu-system-x86_64 >/dev/null; then
		echo "test-stock-kernel: installing qemu-system-x86"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			qemu-system-x86 >/dev/null ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends qemu-system-x86 >/dev/null; } || true
	fi
	command -v qemu-system-x86_64 >/dev/null ||
		skip "qemu-system-x86_64 is not installed and could not be (apt-get install qemu-system-x86)"
	qemu-system-x86_64 -device help 2>/dev/null | grep -q virtio-9p-pci ||
		skip "this qemu-system-x86_64 has no 9p (virtfs) support"
	command -v timeout >/dev/null || skip "timeout (coreutils) is missing"
}

# Each failed test's failed checks, once per source line (a check in a loop
# fails many times), and what libbpf and the loader said went wrong.
print_failures() {
	local name verdict f

	while read -r name verdict _; do
		f=$OUT/$name.log
		if [ "$verdict" = pass ] || [ ! -f "$f" ]; then
			continue
		fi
		echo "# $name:"
		grep -E '^(FAIL|FATAL) |libbpf: .*(fail|error|invalid)|^probe_load: ' "$f" |
			sed "s|$SRC/||" | awk '{ k = ($1 == "FAIL" || $1 == "FATAL") ? $2 : $0 } !seen[k]++' |
			head -n 40 | sed 's/^/#   /'
	done <"$OUT/results"
}

# The tests of one part, in the order guest_part runs them.
part_tests() {
	case $1 in
	default) echo "resolve[default] test-daemon matrix" ;;
	faults) echo "resolve[faults] test-probe[faults]" ;;
	bench) echo "resolve[bench] bench-overhead" ;;
	*) echo "resolve[$1] test-probe[$1] test-probe-pidns[$1]" ;;
	esac
}

# Boot the image for one part of the run (guest_part), with its own time
# limit; the guest's console goes to $2/console-PART.log, its progress lines
# to stdout. A guest that hangs (a CPU that does not schedule for 120 s panics
# it: softlockup_panic=1, watchdog_thresh=60, long enough for TCG's slowness),
# crashes or runs out of time leaves the test it was running, which is
# counted as failed, and the next part boots afresh.
boot() {
	local image=$1 work=$2 part=$3 console=$2/console-$3.log limit rc=0 qpid tail_pid t

	limit=$PART_TIMEOUT_S
	[ "$part" = default ] && limit=$DEFAULT_TIMEOUT_S
	log "booting $(cat "$image/release") for the $part part (TCG, at most $limit s)"
	: >"$console"
	timeout --kill-after=10 "$limit" qemu-system-x86_64 \
		-accel "tcg,thread=${ARGUS_VM_TCG_THREAD:-single}" -cpu max -smp "${ARGUS_VM_SMP:-2}" -m "${ARGUS_VM_MEM_MB:-3072}" \
		-nodefaults -display none -no-reboot \
		-kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 loglevel=5 panic=-1 softlockup_panic=1 watchdog_thresh=60 init=/sbin/argus-vm-init argus_src=$SRC argus_part=$part" \
		-drive "file=$image/disk.img,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$SRC,mount_tag=argus_src,security_model=none,readonly=on" \
		-virtfs "local,path=$OUT,mount_tag=argus_out,security_model=none" \
		-monitor "unix:$work/monitor-$part.sock,server=on,wait=off" \
		-serial "file:$console" </dev/null >"$work/qemu-$part.log" 2>&1 &
	qpid=$!
	: >"$work/progress-$part"
	tail -n +1 -f --pid="$qpid" "$console" | grep --line-buffered '^argus-vm' |
		tee -a "$work/progress-$part" | sed -u 's/\r$//; s/^/# /' &
	tail_pid=$!
	watch_stall "$work" "$part" "$qpid" &
	watch_pid=$!
	wait "$qpid" || rc=$?
	kill "$watch_pid" 2>/dev/null || true
	wait "$tail_pid" "$watch_pid" 2>/dev/null || true
	[ -f "$work/stalled-$part" ] && echo "# the guest of the $part part stalled: $(cat "$work/stalled-$part")"
	[ -f "$OUT/done-$part" ] && return 0
	[ -f "$OUT/current" ] && echo "$(cat "$OUT/current") fail 0 did not finish: the guest hung," \
		"crashed or ran out of time (qemu exit $rc; console-$part.log)" >>"$OUT/results"
	rm -f "$OUT/current"
	# the part's tests that never started count as failed too
	for t in $(part_tests "$part"); do
		awk -v t="$t" '$1 == t { found = 1 } END { exit !found }' "$OUT/results" ||
			echo "$t fail 0 not run: the guest of the $part part stopped before it" \
				>>"$OUT/results"
	done
	echo "# the $part part did not finish; the end of its console:"
	sed 's/\r$//' "$console" | grep -v '^argus-vm' | tail -n 40 | sed 's/^/# console: /'
}

# The guest of part $2 (qemu $3) prints a heartbeat every HEARTBEAT_S. If
# neither a line of its own (progress-PART) nor its results have come for
# STALL_S, its user space has stopped (the kernel's own reports, an RCU stall
# every minute, do not count): every CPU's registers are read through QEMU's monitor, each
# instruction pointer named from the kernel's symbols, and the guest is
# stopped, so that the part fails in minutes with where it hung, not at its
# time limit with nothing.
watch_stall() {
	local work=$1 part=$2 qpid=$3 last now

	while kill -0 "$qpid" 2>/dev/null; do
		sleep 30
		last=$(stat -c %Y "$work/progress-$part" "$OUT"/* 2>/dev/null | sort -n | tail -n 1)
		now=$(date +%s)
		[ -n "$last" ] && [ $((now - last)) -lt "$STALL_S" ] && continue
		stall_dump "$work" "$part" >"$OUT/stall-$part.txt" 2>&1 || true
		echo "nothing from it for $STALL_S s; its CPUs: $(grep '^cpu' "$OUT/stall-$part.txt" |
			tr '\n' ';')" >"$work/stalled-$part"
		kill "$qpid" 2>/dev/null || true
		return
	done
}

# Every vCPU's registers from QEMU's monitor, each RIP named (symbol+offset)
# from the guest kernel's symbols as it gave them at boot (kallsyms).
stall_dump() {
	python3 - "$1/monitor-$2.sock" "$OUT/kallsyms" <<-'EOF'
		import bisect, re, socket, sys, time
		sock, ksyms = sys.argv[1:3]
		s = socket.socket(socket.AF_UNIX)
		s.connect(sock)
		s.settimeout(5)
		def cmd(c):
		    s.sendall(c.encode() + b"\n")
		    out, end = b"", time.time() + 5
		    while time.time() < end:
		        try:
		            chunk = s.recv(65536)
		        except socket.timeout:
		            break
		        if not chunk:
		            break
		        out += chunk
		    return out.decode(errors="replace")
		cmd("")
		# the monitor echoes what it is sent, with a terminal's cursor moves
		regs = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", cmd("info registers -a"))
		pairs = []
		try:
		    for line in open(ksyms):
		        f = line.split()
		        if len(f) == 2:
		            pairs.append((int(f[0], 16), f[1]))
		except (OSError, ValueError):
		    pass
		pairs.sort()
		syms = [a for a, _ in pairs]
		def name(rip):
		    i = bisect.bisect_right(syms, rip) - 1
		    return "%s+0x%x" % (pairs[i][1], rip - syms[i]) if i >= 0 else "?"
		cpu = 0
		for m in re.finditer(r"RIP=([0-9a-f]+)", regs):
		    rip = int(m.group(1), 16)
		    kind = "user" if rip < (1 << 47) else name(rip)
		    print("cpu%d %016x %s" % (cpu, rip, kind))
		    cpu += 1
		print(regs)
	EOF
}

host_main() {
	local image work t0 rc=0 npass nfail part

	preflight
	t0=$(date +%s)
	log "building $BUILD"
	BUILD_DIR=build-vm "$SRC/scripts/build.sh" >&2 || die "the build failed"
	rc=0
	image=$("$SRC/scripts/make-vm-image.sh") || rc=$?
	[ "$rc" = 77 ] && skip "no boot image (scripts/make-vm-image.sh said why above)"
	[ "$rc" = 0 ] || die "scripts/make-vm-image.sh failed (exit $rc)"
	image=$(echo "$image" | tail -n 1)

	work=$(mktemp -d /tmp/argus-vm.XXXXXX)
	OUT=$work/out
	mkdir -m 0755 "$OUT"
	# What the guest half needs from here.
	{
		printf 'CELLS=%q\n' "$CELLS"
		printf 'FAULT_TESTS=%q\n' "$FAULT_TESTS"
		printf 'BENCH_ROUNDS=%q\n' "${ARGUS_VM_BENCH_ROUNDS:-5}"
	} >"$OUT/params"
	: >"$OUT/results"
	for part in "${PARTS[@]}"; do
		boot "$image" "$work" "$part"
	done

	echo "# ---- the kernel in the guest"
	sed 's/^/# /' "$OUT/kernel.txt" 2>/dev/null || echo "# (the guest said nothing)"
	echo "# ---- the resolved tree, per backends setting (nodes not on the first backend, and why)"
	for f in "$OUT"/tree-*.txt; do
		[ -f "$f" ] && sed 's/^/# /' "$f"
	done
	echo "# ---- failed checks"
	print_failures
	[ -f "$OUT/matrix.log" ] && { echo "# ---- matrix"; tail -n 6 "$OUT/matrix.log" | sed 's/^/# /'; }
	echo "# ---- results"
	sed 's/^/# /' "$OUT/results"
	npass=$(awk '$2 == "pass"' "$OUT/results" | wc -l)
	nfail=$(awk '$2 != "pass"' "$OUT/results" | wc -l)
	log "wall time $(($(date +%s) - t0)) s"
	rm -f "$OUT/kallsyms"
	if [ -n "${ARGUS_VM_LOGS:-}" ]; then
		mkdir -p "$ARGUS_VM_LOGS"
		cp -r "$OUT"/. "$work"/console-*.log "$ARGUS_VM_LOGS/"
	fi
	if [ "$nfail" = 0 ]; then
		rm -rf "$work"
	else
		log "logs kept in $work"
	fi
	echo "$npass passed, $nfail failed"
	[ "$nfail" = 0 ]
}

if [ "${1:-}" = --in-guest ]; then
	[ -d "${2:-}" ] || die "usage: test-stock-kernel.sh --in-guest RESULTS_DIR"
	guest_main "$2"
else
	host_main
fi
