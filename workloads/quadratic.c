/* workloads/quadratic.c - the noisy quadratic model.
 *
 *   f(x) = 1/2 (x - x*)^T A (x - x*),   A = Q diag(lambda) Q^T
 *
 * lambda log-spaced from 1 down to 1/cond (so cond is A's condition number),
 * Q a random orthogonal matrix (QR of a Gaussian matrix, LAPACKE), x* Gaussian.
 * A and x* come from `problem_seed` (the same problem for every run seed);
 * the run seed draws the start point and the gradient noise:
 *   g = A (x - x*) + noise * N(0, I)   (fresh noise every step).
 * The minimum is 0, so the loss is the gap to it. Built on the host once,
 * uploaded, then computed through the backend table (gemm, dot, axpby).
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "workloads/workload.h"

static const ob_hp_def quad_hp[] = {
    {"dim", OB_HP_INT, 100, 1, 4096, 0, 0, NULL, "dimension"},
    {"cond", OB_HP_FLOAT, 100, 1, 1e8, 0, 0, NULL, "condition number of A (eigenvalues log-spaced in [1/cond, 1])"},
    {"noise", OB_HP_FLOAT, 0.01, 0, INFINITY, 0, 0, NULL, "std of the Gaussian gradient noise"},
    {"init_scale", OB_HP_FLOAT, 1.0, 0, INFINITY, 1, 0, NULL, "std of the start point around x*"},
    {"problem_seed", OB_HP_INT, 0, 0, 1e9, 0, 0, NULL, "seed of A and x* (fixed across run seeds)"},
    {"inject_nan_step", OB_HP_INT, 0, 0, 1e12, 0, 0, NULL,
     "fault injection: the gradient has a NaN at this step (1-based; 0 never)"},
};

typedef struct quad {
    ob_workload base;
    int64_t d;
    double cond, noise, init_scale;
    uint64_t problem_seed;
    int64_t inject_nan_step;
    int64_t off_x;          /* offset of "x" in the arenas */
    float *A, *xstar;       /* device: (d, d), (d) */
    float *diff, *tmp;      /* device scratch: (d), (d) */
    float *loss_eval;       /* device scalar */
} quad;

static ob_status quad_describe(ob_workload *w, ob_layout *l, ob_err *e)
{
    quad *q = (quad *)w;
    int64_t shape[1] = {q->d};
    return ob_layout_add(l, "x", OB_TAG_VECTOR, 1, shape, NULL, e);
}

/* A = Q diag(lambda) Q^T on the host, in double for accuracy, then float. */
static ob_status build_problem(quad *q, float *A, float *xstar, ob_err *e)
{
    int64_t d = q->d;
    double *G = malloc((size_t)(d * d) * sizeof *G);
    double *tau = malloc((size_t)d * sizeof *tau);
    if (!G || !tau) {
        free(G);
        free(tau);
        return ob_fail(e, OB_ERR_NOMEM, "quadratic: out of memory for a %lld x %lld matrix", (long long)d, (long long)d);
    }
    for (int64_t i = 0; i < d * d; i++)
        G[i] = ob_rng_normal(q->problem_seed, OB_STREAM_WORLD, (uint64_t)i);
    lapack_int info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (lapack_int)d, (lapack_int)d, G, (lapack_int)d, tau);
    if (info == 0) info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (lapack_int)d, (lapack_int)d, (lapack_int)d, G, (lapack_int)d, tau);
    if (info != 0) {
        free(G);
        free(tau);
        return OB_FAIL_INTERNAL(e, OB_ERR_BACKEND, "quadratic: LAPACKE QR failed (info %d)", (int)info);
    }
    /* The eigenvalues depend on k alone: computed once here instead of in
     * the innermost loop, where d^3 / 2 calls of pow were most of a
     * quadratic run's time. Same expression, same order of the products and
     * sums, so every entry of A has the same bits. */
    double *lam = malloc((size_t)d * sizeof *lam);
    if (!lam) {
        free(G);
        free(tau);
        return ob_fail(e, OB_ERR_NOMEM, "quadratic: out of memory for %lld eigenvalues", (long long)d);
    }
    for (int64_t k = 0; k < d; k++)
        lam[k] = d == 1 ? 1.0 : pow(q->cond, -(double)k / (double)(d - 1));
    for (int64_t i = 0; i < d; i++)
        for (int64_t j = 0; j <= i; j++) {
            double s = 0;
            for (int64_t k = 0; k < d; k++)
                s += G[i * d + k] * lam[k] * G[j * d + k];
            A[i * d + j] = A[j * d + i] = (float)s;
        }
    free(lam);
    for (int64_t i = 0; i < d; i++)
        xstar[i] = ob_rng_normal(q->problem_seed, OB_STREAM_WORLD + 1, (uint64_t)i);
    free(G);
    free(tau);
    return OB_OK;
}

static ob_status quad_setup(ob_workload *w, const ob_layout *l, ob_err *e)
{
    quad *q = (quad *)w;
    ob_device *dev = w->dev;
    q->off_x = l->t[ob_layout_find(l, "x")].offset;
    int64_t d = q->d;
    OB_TRY(ob_dev_alloc(dev, (size_t)(d * d) * sizeof(float), (void **)&q->A, e));
    OB_TRY(ob_dev_alloc(dev, (size_t)d * sizeof(float), (void **)&q->xstar, e));
    OB_TRY(ob_dev_alloc(dev, (size_t)d * sizeof(float), (void **)&q->diff, e));
    OB_TRY(ob_dev_alloc(dev, (size_t)d * sizeof(float), (void **)&q->tmp, e));
    OB_TRY(ob_dev_alloc(dev, sizeof(float), (void **)&q->loss_eval, e));
    float *hA = malloc((size_t)(d * d) * sizeof *hA), *hx = malloc((size_t)d * sizeof *hx);
    ob_status s = (hA && hx) ? build_problem(q, hA, hx, e) : ob_fail(e, OB_ERR_NOMEM, "out of memory");
    if (s == OB_OK) s = dev->ops->upload(dev, q->A, hA, (size_t)(d * d) * sizeof(float), e);
    if (s == OB_OK) s = dev->ops->upload(dev, q->xstar, hx, (size_t)d * sizeof(float), e);
    free(hA);
    free(hx);
    return s;
}

static ob_status quad_init(ob_workload *w, float *params, ob_err *e)
{
    quad *q = (quad *)w;
    ob_device *dev = w->dev;
    float *x = params + q->off_x;
    OB_TRY(dev->ops->rng_normal(dev, x, q->d, w->seed, OB_STREAM_INIT, 0, 0.0f, (float)q->init_scale, e));
    return dev->ops->axpby(dev, q->d, 1.0f, q->xstar, 1.0f, x, e);
}

/* loss = 1/2 diff^T A diff with diff = x - x*; g = A diff (+ noise). */
static ob_status quad_loss_grad(quad *q, const float *x, float *g, float *loss, ob_err *e)
{
    ob_device *dev = q->base.dev;
    const ob_backend_ops *ops = dev->ops;
    int d = (int)q->d;
    OB_TRY(ops->copy(dev, q->diff, x, (size_t)d * sizeof(float), e));
    OB_TRY(ops->axpby(dev, d, -1.0f, q->xstar, 1.0f, q->diff, e));               /* diff (d) */
    OB_TRY(ops->gemm(dev, 0, 0, d, 1, d, 1.0f, q->A, d, q->diff, 1, 0.0f, g, 1, e)); /* g = A diff (d) */
    OB_TRY(ops->axpby(dev, d, 0.0f, q->diff, 0.5f, q->diff, e));                 /* diff /= 2 */
    return ops->dot(dev, d, q->diff, g, loss, e);
}

static ob_status quad_train_step(ob_workload *w, const float *params, float *grads, int64_t step,
                                 float *loss, ob_err *e)
{
    quad *q = (quad *)w;
    ob_device *dev = w->dev;
    float *g = grads + q->off_x;
    OB_TRY(quad_loss_grad(q, params + q->off_x, g, loss, e));
    if (q->noise > 0) {
        OB_TRY(dev->ops->rng_normal(dev, q->tmp, q->d, w->seed, OB_STREAM_NOISE,
                                    (uint64_t)step * (uint64_t)q->d, 0.0f, (float)q->noise, e));
        OB_TRY(dev->ops->axpby(dev, q->d, 1.0f, q->tmp, 1.0f, g, e));
    }
    if (q->inject_nan_step > 0 && step + 1 == q->inject_nan_step)
        OB_TRY(dev->ops->fill(dev, g, NAN, 1, e));
    return OB_OK;
}

static ob_status quad_evaluate(ob_workload *w, const float *params, ob_eval *out, ob_err *e)
{
    quad *q = (quad *)w;
    ob_device *dev = w->dev;
    float l;
    OB_TRY(quad_loss_grad(q, params + q->off_x, q->tmp, q->loss_eval, e));
    OB_TRY(dev->ops->download(dev, &l, q->loss_eval, sizeof l, e));
    out->loss = l;
    out->metric = NAN;
    out->floor = 0.0;
    return OB_OK;
}

static void quad_destroy(ob_workload *w)
{
    quad *q = (quad *)w;
    ob_device *dev = w->dev;
    ob_dev_free(dev, q->A);
    ob_dev_free(dev, q->xstar);
    ob_dev_free(dev, q->diff);
    ob_dev_free(dev, q->tmp);
    ob_dev_free(dev, q->loss_eval);
    free(q);
}

static const ob_workload_vt quad_vt = {
    .describe = quad_describe,
    .setup = quad_setup,
    .init_params = quad_init,
    .train_step = quad_train_step,
    .evaluate = quad_evaluate,
    .destroy = quad_destroy,
};

static ob_status quad_create(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev,
                             uint64_t seed, ob_workload **out, ob_err *e)
{
    quad *q = calloc(1, sizeof *q);
    if (!q) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    q->base.vt = &quad_vt;
    q->base.def = d;
    q->base.dev = dev;
    q->base.seed = seed;
    q->d = (int64_t)ob_hp_get(hp, "dim");
    q->cond = ob_hp_get(hp, "cond");
    q->noise = ob_hp_get(hp, "noise");
    q->init_scale = ob_hp_get(hp, "init_scale");
    q->problem_seed = (uint64_t)ob_hp_get(hp, "problem_seed");
    q->inject_nan_step = (int64_t)ob_hp_get(hp, "inject_nan_step");
    *out = &q->base;
    return OB_OK;
}

const ob_workload_def ob_wl_quadratic = {
    .name = "quadratic",
    .summary = "noisy quadratic 1/2 (x-x*)^T A (x-x*), log-spaced spectrum; loss is the gap to the minimum",
    .hp = quad_hp,
    .n_hp = (int)(sizeof quad_hp / sizeof quad_hp[0]),
    .metric_name = NULL,
    .items_name = NULL,
    .create = quad_create,
};
