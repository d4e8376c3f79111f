/* kernels/cuda/matrix_cuda.cu - ops of the matrix optimizers (Muon, ROOT) and
 * of the orthogonalization study on the GPU: per-matrix normalization, the
 * q-quantile of |x| by radix selection, clamping at a per-matrix threshold,
 * the exact polar factor through cuSOLVER's SVD (in double), and SOAP's
 * eigenbasis ops: the axis swap, symmetric eigenvectors (syevd), the
 * Householder QR basis (geqrf + orgqr) and the order of the estimated
 * eigenvalues (in float, sums in double); and Adafactor's factored second
 * moments: row and column sums of squares (in double, in the CPU's order), the
 * factored preconditioning and the per-tensor step scale (one thread).
 *
 * Batched ops see x as (batch, stride) with n live floats per row; a launch
 * covers every matrix of the batch (grid.y = matrix, grid.x = chunks of it).
 *
 * The quantile is a selection, never a sort: non-negative floats order like
 * their bit patterns read as unsigned integers, so the k-th smallest |x| is
 * found one byte at a time, most significant first (4 passes of a 256-bin
 * histogram over the keys that match the prefix found so far). The next order
 * statistic for numpy's linear interpolation comes from the tie count of the
 * last pass or, failing that, one pass of atomicMin over the keys above.
 * Integer atomics give the same result in any order: bitwise repeatable.
 */
#include <math.h>
#include <string.h>

#include "core/bf16.h"
#include "kernels/cuda/cuda_common.cuh"

#define MX_THREADS 256

/* Chunks (blocks) per matrix: a function of n alone, so reductions repeat bitwise. */
static int mx_chunks(int64_t n, int cap)
{
    int64_t c = (n + MX_THREADS * 16 - 1) / (MX_THREADS * 16);
    if (c < 1) c = 1;
    if (c > cap) c = cap;
    return (int)c;
}

static ob_status mx_check(int batch, int64_t n, const char *op, ob_err *e)
{
    if (batch < 0 || n < 0 || batch > 65535)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda %s: batch %d, n %lld out of range", op, batch,
                                (long long)n);
    return OB_OK;
}

/* ---- batched_normalize ----------------------------------------------------------- */

#define NORM_MAX_CHUNKS 128

/* part[b * nc + chunk] = sum of x_b^2 over the chunk's elements (double). */
static __global__ void __launch_bounds__(MX_THREADS)
    norm_partial_kernel(const float *__restrict__ x, int64_t n, int64_t stride, int bf16, double *__restrict__ part)
{
    const float *xb = x + (int64_t)blockIdx.y * stride;
    double a = 0.0, unused = 0.0;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step) {
        double v = bf16 ? ob_bf16_round(xb[i]) : xb[i];
        a += v * v;
    }
    cu_block_sum2(a, unused);
    if (threadIdx.x == 0) part[(int64_t)blockIdx.y * gridDim.x + blockIdx.x] = a;
}

static __global__ void __launch_bounds__(MX_THREADS)
    norm_scale_kernel(float *__restrict__ x, int64_t n, int64_t stride, const double *__restrict__ part,
                      int nc, float eps, int flags)
{
    __shared__ float d_s, inv_s;
    const int bf16 = (flags & OB_NORM_BF16) != 0;
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int c = 0; c < nc; c++) s += part[(int64_t)blockIdx.y * nc + c];
        float norm = (float)sqrt(s);
        if (bf16) norm = ob_bf16_round(norm);
        float d = (flags & OB_NORM_ADD_EPS) ? __fadd_rn(norm, eps) : (norm > eps ? norm : eps);
        if (bf16) d = ob_bf16_round(d);
        d_s = d;
        inv_s = __fdiv_rn(1.0f, d);
    }
    __syncthreads();
    const float d = d_s, inv = inv_s;
    float *xb = x + (int64_t)blockIdx.y * stride;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    if (bf16) /* as the CPU: x rounded, then x / d rounded */
        for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step)
            xb[i] = ob_bf16_round(__fdiv_rn(ob_bf16_round(xb[i]), d));
    else
        for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step)
            xb[i] = __fmul_rn(xb[i], inv);
}

/* out[b] = the chunks' sums of x_b^2 added in chunk order, as float. */
static __global__ void sumsq_finish_kernel(const double *__restrict__ part, int batch, int nc, float *__restrict__ out)
{
    for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < batch; b += gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int c = 0; c < nc; c++) s += part[(int64_t)b * nc + c];
        out[b] = (float)s;
    }
}

/* The first pass of both ops below: *nc chunk sums of x_b^2 per b in *part
 * (scratch). batch > 0. */
static ob_status norm_partials(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride, int bf16,
                               const char *op, double **part, int *nc, ob_err *e)
{
    *nc = mx_chunks(n, NORM_MAX_CHUNKS);
    OB_TRY(ob_cu_scratch(dev, (size_t)batch * *nc * sizeof(double), (void **)part, e));
    norm_partial_kernel<<<dim3((unsigned)*nc, (unsigned)batch), MX_THREADS, 0, cu_impl(dev)->stream>>>(
        x, n, stride, bf16, *part);
    OB_CU_LAUNCHED(e, op);
    return OB_OK;
}

ob_status ob_cu_batched_sumsq(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride, float *out,
                              ob_err *e)
{
    OB_TRY(mx_check(batch, n, "batched_sumsq", e));
    if (batch == 0) return OB_OK;
    double *part;
    int nc;
    OB_TRY(norm_partials(dev, x, batch, n, stride, 0, "batched_sumsq", &part, &nc, e));
    sumsq_finish_kernel<<<(unsigned)((batch + 127) / 128), 128, 0, cu_impl(dev)->stream>>>(part, batch, nc, out);
    OB_CU_LAUNCHED(e, "batched_sumsq");
    return OB_OK;
}

ob_status ob_cu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                  float eps, int flags, ob_err *e)
{
    OB_TRY(mx_check(batch, n, "batched_normalize", e));
    if (batch == 0) return OB_OK;
    double *part;
    int nc;
    OB_TRY(norm_partials(dev, x, batch, n, stride, (flags & OB_NORM_BF16) != 0, "batched_normalize", &part, &nc,
                         e));
    norm_scale_kernel<<<dim3((unsigned)nc, (unsigned)batch), MX_THREADS, 0, cu_impl(dev)->stream>>>(
        x, n, stride, part, nc, eps, flags);
    OB_CU_LAUNCHED(e, "batched_normalize");
    return OB_OK;
}

/* ---- abs_quantile: radix select over |x| bit patterns ------------------------------- */

#define QSEL_MAX_CHUNKS 64

typedef struct qsel_state {
    unsigned long long hist[256];
    unsigned long long k;   /* rank still sought among the keys matching prefix */
    unsigned long long eq;  /* keys equal to the final prefix (after the last pass) */
    unsigned int prefix;    /* bits of the answer found so far */
    unsigned int mask;      /* which bits of prefix are decided */
    unsigned int above;     /* smallest key > the answer (atomicMin) */
    unsigned int pad;
} qsel_state;

static __device__ __forceinline__ unsigned int abs_key(float v)
{
    return __float_as_uint(v) & 0x7fffffffu;
}

static __global__ void qsel_init_kernel(qsel_state *st, unsigned long long k)
{
    qsel_state *s = st + blockIdx.x;
    for (int i = threadIdx.x; i < 256; i += blockDim.x) s->hist[i] = 0;
    if (threadIdx.x == 0) {
        s->k = k;
        s->eq = 0;
        s->prefix = 0;
        s->mask = 0;
        s->above = 0xffffffffu;
    }
}

static __global__ void __launch_bounds__(MX_THREADS)
    qsel_hist_kernel(const float *__restrict__ x, int64_t n, int64_t stride, int shift, qsel_state *st)
{
    __shared__ unsigned int h[256];
    qsel_state *s = st + blockIdx.y;
    for (int i = threadIdx.x; i < 256; i += MX_THREADS) h[i] = 0;
    __syncthreads();
    const unsigned int prefix = s->prefix, mask = s->mask;
    const float *xb = x + (int64_t)blockIdx.y * stride;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step) {
        unsigned int key = abs_key(xb[i]);
        if ((key & mask) == prefix) atomicAdd(&h[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += MX_THREADS)
        if (h[i]) atomicAdd(&s->hist[i], (unsigned long long)h[i]);
}

/* One block per matrix: pick the byte holding rank k, narrow the prefix, clear the histogram. */
static __global__ void qsel_pick_kernel(qsel_state *st, int shift)
{
    qsel_state *s = st + blockIdx.x;
    if (threadIdx.x == 0) {
        unsigned long long k = s->k;
        int d = 0;
        while (d < 255 && k >= s->hist[d]) k -= s->hist[d++];
        s->eq = s->hist[d];
        s->k = k;
        s->prefix |= (unsigned int)d << shift;
        s->mask |= 255u << shift;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) s->hist[i] = 0;
}

static __global__ void __launch_bounds__(MX_THREADS)
    qsel_above_kernel(const float *__restrict__ x, int64_t n, int64_t stride, qsel_state *st)
{
    __shared__ unsigned int m[MX_THREADS / 32];
    qsel_state *s = st + blockIdx.y;
    const unsigned int v = s->prefix;
    unsigned int best = 0xffffffffu;
    const float *xb = x + (int64_t)blockIdx.y * stride;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step) {
        unsigned int key = abs_key(xb[i]);
        if (key > v && key < best) best = key;
    }
    for (int o = 16; o > 0; o >>= 1) best = min(best, __shfl_down_sync(0xffffffffu, best, o));
    if ((threadIdx.x & 31) == 0) m[threadIdx.x >> 5] = best;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < MX_THREADS / 32; w++) best = min(best, m[w]);
        if (best != 0xffffffffu) atomicMin(&s->above, best);
    }
}

static __global__ void qsel_final_kernel(const qsel_state *st, int batch, int interp, double frac,
                                         float *out)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch) return;
    const qsel_state *s = st + b;
    unsigned int vlo = s->prefix;
    if (!interp) {
        out[b] = __uint_as_float(vlo);
        return;
    }
    unsigned int vhi = s->k + 1 < s->eq ? vlo : s->above;
    double a = __uint_as_float(vlo), c = __uint_as_float(vhi);
    out[b] = (float)__dadd_rn(a, __dmul_rn(__dsub_rn(c, a), frac));
}

ob_status ob_cu_abs_quantile(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride,
                             double q, float *out, float *work, ob_err *e)
{
    (void)work; /* the selection needs no copy of the keys */
    OB_TRY(mx_check(batch, n, "abs_quantile", e));
    if (n <= 0 || !(q >= 0.0 && q <= 1.0))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda abs_quantile: n = %lld, q = %g", (long long)n, q);
    if (batch == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo > n - 1) lo = n - 1;
    double frac = pos - (double)lo;
    int interp = !(frac == 0.0 || lo + 1 >= n);
    qsel_state *st = NULL;
    OB_TRY(ob_cu_scratch(dev, (size_t)batch * sizeof(qsel_state), (void **)&st, e));
    int nc = mx_chunks(n, QSEL_MAX_CHUNKS);
    dim3 grid((unsigned)nc, (unsigned)batch);
    qsel_init_kernel<<<batch, 256, 0, c->stream>>>(st, (unsigned long long)lo);
    OB_CU_LAUNCHED(e, "abs_quantile");
    for (int shift = 24; shift >= 0; shift -= 8) {
        qsel_hist_kernel<<<grid, MX_THREADS, 0, c->stream>>>(x, n, stride, shift, st);
        OB_CU_LAUNCHED(e, "abs_quantile");
        qsel_pick_kernel<<<batch, 256, 0, c->stream>>>(st, shift);
        OB_CU_LAUNCHED(e, "abs_quantile");
    }
    if (interp) {
        qsel_above_kernel<<<grid, MX_THREADS, 0, c->stream>>>(x, n, stride, st);
        OB_CU_LAUNCHED(e, "abs_quantile");
    }
    qsel_final_kernel<<<(batch + 255) / 256, 256, 0, c->stream>>>(st, batch, interp, frac, out);
    OB_CU_LAUNCHED(e, "abs_quantile");
    return OB_OK;
}

/* ---- clamp_abs ------------------------------------------------------------------------ */

static __global__ void __launch_bounds__(MX_THREADS)
    clamp_abs_kernel(float *__restrict__ x, int64_t n, int64_t stride, const float *__restrict__ thr,
                     float add)
{
    const float t = __fadd_rn(thr[blockIdx.y], add);
    float *xb = x + (int64_t)blockIdx.y * stride;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step) {
        float v = xb[i];
        xb[i] = v > t ? t : (v < -t ? -t : v);
    }
}

ob_status ob_cu_clamp_abs(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                          const float *thr, float add, ob_err *e)
{
    OB_TRY(mx_check(batch, n, "clamp_abs", e));
    if (batch == 0 || n == 0) return OB_OK;
    dim3 grid((unsigned)mx_chunks(n, 1024), (unsigned)batch);
    clamp_abs_kernel<<<grid, MX_THREADS, 0, cu_impl(dev)->stream>>>(x, n, stride, thr, add);
    OB_CU_LAUNCHED(e, "clamp_abs");
    return OB_OK;
}

/* ---- svd_polar: cuSOLVER gesvd in double ------------------------------------------------ */

/* The tall column-major T (m x n, m >= n) whose SVD we take: A^T read in
 * place when cols >= rows, else A transposed. */
static __global__ void svd_load_kernel(const float *__restrict__ A, int rows, int cols, int transpose,
                                       double *__restrict__ T)
{
    int64_t total = (int64_t)rows * cols;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        if (!transpose) {
            T[idx] = A[idx];
        } else {
            int64_t i = idx / cols, j = idx % cols; /* A(i, j), row-major */
            T[i + j * (int64_t)rows] = A[idx];
        }
    }
}

static __global__ void svd_store_kernel(const double *__restrict__ Q, int rows, int cols, int transpose,
                                        float *__restrict__ q)
{
    int64_t total = (int64_t)rows * cols;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        if (!transpose) {
            q[idx] = (float)Q[idx];
        } else {
            int64_t i = idx / cols, j = idx % cols;
            q[idx] = (float)Q[i + j * (int64_t)rows];
        }
    }
}

static __global__ void svd_sv_kernel(const double *__restrict__ S, int k, float *__restrict__ s)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x) s[i] = (float)S[i];
}

typedef struct svd_bufs {
    double *T, *S, *U, *VT, *Q, *work, *rwork;
    int *info;
} svd_bufs;

static void svd_free(svd_bufs *b)
{
    double **all[] = {&b->T, &b->S, &b->U, &b->VT, &b->Q, &b->work, &b->rwork};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i]) (void)cudaFree(*all[i]);
    if (b->info) (void)cudaFree(b->info);
}

/* The device's cuSOLVER handle, created on first use. */
static ob_status cu_solver_make(ob_device *dev, const char *op, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    /* Kept only once it is bound to the device's stream: a handle left on the
     * default stream would not be ordered with our (non-blocking) stream. */
    cusolverDnHandle_t h = NULL;
    OB_CUSOLVER(e, op, cusolverDnCreate(&h));
    cusolverStatus_t st = cusolverDnSetStream(h, c->stream);
    if (st != CUSOLVER_STATUS_SUCCESS) {
        (void)cusolverDnDestroy(h);
        return ob_cusolver_fail(e, st, op, "cusolverDnSetStream(h, c->stream)", __FILE__, __LINE__);
    }
    c->solver = h;
    return OB_OK;
}

/* The solver handle, made on first use on dev's GPU (ob_cu_enter). */
static ob_status cu_solver(ob_device *dev, const char *op, ob_err *e)
{
    if (cu_impl(dev)->solver) return OB_OK;
    const int prev = ob_cu_enter(dev);
    ob_status s = cu_solver_make(dev, op, e);
    ob_cu_leave(dev, prev);
    return s;
}

static ob_status svd_run(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                         svd_bufs *b, ob_err *e)
{
    const char *op = "svd_polar";
    cuda_impl *c = cu_impl(dev);
    OB_TRY(cu_solver(dev, op, e));
    int transpose = cols < rows;
    int m = transpose ? rows : cols, n = transpose ? cols : rows; /* m >= n */
    size_t mn = (size_t)m * n;
    OB_CU(e, op, cudaMalloc((void **)&b->T, mn * sizeof(double)));
    OB_CU(e, op, cudaMalloc((void **)&b->S, (size_t)n * sizeof(double)));
    OB_CU(e, op, cudaMalloc((void **)&b->U, mn * sizeof(double)));
    OB_CU(e, op, cudaMalloc((void **)&b->VT, (size_t)n * n * sizeof(double)));
    OB_CU(e, op, cudaMalloc((void **)&b->rwork, (size_t)n * sizeof(double)));
    OB_CU(e, op, cudaMalloc((void **)&b->info, sizeof(int)));
    int lwork = 0;
    OB_CUSOLVER(e, op, cusolverDnDgesvd_bufferSize(c->solver, m, n, &lwork));
    OB_CU(e, op, cudaMalloc((void **)&b->work, (size_t)(lwork > 0 ? lwork : 1) * sizeof(double)));
    unsigned grid = cu_grid(dev, (int64_t)mn, 256);
    svd_load_kernel<<<grid, 256, 0, c->stream>>>(A, rows, cols, transpose, b->T);
    OB_CU_LAUNCHED(e, op);
    signed char job = 'S';
    OB_CUSOLVER(e, op,
                cusolverDnDgesvd(c->solver, job, job, m, n, b->T, m, b->S, b->U, m, b->VT, n, b->work,
                                 lwork, b->rwork, b->info));
    int info = 0;
    OB_CU(e, op, cudaMemcpyAsync(&info, b->info, sizeof info, cudaMemcpyDeviceToHost, c->stream));
    OB_CU(e, op, cudaStreamSynchronize(c->stream));
    if (info != 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_BACKEND,
                                "cuda svd_polar: cusolverDnDgesvd on a %dx%d matrix returned info %d%s",
                                rows, cols, info, info > 0 ? " (did not converge)" : "");
    svd_sv_kernel<<<1, 256, 0, c->stream>>>(b->S, n, s);
    OB_CU_LAUNCHED(e, op);
    if (q) {
        OB_CU(e, op, cudaMalloc((void **)&b->Q, mn * sizeof(double)));
        const double one = 1.0, zero = 0.0;
        /* Q_T (m x n) = U (m x n) VT (n x n), column-major */
        OB_CUBLAS(e, op,
                  cublasDgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, n, &one, b->U, m, b->VT, n, &zero,
                              b->Q, m));
        svd_store_kernel<<<grid, 256, 0, c->stream>>>(b->Q, rows, cols, transpose, q);
        OB_CU_LAUNCHED(e, op);
    }
    OB_CU(e, op, cudaStreamSynchronize(c->stream)); /* before the buffers are freed */
    return OB_OK;
}

ob_status ob_cu_svd_polar(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                          ob_err *e)
{
    if (rows <= 0 || cols <= 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda svd_polar: %dx%d matrix", rows, cols);
    svd_bufs b;
    memset(&b, 0, sizeof b);
    /* its buffers are allocated per call: on dev's GPU (ob_cu_enter) */
    const int prev = ob_cu_enter(dev);
    ob_status st = svd_run(dev, rows, cols, A, s, q, &b, e);
    if (st != OB_OK) (void)cudaStreamSynchronize(cu_impl(dev)->stream);
    svd_free(&b);
    ob_cu_leave(dev, prev);
    return st;
}

/* ---- eigenbases (SOAP) -------------------------------------------------------------------- */

/* swap01, B <= SWAP_TILE_B: 32 x 32 tiles of (a, i) pairs, each pair B floats.
 * A tile row src[a][i0 .. i0+32][0 .. B) and a tile column dst[i][a0 .. a0+32][0 .. B)
 * are both contiguous, so reads and writes are coalesced. */
#define SWAP_TILE 32
#define SWAP_TILE_B 8
#define SWAP_THREADS 256

static __global__ void __launch_bounds__(SWAP_THREADS)
    swap01_tiled_kernel(float *__restrict__ dst, const float *__restrict__ src, int64_t A, int64_t n, int B,
                        int64_t tiles_i, int64_t tiles)
{
    extern __shared__ float sh[];
    const int row = SWAP_TILE * B, pitch = row + 1; /* floats of one tile row (one a), padded */
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        int64_t a0 = (t / tiles_i) * SWAP_TILE, i0 = (t % tiles_i) * SWAP_TILE;
        int na = (int)(A - a0 < SWAP_TILE ? A - a0 : SWAP_TILE);
        int ni = (int)(n - i0 < SWAP_TILE ? n - i0 : SWAP_TILE);
        for (int idx = threadIdx.x; idx < SWAP_TILE * row; idx += SWAP_THREADS) {
            int al = idx / row, r = idx % row;
            if (al < na && r < ni * B) sh[al * pitch + r] = src[((a0 + al) * n + i0) * B + r];
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < SWAP_TILE * row; idx += SWAP_THREADS) {
            int il = idx / row, r = idx % row; /* r = al * B + b */
            if (il < ni && r < na * B) {
                int al = r / B, b = r % B;
                dst[((i0 + il) * A + a0) * B + r] = sh[al * pitch + il * B + b];
            }
        }
        __syncthreads();
    }
}

/* swap01, larger B: rows of B floats, read and written in order. */
static __global__ void swap01_rows_kernel(float *__restrict__ dst, const float *__restrict__ src, int64_t A,
                                          int64_t n, int64_t B)
{
    int64_t total = A * n * B;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        int64_t b = idx % B, ia = idx / B, a = ia % A, i = ia / A;
        dst[idx] = src[(a * n + i) * B + b];
    }
}

ob_status ob_cu_swap01(ob_device *dev, float *dst, const float *src, int64_t A, int64_t n, int64_t B,
                       ob_err *e)
{
    if (A < 0 || n < 0 || B < 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda swap01: shape (%lld, %lld, %lld)", (long long)A,
                                (long long)n, (long long)B);
    if (A == 0 || n == 0 || B == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    if (A == 1 || n == 1) { /* the same layout */
        OB_CU(e, "swap01",
              cudaMemcpyAsync(dst, src, (size_t)(A * n * B) * sizeof(float), cudaMemcpyDeviceToDevice, c->stream));
        return OB_OK;
    }
    if (B <= SWAP_TILE_B) {
        int64_t tiles_i = (n + SWAP_TILE - 1) / SWAP_TILE, tiles = tiles_i * ((A + SWAP_TILE - 1) / SWAP_TILE);
        size_t shmem = (size_t)SWAP_TILE * (SWAP_TILE * B + 1) * sizeof(float);
        unsigned grid = cu_grid(dev, tiles * SWAP_THREADS, SWAP_THREADS);
        swap01_tiled_kernel<<<grid, SWAP_THREADS, shmem, c->stream>>>(dst, src, A, n, (int)B, tiles_i, tiles);
    } else {
        swap01_rows_kernel<<<cu_grid(dev, A * n * B, 256), 256, 0, c->stream>>>(dst, src, A, n, B);
    }
    OB_CU_LAUNCHED(e, "swap01");
    return OB_OK;
}

/* The solvers' info word and, beside it, a flag the load of sym_eigvecs
 * raises on a non-finite entry: two ints of device memory, made once. */
static ob_status solve_info_make(ob_device *dev, const char *op, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    if (c->solve_info) return OB_OK;
    const int prev = ob_cu_enter(dev);
    cudaError_t err = cudaMalloc((void **)&c->solve_info, 2 * sizeof(int));
    ob_cu_leave(dev, prev);
    if (err != cudaSuccess) {
        c->solve_info = NULL;
        return ob_cu_fail(e, err, op, "cudaMalloc(solve_info)", __FILE__, __LINE__);
    }
    return OB_OK;
}

/* The solvers' workspace replaced by one of `bytes` (the old one freed once
 * the stream is done with it), on dev's GPU (current: ob_cu_enter). */
static ob_status solve_ws_grow(ob_device *dev, size_t bytes, const char *op, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    if (c->solve_ws) {
        OB_CU(e, op, cudaStreamSynchronize(c->stream));
        OB_CU(e, op, cudaFree(c->solve_ws));
        c->solve_ws = NULL;
        c->solve_ws_bytes = 0;
    }
    void *ws = NULL;
    OB_CU(e, op, cudaMalloc(&ws, bytes));
    c->solve_ws = (float *)ws;
    c->solve_ws_bytes = bytes;
    return OB_OK;
}

/* The solvers' workspace: lwork floats, then `extra` floats (tau or the
 * eigenvalues) at an aligned offset. Grows only (waiting for the stream before
 * the old one is freed); *work and *extra point into it. */
static ob_status solve_workspace(ob_device *dev, int lwork, int extra, float **work, float **tail,
                                 const char *op, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    size_t lw = ((size_t)(lwork > 0 ? lwork : 1) + 63) / 64 * 64;
    size_t bytes = (lw + (size_t)(extra > 0 ? extra : 1)) * sizeof(float);
    OB_TRY(solve_info_make(dev, op, e));
    if (bytes > c->solve_ws_bytes) {
        const int prev = ob_cu_enter(dev);
        ob_status s = solve_ws_grow(dev, bytes, op, e);
        ob_cu_leave(dev, prev);
        if (s != OB_OK) return s;
    }
    *work = c->solve_ws;
    *tail = c->solve_ws + lw;
    return OB_OK;
}

/* S = A + 1e-30 I */
static __global__ void eig_load_kernel(const float *__restrict__ A, int n, float *__restrict__ S,
                                       int *__restrict__ nonfinite)
{
    int64_t total = (int64_t)n * n;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        float v = A[idx];
        if (!isfinite(v)) *nonfinite = 1; /* every writer writes 1 */
        S[idx] = idx / n == idx % n ? __fadd_rn(v, 1e-30f) : v;
    }
}

/* Swap rows j and n-1-j of S (ascending eigenvalues -> descending). */
static __global__ void eig_reverse_kernel(float *__restrict__ S, int n)
{
    int64_t total = (int64_t)(n / 2) * n;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        int64_t j = idx / n, i = idx % n;
        float *r0 = S + j * n + i, *r1 = S + (n - 1 - j) * (int64_t)n + i;
        float t = *r0;
        *r0 = *r1;
        *r1 = t;
    }
}

ob_status ob_cu_sym_eigvecs(ob_device *dev, int n, const float *A, float *S, ob_err *e)
{
    const char *op = "sym_eigvecs";
    if (n < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda sym_eigvecs: n = %d", n);
    if (n == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    OB_TRY(cu_solver(dev, op, e));
    int64_t nn = (int64_t)n * n;
    OB_TRY(solve_info_make(dev, op, e));
    OB_CU(e, op, cudaMemsetAsync(c->solve_info + 1, 0, sizeof(int), c->stream));
    eig_load_kernel<<<cu_grid(dev, nn, 256), 256, 0, c->stream>>>(A, n, S, c->solve_info + 1);
    OB_CU_LAUNCHED(e, op);
    /* A non-finite entry: all NaN, the CPU's NaN bit for bit. The solver is
     * not called on it (what it does with a NaN is not documented). */
    int nonfinite = 0;
    OB_CU(e, op, cudaMemcpyAsync(&nonfinite, c->solve_info + 1, sizeof nonfinite, cudaMemcpyDeviceToHost,
                                 c->stream));
    OB_CU(e, op, cudaStreamSynchronize(c->stream));
    if (nonfinite) {
        return ob_cu_fill(dev, S, NAN, nn, e);
    }
    /* A symmetric: the row-major buffer read column-major is the same matrix. */
    const cusolverEigMode_t jobz = CUSOLVER_EIG_MODE_VECTOR;
    const cublasFillMode_t uplo = CUBLAS_FILL_MODE_UPPER;
    int lwork = 0;
    OB_CUSOLVER(e, op, cusolverDnSsyevd_bufferSize(c->solver, jobz, uplo, n, S, n, S, &lwork));
    float *work = NULL, *w = NULL;
    OB_TRY(solve_workspace(dev, lwork, n, &work, &w, op, e));
    OB_CUSOLVER(e, op, cusolverDnSsyevd(c->solver, jobz, uplo, n, S, n, w, work, lwork, c->solve_info));
    int info = 0;
    OB_CU(e, op, cudaMemcpyAsync(&info, c->solve_info, sizeof info, cudaMemcpyDeviceToHost, c->stream));
    OB_CU(e, op, cudaStreamSynchronize(c->stream));
    if (info != 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_BACKEND,
                                "cuda sym_eigvecs: cusolverDnSsyevd on a %dx%d matrix returned info %d%s", n, n,
                                info, info > 0 ? " (did not converge)" : "");
    /* Column j of the column-major result (row j of S): the j-th smallest eigenvalue. */
    if (n > 1) {
        eig_reverse_kernel<<<cu_grid(dev, (int64_t)(n / 2) * n, 256), 256, 0, c->stream>>>(S, n);
        OB_CU_LAUNCHED(e, op);
    }
    return OB_OK;
}

ob_status ob_cu_qr_orth(ob_device *dev, int n, const float *W, float *S, ob_err *e)
{
    const char *op = "qr_orth";
    if (n < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda qr_orth: n = %d", n);
    if (n == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    OB_TRY(cu_solver(dev, op, e));
    /* W is M column-major; the column-major Q left in S is the row-major S wanted. */
    OB_CU(e, op, cudaMemcpyAsync(S, W, (size_t)n * n * sizeof(float), cudaMemcpyDeviceToDevice, c->stream));
    int lw_qr = 0, lw_q = 0;
    OB_CUSOLVER(e, op, cusolverDnSgeqrf_bufferSize(c->solver, n, n, S, n, &lw_qr));
    OB_CUSOLVER(e, op, cusolverDnSorgqr_bufferSize(c->solver, n, n, n, S, n, S, &lw_q));
    int lwork = lw_qr > lw_q ? lw_qr : lw_q;
    float *work = NULL, *tau = NULL;
    OB_TRY(solve_workspace(dev, lwork, n, &work, &tau, op, e));
    /* devInfo is not read back: no host synchronization (the arguments are valid by construction). */
    OB_CUSOLVER(e, op, cusolverDnSgeqrf(c->solver, n, n, S, n, tau, work, lwork, c->solve_info));
    OB_CUSOLVER(e, op, cusolverDnSorgqr(c->solver, n, n, n, S, n, tau, work, lwork, c->solve_info));
    return OB_OK;
}

/* eig_order, first pass: est[j] = sum_i S[j][i] * T[j][i] in double, i
 * ascending (the CPU's order, so both backends get the same bits). A block
 * owns EST_ROWS rows; tiles of EST_COLS columns are read coalesced into shared
 * memory as exact double products, then one thread per row adds its row of the
 * tile in order. */
#define EST_ROWS 32
#define EST_COLS 128
#define EST_THREADS 256

static __global__ void __launch_bounds__(EST_THREADS)
    eig_est_kernel(const float *__restrict__ S, const float *__restrict__ T, int n, double *__restrict__ est)
{
    __shared__ double p[EST_ROWS][EST_COLS + 1];
    const int64_t j0 = (int64_t)blockIdx.x * EST_ROWS;
    double acc = 0.0;
    for (int c0 = 0; c0 < n; c0 += EST_COLS) {
        int nc = n - c0 < EST_COLS ? n - c0 : EST_COLS;
        for (int idx = threadIdx.x; idx < EST_ROWS * EST_COLS; idx += EST_THREADS) {
            int r = idx / EST_COLS, cc = idx % EST_COLS;
            int64_t j = j0 + r;
            if (j < n && cc < nc) {
                int64_t at = j * n + c0 + cc;
                p[r][cc] = __dmul_rn((double)S[at], (double)T[at]); /* exact */
            }
        }
        __syncthreads();
        if (threadIdx.x < EST_ROWS && j0 + threadIdx.x < n)
            for (int cc = 0; cc < nc; cc++) acc = __dadd_rn(acc, p[threadIdx.x][cc]);
        __syncthreads();
    }
    if (threadIdx.x < EST_ROWS && j0 + threadIdx.x < n) est[j0 + threadIdx.x] = acc;
}

/* Does (a, ia) rank before (b, ib)? Larger first, NaN below every number, ties by index. */
static __device__ __forceinline__ bool eig_before(double a, int ia, double b, int ib)
{
    bool na = isnan(a), nb = isnan(b);
    if (na != nb) return nb;
    if (!na && a != b) return a > b;
    return ia < ib;
}

#define RANK_THREADS 256

/* Second pass: rank(j) = #{i ranking before j}; perm[rank(j)] = j. A strict
 * total order, so the ranks are a permutation whatever the values. */
static __global__ void __launch_bounds__(RANK_THREADS)
    eig_rank_kernel(const double *__restrict__ est, int n, int32_t *__restrict__ perm)
{
    __shared__ double tile[RANK_THREADS];
    int j = blockIdx.x * RANK_THREADS + threadIdx.x;
    double kj = j < n ? est[j] : 0.0;
    int rank = 0;
    for (int i0 = 0; i0 < n; i0 += RANK_THREADS) {
        if (i0 + (int)threadIdx.x < n) tile[threadIdx.x] = est[i0 + threadIdx.x];
        __syncthreads();
        int m = n - i0 < RANK_THREADS ? n - i0 : RANK_THREADS;
        for (int k = 0; k < m; k++) rank += eig_before(tile[k], i0 + k, kj, j);
        __syncthreads();
    }
    if (j < n) perm[rank] = j;
}

ob_status ob_cu_eig_order(ob_device *dev, int n, const float *S, const float *T, int32_t *perm, ob_err *e)
{
    const char *op = "eig_order";
    if (n < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda eig_order: n = %d", n);
    if (n == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    double *est = NULL;
    OB_TRY(ob_cu_scratch(dev, (size_t)n * sizeof(double), (void **)&est, e));
    eig_est_kernel<<<(unsigned)((n + EST_ROWS - 1) / EST_ROWS), EST_THREADS, 0, c->stream>>>(S, T, n, est);
    OB_CU_LAUNCHED(e, op);
    eig_rank_kernel<<<(unsigned)((n + RANK_THREADS - 1) / RANK_THREADS), RANK_THREADS, 0, c->stream>>>(est, n,
                                                                                                     perm);
    OB_CU_LAUNCHED(e, op);
    return OB_OK;
}

/* ---- Adafactor (factored second moments) ------------------------------------------------------ */

/* All sizes non-negative and batch * rows * cols (every product indexed with) in int64. */
static bool ada_shape_ok(int64_t batch, int64_t rows, int64_t cols)
{
    if (batch < 0 || rows < 0 || cols < 0) return false;
    if (rows > 0 && cols > INT64_MAX / rows) return false;
    int64_t rc = rows * cols;
    return rc == 0 || batch <= INT64_MAX / rc;
}

/* rows_sumsq: the tiles of eig_order's first pass. A block owns EST_ROWS rows;
 * tiles of EST_COLS columns are read coalesced into shared memory as exact
 * double squares, then one thread per row adds its row of the tile in order
 * (c ascending, the CPU's order). */
static __global__ void __launch_bounds__(EST_THREADS)
    rows_sumsq_kernel(const float *__restrict__ x, int64_t rows, int64_t cols, float alpha, float *__restrict__ out)
{
    __shared__ double p[EST_ROWS][EST_COLS + 1];
    const int64_t nblk = (rows + EST_ROWS - 1) / EST_ROWS;
    for (int64_t rb = blockIdx.x; rb < nblk; rb += gridDim.x) {
        const int64_t r0 = rb * EST_ROWS;
        double acc = 0.0;
        for (int64_t c0 = 0; c0 < cols; c0 += EST_COLS) {
            int nc = (int)(cols - c0 < EST_COLS ? cols - c0 : EST_COLS);
            for (int idx = threadIdx.x; idx < EST_ROWS * EST_COLS; idx += EST_THREADS) {
                int r = idx / EST_COLS, cc = idx % EST_COLS;
                if (r0 + r < rows && cc < nc) {
                    double v = (double)x[(r0 + r) * cols + c0 + cc];
                    p[r][cc] = __dmul_rn(v, v); /* exact */
                }
            }
            __syncthreads();
            if (threadIdx.x < EST_ROWS && r0 + threadIdx.x < rows)
                for (int cc = 0; cc < nc; cc++) acc = __dadd_rn(acc, p[threadIdx.x][cc]);
            __syncthreads();
        }
        if (threadIdx.x < EST_ROWS && r0 + threadIdx.x < rows)
            out[r0 + threadIdx.x] = (float)__dmul_rn((double)alpha, acc);
    }
}

ob_status ob_cu_rows_sumsq(ob_device *dev, const float *x, int64_t rows, int64_t cols, float alpha, float *out,
                           ob_err *e)
{
    if (!ada_shape_ok(1, rows, cols))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda rows_sumsq: shape (%lld, %lld)", (long long)rows,
                                (long long)cols);
    if (rows == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    const int64_t nblk = (rows + EST_ROWS - 1) / EST_ROWS;
    rows_sumsq_kernel<<<cu_grid(dev, nblk * EST_THREADS, EST_THREADS), EST_THREADS, 0, c->stream>>>(x, rows, cols,
                                                                                                    alpha, out);
    OB_CU_LAUNCHED(e, "rows_sumsq");
    return OB_OK;
}

/* cols_sumsq in two passes, in the CPU's order. First one thread per
 * (b, block of OB_SUMSQ_ROW_BLOCK rows, c), consecutive threads on
 * consecutive c (coalesced reads), each summing its block of the column in
 * ascending r into part; then one thread per (b, c) adding its column's
 * block sums in order. A 30522 x 768 embedding is 768 columns: one thread
 * per column would leave most of a GPU idle and wait a memory latency per
 * row; its 477 blocks per column give 366k threads. */
static __global__ void cols_part_kernel(const float *__restrict__ x, int64_t batch, int64_t rows, int64_t cols,
                                        int64_t nrb, double *__restrict__ part)
{
    const int64_t total = batch * nrb * cols;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        const int64_t c = idx % cols, t = idx / cols, rb = t % nrb, b = t / nrb;
        const int64_t r0 = rb * OB_SUMSQ_ROW_BLOCK;
        const int64_t r1 = rows - r0 < OB_SUMSQ_ROW_BLOCK ? rows : r0 + OB_SUMSQ_ROW_BLOCK;
        const float *xc = x + b * rows * cols + c;
        double acc = 0.0;
#pragma unroll 8
        for (int64_t r = r0; r < r1; r++) {
            double v = (double)xc[r * cols];
            acc = __dadd_rn(acc, __dmul_rn(v, v));
        }
        part[idx] = acc; /* part[(b * nrb + rb) * cols + c] */
    }
}

static __global__ void cols_sumsq_kernel(const double *__restrict__ part, int64_t batch, int64_t nrb, int64_t cols,
                                         float alpha, float *__restrict__ out)
{
    const int64_t total = batch * cols;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        const int64_t b = idx / cols, c = idx % cols;
        const double *pc = part + b * nrb * cols + c;
        double acc = 0.0;
#pragma unroll 8
        for (int64_t rb = 0; rb < nrb; rb++) acc = __dadd_rn(acc, pc[rb * cols]);
        out[idx] = (float)__dmul_rn((double)alpha, acc);
    }
}

ob_status ob_cu_cols_sumsq(ob_device *dev, const float *x, int64_t batch, int64_t rows, int64_t cols, float alpha,
                           float *out, ob_err *e)
{
    if (!ada_shape_ok(batch, rows, cols))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda cols_sumsq: shape (%lld, %lld, %lld)", (long long)batch,
                                (long long)rows, (long long)cols);
    if (batch == 0 || cols == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    const int64_t nrb = (rows + OB_SUMSQ_ROW_BLOCK - 1) / OB_SUMSQ_ROW_BLOCK;
    double *part = NULL;
    if (nrb > 0) {
        OB_TRY(ob_cu_scratch(dev, (size_t)(batch * nrb * cols) * sizeof(double), (void **)&part, e));
        cols_part_kernel<<<cu_grid(dev, batch * nrb * cols, 256), 256, 0, c->stream>>>(x, batch, rows, cols, nrb,
                                                                                      part);
        OB_CU_LAUNCHED(e, "cols_sumsq (block sums)");
    }
    cols_sumsq_kernel<<<cu_grid(dev, batch * cols, 256), 256, 0, c->stream>>>(part, batch, nrb, cols, alpha, out);
    OB_CU_LAUNCHED(e, "cols_sumsq");
    return OB_OK;
}

/* adafactor_precond, first pass: m[b] = max((float)(sum_r row[b][r]) / rows,
 * eps1), the sum in double, r ascending (the CPU's order, so the same bits);
 * one warp per b. The sum is one chain of additions, but the warp loads 32
 * consecutive values at once (the next 32 while it adds these) and hands
 * them to the chain by shuffles, instead of one thread waiting on each load
 * in turn (30522 rows for bert-base's embedding). Every lane keeps the same
 * sum, so the warp never diverges. The clamps propagate NaN, as torch's
 * clamp_(min=...) does (and the CPU). */
static __global__ void ada_mean_kernel(const float *__restrict__ row, int64_t batch, int64_t rows, float eps1,
                                       float *__restrict__ m)
{
    const int lane = threadIdx.x & 31;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t b = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; b < batch; b += warps) {
        const float *rb = row + b * rows;
        double s = 0.0;
        float next = lane < rows ? rb[lane] : 0.0f;
        for (int64_t r0 = 0; r0 < rows; r0 += 32) {
            const float cur = next;
            next = r0 + 32 + lane < rows ? rb[r0 + 32 + lane] : 0.0f;
            const int nk = rows - r0 < 32 ? (int)(rows - r0) : 32; /* the same in every lane */
            for (int k = 0; k < nk; k++) s = __dadd_rn(s, (double)__shfl_sync(0xffffffffu, cur, k));
        }
        if (lane == 0) {
            const float mb = __fdiv_rn((float)s, (float)rows);
            m[b] = mb < eps1 ? eps1 : mb;
        }
    }
}

/* Second pass, one thread per element: the float operations of the CPU, each
 * rounded on its own (no contraction, no approximate division or sqrt).
 * Indices in I: 32-bit where the tensor allows, as a 64-bit division is a
 * long sequence of instructions on the GPU and this kernel does two per
 * element. */
template <typename I>
static __global__ void ada_precond_kernel(const float *__restrict__ g, const float *__restrict__ row,
                                          const float *__restrict__ col, const float *__restrict__ m, I rows,
                                          I cols, I total, float eps1sq, float *__restrict__ u)
{
    const I step = (I)gridDim.x * blockDim.x;
    for (I idx = (I)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        const I c = idx % cols, br = idx / cols, b = br / rows;
        float v = __fmul_rn(row[br], col[b * cols + c]);
        v = __fdiv_rn(v, m[b]);
        v = v < eps1sq ? eps1sq : v;
        u[idx] = __fmul_rn(g[idx], __fdiv_rn(1.0f, __fsqrt_rn(v)));
    }
}

ob_status ob_cu_adafactor_precond(ob_device *dev, const float *g, const float *row, const float *col,
                                  int64_t batch, int64_t rows, int64_t cols, float eps1, float *u, ob_err *e)
{
    const char *op = "adafactor_precond";
    if (!ada_shape_ok(batch, rows, cols))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda adafactor_precond: shape (%lld, %lld, %lld)",
                                (long long)batch, (long long)rows, (long long)cols);
    if (batch == 0 || rows == 0 || cols == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    float *m = NULL;
    OB_TRY(ob_cu_scratch(dev, (size_t)batch * sizeof(float), (void **)&m, e));
    ada_mean_kernel<<<cu_grid(dev, batch * 32, 128), 128, 0, c->stream>>>(row, batch, rows, eps1, m); /* a warp per b */
    OB_CU_LAUNCHED(e, op);
    const int64_t total = batch * rows * cols;
    const float eps1sq = eps1 * eps1; /* on the host, as the CPU computes it */
    const unsigned blocks = cu_grid(dev, total, 256);
    if (total + (int64_t)blocks * 256 <= INT32_MAX) /* idx + step stays in range */
        ada_precond_kernel<int32_t><<<blocks, 256, 0, c->stream>>>(g, row, col, m, (int32_t)rows, (int32_t)cols,
                                                                   (int32_t)total, eps1sq, u);
    else
        ada_precond_kernel<int64_t><<<blocks, 256, 0, c->stream>>>(g, row, col, m, rows, cols, total, eps1sq, u);
    OB_CU_LAUNCHED(e, op);
    return OB_OK;
}

/* ob_adafactor_scale, one thread per tensor: no FMA can form (it
 * multiplies and divides, never adds a product), and double sqrt and
 * division are IEEE. */
static __global__ void ada_scale_kernel(const ob_rule_step *src, const float *sq, int count, long long numel,
                                        float d, ob_rule_step *dst)
{
    for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < count; b += gridDim.x * blockDim.x) {
        const float two[2] = {sq[b], sq[count + b]};
        ob_adafactor_scale(src, two, numel, d, &dst[b]);
    }
}

ob_status ob_cu_adafactor_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count, int64_t numel,
                                float d, ob_rule_step *dst, ob_err *e)
{
    if (numel < 0 || count < 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda adafactor_scale: %d tensors of %lld", count,
                                (long long)numel);
    if (count == 0) return OB_OK;
    ada_scale_kernel<<<(unsigned)((count + 127) / 128), 128, 0, cu_impl(dev)->stream>>>(src, sq, count,
                                                                                       (long long)numel, d, dst);
    OB_CU_LAUNCHED(e, "adafactor_scale");
    return OB_OK;
}

/* ob_trust_scale, one thread per tensor (the same arithmetic as the CPU:
 * double sqrt, float divisions and products; LARS's one sum of a product in
 * double, where an FMA changes at most the last bits before rounding to
 * float). The clip scale is read from the device statistics. */
static __global__ void trust_scale_kernel(const ob_rule_step *src, const float *sq, int count, ob_trust t,
                                          const ob_step_stats *st, ob_rule_step *dst)
{
    const float clip_scale = st ? st->clip_scale : 1.0f;
    for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < count; b += gridDim.x * blockDim.x) {
        const float two[2] = {sq[b], sq[count + b]};
        ob_trust_scale(src, two, &t, clip_scale, &dst[b]);
    }
}

ob_status ob_cu_trust_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count,
                            const ob_trust *t, const ob_step_stats *st, ob_rule_step *dst, ob_err *e)
{
    if (count < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda trust_scale: %d tensors", count);
    if (count == 0) return OB_OK;
    trust_scale_kernel<<<(unsigned)((count + 127) / 128), 128, 0, cu_impl(dev)->stream>>>(src, sq, count, *t, st,
                                                                                          dst);
    OB_CU_LAUNCHED(e, "trust_scale");
    return OB_OK;
}
