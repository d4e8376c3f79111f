/* optimizers/adamw_sf.c - schedule-free AdamW (Defazio et al. 2024, "The Road
 * Less Scheduled"), with the semantics of schedulefree.AdamWScheduleFree
 * (the reference implementation): no learning-rate schedule; the parameters
 * hold y, where gradients are taken; the state holds z (the base sequence,
 * starting at the parameters) and Adam's second moment; the model is
 * evaluated at the average x = lerp(y, z, 1 - 1/beta1), which the pipeline
 * computes into a buffer of its own for every held-out evaluation (the
 * parameters are never switched in place, so evaluating changes nothing).
 *
 * The warmup, the averaging weights (ckp1), z's start and the evaluation
 * point are those of every schedule-free optimizer: schedule_free.h. The
 * lr (with its warmup) enters the weights as it is, as in schedulefree 1.4
 * (older releases scaled it by sqrt(1 - beta2^k)); the bias correction
 * divides v instead.
 */
#include <math.h>

#include "optimizers/schedule_free.h"

static const ob_hp_def sf_hp[] = {
    {"lr", OB_HP_FLOAT, 0.0025, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 1, 0, NULL,
     "interpolation between z and the average (the momentum of the method); > 0"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty at y, added to the normalized step"},
    OB_SF_HP,
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double sf_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status sf_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADAMW_SF;
    ob_rule_betas(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->n_state = 2;
    return OB_OK;
}

static void sf_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    (void)lr_scale; /* the lr of update t comes from ob_sf_lr, as the weights' do */
    double ckp1 = ob_sf_ckp1(o, t);
    double lr = ob_sf_lr(o, t), beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc2 = (float)(1.0 - pow(beta2, (double)t));
    s->c[0] = (float)ckp1;
    s->c[1] = (float)(lr * (beta1 * (1.0 - ckp1) - 1.0));
}

/* x = lerp(y, z, 1 - 1/beta1), into out. */
static ob_status sf_eval_point(ob_optim *o, const float *params, float *out, ob_err *e)
{
    return ob_sf_eval_point(o, params, out, ob_optim_hp(o, "beta1"), e);
}

const ob_optimizer_def ob_opt_adamw_sf = {
    .name = "adamw_sf",
    .summary = "schedule-free AdamW (Defazio et al. 2024; schedulefree.AdamWScheduleFree), evaluated at its average",
    .hp = sf_hp,
    .n_hp = (int)(sizeof sf_hp / sizeof sf_hp[0]),
    .state_per_param = sf_state,
    .group_rule = sf_rule,
    .group_step = sf_step,
    .first_step = ob_sf_first_step,
    .eval_point = sf_eval_point,
    .lr_factor = ob_sf_warmup,
    .host_state_bytes = sizeof(ob_sf_host),
    .host_state_rebuilds = 1,
};
