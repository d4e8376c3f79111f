/* optimizers/adafactor.c - Adafactor (Shazeer & Stern 2018) with the
 * semantics of torch.optim.Adafactor (PyTorch >= 2.5; maximize is not
 * offered). At update t, per tensor:
 *   1 - beta2_t = t^beta2_decay,  rho_t = min(lr, 1/sqrt(t))
 *   alpha = max(eps2, RMS(p)) rho_t          (RMS of p before the decay)
 *   p *= 1 - lr wd
 *   a tensor of 2 or more dimensions, as (batch, R, C) over its last two:
 *     row = lerp(row, mean_c g^2, 1 - beta2_t)   (batch, R)
 *     col = lerp(col, mean_r g^2, 1 - beta2_t)   (batch, C)
 *     v = row col^T / max(mean_r row, eps1)
 *   a vector: v = lerp(v, g^2, 1 - beta2_t)
 *   u = g / sqrt(max(v, eps1^2)),  denom = max(1, RMS(u) / d)
 *   p -= alpha / denom u
 * The second moments live in the group's aux arena (batch (R + C) floats
 * for a matrix or conv kernel, numel for a vector): checkpointed and rolled
 * back like the roles, written only through elementwise rules so that a
 * step the guard skips changes nothing. The per-tensor scale alpha / denom
 * is computed on the device (the norms by the backend's batched_sumsq, the
 * scale by its adafactor_scale): no host synchronisation.
 *
 * Tensors of one shape whose parameters and second moments lie at constant
 * spacings (a model's layers, or tensors stored one after another) form a
 * run, stepped together: each op above runs once over the whole run (the
 * elementwise ones through elementwise_step_batch, the sums and the
 * preconditioning over the run's gradients gathered in the workspace), not
 * once per tensor. Every tensor still gets exactly its own values. With
 * filter_bias_and_bn a run holds tensors of one kind: decayed, or (biases,
 * norms, 1-D tensors) not.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def af_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-2, 0, INFINITY, 1, 0, NULL, "the largest relative step: rho_t = min(lr, 1/sqrt(t))"},
    {"beta2_decay", OB_HP_FLOAT, -0.8, -INFINITY, 0, 0, 0, NULL, "1 - beta2_t = t^beta2_decay"},
    {"eps1", OB_HP_FLOAT, FLT_EPSILON, 0, INFINITY, 0, 0, NULL,
     "floor of the second moment (squared) and of the row mean; torch's None: float32's eps"},
    {"eps2", OB_HP_FLOAT, 1e-3, 0, INFINITY, 0, 0, NULL, "floor of RMS(p) in the step size"},
    {"d", OB_HP_FLOAT, 1.0, 1, INFINITY, 0, 0, NULL, "clipping threshold of RMS(u)"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "decoupled, before the update: p *= 1 - lr*wd"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
};

typedef struct af_tensor {
    int index;             /* in the layout */
    int factored;          /* 2 or more dimensions */
    int no_decay;          /* filter_bias_and_bn took its weight decay */
    int64_t batch, R, C;   /* factored: the last two dimensions and the product of the others */
    int64_t v_off, c_off;  /* in aux: variance, or row (batch R) and col (batch C) */
} af_tensor;

typedef struct af_priv {
    af_tensor *t;          /* run by run */
    int n;
    ob_run *run;
    int n_runs;
    float *w[4];           /* scratch: the run's gradients, row and column means, u */
    float *sq;             /* per tensor of a run: ||p||^2, then ||u||^2 */
    ob_rule_step *tstep;   /* per tensor: the group's step with its scale */
    ob_rule copy_clip, copy, var_sq, var, vec, apply, apply_nd; /* apply_nd: without the decay */
} af_priv;

static ob_status af_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)o;
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_AF_APPLY;
    return OB_OK;
}

static void af_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    const double lr = lr_scale * ob_optim_hp(o, "lr"), tt = (double)t;
    const double rho = fmin(lr, 1.0 / sqrt(tt));
    s->lr = (float)lr;
    s->t = (float)t;
    s->c[1] = (float)pow(tt, ob_optim_hp(o, "beta2_decay"));
    s->c[2] = (float)rho;
    s->c[3] = (float)ob_optim_hp(o, "eps2");
}

static void af_release(ob_optim *o, int g)
{
    af_priv *ap = o->group[g].priv;
    if (!ap) return;
    for (int i = 0; i < 4; i++) ob_dev_free(o->dev, ap->w[i]);
    ob_dev_free(o->dev, ap->sq);
    ob_dev_free(o->dev, ap->tstep);
    free(ap->t);
    free(ap->run);
    free(ap);
    o->group[g].priv = NULL;
}

static int af_same_shape(const void *ctx, int i, int j)
{
    const af_priv *ap = ((const void *const *)ctx)[0];
    const ob_layout *l = ((const void *const *)ctx)[1];
    const af_tensor *a = &ap->t[i], *b = &ap->t[j];
    if (a->factored != b->factored || a->no_decay != b->no_decay) return 0;
    if (a->factored) return a->batch == b->batch && a->R == b->R && a->C == b->C;
    return l->t[a->index].numel == l->t[b->index].numel;
}

/* (the largest per-run workspaces hold the run's gradients and u: numel each) */
static void af_where(const void *ctx, int i, int64_t *off, int64_t *aux, int64_t *size)
{
    const af_priv *ap = ((const void *const *)ctx)[0];
    const ob_layout *l = ((const void *const *)ctx)[1];
    *off = l->t[ap->t[i].index].offset;
    *aux = ap->t[i].v_off;
    *size = l->t[ap->t[i].index].numel;
}

/* Reorder ap->t run by run (ob_make_runs; the spacing in aux is that of the
 * second moments). ws: the largest run's gradients, row means and column
 * means; *max_count its most tensors. */
static ob_status af_make_runs(const ob_device *dev, af_priv *ap, const ob_layout *l, int64_t budget, int64_t ws[3],
                              int *max_count, ob_err *e)
{
    ap->run = malloc((size_t)(ap->n ? ap->n : 1) * sizeof *ap->run);
    if (!ap->run) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const void *ctx[2] = {ap, l};
    const ob_run_items items = {ap->t, sizeof *ap->t, ap->n, ctx, af_same_shape, af_where};
    OB_TRY(ob_make_runs(dev, &items, budget, ap->run, &ap->n_runs, e));
    for (int ri = 0; ri < ap->n_runs; ri++) {
        const ob_run *r = &ap->run[ri];
        const af_tensor *t = &ap->t[r->first];
        const int64_t k = r->count;
        if (k * l->t[t->index].numel > ws[0]) ws[0] = k * l->t[t->index].numel;
        if (t->factored && k * t->batch * t->R > ws[1]) ws[1] = k * t->batch * t->R;
        if (t->factored && k * t->batch * t->C > ws[2]) ws[2] = k * t->batch * t->C;
        if (r->count > *max_count) *max_count = r->count;
    }
    return OB_OK;
}

static ob_status af_setup(ob_optim *o, int g, int *is_custom, ob_err *e)
{
    ob_group *gr = &o->group[g];
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    const ob_layout *l = o->layout;
    *is_custom = 1;
    if (gr->end == gr->begin) return OB_OK;
    OB_TRY(OB_REQUIRE(dev, batched_sumsq, e));
    OB_TRY(OB_REQUIRE(dev, rows_sumsq, e));
    OB_TRY(OB_REQUIRE(dev, cols_sumsq, e));
    OB_TRY(OB_REQUIRE(dev, adafactor_precond, e));
    OB_TRY(OB_REQUIRE(dev, adafactor_scale, e));
    af_priv *ap = calloc(1, sizeof *ap);
    if (!ap) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    gr->priv = ap;
    int n = 0;
    for (int i = 0; i < l->n; i++) n += l->t[i].group == g;
    ap->t = calloc((size_t)(n ? n : 1), sizeof *ap->t);
    if (!ap->t) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    int64_t aux = 0, max_numel = 16;
    for (int i = 0; i < l->n; i++) {
        const ob_tensor *t = &l->t[i];
        if (t->group != g) continue;
        af_tensor *at = &ap->t[ap->n++];
        at->index = i;
        at->no_decay = ob_optim_filters_decay(o) && ob_no_decay_tensor(t);
        if (t->numel > max_numel) max_numel = t->numel;
        at->factored = t->ndim >= 2;
        if (at->factored) {
            at->R = t->shape[t->ndim - 2];
            at->C = t->shape[t->ndim - 1];
            at->batch = t->numel / (at->R * at->C);
            at->v_off = aux;
            aux += (at->batch * at->R + 15) / 16 * 16;
            at->c_off = aux;
            aux += (at->batch * at->C + 15) / 16 * 16;
        } else {
            at->v_off = aux;
            at->c_off = -1;
            aux += (t->numel + 15) / 16 * 16;
        }
    }
    gr->aux_floats = aux;
    OB_TRY(ob_dev_alloc(dev, (size_t)(aux ? aux : 1) * sizeof(float), (void **)&gr->aux, e));
    OB_TRY(ops->fill(dev, gr->aux, 0.0f, aux, e));
    /* A run holds at most a workspace of floats: the largest tensor, or up
     * to 4M floats where the group is larger. */
    int64_t budget = gr->end - gr->begin < ((int64_t)1 << 22) ? gr->end - gr->begin : (int64_t)1 << 22;
    if (budget < max_numel) budget = max_numel;
    int64_t ws[3] = {16, 16, 16}; /* gradients and u, row means, column means */
    int max_count = 1;
    OB_TRY(af_make_runs(o->dev, ap, l, budget, ws, &max_count, e));
    for (int i = 0; i < 4; i++) {
        int64_t nf = i == 1 ? ws[1] : i == 2 ? ws[2] : ws[0];
        OB_TRY(ob_dev_alloc(dev, (size_t)nf * sizeof(float), (void **)&ap->w[i], e));
    }
    OB_TRY(ob_dev_alloc(dev, (size_t)(2 * max_count) * sizeof(float), (void **)&ap->sq, e));
    OB_TRY(ob_dev_alloc(dev, (size_t)(ap->n ? ap->n : 1) * sizeof(ob_rule_step), (void **)&ap->tstep, e));
    const float eps1 = (float)ob_optim_hp(o, "eps1");
    ap->copy_clip = (ob_rule){.kind = OB_RULE_COPY, .c = {1.0f}};
    ap->copy = (ob_rule){.kind = OB_RULE_COPY};
    ap->var_sq = (ob_rule){.kind = OB_RULE_AF_VAR, .c = {1.0f}};
    ap->var = (ob_rule){.kind = OB_RULE_AF_VAR};
    ap->vec = (ob_rule){.kind = OB_RULE_AF_VEC, .n_state = 1, .eps = eps1};
    ap->apply = (ob_rule){.kind = OB_RULE_AF_APPLY, .n_state = 1,
                          .weight_decay = (float)ob_optim_hp(o, "weight_decay")};
    ap->apply_nd = ap->apply;
    ap->apply_nd.weight_decay = 0.0f;
    return OB_OK;
}

/* One run: every op once over its tensors (see the top of the file). */
static ob_status af_run_step(ob_optim *o, ob_group *gr, const ob_run *r, float *params, const float *grads,
                             ob_err *e)
{
    af_priv *ap = gr->priv;
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    const float eps1 = (float)ob_optim_hp(o, "eps1"), d = (float)ob_optim_hp(o, "d");
    const af_tensor *at = &ap->t[r->first];
    const ob_tensor *t = &o->layout->t[at->index];
    const int64_t n = t->numel, k = r->count, sp = r->sp, sa = r->sa;
    float *p = params + t->offset, *gc = ap->w[0], *u = ap->w[3], *v = gr->aux + at->v_off;
    const float *g = grads + t->offset;
    /* strides: p, g, three state roles, the step */
    const int64_t s_clip[OB_BATCH_STRIDES] = {n, sp, 0, 0, 0, 0};
    float *none[OB_RULE_MAX_STATE] = {NULL, NULL, NULL};
    OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->copy_clip, gc, g, none, n, k, s_clip, e));
    OB_TRY(ops->batched_sumsq(dev, p, (int)k, n, sp, ap->sq, e)); /* RMS(p) before the decay */
    if (at->factored) {
        const int64_t nr = at->batch * at->R, nc = at->batch * at->C;
        float *row = v, *col = gr->aux + at->c_off;
        OB_TRY(ops->rows_sumsq(dev, gc, k * nr, at->C, 1.0f / (float)at->C, ap->w[1], e));
        OB_TRY(ops->cols_sumsq(dev, gc, k * at->batch, at->R, at->C, 1.0f / (float)at->R, ap->w[2], e));
        const int64_t s_row[OB_BATCH_STRIDES] = {sa, nr, 0, 0, 0, 0}, s_col[OB_BATCH_STRIDES] = {sa, nc, 0, 0, 0, 0};
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->var, row, ap->w[1], none, nr, k, s_row, e));
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->var, col, ap->w[2], none, nc, k, s_col, e));
        if (k > 1) { /* the run's second moments side by side, as the preconditioning reads them */
            const int64_t g_row[OB_BATCH_STRIDES] = {nr, sa, 0, 0, 0, 0}, g_col[OB_BATCH_STRIDES] = {nc, sa, 0, 0, 0, 0};
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->copy, ap->w[1], row, none, nr, k, g_row, e));
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->copy, ap->w[2], col, none, nc, k, g_col, e));
            row = ap->w[1];
            col = ap->w[2];
        }
        OB_TRY(ops->adafactor_precond(dev, gc, row, col, k * at->batch, at->R, at->C, eps1, u, e));
    } else {
        const int64_t s_var[OB_BATCH_STRIDES] = {sa, n, 0, 0, 0, 0}, s_vec[OB_BATCH_STRIDES] = {n, n, sa, 0, 0, 0};
        float *vs[OB_RULE_MAX_STATE] = {v, NULL, NULL};
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->var_sq, v, gc, none, n, k, s_var, e));
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &ap->vec, u, gc, vs, n, k, s_vec, e));
    }
    OB_TRY(ops->batched_sumsq(dev, u, (int)k, n, n, ap->sq + k, e));
    ob_rule_step *ts = ap->tstep + r->first;
    OB_TRY(ops->adafactor_scale(dev, gr->step_dev, ap->sq, (int)k, n, d, ts, e));
    const int64_t s_apply[OB_BATCH_STRIDES] = {sp, sp, n, 0, 0, 1};
    float *us[OB_RULE_MAX_STATE] = {u, NULL, NULL};
    return ob_optim_ew_batch(o, ts, at->no_decay ? &ap->apply_nd : &ap->apply, p, g, us, n, k, s_apply, e);
}

static ob_status af_custom_step(ob_optim *o, int g, float *params, const float *grads, ob_err *e)
{
    ob_group *gr = &o->group[g];
    af_priv *ap = gr->priv;
    for (int i = 0; i < ap->n_runs; i++) OB_TRY(af_run_step(o, gr, &ap->run[i], params, grads, e));
    return OB_OK;
}

const ob_optimizer_def ob_opt_adafactor = {
    .name = "adafactor",
    .summary = "Adafactor: factored second moments, relative step size (torch.optim.Adafactor)",
    .state_text = "batch x (R + C) floats per tensor of shape (batch..., R, C); a vector's numel",
    .hp = af_hp,
    .n_hp = (int)(sizeof af_hp / sizeof af_hp[0]),
    .group_rule = af_rule,
    .group_step = af_step,
    .custom_setup = af_setup,
    .custom_step = af_custom_step,
    .custom_release = af_release,
};
