#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
