/* kernels/cuda/conv_cuda.cu - convolution-network layers on the GPU.
 *
 * The CUDA bodies of the cnn workload's slots of kernels/backend.h (the CPU
 * versions are kernels/cpu/conv_cpu.c): im2col / col2im (a convolution is
 * im2col + one cuBLAS gemm), group normalization, ReLU, 2x2 max pooling,
 * global average pooling and the class-conditional synthetic images. Images
 * are NHWC.
 *
 * col2im gathers (each input pixel sums its column entries in the CPU's
 * (ky, kx) order: no atomics, bitwise the CPU's result); average pooling sums
 * each (b, c) in pixel order like the CPU; the group-norm parameter gradients
 * use the shared chunked column sums (nn_cuda.cu). The synthetic images use
 * the same Philox draws as the CPU (core/rng.h).
 */
#include "core/rng.h"
#include "kernels/cuda/cuda_common.cuh"

#define CV_THREADS 256

/* ---- im2col / col2im --------------------------------------------------------------------- */

/* One block per column row r = (b, oy, ox); threads over (ci, ky, kx). */
static __global__ void im2col_kernel(float *__restrict__ col, const float *__restrict__ inp, int H, int W, int Cin,
                                     int K, int stride, int pad, int Ho, int Wo)
{
    int64_t r = blockIdx.x;
    int b = (int)(r / ((int64_t)Ho * Wo)), rem = (int)(r % ((int64_t)Ho * Wo));
    int oy = rem / Wo, ox = rem % Wo;
    int KK = K * K, KC = Cin * KK;
    float *dst = col + r * KC;
    for (int j = threadIdx.x; j < KC; j += blockDim.x) {
        int ci = j / KK, k = j % KK, ky = k / K, kx = k % K;
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

/* One thread per input element (b, iy, ix, ci). */
static __global__ void col2im_kernel(float *__restrict__ dinp, const float *__restrict__ dcol, int B, int H, int W,
                                     int Cin, int K, int stride, int pad, int Ho, int Wo)
{
    int64_t total = (int64_t)B * H * W * Cin, step = (int64_t)gridDim.x * blockDim.x;
    int KK = K * K;
    int64_t KC = (int64_t)Cin * KK;
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
                d = __fadd_rn(d, dcol[(((int64_t)b * Ho + oy) * Wo + ox) * KC + (int64_t)ci * KK + ky * K + kx]);
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

/* ---- group norm: one block per (b, g) -------------------------------------------------------- */

static __global__ void __launch_bounds__(OB_CU_RED_THREADS)
    groupnorm_fwd_kernel(float *__restrict__ out, float *__restrict__ mean, float *__restrict__ rstd,
                         const float *__restrict__ inp, const float *__restrict__ w, const float *__restrict__ b,
                         int HW, int C, int G)
{
    __shared__ float s_m, s_r;
    int bg = blockIdx.x, bi = bg / G, g = bg % G, Cg = C / G;
    int64_t base = (int64_t)bi * HW * C + (int64_t)g * Cg, cnt_i = (int64_t)HW * Cg;
    const double cnt = (double)cnt_i;
    const float *x = inp + base;
    float *o = out + base;
    double s = 0.0, unused = 0.0;
    for (int64_t k = threadIdx.x; k < cnt_i; k += blockDim.x) s += x[(k / Cg) * C + k % Cg];
    cu_block_sum2(s, unused);
    if (threadIdx.x == 0) s_m = (float)(s / cnt);
    __syncthreads();
    const float m = s_m;
    double v = 0.0;
    unused = 0.0;
    for (int64_t k = threadIdx.x; k < cnt_i; k += blockDim.x) {
        double d = (double)x[(k / Cg) * C + k % Cg] - m;
        v += d * d;
    }
    cu_block_sum2(v, unused);
    if (threadIdx.x == 0) {
        s_r = (float)(1.0 / sqrt(v / cnt + 1e-5));
        mean[bg] = m;
        rstd[bg] = s_r;
    }
    __syncthreads();
    const float r = s_r;
    const float *wg = w + g * Cg, *bgp = b + g * Cg;
    for (int64_t k = threadIdx.x; k < cnt_i; k += blockDim.x) {
        int64_t i = (k / Cg) * C + k % Cg;
        int c = (int)(k % Cg);
        o[i] = __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(x[i], m), r), wg[c]), bgp[c]);
    }
}

static ob_status cu_groupnorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                      const float *w, const float *b, int B, int HW, int C, int G, ob_err *e)
{
    if (B * G <= 0) return OB_OK;
    groupnorm_fwd_kernel<<<B * G, OB_CU_RED_THREADS, 0, cu_impl(dev)->stream>>>(out, mean, rstd, inp, w, b, HW, C,
                                                                                  G);
    OB_CU_LAUNCHED(e, "groupnorm_forward");
    return OB_OK;
}

static __global__ void __launch_bounds__(OB_CU_RED_THREADS)
    groupnorm_bwd_kernel(float *__restrict__ dinp, const float *__restrict__ dout, const float *__restrict__ inp,
                         const float *__restrict__ w, const float *__restrict__ mean, const float *__restrict__ rstd,
                         int HW, int C, int G)
{
    __shared__ float s_m1, s_m2;
    int bg = blockIdx.x, bi = bg / G, g = bg % G, Cg = C / G;
    int64_t base = (int64_t)bi * HW * C + (int64_t)g * Cg, cnt_i = (int64_t)HW * Cg;
    const double cnt = (double)cnt_i;
    const float *x = inp + base, *d = dout + base, *wg = w + g * Cg;
    float *dx = dinp + base;
    const float m = mean[bg], r = rstd[bg];
    double s1 = 0.0, s2 = 0.0;
    for (int64_t k = threadIdx.x; k < cnt_i; k += blockDim.x) {
        int64_t i = (k / Cg) * C + k % Cg;
        float dn = __fmul_rn(d[i], wg[k % Cg]);
        s1 += dn;
        s2 += (double)dn * __fmul_rn(__fsub_rn(x[i], m), r);
    }
    cu_block_sum2(s1, s2);
    if (threadIdx.x == 0) {
        s_m1 = (float)(s1 / cnt);
        s_m2 = (float)(s2 / cnt);
    }
    __syncthreads();
    const float m1 = s_m1, m2 = s_m2;
    for (int64_t k = threadIdx.x; k < cnt_i; k += blockDim.x) {
        int64_t i = (k / Cg) * C + k % Cg;
        float xh = __fmul_rn(__fsub_rn(x[i], m), r);
        float t = __fsub_rn(__fsub_rn(__fmul_rn(d[i], wg[k % Cg]), m1), __fmul_rn(xh, m2));
        dx[i] = __fmul_rn(t, r);
    }
}

static ob_status cu_groupnorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                       const float *inp, const float *w, const float *mean, const float *rstd, int B,
                                       int HW, int C, int G, ob_err *e)
{
    if (B * G <= 0) return OB_OK;
    groupnorm_bwd_kernel<<<B * G, OB_CU_RED_THREADS, 0, cu_impl(dev)->stream>>>(dinp, dout, inp, w, mean, rstd, HW,
                                                                                  C, G);
    OB_CU_LAUNCHED(e, "groupnorm_backward");
    return ob_cu_colsums(dev, 2, dw, db, dout, inp, mean, rstd, (int64_t)B * HW, C, HW, G, "groupnorm_backward", e);
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
        if (!BACKWARD) { /* a = out, inp the input */
            float m = inp[idx[0]];
            m = inp[idx[1]] > m ? inp[idx[1]] : m;
            m = inp[idx[2]] > m ? inp[idx[2]] : m;
            m = inp[idx[3]] > m ? inp[idx[3]] : m;
            a[i] = m;
        } else { /* a = dinp, b = dout */
            int arg = 0;
            float m = inp[idx[0]];
#pragma unroll
            for (int k = 1; k < 4; k++)
                if (inp[idx[k]] > m) {
                    m = inp[idx[k]];
                    arg = k;
                }
            float d = b[i];
#pragma unroll
            for (int k = 0; k < 4; k++) a[idx[k]] = k == arg ? d : 0.0f;
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
