/* tests/test_soap_ops.c - the backend ops of SOAP's eigenbases on the CPU:
 * swap01 against a naive loop; sym_eigvecs (rows orthonormal, S A S^T
 * diagonal with a descending diagonal, the zero matrix); qr_orth (rows
 * orthonormal, S M upper triangular, equal to modified Gram-Schmidt in double
 * up to the sign of each row); eig_order (random values, ties, NaN and
 * infinities, n = 1; always a permutation). */
#include <string.h>

#include "check.h"
#include "dev_io.h"
#include "core/rng.h"
#include "kernels/backend.h"

static ob_device dev;
static ob_err err;


static void randn(float *x, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) x[i] = ob_rng_normal(seed, OB_STREAM_MISC, (uint64_t)i);
}

/* max |S S^T - I| over (n,n) */
static double orth_err(const float *S, int n)
{
    double m = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double d = 0;
            for (int i = 0; i < n; i++) d += (double)S[a * n + i] * S[b * n + i];
            d -= a == b;
            if (fabs(d) > m) m = fabs(d);
        }
    return m;
}

/* ---- swap01 ---------------------------------------------------------------------- */

static void test_swap01(void)
{
    const int64_t shapes[][3] = {{1, 5, 3}, {4, 6, 1}, {1, 1, 1}, {3, 1, 4}, {1, 7, 1}, {5, 9, 17}, {2, 3, 64}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int64_t A = shapes[k][0], n = shapes[k][1], B = shapes[k][2], tot = A * n * B;
        float *h = malloc((size_t)tot * sizeof *h), *want = malloc((size_t)tot * sizeof *want);
        float *got = malloc((size_t)tot * sizeof *got);
        randn(h, tot, 10 + k);
        for (int64_t a = 0; a < A; a++)
            for (int64_t i = 0; i < n; i++)
                for (int64_t b = 0; b < B; b++) want[(i * A + a) * B + b] = h[(a * n + i) * B + b];
        float *src = dev_put(&dev, h, tot), *dst = dev_put(&dev, NULL, tot);
        CHECK_OK(dev.ops->swap01(&dev, dst, src, A, n, B, &err), &err);
        dev_get(&dev, got, dst, tot);
        CHECK_MSG(memcmp(got, want, (size_t)tot * sizeof *got) == 0, "swap01 (%lld, %lld, %lld) differs",
                  (long long)A, (long long)n, (long long)B);
        dev_get(&dev, got, src, tot);
        CHECK_MSG(memcmp(got, h, (size_t)tot * sizeof *got) == 0, "swap01 changed src");
        ob_dev_free(&dev, src);
        ob_dev_free(&dev, dst);
        free(h);
        free(want);
        free(got);
    }
}

/* ---- sym_eigvecs ------------------------------------------------------------------- */

static void check_eig(const float *A, int n, const char *what)
{
    size_t nn = (size_t)n * n;
    float *S = malloc(nn * sizeof *S), *Ab = malloc(nn * sizeof *Ab);
    float *dA = dev_put(&dev, A, (int64_t)nn), *dS = dev_put(&dev, NULL, (int64_t)nn);
    CHECK_OK(dev.ops->sym_eigvecs(&dev, n, dA, dS, &err), &err);
    dev_get(&dev, S, dS, (int64_t)nn);
    dev_get(&dev, Ab, dA, (int64_t)nn);
    CHECK_MSG(memcmp(Ab, A, nn * sizeof *A) == 0, "sym_eigvecs %s n=%d: A changed", what, n);
    double oe = orth_err(S, n);
    CHECK_MSG(oe < 1e-5, "sym_eigvecs %s n=%d: |S S^T - I| = %g", what, n, oe);
    /* D = S A S^T: diagonal (to float accuracy relative to ||A||), descending */
    double fro = 0;
    for (size_t i = 0; i < nn; i++) fro += (double)A[i] * A[i];
    fro = sqrt(fro);
    double *SA = malloc(nn * sizeof *SA), *D = malloc(nn * sizeof *D);
    for (int a = 0; a < n; a++)
        for (int j = 0; j < n; j++) {
            double d = 0;
            for (int i = 0; i < n; i++) d += (double)S[a * n + i] * A[(size_t)i * n + j];
            SA[(size_t)a * n + j] = d;
        }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double d = 0;
            for (int j = 0; j < n; j++) d += SA[(size_t)a * n + j] * S[b * n + j];
            D[(size_t)a * n + b] = d;
        }
    double off = 0, rise = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b && fabs(D[(size_t)a * n + b]) > off) off = fabs(D[(size_t)a * n + b]);
    for (int a = 0; a + 1 < n; a++) {
        double r = D[(size_t)(a + 1) * n + a + 1] - D[(size_t)a * n + a];
        if (r > rise) rise = r;
    }
    double tol = 1e-5 * fro + 1e-30;
    CHECK_MSG(off <= tol, "sym_eigvecs %s n=%d: off-diagonal of S A S^T %g (||A|| %g)", what, n, off, fro);
    CHECK_MSG(rise <= tol, "sym_eigvecs %s n=%d: eigenvalues not descending (rise %g)", what, n, rise);
    ob_dev_free(&dev, dA);
    ob_dev_free(&dev, dS);
    free(S);
    free(Ab);
    free(SA);
    free(D);
}

static void test_sym_eigvecs(void)
{
    const int ns[] = {1, 2, 7, 64};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k], m = n + 3;
        float *G = malloc((size_t)n * m * sizeof *G), *A = malloc((size_t)n * n * sizeof *A);
        randn(G, (int64_t)n * m, 40 + k);
        /* A = G G^T / m, exactly symmetric */
        for (int a = 0; a < n; a++)
            for (int b = a; b < n; b++) {
                double d = 0;
                for (int i = 0; i < m; i++) d += (double)G[a * m + i] * G[b * m + i];
                A[a * n + b] = A[b * n + a] = (float)(d / m);
            }
        check_eig(A, n, "random PSD");
        /* a rank-one matrix: a repeated zero eigenvalue */
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) A[a * n + b] = G[a * m] * G[b * m];
        check_eig(A, n, "rank one");
        free(G);
        free(A);
    }
    /* the zero matrix: A + 1e-30 I, any orthonormal basis */
    float Z[25] = {0};
    check_eig(Z, 5, "zero");
    /* a NaN or an infinity: all NaN and no error, at every size (LAPACK alone
     * fails for some sizes and returns NaN for others) */
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (int inf = 0; inf < 2; inf++) {
            const int m = ns[k];
            const int64_t mm = (int64_t)m * m;
            float *A = calloc((size_t)mm, sizeof *A);
            for (int i = 0; i < m; i++) A[(int64_t)i * m + i] = 1.0f + i;
            A[mm - 1] = inf ? INFINITY : NAN;
            float *dN = dev_put(&dev, A, mm), *dO = dev_put(&dev, NULL, mm);
            CHECK_OK(dev.ops->sym_eigvecs(&dev, m, dN, dO, &err), &err);
            dev_get(&dev, A, dO, mm);
            int64_t n_nan = 0;
            for (int64_t i = 0; i < mm; i++) n_nan += isnan(A[i]) != 0;
            CHECK_MSG(n_nan == mm, "sym_eigvecs n=%d with %s: %lld of %lld NaN", m, inf ? "inf" : "NaN",
                      (long long)n_nan, (long long)mm);
            ob_dev_free(&dev, dN);
            ob_dev_free(&dev, dO);
            free(A);
        }
    /* n > 4096: LAPACK's float workspace query would round ssyevd's size down
     * (and fail); a diagonal matrix with distinct entries, largest last: row
     * j of S is +-e_(n-1-j) */
    const int n = 4097;
    float *D = calloc((size_t)n * n, sizeof *D);
    for (int i = 0; i < n; i++) D[(size_t)i * n + i] = 1.0f + (float)i / n;
    float *dA = dev_put(&dev, D, (int64_t)n * n), *dS = dev_put(&dev, NULL, (int64_t)n * n);
    ob_status st = dev.ops->sym_eigvecs(&dev, n, dA, dS, &err);
    CHECK_MSG(st == OB_OK, "sym_eigvecs n = %d: %s", n, err.msg);
    if (st == OB_OK) {
        dev_get(&dev, D, dS, (int64_t)n * n);
        double worst = 0;
        for (int j = 0; j < n; j++) worst = fmax(worst, fabs(fabs(D[(size_t)j * n + (n - 1 - j)]) - 1.0));
        CHECK_MSG(worst < 1e-5, "n = %d: the eigenvectors of a diagonal matrix are off by %g", n, worst);
    }
    ob_dev_free(&dev, dA);
    ob_dev_free(&dev, dS);
    free(D);
}

/* ---- qr_orth ---------------------------------------------------------------------- */

static void test_qr_orth(void)
{
    const int ns[] = {1, 5, 64};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k];
        size_t nn = (size_t)n * n;
        float *W = malloc(nn * sizeof *W), *S = malloc(nn * sizeof *S), *Wb = malloc(nn * sizeof *Wb);
        randn(W, (int64_t)nn, 60 + k);
        float *dW = dev_put(&dev, W, (int64_t)nn), *dS = dev_put(&dev, NULL, (int64_t)nn);
        CHECK_OK(dev.ops->qr_orth(&dev, n, dW, dS, &err), &err);
        dev_get(&dev, S, dS, (int64_t)nn);
        dev_get(&dev, Wb, dW, (int64_t)nn);
        CHECK_MSG(memcmp(Wb, W, nn * sizeof *W) == 0, "qr_orth n=%d: W changed", n);
        double oe = orth_err(S, n);
        CHECK_MSG(oe < 1e-5, "qr_orth n=%d: |S S^T - I| = %g", n, oe);
        /* M[r][c] = W[c][r] (column c of M is row c of W) */
        double fro = 0;
        for (size_t i = 0; i < nn; i++) fro += (double)W[i] * W[i];
        fro = sqrt(fro);
        double low = 0;
        for (int j = 0; j < n; j++)
            for (int c = 0; c < j; c++) {
                double d = 0; /* (S M)[j][c] */
                for (int r = 0; r < n; r++) d += (double)S[j * n + r] * W[c * n + r];
                if (fabs(d) > low) low = fabs(d);
            }
        CHECK_MSG(low <= 1e-5 * fro, "qr_orth n=%d: S M below the diagonal %g (||M|| %g)", n, low, fro);
        /* modified Gram-Schmidt in double on the columns of M (the rows of W) */
        double *q = malloc(nn * sizeof *q);
        for (size_t i = 0; i < nn; i++) q[i] = W[i];
        for (int j = 0; j < n; j++) {
            double *qj = q + (size_t)j * n, nrm = 0;
            for (int r = 0; r < n; r++) nrm += qj[r] * qj[r];
            nrm = sqrt(nrm);
            for (int r = 0; r < n; r++) qj[r] /= nrm;
            for (int c = j + 1; c < n; c++) {
                double *qc = q + (size_t)c * n, d = 0;
                for (int r = 0; r < n; r++) d += qj[r] * qc[r];
                for (int r = 0; r < n; r++) qc[r] -= d * qj[r];
            }
        }
        double worst = 0;
        for (int j = 0; j < n; j++) {
            double d = 0;
            for (int r = 0; r < n; r++) d += S[j * n + r] * q[(size_t)j * n + r];
            double sg = d < 0 ? -1.0 : 1.0;
            for (int r = 0; r < n; r++) {
                double diff = fabs(S[j * n + r] - sg * q[(size_t)j * n + r]);
                if (diff > worst) worst = diff;
            }
        }
        CHECK_MSG(worst < 1e-4, "qr_orth n=%d: differs from Gram-Schmidt by %g (up to sign)", n, worst);
        free(q);
        ob_dev_free(&dev, dW);
        ob_dev_free(&dev, dS);
        free(W);
        free(S);
        free(Wb);
    }
}

/* ---- eig_order -------------------------------------------------------------------- */

/* a ranks before b: larger, NaN below every number, ties by index */
static int before(double a, int ia, double b, int ib)
{
    if (isnan(a) != isnan(b)) return isnan(b);
    if (!isnan(a) && a != b) return a > b;
    return ia < ib;
}

/* S, T (n,n) with est[j] = v[j] (S row j = e_0, T row j = v[j] e_0, plus noise
 * that cancels exactly: S[j][1] = 1, T[j][1] = 0) or random. */
static void check_order(int n, const double *v, uint64_t seed, const char *what)
{
    size_t nn = (size_t)n * n;
    float *S = calloc(nn, sizeof *S), *T = calloc(nn, sizeof *T);
    double *est = malloc((size_t)n * sizeof *est);
    if (v) {
        for (int j = 0; j < n; j++) {
            S[(size_t)j * n] = 1.0f;
            T[(size_t)j * n] = (float)v[j];
            if (n > 1) S[(size_t)j * n + 1] = 1.0f;
        }
    } else {
        randn(S, (int64_t)nn, seed);
        randn(T, (int64_t)nn, seed + 1);
    }
    for (int j = 0; j < n; j++) {
        double d = 0;
        for (int i = 0; i < n; i++) d += (double)S[(size_t)j * n + i] * T[(size_t)j * n + i];
        est[j] = d;
    }
    int32_t *perm = NULL;
    CHECK_OK(ob_dev_alloc(&dev, (size_t)n * sizeof *perm, (void **)&perm, &err), &err);
    float *dS = dev_put(&dev, S, (int64_t)nn), *dT = dev_put(&dev, T, (int64_t)nn);
    int32_t *hp = malloc((size_t)n * sizeof *hp);
    for (int j = 0; j < n; j++) hp[j] = -1;
    CHECK_OK(dev.ops->eig_order(&dev, n, dS, dT, perm, &err), &err);
    CHECK_OK(dev.ops->download(&dev, hp, perm, (size_t)n * sizeof *hp, &err), &err);
    /* a permutation */
    char *seen = calloc((size_t)n, 1);
    int ok = 1;
    for (int r = 0; r < n; r++) {
        if (hp[r] < 0 || hp[r] >= n || seen[hp[r]]) {
            ok = 0;
            break;
        }
        seen[hp[r]] = 1;
    }
    CHECK_MSG(ok, "eig_order %s n=%d: not a permutation", what, n);
    /* in order: each rank before the next */
    if (ok)
        for (int r = 0; r + 1 < n; r++)
            if (!before(est[hp[r]], hp[r], est[hp[r + 1]], hp[r + 1])) {
                CHECK_MSG(0, "eig_order %s n=%d: rank %d (j %d, est %g) before rank %d (j %d, est %g)", what, n, r,
                          hp[r], est[hp[r]], r + 1, hp[r + 1], est[hp[r + 1]]);
                break;
            }
    free(seen);
    free(hp);
    free(est);
    free(S);
    free(T);
    ob_dev_free(&dev, dS);
    ob_dev_free(&dev, dT);
    ob_dev_free(&dev, perm);
}

static void test_eig_order(void)
{
    check_order(1, NULL, 80, "random");
    check_order(2, NULL, 81, "random");
    check_order(50, NULL, 82, "random");
    double one[1] = {3.0};
    check_order(1, one, 0, "n=1");
    double nan1[1] = {NAN};
    check_order(1, nan1, 0, "n=1 NaN");
    double ties[9] = {1, 2, 1, 3, 2, 1, 0, -0.0, 3};
    check_order(9, ties, 0, "ties");
    double nans[10] = {NAN, 1, -INFINITY, NAN, INFINITY, -5, NAN, 1, -INFINITY, 0};
    check_order(10, nans, 0, "NaN and infinities");
    double alln[4] = {NAN, NAN, NAN, NAN};
    check_order(4, alln, 0, "all NaN");
    /* the exact expected order of the NaN case */
    {
        int n = 10;
        float *S = calloc(100, sizeof *S), *T = calloc(100, sizeof *T);
        for (int j = 0; j < n; j++) {
            S[j * n] = 1.0f;
            T[j * n] = (float)nans[j];
        }
        int32_t perm[10];
        CHECK_OK(dev.ops->eig_order(&dev, n, S, T, perm, &err), &err);
        const int32_t want[10] = {4, 1, 7, 9, 5, 2, 8, 0, 3, 6};
        CHECK_MSG(memcmp(perm, want, sizeof want) == 0, "eig_order: %d %d %d %d %d %d %d %d %d %d", perm[0], perm[1],
                  perm[2], perm[3], perm[4], perm[5], perm[6], perm[7], perm[8], perm[9]);
        free(S);
        free(T);
    }
}

/* ---- the batch forms ------------------------------------------------------------- */

/* sym_eigvecs_batch, qr_orth_batch and eig_order_batch give the bits of one
 * call per matrix (matrices at a spacing larger than n^2, several threads),
 * and a batch with a matrix the solver fails on fails, naming the op. */
static void test_solve_batches(void)
{
    if (!dev.ops->sym_eigvecs_batch || !dev.ops->qr_orth_batch || !dev.ops->eig_order_batch) return;
    const int n = 24, count = 7;
    const int64_t nn = (int64_t)n * n, sp = nn + 9, tot = sp * count;
    float *X = malloc((size_t)tot * sizeof *X), *Y = malloc((size_t)tot * sizeof *Y);
    randn(X, tot, 91);
    randn(Y, tot, 92);
    for (int b = 0; b < count; b++) /* symmetric inputs for the eigensolver */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++) X[b * sp + i * n + j] = X[b * sp + j * n + i];
    float *dX = dev_put(&dev, X, tot), *dY = dev_put(&dev, Y, tot), *dB = dev_put(&dev, NULL, tot),
          *dO = dev_put(&dev, NULL, nn);
    float *got = malloc((size_t)tot * sizeof *got), *one = malloc((size_t)nn * sizeof *one);
    int32_t *perm = NULL, pone[24], pgot[24 * 7];
    CHECK_OK(ob_dev_alloc(&dev, (size_t)(n * count) * sizeof *perm, (void **)&perm, &err), &err);
    for (int op = 0; op < 2; op++) {
        const char *name = op ? "qr_orth" : "sym_eigvecs";
        CHECK_OK(op ? dev.ops->qr_orth_batch(&dev, n, count, dX, sp, dB, sp, &err)
                    : dev.ops->sym_eigvecs_batch(&dev, n, count, dX, sp, dB, sp, &err),
                 &err);
        dev_get(&dev, got, dB, tot);
        for (int b = 0; b < count; b++) {
            CHECK_OK(op ? dev.ops->qr_orth(&dev, n, dX + b * sp, dO, &err)
                        : dev.ops->sym_eigvecs(&dev, n, dX + b * sp, dO, &err),
                     &err);
            dev_get(&dev, one, dO, nn);
            CHECK_MSG(!memcmp(one, got + b * sp, (size_t)nn * sizeof *one),
                      "%s_batch: matrix %d differs from a lone call", name, b);
        }
    }
    CHECK_OK(dev.ops->eig_order_batch(&dev, n, count, dX, sp, dY, sp, perm, &err), &err);
    CHECK_OK(dev.ops->download(&dev, pgot, perm, sizeof pgot, &err), &err);
    for (int b = 0; b < count; b++) {
        CHECK_OK(dev.ops->eig_order(&dev, n, dX + b * sp, dY + b * sp, perm, &err), &err);
        CHECK_OK(dev.ops->download(&dev, pone, perm, sizeof pone, &err), &err);
        CHECK_MSG(!memcmp(pone, pgot + b * n, sizeof pone), "eig_order_batch: matrix %d differs from a lone call", b);
    }
    /* one NaN among good matrices: that matrix's basis is all NaN (whatever
     * LAPACK would do with it), the others as before */
    X[3 * sp + 5 * n + 7] = X[3 * sp + 7 * n + 5] = NAN;
    CHECK_OK(dev.ops->upload(&dev, dX, X, (size_t)tot * sizeof *X, &err), &err);
    float *nanb = malloc((size_t)tot * sizeof *nanb);
    CHECK_OK(dev.ops->sym_eigvecs_batch(&dev, n, count, dX, sp, dB, sp, &err), &err);
    dev_get(&dev, nanb, dB, tot);
    int n_nan = 0;
    for (int64_t i = 0; i < nn; i++) n_nan += isnan(nanb[3 * sp + i]) != 0;
    CHECK_MSG(n_nan == nn, "sym_eigvecs_batch with a NaN entry: %d of %d values NaN", n_nan, (int)nn);
    for (int b = 0; b < count; b++)
        if (b != 3) {
            CHECK_OK(dev.ops->sym_eigvecs(&dev, n, dX + b * sp, dO, &err), &err);
            dev_get(&dev, one, dO, nn);
            CHECK_MSG(!memcmp(nanb + b * sp, one, (size_t)nn * sizeof *one),
                      "sym_eigvecs_batch: matrix %d differs from a lone call beside a NaN matrix", b);
        }
    free(nanb);
    /* a matrix the op cannot take: the batch fails, and says which op (the
     * size is refused before anything is read) */
    ob_err e2 = {0};
    const ob_status st = dev.ops->sym_eigvecs_batch(&dev, 40000, 1, dX, sp, dB, sp, &e2);
    CHECK_MSG(st != OB_OK && strstr(e2.msg, "sym_eigvecs"), "sym_eigvecs_batch of a 40000x40000 matrix: status %d, '%s'",
              (int)st, e2.msg);
    ob_dev_free(&dev, dX);
    ob_dev_free(&dev, dY);
    ob_dev_free(&dev, dB);
    ob_dev_free(&dev, dO);
    ob_dev_free(&dev, perm);
    free(X);
    free(Y);
    free(got);
    free(one);
}

int main(void)
{
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &err), &err);
    test_swap01();
    test_sym_eigvecs();
    test_qr_orth();
    test_eig_order();
    test_solve_batches();
    ob_device_close(&dev);
    return check_done();
}
