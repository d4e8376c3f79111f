/* optimizers/lamb.c - LAMB (You et al. 2020, "Large Batch Optimization for
 * Deep Learning: Training BERT in 76 Minutes", Algorithm 2) with the
 * semantics of timm's Lamb and apex's FusedLAMB (torch.optim has none).
 * At update t, per tensor:
 *   m = lerp(m, g, 1 - beta1)          (grad_averaging; else beta1 m + g)
 *   v = beta2 v + (1 - beta2) g^2
 *   u = (m / bc1) / (sqrt(v) / sqrt(bc2) + eps) + wd p
 *       bc1 = 1 - beta1^t, bc2 = 1 - beta2^t (1 and 1 without bias_correction)
 *   r = ||p|| / ||u|| where both are > 0, else 1; min(r, 1) with trust_clip
 *       (LAMBC); r = 1 for a tensor whose weight decay is 0 unless always_adapt
 *       (apex's use_nvlamb): with filter_bias_and_bn (timm's create_optimizer
 *       puts such tensors in a group without decay) biases, norms and 1-D
 *       tensors have none, and so take plain Adam-like steps, as in timm
 *   p -= lr r u
 * timm and apex also clip the global gradient norm to 1 by default
 * (max_grad_norm); here that is the pipeline's train.clip_norm (torch's
 * clip_grad_norm_, whose factor is clip / (norm + 1e-6) where theirs is
 * clip / norm), off unless set, as for every other optimizer.
 *
 * m and v are the group's two state roles. The trust ratio needs every u of
 * a tensor before any of its parameters moves, so a step is two passes over
 * each run of same-size tensors (tensors lying at a constant spacing, as
 * Adafactor's runs): the direction rule writes u into a workspace (and m, v
 * in place) and the norms of p and u are summed (elementwise_step_batch_sumsq:
 * in the same sweep on the CPU; where a backend lacks it, batched_sumsq
 * after), then the per-tensor step scalars on the device (trust_scale), and
 * the update p -= c[0] u with c[0] = lr r. Every write goes through the guard's elementwise rules, so a
 * skipped step changes nothing; no host synchronisation.
 */
#include <math.h>
#include <stdlib.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def lamb_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-6, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 1e-2, 0, INFINITY, 0, 0, NULL,
     "added to the update before the trust ratio: u += wd p"},
    {"bias_correction", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL, "divide the moments by 1 - beta^t"},
    {"grad_averaging", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL,
     "first moment m = beta1 m + (1 - beta1) g; false: beta1 m + g"},
    {"trust_clip", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "clip the trust ratio at 1 (LAMBC)"},
    {"always_adapt", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL,
     "trust ratio also where weight_decay is 0 (apex's use_nvlamb)"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay (so no trust ratio)"),
};

typedef struct lamb_priv {
    ob_trust_runs tr;    /* sq: ||p||^2, then ||u||^2; tstep: c[0] = lr r */
    ob_trust trust;      /* OB_TRUST_LAMB, LAMBC's clip */
    float *u;            /* the largest run's updates */
    ob_rule dir, dir_nd, apply; /* dir_nd: the direction without the decay */
} lamb_priv;

static double lamb_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status lamb_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_LAMB;
    ob_rule_betas(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
    r->eps = (float)ob_optim_hp(o, "eps");
    r->weight_decay = (float)ob_optim_hp(o, "weight_decay");
    r->c[0] = ob_optim_hp(o, "grad_averaging") != 0 ? 1.0f : 0.0f;
    r->n_state = 2; /* the roles m and v; the direction reads p as a third */
    return OB_OK;
}

/* c[0] = lr: the step of a tensor that is not adapted (r = 1);
 * c[1] = sqrt(bc2), in double as timm's bias_correction2 ** 0.5. */
static void lamb_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    const double lr = lr_scale * ob_optim_hp(o, "lr"), tt = (double)t;
    const int bc = ob_optim_hp(o, "bias_correction") != 0;
    const double bc1 = bc ? 1.0 - pow(ob_optim_hp(o, "beta1"), tt) : 1.0;
    const double bc2 = bc ? 1.0 - pow(ob_optim_hp(o, "beta2"), tt) : 1.0;
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc1 = (float)bc1;
    s->bc2 = (float)bc2;
    s->c[0] = (float)lr;
    s->c[1] = (float)sqrt(bc2);
}

static void lamb_release(ob_optim *o, int g)
{
    lamb_priv *lp = o->group[g].priv;
    if (!lp) return;
    ob_dev_free(o->dev, lp->u);
    ob_trust_runs_free(o, &lp->tr);
    free(lp);
    o->group[g].priv = NULL;
}

static ob_status lamb_setup(ob_optim *o, int g, int *is_custom, ob_err *e)
{
    ob_group *gr = &o->group[g];
    ob_device *dev = o->dev;
    *is_custom = 1;
    if (gr->end == gr->begin) return OB_OK;
    lamb_priv *lp = calloc(1, sizeof *lp);
    if (!lp) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    gr->priv = lp;
    lp->trust = (ob_trust){.kind = OB_TRUST_LAMB, .clip = ob_optim_hp(o, "trust_clip") != 0};
    /* A run's updates fill a workspace: the largest tensor, or up to 4M
     * floats where the group is larger (as Adafactor's). */
    OB_TRY(ob_trust_runs_make(o, g, (int64_t)1 << 22, &lp->tr, e));
    const int64_t ws = lp->tr.runs.max_floats > 16 ? lp->tr.runs.max_floats : 16;
    OB_TRY(ob_dev_alloc(dev, (size_t)ws * sizeof(float), (void **)&lp->u, e));
    lp->dir = gr->rule;
    lp->dir.n_state = 3; /* s2: the parameters, read */
    lp->dir_nd = lp->dir;
    lp->dir_nd.weight_decay = 0.0f;
    lp->apply = (ob_rule){.kind = OB_RULE_AF_APPLY, .n_state = 1}; /* p -= c[0] u */
    return OB_OK;
}

/* One run: each pass once over its tensors (see the top of the file). */
static ob_status lamb_run_step(ob_optim *o, ob_group *gr, const ob_run *r, float *params, const float *grads,
                               ob_err *e)
{
    lamb_priv *lp = gr->priv;
    ob_device *dev = o->dev;
    const int ti = lp->tr.runs.index[r->first], nd = lp->tr.no_decay && lp->tr.no_decay[ti];
    const ob_tensor *t = &o->layout->t[ti];
    const int64_t n = t->numel, k = r->count, sp = r->sp, rel = t->offset - gr->begin;
    float *p = params + t->offset, *u = lp->u;
    const float *g = grads + t->offset;
    /* strides: the target, g, three state roles, the step */
    const int64_t s_dir[OB_BATCH_STRIDES] = {n, sp, sp, sp, sp, 0};
    float *ms[OB_RULE_MAX_STATE] = {gr->state[0] + rel, gr->state[1] + rel, p};
    const ob_rule *dir = nd ? &lp->dir_nd : &lp->dir;
    float *us[OB_RULE_MAX_STATE] = {u, NULL, NULL};
    if (!(nd ? lp->tr.adapt_nd : lp->tr.adapt)) {
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, dir, u, g, ms, n, k, s_dir, e));
        const int64_t s_apply[OB_BATCH_STRIDES] = {sp, sp, n, 0, 0, 0};
        return ob_optim_ew_batch(o, gr->step_dev, &lp->apply, p, g, us, n, k, s_apply, e);
    }
    /* u, then ||p||^2 and ||u||^2 per tensor: in the same sweep where the
     * backend can (the CPU's, while each chunk is in cache) */
    if (dev->ops->elementwise_step_batch_sumsq) {
        OB_TRY(dev->ops->elementwise_step_batch_sumsq(dev, dir, gr->step_dev, o->stats_dev, u, g, ms, n, k, s_dir,
                                                      lp->tr.sq, e));
    } else {
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, dir, u, g, ms, n, k, s_dir, e));
        OB_TRY(dev->ops->batched_sumsq(dev, p, (int)k, n, sp, lp->tr.sq, e));
        OB_TRY(dev->ops->batched_sumsq(dev, u, (int)k, n, n, lp->tr.sq + k, e));
    }
    ob_rule_step *ts = lp->tr.tstep + r->first;
    OB_TRY(dev->ops->trust_scale(dev, gr->step_dev, lp->tr.sq, (int)k, &lp->trust, NULL, ts, e));
    const int64_t s_apply[OB_BATCH_STRIDES] = {sp, sp, n, 0, 0, 1};
    return ob_optim_ew_batch(o, ts, &lp->apply, p, g, us, n, k, s_apply, e);
}

static ob_status lamb_custom_step(ob_optim *o, int g, float *params, const float *grads, ob_err *e)
{
    ob_group *gr = &o->group[g];
    lamb_priv *lp = gr->priv;
    for (int i = 0; i < lp->tr.runs.n_runs; i++) OB_TRY(lamb_run_step(o, gr, &lp->tr.runs.run[i], params, grads, e));
    return OB_OK;
}

const ob_optimizer_def ob_opt_lamb = {
    .name = "lamb",
    .summary = "LAMB: Adam's update scaled per tensor by ||p|| / ||u|| (timm Lamb / apex FusedLAMB)",
    .hp = lamb_hp,
    .n_hp = (int)(sizeof lamb_hp / sizeof lamb_hp[0]),
    .state_per_param = lamb_state,
    .group_rule = lamb_rule,
    .group_step = lamb_step,
    .custom_setup = lamb_setup,
    .custom_step = lamb_custom_step,
    .custom_release = lamb_release,
};
