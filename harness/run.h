/* harness/run.h - the run loop: every cell of a matrix (or of one shard of
 * it), on one device or one cell per device at a time, into one store. A
 * cell that fails or diverges is recorded as such and the matrix goes on;
 * only a failing store (or checkpoint folder) stops it, and a SIGINT/SIGTERM
 * (harness/signals.h) stops it cleanly after a checkpoint.
 *
 * Checkpoints (harness/checkpoint.h) of run ID live in DB.ckpt/run-ID/ beside
 * the database (or CHECKPOINT_DIR/run-ID/), every cfg->checkpoint_every steps
 * and at a clean stop; the newest cfg->checkpoint_keep are kept, and the
 * folder is deleted when the run is done or diverged. A lock file in that
 * folder (flock) makes sure that two processes never run the same cell; it
 * goes away with its process, however that ends.
 *
 * With cfg->resume, the newest benchmark of the database with exactly this
 * matrix (and shard) is continued: finished cells are skipped, interrupted,
 * running and failed ones continue from their newest valid checkpoint (an
 * older one when the newest is damaged; from the start when none is usable),
 * after their curve points, evaluations and events beyond the checkpoint's
 * step are deleted in one transaction. On the CPU the continued run is bit
 * for bit the run that was not interrupted. Without a matching benchmark a
 * new one is started.
 */
#ifndef OB_HARNESS_RUN_H
#define OB_HARNESS_RUN_H

#include "harness/config.h"
#include "harness/matrix.h"
#include "kernels/backend.h"
#include "results/store.h"

typedef struct ob_run_summary {
    int done, diverged, failed, interrupted;
    int skipped;   /* finished before this process started (--resume) */
    int resumed;   /* continued from a checkpoint */
    int restarted; /* begun before, started over: no usable checkpoint */
    int retried;   /* failed in an earlier process, run again (from its checkpoint or the start) */
    int busy;      /* finished by another process after this one planned it */
    int on_busy_machine; /* of the runs this process ran, those that met a busy machine
                          * (other_cpu at OB_BUSY_SHARE or more) */
    double busy_most;    /* their largest other_cpu */
    int64_t bench_id;
    int stop_signal; /* SIGINT/SIGTERM that stopped the matrix, 0 when none */
} ob_run_summary;

/* Steps excluded from step-time statistics at the start of every run, and
 * again at the start of every process that resumes it from a checkpoint (cold
 * caches, a fresh device context, first allocations). */
#define OB_WARMUP_STEPS 5
/* Steps whose records are kept on the device between copies to the host. */
#define OB_FLUSH_STEPS 64

/* Run the matrix m (the cells of shard cfg->shard_k of cfg->shard_n when
 * shard_n > 0) on dev into store. With cfg->n_devices > 0, dev is not used:
 * one thread per listed device opens that device of cfg->backend and its
 * own connection to the store, and each takes the next cell when it is
 * free. Returns OB_ERR_INTERRUPTED after a clean stop by signal. */
ob_status ob_run_matrix(const ob_config *c, const ob_matrix *m, ob_device *dev, ob_store *store,
                        ob_run_summary *sum, ob_err *e);

/* What `run --resume` of the matrix m (cfg's shard of it) into store would do,
 * for --dry-run: one line into buf (n bytes), which benchmark it continues
 * (the same matrix, or one it grew from) and how many cells are finished,
 * to continue and to start, or why it would start a new benchmark. Reads
 * only. */
ob_status ob_run_resume_preview(const ob_config *c, const ob_matrix *m, ob_store *store, char *buf, size_t n,
                                ob_err *e);

/* Statistics of a finished curve (exposed for tests). final = mean of the
 * finite losses over the last 10% of the steps (at least one step). */
void ob_curve_summary(const double *loss, int64_t n, double *final_loss, double *best_loss);
/* Quantile q in [0,1] of x (n > 0) with linear interpolation; x is sorted in place. */
double ob_quantile_inplace(double *x, int64_t n, double q);

/* Step-time statistics of a run (exposed for tests). A run trains in one or
 * more process segments: seg[0..n_seg) are the steps done when each began, 0
 * (the run's start) and then the step each resume continued from, ascending
 * (n_seg 0: one segment from 0). The first OB_WARMUP_STEPS steps of every
 * segment are a warm-up and not timed. */
int ob_step_timed(int64_t i, const int64_t *seg, int n_seg); /* 1: step i + 1 (0-based i) is timed */
typedef struct ob_step_times {
    double median, p90, mean;   /* over the timed steps; NaN when none */
    double opt_median, opt_mean; /* the optimizer's part, over the timed steps where it is known */
    int64_t n_timed;
} ob_step_times;
/* Over steps 1..n: step_ms[i] and opt_ms[i] (NaN: unknown) are step i + 1's.
 * -1 when out of memory (out all unknown), 0 else. */
int ob_step_times_of(const double *step_ms, const double *opt_ms, int64_t n, const int64_t *seg, int n_seg,
                     ob_step_times *out);
/* The folder of run run_id's checkpoints for a configuration and database:
 * DB.ckpt/run-ID, or with checkpoint_dir DIR/DBID/run-ID, DBID the
 * database's ob_store_database_id (a folder shared by several databases
 * keeps their runs of one id apart; DIR/run-ID where db_id is ""). */
void ob_run_checkpoint_dir(const ob_config *c, const char *db_path, const char *db_id, int64_t run_id, char *buf,
                           size_t n);

#endif
