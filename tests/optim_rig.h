/* tests/optim_rig.h - an optimizer on the CPU backend over one vector
 * parameter "x" of n floats, with its parameters, gradients, loss and step
 * record, for tests that drive ob_optim_step by hand. Include after check.h. */
#ifndef OB_TESTS_OPTIM_RIG_H
#define OB_TESTS_OPTIM_RIG_H

#include <string.h>

#include "optimizers/optim.h"

typedef struct rig {
    ob_device dev;
    ob_layout lay;
    ob_optim *opt;
    float *p, *g, *loss;
    ob_step_record *rec;
} rig;

/* opt with the "k=v,..." settings sets (may be NULL) and train_sets. */
static void rig_open(rig *r, const char *opt, const char *sets, const char *train_sets, int n)
{
    ob_err e;
    memset(r, 0, sizeof *r);
    CHECK_OK(ob_device_open(&r->dev, "cpu", 0, &e), &e);
    ob_layout_init(&r->lay);
    int64_t shape[1] = {n};
    CHECK_OK(ob_layout_add(&r->lay, "x", OB_TAG_VECTOR, 1, shape, NULL, &e), &e);
    const ob_optimizer_def *d = ob_optimizer_find(opt);
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
    ob_optim_set_total_steps(r->opt, 100);
}

static void rig_close(rig *r)
{
    ob_optim_destroy(r->opt);
    ob_layout_free(&r->lay);
    ob_device_close(&r->dev);
}

#endif
