/* optimizers/adam.c - torch.optim.Adam (L2 weight decay) and torch.optim.AdamW
 * (decoupled weight decay), both with amsgrad; the helpers the AdamW group
 * of the hybrid optimizers uses too. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adam_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    {"amsgrad", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "use the maximum of past second moments"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static const ob_hp_def adamw_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 1e-2, 0, INFINITY, 0, 0, NULL, "decoupled weight decay: p *= 1 - lr*wd"},
    {"amsgrad", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "use the maximum of past second moments"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

void ob_adam_rule(ob_rule *r, double beta1, double beta2, double eps, double wd, int decoupled, int amsgrad)
{
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADAM;
    ob_rule_betas(r, beta1, beta2);
    r->eps = (float)eps;
    r->weight_decay = (float)wd;
    r->decoupled_wd = decoupled;
    r->amsgrad = amsgrad;
    r->n_state = amsgrad ? 3 : 2;
}

void ob_adam_step(ob_rule_step *s, double lr, int64_t t, double beta1, double beta2)
{
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc1 = (float)(1.0 - pow(beta1, (double)t));
    s->bc2 = (float)(1.0 - pow(beta2, (double)t));
}

static double adam_state(const ob_hp_values *hp)
{
    return ob_hp_get(hp, "amsgrad") != 0 ? 3.0 : 2.0;
}

static ob_status adam_group_rule(const ob_optim *o, int decoupled, ob_rule *r)
{
    ob_adam_rule(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"), ob_optim_hp(o, "eps"),
                 ob_optim_hp(o, "weight_decay"), decoupled, ob_optim_hp(o, "amsgrad") != 0);
    return OB_OK;
}

static ob_status adam_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    return adam_group_rule(o, 0, r);
}

static ob_status adamw_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    return adam_group_rule(o, 1, r);
}

static void adam_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    ob_adam_step(s, lr_scale * ob_optim_hp(o, "lr"), t, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
}

const ob_optimizer_def ob_opt_adam = {
    .name = "adam",
    .summary = "Adam with L2 weight decay and optional AMSGrad (torch.optim.Adam)",
    .hp = adam_hp,
    .n_hp = (int)(sizeof adam_hp / sizeof adam_hp[0]),
    .state_per_param = adam_state,
    .group_rule = adam_rule,
    .group_step = adam_step,
};

const ob_optimizer_def ob_opt_adamw = {
    .name = "adamw",
    .summary = "Adam with decoupled weight decay, optional AMSGrad (torch.optim.AdamW)",
    .hp = adamw_hp,
    .n_hp = (int)(sizeof adamw_hp / sizeof adamw_hp[0]),
    .state_per_param = adam_state,
    .group_rule = adamw_rule,
    .group_step = adam_step,
};
