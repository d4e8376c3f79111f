/* optimizers/soap.c - SOAP (Vyas et al. 2024, "SOAP: Improving and
 * Stabilizing Shampoo using Adam", arXiv 2409.11321), with the semantics of
 * the authors' soap.py (merge_dims, normalize_grads and channels_last, which
 * default off there, are not offered).
 *
 * Per tensor X of any number of dimensions, each dimension k of size
 * n_k <= max_precond_dim (1-D tensors only with precondition_1d) keeps
 *   L_k (n_k, n_k) = lerp(L_k, G_(k) G_(k)^T, 1 - shampoo_beta), G_(k) the
 *                    mode-k unfolding of the gradient,
 *   Q_k             its eigenbasis, descending eigenvalues,
 * and Adam runs in the rotated basis: with R = G x_k Q_k^T over the modes,
 *   m = b1 m + (1-b1) R,  v = b2 v + (1-b2) R^2   (both kept rotated)
 *   U = (m / (sqrt(v) + eps)) x_k Q_k              (back to the tensor's basis)
 *   p -= lr sqrt(1 - b2^k) / (1 - b1^k) U;  p -= lr wd p   (k = Adam steps;
 *                    no decay for biases, norms and vectors with filter_bias_and_bn)
 * then L_k is updated with this step's gradient, and every
 * precondition_frequency Adam steps Q_k is refreshed by one power iteration:
 * the columns of Q_k sorted by the estimates diag(Q_k^T L_k Q_k), descending
 * (v's slices along mode k follow), L_k Q_k orthonormalized by QR, and m is
 * carried over (rotated back with the old bases, forward with the new ones).
 * soap.py rotates m back and forth at every step; doing it only when a basis
 * changes is the same arithmetic up to rounding.
 *
 * The first update only accumulates L_k and takes Q_k = eigh(L_k + 1e-30 I)
 * (the parameters do not move: soap.py never uses a gradient in the basis it
 * helped build); Adam step k = update count - 1.
 *
 * Storage: m and v are the group's two state roles; per preconditioned mode,
 * L_k and S_k = Q_k^T (row j = eigenvector j) live in the group's aux arena
 * (checkpointed and rolled back with the roles). Every write of state goes
 * through an elementwise rule, so a step the guard skips leaves it all as it
 * was; S_k starts as the identity, the basis a skipped first update leaves.
 * The mode products are GEMMs (strided-batched over the leading dimensions),
 * the mode Gram products SYRKs, the eigenbases LAPACK / cuSOLVER (the
 * backend's sym_eigvecs, qr_orth, eig_order).
 *
 * Tensors of one shape with at most two dimensions whose parameters and
 * preconditioners lie at constant spacings (a model's layers, or tensors
 * stored one after another) form a run: each op runs once over the run (the
 * mode products and Gram products strided-batched over its tensors, the
 * rules through elementwise_step_batch, the eigensolvers, QRs and orderings
 * of the bases through the backend's batch ops where it has them: on the
 * CPU one matrix per thread). Only a refresh's reorderings (of L Q's
 * columns and of v's slices) go tensor by tensor, and tensors of more
 * dimensions do throughout.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimizers/optim_impl.h"

static const ob_hp_def soap_hp[] = {
    {"lr", OB_HP_FLOAT, 3e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.95, 0, 1, 0, 1, NULL, "decay of the first moment"},
    {"beta2", OB_HP_FLOAT, 0.95, 0, 1, 0, 1, NULL, "decay of the second moment"},
    {"shampoo_beta", OB_HP_FLOAT, -1, -1, 1, 0, 1, NULL,
     "decay of the preconditioners L, R; < 0: beta2 (soap.py's default -1)"},
    {"eps", OB_HP_FLOAT, 1e-8, 0, INFINITY, 0, 0, NULL, "added to sqrt(v)"},
    {"weight_decay", OB_HP_FLOAT, 0.01, 0, INFINITY, 0, 0, NULL, "decoupled, after the update: p -= lr*wd*p"},
    OB_HP_FILTER_BIAS_AND_BN("weight decay"),
    {"precondition_frequency", OB_HP_INT, 10, 1, 1e9, 0, 0, NULL,
     "Adam steps between two refreshes of the eigenbases (power iteration + QR)"},
    {"max_precond_dim", OB_HP_INT, 10000, 1, 16384, 0, 0, NULL,
     "a dimension larger than this is not preconditioned (identity basis); at most 16384 (the "
     "eigensolvers' 32-bit workspace sizes)"},
    {"precondition_1d", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, "precondition 1-D tensors (biases, norms) too"},
    {"correct_bias", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL, "Adam's bias corrections in the step size"},
};

/* Mode k of a tensor as (A, n, B): A = product of the sizes before k, B after. */
typedef struct soap_mode {
    int64_t A, n, B;
    int64_t l_off, s_off; /* L_k, S_k in aux; -1: not preconditioned */
} soap_mode;

typedef struct soap_tensor {
    int index; /* in the layout */
    int nd;
    int n_pre; /* preconditioned modes */
    int no_decay; /* filter_bias_and_bn took its weight decay */
    soap_mode mode[OB_MAX_DIMS];
} soap_tensor;

typedef struct soap_priv {
    soap_tensor *t;   /* run by run */
    int n;
    ob_run *run;
    int n_runs;
    float *w[6];      /* scratch: w[0..3] a run's numel each, w[4], w[5] max numel */
    float *m[3];      /* scratch: a run's n_k^2 each */
    int32_t *perm;    /* scratch: a run's n_k each */
    ob_rule copy_clip, commit, lerp, apply, apply_nd; /* apply_nd: without the decay */
} soap_priv;

static double soap_state(const ob_hp_values *hp)
{
    (void)hp;
    return 2.0;
}

static ob_status soap_rule(const ob_optim *o, int g, ob_rule *r, ob_err *e)
{
    (void)g;
    (void)e;
    *r = (ob_rule){0};
    r->kind = OB_RULE_SOAP_ADAM;
    ob_rule_betas(r, ob_optim_hp(o, "beta1"), ob_optim_hp(o, "beta2"));
    r->eps = (float)ob_optim_hp(o, "eps");
    r->n_state = 2;
    return OB_OK;
}

static void soap_step(ob_optim *o, int g, int64_t t, double lr_scale, ob_rule_step *s)
{
    (void)g;
    const double lr = lr_scale * ob_optim_hp(o, "lr");
    const int64_t k = t - 1; /* Adam steps; the first update only builds the bases */
    double step_size = lr;
    if (k >= 1 && ob_optim_hp(o, "correct_bias") != 0) {
        double b1 = ob_optim_hp(o, "beta1"), b2 = ob_optim_hp(o, "beta2");
        double bc1 = 1.0 - pow(b1, (double)k), bc2 = 1.0 - pow(b2, (double)k);
        step_size = lr * sqrt(bc2) / bc1;
    }
    s->lr = (float)lr;
    s->t = (float)k;
    s->c[0] = (float)step_size;
    s->c[1] = (float)(lr * ob_optim_hp(o, "weight_decay"));
}

static double shampoo_beta(const ob_optim *o)
{
    double sb = ob_optim_hp(o, "shampoo_beta");
    return sb >= 0 ? sb : ob_optim_hp(o, "beta2");
}

static int64_t align16(int64_t n)
{
    return (n + 15) / 16 * 16;
}

static void soap_release(ob_optim *o, int g)
{
    soap_priv *sp = o->group[g].priv;
    if (!sp) return;
    for (int i = 0; i < 6; i++) ob_dev_free(o->dev, sp->w[i]);
    for (int i = 0; i < 3; i++) ob_dev_free(o->dev, sp->m[i]);
    ob_dev_free(o->dev, sp->perm);
    free(sp->t);
    free(sp->run);
    free(sp);
    o->group[g].priv = NULL;
}

/* S_k = I for every preconditioned mode (uploaded one matrix at a time). */
static ob_status init_bases(ob_optim *o, ob_group *gr, const soap_priv *sp, ob_err *e)
{
    ob_device *dev = o->dev;
    OB_TRY(dev->ops->fill(dev, gr->aux, 0.0f, gr->aux_floats, e));
    for (int i = 0; i < sp->n; i++)
        for (int k = 0; k < sp->t[i].nd; k++) {
            const soap_mode *md = &sp->t[i].mode[k];
            if (md->l_off < 0) continue;
            float *id = calloc((size_t)(md->n * md->n), sizeof *id);
            if (!id) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
            for (int64_t j = 0; j < md->n; j++) id[j * md->n + j] = 1.0f;
            ob_status s = dev->ops->upload(dev, gr->aux + md->s_off, id, (size_t)(md->n * md->n) * sizeof *id, e);
            free(id);
            OB_TRY(s);
        }
    return OB_OK;
}

/* Runs hold tensors of at most two dimensions with the same shape and the
 * same preconditioned modes. */
static int soap_same_shape(const void *ctx, int i, int j)
{
    const soap_priv *sp = ((const void *const *)ctx)[0];
    const ob_layout *l = ((const void *const *)ctx)[1];
    const soap_tensor *a = &sp->t[i], *b = &sp->t[j];
    const ob_tensor *ta = &l->t[a->index], *tb = &l->t[b->index];
    if (ta->ndim != tb->ndim || a->nd > 2 || a->no_decay != b->no_decay) return 0;
    for (int k = 0; k < ta->ndim; k++)
        if (ta->shape[k] != tb->shape[k] || (a->mode[k].l_off < 0) != (b->mode[k].l_off < 0)) return 0;
    return 1;
}

/* The first preconditioner's offset in aux (0 without one): a run's
 * preconditioners are spaced as these are (one tensor's L and S blocks
 * follow one another). */
static int64_t soap_aux_at(const soap_tensor *t)
{
    for (int k = 0; k < t->nd; k++)
        if (t->mode[k].l_off >= 0) return t->mode[k].l_off;
    return 0;
}

/* (the per-run workspaces hold numel floats per tensor, w[0..3], and the
 * Gram products n_k^2, m[0]: the larger sets how many fit a budget) */
static void soap_where(const void *ctx, int i, int64_t *off, int64_t *aux, int64_t *size)
{
    const soap_priv *sp = ((const void *const *)ctx)[0];
    const ob_layout *l = ((const void *const *)ctx)[1];
    const soap_tensor *t = &sp->t[i];
    *off = l->t[t->index].offset;
    *aux = soap_aux_at(t);
    *size = l->t[t->index].numel;
    for (int k = 0; k < t->nd; k++)
        if (t->mode[k].l_off >= 0 && t->mode[k].n * t->mode[k].n > *size) *size = t->mode[k].n * t->mode[k].n;
}

/* Reorder sp->t run by run (ob_make_runs). ws: the largest run's numel x
 * count; wm: its largest n_k^2 x count; wp: its largest n_k x count. */
static ob_status soap_make_runs(const ob_device *dev, soap_priv *sp, const ob_layout *l, int64_t budget, int64_t *ws,
                                int64_t *wm, int64_t *wp, ob_err *e)
{
    sp->run = malloc((size_t)(sp->n ? sp->n : 1) * sizeof *sp->run);
    if (!sp->run) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const void *ctx[2] = {sp, l};
    const ob_run_items items = {sp->t, sizeof *sp->t, sp->n, ctx, soap_same_shape, soap_where};
    OB_TRY(ob_make_runs(dev, &items, budget, sp->run, &sp->n_runs, e));
    for (int ri = 0; ri < sp->n_runs; ri++) {
        const ob_run *r = &sp->run[ri];
        const soap_tensor *t = &sp->t[r->first];
        const int64_t k = r->count;
        if (k * l->t[t->index].numel > *ws) *ws = k * l->t[t->index].numel;
        for (int d = 0; d < t->nd; d++)
            if (t->mode[d].l_off >= 0) {
                if (k * t->mode[d].n * t->mode[d].n > *wm) *wm = k * t->mode[d].n * t->mode[d].n;
                if (k * t->mode[d].n > *wp) *wp = k * t->mode[d].n;
            }
    }
    return OB_OK;
}

static ob_status soap_setup(ob_optim *o, int g, int *is_custom, ob_err *e)
{
    ob_group *gr = &o->group[g];
    ob_device *dev = o->dev;
    const ob_layout *l = o->layout;
    *is_custom = 1;
    if (gr->end == gr->begin) return OB_OK;
    OB_TRY(OB_REQUIRE(dev, swap01, e));
    OB_TRY(OB_REQUIRE(dev, sym_eigvecs, e));
    OB_TRY(OB_REQUIRE(dev, qr_orth, e));
    OB_TRY(OB_REQUIRE(dev, eig_order, e));
    OB_TRY(OB_REQUIRE(dev, rows_gather, e));
    soap_priv *sp = calloc(1, sizeof *sp);
    if (!sp) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    gr->priv = sp;
    int n = 0;
    for (int i = 0; i < l->n; i++) n += l->t[i].group == g;
    sp->t = calloc((size_t)(n ? n : 1), sizeof *sp->t);
    if (!sp->t) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    const int64_t maxdim = (int64_t)ob_optim_hp(o, "max_precond_dim");
    const int pre1d = ob_optim_hp(o, "precondition_1d") != 0;
    int64_t aux = 0, max_numel = 16, max_n = 1;
    for (int i = 0; i < l->n; i++) {
        const ob_tensor *t = &l->t[i];
        if (t->group != g) continue;
        soap_tensor *st = &sp->t[sp->n++];
        st->index = i;
        st->nd = t->ndim;
        st->no_decay = ob_optim_filters_decay(o) && ob_no_decay_tensor(t);
        if (t->numel > INT32_MAX)
            return ob_fail(e, OB_ERR_INPUT, "soap: tensor '%s' has %lld elements, more than it handles (2^31-1)",
                           t->name, (long long)t->numel);
        if (t->numel > max_numel) max_numel = t->numel;
        for (int k = 0; k < t->ndim; k++) {
            soap_mode *md = &st->mode[k];
            md->A = md->B = 1;
            for (int j = 0; j < k; j++) md->A *= t->shape[j];
            for (int j = k + 1; j < t->ndim; j++) md->B *= t->shape[j];
            md->n = t->shape[k];
            md->l_off = md->s_off = -1;
            if (md->n > maxdim || (t->ndim == 1 && !pre1d)) continue;
            md->l_off = aux;
            aux += align16(md->n * md->n);
            md->s_off = aux;
            aux += align16(md->n * md->n);
            st->n_pre++;
            if (md->n > max_n) max_n = md->n;
        }
    }
    gr->aux_floats = aux;
    if (aux > 0) {
        OB_TRY(ob_dev_alloc(dev, (size_t)aux * sizeof(float), (void **)&gr->aux, e));
        OB_TRY(init_bases(o, gr, sp, e));
    }
    /* A run holds at most a workspace of floats: the largest tensor, or up
     * to 4M floats where the group is larger. */
    int64_t budget = gr->end - gr->begin < ((int64_t)1 << 22) ? gr->end - gr->begin : (int64_t)1 << 22;
    if (budget < max_numel) budget = max_numel;
    int64_t ws = max_numel, wm = max_n * max_n, wp = max_n;
    OB_TRY(soap_make_runs(dev, sp, l, budget, &ws, &wm, &wp, e));
    for (int i = 0; i < 6; i++)
        OB_TRY(ob_dev_alloc(dev, (size_t)(i < 4 ? ws : max_numel) * sizeof(float), (void **)&sp->w[i], e));
    for (int i = 0; i < 3; i++) OB_TRY(ob_dev_alloc(dev, (size_t)wm * sizeof(float), (void **)&sp->m[i], e));
    OB_TRY(ob_dev_alloc(dev, (size_t)wp * sizeof(int32_t), (void **)&sp->perm, e));
    sp->copy_clip = (ob_rule){.kind = OB_RULE_COPY, .c = {1.0f}};
    sp->commit = (ob_rule){.kind = OB_RULE_COPY};
    sp->lerp = (ob_rule){.kind = OB_RULE_LERP, .c = {(float)(1.0 - shampoo_beta(o))}};
    sp->apply = (ob_rule){.kind = OB_RULE_SOAP_APPLY, .n_state = 1};
    sp->apply_nd = (ob_rule){.kind = OB_RULE_SOAP_APPLY, .n_state = 1, .flags = OB_RULE_SKIP_DECAY};
    return OB_OK;
}

/* dst = src x_k Q_k^T (forward: Y_a = S X_a, X_a the (n, B) slab a) or
 * src x_k Q_k (back: Y_a = S^T X_a). */
static ob_status mode_product(ob_device *dev, const soap_mode *md, const float *S, const float *src, float *dst,
                              int back, ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    const int n = (int)md->n, B = (int)md->B, A = (int)md->A;
    if (B == 1) /* (A, n) rows: Y = X S^T forward, X S back */
        return ops->gemm(dev, 0, !back, A, n, n, 1.0f, src, n, S, n, 0.0f, dst, n, e);
    if (A == 1) return ops->gemm(dev, back, 0, n, B, n, 1.0f, S, n, src, B, 0.0f, dst, B, e);
    return ops->gemm_strided_batched(dev, back, 0, n, B, n, 1.0f, S, n, 0, src, B, (int64_t)n * B, 0.0f, dst, B,
                                     (int64_t)n * B, A, e);
}

/* x through every preconditioned mode of t (forward or back), ping-ponging
 * between the scratch a and b; returns where the result is (x itself when
 * no mode is preconditioned). x is not modified. */
static ob_status project(ob_optim *o, const ob_group *gr, const soap_tensor *t, const float *x, float *a, float *b,
                         int back, const float **out, ob_err *e)
{
    const float *cur = x;
    for (int k = 0; k < t->nd; k++) {
        const soap_mode *md = &t->mode[k];
        if (md->s_off < 0) continue;
        float *dst = cur == a ? b : a;
        OB_TRY(mode_product(o->dev, md, gr->aux + md->s_off, cur, dst, back, e));
        cur = dst;
    }
    *out = cur;
    return OB_OK;
}

/* out (n, n) = G_(k) G_(k)^T of x; tmp: numel scratch for a middle mode. */
static ob_status mode_gram(ob_device *dev, const soap_mode *md, const float *x, float *tmp, float *out, ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    const int n = (int)md->n;
    int trans = 0;
    int64_t k = md->A * md->B;
    if (md->A == 1) {
        /* (n, B) rows: X X^T */
    } else if (md->B == 1) {
        trans = 1; /* (A, n): X^T X */
    } else {
        OB_TRY(ops->swap01(dev, tmp, x, md->A, md->n, md->B, e)); /* (n, A*B) */
        x = tmp;
    }
    const int lda = trans ? n : (int)k;
    if (ops->syrk_strided_batched)
        return ops->syrk_strided_batched(dev, trans, n, (int)k, 1.0f, x, lda, 0, 0.0f, out, n, 0, 1, e);
    return ops->gemm(dev, trans, !trans, n, n, (int)k, 1.0f, x, lda, x, lda, 0.0f, out, n, e);
}

/* dst = x with its slices along mode k reordered: slice j of dst is slice
 * perm[j] of x. tmp, tmp2: numel scratch. */
static ob_status permute_mode(ob_device *dev, const soap_mode *md, const int32_t *perm, const float *x, float *tmp,
                              float *tmp2, float *dst, ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    if (md->A == 1) return ops->rows_gather(dev, dst, x, perm, (int)md->n, (int)md->B, e);
    OB_TRY(ops->swap01(dev, tmp, x, md->A, md->n, md->B, e));                       /* (n, A, B) */
    OB_TRY(ops->rows_gather(dev, tmp2, tmp, perm, (int)md->n, (int)(md->A * md->B), e)); /* rows reordered */
    return ops->swap01(dev, dst, tmp2, md->n, md->A, md->B, e);                     /* (A, n, B) */
}

static ob_status soap_tensor_step(ob_optim *o, ob_group *gr, soap_priv *sp, const soap_tensor *st, float *params,
                                  const float *grads, int64_t adam_k, int refresh, ob_err *e)
{
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    const ob_tensor *t = &o->layout->t[st->index];
    const int64_t numel = t->numel;
    float *g = sp->w[0];
    OB_TRY(ob_optim_ew(o, gr->step_dev, &sp->copy_clip, g, grads + t->offset, NULL, numel, e));
    float *m = gr->state[0] + (t->offset - gr->begin), *v = gr->state[1] + (t->offset - gr->begin);
    if (adam_k >= 1) {
        const float *r;
        OB_TRY(project(o, gr, st, g, sp->w[1], sp->w[2], 0, &r, e));
        float *mv[OB_RULE_MAX_STATE] = {m, v, NULL};
        OB_TRY(ops->elementwise_step(dev, &gr->rule, gr->step_dev, o->stats_dev, sp->w[3], r, mv, numel, e));
        const float *u;
        OB_TRY(project(o, gr, st, sp->w[3], sp->w[1], sp->w[2], 1, &u, e));
        OB_TRY(ob_optim_ew(o, gr->step_dev, st->no_decay ? &sp->apply_nd : &sp->apply, params + t->offset,
                           grads + t->offset, (float *)u, numel, e));
    }
    if (st->n_pre == 0) return OB_OK;
    /* m in the tensor's basis while the bases change */
    if (refresh) {
        const float *back;
        OB_TRY(project(o, gr, st, m, sp->w[1], sp->w[2], 1, &back, e));
        OB_TRY(ops->copy(dev, sp->w[3], back, (size_t)numel * sizeof(float), e));
    }
    for (int k = 0; k < st->nd; k++) {
        const soap_mode *md = &st->mode[k];
        if (md->l_off < 0) continue;
        const int64_t nn = md->n * md->n;
        float *L = gr->aux + md->l_off, *S = gr->aux + md->s_off;
        OB_TRY(mode_gram(dev, md, g, sp->w[4], sp->m[0], e));
        OB_TRY(ob_optim_ew(o, gr->step_dev, &sp->lerp, L, sp->m[0], NULL, nn, e));
        if (adam_k == 0) {
            OB_TRY(ops->sym_eigvecs(dev, (int)md->n, L, sp->m[1], e));
            OB_TRY(ob_optim_ew(o, gr->step_dev, &sp->commit, S, sp->m[1], NULL, nn, e));
        } else if (refresh) {
            const int n = (int)md->n;
            /* T = S L: row j is (L q_j)^T */
            OB_TRY(ops->gemm(dev, 0, 0, n, n, n, 1.0f, S, n, L, n, 0.0f, sp->m[1], n, e));
            OB_TRY(ops->eig_order(dev, n, S, sp->m[1], sp->perm, e));
            OB_TRY(ops->rows_gather(dev, sp->m[2], sp->m[1], sp->perm, n, n, e)); /* (L Q)[:, perm], column-major */
            OB_TRY(ops->qr_orth(dev, n, sp->m[2], sp->m[0], e));
            OB_TRY(permute_mode(dev, md, sp->perm, v, sp->w[4], sp->w[5], sp->w[1], e));
            OB_TRY(ob_optim_ew(o, gr->step_dev, &sp->commit, v, sp->w[1], NULL, numel, e));
            OB_TRY(ob_optim_ew(o, gr->step_dev, &sp->commit, S, sp->m[0], NULL, nn, e));
        }
    }
    if (refresh) {
        const float *fwd;
        OB_TRY(project(o, gr, st, sp->w[3], sp->w[1], sp->w[2], 0, &fwd, e));
        OB_TRY(ob_optim_ew(o, gr->step_dev, &sp->commit, m, fwd, NULL, numel, e));
    }
    return OB_OK;
}

/* x (a run's tensors, xs apart) through every preconditioned mode of its
 * tensors (at most 2-D: A or B is 1), as project does for one, each mode
 * product strided-batched over the run; the result's tensors lie numel
 * apart in a or b (x itself when no mode is preconditioned). */
static ob_status project_run(ob_optim *o, const ob_group *gr, const soap_tensor *t, const ob_run *r,
                             const float *x, int64_t xs, float *a, float *b, int back, const float **out, ob_err *e)
{
    const ob_backend_ops *ops = o->dev->ops;
    const int64_t numel = o->layout->t[t->index].numel;
    const float *cur = x;
    for (int k = 0; k < t->nd; k++) {
        const soap_mode *md = &t->mode[k];
        if (md->s_off < 0) continue;
        float *dst = cur == a ? b : a;
        const float *S = gr->aux + md->s_off;
        const int n = (int)md->n, A = (int)md->A, B = (int)md->B;
        const int64_t cs = cur == x ? xs : numel;
        if (B == 1) /* (A, n) rows: Y = X S^T forward, X S back */
            OB_TRY(ops->gemm_strided_batched(o->dev, 0, !back, A, n, n, 1.0f, cur, n, cs, S, n, r->sa, 0.0f, dst, n,
                                             numel, r->count, e));
        else /* A == 1: Y = S X forward, S^T X back */
            OB_TRY(ops->gemm_strided_batched(o->dev, back, 0, n, B, n, 1.0f, S, n, r->sa, cur, B, cs, 0.0f, dst, B,
                                             numel, r->count, e));
        cur = dst;
    }
    *out = cur;
    return OB_OK;
}

/* out_i (n, n) = G_(k) G_(k)^T of each tensor x_i of a run (at most 2-D),
 * out_i at i n^2, as mode_gram does for one. */
static ob_status gram_run(ob_device *dev, const soap_mode *md, const float *x, int64_t numel, int count, float *out,
                          ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    const int n = (int)md->n, trans = md->A != 1; /* A == 1: (n, B) rows, X X^T; else (A, n): X^T X */
    const int k = (int)(md->A * md->B), lda = trans ? n : k;
    const int64_t nn = (int64_t)n * n;
    if (ops->syrk_strided_batched)
        return ops->syrk_strided_batched(dev, trans, n, k, 1.0f, x, lda, numel, 0.0f, out, n, nn, count, e);
    return ops->gemm_strided_batched(dev, trans, !trans, n, n, k, 1.0f, x, lda, numel, x, lda, numel, 0.0f, out, n,
                                     nn, count, e);
}

/* The eigenbasis ops over a run's count matrices (src, dst nn apart, or
 * the strides given): the backend's batch op where it has one, else matrix
 * by matrix. */
static ob_status eigvecs_run(ob_device *dev, int n, int count, const float *A, int64_t sa, float *S, int64_t ss,
                             ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    if (ops->sym_eigvecs_batch) return ops->sym_eigvecs_batch(dev, n, count, A, sa, S, ss, e);
    for (int b = 0; b < count; b++) OB_TRY(ops->sym_eigvecs(dev, n, A + b * sa, S + b * ss, e));
    return OB_OK;
}

static ob_status qr_run(ob_device *dev, int n, int count, const float *W, int64_t sw, float *S, int64_t ss, ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    if (ops->qr_orth_batch) return ops->qr_orth_batch(dev, n, count, W, sw, S, ss, e);
    for (int b = 0; b < count; b++) OB_TRY(ops->qr_orth(dev, n, W + b * sw, S + b * ss, e));
    return OB_OK;
}

static ob_status order_run(ob_device *dev, int n, int count, const float *S, int64_t ss, const float *T, int64_t st,
                           int32_t *perm, ob_err *e)
{
    const ob_backend_ops *ops = dev->ops;
    if (ops->eig_order_batch) return ops->eig_order_batch(dev, n, count, S, ss, T, st, perm, e);
    for (int b = 0; b < count; b++) OB_TRY(ops->eig_order(dev, n, S + b * ss, T + b * st, perm + (int64_t)b * n, e));
    return OB_OK;
}

/* A run's step: the arithmetic of soap_tensor_step, each op once over the
 * run (a run's tensors are numel apart in the scratch w[0..3], their n_k^2
 * matrices n_k^2 apart in m[0..2] and their orderings n_k apart in perm). */
static ob_status soap_run_step(ob_optim *o, ob_group *gr, soap_priv *sp, const ob_run *r, float *params,
                               const float *grads, int64_t adam_k, int refresh, ob_err *e)
{
    ob_device *dev = o->dev;
    const ob_backend_ops *ops = dev->ops;
    const soap_tensor *st = &sp->t[r->first];
    const ob_tensor *t = &o->layout->t[st->index];
    const int64_t n = t->numel, k = r->count, d = r->sp;
    float *none[OB_RULE_MAX_STATE] = {NULL, NULL, NULL}, *g = sp->w[0];
    float *m = gr->state[0] + (t->offset - gr->begin), *v = gr->state[1] + (t->offset - gr->begin);
    const int64_t s_clip[OB_BATCH_STRIDES] = {n, d, 0, 0, 0, 0};
    OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &sp->copy_clip, g, grads + t->offset, none, n, k, s_clip, e));
    if (adam_k >= 1) {
        const float *rot, *u;
        OB_TRY(project_run(o, gr, st, r, g, n, sp->w[1], sp->w[2], 0, &rot, e));
        float *mv[OB_RULE_MAX_STATE] = {m, v, NULL};
        const int64_t s_adam[OB_BATCH_STRIDES] = {n, n, d, d, 0, 0};
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &gr->rule, sp->w[3], rot, mv, n, k, s_adam, e));
        OB_TRY(project_run(o, gr, st, r, sp->w[3], n, sp->w[1], sp->w[2], 1, &u, e));
        float *us[OB_RULE_MAX_STATE] = {(float *)u, NULL, NULL};
        const int64_t s_apply[OB_BATCH_STRIDES] = {d, d, n, 0, 0, 0};
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, st->no_decay ? &sp->apply_nd : &sp->apply, params + t->offset,
                                 grads + t->offset, us, n, k, s_apply, e));
    }
    if (st->n_pre == 0) return OB_OK;
    /* m in the tensors' basis while the bases change */
    if (refresh) {
        const float *back;
        OB_TRY(project_run(o, gr, st, r, m, d, sp->w[1], sp->w[2], 1, &back, e));
        OB_TRY(ops->copy(dev, sp->w[3], back, (size_t)(k * n) * sizeof(float), e));
    }
    for (int mi = 0; mi < st->nd; mi++) {
        const soap_mode *md = &st->mode[mi];
        if (md->l_off < 0) continue;
        const int nk = (int)md->n;
        const int64_t nn = md->n * md->n;
        float *L = gr->aux + md->l_off, *S = gr->aux + md->s_off;
        OB_TRY(gram_run(dev, md, g, n, (int)k, sp->m[0], e));
        const int64_t s_mat[OB_BATCH_STRIDES] = {r->sa, nn, 0, 0, 0, 0};
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &sp->lerp, L, sp->m[0], none, nn, k, s_mat, e));
        if (adam_k == 0) {
            OB_TRY(eigvecs_run(dev, nk, (int)k, L, r->sa, sp->m[1], nn, e));
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &sp->commit, S, sp->m[1], none, nn, k, s_mat, e));
        } else if (refresh) {
            /* T_i = S_i L_i: row j is (L_i q_j)^T */
            OB_TRY(ops->gemm_strided_batched(dev, 0, 0, nk, nk, nk, 1.0f, S, nk, r->sa, L, nk, r->sa, 0.0f, sp->m[1],
                                             nk, nn, (int)k, e));
            OB_TRY(order_run(dev, nk, (int)k, S, r->sa, sp->m[1], nn, sp->perm, e));
            for (int64_t i = 0; i < k; i++) /* (L_i Q_i)[:, perm_i], column-major */
                OB_TRY(ops->rows_gather(dev, sp->m[2] + i * nn, sp->m[1] + i * nn, sp->perm + i * nk, nk, nk, e));
            OB_TRY(qr_run(dev, nk, (int)k, sp->m[2], nn, sp->m[0], nn, e));
            for (int64_t i = 0; i < k; i++)
                OB_TRY(permute_mode(dev, md, sp->perm + i * nk, v + i * d, sp->w[4], sp->w[5], sp->w[1] + i * n, e));
            const int64_t s_v[OB_BATCH_STRIDES] = {d, n, 0, 0, 0, 0};
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &sp->commit, v, sp->w[1], none, n, k, s_v, e));
            OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &sp->commit, S, sp->m[0], none, nn, k, s_mat, e));
        }
    }
    if (refresh) {
        const float *fwd;
        OB_TRY(project_run(o, gr, st, r, sp->w[3], n, sp->w[1], sp->w[2], 0, &fwd, e));
        const int64_t s_m[OB_BATCH_STRIDES] = {d, n, 0, 0, 0, 0};
        OB_TRY(ob_optim_ew_batch(o, gr->step_dev, &sp->commit, m, fwd, none, n, k, s_m, e));
    }
    return OB_OK;
}

static ob_status soap_custom_step(ob_optim *o, int g, float *params, const float *grads, ob_err *e)
{
    ob_group *gr = &o->group[g];
    soap_priv *sp = gr->priv;
    const int64_t adam_k = o->t - 1;
    const int64_t freq = (int64_t)ob_optim_hp(o, "precondition_frequency");
    const int refresh = adam_k >= 1 && adam_k % freq == 0;
    for (int ri = 0; ri < sp->n_runs; ri++) {
        const ob_run *r = &sp->run[ri];
        if (r->count > 1) {
            OB_TRY(soap_run_step(o, gr, sp, r, params, grads, adam_k, refresh, e));
            continue;
        }
        for (int i = r->first; i < r->first + r->count; i++)
            OB_TRY(soap_tensor_step(o, gr, sp, &sp->t[i], params, grads, adam_k, refresh, e));
    }
    return OB_OK;
}

const ob_optimizer_def ob_opt_soap = {
    .name = "soap",
    .summary = "SOAP: Adam in the eigenbasis of Shampoo's preconditioners (Vyas et al. 2024, as the authors' "
               "soap.py); 2 n^2 floats more per preconditioned dimension of size n",
    .hp = soap_hp,
    .n_hp = (int)(sizeof soap_hp / sizeof soap_hp[0]),
    .state_per_param = soap_state,
    .group_rule = soap_rule,
    .group_step = soap_step,
    .custom_setup = soap_setup,
    .custom_step = soap_custom_step,
    .custom_release = soap_release,
};
