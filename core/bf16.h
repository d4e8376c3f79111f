/* core/bf16.h - rounding a float to bfloat16, as PyTorch converts one
 * (c10::BFloat16: round to nearest, ties to even; a NaN becomes the quiet NaN
 * 0x7fc0; a finite value past bf16's largest rounds to infinity).
 *
 * The result is kept as a float whose low 16 bits are zero: the bf16 value
 * itself, which float arithmetic then uses exactly, as bf16 tensors' ops
 * compute in float and round their results. Shared by the CPU and CUDA
 * backends, which therefore round to the same bits. */
#ifndef OB_CORE_BF16_H
#define OB_CORE_BF16_H

#include <stdint.h>
#include <string.h>

#include "core/ob.h"

OB_HD static inline float ob_bf16_round(float x)
{
    uint32_t u;
#ifdef __CUDA_ARCH__
    u = __float_as_uint(x);
#else
    memcpy(&u, &x, sizeof u);
#endif
    if ((u & 0x7fffffffu) > 0x7f800000u)
        u = 0x7fc00000u;
    else
        u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
#endif
}

#endif
