/* harness/run.c - the run loop (see run.h).
 *
 * Per cell: build the workload and optimizer, lay out the arenas, then train.
 * A step is train_step + ob_optim_step on the device, bracketed by timer
 * marks; its loss, grad norm and skip flag land in a device record. Every
 * OB_FLUSH_STEPS steps (and at each evaluation and the end) the records come
 * to the host in one copy, the step times are read, the guard's events and
 * divergence are decided, and the batch goes to the store in one
 * transaction. Nothing is written per step.
 */
#include "harness/run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/progress.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

/* Everything a cell owns; freed in one place whatever happened. */
typedef struct cell_state {
    ob_workload *wl;
    ob_optim *opt;
    ob_layout lay;
    float *params, *grads, *loss_dev;
    ob_step_record *rec_dev;
    double *losses, *step_ms;
    ob_curve_point *pts;
    ob_event *events;
    char (*event_text)[160];
    int n_events;
} cell_state;

static void cell_free(ob_device *dev, cell_state *cs)
{
    if (cs->wl) cs->wl->vt->destroy(cs->wl);
    ob_optim_destroy(cs->opt);
    ob_layout_free(&cs->lay);
    ob_dev_free(dev, cs->params);
    ob_dev_free(dev, cs->grads);
    ob_dev_free(dev, cs->loss_dev);
    ob_dev_free(dev, cs->rec_dev);
    free(cs->losses);
    free(cs->step_ms);
    free(cs->pts);
    free(cs->events);
    free(cs->event_text);
    memset(cs, 0, sizeof *cs);
}

static void add_event(cell_state *cs, int64_t step, const char *kind, const char *fmt, ...)
    OB_PRINTF(4, 5);

static void add_event(cell_state *cs, int64_t step, const char *kind, const char *fmt, ...)
{
    if (cs->n_events >= OB_FLUSH_STEPS * 2) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs->event_text[cs->n_events], sizeof cs->event_text[0], fmt, ap);
    va_end(ap);
    cs->events[cs->n_events].step = step;
    cs->events[cs->n_events].kind = kind;
    cs->events[cs->n_events].detail = cs->event_text[cs->n_events];
    cs->n_events++;
}

typedef struct run_ctx {
    const ob_config *cfg;
    ob_device *dev;
    ob_store *store;
    ob_progress *prog;
} run_ctx;

/* Evaluate and append one eval point; NaN metrics when the workload fails to. */
static ob_status eval_now(cell_state *cs, int64_t step, ob_eval *ev, ob_eval_point *pt, ob_err *e)
{
    OB_TRY(cs->wl->vt->evaluate(cs->wl, cs->params, ev, e));
    pt->step = step;
    pt->loss = ev->loss;
    pt->metric = ev->metric;
    return OB_OK;
}

/* Train one cell. Returns a non-OK status only for store failures (which end
 * the matrix); everything else is reported in res (status failed). */
static ob_status run_cell(run_ctx *x, const ob_cell *cell, int64_t run_id, ob_run_result *res,
                          char *errbuf, size_t errlen, ob_err *store_err)
{
    ob_device *dev = x->dev;
    const ob_backend_ops *ops = dev->ops;
    const int64_t steps = x->cfg->steps;
    const int64_t eval_every = x->cfg->eval_every;
    const double diverge_factor = ob_hp_get(&cell->train_hp, "diverge_factor");
    const int64_t max_bad = (int64_t)ob_hp_get(&cell->train_hp, "max_bad_steps");
    cell_state cs;
    memset(&cs, 0, sizeof cs);
    ob_layout_init(&cs.lay);
    ob_err e;
    ob_err_clear(&e);
    double t_start = now_s();
    int64_t done = 0, diverged_step = -1, bad_streak = 0;
    double first_loss = NAN;
    ob_eval last_eval = {NAN, NAN, NAN};
    int have_eval = 0;
    ob_status st = OB_OK;
    ob_status sst = OB_OK; /* store status */

    ob_dev_reset_peak(dev);
    size_t base_bytes = dev->bytes_in_use;
    res->status = "failed";
#define CK(call)                           \
    do {                                   \
        if ((st = (call)) != OB_OK) goto out; \
    } while (0)
#define CKS(call)                                \
    do {                                         \
        if ((sst = (call)) != OB_OK) goto out;   \
    } while (0)

    CK(cell->wl->create(cell->wl, &cell->wl_hp, dev, (uint64_t)cell->seed, &cs.wl, &e));
    CK(cs.wl->vt->describe(cs.wl, &cs.lay, &e));
    CK(ob_optim_create(cell->opt, &cell->opt_hp, &cell->train_hp, &cs.opt, &e));
    CK(ob_optim_route(cs.opt, &cs.lay, &e));
    CK(ob_layout_finalize(&cs.lay, &e));
    size_t arena = (size_t)cs.lay.total * sizeof(float);
    CK(ob_dev_alloc(dev, arena, (void **)&cs.params, &e));
    CK(ob_dev_alloc(dev, arena, (void **)&cs.grads, &e));
    CK(ob_dev_alloc(dev, OB_FLUSH_STEPS * sizeof(float), (void **)&cs.loss_dev, &e));
    CK(ob_dev_alloc(dev, OB_FLUSH_STEPS * sizeof(ob_step_record), (void **)&cs.rec_dev, &e));
    CK(cs.wl->vt->setup(cs.wl, &cs.lay, &e));
    CK(ob_optim_setup(cs.opt, dev, &cs.lay, &e));
    ob_optim_set_total_steps(cs.opt, steps);
    CK(cs.wl->vt->init_params(cs.wl, cs.params, &e));

    cs.losses = malloc((size_t)steps * sizeof *cs.losses);
    cs.step_ms = malloc((size_t)steps * sizeof *cs.step_ms);
    cs.pts = malloc(OB_FLUSH_STEPS * sizeof *cs.pts);
    cs.events = malloc(OB_FLUSH_STEPS * 2 * sizeof *cs.events);
    cs.event_text = malloc(OB_FLUSH_STEPS * 2 * sizeof *cs.event_text);
    if (!cs.losses || !cs.step_ms || !cs.pts || !cs.events || !cs.event_text) {
        st = ob_fail(&e, OB_ERR_NOMEM, "out of memory for the curve of %lld steps", (long long)steps);
        goto out;
    }
    CKS(ob_store_run_started(x->store, run_id, store_err));
    if (eval_every > 0) {
        ob_eval_point ep;
        CK(eval_now(&cs, 0, &last_eval, &ep, &e));
        CKS(ob_store_append(x->store, run_id, NULL, 0, &ep, 1, NULL, 0, store_err));
    }

    int64_t batch_start = 1;
    for (int64_t t = 1; t <= steps; t++) {
        int k = (int)(t - batch_start);
        CK(ops->timer_mark(dev, 2 * k, &e));
        CK(cs.wl->vt->train_step(cs.wl, cs.params, cs.grads, t - 1, &cs.loss_dev[k], &e));
        CK(ob_optim_step(cs.opt, cs.params, cs.grads, &cs.loss_dev[k], t, &cs.rec_dev[k], &e));
        CK(ops->timer_mark(dev, 2 * k + 1, &e));
        int eval_due = eval_every > 0 && t % eval_every == 0;
        if (k + 1 < OB_FLUSH_STEPS && t < steps && !eval_due) continue;

        /* ---- flush: records to the host, decide, store ---- */
        int nb = k + 1;
        ob_step_record recs[OB_FLUSH_STEPS];
        CK(ops->download(dev, recs, cs.rec_dev, (size_t)nb * sizeof *recs, &e));
        int n_pts = 0;
        cs.n_events = 0;
        for (int j = 0; j < nb && diverged_step < 0; j++) {
            int64_t step = batch_start + j;
            double ms;
            CK(ops->timer_read(dev, 2 * j, 2 * j + 1, &ms, &e));
            ob_step_record *r = &recs[j];
            cs.losses[done] = r->loss;
            cs.step_ms[done] = ms;
            done++;
            cs.pts[n_pts].step = step;
            cs.pts[n_pts].loss = r->loss;
            cs.pts[n_pts].grad_norm = r->grad_norm;
            cs.pts[n_pts].lr = ob_optim_lr(cs.opt, step);
            n_pts++;
            if (step == 1) first_loss = r->loss;
            if (r->skipped != 0.0f) {
                bad_streak++;
                add_event(&cs, step, "skipped_step", "non-finite %s; update skipped",
                          isfinite(r->loss) ? "gradient" : "loss");
                if (bad_streak >= max_bad) {
                    diverged_step = step - bad_streak + 1;
                    add_event(&cs, diverged_step, "diverged", "%lld consecutive non-finite steps",
                              (long long)bad_streak);
                }
            } else {
                bad_streak = 0;
                if (isfinite(first_loss) && first_loss > 0 && r->loss > diverge_factor * first_loss) {
                    diverged_step = step;
                    add_event(&cs, step, "diverged", "loss %.6g exceeds %g x the first loss %.6g",
                              (double)r->loss, diverge_factor, first_loss);
                }
            }
        }
        {
            int64_t ev_step;
            char kind[32], detail[160];
            while (cs.n_events < OB_FLUSH_STEPS * 2 &&
                   ob_optim_pop_event(cs.opt, &ev_step, kind, sizeof kind, detail, sizeof detail)) {
                /* kind must outlive the append: keep it in the event text buffer */
                add_event(&cs, ev_step, "optimizer", "%s: %s", kind, detail);
            }
        }
        ob_eval_point ep;
        int n_ep = 0;
        if (diverged_step < 0 && (eval_due || (t == steps && eval_every > 0))) {
            CK(eval_now(&cs, t, &last_eval, &ep, &e));
            have_eval = 1;
            n_ep = 1;
        }
        CKS(ob_store_append(x->store, run_id, cs.pts, n_pts, &ep, n_ep, cs.events, cs.n_events, store_err));
        ob_progress_cell_step(x->prog, t, steps, cs.losses[done - 1]);
        batch_start = t + 1;
        if (diverged_step >= 0) break;
    }
    if (diverged_step < 0 && !have_eval) {
        ob_eval_point ep;
        CK(eval_now(&cs, done, &last_eval, &ep, &e));
        have_eval = 1;
    }
    res->status = diverged_step >= 0 ? "diverged" : "done";

out:
    res->steps_done = done;
    ob_curve_summary(cs.losses, done, &res->final_loss, &res->best_loss);
    if (diverged_step >= 0) res->final_loss = NAN;
    res->diverged_step = diverged_step;
    res->eval_loss = have_eval && diverged_step < 0 ? last_eval.loss : NAN;
    res->eval_metric = have_eval && diverged_step < 0 ? last_eval.metric : NAN;
    res->loss_floor = last_eval.floor;
    res->peak_mem_bytes = (int64_t)(dev->bytes_peak - base_bytes);
    res->state_bytes = cs.opt ? (int64_t)ob_optim_state_bytes(cs.opt) : 0;
    res->step_ms_median = res->step_ms_p90 = NAN;
    res->items_per_sec = NAN;
    if (done > 0 && cs.step_ms) {
        int64_t skip = done > OB_WARMUP_STEPS ? OB_WARMUP_STEPS : 0;
        int64_t n = done - skip;
        double *tmp = malloc((size_t)n * sizeof *tmp);
        if (tmp) {
            memcpy(tmp, cs.step_ms + skip, (size_t)n * sizeof *tmp);
            res->step_ms_median = ob_quantile_inplace(tmp, n, 0.5);
            res->step_ms_p90 = ob_quantile_inplace(tmp, n, 0.9);
            free(tmp);
        }
        if (cs.wl && cs.wl->items_per_step > 0 && res->step_ms_median > 0)
            res->items_per_sec = (double)cs.wl->items_per_step / (res->step_ms_median * 1e-3);
    }
    res->wall_s = now_s() - t_start;
    res->error = NULL;
    if (st != OB_OK) {
        res->status = st == OB_ERR_INTERRUPTED ? "interrupted" : "failed";
        snprintf(errbuf, errlen, "%s", e.msg);
        res->error = errbuf;
    }
    cell_free(dev, &cs);
#undef CK
#undef CKS
    return sst;
}

ob_status ob_run_matrix(const ob_config *c, const ob_matrix *m, ob_device *dev, ob_store *store,
                        ob_run_summary *sum, ob_err *e)
{
    memset(sum, 0, sizeof *sum);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    int64_t bench_id;
    OB_TRY(ob_store_begin_benchmark(store, c->name, c->text ? c->text : "", OB_GIT_REV, host,
                                    dev->ops->name, dev->desc, &bench_id, e));
    sum->bench_id = bench_id;

    ob_run_spec *specs = calloc((size_t)m->n, sizeof *specs);
    int64_t *ids = calloc((size_t)m->n, sizeof *ids);
    char (*wjson)[1024] = calloc((size_t)m->n, sizeof *wjson);
    char (*ojson)[2048] = calloc((size_t)m->n, sizeof *ojson);
    ob_status s = OB_OK;
    if (!specs || !ids || !wjson || !ojson) {
        s = ob_fail(e, OB_ERR_NOMEM, "out of memory for %d cells", m->n);
        goto done;
    }
    for (int i = 0; i < m->n; i++) {
        const ob_cell *cell = &m->cells[i];
        char opt[1400], train[600];
        ob_hp_to_json(&cell->wl_hp, wjson[i], sizeof wjson[i]);
        ob_hp_to_json(&cell->opt_hp, opt, sizeof opt);
        ob_hp_to_json(&cell->train_hp, train, sizeof train);
        opt[strlen(opt) - 1] = '\0'; /* drop '}' and merge the training settings */
        snprintf(ojson[i], sizeof ojson[i], "%s,\"train\":%s}", opt, train);
        specs[i] = (ob_run_spec){
            .cell = cell->index,
            .workload = cell->wl->name,
            .workload_params = wjson[i],
            .optimizer = cell->opt->name,
            .hparams = ojson[i],
            .lr = cell->lr,
            .seed = cell->seed,
            .backend = dev->ops->name,
            .device = dev->desc,
            .steps = c->steps,
        };
    }
    if ((s = ob_store_add_runs(store, bench_id, specs, m->n, ids, e)) != OB_OK) goto done;

    ob_progress *prog = ob_progress_new(m->n, c->steps, stderr);
    run_ctx x = {c, dev, store, prog};
    for (int i = 0; i < m->n; i++) {
        const ob_cell *cell = &m->cells[i];
        ob_progress_cell_begin(prog, i, cell->wl->name, cell->opt->name, cell->lr, cell->seed);
        ob_run_result res;
        memset(&res, 0, sizeof res);
        char errbuf[1024];
        s = run_cell(&x, cell, ids[i], &res, errbuf, sizeof errbuf, e);
        if (s != OB_OK) break;
        if (!strcmp(res.status, "done")) sum->done++;
        else if (!strcmp(res.status, "diverged")) sum->diverged++;
        else if (!strcmp(res.status, "interrupted")) sum->interrupted++;
        else sum->failed++;
        if ((s = ob_store_finish_run(store, ids[i], &res, e)) != OB_OK) break;
        ob_progress_cell_end(prog, res.status, res.final_loss, res.steps_done, res.diverged_step,
                             res.wall_s, res.error);
    }
    ob_progress_free(prog);
    if (s == OB_OK) s = ob_store_finish_benchmark(store, bench_id, e);
done:
    free(specs);
    free(ids);
    free(wjson);
    free(ojson);
    return s;
}
