/* workloads/bert.c - a BERT-like encoder trained on masked tokens.
 *
 * Model (llm.c style: flat buffers, one gemm per matrix product, shapes in
 * comments; B batch, T sequence, C width, NH heads, HS = C/NH, F mlp width,
 * V vocabulary, N = B*T, M = number of masked targets in the batch):
 *   x_0 = wte[tokens] + wpe[t]                                   (N, C)
 *   for each of L blocks (pre-LayerNorm, bidirectional attention):
 *     x = x + proj(attention(qkv(LN1(x))))                       (N, C)
 *     x = x + fc2(gelu(fc(LN2(x))))                              (N, C)
 *   h = LNf(x)[target positions]                                 (M, C)
 *   logits = h @ W_head^T + b_head                               (M, V)
 *   loss = mean cross-entropy against the clean target tokens
 * W_head is the token embedding wte when tie_head=1 (the default), else its
 * own (V, C) tensor tagged head. Parameters are tagged for routing: wte/wpe
 * embedding, the (out, in) weight matrices matrix, their biases bias, the
 * LayerNorm gains and shifts norm, the head head/bias.
 *
 * Everything in a step runs through the backend table (kernels/backend.h);
 * the backward ops accumulate parameter gradients into the zeroed gradient
 * arena. The residual stream's gradient lives in one buffer that every
 * block's backward updates in place (LayerNorm backward adds into it).
 *
 * Data (workloads/bert_data.h): the batch of step s is sequences s*B ..
 * s*B+B-1 of (run seed, OB_STREAM_DATA), generated on the host (the Markov
 * chain is sequential per sequence and the batch is B*T integers) and
 * uploaded: tokens (N), target positions (M) and target tokens (M). The
 * held-out set is eval_batches*B sequences of (data_seed, OB_STREAM_EVAL),
 * disjoint from training; its exact Bayes-optimal loss is the floor reported
 * by evaluate. The language depends on data_seed only, so runs with different
 * seeds train on the same task and share the floor. A batch holds at most
 * Mcap = N*p + 8 sd + 16 targets (p = mask_prob); the rare excess (beyond 8
 * standard deviations) is left out of the loss.
 *
 * Replica r of a data-parallel run of world replicas (create_replica) holds
 * B = batch/world sequences: sequences r*B .. r*B+B-1 of the whole batch (Bg
 * = batch sequences, capped at the whole batch's Mcap_g targets) and their
 * targets. Each step it draws them and counts the other sequences' targets
 * (the count needs no tokens: ob_lang_count_targets); its loss and gradient
 * are its targets' sum over the whole batch's Mg targets, so the replicas'
 * sums are the whole batch's mean. Each held-out batch is kept in world parts
 * of B.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "workloads/bert_data.h"
#include "workloads/workload.h"

/* Hyperparameters; presets differ only in defaults. */
#define BERT_HP(B, T, V, L, D, H, EB, STD)                                                                      \
    {                                                                                                      \
        {"batch", OB_HP_INT, B, 1, 1 << 20, 0, 0, NULL, "sequences per step"},                             \
        {"seq", OB_HP_INT, T, 2, 1 << 16, 0, 0, NULL, "sequence length T"},                                \
        {"vocab", OB_HP_INT, V, 3, 1 << 22, 0, 0, NULL, "vocabulary size V, [MASK] included"},             \
        {"layers", OB_HP_INT, L, 1, 256, 0, 0, NULL, "transformer blocks L"},                              \
        {"dim", OB_HP_INT, D, 1, 1 << 16, 0, 0, NULL, "model width C"},                                    \
        {"heads", OB_HP_INT, H, 1, 1024, 0, 0, NULL, "attention heads NH (must divide dim)"},              \
        {"mlp_ratio", OB_HP_INT, 4, 1, 64, 0, 0, NULL, "MLP width F = mlp_ratio * dim"},                   \
        {"tie_head", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL, "output head shares the token embedding"},          \
        {"head_bias", OB_HP_BOOL, 1, 0, 1, 0, 0, NULL, "output head has a bias (V)"},                      \
        {"init_std", OB_HP_FLOAT, STD, 0, INFINITY, 1, 0, NULL,                                           \
         "std of the normal init (residual projections: init_std/sqrt(2L))"},                              \
        {"mask_prob", OB_HP_FLOAT, 0.15, 0, 1, 1, 0, NULL, "probability that a position is a target"},     \
        {"mask_token_frac", OB_HP_FLOAT, 0.8, 0, 1, 0, 0, NULL, "targets shown as [MASK]"},                \
        {"random_token_frac", OB_HP_FLOAT, 0.1, 0, 1, 0, 0, NULL, "targets shown as a random token"},      \
        {"topics", OB_HP_INT, 4, 1, 64, 0, 0, NULL, "hidden topics of the language"},                      \
        {"branch", OB_HP_INT, 8, 1, 1024, 0, 0, NULL, "successors per token in the chain"},                \
        {"zipf", OB_HP_FLOAT, 1.1, 0, 10, 0, 0, NULL, "exponent of the Zipf-like unigram"},                \
        {"topic_switch", OB_HP_FLOAT, 0.02, 0, 1, 0, 0, NULL, "probability of a topic change per token"}, \
        {"topic_spread", OB_HP_FLOAT, 1.5, 0, 10, 0, 0, NULL,                                              \
         "sigma of the log-normal per-topic successor weights"},                                           \
        {"data_seed", OB_HP_INT, 0, 0, 1e9, 0, 0, NULL, "seed of the language and the held-out set"},     \
        {"eval_batches", OB_HP_INT, EB, 1, 1 << 16, 0, 0, NULL, "held-out batches per evaluation"},        \
    }

static const ob_hp_def bert_tiny_hp[] = BERT_HP(32, 32, 256, 2, 64, 4, 16, 0.1);
static const ob_hp_def bert_small_hp[] = BERT_HP(16, 128, 8192, 4, 256, 4, 8, 0.05);
static const ob_hp_def bert_base_hp[] = BERT_HP(32, 128, 30522, 12, 768, 12, 4, 0.02);

/* Per-layer parameter slots, in layout order. */
enum { P_LN1W, P_LN1B, P_QKVW, P_QKVB, P_PROJW, P_PROJB, P_LN2W, P_LN2B, P_FCW, P_FCB, P_FC2W, P_FC2B, P_PER_LAYER };
enum { INIT_NORMAL, INIT_ONE, INIT_ZERO };

typedef struct pslot {
    char name[OB_NAME_MAX];
    ob_tag tag;
    int ndim;
    int64_t shape[2];
    int init;
    float std;
    int64_t off;
} pslot;

typedef struct layer_acts {
    float *ln1, *ln1_mean, *ln1_rstd; /* (N,C), (N), (N) */
    float *qkvr;                      /* (3, B, NH, T, HS) q|k|v per head */
    float *att;                       /* (B, NH, T, T) attention probabilities */
    float *atty;                      /* (N, C) attention output, heads merged */
    float *res_mid;                   /* (N, C) residual after attention */
    float *ln2, *ln2_mean, *ln2_rstd; /* (N,C), (N), (N) */
    float *fch, *fch_gelu;            /* (N, F) */
} layer_acts;

typedef struct bert {
    ob_workload base;
    int B, T, V, L, C, NH, HS, F, N, Mcap; /* B, N, Mcap: this replica's part of a batch */
    int rank, world;                      /* replica rank of world (data parallel; 0 of 1 alone) */
    int Bg, Ng, Mcap_g;                   /* the whole batch: B*world sequences, its tokens, its cap */
    int Mg;                               /* targets of the whole batch of the last train_step */
    int tie, head_bias, eval_batches;
    double init_std;
    uint64_t data_seed;
    ob_lang lang;
    double floor;
    /* parameters: [wte, wpe, L * P_PER_LAYER, lnf.w, lnf.b, (head.w), (head.b)] */
    pslot *ps;
    int nps, i_lnf, i_headw, i_headb;
    int64_t grad_total;
    /* device activations */
    float *res;        /* (L+1, N, C) residual stream entering each block; [L] enters LNf */
    layer_acts *la;    /* (L) */
    float *qkv;        /* (N, 3C) scratch */
    float *atty_h;     /* (B, NH, T, HS) scratch */
    float *lnf, *lnf_mean, *lnf_rstd; /* (N,C), (N), (N) */
    float *hm;         /* (Mcap, C) final hidden rows of the targets */
    float *logits;     /* (Mcap, V), probabilities after the forward, then their gradient */
    float *losses;     /* (Mcap) */
    float *loss_eval, *correct; /* device scalars */
    /* device gradient scratch */
    float *dres;       /* (N, C) gradient of the residual stream */
    float *dln;        /* (N, C) */
    float *datty;      /* (N, C) */
    float *dfg;        /* (N, F) */
    float *dqkv;       /* (N, 3C) */
    float *dqkvr;      /* (3, B, NH, T, HS) */
    float *datty_h;    /* (B, NH, T, HS) */
    float *datt;       /* (B, NH, T, T) */
    float *dhm;        /* (Mcap, C) */
    /* inputs: device (int32) and host staging */
    int32_t *tok_d, *pos_d, *tgt_d;  /* (N), (Mcap), (Mcap) */
    int32_t *tok_h, *pos_h, *tgt_h;  /* (Ng), (Ng), (Ng) host: a whole batch */
    int M;                           /* targets of the uploaded batch */
    /* held-out set (host) */
    int32_t *ev_tok, *ev_pos, *ev_tgt; /* (EB*world, N), (EB*world, Mcap), (EB*world, Mcap): */
    int *ev_M;                          /* (EB*world) each held-out batch in world parts */
} bert;

#define PARAM(m, params, i) ((params) + (m)->ps[(i)].off)
#define LP(m, params, l, j) ((params) + (m)->ps[2 + (l) * P_PER_LAYER + (j)].off)

static void add_slot(bert *m, const char *name, ob_tag tag, int ndim, int64_t s0, int64_t s1, int init,
                     float std)
{
    pslot *p = &m->ps[m->nps++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->tag = tag;
    p->ndim = ndim;
    p->shape[0] = s0;
    p->shape[1] = s1;
    p->init = init;
    p->std = std;
    p->off = -1;
}

static ob_status bert_describe(ob_workload *w, ob_layout *l, ob_err *e)
{
    bert *m = (bert *)w;
    for (int i = 0; i < m->nps; i++)
        OB_TRY(ob_layout_add(l, m->ps[i].name, m->ps[i].tag, m->ps[i].ndim, m->ps[i].shape, NULL, e));
    return OB_OK;
}

#define DALLOC(ptr, count, type) OB_TRY(ob_dev_alloc(dev, (size_t)(count) * sizeof(type), (void **)&(ptr), e))

/* Part r of the whole batch in tok_h, pos_h, tgt_h (Mg targets, positions in
 * order): sequences r*B .. r*B+B-1, their tokens to tok and the targets among
 * them to pos (rebased to the part) and tgt, *M of them. The destination may
 * be the source (the parts move towards the front). */
static void take_part(const bert *m, int r, int Mg, int32_t *tok, int32_t *pos, int32_t *tgt, int *M)
{
    const int64_t lo = (int64_t)r * m->N, hi = lo + m->N;
    memmove(tok, m->tok_h + lo, (size_t)m->N * sizeof *tok);
    int k = 0;
    for (int i = 0; i < Mg; i++)
        if (m->pos_h[i] >= lo && m->pos_h[i] < hi) {
            pos[k] = (int32_t)(m->pos_h[i] - lo);
            tgt[k] = m->tgt_h[i];
            k++;
        }
    *M = k;
}

/* The optional backend ops the model calls: OB_ERR_UNSUPPORTED naming the first one dev lacks. */
static ob_status require_ops(ob_device *dev, ob_err *e)
{
#define NEED(op) OB_TRY(OB_REQUIRE(dev, op, e))
    NEED(embedding_forward);
    NEED(embedding_backward);
    NEED(layernorm_forward);
    NEED(layernorm_backward);
    NEED(bias_add);
    NEED(bias_backward);
    NEED(gelu_forward);
    NEED(gelu_backward);
    NEED(heads_split);
    NEED(heads_merge);
    NEED(softmax_forward);
    NEED(softmax_backward);
    NEED(rows_gather);
    NEED(rows_scatter_add);
    NEED(xent_forward);
    NEED(xent_backward);
#undef NEED
    return OB_OK;
}

/* Each parameter slot's offset in the layout l, and the gradient arena's size. */
static ob_status take_offsets(bert *m, const ob_layout *l, ob_err *e)
{
    for (int i = 0; i < m->nps; i++) {
        int k = ob_layout_find(l, m->ps[i].name);
        if (k < 0)
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "bert: tensor '%s' missing from the layout", m->ps[i].name);
        m->ps[i].off = l->t[k].offset;
    }
    m->grad_total = l->total;
    return OB_OK;
}

/* The forward activations of one block, a. */
static ob_status alloc_layer_acts(bert *m, layer_acts *a, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const int64_t N = m->N, C = m->C, F = m->F;
    const int64_t TT = (int64_t)m->B * m->NH * m->T * m->T;
    DALLOC(a->ln1, N * C, float);
    DALLOC(a->ln1_mean, N, float);
    DALLOC(a->ln1_rstd, N, float);
    DALLOC(a->qkvr, 3 * N * C, float);
    DALLOC(a->att, TT, float);
    DALLOC(a->atty, N * C, float);
    DALLOC(a->res_mid, N * C, float);
    DALLOC(a->ln2, N * C, float);
    DALLOC(a->ln2_mean, N, float);
    DALLOC(a->ln2_rstd, N, float);
    DALLOC(a->fch, N * F, float);
    DALLOC(a->fch_gelu, N * F, float);
    return OB_OK;
}

/* The forward's device buffers: the residual stream, each block's
 * activations, the scratch, the final LayerNorm, the head and the loss. */
static ob_status alloc_activations(bert *m, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const int64_t N = m->N, C = m->C, L = m->L, V = m->V, Mc = m->Mcap;
    DALLOC(m->res, (L + 1) * N * C, float);
    m->la = calloc((size_t)L, sizeof *m->la);
    if (!m->la) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < L; i++) OB_TRY(alloc_layer_acts(m, &m->la[i], e));
    DALLOC(m->qkv, 3 * N * C, float);
    DALLOC(m->atty_h, N * C, float);
    DALLOC(m->lnf, N * C, float);
    DALLOC(m->lnf_mean, N, float);
    DALLOC(m->lnf_rstd, N, float);
    DALLOC(m->hm, Mc * C, float);
    DALLOC(m->logits, Mc * V, float);
    DALLOC(m->losses, Mc, float);
    DALLOC(m->loss_eval, 1, float);
    DALLOC(m->correct, 1, float);
    return OB_OK;
}

/* The backward's device scratch, shared by the blocks. */
static ob_status alloc_gradients(bert *m, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const int64_t N = m->N, C = m->C, F = m->F, Mc = m->Mcap;
    const int64_t TT = (int64_t)m->B * m->NH * m->T * m->T;
    DALLOC(m->dres, N * C, float);
    DALLOC(m->dln, N * C, float);
    DALLOC(m->datty, N * C, float);
    DALLOC(m->dfg, N * F, float);
    DALLOC(m->dqkv, 3 * N * C, float);
    DALLOC(m->dqkvr, 3 * N * C, float);
    DALLOC(m->datty_h, N * C, float);
    DALLOC(m->datt, TT, float);
    DALLOC(m->dhm, Mc * C, float);
    return OB_OK;
}

/* The inputs: a batch on the device, the host staging of a whole batch, and
 * the host room of the held-out set (eval_batches batches of world parts). */
static ob_status alloc_inputs(bert *m, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const int64_t N = m->N, Mc = m->Mcap;
    DALLOC(m->tok_d, N, int32_t);
    DALLOC(m->pos_d, Mc, int32_t);
    DALLOC(m->tgt_d, Mc, int32_t);
    m->tok_h = malloc((size_t)m->Ng * sizeof *m->tok_h);
    m->pos_h = malloc((size_t)m->Ng * sizeof *m->pos_h);
    m->tgt_h = malloc((size_t)m->Ng * sizeof *m->tgt_h);
    const int EB = m->eval_batches, W = m->world;
    m->ev_tok = malloc((size_t)EB * W * N * sizeof *m->ev_tok);
    m->ev_pos = malloc((size_t)EB * W * Mc * sizeof *m->ev_pos);
    m->ev_tgt = malloc((size_t)EB * W * Mc * sizeof *m->ev_tgt);
    m->ev_M = malloc((size_t)EB * W * sizeof *m->ev_M);
    if (!m->tok_h || !m->pos_h || !m->tgt_h || !m->ev_tok || !m->ev_pos || !m->ev_tgt || !m->ev_M)
        return ob_fail(e, OB_ERR_NOMEM, "bert: out of host memory");
    return OB_OK;
}

/* The held-out set and its floor; each held-out batch of Bg sequences is
 * kept in world parts of B, the batch a replica holds. */
static ob_status make_heldout(bert *m, ob_err *e)
{
    const int64_t N = m->N, Mc = m->Mcap;
    const int EB = m->eval_batches, W = m->world;
    for (int b = 0; b < EB; b++) {
        int Mg;
        ob_lang_batch(&m->lang, m->data_seed, OB_STREAM_EVAL, (uint64_t)b * m->Bg, m->Bg, m->T, m->tok_h,
                      m->pos_h, m->tgt_h, &Mg);
        if (Mg > m->Mcap_g) Mg = m->Mcap_g;
        for (int r = 0; r < W; r++) {
            int64_t k = (int64_t)b * W + r;
            take_part(m, r, Mg, m->ev_tok + k * N, m->ev_pos + k * Mc, m->ev_tgt + k * Mc, &m->ev_M[k]);
        }
    }
    return ob_lang_floor(&m->lang, m->data_seed, OB_STREAM_EVAL, 0, EB * m->Bg, m->T, &m->floor, e);
}

/* The ops checked, the parameters placed as the layout l says, the device
 * and host buffers allocated, and the held-out set made. */
static ob_status bert_setup(ob_workload *w, const ob_layout *l, ob_err *e)
{
    bert *m = (bert *)w;
    OB_TRY(require_ops(w->dev, e));
    OB_TRY(take_offsets(m, l, e));
    OB_TRY(alloc_activations(m, e));
    OB_TRY(alloc_gradients(m, e));
    OB_TRY(alloc_inputs(m, e));
    return make_heldout(m, e);
}

static ob_status bert_init(ob_workload *w, float *params, ob_err *e)
{
    bert *m = (bert *)w;
    ob_device *dev = w->dev;
    for (int i = 0; i < m->nps; i++) {
        pslot *p = &m->ps[i];
        int64_t n = p->shape[0] * (p->ndim > 1 ? p->shape[1] : 1);
        float *x = params + p->off;
        if (p->init == INIT_NORMAL)
            OB_TRY(dev->ops->rng_normal(dev, x, n, w->seed, OB_STREAM_INIT + (uint64_t)i, 0, 0.0f, p->std, e));
        else
            OB_TRY(dev->ops->fill(dev, x, p->init == INIT_ONE ? 1.0f : 0.0f, n, e));
    }
    return OB_OK;
}

/* Upload a batch: tokens (N), target positions and tokens (M <= Mcap). */
static ob_status upload_batch(bert *m, const int32_t *tok, const int32_t *pos, const int32_t *tgt, int M,
                              ob_err *e)
{
    ob_device *dev = m->base.dev;
    OB_TRY(dev->ops->upload(dev, m->tok_d, tok, (size_t)m->N * sizeof *tok, e));
    if (M > 0) {
        OB_TRY(dev->ops->upload(dev, m->pos_d, pos, (size_t)M * sizeof *pos, e));
        OB_TRY(dev->ops->upload(dev, m->tgt_d, tgt, (size_t)M * sizeof *tgt, e));
    }
    m->M = M;
    return OB_OK;
}

#define GEMM(ta, tb, mm, nn, kk, alpha, A, lda, Bm, ldb, beta, Cm, ldc) \
    OB_TRY(ops->gemm(dev, ta, tb, mm, nn, kk, alpha, A, lda, Bm, ldb, beta, Cm, ldc, e))
#define GEMM_SB(ta, tb, mm, nn, kk, alpha, A, lda, sa, Bm, ldb, sb, beta, Cm, ldc, sc, cnt)                    \
    OB_TRY(ops->gemm_strided_batched(dev, ta, tb, mm, nn, kk, alpha, A, lda, sa, Bm, ldb, sb, beta, Cm, ldc, \
                                     sc, cnt, e))

/* Forward on the uploaded batch: *loss (device) = mean masked cross-entropy;
 * *correct (device, may be NULL) = targets whose argmax is right. */
static ob_status bert_forward(bert *m, const float *params, float *loss, float *correct, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const ob_backend_ops *ops = dev->ops;
    const int B = m->B, T = m->T, C = m->C, NH = m->NH, HS = m->HS, F = m->F, N = m->N, V = m->V, M = m->M;
    const int BNH = B * NH;
    const int64_t NC = (int64_t)N * C, THS = (int64_t)T * HS, TT = (int64_t)T * T;
    const float scale = 1.0f / sqrtf((float)HS);
    const float *wte = PARAM(m, params, 0), *wpe = PARAM(m, params, 1);
    OB_TRY(ops->embedding_forward(dev, m->res, m->tok_d, wte, wpe, N, T, C, e)); /* (N, C) */
    for (int l = 0; l < m->L; l++) {
        layer_acts *a = &m->la[l];
        const float *x = m->res + l * NC;
        float *xo = m->res + (l + 1) * NC;
        const float *q = a->qkvr, *k = a->qkvr + NC, *v = a->qkvr + 2 * NC;
        /* attention */
        OB_TRY(ops->layernorm_forward(dev, a->ln1, a->ln1_mean, a->ln1_rstd, x, LP(m, params, l, P_LN1W),
                                      LP(m, params, l, P_LN1B), N, C, e));
        GEMM(0, 1, N, 3 * C, C, 1.0f, a->ln1, C, LP(m, params, l, P_QKVW), C, 0.0f, m->qkv, 3 * C); /* (N, 3C) */
        OB_TRY(ops->bias_add(dev, m->qkv, LP(m, params, l, P_QKVB), N, 3 * C, e));
        OB_TRY(ops->heads_split(dev, a->qkvr, m->qkv, B, T, 3, NH, HS, e)); /* 3 x (B, NH, T, HS) */
        GEMM_SB(0, 1, T, T, HS, scale, q, HS, THS, k, HS, THS, 0.0f, a->att, T, TT, BNH); /* (B, NH, T, T) */
        OB_TRY(ops->softmax_forward(dev, a->att, BNH * T, T, e));
        GEMM_SB(0, 0, T, HS, T, 1.0f, a->att, T, TT, v, HS, THS, 0.0f, m->atty_h, HS, THS, BNH); /* (B,NH,T,HS) */
        OB_TRY(ops->heads_merge(dev, a->atty, m->atty_h, B, T, 1, NH, HS, e)); /* (N, C) */
        OB_TRY(ops->copy(dev, a->res_mid, x, (size_t)NC * sizeof(float), e));
        GEMM(0, 1, N, C, C, 1.0f, a->atty, C, LP(m, params, l, P_PROJW), C, 1.0f, a->res_mid, C);
        OB_TRY(ops->bias_add(dev, a->res_mid, LP(m, params, l, P_PROJB), N, C, e));
        /* MLP */
        OB_TRY(ops->layernorm_forward(dev, a->ln2, a->ln2_mean, a->ln2_rstd, a->res_mid, LP(m, params, l, P_LN2W),
                                      LP(m, params, l, P_LN2B), N, C, e));
        GEMM(0, 1, N, F, C, 1.0f, a->ln2, C, LP(m, params, l, P_FCW), C, 0.0f, a->fch, F); /* (N, F) */
        OB_TRY(ops->bias_add(dev, a->fch, LP(m, params, l, P_FCB), N, F, e));
        OB_TRY(ops->gelu_forward(dev, a->fch_gelu, a->fch, (int64_t)N * F, e));
        OB_TRY(ops->copy(dev, xo, a->res_mid, (size_t)NC * sizeof(float), e));
        GEMM(0, 1, N, C, F, 1.0f, a->fch_gelu, F, LP(m, params, l, P_FC2W), F, 1.0f, xo, C); /* (N, C) */
        OB_TRY(ops->bias_add(dev, xo, LP(m, params, l, P_FC2B), N, C, e));
    }
    OB_TRY(ops->layernorm_forward(dev, m->lnf, m->lnf_mean, m->lnf_rstd, m->res + (int64_t)m->L * NC,
                                  PARAM(m, params, m->i_lnf), PARAM(m, params, m->i_lnf + 1), N, C, e));
    if (M > 0) {
        const float *wh = m->tie ? wte : PARAM(m, params, m->i_headw);
        OB_TRY(ops->rows_gather(dev, m->hm, m->lnf, m->pos_d, M, C, e));           /* (M, C) */
        GEMM(0, 1, M, V, C, 1.0f, m->hm, C, wh, C, 0.0f, m->logits, V);          /* (M, V) */
        if (m->head_bias) OB_TRY(ops->bias_add(dev, m->logits, PARAM(m, params, m->i_headb), M, V, e));
    }
    return ops->xent_forward(dev, m->logits, m->losses, m->logits, m->tgt_d, M, V, loss, correct, e);
}

/* Backward of bert_forward (same batch); grads must be zero on entry. */
static ob_status bert_backward(bert *m, const float *params, float *grads, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const ob_backend_ops *ops = dev->ops;
    const int B = m->B, T = m->T, C = m->C, NH = m->NH, HS = m->HS, F = m->F, N = m->N, V = m->V, M = m->M;
    const int BNH = B * NH;
    const int64_t NC = (int64_t)N * C, THS = (int64_t)T * HS, TT = (int64_t)T * T;
    const float scale = 1.0f / sqrtf((float)HS);
    OB_TRY(ops->fill(dev, m->dres, 0.0f, NC, e));
    if (M > 0) {
        const float *wh = m->tie ? PARAM(m, params, 0) : PARAM(m, params, m->i_headw);
        float *dwh = m->tie ? PARAM(m, grads, 0) : PARAM(m, grads, m->i_headw);
        /* the whole batch's mean: 1/Mg (Mg = M without replicas) */
        OB_TRY(ops->xent_backward(dev, m->logits, m->logits, m->tgt_d, M, V, 1.0f / (float)m->Mg, e)); /* (M, V) */
        if (m->head_bias) OB_TRY(ops->bias_backward(dev, PARAM(m, grads, m->i_headb), m->logits, M, V, e));
        GEMM(0, 0, M, C, V, 1.0f, m->logits, V, wh, C, 0.0f, m->dhm, C);  /* dh (M, C) */
        GEMM(1, 0, V, C, M, 1.0f, m->logits, V, m->hm, C, 1.0f, dwh, C);  /* dW_head (V, C) */
        OB_TRY(ops->fill(dev, m->dln, 0.0f, NC, e));
        OB_TRY(ops->rows_scatter_add(dev, m->dln, m->dhm, m->pos_d, M, C, e)); /* (N, C) */
        OB_TRY(ops->layernorm_backward(dev, m->dres, PARAM(m, grads, m->i_lnf), PARAM(m, grads, m->i_lnf + 1),
                                       m->dln, m->res + (int64_t)m->L * NC, PARAM(m, params, m->i_lnf),
                                       m->lnf_mean, m->lnf_rstd, N, C, e));
    }
    for (int l = m->L - 1; l >= 0; l--) {
        layer_acts *a = &m->la[l];
        const float *x = m->res + l * NC;
        const float *q = a->qkvr, *k = a->qkvr + NC, *v = a->qkvr + 2 * NC;
        float *dq = m->dqkvr, *dk = m->dqkvr + NC, *dv = m->dqkvr + 2 * NC;
        /* MLP: dres is the gradient of the block output */
        OB_TRY(ops->bias_backward(dev, LP(m, grads, l, P_FC2B), m->dres, N, C, e));
        GEMM(0, 0, N, F, C, 1.0f, m->dres, C, LP(m, params, l, P_FC2W), F, 0.0f, m->dfg, F); /* (N, F) */
        GEMM(1, 0, C, F, N, 1.0f, m->dres, C, a->fch_gelu, F, 1.0f, LP(m, grads, l, P_FC2W), F);
        OB_TRY(ops->gelu_backward(dev, m->dfg, a->fch, m->dfg, (int64_t)N * F, e));
        OB_TRY(ops->bias_backward(dev, LP(m, grads, l, P_FCB), m->dfg, N, F, e));
        GEMM(0, 0, N, C, F, 1.0f, m->dfg, F, LP(m, params, l, P_FCW), C, 0.0f, m->dln, C); /* (N, C) */
        GEMM(1, 0, F, C, N, 1.0f, m->dfg, F, a->ln2, C, 1.0f, LP(m, grads, l, P_FCW), C);
        OB_TRY(ops->layernorm_backward(dev, m->dres, LP(m, grads, l, P_LN2W), LP(m, grads, l, P_LN2B), m->dln,
                                       a->res_mid, LP(m, params, l, P_LN2W), a->ln2_mean, a->ln2_rstd, N, C, e));
        /* attention: dres is now the gradient of res_mid */
        OB_TRY(ops->bias_backward(dev, LP(m, grads, l, P_PROJB), m->dres, N, C, e));
        GEMM(0, 0, N, C, C, 1.0f, m->dres, C, LP(m, params, l, P_PROJW), C, 0.0f, m->datty, C); /* (N, C) */
        GEMM(1, 0, C, C, N, 1.0f, m->dres, C, a->atty, C, 1.0f, LP(m, grads, l, P_PROJW), C);
        OB_TRY(ops->heads_split(dev, m->datty_h, m->datty, B, T, 1, NH, HS, e)); /* (B, NH, T, HS) */
        GEMM_SB(0, 1, T, T, HS, 1.0f, m->datty_h, HS, THS, v, HS, THS, 0.0f, m->datt, T, TT, BNH); /* datt */
        GEMM_SB(1, 0, T, HS, T, 1.0f, a->att, T, TT, m->datty_h, HS, THS, 0.0f, dv, HS, THS, BNH);  /* dv */
        OB_TRY(ops->softmax_backward(dev, m->datt, m->datt, a->att, BNH * T, T, e));            /* dpreatt */
        GEMM_SB(0, 0, T, HS, T, scale, m->datt, T, TT, k, HS, THS, 0.0f, dq, HS, THS, BNH);       /* dq */
        GEMM_SB(1, 0, T, HS, T, scale, m->datt, T, TT, q, HS, THS, 0.0f, dk, HS, THS, BNH);       /* dk */
        OB_TRY(ops->heads_merge(dev, m->dqkv, m->dqkvr, B, T, 3, NH, HS, e)); /* (N, 3C) */
        OB_TRY(ops->bias_backward(dev, LP(m, grads, l, P_QKVB), m->dqkv, N, 3 * C, e));
        GEMM(0, 0, N, C, 3 * C, 1.0f, m->dqkv, 3 * C, LP(m, params, l, P_QKVW), C, 0.0f, m->dln, C);
        GEMM(1, 0, 3 * C, C, N, 1.0f, m->dqkv, 3 * C, a->ln1, C, 1.0f, LP(m, grads, l, P_QKVW), C);
        OB_TRY(ops->layernorm_backward(dev, m->dres, LP(m, grads, l, P_LN1W), LP(m, grads, l, P_LN1B), m->dln, x,
                                       LP(m, params, l, P_LN1W), a->ln1_mean, a->ln1_rstd, N, C, e));
    }
    return ops->embedding_backward(dev, PARAM(m, grads, 0), PARAM(m, grads, 1), m->dres, m->tok_d, N, T, C, V, e);
}

static ob_status bert_train_step(ob_workload *w, const float *params, float *grads, int64_t step, float *loss,
                                 ob_err *e)
{
    bert *m = (bert *)w;
    ob_device *dev = w->dev;
    const uint64_t first = (uint64_t)step * (uint64_t)m->Bg;
    int Mg, M;
    if (m->world == 1) {
        ob_lang_batch(&m->lang, w->seed, OB_STREAM_DATA, first, m->Bg, m->T, m->tok_h, m->pos_h, m->tgt_h, &Mg);
        if (Mg > m->Mcap_g) Mg = m->Mcap_g;
        M = Mg;
    } else {
        /* this replica's sequences drawn in full, the others' targets only
         * counted: the whole batch's count Mg, and the targets before this
         * part, of which the cap Mcap_g keeps the first */
        const int lo = m->rank * m->B, hi = lo + m->B;
        int before = ob_lang_count_targets(&m->lang, w->seed, OB_STREAM_DATA, first, lo, m->T);
        int after = ob_lang_count_targets(&m->lang, w->seed, OB_STREAM_DATA, first + (uint64_t)hi, m->Bg - hi, m->T);
        ob_lang_batch(&m->lang, w->seed, OB_STREAM_DATA, first + (uint64_t)lo, m->B, m->T, m->tok_h, m->pos_h,
                      m->tgt_h, &M);
        Mg = before + M + after;
        if (Mg > m->Mcap_g) Mg = m->Mcap_g;
        if (M > Mg - before) M = Mg - before > 0 ? Mg - before : 0;
    }
    m->Mg = Mg;
    OB_TRY(upload_batch(m, m->tok_h, m->pos_h, m->tgt_h, M, e));
    OB_TRY(dev->ops->fill(dev, grads, 0.0f, m->grad_total, e));
    OB_TRY(bert_forward(m, params, loss, NULL, e));
    /* this part's share of the whole batch's mean (a part without targets
     * has loss 0 already) */
    if (m->world > 1 && M > 0)
        OB_TRY(dev->ops->axpby(dev, 1, 0.0f, loss, (float)M / (float)Mg, loss, e));
    return bert_backward(m, params, grads, e);
}

static ob_status bert_evaluate(ob_workload *w, const float *params, ob_eval *out, ob_err *e)
{
    bert *m = (bert *)w;
    ob_device *dev = w->dev;
    double tot = 0.0, hits = 0.0;
    long long cnt = 0;
    for (int b = 0; b < m->eval_batches * m->world; b++) {
        int M = m->ev_M[b];
        OB_TRY(upload_batch(m, m->ev_tok + (int64_t)b * m->N, m->ev_pos + (int64_t)b * m->Mcap,
                            m->ev_tgt + (int64_t)b * m->Mcap, M, e));
        OB_TRY(bert_forward(m, params, m->loss_eval, m->correct, e));
        float l, c;
        OB_TRY(dev->ops->download(dev, &l, m->loss_eval, sizeof l, e));
        OB_TRY(dev->ops->download(dev, &c, m->correct, sizeof c, e));
        tot += (double)l * M;
        hits += c;
        cnt += M;
    }
    out->loss = cnt ? tot / (double)cnt : NAN;
    out->metric = cnt ? hits / (double)cnt : NAN;
    out->floor = m->floor;
    return OB_OK;
}

static void bert_destroy(ob_workload *w)
{
    bert *m = (bert *)w;
    ob_device *dev = w->dev;
    if (m->la)
        for (int i = 0; i < m->L; i++) {
            layer_acts *a = &m->la[i];
            float *ptrs[] = {a->ln1, a->ln1_mean, a->ln1_rstd, a->qkvr, a->att, a->atty, a->res_mid,
                             a->ln2, a->ln2_mean, a->ln2_rstd, a->fch, a->fch_gelu};
            for (size_t j = 0; j < sizeof ptrs / sizeof ptrs[0]; j++) ob_dev_free(dev, ptrs[j]);
        }
    float *ptrs[] = {m->res, m->qkv, m->atty_h, m->lnf, m->lnf_mean, m->lnf_rstd, m->hm, m->logits, m->losses,
                     m->loss_eval, m->correct, m->dres, m->dln, m->datty, m->dfg, m->dqkv, m->dqkvr,
                     m->datty_h, m->datt, m->dhm};
    for (size_t j = 0; j < sizeof ptrs / sizeof ptrs[0]; j++) ob_dev_free(dev, ptrs[j]);
    ob_dev_free(dev, m->tok_d);
    ob_dev_free(dev, m->pos_d);
    ob_dev_free(dev, m->tgt_d);
    free(m->la);
    free(m->tok_h);
    free(m->pos_h);
    free(m->tgt_h);
    free(m->ev_tok);
    free(m->ev_pos);
    free(m->ev_tgt);
    free(m->ev_M);
    free(m->ps);
    ob_lang_free(&m->lang);
    free(m);
}

static const ob_workload_vt bert_vt = {
    .describe = bert_describe,
    .setup = bert_setup,
    .init_params = bert_init,
    .train_step = bert_train_step,
    .evaluate = bert_evaluate,
    .destroy = bert_destroy,
};

/* Rejects the settings that make no model or no language (OB_ERR_INPUT,
 * with what to change): heads that do not divide dim, more than 2^24 tokens
 * per step, a branch not below vocab - 1, or mask_token_frac and
 * random_token_frac that add up to more than 1. */
static ob_status check_settings(const ob_workload_def *d, const ob_hp_values *hp, ob_err *e)
{
    int B = (int)ob_hp_get(hp, "batch"), T = (int)ob_hp_get(hp, "seq"), V = (int)ob_hp_get(hp, "vocab");
    int C = (int)ob_hp_get(hp, "dim"), NH = (int)ob_hp_get(hp, "heads");
    const char *n = d->name;
    if (C % NH != 0)
        return ob_fail(e, OB_ERR_INPUT,
                       "%s.dim = %d is not a multiple of %s.heads = %d; set dim to a multiple of %d (e.g. %d) or heads "
                       "to a divisor of %d",
                       n, C, n, NH, NH, C / NH ? C / NH * NH : NH, C);
    if ((int64_t)B * T > (1 << 24))
        return ob_fail(e, OB_ERR_INPUT,
                       "%s.batch * %s.seq = %lld tokens per step is too many (at most 16777216); lower batch or seq", n,
                       n, (long long)B * T);
    const int K = (int)ob_hp_get(hp, "branch");
    if (K >= V - 1)
        return ob_fail(e, OB_ERR_INPUT,
                       "%s.branch = %d is not below %s.vocab - 1 = %d (a token's successors are other real tokens); "
                       "set branch to at most %d or vocab to at least %d",
                       n, K, n, V - 1, V - 2, K + 2);
    const double mf = ob_hp_get(hp, "mask_token_frac"), rf = ob_hp_get(hp, "random_token_frac");
    if (mf + rf > 1.0 + 1e-12)
        return ob_fail(e, OB_ERR_INPUT,
                       "%s.mask_token_frac + %s.random_token_frac = %g + %g = %g exceeds 1 (they are shares of the "
                       "masked targets); lower one of them",
                       n, n, mf, rf, mf + rf);
    return OB_OK;
}

/* The settings hp of replica m->rank of m->world into m: the sizes of the
 * whole batch and of this replica's part of it (with their target caps), the
 * model's sizes, head and init std, the data seed and the held-out batches. */
static void read_settings(bert *m, const ob_hp_values *hp)
{
    int B = (int)ob_hp_get(hp, "batch"), T = (int)ob_hp_get(hp, "seq"), V = (int)ob_hp_get(hp, "vocab");
    int C = (int)ob_hp_get(hp, "dim"), NH = (int)ob_hp_get(hp, "heads");
    m->Bg = B;
    m->Ng = B * T;
    m->B = B / m->world;
    m->T = T;
    m->V = V;
    m->L = (int)ob_hp_get(hp, "layers");
    m->C = C;
    m->NH = NH;
    m->HS = C / NH;
    m->F = C * (int)ob_hp_get(hp, "mlp_ratio");
    m->N = m->B * T;
    m->base.items_per_step = (int64_t)B * T;
    m->tie = ob_hp_get(hp, "tie_head") != 0;
    m->head_bias = ob_hp_get(hp, "head_bias") != 0;
    m->init_std = ob_hp_get(hp, "init_std");
    m->data_seed = (uint64_t)ob_hp_get(hp, "data_seed");
    m->eval_batches = (int)ob_hp_get(hp, "eval_batches");
    m->Mcap_g = ob_lang_target_cap(m->Ng, ob_hp_get(hp, "mask_prob"));
    /* a part can hold up to all of the whole batch's targets */
    m->Mcap = m->Mcap_g < m->N ? m->Mcap_g : m->N;
}

/* The slots of block l, h<l>.*: its two LayerNorms, attention and MLP; the
 * residual projections' init std is sd_res. */
static void add_layer_slots(bert *m, int l, float sd, float sd_res)
{
    const int C = m->C, F = m->F;
    char nm[OB_NAME_MAX];
#define SLOT(suffix, tag, nd, s0, s1, init, std)                      \
    do {                                                              \
        snprintf(nm, sizeof nm, "h%d.%s", l, suffix);                 \
        add_slot(m, nm, tag, nd, s0, s1, init, std);                  \
    } while (0)
    SLOT("ln1.w", OB_TAG_NORM, 1, C, 0, INIT_ONE, 0);
    SLOT("ln1.b", OB_TAG_NORM, 1, C, 0, INIT_ZERO, 0);
    SLOT("attn.qkv.w", OB_TAG_MATRIX, 2, 3 * C, C, INIT_NORMAL, sd);
    SLOT("attn.qkv.b", OB_TAG_BIAS, 1, 3 * C, 0, INIT_ZERO, 0);
    SLOT("attn.proj.w", OB_TAG_MATRIX, 2, C, C, INIT_NORMAL, sd_res);
    SLOT("attn.proj.b", OB_TAG_BIAS, 1, C, 0, INIT_ZERO, 0);
    SLOT("ln2.w", OB_TAG_NORM, 1, C, 0, INIT_ONE, 0);
    SLOT("ln2.b", OB_TAG_NORM, 1, C, 0, INIT_ZERO, 0);
    SLOT("mlp.fc.w", OB_TAG_MATRIX, 2, F, C, INIT_NORMAL, sd);
    SLOT("mlp.fc.b", OB_TAG_BIAS, 1, F, 0, INIT_ZERO, 0);
    SLOT("mlp.proj.w", OB_TAG_MATRIX, 2, C, F, INIT_NORMAL, sd_res);
    SLOT("mlp.proj.b", OB_TAG_BIAS, 1, C, 0, INIT_ZERO, 0);
#undef SLOT
}

/* The parameter slots into m->ps (room for all of them), in layout order:
 * wte, wpe, the blocks, lnf, then head.w (untied head) and head.b (with a
 * head bias), whose indices are kept (-1 when absent). */
static void add_slots(bert *m)
{
    const int V = m->V, T = m->T, C = m->C, L = m->L;
    const float sd = (float)m->init_std, sd_res = (float)(m->init_std / sqrt(2.0 * L));
    add_slot(m, "wte", OB_TAG_EMBEDDING, 2, V, C, INIT_NORMAL, sd);
    add_slot(m, "wpe", OB_TAG_EMBEDDING, 2, T, C, INIT_NORMAL, sd);
    for (int l = 0; l < L; l++) add_layer_slots(m, l, sd, sd_res);
    m->i_lnf = m->nps;
    add_slot(m, "lnf.w", OB_TAG_NORM, 1, C, 0, INIT_ONE, 0);
    add_slot(m, "lnf.b", OB_TAG_NORM, 1, C, 0, INIT_ZERO, 0);
    m->i_headw = m->i_headb = -1;
    if (!m->tie) {
        m->i_headw = m->nps;
        add_slot(m, "head.w", OB_TAG_HEAD, 2, V, C, INIT_NORMAL, sd);
    }
    if (m->head_bias) {
        m->i_headb = m->nps;
        add_slot(m, "head.b", OB_TAG_BIAS, 1, V, 0, INIT_ZERO, 0);
    }
}

/* Replica rank of world: the settings checked and read, the language built
 * and the parameter slots listed (bert_setup allocates the rest). */
static ob_status bert_create_replica(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev,
                                     uint64_t seed, int rank, int world, ob_workload **out, ob_err *e)
{
    *out = NULL;
    OB_TRY(ob_workload_check_part(d, (int)ob_hp_get(hp, "batch"), rank, world, e));
    OB_TRY(check_settings(d, hp, e));
    bert *m = calloc(1, sizeof *m);
    if (!m) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    m->base.vt = &bert_vt;
    m->base.def = d;
    m->base.dev = dev;
    m->base.seed = seed;
    m->rank = rank;
    m->world = world;
    read_settings(m, hp);
    const ob_lang_config lc = ob_lang_config_of(hp);
    ob_status s = ob_lang_build(&m->lang, &lc, m->data_seed, e);
    if (s != OB_OK) {
        ob_err_prefix(e, "%s: ", d->name);
        free(m);
        return s;
    }
    m->ps = calloc((size_t)(m->L * P_PER_LAYER + 6), sizeof *m->ps);
    if (!m->ps) {
        ob_lang_free(&m->lang);
        free(m);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    add_slots(m);
    *out = &m->base;
    return OB_OK;
}

static ob_status bert_create(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev, uint64_t seed,
                             ob_workload **out, ob_err *e)
{
    return bert_create_replica(d, hp, dev, seed, 0, 1, out, e);
}

const ob_workload_def ob_wl_bert_tiny = {
    .name = "bert-tiny",
    .summary = "BERT-like encoder, masked tokens of a synthetic topic Markov language (2 layers, d 64, CI-fast)",
    .hp = bert_tiny_hp,
    .n_hp = (int)(sizeof bert_tiny_hp / sizeof bert_tiny_hp[0]),
    .metric_name = "accuracy",
    .items_name = "tokens",
    .create = bert_create,
    .create_replica = bert_create_replica,
};

const ob_workload_def ob_wl_bert_small = {
    .name = "bert-small",
    .summary = "BERT-like encoder, masked tokens (4 layers, d 256, seq 128, vocab 8192)",
    .hp = bert_small_hp,
    .n_hp = (int)(sizeof bert_small_hp / sizeof bert_small_hp[0]),
    .metric_name = "accuracy",
    .items_name = "tokens",
    .create = bert_create,
    .create_replica = bert_create_replica,
};

const ob_workload_def ob_wl_bert_base = {
    .name = "bert-base",
    .summary = "BERT-base-sized encoder, masked tokens (12 layers, d 768, 12 heads, seq 128, vocab 30522; GPU)",
    .hp = bert_base_hp,
    .n_hp = (int)(sizeof bert_base_hp / sizeof bert_base_hp[0]),
    .metric_name = "accuracy",
    .items_name = "tokens",
    .create = bert_create,
    .create_replica = bert_create_replica,
};
