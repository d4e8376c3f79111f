/* optimizers/adam.c - torch.optim.Adam (L2 weight decay) and torch.optim.AdamW
 * (decoupled weight decay), both with amsgrad, and filter_bias_and_bn (no
 * decay for biases, norms and 1-D tensors, as timm's create_optimizer puts
 * them in a parameter group without it); the helpers the AdamW group of
 * the hybrid optimizers uses too. */
#include <math.h>
#include <stdlib.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def adam_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 0.0, 0, INFINITY, 0, 0, NULL, "L2 penalty added to the gradient"},
    {"amsgrad", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "use the maximum of past second moments"},
    {"filter_bias_and_bn", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL,
     "no weight decay for biases, norms and 1-D tensors (timm's create_optimizer)"},
};

static const ob_hp_def adamw_hp[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.999, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to the denominator"},
    {"weight_decay", OB_HP_FLOAT, 1e-2, 0, INFINITY, 0, 0, NULL, "decoupled weight decay: p *= 1 - lr*wd"},
    {"amsgrad", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "use the maximum of past second moments"},
    {"filter_bias_and_bn", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL,
     "no weight decay for biases, norms and 1-D tensors (timm's create_optimizer)"},
};

void ob_adam_rule(ob_rule *r, double beta1, double beta2, double eps, double wd, int decoupled, int amsgrad)
{
    *r = (ob_rule){0};
    r->kind = OB_RULE_ADAM;
    r->beta1 = (float)beta1;
    r->beta2 = (float)beta2;
    r->eps = (float)eps;
    r->weight_decay = (float)wd;
    r->decoupled_wd = decoupled;
    r->amsgrad = amsgrad;
    r->n_state = amsgrad ? 3 : 2;
}

void ob_adam_step(ob_rule_step *s, double lr, int64_t t, double beta1, double beta2)
{
    s->lr = (float)lr;
    s->t = (float)t;
    s->bc1 = (float)(1.0 - pow(beta1, (double)t));
    s->bc2 = (float)(1.0 - pow(beta2, (double)t));
}

static double adam_state(const ob_hp_values *hp)
{
    return ob_hp_get(hp, "amsgrad") != 0 ? 3.0 : 2.0;
}

static ob_status adam_group_rule(const ob_optim *o, int decoupled, ob_rule *r)
{
    ob_adam_rule(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"), ob_optim_hp(o, "eps"),
                 ob_optim_hp(o, "weight_decay"), decoupled, ob_optim_hp(o, "amsgrad") != 0);
    return OB_OK;
}

static ob_status adam_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    return adam_group_rule(o, 0, r);
}

static ob_status adamw_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    return adam_group_rule(o, 1, r);
}

static void adam_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    ob_adam_step(s, lr_scale * ob_optim_hp(o, "lr"), t, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
}

/* filter_bias_and_bn: the group's own step, over spans of consecutive
 * tensors of one kind (decayed or not), each one pass of the rule with or
 * without its weight decay; without it the group is the usual single pass. */
typedef struct adam_span {
    int64_t begin, end; /* in the arenas; a span runs to the next one's start */
    int no_decay;
} adam_span;

typedef struct adam_priv {
    adam_span *span;
    int n;
    ob_rule rule_nd; /* the group's rule without the decay */
} adam_priv;

static int span_by_offset(const void *a, const void *b)
{
    const adam_span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static ob_status adam_setup(ob_optim *o, int g, int *is_custom, ob_err *e)
{
    ob_group *gr = &o->group[g];
    const ob_layout *l = o->layout;
    *is_custom = ob_optim_hp(o, "filter_bias_and_bn") != 0;
    if (!*is_custom || gr->end == gr->begin) return OB_OK;
    adam_priv *ap = calloc(1, sizeof *ap);
    if (!ap) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    gr->priv = ap;
    ap->span = malloc((size_t)(l->n ? l->n : 1) * sizeof *ap->span);
    if (!ap->span) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < l->n; i++)
        if (l->t[i].group == g)
            ap->span[ap->n++] = (adam_span){l->t[i].offset, 0, ob_no_decay_tensor(&l->t[i])};
    qsort(ap->span, (size_t)ap->n, sizeof *ap->span, span_by_offset);
    /* merge neighbours of one kind; each span ends where the next begins (the
     * padding between tensors, zero, goes with the one before) */
    int m = 0;
    for (int i = 0; i < ap->n; i++)
        if (m == 0 || ap->span[m - 1].no_decay != ap->span[i].no_decay) ap->span[m++] = ap->span[i];
    ap->n = m;
    if (m > 0) ap->span[0].begin = gr->begin;
    for (int i = 0; i < m; i++) ap->span[i].end = i + 1 < m ? ap->span[i + 1].begin : gr->end;
    ap->rule_nd = gr->rule;
    ap->rule_nd.weight_decay = 0.0f;
    return OB_OK;
}

static ob_status adam_custom_step(ob_optim *o, int g, float *params, const float *grads, ob_err *e)
{
    ob_group *gr = &o->group[g];
    const adam_priv *ap = gr->priv;
    const int64_t none[OB_BATCH_STRIDES] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < ap->n; i++) {
        const adam_span *sp = &ap->span[i];
        const int64_t rel = sp->begin - gr->begin;
        float *st[OB_RULE_MAX_STATE] = {0};
        for (int k = 0; k < gr->rule.n_state; k++) st[k] = gr->state[k] + rel;
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, sp->no_decay ? &ap->rule_nd : &gr->rule, params + sp->begin,
                                 grads + sp->begin, st, sp->end - sp->begin, 1, none, e));
    }
    return OB_OK;
}

static void adam_release(ob_optim *o, int g)
{
    adam_priv *ap = o->group[g].priv;
    if (!ap) return;
    free(ap->span);
    free(ap);
    o->group[g].priv = NULL;
}

const ob_optimizer_def ob_opt_adam = {
    .name = "adam",
    .summary = "Adam with L2 weight decay and optional AMSGrad (torch.optim.Adam)",
    .hp = adam_hp,
    .n_hp = (int)(sizeof adam_hp / sizeof adam_hp[0]),
    .state_per_param = adam_state,
    .group_rule = adam_rule,
    .group_step = adam_step,
    .custom_setup = adam_setup,
    .custom_step = adam_custom_step,
    .custom_release = adam_release,
};

const ob_optimizer_def ob_opt_adamw = {
    .name = "adamw",
    .summary = "Adam with decoupled weight decay, optional AMSGrad (torch.optim.AdamW)",
    .hp = adamw_hp,
    .n_hp = (int)(sizeof adamw_hp / sizeof adamw_hp[0]),
    .state_per_param = adam_state,
    .group_rule = adamw_rule,
    .group_step = adam_step,
    .custom_setup = adam_setup,
    .custom_step = adam_custom_step,
    .custom_release = adam_release,
};
