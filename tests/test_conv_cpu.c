/* tests/test_conv_cpu.c - the CPU's convolution-network kernels.
 *
 * The direct convolution (kernels/cpu/conv_direct.c) against a plain
 * double-precision convolution: forward, input gradient and kernel gradient
 * (accumulated), for channel counts that are and are not multiples of the
 * 32-channel tiles, widths that are not multiples of the 8-pixel tiles,
 * kernels 1x1, 3x3 and 5x5 with several paddings; and bitwise equality across
 * thread counts. Without AVX-512 the direct kernels are absent: they must say
 * so (OB_ERR_UNSUPPORTED) and the test is skipped.
 *
 * The portable and AVX-512 builds of conv_cpu.c's layers (group norm, ReLU,
 * pooling, im2col/col2im, the image generator) give the same bits. */
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "core/rng.h"
#include "kernels/cpu/nn_cpu.h"

static float *randn(int64_t n, uint64_t stream)
{
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = ob_rng_normal(7, stream, (uint64_t)i);
    return x;
}

static double max_abs_diff(const float *a, const double *b, int64_t n, double *scale)
{
    double m = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d > m) m = d;
        if (fabs(b[i]) > s) s = fabs(b[i]);
    }
    *scale = s;
    return m;
}

/* out, dinp, dw (all double) of a stride-1 convolution, straight from the definition. */
static void reference(const float *x, const float *w, const float *dout, double *out, double *dinp, double *dw,
                      int B, int H, int W, int Cin, int Cout, int K, int P)
{
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    memset(out, 0, sizeof *out * (size_t)B * Ho * Wo * Cout);
    memset(dinp, 0, sizeof *dinp * (size_t)B * H * W * Cin);
    memset(dw, 0, sizeof *dw * (size_t)Cout * Cin * K * K);
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
                                out[o] += (double)x[i] * w[k];
                                dinp[i] += (double)dout[o] * w[k];
                                dw[k] += (double)dout[o] * x[i];
                            }
                        }
                }
}

static void check_shape(int B, int H, int W, int Cin, int Cout, int K, int P)
{
    ob_err e = {0};
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    const int64_t nx = (int64_t)B * H * W * Cin, no = (int64_t)B * Ho * Wo * Cout, nw = (int64_t)Cout * Cin * K * K;
    float *x = randn(nx, 1), *w = randn(nw, 2), *dout = randn(no, 3);
    float *out = malloc((size_t)no * sizeof *out), *dinp = malloc((size_t)nx * sizeof *dinp);
    float *dw = malloc((size_t)nw * sizeof *dw);
    double *rout = malloc((size_t)no * sizeof *rout), *rdinp = malloc((size_t)nx * sizeof *rdinp);
    double *rdw = malloc((size_t)nw * sizeof *rdw);
    for (int64_t i = 0; i < nw; i++) dw[i] = 1.0f; /* the kernel gradient accumulates */
    CHECK_OK(ob_cpu_conv_forward(NULL, out, x, w, B, H, W, Cin, Cout, K, 1, P, &e), &e);
    CHECK_OK(ob_cpu_conv_backward(NULL, dinp, dw, dout, x, w, B, H, W, Cin, Cout, K, 1, P, &e), &e);
    reference(x, w, dout, rout, rdinp, rdw, B, H, W, Cin, Cout, K, P);
    for (int64_t i = 0; i < nw; i++) rdw[i] += 1.0;
    double s, d;
    d = max_abs_diff(out, rout, no, &s);
    CHECK_MSG(d <= 1e-5 * (s + 1), "forward: %g (B %d H %d W %d Cin %d Cout %d K %d pad %d)", d, B, H, W, Cin, Cout,
              K, P);
    d = max_abs_diff(dinp, rdinp, nx, &s);
    CHECK_MSG(d <= 1e-5 * (s + 1), "input gradient: %g (B %d H %d W %d Cin %d Cout %d K %d pad %d)", d, B, H, W, Cin,
              Cout, K, P);
    d = max_abs_diff(dw, rdw, nw, &s);
    CHECK_MSG(d <= 1e-5 * (s + 1), "kernel gradient: %g (B %d H %d W %d Cin %d Cout %d K %d pad %d)", d, B, H, W, Cin,
              Cout, K, P);
    /* no input gradient asked: the kernel gradient alone, the same bits */
    float *dw2 = malloc((size_t)nw * sizeof *dw2);
    for (int64_t i = 0; i < nw; i++) dw2[i] = 1.0f;
    CHECK_OK(ob_cpu_conv_backward(NULL, NULL, dw2, dout, x, w, B, H, W, Cin, Cout, K, 1, P, &e), &e);
    CHECK(memcmp(dw, dw2, (size_t)nw * sizeof *dw) == 0);
    free(x), free(w), free(dout), free(out), free(dinp), free(dw), free(dw2), free(rout), free(rdinp), free(rdw);
}

/* The same bits with 1 and 2 threads. */
static void check_threads(int B, int H, int W, int Cin, int Cout)
{
#ifdef _OPENMP
    ob_err e = {0};
    const int64_t nx = (int64_t)B * H * W * Cin, no = (int64_t)B * H * W * Cout, nw = (int64_t)Cout * Cin * 9;
    float *x = randn(nx, 4), *w = randn(nw, 5), *dout = randn(no, 6);
    float *out[2], *dinp[2], *dw[2];
    for (int t = 0; t < 2; t++) {
        out[t] = malloc((size_t)no * sizeof(float));
        dinp[t] = malloc((size_t)nx * sizeof(float));
        dw[t] = calloc((size_t)nw, sizeof(float));
        omp_set_num_threads(t + 1);
        CHECK_OK(ob_cpu_conv_forward(NULL, out[t], x, w, B, H, W, Cin, Cout, 3, 1, 1, &e), &e);
        CHECK_OK(ob_cpu_conv_backward(NULL, dinp[t], dw[t], dout, x, w, B, H, W, Cin, Cout, 3, 1, 1, &e), &e);
    }
    CHECK(memcmp(out[0], out[1], (size_t)no * sizeof(float)) == 0);
    CHECK(memcmp(dinp[0], dinp[1], (size_t)nx * sizeof(float)) == 0);
    CHECK(memcmp(dw[0], dw[1], (size_t)nw * sizeof(float)) == 0);
    for (int t = 0; t < 2; t++) free(out[t]), free(dinp[t]), free(dw[t]);
    free(x), free(w), free(dout);
#else
    (void)B, (void)H, (void)W, (void)Cin, (void)Cout;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SAME(what, a, b, n) CHECK_MSG(memcmp((a), (b), (size_t)(n) * sizeof *(a)) == 0, "%s: builds differ", what)

/* Every conv_cpu.c op through its portable and its AVX-512 build. */
static void check_builds(void)
{
    ob_err e = {0};
    const int B = 3, H = 6, W = 10, C = 24, G = 4, K = 3, n = B * H * W * C, ncol = B * H * W * K * K * C;
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
         ob_cpu_im2col_avx512(NULL, col[1], x, B, H, W, C, K, 1, 1, &e));
    SAME("im2col", col[0], col[1], ncol);
    BOTH(ob_cpu_col2im_base(NULL, o2[0], dc, B, H, W, C, K, 2, 1, &e),
         ob_cpu_col2im_avx512(NULL, o2[1], dc, B, H, W, C, K, 2, 1, &e));
    SAME("col2im", o2[0], o2[1], n);
    BOTH(ob_cpu_groupnorm_forward_base(NULL, o[0], m[0], r[0], x, w, bb, B, H * W, C, G, &e),
         ob_cpu_groupnorm_forward_avx512(NULL, o[1], m[1], r[1], x, w, bb, B, H * W, C, G, &e));
    SAME("groupnorm_forward", o[0], o[1], n);
    SAME("groupnorm_forward rstd", r[0], r[1], B * G);
    BOTH(ob_cpu_groupnorm_backward_base(NULL, o2[0], dw[0], db[0], d, x, w, m[0], r[0], B, H * W, C, G, &e),
         ob_cpu_groupnorm_backward_avx512(NULL, o2[1], dw[1], db[1], d, x, w, m[0], r[0], B, H * W, C, G, &e));
    SAME("groupnorm_backward", o2[0], o2[1], n);
    SAME("groupnorm_backward dw", dw[0], dw[1], C);
    SAME("groupnorm_backward db", db[0], db[1], C);
    BOTH(ob_cpu_relu_forward_base(NULL, o[0], x, n, &e), ob_cpu_relu_forward_avx512(NULL, o[1], x, n, &e));
    SAME("relu_forward", o[0], o[1], n);
    BOTH(ob_cpu_relu_backward_base(NULL, o2[0], o[0], d, n, &e),
         ob_cpu_relu_backward_avx512(NULL, o2[1], o[0], d, n, &e));
    SAME("relu_backward", o2[0], o2[1], n);
    BOTH(ob_cpu_maxpool2_forward_base(NULL, o[0], x, B, H, W, C, &e),
         ob_cpu_maxpool2_forward_avx512(NULL, o[1], x, B, H, W, C, &e));
    SAME("maxpool2_forward", o[0], o[1], n / 4);
    BOTH(ob_cpu_maxpool2_backward_base(NULL, o2[0], d, x, B, H, W, C, &e),
         ob_cpu_maxpool2_backward_avx512(NULL, o2[1], d, x, B, H, W, C, &e));
    SAME("maxpool2_backward", o2[0], o2[1], n);
    BOTH(ob_cpu_avgpool_forward_base(NULL, o[0], x, B, H * W, C, &e),
         ob_cpu_avgpool_forward_avx512(NULL, o[1], x, B, H * W, C, &e));
    SAME("avgpool_forward", o[0], o[1], B * C);
    BOTH(ob_cpu_avgpool_backward_base(NULL, o2[0], d, B, H * W, C, &e),
         ob_cpu_avgpool_backward_avx512(NULL, o2[1], d, B, H * W, C, &e));
    SAME("avgpool_backward", o2[0], o2[1], n);
    ob_image_synth a = {.B = B, .H = H, .W = W, .C = C, .K = 5, .max_shift = 2, .noise = 1.5f, .contrast_lo = 0.5f,
                        .contrast_hi = 1.5f, .seed = 3, .stream = 40, .index0 = 17};
    BOTH(ob_cpu_synth_images_base(NULL, &a, o[0], lab[0], tpl, &e),
         ob_cpu_synth_images_avx512(NULL, &a, o[1], lab[1], tpl, &e));
    SAME("synth_images", o[0], o[1], n);
    SAME("synth_images labels", lab[0], lab[1], B);
#undef BOTH
    for (int k = 0; k < 2; k++) free(o[k]), free(o2[k]), free(m[k]), free(r[k]), free(dw[k]), free(db[k]), free(col[k]);
    free(x), free(d), free(w), free(bb), free(dc), free(tpl);
}
#endif

int main(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (__builtin_cpu_supports("avx512f")) check_builds();
#endif
    if (!ob_cpu_conv_direct_ok(3, 32, 3, 1, 1)) {
        ob_err e = {0};
        float z[4] = {0};
        CHECK(ob_cpu_conv_forward(NULL, z, z, z, 1, 1, 1, 1, 1, 1, 1, 0, &e) == OB_ERR_UNSUPPORTED);
        check_done();
        printf("skipped: no direct convolution on this CPU or build\n");
        return ob_t_fail ? 1 : 77;
    }
    CHECK(!ob_cpu_conv_direct_ok(3, 32, 3, 2, 1)); /* strided: im2col + gemm */
    CHECK(!ob_cpu_conv_direct_ok(3, 32, 3, 1, 3)); /* pad >= K */
    /* B, H, W, Cin, Cout, K, pad */
    const int cfg[][7] = {
        {2, 8, 8, 3, 32, 3, 1},   {2, 7, 9, 5, 4, 3, 1},    {3, 6, 5, 32, 64, 3, 1},  {2, 8, 16, 64, 32, 3, 1},
        {1, 5, 11, 9, 40, 3, 1},  {2, 6, 7, 16, 33, 1, 0},  {2, 9, 8, 4, 17, 5, 2},   {2, 7, 7, 8, 8, 3, 0},
        {1, 4, 4, 12, 20, 3, 2},  {1, 3, 2, 2, 3, 3, 1},    {2, 10, 13, 35, 70, 3, 1},
    };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
        check_shape(cfg[c][0], cfg[c][1], cfg[c][2], cfg[c][3], cfg[c][4], cfg[c][5], cfg[c][6]);
    check_threads(4, 16, 16, 32, 64);
    check_threads(3, 9, 7, 3, 20);
    return check_done();
}
