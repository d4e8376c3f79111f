/* optimizers/rmsprop.c - torch.optim.RMSprop: g / (sqrt(running g^2) + eps),
 * optionally centered (minus the running mean squared) and with momentum. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def rmsprop_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-2, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"alpha", OB_HP_FLOAT, 0.99, 0, 1, 0, 0, NULL, "decay of the running averages"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    {"momentum", OB_HP_FLOAT, 0.0, 0, 1, 0, 1, NULL, "momentum factor"},
    {"centered", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "normalize by the estimated variance"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double rmsprop_state(const ob_hp_values *hp)
{
    return 1.0 + (ob_hp_get(hp, "centered") != 0) + (ob_hp_get(hp, "momentum") != 0);
}

static ob_status rmsprop_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_RMSPROP;
    ob_rule_betas(r, 0, ob_optim_hp(o, "alpha"));
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    ob_rule_momentum(r, ob_optim_hp(o, "momentum"), 0);
    r->flags = ob_optim_hp(o, "centered") != 0 ? OB_RULE_CENTERED : 0;
    r->n_state = (int)rmsprop_state(&o->hp);
    return OB_OK;
}

static void rmsprop_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

const ob_optimizer_def ob_opt_rmsprop = {
    .name = "rmsprop",
    .summary = "RMSprop, optionally centered and with momentum (torch.optim.RMSprop)",
    .hp = rmsprop_hp,
    .n_hp = (int)(sizeof rmsprop_hp / sizeof rmsprop_hp[0]),
    .state_per_param = rmsprop_state,
    .group_rule = rmsprop_rule,
    .group_step = rmsprop_step,
};
