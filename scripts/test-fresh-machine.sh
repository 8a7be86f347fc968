#!/bin/bash
# SPDX-License-Identifier: MIT
# The README's two commands as a new user runs them: a clean clone of this
# checkout's HEAD in root's 0700 home, on a fresh minbase Debian 12 root
# file system (scripts/make-test-rootfs.sh, git added), entered through a
# private mount namespace and pivot_root. Not chroot: the kernel refuses
# new user namespaces inside a chroot, and argusd's compiler sandbox needs
# them, as on a real machine.
#
#   test-fresh-machine.sh OUTDIR [demo|test|both]   (default both)
#
# Writes OUTDIR/demo.log, OUTDIR/test.log and OUTDIR/summary.txt (each
# command's exit status and wall time). Root; the test command takes about
# half an hour. apt's sources and settings are copied from this machine at
# run time, as make-test-rootfs.sh reads them; nothing about them is written
# here. The root file system copy is removed at the end unless
# ARGUS_KEEP_FRESH_ROOT=1.
set -eu

OUT=${1:?usage: test-fresh-machine.sh OUTDIR [demo|test|both]}
WHAT=${2:-both}
case $WHAT in demo | test | both) ;; *) echo "test-fresh-machine: demo, test or both" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "test-fresh-machine: run as root" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/.." && pwd)

CACHED=$("$SRC/scripts/make-test-rootfs.sh" git | tail -n 1)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
R=$(mktemp -d /var/tmp/argusd-fresh.XXXXXX)
cleanup() {
	if [ "${ARGUS_KEEP_FRESH_ROOT:-0}" != 1 ]; then
		rm -rf --one-file-system "$R"
	fi
}
trap cleanup EXIT

cp -a "$CACHED/." "$R/"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
rm -f "$R/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
	/etc/apt/apt.conf.d/*; do
	[ -f "$f" ] && cp "$f" "$R$f"
done
git clone -q "$SRC" "$R/root/argusd"
chmod 0700 "$R/root"

cat >"$R/run-inside.sh" <<IN
#!/bin/bash
mount -t proc proc /proc
umount -l /.oldroot && rmdir /.oldroot || { echo "the host's root is still mounted"; exit 1; }
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /dev/shm 2>/dev/null || true
cd /root/argusd
echo "home: \$(stat -c %A /root), HEAD \$(git log --oneline -1)"
if [ $WHAT != test ]; then
	s=\$(date +%s)
	./scripts/demo.sh >/out/demo.log 2>&1; rc=\$?
	echo "demo rc=\$rc wall=\$(( \$(date +%s) - s )) s"
fi
if [ $WHAT != demo ]; then
	s=\$(date +%s)
	./scripts/test.sh >/out/test.log 2>&1; rc=\$?
	echo "test rc=\$rc wall=\$(( \$(date +%s) - s )) s"
fi
IN
chmod +x "$R/run-inside.sh"
mkdir -p "$R/out" "$R/.oldroot"
unshare -m --propagation private bash -c "
	mount --bind '$R' '$R'
	mount --rbind /dev '$R/dev'
	mount --rbind /sys '$R/sys'
	mount --bind '$OUT' '$R/out'
	cd '$R'
	pivot_root . .oldroot
	exec /usr/sbin/chroot . /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /run-inside.sh
" 2>&1 | tee "$OUT/summary.txt"
! grep -q "rc=[1-9]" "$OUT/summary.txt"
