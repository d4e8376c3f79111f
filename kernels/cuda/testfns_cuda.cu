/* kernels/cuda/testfns_cuda.cu - analytic test functions (Rosenbrock) on the GPU.
 *
 * The same arithmetic as kernels/cpu/testfns_cpu.c, written so that it rounds
 * the same way: each gradient element is the float sum of the two float
 * contributions the CPU adds, in the CPU's order, with the double products
 * and differences by explicit round-to-nearest intrinsics (no FMA fusion).
 * The loss is a deterministic double reduction.
 */
#include "kernels/cuda/cuda_common.cuh"

/* x, g: (n). part[2*block] = the block's share of the loss. */
static __global__ void __launch_bounds__(OB_CU_RED_THREADS)
    rosen_kernel(const float *__restrict__ x, int64_t n, float *__restrict__ g,
                 double *__restrict__ part)
{
    double f = 0.0, unused = 0.0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double xi = x[i];
        float gi = 0.0f;
        if (i > 0) { /* from term i-1: d/dx_i 100 (x_i - x_{i-1}^2)^2 */
            double xp = x[i - 1];
            double a = __dsub_rn(xi, __dmul_rn(xp, xp));
            gi = __fadd_rn(gi, (float)__dmul_rn(200.0, a));
        }
        if (i + 1 < n) { /* term i */
            double a = __dsub_rn((double)x[i + 1], __dmul_rn(xi, xi));
            double b = __dsub_rn(1.0, xi);
            f = __dadd_rn(f, __dadd_rn(__dmul_rn(__dmul_rn(100.0, a), a), __dmul_rn(b, b)));
            double d = __dsub_rn(__dmul_rn(__dmul_rn(-400.0, a), xi), __dmul_rn(2.0, b));
            gi = __fadd_rn(gi, (float)d);
        }
        g[i] = gi;
    }
    cu_block_sum2(f, unused);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = f;
        part[2 * blockIdx.x + 1] = 0.0;
    }
}

ob_status ob_cu_rosenbrock(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e)
{
    cuda_impl *c = cu_impl(dev);
    unsigned blocks = cu_red_blocks(n);
    rosen_kernel<<<blocks, OB_CU_RED_THREADS, 0, c->stream>>>(x, n < 0 ? 0 : n, g, c->red_part);
    OB_CU_LAUNCHED(e, "rosenbrock");
    return ob_cu_reduce_finish(dev, (int)blocks, CU_RED_STORE_FLOAT, loss, NULL, "rosenbrock", e);
}
