/* tests/test_wl_train.c - the bert and cnn workloads end to end on the CPU
 * through the optimizer pipeline: determinism (same seed, bit-identical loss
 * curve and parameters; another seed differs), a short adam training run per
 * workload whose held-out loss falls and whose accuracy rises above chance,
 * the held-out metrics and floor, bad hyperparameters reported as input
 * errors, and the presets' parameters (their number, the heads' tensors). */
#include <string.h>

#include "test_wl_rig.h"

static int run_steps(wl_rig *r, int64_t first, int n, float *losses)
{
    ob_err e;
    for (int s = 0; s < n; s++) {
        if (r->w->vt->train_step(r->w, r->p, r->g, first + s, r->loss, &e) != OB_OK ||
            ob_optim_step(r->opt, r->p, r->g, r->loss, first + s + 1, r->rec, &e) != OB_OK) {
            fprintf(stderr, "step %lld: %s\n", (long long)(first + s), e.msg);
            return 0;
        }
        if (losses) losses[s] = *r->loss;
    }
    return 1;
}

static void test_determinism(const char *name, const char *sets)
{
    wl_rig a, b, c;
    float la[4], lb[4], lc[4];
    int ok = wl_rig_open(&a, name, sets, 42, "adam", "lr=0.003") && wl_rig_open(&b, name, sets, 42, "adam", "lr=0.003") &&
             wl_rig_open(&c, name, sets, 43, "adam", "lr=0.003");
    if (ok) {
        CHECK(run_steps(&a, 0, 4, la) && run_steps(&b, 0, 4, lb) && run_steps(&c, 0, 4, lc));
        CHECK_MSG(memcmp(la, lb, sizeof la) == 0, "%s: same seed, different losses (%.9g vs %.9g)", name, la[3], lb[3]);
        CHECK_MSG(memcmp(a.p, b.p, (size_t)a.lay.total * sizeof(float)) == 0, "%s: same seed, different parameters", name);
        CHECK_MSG(memcmp(la, lc, sizeof la) != 0, "%s: another seed gives the same losses", name);
        ob_eval e1, e2;
        ob_err e;
        CHECK_OK(a.w->vt->evaluate(a.w, a.p, &e1, &e), &e);
        CHECK_OK(a.w->vt->evaluate(a.w, a.p, &e2, &e), &e);
        CHECK(memcmp(&e1, &e2, sizeof e1) == 0);
    }
    wl_rig_close(&a);
    wl_rig_close(&b);
    wl_rig_close(&c);
}

static void test_training(const char *name, const char *sets, const char *opt_sets, int steps, double min_drop,
                          double min_acc)
{
    wl_rig r;
    ob_err e;
    if (wl_rig_open(&r, name, sets, 1, "adam", opt_sets)) {
        ob_eval e0, e1;
        CHECK_OK(r.w->vt->evaluate(r.w, r.p, &e0, &e), &e);
        float first;
        CHECK(run_steps(&r, 0, 1, &first));
        CHECK(run_steps(&r, 1, steps - 1, NULL));
        CHECK_OK(r.w->vt->evaluate(r.w, r.p, &e1, &e), &e);
        printf("%s: held-out loss %.4f -> %.4f, accuracy %.4f -> %.4f, floor %.4f (first train loss %.4f)\n", name,
               e0.loss, e1.loss, e0.metric, e1.metric, e1.floor, first);
        CHECK_MSG(e1.loss < e0.loss - min_drop, "%s: held-out loss %.4f -> %.4f", name, e0.loss, e1.loss);
        CHECK_MSG(e1.metric > min_acc, "%s: accuracy %.4f", name, e1.metric);
        CHECK(e1.metric >= 0.0 && e1.metric <= 1.0);
        CHECK(r.w->items_per_step > 0);
        if (!strncmp(name, "bert", 4)) {
            CHECK_MSG(isfinite(e1.floor) && e1.floor > 0.0 && e1.floor < e1.loss, "%s: floor %.4f", name, e1.floor);
        } else {
            CHECK(isnan(e1.floor));
        }
    }
    wl_rig_close(&r);
}

static void test_bad_input(const char *name, const char *sets, const char *expect)
{
    ob_device dev;
    ob_err e;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    const ob_workload_def *d = ob_workload_find(name);
    ob_hp_values hv;
    ob_hp_defaults(&hv, d->hp, d->n_hp);
    CHECK_OK(ob_hp_set_list(&hv, name, sets, &e), &e);
    ob_workload *w = NULL;
    ob_status s = d->create(d, &hv, &dev, 1, &w, &e);
    CHECK_MSG(s == OB_ERR_INPUT && strstr(e.msg, expect), "%s (%s): status %d, '%s'", name, sets, (int)s, e.msg);
    if (w) w->vt->destroy(w);
    ob_device_close(&dev);
}

/* Workload name (with "k=v" settings)'s parameters as it lays them out
 * (create and describe only: no arenas, so the large presets cost little):
 * their number, and whether a tensor of each name in want (NULL-ended)
 * is among them, as a string of 1s and 0s. */
static int64_t layout_of(const char *name, const char *sets, const char *const *want, char *found)
{
    ob_err e;
    ob_device dev;
    ob_layout lay;
    ob_workload *w = NULL;
    int64_t total = -1;
    found[0] = '\0';
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    ob_layout_init(&lay);
    const ob_workload_def *d = ob_workload_find(name);
    ob_hp_values hv;
    ob_hp_defaults(&hv, d->hp, d->n_hp);
    if (sets && *sets) CHECK_OK(ob_hp_set_list(&hv, name, sets, &e), &e);
    if (d->create(d, &hv, &dev, 1, &w, &e) == OB_OK && w->vt->describe(w, &lay, &e) == OB_OK) {
        total = 0;
        for (int i = 0; i < lay.n; i++) total += lay.t[i].numel;
        int k = 0;
        for (; want[k]; k++) found[k] = ob_layout_find(&lay, want[k]) >= 0 ? '1' : '0';
        found[k] = '\0';
    } else {
        CHECK_MSG(0, "%s (%s): %s", name, sets, e.msg);
    }
    if (w) w->vt->destroy(w);
    ob_layout_free(&lay);
    ob_device_close(&dev);
    return total;
}

/* The presets' sizes as docs/workloads.md's table gives them, and the
 * tensors the heads' settings add or leave out: a model that lost a
 * parameter (its final LayerNorm's gain, the head's bias) would still pass
 * the gradient checks, which follow the model whatever its parameters. */
static void test_layouts(void)
{
    static const struct {
        const char *name;
        int64_t params;
    } preset[] = {{"bert-tiny", 118784},  {"bert-small", 5297664}, {"bert-base", 108625722},
                  {"cnn-tiny", 5466},     {"cnn-small", 288746},   {"cnn-base", 11173962}};
    const char *const none[] = {NULL};
    char found[16];
    for (size_t i = 0; i < sizeof preset / sizeof preset[0]; i++) {
        const int64_t n = layout_of(preset[i].name, "", none, found);
        CHECK_MSG(n == preset[i].params, "%s: %lld parameters, docs/workloads.md says %lld", preset[i].name,
                  (long long)n, (long long)preset[i].params);
    }
    const char *const head[] = {"wte", "wpe", "lnf.w", "lnf.b", "head.w", "head.b", NULL};
    static const struct {
        const char *sets, *want;
        int64_t extra; /* parameters beyond the tied head without bias */
    } heads[] = {{"tie_head=1,head_bias=0", "111100", 0},
                 {"tie_head=1,head_bias=1", "111101", 256},
                 {"tie_head=0,head_bias=0", "111110", 256 * 64},
                 {"tie_head=0,head_bias=1", "111111", 256 * 64 + 256}};
    int64_t base = -1;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        const int64_t n = layout_of("bert-tiny", heads[i].sets, head, found);
        if (i == 0) base = n;
        CHECK_MSG(!strcmp(found, heads[i].want), "bert-tiny %s: tensors wte wpe lnf.w lnf.b head.w head.b: %s, not %s",
                  heads[i].sets, found, heads[i].want);
        CHECK_MSG(n == base + heads[i].extra, "bert-tiny %s: %lld parameters, not %lld", heads[i].sets, (long long)n,
                  (long long)(base + heads[i].extra));
    }
}

int main(void)
{
    test_layouts();
    const char *bert_small = "batch=8,seq=16,eval_batches=2";
    test_determinism("bert-tiny", bert_small);
    test_determinism("cnn-tiny", "batch=8,eval_batches=2");
    test_determinism("cnn-tiny", "batch=4,image=8,residual=1,stages=2,depth=1,width=8,eval_batches=1");
    test_training("bert-tiny", "eval_batches=4", "lr=0.003", 60, 1.0, 0.05);
    test_training("cnn-tiny", "eval_batches=4", "lr=0.003", 150, 0.3, 0.3);
    test_bad_input("bert-tiny", "dim=30,heads=4",
                   "bert-tiny.dim = 30 is not a multiple of bert-tiny.heads = 4; set dim to a multiple of 4 (e.g. 28)");
    test_bad_input("bert-tiny", "branch=300", "bert-tiny.branch = 300 is not below bert-tiny.vocab - 1 = 255");
    test_bad_input("bert-tiny", "mask_token_frac=0.8,random_token_frac=0.5",
                   "bert-tiny.mask_token_frac + bert-tiny.random_token_frac = 0.8 + 0.5 = 1.3 exceeds 1");
    test_bad_input("cnn-tiny", "width=6,groups=4",
                   "cnn-tiny.groups = 4 does not divide the 6 channels of unit 0; set groups to a divisor of "
                   "cnn-tiny.width = 6");
    test_bad_input("cnn-tiny", "image=6,stages=3",
                   "cnn-tiny.image = 6 with cnn-tiny.stages = 3: the 3x3 map of stage 2 cannot be pooled 2x2; give an "
                   "image size divisible by 4, or fewer stages");
    test_bad_input("cnn-tiny", "contrast_lo=0.9,contrast_hi=0.5", "cnn-tiny.contrast_lo = 0.9 exceeds cnn-tiny.contrast_hi");
    return check_done();
}
