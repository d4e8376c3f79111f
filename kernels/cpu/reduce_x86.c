/* kernels/cpu/reduce_x86.c - the vector bodies of the CPU backend's sums in
 * double (gradient statistics, dot), written with AVX2 and AVX-512F
 * intrinsics.
 *
 * The order is the one backend_cpu.c specifies for its reductions: element i
 * of [lo, end) in running sum (i - lo) mod 8, the eight combined as
 * ((0+1)+(2+3))+((4+5)+(6+7)). AVX2 holds the eight sums in two registers of
 * four, AVX-512 in one of eight; the additions are the same, so are the bits.
 * Each square or product of two floats is exact in double, so a fused
 * multiply-add would give the same bits too (none is used).
 *
 * Why intrinsics: gcc 12 widens four floats to four doubles
 * (__builtin_convertvector of GCC vector types, as the portable code does) in
 * two halves and a lane insert; vcvtps2pd from memory does it in one
 * instruction. With the finiteness mask gone from the sum of squares (see
 * ob_cpu_sumsq8) the statistics pass takes half the instructions.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kernels/cpu/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OB_X86 1
#else
#define OB_X86 0
#endif

static _Atomic int reduce_isa = -1; /* -1: not chosen yet */

static int isa_supported(int isa)
{
#if OB_X86
    if (isa == OB_CPU_ISA_AVX512) return __builtin_cpu_supports("avx512f");
    if (isa == OB_CPU_ISA_AVX2) return __builtin_cpu_supports("avx2");
#endif
    return isa == OB_CPU_ISA_GENERIC;
}

int ob_cpu_isa_choose(_Atomic int *slot, int want, int (*supported)(int))
{
    if (want >= 0) {
        if (supported(want)) atomic_store_explicit(slot, want, memory_order_relaxed);
    } else if (want == OB_CPU_ISA_AUTO) {
        atomic_store_explicit(slot, -1, memory_order_relaxed);
    }
    int isa = atomic_load_explicit(slot, memory_order_relaxed);
    if (isa < 0) {
        isa = supported(OB_CPU_ISA_AVX512) ? OB_CPU_ISA_AVX512
              : supported(OB_CPU_ISA_AVX2) ? OB_CPU_ISA_AVX2
                                           : OB_CPU_ISA_GENERIC;
        atomic_store_explicit(slot, isa, memory_order_relaxed);
    }
    return isa;
}

int ob_cpu_reduce_isa(int want)
{
    return ob_cpu_isa_choose(&reduce_isa, want, isa_supported);
}

#if OB_X86
#define SUM8_ARRAY(l) ((((l)[0] + (l)[1]) + ((l)[2] + (l)[3])) + (((l)[4] + (l)[5]) + ((l)[6] + (l)[7])))

__attribute__((target("avx2"))) static double sumsq8_avx2(const float *g, int64_t lo, int64_t end)
{
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t i = lo; i < end; i += 8) {
        const __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(g + i)), b = _mm256_cvtps_pd(_mm_loadu_ps(g + i + 4));
        s0 = _mm256_add_pd(s0, _mm256_mul_pd(a, a));
        s1 = _mm256_add_pd(s1, _mm256_mul_pd(b, b));
    }
    double l[8];
    _mm256_storeu_pd(l, s0);
    _mm256_storeu_pd(l + 4, s1);
    return SUM8_ARRAY(l);
}

__attribute__((target("avx512f"))) static double sumsq8_avx512(const float *g, int64_t lo, int64_t end)
{
    __m512d s = _mm512_setzero_pd();
    for (int64_t i = lo; i < end; i += 8) {
        const __m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(g + i));
        s = _mm512_add_pd(s, _mm512_mul_pd(a, a));
    }
    double l[8];
    _mm512_storeu_pd(l, s);
    return SUM8_ARRAY(l);
}

__attribute__((target("avx2"))) static double dot8_avx2(const float *x, const float *y, int64_t lo, int64_t end)
{
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t i = lo; i < end; i += 8) {
        s0 = _mm256_add_pd(s0, _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)),
                                             _mm256_cvtps_pd(_mm_loadu_ps(y + i))));
        s1 = _mm256_add_pd(s1, _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)),
                                             _mm256_cvtps_pd(_mm_loadu_ps(y + i + 4))));
    }
    double l[8];
    _mm256_storeu_pd(l, s0);
    _mm256_storeu_pd(l + 4, s1);
    return SUM8_ARRAY(l);
}

__attribute__((target("avx512f"))) static double dot8_avx512(const float *x, const float *y, int64_t lo,
                                                             int64_t end)
{
    __m512d s = _mm512_setzero_pd();
    for (int64_t i = lo; i < end; i += 8)
        s = _mm512_add_pd(s, _mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)),
                                           _mm512_cvtps_pd(_mm256_loadu_ps(y + i))));
    double l[8];
    _mm512_storeu_pd(l, s);
    return SUM8_ARRAY(l);
}
#endif

double ob_cpu_sumsq8(int isa, const float *g, int64_t lo, int64_t end)
{
#if OB_X86
    if (isa == OB_CPU_ISA_AVX512) return sumsq8_avx512(g, lo, end);
    if (isa == OB_CPU_ISA_AVX2) return sumsq8_avx2(g, lo, end);
#endif
    (void)isa;
    (void)g;
    (void)lo;
    (void)end;
    return NAN; /* no vector body: the caller's portable path */
}

double ob_cpu_dot8(int isa, const float *x, const float *y, int64_t lo, int64_t end)
{
#if OB_X86
    if (isa == OB_CPU_ISA_AVX512) return dot8_avx512(x, y, lo, end);
    if (isa == OB_CPU_ISA_AVX2) return dot8_avx2(x, y, lo, end);
#endif
    (void)isa;
    (void)x;
    (void)y;
    (void)lo;
    (void)end;
    return NAN;
}
