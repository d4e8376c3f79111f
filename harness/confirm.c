/* harness/confirm.c - the confirmation stage of a benchmark (run
 * --confirm-seeds): once no sweep cell is left, each (workload, optimizer)
 * pair's best lr is run again with fresh seeds, as jobs of the run loop. */
#include "harness/run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cellspec.h"
#include "results/stats.h"

/* Retires the confirmation runs in pair p's cells (one the stage no longer
 * confirms), adding how many to *retired. */
static ob_status retire_pair(ob_store *store, int64_t bench_id, const ob_matrix *m, int p, int *retired, ob_err *e)
{
    const int64_t lo = (int64_t)m->n + (int64_t)p * OB_CFG_MAX_CONFIRM;
    int k = 0;
    OB_TRY(ob_store_retire_confirm_cells(store, bench_id, lo, lo + OB_CFG_MAX_CONFIRM - 1, &k, e));
    *retired += k;
    return OB_OK;
}

/* The confirmation stage, N fresh seeds per pair (the larger of
 * cfg->confirm_seeds and what the benchmark holds already), after the whole
 * sweep of the benchmark is finished: for each (workload, optimizer) pair of the
 * matrix, the best lr of its sweep runs in this benchmark (ob_stat_best_lr:
 * the report's rule), then N runs there with fresh seeds, one past the
 * largest seed of the matrix onwards. The runs are cells
 * m->n + p * OB_CFG_MAX_CONFIRM + j (pair p, fresh seed j) with stage
 * "confirm", so a later --resume with more seeds adds to them; a process that
 * finds them added already (by another process, or before a stop) runs those
 * not finished. --resume --confirm-seeds N on a finished sweep adds the stage
 * to it. */
/* The confirmation stage's plan: each pair's best lr, and the runs (cells,
 * specs, then run ids and jobs) that confirm them; N fresh seeds from seed0
 * per pair. */
typedef struct confirm_plan {
    int n_pairs, N;
    int64_t seed0;
    ob_cell *cells;
    ob_run_spec *specs;
    int64_t *ids;
    /* the JSON texts of a pair's runs are one: same settings, same lr */
    char (*wjson)[OB_SPEC_WL_JSON];
    char (*ojson)[OB_SPEC_OPT_JSON];
    job *jobs;
    double *lr, *fin;        /* a pair's sweep: lrs and final losses (scratch) */
    double *best_lr;         /* per pair; NaN: no lr with a finite median */
    double *best_med;        /* the median final loss there */
    int *first_cell;         /* the pair's first cell in the matrix */
    int n;                   /* runs planned */
    int pairs_confirmed;     /* pairs whose best lr is confirmed */
    int pairs_left;          /* configurations another of their optimizer's beat (confirm_configs best) */
    int retired_before;      /* runs retired before storing the new ones */
} confirm_plan;

static void confirm_plan_free(confirm_plan *cp)
{
    free(cp->cells);
    free(cp->specs);
    free(cp->ids);
    free(cp->wjson);
    free(cp->ojson);
    free(cp->jobs);
    free(cp->lr);
    free(cp->fin);
    free(cp->best_lr);
    free(cp->best_med);
    free(cp->first_cell);
}

static ob_status confirm_plan_alloc(const ob_matrix *m, int N, confirm_plan *cp, ob_err *e)
{
    memset(cp, 0, sizeof *cp);
    cp->N = N;
    cp->n_pairs = ob_matrix_confirm_plan(m, &cp->seed0);
    const int n_pairs = cp->n_pairs, cap = n_pairs * N;
    cp->cells = calloc((size_t)cap + 1, sizeof *cp->cells);
    cp->specs = calloc((size_t)cap + 1, sizeof *cp->specs);
    cp->ids = calloc((size_t)cap + 1, sizeof *cp->ids);
    cp->wjson = calloc((size_t)n_pairs + 1, sizeof *cp->wjson);
    cp->ojson = calloc((size_t)n_pairs + 1, sizeof *cp->ojson);
    cp->jobs = calloc((size_t)cap + 1, sizeof *cp->jobs);
    cp->lr = malloc(((size_t)m->n + 1) * sizeof *cp->lr);
    cp->fin = malloc(((size_t)m->n + 1) * sizeof *cp->fin);
    cp->best_lr = malloc(((size_t)n_pairs + 1) * sizeof *cp->best_lr);
    cp->best_med = malloc(((size_t)n_pairs + 1) * sizeof *cp->best_med);
    cp->first_cell = malloc(((size_t)n_pairs + 1) * sizeof *cp->first_cell);
    if (!cp->cells || !cp->specs || !cp->ids || !cp->wjson || !cp->ojson || !cp->jobs || !cp->lr || !cp->fin ||
        !cp->best_lr || !cp->best_med || !cp->first_cell)
        return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d confirmation runs", cap);
    return OB_OK;
}

/* Each pair's best lr and its median final loss there. */
static ob_status pair_bests(const matrix_ctx *x, const ob_matrix *m, ob_store *store, confirm_plan *cp, ob_err *e)
{
    ob_status s = OB_OK;
    for (int i0 = 0, i1, q = 0; i0 < m->n && q < cp->n_pairs && s == OB_OK; i0 = i1, q++) {
        i1 = i0 + 1;
        while (i1 < m->n && ob_cell_same_pair(&m->cells[i1], &m->cells[i0])) i1++;
        int k = 0;
        s = ob_store_sweep_finals(store, x->bench_id, m->cells[i0].index, m->cells[i1 - 1].index, cp->lr, cp->fin,
                                  m->n, &k, e);
        cp->first_cell[q] = i0;
        cp->best_lr[q] = ob_stat_best_lr(cp->lr, cp->fin, k);
        int nb = 0;
        for (int r = 0; r < k; r++)
            if (cp->lr[r] == cp->best_lr[q]) cp->fin[nb++] = cp->fin[r];
        cp->best_med[q] = isnan(cp->best_lr[q]) ? NAN : ob_stat_median(cp->fin, nb);
    }
    return s;
}

/* confirm_configs best: another configuration of pair p's optimizer on its
 * workload configuration is better (or, where p has no best lr, has one;
 * or, where none has, was named already). Ties go to the first. */
static int pair_beaten(const ob_matrix *m, const confirm_plan *cp, int p)
{
    const double best = cp->best_lr[p];
    for (int q = 0; q < cp->n_pairs; q++) {
        const ob_cell *a = &m->cells[cp->first_cell[q]], *b = &m->cells[cp->first_cell[p]];
        if (q == p || a->wl != b->wl || a->wl_variant != b->wl_variant || a->opt != b->opt) continue;
        const int earlier = q < p, better = cp->best_med[q] < cp->best_med[p];
        const int tie = cp->best_med[q] == cp->best_med[p];
        const int beaten = isnan(best) ? !isnan(cp->best_lr[q]) || earlier
                                       : !isnan(cp->best_lr[q]) && (better || (tie && earlier));
        if (beaten) return 1;
    }
    return 0;
}

/* Pair p's N confirmation runs at its best lr, the sweep's cell `at` with
 * fresh seeds, with the texts the sweep's run at that lr was stored with:
 * the same as this build's, or (a benchmark continued by a build that added
 * a setting) the ones --resume matched. */
static ob_status add_pair_runs(const matrix_ctx *x, const ob_matrix *m, const ob_device *dev, const char *devices_desc,
                               ob_store *store, int p, int at, confirm_plan *cp, ob_err *e)
{
    char sw[1024], so[4096];
    int stored = 0;
    OB_TRY(ob_store_sweep_texts(store, x->bench_id, m->cells[at].index, sw, sizeof sw, so, sizeof so, &stored, e));
    for (int j = 0; j < cp->N; j++) {
        const int n = cp->n;
        ob_cell *cell = &cp->cells[n];
        *cell = m->cells[at];
        cell->seed = cp->seed0 + j;
        cell->index = (int64_t)m->n + (int64_t)p * OB_CFG_MAX_CONFIRM + j;
        ob_run_spec *sp = &cp->specs[n];
        OB_TRY(ob_cell_spec(x->cfg, cell, dev, devices_desc, cp->wjson[p], cp->ojson[p], sp, e));
        if (stored && ob_store_equivalent(store, sw, sp->workload_params, sp->workload_defaults, NULL, 0) &&
            ob_store_equivalent(store, so, sp->hparams, sp->hparams_defaults, NULL, 0)) {
            memcpy(cp->wjson[p], sw, sizeof sw);
            memcpy(cp->ojson[p], so, sizeof so);
        }
        sp->stage = "confirm";
        cp->n++;
    }
    return OB_OK;
}

/* The runs of every pair to confirm; a pair that is not (beaten, or with
 * no best lr) has its earlier confirmation runs retired. */
static ob_status plan_confirmation(const matrix_ctx *x, const ob_matrix *m, const ob_device *dev,
                                   const char *devices_desc, ob_store *store, confirm_plan *cp, ob_err *e)
{
    for (int p = 0; p < cp->n_pairs; p++) {
        const int i0 = cp->first_cell[p], i1 = p + 1 < cp->n_pairs ? cp->first_cell[p + 1] : m->n;
        const double best = cp->best_lr[p];
        if (x->cfg->confirm_best && pair_beaten(m, cp, p)) {
            /* confirmed before, when it was the best (a grown matrix, a failed cell run again) */
            OB_TRY(retire_pair(store, x->bench_id, m, p, &cp->retired_before, e));
            cp->pairs_left++;
            continue;
        }
        if (isnan(best)) {
            OB_TRY(retire_pair(store, x->bench_id, m, p, &cp->retired_before, e));
            char conf[512];
            ob_cell_sweep_text(x->cfg, &m->cells[i0], OB_SWEEP_ALL, conf, sizeof conf);
            fprintf(stderr, "optbench: confirmation: %s %s%s%s has no lr with a finite median final loss "
                            "(every lr diverged or failed): nothing to confirm\n",
                    m->cells[i0].wl->name, m->cells[i0].opt->name, conf[0] ? " " : "", conf);
            continue;
        }
        /* a sweep cell at that lr: its hyperparameters hold the lr too */
        int at = i0;
        while (at < i1 - 1 && m->cells[at].lr != best) at++;
        if (m->cells[at].lr != best)
            return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "confirmation: lr %g of %s %s is not in the matrix", best,
                                    m->cells[i0].wl->name, m->cells[i0].opt->name);
        cp->pairs_confirmed++;
        OB_TRY(add_pair_runs(x, m, dev, devices_desc, store, p, at, cp, e));
    }
    return OB_OK;
}

/* The stored confirmation runs not finished yet, into cp->jobs (*n_jobs);
 * *finished: those that are (their leftover checkpoints removed). */
static ob_status confirm_jobs(const matrix_ctx *x, ob_store *store, confirm_plan *cp, int *n_jobs, int *finished,
                              ob_err *e)
{
    *n_jobs = *finished = 0;
    for (int k = 0; k < cp->n; k++) {
        char status[32];
        OB_TRY(ob_store_run_status(store, cp->ids[k], status, sizeof status, e));
        if (ob_store_status_finished(status)) {
            /* killed between recording it and deleting its checkpoints: they go now
             * (as the sweep's cells' do) */
            ob_run_remove_run_files(x->cfg, x->db_path, x->db_id, cp->ids[k]);
            (*finished)++;
            continue;
        }
        cp->jobs[*n_jobs] = (job){&cp->cells[k], &cp->specs[k], cp->ids[k], *n_jobs, !strcmp(status, "failed")};
        (*n_jobs)++;
    }
    return OB_OK;
}

/* The stage's line: what it confirms, with how many seeds, and what was
 * finished or retired before. */
static void say_confirmation(const matrix_ctx *x, const confirm_plan *cp, int finished, int retired)
{
    const int N = cp->N, n = cp->n;
    char seeds[64];
    if (N == 1) snprintf(seeds, sizeof seeds, "seed %lld", (long long)cp->seed0);
    else snprintf(seeds, sizeof seeds, "seeds %lld..%lld", (long long)cp->seed0, (long long)(cp->seed0 + N - 1));
    int swept = 0; /* with sweeps a pair is a (workload, optimizer) configuration, as the plan says */
    for (int i = 0; i < x->cfg->n_settings; i++) swept |= x->cfg->settings[i].sweep != 0;
    fprintf(stderr, "optbench: confirmation: the best lr of %d %s%s%s, %d fresh seed%s each (%s): %d run%s",
            cp->pairs_confirmed, swept ? "configuration" : "pair", cp->pairs_confirmed == 1 ? "" : "s",
            cp->pairs_left ? " (each optimizer's best: confirm_configs best)" : "", N, N == 1 ? "" : "s", seeds, n,
            n == 1 ? "" : "s");
    if (finished) fprintf(stderr, ", %d finished before", finished);
    if (retired)
        fprintf(stderr, "; %d earlier run%s confirming an lr or configuration that is no longer the best retired "
                        "(kept in the database, at no cell of the matrix)", retired, retired == 1 ? "" : "s");
    fprintf(stderr, "\n");
}

static ob_status confirm_stage(matrix_ctx *x, const ob_matrix *m, ob_device *dev, ob_store *store,
                               const char *devices_desc, int N, ob_err *e)
{
    confirm_plan cp;
    ob_status s = confirm_plan_alloc(m, N, &cp, e);
    if (s != OB_OK) goto out;
    /* one write transaction from reading the best lrs to storing the runs
     * that confirm them: a process that moves a best lr (a failed sweep cell
     * run again) meanwhile waits for it, and finds the runs this one adds or
     * retires when it comes to its own stage */
    if ((s = ob_store_tx_begin(store, e)) != OB_OK) goto out;
    /* each pair's best lr and its median final loss there, first: with
     * confirm_configs best, only the configuration of lowest median of each
     * (workload configuration, optimizer) is confirmed (ties: the first) */
    s = pair_bests(x, m, store, &cp, e);
    if (s == OB_OK) s = plan_confirmation(x, m, dev, devices_desc, store, &cp, e);
    if (s == OB_OK && cp.n == 0 && cp.retired_before)
        fprintf(stderr, "optbench: confirmation: %d earlier run%s retired: %s an lr or configuration that is no longer "
                        "the best (kept in the database, at no cell of the matrix)\n",
                cp.retired_before, cp.retired_before == 1 ? "" : "s",
                cp.retired_before == 1 ? "it confirms" : "they confirm");
    int added = 0, retired = 0;
    if (s == OB_OK && cp.n > 0)
        s = ob_store_confirm_runs(store, x->bench_id, cp.specs, cp.n, cp.ids, &added, &retired, e);
    if ((s = ob_store_tx_end(store, s, e)) != OB_OK || cp.n == 0) goto out;
    retired += cp.retired_before;
    int n_jobs = 0, finished = 0;
    if ((s = confirm_jobs(x, store, &cp, &n_jobs, &finished, e)) != OB_OK) goto out;
    say_confirmation(x, &cp, finished, retired);
    x->sum->skipped += finished;
    s = ob_run_jobs(x, dev, store, cp.jobs, n_jobs, cp.cells, cp.n, e);
out:
    confirm_plan_free(&cp);
    return s;
}

/* The confirmation stage follows the sweep of the benchmark, once no sweep
 * cell is left to anyone (another process may still run some: the one that
 * finishes the last does it); never in a shard. A benchmark that has
 * confirmation runs already (stopped during the stage, or run with more
 * seeds), or whose stored configuration asked for them (kept_confirm: a
 * grown matrix retired its runs), keeps its number of seeds per pair:
 * --resume finishes them. */
ob_status ob_run_confirm_when_due(matrix_ctx *x, const ob_matrix *m, ob_device *dev, ob_store *store,
                                  const char *run_device, int sharded, int kept_confirm, ob_err *e)
{
    const ob_config *c = x->cfg;
    int open_runs = 0, depth = 0;
    ob_status s = ob_store_unfinished_runs(store, x->bench_id, 1, &open_runs, e);
    if (s == OB_OK && open_runs == 0)
        s = ob_store_confirm_depth(store, x->bench_id, m->n, OB_CFG_MAX_CONFIRM, &depth, e);
    const int asked = kept_confirm > depth; /* the stored configuration's, its runs retired by growth */
    if (asked) depth = kept_confirm;
    const int n_confirm = depth > c->confirm_seeds ? depth : (int)c->confirm_seeds;
    if (s != OB_OK || open_runs != 0 || n_confirm <= 0) return s;
    if (sharded) {
        fprintf(stderr, "optbench: note: confirm_seeds is not run by a shard: the best lr of a pair needs the "
                        "whole sweep, and a shard holds part of it (merge the shards, then run --resume on the "
                        "merged database)\n");
        return OB_OK;
    }
    if (depth > c->confirm_seeds)
        fprintf(stderr, "optbench: the benchmark %s confirmation runs of %d seed%s per pair (%s %lld): "
                        "finishing them\n", asked ? "was run with" : "has", depth, depth == 1 ? "" : "s",
                c->confirm_seeds ? "more than confirm_seeds" : "confirm_seeds", (long long)c->confirm_seeds);
    return confirm_stage(x, m, dev, store, run_device, n_confirm, e);
}

