/* tests/test_grad_layers.c - every neural-network layer op of the CPU backend
 * against central finite differences on small shapes.
 *
 * For an op out = f(x) the test takes L = sum(out * R) with a fixed random R
 * (summed in double), runs the backward with dout = R and compares each
 * analytic entry with (L(x + h e_i) - L(x - h e_i)) / 2h. The ops run in
 * float32, so the tolerance is atol + rtol * |g| with atol a small fraction of
 * the largest gradient: honest for float32 with h = 1e-2 on O(1) inputs.
 * Linear ops (permutations, gather/scatter, im2col/col2im) are checked as
 * exact adjoints instead, and the convolution (im2col + gemm) against a direct
 * loop. Backward ops that accumulate (+=) start from a non-zero buffer. */
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/backend.h"

static ob_device dev;
static ob_err err;
static uint64_t rng_ctr;

static float *randn(int64_t n, float scale)
{
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = scale * ob_rng_normal(99, OB_STREAM_MISC, rng_ctr++);
    return x;
}

static float *zeros(int64_t n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(float));
}

static double proj(const float *out, const float *r, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += (double)out[i] * r[i];
    return s;
}

/* The op under test: recomputes g_out from its inputs. */
static void (*g_fwd)(void);
static float *g_out, *g_R;
static int64_t g_nout;

static double loss_now(void)
{
    g_fwd();
    return proj(g_out, g_R, g_nout);
}

/* Compare ana (n) with central differences of L over x (n): every entry when
 * n <= 48, else 48 spread over the tensor. */
static void fd_check(const char *what, float *x, int64_t n, const float *ana, double h, double rtol)
{
    double gmax = 0.0, worst = 0.0;
    for (int64_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(ana[i]));
    double atol = 1e-3 * gmax + 1e-6;
    int64_t step = n <= 48 ? 1 : n / 48, bad = 0;
    for (int64_t i = 0; i < n; i += step) {
        float x0 = x[i];
        x[i] = x0 + (float)h;
        double lp = loss_now();
        x[i] = x0 - (float)h;
        double lm = loss_now();
        x[i] = x0;
        double num = (lp - lm) / (2.0 * h);
        double e = fabs(num - ana[i]) / (atol + rtol * fmax(fabs(num), fabs(ana[i])));
        if (e > worst) worst = e;
        if (e > 1.0 && bad++ < 3)
            fprintf(stderr, "  %s[%lld]: analytic %.6e, numeric %.6e\n", what, (long long)i, ana[i], num);
    }
    loss_now();
    CHECK_MSG(worst <= 1.0, "%s: gradient off by %.2f x tolerance", what, worst);
}

/* ---- embedding ---- */
static int E_N = 10, E_T = 5, E_C = 6, E_V = 7;
static int32_t e_tok[10] = {3, 0, 6, 3, 3, 1, 2, 6, 0, 5};
static float *e_wte, *e_wpe;
static void fwd_embedding(void)
{
    dev.ops->embedding_forward(&dev, g_out, e_tok, e_wte, e_wpe, E_N, E_T, E_C, &err);
}

static void test_embedding(void)
{
    e_wte = randn(E_V * E_C, 1);
    e_wpe = randn(E_T * E_C, 1);
    g_nout = E_N * E_C;
    g_out = zeros(g_nout);
    g_R = randn(g_nout, 1);
    g_fwd = fwd_embedding;
    float *dwte = randn(E_V * E_C, 1), *dwpe = randn(E_T * E_C, 1);
    float *w0 = malloc(E_V * E_C * 4), *p0 = malloc(E_T * E_C * 4);
    memcpy(w0, dwte, E_V * E_C * 4);
    memcpy(p0, dwpe, E_T * E_C * 4);
    CHECK_OK(dev.ops->embedding_backward(&dev, dwte, dwpe, g_R, e_tok, E_N, E_T, E_C, E_V, &err), &err);
    for (int i = 0; i < E_V * E_C; i++) dwte[i] -= w0[i];
    for (int i = 0; i < E_T * E_C; i++) dwpe[i] -= p0[i];
    fd_check("embedding dwte", e_wte, E_V * E_C, dwte, 1e-2, 1e-2);
    fd_check("embedding dwpe", e_wpe, E_T * E_C, dwpe, 1e-2, 1e-2);
    free(e_wte), free(e_wpe), free(g_out), free(g_R), free(dwte), free(dwpe), free(w0), free(p0);
}

/* ---- layernorm ---- */
static int L_N = 5, L_C = 12;
static float *l_inp, *l_w, *l_b, l_mean[5], l_rstd[5];
static void fwd_layernorm(void)
{
    dev.ops->layernorm_forward(&dev, g_out, l_mean, l_rstd, l_inp, l_w, l_b, L_N, L_C, &err);
}

static void test_layernorm(void)
{
    l_inp = randn(L_N * L_C, 2);
    for (int i = 0; i < L_N * L_C; i++) l_inp[i] += 0.5f;
    l_w = randn(L_C, 1);
    l_b = randn(L_C, 1);
    g_nout = L_N * L_C;
    g_out = zeros(g_nout);
    g_R = randn(g_nout, 1);
    g_fwd = fwd_layernorm;
    loss_now();
    float *dinp = randn(L_N * L_C, 1), *dw = randn(L_C, 1), *db = randn(L_C, 1);
    float *i0 = malloc(L_N * L_C * 4), *w0 = malloc(L_C * 4), *b0 = malloc(L_C * 4);
    memcpy(i0, dinp, L_N * L_C * 4);
    memcpy(w0, dw, L_C * 4);
    memcpy(b0, db, L_C * 4);
    CHECK_OK(dev.ops->layernorm_backward(&dev, dinp, dw, db, g_R, l_inp, l_w, l_mean, l_rstd, L_N, L_C, &err), &err);
    for (int i = 0; i < L_N * L_C; i++) dinp[i] -= i0[i];
    for (int i = 0; i < L_C; i++) dw[i] -= w0[i], db[i] -= b0[i];
    fd_check("layernorm dinp", l_inp, L_N * L_C, dinp, 1e-2, 1e-2);
    fd_check("layernorm dw", l_w, L_C, dw, 1e-2, 1e-2);
    fd_check("layernorm db", l_b, L_C, db, 1e-2, 1e-2);
    free(l_inp), free(l_w), free(l_b), free(g_out), free(g_R), free(dinp), free(dw), free(db), free(i0), free(w0),
        free(b0);
}

/* ---- bias, gelu, softmax ---- */
static float *u_x, *u_b;
static int U_N = 6, U_C = 9;
static void fwd_bias(void)
{
    memcpy(g_out, u_x, (size_t)U_N * U_C * 4);
    dev.ops->bias_add(&dev, g_out, u_b, U_N, U_C, &err);
}
static void fwd_gelu(void)
{
    dev.ops->gelu_forward(&dev, g_out, u_x, (int64_t)U_N * U_C, &err);
}
static void fwd_softmax(void)
{
    memcpy(g_out, u_x, (size_t)U_N * U_C * 4);
    dev.ops->softmax_forward(&dev, g_out, U_N, U_C, &err);
}

static void test_pointwise(void)
{
    int64_t n = (int64_t)U_N * U_C;
    u_x = randn(n, 2);
    u_b = randn(U_C, 1);
    g_nout = n;
    g_out = zeros(n);
    g_R = randn(n, 1);
    /* bias */
    g_fwd = fwd_bias;
    float *db = randn(U_C, 1), *b0 = malloc(U_C * 4);
    memcpy(b0, db, U_C * 4);
    CHECK_OK(dev.ops->bias_backward(&dev, db, g_R, U_N, U_C, &err), &err);
    for (int i = 0; i < U_C; i++) db[i] -= b0[i];
    fd_check("bias db", u_b, U_C, db, 1e-2, 1e-2);
    /* gelu */
    g_fwd = fwd_gelu;
    float *dx = zeros(n);
    CHECK_OK(dev.ops->gelu_backward(&dev, dx, u_x, g_R, n, &err), &err);
    fd_check("gelu dinp", u_x, n, dx, 1e-2, 1e-2);
    {
        float *dd = malloc(n * 4);
        memcpy(dd, g_R, n * 4);
        CHECK_OK(dev.ops->gelu_backward(&dev, dd, u_x, dd, n, &err), &err); /* in place */
        CHECK(memcmp(dd, dx, n * 4) == 0);
        free(dd);
    }
    /* far from 0 (a BERT run at a high lr gets there): gelu(x) is x, or 0, and
     * its derivative 1, or 0, to float precision; its tanh is from e^{2u}
     * with u ~ 0.036 x^3, so x = 1e3 asks for e^{3.6e7} and e^{-3.6e7} */
    {
        const float big[] = {12, 1234.55f, 1555.3f, 5000, 1e4f, 3e5f, 1e9f, 3e9f};
        const int nb = (int)(sizeof big / sizeof big[0]);
        float in[16], out[16], ones[16], d[16];
        for (int i = 0; i < nb; i++) {
            in[i] = big[i];
            in[nb + i] = -big[i];
            ones[i] = ones[nb + i] = 1.0f;
        }
        CHECK_OK(dev.ops->gelu_forward(&dev, out, in, 2 * nb, &err), &err);
        CHECK_OK(dev.ops->gelu_backward(&dev, d, in, ones, 2 * nb, &err), &err);
        for (int i = 0; i < nb; i++) {
            CHECK_MSG(out[i] == big[i] && fabsf(out[nb + i]) <= 1e-6f, "gelu(+-%g) = %g, %g", big[i], out[i],
                      out[nb + i]);
            CHECK_MSG(d[i] == 1.0f && fabsf(d[nb + i]) <= 1e-6f, "gelu'(+-%g) = %g, %g", big[i], d[i], d[nb + i]);
        }
    }
    /* softmax */
    g_fwd = fwd_softmax;
    loss_now();
    CHECK_OK(dev.ops->softmax_backward(&dev, dx, g_R, g_out, U_N, U_C, &err), &err);
    fd_check("softmax dx", u_x, n, dx, 1e-2, 1e-2);
    for (int r = 0; r < U_N; r++) {
        double s = 0;
        for (int c = 0; c < U_C; c++) s += g_out[r * U_C + c];
        CHECK_NEAR(s, 1.0, 1e-6);
    }
    free(u_x), free(u_b), free(g_out), free(g_R), free(db), free(b0), free(dx);
}

/* ---- cross-entropy ---- */
static int X_M = 5, X_V = 8;
static int32_t x_tgt[5] = {0, 7, 3, 3, 5};
static float *x_logits, *x_probs, *x_losses, x_loss, x_correct;
static void fwd_xent(void)
{
    dev.ops->xent_forward(&dev, x_probs, x_losses, x_logits, x_tgt, X_M, X_V, &x_loss, &x_correct, &err);
    g_out[0] = 0;
    for (int m = 0; m < X_M; m++) g_out[0] += x_losses[m] / X_M; /* the mean, as a projection target */
}

static void test_xent(void)
{
    x_logits = randn(X_M * X_V, 2);
    x_probs = zeros(X_M * X_V);
    x_losses = zeros(X_M);
    g_nout = 1;
    g_out = zeros(1);
    g_R = zeros(1);
    g_R[0] = 1.0f;
    g_fwd = fwd_xent;
    loss_now();
    double mean = 0;
    int hits = 0;
    for (int m = 0; m < X_M; m++) {
        double mx = -1e30, s = 0;
        int arg = 0;
        for (int v = 0; v < X_V; v++)
            if (x_logits[m * X_V + v] > mx) mx = x_logits[m * X_V + v], arg = v;
        for (int v = 0; v < X_V; v++) s += exp(x_logits[m * X_V + v] - mx);
        mean += (log(s) + mx - x_logits[m * X_V + x_tgt[m]]) / X_M;
        hits += arg == x_tgt[m];
    }
    CHECK_NEAR(x_loss, mean, 1e-5);
    CHECK(x_correct == (float)hits);
    float *dl = zeros(X_M * X_V);
    CHECK_OK(dev.ops->xent_backward(&dev, dl, x_probs, x_tgt, X_M, X_V, 1.0f / X_M, &err), &err);
    fd_check("xent dlogits", x_logits, X_M * X_V, dl, 1e-2, 1e-2);
    /* probs may alias logits */
    float *alias = malloc(X_M * X_V * 4);
    memcpy(alias, x_logits, X_M * X_V * 4);
    float l2;
    CHECK_OK(dev.ops->xent_forward(&dev, alias, x_losses, alias, x_tgt, X_M, X_V, &l2, NULL, &err), &err);
    CHECK(l2 == x_loss);
    CHECK(memcmp(alias, x_probs, X_M * X_V * 4) == 0);
    float z = 1;
    CHECK_OK(dev.ops->xent_forward(&dev, alias, x_losses, alias, x_tgt, 0, X_V, &z, NULL, &err), &err);
    CHECK(z == 0.0f);
    free(alias), free(dl), free(x_logits), free(x_probs), free(x_losses), free(g_out), free(g_R);
}

/* ---- permutations, gather/scatter (exact) ---- */
static void test_linear_maps(void)
{
    const int B = 2, T = 3, NH = 2, HS = 4, C = NH * HS;
    for (int nsec = 1; nsec <= 3; nsec += 2) {
        int64_t n = (int64_t)B * T * nsec * C;
        float *src = randn(n, 1), *mid = zeros(n), *back = zeros(n);
        CHECK_OK(dev.ops->heads_split(&dev, mid, src, B, T, nsec, NH, HS, &err), &err);
        int ok = 1;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                for (int s = 0; s < nsec; s++)
                    for (int h = 0; h < NH; h++)
                        for (int d = 0; d < HS; d++) {
                            float a = src[(((b * T + t) * nsec + s) * NH + h) * HS + d];
                            float m = mid[((((int64_t)s * B + b) * NH + h) * T + t) * HS + d];
                            ok &= a == m;
                        }
        CHECK_MSG(ok, "heads_split layout (nsec %d)", nsec);
        CHECK_OK(dev.ops->heads_merge(&dev, back, mid, B, T, nsec, NH, HS, &err), &err);
        CHECK(memcmp(back, src, n * 4) == 0);
        free(src), free(mid), free(back);
    }
    /* gather / scatter_add are adjoint: <gather(x), y> = <x, scatter(y)> */
    const int N = 9, M = 4, CC = 5;
    int32_t idx[4] = {7, 2, 0, 8};
    float *x = randn(N * CC, 1), *y = randn(M * CC, 1), *gx = zeros(M * CC), *sy = zeros(N * CC);
    CHECK_OK(dev.ops->rows_gather(&dev, gx, x, idx, M, CC, &err), &err);
    CHECK_OK(dev.ops->rows_scatter_add(&dev, sy, y, idx, M, CC, &err), &err);
    CHECK_NEAR(proj(gx, y, M * CC), proj(x, sy, N * CC), 1e-5);
    free(x), free(y), free(gx), free(sy);
}

/* ---- convolution ---- */
static void test_conv(void)
{
    const int cfg[][4] = {{3, 1, 1, 7}, {3, 2, 1, 7}, {1, 2, 0, 6}, {1, 1, 0, 5}, {3, 1, 0, 6}, {5, 2, 2, 8}};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        const int K = cfg[c][0], S = cfg[c][1], P = cfg[c][2], H = cfg[c][3], W = H + 1, B = 2, Cin = 3, Cout = 4;
        const int Ho = (H + 2 * P - K) / S + 1, Wo = (W + 2 * P - K) / S + 1, KC = Cin * K * K;
        const int64_t rows = (int64_t)B * Ho * Wo;
        float *x = randn((int64_t)B * H * W * Cin, 1), *col = zeros(rows * KC), *y = randn(rows * KC, 1);
        float *dx = zeros((int64_t)B * H * W * Cin);
        CHECK_OK(dev.ops->im2col(&dev, col, x, B, H, W, Cin, K, S, P, &err), &err);
        CHECK_OK(dev.ops->col2im(&dev, dx, y, B, H, W, Cin, K, S, P, &err), &err);
        CHECK_MSG(fabs(proj(col, y, rows * KC) - proj(x, dx, (int64_t)B * H * W * Cin)) < 1e-4,
                  "im2col/col2im adjoint (K %d stride %d pad %d)", K, S, P);
        /* im2col + gemm against a direct convolution with a (Cout, Cin, K, K) kernel,
         * permuted to the column order (Cout, K, K, Cin) by heads_split */
        float *wt = randn((int64_t)Cout * KC, 1), *wp = zeros((int64_t)Cout * KC), *out = zeros(rows * Cout);
        CHECK_OK(dev.ops->heads_split(&dev, wp, wt, Cout, Cin, 1, K * K, 1, &err), &err);
        CHECK_OK(dev.ops->gemm(&dev, 0, 1, (int)rows, Cout, KC, 1.0f, col, KC, wp, KC, 0.0f, out, Cout, &err), &err);
        double maxd = 0;
        for (int b = 0; b < B; b++)
            for (int oy = 0; oy < Ho; oy++)
                for (int ox = 0; ox < Wo; ox++)
                    for (int co = 0; co < Cout; co++) {
                        double s = 0;
                        for (int ci = 0; ci < Cin; ci++)
                            for (int ky = 0; ky < K; ky++)
                                for (int kx = 0; kx < K; kx++) {
                                    int iy = oy * S + ky - P, ix = ox * S + kx - P;
                                    if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                    s += (double)wt[((co * Cin + ci) * K + ky) * K + kx] *
                                         x[(((int64_t)b * H + iy) * W + ix) * Cin + ci];
                                }
                        maxd = fmax(maxd, fabs(s - out[(((int64_t)b * Ho + oy) * Wo + ox) * Cout + co]));
                    }
        CHECK_MSG(maxd < 1e-4, "conv by im2col+gemm vs direct: %g (K %d stride %d pad %d)", maxd, K, S, P);
        free(x), free(col), free(y), free(dx), free(wt), free(wp), free(out);
    }
}

/* ---- group norm, relu, pooling ---- */
static int G_B = 2, G_HW = 6, G_C = 8, G_G = 2;
static float *gn_inp, *gn_w, *gn_b, gn_mean[4], gn_rstd[4];
static void fwd_groupnorm(void)
{
    dev.ops->groupnorm_forward(&dev, g_out, gn_mean, gn_rstd, gn_inp, gn_w, gn_b, G_B, G_HW, G_C, G_G, &err);
}

static void test_groupnorm(void)
{
    int64_t n = (int64_t)G_B * G_HW * G_C;
    gn_inp = randn(n, 1.5);
    gn_w = randn(G_C, 1);
    gn_b = randn(G_C, 1);
    g_nout = n;
    g_out = zeros(n);
    g_R = randn(n, 1);
    g_fwd = fwd_groupnorm;
    loss_now();
    float *dinp = randn(n, 1), *dw = randn(G_C, 1), *db = randn(G_C, 1), *w0 = malloc(G_C * 4), *b0 = malloc(G_C * 4);
    memcpy(w0, dw, G_C * 4);
    memcpy(b0, db, G_C * 4);
    CHECK_OK(dev.ops->groupnorm_backward(&dev, dinp, dw, db, g_R, gn_inp, gn_w, gn_mean, gn_rstd, G_B, G_HW, G_C,
                                         G_G, &err),
             &err);
    for (int i = 0; i < G_C; i++) dw[i] -= w0[i], db[i] -= b0[i];
    fd_check("groupnorm dinp", gn_inp, n, dinp, 1e-2, 1e-2);
    fd_check("groupnorm dw", gn_w, G_C, dw, 1e-2, 1e-2);
    fd_check("groupnorm db", gn_b, G_C, db, 1e-2, 1e-2);
    free(gn_inp), free(gn_w), free(gn_b), free(g_out), free(g_R), free(dinp), free(dw), free(db), free(w0), free(b0);
}

static int P_B = 2, P_H = 4, P_W = 6, P_C = 3;
static float *p_inp;
static void fwd_relu(void)
{
    dev.ops->relu_forward(&dev, g_out, p_inp, (int64_t)P_B * P_H * P_W * P_C, &err);
}
static void fwd_maxpool(void)
{
    dev.ops->maxpool2_forward(&dev, g_out, p_inp, P_B, P_H, P_W, P_C, &err);
}
static void fwd_avgpool(void)
{
    dev.ops->avgpool_forward(&dev, g_out, p_inp, P_B, P_H * P_W, P_C, &err);
}

/* Piecewise-linear ops: inputs are kept away from the kinks (|x| > 0.05 and
 * distinct window values), so h = 1e-3 crosses none. */
static void test_piecewise(void)
{
    int64_t n = (int64_t)P_B * P_H * P_W * P_C;
    p_inp = randn(n, 1);
    for (int64_t i = 0; i < n; i++) p_inp[i] += p_inp[i] < 0 ? -0.05f : 0.05f;
    for (int64_t i = 0; i < n; i++) p_inp[i] += 1e-2f * (float)i; /* no near-ties in a window */
    float *dx = zeros(n);
    g_nout = n;
    g_out = zeros(n);
    g_R = randn(n, 1);
    g_fwd = fwd_relu;
    loss_now();
    CHECK_OK(dev.ops->relu_backward(&dev, dx, g_out, g_R, n, &err), &err);
    fd_check("relu dinp", p_inp, n, dx, 1e-3, 1e-2);
    g_nout = n / 4;
    g_fwd = fwd_maxpool;
    loss_now();
    CHECK_OK(dev.ops->maxpool2_backward(&dev, dx, g_R, p_inp, P_B, P_H, P_W, P_C, &err), &err);
    fd_check("maxpool2 dinp", p_inp, n, dx, 1e-3, 1e-2);
    g_nout = (int64_t)P_B * P_C;
    g_fwd = fwd_avgpool;
    loss_now();
    CHECK_OK(dev.ops->avgpool_backward(&dev, dx, g_R, P_B, P_H * P_W, P_C, &err), &err);
    fd_check("avgpool dinp", p_inp, n, dx, 1e-3, 1e-2);
    free(p_inp), free(dx), free(g_out), free(g_R);
}

int main(void)
{
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &err), &err);
    test_embedding();
    test_layernorm();
    test_pointwise();
    test_xent();
    test_linear_maps();
    test_conv();
    test_groupnorm();
    test_piecewise();
    ob_device_close(&dev);
    return check_done();
}
