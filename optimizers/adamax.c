/* optimizers/adamax.c - torch.optim.Adamax: Adam with the infinity norm
 * u = max(beta2 u, |g| + eps) in place of the second moment. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adamax_hp[] = {
    {"lr", OB_HP_FLOAT, 2e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the infinity norm"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to |g| in the infinity norm"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double adamax_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status adamax_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    ob_optim_beta_rule(o, OB_RULE_ADAMAX, r);
    return OB_OK;
}

static void adamax_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
    s->bc1 = (float)(1.0 - pow(ob_optim_hp(o, "beta1"), (double)t));
}

const ob_optimizer_def ob_opt_adamax = {
    .name = "adamax",
    .summary = "Adam with the infinity norm (torch.optim.Adamax)",
    .hp = adamax_hp,
    .n_hp = (int)(sizeof adamax_hp / sizeof adamax_hp[0]),
    .state_per_param = adamax_state,
    .group_rule = adamax_rule,
    .group_step = adamax_step,
};
