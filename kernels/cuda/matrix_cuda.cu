/* kernels/cuda/matrix_cuda.cu - ops of the matrix optimizers (Muon, ROOT) and
 * of the orthogonalization study on the GPU: per-matrix normalization, the
 * q-quantile of |x| by radix selection, clamping at a per-matrix threshold,
 * and the exact polar factor through cuSOLVER's SVD (in double).
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
    norm_partial_kernel(const float *__restrict__ x, int64_t n, int64_t stride, double *__restrict__ part)
{
    const float *xb = x + (int64_t)blockIdx.y * stride;
    double a = 0.0, unused = 0.0;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step) {
        double v = xb[i];
        a += v * v;
    }
    cu_block_sum2(a, unused);
    if (threadIdx.x == 0) part[(int64_t)blockIdx.y * gridDim.x + blockIdx.x] = a;
}

static __global__ void __launch_bounds__(MX_THREADS)
    norm_scale_kernel(float *__restrict__ x, int64_t n, int64_t stride, const double *__restrict__ part,
                      int nc, float eps, int add_eps)
{
    __shared__ float inv_s;
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int c = 0; c < nc; c++) s += part[(int64_t)blockIdx.y * nc + c];
        float norm = (float)sqrt(s);
        float d = add_eps ? __fadd_rn(norm, eps) : (norm > eps ? norm : eps);
        inv_s = __fdiv_rn(1.0f, d);
    }
    __syncthreads();
    const float inv = inv_s;
    float *xb = x + (int64_t)blockIdx.y * stride;
    int64_t step = (int64_t)gridDim.x * MX_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * MX_THREADS + threadIdx.x; i < n; i += step)
        xb[i] = __fmul_rn(xb[i], inv);
}

ob_status ob_cu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                  float eps, int add_eps, ob_err *e)
{
    OB_TRY(mx_check(batch, n, "batched_normalize", e));
    if (batch == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    int nc = mx_chunks(n, NORM_MAX_CHUNKS);
    double *part = NULL;
    OB_TRY(ob_cu_scratch(dev, (size_t)batch * nc * sizeof(double), (void **)&part, e));
    dim3 grid((unsigned)nc, (unsigned)batch);
    norm_partial_kernel<<<grid, MX_THREADS, 0, c->stream>>>(x, n, stride, part);
    OB_CU_LAUNCHED(e, "batched_normalize");
    norm_scale_kernel<<<grid, MX_THREADS, 0, c->stream>>>(x, n, stride, part, nc, eps, add_eps);
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

static ob_status svd_run(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                         svd_bufs *b, ob_err *e)
{
    const char *op = "svd_polar";
    cuda_impl *c = cu_impl(dev);
    if (!c->solver) {
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
    }
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
    ob_status st = svd_run(dev, rows, cols, A, s, q, &b, e);
    if (st != OB_OK) (void)cudaStreamSynchronize(cu_impl(dev)->stream);
    svd_free(&b);
    return st;
}
