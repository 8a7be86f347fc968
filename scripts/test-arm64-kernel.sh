#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian 12's stock arm64 kernel (linux-image-arm64, 6.1) booted in QEMU's
# aarch64 TCG, and what argusd's probe can do there:
#
#   - the kernel's facts: uname, /sys/kernel/btf/vmlinux, the configuration
#     options the backends stand on, what bpftool finds, the BPF JIT;
#   - bpf-check: every program of bpf/paths.bpf.o built for arm64 as
#     tests/test-bpf-arm64.sh builds it (against this build's vmlinux.h),
#     loaded and attached alone, as argusd's resolution tries its hooks
#     (kprobes and fentry on vfs_read, the system call tracepoints on openat's);
#   - test-probe (tests/test-probe.c), cross-built for arm64, one run on the
#     backends argusd chooses (or ARGUS_BACKENDS).
#
#   scripts/test-arm64-kernel.sh
#
# On the host: downloads the arm64 packages it needs from this machine's apt
# source for bookworm, with apt in private state directories under the cache
# (the host's apt configuration and dpkg database stay as they are), and
# unpacks them there: the kernel, busybox-static, bpftool, and the -dev
# packages of everything argusd links, which make the sysroot of the cross
# build. Then, each run: the arm64 vmlinux.h (the BTF of the package's
# Image), the cross build of test-probe (clang --target=aarch64-linux-gnu,
# ld.lld, CMake, in the cache), bpf-check (below; static), an initramfs of
# busybox, bpftool, bpf-check, test-probe and the libraries they need, whose
# /init runs the checks and powers off, and an empty ext4 disk for /var/tmp
# (test-probe's file tests want a block device under their files). The guest
# never leaves its initramfs; the virtio and ext4 modules are loaded by
# insmod. It boots with -kernel/-initrd on -M virt -cpu max, one CPU, and
# answers on its PL011 console: every line for the host starts with "@@ ".
#
# Prints the kernel's facts and each check, and last "N passed, N failed";
# the guest's console, test-probe's lines with it, stays in
# $CACHE/last-console.log.
# A BTF tracepoint of the object that the kernel lacks (x86's
# page_fault_user; mm_filemap_fault and mm_filemap_map_pages, newer than
# 6.1) is listed, not failed: argusd leaves such tracepoints out as well. So
# is an fentry/fexit program whose attach the kernel refuses with ENOTSUPP
# (arm64 has BPF trampolines on kernel functions from 6.4, with ftrace's
# direct calls; Debian 12's 6.1 has none): argusd's resolution refuses the
# fentry backend there and takes the next one. The named fentry/fexit pair
# on handle_mm_fault is such a program too: argusd needs it on kernels before
# 6.2 only where page_fault_user opens faults (x86), and opens them here by
# the kprobe pair on handle_mm_fault, with the write-protect path's kprobes
# (do_wp_page, do_huge_pmd_wp_page, wp_page_copy), which are checked
# (daemon/probe_try.c, try_fault_stand_ins); the guest also says whether
# those functions are in its /proc/kallsyms.
#
# Environment: ARGUS_ARM64_CACHE (default $ARGUS_ROOTFS_CACHE/arm64, that
# /var/cache/argusd-test), ARGUS_BUILD_DIR (the build whose bpf/vmlinux.h
# tests/test-bpf-arm64.sh uses, default build), ARGUS_ARM64_TEST_PROBE (0:
# leave test-probe out, a shorter run; default 1), ARGUS_BACKENDS (passed to
# test-probe), ARGUS_ARM64_MEM_MB (the guest's memory, 1536),
# ARGUS_ARM64_TIMEOUT_S (the boot's limit, 1200; a whole run took 210 s
# here), CLANG (clang). TCG is slow: its times are worth ratios at most.
#
# Exit status: 0 when every check passed, 1 when one failed, 77 when this
# machine cannot run it (not root; no qemu-system-aarch64, clang, ld.lld,
# cmake, cpio, python3, mkfs.ext4 or bpftool; no build; no apt source for bookworm,
# or it does not answer: the reason printed).
set -eu

SELF=$(realpath "$0")
SRC=$(realpath "$(dirname "$SELF")/..")
BUILD=${ARGUS_BUILD_DIR:-$SRC/build}
CACHE=${ARGUS_ARM64_CACHE:-${ARGUS_ROOTFS_CACHE:-/var/cache/argusd-test}/arm64}
TEST_PROBE=${ARGUS_ARM64_TEST_PROBE:-1}
MEM_MB=${ARGUS_ARM64_MEM_MB:-1536}
TIMEOUT_S=${ARGUS_ARM64_TIMEOUT_S:-1200}
CLANG=${CLANG:-clang}
SUITE=bookworm
# Bump when the set of packages or the way they are unpacked changes.
FORMAT=1
# The guest's: the kernel, busybox, bpftool. The cross builds': the rest.
PACKAGES="linux-image-arm64 busybox-static bpftool libc6-dev libgcc-12-dev libbpf-dev
libelf-dev zlib1g-dev libjansson-dev libmicrohttpd-dev libcurl4-openssl-dev libsystemd-dev
libsqlite3-dev"
# The modules the guest loads, in this order: the virtio disk (virtio-mmio on
# -M virt) and ext4 (crc32c_generic before it: no modprobe to ask for it).
MODULES="virtio_mmio virtio_blk crc16 mbcache jbd2 crc32c_generic ext4"
# The configuration options argusd's backends stand on.
CONFIGS="CONFIG_BPF_SYSCALL CONFIG_BPF_JIT CONFIG_DEBUG_INFO_BTF CONFIG_KPROBES
CONFIG_KPROBE_EVENTS CONFIG_FTRACE CONFIG_FUNCTION_TRACER CONFIG_DYNAMIC_FTRACE_WITH_REGS
CONFIG_BPF_EVENTS"

log() { echo "test-arm64-kernel: $*" >&2; }
skip() {
	log "cannot run here: $*"
	exit 77
}
die() {
	log "$*"
	exit 1
}

# ---- the arm64 packages (cached) ----

# apt on this machine's sources, for arm64, with its own state and cache
# under $CACHE/apt (no dpkg --add-architecture on the host).
apt_arm64() {
	apt-get -q -o Dir::State="$CACHE/apt/state" -o Dir::State::status="$CACHE/apt/status" \
		-o Dir::Cache="$CACHE/apt/cache" -o Dir::Etc::SourceList="$CACHE/apt/sources.list" \
		-o Dir::Etc::SourceParts=/nonexistent -o APT::Architecture=arm64 \
		-o APT::Architectures::=arm64 -o Debug::NoLocking=1 "$@"
}

# The URI of the host's apt source for $SUITE (apt has parsed its configuration).
find_mirror() {
	# shellcheck disable=SC2016 # $(REPO_URI) is apt's field, not the shell's
	apt-get indextargets --format '$(REPO_URI)' "Codename: $SUITE" 'Identifier: Packages' 2>/dev/null |
		grep -E '^https?://' | head -n 1
}

# Download PACKAGES and their dependencies (an empty status file: all of
# them) and unpack every .deb into $CACHE/root, once.
get_packages() {
	local mirror deb m

	[ -f "$CACHE/root/complete-$FORMAT" ] && return 0
	mirror=$(find_mirror)
	[ -n "$mirror" ] || skip "no http(s) apt source for $SUITE (apt-get update on the host first?)"
	rm -rf "$CACHE/apt" "$CACHE/root"
	mkdir -p "$CACHE/apt/state/lists/partial" "$CACHE/apt/cache/archives/partial" "$CACHE/root/modules"
	: >"$CACHE/apt/status"
	echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE main" \
		>"$CACHE/apt/sources.list"
	log "downloading the arm64 packages"
	apt_arm64 update >"$CACHE/apt.log" 2>&1 || skip "apt-get update for arm64 failed (see $CACHE/apt.log)"
	# shellcheck disable=SC2086
	apt_arm64 -y --no-install-recommends --download-only install $PACKAGES >>"$CACHE/apt.log" 2>&1 ||
		skip "downloading the arm64 packages failed (see $CACHE/apt.log)"
	for deb in "$CACHE"/apt/cache/archives/*.deb; do
		dpkg-deb -x "$deb" "$CACHE/root"
	done
	# Of the kernel's modules, the few the guest loads (the rest is 400 MB).
	for m in $MODULES; do
		find "$CACHE/root/lib/modules" -name "$m.ko" -exec cp {} "$CACHE/root/modules/" \;
		[ -f "$CACHE/root/modules/$m.ko" ] || die "no module $m in the arm64 kernel package"
	done
	rm -rf "$CACHE"/apt/cache/archives/*.deb "$CACHE"/root/lib/modules
	touch "$CACHE/root/complete-$FORMAT"
}

# ---- the cross build of test-probe ----

# vmlinux.h of the arm64 kernel, for a build for it (argusd dumps the running
# kernel's BTF; this one is not running): the BTF blob in the Image, found by
# its header (magic 0xeB9F, version 1, 24 bytes, types first then strings).
arm64_vmlinux_h() {
	local image=$1 out=$2

	python3 - "$image" "$out.btf" <<'EOF' || die "no BTF found in $image"
import struct, sys
data = open(sys.argv[1], "rb").read()
header = struct.pack("<HBBIII", 0xEB9F, 1, 0, 24, 0, 0)[:12]
at = data.find(header)
while at >= 0:
    type_len, str_off, str_len = struct.unpack_from("<III", data, at + 12)
    if str_off == type_len and type_len > 1 << 20:
        open(sys.argv[2], "wb").write(data[at:at + 24 + str_off + str_len])
        sys.exit(0)
    at = data.find(header, at + 1)
sys.exit(1)
EOF
	bpftool btf dump file "$out.btf" format c >"$out.tmp"
	mv "$out.tmp" "$out"
}

# Build test-probe for arm64 in $CACHE/build (kept: the next run is
# incremental), against the unpacked packages; prints its path.
build_test_probe() {
	local dir=$CACHE/build kernel=$1

	# a build dir belongs to one checkout
	[ "$(cat "$dir/.src" 2>/dev/null)" = "$SRC" ] || rm -rf "$dir"
	mkdir -p "$dir/bpf"
	echo "$SRC" >"$dir/.src"
	cat >"$dir/toolchain.cmake" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_SYSROOT $CACHE/root)
set(CMAKE_C_COMPILER $CLANG)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} $CACHE/root)
set(ENV{PKG_CONFIG_LIBDIR} $CACHE/root/usr/lib/aarch64-linux-gnu/pkgconfig:$CACHE/root/usr/share/pkgconfig)
EOF
	# made first: CMake's rule would dump the host's (x86) BTF
	[ -f "$dir/bpf/vmlinux.h" ] || arm64_vmlinux_h "$kernel" "$dir/bpf/vmlinux.h"
	{
		cmake -S "$SRC" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$dir/toolchain.cmake" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo &&
			make -C "$dir" -j"$(nproc)" test-probe
	} >"$CACHE/build.log" 2>&1 || {
		tail -n 30 "$CACHE/build.log" >&2
		die "the cross build of test-probe failed (above; all of it in $CACHE/build.log)"
	}
	echo "$dir/test-probe"
}

# ---- what the guest runs ----

# bpf-check OBJECT: every program of OBJECT loaded and attached alone, as
# argusd's trials do (daemon/probe_try.c), with a target for the sections
# that name none. One line per program: "ok:", "FAIL:" or "absent:" (a BTF
# tracepoint this kernel has not).
bpf_check_source() {
	cat <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define FUNC "vfs_read"
#define ENOTSUPP 524 /* the kernel's own, not in libc's errno.h */

static int warnings_only(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

static int is_function(const char *sec)
{
	return !strcmp(sec, "fentry") || !strcmp(sec, "fexit");
}

/* a program on a BPF trampoline: the generic pairs and the named ones */
static int on_trampoline(const char *sec)
{
	return !strncmp(sec, "fentry", 6) || !strncmp(sec, "fexit", 5);
}

static struct bpf_link *attach(struct bpf_program *p, const char *sec)
{
	if (!strcmp(sec, "kprobe") || !strcmp(sec, "kretprobe"))
		return bpf_program__attach_kprobe(p, sec[1] == 'r', FUNC);
	if (!strcmp(sec, "tracepoint"))
		return bpf_program__attach_tracepoint(p, "syscalls",
			strstr(bpf_program__name(p), "exit") ? "sys_exit_openat" : "sys_enter_openat");
	return bpf_program__attach(p);
}

/* 0 when program name of the object at path loads and attaches; the verdict printed */
static int trial(const char *path, const char *name)
{
	struct bpf_object *o = bpf_object__open_file(path, NULL);
	struct bpf_program *p, *it;
	struct bpf_link *l;
	const char *sec, *step = "load";
	int r;

	if (!o)
		return printf("FAIL: %s: open: %s\n", name, strerror(errno)), 1;
	p = bpf_object__find_program_by_name(o, name);
	bpf_object__for_each_program (it, o)
		bpf_program__set_autoload(it, it == p);
	sec = bpf_program__section_name(p);
	r = is_function(sec) ? bpf_program__set_attach_target(p, 0, FUNC) : 0;
	if (!r)
		r = bpf_object__load(o);
	if (!r) {
		step = "attach";
		l = attach(p, sec);
		r = l ? 0 : -errno;
		bpf_link__destroy(l);
	}
	if (r == -ENOTSUPP && on_trampoline(sec))
		printf("refused: %s (%s): attach: ENOTSUPP, no BPF trampoline on a kernel function here\n",
		       name, sec);
	else if (r)
		printf("FAIL: %s (%s): %s: %s\n", name, sec, step,
		       r == -ENOTSUPP ? "ENOTSUPP" : strerror(-r));
	else
		printf("ok: %s (%s) loads and attaches\n", name, sec);
	fflush(stdout);
	bpf_object__close(o);
	return r && r != -ENOTSUPP;
}

int main(int argc, char **argv)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_object *o;
	struct bpf_program *p;
	int fails = 0;

	libbpf_set_print(warnings_only);
	if (argc != 2 || !vmlinux || !(o = bpf_object__open_file(argv[1], NULL)))
		return fprintf(stderr, "usage: bpf-check OBJECT (on a kernel with BTF)\n"), 2;
	bpf_object__for_each_program (p, o) {
		const char *sec = bpf_program__section_name(p), *name = bpf_program__name(p);
		char tp[128];

		/* the fentry/fexit pairs are one program repeated: pair 0 stands for all */
		if (is_function(sec) && !strstr(name, "_0"))
			continue;
		snprintf(tp, sizeof(tp), "btf_trace_%s", sec + strlen("tp_btf/"));
		if (!strncmp(sec, "tp_btf/", 7) && btf__find_by_name_kind(vmlinux, tp, BTF_KIND_TYPEDEF) < 0) {
			printf("absent: %s (%s): no such tracepoint in this kernel\n", name, sec);
			continue;
		}
		fails += trial(argv[1], name);
	}
	return fails ? 1 : 0;
}
EOF
}

# The guest's /init. Every line meant for the host starts with "@@ KIND ",
# so that the kernel's own messages on the console can be told apart.
guest_init() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo 1 >/proc/sys/kernel/printk
say() { while IFS= read -r line; do echo "@@ $1 $line"; done; }
uptime() { cut -d' ' -f1 /proc/uptime; }
echo "@@ uptime $(uptime)"
uname -a | say uname
[ -e /sys/kernel/btf/vmlinux ] && echo "@@ btf yes" || echo "@@ btf no"
grep -hE '^CONFIG_.*(BPF|KPROBE|FTRACE|FUNCTION_TRACER|BTF)' /boot/config-* | say config
echo "@@ jit $(cat /proc/sys/net/core/bpf_jit_enable)"
bpftool feature probe kernel 2>&1 | grep -E 'program_type|JIT|kprobe_multi' | say probe
/bpf-check /paths.bpf.o 2>&1 | say check
grep -wE 'handle_mm_fault|do_wp_page|do_huge_pmd_wp_page|wp_page_copy' /proc/kallsyms |
	cut -d' ' -f2- | say kallsyms
echo "@@ uptime-checked $(uptime)"
if [ -x /test-probe ]; then
	for m in $(cat /modules/order); do insmod "/modules/$m.ko" || echo "@@ fact no module $m"; done
	mount -t ext4 /dev/vda /var/tmp || echo "@@ fact /var/tmp is not on the disk"
	ip link set lo up
	ulimit -l unlimited
	[ -s /backends ] && export ARGUS_BACKENDS="$(cat /backends)"
	{ ARGUS_SOURCE_DIR=/src /test-probe; echo $? >/tmp/rc; } 2>&1 | say tap
	echo "@@ test-probe-exit $(cat /tmp/rc)"
	echo "@@ uptime-test-probe $(uptime)"
fi
echo "@@ end"
poweroff -f
EOF
}

# Copy the shared libraries the arm64 ELF file $1 needs into the initramfs
# $2, and theirs, found by their names in $CACHE/root.
copy_libs() {
	local file=$1 dir=$2 lib path

	for lib in $(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(cd "$CACHE/root" && find lib usr/lib -name "$lib" | head -n 1)
		[ -n "$path" ] || die "no $lib (needed by $file) in the arm64 packages"
		[ -e "$dir/$path" ] && continue
		mkdir -p "$dir/$(dirname "$path")"
		cp -L "$CACHE/root/$path" "$dir/$path"
		copy_libs "$dir/$path" "$dir"
	done
}

# Build the object and bpf-check, and the initramfs in $1/initrd.cpio.gz,
# with test-probe $2 (none when empty).
make_initramfs() {
	local tmp=$1 test_probe=$2 dir=$1/initramfs

	"$CLANG" -g -O2 -target bpf -D__TARGET_ARCH_arm64 -DARGUS_VMLINUX_FOREIGN -Wall -Werror \
		-I"$BUILD/bpf" -I"$SRC/bpf" -c "$SRC/bpf/paths.bpf.c" -o "$tmp/paths.bpf.o" ||
		die "bpf/paths.bpf.c does not build for arm64"
	bpf_check_source >"$tmp/bpf-check.c"
	"$CLANG" --target=aarch64-linux-gnu --sysroot="$CACHE/root" -fuse-ld=lld -O2 -Wall -static \
		-o "$tmp/bpf-check" "$tmp/bpf-check.c" -lbpf -lelf -lz || die "bpf-check does not build"

	mkdir -p "$dir"/{bin,boot,dev,proc,sys,tmp,var/tmp,usr/sbin,src,modules}
	cp "$CACHE/root/bin/busybox" "$dir/bin/"
	cp "$CACHE/root/usr/sbin/bpftool" "$dir/usr/sbin/"
	copy_libs "$dir/usr/sbin/bpftool" "$dir"
	cp "$CACHE"/root/lib/ld-linux-aarch64.so.1 "$dir/lib/"
	cp "$CACHE"/root/boot/config-* "$dir/boot/"
	cp "$tmp/paths.bpf.o" "$tmp/bpf-check" "$dir/"
	if [ -n "$test_probe" ]; then
		cp "$test_probe" "$dir/"
		copy_libs "$dir/test-probe" "$dir"
		cp -r "$SRC/tree-data" "$dir/src/"
		cp "$CACHE"/root/modules/*.ko "$dir/modules/"
		echo "$MODULES" >"$dir/modules/order"
		[ -z "${ARGUS_BACKENDS:-}" ] || echo "$ARGUS_BACKENDS" >"$dir/backends"
	fi
	guest_init >"$dir/init"
	chmod 0755 "$dir/init"
	(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.cpio.gz"
}

# ---- the boot ----

# Boot the guest; its console into $1/console.log, with $1/disk.img as its
# virtio disk. Returns QEMU's status (124 when it ran past TIMEOUT_S).
boot() {
	local tmp=$1 kernel=$2

	log "booting $(basename "$kernel") (TCG, one CPU: minutes)"
	: >"$tmp/console.log"
	# pauth-impdef: TCG's pointer authentication with QEMU's own cheap hash,
	# not the architected one that makes every function call slow.
	timeout -k 10 "$TIMEOUT_S" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -accel tcg \
		-smp 1 -m "$MEM_MB" -display none -monitor none -serial "file:$tmp/console.log" \
		-no-reboot -kernel "$kernel" -initrd "$tmp/initrd.cpio.gz" \
		-drive "file=$tmp/disk.img,format=raw,if=none,id=disk" -device virtio-blk-device,drive=disk \
		-append "console=ttyAMA0 panic=-1 quiet"
}

# ---- the verdicts ----

PASSED=0 FAILED=0
check() {
	if [ "$1" = ok ]; then
		PASSED=$((PASSED + 1))
		echo "ok: $2"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL: $2"
	fi
}

# Count check $1 as passed when the command that follows succeeds.
expect() {
	local what=$1

	shift
	if "$@"; then check ok "$what"; else check FAIL "$what"; fi
}

# The guest's lines of kind $1, without their prefix.
said() {
	sed -n "s/^@@ $1 //p" "$RESULTS"
}

# Did the guest say a line of kind $1 that matches $2 whole (a grep pattern)?
has() {
	said "$1" | grep -qx -- "$2"
}

kernel_verdicts() {
	local c

	echo "   uname: $(said uname)"
	echo "   guest time: user space at $(said uptime) s, bpf-check done at $(said uptime-checked) s"
	said fact | sed 's/^/   /'
	expect "an aarch64 kernel" has uname '.* aarch64 .*'
	expect "/sys/kernel/btf/vmlinux" has btf yes
	for c in $CONFIGS; do
		expect "$c=y" has config "$c=y"
	done
	expect "the BPF JIT is on" has jit 1
	for c in kprobe tracepoint tracing raw_tracepoint; do
		expect "bpftool: program type $c" has probe "eBPF program_type $c is available"
	done
	said probe | grep -v program_type | sed 's/^/   bpftool: /' || true
	said kallsyms | sed 's/^/   kallsyms: /' || true
}

# In the guest's order: ok and FAIL lines are checks, the rest (absent,
# refused, libbpf's warnings) is said.
bpf_check_verdicts() {
	local line

	while IFS= read -r line; do
		case $line in
		ok:*) check ok "${line#ok: }" ;;
		FAIL:*) check FAIL "${line#FAIL: }" ;;
		*) echo "   $line" ;;
		esac
	done < <(said check)
}

# test-probe: one check for the whole run (as CTest counts it), with its
# summary and its failed and skipped checks (tests/tap.h's lines).
test_probe_verdicts() {
	local rc

	rc=$(said test-probe-exit)
	echo "   test-probe${ARGUS_BACKENDS:+ (ARGUS_BACKENDS=$ARGUS_BACKENDS)} ended at" \
		"$(said uptime-test-probe) s of guest time"
	said tap | grep -E '^(test-probe: |FAIL |FATAL |# SKIP )' | sed 's/^/   /' || true
	expect "test-probe (exit ${rc:-none})" [ "$rc" = 0 ]
}

main() {
	local c tmp kernel test_probe="" rc=0

	[ "$(id -u)" = 0 ] || skip "not root"
	for c in qemu-system-aarch64 "$CLANG" ld.lld cmake cpio python3 mkfs.ext4 bpftool; do
		command -v "$c" >/dev/null || skip "no $c"
	done
	[ -f "$BUILD/bpf/vmlinux.h" ] || skip "no $BUILD/bpf/vmlinux.h (scripts/build.sh first)"

	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock -w 1800 9 || die "timed out waiting for another run ($CACHE/.lock)"
	get_packages
	kernel=$(find "$CACHE/root/boot" -name 'vmlinuz-*' | sort -V | tail -n 1)
	[ "$TEST_PROBE" = 0 ] || test_probe=$(build_test_probe "$kernel")
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	make_initramfs "$tmp" "$test_probe"
	truncate -s 512M "$tmp/disk.img"
	mkfs.ext4 -q -F "$tmp/disk.img"

	SECONDS=0
	boot "$tmp" "$kernel" || rc=$?
	log "QEMU exited $rc after $SECONDS s"
	# kept past the run: test-probe's own lines (its counts) are there, not in the summary
	RESULTS=$CACHE/last-console.log
	tr -d '\r' <"$tmp/console.log" >"$RESULTS"
	grep -q '^@@ end' "$RESULTS" || tail -n 40 "$RESULTS"
	expect "the guest ran its checks to the end" grep -qx '@@ end' "$RESULTS"
	kernel_verdicts
	bpf_check_verdicts
	[ -z "$test_probe" ] || test_probe_verdicts
	echo "   the boot took $SECONDS s of host time"
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}

main "$@"
