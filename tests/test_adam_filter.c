/* tests/test_adam_filter.c - adam and adamw with filter_bias_and_bn (the
 * pipeline's spans, optimizers/pipeline.c) against a float64 reference of
 * torch.optim.Adam / AdamW with two parameter groups, as timm's
 * create_optimizer builds them: the matrices and the 4-D tensor with the
 * weight decay, the vectors (a bias among the matrices, another between the
 * 4-D tensor and a matrix) without. Gradients change scale by decades and
 * one step has none; with and without train.clip_norm, with AMSGrad once.
 * Without the filter the step is the usual single pass, which
 * scripts/conformance_torch.py and the golden cases check; the other
 * optimizers' filter is checked by tests/test_filter_decay.c.
 */
#include <string.h>

#include "check.h"
#include "optim_rig.h"

#define NT 7
#define STEPS 25

static const int t_nd[NT] = {2, 1, 2, 4, 1, 2, 1};
static const int64_t t_shape[NT][4] = {{6, 5}, {30}, {6, 5}, {2, 3, 4, 5}, {7}, {3, 4}, {1}};

typedef struct adam_case {
    int decoupled, amsgrad;
    double lr, beta1, beta2, eps, wd, clip_norm;
} adam_case;

typedef struct ref {
    int64_t numel;
    double *p, *m, *v, *vmax;
} ref;

static void ref_step(const adam_case *c, double wd, ref *t, const double *g, int step)
{
    const double bc1 = 1 - pow(c->beta1, step), bc2 = 1 - pow(c->beta2, step);
    for (int64_t i = 0; i < t->numel; i++) {
        double gi = g[i];
        if (c->decoupled)
            t->p[i] *= 1 - c->lr * wd;
        else
            gi += wd * t->p[i];
        t->m[i] = c->beta1 * t->m[i] + (1 - c->beta1) * gi;
        t->v[i] = c->beta2 * t->v[i] + (1 - c->beta2) * gi * gi;
        double v = t->v[i];
        if (c->amsgrad) v = t->vmax[i] = fmax(t->vmax[i], v);
        t->p[i] -= c->lr / bc1 * t->m[i] / (sqrt(v) / sqrt(bc2) + c->eps);
    }
}

static void run_case(const adam_case *c, const char *what)
{
    ob_err e;
    char sets[256], train[64];
    snprintf(sets, sizeof sets, "lr=%g,beta1=%g,beta2=%g,eps=%g,weight_decay=%g,amsgrad=%s,filter_bias_and_bn=true",
             c->lr, c->beta1, c->beta2, c->eps, c->wd, c->amsgrad ? "true" : "false");
    snprintf(train, sizeof train, "clip_norm=%g", c->clip_norm);
    const char *opt = c->decoupled ? "adamw" : "adam";
    rig r;
    rig_open_tensors_train(&r, opt, sets, c->clip_norm > 0 ? train : NULL, NT, t_nd, t_shape, STEPS);
    ref rt[NT];
    double *gd[NT], *pref[NT];
    for (int i = 0; i < NT; i++) {
        ref *t = &rt[i];
        t->numel = r.lay.t[i].numel;
        t->p = pref[i] = calloc((size_t)t->numel, sizeof(double));
        t->m = calloc((size_t)t->numel, sizeof(double));
        t->v = calloc((size_t)t->numel, sizeof(double));
        t->vmax = calloc((size_t)t->numel, sizeof(double));
        gd[i] = malloc((size_t)t->numel * sizeof(double));
        for (int64_t j = 0; j < t->numel; j++) {
            r.p[r.lay.t[i].offset + j] = ob_rng_normal(9, (uint64_t)i, (uint64_t)j);
            t->p[j] = r.p[r.lay.t[i].offset + j];
        }
    }
    double worst = 0;
    for (int step = 1; step <= STEPS; step++) {
        rig_grads(&r, NT, step, 21, c->clip_norm, gd);
        for (int i = 0; i < NT; i++) ref_step(c, t_nd[i] <= 1 ? 0.0 : c->wd, &rt[i], gd[i], step);
        CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, step, NULL, &e), &e);
        worst = rig_worst(&r, NT, pref, worst);
    }
    printf("%s %s, filter_bias_and_bn, vs float64 reference, %d steps: max scaled |p - p_ref| = %.3g\n", opt, what,
           STEPS, worst);
    CHECK_MSG(worst < 1e-5, "%s %s: max scaled |p - p_ref| = %g", opt, what, worst);
    for (int i = 0; i < NT; i++) {
        free(gd[i]);
        free(rt[i].p);
        free(rt[i].m);
        free(rt[i].v);
        free(rt[i].vmax);
    }
    rig_close(&r);
}

int main(void)
{
    /* lr 0.03 with wd 0.5: the decay moves the matrices visibly, so a
     * vector decayed by mistake (or a matrix left out) shows */
    adam_case c = {1, 0, 0.03, 0.9, 0.999, 1e-8, 0.5, 0};
    run_case(&c, "wd 0.5");
    c.clip_norm = 0.5;
    c.amsgrad = 1;
    run_case(&c, "wd 0.5, amsgrad, clip_norm 0.5");
    c = (adam_case){0, 0, 0.03, 0.9, 0.999, 1e-8, 0.5, 0};
    run_case(&c, "L2 0.5");
    return check_done();
}
