/* tests/test_optim.c - the pipeline around the rules: routing (hybrid
 * defaults, user rules, explicit routing and the error for an unrouted
 * parameter, non-matrices in a matrix group, bad rules), exact state bytes,
 * matrix groups (a batch of same-shape matrices and a conv kernel give what
 * each gives alone), text options, the guard's rollback after a planted NaN,
 * stop, and the state a checkpoint keeps (the guard's too: a run resumed
 * after a snapshot or within a streak of bad steps goes on as the
 * uninterrupted one). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "optimizers/optim.h"
#include "optimizers/optim_impl.h"

typedef struct tensor_spec {
    const char *name;
    ob_tag tag;
    int ndim;
    int64_t shape[4];
} tensor_spec;

static const tensor_spec model[] = {
    {"emb", OB_TAG_EMBEDDING, 2, {50, 16}}, {"l1.w", OB_TAG_MATRIX, 2, {16, 32}},
    {"l1.b", OB_TAG_BIAS, 1, {32}},         {"ln.g", OB_TAG_NORM, 1, {16}},
    {"conv.w", OB_TAG_CONV, 4, {8, 3, 3, 3}}, {"head.w", OB_TAG_HEAD, 2, {16, 10}},
    {"l2.w", OB_TAG_MATRIX, 2, {16, 32}},
};
#define N_MODEL (int)(sizeof model / sizeof model[0])

typedef struct rig {
    ob_device dev;
    ob_layout lay;
    ob_optim *o;
    float *p, *g, *loss;
    ob_step_record *rec;
} rig;

/* Create + routes + route; 0 and the error in *e when routing fails. */
static int rig_route(rig *r, const char *opt, const char *sets, const char *train, const tensor_spec *ts, int nt,
                     const char *const *routes, ob_err *e)
{
    memset(r, 0, sizeof *r);
    ob_layout_init(&r->lay);
    for (int i = 0; i < nt; i++)
        CHECK_OK(ob_layout_add(&r->lay, ts[i].name, ts[i].tag, ts[i].ndim, ts[i].shape, NULL, e), e);
    const ob_optimizer_def *d = ob_optimizer_find(opt);
    ob_hp_values hp, tr;
    ob_hp_defaults(&hp, d->hp, d->n_hp);
    ob_hp_defaults(&tr, ob_train_hp_defs, ob_train_hp_count);
    if (sets) CHECK_OK(ob_hp_set_list(&hp, opt, sets, e), e);
    if (train) CHECK_OK(ob_hp_set_list(&tr, "train", train, e), e);
    CHECK_OK(ob_optim_create(d, &hp, &tr, &r->o, e), e);
    for (; routes && *routes; routes++)
        if (ob_optim_add_route(r->o, *routes, e) != OB_OK) return 0;
    return ob_optim_route(r->o, &r->lay, e) == OB_OK;
}

/* when set, the ops table rig_setup's device runs with (a copy of the
 * CPU's with some slots wrapped or emptied) */
static const ob_backend_ops *rig_ops;

static void rig_setup(rig *r)
{
    ob_err e;
    CHECK_OK(ob_layout_finalize(&r->lay, &e), &e);
    CHECK_OK(ob_device_open(&r->dev, "cpu", 0, &e), &e);
    if (rig_ops) r->dev.ops = rig_ops;
    size_t bytes = (size_t)r->lay.total * sizeof(float);
    CHECK_OK(ob_dev_alloc(&r->dev, bytes, (void **)&r->p, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, bytes, (void **)&r->g, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, sizeof(float), (void **)&r->loss, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, sizeof(ob_step_record), (void **)&r->rec, &e), &e);
    CHECK_OK(ob_optim_setup(r->o, &r->dev, &r->lay, &e), &e);
    ob_optim_set_total_steps(r->o, 100);
}

static void rig_close(rig *r)
{
    ob_optim_destroy(r->o);
    ob_layout_free(&r->lay);
    if (r->dev.ops) ob_device_close(&r->dev);
}

static int group_of(const rig *r, const char *name)
{
    int i = ob_layout_find(&r->lay, name);
    return i < 0 ? -99 : r->lay.t[i].group;
}

static void test_hybrid_routing(void)
{
    rig r;
    ob_err e;
    CHECK(rig_route(&r, "muon", NULL, NULL, model, N_MODEL, NULL, &e));
    CHECK(group_of(&r, "l1.w") == 0 && group_of(&r, "l2.w") == 0 && group_of(&r, "conv.w") == 0);
    CHECK(group_of(&r, "emb") == 1 && group_of(&r, "head.w") == 1 && group_of(&r, "l1.b") == 1 &&
          group_of(&r, "ln.g") == 1);
    char buf[1024];
    ob_optim_describe_routing(r.o, &r.lay, buf, sizeof buf);
    CHECK(strstr(buf, "group 0 (muon, Newton-Schulz on matrices): l1.w[16x32 matrix] conv.w[8x3x3x3 conv] "
                      "l2.w[16x32 matrix]") != NULL);
    CHECK(strstr(buf, "group 1 (adamw): emb[50x16 embedding] l1.b[32 bias] ln.g[16 norm] head.w[16x10 head]") != NULL);
    rig_close(&r);
    /* with filter_bias_and_bn the listing says which tensors lose their decay
     * (the AdamW group's biases and norms; a matrix group keeps its decay) */
    CHECK(rig_route(&r, "muon", "filter_bias_and_bn=true", NULL, model, N_MODEL, NULL, &e));
    ob_optim_describe_routing(r.o, &r.lay, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "group 0 (muon, Newton-Schulz on matrices): l1.w[16x32 matrix] conv.w[8x3x3x3 conv] "
                          "l2.w[16x32 matrix]") != NULL &&
                  strstr(buf, "group 1 (adamw): emb[50x16 embedding] l1.b[32 bias, no decay] ln.g[16 norm, no decay] "
                              "head.w[16x10 head]") != NULL,
              "%s", buf);
    rig_close(&r);

    /* user rules come first, in order */
    const char *const mine[] = {"name=l2.* -> adamw", "tag=embedding|head & ndim=2 -> main", NULL};
    CHECK(rig_route(&r, "root", NULL, NULL, model, N_MODEL, mine, &e));
    CHECK(group_of(&r, "l2.w") == 1 && group_of(&r, "emb") == 0 && group_of(&r, "head.w") == 0 &&
          group_of(&r, "l1.w") == 0);
    rig_close(&r);

    /* explicit routing: a parameter no rule matches is an error naming it */
    const char *const only[] = {"tag=matrix -> muon", "ndim=1 -> adamw", NULL};
    CHECK(!rig_route(&r, "muon", "routing=explicit", NULL, model, N_MODEL, only, &e));
    CHECK(e.status == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "muon: parameter 'emb' (tag embedding, shape 50x16) matches no routing rule") != NULL);
    rig_close(&r);

    /* a non-matrix routed to the matrix group */
    const char *const bias[] = {"tag=bias -> muon", NULL};
    CHECK(!rig_route(&r, "muon", NULL, NULL, model, N_MODEL, bias, &e));
    CHECK(strstr(e.msg, "parameter 'l1.b' (tag bias, shape 32) is routed to the matrix group 'muon'") != NULL);
    rig_close(&r);

    /* bad rules */
    const char *const bad[][2] = {{"tag=matrix adamw", NULL}, {"tag=matirx -> adamw", NULL},
                                  {"ndim=7 -> adamw", NULL},  {"shape=2 -> adamw", NULL},
                                  {"* -> sgd", NULL}};
    const char *want[] = {"is not of the form 'MATCH -> GROUP'", "unknown tag 'matirx'", "ndim '7' is not in 1..4",
                          "unknown key 'shape'", "no group 'sgd' (groups: muon (or 'main'), adamw)"};
    for (int i = 0; i < 5; i++) {
        CHECK(!rig_route(&r, "muon", NULL, NULL, model, N_MODEL, bad[i], &e));
        CHECK_MSG(e.status == OB_ERR_INPUT && strstr(e.msg, want[i]), "%s", e.msg);
        rig_close(&r);
    }
    /* single-group optimizers route everything to it */
    CHECK(rig_route(&r, "lion", NULL, NULL, model, N_MODEL, NULL, &e));
    for (int i = 0; i < N_MODEL; i++) CHECK(r.lay.t[i].group == 0);
    rig_close(&r);
}

static void test_state_bytes(void)
{
    rig r;
    ob_err e;
    CHECK(rig_route(&r, "muon", NULL, NULL, model, N_MODEL, NULL, &e));
    rig_setup(&r);
    int64_t g0 = r.lay.group_end[0] - r.lay.group_begin[0], g1 = r.lay.group_end[1] - r.lay.group_begin[1];
    /* muon: 1 float per matrix element; the AdamW group: 2 per element; padding included */
    CHECK(ob_optim_state_bytes(r.o) == (size_t)(g0 + 2 * g1) * sizeof(float));
    rig_close(&r);
    CHECK(rig_route(&r, "rmsprop", "centered=true,momentum=0.9", NULL, model, N_MODEL, NULL, &e));
    rig_setup(&r);
    CHECK(ob_optim_state_bytes(r.o) == (size_t)(3 * r.lay.total) * sizeof(float));
    rig_close(&r);
    CHECK(rig_route(&r, "sgd", NULL, NULL, model, N_MODEL, NULL, &e));
    rig_setup(&r);
    CHECK(ob_optim_state_bytes(r.o) == 0);
    rig_close(&r);
}

static void fill_grads(rig *r, int step)
{
    for (int i = 0; i < r->lay.n; i++) {
        const ob_tensor *t = &r->lay.t[i];
        for (int64_t k = 0; k < t->numel; k++)
            r->g[t->offset + k] = ob_rng_normal(77, (uint64_t)(step * 100 + (t->name[0] + t->name[1])), (uint64_t)k);
    }
}

static void fill_params(rig *r)
{
    for (int i = 0; i < r->lay.n; i++) {
        const ob_tensor *t = &r->lay.t[i];
        for (int64_t k = 0; k < t->numel; k++)
            r->p[t->offset + k] = 0.1f * ob_rng_normal(78, (uint64_t)t->name[0], (uint64_t)k);
    }
}

/* A tensor in a batch (or a conv kernel) is updated as it is alone. */
static void test_matrix_batches(void)
{
    rig all, one;
    ob_err e;
    CHECK(rig_route(&all, "root", NULL, NULL, model, N_MODEL, NULL, &e));
    rig_setup(&all);
    fill_params(&all);
    const tensor_spec solo[] = {{"l2.w", OB_TAG_MATRIX, 2, {16, 32}}, {"conv.w", OB_TAG_MATRIX, 2, {8, 27}}};
    /* three steps of each tensor alone, with the gradients the full model gets */
    float *want[2];
    for (int k = 0; k < 2; k++) {
        CHECK(rig_route(&one, "root", NULL, NULL, &solo[k], 1, NULL, &e));
        rig_setup(&one);
        const ob_tensor *ta = &all.lay.t[ob_layout_find(&all.lay, solo[k].name)], *to = &one.lay.t[0];
        memcpy(one.p + to->offset, all.p + ta->offset, (size_t)ta->numel * 4);
        for (int s = 1; s <= 3; s++) {
            fill_grads(&all, s);
            memcpy(one.g + to->offset, all.g + ta->offset, (size_t)ta->numel * 4);
            CHECK_OK(ob_optim_step(one.o, one.p, one.g, one.loss, s, one.rec, &e), &e);
        }
        want[k] = malloc((size_t)to->numel * 4);
        memcpy(want[k], one.p + to->offset, (size_t)to->numel * 4);
        rig_close(&one);
    }
    for (int s = 1; s <= 3; s++) {
        fill_grads(&all, s);
        CHECK_OK(ob_optim_step(all.o, all.p, all.g, all.loss, s, all.rec, &e), &e);
    }
    for (int k = 0; k < 2; k++) {
        const ob_tensor *ta = &all.lay.t[ob_layout_find(&all.lay, solo[k].name)];
        double worst = 0;
        for (int64_t i = 0; i < ta->numel; i++) worst = fmax(worst, fabs(all.p[ta->offset + i] - want[k][i]));
        CHECK_MSG(worst < 1e-6, "%s: %g from the tensor alone", solo[k].name, worst);
        free(want[k]);
    }
    rig_close(&all);
}

/* A matrix routed out of the matrix group is updated by its own group alone,
 * also where one of the same shape stays in the matrix group (they are not
 * batched together): muon with l2.w (16x32, as l1.w) routed to adamw. */
static void test_routed_out_of_batch(void)
{
    rig all, one;
    ob_err e;
    const char *const out[] = {"name=l2.* -> adamw", NULL};
    CHECK(rig_route(&all, "muon", NULL, NULL, model, N_MODEL, out, &e));
    CHECK(group_of(&all, "l1.w") == 0 && group_of(&all, "l2.w") == 1);
    rig_setup(&all);
    fill_params(&all);
    const tensor_spec solo = {"l2.w", OB_TAG_MATRIX, 2, {16, 32}};
    CHECK(rig_route(&one, "muon", NULL, NULL, &solo, 1, out, &e));
    rig_setup(&one);
    const ob_tensor *ta = &all.lay.t[ob_layout_find(&all.lay, "l2.w")], *to = &one.lay.t[0];
    memcpy(one.p + to->offset, all.p + ta->offset, (size_t)ta->numel * 4);
    for (int s = 1; s <= 3; s++) {
        fill_grads(&all, s);
        memcpy(one.g + to->offset, all.g + ta->offset, (size_t)ta->numel * 4);
        CHECK_OK(ob_optim_step(all.o, all.p, all.g, all.loss, s, all.rec, &e), &e);
        CHECK_OK(ob_optim_step(one.o, one.p, one.g, one.loss, s, one.rec, &e), &e);
    }
    double worst = 0;
    for (int64_t i = 0; i < ta->numel; i++) worst = fmax(worst, fabs(all.p[ta->offset + i] - one.p[to->offset + i]));
    CHECK_MSG(worst < 1e-6, "l2.w: %g from its AdamW steps alone", worst);
    rig_close(&one);
    rig_close(&all);
}

/* The CPU's ops, and calls of the batch solvers with more than one matrix
 * (eigenvectors, QR, ordering) and the batches Newton-Schulz normalized. */
static const ob_backend_ops *real_ops;
static int solves_batched[3], norm_batches[8], n_norm_batches;

static ob_status count_eigvecs(ob_device *dev, int n, int count, const float *A, int64_t sa, float *S, int64_t ss,
                               ob_err *e)
{
    solves_batched[0] += count > 1;
    return real_ops->sym_eigvecs_batch(dev, n, count, A, sa, S, ss, e);
}

static ob_status count_qr(ob_device *dev, int n, int count, const float *W, int64_t sw, float *S, int64_t ss,
                          ob_err *e)
{
    solves_batched[1] += count > 1;
    return real_ops->qr_orth_batch(dev, n, count, W, sw, S, ss, e);
}

static ob_status count_order(ob_device *dev, int n, int count, const float *S, int64_t ss, const float *T,
                             int64_t st, int32_t *perm, ob_err *e)
{
    solves_batched[2] += count > 1;
    return real_ops->eig_order_batch(dev, n, count, S, ss, T, st, perm, e);
}

static ob_status count_normalize(ob_device *dev, float *x, int batch, int64_t n, int64_t stride, float eps,
                                 int add_eps, ob_err *e)
{
    if (n_norm_batches < 8) norm_batches[n_norm_batches++] = batch;
    return real_ops->batched_normalize(dev, x, batch, n, stride, eps, add_eps, e);
}

/* a budget of 16 items */
static int64_t sixteen_items(const ob_device *dev, int64_t item_floats)
{
    (void)dev;
    return 16 * item_floats;
}

/* Same-shape tensors at one spacing in the arena are stepped together, in
 * one batched pass per run: a matrix group's momentum and update (three runs
 * of the 8x12 bucket below: spacing 96, 160, 96 floats; one run of the 6x10
 * one, spacing 160), every op of Adafactor (the same runs, a run of the
 * two vectors, and the 5x5 tensors cut where their second moments' spacing
 * changes) and SOAP's steps (2-D runs: its first update and the refreshes
 * of its bases too). Every tensor is updated as it is alone, with the
 * backend's batch ops and without them (one pass or one solve per tensor). */
static void test_matrix_runs(void)
{
    static const tensor_spec runs[] = {
        {"a", OB_TAG_MATRIX, 2, {8, 12}}, {"b", OB_TAG_MATRIX, 2, {8, 12}}, {"c", OB_TAG_MATRIX, 2, {8, 12}},
        {"p", OB_TAG_MATRIX, 2, {6, 10}}, {"d", OB_TAG_MATRIX, 2, {8, 12}}, {"q", OB_TAG_MATRIX, 2, {6, 10}},
        {"e", OB_TAG_MATRIX, 2, {8, 12}}, {"r", OB_TAG_MATRIX, 2, {6, 10}}, {"f", OB_TAG_MATRIX, 2, {8, 12}},
        {"g", OB_TAG_MATRIX, 2, {8, 12}}, {"h", OB_TAG_MATRIX, 2, {8, 12}}, {"v", OB_TAG_BIAS, 1, {7}},
        {"w", OB_TAG_BIAS, 1, {7}},
        /* 5x5 at one spacing in the arena (128 floats) but not in Adafactor's
         * second moments (64, then 80: 6x16 and 3x32 have 96 elements each,
         * but 6 + 16 and 3 + 32 row and column means) */
        {"i", OB_TAG_MATRIX, 2, {5, 5}}, {"m", OB_TAG_MATRIX, 2, {6, 16}}, {"j", OB_TAG_MATRIX, 2, {5, 5}},
        {"n", OB_TAG_MATRIX, 2, {3, 32}}, {"k", OB_TAG_MATRIX, 2, {5, 5}},
        /* tensors of more than two dimensions: Adafactor factors their last
         * two over a batch of the others (12 x (3, 5) and 2 x (70, 3)) */
        {"l", OB_TAG_CONV, 4, {4, 3, 3, 5}}, {"o", OB_TAG_CONV, 4, {4, 3, 3, 5}}, {"s", OB_TAG_CONV, 4, {4, 3, 3, 5}},
        {"t", OB_TAG_CONV, 3, {2, 70, 3}}, {"z", OB_TAG_BIAS, 1, {5}}, {"u", OB_TAG_CONV, 3, {2, 70, 3}},
        {"A", OB_TAG_MATRIX, 2, {12, 8}}, {"B", OB_TAG_MATRIX, 2, {12, 8}}, {"C", OB_TAG_MATRIX, 2, {12, 8}},
    };
    const int nr = (int)(sizeof runs / sizeof runs[0]);
    /* SOAP also past refreshes of its bases (every 2 or 3 steps), with its
     * vectors preconditioned, and with only the 8-wide mode of the 12x8
     * tensors (max_precond_dim 9) */
    static const struct {
        const char *opt, *sets;
        int steps, refresh; /* SOAP refreshes its bases (with the NaN step) */
    } cases[] = {{"muon", NULL, 3, 0},
                 {"root", NULL, 3, 0},
                 {"adafactor", NULL, 3, 0},
                 {"lamb", NULL, 3, 0},
                 {"lamb", "trust_clip=1,weight_decay=0.1", 3, 0},
                 {"lars", "momentum=0.9,weight_decay=1e-4", 3, 0},
                 {"lars", "momentum=0.9,nesterov=1,trust_clip=1,weight_decay=1e-2", 3, 0},
                 {"soap", NULL, 3, 0},
                 {"soap", "precondition_1d=1,max_precond_dim=9,precondition_frequency=2", 7, 1},
                 {"soap", "precondition_frequency=3", 8, 1},
                 /* the NaN below lands on a refresh (step 3), and on the first update */
                 {"soap", "precondition_frequency=2", 2, 1},
                 {"soap", NULL, 0, 0}};
    for (size_t oi = 0; oi < sizeof cases / sizeof cases[0]; oi++) {
        const char *opt = cases[oi].opt, *sets = cases[oi].sets;
        const int steps = cases[oi].steps;
        for (int batch_op = 0; batch_op < 2; batch_op++) {
            rig all, one;
            ob_err e;
            CHECK(rig_route(&all, opt, sets, NULL, runs, nr, NULL, &e));
            rig_setup(&all);
            const ob_backend_ops *ops = all.dev.ops;
            ob_backend_ops no_batch = *ops, counted = *ops;
            no_batch.elementwise_step_batch = NULL;
            no_batch.sym_eigvecs_batch = NULL;
            no_batch.qr_orth_batch = NULL;
            no_batch.eig_order_batch = NULL;
            real_ops = ops;
            counted.sym_eigvecs_batch = count_eigvecs;
            counted.qr_orth_batch = count_qr;
            counted.eig_order_batch = count_order;
            memset(solves_batched, 0, sizeof solves_batched);
            all.dev.ops = batch_op ? &counted : &no_batch;
            fill_params(&all);
            CHECK_MSG(all.lay.t[ob_layout_find(&all.lay, "b")].offset - all.lay.t[ob_layout_find(&all.lay, "a")].offset ==
                              96 &&
                          all.lay.t[ob_layout_find(&all.lay, "e")].offset -
                                  all.lay.t[ob_layout_find(&all.lay, "d")].offset ==
                              160,
                      "the layout is not the one this test was written for");
            float *before = malloc((size_t)all.lay.total * 4);
            memcpy(before, all.p, (size_t)all.lay.total * 4);
            for (int s = 1; s <= steps; s++) {
                fill_grads(&all, s);
                CHECK_OK(ob_optim_step(all.o, all.p, all.g, all.loss, s, all.rec, &e), &e);
            }
            for (int k = 0; k < nr; k++) {
                CHECK(rig_route(&one, opt, sets, NULL, &runs[k], 1, NULL, &e));
                rig_setup(&one);
                const ob_tensor *ta = &all.lay.t[ob_layout_find(&all.lay, runs[k].name)], *to = &one.lay.t[0];
                memcpy(one.p + to->offset, before + ta->offset, (size_t)ta->numel * 4);
                for (int s = 1; s <= steps; s++) {
                    fill_grads(&all, s);
                    memcpy(one.g + to->offset, all.g + ta->offset, (size_t)ta->numel * 4);
                    CHECK_OK(ob_optim_step(one.o, one.p, one.g, one.loss, s, one.rec, &e), &e);
                }
                double worst = 0, moved = 0;
                for (int64_t i = 0; i < ta->numel; i++) {
                    worst = fmax(worst, fabs(all.p[ta->offset + i] - one.p[to->offset + i]));
                    moved = fmax(moved, fabs(all.p[ta->offset + i] - before[ta->offset + i]));
                }
                /* (SOAP's first update only builds its bases) */
                CHECK_MSG(worst < 1e-6 && (moved > 1e-4 || steps < 2),
                          "%s, %s (batch op %d): %g from the tensor alone, moved %g", opt, runs[k].name, batch_op,
                          worst, moved);
                rig_close(&one);
            }
            /* a NaN in one gradient: the guard skips the step, and neither the
             * parameters nor any state (the blobs a checkpoint keeps) change */
            ob_state_blob bl[32];
            const int nb = ob_optim_state_blobs(all.o, bl, 32);
            size_t sbytes = 0;
            for (int i = 0; i < nb; i++) sbytes += bl[i].bytes;
            unsigned char *st0 = malloc(sbytes), *sp0 = st0;
            for (int i = 0; i < nb; i++, sp0 += bl[i - 1].bytes) memcpy(sp0, bl[i].ptr, bl[i].bytes);
            memcpy(before, all.p, (size_t)all.lay.total * 4);
            fill_grads(&all, steps + 1);
            all.g[all.lay.t[ob_layout_find(&all.lay, "d")].offset + 5] = NAN;
            CHECK_OK(ob_optim_step(all.o, all.p, all.g, all.loss, steps + 1, all.rec, &e), &e);
            CHECK_MSG(!memcmp(before, all.p, (size_t)all.lay.total * 4), "%s (batch op %d): a skipped step moved "
                      "the parameters", opt, batch_op);
            sp0 = st0;
            for (int i = 0; i < nb; i++) {
                /* (the update count t is state too, and a skipped update still counts) */
                if (strcmp(bl[i].name, "optim.t") != 0)
                    CHECK_MSG(!memcmp(sp0, bl[i].ptr, bl[i].bytes), "%s (batch op %d): a skipped step changed %s",
                              opt, batch_op, bl[i].name);
                sp0 += bl[i].bytes;
            }
            free(st0);
            free(before);
            /* SOAP's runs solve their bases matrix by matrix in one batch op
             * call: at the first update, and at each refresh */
            if (batch_op && !strcmp(opt, "soap"))
                CHECK_MSG(solves_batched[0] > 0 && (solves_batched[1] > 0) == cases[oi].refresh &&
                              (solves_batched[2] > 0) == cases[oi].refresh,
                          "soap (%s): batched eigenvector, QR and ordering calls %d, %d, %d", sets ? sets : "defaults",
                          solves_batched[0], solves_batched[1], solves_batched[2]);
            all.dev.ops = ops;
            rig_close(&all);
        }
    }
}

/* Batches of same-shape items: cut as evenly as they go, at most the
 * backend's batch_floats per workspace (the CPU's caches) or the
 * optimizer's own limit without it. */
typedef struct cut_item {
    int64_t off, size;
} cut_item;

static int cut_same(const void *ctx, int i, int j)
{
    const cut_item *it = ctx;
    return it[i].size == it[j].size;
}

static void cut_where(const void *ctx, int i, int64_t *off, int64_t *aux, int64_t *size)
{
    const cut_item *it = ctx;
    *off = it[i].off;
    *aux = 0;
    *size = it[i].size;
}

static void test_run_cuts(void)
{
    CHECK(ob_balanced_cap(18, 16) == 9);
    CHECK(ob_balanced_cap(17, 16) == 9);
    CHECK(ob_balanced_cap(16, 16) == 16);
    CHECK(ob_balanced_cap(3, 16) == 16);
    CHECK(ob_balanced_cap(1000, 32) == 32);
    CHECK(ob_balanced_cap(100, 32) == 25);
    CHECK(ob_balanced_cap(5, 0) == 1);
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    /* the CPU's budget: 128K floats, or 8 items per thread when larger */
    const int64_t b64 = dev.ops->batch_floats(&dev, 4096), big = dev.ops->batch_floats(&dev, 1 << 20);
    CHECK_MSG(b64 >= (1 << 17) && b64 <= (1 << 17) + 4096 * 8 * 256, "batch_floats(4096) = %lld", (long long)b64);
    CHECK_MSG(big >= (int64_t)8 << 20, "batch_floats(1M) = %lld", (long long)big);
    CHECK(ob_batch_budget(&dev, 1 << 20, 1 << 22) == 1 << 22);
    /* 100 evenly spaced items of 4096 floats and 3 of 10: with the CPU's
     * budget even runs of at most its count, without one runs of 65535 */
    enum { N = 103 };
    cut_item items[N], work[N];
    for (int i = 0; i < N; i++) items[i] = (cut_item){(int64_t)i * 5000, i < 100 ? 4096 : 10};
    ob_run runs[N];
    int n_runs = 0;
    for (int with = 0; with < 2; with++) {
        ob_backend_ops ops = *dev.ops;
        const ob_backend_ops *keep = dev.ops;
        if (!with) ops.batch_floats = NULL;
        dev.ops = &ops;
        memcpy(work, items, sizeof items);
        const ob_run_items it = {work, sizeof *work, N, work, cut_same, cut_where};
        CHECK_OK(ob_make_runs(&dev, &it, (int64_t)1 << 30, runs, &n_runs, &e), &e);
        dev.ops = keep;
        const int cap = with ? (int)(b64 / 4096) : 65535, want = (100 + cap - 1) / cap;
        CHECK_MSG(n_runs == want + 1, "with batch_floats %d: %d runs, want %d", with, n_runs, want + 1);
        int total = 0, most = 0, least = 1 << 30;
        for (int r = 0; r < n_runs - 1; r++) {
            total += runs[r].count;
            most = runs[r].count > most ? runs[r].count : most;
            least = runs[r].count < least ? runs[r].count : least;
            CHECK(runs[r].count == 1 || runs[r].sp == 5000);
        }
        CHECK_MSG(total == 100 && most <= cap && most - least <= 1, "with batch_floats %d: runs of %d to %d (cap %d)",
                  with, least, most, cap);
        CHECK(runs[n_runs - 1].count == 3);
    }
    /* 32 items at one spacing and one more of their shape elsewhere: a run
     * of 32 (the budget's count, at least 32) and one of 1, not 17 + 16 */
    for (int i = 0; i < 33; i++) items[i] = (cut_item){i < 32 ? (int64_t)i * 5000 : 1000000, 4096};
    const ob_run_items it33 = {items, sizeof *items, 33, items, cut_same, cut_where};
    CHECK_OK(ob_make_runs(&dev, &it33, (int64_t)1 << 30, runs, &n_runs, &e), &e);
    CHECK_MSG(n_runs == 2 && runs[0].count == 32 && runs[1].count == 1, "33 items: %d runs, the first of %d", n_runs,
              runs[0].count);
    ob_device_close(&dev);
    /* a Muon bucket: 18 same-shape matrices in batches of at most 16 are
     * normalized (and orthogonalized) as 9 and 9 */
    static const tensor_spec eighteen[] = {
        {"a", OB_TAG_MATRIX, 2, {8, 12}}, {"b", OB_TAG_MATRIX, 2, {8, 12}}, {"c", OB_TAG_MATRIX, 2, {8, 12}},
        {"d", OB_TAG_MATRIX, 2, {8, 12}}, {"e", OB_TAG_MATRIX, 2, {8, 12}}, {"f", OB_TAG_MATRIX, 2, {8, 12}},
        {"g", OB_TAG_MATRIX, 2, {8, 12}}, {"h", OB_TAG_MATRIX, 2, {8, 12}}, {"i", OB_TAG_MATRIX, 2, {8, 12}},
        {"j", OB_TAG_MATRIX, 2, {8, 12}}, {"k", OB_TAG_MATRIX, 2, {8, 12}}, {"l", OB_TAG_MATRIX, 2, {8, 12}},
        {"m", OB_TAG_MATRIX, 2, {8, 12}}, {"n", OB_TAG_MATRIX, 2, {8, 12}}, {"o", OB_TAG_MATRIX, 2, {8, 12}},
        {"p", OB_TAG_MATRIX, 2, {8, 12}}, {"q", OB_TAG_MATRIX, 2, {8, 12}}, {"r", OB_TAG_MATRIX, 2, {8, 12}}};
    ob_backend_ops wrapped = ob_cpu_backend;
    real_ops = &ob_cpu_backend;
    wrapped.batch_floats = sixteen_items;
    wrapped.batched_normalize = count_normalize;
    rig r;
    CHECK(rig_route(&r, "muon", NULL, NULL, eighteen, 18, NULL, &e));
    rig_ops = &wrapped;
    rig_setup(&r);
    rig_ops = NULL;
    fill_params(&r);
    fill_grads(&r, 1);
    n_norm_batches = 0;
    CHECK_OK(ob_optim_step(r.o, r.p, r.g, r.loss, 1, r.rec, &e), &e);
    CHECK_MSG(n_norm_batches == 2 && norm_batches[0] == 9 && norm_batches[1] == 9,
              "18 matrices, at most 16 a batch: %d batches, of %d and %d", n_norm_batches, norm_batches[0],
              norm_batches[1]);
    rig_close(&r);
}

static void test_options(void)
{
    rig r;
    ob_err e;
    CHECK(rig_route(&r, "muon", NULL, NULL, model, 1, NULL, &e));
    CHECK(ob_optim_set_option(r.o, "coeff_file", "x.tsv", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "muon has no text setting 'coeff_file' (it has: route)") != NULL);
    CHECK_OK(ob_optim_set_option(r.o, "route", "tag=embedding -> main", &e), &e);
    rig_close(&r);
    CHECK(rig_route(&r, "root", NULL, NULL, model, 1, NULL, &e));
    CHECK(ob_optim_set_option(r.o, "coeff_file", "/nonexistent/c.tsv", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "cannot open '/nonexistent/c.tsv'") != NULL);
    rig_close(&r);
}

/* Rollback: a planted NaN at step 6 restores the snapshot of update 4; the
 * run then continues exactly as a run that never saw steps 5 and 6. */
static void test_rollback(void)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {20}}};
    rig a, b;
    ob_err e;
    CHECK(rig_route(&a, "adam", "lr=0.01", "on_nonfinite=rollback,snapshot_every=2", v, 1, NULL, &e));
    rig_setup(&a);
    CHECK(rig_route(&b, "adam", "lr=0.01", NULL, v, 1, NULL, &e));
    rig_setup(&b);
    for (int i = 0; i < 20; i++) a.p[i] = b.p[i] = (float)i / 20;
    float grads[8][20];
    for (int s = 0; s < 8; s++)
        for (int i = 0; i < 20; i++) grads[s][i] = ob_rng_normal(5, (uint64_t)s, (uint64_t)i);
    for (int s = 1; s <= 5; s++) {
        memcpy(a.g, grads[s - 1], sizeof grads[0]);
        CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, s, a.rec, &e), &e);
    }
    memcpy(a.g, grads[5], sizeof grads[0]);
    a.g[7] = NAN;
    CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, 6, a.rec, &e), &e);
    CHECK(a.rec->skipped == 1);
    int64_t st;
    char kind[32], detail[192];
    CHECK(ob_optim_pop_event(a.o, &st, kind, sizeof kind, detail, sizeof detail) == 1);
    CHECK(st == 6 && !strcmp(kind, "rollback"));
    CHECK_MSG(strstr(detail, "1 non-finite gradient values at step 6: parameters and optimizer state restored from "
                             "step 4") != NULL, "%s", detail);
    CHECK(ob_optim_pop_event(a.o, &st, kind, sizeof kind, detail, sizeof detail) == 0);
    CHECK(!ob_optim_stopped(a.o, NULL, NULL, 0));
    /* the reference: steps 1-4, then step 7's gradient as its fifth update */
    for (int s = 1; s <= 4; s++) {
        memcpy(b.g, grads[s - 1], sizeof grads[0]);
        CHECK_OK(ob_optim_step(b.o, b.p, b.g, b.loss, s, b.rec, &e), &e);
    }
    CHECK(memcmp(a.p, b.p, sizeof grads[0]) == 0);
    memcpy(a.g, grads[6], sizeof grads[0]);
    memcpy(b.g, grads[6], sizeof grads[0]);
    CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, 7, a.rec, &e), &e);
    CHECK_OK(ob_optim_step(b.o, b.p, b.g, b.loss, 5, b.rec, &e), &e);
    CHECK(memcmp(a.p, b.p, sizeof grads[0]) == 0);
    /* the update count is state a checkpoint keeps */
    ob_state_blob blobs[16];
    int nb = ob_optim_state_blobs(a.o, blobs, 16);
    int have_t = 0, have_snap = 0;
    for (int i = 0; i < nb && i < 16; i++) {
        if (!strcmp(blobs[i].name, "optim.t")) have_t = *(int64_t *)blobs[i].ptr == 5;
        if (!strcmp(blobs[i].name, "guard.snap_params")) have_snap = 1;
    }
    CHECK(have_t && have_snap);
    rig_close(&a);
    rig_close(&b);

    /* max_bad_steps consecutive bad steps despite rollback: stopped */
    CHECK(rig_route(&a, "sgd", "lr=0.1", "on_nonfinite=rollback,max_bad_steps=2", v, 1, NULL, &e));
    rig_setup(&a);
    a.g[0] = 1;
    CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, 1, a.rec, &e), &e);
    *a.loss = INFINITY;
    CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, 2, a.rec, &e), &e);
    CHECK(!ob_optim_stopped(a.o, NULL, NULL, 0));
    /* the snapshot taken before the first update is of step 0, not of step 1 */
    CHECK(ob_optim_pop_event(a.o, &st, kind, sizeof kind, detail, sizeof detail) == 1);
    CHECK_MSG(st == 2 && !strcmp(kind, "rollback") &&
                  strstr(detail, "a non-finite loss at step 2: parameters and optimizer state restored from step 0"),
              "%s", detail);
    CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, 3, a.rec, &e), &e);
    char why[192];
    CHECK(ob_optim_stopped(a.o, &st, why, sizeof why) && st == 2);
    CHECK(strstr(why, "2 consecutive non-finite steps despite rollback") != NULL);
    CHECK_NEAR(a.p[0], 0.0, 0); /* rolled back to the start (snapshot of update 0) */
    rig_close(&a);
    /* consecutive ones: a good step between two bad ones starts the count again
     * (bad at 2, 4 and 5: stopped at 5, the streak from step 4) */
    CHECK(rig_route(&a, "sgd", "lr=0.1", "on_nonfinite=rollback,max_bad_steps=2", v, 1, NULL, &e));
    rig_setup(&a);
    a.g[0] = 1;
    for (int s = 1; s <= 5; s++) {
        *a.loss = s == 2 || s >= 4 ? INFINITY : 1.0f;
        CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, s, a.rec, &e), &e);
        const int stopped = ob_optim_stopped(a.o, &st, NULL, 0);
        CHECK_MSG(stopped == (s == 5), "step %d: stopped %d", s, stopped);
    }
    CHECK(ob_optim_stopped(a.o, &st, NULL, 0) && st == 4);
    rig_close(&a);
}

static void test_stop(void)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {4}}};
    rig r;
    ob_err e;
    CHECK(rig_route(&r, "sgd", "lr=0.1", "on_nonfinite=stop", v, 1, NULL, &e));
    rig_setup(&r);
    r.g[0] = 1;
    CHECK_OK(ob_optim_step(r.o, r.p, r.g, r.loss, 1, r.rec, &e), &e);
    CHECK_NEAR(r.p[0], -0.1, 1e-7);
    r.g[1] = NAN;
    CHECK_OK(ob_optim_step(r.o, r.p, r.g, r.loss, 2, r.rec, &e), &e);
    int64_t st;
    char why[192];
    CHECK(ob_optim_stopped(r.o, &st, why, sizeof why) && st == 2);
    CHECK(strstr(why, "non-finite gradient values at step 2 (train.on_nonfinite = stop)") != NULL);
    /* later steps fill the record and change nothing */
    r.g[1] = 0;
    *r.loss = 3;
    CHECK_OK(ob_optim_step(r.o, r.p, r.g, r.loss, 3, r.rec, &e), &e);
    CHECK_NEAR(r.p[0], -0.1, 1e-7);
    CHECK(r.rec->loss == 3);
    char kind[32], detail[192];
    CHECK(ob_optim_pop_event(r.o, &st, kind, sizeof kind, detail, sizeof detail) && !strcmp(kind, "stopped"));
    rig_close(&r);
}

/* on_nonfinite = none: with no clipping the statistics are summed inside the
 * update (elementwise_step_stats); parameters, state and the recorded norm
 * must be those of the two-pass path, and a non-finite step is applied. */
static void test_no_guard(void)
{
    /* several statistics chunks, a matrix group (Muon) and an elementwise one */
    const tensor_spec v[] = {{"w", OB_TAG_MATRIX, 2, {96, 400}}, {"b", OB_TAG_BIAS, 1, {9000}}};
    const char *opts[] = {"adamw", "muon"};
    for (int oi = 0; oi < 2; oi++) {
        rig a, b;
        ob_err e;
        CHECK(rig_route(&a, opts[oi], "lr=0.01", "on_nonfinite=none", v, 2, NULL, &e));
        rig_setup(&a);
        CHECK(rig_route(&b, opts[oi], "lr=0.01", NULL, v, 2, NULL, &e));
        rig_setup(&b);
        int64_t n = a.lay.total;
        CHECK(n == b.lay.total);
        for (int64_t i = 0; i < n; i++) a.p[i] = b.p[i] = 0.1f * ob_rng_normal(3, 0, (uint64_t)i);
        for (int s = 1; s <= 4; s++) {
            for (int64_t i = 0; i < n; i++) a.g[i] = b.g[i] = ob_rng_normal(4, (uint64_t)s, (uint64_t)i);
            *a.loss = *b.loss = 1.0f;
            CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, s, a.rec, &e), &e);
            CHECK_OK(ob_optim_step(b.o, b.p, b.g, b.loss, s, b.rec, &e), &e);
            CHECK_MSG(memcmp(a.p, b.p, (size_t)n * sizeof(float)) == 0, "%s: fused statistics changed the update",
                      opts[oi]);
            CHECK_MSG(a.rec->grad_norm == b.rec->grad_norm && a.rec->skipped == 0,
                      "%s: recorded norm %.9g vs %.9g", opts[oi], (double)a.rec->grad_norm, (double)b.rec->grad_norm);
        }
        /* a NaN gradient: applied (the parameter becomes NaN), flagged, not stopped */
        const ob_tensor *tb = &a.lay.t[ob_layout_find(&a.lay, "b")];
        int64_t k = tb->offset + tb->numel - 1;
        a.g[k] = NAN;
        CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, 5, a.rec, &e), &e);
        CHECK(a.rec->skipped == 1 && isnan(a.rec->grad_norm) && isnan(a.p[k]));
        CHECK(!ob_optim_stopped(a.o, NULL, NULL, 0));
        rig_close(&a);
        rig_close(&b);
    }
}

/* Steps from..to of grads (step s takes grads[s - 1]), as updates first_t, first_t + 1, ... */
static void run_steps(rig *r, const float (*grads)[20], int from, int to, int64_t first_t)
{
    ob_err e;
    for (int s = from; s <= to; s++) {
        memcpy(r->g, grads[s - 1], 20 * sizeof(float));
        CHECK_OK(ob_optim_step(r->o, r->p, r->g, r->loss, first_t + (s - from), r->rec, &e), &e);
    }
}

/* Rollback: a NaN restores the snapshot (update 4 with snapshot_every = 2,
 * update 0 with 100); the run then continues exactly as one that never saw
 * the steps since, the parameters and the evaluation point alike (for the
 * schedule-free optimizers, the averaging weights are rebuilt for the update
 * count; for SOAP, the preconditioners and bases are restored). */
static void check_rollback(const char *opt, const char *sets, int every, uint64_t seed)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {20}}};
    rig a, b;
    ob_err e;
    float grads[10][20];
    for (int s = 0; s < 10; s++)
        for (int i = 0; i < 20; i++) grads[s][i] = ob_rng_normal(seed, (uint64_t)s, (uint64_t)i);
    char train[64];
    snprintf(train, sizeof train, "on_nonfinite=rollback,snapshot_every=%d", every);
    const int bad = every == 2 ? 5 : 2;
    const int64_t from = every == 2 ? 4 : 0;
    CHECK(rig_route(&a, opt, sets, train, v, 1, NULL, &e));
    rig_setup(&a);
    CHECK(rig_route(&b, opt, sets, NULL, v, 1, NULL, &e));
    rig_setup(&b);
    for (int i = 0; i < 20; i++) a.p[i] = b.p[i] = (float)i / 20;
    run_steps(&a, (const float (*)[20])grads, 1, bad - 1, 1);
    memcpy(a.g, grads[bad - 1], sizeof grads[0]);
    a.g[3] = NAN;
    CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, bad, a.rec, &e), &e);
    CHECK(a.rec->skipped == 1);
    run_steps(&a, (const float (*)[20])grads, bad + 1, bad + 3, bad + 1);
    run_steps(&b, (const float (*)[20])grads, 1, (int)from, 1);
    run_steps(&b, (const float (*)[20])grads, bad + 1, bad + 3, from + 1);
    CHECK_MSG(memcmp(a.p, b.p, sizeof grads[0]) == 0, "%s: rollback to update %lld", opt, (long long)from);
    float *xa, *xb;
    CHECK_OK(ob_optim_eval_params(a.o, a.p, &xa, &e), &e);
    CHECK_OK(ob_optim_eval_params(b.o, b.p, &xb, &e), &e);
    CHECK(memcmp(xa, xb, sizeof grads[0]) == 0);
    rig_close(&a);
    rig_close(&b);
}

/* Resume: after 4 steps, a fresh optimizer takes the state blobs (and the
 * parameters); steps 5-10 (and the evaluation point) then equal the
 * uninterrupted run's, bit for bit. */
static void check_resume(const char *opt, const char *sets, uint64_t seed)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {20}}};
    rig a, c;
    ob_err e;
    float grads[10][20];
    for (int s = 0; s < 10; s++)
        for (int i = 0; i < 20; i++) grads[s][i] = ob_rng_normal(seed, (uint64_t)s, (uint64_t)i);
    CHECK(rig_route(&a, opt, sets, NULL, v, 1, NULL, &e));
    rig_setup(&a);
    CHECK(rig_route(&c, opt, sets, NULL, v, 1, NULL, &e));
    rig_setup(&c);
    for (int i = 0; i < 20; i++) a.p[i] = (float)i / 20;
    run_steps(&a, (const float (*)[20])grads, 1, 4, 1);
    ob_state_blob ba[16], bc[16];
    int na = ob_optim_state_blobs(a.o, ba, 16), nc = ob_optim_state_blobs(c.o, bc, 16);
    CHECK(na == nc && na <= 16);
    for (int i = 0; i < na && i < 16; i++) {
        CHECK(!strcmp(ba[i].name, bc[i].name) && ba[i].bytes == bc[i].bytes);
        memcpy(bc[i].ptr, ba[i].ptr, ba[i].bytes);
    }
    memcpy(c.p, a.p, sizeof grads[0]);
    run_steps(&a, (const float (*)[20])grads, 5, 10, 5);
    run_steps(&c, (const float (*)[20])grads, 5, 10, 5);
    CHECK_MSG(memcmp(a.p, c.p, sizeof grads[0]) == 0, "%s: the resumed optimizer drifted", opt);
    float *xa, *xc;
    CHECK_OK(ob_optim_eval_params(a.o, a.p, &xa, &e), &e);
    CHECK_OK(ob_optim_eval_params(c.o, c.p, &xc, &e), &e);
    CHECK(memcmp(xa, xc, sizeof grads[0]) == 0);
    rig_close(&a);
    rig_close(&c);
}

/* Schedule-free AdamW against a float64 reference of the method (lr warmup,
 * lr_max-weighted average, L2 at y): y after every step, the evaluation
 * point x = lerp(y, z, 1 - 1/beta1) in a buffer of its own (the parameters
 * untouched), none before the first update; and a rollback that continues
 * exactly as a run that never saw the bad steps (the weights follow the
 * update count). */
static void test_schedule_free(void)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {20}}};
    const double lr = 0.05, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.01, warm = 3, power = 2.0;
    rig a;
    ob_err e;
    CHECK(rig_route(&a, "adamw_sf", "lr=0.05,beta2=0.99,weight_decay=0.01,warmup_steps=3", NULL, v, 1, NULL, &e));
    rig_setup(&a);
    double y[20], z[20], vv[20], lr_max = -1, wsum = 0;
    for (int i = 0; i < 20; i++) a.p[i] = (float)(y[i] = z[i] = (float)i / 20 - 0.3), vv[i] = 0;
    float *at = NULL;
    CHECK_OK(ob_optim_eval_params(a.o, a.p, &at, &e), &e);
    CHECK(at == a.p); /* no update yet: the parameters */
    /* the lr the curves record includes the optimizer's own warmup */
    CHECK_NEAR(ob_optim_lr_in_effect(a.o, 1), 0.05 / 3, 1e-12);
    CHECK_NEAR(ob_optim_lr_in_effect(a.o, 3), 0.05, 1e-12);
    CHECK_NEAR(ob_optim_lr_in_effect(a.o, 9), 0.05, 1e-12);
    double worst = 0, worst_x = 0;
    for (int t = 1; t <= 8; t++) {
        for (int i = 0; i < 20; i++) a.g[i] = ob_rng_normal(9, (uint64_t)t, (uint64_t)i);
        double lrt = lr * (t - 1 < warm ? t / warm : 1.0);
        if (lrt > lr_max) lr_max = lrt;
        double w = pow(lr_max, power);
        wsum += w;
        double ckp1 = w / wsum, bc2 = 1 - pow(b2, t);
        for (int i = 0; i < 20; i++) {
            double g = a.g[i];
            vv[i] = b2 * vv[i] + (1 - b2) * g * g;
            double u = g / (sqrt(vv[i] / bc2) + eps) + wd * y[i];
            y[i] = y[i] + ckp1 * (z[i] - y[i]) + lrt * (b1 * (1 - ckp1) - 1) * u;
            z[i] -= lrt * u;
        }
        CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, t, a.rec, &e), &e);
        float before[20];
        memcpy(before, a.p, sizeof before);
        CHECK_OK(ob_optim_eval_params(a.o, a.p, &at, &e), &e);
        CHECK(at != a.p && memcmp(before, a.p, sizeof before) == 0);
        for (int i = 0; i < 20; i++) {
            double x = y[i] + (1 - 1 / b1) * (z[i] - y[i]);
            if (fabs(a.p[i] - y[i]) > worst) worst = fabs(a.p[i] - y[i]);
            if (fabs(at[i] - x) > worst_x) worst_x = fabs(at[i] - x);
        }
    }
    CHECK_MSG(worst < 2e-6, "y differs from the reference by %g", worst);
    CHECK_MSG(worst_x < 2e-6, "x differs from the reference by %g", worst_x);
    rig_close(&a);

    /* rollback to update 4 (a NaN at step 5) */
    check_rollback("adamw_sf", "lr=0.05,warmup_steps=3", 2, 11);
}

/* Schedule-free SGD against a float64 reference of schedulefree.SGDScheduleFree
 * (lr warmup times train.schedule, an lr_max-weighted average with k^r, L2 at
 * y): y and z after every step, the evaluation point x = lerp(y, z,
 * 1 - 1/momentum) in a buffer of its own; a cosine schedule over 10 steps
 * makes lr_max differ from the lr of the step. Then a rollback (to update 4,
 * and to update 0, where z starts again at the restored parameters) and a
 * resumed optimizer (its state blobs copied into a fresh one, whose weights'
 * cache starts empty) each continue exactly as the run without the break. */
static void test_schedule_free_sgd(void)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {20}}};
    const double lr = 0.3, mom = 0.8, wd = 0.05, warm = 3, rr = 1.0, power = 1.5;
    rig a;
    ob_err e;
    CHECK(rig_route(&a, "sgd_sf", "lr=0.3,momentum=0.8,weight_decay=0.05,warmup_steps=3,r=1,weight_lr_power=1.5",
                    "schedule=cosine,min_lr=0.01", v, 1, NULL, &e));
    rig_setup(&a);
    ob_optim_set_total_steps(a.o, 10);
    CHECK(ob_optim_state_bytes(a.o) == (size_t)a.lay.total * sizeof(float)); /* z alone */
    double y[20], z[20], lr_max = -1, wsum = 0;
    for (int i = 0; i < 20; i++) a.p[i] = (float)(y[i] = z[i] = (float)i / 20 - 0.3);
    float *at = NULL;
    CHECK_OK(ob_optim_eval_params(a.o, a.p, &at, &e), &e);
    CHECK(at == a.p); /* no update yet: the parameters */
    CHECK_NEAR(ob_optim_lr_in_effect(a.o, 2), ob_optim_lr(a.o, 2) * 2 / 3, 1e-12);
    CHECK_NEAR(ob_optim_lr_in_effect(a.o, 4), ob_optim_lr(a.o, 4), 1e-12);
    const float *zs = NULL;
    ob_state_blob blobs[16];
    int nb = ob_optim_state_blobs(a.o, blobs, 16);
    for (int i = 0; i < nb && i < 16; i++)
        if (!strcmp(blobs[i].name, "group0.state0")) zs = blobs[i].ptr;
    CHECK(zs != NULL);
    double worst = 0, worst_z = 0, worst_x = 0;
    for (int t = 1; t <= 10; t++) {
        for (int i = 0; i < 20; i++) a.g[i] = ob_rng_normal(19, (uint64_t)t, (uint64_t)i);
        double lrt = ob_optim_lr(a.o, t) * (t - 1 < warm ? t / warm : 1.0);
        if (lrt > lr_max) lr_max = lrt;
        double w = pow(t, rr) * pow(lr_max, power);
        wsum += w;
        double ckp1 = w / wsum;
        for (int i = 0; i < 20; i++) {
            double u = (double)a.g[i] + wd * y[i];
            y[i] = (1 - ckp1) * y[i] + ckp1 * z[i] + lrt * (mom * (1 - ckp1) - 1) * u;
            z[i] -= lrt * u;
        }
        CHECK_OK(ob_optim_step(a.o, a.p, a.g, a.loss, t, a.rec, &e), &e);
        CHECK_NEAR(a.rec->lr, lrt, 1e-7 * lr);
        float before[20];
        memcpy(before, a.p, sizeof before);
        CHECK_OK(ob_optim_eval_params(a.o, a.p, &at, &e), &e);
        CHECK(at != a.p && memcmp(before, a.p, sizeof before) == 0);
        for (int i = 0; i < 20; i++) {
            double x = y[i] + (1 - 1 / mom) * (z[i] - y[i]);
            worst = fmax(worst, fabs(a.p[i] - y[i]));
            worst_z = fmax(worst_z, fabs(zs[i] - z[i]));
            worst_x = fmax(worst_x, fabs(at[i] - x));
        }
    }
    CHECK_MSG(lr_max > ob_optim_lr(a.o, 10) * 2, "the schedule must take the lr below lr_max");
    CHECK_MSG(worst < 2e-6, "sgd_sf: y differs from the reference by %g", worst);
    CHECK_MSG(worst_z < 2e-6, "sgd_sf: z differs from the reference by %g", worst_z);
    CHECK_MSG(worst_x < 2e-6, "sgd_sf: x differs from the reference by %g", worst_x);
    rig_close(&a);

    const char *sets = "lr=0.2,weight_decay=0.01,warmup_steps=3,r=0.5";
    /* rollback to update 4 (a NaN at step 5) and to update 0 (snapshot_every
     * 100, a NaN at step 2: z starts again from the restored parameters) */
    check_rollback("sgd_sf", sets, 2, 21);
    check_rollback("sgd_sf", sets, 100, 21);

    check_resume("sgd_sf", sets, 21);
}

/* SOAP's state beyond its two roles (preconditioners, bases: the group's aux
 * arena) survives a rollback and a resume bit for bit; with
 * precondition_frequency 2 the bases are refreshed before and after the
 * snapshot. */
static void test_soap_state(void)
{
    const char *sets = "lr=0.05,precondition_1d=1,precondition_frequency=2";
    check_rollback("soap", sets, 2, 31);
    check_rollback("soap", sets, 100, 31);
    check_resume("soap", sets, 31);
}

/* Adafactor's second moments (the group's aux arena) through a rollback and
 * a resume, bit for bit. */
static void test_adafactor_state(void)
{
    const char *sets = "lr=0.05,weight_decay=0.01";
    check_rollback("adafactor", sets, 2, 41);
    check_rollback("adafactor", sets, 100, 41);
    check_resume("adafactor", sets, 41);
}

/* LAMB's moments and LARS's momentum buffer (the groups' roles, stepped run
 * by run) through a rollback and a resume, bit for bit. */
static void test_lamb_state(void)
{
    const char *sets = "lr=0.05,weight_decay=0.01";
    check_rollback("lamb", sets, 2, 41);
    check_rollback("lamb", sets, 100, 41);
    check_resume("lamb", sets, 41);
    const char *lars = "lr=2,momentum=0.9,weight_decay=5e-4";
    check_rollback("lars", lars, 2, 41);
    check_rollback("lars", lars, 100, 41);
    check_resume("lars", lars, 41);
}

/* A fresh optimizer that takes from's state blobs and parameters (a resume). */
static void resume_into(rig *from, rig *to)
{
    ob_state_blob bf[32], bt[32];
    int nf = ob_optim_state_blobs(from->o, bf, 32), nt = ob_optim_state_blobs(to->o, bt, 32);
    CHECK(nf == nt && nf <= 32);
    for (int i = 0; i < nf && i < nt && i < 32; i++) {
        CHECK(!strcmp(bf[i].name, bt[i].name) && bf[i].bytes == bt[i].bytes);
        memcpy(bt[i].ptr, bf[i].ptr, bf[i].bytes);
    }
    memcpy(to->p, from->p, (size_t)from->lay.total * sizeof(float));
}

/* The guard's state through a resume (the blobs a checkpoint keeps): a run
 * resumed after a snapshot rolls back to it as the uninterrupted one does
 * (the same step named, the spike guard's window restored with it, so the
 * scores after it agree), and one resumed within a streak of bad steps
 * stops where the uninterrupted one stops. */
static void test_resume_guard(void)
{
    const tensor_spec v[] = {{"x", OB_TAG_VECTOR, 1, {20}}};
    const char *train = "on_nonfinite=rollback,snapshot_every=2,max_bad_steps=2,spike_z_loss=1000,spike_window=2";
    rig a, c, d;
    ob_err e;
    CHECK(rig_route(&a, "adam", "lr=0.01", train, v, 1, NULL, &e));
    rig_setup(&a);
    CHECK(rig_route(&c, "adam", "lr=0.01", train, v, 1, NULL, &e));
    rig_setup(&c);
    CHECK(rig_route(&d, "adam", "lr=0.01", train, v, 1, NULL, &e));
    rig_setup(&d);
    for (int i = 0; i < 20; i++) a.p[i] = (float)i / 20;
    /* step s: loss 2 + s / 10 (NaN at steps 5, 7 and 8), gradients of seed 13 */
    rig *both[2] = {&a, NULL};
    for (int s = 1; s <= 8; s++) {
        if (s == 5) both[1] = &c;
        if (s == 8) both[1] = &d;
        if (s == 5) resume_into(&a, &c); /* after the snapshot of update 4 */
        if (s == 8) resume_into(&a, &d); /* within a streak: step 7 was bad */
        for (int k = 0; k < 2; k++) {
            rig *r = both[k];
            if (!r) continue;
            for (int i = 0; i < 20; i++) r->g[i] = ob_rng_normal(13, (uint64_t)s, (uint64_t)i);
            *r->loss = s == 5 || s >= 7 ? NAN : 2.0f + 0.1f * (float)s;
            CHECK_OK(ob_optim_step(r->o, r->p, r->g, r->loss, s, r->rec, &e), &e);
        }
        if (s == 5 || s == 6) {
            /* the rollback of step 5 names update 4's step; step 6's scores and parameters agree */
            CHECK_MSG(memcmp(a.p, c.p, 20 * sizeof(float)) == 0, "step %d: the resumed run drifted", s);
            CHECK(s == 5 || isfinite(a.rec->spike_z[0])); /* step 6 is scored: the restored window is full */
            CHECK_MSG(a.rec->spike_z[0] == c.rec->spike_z[0] || (isnan(a.rec->spike_z[0]) && isnan(c.rec->spike_z[0])),
                      "step %d: score %g, resumed %g", s, a.rec->spike_z[0], c.rec->spike_z[0]);
            for (int k = 0; k < 2; k++) {
                int64_t st;
                char kind[32], detail[192];
                rig *r = k ? &c : &a;
                int got = ob_optim_pop_event(r->o, &st, kind, sizeof kind, detail, sizeof detail);
                CHECK_MSG(got == (s == 5) && (s != 5 || strstr(detail, "restored from step 4")), "%s, step %d: %s",
                          k ? "resumed" : "uninterrupted", s, got ? detail : "no event");
            }
        }
    }
    int64_t sa = -1, sd = -1;
    CHECK_MSG(ob_optim_stopped(a.o, &sa, NULL, 0) && ob_optim_stopped(d.o, &sd, NULL, 0) && sa == 7 && sd == 7,
              "stopped at %lld and, resumed within the streak, %lld", (long long)sa, (long long)sd);
    rig_close(&a);
    rig_close(&c);
    rig_close(&d);
}

int main(void)
{
    test_hybrid_routing();
    test_state_bytes();
    test_matrix_batches();
    test_routed_out_of_batch();
    test_matrix_runs();
    test_run_cuts();
    test_options();
    test_rollback();
    test_resume_guard();
    test_stop();
    test_no_guard();
    test_schedule_free();
    test_schedule_free_sgd();
    test_soap_state();
    test_adafactor_state();
    test_lamb_state();
    return check_done();
}
