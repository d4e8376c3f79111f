/* kernels/cpu/rng_x86.c - standard normals of core/rng.h in bulk: the same
 * floats as ob_rng_normal, four lanes at a time.
 *
 * ob_rng_normal draws one Philox4x32-10 block per value and takes
 * (float)(sqrt(-2 log u1) cos(2 pi u2)) in double through libm's scalar log
 * and cos, about 60 ns a value; a cnn-tiny step spent a quarter of its time
 * there, making the images' noise. The AVX2 path runs Philox on four
 * counters per register (the 32 x 32 -> 64-bit products of vpmuludq) and
 * takes log and cos from glibc's vector math library (libmvec,
 * _ZGVdN4v_log / _ZGVdN4v_cos), whose results may differ from the scalar
 * functions' in the last bits of the double. The float result is kept only
 * where that cannot matter:
 *
 * - libm's and libmvec's log and cos are within a few ulps of the exact value
 *   (glibc documents at most 1 and 4 ulps on x86_64), so the two doubles
 *   y = sqrt(-2 log u1) cos(t) differ by under 2^-48 |y| (a handful of ulps
 *   through a square root and a product);
 * - both doubles then lie in [y - 2^-40 |y|, y + 2^-40 |y|] (y the vector
 *   path's): when both ends of that interval round to the same float,
 *   rounding being monotonic, so do both doubles, and that float is
 *   ob_rng_normal's;
 * - near a zero of a function's result (|cos t| < 2^-10, or u1 > 1 - 2^-10,
 *   where log u1 is near zero), where a vector function's relative accuracy
 *   rests most on its argument reduction, whatever that accuracy is, and
 *   wherever the two ends round apart, the value is recomputed by
 *   ob_rng_normal itself: about 0.16% of values.
 *
 * u1, u2 and t = 2 pi u2 are formed by the same exact or identically rounded
 * operations as in ob_rng_normal. On glibc 2.36 the vector path's doubles
 * rounded to ob_rng_normal's floats for every one of 2^24 values tried even
 * without these checks (largest relative gap 2^-50); the checks make that a
 * guarantee. tests/test_rng_cpu.c compares every path with ob_rng_normal bit
 * for bit over millions of values, and counts the recomputed values against
 * the rule above.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "core/rng.h"
#include "kernels/cpu/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(OB_HAVE_MVEC)
#include <immintrin.h>
#define OB_RNG_X86 1
/* glibc's libmvec, AVX2 variant (x86_64 vector function ABI, "d" = AVX2);
 * declared as AVX2 functions, since they take and return ymm registers. */
__attribute__((target("avx2"))) __m256d _ZGVdN4v_log(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_cos(__m256d);
#else
#define OB_RNG_X86 0
#endif

static _Atomic int rng_isa = -1; /* -1: not chosen yet */

static int rng_supported(int isa)
{
#if OB_RNG_X86
    if (isa == OB_CPU_ISA_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return isa == OB_CPU_ISA_GENERIC;
}

int ob_cpu_rng_isa(int want)
{
    return ob_cpu_isa_choose(&rng_isa, want, rng_supported);
}

#if OB_RNG_X86
#define RNG_V 4 /* registers of four counters in flight: Philox's rounds are a chain */

/* Values [i, i + 16) of the stream; returns how many were recomputed. */
__attribute__((target("avx2,fma"))) static int normals16_avx2(float *out, uint64_t seed, uint64_t stream,
                                                                uint64_t index)
{
    const __m256i lo32 = _mm256_set1_epi64x(0xffffffffll);
    const __m256i m0 = _mm256_set1_epi64x(0xD2511F53ll), m1 = _mm256_set1_epi64x(0xCD9E8D57ll);
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000ll); /* 2^52: exact u32 -> double */
    const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
    __m256i c0[RNG_V], c1[RNG_V], c2[RNG_V], c3[RNG_V];
    for (int v = 0; v < RNG_V; v++) {
        __m256i idx = _mm256_add_epi64(_mm256_set1_epi64x((long long)(index + 4u * (unsigned)v)),
                                       _mm256_set_epi64x(3, 2, 1, 0));
        c0[v] = _mm256_and_si256(idx, lo32);
        c1[v] = _mm256_srli_epi64(idx, 32);
        c2[v] = _mm256_set1_epi64x((long long)(uint32_t)stream);
        c3[v] = _mm256_set1_epi64x((long long)(uint32_t)(stream >> 32));
    }
    /* ob_philox's rounds; each 64-bit lane holds one 32-bit word */
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        const __m256i K0 = _mm256_set1_epi64x((long long)k0), K1 = _mm256_set1_epi64x((long long)k1);
        for (int v = 0; v < RNG_V; v++) {
            __m256i p0 = _mm256_mul_epu32(m0, c0[v]), p1 = _mm256_mul_epu32(m1, c2[v]);
            __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[v]), K0);
            __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]), K1);
            c1[v] = _mm256_and_si256(p1, lo32);
            c3[v] = _mm256_and_si256(p0, lo32);
            c0[v] = n0;
            c2[v] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    const __m256d half = _mm256_set1_pd(0.5), inv32 = _mm256_set1_pd(1.0 / 4294967296.0);
    const __m256d sign = _mm256_set1_pd(-0.0), rel = _mm256_set1_pd(0x1p-40);
    int redone = 0;
    for (int v = 0; v < RNG_V; v++) {
        __m256d w0 = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(c0[v], magic)), two52);
        __m256d w1 = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(c1[v], magic)), two52);
        __m256d u1 = _mm256_mul_pd(_mm256_add_pd(w0, half), inv32);
        __m256d u2 = _mm256_mul_pd(_mm256_add_pd(w1, half), inv32);
        __m256d L = _ZGVdN4v_log(u1);
        __m256d C = _ZGVdN4v_cos(_mm256_mul_pd(_mm256_set1_pd(6.283185307179586), u2));
        __m256d y = _mm256_mul_pd(_mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), L)), C);
        __m256d w = _mm256_mul_pd(_mm256_andnot_pd(sign, y), rel);
        __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(y, w)), hi = _mm256_cvtpd_ps(_mm256_add_pd(y, w));
        __m256d ill = _mm256_or_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, C), _mm256_set1_pd(0x1p-10), _CMP_LT_OQ),
                                   _mm256_cmp_pd(u1, _mm256_set1_pd(1.0 - 0x1p-10), _CMP_GT_OQ));
        int bad = (_mm256_movemask_pd(ill) | ~_mm_movemask_ps(_mm_cmpeq_ps(lo, hi))) & 15;
        _mm_storeu_ps(out + 4 * v, lo);
        for (int l = 0; bad; l++, bad >>= 1)
            if (bad & 1) {
                out[4 * v + l] = ob_rng_normal(seed, stream, index + 4u * (unsigned)v + (unsigned)l);
                redone++;
            }
    }
    return redone;
}
#endif

int64_t ob_cpu_normals(int isa, float *out, int64_t n, uint64_t seed, uint64_t stream, uint64_t index0)
{
    int64_t i = 0, redone = 0;
#if OB_RNG_X86
    if (isa == OB_CPU_ISA_AVX2)
        for (; i + 16 <= n; i += 16) redone += normals16_avx2(out + i, seed, stream, index0 + (uint64_t)i);
#else
    (void)isa;
#endif
    for (; i < n; i++) out[i] = ob_rng_normal(seed, stream, index0 + (uint64_t)i);
    return redone;
}
