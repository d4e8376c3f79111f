/* tests/test_stats_db.h - small results databases with known values, built
 * through the store API, for the statistics, report and compare tests.
 *
 * A run's curve is L(t) = final + max(0, T - t) / 2 for t = 0 .. n-1 (so it
 * first reaches a target y at the first integer t >= T - 2 (y - final) when
 * y > final, never when y < final); a diverged run's curve is 100 + t. */
#ifndef OB_TESTS_STATS_DB_H
#define OB_TESTS_STATS_DB_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/store.h"

/* the error of the failed run: a comma, quotes and a newline, for CSV quoting */
#define FX_ERROR_TEXT "planted failure: \"x\", then y\nsecond line"

typedef struct fx_run {
    const char *wl, *opt, *extra; /* extra: more hparams JSON members, e.g. "\"beta2\":0.95" */
    double lr;
    int seed;
    const char *status;           /* done | diverged | failed | pending */
    double final;                 /* final loss (ignored when diverged) */
    double T;                     /* curve knee */
    double step_ms, p90;
    int64_t peak, state;
    double eval_loss, metric;
    int n_curve;                  /* 0: 50 */
} fx_run;

/* stage: NULL for a sweep run, "confirm" for a confirmation run */
static inline int64_t fx_add_stage(ob_store *s, int64_t bench, const fx_run *r, const char *stage)
{
    ob_err e = {0};
    char hp[512];
    snprintf(hp, sizeof hp, "{\"lr\":%.17g%s%s,\"train\":{\"clip_norm\":0}}", r->lr,
             r->extra ? "," : "", r->extra ? r->extra : "");
    ob_run_spec spec = {.cell = 0, .workload = r->wl, .workload_params = "{\"dim\":4}",
                        .optimizer = r->opt, .hparams = hp, .lr = r->lr, .seed = r->seed,
                        .backend = "cpu", .device = "test", .steps = r->n_curve ? r->n_curve : 50,
                        .stage = stage};
    int64_t id = 0;
    if (ob_store_add_runs(s, bench, &spec, 1, &id, &e) != OB_OK) {
        fprintf(stderr, "fx_add: %s\n", e.msg);
        exit(1);
    }
    if (!strcmp(r->status, "pending")) return id;
    int n = r->n_curve ? r->n_curve : 50;
    int div = !strcmp(r->status, "diverged");
    ob_curve_point *pts = malloc((size_t)n * sizeof *pts);
    for (int t = 0; t < n; t++) {
        double L = div ? 100.0 + t : r->final + (r->T > t ? (r->T - t) / 2 : 0);
        pts[t] = (ob_curve_point){t, L, 1.0, r->lr};
    }
    ob_eval_point ev = {n - 1, div ? NAN : r->eval_loss, div ? NAN : r->metric};
    if (!strcmp(r->status, "failed")) n = 3;
    if (ob_store_append(s, id, pts, n, &ev, 1, NULL, 0, &e) != OB_OK) {
        fprintf(stderr, "fx_add: %s\n", e.msg);
        exit(1);
    }
    free(pts);
    ob_run_result res = {.status = r->status, .steps_done = n,
                         .final_loss = div || !strcmp(r->status, "failed") ? NAN : r->final,
                         .best_loss = r->final, .eval_loss = div ? NAN : r->eval_loss,
                         .eval_metric = div ? NAN : r->metric, .loss_floor = NAN,
                         .peak_mem_bytes = r->peak, .state_bytes = r->state,
                         .step_ms_median = r->step_ms, .step_ms_p90 = r->p90,
                         .step_ms_mean = r->step_ms, /* steady steps */
                         .items_per_sec = NAN, .diverged_step = div ? 7 : -1, .wall_s = 1.0,
                         .error = !strcmp(r->status, "failed") ? FX_ERROR_TEXT : NULL};
    if (ob_store_finish_run(s, id, &res, &e) != OB_OK) {
        fprintf(stderr, "fx_add: %s\n", e.msg);
        exit(1);
    }
    return id;
}

static inline int64_t fx_add(ob_store *s, int64_t bench, const fx_run *r) { return fx_add_stage(s, bench, r, NULL); }

/* Confirmation runs added to the reference database's benchmark 1 (values
 * in tests/test_stats.c, test_confirm): quad adam 3 fresh seeds at its best
 * lr 0.01; quad sgd 2 at its best lr 0.01, one diverged (median +inf); one
 * with the lr and seed of a sweep run (quad sgd 0.01 seed 0: another cell,
 * and not a fresh seed); rosen adam 1 at lr 0.03, not its best lr. */
static inline int fx_add_confirm(const char *path)
{
    ob_err e = {0};
    ob_store *s = NULL;
    if (ob_store_open(path, OB_STORE_EXISTING, &s, &e) != OB_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    static const double adam_conf[3] = {1.3, 1.1, 1.5};
    for (int k = 0; k < 3; k++)
        fx_add_stage(s, 1, &(fx_run){"quad", "adam", "\"beta2\":0.999", 0.01, 5 + k, "done", adam_conf[k], 20, 2.0, 3.0,
                               4096, 800, adam_conf[k] + 0.5, 1 - adam_conf[k] / 10, 0}, "confirm");
    fx_add_stage(s, 1, &(fx_run){"quad", "sgd", NULL, 0.01, 5, "done", 2.0, 20, 1.0, 1.5, 2048, 400, 2.5, 0.8, 0}, "confirm");
    fx_add_stage(s, 1, &(fx_run){"quad", "sgd", NULL, 0.01, 6, "diverged", 0, 20, 1.0, 1.5, 2048, 400, 0, 0, 0}, "confirm");
    fx_add_stage(s, 1, &(fx_run){"quad", "sgd", NULL, 0.01, 0, "done", 9.0, 20, 1.0, 1.5, 2048, 400, 9.5, 0.1, 0}, "confirm");
    fx_add_stage(s, 1, &(fx_run){"rosen", "adam", "\"beta2\":0.999", 0.03, 2, "done", 0.7, 10, 2.0, 3.0, 4096, 800, 0.8, NAN,
                           0}, "confirm");
    ob_store_close(s);
    return 0;
}

/* The reference database of the tests (values in tests/test_stats.c). */
static inline int fx_build_reference(const char *path)
{
    ob_err e = {0};
    ob_store *s = NULL;
    remove(path);
    if (ob_store_open(path, OB_STORE_CREATE, &s, &e) != OB_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    int64_t bench = 0;
    ob_store_begin_benchmark(s, "reference", "steps: 50\n", "rev0", "testhost", "cpu", "test", &bench, &e);
    /* a superseded run: same cell as adam/quad/0.01/seed 0, run earlier */
    fx_add(s, bench, &(fx_run){"quad", "adam", "\"beta2\":0.999", 0.01, 0, "done", 99.0, 20, 2.0, 3.0, 4096, 800, 99.5, 0.0, 0});
    static const double adam_final[3][3] = {{3, 4, 5}, {1.0, 1.2, 0.8}, {1.05, 1.08, NAN}};
    static const double sgd_final[3][3] = {{6, 7, 8}, {2.0, 2.2, 2.4}, {NAN, NAN, NAN}};
    static const double lrs[3] = {0.001, 0.01, 0.1};
    static const double knees[3] = {40, 20, 10};
    for (int l = 0; l < 3; l++)
        for (int seed = 0; seed < 3; seed++) {
            double f = adam_final[l][seed];
            fx_add(s, bench, &(fx_run){"quad", "adam", "\"beta2\":0.999", lrs[l], seed, isnan(f) ? "diverged" : "done",
                                       f, knees[l], 2.0, 3.0, 4096 + seed, 800, f + 0.5, 1 - f / 10, 0});
            f = sgd_final[l][seed];
            fx_add(s, bench, &(fx_run){"quad", "sgd", NULL, lrs[l], seed, isnan(f) ? "diverged" : "done", f,
                                       knees[l], 1.0, 1.5, 2048, 400, f + 0.5, 1 - f / 10, 0});
        }
    /* a failed and a pending run: listed, not counted */
    fx_add(s, bench, &(fx_run){"quad", "sgd", NULL, 0.01, 3, "failed", 0, 0, NAN, NAN, -1, -1, NAN, NAN, 0});
    fx_add(s, bench, &(fx_run){"quad", "sgd", NULL, 0.01, 4, "pending", 0, 0, NAN, NAN, -1, -1, NAN, NAN, 0});
    /* second workload */
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, bench, &(fx_run){"rosen", "adam", "\"beta2\":0.999", 0.01, seed, "done", 0.5, 10, 2.0, 3.0,
                                   4096, 800, 0.6, NAN, 0});
        fx_add(s, bench, &(fx_run){"rosen", "sgd", NULL, 0.01, seed, "done", 0.52, 4, 1.0, 1.5, 2048, 400, 0.6,
                                   NAN, 0});
    }
    ob_store_finish_benchmark(s, bench, &e);
    ob_store_close(s);
    return 0;
}

#endif
