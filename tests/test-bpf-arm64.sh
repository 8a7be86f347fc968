#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The bundled probe builds for arm64 too: bpf/paths.bpf.c compiled by clang
# with -target bpf -D__TARGET_ARCH_arm64 against this build's vmlinux.h
# (another architecture's: ARGUS_VMLINUX_FOREIGN declares the registers
# bpf_tracing.h reads on arm64, which CO-RE relocates at load). The object
# must give a skeleton, carry arm64's register layout in its BTF, and name
# system calls by role only (the loader writes their numbers). Loading it
# needs an arm64 kernel, which this test does not have.
#
# Arguments: CLANG BPFTOOL SOURCE_DIR BUILD_DIR. Exit status: 0 pass, 1 fail.
set -eu

CLANG=$1 BPFTOOL=$2 SRC=$3 BUILD=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

if ! "$CLANG" -g -O2 -target bpf -D__TARGET_ARCH_arm64 -DARGUS_VMLINUX_FOREIGN -Wall -Werror \
	-I"$BUILD/bpf" -I"$SRC/bpf" -c "$SRC/bpf/paths.bpf.c" -o "$out/paths.bpf.o"; then
	echo "FAIL: paths.bpf.c does not build for arm64"
	exit 1
fi
echo "ok: paths.bpf.c builds for arm64"
if "$BPFTOOL" gen skeleton "$out/paths.bpf.o" >"$out/paths.skel.h"; then
	echo "ok: its skeleton"
else
	echo "FAIL: bpftool gen skeleton refuses the arm64 object"
	fail=1
fi
"$BPFTOOL" btf dump file "$out/paths.bpf.o" >"$out/btf.txt"
for want in "STRUCT 'user_pt_regs'" "syscall_roles"; do
	if grep -q "$want" "$out/btf.txt"; then
		echo "ok: its BTF has $want"
	else
		echo "FAIL: its BTF lacks $want"
		fail=1
	fi
done
# no syscall is known by number in the probe: the loader gives numbers their roles
if grep -nE '(\bid|\bnr) *[=!]= *[0-9]|#define +NR_' "$SRC"/bpf/*.h "$SRC"/bpf/*.c; then
	echo "FAIL: a system call named by number in bpf/ (above)"
	fail=1
else
	echo "ok: no system call named by number in bpf/"
fi
exit $fail
