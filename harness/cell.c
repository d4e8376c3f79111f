/* harness/cell.c - a cell's run: the training loop (see run.h, run_int.h).
 *
 * Per cell: build the workload and optimizer, lay out the arenas, then train.
 * A step is train_step + ob_optim_step on the device, bracketed by timer
 * marks; its loss, grad norm and skip flag land in a device record. Every
 * OB_FLUSH_STEPS steps (and at each evaluation, checkpoint, stop and the end)
 * the records come to the host in one copy, the step times are read, the
 * guard's events and divergence are decided, and the batch goes to the store
 * in one transaction. Nothing is written per step.
 *
 * A checkpoint is written only right after a flush has been committed, so the
 * database always holds every curve point up to the newest checkpoint's step;
 * points after it (written before a kill) are deleted when the run resumes.
 * The checkpoint holds the parameter arena, every optimizer state blob
 * (ob_optim_state_blobs), the run loop's counters (first loss, bad-step
 * streak and its first step, last evaluation, wall time), the step times and
 * the steps at which each process segment began (section "segments"); the
 * losses of the steps before it come back from the database's curve, so the
 * summary statistics of a resumed run are those of the uninterrupted one.
 * Step times leave out a warm-up of OB_WARMUP_STEPS at the start of every
 * segment: the first steps of a resumed process are as cold as a new run's.
 * Data, noise and schedules are functions of (seed, step) and need nothing
 * saved.
 *
 * Data parallel (data_parallel: n): a worker holds n devices, one replica of
 * the cell's model and optimizer on each. Each replica computes its part of
 * the step's batch (ob_workload_def.create_replica), the gradients and losses
 * are summed over the replicas in place (the backend's group_sum: NCCL on
 * CUDA), and every replica then takes the same optimizer step on the same
 * sum, so they stay equal without exchanging parameters. Replica 0 is the
 * run: its records, evaluations, checkpoints and timer; the others follow.
 */
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

/* three timer marks per step, a flush's steps at most */
_Static_assert(3 * OB_FLUSH_STEPS <= OB_TIMER_SLOTS, "a flush's timer marks do not fit the backend's slots");
/* The events of one flush: the guard's, at most one a step (a skipped step
 * or spike) and one 'diverged' (which ends the flush), and the optimizer's
 * queue, which keeps up to OB_OPTIM_MAX_EVENTS (2 a step: a skipped step's
 * rollback and the guard's stop fit), so that no event is dropped. */
#define OB_FLUSH_EVENTS (OB_FLUSH_STEPS + 1 + OB_OPTIM_MAX_EVENTS)
_Static_assert(OB_OPTIM_MAX_EVENTS >= 2 * OB_FLUSH_STEPS + 1, "a flush's optimizer events could overflow its queue");


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ob_quantile_inplace(double *x, int64_t n, double q)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    int64_t hi = lo + 1 < n ? lo + 1 : lo;
    return x[lo] + (pos - (double)lo) * (x[hi] - x[lo]);
}

void ob_curve_summary(const double *loss, int64_t n, double *final_loss, double *best_loss)
{
    *final_loss = NAN;
    *best_loss = NAN;
    if (n <= 0) return;
    int64_t tail = n / 10 > 0 ? n / 10 : 1;
    double s = 0;
    int64_t cnt = 0;
    for (int64_t i = n - tail; i < n; i++)
        if (isfinite(loss[i])) {
            s += loss[i];
            cnt++;
        }
    if (cnt) *final_loss = s / (double)cnt;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(loss[i]) && (isnan(*best_loss) || loss[i] < *best_loss)) *best_loss = loss[i];
}

int ob_step_timed(int64_t i, const int64_t *seg, int n_seg)
{
    int64_t from = 0; /* the step done when i's segment began */
    for (int k = 0; k < n_seg && seg[k] <= i; k++) from = seg[k];
    return i - from >= OB_WARMUP_STEPS;
}

int ob_step_times_of(const double *step_ms, const double *opt_ms, int64_t n, const int64_t *seg, int n_seg,
                     ob_step_times *out)
{
    out->median = out->p90 = out->mean = out->opt_median = out->opt_mean = NAN;
    out->n_timed = 0;
    if (n <= 0 || !step_ms) return 0;
    double *tmp = malloc((size_t)n * sizeof *tmp), *otmp = malloc((size_t)n * sizeof *otmp);
    if (!tmp || !otmp) {
        free(tmp);
        free(otmp);
        return -1;
    }
    /* the mean, beside the quantiles: a step slow every k-th time (a sync,
     * a refresh) moves it and not the median; the optimizer's part over the
     * timed steps whose part is known */
    int64_t m = 0, mo = 0, from = 0;
    double sum = 0, osum = 0;
    for (int64_t i = 0, k = 0; i < n; i++) {
        while (k < n_seg && seg[k] <= i) from = seg[k++];
        if (i - from < OB_WARMUP_STEPS) continue; /* as ob_step_timed, in one pass */
        sum += tmp[m++] = step_ms[i];
        if (opt_ms && !isnan(opt_ms[i])) osum += otmp[mo++] = opt_ms[i];
    }
    out->n_timed = m;
    if (m > 0) {
        out->mean = sum / (double)m;
        out->median = ob_quantile_inplace(tmp, m, 0.5);
        out->p90 = ob_quantile_inplace(tmp, m, 0.9);
    }
    if (mo > 0) {
        out->opt_mean = osum / (double)mo;
        out->opt_median = ob_quantile_inplace(otmp, mo, 0.5);
    }
    free(tmp);
    free(otmp);
    return 0;
}

void ob_run_checkpoint_dir(const ob_config *c, const char *db_path, const char *db_id, int64_t run_id, char *buf,
                           size_t n)
{
    if (c->checkpoint_dir[0] && db_id[0])
        snprintf(buf, n, "%s/%s/run-%lld", c->checkpoint_dir, db_id, (long long)run_id);
    else if (c->checkpoint_dir[0]) snprintf(buf, n, "%s/run-%lld", c->checkpoint_dir, (long long)run_id);
    else snprintf(buf, n, "%s.ckpt/run-%lld", db_path, (long long)run_id);
}


/* What each replica of a cell owns: its workload (its part of the batch),
 * optimizer, layout and arenas on its device. A cell not split over replicas
 * has replica 0 alone; replica 0 holds the run's records, evaluations and
 * checkpoints. The optimizer and workload keep pointers to lay: a
 * replica_state is set up in place and never moved. */
typedef struct replica_state {
    ob_workload *wl;
    ob_optim *opt;
    ob_layout lay;
    float *params, *grads, *loss_dev;
    ob_step_record *rec_dev;
} replica_state;

/* Everything a cell owns; freed in one place whatever happened. */
typedef struct cell_state {
    double *losses, *step_ms;
    double *opt_ms; /* the optimizer's part of each step (NaN for steps before a
                     * resume from a checkpoint that does not hold it) */
    int64_t *seg;   /* the steps done when each process segment of the run began:
                     * 0, then each resume's step (NULL, n_seg 0: one segment from 0) */
    int n_seg;
    ob_curve_point *pts;
    ob_event *events;
    char (*event_text)[160];
    int n_events;
    int n_rep; /* rep[0 .. n_rep) are (being) set up */
    replica_state rep[OB_CFG_MAX_REPLICAS];
} cell_state;

static void replica_free(ob_device *dev, replica_state *r)
{
    if (r->wl) r->wl->vt->destroy(r->wl);
    ob_optim_destroy(r->opt);
    ob_layout_free(&r->lay);
    ob_dev_free(dev, r->params);
    ob_dev_free(dev, r->grads);
    ob_dev_free(dev, r->loss_dev);
    ob_dev_free(dev, r->rec_dev);
}


static void cell_free(const replicas *rp, cell_state *cs)
{
    /* the other replicas first, replica 0's device current at the end */
    for (int r = cs->n_rep - 1; r >= 0; r--) {
        ob_err e;
        (void)ob_run_use_replica(rp, r, &e);
        replica_free(rp->dev[r], &cs->rep[r]);
    }
    free(cs->losses);
    free(cs->step_ms);
    free(cs->opt_ms);
    free(cs->seg);
    free(cs->pts);
    free(cs->events);
    free(cs->event_text);
    memset(cs, 0, sizeof *cs);
}

static void add_event(cell_state *cs, int64_t step, const char *kind, const char *fmt, ...)
    OB_PRINTF(4, 5);

static void add_event(cell_state *cs, int64_t step, const char *kind, const char *fmt, ...)
{
    if (cs->n_events >= OB_FLUSH_EVENTS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs->event_text[cs->n_events], sizeof cs->event_text[0], fmt, ap);
    va_end(ap);
    cs->events[cs->n_events].step = step;
    cs->events[cs->n_events].kind = kind;
    cs->events[cs->n_events].detail = cs->event_text[cs->n_events];
    cs->n_events++;
}

/* A step the spike guard skipped (flags: OB_SPIKE_* bits). */
static void add_spike_event(cell_state *cs, int64_t step, int flags, const ob_step_record *r,
                            const ob_hp_values *train)
{
    char what[200] = "";
    size_t l = 0;
    if (flags & OB_SPIKE_LOSS)
        l += (size_t)snprintf(what + l, sizeof what - l, "loss %.6g (z = %.3g > %g)", (double)r->loss,
                              (double)r->spike_z[0], ob_hp_get(train, "spike_z_loss"));
    if (flags & OB_SPIKE_GRAD)
        snprintf(what + l, sizeof what - l, "%sgradient norm %.6g (z = %.3g > %g)", l ? ", " : "",
                 (double)r->grad_norm, (double)r->spike_z[1], ob_hp_get(train, "spike_z_grad"));
    add_event(cs, step, "spike_skipped",
              "%s, scored against the last %.0f finite steps; update skipped", what,
              ob_hp_get(train, "spike_window"));
}

/* The run loop's own state that a checkpoint carries (section "run"). */
typedef struct run_state {
    double first_loss;
    int64_t bad_streak;
    int64_t have_eval;
    double eval_loss, eval_metric, eval_floor;
    double wall_s;
    int64_t bad_from; /* the first step of the bad-step streak (0: none, or a
                       * checkpoint of an older optbench, which did not say) */
} run_state;


/* Evaluate and append one eval point; NaN metrics when the workload fails to. */
static ob_status eval_now(cell_state *cs, int64_t step, ob_eval *ev, ob_eval_point *pt, ob_err *e)
{
    float *at = cs->rep[0].params; /* or the optimizer's own evaluation point (schedule-free's average) */
    if (cs->rep[0].opt) OB_TRY(ob_optim_eval_params(cs->rep[0].opt, cs->rep[0].params, &at, e));
    OB_TRY(cs->rep[0].wl->vt->evaluate(cs->rep[0].wl, at, ev, e));
    pt->step = step;
    pt->loss = ev->loss;
    pt->metric = ev->metric;
    return OB_OK;
}

/* The identity of a run as a checkpoint records it: a checkpoint is only
 * used by the run it was written for, in the same database (its
 * ob_store_database_id), whatever its cell's index (a matrix that grew, or
 * lists its cells in another order, renumbers them). variant 0: this build's
 * text; 1 (legacy): the text of an optbench from before 2026-12-05, which
 * named the cell and no database; 2: this build's without the first study's
 * "search" key, the text of a run a search of one study wrote before it grew
 * to several (ob_store_grow names the study of such a run). */
static void spec_text(const matrix_ctx *x, const job *j, int variant, char *buf, size_t n)
{
    const ob_run_spec *r = j->spec;
    const int legacy = variant == 1;
    char who[96], hp[OB_SPEC_OPT_JSON] = "";
    const char *study0 = ",\"search\":" OB_STORE_STUDY0 "}";
    const size_t lh = r->hparams ? strlen(r->hparams) : 0, ls = strlen(study0);
    if (variant == 2 && lh > ls && lh < sizeof hp && !strcmp(r->hparams + lh - ls, study0)) {
        memcpy(hp, r->hparams, lh - ls);
        hp[lh - ls] = '}';
        hp[lh - ls + 1] = '\0';
    } else if (lh < sizeof hp) {
        if (r->hparams) memcpy(hp, r->hparams, lh + 1);
    }
    if (legacy)
        snprintf(who, sizeof who, "benchmark=%lld run=%lld cell=%lld", (long long)x->bench_id, (long long)j->run_id,
                 (long long)r->cell);
    else
        snprintf(who, sizeof who, "database=%s benchmark=%lld run=%lld", x->db_id, (long long)x->bench_id,
                 (long long)j->run_id);
    snprintf(buf, n,
             "optbench run checkpoint\n%s\nworkload=%s\n"
             "workload_params=%s\noptimizer=%s\nhparams=%s\nlr=%a seed=%lld steps=%lld\n",
             who, r->workload, r->workload_params ? r->workload_params : "", r->optimizer, hp, r->lr,
             (long long)r->seed, (long long)r->steps);
}

/* The tensor table, so that a checkpoint of another layout is refused. */
static char *layout_text(const ob_layout *l)
{
    size_t cap = 64 + (size_t)l->n * (OB_NAME_MAX + 160), len = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
    len += (size_t)snprintf(b + len, cap - len, "total=%lld groups=%d\n", (long long)l->total, l->n_groups);
    for (int i = 0; i < l->n; i++) {
        const ob_tensor *t = &l->t[i];
        len += (size_t)snprintf(b + len, cap - len, "%s tag=%d group=%d offset=%lld shape=", t->name,
                                (int)t->tag, t->group, (long long)t->offset);
        for (int d = 0; d < t->ndim; d++)
            len += (size_t)snprintf(b + len, cap - len, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
        len += (size_t)snprintf(b + len, cap - len, "\n");
    }
    return b;
}

#define MAX_BLOBS 200

/* Write the checkpoint of a cell after `step` steps. */
static ob_status write_checkpoint(const matrix_ctx *x, const job *j, ob_device *dev, cell_state *cs,
                                  int64_t step, const run_state *rs, const char *dir, ob_err *e)
{
    ob_state_blob blobs[MAX_BLOBS];
    int nb = ob_optim_state_blobs(cs->rep[0].opt, blobs, MAX_BLOBS);
    if (nb > MAX_BLOBS || nb + 8 > OB_CKPT_MAX_SECTIONS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%d optimizer state blobs; checkpoints hold %d", nb,
                                MAX_BLOBS);
    ob_ckpt_section sec[OB_CKPT_MAX_SECTIONS];
    void *host[MAX_BLOBS + 1] = {0};
    char spec[8192];
    spec_text(x, j, 0, spec, sizeof spec);
    char *lay = layout_text(&cs->rep[0].lay);
    ob_status s = lay ? OB_OK : ob_fail(e, OB_ERR_NOMEM, "out of memory for a checkpoint");
    int n = 0;
    size_t pbytes = (size_t)cs->rep[0].lay.total * sizeof(float);
    if (s == OB_OK && !(host[0] = malloc(pbytes ? pbytes : 1)))
        s = ob_fail(e, OB_ERR_NOMEM, "out of memory for a checkpoint");
    if (s == OB_OK) s = dev->ops->download(dev, host[0], cs->rep[0].params, pbytes, e);
    if (s == OB_OK) {
        sec[n++] = (ob_ckpt_section){"spec", spec, strlen(spec)};
        sec[n++] = (ob_ckpt_section){"layout", lay, strlen(lay)};
        sec[n++] = (ob_ckpt_section){"backend", dev->ops->name, strlen(dev->ops->name)};
        sec[n++] = (ob_ckpt_section){"run", rs, sizeof *rs};
        sec[n++] = (ob_ckpt_section){"step_ms", cs->step_ms, (uint64_t)step * sizeof(double)};
        sec[n++] = (ob_ckpt_section){"opt_ms", cs->opt_ms, (uint64_t)step * sizeof(double)};
        static const int64_t one_segment = 0;
        sec[n++] = cs->n_seg > 0 ? (ob_ckpt_section){"segments", cs->seg, (uint64_t)cs->n_seg * sizeof(int64_t)}
                                 : (ob_ckpt_section){"segments", &one_segment, sizeof(int64_t)};
        sec[n++] = (ob_ckpt_section){"params", host[0], pbytes};
    }
    for (int i = 0; i < nb && s == OB_OK; i++) {
        ob_ckpt_section *q = &sec[n++];
        snprintf(q->name, sizeof q->name, "opt.%.47s", blobs[i].name);
        q->bytes = blobs[i].bytes;
        if (!blobs[i].on_device) {
            q->data = blobs[i].ptr;
            continue;
        }
        if (!(host[i + 1] = malloc(blobs[i].bytes ? blobs[i].bytes : 1))) {
            s = ob_fail(e, OB_ERR_NOMEM, "out of memory for a checkpoint");
            break;
        }
        s = dev->ops->download(dev, host[i + 1], blobs[i].ptr, blobs[i].bytes, e);
        q->data = host[i + 1];
    }
    if (s == OB_OK) s = ob_ckpt_write(dir, step, sec, n, x->cfg->checkpoint_keep, e);
    for (int i = 0; i <= nb; i++) free(host[i]);
    free(lay);
    return s;
}

/* Are checkpoint c's process segments' starts well formed: 0 first,
 * ascending, before its step? (A checkpoint of an older optbench has none:
 * one segment from 0.) */
static int ckpt_segments_ok(const ob_ckpt *c)
{
    const ob_ckpt_section *s = ob_ckpt_find(c, "segments");
    if (!s) return 1;
    const uint64_t ns = s->bytes / sizeof(int64_t);
    int ok = s->bytes % sizeof(int64_t) == 0 && ns >= 1 && ns <= (uint64_t)c->step && ns < INT32_MAX;
    int64_t prev = -1;
    for (uint64_t k = 0; ok && k < ns; k++) {
        int64_t v;
        memcpy(&v, (const unsigned char *)s->data + k * sizeof v, sizeof v);
        ok = (k == 0 ? v == 0 : v > prev) && v < c->step;
        prev = v;
    }
    return ok;
}

/* Does checkpoint c hold the optimizer's state blobs, each of its size? An
 * optional blob (host state that rebuilds from zeros) may be absent: a
 * checkpoint of an older optbench. Fills why when not. */
static int ckpt_blobs_ok(const ob_ckpt *c, const ob_state_blob *blobs, int nb, char *why, size_t wn)
{
    int n_opt = 0, n_have = nb;
    for (int i = 0; i < c->n; i++) n_opt += !strncmp(c->sec[i].name, "opt.", 4);
    for (int i = 0; i < nb; i++) {
        char name[OB_CKPT_NAME_MAX];
        snprintf(name, sizeof name, "opt.%.47s", blobs[i].name);
        n_have -= blobs[i].optional && !ob_ckpt_find(c, name);
    }
    if (n_opt != n_have) {
        snprintf(why, wn, "it holds %d optimizer state blobs, this optimizer has %d", n_opt, nb);
        return 0;
    }
    for (int i = 0; i < nb; i++) {
        char name[OB_CKPT_NAME_MAX];
        snprintf(name, sizeof name, "opt.%.47s", blobs[i].name);
        const ob_ckpt_section *s = ob_ckpt_find(c, name);
        if (!s && blobs[i].optional) continue;
        if (!s || s->bytes != blobs[i].bytes) {
            snprintf(why, wn, "optimizer state '%.47s' is missing or has another size", blobs[i].name);
            return 0;
        }
    }
    return 1;
}

/* Are checkpoint c's counters within what c->step steps can make? (A file
 * with a valid checksum but made by hand, or by a bug, would overflow or
 * rewind them.) Its "run" section has the right size (ckpt_matches). */
static int ckpt_counters_ok(const ob_ckpt *c)
{
    run_state rs;
    memcpy(&rs, ob_ckpt_find(c, "run")->data, sizeof rs);
    int64_t t = 0;
    const ob_ckpt_section *s = ob_ckpt_find(c, "opt.optim.t");
    if (!s || s->bytes != sizeof t) return 0;
    memcpy(&t, s->data, sizeof t);
    return t >= 0 && t <= c->step && rs.bad_streak >= 0 && rs.bad_streak <= c->step && rs.bad_from >= 0 &&
           rs.bad_from <= c->step && rs.wall_s >= 0 && isfinite(rs.wall_s);
}

/* Is checkpoint c usable by this cell? Fills why when not. */
static int ckpt_matches(const matrix_ctx *x, const job *j, cell_state *cs, const ob_ckpt *c,
                        ob_state_blob *blobs, int nb, char *why, size_t wn)
{
    char spec[8192];
    const ob_ckpt_section *s = ob_ckpt_find(c, "spec");
    int same = 0;
    for (int variant = 0; variant < 3 && !same && s; variant++) {
        spec_text(x, j, variant, spec, sizeof spec);
        same = s->bytes == strlen(spec) && memcmp(s->data, spec, s->bytes) == 0;
    }
    if (!same) {
        snprintf(why, wn, "it was written for another run or configuration");
        return 0;
    }
    char *lay = layout_text(&cs->rep[0].lay);
    s = ob_ckpt_find(c, "layout");
    int ok = lay && s && s->bytes == strlen(lay) && memcmp(s->data, lay, s->bytes) == 0;
    free(lay);
    if (!ok) {
        snprintf(why, wn, "its parameter layout differs from this build's");
        return 0;
    }
    if (c->step < 1 || c->step >= x->cfg->steps) {
        snprintf(why, wn, "its step %lld is outside 1..%lld", (long long)c->step, (long long)x->cfg->steps - 1);
        return 0;
    }
    s = ob_ckpt_find(c, "run");
    const ob_ckpt_section *ms = ob_ckpt_find(c, "step_ms"), *ps = ob_ckpt_find(c, "params");
    if (!s || s->bytes != sizeof(run_state) || !ms || ms->bytes != (uint64_t)c->step * sizeof(double) || !ps ||
        ps->bytes != (uint64_t)cs->rep[0].lay.total * sizeof(float)) {
        snprintf(why, wn, "a section is missing or has the wrong size");
        return 0;
    }
    if (!ckpt_segments_ok(c)) {
        snprintf(why, wn, "its process segments are malformed");
        return 0;
    }
    if (!ckpt_blobs_ok(c, blobs, nb, why, wn)) return 0;
    if (!ckpt_counters_ok(c)) {
        snprintf(why, wn, "its counters are out of range for step %lld", (long long)c->step);
        return 0;
    }
    return 1;
}

/* Restore parameters, optimizer state (blobs), run state, step and
 * optimizer times and the process segments from checkpoint c, which
 * ckpt_matches accepted. */
static ob_status ckpt_apply(ob_device *dev, cell_state *cs, const ob_ckpt *c, ob_state_blob *blobs, int nb,
                            run_state *rs, ob_err *e)
{
    const ob_ckpt_section *ps = ob_ckpt_find(c, "params");
    OB_TRY(dev->ops->upload(dev, cs->rep[0].params, ps->data, (size_t)ps->bytes, e));
    for (int k = 0; k < nb; k++) {
        char name[OB_CKPT_NAME_MAX];
        snprintf(name, sizeof name, "opt.%.47s", blobs[k].name);
        const ob_ckpt_section *b = ob_ckpt_find(c, name);
        if (!b) memset(blobs[k].ptr, 0, blobs[k].bytes); /* optional, host (ckpt_matches) */
        else if (blobs[k].on_device) OB_TRY(dev->ops->upload(dev, blobs[k].ptr, b->data, blobs[k].bytes, e));
        else memcpy(blobs[k].ptr, b->data, blobs[k].bytes);
    }
    /* the segments so far (checked by ckpt_matches; an older checkpoint:
     * one from 0), and this process's from c->step */
    const ob_ckpt_section *sg = ob_ckpt_find(c, "segments");
    const int ns = sg ? (int)(sg->bytes / sizeof(int64_t)) : 1;
    int64_t *seg = malloc(((size_t)ns + 1) * sizeof *seg);
    if (!seg) return ob_fail(e, OB_ERR_NOMEM, "out of memory resuming from a checkpoint");
    if (sg) memcpy(seg, sg->data, (size_t)ns * sizeof *seg);
    else seg[0] = 0;
    seg[ns] = c->step;
    free(cs->seg);
    cs->seg = seg;
    cs->n_seg = ns + 1;
    memcpy(rs, ob_ckpt_find(c, "run")->data, sizeof *rs);
    memcpy(cs->step_ms, ob_ckpt_find(c, "step_ms")->data, (size_t)c->step * sizeof(double));
    /* a checkpoint of an older optbench has no optimizer times: unknown */
    const ob_ckpt_section *om = ob_ckpt_find(c, "opt_ms");
    if (om && om->bytes == (uint64_t)c->step * sizeof(double))
        memcpy(cs->opt_ms, om->data, (size_t)c->step * sizeof(double));
    else
        for (int64_t t = 0; t < c->step; t++) cs->opt_ms[t] = NAN;
    return OB_OK;
}

/* Continue from the newest usable checkpoint: restores parameters, optimizer
 * state, run state, step times and (from the store) the losses. *from gets
 * the step (0: none usable; the cell starts over). */
static ob_status restore_checkpoint(const matrix_ctx *x, const job *j, ob_device *dev, ob_store *store,
                                    cell_state *cs, const char *dir, run_state *rs, int64_t *from,
                                    ob_err *e, ob_err *store_err, ob_status *sst)
{
    *from = 0;
    int64_t steps[64];
    int n = 0;
    /* a folder it cannot list fails the run (kept, with its checkpoints, for
     * the next --resume), never "none": that would drop its curve */
    OB_TRY(ob_ckpt_list(dir, steps, 64, &n, e));
    ob_state_blob blobs[MAX_BLOBS];
    int nb = ob_optim_state_blobs(cs->rep[0].opt, blobs, MAX_BLOBS);
    if (nb > MAX_BLOBS) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%d optimizer state blobs", nb);
    for (int i = 0; i < n; i++) {
        char path[1200], why[600];
        ob_ckpt_path(dir, steps[i], path, sizeof path);
        ob_ckpt c;
        ob_err ce;
        ob_err_clear(&ce);
        const ob_status rs_read = ob_ckpt_read(path, &c, &ce);
        /* one that cannot be read (not one that is damaged) fails the run as
         * a folder that cannot be listed does: skipping it could start the run
         * over and drop its curve */
        if (rs_read == OB_ERR_IO || rs_read == OB_ERR_NOMEM)
            return ob_fail(e, rs_read, "%s (the run's checkpoints and curve are kept: once it can be read, run "
                           "the same command with --resume)", ce.msg);
        if (rs_read != OB_OK) {
            fprintf(stderr, "optbench: run %lld: skipping %s\n", (long long)j->run_id, ce.msg);
            continue;
        }
        if (!ckpt_matches(x, j, cs, &c, blobs, nb, why, sizeof why)) {
            fprintf(stderr, "optbench: run %lld: skipping checkpoint '%s': %s\n", (long long)j->run_id, path, why);
            ob_ckpt_free(&c);
            continue;
        }
        int64_t have = 0;
        if ((*sst = ob_store_read_losses(store, j->run_id, c.step, cs->losses, &have, store_err)) != OB_OK) {
            ob_ckpt_free(&c);
            return OB_OK;
        }
        if (have != c.step) {
            fprintf(stderr,
                    "optbench: run %lld: skipping checkpoint '%s': the database holds the curve only up "
                    "to step %lld\n", (long long)j->run_id, path, (long long)have);
            ob_ckpt_free(&c);
            continue;
        }
        const ob_ckpt_section *be = ob_ckpt_find(&c, "backend");
        if (be && (be->bytes != strlen(dev->ops->name) || memcmp(be->data, dev->ops->name, be->bytes)))
            fprintf(stderr,
                    "optbench: note: run %lld: resuming on %s from a checkpoint of another backend; the "
                    "rest of the curve is not bit for bit what the other backend gives\n",
                    (long long)j->run_id, dev->ops->name);
        ob_status s = ckpt_apply(dev, cs, &c, blobs, nb, rs, e);
        if (s == OB_OK) *from = c.step;
        ob_ckpt_free(&c);
        return s;
    }
    return OB_OK;
}

static ob_status dump_params(const ob_config *c, const ob_cell *cell, ob_device *dev, cell_state *cs,
                             ob_err *e)
{
    OB_TRY(ob_mkdir_p(c->dump_params, e));
    size_t bytes = (size_t)cs->rep[0].lay.total * sizeof(float);
    float *h = malloc(bytes ? bytes : 1);
    if (!h) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    ob_status s = dev->ops->download(dev, h, cs->rep[0].params, bytes, e);
    char path[1200];
    snprintf(path, sizeof path, "%s/cell-%lld.f32", c->dump_params, (long long)cell->index);
    if (s == OB_OK) {
        errno = 0;
        FILE *f = fopen(path, "wb");
        int bad = !f || fwrite(h, 1, bytes, f) != bytes;
        if (f && fclose(f) != 0) bad = 1;
        if (bad)
            s = ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", path, errno ? strerror(errno) : "a short write");
    }
    free(h);
    return s;
}

/* Replica r of the cell, set up in place in *q: its workload (the whole
 * batch when the cell is not split, else its part), optimizer and arenas on
 * its device, parameters initialised from the cell's seed (the same on
 * every replica). */
static ob_status replica_setup(const ob_cell *cell, const replicas *rp, int r, replica_state *q, int64_t steps,
                               ob_err *e)
{
    ob_device *dev = rp->dev[r];
    OB_TRY(ob_run_use_replica(rp, r, e));
    ob_layout_init(&q->lay);
    if (rp->n > 1)
        OB_TRY(cell->wl->create_replica(cell->wl, &cell->wl_hp, dev, (uint64_t)cell->seed, r, rp->n, &q->wl, e));
    else
        OB_TRY(cell->wl->create(cell->wl, &cell->wl_hp, dev, (uint64_t)cell->seed, &q->wl, e));
    OB_TRY(q->wl->vt->describe(q->wl, &q->lay, e));
    OB_TRY(ob_cell_make_optim(cell, &q->opt, e));
    OB_TRY(ob_optim_route(q->opt, &q->lay, e));
    OB_TRY(ob_layout_finalize(&q->lay, e));
    size_t arena = (size_t)q->lay.total * sizeof(float);
    OB_TRY(ob_dev_alloc(dev, arena, (void **)&q->params, e));
    OB_TRY(ob_dev_alloc(dev, arena, (void **)&q->grads, e));
    OB_TRY(ob_dev_alloc(dev, OB_FLUSH_STEPS * sizeof(float), (void **)&q->loss_dev, e));
    OB_TRY(ob_dev_alloc(dev, OB_FLUSH_STEPS * sizeof(ob_step_record), (void **)&q->rec_dev, e));
    OB_TRY(q->wl->vt->setup(q->wl, &q->lay, e));
    OB_TRY(ob_optim_setup(q->opt, dev, &q->lay, e));
    ob_optim_set_total_steps(q->opt, steps);
    return q->wl->vt->init_params(q->wl, q->params, e);
}

/* After a checkpoint was restored into replica 0: its parameters and
 * optimizer state to the other replicas, through the host. */
static ob_status replicas_copy_state(const replicas *rp, cell_state *cs, ob_err *e)
{
    ob_device *d0 = rp->dev[0];
    ob_state_blob b0[MAX_BLOBS];
    int nb = ob_optim_state_blobs(cs->rep[0].opt, b0, MAX_BLOBS);
    if (nb > MAX_BLOBS) return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "%d optimizer state blobs", nb);
    size_t most = (size_t)cs->rep[0].lay.total * sizeof(float);
    for (int k = 0; k < nb; k++)
        if (b0[k].on_device && b0[k].bytes > most) most = b0[k].bytes;
    void *host = malloc(most ? most : 1);
    if (!host) return ob_fail(e, OB_ERR_NOMEM, "out of host memory");
    ob_status s = OB_OK;
    for (int r = 1; r < rp->n && s == OB_OK; r++) {
        replica_state *q = &cs->rep[r];
        ob_device *d = rp->dev[r];
        ob_state_blob br[MAX_BLOBS];
        int nr = ob_optim_state_blobs(q->opt, br, MAX_BLOBS);
        if (nr != nb) {
            s = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "replica %d has %d state blobs, replica 0 %d", r, nr, nb);
            break;
        }
        size_t pbytes = (size_t)cs->rep[0].lay.total * sizeof(float);
        if ((s = ob_run_use_replica(rp, 0, e)) == OB_OK &&
            (s = d0->ops->download(d0, host, cs->rep[0].params, pbytes, e)) == OB_OK &&
            (s = ob_run_use_replica(rp, r, e)) == OB_OK)
            s = d->ops->upload(d, q->params, host, pbytes, e);
        for (int k = 0; k < nb && s == OB_OK; k++) {
            if (br[k].bytes != b0[k].bytes) {
                s = OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "replica %d: state blob %s differs in size", r, b0[k].name);
                break;
            }
            if (!b0[k].on_device) {
                memcpy(br[k].ptr, b0[k].ptr, b0[k].bytes);
                continue;
            }
            if ((s = ob_run_use_replica(rp, 0, e)) == OB_OK && (s = d0->ops->download(d0, host, b0[k].ptr, b0[k].bytes, e)) == OB_OK &&
                (s = ob_run_use_replica(rp, r, e)) == OB_OK)
                s = d->ops->upload(d, br[k].ptr, host, br[k].bytes, e);
        }
        if (s == OB_OK) s = d->ops->sync(d, e); /* host is reused */
    }
    free(host);
    ob_err e0;
    ob_err_clear(&e0);
    ob_status s0 = ob_run_use_replica(rp, 0, s == OB_OK ? e : &e0);
    return s != OB_OK ? s : s0;
}

/* One step's gradients and loss (slot k) summed over the replicas. */
static ob_status replicas_sum(const replicas *rp, cell_state *cs, int k, ob_err *e)
{
    float *g[OB_CFG_MAX_REPLICAS], *l[OB_CFG_MAX_REPLICAS];
    for (int r = 0; r < rp->n; r++) {
        g[r] = cs->rep[r].grads;
        l[r] = cs->rep[r].loss_dev + k;
    }
    const ob_backend_ops *ops = rp->dev[0]->ops;
    OB_TRY(ops->group_sum(rp->group, rp->dev, rp->n, g, cs->rep[0].lay.total, e));
    return ops->group_sum(rp->group, rp->dev, rp->n, l, 1, e);
}

/* A cell being trained, as the parts of ob_run_cell share it: what it runs
 * with, what it owns (cs), and the run loop's counters, which a checkpoint
 * carries (run_state) and its result is made of. */
typedef struct cell_run {
    matrix_ctx *x;
    const job *j;
    const replicas *rp;
    ob_store *store;
    const char *ckdir;        /* its checkpoints */
    const char *ckdir_before; /* those of the process it was taken over from ("": none) */
    int after_failure;        /* an earlier process's run of it failed: it is run again */
    char error_before[512];   /* that run's error ("": none recorded) */
    /* the guard's settings (the cell's train_hp) */
    double diverge_factor;
    int no_guard; /* on_nonfinite none */
    int64_t max_bad;
    cell_state cs;
    int64_t start;         /* the checkpoint's step it continues from (0: from the start) */
    int64_t done;          /* steps whose records came to the host */
    int64_t diverged_step; /* -1 while it has not diverged */
    int64_t bad_streak, bad_from;
    double first_loss;
    ob_eval last_eval;
    int have_eval;
    double t_start;     /* this process's start on the cell */
    double wall_before; /* the wall time of the processes before it */
    int before_gone;    /* ckdir_before removed: ckdir holds a newer checkpoint */
    int64_t drv_peak;   /* device memory in use as the driver reports it; -1: unknown */
    ob_status sst;      /* a store failure: it ends the matrix (store_err says why) */
    ob_err *store_err;
} cell_run;

/* A store call in a part of ob_run_cell: its failure is ob_run_cell's to return
 * (it ends the matrix) and ends the part, whose own status stays OB_OK: the
 * run itself did not fail. */
#define CELL_STORE(cr, call)                             \
    do {                                                 \
        if (((cr)->sst = (call)) != OB_OK) return OB_OK; \
    } while (0)


/* The error of the earlier process's run that failed (what it says when none
 * was recorded), NULL when the cell is not run again after a failure. */
static const char *failed_before(const cell_run *cr)
{
    if (!cr->after_failure) return NULL;
    return cr->error_before[0] ? cr->error_before : "no error recorded";
}

/* The cell's replicas, each on its device, and the host buffers of its
 * curve and of a flush's points and events. */
static ob_status cell_setup(cell_run *cr, ob_err *e)
{
    const ob_cell *cell = cr->j->cell;
    const replicas *rp = cr->rp;
    const int64_t steps = cr->x->cfg->steps;
    cell_state *cs = &cr->cs;
    if (rp->n > 1 && !cell->wl->create_replica)
        return ob_fail(e, OB_ERR_INPUT, "%s has no batch to split over data-parallel replicas; run it with "
                       "data_parallel: 1", cell->wl->name);
    for (int r = 0; r < rp->n; r++) {
        cs->n_rep = r + 1; /* cell_free frees a replica set up half way too */
        OB_TRY(replica_setup(cell, rp, r, &cs->rep[r], steps, e));
    }
    OB_TRY(ob_run_use_replica(rp, 0, e));

    cs->losses = malloc((size_t)steps * sizeof *cs->losses);
    cs->step_ms = malloc((size_t)steps * sizeof *cs->step_ms);
    cs->opt_ms = malloc((size_t)steps * sizeof *cs->opt_ms);
    cs->pts = malloc(OB_FLUSH_STEPS * sizeof *cs->pts);
    cs->events = malloc(OB_FLUSH_EVENTS * sizeof *cs->events);
    cs->event_text = malloc(OB_FLUSH_EVENTS * sizeof *cs->event_text);
    if (!cs->losses || !cs->step_ms || !cs->opt_ms || !cs->pts || !cs->events || !cs->event_text)
        return ob_fail(e, OB_ERR_NOMEM, "out of memory for the curve of %lld steps", (long long)steps);
    return OB_OK;
}

/* A cell begun before: continued from its newest usable checkpoint, with
 * the run loop's counters, in its own folder or else in that of the process
 * it was taken over from (kept elsewhere, by another --checkpoint-dir: its
 * newest one is as good); with none usable it starts over, which is said.
 * *resumed_from as ob_run_cell's. */
static ob_status cell_restore(cell_run *cr, int *resumed_from, ob_err *e)
{
    const replicas *rp = cr->rp;
    run_state rs;
    OB_TRY(restore_checkpoint(cr->x, cr->j, rp->dev[0], cr->store, &cr->cs, cr->ckdir, &rs, &cr->start, e,
                              cr->store_err, &cr->sst));
    if (cr->sst != OB_OK) return OB_OK;
    if (cr->start == 0 && cr->ckdir_before[0]) {
        OB_TRY(restore_checkpoint(cr->x, cr->j, rp->dev[0], cr->store, &cr->cs, cr->ckdir_before, &rs, &cr->start,
                                  e, cr->store_err, &cr->sst));
        if (cr->sst != OB_OK) return OB_OK;
    }
    const int64_t start = cr->start;
    const char *failed = failed_before(cr);
    if (start == 0) {
        if (failed)
            fprintf(stderr, "optbench: run %lld failed before (%s): running it again from the start (no usable "
                            "checkpoint in %s%s%s)\n", (long long)cr->j->run_id,
                    failed, cr->ckdir,
                    cr->ckdir_before[0] ? " or " : "", cr->ckdir_before);
        else
            fprintf(stderr, "optbench: run %lld: no usable checkpoint (in %s%s%s): starting it over\n",
                    (long long)cr->j->run_id, cr->ckdir, cr->ckdir_before[0] ? " or " : "", cr->ckdir_before);
        *resumed_from = -1;
        return OB_OK;
    }
    if (failed)
        fprintf(stderr, "optbench: run %lld failed before (%s): running it again from its checkpoint at step "
                        "%lld\n", (long long)cr->j->run_id,
                failed, (long long)start);
    cr->done = start;
    cr->first_loss = rs.first_loss;
    cr->bad_streak = rs.bad_streak;
    /* an older checkpoint: the streak as if it had no spike within it */
    cr->bad_from = rs.bad_from > 0 || cr->bad_streak == 0 ? rs.bad_from : start - cr->bad_streak + 1;
    cr->have_eval = rs.have_eval != 0;
    cr->last_eval = (ob_eval){rs.eval_loss, rs.eval_metric, rs.eval_floor};
    cr->wall_before = rs.wall_s;
    *resumed_from = (int)(start < INT32_MAX ? start : INT32_MAX);
    if (rp->n > 1) OB_TRY(replicas_copy_state(rp, &cr->cs, e));
    return OB_OK;
}

/* The run's record says it was stopped and continued here (AlgoPerf counts a
 * run's preemptions too): an event at the checkpoint's step, or at step 0
 * when it starts over (stopped before it had a checkpoint, or every one was
 * damaged: its steps are done again). A run that failed in an earlier
 * process (error_before, its error) is run again: the event keeps that
 * error, which the run's new result replaces. A store status. */
static ob_status store_continuation(ob_store *store, int64_t run_id, int64_t start, const char *host,
                                    const char *error_before, ob_err *store_err)
{
    char what[800], why[560] = "";
    if (error_before) snprintf(why, sizeof why, "run again after it failed (%s): ", error_before);
    if (start > 0) {
        snprintf(what, sizeof what, "%scontinued from its checkpoint at step %lld (process %ld on %s)", why,
                 (long long)start, (long)getpid(), host);
        const ob_event ev = {.step = start, .kind = "resumed", .detail = what};
        return ob_store_append(store, run_id, NULL, 0, NULL, 0, &ev, 1, store_err);
    }
    snprintf(what, sizeof what, "%sstarted over: %s (process %ld on %s)", why,
             error_before ? "no usable checkpoint" : "stopped without a usable checkpoint", (long)getpid(), host);
    const ob_event ev = {.step = 0, .kind = "restarted", .detail = what};
    return ob_store_append(store, run_id, NULL, 0, NULL, 0, &ev, 1, store_err);
}

/* The cell's start in the store: a new run started, or one begun before
 * continued from its checkpoint or started over; which build and machine
 * run it; the evaluation at step 0 of a run that starts from it. */
static ob_status cell_begin(cell_run *cr, int continuing, int *resumed_from, ob_err *e)
{
    const int64_t run_id = cr->j->run_id;
    /* the machine running it now: its runs record it (the provenance below, a resume's event) */
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    if (continuing) {
        if (cr->after_failure) /* read before the resume clears it */
            CELL_STORE(cr, ob_store_run_error(cr->store, run_id, cr->error_before, sizeof cr->error_before,
                                              cr->store_err));
        OB_TRY(cell_restore(cr, resumed_from, e));
        if (cr->sst != OB_OK) return OB_OK;
        /* Curve points, evaluations and events after the checkpoint go, in one
         * transaction (all of them when the cell starts over). */
        CELL_STORE(cr, ob_store_resume_run(cr->store, run_id, cr->start > 0 ? cr->start : -1, cr->store_err));
        CELL_STORE(cr, store_continuation(cr->store, run_id, cr->start, host, failed_before(cr), cr->store_err));
    } else {
        CELL_STORE(cr, ob_store_run_started(cr->store, run_id, cr->store_err));
    }
    /* which build and machine ran it (a benchmark continued or grown
     * elsewhere holds runs of several: the report tells them apart) */
    CELL_STORE(cr, ob_store_run_provenance(cr->store, run_id, OB_GIT_REV, host, continuing && cr->start > 0,
                                           cr->store_err));
    if (cr->x->cfg->eval_every > 0 && cr->start == 0) {
        ob_eval_point ep;
        OB_TRY(eval_now(&cr->cs, 0, &cr->last_eval, &ep, e));
        CELL_STORE(cr, ob_store_append(cr->store, run_id, NULL, 0, &ep, 1, NULL, 0, cr->store_err));
    }
    return OB_OK;
}

/* Step t, into slot k of the flush. Three timer marks: its start, the
 * gradients summed, its end (the optimizer's part between the last two).
 * Each replica computes its part of the batch; the parts' gradients and
 * losses are summed over the replicas; then every replica takes the same
 * step. */
static ob_status cell_step(cell_run *cr, int64_t t, int k, ob_err *e)
{
    const replicas *rp = cr->rp;
    ob_device *dev = rp->dev[0];
    const ob_backend_ops *ops = dev->ops;
    OB_TRY(ops->timer_mark(dev, 3 * k, e));
    for (int r = 0; r < rp->n; r++) {
        replica_state *q = &cr->cs.rep[r];
        OB_TRY(ob_run_use_replica(rp, r, e));
        OB_TRY(q->wl->vt->train_step(q->wl, q->params, q->grads, t - 1, &q->loss_dev[k], e));
    }
    if (rp->n > 1) OB_TRY(replicas_sum(rp, &cr->cs, k, e));
    /* the marks are replica 0's (its device's events and stream) */
    OB_TRY(ob_run_use_replica(rp, 0, e));
    OB_TRY(ops->timer_mark(dev, 3 * k + 1, e));
    for (int r = rp->n - 1; r >= 0; r--) {
        replica_state *q = &cr->cs.rep[r];
        OB_TRY(ob_run_use_replica(rp, r, e));
        OB_TRY(ob_optim_step(q->opt, q->params, q->grads, &q->loss_dev[k], t, &q->rec_dev[k], e));
    }
    return ops->timer_mark(dev, 3 * k + 2, e);
}

/* Device memory in use as the driver sees it (CUDA: cudaMemGetInfo), at
 * each flush: the stream has just been waited for. */
static void note_driver_memory(cell_run *cr)
{
    ob_device *dev = cr->rp->dev[0];
    if (!dev->ops->mem_info) return;
    size_t free_b = 0, total_b = 0;
    ob_err me;
    ob_err_clear(&me);
    if (dev->ops->mem_info(dev, &free_b, &total_b, &me) == OB_OK && total_b > free_b &&
        (int64_t)(total_b - free_b) > cr->drv_peak)
        cr->drv_peak = (int64_t)(total_b - free_b);
}

/* The guard's verdict on step `step` (record r): a non-finite step is
 * skipped (a streak of max_bad_steps of them diverges the run, from the
 * streak's first step) or, with on_nonfinite none, was applied and diverges
 * it; a spike the spike guard skipped is recorded; a loss past
 * diverge_factor x the first loss diverges it. */
static void judge_step(cell_run *cr, int64_t step, const ob_step_record *r)
{
    cell_state *cs = &cr->cs;
    const int nonfinite = r->skipped == (float)OB_REC_NONFINITE;
    if (nonfinite && cr->no_guard) {
        /* train.on_nonfinite = none: the step was applied as is */
        cr->diverged_step = step;
        add_event(cs, step, "diverged", "non-finite %s at step %lld, applied (train.on_nonfinite = none)",
                  isfinite(r->loss) ? "gradient" : "loss", (long long)step);
    } else if (nonfinite) {
        if (cr->bad_streak++ == 0) cr->bad_from = step;
        add_event(cs, step, "skipped_step", "non-finite %s; update skipped", isfinite(r->loss) ? "gradient" : "loss");
        if (cr->bad_streak >= cr->max_bad) {
            cr->diverged_step = cr->bad_from; /* spikes skipped within the streak are not in its count */
            add_event(cs, cr->diverged_step, "diverged", "%lld consecutive non-finite steps",
                      (long long)cr->bad_streak);
        }
    } else {
        /* a spike the spike guard skipped is finite: neither bad nor good for the
         * streak, and its loss still counts for divergence */
        if (r->skipped != 0.0f)
            add_spike_event(cs, step, (int)r->skipped - OB_REC_NONFINITE, r, &cr->j->cell->train_hp);
        else
            cr->bad_streak = 0;
        if (isfinite(cr->first_loss) && cr->first_loss > 0 && r->loss > cr->diverge_factor * cr->first_loss) {
            cr->diverged_step = step;
            add_event(cs, step, "diverged", "loss %.6g exceeds %g x the first loss %.6g", (double)r->loss,
                      cr->diverge_factor, cr->first_loss);
        }
    }
}

/* A flush's nb records, of the steps from batch_start on, in order up to
 * the one that diverges the run: each step's loss and times into the curve,
 * its point into cs.pts (*n_pts of them), the guard's verdict, and the
 * optimizer's own stop (its guard) at its step. */
static ob_status take_records(cell_run *cr, const ob_step_record *recs, int nb, int64_t batch_start, int *n_pts,
                              ob_err *e)
{
    ob_device *dev = cr->rp->dev[0];
    cell_state *cs = &cr->cs;
    int64_t stop_step = -1;
    char stop_why[200] = "";
    const int stopped = ob_optim_stopped(cs->rep[0].opt, &stop_step, stop_why, sizeof stop_why);
    *n_pts = 0;
    /* the times first: a timer that fails fails the run before any of the
     * flush's steps is counted as done */
    double ms[OB_FLUSH_STEPS], oms[OB_FLUSH_STEPS];
    for (int jj = 0; jj < nb; jj++) {
        OB_TRY(dev->ops->timer_read(dev, 3 * jj, 3 * jj + 2, &ms[jj], e));
        OB_TRY(dev->ops->timer_read(dev, 3 * jj + 1, 3 * jj + 2, &oms[jj], e));
    }
    for (int jj = 0; jj < nb && cr->diverged_step < 0; jj++) {
        const int64_t step = batch_start + jj;
        const ob_step_record *r = &recs[jj];
        cs->losses[cr->done] = r->loss;
        cs->step_ms[cr->done] = ms[jj];
        cs->opt_ms[cr->done] = oms[jj];
        cr->done++;
        ob_curve_point *pt = &cs->pts[(*n_pts)++];
        pt->step = step;
        pt->loss = r->loss;
        pt->grad_norm = r->grad_norm;
        pt->lr = ob_optim_lr_in_effect(cs->rep[0].opt, step);
        if (step == 1) cr->first_loss = r->loss;
        judge_step(cr, step, r);
        if (cr->diverged_step < 0 && stopped && step >= stop_step) {
            cr->diverged_step = stop_step;
            add_event(cs, stop_step, "diverged", "%s", stop_why[0] ? stop_why : "the guard stopped the run");
        }
    }
    return OB_OK;
}

/* The optimizer's events since the last flush, replica 0's: the other
 * replicas raise the same, and theirs are dropped. */
static void take_optimizer_events(cell_state *cs)
{
    int64_t ev_step;
    char kind[32], detail[160];
    while (cs->n_events < OB_FLUSH_EVENTS &&
           ob_optim_pop_event(cs->rep[0].opt, &ev_step, kind, sizeof kind, detail, sizeof detail)) {
        /* kind must outlive the append: keep it in the event text buffer */
        add_event(cs, ev_step, "optimizer", "%s: %s", kind, detail);
    }
    for (int r = 1; r < cs->n_rep; r++)
        while (ob_optim_pop_event(cs->rep[r].opt, &ev_step, kind, sizeof kind, detail, sizeof detail)) {
        }
}

/* The flush after step t of the steps from batch_start: their records to the
 * host in one copy, the guard's decisions, the optimizer's events and the
 * evaluation when one is due (the end of the run always is, like any other
 * evaluation: with eval_every = 0 it is the only one), to the store in one
 * transaction. */
static ob_status cell_flush(cell_run *cr, int64_t batch_start, int64_t t, int eval_due, ob_err *e)
{
    ob_device *dev = cr->rp->dev[0];
    cell_state *cs = &cr->cs;
    const int64_t steps = cr->x->cfg->steps;
    const int nb = (int)(t - batch_start) + 1;
    ob_step_record recs[OB_FLUSH_STEPS];
    OB_TRY(dev->ops->download(dev, recs, cs->rep[0].rec_dev, (size_t)nb * sizeof *recs, e));
    note_driver_memory(cr);
    int n_pts = 0;
    cs->n_events = 0;
    OB_TRY(take_records(cr, recs, nb, batch_start, &n_pts, e));
    take_optimizer_events(cs);
    ob_eval_point ep;
    int n_ep = 0;
    if (cr->diverged_step < 0 && (eval_due || t == steps)) {
        OB_TRY(eval_now(cs, t, &cr->last_eval, &ep, e));
        cr->have_eval = 1;
        n_ep = 1;
    }
    CELL_STORE(cr, ob_store_append(cr->store, cr->j->run_id, cs->pts, n_pts, &ep, n_ep, cs->events, cs->n_events,
                                   cr->store_err));
    if (!cr->x->multi) ob_progress_cell_step(cr->x->prog, t, steps, cs->losses[cr->done - 1]);
    return OB_OK;
}

/* The checkpoint of step t, right after its flush was committed (the
 * database holds steps 1..t). One that cannot be written stops the run
 * (interrupted) and the matrix (*stop_matrix). */
static ob_status cell_checkpoint(cell_run *cr, int64_t t, int *stop_matrix, ob_err *e)
{
    const run_state rs = {cr->first_loss, cr->bad_streak, cr->have_eval, cr->last_eval.loss,
                          cr->last_eval.metric, cr->last_eval.floor, cr->wall_before + ob_run_now_s() - cr->t_start,
                          cr->bad_from};
    ob_err ce;
    ob_err_clear(&ce);
    if (write_checkpoint(cr->x, cr->j, cr->rp->dev[0], &cr->cs, t, &rs, cr->ckdir, &ce) != OB_OK) {
        *stop_matrix = 1;
        return ob_fail(e, OB_ERR_INTERRUPTED, "%s", ce.msg);
    }
    /* a run taken over from another checkpoint folder: this one now
     * holds a newer checkpoint, and the lock file names it */
    if (cr->ckdir_before[0] && !cr->before_gone) {
        ob_run_remove_ckpt_folder(cr->ckdir_before);
        cr->before_gone = 1;
    }
    return OB_OK;
}

/* Steps start + 1 .. steps, flushed every OB_FLUSH_STEPS steps and at each
 * evaluation, checkpoint and stop. Ends early when the run diverges, when a
 * signal stops it (after a checkpoint: OB_ERR_INTERRUPTED) or when a
 * checkpoint cannot be written (*stop_matrix). */
static ob_status cell_train(cell_run *cr, int *stop_matrix, ob_err *e)
{
    const ob_config *cfg = cr->x->cfg;
    const int64_t steps = cfg->steps, eval_every = cfg->eval_every, ckpt_every = cfg->checkpoint_every;
    int64_t batch_start = cr->start + 1;
    for (int64_t t = cr->start + 1; t <= steps; t++) {
        const int k = (int)(t - batch_start);
        OB_TRY(cell_step(cr, t, k, e));
        const int eval_due = eval_every > 0 && t % eval_every == 0;
        const int ckpt_due = ckpt_every > 0 && t % ckpt_every == 0 && t < steps;
        const int stop_now = ob_signal_pending() != 0 && t < steps;
        if (k + 1 < OB_FLUSH_STEPS && t < steps && !eval_due && !ckpt_due && !stop_now) continue;
        OB_TRY(cell_flush(cr, batch_start, t, eval_due, e));
        if (cr->sst != OB_OK || cr->diverged_step >= 0) return OB_OK;
        batch_start = t + 1;
        if (ckpt_due || stop_now) OB_TRY(cell_checkpoint(cr, t, stop_matrix, e));
        if (stop_now)
            return ob_fail(e, OB_ERR_INTERRUPTED, "stopped by %s after step %lld (checkpointed)",
                           ob_signal_name(ob_signal_pending()), (long long)t);
    }
    return OB_OK;
}

/* A run trained to its end, or diverged: evaluated at its end when it has
 * no evaluation yet, its status, its parameters dumped when asked. */
static ob_status cell_end(cell_run *cr, ob_run_result *res, ob_err *e)
{
    const ob_config *cfg = cr->x->cfg;
    if (cr->diverged_step < 0 && cr->bad_streak > 0) {
        /* it ended in a streak of non-finite steps shorter than
         * max_bad_steps: where no loss of its final stretch is finite, it has
         * no final loss, and diverged where the streak began */
        double final_loss, best_loss;
        ob_curve_summary(cr->cs.losses, cr->done, &final_loss, &best_loss);
        if (isnan(final_loss)) {
            cr->diverged_step = cr->bad_from;
            cr->cs.n_events = 0;
            const int64_t tail = cr->done / 10 > 0 ? cr->done / 10 : 1; /* ob_curve_summary's */
            char last[48] = "step";
            if (tail > 1) snprintf(last, sizeof last, "%lld steps", (long long)tail);
            add_event(&cr->cs, cr->bad_from, "diverged",
                      "%lld consecutive non-finite steps at the end of the run: no finite loss in its last %s",
                      (long long)cr->bad_streak, last);
            CELL_STORE(cr, ob_store_append(cr->store, cr->j->run_id, NULL, 0, NULL, 0, cr->cs.events,
                                           cr->cs.n_events, cr->store_err));
        }
    }
    if (cr->diverged_step < 0 && !cr->have_eval) {
        ob_eval_point ep;
        OB_TRY(eval_now(&cr->cs, cr->done, &cr->last_eval, &ep, e));
        CELL_STORE(cr, ob_store_append(cr->store, cr->j->run_id, NULL, 0, &ep, 1, NULL, 0, cr->store_err));
        cr->have_eval = 1;
    }
    res->status = cr->diverged_step >= 0 ? "diverged" : "done";
    if (cfg->dump_params[0]) OB_TRY(dump_params(cfg, cr->j->cell, cr->rp->dev[0], &cr->cs, e));
    return OB_OK;
}

/* The cell's result, however it ended (st: the run's failure, e says why;
 * res->status is "failed" unless it reached its end): its curve's
 * statistics, memory, step times and wall time. base_bytes: the device's
 * allocations before the cell. */
static void cell_result(cell_run *cr, ob_status st, size_t base_bytes, ob_run_result *res, char *errbuf,
                        size_t errlen, ob_err *e)
{
    ob_device *dev = cr->rp->dev[0];
    cell_state *cs = &cr->cs;
    const int64_t done = cr->done, diverged_step = cr->diverged_step;
    res->steps_done = done;
    ob_curve_summary(cs->losses, done, &res->final_loss, &res->best_loss);
    if (diverged_step >= 0) res->final_loss = NAN;
    res->diverged_step = diverged_step;
    res->eval_loss = cr->have_eval && diverged_step < 0 ? cr->last_eval.loss : NAN;
    res->eval_metric = cr->have_eval && diverged_step < 0 ? cr->last_eval.metric : NAN;
    res->loss_floor = cr->last_eval.floor;
    res->peak_mem_bytes = (int64_t)(dev->bytes_peak - base_bytes);
    res->device_mem_bytes = cr->drv_peak;
    res->state_bytes = cs->rep[0].opt ? (int64_t)ob_optim_state_bytes(cs->rep[0].opt) : 0;
    res->step_ms_median = res->step_ms_p90 = res->step_ms_mean = NAN;
    res->opt_ms_median = res->opt_ms_mean = NAN;
    res->items_per_sec = NAN;
    /* step time after the warm-up of each process segment only (the run's
     * start, every resume): a run that ended within the first (e.g. diverged
     * at step 2) has none, rather than a warm-up figure */
    if (done > 0 && cs->step_ms && cs->opt_ms) {
        ob_step_times tm;
        /* a run stored without its step times would read as one that had
         * none: it fails instead */
        if (ob_step_times_of(cs->step_ms, cs->opt_ms, done, cs->seg, cs->n_seg, &tm) != 0 && st == OB_OK)
            st = ob_fail(e, OB_ERR_NOMEM, "out of memory for the step times of %lld steps", (long long)done);
        res->step_ms_mean = tm.mean;
        res->step_ms_median = tm.median;
        res->step_ms_p90 = tm.p90;
        res->opt_ms_mean = tm.opt_mean;
        res->opt_ms_median = tm.opt_median;
        if (cs->rep[0].wl && cs->rep[0].wl->items_per_step > 0 && res->step_ms_median > 0)
            res->items_per_sec = (double)cs->rep[0].wl->items_per_step / (res->step_ms_median * 1e-3);
    }
    res->wall_s = cr->wall_before + ob_run_now_s() - cr->t_start;
    res->other_cpu = NAN; /* the caller's (run_job) */
    res->error = NULL;
    if (st != OB_OK) {
        res->status = st == OB_ERR_INTERRUPTED ? "interrupted" : "failed";
        snprintf(errbuf, errlen, "%s", e->msg);
        res->error = errbuf;
    }
}

/* Train one cell. Returns a non-OK status only for store failures (which end
 * the matrix, store_err says why); everything else is reported in res. A
 * checkpoint that cannot be written also ends the matrix (*stop_matrix),
 * after the run is recorded as interrupted. continuing: CELL_NEW, or the run
 * was begun before (CELL_CONTINUED) or failed before (CELL_FAILED_BEFORE).
 * *resumed_from: the checkpoint's step it continued from, -1 when it had
 * begun before and started over, 0 else. */
ob_status ob_run_cell(matrix_ctx *x, const job *j, const replicas *rp, ob_store *store, int continuing,
                      const char *ckdir, const char *ckdir_before, ob_run_result *res, char *errbuf, size_t errlen,
                      ob_err *store_err, int *stop_matrix, int *resumed_from)
{
    ob_device *dev = rp->dev[0];
    const ob_hp_values *train = &j->cell->train_hp;
    cell_run cr = {.x = x,
                   .j = j,
                   .rp = rp,
                   .store = store,
                   .ckdir = ckdir,
                   .ckdir_before = ckdir_before,
                   .after_failure = continuing == CELL_FAILED_BEFORE,
                   .diverge_factor = ob_hp_get(train, "diverge_factor"),
                   .no_guard = (int)ob_hp_get(train, "on_nonfinite") == OB_GUARD_NONE,
                   .max_bad = (int64_t)ob_hp_get(train, "max_bad_steps"),
                   .diverged_step = -1,
                   .first_loss = NAN,
                   .last_eval = {NAN, NAN, NAN},
                   .t_start = ob_run_now_s(),
                   .drv_peak = -1,
                   .sst = OB_OK,
                   .store_err = store_err};
    ob_err e;
    ob_err_clear(&e);
    *stop_matrix = 0;
    *resumed_from = 0;

    ob_dev_reset_peak(dev);
    const size_t base_bytes = dev->bytes_in_use;
    res->status = "failed";
    /* each part goes on only where the ones before neither failed the run
     * (st) nor the store (cr.sst) */
    ob_status st = cell_setup(&cr, &e);
    if (st == OB_OK) st = cell_begin(&cr, continuing, resumed_from, &e);
    if (st == OB_OK && cr.sst == OB_OK) st = cell_train(&cr, stop_matrix, &e);
    if (st == OB_OK && cr.sst == OB_OK) st = cell_end(&cr, res, &e);
    cell_result(&cr, st, base_bytes, res, errbuf, errlen, &e);
    cell_free(rp, &cr.cs);
    return cr.sst;
}
#undef CELL_STORE
