/* tests/test_bf16.c - Newton-Schulz in bf16 (muon's ns_dtype=bf16) on the CPU:
 * the rounding to bf16 against a reference that picks the nearer of the two
 * bf16 neighbours in double (ties to the even one, past the largest to
 * infinity, NaN to 0x7fc0); the backend's round_bf16 op; batched_normalize's
 * OB_NORM_BF16 against torch's steps written out (norm, clamp, divide, each
 * rounded); and the iteration against a plain-loop reference of torch's
 * (matmul, then addmm twice, each rounded once), which the backend's BLAS
 * sums in another order: all but a few elements equal, the rest one bf16
 * step apart, and the fp32 iteration far from it; and the products of bf16
 * values (gemm_sb_bf16: oneDNN where the CPU has bf16 units, OpenBLAS
 * elsewhere; ctest runs this program both ways, test_bf16_openblas with
 * OB_CPU_BF16_GEMM=openblas). */
#include <float.h>
#include <string.h>

#include "check.h"
#include "core/bf16.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu.h"
#include "optimizers/newton_schulz.h"

static uint32_t fbits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bitsf(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The bf16 nearest x, by distance in double. */
static uint32_t ref_bf16_bits(float x)
{
    if (isnan(x)) return 0x7fc00000u;
    const uint32_t u = fbits(x), lo = u & 0xffff0000u, hi = lo + 0x10000u; /* toward and away from zero */
    if ((u & 0x7fffffffu) == (lo & 0x7fffffffu)) return u;
    const double vlo = bitsf(lo);
    /* past the largest bf16 the next value up is 2^128 (infinity's place) */
    const double vhi = (hi & 0x7fffffffu) == 0x7f800000u ? copysign(ldexp(1.0, 128), x) : (double)bitsf(hi);
    const double dlo = fabs((double)x - vlo), dhi = fabs(vhi - (double)x);
    if (dlo != dhi) return dlo < dhi ? lo : hi;
    return (lo >> 16) & 1u ? hi : lo;
}

static void test_rounding(void)
{
    static const uint32_t low[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1234, 0xc000};
    int64_t bad = 0, n = 0;
    for (uint32_t h = 0; h < 0x10000u; h++)
        for (size_t k = 0; k < sizeof low / sizeof low[0]; k++) {
            const float x = bitsf(h << 16 | low[k]);
            const uint32_t got = fbits(ob_bf16_round(x)), want = ref_bf16_bits(x);
            n++;
            if (got != want && bad++ < 5) fprintf(stderr, "bf16(%08x) = %08x, want %08x\n", fbits(x), got, want);
        }
    CHECK_MSG(bad == 0, "%lld of %lld patterns rounded wrong", (long long)bad, (long long)n);
    /* the cases by name */
    CHECK(fbits(ob_bf16_round(1.0f + 0x1p-8f)) == fbits(1.0f));                 /* tie, to even */
    CHECK(fbits(ob_bf16_round(1.0f + 3 * 0x1p-8f)) == fbits(1.0f + 0x1p-6f));   /* tie, up to even */
    CHECK(isinf(ob_bf16_round(FLT_MAX)) && ob_bf16_round(FLT_MAX) > 0);
    CHECK(isinf(ob_bf16_round(-INFINITY)) && ob_bf16_round(-INFINITY) < 0);
    CHECK(fbits(ob_bf16_round(-NAN)) == 0x7fc00000u);
    CHECK(fbits(ob_bf16_round(-0.0f)) == 0x80000000u);
    CHECK(fbits(ob_bf16_round(bitsf(0x00018000u))) == 0x00020000u); /* a subnormal tie, to even */
}

static void test_round_op(ob_device *dev)
{
    ob_err e;
    const int64_t n = 100003; /* past the parallel threshold, odd */
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = bitsf((uint32_t)ob_philox(3, 1, (uint64_t)i).v[0]);
    float *want = malloc((size_t)n * sizeof *want);
    for (int64_t i = 0; i < n; i++) want[i] = bitsf(ref_bf16_bits(x[i]));
    CHECK_OK(dev->ops->round_bf16(dev, x, n, &e), &e);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += fbits(x[i]) != fbits(want[i]);
    CHECK_MSG(bad == 0, "round_bf16: %lld of %lld wrong", (long long)bad, (long long)n);
    free(x);
    free(want);
}

/* torch: X = u.bfloat16(); X.div_(X.norm().clamp(min=eps)) (add_eps: + eps) */
static void ref_normalize(const float *u, float *x, int64_t n, float eps, int add_eps)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = bitsf(ref_bf16_bits(u[i]));
        s += (double)x[i] * x[i];
    }
    const float norm = bitsf(ref_bf16_bits((float)sqrt(s)));
    const float d = bitsf(ref_bf16_bits(add_eps ? norm + eps : fmaxf(norm, eps)));
    for (int64_t i = 0; i < n; i++) x[i] = bitsf(ref_bf16_bits(x[i] / d));
}

static void test_normalize(ob_device *dev)
{
    ob_err e;
    enum { B = 3, N = 37, S = 48 };
    float x[B * S], want[B * S];
    for (int add = 0; add < 2; add++) {
        for (int i = 0; i < B * S; i++) x[i] = 3.0f * ob_rng_normal(9, 2, (uint64_t)i);
        for (int i = 0; i < N; i++) x[2 * S + i] *= 1e-9f; /* below eps = 1e-7 once squared and summed */
        for (int b = 0; b < B; b++) ref_normalize(x + b * S, want + b * S, N, 1e-7f, add);
        CHECK_OK(dev->ops->batched_normalize(dev, x, B, N, S, 1e-7f, OB_NORM_BF16 | (add ? OB_NORM_ADD_EPS : 0), &e),
                 &e);
        int bad = 0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < N; i++) bad += fbits(x[b * S + i]) != fbits(want[b * S + i]);
        CHECK_MSG(bad == 0, "normalize bf16 (add_eps %d): %d of %d differ", add, bad, B * N);
    }
}

/* torch.optim.Muon's iteration on a wide (r <= c) bf16 matrix, in plain
 * loops: A = X X^T; B = addmm(A, A, A, beta=b, alpha=c); X = addmm(X, B, X,
 * beta=a); each rounded once. */
static void ref_ns_wide(float *x, int r, int c, const float abc[3], int steps)
{
    float *A = malloc(sizeof(float) * (size_t)(r * r)), *Bm = malloc(sizeof(float) * (size_t)(r * r));
    float *x2 = malloc(sizeof(float) * (size_t)(r * c));
    for (int it = 0; it < steps; it++) {
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++) {
                float s = 0;
                for (int k = 0; k < c; k++) s += x[i * c + k] * x[j * c + k];
                A[i * r + j] = ob_bf16_round(s);
            }
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++) {
                float s = 0;
                for (int k = 0; k < r; k++) s += A[i * r + k] * A[k * r + j];
                Bm[i * r + j] = ob_bf16_round(abc[2] * s + abc[1] * A[i * r + j]);
            }
        for (int i = 0; i < r; i++)
            for (int j = 0; j < c; j++) {
                float s = 0;
                for (int k = 0; k < r; k++) s += Bm[i * r + k] * x[k * c + j];
                x2[i * c + j] = ob_bf16_round(s + abc[0] * x[i * c + j]);
            }
        memcpy(x, x2, sizeof(float) * (size_t)(r * c));
    }
    free(A);
    free(Bm);
    free(x2);
}

/* The backend's bf16 iteration (bf16 = 0: fp32) on `batch` rows x cols
 * matrices from in, normalized as muon does; out row-major. */
static void ns_backend(ob_device *dev, int batch, int rows, int cols, const float *in, int bf16, float *out)
{
    ob_err e;
    const float abc[3] = {3.4445f, -4.7750f, 2.0315f};
    const int64_t n = (int64_t)rows * cols, sx = ob_ns_stride(n);
    const int s = rows < cols ? rows : cols;
    const int64_t ss = ob_ns_stride((int64_t)s * s);
    float *x = calloc((size_t)(batch * sx), 4), *x2 = calloc((size_t)(batch * sx), 4);
    float *a = calloc((size_t)(batch * ss), 4), *b = calloc((size_t)(batch * ss), 4), *res = NULL;
    for (int k = 0; k < batch; k++) memcpy(x + k * sx, in + k * n, (size_t)n * 4);
    CHECK_OK(dev->ops->batched_normalize(dev, x, batch, n, sx, 1e-7f, bf16 ? OB_NORM_BF16 : 0, &e), &e);
    CHECK_OK(ob_ns_iterate(dev, x, x2, a, b, batch, rows, cols, sx, ss, abc, 1, 5, bf16, &res, &e), &e);
    for (int k = 0; k < batch && res; k++) memcpy(out + k * n, res + k * sx, (size_t)n * 4);
    free(x);
    free(x2);
    free(a);
    free(b);
}

/* The reference of one (rows x cols) matrix: torch transposes a tall one. */
static void ns_reference(int rows, int cols, const float *in, float *out)
{
    const float abc[3] = {3.4445f, -4.7750f, 2.0315f};
    const int tall = rows > cols, r = tall ? cols : rows, c = tall ? rows : cols;
    float *w = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) w[tall ? j * c + i : i * c + j] = in[i * cols + j];
    ref_normalize(w, w, (int64_t)rows * cols, 1e-7f, 0);
    ref_ns_wide(w, r, c, abc, 5);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) out[i * cols + j] = tall ? w[j * c + i] : w[i * c + j];
    free(w);
}

/* gemm_sb_bf16 on bf16 values against a double reference: the exact
 * products summed in float, in any order, so within a few float roundings
 * of max |C| per term count; for every transpose, alpha, a batch with
 * padded strides, and the Gram products (A == B, one side transposed) that
 * the OpenBLAS path hands to ssyrk and the oneDNN path computes a triangle
 * of tiles of (the rest mirrored: they must come out symmetric). */
static void test_gemm_bf16(ob_device *dev)
{
    ob_err e;
    static const int cases[][7] = {/* ta tb m n k batch gram */
                                   {0, 0, 7, 5, 9, 1, 0}, {0, 1, 6, 6, 40, 3, 1}, {1, 0, 6, 6, 40, 2, 1},
                                   {1, 1, 4, 9, 3, 2, 0}, {0, 0, 33, 17, 65, 4, 0}, {0, 1, 12, 12, 12, 1, 0},
                                   /* Gram products large enough to be tiled on the oneDNN path:
                                    * 4 tiles of 195 rows and a last of 192; 2 of 259 and 258, tall
                                    * (op(A) = A^T), a batch of 2 */
                                   {0, 1, 777, 777, 19, 1, 1}, {1, 0, 517, 517, 23, 2, 1}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const int ta = cases[t][0], tb = cases[t][1], m = cases[t][2], n = cases[t][3], k = cases[t][4];
        const int batch = cases[t][5], gram = cases[t][6];
        const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
        const int64_t sa = (int64_t)(ta ? k : m) * lda + 5, sb = (int64_t)(tb ? n : k) * ldb + 7;
        const int64_t sc = (int64_t)m * ldc + 1;
        float *A = malloc(sizeof(float) * (size_t)(batch * sa)), *B = gram ? A : malloc(sizeof(float) * (size_t)(batch * sb));
        float *C = malloc(sizeof(float) * (size_t)(batch * sc));
        for (int64_t i = 0; i < batch * sa; i++) A[i] = ob_bf16_round(ob_rng_normal(31, t, (uint64_t)i));
        if (!gram)
            for (int64_t i = 0; i < batch * sb; i++) B[i] = ob_bf16_round(ob_rng_normal(32, t, (uint64_t)i));
        for (int64_t i = 0; i < batch * sc; i++) C[i] = -7.0f; /* gaps must stay */
        const float alpha = t % 2 ? 2.0315f : 1.0f;
        const int64_t sbb = gram ? sa : sb;
        const int ldbb = gram ? lda : ldb;
        CHECK_OK(dev->ops->gemm_sb_bf16(dev, ta, tb, m, n, k, alpha, A, lda, sa, B, ldbb, sbb, 0.0f, C, ldc, sc, batch,
                                        &e),
                 &e);
        double worst = 0, scale = 0;
        int gaps_kept = 1;
        for (int b = 0; b < batch; b++)
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int l = 0; l < k; l++) {
                        const float av = A[b * sa + (ta ? (int64_t)l * lda + i : (int64_t)i * lda + l)];
                        const float bv = B[b * sbb + (tb ? (int64_t)j * ldbb + l : (int64_t)l * ldbb + j)];
                        s += (double)av * bv;
                    }
                    s *= alpha;
                    worst = fmax(worst, fabs(s - C[b * sc + (int64_t)i * ldc + j]));
                    scale = fmax(scale, fabs(s));
                }
                for (int j = n; j < ldc && (int64_t)i * ldc + j < sc; j++) gaps_kept &= C[b * sc + (int64_t)i * ldc + j] == -7.0f;
            }
        CHECK_MSG(worst <= 4 * k * 0x1p-24 * fmax(scale, 1), "gemm_sb_bf16 case %zu: worst %g (max |C| %g)", t, worst,
                  scale);
        CHECK_MSG(gaps_kept, "gemm_sb_bf16 case %zu wrote between rows", t);
        int symmetric = 1;
        for (int b = 0; gram && b < batch; b++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < i; j++)
                    symmetric &= C[b * sc + (int64_t)i * ldc + j] == C[b * sc + (int64_t)j * ldc + i];
        CHECK_MSG(symmetric, "gemm_sb_bf16 case %zu: a Gram product is not symmetric", t);
        free(A);
        if (!gram) free(B);
        free(C);
    }
    CHECK(dev->ops->gemm_sb_bf16(dev, 0, 0, 2, 2, 2, 1.0f, (float[4]){0}, 2, 4, (float[4]){0}, 2, 4, 1.0f,
                                 (float[4]){0}, 2, 4, 1, &e) == OB_ERR_INTERNAL); /* beta must be 0 */
}

static void test_iteration(ob_device *dev)
{
    static const int shapes[][3] = {{8, 8, 1}, {6, 20, 3}, {20, 6, 2}, {32, 48, 2}, {3, 40, 1}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        const int rows = shapes[t][0], cols = shapes[t][1], batch = shapes[t][2];
        const int64_t n = (int64_t)rows * cols, total = n * batch;
        float *in = malloc(sizeof(float) * (size_t)total), *got = malloc(sizeof(float) * (size_t)total);
        float *f32 = malloc(sizeof(float) * (size_t)total), *want = malloc(sizeof(float) * (size_t)total);
        for (int64_t i = 0; i < total; i++) in[i] = ob_rng_normal(21, (uint64_t)t, (uint64_t)i);
        for (int k = 0; k < batch; k++) ns_reference(rows, cols, in + k * n, want + k * n);
        ns_backend(dev, batch, rows, cols, in, 1, got);
        ns_backend(dev, batch, rows, cols, in, 0, f32);
        int64_t same = 0, same32 = 0, onbf16 = 0;
        double worst = 0;
        for (int64_t i = 0; i < total; i++) {
            same += fbits(got[i]) == fbits(want[i]);
            same32 += fbits(f32[i]) == fbits(want[i]);
            onbf16 += (fbits(got[i]) & 0xffffu) == 0;
            worst = fmax(worst, fabs((double)got[i] - want[i]));
        }
        /* a float sum in another order rounds to the other bf16 neighbour now
         * and then, and the iteration carries it on: a few elements differ,
         * by little (the entries are about 0.5 to 1.5 in size, a bf16 step there
         * 2^-8 to 2^-7) */
        CHECK_MSG(onbf16 == total, "%dx%d: %lld of %lld results are not bf16 values", rows, cols,
                  (long long)(total - onbf16), (long long)total);
        CHECK_MSG(same >= total * 9 / 10, "%dx%d (batch %d): %lld of %lld equal the reference", rows, cols, batch,
                  (long long)same, (long long)total);
        CHECK_MSG(worst <= 0.05, "%dx%d: worst difference %g", rows, cols, worst);
        CHECK_MSG(same32 <= total / 10, "%dx%d: the fp32 iteration equals the bf16 reference in %lld of %lld", rows,
                  cols, (long long)same32, (long long)total);
        free(in);
        free(got);
        free(f32);
        free(want);
    }
}

int main(void)
{
    ob_device dev;
    ob_err e;
    test_rounding();
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    test_round_op(&dev);
    test_normalize(&dev);
    test_gemm_bf16(&dev);
    test_iteration(&dev);
    printf("bf16 products: %s\n", ob_cpu_bf16_gemm_available() ? "oneDNN (bf16 units)" : "OpenBLAS");
    ob_device_close(&dev);
    return check_done();
}
