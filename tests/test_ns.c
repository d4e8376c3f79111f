/* tests/test_ns.c - Newton-Schulz on the backend against the exact polar
 * factor U V^T from the SVD (LAPACKE): the convergent cubic iteration reaches
 * it on wide and tall matrices; Muon's quintic puts every singular value in
 * its band after 5 steps; a batch equals its matrices done one by one; the
 * SVD slot itself gives an orthonormal Q with Q^T A symmetric; the Gram
 * product slot (syrk) equals the gemm it replaces, and the iteration through
 * it equals the one through gemm; the batched gemm against a double
 * reference on every thread count; the coefficient tables and files. */
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "core/rng.h"
#include "optimizers/newton_schulz.h"

static double rel_err(const float *a, const float *b, int64_t n)
{
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        s += (double)b[i] * b[i];
    }
    return sqrt(d / s);
}

/* NS on a batch of `batch` random rows x cols matrices; returns the result buffer. */
static void ns_batch(ob_device *dev, int batch, int rows, int cols, const float *abc, int steps, float *in,
                     float *out)
{
    ob_err e;
    int64_t n = (int64_t)rows * cols, sx = ob_ns_stride(n);
    int s = rows < cols ? rows : cols;
    int64_t ss = ob_ns_stride((int64_t)s * s);
    float *x, *x2, *a, *b, *res;
    CHECK_OK(ob_dev_alloc(dev, (size_t)(batch * sx) * 4, (void **)&x, &e), &e);
    CHECK_OK(ob_dev_alloc(dev, (size_t)(batch * sx) * 4, (void **)&x2, &e), &e);
    CHECK_OK(ob_dev_alloc(dev, (size_t)(batch * ss) * 4, (void **)&a, &e), &e);
    CHECK_OK(ob_dev_alloc(dev, (size_t)(batch * ss) * 4, (void **)&b, &e), &e);
    for (int k = 0; k < batch; k++) memcpy(x + k * sx, in + k * n, (size_t)n * 4);
    CHECK_OK(dev->ops->batched_normalize(dev, x, batch, n, sx, 1e-7f, 0, &e), &e);
    CHECK_OK(ob_ns_iterate(dev, x, x2, a, b, batch, rows, cols, sx, ss, abc, 1, steps, 0, &res, &e), &e);
    for (int k = 0; k < batch; k++) memcpy(out + k * n, res + k * sx, (size_t)n * 4);
    ob_dev_free(dev, x);
    ob_dev_free(dev, x2);
    ob_dev_free(dev, a);
    ob_dev_free(dev, b);
}

static void test_polar_slot(ob_device *dev)
{
    ob_err e;
    const int r = 7, c = 4;
    float A[28], Q[28], s[4];
    for (int i = 0; i < r * c; i++) A[i] = ob_rng_normal(5, 0, (uint64_t)i);
    CHECK_OK(dev->ops->svd_polar(dev, r, c, A, s, Q, &e), &e);
    double fro = 0, ss = 0;
    for (int i = 0; i < r * c; i++) fro += (double)A[i] * A[i];
    for (int i = 0; i < c; i++) ss += (double)s[i] * s[i];
    CHECK_NEAR(ss, fro, 1e-4 * fro);
    for (int i = 1; i < c; i++) CHECK(s[i] <= s[i - 1]);
    for (int i = 0; i < c; i++)
        for (int j = 0; j < c; j++) {
            double qq = 0, qa = 0, aq = 0;
            for (int k = 0; k < r; k++) {
                qq += (double)Q[k * c + i] * Q[k * c + j];
                qa += (double)Q[k * c + i] * A[k * c + j];
                aq += (double)Q[k * c + j] * A[k * c + i];
            }
            CHECK_NEAR(qq, i == j ? 1.0 : 0.0, 1e-5);
            CHECK_NEAR(qa, aq, 1e-4); /* Q^T A = V S V^T is symmetric */
        }
}

static void test_converges_to_polar(ob_device *dev, int rows, int cols)
{
    ob_err e;
    const int batch = 3;
    int64_t n = (int64_t)rows * cols;
    float *in = malloc((size_t)(batch * n) * 4), *out = malloc((size_t)(batch * n) * 4);
    float *q = malloc((size_t)n * 4), *sv = malloc((size_t)(rows < cols ? rows : cols) * 4);
    for (int64_t i = 0; i < batch * n; i++) in[i] = ob_rng_normal(9, (uint64_t)rows, (uint64_t)i);
    const float cubic[3] = {1.5f, -0.5f, 0.0f};
    ns_batch(dev, batch, rows, cols, cubic, 40, in, out);
    for (int k = 0; k < batch; k++) {
        CHECK_OK(dev->ops->svd_polar(dev, rows, cols, in + k * n, sv, q, &e), &e);
        double err = rel_err(out + k * n, q, n);
        CHECK_MSG(err < 1e-4, "%dx%d matrix %d: cubic Newton-Schulz is %.3g from U V^T", rows, cols, k, err);
    }
    /* the batch equals the matrices done one at a time */
    float *one = malloc((size_t)n * 4);
    ns_batch(dev, 1, rows, cols, cubic, 40, in + 2 * n, one);
    CHECK(rel_err(one, out + 2 * n, n) < 1e-6);
    free(one);
    free(in);
    free(out);
    free(q);
    free(sv);
}

static void test_muon_band(ob_device *dev, int rows, int cols)
{
    ob_err e;
    int64_t n = (int64_t)rows * cols;
    int k = rows < cols ? rows : cols;
    float *in = malloc((size_t)n * 4), *out = malloc((size_t)n * 4), *q = malloc((size_t)n * 4);
    float *sv = malloc((size_t)k * 4);
    for (int64_t i = 0; i < n; i++) in[i] = ob_rng_normal(13, (uint64_t)cols, (uint64_t)i);
    ns_batch(dev, 1, rows, cols, ob_ns_muon_abc, 5, in, out);
    CHECK_OK(dev->ops->svd_polar(dev, rows, cols, out, sv, NULL, &e), &e);
    /* a well-conditioned matrix: every singular value lands in Muon's band around 1 */
    CHECK_MSG(sv[0] < 1.25f && sv[k - 1] > 0.6f, "%dx%d: singular values in [%g, %g]", rows, cols,
              (double)sv[k - 1], (double)sv[0]);
    CHECK_OK(dev->ops->svd_polar(dev, rows, cols, in, sv, q, &e), &e);
    double err = rel_err(out, q, n);
    CHECK_MSG(err > 0.01 && err < 0.35, "%dx%d: Muon 5 steps is %.3g from U V^T", rows, cols, err);
    free(in);
    free(out);
    free(q);
    free(sv);
}

/* syrk_strided_batched against gemm_strided_batched: C = alpha op(A) op(A)^T + beta C,
 * both triangles, a batch with padding strides, both transposes. */
static void test_syrk_slot(ob_device *dev)
{
    ob_err e;
    const ob_backend_ops *ops = dev->ops;
    if (!OB_HAS(dev, syrk_strided_batched)) return;
    for (int trans = 0; trans < 2; trans++) {
        const int n = 45, k = 70, batch = 3, lda = trans ? n : k, ldc = n + 3;
        const int64_t sa = (int64_t)k * n + 5, sc = (int64_t)n * ldc + 7;
        float *A = malloc((size_t)(batch * sa) * 4), *C1 = malloc((size_t)(batch * sc) * 4),
              *C2 = malloc((size_t)(batch * sc) * 4);
        for (int64_t i = 0; i < batch * sa; i++) A[i] = ob_rng_normal(3, (uint64_t)trans, (uint64_t)i);
        for (int64_t i = 0; i < batch * sc; i++) C1[i] = C2[i] = ob_rng_normal(4, 0, (uint64_t)i);
        for (int b = 0; b < batch; b++) /* beta C must be symmetric for the result to be */
            for (int i = 0; i < n; i++)
                for (int j = 0; j < i; j++) C1[b * sc + i * ldc + j] = C2[b * sc + i * ldc + j] = C1[b * sc + j * ldc + i];
        CHECK_OK(ops->syrk_strided_batched(dev, trans, n, k, 0.75f, A, lda, sa, 0.5f, C1, ldc, sc, batch, &e), &e);
        CHECK_OK(ops->gemm_strided_batched(dev, trans, !trans, n, n, k, 0.75f, A, lda, sa, A, lda, sa, 0.5f, C2, ldc,
                                           sc, batch, &e),
                 &e);
        double worst = 0;
        int asym = 0;
        for (int b = 0; b < batch; b++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < ldc; j++) {
                    int64_t at = b * sc + i * ldc + j;
                    double d = fabs((double)C1[at] - C2[at]);
                    if (d > worst) worst = d;
                    if (j < n && C1[at] != C1[b * sc + j * ldc + i]) asym++;
                }
        CHECK_MSG(worst < 1e-4, "syrk trans=%d: %g from gemm", trans, worst);
        CHECK_MSG(asym == 0, "syrk trans=%d: %d entries differ from their mirror", trans, asym);
        free(A);
        free(C1);
        free(C2);
    }
    /* Newton-Schulz through syrk equals Newton-Schulz through gemm alone */
    ob_backend_ops no_syrk = *ops;
    no_syrk.syrk_strided_batched = NULL;
    for (int tall = 0; tall < 2; tall++) {
        const int rows = tall ? 48 : 20, cols = tall ? 20 : 48, batch = 2;
        const int64_t n = (int64_t)rows * cols;
        float *in = malloc((size_t)(batch * n) * 4), *o1 = malloc((size_t)(batch * n) * 4),
              *o2 = malloc((size_t)(batch * n) * 4);
        for (int64_t i = 0; i < batch * n; i++) in[i] = ob_rng_normal(21, (uint64_t)tall, (uint64_t)i);
        ns_batch(dev, batch, rows, cols, ob_ns_muon_abc, 5, in, o1);
        dev->ops = &no_syrk; /* the same device (its allocation records) without the slot */
        ns_batch(dev, batch, rows, cols, ob_ns_muon_abc, 5, in, o2);
        dev->ops = ops;
        double err = rel_err(o1, o2, batch * n);
        CHECK_MSG(err < 1e-5, "%dx%d: syrk and gemm iterations differ by %g", rows, cols, err);
        free(in);
        free(o1);
        free(o2);
    }
}

static void test_tables(void)
{
    float abc[3];
    CHECK(ob_ns_root_lookup(2048, 2048, abc) && abc[0] == 3.4916f && abc[2] == 2.1095f);
    CHECK(ob_ns_root_lookup(2048, 8192, abc) && abc[1] == -3.6674f);
    CHECK(!ob_ns_root_lookup(1024, 1024, abc));
    char path[] = "/tmp/ob_coeffs_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ob_err e;
    const float mine[3] = {3.0f, -4.0f, 1.75f};
    CHECK_OK(ob_ns_coeffs_append(path, 512, 128, mine, "fitted for a test", &e), &e);
    const float newer[3] = {3.5f, -4.5f, 1.5f};
    CHECK_OK(ob_ns_coeffs_append(path, 128, 512, newer, NULL, &e), &e);
    ob_ns_coeff *t;
    int n;
    CHECK_OK(ob_ns_coeffs_load(path, &t, &n, &e), &e);
    CHECK(n == 2);
    CHECK(ob_ns_table_lookup(t, n, 128, 512, abc) && abc[0] == 3.5f); /* the last line wins */
    free(t);
    FILE *f = fopen(path, "a");
    fputs("64\t64\t1.0\n", f);
    fclose(f);
    CHECK(ob_ns_coeffs_load(path, &t, &n, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, ":4: 3 fields where 5 were expected: a line is 'rows<TAB>cols<TAB>a<TAB>b<TAB>c', "
                            "separated by tabs") != NULL,
              "%s", e.msg);
    /* the field at fault is named: a zero cols, or spaces instead of tabs */
    f = fopen(path, "w");
    fputs("4\t0\t3.4\t-4.7\t2\n", f);
    fclose(f);
    CHECK(ob_ns_coeffs_load(path, &t, &n, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, ":1: cols '0' must be a whole number >= 1") != NULL, "%s", e.msg);
    f = fopen(path, "w");
    fputs("4 4 3.4445 -4.775 2.0315\n", f);
    fclose(f);
    CHECK(ob_ns_coeffs_load(path, &t, &n, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, ":1: column 1: '4 4 3.4445 -4.775 2.0315' is not a number (fields are separated by "
                            "tabs, not spaces)") != NULL,
              "%s", e.msg);
    unlink(path);
    /* a folder: the file it wants */
    CHECK(ob_ns_coeffs_load("/tmp", &t, &n, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'/tmp' is a folder: give the tab-separated coefficient file") != NULL, "%s", e.msg);
}

/* gemm_strided_batched against a double reference, all four transposes,
 * padded leading dimensions and strides, alpha and beta: a batch of small
 * products (the CPU runs them one per thread), a batch of two larger ones
 * (each split over the threads) and a single product; on 1, 2 and 3
 * threads, and the same bits when called again. */
static void test_gemm_batched(ob_device *dev)
{
    ob_err e;
    static const int shapes[][4] = {{9, 17, 13, 11}, {2, 200, 180, 160}, {1, 33, 65, 17}}; /* batch m n k */
#ifdef _OPENMP
    const int threads0 = omp_get_max_threads();
#endif
    for (int th = 1; th <= 3; th++) {
#ifdef _OPENMP
        omp_set_num_threads(th);
#endif
        for (int si = 0; si < 3; si++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++) {
                    const int batch = shapes[si][0], m = shapes[si][1], n = shapes[si][2], k = shapes[si][3];
                    const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 5;
                    const int64_t sa = (int64_t)(ta ? k : m) * lda + 7, sb = (int64_t)(tb ? n : k) * ldb + 1,
                                  sc = (int64_t)m * ldc + 3;
                    float *A = malloc((size_t)(batch * sa) * 4), *B = malloc((size_t)(batch * sb) * 4),
                          *C = malloc((size_t)(batch * sc) * 4), *C0 = malloc((size_t)(batch * sc) * 4),
                          *again = malloc((size_t)(batch * sc) * 4);
                    for (int64_t i = 0; i < batch * sa; i++) A[i] = ob_rng_normal(31, (uint64_t)si, (uint64_t)i);
                    for (int64_t i = 0; i < batch * sb; i++) B[i] = ob_rng_normal(32, (uint64_t)si, (uint64_t)i);
                    for (int64_t i = 0; i < batch * sc; i++) C0[i] = ob_rng_normal(33, (uint64_t)si, (uint64_t)i);
                    memcpy(C, C0, (size_t)(batch * sc) * 4);
                    memcpy(again, C0, (size_t)(batch * sc) * 4);
                    CHECK_OK(dev->ops->gemm_strided_batched(dev, ta, tb, m, n, k, 0.75f, A, lda, sa, B, ldb, sb, 0.5f,
                                                            C, ldc, sc, batch, &e),
                             &e);
                    CHECK_OK(dev->ops->gemm_strided_batched(dev, ta, tb, m, n, k, 0.75f, A, lda, sa, B, ldb, sb, 0.5f,
                                                            again, ldc, sc, batch, &e),
                             &e);
                    double worst = 0;
                    int64_t untouched_changed = 0;
                    for (int b = 0; b < batch; b++)
                        for (int i = 0; i < m; i++)
                            for (int j = 0; j < ldc; j++) {
                                const int64_t at = b * sc + (int64_t)i * ldc + j;
                                if (j >= n) { /* padding: left alone */
                                    untouched_changed += C[at] != C0[at];
                                    continue;
                                }
                                double ref = 0.5 * C0[at], mag = fabs(ref);
                                for (int p = 0; p < k; p++) {
                                    double a = A[b * sa + (ta ? (int64_t)p * lda + i : (int64_t)i * lda + p)];
                                    double bb = B[b * sb + (tb ? (int64_t)j * ldb + p : (int64_t)p * ldb + j)];
                                    ref += 0.75 * a * bb;
                                    mag += fabs(0.75 * a * bb);
                                }
                                double err = fabs(C[at] - ref) / (mag + 1e-30);
                                if (err > worst) worst = err;
                            }
                    CHECK_MSG(worst < 1e-5, "gemm batch %d of %dx%dx%d ta=%d tb=%d on %d threads: %g from double",
                              batch, m, n, k, ta, tb, th, worst);
                    CHECK_MSG(untouched_changed == 0, "gemm batch %d of %dx%dx%d: %lld padding entries written",
                              batch, m, n, k, (long long)untouched_changed);
                    CHECK_MSG(!memcmp(C, again, (size_t)(batch * sc) * 4),
                              "gemm batch %d of %dx%dx%d ta=%d tb=%d on %d threads: not the same bits twice", batch, m,
                              n, k, ta, tb, th);
                    free(A);
                    free(B);
                    free(C);
                    free(C0);
                    free(again);
                }
    }
#ifdef _OPENMP
    omp_set_num_threads(threads0);
#endif
}

int main(void)
{
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    test_polar_slot(&dev);
    test_converges_to_polar(&dev, 16, 40);
    test_converges_to_polar(&dev, 40, 16);
    test_converges_to_polar(&dev, 24, 24);
    test_muon_band(&dev, 32, 128);
    test_muon_band(&dev, 128, 32);
    test_syrk_slot(&dev);
    test_gemm_batched(&dev);
#ifdef _OPENMP
    /* the syrk slot's batch of three one per thread, and in turn */
    omp_set_num_threads(3);
    test_syrk_slot(&dev);
    omp_set_num_threads(1);
    test_syrk_slot(&dev);
#endif
    test_tables();
    ob_device_close(&dev);
    return check_done();
}
