/* tests/test_lamb.c - LAMB (optimizers/lamb.c) against a float64 reference
 * written here from the algorithm of timm's Lamb (its single-tensor path,
 * max_grad_norm off): three 6x5 matrices and a vector of 30 (one size, so
 * one run of four stepped together), a 4-D tensor, a tensor of one element
 * and one whose parameters are all zero (||p|| = 0: ratio 1); gradients
 * whose scale changes by decades and a step with no gradient. Cases: the
 * defaults with weight decay, trust_clip (LAMBC), no weight decay (no trust
 * ratio), always_adapt without weight decay, and no bias correction with
 * plain momentum sums (grad_averaging false), some with train.clip_norm, and
 * filter_bias_and_bn (the vectors without decay: not adapted, or adapted
 * with always_adapt; one has the matrices' size, and a run of its own).
 * scripts/conformance_torch.py compares one tensor at a time with the same
 * algorithm written in torch.
 */
#include <string.h>

#include "check.h"
#include "core/layout.h"
#include "core/rng.h"
#include "optimizers/optim.h"
#include "optim_rig.h"

#define NT 7
#define STEPS 25

static const int t_nd[NT] = {2, 2, 1, 2, 4, 1, 2};
static const int64_t t_shape[NT][4] = {{6, 5}, {6, 5}, {30}, {6, 5}, {2, 3, 4, 5}, {1}, {3, 4}};

typedef struct lamb_case {
    double lr, beta1, beta2, eps, wd;
    int bias_correction, grad_averaging, trust_clip, always_adapt;
    double clip_norm; /* 0: off */
    int filter;       /* filter_bias_and_bn: no decay for the 1-D tensors */
} lamb_case;

typedef struct ref {
    int64_t numel;
    double *p, *m, *v;
} ref;

static void ref_step(const lamb_case *c, double wd, ref *t, const double *g, int step)
{
    const int64_t N = t->numel;
    const double bc1 = c->bias_correction ? 1 - pow(c->beta1, step) : 1;
    const double bc2 = c->bias_correction ? 1 - pow(c->beta2, step) : 1;
    double *u = malloc((size_t)N * sizeof *u);
    double pn = 0, un = 0;
    for (int64_t i = 0; i < N; i++) {
        t->m[i] = c->grad_averaging ? c->beta1 * t->m[i] + (1 - c->beta1) * g[i] : c->beta1 * t->m[i] + g[i];
        t->v[i] = c->beta2 * t->v[i] + (1 - c->beta2) * g[i] * g[i];
        u[i] = (t->m[i] / bc1) / (sqrt(t->v[i]) / sqrt(bc2) + c->eps) + wd * t->p[i];
        pn += t->p[i] * t->p[i];
        un += u[i] * u[i];
    }
    double r = 1;
    if ((wd != 0 || c->always_adapt) && pn > 0 && un > 0) r = sqrt(pn) / sqrt(un);
    if ((wd != 0 || c->always_adapt) && c->trust_clip && r > 1) r = 1;
    for (int64_t i = 0; i < N; i++) t->p[i] -= c->lr * r * u[i];
    free(u);
}

static void run_case(const lamb_case *c, const char *what)
{
    ob_err e;
    char sets[320], train[64] = "";
    snprintf(sets, sizeof sets,
             "lr=%g,beta1=%g,beta2=%g,eps=%g,weight_decay=%g,bias_correction=%s,grad_averaging=%s,trust_clip=%s,"
             "always_adapt=%s,filter_bias_and_bn=%s",
             c->lr, c->beta1, c->beta2, c->eps, c->wd, c->bias_correction ? "true" : "false",
             c->grad_averaging ? "true" : "false", c->trust_clip ? "true" : "false",
             c->always_adapt ? "true" : "false", c->filter ? "true" : "false");
    if (c->clip_norm > 0) snprintf(train, sizeof train, "clip_norm=%g", c->clip_norm);
    rig r;
    rig_open_tensors_train(&r, "lamb", sets, c->clip_norm > 0 ? train : NULL, NT, t_nd, t_shape, STEPS);
    ref rt[NT];
    double *gd[NT], *pref[NT];
    for (int i = 0; i < NT; i++) {
        ref *t = &rt[i];
        t->numel = r.lay.t[i].numel;
        t->p = pref[i] = calloc((size_t)t->numel, sizeof(double));
        t->m = calloc((size_t)t->numel, sizeof(double));
        t->v = calloc((size_t)t->numel, sizeof(double));
        gd[i] = malloc((size_t)t->numel * sizeof(double));
        for (int64_t j = 0; j < t->numel; j++) {
            /* t6 starts at zero: its trust ratio is 1 until it moves */
            r.p[r.lay.t[i].offset + j] = i == NT - 1 ? 0.0f : ob_rng_normal(5, (uint64_t)i, (uint64_t)j);
            t->p[j] = r.p[r.lay.t[i].offset + j];
        }
    }
    double worst = 0;
    for (int step = 1; step <= STEPS; step++) {
        rig_grads(&r, NT, step, 13, c->clip_norm, gd);
        for (int i = 0; i < NT; i++) ref_step(c, c->filter && t_nd[i] <= 1 ? 0.0 : c->wd, &rt[i], gd[i], step);
        CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, step, NULL, &e), &e);
        worst = rig_worst(&r, NT, pref, worst);
    }
    printf("lamb %s vs float64 reference, %d steps: max scaled |p - p_ref| = %.3g\n", what, STEPS, worst);
    CHECK_MSG(worst < 1e-5, "lamb %s: max scaled |p - p_ref| = %g", what, worst);
    for (int i = 0; i < NT; i++) {
        free(gd[i]);
        free(rt[i].p);
        free(rt[i].m);
        free(rt[i].v);
    }
    rig_close(&r);
}

int main(void)
{
    const lamb_case base = {1e-2, 0.9, 0.999, 1e-6, 0.01, 1, 1, 0, 0, 0, 0};
    lamb_case c = base;
    run_case(&c, "defaults (wd 0.01)");
    c.clip_norm = 0.5;
    run_case(&c, "defaults, clip_norm 0.5");
    c = base;
    c.wd = 0.1;
    c.trust_clip = 1;
    run_case(&c, "trust_clip, wd 0.1");
    c = base;
    c.wd = 0;
    run_case(&c, "no weight decay (no trust ratio)");
    c.always_adapt = 1;
    c.clip_norm = 2;
    run_case(&c, "always_adapt, no weight decay, clip_norm 2");
    c = base;
    c.bias_correction = 0;
    c.grad_averaging = 0;
    c.beta1 = 0.3; /* lerp weight 0.7: torch's lerp from the nearer end (here a plain sum) */
    run_case(&c, "no bias correction, no grad averaging");
    c = base;
    c.wd = 0.1;
    c.filter = 1; /* the vectors t2 (the size of the matrices) and t5 without decay, not adapted */
    run_case(&c, "filter_bias_and_bn, wd 0.1");
    c.always_adapt = 1;
    run_case(&c, "filter_bias_and_bn, always_adapt, wd 0.1");
    return check_done();
}
