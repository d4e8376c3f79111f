/* tests/test_optim_run.c - every optimizer of the library through the run
 * loop (ob_run_matrix) on the test-function workloads: each cell finishes
 * with a full curve and lands below its start; then the hybrid optimizers on
 * the smallest conv net, whose kernels go to the Newton-Schulz group; and the
 * schedule-free optimizers evaluated at their average. */
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "harness/run.h"
#include "optimizers/optim.h"

static int count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void run_config(const char *yaml, int cells, int steps, const char *improved_sql)
{
    char path[] = "/tmp/ob_optrun_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c, yaml, "optimizers.yaml", &e), &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    CHECK(m.n == cells);
    ob_device dev;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    ob_store *st;
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &st, &e), &e);
    ob_run_summary sum;
    CHECK_OK(ob_run_matrix(&c, &m, &dev, st, &sum, &e), &e);
    CHECK_MSG(sum.done == cells && sum.failed == 0, "%d done, %d failed, %d diverged", sum.done, sum.failed,
              sum.diverged);
    ob_store_close(st);
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM runs WHERE status='done' AND steps_done=%d", steps);
    CHECK(count(db, sql) == cells);
    CHECK(count(db, "SELECT count(*) FROM runs WHERE state_bytes IS NULL OR state_bytes < 0") == 0);
    int better = count(db, improved_sql);
    CHECK_MSG(better == cells, "%d of %d cells improved", better, cells);
    sqlite3_close(db);
    ob_device_close(&dev);
    ob_matrix_free(&m);
    ob_config_free(&c);
    check_remove_db(path);
}

/* Each optimizer's lr for 40 steps of both test functions, where the
 * default is too timid or too bold (radam and adabelief start as SGD with
 * momentum, and sgd_sf and asgd are SGD: a small lr survives rosenbrock's large first
 * gradients; lars with its defaults is SGD). Every optimizer of the registry must be here. */
static const struct {
    const char *name;
    const char *lr;
} run_lrs[] = {
    {"sgd", "0.001"},     {"adam", "0.01"},    {"adamw", "0.01"},     {"nadam", "0.01"},    {"radam", "0.0001"},
    {"adamax", "0.01"},   {"adagrad", "0.05"}, {"adadelta", "1.0"},   {"rmsprop", "0.001"}, {"lion", "0.001"},
    {"muon", "0.01"},     {"root", "0.01"},    {"adamw_sf", "0.01"},  {"sgd_sf", "0.001"},  {"soap", "0.01"},
    {"adafactor", "0.01"}, {"rprop", "0.01"},  {"asgd", "0.001"},    {"lamb", "0.01"},
    {"lars", "0.001"},    {"ademamix", "0.01"}, {"adabelief", "0.0001"},
};
#define N_RUN_LRS (int)(sizeof run_lrs / sizeof run_lrs[0])

/* The run loop evaluates a schedule-free optimizer at its average, as the
 * optimizer says (ob_optim_eval_params), not at the parameters its gradients
 * are taken at: the run's final evaluation is the one the same steps taken by
 * hand give there, and not the loss at the parameters themselves. */
static void test_eval_point(const char *opt)
{
    char path[] = "/tmp/ob_optrun_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    char yaml[256];
    snprintf(yaml, sizeof yaml, "workloads: [quadratic]\noptimizers: [%s]\nlrs: [0.05]\nsteps: 12\n"
                                "workload_params: {quadratic: {dim: 8}}\n", opt);
    ob_config c;
    ob_err e;
    ob_config_init(&c);
    CHECK_OK(ob_config_load_text(&c, yaml, "sf.yaml", &e), &e);
    ob_matrix m;
    CHECK_OK(ob_matrix_expand(&c, &m, NULL, &e), &e);
    ob_device dev;
    CHECK_OK(ob_device_open(&dev, "cpu", 0, &e), &e);
    ob_store *st;
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &st, &e), &e);
    ob_run_summary sum;
    CHECK_OK(ob_run_matrix(&c, &m, &dev, st, &sum, &e), &e);
    ob_store_close(st);
    sqlite3 *db;
    double run_eval = NAN;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT eval_loss FROM runs", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        run_eval = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    check_remove_db(path);

    /* the same 12 steps by hand */
    const ob_cell *cell = &m.cells[0];
    ob_workload *wl = NULL;
    ob_optim *o = NULL;
    ob_layout lay;
    ob_layout_init(&lay);
    float *p = NULL, *g = NULL, *loss = NULL;
    ob_step_record *rec = NULL;
    CHECK_OK(cell->wl->create(cell->wl, &cell->wl_hp, &dev, (uint64_t)cell->seed, &wl, &e), &e);
    CHECK_OK(wl->vt->describe(wl, &lay, &e), &e);
    CHECK_OK(ob_cell_make_optim(cell, &o, &e), &e);
    CHECK_OK(ob_optim_route(o, &lay, &e), &e);
    CHECK_OK(ob_layout_finalize(&lay, &e), &e);
    const size_t bytes = (size_t)lay.total * sizeof(float);
    CHECK_OK(ob_dev_alloc(&dev, bytes, (void **)&p, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, bytes, (void **)&g, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, sizeof *loss, (void **)&loss, &e), &e);
    CHECK_OK(ob_dev_alloc(&dev, sizeof *rec, (void **)&rec, &e), &e);
    CHECK_OK(wl->vt->setup(wl, &lay, &e), &e);
    CHECK_OK(ob_optim_setup(o, &dev, &lay, &e), &e);
    ob_optim_set_total_steps(o, 12);
    CHECK_OK(wl->vt->init_params(wl, p, &e), &e);
    for (int64_t t = 1; t <= 12; t++) {
        CHECK_OK(wl->vt->train_step(wl, p, g, t - 1, loss, &e), &e);
        CHECK_OK(ob_optim_step(o, p, g, loss, t, rec, &e), &e);
    }
    float *at = p;
    ob_eval avg = {NAN, NAN, NAN}, raw = {NAN, NAN, NAN};
    CHECK_OK(ob_optim_eval_params(o, p, &at, &e), &e);
    CHECK_OK(wl->vt->evaluate(wl, at, &avg, &e), &e);
    CHECK_OK(wl->vt->evaluate(wl, p, &raw, &e), &e);
    CHECK_MSG(at != p && fabs(raw.loss - avg.loss) > 1e-6 * fabs(avg.loss), "%s: the average is no other point", opt);
    CHECK_MSG(run_eval == avg.loss, "%s: the run's evaluation %.9g, at the average %.9g, at the parameters %.9g", opt,
              run_eval, avg.loss, raw.loss);
    wl->vt->destroy(wl);
    ob_optim_destroy(o);
    ob_layout_free(&lay);
    ob_dev_free(&dev, p);
    ob_dev_free(&dev, g);
    ob_dev_free(&dev, loss);
    ob_dev_free(&dev, rec);
    ob_device_close(&dev);
    ob_matrix_free(&m);
    ob_config_free(&c);
}

int main(void)
{
    int n_opt;
    const ob_optimizer_def *const *all = ob_optimizers(&n_opt);
    for (int i = 0; i < n_opt; i++) {
        int found = 0;
        for (int k = 0; k < N_RUN_LRS; k++) found |= !strcmp(run_lrs[k].name, all[i]->name);
        CHECK_MSG(found, "optimizer %s has no lr in run_lrs[] (tests/test_optim_run.c)", all[i]->name);
    }
    char cfg[2048], names[512] = "", lrs[1024] = "";
    for (int k = 0; k < N_RUN_LRS; k++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", run_lrs[k].name);
        snprintf(lrs + strlen(lrs), sizeof lrs - strlen(lrs), "%s%s: [%s]", k ? ", " : "", run_lrs[k].name,
                 run_lrs[k].lr);
    }
    snprintf(cfg, sizeof cfg,
             "workloads: [quadratic, rosenbrock]\n"
             "optimizers: [%s]\n"
             "lrs: {%s}\n"
             "hparams: {muon: {adamw_lr: 0.01}}\n"
             "workload_params: {quadratic: {dim: 16}, rosenbrock: {dim: 4}}\n"
             "steps: 40\n",
             names, lrs);
    run_config(cfg, 2 * N_RUN_LRS, 40,
               "SELECT count(*) FROM runs r WHERE best_loss < (SELECT loss FROM curves c WHERE c.run_id = r.id "
               "AND c.step = 1)");
    run_config("workloads: [cnn-tiny]\noptimizers: [muon, root]\nlrs: [0.02]\nsteps: 6\n"
               "train: {schedule: warmup_cosine, warmup_steps: 2}\n",
               2, 6, "SELECT count(*) FROM runs WHERE state_bytes > 0");
    test_eval_point("sgd_sf");
    test_eval_point("adamw_sf");
    return check_done();
}
