/* results/dataset.h - the runs of a results database, loaded for analysis.
 *
 * A dataset is the set of cells of one database (optionally one benchmark):
 * when a cell (workload, workload parameters, steps, optimizer,
 * hyperparameters, lr, seed, and whether it is a confirmation run) was run
 * more than once, the latest finished run counts. Runs are grouped by
 * workload configuration (parameters and steps: a workload run for two
 * numbers of steps gets two labels, "quadratic steps=20" and "quadratic
 * steps=200") and by optimizer configuration: the optimizer name plus,
 * when one workload holds several configurations of the same optimizer, the
 * hyperparameters that tell them apart ("adam beta2=0.95"). Labels never
 * contain commas, so gnuplot can read them from CSV.
 */
#ifndef OB_RESULTS_DATASET_H
#define OB_RESULTS_DATASET_H

#include <stdint.h>

#include "core/ob.h"

struct sqlite3;

typedef struct ob_rrun {
    int64_t id, benchmark_id, cell, seed;
    char *workload, *workload_params, *optimizer, *hparams, *status, *error;
    char *opt_key;             /* hparams without "lr": identifies the optimizer configuration */
    char *wl_params;           /* workload_params over this build's defaults (a parameter added since the
                                * run was stored reads as its default): what compare matches */
    char *wl_key;              /* workload_params with "steps" added: identifies the workload's
                                * configuration (final losses after other numbers of steps do not
                                * compare: such runs get their own workload label, "quadratic steps=200") */
    char *backend, *device;    /* where it ran: "cpu" or "cuda", and the device text ("cuda: NVIDIA
                                * H200 (sm_90, ...)", possibly "; data parallel over devices 0-1");
                                * "" when unknown (NULL in the database, or a database without them) */
    double lr;
    int64_t steps, steps_done; /* -1 when unknown */
    int64_t diverged_step;     /* -1 when not diverged */
    int64_t peak_mem_bytes, state_bytes; /* -1 when unknown */
    int64_t device_mem_bytes;  /* device memory in use as the driver reports it; -1 unknown (CPU) */
    /* steps the guard handled (from the events): skipped for a non-finite
     * gradient or loss, skipped by the spike guard, rolled back */
    int64_t n_skip_nonfinite, n_skip_spike, n_rollback;
    int64_t n_resumed;            /* times the run was stopped and continued from a checkpoint */
    int study;                    /* the search (study) its configuration is a trial of, within its
                                   * benchmark: where a matrix ran several (config studies), hparams'
                                   * search.study; 0 for a run of a benchmark that ran one search
                                   * (trials); -1 none (a grid) */
    int64_t n_restarted;          /* times it was begun, stopped without a usable checkpoint and
                                   * started over (its 'restarted' events; a database of an optbench
                                   * before them: 0) */
    char *git_rev, *host;         /* the revision and machine that ran it ("A, then B": continued by
                                   * another); "" unknown (a database of schema < 5: the benchmark's) */
    double final_loss, best_loss, eval_loss, eval_metric, loss_floor;    /* NaN when unknown */
    double step_ms_median, step_ms_p90, items_per_sec, wall_s;           /* NaN when unknown */
    double step_ms_mean;       /* every step after the warm-up; NaN unknown (schema < 4) */
    double opt_ms_median, opt_ms_mean; /* the optimizer's part of those steps; NaN unknown */
    double other_cpu;          /* share of its CPUs other processes kept busy while it ran (the
                                * last process's part; a short run: from an earlier run's start);
                                * NaN unknown (schema < 6, the first 0.25 s of a process) */
    int wl, opt;               /* indices into the dataset's workload and optimizer labels */
    int finished;              /* status done or diverged */
    int diverged;              /* status diverged */
    int confirm;               /* a confirmation run (runs.stage 'confirm'): a fresh seed at the
                                * best lr of its sweep, not a point of the sweep */
    /* the training loss at the run's first recorded step (before any update),
     * after ob_dataset_load_curve_info or ob_dataset_load_curves; NaN when the
     * run recorded no step, or before */
    double first_loss;
    /* the training curve, (step, loss) per recorded step: every run's after
     * ob_dataset_load_curves, the runs asked for after ob_dataset_load_curves_of
     * (has_curve 1); n_curve 0 and NULL otherwise. A report keeps only the
     * curves of the runs at each group's best lr (ob_stats_compute_db): 16
     * bytes a point, they are most of its memory. */
    int has_curve;
    int64_t n_curve;
    int64_t *c_step;           /* (n_curve,) */
    double *c_loss;            /* (n_curve,) */
    /* the rows of the evals table, after ob_dataset_load_curve_info or
     * ob_dataset_load_curves: how many, and how many hold a loss and a metric
     * (a database written before every run stored its final evaluation there
     * may have none beside runs.eval_loss) */
    int64_t n_evals, n_eval_loss, n_eval_metric;
} ob_rrun;

typedef struct ob_dataset {
    ob_rrun *runs;
    int n;
    char **wl_labels;          /* (n_wl,) e.g. "quadratic", or "quadratic cond=1e+06" */
    char **wl_names;           /* (n_wl,) the workload name of each label */
    int n_wl;
    char **opt_labels;         /* (n_opt,) e.g. "adam", or "adam beta2=0.95" */
    char **opt_names;          /* (n_opt,) the optimizer name of each label */
    int n_opt;
    int n_superseded;          /* older rows not counted because the cell was run again later */
    int n_masked;              /* later rows that failed or did not finish, not counted because an
                                * earlier run of the cell finished (done or diverged) */
    int64_t benchmark_id;      /* the benchmark loaded, 0 for all */
} ob_dataset;

/* Load the runs of db. benchmark_id > 0 restricts to that benchmark; 0 takes
 * every run (latest per cell); -1 takes the latest benchmark. */
ob_status ob_dataset_load(struct sqlite3 *db, int64_t benchmark_id, ob_dataset *d, ob_err *e);
/* The runs of the datasets parts[0..n) (each of its own database, loaded
 * with ob_dataset_load) moved into out, ordered and labelled as one database
 * holding all of them would order and label them: a configuration that two
 * databases share has one label, and configurations that differ anywhere are
 * told apart. The parts are left empty (freed), on failure too; out's
 * benchmark_id is 0. */
ob_status ob_dataset_join(ob_dataset *parts, int n, ob_dataset *out, ob_err *e);
/* What the analysis needs of every run's curve and evaluations, without the
 * curves: the first loss (first_loss) and the counts of evaluations (n_evals,
 * n_eval_loss, n_eval_metric). */
ob_status ob_dataset_load_curve_info(struct sqlite3 *db, ob_dataset *d, ob_err *e);
/* Read the training curves (step, loss) of the runs idx[0..n) (indices into
 * d->runs; a run already loaded is read again) from db. */
ob_status ob_dataset_load_curves_of(struct sqlite3 *db, ob_dataset *d, const int *idx, int n, ob_err *e);
/* ob_dataset_load_curve_info, and the training curve of every run: memory
 * for every point of the dataset (see ob_stats_compute_db for less). */
ob_status ob_dataset_load_curves(struct sqlite3 *db, ob_dataset *d, ob_err *e);

/* Reads runs' curves from a database one at a time, into buffers of its own
 * that the next read reuses: for a pass that needs each run's curve once
 * (time to target) and never all of them at once. */
typedef struct ob_curve_reader ob_curve_reader;
ob_status ob_curve_reader_open(struct sqlite3 *db, ob_curve_reader **cr, ob_err *e);
/* Run r's curve into *step, *loss (*n points): r's own where loaded
 * (has_curve), else read from the database; valid until the next call. */
ob_status ob_curve_reader_get(ob_curve_reader *cr, const ob_rrun *r, const int64_t **step, const double **loss,
                              int64_t *n, ob_err *e);
/* Run r's held-out evaluations (step and loss, or with metric the held-out
 * metric; NaN where the row has none) in step order, read from the
 * database's evals table; valid until the next call. */
ob_status ob_curve_reader_evals(ob_curve_reader *cr, const ob_rrun *r, int metric, const int64_t **step,
                                const double **val, int64_t *n, ob_err *e);
/* How many curves cr has read from the database (not those it found loaded). */
int64_t ob_curve_reader_reads(const ob_curve_reader *cr);
/* 1 when a read of cr failed. */
int ob_curve_reader_failed(const ob_curve_reader *cr);
void ob_curve_reader_close(ob_curve_reader *cr);
void ob_dataset_free(ob_dataset *d);

/* Leave the confirmation runs out of d (their labels stay); returns how many.
 * *n_unfinished (when not NULL): how many of those in the matrix (not
 * retired) are pending, running or interrupted (a confirmation stage that
 * was stopped). */
int ob_dataset_drop_confirm(ob_dataset *d, int *n_unfinished);

/* A benchmark of a database (a row of its benchmarks table): what it was
 * called, which code ran it, where, on what, and when. */
typedef struct ob_bench {
    int64_t id;
    char *name;                /* "" when it has none */
    char *git_rev;             /* the optbench source revision that ran it; "?" when unknown */
    char *host;                /* "?" when unknown */
    char *backend;             /* "cpu", "cuda"; "?" when unknown */
    char *device;              /* "?" when unknown */
    char *created_at;          /* as stored ("2026-12-03T07:20:31Z"); "?" when unknown */
    char *finished_at;         /* as stored; NULL while running or when interrupted */
} ob_bench;

typedef struct ob_bench_list {
    ob_bench *b;               /* (n,) */
    int n;
} ob_bench_list;

/* The benchmarks of db that hold runs, oldest first (by created_at, then id). */
ob_status ob_bench_list_load(struct sqlite3 *db, ob_bench_list *l, ob_err *e);
/* The benchmark of l with that id; NULL when l has none. */
const ob_bench *ob_bench_list_find(const ob_bench_list *l, int64_t id);
void ob_bench_list_free(ob_bench_list *l);

/* Index of a label, -1 when absent. */
int ob_dataset_find_wl(const ob_dataset *d, const char *label);
int ob_dataset_find_opt(const ob_dataset *d, const char *label);
/* The optimizer name of label opt (its label where the name is unknown). */
const char *ob_dataset_opt_name(const ob_dataset *d, int opt);
/* The swept values of optimizer label opt, its label without the
 * optimizer's name ("beta2=0.95" of "adam beta2=0.95"); NULL for a label
 * that is the name alone. */
const char *ob_dataset_opt_config(const ob_dataset *d, int opt);

#endif
