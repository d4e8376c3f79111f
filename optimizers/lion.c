/* optimizers/lion.c - Lion (Chen et al. 2023, "Symbolic Discovery of
 * Optimization Algorithms"): the sign of an interpolated momentum, decoupled
 * weight decay, one state per parameter. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def lion_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-4, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 0, NULL, "interpolation of the update direction"},
    {"beta2", OB_HP_FLOAT, 0.99, 0, 1, 0, 0, NULL, "decay of the momentum"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "decoupled weight decay: p *= 1 - lr*wd"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double lion_state(const ob_hp_values *hp)
{
    (void)hp;
    return 1.0;
}

static ob_status lion_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_LION;
    ob_rule_betas(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->decoupled_wd = 1;
    r->n_state = 1;
    return OB_OK;
}

static void lion_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

const ob_optimizer_def ob_opt_lion = {
    .name = "lion",
    .summary = "Lion: sign of interpolated momentum, decoupled weight decay (Chen et al. 2023)",
    .hp = lion_hp,
    .n_hp = (int)(sizeof lion_hp / sizeof lion_hp[0]),
    .state_per_param = lion_state,
    .group_rule = lion_rule,
    .group_step = lion_step,
};
