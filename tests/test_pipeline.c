/* tests/test_pipeline.c - the optimizer pipeline on the CPU backend:
 * hand-computed sgd and adam steps, clipping (torch's scale, clip / (norm +
 * 1e-6)), and the guard (a planted NaN gradient is skipped and recorded, or
 * applied as it is with on_nonfinite = none), end to end through the run loop. */
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/run.h"
#include "optim_rig.h"
#include "optimizers/optim.h"

static void test_sgd_hand(void)
{
    rig r;
    ob_err e;
    rig_open(&r, "sgd", "lr=0.1,momentum=0.9,weight_decay=0.01", NULL, 2);
    r.p[0] = 1.0f;
    r.p[1] = -2.0f;
    *r.loss = 1.0f;
    /* step 1: g' = g + wd p; buf = g'; p -= lr buf */
    r.g[0] = 0.5f;
    r.g[1] = 1.0f;
    CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 1, r.rec, &e), &e);
    double b0 = 0.5 + 0.01 * 1.0, b1 = 1.0 + 0.01 * -2.0;
    double p0 = 1.0 - 0.1 * b0, p1 = -2.0 - 0.1 * b1;
    CHECK_NEAR(r.p[0], p0, 1e-6);
    CHECK_NEAR(r.p[1], p1, 1e-6);
    CHECK_NEAR(r.rec->grad_norm, sqrt(0.25 + 1.0), 1e-6);
    /* step 2: buf = m buf + g' */
    CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 2, r.rec, &e), &e);
    double g0 = 0.5 + 0.01 * p0, g1 = 1.0 + 0.01 * p1;
    b0 = 0.9 * b0 + g0;
    b1 = 0.9 * b1 + g1;
    CHECK_NEAR(r.p[0], p0 - 0.1 * b0, 1e-6);
    CHECK_NEAR(r.p[1], p1 - 0.1 * b1, 1e-6);
    rig_close(&r);
}

static void test_adam_hand(void)
{
    rig r;
    ob_err e;
    rig_open(&r, "adam", "lr=0.01", NULL, 1);
    r.p[0] = 1.0f;
    *r.loss = 1.0f;
    double p = 1, m = 0, v = 0;
    const double gs[3] = {0.3, -0.2, 0.5};
    for (int t = 1; t <= 3; t++) {
        r.g[0] = (float)gs[t - 1];
        CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, t, r.rec, &e), &e);
        m = 0.9 * m + 0.1 * gs[t - 1];
        v = 0.999 * v + 0.001 * gs[t - 1] * gs[t - 1];
        double mh = m / (1 - pow(0.9, t)), vh = v / (1 - pow(0.999, t));
        p -= 0.01 * mh / (sqrt(vh) + 1e-8);
        CHECK_NEAR(r.p[0], p, 1e-6);
    }
    rig_close(&r);
}

static void test_clip_and_guard(void)
{
    rig r;
    ob_err e;
    rig_open(&r, "sgd", "lr=1", "clip_norm=1", 2);
    r.p[0] = r.p[1] = 0;
    *r.loss = 1.0f;
    r.g[0] = 3;
    r.g[1] = 4; /* norm 5, clipped to 1 */
    CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 1, r.rec, &e), &e);
    CHECK_NEAR(r.p[0], -0.6, 1e-6);
    CHECK_NEAR(r.p[1], -0.8, 1e-6);
    CHECK(r.rec->skipped == 0);
    /* a NaN gradient: nothing changes, the record says skipped */
    r.g[1] = NAN;
    CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 2, r.rec, &e), &e);
    CHECK_NEAR(r.p[0], -0.6, 1e-6);
    CHECK_NEAR(r.p[1], -0.8, 1e-6);
    CHECK(r.rec->skipped == 1);
    /* a non-finite loss is skipped too */
    r.g[1] = 4;
    *r.loss = INFINITY;
    CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 3, r.rec, &e), &e);
    CHECK(r.rec->skipped == 1);
    CHECK_NEAR(r.p[0], -0.6, 1e-6);
    rig_close(&r);
}

/* torch's clip scale, clip / (norm + 1e-6): with a norm of 5e-4 and clip 1e-4
 * it is 0.1996, not 0.2 */
static void test_clip_small_norm(void)
{
    rig r;
    ob_err e;
    rig_open(&r, "sgd", "lr=1", "clip_norm=1e-4", 2);
    r.p[0] = r.p[1] = 0;
    *r.loss = 1.0f;
    r.g[0] = 3e-4f;
    r.g[1] = 4e-4f;
    CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 1, r.rec, &e), &e);
    const double norm = sqrt(3e-4f * (double)3e-4f + 4e-4f * (double)4e-4f), scale = 1e-4 / (norm + 1e-6);
    CHECK_MSG(fabs(r.p[0] / (-3e-4 * scale) - 1) < 1e-5 && fabs(r.p[1] / (-4e-4 * scale) - 1) < 1e-5,
              "p = %.9g, %.9g; want scale %.9g", r.p[0], r.p[1], scale);
    rig_close(&r);
}

/* train.on_nonfinite = none: a non-finite gradient is applied as it is (the
 * parameters become NaN), and recorded as non-finite; with clipping (the
 * statistics known before the update) and without. */
static void test_nonfinite_none(void)
{
    for (int clip = 0; clip < 2; clip++) {
        rig r;
        ob_err e;
        rig_open(&r, "sgd", "lr=1", clip ? "on_nonfinite=none,clip_norm=10" : "on_nonfinite=none", 2);
        r.p[0] = r.p[1] = 0;
        *r.loss = 1.0f;
        r.g[0] = 1;
        r.g[1] = NAN;
        CHECK_OK(ob_optim_step(r.opt, r.p, r.g, r.loss, 1, r.rec, &e), &e);
        CHECK_MSG(r.p[0] == -1.0f && isnan(r.p[1]) && r.rec->skipped == (float)OB_REC_NONFINITE,
                  "clip %d: p = %g, %g, skipped %g", clip, r.p[0], r.p[1], r.rec->skipped);
        rig_close(&r);
    }
}

static int count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* The run loop records a planted NaN as a skipped step and the run finishes. */
static void test_run_guard(void)
{
    char path[] = "/tmp/ob_guard_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c,
                                 "workloads: quadratic\noptimizers: [sgd, adam]\nlrs: [0.01]\nsteps: 30\n"
                                 "workload_params: {quadratic: {dim: 8, inject_nan_step: 7}}\n"
                                 "train: {max_bad_steps: 3}\n",
                                 "guard.yaml", &e),
             &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    ob_device dev;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    ob_store *st;
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &st, &e), &e);
    ob_run_summary sum;
    FILE *saved = stderr;
    (void)saved;
    CHECK_OK(ob_run_matrix(&c, &m, &dev, st, &sum, &e), &e);
    CHECK(sum.done == 2 && sum.failed == 0 && sum.diverged == 0);
    ob_store_close(st);
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(count(db, "SELECT count(*) FROM events WHERE kind='skipped_step' AND step=7") == 2);
    CHECK(count(db, "SELECT count(*) FROM curves") == 60);
    CHECK(count(db, "SELECT count(*) FROM runs WHERE status='done' AND steps_done=30") == 2);
    sqlite3_close(db);
    ob_device_close(&dev);
    ob_matrix_free(&m);
    ob_config_free(&c);
    unlink(path);
    char wal[64];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
}

int main(void)
{
    test_sgd_hand();
    test_adam_hand();
    test_clip_and_guard();
    test_clip_small_norm();
    test_nonfinite_none();
    test_run_guard();
    return check_done();
}
