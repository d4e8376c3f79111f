/* tests/test_filter_decay.c - filter_bias_and_bn in every optimizer that has
 * it. timm's create_optimizer puts biases, norms and 1-D tensors in a
 * parameter group without weight decay; so with the filter on, each tensor
 * must follow, bit for bit, the trajectory it has in a run without the
 * filter: with the weight decay (matrices, embeddings, heads, conv kernels)
 * or with the decay set to 0 (biases, norms, vectors). Three runs per
 * optimizer and per training setting (no guard: the statistics fused into
 * the update; and train.clip_norm), over a model-like layout where the two
 * kinds alternate and a norm is 2-D; the filter must also change something
 * (a vacuous filter fails). The hybrid optimizers (muon, root) filter their
 * AdamW group's decay (adamw_wd; weight_decay with adamw_style=moonlight,
 * root's default). A test of the values against torch's algorithm is
 * tests/test_adam_filter.c (and the lamb, lars tests); this one holds every
 * optimizer to the same definition of the setting.
 *
 * Also: every optimizer with a weight decay has the setting, except those
 * listed in no_filter[] (README, Known limits); and the CPU's
 * elementwise_step_spans, which steps a filtered group in one pass, against
 * one step per span (test_spans_op).
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "optim_rig.h"

#define STEPS 20
#define NT 8

static const struct {
    const char *name;
    ob_tag tag;
    int nd;
    int64_t shape[4];
} tensors[NT] = {
    {"embed", OB_TAG_EMBEDDING, 2, {7, 3}},     {"w1", OB_TAG_MATRIX, 2, {3, 5}},
    {"b1", OB_TAG_BIAS, 1, {5}},                {"ln", OB_TAG_NORM, 2, {2, 5}},
    {"conv", OB_TAG_CONV, 4, {2, 3, 2, 2}},     {"scale", OB_TAG_VECTOR, 1, {4}},
    {"w2", OB_TAG_MATRIX, 2, {5, 4}},           {"head", OB_TAG_HEAD, 2, {4, 3}},
};
/* which of them timm's filter takes the decay from */
static const int no_decay[NT] = {0, 0, 1, 1, 0, 1, 0, 0};

/* optimizers with a weight decay but without the filter (none today) */
static const char *const no_filter[] = {NULL};

static int listed(const char *name)
{
    for (int i = 0; no_filter[i]; i++)
        if (!strcmp(no_filter[i], name)) return 1;
    return 0;
}

/* params after STEPS steps of opt with sets and train, into out (layout order of tensors[]) */
static void run(const char *opt, const char *sets, const char *train, float *out[NT])
{
    ob_err e;
    rig r;
    memset(&r, 0, sizeof r);
    CHECK_OK(ob_device_open(&r.dev, "cpu", 0, &e), &e);
    ob_layout_init(&r.lay);
    for (int i = 0; i < NT; i++)
        CHECK_OK(ob_layout_add(&r.lay, tensors[i].name, tensors[i].tag, tensors[i].nd, tensors[i].shape, NULL, &e),
                 &e);
    rig_setup_layout(&r, opt, sets, train, STEPS);
    double *gd[NT];
    for (int i = 0; i < NT; i++) {
        gd[i] = malloc((size_t)r.lay.t[i].numel * sizeof(double));
        for (int64_t j = 0; j < r.lay.t[i].numel; j++)
            r.p[r.lay.t[i].offset + j] = ob_rng_normal(5, (uint64_t)i, (uint64_t)j);
    }
    for (int step = 1; step <= STEPS; step++) {
        rig_grads(&r, NT, step, 31, 0, gd);
        *r.loss = 2.0f / (float)step;
        CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, step, NULL, &e), &e);
    }
    for (int i = 0; i < NT; i++) {
        out[i] = malloc((size_t)r.lay.t[i].numel * sizeof(float));
        memcpy(out[i], r.p + r.lay.t[i].offset, (size_t)r.lay.t[i].numel * sizeof(float));
        free(gd[i]);
    }
    rig_close(&r);
}

/* max |a - b| / max(1, |b|) over tensor i */
static double diff(const float *a, const float *b, int i)
{
    int64_t n = 1;
    for (int d = 0; d < tensors[i].nd; d++) n *= tensors[i].shape[d];
    double worst = 0;
    for (int64_t j = 0; j < n; j++) worst = fmax(worst, fabs((double)a[j] - b[j]) / fmax(1.0, fabs((double)b[j])));
    return worst;
}

/* The CPU's elementwise_step_spans, the op the pipeline steps a filtered
 * group with, over many of its chunks (and threads): bit for bit one
 * elementwise_step per span with the rule or the rule without the decay,
 * plain and fused, its statistics grad_stats' over the whole range; and its
 * contract (bounds from 0 to n, each a multiple of 4) enforced. */
static void test_spans_op(void)
{
    ob_err e;
    ob_device dev;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    enum { N = 300007, NS = 2 };
    int64_t bound[64];
    int n_span = 0;
    bound[n_span++] = 0;
    for (int64_t at = 16; n_span < 40; at += 16 * (1 + (n_span * 37) % 800)) bound[n_span++] = at;
    bound[n_span] = N;
    CHECK(bound[n_span - 1] < N);
    ob_rule rule;
    memset(&rule, 0, sizeof rule);
    rule.kind = OB_RULE_ADAM;
    rule.n_state = NS;
    ob_rule_betas(&rule, 0.9f, 0.99f);
    rule.eps = 1e-8f;
    rule.weight_decay = 0.1f;
    rule.decoupled_wd = 1;
    ob_rule nd = rule;
    nd.weight_decay = 0.0f;
    ob_rule_step sc = {0.01f, 2.0f, 0.19f, 0.0199f, {0, 0, 0, 0}};
    for (int fused = 0; fused < 2; fused++) {
        float *x[2][2 + NS];
        for (int v = 0; v < 2; v++)
            for (int k = 0; k < 2 + NS; k++) {
                x[v][k] = malloc(N * sizeof(float));
                for (int64_t i = 0; i < N; i++) {
                    float z = ob_rng_normal(40 + (uint64_t)k, 3, (uint64_t)i);
                    x[v][k][i] = k >= 2 ? fabsf(z) : z;
                }
            }
        ob_step_stats st = {0, 0, 0, 1.0f, 0, 0, 0}, ref = st, whole = st;
        CHECK_OK(dev.ops->elementwise_step_spans(&dev, &rule, &sc, &st, x[0][0], x[0][1], x[0] + 2, N, bound, n_span, 1,
                                                 fused, &e),
                 &e);
        for (int k = 0; k < n_span; k++) {
            const int64_t at = bound[k];
            float *s[NS] = {x[1][2] + at, x[1][3] + at};
            CHECK_OK(dev.ops->elementwise_step(&dev, (k + 1) & 1 ? &nd : &rule, &sc, &ref, x[1][0] + at, x[1][1] + at,
                                               s, bound[k + 1] - at, &e),
                     &e);
        }
        for (int k = 0; k < 2 + NS; k++)
            CHECK_MSG(!memcmp(x[0][k], x[1][k], N * sizeof(float)),
                      "elementwise_step_spans (fused %d): array %d differs from one step per span", fused, k);
        CHECK_OK(dev.ops->grad_stats(&dev, x[0][1], N, &whole, &e), &e);
        if (fused)
            CHECK_MSG(st.sumsq == whole.sumsq && st.sumsq > 0, "elementwise_step_spans: statistics %.17g, the "
                      "range's %.17g", st.sumsq, whole.sumsq);
        else
            CHECK_MSG(st.sumsq == 0, "elementwise_step_spans without statistics summed %g", st.sumsq);
        for (int v = 0; v < 2; v++)
            for (int k = 0; k < 2 + NS; k++) free(x[v][k]);
    }
    /* the contract */
    float one[16] = {0}, *none[NS] = {one, one};
    ob_step_stats st = {0, 0, 0, 1.0f, 0, 0, 0};
    const int64_t odd[] = {0, 6, 16}, short_[] = {0, 8, 12};
    CHECK(dev.ops->elementwise_step_spans(&dev, &rule, &sc, &st, one, one, none, 16, odd, 2, 0, 0, &e) ==
              OB_ERR_INTERNAL &&
          strstr(e.msg, "multiple of 4"));
    CHECK(dev.ops->elementwise_step_spans(&dev, &rule, &sc, &st, one, one, none, 16, short_, 2, 0, 0, &e) ==
              OB_ERR_INTERNAL &&
          strstr(e.msg, "do not cover"));
    ob_device_close(&dev);
}

int main(void)
{
    test_spans_op();
    int n_opt = 0, tested = 0;
    const ob_optimizer_def *const *defs = ob_optimizers(&n_opt);
    static const char *const trains[] = {"on_nonfinite=none", "clip_norm=0.5"};
    for (int k = 0; k < n_opt; k++) {
        const ob_optimizer_def *d = defs[k];
        const int has_filter = ob_hp_index(d->hp, d->n_hp, "filter_bias_and_bn") >= 0;
        /* a hybrid's AdamW group decays by adamw_wd, or by weight_decay with
         * adamw_style=moonlight (root's default) */
        const int ia = ob_hp_index(d->hp, d->n_hp, "adamw_wd"), is = ob_hp_index(d->hp, d->n_hp, "adamw_style");
        const char *wd = ia >= 0 && !(is >= 0 && d->hp[is].def == 1) ? "adamw_wd" : "weight_decay";
        const int has_wd = ob_hp_index(d->hp, d->n_hp, wd) >= 0;
        CHECK_MSG(has_filter == (has_wd && !listed(d->name)),
                  "%s: has a weight decay but no filter_bias_and_bn (or the reverse); add it, or list it in "
                  "no_filter[] and in the README's known limits",
                  d->name);
        if (!has_filter) continue;
        tested++;
        for (int tr = 0; tr < 2; tr++) {
            char with[128], without[128], filtered[160];
            snprintf(with, sizeof with, "%s=0.5", wd);
            snprintf(without, sizeof without, "%s=0", wd);
            snprintf(filtered, sizeof filtered, "%s=0.5,filter_bias_and_bn=true", wd);
            float *a[NT], *b[NT], *c[NT];
            run(d->name, filtered, trains[tr], a);
            run(d->name, with, trains[tr], b);
            run(d->name, without, trains[tr], c);
            double same = 0, effect = INFINITY;
            for (int i = 0; i < NT; i++) {
                same = fmax(same, diff(a[i], no_decay[i] ? c[i] : b[i], i));
                if (no_decay[i]) effect = fmin(effect, diff(a[i], b[i], i));
            }
            printf("%-9s %-17s filtered vs unfiltered with/without decay: max scaled diff %.3g; "
                   "no-decay tensors moved by the filter at least %.3g\n",
                   d->name, trains[tr], same, effect);
            CHECK_MSG(same == 0, "%s (%s): a tensor left the trajectory of its kind by %g", d->name, trains[tr],
                      same);
            CHECK_MSG(effect > 1e-5, "%s (%s): the filter changed a no-decay tensor by only %g", d->name,
                      trains[tr], effect);
            for (int i = 0; i < NT; i++) {
                free(a[i]);
                free(b[i]);
                free(c[i]);
            }
        }
    }
    CHECK_MSG(tested >= 19, "only %d optimizers have filter_bias_and_bn", tested);
    return check_done();
}
