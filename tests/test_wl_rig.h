/* tests/test_wl_rig.h - a workload on the CPU backend for the workload tests:
 * create by name with "k=v,..." overrides, lay out (optionally routed by an
 * optimizer), set up, initialise; plus the finite-difference helpers. */
#ifndef OB_TESTS_WL_RIG_H
#define OB_TESTS_WL_RIG_H

#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "optimizers/optim.h"
#include "workloads/workload.h"

typedef struct wl_rig {
    ob_device dev;
    ob_layout lay;
    ob_workload *w;
    ob_optim *opt;
    float *p, *g, *loss;
    ob_step_record *rec;
    int ok;
} wl_rig;

/* opt (may be NULL): optimizer name and its "k=v" settings route and step. */
static inline int wl_rig_open(wl_rig *r, const char *name, const char *sets, uint64_t seed, const char *opt,
                       const char *opt_sets)
{
    ob_err e;
    memset(r, 0, sizeof *r);
    CHECK_OK(ob_device_open(&r->dev, "cpu", 0, &e), &e);
    ob_layout_init(&r->lay);
    const ob_workload_def *d = ob_workload_find(name);
    CHECK_MSG(d != NULL, "workload %s", name);
    if (!d) return 0;
    ob_hp_values hv;
    ob_hp_defaults(&hv, d->hp, d->n_hp);
    if (sets && *sets) CHECK_OK(ob_hp_set_list(&hv, name, sets, &e), &e);
    ob_status s = d->create(d, &hv, &r->dev, seed, &r->w, &e);
    CHECK_MSG(s == OB_OK, "%s", e.msg);
    if (s != OB_OK) return 0;
    CHECK_OK(r->w->vt->describe(r->w, &r->lay, &e), &e);
    if (opt) {
        const ob_optimizer_def *od = ob_optimizer_find(opt);
        ob_hp_values hp, tr;
        ob_hp_defaults(&hp, od->hp, od->n_hp);
        ob_hp_defaults(&tr, ob_train_hp_defs, ob_train_hp_count);
        if (opt_sets) CHECK_OK(ob_hp_set_list(&hp, opt, opt_sets, &e), &e);
        CHECK_OK(ob_optim_create(od, &hp, &tr, &r->opt, &e), &e);
        CHECK_OK(ob_optim_route(r->opt, &r->lay, &e), &e);
    } else {
        for (int i = 0; i < r->lay.n; i++) r->lay.t[i].group = 0;
    }
    CHECK_OK(ob_layout_finalize(&r->lay, &e), &e);
    size_t bytes = (size_t)r->lay.total * sizeof(float);
    CHECK_OK(ob_dev_alloc(&r->dev, bytes, (void **)&r->p, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, bytes, (void **)&r->g, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, sizeof(float), (void **)&r->loss, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, sizeof *r->rec, (void **)&r->rec, &e), &e);
    s = r->w->vt->setup(r->w, &r->lay, &e);
    CHECK_MSG(s == OB_OK, "%s", e.msg);
    if (s != OB_OK) return 0;
    CHECK_OK(r->w->vt->init_params(r->w, r->p, &e), &e);
    if (r->opt) {
        CHECK_OK(ob_optim_setup(r->opt, &r->dev, &r->lay, &e), &e);
        ob_optim_set_total_steps(r->opt, 1000);
    }
    r->ok = 1;
    return 1;
}

static inline void wl_rig_close(wl_rig *r)
{
    if (r->w) r->w->vt->destroy(r->w);
    if (r->opt) ob_optim_destroy(r->opt);
    ob_layout_free(&r->lay);
    ob_device_close(&r->dev);
}

/* Loss of step `step` at the current parameters (gradients into r->g). */
static inline double wl_rig_loss(wl_rig *r, int64_t step)
{
    ob_err e;
    CHECK_OK(r->w->vt->train_step(r->w, r->p, r->g, step, r->loss, &e), &e);
    return *r->loss;
}

/* Central difference of the loss along direction v (unit, inside tensor t). */
static inline double wl_rig_fd(wl_rig *r, const ob_tensor *t, const float *p0, const double *v, int64_t step, double h)
{
    for (int64_t j = 0; j < t->numel; j++) r->p[t->offset + j] = (float)(p0[t->offset + j] + h * v[j]);
    double lp = wl_rig_loss(r, step);
    for (int64_t j = 0; j < t->numel; j++) r->p[t->offset + j] = (float)(p0[t->offset + j] - h * v[j]);
    double lm = wl_rig_loss(r, step);
    memcpy(r->p + t->offset, p0 + t->offset, (size_t)t->numel * sizeof(float));
    return (lp - lm) / (2.0 * h);
}

/* Directional-derivative check of every tensor, along a random unit direction
 * and along the tensor's own gradient (largest signal): compares g.v with the
 * central difference of the loss at step sizes h, h/2, ... (nh of them) and
 * passes when one of them agrees within atol + rtol * max(|g.v|, |fd|), where
 * atol = noise * max(1, |loss|) / h is the float32 rounding of the loss seen
 * through the difference. Several sizes let a piecewise-linear model (ReLU,
 * max pooling) pass where the largest step crosses a kink; a wrong gradient
 * matches at none. Returns the number of failed checks. */
static inline int wl_rig_gradcheck(wl_rig *r, int64_t step, double h, int nh, double rtol, double noise, int verbose)
{
    int64_t total = r->lay.total;
    float *g = malloc((size_t)total * sizeof *g), *p0 = malloc((size_t)total * sizeof *p0);
    double l0 = fabs(wl_rig_loss(r, step));
    memcpy(g, r->g, (size_t)total * sizeof *g);
    memcpy(p0, r->p, (size_t)total * sizeof *p0);
    int bad = 0;
    for (int i = 0; i < r->lay.n; i++) {
        const ob_tensor *t = &r->lay.t[i];
        double *v = malloc((size_t)t->numel * sizeof *v);
        for (int dir = 0; dir < 2; dir++) {
            double nn = 0.0, ana = 0.0;
            for (int64_t j = 0; j < t->numel; j++) {
                v[j] = dir == 0 ? ob_rng_normal(7, OB_STREAM_MISC + (uint64_t)i, (uint64_t)j) : g[t->offset + j];
                nn += v[j] * v[j];
            }
            if (nn == 0.0) continue;
            nn = sqrt(nn);
            for (int64_t j = 0; j < t->numel; j++) {
                v[j] /= nn;
                ana += v[j] * g[t->offset + j];
            }
            int ok = 0;
            double hk = h, fd = 0.0, tol = 0.0;
            for (int k = 0; k < nh && !ok; k++, hk /= 2) {
                fd = wl_rig_fd(r, t, p0, v, step, hk);
                tol = noise * fmax(1.0, l0) / hk + rtol * fmax(fabs(ana), fabs(fd));
                ok = fabs(fd - ana) <= tol;
            }
            if (!ok || verbose)
                fprintf(stderr, "  %-20s %s g.v %+.6e  fd %+.6e (h %.1e)  diff %.2e  tol %.2e%s\n", t->name,
                        dir ? "grad" : "rand", ana, fd, hk * 2, fabs(fd - ana), tol,
                        ok ? "" : "  <-- MISMATCH");
            bad += !ok;
        }
        free(v);
    }
    free(g);
    free(p0);
    return bad;
}

#endif
