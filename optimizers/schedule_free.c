/* optimizers/schedule_free.c - the averaging weights, warmup, z's start and
 * evaluation point of the schedule-free optimizers (adamw_sf, sgd_sf); see
 * schedule_free.h. */
#include <math.h>

#include "optimizers/schedule_free.h"

double ob_sf_warmup(const ob_optim *o, int64_t k)
{
    double warm = ob_optim_hp(o, "warmup_steps");
    return (double)k - 1 < warm ? (double)k / warm : 1.0;
}

double ob_sf_lr(const ob_optim *o, int64_t k)
{
    return ob_optim_lr(o, k) * ob_sf_warmup(o, k);
}

double ob_sf_ckp1(ob_optim *o, int64_t t)
{
    const double r = ob_optim_hp(o, "r"), power = ob_optim_hp(o, "weight_lr_power");
    ob_sf_host *h = o->host;
    if (h->t_cached > t || h->t_cached == 0) {
        h->t_cached = 0;
        h->lr_max = -1.0;
        h->weight_sum = 0.0;
        h->weight = 0.0;
    }
    while (h->t_cached < t) {
        int64_t k = ++h->t_cached;
        double lr = ob_sf_lr(o, k);
        if (lr > h->lr_max) h->lr_max = lr;
        h->weight = pow((double)k, r) * pow(h->lr_max, power);
        h->weight_sum += h->weight;
    }
    return h->weight_sum > 0 ? h->weight / h->weight_sum : 0.0;
}

ob_status ob_sf_first_step(ob_optim *o, float *params, ob_err *e)
{
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        if (gr->end == gr->begin) continue;
        OB_TRY(o->dev->ops->copy(o->dev, gr->state[0], params + gr->begin,
                                 (size_t)(gr->end - gr->begin) * sizeof(float), e));
    }
    return OB_OK;
}

ob_status ob_sf_eval_point(ob_optim *o, const float *params, float *out, double beta, ob_err *e)
{
    const ob_backend_ops *ops = o->dev->ops;
    double w = 1.0 - 1.0 / beta;
    OB_TRY(ops->copy(o->dev, out, params, (size_t)o->layout->total * sizeof(float), e));
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        if (gr->end == gr->begin) continue;
        OB_TRY(ops->axpby(o->dev, gr->end - gr->begin, (float)w, gr->state[0], (float)(1.0 - w), out + gr->begin,
                          e));
    }
    return OB_OK;
}
