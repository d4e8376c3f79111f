/* harness/run.c - a matrix of runs (see run.h): which benchmark it is
 * (new, continued with --resume, grown), its jobs in order, the workers that
 * take them (one per device or CPU share, several processes sharing a
 * database through the run and benchmark locks), what each finished job
 * counts, and the confirmation stage when the sweep is done (confirm.c).
 * A job's own run is cell.c's. */
#include "harness/run.h"
#include "harness/run_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/cpu_share.h"
#include "harness/cellspec.h"
#include "harness/checkpoint.h"
#include "harness/locks.h"
#include "harness/resume.h"
#include "harness/progress.h"
#include "harness/signals.h"
#include "results/stats.h"
#include "ob_git_rev.h" /* generated at build time (cmake/git_rev.cmake) */

static void record_failure(matrix_ctx *x, const ob_err *e)
{
    pthread_mutex_lock(&x->mu);
    if (x->fail == OB_OK) {
        x->fail = e->status != OB_OK ? e->status : OB_ERR_INTERNAL;
        x->fail_err = *e;
    }
    x->stop = 1;
    pthread_mutex_unlock(&x->mu);
}

/* A run's checkpoint folder goes, and the database's folder above it in a
 * checkpoint_dir (DIR/DBID, 16 hex digits) once it holds nothing else. */
void ob_run_remove_ckpt_folder(const char *dir)
{
    /* the checkpoints alone: where dir is the run's lock folder (the default
     * place), the lock file stays while the run is not finished, held by the
     * process that runs it and naming its checkpoints */
    ob_ckpt_remove_checkpoints(dir);
    char up[1100];
    snprintf(up, sizeof up, "%s", dir);
    char *slash = strrchr(up, '/');
    if (!slash) return;
    *slash = 0;
    const char *name = strrchr(up, '/');
    name = name ? name + 1 : up;
    if (strlen(name) == 16 && strspn(name, "0123456789abcdef") == 16) rmdir(up); /* fails while not empty */
}

/* A finished run's checkpoints and lock (and their folders) go. */
void ob_run_remove_run_files(const ob_config *c, const char *db_path, const char *db_id, int64_t run_id)
{
    char dir[1100];
    ob_run_checkpoint_dir(c, db_path, db_id, run_id, dir, sizeof dir);
    ob_run_remove_ckpt_folder(dir);
    ob_lock_run_dir(db_path, run_id, dir, sizeof dir);
    ob_ckpt_remove_all(dir);
}

/* A finished run's files go (remove_run_files), and the checkpoints of the
 * process it was taken over from (before; "": none). */
static void remove_job_files(const matrix_ctx *x, const job *j, const char *before)
{
    ob_run_remove_run_files(x->cfg, x->db_path, x->db_id, j->run_id);
    if (before[0]) ob_run_remove_ckpt_folder(before);
}

/* A cell that another process finished (finished), or failed, since this
 * process planned it, left as it is: a finished one's files go, a failure is
 * recorded with its error, and running the cell again here would most
 * likely fail the same way (--resume runs it again). Its lock (fd) is
 * closed, and it counts busy. */
static void leave_cell(matrix_ctx *x, const job *j, int finished, const char *before, int fd)
{
    if (finished) {
        remove_job_files(x, j, before);
    } else {
        fprintf(stderr, "optbench: cell %lld (run %lld) failed in another process (the error is in the "
                        "database); leaving it, --resume runs it again\n",
                (long long)j->cell->index, (long long)j->run_id);
    }
    close(fd);
    pthread_mutex_lock(&x->mu);
    x->sum->busy++;
    pthread_mutex_unlock(&x->mu);
}

/* The progress line's names of a cell's workload and of its optimizer, each
 * with its swept configuration: "quadratic cond=100", "adam beta2=0.95". */
static void cell_labels(const matrix_ctx *x, const ob_cell *cell, char *wl_label, size_t wl_n, char *opt_label,
                        size_t opt_n)
{
    char conf[512];
    ob_cell_sweep_text(x->cfg, cell, OB_SWEEP_WORKLOAD, conf, sizeof conf);
    snprintf(wl_label, wl_n, "%s%s%s", cell->wl->name, conf[0] ? " " : "", conf);
    ob_cell_sweep_text(x->cfg, cell, OB_SWEEP_OPTIMIZER, conf, sizeof conf);
    snprintf(opt_label, opt_n, "%s%s%s", cell->opt->name, conf[0] ? " " : "", conf);
}

/* As a cell's run starts: a sample of the CPUs' busy times (cpu0), kept
 * among this process's recent ones. */
static void cpu_start(matrix_ctx *x, ob_cpu_sample *cpu0)
{
    ob_cpu_sample_take(cpu0);
    pthread_mutex_lock(&x->mu);
    ob_cpu_recent_add(&x->recent, cpu0);
    pthread_mutex_unlock(&x->mu);
}

/* As a cell's run ends: the share of the CPUs that other processes kept busy
 * since cpu0, into res->other_cpu. A run continued from a checkpoint
 * (resumed_from > 0) joins it with earlier_cpu, the share recorded for its
 * part before (whose wall time is the run's less this process's), by their
 * wall times. */
static void cpu_end(matrix_ctx *x, const ob_cpu_sample *cpu0, int resumed_from, double earlier_cpu,
                    ob_run_result *res)
{
    ob_cpu_sample cpu1;
    ob_cpu_sample_take(&cpu1);
    pthread_mutex_lock(&x->mu);
    res->other_cpu = ob_cpu_share_run(&x->recent, cpu0, &cpu1);
    pthread_mutex_unlock(&x->mu);
    if (resumed_from > 0) {
        const double here_s = cpu0->ok && cpu1.ok ? cpu1.wall_s - cpu0->wall_s : NAN;
        res->other_cpu = ob_cpu_share_join(earlier_cpu, res->wall_s - here_s, res->other_cpu, here_s);
    }
}

/* A cell's result counted in the matrix's summary (by its status, and by how
 * it went on: continuing, and resumed_from as ob_run_cell gives it) and its
 * progress line ended (begun here too when several workers run). */
static void count_result(matrix_ctx *x, const job *j, const ob_run_result *res, int continuing, int resumed_from,
                         const char *wl_label, const char *opt_label)
{
    const ob_cell *cell = j->cell;
    pthread_mutex_lock(&x->mu);
    if (!strcmp(res->status, "done")) x->sum->done++;
    else if (!strcmp(res->status, "diverged")) x->sum->diverged++;
    else if (!strcmp(res->status, "interrupted")) x->sum->interrupted++;
    else x->sum->failed++;
    if (continuing == CELL_FAILED_BEFORE) x->sum->retried++;
    else if (resumed_from > 0) x->sum->resumed++;
    else if (resumed_from < 0) x->sum->restarted++;
    if (res->other_cpu >= OB_BUSY_SHARE) {
        x->sum->on_busy_machine++;
        x->sum->busy_most = fmax(x->sum->busy_most, res->other_cpu);
    }
    if (x->multi)
        ob_progress_cell_begin(x->prog, j->pos, wl_label, opt_label, cell->lr, cell->seed);
    ob_progress_cell_end(x->prog, res->status, res->final_loss, res->steps_done, res->diverged_step, res->wall_s,
                         res->error);
    pthread_mutex_unlock(&x->mu);
}

/* A cell whose lock this process holds (fd), to be run as continuing says
 * (CELL_NEW, CELL_CONTINUED or CELL_FAILED_BEFORE): trained, its result
 * recorded, its files removed once it finished, its lock closed (on every
 * path) and its result counted. */
static ob_status train_job(matrix_ctx *x, const replicas *rp, ob_store *store, const job *j, int continuing,
                           const char *ckdir, const char *before, int fd, ob_err *e)
{
    const ob_cell *cell = j->cell;
    /* the progress line names swept configurations: "quadratic cond=100 adam beta2=0.95" */
    char wl_label[600], opt_label[600];
    cell_labels(x, cell, wl_label, sizeof wl_label, opt_label, sizeof opt_label);
    if (!x->multi) ob_progress_cell_begin(x->prog, j->pos, wl_label, opt_label, cell->lr, cell->seed);
    ob_run_result res;
    memset(&res, 0, sizeof res);
    char errbuf[1024];
    int stop_matrix = 0, resumed_from = 0;
    ob_cpu_sample cpu0; /* how busy other processes kept the CPUs meanwhile */
    double earlier_cpu = NAN; /* the same, as recorded for the run's part before a stop */
    ob_status s = OB_OK;
    if (continuing == CELL_CONTINUED && (s = ob_store_run_other_cpu(store, j->run_id, &earlier_cpu, e)) != OB_OK) {
        close(fd);
        return s;
    }
    cpu_start(x, &cpu0);
    s = ob_run_cell(x, j, rp, store, continuing, ckdir, before, &res, errbuf, sizeof errbuf, e, &stop_matrix,
                 &resumed_from);
    cpu_end(x, &cpu0, resumed_from, earlier_cpu, &res);
    if (s == OB_OK) s = ob_store_finish_run(store, j->run_id, &res, e);
    if (s == OB_OK && (!strcmp(res.status, "done") || !strcmp(res.status, "diverged")))
        remove_job_files(x, j, before);
    close(fd);
    if (s != OB_OK) return s;
    count_result(x, j, &res, continuing, resumed_from, wl_label, opt_label);
    if (stop_matrix) {
        ob_fail(e, OB_ERR_IO, "%s", errbuf);
        return OB_ERR_IO;
    }
    return OB_OK;
}

/* One cell, start to end: lock, status check, train, record, report. A cell
 * whose lock another process holds is left (*busy = 1, owner says whose);
 * the caller tries it again later, so that a cell whose process dies is
 * continued here. One that another process finished, or failed, since this
 * process planned it is counted busy and left as it is. */
static ob_status run_job(matrix_ctx *x, const replicas *rp, ob_store *store, const job *j, int *busy, char *owner,
                         size_t owner_n, ob_err *e)
{
    *busy = 0;
    char ckdir[1100], lockdir[1100], before[1100];
    ob_run_checkpoint_dir(x->cfg, x->db_path, x->db_id, j->run_id, ckdir, sizeof ckdir);
    ob_lock_run_dir(x->db_path, j->run_id, lockdir, sizeof lockdir);
    int fd;
    ob_status s = OB_OK;
    if (!ob_lock_cell(lockdir, ckdir, &fd, owner, owner_n, e, &s)) {
        if (s != OB_OK) return s;
        *busy = 1;
        return OB_OK;
    }
    ob_lock_owner_ckdir(owner, j->run_id, ckdir, before, sizeof before);
    char status[32];
    if ((s = ob_store_run_status(store, j->run_id, status, sizeof status, e)) != OB_OK) {
        close(fd);
        return s;
    }
    int finished = !strcmp(status, "done") || !strcmp(status, "diverged");
    if (finished || (!strcmp(status, "failed") && !j->was_failed)) {
        leave_cell(x, j, finished, before, fd);
        return OB_OK;
    }
    const int continuing = !strcmp(status, "pending") ? CELL_NEW
                           : !strcmp(status, "failed") ? CELL_FAILED_BEFORE
                                                       : CELL_CONTINUED;
    return train_job(x, rp, store, j, continuing, ckdir, before, fd, e);
}

#define OB_WAIT_POLL_MS 200
#define OB_WAIT_NOTE_S 60.0

/* While waiting: the cells still held elsewhere, their owners and how far
 * their curves are, at most every OB_WAIT_NOTE_S (a stalled owner shows). */
static void wait_note(matrix_ctx *x, ob_store *store, int first)
{
    pthread_mutex_lock(&x->mu);
    double t = ob_run_now_s();
    if (!first && t - x->wait_note_at < OB_WAIT_NOTE_S) {
        pthread_mutex_unlock(&x->mu);
        return;
    }
    x->wait_note_at = t;
    int open = 0;
    for (int k = 0; k < x->n_deferred; k++) open += x->dstate[k] != 2;
    fprintf(stderr, "optbench: %s for %d cell%s other processes are running (any whose process stops is "
                    "continued here):\n", first ? "waiting" : "still waiting", open, open == 1 ? "" : "s");
    for (int k = 0, shown = 0; k < x->n_deferred; k++) {
        if (x->dstate[k] == 2) continue;
        if (shown++ == 8) {
            fprintf(stderr, "  ... and %d more\n", open - 8);
            break;
        }
        const job *j = &x->jobs[x->deferred[k]];
        int64_t step = 0;
        ob_err e;
        ob_err_clear(&e);
        char who[320];
        ob_lock_owner_text(x->downer[k], who, sizeof who);
        if (ob_store_curve_steps(store, j->run_id, &step, &e) == OB_OK)
            fprintf(stderr, "  cell %lld (run %lld): %s, at step %lld of %lld\n", (long long)j->cell->index,
                    (long long)j->run_id, who, (long long)step, (long long)x->cfg->steps);
    }
    pthread_mutex_unlock(&x->mu);
}

/* The jobs in order; a cell another process holds is put aside, and once
 * the list is done the cells put aside are tried in turn, without waiting
 * on any one of them, until each is finished here or there (a process may
 * be killed: its cells are continued here). Nothing is left `running` by a
 * process that stopped. */
static void worker_loop(matrix_ctx *x, const replicas *rp, ob_store *store)
{
    int misses = 0; /* busy tries in a row of cells put aside */
    for (;;) {
        pthread_mutex_lock(&x->mu);
        if (x->stop || ob_signal_pending()) {
            pthread_mutex_unlock(&x->mu);
            break;
        }
        int i = -1, d = -1, open = 0;
        if (x->next < x->n_jobs) {
            i = x->next++;
        } else {
            for (int k = 0; k < x->n_deferred; k++) {
                int dk = (x->dcursor + k) % x->n_deferred;
                open += x->dstate[dk] != 2;
                if (d < 0 && x->dstate[dk] == 0) d = dk;
            }
            if (d >= 0) {
                x->dstate[d] = 1;
                x->dcursor = d + 1;
                i = x->deferred[d];
            }
        }
        int first_wait = d >= 0 && !x->waiting;
        if (d >= 0) x->waiting = 1;
        pthread_mutex_unlock(&x->mu);
        if (i < 0 && open == 0) break;
        if (first_wait) wait_note(x, store, 1);
        if (i < 0) { /* every cell left is being tried by another worker */
            struct timespec ts = {0, OB_WAIT_POLL_MS * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        ob_err e;
        ob_err_clear(&e);
        int busy = 0;
        char owner[1400];
        if (run_job(x, rp, store, &x->jobs[i], &busy, owner, sizeof owner, &e) != OB_OK) {
            record_failure(x, &e);
            break;
        }
        pthread_mutex_lock(&x->mu);
        if (d < 0 && busy) {
            const job *j = &x->jobs[i];
            char who[320];
            ob_lock_owner_text(owner, who, sizeof who);
            fprintf(stderr, "optbench: cell %lld (run %lld) is being run by %s; taking the next (it is continued "
                            "here if that process stops)\n", (long long)j->cell->index, (long long)j->run_id, who);
            snprintf(x->downer[x->n_deferred], sizeof x->downer[0], "%.*s", (int)sizeof x->downer[0] - 1, owner);
            x->deferred[x->n_deferred] = i;
            x->dstate[x->n_deferred++] = 0;
        } else if (d >= 0) {
            x->dstate[d] = busy ? 0 : 2;
            if (busy) snprintf(x->downer[d], sizeof x->downer[0], "%.*s", (int)sizeof x->downer[0] - 1, owner);
        }
        pthread_mutex_unlock(&x->mu);
        if (d >= 0 && busy) {
            if (++misses >= open) { /* each cell left tried once: a pause */
                misses = 0;
                wait_note(x, store, 0);
                struct timespec ts = {0, OB_WAIT_POLL_MS * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        } else {
            misses = 0;
        }
    }
}

/* The OpenMP threads of each cell when nw cells run at once on the CPU
 * backend (--devices): the process's threads shared out, at least 1; 0 for
 * another backend (its cells keep the process's setting). */
static int cpu_threads_per_cell(const ob_config *c, int nw)
{
    int omp = 0;
#ifdef _OPENMP
    if (!strcmp(c->backend, "cpu")) omp = omp_get_max_threads() / (nw > 0 ? nw : 1);
    if (!strcmp(c->backend, "cpu") && omp < 1) omp = 1;
#endif
    return omp;
}

typedef struct worker_arg {
    matrix_ctx *x;
    const int *devices; /* data_parallel of them */
    int omp_threads;
} worker_arg;

static void replicas_close(replicas *rp)
{
    /* replica 0 is the caller's device, which stays open */
    const int callers = !rp->owned[0] && rp->dev[0];
    if (rp->group) rp->dev[0]->ops->group_close(rp->group);
    rp->group = NULL;
    ob_err e;
    for (int r = rp->n - 1; r >= 0; r--)
        if (rp->owned[r]) {
            (void)ob_run_use_replica(rp, r, &e); /* its stream and memory are released from its device */
            ob_device_close(&rp->own[r]);
            rp->owned[r] = 0;
        }
    /* the caller's device current again, also after a replica failed to
     * open (opening, or probing, a CUDA device makes it current); a device
     * of our own is closed by now */
    if (callers && rp->dev[0]->ops->make_current) (void)rp->dev[0]->ops->make_current(rp->dev[0], &e);
}

/* A worker's replicas: first (opened already, or NULL) and the devices of
 * indices[0 .. n) not opened yet, and their sum group when n > 1. */
static ob_status replicas_open(replicas *rp, const ob_config *c, ob_device *first, const int *indices, int n,
                               ob_err *e)
{
    memset(rp, 0, sizeof *rp);
    rp->n = n;
    for (int r = 0; r < n; r++) {
        if (r == 0 && first) {
            rp->dev[0] = first;
            continue;
        }
        /* the backend replica 0 got: under auto, a device the CUDA probe
         * refused would otherwise become a CPU replica in a CUDA group */
        const char *backend = r > 0 ? rp->dev[0]->ops->name : c->backend;
        ob_status s = ob_device_open(&rp->own[r], backend, indices[r], e);
        if (s != OB_OK) {
            ob_err_prefix(e, "device %d: ", indices[r]);
            rp->n = r;
            replicas_close(rp);
            return s;
        }
        rp->owned[r] = 1;
        rp->dev[r] = &rp->own[r];
    }
    if (n > 1) {
        const ob_backend_ops *ops = rp->dev[0]->ops;
        ob_status s = ops->group_open ? ops->group_open(rp->dev, n, &rp->group, e)
                                      : ob_fail(e, OB_ERR_UNSUPPORTED, "the %s backend cannot run data-parallel "
                                                                      "replicas", ops->name);
        if (s == OB_OK && ops->make_current) s = ops->make_current(rp->dev[0], e);
        if (s != OB_OK) {
            replicas_close(rp);
            return s;
        }
    }
    return OB_OK;
}

static void *worker_main(void *p)
{
    worker_arg *w = p;
    matrix_ctx *x = w->x;
    ob_err e;
    ob_err_clear(&e);
#ifdef _OPENMP
    if (w->omp_threads > 0) omp_set_num_threads(w->omp_threads);
#endif
    replicas *rp = malloc(sizeof *rp);
    if (!rp) {
        ob_fail(&e, OB_ERR_NOMEM, "out of memory");
        record_failure(x, &e);
        return NULL;
    }
    if (replicas_open(rp, x->cfg, NULL, w->devices, ob_run_data_parallel(x->cfg), &e) != OB_OK) {
        record_failure(x, &e);
        free(rp);
        return NULL;
    }
    ob_store *store = NULL;
    if (ob_store_open(x->db_path, OB_STORE_AGAIN, &store, &e) != OB_OK) {
        record_failure(x, &e);
        replicas_close(rp);
        free(rp);
        return NULL;
    }
    worker_loop(x, rp, store);
    ob_store_close(store);
    replicas_close(rp);
    free(rp);
    return NULL;
}

/* The jobs put in the order they run in (ob_cells_run_order: seed by seed,
 * optimizers in turn, as in the whole stage, all: n_all cells); their
 * positions (progress) follow. Without memory for that, they keep the order
 * given. */
static void order_jobs(job *jobs, int n, const ob_cell *all, int n_all)
{
    const ob_cell **cells = calloc((size_t)(n > 0 ? n : 1), sizeof *cells);
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    job *was = malloc((size_t)(n > 0 ? n : 1) * sizeof *was);
    if (cells && order && was) {
        for (int i = 0; i < n; i++) cells[i] = jobs[i].cell;
        ob_cells_run_order(cells, n, all, n_all, order);
        memcpy(was, jobs, (size_t)n * sizeof *was);
        for (int i = 0; i < n; i++) jobs[i] = was[order[i]];
    }
    for (int i = 0; i < n; i++) jobs[i].pos = i;
    free(cells);
    free(order);
    free(was);
}

/* Run jobs on dev (or one worker thread per device of --devices), in the
 * order of their stage's cells (stage, n_stage: order_jobs); the failure that
 * stopped them, or OB_ERR_INTERRUPTED after a signal. */
ob_status ob_run_jobs(matrix_ctx *x, ob_device *dev, ob_store *store, job *jobs, int n_jobs,
                      const ob_cell *stage, int n_stage, ob_err *e)
{
    const ob_config *c = x->cfg;
    ob_run_summary *sum = x->sum;
    order_jobs(jobs, n_jobs, stage, n_stage);
    x->jobs = jobs;
    x->n_jobs = n_jobs;
    x->next = 0;
    x->n_deferred = x->dcursor = x->waiting = 0;
    free(x->deferred);
    free(x->dstate);
    free(x->downer);
    x->deferred = malloc((size_t)(n_jobs ? n_jobs : 1) * sizeof *x->deferred);
    x->dstate = malloc((size_t)(n_jobs ? n_jobs : 1) * sizeof *x->dstate);
    x->downer = malloc((size_t)(n_jobs ? n_jobs : 1) * sizeof *x->downer);
    if (!x->deferred || !x->dstate || !x->downer) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n_jobs);
    x->prog = ob_progress_new(n_jobs, c->steps, stderr);
    const int dp = ob_run_data_parallel(c);
    if (!x->multi) {
        /* replicas on dev and the devices after it */
        int idx[OB_CFG_MAX_REPLICAS];
        for (int r = 0; r < dp; r++) idx[r] = dev->index + r;
        replicas *rp = malloc(sizeof *rp);
        ob_status rs = rp ? replicas_open(rp, c, dev, idx, dp, e) : ob_fail(e, OB_ERR_NOMEM, "out of memory");
        if (rs != OB_OK) {
            free(rp);
            ob_progress_free(x->prog);
            x->prog = NULL;
            return rs;
        }
        worker_loop(x, rp, store);
        replicas_close(rp);
        free(rp);
    } else {
        /* one worker per data_parallel devices of the list */
        const int nw = c->n_devices / dp;
        pthread_t th[OB_CFG_MAX_DEVICES];
        worker_arg args[OB_CFG_MAX_DEVICES];
        int started = 0, omp = cpu_threads_per_cell(c, nw);
        for (int i = 0; i < nw; i++) {
            args[i] = (worker_arg){x, c->devices + i * dp, omp};
            if (pthread_create(&th[i], NULL, worker_main, &args[i]) != 0) {
                ob_err te;
                ob_fail(&te, OB_ERR_INTERNAL, "cannot start a thread for device %d", c->devices[i * dp]);
                record_failure(x, &te);
                break;
            }
            started++;
        }
        for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    }
    ob_progress_free(x->prog);
    x->prog = NULL;
    if (x->fail != OB_OK) {
        *e = x->fail_err;
        ob_status s = x->fail;
        if (s == OB_ERR_DB || s == OB_ERR_IO) {
            size_t l = strlen(e->msg);
            snprintf(e->msg + l, sizeof e->msg - l,
                     "; once that is fixed, run the same command with --resume to continue");
        }
        return s;
    }
    if (ob_signal_pending()) {
        sum->stop_signal = ob_signal_pending();
        const char *sig = ob_signal_name(sum->stop_signal);
        if (sum->interrupted == 0)
            return ob_fail(e, OB_ERR_INTERRUPTED,
                           "stopped by %s: no run of this process was in progress (it was waiting for cells "
                           "other processes run); run the same command with --resume to continue", sig);
        return ob_fail(e, OB_ERR_INTERRUPTED,
                       "stopped by %s: %d run%s checkpointed and marked interrupted; run the same command "
                       "with --resume to continue",
                       sig, sum->interrupted, sum->interrupted == 1 ? "" : "s");
    }
    return OB_OK;
}

/* The eval_every a benchmark's stored configuration names; -1 when it has
 * none optbench wrote (a database from before). */
static int64_t stored_eval_every(ob_store *store, int64_t bench_id, ob_err *e, ob_status *s)
{
    char *text = NULL;
    *s = ob_store_benchmark_config(store, bench_id, &text, e);
    int64_t v = *s == OB_OK ? ob_config_text_eval_every(text) : -1;
    free(text);
    return v;
}

/* A benchmark continued with another eval_every would mix two evaluation
 * schedules in its runs. Its stored configuration says which it was run
 * with; without one, the stored evaluations tell: the first evaluation after
 * step 0 is at step eval_every, and step 0 is evaluated exactly when
 * eval_every > 0. What they cannot tell yet (no run has reached its first
 * evaluation) is let through. */
static ob_status check_eval_every(const ob_config *c, ob_store *store, int64_t bench_id, ob_err *e)
{
    const int64_t now = c->eval_every;
    ob_status s = OB_OK;
    int64_t old = stored_eval_every(store, bench_id, e, &s); /* -1 unknown, -2 above `now` */
    if (s != OB_OK) return s;
    if (old < 0) {
        int64_t first = 0, reached = 0;
        int at_start = 0;
        OB_TRY(ob_store_eval_schedule(store, bench_id, &first, &at_start, &reached, e));
        if (first > 0) old = first;
        else if (at_start && (now == 0 || reached > now)) old = -2; /* > 0, and past `now` without one */
        else if (!at_start && reached > 0) old = 0;
    }
    if (old == -1 || old == now) return OB_OK;
    char was[64], give[96];
    if (old == -2) {
        snprintf(was, sizeof was, "an eval_every above %lld", (long long)now);
        snprintf(give, sizeof give, "the eval_every it was run with");
    } else {
        snprintf(was, sizeof was, "eval_every %lld", (long long)old);
        snprintf(give, sizeof give, "--eval-every %lld (eval_every: %lld in a config)", (long long)old,
                 (long long)old);
    }
    return ob_fail(e, OB_ERR_INPUT,
                   "--resume: benchmark %lld of '%s' was run with %s, this command has %lld: its runs would mix "
                   "two evaluation schedules; give %s to continue it, or run without --resume to start a new "
                   "benchmark",
                   (long long)bench_id, ob_store_path(store), was, (long long)now, give);
}

/* The cells of this process (all of the matrix, or those of its shard), as
 * stored (ob_cell_set), and those of them to run (jobs). */
typedef struct own_cells {
    ob_cell_set set;
    job *jobs;
} own_cells;

static void own_cells_free(own_cells *oc)
{
    ob_cell_set_free(&oc->set);
    free(oc->jobs);
    oc->jobs = NULL;
}

/* The spec of each of this process's cells, as this build stores it. */
static ob_status own_cells_build(const ob_config *c, const ob_matrix *m, ob_device *dev, const char *run_device,
                                 own_cells *oc, ob_err *e)
{
    oc->jobs = NULL;
    OB_TRY(ob_cell_set_build(c, m, dev, run_device, &oc->set, e));
    if (!(oc->jobs = calloc((size_t)oc->set.n + 1, sizeof *oc->jobs)))
        return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", oc->set.n);
    return OB_OK;
}

/* What the benchmark and each run record as their device (run_device), and
 * the list of --devices ("devices 0,1"; "" without). With --devices (dev
 * NULL), each cell runs on whichever device is free. */
static void describe_devices(const ob_config *c, const ob_device *dev, char *devices_desc, size_t dn,
                             char *run_device, size_t rn)
{
    devices_desc[0] = '\0';
    for (int i = 0, l = 0; i < c->n_devices && l < (int)dn; i++)
        l += snprintf(devices_desc + l, dn - (size_t)l, "%s%d", i ? "," : "devices ", c->devices[i]);
    snprintf(run_device, rn, "%s", dev ? dev->desc : devices_desc);
    const int dp = ob_run_data_parallel(c);
    const int per_cell = dev ? 0 : cpu_threads_per_cell(c, c->n_devices / dp);
    if (per_cell > 0) {
        /* --devices on the CPU: the cells share the cores, each on per_cell
         * threads, and the thread count is part of what a result means (its
         * sums split by it): the CPU's own text at that count, then the list */
        char cpu_desc[256] = "";
#ifdef _OPENMP
        const int saved = omp_get_max_threads();
        omp_set_num_threads(per_cell);
#endif
        ob_cpu_backend.probe(0, cpu_desc, sizeof cpu_desc);
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
        snprintf(run_device, rn, "%s; %s: %d cells at once", cpu_desc, devices_desc, c->n_devices / dp);
    }
    if (dp > 1) {
        size_t l = strlen(run_device);
        if (dev && !strcmp(dev->ops->name, "cpu"))
            snprintf(run_device + l, rn - l, "; data parallel: %d replicas, one after another", dp);
        else if (dev)
            snprintf(run_device + l, rn - l, "; data parallel over devices %d-%d", dev->index, dev->index + dp - 1);
        else
            snprintf(run_device + l, rn - l, "; data parallel: %d devices per run", dp);
    }
}

/* The benchmark this process runs the cells of, as choose_benchmark found or
 * began it. */
typedef struct bench_choice {
    int64_t id;
    int resumed;      /* continued (--resume found it), not begun here */
    int kept_confirm; /* the fresh seeds per pair a continued benchmark has or asked for */
    int fd;           /* its lock (ob_lock_bench), -1 until taken */
} bench_choice;

/* --resume: the benchmark of the database to continue (found->bench, 0:
 * none), grown to this matrix where it is a smaller one; the runs of the
 * cells it holds in oc->set.ids, those matched by their settings keeping the
 * texts they were stored with. */
static ob_status find_resumed(const ob_config *c, const ob_matrix *m, ob_store *store, own_cells *oc,
                              ob_resume_found *found, ob_err *e)
{
    const int n = oc->set.n;
    unsigned char *relaxed = calloc((size_t)n + 1, 1);
    if (!relaxed) return ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", n);
    ob_status s = ob_resume_find(c, m, store, oc->set.specs, n, oc->set.ids, relaxed, found, e);
    if (s == OB_OK && found->grown) {
        s = ob_resume_grow(c, m, store, oc->set.specs, n, found, oc->set.ids, e);
        for (int k = 0; k < n; k++) relaxed[k] = oc->set.ids[k] != 0; /* matched over this build's defaults too */
    }
    if (s == OB_OK && found->bench)
        s = ob_resume_keep_texts(store, found->bench, oc->set.specs, n, relaxed, oc->set.wjson, oc->set.ojson, e);
    free(relaxed);
    return s;
}

/* Another thread count, data_parallel or machine than the continued
 * benchmark was started on: allowed, and said. */
static ob_status note_other_device(ob_store *store, int64_t bench_id, const char *run_device, ob_err *e)
{
    char *was = NULL;
    OB_TRY(ob_store_benchmark_device(store, bench_id, &was, e));
    if (was && strcmp(was, run_device) != 0)
        fprintf(stderr,
                "optbench: note: --resume: benchmark %lld was started on '%s', this process runs on '%s': "
                "its runs keep the first as their device, and a run continued here differs from an "
                "uninterrupted one by rounding where the thread count or the split changed\n",
                (long long)bench_id, was, run_device);
    free(was);
    return OB_OK;
}

/* A continued benchmark that lacks cells of this process (a merged one whose
 * shard's database was not merged): they are added to it, to run now. */
static ob_status add_missing_runs(ob_store *store, int64_t bench_id, int grown, own_cells *oc, ob_err *e)
{
    const int n = oc->set.n;
    int missing = 0;
    for (int k = 0; k < n; k++) missing += oc->set.ids[k] == 0;
    if (!missing) return OB_OK;
    ob_status s = OB_OK;
    ob_run_spec *ms = calloc((size_t)missing, sizeof *ms);
    int64_t *mi = calloc((size_t)missing, sizeof *mi);
    if (!ms || !mi) s = ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int k = 0, j = 0; s == OB_OK && k < n; k++)
        if (oc->set.ids[k] == 0) ms[j++] = oc->set.specs[k];
    if (s == OB_OK) s = ob_store_add_runs(store, bench_id, ms, missing, mi, e);
    for (int k = 0, j = 0; s == OB_OK && k < n; k++)
        if (oc->set.ids[k] == 0) oc->set.ids[k] = mi[j++];
    free(ms);
    free(mi);
    if (s == OB_OK && !grown)
        fprintf(stderr, "optbench: --resume: merged benchmark %lld lacks %d of the %d cells (a shard's "
                        "database that was not merged?): added, to run now\n", (long long)bench_id, missing, n);
    return s;
}

/* --resume: the benchmark to continue, if the database has one (b->id, 0:
 * none, said), checked to have this command's evaluation schedule, and
 * given the cells it lacks. */
static ob_status resume_lookup(const ob_config *c, const ob_matrix *m, ob_store *store, const char *run_device,
                               own_cells *oc, bench_choice *b, ob_err *e)
{
    ob_resume_found found;
    OB_TRY(find_resumed(c, m, store, oc, &found, e));
    b->id = found.bench;
    if (!b->id) fprintf(stderr, "optbench: --resume: %s; starting a new benchmark\n", found.why);
    b->resumed = b->id != 0;
    if (!b->resumed) return OB_OK;
    OB_TRY(check_eval_every(c, store, b->id, e));
    OB_TRY(note_other_device(store, b->id, run_device, e));
    return add_missing_runs(store, b->id, found.grown, oc, e);
}

/* The benchmark's effective configuration as YAML (*conf, to free):
 * `optbench run` of that text runs the same matrix. A --resume without
 * --confirm-seeds keeps saying how many fresh seeds the benchmark's
 * confirmation runs have, or its stored configuration asked for (a grown
 * matrix may have retired them): b->kept_confirm. */
static ob_status benchmark_config_text(const ob_config *c, const ob_matrix *m, ob_store *store, bench_choice *b,
                                       char **conf, ob_err *e)
{
    int had = 0;
    if (b->id) OB_TRY(ob_store_confirm_depth(store, b->id, m->n, OB_CFG_MAX_CONFIRM, &had, e));
    if (b->resumed) {
        char *text = NULL;
        OB_TRY(ob_store_benchmark_config(store, b->id, &text, e));
        const int64_t asked = ob_config_text_confirm_seeds(text);
        free(text);
        if (asked > had && asked <= OB_CFG_MAX_CONFIRM) had = (int)asked;
    }
    b->kept_confirm = had;
    ob_config *cc = malloc(sizeof *cc);
    if (!cc) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    *cc = *c;
    if (had > cc->confirm_seeds) cc->confirm_seeds = had;
    ob_status s = ob_config_to_yaml(cc, conf, e);
    free(cc);
    return s;
}

/* The benchmark keeps its effective configuration: a --resume may have
 * changed what lies outside the cells (confirm_seeds, checkpoints), and the
 * newest is kept. One not continued is begun here, with its runs (and, for
 * a shard, which one it is of which matrix). */
static ob_status store_benchmark(const ob_config *c, const ob_matrix *m, ob_device *dev, ob_store *store,
                                 const char *run_device, const char *shard, own_cells *oc, bench_choice *b, ob_err *e)
{
    char *conf = NULL;
    OB_TRY(benchmark_config_text(c, m, store, b, &conf, e));
    ob_status s;
    if (b->id) {
        s = ob_store_set_benchmark_config(store, b->id, conf, e);
    } else {
        char host[256] = "unknown";
        gethostname(host, sizeof host - 1);
        const char *backend_name = dev ? dev->ops->name : c->backend;
        s = ob_store_begin_benchmark(store, c->name, conf, OB_GIT_REV, host, backend_name, run_device, &b->id, e);
    }
    free(conf);
    if (s != OB_OK || b->resumed) return s;
    if (shard[0]) {
        char fp[128];
        OB_TRY(ob_matrix_fingerprint(c, m, fp, sizeof fp, e));
        OB_TRY(ob_store_set_benchmark_origin(store, b->id, shard, fp, e));
    }
    return ob_store_add_runs(store, b->id, oc->set.specs, oc->set.n, oc->set.ids, e);
}

/* Finding the benchmark to continue, adding what it lacks, or creating one
 * with its runs: one write transaction, so that processes started together
 * with --resume agree on one benchmark (the others wait, then find it), and
 * a process killed here leaves no benchmark without runs. b->fd: the
 * benchmark's lock, which the caller releases, taken before the transaction
 * ends. */
static ob_status choose_benchmark(const ob_config *c, const ob_matrix *m, ob_device *dev, ob_store *store,
                                  const char *run_device, const char *shard, own_cells *oc, bench_choice *b,
                                  ob_err *e)
{
    OB_TRY(ob_store_tx_begin(store, e));
    ob_status s = c->resume ? resume_lookup(c, m, store, run_device, oc, b, e) : OB_OK;
    if (s == OB_OK) s = store_benchmark(c, m, dev, store, run_device, shard, oc, b, e);
    /* held while this process runs the benchmark's cells, taken before the
     * transaction that chose it ends: a matrix growing from it waits for none */
    if (s == OB_OK) s = ob_lock_bench(ob_store_path(store), b->id, 0, &b->fd, e);
    return ob_store_tx_end(store, s, e);
}

/* The plan: every cell not finished yet, into oc->jobs (*n_jobs); a
 * continued benchmark's finished ones are skipped (sum->skipped) and said. */
static ob_status plan_jobs(const ob_config *c, ob_store *store, const char *db_id, const bench_choice *b,
                           own_cells *oc, ob_run_summary *sum, int *n_jobs, ob_err *e)
{
    int n_cont = 0;
    *n_jobs = 0;
    for (int k = 0; k < oc->set.n; k++) {
        char status[32] = "pending";
        if (b->resumed) {
            OB_TRY(ob_store_run_status(store, oc->set.ids[k], status, sizeof status, e));
            if (ob_store_status_finished(status)) {
                /* a process killed between recording the result and deleting
                 * the checkpoints leaves them behind: they are of no use now */
                ob_run_remove_run_files(c, ob_store_path(store), db_id, oc->set.ids[k]);
                sum->skipped++;
                continue;
            }
            n_cont += strcmp(status, "pending") != 0;
        }
        const ob_cell_set *set = &oc->set;
        oc->jobs[*n_jobs] = (job){set->cells[k], &set->specs[k], set->ids[k], *n_jobs, !strcmp(status, "failed")};
        (*n_jobs)++;
    }
    if (b->resumed)
        fprintf(stderr,
                "optbench: --resume: benchmark %lld: %d of %d cells finished before, %d to continue, "
                "%d to start\n", (long long)b->id, sum->skipped, oc->set.n, n_cont, *n_jobs - n_cont);
    return OB_OK;
}

ob_status ob_run_matrix(const ob_config *c, const ob_matrix *m, ob_device *dev, ob_store *store,
                        ob_run_summary *sum, ob_err *e)
{
    memset(sum, 0, sizeof *sum);
    char shard[64] = "";
    if (c->shard_n > 0) snprintf(shard, sizeof shard, "%d/%d", c->shard_k, c->shard_n);
    bench_choice b = {.id = 0, .fd = -1};
    matrix_ctx x;
    memset(&x, 0, sizeof x);
    pthread_mutex_init(&x.mu, NULL);
    char devices_desc[256] = "", run_device[600] = "", db_id[40] = "";
    own_cells oc;
    describe_devices(c, dev, devices_desc, sizeof devices_desc, run_device, sizeof run_device);
    ob_status s = own_cells_build(c, m, dev, run_device, &oc, e);
    if (s == OB_OK) s = choose_benchmark(c, m, dev, store, run_device, shard, &oc, &b, e);
    if (s == OB_OK) {
        sum->bench_id = b.id;
        s = ob_store_database_id(store, db_id, sizeof db_id, e);
    }
    int n_jobs = 0;
    if (s == OB_OK) s = plan_jobs(c, store, db_id, &b, &oc, sum, &n_jobs, e);
    if (s == OB_OK) {
        x.cfg = c;
        x.bench_id = b.id;
        x.db_path = ob_store_path(store);
        x.db_id = db_id;
        x.sum = sum;
        x.multi = c->n_devices > 0;
        s = ob_run_jobs(&x, dev, store, oc.jobs, n_jobs, m->cells, m->n, e);
    }
    if (s == OB_OK) s = ob_run_confirm_when_due(&x, m, dev, store, run_device, shard[0] != '\0', b.kept_confirm, e);
    /* finished when no cell is left to anyone */
    int open_runs = 0;
    if (s == OB_OK) s = ob_store_unfinished_runs(store, b.id, 0, &open_runs, e);
    if (s == OB_OK && open_runs == 0) s = ob_store_finish_benchmark(store, b.id, e);

    ob_unlock_bench(ob_store_path(store), b.id, b.fd);
    /* DB.ckpt (the locks, and the checkpoints unless --checkpoint-dir) goes
     * when no run left anything in it */
    char root[1100];
    snprintf(root, sizeof root, "%s.ckpt", ob_store_path(store));
    rmdir(root);
    pthread_mutex_destroy(&x.mu);
    free(x.deferred);
    free(x.dstate);
    free(x.downer);
    own_cells_free(&oc);
    return s;
}
