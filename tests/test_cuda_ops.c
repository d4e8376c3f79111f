/* tests/test_cuda_ops.c - the CUDA backend against the CPU backend (label "cuda").
 *
 * Every op the CUDA table fills runs on both backends on the same inputs and
 * the results are compared with the tolerances below; then a 20-step
 * trajectory of every small workload x every optimizer runs through the whole
 * pipeline on both. Without a CUDA device (or in a build without CUDA) the
 * program exits 77, which ctest reports as skipped, never as passed.
 *
 * Tolerances (fp32 everywhere, TF32 off), and why:
 * (relative with a floor: |a - b| <= tol * max(|a|, floor), the floor being the
 * values' scale where an output can cancel to near zero)
 *   fill, axpby, clamp_abs, abs_quantile,       exact: same arithmetic, a selection,
 *   embedding, heads, rows, im2col/col2im,      or sums in the CPU's order
 *   pooling, relu, bias/norm parameter grads
 *   rng_normal, synth_images                    1e-6 / 1e-5 (floor 1): device log/cos in
 *                                               double differ from libm in the last bits
 *   layer outputs (norms, gelu, softmax, xent)  1e-5 .. 1e-4; gelu's exp polynomial is the
 *                                               CPU's, but the row sums of the norms, softmax
 *                                               and xent are warp/block trees (other order),
 *                                               and nvcc may fuse: a note says when not bitwise
 *   dot, grad_stats, batched_normalize, norms,  1e-6 relative (sums in double, other order)
 *   batched_sumsq
 *   round_bf16                                  exact (core/bf16.h on both)
 *   batched_normalize in bf16                   8e-3 relative: a norm summed in another order
 *                                               can round to the next bf16, and so every quotient
 *   gemm, gemm_strided_batched, gemm_sb_bf16    1e-5 of max|C| (other summation order;
 *                                               gemm_sb_bf16 on bf16 values: exact products)
 *   elementwise rules (3 steps)                 2e-5 (floor 1e-2 / 1e-3); expected
 *                                               bitwise (the CUDA step is built without
 *                                               FMA contraction) and reported when not
 *   (and 3 rules over several grid waves)       the same; their fused statistics 1e-10
 *   elementwise_step_batch (5 rules)            2e-5, and the CPU's bitwise against one
 *                                               elementwise_step per segment
 *   elementwise_step_batch_sumsq (lamb)         2e-5; its sums of squares 1e-6
 *   elementwise_step_spans (6 rules)            2e-5, the CPU's bitwise against one
 *                                               elementwise_step per span; statistics 1e-10
 *   rosenbrock                                  1e-6 relative (rounding made explicit)
 *   svd_polar                                   1e-4 (both in double, then float)
 *   swap01, eig_order                           exact (a copy; sums in the CPU's order)
 *   rows_sumsq, cols_sumsq, adafactor_precond, adafactor_scale, trust_scale   exact (sums in the CPU's order)
 *   sym_eigvecs, qr_orth                        each row up to its sign, ||dot| - 1| < 1e-4
 *                                               (other float32 solvers: LAPACK, cuSOLVER)
 *   trajectories (20 steps)                     loss 2e-3 relative (+1e-6 of the first
 *                                               loss), final parameters 2e-3 relative L2
 *                                               (1e-2 for the networks: GEMM order differs,
 *                                               and sign-like updates flip on near-zero
 *                                               gradients; SOAP on the networks loss 1e-2,
 *                                               parameters 0.15: its first eigenbases are
 *                                               ill-determined, see test_trajectories)
 * The GPU's reductions must also repeat bitwise (two runs of dot compared exactly).
 *
 * OB_TEST_PEER=cpu compares the CPU backend with itself: it exercises this
 * test's own logic on a machine without a GPU (and must then pass exactly).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/bf16.h"
#include "dev_io.h"
#include "core/layout.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

static ob_device cpu, gpu;
static ob_err err;

/* ---- helpers ----------------------------------------------------------------------- */

static void randn(float *x, int64_t n, uint64_t seed, float scale)
{
    for (int64_t i = 0; i < n; i++) x[i] = scale * ob_rng_normal(seed, OB_STREAM_MISC, (uint64_t)i);
}

/* max over i of |a-b| / max(|a|, floor); NaN in one and not the other is
 * infinite, and so is an infinity in either that the other does not equal
 * (the quotient would be inf / inf = NaN, which no comparison catches). */
static double max_rel(const float *a, const float *b, int64_t n, double floor_)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (isnan(a[i]) != isnan(b[i])) return INFINITY;
            continue;
        }
        if (a[i] == b[i]) continue;
        if (isinf(a[i]) || isinf(b[i])) return INFINITY;
        double d = fabs((double)a[i] - (double)b[i]) / fmax(fabs((double)a[i]), floor_);
        if (d > m) m = d;
    }
    return m;
}

static int bitwise_equal(const float *a, const float *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof(float)) == 0;
}

/* max_rel itself (no device needed): a difference it returned as NaN, or
 * skipped, would let a wrong CUDA result pass every tolerance. */
static void test_max_rel(void)
{
    const float inf = INFINITY, nan = NAN;
    const float a[] = {inf, inf, 1.0f, nan, 2.0f, -inf}, b[] = {1.0f, -inf, inf, nan, 2.0f, -inf};
    for (int i = 0; i < 3; i++)
        CHECK_MSG(max_rel(a + i, b + i, 1, 1e-3) == INFINITY, "max_rel(%g, %g) = %g, not infinite", a[i], b[i],
                  max_rel(a + i, b + i, 1, 1e-3));
    CHECK(max_rel(a + 3, b + 3, 3, 1e-3) == 0); /* NaN and NaN, equal values, the same infinity */
    CHECK(max_rel(a + 2, a + 2, 1, 1e-3) == 0 && max_rel(a + 4, b + 3, 1, 1e-3) == INFINITY);
}

#define OK(call)                                                              \
    do {                                                                      \
        ob_status s_ = (call);                                                \
        if (s_ != OB_OK) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, err.msg); \
            ob_t_fail++;                                                      \
            return;                                                           \
        }                                                                     \
    } while (0)

/* ---- the table ------------------------------------------------------------------- */

/* Slots the CPU fills and CUDA does not (the struct is a name and then
 * function pointers only). */
static int table_gaps(const ob_backend_ops *c, const ob_backend_ops *g, int verbose)
{
    typedef void (*fp)(void);
    size_t first = offsetof(ob_backend_ops, probe);
    size_t n = (sizeof(ob_backend_ops) - first) / sizeof(fp);
    const unsigned char *cb = (const unsigned char *)c + first, *gb = (const unsigned char *)g + first;
    int gaps = 0;
    /* optional accelerations a backend may leave out (callers fall back) */
    const size_t optional[] = {offsetof(ob_backend_ops, conv_supported), offsetof(ob_backend_ops, conv_forward),
                               offsetof(ob_backend_ops, conv_backward),
                               offsetof(ob_backend_ops, syrk_strided_batched),
                               offsetof(ob_backend_ops, sym_eigvecs_batch), offsetof(ob_backend_ops, qr_orth_batch),
                               offsetof(ob_backend_ops, eig_order_batch), offsetof(ob_backend_ops, batch_floats)};
    for (size_t i = 0; i < n; i++) {
        int opt = 0;
        for (size_t k = 0; k < sizeof optional / sizeof optional[0]; k++) opt |= first + i * sizeof(fp) == optional[k];
        if (opt) continue;
        fp cf, gf;
        memcpy(&cf, cb + i * sizeof(fp), sizeof cf);
        memcpy(&gf, gb + i * sizeof(fp), sizeof gf);
        if (cf && !gf) {
            gaps++;
            if (verbose) fprintf(stderr, "note: the CUDA table lacks slot %zu (counted after 'name') that the CPU fills\n", i);
        }
    }
    return gaps;
}

/* ---- ops ------------------------------------------------------------------------ */

static void test_fill_axpby_rng(void)
{
    const int64_t n = 100003;
    float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *a = malloc(n * sizeof *a),
          *b = malloc(n * sizeof *b);
    randn(hx, n, 1, 1.0f);
    randn(hy, n, 2, 3.0f);
    float *cx = dev_put(&cpu, hx, n), *cy = dev_put(&cpu, hy, n);
    float *gx = dev_put(&gpu, hx, n), *gy = dev_put(&gpu, hy, n);
    OK(cpu.ops->axpby(&cpu, n, 0.7f, cx, -1.3f, cy, &err));
    OK(gpu.ops->axpby(&gpu, n, 0.7f, gx, -1.3f, gy, &err));
    dev_get(&cpu, a, cy, n);
    dev_get(&gpu, b, gy, n);
    CHECK_MSG(bitwise_equal(a, b, n), "axpby differs: max rel %g", max_rel(a, b, n, 1e-30));
    /* aliased x == y, as the quadratic workload uses it */
    OK(cpu.ops->axpby(&cpu, n, 0.0f, cy, 0.5f, cy, &err));
    OK(gpu.ops->axpby(&gpu, n, 0.0f, gy, 0.5f, gy, &err));
    dev_get(&cpu, a, cy, n);
    dev_get(&gpu, b, gy, n);
    CHECK_MSG(bitwise_equal(a, b, n), "aliased axpby differs");

    OK(cpu.ops->fill(&cpu, cx, -2.5f, n - 1, &err));
    OK(gpu.ops->fill(&gpu, gx, -2.5f, n - 1, &err));
    dev_get(&cpu, a, cx, n);
    dev_get(&gpu, b, gx, n);
    CHECK_MSG(bitwise_equal(a, b, n), "fill differs (or wrote past n)");

    if (cpu.ops->round_bf16 && gpu.ops->round_bf16) { /* every kind of float: random bit patterns */
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = ob_philox(8, 1, (uint64_t)i).v[0];
            memcpy(&hx[i], &u, sizeof u);
        }
        float *c = dev_put(&cpu, hx, n), *g = dev_put(&gpu, hx, n);
        OK(cpu.ops->round_bf16(&cpu, c, n - 1, &err));
        OK(gpu.ops->round_bf16(&gpu, g, n - 1, &err));
        dev_get(&cpu, a, c, n);
        dev_get(&gpu, b, g, n);
        CHECK_MSG(memcmp(a, b, (size_t)n * sizeof *a) == 0, "round_bf16 differs (or wrote past n)");
        ob_dev_free(&cpu, c);
        ob_dev_free(&gpu, g);
    }

    OK(cpu.ops->rng_normal(&cpu, cx, n, 42, OB_STREAM_NOISE + 3, 12345, 0.5f, 2.0f, &err));
    OK(gpu.ops->rng_normal(&gpu, gx, n, 42, OB_STREAM_NOISE + 3, 12345, 0.5f, 2.0f, &err));
    dev_get(&cpu, a, cx, n);
    dev_get(&gpu, b, gx, n);
    double r = max_rel(a, b, n, 1.0);
    CHECK_MSG(r <= 1e-6, "rng_normal: max rel diff %g", r);
    /* the host generator itself is the reference */
    CHECK_NEAR(a[7], 0.5f + 2.0f * ob_rng_normal(42, OB_STREAM_NOISE + 3, 12345 + 7), 0);
    ob_dev_free(&cpu, cx);
    ob_dev_free(&cpu, cy);
    ob_dev_free(&gpu, gx);
    ob_dev_free(&gpu, gy);
    free(hx);
    free(hy);
    free(a);
    free(b);
}

/* finish_stats with the spike guard: the same window and steps on both
 * backends give the same verdicts and the same window, bit for bit (the
 * scores are double sums in index order). cs/gs: a statistics block on each. */
static void spike_parity(ob_step_stats *cs, ob_step_stats *gs)
{
    ob_spike sp;
    memset(&sp, 0, sizeof sp);
    sp.window = 16;
    sp.z_loss = 4.0f;
    sp.z_grad = 4.0f;
    ob_spike *csp, *gsp;
    OK(ob_dev_alloc(&cpu, sizeof sp, (void **)&csp, &err));
    OK(ob_dev_alloc(&gpu, sizeof sp, (void **)&gsp, &err));
    OK(cpu.ops->upload(&cpu, csp, &sp, sizeof sp, &err));
    OK(gpu.ops->upload(&gpu, gsp, &sp, sizeof sp, &err));
    ob_step_record *crec, *grec, rc, rg;
    OK(ob_dev_alloc(&cpu, sizeof rc, (void **)&crec, &err));
    OK(ob_dev_alloc(&gpu, sizeof rg, (void **)&grec, &err));
    int n_spikes = 0;
    for (int k = 0; k < 40; k++) {
        /* a noisy plateau, a loss spike at 20, a gradient spike at 30 */
        float loss = 2.0f + 0.01f * (float)((k * 7) % 5), norm = 1.0f + 0.02f * (float)((k * 3) % 4);
        if (k == 20) loss = 9.0f;
        if (k == 30) norm = 50.0f;
        ob_step_stats st = {(double)norm * norm, 0, 0, 0, 0, 1, 0};
        float *cl = dev_put(&cpu, &loss, 1), *gl = dev_put(&gpu, &loss, 1);
        OK(cpu.ops->upload(&cpu, cs, &st, sizeof st, &err));
        OK(gpu.ops->upload(&gpu, gs, &st, sizeof st, &err));
        OK(cpu.ops->finish_stats(&cpu, cs, cl, 0.0f, csp, crec, &err));
        OK(gpu.ops->finish_stats(&gpu, gs, gl, 0.0f, gsp, grec, &err));
        OK(cpu.ops->download(&cpu, &rc, crec, sizeof rc, &err));
        OK(gpu.ops->download(&gpu, &rg, grec, sizeof rg, &err));
        CHECK_MSG(rc.skipped == rg.skipped, "spike guard at step %d: cpu %g cuda %g", k, rc.skipped, rg.skipped);
        for (int q = 0; q < 2; q++) /* the scores, bit for bit (no fused multiply-add on either side) */
            CHECK_MSG(memcmp(&rc.spike_z[q], &rg.spike_z[q], sizeof(float)) == 0,
                      "spike score %d at step %d: cpu %.9g cuda %.9g", q, k, rc.spike_z[q], rg.spike_z[q]);
        n_spikes += rc.skipped != 0.0f;
        ob_dev_free(&cpu, cl);
        ob_dev_free(&gpu, gl);
    }
    CHECK_MSG(n_spikes == 2, "spike guard: %d steps flagged on the CPU, 2 planted", n_spikes);
    ob_spike wc, wg;
    OK(cpu.ops->download(&cpu, &wc, csp, sizeof wc, &err));
    OK(gpu.ops->download(&gpu, &wg, gsp, sizeof wg, &err));
    CHECK(memcmp(&wc, &wg, sizeof wc) == 0);
    ob_dev_free(&cpu, csp);
    ob_dev_free(&gpu, gsp);
    ob_dev_free(&cpu, crec);
    ob_dev_free(&gpu, grec);
}

static void test_dot_stats(void)
{
    const int64_t sizes[] = {1, 5, 4099, 1000003};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy);
        randn(hx, n, 3 + si, 1.0f);
        randn(hy, n, 4 + si, 1.0f);
        /* misaligned views (offset 1) take the scalar path */
        for (int off = 0; off < 2 && off < n; off++) {
            int64_t m = n - off;
            float *cx = dev_put(&cpu, hx, n), *cy = dev_put(&cpu, hy, n), *co = dev_put(&cpu, NULL, 1);
            float *gx = dev_put(&gpu, hx, n), *gy = dev_put(&gpu, hy, n), *go = dev_put(&gpu, NULL, 1);
            float rc, rg, rg2;
            OK(cpu.ops->dot(&cpu, m, cx + off, cy + off, co, &err));
            OK(gpu.ops->dot(&gpu, m, gx + off, gy + off, go, &err));
            dev_get(&cpu, &rc, co, 1);
            dev_get(&gpu, &rg, go, 1);
            OK(gpu.ops->dot(&gpu, m, gx + off, gy + off, go, &err));
            dev_get(&gpu, &rg2, go, 1);
            CHECK_MSG(fabs(rc - rg) <= 1e-6 * fmax(fabs(rc), 1e-3), "dot n=%lld off=%d: cpu %.9g cuda %.9g",
                      (long long)m, off, rc, rg);
            CHECK_MSG(memcmp(&rg, &rg2, sizeof rg) == 0, "dot is not bitwise repeatable on CUDA");

            /* gradient statistics with planted non-finite values; accumulates */
            if (m > 3) {
                float bad[3] = {NAN, INFINITY, -INFINITY};
                OK(cpu.ops->upload(&cpu, cx + off + 1, bad, sizeof bad, &err));
                OK(gpu.ops->upload(&gpu, gx + off + 1, bad, sizeof bad, &err));
            }
            ob_step_stats s0 = {1.5, 2.0, 0, 0, 0, 0, 0}, sc, sg;
            ob_step_stats *cs, *gs;
            OK(ob_dev_alloc(&cpu, sizeof s0, (void **)&cs, &err));
            OK(ob_dev_alloc(&gpu, sizeof s0, (void **)&gs, &err));
            OK(cpu.ops->upload(&cpu, cs, &s0, sizeof s0, &err));
            OK(gpu.ops->upload(&gpu, gs, &s0, sizeof s0, &err));
            OK(cpu.ops->grad_stats(&cpu, cx + off, m, cs, &err));
            OK(gpu.ops->grad_stats(&gpu, gx + off, m, gs, &err));
            OK(cpu.ops->download(&cpu, &sc, cs, sizeof sc, &err));
            OK(gpu.ops->download(&gpu, &sg, gs, sizeof sg, &err));
            CHECK_MSG(sc.nonfinite == sg.nonfinite, "grad_stats non-finite: cpu %g cuda %g", sc.nonfinite,
                      sg.nonfinite);
            CHECK_MSG(fabs(sc.sumsq - sg.sumsq) <= 1e-10 * sc.sumsq, "grad_stats sumsq: cpu %.17g cuda %.17g",
                      sc.sumsq, sg.sumsq);

            /* finish_stats: clip and guard */
            float loss_h[2] = {3.0f, NAN};
            for (int li = 0; li < 2; li++) {
                float *cl = dev_put(&cpu, &loss_h[li], 1), *gl = dev_put(&gpu, &loss_h[li], 1);
                ob_step_record rcc, rgg, *crec, *grec;
                OK(ob_dev_alloc(&cpu, sizeof rcc, (void **)&crec, &err));
                OK(ob_dev_alloc(&gpu, sizeof rgg, (void **)&grec, &err));
                ob_step_stats clean = {sc.sumsq, 0, 0, 0, 0, 0, 0};
                OK(cpu.ops->upload(&cpu, cs, &clean, sizeof clean, &err));
                OK(gpu.ops->upload(&gpu, gs, &clean, sizeof clean, &err));
                OK(cpu.ops->finish_stats(&cpu, cs, cl, 0.5f, NULL, crec, &err));
                OK(gpu.ops->finish_stats(&gpu, gs, gl, 0.5f, NULL, grec, &err));
                OK(cpu.ops->download(&cpu, &sc, cs, sizeof sc, &err));
                OK(gpu.ops->download(&gpu, &sg, gs, sizeof sg, &err));
                OK(cpu.ops->download(&cpu, &rcc, crec, sizeof rcc, &err));
                OK(gpu.ops->download(&gpu, &rgg, grec, sizeof rgg, &err));
                CHECK(sc.skip == sg.skip && rcc.skipped == rgg.skipped);
                CHECK_MSG(fabs(sc.clip_scale - sg.clip_scale) <= 1e-6 * sc.clip_scale,
                          "clip_scale cpu %.9g cuda %.9g", sc.clip_scale, sg.clip_scale);
                CHECK(isnan(sc.grad_norm) == isnan(sg.grad_norm));
                if (!isnan(sc.grad_norm))
                    CHECK_MSG(fabs(sc.grad_norm - sg.grad_norm) <= 1e-6 * sc.grad_norm, "grad_norm");
                CHECK(isnan(rcc.loss) == isnan(rgg.loss));
                ob_dev_free(&cpu, cl);
                ob_dev_free(&gpu, gl);
                ob_dev_free(&cpu, crec);
                ob_dev_free(&gpu, grec);
            }
            if (off == 0) spike_parity(cs, gs);
            ob_dev_free(&cpu, cs);
            ob_dev_free(&gpu, gs);
            ob_dev_free(&cpu, cx);
            ob_dev_free(&cpu, cy);
            ob_dev_free(&cpu, co);
            ob_dev_free(&gpu, gx);
            ob_dev_free(&gpu, gy);
            ob_dev_free(&gpu, go);
        }
        free(hx);
        free(hy);
    }
}

/* The largest |rc - rg| over n floats (a NaN counts as infinitely far; fmax
 * would drop it), and in *mx the largest |rc|. */
static double max_abs_diff(const float *rc, const float *rg, int64_t n, double *mx)
{
    double d = 0;
    *mx = 0;
    for (int64_t i = 0; i < n; i++) {
        *mx = fmax(*mx, fabs(rc[i]));
        double di = fabs((double)rc[i] - rg[i]);
        if (!(di <= d)) d = isnan(di) ? INFINITY : di;
    }
    return d;
}

/* Frees a, b, c on the CPU device and ga, gb, gc on the GPU device. */
static void free_six(float *a, float *b, float *c, float *ga, float *gb, float *gc)
{
    ob_dev_free(&cpu, a);
    ob_dev_free(&cpu, b);
    ob_dev_free(&cpu, c);
    ob_dev_free(&gpu, ga);
    ob_dev_free(&gpu, gb);
    ob_dev_free(&gpu, gc);
}

static void test_gemm(void)
{
    const int m = 37, n = 29, k = 53, batch = 3;
    /* storage big enough for every transpose with padded leading dimensions */
    const int lda = 64, ldb = 64, ldc = 40;
    const int64_t sa = 64 * 64, sb = 64 * 64, sc = 64 * 40;
    int64_t na = sa * batch, nb = sb * batch, nc = sc * batch;
    float *ha = malloc(na * sizeof *ha), *hb = malloc(nb * sizeof *hb), *hc = malloc(nc * sizeof *hc);
    float *rc = malloc(nc * sizeof *rc), *rg = malloc(nc * sizeof *rg);
    randn(ha, na, 10, 1.0f);
    randn(hb, nb, 11, 1.0f);
    randn(hc, nc, 12, 1.0f);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int batched = 0; batched < 2; batched++) {
                float *ca = dev_put(&cpu, ha, na), *cb = dev_put(&cpu, hb, nb), *cc = dev_put(&cpu, hc, nc);
                float *ga = dev_put(&gpu, ha, na), *gb = dev_put(&gpu, hb, nb), *gc = dev_put(&gpu, hc, nc);
                if (batched) {
                    OK(cpu.ops->gemm_strided_batched(&cpu, ta, tb, m, n, k, 0.75f, ca, lda, sa, cb, ldb, sb, 0.5f,
                                                     cc, ldc, sc, batch, &err));
                    OK(gpu.ops->gemm_strided_batched(&gpu, ta, tb, m, n, k, 0.75f, ga, lda, sa, gb, ldb, sb, 0.5f,
                                                     gc, ldc, sc, batch, &err));
                } else {
                    OK(cpu.ops->gemm(&cpu, ta, tb, m, n, k, 0.75f, ca, lda, cb, ldb, 0.5f, cc, ldc, &err));
                    OK(gpu.ops->gemm(&gpu, ta, tb, m, n, k, 0.75f, ga, lda, gb, ldb, 0.5f, gc, ldc, &err));
                }
                dev_get(&cpu, rc, cc, nc);
                dev_get(&gpu, rg, gc, nc);
                double mx, d = max_abs_diff(rc, rg, nc, &mx);
                CHECK_MSG(d <= 1e-5 * mx, "gemm ta=%d tb=%d batched=%d: max diff %g of max %g", ta, tb, batched, d,
                          mx);
                /* the padding beyond n columns is untouched */
                CHECK_MSG(rg[ldc - 1] == hc[ldc - 1], "gemm wrote outside C");
                free_six(ca, cb, cc, ga, gb, gc);
            }
    /* gemm_sb_bf16 on bf16 values (CPU: oneDNN's bf16 units or OpenBLAS;
     * CUDA: tensor cores), and its Gram form (B = A, one side transposed) */
    for (int64_t i = 0; i < na; i++) ha[i] = ob_bf16_round(ha[i]);
    for (int64_t i = 0; i < nb; i++) hb[i] = ob_bf16_round(hb[i]);
    for (int tcase = 0; tcase < 5 && cpu.ops->gemm_sb_bf16 && gpu.ops->gemm_sb_bf16; tcase++) {
        const int gram = tcase == 4, ta = gram ? 0 : tcase / 2, tb = gram ? 1 : tcase % 2, nn = gram ? m : n;
        float *ca = dev_put(&cpu, ha, na), *cb = dev_put(&cpu, hb, nb), *cc = dev_put(&cpu, hc, nc);
        float *ga = dev_put(&gpu, ha, na), *gb = dev_put(&gpu, hb, nb), *gc = dev_put(&gpu, hc, nc);
        OK(cpu.ops->gemm_sb_bf16(&cpu, ta, tb, m, nn, k, 0.75f, ca, lda, sa, gram ? ca : cb, gram ? lda : ldb,
                                 gram ? sa : sb, 0.0f, cc, ldc, sc, batch, &err));
        OK(gpu.ops->gemm_sb_bf16(&gpu, ta, tb, m, nn, k, 0.75f, ga, lda, sa, gram ? ga : gb, gram ? lda : ldb,
                                 gram ? sa : sb, 0.0f, gc, ldc, sc, batch, &err));
        dev_get(&cpu, rc, cc, nc);
        dev_get(&gpu, rg, gc, nc);
        double mx, d = max_abs_diff(rc, rg, nc, &mx);
        CHECK_MSG(d <= 1e-5 * mx, "gemm_sb_bf16 ta=%d tb=%d gram=%d: max diff %g of max %g", ta, tb, gram, d, mx);
        CHECK_MSG(rg[ldc - 1] == hc[ldc - 1], "gemm_sb_bf16 wrote outside C");
        free_six(ca, cb, cc, ga, gb, gc);
    }
    free(ha);
    free(hb);
    free(hc);
    free(rc);
    free(rg);
}

/* ---- the fused update: every rule kind ---------------------------------------------- */

typedef struct rule_case {
    const char *name;
    ob_rule r;
    int positive_state; /* state roles hold non-negative values (second moments) */
} rule_case;

/* room for the parity cases: rule_cases stops the test if they outgrow it */
#define RULE_CASES_MAX 64

static int rule_cases(rule_case *out)
{
    int n = 0;
    ob_rule b;
    memset(&b, 0, sizeof b);
    ob_rule_betas(&b, 0.9f, 0.99f);
    ob_rule_momentum(&b, 0, 0); /* the complements of no momentum: 1 */
    b.eps = 1e-8f;
#define ADD(nm, kind_, ns, pos, ...)           \
    do {                                       \
        if (n == RULE_CASES_MAX) {             \
            fprintf(stderr, "rule_cases: more than RULE_CASES_MAX cases\n"); \
            exit(1);                           \
        }                                      \
        out[n].name = nm;                      \
        out[n].r = b;                          \
        out[n].r.kind = kind_;                 \
        out[n].r.n_state = ns;                 \
        out[n].positive_state = pos;           \
        {                                      \
            ob_rule *r = &out[n].r;            \
            (void)r;                           \
            __VA_ARGS__;                       \
        }                                      \
        n++;                                   \
    } while (0)
    ADD("sgd", OB_RULE_SGD, 0, 0, r->weight_decay = 0.01f);
    ADD("sgd-momentum-nesterov", OB_RULE_SGD, 1, 0, ob_rule_momentum(r, 0.9f, 0); r->nesterov = 1);
    ADD("sgd-momentum-dampening", OB_RULE_SGD, 1, 0, ob_rule_momentum(r, 0.8f, 0.1f); r->weight_decay = 1e-3f);
    ADD("adam-l2", OB_RULE_ADAM, 2, 1, r->weight_decay = 0.01f);
    ADD("adamw", OB_RULE_ADAM, 2, 1, r->weight_decay = 0.1f; r->decoupled_wd = 1);
    ADD("adam-amsgrad", OB_RULE_ADAM, 3, 1, r->amsgrad = 1);
    ADD("nadam", OB_RULE_NADAM, 2, 1, r->weight_decay = 0.01f);
    ADD("radam", OB_RULE_RADAM, 2, 1, (void)0);
    ADD("adamax", OB_RULE_ADAMAX, 2, 1, (void)0);
    ADD("adagrad", OB_RULE_ADAGRAD, 1, 1, r->eps = 1e-10f);
    ADD("adadelta", OB_RULE_ADADELTA, 2, 1, r->eps = 1e-6f);
    ADD("rmsprop", OB_RULE_RMSPROP, 1, 1, r->eps = 1e-8f);
    ADD("rmsprop-centered", OB_RULE_RMSPROP, 2, 1, r->flags = OB_RULE_CENTERED);
    ADD("rmsprop-momentum", OB_RULE_RMSPROP, 2, 1, ob_rule_momentum(r, 0.9f, 0));
    ADD("rmsprop-centered-momentum", OB_RULE_RMSPROP, 3, 1, r->flags = OB_RULE_CENTERED; ob_rule_momentum(r, 0.9f, 0));
    ADD("lion", OB_RULE_LION, 1, 0, r->weight_decay = 0.1f);
    ADD("muon-momentum", OB_RULE_MUON_MOMENTUM, 1, 0, ob_rule_momentum(r, 0.95f, 0); r->nesterov = 1);
    ADD("root-momentum", OB_RULE_ROOT_MOMENTUM, 1, 0, ob_rule_momentum(r, 0.95f, 0));
    ADD("matrix-apply", OB_RULE_MATRIX_APPLY, 1, 0, r->weight_decay = 0.1f; r->c[0] = 0.2f);
    ADD("adamw-sf", OB_RULE_ADAMW_SF, 2, 1, r->weight_decay = 0.01f);
    ADD("sgd-sf", OB_RULE_SGD_SF, 1, 0, r->weight_decay = 0.01f);
    ADD("copy-clipped", OB_RULE_COPY, 0, 0, r->c[0] = 1.0f);
    ADD("copy", OB_RULE_COPY, 0, 0, (void)0);
    ADD("lerp", OB_RULE_LERP, 0, 0, r->c[0] = 0.05f);
    ADD("lerp-high", OB_RULE_LERP, 0, 0, r->c[0] = 0.75f);
    ADD("soap-adam", OB_RULE_SOAP_ADAM, 2, 1, (void)0);
    ADD("soap-apply", OB_RULE_SOAP_APPLY, 1, 0, (void)0);
    ADD("soap-apply-no-decay", OB_RULE_SOAP_APPLY, 1, 0, r->flags = OB_RULE_SKIP_DECAY);
    ADD("af-var", OB_RULE_AF_VAR, 0, 0, (void)0);
    ADD("af-var-sq", OB_RULE_AF_VAR, 0, 0, r->c[0] = 1.0f);
    ADD("af-vec", OB_RULE_AF_VEC, 1, 1, r->eps = 1e-3f);
    ADD("af-apply", OB_RULE_AF_APPLY, 1, 0, r->weight_decay = 0.1f);
    ADD("rprop", OB_RULE_RPROP, 2, 1, r->c[0] = 1.2f; r->c[1] = 0.5f; r->c[2] = 1e-6f; r->c[3] = 50.0f);
    ADD("asgd", OB_RULE_ASGD, 1, 0, r->c[0] = 1e-4f; r->weight_decay = 0.01f);
    ADD("lamb", OB_RULE_LAMB, 3, 1, r->weight_decay = 0.01f; r->c[0] = 1.0f);
    ADD("lamb-sum", OB_RULE_LAMB, 3, 1, r->beta1 = 0.3f); /* m = beta1 m + g, no decay */
    ADD("lars", OB_RULE_LARS, 0, 0, r->weight_decay = 1e-4f);
    ADD("lars-momentum-nesterov", OB_RULE_LARS, 1, 0, ob_rule_momentum(r, 0.9f, 0); r->nesterov = 1; r->weight_decay = 5e-4f);
    ADD("ademamix", OB_RULE_ADEMAMIX, 3, 1, r->weight_decay = 0.01f; r->c[0] = 0.1f; r->c[1] = 0.01f);
    /* step c[1] = 0 at t = 2: the rectified rule's SGD phase */
    ADD("adabelief", OB_RULE_ADABELIEF, 2, 1, r->weight_decay = 0.1f; r->decoupled_wd = 1; r->eps = 1e-16f);
    ADD("adabelief-l2-amsgrad", OB_RULE_ADABELIEF, 3, 1, r->weight_decay = 0.01f; r->amsgrad = 1);
    ADD("adabelief-fixed-decay", OB_RULE_ADABELIEF, 2, 1, r->weight_decay = 0.01f; r->decoupled_wd = 1;
        r->flags = OB_RULE_FIXED_DECAY; r->c[0] = 0.99f);
#undef ADD
    return n;
}

/* Each case (those named in only[], or all) over n floats, aligned and offset
 * by one (the scalar path), plain and fused, skipped and not, 3 steps: the
 * CUDA parameters and state within 2e-5 of the CPU's, the fused statistics
 * within stats_tol of their sum in double. */
static void rules_parity(int64_t n, const char *const *only, int n_only, double stats_tol)
{
    rule_case cases[RULE_CASES_MAX];
    int nc = rule_cases(cases);
    float *hp = malloc(n * sizeof *hp), *hg = malloc(n * sizeof *hg), *hs[3], *a = malloc(n * sizeof *a),
          *b = malloc(n * sizeof *b);
    for (int k = 0; k < 3; k++) hs[k] = malloc(n * sizeof *hs[k]);
    for (int ci = 0; ci < nc; ci++) {
        const rule_case *rc = &cases[ci];
        int want = !only;
        for (int q = 0; q < n_only; q++) want |= !strcmp(rc->name, only[q]);
        if (!want) continue;
        for (int off = 0; off < 2; off++) { /* off = 1: misaligned, the scalar path */
            for (int sk = 0; sk < 4; sk++) { /* sk & 2: elementwise_step_stats (statistics summed in the update) */
                const int skip = sk & 1, fused = sk >> 1;
                int64_t m = n - off;
                randn(hp, n, 100 + ci, 0.5f);
                randn(hg, n, 200 + ci, 0.1f);
                for (int k = 0; k < 3; k++) {
                    randn(hs[k], n, 300 + 10 * ci + k, 0.05f);
                    if (rc->positive_state)
                        for (int64_t i = 0; i < n; i++) hs[k][i] = fabsf(hs[k][i]);
                }
                hg[17] = 0.0f; /* sign(0) and friends */
                if (fused && skip) hg[100] = NAN; /* counted, and nothing changes */
                float *cp = dev_put(&cpu, hp, n), *cg = dev_put(&cpu, hg, n), *gp = dev_put(&gpu, hp, n),
                      *gg = dev_put(&gpu, hg, n);
                float *cs[3] = {0}, *gs[3] = {0}, *cso[3] = {0}, *gso[3] = {0};
                for (int k = 0; k < rc->r.n_state; k++) {
                    cs[k] = dev_put(&cpu, hs[k], n);
                    gs[k] = dev_put(&gpu, hs[k], n);
                    cso[k] = cs[k] + off;
                    gso[k] = gs[k] + off;
                }
                ob_step_stats st = {0, 0, 0, 0.8f, (float)skip, 0, 0};
                ob_step_stats *cst, *gst;
                ob_rule_step *csc, *gsc;
                OK(ob_dev_alloc(&cpu, sizeof st, (void **)&cst, &err));
                OK(ob_dev_alloc(&gpu, sizeof st, (void **)&gst, &err));
                OK(ob_dev_alloc(&cpu, sizeof(ob_rule_step), (void **)&csc, &err));
                OK(ob_dev_alloc(&gpu, sizeof(ob_rule_step), (void **)&gsc, &err));
                OK(cpu.ops->upload(&cpu, cst, &st, sizeof st, &err));
                OK(gpu.ops->upload(&gpu, gst, &st, sizeof st, &err));
                for (int t = 1; t <= 3; t++) {
                    ob_rule_step s;
                    memset(&s, 0, sizeof s);
                    s.lr = 0.01f;
                    s.t = (float)t;
                    s.bc1 = (float)(1.0 - pow(0.9, t));
                    s.bc2 = (float)(1.0 - pow(0.99, t));
                    s.c[0] = 0.004f;
                    s.c[1] = t == 2 ? 0.0f : 0.003f; /* radam, adabelief: both branches */
                    s.c[2] = 2.0f;                   /* ademamix: alpha, sqrt(bc2); adabelief: a move */
                    s.c[3] = sqrtf(s.bc2);
                    OK(cpu.ops->upload(&cpu, csc, &s, sizeof s, &err));
                    OK(gpu.ops->upload(&gpu, gsc, &s, sizeof s, &err));
                    if (fused) {
                        OK(cpu.ops->elementwise_step_stats(&cpu, &rc->r, csc, cst, cp + off, cg + off, cso, m, &err));
                        OK(gpu.ops->elementwise_step_stats(&gpu, &rc->r, gsc, gst, gp + off, gg + off, gso, m, &err));
                    } else {
                        OK(cpu.ops->elementwise_step(&cpu, &rc->r, csc, cst, cp + off, cg + off, cso, m, &err));
                        OK(gpu.ops->elementwise_step(&gpu, &rc->r, gsc, gst, gp + off, gg + off, gso, m, &err));
                    }
                }
                if (fused) { /* three steps of statistics: the CPU's chunked sums against the grid's */
                    ob_step_stats sc_, sg_;
                    OK(cpu.ops->download(&cpu, &sc_, cst, sizeof sc_, &err));
                    OK(gpu.ops->download(&gpu, &sg_, gst, sizeof sg_, &err));
                    double ref = 0;
                    for (int64_t i = off; i < n; i++)
                        if (isfinite(hg[i])) ref += 3.0 * (double)hg[i] * hg[i];
                    CHECK_MSG(fabs(sc_.sumsq - ref) <= stats_tol * ref && fabs(sg_.sumsq - ref) <= stats_tol * ref,
                              "%s (%lld floats, off %d): fused statistics sumsq cpu %.17g cuda %.17g, expected %.17g",
                              rc->name, (long long)m, off, sc_.sumsq, sg_.sumsq, ref);
                    CHECK_MSG(sc_.nonfinite == (skip ? 3 : 0) && sg_.nonfinite == (skip ? 3 : 0),
                              "%s: fused statistics count %g (cpu) %g (cuda) non-finite values", rc->name,
                              sc_.nonfinite, sg_.nonfinite);
                }
                dev_get(&cpu, a, cp, n);
                dev_get(&gpu, b, gp, n);
                double r = max_rel(a, b, n, 1e-2);
                CHECK_MSG(r <= 2e-5, "%s (%lld floats, off %d, skip %d, fused %d): parameters differ, max rel %g",
                          rc->name, (long long)m, off, skip, fused, r);
                if (!skip)
                    CHECK_MSG(b[n - 1] != hp[n - 1] && (off == 0 || b[0] == hp[0]),
                              "%s (%lld floats, off %d): the last element was not updated, or one before the range was",
                              rc->name, (long long)m, off);
                if (r <= 2e-5 && !bitwise_equal(a, b, n))
                    printf("  note: rule %s (off %d) agrees within %.2g but not bitwise\n", rc->name, off, r);
                if (skip) CHECK_MSG(bitwise_equal(b, hp, n), "%s: a skipped step changed the parameters", rc->name);
                for (int k = 0; k < rc->r.n_state; k++) {
                    dev_get(&cpu, a, cs[k], n);
                    dev_get(&gpu, b, gs[k], n);
                    r = max_rel(a, b, n, 1e-3);
                    CHECK_MSG(r <= 2e-5, "%s (%lld floats, off %d): state %d differs, max rel %g", rc->name,
                              (long long)m, off, k, r);
                    if (off) CHECK_MSG(a[0] == hs[k][0] && b[0] == hs[k][0], "%s: wrote before the range", rc->name);
                    ob_dev_free(&cpu, cs[k]);
                    ob_dev_free(&gpu, gs[k]);
                }
                ob_dev_free(&cpu, cp);
                ob_dev_free(&cpu, cg);
                ob_dev_free(&gpu, gp);
                ob_dev_free(&gpu, gg);
                ob_dev_free(&cpu, cst);
                ob_dev_free(&gpu, gst);
                ob_dev_free(&cpu, csc);
                ob_dev_free(&gpu, gsc);
            }
        }
    }
    free(hp);
    free(hg);
    free(a);
    free(b);
    for (int k = 0; k < 3; k++) free(hs[k]);
}

/* Every kind the rules header knows has a parity case here (checked without
 * a device too). */
static void rule_cases_cover_kinds(void)
{
    rule_case cases[RULE_CASES_MAX];
    int nc = rule_cases(cases);
    int seen[OB_RULE_COUNT] = {0};
    for (int i = 0; i < nc; i++) seen[cases[i].r.kind] = 1;
    for (int k = 0; k < OB_RULE_COUNT; k++) CHECK_MSG(seen[k], "rule kind %d has no parity case in this test", k);
}

static void test_rules(void)
{
    rules_parity(4099, NULL, 0, 1e-12); /* a float4 body and a scalar tail */
}

/* The fused step's grid is one wave of resident blocks (at most
 * OB_CU_RED_MAX_BLOCKS with statistics), so in test_rules every thread takes
 * one float4 or none. Over several waves (about 0.8M floats per wave on an
 * H200) each thread loops in the float4 body and, misaligned, in the scalar
 * one: a stride or bound wrong past the first pass shows here. The summed
 * statistics to 1e-10 (3M terms). */
static void test_rules_waves(void)
{
    static const char *const names[] = {"sgd", "adam-amsgrad", "rmsprop-centered-momentum"};
    rules_parity(3 * 1024 * 1024 + 5, names, 3, 1e-10);
}

/* The per-step scalars of a second step (lr 0.01, betas 0.9 and 0.99) with
 * rule-specific c[0], c[1]. */
static ob_rule_step second_step(float c0, float c1)
{
    ob_rule_step sc;
    memset(&sc, 0, sizeof sc);
    sc.lr = 0.01f;
    sc.t = 2;
    sc.bc1 = 0.19f;
    sc.bc2 = 0.0199f;
    sc.c[0] = c0;
    sc.c[1] = c1;
    return sc;
}

/* elementwise_step_batch_sumsq (LAMB's direction and its norms; CUDA fuses
 * LAMB's, composes the others from three launches, as adam-amsgrad here):
 * CUDA's arrays within 2e-5 of the CPU's, the sums of squares within 1e-6
 * (double sums in other orders), with the guard's skip and without, over a
 * few segments with a tail and a float4 body, many small segments (a block
 * each), one segment over many blocks, and misaligned by a float (every
 * pointer: the scalar path, the sums taken there). */
static void test_rules_batch_sumsq(void)
{
    CHECK_MSG(cpu.ops->elementwise_step_batch_sumsq != NULL, "the CPU backend has no elementwise_step_batch_sumsq");
    if (!cpu.ops->elementwise_step_batch_sumsq || !gpu.ops->elementwise_step_batch_sumsq) return;
    rule_case cases[RULE_CASES_MAX];
    const int nc = rule_cases(cases);
    static const struct {
        const char *rule;
        int64_t n, count, off;
    } shapes[] = {{"lamb", 1001, 3, 0},         {"lamb", 70001, 2, 0},       {"lamb", 4096, 300, 0},
                  {"lamb", (1 << 20) + 3, 1, 0}, {"lamb", 70001, 2, 1},       {"lamb", 4099, 40, 1},
                  {"adam-amsgrad", 1001, 3, 0}};
    for (int si = 0; si < 2 * (int)(sizeof shapes / sizeof shapes[0]); si++) {
        const int skip = si & 1;
        const rule_case *rc = NULL;
        for (int i = 0; i < nc; i++)
            if (!strcmp(cases[i].name, shapes[si / 2].rule)) rc = &cases[i];
        CHECK_MSG(rc != NULL, "no rule case %s", shapes[si / 2].rule);
        if (!rc) continue;
        const int64_t n = shapes[si / 2].n, count = shapes[si / 2].count, off = shapes[si / 2].off;
        const int64_t sp = n + 7 - (n + 7) % 4;
        const int64_t str[OB_BATCH_STRIDES] = {n + 3 - (n + 3) % 4, sp, sp, sp, sp, 0};
        float *h[5], *c[5], *g[5];
        int64_t len[5];
        for (int k = 0; k < 5; k++) {
            len[k] = (count - 1) * str[k] + n + off;
            h[k] = malloc((size_t)len[k] * sizeof(float));
            randn(h[k], len[k], 1700 + k, k == 1 ? 0.1f : 0.5f);
            if (k == 3)
                for (int64_t i = 0; i < len[k]; i++) h[k][i] = fabsf(h[k][i]);
            c[k] = dev_put(&cpu, h[k], len[k]);
            g[k] = dev_put(&gpu, h[k], len[k]);
        }
        ob_step_stats st = {0, 0, 0, 0.8f, (float)skip, 0, 0};
        const ob_rule_step sc = second_step(0.0f, 0.141f);
        ob_step_stats *cst = dev_put_bytes(&cpu, &st, sizeof st), *gst = dev_put_bytes(&gpu, &st, sizeof st);
        ob_rule_step *csc = dev_put_bytes(&cpu, &sc, sizeof sc), *gsc = dev_put_bytes(&gpu, &sc, sizeof sc);
        float *csq = dev_put(&cpu, NULL, 2 * count), *gsq = dev_put(&gpu, NULL, 2 * count);
        float *cs[3] = {c[2] + off, c[3] + off, c[4] + off}, *gs[3] = {g[2] + off, g[3] + off, g[4] + off};
        OK(cpu.ops->elementwise_step_batch_sumsq(&cpu, &rc->r, csc, cst, c[0] + off, c[1] + off, cs, n, count, str,
                                                 csq, &err));
        OK(gpu.ops->elementwise_step_batch_sumsq(&gpu, &rc->r, gsc, gst, g[0] + off, g[1] + off, gs, n, count, str,
                                                 gsq, &err));
        for (int k = 0; k < 5; k++) {
            if (k == 1) continue;
            float *a = malloc((size_t)len[k] * sizeof(float)), *b = malloc((size_t)len[k] * sizeof(float));
            dev_get(&cpu, a, c[k], len[k]);
            dev_get(&gpu, b, g[k], len[k]);
            double m = max_rel(a, b, len[k], 1e-2);
            CHECK_MSG(m <= 2e-5, "batch_sumsq %s (%lld x %lld, offset %lld, skip %d, role %d): max rel %g",
                      rc->name, (long long)count, (long long)n, (long long)off, skip, k, m);
            free(a);
            free(b);
        }
        float *a2 = malloc((size_t)(2 * count) * sizeof(float)), *b2 = malloc((size_t)(2 * count) * sizeof(float));
        dev_get(&cpu, a2, csq, 2 * count);
        dev_get(&gpu, b2, gsq, 2 * count);
        double m = max_rel(a2, b2, 2 * count, 1e-3);
        CHECK_MSG(m <= 1e-6 && a2[0] > 0 && a2[2 * count - 1] > 0,
                  "batch_sumsq %s (%lld x %lld, offset %lld, skip %d): sums max rel %g", rc->name,
                  (long long)count, (long long)n, (long long)off, skip, m);
        free(a2);
        free(b2);
        for (int k = 0; k < 5; k++) {
            free(h[k]);
            ob_dev_free(&cpu, c[k]);
            ob_dev_free(&gpu, g[k]);
        }
        ob_dev_free(&cpu, cst);
        ob_dev_free(&gpu, gst);
        ob_dev_free(&cpu, csc);
        ob_dev_free(&gpu, gsc);
        ob_dev_free(&cpu, csq);
        ob_dev_free(&gpu, gsq);
    }
}

/* elementwise_step_spans (filter_bias_and_bn): spans that alternate between
 * the rule and the rule without its decay (each case's decay set to 0.1, so
 * that a wrong span shows at 2e-5), plain and fused, skipped and not,
 * aligned (float4 body, one span lookup per float4) and offset by one (the
 * scalar path, a lookup per element): CUDA within 2e-5 of the CPU; the CPU
 * bitwise against one elementwise_step per span with the rule or the rule
 * without the decay; the fused statistics those of the whole range (the
 * CPU's bitwise grad_stats', CUDA's within 1e-10). Layouts: a few spans over
 * a body and a tail, one span without the decay, and (adamw) up to 1500
 * spans over several waves of the grid (a thread's elements cross many). */
static void test_rules_spans(void)
{
    CHECK_MSG(cpu.ops->elementwise_step_spans != NULL, "the CPU backend has no elementwise_step_spans");
    if (!cpu.ops->elementwise_step_spans || !gpu.ops->elementwise_step_spans) return;
    static const char *const names[] = {"adamw", "adam-l2", "sgd-momentum-dampening", "lion", "adamw-sf", "asgd"};
    enum { LAYOUTS = 3, MAXB = 1501 };
    int64_t *bound = malloc(MAXB * sizeof *bound);
    rule_case cases[RULE_CASES_MAX];
    int nc = rule_cases(cases);
    for (int ci = 0; ci < nc; ci++) {
        int want = 0;
        for (size_t q = 0; q < sizeof names / sizeof names[0]; q++) want |= !strcmp(cases[ci].name, names[q]);
        if (!want) continue;
        ob_rule rule = cases[ci].r, nd = cases[ci].r;
        rule.weight_decay = 0.1f;
        nd.weight_decay = 0.0f;
        for (int li = 0; li < LAYOUTS; li++) {
            if (li == 2 && strcmp(cases[ci].name, "adamw")) continue; /* the waves: one rule */
            const int64_t n = li == 2 ? 3 * 1024 * 1024 + 4 : 4099;
            for (int off = 0; off < 2; off++)
                for (int sk = 0; sk < 4; sk++) {
                    const int skip = sk & 1, fused = sk >> 1;
                    const int64_t m = n - off;
                    int n_span = 0, nd0 = 0;
                    bound[n_span++] = 0;
                    if (li == 0) {
                        static const int64_t b0[] = {64, 80, 1024, 1040, 2048};
                        for (int k = 0; k < 5; k++) bound[n_span++] = b0[k];
                    } else if (li == 1) {
                        nd0 = 1;
                    } else {
                        nd0 = 1;
                        for (uint64_t k = 0; n_span < MAXB - 1; k++) { /* 16 .. 4096 floats each */
                            int64_t len = 16 * (1 + (int64_t)(ob_rng_uniform(77, OB_STREAM_MISC, k) * 256.0f));
                            if (bound[n_span - 1] + len >= m - 16) break;
                            bound[n_span] = bound[n_span - 1] + len;
                            n_span++;
                        }
                    }
                    bound[n_span] = m;
                    float *h[5];
                    for (int k = 0; k < 5; k++) {
                        h[k] = malloc((size_t)n * sizeof(float));
                        randn(h[k], n, 1300 + 10 * ci + k, k == 1 ? 0.1f : 0.5f);
                        if (k >= 2 && cases[ci].positive_state)
                            for (int64_t i = 0; i < n; i++) h[k][i] = fabsf(h[k][i]);
                    }
                    if (fused && skip) h[1][100] = NAN;
                    float *c[5], *g[5], *r[5];
                    for (int k = 0; k < 5; k++) {
                        c[k] = dev_put(&cpu, h[k], n);
                        g[k] = dev_put(&gpu, h[k], n);
                        r[k] = dev_put(&cpu, h[k], n);
                    }
                    ob_step_stats st = {0, 0, 0, 0.8f, (float)skip, 0, 0};
                    const ob_rule_step sc = second_step(0.004f, 0.003f);
                    ob_step_stats *cst = dev_put_bytes(&cpu, &st, sizeof st), *gst = dev_put_bytes(&gpu, &st, sizeof st),
                                  *rst = dev_put_bytes(&cpu, &st, sizeof st);
                    ob_rule_step *csc = dev_put_bytes(&cpu, &sc, sizeof sc), *gsc = dev_put_bytes(&gpu, &sc, sizeof sc);
                    int64_t *cb = dev_put_bytes(&cpu, bound, (size_t)(n_span + 1) * sizeof *bound),
                            *gb = dev_put_bytes(&gpu, bound, (size_t)(n_span + 1) * sizeof *bound);
                    float *cs[3] = {c[2] + off, c[3] + off, c[4] + off}, *gs[3] = {g[2] + off, g[3] + off, g[4] + off};
                    OK(cpu.ops->elementwise_step_spans(&cpu, &rule, csc, cst, c[0] + off, c[1] + off, cs, m, cb, n_span,
                                                       nd0, fused, &err));
                    OK(gpu.ops->elementwise_step_spans(&gpu, &rule, gsc, gst, g[0] + off, g[1] + off, gs, m, gb, n_span,
                                                       nd0, fused, &err));
                    for (int k = 0; k < n_span; k++) {
                        const int64_t a = off + bound[k];
                        float *rs[3] = {r[2] + a, r[3] + a, r[4] + a};
                        OK(cpu.ops->elementwise_step(&cpu, (k + nd0) & 1 ? &nd : &rule, csc, rst, r[0] + a, r[1] + a,
                                                     rs, bound[k + 1] - bound[k], &err));
                    }
                    for (int k = 0; k < 5; k++) {
                        if (k == 1 || (k >= 2 && k - 2 >= rule.n_state)) continue;
                        float *a = malloc((size_t)n * sizeof(float)), *b = malloc((size_t)n * sizeof(float)),
                              *ref = malloc((size_t)n * sizeof(float));
                        dev_get(&cpu, a, c[k], n);
                        dev_get(&gpu, b, g[k], n);
                        dev_get(&cpu, ref, r[k], n);
                        double mr = max_rel(a, b, n, k ? 1e-3 : 1e-2);
                        CHECK_MSG(mr <= 2e-5, "spans %s (layout %d, off %d, skip %d, fused %d, role %d): max rel %g",
                                  cases[ci].name, li, off, skip, fused, k, mr);
                        CHECK_MSG(bitwise_equal(a, ref, n), "spans %s (layout %d, off %d, role %d): the CPU's spans "
                                  "differ from one step per span", cases[ci].name, li, off, k);
                        if (skip) CHECK_MSG(bitwise_equal(b, h[k], n), "spans %s: a skipped step wrote", cases[ci].name);
                        free(a);
                        free(b);
                        free(ref);
                    }
                    if (fused) {
                        ob_step_stats a, b, ref = {0, 0, 0, 0.8f, (float)skip, 0, 0};
                        ob_step_stats *whole = dev_put_bytes(&cpu, &ref, sizeof ref);
                        OK(cpu.ops->grad_stats(&cpu, c[1] + off, m, whole, &err));
                        OK(cpu.ops->download(&cpu, &a, cst, sizeof a, &err));
                        OK(gpu.ops->download(&gpu, &b, gst, sizeof b, &err));
                        OK(cpu.ops->download(&cpu, &ref, whole, sizeof ref, &err));
                        CHECK_MSG(a.sumsq == ref.sumsq && a.nonfinite == ref.nonfinite,
                                  "spans %s (layout %d): the CPU's statistics %.17g (%g) are not grad_stats' %.17g (%g)",
                                  cases[ci].name, li, a.sumsq, a.nonfinite, ref.sumsq, ref.nonfinite);
                        CHECK_MSG(fabs(b.sumsq - ref.sumsq) <= 1e-10 * ref.sumsq && b.nonfinite == ref.nonfinite,
                                  "spans %s (layout %d): CUDA's statistics %.17g (%g), the range's %.17g (%g)",
                                  cases[ci].name, li, b.sumsq, b.nonfinite, ref.sumsq, ref.nonfinite);
                        ob_dev_free(&cpu, whole);
                    }
                    for (int k = 0; k < 5; k++) {
                        free(h[k]);
                        ob_dev_free(&cpu, c[k]);
                        ob_dev_free(&gpu, g[k]);
                        ob_dev_free(&cpu, r[k]);
                    }
                    ob_dev_free(&cpu, cst);
                    ob_dev_free(&gpu, gst);
                    ob_dev_free(&cpu, rst);
                    ob_dev_free(&cpu, csc);
                    ob_dev_free(&gpu, gsc);
                    ob_dev_free(&cpu, cb);
                    ob_dev_free(&gpu, gb);
                }
        }
    }
    free(bound);
}

/* elementwise_step_batch: count segments of n floats, each pointer with its
 * own spacing, with one step or a step per segment, against the same op on
 * the CPU (2e-5) and the CPU's against one elementwise_step per segment
 * (bitwise); the gaps between segments stay as they were, and with the
 * guard's skip nothing changes. Spacings that are multiples of 4 take the
 * float4 body with a scalar tail (n = 1001), one misaligned spacing of p, g
 * or a state role the scalar path; larger shapes run several blocks per
 * segment, more segments than the GPU holds at once, and 70000 segments two
 * launches (at most 65535 per launch). */
static void test_rules_batch(void)
{
    /* (a slot the CPU fills and CUDA does not fails the table check in main) */
    CHECK_MSG(cpu.ops->elementwise_step_batch != NULL, "the CPU backend has no elementwise_step_batch");
    if (!cpu.ops->elementwise_step_batch || !gpu.ops->elementwise_step_batch) return;
    static const char *const names[] = {"muon-momentum", "matrix-apply", "adamw", "rmsprop-centered-momentum",
                                        "copy-clipped"};
    static const struct {
        int64_t n, count, stride[OB_BATCH_STRIDES];
    } shapes[] = {
        {1001, 5, {1008, 1024, 1012, 1100, 1004, 0}},     /* float4 body + tail */
        {1001, 4, {1003, 1024, 1012, 1100, 1004, 1}},     /* p misaligned: scalar; a step per segment */
        {1001, 4, {1008, 1025, 1012, 1100, 1004, 0}},     /* only g misaligned: scalar */
        {1001, 4, {1008, 1024, 1012, 1101, 1004, 1}},     /* only the second state role misaligned */
        {70001, 3, {70004, 70008, 70012, 70016, 70020, 1}}, /* several blocks per segment */
        {4100, 1200, {4100, 4104, 4108, 4112, 4116, 0}},  /* more segments than resident blocks */
        {8, 70000, {8, 12, 16, 8, 20, 1}},                /* two launches */
    };
    rule_case cases[RULE_CASES_MAX];
    int nc = rule_cases(cases);
    for (int ci = 0; ci < nc; ci++) {
        const rule_case *rc = &cases[ci];
        int want = 0;
        for (size_t q = 0; q < sizeof names / sizeof names[0]; q++) want |= !strcmp(rc->name, names[q]);
        if (!want) continue;
        for (size_t si = 0; si < 2 * (sizeof shapes / sizeof shapes[0]); si++) {
            const int skip = (int)(si & 1); /* the guard's skip: nothing may change */
            const int64_t n = shapes[si / 2].n, count = shapes[si / 2].count;
            const int64_t *str = shapes[si / 2].stride;
            int64_t len[5];
            float *h[5], *c[5], *g[5], *ref[5];
            for (int k = 0; k < 5; k++) {
                len[k] = (count - 1) * str[k] + n;
                h[k] = malloc((size_t)len[k] * sizeof(float));
                randn(h[k], len[k], 900 + 10 * ci + k, k == 1 ? 0.1f : 0.5f);
                if (k >= 2 && rc->positive_state)
                    for (int64_t i = 0; i < len[k]; i++) h[k][i] = fabsf(h[k][i]);
                c[k] = dev_put(&cpu, h[k], len[k]);
                g[k] = dev_put(&gpu, h[k], len[k]);
                ref[k] = dev_put(&cpu, h[k], len[k]);
            }
            ob_step_stats st = {0, 0, 0, 0.8f, (float)skip, 0, 0};
            /* one step, or one per segment (each its own lr and scale) */
            const int64_t nsc = str[OB_BATCH_STEP] ? count : 1;
            ob_rule_step *sc = calloc((size_t)nsc, sizeof *sc);
            for (int64_t b = 0; b < nsc; b++) {
                sc[b].lr = 0.01f * (float)(1 + b % 7);
                sc[b].t = 2;
                sc[b].bc1 = 0.19f;
                sc[b].bc2 = 0.0199f;
                sc[b].c[0] = 0.004f * (float)(1 + b % 5);
            }
            ob_step_stats *cst = dev_put_bytes(&cpu, &st, sizeof st), *gst = dev_put_bytes(&gpu, &st, sizeof st);
            ob_rule_step *csc = dev_put_bytes(&cpu, sc, (size_t)nsc * sizeof *sc),
                         *gsc = dev_put_bytes(&gpu, sc, (size_t)nsc * sizeof *sc);
            free(sc);
            float *cs[3] = {c[2], c[3], c[4]}, *gs[3] = {g[2], g[3], g[4]};
            OK(cpu.ops->elementwise_step_batch(&cpu, &rc->r, csc, cst, c[0], c[1], cs, n, count, str, &err));
            OK(gpu.ops->elementwise_step_batch(&gpu, &rc->r, gsc, gst, g[0], g[1], gs, n, count, str, &err));
            for (int64_t b = 0; b < count; b++) {
                float *rs[3] = {ref[2] + b * str[2], ref[3] + b * str[3], ref[4] + b * str[4]};
                OK(cpu.ops->elementwise_step(&cpu, &rc->r, csc + b * str[OB_BATCH_STEP], cst, ref[0] + b * str[0],
                                             ref[1] + b * str[1], rs, n, &err));
            }
            for (int k = 0; k < 5; k++) {
                if (k == 1 || (k >= 2 && k - 2 >= rc->r.n_state)) continue;
                float *a = malloc((size_t)len[k] * sizeof(float)), *b = malloc((size_t)len[k] * sizeof(float)),
                      *r = malloc((size_t)len[k] * sizeof(float));
                dev_get(&cpu, a, c[k], len[k]);
                dev_get(&gpu, b, g[k], len[k]);
                dev_get(&cpu, r, ref[k], len[k]);
                double m = max_rel(a, b, len[k], 1e-2);
                CHECK_MSG(m <= 2e-5, "batch %s (%lld x %lld, role %d): max rel %g", rc->name, (long long)count,
                          (long long)n, k, m);
                CHECK_MSG(bitwise_equal(a, r, len[k]), "batch %s (%lld x %lld, role %d): the CPU's batch differs "
                          "from one step per segment", rc->name, (long long)count, (long long)n, k);
                int gap_ok = 1, moved = 0;
                for (int64_t i = 0; i < len[k]; i++) {
                    int in = i % str[k] < n;
                    if (!in && b[i] != h[k][i]) gap_ok = 0;
                    if (in && b[i] != h[k][i]) moved = 1;
                }
                CHECK_MSG(gap_ok, "batch %s (role %d): wrote between the segments", rc->name, k);
                if (skip)
                    CHECK_MSG(!moved && bitwise_equal(a, h[k], len[k]), "batch %s (role %d): a skipped step wrote",
                              rc->name, k);
                else
                    CHECK_MSG(moved || (k >= 2 && rc->r.kind == OB_RULE_MATRIX_APPLY),
                              "batch %s (role %d): nothing was updated", rc->name, k);
                free(a);
                free(b);
                free(r);
            }
            for (int k = 0; k < 5; k++) {
                free(h[k]);
                ob_dev_free(&cpu, c[k]);
                ob_dev_free(&gpu, g[k]);
                ob_dev_free(&cpu, ref[k]);
            }
            ob_dev_free(&cpu, cst);
            ob_dev_free(&gpu, gst);
            ob_dev_free(&cpu, csc);
            ob_dev_free(&gpu, gsc);
        }
    }
}

/* ---- matrix-optimizer ops and the SVD ------------------------------------------------ */

static void test_matrix_ops(void)
{
    if (!cpu.ops->batched_normalize || !gpu.ops->batched_normalize) return;
    const int batch = 3;
    const int64_t ns[] = {1, 7, 1000, 70001};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        int64_t n = ns[ni], stride = n + 5, tot = stride * batch;
        float *h = malloc(tot * sizeof *h), *a = malloc(tot * sizeof *a), *b = malloc(tot * sizeof *b);
        randn(h, tot, 500 + ni, 1.0f);
        /* ties: quantize one matrix to a few levels */
        for (int64_t i = 0; i < n; i++) h[stride + i] = roundf(h[stride + i] * 2.0f) / 2.0f;
        for (int flags = 0; flags < 4; flags++) { /* OB_NORM_ADD_EPS, OB_NORM_BF16 */
            float *c = dev_put(&cpu, h, tot), *g = dev_put(&gpu, h, tot);
            OK(cpu.ops->batched_normalize(&cpu, c, batch, n, stride, 1e-7f, flags, &err));
            OK(gpu.ops->batched_normalize(&gpu, g, batch, n, stride, 1e-7f, flags, &err));
            dev_get(&cpu, a, c, tot);
            dev_get(&gpu, b, g, tot);
            /* bf16: the norms, summed in another order, can round to
             * neighbouring bf16s: then every quotient differs by up to a
             * bf16 step or two (2^-8 relative) */
            const double tol = flags & OB_NORM_BF16 ? 8e-3 : 1e-6;
            double r = max_rel(a, b, tot, 1e-3);
            CHECK_MSG(r <= tol, "batched_normalize n=%lld flags %d: max rel %g", (long long)n, flags, r);
            CHECK_MSG(a[n] == h[n] && b[n] == h[n], "batched_normalize wrote into the stride gap");
            ob_dev_free(&cpu, c);
            ob_dev_free(&gpu, g);
        }
        { /* batched_sumsq: within rounding of the CPU's, which is dot's bit for bit */
            float *c = dev_put(&cpu, h, tot), *g = dev_put(&gpu, h, tot);
            float *co = dev_put(&cpu, NULL, batch), *go = dev_put(&gpu, NULL, batch), *cd = dev_put(&cpu, NULL, 1);
            float sc[3], sg[3], sd;
            OK(cpu.ops->batched_sumsq(&cpu, c, batch, n, stride, co, &err));
            OK(gpu.ops->batched_sumsq(&gpu, g, batch, n, stride, go, &err));
            dev_get(&cpu, sc, co, batch);
            dev_get(&gpu, sg, go, batch);
            for (int bi = 0; bi < batch; bi++) {
                OK(cpu.ops->dot(&cpu, n, c + bi * stride, c + bi * stride, cd, &err));
                dev_get(&cpu, &sd, cd, 1);
                CHECK_MSG(sc[bi] == sd, "batched_sumsq n=%lld matrix %d: cpu %.9g, its dot %.9g", (long long)n, bi,
                          sc[bi], sd);
                CHECK_MSG(fabs((double)sc[bi] - sg[bi]) <= 1e-6 * fabs((double)sc[bi]),
                          "batched_sumsq n=%lld matrix %d: cpu %.9g cuda %.9g", (long long)n, bi, sc[bi], sg[bi]);
            }
            ob_dev_free(&cpu, c);
            ob_dev_free(&gpu, g);
            ob_dev_free(&cpu, co);
            ob_dev_free(&gpu, go);
            ob_dev_free(&cpu, cd);
        }
        const double qs[] = {0.0, 0.37, 0.5, 0.9, 1.0};
        for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
            float *c = dev_put(&cpu, h, tot), *g = dev_put(&gpu, h, tot);
            float *cw = dev_put(&cpu, NULL, tot), *gw = dev_put(&gpu, NULL, tot);
            float *co = dev_put(&cpu, NULL, batch), *go = dev_put(&gpu, NULL, batch);
            float qc[3], qg[3];
            OK(cpu.ops->abs_quantile(&cpu, c, batch, n, stride, qs[qi], co, cw, &err));
            OK(gpu.ops->abs_quantile(&gpu, g, batch, n, stride, qs[qi], go, gw, &err));
            dev_get(&cpu, qc, co, batch);
            dev_get(&gpu, qg, go, batch);
            for (int bi = 0; bi < batch; bi++)
                CHECK_MSG(qc[bi] == qg[bi], "abs_quantile n=%lld q=%g matrix %d: cpu %.9g cuda %.9g", (long long)n,
                          qs[qi], bi, qc[bi], qg[bi]);
            /* clamp at the quantile (+ add) */
            OK(cpu.ops->clamp_abs(&cpu, c, batch, n, stride, co, 0.01f, &err));
            OK(gpu.ops->clamp_abs(&gpu, g, batch, n, stride, go, 0.01f, &err));
            dev_get(&cpu, a, c, tot);
            dev_get(&gpu, b, g, tot);
            CHECK_MSG(bitwise_equal(a, b, tot), "clamp_abs n=%lld q=%g differs", (long long)n, qs[qi]);
            ob_dev_free(&cpu, c);
            ob_dev_free(&gpu, g);
            ob_dev_free(&cpu, cw);
            ob_dev_free(&gpu, gw);
            ob_dev_free(&cpu, co);
            ob_dev_free(&gpu, go);
        }
        free(h);
        free(a);
        free(b);
    }
}

static void test_svd(void)
{
    if (!cpu.ops->svd_polar || !gpu.ops->svd_polar) return;
    const int shapes[][2] = {{5, 8}, {8, 5}, {6, 6}};
    for (int si = 0; si < 3; si++) {
        int r = shapes[si][0], c = shapes[si][1], k = r < c ? r : c;
        float h[64], sc[8], sg[8], qc[64], qg[64];
        randn(h, r * c, 700 + si, 1.0f);
        float *ca = dev_put(&cpu, h, r * c), *ga = dev_put(&gpu, h, r * c);
        float *cs = dev_put(&cpu, NULL, k), *gs = dev_put(&gpu, NULL, k);
        float *cq = dev_put(&cpu, NULL, r * c), *gq = dev_put(&gpu, NULL, r * c);
        OK(cpu.ops->svd_polar(&cpu, r, c, ca, cs, cq, &err));
        OK(gpu.ops->svd_polar(&gpu, r, c, ga, gs, gq, &err));
        dev_get(&cpu, sc, cs, k);
        dev_get(&gpu, sg, gs, k);
        dev_get(&cpu, qc, cq, r * c);
        dev_get(&gpu, qg, gq, r * c);
        double ds = max_rel(sc, sg, k, 1e-3), dq = 0;
        for (int i = 0; i < r * c; i++) {
            double di = fabs((double)qc[i] - qg[i]);
            if (!(di <= dq)) dq = isnan(di) ? INFINITY : di; /* fmax would drop a NaN */
        }
        CHECK_MSG(ds <= 1e-4, "svd_polar %dx%d: singular values max rel %g", r, c, ds);
        CHECK_MSG(dq <= 1e-4, "svd_polar %dx%d: polar factor max diff %g", r, c, dq);
        ob_dev_free(&cpu, ca);
        ob_dev_free(&gpu, ga);
        ob_dev_free(&cpu, cs);
        ob_dev_free(&gpu, gs);
        ob_dev_free(&cpu, cq);
        ob_dev_free(&gpu, gq);
    }
}

static void test_rosenbrock(void)
{
    const int64_t ns[] = {2, 10, 5003};
    for (size_t ni = 0; ni < 3; ni++) {
        int64_t n = ns[ni];
        float *h = malloc(n * sizeof *h), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        randn(h, n, 900 + ni, 1.5f);
        float *cx = dev_put(&cpu, h, n), *gx = dev_put(&gpu, h, n);
        float *cg = dev_put(&cpu, NULL, n), *gg = dev_put(&gpu, NULL, n);
        float *cl = dev_put(&cpu, NULL, 1), *gl = dev_put(&gpu, NULL, 1), lc, lg;
        OK(cpu.ops->rosenbrock(&cpu, cx, n, cl, cg, &err));
        OK(gpu.ops->rosenbrock(&gpu, gx, n, gl, gg, &err));
        dev_get(&cpu, a, cg, n);
        dev_get(&gpu, b, gg, n);
        dev_get(&cpu, &lc, cl, 1);
        dev_get(&gpu, &lg, gl, 1);
        double r = max_rel(a, b, n, 1e-6);
        CHECK_MSG(r <= 1e-6, "rosenbrock n=%lld gradient: max rel %g%s", (long long)n, r,
                  bitwise_equal(a, b, n) ? "" : " (not bitwise)");
        CHECK_MSG(fabs(lc - lg) <= 1e-6 * fabs(lc), "rosenbrock loss: cpu %.9g cuda %.9g", lc, lg);
        ob_dev_free(&cpu, cx);
        ob_dev_free(&gpu, gx);
        ob_dev_free(&cpu, cg);
        ob_dev_free(&gpu, gg);
        ob_dev_free(&cpu, cl);
        ob_dev_free(&gpu, gl);
        free(h);
        free(a);
        free(b);
    }
}

/* ---- neural-network layers --------------------------------------------------------------- */

/* A buffer on both devices with the same contents. */
typedef struct twin {
    float *c, *g;
    int64_t n;
} twin;

static twin tw_new(const float *h, int64_t n)
{
    twin t = {dev_put(&cpu, h, n), dev_put(&gpu, h, n), n};
    return t;
}

static twin tw_randn(int64_t n, uint64_t seed, float scale)
{
    float *h = malloc((size_t)n * sizeof *h);
    randn(h, n, seed, scale);
    twin t = tw_new(h, n);
    free(h);
    return t;
}

static void *dev_put_i32(ob_device *d, const int32_t *h, int64_t n)
{
    void *p = NULL;
    if (ob_dev_alloc(d, (size_t)n * sizeof(int32_t), &p, &err) != OB_OK ||
        d->ops->upload(d, p, h, (size_t)n * sizeof(int32_t), &err) != OB_OK) {
        fprintf(stderr, "int upload failed: %s\n", err.msg);
        exit(1);
    }
    return p;
}

/* Compare the two copies; tol 0 means bitwise. */
static void tw_check(const char *what, twin t, double tol, double floor_)
{
    float *a = malloc((size_t)t.n * sizeof *a), *b = malloc((size_t)t.n * sizeof *b);
    dev_get(&cpu, a, t.c, t.n);
    dev_get(&gpu, b, t.g, t.n);
    if (tol == 0)
        CHECK_MSG(bitwise_equal(a, b, t.n), "%s: not bitwise equal (max rel %g)", what, max_rel(a, b, t.n, 1e-30));
    else {
        double r = max_rel(a, b, t.n, floor_);
        CHECK_MSG(r <= tol, "%s: max rel diff %g > %g", what, r, tol);
        if (r <= tol && !bitwise_equal(a, b, t.n)) printf("  note: %s agrees within %.2g, not bitwise\n", what, r);
    }
    free(a);
    free(b);
}

static void tw_free(twin t)
{
    ob_dev_free(&cpu, t.c);
    ob_dev_free(&gpu, t.g);
}

#define BOTH(call_c, call_g)           \
    do {                               \
        OK(call_c);                    \
        OK(call_g);                    \
    } while (0)

static void test_nn_ops(void)
{
    const ob_backend_ops *C_ = cpu.ops, *G_ = gpu.ops;
    if (!C_->embedding_forward || !G_->embedding_forward) return;
    /* embedding: N = 40 positions of T = 8, C = 24, V = 50 (tokens repeat) */
    {
        int N = 40, T = 8, C = 24, V = 50;
        int32_t tok[40];
        for (int i = 0; i < N; i++) tok[i] = (int32_t)ob_rng_below(5, OB_STREAM_MISC, (uint64_t)i, i < 20 ? 6 : (uint32_t)V);
        void *tc = dev_put_i32(&cpu, tok, N), *tg = dev_put_i32(&gpu, tok, N);
        twin wte = tw_randn((int64_t)V * C, 1001, 1.0f), wpe = tw_randn((int64_t)T * C, 1002, 1.0f);
        twin out = tw_new(NULL, (int64_t)N * C), dout = tw_randn((int64_t)N * C, 1003, 1.0f);
        BOTH(C_->embedding_forward(&cpu, out.c, tc, wte.c, wpe.c, N, T, C, &err),
             G_->embedding_forward(&gpu, out.g, tg, wte.g, wpe.g, N, T, C, &err));
        tw_check("embedding_forward", out, 0, 0);
        BOTH(C_->embedding_forward(&cpu, out.c, tc, wte.c, NULL, N, T, C, &err),
             G_->embedding_forward(&gpu, out.g, tg, wte.g, NULL, N, T, C, &err));
        tw_check("embedding_forward (no positions)", out, 0, 0);
        BOTH(C_->embedding_backward(&cpu, wte.c, wpe.c, dout.c, tc, N, T, C, V, &err),
             G_->embedding_backward(&gpu, wte.g, wpe.g, dout.g, tg, N, T, C, V, &err));
        tw_check("embedding_backward dwte", wte, 0, 0);
        tw_check("embedding_backward dwpe", wpe, 0, 0);
        tw_free(wte);
        tw_free(wpe);
        tw_free(out);
        tw_free(dout);
        ob_dev_free(&cpu, tc);
        ob_dev_free(&gpu, tg);
    }
    /* LayerNorm, bias: N = 33 rows of C = 70 */
    {
        int N = 33, C = 70;
        twin x = tw_randn((int64_t)N * C, 1101, 2.0f), w = tw_randn(C, 1102, 1.0f), b = tw_randn(C, 1103, 1.0f);
        twin out = tw_new(NULL, (int64_t)N * C), mean = tw_new(NULL, N), rstd = tw_new(NULL, N);
        twin dout = tw_randn((int64_t)N * C, 1104, 1.0f), dinp = tw_randn((int64_t)N * C, 1105, 1.0f);
        twin dw = tw_randn(C, 1106, 1.0f), db = tw_randn(C, 1107, 1.0f);
        BOTH(C_->layernorm_forward(&cpu, out.c, mean.c, rstd.c, x.c, w.c, b.c, N, C, &err),
             G_->layernorm_forward(&gpu, out.g, mean.g, rstd.g, x.g, w.g, b.g, N, C, &err));
        tw_check("layernorm_forward out", out, 1e-5, 1.0);
        tw_check("layernorm_forward mean", mean, 1e-5, 1.0);
        tw_check("layernorm_forward rstd", rstd, 1e-5, 1.0);
        /* backward from the CPU's statistics, so only the op itself is compared */
        float *hm = malloc(N * sizeof *hm), *hr = malloc(N * sizeof *hr);
        dev_get(&cpu, hm, mean.c, N);
        dev_get(&cpu, hr, rstd.c, N);
        OK(G_->upload(&gpu, mean.g, hm, N * sizeof *hm, &err));
        OK(G_->upload(&gpu, rstd.g, hr, N * sizeof *hr, &err));
        free(hm);
        free(hr);
        BOTH(C_->layernorm_backward(&cpu, dinp.c, dw.c, db.c, dout.c, x.c, w.c, mean.c, rstd.c, N, C, &err),
             G_->layernorm_backward(&gpu, dinp.g, dw.g, db.g, dout.g, x.g, w.g, mean.g, rstd.g, N, C, &err));
        tw_check("layernorm_backward dinp", dinp, 1e-4, 1.0);
        tw_check("layernorm_backward dw (same chunks as the CPU)", dw, 0, 0);
        tw_check("layernorm_backward db (same chunks as the CPU)", db, 0, 0);
        BOTH(C_->bias_add(&cpu, out.c, b.c, N, C, &err), G_->bias_add(&gpu, out.g, b.g, N, C, &err));
        tw_check("bias_add", out, 1e-5, 1.0);
        BOTH(C_->bias_backward(&cpu, db.c, dout.c, N, C, &err), G_->bias_backward(&gpu, db.g, dout.g, N, C, &err));
        tw_check("bias_backward", db, 0, 0);
        twin big = tw_randn((int64_t)1000 * 3, 1108, 1.0f), bb = tw_randn(3, 1109, 1.0f);
        BOTH(C_->bias_backward(&cpu, bb.c, big.c, 1000, 3, &err), G_->bias_backward(&gpu, bb.g, big.g, 1000, 3, &err));
        tw_check("bias_backward (64 chunks)", bb, 0, 0);
        tw_free(big);
        tw_free(bb);
        /* GELU and ReLU, in place too */
        BOTH(C_->gelu_forward(&cpu, out.c, x.c, (int64_t)N * C, &err),
             G_->gelu_forward(&gpu, out.g, x.g, (int64_t)N * C, &err));
        tw_check("gelu_forward", out, 1e-5, 1.0);
        BOTH(C_->gelu_backward(&cpu, dout.c, x.c, dout.c, (int64_t)N * C, &err),
             G_->gelu_backward(&gpu, dout.g, x.g, dout.g, (int64_t)N * C, &err));
        tw_check("gelu_backward (in place)", dout, 1e-5, 1.0);
        {
            /* far from 0, where the exp's clamp meets inputs of 1e3 to 1e9: both x or 0 */
            const float hb[] = {12, -12, 1234.55f, -1555.3f, 5000, -5000, 1e4f, -1e4f, 3e5f, -3e5f, 1e9f, -3e9f};
            const int nb = (int)(sizeof hb / sizeof hb[0]);
            twin xb = tw_new(hb, nb), ob = tw_new(NULL, nb), gb = tw_new(NULL, nb);
            BOTH(C_->gelu_forward(&cpu, ob.c, xb.c, nb, &err), G_->gelu_forward(&gpu, ob.g, xb.g, nb, &err));
            tw_check("gelu_forward (|x| from 12 to 3e9)", ob, 1e-6, 1.0);
            BOTH(C_->gelu_backward(&cpu, gb.c, xb.c, ob.c, nb, &err), G_->gelu_backward(&gpu, gb.g, xb.g, ob.g, nb, &err));
            tw_check("gelu_backward (|x| from 12 to 3e9)", gb, 1e-6, 1.0);
            tw_free(xb);
            tw_free(ob);
            tw_free(gb);
        }
        if (C_->relu_forward && G_->relu_forward) {
            BOTH(C_->relu_forward(&cpu, out.c, x.c, (int64_t)N * C, &err),
                 G_->relu_forward(&gpu, out.g, x.g, (int64_t)N * C, &err));
            tw_check("relu_forward", out, 0, 0);
            BOTH(C_->relu_backward(&cpu, dinp.c, out.c, dout.c, (int64_t)N * C, &err),
                 G_->relu_backward(&gpu, dinp.g, out.g, dout.g, (int64_t)N * C, &err));
            tw_check("relu_backward (of the gelu_backward results)", dinp, 1e-5, 1.0);
        }
        tw_free(x);
        tw_free(w);
        tw_free(b);
        tw_free(out);
        tw_free(mean);
        tw_free(rstd);
        tw_free(dout);
        tw_free(dinp);
        tw_free(dw);
        tw_free(db);
    }
    /* heads, softmax */
    {
        int B = 2, T = 5, nsec = 3, NH = 4, HS = 8;
        int64_t n = (int64_t)B * T * nsec * NH * HS;
        twin src = tw_randn(n, 1201, 1.0f), dst = tw_new(NULL, n), back = tw_new(NULL, n);
        BOTH(C_->heads_split(&cpu, dst.c, src.c, B, T, nsec, NH, HS, &err),
             G_->heads_split(&gpu, dst.g, src.g, B, T, nsec, NH, HS, &err));
        tw_check("heads_split", dst, 0, 0);
        BOTH(C_->heads_merge(&cpu, back.c, dst.c, B, T, nsec, NH, HS, &err),
             G_->heads_merge(&gpu, back.g, dst.g, B, T, nsec, NH, HS, &err));
        tw_check("heads_merge", back, 0, 0);
        tw_free(src);
        tw_free(dst);
        tw_free(back);
        int R = 50, L = 37;
        twin x = tw_randn((int64_t)R * L, 1202, 3.0f), dy = tw_randn((int64_t)R * L, 1203, 1.0f);
        BOTH(C_->softmax_forward(&cpu, x.c, R, L, &err), G_->softmax_forward(&gpu, x.g, R, L, &err));
        tw_check("softmax_forward", x, 1e-5, 1e-3);
        BOTH(C_->softmax_backward(&cpu, dy.c, dy.c, x.c, R, L, &err),
             G_->softmax_backward(&gpu, dy.g, dy.g, x.g, R, L, &err));
        tw_check("softmax_backward (in place)", dy, 1e-4, 1e-2);
        tw_free(x);
        tw_free(dy);
    }
    /* rows, cross-entropy */
    {
        int Nr = 20, M = 7, C = 33;
        int32_t idx[7] = {3, 19, 0, 7, 8, 12, 5};
        void *ic = dev_put_i32(&cpu, idx, M), *ig = dev_put_i32(&gpu, idx, M);
        twin inp = tw_randn((int64_t)Nr * C, 1301, 1.0f), out = tw_new(NULL, (int64_t)M * C);
        BOTH(C_->rows_gather(&cpu, out.c, inp.c, ic, M, C, &err), G_->rows_gather(&gpu, out.g, inp.g, ig, M, C, &err));
        tw_check("rows_gather", out, 0, 0);
        BOTH(C_->rows_scatter_add(&cpu, inp.c, out.c, ic, M, C, &err),
             G_->rows_scatter_add(&gpu, inp.g, out.g, ig, M, C, &err));
        tw_check("rows_scatter_add", inp, 0, 0);
        tw_free(inp);
        tw_free(out);
        ob_dev_free(&cpu, ic);
        ob_dev_free(&gpu, ig);

        int V = 1000;
        M = 9;
        int32_t tg[9];
        for (int i = 0; i < M; i++) tg[i] = (int32_t)ob_rng_below(6, OB_STREAM_MISC, (uint64_t)i, (uint32_t)V);
        float *hl = malloc((size_t)M * V * sizeof *hl);
        randn(hl, (int64_t)M * V, 1302, 2.0f);
        hl[3 * V + tg[3]] = 50.0f;                         /* a correct argmax */
        hl[4 * V + 10] = hl[4 * V + 20] = 60.0f;           /* a tie: the first wins */
        for (int v = 0; v < V; v++) hl[5 * V + v] = 1.0f; /* all equal: argmax 0 */
        void *tcx = dev_put_i32(&cpu, tg, M), *tgx = dev_put_i32(&gpu, tg, M);
        twin logits = tw_new(hl, (int64_t)M * V), probs = tw_new(NULL, (int64_t)M * V), losses = tw_new(NULL, M);
        twin loss = tw_new(NULL, 1), correct = tw_new(NULL, 1);
        BOTH(C_->xent_forward(&cpu, probs.c, losses.c, logits.c, tcx, M, V, loss.c, correct.c, &err),
             G_->xent_forward(&gpu, probs.g, losses.g, logits.g, tgx, M, V, loss.g, correct.g, &err));
        tw_check("xent_forward probs", probs, 1e-5, 1e-7);
        tw_check("xent_forward losses", losses, 1e-5, 1e-3);
        tw_check("xent_forward loss", loss, 1e-5, 1e-3);
        tw_check("xent_forward correct", correct, 0, 0);
        /* in place: probs over the logits, and no correct count */
        BOTH(C_->xent_forward(&cpu, logits.c, losses.c, logits.c, tcx, M, V, loss.c, NULL, &err),
             G_->xent_forward(&gpu, logits.g, losses.g, logits.g, tgx, M, V, loss.g, NULL, &err));
        tw_check("xent_forward in place", logits, 1e-5, 1e-7);
        BOTH(C_->xent_backward(&cpu, probs.c, probs.c, tcx, M, V, 1.0f / M, &err),
             G_->xent_backward(&gpu, probs.g, probs.g, tgx, M, V, 1.0f / M, &err));
        tw_check("xent_backward", probs, 1e-5, 1e-4);
        free(hl);
        tw_free(logits);
        tw_free(probs);
        tw_free(losses);
        tw_free(loss);
        tw_free(correct);
        ob_dev_free(&cpu, tcx);
        ob_dev_free(&gpu, tgx);
    }
    if (!C_->im2col || !G_->im2col) return;
    /* convolution pieces */
    {
        int B = 2, H = 7, W = 6, Cin = 3, K = 3;
        for (int stride = 1; stride <= 2; stride++)
            for (int pad = 0; pad <= 1; pad++) {
                int Ho = (H + 2 * pad - K) / stride + 1, Wo = (W + 2 * pad - K) / stride + 1;
                int64_t ncol = (int64_t)B * Ho * Wo * Cin * K * K, ninp = (int64_t)B * H * W * Cin;
                twin inp = tw_randn(ninp, 1401, 1.0f), col = tw_new(NULL, ncol), dcol = tw_randn(ncol, 1402, 1.0f);
                BOTH(C_->im2col(&cpu, col.c, inp.c, B, H, W, Cin, K, stride, pad, &err),
                     G_->im2col(&gpu, col.g, inp.g, B, H, W, Cin, K, stride, pad, &err));
                tw_check("im2col", col, 0, 0);
                BOTH(C_->col2im(&cpu, inp.c, dcol.c, B, H, W, Cin, K, stride, pad, &err),
                     G_->col2im(&gpu, inp.g, dcol.g, B, H, W, Cin, K, stride, pad, &err));
                tw_check("col2im", inp, 0, 0);
                tw_free(inp);
                tw_free(col);
                tw_free(dcol);
            }
        int HW = 12, Cc = 8, G = 4;
        int64_t n = (int64_t)B * HW * Cc;
        twin x = tw_randn(n, 1403, 2.0f), w = tw_randn(Cc, 1404, 1.0f), b = tw_randn(Cc, 1405, 1.0f);
        twin out = tw_new(NULL, n), mean = tw_new(NULL, B * G), rstd = tw_new(NULL, B * G);
        twin dout = tw_randn(n, 1406, 1.0f), dinp = tw_new(NULL, n), dw = tw_randn(Cc, 1407, 1.0f),
             db = tw_randn(Cc, 1408, 1.0f);
        BOTH(C_->groupnorm_forward(&cpu, out.c, mean.c, rstd.c, x.c, w.c, b.c, B, HW, Cc, G, &err),
             G_->groupnorm_forward(&gpu, out.g, mean.g, rstd.g, x.g, w.g, b.g, B, HW, Cc, G, &err));
        tw_check("groupnorm_forward out", out, 1e-5, 1.0);
        tw_check("groupnorm_forward mean", mean, 1e-5, 1.0);
        tw_check("groupnorm_forward rstd", rstd, 1e-5, 1.0);
        float hm[8], hr[8];
        dev_get(&cpu, hm, mean.c, B * G);
        dev_get(&cpu, hr, rstd.c, B * G);
        OK(G_->upload(&gpu, mean.g, hm, sizeof(float) * B * G, &err));
        OK(G_->upload(&gpu, rstd.g, hr, sizeof(float) * B * G, &err));
        BOTH(C_->groupnorm_backward(&cpu, dinp.c, dw.c, db.c, dout.c, x.c, w.c, mean.c, rstd.c, B, HW, Cc, G, &err),
             G_->groupnorm_backward(&gpu, dinp.g, dw.g, db.g, dout.g, x.g, w.g, mean.g, rstd.g, B, HW, Cc, G, &err));
        tw_check("groupnorm_backward dinp", dinp, 1e-4, 1.0);
        tw_check("groupnorm_backward dw (same chunks as the CPU)", dw, 0, 0);
        tw_check("groupnorm_backward db (same chunks as the CPU)", db, 0, 0);
        tw_free(x);
        tw_free(w);
        tw_free(b);
        tw_free(out);
        tw_free(mean);
        tw_free(rstd);
        tw_free(dout);
        tw_free(dinp);
        tw_free(dw);
        tw_free(db);
        /* pooling */
        int Hp = 6, Wp = 4, Cp = 5;
        int64_t np = (int64_t)B * Hp * Wp * Cp, no = np / 4;
        float *hp = malloc(np * sizeof *hp);
        randn(hp, np, 1409, 1.0f);
        hp[0] = hp[Cp] = 3.0f; /* a tie inside one window: the first wins */
        twin pin = tw_new(hp, np), pout = tw_new(NULL, no), pd = tw_randn(no, 1410, 1.0f), pdin = tw_new(NULL, np);
        BOTH(C_->maxpool2_forward(&cpu, pout.c, pin.c, B, Hp, Wp, Cp, &err),
             G_->maxpool2_forward(&gpu, pout.g, pin.g, B, Hp, Wp, Cp, &err));
        tw_check("maxpool2_forward", pout, 0, 0);
        BOTH(C_->maxpool2_backward(&cpu, pdin.c, pd.c, pin.c, B, Hp, Wp, Cp, &err),
             G_->maxpool2_backward(&gpu, pdin.g, pd.g, pin.g, B, Hp, Wp, Cp, &err));
        tw_check("maxpool2_backward", pdin, 0, 0);
        twin avg = tw_new(NULL, (int64_t)B * Cp), davg = tw_randn((int64_t)B * Cp, 1411, 1.0f);
        BOTH(C_->avgpool_forward(&cpu, avg.c, pin.c, B, Hp * Wp, Cp, &err),
             G_->avgpool_forward(&gpu, avg.g, pin.g, B, Hp * Wp, Cp, &err));
        tw_check("avgpool_forward", avg, 0, 0);
        BOTH(C_->avgpool_backward(&cpu, pin.c, davg.c, B, Hp * Wp, Cp, &err),
             G_->avgpool_backward(&gpu, pin.g, davg.g, B, Hp * Wp, Cp, &err));
        tw_check("avgpool_backward", pin, 0, 0);
        free(hp);
        tw_free(pin);
        tw_free(pout);
        tw_free(pd);
        tw_free(pdin);
        tw_free(avg);
        tw_free(davg);
    }
    if (C_->synth_images && G_->synth_images) {
        ob_image_synth a;
        memset(&a, 0, sizeof a);
        a.B = 3;
        a.H = 8;
        a.W = 8;
        a.C = 3;
        a.K = 5;
        a.max_shift = 2;
        a.noise = 0.1f;
        a.contrast_lo = 0.5f;
        a.contrast_hi = 1.5f;
        a.seed = 9;
        a.stream = OB_STREAM_DATA + 4;
        a.index0 = 77;
        int64_t img = (int64_t)a.B * a.H * a.W * a.C;
        twin tmpl = tw_randn((int64_t)a.K * a.H * a.W * a.C, 1501, 1.0f), out = tw_new(NULL, img);
        int32_t lc[3] = {-1, -1, -1}, lg[3] = {-2, -2, -2};
        void *lbc = dev_put_i32(&cpu, lc, 3), *lbg = dev_put_i32(&gpu, lg, 3);
        BOTH(C_->synth_images(&cpu, &a, out.c, lbc, tmpl.c, &err), G_->synth_images(&gpu, &a, out.g, lbg, tmpl.g, &err));
        tw_check("synth_images", out, 1e-5, 1.0);
        OK(C_->download(&cpu, lc, lbc, sizeof lc, &err));
        OK(G_->download(&gpu, lg, lbg, sizeof lg, &err));
        CHECK_MSG(!memcmp(lc, lg, sizeof lc), "synth_images labels: cpu %d %d %d cuda %d %d %d", lc[0], lc[1], lc[2],
                  lg[0], lg[1], lg[2]);
        tw_free(tmpl);
        tw_free(out);
        ob_dev_free(&cpu, lbc);
        ob_dev_free(&gpu, lbg);
    }
}

/* ---- trajectories ------------------------------------------------------------------------ */

#define TRAJ_STEPS 20
#define TRAJ_MAX_PARAMS 150000

typedef struct traj {
    float loss[TRAJ_STEPS];
    float *params; /* host copy of the final parameters (malloc) */
    int64_t total;
    int too_big;
} traj;

static ob_status traj_run(ob_device *dev, const ob_workload_def *wd, const ob_optimizer_def *od, const char *sets,
                          traj *out, ob_err *e)
{
    ob_hp_values whp, ohp, thp;
    ob_hp_defaults(&whp, wd->hp, wd->n_hp);
    ob_hp_defaults(&ohp, od->hp, od->n_hp);
    ob_hp_defaults(&thp, ob_train_hp_defs, ob_train_hp_count);
    memset(out, 0, sizeof *out);
    if (sets) OB_TRY(ob_hp_set_list(&ohp, od->name, sets, e)); /* the optimizer's settings "k=v,..." */
    ob_workload *w = NULL;
    ob_optim *o = NULL;
    ob_layout l;
    ob_layout_init(&l);
    float *params = NULL, *grads = NULL, *loss = NULL;
    ob_step_record *rec = NULL;
    ob_status st = OB_OK;
#define T(call)                               \
    do {                                      \
        if ((st = (call)) != OB_OK) goto out; \
    } while (0)
    T(wd->create(wd, &whp, dev, 1, &w, e));
    T(w->vt->describe(w, &l, e));
    if (ob_layout_numel(&l) > TRAJ_MAX_PARAMS) {
        out->too_big = 1;
        goto out;
    }
    T(ob_optim_create(od, &ohp, &thp, &o, e));
    T(ob_optim_route(o, &l, e));
    T(ob_layout_finalize(&l, e));
    T(ob_dev_alloc(dev, (size_t)l.total * sizeof(float), (void **)&params, e));
    T(ob_dev_alloc(dev, (size_t)l.total * sizeof(float), (void **)&grads, e));
    T(ob_dev_alloc(dev, TRAJ_STEPS * sizeof(float), (void **)&loss, e));
    T(ob_dev_alloc(dev, TRAJ_STEPS * sizeof(ob_step_record), (void **)&rec, e));
    T(w->vt->setup(w, &l, e));
    T(ob_optim_setup(o, dev, &l, e));
    ob_optim_set_total_steps(o, TRAJ_STEPS);
    T(w->vt->init_params(w, params, e));
    for (int t = 1; t <= TRAJ_STEPS; t++) {
        T(w->vt->train_step(w, params, grads, t - 1, &loss[t - 1], e));
        T(ob_optim_step(o, params, grads, &loss[t - 1], t, &rec[t - 1], e));
    }
    T(dev->ops->download(dev, out->loss, loss, sizeof out->loss, e));
    out->total = l.total;
    out->params = malloc((size_t)l.total * sizeof(float));
    if (!out->params) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        goto out;
    }
    T(dev->ops->download(dev, out->params, params, (size_t)l.total * sizeof(float), e));
#undef T
out:
    ob_optim_destroy(o);
    if (w) w->vt->destroy(w);
    ob_layout_free(&l);
    ob_dev_free(dev, params);
    ob_dev_free(dev, grads);
    ob_dev_free(dev, loss);
    ob_dev_free(dev, rec);
    return st;
}

/* The optimizers test_trajectories runs on the networks: one of each kind of
 * step (test_traj_names checks that each is in the registry, so a renamed
 * one is not silently left out). */
static const char *const traj_network_optimizers[] = {"sgd",  "adamw", "lion",      "muon", "root",
                                                       "soap", "adafactor", "lamb", "lars"};

/* Trajectories on bert-tiny with filter_bias_and_bn: an elementwise group's
 * spans of decayed and undecayed tensors (adamw, lion), a hybrid's AdamW
 * group (muon's; root's, the authors' with eps before the bias correction),
 * and the kinds kept in runs of their own (adafactor, lamb) and SOAP's
 * update without decay; and muon's Newton-Schulz in bf16 (gemm_sb_bf16 on
 * tensor cores and oneDNN or OpenBLAS on the CPU, each its own order of
 * sums, then round_bf16). */
static const struct {
    const char *opt, *sets;
} traj_filtered[] = {
    {"adamw", "weight_decay=0.1,filter_bias_and_bn=true"},     {"lion", "weight_decay=0.1,filter_bias_and_bn=true"},
    {"muon", "adamw_wd=0.1,filter_bias_and_bn=true"},          {"adafactor", "weight_decay=0.1,filter_bias_and_bn=true"},
    {"lamb", "filter_bias_and_bn=true"},                       {"soap", "filter_bias_and_bn=true"},
    {"root", "filter_bias_and_bn=true"},                       {"muon", "ns_dtype=bf16"},
};

static int traj_network_optimizer(const char *name)
{
    for (size_t i = 0; i < sizeof traj_network_optimizers / sizeof traj_network_optimizers[0]; i++)
        if (!strcmp(traj_network_optimizers[i], name)) return 1;
    return 0;
}

/* Runs without a device: the names above are registered optimizers, and
 * quadratic and rosenbrock (every optimizer) are not taken for networks. */
static void test_traj_names(void)
{
    for (size_t i = 0; i < sizeof traj_network_optimizers / sizeof traj_network_optimizers[0]; i++)
        CHECK_MSG(ob_optimizer_find(traj_network_optimizers[i]) != NULL,
                  "test_trajectories names '%s', which is not a registered optimizer", traj_network_optimizers[i]);
    CHECK(ob_wl_quadratic.items_name == NULL && ob_wl_rosenbrock.items_name == NULL);
    CHECK(ob_wl_bert_tiny.items_name != NULL && ob_wl_cnn_tiny.items_name != NULL);
    for (size_t i = 0; i < sizeof traj_filtered / sizeof traj_filtered[0]; i++) {
        const ob_optimizer_def *od = ob_optimizer_find(traj_filtered[i].opt);
        CHECK_MSG(od != NULL, "traj_filtered names '%s', which is not a registered optimizer", traj_filtered[i].opt);
        if (!od) continue;
        ob_hp_values hv;
        ob_err e;
        ob_hp_defaults(&hv, od->hp, od->n_hp);
        CHECK_MSG(ob_hp_set_list(&hv, od->name, traj_filtered[i].sets, &e) == OB_OK, "traj_filtered: %s", e.msg);
    }
}

/* One trajectory of workload wd x optimizer od (with the optimizer's
 * settings sets, "k=v,...", or NULL) on the CPU and on CUDA, compared (see
 * test_trajectories); 1 when it is too large to run on the CPU here. */
static int traj_check(const ob_workload_def *wd, const ob_optimizer_def *od, const char *sets, int network)
{
    char name[160];
    snprintf(name, sizeof name, "%s%s%s", od->name, sets ? " " : "", sets ? sets : "");
    traj tc, tg;
    ob_err ec, eg;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ob_err_clear(&ec);
    ob_err_clear(&eg);
    ob_status sc = traj_run(&cpu, wd, od, sets, &tc, &ec);
    if (sc == OB_OK && tc.too_big) {
        printf("  trajectory %s x %s: skipped (more than %d parameters)\n", wd->name, od->name, TRAJ_MAX_PARAMS);
        return 1;
    }
    ob_status sg = traj_run(&gpu, wd, od, sets, &tg, &eg);
    if (sc != OB_OK) {
        /* a combination the CPU refuses (e.g. a matrix optimizer on a vector
         * workload) must be refused the same way on CUDA */
        CHECK_MSG(sg == sc, "%s x %s: cpu failed (%s) but cuda gave %d (%s)", wd->name, name, ec.msg, (int)sg,
                  eg.msg);
        free(tg.params);
        return 0;
    }
    CHECK_MSG(sg == OB_OK, "%s x %s on cuda: %s", wd->name, name, eg.msg);
    if (sg != OB_OK) {
        free(tc.params);
        return 0;
    }
    /* SOAP on the networks: its first eigenbases come from one
     * gradient's Gram matrices, rank-deficient along the longer side
     * of every non-square matrix (bert-tiny's 64x256 mlp.proj.w: a
     * 256x256 Gram of rank <= 64), so the basis of their null space
     * is whatever the solver's rounding makes it, and Adam's
     * per-coordinate step in that basis differs by O(1) there. Measured
     * with the CPU backend against itself with its GEMM outputs moved
     * by one ulp in a third of the entries (what cuBLAS's summation
     * order does), or its eigenvectors computed in double: the final
     * parameters 5.2-5.5% apart (relative L2) on bert-tiny, 1.4-1.9% on
     * cnn-tiny, the losses up to 3.4e-3, whatever the perturbation;
     * the other optimizers run on the networks here stayed within 5e-4
     * (parameters) and 2e-7 (losses). The SOAP ops themselves are
     * compared tightly in test_soap_ops. */
    const int soap_net = network && !strcmp(od->name, "soap");
    const double ltol = soap_net ? 1e-2 : 2e-3;
    double worst = 0;
    int bad_step = -1;
    for (int t = 0; t < TRAJ_STEPS; t++) {
        double a = tc.loss[t], b = tg.loss[t];
        if ((isnan(a) && isnan(b)) || a == b) continue; /* also the same infinity: diverged on both */
        double d = fabs(a - b) / (fmax(fabs(a), fabs(b)) + 1e-6 * fabs(tc.loss[0]) + 1e-30);
        if (!(d <= worst)) {
            worst = isnan(d) ? INFINITY : d;
            if (!(d <= ltol) && bad_step < 0) bad_step = t;
        }
    }
    CHECK_MSG(worst <= ltol,
              "%s x %s: losses differ from step %d (cpu %.7g, cuda %.7g), worst rel %g (tolerance %g)",
              wd->name, name, bad_step + 1, bad_step >= 0 ? tc.loss[bad_step] : 0.0,
              bad_step >= 0 ? tg.loss[bad_step] : 0.0, worst, ltol);
    double num = 0, den = 0;
    for (int64_t i = 0; i < tc.total; i++) {
        double d = (double)tc.params[i] - tg.params[i];
        num += d * d;
        den += (double)tc.params[i] * tc.params[i];
    }
    double rel = sqrt(num / (den > 0 ? den : 1));
    double ptol = soap_net ? 0.15 : network ? 1e-2 : 2e-3;
    CHECK_MSG(rel <= ptol, "%s x %s: final parameters differ, relative L2 %g (tolerance %g)", wd->name,
              name, rel, ptol);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("  trajectory %-12s x %-10s %8lld params, loss %.6g -> %.6g, worst step rel %.2g, params rel "
           "%.2g (%.1f s)\n",
           wd->name, name, (long long)tc.total, tc.loss[0], tc.loss[TRAJ_STEPS - 1], worst, rel,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    fflush(stdout);
    free(tc.params);
    free(tg.params);
    return 0;
}

static void test_trajectories(void)
{
    int nw, no;
    const ob_workload_def *const *wds = ob_workloads(&nw);
    const ob_optimizer_def *const *ods = ob_optimizers(&no);
    const char *only = getenv("OB_TEST_WORKLOADS"); /* comma list, to narrow a run by hand */
    for (int wi = 0; wi < nw; wi++) {
        if (only && !strstr(only, wds[wi]->name)) continue;
        /* Network workloads (those that train on batches of items) cost
         * seconds per trajectory on the CPU: a spread of optimizers
         * (elementwise, sign, matrix, custom groups) rather than all of them. */
        int network = wds[wi]->items_name != NULL;
        for (int oi = 0; oi < no; oi++) {
            const char *on = ods[oi]->name;
            if (network && !traj_network_optimizer(on)) continue;
            if (traj_check(wds[wi], ods[oi], NULL, network)) break; /* too large for the CPU */
        }
    }
    if (!only || strstr(only, ob_wl_bert_tiny.name))
        for (size_t i = 0; i < sizeof traj_filtered / sizeof traj_filtered[0]; i++)
            traj_check(&ob_wl_bert_tiny, ob_optimizer_find(traj_filtered[i].opt), traj_filtered[i].sets, 1);
}

/* ---- SOAP's eigenbasis ops ------------------------------------------------------------- */

/* Rows of a (n,n) and b agree up to sign: max over j of |1 - |a_j . b_j||
 * (rows unit). A NaN dot counts as infinitely far (a NaN row must fail, not
 * be skipped), and so does a row longer than 1 (|dot| > 1 + tol). */
static double rows_max_dev(const float *a, const float *b, int n)
{
    double m = 0;
    for (int j = 0; j < n; j++) {
        double d = 0;
        for (int i = 0; i < n; i++) d += (double)a[(size_t)j * n + i] * b[(size_t)j * n + i];
        double dev = fabs(1.0 - fabs(d));
        if (!(dev <= m)) m = isnan(dev) ? INFINITY : dev;
    }
    return m;
}

static void test_soap_ops(void)
{
    if (!cpu.ops->swap01 || !gpu.ops->swap01) return;
    /* swap01: both kernels (B <= 8 tiled, larger B by rows), the copy (A or n = 1), ragged
     * tiles; {1100, 1100, 1} has more tiles (1225) and {300, 100, 12} more elements than
     * one grid (8 blocks per SM), so both grid-stride loops run more than once */
    const int64_t shapes[][3] = {{1, 5, 3},  {4, 1, 2},  {37, 45, 1}, {33, 70, 3},     {5, 9, 8},
                                 {3, 40, 9}, {2, 3, 64}, {64, 64, 1}, {1100, 1100, 1}, {300, 100, 12},
                                 {1, 1, 1}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int64_t A = shapes[k][0], n = shapes[k][1], B = shapes[k][2], tot = A * n * B;
        float *h = malloc(tot * sizeof *h), *a = malloc(tot * sizeof *a), *b = malloc(tot * sizeof *b);
        randn(h, tot, 900 + k, 1.0f);
        float *cs = dev_put(&cpu, h, tot), *gs = dev_put(&gpu, h, tot);
        float *cd = dev_put(&cpu, NULL, tot), *gd = dev_put(&gpu, NULL, tot);
        OK(cpu.ops->swap01(&cpu, cd, cs, A, n, B, &err));
        OK(gpu.ops->swap01(&gpu, gd, gs, A, n, B, &err));
        dev_get(&cpu, a, cd, tot);
        dev_get(&gpu, b, gd, tot);
        CHECK_MSG(bitwise_equal(a, b, tot), "swap01 (%lld, %lld, %lld) differs", (long long)A, (long long)n,
                  (long long)B);
        ob_dev_free(&cpu, cs);
        ob_dev_free(&gpu, gs);
        ob_dev_free(&cpu, cd);
        ob_dev_free(&gpu, gd);
        free(h);
        free(a);
        free(b);
    }
    const int ns[] = {3, 64, 300};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        int n = ns[ni], m = 2 * n + 3;
        int64_t nn = (int64_t)n * n;
        float *G = malloc((size_t)n * m * sizeof *G), *h = malloc(nn * sizeof *h), *h2 = malloc(nn * sizeof *h2);
        float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
        /* sym_eigvecs: A = G G^T / m, exactly symmetric, well separated eigenvalues */
        randn(G, (int64_t)n * m, 910 + ni, 1.0f);
        for (int r = 0; r < n; r++)
            for (int c = r; c < n; c++) {
                double d = 0;
                for (int i = 0; i < m; i++) d += (double)G[(size_t)r * m + i] * G[(size_t)c * m + i];
                h[(size_t)r * n + c] = h[(size_t)c * n + r] = (float)(d / m);
            }
        float *ca = dev_put(&cpu, h, nn), *ga = dev_put(&gpu, h, nn);
        float *cs = dev_put(&cpu, NULL, nn), *gs = dev_put(&gpu, NULL, nn);
        OK(cpu.ops->sym_eigvecs(&cpu, n, ca, cs, &err));
        OK(gpu.ops->sym_eigvecs(&gpu, n, ga, gs, &err));
        dev_get(&cpu, a, cs, nn);
        dev_get(&gpu, b, gs, nn);
        double md = rows_max_dev(a, b, n);
        CHECK_MSG(md < 1e-4, "sym_eigvecs n=%d: max |1 - |row_cpu . row_cuda|| = %.9g", n, md);
        dev_get(&gpu, b, ga, nn);
        CHECK_MSG(bitwise_equal(b, h, nn), "sym_eigvecs n=%d: the CUDA op changed A", n);
        /* a NaN entry: all NaN, the CPU's bit for bit, and no error */
        h2[0] = NAN;
        for (int64_t i = 1; i < nn; i++) h2[i] = h[i];
        OK(gpu.ops->upload(&gpu, ga, h2, (size_t)nn * sizeof(float), &err));
        OK(gpu.ops->sym_eigvecs(&gpu, n, ga, gs, &err));
        OK(cpu.ops->upload(&cpu, ca, h2, (size_t)nn * sizeof(float), &err));
        OK(cpu.ops->sym_eigvecs(&cpu, n, ca, cs, &err));
        dev_get(&gpu, b, gs, nn);
        dev_get(&cpu, a, cs, nn);
        int64_t n_nan = 0;
        for (int64_t i = 0; i < nn; i++) n_nan += isnan(b[i]) != 0;
        CHECK_MSG(n_nan == nn, "sym_eigvecs n=%d with a NaN: %lld of %lld values NaN", n, (long long)n_nan,
                  (long long)nn);
        CHECK_MSG(bitwise_equal(a, b, nn), "sym_eigvecs n=%d with a NaN: not the CPU's NaN bits", n);
        OK(cpu.ops->upload(&cpu, ca, h, (size_t)nn * sizeof(float), &err));
        OK(gpu.ops->upload(&gpu, ga, h, (size_t)nn * sizeof(float), &err));
        /* qr_orth on a random W */
        randn(h, nn, 920 + ni, 1.0f);
        OK(gpu.ops->upload(&gpu, ga, h, (size_t)nn * sizeof(float), &err));
        OK(cpu.ops->upload(&cpu, ca, h, (size_t)nn * sizeof(float), &err));
        OK(cpu.ops->qr_orth(&cpu, n, ca, cs, &err));
        OK(gpu.ops->qr_orth(&gpu, n, ga, gs, &err));
        dev_get(&cpu, a, cs, nn);
        dev_get(&gpu, b, gs, nn);
        md = rows_max_dev(a, b, n);
        CHECK_MSG(md < 1e-4, "qr_orth n=%d: max |1 - |row_cpu . row_cuda|| = %.9g", n, md);
        dev_get(&gpu, b, ga, nn);
        CHECK_MSG(bitwise_equal(b, h, nn), "qr_orth n=%d: the CUDA op changed W", n);
        /* eig_order: random rows, then ties (repeated rows), zero rows, NaN and infinities */
        randn(h2, nn, 930 + ni, 1.0f);
        int32_t *pc = calloc((size_t)n, sizeof *pc), *pg = calloc((size_t)n, sizeof *pg);
        for (int round = 0; round < 2; round++) {
            if (round == 1)
                for (int j = 0; j < n; j++) {
                    float *sj = h + (size_t)j * n, *tj = h2 + (size_t)j * n;
                    if (j % 5 == 1) {
                        memcpy(sj, sj - n, (size_t)n * sizeof *sj);
                        memcpy(tj, tj - n, (size_t)n * sizeof *tj);
                    } else if (j % 7 == 2) {
                        tj[j % n] = NAN;
                    } else if (j % 11 == 3) {
                        memset(sj, 0, (size_t)n * sizeof *sj);
                    } else if (j % 13 == 4) {
                        sj[0] = 1.0f;
                        tj[0] = j % 2 ? INFINITY : -INFINITY;
                    }
                }
            /* -1 in every slot the GPU should write: an unwritten one cannot keep a right value */
            memset(pg, 0xff, (size_t)n * sizeof *pg);
            int32_t *cp = dev_put_i32(&cpu, pc, n), *gp = dev_put_i32(&gpu, pg, n);
            float *ct = dev_put(&cpu, h2, nn), *gt = dev_put(&gpu, h2, nn);
            OK(cpu.ops->upload(&cpu, ca, h, (size_t)nn * sizeof(float), &err));
            OK(gpu.ops->upload(&gpu, ga, h, (size_t)nn * sizeof(float), &err));
            OK(cpu.ops->eig_order(&cpu, n, ca, ct, cp, &err));
            OK(gpu.ops->eig_order(&gpu, n, ga, gt, gp, &err));
            OK(cpu.ops->download(&cpu, pc, cp, (size_t)n * sizeof *pc, &err));
            OK(gpu.ops->download(&gpu, pg, gp, (size_t)n * sizeof *pg, &err));
            CHECK_MSG(memcmp(pc, pg, (size_t)n * sizeof *pc) == 0, "eig_order n=%d (%s) differs", n,
                      round ? "ties, NaN, inf" : "random");
            ob_dev_free(&cpu, cp);
            ob_dev_free(&gpu, gp);
            ob_dev_free(&cpu, ct);
            ob_dev_free(&gpu, gt);
        }
        free(pc);
        free(pg);
        ob_dev_free(&cpu, ca);
        ob_dev_free(&gpu, ga);
        ob_dev_free(&cpu, cs);
        ob_dev_free(&gpu, gs);
        free(G);
        free(h);
        free(h2);
        free(a);
        free(b);
    }
}

/* ---- Adafactor's factored second moments ---------------------------------------------- */

static void test_adafactor_ops(void)
{
    if (!cpu.ops->rows_sumsq || !gpu.ops->rows_sumsq) return;
    /* ragged tiles of rows_sumsq (32 rows x 128 columns), rows = 1, cols = 1, batch 1 to 4;
     * 40000 rows: more row blocks (1250) than rows_sumsq's grid (8 per SM), so its
     * grid-stride loop runs more than once */
    const int64_t shapes[][3] = {{1, 1, 1},  {1, 70, 300}, {3, 33, 129},
                                 {2, 1, 500}, {1, 500, 1}, {4, 64, 64}, {1, 40000, 3}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int64_t B = shapes[k][0], R = shapes[k][1], C = shapes[k][2], tot = B * R * C;
        float *h = malloc(tot * sizeof *h), *a = malloc(tot * sizeof *a), *b = malloc(tot * sizeof *b);
        float *hr = malloc(B * R * sizeof *hr), *hc = malloc(B * C * sizeof *hc);
        randn(h, tot, 950 + k, 3.0f);
        float *cx = dev_put(&cpu, h, tot), *gx = dev_put(&gpu, h, tot);
        float *cr = dev_put(&cpu, NULL, B * R), *gr = dev_put(&gpu, NULL, B * R);
        float *cc = dev_put(&cpu, NULL, B * C), *gc = dev_put(&gpu, NULL, B * C);
        float *cu = dev_put(&cpu, NULL, tot), *gu = dev_put(&gpu, NULL, tot);
        OK(cpu.ops->rows_sumsq(&cpu, cx, B * R, C, 1.0f / (float)C, cr, &err));
        OK(gpu.ops->rows_sumsq(&gpu, gx, B * R, C, 1.0f / (float)C, gr, &err));
        dev_get(&cpu, a, cr, B * R);
        dev_get(&gpu, b, gr, B * R);
        CHECK_MSG(bitwise_equal(a, b, B * R), "rows_sumsq (%lld, %lld) differs: max rel %g", (long long)(B * R),
                  (long long)C, max_rel(a, b, B * R, 1e-30));
        OK(cpu.ops->cols_sumsq(&cpu, cx, B, R, C, 1.0f / (float)R, cc, &err));
        OK(gpu.ops->cols_sumsq(&gpu, gx, B, R, C, 1.0f / (float)R, gc, &err));
        dev_get(&cpu, a, cc, B * C);
        dev_get(&gpu, b, gc, B * C);
        CHECK_MSG(bitwise_equal(a, b, B * C), "cols_sumsq (%lld, %lld, %lld) differs: max rel %g", (long long)B,
                  (long long)R, (long long)C, max_rel(a, b, B * C, 1e-30));
        /* adafactor_precond: the factors as Adafactor has them (the sums above),
         * then a tiny row factor in the last matrix (its mean clamped at eps1,
         * values at eps1^2) and a tiny column in the first */
        for (int round = 0; round < 2; round++) {
            dev_get(&cpu, hr, cr, B * R);
            dev_get(&cpu, hc, cc, B * C);
            if (round == 1) {
                for (int64_t r = 0; r < R; r++) hr[(B - 1) * R + r] = 1e-10f * (float)(r + 1);
                hc[0] = 1e-12f;
            }
            float *crr = dev_put(&cpu, hr, B * R), *grr = dev_put(&gpu, hr, B * R);
            float *ccc = dev_put(&cpu, hc, B * C), *gcc = dev_put(&gpu, hc, B * C);
            OK(cpu.ops->adafactor_precond(&cpu, cx, crr, ccc, B, R, C, 1e-3f, cu, &err));
            OK(gpu.ops->adafactor_precond(&gpu, gx, grr, gcc, B, R, C, 1e-3f, gu, &err));
            dev_get(&cpu, a, cu, tot);
            dev_get(&gpu, b, gu, tot);
            CHECK_MSG(bitwise_equal(a, b, tot), "adafactor_precond (%lld, %lld, %lld) %s differs: max rel %g",
                      (long long)B, (long long)R, (long long)C, round ? "clamped" : "random",
                      max_rel(a, b, tot, 1e-30));
            ob_dev_free(&cpu, crr);
            ob_dev_free(&gpu, grr);
            ob_dev_free(&cpu, ccc);
            ob_dev_free(&gpu, gcc);
        }
        ob_dev_free(&cpu, cx);
        ob_dev_free(&gpu, gx);
        ob_dev_free(&cpu, cr);
        ob_dev_free(&gpu, gr);
        ob_dev_free(&cpu, cc);
        ob_dev_free(&gpu, gc);
        ob_dev_free(&cpu, cu);
        ob_dev_free(&gpu, gu);
        free(h);
        free(a);
        free(b);
        free(hr);
        free(hc);
    }
    /* adafactor_scale: both sides of each max, the whole struct compared */
    const struct {
        float sqp, squ;
        int64_t numel;
        float d, lr, eps2;
    } sc[] = {{112.0f, 700.0f, 2800, 1.0f, 0.01f, 1e-3f},   {112.0f, 25200.0f, 2800, 1.0f, 0.01f, 1e-3f},
              {2.8e-5f, 700.0f, 2800, 1.0f, 0.01f, 1e-3f},  {2.8e-5f, 25200.0f, 2800, 1.0f, 0.01f, 1e-3f},
              {0.0f, 0.0f, 1, 1.0f, 0.5f, 1e-3f},           {3.0f, 50.0f, 7, 2.5f, 0.3f, 1e-3f},
              {1234.5f, 0.3f, 1000003, 1.0f, 0.0031622776f, 1e-3f}};
    for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
        ob_rule_step src = {
            .lr = 0.25f, .t = 7.0f, .bc1 = 0.5f, .bc2 = 0.125f, .c = {-1.0f, 42.0f, sc[k].lr, sc[k].eps2}};
        ob_rule_step rc, rg;
        const float sq[2] = {sc[k].sqp, sc[k].squ};
        float *csq = dev_put(&cpu, sq, 2), *gsq = dev_put(&gpu, sq, 2);
        void *cs = NULL, *gs = NULL, *cd = NULL, *gd = NULL;
        OK(ob_dev_alloc(&cpu, sizeof src, &cs, &err));
        OK(ob_dev_alloc(&gpu, sizeof src, &gs, &err));
        OK(ob_dev_alloc(&cpu, sizeof src, &cd, &err));
        OK(ob_dev_alloc(&gpu, sizeof src, &gd, &err));
        OK(cpu.ops->upload(&cpu, cs, &src, sizeof src, &err));
        OK(gpu.ops->upload(&gpu, gs, &src, sizeof src, &err));
        OK(cpu.ops->adafactor_scale(&cpu, (const ob_rule_step *)cs, csq, 1, sc[k].numel, sc[k].d,
                                    (ob_rule_step *)cd, &err));
        OK(gpu.ops->adafactor_scale(&gpu, (const ob_rule_step *)gs, gsq, 1, sc[k].numel, sc[k].d,
                                    (ob_rule_step *)gd, &err));
        OK(cpu.ops->download(&cpu, &rc, cd, sizeof rc, &err));
        OK(gpu.ops->download(&gpu, &rg, gd, sizeof rg, &err));
        CHECK_MSG(memcmp(&rc, &rg, sizeof rc) == 0, "adafactor_scale case %zu differs: c[0] %.9g (cpu) %.9g (cuda)",
                  k, rc.c[0], rg.c[0]);
        ob_dev_free(&cpu, csq);
        ob_dev_free(&gpu, gsq);
        ob_dev_free(&cpu, cs);
        ob_dev_free(&gpu, gs);
        ob_dev_free(&cpu, cd);
        ob_dev_free(&gpu, gd);
    }
    /* the first four cases (numel 2800) as one batch: each its own scale, as alone */
    {
        ob_rule_step src = {.lr = 0.25f, .t = 7.0f, .bc1 = 0.5f, .bc2 = 0.125f, .c = {-1.0f, 42.0f, 0.01f, 1e-3f}};
        float sq[8];
        for (int k = 0; k < 4; k++) {
            sq[k] = sc[k].sqp;
            sq[4 + k] = sc[k].squ;
        }
        float *csq = dev_put(&cpu, sq, 8), *gsq = dev_put(&gpu, sq, 8);
        ob_rule_step *cs = dev_put_bytes(&cpu, &src, sizeof src), *gs = dev_put_bytes(&gpu, &src, sizeof src);
        ob_rule_step rc[4], rg[4], one;
        ob_rule_step *cd = dev_put_bytes(&cpu, rc, sizeof rc), *gd = dev_put_bytes(&gpu, rg, sizeof rg);
        OK(cpu.ops->adafactor_scale(&cpu, cs, csq, 4, 2800, 1.0f, cd, &err));
        OK(gpu.ops->adafactor_scale(&gpu, gs, gsq, 4, 2800, 1.0f, gd, &err));
        OK(cpu.ops->download(&cpu, rc, cd, sizeof rc, &err));
        OK(gpu.ops->download(&gpu, rg, gd, sizeof rg, &err));
        for (int k = 0; k < 4; k++) {
            const float two[2] = {sc[k].sqp, sc[k].squ};
            ob_adafactor_scale(&src, two, 2800, 1.0f, &one);
            CHECK_MSG(memcmp(&rc[k], &one, sizeof one) == 0 && memcmp(&rg[k], &one, sizeof one) == 0,
                      "adafactor_scale batch, tensor %d: c[0] %.9g (cpu) %.9g (cuda), alone %.9g", k, rc[k].c[0],
                      rg[k].c[0], one.c[0]);
        }
        ob_dev_free(&cpu, csq);
        ob_dev_free(&gpu, gsq);
        ob_dev_free(&cpu, cs);
        ob_dev_free(&gpu, gs);
        ob_dev_free(&cpu, cd);
        ob_dev_free(&gpu, gd);
    }
    /* trust_scale (LAMB and LARS, each plain and clipped): ratios above and
     * below 1, a zero norm on either side and a NaN; one batch, the whole
     * structs equal (LARS's denominator too: its product and sum are rounded
     * each on CUDA as in C, OB_DMUL_ADD) */
    {
        enum { NB = 6 };
        const float sqp[NB] = {112.0f, 2.8e-5f, 0.0f, 9.0f, 1234.5f, 3.0f};
        const float squ[NB] = {700.0f, 25200.0f, 4.0f, 0.0f, 0.3f, NAN};
        float sq[2 * NB];
        for (int k = 0; k < NB; k++) {
            sq[k] = sqp[k];
            sq[NB + k] = squ[k];
        }
        ob_rule_step src = {.lr = 0.0031622776f, .t = 7.0f, .bc1 = 0.5f, .bc2 = 0.125f, .c = {-1.0f, 0.35f, 2.0f, 3.0f}};
        ob_step_stats stats = {0};
        stats.clip_scale = 0.75f;
        float *csq = dev_put(&cpu, sq, 2 * NB), *gsq = dev_put(&gpu, sq, 2 * NB);
        ob_rule_step *cs = dev_put_bytes(&cpu, &src, sizeof src), *gs = dev_put_bytes(&gpu, &src, sizeof src);
        ob_step_stats *cst = dev_put_bytes(&cpu, &stats, sizeof stats), *gst = dev_put_bytes(&gpu, &stats, sizeof stats);
        ob_rule_step rc[NB], rg[NB], one;
        const ob_trust kinds[4] = {{OB_TRUST_LAMB, 0, 0, 0, 0},
                                   {OB_TRUST_LAMB, 1, 0, 0, 0},
                                   {OB_TRUST_LARS, 0, 1e-3f, 5e-4f, 1e-8f},
                                   {OB_TRUST_LARS, 1, 1e-3f, 5e-4f, 1e-8f}};
        for (int q = 0; q < 4; q++) {
            ob_rule_step *cd = dev_put_bytes(&cpu, rc, sizeof rc), *gd = dev_put_bytes(&gpu, rg, sizeof rg);
            OK(cpu.ops->trust_scale(&cpu, cs, csq, NB, &kinds[q], cst, cd, &err));
            OK(gpu.ops->trust_scale(&gpu, gs, gsq, NB, &kinds[q], gst, gd, &err));
            OK(cpu.ops->download(&cpu, rc, cd, sizeof rc, &err));
            OK(gpu.ops->download(&gpu, rg, gd, sizeof rg, &err));
            for (int k = 0; k < NB; k++) {
                const float two[2] = {sqp[k], squ[k]};
                ob_trust_scale(&src, two, &kinds[q], stats.clip_scale, &one);
                const ob_rule_step a = rc[k], b = rg[k];
                CHECK_MSG(memcmp(&a, &one, sizeof one) == 0 && memcmp(&b, &one, sizeof one) == 0,
                          "trust_scale kind %d clip %d, tensor %d: c[0] %.9g (cpu) %.9g (cuda), alone %.9g",
                          kinds[q].kind, kinds[q].clip, k, rc[k].c[0], rg[k].c[0], one.c[0]);
            }
            ob_dev_free(&cpu, cd);
            ob_dev_free(&gpu, gd);
        }
        ob_dev_free(&cpu, cst);
        ob_dev_free(&gpu, gst);
        ob_dev_free(&cpu, csq);
        ob_dev_free(&gpu, gsq);
        ob_dev_free(&cpu, cs);
        ob_dev_free(&gpu, gs);
    }
}

/* Data-parallel sums (group_sum): one replica is left as it is (NCCL's
 * all-reduce over one rank); with a second device, two replicas end with the
 * CPU backend's sum, bit for bit (a + b rounds the same everywhere). */
static void test_group_sum(void)
{
    const int64_t n = 100003;
    float *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *o = malloc((size_t)n * sizeof *o);
    if (!a || !b || !o) exit(1);
    for (int64_t i = 0; i < n; i++) {
        a[i] = (float)sin((double)i * 0.37) * 3.0f;
        b[i] = (float)cos((double)i * 0.11) / 7.0f;
    }
    CHECK(gpu.ops->group_open && gpu.ops->group_sum && gpu.ops->group_close);
    ob_device *one[1] = {&gpu};
    void *g = NULL;
    ob_status s = gpu.ops->group_open(one, 1, &g, &err);
    /* NCCL (loaded at run time, or absent from the build) is not the
     * backend's to provide: without it the sums on this backend are skipped,
     * the rest of the file still runs (gpu-check.sh reports this line) */
    const int no_group = s == OB_ERR_UNSUPPORTED && strcmp(gpu.ops->name, "cpu");
    if (no_group) {
        printf("group_sum: skipped (%s)\n", err.msg);
    } else {
        CHECK_MSG(s == OB_OK, "group_open over one device: %s", err.msg);
    }
    if (s == OB_OK) {
        float *d = dev_put(&gpu, a, n);
        float *bufs[1] = {d};
        CHECK_OK(gpu.ops->group_sum(g, one, 1, bufs, n, &err), &err);
        dev_get(&gpu, o, d, n);
        CHECK_MSG(memcmp(o, a, (size_t)n * sizeof *o) == 0, "a sum over one replica changed the buffer");
        ob_dev_free(&gpu, d);
        gpu.ops->group_close(g);
    }
    /* two replicas: the CPU's sum as the reference */
    ob_device cpu2;
    ob_device *cp[2] = {&cpu, &cpu2};
    float *ref = malloc((size_t)n * sizeof *ref);
    if (!ref || ob_device_open(&cpu2, "cpu", 1, &err) != OB_OK) exit(1);
    void *cg = NULL;
    CHECK_OK(cpu.ops->group_open(cp, 2, &cg, &err), &err);
    float *ca = dev_put(&cpu, a, n), *cb = dev_put(&cpu2, b, n);
    float *cbufs[2] = {ca, cb};
    CHECK_OK(cpu.ops->group_sum(cg, cp, 2, cbufs, n, &err), &err);
    dev_get(&cpu, ref, ca, n);
    dev_get(&cpu2, o, cb, n);
    CHECK_MSG(memcmp(o, ref, (size_t)n * sizeof *o) == 0, "cpu: the two replicas differ after the sum");
    CHECK_MSG(ref[1] == a[1] + b[1] && ref[n - 1] == a[n - 1] + b[n - 1], "cpu: not the sum");
    ob_dev_free(&cpu, ca);
    ob_dev_free(&cpu2, cb);
    cpu.ops->group_close(cg);
    ob_device_close(&cpu2);
    ob_device g2;
    ob_err e2;
    ob_err_clear(&e2);
    if (no_group) {
        /* said above */
    } else if (strcmp(gpu.ops->name, "cpu") && ob_device_open(&g2, gpu.ops->name, 1, &e2) != OB_OK) {
        printf("group_sum over two devices: skipped (%s)\n", e2.msg);
    } else {
        if (!strcmp(gpu.ops->name, "cpu")) CHECK_OK(ob_device_open(&g2, "cpu", 1, &err), &err);
        ob_device *two[2] = {&gpu, &g2};
        s = gpu.ops->group_open(two, 2, &g, &err);
        CHECK_MSG(s == OB_OK, "group_open over two devices: %s", err.msg);
        if (s == OB_OK) {
            if (gpu.ops->make_current) CHECK_OK(gpu.ops->make_current(&gpu, &err), &err);
            float *da = dev_put(&gpu, a, n);
            if (gpu.ops->make_current) CHECK_OK(gpu.ops->make_current(&g2, &err), &err);
            float *db = dev_put(&g2, b, n);
            float *bufs[2] = {da, db};
            CHECK_OK(gpu.ops->group_sum(g, two, 2, bufs, n, &err), &err);
            dev_get(&g2, o, db, n);
            CHECK_MSG(memcmp(o, ref, (size_t)n * sizeof *o) == 0, "group_sum on replica 1 is not the CPU's sum");
            ob_dev_free(&g2, db);
            if (gpu.ops->make_current) CHECK_OK(gpu.ops->make_current(&gpu, &err), &err);
            dev_get(&gpu, o, da, n);
            CHECK_MSG(memcmp(o, ref, (size_t)n * sizeof *o) == 0, "group_sum on replica 0 is not the CPU's sum");
            ob_dev_free(&gpu, da);
            gpu.ops->group_close(g);
        }
        if (gpu.ops->make_current) CHECK_OK(gpu.ops->make_current(&g2, &err), &err);
        ob_device_close(&g2);
        if (gpu.ops->make_current) CHECK_OK(gpu.ops->make_current(&gpu, &err), &err);
    }
    free(a);
    free(b);
    free(o);
    free(ref);
}

int main(void)
{
    const char *peer = getenv("OB_TEST_PEER");
    const ob_backend_ops *cu = ob_cuda_backend_ops();
    int self_check = peer && !strcmp(peer, "cpu");
    /* the test's own bookkeeping, which needs no device: a rule kind added
     * without its parity case fails here on every machine */
    rule_cases_cover_kinds();
    test_traj_names();
    test_max_rel();
    if (!self_check) {
        if (!cu) {
            /* a CUDA build whose module does not load is broken, GPU or not */
            CHECK_MSG(!ob_cuda_backend_built(), "%s", ob_cuda_backend_missing());
            if (ob_t_fail) return check_done();
            printf("skipped: %s (the rule kinds' parity cases checked)\n", ob_cuda_backend_missing());
            return 77;
        }
        int gaps = table_gaps(&ob_cpu_backend, cu, 1);
        /* an op the CPU has and CUDA lacks fails on a machine without a GPU too (CI's) */
        CHECK_MSG(gaps == 0, "%d op slots the CPU backend fills are NULL in the CUDA table", gaps);
        char desc[256] = "";
        if (!cu->probe(0, desc, sizeof desc)) {
            /* Without a device: --backend cuda is refused with the reason, auto takes the CPU. */
            ob_device d;
            CHECK(ob_device_open(&d, "cuda", 0, &err) == OB_ERR_INPUT && strstr(err.msg, "no usable CUDA device"));
            CHECK_OK(ob_device_open(&d, "auto", 0, &err), &err);
            CHECK(d.ops == &ob_cpu_backend);
            ob_device_close(&d);
            if (ob_t_fail) return check_done();
            printf("skipped: no CUDA device: %s (the rule kinds' parity cases and the CUDA op table checked)\n",
                   desc);
            return 77;
        }
    }
    if (ob_device_open(&cpu, "cpu", 0, &err) != OB_OK ||
        ob_device_open(&gpu, self_check ? "cpu" : "cuda", 0, &err) != OB_OK) {
        fprintf(stderr, "cannot open the devices: %s\n", err.msg);
        return 1;
    }
    printf("comparing %s\n     with %s\n", gpu.desc, cpu.desc);
    test_fill_axpby_rng();
    test_dot_stats();
    test_gemm();
    test_rules();
    test_rules_waves();
    test_rules_batch();
    test_rules_spans();
    test_rules_batch_sumsq();
    test_matrix_ops();
    test_svd();
    test_soap_ops();
    test_adafactor_ops();
    test_rosenbrock();
    test_nn_ops();
    test_trajectories();
    test_group_sum();
    ob_device_close(&gpu);
    ob_device_close(&cpu);
    return check_done();
}
