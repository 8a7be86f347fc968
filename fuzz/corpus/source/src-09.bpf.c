#include_next <vmlinux.h>
