/* optimizers/ns_study.c - orthogonalization accuracy and coefficient fitting
 * (see ns_study.h). Everything on the device goes through the backend's ops
 * (rng_normal, svd_polar, gemm, batched_normalize, axpby, dot); the host only
 * sees singular values and scalar errors. */
#include "optimizers/ns_study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "optimizers/newton_schulz.h"

void ob_ortho_free(ob_ortho_set *s)
{
    if (s->dev) {
        ob_dev_free(s->dev, s->a);
        ob_dev_free(s->dev, s->q);
        ob_dev_free(s->dev, s->x);
        ob_dev_free(s->dev, s->x2);
        ob_dev_free(s->dev, s->ga);
        ob_dev_free(s->dev, s->gb);
        ob_dev_free(s->dev, s->scratch);
    }
    free(s->sv);
    memset(s, 0, sizeof *s);
}

/* A (rows x cols) = L diag(d) R with L = polar(rows x k Gaussian), R = polar(k x cols Gaussian). */
static ob_status heavy_sample(ob_device *dev, int rows, int cols, int k, uint64_t seed, uint64_t stream, float *a,
                              ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    float *g1 = NULL, *l = NULL, *g2 = NULL, *r = NULL, *d = NULL, *dr = NULL, *sv = NULL;
    ob_status st = OB_OK;
    size_t kb = (size_t)k * sizeof(float);
#define CK(x)                             \
    do {                                  \
        if ((st = (x)) != OB_OK) goto out; \
    } while (0)
    CK(ob_dev_alloc(dev, (size_t)rows * kb, (void **)&g1, e));
    CK(ob_dev_alloc(dev, (size_t)rows * kb, (void **)&l, e));
    CK(ob_dev_alloc(dev, (size_t)cols * kb, (void **)&g2, e));
    CK(ob_dev_alloc(dev, (size_t)cols * kb, (void **)&r, e));
    CK(ob_dev_alloc(dev, (size_t)k * kb, (void **)&d, e));
    CK(ob_dev_alloc(dev, (size_t)cols * kb, (void **)&dr, e));
    CK(ob_dev_alloc(dev, kb, (void **)&sv, e));
    CK(ops->rng_normal(dev, g1, (int64_t)rows * k, seed, stream, 0, 0.0f, 1.0f, e));
    CK(ops->rng_normal(dev, g2, (int64_t)k * cols, seed, stream + 1, 0, 0.0f, 1.0f, e));
    CK(ops->svd_polar(dev, rows, k, g1, sv, l, e));
    CK(ops->svd_polar(dev, k, cols, g2, sv, r, e));
    float *diag = calloc((size_t)k * k, sizeof *diag);
    if (!diag) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < k; i++) diag[i * k + i] = expf(1.5f * ob_rng_normal(seed, stream + 2, (uint64_t)i));
    st = ops->upload(dev, d, diag, (size_t)k * kb, e);
    free(diag);
    if (st != OB_OK) goto out;
    CK(ops->gemm(dev, 0, 0, k, cols, k, 1.0f, d, k, r, cols, 0.0f, dr, cols, e));
    CK(ops->gemm(dev, 0, 0, rows, cols, k, 1.0f, l, k, dr, cols, 0.0f, a, cols, e));
#undef CK
out:
    ob_dev_free(dev, g1);
    ob_dev_free(dev, l);
    ob_dev_free(dev, g2);
    ob_dev_free(dev, r);
    ob_dev_free(dev, d);
    ob_dev_free(dev, dr);
    ob_dev_free(dev, sv);
    return st;
}

ob_status ob_ortho_make(ob_device *dev, ob_spectrum spec, int batch, int rows, int cols, uint64_t seed,
                        ob_ortho_set *s, ob_err *e)
{
    memset(s, 0, sizeof *s);
    const ob_backend_ops *ops = dev->ops;
    OB_TRY(OB_REQUIRE(dev, svd_polar, e));
    OB_TRY(OB_REQUIRE(dev, batched_normalize, e));
    s->dev = dev;
    s->batch = batch;
    s->rows = rows;
    s->cols = cols;
    s->k = rows < cols ? rows : cols;
    s->stride = ob_ns_stride((int64_t)rows * cols);
    int64_t ss = ob_ns_stride((int64_t)s->k * s->k);
    size_t big = (size_t)(batch * s->stride) * sizeof(float);
    ob_status st = OB_OK;
    float *sv = NULL;
#define CK(x)                             \
    do {                                  \
        if ((st = (x)) != OB_OK) goto fail; \
    } while (0)
    CK(ob_dev_alloc(dev, big, (void **)&s->a, e));
    CK(ob_dev_alloc(dev, big, (void **)&s->q, e));
    CK(ob_dev_alloc(dev, big, (void **)&s->x, e));
    CK(ob_dev_alloc(dev, big, (void **)&s->x2, e));
    CK(ob_dev_alloc(dev, (size_t)(batch * ss) * sizeof(float), (void **)&s->ga, e));
    CK(ob_dev_alloc(dev, (size_t)(batch * ss) * sizeof(float), (void **)&s->gb, e));
    CK(ob_dev_alloc(dev, 4 * sizeof(float) + (size_t)s->k * sizeof(float), (void **)&s->scratch, e));
    s->sv = malloc((size_t)batch * s->k * sizeof *s->sv);
    sv = malloc((size_t)s->k * sizeof *sv);
    if (!s->sv || !sv) {
        st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    const int64_t n = (int64_t)rows * cols;
    for (int b = 0; b < batch; b++) {
        float *ab = s->a + b * s->stride, *qb = s->q + b * s->stride;
        /* a different draw per shape and sample (the error depends only on the spectrum) */
        uint64_t stream = OB_STREAM_MISC + (((uint64_t)rows * 65537u + (uint64_t)cols) << 12) + (uint64_t)b * 8;
        if (spec == OB_SPECTRUM_GAUSSIAN)
            CK(ops->rng_normal(dev, ab, n, seed, stream, 0, 0.0f, 1.0f, e));
        else
            CK(heavy_sample(dev, rows, cols, s->k, seed, stream, ab, e));
        float *svd = s->scratch + 4;
        CK(ops->svd_polar(dev, rows, cols, ab, svd, qb, e));
        CK(ops->download(dev, sv, svd, (size_t)s->k * sizeof *sv, e));
        double fro = 0;
        for (int i = 0; i < s->k; i++) fro += (double)sv[i] * sv[i];
        fro = sqrt(fro);
        for (int i = 0; i < s->k; i++) s->sv[b * s->k + i] = sv[i] / fro;
    }
#undef CK
    free(sv);
    return OB_OK;
fail:
    free(sv);
    ob_ortho_free(s);
    return st;
}

ob_status ob_ortho_measure(ob_ortho_set *s, const float *abc, int n_abc, int steps, ob_ortho_stats *out,
                           ob_err *e)
{
    ob_device *dev = s->dev;
    const ob_backend_ops *ops = dev->ops;
    const int64_t n = (int64_t)s->rows * s->cols;
    int64_t ss = ob_ns_stride((int64_t)s->k * s->k);
    OB_TRY(ops->copy(dev, s->x, s->a, (size_t)(s->batch * s->stride) * sizeof(float), e));
    OB_TRY(ops->batched_normalize(dev, s->x, s->batch, n, s->stride, 1e-7f, s->bf16 ? OB_NORM_BF16 : 0, e));
    float *res;
    float *other = s->x2;
    OB_TRY(ob_ns_iterate(dev, s->x, s->x2, s->ga, s->gb, s->batch, s->rows, s->cols, s->stride, ss, abc, n_abc, steps, s->bf16,
                         &res, e));
    if (res == s->x2) other = s->x;
    out->err_mean = out->err_max = 0;
    out->sv_min = INFINITY;
    out->sv_max = 0;
    float *sv = malloc((size_t)s->k * sizeof *sv);
    if (!sv) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    ob_status st = OB_OK;
    for (int b = 0; b < s->batch && st == OB_OK; b++) {
        float *rb = res + b * s->stride, *qb = s->q + b * s->stride, *db = other + b * s->stride;
        float h[2];
        /* coefficients under which the iteration blew up (inf or NaN): an
         * infinite error and singular values, not an SVD of non-finite values */
        if ((st = ops->dot(dev, n, rb, rb, s->scratch + 2, e)) != OB_OK) break;
        if ((st = ops->download(dev, h, s->scratch + 2, sizeof h[0], e)) != OB_OK) break;
        if (!isfinite(h[0])) {
            out->err_mean = out->err_max = out->sv_max = INFINITY; /* sv_min: of the samples that did not */
            continue;
        }
        /* the singular values of NS(A), then NS(A) - Q in the other buffer */
        if ((st = ops->svd_polar(dev, s->rows, s->cols, rb, s->scratch + 4, NULL, e)) != OB_OK) break;
        if ((st = ops->download(dev, sv, s->scratch + 4, (size_t)s->k * sizeof *sv, e)) != OB_OK) break;
        if ((st = ops->copy(dev, db, rb, (size_t)n * sizeof(float), e)) != OB_OK) break;
        if ((st = ops->axpby(dev, n, -1.0f, qb, 1.0f, db, e)) != OB_OK) break;
        if ((st = ops->dot(dev, n, db, db, s->scratch, e)) != OB_OK) break;
        if ((st = ops->dot(dev, n, qb, qb, s->scratch + 1, e)) != OB_OK) break;
        if ((st = ops->download(dev, h, s->scratch, sizeof h, e)) != OB_OK) break;
        double err = sqrt((double)h[0] / (double)h[1]);
        out->err_mean += err / s->batch;
        if (err > out->err_max) out->err_max = err;
        for (int i = 0; i < s->k; i++) {
            if (sv[i] < out->sv_min) out->sv_min = sv[i];
            if (sv[i] > out->sv_max) out->sv_max = sv[i];
        }
    }
    free(sv);
    return st;
}

double ob_ortho_scalar_error(const ob_ortho_set *s, const double *abc, int n_abc, int steps)
{
    double total = 0;
    for (int b = 0; b < s->batch; b++) {
        double sum = 0;
        for (int i = 0; i < s->k; i++) {
            double x = s->sv[b * s->k + i];
            for (int t = 0; t < steps; t++) {
                const double *q = abc + 3 * (t < n_abc ? t : n_abc - 1);
                double x2 = x * x;
                x = x * (q[0] + x2 * (q[1] + x2 * q[2]));
            }
            sum += (x - 1) * (x - 1);
        }
        total += sqrt(sum / s->k);
    }
    double v = total / s->batch;
    return isfinite(v) ? v : 1e30;
}

/* Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2). */
int ob_ortho_fit(const ob_ortho_set *s, int steps, const double start[3], int max_evals, double out[3])
{
    double p[4][3], f[4];
    int evals = 0;
    for (int i = 0; i < 4; i++) {
        memcpy(p[i], start, sizeof p[i]);
        if (i > 0) p[i][i - 1] += 0.1 * (fabs(start[i - 1]) > 0.5 ? fabs(start[i - 1]) : 0.5);
        f[i] = ob_ortho_scalar_error(s, p[i], 1, steps);
        evals++;
    }
    while (evals < max_evals) {
        /* order: p[0] best ... p[3] worst */
        for (int i = 1; i < 4; i++)
            for (int j = i; j > 0 && f[j] < f[j - 1]; j--) {
                double tf = f[j];
                f[j] = f[j - 1];
                f[j - 1] = tf;
                double tp[3];
                memcpy(tp, p[j], sizeof tp);
                memcpy(p[j], p[j - 1], sizeof tp);
                memcpy(p[j - 1], tp, sizeof tp);
            }
        double spread = 0;
        for (int i = 1; i < 4; i++)
            for (int d = 0; d < 3; d++) spread = fmax(spread, fabs(p[i][d] - p[0][d]));
        if (f[3] - f[0] < 1e-12 && spread < 1e-7) break;
        double c[3], xr[3], xe[3], xc[3];
        for (int d = 0; d < 3; d++) c[d] = (p[0][d] + p[1][d] + p[2][d]) / 3;
        for (int d = 0; d < 3; d++) xr[d] = c[d] + (c[d] - p[3][d]);
        double fr = ob_ortho_scalar_error(s, xr, 1, steps);
        evals++;
        if (fr < f[0]) {
            for (int d = 0; d < 3; d++) xe[d] = c[d] + 2 * (c[d] - p[3][d]);
            double fe = ob_ortho_scalar_error(s, xe, 1, steps);
            evals++;
            if (fe < fr) {
                memcpy(p[3], xe, sizeof xe);
                f[3] = fe;
            } else {
                memcpy(p[3], xr, sizeof xr);
                f[3] = fr;
            }
        } else if (fr < f[2]) {
            memcpy(p[3], xr, sizeof xr);
            f[3] = fr;
        } else {
            int outside = fr < f[3];
            for (int d = 0; d < 3; d++) xc[d] = outside ? c[d] + 0.5 * (xr[d] - c[d]) : c[d] + 0.5 * (p[3][d] - c[d]);
            double fc = ob_ortho_scalar_error(s, xc, 1, steps);
            evals++;
            if (fc < (outside ? fr : f[3])) {
                memcpy(p[3], xc, sizeof xc);
                f[3] = fc;
            } else {
                for (int i = 1; i < 4; i++) {
                    for (int d = 0; d < 3; d++) p[i][d] = p[0][d] + 0.5 * (p[i][d] - p[0][d]);
                    f[i] = ob_ortho_scalar_error(s, p[i], 1, steps);
                    evals++;
                }
            }
        }
    }
    int best = 0;
    for (int i = 1; i < 4; i++)
        if (f[i] < f[best]) best = i;
    memcpy(out, p[best], sizeof p[best]);
    return evals;
}

void ob_ortho_file_abc(const double in[3], float out[3])
{
    for (int k = 0; k < 3; k++) {
        char t[64];
        snprintf(t, sizeof t, "%.6f", in[k]);
        out[k] = (float)strtod(t, NULL);
    }
}
