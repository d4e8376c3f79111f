/* tests/optim_rig.h - an optimizer on the CPU backend over one vector
 * parameter "x" of n floats (rig_open) or over a few tensors of given shapes
 * (rig_open_tensors), with its parameters, gradients, loss and step record,
 * for tests that drive ob_optim_step by hand. Include after check.h. */
#ifndef OB_TESTS_OPTIM_RIG_H
#define OB_TESTS_OPTIM_RIG_H

#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "optimizers/optim.h"

typedef struct rig {
    ob_device dev;
    ob_layout lay;
    ob_optim *opt;
    float *p, *g, *loss;
    ob_step_record *rec;
} rig;

/* opt with the "k=v,..." settings sets (may be NULL) and train_sets over
 * the tensors already in r->lay, for total_steps steps. */
static inline void rig_setup_layout(rig *r, const char *opt, const char *sets, const char *train_sets, int total_steps)
{
    ob_err e;
    const ob_optimizer_def *d = ob_optimizer_find(opt);
    CHECK_MSG(d != NULL, "no optimizer '%s'", opt);
    if (!d) exit(1);
    ob_hp_values hp, tr;
    ob_hp_defaults(&hp, d->hp, d->n_hp);
    ob_hp_defaults(&tr, ob_train_hp_defs, ob_train_hp_count);
    if (sets) CHECK_OK(ob_hp_set_list(&hp, opt, sets, &e), &e);
    if (train_sets) CHECK_OK(ob_hp_set_list(&tr, "train", train_sets, &e), &e);
    CHECK_OK(ob_optim_create(d, &hp, &tr, &r->opt, &e), &e);
    CHECK_OK(ob_optim_route(r->opt, &r->lay, &e), &e);
    CHECK_OK(ob_layout_finalize(&r->lay, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, (size_t)r->lay.total * 4, (void **)&r->p, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, (size_t)r->lay.total * 4, (void **)&r->g, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, 4, (void **)&r->loss, &e), &e);
    CHECK_OK(ob_dev_alloc(&r->dev, sizeof *r->rec, (void **)&r->rec, &e), &e);
    CHECK_OK(ob_optim_setup(r->opt, &r->dev, &r->lay, &e), &e);
    ob_optim_set_total_steps(r->opt, total_steps);
    *r->loss = 1.0f;
}

/* opt with the settings sets (may be NULL) and train_sets over one vector "x" of n floats. */
static inline void rig_open(rig *r, const char *opt, const char *sets, const char *train_sets, int n)
{
    ob_err e;
    memset(r, 0, sizeof *r);
    CHECK_OK(ob_device_open(&r->dev, "cpu", 0, &e), &e);
    ob_layout_init(&r->lay);
    int64_t shape[1] = {n};
    CHECK_OK(ob_layout_add(&r->lay, "x", OB_TAG_VECTOR, 1, shape, NULL, &e), &e);
    rig_setup_layout(r, opt, sets, train_sets, 100);
}

/* opt with the settings sets and train_sets (either may be NULL) over nt
 * tensors t0, t1, ... of nd[i] dimensions shape[i] (tagged as a matrix,
 * conv kernel or bias by their number of dimensions), for total_steps steps. */
static inline void rig_open_tensors_train(rig *r, const char *opt, const char *sets, const char *train_sets, int nt,
                                          const int *nd, const int64_t (*shape)[4], int total_steps)
{
    ob_err e;
    memset(r, 0, sizeof *r);
    CHECK_OK(ob_device_open(&r->dev, "cpu", 0, &e), &e);
    ob_layout_init(&r->lay);
    for (int i = 0; i < nt; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        ob_tag tag = nd[i] == 4 ? OB_TAG_CONV : nd[i] == 2 ? OB_TAG_MATRIX : OB_TAG_BIAS;
        CHECK_OK(ob_layout_add(&r->lay, name, tag, nd[i], shape[i], NULL, &e), &e);
    }
    rig_setup_layout(r, opt, sets, train_sets, total_steps);
}

static inline void rig_open_tensors(rig *r, const char *opt, const char *sets, int nt, const int *nd,
                             const int64_t (*shape)[4], int total_steps)
{
    rig_open_tensors_train(r, opt, sets, NULL, nt, nd, shape, total_steps);
}

/* Gradients of update `step` into r->g for the first nt tensors and, as
 * doubles, into gd[i]: normal(seed + step, i, j) times a scale from 1e-4 to
 * 10 that changes by decades (step % 6), none at all at step 6; gd then
 * clipped as torch.nn.utils.clip_grad_norm_(clip_norm) over every tensor
 * (clip_norm 0: not). */
static inline void rig_grads(rig *r, int nt, int step, uint64_t seed, double clip_norm, double *const *gd)
{
    const float scale = step == 6 ? 0.0f : powf(10.0f, (float)(step % 6) - 4.0f);
    double sq = 0;
    for (int i = 0; i < nt; i++)
        for (int64_t j = 0; j < r->lay.t[i].numel; j++) {
            const float gj = scale * ob_rng_normal(seed + (uint64_t)step, (uint64_t)i, (uint64_t)j);
            r->g[r->lay.t[i].offset + j] = gj;
            gd[i][j] = gj;
            sq += (double)gj * gj;
        }
    if (clip_norm > 0) {
        const double f = fmin(1.0, clip_norm / (sqrt(sq) + 1e-6));
        for (int i = 0; i < nt; i++)
            for (int64_t j = 0; j < r->lay.t[i].numel; j++) gd[i][j] *= f;
    }
}

/* max |p - p_ref| / max(1, |p_ref|) over the first nt tensors, at least worst. */
static inline double rig_worst(const rig *r, int nt, double *const *pref, double worst)
{
    for (int i = 0; i < nt; i++)
        for (int64_t j = 0; j < r->lay.t[i].numel; j++) {
            const double d = fabs(r->p[r->lay.t[i].offset + j] - pref[i][j]) / fmax(1.0, fabs(pref[i][j]));
            if (d > worst) worst = d;
        }
    return worst;
}

static inline void rig_close(rig *r)
{
    ob_optim_destroy(r->opt);
    ob_layout_free(&r->lay);
    ob_device_close(&r->dev);
}

#endif
