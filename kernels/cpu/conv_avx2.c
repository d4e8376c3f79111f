/* kernels/cpu/conv_avx2.c - the convolution-network layers of conv_cpu.c
 * compiled for AVX2: the same source under target("avx2"), its functions
 * suffixed _avx2 (see the head of conv_cpu.c); conv_cpu.c's entry points call
 * them when the CPU has AVX2 but not AVX-512F. Elsewhere (another CPU
 * architecture or compiler) this file is empty. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("avx2")
#define CONV_ISA avx2
#define CONV_VECTOR_BUILD 1
#include "kernels/cpu/conv_cpu.c"
#else
typedef int ob_conv_avx2_unused; /* ISO C: a translation unit declares something */
#endif
