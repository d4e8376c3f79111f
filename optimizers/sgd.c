/* optimizers/sgd.c - torch.optim.SGD: momentum, dampening, nesterov, weight decay (L2). */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def sgd_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"momentum", OB_HP_FLOAT, 0.0, 0, 1, 0, 1, NULL, "momentum factor"},
    {"dampening", OB_HP_FLOAT, 0.0, 0, 1, 0, 0, NULL, "dampening for momentum"},
    {"nesterov", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "Nesterov momentum (needs momentum > 0, dampening 0)"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double sgd_state(const ob_hp_values *hp)
{
    return ob_hp_get(hp, "momentum") != 0 ? 1.0 : 0.0;
}

ob_status ob_sgd_momentum_rule(const ob_optim *o, int kind, ob_rule *r, ob_err *e)
{
    const char *name = o->def->name;
    *r = (ob_rule){0};
    r->kind = kind;
    ob_rule_momentum(r, ob_optim_hp(o, "momentum"), ob_optim_hp(o, "dampening"));
    r->nesterov = ob_optim_hp(o, "nesterov") != 0;
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = r->momentum != 0 ? 1 : 0;
    if (r->nesterov && r->momentum <= 0)
        return ob_fail(e, OB_ERR_INPUT, "%s.nesterov = true needs %s.momentum > 0 (it is 0); give a momentum "
                       "(e.g. %s.momentum = 0.9), or leave nesterov off", name, name, name);
    if (r->nesterov && r->dampening != 0)
        return ob_fail(e, OB_ERR_INPUT, "%s.nesterov = true needs %s.dampening = 0 (it is %g); leave dampening "
                       "at 0, or nesterov off", name, name, (double)r->dampening);
    return OB_OK;
}

static ob_status sgd_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    return ob_sgd_momentum_rule(o, OB_RULE_SGD, r, e);
}

static void sgd_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

const ob_optimizer_def ob_opt_sgd = {
    .name = "sgd",
    .summary = "stochastic gradient descent with momentum (torch.optim.SGD)",
    .hp = sgd_hp,
    .n_hp = (int)(sizeof sgd_hp / sizeof sgd_hp[0]),
    .state_per_param = sgd_state,
    .group_rule = sgd_rule,
    .group_step = sgd_step,
};
