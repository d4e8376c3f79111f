/* results/store.h - the SQLite store, the source of truth of every benchmark.
 *
 * Schema (version OB_SCHEMA_VERSION, kept in PRAGMA user_version and in the
 * `meta` table; documented in results/schema.sql and docs/database.md):
 *   meta(key, value)                        application id, schema version
 *   benchmarks(id, name, config, git_rev, host, backend, device, created_at, finished_at,
 *              shard, provenance)
 *   runs(id, benchmark_id, cell, workload, workload_params, optimizer, hparams, lr, seed,
 *        backend, device, status, steps, steps_done, final_loss, best_loss, eval_loss,
 *        eval_metric, loss_floor, peak_mem_bytes, state_bytes, step_ms_median, step_ms_p90,
 *        items_per_sec, diverged_step, wall_s, started_at, finished_at, error, origin, stage,
 *        device_mem_bytes, step_ms_mean, opt_ms_median, opt_ms_mean, git_rev, host, other_cpu)
 *   curves(run_id, step, loss, grad_norm, lr)            PRIMARY KEY (run_id, step)
 *   evals(run_id, step, loss, metric)                    PRIMARY KEY (run_id, step)
 *   events(id, run_id, step, kind, detail)
 * status is one of pending|running|done|diverged|failed|interrupted.
 * The database runs in WAL mode with a busy timeout; curve points arrive in
 * batches, each batch one transaction; statements are prepared once.
 */
#ifndef OB_RESULTS_STORE_H
#define OB_RESULTS_STORE_H

#include <stdint.h>

#include "core/ob.h"

#define OB_SCHEMA_VERSION 6
#define OB_APPLICATION_ID 0x4f424e43 /* 'OBNC', PRAGMA application_id */

typedef struct ob_store ob_store;

typedef enum ob_open_mode {
    OB_STORE_CREATE,   /* create when missing; an existing file must be an optbench db */
    OB_STORE_EXISTING, /* must exist and be an optbench db (read-write) */
    OB_STORE_READONLY, /* must exist; opened read-only */
    OB_STORE_AGAIN     /* another read-write connection of this process to a database it has
                        * opened already (a worker thread's): as OB_STORE_EXISTING, without
                        * reading the whole file again for the page check */
} ob_open_mode;

typedef struct ob_run_spec {
    int64_t cell;              /* index of the cell in the expanded matrix */
    const char *workload;
    const char *workload_params; /* JSON */
    const char *optimizer;
    const char *hparams;       /* JSON, every optimizer hyperparameter and training setting */
    double lr;
    int64_t seed;
    const char *backend;
    const char *device;
    int64_t steps;             /* planned */
    const char *stage;         /* NULL: a cell of the sweep; "confirm": a confirmation run */
    /* this build's default of every key of workload_params and hparams
     * (JSON of the same shape; NULL: none), which --resume takes a key at
     * that a stored run lacks (ob_store_find_benchmark) */
    const char *workload_defaults, *hparams_defaults;
} ob_run_spec;

typedef struct ob_run_result {
    const char *status;        /* done|diverged|failed|interrupted */
    int64_t steps_done;
    double final_loss;         /* mean training loss over the last 10% of steps; NaN if none */
    double best_loss;
    double eval_loss, eval_metric, loss_floor; /* NaN when not measured */
    int64_t peak_mem_bytes;
    int64_t device_mem_bytes;  /* largest device memory in use as the driver reports it (the whole
                                * device: context, library workspaces, other processes); <= 0 unknown */
    int64_t state_bytes;
    double step_ms_median, step_ms_p90;
    double step_ms_mean;       /* every step after the warm-up: with the median, it shows steps
                                * that are slow now and then (a sync every k steps); NaN unknown */
    double opt_ms_median, opt_ms_mean; /* the optimizer's part of those steps: from the gradients
                                * (summed over the replicas) to the updated parameters */
    double items_per_sec;      /* NaN when the workload has no items */
    int64_t diverged_step;     /* -1 when not diverged */
    double wall_s;
    double other_cpu;          /* share of its CPUs other processes kept busy while this process
                                * ran it (ob_cpu_share_run); NaN unknown */
    const char *error;         /* NULL when none */
} ob_run_result;

typedef struct ob_curve_point {
    int64_t step;
    double loss, grad_norm, lr;
} ob_curve_point;

typedef struct ob_eval_point {
    int64_t step;
    double loss, metric;
} ob_eval_point;

typedef struct ob_event {
    int64_t step;
    const char *kind;          /* "skipped_step", "diverged", "rollback", ... */
    const char *detail;
} ob_event;

/* Open (and create/migrate) a store. A file that is not an optbench database
 * gives OB_ERR_INPUT with a message naming it; nothing in it is changed. An
 * existing optbench database's pages are checked first (PRAGMA quick_check,
 * which reads the whole file) and a damaged one refused, unless the
 * environment sets OB_DB_CHECK=off (any other value than off or on is bad
 * input). */
ob_status ob_store_open(const char *path, ob_open_mode mode, ob_store **out, ob_err *e);
void ob_store_close(ob_store *s);
/* The underlying connection, for read-only queries by results/ and plots/. */
struct sqlite3 *ob_store_db(ob_store *s);
/* 1 when path is a database that holds nothing yet, which `run` fills: a
 * file of 0 bytes or an SQLite database without tables (a run stopped as it
 * created it). ob_store_open refuses it, but to create. */
int ob_store_empty(const char *path);
/* The file name the store was opened with (for messages). */
const char *ob_store_path(ob_store *s);
/* The database's own name, 16 hex digits (meta 'database_id'), made at the
 * first call on a writable store: what tells two databases' runs of one id
 * apart where their checkpoints share a folder (checkpoint_dir). A copy of
 * the file has the same one. "" from a read-only store without one. */
ob_status ob_store_database_id(ob_store *s, char *buf, size_t n, ob_err *e);

/* A write transaction around several calls: ob_store_tx_end commits when st
 * is OB_OK (and every write inside succeeded), else rolls all of it back, and
 * returns the resulting status. Writes inside it join it; reads see its
 * writes. Another process's writes wait until it ends. */
ob_status ob_store_tx_begin(ob_store *s, ob_err *e);
ob_status ob_store_tx_end(ob_store *s, ob_status st, ob_err *e);

ob_status ob_store_begin_benchmark(ob_store *s, const char *name, const char *config_text,
                                   const char *git_rev, const char *host, const char *backend,
                                   const char *device, int64_t *bench_id, ob_err *e);
ob_status ob_store_finish_benchmark(ob_store *s, int64_t bench_id, ob_err *e);
/* The benchmark's configuration text (a --resume that changed a setting
 * outside the cells' identity: confirm_seeds, checkpoints). */
ob_status ob_store_set_benchmark_config(ob_store *s, int64_t bench_id, const char *config, ob_err *e);
/* Insert the rows of a whole matrix as `pending` in one transaction. ids[i]
 * receives the run id of specs[i]. */
ob_status ob_store_add_runs(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n,
                            int64_t *ids, ob_err *e);
ob_status ob_store_run_started(ob_store *s, int64_t run_id, ob_err *e);
/* The revision and host running run_id now: a run started (or started
 * over) takes them; one continued from a checkpoint keeps its own and adds
 * ", then REV" (", then HOST") where this one differs. */
ob_status ob_store_run_provenance(ob_store *s, int64_t run_id, const char *git_rev, const char *host, int continued,
                                  ob_err *e);
/* One transaction: curve points, eval points and events of a run. */
ob_status ob_store_append(ob_store *s, int64_t run_id, const ob_curve_point *pts, int n_pts,
                          const ob_eval_point *evals, int n_evals, const ob_event *events,
                          int n_events, ob_err *e);
ob_status ob_store_finish_run(ob_store *s, int64_t run_id, const ob_run_result *r, ob_err *e);

/* ---- resume, sharding and merge (harness/run.c, harness/merge.c) ---- */

/* Shard ("K/N") and provenance (JSON) of a benchmark; NULL leaves a field NULL. */
ob_status ob_store_set_benchmark_origin(ob_store *s, int64_t bench_id, const char *shard,
                                        const char *provenance, ob_err *e);
/* The newest benchmark of this shard (NULL: unsharded, which may be a merged
 * one) whose sweep runs are exactly specs, in cell order: same cell index, workload,
 * parameters, optimizer, hyperparameters, lr, seed and steps. Parameters and
 * hyperparameters are the same when their texts are, or when they differ
 * only by keys at this build's defaults (the spec's *_defaults), present on
 * one side and not on the other: a key a later build added, whose default
 * keeps what earlier builds did (ob_store_equivalent); relaxed[i] (may be
 * NULL) is then 1 for such a cell, whose stored texts the caller keeps
 * (ob_store_sweep_texts). A merged
 * benchmark may lack some of the cells (a shard's database that was not
 * merged): their run_ids are 0, for the caller to add. *bench_id = 0 when
 * there is none, and why (may be NULL) then says how the newest candidate
 * differs. run_ids[i] receives the run of specs[i]. */
ob_status ob_store_find_benchmark(ob_store *s, const char *shard, const ob_run_spec *specs, int n,
                                  int64_t *bench_id, int64_t *run_ids, unsigned char *relaxed, char *why,
                                  size_t why_n, ob_err *e);
/* Whether the JSON texts stored and current hold the same values but for
 * keys at their value in defaults (JSON of the same shape) that one of them
 * lacks (0 also for text that is not JSON); where they are, added (may be
 * NULL) receives the keys current has and stored lacks ("nesterov,
 * train.clip_norm"; empty when none). */
int ob_store_equivalent(ob_store *s, const char *stored, const char *current, const char *defaults, char *added,
                        size_t added_n);
/* Adds SQL function ob_defaults(kind, name) to db: this build's text of
 * every key at its default (ob_optimizer_defaults_json for kind 0,
 * ob_workload_defaults_json for 1), NULL for a name it does not know. A
 * run's text read over it, json_patch(ob_defaults(0, optimizer), hparams),
 * holds a key added since it was stored at its default, which is what the
 * run did: the stores and datasets compare runs by such texts. An SQLite
 * result code. */
int ob_store_sql_defaults(struct sqlite3 *db);

/* SQL for a run's texts as a grown matrix and merge compare them: over this
 * build's defaults (ob_defaults, above), so that a run stored before a key
 * existed is the run with the key at its default. kind "0" (hparams of the
 * optimizer named by name) or "1" (workload parameters of the workload);
 * text and name are SQL expressions. The first study of a search
 * ("search":{"study":0}) reads as a search of one study (no "search"): it
 * draws the same points with the same search seed, so a search grown to
 * --studies K keeps the runs it had. */
#define OB_STORE_CANON_SQL(kind, text, name)                                                                       \
    "CASE WHEN NOT json_valid(" text ") THEN " text " "                                                              \
    "WHEN json_extract(" text ", '$.search') IS '" OB_STORE_STUDY0 "' "                                             \
    "THEN json_remove(json_patch(coalesce(ob_defaults(" kind ", " name "), '{}'), " text "), '$.search') "          \
    "ELSE json_patch(coalesce(ob_defaults(" kind ", " name "), '{}'), " text ") END"
/* The "search" value of a run of a search's first study (harness/cellspec.c). */
#define OB_STORE_STUDY0 "{\"study\":0}"

/* This build's defaults text of an optimizer (od; its training settings
 * under "train") or a workload (wd), what a stored run that lacks a key ran
 * with (a key's default, or what builds before it did where it changed
 * that): ob_optimizer_defaults_json or
 * ob_workload_defaults_json, made once per definition and kept for the
 * process (NULL for none, and past 64 definitions). */
struct ob_optimizer_def;
struct ob_workload_def;
const char *ob_store_defaults_text(const struct ob_optimizer_def *od, const struct ob_workload_def *wd);
/* The stored workload parameters and hyperparameters of benchmark bench_id's
 * sweep run of cell (*found 0 when it has none). */
ob_status ob_store_sweep_texts(ob_store *s, int64_t bench_id, int64_t cell, char *wl, size_t wl_n, char *hp,
                               size_t hp_n, int *found, ob_err *e);
/* Where a grown matrix puts an earlier benchmark's confirmation runs (run.c
 * numbers them confirm_base + pair * confirm_stride + fresh seed index):
 * pair[i] is the (workload configuration, optimizer configuration) pair of
 * specs[i], confirm_seed0 the matrix's first fresh seed. */
typedef struct ob_grow_plan {
    const int *pair;
    int64_t confirm_base, confirm_stride, confirm_seed0;
} ob_grow_plan;
/* The newest unsharded benchmark (a merged one too) each of whose sweep runs
 * is one of specs (the same workload, parameters, optimizer,
 * hyperparameters, lr, seed and steps, in any cell), none twice: this matrix
 * grew from it (more lrs, seeds, trials, configurations, optimizers or
 * workloads) or lists its cells in another order. Its confirmation runs must
 * be at a configuration of this matrix, with a fresh seed of it or one its
 * sweep runs now (more seeds: such a run is retired when the matrix grows);
 * one retired before (a negative cell) is left out. Nothing is written. run_ids[i] receives the run of specs[i], 0 for a cell the
 * benchmark lacks; *held how many it holds, *retired how many of its
 * confirmation runs growing it would retire. *bench_id = 0 when there is none,
 * and why (may be NULL) then says why the newest is not. */
ob_status ob_store_find_grown(ob_store *s, const ob_run_spec *specs, int n, const ob_grow_plan *plan,
                              int64_t *bench_id, int64_t *run_ids, int *held, int *retired, char *why, size_t why_n,
                              ob_err *e);
/* One transaction: the runs of benchmark bench_id (found by
 * ob_store_find_grown with the same specs and plan) take this matrix's cell
 * numbers, its confirmation runs too, but those whose seed the sweep now
 * runs: retired (cell -id: kept, at no cell of the matrix), *retired of
 * them. run_ids as ob_store_find_grown's. */
ob_status ob_store_grow(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n, const ob_grow_plan *plan,
                        int64_t *run_ids, int *retired, ob_err *e);
/* Whether a run's status says it is finished: done or diverged. */
int ob_store_status_finished(const char *status);
/* Whether status is one the schema's runs.status takes (its CHECK list):
 * pending, running, done, diverged, failed or interrupted. */
int ob_store_status_known(const char *status);
/* Status of a run: pending|running|done|diverged|failed|interrupted. */
ob_status ob_store_run_status(ob_store *s, int64_t run_id, char *status, size_t n, ob_err *e);
/* The share of its CPUs that other processes kept busy while a run ran,
 * as last recorded (runs.other_cpu; NaN where it has none). */
ob_status ob_store_run_other_cpu(ob_store *s, int64_t run_id, double *share, ob_err *e);
/* The error a run was recorded with ("" when it has none). */
ob_status ob_store_run_error(ob_store *s, int64_t run_id, char *buf, size_t n, ob_err *e);
/* One transaction: drop a run's curve points, evaluations and events after
 * step `after` (after < 0: all of them but its 'restarted' events, which
 * count its starts over) and its 'diverged' events, clear its
 * result and mark it running, so that it can continue from that step. A run
 * that starts again from the beginning loses its origin (a merged run's
 * source): none of its results will come from there. */
ob_status ob_store_resume_run(ob_store *s, int64_t run_id, int64_t after, ob_err *e);
/* Runs of a benchmark that are pending, running or interrupted (sweep_only:
 * of its sweep, confirmation runs not counted). */
ob_status ob_store_unfinished_runs(ob_store *s, int64_t bench_id, int sweep_only, int *n, ob_err *e);
/* A benchmark's configuration text (*config malloc'd; NULL when none). */
ob_status ob_store_benchmark_config(ob_store *s, int64_t bench_id, char **config, ob_err *e);
/* The device text benchmark bench_id was started on, in *device (malloc'd; NULL when none). */
ob_status ob_store_benchmark_device(ob_store *s, int64_t bench_id, char **device, ob_err *e);
/* The last step of a run's stored curve (0: none yet). */
ob_status ob_store_curve_steps(ob_store *s, int64_t run_id, int64_t *step, ob_err *e);
/* What the evaluations of a benchmark's sweep runs tell of the eval_every
 * it was run with: *first the earliest step of one before a run's last step
 * (0: none yet), *at_start whether any run evaluated at step 0 (only
 * eval_every > 0 does), *reached the furthest step in the stored curve of a
 * run that did not diverge. */
ob_status ob_store_eval_schedule(ob_store *s, int64_t bench_id, int64_t *first, int *at_start, int64_t *reached,
                                 ob_err *e);
/* The sweep runs of a benchmark whose cell index is in [cell_lo, cell_hi]:
 * lr[i] and final[i] (the final loss; +inf diverged, or done without a
 * finite final loss; NaN failed or unfinished), at most cap of them, *n how
 * many. */
ob_status ob_store_sweep_finals(ob_store *s, int64_t bench_id, int64_t cell_lo, int64_t cell_hi, double *lr,
                                double *final, int cap, int *n, ob_err *e);
/* Retires (as ob_store_confirm_runs does) benchmark bench_id's confirmation
 * runs in cells lo..hi: a pair the confirmation stage no longer confirms
 * (with confirm_configs best another configuration is the best now, or no
 * lr has a finite median). At most OB_STORE_RETIRE_MAX (a pair's fresh
 * seeds); *retired of them. */
#define OB_STORE_RETIRE_MAX 1000
ob_status ob_store_retire_confirm_cells(ob_store *s, int64_t bench_id, int64_t lo, int64_t hi, int *retired,
                                       ob_err *e);
/* How many fresh seeds per pair the benchmark's confirmation runs reach: the
 * largest (cell - cell_base) % stride + 1 among them, 0 when it has none
 * (run.c numbers them cell_base + pair * stride + seed). */
ob_status ob_store_confirm_depth(ob_store *s, int64_t bench_id, int64_t cell_base, int64_t stride, int *depth,
                                 ob_err *e);
/* The confirmation runs specs (stage "confirm") of a benchmark, in one write
 * transaction: a cell that already has one (added by another process, or
 * before a stop) keeps it, the others are added. ids[i] receives the run of
 * specs[i], *added how many were new. A cell whose existing run confirms
 * another lr of its workload, optimizer and seed (the sweep's best lr moved:
 * the matrix grew, or a failed cell ran again) has it retired (cell -id:
 * kept, at no cell of the matrix; *retired of them) and the new one added.
 * A cell whose existing run is another workload, optimizer or seed is
 * OB_ERR_INPUT and nothing is added. */
ob_status ob_store_confirm_runs(ob_store *s, int64_t bench_id, const ob_run_spec *specs, int n, int64_t *ids,
                                int *added, int *retired, ob_err *e);
/* Training losses of steps 1..upto of a run into loss[0..upto-1] (NaN for a
 * NULL loss); *n receives how many leading steps 1, 2, ... are present. */
ob_status ob_store_read_losses(ob_store *s, int64_t run_id, int64_t upto, double *loss, int64_t *n,
                               ob_err *e);

#endif
