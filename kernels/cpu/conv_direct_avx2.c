/* kernels/cpu/conv_direct_avx2.c - the direct convolution's kernels for AVX2
 * and FMA: conv_direct.c compiled once more with 8-lane vectors and smaller
 * tiles (6 pixels or input channels x 16 output channels; see the head of
 * conv_direct.c), its functions under target("avx2,fma"). The path and the
 * entry points stay in conv_direct.c, which calls these kernels on a CPU with
 * AVX2 and FMA but no AVX-512F (or when OB_CPU_CONV=avx2 says so). Elsewhere
 * (another CPU architecture or compiler) this file is empty. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONV_DIRECT_AVX2_BUILD 1
#include "kernels/cpu/conv_direct.c"
#else
typedef int ob_conv_direct_avx2_unused; /* ISO C: a translation unit declares something */
#endif
