/* optimizers/lars.c - LARS (You, Gitman and Ginsburg 2017, "Large Batch
 * Training of Convolutional Networks") with the semantics of timm's Lars
 * (SGD with LARS's layer-wise rate, after apex's LARC; torch.optim has
 * none). At update t, per tensor, where weight_decay != 0 or always_adapt:
 *   r = trust_coeff ||p|| / (||g|| + wd ||p|| + eps) where both norms are > 0,
 *       else 1; with trust_clip (LARC): min(r / lr, 1)
 *   d = (g + wd p) r
 * elsewhere d = g (timm's default: a tensor without weight decay is not
 * adapted; with filter_bias_and_bn, as timm's create_optimizer groups them,
 * biases, norms and 1-D tensors have none); then torch.optim.SGD's momentum on d (the first update copies d
 * into the buffer; dampening; Nesterov) and p -= lr d. g is the gradient
 * after train.clip_norm, its norm too.
 *
 * The ratio needs whole-tensor norms before any element moves, so the group
 * runs its own step over runs of same-size tensors lying at a constant
 * spacing (as Adafactor's): the norms of p and g (the backend's
 * batched_sumsq), the per-tensor step scalars on the device (trust_scale,
 * which reads the clip scale from the device statistics), then one
 * elementwise rule for the whole run. No workspace and no host
 * synchronisation; a step the guard skips changes nothing.
 */
#include <math.h>
#include <stdlib.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def lars_hp[] = {
    {"lr", OB_HP_FLOAT, 1.0, 0, INFINITY, 1, 0, NULL, "learning rate (timm's default 1: the trust ratio scales it)"},
    {"momentum", OB_HP_FLOAT, 0.0, 0, 1, 0, 1, NULL, "momentum factor"},
    {"dampening", OB_HP_FLOAT, 0.0, 0, 1, 0, 0, NULL, "dampening for momentum"},
    {"nesterov", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "Nesterov momentum (needs momentum > 0, dampening 0)"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL,
     "L2 penalty added to the gradient; 0: no trust ratio unless always_adapt"},
    {"trust_coeff", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "trust coefficient of the ratio"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the ratio's denominator"},
    {"trust_clip", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "LARC: the ratio becomes min(ratio / lr, 1)"},
    {"always_adapt", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "trust ratio also where weight_decay is 0"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay (so no trust ratio)"),
};

typedef struct lars_priv {
    ob_trust_runs tr;         /* sq: ||p||^2, then ||g||^2; tstep: c[0] = the ratio */
    ob_trust trust, trust_nd; /* trust_nd: without the decay */
    ob_rule rule_nd;          /* the group's rule without the decay */
} lars_priv;

static double lars_state(const ob_hp_values *hp)
{
    return ob_hp_get(hp, "momentum") != 0 ? 1.0 : 0.0;
}

static ob_status lars_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    return ob_sgd_momentum_rule(o, OB_RULE_LARS, r, e);
}

/* c[0] = 1: the ratio of a tensor that is not adapted. */
static void lars_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    s->lr = (float)(lr_scale * ob_optim_hp(o, "lr"));
    s->t = (float)t;
    s->c[0] = 1.0f;
}

static void lars_release(ob_optim *o, int g)
{
    lars_priv *lp = o->group[g].priv;
    if (!lp) return;
    ob_trust_runs_free(o, &lp->tr);
    free(lp);
    o->group[g].priv = NULL;
}

static ob_status lars_setup(ob_optim *o, int g, int *is_custom, ob_err *e)
{
    ob_group *gr = &o->group[g];
    *is_custom = 1;
    if (gr->end == gr->begin) return OB_OK;
    lars_priv *lp = calloc(1, sizeof *lp);
    if (!lp) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    gr->priv = lp;
    lp->trust = (ob_trust){.kind = OB_TRUST_LARS,
                           .clip = ob_optim_hp(o, "trust_clip") != 0,
                           .coeff = (float)ob_optim_hp(o, "trust_coeff"),
                           .wd = (float)ob_optim_hp(o, "weight_decay"),
                           .eps = (float)ob_optim_hp(o, "eps")};
    lp->trust_nd = lp->trust;
    lp->trust_nd.wd = 0.0f;
    lp->rule_nd = gr->rule;
    lp->rule_nd.weight_decay = 0.0f;
    /* runs as long as the backend's batches like (no workspace to bound them) */
    return ob_trust_runs_make(o, g, 0, &lp->tr, e);
}

/* One run: the norms, the ratios, the update (see the top of the file). */
static ob_status lars_run_step(ob_optim *o, ob_group *gr, const ob_run *r, float *params, const float *grads,
                               ob_err *e)
{
    lars_priv *lp = gr->priv;
    ob_device *dev = o->dev;
    const int ti = lp->tr.runs.index[r->first], nd = lp->tr.no_decay && lp->tr.no_decay[ti];
    const ob_tensor *t = &o->layout->t[ti];
    const ob_rule *rule = nd ? &lp->rule_nd : &gr->rule;
    const int64_t n = t->numel, k = r->count, sp = r->sp, rel = t->offset - gr->begin;
    float *p = params + t->offset;
    const float *g = grads + t->offset;
    float *st[OB_RULE_MAX_STATE] = {gr->rule.n_state ? gr->state[0] + rel : NULL, NULL, NULL};
    if (!(nd ? lp->tr.adapt_nd : lp->tr.adapt)) {
        const int64_t s_plain[OB_BATCH_STRIDES] = {sp, sp, sp, 0, 0, 0};
        return ob_optim_ew_batch(o, gr->step_dev, rule, p, g, st, n, k, s_plain, e);
    }
    OB_TRY(dev->ops->batched_sumsq(dev, p, (int)k, n, sp, lp->tr.sq, e));
    OB_TRY(dev->ops->batched_sumsq(dev, g, (int)k, n, sp, lp->tr.sq + k, e));
    ob_rule_step *ts = lp->tr.tstep + r->first;
    OB_TRY(dev->ops->trust_scale(dev, gr->step_dev, lp->tr.sq, (int)k, nd ? &lp->trust_nd : &lp->trust, o->stats_dev,
                                 ts, e));
    const int64_t s_run[OB_BATCH_STRIDES] = {sp, sp, sp, 0, 0, 1};
    return ob_optim_ew_batch(o, ts, rule, p, g, st, n, k, s_run, e);
}

static ob_status lars_custom_step(ob_optim *o, int g, float *params, const float *grads, ob_err *e)
{
    ob_group *gr = &o->group[g];
    lars_priv *lp = gr->priv;
    for (int i = 0; i < lp->tr.runs.n_runs; i++) OB_TRY(lars_run_step(o, gr, &lp->tr.runs.run[i], params, grads, e));
    return OB_OK;
}

const ob_optimizer_def ob_opt_lars = {
    .name = "lars",
    .summary = "LARS: SGD with a per-tensor rate trust_coeff ||p|| / (||g|| + wd ||p||) (timm Lars / apex LARC)",
    .hp = lars_hp,
    .n_hp = (int)(sizeof lars_hp / sizeof lars_hp[0]),
    .state_per_param = lars_state,
    .group_rule = lars_rule,
    .group_step = lars_step,
    .custom_setup = lars_setup,
    .custom_step = lars_custom_step,
    .custom_release = lars_release,
};
