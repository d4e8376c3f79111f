/* optimizers/asgd.c - averaged SGD (Polyak & Juditsky 1992) with the
 * semantics of torch.optim.ASGD: SGD with a decaying step
 * eta_t = lr / (1 + lambd lr (t-1))^alpha and a decay p *= 1 - lambd eta_t,
 * keeping the average ax of the iterates from step t0 on (before it, ax is
 * the iterate itself). As in torch, the model is evaluated at the
 * parameters, not at ax (torch leaves it to the user to swap ax in). With a
 * schedule, eta_t uses the lr in effect at step t-1, as torch's does when a
 * scheduler steps after the optimizer. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def asgd_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-2, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"lambd", OB_HP_FLOAT, 1e-4, 0, INFINITY, 0, 0, NULL, "decay term"},
    {"alpha", OB_HP_FLOAT, 0.75, 0, INFINITY, 0, 0, NULL, "power of the step's decay"},
    {"t0", OB_HP_FLOAT, 1e6, 0, INFINITY, 0, 0, NULL, "the step from which the average is kept"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty, added to the gradient"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double asgd_state(const ob_hp_values *hp)
{
    (void)hp;
    return 1.0;
}

static ob_status asgd_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_ASGD;
    r->c[0] = (float)ob_optim_hp(o, "lambd");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = 1;
    return OB_OK;
}

static void asgd_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    const double lr = lr_scale * ob_optim_hp(o, "lr");
    /* torch computes step t's eta and mu at the end of step t-1, from the lr then */
    const double lr_prev = t > 1 ? ob_optim_lr_in_effect(o, t - 1) : lr;
    const double lambd = ob_optim_hp(o, "lambd"), k = (double)(t - 1);
    s->lr = (float)lr;
    s->t = (float)t;
    s->c[0] = (float)(lr_prev / pow(1.0 + lambd * lr_prev * k, ob_optim_hp(o, "alpha")));
    s->c[1] = (float)(1.0 / fmax(1.0, k - ob_optim_hp(o, "t0")));
}

const ob_optimizer_def ob_opt_asgd = {
    .name = "asgd",
    .summary = "ASGD: SGD with a decaying step and the average of the iterates (torch.optim.ASGD)",
    .hp = asgd_hp,
    .n_hp = (int)(sizeof asgd_hp / sizeof asgd_hp[0]),
    .state_per_param = asgd_state,
    .group_rule = asgd_rule,
    .group_step = asgd_step,
};
