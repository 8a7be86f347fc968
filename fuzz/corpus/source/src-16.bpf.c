#include "bpf/bpf_tracing.h"
#include "bpf/bpf_core_read.h"
char c = '#';
