/* kernels/cpu/conv_cpu.c - convolution-network layers on the CPU.
 *
 * The CPU bodies of the cnn workload's slots of kernels/backend.h: im2col /
 * col2im (a convolution is im2col + one gemm through the backend), group
 * normalization, ReLU, 2x2 max pooling, global average pooling, and the
 * class-conditional synthetic image generator. Images are NHWC. OpenMP runs
 * over independent outputs; col2im gathers (no scatter races) and the
 * parameter-gradient reductions sum fixed row chunks in order, so results are
 * bitwise repeatable for any thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "kernels/cpu/nn_cpu.h"

#define CONV_PAR_MIN 16384

/* col (B*Ho*Wo, Cin*K*K), inp (B,H,W,Cin) */
ob_status ob_cpu_im2col(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e)
{
    (void)dev;
    (void)e;
    int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
    int KK = K * K;
    int64_t KC = (int64_t)Cin * KK, rows = (int64_t)B * Ho * Wo;
#pragma omp parallel for if (rows * KC > CONV_PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        int b = (int)(r / ((int64_t)Ho * Wo)), rem = (int)(r % ((int64_t)Ho * Wo));
        int oy = rem / Wo, ox = rem % Wo;
        float *dst = col + r * KC; /* (Cin, K, K) */
        for (int ky = 0; ky < K; ky++) {
            int iy = oy * stride + ky - pad;
            for (int kx = 0; kx < K; kx++) {
                int ix = ox * stride + kx - pad;
                float *d = dst + ky * K + kx;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
                    for (int ci = 0; ci < Cin; ci++) d[(int64_t)ci * KK] = 0.0f;
                } else {
                    const float *px = inp + (((int64_t)b * H + iy) * W + ix) * Cin;
                    for (int ci = 0; ci < Cin; ci++) d[(int64_t)ci * KK] = px[ci];
                }
            }
        }
    }
    return OB_OK;
}

/* Gather form: every input pixel sums the column entries that read it, in
 * (ky, kx) order. dinp (B,H,W,Cin), dcol (B*Ho*Wo, Cin*K*K). */
ob_status ob_cpu_col2im(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e)
{
    (void)dev;
    (void)e;
    int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
    int KK = K * K;
    int64_t KC = (int64_t)Cin * KK;
#pragma omp parallel for if ((int64_t)B * H * W * Cin * KK > CONV_PAR_MIN)
    for (int by = 0; by < B * H; by++) {
        int b = by / H, iy = by % H;
        for (int ix = 0; ix < W; ix++) {
            float *d = dinp + (((int64_t)b * H + iy) * W + ix) * Cin; /* (Cin) */
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
                    const float *s = dcol + (((int64_t)b * Ho + oy) * Wo + ox) * KC + ky * K + kx;
                    for (int ci = 0; ci < Cin; ci++) d[ci] += s[(int64_t)ci * KK];
                }
            }
        }
    }
    return OB_OK;
}

/* inp, out (B,HW,C); mean, rstd (B,G) */
ob_status ob_cpu_groupnorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int B, int HW, int C, int G, ob_err *e)
{
    (void)dev;
    (void)e;
    int Cg = C / G;
    double cnt = (double)HW * Cg;
#pragma omp parallel for if ((int64_t)B * HW * C > CONV_PAR_MIN)
    for (int bg = 0; bg < B * G; bg++) {
        int bi = bg / G, g = bg % G;
        const float *x = inp + (int64_t)bi * HW * C + (int64_t)g * Cg;
        float *o = out + (int64_t)bi * HW * C + (int64_t)g * Cg;
        double s = 0.0;
        for (int p = 0; p < HW; p++)
            for (int c = 0; c < Cg; c++) s += x[(int64_t)p * C + c];
        float m = (float)(s / cnt);
        double v = 0.0;
        for (int p = 0; p < HW; p++)
            for (int c = 0; c < Cg; c++) {
                double d = (double)x[(int64_t)p * C + c] - m;
                v += d * d;
            }
        float r = (float)(1.0 / sqrt(v / cnt + 1e-5));
        const float *wg = w + g * Cg, *bgp = b + g * Cg;
        for (int p = 0; p < HW; p++)
            for (int c = 0; c < Cg; c++)
                o[(int64_t)p * C + c] = (x[(int64_t)p * C + c] - m) * r * wg[c] + bgp[c];
        mean[bg] = m;
        rstd[bg] = r;
    }
    return OB_OK;
}

ob_status ob_cpu_groupnorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int B, int HW, int C, int G, ob_err *e)
{
    (void)dev;
    int Cg = C / G;
    double cnt = (double)HW * Cg;
    /* dinp, per (b, g) */
#pragma omp parallel for if ((int64_t)B * HW * C > CONV_PAR_MIN)
    for (int bg = 0; bg < B * G; bg++) {
        int bi = bg / G, g = bg % G;
        int64_t base = (int64_t)bi * HW * C + (int64_t)g * Cg;
        const float *x = inp + base, *d = dout + base, *wg = w + g * Cg;
        float *dx = dinp + base;
        float m = mean[bg], r = rstd[bg];
        double s1 = 0.0, s2 = 0.0;
        for (int p = 0; p < HW; p++)
            for (int c = 0; c < Cg; c++) {
                int64_t i = (int64_t)p * C + c;
                float dn = d[i] * wg[c];
                s1 += dn;
                s2 += (double)dn * ((x[i] - m) * r);
            }
        float m1 = (float)(s1 / cnt), m2 = (float)(s2 / cnt);
        for (int p = 0; p < HW; p++)
            for (int c = 0; c < Cg; c++) {
                int64_t i = (int64_t)p * C + c;
                float xh = (x[i] - m) * r;
                dx[i] = (d[i] * wg[c] - m1 - xh * m2) * r;
            }
    }
    /* dw, db over the B*HW rows, fixed chunks */
    int64_t N = (int64_t)B * HW;
    int nch = ob_cpu_red_nchunks(N);
    double *part = calloc((size_t)nch * 2 * (size_t)C, sizeof *part);
    if (!part) return ob_fail(e, OB_ERR_NOMEM, "groupnorm_backward: out of memory");
#pragma omp parallel for if (N * C > CONV_PAR_MIN)
    for (int ch = 0; ch < nch; ch++) {
        int64_t n0 = N * ch / nch, n1 = N * (ch + 1) / nch;
        double *pw = part + (size_t)ch * 2 * (size_t)C, *pb = pw + C;
        for (int64_t n = n0; n < n1; n++) {
            int bi = (int)(n / HW);
            const float *x = inp + n * C, *d = dout + n * C;
            for (int c = 0; c < C; c++) {
                int bg = bi * G + c / Cg;
                pw[c] += (double)d[c] * ((x[c] - mean[bg]) * rstd[bg]);
                pb[c] += d[c];
            }
        }
    }
    for (int c = 0; c < C; c++) {
        double sw = 0, sb = 0;
        for (int ch = 0; ch < nch; ch++) {
            sw += part[(size_t)ch * 2 * (size_t)C + c];
            sb += part[(size_t)ch * 2 * (size_t)C + C + c];
        }
        dw[c] += (float)sw;
        db[c] += (float)sb;
    }
    free(part);
    return OB_OK;
}

ob_status ob_cpu_relu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if (n > CONV_PAR_MIN)
    for (int64_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
    return OB_OK;
}

ob_status ob_cpu_relu_backward(ob_device *dev, float *dinp, const float *out, const float *dout, int64_t n,
                               ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if (n > CONV_PAR_MIN)
    for (int64_t i = 0; i < n; i++) dinp[i] = out[i] > 0.0f ? dout[i] : 0.0f;
    return OB_OK;
}

/* inp (B,H,W,C) -> out (B,H/2,W/2,C) */
ob_status ob_cpu_maxpool2_forward(ob_device *dev, float *out, const float *inp, int B, int H, int W, int C,
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
            for (int c = 0; c < C; c++) {
                float m = p00[c];
                m = p01[c] > m ? p01[c] : m;
                m = p10[c] > m ? p10[c] : m;
                m = p11[c] > m ? p11[c] : m;
                o[c] = m;
            }
        }
    }
    return OB_OK;
}

ob_status ob_cpu_maxpool2_backward(ob_device *dev, float *dinp, const float *dout, const float *inp, int B,
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
            int64_t idx[4] = {i00, i00 + C, i00 + (int64_t)W * C, i00 + (int64_t)W * C + C};
            const float *d = dout + (((int64_t)b * Ho + oy) * Wo + ox) * C;
            for (int c = 0; c < C; c++) {
                int arg = 0;
                float m = inp[idx[0] + c];
                for (int k = 1; k < 4; k++)
                    if (inp[idx[k] + c] > m) {
                        m = inp[idx[k] + c];
                        arg = k;
                    }
                for (int k = 0; k < 4; k++) dinp[idx[k] + c] = k == arg ? d[c] : 0.0f;
            }
        }
    }
    return OB_OK;
}

/* inp (B,HW,C) -> out (B,C) */
ob_status ob_cpu_avgpool_forward(ob_device *dev, float *out, const float *inp, int B, int HW, int C,
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

ob_status ob_cpu_avgpool_backward(ob_device *dev, float *dinp, const float *dout, int B, int HW, int C,
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

ob_status ob_cpu_synth_images(ob_device *dev, const ob_image_synth *a, float *out, int32_t *labels,
                              const float *templates, ob_err *e)
{
    (void)dev;
    (void)e;
    const int B = a->B, H = a->H, W = a->W, C = a->C;
    const int64_t img = (int64_t)H * W * C;
    const uint32_t span = (uint32_t)(2 * a->max_shift + 1);
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
        const float *trow = templates + ((int64_t)label * H + sy) * W * C;
        float *orow = out + (int64_t)b * img + (int64_t)y * W * C;
        for (int x = 0; x < W; x++) {
            int sx = ((x - dx) % W + W) % W;
            for (int c = 0; c < C; c++) {
                int64_t pix = ((int64_t)y * W + x) * C + c;
                float n = a->noise > 0.0f
                              ? a->noise * ob_rng_normal(a->seed, a->stream + 1, id * (uint64_t)img + (uint64_t)pix)
                              : 0.0f;
                orow[(int64_t)x * C + c] = contrast * trow[(int64_t)sx * C + c] + n;
            }
        }
    }
    return OB_OK;
}
