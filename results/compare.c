/* results/compare.c - candidate vs baseline (see compare.h for the rules).
 *
 * Both databases are loaded as datasets (latest finished run per cell); the
 * cells are matched by a key string after sorting both sides; groups are
 * formed from the baseline's identity of each matched cell; each quantity gets
 * a verdict, and the three report writers print the same judgement.
 */
#include "results/compare.h"

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

/* A change in a report: relative ones in percent with dig decimals
 * ("+1.5%"), absolute ones (dig < 0) as "+0.0123". */
static const char *change_text(double v, int dig, char *buf, size_t n)
{
    if (dig >= 0) snprintf(buf, n, "%+.*f%%", dig, 100 * v);
    else snprintf(buf, n, "%+.4g", v);
    return buf;
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
    change_text(q->ci_lo, dig, a, sizeof a);
    change_text(q->ci_hi, dig, b, sizeof b);
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

/* Did more seeds at the judged lr newly diverge (or end non-finite) than
 * newly converge? Rounding alone moves the edge of stability both ways, so
 * a seed that now diverges offsets one that now converges; the final loss,
 * which counts both as infinite changes, judges them then. */
static int new_divergences(const ob_cmp_group *g) { return g->n_new_diverged > g->loss.n_to_finite; }

/* Did more cells at lrs below the judged one newly diverge than newly
 * converge? There a larger lr trains on both sides, so the edge of
 * stability is not what moved. */
static int new_divergences_below(const ob_cmp_group *g) { return g->n_new_diverged_below > g->n_to_finite_below; }

static void infinite_text(const ob_cmp_quantity *q, int sign, const char *word, char *buf, size_t n);

/* The group's overall verdict, from its quantities' and its cells': worse
 * where any is, else better where any is, else the same (no data when the
 * group is not judged, lr_from 3). */
static ob_verdict overall_verdict(const ob_cmp_group *g)
{
    const ob_cmp_quantity *qs[6] = {&g->loss, &g->metric, &g->time, &g->time_mean, &g->peak_mem, &g->state};
    /* cells not finished in the candidate make no verdict of their own
     * (ob_compare.incomplete): a stopped run is not slower code */
    int worse = g->n_new_failures > 0 || new_divergences(g) || new_divergences_below(g), better = 0;
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
        if (!new_divergences(g)) {
            infinite_text(&g->metric, 1, "diverged", c1, sizeof c1);
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
    if (new_divergences(g)) {
        detail_add(g, len,
                   "%d seed%s at lr %g diverged or ended with a non-finite loss in the candidate, not in the baseline",
                   g->n_new_diverged, g->n_new_diverged == 1 ? "" : "s", g->best_lr);
        if (g->loss.n_to_finite) detail_add(g, len, " (%d the other way)", g->loss.n_to_finite);
        detail_add(g, len, "; ");
    }
    if (new_divergences_below(g)) {
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

/* A group a CI's test view shows as skipped: nothing judged (no quantity
 * has a verdict), nothing worse and nothing unfinished. */
static int junit_skipped(const ob_cmp_group *g)
{
    if (g->overall == OB_WORSE || g->n_new_unfinished > 0) return 0;
    const ob_cmp_quantity *q[] = {&g->loss, &g->metric, &g->time, &g->peak_mem, &g->state};
    for (int k = 0; k < 5; k++)
        if (q[k]->v != OB_NODATA) return 0;
    return 1;
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

/* ---- writers ------------------------------------------------------------------- */

static const char *pct(double v, char *buf, size_t n)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "+inf" : "-inf");
    else snprintf(buf, n, "%+.1f%%", 100 * v);
    return buf;
}

/* The seeds whose change is infinite, in words: "now finite (diverged
 * before)", "now diverged on 2 of 3 seeds (finite before)" when the median
 * is infinite (sign: 1 when its value is now not finite, -1 when now finite,
 * whichever sign the change has), else "1 of 3 seeds now finite, 1 now
 * diverged" (sign 0). word: what a value that is not finite means. */
static void infinite_text(const ob_cmp_quantity *q, int sign, const char *word, char *buf, size_t n)
{
    if (sign) {
        int k = sign < 0 ? q->n_to_finite : q->n_to_inf;
        char on[48] = "";
        if (k != q->n) snprintf(on, sizeof on, " on %d of %d seeds", k, q->n);
        if (sign < 0) snprintf(buf, n, "now finite%s (%s before)", on, word);
        else snprintf(buf, n, "now %s%s (finite before)", word, on);
        return;
    }
    int len = snprintf(buf, n, "%d of %d seeds now ", q->n_to_finite ? q->n_to_finite : q->n_to_inf, q->n);
    if (len < 0 || (size_t)len >= n) return;
    if (q->n_to_finite && q->n_to_inf) snprintf(buf + len, n - (size_t)len, "finite, %d now %s", q->n_to_inf, word);
    else snprintf(buf + len, n - (size_t)len, "%s", q->n_to_finite ? "finite" : word);
}

/* A quantity's cell: "+1.5% [+0.5%, +2.5%] worse" (relative) or "+0.02
 * [+0.01, +0.03] worse" (absolute). An infinite change (a value not finite
 * on one side: word says what that means, e.g. "diverged") is told in words,
 * never as an infinite percentage. */
static void quantity_text(const ob_cmp_quantity *q, int absolute, const char *word, char *buf, size_t n)
{
    char a[32], b[32], c[32], w[96];
    if (q->v == OB_NODATA) {
        snprintf(buf, n, "-");
        return;
    }
    /* a change beyond the tolerance that the seeds do not settle */
    const char *vn = q->unsure ? "inconclusive" : ob_verdict_name(q->v);
    int dig = absolute ? -1 : 1;
    change_text(q->effect, dig, a, sizeof a);
    if (isinf(q->effect)) {
        /* the sign of the change that makes a value not finite: +inf for a
         * loss, -inf for the metric (higher is better) */
        const int to_inf = (q->effect > 0) != q->higher_better;
        infinite_text(q, to_inf ? 1 : -1, word, w, sizeof w);
        if (snprintf(buf, n, "%s %s", w, vn) >= (int)n) buf[n - 1] = '\0';
    } else if (isinf(q->ci_lo) || isinf(q->ci_hi)) {
        infinite_text(q, 0, word, w, sizeof w);
        if (snprintf(buf, n, "%s (%s) %s", a, w, vn) >= (int)n) buf[n - 1] = '\0';
    } else if (!isnan(q->ci_lo)) {
        if (snprintf(buf, n, "%s [%s, %s] %s", a, change_text(q->ci_lo, dig, b, sizeof b),
                     change_text(q->ci_hi, dig, c, sizeof c), vn) >= (int)n)
            buf[n - 1] = '\0'; /* cut to the cell */
    } else
        snprintf(buf, n, "%s %s", pct(q->effect, a, sizeof a), vn);
}

static void memory_text(const ob_cmp_group *g, char *buf, size_t n)
{
    /* peak memory left out for another backend: said, so that "same" is not read as the peak's */
    const int out_b = g->peak_mem.v == OB_NODATA && g->mem_other_backend > 0,
              out_l = g->peak_mem.v == OB_NODATA && !out_b && g->mem_other_layout > 0,
              out_d = g->peak_mem.v == OB_NODATA && !out_b && !out_l && g->mem_other_device > 0;
    const char *peak_out = out_b ? "; peak: other backend"
                         : out_l ? "; peak: other data-parallel layout"
                         : out_d ? "; peak: other devices" : "";
    if (g->peak_mem.v == OB_NODATA && g->state.v == OB_NODATA) {
        snprintf(buf, n, "%s", out_b ? "other backend, not judged" : out_l ? "other data-parallel layout, not judged"
                               : out_d ? "other devices, not judged" : "-");
        return;
    }
    ob_verdict v = g->peak_mem.v == OB_WORSE || g->state.v == OB_WORSE ? OB_WORSE
                 : g->peak_mem.v == OB_BETTER || g->state.v == OB_BETTER ? OB_BETTER : OB_SAME;
    const ob_cmp_quantity *q = g->peak_mem.v != OB_NODATA && g->peak_mem.base != g->peak_mem.cand ? &g->peak_mem
                             : g->state.v != OB_NODATA && g->state.base != g->state.cand ? &g->state : NULL;
    if (q) {
        char a[32], b[32], d[32];
        ob_compare_bytes(q->base, 0, a, sizeof a);
        ob_compare_bytes(q->cand, 0, b, sizeof b);
        ob_compare_bytes(q->cand - q->base, 1, d, sizeof d);
        /* the same rounded value on both sides: the difference says what changed */
        const char *what = q == &g->peak_mem ? "peak" : "state";
        if (!strcmp(a, b)) snprintf(buf, n, "%s %s (%s) %s%s", what, a, d, ob_verdict_name(v), peak_out);
        else snprintf(buf, n, "%s %s -> %s %s%s", what, a, b, ob_verdict_name(v), peak_out);
    } else
        snprintf(buf, n, "%s%s%s", peak_out[0] ? "state " : "", ob_verdict_name(v), peak_out);
}

static void time_text(const ob_cmp_group *g, char *buf, size_t n)
{
    char a[32];
    const ob_cmp_quantity *q = &g->time_mean;
    int show_mean; /* the mean where it tells something the median does not: slow steps */
    if (g->time_not_judged || (g->time_cells == 0 && (g->time_other_device > 0 || g->time_fast > 0))) {
        if (g->time_apart) snprintf(buf, n, "%s unsteady across runs, not judged", pct(g->time.effect, a, sizeof a));
        else if (g->time_not_judged && g->time_busy_most)
            snprintf(buf, n, "%s on a busy machine, not judged", pct(g->time.effect, a, sizeof a));
        else if (g->time_not_judged) snprintf(buf, n, "%s unsteady, not judged", pct(g->time.effect, a, sizeof a));
        else if (g->time_other_device > 0) snprintf(buf, n, "other devices, not judged");
        else snprintf(buf, n, "steps under %g ms, not judged", g->time_floor_ms);
        show_mean = q->v == OB_WORSE || q->v == OB_BETTER || q->unsure; /* judged without the median */
    } else {
        quantity_text(&g->time, 0, "not finite", buf, n);
        show_mean = q->v != OB_NODATA && (q->v != g->time.v || q->unsure != g->time.unsure);
    }
    if (show_mean) {
        char mt[96], cells[48] = "";
        quantity_text(q, 0, "not finite", mt, sizeof mt);
        if (q->n < g->time_mean_cells) /* the mean judged over fewer cells than were timed */
            snprintf(cells, sizeof cells, " (%d of %d cells)", q->n, g->time_mean_cells);
        size_t len = strlen(buf);
        if (len + 1 < n && snprintf(buf + len, n - len, "; mean %s%s%s", mt, cells,
                                    g->time_mean_machine ? " (every judged group's)" : "") >= (int)(n - len))
            buf[n - 1] = '\0';
    }
}

/* The lr where final loss and held-out were judged (both sides there):
 * "0.1"; "0.1 (cand best 0.01)" when the candidate's own best lr is another;
 * "0.01 (cand best)" when the baseline had no finite median at any lr;
 * "0.001 (smallest)" when neither side had. */
static void lr_text(const ob_cmp_group *g, char *buf, size_t n)
{
    if (g->lr_from == 3) snprintf(buf, n, "- (baseline not finished)");
    else if (isnan(g->best_lr)) snprintf(buf, n, "-");
    else if (g->lr_from == 1) snprintf(buf, n, "%g (cand best)", g->best_lr);
    else if (g->lr_from == 2) snprintf(buf, n, "%g (smallest)", g->best_lr);
    else if (!isnan(g->base_best_unmatched))
        snprintf(buf, n, "%g (best matched; base best %g unmatched)", g->best_lr, g->base_best_unmatched);
    else if (!isnan(g->cand_best_lr) && g->cand_best_lr != g->best_lr)
        snprintf(buf, n, "%g (cand best %g)", g->best_lr, g->cand_best_lr);
    else snprintf(buf, n, "%g", g->best_lr);
}

/* The cells of one group's row, as the three writers show them. */
typedef struct row_text {
    char lr[64], l[96], m[110], t[192], mem[160];
} row_text;

/* What a workload's held-out metric is ("accuracy"), by its label (the
 * workload's name, maybe followed by its parameters); "metric" for one this
 * build does not know. */
static const char *metric_word(const char *wl_label)
{
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(wl_label, " ("), wl_label);
    const ob_workload_def *wd = ob_workload_find(name);
    return wd && wd->metric_name ? wd->metric_name : "metric";
}

static void row_texts(const ob_cmp_group *g, row_text *r)
{
    char m[96];
    lr_text(g, r->lr, sizeof r->lr);
    /* seeds newly diverged make the group worse (new divergences) whatever
     * the median says: the cells that tell of them say "worse" too, not a
     * "same" beside the verdict */
    ob_cmp_quantity loss = g->loss, metric = g->metric;
    if (new_divergences(g)) {
        if (loss.v != OB_NODATA && loss.n_to_inf) loss.v = OB_WORSE, loss.unsure = 0;
        if (metric.v != OB_NODATA && metric.n_to_inf) metric.v = OB_WORSE, metric.unsure = 0;
    }
    quantity_text(&loss, 0, "diverged", r->l, sizeof r->l);
    quantity_text(&metric, !g->metric_is_loss, "diverged", m, sizeof m); /* a diverged seed's is infinite */
    /* which held-out quantity: the loss's change is relative, the metric's absolute */
    snprintf(r->m, sizeof r->m, "%s%s%s", g->metric.v == OB_NODATA ? "" : g->metric_is_loss ? "loss" :
             metric_word(g->workload), g->metric.v == OB_NODATA ? "" : " ", m);
    time_text(g, r->t, sizeof r->t);
    memory_text(g, r->mem, sizeof r->mem);
}

/* The note on matched cells run on different devices, without lead or
 * final period: "2 matched cells ran on different devices (baseline: X;
 * candidate: Y): their step times are not compared (...)"; empty when none. */
static void device_note(const ob_compare *c, char *buf, size_t n)
{
    buf[0] = 0;
    int k = c->n_device_differs, one = k == 1, kb = c->n_backend_differs;
    if (!k) return;
    size_t len = 0;
#define ADD(...)                                                                           \
    do {                                                                                   \
        if (len < n) len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__);             \
    } while (0)
    ADD("%d matched cell%s ran on %s (%sbaseline: \"%s\"; candidate: \"%s\")", k, one ? "" : "s",
        one ? "a different device" : "different devices", c->device_mixed ? "e.g. " : "", c->device_base,
        c->device_cand);
    if (c->opts.time_tol < 0)
        ADD(": step time is not judged (--time-tol off)");
    else if (c->opts.time_across_devices)
        ADD(": %s compared anyway (--time-across-devices), so a change there may be the device's",
            one ? "its step time is" : "their step times are");
    else
        ADD(": %s not compared (--time-across-devices compares them anyway)",
            one ? "its step time is" : "their step times are");
    if (kb && c->opts.check_memory) {
        if (kb == k)
            ADD("; %s peak memory is not compared (another backend: CPU and GPU memory figures do not "
                "compare)", one ? "its" : "their");
        else
            ADD("; the peak memory of the %d of them that ran on another backend is not compared (CPU and GPU "
                "memory figures do not compare)", kb);
    }
    if (c->n_memdev_differs && c->opts.check_memory) {
        if (c->n_memdev_differs == k)
            ADD("; nor is %s peak memory (the kernels and workspaces follow the device)", one ? "its" : "their");
        else
            ADD("; the peak memory of the %d of them on other devices of one backend is not compared either (the "
                "kernels and workspaces follow the device)", c->n_memdev_differs);
    }
    if (c->n_layout_differs && c->opts.check_memory)
    {
        if (c->n_layout_differs == k)
            ADD("; %s peak memory is not compared (split over another number of data-parallel replicas: each "
                "side records one replica's peak)", one ? "its" : "their");
        else
            ADD("; the peak memory of the %d of them split over another number of data-parallel replicas is not "
                "compared (each side records one replica's peak)", c->n_layout_differs);
    }
#undef ADD
}

static void md_para(FILE *f, const char *s);

/* Notes below the table, in text (md = 0) or Markdown. */
/* Why a group is worse beyond its columns: " (new failures)", ... */
static const char *verdict_suffix(const ob_cmp_group *g)
{
    return g->n_new_failures       ? " (new failures)"
           : new_divergences(g) || new_divergences_below(g) ? " (new divergences)"
           : !g->n_new_unfinished  ? ""
           : g->overall == OB_WORSE ? " (some cells not finished)"
                                    : " (not finished)";
}

/* The verdict column: a group with cells the candidate has not finished and
 * nothing worse has no verdict yet. */
static const char *verdict_word(const ob_cmp_group *g, int md)
{
    if (g->overall == OB_WORSE) return md ? "**worse**" : "WORSE";
    if (g->n_new_unfinished) return "no verdict";
    return ob_verdict_name(g->overall);
}

/* The note on a mean step time that moved the same way in every group where
 * it was judged, in buf; 0 when there is none. */
static int mean_shift_note(const ob_compare *c, char *buf, size_t n)
{
    buf[0] = 0;
    if (isnan(c->time_mean_shift) || (!isnan(c->time_shift) && (c->time_shift > 0) == (c->time_mean_shift > 0)))
        return 0; /* none, or the medians' note says it */
    char a[32];
    const int up = c->time_mean_shift > 0;
    int len = snprintf(buf, n, "the mean step time %s beyond %.0f%% in every group where it was judged (by %s in the "
                               "middle one): short stalls of a busy machine (another process taking a core for a few "
                               "ms, again and again) %s every run's mean alike",
                       up ? "rose" : "fell", 100 * c->opts.time_mean_tol, pct(c->time_mean_shift, a, sizeof a),
                       up ? "on the candidate's machine raise" : "on the baseline's machine raised");
    if (len < 0 || (size_t)len >= n) return 1;
    if (c->n_time_mean_machine)
        snprintf(buf + len, n - (size_t)len,
                 ", and so would a change that makes every optimizer's steps slow now and then; the two cannot be "
                 "told apart here, so the mean's verdict is inconclusive in %d group%s whose median step time did "
                 "not say the same; rerun both on one quiet machine to judge it",
                 c->n_time_mean_machine, c->n_time_mean_machine == 1 ? "" : "s");
    else
        snprintf(buf + len, n - (size_t)len,
                 "; the verdicts stand (%s); compare step times on one quiet machine, else use --time-mean-tol off",
                 c->mean_shift_spread || !isnan(c->time_shift)
                     ? "the median step times moved too"
                     : "the groups judged on their mean are one optimizer's or one workload's, or too few of them");
    return 1;
}

/* The notes on what the verdicts rest on: a baseline not finished, verdicts
 * on few seeds, losses the absolute floor made the same, and a candidate
 * not finished (its matrix or its confirmation stage). lead: each note's
 * start. */
static void notes_verdicts(const ob_compare *c, FILE *f, const char *lead, int md)
{
    if (c->n_base_unfinished) {
        int none = 0; /* groups with no finished baseline cell */
        for (int i = 0; i < c->n_g; i++) none += c->g[i].lr_from == 3;
        char nv[96] = "";
        if (none) snprintf(nv, sizeof nv, "; %d group%s no finished baseline cell and no verdict", none,
                           none == 1 ? " has" : "s have");
        fprintf(f, "%sthe baseline is incomplete: %d matched cell%s did not finish there (failed, pending, running "
                   "or interrupted) and %s not judged; each group is judged on the baseline cells that finished "
                   "(its best lr among them)%s; finish the baseline (optbench run ... --resume) or compare "
                   "against another%s%s\n",
                lead, c->n_base_unfinished, c->n_base_unfinished == 1 ? "" : "s",
                c->n_base_unfinished == 1 ? "is" : "are", nv,
                c->opts.strict ? " (--strict: a failure)" : " (--strict fails such a comparison)", md ? "." : "");
    }
    /* verdicts on few seeds: every seed on one side, which chance gives with
     * probability 2^(1-n), and the median past the tolerance */
    int few = 0, few_min = 0;
    for (int i = 0; i < c->n_g; i++)
        for (int k = 0; k < 2; k++) {
            const ob_cmp_quantity *q = k ? &c->g[i].metric : &c->g[i].loss;
            if ((q->v != OB_WORSE && q->v != OB_BETTER) || q->ci_cover >= 0.95 - 1e-12 || isinf(q->effect)) continue;
            few++;
            if (!few_min || q->n < few_min) few_min = q->n;
        }
    if (few)
        fprintf(f, "%s%d verdict%s on the final loss or held-out metric rest%s on fewer than 6 seeds (down to %d): "
                   "there, worse (or better) means that every seed moved the same way and the median change passed "
                   "the tolerance, which no two-sided test makes significant at 5%% below 6 seeds (every one of n "
                   "seeds on one side happens by chance with probability 2^(1-n): 50%% with 2; on the worse side "
                   "alone 2^-n, 25%% with 2); a change that only reorders "
                   "sums (rounding) does that on chaotic trajectories now and then, so confirm such a verdict with "
                   "more seeds (--seeds 6 or more) before believing it%s\n",
                lead, few, few == 1 ? "" : "s", few == 1 ? "s" : "", few_min, md ? "." : "");
    /* verdicts the absolute floor made "same" */
    int under = 0;
    for (int i = 0; i < c->n_g; i++) under += c->g[i].loss.under_abs + (c->g[i].metric_is_loss && c->g[i].metric.under_abs);
    if (under)
        fprintf(f, "%s%d loss verdict%s counted as the same: the median difference of the seeds' losses is within "
                   "--loss-abs-tol %g, although the relative change passed the tolerance (a loss near float "
                   "rounding moves by percents when sums are reordered)%s\n",
                lead, under, under == 1 ? "" : "s", c->opts.loss_abs_tol, md ? "." : "");
    int unfinished = 0;
    for (int i = 0; i < c->n_g; i++) unfinished += c->g[i].n_new_unfinished;
    if (unfinished)
        fprintf(f, "%s%d matched cell%s finished in the baseline %s not finished in the candidate (pending, running "
                   "or interrupted: a run stopped, a machine died): the candidate's benchmark is incomplete, so its "
                   "groups are judged on what finished, and with nothing worse there is no verdict (exit status "
                   "2); finish it (the same optbench run command with --resume) and compare again%s\n",
                lead, unfinished, unfinished == 1 ? "" : "s", unfinished == 1 ? "is" : "are", md ? "." : "");
    if (c->n_confirm_cand_unfinished)
        fprintf(f, "%s%d confirmation run%s of the candidate %s not finished (its confirmation stage was stopped: "
                   "a run stopped, a machine died): the candidate's benchmark is incomplete, and with nothing "
                   "worse there is no verdict (exit status 2); finish it (the same optbench run command with "
                   "--resume) and compare again%s\n",
                lead, c->n_confirm_cand_unfinished, c->n_confirm_cand_unfinished == 1 ? "" : "s",
                c->n_confirm_cand_unfinished == 1 ? "is" : "are", md ? "." : "");
}

/* The notes on what was judged: the lr (the baseline's best not matched,
 * the candidate's or the smallest), cells matched by relaxed
 * hyperparameters or on one side only, divergences above the lr judged,
 * confirmation runs left out. */
static void notes_judged(const ob_compare *c, FILE *f, const char *lead, int md)
{
    int moved = 0, from_cand = 0, smallest = 0, unmatched = 0;
    const ob_cmp_group *first_unmatched = NULL;
    for (int i = 0; i < c->n_g; i++)
        if (!isnan(c->g[i].base_best_unmatched) && !unmatched++) first_unmatched = &c->g[i];
    if (unmatched)
        fprintf(f, "%s%d group%s judged at the best of the matched lrs, not the baseline's own best lr, whose cells "
                   "have no match in the candidate (%s%s on %s: best %g, judged at %g): another lr grid? A "
                   "regression at the baseline's best lr goes unseen there; run the candidate at the baseline's "
                   "lrs, or keep a new baseline after a deliberate change of the grid%s\n",
                lead, unmatched, unmatched == 1 ? " is" : "s are", unmatched > 1 ? "the first: " : "",
                first_unmatched->optimizer, first_unmatched->workload, first_unmatched->base_best_unmatched,
                first_unmatched->best_lr, md ? "." : "");
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        moved |= g->lr_from == 0 && !isnan(g->cand_best_lr) && g->cand_best_lr != g->best_lr;
        from_cand |= g->lr_from == 1;
        smallest |= g->lr_from == 2 && !isnan(g->best_lr);
    }
    if (moved || from_cand || smallest)
        fprintf(f, "%slr is where final loss and held-out were judged, on both sides: the baseline's best lr%s%s%s%s\n",
                lead, moved ? "; \"cand best X\": the candidate's own best lr is X (its sweep's winner moved)" : "",
                from_cand ? "; \"cand best\": the baseline has no finite final loss at any lr, the candidate's "
                            "best is judged" : "",
                smallest ? "; \"smallest\": neither side has one, the smallest lr is judged (every run diverged on "
                           "both sides: such a group's loss gates nothing until a seed trains; give it lrs that "
                           "train, or exclude it from the matrix)" : "", md ? "." : "");
    if (c->n_relaxed)
        fprintf(f, "%s%d cell%s matched although %s hyperparameters differ%s%s (meant for a hyperparameter "
                   "added, or a default changed, between versions; when you changed one on purpose, the "
                   "verdict compares two configurations)%s\n",
                lead, c->n_relaxed, c->n_relaxed == 1 ? "" : "s", c->n_relaxed == 1 ? "its" : "their",
                c->relaxed_note[0] ? ", " : "", c->relaxed_note, md ? "." : "");
    if (c->only_note[0])
        fprintf(f, "%scells on one side only are not compared; some are the same cells run differently%s "
                   "(the matrix changed: --strict fails such a comparison)%s\n",
                lead, c->only_note, md ? "." : "");
    {
        int nd = 0, ng = 0;
        const ob_cmp_group *first = NULL;
        for (int i = 0; i < c->n_g; i++)
            if (c->g[i].n_new_diverged_other) {
                nd += c->g[i].n_new_diverged_other;
                ng++;
                if (!first) first = &c->g[i];
            }
        if (nd)
            fprintf(f, "%s%d cell%s diverged in the candidate and not in the baseline at lrs above the judged "
                       "one, in %d group%s (e.g. %s on %s): the range of lrs that train narrowed there; not judged, "
                       "as the edge of stability can move with rounding alone, but worth a look%s\n",
                    lead, nd, nd == 1 ? "" : "s", ng, ng == 1 ? "" : "s", first->optimizer, first->workload,
                    md ? "." : "");
    }
    if (c->n_confirm_base || c->n_confirm_cand)
        fprintf(f, "%sconfirmation runs (run --confirm-seeds) are not compared, %d in the baseline and %d in the "
                   "candidate: they sit at whichever lr won each side's sweep, so they match only where the "
                   "winners agree; the sweeps are compared%s\n",
                lead, c->n_confirm_base, c->n_confirm_cand, md ? "." : "");
}

/* A share of CPUs (runs.other_cpu) for a note: "38%", "unknown" for NaN. */
static const char *share_text(double v, char *buf, size_t n)
{
    if (isnan(v)) snprintf(buf, n, "unknown");
    else snprintf(buf, n, "%.0f%%", 100 * v);
    return buf;
}

/* The note on step times of runs that met a busy machine (runs.other_cpu
 * at OB_BUSY_SHARE or more on either side): the groups not judged for it,
 * and the cells left out of the groups judged. */
static void note_busy(const ob_compare *c, FILE *f, const char *lead, int md)
{
    const ob_cmp_group *eg = NULL; /* the first group not judged for it */
    int left_out = 0;              /* cells left out of judged groups */
    for (int k = 0; k < c->n_g; k++) {
        const ob_cmp_group *g = &c->g[k];
        if (g->time_not_judged && g->time_busy_most && !g->time_apart) {
            if (!eg) eg = g;
        } else if (!g->time_not_judged) {
            left_out += g->time_busy;
        }
    }
    if (!eg && !left_out) return;
    char sb[32], sc[32], lim[32];
    share_text(OB_BUSY_SHARE, lim, sizeof lim);
    if (eg) {
        const int one = c->n_time_busy == 1;
        fprintf(f, "%sstep time not judged in %d group%s: most of %s cells ran while other processes kept %s or "
                   "more of the machine's CPUs busy on one side or both (runs.other_cpu; e.g. %s on %s: up to %s "
                   "in the baseline, %s in the candidate), which times their work, not the code's; rerun %s on "
                   "a quiet machine%s\n",
                lead, c->n_time_busy, one ? "" : "s", one ? "its" : "their", lim, eg->optimizer, eg->workload,
                share_text(eg->busy_base, sb, sizeof sb), share_text(eg->busy_cand, sc, sizeof sc),
                one ? "it" : "them", md ? "." : "");
    }
    if (left_out)
        fprintf(f, "%s%d cell%s of the groups judged %s left out of step time: a run of %s met a busy machine "
                   "(other processes kept %s or more of its CPUs busy)%s\n",
                lead, left_out, left_out == 1 ? "" : "s", left_out == 1 ? "was" : "were",
                left_out == 1 ? "it" : "each", lim, md ? "." : "");
}

/* The notes on step time not judged (unsteady timing, a busy machine, or
 * runs of one side at different speeds) and, but in the JUnit report
 * (junit), on cells run on different devices. */
static void notes_time(const ob_compare *c, FILE *f, const char *lead, int md, int junit)
{
    int n_apart = 0; /* groups not judged because one side's runs ran at different speeds */
    const ob_cmp_group *apart = NULL;
    for (int k = 0; k < c->n_g; k++)
        if (c->g[k].time_apart) {
            if (!apart) apart = &c->g[k];
            n_apart++;
        }
    note_busy(c, f, lead, md);
    if (c->n_time_not_judged > n_apart + c->n_time_busy) {
        int mean_judged = 0; /* of those groups, with a mean verdict */
        for (int k = 0; k < c->n_g; k++)
            mean_judged += c->g[k].time_not_judged && !c->g[k].time_apart && !c->g[k].time_busy_most &&
                           c->g[k].time_mean.v != OB_NODATA && !c->g[k].time_mean_machine;
        char also[96] = "";
        if (mean_judged)
            snprintf(also, sizeof also, "; the mean step time still is in %d of them (their medians held)",
                     mean_judged);
        const int n_unsteady = c->n_time_not_judged - n_apart - c->n_time_busy, one = n_unsteady == 1;
        fprintf(f, "%sstep time not judged in %d group%s: most of %s cells ran with unsteady step times "
                   "(p90 more than %.0f%% above the median on one side only; a busy machine, or steps slow "
                   "now and then)%s; rerun %s on a quiet machine%s\n", lead, n_unsteady,
                one ? "" : "s", one ? "its" : "their", 100 * OB_TIME_UNSTEADY, also, one ? "it" : "them",
                md ? "." : "");
    }
    if (n_apart) {
        const int one = n_apart == 1;
        const int base_side = apart->time_spread_base > apart->time_spread_cand;
        fprintf(f, "%sstep time not judged in %d group%s whose runs of one side ran at different speeds (the "
                   "slowest run's median step time more than %.0f%% above the fastest's, and more than twice "
                   "the other side's spread: a step's work does not depend on the lr or the seed, so the "
                   "machine changed speed between runs), e.g. %s on %s: %.0f%% in the %s, %.0f%% in the %s; "
                   "rerun %s on a quiet machine%s\n",
                lead, n_apart, one ? "" : "s", 100 * OB_TIME_UNSTEADY, apart->optimizer, apart->workload,
                100 * (base_side ? apart->time_spread_base : apart->time_spread_cand),
                base_side ? "baseline" : "candidate",
                100 * (base_side ? apart->time_spread_cand : apart->time_spread_base),
                base_side ? "candidate" : "baseline", one ? "that side" : "them", md ? "." : "");
    }
    if (c->n_device_differs && !junit) {
        char note[768];
        device_note(c, note, sizeof note);
        fputs(lead, f);
        if (md) md_para(f, note); /* device texts come from drivers: escaped */
        else fputs(note, f);
        fputs(md ? ".\n" : "\n", f);
    }
}

/* The notes on each database's benchmarks and the rows set aside, and on
 * step times that moved in every group (the mean's note but in the JUnit
 * report, junit). */
static void notes_sides(const ob_compare *c, FILE *f, const char *lead, int md, int junit)
{
    for (int k = 0; k < 2; k++) {
        int nb = k ? c->n_bench_cand : c->n_bench_base, ns = k ? c->n_superseded_cand : c->n_superseded_base;
        int nm = k ? c->n_masked_cand : c->n_masked_base;
        const char *side = k ? "candidate" : "baseline";
        if (nb > 1 && ns > 0)
            fprintf(f, "%sthe %s database holds runs of %d benchmarks, and %d of its older rows were set aside "
                       "for a later finished run of the same cell: each cell is its latest finished run, whichever "
                       "benchmark it came from; --%s-benchmark latest judges the last benchmark alone%s\n",
                    lead, side, nb, ns, side, md ? "." : "");
        if (nm > 0)
            fprintf(f, "%s%d later run%s in the %s database failed or did not finish and %s set aside for an "
                       "earlier finished run of the same cell, so %s not judged here (an earlier success stands "
                       "in for %s)%s%s%s%s\n",
                    lead, nm, nm == 1 ? "" : "s", side, nm == 1 ? "was" : "were", nm == 1 ? "its failure is" :
                    "their failures are", nm == 1 ? "it" : "them", nb > 1 ? "; --" : "", nb > 1 ? side : "",
                    nb > 1 ? "-benchmark latest judges the last benchmark alone" : "", md ? "." : "");
    }
    if (!isnan(c->time_shift)) {
        char a[32];
        fprintf(f, "%sstep time moved the same way in every group (median %s): more likely the machine "
                   "(another one, or busier) than an optimizer, unless a change touched all of them; "
                   "compare step times only between runs on one quiet machine, else use --time-tol off%s\n",
                lead, pct(c->time_shift, a, sizeof a), md ? "." : "");
    }
    char msn[768];
    if (!junit && mean_shift_note(c, msn, sizeof msn)) fprintf(f, "%s%s%s\n", lead, msn, md ? "." : "");
}

/* The notes under the table (md: as Markdown); junit: leave out those the
 * JUnit report has a test case of their own for (devices, mean step time). */
static void print_notes(const ob_compare *c, FILE *f, int md, int junit)
{
    const char *lead = md ? "\nNote: " : "note: ";
    notes_verdicts(c, f, lead, md);
    notes_judged(c, f, lead, md);
    notes_time(c, f, lead, md, junit);
    notes_sides(c, f, lead, md, junit);
}

void ob_compare_print(const ob_compare *c, FILE *f)
{
    /* columns as wide as their longest cell, so long values keep the verdicts aligned */
    enum { NC = 8 };
    static const char *const head[NC] = {"workload", "optimizer", "lr", "final loss", "held-out",
                                         "step time", "memory", "verdict"};
    int w[NC];
    for (int k = 0; k < NC; k++) w[k] = (int)strlen(head[k]);
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        row_text r;
        row_texts(g, &r);
        const char *cell[NC - 1] = {g->workload, g->optimizer, r.lr, r.l, r.m, r.t, r.mem};
        for (int k = 0; k < NC - 1; k++)
            if ((int)strlen(cell[k]) > w[k]) w[k] = (int)strlen(cell[k]);
    }
    for (int k = 0; k < NC - 1; k++) fprintf(f, "%-*s  ", w[k], head[k]);
    fprintf(f, "%s\n", head[NC - 1]);
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        row_text r; /* the same texts again: no table of them to allocate */
        row_texts(g, &r);
        fprintf(f, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s%s\n", w[0], g->workload, w[1], g->optimizer,
                w[2], r.lr, w[3], r.l, w[4], r.m, w[5], r.t, w[6], r.mem,
                verdict_word(g, 0), verdict_suffix(g));
    }
    print_notes(c, f, 0, 0);
    /* why each worse group is worse, as the Markdown and JUnit say it: the
     * job's log is what the one paged reads first */
    int any = 0;
    for (int i = 0; i < c->n_g; i++)
        if (c->g[i].detail[0]) {
            if (!any) fprintf(f, "what got worse:\n");
            any = 1;
            fprintf(f, "  %s / %s: %s\n", c->g[i].workload, c->g[i].optimizer, c->g[i].detail);
        }
    for (int k = 0; k < 2; k++) {
        const ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        if (!n) continue;
        fprintf(f, "%d cells only in the %s%s:\n", n, k ? "candidate" : "baseline",
                c->opts.strict ? " (strict: a failure)" : "");
        for (int i = 0; i < n; i++)
            fprintf(f, "  %s %s lr=%g seed=%lld (%s)\n", l[i].workload, l[i].optimizer, l[i].lr,
                    (long long)l[i].seed, l[i].status);
    }
}

/* A label in a Markdown table: | escaped, < and & as entities (GitHub would
 * take <a> for HTML). */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

void ob_compare_markdown(const ob_compare *c, const char *base_name, const char *cand_name, FILE *f)
{
    fprintf(f, "## optbench compare: %s\n\n",
            c->regression ? "regression" : c->incomplete ? "no verdict (the candidate is not finished)" : "no regression");
    fprintf(f, "Baseline `%s`, candidate `%s`: %d matched cells in %d workload x optimizer groups; "
               "%d worse, %d better, %d cells only in the baseline, %d only in the candidate%s.\n\n",
            base_name, cand_name, c->n_matched, c->n_g, c->n_worse, c->n_better, c->n_only_base,
            c->n_only_cand,
            c->opts.strict && (c->n_only_base || c->n_only_cand) ? " (--strict: cells on one side only are a failure)"
                                                                 : "");
    if (c->n_base_unfinished)
        fprintf(f, "The baseline is incomplete: %d matched cell%s did not finish there%s.\n\n", c->n_base_unfinished,
                c->n_base_unfinished == 1 ? "" : "s", c->opts.strict ? " (--strict: a failure)" : "");
    fprintf(f, "| workload | optimizer | lr | final loss | held-out | step time | memory | verdict |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < c->n_g; i++) {
        const ob_cmp_group *g = &c->g[i];
        row_text r;
        row_texts(g, &r);
        fputs("| ", f);
        md_text(f, g->workload);
        fputs(" | ", f);
        md_text(f, g->optimizer);
        fprintf(f, " | %s | %s | %s | %s | %s | %s%s |\n", r.lr, r.l, r.m, r.t, r.mem,
                verdict_word(g, 1), verdict_suffix(g));
    }
    print_notes(c, f, 1, 0);
    int any = 0;
    for (int i = 0; i < c->n_g; i++)
        if (c->g[i].detail[0]) {
            if (!any) fprintf(f, "\n### What got worse\n\n");
            any = 1;
            fputs("- ", f);
            md_text(f, c->g[i].workload);
            fputs(" / ", f);
            md_text(f, c->g[i].optimizer);
            fprintf(f, ": %s\n", c->g[i].detail);
        }
    for (int k = 0; k < 2; k++) {
        const ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        if (!n) continue;
        fprintf(f, "\n### Cells only in the %s (%d)\n\n", k ? "candidate" : "baseline", n);
        for (int i = 0; i < n; i++) {
            fputs("- ", f);
            md_text(f, l[i].workload);
            fputs(" / ", f);
            md_text(f, l[i].optimizer);
            fprintf(f, ", lr %g, seed %lld (", l[i].lr, (long long)l[i].seed);
            md_text(f, l[i].status);
            fputs(")\n", f);
        }
    }
    char abs_text[96] = "";
    if (c->opts.loss_abs_tol > 0)
        snprintf(abs_text, sizeof abs_text, " and the median difference %g (absolute, --loss-abs-tol)",
                 c->opts.loss_abs_tol);
    fprintf(f, "\nThresholds: final loss judged paired over seeds at the baseline's best lr, worse when "
               "the distribution-free 95%% interval of the median relative change (order statistics: up to 8 seeds "
               "the range over the seeds, so every seed worse; below 6 seeds that range holds the median with "
               "less than 95%%, 50%% with 2) is above 0 and the change "
               "exceeds %.1f%%%s; held-out metric by more than %g (absolute); ",
            100 * c->opts.loss_tol, abs_text, c->opts.metric_tol);
    if (c->opts.time_tol < 0) fprintf(f, "step time not judged; ");
    else {
        fprintf(f, "step time (each run's median step time, paired over cells like the final loss) beyond +-%.0f%%, "
                   "cells with unsteady timing, on a busy machine (other processes on %.0f%% or more of the "
                   "CPUs) or with steps under %g ms%s left out; ",
                100 * c->opts.time_tol, 100 * OB_BUSY_SHARE, c->opts.time_floor_ms,
                c->opts.time_across_devices ? "" : ", or run on different devices,");
        if (c->opts.time_mean_tol < 0) fprintf(f, "mean step time not judged; ");
        else
            fprintf(f, "mean step time (which sees steps that are slow now and then) the same way beyond +-%.0f%%, "
                       "unsteady cells whose median held within %.0f%% included, inconclusive where every group's "
                       "mean moved while the medians held; ",
                    100 * c->opts.time_mean_tol, 100 * OB_TIME_MEDIAN_HELD);
    }
    fprintf(f, "memory %s.\n", c->opts.check_memory ? "exactly (peak memory not across backends)" : "not judged");
}

/* At a byte >= 0x80: writes the UTF-8 character that starts at *s (or '?'
 * for a byte that starts none) and moves *s to its last byte. */
static void put_utf8(FILE *f, const char **s)
{
    int n = ob_utf8_len((const unsigned char *)*s);
    const unsigned char *u = (const unsigned char *)*s;
    /* U+FFFE and U+FFFF are not XML characters either */
    if (n == 3 && u[0] == 0xEF && u[1] == 0xBF && (u[2] == 0xBE || u[2] == 0xBF)) {
        fputc('?', f);
        *s += 2;
    } else if (n == 0) {
        fputc('?', f);
    } else {
        fwrite(*s, 1, (size_t)n, f);
        *s += n - 1;
    }
}

/* Text for XML: markup escaped, control characters and bytes that are not
 * UTF-8 (a hand-edited database) as '?' or ' ', so the file stays well-formed. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s >= 0x80) {
            put_utf8(f, &s);
            continue;
        }
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') fputc(' ', f);
            else fputc(*s, f);
        }
    }
}

/* What the JUnit report holds besides the groups: its notes, the test
 * cases of its own they make, and the counts of its header. */
typedef struct junit_report {
    char msn[768];               /* the note on mean step time moved in every group */
    int mean_note;               /* msn holds it */
    char *notes;                 /* every other note (print_notes), NULL where none could be written */
    size_t notes_len;
    int one_sided;               /* cells on one side only */
    int base_unfinished;         /* matched cells the baseline did not finish */
    int confirm_unfinished;      /* confirmation runs the candidate did not finish */
    int any_notes;               /* notes holds some */
    int tests, failures, errors, skipped;
} junit_report;

/* The report's notes, and which test cases it has besides the groups', into jr. */
static void junit_gather(const ob_compare *c, junit_report *jr)
{
    jr->one_sided = c->n_only_base + c->n_only_cand > 0;
    jr->mean_note = mean_shift_note(c, jr->msn, sizeof jr->msn);
    /* every note, where a CI's test view shows it: they change what a
     * verdict means (cells set aside, hyperparameters that differ, ...) */
    jr->notes = NULL;
    jr->notes_len = 0;
    FILE *nf = open_memstream(&jr->notes, &jr->notes_len);
    if (nf) {
        print_notes(c, nf, 0, 1);
        fclose(nf);
    }
    jr->base_unfinished = c->n_base_unfinished > 0;
    jr->any_notes = jr->notes && jr->notes_len > 0;
    jr->confirm_unfinished = c->n_confirm_cand_unfinished > 0;
}

/* The counts of the header: test cases, failures, errors and skipped. */
static void junit_count(const ob_compare *c, junit_report *jr)
{
    jr->tests = c->n_g + (jr->one_sided ? 1 : 0) + (c->n_device_differs ? 1 : 0) + jr->mean_note +
                jr->base_unfinished + jr->any_notes + jr->confirm_unfinished;
    jr->failures = c->n_worse + (jr->one_sided && c->opts.strict ? 1 : 0) +
                   (jr->base_unfinished && c->opts.strict ? 1 : 0);
    /* groups with cells the candidate has not finished, nothing worse, and a
     * stopped confirmation stage: no verdict */
    jr->errors = jr->confirm_unfinished;
    jr->skipped = 0;
    for (int i = 0; i < c->n_g; i++) {
        jr->errors += c->g[i].overall != OB_WORSE && c->g[i].n_new_unfinished > 0;
        jr->skipped += junit_skipped(&c->g[i]);
    }
}

/* The XML declaration and the opening tags with the counts. */
static void junit_header(const junit_report *jr, FILE *f)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"optbench compare\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n"
               "  <testsuite name=\"optbench compare\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
            jr->tests, jr->failures, jr->errors, jr->skipped, jr->tests, jr->failures, jr->errors, jr->skipped);
}

/* A group's test case opened: its classname from the workload, its name the optimizer. */
static void junit_group_open(const ob_cmp_group *g, FILE *f)
{
    /* JUnit readers split a classname at its last '.' (package.class):
     * a label's own dots ("noise=0.01") become '_' there */
    fputs("    <testcase classname=\"optbench.", f);
    char *cls = strdup(g->workload);
    if (cls)
        for (char *q = cls; *q; q++)
            if (*q == '.') *q = '_';
    xml_text(f, cls ? cls : g->workload);
    free(cls);
    fputs("\" name=\"", f);
    xml_text(f, g->optimizer);
    fputs("\" time=\"0\">\n", f);
}

/* A group's outcome: a failure where worse, an error where the candidate
 * has cells unfinished, skipped where nothing was judged; nothing else. */
static void junit_group_outcome(const ob_cmp_group *g, FILE *f)
{
    if (g->overall == OB_WORSE) {
        fputs("      <failure type=\"regression\" message=\"", f);
        xml_text(f, g->detail);
        fputs("\">", f);
        xml_text(f, g->detail);
        fputs("</failure>\n", f);
    } else if (g->n_new_unfinished) {
        char msg[256];
        snprintf(msg, sizeof msg, "%d cell%s finished in the baseline %s not finished in the candidate (a run "
                 "stopped, a machine died): no verdict; finish it with the same run command and --resume",
                 g->n_new_unfinished, g->n_new_unfinished == 1 ? "" : "s", g->n_new_unfinished == 1 ? "is" : "are");
        fputs("      <error type=\"not finished\" message=\"", f);
        xml_text(f, msg);
        fputs("\">", f);
        xml_text(f, msg);
        fputs("</error>\n", f);
    } else if (junit_skipped(g)) {
        fputs("      <skipped message=\"", f);
        xml_text(f, g->lr_from == 3 ? "no verdict: no matched cell finished in the baseline"
                                    : "no verdict: nothing of this group could be judged (no data on one side)");
        fputs("\"/>\n", f);
    }
}

/* A group's test case: its outcome and the row of the table as its output. */
static void junit_group(const ob_cmp_group *g, FILE *f)
{
    junit_group_open(g, f);
    row_text r;
    row_texts(g, &r);
    junit_group_outcome(g, f);
    fputs("      <system-out>", f);
    char line[768];
    snprintf(line, sizeof line, "%d matched cells; lr %s; final loss %s; held-out %s; step time %s; memory %s",
             g->n_matched, r.lr, r.l, r.m, r.t, r.mem);
    xml_text(f, line);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the cells on one side only, a failure with --strict,
 * each cell a line of its output. */
static void junit_one_sided(const ob_compare *c, FILE *f)
{
    fputs("    <testcase classname=\"optbench.cells\" name=\"cells on one side only\" time=\"0\">\n", f);
    char msg[256];
    snprintf(msg, sizeof msg, "%d cells only in the baseline, %d only in the candidate", c->n_only_base,
             c->n_only_cand);
    if (c->opts.strict) {
        fputs("      <failure type=\"missing\" message=\"", f);
        xml_text(f, msg);
        fputs("\"/>\n", f);
    }
    fputs("      <system-out>", f);
    xml_text(f, msg);
    fputs("\n", f);
    for (int k = 0; k < 2; k++) {
        const ob_cmp_cell *l = k ? c->only_cand : c->only_base;
        int n = k ? c->n_only_cand : c->n_only_base;
        for (int i = 0; i < n; i++) {
            snprintf(msg, sizeof msg, "only in the %s: %s %s lr=%g seed=%lld (%s)\n",
                     k ? "candidate" : "baseline", l[i].workload, l[i].optimizer, l[i].lr,
                     (long long)l[i].seed, l[i].status);
            xml_text(f, msg);
        }
    }
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the note on matched cells run on different devices. */
static void junit_devices(const ob_compare *c, FILE *f)
{
    char note[768];
    device_note(c, note, sizeof note);
    fputs("    <testcase classname=\"optbench.devices\" name=\"cells run on different devices\" time=\"0\">\n"
          "      <system-out>note: ", f);
    xml_text(f, note);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the note msn: why some means read "inconclusive". */
static void junit_mean_shift(const char *msn, FILE *f)
{
    fputs("    <testcase classname=\"optbench.step_time\" name=\"mean step time moved in every group\" "
          "time=\"0\">\n      <system-out>note: ", f);
    xml_text(f, msn);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the candidate's confirmation runs not finished, an error. */
static void junit_confirm_unfinished(const ob_compare *c, FILE *f)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%d confirmation run%s of the candidate %s not finished (its confirmation stage "
             "was stopped): no verdict; finish it with the same run command and --resume",
             c->n_confirm_cand_unfinished, c->n_confirm_cand_unfinished == 1 ? "" : "s",
             c->n_confirm_cand_unfinished == 1 ? "is" : "are");
    fputs("    <testcase classname=\"optbench.confirm\" name=\"confirmation runs not finished\" time=\"0\">\n"
          "      <error type=\"not finished\" message=\"", f);
    xml_text(f, msg);
    fputs("\">", f);
    xml_text(f, msg);
    fputs("</error>\n    </testcase>\n", f);
}

/* The test case of the matched cells the baseline did not finish, a failure with --strict. */
static void junit_base_unfinished(const ob_compare *c, FILE *f)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%d matched cells did not finish in the baseline: not judged",
             c->n_base_unfinished);
    fputs("    <testcase classname=\"optbench.baseline\" name=\"baseline cells not finished\" time=\"0\">\n", f);
    if (c->opts.strict) {
        fputs("      <failure type=\"incomplete\" message=\"", f);
        xml_text(f, msg);
        fputs("\"/>\n", f);
    }
    fputs("      <system-out>", f);
    xml_text(f, msg);
    fputs("</system-out>\n    </testcase>\n", f);
}

/* The test case of the notes. */
static void junit_notes(const char *notes, FILE *f)
{
    fputs("    <testcase classname=\"optbench.notes\" name=\"notes\" time=\"0\">\n      <system-out>", f);
    xml_text(f, notes);
    fputs("</system-out>\n    </testcase>\n", f);
}

void ob_compare_junit(const ob_compare *c, FILE *f)
{
    junit_report jr;
    junit_gather(c, &jr);
    junit_count(c, &jr);
    junit_header(&jr, f);
    for (int i = 0; i < c->n_g; i++) junit_group(&c->g[i], f);
    if (jr.one_sided) junit_one_sided(c, f);
    /* notes, where a CI's test view shows them: the devices, and why some means read "inconclusive" */
    if (c->n_device_differs) junit_devices(c, f);
    if (jr.mean_note) junit_mean_shift(jr.msn, f);
    if (jr.confirm_unfinished) junit_confirm_unfinished(c, f);
    if (jr.base_unfinished) junit_base_unfinished(c, f);
    if (jr.any_notes) junit_notes(jr.notes, f);
    free(jr.notes);
    fputs("  </testsuite>\n</testsuites>\n", f);
}

/* Free text in a Markdown paragraph: the characters GitHub would take for
 * markup backslash-escaped, < and & as entities, control characters and bytes
 * that are not UTF-8 as ' ' and '?'. */
static void md_para(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char u = (unsigned char)*s;
        if (u >= 0x80) {
            put_utf8(f, &s);
        } else if (u < 0x20 || u == 0x7F) {
            fputc(' ', f);
        } else if (*s == '<') {
            fputs("&lt;", f);
        } else if (*s == '&') {
            fputs("&amp;", f);
        } else {
            if (strchr("\\`*_[]|~", *s)) fputc('\\', f);
            fputc(*s, f);
        }
    }
}

void ob_compare_markdown_error(const char *msg, const char *base_name, const char *cand_name, FILE *f)
{
    fputs("## optbench compare: no verdict\n\ncompare could not run: ", f);
    md_para(f, msg);
    fputs("\n\n", f);
    if (base_name || cand_name) {
        fputs("Baseline ", f);
        md_para(f, base_name ? base_name : "(not given)");
        fputs(", candidate ", f);
        md_para(f, cand_name ? cand_name : "(not given)");
        fputs(". ", f);
    }
    fputs("Nothing was judged (exit status 2).\n", f);
}

void ob_compare_junit_error(const char *msg, FILE *f)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<testsuites name=\"optbench compare\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
          "  <testsuite name=\"optbench compare\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
          "    <testcase classname=\"optbench.compare\" name=\"compare could not run\" time=\"0\">\n"
          "      <error type=\"no verdict\" message=\"",
          f);
    xml_text(f, msg);
    fputs("\">", f);
    xml_text(f, msg);
    fputs("</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n", f);
}
