/* results/profile.c - the performance profiles of a dataset's statistics
 * (see stats.h): Dolan and More's profile of every optimizer label, the
 * tuned optimizers' profile (each optimizer at its fastest configuration
 * on each workload, as AlgoPerf scores external tuning), and a bootstrap
 * of the seeds for the seeds' noise in their areas. Deterministic: the
 * bootstrap's draws are counter-based (Philox) under a fixed key. */
#include "results/profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

static ob_status no_mem(ob_err *e, const char *what)
{
    return ob_fail(e, OB_ERR_NOMEM, "out of memory %s", what);
}

void ob_stat_profile(const double *t, int n_w, int n_o, const double *taus, int n_tau,
                     double tau_max, double *rho, double *area, int *n_used, int *w_used)
{
    if (!rho) n_tau = 0; /* the areas alone */
    for (int k = 0; rho && k < n_tau * n_o; k++) rho[k] = 0;
    for (int o = 0; o < n_o; o++) area[o] = 0;
    int used = 0;
    for (int w = 0; w < n_w; w++) {
        double best = INFINITY;
        for (int o = 0; o < n_o; o++) {
            double v = t[w * n_o + o];
            if (!isnan(v) && v < best) best = v;
        }
        if (w_used) w_used[w] = isfinite(best);
        if (!isfinite(best)) continue;
        used++;
        for (int o = 0; o < n_o; o++) {
            double v = t[w * n_o + o];
            if (isnan(v) || !isfinite(v)) continue;
            double r = best > 0 ? v / best : (v > 0 ? INFINITY : 1.0);
            for (int k = 0; rho && k < n_tau; k++)
                if (r <= taus[k]) rho[k * n_o + o] += 1;
            if (r < tau_max) area[o] += (tau_max - (r > 1 ? r : 1)) / (tau_max - 1);
        }
    }
    for (int k = 0; rho && k < n_tau * n_o; k++) rho[k] = used ? rho[k] / used : NAN;
    for (int o = 0; o < n_o; o++) area[o] = used ? area[o] / used : NAN;
    *n_used = used;
}

/* What the steps of tuned_profile share: its input, each label's optimizer and study, and scratch */
typedef struct tuned {
    const ob_dataset *d;
    ob_stats *s;
    const double *t;             /* (n_wl x n_o) the profile's times */
    const int *gi;               /* (n_wl x n_o) the group of each workload and label, -1 for none */
    int n_o, n;                  /* labels; optimizer names (the tuned optimizers) */
    int *of;                     /* (n_o) each label's tuned index */
    double *t2;                  /* (n_wl x n) each tuned optimizer's time */
    int *used;                   /* (n_wl) the workloads in the tuned profile */
    int *lab_study;              /* (n_o) each label's study, -1 none */
    int64_t *st_bench;           /* (n_o; n_st used) each study's benchmark */
    int *st_num;                 /* (n_o; n_st used) each study's number, as the runs store it */
    int n_st;
    double *sbest;               /* (n_st) on one workload, each study's fastest time */
    int *spick;                  /* (n_st) ... and its group */
    int *order;                  /* (n_st) studies sorted by sbest */
    unsigned char *has;          /* (n_st) 1: the study is one of the optimizer's */
    int record;                  /* 1: record the picks in s (the profile itself; 0: a resample's) */
} tuned;

/* Numbers the optimizer names (tuned_first, tuned_configs, of); returns whether one has several labels. */
static int tuned_names(tuned *tp)
{
    ob_stats *s = tp->s;
    int several = 0;
    tp->n = 0;
    for (int op = 0; op < tp->n_o; op++) {
        int i = 0;
        while (i < tp->n && strcmp(ob_dataset_opt_name(tp->d, s->tuned_first[i]), ob_dataset_opt_name(tp->d, op)))
            i++;
        if (i == tp->n) s->tuned_first[tp->n++] = op;
        tp->of[op] = i;
        several |= ++s->tuned_configs[i] > 1;
    }
    return several;
}

/* Allocates the tuned profile's arrays in s, its times (t2) and its workloads (used). */
static void tuned_alloc(tuned *tp)
{
    ob_stats *s = tp->s;
    const int n = tp->n, n_wl = tp->d->n_wl;
    tp->t2 = calloc((size_t)n_wl * n + 1, sizeof *tp->t2);
    s->tuned_pick = malloc(((size_t)n_wl * n + 1) * sizeof *s->tuned_pick);
    s->tuned_rho = malloc(((size_t)s->n_tau * n + 1) * sizeof *s->tuned_rho);
    s->tuned_area = malloc(((size_t)n + 1) * sizeof *s->tuned_area);
    s->tuned_ran = calloc((size_t)n + 1, sizeof *s->tuned_ran);
    s->tuned_studies = calloc((size_t)n + 1, sizeof *s->tuned_studies);
    s->tuned_pick_study = malloc(((size_t)n_wl * n + 1) * sizeof *s->tuned_pick_study);
    s->tuned_pick_bench = malloc(((size_t)n_wl * n + 1) * sizeof *s->tuned_pick_bench);
    tp->used = calloc((size_t)n_wl + 1, sizeof *tp->used);
}

/* Numbers the studies (searches) the labels come from, and gives each label its study. */
static void label_studies(tuned *tp)
{
    /* each label's study: a search of the matrix (its study number) within
     * its benchmark, numbered from 0 as met (-1 none: not one of several
     * studies). Two benchmarks of studies in one database (other search
     * seeds) are so several searches each, not pooled by study number. */
    const ob_dataset *d = tp->d;
    const int n_o = tp->n_o;
    tp->lab_study = malloc(((size_t)n_o + 1) * sizeof *tp->lab_study);
    tp->st_bench = malloc(((size_t)n_o + 1) * sizeof *tp->st_bench);
    tp->st_num = malloc(((size_t)n_o + 1) * sizeof *tp->st_num);
    tp->n_st = 0;
    for (int op = 0; tp->lab_study && op < n_o; op++) tp->lab_study[op] = -1;
    for (int r = 0; tp->lab_study && tp->st_bench && tp->st_num && r < d->n; r++) {
        const ob_rrun *x = &d->runs[r];
        if (x->study < 0 || tp->lab_study[x->opt] >= 0) continue;
        int j = 0;
        while (j < tp->n_st && !(tp->st_bench[j] == x->benchmark_id && tp->st_num[j] == x->study)) j++;
        if (j == tp->n_st) tp->st_bench[tp->n_st] = x->benchmark_id, tp->st_num[tp->n_st++] = x->study;
        tp->lab_study[x->opt] = j;
    }
}

/* Allocates the per-study scratch; returns whether all of tuned_profile's arrays are there. */
static int study_scratch_alloc(tuned *tp)
{
    const ob_stats *s = tp->s;
    const int n_st = tp->n_st;
    tp->sbest = malloc(((size_t)n_st + 1) * sizeof *tp->sbest);
    tp->spick = malloc(((size_t)n_st + 1) * sizeof *tp->spick);
    tp->order = malloc(((size_t)n_st + 1) * sizeof *tp->order);
    tp->has = calloc((size_t)n_st + 1, 1);
    return tp->t2 && s->tuned_pick && s->tuned_rho && s->tuned_area && s->tuned_ran && s->tuned_studies &&
           s->tuned_pick_study && s->tuned_pick_bench && tp->used && tp->lab_study && tp->st_bench && tp->st_num &&
           tp->sbest && tp->spick && tp->order && tp->has;
}

/* Frees what tuned_profile allocated for itself (not its results in s). */
static void tuned_free(tuned *tp)
{
    free(tp->of);
    free(tp->t2);
    free(tp->used);
    free(tp->lab_study);
    free(tp->st_bench);
    free(tp->st_num);
    free(tp->sbest);
    free(tp->spick);
    free(tp->order);
    free(tp->has);
}

/* Counts each optimizer's studies: the searches its labels come from. */
static void count_studies(tuned *tp)
{
    for (int i = 0; i < tp->n; i++) {
        memset(tp->has, 0, (size_t)tp->n_st + 1);
        for (int op = 0; op < tp->n_o; op++)
            if (tp->of[op] == i && tp->lab_study[op] >= 0 && !tp->has[tp->lab_study[op]]) {
                tp->has[tp->lab_study[op]] = 1;
                tp->s->tuned_studies[i]++;
            }
    }
}

/* Picks on each workload each optimizer's fastest label (the first of equal times: the earlier label). */
static void fastest_labels(tuned *tp)
{
    ob_stats *s = tp->s;
    const int n = tp->n, n_o = tp->n_o;
    for (int w = 0; w < tp->d->n_wl; w++) {
        for (int i = 0; i < n; i++) {
            tp->t2[w * n + i] = INFINITY;
            if (!tp->record) continue;
            s->tuned_pick[w * n + i] = -1;
            s->tuned_pick_study[w * n + i] = -1;
            s->tuned_pick_bench[w * n + i] = 0;
        }
        for (int op = 0; op < n_o; op++) {
            const int i = tp->of[op], k = tp->gi[w * n_o + op];
            const double v = tp->t[w * n_o + op];
            if (v < tp->t2[w * n + i]) { /* the first of equal times: the earlier label */
                tp->t2[w * n + i] = v;
                if (tp->record) s->tuned_pick[w * n + i] = k;
            }
        }
    }
}

/* Picks on workload w optimizer i's time and label of several studies: those of its median study. */
static void median_study(tuned *tp, int w, int i)
{
    /* on the workload each study's fastest, then the median over the studies
     * (the upper of two middle ones), AlgoPerf's score, and that study's pick */
    ob_stats *s = tp->s;
    const int n = tp->n, n_o = tp->n_o, n_st = tp->n_st;
    memset(tp->has, 0, (size_t)n_st + 1);
    for (int st = 0; st < n_st; st++) tp->sbest[st] = INFINITY, tp->spick[st] = -1;
    for (int op = 0; op < n_o; op++) {
        const int st = tp->lab_study[op];
        const double v = tp->t[w * n_o + op];
        if (tp->of[op] != i || st < 0) continue;
        tp->has[st] = 1;
        if (v < tp->sbest[st]) tp->sbest[st] = v, tp->spick[st] = tp->gi[w * n_o + op]; /* ties: the earlier label */
    }
    /* the study whose best is the median: sort its studies by it (ties: the one met first) */
    int m = 0;
    for (int st = 0; st < n_st; st++) {
        if (!tp->has[st]) continue;
        int j = m++;
        for (; j > 0 && tp->sbest[tp->order[j - 1]] > tp->sbest[st]; j--) tp->order[j] = tp->order[j - 1];
        tp->order[j] = st;
    }
    const int mid = tp->order[m / 2];
    tp->t2[w * n + i] = tp->sbest[mid];
    if (!tp->record) return;
    s->tuned_pick[w * n + i] = isfinite(tp->sbest[mid]) ? tp->spick[mid] : -1;
    /* its study number, as the runs store it */
    s->tuned_pick_study[w * n + i] = isfinite(tp->sbest[mid]) ? tp->st_num[mid] : -1;
    s->tuned_pick_bench[w * n + i] = isfinite(tp->sbest[mid]) ? tp->st_bench[mid] : 0;
}

/* Counts, of the tuned profile's workloads, those each optimizer has sweep runs on. */
static void count_ran(tuned *tp)
{
    ob_stats *s = tp->s;
    const int n_o = tp->n_o;
    for (int w = 0; w < tp->d->n_wl; w++)
        for (int i = 0; tp->used[w] && i < tp->n; i++) {
            int any = 0;
            for (int op = 0; op < n_o && !any; op++) {
                const int k = tp->gi[w * n_o + op];
                any = tp->of[op] == i && k >= 0 && s->g[k].n_runs > 0;
            }
            s->tuned_ran[i] += any;
        }
}

/* Each tuned optimizer's time on each workload (tp->t2) from the labels'
 * times tp->t: its fastest label's, or with several studies its median
 * study's fastest (the picks recorded in s where tp->record). */
static void tuned_times(tuned *tp)
{
    fastest_labels(tp);
    /* several studies (searches of other seeds): the median study's fastest label */
    for (int w = 0; w < tp->d->n_wl; w++)
        for (int i = 0; i < tp->n; i++)
            if (tp->s->tuned_studies[i] >= 2) median_study(tp, w, i);
}

/* The profile of the tuned optimizers (ob_stats.tuned_*) from t (n_wl x
 * n_opt, the profile's times) and gi (the group of each workload and label,
 * -1 for none), tp left for profile_boot (tuned_free frees it; tp->n 0 and
 * nothing allocated where every optimizer has one configuration):
 * OB_ERR_NOMEM or OB_OK. */
static ob_status tuned_profile(const ob_dataset *d, ob_stats *s, const double *t, const int *gi, tuned *tp)
{
    *tp = (tuned){.d = d, .s = s, .t = t, .gi = gi, .n_o = d->n_opt, .record = 1};
    tp->of = malloc(((size_t)tp->n_o + 1) * sizeof *tp->of);
    s->tuned_first = malloc(((size_t)tp->n_o + 1) * sizeof *s->tuned_first);
    s->tuned_configs = calloc((size_t)tp->n_o + 1, sizeof *s->tuned_configs);
    if (!tp->of || !s->tuned_first || !s->tuned_configs) return OB_ERR_NOMEM;
    if (!tuned_names(tp)) { /* every optimizer has one configuration: the profile above is the tuned one */
        tp->n = 0;
        return OB_OK;
    }
    s->n_tuned = tp->n;
    tuned_alloc(tp);
    label_studies(tp);
    if (!study_scratch_alloc(tp)) return OB_ERR_NOMEM;
    count_studies(tp);
    tuned_times(tp);
    int n_used = 0;
    ob_stat_profile(tp->t2, d->n_wl, tp->n, s->taus, s->n_tau, s->tau_max, s->tuned_rho, s->tuned_area, &n_used,
                    tp->used);
    count_ran(tp);
    return OB_OK;
}

/* ---- the profiles' bootstrap over seeds (ob_stats.n_boot) ----------------- */

#define NO_RUN INT64_MIN

/* A group's first reaches by seed and lr, for the resamples */
typedef struct boot_group {
    int n_s;                     /* its distinct seeds (ascending: groups with the same seeds draw alike) */
    int64_t *first;              /* (n_s x n_lr) seed j's first reach at lr i; NO_RUN: no finished run */
    double step_ms;              /* the step time of its time to target, held */
} boot_group;

/* The seeds of reach (n) ascending and distinct into seeds; returns their number. */
static int distinct_seeds(const ob_reach *reach, int n, int64_t *seeds)
{
    int n_s = 0;
    for (int k = 0; k < n; k++) {
        int j = 0;
        while (j < n_s && seeds[j] < reach[k].seed) j++;
        if (j < n_s && seeds[j] == reach[k].seed) continue;
        memmove(seeds + j + 1, seeds + j, (size_t)(n_s - j) * sizeof *seeds);
        seeds[j] = reach[k].seed;
        n_s++;
    }
    return n_s;
}

/* bg from the group's time to target tk (n_lr lrs); 0 out of memory */
static int boot_group_init(boot_group *bg, const ob_ttt *tk, int n_lr)
{
    int64_t *seeds = malloc(((size_t)tk->n_reach + 1) * sizeof *seeds);
    if (!seeds) return 0;
    bg->n_s = distinct_seeds(tk->reach, tk->n_reach, seeds);
    bg->step_ms = tk->step_ms;
    bg->first = malloc(((size_t)bg->n_s * n_lr + 1) * sizeof *bg->first);
    if (!bg->first) {
        free(seeds);
        return 0;
    }
    for (int k = 0; k < bg->n_s * n_lr; k++) bg->first[k] = NO_RUN;
    for (int k = 0; k < tk->n_reach; k++) {
        int j = 0;
        while (seeds[j] != tk->reach[k].seed) j++;
        bg->first[j * n_lr + tk->reach[k].lr] = tk->reach[k].first;
    }
    free(seeds);
    return 1;
}

/* The group's time to target in a resample: seed j of it is the group's
 * seed u[j] * n_s / 2^32 (j < n_s), and as group_time_to_target, per lr the
 * upper median of the drawn seeds' first reaches there, the fastest lr, its
 * steps (by_steps) or steps x the group's step time; +inf where it does not
 * get there (or is untimed). buf: room for n_s values. */
static double boot_time(const boot_group *bg, int n_lr, const uint32_t *u, int by_steps, int64_t *buf)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < n_lr; i++) {
        int m = 0;
        for (int j = 0; j < bg->n_s; j++) {
            const int64_t f = bg->first[(int)(((uint64_t)u[j] * (uint64_t)bg->n_s) >> 32) * n_lr + i];
            if (f == NO_RUN) continue;
            int q = m++; /* insertion: a group has a few seeds */
            for (; q > 0 && buf[q - 1] > f; q--) buf[q] = buf[q - 1];
            buf[q] = f;
        }
        if (m > 0 && buf[m / 2] < best) best = buf[m / 2];
    }
    if (best == INT64_MAX) return INFINITY;
    const double v = by_steps ? (double)best : (double)best * bg->step_ms / 1000.0;
    return isnan(v) ? INFINITY : v;
}

/* The areas of the profile of times t (n_w x n_o) over the workloads of
 * used (the profile's own: a resample's times on others stay out, and a
 * workload no one gets to in a resample counts as none getting there) into
 * area (n_o). */
static void boot_areas(double *t, int n_w, int n_o, const int *used, int n_used, double tau_max, double *area)
{
    for (int w = 0; w < n_w; w++)
        for (int o = 0; !used[w] && o < n_o; o++) t[w * n_o + o] = INFINITY;
    int n = 0;
    ob_stat_profile(t, n_w, n_o, NULL, 0, tau_max, NULL, area, &n, NULL);
    for (int o = 0; o < n_o; o++) area[o] = n ? area[o] * n / n_used : 0;
}

/* From the areas of b resamples (b x n, row by row): each one's 2.5% and
 * 97.5% quantiles and its share of the resamples in which it had the
 * largest area, ties sharing it (lo, hi, first: n each; a resample in which
 * every area is 0, no one getting to any target, has no largest). col:
 * room for b. */
static void boot_summary(const double *areas, int b, int n, double *lo, double *hi, double *first, double *col)
{
    for (int o = 0; o < n; o++) {
        for (int r = 0; r < b; r++) col[r] = areas[(size_t)r * n + o];
        lo[o] = ob_stat_quantile(col, b, 0.025);
        hi[o] = ob_stat_quantile(col, b, 0.975);
        first[o] = 0;
    }
    for (int r = 0; r < b; r++) {
        const double *a = areas + (size_t)r * n;
        double top = -1;
        int ties = 0;
        for (int o = 0; o < n; o++) top = a[o] > top ? a[o] : top;
        if (!(top > 0)) continue; /* no one got to any target: no largest */
        for (int o = 0; o < n; o++) ties += fabs(a[o] - top) <= 1e-9;
        for (int o = 0; o < n; o++)
            if (fabs(a[o] - top) <= 1e-9) first[o] += 1.0 / ties;
    }
    for (int o = 0; o < n; o++) first[o] /= b;
}

/* The most counts of a profile's band (labels x (n_tau + 1) x (workloads + 1)); a larger profile has none */
#define BAND_MAX_COUNTS (1 << 24)

/* The band of a profile's curves over the resamples: at each tau, how many
 * resamples put each label's curve at each level c / n_used (c = 0 ..
 * n_used), kept as differences along tau: +1 at the first tau where a
 * resample's curve is at c, -1 past its last. */
typedef struct band {
    int n_o, n_used, nb;         /* labels; the profile's workloads; nb = n_used + 1 levels */
    int *diff;                   /* (n_o x (n_tau + 1) x nb) */
    double *best, *r;            /* (n_wl) scratch */
} band;

/* The first of the n ascending taus that x is at most (x <= taus[k], as
 * ob_stat_profile counts), n where none. */
static int first_tau(const double *taus, int n, double x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (x <= taus[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* 1 with bd ready for a profile of n_o labels over n_used of n_w workloads
 * at n_tau taus; 0 where it has none: no workload, too many counts, or
 * out of memory (the band is left out, the rest goes on). */
static int band_init(band *bd, int n_o, int n_w, int n_used, int n_tau)
{
    memset(bd, 0, sizeof *bd);
    const double counts = (double)n_o * (n_tau + 1) * (n_used + 1);
    if (n_o <= 0 || n_used <= 0 || counts > BAND_MAX_COUNTS) return 0;
    bd->n_o = n_o;
    bd->n_used = n_used;
    bd->nb = n_used + 1;
    bd->diff = calloc((size_t)counts, sizeof *bd->diff);
    bd->best = malloc((size_t)n_w * sizeof *bd->best);
    bd->r = malloc((size_t)n_w * sizeof *bd->r);
    return bd->diff && bd->best && bd->r;
}

static void band_free(band *bd)
{
    free(bd->diff);
    free(bd->best);
    free(bd->r);
    memset(bd, 0, sizeof *bd);
}

/* Adds a resample's curves, from its times t (n_w x n_o) on the workloads
 * of used, to bd: a label's curve is at c / n_used on the taus from its
 * c-th smallest ratio to the fastest (the profile's own rule: a workload no
 * one gets to in the resample counts as none getting there). */
static void band_add(band *bd, const double *t, int n_w, const int *used, const double *taus, int n_tau)
{
    const int n_o = bd->n_o, nb = bd->nb;
    for (int w = 0; w < n_w; w++) {
        double best = INFINITY;
        for (int o = 0; used[w] && o < n_o; o++)
            if (t[w * n_o + o] < best) best = t[w * n_o + o];
        bd->best[w] = best;
    }
    for (int o = 0; o < n_o; o++) {
        int m = 0;
        for (int w = 0; w < n_w; w++) {
            const double v = t[w * n_o + o], best = bd->best[w];
            if (!used[w] || !isfinite(best) || !isfinite(v)) continue;
            const double r = best > 0 ? v / best : (v > 0 ? INFINITY : 1.0);
            if (!isfinite(r)) continue;
            int q = m++; /* insertion: a profile has a few workloads */
            for (; q > 0 && bd->r[q - 1] > r; q--) bd->r[q] = bd->r[q - 1];
            bd->r[q] = r;
        }
        int *d = bd->diff + (size_t)o * (n_tau + 1) * nb;
        for (int c = 0, ks = 0; c <= m; c++) {
            const int ke = c < m ? first_tau(taus, n_tau, bd->r[c]) : n_tau;
            if (ks < ke) {
                d[ks * nb + c]++;
                d[ke * nb + c]--;
            }
            if (ke > ks) ks = ke;
        }
    }
}

/* The level (c / n_used) of the k-th smallest (from 0) of the b resamples'
 * values whose counts per level are h. */
static double level_at(const int *h, int nb, int n_used, int k)
{
    int c = 0;
    for (int cum = h[0]; cum <= k && c + 1 < nb; cum += h[++c]) {}
    return (double)c / n_used;
}

/* The band's ends into lo and hi (n_tau x n_o): at each tau, the 2.5% and
 * 97.5% quantiles of the b resamples' values, as ob_stat_quantile gives them
 * from the values themselves. */
static void band_finish(band *bd, int b, int n_tau, double *lo, double *hi)
{
    const int n_o = bd->n_o, nb = bd->nb;
    const double q[2] = {0.025, 0.975};
    for (int o = 0; o < n_o; o++) {
        int *d = bd->diff + (size_t)o * (n_tau + 1) * nb;
        for (int k = 0; k < n_tau; k++) {
            int *h = d + k * nb; /* the counts at tau k: the differences summed along tau */
            for (int c = 0; k > 0 && c < nb; c++) h[c] += h[c - nb];
            for (int e = 0; e < 2; e++) {
                const double pos = q[e] * (b - 1);
                const int i = (int)floor(pos), j = i + 1 < b ? i + 1 : i;
                const double va = level_at(h, nb, bd->n_used, i), vb = level_at(h, nb, bd->n_used, j);
                const double f = pos - i, v = f <= 0 || va == vb ? va : va + f * (vb - va);
                (e ? hi : lo)[k * n_o + o] = v;
            }
        }
    }
}

/* What profile_boot works with */
typedef struct boot {
    boot_group *bg;              /* (n_g) */
    double *t;                   /* (n_wl x n_opt) a resample's times */
    double *areas, *tareas;      /* (B x n_opt), (B x n_tuned) the resamples' areas */
    uint32_t *u;                 /* (max n_s) a workload's draws */
    int64_t *buf;                /* (max n_s) */
    double *col;                 /* (B) */
    int max_s;
    band band, tband;            /* the curves' bands: the profile's, the tuned profile's */
} boot;

static void boot_free(boot *bt, int n_g)
{
    for (int k = 0; bt->bg && k < n_g; k++) free(bt->bg[k].first);
    free(bt->bg);
    free(bt->t);
    free(bt->areas);
    free(bt->tareas);
    free(bt->u);
    free(bt->buf);
    free(bt->col);
    band_free(&bt->band);
    band_free(&bt->tband);
}

/* Allocates bt and the results in s; 0 out of memory */
static int boot_alloc(boot *bt, const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, int n_tuned)
{
    const size_t B = OB_PROFILE_BOOT;
    bt->bg = calloc((size_t)s->n_g + 1, sizeof *bt->bg);
    if (!bt->bg) return 0;
    bt->max_s = 1;
    for (int k = 0; k < s->n_g; k++) {
        const ob_ttt tk = ob_group_ttt(&s->g[k], o->profile_heldout);
        if (!boot_group_init(&bt->bg[k], &tk, s->g[k].n_lr)) return 0;
        if (bt->bg[k].n_s > bt->max_s) bt->max_s = bt->bg[k].n_s;
    }
    bt->t = malloc(((size_t)d->n_wl * d->n_opt + 1) * sizeof *bt->t);
    bt->areas = malloc((B * d->n_opt + 1) * sizeof *bt->areas);
    bt->tareas = malloc((B * n_tuned + 1) * sizeof *bt->tareas);
    bt->u = malloc((size_t)bt->max_s * sizeof *bt->u);
    bt->buf = malloc((size_t)bt->max_s * sizeof *bt->buf);
    bt->col = malloc(B * sizeof *bt->col);
    s->area_lo = malloc(((size_t)d->n_opt + 1) * sizeof *s->area_lo);
    s->area_hi = malloc(((size_t)d->n_opt + 1) * sizeof *s->area_hi);
    s->area_first = malloc(((size_t)d->n_opt + 1) * sizeof *s->area_first);
    if (n_tuned) {
        s->tuned_area_lo = malloc((size_t)n_tuned * sizeof *s->tuned_area_lo);
        s->tuned_area_hi = malloc((size_t)n_tuned * sizeof *s->tuned_area_hi);
        s->tuned_area_first = malloc((size_t)n_tuned * sizeof *s->tuned_area_first);
        if (!s->tuned_area_lo || !s->tuned_area_hi || !s->tuned_area_first) return 0;
    }
    return bt->t && bt->areas && bt->tareas && bt->u && bt->buf && bt->col && s->area_lo && s->area_hi &&
           s->area_first;
}

/* Allocates a band of n_o labels and its ends (*lo, *hi: n_tau x n_o);
 * where there is none (band_init), both NULL. */
static void band_alloc(band *bd, int n_o, int n_w, int n_used, int n_tau, double **lo, double **hi)
{
    *lo = *hi = NULL;
    if (band_init(bd, n_o, n_w, n_used, n_tau)) {
        *lo = malloc((size_t)n_tau * n_o * sizeof **lo);
        *hi = malloc((size_t)n_tau * n_o * sizeof **hi);
    }
    if (!*lo || !*hi) {
        free(*lo);
        free(*hi);
        *lo = *hi = NULL;
        band_free(bd);
    }
}

/* The profiles' bootstrap over seeds (see ob_stats.n_boot); tp: the tuned
 * profile's (tp->n 0 where there is none). */
static ob_status profile_boot(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, const int *gi, tuned *tp)
{
    if (s->profile_workloads == 0) return OB_OK;
    boot bt = {0};
    const int n_o = d->n_opt, n_t = tp->n;
    int tuned_used = 0;
    for (int w = 0; n_t && w < d->n_wl; w++) tuned_used += tp->used[w];
    if (!boot_alloc(&bt, d, o, s, n_t)) {
        boot_free(&bt, s->n_g);
        return OB_ERR_NOMEM;
    }
    tp->record = 0;
    tp->t = bt.t;
    band_alloc(&bt.band, n_o, d->n_wl, s->profile_workloads, s->n_tau, &s->band_lo, &s->band_hi);
    if (n_t) band_alloc(&bt.tband, n_t, d->n_wl, tuned_used, s->n_tau, &s->tuned_band_lo, &s->tuned_band_hi);
    for (int b = 0; b < OB_PROFILE_BOOT; b++) {
        for (int w = 0; w < d->n_wl; w++) {
            /* the workload's draws: a group of n_s seeds takes the first n_s */
            for (int j = 0; s->in_profile[w] && j < bt.max_s; j++)
                bt.u[j] = ob_philox(OB_PROFILE_BOOT_KEY, (uint64_t)w, (uint64_t)b << 32 | (uint64_t)j).v[0];
            for (int op = 0; op < n_o; op++) {
                const int k = gi[w * n_o + op];
                bt.t[w * n_o + op] = k < 0 || !s->in_profile[w]
                                         ? INFINITY
                                         : boot_time(&bt.bg[k], s->g[k].n_lr, bt.u, o->profile_by_steps, bt.buf);
            }
        }
        if (n_t) { /* the tuned optimizers' times of the same resample, before boot_areas masks bt.t */
            tuned_times(tp);
            if (bt.tband.diff) band_add(&bt.tband, tp->t2, d->n_wl, tp->used, s->taus, s->n_tau);
            boot_areas(tp->t2, d->n_wl, n_t, tp->used, tuned_used, s->tau_max, bt.tareas + (size_t)b * n_t);
        }
        if (bt.band.diff) band_add(&bt.band, bt.t, d->n_wl, s->in_profile, s->taus, s->n_tau);
        boot_areas(bt.t, d->n_wl, n_o, s->in_profile, s->profile_workloads, s->tau_max, bt.areas + (size_t)b * n_o);
    }
    boot_summary(bt.areas, OB_PROFILE_BOOT, n_o, s->area_lo, s->area_hi, s->area_first, bt.col);
    if (n_t)
        boot_summary(bt.tareas, OB_PROFILE_BOOT, n_t, s->tuned_area_lo, s->tuned_area_hi, s->tuned_area_first,
                     bt.col);
    if (bt.band.diff) band_finish(&bt.band, OB_PROFILE_BOOT, s->n_tau, s->band_lo, s->band_hi);
    if (bt.tband.diff) band_finish(&bt.tband, OB_PROFILE_BOOT, s->n_tau, s->tuned_band_lo, s->tuned_band_hi);
    s->n_boot = OB_PROFILE_BOOT;
    s->boot_seeds = bt.max_s;
    boot_free(&bt, s->n_g);
    return OB_OK;
}

/* Each workload's and optimizer label's time in the performance profile
 * into t[w * n_opt + op]: its group's time to target (steps with
 * profile_by_steps; the held-out one with profile_heldout), +inf where it
 * has none or no group. gi: as number_groups'. */
static void profile_times(const ob_dataset *d, const ob_stats_opts *o, const ob_stats *s, const int *gi, double *t)
{
    for (int w = 0; w < d->n_wl; w++)
        for (int op = 0; op < d->n_opt; op++) {
            int k = gi[w * d->n_opt + op];
            double v = INFINITY;
            if (k >= 0) {
                const ob_ttt tk = ob_group_ttt(&s->g[k], o->profile_heldout);
                v = o->profile_by_steps ? tk.steps : tk.time_s;
            }
            t[w * d->n_opt + op] = isnan(v) ? INFINITY : v;
        }
}

ob_status ob_stats_profiles(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, const int *gi, ob_err *e)
{
    double *t = malloc(((size_t)d->n_wl * d->n_opt + 1) * sizeof *t);
    s->n_tau = 301;
    s->taus = malloc((size_t)s->n_tau * sizeof *s->taus);
    s->rho = malloc(((size_t)s->n_tau * d->n_opt + 1) * sizeof *s->rho);
    s->area = malloc(((size_t)d->n_opt + 1) * sizeof *s->area);
    s->in_profile = calloc((size_t)d->n_wl + 1, sizeof *s->in_profile);
    s->profile_ran = calloc((size_t)d->n_opt + 1, sizeof *s->profile_ran);
    if (!t || !s->taus || !s->rho || !s->area || !s->in_profile || !s->profile_ran) {
        free(t);
        return no_mem(e, "computing the statistics");
    }
    profile_times(d, o, s, gi, t);
    /* evenly spaced on the figure's axis: in tau, or in log(tau) past OB_TAU_LOG_ABOVE (both ends exact) */
    s->tau_log = s->tau_max > OB_TAU_LOG_ABOVE;
    for (int i = 0; i < s->n_tau; i++)
        s->taus[i] = s->tau_log ? exp(log(s->tau_max) * i / (s->n_tau - 1)) : 1.0 + (s->tau_max - 1.0) * i / (s->n_tau - 1);
    s->taus[0] = 1.0;
    s->taus[s->n_tau - 1] = s->tau_max;
    ob_stat_profile(t, d->n_wl, d->n_opt, s->taus, s->n_tau, s->tau_max, s->rho, s->area,
                    &s->profile_workloads, s->in_profile);
    /* the profile workloads each optimizer has sweep runs on: the others
     * count as not reached, which the reader must be able to see */
    for (int w = 0; w < d->n_wl; w++)
        for (int op = 0; s->in_profile[w] && op < d->n_opt; op++) {
            int k = gi[w * d->n_opt + op];
            s->profile_ran[op] += k >= 0 && s->g[k].n_runs > 0;
        }
    tuned tp;
    ob_status st = tuned_profile(d, s, t, gi, &tp);
    if (st == OB_OK) st = profile_boot(d, o, s, gi, &tp);
    tuned_free(&tp);
    free(t);
    return st == OB_OK ? OB_OK : no_mem(e, "computing the statistics");
}

