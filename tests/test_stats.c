/* tests/test_stats.c - results/stats against hand computation: quantiles,
 * the interval of a median, log-lr interpolation, sensitivity width, time to target with
 * smoothing and censoring, the performance profile, the sign test past 1000
 * seeds, seeds that count against an optimizer (diverged held-out values, a
 * finished run without a finite final loss, one seed without an interval), and
 * every statistic of the reference database of tests/test_stats_db.h (values
 * worked out below), and the same statistics from curves read one at a time
 * from the database as from every curve in memory. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "results/dataset.h"
#include "results/export.h"
#include "results/stats.h"
#include "results/store.h"
#include "test_stats_db.h"

static void test_helpers(void)
{
    double a[] = {3, 1, 2};
    CHECK(ob_stat_median(a, 3) == 2);
    double b[] = {4, 1, 3, 2};
    CHECK(ob_stat_median(b, 4) == 2.5);
    double c[10];
    for (int i = 0; i < 10; i++) c[i] = i + 1;
    CHECK_NEAR(ob_stat_quantile(c, 10, 0.9), 9.1, 1e-12);
    double d[] = {1, INFINITY};
    CHECK(isinf(ob_stat_median(d, 2)));
    double e[] = {1, 2, INFINITY};
    CHECK(ob_stat_median(e, 3) == 2);
    double f[] = {NAN, 5, NAN, 7};
    CHECK(ob_stat_median(f, 4) == 6);
    double g[] = {INFINITY, INFINITY};
    CHECK(isinf(ob_stat_median(g, 2)));
    CHECK(isnan(ob_stat_median(f, 0)));
    double h[] = {2, 4, 4, 4, 5, 5, 7, 9};
    CHECK_NEAR(ob_stat_mean(h, 8), 5.0, 1e-12);
    CHECK_NEAR(ob_stat_sd(h, 8), sqrt(32.0 / 7.0), 1e-12);
    CHECK(isnan(ob_stat_sd(h, 1)));
}

/* The distribution-free interval of a median: its order statistics by n,
 * its stated coverage, and that coverage measured on samples of a uniform
 * distribution (whose median is 0.5). */
static void test_median_ci(void)
{
    ob_err e = {0};
    double lo, hi, cover;
    double one[] = {3.5};
    CHECK_OK(ob_stat_median_ci(one, 0, 0.95, &lo, &hi, &cover, &e), &e);
    CHECK(isnan(lo) && isnan(hi) && cover == 0);
    CHECK_OK(ob_stat_median_ci(one, 1, 0.95, &lo, &hi, &cover, &e), &e);
    CHECK(lo == 3.5 && hi == 3.5 && cover == 0);
    double two[] = {2, NAN, 1};
    CHECK_OK(ob_stat_median_ci(two, 3, 0.95, &lo, &hi, &cover, &e), &e);
    CHECK(lo == 1 && hi == 2 && cover == 0.5);
    /* 1..9 in some order: n <= 8 gives [min, max]; 9 the 2nd to the 8th */
    double v[] = {5, 9, 1, 7, 3, 8, 2, 6, 4};
    const double want_cover[] = {0, 0, 0.5, 0.75, 0.875, 0.9375, 1 - 2.0 / 64, 1 - 2.0 / 128, 1 - 2.0 / 256};
    for (int n = 2; n <= 8; n++) {
        CHECK_OK(ob_stat_median_ci(v, n, 0.95, &lo, &hi, &cover, &e), &e);
        CHECK_MSG(lo == ob_stat_min(v, n) && hi == ob_stat_max(v, n), "n=%d: [%g, %g]", n, lo, hi);
        CHECK_MSG(fabs(cover - want_cover[n]) < 1e-15, "n=%d: cover %.17g", n, cover);
    }
    CHECK_OK(ob_stat_median_ci(v, 9, 0.95, &lo, &hi, &cover, &e), &e);
    CHECK_MSG(lo == 2 && hi == 8 && fabs(cover - (1 - 20.0 / 512)) < 1e-15, "n=9: [%g, %g] cover %g", lo, hi, cover);
    /* infinities (diverged seeds) sort last */
    double inf[] = {INFINITY, 1, INFINITY, 2, INFINITY, INFINITY};
    CHECK_OK(ob_stat_median_ci(inf, 6, 0.95, &lo, &hi, &cover, &e), &e);
    CHECK(lo == 1 && isinf(hi));
    /* 101 values 0..100: the largest k with coverage >= 95%, and no larger */
    double many[101];
    for (int i = 0; i < 101; i++) many[i] = (i * 37) % 101;
    CHECK_OK(ob_stat_median_ci(many, 101, 0.95, &lo, &hi, &cover, &e), &e);
    int k = (int)lo + 1;
    CHECK_MSG(hi == 100 - lo && cover >= 0.95 && 1 - ob_stat_sign_test(k, 101) < 0.95 && k > 35 && k < 46,
              "n=101: [%g, %g] cover %g", lo, hi, cover);
    /* the stated coverage is the measured one (20000 samples: sd under 0.2%) */
    const int ns[] = {7, 9, 20, 60};
    uint64_t z = 12345;
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        const int n = ns[t], trials = 20000;
        double x[60];
        int held = 0, failed = 0;
        for (int r = 0; r < trials; r++) {
            for (int i = 0; i < n; i++) {
                z = z * 6364136223846793005ull + 1442695040888963407ull;
                x[i] = (double)(z >> 11) * 0x1p-53;
            }
            failed += ob_stat_median_ci(x, n, 0.95, &lo, &hi, &cover, &e) != OB_OK;
            held += lo <= 0.5 && 0.5 <= hi;
        }
        CHECK(failed == 0);
        double got = (double)held / trials;
        CHECK_MSG(cover >= 0.95 && fabs(got - cover) < 0.01, "n=%d: stated coverage %.4f, measured %.4f", n, cover,
                  got);
    }
}

static void test_interp_width(void)
{
    double lr[] = {1e-3, 1e-2, 1e-1};
    double v[] = {4, 1, 2};
    /* log(loss) linear in log(lr): 5e-3 is log10(5) of the way from 1e-3 to
     * 1e-2, so 4^(1 - log10 5) 1^(log10 5) = 4^(log10 2) = 1.5179 (linearly in
     * the loss it would be 1.903); 2e-2: 2^(log10 2) = 1.2320 */
    CHECK_NEAR(ob_stat_interp_loglr(lr, v, 3, 5e-3), pow(4, log10(2.0)), 1e-12);
    CHECK_NEAR(ob_stat_interp_loglr(lr, v, 3, 5e-3), 1.51788, 1e-5);
    CHECK_NEAR(ob_stat_interp_loglr(lr, v, 3, 2e-2), pow(2, log10(2.0)), 1e-12);
    /* a loss <= 0 has no log: linearly in the loss there */
    double vz[] = {-1, 1, 0};
    CHECK_NEAR(ob_stat_interp_loglr(lr, vz, 3, 5e-3), -1 + 2 * log10(5.0), 1e-12);
    CHECK_NEAR(ob_stat_interp_loglr(lr, vz, 3, 2e-2), 1 - log10(2.0), 1e-12);
    double v0[] = {0, 1, 2}; /* ... and from a loss of exactly 0 */
    CHECK_NEAR(ob_stat_interp_loglr(lr, v0, 3, 5e-3), log10(5.0), 1e-12);
    CHECK(ob_stat_interp_loglr(lr, v, 3, 1e-2) == 1);
    CHECK(isnan(ob_stat_interp_loglr(lr, v, 3, 5e-4)));
    CHECK(isnan(ob_stat_interp_loglr(lr, v, 3, 0.2)));
    double vi[] = {4, 1, INFINITY};
    /* between an lr that trains and one that diverged: unknown, however near */
    CHECK(isnan(ob_stat_interp_loglr(lr, vi, 3, 2e-2)));
    CHECK(isnan(ob_stat_interp_loglr(lr, vi, 3, 5e-2)));
    CHECK(isinf(ob_stat_interp_loglr(lr, vi, 3, 1e-1)));     /* on the grid: diverged */
    CHECK_NEAR(ob_stat_interp_loglr(lr, vi, 3, 5e-3), pow(4, log10(2.0)), 1e-12);

    double lr5[] = {1e-4, 1e-3, 1e-2, 1e-1, 1};
    double m5[] = {10, 2, 1, 1.05, 3};
    int olo, ohi;
    /* threshold 1.1, log(loss) linear in log(lr): right end
     * -1 + ln(1.1 / 1.05) / ln(3 / 1.05) = -1 + 0.04433; left end
     * -2 - ln(1.1 / 1) / ln(2 / 1) = -2 - 0.13750 */
    double want = (-1 + log(1.1 / 1.05) / log(3 / 1.05)) - (-2 - log(1.1) / log(2.0));
    CHECK_NEAR(want, 1.18182, 1e-5);
    CHECK_NEAR(ob_stat_lr_width(lr5, m5, 5, 2, 1.1, &olo, &ohi), want, 1e-12);
    CHECK(olo == 0 && ohi == 0);
    double m2[] = {1, 1.05};
    CHECK_NEAR(ob_stat_lr_width(lr, m2, 2, 0, 1.1, &olo, &ohi), 1.0, 1e-12);
    CHECK(olo == 1 && ohi == 1);
    double lr4[] = {1e-3, 1e-2, 1e-1, 1};
    double m4[] = {INFINITY, 1, 1.05, INFINITY};
    CHECK_NEAR(ob_stat_lr_width(lr4, m4, 4, 1, 1.1, &olo, &ohi), 1.0, 1e-12);
    CHECK(olo == 0 && ohi == 0);
    CHECK(isnan(ob_stat_lr_width(lr4, m4, 4, 0, 1.1, &olo, &ohi)));
    CHECK(isnan(ob_stat_lr_width(lr5, m5, 5, 2, 0.9, &olo, &ohi))); /* a threshold below the best */
    /* a median equal to the threshold is inside (m <= thr), and the range goes
     * on past it: every lr here is inside, both ends open at the grid's edges */
    double meq[] = {1.05, 1.1, 1, 1.1, 1.05};
    CHECK_NEAR(ob_stat_lr_width(lr5, meq, 5, 2, 1.1, &olo, &ohi), 4.0, 1e-12);
    CHECK(olo == 1 && ohi == 1);
    /* tolerance 0 with the neighbours at the best median: inside too */
    double mflat[] = {2, 1, 1, 1, 2};
    CHECK_NEAR(ob_stat_lr_width(lr5, mflat, 5, 1, 1.0, &olo, &ohi), 2.0, 1e-12);
    CHECK(olo == 0 && ohi == 0);
}

/* ob_stat_first_reach and ob_stat_majority_first_reach, which must not fail here */
static int64_t first_reach(const double *loss, int64_t n, double target)
{
    ob_err e = {0};
    int64_t at = -2;
    CHECK_OK(ob_stat_first_reach(loss, n, target, &at, &e), &e);
    return at;
}

static int64_t majority_first_reach(int m, const int64_t *const *steps, const double *const *loss,
                                    const int64_t *n, double target)
{
    ob_err e = {0};
    int64_t at = -2, at2 = -2;
    double lo = 7, hi = 7;
    CHECK_OK(ob_stat_majority_first_reach(m, steps, loss, n, target, &at, NULL, NULL, &e), &e);
    /* the interval asked for changes nothing, and holds the step it is of */
    CHECK_OK(ob_stat_majority_first_reach(m, steps, loss, n, target, &at2, &lo, &hi, &e), &e);
    CHECK(at2 == at);
    if (at >= 0) CHECK_MSG(lo <= (double)at && (double)at <= hi, "%g <= %lld <= %g", lo, (long long)at, hi);
    else CHECK(isnan(lo) && isnan(hi));
    return at;
}

/* The interval of the steps to target over the seeds: first reaches 8, 12
 * and never give [8, inf], of which the upper median 12 is inside; 2, 9, 4,
 * 7, 30, 5 and 11 (7 seeds) [2, 30] (the interval of a median of 7 at 95% is
 * the extremes); 10 seeds of 1..10 [2, 9]. */
static void test_first_reach_interval(void)
{
    enum { N = 40 };
    int64_t st[N];
    for (int i = 0; i < N; i++) st[i] = i;
    static double l[12][N];
    const int64_t reach[][12] = {{8, 12, -1}, {2, 9, 4, 7, 30, 5, 11}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}};
    const int m[] = {3, 7, 10};
    const double want[][3] = {{12, 8, INFINITY}, {7, 2, 30}, {6, 2, 9}};
    for (int c = 0; c < 3; c++) {
        const int64_t *sp[12];
        const double *lp[12];
        int64_t n[12];
        for (int k = 0; k < m[c]; k++) {
            /* a step down to 0 at reach (the trailing mean of 4 points falls
             * to 0.75 there); never: 1 throughout */
            for (int i = 0; i < N; i++) l[k][i] = reach[c][k] >= 0 && i >= reach[c][k] ? 0 : 1;
            sp[k] = st;
            lp[k] = l[k];
            n[k] = N;
        }
        ob_err e = {0};
        int64_t at = -2;
        double lo = NAN, hi = NAN;
        CHECK_OK(ob_stat_majority_first_reach(m[c], sp, lp, n, 0.8, &at, &lo, &hi, &e), &e);
        CHECK_MSG(at == (int64_t)want[c][0] && lo == want[c][1] && hi == want[c][2], "case %d: %lld [%g, %g]", c,
                  (long long)at, lo, hi);
    }
}

static void test_first_reach(void)
{
    double l[10] = {5, 4, 3, 2, 1, 1, 1, 1, 1, 1};
    CHECK(first_reach(l, 10, 2.5) == 3);
    CHECK(first_reach(l, 10, 0.5) == -1);
    CHECK(first_reach(l, 10, NAN) == -1);
    CHECK(first_reach(l, 10, 6) == 0); /* at the first step, and the first it stays */
    /* 300 points: window 30; a lone dip at 100 does not count; on the plateau of 1 from 150
     * the mean (10 (30 - c) + c) / 30 of a window with c ones is <= 2 from c = 27: at 176 */
    double *m = malloc(300 * sizeof *m);
    for (int i = 0; i < 300; i++) m[i] = i < 150 ? 10 : 1;
    m[100] = 1;
    CHECK(first_reach(m, 300, 2) == 176);
    /* a non-finite loss (a skipped step) is left out, as in the final loss:
     * window 147..176 has 3 tens and 26 ones -> 56 / 29 */
    m[176] = NAN;
    CHECK(first_reach(m, 300, 2) == 176);
    m[176] = INFINITY;
    CHECK(first_reach(m, 300, 2) == 176);
    /* a window of nothing finite is +inf: never reached */
    double inf3[3] = {INFINITY, NAN, INFINITY};
    CHECK(first_reach(inf3, 3, 1e300) == -1);
    /* a huge value leaving the window takes nothing with it: 1000 losses of
     * 1e-9 and one of 1e8 at step 50 (window 100): from step 150 the mean
     * is 1e-9 again (a plain running sum left it 55% low) */
    double *tiny = malloc(1000 * sizeof *tiny), *tm = malloc(1000 * sizeof *tm);
    for (int i = 0; i < 1000; i++) tiny[i] = 1e-9;
    tiny[50] = 1e8;
    ob_stat_trailing_mean(tiny, 1000, tm);
    CHECK_MSG(fabs(tm[150] / 1e-9 - 1) < 1e-9 && fabs(tm[999] / 1e-9 - 1) < 1e-9, "trailing mean %g, %g", tm[150],
              tm[999]);
    free(tiny);
    free(tm);
    /* long curve (window 500): cancellation after the large values stays far below the target */
    double *big = malloc(5000 * sizeof *big);
    for (int i = 0; i < 5000; i++) big[i] = i < 4000 ? 1e6 : 1e-6;
    CHECK(first_reach(big, 5000, 2e-6) == 4499);
    free(big);
    free(m);
}

static void test_profile(void)
{
    /* 3 workloads x 3 optimizers; the third workload nobody reached */
    double t[9] = {1, 2, INFINITY, 4, 2, 3, INFINITY, INFINITY, INFINITY};
    double taus[4] = {1, 1.5, 2, 4};
    double rho[12], area[3];
    int used, w_used[3] = {-1, -1, -1};
    ob_stat_profile(t, 3, 3, taus, 4, 4.0, rho, area, &used, w_used);
    CHECK(used == 2);
    CHECK(w_used[0] == 1 && w_used[1] == 1 && w_used[2] == 0);
    CHECK(rho[0 * 3 + 0] == 0.5 && rho[0 * 3 + 1] == 0.5 && rho[0 * 3 + 2] == 0);
    CHECK(rho[1 * 3 + 2] == 0.5 && rho[1 * 3 + 0] == 0.5);
    CHECK(rho[2 * 3 + 0] == 1 && rho[2 * 3 + 1] == 1 && rho[2 * 3 + 2] == 0.5);
    /* areas: o0 = (1 + 2/3) / 2, o1 = (2/3 + 1) / 2, o2 = (0 + 2.5/3) / 2 */
    CHECK_NEAR(area[0], 5.0 / 6, 1e-12);
    CHECK_NEAR(area[1], 5.0 / 6, 1e-12);
    CHECK_NEAR(area[2], 2.5 / 6, 1e-12);
}

/* Profile areas rank by competition ranking: equal areas (also where the sums
 * that made them differ in the last bits) share a rank, the next one skips. */
static void test_profile_rank(void)
{
    double area[] = {0.5, 1.0 / 3, (0.1 + 0.2) / 0.9, 0, 0.5, NAN};
    ob_stats s;
    memset(&s, 0, sizeof s);
    s.n_opt = 6;
    s.area = area;
    static const int want[] = {1, 3, 3, 5, 1, 6};
    for (int o = 0; o < 6; o++)
        CHECK_MSG(ob_stats_profile_rank(&s, o) == want[o], "optimizer %d: rank %d, want %d", o,
                  ob_stats_profile_rank(&s, o), want[o]);
}

/* Steps to target at an lr: each seed's own first reach, then the upper median of those,
 * the step by which a strict majority of the seeds got there. */
static void test_majority_first_reach(void)
{
    enum { N = 50 };
    int64_t st[N], st2[10];
    double a[N], b[N], c[10];
    for (int i = 0; i < N; i++) {
        st[i] = i + 1;
        a[i] = i < 20 ? 2 : 0.8;
        b[i] = i < 20 ? 2 : 1.2;
    }
    for (int i = 0; i < 10; i++) {
        st2[i] = i + 1;
        c[i] = 0.5; /* good from the start for 10 steps */
    }
    /* window 5: a's trailing loss (2 (5 - k) + 0.8 k) / 5 with k plateau points is <= 1.1
     * from k = 4, index 23, step 24; b's never is */
    CHECK(first_reach(a, N, 1.1) == 23);
    CHECK(first_reach(b, N, 1.1) == -1);
    /* two seeds that end at 0.8 and 1.2 (median final loss 1.0, so a default target of
     * 1.1): one never gets there, so the pair has not. The median over seeds of the
     * trailing loss, the mean of the two, reached 1.1 at step 25 */
    const int64_t *s2[] = {st, st};
    const double *l2[] = {a, b};
    int64_t n2[] = {N, N};
    CHECK(majority_first_reach(2, s2, l2, n2, 1.1) == -1);
    /* both get there, a at step 23 (k = 3), b at 25 ((2 (5 - k) + 1.2 k) / 5 <= 1.3 from
     * k = 5): the later one */
    CHECK(majority_first_reach(2, s2, l2, n2, 1.3) == 25);
    CHECK(majority_first_reach(2, s2, l2, n2, 0.9) == -1);
    CHECK(majority_first_reach(2, s2, l2, n2, NAN) == -1);
    CHECK(majority_first_reach(0, s2, l2, n2, 1.1) == -1);
    /* a third seed, at 0.5 from its first step until it stopped after 10 (diverged or
     * not, its curve ends there): it reached the target at step 1, before it stopped,
     * and that counts. First reaches 24, never, 1: two of three by step 24 */
    const int64_t *s3[] = {st, st, st2};
    const double *l3[] = {a, b, c};
    int64_t n3[] = {N, N, 10};
    CHECK(majority_first_reach(3, s3, l3, n3, 1.1) == 24);
    /* one seed alone: the same as ob_stat_first_reach, as a step */
    CHECK(majority_first_reach(1, s2, l2, n2, 1.1) == st[first_reach(a, N, 1.1)]);
}

/* The steps to target of m seeds whose trailing losses first reach the target at steps
 * at[k] (-1: never), on steps 1..60: loss 10 before at[k], 0 from it on, target 9. The
 * window is 6 points; one 0 in it brings the trailing loss to at most 50 / 6 < 9. */
static int64_t majority_of(int m, const int64_t *at)
{
    enum { N = 60, M = 8 };
    int64_t steps[N];
    static double loss[M][N];
    const int64_t *sp[M];
    const double *lp[M];
    int64_t n[M];
    for (int i = 0; i < N; i++) steps[i] = i + 1;
    for (int k = 0; k < m && k < M; k++) {
        for (int i = 0; i < N; i++) loss[k][i] = at[k] >= 0 && steps[i] >= at[k] ? 0 : 10;
        CHECK(first_reach(loss[k], N, 9) == (at[k] >= 0 ? at[k] - 1 : -1));
        sp[k] = steps;
        lp[k] = loss[k];
        n[k] = N;
    }
    return majority_first_reach(m, sp, lp, n, 9);
}

/* The first reaches of the seeds, never = -1, and the steps to target at their lr: the
 * ceil((m + 1) / 2)-th smallest, a strict majority. With an even number of seeds the
 * median over seeds of the trailing loss, the mean of the middle two, got there with half
 * of them: [never, 39] at step 40, [39, 12] at 13, [10, 20, 30, never] at 21, [10, 20,
 * never, never] at 21 too. */
static void test_majority_cases(void)
{
    CHECK(majority_of(2, (const int64_t[]){-1, 39}) == -1);         /* one of two: not reached */
    CHECK(majority_of(2, (const int64_t[]){39, 12}) == 39);         /* both: the later */
    CHECK(majority_of(3, (const int64_t[]){5, -1, 7}) == 7);        /* two of three */
    CHECK(majority_of(3, (const int64_t[]){5, -1, -1}) == -1);      /* one of three */
    CHECK(majority_of(4, (const int64_t[]){10, 20, 30, -1}) == 30); /* three of four */
    CHECK(majority_of(4, (const int64_t[]){10, 20, -1, -1}) == -1); /* two of four: no majority */
    CHECK(majority_of(5, (const int64_t[]){50, 10, -1, 30, 20}) == 30);
    CHECK(majority_of(1, (const int64_t[]){17}) == 17);
    /* a seed that reached the target at step 4 and diverged at step 6 (its curve ends
     * there in an infinite loss) got there: with another at step 9 and one that never
     * does, two of three by step 9. The median over seeds of the trailing loss, which
     * counts the diverged seed +inf from step 6 on, never reached it */
    enum { N = 12 };
    int64_t st[N];
    double dv[6] = {2, 2, 2, 0.5, 0.5, INFINITY}, ok[N], no[N]; /* window 1 */
    for (int i = 0; i < N; i++) {
        st[i] = i + 1;
        ok[i] = i < 8 ? 2 : 0.5; /* from step 9 */
        no[i] = 2;
    }
    const int64_t *sp[] = {st, st, st};
    const double *lp[] = {dv, ok, no};
    int64_t n[] = {6, N, N};
    CHECK(majority_first_reach(3, sp, lp, n, 1.0) == 9);
    /* diverged before it got there: one of three */
    dv[3] = dv[4] = 2;
    CHECK(majority_first_reach(3, sp, lp, n, 1.0) == -1);
}

static const ob_group *grp(const ob_dataset *d, const ob_stats *s, const char *wl, const char *opt)
{
    int w = ob_dataset_find_wl(d, wl), o = ob_dataset_find_opt(d, opt);
    return w < 0 || o < 0 ? NULL : ob_stats_group(s, w, o);
}

/* A new results database at path (a file already there removed first);
 * NULL, with a failed check, when it cannot be created. */
static ob_store *new_store(const char *path)
{
    ob_err e = {0};
    ob_store *s = NULL;
    remove(path);
    CHECK_OK(ob_store_open(path, OB_STORE_CREATE, &s, &e), &e);
    return s;
}

/* Every run of db (benchmark id 0) into d, with its curves. */
static void load_with_curves(sqlite3 *db, ob_dataset *d)
{
    ob_err e = {0};
    CHECK_OK(ob_dataset_load(db, 0, d, &e), &e);
    CHECK_OK(ob_dataset_load_curves(db, d, &e), &e);
}

/* load_with_curves, then the statistics of d under o (NULL: the defaults) into st. */
static void load_stats(sqlite3 *db, const ob_stats_opts *o, ob_dataset *d, ob_stats *st)
{
    ob_stats_opts def;
    ob_stats_opts_default(&def);
    load_with_curves(db, d);
    ob_err e = {0};
    CHECK_OK(ob_stats_compute(d, o ? o : &def, st, &e), &e);
}

/* load_stats on the database at path, opened read-only. */
static void load_stats_at(const char *path, const ob_stats_opts *o, ob_dataset *d, ob_stats *st)
{
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    load_stats(db, o, d, st);
    sqlite3_close(db);
}

/* The default options with a given target for each of n workloads (wl and
 * val must outlive o). */
static void opts_targets(ob_stats_opts *o, int n, const char **wl, const double *val)
{
    ob_stats_opts_default(o);
    o->n_targets = n;
    o->target_wl = wl;
    o->target_val = val;
}

/* The default options with n held-out targets (--eval-target). */
static void opts_ev_targets(ob_stats_opts *o, int n, const char **wl, const double *val)
{
    ob_stats_opts_default(o);
    o->n_ev_targets = n;
    o->ev_target_wl = wl;
    o->ev_target_val = val;
}

static void test_reference(const char *path)
{
    ob_err e = {0};
    ob_store *st = NULL;
    CHECK_OK(ob_store_open(path, OB_STORE_READONLY, &st, &e), &e);
    if (!st) return;
    ob_dataset d;
    load_with_curves(ob_store_db(st), &d);
    CHECK(d.n == 24);
    CHECK(d.n_superseded == 1);
    CHECK(d.n_wl == 2 && d.n_opt == 2);
    CHECK(!strcmp(d.opt_labels[0], "adam") && !strcmp(d.opt_labels[1], "sgd"));
    CHECK(!strcmp(d.wl_labels[0], "quad") && !strcmp(d.wl_labels[1], "rosen"));

    ob_stats_opts o;
    ob_stats_opts_default(&o);
    ob_stats s;
    CHECK_OK(ob_stats_compute(&d, &o, &s, &e), &e);
    CHECK(s.n_g == 4);
    const ob_group *qa = grp(&d, &s, "quad", "adam"), *qs = grp(&d, &s, "quad", "sgd");
    const ob_group *ra = grp(&d, &s, "rosen", "adam"), *rs = grp(&d, &s, "rosen", "sgd");
    CHECK(qa && qs && ra && rs);
    if (!qa || !qs || !ra || !rs) return;

    /* quad / adam: lr medians 4, 1.0, 1.08 (one seed of 0.1 diverged) */
    CHECK(qa->n_lr == 3);
    CHECK(qa->best_lr == 0.01);
    CHECK_NEAR(qa->final.median, 1.0, 1e-12);
    CHECK(qa->final.min == 0.8 && qa->final.max == 1.2);
    CHECK(qa->final.ci_lo == 0.8 && qa->final.ci_hi == 1.2);
    CHECK(qa->final.n == 3);
    CHECK_NEAR(qa->eval_loss.median, 1.5, 1e-12);
    CHECK_NEAR(qa->eval_loss.min, 1.3, 1e-12);
    CHECK_NEAR(qa->eval_loss.max, 1.7, 1e-12);
    CHECK_NEAR(qa->eval_metric.median, 0.9, 1e-12);
    CHECK_NEAR(qa->lrs[2].med, 1.08, 1e-12);
    CHECK(qa->lrs[2].n_diverged == 1);
    /* lr 0.1 is within 10% (1.08) but a seed diverged there: the range ends at
     * 0.01; its left end is where log(median) between 4 (lr 0.001) and 1 (lr
     * 0.01) crosses 1.1: ln(1.1) / ln(4) = 0.0688 decades left of 0.01 */
    CHECK_NEAR(qa->width_decades, log(1.1) / log(4.0), 1e-12);
    CHECK(qa->width_open_hi == 0 && qa->width_open_lo == 0);
    CHECK_NEAR(qa->loss_half, pow(4, log10(2.0)), 1e-12);      /* 4^(1 - log10 5) */
    CHECK_NEAR(qa->loss_double, pow(1.08, log10(2.0)), 1e-12); /* 1^(1 - log10 2) 1.08^(log10 2) */
    CHECK_NEAR(qa->seed_cv, 0.2, 1e-12);
    CHECK_NEAR(qa->div_rate, 1.0 / 9, 1e-12);
    CHECK(qa->first_div_lr == 0.1);
    CHECK(qa->n_runs == 9 && qa->n_finished == 9 && qa->n_diverged == 1 && qa->n_failed == 0);

    /* quad / sgd: lr medians 7, 2.2, inf (all diverged at 0.1); a failed and a pending run */
    CHECK(qs->best_lr == 0.01);
    CHECK_NEAR(qs->final.median, 2.2, 1e-12);
    CHECK(isinf(qs->lrs[2].med));
    CHECK_NEAR(qs->width_decades, log(2.42 / 2.2) / log(7 / 2.2), 1e-12); /* 7 to 2.2 crosses 2.42 */
    CHECK(qs->width_open_lo == 0 && qs->width_open_hi == 0);
    CHECK_NEAR(qs->loss_half, 7 * pow(2.2 / 7, log10(5.0)), 1e-12);
    CHECK(isnan(qs->loss_double)); /* between 0.01 and the diverged 0.1: unknown */
    CHECK_NEAR(qs->seed_cv, 0.2 / 2.2, 1e-12);
    CHECK_NEAR(qs->div_rate, 3.0 / 9, 1e-12);
    CHECK(qs->first_div_lr == 0.1);
    CHECK(qs->n_runs == 11 && qs->n_failed == 1 && qs->n_unfinished == 1);

    /* targets: 1.1 x best median (quad 1.0 -> 1.1, rosen 0.5 -> 0.55) */
    CHECK_NEAR(s.target[0], 1.1, 1e-12);
    CHECK_NEAR(s.target[1], 0.55, 1e-12);
    /* Curves of 50 points: window 5. With L(t) = f + max(0, T - t) / 2 the window mean
     * exceeds f by (j + 2) / 2 at t = T - j, then 1.0, 0.6, 0.3, 0.1, 0 at t = T .. T + 4.
     * quad / adam reaches 1.1 at lr 0.01 (T 20) at 23 (f 1.0), never (f 1.2), 22 (f 0.8):
     * median 23; at lr 0.1 (T 10) at 14, 14 and never (diverged): median 14, so the
     * best lr for speed is 0.1 */
    CHECK(qa->lrs[1].tt_steps == 23);
    CHECK(qa->lrs[2].tt_steps == 14);
    CHECK(isinf(qa->lrs[0].tt_steps));
    CHECK(qa->tt_steps == 14 && qa->tt_lr == 0.1 && !qa->tt_censored);
    CHECK_NEAR(qa->tt_time_s, 14 * 2.0 / 1000, 1e-15);
    /* quad / sgd never gets below 2: censored */
    CHECK(qs->tt_censored && isinf(qs->tt_steps) && isinf(qs->tt_time_s) && isnan(qs->tt_lr));
    /* rosen (target 0.55): adam (T 10, f 0.5) at step 14, 2 ms/step; sgd (T 4, f 0.52) at 8, 1 ms/step */
    CHECK(ra->tt_steps == 14 && rs->tt_steps == 8);
    CHECK_NEAR(rs->tt_time_s, 0.008, 1e-15);
    /* one lr: the range is not measured (not ">= 0") */
    CHECK(isnan(ra->width_decades) && ra->width_open_lo && ra->width_open_hi && ra->width_unmeasured == OB_WIDTH_ONE_LR);
    CHECK(qa->width_unmeasured == OB_WIDTH_MEASURED && qs->width_unmeasured == OB_WIDTH_MEASURED);
    CHECK(isnan(ra->loss_half) && isnan(ra->loss_double));
    CHECK(ra->seed_cv == 0);

    /* cost */
    CHECK(qa->step_ms_median == 2.0 && qa->step_ms_p90 == 3.0);
    CHECK_NEAR(qa->overhead_vs_sgd, 1.0, 1e-12);
    CHECK_NEAR(qs->overhead_vs_sgd, 0.0, 1e-12);
    CHECK(qa->peak_mem_bytes == 4098 && qa->state_bytes == 800);
    CHECK(qs->peak_mem_bytes == 2048 && qs->state_bytes == 400);

    /* profile by time: quad adam 1 (sgd censored); rosen sgd 1, adam 0.028 / 0.008 = 3.5:
     * area adam (1 + 0.5 / 3) / 2, sgd (0 + 1) / 2 */
    CHECK(s.profile_workloads == 2);
    int ia = 0, is = 1;
    CHECK(s.rho[0 * 2 + ia] == 0.5 && s.rho[0 * 2 + is] == 0.5);
    CHECK(s.rho[(s.n_tau - 1) * 2 + ia] == 1.0);
    CHECK_NEAR(s.area[ia], 7.0 / 12, 1e-9);
    CHECK_NEAR(s.area[is], 0.5, 1e-12);
    ob_stats_free(&s);

    /* profile by steps: rosen adam 14 / 8 = 1.75 -> area adam (1 + 2.25 / 3) / 2 */
    o.profile_by_steps = 1;
    CHECK_OK(ob_stats_compute(&d, &o, &s, &e), &e);
    CHECK_NEAR(s.area[ia], 0.875, 1e-12);
    CHECK_NEAR(s.area[is], 0.5, 1e-12);
    CHECK(s.taus[75] == 1.75 && s.rho[75 * 2 + ia] == 1.0 && s.rho[74 * 2 + ia] == 0.5);
    ob_stats_free(&s);

    /* tolerance 0.5: adam's left end moves to -2 - ln(1.5) / ln(4) (its right end stays at 0.01) */
    ob_stats_opts_default(&o);
    o.tol = 0.5;
    CHECK_OK(ob_stats_compute(&d, &o, &s, &e), &e);
    qa = grp(&d, &s, "quad", "adam");
    CHECK_NEAR(qa->width_decades, log(1.5) / log(4.0), 1e-12);
    ob_stats_free(&s);

    /* a tolerance of the progress: 10% of the way from quad's loss before
     * training down to adam's best median 1.0, so the threshold is
     * 1 + 0.1 (start - 1); the left end is where log(median) between 4 and
     * 1 crosses it (the right end stays at 0.01, a seed diverged at 0.1) */
    ob_stats_opts_default(&o);
    o.tol_of_progress = 1;
    CHECK_OK(ob_stats_compute(&d, &o, &s, &e), &e);
    qa = grp(&d, &s, "quad", "adam");
    const double start = s.start_loss[ob_dataset_find_wl(&d, "quad")];
    CHECK_MSG(start > 4 && start < 31, "quad starts at %g", start);
    CHECK(s.tol_of_progress == 1 && qa->width_unmeasured == OB_WIDTH_MEASURED);
    CHECK_NEAR(qa->width_decades, log(1 + 0.1 * (start - 1)) / log(4.0), 1e-12);
    ob_stats_free(&s);

    /* a given target: quad 2.45 (no ties with the window means). adam at lr 0.01 (f 1.0,
     * 1.2, 0.8): 20, 20, 19 (median 20); at lr 0.1: 10, 10, never (10). sgd at lr 0.01
     * (f 2.0, 2.2, 2.4): 22, 23, 24 (23) */
    const char *tw[] = {"quad"};
    double tv[] = {2.45};
    opts_targets(&o, 1, tw, tv);
    CHECK_OK(ob_stats_compute(&d, &o, &s, &e), &e);
    qa = grp(&d, &s, "quad", "adam");
    qs = grp(&d, &s, "quad", "sgd");
    CHECK(s.target_given[0] && s.target[0] == 2.45 && !s.target_given[1]);
    CHECK(qa->tt_steps == 10 && qa->tt_lr == 0.1);
    CHECK(qa->lrs[1].tt_steps == 20);
    CHECK(qs->tt_steps == 23 && qs->tt_lr == 0.01);
    CHECK_NEAR(qs->tt_time_s, 0.023, 1e-15);
    ob_stats_free(&s);
    const char *bad[] = {"nosuch"};
    o.target_wl = bad;
    CHECK(ob_stats_compute(&d, &o, &s, &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "nosuch") != NULL);

    ob_dataset_free(&d);
    /* only the latest benchmark / a given one */
    CHECK_OK(ob_dataset_load(ob_store_db(st), -1, &d, &e), &e);
    CHECK(d.n == 24 && d.benchmark_id == 1);
    ob_dataset_free(&d);
    CHECK_OK(ob_dataset_load(ob_store_db(st), 5, &d, &e), &e);
    CHECK(d.n == 0);
    ob_dataset_free(&d);
    ob_store_close(st);
}

/* Time to target takes its steps and lr from the lr that gets there in the fewest steps
 * (0.01: 10 steps), not from the one whose runs happened to be timed fastest (0.1: 20
 * steps of 1 ms against 0.01's 10 ms), with --profile-by steps or not; its time is those
 * steps x the group's step time over every lr's runs (10, 1 and lr 1's 2 ms: median 2),
 * the work of a step being the same at every lr. Ties in steps go to the smaller lr. And
 * an optimizer whose every run diverged has no rank. */
static void test_tt_one_lr(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 1.0, 10, 10, 10, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.1, 0, "done", 1.0, 20, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 1.0, 0, "done", 1.0, 40, 2, 2, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "lion", NULL, 0.01, 0, "diverged", 0, 0, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "lion", NULL, 0.1, 0, "diverged", 0, 0, 1, 1, 1, 1, 1, 1, 0});
    /* the same steps at two lrs, the larger one timed faster: the smaller lr */
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "done", 1.0, 15, 8, 8, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.1, 0, "done", 1.0, 15, 2, 2, 1, 1, 1, 1, 0});
    ob_dataset d;
    load_with_curves(ob_store_db(s), &d);
    const char *tw[] = {"W"};
    double tv[] = {2.45}; /* reached at step T (see test_reference) */
    ob_stats_opts o;
    opts_targets(&o, 1, tw, tv);
    for (int by_steps = 0; by_steps < 2; by_steps++) {
        o.profile_by_steps = by_steps;
        ob_stats st;
        CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
        const ob_group *g = grp(&d, &st, "W", "adam");
        CHECK(g != NULL);
        if (g)
            CHECK_MSG(g->tt_lr == 0.01 && g->tt_steps == 10 && fabs(g->tt_time_s - 0.020) < 1e-12 &&
                          g->tt_step_ms == 2,
                      "by %s: lr %g, %g steps, %g s", by_steps ? "steps" : "time", g->tt_lr, g->tt_steps,
                      g->tt_time_s);
        /* every lr point converts by the same step time */
        if (g && g->n_lr == 3)
            CHECK(fabs(g->lrs[1].tt_time_s - 0.040) < 1e-12 && fabs(g->lrs[2].tt_time_s - 0.080) < 1e-12);
        const ob_group *gs = grp(&d, &st, "W", "sgd");
        if (gs)
            CHECK_MSG(gs->tt_lr == 0.01 && gs->tt_steps == 15 && fabs(gs->tt_time_s - 0.075) < 1e-12,
                      "tie: lr %g, %g steps, %g s", gs->tt_lr, gs->tt_steps, gs->tt_time_s);
        int rank[4] = {-1, -1, -1, -1};
        if (st.n_g <= 4) ob_stats_rank(&st, rank);
        const ob_group *gl = grp(&d, &st, "W", "lion");
        for (int k = 0; k < st.n_g && k < 4; k++)
            CHECK(&st.g[k] == gl ? rank[k] == 0 : rank[k] > 0);
        ob_stats_free(&st);
    }
    ob_dataset_free(&d);
    /* time is steps x the mean step time: lr 0.1's steps of median 1 ms with
     * a mean of 1.5 ms (slow steps now and then): the group's mean step time
     * is the median of 10, 1.5 and 2 ms; with a mean of 6 ms at lr 0.1, of 10,
     * 6 and 2 ms; neither moves the lr. A database without means (schema < 4)
     * falls back on the median step times: 10, 1 and 2 ms */
    static const struct { const char *sql; double time_s, mean; } mc[] = {
        {"UPDATE runs SET step_ms_mean = 1.5 WHERE lr = 0.1", 0.020, 2},
        {"UPDATE runs SET step_ms_mean = 6 WHERE lr = 0.1", 0.060, 6},
        {"UPDATE runs SET step_ms_mean = NULL", 0.020, NAN},
    };
    o.profile_by_steps = 0;
    for (size_t k = 0; k < sizeof mc / sizeof mc[0]; k++) {
        CHECK(sqlite3_exec(ob_store_db(s), mc[k].sql, NULL, NULL, NULL) == SQLITE_OK);
        ob_stats st;
        load_stats(ob_store_db(s), &o, &d, &st);
        const ob_group *g = grp(&d, &st, "W", "adam");
        CHECK_MSG(g && g->tt_lr == 0.01 && g->tt_steps == 10 && fabs(g->tt_time_s - mc[k].time_s) < 1e-12,
                  "mean %zu: lr %g, %g steps, %g s", k, g ? g->tt_lr : NAN, g ? g->tt_steps : NAN,
                  g ? g->tt_time_s : NAN);
        /* the group's mean for the cost table: the median over its three runs */
        if (g && !isnan(mc[k].mean)) CHECK_NEAR(g->step_ms_mean, mc[k].mean, 1e-12);
        if (g && isnan(mc[k].mean)) CHECK(isnan(g->step_ms_mean));
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    ob_store_close(s);
}

/* The best lr at the edge of the grid with a seed diverged at the lr next to
 * it: the range is that lr alone within the grid and open beyond it, so it is
 * not measured (not ">= 0"); with a finite neighbour above the threshold it is. */
/* Time to target's rank: 1 + the number of optimizers that got there clearly
 * sooner. By time, clearly means the whole interval (steps x the 95%
 * interval of the median step time, [min, max] of 3 runs) lies below: adam
 * [10, 12] ms, adamw [11.5, 13] ms and sgd (twice the steps at half the step
 * time) [10, 12] ms lie within each other's noise and share rank 1, though
 * their times differ; lion [20, 22] ms is behind all three (rank 4), the
 * untimed radam after every timed one (5), and rmsprop, never there, has no
 * rank. By steps: radam's 5 steps first, then the three at 10 steps tied,
 * then sgd's 20. */
static void test_tt_rank_noise(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    static const struct { const char *opt; double T, ms[3]; } rows[] = {
        {"adam", 10, {1.0, 1.1, 1.2}},  {"adamw", 10, {1.15, 1.25, 1.3}}, {"lion", 10, {2.0, 2.1, 2.2}},
        {"sgd", 20, {0.5, 0.55, 0.6}},  {"radam", 5, {1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, 0, &(fx_run){"W", rows[i].opt, NULL, 0.01, seed, "done", 1.0, rows[i].T, rows[i].ms[seed],
                                   rows[i].ms[seed], 1, 1, 1, 1, 0});
    for (int seed = 0; seed < 3; seed++)
        fx_add(s, 0, &(fx_run){"W", "rmsprop", NULL, 0.01, seed, "diverged", 0, 0, 1, 1, 1, 1, 1, 1, 0});
    CHECK(sqlite3_exec(ob_store_db(s),
                       "UPDATE runs SET step_ms_median = NULL, step_ms_p90 = NULL, step_ms_mean = NULL "
                       "WHERE optimizer = 'radam'",
                       NULL, NULL, NULL) == SQLITE_OK);
    const char *tw[] = {"W"};
    double tv[] = {2.45};
    ob_stats_opts o;
    opts_targets(&o, 1, tw, tv);
    static const char *const names[] = {"adam", "adamw", "lion", "sgd", "radam", "rmsprop"};
    static const int want[2][6] = {{1, 1, 4, 1, 5, 0}, {2, 2, 2, 5, 1, 0}};
    for (int by_steps = 0; by_steps < 2; by_steps++) {
        o.profile_by_steps = by_steps;
        ob_dataset d;
        ob_stats st;
        load_stats(ob_store_db(s), &o, &d, &st);
        for (int i = 0; i < 6; i++) {
            const ob_group *g = grp(&d, &st, "W", names[i]);
            CHECK(g != NULL);
            if (!g) continue;
            int r = ob_stats_tt_rank(&st, (int)(g - st.g));
            CHECK_MSG(r == want[by_steps][i], "by %s: %s ranks %d, want %d", by_steps ? "steps" : "time",
                      names[i], r, want[by_steps][i]);
        }
        const ob_group *ga = grp(&d, &st, "W", "adam");
        if (ga) CHECK(ga->tt_step_ms_lo == 1.0 && ga->tt_step_ms_hi == 1.2 && ga->tt_step_ms == 1.1);
        /* the spread of the runs' median step times: largest / smallest - 1 */
        if (ga) CHECK_NEAR(ga->step_ms_spread, 0.2, 1e-12);
        const ob_group *gr = grp(&d, &st, "W", "radam");
        if (gr) CHECK(!gr->tt_censored && isnan(gr->tt_time_s) && isnan(gr->tt_step_ms_lo));
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    /* adam's seed-2 run (1.2 ms) met a busy machine: its time to target's
     * step time and its cost (step time, spread, overhead over sgd's quiet
     * runs, 0.55 and 0.6 ms: sgd's seed-0 run met one too) come from the two
     * quiet runs; with all three busy, from all three */
    for (int all = 0; all < 2; all++) {
        CHECK(sqlite3_exec(ob_store_db(s),
                           all ? "UPDATE runs SET other_cpu = 0.6 WHERE optimizer = 'adam'"
                               : "UPDATE runs SET other_cpu = CASE WHEN optimizer IN ('adam', 'sgd') AND "
                                 "seed = (CASE optimizer WHEN 'adam' THEN 2 ELSE 0 END) THEN 0.6 ELSE 0.1 END",
                           NULL, NULL, NULL) == SQLITE_OK);
        ob_dataset d;
        ob_stats st;
        load_stats(ob_store_db(s), &o, &d, &st);
        const ob_group *ga = grp(&d, &st, "W", "adam");
        if (ga) CHECK_NEAR(ga->tt_step_ms, all ? 1.1 : 1.05, 1e-12);
        if (ga) CHECK(ga->tt_step_ms_lo == 1.0 && ga->tt_step_ms_hi == (all ? 1.2 : 1.1));
        if (ga) CHECK(ga->n_busy == (all ? 3 : 1) && ga->n_timed == 3 && ob_group_busy(ga) == all);
        if (ga) CHECK_NEAR(ga->step_ms_median, all ? 1.1 : 1.05, 1e-12);
        if (ga) CHECK_NEAR(ga->step_ms_p90, all ? 1.1 : 1.05, 1e-12);
        if (ga) CHECK_NEAR(ga->step_ms_spread, all ? 0.2 : 0.1, 1e-12);
        if (ga) CHECK_NEAR(ga->overhead_vs_sgd, (all ? 1.1 : 1.05) / 0.575 - 1, 1e-12);
        const ob_group *gs = grp(&d, &st, "W", "sgd");
        if (gs) CHECK(gs->n_busy == 1 && !ob_group_busy(gs));
        if (gs) CHECK_NEAR(gs->step_ms_median, 0.575, 1e-12);
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    ob_store_close(s);
}

static void test_width_edge(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, seed ? "done" : "diverged", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.1, seed, "done", 0.5, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 2.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.1, seed, "done", 0.5, 10, 1, 1, 1, 1, 1, 1, 0});
    }
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    const ob_group *ga = grp(&d, &st, "W", "adam"), *gs = grp(&d, &st, "W", "sgd");
    CHECK(ga && gs);
    if (ga && gs) {
        CHECK(ga->best_lr == 0.1 && ga->width_open_hi && !ga->width_open_lo);
        CHECK_MSG(isnan(ga->width_decades) && ga->width_unmeasured == OB_WIDTH_EDGE_DIVERGED, "adam: %g, %d",
                  ga->width_decades, ga->width_unmeasured);
        CHECK(!strcmp(ob_width_unmeasured_name(ga->width_unmeasured), "edge_next_diverged"));
        /* sgd: 2 at 0.01 crosses 0.55 ln(1.1) / ln(4) decades below 0.1 */
        CHECK(gs->best_lr == 0.1 && gs->width_open_hi && gs->width_unmeasured == OB_WIDTH_MEASURED);
        CHECK_NEAR(gs->width_decades, log(1.1) / log(4.0), 1e-12);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* A benchmark stopped early: one lr of adam's grid finished, its others
 * pending or interrupted; sgd's second lr failed. adam's range is "not
 * measured (lrs not finished)", not "one lr"; sgd's (no lr left to finish)
 * is one lr's. And a run that ended above its first loss is counted. */
static void test_width_unfinished(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 2; seed++) {
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.1, seed, seed ? "pending" : "interrupted", 1.0, 10, 1, 1, 1, 1, 1,
                               1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 2.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.1, seed, "failed", 2.0, 10, 1, 1, 1, 1, 1, 1, 0});
    }
    /* sgd's seed 1 blew up short of the divergence threshold: its final loss
     * 50 is above its first, 2 + 10 / 2 */
    CHECK(sqlite3_exec(ob_store_db(s), "UPDATE runs SET final_loss = 50 WHERE optimizer = 'sgd' AND seed = 1 AND "
                       "status = 'done'", NULL, NULL, NULL) == SQLITE_OK);
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    const ob_group *ga = grp(&d, &st, "W", "adam"), *gs = grp(&d, &st, "W", "sgd");
    CHECK(ga && gs);
    if (ga && gs) {
        CHECK(ga->n_lr == 1 && ga->n_lr_unfinished == 1 && ga->n_unfinished == 2 && ga->best_lr == 0.01);
        CHECK_MSG(ga->width_unmeasured == OB_WIDTH_UNFINISHED, "adam: %d", ga->width_unmeasured);
        CHECK(!strcmp(ob_width_unmeasured_name(ga->width_unmeasured), "lrs_unfinished"));
        CHECK(gs->n_lr == 1 && gs->n_lr_unfinished == 0 && gs->n_failed == 2);
        CHECK_MSG(gs->n_above_start == 1 && ga->n_above_start == 0, "above start: sgd %d, adam %d",
                  gs->n_above_start, ga->n_above_start);
        CHECK_MSG(gs->width_unmeasured == OB_WIDTH_ONE_LR, "sgd: %d", gs->width_unmeasured);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The best of k trials: by hand, with diverged (+inf) trials, and against
 * every draw of k of n enumerated (the smallest value v whose chance
 * P(min <= v) reaches q). */
static void test_best_of_k(void)
{
    const double x[4] = {1, 2, 3, 4};
    CHECK(ob_stat_best_of_k(x, 4, 1, 0.5) == 2 && ob_stat_best_of_k(x, 4, 2, 0.5) == 2);
    CHECK(ob_stat_best_of_k(x, 4, 2, 0.25) == 1 && ob_stat_best_of_k(x, 4, 4, 0.5) == 1);
    CHECK(ob_stat_best_of_k(x, 4, 1, 0.75) == 3 && ob_stat_best_of_k(x, 4, 1, 1.0) == 4);
    CHECK(ob_stat_best_of_k(x, 1, 3, 0.5) == 1 && isnan(ob_stat_best_of_k(x, 0, 1, 0.5)));
    const double dv[4] = {1, INFINITY, INFINITY, INFINITY};
    CHECK(isinf(ob_stat_best_of_k(dv, 4, 1, 0.5)) && ob_stat_best_of_k(dv, 4, 3, 0.5) == 1);
    CHECK(isinf(ob_stat_best_of_k(dv, 4, 3, 0.75)) && ob_stat_best_of_k(dv, 4, 5, 0.75) == 1);
    const double y[5] = {0.3, 0.5, 0.5, 0.9, 2.0};
    const double qs[3] = {0.25, 0.5, 0.75};
    int ok = 1;
    for (int k = 1; k <= 5; k++) {
        int total = 1;
        for (int j = 0; j < k; j++) total *= 5;
        int below[5] = {0}; /* draws whose smallest is <= y[i] */
        for (int t = 0; t < total; t++) {
            double m = INFINITY;
            for (int j = 0, u = t; j < k; j++, u /= 5) m = y[u % 5] < m ? y[u % 5] : m;
            for (int i = 0; i < 5; i++) below[i] += m <= y[i];
        }
        for (int a = 0; a < 3; a++) {
            double want = NAN;
            for (int i = 0; i < 5 && isnan(want); i++)
                if (below[i] >= qs[a] * total - 1e-9) want = y[i];
            ok &= ob_stat_best_of_k(y, 5, k, qs[a]) == want;
        }
    }
    CHECK(ok);
}

/* The profile of the tuned optimizers: each optimizer (name) on each
 * workload at its fastest configuration there. Finals 1 (target 1.1, met
 * at T + 3): on A adam beta2=0.9 13 steps x 1 ms, beta2=0.999 23 x 1, sgd
 * 8 x 2 ms; on B 33 x 1, 9 x 1, 13 x 2. Tuned: adam 0.013 s on A (0.9),
 * 0.009 s on B (0.999); sgd 0.016, 0.026. */
static void test_tuned_profile(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.9", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.999", 0.01, 0, "done", 1, 20, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"A", "sgd", NULL, 0.01, 0, "done", 1, 5, 2, 2, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"B", "adam", "\"beta2\":0.9", 0.01, 0, "done", 1, 30, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"B", "adam", "\"beta2\":0.999", 0.01, 0, "done", 1, 6, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"B", "sgd", NULL, 0.01, 0, "done", 1, 10, 2, 2, 1, 1, 1, 1, 0});
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    const ob_group *a9 = grp(&d, &st, "A", "adam beta2=0.9"), *b999 = grp(&d, &st, "B", "adam beta2=0.999");
    CHECK(a9 && b999 && a9->tt_steps == 13 && b999->tt_steps == 9);
    CHECK_MSG(st.n_tuned == 2, "%d tuned optimizers", st.n_tuned);
    if (st.n_tuned == 2 && a9 && b999) {
        int ia = !strcmp(d.opt_names[st.tuned_first[0]], "adam") ? 0 : 1, is = 1 - ia;
        CHECK(!strcmp(d.opt_names[st.tuned_first[ia]], "adam") && !strcmp(d.opt_names[st.tuned_first[is]], "sgd"));
        CHECK(st.tuned_configs[ia] == 2 && st.tuned_configs[is] == 1);
        int wa = ob_dataset_find_wl(&d, "A"), wb = ob_dataset_find_wl(&d, "B");
        CHECK(&st.g[st.tuned_pick[wa * 2 + ia]] == a9 && &st.g[st.tuned_pick[wb * 2 + ia]] == b999);
        CHECK(&st.g[st.tuned_pick[wa * 2 + is]] == grp(&d, &st, "A", "sgd"));
        /* adam fastest on both; sgd 16 / 13 and 26 / 9 of it */
        CHECK_NEAR(st.tuned_area[ia], 1.0, 1e-12);
        CHECK_NEAR(st.tuned_area[is], ((4 - 16.0 / 13) / 3 + (4 - 26.0 / 9) / 3) / 2, 1e-9);
        CHECK(ob_stats_tuned_rank(&st, ia) == 1 && ob_stats_tuned_rank(&st, is) == 2);
        /* one seed: every resample is the estimate */
        CHECK(st.n_boot == OB_PROFILE_BOOT && st.tuned_area_lo && st.tuned_area_first);
        if (st.n_boot && st.tuned_area_lo) {
            CHECK(st.tuned_area_lo[ia] == 1 && st.tuned_area_hi[ia] == 1 && st.tuned_area_first[ia] == 1);
            CHECK(st.tuned_area_lo[is] == st.tuned_area[is] && st.tuned_area_hi[is] == st.tuned_area[is]);
            CHECK(st.tuned_area_first[is] == 0);
        }
        CHECK(st.tuned_rho[ia] == 1.0 && st.tuned_rho[is] == 0.0 && st.tuned_ran[ia] == 2 && st.tuned_ran[is] == 2);
        /* the profile of the configurations is unchanged: beta2=0.9 won A only, sgd none */
        int o9 = ob_dataset_find_opt(&d, "adam beta2=0.9"), os = ob_dataset_find_opt(&d, "sgd");
        CHECK(st.rho[o9] == 0.5 && st.rho[os] == 0.0);
        CHECK_NEAR(st.area[o9], (1 + (4 - 33.0 / 9) / 3) / 2, 1e-9);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    /* by steps: sgd 8 of adam's 13 on A wins there */
    ob_stats_opts o;
    ob_stats_opts_default(&o);
    o.profile_by_steps = 1;
    load_stats(ob_store_db(s), &o, &d, &st);
    if (st.n_tuned == 2) {
        int is = !strcmp(d.opt_names[st.tuned_first[0]], "sgd") ? 0 : 1;
        CHECK(st.tuned_rho[is] == 0.5 && st.tuned_rho[1 - is] == 0.5);
        CHECK_NEAR(st.tuned_area[1 - is], (1 + (4 - 13.0 / 8) / 3) / 2, 1e-9);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
    /* one configuration each: no tuned profile (the profile is that) */
    s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"A", "adam", NULL, 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"A", "sgd", NULL, 0.01, 0, "done", 1, 5, 2, 2, 1, 1, 1, 1, 0});
    load_stats(ob_store_db(s), NULL, &d, &st);
    CHECK(st.n_tuned == 0 && !st.tuned_area && st.profile_workloads == 1);
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The trials on held-out data (ob_stats_trial_heldout): each configuration
 * at its best lr for the held-out loss (the lowest median) or metric (the
 * highest, negated), a diverged seed the worst value; 0 where a
 * configuration has no held-out value. */
static void test_trial_heldout(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    /* A: adam x 3 configurations x 2 lrs; B: one configuration not evaluated */
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.9", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 3, 0.5, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.9", 0.1, 0, "done", 1, 10, 1, 1, 1, 1, 2, 0.4, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.99", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 5, 0.7, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.99", 0.1, 0, "diverged", 1, 10, 1, 1, 1, 1, NAN, NAN, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.999", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 1, 0.2, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.999", 0.1, 0, "done", 1, 10, 1, 1, 1, 1, 4, 0.1, 0});
    fx_add(s, 0, &(fx_run){"B", "adam", "\"beta2\":0.9", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 3, 0.5, 0});
    fx_add(s, 0, &(fx_run){"B", "adam", "\"beta2\":0.99", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, NAN, NAN, 0});
    /* C: a configuration whose every run diverged before an evaluation is the
     * worst held-out value, as its final loss is in the training budget */
    fx_add(s, 0, &(fx_run){"C", "adam", "\"beta2\":0.9", 0.01, 0, "done", 1, 10, 1, 1, 1, 1, 3, 0.5, 0});
    fx_add(s, 0, &(fx_run){"C", "adam", "\"beta2\":0.99", 0.01, 0, "diverged", 1, 10, 1, 1, 1, 1, NAN, NAN, 0});
    fx_add(s, 0, &(fx_run){"C", "adam", "\"beta2\":0.99", 0.1, 0, "diverged", 1, 10, 1, 1, 1, 1, NAN, NAN, 0});
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    CHECK_MSG(st.n_tuned == 1, "%d tuned optimizers", st.n_tuned);
    if (st.n_tuned == 1) {
        double v[8];
        const int wa = ob_dataset_find_wl(&d, "A"), wb = ob_dataset_find_wl(&d, "B");
        int n = ob_stats_trial_heldout(&d, &st, wa, 0, 0, v);
        CHECK_MSG(n == 3 && v[0] == 1 && v[1] == 2 && v[2] == 5, "held-out loss: %d: %g %g %g", n, v[0], v[1], v[2]);
        n = ob_stats_trial_heldout(&d, &st, wa, 0, 1, v);
        CHECK_MSG(n == 3 && v[0] == -0.7 && v[1] == -0.5 && v[2] == -0.2, "held-out metric: %d: %g %g %g", n, v[0],
                  v[1], v[2]);
        CHECK(ob_stats_trial_heldout(&d, &st, wb, 0, 0, v) == 0 && ob_stats_trial_heldout(&d, &st, wb, 0, 1, v) == 0);
        /* the training-loss trials are there all the same */
        CHECK(ob_stats_trial_losses(&d, &st, wb, 0, v) == 2);
        const int wc = ob_dataset_find_wl(&d, "C");
        n = ob_stats_trial_heldout(&d, &st, wc, 0, 0, v);
        CHECK_MSG(n == 2 && v[0] == 3 && isinf(v[1]), "every run diverged: %d: %g %g", n, v[0], v[1]);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* Labels in order, their numbers by value: a sweep's configurations follow
 * the swept values in tables, legends and shades (as text, 1e-05 sorted
 * after 0.001 and 10 before 9); digits in a name stay text. */
static void test_label_order(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    static const char *const wd[] = {"10", "0.001", "1e-05", "9", "0", "-0.5"};
    for (int i = 0; i < 6; i++) {
        char x[64];
        snprintf(x, sizeof x, "\"weight_decay\":%s", wd[i]);
        fx_add(s, 0, &(fx_run){"A", "adamw", x, 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    }
    ob_dataset d;
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    static const char *const want[] = {"-0.5", "0", "1e-05", "0.001", "9", "10"};
    CHECK(d.n_opt == 6);
    for (int i = 0; i < d.n_opt && i < 6; i++) {
        char l[64];
        snprintf(l, sizeof l, "adamw weight_decay=%s", want[i]);
        CHECK_MSG(!strcmp(d.opt_labels[i], l), "label %d: '%s', not '%s'", i, d.opt_labels[i], l);
    }
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* Labels: configurations of one optimizer that differ on a workload are told
 * apart by the differing key; settings that follow the workload are not shown. */
static void test_labels(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.95,\"bs\":8", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"A", "adam", "\"beta2\":0.999,\"bs\":8", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"B", "adam", "\"beta2\":0.999,\"bs\":16", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"B", "sgd", "\"bs\":16", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"B", "sgd", "\"bs\":16", 0.1, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    ob_dataset d;
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    CHECK(d.n_opt == 3);
    if (d.n_opt == 3) {
        CHECK_MSG(!strcmp(d.opt_labels[0], "adam beta2=0.95"), "%s", d.opt_labels[0]);
        CHECK_MSG(!strcmp(d.opt_labels[1], "adam beta2=0.999"), "%s", d.opt_labels[1]);
        CHECK(!strcmp(d.opt_labels[2], "sgd"));
    }
    /* the run on B with beta2 0.999 has the same label as on A */
    int n_999 = 0;
    for (int i = 0; i < d.n; i++)
        if (d.runs[i].opt == 1) n_999++;
    CHECK(n_999 == 2);
    ob_dataset_free(&d);
    ob_store_close(s);

    /* keys with an underscore (SQLite quotes them in a JSON path), nested in
     * "train", and a key two configurations lack (the spike guard's, written
     * only when on): read as its default, it tells them apart too */
    s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"A", "lion", "\"weight_decay\":0,\"train\":{\"clip_norm\":1}", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"A", "lion", "\"weight_decay\":0,\"train\":{\"clip_norm\":0,\"spike_z_loss\":3}", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"A", "lion", "\"weight_decay\":0.1,\"train\":{\"clip_norm\":0}", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    CHECK(d.n_opt == 3);
    const char *want[] = {"lion weight_decay=0 clip_norm=0 spike_z_loss=3", "lion weight_decay=0 clip_norm=1 spike_z_loss=0",
                          "lion weight_decay=0.1 clip_norm=0 spike_z_loss=0"};
    for (int i = 0; i < d.n_opt && i < 3; i++) {
        int found = 0;
        for (int k = 0; k < 3; k++) found |= !strcmp(d.opt_labels[i], want[k]);
        CHECK_MSG(found, "label '%s'", d.opt_labels[i]);
    }
    ob_dataset_free(&d);
    ob_store_close(s);

    /* runs stored before a key existed (no filter_bias_and_bn) are the
     * configuration of those stored with it at its default, and not of those
     * with another value */
    s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"quadratic", "sgd", "\"momentum\":0.9", 0.01, 0, "done", 1, 5, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"quadratic", "sgd", "\"momentum\":0.9,\"filter_bias_and_bn\":false", 0.01, 1, "done", 1, 5, 1,
                           1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"quadratic", "sgd", "\"momentum\":0.9,\"filter_bias_and_bn\":true", 0.01, 2, "done", 1, 5, 1,
                           1, 1, 1, 1, 1, 0});
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    CHECK(d.n_opt == 2 && d.n_wl == 1);
    for (int i = 0; i < d.n; i++)
        CHECK_MSG(d.runs[i].opt == (d.runs[i].seed == 2), "run of seed %lld: label %s", (long long)d.runs[i].seed,
                  d.opt_labels[d.runs[i].opt]);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* Runs of one workload for two numbers of steps are two workload
 * configurations, neither superseding the other; the default target asks for
 * at least half the way from the loss before training to the best final
 * loss, and a target the starting loss already meets ranks nothing. */
static void test_steps_and_start(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    /* W: the same cell for 50 and 80 steps */
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 50});
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 0.5, 10, 1, 1, 1, 1, 1, 1, 80});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "done", 1.5, 10, 1, 1, 1, 1, 1, 1, 50});
    /* F: flat curves, the loss before training is the best final loss */
    fx_add(s, 0, &(fx_run){"F", "adam", NULL, 0.01, 0, "done", 2.0, 0, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"F", "sgd", NULL, 0.01, 0, "done", 2.0, 0, 1, 1, 1, 1, 1, 1, 0});
    /* H: from 11 to 10 (adam) and 10.5 (sgd): 1.1 x 10 = 11 would be met at once */
    fx_add(s, 0, &(fx_run){"H", "adam", NULL, 0.01, 0, "done", 10.0, 2, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"H", "sgd", NULL, 0.01, 0, "done", 10.5, 1, 1, 1, 1, 1, 1, 1, 0});
    ob_dataset d;
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    CHECK_MSG(d.n == 7 && d.n_superseded == 0, "%d runs, %d superseded", d.n, d.n_superseded);
    int w50 = ob_dataset_find_wl(&d, "W steps=50"), w80 = ob_dataset_find_wl(&d, "W steps=80");
    int wf = ob_dataset_find_wl(&d, "F"), wh = ob_dataset_find_wl(&d, "H");
    CHECK_MSG(d.n_wl == 4 && w50 >= 0 && w80 >= 0 && wf >= 0 && wh >= 0, "%d workload labels, first '%s'", d.n_wl,
              d.n_wl ? d.wl_labels[0] : "");
    CHECK_OK(ob_dataset_load_curves(ob_store_db(s), &d, &e), &e);
    ob_stats_opts o;
    ob_stats_opts_default(&o);
    ob_stats st;
    CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
    if (w50 >= 0 && w80 >= 0 && wf >= 0 && wh >= 0 && st.n_wl == d.n_wl) {
        /* W steps=80 holds adam alone; steps=50 adam (1.0) and sgd (1.5) */
        const ob_group *a50 = grp(&d, &st, "W steps=50", "adam"), *a80 = grp(&d, &st, "W steps=80", "adam");
        CHECK(a50 && a80 && a50->final.median == 1.0 && a80->final.median == 0.5);
        CHECK(fabs(st.target[w50] - 1.1) < 1e-12 && !st.target_halfway[w50] && !st.target_at_start[w50]);
        CHECK(st.start_loss[w50] == 6.25 && st.start_loss[w80] == 5.5); /* medians of 6, 6.5 and of 5.5 */
        /* F: the target (2.2) is above where every run started (2.0) */
        CHECK(st.target_at_start[wf] && st.start_loss[wf] == 2.0);
        const ob_group *fa = grp(&d, &st, "F", "adam");
        CHECK(fa && fa->tt_censored && isnan(fa->tt_steps) && isnan(fa->tt_lr));
        /* H: halfway from 11 to 10 */
        CHECK_MSG(st.target_halfway[wh] && fabs(st.target[wh] - 10.5) < 1e-12 && !st.target_at_start[wh],
                  "H: target %g, halfway %d, at start %d", st.target[wh], st.target_halfway[wh],
                  st.target_at_start[wh]);
        /* adam's trailing loss: 11, 10.75, 10.5 (the mean of the points so far) */
        const ob_group *ha = grp(&d, &st, "H", "adam");
        CHECK_MSG(ha && !ha->tt_censored && ha->tt_steps == 2, "H adam: %g steps", ha ? ha->tt_steps : -1);
        /* only W steps=50, W steps=80 and H enter the profile */
        CHECK_MSG(st.profile_workloads == 3, "%d workloads in the profile", st.profile_workloads);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The lr range's tolerance as a fraction of the progress from the loss
 * before training: P trains from 7 (at lr 0.01) and 9 (the others) to 2 and 3: the
 * threshold is 2 + 0.1 x (start - 2) where the default's is 2.2; F's loss
 * never moves (flat curves at 2.0 on every lr): the default tolerance calls
 * its whole grid the range, 10% of no progress is not measured. */
static void test_width_progress(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"P", "adam", NULL, 0.001, seed, "done", 3.0, 12, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"P", "adam", NULL, 0.01, seed, "done", 2.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"P", "adam", NULL, 0.1, seed, "done", 3.0, 12, 1, 1, 1, 1, 1, 1, 0});
        for (int k = 0; k < 3; k++)
            fx_add(s, 0, &(fx_run){"F", "adam", NULL, k == 0 ? 0.001 : k == 1 ? 0.01 : 0.1, seed, "done", 2.0, 0, 1, 1,
                                   1, 1, 1, 1, 0});
    }
    ob_dataset d;
    load_with_curves(ob_store_db(s), &d);
    ob_stats_opts o;
    ob_stats_opts_default(&o);
    ob_stats st;
    CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
    const ob_group *pa = grp(&d, &st, "P", "adam"), *fa = grp(&d, &st, "F", "adam");
    CHECK(pa && fa);
    if (!pa || !fa) goto out;
    /* the default: 2.2, crossed where log(median) from 2 to 3 gets there, each side */
    CHECK_NEAR(pa->width_decades, 2 * log(1.1) / log(1.5), 1e-12);
    CHECK(fa->width_open_lo && fa->width_open_hi && fa->width_decades == 2 && !fa->width_unmeasured);
    ob_stats_free(&st);
    o.tol_of_progress = 1;
    CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
    pa = grp(&d, &st, "P", "adam");
    fa = grp(&d, &st, "F", "adam");
    const double start = st.start_loss[ob_dataset_find_wl(&d, "P")];
    CHECK_MSG(start == 9, "P starts at %g", start); /* the median of 9 (6 runs) and 7 (3 runs) */
    CHECK_NEAR(pa->width_decades, 2 * log(2.7 / 2) / log(1.5), 1e-12); /* 2 + 0.1 x 7 */
    CHECK(fa->width_unmeasured == OB_WIDTH_NO_PROGRESS && isnan(fa->width_decades));
    CHECK(!strcmp(ob_width_unmeasured_name(fa->width_unmeasured), "no_progress"));
out:
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

static void test_sign_paired(const char *path)
{
    CHECK(ob_stat_sign_test(0, 0) == 1.0);
    CHECK_NEAR(ob_stat_sign_test(3, 3), 0.25, 1e-15);
    CHECK_NEAR(ob_stat_sign_test(0, 3), 0.25, 1e-15);
    CHECK_NEAR(ob_stat_sign_test(5, 6), 14.0 / 64, 1e-15);
    CHECK_NEAR(ob_stat_sign_test(6, 6), 2.0 / 64, 1e-15);
    CHECK(ob_stat_sign_test(10, 20) == 1.0);
    CHECK_NEAR(ob_stat_sign_test(15, 20), 2 * (1 + 20 + 190 + 1140 + 4845 + 15504) / 1048576.0, 1e-15);
    /* the reference database: quad adam vs sgd at their best lr 0.01, seeds 0..2:
     * adam {1.0, 1.2, 0.8}, sgd {2.0, 2.2, 2.4} (its failed and pending seeds
     * do not pair) */
    ob_err e = {0};
    CHECK(fx_build_reference(path) == 0);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    ob_dataset d;
    ob_stats s;
    ob_stats_opts o;
    ob_stats_opts_default(&o);
    CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
    CHECK_OK(ob_stats_compute(&d, &o, &s, &e), &e);
    sqlite3_close(db);
    const ob_group *qa = grp(&d, &s, "quad", "adam"), *qs = grp(&d, &s, "quad", "sgd");
    if (qa && qs) {
        ob_paired pr;
        CHECK_OK(ob_stat_paired(&d, qa->best_runs, qa->n_best_runs, qs->best_runs, qs->n_best_runs, &pr, &e), &e);
        CHECK(pr.n == 3 && pr.a_lower == 3 && pr.b_lower == 0 && pr.ties == 0);
        CHECK_NEAR(pr.median_rel, -0.5, 1e-12);
        CHECK_NEAR(pr.p_sign, 0.25, 1e-15);
        /* the other way round */
        CHECK_OK(ob_stat_paired(&d, qs->best_runs, qs->n_best_runs, qa->best_runs, qa->n_best_runs, &pr, &e), &e);
        CHECK(pr.n == 3 && pr.a_lower == 0 && pr.b_lower == 3);
        CHECK_NEAR(pr.median_rel, 1.0, 1e-12);
    }
    /* diverged seeds count, as +inf losses: at lr 0.1 adam {1.05, 1.08, diverged},
     * sgd diverged on all three; adam at lr 0.01 {1.0, 1.2, 0.8} */
    int a1[8], s1[8], a01[8], na1 = 0, ns1 = 0, na01 = 0;
    for (int r = 0; r < d.n; r++) {
        const ob_rrun *x = &d.runs[r];
        if (strcmp(x->workload, "quad") || x->seed > 2 || !x->finished) continue;
        if (x->lr == 0.1 && !strcmp(x->optimizer, "adam") && na1 < 8) a1[na1++] = r;
        if (x->lr == 0.1 && !strcmp(x->optimizer, "sgd") && ns1 < 8) s1[ns1++] = r;
        if (x->lr == 0.01 && !strcmp(x->optimizer, "adam") && na01 < 8) a01[na01++] = r;
    }
    CHECK_MSG(na1 == 3 && ns1 == 3 && na01 == 3, "%d %d %d runs", na1, ns1, na01);
    ob_paired pd;
    CHECK_OK(ob_stat_paired(&d, a1, na1, s1, ns1, &pd, &e), &e); /* {-1, -1, 0} */
    CHECK(pd.n == 3 && pd.a_lower == 2 && pd.ties == 1 && pd.median_rel == -1.0);
    CHECK_NEAR(pd.p_sign, 0.5, 1e-15); /* the sign test over the 2 untied seeds, not all 3 */
    CHECK_OK(ob_stat_paired(&d, s1, ns1, a1, na1, &pd, &e), &e); /* {+inf, +inf, 0} */
    CHECK(pd.n == 3 && pd.b_lower == 2 && isinf(pd.median_rel) && pd.median_rel > 0);
    CHECK_OK(ob_stat_paired(&d, a1, na1, a01, na01, &pd, &e), &e); /* {0.05, -0.1, +inf} */
    CHECK_NEAR(pd.median_rel, 0.05, 1e-12);
    int rank[8], order[8];
    ob_stats_rank(&s, rank);
    int w = ob_dataset_find_wl(&d, "quad");
    CHECK(ob_stats_ranked(&s, rank, w, order, 8) == 2 && order[0] == qa - s.g && order[1] == qs - s.g);
    /* a label the dataset does not have: -1, not the first one's index */
    CHECK(ob_dataset_find_wl(&d, "no such workload") == -1 && ob_dataset_find_opt(&d, "no such optimizer") == -1);
    ob_stats_free(&s);
    ob_dataset_free(&d);
}

static void test_best_lr(void)
{
    /* lr 0.1: median of {1, inf} is inf; lr 0.01: 2; lr 0.001: 3 (NaN left out) */
    double lr[] = {0.1, 0.01, 0.001, 0.1, 0.01, 0.001};
    double fin[] = {1, 2, 3, INFINITY, 2, NAN};
    CHECK(ob_stat_best_lr(lr, fin, 6) == 0.01);
    /* ties go to the smaller lr, whatever the order */
    double lr2[] = {0.1, 0.01, 0.03};
    double fin2[] = {2, 2, 2};
    CHECK(ob_stat_best_lr(lr2, fin2, 3) == 0.01);
    double fin3[] = {INFINITY, NAN, INFINITY};
    CHECK(isnan(ob_stat_best_lr(lr2, fin3, 3)));
    CHECK(isnan(ob_stat_best_lr(lr2, fin3, 0)));
}

/* The sign test past about 1075 seeds, where 2^-n underflows and C(n, k)
 * overflows: against the sum of its terms, each from lgamma. */
static void test_sign_large(void)
{
    for (int n = 1001; n <= 4001; n += 1000) {
        double prev = 0;
        for (int k = 0; k <= n / 2; k += n / 50) {
            double want = 0;
            for (int i = 0; i <= k; i++)
                want += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
            want = want * 2 > 1 ? 1 : want * 2;
            double p = ob_stat_sign_test(k, n);
            CHECK_MSG(p >= 0 && p <= 1 && fabs(p - want) <= 1e-9 * want + 1e-300 && p >= prev,
                      "sign test %d of %d: %g, want %g", k, n, p, want);
            CHECK(ob_stat_sign_test(n - k, n) == p);
            prev = p;
        }
        /* half the seeds each way: no evidence at all */
        CHECK_NEAR(ob_stat_sign_test(n / 2, n), 1.0, 1e-9);
    }
    /* the normal approximation with continuity correction: z = (500.5 - 550) / sqrt(275) = -2.985 */
    CHECK_NEAR(ob_stat_sign_test(500, 1100), 2 * 0.001418, 5e-5);
}

/* Seeds that count against an optimizer, never silently for it: a diverged
 * seed's held-out loss and metric are the worst (so their medians are over the
 * seeds the final loss's is over), a finished run without a finite final loss
 * counts +inf (not left out, which would make its lr look better), and a
 * single seed has no interval (not one of width 0). */
static void test_counted_against(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    /* acc (with a metric): seeds {1.0, 1.1, diverged}, held-out loss {1, 2, -}, metric {0.9, 0.8, -} */
    fx_add(s, 0, &(fx_run){"acc", "adam", NULL, 0.01, 0, "done", 1.0, 5, 1, 1, 1, 1, 1.0, 0.9, 0});
    fx_add(s, 0, &(fx_run){"acc", "adam", NULL, 0.01, 1, "done", 1.1, 5, 1, 1, 1, 1, 2.0, 0.8, 0});
    fx_add(s, 0, &(fx_run){"acc", "adam", NULL, 0.01, 2, "diverged", 0, 5, 1, 1, 1, 1, 0, 0, 0});
    /* quad2 (no metric): the same held-out losses */
    fx_add(s, 0, &(fx_run){"quad2", "adam", NULL, 0.01, 0, "done", 1.0, 5, 1, 1, 1, 1, 1.0, NAN, 0});
    fx_add(s, 0, &(fx_run){"quad2", "adam", NULL, 0.01, 1, "done", 1.1, 5, 1, 1, 1, 1, 2.0, NAN, 0});
    fx_add(s, 0, &(fx_run){"quad2", "adam", NULL, 0.01, 2, "diverged", 0, 5, 1, 1, 1, 1, 0, 0, 0});
    /* nanf: at lr 0.01 two seeds 1.0 and 1.1 and one that finished with no finite
     * loss at all (median 1.1, not 1.05); at lr 0.1 three seeds of 1.08: the best */
    fx_add(s, 0, &(fx_run){"nanf", "sgd", NULL, 0.01, 0, "done", 1.0, 5, 1, 1, 1, 1, 1.0, NAN, 0});
    fx_add(s, 0, &(fx_run){"nanf", "sgd", NULL, 0.01, 1, "done", 1.1, 5, 1, 1, 1, 1, 1.1, NAN, 0});
    fx_add(s, 0, &(fx_run){"nanf", "sgd", NULL, 0.01, 2, "done", NAN, 5, 1, 1, 1, 1, 1.2, NAN, 0});
    for (int seed = 0; seed < 3; seed++)
        fx_add(s, 0, &(fx_run){"nanf", "sgd", NULL, 0.1, seed, "done", 1.08, 5, 1, 1, 1, 1, 1.08, NAN, 0});
    /* one: a single seed */
    fx_add(s, 0, &(fx_run){"one", "sgd", NULL, 0.01, 0, "done", 1.0, 5, 1, 1, 1, 1, 1.0, 0.5, 0});
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    const ob_group *ga = grp(&d, &st, "acc", "adam"), *gq = grp(&d, &st, "quad2", "adam");
    const ob_group *gn = grp(&d, &st, "nanf", "sgd"), *g1 = grp(&d, &st, "one", "sgd");
    CHECK(ga && gq && gn && g1);
    if (ga && gq && gn && g1) {
        CHECK(ga->best_lr == 0.01 && ga->final.n == 3 && ga->final.median == 1.1);
        CHECK_MSG(ga->eval_loss.n == 3 && ga->eval_loss.median == 2.0 && isinf(ga->eval_loss.max),
                  "held-out loss over %d seeds: median %g", ga->eval_loss.n, ga->eval_loss.median);
        CHECK_MSG(ga->eval_metric.n == 3 && ga->eval_metric.median == 0.8 && ga->eval_metric.min < 0 &&
                      isinf(ga->eval_metric.min) && ga->eval_metric.max == 0.9,
                  "metric over %d seeds: median %g", ga->eval_metric.n, ga->eval_metric.median);
        CHECK(ga->lrs[0].eval_med == 2.0 && ga->lrs[0].metric_med == 0.8);
        /* no metric on the workload: none made up for the diverged seed */
        CHECK(gq->eval_loss.n == 3 && gq->eval_loss.median == 2.0);
        CHECK(gq->eval_metric.n == 0 && isnan(gq->eval_metric.median) && isnan(gq->lrs[0].metric_med));
        CHECK_MSG(gn->best_lr == 0.1 && gn->n_lr == 2 && gn->lrs[0].med == 1.1 && isinf(gn->lrs[0].max),
                  "best lr %g, median at 0.01 %g", gn->best_lr, gn->n_lr ? gn->lrs[0].med : NAN);
        CHECK(g1->final.n == 1 && g1->final.median == 1.0 && g1->final.min == 1.0);
        CHECK_MSG(isnan(g1->final.ci_lo) && isnan(g1->final.ci_hi), "one seed: interval [%g, %g]",
                  g1->final.ci_lo, g1->final.ci_hi);
        CHECK(isnan(g1->eval_loss.ci_lo) && isnan(g1->eval_metric.ci_hi));
        /* two seeds have one: [min, max] */
        CHECK(ga->final.ci_lo == 1.0 && isinf(ga->final.ci_hi));
    }
    ob_stats_free(&st);
    /* the paired comparison counts the seed without a finite final loss against it */
    int ia[3], ib[3], na = 0, nb = 0;
    for (int i = 0; i < d.n; i++) {
        const ob_rrun *r = &d.runs[i];
        if (strcmp(r->workload, "nanf")) continue;
        if (r->lr == 0.01) ia[na++] = i;
        else ib[nb++] = i;
    }
    ob_paired pr;
    CHECK(na == 3 && nb == 3);
    CHECK_OK(ob_stat_paired(&d, ia, na, ib, nb, &pr, &e), &e);
    CHECK_MSG(pr.n == 3 && pr.a_lower == 1 && pr.b_lower == 2, "paired: %d seeds, a lower %d, b lower %d", pr.n,
              pr.a_lower, pr.b_lower);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* Confirmation runs (fx_add_confirm) have spreads of their own and change no
 * statistic of the sweep. */
static void test_confirm(const char *path)
{
    CHECK(fx_build_reference(path) == 0);
    ob_dataset d0, d;
    ob_stats s0, s;
    load_stats_at(path, NULL, &d0, &s0);
    CHECK(fx_add_confirm(path) == 0);
    load_stats_at(path, NULL, &d, &s);
    /* 7 more runs; the one with a sweep run's lr and seed supersedes nothing */
    CHECK(d.n == d0.n + 7 && d.n_superseded == d0.n_superseded);
    CHECK(d.n_wl == d0.n_wl && d.n_opt == d0.n_opt && s.n_g == s0.n_g);
    for (int k = 0; k < s.n_g && k < s0.n_g; k++) {
        const ob_group *a = &s0.g[k], *b = &s.g[k];
        CHECK_MSG(a->n_runs == b->n_runs && a->n_lr == b->n_lr && a->best_lr == b->best_lr &&
                      a->final.n == b->final.n && a->final.median == b->final.median &&
                      a->eval_loss.median == b->eval_loss.median && a->n_best_runs == b->n_best_runs &&
                      a->seed_cv == b->seed_cv && a->n_diverged == b->n_diverged &&
                      a->tt_steps == b->tt_steps && a->step_ms_median == b->step_ms_median,
                  "group %d: a sweep statistic changed with confirmation runs", k);
        CHECK(isnan(a->confirm_lr));
    }
    for (int w = 0; w < d.n_wl; w++) CHECK(s.target[w] == s0.target[w]);
    /* the loss before training is the sweep's: fresh seeds start elsewhere */
    for (int w = 0; w < d.n_wl; w++)
        CHECK_MSG(s.start_loss[w] == s0.start_loss[w], "%s starts at %g, %g without the confirmation runs",
                  d.wl_labels[w], s.start_loss[w], s0.start_loss[w]);
    const ob_group *qa = grp(&d, &s, "quad", "adam"), *qs = grp(&d, &s, "quad", "sgd");
    const ob_group *ra = grp(&d, &s, "rosen", "adam"), *rs = grp(&d, &s, "rosen", "sgd");
    CHECK(qa && qs && ra && rs);
    if (!qa || !qs || !ra || !rs) goto out;
    CHECK(qa->confirm_lr == 0.01 && qa->n_confirm == 3);
    CHECK_NEAR(qa->conf_final.median, 1.3, 1e-12);
    CHECK(qa->conf_final.min == 1.1 && qa->conf_final.max == 1.5);
    CHECK_NEAR(qa->conf_eval_loss.median, 1.8, 1e-12);
    CHECK_NEAR(qa->conf_eval_metric.median, 0.87, 1e-12);
    CHECK(qa->conf_n_diverged == 0 && qa->conf_max_finite == 1.5 && qa->conf_seed_overlap == 0);
    /* {2.0, diverged}: median inf, the diverged seed's eval left out; seed 0
     * is a seed of the sweep: not fresh, left out */
    CHECK(qs->confirm_lr == 0.01 && qs->n_confirm == 2 && qs->conf_seed_overlap == 1);
    CHECK(isinf(qs->conf_final.median) && qs->conf_final.min == 2.0 && isinf(qs->conf_final.max));
    CHECK(qs->conf_n_diverged == 1 && qs->conf_max_finite == 2.0);
    /* the diverged seed's held-out loss counts as +inf, as its final loss does */
    CHECK(qs->conf_eval_loss.n == 2 && isinf(qs->conf_eval_loss.median) && qs->conf_eval_loss.min == 2.5);
    /* at another lr than the sweep's best */
    CHECK(ra->best_lr == 0.01 && ra->confirm_lr == 0.03 && ra->n_confirm == 1);
    CHECK(isnan(rs->confirm_lr) && rs->n_confirm == 0);
    /* ranked: at the best lr with a finite median, so quad adam alone */
    int rank[8];
    ob_stats_confirm_rank(&s, rank);
    CHECK(rank[qa - s.g] == 1 && rank[qs - s.g] == 0 && rank[ra - s.g] == 0 && rank[rs - s.g] == 0);
    CHECK(ob_stats_has_confirm(&s) && !ob_stats_has_confirm(&s0));
    /* compare leaves them out */
    CHECK(ob_dataset_drop_confirm(&d, NULL) == 7 && d.n == d0.n);
    for (int i = 0; i < d.n; i++) CHECK(!d.runs[i].confirm);
out:
    ob_stats_free(&s0);
    ob_stats_free(&s);
    ob_dataset_free(&d0);
    ob_dataset_free(&d);
}

/* Rows of a cell run more than once: an older finished row gives way to a
 * later finished one (superseded); a later row that failed or did not finish
 * gives way to an earlier finished one, and is counted apart (masked), since
 * the failure it carries is not judged. */
static void test_superseded_and_masked(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 3.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 2.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "done", 1.5, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "failed", 0, 0, NAN, NAN, -1, -1, NAN, NAN, 0});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "pending", 0, 0, NAN, NAN, -1, -1, NAN, NAN, 0});
    ob_dataset d;
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    CHECK_MSG(d.n == 2 && d.n_superseded == 1 && d.n_masked == 2, "%d runs, %d superseded, %d masked", d.n,
              d.n_superseded, d.n_masked);
    for (int r = 0; r < d.n; r++) {
        CHECK(!strcmp(d.runs[r].status, "done"));
        if (!strcmp(d.runs[r].optimizer, "adam")) CHECK(d.runs[r].final_loss == 2.0);
    }
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* Time to target from one step-time statistic per workload: a database merged
 * from shards of an older optbench (no mean step time, schema < 4) and a newer
 * one. On W, adam's runs (new: median 1 ms, mean 3 ms) and sgd's (old: median
 * 2 ms, no mean) both reach the target at step 20: timed by the median, both,
 * adam takes 0.020 s and sgd 0.040 s (adam's mean against sgd's median would
 * rank sgd first, 0.060 s against 0.040 s). V has every mean: it stays on the
 * mean (adam 0.060 s, sgd 0.040 s). A run that did not finish does not count. */
static void test_tt_mixed_means(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    static const char *const wls[] = {"W", "V"};
    for (int w = 0; w < 2; w++)
        for (int seed = 0; seed < 2; seed++) {
            fx_add(s, 0, &(fx_run){wls[w], "adam", NULL, 0.01, seed, "done", 1.0, 20, 1, 1, 1, 1, 1, 1, 0});
            fx_add(s, 0, &(fx_run){wls[w], "sgd", NULL, 0.01, seed, "done", 1.0, 20, 2, 2, 1, 1, 1, 1, 0});
        }
    /* a failed run of V without a mean: not timed, not counted */
    fx_add(s, 0, &(fx_run){"V", "sgd", NULL, 0.01, 2, "failed", 0, 0, 2, 2, 1, 1, 1, 1, 0});
    /* U: no means either, but its target is met at the start: no time to target there */
    fx_add(s, 0, &(fx_run){"U", "sgd", NULL, 0.01, 0, "done", 1.0, 20, 2, 2, 1, 1, 1, 1, 0});
    CHECK(sqlite3_exec(ob_store_db(s),
                       "UPDATE runs SET step_ms_mean = 3 WHERE optimizer = 'adam';"
                       "UPDATE runs SET step_ms_mean = NULL WHERE optimizer = 'sgd' AND (workload IN ('W', 'U') OR "
                       "status = 'failed');",
                       NULL, NULL, NULL) == SQLITE_OK);
    ob_dataset d;
    load_with_curves(ob_store_db(s), &d);
    const char *tw[] = {"W", "V", "U"};
    double tv[] = {2.45, 2.45, 100}; /* reached at step T (see test_reference); U at the start */
    ob_stats_opts o;
    opts_targets(&o, 3, tw, tv);
    ob_stats st;
    CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
    int ww = ob_dataset_find_wl(&d, "W"), wv = ob_dataset_find_wl(&d, "V"), wu = ob_dataset_find_wl(&d, "U");
    CHECK(ww >= 0 && wv >= 0 && wu >= 0);
    if (ww >= 0 && wv >= 0) CHECK(st.tt_by_median[ww] == 1 && st.tt_by_median[wv] == 0);
    if (wu >= 0) CHECK(st.tt_by_median[wu] == 1 && st.target_at_start[wu]);
    /* the workloads timed by the median: W, not U (its target was met at the start) */
    for (int in_profile = 0; in_profile < 2; in_profile++) {
        char names[64];
        int nm = ob_stats_median_timed(&d, &st, in_profile, names, sizeof names);
        CHECK_MSG(nm == 1 && !strcmp(names, "W"), "median-timed (in the profile %d): %d, '%s'", in_profile, nm, names);
    }
    const ob_group *wa = grp(&d, &st, "W", "adam"), *ws = grp(&d, &st, "W", "sgd");
    const ob_group *va = grp(&d, &st, "V", "adam"), *vs = grp(&d, &st, "V", "sgd");
    CHECK(wa && ws && va && vs);
    if (wa && ws && va && vs) {
        CHECK(wa->tt_steps == 20 && ws->tt_steps == 20 && va->tt_steps == 20 && vs->tt_steps == 20);
        CHECK_MSG(fabs(wa->tt_time_s - 0.020) < 1e-12 && fabs(ws->tt_time_s - 0.040) < 1e-12,
                  "W (median for all): adam %g s, sgd %g s", wa->tt_time_s, ws->tt_time_s);
        CHECK_MSG(fabs(va->tt_time_s - 0.060) < 1e-12 && fabs(vs->tt_time_s - 0.040) < 1e-12,
                  "V (mean for all): adam %g s, sgd %g s", va->tt_time_s, vs->tt_time_s);
        /* the lr points too */
        CHECK(fabs(wa->lrs[0].tt_time_s - 0.020) < 1e-12 && fabs(va->lrs[0].tt_time_s - 0.060) < 1e-12);
        /* the cost table keeps each group's own mean */
        CHECK(wa->step_ms_mean == 3 && isnan(ws->step_ms_mean));
    }
    /* the profile by time: on W adam 1, sgd 2; on V adam 1.5, sgd 1 (area of
     * tau_max 4: the mean over workloads of (4 - r) / 3) */
    int ia = ob_dataset_find_opt(&d, "adam"), is = ob_dataset_find_opt(&d, "sgd");
    if (ia >= 0 && is >= 0) {
        CHECK_NEAR(st.area[ia], 11.0 / 12, 1e-9);
        CHECK_NEAR(st.area[is], 5.0 / 6, 1e-9);
    }
    ob_stats_free(&st);

    /* the exported time_to_target.csv says which statistic each workload used */
    char dir[600];
    snprintf(dir, sizeof dir, "%s.csv", path);
    mkdir(dir, 0755);
    CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
    CHECK_OK(ob_export_tables(ob_store_db(s), &d, &st, dir, &e), &e);
    char *csv = check_slurp(dir, "time_to_target.csv", NULL);
    CHECK(csv && strstr(csv, ",\"target_met_at_start\",\"step_time\",\"time_lo_s\",\"time_hi_s\",\"steps_lo\","
                             "\"steps_hi\",\"final_above_target\",\"steps_ci_coverage\",\"step_time_ci_coverage\"\n"));
    /* 2 seeds and 2 timed runs each: [min, max], which holds a median half the time */
    CHECK(csv && strstr(csv, "\"W\",2.45,\"given\",\"adam\",1,20,0.02,0.01,0,0,\"median\",0.02,0.02,20,20,,0.5,0.5\n"));
    CHECK(csv && strstr(csv, "\"W\",2.45,\"given\",\"sgd\",2,20,0.04,0.01,0,0,\"median\",0.04,0.04,20,20,,0.5,0.5\n"));
    CHECK(csv && strstr(csv, "\"V\",2.45,\"given\",\"adam\",2,20,0.06,0.01,0,0,\"mean\",0.06,0.06,20,20,,0.5,0.5\n"));
    free(csv);
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The best lr: equal medians go to the smaller lr; the first diverged lr is
 * the smallest where a seed diverged, not the last; and a seed diverged at
 * the best lr itself (its median still finite) leaves the lr range measured:
 * the best lr is inside whatever its seeds did. */
static void test_best_lr_ties(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        /* adam: medians 2 (a seed diverged), 1, 1, and every seed diverged at lr 1 */
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.001, seed, seed ? "done" : "diverged", 2.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.1, seed, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 1.0, seed, "diverged", 0, 0, 1, 1, 1, 1, 1, 1, 0});
        /* sgd: medians 4, 1 (a seed diverged), 4 */
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.001, seed, "done", 4.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, seed, seed ? "done" : "diverged", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.1, seed, "done", 4.0, 10, 1, 1, 1, 1, 1, 1, 0});
    }
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    const ob_group *ga = grp(&d, &st, "W", "adam"), *gs = grp(&d, &st, "W", "sgd");
    CHECK(ga && gs);
    if (ga && gs) {
        CHECK_MSG(ga->best_lr == 0.01 && ga->final.median == 1.0, "adam: best lr %g", ga->best_lr);
        CHECK_MSG(ga->first_div_lr == 0.001 && ga->n_diverged == 4, "adam: first diverged lr %g", ga->first_div_lr);
        /* the range: 0.01 to 0.1 (within 10%), closed by the diverged seeds at 0.001 and 1 */
        CHECK_NEAR(ga->width_decades, 1.0, 1e-12);
        CHECK(!ga->width_open_lo && !ga->width_open_hi && ga->width_unmeasured == OB_WIDTH_MEASURED);
        /* sgd: median 1 at 0.01 over {inf, 1, 1}; 4 on either side crosses 1.1 ln(1.1) / ln(4)
         * decades away */
        CHECK(gs->best_lr == 0.01 && gs->final.median == 1.0 && isinf(gs->final.max) && gs->first_div_lr == 0.01);
        CHECK_MSG(fabs(gs->width_decades - 2 * log(1.1) / log(4.0)) < 1e-12 && gs->width_unmeasured == OB_WIDTH_MEASURED,
                  "sgd: width %g, unmeasured %d", gs->width_decades, gs->width_unmeasured);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* A loss below 0 (one with an offset, a negative log-likelihood): the lr
 * range's threshold is tol x |best| above the best median, not below it; and a
 * given target equal to the loss before training is met at the start. */
static void test_negative_and_start(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"N", "adam", NULL, 0.01, seed, "done", -2.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"N", "adam", NULL, 0.1, seed, "done", -1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"S", "adam", NULL, 0.01, seed, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    }
    const char *tw[] = {"S"};
    double tv[] = {6.0}; /* S starts at 1 + 10 / 2 */
    ob_stats_opts o;
    opts_targets(&o, 1, tw, tv);
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), &o, &d, &st);
    const ob_group *gn = grp(&d, &st, "N", "adam"), *gt = grp(&d, &st, "S", "adam");
    int wn = ob_dataset_find_wl(&d, "N"), ws = ob_dataset_find_wl(&d, "S");
    CHECK(gn && gt && wn >= 0 && ws >= 0);
    if (gn && gt && wn >= 0 && ws >= 0) {
        /* threshold -2 + 0.1 x 2 = -1.8, linearly (no log of a loss <= 0) 0.2 of the way to
         * -1 at 0.1; open below 0.01 */
        CHECK(gn->best_lr == 0.01);
        CHECK_MSG(fabs(gn->width_decades - 0.2) < 1e-12 && gn->width_open_lo && !gn->width_open_hi,
                  "N: width %g (open %d %d)", gn->width_decades, gn->width_open_lo, gn->width_open_hi);
        CHECK_NEAR(st.target[wn], -1.8, 1e-12);
        CHECK(st.start_loss[ws] == 6.0 && st.target_given[ws] && st.target[ws] == 6.0);
        CHECK_MSG(st.target_at_start[ws] && gt->tt_censored && isnan(gt->tt_steps), "S: at start %d",
                  st.target_at_start[ws]);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The group of one workload and optimizer at lrs 0.001, 0.01, 0.1 x 3
 * seeds (a seed of 0.1 diverged), its runs stored in the order given by
 * perm (an index into lr-major order), and each run's optimizer-step times
 * (opt_ms_median 0.1 x (run + 1), opt_ms_mean 0.2 x (run + 1)). */
static void build_perm(const char *path, const int *perm)
{
    ob_store *s = new_store(path);
    if (!s) return;
    static const double lrs[3] = {0.001, 0.01, 0.1}, final[9] = {3, 4, 5, 1.0, 1.2, 0.8, 1.05, 1.08, NAN};
    for (int k = 0; k < 9; k++) {
        const int i = perm[k];
        const double f = final[i];
        fx_add(s, 0, &(fx_run){"quad", "adam", NULL, lrs[i / 3], i % 3, isnan(f) ? "diverged" : "done", f, 20, 2.0,
                               3.0, 4096, 800, f + 0.5, 1 - f / 10, 0});
    }
    char sql[256];
    for (int i = 0; i < 9; i++) {
        snprintf(sql, sizeof sql,
                 "UPDATE runs SET opt_ms_median = %g, opt_ms_mean = %g WHERE lr = %.17g AND seed = %d",
                 0.1 * (i + 1), 0.2 * (i + 1), lrs[i / 3], i % 3);
        CHECK(sqlite3_exec(ob_store_db(s), sql, NULL, NULL, NULL) == SQLITE_OK);
    }
    ob_store_close(s);
}

/* A group's statistics do not depend on the order its runs were stored
 * in (a matrix runs seed by seed; a resumed or merged one in any order):
 * the same group stored lr-major and scrambled. And the optimizer step's
 * own times: the medians over the runs at the best lr. */
static void test_insertion_order(const char *path)
{
    static const int sorted[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, scrambled[9] = {8, 0, 4, 6, 2, 7, 3, 1, 5};
    char p2[600];
    snprintf(p2, sizeof p2, "%s.scrambled", path);
    build_perm(path, sorted);
    build_perm(p2, scrambled);
    ob_stats_opts o;
    ob_stats_opts_default(&o);
    ob_dataset d[2];
    ob_stats st[2];
    load_stats_at(path, &o, &d[0], &st[0]);
    load_stats_at(p2, &o, &d[1], &st[1]);
    const ob_group *g[2] = {grp(&d[0], &st[0], "quad", "adam"), grp(&d[1], &st[1], "quad", "adam")};
    CHECK(g[0] && g[1]);
    if (g[0] && g[1]) {
        CHECK_MSG(g[0]->n_lr == 3 && g[1]->n_lr == 3, "%d and %d lrs", g[0]->n_lr, g[1]->n_lr);
        for (int k = 0; k < 3 && k < g[0]->n_lr && k < g[1]->n_lr; k++)
            CHECK_MSG(g[0]->lrs[k].lr == g[1]->lrs[k].lr && g[0]->lrs[k].med == g[1]->lrs[k].med &&
                          g[0]->lrs[k].n_diverged == g[1]->lrs[k].n_diverged && g[0]->lrs[k].n_runs == 3 &&
                          g[1]->lrs[k].n_runs == 3,
                      "lr %d: %g/%g, median %g/%g", k, g[0]->lrs[k].lr, g[1]->lrs[k].lr, g[0]->lrs[k].med,
                      g[1]->lrs[k].med);
        CHECK(g[0]->best_lr == 0.01 && g[1]->best_lr == 0.01);
        CHECK(g[0]->final.median == g[1]->final.median && g[0]->final.min == g[1]->final.min);
        CHECK_NEAR(g[0]->width_decades, log(1.1) / log(4.0), 1e-12);
        CHECK(g[0]->width_decades == g[1]->width_decades);
        /* runs 3, 4, 5 are the best lr's: medians 0.5 and 1.0 ms */
        for (int i = 0; i < 2; i++)
            CHECK_MSG(fabs(g[i]->opt_ms_median - 0.5) < 1e-12 && fabs(g[i]->opt_ms_mean - 1.0) < 1e-12,
                      "optimizer step %g ms, mean %g ms", g[i]->opt_ms_median, g[i]->opt_ms_mean);
    }
    for (int i = 0; i < 2; i++) {
        ob_stats_free(&st[i]);
        ob_dataset_free(&d[i]);
    }
}

/* Time-to-target intervals that touch, one's upper end the other's lower end,
 * lie within each other's noise: adam [10, 11] ms and lion [11, 12] ms share
 * rank 1, and so do lion and sgd [12, 13] ms; adam is clearly faster than sgd
 * (rank 2). */
static void test_tt_rank_touching(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    static const struct { const char *opt; double ms[3]; } rows[] = {
        {"adam", {1.0, 1.05, 1.1}}, {"lion", {1.1, 1.15, 1.2}}, {"sgd", {1.2, 1.25, 1.3}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, 0, &(fx_run){"W", rows[i].opt, NULL, 0.01, seed, "done", 1.0, 10, rows[i].ms[seed],
                                   rows[i].ms[seed], 1, 1, 1, 1, 0});
    const char *tw[] = {"W"};
    double tv[] = {2.45}; /* reached at step 10 */
    ob_stats_opts o;
    opts_targets(&o, 1, tw, tv);
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), &o, &d, &st);
    static const int want[] = {1, 1, 2};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const ob_group *g = grp(&d, &st, "W", rows[i].opt);
        CHECK(g != NULL);
        if (!g) continue;
        CHECK(g->tt_steps == 10);
        int r = ob_stats_tt_rank(&st, (int)(g - st.g));
        CHECK_MSG(r == want[i], "%s ranks %d, want %d", rows[i].opt, r, want[i]);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The seeds' noise ties ranks too. Equal step times; the seeds of adam
 * reach the target at the knees 10, 11, 12, those of sgd at 14, 15, 16: every
 * adam seed before every sgd seed, so adam is ahead (rank 1, sgd 2). lion's
 * 9, 13, 20 overlap both (rank 1), and so do nadam's 10, 12 and a seed that
 * never got there (its interval's upper end +inf). Taken as they are, the
 * upper medians 11, 12, 13, 15 would have ranked all four apart. By steps the
 * same. */
static void test_tt_rank_seeds(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    static const struct { const char *opt; double T[3], final[3]; } rows[] = {
        {"adam", {10, 11, 12}, {1, 1, 1}}, {"sgd", {14, 15, 16}, {1, 1, 1}},
        {"lion", {9, 13, 20}, {1, 1, 1}},  {"nadam", {10, 12, 12}, {1, 1, 5}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int seed = 0; seed < 3; seed++)
            fx_add(s, 0, &(fx_run){"W", rows[i].opt, NULL, 0.01, seed, "done", rows[i].final[seed], rows[i].T[seed],
                                   1.0, 1.0, 1, 1, 1, 1, 0});
    const char *tw[] = {"W"};
    double tv[] = {2.45};
    ob_stats_opts o;
    opts_targets(&o, 1, tw, tv);
    static const int want[] = {1, 2, 1, 1};
    for (int by_steps = 0; by_steps < 2; by_steps++) {
        o.profile_by_steps = by_steps;
        ob_dataset d;
        ob_stats st;
        load_stats(ob_store_db(s), &o, &d, &st);
        double prev_hi = -1;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            const ob_group *g = grp(&d, &st, "W", rows[i].opt);
            CHECK(g != NULL);
            if (!g) continue;
            int r = ob_stats_tt_rank(&st, (int)(g - st.g));
            CHECK_MSG(r == want[i], "by %s: %s ranks %d, want %d", by_steps ? "steps" : "time", rows[i].opt, r,
                      want[i]);
            double lo = NAN, hi = NAN;
            CHECK(ob_group_tt_interval(g, by_steps, &lo, &hi));
            CHECK(lo <= hi && (by_steps ? lo <= g->tt_steps && g->tt_steps <= hi
                                        : lo <= g->tt_time_s && g->tt_time_s <= hi));
            if (i == 0) prev_hi = hi;
            if (i == 1) CHECK(prev_hi < lo); /* adam's whole interval below sgd's */
            if (i == 3) CHECK(isinf(hi) && isinf(g->tt_steps_hi) && g->tt_steps_lo < g->tt_steps);
        }
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    ob_store_close(s);
}

/* Seed s's first reach in group g's (one lr) time to target; -1 without one */
static int64_t reach_of(const ob_group *g, int64_t seed)
{
    for (int k = 0; g && k < g->tt_n_reach; k++)
        if (g->tt_reach[k].seed == seed) return g->tt_reach[k].first;
    return -1;
}

/* The profile's bootstrap over seeds: resamples paired by seed (an
 * optimizer behind another on every seed is behind in every resample,
 * where resampling each apart would put it ahead about 1 time in 5), the
 * share of resamples won near its probability, the interval's ends, the
 * same numbers each time, and none without a profile. */
/* Checks the band of the profile's curve o on one workload, where every
 * resample's curve steps from 0 to 1 at a tau in [a, b], a with a share of
 * the resamples under 2.5% and b over 97.5%: below a both ends 0, from a
 * to b 0 and 1, from b both 1; and the curve itself inside its band.
 * n: the profile's labels. Returns the number of taus that fail. */
static int check_band(const ob_stats *st, int n, int o, double a, double b)
{
    if (!st->band_lo || !st->band_hi) return -1;
    int bad = 0;
    for (int k = 0; k < st->n_tau; k++) {
        const double tau = st->taus[k], lo = st->band_lo[k * n + o], hi = st->band_hi[k * n + o];
        const double want_lo = tau >= b ? 1 : 0, want_hi = tau >= a ? 1 : 0, rho = st->rho[k * n + o];
        if (lo != want_lo || hi != want_hi || rho < lo || rho > hi) {
            if (bad++ < 3)
                fprintf(stderr, "  band of %d at tau %g: [%g, %g], curve %g; want [%g, %g]\n", o, tau, lo, hi, rho,
                        want_lo, want_hi);
        }
    }
    return bad;
}

static void test_profile_boot(const char *path)
{
    const char *tw[] = {"W"};
    double tv[] = {2.45};
    ob_stats_opts o;
    opts_targets(&o, 1, tw, tv);
    o.profile_by_steps = 1;
    /* adam's knees 10, 30, 30 and sgd's 2 later on each seed */
    ob_store *s = new_store(path);
    if (!s) return;
    static const double ka[3] = {10, 30, 30}, ks[3] = {12, 32, 32}, kc[3] = {20, 20, 20};
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1, ka[seed], 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 1, ks[seed], 1, 1, 1, 1, 1, 1, 0});
    }
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), &o, &d, &st);
    int ia = ob_dataset_find_opt(&d, "adam"), is = ob_dataset_find_opt(&d, "sgd");
    const ob_group *ga = grp(&d, &st, "W", "adam"), *gs = grp(&d, &st, "W", "sgd");
    CHECK(ia >= 0 && is >= 0 && ga && gs && ga->tt_n_reach == 3 && gs->tt_n_reach == 3);
    for (int seed = 0; ga && gs && seed < 3; seed++) CHECK(reach_of(ga, seed) < reach_of(gs, seed));
    CHECK_MSG(st.n_boot == OB_PROFILE_BOOT && st.area_lo && st.area_first, "n_boot %d", st.n_boot);
    if (st.n_boot && ia >= 0 && is >= 0) {
        CHECK_MSG(st.area_first[ia] == 1 && st.area_first[is] == 0, "paired: adam first in %g, sgd %g",
                  st.area_first[ia], st.area_first[is]);
        CHECK(st.area_lo[ia] == 1 && st.area_hi[ia] == 1 && st.area_hi[is] < 1 && st.area_lo[is] > 0);
        /* the curves' bands: adam's curve is 1 in every resample; sgd's is at
         * 1 from 32 / 30 where the resample's median seed is 1 or 2, and from
         * 12 / 10 where it is seed 0 (7 in 27): both ends 0 below 32 / 30,
         * 0 and 1 up to 1.2, both 1 from there */
        CHECK(check_band(&st, d.n_opt, ia, 1, 1) == 0 && check_band(&st, d.n_opt, is, 32.0 / 30, 1.2) == 0);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);

    /* adam 10, 30, 30 against sgd 20 on every seed: adam's upper median of
     * 3 draws is its 10 where 2 or 3 draws are seed 0, probability 7/27 */
    s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", 1, ka[seed], 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 1, kc[seed], 1, 1, 1, 1, 1, 1, 0});
    }
    ob_stats st2;
    for (int pass = 0; pass < 2; pass++) {
        load_stats(ob_store_db(s), &o, &d, &st);
        ia = ob_dataset_find_opt(&d, "adam"), is = ob_dataset_find_opt(&d, "sgd");
        ga = grp(&d, &st, "W", "adam"), gs = grp(&d, &st, "W", "sgd");
        CHECK(ia >= 0 && is >= 0 && ga && gs && st.n_boot == OB_PROFILE_BOOT);
        if (!(ia >= 0 && is >= 0 && ga && gs && st.n_boot)) break;
        const double a10 = (double)reach_of(ga, 0), a30 = (double)reach_of(ga, 1), s20 = (double)reach_of(gs, 0);
        CHECK(a10 < s20 && s20 < a30 && ga->tt_steps == a30);
        CHECK_MSG(fabs(st.area_first[ia] - 7.0 / 27) < 0.03 && fabs(st.area_first[ia] + st.area_first[is] - 1) < 1e-12,
                  "adam first in %g of the resamples (7/27 = %g), sgd %g", st.area_first[ia], 7.0 / 27,
                  st.area_first[is]);
        /* adam's area: 1 where it wins, (4 - a30 / s20) / 3 (its estimate) where not */
        CHECK_NEAR(st.area[ia], (4 - a30 / s20) / 3, 1e-12);
        CHECK_NEAR(st.area_lo[ia], st.area[ia], 1e-12);
        CHECK(st.area_hi[ia] == 1 && st.area_hi[is] == 1);
        CHECK_NEAR(st.area_lo[is], (4 - s20 / a10) / 3, 1e-12);
        /* adam's curve: 1 from 1 (7 in 27) or from a30 / s20; sgd's: 1 from 1 or from s20 / a10 */
        CHECK(check_band(&st, d.n_opt, ia, 1, a30 / s20) == 0 && check_band(&st, d.n_opt, is, 1, s20 / a10) == 0);
        if (pass == 0) {
            st2 = st;
            ob_dataset_free(&d);
            continue;
        }
        /* the same draws each time */
        CHECK(st.area_first[ia] == st2.area_first[ia] && st.area_lo[is] == st2.area_lo[is]);
        ob_stats_free(&st2);
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    ob_store_close(s);

    /* seeds that differ between lrs (adam's seed 1 ran at lr 0.1 alone, its
     * seeds 0 and 2 at 0.01): each seed a resample draws brings its runs at
     * every lr */
    s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, seed == 1 ? 0.1 : 0.01, seed, "done", 1, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, seed, "done", 1, 12, 1, 1, 1, 1, 1, 1, 0});
    }
    load_stats(ob_store_db(s), &o, &d, &st);
    ia = ob_dataset_find_opt(&d, "adam"), is = ob_dataset_find_opt(&d, "sgd");
    CHECK(ia >= 0 && is >= 0 && st.n_boot == OB_PROFILE_BOOT && st.area_first);
    /* adam reaches the target at 10 on every seed, sgd at 12: adam first in
     * every resample, both areas the same in each */
    if (ia >= 0 && is >= 0 && st.n_boot && st.area_first)
        CHECK_MSG(st.area_first[ia] == 1 && st.area_lo[ia] == 1 && st.area_hi[ia] == 1 &&
                      st.area_lo[is] == st.area[is] && st.area_hi[is] == st.area[is],
                  "adam first in %g of the resamples, its area in [%g, %g]; sgd's in [%g, %g], %g", st.area_first[ia],
                  st.area_lo[ia], st.area_hi[ia], st.area_lo[is], st.area_hi[is], st.area[is]);
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);

    /* a target nobody reaches: no profile, no bootstrap */
    s = new_store(path);
    if (!s) return;
    fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, 0, "done", 3, 10, 1, 1, 1, 1, 1, 1, 0});
    load_stats(ob_store_db(s), &o, &d, &st);
    CHECK(st.profile_workloads == 0 && st.n_boot == 0 && !st.area_lo && !st.area_first);
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* How settled a best lr is (ob_group.best_lr_share): lr 0.1 ends at 3 on
 * every seed, lr 0.01 at 1, 5, 5; the median picks 0.1, and a resample
 * picks 0.01 where it draws seed 0 twice or more, 7 times in 27 (a drawn
 * seed brings its runs at every lr). One lr, or one seed: always the same
 * pick. */
static void test_best_lr_share(const char *path)
{
    ob_store *s = new_store(path);
    if (!s) return;
    static const double f01[3] = {1, 5, 5};
    for (int seed = 0; seed < 3; seed++) {
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.01, seed, "done", f01[seed], 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "adam", NULL, 0.1, seed, "done", 3, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.1, seed, "done", 3, 10, 1, 1, 1, 1, 1, 1, 0});
    }
    fx_add(s, 0, &(fx_run){"W", "lion", NULL, 0.01, 0, "done", 2, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "lion", NULL, 0.1, 0, "done", 1, 10, 1, 1, 1, 1, 1, 1, 0});
    ob_dataset d;
    ob_stats st;
    load_stats(ob_store_db(s), NULL, &d, &st);
    const ob_group *a = grp(&d, &st, "W", "adam"), *g = grp(&d, &st, "W", "sgd"), *l = grp(&d, &st, "W", "lion");
    CHECK(a && g && l);
    if (a && g && l) {
        CHECK(a->n_lr == 2 && a->best_lr == 0.1);
        CHECK_MSG(fabs(a->best_lr_share - 20.0 / 27) < 0.03 && a->lrs[1].best_share == a->best_lr_share &&
                      fabs(a->lrs[0].best_share + a->lrs[1].best_share - 1) < 1e-12,
                  "adam: 0.1 best in %g of the resamples (20/27 = %g), 0.01 in %g", a->best_lr_share, 20.0 / 27,
                  a->lrs[0].best_share);
        CHECK(g->best_lr_share == 1 && l->best_lr == 0.1 && l->best_lr_share == 1 && l->lrs[0].best_share == 0);
    }
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* Two doubles alike, NaN alike. */
static int same_num(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* The statistics of time to target and of the start, as the two ways of
 * computing them must agree: bit for bit. */
static int same_tt(const ob_stats *a, const ob_stats *b)
{
    if (a->n_g != b->n_g || a->n_wl != b->n_wl) return 0;
    for (int w = 0; w < a->n_wl; w++)
        if (!same_num(a->target[w], b->target[w]) || !same_num(a->start_loss[w], b->start_loss[w]) ||
            a->target_halfway[w] != b->target_halfway[w] || a->target_at_start[w] != b->target_at_start[w] ||
            a->in_profile[w] != b->in_profile[w])
            return 0;
    for (int k = 0; k < a->n_g; k++) {
        const ob_group *x = &a->g[k], *y = &b->g[k];
        if (x->n_lr != y->n_lr || x->best != y->best || !same_num(x->tt_steps, y->tt_steps) ||
            !same_num(x->tt_time_s, y->tt_time_s) || !same_num(x->tt_lr, y->tt_lr) ||
            !same_num(x->tt_steps_lo, y->tt_steps_lo) || !same_num(x->tt_steps_hi, y->tt_steps_hi) ||
            x->tt_censored != y->tt_censored || !same_num(x->width_decades, y->width_decades) ||
            x->n_best_runs != y->n_best_runs)
            return 0;
        for (int i = 0; i < x->n_lr; i++)
            if (!same_num(x->lrs[i].tt_steps, y->lrs[i].tt_steps) ||
                !same_num(x->lrs[i].tt_time_s, y->lrs[i].tt_time_s) ||
                !same_num(x->lrs[i].tt_steps_lo, y->lrs[i].tt_steps_lo) ||
                !same_num(x->lrs[i].tt_steps_hi, y->lrs[i].tt_steps_hi))
                return 0;
    }
    for (int op = 0; op < a->n_opt; op++)
        if (!same_num(a->area[op], b->area[op])) return 0;
    return 1;
}

/* Is run i one of the runs at some group's best lr? */
static int is_best_run(const ob_stats *s, int i)
{
    for (int k = 0; k < s->n_g; k++)
        for (int j = 0; j < s->g[k].n_best_runs; j++)
            if (s->g[k].best_runs[j] == i) return 1;
    return 0;
}

/* The statistics without every curve in memory (ob_stats_compute_db, as the
 * report computes them; ob_stats_compute_read with a reader) equal those of
 * every curve loaded (ob_stats_compute), under the default targets (set from
 * other runs' results) and given ones; and afterwards the dataset holds the
 * curve of every run at a best lr, whole, and no other. The reference
 * database with its confirmation runs, and a workload whose seeds reach the
 * target at steps of their own (knees 30, 60, 90 of 100 steps). */
static void test_curves_from_db(const char *path)
{
    ob_err e = {0};
    CHECK(fx_build_reference(path) == 0 && fx_add_confirm(path) == 0);
    ob_store *st = NULL;
    CHECK_OK(ob_store_open(path, OB_STORE_EXISTING, &st, &e), &e);
    if (!st) return;
    static const double knee[3] = {30, 60, 90};
    for (int seed = 0; seed < 3; seed++)
        for (int l = 0; l < 2; l++) {
            const double lr = l ? 0.1 : 0.01;
            fx_add(st, 1, &(fx_run){"var", "adam", NULL, lr, seed, "done", 1.0 + l + 0.1 * seed, knee[seed] + 5 * l,
                                    2, 3, 1, 1, 1, 1, 100});
            fx_add(st, 1, &(fx_run){"var", "sgd", NULL, lr, seed, seed == 2 && l ? "diverged" : "done",
                                    1.2 + 0.1 * seed, knee[2 - seed], 1, 1.5, 1, 1, 1, 1, 100});
        }
    sqlite3 *db = ob_store_db(st);
    const char *tw[] = {"quad", "var"};
    const double tv[] = {2.0, 3.0};
    for (int given = 0; given < 2; given++) {
        ob_stats_opts o;
        if (given) opts_targets(&o, 2, tw, tv);
        else ob_stats_opts_default(&o);
        ob_dataset full, part, info;
        ob_stats s_full, s_part, s_info, s_none;
        load_stats(db, &o, &full, &s_full);
        /* time to target is measured, so a curve missing from it would show */
        int n_tt = 0;
        for (int k = 0; k < s_full.n_g; k++) n_tt += !s_full.g[k].tt_censored;
        CHECK_MSG(n_tt >= 4, "targets %d: %d groups reached the target", given, n_tt);

        CHECK_OK(ob_dataset_load(db, 0, &part, &e), &e);
        CHECK_OK(ob_stats_compute_db(db, "x.db", &part, &o, 1, &s_part, &e), &e);
        CHECK_MSG(same_tt(&s_full, &s_part), "targets %d: the statistics differ from those of every curve", given);
        CHECK(part.n == full.n);
        int n_kept = 0, n_runs = part.n < full.n ? part.n : full.n;
        for (int i = 0; i < n_runs; i++) {
            const ob_rrun *a = &full.runs[i], *b = &part.runs[i];
            CHECK(a->id == b->id && same_num(a->first_loss, b->first_loss) && a->n_evals == b->n_evals &&
                  a->n_eval_loss == b->n_eval_loss && a->n_eval_metric == b->n_eval_metric);
            if (is_best_run(&s_part, i)) {
                /* a run whose curve the figures and curves_best.csv draw */
                n_kept++;
                CHECK_MSG(b->has_curve && b->n_curve == a->n_curve && b->n_curve > 0 &&
                              !memcmp(b->c_step, a->c_step, (size_t)a->n_curve * sizeof *a->c_step) &&
                              !memcmp(b->c_loss, a->c_loss, (size_t)a->n_curve * sizeof *a->c_loss),
                          "targets %d: run %lld at a best lr: %lld of %lld points", given, (long long)a->id,
                          (long long)b->n_curve, (long long)a->n_curve);
            } else {
                CHECK_MSG(!b->has_curve && b->n_curve == 0 && !b->c_step && !b->c_loss,
                          "targets %d: run %lld, not at a best lr, has its curve in memory", given,
                          (long long)a->id);
            }
        }
        CHECK(n_kept > 0 && n_kept < n_runs);

        /* with a reader on a dataset that has no curve: each finished sweep
         * run of a workload with a target read once */
        CHECK_OK(ob_dataset_load(db, 0, &info, &e), &e);
        CHECK_OK(ob_dataset_load_curve_info(db, &info, &e), &e);
        ob_curve_reader *cr = NULL;
        CHECK_OK(ob_curve_reader_open(db, &cr, &e), &e);
        if (cr) {
            CHECK_OK(ob_stats_compute_read(&info, &o, cr, &s_info, &e), &e);
            CHECK(same_tt(&s_full, &s_info));
            int64_t want = 0;
            for (int i = 0; i < info.n; i++) {
                const ob_rrun *r = &info.runs[i];
                want += r->finished && !r->confirm && !isnan(s_info.target[r->wl]) && !s_info.target_at_start[r->wl];
            }
            CHECK_MSG(ob_curve_reader_reads(cr) == want && want > 0, "targets %d: %lld curves read, %lld runs",
                      given, (long long)ob_curve_reader_reads(cr), (long long)want);
            CHECK(!ob_curve_reader_failed(cr));
            ob_curve_reader_close(cr);
            ob_stats_free(&s_info);
        }
        /* ... and without one, from the curves it does not have: nothing is
         * reached (what the reader is for) */
        CHECK_OK(ob_stats_compute(&info, &o, &s_none, &e), &e);
        for (int k = 0; k < s_none.n_g; k++) CHECK(s_none.g[k].tt_censored);
        CHECK(!same_tt(&s_full, &s_none));
        ob_stats_free(&s_none);
        ob_dataset_free(&info);
        ob_stats_free(&s_part);
        ob_dataset_free(&part);
        ob_stats_free(&s_full);
        ob_dataset_free(&full);
    }
    /* an unknown --target workload is the statistics' error, not the database's */
    const char *bw[] = {"nope"};
    const double bv[] = {1.0};
    ob_stats_opts o;
    opts_targets(&o, 1, bw, bv);
    ob_dataset d;
    ob_stats s;
    CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
    CHECK(ob_stats_compute_db(db, "x.db", &d, &o, 1, &s, &e) == OB_ERR_INPUT && !strncmp(e.msg, "--target", 8));
    ob_stats_free(&s);
    ob_dataset_free(&d);
    /* a curve that cannot be read: the database's error, named */
    CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
    CHECK(sqlite3_exec(db, "ALTER TABLE curves RENAME TO curves_gone", NULL, NULL, NULL) == SQLITE_OK);
    ob_stats_opts_default(&o);
    CHECK(ob_stats_compute_db(db, "x.db", &d, &o, 1, &s, &e) == OB_ERR_INPUT &&
          !strncmp(e.msg, "database 'x.db': ", 17) && strstr(e.msg, "curves"));
    CHECK(s.n_g == 0);
    ob_dataset_free(&d);
    ob_store_close(st);
}

/* A run of 50 steps evaluated every 10 steps (with n_evals 1, at step 50
 * only), each evaluation before step reach holding pre and from it on post
 * (loss, metric), the run's final held-out loss and metric fin_loss and
 * fin_metric (NaN loss when diverged); a diverged run stops after its
 * evaluation at step 10. */
static void add_eval_run(ob_store *s, const char *wl, const char *opt, double lr, int seed, int diverged,
                         int64_t reach, ob_eval_point pre, ob_eval_point post, double fin_metric, int n_evals)
{
    ob_err e = {0};
    char hp[128];
    snprintf(hp, sizeof hp, "{\"lr\":%.17g,\"train\":{\"clip_norm\":0}}", lr);
    ob_run_spec spec = {.cell = 0, .workload = wl, .workload_params = "{}", .optimizer = opt, .hparams = hp,
                        .lr = lr, .seed = seed, .backend = "cpu", .device = "test", .steps = 50};
    int64_t id = 0;
    CHECK_OK(ob_store_add_runs(s, 0, &spec, 1, &id, &e), &e);
    const int n = diverged ? 12 : 51;
    ob_curve_point pts[51];
    ob_eval_point ev[6];
    for (int t = 0; t < n; t++) pts[t] = (ob_curve_point){t, 3.0 - t / 50.0, 1.0, lr};
    int ne = 0;
    for (int64_t t = n_evals == 1 ? 50 : 0; t <= (diverged ? 10 : 50); t += n_evals == 2 ? 50 : 10) {
        ev[ne] = t >= reach ? post : pre;
        ev[ne++].step = t;
    }
    CHECK_OK(ob_store_append(s, id, pts, n, ev, ne, NULL, 0, &e), &e);
    ob_run_result res = {.status = diverged ? "diverged" : "done", .steps_done = n, .final_loss = diverged ? NAN : 2.0,
                         .best_loss = 2.0, .eval_loss = diverged ? NAN : post.loss, .eval_metric = fin_metric,
                         .loss_floor = NAN, .peak_mem_bytes = 1, .state_bytes = 1, .step_ms_median = 1.0,
                         .step_ms_p90 = 1.0, .step_ms_mean = 1.0, .items_per_sec = NAN,
                         .diverged_step = diverged ? 11 : -1, .wall_s = 1.0};
    CHECK_OK(ob_store_finish_run(s, id, &res, &e), &e);
}

/* A run whose held-out loss is 5 at every evaluation before step reach and
 * fin from it on (fin is the final held-out loss; the metric 0.5);
 * n_evals 6: evaluated every 10 steps from step 0, 2: at steps 0 and 50,
 * 1: at step 50 alone. */
static void add_ho_run(ob_store *s, const char *wl, const char *opt, double lr, int seed, int diverged, int64_t reach,
                       double fin, int n_evals)
{
    add_eval_run(s, wl, opt, lr, seed, diverged, reach, (ob_eval_point){0, 5.0, 0.5}, (ob_eval_point){0, fin, 0.5},
                 0.5, n_evals);
}

/* Runs evaluated twice, before training and at their end (eval_every
 * equal to the steps): the interval is the gap, the start value the one at
 * step 0, and the time to target is counted in those evaluations. */
static void test_heldout_two_evals(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) add_ho_run(s, "two", "adam", 0.1, seed, 0, 50, 1.0, 2);
    ob_stats_opts o;
    ob_stats_opts_default(&o);
    ob_dataset d;
    ob_stats st;
    CHECK_OK(ob_dataset_load(ob_store_db(s), 0, &d, &e), &e);
    CHECK_OK(ob_stats_compute_db(ob_store_db(s), "two.db", &d, &o, 0, &st, &e), &e);
    const int w = ob_dataset_find_wl(&d, "two");
    const ob_group *g = grp(&d, &st, "two", "adam");
    CHECK(w >= 0 && g);
    if (w >= 0 && g)
        CHECK_MSG(st.ev_every[w] == 50 && st.ev_start[w] == 5.0 && fabs(st.ev_target[w] - 1.1) < 1e-12 &&
                      !g->ev.censored && g->ev.steps == 50,
                  "every %lld, start %g, target %g, %g steps", (long long)st.ev_every[w], st.ev_start[w],
                  st.ev_target[w], g->ev.steps);
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* The held-out time to target (ob_group.ev) on a workload evaluated every
 * 10 steps: the default target (1.1 x the best upper-median final held-out
 * loss, over the groups and their lrs), a seed's first evaluation at or
 * below it, the majority of seeds, the lr, the interval and the ranks; a
 * given target (--eval-target), one met at step 0, and an unknown workload;
 * a workload evaluated at the end only has none, and so has every workload
 * without a reader of the database. */
static void test_heldout_target(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    static const int64_t never = 1000;
    for (int seed = 0; seed < 3; seed++) {
        add_ho_run(s, "ho", "adam", 0.1, seed, 0, 10 * (seed + 1), 1.0 + 0.1 * seed, 6); /* 10, 20, 30 */
        add_ho_run(s, "ho", "adam", 0.01, seed, 0, 40, 1.5, 6);                           /* above the target */
        add_ho_run(s, "ho", "sgd", 0.1, seed, seed == 2, seed == 0 ? 30 : never, seed == 0 ? 1.2 : 3.0, 6);
        add_ho_run(s, "ho", "sgd", 0.01, seed, 0, 50, 1.2, 6);
        add_ho_run(s, "end", "adam", 0.1, seed, 0, 0, 1.0, 1);
    }
    sqlite3 *db = ob_store_db(s);
    for (int variant = 0; variant < 4; variant++) {
        /* 0: default target; 1: given 1.05; 2: given 6 (met at step 0); 3: without a reader */
        const char *tw[] = {"ho"};
        const double tv[] = {variant == 1 ? 1.05 : 6.0};
        ob_stats_opts o;
        opts_ev_targets(&o, variant == 1 || variant == 2, tw, tv);
        o.profile_by_steps = 1;
        o.profile_heldout = 1;
        ob_dataset d;
        ob_stats st;
        CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
        if (variant == 3) {
            CHECK_OK(ob_dataset_load_curves(db, &d, &e), &e);
            CHECK_OK(ob_stats_compute(&d, &o, &st, &e), &e);
        } else {
            CHECK_OK(ob_stats_compute_db(db, "ho.db", &d, &o, 0, &st, &e), &e);
        }
        const int ho = ob_dataset_find_wl(&d, "ho"), end = ob_dataset_find_wl(&d, "end");
        const ob_group *adam = grp(&d, &st, "ho", "adam"), *sgd = grp(&d, &st, "ho", "sgd"),
                       *adam_end = grp(&d, &st, "end", "adam");
        CHECK(ho >= 0 && end >= 0 && adam && sgd && adam_end);
        if (!adam || !sgd || !adam_end || ho < 0 || end < 0) return;
        CHECK_MSG(st.ev_every[end] == 0 && isnan(adam_end->ev.steps) && adam_end->ev.censored,
                  "variant %d: a workload evaluated at the end only has a held-out time to target", variant);
        if (variant == 3) {
            CHECK_MSG(st.ev_every[ho] == 0 && isnan(adam->ev.steps) && isnan(st.ev_target[ho]),
                      "without a reader: held-out time to target %g", adam->ev.steps);
        } else {
            CHECK_MSG(st.ev_every[ho] == 10 && st.ev_start[ho] == 5.0, "every %lld, start %g",
                      (long long)st.ev_every[ho], st.ev_start[ho]);
        }
        if (variant == 0) {
            /* the best upper median: adam at 0.1, 1.1; x 1.1 */
            CHECK_MSG(fabs(st.ev_target[ho] - 1.21) < 1e-12 && !st.ev_target_given[ho] &&
                          !st.ev_target_halfway[ho] && !st.ev_target_at_start[ho],
                      "default held-out target %.17g", st.ev_target[ho]);
            /* adam: seeds at 10, 20, 30 -> 20 at lr 0.1 (0.01 never: 1.5) */
            CHECK_MSG(!adam->ev.censored && adam->ev.steps == 20 && adam->ev.lr == 0.1 && adam->ev.steps_lo == 10 &&
                          adam->ev.steps_hi == 30 && adam->ev.time_s == 0.02,
                      "adam: %g steps (%g - %g) at lr %g, %g s", adam->ev.steps, adam->ev.steps_lo,
                      adam->ev.steps_hi, adam->ev.lr, adam->ev.time_s);
            /* sgd: at 0.1 one seed of three (one diverged); at 0.01 all at 50 */
            CHECK_MSG(!sgd->ev.censored && sgd->ev.steps == 50 && sgd->ev.lr == 0.01, "sgd: %g steps at lr %g",
                      sgd->ev.steps, sgd->ev.lr);
            CHECK(ob_stats_ev_rank(&st, (int)(adam - st.g)) == 1 && ob_stats_ev_rank(&st, (int)(sgd - st.g)) == 2);
            /* the profile on it: "ho" alone enters ("end" has none); sgd 2.5 x adam's steps */
            const int oa = ob_dataset_find_opt(&d, "adam"), os = ob_dataset_find_opt(&d, "sgd");
            CHECK_MSG(st.profile_workloads == 1 && st.area[oa] == 1.0 && fabs(st.area[os] - 0.5) < 0.01,
                      "held-out profile: %d workloads, areas adam %g sgd %g", st.profile_workloads, st.area[oa],
                      st.area[os]);
        } else if (variant == 1) {
            CHECK(st.ev_target[ho] == 1.05 && st.ev_target_given[ho] && !st.ev_target_at_start[ho]);
            CHECK_MSG(adam->ev.censored && isinf(adam->ev.steps) && sgd->ev.censored &&
                          ob_stats_ev_rank(&st, (int)(adam - st.g)) == 0,
                      "target 1.05: adam %g steps (one seed of three gets there)", adam->ev.steps);
        } else if (variant == 2) {
            CHECK(st.ev_target_at_start[ho] && adam->ev.censored && isnan(adam->ev.steps));
        }
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    /* an --eval-target workload the database does not have */
    const char *bw[] = {"hoo"};
    const double bv[] = {1.0};
    ob_stats_opts o;
    opts_ev_targets(&o, 1, bw, bv);
    ob_dataset d;
    ob_stats st;
    CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
    CHECK_MSG(ob_stats_compute_db(db, "ho.db", &d, &o, 0, &st, &e) == OB_ERR_INPUT &&
                  !strncmp(e.msg, "--eval-target 'hoo=1'", 21) && strstr(e.msg, "did you mean 'ho'"),
              "unknown --eval-target workload: %s", e.msg);
    ob_stats_free(&st);
    ob_dataset_free(&d);
    ob_store_close(s);
}

/* A run evaluated every 10 steps whose held-out metric is start before step
 * reach and fin from it on (the held-out loss 1 throughout). */
static void add_hm_run(ob_store *s, const char *wl, const char *opt, double lr, int seed, int diverged, int64_t reach,
                       double fin, double start)
{
    add_eval_run(s, wl, opt, lr, seed, diverged, reach, (ob_eval_point){0, 1.0, start}, (ob_eval_point){0, 1.0, fin},
                 diverged ? NAN : fin, 6);
}

/* The held-out time to target on the held-out metric (heldout_metric:
 * higher is better): the default target 0.9 x the best lower-median final
 * metric, a seed's first evaluation at or above it (below it before: a
 * reach read as for a loss would be step 0), the halfway rule from the
 * metric at step 0, a given target, one met at step 0, and a workload
 * without a metric (none). */
static void test_heldout_metric_target(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    for (int seed = 0; seed < 3; seed++) {
        /* adam 0.1: 0.9, 0.85, 0.8 from steps 10, 20, 30: lower median 0.85 */
        add_hm_run(s, "hm", "adam", 0.1, seed, 0, 10 * (seed + 1), 0.9 - 0.05 * seed, 0.1);
        add_hm_run(s, "hm", "adam", 0.01, seed, 0, 40, 0.7, 0.1); /* below the target */
        add_hm_run(s, "hm", "sgd", 0.1, seed, seed == 2, 10, seed == 2 ? 0.99 : 0.6, 0.1);
        /* from 0.8 at step 0 to 0.9: 0.9 x 0.9 = 0.81 asks for less than halfway, 0.85 */
        add_hm_run(s, "hh", "adam", 0.1, seed, 0, 20, 0.9, 0.8);
        add_hm_run(s, "nm", "adam", 0.1, seed, 0, 20, NAN, NAN); /* no metric (quadratic) */
    }
    sqlite3 *db = ob_store_db(s);
    for (int variant = 0; variant < 3; variant++) {
        /* 0: default targets; 1: given 0.95; 2: given 0.05 (met at step 0) */
        const char *tw[] = {"hm"};
        const double tv[] = {variant == 1 ? 0.95 : 0.05};
        ob_stats_opts o;
        opts_ev_targets(&o, variant > 0, tw, tv);
        o.heldout_metric = 1;
        ob_dataset d;
        ob_stats st;
        CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
        CHECK_OK(ob_stats_compute_db(db, "hm.db", &d, &o, 0, &st, &e), &e);
        const int hm = ob_dataset_find_wl(&d, "hm"), hh = ob_dataset_find_wl(&d, "hh"), nm = ob_dataset_find_wl(&d, "nm");
        const ob_group *adam = grp(&d, &st, "hm", "adam"), *sgd = grp(&d, &st, "hm", "sgd"),
                       *adam_hh = grp(&d, &st, "hh", "adam"), *adam_nm = grp(&d, &st, "nm", "adam");
        CHECK(hm >= 0 && hh >= 0 && nm >= 0 && adam && sgd && adam_hh && adam_nm);
        if (hm < 0 || hh < 0 || nm < 0 || !adam || !sgd || !adam_hh || !adam_nm) return;
        CHECK(st.heldout_metric == 1);
        CHECK_MSG(st.ev_every[nm] == 0 && adam_nm->ev.censored && isnan(adam_nm->ev.steps),
                  "variant %d: a workload without a metric has a held-out time to target", variant);
        CHECK_MSG(st.ev_every[hm] == 10 && fabs(st.ev_start[hm] - 0.1) < 1e-12, "every %lld, start %g",
                  (long long)st.ev_every[hm], st.ev_start[hm]);
        if (variant == 0) {
            CHECK_MSG(fabs(st.ev_target[hm] - 0.765) < 1e-12 && !st.ev_target_given[hm] &&
                          !st.ev_target_halfway[hm] && !st.ev_target_at_start[hm],
                      "default metric target %.17g", st.ev_target[hm]);
            CHECK_MSG(!adam->ev.censored && adam->ev.steps == 20 && adam->ev.lr == 0.1 && adam->ev.steps_lo == 10 &&
                          adam->ev.steps_hi == 30,
                      "adam: %g steps (%g - %g) at lr %g", adam->ev.steps, adam->ev.steps_lo, adam->ev.steps_hi,
                      adam->ev.lr);
            /* sgd: two seeds at 0.6, the diverged one never */
            CHECK_MSG(sgd->ev.censored && isinf(sgd->ev.steps), "sgd: %g steps", sgd->ev.steps);
            CHECK(ob_stats_ev_rank(&st, (int)(adam - st.g)) == 1 && ob_stats_ev_rank(&st, (int)(sgd - st.g)) == 0);
            CHECK_MSG(fabs(st.ev_target[hh] - 0.85) < 1e-12 && st.ev_target_halfway[hh] && !adam_hh->ev.censored &&
                          adam_hh->ev.steps == 20,
                      "halfway metric target %.17g (%d), %g steps", st.ev_target[hh], st.ev_target_halfway[hh],
                      adam_hh->ev.steps);
        } else if (variant == 1) {
            CHECK(st.ev_target[hm] == 0.95 && st.ev_target_given[hm] && !st.ev_target_at_start[hm]);
            CHECK_MSG(adam->ev.censored && sgd->ev.censored, "target 0.95: adam %g steps", adam->ev.steps);
        } else {
            CHECK_MSG(st.ev_target_at_start[hm] && adam->ev.censored && isnan(adam->ev.steps),
                      "target 0.05 below the metric at step 0: at start %d, adam %g steps",
                      st.ev_target_at_start[hm], adam->ev.steps);
        }
        ob_stats_free(&st);
        ob_dataset_free(&d);
    }
    ob_store_close(s);
}

/* What loading reads of rows a person or another program wrote: text in a
 * number's column is read as C reads it ('Infinity', with blanks around),
 * and as unknown when it is no number (empty, '2.5x'), in the runs and in
 * the curves; the guard's events are counted by kind (non-finite steps
 * skipped, spikes skipped, rollbacks); an evaluation without a loss is not
 * counted as one with a loss; a database lacking one of the optimizer-time
 * columns reads neither; an lr of 0 or infinity is refused, and of two runs
 * with an lr that is no learning rate, the first is named. Labels tell apart
 * values that differ in the 4th digit, keep "train." on a training key the
 * optimizer has a key of its own for (adamw_sf's warmup_steps), hold no
 * comma or quote (CSV), and configurations whose hyperparameters are no JSON
 * are numbered by their place. A cell whose run diverged and whose later run
 * failed keeps the diverged one. Dropping the confirmation runs drops one
 * that did not finish as well. */
static void test_dataset_reading(const char *path)
{
    ob_err e = {0};
    ob_store *s = new_store(path);
    if (!s) return;
    sqlite3 *db = ob_store_db(s);
    for (int k = 0; k < 5; k++)
        fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, k, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    CHECK(sqlite3_exec(db, "UPDATE runs SET final_loss = CASE seed WHEN 0 THEN 'Infinity' WHEN 1 THEN ' Infinity ' "
                           "WHEN 2 THEN '' WHEN 3 THEN '2.5x' ELSE '-inf\t' END, opt_ms_median = 4, "
                           "opt_ms_mean = 6; "
                           "UPDATE curves SET loss = 'oops' WHERE step = 3; "
                           "UPDATE evals SET loss = NULL WHERE run_id = 1; "
                           "INSERT INTO events (run_id, step, kind, detail) VALUES "
                           "(1, 3, 'skipped_step', 'non-finite loss; update skipped'), "
                           "(1, 4, 'skipped_step', 'non-finite loss; update skipped'), "
                           "(1, 5, 'spike_skipped', 'loss 9'), (1, 6, 'spike_skipped', 'loss 9'), "
                           "(1, 7, 'spike_skipped', 'loss 9'), (1, 8, 'optimizer', 'rollback: to step 1'), "
                           "(1, 9, 'optimizer', 'stopped: at step 9'), (2, 9, 'diverged', 'loss 1e9')",
                       NULL, NULL, NULL) == SQLITE_OK);
    ob_dataset d;
    load_with_curves(db, &d);
    CHECK(d.n == 5);
    if (d.n == 5) {
        const double want[5] = {INFINITY, INFINITY, NAN, NAN, -INFINITY};
        for (int k = 0; k < 5; k++) {
            const ob_rrun *r = &d.runs[k];
            CHECK_MSG(r->seed == k && (isnan(want[k]) ? isnan(r->final_loss) : r->final_loss == want[k]),
                      "seed %lld: final loss %g, want %g", (long long)r->seed, r->final_loss, want[k]);
            CHECK_MSG(r->n_curve == 50 && r->c_step[3] == 3 && isnan(r->c_loss[3]) && r->c_loss[4] == r->c_loss[4],
                      "seed %d: the curve's text loss", k);
            CHECK(r->opt_ms_median == 4 && r->opt_ms_mean == 6);
            const int64_t want_ev[3] = {k == 0 ? 2 : 0, k == 0 ? 3 : 0, k == 0 ? 1 : 0};
            CHECK_MSG(r->n_skip_nonfinite == want_ev[0] && r->n_skip_spike == want_ev[1] &&
                          r->n_rollback == want_ev[2],
                      "seed %d: %lld non-finite steps skipped, %lld spikes, %lld rollbacks", k,
                      (long long)r->n_skip_nonfinite, (long long)r->n_skip_spike, (long long)r->n_rollback);
        }
        CHECK_MSG(d.runs[0].n_evals == 1 && d.runs[0].n_eval_loss == 0 && d.runs[0].n_eval_metric == 1 &&
                      d.runs[1].n_eval_loss == 1,
                  "evaluations %lld, with a loss %lld, with a metric %lld", (long long)d.runs[0].n_evals,
                  (long long)d.runs[0].n_eval_loss, (long long)d.runs[0].n_eval_metric);
    }
    ob_dataset_free(&d);
    CHECK(sqlite3_exec(db, "ALTER TABLE runs RENAME COLUMN opt_ms_mean TO other_ms", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
    CHECK(d.n == 5 && isnan(d.runs[0].opt_ms_median) && isnan(d.runs[0].opt_ms_mean));
    ob_dataset_free(&d);
    /* lrs no run takes: 0, infinite, not a number */
    CHECK(sqlite3_exec(db, "UPDATE runs SET lr = 0 WHERE seed = 4", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_MSG(ob_dataset_load(db, 0, &d, &e) == OB_ERR_INPUT && strstr(e.msg, "run 5 has lr 0,"), "lr 0: %s", e.msg);
    CHECK(sqlite3_exec(db, "UPDATE runs SET lr = 'Infinity' WHERE seed = 4", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_MSG(ob_dataset_load(db, 0, &d, &e) == OB_ERR_INPUT && strstr(e.msg, "run 5 has lr inf,"), "lr inf: %s",
              e.msg);
    CHECK(sqlite3_exec(db, "UPDATE runs SET lr = 0.01 WHERE seed = 4; UPDATE runs SET lr = 'NaN' WHERE seed IN (1, 3)",
                       NULL, NULL, NULL) == SQLITE_OK);
    CHECK_MSG(ob_dataset_load(db, 0, &d, &e) == OB_ERR_INPUT && strstr(e.msg, "run 2 has lr nan,"), "lr nan: %s",
              e.msg);
    ob_store_close(s);

    s = new_store(path);
    if (!s) return;
    db = ob_store_db(s);
    fx_add(s, 0, &(fx_run){"W", "adam", "\"beta2\":0.9991", 0.01, 0, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "adam", "\"beta2\":0.9992", 0.01, 0, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "lion", NULL, 0.01, 0, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "lion", NULL, 0.01, 1, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "diverged", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 0, "failed", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    fx_add_stage(s, 0, &(fx_run){"W", "sgd", NULL, 0.01, 7, "failed", 1.0, 10, 1, 1, 1, 1, 1, 1, 0}, "confirm");
    for (int k = 0; k < 2; k++) {
        fx_add(s, 0, &(fx_run){"W", "adamw_sf", NULL, 0.01, k, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
        fx_add(s, 0, &(fx_run){"W", "rmsprop", NULL, 0.01, k, "done", 1.0, 10, 1, 1, 1, 1, 1, 1, 0});
    }
    CHECK(sqlite3_exec(db, "UPDATE runs SET hparams = 'lion text ' || seed WHERE optimizer = 'lion'; "
                           "UPDATE runs SET hparams = '{\"lr\":0.01,\"warmup_steps\":0,\"train\":{\"warmup_steps\":' "
                           "|| (5 * seed + 5) || '}}' WHERE optimizer = 'adamw_sf'; "
                           "UPDATE runs SET hparams = CASE seed WHEN 0 THEN '{\"lr\":0.01,\"route\":\"x,\\\"y\"}' "
                           "ELSE '{\"lr\":0.01,\"route\":\"z\"}' END WHERE optimizer = 'rmsprop'",
                       NULL, NULL, NULL) == SQLITE_OK);
    CHECK_OK(ob_dataset_load(db, 0, &d, &e), &e);
    /* (numbers by value: 5 before 10) */
    const char *want[] = {"adam beta2=0.9991", "adam beta2=0.9992", "adamw_sf train.warmup_steps=5",
                          "adamw_sf train.warmup_steps=10", "lion", "lion #2", "rmsprop route=x;;y", "rmsprop route=z",
                          "sgd"};
    CHECK_MSG(d.n_opt == 9, "%d labels", d.n_opt);
    for (int i = 0; i < d.n_opt && i < 9; i++)
        CHECK_MSG(!strcmp(d.opt_labels[i], want[i]), "label %d '%s', want '%s'", i, d.opt_labels[i], want[i]);
    CHECK_MSG(d.n == 10 && d.n_masked == 1 && d.n_superseded == 0 && !strcmp(d.runs[8].status, "diverged") &&
                  d.runs[9].confirm,
              "%d runs, %d masked, %d superseded", d.n, d.n_masked, d.n_superseded);
    /* the confirmation run goes, though it did not finish */
    CHECK(ob_dataset_drop_confirm(&d, NULL) == 1 && d.n == 9 && !d.runs[8].confirm);
    ob_dataset_free(&d);
    ob_store_close(s);
}

int main(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/ob_test_stats_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    char p[512];
    test_helpers();
    test_median_ci();
    test_interp_width();
    test_first_reach();
    test_first_reach_interval();
    test_majority_first_reach();
    test_majority_cases();
    test_profile();
    test_profile_rank();
    test_best_of_k();
    test_best_lr();
    test_sign_large();
    snprintf(p, sizeof p, "%s/ref.db", dir);
    CHECK(fx_build_reference(p) == 0);
    test_reference(p);
    /* the tests that make a database of their own, each at its file in dir */
    static const struct {
        const char *db;
        void (*test)(const char *path);
    } own_db[] = {
        {"tt.db", test_tt_one_lr},
        {"tt_rank.db", test_tt_rank_noise},
        {"width_edge.db", test_width_edge},
        {"width_unfinished.db", test_width_unfinished},
        {"tt_mixed.db", test_tt_mixed_means},
        {"labels.db", test_labels},
        {"label_order.db", test_label_order},
        {"tuned.db", test_tuned_profile},
        {"heldout_trials.db", test_trial_heldout},
        {"steps.db", test_steps_and_start},
        {"progress.db", test_width_progress},
        {"masked.db", test_superseded_and_masked},
        {"confirm.db", test_confirm},
        {"against.db", test_counted_against},
        {"paired.db", test_sign_paired},
        {"ties.db", test_best_lr_ties},
        {"negative.db", test_negative_and_start},
        {"tt_touch.db", test_tt_rank_touching},
        {"tt_seeds.db", test_tt_rank_seeds},
        {"profile_boot.db", test_profile_boot},
        {"best_lr_share.db", test_best_lr_share},
        {"curves_db.db", test_curves_from_db},
        {"heldout.db", test_heldout_target},
        {"heldout_metric.db", test_heldout_metric_target},
        {"reading.db", test_dataset_reading},
        {"order.db", test_insertion_order},
        {"heldout_two.db", test_heldout_two_evals},
    };
    for (size_t i = 0; i < sizeof own_db / sizeof own_db[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, own_db[i].db);
        own_db[i].test(p);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_done();
}
