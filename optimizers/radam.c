/* optimizers/radam.c - torch.optim.RAdam: Adam whose adaptive step is switched
 * on, and rectified, once the variance of the adaptive lr is tractable
 * (rho_t > 5); before that an SGD-with-momentum step. The switch and the
 * rectification are per-step scalars. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def radam_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "weight decay (L2 unless decoupled)"},
    {"decoupled_weight_decay", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "AdamW-style p *= 1 - lr*wd"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double radam_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status radam_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    ob_optim_beta_rule(o, OB_RULE_RADAM, r);
    return OB_OK;
}

static void radam_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    double lr = lr_scale * ob_optim_hp(o, "lr");
    double beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    double bc1 = 1.0 - pow(beta1, (double)t), bc2 = 1.0 - pow(beta2, (double)t);
    double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    double rho_t = rho_inf - 2.0 * (double)t * pow(beta2, (double)t) / bc2;
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc1 = (float)bc1;
    s->bc2 = (float)bc2;
    if (rho_t > 5.0) {
        double rect = sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
        s->c[0] = (float)(lr * rect * sqrt(bc2) / bc1);
        s->c[1] = 1.0f;
    } else {
        s->c[0] = (float)(lr / bc1);
        s->c[1] = 0.0f;
    }
}

const ob_optimizer_def ob_opt_radam = {
    .name = "radam",
    .summary = "rectified Adam (torch.optim.RAdam)",
    .hp = radam_hp,
    .n_hp = (int)(sizeof radam_hp / sizeof radam_hp[0]),
    .state_per_param = radam_state,
    .group_rule = radam_rule,
    .group_step = radam_step,
};
