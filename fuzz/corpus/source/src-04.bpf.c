#define A 1
#if A
#endif
#pragma unroll
#pragma clang loop unroll(full)
