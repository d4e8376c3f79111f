/* kernels/cuda/ops_cuda.cu - elementwise ops, the counter-based RNG and the
 * deterministic reductions (dot, gradient statistics) of the CUDA backend.
 *
 * Elementwise arithmetic is written with explicit round-to-nearest
 * intrinsics (__fmul_rn, __fadd_rn) where the CPU backend computes a*x + b*y:
 * nvcc would otherwise fuse it into an FMA and the two backends would differ
 * in the last bit. Reductions sum in double in a fixed order (see
 * cuda_common.cuh), so they are bitwise repeatable run to run.
 */
#include "core/bf16.h"
#include "core/rng.h"
#include "kernels/cuda/cuda_common.cuh"

/* ---- fill, axpby -------------------------------------------------------------- */

static __global__ void fill_kernel(float *__restrict__ x, float v, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = v;
}

ob_status ob_cu_fill(ob_device *dev, float *x, float v, int64_t n, ob_err *e)
{
    if (n <= 0) return OB_OK;
    fill_kernel<<<cu_grid(dev, n, 256), 256, 0, cu_impl(dev)->stream>>>(x, v, n);
    OB_CU_LAUNCHED(e, "fill");
    return OB_OK;
}

/* y = a*x + b*y; x may alias y. */
static __global__ void axpby_kernel(int64_t n, float a, const float *x, float b, float *y)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = __fadd_rn(__fmul_rn(a, x[i]), __fmul_rn(b, y[i]));
}

ob_status ob_cu_axpby(ob_device *dev, int64_t n, float a, const float *x, float b, float *y, ob_err *e)
{
    if (n <= 0) return OB_OK;
    axpby_kernel<<<cu_grid(dev, n, 256), 256, 0, cu_impl(dev)->stream>>>(n, a, x, b, y);
    OB_CU_LAUNCHED(e, "axpby");
    return OB_OK;
}

/* ---- bf16 rounding (core/bf16.h), the CPU's bits ------------------------------------ */

static __global__ void round_bf16_kernel(float *__restrict__ x, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = ob_bf16_round(x[i]);
}

ob_status ob_cu_round_bf16(ob_device *dev, float *x, int64_t n, ob_err *e)
{
    if (n <= 0) return OB_OK;
    round_bf16_kernel<<<cu_grid(dev, n, 256), 256, 0, cu_impl(dev)->stream>>>(x, n);
    OB_CU_LAUNCHED(e, "round_bf16");
    return OB_OK;
}

/* ---- rng: the same Philox stream as core/rng.h on the host ------------------------ */

static __global__ void rng_normal_kernel(float *__restrict__ x, int64_t n, uint64_t seed,
                                         uint64_t stream, uint64_t offset, float mean, float std)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = __fadd_rn(mean, __fmul_rn(std, ob_rng_normal(seed, stream, offset + (uint64_t)i)));
}

ob_status ob_cu_rng_normal(ob_device *dev, float *x, int64_t n, uint64_t seed, uint64_t stream,
                           uint64_t offset, float mean, float std, ob_err *e)
{
    if (n <= 0) return OB_OK;
    rng_normal_kernel<<<cu_grid(dev, n, 256), 256, 0, cu_impl(dev)->stream>>>(x, n, seed, stream,
                                                                              offset, mean, std);
    OB_CU_LAUNCHED(e, "rng_normal");
    return OB_OK;
}

/* ---- deterministic reductions -------------------------------------------------------- */

static __global__ void reduce_finish_kernel(const double *__restrict__ part, int blocks, int epilogue,
                                            float *out_f, ob_step_stats *stats)
{
    double a = 0.0, b = 0.0;
    /* Each thread sums a fixed, strided subset in order; then the fixed tree. */
    for (int i = threadIdx.x; i < blocks; i += blockDim.x) {
        a += part[2 * i];
        b += part[2 * i + 1];
    }
    cu_block_sum2(a, b);
    if (threadIdx.x == 0) {
        if (epilogue == CU_RED_STORE_FLOAT) {
            out_f[0] = (float)a;
        } else {
            stats->sumsq += a;
            stats->nonfinite += b;
        }
    }
}

ob_status ob_cu_reduce_finish(ob_device *dev, int blocks, int epilogue, float *out_f,
                              ob_step_stats *stats, const char *op, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    reduce_finish_kernel<<<1, OB_CU_RED_THREADS, 0, c->stream>>>(c->red_part, blocks, epilogue, out_f,
                                                                 stats);
    OB_CU_LAUNCHED(e, op);
    return OB_OK;
}

/* part[2*block] = sum over the block's elements of (double)x*y. */
static __global__ void __launch_bounds__(OB_CU_RED_THREADS)
    dot_kernel(int64_t n, const float *__restrict__ x, const float *__restrict__ y, int vec,
               double *__restrict__ part)
{
    double a = 0.0, b = 0.0;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i0 = 0;
    if (vec) {
        int64_t n4 = n >> 2;
        const float4 *x4 = (const float4 *)x, *y4 = (const float4 *)y;
        int64_t j = tid;
        for (; j + stride < n4; j += 2 * stride) { /* two loads of each in flight */
            float4 u0 = x4[j], v0 = y4[j], u1 = x4[j + stride], v1 = y4[j + stride];
            a += (double)u0.x * v0.x;
            a += (double)u0.y * v0.y;
            a += (double)u0.z * v0.z;
            a += (double)u0.w * v0.w;
            a += (double)u1.x * v1.x;
            a += (double)u1.y * v1.y;
            a += (double)u1.z * v1.z;
            a += (double)u1.w * v1.w;
        }
        for (; j < n4; j += stride) {
            float4 u = x4[j], v = y4[j];
            a += (double)u.x * v.x;
            a += (double)u.y * v.y;
            a += (double)u.z * v.z;
            a += (double)u.w * v.w;
        }
        i0 = n4 << 2;
    }
    for (int64_t i = i0 + tid; i < n; i += stride) a += (double)x[i] * y[i];
    cu_block_sum2(a, b);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = a;
        part[2 * blockIdx.x + 1] = b;
    }
}

ob_status ob_cu_dot(ob_device *dev, int64_t n, const float *x, const float *y, float *out, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    unsigned blocks = cu_red_blocks(n);
    int vec = cu_aligned16(x) && cu_aligned16(y);
    dot_kernel<<<blocks, OB_CU_RED_THREADS, 0, c->stream>>>(n < 0 ? 0 : n, x, y, vec, c->red_part);
    OB_CU_LAUNCHED(e, "dot");
    return ob_cu_reduce_finish(dev, (int)blocks, CU_RED_STORE_FLOAT, out, NULL, "dot", e);
}

/* part[2*block] = sum of squares of finite g, part[2*block+1] = count of non-finite. */
static __global__ void __launch_bounds__(OB_CU_RED_THREADS)
    grad_stats_kernel(const float *__restrict__ g, int64_t n, int vec, double *__restrict__ part)
{
    double a = 0.0, b = 0.0;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i0 = 0;
    if (vec) {
        int64_t n4 = n >> 2;
        const float4 *g4 = (const float4 *)g;
        int64_t j = tid;
        for (; j + 3 * stride < n4; j += 4 * stride) { /* four loads in flight */
            float4 u[4];
#pragma unroll
            for (int k = 0; k < 4; k++) u[k] = g4[j + k * stride];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                cu_gstat_one(u[k].x, a, b);
                cu_gstat_one(u[k].y, a, b);
                cu_gstat_one(u[k].z, a, b);
                cu_gstat_one(u[k].w, a, b);
            }
        }
        for (; j < n4; j += stride) {
            float4 u = g4[j];
            cu_gstat_one(u.x, a, b);
            cu_gstat_one(u.y, a, b);
            cu_gstat_one(u.z, a, b);
            cu_gstat_one(u.w, a, b);
        }
        i0 = n4 << 2;
    }
    for (int64_t i = i0 + tid; i < n; i += stride) cu_gstat_one(g[i], a, b);
    cu_block_sum2(a, b);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = a;
        part[2 * blockIdx.x + 1] = b;
    }
}

ob_status ob_cu_grad_stats(ob_device *dev, const float *g, int64_t n, ob_step_stats *stats, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    unsigned blocks = cu_red_blocks(n);
    grad_stats_kernel<<<blocks, OB_CU_RED_THREADS, 0, c->stream>>>(g, n < 0 ? 0 : n, cu_aligned16(g),
                                                                   c->red_part);
    OB_CU_LAUNCHED(e, "grad_stats");
    return ob_cu_reduce_finish(dev, (int)blocks, CU_RED_ADD_STATS, NULL, stats, "grad_stats", e);
}

/* ---- the guard and the clip scale: one thread, the shared rule ------------------------ */

static __global__ void finish_stats_kernel(ob_step_stats *stats, const float *loss, float clip_norm,
                                           ob_spike *spike, ob_step_record *rec)
{
    ob_stats_finish(stats, loss, clip_norm, spike, rec);
}

/* With the spike guard on, the one thread also scores the window (two passes
 * over at most 2 x 1024 floats): microseconds, once per step. */
ob_status ob_cu_finish_stats(ob_device *dev, ob_step_stats *stats, const float *loss, float clip_norm,
                             ob_spike *spike, ob_step_record *rec, ob_err *e)
{
    finish_stats_kernel<<<1, 1, 0, cu_impl(dev)->stream>>>(stats, loss, clip_norm, spike, rec);
    OB_CU_LAUNCHED(e, "finish_stats");
    return OB_OK;
}
