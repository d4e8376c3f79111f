/* tests/test_lars.c - LARS (optimizers/lars.c) against a float64 reference
 * written here from the algorithm of timm's Lars: three 6x5 matrices and a
 * vector of 30 (one size, so one run of four stepped together), a 4-D
 * tensor, a tensor of one element and one whose parameters start at zero
 * (||p|| = 0: ratio 1); gradients whose scale changes by decades and a step
 * with no gradient (||g|| = 0: ratio 1). Cases: weight decay with momentum,
 * LARC's clip, Nesterov, no weight decay (plain SGD), always_adapt, with and
 * without train.clip_norm (the ratio sees the clipped gradient's norm), and
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

typedef struct lars_case {
    double lr, momentum, dampening, wd, coeff, eps;
    int nesterov, trust_clip, always_adapt;
    double clip_norm; /* 0: off */
    int filter;       /* filter_bias_and_bn: no decay for the 1-D tensors */
} lars_case;

typedef struct ref {
    int64_t numel;
    double *p, *buf;
} ref;

static void ref_step(const lars_case *c, double wd, ref *t, const double *g, int step)
{
    const int64_t N = t->numel;
    double *d = malloc((size_t)N * sizeof *d);
    double r = 1, pn = 0, gn = 0;
    for (int64_t i = 0; i < N; i++) {
        pn += t->p[i] * t->p[i];
        gn += g[i] * g[i];
    }
    pn = sqrt(pn);
    gn = sqrt(gn);
    const int adapt = wd != 0 || c->always_adapt;
    if (adapt) {
        if (pn > 0 && gn > 0) r = c->coeff * pn / (gn + pn * wd + c->eps);
        if (c->trust_clip) r = fmin(r / c->lr, 1.0);
    }
    for (int64_t i = 0; i < N; i++) {
        d[i] = adapt ? (g[i] + wd * t->p[i]) * r : g[i];
        if (c->momentum != 0) {
            t->buf[i] = step == 1 ? d[i] : c->momentum * t->buf[i] + (1 - c->dampening) * d[i];
            d[i] = c->nesterov ? d[i] + c->momentum * t->buf[i] : t->buf[i];
        }
        t->p[i] -= c->lr * d[i];
    }
    free(d);
}

static void run_case(const lars_case *c, const char *what)
{
    ob_err e;
    char sets[320], train[64] = "";
    snprintf(sets, sizeof sets,
             "lr=%g,momentum=%g,dampening=%g,weight_decay=%g,trust_coeff=%g,eps=%g,nesterov=%s,trust_clip=%s,"
             "always_adapt=%s,filter_bias_and_bn=%s",
             c->lr, c->momentum, c->dampening, c->wd, c->coeff, c->eps, c->nesterov ? "true" : "false",
             c->trust_clip ? "true" : "false", c->always_adapt ? "true" : "false", c->filter ? "true" : "false");
    if (c->clip_norm > 0) snprintf(train, sizeof train, "clip_norm=%g", c->clip_norm);
    rig r;
    rig_open_tensors_train(&r, "lars", sets, c->clip_norm > 0 ? train : NULL, NT, t_nd, t_shape, STEPS);
    ref rt[NT];
    double *gd[NT], *pref[NT];
    for (int i = 0; i < NT; i++) {
        ref *t = &rt[i];
        t->numel = r.lay.t[i].numel;
        t->p = pref[i] = calloc((size_t)t->numel, sizeof(double));
        t->buf = calloc((size_t)t->numel, sizeof(double));
        gd[i] = malloc((size_t)t->numel * sizeof(double));
        for (int64_t j = 0; j < t->numel; j++) {
            /* t6 starts at zero: its trust ratio is 1 until it moves */
            r.p[r.lay.t[i].offset + j] = i == NT - 1 ? 0.0f : ob_rng_normal(7, (uint64_t)i, (uint64_t)j);
            t->p[j] = r.p[r.lay.t[i].offset + j];
        }
    }
    double worst = 0;
    for (int step = 1; step <= STEPS; step++) {
        rig_grads(&r, NT, step, 17, c->clip_norm, gd);
        for (int i = 0; i < NT; i++) ref_step(c, c->filter && t_nd[i] <= 1 ? 0.0 : c->wd, &rt[i], gd[i], step);
        CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, step, NULL, &e), &e);
        worst = rig_worst(&r, NT, pref, worst);
    }
    printf("lars %s vs float64 reference, %d steps: max scaled |p - p_ref| = %.3g\n", what, STEPS, worst);
    CHECK_MSG(worst < 1e-5, "lars %s: max scaled |p - p_ref| = %g", what, worst);
    for (int i = 0; i < NT; i++) {
        free(gd[i]);
        free(rt[i].p);
        free(rt[i].buf);
    }
    rig_close(&r);
}

int main(void)
{
    /* lr 5 x trust_coeff 1e-3: each tensor moves by about 0.5% of its norm a step */
    const lars_case base = {5.0, 0.9, 0.0, 5e-4, 1e-3, 1e-8, 0, 0, 0, 0, 0};
    lars_case c = base;
    run_case(&c, "momentum, wd 5e-4");
    c.clip_norm = 0.5;
    run_case(&c, "momentum, wd 5e-4, clip_norm 0.5");
    c = base;
    c.trust_clip = 1;
    c.lr = 0.1;
    run_case(&c, "LARC (trust_clip), lr 0.1");
    c = base;
    c.nesterov = 1;
    c.wd = 0.1;
    run_case(&c, "Nesterov, wd 0.1");
    c = base;
    c.wd = 0;
    c.lr = 0.01;
    c.dampening = 0.5;
    run_case(&c, "no weight decay (plain SGD), dampening 0.5");
    c = base;
    c.wd = 0;
    c.always_adapt = 1;
    c.momentum = 0;
    c.clip_norm = 2;
    run_case(&c, "always_adapt, no momentum, clip_norm 2");
    c = base;
    c.eps = 0.5; /* as large as the norms: where eps enters the trust ratio shows */
    run_case(&c, "momentum, wd 5e-4, eps 0.5");
    c = base;
    c.wd = 0.01;
    /* the vectors take plain SGD steps: at lr 0.5, with g up to 10, their
     * float32 rounding reached 1.2e-5 of the parameters */
    c.lr = 0.05;
    c.filter = 1; /* the vectors t2 (the size of the matrices) and t5 without decay, not adapted */
    run_case(&c, "filter_bias_and_bn, wd 0.01");
    c.always_adapt = 1;
    c.trust_clip = 1;
    c.lr = 0.5;
    run_case(&c, "filter_bias_and_bn, always_adapt, LARC, wd 0.01");
    return check_done();
}
