/* workloads/cnn.c - a convolutional image classifier on synthetic images.
 *
 * Images are NHWC (B, H, W, Cin). A "unit" is conv (K x K, stride, zero
 * padding; im2col + one gemm through the backend) -> group norm -> optional
 * ReLU. Two architectures, chosen by `residual`:
 *   plain (residual=0): for each of `stages` stages (channels width * 2^s),
 *       a 2x2 max pool before every stage but the first, then `depth` 3x3
 *       units with ReLU;
 *   ResNet-style (residual=1): a 3x3 stem unit, then per stage `depth` basic
 *       blocks out = relu(unit_b(unit_a(x)) + shortcut(x)), unit_a 3x3 with
 *       ReLU (stride 2 in the first block of every stage but the first),
 *       unit_b 3x3 without ReLU, shortcut the identity or a 1x1 unit with the
 *       same stride when the shape changes;
 * then global average pooling, a linear classifier (fc.w (classes, C), fc.b)
 * and softmax cross-entropy. Group norm (not batch norm) keeps training and
 * evaluation identical. Conv kernels are (out, in, K, K) tensors tagged conv,
 * group-norm gains/shifts norm, the classifier head and bias.
 *
 * A convolution is im2col (columns in (ky, kx, ci) order, channels
 * contiguous) and one gemm per chunk of images against the kernel permuted to
 * (Cout, K, K, Cin) by heads_split; its gradient is permuted back by
 * heads_merge. On the CPU a chunk holds about 1 MiB of columns (they stay in
 * cache between im2col and the gemm; conv_chunk_kib overrides), on a GPU the
 * whole batch. A backend with a direct convolution for a unit's shape
 * (conv_supported: the CPU's AVX-512 or AVX2 kernels for stride 1) runs that instead,
 * straight from the (Cout, Cin, K, K) kernel, with no column matrix.
 *
 * Data: class templates (workloads/cnn_data.h) built once from data_seed and
 * uploaded; the batch of step s is images s*B .. s*B+B-1 of (run seed,
 * OB_STREAM_DATA), drawn on the device by the synth_images op. The held-out
 * set is eval_batches*B images of (data_seed, OB_STREAM_EVAL). Metric:
 * held-out accuracy. No loss floor is known (NaN).
 *
 * Replica r of a data-parallel run of world replicas holds B/world images
 * (B below is that part): images r*B .. of each step's batch, with its loss
 * and gradient divided by world; it evaluates each held-out batch in world
 * parts. Group norm is per image, so the replicas compute what one device
 * would.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "workloads/cnn_data.h"
#include "workloads/workload.h"

#define CNN_HP(B, IMG, W, ST, D, RES, G, EB)                                                              \
    {                                                                                                     \
        {"batch", OB_HP_INT, B, 1, 1 << 20, 0, 0, NULL, "images per step"},                               \
        {"image", OB_HP_INT, IMG, 4, 4096, 0, 0, NULL, "image height and width"},                         \
        {"channels", OB_HP_INT, 3, 1, 64, 0, 0, NULL, "input channels"},                                  \
        {"classes", OB_HP_INT, 10, 2, 100000, 0, 0, NULL, "number of classes"},                           \
        {"width", OB_HP_INT, W, 1, 4096, 0, 0, NULL, "channels of the first stage (doubling per stage)"}, \
        {"stages", OB_HP_INT, ST, 1, 8, 0, 0, NULL, "stages (each halves the resolution but the first)"}, \
        {"depth", OB_HP_INT, D, 1, 64, 0, 0, NULL, "units (plain) or blocks (residual) per stage"},       \
        {"residual", OB_HP_BOOL, RES, 0, 1, 0, 0, NULL, "ResNet-style basic blocks"},                     \
        {"groups", OB_HP_INT, G, 1, 1024, 0, 0, NULL, "group-norm groups (must divide every width)"},     \
        {"noise", OB_HP_FLOAT, 1.5, 0, INFINITY, 0, 0, NULL, "std of the pixel noise (templates RMS 1)"}, \
        {"max_shift", OB_HP_INT, 4, 0, 4096, 0, 0, NULL, "largest circular shift in pixels"},             \
        {"contrast_lo", OB_HP_FLOAT, 0.5, 0, INFINITY, 0, 0, NULL, "smallest template contrast"},         \
        {"contrast_hi", OB_HP_FLOAT, 1.5, 0, INFINITY, 0, 0, NULL, "largest template contrast"},          \
        {"confusable_pairs", OB_HP_INT, 3, 0, 50000, 0, 0, NULL, "class pairs that look alike"},           \
        {"confusion", OB_HP_FLOAT, 0.35, 0, INFINITY, 0, 0, NULL,                                          \
         "size of the difference within a confusable pair (smaller: harder)"},                            \
        {"data_seed", OB_HP_INT, 0, 0, 1e9, 0, 0, NULL, "seed of the class templates and held-out set"}, \
        {"conv_chunk_kib", OB_HP_INT, 0, 0, 1 << 30, 0, 0, NULL,                                         \
         "im2col columns per gemm, KiB (0: 1024 on the CPU, the whole batch on a GPU)"},                \
        {"eval_batches", OB_HP_INT, EB, 1, 1 << 16, 0, 0, NULL, "held-out batches per evaluation"},       \
    }

static const ob_hp_def cnn_tiny_hp[] = CNN_HP(32, 16, 16, 2, 1, 0, 4, 16);
static const ob_hp_def cnn_small_hp[] = CNN_HP(64, 32, 32, 3, 2, 0, 8, 16);
static const ob_hp_def cnn_base_hp[] = CNN_HP(128, 32, 64, 4, 2, 1, 16, 8);

enum { INIT_NORMAL, INIT_ONE, INIT_ZERO };

typedef struct pslot {
    char name[OB_NAME_MAX];
    ob_tag tag;
    int ndim;
    int64_t shape[4];
    int init;
    float std;
    int64_t off;
} pslot;

/* conv -> group norm -> (ReLU) */
typedef struct cunit {
    int cin, cout, k, stride, pad, H, W, Ho, Wo, relu;
    int ipc;                    /* images per im2col chunk */
    int direct;                 /* CPU direct convolution (no im2col) */
    int i_w, i_gw, i_gb;        /* parameter slots */
    const float *in;            /* (B, H, W, cin), not owned */
    float *conv;                /* (B, Ho, Wo, cout) */
    float *mean, *rstd;         /* (B, G) */
    float *out;                 /* (B, Ho, Wo, cout) after norm (and ReLU) */
} cunit;

/* One stage element in forward order. */
enum { OP_UNIT, OP_POOL, OP_BLOCK };
typedef struct cop {
    int kind;
    int u;          /* OP_UNIT: unit index; OP_BLOCK: unit_a (unit_b = u+1, shortcut = u+2 when sc) */
    int sc;         /* OP_BLOCK: projection shortcut present */
    int B, H, W, C; /* OP_POOL: input shape */
    const float *in;
    float *out;     /* OP_POOL: pooled (B, H/2, W/2, C); OP_BLOCK: block output (= unit_b out) */
} cop;

typedef struct cnn {
    ob_workload base;
    int B, IMG, CIN, K, width, stages, depth, residual, G, eval_batches, pairs;
    int rank, world;        /* replica rank of world; B is this replica's part (1 alone) */
    double noise, confusion, clo, chi;
    int max_shift;
    int64_t chunk_bytes;    /* im2col chunk target (0: the whole batch at once) */
    uint64_t data_seed;
    pslot *ps;
    int nps, i_fcw, i_fcb;
    cunit *units;
    int nunits;
    cop *ops;
    int nops;
    int Cl, HWl;            /* channels and pixels of the last feature map */
    int64_t grad_total, max_act, max_col;
    float *templates;       /* (K, IMG, IMG, CIN) */
    float *img;             /* (B, IMG, IMG, CIN) */
    int32_t *labels;        /* (B) */
    float *feat, *logits, *losses; /* (B, Cl), (B, K), (B) */
    float *loss_eval, *correct;
    float *col, *dcol;      /* im2col scratch (max_col) */
    float *wperm, *dwperm;  /* a kernel as (Cout, K, K, Cin), the im2col column order (max_w) */
    int64_t max_w;
    float *g[4];            /* activation-gradient buffers (max_act) */
    float *sa, *sb;         /* unit backward scratch (max_act) */
    float *dfeat;           /* (B, Cl) */
    const float *last;      /* last feature map (B, HWl, Cl) */
    int cache_eval;         /* keep the held-out set on the host (see eval_cache) */
    float *ev_img;          /* the held-out images, eval_batches*world batches of B, or NULL */
    int32_t *ev_lab;        /* their labels */
} cnn;

/* Held-out sets of up to this many bytes are kept (cnn-tiny's default is
 * 1.5 MiB, cnn-small's and cnn-base's 12 MiB); a larger one, which only
 * raised batch or eval_batches give, is drawn again at every evaluation
 * rather than held in memory for the whole run. */
#define CNN_EVAL_CACHE_MAX ((int64_t)64 << 20)

#define PARAM(m, params, i) ((params) + (m)->ps[(i)].off)

static int add_slot(cnn *m, const char *name, ob_tag tag, int ndim, const int64_t *shape, int init, float std)
{
    pslot *p = &m->ps[m->nps];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->tag = tag;
    p->ndim = ndim;
    for (int d = 0; d < ndim; d++) p->shape[d] = shape[d];
    p->init = init;
    p->std = std;
    p->off = -1;
    return m->nps++;
}

static int slot_numel(const pslot *p)
{
    int64_t n = 1;
    for (int d = 0; d < p->ndim; d++) n *= p->shape[d];
    return (int)n;
}

/* Adds a unit and its parameters; returns its index. */
static int add_unit(cnn *m, const char *name, int cin, int cout, int k, int stride, int H, int W, int relu)
{
    cunit *u = &m->units[m->nunits];
    memset(u, 0, sizeof *u);
    u->cin = cin;
    u->cout = cout;
    u->k = k;
    u->stride = stride;
    u->pad = k / 2;
    u->H = H;
    u->W = W;
    u->Ho = (H + 2 * u->pad - k) / stride + 1;
    u->Wo = (W + 2 * u->pad - k) / stride + 1;
    u->relu = relu;
    const ob_backend_ops *ops = m->base.dev->ops;
    u->direct = ops->conv_supported && ops->conv_forward && ops->conv_backward &&
                ops->conv_supported(m->base.dev, cin, cout, k, stride, u->pad);
    char nm[OB_NAME_MAX];
    int64_t ws[4] = {cout, cin, k, k}, cs[1] = {cout};
    snprintf(nm, sizeof nm, "%.40s.conv.w", name);
    u->i_w = add_slot(m, nm, OB_TAG_CONV, 4, ws, INIT_NORMAL, (float)sqrt(2.0 / (cin * k * k)));
    snprintf(nm, sizeof nm, "%.40s.gn.w", name);
    u->i_gw = add_slot(m, nm, OB_TAG_NORM, 1, cs, INIT_ONE, 0);
    snprintf(nm, sizeof nm, "%.40s.gn.b", name);
    u->i_gb = add_slot(m, nm, OB_TAG_NORM, 1, cs, INIT_ZERO, 0);
    int64_t per_img = (int64_t)u->Ho * u->Wo * cin * k * k; /* column floats of one image */
    u->ipc = m->B;
    if (m->chunk_bytes > 0) {
        int64_t fit = m->chunk_bytes / (per_img * (int64_t)sizeof(float));
        u->ipc = fit < 1 ? 1 : (fit > m->B ? m->B : (int)fit);
    }
    int64_t act = (int64_t)m->B * u->Ho * u->Wo * cout, col = (int64_t)u->ipc * per_img;
    if (!u->direct && (int64_t)cout * cin * k * k > m->max_w) m->max_w = (int64_t)cout * cin * k * k;
    int64_t inp = (int64_t)m->B * H * W * cin;
    if (act > m->max_act) m->max_act = act;
    if (inp > m->max_act) m->max_act = inp;
    if (!u->direct && col > m->max_col) m->max_col = col;
    return m->nunits++;
}

static void add_op(cnn *m, int kind, int u, int sc, int H, int W, int C)
{
    cop *o = &m->ops[m->nops++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->u = u;
    o->sc = sc;
    o->B = m->B;
    o->H = H;
    o->W = W;
    o->C = C;
}

/* The architecture: units, parameter slots and the op list. */
static ob_status build_net(cnn *m, ob_err *e)
{
    int maxu = 3 * m->stages * m->depth + 2, maxp = 3 * maxu + 4;
    m->units = calloc((size_t)maxu, sizeof *m->units);
    m->ops = calloc((size_t)maxu + (size_t)m->stages + 2, sizeof *m->ops);
    m->ps = calloc((size_t)maxp, sizeof *m->ps);
    if (!m->units || !m->ops || !m->ps) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    /* the images are square */
    /* cppcheck-suppress duplicateAssignExpression */
    int H = m->IMG, W = m->IMG, C = m->CIN;
    char nm[OB_NAME_MAX];
    if (m->residual) {
        int u = add_unit(m, "stem", C, m->width, 3, 1, H, W, 1);
        add_op(m, OP_UNIT, u, 0, H, W, C);
        C = m->width;
    }
    for (int s = 0; s < m->stages; s++) {
        int cs = m->width << s;
        if (!m->residual && s > 0) {
            if (H % 2 || W % 2)
                return ob_fail(e, OB_ERR_INPUT,
                               "%s.image = %d with %s.stages = %d: the %dx%d map of stage %d cannot be pooled 2x2; give "
                               "an image size divisible by %d, or fewer stages",
                               m->base.def->name, m->IMG, m->base.def->name, m->stages, H, W, s, 1 << (m->stages - 1));
            add_op(m, OP_POOL, -1, 0, H, W, C);
            H /= 2;
            W /= 2;
        }
        for (int d = 0; d < m->depth; d++) {
            if (!m->residual) {
                snprintf(nm, sizeof nm, "s%d.u%d", s, d);
                int u = add_unit(m, nm, C, cs, 3, 1, H, W, 1);
                add_op(m, OP_UNIT, u, 0, H, W, C);
            } else {
                int stride = (s > 0 && d == 0) ? 2 : 1;
                snprintf(nm, sizeof nm, "s%d.b%d.a", s, d);
                int ua = add_unit(m, nm, C, cs, 3, stride, H, W, 1);
                snprintf(nm, sizeof nm, "s%d.b%d.b", s, d);
                add_unit(m, nm, cs, cs, 3, 1, m->units[ua].Ho, m->units[ua].Wo, 0);
                int sc = stride != 1 || C != cs;
                if (sc) {
                    snprintf(nm, sizeof nm, "s%d.b%d.down", s, d);
                    add_unit(m, nm, C, cs, 1, stride, H, W, 0);
                }
                add_op(m, OP_BLOCK, ua, sc, H, W, C);
                H = m->units[ua].Ho;
                W = m->units[ua].Wo;
            }
            C = cs;
        }
    }
    m->Cl = C;
    m->HWl = H * W;
    for (int i = 0; i < m->nunits; i++)
        if (m->units[i].cout % m->G != 0)
            return ob_fail(e, OB_ERR_INPUT,
                           "%s.groups = %d does not divide the %d channels of unit %d; set groups to a divisor of "
                           "%s.width = %d (every stage's channels are a multiple of it)",
                           m->base.def->name, m->G, m->units[i].cout, i, m->base.def->name, m->width);
    int64_t fs[2] = {m->K, C}, bs[1] = {m->K};
    m->i_fcw = add_slot(m, "fc.w", OB_TAG_HEAD, 2, fs, INIT_NORMAL, (float)(1.0 / sqrt((double)C)));
    m->i_fcb = add_slot(m, "fc.b", OB_TAG_BIAS, 1, bs, INIT_ZERO, 0);
    return OB_OK;
}

static ob_status cnn_describe(ob_workload *w, ob_layout *l, ob_err *e)
{
    cnn *m = (cnn *)w;
    for (int i = 0; i < m->nps; i++)
        OB_TRY(ob_layout_add(l, m->ps[i].name, m->ps[i].tag, m->ps[i].ndim, m->ps[i].shape, NULL, e));
    return OB_OK;
}

#define DALLOC(ptr, count, type) OB_TRY(ob_dev_alloc(dev, (size_t)(count) * sizeof(type), (void **)&(ptr), e))

static ob_status cnn_setup(ob_workload *w, const ob_layout *l, ob_err *e)
{
    cnn *m = (cnn *)w;
    ob_device *dev = w->dev;
#define NEED(op) OB_TRY(OB_REQUIRE(dev, op, e))
    NEED(im2col);
    NEED(col2im);
    NEED(groupnorm_forward);
    NEED(groupnorm_backward);
    NEED(relu_forward);
    NEED(relu_backward);
    NEED(maxpool2_forward);
    NEED(maxpool2_backward);
    NEED(avgpool_forward);
    NEED(avgpool_backward);
    NEED(bias_add);
    NEED(bias_backward);
    NEED(xent_forward);
    NEED(xent_backward);
    NEED(synth_images);
#undef NEED
    for (int i = 0; i < m->nps; i++) {
        int k = ob_layout_find(l, m->ps[i].name);
        if (k < 0) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cnn: tensor '%s' missing from the layout", m->ps[i].name);
        m->ps[i].off = l->t[k].offset;
    }
    m->grad_total = l->total;
    const int B = m->B;
    const int64_t img = (int64_t)m->IMG * m->IMG * m->CIN;
    DALLOC(m->templates, (int64_t)m->K * img, float);
    DALLOC(m->img, B * img, float);
    DALLOC(m->labels, B, int32_t);
    /* wire the activations in forward order */
    const float *cur = m->img;
    for (int i = 0; i < m->nops; i++) {
        cop *o = &m->ops[i];
        if (o->kind == OP_POOL) {
            o->in = cur;
            DALLOC(o->out, (int64_t)B * (o->H / 2) * (o->W / 2) * o->C, float);
            cur = o->out;
            continue;
        }
        int nu = o->kind == OP_UNIT ? 1 : (o->sc ? 3 : 2);
        for (int j = 0; j < nu; j++) {
            cunit *u = &m->units[o->u + j];
            int64_t act = (int64_t)B * u->Ho * u->Wo * u->cout;
            u->in = (o->kind == OP_BLOCK && j == 1) ? m->units[o->u].out : cur;
            DALLOC(u->conv, act, float);
            DALLOC(u->out, act, float);
            DALLOC(u->mean, (int64_t)B * m->G, float);
            DALLOC(u->rstd, (int64_t)B * m->G, float);
        }
        o->in = cur;
        o->out = m->units[o->u + (o->kind == OP_BLOCK ? 1 : 0)].out;
        cur = o->out;
    }
    m->last = cur;
    DALLOC(m->feat, (int64_t)B * m->Cl, float);
    DALLOC(m->dfeat, (int64_t)B * m->Cl, float);
    DALLOC(m->logits, (int64_t)B * m->K, float);
    DALLOC(m->losses, B, float);
    DALLOC(m->loss_eval, 1, float);
    DALLOC(m->correct, 1, float);
    DALLOC(m->col, m->max_col, float);
    DALLOC(m->dcol, m->max_col, float);
    DALLOC(m->wperm, m->max_w, float);
    DALLOC(m->dwperm, m->max_w, float);
    for (int i = 0; i < 4; i++) DALLOC(m->g[i], m->max_act, float);
    DALLOC(m->sa, m->max_act, float);
    DALLOC(m->sb, m->max_act, float);
    float *h = malloc((size_t)(m->K * img) * sizeof *h);
    if (!h) return ob_fail(e, OB_ERR_NOMEM, "cnn: out of host memory");
    ob_status s = ob_cnn_templates(h, m->K, m->IMG, m->IMG, m->CIN, m->pairs, m->confusion, m->data_seed, e);
    if (s == OB_OK) s = dev->ops->upload(dev, m->templates, h, (size_t)(m->K * img) * sizeof *h, e);
    free(h);
    return s;
}

static ob_status cnn_init(ob_workload *w, float *params, ob_err *e)
{
    cnn *m = (cnn *)w;
    ob_device *dev = w->dev;
    for (int i = 0; i < m->nps; i++) {
        pslot *p = &m->ps[i];
        float *x = params + p->off;
        int64_t n = slot_numel(p);
        if (p->init == INIT_NORMAL)
            OB_TRY(dev->ops->rng_normal(dev, x, n, w->seed, OB_STREAM_INIT + (uint64_t)i, 0, 0.0f, p->std, e));
        else
            OB_TRY(dev->ops->fill(dev, x, p->init == INIT_ONE ? 1.0f : 0.0f, n, e));
    }
    return OB_OK;
}

static ob_status synth(cnn *m, uint64_t seed, uint64_t stream, uint64_t index0, ob_err *e)
{
    ob_device *dev = m->base.dev;
    ob_image_synth a = {
        .B = m->B, .H = m->IMG, .W = m->IMG, .C = m->CIN, .K = m->K, .max_shift = m->max_shift,
        .noise = (float)m->noise, .contrast_lo = (float)m->clo, .contrast_hi = (float)m->chi,
        .seed = seed, .stream = stream, .index0 = index0,
    };
    return dev->ops->synth_images(dev, &a, m->img, m->labels, m->templates, e);
}

/* The kernel (cout, cin, K, K) in the im2col column order (cout, K, K, cin). */
static ob_status kernel_perm(cnn *m, cunit *u, const float *params, const float **w, ob_err *e)
{
    ob_device *dev = m->base.dev;
    *w = PARAM(m, params, u->i_w);
    if (u->k == 1) return OB_OK;
    OB_TRY(dev->ops->heads_split(dev, m->wperm, *w, u->cout, u->cin, 1, u->k * u->k, 1, e));
    *w = m->wperm;
    return OB_OK;
}

/* conv (im2col + gemm, u->ipc images at a time) -> group norm -> ReLU */
static ob_status unit_forward(cnn *m, cunit *u, const float *params, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const ob_backend_ops *ops = dev->ops;
    const int B = m->B, rows = B * u->Ho * u->Wo, kc = u->cin * u->k * u->k, hwo = u->Ho * u->Wo;
    if (u->direct) { /* the backend's direct convolution, straight from the (cout, cin, K, K) kernel */
        OB_TRY(ops->conv_forward(dev, u->conv, u->in, PARAM(m, params, u->i_w), B, u->H, u->W, u->cin, u->cout, u->k,
                                   u->stride, u->pad, e)); /* (B, Ho, Wo, cout) */
    } else {
        const float *w;
        OB_TRY(kernel_perm(m, u, params, &w, e));
        for (int b0 = 0; b0 < B; b0 += u->ipc) {
            int nb = B - b0 < u->ipc ? B - b0 : u->ipc;
            OB_TRY(ops->im2col(dev, m->col, u->in + (int64_t)b0 * u->H * u->W * u->cin, nb, u->H, u->W, u->cin,
                               u->k, u->stride, u->pad, e)); /* (nb*Ho*Wo, kc) */
            OB_TRY(ops->gemm(dev, 0, 1, nb * hwo, u->cout, kc, 1.0f, m->col, kc, w, kc, 0.0f,
                             u->conv + (int64_t)b0 * hwo * u->cout, u->cout, e)); /* (nb, Ho, Wo, cout) */
        }
    }
    OB_TRY(ops->groupnorm_forward(dev, u->out, u->mean, u->rstd, u->conv, PARAM(m, params, u->i_gw),
                                  PARAM(m, params, u->i_gb), B, u->Ho * u->Wo, u->cout, m->G, e));
    if (u->relu) OB_TRY(ops->relu_forward(dev, u->out, u->out, (int64_t)rows * u->cout, e));
    return OB_OK;
}

/* From dout (gradient of u->out): parameter gradients, and dinp (B, H, W, cin)
 * overwritten when not NULL. Uses sa, sb, col, dcol. */
static ob_status unit_backward(cnn *m, cunit *u, const float *params, float *grads, const float *dout, float *dinp,
                               ob_err *e)
{
    ob_device *dev = m->base.dev;
    const ob_backend_ops *ops = dev->ops;
    const int B = m->B, rows = B * u->Ho * u->Wo, kc = u->cin * u->k * u->k;
    const float *g = dout;
    if (u->relu) {
        OB_TRY(ops->relu_backward(dev, m->sa, u->out, dout, (int64_t)rows * u->cout, e));
        g = m->sa;
    }
    OB_TRY(ops->groupnorm_backward(dev, m->sb, PARAM(m, grads, u->i_gw), PARAM(m, grads, u->i_gb), g, u->conv,
                                   PARAM(m, params, u->i_gw), u->mean, u->rstd, B, u->Ho * u->Wo, u->cout, m->G,
                                   e)); /* dconv (rows, cout) */
    if (u->direct) /* dW += and dinp from the direct convolution */
        return ops->conv_backward(dev, dinp, PARAM(m, grads, u->i_w), m->sb, u->in, PARAM(m, params, u->i_w), B, u->H,
                                    u->W, u->cin, u->cout, u->k, u->stride, u->pad, e);
    const int hwo = u->Ho * u->Wo;
    const int64_t img_in = (int64_t)u->H * u->W * u->cin;
    const float *w;
    OB_TRY(kernel_perm(m, u, params, &w, e));
    /* dW in the column order: straight into the gradient for a 1x1 kernel */
    float *dw = u->k == 1 ? PARAM(m, grads, u->i_w) : m->dwperm;
    for (int b0 = 0; b0 < B; b0 += u->ipc) {
        int nb = B - b0 < u->ipc ? B - b0 : u->ipc;
        const float *dconv = m->sb + (int64_t)b0 * hwo * u->cout; /* (nb*Ho*Wo, cout) */
        OB_TRY(ops->im2col(dev, m->col, u->in + b0 * img_in, nb, u->H, u->W, u->cin, u->k, u->stride, u->pad, e));
        OB_TRY(ops->gemm(dev, 1, 0, u->cout, kc, nb * hwo, 1.0f, dconv, u->cout, m->col, kc,
                         (b0 == 0 && u->k != 1) ? 0.0f : 1.0f, dw, kc, e)); /* dW (cout, K, K, cin) */
        if (dinp) {
            OB_TRY(ops->gemm(dev, 0, 0, nb * hwo, kc, u->cout, 1.0f, dconv, u->cout, w, kc, 0.0f, m->dcol, kc,
                             e)); /* dcol (nb*Ho*Wo, kc) */
            OB_TRY(ops->col2im(dev, dinp + b0 * img_in, m->dcol, nb, u->H, u->W, u->cin, u->k, u->stride, u->pad, e));
        }
    }
    /* back to (cout, cin, K, K); this unit is the only writer of its kernel's gradient */
    if (u->k != 1)
        OB_TRY(ops->heads_merge(dev, PARAM(m, grads, u->i_w), m->dwperm, u->cout, u->cin, 1, u->k * u->k, 1, e));
    (void)rows;
    return OB_OK;
}

/* Forward on the images in m->img: *loss (device) mean cross-entropy. */
static ob_status cnn_forward(cnn *m, const float *params, float *loss, float *correct, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const ob_backend_ops *ops = dev->ops;
    for (int i = 0; i < m->nops; i++) {
        cop *o = &m->ops[i];
        if (o->kind == OP_POOL) {
            OB_TRY(ops->maxpool2_forward(dev, o->out, o->in, o->B, o->H, o->W, o->C, e));
        } else if (o->kind == OP_UNIT) {
            OB_TRY(unit_forward(m, &m->units[o->u], params, e));
        } else {
            cunit *ua = &m->units[o->u], *ub = ua + 1;
            OB_TRY(unit_forward(m, ua, params, e));
            OB_TRY(unit_forward(m, ub, params, e));
            const float *sc = o->in;
            if (o->sc) {
                OB_TRY(unit_forward(m, ua + 2, params, e));
                sc = ua[2].out;
            }
            int64_t n = (int64_t)m->B * ub->Ho * ub->Wo * ub->cout;
            OB_TRY(ops->axpby(dev, n, 1.0f, sc, 1.0f, ub->out, e));      /* h + shortcut */
            OB_TRY(ops->relu_forward(dev, ub->out, ub->out, n, e));
        }
    }
    const int B = m->B, C = m->Cl, K = m->K;
    OB_TRY(ops->avgpool_forward(dev, m->feat, m->last, B, m->HWl, C, e)); /* (B, C) */
    OB_TRY(ops->gemm(dev, 0, 1, B, K, C, 1.0f, m->feat, C, PARAM(m, params, m->i_fcw), C, 0.0f, m->logits, K, e));
    OB_TRY(ops->bias_add(dev, m->logits, PARAM(m, params, m->i_fcb), B, K, e)); /* (B, K) */
    return ops->xent_forward(dev, m->logits, m->losses, m->logits, m->labels, B, K, loss, correct, e);
}

static ob_status cnn_backward(cnn *m, const float *params, float *grads, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const ob_backend_ops *ops = dev->ops;
    const int B = m->B, C = m->Cl, K = m->K;
    /* the mean over the whole batch, B*world images */
    OB_TRY(ops->xent_backward(dev, m->logits, m->logits, m->labels, B, K, 1.0f / (float)(B * m->world), e));
    OB_TRY(ops->bias_backward(dev, PARAM(m, grads, m->i_fcb), m->logits, B, K, e));
    OB_TRY(ops->gemm(dev, 0, 0, B, C, K, 1.0f, m->logits, K, PARAM(m, params, m->i_fcw), C, 0.0f, m->dfeat, C, e));
    OB_TRY(ops->gemm(dev, 1, 0, K, C, B, 1.0f, m->logits, K, m->feat, C, 1.0f, PARAM(m, grads, m->i_fcw), C, e));
    float *d = m->g[0]; /* gradient of the current op's output */
    OB_TRY(ops->avgpool_backward(dev, d, m->dfeat, B, m->HWl, C, e));
    int cur = 0;
    for (int i = m->nops - 1; i >= 0; i--) {
        cop *o = &m->ops[i];
        int first = i == 0; /* the input images need no gradient */
        int nx = (cur + 1) % 4;
        float *dx = m->g[nx];
        if (o->kind == OP_POOL) {
            OB_TRY(ops->maxpool2_backward(dev, dx, d, o->in, o->B, o->H, o->W, o->C, e));
        } else if (o->kind == OP_UNIT) {
            OB_TRY(unit_backward(m, &m->units[o->u], params, grads, d, first ? NULL : dx, e));
        } else {
            cunit *ua = &m->units[o->u], *ub = ua + 1;
            int64_t n = (int64_t)B * ub->Ho * ub->Wo * ub->cout;
            float *dh = m->g[(cur + 2) % 4], *dsc = m->g[(cur + 3) % 4];
            OB_TRY(ops->relu_backward(dev, d, ub->out, d, n, e)); /* d(h + shortcut) */
            OB_TRY(unit_backward(m, ub, params, grads, d, dh, e));  /* d unit_a out */
            OB_TRY(unit_backward(m, ua, params, grads, dh, first ? NULL : dx, e));
            if (!first) {
                int64_t nin = (int64_t)B * ua->H * ua->W * ua->cin;
                if (o->sc) {
                    OB_TRY(unit_backward(m, ua + 2, params, grads, d, dsc, e));
                    OB_TRY(ops->axpby(dev, nin, 1.0f, dsc, 1.0f, dx, e));
                } else {
                    OB_TRY(ops->axpby(dev, nin, 1.0f, d, 1.0f, dx, e));
                }
            } else if (o->sc) {
                OB_TRY(unit_backward(m, ua + 2, params, grads, d, NULL, e));
            }
        }
        d = dx;
        cur = nx;
    }
    return OB_OK;
}

static ob_status cnn_train_step(ob_workload *w, const float *params, float *grads, int64_t step, float *loss,
                                ob_err *e)
{
    cnn *m = (cnn *)w;
    ob_device *dev = w->dev;
    const uint64_t Bg = (uint64_t)m->B * (uint64_t)m->world;
    OB_TRY(synth(m, w->seed, OB_STREAM_DATA, (uint64_t)step * Bg + (uint64_t)m->rank * (uint64_t)m->B, e));
    OB_TRY(dev->ops->fill(dev, grads, 0.0f, m->grad_total, e));
    OB_TRY(cnn_forward(m, params, loss, NULL, e));
    if (m->world > 1) OB_TRY(dev->ops->axpby(dev, 1, 0.0f, loss, 1.0f / (float)m->world, loss, e));
    return cnn_backward(m, params, grads, e);
}

/* The held-out set is the same at every evaluation of a run (a pure function
 * of data_seed), and on the CPU drawing it again costs a normal per pixel,
 * as much as the images of eval_batches training steps. It is drawn once,
 * at the first evaluation, and kept on the host as bert keeps its own (host
 * memory, so not in the recorded peak of the backend's allocations); every
 * evaluation copies it back into the input buffer batch by batch, so it sees
 * the same bits. Only where the backend is the CPU: on a GPU the
 * synth_images kernel is cheaper than uploading the images it would replace.
 * Kept only by the replica that evaluates, freed with the workload; nothing
 * of it is checkpointed (a resumed run draws it again). A failed allocation
 * fails the evaluation, as the workload's other allocations fail its setup. */
static ob_status eval_cache(cnn *m, int parts, ob_err *e)
{
    ob_device *dev = m->base.dev;
    const int64_t img = (int64_t)m->B * m->IMG * m->IMG * m->CIN;
    m->ev_img = malloc((size_t)(parts * img) * sizeof *m->ev_img);
    m->ev_lab = malloc((size_t)parts * (size_t)m->B * sizeof *m->ev_lab);
    ob_status s = m->ev_img && m->ev_lab ? OB_OK : ob_fail(e, OB_ERR_NOMEM, "cnn: out of memory for the held-out set");
    for (int b = 0; b < parts && s == OB_OK; b++) {
        s = synth(m, m->data_seed, OB_STREAM_EVAL, (uint64_t)b * (uint64_t)m->B, e);
        if (s == OB_OK) s = dev->ops->download(dev, m->ev_img + b * img, m->img, (size_t)img * sizeof *m->img, e);
        if (s == OB_OK)
            s = dev->ops->download(dev, m->ev_lab + (int64_t)b * m->B, m->labels, (size_t)m->B * sizeof *m->labels, e);
    }
    if (s != OB_OK) {
        free(m->ev_img);
        free(m->ev_lab);
        m->ev_img = NULL;
        m->ev_lab = NULL;
    }
    return s;
}

static ob_status cnn_evaluate(ob_workload *w, const float *params, ob_eval *out, ob_err *e)
{
    cnn *m = (cnn *)w;
    ob_device *dev = w->dev;
    double tot = 0.0, hits = 0.0;
    /* held-out batch b is images b*Bg .. of (data_seed, EVAL), in world parts of B */
    const int parts = m->eval_batches * m->world;
    const int64_t img = (int64_t)m->B * m->IMG * m->IMG * m->CIN;
    if (m->cache_eval && !m->ev_img) OB_TRY(eval_cache(m, parts, e));
    for (int b = 0; b < parts; b++) {
        if (m->ev_img) {
            OB_TRY(dev->ops->upload(dev, m->img, m->ev_img + b * img, (size_t)img * sizeof *m->img, e));
            OB_TRY(dev->ops->upload(dev, m->labels, m->ev_lab + (int64_t)b * m->B, (size_t)m->B * sizeof *m->labels,
                                    e));
        } else {
            OB_TRY(synth(m, m->data_seed, OB_STREAM_EVAL, (uint64_t)b * (uint64_t)m->B, e));
        }
        OB_TRY(cnn_forward(m, params, m->loss_eval, m->correct, e));
        float l, c;
        OB_TRY(dev->ops->download(dev, &l, m->loss_eval, sizeof l, e));
        OB_TRY(dev->ops->download(dev, &c, m->correct, sizeof c, e));
        tot += l;
        hits += c;
    }
    out->loss = tot / parts;
    out->metric = hits / ((double)parts * m->B);
    out->floor = NAN;
    return OB_OK;
}

static void cnn_destroy(ob_workload *w)
{
    cnn *m = (cnn *)w;
    ob_device *dev = w->dev;
    for (int i = 0; i < m->nunits; i++) {
        ob_dev_free(dev, m->units[i].conv);
        ob_dev_free(dev, m->units[i].out);
        ob_dev_free(dev, m->units[i].mean);
        ob_dev_free(dev, m->units[i].rstd);
    }
    for (int i = 0; i < m->nops; i++)
        if (m->ops[i].kind == OP_POOL) ob_dev_free(dev, m->ops[i].out);
    float *ptrs[] = {m->templates, m->img, m->feat, m->dfeat, m->logits, m->losses, m->loss_eval, m->correct,
                     m->col, m->dcol, m->wperm, m->dwperm, m->g[0], m->g[1], m->g[2], m->g[3], m->sa, m->sb};
    for (size_t j = 0; j < sizeof ptrs / sizeof ptrs[0]; j++) ob_dev_free(dev, ptrs[j]);
    ob_dev_free(dev, m->labels);
    free(m->ev_img);
    free(m->ev_lab);
    free(m->units);
    free(m->ops);
    free(m->ps);
    free(m);
}

static const ob_workload_vt cnn_vt = {
    .describe = cnn_describe,
    .setup = cnn_setup,
    .init_params = cnn_init,
    .train_step = cnn_train_step,
    .evaluate = cnn_evaluate,
    .destroy = cnn_destroy,
};

static ob_status cnn_create_replica(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev,
                                    uint64_t seed, int rank, int world, ob_workload **out, ob_err *e)
{
    *out = NULL;
    const int Bg = (int)ob_hp_get(hp, "batch");
    OB_TRY(ob_workload_check_part(d, Bg, rank, world, e));
    cnn *m = calloc(1, sizeof *m);
    if (!m) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    m->base.vt = &cnn_vt;
    m->base.def = d;
    m->base.dev = dev;
    m->base.seed = seed;
    m->rank = rank;
    m->world = world;
    m->B = Bg / world;
    m->IMG = (int)ob_hp_get(hp, "image");
    m->CIN = (int)ob_hp_get(hp, "channels");
    m->K = (int)ob_hp_get(hp, "classes");
    m->width = (int)ob_hp_get(hp, "width");
    m->stages = (int)ob_hp_get(hp, "stages");
    m->depth = (int)ob_hp_get(hp, "depth");
    m->residual = ob_hp_get(hp, "residual") != 0;
    m->G = (int)ob_hp_get(hp, "groups");
    m->noise = ob_hp_get(hp, "noise");
    m->max_shift = (int)ob_hp_get(hp, "max_shift");
    m->clo = ob_hp_get(hp, "contrast_lo");
    m->chi = ob_hp_get(hp, "contrast_hi");
    m->pairs = (int)ob_hp_get(hp, "confusable_pairs");
    m->confusion = ob_hp_get(hp, "confusion");
    m->data_seed = (uint64_t)ob_hp_get(hp, "data_seed");
    m->eval_batches = (int)ob_hp_get(hp, "eval_batches");
    m->base.items_per_step = Bg;
    /* On the CPU a convolution runs a few images at a time so that their
     * im2col columns (about 1 MiB) stay in cache between im2col and the gemm;
     * a GPU takes the whole batch in one gemm. */
    int64_t kib = (int64_t)ob_hp_get(hp, "conv_chunk_kib");
    m->chunk_bytes = kib > 0 ? kib << 10 : (strcmp(dev->ops->name, "cpu") == 0 ? (int64_t)1 << 20 : 0);
    /* in double: batch and eval_batches are each allowed up to 2^20 and 2^16 */
    const double ev_bytes = (double)m->eval_batches * Bg *
                            ((double)m->IMG * m->IMG * m->CIN * sizeof(float) + sizeof(int32_t));
    m->cache_eval = strcmp(dev->ops->name, "cpu") == 0 && ev_bytes <= (double)CNN_EVAL_CACHE_MAX;
    ob_status s = OB_OK;
    if (m->clo > m->chi)
        s = ob_fail(e, OB_ERR_INPUT, "%s.contrast_lo = %g exceeds %s.contrast_hi = %g; set lo <= hi", d->name,
                    m->clo, d->name, m->chi);
    else if ((int64_t)m->width << (m->stages - 1) > 65536)
        s = ob_fail(e, OB_ERR_INPUT,
                    "%s.width = %d with %s.stages = %d gives more than 65536 channels (width * 2^(stages - 1)); "
                    "lower width or stages",
                    d->name, m->width, d->name, m->stages);
    if (s == OB_OK) s = build_net(m, e);
    if (s != OB_OK) {
        free(m->units);
        free(m->ops);
        free(m->ps);
        free(m);
        return s;
    }
    *out = &m->base;
    return OB_OK;
}

static ob_status cnn_create(const ob_workload_def *d, const ob_hp_values *hp, ob_device *dev, uint64_t seed,
                            ob_workload **out, ob_err *e)
{
    return cnn_create_replica(d, hp, dev, seed, 0, 1, out, e);
}

const ob_workload_def ob_wl_cnn_tiny = {
    .name = "cnn-tiny",
    .summary = "conv net on 16x16 synthetic class images (2 conv units, group norm; CI-fast)",
    .hp = cnn_tiny_hp,
    .n_hp = (int)(sizeof cnn_tiny_hp / sizeof cnn_tiny_hp[0]),
    .metric_name = "accuracy",
    .items_name = "images",
    .create = cnn_create,
    .create_replica = cnn_create_replica,
};

const ob_workload_def ob_wl_cnn_small = {
    .name = "cnn-small",
    .summary = "conv net on 32x32 synthetic class images (6 conv units 32-64-128, group norm)",
    .hp = cnn_small_hp,
    .n_hp = (int)(sizeof cnn_small_hp / sizeof cnn_small_hp[0]),
    .metric_name = "accuracy",
    .items_name = "images",
    .create = cnn_create,
    .create_replica = cnn_create_replica,
};

const ob_workload_def ob_wl_cnn_base = {
    .name = "cnn-base",
    .summary = "ResNet-18-style net (4 stages of 2 basic blocks, 64-512 channels, group norm) on 32x32 images; GPU",
    .hp = cnn_base_hp,
    .n_hp = (int)(sizeof cnn_base_hp / sizeof cnn_base_hp[0]),
    .metric_name = "accuracy",
    .items_name = "images",
    .create = cnn_create,
    .create_replica = cnn_create_replica,
};
