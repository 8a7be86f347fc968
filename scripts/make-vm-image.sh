#!/bin/bash
# SPDX-License-Identifier: MIT
# Make (or reuse) a cached boot image of Debian 12's stock kernel for QEMU.
#
#   make-vm-image.sh
#
# Prints, on its last line of stdout, a directory holding vmlinuz, initrd.img
# and disk.img: the kernel of Debian's linux-image-amd64 package, the initrd
# initramfs-tools built for it (the virtio disk driver and ext4 are modules,
# so they are in there), and a raw ext4 image of the root filesystem. The
# root filesystem is a debootstrap rootfs (scripts/make-test-rootfs.sh) with
# that kernel and the libraries argusd and its tests link, plus one file of
# its own: /sbin/argus-vm-init, the guest's PID 1 (below), which mounts the
# checkout shared by the host and runs scripts/test-stock-kernel.sh in it.
#
# Cached under $ARGUS_ROOTFS_CACHE (default /var/cache/argusd-test) in a
# directory named by a hash of the rootfs, the init and this format; made in
# a temporary directory and renamed into place when complete. The image is
# never written to by a guest (QEMU opens it with snapshot=on).
#
# Exit status: 0 with the path printed; 77 when it cannot be made here (what
# make-test-rootfs.sh says, or mkfs.ext4 missing; the reason on stderr); 1 on
# any other failure.
set -eu

SELF=$(realpath "$0")
SCRIPTS=$(dirname "$SELF")
CACHE=${ARGUS_ROOTFS_CACHE:-/var/cache/argusd-test}
# Bump when the way the image is made changes, so that old images are not reused.
FORMAT=1
# Free space on the root filesystem for the tests' files (data files, databases).
FREE_MB=3072
# The kernel and its initrd, what the test binaries link (Debian 12's
# libraries, as on the build host), python3 for the matrix, iproute2 for the
# loopback interface, procps and util-linux for the tests' helpers, sqlite3
# for test-daemon's look into the store.
PACKAGES="linux-image-amd64 initramfs-tools kmod libc6 libbpf1 libmicrohttpd12 libjansson4
libcurl4 libsystemd0 libsqlite3-0 libelf1 python3 iproute2 procps util-linux sqlite3"

log() { echo "make-vm-image: $*" >&2; }
skip() {
	log "cannot make the image: $*"
	exit 77
}
die() {
	log "$*"
	exit 1
}

# PID 1 of the guest. The initrd mounted the root filesystem and moved /dev,
# /proc and /sys onto it; this mounts the two 9p shares (the checkout,
# read-only, at the path it has on the host; a writable results directory),
# runs the guest half of test-stock-kernel.sh and powers the machine off.
# Should anything go wrong, PID 1 exits and the kernel panics; panic=-1 and
# QEMU's -no-reboot turn that into the end of QEMU.
guest_init() {
	cat <<'EOF'
#!/bin/sh
# The guest's PID 1 (made by scripts/make-vm-image.sh).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
src=
for arg in $(cat /proc/cmdline); do
	case $arg in argus_src=*) src=${arg#argus_src=} ;; esac
done
modprobe 9pnet_virtio && modprobe 9p || echo "argus-vm-init: no 9p modules" >/dev/console
mkdir -p "$src" /argus-out
opts=trans=virtio,version=9p2000.L,msize=262144
if mount -t 9p -o "$opts,ro,cache=loose" argus_src "$src" &&
	mount -t 9p -o "$opts" argus_out /argus-out; then
	/bin/bash "$src/scripts/test-stock-kernel.sh" --in-guest /argus-out </dev/console >/dev/console 2>&1
	echo "argus-vm-init: guest script exited $?" >/dev/console
else
	echo "argus-vm-init: cannot mount the shares" >/dev/console
fi
umount /argus-out 2>/dev/null
sync
echo o >/proc/sysrq-trigger
sleep 30
EOF
}

main() {
	local out rc=0 rootfs key dest tmp kernel initrd size_mb

	[ "$(id -u)" = 0 ] || skip "not root"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 (e2fsprogs) is missing"
	# shellcheck disable=SC2086
	out=$("$SCRIPTS/make-test-rootfs.sh" $PACKAGES) || rc=$?
	[ "$rc" = 0 ] || exit "$rc"
	rootfs=$(echo "$out" | tail -n 1)
	[ -d "$rootfs/boot" ] || die "no /boot in $rootfs"

	key=$(printf 'format=%s rootfs=%s\n%s\n' "$FORMAT" "$rootfs" "$(guest_init)" |
		sha256sum | cut -c1-16)
	dest=$CACHE/vm-$key
	if [ -f "$dest/complete" ]; then
		echo "$dest"
		return 0
	fi

	exec 9>"$CACHE/.vm-lock"
	flock -w 1800 9 || die "timed out waiting for another image build ($CACHE/.vm-lock)"
	if [ -f "$dest/complete" ]; then
		echo "$dest"
		return 0
	fi
	rm -rf --one-file-system "$CACHE"/.vm-build.*
	tmp=$(mktemp -d "$CACHE/.vm-build.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf --one-file-system '$tmp'" EXIT

	# One kernel in the rootfs: the newest, should there be more.
	kernel=$(find "$rootfs/boot" -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
	[ -n "$kernel" ] || die "no kernel in $rootfs/boot (linux-image-amd64 not installed?)"
	initrd=$rootfs/boot/initrd.img-${kernel##*/vmlinuz-}
	[ -f "$initrd" ] || die "no initrd for ${kernel##*/} (initramfs-tools did not run?)"
	cp "$kernel" "$tmp/vmlinuz"
	cp "$initrd" "$tmp/initrd.img"
	echo "${kernel##*/vmlinuz-}" >"$tmp/release"

	# The rootfs with the init added, through an overlay in a private mount
	# namespace (the cached rootfs stays as it is), written into the image.
	mkdir -p "$tmp/upper/sbin" "$tmp/ovlwork" "$tmp/merged"
	guest_init >"$tmp/upper/sbin/argus-vm-init"
	chmod 0755 "$tmp/upper/sbin/argus-vm-init"
	size_mb=$(($(du -sm "$rootfs" | cut -f1) + FREE_MB))
	log "writing a ${size_mb} MiB root filesystem image"
	# shellcheck disable=SC2016 # the inner shell expands its own arguments
	unshare --mount --propagation private sh -c '
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/ovlwork" "$2/merged" &&
		mkfs.ext4 -q -F -L argus-root -d "$2/merged" "$2/disk.img" "$3M"' \
		sh "$rootfs" "$tmp" "$size_mb" || die "making the image failed"
	rm -rf "$tmp/upper" "$tmp/ovlwork" "$tmp/merged"
	touch "$tmp/complete"
	mv -T "$tmp" "$dest"
	trap - EXIT
	log "image ready in $dest"
	echo "$dest"
}

main "$@"
