/* tests/test_adafactor_ops.c - the backend ops of Adafactor's factored second
 * moments on the CPU: rows_sumsq and cols_sumsq bit for bit against double
 * sums in their specified orders;
 * adafactor_precond against the formula in double (also a mean below eps1 and
 * values clamped at eps1^2); adafactor_scale against the formula in double,
 * both branches of each max, the other fields copied; shape errors. Shapes
 * include rows = 1, cols = 1, batch 1 and 3, 40 x 70, and one large enough
 * for the OpenMP loops. */
#include <string.h>

#include "check.h"
#include "dev_io.h"
#include "core/rng.h"
#include "kernels/backend.h"

static ob_device dev;
static ob_err err;


static void randn(float *x, int64_t n, uint64_t seed, float scale)
{
    for (int64_t i = 0; i < n; i++) x[i] = scale * ob_rng_normal(seed, OB_STREAM_MISC, (uint64_t)i);
}

/* |got - want| <= tol * |want| (+ a tiny absolute floor for want = 0) */
static int rel_ok(double got, double want, double tol)
{
    return fabs(got - want) <= tol * fabs(want) + 1e-300;
}

static const int64_t shapes[][3] = {{1, 1, 1}, {1, 1, 9}, {1, 7, 1}, {1, 40, 70}, {3, 5, 6}, {3, 1, 4}, {3, 40, 70},
                                    {2, 3, 300}, {1, 200, 300}, {2, 203, 37}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* ---- rows_sumsq / cols_sumsq ------------------------------------------------------------ */

static void test_sumsq(void)
{
    for (size_t k = 0; k < NSHAPES; k++) {
        int64_t B = shapes[k][0], R = shapes[k][1], C = shapes[k][2], tot = B * R * C;
        float *h = malloc((size_t)tot * sizeof *h), *got = malloc((size_t)(B * R + B * C) * sizeof *got);
        randn(h, tot, 100 + k, 2.0f);
        float *dx = dev_put(&dev, h, tot), *dr = dev_put(&dev, NULL, B * R), *dc = dev_put(&dev, NULL, B * C);
        const float ar = 1.0f / (float)C, ac = 1.0f / (float)R;
        /* rows of x seen as (B * R, C) */
        CHECK_OK(dev.ops->rows_sumsq(&dev, dx, B * R, C, ar, dr, &err), &err);
        dev_get(&dev, got, dr, B * R);
        int bad = 0;
        for (int64_t r = 0; r < B * R && !bad; r++) {
            double s = 0; /* the specified order: c ascending */
            for (int64_t c = 0; c < C; c++) s += (double)h[r * C + c] * h[r * C + c];
            if (got[r] != (float)((double)ar * s)) {
                CHECK_MSG(0, "rows_sumsq (%lld, %lld) row %lld: %.9g, want %.9g", (long long)(B * R), (long long)C,
                          (long long)r, got[r], ar * s);
                bad = 1;
            }
        }
        CHECK_MSG(!bad, "rows_sumsq (%lld, %lld)", (long long)(B * R), (long long)C);
        CHECK_OK(dev.ops->cols_sumsq(&dev, dx, B, R, C, ac, dc, &err), &err);
        dev_get(&dev, got, dc, B * C);
        bad = 0;
        for (int64_t b = 0; b < B && !bad; b++)
            for (int64_t c = 0; c < C && !bad; c++) {
                double s = 0; /* the specified order: blocks of OB_SUMSQ_ROW_BLOCK rows, added in order */
                for (int64_t r0 = 0; r0 < R; r0 += OB_SUMSQ_ROW_BLOCK) {
                    double part = 0;
                    for (int64_t r = r0; r < R && r < r0 + OB_SUMSQ_ROW_BLOCK; r++)
                        part += (double)h[(b * R + r) * C + c] * h[(b * R + r) * C + c];
                    s += part;
                }
                if (got[b * C + c] != (float)((double)ac * s)) {
                    CHECK_MSG(0, "cols_sumsq (%lld, %lld, %lld) at (%lld, %lld): %.9g, want %.9g", (long long)B,
                              (long long)R, (long long)C, (long long)b, (long long)c, got[b * C + c], ac * s);
                    bad = 1;
                }
            }
        CHECK_MSG(!bad, "cols_sumsq (%lld, %lld, %lld)", (long long)B, (long long)R, (long long)C);
        /* x unchanged */
        float *hb = malloc((size_t)tot * sizeof *hb);
        dev_get(&dev, hb, dx, tot);
        CHECK_MSG(memcmp(hb, h, (size_t)tot * sizeof *h) == 0, "the sums changed x");
        free(hb);
        ob_dev_free(&dev, dx);
        ob_dev_free(&dev, dr);
        ob_dev_free(&dev, dc);
        free(h);
        free(got);
    }
    /* alpha = 1 on a known row: 1 + 4 + 9 */
    float x[3] = {1, -2, 3}, o[1] = {0};
    CHECK_OK(dev.ops->rows_sumsq(&dev, x, 1, 3, 1.0f, o, &err), &err);
    CHECK(o[0] == 14.0f);
    CHECK_OK(dev.ops->cols_sumsq(&dev, x, 1, 3, 1, 0.5f, o, &err), &err); /* one column of three rows */
    CHECK(o[0] == 7.0f);
}

/* ---- adafactor_precond ---------------------------------------------------------------- */

/* the formula in double; returns the worst relative error over the tensor */
static double precond_err(const float *g, const float *row, const float *col, int64_t B, int64_t R, int64_t C,
                          float eps1, const float *u, int64_t *n_mclamp, int64_t *n_vclamp)
{
    double worst = 0, e2 = (double)eps1 * eps1;
    for (int64_t b = 0; b < B; b++) {
        double s = 0;
        for (int64_t r = 0; r < R; r++) s += row[b * R + r];
        double m = s / (double)R;
        if (m < eps1) {
            m = eps1;
            (*n_mclamp)++;
        }
        for (int64_t r = 0; r < R; r++)
            for (int64_t c = 0; c < C; c++) {
                double v = (double)row[b * R + r] * col[b * C + c] / m;
                if (v < e2) {
                    v = e2;
                    (*n_vclamp)++;
                }
                double want = g[(b * R + r) * C + c] / sqrt(v), got = u[(b * R + r) * C + c];
                double d = fabs(got - want) / fmax(fabs(want), 1e-300);
                if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
            }
    }
    return worst;
}

static void check_precond(const float *g, const float *row, const float *col, int64_t B, int64_t R, int64_t C,
                          float eps1, const char *what, int want_mclamp, int want_vclamp)
{
    int64_t tot = B * R * C;
    float *dg = dev_put(&dev, g, tot), *drow = dev_put(&dev, row, B * R), *dcol = dev_put(&dev, col, B * C), *du = dev_put(&dev, NULL, tot);
    float *u = malloc((size_t)tot * sizeof *u), *gb = malloc((size_t)tot * sizeof *gb);
    CHECK_OK(dev.ops->adafactor_precond(&dev, dg, drow, dcol, B, R, C, eps1, du, &err), &err);
    dev_get(&dev, u, du, tot);
    dev_get(&dev, gb, dg, tot);
    CHECK_MSG(memcmp(gb, g, (size_t)tot * sizeof *g) == 0, "adafactor_precond %s: g changed", what);
    int64_t nm = 0, nv = 0;
    double w = precond_err(g, row, col, B, R, C, eps1, u, &nm, &nv);
    CHECK_MSG(w <= 1e-6, "adafactor_precond %s (%lld, %lld, %lld): worst rel %g", what, (long long)B, (long long)R,
              (long long)C, w);
    if (want_mclamp >= 0) CHECK_MSG((nm > 0) == want_mclamp, "%s: %lld means clamped at eps1", what, (long long)nm);
    if (want_vclamp >= 0) CHECK_MSG((nv > 0) == want_vclamp, "%s: %lld values clamped at eps1^2", what, (long long)nv);
    ob_dev_free(&dev, dg);
    ob_dev_free(&dev, drow);
    ob_dev_free(&dev, dcol);
    ob_dev_free(&dev, du);
    free(u);
    free(gb);
}

static void test_precond(void)
{
    const float eps1 = 1e-3f;
    for (size_t k = 0; k < NSHAPES; k++) {
        int64_t B = shapes[k][0], R = shapes[k][1], C = shapes[k][2], tot = B * R * C;
        float *g = malloc((size_t)tot * sizeof *g), *row = malloc((size_t)(B * R) * sizeof *row);
        float *col = malloc((size_t)(B * C) * sizeof *col);
        randn(g, tot, 200 + k, 1.0f);
        randn(row, B * R, 300 + k, 1.0f);
        randn(col, B * C, 400 + k, 1.0f);
        /* second-moment-like factors: positive, of varied size */
        for (int64_t i = 0; i < B * R; i++) row[i] = 0.1f + row[i] * row[i];
        for (int64_t i = 0; i < B * C; i++) col[i] = 0.1f + col[i] * col[i];
        check_precond(g, row, col, B, R, C, eps1, "random", 0, 0);
        /* a tiny row factor in batch 0: its mean falls below eps1 (clamped),
         * and products below eps1^2 * eps1 are clamped at eps1^2 */
        for (int64_t r = 0; r < R; r++) row[r] = 1e-9f * (1.0f + (float)r);
        for (int64_t c = 0; c < C; c += 2) col[c] = 1e-5f;
        check_precond(g, row, col, B, R, C, eps1, "tiny row", 1, 1);
        free(g);
        free(row);
        free(col);
    }
    /* v clamped with an unclamped mean: a tiny column */
    {
        float g[6] = {1, -2, 3, 0.5f, -0.25f, 4}, row[2] = {1.0f, 2.0f}, col[3] = {1e-12f, 0.5f, 3.0f};
        check_precond(g, row, col, 1, 2, 3, 1e-3f, "tiny column", 0, 1);
        /* by hand: m = 1.5; u[0][0] = 1 / sqrt(eps1^2) = 1000; u[1][2] = 4 / sqrt(4) */
        float u[6];
        CHECK_OK(dev.ops->adafactor_precond(&dev, g, row, col, 1, 2, 3, 1e-3f, u, &err), &err);
        CHECK_NEAR(u[0], 1.0 / 1e-3, 1e-6 * 1e3);
        CHECK_NEAR(u[5], 4.0 / sqrt(2.0 * 3.0 / 1.5), 1e-6);
    }
}

/* ---- adafactor_scale ----------------------------------------------------------------- */

static void check_scale(float sqp, float squ, int64_t numel, float d, float lr, float eps2, const char *what,
                        int want_rms_above, int want_ratio_above)
{
    ob_rule_step src = {.lr = 0.25f, .t = 7.0f, .bc1 = 0.5f, .bc2 = 0.125f, .c = {-1.0f, 42.0f, lr, eps2}};
    ob_rule_step dst;
    memset(&dst, 0x5a, sizeof dst);
    const float sq[2] = {sqp, squ};
    ob_rule_step *ds = NULL, *dd = NULL;
    float *dsq = dev_put(&dev, sq, 2);
    CHECK_OK(ob_dev_alloc(&dev, sizeof src, (void **)&ds, &err), &err);
    CHECK_OK(ob_dev_alloc(&dev, sizeof dst, (void **)&dd, &err), &err);
    CHECK_OK(dev.ops->upload(&dev, ds, &src, sizeof src, &err), &err);
    CHECK_OK(dev.ops->adafactor_scale(&dev, ds, dsq, 1, numel, d, dd, &err), &err);
    CHECK_OK(dev.ops->download(&dev, &dst, dd, sizeof dst, &err), &err);
    double rn = sqrt((double)numel), rms = sqrt((double)sqp) / rn, ratio = sqrt((double)squ) / (rn * d);
    CHECK_MSG((rms > eps2) == want_rms_above, "%s: rms %g vs eps2 %g on the wrong side", what, rms, (double)eps2);
    CHECK_MSG((ratio > 1.0) == want_ratio_above, "%s: ratio %g on the wrong side of 1", what, ratio);
    double want = fmax(rms, (double)eps2) * lr / fmax(ratio, 1.0);
    CHECK_MSG(rel_ok(dst.c[0], want, 1e-6), "%s: c[0] = %.9g, want %.9g", what, dst.c[0], want);
    CHECK_MSG(dst.lr == src.lr && dst.t == src.t && dst.bc1 == src.bc1 && dst.bc2 == src.bc2 &&
                  dst.c[1] == src.c[1] && dst.c[2] == src.c[2] && dst.c[3] == src.c[3],
              "%s: the other fields were not copied", what);
    ob_dev_free(&dev, dsq);
    ob_dev_free(&dev, ds);
    ob_dev_free(&dev, dd);
}

/* Three tensors in one call: sq holds their ||p||^2, then their ||u||^2;
 * each gets the scale it gets alone. */
static void test_scale_batch(void)
{
    ob_rule_step src = {.lr = 0.25f, .t = 7.0f, .c = {-1.0f, 42.0f, 0.01f, 1e-3f}}, dst[3], one;
    const float sq[6] = {2800.0f * 0.04f, 2800.0f * 1e-8f, 2800.0f * 0.04f, 2800.0f * 0.25f, 2800.0f * 9.0f, 2800.0f * 4.0f};
    CHECK_OK(dev.ops->adafactor_scale(&dev, &src, sq, 3, 2800, 1.0f, dst, &err), &err);
    for (int k = 0; k < 3; k++) {
        const float two[2] = {sq[k], sq[3 + k]};
        CHECK_OK(dev.ops->adafactor_scale(&dev, &src, two, 1, 2800, 1.0f, &one, &err), &err);
        CHECK_MSG(memcmp(&dst[k], &one, sizeof one) == 0, "tensor %d of the batch: c[0] %.9g, alone %.9g", k,
                  dst[k].c[0], one.c[0]);
    }
    CHECK(dst[0].c[0] != dst[1].c[0] && dst[0].c[0] != dst[2].c[0]);
}

static void test_scale(void)
{
    /* numel 2800, d 1: rms = sqrt(sqp / 2800), ratio = sqrt(squ / 2800) */
    check_scale(2800.0f * 0.04f, 2800.0f * 0.25f, 2800, 1.0f, 0.01f, 1e-3f, "rms > eps2, ratio < 1", 1, 0);
    check_scale(2800.0f * 0.04f, 2800.0f * 9.0f, 2800, 1.0f, 0.01f, 1e-3f, "rms > eps2, ratio > 1", 1, 1);
    check_scale(2800.0f * 1e-8f, 2800.0f * 0.25f, 2800, 1.0f, 0.01f, 1e-3f, "rms < eps2, ratio < 1", 0, 0);
    check_scale(2800.0f * 1e-8f, 2800.0f * 9.0f, 2800, 1.0f, 0.01f, 1e-3f, "rms < eps2, ratio > 1", 0, 1);
    check_scale(0.0f, 0.0f, 1, 1.0f, 0.5f, 1e-3f, "zeros, numel 1", 0, 0);
    check_scale(3.0f, 50.0f, 7, 2.5f, 0.3f, 1e-3f, "d 2.5", 1, 1);
    check_scale(3.0f, 5.0f, 7, 2.5f, 0.3f, 1e-3f, "d 2.5, ratio < 1", 1, 0);
}

/* ---- shape errors ---------------------------------------------------------------------- */

static void test_shape_errors(void)
{
    float x[4] = {0}, o[4] = {0};
    ob_rule_step s = {0}, t;
    CHECK(dev.ops->rows_sumsq(&dev, x, -1, 2, 1.0f, o, &err) == OB_ERR_INTERNAL && strstr(err.msg, "rows_sumsq"));
    CHECK(dev.ops->rows_sumsq(&dev, x, INT64_MAX / 2, 3, 1.0f, o, &err) == OB_ERR_INTERNAL);
    CHECK(dev.ops->cols_sumsq(&dev, x, 1, 2, -2, 1.0f, o, &err) == OB_ERR_INTERNAL && strstr(err.msg, "cols_sumsq"));
    CHECK(dev.ops->cols_sumsq(&dev, x, INT64_MAX / 4, 2, 4, 1.0f, o, &err) == OB_ERR_INTERNAL);
    CHECK(dev.ops->adafactor_precond(&dev, x, x, x, -1, 2, 2, 1e-3f, o, &err) == OB_ERR_INTERNAL &&
          strstr(err.msg, "adafactor_precond"));
    CHECK(dev.ops->adafactor_precond(&dev, x, x, x, 3, INT64_MAX / 4, 2, 1e-3f, o, &err) == OB_ERR_INTERNAL);
    CHECK(dev.ops->adafactor_scale(&dev, &s, x, 1, -1, 1.0f, &t, &err) == OB_ERR_INTERNAL &&
          strstr(err.msg, "adafactor_scale"));
    CHECK(dev.ops->adafactor_scale(&dev, &s, x, -1, 4, 1.0f, &t, &err) == OB_ERR_INTERNAL);
    /* empty shapes are no-ops */
    CHECK_OK(dev.ops->rows_sumsq(&dev, x, 0, 5, 1.0f, o, &err), &err);
    CHECK_OK(dev.ops->cols_sumsq(&dev, x, 0, 5, 5, 1.0f, o, &err), &err);
    CHECK_OK(dev.ops->adafactor_precond(&dev, x, x, x, 2, 0, 5, 1e-3f, o, &err), &err);
}

int main(void)
{
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &err), &err);
    test_sumsq();
    test_precond();
    test_scale();
    test_scale_batch();
    test_shape_errors();
    ob_device_close(&dev);
    return check_done();
}
