/* tests/test_pipeline.c - the optimizer pipeline on the CPU backend:
 * hand-computed sgd and adam steps, clipping (torch's scale, clip / (norm +
 * 1e-6)), and the guard (a planted NaN gradient is skipped and recorded, or
 * applied as it is with on_nonfinite = none), end to end through the run loop;
 * the run loop's verdicts on planted step records (streaks of non-finite
 * steps, spikes within them, the guard's stop, the divergence bound) and what
 * it records beside the loss (the lr in effect, the spike guard's settings). */
#include <math.h>
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
    check_remove_db(path);
}

/* ---- the run loop's verdicts on planted step records ----------------------- */

/* The CPU backend with the step records changed on their way to the host:
 * step t's record says planted[t] (a skipped flag; 0: as it is). The
 * optimizer stepped as usual; what is under test is what the run loop makes
 * of the records. */
static ob_backend_ops plant_ops;
static const ob_backend_ops *plant_real;
static int plant_steps, plant_flushed;
static float planted[64], planted_loss[64]; /* planted_loss: NaN keeps the record's loss */

static ob_status plant_timer_mark(ob_device *dev, int slot, ob_err *e)
{
    ob_status st = plant_real->timer_mark(dev, slot, e);
    if (st == OB_OK && slot % 3 == 2) plant_steps++;
    return st;
}

static ob_status plant_download(ob_device *dev, void *dst, const void *src, size_t bytes, ob_err *e)
{
    ob_status st = plant_real->download(dev, dst, src, bytes, e);
    /* the records of the steps since the last flush */
    const int nb = plant_steps - plant_flushed;
    if (st != OB_OK || nb <= 0 || bytes != (size_t)nb * sizeof(ob_step_record)) return st;
    ob_step_record *r = dst;
    for (int k = 0; k < nb; k++) {
        const int t = plant_flushed + 1 + k;
        if (t < 64 && planted[t] != 0) r[k].skipped = planted[t];
        if (t < 64 && !isnan(planted_loss[t])) r[k].loss = planted_loss[t];
    }
    plant_flushed = plant_steps;
    return st;
}

/* One run of 20 steps with quadratic settings wl and train settings train,
 * and the planted records; its row (status|diverged_step|steps_done) and
 * events (step|kind ...), or with sql the column x of what sql gives (rows
 * joined by ' ') in place of the events. */
static void planted_run(const char *wl, const char *train, const char *sql, char *row, char *events, size_t n)
{
    char path[] = "/tmp/ob_plant_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "workloads: quadratic\noptimizers: sgd\nlrs: [0.01]\nsteps: 20\nbackend: cpu\n"
             "workload_params: {quadratic: {dim: 10%s}}\ntrain: {%s}\n", wl, train);
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c, yaml, "plant.yaml", &e), &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    ob_device dev;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    plant_real = dev.ops;
    plant_ops = *dev.ops;
    plant_ops.timer_mark = plant_timer_mark;
    plant_ops.download = plant_download;
    dev.ops = &plant_ops;
    plant_steps = plant_flushed = 0;
    ob_store *st;
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &st, &e), &e);
    ob_run_summary sum;
    CHECK_OK(ob_run_matrix(&c, &m, &dev, st, &sum, &e), &e);
    ob_store_close(st);
    dev.ops = plant_real;
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *q;
    row[0] = events[0] = 0;
    if (sqlite3_prepare_v2(db, "SELECT status || '|' || coalesce(diverged_step, '') || '|' || steps_done FROM runs", -1,
                           &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        snprintf(row, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    char ev[512];
    snprintf(ev, sizeof ev, "SELECT group_concat(x, ' ') FROM (%s)",
             sql ? sql : "SELECT step || '|' || kind AS x FROM events ORDER BY id");
    if (sqlite3_prepare_v2(db, ev, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
        sqlite3_column_text(q, 0))
        snprintf(events, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(db);
    ob_device_close(&dev);
    ob_matrix_free(&m);
    ob_config_free(&c);
    check_remove_db(path);
}

static void expect_planted(const char *what, const char *wl, const char *train, const char *want_row,
                           const char *want_events)
{
    char row[256], events[1024];
    planted_run(wl, train, NULL, row, events, sizeof row);
    CHECK_MSG(!strcmp(row, want_row), "%s: run '%s', want '%s'", what, row, want_row);
    CHECK_MSG(!strcmp(events, want_events), "%s: events '%s', want '%s'", what, events, want_events);
    memset(planted, 0, sizeof planted);
    for (int t = 0; t < 64; t++) planted_loss[t] = NAN;
}

/* The streak of non-finite steps that ends a run (max_bad_steps 3): an
 * applied step between two short streaks ends the first; a step the spike
 * guard skipped neither ends nor lengthens one, and the run is diverged at
 * the streak's first step. The guard's stop, a first loss that cannot scale
 * the divergence rule, and a loss at and past its bound. */
static void test_run_streaks(void)
{
    for (int t = 0; t < 64; t++) planted_loss[t] = NAN;
    const float bad = (float)OB_REC_NONFINITE, spike = (float)OB_REC_NONFINITE + 1;
    planted[5] = planted[6] = planted[8] = planted[9] = bad;
    expect_planted("two short streaks", "", "max_bad_steps: 3", "done||20",
                   "5|skipped_step 6|skipped_step 8|skipped_step 9|skipped_step");
    planted[5] = planted[6] = planted[9] = bad;
    planted[7] = planted[8] = spike;
    expect_planted("spikes within a streak", "", "max_bad_steps: 3", "diverged|5|9",
                   "5|skipped_step 6|skipped_step 7|spike_skipped 8|spike_skipped 9|skipped_step 5|diverged");
    planted[3] = planted[4] = planted[5] = bad;
    expect_planted("a streak", "", "max_bad_steps: 3", "diverged|3|5",
                   "3|skipped_step 4|skipped_step 5|skipped_step 3|diverged");
    /* on_nonfinite = stop: the run ends at the non-finite step itself */
    expect_planted("the guard stops the run", ", inject_nan_step: 7", "on_nonfinite: stop", "diverged|7|7",
                   "7|skipped_step 7|diverged 7|optimizer");
    /* a first loss that is not above 0 is no scale for divergence: the rule
     * is off (the loss of step 2 is far above 1e4 x -1 or 0) */
    planted_loss[1] = -1;
    expect_planted("a negative first loss", "", "", "done||20", "");
    planted_loss[1] = 0;
    expect_planted("a first loss of 0", "", "", "done||20", "");
    /* a loss of diverge_factor x the first is not above it */
    planted_loss[1] = 1;
    planted_loss[5] = 10000;
    expect_planted("a loss at the divergence bound", "", "diverge_factor: 10000", "done||20", "");
    planted_loss[1] = 1;
    planted_loss[5] = 10001;
    expect_planted("a loss past the divergence bound", "", "diverge_factor: 10000", "diverged|5|5", "5|diverged");
}

/* What the run records beside its loss: the lr in effect at each step of the
 * curve (a warm-up of 4 steps from lr / 4), and the spike guard's settings
 * in its hyperparameters when only the gradient norm's is on. */
static void test_run_records(void)
{
    char row[256], got[1024];
    planted_run("", "schedule: warmup, warmup_steps: 4", "SELECT lr AS x FROM curves WHERE step <= 5 ORDER BY step",
                row, got, sizeof got);
    CHECK_MSG(!strcmp(row, "done||20") && !strcmp(got, "0.0025 0.005 0.0075 0.01 0.01"), "%s: lr %s", row, got);
    planted_run("", "spike_z_grad: 3", "SELECT json_extract(hparams, '$.train.spike_z_grad') || ' ' || "
                "json_extract(hparams, '$.train.spike_z_loss') || ' ' || json_extract(hparams, "
                "'$.train.spike_window') AS x FROM runs", row, got, sizeof got);
    CHECK_MSG(!strcmp(got, "3 0 128"), "the spike guard's settings in the hyperparameters: '%s'", got);
}

int main(void)
{
    test_sgd_hand();
    test_adam_hand();
    test_clip_and_guard();
    test_clip_small_norm();
    test_nonfinite_none();
    test_run_guard();
    test_run_streaks();
    test_run_records();
    return check_done();
}
