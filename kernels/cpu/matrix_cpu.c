/* kernels/cpu/matrix_cpu.c - CPU ops of the matrix optimizers (Muon, ROOT) and
 * of the orthogonalization study: per-matrix normalization, the |x| quantile by
 * radix selection, clamping at a per-matrix threshold, and the SVD polar factor
 * (LAPACKE, in double).
 *
 * Batched ops see x as (batch, stride) with n live floats per row; matrices are
 * independent, so the batch loop is the parallel one and each matrix is reduced
 * in a fixed order (bitwise repeatable for any thread count).
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu.h"

#define PAR_MIN 32768

/* sum x^2 in double, in chunk order */
static double sumsq_ordered(const float *x, int64_t n)
{
    double total = 0;
    for (int64_t c = 0; c < n; c += 8192) {
        int64_t hi = c + 8192 < n ? c + 8192 : n;
        double s = 0;
        for (int64_t i = c; i < hi; i++) s += (double)x[i] * x[i];
        total += s;
    }
    return total;
}

ob_status ob_cpu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                   float eps, int add_eps, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)batch * n > PAR_MIN && batch > 1)
    for (int b = 0; b < batch; b++) {
        float *xb = x + (int64_t)b * stride;
        float norm = (float)sqrt(sumsq_ordered(xb, n));
        float d = add_eps ? norm + eps : (norm > eps ? norm : eps);
        float inv = 1.0f / d;
        for (int64_t i = 0; i < n; i++) xb[i] *= inv;
    }
    return OB_OK;
}

/* Non-negative floats order like their bit patterns read as unsigned integers. */
static inline uint32_t abs_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x7fffffffu;
}

static inline float bits_float(uint32_t u)
{
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The k-th smallest (0-based) of the n keys, most significant byte first:
 * each pass histograms one byte of the surviving keys, picks the byte value
 * that holds rank k and keeps only those keys (compacted in place). */
static uint32_t radix_select(uint32_t *keys, int64_t n, int64_t k)
{
    for (int shift = 24; shift >= 0 && n > 1; shift -= 8) {
        int64_t hist[256] = {0};
        for (int64_t i = 0; i < n; i++) hist[(keys[i] >> shift) & 255u]++;
        unsigned d = 0;
        while (k >= hist[d]) k -= hist[d++];
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (((keys[i] >> shift) & 255u) == d) keys[m++] = keys[i];
        n = m;
    }
    return keys[k];
}

/* q-quantile of |x[0..n)|; work holds n floats of scratch. */
static float abs_quantile_one(const float *x, int64_t n, double q, float *work)
{
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo > n - 1) lo = n - 1;
    double frac = pos - (double)lo;
    uint32_t *keys = (uint32_t *)work;
    for (int64_t i = 0; i < n; i++) keys[i] = abs_bits(x[i]);
    uint32_t vlo = radix_select(keys, n, lo);
    if (frac == 0.0 || lo + 1 >= n) return bits_float(vlo);
    /* The next order statistic: vlo again while ties remain, else the smallest key above it. */
    int64_t n_le = 0;
    uint32_t above = 0xffffffffu;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = abs_bits(x[i]);
        if (u <= vlo)
            n_le++;
        else if (u < above)
            above = u;
    }
    uint32_t vhi = lo + 1 < n_le ? vlo : above;
    double a = bits_float(vlo), b = bits_float(vhi);
    return (float)(a + (b - a) * frac);
}

ob_status ob_cpu_abs_quantile(ob_device *dev, const float *x, int batch, int64_t n, int64_t stride,
                              double q, float *out, float *work, ob_err *e)
{
    (void)dev;
    if (n <= 0 || !(q >= 0.0 && q <= 1.0))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "abs_quantile: n = %lld, q = %g", (long long)n, q);
#pragma omp parallel for if ((int64_t)batch * n > PAR_MIN && batch > 1)
    for (int b = 0; b < batch; b++)
        out[b] = abs_quantile_one(x + (int64_t)b * stride, n, q, work + (int64_t)b * stride);
    return OB_OK;
}

ob_status ob_cpu_clamp_abs(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                           const float *thr, float add, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if ((int64_t)batch * n > PAR_MIN && batch > 1)
    for (int b = 0; b < batch; b++) {
        float *xb = x + (int64_t)b * stride;
        float t = thr[b] + add;
        for (int64_t i = 0; i < n; i++) xb[i] = xb[i] > t ? t : (xb[i] < -t ? -t : xb[i]);
    }
    return OB_OK;
}

ob_status ob_cpu_svd_polar(ob_device *dev, int rows, int cols, const float *A, float *s, float *q,
                           ob_err *e)
{
    (void)dev;
    int k = rows < cols ? rows : cols;
    size_t na = (size_t)rows * cols;
    double *a = malloc(na * sizeof *a);
    double *sv = malloc((size_t)k * sizeof *sv);
    double *u = malloc((size_t)rows * k * sizeof *u);
    double *vt = malloc((size_t)k * cols * sizeof *vt);
    double *qd = q ? malloc(na * sizeof *qd) : NULL;
    ob_status st = OB_OK;
    if (!a || !sv || !u || !vt || (q && !qd)) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory for the SVD of a %dx%d matrix", rows, cols);
        goto out;
    }
    for (size_t i = 0; i < na; i++) a[i] = A[i];
    lapack_int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', rows, cols, a, cols, sv, u, k, vt, cols);
    if (info != 0) {
        st = OB_FAIL_INTERNAL(e, OB_ERR_BACKEND, "LAPACKE_dgesdd on a %dx%d matrix returned %d",
                              rows, cols, (int)info);
        goto out;
    }
    for (int i = 0; i < k; i++) s[i] = (float)sv[i];
    if (q) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, k, 1.0, u, k, vt, cols, 0.0,
                    qd, cols);
        for (size_t i = 0; i < na; i++) q[i] = (float)qd[i];
    }
out:
    free(a);
    free(sv);
    free(u);
    free(vt);
    free(qd);
    return st;
}
