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

/* The lr a schedule gives at one step. */
typedef struct lr_at {
    int64_t step;
    double lr;
} lr_at;

/* An sgd optimizer (lr 0.1) with train settings train_sets over total steps
 * gives the lrs of want[0..n) (each within tol). */
static void check_lrs(const char *train_sets, int64_t total, const lr_at *want, size_t n, double tol)
{
    const char *what = train_sets ? train_sets : "(no train settings)";
    ob_err e;
    ob_optim *o = make(train_sets, total, &e);
    CHECK_MSG(o != NULL, "%s: %s", what, e.msg);
    if (!o) return;
    for (size_t i = 0; i < n; i++) {
        double lr = ob_optim_lr(o, want[i].step);
        CHECK_MSG(fabs(lr - want[i].lr) <= tol, "%s: lr at step %lld = %.17g, want %.17g (tol %g)", what,
                  (long long)want[i].step, lr, want[i].lr, tol);
    }
    ob_optim_destroy(o);
}

#define N_LRS(a) (sizeof(a) / sizeof *(a))

static void test_constant(void)
{
    const lr_at want[] = {{1, 0.1}, {100, 0.1}};
    check_lrs(NULL, 100, want, N_LRS(want), 0);
}

static void test_warmup(void)
{
    const lr_at want[] = {
        {1, 0.025}, /* 0.1 * 1/4 */
        {2, 0.05},
        {4, 0.1},
        {5, 0.1},
        {100, 0.1},
    };
    check_lrs("schedule=warmup,warmup_steps=4", 100, want, N_LRS(want), 1e-15);
}

static void test_cosine(void)
{
    /* i = t-1; lr = 0.01 + 0.09 * (1 + cos(pi i / 10)) / 2 */
    const lr_at want[] = {
        {1, 0.1},
        {6, 0.055}, /* i = 5: cos(pi/2) = 0 */
        {10, 0.01 + 0.045 * (1 + cos(0.9 * M_PI))},
        {11, 0.01}, /* one past the end */
    };
    check_lrs("schedule=cosine,min_lr=0.01", 10, want, N_LRS(want), 1e-15);
}

static void test_warmup_cosine(void)
{
    const lr_at want[] = {
        {1, 0.05},
        {2, 0.1},
        {3, 0.1},  /* r = 0 */
        {8, 0.05}, /* r = 5/10: half way */
        {12, 0.05 * (1 + cos(0.9 * M_PI))},
    };
    check_lrs("schedule=warmup_cosine,warmup_steps=2,min_lr=0", 12, want, N_LRS(want), 1e-15);
}

static void test_wsd(void)
{
    /* warmup 2, stable until i = 15, decay over the last 5 steps: lr + (min - lr) (i - 15) / 5 */
    const lr_at want[] = {
        {1, 0.05},
        {3, 0.1},
        {16, 0.1},
        {17, 0.1 - 0.08 * 0.2},
        {20, 0.1 - 0.08 * 0.8},
        {21, 0.02},
    };
    check_lrs("schedule=wsd,warmup_steps=2,min_lr=0.02,decay_frac=0.25", 20, want, N_LRS(want), 1e-15);
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
