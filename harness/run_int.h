/* harness/run_int.h - what a matrix's workers (run.c), a cell's run
 * (cell.c) and the confirmation stage (confirm.c) share: the devices of a
 * worker, the matrix as the workers see it and the jobs they take.
 * Internal to harness/. */
#ifndef OB_HARNESS_RUN_INT_H
#define OB_HARNESS_RUN_INT_H

#include <pthread.h>
#include <time.h>

#include "core/cpu_share.h"
#include "harness/progress.h"
#include "harness/run.h"

/* The devices of a worker: replica r of a run on dev[r]; n is data_parallel
 * (1: dev[0] alone). own[r] are those the worker opened itself. */
typedef struct replicas {
    int n;
    ob_device *dev[OB_CFG_MAX_REPLICAS];
    ob_device own[OB_CFG_MAX_REPLICAS];
    int owned[OB_CFG_MAX_REPLICAS];
    void *group; /* group_open's, when n > 1 */
} replicas;

/* Devices per run (config data_parallel; 0 means 1). */
static inline int ob_run_data_parallel(const ob_config *c)
{
    return c->data_parallel > 1 ? c->data_parallel : 1;
}

/* What a cell's run is when a process takes it on. */
enum { CELL_NEW, CELL_CONTINUED, CELL_FAILED_BEFORE };

/* Seconds on the monotonic clock */
static inline double ob_run_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Make replica r's device the thread's (a no-op alone and on the CPU). */
static inline ob_status ob_run_use_replica(const replicas *rp, int r, ob_err *e)
{
    ob_device *d = rp->dev[r];
    return rp->n > 1 && d->ops->make_current ? d->ops->make_current(d, e) : OB_OK;
}

/* One cell to run: its cell of the matrix, its row and its stored spec. */
typedef struct job {
    const ob_cell *cell;
    const ob_run_spec *spec;
    int64_t run_id;
    int pos;        /* position in this process's list (progress) */
    int was_failed; /* the plan found it failed (an earlier process's): run it again */
} job;

/* The matrix as the workers share it. */
typedef struct matrix_ctx {
    const ob_config *cfg;
    int64_t bench_id;
    const char *db_path;
    const char *db_id;      /* ob_store_database_id: checkpoints in a shared checkpoint_dir */
    job *jobs;
    int n_jobs, next;
    int *deferred;          /* jobs whose cell another process held: tried again at the end */
    unsigned char *dstate;  /* of each: 0 to try, 1 being tried, 2 finished (here or there) */
    char (*downer)[400];    /* of each: what its lock file said of the owner */
    int n_deferred, dcursor, waiting;
    double wait_note_at;
    int multi;              /* several workers: progress lines only at the end of a cell */
    pthread_mutex_t mu;     /* guards next, deferred, sum, prog, stop, fail, recent */
    ob_cpu_recent recent;   /* the CPUs' busy times at the start of this process's recent runs */
    ob_run_summary *sum;
    ob_progress *prog;
    int stop;               /* take no more cells */
    ob_status fail;         /* the failure that ended the matrix */
    ob_err fail_err;
} matrix_ctx;

/* Train one cell. Returns a non-OK status only for store failures (which end
 * the matrix, store_err says why); everything else is reported in res. A
 * checkpoint that cannot be written also ends the matrix (*stop_matrix),
 * after the run is recorded as interrupted. continuing: CELL_NEW, or the run
 * was begun before (CELL_CONTINUED) or failed before (CELL_FAILED_BEFORE).
 * *resumed_from: the checkpoint's step it continued from, -1 when it had
 * begun before and started over, 0 else. */
ob_status ob_run_cell(matrix_ctx *x, const job *j, const replicas *rp, ob_store *store, int continuing,
                      const char *ckdir, const char *ckdir_before, ob_run_result *res, char *errbuf, size_t errlen,
                      ob_err *store_err, int *stop_matrix, int *resumed_from);

/* Removes a run's checkpoints in folder dir, the folder where that leaves it
 * empty (a lock file in it stays: ob_run_remove_run_files removes it), and
 * the folder above it where that is a database's own (named by its id, in a
 * shared checkpoint_dir) and left empty. */
void ob_run_remove_ckpt_folder(const char *dir);

/* Run jobs on dev (or one worker thread per device of --devices), in the
 * order of their stage's cells (stage, n_stage); the failure that stopped
 * them, or OB_ERR_INTERRUPTED after a signal. */
ob_status ob_run_jobs(matrix_ctx *x, ob_device *dev, ob_store *store, job *jobs, int n_jobs,
                      const ob_cell *stage, int n_stage, ob_err *e);

/* A finished run's checkpoints and lock (and their folders) go. */
void ob_run_remove_run_files(const ob_config *c, const char *db_path, const char *db_id, int64_t run_id);

/* The confirmation stage follows the sweep of the benchmark, once no sweep
 * cell is left to anyone (another process may still run some: the one that
 * finishes the last does it); never in a shard. A benchmark that has
 * confirmation runs already (stopped during the stage, or run with more
 * seeds), or whose stored configuration asked for them (kept_confirm: a
 * grown matrix retired its runs), keeps its number of seeds per pair:
 * --resume finishes them. */
ob_status ob_run_confirm_when_due(matrix_ctx *x, const ob_matrix *m, ob_device *dev, ob_store *store,
                                  const char *run_device, int sharded, int kept_confirm, ob_err *e);

#endif
