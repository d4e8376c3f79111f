/* results/stats.c - summary statistics of a results database (see stats.h
 * for the definitions). Everything here is deterministic: sorts, sums in a
 * fixed order, and the distribution-free interval of a median from order statistics. */
#include "results/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu_share.h"
#include "core/hparams.h"
#include "core/rng.h"
#include "results/profile.h"

static ob_status no_mem(ob_err *e, const char *what)
{
    return ob_fail(e, OB_ERR_NOMEM, "out of memory %s", what);
}

/* ---- numeric helpers ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Copy the non-NaN values of x into a sorted buffer; returns their count, -1
 * when out of memory (*out is NULL then). */
static int sorted_copy(const double *x, int n, double **out)
{
    double *b = malloc(((size_t)n + 1) * sizeof *b);
    *out = b;
    if (!b) return -1;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) b[m++] = x[i];
    qsort(b, (size_t)m, sizeof *b, cmp_double);
    return m;
}

/* Where quantile q of m sorted values lies (R type 7): between the order
 * statistics lo and hi, a fraction f of the way. */
static void quantile_pos(int m, double q, int *lo, int *hi, double *f)
{
    double pos = q * (double)(m - 1);
    *lo = (int)floor(pos);
    if (*lo < 0) *lo = 0;
    if (*lo > m - 1) *lo = m - 1;
    *hi = *lo + 1 < m ? *lo + 1 : *lo;
    *f = pos - (double)*lo;
}

/* The quantile a fraction f of the way from order statistic a to b. */
static double quantile_between(double a, double b, double f)
{
    if (f <= 0 || a == b) return a;
    if (isinf(b) || isinf(a)) return isinf(b) ? b : a;
    return a + f * (b - a);
}

static double quantile_sorted(const double *b, int m, double q)
{
    if (m <= 0) return NAN;
    int lo, hi;
    double f;
    quantile_pos(m, q, &lo, &hi, &f);
    return quantile_between(b[lo], b[hi], f);
}

/* Does x[i] enter a quantile of x: not NaN and, with a key, key[i] == at? */
static int quantile_member(const double *x, const double *key, double at, int i)
{
    return !isnan(x[i]) && (!key || key[i] == at);
}

/* The k-th smallest (from 0) of the m values of x that enter (quantile_member;
 * k < m); +inf sorts last. It allocates nothing, so a quantile cannot fail:
 * each pass narrows the open window (lo, hi) of values that still holds it
 * around a pivot drawn from the window by a fixed sequence (the value found
 * does not depend on the draws, only the passes it takes). */
static double kth_value(const double *x, const double *key, double at, int n, int m, int k)
{
    double lo = 0, hi = 0;
    int has_lo = 0, has_hi = 0;
    uint64_t z = 0x9e3779b97f4a7c15ull;
    for (;;) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        int pick = (int)((z >> 33) % (uint64_t)m);
        double p = NAN;
        for (int i = 0; i < n && isnan(p); i++)
            if (quantile_member(x, key, at, i) && (!has_lo || x[i] > lo) && (!has_hi || x[i] < hi) && pick-- == 0)
                p = x[i];
        int lt = 0, eq = 0;
        for (int i = 0; i < n; i++)
            if (quantile_member(x, key, at, i) && (!has_lo || x[i] > lo) && (!has_hi || x[i] < hi)) {
                lt += x[i] < p;
                eq += x[i] == p;
            }
        if (k < lt) {
            hi = p;
            has_hi = 1;
            m = lt;
        } else if (k < lt + eq) {
            return p;
        } else {
            lo = p;
            has_lo = 1;
            k -= lt + eq;
            m -= lt + eq;
        }
    }
}

/* Quantile q of the values of x that enter (quantile_member), as
 * quantile_sorted would give it from their sorted copy. */
static double quantile_of(const double *x, const double *key, double at, int n, double q)
{
    int m = 0;
    for (int i = 0; i < n; i++) m += quantile_member(x, key, at, i);
    if (m <= 0) return NAN;
    int lo, hi;
    double f;
    quantile_pos(m, q, &lo, &hi, &f);
    double a = kth_value(x, key, at, n, m, lo);
    if (f <= 0 || hi == lo) return a;
    /* order statistic lo + 1: a again when more than lo + 1 values are <= a, else the next value up */
    int le = 0;
    double b = NAN;
    for (int i = 0; i < n; i++)
        if (quantile_member(x, key, at, i)) {
            if (x[i] <= a) le++;
            else if (isnan(b) || x[i] < b) b = x[i];
        }
    return quantile_between(a, le > hi ? a : b, f);
}

double ob_stat_quantile(const double *x, int n, double q) { return quantile_of(x, NULL, 0, n, q); }

double ob_stat_median(const double *x, int n) { return ob_stat_quantile(x, n, 0.5); }

int ob_stat_resample_sets(int n)
{
    double c = 1;
    for (int k = 1; k <= n; k++) c = c * (n - 1 + k) / k;
    return (int)(c + 0.5);
}

double ob_stat_mean(const double *x, int n)
{
    double s = 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) {
            s += x[i];
            m++;
        }
    return m ? s / m : NAN;
}

double ob_stat_sd(const double *x, int n)
{
    double mu = ob_stat_mean(x, n);
    if (isinf(mu)) return NAN;
    double s = 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) {
            s += (x[i] - mu) * (x[i] - mu);
            m++;
        }
    return m >= 2 ? sqrt(s / (m - 1)) : NAN;
}

double ob_stat_min(const double *x, int n)
{
    double v = NAN;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && (isnan(v) || x[i] < v)) v = x[i];
    return v;
}

double ob_stat_max(const double *x, int n)
{
    double v = NAN;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && (isnan(v) || x[i] > v)) v = x[i];
    return v;
}

ob_status ob_stat_median_ci(const double *x, int n, double level, double *lo, double *hi, double *cover,
                            ob_err *e)
{
    double *b;
    int m = sorted_copy(x, n, &b);
    *lo = *hi = NAN;
    if (cover) *cover = 0;
    if (m < 0) return no_mem(e, "an interval of a median");
    if (m == 1) *lo = *hi = b[0];
    if (m >= 2) {
        /* [x_(k), x_(m+1-k)] holds the median with probability
         * 1 - 2 P(Binomial(m, 1/2) <= k - 1), falling with k: the largest k
         * (at most m / 2) whose probability is still >= level, else k = 1 */
        int k = 1, hi_k = m / 2;
        while (k < hi_k) {
            int mid = (k + hi_k + 1) / 2;
            if (1.0 - ob_stat_sign_test(mid - 1, m) >= level) k = mid;
            else hi_k = mid - 1;
        }
        *lo = b[k - 1];
        *hi = b[m - k];
        if (cover) *cover = 1.0 - ob_stat_sign_test(k - 1, m);
    }
    free(b);
    return OB_OK;
}

static int same_lr(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

/* The value a fraction t of the way from a to b (t in [0, 1], along log10(lr)):
 * log(value) is linear in log(lr) where both are > 0 (a loss spans decades
 * across a decade of lr), the value itself otherwise (a loss <= 0). */
static double interp_between(double a, double b, double t)
{
    if (a > 0 && b > 0) return exp(log(a) + t * (log(b) - log(a)));
    return a + t * (b - a);
}

/* The fraction t of the way from a to b at which interp_between reaches v
 * (a <= v < b, or a >= v > b). */
static double interp_fraction(double a, double b, double v)
{
    if (a > 0 && b > 0 && v > 0) return log(v / a) / log(b / a);
    return (v - a) / (b - a);
}

double ob_stat_interp_loglr(const double *lr, const double *v, int n, double at)
{
    if (n <= 0 || !(at > 0)) return NAN;
    for (int i = 0; i < n; i++)
        if (same_lr(at, lr[i])) return v[i];
    if (at < lr[0] || at > lr[n - 1]) return NAN;
    int i = 0;
    while (i + 1 < n && lr[i + 1] < at) i++;
    double t = (log10(at) - log10(lr[i])) / (log10(lr[i + 1]) - log10(lr[i]));
    double a = v[i], b = v[i + 1];
    /* between an lr that trains and one that diverges the loss is unknown:
     * anything from a's value to divergence */
    if (isfinite(a) && isfinite(b)) return interp_between(a, b, t);
    return NAN;
}

double ob_stat_lr_width(const double *lr, const double *med, int n, int best, double thr,
                        int *open_lo, int *open_hi)
{
    *open_lo = *open_hi = 0;
    if (best < 0 || best >= n || !isfinite(med[best]) || !(thr >= med[best])) return NAN;
    int j = best;
    while (j + 1 < n && med[j + 1] <= thr) j++;
    double hi;
    if (j == n - 1) {
        hi = log10(lr[j]);
        *open_hi = 1;
    } else if (!isfinite(med[j + 1])) {
        hi = log10(lr[j]);
    } else {
        double f = interp_fraction(med[j], med[j + 1], thr);
        hi = log10(lr[j]) + f * (log10(lr[j + 1]) - log10(lr[j]));
    }
    int k = best;
    while (k - 1 >= 0 && med[k - 1] <= thr) k--;
    double lo;
    if (k == 0) {
        lo = log10(lr[0]);
        *open_lo = 1;
    } else if (!isfinite(med[k - 1])) {
        lo = log10(lr[k]);
    } else {
        double f = interp_fraction(med[k], med[k - 1], thr);
        lo = log10(lr[k]) - f * (log10(lr[k]) - log10(lr[k - 1]));
    }
    return hi - lo;
}

/* sum += v, compensated (Neumaier): what the running sum lost to rounding
 * goes into *comp, so a value that leaves the window takes nothing of the
 * others with it (a spike of 1e8 among losses of 1e-9 left the plain sum's
 * mean 55% low) */
static void sum_add(double *sum, double *comp, double v)
{
    const double t = *sum + v;
    if (fabs(*sum) >= fabs(v)) *comp += (*sum - t) + v;
    else *comp += (v - t) + *sum;
    *sum = t;
}

void ob_stat_trailing_mean(const double *loss, int64_t n, double *out)
{
    int64_t w = n / 10 > 1 ? n / 10 : 1; /* the final loss's window: 10% of the points */
    double sum = 0, comp = 0;
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        /* the finite losses of the window, as in the final loss: a step
         * skipped for a non-finite loss is left out */
        if (isfinite(loss[i])) {
            sum_add(&sum, &comp, loss[i]);
            cnt++;
        }
        if (i - w >= 0 && isfinite(loss[i - w])) {
            sum_add(&sum, &comp, -loss[i - w]);
            cnt--;
        }
        out[i] = cnt > 0 ? (sum + comp) / (double)cnt : INFINITY;
    }
}

ob_status ob_stat_first_reach(const double *loss, int64_t n, double target, int64_t *at, ob_err *e)
{
    *at = -1;
    if (isnan(target) || n <= 0) return OB_OK;
    double *tm = malloc((size_t)n * sizeof *tm);
    if (!tm) return no_mem(e, "finding the time to target");
    ob_stat_trailing_mean(loss, n, tm);
    for (int64_t i = 0; i < n && *at < 0; i++)
        if (tm[i] <= target) *at = i;
    free(tm);
    return OB_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A seed's first reach (ob_stat_first_reach) as a step: the step of its first
 * point whose trailing loss is <= target, INT64_MAX when never (after every
 * recorded step). */
static ob_status first_reach_step(const int64_t *steps, const double *loss, int64_t n, double target,
                                  int64_t *first, ob_err *e)
{
    int64_t i;
    OB_TRY(ob_stat_first_reach(loss, n, target, &i, e));
    *first = i < 0 ? INT64_MAX : steps[i];
    return OB_OK;
}

/* The majority's first reach from the m (> 0) seeds' first reaches (sorted in
 * place), and its interval when lo: see ob_stat_majority_first_reach. */
static ob_status majority_of_first(int m, int64_t *first, int64_t *at, double *lo, double *hi, double *cover,
                                   ob_err *e)
{
    /* the upper median, the ceil((m + 1) / 2)-th smallest: the step by which a strict
     * majority of the seeds got there. The median over seeds of the trailing loss, with
     * an even number of seeds the mean of the middle two, let one seed that got there
     * carry one that never did (2 seeds, first there at 39 and never: reached at 40) */
    qsort(first, (size_t)m, sizeof *first, cmp_i64);
    if (first[m / 2] != INT64_MAX) *at = first[m / 2];
    ob_status st = OB_OK;
    if (lo && *at >= 0) {
        /* the seeds' noise: an interval of their median first reach, never = +inf */
        double *f = malloc((size_t)m * sizeof *f);
        if (!f) st = no_mem(e, "finding the time to target");
        else {
            for (int k = 0; k < m; k++) f[k] = first[k] == INT64_MAX ? INFINITY : (double)first[k];
            st = ob_stat_median_ci(f, m, 0.95, lo, hi, cover, e);
            free(f);
        }
    }
    return st;
}

ob_status ob_stat_majority_first_reach(int m, const int64_t *const *steps, const double *const *loss,
                                       const int64_t *n, double target, int64_t *at, double *lo, double *hi,
                                       ob_err *e)
{
    *at = -1;
    if (lo) *lo = *hi = NAN;
    if (isnan(target) || m <= 0) return OB_OK;
    /* each seed's own first reach, never = INT64_MAX (after every recorded step): a
     * diverged seed's curve ends where it stopped, so one that got there before counts
     * as having got there, and later it cannot */
    int64_t *first = malloc((size_t)m * sizeof *first);
    if (!first) return no_mem(e, "finding the time to target");
    ob_status st = OB_OK;
    for (int k = 0; k < m && st == OB_OK; k++) st = first_reach_step(steps[k], loss[k], n[k], target, &first[k], e);
    if (st == OB_OK) st = majority_of_first(m, first, at, lo, hi, NULL, e);
    free(first);
    return st;
}

double ob_stat_sign_test(int k, int n)
{
    if (n <= 0) return 1.0;
    int m = k < n - k ? k : n - k;
    /* P(X <= m) for X ~ Binomial(n, 1/2), doubled; terms in double */
    double tail = 0.0;
    if (n <= 1000) {
        double c = 1.0, scale = pow(0.5, n);
        for (int i = 0; i <= m; i++) {
            tail += c * scale;
            c = c * (double)(n - i) / (double)(i + 1);
        }
    } else {
        /* past about 1075 seeds 2^-n underflows to 0 and C(n, i) overflows
         * (0 x inf: NaN): the terms relative to the largest, C(n, m) / 2^n
         * (m <= n / 2), whose logarithm lgamma gives */
        double r = 1.0, sum = 0.0;
        for (int i = m; i >= 0 && r > 1e-18 * sum; i--) {
            sum += r;
            r *= (double)i / (double)(n - i + 1);
        }
        tail = sum * exp(lgamma(n + 1.0) - lgamma(m + 1.0) - lgamma(n - m + 1.0) - n * log(2.0));
    }
    double p = 2.0 * tail;
    return p > 1.0 ? 1.0 : p;
}

static double run_final(const ob_rrun *r);

ob_status ob_stat_paired(const ob_dataset *d, const int *a, int na, const int *b, int nb, ob_paired *out,
                         ob_err *e)
{
    memset(out, 0, sizeof *out);
    out->median_rel = NAN;
    double *rel = malloc(((size_t)na + 1) * sizeof *rel);
    if (!rel) return no_mem(e, "pairing runs by seed");
    int m = 0;
    for (int i = 0; i < na; i++) {
        const ob_rrun *ra = &d->runs[a[i]];
        if (!ra->finished) continue;
        for (int j = 0; j < nb; j++) {
            const ob_rrun *rb = &d->runs[b[j]];
            if (!rb->finished || rb->seed != ra->seed) continue;
            double fa = run_final(ra), fb = run_final(rb);
            if (isnan(fa) || isnan(fb)) break;
            out->n++;
            if (fa < fb) out->a_lower++;
            else if (fb < fa) out->b_lower++;
            else out->ties++;
            /* a diverged seed's loss is +inf here as everywhere: the change
             * (a - b) / |b| (the gate's, right in sign for losses below 0) is
             * +inf where a alone diverged, -1 (-100%) where b alone did, 0
             * where both did (a tie) */
            if (isinf(fa) && isinf(fb)) rel[m++] = 0.0;
            else if (isinf(fa)) rel[m++] = INFINITY;
            else if (isinf(fb)) rel[m++] = -1.0;
            else if (fb != 0) rel[m++] = (fa - fb) / fabs(fb);
            else rel[m++] = fa > 0 ? INFINITY : fa < 0 ? -INFINITY : 0.0; /* against a loss of 0 */
            break;
        }
    }
    out->median_rel = ob_stat_median(rel, m);
    out->p_sign = ob_stat_sign_test(out->a_lower, out->a_lower + out->b_lower);
    free(rel);
    return OB_OK;
}

double ob_stat_best_lr(const double *lr, const double *final, int n)
{
    double best_lr = NAN, best = INFINITY;
    for (int i = 0; i < n; i++) {
        /* each distinct lr once, at its first run */
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = lr[j] == lr[i];
        if (seen) continue;
        double med = quantile_of(final, lr, lr[i], n, 0.5); /* over the runs at lr[i] */
        if (isfinite(med) && (med < best || (med == best && lr[i] < best_lr))) {
            best = med;
            best_lr = lr[i];
        }
    }
    return best_lr;
}

/* ---- the statistics of a dataset ------------------------------------------ */

void ob_stats_opts_default(ob_stats_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tol = 0.1;
    o->target_factor = 1.1;
    o->tau_max = 4.0;
}

static ob_status spread_of(const double *x, int n, ob_spread *s, ob_err *e)
{
    double *b;
    int m = sorted_copy(x, n, &b);
    if (m < 0) return no_mem(e, "computing the statistics");
    s->n = m;
    s->median = quantile_sorted(b, m, 0.5);
    s->min = m ? b[0] : NAN;
    s->max = m ? b[m - 1] : NAN;
    /* one value has no interval ([x, x] would claim the median is known
     * exactly) */
    ob_status st = ob_stat_median_ci(b, m >= 2 ? m : 0, 0.95, &s->ci_lo, &s->ci_hi, &s->ci_cover, e);
    free(b);
    return st;
}

static int cmp_run_lr(const void *a, const void *b, const ob_dataset *d)
{
    const ob_rrun *x = &d->runs[*(const int *)a], *y = &d->runs[*(const int *)b];
    if (x->lr != y->lr) return x->lr < y->lr ? -1 : 1;
    return (x->seed > y->seed) - (x->seed < y->seed);
}
/* qsort has no context argument in C11: sort indices by insertion (groups are small). */
static void sort_runs(int *idx, int n, const ob_dataset *d)
{
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && cmp_run_lr(&idx[j], &v, d) > 0) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

/* A finished run's final loss as it enters a median or a ranking: +inf when it
 * diverged, and when it finished with no finite loss in its last 10% of steps
 * (every one of them skipped as non-finite, too few in a row to be called
 * diverged): left out as unknown, such a seed would flatter its lr. */
static double run_final(const ob_rrun *r) { return r->diverged || !isfinite(r->final_loss) ? INFINITY : r->final_loss; }

/* The upper median (the ceil((m + 1) / 2)-th smallest) of the final losses
 * of group g's finished runs at its best lr: the statistic the default
 * target is set from and a majority of the seeds must reach. NaN when none
 * finished. tmp: scratch of g->n_best_runs doubles. */
static double best_upper_median_final(const ob_dataset *d, const ob_group *g, double *tmp)
{
    int mf = 0;
    for (int i = 0; i < g->n_best_runs; i++)
        if (d->runs[g->best_runs[i]].finished) tmp[mf++] = run_final(&d->runs[g->best_runs[i]]);
    if (!mf) return NAN;
    qsort(tmp, (size_t)mf, sizeof *tmp, cmp_double);
    return tmp[mf / 2];
}

/* Does a finished run of idx[0..n) that did not diverge have a held-out loss
 * (metric 0) or metric (1)? */
static int has_held_out(const ob_dataset *d, const int *idx, int n, int metric)
{
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (r->finished && !r->diverged && !isnan(metric ? r->eval_metric : r->eval_loss)) return 1;
    }
    return 0;
}

/* A finished run's held-out loss (metric 0) or metric (1) as it enters a
 * median: a diverged run's is the worst there is, +inf for the loss and -inf
 * for the metric (an accuracy: higher is better), where the group has such a
 * value at all (has); left out, the seeds that survived would stand for it. */
static double run_held_out(const ob_rrun *r, int metric, int has)
{
    if (r->diverged) return has ? (metric ? -INFINITY : INFINITY) : NAN;
    return metric ? r->eval_metric : r->eval_loss;
}

/* The median over the workload w's finished sweep runs of the loss at their
 * first recorded step (before any update): every optimizer's runs of a seed
 * start from the same parameters and batch. NaN when none; tmp holds d->n. */
static double start_loss(const ob_dataset *d, int w, double *tmp)
{
    int m0 = 0;
    for (int r = 0; r < d->n; r++) {
        const ob_rrun *x = &d->runs[r];
        if (x->wl == w && !x->confirm && x->finished && isfinite(x->first_loss)) tmp[m0++] = x->first_loss;
    }
    return ob_stat_median(tmp, m0);
}

/* The median, extremes and finite extremes of an lr point's m final losses
 * x (run_final's: +inf for a seed that diverged). */
static void point_losses(ob_lr_point *p, const double *x, int m)
{
    p->med = ob_stat_median(x, m);
    p->min = ob_stat_min(x, m);
    p->max = ob_stat_max(x, m);
    p->min_finite = p->max_finite = NAN;
    for (int k = 0; k < m; k++)
        if (isfinite(x[k])) {
            if (isnan(p->min_finite) || x[k] < p->min_finite) p->min_finite = x[k];
            if (isnan(p->max_finite) || x[k] > p->max_finite) p->max_finite = x[k];
        }
}

/* The lr point of g's sweep runs idx[a..b) (one lr) into g->lrs[g->n_lr],
 * and their counts into g's; the point is kept (g->n_lr counts it) only
 * where a run finished. has_el, has_em: the group has a held-out loss, a
 * metric (has_held_out); tmp, tmp2, tmp3: room for b - a values each. */
static void lr_point(const ob_dataset *d, ob_group *g, const int *idx, int a, int b, int has_el, int has_em,
                     double *tmp, double *tmp2, double *tmp3)
{
    ob_lr_point *p = &g->lrs[g->n_lr];
    p->lr = d->runs[idx[a]].lr;
    p->n_runs = b - a;
    int m = 0, me = 0, unfinished = 0;
    for (int k = a; k < b; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (r->finished) {
            p->n_finished++;
            tmp[m++] = run_final(r);
        } else if (!strcmp(r->status, "failed")) {
            g->n_failed++;
        } else {
            g->n_unfinished++;
            unfinished++;
        }
        if (r->diverged) p->n_diverged++;
        else if (r->finished && !isfinite(r->final_loss)) p->n_nonfinite++;
        else if (r->finished && r->final_loss > r->first_loss) g->n_above_start++;
        if (r->finished) {
            tmp2[me] = run_held_out(r, 0, has_el);
            tmp3[me++] = run_held_out(r, 1, has_em);
        }
    }
    point_losses(p, tmp, m);
    p->eval_med = ob_stat_median(tmp2, me);
    p->metric_med = ob_stat_median(tmp3, me);
    p->tt_steps = p->tt_time_s = NAN;
    g->n_finished += p->n_finished;
    g->n_diverged += p->n_diverged;
    if (p->n_diverged && isnan(g->first_div_lr)) g->first_div_lr = p->lr;
    if (p->n_finished) {
        g->n_lr++;
    } else { /* an lr with no finished run is not a grid point */
        g->n_lr_unfinished += unfinished > 0;
        memset(p, 0, sizeof *p);
    }
}

/* g's best lr (g->best, g->best_lr): the lr point with the smallest finite
 * median final loss (ties: the smaller lr), -1 and NaN for none; what is
 * measured at it starts unknown. */
static void pick_best_lr(ob_group *g)
{
    g->best = -1;
    for (int i = 0; i < g->n_lr; i++)
        if (isfinite(g->lrs[i].med) && (g->best < 0 || g->lrs[i].med < g->lrs[g->best].med)) g->best = i;
    g->best_lr = g->best >= 0 ? g->lrs[g->best].lr : NAN;
    g->width_decades = g->loss_half = g->loss_double = g->seed_cv = NAN;
    memset(&g->final, 0, sizeof g->final);
    g->final.median = g->final.min = g->final.max = g->final.ci_lo = g->final.ci_hi = NAN;
    g->eval_loss = g->eval_metric = g->final;
}

/* The finished runs of g's sweep runs idx[0..n) at its best lr
 * (g->best_runs), the spreads of their final loss, held-out loss and metric,
 * and the seeds' coefficient of variation of the final loss. has_el,
 * has_em: as lr_point's; tmp, tmp2, tmp3: room for n values each. */
static ob_status best_lr_runs(const ob_dataset *d, ob_group *g, const int *idx, int n, int has_el, int has_em,
                              double *tmp, double *tmp2, double *tmp3, ob_err *e)
{
    int m = 0, me = 0;
    g->best_runs = malloc(((size_t)n + 1) * sizeof *g->best_runs);
    if (!g->best_runs) return no_mem(e, "computing the statistics");
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (r->lr != g->best_lr || !r->finished) continue;
        g->best_runs[g->n_best_runs++] = idx[k];
        tmp[m++] = run_final(r);
        tmp2[me] = run_held_out(r, 0, has_el);
        tmp3[me++] = run_held_out(r, 1, has_em);
    }
    ob_status st;
    if ((st = spread_of(tmp, m, &g->final, e)) != OB_OK || (st = spread_of(tmp2, me, &g->eval_loss, e)) != OB_OK ||
        (st = spread_of(tmp3, me, &g->eval_metric, e)) != OB_OK)
        return st;
    double sd = ob_stat_sd(tmp, m), mu = ob_stat_mean(tmp, m);
    if (isinf(mu)) g->seed_cv = INFINITY;
    else if (m >= 2 && mu != 0) g->seed_cv = sd / fabs(mu);
    return OB_OK;
}

/* g's best_lr_share and each lr point's best_share (see ob_group) from its
 * sweep runs idx[0..n). */
static ob_status best_lr_shares(const ob_dataset *d, ob_group *g, const int *idx, int n, ob_err *e)
{
    g->best_lr_share = NAN;
    for (int i = 0; i < g->n_lr; i++) g->lrs[i].best_share = NAN;
    if (g->best < 0) return OB_OK;
    int64_t *seeds = malloc(((size_t)n + 1) * sizeof *seeds);
    int n_s = 0; /* the seeds with a finished run */
    for (int k = 0; seeds && k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        int j = 0;
        while (j < n_s && seeds[j] != r->seed) j++;
        if (j == n_s && r->finished) seeds[n_s++] = r->seed;
    }
    double *fin = malloc(((size_t)n_s * g->n_lr + 1) * sizeof *fin); /* (seed, lr) final loss, NaN: no run */
    double *vals = malloc(((size_t)n_s + 1) * sizeof *vals);
    int *picked = calloc((size_t)g->n_lr + 1, sizeof *picked), *of = malloc(((size_t)n_s + 1) * sizeof *of);
    if (!seeds || !fin || !vals || !picked || !of) {
        free(seeds), free(fin), free(vals), free(picked), free(of);
        return no_mem(e, "computing the statistics");
    }
    for (int k = 0; k < n_s * g->n_lr; k++) fin[k] = NAN;
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        int j = 0, i = 0;
        while (j < n_s && seeds[j] != r->seed) j++;
        while (i < g->n_lr && g->lrs[i].lr != r->lr) i++;
        if (r->finished && j < n_s && i < g->n_lr) fin[j * g->n_lr + i] = run_final(r);
    }
    const uint64_t stream = (uint64_t)g->wl << 32 | (uint64_t)g->opt;
    for (int b = 0; b < OB_PROFILE_BOOT; b++) {
        for (int k = 0; k < n_s; k++) { /* the drawn seeds */
            const uint32_t u = ob_philox(OB_BEST_LR_BOOT_KEY, stream, (uint64_t)b << 32 | (uint64_t)k).v[0];
            of[k] = (int)(((uint64_t)u * (uint64_t)n_s) >> 32);
        }
        int best = -1;
        double best_med = INFINITY;
        for (int i = 0; i < g->n_lr; i++) { /* ascending lr: a tie stays with the smaller */
            int m = 0;
            for (int k = 0; k < n_s; k++) {
                const double v = fin[of[k] * g->n_lr + i];
                if (isnan(v)) continue;
                int q = m++;
                for (; q > 0 && vals[q - 1] > v; q--) vals[q] = vals[q - 1];
                vals[q] = v;
            }
            const double med = quantile_sorted(vals, m, 0.5);
            if (isfinite(med) && (best < 0 || med < best_med)) best = i, best_med = med;
        }
        if (best >= 0) picked[best]++;
    }
    for (int i = 0; i < g->n_lr; i++) g->lrs[i].best_share = (double)picked[i] / OB_PROFILE_BOOT;
    g->best_lr_share = g->lrs[g->best].best_share;
    free(seeds), free(fin), free(vals), free(picked), free(of);
    return OB_OK;
}

/* The width of g's lr range (g->width_decades; NaN and why in
 * g->width_unmeasured where it says nothing) from its lrs lrv and the
 * medians medv that count for the range; the tolerance as group_basic's. */
static void lr_width(ob_group *g, const double *lrv, const double *medv, double tol, int of_progress, double start)
{
    const double bm = medv[g->best];
    const double thr = of_progress ? bm + tol * (start - bm) : bm + tol * fabs(bm);
    g->width_decades = NAN;
    if (of_progress && !(start > bm)) g->width_unmeasured = OB_WIDTH_NO_PROGRESS;
    else g->width_decades = ob_stat_lr_width(lrv, medv, g->n_lr, g->best, thr, &g->width_open_lo,
                                             &g->width_open_hi);
    /* open on one side and ending at the best lr on the other: ">= 0"
     * says nothing, so no width, and why */
    if (g->width_decades == 0 && (g->width_open_lo || g->width_open_hi)) {
        const int inner = g->width_open_hi ? g->best - 1 : g->best + 1;
        if (g->n_lr == 1) g->width_unmeasured = g->n_lr_unfinished ? OB_WIDTH_UNFINISHED : OB_WIDTH_ONE_LR;
        else if (inner >= 0 && inner < g->n_lr && isinf(medv[inner])) g->width_unmeasured = OB_WIDTH_EDGE_DIVERGED;
        /* the neighbour is finite and above the threshold: the range
         * ends exactly at the best lr only when the threshold is the
         * best median itself */
        else g->width_unmeasured = OB_WIDTH_EDGE_NO_TOL;
        g->width_decades = NAN;
    }
}

/* g's lr range around its best lr (lr_width) and the median final loss at
 * half and at twice the best lr. */
static ob_status lr_range(ob_group *g, double tol, int of_progress, double start, ob_err *e)
{
    double *lrv = malloc(((size_t)g->n_lr + 1) * sizeof *lrv);
    double *medv = malloc(((size_t)g->n_lr + 1) * sizeof *medv);
    ob_status st = OB_OK;
    if (!lrv || !medv) {
        st = no_mem(e, "computing the statistics");
        goto out;
    }
    /* the lr range: an lr besides the best one counts only where no seed
     * diverged or ended without a finite loss (a median of 7 seeds is
     * finite with 3 of them diverged) */
    for (int i = 0; i < g->n_lr; i++) {
        lrv[i] = g->lrs[i].lr;
        medv[i] = i != g->best && (g->lrs[i].n_diverged > 0 || g->lrs[i].n_nonfinite > 0) ? INFINITY
                                                                                        : g->lrs[i].med;
    }
    lr_width(g, lrv, medv, tol, of_progress, start);
    for (int i = 0; i < g->n_lr; i++) medv[i] = g->lrs[i].med;
    g->loss_half = ob_stat_interp_loglr(lrv, medv, g->n_lr, 0.5 * g->best_lr);
    g->loss_double = ob_stat_interp_loglr(lrv, medv, g->n_lr, 2.0 * g->best_lr);
out:
    free(lrv);
    free(medv);
    return st;
}

/* The cost of g over its sweep runs idx[0..n), at every lr: the medians of
 * the runs' step and optimizer times, throughput and loss floor, the spread
 * of their median step times, the largest memory; the times over the runs
 * on a quiet machine where g has some (other_cpu under OB_BUSY_SHARE; the
 * same rule as its time to target's step time); tmp, tmp2: room for n
 * values each. */
static ob_status group_cost(const ob_dataset *d, ob_group *g, const int *idx, int n, double *tmp, double *tmp2,
                            ob_err *e)
{
    ob_status st = OB_OK;
    int m1 = 0, m2 = 0, m3 = 0, m4 = 0, m5 = 0, m6 = 0, m7 = 0;
    double *a1 = malloc(((size_t)n + 1) * sizeof *a1);
    double *a4 = malloc(((size_t)n + 1) * sizeof *a4);
    double *a5 = malloc(3 * ((size_t)n + 1) * sizeof *a5); /* step mean, optimizer median, optimizer mean */
    if (!a1 || !a4 || !a5) {
        st = no_mem(e, "computing the statistics");
        goto out;
    }
    g->peak_mem_bytes = g->state_bytes = g->device_mem_bytes = -1;
    g->n_timed = g->n_busy = 0;
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (isnan(r->step_ms_median)) continue;
        g->n_timed++;
        g->n_busy += r->other_cpu >= OB_BUSY_SHARE;
    }
    /* the times from the runs on a quiet machine where the group has some:
     * a run that met a busy one timed other processes' work too */
    const int quiet_only = g->n_busy < g->n_timed;
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (r->peak_mem_bytes > g->peak_mem_bytes) g->peak_mem_bytes = r->peak_mem_bytes;
        if (r->device_mem_bytes > g->device_mem_bytes) g->device_mem_bytes = r->device_mem_bytes;
        if (r->state_bytes > g->state_bytes) g->state_bytes = r->state_bytes;
        if (!isnan(r->loss_floor)) a4[m4++] = r->loss_floor;
        if (quiet_only && r->other_cpu >= OB_BUSY_SHARE) continue;
        if (!isnan(r->step_ms_median)) a1[m1++] = r->step_ms_median;
        if (!isnan(r->step_ms_p90)) tmp[m2++] = r->step_ms_p90;
        if (!isnan(r->items_per_sec)) tmp2[m3++] = r->items_per_sec;
        if (!isnan(r->step_ms_mean)) a5[m5++] = r->step_ms_mean;
        if (!isnan(r->opt_ms_median)) a5[n + 1 + m6++] = r->opt_ms_median;
        if (!isnan(r->opt_ms_mean)) a5[2 * (n + 1) + m7++] = r->opt_ms_mean;
    }
    g->step_ms_median = ob_stat_median(a1, m1);
    g->step_ms_spread = m1 >= 2 && ob_stat_min(a1, m1) > 0 ? ob_stat_max(a1, m1) / ob_stat_min(a1, m1) - 1 : NAN;
    g->step_ms_p90 = ob_stat_median(tmp, m2);
    g->step_ms_mean = ob_stat_median(a5, m5);
    g->opt_ms_median = ob_stat_median(a5 + n + 1, m6);
    g->opt_ms_mean = ob_stat_median(a5 + 2 * (n + 1), m7);
    g->items_per_sec = ob_stat_median(tmp2, m3);
    g->loss_floor = ob_stat_median(a4, m4);
    g->overhead_vs_sgd = NAN;
out:
    free(a1);
    free(a4);
    free(a5);
    return st;
}

/* The group's statistics from its sweep runs idx[0..n-1]; the lr range's
 * tolerance: tol x |best median|, or with of_progress tol x (start - best
 * median), start the workload's loss before training. */
static ob_status group_basic(const ob_dataset *d, ob_group *g, const int *idx, int n, double tol, int of_progress,
                             double start, ob_err *e)
{
    ob_status st = OB_OK;
    double *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    double *tmp2 = malloc(((size_t)n + 1) * sizeof *tmp2);
    double *tmp3 = malloc(((size_t)n + 1) * sizeof *tmp3);
    g->n_runs = n;
    g->lrs = calloc((size_t)n + 1, sizeof *g->lrs);
    g->first_div_lr = NAN;
    if (!tmp || !tmp2 || !tmp3 || !g->lrs) {
        st = no_mem(e, "computing the statistics");
        goto out;
    }
    const int has_el = has_held_out(d, idx, n, 0), has_em = has_held_out(d, idx, n, 1);
    for (int a = 0; a < n;) {
        int b = a;
        while (b < n && d->runs[idx[b]].lr == d->runs[idx[a]].lr) b++;
        lr_point(d, g, idx, a, b, has_el, has_em, tmp, tmp2, tmp3);
        a = b;
    }
    g->div_rate = g->n_finished ? (double)g->n_diverged / g->n_finished : NAN;
    pick_best_lr(g);
    if ((st = best_lr_shares(d, g, idx, n, e)) != OB_OK) goto out;
    if (g->best >= 0 && ((st = best_lr_runs(d, g, idx, n, has_el, has_em, tmp, tmp2, tmp3, e)) != OB_OK ||
                         (st = lr_range(g, tol, of_progress, start, e)) != OB_OK))
        goto out;
    st = group_cost(d, g, idx, n, tmp, tmp2, e);
out:
    free(tmp);
    free(tmp2);
    free(tmp3);
    return st;
}

/* The training settings of a run's hyperparameter text: where its
 * "train":{...} object starts (it holds no nested object); NULL: none. */
static const char *train_settings(const char *hparams)
{
    const char *t = hparams ? strstr(hparams, "\"train\":{") : NULL;
    return t ? t + 8 : NULL;
}

static int same_train(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    size_t la = strcspn(a, "}"), lb = strcspn(b, "}");
    return la == lb && !strncmp(a, b, la);
}

/* The confirmation runs of g (idx, n: all of the group's confirmation runs;
 * sweep, n_sweep: its sweep runs). */
static ob_status group_confirm(const ob_dataset *d, ob_group *g, const int *idx, int n, const int *sweep,
                               int n_sweep, ob_err *e)
{
    g->confirm_lr = g->conf_max_finite = NAN;
    g->n_confirm = g->conf_n_diverged = g->conf_seed_overlap = 0;
    memset(&g->conf_final, 0, sizeof g->conf_final);
    g->conf_final.median = g->conf_final.min = g->conf_final.max = g->conf_final.ci_lo = g->conf_final.ci_hi = NAN;
    g->conf_eval_loss = g->conf_eval_metric = g->conf_final;
    if (n == 0) return OB_OK;
    /* only fresh seeds: none that the group's sweep ran */
    int *fresh = malloc((size_t)n * sizeof *fresh), nf = 0;
    if (!fresh) return no_mem(e, "computing the statistics");
    for (int k = 0; k < n; k++) {
        int seen = 0;
        for (int j = 0; j < n_sweep && !seen; j++) seen = d->runs[sweep[j]].seed == d->runs[idx[k]].seed;
        if (seen) g->conf_seed_overlap++;
        else fresh[nf++] = idx[k];
    }
    idx = fresh;
    n = nf;
    if (n == 0) {
        free(fresh);
        return OB_OK;
    }
    int64_t newest = -1;
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (r->lr == g->best_lr) {
            g->confirm_lr = g->best_lr;
            break;
        }
        if (r->benchmark_id > newest || (r->benchmark_id == newest && r->lr < g->confirm_lr)) {
            newest = r->benchmark_id;
            g->confirm_lr = r->lr;
        }
    }
    double *f = malloc((size_t)n * sizeof *f), *el = malloc((size_t)n * sizeof *el),
           *em = malloc((size_t)n * sizeof *em);
    g->conf_runs = malloc((size_t)n * sizeof *g->conf_runs);
    ob_status st = OB_OK;
    if (!f || !el || !em || !g->conf_runs) st = no_mem(e, "computing the statistics");
    int m = 0, me = 0;
    /* does the group hold a held-out loss or metric (its sweep or these runs)? */
    const int has_el = has_held_out(d, sweep, n_sweep, 0) || has_held_out(d, idx, n, 0);
    const int has_em = has_held_out(d, sweep, n_sweep, 1) || has_held_out(d, idx, n, 1);
    for (int k = 0; st == OB_OK && k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (r->lr != g->confirm_lr || !r->finished) continue;
        g->conf_runs[g->n_conf_runs++] = idx[k];
        double fk = run_final(r);
        f[m++] = fk;
        el[me] = run_held_out(r, 0, has_el);
        em[me++] = run_held_out(r, 1, has_em);
        if (r->diverged) g->conf_n_diverged++;
        else if (isfinite(fk) && (isnan(g->conf_max_finite) || fk > g->conf_max_finite)) g->conf_max_finite = fk;
    }
    g->n_confirm = m;
    if (st == OB_OK) st = spread_of(f, m, &g->conf_final, e);
    if (st == OB_OK) st = spread_of(el, me, &g->conf_eval_loss, e);
    if (st == OB_OK) st = spread_of(em, me, &g->conf_eval_metric, e);
    free(f);
    free(el);
    free(em);
    free(fresh);
    return st;
}

/* The step time of a group's time to target into *ms and its 95% interval
 * [*lo, *hi] (buf: room for n values): pooled over the lrs; the mean counts
 * the slow steps now and then (a refresh every k steps); the median for
 * every run of the workload where some run predates the mean (one statistic
 * for all the optimizers it ranks). Over the runs on a quiet machine where
 * the group has some: those that met a busy one (other_cpu at
 * OB_BUSY_SHARE or more) timed other processes' work too. NaN when no run
 * was timed. */
static ob_status group_step_time(const ob_dataset *d, const int *idx, int n, int by_median, double *buf, double *ms,
                                 double *lo, double *hi, double *cover, ob_err *e)
{
    int mt = 0, quiet = 0;
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        quiet += r->finished && !isnan(by_median ? r->step_ms_median : r->step_ms_mean) &&
                 !(r->other_cpu >= OB_BUSY_SHARE);
    }
    for (int k = 0; k < n; k++) {
        const ob_rrun *r = &d->runs[idx[k]];
        if (!r->finished || (quiet && r->other_cpu >= OB_BUSY_SHARE)) continue;
        double t = by_median ? r->step_ms_median : r->step_ms_mean;
        if (!isnan(t)) buf[mt++] = t;
    }
    *ms = ob_stat_median(buf, mt);
    *cover = NAN;
    OB_TRY(ob_stat_median_ci(buf, mt, 0.95, lo, hi, cover, e));
    if (mt == 0) *cover = NAN;
    return OB_OK;
}

static const ob_ttt ttt_none = {.steps = NAN, .time_s = NAN, .lr = NAN, .steps_lo = NAN, .steps_hi = NAN,
                                .step_ms = NAN, .step_ms_lo = NAN, .step_ms_hi = NAN, .censored = 1,
                                .steps_cover = NAN, .step_ms_cover = NAN};

/* Held-out time to target of g (g->ev): per lr, the upper median of the
 * seeds' first evaluations with a held-out loss <= target (with metric: a
 * held-out metric >= target; read through cr), the lr that gets there in the
 * fewest steps (ties: the smaller), its time those steps x the group's step
 * time (as group_time_to_target's). */
static ob_status group_heldout(const ob_dataset *d, ob_curve_reader *cr, ob_group *g, const int *idx, int n,
                               double target, int metric, int by_median, ob_err *e)
{
    ob_ttt *t = &g->ev;
    *t = ttt_none;
    t->steps = t->time_s = INFINITY;
    int64_t *first = malloc(((size_t)n + 1) * sizeof *first);
    double *ms = malloc(((size_t)n + 1) * sizeof *ms);
    t->reach = malloc(((size_t)n + 1) * sizeof *t->reach);
    ob_status st = !first || !ms || !t->reach ? no_mem(e, "computing the held-out time to target")
                                 : group_step_time(d, idx, n, by_median, ms, &t->step_ms, &t->step_ms_lo,
                                                   &t->step_ms_hi, &t->step_ms_cover, e);
    for (int i = 0; i < g->n_lr && st == OB_OK; i++) {
        int m = 0;
        for (int k = 0; k < n && st == OB_OK; k++) {
            const ob_rrun *r = &d->runs[idx[k]];
            if (r->lr != g->lrs[i].lr || !r->finished) continue;
            const int64_t *es;
            const double *el;
            int64_t ne;
            if ((st = ob_curve_reader_evals(cr, r, metric, &es, &el, &ne, e)) != OB_OK) break;
            first[m] = INT64_MAX; /* never, or until it diverged */
            for (int64_t j = 0; j < ne && first[m] == INT64_MAX; j++)
                if (metric ? el[j] >= target : el[j] <= target) first[m] = es[j];
            t->reach[t->n_reach++] = (ob_reach){.seed = r->seed, .lr = i, .first = first[m]};
            m++;
        }
        int64_t at = -1;
        double lo = NAN, hi = NAN, cover = NAN;
        if (st == OB_OK && m > 0) st = majority_of_first(m, first, &at, &lo, &hi, &cover, e);
        if (st == OB_OK && at >= 0 && (t->censored || (double)at < t->steps)) {
            t->steps = (double)at;
            t->lr = g->lrs[i].lr;
            t->steps_lo = lo;
            t->steps_hi = hi;
            t->steps_cover = cover;
            t->censored = 0;
        }
    }
    if (!t->censored) t->time_s = t->steps * t->step_ms / 1000.0; /* NaN when untimed */
    free(first);
    free(ms);
    return st;
}

/* Time to target of every lr point of g and of g itself: per lr, the step by which a
 * strict majority of the seeds' trailing-mean losses first reached the target, the upper
 * median of the seeds' first-reach steps (see stats.h). The group's steps and lr come
 * from the lr that gets there in the fewest steps (ties: the smaller lr); its time is
 * those steps x the group's step time: the median over every finished, timed run of the
 * group, at every lr, of the run's mean step time (its median step time with by_median:
 * some run of the workload has no mean). The work of a step does not depend on the lr,
 * so which lr's runs happened to meet a busy machine neither picks the lr nor sets the
 * time. */
static ob_status group_time_to_target(const ob_dataset *d, ob_curve_reader *cr, ob_group *g, const int *idx, int n,
                                      double target, int by_median, ob_err *e)
{
    g->tt_steps = g->tt_time_s = INFINITY;
    g->tt_lr = g->tt_steps_lo = g->tt_steps_hi = g->tt_steps_cover = NAN;
    g->tt_censored = 1;
    g->tt_step_ms = g->tt_step_ms_lo = g->tt_step_ms_hi = g->tt_step_ms_cover = NAN;
    int64_t *first = malloc(((size_t)n + 1) * sizeof *first);
    double *ms = malloc(((size_t)n + 1) * sizeof *ms);
    free(g->tt_reach);
    g->tt_reach = malloc(((size_t)n + 1) * sizeof *g->tt_reach);
    g->tt_n_reach = 0;
    ob_status status = OB_OK;
    if (!first || !ms || !g->tt_reach) {
        status = no_mem(e, "computing the time to target");
        goto out;
    }
    if ((status = group_step_time(d, idx, n, by_median, ms, &g->tt_step_ms, &g->tt_step_ms_lo, &g->tt_step_ms_hi,
                                  &g->tt_step_ms_cover, e)) != OB_OK)
        goto out;
    for (int i = 0; i < g->n_lr; i++) {
        ob_lr_point *p = &g->lrs[i];
        /* each finished seed's first reach, one curve at a time (from the
         * database where cr reads them: the curves of every run of a large
         * database need not fit in memory at once) */
        int m = 0;
        for (int k = 0; k < n && !isnan(target) && status == OB_OK; k++) {
            const ob_rrun *r = &d->runs[idx[k]];
            if (r->lr != p->lr || !r->finished) continue;
            const int64_t *st = r->c_step;
            const double *ls = r->c_loss;
            int64_t len = r->n_curve;
            if (cr) status = ob_curve_reader_get(cr, r, &st, &ls, &len, e);
            if (status == OB_OK) status = first_reach_step(st, ls, len, target, &first[m], e);
            if (status == OB_OK)
                g->tt_reach[g->tt_n_reach++] = (ob_reach){.seed = r->seed, .lr = i, .first = first[m++]};
        }
        if (status != OB_OK) goto out;
        int64_t at = -1;
        p->tt_steps_lo = p->tt_steps_hi = p->tt_steps_cover = NAN;
        if (m > 0 && (status = majority_of_first(m, first, &at, &p->tt_steps_lo, &p->tt_steps_hi,
                                                 &p->tt_steps_cover, e)) != OB_OK)
            goto out;
        p->tt_steps = at < 0 ? INFINITY : (double)at;
        p->tt_time_s = at < 0 ? INFINITY : (double)at * g->tt_step_ms / 1000.0;
    }
    int best = -1;
    for (int i = 0; i < g->n_lr; i++) /* ascending lr: a tie stays with the smaller */
        if (isfinite(g->lrs[i].tt_steps) && (best < 0 || g->lrs[i].tt_steps < g->lrs[best].tt_steps)) best = i;
    if (best >= 0) {
        g->tt_steps = g->lrs[best].tt_steps;
        g->tt_time_s = g->lrs[best].tt_time_s; /* NaN when untimed */
        g->tt_lr = g->lrs[best].lr;
        g->tt_steps_lo = g->lrs[best].tt_steps_lo;
        g->tt_steps_hi = g->lrs[best].tt_steps_hi;
        g->tt_steps_cover = g->lrs[best].tt_steps_cover;
        g->tt_censored = 0;
    }
out:
    free(first);
    free(ms);
    return status;
}

ob_status ob_stats_compute(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, ob_err *e)
{
    return ob_stats_compute_read(d, o, NULL, s, e);
}

/* Workload w's evaluation interval (*every: the smallest gap between the
 * first two evaluations of its finished sweep runs; 0 where none has two,
 * or none has a held-out value, *no_value then 1) and the median held-out
 * value at step 0 (*start; NaN: none). tmp: room for a value per run. */
static ob_status ev_interval_start(const ob_dataset *d, ob_curve_reader *cr, int w, int metric, double *tmp,
                                   int64_t *every, double *start, int *no_value, ob_err *e)
{
    int ns = 0, valued = 0;
    *every = 0;
    *no_value = 0;
    for (int r = 0; r < d->n; r++) {
        const ob_rrun *x = &d->runs[r];
        if (x->wl != w || x->confirm || !x->finished || x->n_evals < 2) continue;
        const int64_t *es;
        const double *el;
        int64_t ne;
        OB_TRY(ob_curve_reader_evals(cr, x, metric, &es, &el, &ne, e));
        /* the gap after the first evaluation: the last one, at the final
         * step, may follow the one before it sooner (310 steps every 50) */
        if (ne >= 2 && es[1] > es[0] && (*every == 0 || es[1] - es[0] < *every)) *every = es[1] - es[0];
        if (ne > 0 && es[0] == 0 && isfinite(el[0])) tmp[ns++] = el[0];
        for (int64_t j = 0; j < ne && !valued; j++) valued = !isnan(el[j]);
    }
    if (!valued && *every) { /* no held-out metric here (quadratic): nothing to time */
        *no_value = 1;
        *every = 0;
    }
    *start = ob_stat_median(tmp, ns);
    return OB_OK;
}

/* Workload w's default held-out target (s->ev_target[w], and
 * ev_target_halfway): target_factor x the best upper median over seeds of
 * the final held-out loss, over the groups and their lrs (a diverged seed
 * +inf; on the metric the lower median, a diverged seed -inf, and the
 * factor's complement), but at least halfway from the value at step 0;
 * NaN where no group has one. members, counts: each group's sweep runs. */
static void ev_default_target(const ob_dataset *d, ob_stats *s, int w, int metric, double target_factor,
                              int *const *members, const int *counts, double *tmp)
{
    const int sign = metric ? -1 : 1; /* sign * value: lower is better */
    double best = INFINITY;           /* of sign * value */
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        for (int i = 0; g->wl == w && i < g->n_lr; i++) {
            int m = 0;
            for (int j = 0; j < counts[k]; j++) {
                const ob_rrun *x = &d->runs[members[k][j]];
                if (x->lr != g->lrs[i].lr || !x->finished) continue;
                const double v = metric ? x->eval_metric : x->eval_loss;
                tmp[m++] = x->diverged || isnan(v) ? INFINITY : sign * v;
            }
            if (!m) continue;
            qsort(tmp, (size_t)m, sizeof *tmp, cmp_double);
            if (tmp[m / 2] < best) best = tmp[m / 2];
        }
    }
    if (!isfinite(best)) return;
    const double start = sign * s->ev_start[w], half = best + 0.5 * (start - best);
    double t = best + (target_factor - 1.0) * fabs(best);
    if (start > best && half < t) {
        t = half;
        s->ev_target_halfway[w] = 1;
    }
    s->ev_target[w] = sign * t;
}

/* The held-out time to target of every group (ob_stats.ev_*, ob_group.ev)
 * on the workloads whose finished sweep runs were evaluated during
 * training; none without a reader of the database (cr). members[k] and
 * counts[k]: group k's sweep runs; tmp: room for a value per run. */
static ob_status heldout_targets(const ob_dataset *d, const ob_stats_opts *o, ob_curve_reader *cr, ob_stats *s,
                                 int *const *members, const int *counts, double *tmp, ob_err *e)
{
    const size_t nw = (size_t)d->n_wl + 1;
    s->ev_every = calloc(nw, sizeof *s->ev_every);
    s->ev_start = calloc(nw, sizeof *s->ev_start);
    s->ev_target = calloc(nw, sizeof *s->ev_target);
    s->ev_target_given = calloc(nw, sizeof *s->ev_target_given);
    s->ev_target_halfway = calloc(nw, sizeof *s->ev_target_halfway);
    s->ev_target_at_start = calloc(nw, sizeof *s->ev_target_at_start);
    s->ev_no_metric = calloc(nw, sizeof *s->ev_no_metric);
    if (!s->ev_every || !s->ev_start || !s->ev_target || !s->ev_target_given || !s->ev_target_halfway ||
        !s->ev_target_at_start || !s->ev_no_metric)
        return no_mem(e, "computing the held-out time to target");
    const int metric = o->heldout_metric != 0, sign = metric ? -1 : 1; /* sign * value: lower is better */
    s->heldout_metric = metric;
    for (int w = 0; w < d->n_wl; w++) {
        s->ev_start[w] = s->ev_target[w] = NAN;
        if (!cr) continue;
        double start = NAN;
        OB_TRY(ev_interval_start(d, cr, w, metric, tmp, &s->ev_every[w], &start, &s->ev_no_metric[w], e));
        if (!s->ev_every[w]) continue; /* evaluated at the end only: nothing to time */
        s->ev_start[w] = start;
        for (int i = 0; i < o->n_ev_targets; i++)
            if (!strcmp(o->ev_target_wl[i], d->wl_labels[w]) || !strcmp(o->ev_target_wl[i], d->wl_names[w])) {
                s->ev_target[w] = o->ev_target_val[i];
                s->ev_target_given[w] = 1;
            }
        if (!s->ev_target_given[w]) ev_default_target(d, s, w, metric, o->target_factor, members, counts, tmp);
        s->ev_target_at_start[w] = sign * s->ev_start[w] <= sign * s->ev_target[w];
        if (isnan(s->ev_target[w]) || s->ev_target_at_start[w]) continue;
        for (int k = 0; k < s->n_g; k++)
            if (s->g[k].wl == w)
                OB_TRY(group_heldout(d, cr, &s->g[k], members[k], counts[k], s->ev_target[w], metric,
                                     s->tt_by_median[w], e));
    }
    return OB_OK;
}

/* Each explicit target (flag: "--target", "--eval-target") names a workload
 * of d, by label or name; else bad input with the nearest name. */
ob_status ob_stats_check_targets(const ob_dataset *d, int n_t, const char *const *wl, const double *val,
                                 const char *flag, ob_err *e)
{
    for (int i = 0; i < n_t; i++) {
        int found = 0;
        for (int w = 0; w < d->n_wl; w++)
            found |= !strcmp(wl[i], d->wl_labels[w]) || !strcmp(wl[i], d->wl_names[w]);
        if (!found) {
            /* the workloads to choose from, names and labels, and the nearest */
            const char **cands = malloc(((size_t)d->n_wl * 2 + 1) * sizeof *cands);
            if (!cands) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
            int nc = 0;
            char list[400] = "";
            size_t l = 0;
            for (int w = 0; w < d->n_wl; w++) {
                cands[nc++] = d->wl_names[w];
                if (strcmp(d->wl_labels[w], d->wl_names[w])) cands[nc++] = d->wl_labels[w];
                if (l + 80 < sizeof list)
                    l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", w ? ", " : "", d->wl_labels[w]);
                else if (l + 5 < sizeof list && list[l - 1] != '.')
                    l += (size_t)snprintf(list + l, sizeof list - l, ", ...");
            }
            const char *near = ob_closest_name(wl[i], cands, nc);
            ob_fail(e, OB_ERR_INPUT, "%s '%s=%g': the database has no workload '%s'%s%s%s; its workloads: %s", flag,
                    wl[i], val[i], wl[i], near ? " (did you mean '" : "",
                    near ? near : "", near ? "'?)" : "", list);
            free(cands);
            return OB_ERR_INPUT;
        }
    }
    return OB_OK;
}

/* Each workload and optimizer label's group into gi[w * n_opt + op] (-1:
 * no run of that pair), numbered in that order; returns the number of groups. */
static int number_groups(const ob_dataset *d, int *gi)
{
    int ng = 0;
    for (int k = 0; k < d->n_wl * d->n_opt; k++) gi[k] = -1;
    for (int r = 0; r < d->n; r++) gi[d->runs[r].wl * d->n_opt + d->runs[r].opt] = 0;
    for (int k = 0; k < d->n_wl * d->n_opt; k++)
        if (gi[k] == 0) gi[k] = ng++;
    return ng;
}

/* The runs of workload w and optimizer label op into idx: its sweep runs
 * (*n) first, then its confirmation runs (*nc), each sorted by lr and seed. */
static void group_runs(const ob_dataset *d, int w, int op, int *idx, int *n, int *nc)
{
    int ns = 0, nk = 0;
    for (int r = 0; r < d->n; r++)
        if (d->runs[r].wl == w && d->runs[r].opt == op && !d->runs[r].confirm) idx[ns++] = r;
    for (int r = 0; r < d->n; r++)
        /* a retired confirmation run (cell -id: a grown sweep moved its lr
         * or took its seed) stays out */
        if (d->runs[r].wl == w && d->runs[r].opt == op && d->runs[r].confirm && d->runs[r].cell >= 0)
            idx[ns + nk++] = r;
    sort_runs(idx, ns, d);
    sort_runs(idx + ns, nk, d);
    *n = ns;
    *nc = nk;
}

/* Every group's statistics from its runs (group_basic, group_confirm), in
 * the order of gi (number_groups'), and its sweep runs into members[k] and
 * counts[k]; idx: room for d->n runs. */
static ob_status compute_groups(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, const int *gi, int *idx,
                                int **members, int *counts, ob_err *e)
{
    ob_status st;
    for (int w = 0; w < d->n_wl; w++)
        for (int op = 0; op < d->n_opt; op++) {
            int k = gi[w * d->n_opt + op];
            if (k < 0) continue;
            /* the sweep's runs first, then the confirmation runs */
            int n, nc;
            group_runs(d, w, op, idx, &n, &nc);
            members[k] = malloc(((size_t)n + 1) * sizeof **members);
            if (!members[k]) return no_mem(e, "computing the statistics");
            memcpy(members[k], idx, (size_t)n * sizeof *idx);
            counts[k] = n;
            s->g[k].wl = w;
            s->g[k].opt = op;
            s->g[k].ev = ttt_none;
            if ((st = group_basic(d, &s->g[k], idx, n, o->tol, o->tol_of_progress, s->start_loss[w], e)) !=
                    OB_OK ||
                (st = group_confirm(d, &s->g[k], idx + n, nc, idx, n, e)) != OB_OK)
                return st;
        }
    return OB_OK;
}

/* Workload w's target of time to target (s->target[w]): the one given
 * (--target), else set from its groups' best upper median final losses
 * (target_halfway where halfway from the start is the lower); and whether
 * the loss before training is at or below it (target_at_start). tmp: room
 * for d->n values. */
static void loss_target(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, int w, double *tmp)
{
    s->target[w] = NAN;
    for (int i = 0; i < o->n_targets; i++)
        if (!strcmp(o->target_wl[i], d->wl_labels[w]) || !strcmp(o->target_wl[i], d->wl_names[w])) {
            s->target[w] = o->target_val[i];
            s->target_given[w] = 1;
        }
    const double start = s->start_loss[w];
    if (!s->target_given[w]) {
        /* the best upper median of final losses at the best lr (each
         * optimizer's ceil((m+1)/2)-th smallest of its m seeds, the
         * statistic time to target asks a majority of seeds to reach):
         * 1.1 x that, or halfway to it, a majority of the seeds of the
         * optimizer that set it reach by their last step (with an even
         * count, the median, the mean of the middle two, asked for a
         * loss that only one of two seeds far apart got to) */
        double best = INFINITY;
        for (int k = 0; k < s->n_g; k++) {
            const ob_group *g = &s->g[k];
            if (g->wl != w || g->best < 0) continue;
            const double um = best_upper_median_final(d, g, tmp);
            if (um < best) best = um;
        }
        if (isfinite(best)) {
            s->target[w] = best + (o->target_factor - 1.0) * fabs(best);
            /* at least half the way from the start to the best: a loss
             * that training moves little (cross-entropy from 2.54 to 2.29)
             * would otherwise set a target one step's noise reaches */
            const double half = best + 0.5 * (start - best);
            if (start > best && half < s->target[w]) {
                s->target[w] = half;
                s->target_halfway[w] = 1;
            }
        }
    }
    s->target_at_start[w] = start <= s->target[w];
}

/* Is workload w's time to target timed by the median step time? The step
 * time of time to target: the mean only when every timed run that enters it
 * (finished sweep runs) has one; a database merged from shards of an older
 * optbench (schema < 4) and a newer one would otherwise time some
 * optimizers by the mean, others by the median. */
static int step_time_by_median(const ob_dataset *d, int w)
{
    int by_median = 0;
    for (int r = 0; r < d->n; r++) {
        const ob_rrun *x = &d->runs[r];
        if (x->wl == w && !x->confirm && x->finished && !isnan(x->step_ms_median) && isnan(x->step_ms_mean))
            by_median = 1;
    }
    return by_median;
}

/* Group k's median step time over sgd's on its workload (overhead_vs_sgd;
 * left as it is where sgd has no timed run there). mine: the group's
 * training settings (train_settings); tmp: room for d->n values. */
static void sgd_overhead(const ob_dataset *d, ob_group *g, const char *mine, double *tmp)
{
    /* the reference: sgd's runs here with the group's training
     * settings (a sweep of train.clip_norm changes the step's cost),
     * or every sgd run here when none has them */
    int m = 0;
    /* of those, the runs on a quiet machine where there are some (as the
     * group's own step time) */
    for (int pass = 0; pass < 4 && m == 0; pass++)
        for (int r = 0; r < d->n; r++) {
            const ob_rrun *x = &d->runs[r];
            if (x->wl != g->wl || x->confirm || strcmp(x->optimizer, "sgd") || isnan(x->step_ms_median)) continue;
            if (pass < 2 && !same_train(mine, train_settings(x->opt_key))) continue;
            if (pass % 2 == 0 && x->other_cpu >= OB_BUSY_SHARE) continue;
            tmp[m++] = x->step_ms_median;
        }
    double sgd_ms = ob_stat_median(tmp, m);
    if (sgd_ms > 0) g->overhead_vs_sgd = g->step_ms_median / sgd_ms - 1.0;
}

/* No time to target for g and its lr points: its workload's target is at or
 * below the loss before training. */
static void no_time_to_target(ob_group *g)
{
    g->tt_steps = g->tt_time_s = g->tt_lr = g->tt_step_ms = NAN;
    g->tt_step_ms_lo = g->tt_step_ms_hi = NAN;
    g->tt_steps_lo = g->tt_steps_hi = NAN;
    g->tt_steps_cover = g->tt_step_ms_cover = NAN;
    g->tt_censored = 1;
    for (int i = 0; i < g->n_lr; i++) {
        ob_lr_point *p = &g->lrs[i];
        p->tt_steps = p->tt_time_s = p->tt_steps_lo = p->tt_steps_hi = p->tt_steps_cover = NAN;
    }
}

/* Group k's overhead over sgd (sgd_overhead) and time to target on its
 * workload's target (group_time_to_target, curves read through cr), and
 * where it misses the target, how near it gets (tt_miss). members, counts:
 * each group's sweep runs; tmp: room for d->n values. */
static ob_status group_target(const ob_dataset *d, ob_curve_reader *cr, ob_stats *s, int k, int *const *members,
                              const int *counts, double *tmp, ob_err *e)
{
    ob_group *g = &s->g[k];
    const int w = g->wl;
    g->tt_miss = NAN;
    /* read over this build's defaults (opt_key): a run stored before a
     * training setting existed has the same settings as one after */
    const char *mine = counts[k] ? train_settings(d->runs[members[k][0]].opt_key) : NULL;
    sgd_overhead(d, g, mine, tmp);
    if (s->target_at_start[w]) {
        no_time_to_target(g);
        return OB_OK;
    }
    OB_TRY(group_time_to_target(d, cr, g, members[k], counts[k], s->target[w], s->tt_by_median[w], e));
    /* not there: how near, by the statistic the default target is set from */
    if (g->tt_censored && g->best >= 0 && isfinite(s->target[w]) && s->target[w] != 0) {
        const double um = best_upper_median_final(d, g, tmp);
        if (isfinite(um)) g->tt_miss = (um - s->target[w]) / fabs(s->target[w]);
    }
    return OB_OK;
}

/* Targets, sgd step time, time to target: each workload's target
 * (loss_target) and step time statistic (step_time_by_median), then its
 * groups' time to target (group_target). */
static ob_status time_to_targets(const ob_dataset *d, const ob_stats_opts *o, ob_curve_reader *cr, ob_stats *s,
                                 int *const *members, const int *counts, double *tmp, ob_err *e)
{
    s->target = calloc((size_t)d->n_wl + 1, sizeof *s->target);
    s->target_given = calloc((size_t)d->n_wl + 1, sizeof *s->target_given);
    s->target_halfway = calloc((size_t)d->n_wl + 1, sizeof *s->target_halfway);
    s->target_at_start = calloc((size_t)d->n_wl + 1, sizeof *s->target_at_start);
    s->tt_by_median = calloc((size_t)d->n_wl + 1, sizeof *s->tt_by_median);
    if (!s->target || !s->target_given || !s->target_halfway || !s->target_at_start || !s->tt_by_median)
        return no_mem(e, "computing the statistics");
    for (int w = 0; w < d->n_wl; w++) {
        loss_target(d, o, s, w, tmp);
        s->tt_by_median[w] = step_time_by_median(d, w);
        for (int k = 0; k < s->n_g; k++)
            if (s->g[k].wl == w) OB_TRY(group_target(d, cr, s, k, members, counts, tmp, e));
    }
    return OB_OK;
}

ob_status ob_stats_compute_read(const ob_dataset *d, const ob_stats_opts *o, ob_curve_reader *cr, ob_stats *s,
                                ob_err *e)
{
    memset(s, 0, sizeof *s);
    s->n_wl = d->n_wl;
    s->n_opt = d->n_opt;
    s->tau_max = o->tau_max > 1 ? o->tau_max : 4.0;
    s->profile_by_steps = o->profile_by_steps;
    s->profile_heldout = o->profile_heldout;
    s->tol = o->tol;
    s->tol_of_progress = o->tol_of_progress;
    OB_TRY(ob_stats_check_targets(d, o->n_targets, o->target_wl, o->target_val, "--target", e));
    OB_TRY(ob_stats_check_targets(d, o->n_ev_targets, o->ev_target_wl, o->ev_target_val, "--eval-target", e));
    ob_status st = OB_OK;
    int *gi = malloc(((size_t)d->n_wl * d->n_opt + 1) * sizeof *gi);
    int *idx = NULL, **members = NULL, *counts = NULL;
    double *tmp = NULL;
    int ng = 0;
    if (!gi) goto nomem;
    ng = number_groups(d, gi);
    s->g = calloc((size_t)ng + 1, sizeof *s->g);
    if (!s->g) goto nomem;
    s->n_g = ng;
    idx = malloc(((size_t)d->n + 1) * sizeof *idx);
    members = calloc((size_t)ng + 1, sizeof *members);
    counts = calloc((size_t)ng + 1, sizeof *counts);
    if (!idx || !members || !counts) goto nomem;
    /* the loss before training, for the lr range's tolerance of the progress and the default target */
    s->start_loss = calloc((size_t)d->n_wl + 1, sizeof *s->start_loss);
    tmp = malloc(((size_t)d->n + 1) * sizeof *tmp);
    if (!s->start_loss || !tmp) goto nomem;
    for (int w = 0; w < d->n_wl; w++) s->start_loss[w] = start_loss(d, w, tmp);
    if ((st = compute_groups(d, o, s, gi, idx, members, counts, e)) == OB_OK &&
        (st = time_to_targets(d, o, cr, s, members, counts, tmp, e)) == OB_OK &&
        (st = heldout_targets(d, o, cr, s, members, counts, tmp, e)) == OB_OK)
        st = ob_stats_profiles(d, o, s, gi, e);
    goto done;
nomem:
    st = no_mem(e, "computing the statistics");
done:
    for (int k = 0; members && k < ng; k++) free(members[k]);
    free(members);
    free(counts);
    free(idx);
    free(gi);
    free(tmp);
    if (st != OB_OK) ob_stats_free(s); /* nothing half built is left to the caller */
    return st;
}

/* An error reading db, prefixed with its name where given (out of memory aside) */
static ob_status read_fail(ob_status st, const char *db_name, ob_err *e)
{
    if (st != OB_ERR_NOMEM && db_name) ob_err_prefix(e, "database '%s': ", db_name);
    return st;
}

ob_status ob_stats_compute_db(struct sqlite3 *db, const char *db_name, ob_dataset *d, const ob_stats_opts *o,
                              int best_curves, ob_stats *s, ob_err *e)
{
    memset(s, 0, sizeof *s);
    ob_status st = ob_dataset_load_curve_info(db, d, e);
    if (st != OB_OK) return read_fail(st, db_name, e);
    ob_curve_reader *cr;
    if ((st = ob_curve_reader_open(db, &cr, e)) != OB_OK) return read_fail(st, db_name, e);
    st = ob_stats_compute_read(d, o, cr, s, e);
    /* a failed read, not the statistics (an unknown --target workload) */
    const int read_failed = st != OB_OK && ob_curve_reader_failed(cr);
    ob_curve_reader_close(cr);
    if (st != OB_OK) return read_failed ? read_fail(st, db_name, e) : st;
    if (!best_curves) return OB_OK;
    /* the statistics are known: the curves drawn are those of the best lrs */
    int n = 0;
    for (int k = 0; k < s->n_g; k++) n += s->g[k].n_best_runs;
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    if (!idx) st = no_mem(e, "reading curves");
    else {
        n = 0;
        for (int k = 0; k < s->n_g; k++)
            for (int i = 0; i < s->g[k].n_best_runs; i++) idx[n++] = s->g[k].best_runs[i];
        if ((st = ob_dataset_load_curves_of(db, d, idx, n, e)) != OB_OK) read_fail(st, db_name, e);
        free(idx);
    }
    if (st != OB_OK) ob_stats_free(s);
    return st;
}

void ob_stats_free(ob_stats *s)
{
    for (int k = 0; k < s->n_g; k++) {
        free(s->g[k].lrs);
        free(s->g[k].best_runs);
        free(s->g[k].conf_runs);
        free(s->g[k].tt_reach);
        free(s->g[k].ev.reach);
    }
    free(s->g);
    free(s->target);
    free(s->target_given);
    free(s->start_loss);
    free(s->target_halfway);
    free(s->ev_every);
    free(s->ev_start);
    free(s->ev_target);
    free(s->ev_target_given);
    free(s->ev_target_halfway);
    free(s->ev_target_at_start);
    free(s->ev_no_metric);
    free(s->target_at_start);
    free(s->tt_by_median);
    free(s->taus);
    free(s->rho);
    free(s->area);
    free(s->in_profile);
    free(s->profile_ran);
    free(s->tuned_first);
    free(s->tuned_configs);
    free(s->tuned_pick);
    free(s->tuned_rho);
    free(s->tuned_area);
    free(s->tuned_ran);
    free(s->tuned_studies);
    free(s->tuned_pick_study);
    free(s->tuned_pick_bench);
    free(s->area_lo);
    free(s->area_hi);
    free(s->area_first);
    free(s->tuned_area_lo);
    free(s->tuned_area_hi);
    free(s->tuned_area_first);
    free(s->band_lo);
    free(s->band_hi);
    free(s->tuned_band_lo);
    free(s->tuned_band_hi);
    memset(s, 0, sizeof *s);
}

const char *ob_width_unmeasured_name(int u)
{
    return u == OB_WIDTH_EDGE_DIVERGED ? "edge_next_diverged"
           : u == OB_WIDTH_ONE_LR      ? "one_lr"
           : u == OB_WIDTH_EDGE_NO_TOL ? "edge_zero_tolerance"
           : u == OB_WIDTH_NO_PROGRESS ? "no_progress"
           : u == OB_WIDTH_UNFINISHED  ? "lrs_unfinished"
                                       : "";
}

/* competition rank of area[o] among area[0..n), tied areas sharing a rank */
static int area_rank(const double *area, int n, int o)
{
    /* areas are sums of fractions: equal ones may differ in the last bits */
    const double tie = 1e-9;
    double mine = isnan(area[o]) ? -1 : area[o];
    int rank = 1;
    for (int j = 0; j < n; j++) {
        double other = isnan(area[j]) ? -1 : area[j];
        if (j != o && other > mine + tie) rank++;
    }
    return rank;
}

int ob_stats_profile_rank(const ob_stats *s, int o) { return area_rank(s->area, s->n_opt, o); }

int ob_stats_tuned_rank(const ob_stats *s, int i) { return area_rank(s->tuned_area, s->n_tuned, i); }

double ob_stat_best_of_k(const double *sorted, int n, int k, double q)
{
    if (n < 1 || k < 1) return NAN;
    for (int i = 1; i < n; i++)
        if (1 - pow((double)(n - i) / n, k) >= q - 1e-12) return sorted[i - 1];
    return sorted[n - 1];
}

int ob_stats_trial_losses(const ob_dataset *d, const ob_stats *s, int w, int i, double *out)
{
    int n = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || g->n_finished == 0 ||
            strcmp(ob_dataset_opt_name(d, g->opt), ob_dataset_opt_name(d, s->tuned_first[i])))
            continue;
        out[n++] = g->best >= 0 && isfinite(g->final.median) ? g->final.median : INFINITY;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_double);
    return n;
}

int ob_stats_trial_heldout(const ob_dataset *d, const ob_stats *s, int w, int i, int metric, double *out)
{
    int n = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || g->n_finished == 0 ||
            strcmp(ob_dataset_opt_name(d, g->opt), ob_dataset_opt_name(d, s->tuned_first[i])))
            continue;
        double best = NAN;
        for (int j = 0; j < g->n_lr; j++) {
            const double v = metric ? -g->lrs[j].metric_med : g->lrs[j].eval_med;
            if (!isnan(v) && (isnan(best) || v < best)) best = v;
        }
        /* a configuration whose every run diverged (before an evaluation)
         * is the worst, as its final loss counts in the training budget */
        int n_bad = 0; /* diverged, or finished without a finite loss */
        for (int j = 0; j < g->n_lr; j++) n_bad += g->lrs[j].n_diverged + g->lrs[j].n_nonfinite;
        if (isnan(best) && n_bad > 0 && n_bad == g->n_finished) best = INFINITY;
        if (isnan(best)) return 0;
        out[n++] = best;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_double);
    return n;
}

ob_ttt ob_group_tt(const ob_group *g)
{
    return (ob_ttt){.steps = g->tt_steps,
                    .time_s = g->tt_time_s,
                    .lr = g->tt_lr,
                    .steps_lo = g->tt_steps_lo,
                    .steps_hi = g->tt_steps_hi,
                    .step_ms = g->tt_step_ms,
                    .step_ms_lo = g->tt_step_ms_lo,
                    .step_ms_hi = g->tt_step_ms_hi,
                    .censored = g->tt_censored,
                    .steps_cover = g->tt_steps_cover,
                    .step_ms_cover = g->tt_step_ms_cover,
                    .reach = g->tt_reach,
                    .n_reach = g->tt_n_reach};
}

ob_ttt ob_group_ttt(const ob_group *g, int held_out) { return held_out ? g->ev : ob_group_tt(g); }

int ob_ttt_interval(const ob_ttt *t, int by_steps, double *lo, double *hi)
{
    if (t->censored || isnan(t->steps_lo)) return 0;
    if (by_steps) {
        *lo = t->steps_lo;
        *hi = t->steps_hi;
        return 1;
    }
    if (!(isfinite(t->step_ms_lo) && isfinite(t->step_ms_hi))) return 0;
    *lo = t->steps_lo * t->step_ms_lo / 1000.0;
    *hi = t->steps_hi * t->step_ms_hi / 1000.0;
    return 1;
}

int ob_group_tt_interval(const ob_group *g, int by_steps, double *lo, double *hi)
{
    const ob_ttt t = ob_group_tt(g);
    return ob_ttt_interval(&t, by_steps, lo, hi);
}

/* ob_stats_tt_rank of group k, by the held-out time to target (g->ev) where
 * held_out, else the training loss's */
static int ttt_rank(const ob_stats *s, int k, int held_out)
{
    const ob_ttt g = ob_group_ttt(&s->g[k], held_out);
    if (g.censored) return 0;
    double lo = 0, hi = 0, slo = 0, shi = 0; /* lo, hi read only when timed */
    const int timed = !s->profile_by_steps && ob_ttt_interval(&g, 0, &lo, &hi);
    if (!ob_ttt_interval(&g, 1, &slo, &shi)) slo = shi = g.steps;
    int rank = 1;
    for (int j = 0; j < s->n_g; j++) {
        const ob_ttt h = ob_group_ttt(&s->g[j], held_out);
        if (j == k || s->g[j].wl != s->g[k].wl || h.censored) continue;
        double hlo, hhi;
        if (!s->profile_by_steps && ob_ttt_interval(&h, 0, &hlo, &hhi)) /* timed: ahead of every untimed one */
            rank += !timed || hhi < lo * (1 - 1e-12);
        else if (s->profile_by_steps || !timed) {
            if (!ob_ttt_interval(&h, 1, &hlo, &hhi)) hlo = hhi = h.steps;
            rank += hhi < slo * (1 - 1e-12);
        }
    }
    return rank;
}

int ob_stats_tt_rank(const ob_stats *s, int k) { return ttt_rank(s, k, 0); }

int ob_stats_ev_rank(const ob_stats *s, int k) { return ttt_rank(s, k, 1); }

/* A group's median final loss for choosing among configurations: +inf when none. */
static double config_final(const ob_group *g) { return isnan(g->final.median) ? INFINITY : g->final.median; }

int ob_stats_best_configs(const ob_dataset *d, const ob_stats *s, int w, ob_best_config *out, int cap, int *swept)
{
    int n = 0;
    *swept = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w) continue;
        int i = 0; /* the optimizer's row, or a new one */
        while (i < n && strcmp(d->opt_names[s->g[out[i].best].opt], d->opt_names[g->opt])) i++;
        if (i == n) {
            if (n == cap) continue;
            out[n++] = (ob_best_config){k, k, 1};
            continue;
        }
        out[i].n_configs++;
        *swept = 1;
        if (config_final(g) < config_final(&s->g[out[i].best])) out[i].best = k;
        if (config_final(g) >= config_final(&s->g[out[i].worst])) out[i].worst = k;
    }
    for (int i = 1; i < n; i++) { /* insertion sort: stable, so ties keep group order */
        ob_best_config v = out[i];
        int j = i - 1;
        while (j >= 0 && config_final(&s->g[out[j].best]) > config_final(&s->g[v.best])) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = v;
    }
    return n;
}

int ob_stats_median_timed(const ob_dataset *d, const ob_stats *s, int in_profile, char *names, size_t cap)
{
    int n = 0;
    names[0] = '\0';
    for (int w = 0; w < d->n_wl; w++) {
        if (!s->tt_by_median[w] || s->target_at_start[w] || (in_profile && !s->in_profile[w])) continue;
        const size_t len = strlen(names);
        if (n++ < 3)
            snprintf(names + len, cap - len, "%s%s", len ? ", " : "", d->wl_labels[w]);
        else if (n == 4)
            snprintf(names + len, cap - len, ", ...");
    }
    return n;
}

const char *ob_group_no_best(const ob_group *g)
{
    return g->n_finished == 0                 ? "no run finished"
           : g->n_diverged == g->n_finished ? "every run diverged"
                                              : "no lr with a finite median";
}

const ob_group *ob_stats_group(const ob_stats *s, int wl, int opt)
{
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == wl && s->g[k].opt == opt) return &s->g[k];
    return NULL;
}

int ob_group_busy(const ob_group *g)
{
    return g->n_timed > 0 && g->n_busy == g->n_timed;
}
