/* workloads/rosenbrock.c - the N-dimensional Rosenbrock function,
 *   f(x) = sum_{i<N-1} 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2,
 * minimum 0 at x = (1, ..., 1). The start point is drawn from the run seed,
 * uniform in [-2, 2] per coordinate; optional Gaussian gradient noise. */
#include <math.h>
#include <stdlib.h>

#include "core/rng.h"
#include "workloads/workload.h"

static const ob_hp_def rosen_hp[] = {
    {"dim", OB_HP_INT, 10, 2, 1e6, 0, 0, NULL, "dimension"},
    {"noise", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "std of the Gaussian gradient noise"},
    {"init_range", OB_HP_FLOAT, 2.0, 0, INFINITY, 1, 0, NULL, "start point uniform in [-r, r]"},
};

typedef struct rosen {
    ob_workload base;
    int64_t d;
    double noise, range;
    int64_t off_x;
    float *tmp, *loss_eval;
} rosen;

static ob_status rosen_describe(ob_workload *w, ob_layout *l, ob_err *e)
{
    int64_t shape[1] = {((rosen *)w)->d};
    return ob_layout_add(l, "x", OB_TAG_VECTOR, 1, shape, NULL, e);
}

static ob_status rosen_setup(ob_workload *w, const ob_layout *l, ob_err *e)
{
    rosen *r = (rosen *)w;
    OB_TRY(OB_REQUIRE(w->dev, rosenbrock, e));
    r->off_x = l->t[ob_layout_find(l, "x")].offset;
    OB_TRY(ob_dev_alloc(w->dev, (size_t)r->d * sizeof(float), (void **)&r->tmp, e));
    return ob_dev_alloc(w->dev, sizeof(float), (void **)&r->loss_eval, e);
}

static ob_status rosen_init(ob_workload *w, float *params, ob_err *e)
{
    rosen *r = (rosen *)w;
    float *h = malloc((size_t)r->d * sizeof *h);
    if (!h) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < r->d; i++)
        h[i] = (float)(r->range * (2.0 * ob_rng_uniform(w->seed, OB_STREAM_INIT, (uint64_t)i) - 1.0));
    ob_status s = w->dev->ops->upload(w->dev, params + r->off_x, h, (size_t)r->d * sizeof(float), e);
    free(h);
    return s;
}

static ob_status rosen_train_step(ob_workload *w, const float *params, float *grads, int64_t step,
                                  float *loss, ob_err *e)
{
    rosen *r = (rosen *)w;
    ob_device *dev = w->dev;
    float *g = grads + r->off_x;
    OB_TRY(dev->ops->rosenbrock(dev, params + r->off_x, r->d, loss, g, e));
    if (r->noise > 0) {
        OB_TRY(dev->ops->rng_normal(dev, r->tmp, r->d, w->seed, OB_STREAM_NOISE,
                                    (uint64_t)step * (uint64_t)r->d, 0.0f, (float)r->noise, e));
        OB_TRY(dev->ops->axpby(dev, r->d, 1.0f, r->tmp, 1.0f, g, e));
    }
    return OB_OK;
}

static ob_status rosen_evaluate(ob_workload *w, const float *params, ob_eval *out, ob_err *e)
{
    rosen *r = (rosen *)w;
    ob_device *dev = w->dev;
    float l;
    OB_TRY(dev->ops->rosenbrock(dev, params + r->off_x, r->d, r->loss_eval, r->tmp, e));
    OB_TRY(dev->ops->download(dev, &l, r->loss_eval, sizeof l, e));
    out->loss = l;
    out->metric = NAN;
    out->floor = 0.0;
    return OB_OK;
}

static void rosen_destroy(ob_workload *w)
{
    rosen *r = (rosen *)w;
    ob_dev_free(w->dev, r->tmp);
    ob_dev_free(w->dev, r->loss_eval);
    free(r);
}

static const ob_workload_vt rosen_vt = {
    .describe = rosen_describe,
    .setup = rosen_setup,
    .init_params = rosen_init,
    .train_step = rosen_train_step,
    .evaluate = rosen_evaluate,
    .destroy = rosen_destroy,
};

static ob_status rosen_create(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev,
                              uint64_t seed, ob_workload **out, ob_err *e)
{
    rosen *r = calloc(1, sizeof *r);
    if (!r) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    r->base.vt = &rosen_vt;
    r->base.def = d;
    r->base.dev = dev;
    r->base.seed = seed;
    r->d = (int64_t)ob_hp_get(hp, "dim");
    r->noise = ob_hp_get(hp, "noise");
    r->range = ob_hp_get(hp, "init_range");
    *out = &r->base;
    return OB_OK;
}

const ob_workload_def ob_wl_rosenbrock = {
    .name = "rosenbrock",
    .summary = "N-dimensional Rosenbrock valley, start drawn from the seed; minimum 0 at (1, ..., 1)",
    .hp = rosen_hp,
    .n_hp = (int)(sizeof rosen_hp / sizeof rosen_hp[0]),
    .metric_name = NULL,
    .items_name = NULL,
    .create = rosen_create,
};
