/* tests/test_conv_cpu.c - the CPU's convolution-network kernels.
 *
 * The direct convolution (kernels/cpu/conv_direct.c), on each vector path the
 * CPU has (AVX-512, AVX2; forced with ob_cpu_conv_force): forward, input
 * gradient and kernel gradient (accumulated) against a plain double-precision
 * convolution and against the im2col path (ob_cpu_im2col, OpenBLAS sgemm,
 * ob_cpu_col2im, as workloads/cnn.c runs it), for channel counts that are and
 * are not multiples of the channel tiles (16, 32) and of 8 and 24, image
 * widths that are not multiples of the pixel tiles (6, 8), kernels 1x1, 3x3
 * and 5x5 with every padding 0..K-1, batches above 1, outputs of one
 * column, one row and one pixel, and an empty output;
 * bitwise equality across thread counts (1 and 2) and between the vector
 * paths; the choice of path (OB_CPU_CONV, ob_cpu_conv_choose and _force).
 * Without a vector path the direct kernels must say OB_ERR_UNSUPPORTED and
 * the test is skipped.
 *
 * Tolerance: an element is a sum of n products (plus, for the kernel
 * gradient, the value it accumulates onto). Computed in float in any order,
 * with or without FMA, it is within gamma(n) = n u / (1 - n u) (u = 2^-24)
 * times the sum of the terms' magnitudes, A, of the exact sum (Higham,
 * Accuracy and Stability of Numerical Algorithms, 2nd ed., sections 3.1 and
 * 4.2); the reference computes the sum and A in double (its own error is
 * some 1e-16 of A). So each path must be within gamma(n + 2) A of the
 * reference and two paths within twice that of each other, whatever order
 * they sum in; no tolerance is tuned to the results (the worst error seen,
 * as a fraction of the bound, is printed).
 *
 * The portable and AVX-512 builds of conv_cpu.c's layers (group norm, ReLU,
 * pooling, im2col/col2im, the image generator) give the same bits. */
#include <cblas.h>
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "core/rng.h"
#include "kernels/cpu/nn_cpu.h"

#define NPATH 3 /* ob_cpu_conv_path values */

static float *randn(int64_t n, uint64_t stream)
{
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = ob_rng_normal(7, stream, (uint64_t)i);
    return x;
}

static void *alloc(int64_t n, size_t size) { return calloc((size_t)(n > 0 ? n : 1), size); }

/* The vector paths this CPU and build run (AVX-512 first); returns how many. */
static int vector_paths(ob_cpu_conv_path p[2])
{
    int n = 0;
    if (ob_cpu_conv_choose("avx512") == OB_CPU_CONV_AVX512) p[n++] = OB_CPU_CONV_AVX512;
    if (ob_cpu_conv_choose("avx2") == OB_CPU_CONV_AVX2) p[n++] = OB_CPU_CONV_AVX2;
    return n;
}

/* One convolution's shape: B, H, W, Cin, Cout, K, pad. */
typedef struct shape {
    int B, H, W, Cin, Cout, K, P;
} shape;

static int out_h(const shape *s) { return s->H + 2 * s->P - s->K + 1; }
static int out_w(const shape *s) { return s->W + 2 * s->P - s->K + 1; }

/* out, dinp, dw of a stride-1 convolution straight from the definition, in
 * double, and the sums of the magnitudes of their terms (outa, dinpa, dwa; dw
 * and dwa start at dw0, the value the kernel gradient accumulates onto). */
static void reference(const float *x, const float *w, const float *dout, const float *dw0, double *out,
                      double *dinp, double *dw, double *outa, double *dinpa, double *dwa, const shape *s)
{
    const int B = s->B, H = s->H, W = s->W, Cin = s->Cin, Cout = s->Cout, K = s->K, P = s->P;
    const int Ho = out_h(s), Wo = out_w(s);
    const int64_t no = (int64_t)B * Ho * Wo * Cout, nx = (int64_t)B * H * W * Cin, nw = (int64_t)Cout * Cin * K * K;
    for (int64_t i = 0; i < no; i++) out[i] = outa[i] = 0;
    for (int64_t i = 0; i < nx; i++) dinp[i] = dinpa[i] = 0;
    for (int64_t i = 0; i < nw; i++) dw[i] = dw0[i], dwa[i] = fabs(dw0[i]);
    for (int b = 0; b < B; b++)
        for (int oy = 0; oy < Ho; oy++)
            for (int ox = 0; ox < Wo; ox++)
                for (int co = 0; co < Cout; co++) {
                    int64_t o = (((int64_t)b * Ho + oy) * Wo + ox) * Cout + co;
                    for (int ky = 0; ky < K; ky++)
                        for (int kx = 0; kx < K; kx++) {
                            int iy = oy + ky - P, ix = ox + kx - P;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            for (int ci = 0; ci < Cin; ci++) {
                                int64_t i = (((int64_t)b * H + iy) * W + ix) * Cin + ci;
                                int64_t k = (((int64_t)co * Cin + ci) * K + ky) * K + kx;
                                double t = (double)x[i] * w[k], u = (double)dout[o] * w[k], v = (double)dout[o] * x[i];
                                out[o] += t, outa[o] += fabs(t);
                                dinp[i] += u, dinpa[i] += fabs(u);
                                dw[k] += v, dwa[k] += fabs(v);
                            }
                        }
                }
}

/* The im2col path as workloads/cnn.c runs it, the kernel as a (Cout, K*K*Cin)
 * matrix Wc: out = col(x) Wc^T, dinp = col2im(dout Wc), dw += dout^T col(x). */
static void im2col_path(const float *x, const float *w, const float *dout, float *out, float *dinp, float *dw,
                        const shape *s)
{
    ob_err e = {0};
    const int Cin = s->Cin, Cout = s->Cout, KK = s->K * s->K, KC = Cin * KK, rows = s->B * out_h(s) * out_w(s);
    float *wc = alloc((int64_t)Cout * KC, sizeof *wc), *dwc = alloc((int64_t)Cout * KC, sizeof *dwc);
    float *col = alloc((int64_t)rows * KC, sizeof *col), *dcol = alloc((int64_t)rows * KC, sizeof *dcol);
    for (int co = 0; co < Cout; co++)
        for (int ci = 0; ci < Cin; ci++)
            for (int t = 0; t < KK; t++) wc[(int64_t)co * KC + t * Cin + ci] = w[((int64_t)co * Cin + ci) * KK + t];
    CHECK_OK(ob_cpu_im2col(NULL, col, x, s->B, s->H, s->W, Cin, s->K, 1, s->P, &e), &e);
    if (rows > 0) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, Cout, KC, 1, col, KC, wc, KC, 0, out, Cout);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, KC, Cout, 1, dout, Cout, wc, KC, 0, dcol, KC);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Cout, KC, rows, 1, dout, Cout, col, KC, 0, dwc, KC);
    }
    CHECK_OK(ob_cpu_col2im(NULL, dinp, dcol, s->B, s->H, s->W, Cin, s->K, 1, s->P, &e), &e);
    for (int co = 0; co < Cout; co++)
        for (int ci = 0; ci < Cin; ci++)
            for (int t = 0; t < KK; t++) dw[((int64_t)co * Cin + ci) * KK + t] += dwc[(int64_t)co * KC + t * Cin + ci];
    free(wc), free(dwc), free(col), free(dcol);
}

static double gamma_n(int n) /* gamma(n + 2): n terms, with room for the accumulated value */
{
    const double u = ldexp(1.0, -24);
    return (n + 2) * u / (1 - (n + 2) * u);
}

static double ratio(double d, double bound) { return d == 0 ? 0 : bound > 0 ? d / bound : INFINITY; }

/* The worst |a - ref| / (gamma A) over n elements; at most 1 passes. */
static double error_ratio(const float *a, const double *ref, const double *abssum, int64_t n, int nterms)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double r = ratio(fabs((double)a[i] - ref[i]), gamma_n(nterms) * abssum[i]);
        if (r > worst) worst = r;
    }
    return worst;
}

/* The worst |a - b| / (2 gamma A) of two float results; at most 1 passes. */
static double gap_ratio(const float *a, const float *b, const double *abssum, int64_t n, int nterms)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double r = ratio(fabs((double)a[i] - b[i]), 2 * gamma_n(nterms) * abssum[i]);
        if (r > worst) worst = r;
    }
    return worst;
}

/* A convolution's results: out (B,Ho,Wo,Cout), dinp (B,H,W,Cin), dw (Cout,Cin,K,K). */
typedef struct result {
    float *out, *dinp, *dw;
} result;

static result result_new(const shape *s)
{
    const int64_t no = (int64_t)s->B * out_h(s) * out_w(s) * s->Cout, nx = (int64_t)s->B * s->H * s->W * s->Cin;
    const int64_t nw = (int64_t)s->Cout * s->Cin * s->K * s->K;
    result r = {alloc(no, sizeof(float)), alloc(nx, sizeof(float)), alloc(nw, sizeof(float))};
    for (int64_t i = 0; i < nw; i++) r.dw[i] = 1.0f; /* the kernel gradient accumulates */
    return r;
}

static void result_free(result *r) { free(r->out), free(r->dinp), free(r->dw); }

/* The direct convolution on the path in effect. */
static void direct(result *r, const float *x, const float *w, const float *dout, const shape *s)
{
    ob_err e = {0};
    CHECK_OK(ob_cpu_conv_forward(NULL, r->out, x, w, s->B, s->H, s->W, s->Cin, s->Cout, s->K, 1, s->P, &e), &e);
    CHECK_OK(ob_cpu_conv_backward(NULL, r->dinp, r->dw, dout, x, w, s->B, s->H, s->W, s->Cin, s->Cout, s->K, 1, s->P,
                                  &e),
             &e);
}

static double worst[NPATH][3]; /* per path: the worst error ratio of out, dinp, dw */
static double worst_gap[3];     /* the worst gap ratio of a direct path and im2col */

static const char *shape_str(const shape *s)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "B %d H %d W %d Cin %d Cout %d K %d pad %d", s->B, s->H, s->W, s->Cin, s->Cout, s->K,
             s->P);
    return buf;
}

/* The direct paths p[0..np) and the im2col path against the reference and
 * each other for one shape. */
static void check_shape(const shape *s, const ob_cpu_conv_path *p, int np)
{
    const int Ho = out_h(s), Wo = out_w(s), KK = s->K * s->K;
    const int64_t no = (int64_t)s->B * Ho * Wo * s->Cout, nx = (int64_t)s->B * s->H * s->W * s->Cin;
    const int64_t nw = (int64_t)s->Cout * s->Cin * KK;
    const int nt[3] = {s->Cin * KK, s->Cout * KK, s->B * (Ho > 0 ? Ho : 0) * (Wo > 0 ? Wo : 0) + 1};
    float *x = randn(nx, 1), *w = randn(nw, 2), *dout = randn(no, 3);
    double *ref[3] = {alloc(no, sizeof(double)), alloc(nx, sizeof(double)), alloc(nw, sizeof(double))};
    double *mag[3] = {alloc(no, sizeof(double)), alloc(nx, sizeof(double)), alloc(nw, sizeof(double))};
    const int64_t n[3] = {no, nx, nw};
    static const char *const what[3] = {"forward", "input gradient", "kernel gradient"};
    result im = result_new(s), first = result_new(s);
    reference(x, w, dout, im.dw, ref[0], ref[1], ref[2], mag[0], mag[1], mag[2], s); /* dw0: im.dw, still ones */
    im2col_path(x, w, dout, im.out, im.dinp, im.dw, s);
    const float *imv[3] = {im.out, im.dinp, im.dw};
    for (int k = 0; k < 3; k++) {
        double r = error_ratio(imv[k], ref[k], mag[k], n[k], nt[k]);
        CHECK_MSG(r <= 1, "im2col %s: %g of the bound (%s)", what[k], r, shape_str(s));
        if (r > worst[OB_CPU_CONV_IM2COL][k]) worst[OB_CPU_CONV_IM2COL][k] = r;
    }
    for (int i = 0; i < np; i++) {
        const char *name = ob_cpu_conv_path_name(p[i]);
        ob_cpu_conv_force(name);
        result d = result_new(s);
        direct(&d, x, w, dout, s);
        float *dv[3] = {d.out, d.dinp, d.dw}, *fv[3] = {first.out, first.dinp, first.dw};
        for (int k = 0; k < 3; k++) {
            double r = error_ratio(dv[k], ref[k], mag[k], n[k], nt[k]);
            double g = gap_ratio(dv[k], imv[k], mag[k], n[k], nt[k]);
            CHECK_MSG(r <= 1, "%s %s: %g of the bound (%s)", name, what[k], r, shape_str(s));
            CHECK_MSG(g <= 1, "%s %s against im2col: %g of the bound (%s)", name, what[k], g, shape_str(s));
            if (r > worst[p[i]][k]) worst[p[i]][k] = r;
            if (g > worst_gap[k]) worst_gap[k] = g;
            if (i == 0)
                memcpy(fv[k], dv[k], (size_t)n[k] * sizeof(float));
            else
                CHECK_MSG(memcmp(fv[k], dv[k], (size_t)n[k] * sizeof(float)) == 0, "%s %s: not the bits of %s (%s)",
                          name, what[k], ob_cpu_conv_path_name(p[0]), shape_str(s));
        }
        /* no input gradient asked: the kernel gradient alone, the same bits */
        float *dw2 = alloc(nw, sizeof *dw2);
        ob_err e = {0};
        for (int64_t j = 0; j < nw; j++) dw2[j] = 1.0f;
        CHECK_OK(ob_cpu_conv_backward(NULL, NULL, dw2, dout, x, w, s->B, s->H, s->W, s->Cin, s->Cout, s->K, 1, s->P,
                                      &e),
                 &e);
        CHECK(memcmp(d.dw, dw2, (size_t)nw * sizeof *dw2) == 0);
        free(dw2);
        result_free(&d);
    }
    for (int k = 0; k < 3; k++) free(ref[k]), free(mag[k]);
    result_free(&im), result_free(&first);
    free(x), free(w), free(dout);
}

/* The same bits with 1 and 2 threads on path p. */
static void check_threads(const shape *s, ob_cpu_conv_path p)
{
#ifdef _OPENMP
    const int64_t nx = (int64_t)s->B * s->H * s->W * s->Cin, no = (int64_t)s->B * out_h(s) * out_w(s) * s->Cout;
    const int64_t nw = (int64_t)s->Cout * s->Cin * s->K * s->K;
    float *x = randn(nx, 4), *w = randn(nw, 5), *dout = randn(no, 6);
    result r[2];
    ob_cpu_conv_force(ob_cpu_conv_path_name(p));
    const int threads = omp_get_max_threads();
    for (int t = 0; t < 2; t++) {
        r[t] = result_new(s);
        omp_set_num_threads(t + 1);
        direct(&r[t], x, w, dout, s);
    }
    omp_set_num_threads(threads);
    CHECK_MSG(memcmp(r[0].out, r[1].out, (size_t)no * sizeof(float)) == 0, "%s forward (%s)",
              ob_cpu_conv_path_name(p), shape_str(s));
    CHECK_MSG(memcmp(r[0].dinp, r[1].dinp, (size_t)nx * sizeof(float)) == 0, "%s input gradient (%s)",
              ob_cpu_conv_path_name(p), shape_str(s));
    CHECK_MSG(memcmp(r[0].dw, r[1].dw, (size_t)nw * sizeof(float)) == 0, "%s kernel gradient (%s)",
              ob_cpu_conv_path_name(p), shape_str(s));
    for (int t = 0; t < 2; t++) result_free(&r[t]);
    free(x), free(w), free(dout);
#else
    (void)s, (void)p;
#endif
}

/* OB_CPU_CONV (read at the first use: main sets it to avx2 first thing),
 * ob_cpu_conv_choose and ob_cpu_conv_force. */
static void check_choice(ob_cpu_conv_path env_path)
{
    ob_cpu_conv_path vp[2];
    const int nv = vector_paths(vp);
    const ob_cpu_conv_path best = nv ? vp[0] : OB_CPU_CONV_IM2COL;
    int has2 = 0;
    for (int i = 0; i < nv; i++) has2 |= vp[i] == OB_CPU_CONV_AVX2;
    CHECK(env_path == (has2 ? OB_CPU_CONV_AVX2 : best));
    CHECK(ob_cpu_conv_choose(NULL) == best);
    CHECK(ob_cpu_conv_choose("auto") == best);
    CHECK(ob_cpu_conv_choose("") == best);
    CHECK(ob_cpu_conv_choose("AVX2 ") == best); /* unknown: auto's choice */
    CHECK(ob_cpu_conv_choose("im2col") == OB_CPU_CONV_IM2COL);
    CHECK(!strcmp(ob_cpu_conv_path_name(OB_CPU_CONV_IM2COL), "im2col"));
    CHECK(!strcmp(ob_cpu_conv_path_name(OB_CPU_CONV_AVX2), "avx2"));
    CHECK(!strcmp(ob_cpu_conv_path_name(OB_CPU_CONV_AVX512), "avx512"));
    /* forcing each path: the direct kernels run exactly when it is a vector path */
    const char *names[] = {"im2col", "avx2", "avx512", "auto"};
    for (int i = 0; i < 4; i++) {
        const ob_cpu_conv_path p = ob_cpu_conv_force(names[i]);
        CHECK(p == ob_cpu_conv_choose(names[i]) && ob_cpu_conv_path_now() == p);
        ob_err e = {0};
        float z[9] = {0}, dw[9] = {0};
        const ob_status fwd = ob_cpu_conv_forward(NULL, z, z, z, 1, 1, 1, 1, 1, 1, 1, 0, &e);
        const ob_status bwd = ob_cpu_conv_backward(NULL, z, dw, z, z, z, 1, 1, 1, 1, 1, 1, 1, 0, &e);
        const int direct_ok = ob_cpu_conv_direct_ok(3, 32, 3, 1, 1);
        if (p == OB_CPU_CONV_IM2COL)
            CHECK(!direct_ok && fwd == OB_ERR_UNSUPPORTED && bwd == OB_ERR_UNSUPPORTED);
        else
            CHECK(direct_ok && fwd == OB_OK && bwd == OB_OK);
    }
    for (int i = 0; i < nv; i++) CHECK(ob_cpu_conv_force(ob_cpu_conv_path_name(vp[i])) == vp[i]);
    ob_cpu_conv_force("auto");
    CHECK(!ob_cpu_conv_direct_ok(3, 32, 3, 2, 1)); /* strided: im2col + gemm */
    CHECK(!ob_cpu_conv_direct_ok(3, 32, 3, 1, 3)); /* pad >= K */
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SAME(what, a, b, n) CHECK_MSG(memcmp((a), (b), (size_t)(n) * sizeof *(a)) == 0, "%s: builds differ", what)

/* Every conv_cpu.c op through its portable build and a vector build (avx512: 1, avx2: 0). */
#define VEC(name) (avx512 ? ob_cpu_##name##_avx512 : ob_cpu_##name##_avx2)
static void check_builds(int avx512)
{
    printf("conv_cpu.c builds: portable against %s\n", avx512 ? "avx512" : "avx2");
    ob_err e = {0};
    /* 20 channels: a tail after full vectors of 8 and of 16 */
    const int B = 3, H = 6, W = 10, C = 20, G = 4, K = 3, n = B * H * W * C, ncol = B * H * W * K * K * C;
    float *x = randn(n, 11), *d = randn(n, 12), *w = randn(C, 13), *bb = randn(C, 14), *dc = randn(ncol, 15);
    for (int i = 0; i < n; i += 7) x[i] = x[i + 1 < n ? i + 1 : i]; /* ties for max pooling */
    float *o[2], *o2[2], *m[2], *r[2], *dw[2], *db[2], *col[2], *tpl = randn(5 * H * W * C, 16);
    int32_t lab[2][3];
    for (int k = 0; k < 2; k++) {
        o[k] = calloc((size_t)ncol, sizeof(float));
        o2[k] = calloc((size_t)n, sizeof(float));
        m[k] = calloc((size_t)B * G, sizeof(float));
        r[k] = calloc((size_t)B * G, sizeof(float));
        dw[k] = calloc((size_t)C, sizeof(float));
        db[k] = calloc((size_t)C, sizeof(float));
        col[k] = calloc((size_t)ncol, sizeof(float));
    }
#define BOTH(call_base, call_avx)                                                                           \
    CHECK_OK(call_base, &e);                                                                               \
    CHECK_OK(call_avx, &e)
    BOTH(ob_cpu_im2col_base(NULL, col[0], x, B, H, W, C, K, 1, 1, &e),
         VEC(im2col)(NULL, col[1], x, B, H, W, C, K, 1, 1, &e));
    SAME("im2col", col[0], col[1], ncol);
    BOTH(ob_cpu_col2im_base(NULL, o2[0], dc, B, H, W, C, K, 2, 1, &e),
         VEC(col2im)(NULL, o2[1], dc, B, H, W, C, K, 2, 1, &e));
    SAME("col2im", o2[0], o2[1], n);
    BOTH(ob_cpu_groupnorm_forward_base(NULL, o[0], m[0], r[0], x, w, bb, B, H * W, C, G, &e),
         VEC(groupnorm_forward)(NULL, o[1], m[1], r[1], x, w, bb, B, H * W, C, G, &e));
    SAME("groupnorm_forward", o[0], o[1], n);
    SAME("groupnorm_forward rstd", r[0], r[1], B * G);
    BOTH(ob_cpu_groupnorm_backward_base(NULL, o2[0], dw[0], db[0], d, x, w, m[0], r[0], B, H * W, C, G, &e),
         VEC(groupnorm_backward)(NULL, o2[1], dw[1], db[1], d, x, w, m[0], r[0], B, H * W, C, G, &e));
    SAME("groupnorm_backward", o2[0], o2[1], n);
    SAME("groupnorm_backward dw", dw[0], dw[1], C);
    SAME("groupnorm_backward db", db[0], db[1], C);
    BOTH(ob_cpu_relu_forward_base(NULL, o[0], x, n, &e), VEC(relu_forward)(NULL, o[1], x, n, &e));
    SAME("relu_forward", o[0], o[1], n);
    BOTH(ob_cpu_relu_backward_base(NULL, o2[0], o[0], d, n, &e),
         VEC(relu_backward)(NULL, o2[1], o[0], d, n, &e));
    SAME("relu_backward", o2[0], o2[1], n);
    BOTH(ob_cpu_maxpool2_forward_base(NULL, o[0], x, B, H, W, C, &e),
         VEC(maxpool2_forward)(NULL, o[1], x, B, H, W, C, &e));
    SAME("maxpool2_forward", o[0], o[1], n / 4);
    BOTH(ob_cpu_maxpool2_backward_base(NULL, o2[0], d, x, B, H, W, C, &e),
         VEC(maxpool2_backward)(NULL, o2[1], d, x, B, H, W, C, &e));
    SAME("maxpool2_backward", o2[0], o2[1], n);
    BOTH(ob_cpu_avgpool_forward_base(NULL, o[0], x, B, H * W, C, &e),
         VEC(avgpool_forward)(NULL, o[1], x, B, H * W, C, &e));
    SAME("avgpool_forward", o[0], o[1], B * C);
    BOTH(ob_cpu_avgpool_backward_base(NULL, o2[0], d, B, H * W, C, &e),
         VEC(avgpool_backward)(NULL, o2[1], d, B, H * W, C, &e));
    SAME("avgpool_backward", o2[0], o2[1], n);
    ob_image_synth a = {.B = B, .H = H, .W = W, .C = C, .K = 5, .max_shift = 2, .noise = 1.5f, .contrast_lo = 0.5f,
                        .contrast_hi = 1.5f, .seed = 3, .stream = 40, .index0 = 17};
    BOTH(ob_cpu_synth_images_base(NULL, &a, o[0], lab[0], tpl, &e),
         VEC(synth_images)(NULL, &a, o[1], lab[1], tpl, &e));
    SAME("synth_images", o[0], o[1], n);
    SAME("synth_images labels", lab[0], lab[1], B);
#undef BOTH
#undef VEC
    for (int k = 0; k < 2; k++) free(o[k]), free(o2[k]), free(m[k]), free(r[k]), free(dw[k]), free(db[k]), free(col[k]);
    free(x), free(d), free(w), free(bb), free(dc), free(tpl);
}
#endif

int main(void)
{
    setenv("OB_CPU_CONV", "avx2", 1); /* before any use: the path read from the environment */
    const ob_cpu_conv_path env_path = ob_cpu_conv_path_now();
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (__builtin_cpu_supports("avx512f")) check_builds(1);
    if (__builtin_cpu_supports("avx2")) check_builds(0);
#endif
    check_choice(env_path);
    ob_cpu_conv_path p[2];
    const int np = vector_paths(p);
    /* B, H, W, Cin, Cout, K, pad */
    const shape cfg[] = {
        {2, 8, 8, 3, 32, 3, 1},   {2, 7, 9, 5, 4, 3, 1},    {3, 6, 5, 32, 64, 3, 1},  {2, 8, 16, 64, 32, 3, 1},
        {1, 5, 11, 9, 40, 3, 1},  {2, 6, 7, 16, 33, 1, 0},  {2, 9, 8, 4, 17, 5, 2},   {2, 7, 7, 8, 8, 3, 0},
        {1, 4, 4, 12, 20, 3, 2},  {1, 3, 2, 2, 3, 3, 1},    {2, 10, 13, 35, 70, 3, 1}, {3, 7, 5, 23, 25, 5, 4},
        {2, 9, 7, 13, 17, 5, 0},  {2, 5, 9, 7, 24, 5, 1},   {2, 6, 6, 6, 6, 5, 3},    {3, 5, 7, 25, 48, 1, 0},
        {2, 11, 3, 6, 7, 3, 2},   {4, 3, 3, 1, 1, 3, 1},    {2, 4, 13, 40, 9, 3, 0},  {3, 5, 5, 17, 47, 3, 1},
        {2, 2, 4, 3, 5, 3, 0}, /* no output rows */
        {2, 4, 3, 5, 9, 3, 0},  {2, 3, 6, 7, 12, 3, 0}, {3, 5, 5, 4, 6, 5, 0}, /* one output column, row, pixel */
    };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) check_shape(&cfg[c], p, np);
    const shape thr[] = {{4, 16, 16, 32, 64, 3, 1}, {3, 9, 7, 3, 20, 3, 1}, {5, 8, 8, 19, 37, 5, 2}};
    for (int i = 0; i < np; i++)
        for (size_t c = 0; c < sizeof thr / sizeof thr[0]; c++) check_threads(&thr[c], p[i]);
    for (int k = 0; k < NPATH; k++)
        if (worst[k][0] > 0 || worst[k][1] > 0 || worst[k][2] > 0)
            printf("%-6s worst error / bound: forward %.2g, input gradient %.2g, kernel gradient %.2g\n",
                   ob_cpu_conv_path_name((ob_cpu_conv_path)k),
                   worst[k][0], worst[k][1], worst[k][2]);
    if (np)
        printf("direct - im2col, worst / bound: forward %.2g, input gradient %.2g, kernel gradient %.2g\n",
               worst_gap[0], worst_gap[1], worst_gap[2]);
    ob_cpu_conv_force("auto");
    if (!np) {
        check_done();
        printf("skipped: no direct convolution on this CPU or build\n");
        return ob_t_fail ? 1 : 77;
    }
    return check_done();
}
