/* optimizers/adagrad.c - torch.optim.Adagrad: per-element step lr / sqrt(sum g^2),
 * with lr_decay and an initial accumulator value. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adagrad_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-2, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"lr_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "lr / (1 + (t-1) lr_decay)"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    {"initial_accumulator_value", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL,
     "starting value of the sum of squares"},
    {"eps", OB_HP_FLOAT, 1e-10, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double adagrad_state(const ob_hp_values *hp)
{
    (void)hp;
    return 1.0;
}

static ob_status adagrad_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADAGRAD;
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = 1;
    r->state_init[0] = (float)ob_optim_hp(o, "initial_accumulator_value");
    return OB_OK;
}

static void adagrad_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    double lr = lr_scale * ob_optim_hp(o, "lr");
    s->lr = (float)lr;
    s->t = (float)t;
    s->c[0] = (float)(lr / (1.0 + (double)(t - 1) * ob_optim_hp(o, "lr_decay")));
}

const ob_optimizer_def ob_opt_adagrad = {
    .name = "adagrad",
    .summary = "Adagrad with lr decay and an initial accumulator (torch.optim.Adagrad)",
    .hp = adagrad_hp,
    .n_hp = (int)(sizeof adagrad_hp / sizeof adagrad_hp[0]),
    .state_per_param = adagrad_state,
    .group_rule = adagrad_rule,
    .group_step = adagrad_step,
};
