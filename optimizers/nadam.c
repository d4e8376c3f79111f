/* optimizers/nadam.c - torch.optim.NAdam: Adam with Nesterov momentum and the
 * momentum_decay schedule mu_t = beta1 (1 - 0.5 * 0.96^(t psi)). The running
 * product of the mu_t is host arithmetic once per step, in the optimizer's
 * host state (struct nadam_host: a cache of a function of t, rebuilt from
 * update 1 when t goes back, or from zeros).
 *
 * PyTorch changed NAdam in 2.0: up to 1.13 the second step size divides by
 * 1 - prod_t * mu_t * mu_{t+1} (mu_t counted twice), from 2.0 on (and in
 * Dozat 2016) by 1 - prod_t * mu_{t+1}. formula=torch1.13 (the default, what
 * the conformance cases were computed with) or torch2 picks one. */
#include <math.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def nadam_hp[] = {
    {"lr", OB_HP_FLOAT, 2e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "weight decay (L2 unless decoupled)"},
    {"momentum_decay", OB_HP_FLOAT, 4e-3, 0, INFINITY, 0, 0, NULL, "psi of the momentum schedule"},
    {"decoupled_weight_decay", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "AdamW-style p *= 1 - lr*wd"},
    {"formula", OB_HP_ENUM, 0, 0, 1, 0, 0, "torch1.13|torch2",
     "mu_product_next = prod_t mu_t mu_t+1 (PyTorch <= 1.13) or prod_t mu_t+1 (PyTorch >= 2.0)"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

static double nadam_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

/* The host state (ob_optim.host): the product of mu_1 .. mu_t_cached
 * (t_cached 0: nothing cached). Checkpointed as "optim.host". */
typedef struct nadam_host {
    int64_t t_cached;
    double product;
} nadam_host;

static ob_status nadam_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    ob_optim_beta_rule(o, OB_RULE_NADAM, r);
    return OB_OK;
}

static double nadam_mu(double beta1, double psi, int64_t t)
{
    return beta1 * (1.0 - 0.5 * pow(0.96, (double)t * psi));
}

static void nadam_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    double lr = lr_scale * ob_optim_hp(o, "lr");
    double beta1 = ob_optim_hp(o, "beta1"), beta2 = ob_optim_hp(o, "beta2");
    double psi = ob_optim_hp(o, "momentum_decay");
    nadam_host *h = o->host;
    if (h->t_cached > t || h->t_cached == 0) {
        h->t_cached = 0;
        h->product = 1.0;
    }
    while (h->t_cached < t) h->product *= nadam_mu(beta1, psi, ++h->t_cached);
    double mu = nadam_mu(beta1, psi, t), mu_next = nadam_mu(beta1, psi, t + 1);
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc2 = (float)(1.0 - pow(beta2, (double)t));
    s->c[0] = (float)(lr * (1.0 - mu) / (1.0 - h->product));
    double prod_next = h->product * mu_next * (ob_optim_hp(o, "formula") == 0 ? mu : 1.0);
    s->c[1] = (float)(lr * mu_next / (1.0 - prod_next));
}

const ob_optimizer_def ob_opt_nadam = {
    .name = "nadam",
    .summary = "Adam with Nesterov momentum and a momentum schedule (torch.optim.NAdam)",
    .hp = nadam_hp,
    .n_hp = (int)(sizeof nadam_hp / sizeof nadam_hp[0]),
    .state_per_param = nadam_state,
    .group_rule = nadam_rule,
    .group_step = nadam_step,
    .host_state_bytes = sizeof(nadam_host),
    .host_state_rebuilds = 1,
};
