/* optimizers/adam.c - torch.optim.Adam: bias-corrected moments, L2 weight decay, amsgrad. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adam_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    {"amsgrad", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "use the maximum of past second moments"},
};

static double adam_state(const ob_hp_values *hp)
{
    return ob_hp_get(hp, "amsgrad") != 0 ? 3.0 : 2.0;
}

static ob_status adam_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADAM;
    r->beta1 = (float)ob_optim_hp(o, "beta1");
    r->beta2 = (float)ob_optim_hp(o, "beta2");
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->amsgrad = ob_optim_hp(o, "amsgrad") != 0;
    r->n_state = r->amsgrad ? 3 : 2;
    return OB_OK;
}

static void adam_step(const ob_optim *o, int g, int64_t t, double lr, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc1 = (float)(1.0 - pow(ob_optim_hp(o, "beta1"), (double)t));
    s->bc2 = (float)(1.0 - pow(ob_optim_hp(o, "beta2"), (double)t));
}

const ob_optimizer_def ob_opt_adam = {
    .name = "adam",
    .summary = "Adam with L2 weight decay and optional AMSGrad (torch.optim.Adam)",
    .hp = adam_hp,
    .n_hp = (int)(sizeof adam_hp / sizeof adam_hp[0]),
    .state_per_param = adam_state,
    .route = NULL,
    .group_rule = adam_rule,
    .group_step = adam_step,
};
