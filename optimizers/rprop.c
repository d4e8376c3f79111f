/* optimizers/rprop.c - Rprop (Riedmiller & Braun 1993) with the semantics
 * of torch.optim.Rprop: a step size per element, grown by etaplus while the
 * gradient keeps its sign, shrunk by etaminus when it flips (and that
 * element does not move on that step), within [step_size_min,
 * step_size_max]; the update is -sign(g) times the step size. lr is only
 * the initial step size: the learning-rate schedule does not reach Rprop
 * past its first step, as in torch, where Rprop fills its step sizes with
 * group['lr'] at its first step (the scheduler's lr then: lr times the
 * schedule's first factor, 1/4 of it for a warmup of 4 steps) and never reads
 * it again. A full-batch method: with noisy gradients the signs flip often. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def rprop_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-2, 0, INFINITY, 1, 0, NULL, "initial step size of every element"},
    {"etaminus", OB_HP_FLOAT, 0.5, 0, 1, 1, 1, NULL, "factor on a step size when its gradient flips sign"},
    {"etaplus", OB_HP_FLOAT, 1.2, 1, INFINITY, 1, 0, NULL, "factor on a step size while its gradient keeps sign"},
    {"step_size_min", OB_HP_FLOAT, 1e-6, 0, INFINITY, 0, 0, NULL, "smallest step size"},
    {"step_size_max", OB_HP_FLOAT, 50, 0, INFINITY, 0, 0, NULL, "largest step size"},
};

static double rprop_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status rprop_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    *r = (ob_rule){0};
    r->kind = OB_RULE_RPROP;
    r->c[0] = (float)ob_optim_hp(o, "etaplus");
    r->c[1] = (float)ob_optim_hp(o, "etaminus");
    r->c[2] = (float)ob_optim_hp(o, "step_size_min");
    r->c[3] = (float)ob_optim_hp(o, "step_size_max");
    if (r->c[2] > r->c[3])
        return ob_fail(e, OB_ERR_INPUT, "rprop.step_size_min = %g is above rprop.step_size_max = %g; set them so "
                       "that step_size_min <= step_size_max", (double)r->c[2], (double)r->c[3]);
    r->n_state = 2;
    r->state_init[1] = (float)ob_optim_lr_in_effect(o, 0); /* the lr of the first step */
    return OB_OK;
}

static void rprop_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
}

const ob_optimizer_def ob_opt_rprop = {
    .name = "rprop",
    .summary = "Rprop: per-element step sizes adapted to the gradient's sign (torch.optim.Rprop)",
    .hp = rprop_hp,
    .n_hp = (int)(sizeof rprop_hp / sizeof rprop_hp[0]),
    .state_per_param = rprop_state,
    .group_rule = rprop_rule,
    .group_step = rprop_step,
};
