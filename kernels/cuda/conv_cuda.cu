/* kernels/cuda/conv_cuda.cu - convolution-network layers on the GPU.
 *
 * The CUDA bodies of the cnn workload's slots of kernels/backend.h (the CPU
 * versions are kernels/cpu/conv_cpu.c): im2col / col2im (a convolution is
 * im2col + one cuBLAS gemm), group normalization, ReLU, 2x2 max pooling,
 * global average pooling and the class-conditional synthetic images. Images
 * are NHWC.
 *
 * col2im gathers (each input pixel sums its column entries in the order the
 * CPU scatters them: no atomics, bitwise the CPU's result); average pooling
 * sums each (b, c) in pixel order like the CPU; group norm repeats the CPU's
 * staged sums with explicit rounding, its parameter gradients use the shared
 * chunked column sums (nn_cuda.cu). The synthetic images use the same Philox
 * draws as the CPU (core/rng.h). Everything here matches the CPU bit for bit
 * except where a Philox normal goes through the device's log/cos.
 */
#include "core/rng.h"
#include "kernels/cuda/cuda_common.cuh"

#define CV_THREADS 256

/* ---- im2col / col2im --------------------------------------------------------------------- */

/* One block per column row r = (b, oy, ox); threads over (ky, kx, ci), the
 * column order of backend.h (channels contiguous). */
static __global__ void im2col_kernel(float *__restrict__ col, const float *__restrict__ inp, int H, int W, int Cin,
                                     int K, int stride, int pad, int Ho, int Wo)
{
    int64_t r = blockIdx.x;
    int b = (int)(r / ((int64_t)Ho * Wo)), rem = (int)(r % ((int64_t)Ho * Wo));
    int oy = rem / Wo, ox = rem % Wo;
    int KC = Cin * K * K;
    float *dst = col + r * KC;
    for (int j = threadIdx.x; j < KC; j += blockDim.x) {
        int ci = j % Cin, k = j / Cin, ky = k / K, kx = k % K;
        int iy = oy * stride + ky - pad, ix = ox * stride + kx - pad;
        float v = 0.0f;
        if (iy >= 0 && iy < H && ix >= 0 && ix < W) v = inp[(((int64_t)b * H + iy) * W + ix) * Cin + ci];
        dst[j] = v;
    }
}

static ob_status cu_im2col(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin, int K,
                           int stride, int pad, ob_err *e)
{
    int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
    int64_t rows = (int64_t)B * Ho * Wo;
    if (rows <= 0 || Cin * K * K <= 0) return OB_OK;
    if (rows > 2147483647LL) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda im2col: %lld rows", (long long)rows);
    im2col_kernel<<<(unsigned)rows, 128, 0, cu_impl(dev)->stream>>>(col, inp, H, W, Cin, K, stride, pad, Ho, Wo);
    OB_CU_LAUNCHED(e, "im2col");
    return OB_OK;
}

/* One thread per input element (b, iy, ix, ci), gathering the column entries
 * that read it in the CPU's order: (ky, kx) ascending, i.e. output rows and
 * columns descending (each reads the pixel through exactly one (ky, kx)). */
static __global__ void col2im_kernel(float *__restrict__ dinp, const float *__restrict__ dcol, int B, int H, int W,
                                     int Cin, int K, int stride, int pad, int Ho, int Wo)
{
    int64_t total = (int64_t)B * H * W * Cin, step = (int64_t)gridDim.x * blockDim.x;
    int64_t KC = (int64_t)Cin * K * K;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int ci = (int)(i % Cin);
        int64_t pix = i / Cin;
        int ix = (int)(pix % W);
        int64_t by = pix / W;
        int iy = (int)(by % H), b = (int)(by / H);
        float d = 0.0f;
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
                d = __fadd_rn(d, dcol[(((int64_t)b * Ho + oy) * Wo + ox) * KC + ((int64_t)ky * K + kx) * Cin + ci]);
            }
        }
        dinp[i] = d;
    }
}

static ob_status cu_col2im(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, int K,
                           int stride, int pad, ob_err *e)
{
    int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
    int64_t total = (int64_t)B * H * W * Cin;
    if (total <= 0) return OB_OK;
    col2im_kernel<<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(dinp, dcol, B, H, W, Cin,
                                                                                            K, stride, pad, Ho, Wo);
    OB_CU_LAUNCHED(e, "col2im");
    return OB_OK;
}

/* ---- group norm ---------------------------------------------------------------------------------
 * The CPU's arithmetic, stage by stage: per-channel sums over the pixels in
 * pixel order (double), per-group sums over the channels in channel order,
 * then per-channel coefficients and one elementwise pass; rounding made
 * explicit, so the results are the CPU's bit for bit. */

/* Thread per (b, c): cs = sum_p x, cv = sum_p x^2 (forward) or
 * s1 = sum_p dout, s2 = sum_p dout * (x - mean) (backward). work (B, 2, C). */
template <int BACKWARD>
static __global__ void gn_chan_kernel(double *__restrict__ work, const float *__restrict__ inp,
                                      const float *__restrict__ dout, const float *__restrict__ mean, int B, int HW,
                                      int C, int G)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (int64_t)B * C) return;
    int bi = (int)(i / C), c = (int)(i % C), Cg = C / G;
    const float *x = inp + (int64_t)bi * HW * C + c;
    double a = 0.0, q = 0.0;
    if (!BACKWARD) {
        for (int p = 0; p < HW; p++) {
            double v = x[(int64_t)p * C];
            a = __dadd_rn(a, v);
            q = __dadd_rn(q, __dmul_rn(v, v));
        }
    } else {
        const float *d = dout + (int64_t)bi * HW * C + c;
        const float mc = mean[bi * G + c / Cg];
        for (int p = 0; p < HW; p++) {
            float dv = d[(int64_t)p * C];
            a = __dadd_rn(a, (double)dv);
            q = __dadd_rn(q, __dmul_rn((double)dv, (double)__fsub_rn(x[(int64_t)p * C], mc)));
        }
    }
    work[(int64_t)bi * 2 * C + c] = a;
    work[(int64_t)bi * 2 * C + C + c] = q;
}

/* Thread per (b, g): the group's statistics and the per-channel coefficients.
 * forward: coef (B, 2, C) = scale, shift; backward: coef (B, 3, C) = ca, cb, cc. */
template <int BACKWARD>
static __global__ void gn_group_kernel(float *__restrict__ coef, float *__restrict__ mean, float *__restrict__ rstd,
                                       const double *__restrict__ work, const float *__restrict__ w,
                                       const float *__restrict__ b, int B, int HW, int C, int G)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * G) return;
    int bi = i / G, g = i % G, Cg = C / G;
    const double cnt = (double)HW * Cg;
    const double *s1 = work + (int64_t)bi * 2 * C, *s2 = s1 + C;
    if (!BACKWARD) {
        float *sc = coef + (int64_t)bi * 2 * C, *sh = sc + C;
        double t = 0.0, t2 = 0.0;
        for (int c = g * Cg; c < (g + 1) * Cg; c++) {
            t = __dadd_rn(t, s1[c]);
            t2 = __dadd_rn(t2, s2[c]);
        }
        double md = __ddiv_rn(t, cnt), var = __dsub_rn(__ddiv_rn(t2, cnt), __dmul_rn(md, md));
        float m = (float)md;
        float r = (float)__ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(var > 0.0 ? var : 0.0, 1e-5)));
        mean[i] = m;
        rstd[i] = r;
        for (int c = g * Cg; c < (g + 1) * Cg; c++) {
            sc[c] = __fmul_rn(r, w[c]);
            sh[c] = __fsub_rn(b[c], __fmul_rn(m, sc[c]));
        }
    } else {
        float *ca = coef + (int64_t)bi * 3 * C, *cb = ca + C, *cc = cb + C;
        const float r = rstd[i];
        double t1 = 0.0, t2 = 0.0;
        for (int c = g * Cg; c < (g + 1) * Cg; c++) {
            t1 = __dadd_rn(t1, __dmul_rn((double)w[c], s1[c]));
            t2 = __dadd_rn(t2, __dmul_rn(__dmul_rn((double)w[c], s2[c]), (double)r));
        }
        float m1 = (float)__ddiv_rn(t1, cnt), m2 = (float)__ddiv_rn(t2, cnt);
        for (int c = g * Cg; c < (g + 1) * Cg; c++) {
            ca[c] = __fmul_rn(w[c], r);
            cb[c] = __fmul_rn(__fmul_rn(-m2, r), r);
            cc[c] = __fmul_rn(-m1, r);
        }
    }
}

/* Elementwise: forward out = x * scale + shift; backward
 * dinp = dout * ca + (x - mean) * cb + cc. */
template <int BACKWARD>
static __global__ void gn_apply_kernel(float *__restrict__ out, const float *__restrict__ inp,
                                       const float *__restrict__ dout, const float *__restrict__ coef,
                                       const float *__restrict__ mean, int B, int HW, int C, int G)
{
    int64_t total = (int64_t)B * HW * C, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int c = (int)(i % C);
        int64_t bi = i / ((int64_t)HW * C);
        if (!BACKWARD) {
            const float *sc = coef + bi * 2 * C;
            out[i] = __fadd_rn(__fmul_rn(inp[i], sc[c]), sc[C + c]);
        } else {
            const float *ca = coef + bi * 3 * C;
            float mc = mean[bi * G + c / (C / G)];
            out[i] = __fadd_rn(__fadd_rn(__fmul_rn(dout[i], ca[c]), __fmul_rn(__fsub_rn(inp[i], mc), ca[C + c])),
                               ca[2 * C + c]);
        }
    }
}

/* Scratch for the group-norm stages: work (B, 2, C) doubles, then coef (B, 3, C) floats. */
static ob_status gn_scratch(ob_device *dev, int B, int C, double **work, float **coef, ob_err *e)
{
    size_t wbytes = ((size_t)B * 2 * C * sizeof(double) + 255) / 256 * 256;
    unsigned char *buf = NULL;
    OB_TRY(ob_cu_scratch(dev, wbytes + (size_t)B * 3 * C * sizeof(float), (void **)&buf, e));
    *work = (double *)buf;
    *coef = (float *)(buf + wbytes);
    return OB_OK;
}

static ob_status cu_groupnorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                      const float *w, const float *b, int B, int HW, int C, int G, ob_err *e)
{
    if (B <= 0 || C <= 0 || G <= 0) return OB_OK;
    const char *op = "groupnorm_forward";
    cudaStream_t s = cu_impl(dev)->stream;
    double *work;
    float *coef;
    OB_TRY(gn_scratch(dev, B, C, &work, &coef, e));
    int64_t bc = (int64_t)B * C;
    gn_chan_kernel<0><<<(unsigned)((bc + 127) / 128), 128, 0, s>>>(work, inp, NULL, NULL, B, HW, C, G);
    OB_CU_LAUNCHED(e, op);
    gn_group_kernel<0><<<(B * G + 127) / 128, 128, 0, s>>>(coef, mean, rstd, work, w, b, B, HW, C, G);
    OB_CU_LAUNCHED(e, op);
    int64_t total = (int64_t)B * HW * C;
    gn_apply_kernel<0><<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, s>>>(out, inp, NULL, coef, mean, B, HW, C,
                                                                              G);
    OB_CU_LAUNCHED(e, op);
    return OB_OK;
}

static ob_status cu_groupnorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                       const float *inp, const float *w, const float *mean, const float *rstd, int B,
                                       int HW, int C, int G, ob_err *e)
{
    if (B <= 0 || C <= 0 || G <= 0) return OB_OK;
    const char *op = "groupnorm_backward";
    cudaStream_t s = cu_impl(dev)->stream;
    double *work;
    float *coef;
    OB_TRY(gn_scratch(dev, B, C, &work, &coef, e));
    int64_t bc = (int64_t)B * C;
    gn_chan_kernel<1><<<(unsigned)((bc + 127) / 128), 128, 0, s>>>(work, inp, dout, mean, B, HW, C, G);
    OB_CU_LAUNCHED(e, op);
    gn_group_kernel<1><<<(B * G + 127) / 128, 128, 0, s>>>(coef, NULL, (float *)rstd, work, w, NULL, B, HW, C, G);
    OB_CU_LAUNCHED(e, op);
    int64_t total = (int64_t)B * HW * C;
    gn_apply_kernel<1><<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, s>>>(dinp, inp, dout, coef, mean, B, HW, C,
                                                                              G);
    OB_CU_LAUNCHED(e, op);
    /* dw, db: the CPU's row chunks (nn_cuda.cu), after the stages above in stream order */
    return ob_cu_colsums(dev, 2, dw, db, dout, inp, mean, rstd, (int64_t)B * HW, C, HW, G, op, e);
}

/* ---- ReLU ------------------------------------------------------------------------------------- */

static __global__ void relu_fwd_kernel(float *out, const float *inp, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

static __global__ void relu_bwd_kernel(float *dinp, const float *out, const float *dout, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dinp[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

static ob_status cu_relu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e)
{
    if (n <= 0) return OB_OK;
    relu_fwd_kernel<<<cu_grid(dev, n, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(out, inp, n);
    OB_CU_LAUNCHED(e, "relu_forward");
    return OB_OK;
}

static ob_status cu_relu_backward(ob_device *dev, float *dinp, const float *out, const float *dout, int64_t n,
                                  ob_err *e)
{
    if (n <= 0) return OB_OK;
    relu_bwd_kernel<<<cu_grid(dev, n, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(dinp, out, dout, n);
    OB_CU_LAUNCHED(e, "relu_backward");
    return OB_OK;
}

/* ---- 2x2 max pooling: one thread per output element (b, oy, ox, c) -------------------------------- */

template <int BACKWARD>
static __global__ void maxpool2_kernel(float *__restrict__ a, const float *__restrict__ b,
                                       const float *__restrict__ inp, int B, int H, int W, int C)
{
    int Ho = H / 2, Wo = W / 2;
    int64_t total = (int64_t)B * Ho * Wo * C, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int c = (int)(i % C);
        int64_t pix = i / C;
        int ox = (int)(pix % Wo);
        int64_t by = pix / Wo;
        int oy = (int)(by % Ho), bb = (int)(by / Ho);
        int64_t i00 = (((int64_t)bb * H + 2 * oy) * W + 2 * ox) * C + c;
        int64_t idx[4] = {i00, i00 + C, i00 + (int64_t)W * C, i00 + (int64_t)W * C + C};
        float a0 = inp[idx[0]], a1 = inp[idx[1]], a2 = inp[idx[2]], a3 = inp[idx[3]];
        float m01 = a1 > a0 ? a1 : a0, m23 = a3 > a2 ? a3 : a2;
        if (!BACKWARD) { /* a = out */
            a[i] = m23 > m01 ? m23 : m01;
        } else { /* a = dinp, b = dout: the first maximum in (0,0), (0,1), (1,0), (1,1) order, as the CPU writes it */
            float g = b[i];
            float s01 = a1 > a0 ? 1.0f : 0.0f, s23 = a3 > a2 ? 1.0f : 0.0f, sh = m23 > m01 ? 1.0f : 0.0f;
            a[idx[0]] = g * (1.0f - sh) * (1.0f - s01);
            a[idx[1]] = g * (1.0f - sh) * s01;
            a[idx[2]] = g * sh * (1.0f - s23);
            a[idx[3]] = g * sh * s23;
        }
    }
}

static ob_status cu_maxpool2_forward(ob_device *dev, float *out, const float *inp, int B, int H, int W, int C,
                                     ob_err *e)
{
    int64_t total = (int64_t)B * (H / 2) * (W / 2) * C;
    if (total <= 0) return OB_OK;
    maxpool2_kernel<0><<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(out, NULL, inp, B, H,
                                                                                                 W, C);
    OB_CU_LAUNCHED(e, "maxpool2_forward");
    return OB_OK;
}

static ob_status cu_maxpool2_backward(ob_device *dev, float *dinp, const float *dout, const float *inp, int B, int H,
                                      int W, int C, ob_err *e)
{
    int64_t total = (int64_t)B * (H / 2) * (W / 2) * C;
    if (total <= 0) return OB_OK;
    maxpool2_kernel<1><<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(dinp, dout, inp, B, H,
                                                                                                 W, C);
    OB_CU_LAUNCHED(e, "maxpool2_backward");
    return OB_OK;
}

/* ---- global average pooling ------------------------------------------------------------------------ */

/* One thread per (b, c): the pixels in order, as on the CPU. */
static __global__ void avgpool_fwd_kernel(float *__restrict__ out, const float *__restrict__ inp, int B, int HW, int C)
{
    int64_t total = (int64_t)B * C, step = (int64_t)gridDim.x * blockDim.x;
    const float inv = 1.0f / (float)HW;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int64_t b = i / C;
        int c = (int)(i % C);
        const float *x = inp + b * HW * C + c;
        float s = 0.0f;
        for (int p = 0; p < HW; p++) s = __fadd_rn(s, x[(int64_t)p * C]);
        out[i] = __fmul_rn(s, inv);
    }
}

static __global__ void avgpool_bwd_kernel(float *__restrict__ dinp, const float *__restrict__ dout, int B, int HW,
                                          int C)
{
    int64_t total = (int64_t)B * HW * C, step = (int64_t)gridDim.x * blockDim.x;
    const float inv = 1.0f / (float)HW;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int64_t b = i / ((int64_t)HW * C);
        dinp[i] = __fmul_rn(dout[b * C + i % C], inv);
    }
}

static ob_status cu_avgpool_forward(ob_device *dev, float *out, const float *inp, int B, int HW, int C, ob_err *e)
{
    int64_t total = (int64_t)B * C;
    if (total <= 0) return OB_OK;
    avgpool_fwd_kernel<<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(out, inp, B, HW, C);
    OB_CU_LAUNCHED(e, "avgpool_forward");
    return OB_OK;
}

static ob_status cu_avgpool_backward(ob_device *dev, float *dinp, const float *dout, int B, int HW, int C, ob_err *e)
{
    int64_t total = (int64_t)B * HW * C;
    if (total <= 0) return OB_OK;
    avgpool_bwd_kernel<<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(dinp, dout, B, HW,
                                                                                                 C);
    OB_CU_LAUNCHED(e, "avgpool_backward");
    return OB_OK;
}

/* ---- synthetic images (see ob_image_synth in backend.h) ------------------------------------------------ */

static __global__ void synth_kernel(ob_image_synth a, float *__restrict__ out, int32_t *__restrict__ labels,
                                    const float *__restrict__ templates)
{
    const int H = a.H, W = a.W, C = a.C;
    const int64_t img = (int64_t)H * W * C, total = (int64_t)a.B * img, step = (int64_t)gridDim.x * blockDim.x;
    const uint32_t span = (uint32_t)(2 * a.max_shift + 1);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int b = (int)(i / img);
        int64_t pix = i % img; /* (y*W + x)*C + c */
        int c = (int)(pix % C), x = (int)((pix / C) % W), y = (int)(pix / ((int64_t)W * C));
        uint64_t id = a.index0 + (uint64_t)b;
        ob_u32x4 r = ob_philox(a.seed, a.stream, id);
        int label = (int)(((uint64_t)r.v[0] * (uint32_t)a.K) >> 32);
        int dy = (int)(((uint64_t)r.v[1] * span) >> 32) - a.max_shift;
        int dx = (int)(((uint64_t)r.v[2] * span) >> 32) - a.max_shift;
        float contrast = __fadd_rn(a.contrast_lo, __fmul_rn(__fsub_rn(a.contrast_hi, a.contrast_lo),
                                                            ob_u32_to_unit(r.v[3])));
        if (pix == 0) labels[b] = label;
        int sy = ((y - dy) % H + H) % H, sx = ((x - dx) % W + W) % W;
        float t = templates[(((int64_t)label * H + sy) * W + sx) * C + c];
        float n = a.noise > 0.0f
                      ? __fmul_rn(a.noise, ob_rng_normal(a.seed, a.stream + 1, id * (uint64_t)img + (uint64_t)pix))
                      : 0.0f;
        out[i] = __fadd_rn(__fmul_rn(contrast, t), n);
    }
}

static ob_status cu_synth_images(ob_device *dev, const ob_image_synth *a, float *out, int32_t *labels,
                                 const float *templates, ob_err *e)
{
    int64_t total = (int64_t)a->B * a->H * a->W * a->C;
    if (total <= 0) return OB_OK;
    synth_kernel<<<cu_grid(dev, total, CV_THREADS), CV_THREADS, 0, cu_impl(dev)->stream>>>(*a, out, labels, templates);
    OB_CU_LAUNCHED(e, "synth_images");
    return OB_OK;
}

/* ---- into the table ---------------------------------------------------------------------------------------- */

void ob_cu_fill_conv_ops(ob_backend_ops *o)
{
    o->im2col = cu_im2col;
    o->col2im = cu_col2im;
    o->groupnorm_forward = cu_groupnorm_forward;
    o->groupnorm_backward = cu_groupnorm_backward;
    o->relu_forward = cu_relu_forward;
    o->relu_backward = cu_relu_backward;
    o->maxpool2_forward = cu_maxpool2_forward;
    o->maxpool2_backward = cu_maxpool2_backward;
    o->avgpool_forward = cu_avgpool_forward;
    o->avgpool_backward = cu_avgpool_backward;
    o->synth_images = cu_synth_images;
}
