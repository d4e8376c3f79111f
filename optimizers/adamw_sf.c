/* optimizers/adamw_sf.c - schedule-free AdamW (Defazio et al. 2024, "The Road
 * Less Scheduled"), with the semantics of schedulefree.AdamWScheduleFree
 * (the reference implementation): no learning-rate schedule; the parameters
 * hold y, where gradients are taken; the state holds z (the base sequence,
 * starting at the parameters) and Adam's second moment; the model is
 * evaluated at the average x = lerp(y, z, 1 - 1/beta1), which the pipeline
 * computes into a buffer of its own for every held-out evaluation (the
 * parameters are never switched in place, so evaluating changes nothing).
 *
 * The averaging weight of update k (1-based) is k^r * lr_max^weight_lr_power,
 * lr_max the largest lr so far; ckp1 = weight / (sum of weights so far). The
 * lr of update k is lr * min(1, k / warmup_steps), times the training
 * schedule (train.schedule; constant by default, as the method intends)
 * at step k. The weights are a function of k, kept as a running sum (a cache
 * like nadam's product, rebuilt when the update count goes back: a rollback,
 * a resumed run), so checkpoints need nothing beyond the state arrays.
 */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def sf_hp[] = {
    {"lr", OB_HP_FLOAT, 0.0025, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 1, 0, NULL,
     "interpolation between z and the average (the momentum of the method); > 0"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty at y, added to the normalized step"},
    {"warmup_steps", OB_HP_INT, 0, 0, 1e12, 0, 0, NULL, "linear warmup of the lr over this many updates"},
    {"r", OB_HP_FLOAT, 0.0, 0, 1e3, 0, 0, NULL,
     "the averaging weight of update k is k^r lr_max^weight_lr_power (lr_max: the largest lr so far, warmup "
     "and train.schedule included)"},
    {"weight_lr_power", OB_HP_FLOAT, 2.0, 0, 1e3, 0, 0, NULL, "exponent of lr_max in that weight; 0: no lr weighting"},
};

static double sf_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status sf_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADAMW_SF;
    r->beta1 = (float)ob_optim_hp(o, "beta1");
    r->beta2 = (float)ob_optim_hp(o, "beta2");
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = 2;
    return OB_OK;
}

/* The warmup factor of update k (1-based). */
static double sf_warmup(const ob_optim *o, int64_t k)
{
    double warm = ob_optim_hp(o, "warmup_steps");
    return (double)k - 1 < warm ? (double)k / warm : 1.0;
}

/* The lr of update k: warmup, times the training schedule. */
static double sf_lr(const ob_optim *o, int64_t k)
{
    return ob_optim_lr(o, k) * sf_warmup(o, k);
}

static void sf_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    (void)lr_scale; /* the lr of update t comes from sf_lr, as the weights' do */
    const double r = ob_optim_hp(o, "r"), power = ob_optim_hp(o, "weight_lr_power");
    if (o->sf_t_cached > t || o->sf_t_cached == 0) {
        o->sf_t_cached = 0;
        o->sf_lr_max = -1.0;
        o->sf_weight_sum = 0.0;
        o->sf_weight = 0.0;
    }
    while (o->sf_t_cached < t) {
        int64_t k = ++o->sf_t_cached;
        double lr = sf_lr(o, k);
        if (lr > o->sf_lr_max) o->sf_lr_max = lr;
        o->sf_weight = pow((double)k, r) * pow(o->sf_lr_max, power);
        o->sf_weight_sum += o->sf_weight;
    }
    double lr = sf_lr(o, t), beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    double ckp1 = o->sf_weight_sum > 0 ? o->sf_weight / o->sf_weight_sum : 0.0;
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc2 = (float)(1.0 - pow(beta2, (double)t));
    s->c[0] = (float)ckp1;
    s->c[1] = (float)(lr * (beta1 * (1.0 - ckp1) - 1.0));
}

/* z starts at the parameters. */
static ob_status sf_first_step(ob_optim *o, float *params, ob_err *e)
{
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        if (gr->end == gr->begin) continue;
        OB_TRY(o->dev->ops->copy(o->dev, gr->state[0], params + gr->begin,
                                 (size_t)(gr->end - gr->begin) * sizeof(float), e));
    }
    return OB_OK;
}

/* x = lerp(y, z, 1 - 1/beta1) = (1/beta1) y + (1 - 1/beta1) z, into out. */
static ob_status sf_eval_point(ob_optim *o, const float *params, float *out, ob_err *e)
{
    const ob_backend_ops *ops = o->dev->ops;
    double w = 1.0 - 1.0 / ob_optim_hp(o, "beta1");
    OB_TRY(ops->copy(o->dev, out, params, (size_t)o->layout->total * sizeof(float), e));
    for (int g = 0; g < o->n_groups; g++) {
        ob_group *gr = &o->group[g];
        if (gr->end == gr->begin) continue;
        OB_TRY(ops->axpby(o->dev, gr->end - gr->begin, (float)w, gr->state[0], (float)(1.0 - w), out + gr->begin,
                          e));
    }
    return OB_OK;
}

const ob_optimizer_def ob_opt_adamw_sf = {
    .name = "adamw_sf",
    .summary = "schedule-free AdamW (Defazio et al. 2024; schedulefree.AdamWScheduleFree), evaluated at its average",
    .hp = sf_hp,
    .n_hp = (int)(sizeof sf_hp / sizeof sf_hp[0]),
    .state_per_param = sf_state,
    .group_rule = sf_rule,
    .group_step = sf_step,
    .first_step = sf_first_step,
    .eval_point = sf_eval_point,
    .lr_factor = sf_warmup,
};
