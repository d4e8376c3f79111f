/* core/rng.h - counter-based random numbers (Philox4x32-10), host and device.
 *
 * A value is a pure function of (seed, stream, index): no generator state, so
 * the CPU and CUDA backends produce the same numbers in any order and after
 * any resume. Streams separate independent uses (init of tensor k, noise at
 * step t, the data of a batch, ...); see OB_STREAM_* for the conventions.
 * Philox4x32-10 is the generator of Salmon et al., "Parallel random numbers:
 * as easy as 1, 2, 3" (SC'11); each call yields four 32-bit words.
 */
#ifndef OB_CORE_RNG_H
#define OB_CORE_RNG_H

#include <math.h>
#include <stdint.h>

#include "core/ob.h"

/* Stream high words by use; the low word carries a sub-index (step, tensor). */
#define OB_STREAM_INIT   0x100000000ull  /* parameter initialisation */
#define OB_STREAM_NOISE  0x200000000ull  /* gradient noise, per step */
#define OB_STREAM_DATA   0x300000000ull  /* synthetic data, per batch */
#define OB_STREAM_EVAL   0x400000000ull  /* held-out data */
#define OB_STREAM_WORLD  0x500000000ull  /* the task itself (templates, chains) */
#define OB_STREAM_MISC   0x600000000ull

typedef struct ob_u32x4 { uint32_t v[4]; } ob_u32x4;

OB_HD static inline uint32_t ob_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* Philox4x32 with 10 rounds: counter (c0..c3), key (k0, k1). */
OB_HD static inline ob_u32x4 ob_philox(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32);
    uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = ob_mulhilo32(0xD2511F53u, c0, &hi0);
        uint32_t lo1 = ob_mulhilo32(0xCD9E8D57u, c2, &hi1);
        uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    ob_u32x4 out = {{c0, c1, c2, c3}};
    return out;
}

/* Uniform in (0, 1): never exactly 0 or 1, 24 bits of precision. */
OB_HD static inline float ob_u32_to_unit(uint32_t x)
{
    return ((float)(x >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

OB_HD static inline float ob_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    return ob_u32_to_unit(ob_philox(seed, stream, index).v[0]);
}

/* Standard normal by Box-Muller on two words of one Philox block. The same
 * double-precision formula runs on host and device, so the values agree. */
OB_HD static inline float ob_rng_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
    ob_u32x4 r = ob_philox(seed, stream, index);
    double u1 = ((double)r.v[0] + 0.5) * (1.0 / 4294967296.0);
    double u2 = ((double)r.v[1] + 0.5) * (1.0 / 4294967296.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* Uniform integer in [0, n) (n > 0), from one 32-bit word (bias < n / 2^32). */
OB_HD static inline uint32_t ob_rng_below(uint64_t seed, uint64_t stream, uint64_t index, uint32_t n)
{
    return (uint32_t)(((uint64_t)ob_philox(seed, stream, index).v[0] * n) >> 32);
}

#endif
