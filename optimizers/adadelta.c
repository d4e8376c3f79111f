/* optimizers/adadelta.c - torch.optim.Adadelta: step sqrt(acc + eps) / sqrt(sq + eps) * g
 * with running averages of g^2 and of the squared steps (decay rho). */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adadelta_hp[] = {
    {"lr", OB_HP_FLOAT, 1.0, 0, INFINITY, 1, 0, NULL, "learning rate (scales the step)"},
    {"rho", OB_HP_FLOAT, 0.9, 0, 1, 0, 0, NULL, "decay of the running averages"},
    {"eps", OB_HP_FLOAT, 1e-6, 0, INFINITY, 0, 0, NULL, "added inside the square roots"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double adadelta_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status adadelta_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADADELTA;
    ob_rule_betas(r, 0, ob_optim_hp(o, "rho"));
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = 2;
    return OB_OK;
}

static void adadelta_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

const ob_optimizer_def ob_opt_adadelta = {
    .name = "adadelta",
    .summary = "Adadelta (torch.optim.Adadelta)",
    .hp = adadelta_hp,
    .n_hp = (int)(sizeof adadelta_hp / sizeof adadelta_hp[0]),
    .state_per_param = adadelta_state,
    .group_rule = adadelta_rule,
    .group_step = adadelta_step,
};
