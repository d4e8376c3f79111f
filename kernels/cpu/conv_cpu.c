/* kernels/cpu/conv_cpu.c - convolution-network layers on the CPU.
 *
 * The CPU bodies of the cnn workload's slots of kernels/backend.h: im2col /
 * col2im (a convolution is im2col + one gemm through the backend), group
 * normalization, ReLU, 2x2 max pooling, global average pooling, and the
 * class-conditional synthetic image generator. Images are NHWC. OpenMP runs
 * over independent outputs; col2im gathers (no scatter races) and the
 * parameter-gradient reductions sum fixed row chunks in order, so results are
 * bitwise repeatable for any thread count.
 *
 * This file is compiled three times: on its own (the portable build, for the
 * baseline x86-64 or any other CPU, and the public entry points ob_cpu_*) and,
 * on x86-64 with GCC, once more from conv_avx512.c under target("avx512f")
 * with CONV_ISA avx512 and once from conv_avx2.c under target("avx2") with
 * CONV_ISA avx2. The entry points take the widest build the CPU has (these
 * loops are bound by the vector width: about 10% of a cnn-small step). All
 * give the same bits: ISO C mode contracts no multiply-add, and the loops
 * vectorize only across independent lanes (channels), never a sum.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/nn_cpu.h"

#define CONV_PAR_MIN 16384
#define SYNTH_CHUNK 512 /* noise values drawn at a time (ob_cpu_normals) */

/* The AVX2 and AVX-512 builds exist (see conv_avx2.c, conv_avx512.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CONV_HAVE_VECTOR_BUILDS 1
#else
#define CONV_HAVE_VECTOR_BUILDS 0
#endif

/* ISA(relu_forward) is ob_cpu_relu_forward_base in the portable build,
 * ob_cpu_relu_forward_avx2 and ob_cpu_relu_forward_avx512 in the others. */
#ifndef CONV_ISA
#define CONV_ISA base
#endif
#define CONV_CAT2(a, b) ob_cpu_##a##_##b
#define CONV_CAT(a, b) CONV_CAT2(a, b)
#define ISA(name) CONV_CAT(name, CONV_ISA)

/* col (B*Ho*Wo, K*K*Cin), inp (B,H,W,Cin): each column row is the K*K
 * window pixels in (ky, kx) order, each a contiguous copy of its Cin
 * channels (zeros outside the image). */
ob_status ISA(im2col)(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e)
{
    (void)dev;
    (void)e;
    int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
    int64_t KC = (int64_t)Cin * K * K, rows = (int64_t)B * Ho * Wo;
#pragma omp parallel for if (rows * KC > CONV_PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        int b = (int)(r / ((int64_t)Ho * Wo)), rem = (int)(r % ((int64_t)Ho * Wo));
        int oy = rem / Wo, ox = rem % Wo;
        float *dst = col + r * KC; /* (K, K, Cin) */
        for (int ky = 0; ky < K; ky++) {
            int iy = oy * stride + ky - pad;
            for (int kx = 0; kx < K; kx++, dst += Cin) {
                int ix = ox * stride + kx - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
#pragma omp simd
                    for (int ci = 0; ci < Cin; ci++) dst[ci] = 0.0f;
                } else {
                    const float *px = inp + (((int64_t)b * H + iy) * W + ix) * Cin;
#pragma omp simd
                    for (int ci = 0; ci < Cin; ci++) dst[ci] = px[ci];
                }
            }
        }
    }
    return OB_OK;
}

/* Gather form: every input pixel sums the column entries that read it, in
 * (ky, kx) order (no write races; the CUDA kernel sums in the same order).
 * dinp (B,H,W,Cin), dcol (B*Ho*Wo, K*K*Cin). */
ob_status ISA(col2im)(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e)
{
    (void)dev;
    (void)e;
    int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
    int64_t KC = (int64_t)Cin * K * K;
#pragma omp parallel for if ((int64_t)B * Ho * Wo * KC > CONV_PAR_MIN)
    for (int by = 0; by < B * H; by++) {
        int b = by / H, iy = by % H;
        for (int ix = 0; ix < W; ix++) {
            float *d = dinp + (((int64_t)b * H + iy) * W + ix) * Cin; /* (Cin) */
#pragma omp simd
            for (int ci = 0; ci < Cin; ci++) d[ci] = 0.0f;
            for (int ky = 0; ky < K; ky++) {
                int ny = iy + pad - ky;
                if (ny < 0 || ny % stride) continue;
                int oy = ny / stride;
                if (oy >= Ho) continue;
                for (int kx = 0; kx < K; kx++) {
                    int nx = ix + pad - kx;
                    if (nx < 0 || nx % stride) continue;
                    int ox = nx / stride;
                    if (ox >= Wo) continue;
                    const float *src = dcol + (((int64_t)b * Ho + oy) * Wo + ox) * KC + (int64_t)(ky * K + kx) * Cin;
#pragma omp simd
                    for (int ci = 0; ci < Cin; ci++) d[ci] += src[ci];
                }
            }
        }
    }
    return OB_OK;
}

/* Group norm, one image per task. Per-channel sums run over the pixels with
 * the channels innermost (contiguous, vectorized), in double, in pixel order;
 * groups combine their channels in order. inp, out (B,HW,C); mean, rstd (B,G). */
ob_status ISA(groupnorm_forward)(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int B, int HW, int C, int G, ob_err *e)
{
    (void)dev;
    const int Cg = C / G;
    const double cnt = (double)HW * Cg;
    double *work = malloc((size_t)B * 2 * (size_t)C * sizeof *work); /* (B, 2, C) */
    float *coef = malloc((size_t)B * 3 * (size_t)C * sizeof *coef);  /* (B, 3, C) */
    if (!work || !coef) {
        free(work);
        free(coef);
        return ob_fail(e, OB_ERR_NOMEM, "groupnorm_forward: out of memory");
    }
#pragma omp parallel for if ((int64_t)B * HW * C > CONV_PAR_MIN)
    for (int bi = 0; bi < B; bi++) {
        const float *x = inp + (int64_t)bi * HW * C;
        float *o = out + (int64_t)bi * HW * C;
        double *cs = work + (size_t)bi * 2 * C, *cv = cs + C;
        float *mc = coef + (size_t)bi * 3 * C, *sc = mc + C, *sh = sc + C;
        /* one pass: sums of x and x^2 in double (no cancellation worth the name
         * for activations whose mean is within 1e6 standard deviations) */
        for (int c = 0; c < C; c++) cs[c] = cv[c] = 0.0;
        for (int p = 0; p < HW; p++) {
            const float *xp = x + (int64_t)p * C;
#pragma omp simd
            for (int c = 0; c < C; c++) {
                double v = xp[c];
                cs[c] += v;
                cv[c] += v * v;
            }
        }
        for (int g = 0; g < G; g++) {
            double t = 0.0, t2 = 0.0;
            for (int c = g * Cg; c < (g + 1) * Cg; c++) {
                t += cs[c];
                t2 += cv[c];
            }
            double md = t / cnt, var = t2 / cnt - md * md;
            float m = (float)md;
            float r = (float)(1.0 / sqrt((var > 0.0 ? var : 0.0) + 1e-5));
            for (int c = g * Cg; c < (g + 1) * Cg; c++) mc[c] = m;
            mean[bi * G + g] = m;
            rstd[bi * G + g] = r;
            for (int c = g * Cg; c < (g + 1) * Cg; c++) {
                sc[c] = r * w[c];
                sh[c] = b[c] - mc[c] * sc[c];
            }
        }
        for (int p = 0; p < HW; p++) {
            const float *xp = x + (int64_t)p * C;
            float *op = o + (int64_t)p * C;
#pragma omp simd
            for (int c = 0; c < C; c++) op[c] = xp[c] * sc[c] + sh[c];
        }
    }
    free(work);
    free(coef);
    return OB_OK;
}

/* groupnorm_backward's dinp of one image (HW x C; mean, rstd: its G
 * groups'): per-channel sums of dout and dout * (x - mean), then dinp =
 * rstd (dout w - mean_g(dout w) - xhat mean_g(dout w xhat)). work: room for
 * 2C doubles, coef for 4C floats. */
static void gn_backward_image(float *dx, const float *d, const float *x, const float *w, const float *mean,
                              const float *rstd, int HW, int C, int G, double *work, float *coef)
{
    const int Cg = C / G;
    const double cnt = (double)HW * Cg;
    double *s1 = work, *s2 = s1 + C;
    float *mc = coef, *ca = mc + C, *cb = ca + C, *cc = cb + C;
    for (int c = 0; c < C; c++) {
        mc[c] = mean[c / Cg];
        s1[c] = s2[c] = 0.0;
    }
    for (int p = 0; p < HW; p++) {
        const float *xp = x + (int64_t)p * C, *dp = d + (int64_t)p * C;
#pragma omp simd
        for (int c = 0; c < C; c++) {
            s1[c] += dp[c];
            s2[c] += (double)dp[c] * (xp[c] - mc[c]);
        }
    }
    for (int g = 0; g < G; g++) {
        float r = rstd[g];
        double t1 = 0.0, t2 = 0.0;
        for (int c = g * Cg; c < (g + 1) * Cg; c++) {
            t1 += w[c] * s1[c];
            t2 += w[c] * s2[c] * r;
        }
        float m1 = (float)(t1 / cnt), m2 = (float)(t2 / cnt);
        for (int c = g * Cg; c < (g + 1) * Cg; c++) {
            ca[c] = w[c] * r;    /* dout coefficient */
            cb[c] = -m2 * r * r; /* (x - mean) coefficient */
            cc[c] = -m1 * r;
        }
    }
    for (int p = 0; p < HW; p++) {
        const float *xp = x + (int64_t)p * C, *dp = d + (int64_t)p * C;
        float *dxp = dx + (int64_t)p * C;
#pragma omp simd
        for (int c = 0; c < C; c++) dxp[c] = dp[c] * ca[c] + (xp[c] - mc[c]) * cb[c] + cc[c];
    }
}

/* groupnorm_backward's dw, db partial sums (part: 2C doubles, zeroed) over
 * rows n0 to n1 of the (B*HW, C) rows, in row order in double. mr: room for
 * 2C floats. */
static void gn_param_chunk(double *part, const float *dout, const float *inp, const float *mean, const float *rstd,
                           int64_t n0, int64_t n1, int HW, int C, int G, float *mr)
{
    const int Cg = C / G;
    double *pw = part, *pb = pw + C;
    float *m = mr, *r = m + C;
    int cur = -1;
    for (int64_t n = n0; n < n1; n++) {
        int bi = (int)(n / HW);
        if (bi != cur) { /* this image's mean and rstd per channel */
            for (int c = 0; c < C; c++) {
                m[c] = mean[bi * G + c / Cg];
                r[c] = rstd[bi * G + c / Cg];
            }
            cur = bi;
        }
        const float *x = inp + n * C, *d = dout + n * C;
#pragma omp simd
        for (int c = 0; c < C; c++) {
            float xh = (x[c] - m[c]) * r[c];
            pw[c] += (double)d[c] * xh;
            pb[c] += d[c];
        }
    }
}

/* dinp one image per task (gn_backward_image); dw, db: column sums over
 * fixed row chunks of the (B*HW, C) rows (gn_param_chunk), chunks combined
 * in order (the CUDA kernel uses the same chunks: equal bit for bit). */
ob_status ISA(groupnorm_backward)(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int B, int HW, int C, int G, ob_err *e)
{
    (void)dev;
    const int64_t N = (int64_t)B * HW;
    const int nch = ob_cpu_red_nchunks(N);
    double *work = malloc((size_t)B * 2 * (size_t)C * sizeof *work);   /* (B, 2, C) */
    float *coef = malloc((size_t)B * 4 * (size_t)C * sizeof *coef);    /* (B, 4, C) */
    double *part = calloc((size_t)nch * 2 * (size_t)C, sizeof *part);  /* (nch, 2, C) */
    float *mr = malloc((size_t)nch * 2 * (size_t)C * sizeof *mr);      /* (nch, 2, C) */
    if (!work || !coef || !part || !mr) {
        free(work);
        free(coef);
        free(part);
        free(mr);
        return ob_fail(e, OB_ERR_NOMEM, "groupnorm_backward: out of memory");
    }
#pragma omp parallel for if ((int64_t)B * HW * C > CONV_PAR_MIN)
    for (int bi = 0; bi < B; bi++)
        gn_backward_image(dinp + (int64_t)bi * HW * C, dout + (int64_t)bi * HW * C, inp + (int64_t)bi * HW * C, w,
                          mean + bi * G, rstd + bi * G, HW, C, G, work + (size_t)bi * 2 * C,
                          coef + (size_t)bi * 4 * C);
#pragma omp parallel for if (N * C > CONV_PAR_MIN)
    for (int ch = 0; ch < nch; ch++)
        gn_param_chunk(part + (size_t)ch * 2 * C, dout, inp, mean, rstd, N * ch / nch, N * (ch + 1) / nch, HW, C, G,
                       mr + (size_t)ch * 2 * C);
    for (int c = 0; c < C; c++) {
        double sw = 0, sb = 0;
        for (int ch = 0; ch < nch; ch++) {
            sw += part[(size_t)ch * 2 * C + c];
            sb += part[(size_t)ch * 2 * C + C + c];
        }
        dw[c] += (float)sw;
        db[c] += (float)sb;
    }
    free(work);
    free(coef);
    free(part);
    free(mr);
    return OB_OK;
}

ob_status ISA(relu_forward)(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for simd if (n > CONV_PAR_MIN)
    for (int64_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = x > 0.0f ? x : 0.0f;
    }
    return OB_OK;
}

ob_status ISA(relu_backward)(ob_device *dev, float *dinp, const float *out, const float *dout, int64_t n,
                               ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for simd if (n > CONV_PAR_MIN)
    for (int64_t i = 0; i < n; i++) {
        float d = dout[i], o = out[i]; /* both loaded: a select, not a branch */
        dinp[i] = o > 0.0f ? d : 0.0f;
    }
    return OB_OK;
}

/* inp (B,H,W,C) -> out (B,H/2,W/2,C) */
ob_status ISA(maxpool2_forward)(ob_device *dev, float *out, const float *inp, int B, int H, int W, int C,
                                  ob_err *e)
{
    (void)dev;
    (void)e;
    int Ho = H / 2, Wo = W / 2;
#pragma omp parallel for if ((int64_t)B * H * W * C > CONV_PAR_MIN)
    for (int by = 0; by < B * Ho; by++) {
        int b = by / Ho, oy = by % Ho;
        for (int ox = 0; ox < Wo; ox++) {
            const float *p00 = inp + (((int64_t)b * H + 2 * oy) * W + 2 * ox) * C;
            const float *p01 = p00 + C, *p10 = p00 + (int64_t)W * C, *p11 = p10 + C;
            float *o = out + (((int64_t)b * Ho + oy) * Wo + ox) * C;
#pragma omp simd
            for (int c = 0; c < C; c++) {
                float a0 = p00[c], a1 = p01[c], a2 = p10[c], a3 = p11[c];
                float m01 = a1 > a0 ? a1 : a0, m23 = a3 > a2 ? a3 : a2;
                o[c] = m23 > m01 ? m23 : m01;
            }
        }
    }
    return OB_OK;
}

/* The gradient goes to the first maximum of each window in the order
 * (0,0), (0,1), (1,0), (1,1); written branch-free. */
ob_status ISA(maxpool2_backward)(ob_device *dev, float *dinp, const float *dout, const float *inp, int B,
                                   int H, int W, int C, ob_err *e)
{
    (void)dev;
    (void)e;
    int Ho = H / 2, Wo = W / 2;
#pragma omp parallel for if ((int64_t)B * H * W * C > CONV_PAR_MIN)
    for (int by = 0; by < B * Ho; by++) {
        int b = by / Ho, oy = by % Ho;
        for (int ox = 0; ox < Wo; ox++) {
            int64_t i00 = (((int64_t)b * H + 2 * oy) * W + 2 * ox) * C;
            const float *p00 = inp + i00, *p01 = p00 + C, *p10 = p00 + (int64_t)W * C, *p11 = p10 + C;
            float *d00 = dinp + i00, *d01 = d00 + C, *d10 = d00 + (int64_t)W * C, *d11 = d10 + C;
            const float *d = dout + (((int64_t)b * Ho + oy) * Wo + ox) * C;
#pragma omp simd
            for (int c = 0; c < C; c++) {
                float a0 = p00[c], a1 = p01[c], a2 = p10[c], a3 = p11[c], g = d[c];
                float s01 = a1 > a0 ? 1.0f : 0.0f, s23 = a3 > a2 ? 1.0f : 0.0f; /* 1: the second wins */
                float m01 = a1 > a0 ? a1 : a0, m23 = a3 > a2 ? a3 : a2;
                float sh = m23 > m01 ? 1.0f : 0.0f; /* 1: the lower pair wins */
                d00[c] = g * (1.0f - sh) * (1.0f - s01);
                d01[c] = g * (1.0f - sh) * s01;
                d10[c] = g * sh * (1.0f - s23);
                d11[c] = g * sh * s23;
            }
        }
    }
    return OB_OK;
}

/* inp (B,HW,C) -> out (B,C) */
ob_status ISA(avgpool_forward)(ob_device *dev, float *out, const float *inp, int B, int HW, int C,
                                 ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)B * HW * C > CONV_PAR_MIN)
    for (int b = 0; b < B; b++) {
        float *o = out + (int64_t)b * C;
        for (int c = 0; c < C; c++) o[c] = 0.0f;
        for (int p = 0; p < HW; p++) {
            const float *x = inp + ((int64_t)b * HW + p) * C;
            for (int c = 0; c < C; c++) o[c] += x[c];
        }
        float inv = 1.0f / (float)HW;
        for (int c = 0; c < C; c++) o[c] *= inv;
    }
    return OB_OK;
}

ob_status ISA(avgpool_backward)(ob_device *dev, float *dinp, const float *dout, int B, int HW, int C,
                                  ob_err *e)
{
    (void)dev;
    (void)e;
    float inv = 1.0f / (float)HW;
#pragma omp parallel for if ((int64_t)B * HW * C > CONV_PAR_MIN)
    for (int64_t bp = 0; bp < (int64_t)B * HW; bp++) {
        const float *d = dout + (bp / HW) * C;
        float *dx = dinp + bp * C;
        for (int c = 0; c < C; c++) dx[c] = d[c] * inv;
    }
    return OB_OK;
}

ob_status ISA(synth_images)(ob_device *dev, const ob_image_synth *a, float *out, int32_t *labels,
                              const float *templates, ob_err *e)
{
    (void)dev;
    (void)e;
    const int B = a->B, H = a->H, W = a->W, C = a->C;
    const int64_t img = (int64_t)H * W * C;
    const uint32_t span = (uint32_t)(2 * a->max_shift + 1);
    const int isa = ob_cpu_rng_isa(OB_CPU_ISA_CURRENT);
#pragma omp parallel for if ((int64_t)B * img > CONV_PAR_MIN / 8)
    for (int by = 0; by < B * H; by++) {
        int b = by / H, y = by % H;
        uint64_t id = a->index0 + (uint64_t)b;
        ob_u32x4 r = ob_philox(a->seed, a->stream, id);
        int label = (int)(((uint64_t)r.v[0] * (uint32_t)a->K) >> 32);
        int dy = (int)(((uint64_t)r.v[1] * span) >> 32) - a->max_shift;
        int dx = (int)(((uint64_t)r.v[2] * span) >> 32) - a->max_shift;
        float contrast = a->contrast_lo + (a->contrast_hi - a->contrast_lo) * ob_u32_to_unit(r.v[3]);
        if (y == 0) labels[b] = label;
        int sy = ((y - dy) % H + H) % H;
        const int64_t row = (int64_t)W * C;
        const float *trow = templates + ((int64_t)label * H + sy) * row;
        float *orow = out + (int64_t)b * img + (int64_t)y * row;
        /* pixel (y, x, c) has noise value id * img + (y * W + x) * C + c of
         * its stream: a row's are consecutive, drawn in bulk */
        const uint64_t nz0 = id * (uint64_t)img + (uint64_t)y * (uint64_t)row;
        float nz[SYNTH_CHUNK];
        /* pixel k of the row is (x, c), k = x * C + c; sx: x's source column */
        int c = 0, sx = W > 0 ? (-dx % W + W) % W : 0;
        for (int64_t k0 = 0; k0 < row; k0 += SYNTH_CHUNK) {
            const int64_t len = row - k0 < SYNTH_CHUNK ? row - k0 : SYNTH_CHUNK;
            if (a->noise > 0.0f) ob_cpu_normals(isa, nz, len, a->seed, a->stream + 1, nz0 + (uint64_t)k0);
            for (int64_t k = k0; k < k0 + len; k++) {
                float n = a->noise > 0.0f ? a->noise * nz[k - k0] : 0.0f;
                orow[k] = contrast * trow[(int64_t)sx * C + c] + n;
                if (++c == C) { /* the next x */
                    c = 0;
                    sx = sx + 1 == W ? 0 : sx + 1;
                }
            }
        }
    }
    return OB_OK;
}

/* ---- entry points (the portable build only): the widest build the CPU has ---- */
#if !defined(CONV_VECTOR_BUILD)

#if CONV_HAVE_VECTOR_BUILDS
#define CONV_PICK(name)                                                                                         \
    (__builtin_cpu_supports("avx512f") ? ob_cpu_##name##_avx512                                                 \
     : __builtin_cpu_supports("avx2")  ? ob_cpu_##name##_avx2                                                   \
                                       : ob_cpu_##name##_base)
#else
#define CONV_PICK(name) ob_cpu_##name##_base
#endif

ob_status ob_cpu_im2col(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e)
{
    return CONV_PICK(im2col)(dev, col, inp, B, H, W, Cin, K, stride, pad, e);
}

ob_status ob_cpu_col2im(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e)
{
    return CONV_PICK(col2im)(dev, dinp, dcol, B, H, W, Cin, K, stride, pad, e);
}

ob_status ob_cpu_groupnorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int B, int HW, int C, int G, ob_err *e)
{
    return CONV_PICK(groupnorm_forward)(dev, out, mean, rstd, inp, w, b, B, HW, C, G, e);
}

ob_status ob_cpu_groupnorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int B, int HW, int C, int G, ob_err *e)
{
    return CONV_PICK(groupnorm_backward)(dev, dinp, dw, db, dout, inp, w, mean, rstd, B, HW, C, G, e);
}

ob_status ob_cpu_relu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e)
{
    return CONV_PICK(relu_forward)(dev, out, inp, n, e);
}

ob_status ob_cpu_relu_backward(ob_device *dev, float *dinp, const float *out, const float *dout, int64_t n,
                               ob_err *e)
{
    return CONV_PICK(relu_backward)(dev, dinp, out, dout, n, e);
}

ob_status ob_cpu_maxpool2_forward(ob_device *dev, float *out, const float *inp, int B, int H, int W, int C,
                                  ob_err *e)
{
    return CONV_PICK(maxpool2_forward)(dev, out, inp, B, H, W, C, e);
}

ob_status ob_cpu_maxpool2_backward(ob_device *dev, float *dinp, const float *dout, const float *inp, int B,
                                   int H, int W, int C, ob_err *e)
{
    return CONV_PICK(maxpool2_backward)(dev, dinp, dout, inp, B, H, W, C, e);
}

ob_status ob_cpu_avgpool_forward(ob_device *dev, float *out, const float *inp, int B, int HW, int C,
                                 ob_err *e)
{
    return CONV_PICK(avgpool_forward)(dev, out, inp, B, HW, C, e);
}

ob_status ob_cpu_avgpool_backward(ob_device *dev, float *dinp, const float *dout, int B, int HW, int C,
                                  ob_err *e)
{
    return CONV_PICK(avgpool_backward)(dev, dinp, dout, B, HW, C, e);
}

ob_status ob_cpu_synth_images(ob_device *dev, const ob_image_synth *a, float *out, int32_t *labels,
                              const float *templates, ob_err *e)
{
    return CONV_PICK(synth_images)(dev, a, out, labels, templates, e);
}

#endif
