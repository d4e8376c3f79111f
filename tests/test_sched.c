/* tests/test_sched.c - learning-rate schedules: constant, warmup, cosine,
 * warmup_cosine and wsd at chosen steps against values computed by hand, the
 * lr the step records, and the settings that contradict each other. */
#include <string.h>

#include "check.h"
#include "optimizers/optim.h"

/* An sgd optimizer (lr 0.1) with train settings; NULL on a create error (err filled). */
static ob_optim *make(const char *train_sets, int64_t total, ob_err *err)
{
    const ob_optimizer_def *d = ob_optimizer_find("sgd");
    ob_hp_values hp, tr;
    ob_hp_defaults(&hp, d->hp, d->n_hp);
    ob_hp_defaults(&tr, ob_train_hp_defs, ob_train_hp_count);
    ob_err e;
    CHECK_OK(ob_hp_set(&hp, "sgd", "lr", "0.1", &e), &e);
    if (train_sets && ob_hp_set_list(&tr, "train", train_sets, err) != OB_OK) return NULL;
    ob_optim *o = NULL;
    if (ob_optim_create(d, &hp, &tr, &o, err) != OB_OK) return NULL;
    ob_optim_set_total_steps(o, total);
    return o;
}

static void test_constant(void)
{
    ob_err e;
    ob_optim *o = make(NULL, 100, &e);
    CHECK(o != NULL);
    CHECK_NEAR(ob_optim_lr(o, 1), 0.1, 0);
    CHECK_NEAR(ob_optim_lr(o, 100), 0.1, 0);
    ob_optim_destroy(o);
}

static void test_warmup(void)
{
    ob_err e;
    ob_optim *o = make("schedule=warmup,warmup_steps=4", 100, &e);
    CHECK(o != NULL);
    CHECK_NEAR(ob_optim_lr(o, 1), 0.025, 1e-15); /* 0.1 * 1/4 */
    CHECK_NEAR(ob_optim_lr(o, 2), 0.05, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 4), 0.1, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 5), 0.1, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 100), 0.1, 1e-15);
    ob_optim_destroy(o);
}

static void test_cosine(void)
{
    ob_err e;
    ob_optim *o = make("schedule=cosine,min_lr=0.01", 10, &e);
    CHECK(o != NULL);
    /* i = t-1; lr = 0.01 + 0.09 * (1 + cos(pi i / 10)) / 2 */
    CHECK_NEAR(ob_optim_lr(o, 1), 0.1, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 6), 0.055, 1e-15); /* i = 5: cos(pi/2) = 0 */
    CHECK_NEAR(ob_optim_lr(o, 10), 0.01 + 0.045 * (1 + cos(0.9 * M_PI)), 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 11), 0.01, 1e-15); /* one past the end */
    ob_optim_destroy(o);
}

static void test_warmup_cosine(void)
{
    ob_err e;
    ob_optim *o = make("schedule=warmup_cosine,warmup_steps=2,min_lr=0", 12, &e);
    CHECK(o != NULL);
    CHECK_NEAR(ob_optim_lr(o, 1), 0.05, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 2), 0.1, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 3), 0.1, 1e-15);  /* r = 0 */
    CHECK_NEAR(ob_optim_lr(o, 8), 0.05, 1e-15); /* r = 5/10: half way */
    CHECK_NEAR(ob_optim_lr(o, 12), 0.05 * (1 + cos(0.9 * M_PI)), 1e-15);
    ob_optim_destroy(o);
}

static void test_wsd(void)
{
    ob_err e;
    ob_optim *o = make("schedule=wsd,warmup_steps=2,min_lr=0.02,decay_frac=0.25", 20, &e);
    CHECK(o != NULL);
    /* warmup 2, stable until i = 15, decay over the last 5 steps: lr + (min - lr) (i - 15) / 5 */
    CHECK_NEAR(ob_optim_lr(o, 1), 0.05, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 3), 0.1, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 16), 0.1, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 17), 0.1 - 0.08 * 0.2, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 20), 0.1 - 0.08 * 0.8, 1e-15);
    CHECK_NEAR(ob_optim_lr(o, 21), 0.02, 1e-15);
    ob_optim_destroy(o);
}

/* The scheduled lr reaches the update and the step record. */
static void test_step_uses_schedule(void)
{
    ob_err e;
    ob_optim *o = make("schedule=warmup,warmup_steps=2", 10, &e);
    ob_device dev;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    ob_layout l;
    ob_layout_init(&l);
    int64_t shape[1] = {3};
    CHECK_OK(ob_layout_add(&l, "x", OB_TAG_VECTOR, 1, shape, NULL, &e), &e);
    CHECK_OK(ob_optim_route(o, &l, &e), &e);
    CHECK_OK(ob_layout_finalize(&l, &e), &e);
    float *p, *g, *loss;
    ob_step_record *rec;
    CHECK_OK(ob_dev_alloc(&dev, (size_t)l.total * 4, (void **)&p, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, (size_t)l.total * 4, (void **)&g, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, 4, (void **)&loss, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, sizeof *rec, (void **)&rec, &e), &e);
    CHECK_OK(ob_optim_setup(o, &dev, &l, &e), &e);
    g[0] = 1;
    CHECK_OK(ob_optim_step(o, p, g, loss, 1, rec, &e), &e);
    CHECK_NEAR(p[0], -0.05, 1e-7);
    CHECK_NEAR(rec->lr, 0.05, 1e-8);
    CHECK_OK(ob_optim_step(o, p, g, loss, 2, rec, &e), &e);
    CHECK_NEAR(p[0], -0.15, 1e-7);
    CHECK_NEAR(rec->lr, 0.1, 1e-8);
    ob_optim_destroy(o);
    ob_layout_free(&l);
    ob_device_close(&dev);
}

static void test_contradictions(void)
{
    ob_err e;
    CHECK(make("warmup_steps=10", 100, &e) == NULL);
    CHECK(strstr(e.msg, "train.warmup_steps = 10 has no effect with train.schedule = constant") != NULL);
    CHECK(make("schedule=warmup,min_lr=0.01", 100, &e) == NULL);
    CHECK(strstr(e.msg, "train.min_lr = 0.01 has no effect") != NULL);
    CHECK(make("schedule=cosine,min_lr=0.5", 100, &e) == NULL);
    CHECK(strstr(e.msg, "above the learning rate") != NULL);
    CHECK(make("schedule=cosine,decay_frac=0.5", 100, &e) == NULL);
    CHECK(e.status == OB_ERR_INPUT);
    CHECK(make("schedule=cosin", 100, &e) == NULL);
    CHECK(strstr(e.msg, "is not one of") != NULL);
}

int main(void)
{
    test_constant();
    test_warmup();
    test_cosine();
    test_warmup_cosine();
    test_wsd();
    test_step_uses_schedule();
    test_contradictions();
    return check_done();
}
