/* kernels/cuda/nn_cuda.cu - transformer layers and cross-entropy on the GPU.
 *
 * The CUDA bodies of the "neural-network layers" slots of kernels/backend.h
 * used by the bert workload (the CPU versions are kernels/cpu/nn_cpu.c):
 * embedding, LayerNorm, bias, GELU, the head split/merge permutations,
 * row softmax, row gather/scatter and softmax cross-entropy. Matrix products
 * go through the backend's gemm (cuBLAS).
 *
 * Determinism, and the CPU's bits: no float atomics anywhere. exp/tanh are
 * the CPU's own polynomial (nn_expf) and elementwise work follows the CPU's
 * formulas (but nvcc contracts a multiply and an add into one FMA where it
 * can, which the C11 build does not: within rounding), and row sums (LayerNorm's statistics, the softmax and
 * cross-entropy normalizers) are summed by the whole warp or block in a fixed
 * tree rather than in the CPU's column order (one lane summing a row
 * serially made these kernels several times slower; the cross-entropy's
 * 30522-column rows took 1.4 ms of a bert-base step): repeatable bit for bit,
 * and within rounding of the CPU (the cross-entropy sums in double). Column
 * reductions (dw, db of LayerNorm, the bias gradient) use the CPU's row chunks
 * (OB_CU_COL_CHUNKS, the same boundaries), each chunk summed in row order in
 * double. The embedding gradient sorts the token positions (CUB's stable radix
 * sort) and adds each token's rows in position order, as the CPU does.
 */
#include <cub/cub.cuh>

#include "kernels/cuda/cuda_common.cuh"

#define NN_THREADS 256

static __device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* The CPU's exp and tanh (kernels/cpu/nn_cpu.c: nn_expf, nn_tanhf), operation
 * for operation with explicit rounding, so that the two backends agree bit for
 * bit: x clamped to [-87, 88], x = n ln2 + r (Cody-Waite), e^r by
 * its degree-7 Taylor polynomial, 2^n through the exponent bits. */
static __device__ __forceinline__ float nn_expf(float x)
{
    x = x < -87.0f ? -87.0f : x; /* the CPU's masks select the same: exact, NaN stays NaN */
    x = x > 88.0f ? 88.0f : x;
    float n = __fsub_rn(__fadd_rn(__fmul_rn(x, 1.44269504088896341f), 12582912.0f), 12582912.0f);
    float r = __fsub_rn(x, __fmul_rn(n, 0.693145751953125f));
    r = __fsub_rn(r, __fmul_rn(n, 1.42860682030941723e-6f));
    float p = __fadd_rn(0.00138888892f, __fmul_rn(r, 0.000198412701f));
    p = __fadd_rn(0.00833333377f, __fmul_rn(r, p));
    p = __fadd_rn(0.0416666679f, __fmul_rn(r, p));
    p = __fadd_rn(0.166666672f, __fmul_rn(r, p));
    p = __fadd_rn(0.5f, __fmul_rn(r, p));
    p = __fadd_rn(1.0f, __fmul_rn(r, p));
    p = __fadd_rn(1.0f, __fmul_rn(r, p));
    int bits = ((int)n + 127) << 23;
    return __fmul_rn(p, __int_as_float(bits));
}

static __device__ __forceinline__ float nn_tanhf(float u)
{
    return __fsub_rn(1.0f, __fdiv_rn(2.0f, __fadd_rn(nn_expf(__fmul_rn(2.0f, u)), 1.0f)));
}

/* ---- embedding ----------------------------------------------------------------------- */

static __global__ void embedding_fwd_kernel(float *__restrict__ out, const int32_t *__restrict__ tokens,
                                            const float *__restrict__ wte, const float *__restrict__ wpe, int N,
                                            int T, int C)
{
    int64_t total = (int64_t)N * C, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int n = (int)(i / C), c = (int)(i % C);
        float v = wte[(int64_t)tokens[n] * C + c];
        if (wpe) v = __fadd_rn(v, wpe[(int64_t)(n % T) * C + c]);
        out[i] = v;
    }
}

static ob_status cu_embedding_forward(ob_device *dev, float *out, const int32_t *tokens, const float *wte,
                                      const float *wpe, int N, int T, int C, ob_err *e)
{
    if (N <= 0 || C <= 0) return OB_OK;
    embedding_fwd_kernel<<<cu_grid(dev, (int64_t)N * C, NN_THREADS), NN_THREADS, 0, cu_impl(dev)->stream>>>(
        out, tokens, wte, wpe, N, T, C);
    OB_CU_LAUNCHED(e, "embedding_forward");
    return OB_OK;
}

static __global__ void iota_kernel(int32_t *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = i;
}

/* One block per run of equal sorted tokens (the first position of the run):
 * dwte[tok] += the rows of dout at the run's positions, in position order. */
static __global__ void embedding_seg_kernel(float *__restrict__ dwte, const float *__restrict__ dout,
                                            const int32_t *__restrict__ keys, const int32_t *__restrict__ pos,
                                            int N, int C)
{
    int i = blockIdx.x;
    int tok = keys[i];
    if (i > 0 && keys[i - 1] == tok) return;
    int end = i + 1;
    while (end < N && keys[end] == tok) end++;
    float *gw = dwte + (int64_t)tok * C;
    int c = blockIdx.y * blockDim.x + threadIdx.x; /* grid.y: channel blocks */
    if (c < C) {
        float s = gw[c];
        for (int k = i; k < end; k++) s = __fadd_rn(s, dout[(int64_t)pos[k] * C + c]);
        gw[c] = s;
    }
}

/* dwpe[t, c] += dout rows n = t, t + T, ... in order. */
static __global__ void embedding_pos_kernel(float *__restrict__ dwpe, const float *__restrict__ dout, int N, int T,
                                            int C)
{
    int64_t total = (int64_t)T * C, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int t = (int)(i / C), c = (int)(i % C);
        float s = dwpe[i];
        for (int n = t; n < N; n += T) s = __fadd_rn(s, dout[(int64_t)n * C + c]);
        dwpe[i] = s;
    }
}

static ob_status cu_embedding_backward(ob_device *dev, float *dwte, float *dwpe, const float *dout,
                                       const int32_t *tokens, int N, int T, int C, int V, ob_err *e)
{
    if (N <= 0 || C <= 0) return OB_OK;
    const char *op = "embedding_backward";
    cudaStream_t s = cu_impl(dev)->stream;
    int end_bit = 1;
    while (end_bit < 31 && (1LL << end_bit) < (long long)V) end_bit++;
    size_t temp = 0;
    OB_CU(e, op,
          cub::DeviceRadixSort::SortPairs(NULL, temp, (const int32_t *)NULL, (int32_t *)NULL,
                                          (const int32_t *)NULL, (int32_t *)NULL, N, 0, end_bit, s));
    size_t ints = (size_t)3 * N * sizeof(int32_t);
    ints = (ints + 255) / 256 * 256;
    unsigned char *buf = NULL;
    OB_TRY(ob_cu_scratch(dev, ints + temp, (void **)&buf, e));
    int32_t *keys = (int32_t *)buf, *pos_in = keys + N, *pos = pos_in + N;
    iota_kernel<<<cu_grid(dev, N, NN_THREADS), NN_THREADS, 0, s>>>(pos_in, N);
    OB_CU_LAUNCHED(e, op);
    OB_CU(e, op, cub::DeviceRadixSort::SortPairs(buf + ints, temp, tokens, keys, pos_in, pos, N, 0, end_bit, s));
    dim3 grid((unsigned)N, (unsigned)((C + 127) / 128));
    embedding_seg_kernel<<<grid, 128, 0, s>>>(dwte, dout, keys, pos, N, C);
    OB_CU_LAUNCHED(e, op);
    if (dwpe) {
        embedding_pos_kernel<<<cu_grid(dev, (int64_t)T * C, NN_THREADS), NN_THREADS, 0, s>>>(dwpe, dout, N, T, C);
        OB_CU_LAUNCHED(e, op);
    }
    return OB_OK;
}

/* ---- LayerNorm: one warp per row ------------------------------------------------------------- */

/* The sum over a warp in a fixed butterfly: every lane gets the same bits. */
static __device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* One warp per row: each lane sums its columns (lane, lane + 32, ...) in
 * order, then the warp combines the 32 partial sums in a fixed tree (the
 * same bits every run; not the CPU's column-order sum, so outputs agree
 * with the CPU to rounding, see tests/test_cuda_ops.c). Two passes: the mean,
 * then the variance about it. */
static __global__ void layernorm_fwd_kernel(float *__restrict__ out, float *__restrict__ mean,
                                            float *__restrict__ rstd, const float *__restrict__ inp,
                                            const float *__restrict__ w, const float *__restrict__ b, int N, int C)
{
    int n = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (n >= N) return;
    const float *x = inp + (int64_t)n * C;
    float *o = out + (int64_t)n * C;
    float m = 0.0f, v = 0.0f;
    for (int c = lane; c < C; c += 32) m += x[c];
    m = warp_sum(m) / (float)C;
    for (int c = lane; c < C; c += 32) {
        float d = x[c] - m;
        v += d * d;
    }
    v = warp_sum(v) / (float)C;
    float r = 1.0f / sqrtf(v + 1e-5f);
    if (lane == 0) {
        mean[n] = m;
        rstd[n] = r;
    }
    for (int c = lane; c < C; c += 32) o[c] = (x[c] - m) * r * w[c] + b[c];
}

static ob_status cu_layernorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                      const float *w, const float *b, int N, int C, ob_err *e)
{
    if (N <= 0) return OB_OK;
    int rows_per_block = NN_THREADS / 32;
    layernorm_fwd_kernel<<<(N + rows_per_block - 1) / rows_per_block, NN_THREADS, 0, cu_impl(dev)->stream>>>(
        out, mean, rstd, inp, w, b, N, C);
    OB_CU_LAUNCHED(e, "layernorm_forward");
    return OB_OK;
}

/* One warp per row; the two row means summed as in the forward pass. */
static __global__ void layernorm_bwd_dinp_kernel(float *__restrict__ dinp, const float *__restrict__ dout,
                                                 const float *__restrict__ inp, const float *__restrict__ w,
                                                 const float *__restrict__ mean, const float *__restrict__ rstd,
                                                 int N, int C)
{
    int n = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (n >= N) return;
    const float *x = inp + (int64_t)n * C, *d = dout + (int64_t)n * C;
    float *dx = dinp + (int64_t)n * C;
    const float m = mean[n], s = rstd[n];
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float xh = (x[c] - m) * s;
        float dn = w[c] * d[c];
        dnorm_mean += dn;
        dnorm_norm_mean += dn * xh;
    }
    dnorm_mean = warp_sum(dnorm_mean) / (float)C;
    dnorm_norm_mean = warp_sum(dnorm_norm_mean) / (float)C;
    for (int c = lane; c < C; c += 32) {
        float xh = (x[c] - m) * s;
        float dn = w[c] * d[c];
        dx[c] += (dn - dnorm_mean - xh * dnorm_norm_mean) * s;
    }
}

/* Column sums over row chunks, each chunk summed in row order in double:
 * MODE 0 (LayerNorm): pw = sum dout * xhat, pb = sum dout, xhat from mean/rstd per row;
 * MODE 1 (bias): pb = sum dout;
 * MODE 2 (group norm): as 0 with mean/rstd per (row / HW, column / Cg). */
template <int MODE>
static __global__ void colsum_chunk_kernel(double *__restrict__ part, const float *__restrict__ dout,
                                           const float *__restrict__ inp, const float *__restrict__ mean,
                                           const float *__restrict__ rstd, int64_t N, int C, int nch, int HW,
                                           int G, int Cg)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x, ch = blockIdx.y;
    if (c >= C) return;
    int64_t n0 = N * ch / nch, n1 = N * (ch + 1) / nch;
    double pw = 0.0, pb = 0.0;
    for (int64_t n = n0; n < n1; n++) {
        float d = dout[n * C + c];
        if (MODE != 1) {
            int64_t k = MODE == 0 ? n : (n / HW) * G + c / Cg;
            float xh = __fmul_rn(__fsub_rn(inp[n * C + c], mean[k]), rstd[k]);
            pw += (double)d * xh;
        }
        pb += d;
    }
    double *p = part + (int64_t)ch * 2 * C;
    p[c] = pw;
    p[C + c] = pb;
}

static __global__ void colsum_finish_kernel(float *__restrict__ dw, float *__restrict__ db,
                                            const double *__restrict__ part, int C, int nch)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double sw = 0.0, sb = 0.0;
    for (int ch = 0; ch < nch; ch++) {
        sw += part[(int64_t)ch * 2 * C + c];
        sb += part[(int64_t)ch * 2 * C + C + c];
    }
    if (dw) dw[c] = __fadd_rn(dw[c], (float)sw);
    db[c] = __fadd_rn(db[c], (float)sb);
}

ob_status ob_cu_colsums(ob_device *dev, int mode, float *dw, float *db, const float *dout, const float *inp,
                        const float *mean, const float *rstd, int64_t N, int C, int HW, int G, const char *op,
                        ob_err *e)
{
    if (N <= 0 || C <= 0) return OB_OK;
    int nch = N < OB_CU_COL_CHUNKS ? (int)N : OB_CU_COL_CHUNKS;
    double *part = NULL;
    OB_TRY(ob_cu_scratch(dev, (size_t)nch * 2 * C * sizeof(double), (void **)&part, e));
    cudaStream_t s = cu_impl(dev)->stream;
    dim3 grid((unsigned)((C + 127) / 128), (unsigned)nch);
    int Cg = G > 0 ? C / G : 1;
    if (mode == 0)
        colsum_chunk_kernel<0><<<grid, 128, 0, s>>>(part, dout, inp, mean, rstd, N, C, nch, HW, G, Cg);
    else if (mode == 1)
        colsum_chunk_kernel<1><<<grid, 128, 0, s>>>(part, dout, inp, mean, rstd, N, C, nch, HW, G, Cg);
    else
        colsum_chunk_kernel<2><<<grid, 128, 0, s>>>(part, dout, inp, mean, rstd, N, C, nch, HW, G, Cg);
    OB_CU_LAUNCHED(e, op);
    colsum_finish_kernel<<<(C + 127) / 128, 128, 0, s>>>(dw, db, part, C, nch);
    OB_CU_LAUNCHED(e, op);
    return OB_OK;
}

static ob_status cu_layernorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                       const float *inp, const float *w, const float *mean, const float *rstd,
                                       int N, int C, ob_err *e)
{
    if (N <= 0) return OB_OK;
    int rows_per_block = NN_THREADS / 32;
    layernorm_bwd_dinp_kernel<<<(N + rows_per_block - 1) / rows_per_block, NN_THREADS, 0,
                                cu_impl(dev)->stream>>>(dinp, dout, inp, w, mean, rstd, N, C);
    OB_CU_LAUNCHED(e, "layernorm_backward");
    return ob_cu_colsums(dev, 0, dw, db, dout, inp, mean, rstd, N, C, 1, 1, "layernorm_backward", e);
}

/* ---- bias ------------------------------------------------------------------------------------ */

static __global__ void bias_add_kernel(float *__restrict__ x, const float *__restrict__ b, int64_t total, int C)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step)
        x[i] = __fadd_rn(x[i], b[i % C]);
}

static ob_status cu_bias_add(ob_device *dev, float *x, const float *b, int N, int C, ob_err *e)
{
    int64_t total = (int64_t)N * C;
    if (total <= 0) return OB_OK;
    bias_add_kernel<<<cu_grid(dev, total, NN_THREADS), NN_THREADS, 0, cu_impl(dev)->stream>>>(x, b, total, C);
    OB_CU_LAUNCHED(e, "bias_add");
    return OB_OK;
}

static ob_status cu_bias_backward(ob_device *dev, float *db, const float *dout, int N, int C, ob_err *e)
{
    return ob_cu_colsums(dev, 1, NULL, db, dout, NULL, NULL, NULL, N, C, 1, 1, "bias_backward", e);
}

/* ---- GELU (tanh approximation) ------------------------------------------------------------------ */

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */

static __device__ __forceinline__ float gelu_u(float x) /* GELU_K * (x + 0.044715 x^3) */
{
    return __fmul_rn(GELU_K, __fadd_rn(x, __fmul_rn(__fmul_rn(__fmul_rn(0.044715f, x), x), x)));
}

static __global__ void gelu_fwd_kernel(float *out, const float *inp, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float x = inp[i];
        out[i] = __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, nn_tanhf(gelu_u(x))));
    }
}

static __global__ void gelu_bwd_kernel(float *dinp, const float *inp, const float *dout, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float x = inp[i];
        float t = nn_tanhf(gelu_u(x));
        float sech2 = __fsub_rn(1.0f, __fmul_rn(t, t));
        float a = __fmul_rn(0.5f, __fadd_rn(1.0f, t));
        float b = __fmul_rn(__fmul_rn(__fmul_rn(__fmul_rn(0.5f, x), sech2), GELU_K),
                            __fadd_rn(1.0f, __fmul_rn(__fmul_rn(3.0f * 0.044715f, x), x)));
        dinp[i] = __fmul_rn(__fadd_rn(a, b), dout[i]);
    }
}

static ob_status cu_gelu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e)
{
    if (n <= 0) return OB_OK;
    gelu_fwd_kernel<<<cu_grid(dev, n, NN_THREADS), NN_THREADS, 0, cu_impl(dev)->stream>>>(out, inp, n);
    OB_CU_LAUNCHED(e, "gelu_forward");
    return OB_OK;
}

static ob_status cu_gelu_backward(ob_device *dev, float *dinp, const float *inp, const float *dout, int64_t n,
                                  ob_err *e)
{
    if (n <= 0) return OB_OK;
    gelu_bwd_kernel<<<cu_grid(dev, n, NN_THREADS), NN_THREADS, 0, cu_impl(dev)->stream>>>(dinp, inp, dout, n);
    OB_CU_LAUNCHED(e, "gelu_backward");
    return OB_OK;
}

/* ---- attention heads: (B,T,nsec,NH,HS) <-> (nsec,B,NH,T,HS) ---------------------------------------- */

/* One block per (b, t) row; split: rows -> heads, merge: heads -> rows. */
template <int SPLIT>
static __global__ void heads_kernel(float *__restrict__ dst, const float *__restrict__ src, int B, int T, int nsec,
                                    int NH, int HS)
{
    int bt = blockIdx.x, b = bt / T, t = bt % T;
    int C = NH * HS, width = nsec * C;
    int64_t sec = (int64_t)B * T * C;
    int64_t row = (int64_t)bt * width;
    for (int j = threadIdx.x; j < width; j += blockDim.x) {
        int s = j / C, rem = j % C, h = rem / HS, hs = rem % HS;
        int64_t head = s * sec + (((int64_t)b * NH + h) * T + t) * HS + hs;
        if (SPLIT)
            dst[head] = src[row + j];
        else
            dst[row + j] = src[head];
    }
}

static ob_status cu_heads_split(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                                int HS, ob_err *e)
{
    if (B * T <= 0) return OB_OK;
    heads_kernel<1><<<B * T, NN_THREADS, 0, cu_impl(dev)->stream>>>(dst, src, B, T, nsec, NH, HS);
    OB_CU_LAUNCHED(e, "heads_split");
    return OB_OK;
}

static ob_status cu_heads_merge(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                                int HS, ob_err *e)
{
    if (B * T <= 0) return OB_OK;
    heads_kernel<0><<<B * T, NN_THREADS, 0, cu_impl(dev)->stream>>>(dst, src, B, T, nsec, NH, HS);
    OB_CU_LAUNCHED(e, "heads_merge");
    return OB_OK;
}

/* ---- row softmax: one warp per row ----------------------------------------------------------------- */

/* One warp per row: the max over the warp (exact), the exps spread over the
 * warp, their float sum per lane in column order, then the warp's fixed tree
 * (repeatable; within rounding of the CPU's column-order sum). */
static __global__ void softmax_fwd_kernel(float *__restrict__ x, int R, int L)
{
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (r >= R) return;
    float *row = x + (int64_t)r * L;
    float mx = -INFINITY;
    for (int i = lane; i < L; i += 32) mx = row[i] > mx ? row[i] : mx;
    mx = warp_max(mx);
    float s = 0.0f; /* each lane its own columns, then the warp's fixed tree */
    for (int i = lane; i < L; i += 32) {
        float v = nn_expf(__fsub_rn(row[i], mx));
        row[i] = v;
        s = __fadd_rn(s, v);
    }
    float inv = __fdiv_rn(1.0f, warp_sum(s));
    for (int i = lane; i < L; i += 32) row[i] = __fmul_rn(row[i], inv);
}

static __global__ void softmax_bwd_kernel(float *dx, const float *dy, const float *__restrict__ y, int R, int L)
{
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (r >= R) return;
    const float *yr = y + (int64_t)r * L, *dyr = dy + (int64_t)r * L;
    float *dxr = dx + (int64_t)r * L;
    float s = 0.0f; /* each lane reads and later writes only its own columns (dx may alias dy) */
    for (int i = lane; i < L; i += 32) s = __fadd_rn(s, __fmul_rn(dyr[i], yr[i]));
    s = warp_sum(s);
    for (int i = lane; i < L; i += 32) dxr[i] = __fmul_rn(yr[i], __fsub_rn(dyr[i], s));
}

static ob_status cu_softmax_forward(ob_device *dev, float *x, int R, int L, ob_err *e)
{
    if (R <= 0) return OB_OK;
    int rpb = NN_THREADS / 32;
    softmax_fwd_kernel<<<(R + rpb - 1) / rpb, NN_THREADS, 0, cu_impl(dev)->stream>>>(x, R, L);
    OB_CU_LAUNCHED(e, "softmax_forward");
    return OB_OK;
}

static ob_status cu_softmax_backward(ob_device *dev, float *dx, const float *dy, const float *y, int R, int L,
                                     ob_err *e)
{
    if (R <= 0) return OB_OK;
    int rpb = NN_THREADS / 32;
    softmax_bwd_kernel<<<(R + rpb - 1) / rpb, NN_THREADS, 0, cu_impl(dev)->stream>>>(dx, dy, y, R, L);
    OB_CU_LAUNCHED(e, "softmax_backward");
    return OB_OK;
}

/* ---- row gather / scatter ---------------------------------------------------------------------------- */

template <int GATHER>
static __global__ void rows_kernel(float *__restrict__ a, const float *__restrict__ b,
                                   const int32_t *__restrict__ idx, int C)
{
    int m = blockIdx.x;
    int64_t r = (int64_t)idx[m] * C, o = (int64_t)m * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        if (GATHER)
            a[o + c] = b[r + c];          /* out[m] = inp[idx[m]] */
        else
            a[r + c] = __fadd_rn(a[r + c], b[o + c]); /* dinp[idx[m]] += dout[m] */
    }
}

static ob_status cu_rows_gather(ob_device *dev, float *out, const float *inp, const int32_t *idx, int M, int C,
                                ob_err *e)
{
    if (M <= 0) return OB_OK;
    rows_kernel<1><<<M, 128, 0, cu_impl(dev)->stream>>>(out, inp, idx, C);
    OB_CU_LAUNCHED(e, "rows_gather");
    return OB_OK;
}

static ob_status cu_rows_scatter_add(ob_device *dev, float *dinp, const float *dout, const int32_t *idx, int M,
                                     int C, ob_err *e)
{
    if (M <= 0) return OB_OK;
    rows_kernel<0><<<M, 128, 0, cu_impl(dev)->stream>>>(dinp, dout, idx, C);
    OB_CU_LAUNCHED(e, "rows_scatter_add");
    return OB_OK;
}

/* ---- softmax cross-entropy: one block per row ------------------------------------------------------------ */

#define XENT_THREADS 256

static __global__ void __launch_bounds__(XENT_THREADS)
    xent_fwd_kernel(float *probs, float *__restrict__ losses, const float *logits, const int32_t *__restrict__ targets,
                    int V, float *__restrict__ hit)
{
    __shared__ float smx[XENT_THREADS / 32];
    __shared__ int sarg[XENT_THREADS / 32];
    __shared__ float s_mx;
    __shared__ int s_arg;
    __shared__ double s_sum, ssum[XENT_THREADS / 32];
    int m = blockIdx.x, tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const float *l = logits + (int64_t)m * V;
    float *p = probs + (int64_t)m * V;
    /* max and the first argmax (NaN never wins, as on the CPU) */
    float mx = -INFINITY;
    int arg = V; /* "none" */
    for (int v = tid; v < V; v += XENT_THREADS)
        if (l[v] > mx) {
            mx = l[v];
            arg = v;
        }
    for (int o = 16; o > 0; o >>= 1) {
        float om = __shfl_down_sync(0xffffffffu, mx, o);
        int oa = __shfl_down_sync(0xffffffffu, arg, o);
        if (om > mx || (om == mx && oa < arg)) {
            mx = om;
            arg = oa;
        }
    }
    if (lane == 0) {
        smx[w] = mx;
        sarg[w] = arg;
    }
    __syncthreads();
    if (tid == 0) {
        for (int k = 1; k < XENT_THREADS / 32; k++)
            if (smx[k] > mx || (smx[k] == mx && sarg[k] < arg)) {
                mx = smx[k];
                arg = sarg[k];
            }
        s_mx = mx;
        s_arg = arg < V ? arg : 0;
    }
    __syncthreads();
    mx = s_mx;
    const int t = targets[m];
    const float lt = l[t];
    __syncthreads(); /* every thread has read l[t] before p (which may alias l) is written */
    /* the normalizer in double: each thread its own columns in order, then a
     * fixed tree (warps, then the block's warps in order); as the CPU's
     * column-order double sum to within double rounding */
    double s = 0.0;
    for (int v = tid; v < V; v += XENT_THREADS) {
        float ev = nn_expf(__fsub_rn(l[v], mx));
        p[v] = ev;
        s = __dadd_rn(s, (double)ev);
    }
    for (int o = 16; o > 0; o >>= 1) s = __dadd_rn(s, __shfl_down_sync(0xffffffffu, s, o));
    if (lane == 0) ssum[w] = s;
    __syncthreads();
    if (tid == 0) {
        s = 0.0;
        for (int k = 0; k < XENT_THREADS / 32; k++) s = __dadd_rn(s, ssum[k]);
        s_sum = s;
        losses[m] = (float)__dsub_rn(log(s), (double)__fsub_rn(lt, mx));
        if (hit) hit[m] = s_arg == t ? 1.0f : 0.0f;
    }
    __syncthreads();
    float inv = (float)__ddiv_rn(1.0, s_sum);
    for (int v = tid; v < V; v += XENT_THREADS) p[v] = __fmul_rn(p[v], inv);
}

/* The mean loss and the hit count, in double, in row order (one thread, as the CPU). */
static __global__ void xent_mean_kernel(const float *__restrict__ losses, const float *__restrict__ hit, int M,
                                        float *loss, float *correct)
{
    double s = 0.0, c = 0.0;
    for (int m = 0; m < M; m++) {
        s = __dadd_rn(s, (double)losses[m]);
        if (hit) c = __dadd_rn(c, (double)hit[m]);
    }
    *loss = M > 0 ? (float)__ddiv_rn(s, (double)M) : 0.0f;
    if (correct) *correct = (float)c;
}

static ob_status cu_xent_forward(ob_device *dev, float *probs, float *losses, const float *logits,
                                 const int32_t *targets, int M, int V, float *loss, float *correct, ob_err *e)
{
    cudaStream_t s = cu_impl(dev)->stream;
    float *hit = NULL;
    if (correct && M > 0) OB_TRY(ob_cu_scratch(dev, (size_t)M * sizeof(float), (void **)&hit, e));
    if (M > 0) {
        xent_fwd_kernel<<<M, XENT_THREADS, 0, s>>>(probs, losses, logits, targets, V, hit);
        OB_CU_LAUNCHED(e, "xent_forward");
    }
    xent_mean_kernel<<<1, 1, 0, s>>>(losses, hit, M, loss, correct);
    OB_CU_LAUNCHED(e, "xent_forward");
    return OB_OK;
}

static __global__ void xent_bwd_kernel(float *dlogits, const float *probs, const int32_t *__restrict__ targets,
                                       int64_t total, int V, float scale)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int64_t m = i / V;
        int v = (int)(i % V);
        float d = __fmul_rn(probs[i], scale);
        if (v == targets[m]) d = __fsub_rn(d, scale);
        dlogits[i] = d;
    }
}

static ob_status cu_xent_backward(ob_device *dev, float *dlogits, const float *probs, const int32_t *targets,
                                  int M, int V, float scale, ob_err *e)
{
    int64_t total = (int64_t)M * V;
    if (total <= 0) return OB_OK;
    xent_bwd_kernel<<<cu_grid(dev, total, NN_THREADS), NN_THREADS, 0, cu_impl(dev)->stream>>>(dlogits, probs,
                                                                                              targets, total, V, scale);
    OB_CU_LAUNCHED(e, "xent_backward");
    return OB_OK;
}

/* ---- into the table ------------------------------------------------------------------------------------------ */

void ob_cu_fill_nn_ops(ob_backend_ops *o)
{
    o->embedding_forward = cu_embedding_forward;
    o->embedding_backward = cu_embedding_backward;
    o->layernorm_forward = cu_layernorm_forward;
    o->layernorm_backward = cu_layernorm_backward;
    o->bias_add = cu_bias_add;
    o->bias_backward = cu_bias_backward;
    o->gelu_forward = cu_gelu_forward;
    o->gelu_backward = cu_gelu_backward;
    o->heads_split = cu_heads_split;
    o->heads_merge = cu_heads_merge;
    o->softmax_forward = cu_softmax_forward;
    o->softmax_backward = cu_softmax_backward;
    o->rows_gather = cu_rows_gather;
    o->rows_scatter_add = cu_rows_scatter_add;
    o->xent_forward = cu_xent_forward;
    o->xent_backward = cu_xent_backward;
}
