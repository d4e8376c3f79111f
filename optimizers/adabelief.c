/* optimizers/adabelief.c - AdaBelief (Zhuang et al., NeurIPS 2020, "AdaBelief
 * Optimizer: Adapting Stepsizes by the Belief in Observed Gradients") as the
 * authors' adabelief-pytorch 0.2 (class AdaBelief), with its defaults: Adam
 * whose second moment is the EMA of (g - m)^2 plus eps, eps 1e-16, decoupled
 * weight decay, and RAdam's rectification (with the package's threshold,
 * N_sma >= 5, and its SGD step before it). The switch, the rectification and
 * the bias corrections are per-step scalars, computed in double in the
 * package's order. Settings the package would ignore (amsgrad with the
 * rectified step, fixed_decay without weight_decouple, degenerated_to_sgd
 * without rectify) are refused rather than ignored. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adabelief_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment (the EMA of (g - m)^2)"},
    {"eps", OB_HP_FLOAT, 1e-16, 0, INFINITY, 0, 0, NULL,
     "added to the second moment at every step and to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL,
     "weight decay (decoupled unless weight_decouple is off)"},
    {"weight_decouple", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL,
     "decoupled decay p *= 1 - lr*wd (AdamW's); off: L2, g += wd*p"},
    {"fixed_decay", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "with weight_decouple: p *= 1 - wd, without the lr"},
    {"rectify", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL,
     "RAdam's rectified step once N_sma >= 5; before it the step of degenerated_to_sgd"},
    {"degenerated_to_sgd", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL,
     "with rectify: an SGD-with-momentum step while N_sma < 5 (off: no step then)"},
    {"amsgrad", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL,
     "divide by the maximum of past second moments (needs rectify off)"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double adabelief_state(const ob_hp_values *hp)
{
    return ob_hp_get(hp, "amsgrad") != 0 ? 3.0 : 2.0;
}

static ob_status adabelief_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    const char *name = o->def->name;
    const int rectify = ob_optim_hp(o, "rectify") != 0, amsgrad = ob_optim_hp(o, "amsgrad") != 0,
              decouple = ob_optim_hp(o, "weight_decouple") != 0, fixed = ob_optim_hp(o, "fixed_decay") != 0,
              to_sgd = ob_optim_hp(o, "degenerated_to_sgd") != 0;
    /* the package takes each of these and does nothing with it */
    if (amsgrad && rectify)
        return ob_fail(e, OB_ERR_INPUT, "%s.amsgrad = true needs %s.rectify = false: the rectified step divides by "
                       "the second moment, not by its maximum (adabelief-pytorch keeps the maximum and never uses "
                       "it); set %s.rectify = false, or leave amsgrad off", name, name, name);
    if (fixed && !decouple)
        return ob_fail(e, OB_ERR_INPUT, "%s.fixed_decay = true needs %s.weight_decouple = true (an L2 penalty has "
                       "no lr to leave out); set weight_decouple, or leave fixed_decay off", name, name);
    if (!to_sgd && !rectify)
        return ob_fail(e, OB_ERR_INPUT, "%s.degenerated_to_sgd = false needs %s.rectify = true (without the "
                       "rectification there is no SGD phase); leave degenerated_to_sgd on, or set rectify",
                       name, name);
    const double wd = ob_optim_hp(o, "weight_decay");
    ob_optim_beta_rule(o, OB_RULE_ADABELIEF, r);
    r->decoupled_wd = decouple;
    r->amsgrad = amsgrad;
    r->n_state = amsgrad ? 3 : 2;
    if (fixed) {
        r->flags = OB_RULE_FIXED_DECAY;
        r->c[0] = (float)(1.0 - wd); /* the package's factor: a double, then a float */
    }
    return OB_OK;
}

static void adabelief_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    const double lr = lr_scale * ob_optim_hp(o, "lr");
    const double beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    const double beta2_t = pow(beta2, (double)t), bc1 = 1.0 - pow(beta1, (double)t), bc2 = 1.0 - beta2_t;
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc1 = (float)bc1;
    s->bc2 = (float)bc2;
    s->c[1] = 1.0f; /* the adaptive step */
    s->c[2] = 1.0f; /* a move */
    if (ob_optim_hp(o, "rectify") == 0) {
        s->c[0] = (float)(lr / bc1);
        s->c[3] = (float)sqrt(bc2);
        return;
    }
    /* the rectification as the package computes it, in its order (Python
     * floats are doubles), so that the switch at N_sma >= 5 falls on the
     * same step */
    const double n_max = 2.0 / (1.0 - beta2) - 1.0;
    const double n_sma = n_max - 2.0 * (double)t * beta2_t / (1.0 - beta2_t);
    s->c[3] = 1.0f; /* its denominator is sqrt(s) + eps, the bias correction in the step size */
    if (n_sma >= 5.0) {
        const double step = sqrt((1.0 - beta2_t) * (n_sma - 4.0) / (n_max - 4.0) * (n_sma - 2.0) / n_sma * n_max /
                                 (n_max - 2.0)) /
                            bc1;
        s->c[0] = (float)(step * lr);
    } else {
        s->c[1] = 0.0f;
        if (ob_optim_hp(o, "degenerated_to_sgd") != 0) {
            s->c[0] = (float)(1.0 / bc1 * lr);
        } else {
            s->c[0] = 0.0f;
            s->c[2] = 0.0f;
        }
    }
}

const ob_optimizer_def ob_opt_adabelief = {
    .name = "adabelief",
    .summary = "AdaBelief: Adam with the EMA of (g - m)^2 as its second moment, rectified (adabelief-pytorch 0.2)",
    .hp = adabelief_hp,
    .n_hp = (int)(sizeof adabelief_hp / sizeof adabelief_hp[0]),
    .state_per_param = adabelief_state,
    .group_rule = adabelief_rule,
    .group_step = adabelief_step,
};
