/* kernels/cpu/testfns_cpu.c - analytic test functions (Rosenbrock) on the CPU. */
#include "kernels/cpu/cpu.h"

/* f(x) = sum_{i<n-1} 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2, and its gradient.
 * x, g: (n). Accumulated in double; n is small for this workload. */
ob_status ob_cpu_rosenbrock(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e)
{
    (void)dev;
    (void)e;
    double f = 0;
    for (int64_t i = 0; i < n; i++) g[i] = 0;
    for (int64_t i = 0; i + 1 < n; i++) {
        double a = (double)x[i + 1] - (double)x[i] * x[i];
        double b = 1.0 - x[i];
        f += 100.0 * a * a + b * b;
        g[i] += (float)(-400.0 * a * x[i] - 2.0 * b);
        g[i + 1] += (float)(200.0 * a);
    }
    *loss = (float)f;
    return OB_OK;
}
