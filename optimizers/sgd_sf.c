/* optimizers/sgd_sf.c - schedule-free SGD (Defazio et al. 2024, "The Road
 * Less Scheduled"), with the semantics of schedulefree.SGDScheduleFree (the
 * authors' package, 1.4): no learning-rate schedule; the parameters hold y,
 * where gradients are taken; the state holds z (the base sequence, starting
 * at the parameters); the model is evaluated at the average
 * x = lerp(y, z, 1 - 1/momentum), computed into a buffer of its own for
 * every held-out evaluation (the parameters are never switched in place).
 *
 * Update k: u = g + weight_decay y (L2 at y); y = lerp(y, z, ckp1) +
 * lr_k (momentum (1 - ckp1) - 1) u; z = z - lr_k u. The warmup (lr_k), the
 * averaging weights (ckp1, with lr_k as it is), z's start and the
 * evaluation point are adamw_sf's: schedule_free.h.
 */
#include <math.h>

#include "optimizers/schedule_free.h"

static const ob_hp_def sgd_sf_hp[] = {
    {"lr", OB_HP_FLOAT, 1.0, 0, INFINITY, 1, 0, NULL, "learning rate (the package's default, 1.0)"},
    {"momentum", OB_HP_FLOAT, 0.9, 0, 1, 1, 1, NULL,
     "interpolation between z and the average (the momentum of the method); 0 < momentum < 1"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty at y, added to the gradient"},
    OB_SF_HP,
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double sgd_sf_state(const ob_hp_values *hp)
{
    (void)hp;
    return 1.0;
}

static ob_status sgd_sf_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_SGD_SF;
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = 1;
    return OB_OK;
}

static void sgd_sf_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    (void)lr_scale; /* the lr of update t comes from ob_sf_lr, as the weights' do */
    double ckp1 = ob_sf_ckp1(o, t);
    double lr = ob_sf_lr(o, t), momentum = ob_optim_hp(o, "momentum");
    s->lr = (float)lr;
    s->t = (float)t;
    s->c[0] = (float)ckp1;
    s->c[1] = (float)(lr * (momentum * (1.0 - ckp1) - 1.0));
}

/* x = lerp(y, z, 1 - 1/momentum), into out. */
static ob_status sgd_sf_eval_point(ob_optim *o, const float *params, float *out, ob_err *e)
{
    return ob_sf_eval_point(o, params, out, ob_optim_hp(o, "momentum"), e);
}

const ob_optimizer_def ob_opt_sgd_sf = {
    .name = "sgd_sf",
    .summary = "schedule-free SGD (Defazio et al. 2024; schedulefree.SGDScheduleFree), evaluated at its average",
    .hp = sgd_sf_hp,
    .n_hp = (int)(sizeof sgd_sf_hp / sizeof sgd_sf_hp[0]),
    .state_per_param = sgd_sf_state,
    .group_rule = sgd_sf_rule,
    .group_step = sgd_sf_step,
    .first_step = ob_sf_first_step,
    .eval_point = sgd_sf_eval_point,
    .lr_factor = ob_sf_warmup,
    .host_state_bytes = sizeof(ob_sf_host),
    .host_state_rebuilds = 1,
};
