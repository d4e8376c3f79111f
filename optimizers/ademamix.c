/* optimizers/ademamix.c - AdEMAMix (Pagliardini, Ablin and Grangier 2024,
 * "The AdEMAMix Optimizer: Better, Faster, Older", arXiv 2409.03137) as the
 * authors' PyTorch code: Adam's bias-corrected fast EMA and second moment
 * plus alpha times a slow EMA (beta3, no bias correction), the weight decay
 * added to the update (u += wd p, then p -= lr u), and optional warmups:
 * alpha linear from 0, beta3 linear in half-life from beta1 (the paper's
 * schedulers; the authors set both to the run's length). Three state floats
 * per parameter. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def ademamix_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the fast first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"beta3", OB_HP_FLOAT, 0.9999, 0, 1, 0, 1, NULL, "decay of the slow first moment (after its warmup)"},
    {"alpha", OB_HP_FLOAT, 2.0, 0, INFINITY, 0, 0, NULL, "weight of the slow moment in the update"},
    {"beta3_warmup", OB_HP_INT, 0, 0, 1e12, 0, 0, NULL,
     "steps over which beta3 rises from beta1, linearly in half-life (0: none)"},
    {"alpha_warmup", OB_HP_INT, 0, 0, 1e12, 0, 0, NULL, "steps over which alpha rises linearly from 0 (0: none)"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL,
     "added to the update: u += wd p, so p shrinks by lr*wd*p (AdamW's decay)"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double ademamix_state(const ob_hp_values *hp)
{
    (void)hp;
    return 3.0;
}

static ob_status ademamix_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    const double beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADEMAMIX;
    ob_rule_betas(r, beta1, beta2);
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->c[0] = (float)(1.0 - beta1); /* as torch takes 1 - beta: a double, then a float */
    r->c[1] = (float)(1.0 - beta2);
    r->n_state = 3;
    return OB_OK;
}

/* The half-life of an EMA with decay beta, in steps, less one (the
 * authors' f; 1e-8 keeps beta = 0 finite), and its inverse. */
static double half_life(double beta) { return log(0.5) / log(beta + 1e-8) - 1.0; }
static double half_life_inv(double t) { return pow(0.5, 1.0 / (t + 1.0)); }

/* alpha and beta3 at step t (1-based) */
static void ademamix_schedule(int64_t t, double alpha, int64_t alpha_warmup, double beta1, double beta3,
                              int64_t beta3_warmup, double *alpha_t, double *beta3_t)
{
    *alpha_t = alpha;
    if (t < alpha_warmup) *alpha_t = (double)t / (double)alpha_warmup * alpha;
    *beta3_t = beta3;
    if (t < beta3_warmup) {
        const double a = (double)t / (double)beta3_warmup;
        *beta3_t = half_life_inv((1.0 - a) * half_life(beta1) + a * half_life(beta3));
    }
}

static void ademamix_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    const double beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    const double bc2 = 1.0 - pow(beta2, (double)t);
    double alpha_t, beta3_t;
    ademamix_schedule(t, ob_optim_hp(o, "alpha"), (int64_t)ob_optim_hp(o, "alpha_warmup"), beta1,
                      ob_optim_hp(o, "beta3"), (int64_t)ob_optim_hp(o, "beta3_warmup"), &alpha_t, &beta3_t);
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
    s->bc1 = (float)(1.0 - pow(beta1, (double)t));
    s->bc2 = (float)bc2;
    s->c[0] = (float)beta3_t;
    s->c[1] = (float)(1.0 - beta3_t);
    s->c[2] = (float)alpha_t;
    s->c[3] = (float)sqrt(bc2);
}

const ob_optimizer_def ob_opt_ademamix = {
    .name = "ademamix",
    .summary = "AdEMAMix: Adam plus alpha x a slow EMA of the gradients (Pagliardini et al. 2024)",
    .hp = ademamix_hp,
    .n_hp = (int)(sizeof ademamix_hp / sizeof ademamix_hp[0]),
    .state_per_param = ademamix_state,
    .group_rule = ademamix_rule,
    .group_step = ademamix_step,
};
