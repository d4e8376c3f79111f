/* results/compare.c - candidate vs baseline (see compare.h for the rules).
 *
 * Both databases are loaded as datasets (latest finished run per cell); the
 * cells are matched by a key string after sorting both sides; groups are
 * formed from the baseline's identity of each matched cell; each quantity gets
 * a verdict, and the three report writers print the same judgement.
 */
#include "results/compare.h"
#include "results/compare_int.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "results/stats.h"
#include "workloads/workload.h"

void ob_compare_opts_default(ob_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->loss_tol = 0.05;
    o->metric_tol = 0.01;
    o->time_tol = 0.10;
    o->time_mean_tol = 0.20;
    o->time_floor_ms = OB_STEP_TINY_MS;
    o->check_memory = 1;
}

const char *ob_verdict_name(ob_verdict v)
{
    switch (v) {
    case OB_SAME: return "same";
    case OB_BETTER: return "better";
    case OB_WORSE: return "worse";
    case OB_NODATA: return "no data";
    }
    return "?";
}

int ob_compare_time_unsteady(double base_p50, double base_p90, double cand_p50, double cand_p90)
{
    double sb = base_p50 > 0 && base_p90 >= base_p50 ? base_p90 / base_p50 - 1 : 0;
    double sc = cand_p50 > 0 && cand_p90 >= cand_p50 ? cand_p90 / cand_p50 - 1 : 0;
    return (sc > OB_TIME_UNSTEADY && sc > 2 * sb) || (sb > OB_TIME_UNSTEADY && sb > 2 * sc);
}

int ob_compare_time_apart(double spread_base, double spread_cand)
{
    double sb = spread_base > 0 ? spread_base : 0, sc = spread_cand > 0 ? spread_cand : 0;
    return (sc > OB_TIME_UNSTEADY && sc > 2 * sb) || (sb > OB_TIME_UNSTEADY && sb > 2 * sc);
}

int ob_compare_busy(double other_cpu)
{
    return other_cpu >= OB_BUSY_SHARE;
}

const char *ob_compare_bytes(double v, int sign, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (isnan(v)) {
        snprintf(buf, n, "-");
        return buf;
    }
    const char *sg = v < 0 ? "-" : sign ? "+" : "";
    double a = fabs(v);
    int u = 0;
    while (a >= 1024 && u < 4) {
        a /= 1024;
        u++;
    }
    /* three significant digits, whole bytes exactly */
    if (u == 0) snprintf(buf, n, "%s%.0f B", sg, a);
    else if (a >= 100) snprintf(buf, n, "%s%.0f %s", sg, a, unit[u]);
    else if (a >= 10) snprintf(buf, n, "%s%.1f %s", sg, a, unit[u]);
    else snprintf(buf, n, "%s%.2f %s", sg, a, unit[u]);
    return buf;
}

typedef struct keyed {
    char *key;   /* cell key */
    char *gkey;  /* group key: the cell key without lr and seed */
    int run;     /* index into the dataset */
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

static void free_keys(keyed *k, int n)
{
    for (int i = 0; k && i < n; i++) {
        free(k[i].key);
        free(k[i].gkey);
    }
    free(k);
}

/* NULL when out of memory */
static keyed *make_keys(const ob_dataset *d)
{
    keyed *k = calloc((size_t)d->n + 1, sizeof *k);
    if (!k) return NULL;
    for (int i = 0; i < d->n; i++) {
        const ob_rrun *r = &d->runs[i];
        size_t n = strlen(r->workload) + strlen(r->wl_params) + strlen(r->optimizer) +
                   strlen(r->hparams) + strlen(r->opt_key) + 128;
        k[i].key = malloc(n);
        k[i].gkey = malloc(n);
        if (!k[i].key || !k[i].gkey) {
            free_keys(k, i + 1);
            return NULL;
        }
        snprintf(k[i].key, n, "%s\x1f%s\x1f%s\x1f%s\x1f%.17g\x1f%lld\x1f%lld", r->workload, r->wl_params,
                 r->optimizer, r->hparams, r->lr, (long long)r->seed, (long long)r->steps);
        snprintf(k[i].gkey, n, "%s\x1f%s\x1f%lld\x1f%s\x1f%s", r->workload, r->wl_params,
                 (long long)r->steps, r->optimizer, r->opt_key);
        k[i].run = i;
    }
    qsort(k, (size_t)d->n, sizeof *k, cmp_keyed);
    return k;
}

typedef struct pair {
    int b, c; /* run indices */
} pair;

/* Where the two runs of a matched cell ran: 0 not known to differ (the same,
 * or a side does not say), 1 other devices (device texts differ, the
 * backends do not), 2 other backends. */
static int device_differs(const ob_rrun *rb, const ob_rrun *rc)
{
    if (rb->backend[0] && rc->backend[0] && strcmp(rb->backend, rc->backend)) return 2;
    if (rb->device[0] && rc->device[0] && strcmp(rb->device, rc->device)) return 1;
    return 0;
}

/* Whether the two runs split their batch over other data-parallel layouts:
 * the device text's "; data parallel ..." part ("" for one device) differs.
 * Each records one replica's peak memory, so those do not compare. */
static int dp_replicas(const char *device)
{
    const char *p = strstr(device, "; data parallel");
    if (!p) return 1;
    int a, b;
    if (sscanf(p, "; data parallel: %d", &a) == 1) return a; /* "2 replicas, ...", "2 devices per run" */
    if (sscanf(p, "; data parallel over devices %d-%d", &a, &b) == 2) return b - a + 1;
    return -1; /* a text this version does not know */
}

static int layout_differs(const ob_rrun *rb, const ob_rrun *rc)
{
    if (!rb->device[0] || !rc->device[0]) return 0;
    int a = dp_replicas(rb->device), b = dp_replicas(rc->device);
    return a != b || a < 0;
}

/* Why two runs' peak memory does not compare: 0 it does, 1 other devices of
 * one backend (the kernels chosen and the workspaces sized for a device
 * differ: the CPU's convolution path, its batch budget per thread), 2 other
 * backends, 3 other data-parallel layouts. Device texts that differ only in
 * the data-parallel device indices (GPUs 0-1 against 2-3) or in OpenMP's
 * waits ("; OpenMP waits: OMP_WAIT_POLICY=passive") compare. */
static int mem_differs(const ob_rrun *rb, const ob_rrun *rc)
{
    int d = device_differs(rb, rc);
    if (d == 2) return 2;
    if (layout_differs(rb, rc)) return 3;
    if (d == 0) return 0;
    /* the device itself, before its "; ..." parts: the data-parallel
     * devices and OpenMP's waits, which move step times, not memory */
    const char *a = strstr(rb->device, "; "), *b = strstr(rc->device, "; ");
    size_t la = a ? (size_t)(a - rb->device) : strlen(rb->device), lb = b ? (size_t)(b - rc->device) : strlen(rc->device);
    return la != lb || strncmp(rb->device, rc->device, la) ? 1 : 0;
}

/* A run's device for a note: its device text ("cpu: 2 threads, ..."), led by
 * the backend when the text does not start with it. */
static void device_name(const ob_rrun *r, char *buf, size_t n)
{
    size_t k = strlen(r->backend);
    if (!r->device[0]) snprintf(buf, n, "%s", r->backend[0] ? r->backend : "unknown");
    else if (!k || !strncmp(r->device, r->backend, k)) snprintf(buf, n, "%s", r->device);
    else snprintf(buf, n, "%s: %s", r->backend, r->device);
}

static ob_status no_mem(ob_err *e)
{
    return ob_fail(e, OB_ERR_NOMEM, "out of memory comparing the databases");
}

/* A diverged run, or a final loss that is not finite, counts as +inf. */
static double run_final(const ob_rrun *r)
{
    return r->diverged || !isfinite(r->final_loss) ? INFINITY : r->final_loss;
}

/* The lr of d's runs idx[0..n-1] with the lowest median final loss over
 * its finished runs, ties to the smaller lr; NaN when no lr has a finite
 * median. x: scratch of n doubles. */
static double best_lr_runs(const ob_dataset *d, const int *idx, int n, double *x)
{
    double best = NAN, best_med = INFINITY;
    for (int i = 0; i < n; i++) {
        double lr = d->runs[idx[i]].lr;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = d->runs[idx[j]].lr == lr;
        if (seen) continue;
        int m = 0;
        for (int j = 0; j < n; j++) {
            const ob_rrun *r = &d->runs[idx[j]];
            if (r->lr == lr && r->finished) x[m++] = run_final(r);
        }
        double med = ob_stat_median(x, m);
        if (med < best_med || (med == best_med && lr < best)) {
            best_med = med;
            best = lr;
        }
    }
    return best;
}

/* best_lr_runs over the runs of pairs p on side c (0 the baseline); NaN
 * also when out of memory. x: scratch of n doubles. */
static double best_lr_of(const ob_dataset *d, const pair *p, int n, int c, double *x)
{
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    if (!idx) return NAN;
    for (int i = 0; i < n; i++) idx[i] = c ? p[i].c : p[i].b;
    const double best = best_lr_runs(d, idx, n, x);
    free(idx);
    return best;
}

/* The baseline's best lr over all its (sweep) runs of a group: those of
 * workload label w, optimizer label op and steps, matched or not
 * (best_lr_runs); NaN also when out of memory. x: scratch of d->n doubles. */
static double best_lr_all(const ob_dataset *d, int w, int op, int64_t steps, double *x)
{
    int *idx = malloc(((size_t)d->n + 1) * sizeof *idx), n = 0;
    if (!idx) return NAN;
    for (int i = 0; i < d->n; i++)
        if (d->runs[i].wl == w && d->runs[i].opt == op && d->runs[i].steps == steps) idx[n++] = i;
    const double best = best_lr_runs(d, idx, n, x);
    free(idx);
    return best;
}

static double rel_change(double c, double b)
{
    if (isinf(b) && isinf(c)) return 0;
    if (isinf(b)) return -INFINITY;
    if (isinf(c)) return INFINITY;
    double den = fabs(b) > 1e-300 ? fabs(b) : 1e-300;
    return (c - b) / den;
}

/* Does a finished run of the group's pairs p (either side, any lr) that did
 * not diverge have a held-out metric (metric 1) or loss (0)? A workload
 * without one has none for a diverged seed either. */
static int has_held_out(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, int metric)
{
    for (int i = 0; i < n; i++)
        for (int side = 0; side < 2; side++) {
            const ob_rrun *r = side ? &C->runs[p[i].c] : &B->runs[p[i].b];
            if (r->finished && !r->diverged && !isnan(metric ? r->eval_metric : r->eval_loss)) return 1;
        }
    return 0;
}

/* A finished run's held-out metric (metric 1) or loss (0) as it is paired:
 * a diverged run's is the worst there is, -inf for the metric (higher is
 * better) and +inf for the loss, whatever its last evaluation said. */
static double run_held_out(const ob_rrun *r, int metric)
{
    if (r->diverged) return metric ? -INFINITY : INFINITY;
    return metric ? r->eval_metric : r->eval_loss;
}

/* The group's held-out metric (metric 1) or loss (0) at lr, paired over its
 * seeds where both runs finished: each pair's change into x (the metric's
 * difference, the loss's relative change; 0 where both diverged), the two
 * values into bl and cl. A pair without the value on a side that did not
 * diverge (no evaluation) is left out; none are taken when no run of the
 * group has the quantity (has_held_out). Returns the number of pairs. */
static int held_out_pairs(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, double lr, int metric,
                          double *x, double *bl, double *cl)
{
    if (!has_held_out(B, C, p, n, metric)) return 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        const ob_rrun *rb = &B->runs[p[i].b], *rc = &C->runs[p[i].c];
        if (rb->lr != lr || !rb->finished || !rc->finished) continue;
        const double vb = run_held_out(rb, metric), vc = run_held_out(rc, metric);
        if (isnan(vb) || isnan(vc)) continue;
        if (metric)
            x[m] = isinf(vb) && isinf(vc) && (vb > 0) == (vc > 0) ? 0 : vc - vb;
        else
            x[m] = rel_change(vc, vb);
        bl[m] = vb;
        cl[m++] = vc;
    }
    return m;
}

/* Verdict of paired changes x (higher = worse when worse_up) with a minimum effect. */
static ob_status judge_pairs(ob_cmp_quantity *q, const double *x, int n, double tol, int worse_up, ob_err *e)
{
    q->n = n;
    q->effect = q->ci_lo = q->ci_hi = NAN;
    q->ci_cover = 0;
    q->n_to_finite = q->n_to_inf = 0;
    q->higher_better = !worse_up;
    /* an infinite change the worse way is a value now not finite (a seed
     * that diverged): +inf for a loss, -inf for the metric */
    for (int i = 0; i < n; i++) {
        q->n_to_finite += isinf(x[i]) && (x[i] > 0) != worse_up;
        q->n_to_inf += isinf(x[i]) && (x[i] > 0) == worse_up;
    }
    if (n == 0) {
        q->v = OB_NODATA;
        return OB_OK;
    }
    q->effect = ob_stat_median(x, n);
    OB_TRY(ob_stat_median_ci(x, n, 0.95, &q->ci_lo, &q->ci_hi, &q->ci_cover, e));
    int up = q->ci_lo > 0 && q->effect > tol;
    int down = q->ci_hi < 0 && q->effect < -tol;
    q->v = up ? (worse_up ? OB_WORSE : OB_BETTER) : down ? (worse_up ? OB_BETTER : OB_WORSE) : OB_SAME;
    q->unsure = q->v == OB_SAME && isfinite(q->effect) && fabs(q->effect) > tol;
    return OB_OK;
}

/* The absolute floor of a loss's verdict: the median of the pairs'
 * differences cl[i] - bl[i] (diverged on one side: infinite) must exceed
 * abs_tol as well, or the loss counts as the same. */
static ob_status loss_abs_floor(ob_cmp_quantity *q, const double *bl, const double *cl, int n, double abs_tol,
                                ob_err *e)
{
    q->abs_effect = NAN;
    q->under_abs = 0;
    if (n == 0) return OB_OK;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d) return no_mem(e);
    for (int i = 0; i < n; i++) d[i] = isinf(bl[i]) && isinf(cl[i]) ? 0 : cl[i] - bl[i];
    q->abs_effect = ob_stat_median(d, n);
    free(d);
    if (abs_tol > 0 && !(fabs(q->abs_effect) > abs_tol) && (q->v == OB_WORSE || q->v == OB_BETTER || q->unsure)) {
        q->under_abs = 1;
        q->v = OB_SAME;
        q->unsure = 0;
    }
    return OB_OK;
}

/* "95% CI +1.0% to +3.0%" (see change_text for dig); an end that is infinite
 * (a seed diverged on one side only) is left open: "95% CI +1.0% and above".
 * With fewer than 6 pairs the interval is their range, which holds the
 * median change with a probability under 95% (50% with 2): it says so,
 * "range +1.0% to +3.0%, a 50% interval", and one pair has none. */
static const char *ci_text(const ob_cmp_quantity *q, int dig, char *buf, size_t n)
{
    char a[32], b[32];
    if (q->n <= 1) {
        snprintf(buf, n, "one pair: no interval");
        return buf;
    }
    ob_cmp_change_text(q->ci_lo, dig, a, sizeof a);
    ob_cmp_change_text(q->ci_hi, dig, b, sizeof b);
    const int full = q->ci_cover >= 0.95 - 1e-12;
    const char *lead = full ? "95% CI" : "range";
    char tail[24] = "";
    if (!full) snprintf(tail, sizeof tail, ", a %d%% interval", (int)lround(100 * q->ci_cover));
    if (isinf(q->ci_lo) && isinf(q->ci_hi)) snprintf(buf, n, "%s unbounded%s", lead, tail);
    else if (isinf(q->ci_hi)) snprintf(buf, n, "%s %s and above%s", lead, a, tail);
    else if (isinf(q->ci_lo)) snprintf(buf, n, "%s %s and below%s", lead, b, tail);
    else snprintf(buf, n, "%s %s to %s%s", lead, a, b, tail);
    return buf;
}

/* A median loss or metric: "0.1234", or "diverged" when it is not finite. */
static const char *value_text(double v, char *buf, size_t n)
{
    if (isinf(v)) snprintf(buf, n, "diverged");
    else snprintf(buf, n, "%.4g", v);
    return buf;
}

/* judge_group's scratch, of n + 1 values each: the paired changes (x; y
 * every timed cell's change, for the report), each side's values (bl, cl:
 * every one of them, for its median: a median of the first few hundred
 * would be of whichever cells sort first) and the mean step time's changes,
 * base and cand values (z, zb, zc: one block of 3 (n + 1)). */
typedef struct scratch {
    double *x, *y, *bl, *cl, *z, *zb, *zc;
} scratch;

/* s's arrays for a group of n cells; -1 when out of memory (nothing kept). */
static int scratch_alloc(scratch *s, int n)
{
    s->x = calloc((size_t)n + 1, sizeof *s->x);
    s->y = calloc((size_t)n + 1, sizeof *s->y);
    s->bl = calloc((size_t)n + 1, sizeof *s->bl);
    s->cl = calloc((size_t)n + 1, sizeof *s->cl);
    s->z = calloc(3 * ((size_t)n + 1), sizeof *s->z);
    if (!s->x || !s->y || !s->bl || !s->cl || !s->z) {
        free(s->x);
        free(s->y);
        free(s->bl);
        free(s->cl);
        free(s->z);
        return -1;
    }
    s->zb = s->z + n + 1;
    s->zc = s->z + 2 * (n + 1);
    return 0;
}

/* Frees s's arrays (scratch_alloc's). */
static void scratch_free(scratch *s)
{
    free(s->x);
    free(s->y);
    free(s->bl);
    free(s->cl);
    free(s->z);
}

/* The lr where the group's loss and held-out are judged (g->best_lr, and
 * where it comes from, g->lr_from) and the candidate's own best lr; counts
 * the baseline cells that did not finish. Returns 0 when none finished.
 * x: scratch of n doubles. */
static int judged_lr(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, ob_cmp_group *g, double *x)
{
    /* the baseline's best lr over the matched cells; where the baseline has
     * no finite median at any lr, the candidate's (a candidate that now
     * converges is better), else the smallest lr (both diverged: the same) */
    g->best_lr = best_lr_of(B, p, n, 0, x);
    g->cand_best_lr = best_lr_of(C, p, n, 1, x); /* shown when the candidate's winner moved */
    int base_finished = 0;
    for (int i = 0; i < n; i++) {
        base_finished += B->runs[p[i].b].finished;
        g->n_base_unfinished += !B->runs[p[i].b].finished;
    }
    if (!base_finished) return 0;
    if (isnan(g->best_lr)) {
        g->best_lr = g->cand_best_lr;
        g->lr_from = 1;
    }
    if (isnan(g->best_lr)) {
        g->lr_from = 2;
        for (int i = 0; i < n; i++) {
            double lr = B->runs[p[i].b].lr;
            if (B->runs[p[i].b].finished && (isnan(g->best_lr) || lr < g->best_lr)) g->best_lr = lr;
        }
    }
    return 1;
}

/* A group of n matched cells none of which finished in the baseline: a
 * baseline that never ran here says nothing, not "diverged everywhere";
 * no quantity has data. */
static void no_baseline(ob_cmp_group *g, int n)
{
    g->lr_from = 3;
    g->best_lr = NAN;
    g->n_matched = n;
    ob_cmp_quantity *qs[6] = {&g->loss, &g->metric, &g->time, &g->time_mean, &g->peak_mem, &g->state};
    for (int i = 0; i < 6; i++) {
        qs[i]->v = OB_NODATA;
        qs[i]->base = qs[i]->cand = qs[i]->effect = qs[i]->ci_lo = qs[i]->ci_hi = NAN;
    }
}

/* The final loss at the judged lr, paired over seeds (g->loss), and the
 * seeds newly diverged there. */
static ob_status judge_loss(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, const ob_compare_opts *o,
                            ob_cmp_group *g, const scratch *s, ob_err *e)
{
    double *x = s->x, *bl = s->bl, *cl = s->cl;
    ob_status st;
    int m = 0;
    int nb = 0;
    for (int i = 0; i < n; i++) {
        const ob_rrun *rb = &B->runs[p[i].b], *rc = &C->runs[p[i].c];
        if (rb->lr != g->best_lr || !rb->finished || !rc->finished) continue;
        x[m++] = rel_change(run_final(rc), run_final(rb));
        g->n_new_diverged += isinf(run_final(rc)) && !isinf(run_final(rb));
        bl[nb] = run_final(rb);
        cl[nb++] = run_final(rc);
    }
    if ((st = judge_pairs(&g->loss, x, m, o->loss_tol, 1, e)) != OB_OK ||
        (st = loss_abs_floor(&g->loss, bl, cl, nb, o->loss_abs_tol, e)) != OB_OK)
        return st;
    g->loss.base = ob_stat_median(bl, nb);
    g->loss.cand = ob_stat_median(cl, nb);
    return OB_OK;
}

/* The held-out metric (or held-out loss) at the best lr, paired like the
 * final loss (g->metric): a seed that diverged counts as the worst value
 * (metric -inf, held-out loss +inf), as in the report, where the group has
 * that quantity at all (has_held_out); left out, the seeds that survived
 * would stand for it and a candidate that diverges on some seeds would be
 * judged on the others. Diverged on both sides is no change (0, as the
 * final loss's rel_change counts it): kept in, so that both quantities are
 * judged over the same seeds. A pair without the value on a side that did
 * not diverge (no evaluation) is left out. */
static ob_status judge_held_out(const ob_dataset *B, const ob_dataset *C, const pair *p, int n,
                                const ob_compare_opts *o, ob_cmp_group *g, const scratch *s, ob_err *e)
{
    double *x = s->x, *bl = s->bl, *cl = s->cl;
    ob_status st;
    int m = held_out_pairs(B, C, p, n, g->best_lr, 1, x, bl, cl);
    int nb = m;
    if (m > 0) {
        if ((st = judge_pairs(&g->metric, x, m, o->metric_tol, 0, e)) != OB_OK) return st;
    } else {
        g->metric_is_loss = 1;
        m = held_out_pairs(B, C, p, n, g->best_lr, 0, x, bl, cl);
        nb = m;
        if ((st = judge_pairs(&g->metric, x, m, o->loss_tol, 1, e)) != OB_OK ||
            (st = loss_abs_floor(&g->metric, bl, cl, nb, o->loss_abs_tol, e)) != OB_OK)
            return st;
    }
    g->metric.base = ob_stat_median(bl, nb);
    g->metric.cand = ob_stat_median(cl, nb);
    return OB_OK;
}

/* The step times of a group's cells as judge_time takes them: counts into
 * the scratch's arrays, and the range of the runs' medians for the spread. */
typedef struct time_cells {
    int m, nb;        /* steady cells: changes in x, each side's medians in bl and cl */
    int timed;        /* timed cells: changes in y */
    int mm;           /* cells whose mean is judged: changes in z, each side's means in zb and zc */
    int spread_cells; /* timed cells finished on both sides */
    double lo_b, hi_b, lo_c, hi_c; /* the runs' medians, for the spread */
} time_cells;

/* The group's cells sorted for judge_time: left out (another device, under
 * the floor, unsteady: counted in g), timed (y), steady (x, bl, cl) and
 * judged on their mean (z, zb, zc). */
static void collect_times(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, const ob_compare_opts *o,
                          ob_cmp_group *g, const scratch *s, time_cells *t)
{
    *t = (time_cells){.lo_b = INFINITY, .hi_b = 0, .lo_c = INFINITY, .hi_c = 0};
    for (int i = 0; i < n; i++) {
        const ob_rrun *rb = &B->runs[p[i].b], *rc = &C->runs[p[i].c];
        if (!(rb->step_ms_median > 0) || !(rc->step_ms_median > 0)) continue;
        if (!o->time_across_devices && device_differs(rb, rc)) {
            g->time_other_device++; /* another machine's step time says nothing of the code */
            continue;
        }
        const int fast = rb->step_ms_median < o->time_floor_ms && rc->step_ms_median < o->time_floor_ms;
        double r = rc->step_ms_median / rb->step_ms_median - 1;
        const int unsteady =
            !fast && ob_compare_time_unsteady(rb->step_ms_median, rb->step_ms_p90, rc->step_ms_median, rc->step_ms_p90);
        const int means = rb->step_ms_mean > 0 && rc->step_ms_mean > 0 && isfinite(rb->step_ms_mean) &&
                          isfinite(rc->step_ms_mean); /* unknown in a database of schema < 4 */
        const int busy = ob_compare_busy(rb->other_cpu) || ob_compare_busy(rc->other_cpu);
        if (means && !fast && !busy && (!unsteady || fabs(r) <= OB_TIME_MEDIAN_HELD)) {
            s->z[t->mm] = rc->step_ms_mean / rb->step_ms_mean - 1;
            s->zb[t->mm] = rb->step_ms_mean;
            s->zc[t->mm++] = rc->step_ms_mean;
        }
        if (fast) {
            g->time_fast++; /* steps of microseconds time the harness and the machine's state */
            continue;
        }
        s->y[t->timed++] = r;
        g->busy_base = fmax(g->busy_base, rb->other_cpu); /* NaN: unknown, the other wins */
        g->busy_cand = fmax(g->busy_cand, rc->other_cpu);
        if (busy) {
            g->time_busy++; /* other processes' work timed, not the code's */
            continue;
        }
        if (!strcmp(rb->status, "done") && !strcmp(rc->status, "done")) {
            t->spread_cells++;
            t->lo_b = fmin(t->lo_b, rb->step_ms_median);
            t->hi_b = fmax(t->hi_b, rb->step_ms_median);
            t->lo_c = fmin(t->lo_c, rc->step_ms_median);
            t->hi_c = fmax(t->hi_c, rc->step_ms_median);
        }
        if (unsteady) {
            g->time_unsteady++;
            continue;
        }
        s->x[t->m++] = r;
        s->bl[t->nb] = rb->step_ms_median;
        s->cl[t->nb++] = rc->step_ms_median;
    }
}

/* Step time: per cell, the relative change of the run's median (p50) step
 * time, paired like the loss (a slowdown must show on the cells together,
 * not in one of them); cells whose timing was unsteady on one side only (a
 * busy machine) are left out, and a group with mostly such cells is not
 * judged; so are cells run on different devices, unless asked for. y
 * holds every timed cell's change, for the report. Each cell's mean
 * step time is judged alike (z) with its own tolerance: a step that is
 * slow every k-th time (a sync, a refresh, an allocation) leaves the
 * median where it was and shows in the mean. The mean is judged over
 * the timed cells (same devices, above the floor) that are steady or
 * whose median held (within OB_TIME_MEDIAN_HELD, whatever time_tol is):
 * more than a tenth of the steps slow raise the p90 on one side, which
 * makes a cell unsteady, and leave the median, and those are the
 * regressions the mean is for; an unsteady cell whose median moved too
 * is a slower, busier machine and stays out, and so does the mean of a
 * group where fewer than half of the timed cells are left (the few that
 * remain would decide it). Cells under the floor stay out: one stall of
 * a few ms lifts a microsecond step's mean over any floor, and only the
 * cells that stalled would be judged. Stalls of a busy machine raise the
 * mean too; the paired rule (every cell, up to 8) sets aside those that
 * hit some runs, its larger tolerance the short ones that hit all, and a
 * rise common to every group while the medians held is taken for the
 * machine (see ob_compare: time_mean_shift). A group whose runs of one
 * side ran at different speeds (time_apart, over the cells finished on
 * both sides) is not judged, its mean neither: a machine with a fast and
 * a slow mode that took turns between runs pairs fast baseline runs with
 * slow candidate runs, and the paired rule alone would call every cell
 * slower. */
static ob_status judge_time(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, const ob_compare_opts *o,
                            ob_cmp_group *g, const scratch *s, ob_err *e)
{
    ob_status st;
    time_cells t;
    collect_times(B, C, p, n, o, g, s, &t);
    g->time_cells = t.timed;
    g->time_floor_ms = o->time_floor_ms;
    g->time_spread_base = t.spread_cells >= 2 ? t.hi_b / t.lo_b - 1 : NAN;
    g->time_spread_cand = t.spread_cells >= 2 ? t.hi_c / t.lo_c - 1 : NAN;
    /* one side's runs at different speeds: the machine's, not the code's */
    g->time_apart = o->time_tol >= 0 && ob_compare_time_apart(g->time_spread_base, g->time_spread_cand);
    if (g->time_apart) t.mm = 0;
    g->time_busy_most = o->time_tol >= 0 && t.timed > 0 && 2 * g->time_busy > t.timed;
    if (o->time_tol >= 0 && t.timed > 0 &&
        (2 * (g->time_unsteady + g->time_busy) > t.timed || g->time_apart)) {
        g->time_not_judged = 1; /* mostly unsteady or busy: no verdict, the raw change is shown */
        if ((st = judge_pairs(&g->time, s->y, 0, 0, 1, e)) != OB_OK) return st;
        g->time.effect = ob_stat_median(s->y, t.timed);
    } else if ((st = judge_pairs(&g->time, s->x, o->time_tol < 0 ? 0 : t.m, o->time_tol, 1, e)) != OB_OK)
        return st;
    g->time_mean_cells = t.timed;
    if (o->time_tol < 0 || o->time_mean_tol < 0 || 2 * t.mm < t.timed) t.mm = 0; /* not judged */
    if ((st = judge_pairs(&g->time_mean, s->z, t.mm, o->time_mean_tol, 1, e)) != OB_OK) return st;
    g->time_mean.base = ob_stat_median(s->zb, t.mm);
    g->time_mean.cand = ob_stat_median(s->zc, t.mm);
    g->time.base = ob_stat_median(s->bl, t.nb);
    g->time.cand = ob_stat_median(s->cl, t.nb);
    return OB_OK;
}

/* Peak memory and optimizer state, exactly: the largest of each side's
 * cells (g->peak_mem, g->state), peak memory over the cells whose devices
 * compare (mem_differs; the others counted in g). */
static void judge_memory(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, const ob_compare_opts *o,
                         ob_cmp_group *g)
{
    for (int kind = 0; kind < 2; kind++) {
        ob_cmp_quantity *q = kind ? &g->state : &g->peak_mem;
        int64_t mb = -1, mc = -1;
        int cnt = 0;
        for (int i = 0; i < n; i++) {
            const ob_rrun *rb = &B->runs[p[i].b], *rc = &C->runs[p[i].c];
            int64_t vb = kind ? rb->state_bytes : rb->peak_mem_bytes;
            int64_t vc = kind ? rc->state_bytes : rc->peak_mem_bytes;
            if (vb < 0 || vc < 0) continue;
            const int why = kind ? 0 : mem_differs(rb, rc);
            if (why == 2) { /* CPU and GPU memory do not compare */
                g->mem_other_backend += o->check_memory;
                continue;
            }
            if (why == 3) { /* one replica's peak against another's share */
                g->mem_other_layout += o->check_memory;
                continue;
            }
            if (why == 1) { /* other kernels, other workspaces */
                g->mem_other_device += o->check_memory;
                continue;
            }
            cnt++;
            if (vb > mb) mb = vb;
            if (vc > mc) mc = vc;
        }
        q->n = cnt;
        q->base = cnt ? (double)mb : NAN;
        q->cand = cnt ? (double)mc : NAN;
        q->effect = cnt && mb > 0 ? (double)mc / (double)mb - 1 : NAN;
        q->ci_lo = q->ci_hi = NAN;
        q->v = !cnt || !o->check_memory ? OB_NODATA : mc > mb ? OB_WORSE : mc < mb ? OB_BETTER : OB_SAME;
    }
}

/* Cells that finished before and do not now; and cells that diverge now
 * at an lr other than the judged one: below it, where a larger lr
 * trains, a regression (unless as many went the other way there); above
 * it a note (the edge of stability can move with rounding). Counted in g,
 * the first of a kind described. */
static void count_changed_cells(const ob_dataset *B, const ob_dataset *C, const pair *p, int n, ob_cmp_group *g)
{
    for (int i = 0; i < n; i++) {
        const ob_rrun *rb = &B->runs[p[i].b], *rc = &C->runs[p[i].c];
        if (rb->finished && !rc->finished) {
            if (!strcmp(rc->status, "failed") && !g->n_new_failures++)
                snprintf(g->new_failure, sizeof g->new_failure, "lr %g, seed %lld, run %lld: %.160s", rc->lr,
                         (long long)rc->seed, (long long)rc->id, rc->error && rc->error[0] ? rc->error : "no error stored");
            else g->n_new_unfinished++;
        }
        else if (rb->finished && rc->finished && rb->lr < g->best_lr && !isinf(run_final(rc)) &&
                 isinf(run_final(rb)))
            g->n_to_finite_below++;
        else if (rb->finished && rb->lr < g->best_lr && isinf(run_final(rc)) && !isinf(run_final(rb))) {
            if (!g->n_new_diverged_below++)
                snprintf(g->new_diverged_below, sizeof g->new_diverged_below, "lr %g, seed %lld", rc->lr,
                         (long long)rc->seed);
        }
        else if (rb->finished && rb->lr != g->best_lr && isinf(run_final(rc)) && !isinf(run_final(rb)))
            g->n_new_diverged_other++;
    }
}

/* One group's verdicts, over the pairs p[0..n) of its matched cells, into
 * g: the lr judged, then each quantity and the cells that changed. */
static ob_status judge_group(const ob_dataset *B, const ob_dataset *C, const pair *p, int n,
                             const ob_compare_opts *o, ob_cmp_group *g, ob_err *e)
{
    scratch s;
    if (scratch_alloc(&s, n) != 0) return no_mem(e);
    ob_status st = OB_OK;
    if (!judged_lr(B, C, p, n, g, s.x)) {
        no_baseline(g, n);
    } else if ((st = judge_loss(B, C, p, n, o, g, &s, e)) == OB_OK &&
               (st = judge_held_out(B, C, p, n, o, g, &s, e)) == OB_OK &&
               (st = judge_time(B, C, p, n, o, g, &s, e)) == OB_OK) {
        judge_memory(B, C, p, n, o, g);
        count_changed_cells(B, C, p, n, g);
        g->n_matched = n;
    }
    scratch_free(&s);
    return st;
}

/* The median effect on step time (its mean's when mean) over the groups
 * judged on it, when there are two at least and each moved the same way
 * beyond tol; else NaN. eff: scratch for n_g values (NULL: NaN). */
static double common_shift(const ob_compare *c, int mean, double tol, double *eff)
{
    int ne = 0, up = 0, down = 0;
    for (int k = 0; eff && k < c->n_g; k++) {
        const ob_cmp_quantity *q = mean ? &c->g[k].time_mean : &c->g[k].time;
        if (q->v == OB_NODATA || isnan(q->effect)) continue;
        eff[ne++] = q->effect;
        up += q->effect > tol;
        down += q->effect < -tol;
    }
    return ne >= 2 && (up == ne || down == ne) ? ob_stat_median(eff, ne) : NAN;
}


/* The group's overall verdict, from its quantities' and its cells': worse
 * where any is, else better where any is, else the same (no data when the
 * group is not judged, lr_from 3). */
static ob_verdict overall_verdict(const ob_cmp_group *g)
{
    const ob_cmp_quantity *qs[6] = {&g->loss, &g->metric, &g->time, &g->time_mean, &g->peak_mem, &g->state};
    /* cells not finished in the candidate make no verdict of their own
     * (ob_compare.incomplete): a stopped run is not slower code */
    int worse = g->n_new_failures > 0 || ob_cmp_new_divergences(g) || ob_cmp_new_divergences_below(g), better = 0;
    for (int i = 0; i < 6; i++) {
        worse |= qs[i]->v == OB_WORSE;
        better |= qs[i]->v == OB_BETTER;
    }
    return worse ? OB_WORSE : better ? OB_BETTER : g->lr_from == 3 ? OB_NODATA : OB_SAME;
}

/* A clause appended to g->detail, whose text is *len characters so far, as
 * snprintf writes it; nothing once the text is full (*len at or past its
 * size). */
static void detail_add(ob_cmp_group *g, size_t *len, const char *fmt, ...) OB_PRINTF(3, 4);
static void detail_add(ob_cmp_group *g, size_t *len, const char *fmt, ...)
{
    if (*len >= sizeof g->detail) return;
    va_list ap;
    va_start(ap, fmt);
    *len += (size_t)vsnprintf(g->detail + *len, sizeof g->detail - *len, fmt, ap);
    va_end(ap);
}

/* The clauses of g->detail on the final loss and the held-out metric, where
 * worse. */
static void loss_clauses(ob_cmp_group *g, size_t *len)
{
    char c1[128], c2[32], c3[32];
    if (g->loss.v == OB_WORSE && !isinf(g->loss.effect)) /* +inf: the divergences below say it */
        detail_add(g, len,
                   "final loss at lr %g worse: median per-seed change %+.1f%% over %d seed%s (%s); medians %s -> %s; ",
                   g->best_lr, 100 * g->loss.effect, g->loss.n, g->loss.n == 1 ? "" : "s",
                   ci_text(&g->loss, 1, c1, sizeof c1), value_text(g->loss.base, c2, sizeof c2),
                   value_text(g->loss.cand, c3, sizeof c3));
    if (g->metric.v == OB_WORSE && isinf(g->metric.effect)) {
        /* the median seed diverged in the candidate: the divergences below
         * say it, else (as many went the other way on the final loss) in words */
        if (!ob_cmp_new_divergences(g)) {
            ob_cmp_infinite_text(&g->metric, 1, "diverged", c1, sizeof c1);
            detail_add(g, len, "held-out %s worse: %s; ", g->metric_is_loss ? "loss" : "metric", c1);
        }
    } else if (g->metric.v == OB_WORSE) {
        if (g->metric_is_loss)
            detail_add(g, len,
                       "held-out loss worse: median per-seed change %+.1f%% over %d seed%s (%s); medians %s -> %s; ",
                       100 * g->metric.effect, g->metric.n, g->metric.n == 1 ? "" : "s",
                       ci_text(&g->metric, 1, c1, sizeof c1), value_text(g->metric.base, c2, sizeof c2),
                       value_text(g->metric.cand, c3, sizeof c3));
        else
            detail_add(g, len,
                       "held-out metric worse: median per-seed change %+.4g over %d seed%s (%s); medians %s -> %s; ",
                       g->metric.effect, g->metric.n, g->metric.n == 1 ? "" : "s",
                       ci_text(&g->metric, -1, c1, sizeof c1), value_text(g->metric.base, c2, sizeof c2),
                       value_text(g->metric.cand, c3, sizeof c3));
    }
}

/* The clauses of g->detail on the step time, its median's and its mean's
 * (each per cell), where worse. */
static void time_clauses(ob_cmp_group *g, const ob_compare_opts *o, size_t *len)
{
    char c1[128];
    if (g->time.v == OB_WORSE)
        detail_add(g, len,
                   "step time worse: median per-cell change %+.0f%% over %d cell%s (%s, tolerance %.0f%%); medians "
                   "%.4g ms -> %.4g ms (each cell's step time is its run's median); ",
                   100 * g->time.effect, g->time.n, g->time.n == 1 ? "" : "s", ci_text(&g->time, 0, c1, sizeof c1),
                   100 * o->time_tol, g->time.base, g->time.cand);
    if (g->time_mean.v != OB_WORSE) return;
    /* what the median did beside it: the mean alone says slow steps now and then */
    char med[96];
    if (isnan(g->time.effect)) snprintf(med, sizeof med, "the median step time not judged");
    else
        snprintf(med, sizeof med, "the median step time's %+.0f%%%s", 100 * g->time.effect,
                 g->time_not_judged ? " (unsteady)" : "");
    char of[32] = "";
    if (g->time_mean.n < g->time_mean_cells) snprintf(of, sizeof of, " of %d", g->time_mean_cells);
    detail_add(g, len,
               "mean step time worse: median per-cell change %+.0f%% over %d%s cell%s (%s, tolerance %.0f%%), "
               "%s%s; means %.4g ms -> %.4g ms (each cell's mean over its steps after the warm-up); ",
               100 * g->time_mean.effect, g->time_mean.n, of, g->time_mean_cells == 1 ? "" : "s",
               ci_text(&g->time_mean, 0, c1, sizeof c1), 100 * o->time_mean_tol, med,
               g->time.v != OB_WORSE && fabs(g->time.effect) <= OB_TIME_MEDIAN_HELD
                   ? ": some steps are much slower than the others now" : "",
               g->time_mean.base, g->time_mean.cand);
}

/* The clauses of g->detail on the peak memory and the optimizer state,
 * where worse. */
static void memory_clauses(ob_cmp_group *g, size_t *len)
{
    char b1[32], b2[32], b3[32];
    if (g->peak_mem.v == OB_WORSE)
        detail_add(g, len, "peak memory %s -> %s (%s; %.0f -> %.0f bytes); ",
                   ob_compare_bytes(g->peak_mem.base, 0, b1, sizeof b1),
                   ob_compare_bytes(g->peak_mem.cand, 0, b2, sizeof b2),
                   ob_compare_bytes(g->peak_mem.cand - g->peak_mem.base, 1, b3, sizeof b3), g->peak_mem.base,
                   g->peak_mem.cand);
    if (g->state.v == OB_WORSE)
        detail_add(g, len, "optimizer state %s -> %s (%s; %.0f -> %.0f bytes); ",
                   ob_compare_bytes(g->state.base, 0, b1, sizeof b1), ob_compare_bytes(g->state.cand, 0, b2, sizeof b2),
                   ob_compare_bytes(g->state.cand - g->state.base, 1, b3, sizeof b3), g->state.base, g->state.cand);
}

/* The clauses of g->detail on the cells that finished in the baseline and
 * failed in the candidate, and on those that diverged in the candidate only:
 * at the judged lr and at lrs below it. */
static void cell_clauses(ob_cmp_group *g, size_t *len)
{
    if (g->n_new_failures)
        detail_add(g, len, "%d cell%s finished in the baseline and failed in the candidate (%s%s); ",
                   g->n_new_failures, g->n_new_failures == 1 ? "" : "s", g->n_new_failures == 1 ? "" : "the first: ",
                   g->new_failure);
    if (ob_cmp_new_divergences(g)) {
        detail_add(g, len,
                   "%d seed%s at lr %g diverged or ended with a non-finite loss in the candidate, not in the baseline",
                   g->n_new_diverged, g->n_new_diverged == 1 ? "" : "s", g->best_lr);
        if (g->loss.n_to_finite) detail_add(g, len, " (%d the other way)", g->loss.n_to_finite);
        detail_add(g, len, "; ");
    }
    if (ob_cmp_new_divergences_below(g)) {
        detail_add(g, len,
                   "%d cell%s at lrs below the judged %g diverged or ended with a non-finite loss in the candidate, "
                   "not in the baseline (%s%s)",
                   g->n_new_diverged_below, g->n_new_diverged_below == 1 ? "" : "s", g->best_lr,
                   g->n_new_diverged_below == 1 ? "" : "the first: ", g->new_diverged_below);
        if (g->n_to_finite_below) detail_add(g, len, " (%d the other way)", g->n_to_finite_below);
        detail_add(g, len, ": a smaller lr than one that trains; ");
    }
}

/* The group's overall verdict and its reasons (detail: one clause each,
 * "; " between them), once its quantities are final (the comparison may set
 * a mean's verdict aside). */
static void finish_group(ob_cmp_group *g, const ob_compare_opts *o)
{
    g->overall = overall_verdict(g);
    size_t len = 0;
    g->detail[0] = 0;
    /* each change is the median of the paired changes (per seed, per cell),
     * each side's value the median of its own values: labelled so, as the
     * two need not agree (the median of ratios is not the ratio of medians) */
    loss_clauses(g, &len);
    time_clauses(g, o, &len);
    memory_clauses(g, &len);
    cell_clauses(g, &len);
    if (len >= 2 && len < sizeof g->detail) g->detail[len - 2] = 0;
}

/* The keys of two JSON objects whose values differ, appended to buf as
 * " KEY A in the baseline, B in the candidate" separated by ';'. Returns how
 * many; 0 when they are not JSON objects or do not differ. */
static int json_diff(sqlite3 *db, const char *a, const char *b, char *buf, size_t n)
{
    /* leaves by path, so a changed training setting reads "train.clip_norm 0
     * in the baseline, 1 in the candidate", not the whole "train" object */
    static const char sql[] =
        "WITH a AS (SELECT CASE WHEN path = '$' THEN key ELSE replace(substr(path, 3), '\"', '') || '.' || key END "
        "           AS k, value AS v FROM json_tree(?1) WHERE type NOT IN ('object', 'array') AND fullkey <> '$'), "
        "     b AS (SELECT CASE WHEN path = '$' THEN key ELSE replace(substr(path, 3), '\"', '') || '.' || key END "
        "           AS k, value AS v FROM json_tree(?2) WHERE type NOT IN ('object', 'array') AND fullkey <> '$') "
        "SELECT a.k, a.v, (SELECT b.v FROM b WHERE b.k = a.k) FROM a "
        "WHERE a.v IS NOT (SELECT b.v FROM b WHERE b.k = a.k) "
        "UNION ALL SELECT b.k, NULL, b.v FROM b WHERE b.k NOT IN (SELECT k FROM a)";
    size_t len = strlen(buf);
    sqlite3_stmt *q = NULL;
    int k = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, a, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, b, -1, SQLITE_STATIC);
        while (sqlite3_step(q) == SQLITE_ROW && len < n) {
            const char *key = (const char *)sqlite3_column_text(q, 0);
            const char *vb = (const char *)sqlite3_column_text(q, 1);
            const char *vc = (const char *)sqlite3_column_text(q, 2);
            len += (size_t)snprintf(buf + len, n - len, "%s %s %s in the baseline, %s in the candidate",
                                    k++ ? ";" : "", key ? key : "?", vb ? vb : "(absent)", vc ? vc : "(absent)");
        }
    }
    sqlite3_finalize(q);
    return k;
}

/* Among baseline runs ib[0..nb) and candidate runs ic[0..nc) (NULL: all of
 * them): the first baseline cell that would match a candidate
 * cell but for its workload parameters, and the parameters that differ, as
 * "; e.g. quadratic's workload parameters differ: noise 0.01 in the baseline,
 * 2 in the candidate"; else the first that would match but for its number of
 * steps. Empty when there is none. */
static void params_hint(sqlite3 *db, const ob_dataset *B, const int *ib, int nb, const ob_dataset *C,
                        const int *ic, int nc, char *buf, size_t n)
{
    buf[0] = 0;
    const ob_rrun *hb = NULL, *hc = NULL, *sb = NULL, *sc = NULL;
    for (int i = 0; i < nb && !hb; i++)
        for (int j = 0; j < nc && !hb; j++) {
            const ob_rrun *rb = &B->runs[ib ? ib[i] : i], *rc = &C->runs[ic ? ic[j] : j];
            if (strcmp(rb->workload, rc->workload) || strcmp(rb->optimizer, rc->optimizer) ||
                rb->lr != rc->lr || rb->seed != rc->seed)
                continue;
            if (strcmp(rb->wl_params, rc->wl_params)) {
                hb = rb;
                hc = rc;
            } else if (!sb && rb->steps != rc->steps) {
                sb = rb;
                sc = rc;
            }
        }
    if (!hb) {
        if (sb)
            snprintf(buf, n, "; e.g. %s with %s ran %lld steps in the baseline, %lld in the candidate (final "
                             "losses after different numbers of steps do not compare)",
                     sb->workload, sb->optimizer, (long long)sb->steps, (long long)sc->steps);
        return;
    }
    size_t len = (size_t)snprintf(buf, n, "; e.g. %s's workload parameters differ:", hb->workload);
    if (json_diff(db, hb->workload_params, hc->workload_params, buf, n) == 0 && len < n)
        snprintf(buf + len, n - len, " %s in the baseline, %s in the candidate", hb->workload_params,
                 hc->workload_params); /* not JSON objects: the texts */
}

/* When no cell matches and params_hint finds nothing: the pair of runs of
 * one workload and optimizer that differs in the fewest of lr, seed, steps,
 * workload parameters and hyperparameters, and each of those that differ, as
 * "; e.g. quadratic with sgd: lr 0.01 in the baseline, 0.02 in the candidate;
 * steps 10 in the baseline, 20 in the candidate"; or that no workload x
 * optimizer pair is in both. */
static void nearest_hint(sqlite3 *db, const ob_dataset *B, const ob_dataset *C, char *buf, size_t n)
{
    buf[0] = 0;
    const ob_rrun *hb = NULL, *hc = NULL;
    int best = 6;
    /* an example, not a search: the first 2000 runs of each side at most */
    const int nb = B->n < 2000 ? B->n : 2000, nc = C->n < 2000 ? C->n : 2000;
    for (int i = 0; i < nb && best > 1; i++)
        for (int j = 0; j < nc && best > 1; j++) {
            const ob_rrun *rb = &B->runs[i], *rc = &C->runs[j];
            if (strcmp(rb->workload, rc->workload) || strcmp(rb->optimizer, rc->optimizer)) continue;
            const int d = (rb->lr != rc->lr) + (rb->seed != rc->seed) + (rb->steps != rc->steps) +
                          (strcmp(rb->wl_params, rc->wl_params) != 0) + (strcmp(rb->opt_key, rc->opt_key) != 0);
            /* d == 0: texts that differ only in how they are written; nothing to name */
            if (d > 0 && d < best) {
                best = d;
                hb = rb;
                hc = rc;
            }
        }
    if (!hb) {
        int shared = 0; /* is any workload x optimizer pair in both (only alike runs) */
        for (int i = 0; i < nb && !shared; i++)
            for (int j = 0; j < nc && !shared; j++)
                shared = !strcmp(B->runs[i].workload, C->runs[j].workload) &&
                         !strcmp(B->runs[i].optimizer, C->runs[j].optimizer);
        if (!shared) snprintf(buf, n, "; no workload x optimizer pair is in both");
        return;
    }
    size_t len = (size_t)snprintf(buf, n, "; e.g. %s with %s:", hb->workload, hb->optimizer);
    int k = 0;
    if (len < n && hb->lr != hc->lr)
        len += (size_t)snprintf(buf + len, n - len, "%s lr %.6g in the baseline, %.6g in the candidate", k++ ? ";" : "",
                                hb->lr, hc->lr);
    if (len < n && hb->seed != hc->seed)
        len += (size_t)snprintf(buf + len, n - len, "%s seed %lld in the baseline, %lld in the candidate",
                                k++ ? ";" : "", (long long)hb->seed, (long long)hc->seed);
    if (len < n && hb->steps != hc->steps)
        len += (size_t)snprintf(buf + len, n - len, "%s steps %lld in the baseline, %lld in the candidate",
                                k++ ? ";" : "", (long long)hb->steps, (long long)hc->steps);
    if (len < n && strcmp(hb->wl_params, hc->wl_params)) {
        len += (size_t)snprintf(buf + len, n - len, "%s workload parameters:", k++ ? ";" : "");
        if (len < n && json_diff(db, hb->workload_params, hc->workload_params, buf, n) == 0)
            snprintf(buf + strlen(buf), n - strlen(buf), " %s in the baseline, %s in the candidate",
                     hb->workload_params, hc->workload_params);
        len = strlen(buf);
    }
    if (len < n && strcmp(hb->opt_key, hc->opt_key)) {
        len += (size_t)snprintf(buf + len, n - len, "%s hyperparameters:", k++ ? ";" : "");
        if (len < n && json_diff(db, hb->opt_key, hc->opt_key, buf, n) == 0)
            snprintf(buf + strlen(buf), n - strlen(buf), " %s in the baseline, %s in the candidate", hb->opt_key,
                     hc->opt_key);
    }
}

static ob_status add_cell(ob_cmp_cell **list, int *n, const ob_dataset *d, int run, ob_err *e)
{
    ob_cmp_cell *l = realloc(*list, (size_t)(*n + 1) * sizeof **list);
    if (!l) return no_mem(e);
    *list = l;
    const ob_rrun *r = &d->runs[run];
    ob_cmp_cell c = {.workload = strdup(d->wl_labels[r->wl]), .optimizer = strdup(d->opt_labels[r->opt]),
                     .status = strdup(r->status), .lr = r->lr, .seed = r->seed};
    if (!c.workload || !c.optimizer || !c.status) {
        free(c.workload);
        free(c.optimizer);
        free(c.status);
        return no_mem(e);
    }
    (*list)[(*n)++] = c;
    return OB_OK;
}

/* Whether the benchmarks of db that sel names (as ob_dataset_load: 0 all,
 * -1 latest, > 0 that one) hold only part of their matrix: one shard of it
 * (run --shard), or a merge of shards that lacks some. Says which into why
 * ("" none). */
static void partial_matrix(sqlite3 *db, int64_t sel, char *why, size_t n)
{
    why[0] = '\0';
    sqlite3_stmt *q = NULL;
    /* the matrix's cells: a shard's provenance holds them, a merge's sources' */
    if (sqlite3_prepare_v2(
            db,
            /* a shard's own cells are in its provenance; a merge's are its
             * shard sources' (sources not run as shards record none: a merge
             * of whole databases is whole) */
            "WITH m AS (SELECT id, shard, CASE WHEN NOT json_valid(provenance) THEN NULL "
            "WHEN json_type(provenance, '$.sources') IS NOT NULL THEN (SELECT max(json_extract(s.value, "
            "'$.provenance.cells')) FROM json_each(provenance, '$.sources') s WHERE json_extract(s.value, '$.shard') "
            "IS NOT NULL) WHEN shard IS NOT NULL THEN json_extract(provenance, '$.cells') END AS cells "
            "FROM benchmarks WHERE (?1 = 0 OR id = (CASE WHEN ?1 < 0 THEN (SELECT max(id) FROM benchmarks) "
            "ELSE ?1 END))) "
            /* the matrix's own cells: sweep runs (a confirmation run's cell is past them) */
            "SELECT m.id, m.shard, m.cells, (SELECT count(DISTINCT r.cell) FROM runs r WHERE r.benchmark_id = m.id "
            "AND r.stage IS NULL AND r.cell >= 0 AND r.cell < m.cells) FROM m WHERE m.cells > 0 AND m.id IN "
            "(SELECT benchmark_id FROM runs) ORDER BY m.id",
            -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return;
    }
    sqlite3_bind_int64(q, 1, sel);
    while (!why[0] && sqlite3_step(q) == SQLITE_ROW) {
        const long long id = sqlite3_column_int64(q, 0), cells = sqlite3_column_int64(q, 2),
                        have = sqlite3_column_int64(q, 3);
        const char *shard = (const char *)sqlite3_column_text(q, 1);
        if (shard && have < cells)
            snprintf(why, n, "its benchmark %lld is shard %s of its matrix (%lld of its %lld cells): compare the "
                     "merge of every shard's database (optbench merge --out ALL.db ...)", id, shard, have, cells);
        else if (!shard && have < cells)
            snprintf(why, n, "its benchmark %lld holds %lld of its matrix's %lld cells (a merge that lacks a shard): "
                     "merge every shard's database, or run the missing cells on it with the same run command and "
                     "--resume", id, have, cells);
    }
    sqlite3_finalize(q);
}

/* The database id optbench gave db (meta.database_id, copied with it) into
 * buf; "" where it has none. */
static void database_id(sqlite3 *db, char *buf, size_t n)
{
    buf[0] = '\0';
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'database_id'", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
}

/* Are B's runs C's, run by run: one database (or a copy, by its id) and the
 * same benchmarks' runs with the same results? */
static int same_runs(sqlite3 *base, sqlite3 *cand, int same_file, const ob_dataset *B, const ob_dataset *C)
{
    if (B->n != C->n || B->n == 0) return 0;
    char ib[80], ic[80];
    database_id(base, ib, sizeof ib);
    database_id(cand, ic, sizeof ic);
    if (base != cand && !same_file && (!ib[0] || strcmp(ib, ic) != 0)) return 0;
    for (int i = 0; i < B->n; i++) {
        const ob_rrun *a = &B->runs[i], *b = &C->runs[i];
        /* every value compare judges, bit for bit (a copy edited to plant a
         * change is another candidate) */
        const double va[] = {a->final_loss, a->eval_loss, a->eval_metric, a->step_ms_median, a->step_ms_mean},
                     vb[] = {b->final_loss, b->eval_loss, b->eval_metric, b->step_ms_median, b->step_ms_mean};
        if (a->id != b->id || a->benchmark_id != b->benchmark_id || strcmp(a->status, b->status) != 0 ||
            memcmp(va, vb, sizeof va) != 0 || a->peak_mem_bytes != b->peak_mem_bytes ||
            a->state_bytes != b->state_bytes || a->steps_done != b->steps_done || a->lr != b->lr ||
            strcmp(a->hparams ? a->hparams : "", b->hparams ? b->hparams : "") != 0 ||
            strcmp(a->device ? a->device : "", b->device ? b->device : "") != 0)
            return 0;
    }
    return 1;
}

/* The two databases' datasets into B and C (ob_dataset_load: the latest
 * finished run per cell), unless the candidate's runs are the baseline's
 * own, which is no verdict. On failure neither stays loaded. */
static ob_status load_sides(sqlite3 *base, sqlite3 *cand, const ob_compare_opts *o, ob_dataset *B, ob_dataset *C,
                            ob_err *e)
{
    if (ob_dataset_load(base, o->base_bench, B, e) != OB_OK) return ob_err_prefix(e, "the baseline database: ");
    ob_status st = ob_dataset_load(cand, o->cand_bench, C, e);
    if (st != OB_OK) {
        ob_dataset_free(B);
        return ob_err_prefix(e, "the candidate database: ");
    }
    if (same_runs(base, cand, o->same_file, B, C)) {
        /* a CI script whose two paths came out the same, or a copy of the
         * baseline given as the candidate: every cell matches itself, and a
         * verdict would say nothing */
        st = ob_fail(e, OB_ERR_INPUT, "the candidate's runs are the baseline's own (%s): comparing them judges "
                     "nothing; give the database (or --candidate-benchmark) of the run to judge",
                     "the same database, or a copy of it: one database id, the same runs");
        ob_dataset_free(B);
        ob_dataset_free(C);
        return st;
    }
    return OB_OK;
}

/* Sets each side's confirmation runs aside (counted in out), then refuses a
 * side left without runs, or one that holds part of a matrix. */
static ob_status check_sides(sqlite3 *base, sqlite3 *cand, const ob_compare_opts *o, ob_compare *out, ob_dataset *B,
                             ob_dataset *C, ob_err *e)
{
    /* The confirmation runs sit at whichever lr won each side's sweep, so
     * their cells match only when the winners agree: compare the sweeps. */
    out->n_confirm_base = ob_dataset_drop_confirm(B, NULL);
    out->n_confirm_cand = ob_dataset_drop_confirm(C, &out->n_confirm_cand_unfinished);
    if (B->n == 0 || C->n == 0) {
        const int64_t id = B->n == 0 ? o->base_bench : o->cand_bench;
        if (id > 0)
            return ob_fail(e, OB_ERR_INPUT, "the %s database has no benchmark %lld with runs (optbench history --db "
                           "FILE lists its benchmarks)", B->n == 0 ? "baseline" : "candidate", (long long)id);
        return ob_fail(e, OB_ERR_INPUT, "the %s database holds no runs to compare",
                       B->n == 0 ? "baseline" : "candidate");
    }
    for (int side = 0; side < 2; side++) {
        /* a shard, or a merge that lacks one: cells the other side has look
         * like cells the night dropped (or, with --strict, a regression) */
        char why[400];
        partial_matrix(side ? cand : base, side ? o->cand_bench : o->base_bench, why, sizeof why);
        if (why[0])
            return ob_fail(e, OB_ERR_INPUT, "the %s database is part of a matrix: %s; no verdict on part of a "
                           "matrix", side ? "candidate" : "baseline", why);
    }
    return OB_OK;
}

/* Each side's benchmarks whose runs are used, and its rows set aside
 * (superseded, masked), into out for the notes. */
static void count_benchmarks(ob_compare *out, const ob_dataset *B, const ob_dataset *C)
{
    for (int side = 0; side < 2; side++) {
        const ob_dataset *d = side ? C : B;
        int nb = 0;
        for (int r = 0; r < d->n; r++) {
            int seen = 0;
            for (int q = 0; q < r && !seen; q++) seen = d->runs[q].benchmark_id == d->runs[r].benchmark_id;
            nb += !seen;
        }
        *(side ? &out->n_bench_cand : &out->n_bench_base) = nb;
        *(side ? &out->n_superseded_cand : &out->n_superseded_base) = d->n_superseded;
        *(side ? &out->n_masked_cand : &out->n_masked_base) = d->n_masked;
    }
}

/* The cells of the two sides as they are matched: each side's keys
 * (sorted), the pairs of runs matched and each pair's group key (the
 * baseline cell's, owned by kb), and the cells of each side not matched:
 * indices into kb and kc (-1 once matched) until list_one_sided makes them
 * run indices. */
typedef struct matching {
    keyed *kb, *kc;
    pair *pairs;
    char **pg;
    int np;
    int *ub, *uc;
    int nub, nuc;
} matching;

/* m's keys and room for its pairs and unmatched cells; what could be made is
 * kept for matching_free when out of memory. */
static ob_status matching_alloc(matching *m, const ob_dataset *B, const ob_dataset *C, ob_err *e)
{
    memset(m, 0, sizeof *m);
    m->kb = make_keys(B);
    m->kc = make_keys(C);
    m->pairs = malloc(((size_t)B->n + 1) * sizeof *m->pairs);
    m->pg = malloc(((size_t)B->n + 1) * sizeof *m->pg);
    m->ub = malloc(((size_t)B->n + 1) * sizeof *m->ub);
    m->uc = malloc(((size_t)C->n + 1) * sizeof *m->uc);
    if (!m->kb || !m->kc || !m->pairs || !m->pg || !m->ub || !m->uc) return no_mem(e);
    return OB_OK;
}

/* Frees what matching_alloc made of m, all or part. */
static void matching_free(matching *m, const ob_dataset *B, const ob_dataset *C)
{
    free(m->ub);
    free(m->uc);
    free(m->pairs);
    free(m->pg);
    free_keys(m->kb, B->n);
    free_keys(m->kc, C->n);
}

/* First pass: the cells of one key on both sides are a pair; the others
 * are unmatched (ub, uc). */
static void match_exact(matching *m, const ob_dataset *B, const ob_dataset *C)
{
    int i = 0, j = 0;
    while (i < B->n || j < C->n) {
        int c = i >= B->n ? 1 : j >= C->n ? -1 : strcmp(m->kb[i].key, m->kc[j].key);
        if (c == 0) {
            m->pairs[m->np] = (pair){m->kb[i].run, m->kc[j].run};
            m->pg[m->np++] = m->kb[i].gkey;
            i++;
            j++;
        } else if (c < 0) {
            m->ub[m->nub++] = i++;
        } else {
            m->uc[m->nuc++] = j++;
        }
    }
}

/* Second pass: the same workload, optimizer, lr and seed whose hyperparameter
 * text differs (a hyperparameter was added, or a default changed), when that
 * pairing is unambiguous on both sides, and not across configurations of a
 * sweep: labels that differ (adam beta2=0.999, adam beta2=0.99) are other
 * configurations, not one whose default moved. Counted in out, the first
 * pair's differences in its relaxed_note. */
static void match_relaxed(sqlite3 *base, const ob_dataset *B, const ob_dataset *C, ob_compare *out, matching *m)
{
    for (int a = 0; a < m->nub; a++) {
        const ob_rrun *rb = &B->runs[m->kb[m->ub[a]].run];
        int hit = -1, n_hit = 0, n_twin = 0;
        for (int b = 0; b < m->nuc; b++) {
            if (m->uc[b] < 0) continue;
            const ob_rrun *rc = &C->runs[m->kc[m->uc[b]].run];
            if (!strcmp(rb->workload, rc->workload) && !strcmp(rb->wl_params, rc->wl_params) &&
                !strcmp(rb->optimizer, rc->optimizer) && rb->lr == rc->lr && rb->seed == rc->seed &&
                rb->steps == rc->steps && !strcmp(B->opt_labels[rb->opt], C->opt_labels[rc->opt])) {
                hit = b;
                n_hit++;
            }
        }
        for (int a2 = 0; a2 < m->nub; a2++) {
            if (a2 == a || m->ub[a2] < 0) continue;
            const ob_rrun *r2 = &B->runs[m->kb[m->ub[a2]].run];
            n_twin += !strcmp(rb->workload, r2->workload) && !strcmp(rb->wl_params, r2->wl_params) &&
                      !strcmp(rb->optimizer, r2->optimizer) && rb->lr == r2->lr && rb->seed == r2->seed &&
                      rb->steps == r2->steps;
        }
        if (n_hit != 1 || n_twin != 0) continue;
        m->pairs[m->np] = (pair){m->kb[m->ub[a]].run, m->kc[m->uc[hit]].run};
        m->pg[m->np++] = m->kb[m->ub[a]].gkey;
        if (out->n_relaxed++ == 0) {
            const ob_rrun *rc = &C->runs[m->kc[m->uc[hit]].run];
            snprintf(out->relaxed_note, sizeof out->relaxed_note, "e.g. %s on %s:", rb->optimizer, rb->workload);
            if (json_diff(base, rb->hparams, rc->hparams, out->relaxed_note, sizeof out->relaxed_note) == 0)
                out->relaxed_note[0] = 0;
        }
        m->ub[a] = -1;
        m->uc[hit] = -1;
    }
}

/* The cells left unmatched, as run indices (ub, uc), each listed in out
 * (only_base, only_cand); a note (only_note) when some are the same cells
 * but for workload parameters or steps, so that a changed matrix does not
 * pass unremarked. */
static ob_status list_one_sided(sqlite3 *base, const ob_dataset *B, const ob_dataset *C, ob_compare *out, matching *m,
                                ob_err *e)
{
    int mb = 0, mc = 0;
    for (int a = 0; a < m->nub; a++)
        if (m->ub[a] >= 0) m->ub[mb++] = m->kb[m->ub[a]].run;
    for (int b = 0; b < m->nuc; b++)
        if (m->uc[b] >= 0) m->uc[mc++] = m->kc[m->uc[b]].run;
    m->nub = mb;
    m->nuc = mc;
    if (m->nub && m->nuc) params_hint(base, B, m->ub, m->nub, C, m->uc, m->nuc, out->only_note, sizeof out->only_note);
    ob_status st = OB_OK;
    for (int a = 0; a < m->nub && st == OB_OK; a++) st = add_cell(&out->only_base, &out->n_only_base, B, m->ub[a], e);
    for (int b = 0; b < m->nuc && st == OB_OK; b++) st = add_cell(&out->only_cand, &out->n_only_cand, C, m->uc[b], e);
    return st;
}

/* The matched cells whose two runs ran on different devices, for the note:
 * how many, on other backends, layouts and devices of one backend, and the
 * first pair of devices (device_mixed: not all that pair). */
static void note_devices(ob_compare *out, const ob_dataset *B, const ob_dataset *C, const pair *pairs, int np)
{
    for (int a = 0; a < np; a++) {
        const ob_rrun *rb = &B->runs[pairs[a].b], *rc = &C->runs[pairs[a].c];
        int d = device_differs(rb, rc);
        if (!d) continue;
        char tb[sizeof out->device_base], tc[sizeof out->device_cand];
        device_name(rb, tb, sizeof tb);
        device_name(rc, tc, sizeof tc);
        if (out->n_device_differs++ == 0) {
            snprintf(out->device_base, sizeof out->device_base, "%s", tb);
            snprintf(out->device_cand, sizeof out->device_cand, "%s", tc);
        } else if (strcmp(tb, out->device_base) || strcmp(tc, out->device_cand)) {
            out->device_mixed = 1;
        }
        out->n_backend_differs += d == 2;
        out->n_layout_differs += d != 2 && layout_differs(rb, rc);
        out->n_memdev_differs += mem_differs(rb, rc) == 1;
    }
}

/* No cell matched: unusable input, with a hint at what differs (params_hint,
 * else nearest_hint). */
static ob_status no_match(sqlite3 *base, const ob_dataset *B, const ob_dataset *C, ob_err *e)
{
    char why[640];
    params_hint(base, B, NULL, B->n, C, NULL, C->n, why, sizeof why);
    if (!why[0]) nearest_hint(base, B, C, why, sizeof why);
    return ob_fail(e, OB_ERR_INPUT,
                   "no cell of the candidate matches the baseline (same workload, workload parameters, "
                   "optimizer, hyperparameters, lr, seed and steps): %d baseline and %d candidate cells%s",
                   B->n, C->n, why);
}

/* A new group of out, workload label w and optimizer label op of B, zeroed
 * but for its labels, into *g. */
static ob_status new_group(ob_compare *out, const ob_dataset *B, int w, int op, ob_cmp_group **g, ob_err *e)
{
    ob_cmp_group *gs = realloc(out->g, (size_t)(out->n_g + 1) * sizeof *out->g);
    if (!gs) return no_mem(e);
    out->g = gs;
    *g = &out->g[out->n_g];
    memset(*g, 0, sizeof **g);
    (*g)->busy_base = (*g)->busy_cand = NAN;
    (*g)->workload = strdup(B->wl_labels[w]);
    (*g)->optimizer = strdup(B->opt_labels[op]);
    if (!(*g)->workload || !(*g)->optimizer) {
        free((*g)->workload);
        free((*g)->optimizer);
        return no_mem(e);
    }
    out->n_g++;
    return OB_OK;
}

/* The baseline's own best lr, over its cells the candidate lacks too, into
 * g->base_best_unmatched (NaN where it is the lr judged, or not known): a
 * group of workload label w, optimizer label op and pairs gp[0..n). */
static void base_best_unmatched(const ob_dataset *B, int w, int op, const pair *gp, int n, ob_cmp_group *g)
{
    g->base_best_unmatched = NAN;
    double *xs = g->lr_from == 0 ? malloc(((size_t)B->n + 1) * sizeof *xs) : NULL;
    if (!xs) return;
    const double all = best_lr_all(B, w, op, B->runs[gp[0].b].steps, xs);
    /* unmatched: no matched cell has that lr (fewer seeds in the
     * candidate can move a median's winner without any lr missing) */
    int matched = 0;
    for (int q = 0; q < n && !matched; q++) matched = B->runs[gp[q].b].lr == all;
    if (!isnan(all) && all != g->best_lr && !matched) g->base_best_unmatched = all;
    free(xs);
}

/* The matched pairs in groups (one group key each), in the baseline's order
 * of workload and optimizer label, each judged (judge_group) into out->g. */
static ob_status judge_groups(const ob_dataset *B, const ob_dataset *C, const matching *m, const ob_compare_opts *o,
                              ob_compare *out, ob_err *e)
{
    const int np = m->np;
    char *used = calloc((size_t)np, 1);
    pair *gp = malloc((size_t)np * sizeof *gp);
    ob_status st = OB_OK;
    if (!used || !gp) st = no_mem(e);
    for (int w = 0; w < B->n_wl && st == OB_OK; w++)
        for (int op = 0; op < B->n_opt && st == OB_OK; op++)
            for (int a = 0; a < np && st == OB_OK; a++) {
                if (used[a]) continue;
                const ob_rrun *r = &B->runs[m->pairs[a].b];
                if (r->wl != w || r->opt != op) continue;
                int n = 0;
                for (int b = a; b < np; b++)
                    if (!used[b] && !strcmp(m->pg[b], m->pg[a])) {
                        gp[n++] = m->pairs[b];
                        used[b] = 1;
                    }
                ob_cmp_group *g = NULL;
                if ((st = new_group(out, B, w, op, &g, e)) != OB_OK) break;
                if ((st = judge_group(B, C, gp, n, o, g, e)) != OB_OK) break;
                base_best_unmatched(B, w, op, gp, n, g);
            }
    free(used);
    free(gp);
    return st;
}

/* A shift common to every judged group: the machine rather than one
 * optimizer; for the mean, stalls of a busy machine raise every group's
 * (out->time_shift, out->time_mean_shift). */
static ob_status time_shifts(ob_compare *out, const ob_compare_opts *o, ob_err *e)
{
    double *eff = malloc(((size_t)out->n_g + 1) * sizeof *eff);
    const int have = eff != NULL;
    out->time_shift = common_shift(out, 0, o->time_tol, eff);
    out->time_mean_shift = common_shift(out, 1, o->time_mean_tol, eff);
    free(eff);
    return have ? OB_OK : no_mem(e);
}

/* Do the groups judged on their mean step time span two optimizers and two
 * workloads at least, and are they most of the timed groups? */
static int means_spread(const ob_compare *out)
{
    int timed_groups = 0, judged = 0, two_wl = 0, two_opt = 0;
    const char *wl = NULL, *opt = NULL; /* the first judged group's */
    for (int k = 0; k < out->n_g; k++) {
        const ob_cmp_group *g = &out->g[k];
        timed_groups += g->time_cells > 0;
        if (g->time_mean.v == OB_NODATA) continue;
        judged++;
        if (!wl) {
            wl = g->workload;
            opt = g->optimizer;
        }
        two_wl |= strcmp(wl, g->workload) != 0;
        two_opt |= strcmp(opt, g->optimizer) != 0;
    }
    return two_wl && two_opt && 2 * judged > timed_groups;
}

/* The means' verdicts set aside as inconclusive (mean_shift_spread, each
 * group's time_mean_machine) where every group's mean moved together and
 * the medians did not: short stalls of one side's machine look like that (the mean carries
 * them, the median does not); a change that makes every optimizer's
 * steps slow now and then does too, and the two cannot be told
 * apart here, so the means' verdicts are inconclusive, not failures.
 * Only where the groups judged on their mean span two optimizers and
 * two workloads at least and are most of the timed groups: a
 * slow-step regression of one optimizer, or of one workload, fails.
 * A group whose median verdict says the same (slower, or faster) is
 * judged on it and keeps its mean's verdict. */
static void set_aside_mean_shift(ob_compare *out)
{
    out->mean_shift_spread = !isnan(out->time_mean_shift) && isnan(out->time_shift);
    if (out->mean_shift_spread) out->mean_shift_spread = means_spread(out);
    const ob_verdict shift_way = out->time_mean_shift > 0 ? OB_WORSE : OB_BETTER;
    if (out->mean_shift_spread)
        for (int k = 0; k < out->n_g; k++) {
            ob_cmp_quantity *q = &out->g[k].time_mean;
            if (q->v != OB_WORSE && q->v != OB_BETTER) continue;
            if (out->g[k].time.v == shift_way) continue;
            q->v = OB_SAME;
            q->unsure = 1;
            out->g[k].time_mean_machine = 1;
            out->n_time_mean_machine++;
        }
}

/* Each group's overall verdict (finish_group), the totals over the groups,
 * and the gate's answer: a regression, or incomplete. */
static void finish_comparison(ob_compare *out, const ob_compare_opts *o)
{
    for (int k = 0; k < out->n_g; k++) {
        ob_cmp_group *g = &out->g[k];
        finish_group(g, o);
        if (g->overall == OB_WORSE) out->n_worse++;
        if (g->overall == OB_BETTER) out->n_better++;
        out->n_base_unfinished += g->n_base_unfinished;
        out->n_cand_unfinished += g->n_new_unfinished;
    }
    out->regression = out->n_worse > 0 ||
                      (o->strict && (out->n_only_base || out->n_only_cand || out->n_base_unfinished));
    out->incomplete = !out->regression && (out->n_cand_unfinished > 0 || out->n_confirm_cand_unfinished > 0);
}

ob_status ob_compare_dbs(sqlite3 *base, sqlite3 *cand, const ob_compare_opts *o, ob_compare *out,
                         ob_err *e)
{
    memset(out, 0, sizeof *out);
    out->opts = *o;
    out->time_shift = out->time_mean_shift = NAN;
    ob_dataset B, C;
    ob_status st = load_sides(base, cand, o, &B, &C, e);
    if (st != OB_OK) return st;
    if ((st = check_sides(base, cand, o, out, &B, &C, e)) != OB_OK) {
        ob_dataset_free(&B);
        ob_dataset_free(&C);
        return st;
    }
    count_benchmarks(out, &B, &C);
    matching m;
    if ((st = matching_alloc(&m, &B, &C, e)) == OB_OK) {
        match_exact(&m, &B, &C);
        match_relaxed(base, &B, &C, out, &m);
        st = list_one_sided(base, &B, &C, out, &m, e);
    }
    if (st == OB_OK) {
        out->n_matched = m.np;
        note_devices(out, &B, &C, m.pairs, m.np);
        if (m.np == 0) {
            st = no_match(base, &B, &C, e);
        } else if ((st = judge_groups(&B, &C, &m, o, out, e)) == OB_OK) {
            for (int k = 0; k < out->n_g; k++) {
                out->n_time_not_judged += out->g[k].time_not_judged;
                out->n_time_busy += out->g[k].time_not_judged && out->g[k].time_busy_most && !out->g[k].time_apart;
            }
            if ((st = time_shifts(out, o, e)) == OB_OK) {
                set_aside_mean_shift(out);
                finish_comparison(out, o);
            }
        }
    }
    matching_free(&m, &B, &C);
    ob_dataset_free(&B);
    ob_dataset_free(&C);
    if (st != OB_OK) ob_compare_free(out);
    return st;
}

void ob_compare_free(ob_compare *c)
{
    for (int i = 0; i < c->n_g; i++) {
        free(c->g[i].workload);
        free(c->g[i].optimizer);
    }
    free(c->g);
    for (int k = 0; k < 2; k++) {
        ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        for (int i = 0; i < n; i++) {
            free(l[i].workload);
            free(l[i].optimizer);
            free(l[i].status);
        }
        free(l);
    }
    memset(c, 0, sizeof *c);
}
