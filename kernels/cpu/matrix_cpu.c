/* kernels/cpu/matrix_cpu.c - CPU ops of the matrix optimizers (Muon, ROOT) and
 * of the orthogonalization study: per-matrix normalization, the |x| quantile by
 * radix selection, clamping at a per-matrix threshold, the SVD polar factor
 * (LAPACKE, in double), and SOAP's eigenbasis ops: the axis swap, symmetric
 * eigenvectors (ssyevd), the Householder QR basis (sgeqrf + sorgqr) and the
 * ordering of the estimated eigenvalues (LAPACKE, in float); and Adafactor's
 * factored second moments: row and column sums of squares (in double, in index
 * order), the factored preconditioning and the per-tensor step scale.
 *
 * Batched ops see x as (batch, stride) with n live floats per row; matrices are
 * independent, so the batch loop is the parallel one and each matrix is reduced
 * in a fixed order (bitwise repeatable for any thread count).
 */
#include <cblas.h>
#include <lapacke.h>
#include <omp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
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

/* x_b / max(||x_b||, eps) as torch computes it on a bf16 tensor (x_b already
 * rounded here): norm(), clamp() and div_() each round their result. */
static void normalize_bf16(float *xb, int64_t n, float eps, int add_eps)
{
    for (int64_t i = 0; i < n; i++) xb[i] = ob_bf16_round(xb[i]);
    const float norm = ob_bf16_round((float)sqrt(sumsq_ordered(xb, n)));
    const float d = ob_bf16_round(add_eps ? norm + eps : (norm > eps ? norm : eps));
    for (int64_t i = 0; i < n; i++) xb[i] = ob_bf16_round(xb[i] / d);
}

ob_status ob_cpu_batched_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride,
                                   float eps, int flags, ob_err *e)
{
    (void)dev;
    (void)e;
    const int add_eps = (flags & OB_NORM_ADD_EPS) != 0, bf16 = (flags & OB_NORM_BF16) != 0;
#pragma omp parallel for if ((int64_t)batch * n > PAR_MIN && batch > 1)
    for (int b = 0; b < batch; b++) {
        float *xb = x + (int64_t)b * stride;
        if (bf16) {
            normalize_bf16(xb, n, eps, add_eps);
            continue;
        }
        float norm = (float)sqrt(sumsq_ordered(xb, n));
        float d = add_eps ? norm + eps : (norm > eps ? norm : eps);
        float inv = 1.0f / d;
        for (int64_t i = 0; i < n; i++) xb[i] *= inv;
    }
    return OB_OK;
}

ob_status ob_cpu_round_bf16(ob_device *dev, float *x, int64_t n, ob_err *e)
{
    (void)dev;
    (void)e;
#pragma omp parallel for if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) x[i] = ob_bf16_round(x[i]);
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
    /* the caller's scratch is allocated memory: the keys are stored and read only as uint32_t */
    /* cppcheck-suppress invalidPointerCast */
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

/* ---- eigenbases (SOAP) ------------------------------------------------------------------ */

ob_status ob_cpu_swap01(ob_device *dev, float *dst, const float *src, int64_t A, int64_t n, int64_t B,
                        ob_err *e)
{
    (void)dev;
    if (A < 0 || n < 0 || B < 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "swap01: shape (%lld, %lld, %lld)", (long long)A,
                                (long long)n, (long long)B);
    size_t row = (size_t)B * sizeof(float);
#pragma omp parallel for if (A * n * B > PAR_MIN && n > 1)
    for (int64_t i = 0; i < n; i++)
        for (int64_t a = 0; a < A; a++) memcpy(dst + (i * A + a) * B, src + (a * n + i) * B, row);
    return OB_OK;
}

/* LAPACKE's own allocation failures are out of memory; anything else is the solver's. */
static ob_status lapack_fail(ob_err *e, lapack_int info, const char *op, const char *call, int n)
{
    if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
        return ob_fail(e, OB_ERR_NOMEM, "%s: out of memory in %s on a %dx%d matrix", op, call, n, n);
    return OB_FAIL_INTERNAL(e, OB_ERR_BACKEND, "%s: %s on a %dx%d matrix returned info %d%s", op, call, n, n,
                            (int)info, info > 0 ? " (did not converge)" : "");
}

/* LAPACK's Householder routines call a BLAS-2 kernel per column; on a
 * matrix below LAPACK_THREADS_MIN each call is too small to share, and
 * OpenBLAS's OpenMP build wakes its threads for every one (a 256 x 256 QR
 * and eigensolve, threaded on 2 cores, made SOAP's step on bert-tiny 5x
 * slower than single-threaded). OpenBLAS's OpenMP build follows the calling
 * thread's omp_get_max_threads(). Returns the count to restore. */
#define LAPACK_THREADS_MIN 1024
static int lapack_threads_begin(int n)
{
    int nt = omp_get_max_threads();
    if (n < LAPACK_THREADS_MIN) omp_set_num_threads(1);
    return nt;
}

ob_status ob_cpu_sym_eigvecs(ob_device *dev, int n, const float *A, float *S, ob_err *e)
{
    (void)dev;
    if (n < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "sym_eigvecs: n = %d", n);
    if (n == 0) return OB_OK;
    /* The workspace sizes of ssyevd with eigenvectors, given here: LAPACK
     * before 3.12 returns its workspace query as a float, which rounds
     * 1 + 6n + 2n^2 down from n = 4096 on, and then rejects its own answer. */
    const int64_t lwork = 1 + 6 * (int64_t)n + 2 * (int64_t)n * n, liwork = 3 + 5 * (int64_t)n;
    if (lwork > INT32_MAX)
        return ob_fail(e, OB_ERR_UNSUPPORTED, "sym_eigvecs: a %dx%d matrix needs more LAPACK workspace than a "
                       "32-bit size holds", n, n);
    size_t nn = (size_t)n * n;
    /* a non-finite entry: no eigenbasis, all NaN (LAPACK's answer would
     * depend on the routine's path: an error for some sizes, NaN for others) */
    for (size_t i = 0; i < nn; i++)
        if (!isfinite(A[i])) {
            for (size_t j = 0; j < nn; j++) S[j] = NAN;
            return OB_OK;
        }
    float *w = malloc((size_t)n * sizeof *w), *work = malloc((size_t)lwork * sizeof *work);
    lapack_int *iwork = malloc((size_t)liwork * sizeof *iwork);
    if (!w || !work || !iwork) {
        free(w);
        free(work);
        free(iwork);
        return ob_fail(e, OB_ERR_NOMEM, "sym_eigvecs: out of memory (n = %d)", n);
    }
    /* A symmetric: the row-major buffer read column-major is the same matrix. */
    memcpy(S, A, nn * sizeof *S);
    for (int i = 0; i < n; i++) S[(size_t)i * n + i] += 1e-30f;
    int nt = lapack_threads_begin(n);
    lapack_int info = LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', 'U', n, S, n, w, work, (lapack_int)lwork, iwork,
                                          (lapack_int)liwork);
    omp_set_num_threads(nt);
    free(w);
    free(work);
    free(iwork);
    if (info != 0) return lapack_fail(e, info, "sym_eigvecs", "LAPACKE_ssyevd", n);
    /* Column j of the column-major result (row j of S) belongs to the j-th
     * smallest eigenvalue: reverse the rows for descending order. */
    for (int j = 0; j < n / 2; j++) {
        float *r0 = S + (size_t)j * n, *r1 = S + (size_t)(n - 1 - j) * n;
        for (int i = 0; i < n; i++) {
            float t = r0[i];
            r0[i] = r1[i];
            r1[i] = t;
        }
    }
    return OB_OK;
}

ob_status ob_cpu_qr_orth(ob_device *dev, int n, const float *W, float *S, ob_err *e)
{
    (void)dev;
    if (n < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "qr_orth: n = %d", n);
    if (n == 0) return OB_OK;
    /* n x 64 floats of workspace: blocked sgeqrf / sorgqr at block size 64
     * (given, not queried: see sym_eigvecs) */
    const int64_t lwork = 64 * (int64_t)n;
    float *tau = malloc((size_t)n * sizeof *tau), *work = malloc((size_t)lwork * sizeof *work);
    if (!tau || !work) {
        free(tau);
        free(work);
        return ob_fail(e, OB_ERR_NOMEM, "qr_orth: out of memory (n = %d)", n);
    }
    /* W is M column-major; the column-major Q left in S is the row-major S wanted. */
    memcpy(S, W, (size_t)n * n * sizeof *S);
    int nt = lapack_threads_begin(n);
    lapack_int info = LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, n, n, S, n, tau, work, (lapack_int)lwork);
    const char *call = "LAPACKE_sgeqrf";
    if (info == 0) {
        info = LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, n, n, n, S, n, tau, work, (lapack_int)lwork);
        call = "LAPACKE_sorgqr";
    }
    omp_set_num_threads(nt);
    free(tau);
    free(work);
    if (info != 0) return lapack_fail(e, info, "qr_orth", call, n);
    return OB_OK;
}

typedef struct eig_key {
    double est;
    int32_t j;
} eig_key;

/* Descending est, NaN below every number, ties by ascending j: a total order. */
static int eig_key_cmp(const void *pa, const void *pb)
{
    const eig_key *a = pa, *b = pb;
    int na = isnan(a->est), nb = isnan(b->est);
    if (na != nb) return na ? 1 : -1;
    if (!na) {
        if (a->est > b->est) return -1;
        if (a->est < b->est) return 1;
    }
    return (a->j > b->j) - (a->j < b->j);
}

/* acc[r] = sum over c ascending of (double)a[r][c] * b[r][c], for nr <= 8
 * rows of n columns (row r at a + r * ld): each row's sum is one chain of
 * additions in the specified order, the order the CUDA kernels follow. One
 * row at a time, each addition waits for the one before (about 4 cycles);
 * eight rows side by side keep eight independent chains in flight, with
 * the same bits. The products are exact in double. */
#define ROW_GROUP 8
OB_CPU_CLONES static void rows_dot(const float *a, const float *b, int64_t n, int64_t ld, int nr, double *acc)
{
    if (nr == ROW_GROUP) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        for (int64_t c = 0; c < n; c++) {
            s0 += (double)a[c] * b[c];
            s1 += (double)a[ld + c] * b[ld + c];
            s2 += (double)a[2 * ld + c] * b[2 * ld + c];
            s3 += (double)a[3 * ld + c] * b[3 * ld + c];
            s4 += (double)a[4 * ld + c] * b[4 * ld + c];
            s5 += (double)a[5 * ld + c] * b[5 * ld + c];
            s6 += (double)a[6 * ld + c] * b[6 * ld + c];
            s7 += (double)a[7 * ld + c] * b[7 * ld + c];
        }
        acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3, acc[4] = s4, acc[5] = s5, acc[6] = s6, acc[7] = s7;
        return;
    }
    for (int r = 0; r < nr; r++) {
        const float *ar = a + r * ld, *br = b + r * ld;
        double s = 0.0;
        for (int64_t c = 0; c < n; c++) s += (double)ar[c] * br[c];
        acc[r] = s;
    }
}

ob_status ob_cpu_eig_order(ob_device *dev, int n, const float *S, const float *T, int32_t *perm, ob_err *e)
{
    (void)dev;
    if (n < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "eig_order: n = %d", n);
    if (n == 0) return OB_OK;
    eig_key *k = malloc((size_t)n * sizeof *k);
    if (!k) return ob_fail(e, OB_ERR_NOMEM, "eig_order: out of memory (n = %d)", n);
    const int64_t groups = (n + ROW_GROUP - 1) / ROW_GROUP;
#pragma omp parallel for if ((int64_t)n * n > PAR_MIN)
    for (int64_t gi = 0; gi < groups; gi++) {
        const int64_t j0 = gi * ROW_GROUP;
        const int nr = (int)(n - j0 < ROW_GROUP ? n - j0 : ROW_GROUP);
        double acc[ROW_GROUP];
        rows_dot(S + j0 * n, T + j0 * n, n, n, nr, acc);
        for (int r = 0; r < nr; r++) {
            k[j0 + r].est = acc[r];
            k[j0 + r].j = (int)(j0 + r);
        }
    }
    qsort(k, (size_t)n, sizeof *k, eig_key_cmp);
    for (int r = 0; r < n; r++) perm[r] = k[r].j;
    free(k);
    return OB_OK;
}

/* The batch forms of sym_eigvecs, qr_orth and eig_order: the matrices
 * shared out over the threads, each solved as a lone one is (LAPACK runs
 * single-threaded below LAPACK_THREADS_MIN, and inside a parallel region
 * OpenBLAS does too), so the same bits; larger matrices one after another,
 * LAPACK threaded in each. The failure of the lowest b is reported. */
enum { SOLVE_EIGVECS, SOLVE_QR, SOLVE_ORDER };

static ob_status solve_batch(ob_device *dev, int kind, int n, int count, const float *x, int64_t sx,
                             const float *y, int64_t sy, float *out, int64_t so, int32_t *perm, ob_err *e)
{
    if (n < 0 || count < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "solve batch: n = %d, count = %d", n, count);
    int failed = count;
    ob_err first = {0};
#pragma omp parallel for schedule(dynamic, 1) if (count > 1 && n < LAPACK_THREADS_MIN)
    for (int b = 0; b < count; b++) {
        ob_err eb = {0};
        ob_status s = OB_OK;
        if (kind == SOLVE_EIGVECS)
            s = ob_cpu_sym_eigvecs(dev, n, x + b * sx, out + b * so, &eb);
        else if (kind == SOLVE_QR)
            s = ob_cpu_qr_orth(dev, n, x + b * sx, out + b * so, &eb);
        else
            s = ob_cpu_eig_order(dev, n, x + b * sx, y + b * sy, perm + (int64_t)b * n, &eb);
        if (s != OB_OK) {
#pragma omp critical(ob_solve_batch)
            if (b < failed) {
                failed = b;
                first = eb;
            }
        }
    }
    if (failed == count) return OB_OK;
    if (e) *e = first;
    return first.status;
}

ob_status ob_cpu_sym_eigvecs_batch(ob_device *dev, int n, int count, const float *A, int64_t sa, float *S,
                                   int64_t ss, ob_err *e)
{
    return solve_batch(dev, SOLVE_EIGVECS, n, count, A, sa, NULL, 0, S, ss, NULL, e);
}

ob_status ob_cpu_qr_orth_batch(ob_device *dev, int n, int count, const float *W, int64_t sw, float *S, int64_t ss,
                               ob_err *e)
{
    return solve_batch(dev, SOLVE_QR, n, count, W, sw, NULL, 0, S, ss, NULL, e);
}

ob_status ob_cpu_eig_order_batch(ob_device *dev, int n, int count, const float *S, int64_t ss, const float *T,
                                 int64_t st, int32_t *perm, ob_err *e)
{
    return solve_batch(dev, SOLVE_ORDER, n, count, S, ss, T, st, NULL, 0, perm, e);
}

/* ---- Adafactor (factored second moments) -------------------------------------------------- */

/* All sizes non-negative and batch * rows * cols (every product indexed with) in int64. */
static int ada_shape_ok(int64_t batch, int64_t rows, int64_t cols)
{
    if (batch < 0 || rows < 0 || cols < 0) return 0;
    if (rows > 0 && cols > INT64_MAX / rows) return 0;
    int64_t rc = rows * cols;
    return rc == 0 || batch <= INT64_MAX / rc;
}

ob_status ob_cpu_rows_sumsq(ob_device *dev, const float *x, int64_t rows, int64_t cols, float alpha, float *out,
                            ob_err *e)
{
    (void)dev;
    if (!ada_shape_ok(1, rows, cols))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "rows_sumsq: shape (%lld, %lld)", (long long)rows,
                                (long long)cols);
    const int64_t groups = (rows + ROW_GROUP - 1) / ROW_GROUP;
#pragma omp parallel for if (rows * cols > PAR_MIN && groups > 1)
    for (int64_t gi = 0; gi < groups; gi++) {
        const int64_t r0 = gi * ROW_GROUP;
        const int nr = (int)(rows - r0 < ROW_GROUP ? rows - r0 : ROW_GROUP);
        double acc[ROW_GROUP];
        rows_dot(x + r0 * cols, x + r0 * cols, cols, cols, nr, acc);
        for (int r = 0; r < nr; r++) out[r0 + r] = (float)((double)alpha * acc[r]);
    }
    return OB_OK;
}

/* cols_sumsq walks x row by row, a block of COLS_BLK columns at a time, each
 * column's sum in its own double, OB_SUMSQ_ROW_BLOCK rows to a partial sum,
 * the partial sums added in order, as specified. */
#define COLS_BLK 256

ob_status ob_cpu_cols_sumsq(ob_device *dev, const float *x, int64_t batch, int64_t rows, int64_t cols, float alpha,
                            float *out, ob_err *e)
{
    (void)dev;
    if (!ada_shape_ok(batch, rows, cols))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cols_sumsq: shape (%lld, %lld, %lld)", (long long)batch,
                                (long long)rows, (long long)cols);
    const int64_t nblk = (cols + COLS_BLK - 1) / COLS_BLK, tasks = batch * nblk;
#pragma omp parallel for if (batch * rows * cols > PAR_MIN && tasks > 1)
    for (int64_t t = 0; t < tasks; t++) {
        int64_t b = t / nblk, c0 = (t % nblk) * COLS_BLK;
        int nc = (int)(cols - c0 < COLS_BLK ? cols - c0 : COLS_BLK);
        double acc[COLS_BLK], part[COLS_BLK];
        for (int k = 0; k < nc; k++) acc[k] = 0.0;
        const float *xb = x + b * rows * cols + c0;
        for (int64_t r0 = 0; r0 < rows; r0 += OB_SUMSQ_ROW_BLOCK) {
            const int64_t r1 = rows - r0 < OB_SUMSQ_ROW_BLOCK ? rows : r0 + OB_SUMSQ_ROW_BLOCK;
            for (int k = 0; k < nc; k++) part[k] = 0.0;
            for (int64_t r = r0; r < r1; r++) {
                const float *xr = xb + r * cols;
                for (int k = 0; k < nc; k++) part[k] += (double)xr[k] * xr[k];
            }
            for (int k = 0; k < nc; k++) acc[k] += part[k];
        }
        float *ob = out + b * cols + c0;
        for (int k = 0; k < nc; k++) ob[k] = (float)((double)alpha * acc[k]);
    }
    return OB_OK;
}

/* One row of u: correctly rounded float operations only (no contraction
 * in a C11 build), so every clone gives the same bits. */
OB_CPU_CLONES static void precond_row(const float *g, float rv, const float *col, float m, float eps1sq, int64_t cols,
                                      float *u)
{
    for (int64_t c = 0; c < cols; c++) {
        float v = rv * col[c];
        v = v / m;
        v = v < eps1sq ? eps1sq : v;
        u[c] = g[c] * (1.0f / sqrtf(v));
    }
}

/* The clamps propagate NaN, as torch's clamp_(min=...) does. */
ob_status ob_cpu_adafactor_precond(ob_device *dev, const float *g, const float *row, const float *col,
                                   int64_t batch, int64_t rows, int64_t cols, float eps1, float *u, ob_err *e)
{
    (void)dev;
    if (!ada_shape_ok(batch, rows, cols))
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "adafactor_precond: shape (%lld, %lld, %lld)",
                                (long long)batch, (long long)rows, (long long)cols);
    if (rows == 0 || cols == 0 || batch == 0) return OB_OK;
    const float eps1sq = eps1 * eps1;
    /* one (batch 1) is written in the loop below before it is read */
    /* cppcheck-suppress uninitvar */
    float one, *m = batch == 1 ? &one : malloc((size_t)batch * sizeof *m);
    if (!m) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < batch; b++) {
        const float *rb = row + b * rows;
        double s = 0.0;
        for (int64_t r = 0; r < rows; r++) s += (double)rb[r];
        float mb = (float)s / (float)rows;
        m[b] = mb < eps1 ? eps1 : mb;
    }
    /* every row of every matrix is one task (a batch of small matrices too) */
    const int64_t total = batch * rows;
#pragma omp parallel for if (total * cols > PAR_MIN && total > 1)
    for (int64_t br = 0; br < total; br++) {
        const int64_t b = br / rows;
        precond_row(g + br * cols, row[br], col + b * cols, m[b], eps1sq, cols, u + br * cols);
    }
    if (m != &one) free(m);
    return OB_OK;
}

ob_status ob_cpu_adafactor_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count, int64_t numel,
                                 float d, ob_rule_step *dst, ob_err *e)
{
    (void)dev;
    if (numel < 0 || count < 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "adafactor_scale: %d tensors of %lld", count, (long long)numel);
    for (int b = 0; b < count; b++) {
        const float two[2] = {sq[b], sq[count + b]};
        ob_adafactor_scale(src, two, (long long)numel, d, &dst[b]);
    }
    return OB_OK;
}

ob_status ob_cpu_trust_scale(ob_device *dev, const ob_rule_step *src, const float *sq, int count,
                             const ob_trust *t, const ob_step_stats *st, ob_rule_step *dst, ob_err *e)
{
    (void)dev;
    if (count < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "trust_scale: %d tensors", count);
    const float clip_scale = st ? st->clip_scale : 1.0f;
    for (int b = 0; b < count; b++) {
        const float two[2] = {sq[b], sq[count + b]};
        ob_trust_scale(src, two, t, clip_scale, &dst[b]);
    }
    return OB_OK;
}
