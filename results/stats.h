/* results/stats.h - summary statistics of a results database.
 *
 * Definitions (the report's documentation repeats them):
 * - A run's final loss is the mean training loss over its last 10% of steps
 *   (recorded by the run loop). A diverged run counts as +inf when runs are
 *   ranked or a median is taken, and so does a finished run without a finite
 *   final loss (every step of its last 10% skipped as non-finite); failed and
 *   unfinished runs are left out.
 * - Held-out loss and metric of a diverged run (it has none): the worst there
 *   is, +inf for the loss, -inf for the metric (an accuracy), where the group
 *   has such values at all; so their medians are over the same seeds as the
 *   final loss's, not over the seeds that survived.
 * - best lr of a (workload, optimizer configuration) group: the lr with the
 *   lowest median final loss over seeds; ties go to the smaller lr.
 * - At the best lr: median, min, max and a 95% distribution-free interval of
 *   the median (ob_stat_median_ci: order statistics, exact binomial coverage)
 *   of final loss, held-out loss and held-out metric; NaN (no interval) from
 *   a single value. With 2 to 5 values the interval is [min, max], whose
 *   coverage of the median is only 1 - 2^(1-n) (50% to 94%); ci_cover says
 *   what it is.
 * - lr sensitivity width: log10(hi / lo) in decades, where [lo, hi] is the
 *   range around the best lr whose median final loss is within tol of the best
 *   (m <= best + tol * |best|; with tol_of_progress, within tol of the
 *   progress from the workload's start_loss to the best: m <= best + tol *
 *   (start - best), not measured where the best is not below the start) and
 *   where no seed diverged or ended without a
 *   finite loss (the best lr itself aside). Each end is where the median,
 *   interpolated between the last grid lr inside and the first outside as
 *   below, crosses the threshold; an end next to an lr where a seed diverged
 *   (or ended without a finite loss) is the last lr inside; an end at the
 *   edge of the grid is open (the width is then a lower bound). Where an open
 *   end meets a closed one at the best lr itself (the best lr at the edge of
 *   the grid and a seed diverged at the lr next to it, or a tolerance of 0,
 *   or a grid of one lr) the width is not measured: NaN, width_unmeasured
 *   says why.
 * - loss at 0.5x / 2x the best lr: the median final loss interpolated between
 *   the two grid lrs around it, log(loss) linearly in log(lr) where both
 *   losses are > 0 (a loss spans decades across a decade of lr, so a straight
 *   line in the loss itself is off by several times), the loss linearly in
 *   log(lr) otherwise (a loss <= 0); NaN (unknown) when one of them has an
 *   infinite median (half its seeds or more diverged), and outside the grid.
 * - seed sensitivity: coefficient of variation (sample sd / mean) of final loss
 *   across seeds at the best lr (sd / |mean|); NaN with fewer than 2 seeds,
 *   +inf when a seed at the best lr diverged.
 * - divergence rate: diverged / finished runs over the whole grid; first
 *   diverged lr: the smallest lr where some seed diverged.
 * - time to target: a run's trailing loss at a recorded step is the mean of the
 *   loss over the last w recorded points (w = 10% of the points, at least 1: the
 *   same window as the final loss, so per-step noise of small batches does not
 *   count as reaching it; the first w - 1 points average the points so far);
 *   a non-finite loss (a skipped step) is left out of its window, as it is
 *   of the final loss, and a window with no finite loss is +inf; the window's
 *   sum is compensated, so a huge value leaving it takes nothing with it. A seed's first reach is its first
 *   recorded step with a trailing loss <= target (+inf when never; a diverged
 *   seed counts by its points until it stopped and +inf after, so one that got
 *   there before it diverged has reached it). Per lr, the steps to target are
 *   the upper median of the m seeds' first reaches, the ceil((m + 1) / 2)-th
 *   smallest: the middle one for odd m, the upper of the middle two for even m,
 *   the step by which a strict majority of the seeds got there (2 seeds: both;
 *   3: two; 4: three). As in AlgoPerf's scoring, each trial has its own time
 *   to target and the median is over those times, not over the losses; and a
 *   majority must get there: the median over seeds of the trailing loss, with
 *   an even number of seeds the mean of the middle two, let one lucky seed
 *   carry one that never gets there (seeds that first get there at step 39
 *   and never: reached at step 40). The default target is set from the
 *   same upper median of final losses (below), so the optimizer that set it
 *   gets there with a majority of its seeds. The
 *   group's steps and lr come from the lr that reaches it in the fewest steps
 *   (ties: the smaller lr), with profile_by_steps or not; +inf = censored.
 *   Wall time to target = those steps x the group's step time (tt_step_ms):
 *   the median over every finished, timed sweep run of the group, at every
 *   lr, of the run's mean step time (training time, recording and evaluation
 *   excluded; slow steps now and then included). A step's work does not
 *   depend on the lr, so the runs of every lr time it, and the noise of one
 *   lr's runs neither picks the lr nor sets the time. One statistic per workload: where some finished,
 *   timed sweep run of the workload has no mean (a database of schema < 4, or
 *   one merged from its shards and newer ones), every run there counts by its
 *   median step time instead (tt_by_median), so no optimizer is ranked by the
 *   mean against another's median. Default
 *   target per workload: the best upper median final loss there (each
 *   optimizer's ceil((m+1)/2)-th smallest final loss of its m seeds at its best
 *   lr: the median with an odd count, the upper middle one with an even
 *   count), times 1.1, but at least halfway from the start loss (below) to
 *   that best loss: where training moves the loss little (cross-entropy
 *   from 2.54 to 2.29), 1.1 x the best is a loss one step's noise reaches. A
 *   target at or above the median loss at the first
 *   recorded step (training barely moved the loss, or a loose --target) is
 *   met before any update: time to target is then left out for the workload
 *   (target_at_start), not ranked on one step's timing noise.
 * - held-out time to target (AlgoPerf's measure: time to a validation
 *   target): on a workload whose sweep runs were evaluated during training, a
 *   seed's first reach is its first evaluation with a held-out loss <= the
 *   held-out target (no trailing mean: an evaluation already averages its
 *   batches; its resolution is the evaluation interval, ev_every); the
 *   majority over seeds, the lr, the step time and the intervals as above.
 *   Default held-out target: the best, over the workload's groups and their
 *   lrs, of the upper median over seeds of the final held-out loss (a
 *   diverged seed +inf), times 1.1, but at least halfway from the median
 *   held-out loss at step 0 (ev_start) to that best; at or above ev_start it
 *   ranks nothing (ev_target_at_start). With heldout_metric the same on the
 *   held-out metric, higher being better (accuracy): a seed gets there at
 *   its first evaluation with a metric >= the target; the default is the
 *   best lower median of the final metric (a diverged seed -inf), less 10%
 *   of it, but at least halfway from the metric at step 0 to that best;
 *   workloads without a metric (quadratic) have none (ev_every 0).
 * - step time: median over the group's runs of their median (and p90) step
 *   time; overhead vs sgd = this / the same over all sgd runs of the workload - 1.
 *   peak memory, device memory (driver) and state bytes: the largest value over
 *   the group's runs.
 * - confirmation (runs with stage 'confirm'): the same spreads as at the best
 *   lr, over the fresh seeds run at it after the sweep. They are not points of
 *   the sweep: picking the lr whose seeds happened to do best flatters the
 *   sweep's median at the best lr; fresh seeds do not share that luck. A
 *   confirmation run whose seed is also a seed of the group's sweep (another
 *   benchmark in the dataset swept it) is not fresh and is left out.
 * - performance profile (Dolan & More): r(w, o) = t(w, o) / min_o t(w, o) with
 *   t the time to target (to the held-out target with profile_heldout); rho_o(tau) = fraction of workloads with r <= tau, for
 *   tau in [1, tau_max]; area = integral of rho_o over [1, tau_max] divided by
 *   (tau_max - 1), in [0, 1]. Workloads no optimizer reached are left out.
 *   An optimizer not run on a workload counts there as not reaching it (a
 *   failure in Dolan-More's sense); profile_ran says on how many of the
 *   profile's workloads each one ran, so a low area from absence shows.
 */
#ifndef OB_RESULTS_STATS_H
#define OB_RESULTS_STATS_H

#include <stdint.h>

#include "core/ob.h"
#include "results/dataset.h"

#define OB_STEP_SPREAD_UNSTEADY 0.25
/* Steps shorter than this (ms) are timed mostly as the harness's overhead
 * (the report's cautions; compare's default time floor) */
#define OB_STEP_TINY_MS 0.05
/* Above this tau_max the performance profile's taus are evenly spaced in
 * log(tau) and its figures draw tau on a log2 axis, as Dolan and More do */
#define OB_TAU_LOG_ABOVE 16.0

/* ---- numeric helpers (NaN values are ignored; +inf sorts last) ------------- */
/* Quantile by linear interpolation between order statistics (R type 7). It
 * allocates nothing, so it cannot fail (nor can the median). */
double ob_stat_quantile(const double *x, int n, double q);
/* Distinct resamples (multisets) of n values drawn from n with replacement: C(2n - 1, n). */
int ob_stat_resample_sets(int n);
double ob_stat_median(const double *x, int n);
double ob_stat_mean(const double *x, int n);
double ob_stat_sd(const double *x, int n);            /* sample sd (n - 1) */
double ob_stat_min(const double *x, int n);
double ob_stat_max(const double *x, int n);
/* The distribution-free interval of the median of n values (NaN left out):
 * [x_(k), x_(n+1-k)] of the sorted values, which holds the median of any
 * continuous distribution with probability 1 - 2 P(Binomial(n, 1/2) <= k - 1),
 * with k the largest (k <= n / 2) whose probability is at least level. Where
 * even k = 1 falls short (level 0.95: n <= 5) it is [min, max]; the gate of
 * compare relies on that ("worse on every seed"). n = 1 gives [x, x], n = 0
 * NaN. *cover (may be NULL) receives the probability (0 for n < 2). Infinite
 * values sort as numbers. */
ob_status ob_stat_median_ci(const double *x, int n, double level, double *lo, double *hi, double *cover,
                            ob_err *e);
/* Value at `at` of points (lr[i], v[i]) (lr ascending) by the rule above;
 * at one of the lrs its own value, +inf included (half the seeds or more
 * diverged there: the loss there is known), NaN between that and another. */
double ob_stat_interp_loglr(const double *lr, const double *v, int n, double at);
/* Sensitivity width in decades around index best (see above): the lrs
 * whose median is <= thr are inside. */
double ob_stat_lr_width(const double *lr, const double *med, int n, int best, double thr,
                        int *open_lo, int *open_hi);
/* The trailing loss of each of the n points (see time to target above). */
void ob_stat_trailing_mean(const double *loss, int64_t n, double *out);
/* Index of the first point whose trailing loss is <= target into *at, -1 when never. */
ob_status ob_stat_first_reach(const double *loss, int64_t n, double target, int64_t *at, ob_err *e);
/* The step by which a strict majority of the m runs (curve k: steps[k], loss[k],
 * n[k] points) first had a trailing loss <= target: each run's first such
 * recorded step (never: +inf; a curve ends where its run stopped, so a diverged
 * run counts by its points until then), then the ceil((m + 1) / 2)-th smallest
 * of them (a step value, not an index); -1 when that is +inf. Into *at. When
 * lo and hi are given (both or neither), the distribution-free interval of
 * the seeds' median first reach (ob_stat_median_ci at level 0.95: [min, max]
 * of 8 seeds or fewer, which holds the median with probability 1 - 2^(1-n)
 * only, below 0.95, with 5 or fewer; hi = +inf where a seed in it never got
 * there) when *at >= 0, NaN both otherwise: the seed-to-seed noise of the
 * steps to target. */
ob_status ob_stat_majority_first_reach(int m, const int64_t *const *steps, const double *const *loss,
                                       const int64_t *n, double target, int64_t *at, double *lo, double *hi,
                                       ob_err *e);
/* The best lr of runs (lr[i], final[i]) in any order: the lr with the lowest
 * median final loss over its runs (final +inf for a diverged run and for a
 * finished one without a finite final loss, NaN for one left out), ties to the
 * smaller lr; NaN when no lr has a finite median. The rule of ob_group.best,
 * for callers that hold no dataset (run's confirmation stage). It allocates
 * nothing: NaN never means out of memory. */
double ob_stat_best_lr(const double *lr, const double *final, int n);
/* Performance profile: t is (n_w, n_o), +inf when not reached. rho is
 * (n_tau, n_o) (NULL: the areas alone), area is (n_o,); *n_used gets the number of workloads used,
 * and w_used (n_w,) when not NULL 1 for each of them. */
void ob_stat_profile(const double *t, int n_w, int n_o, const double *taus, int n_tau,
                     double tau_max, double *rho, double *area, int *n_used, int *w_used);

/* Two optimizers compared seed by seed: runs a[i] and b[j] with the same
 * seed share initialization and data order, so their difference is free of
 * the seed's own luck. final loss +inf for a diverged run. */
typedef struct ob_paired {
    int n;                      /* seeds both have (finished) */
    int a_lower, b_lower, ties; /* strictly lower final loss on a seed */
    double median_rel;          /* median over seeds of (a - b) / |b|: +inf where a alone diverged, -1
                                 * where b alone did, 0 where both did (NaN: no seeds) */
    double p_sign;              /* two-sided exact sign test over the untied seeds (1 when none) */
} ob_paired;
/* Pair the runs (dataset run indices) of a and b by seed. */
ob_status ob_stat_paired(const ob_dataset *d, const int *a, int na, const int *b, int nb, ob_paired *out,
                         ob_err *e);
/* Two-sided exact sign test: k successes of n (p = 1/2). */
double ob_stat_sign_test(int k, int n);

/* ---- the statistics of a dataset ------------------------------------------ */

typedef struct ob_spread {
    int n;                      /* values that entered (finite or +inf) */
    double median, min, max, ci_lo, ci_hi;
    double ci_cover;            /* the probability that [ci_lo, ci_hi] holds the median (ob_stat_median_ci) */
} ob_spread;

typedef struct ob_lr_point {
    double lr;
    int n_runs, n_finished, n_diverged;
    int n_nonfinite;            /* finished seeds that did not diverge and ended without a finite final
                                 * loss (+inf in med/min/max, outside min_finite/max_finite) */
    double med, min, max;       /* final loss over finished seeds (diverged = +inf) */
    double min_finite, max_finite;
    double eval_med, metric_med;
    double tt_steps, tt_time_s; /* steps / seconds by which a majority of the seeds reached the target */
    double tt_steps_lo, tt_steps_hi; /* the interval of tt_steps over the seeds (ob_stat_majority_first_reach);
                                 * NaN when no majority got there */
    double tt_steps_cover;      /* the probability that it holds their median (ob_stat_median_ci) */
    double best_share;          /* the share of resamples of the group's seeds in which this lr has the
                                 * lowest median final loss (ob_group.best_lr_share); NaN: not computed */
} ob_lr_point;

/* Why a group's lr range has no width (width_decades NaN) although it has a
 * best lr: the range around it is [best, best] within the grid, and open
 * beyond it, so ">= 0" would say nothing. */
typedef enum ob_width_unmeasured {
    OB_WIDTH_MEASURED = 0,
    OB_WIDTH_EDGE_DIVERGED,     /* the best lr is the smallest or largest of the grid and a seed
                                 * diverged (or ended without a finite loss) at the lr next to it */
    OB_WIDTH_ONE_LR,            /* the grid has one lr */
    OB_WIDTH_EDGE_NO_TOL,       /* the best lr is at the grid's edge and the tolerance is 0 (tol 0, or a
                                 * best median of 0): the loss at the lr next to it is above the best's */
    OB_WIDTH_NO_PROGRESS,       /* a tolerance of the progress (tol_of_progress), and the best median is
                                 * not below the loss before training (or that is unknown) */
    OB_WIDTH_UNFINISHED,        /* one lr has finished runs, and the grid's other lrs none yet (a
                                 * benchmark still running or stopped) */
} ob_width_unmeasured;
/* Short text of u: "edge_next_diverged", "one_lr", "edge_zero_tolerance", "no_progress",
 * "lrs_unfinished"; "" when measured. */
const char *ob_width_unmeasured_name(int u);

/* One seed's first reach of a target at one lr of a group, what the
 * profile's bootstrap (ob_stats.n_boot) resamples. */
typedef struct ob_reach {
    int64_t seed;               /* the run's seed */
    int lr;                     /* index into the group's lrs */
    int64_t first;              /* the step at which it first got there; INT64_MAX: never */
} ob_reach;

/* A time to a held-out target (ob_group.ev): as the tt_ fields of ob_group
 * are for the training loss (steps, time, lr, the seeds' and the timing's
 * intervals, censored), from the runs' held-out evaluations. */
typedef struct ob_ttt {
    double steps, time_s, lr;   /* +inf when censored (lr NaN); all NaN where not computed */
    double steps_lo, steps_hi;
    double step_ms, step_ms_lo, step_ms_hi;
    int censored;
    double steps_cover, step_ms_cover; /* the probabilities that [steps_lo, steps_hi] and [step_ms_lo,
                                 * step_ms_hi] hold their medians (ob_stat_median_ci): 0.95 or more
                                 * from 6 values, 1 - 2^(1-n) for [min, max] of n <= 5; NaN without */
    ob_reach *reach;            /* (n_reach) every finished seed's first reach at every lr, in the group's
                                 * run order; NULL where not computed (ob_group_tt: g->tt_reach, the
                                 * group's own; g->ev's are its own, freed by ob_stats_free) */
    int n_reach;
} ob_ttt;

typedef struct ob_group {
    int wl, opt;                /* dataset label indices */
    int n_runs, n_finished, n_diverged, n_failed, n_unfinished;
    int n_above_start;          /* finished, not diverged, and a final loss above the loss at its first step
                                 * (blown up below the divergence threshold: it did not train) */
    int n_lr;
    int n_lr_unfinished; /* lrs of its grid without a finished run and with one still to finish */
    ob_lr_point *lrs;           /* (n_lr,) ascending lr */
    int best;                   /* index into lrs; -1 when no lr has a finite median */
    double best_lr;
    double best_lr_share;       /* how settled best_lr is: over OB_PROFILE_BOOT resamples of the group's
                                 * seeds (as many as it has, drawn with replacement, a seed's runs at
                                 * every lr together, as they share initialization and data order), the
                                 * share in which best_lr keeps the lowest median final loss (ties: the
                                 * smaller lr), each lr's in lrs[].best_share; NaN without a best lr */
    ob_spread final, eval_loss, eval_metric;
    double width_decades;       /* NaN: not measured (width_unmeasured says why) */
    int width_open_lo, width_open_hi;
    int width_unmeasured;       /* an ob_width_unmeasured: why the range has no width */
    double loss_half, loss_double; /* median final loss at 0.5x and 2x the best lr */
    double seed_cv;
    double div_rate, first_div_lr; /* first_div_lr NaN when none diverged */
    double tt_steps, tt_time_s, tt_lr; /* +inf when censored; tt_lr NaN then */
    double tt_step_ms;          /* the step time of tt_time_s: median over the group's finished runs at
                                 * every lr of each run's mean step time (median step time where
                                 * tt_by_median); NaN when no run was timed */
    double tt_step_ms_lo, tt_step_ms_hi; /* the distribution-free interval of that median
                                 * (ob_stat_median_ci: 95% or more from 6 runs; [min, max] of 8 runs or
                                 * fewer, of coverage 1 - 2^(1-n) below 6): the timing noise that
                                 * ob_stats_tt_rank ties within; NaN when no run was timed */
    double tt_step_ms_cover;    /* the probability that interval holds the median; NaN when untimed */
    double tt_steps_lo, tt_steps_hi; /* at tt_lr: the distribution-free interval of the seeds' median
                                 * first reach (as above: [min, max] of 8 seeds or fewer; hi = +inf
                                 * when a seed in it never got there): the seed-to-seed noise of
                                 * tt_steps; NaN when censored */
    double tt_steps_cover;      /* the probability that interval holds the median; NaN when censored */
    int tt_censored;
    ob_reach *tt_reach;         /* (tt_n_reach) each finished seed's first reach at each lr (ob_ttt.reach) */
    int tt_n_reach;
    double tt_miss;             /* censored: how far above the target its upper-median final loss at
                                 * the best lr ended, relative to |target| (0.006: 0.6% above); NaN
                                 * when it got there, or has no such loss */
    ob_ttt ev;                  /* time to the held-out target (ob_stats.ev_target): the first
                                 * evaluation whose held-out loss is <= it, per seed; the lr and step
                                 * time rules as tt_'s. NaN (censored) where the workload has none */
    /* the times below: over the group's runs on a quiet machine (runs.other_cpu under
     * OB_BUSY_SHARE) where it has some, else over all its timed runs (ob_group_busy) */
    double step_ms_median, step_ms_p90, overhead_vs_sgd, items_per_sec;
    double step_ms_mean;        /* median over runs of each run's mean step time: above the median
                                 * step time where some steps are much slower (a refresh every k
                                 * steps); NaN unknown (a database of schema < 4) */
    double opt_ms_median, opt_ms_mean; /* the optimizer's part of a step (medians over runs of each
                                 * run's median and mean); NaN unknown */
    double step_ms_spread;      /* largest / smallest run median step time - 1 (NaN < 2 runs):
                                 * more than OB_STEP_SPREAD_UNSTEADY means a busy machine */
    int n_timed, n_busy;        /* runs with a median step time, and of them those that met a busy
                                 * machine (runs.other_cpu at OB_BUSY_SHARE or more), left out of the
                                 * times unless they are all of them (ob_group_busy) */
    int64_t peak_mem_bytes, state_bytes; /* -1 when unknown */
    int64_t device_mem_bytes;   /* the largest of the runs' driver-reported device memory; -1 unknown */
    double loss_floor;          /* NaN when unknown */
    int *best_runs, n_best_runs; /* dataset run indices at the best lr */
    /* confirmation runs (run --confirm-seeds): fresh seeds at the best lr,
     * run after the sweep; every statistic above is of the sweep alone */
    int n_confirm;              /* finished confirmation runs at confirm_lr */
    int conf_n_diverged;        /* of them, diverged */
    int conf_seed_overlap;      /* confirmation runs left out: their seed is a seed of the group's sweep
                                 * (another benchmark swept it), so it helped pick the lr */
    double confirm_lr;          /* best_lr when any ran there, else the lr of the newest ones; NaN: none */
    double conf_max_finite;     /* the worst final loss of those that did not diverge (NaN: none) */
    ob_spread conf_final, conf_eval_loss, conf_eval_metric;
    int *conf_runs, n_conf_runs; /* dataset run indices of the fresh, finished runs at confirm_lr */
} ob_group;

typedef struct ob_stats_opts {
    double tol;                 /* lr sensitivity tolerance, default 0.1 */
    int tol_of_progress;        /* 0 (default): tol x |best median|; 1: tol x (start_loss - best median),
                                 * a fraction of the progress training made */
    int n_targets;              /* explicit targets per workload label */
    const char **target_wl;
    const double *target_val;
    int n_ev_targets;           /* explicit held-out targets per workload label (--eval-target) */
    const char **ev_target_wl;
    const double *ev_target_val;
    double target_factor;       /* default 1.1 */
    double tau_max;             /* default 4 */
    int profile_by_steps;       /* 0: wall time to target (default), 1: steps */
    int profile_heldout;        /* 1: the profile on the held-out time to target (ob_group.ev) */
    int heldout_metric;         /* 1: the held-out target is on the held-out metric (higher is better:
                                 * accuracy), not the held-out loss */
} ob_stats_opts;

void ob_stats_opts_default(ob_stats_opts *o);

typedef struct ob_stats {
    ob_group *g;
    int n_g;                    /* groups ordered by workload, then optimizer label */
    int n_wl, n_opt;
    double *target;             /* (n_wl,) target loss per workload; NaN when none */
    int *target_given;          /* (n_wl,) 1 when set by the user */
    int *target_halfway;        /* (n_wl,) 1 when the default target is halfway from start_loss to
                                 * the best upper median final loss (1.1 x that asked for less) */
    double *start_loss;         /* (n_wl,) median over the sweep's finished runs of the loss at
                                 * their first recorded step (before any update); NaN when none */
    int *target_at_start;       /* (n_wl,) 1 when start_loss <= target: the target is met before
                                 * training, so time to target ranks nothing there and is not
                                 * computed (every group censored, the workload out of the profile) */
    int *tt_by_median;          /* (n_wl,) 1 when time to target there is from the runs' median step
                                 * times: some timed run of the workload has no mean (schema < 4) */
    /* time to a held-out target (ob_group.ev), on the workloads whose sweep
     * runs were evaluated during training (eval_every > 0); read from the
     * evals table, so only with a curve reader (ob_stats_compute_db/_read) */
    int64_t *ev_every;          /* (n_wl,) the evaluation interval, the smallest over the runs of the gap
                                 * between their first two evaluations (the resolution of ev's steps);
                                 * 0: no held-out time to target there */
    int heldout_metric;         /* 1: ev_* are on the held-out metric (ob_stats_opts.heldout_metric) */
    double *ev_start;           /* (n_wl,) median held-out loss (metric) at step 0; NaN when not evaluated there */
    double *ev_target;          /* (n_wl,) held-out target loss (metric); NaN when none */
    int *ev_target_given, *ev_target_halfway, *ev_target_at_start; /* as target_given, ... */
    int *ev_no_metric;          /* (n_wl,) 1: evaluated during training, but heldout_metric and the
                                 * workload has no metric (ev_every is 0 there) */
    /* performance profile */
    int n_tau;
    double *taus;               /* (n_tau,) */
    double *rho;                /* (n_tau, n_opt) */
    double *area;               /* (n_opt,) */
    int profile_workloads;      /* workloads that entered the profile */
    int *in_profile;            /* (n_wl,) 1 for each of them */
    int *profile_ran;           /* (n_opt,) of those workloads, how many the optimizer has sweep runs on;
                                 * on the others it counts as not reaching the target */
    double tau_max;
    int tau_log;                /* 1: taus evenly spaced in log(tau) (tau_max above OB_TAU_LOG_ABOVE), for a
                                 * log2 axis; 0: evenly spaced in tau */
    int profile_by_steps;
    int profile_heldout;        /* the profile is on the held-out time to target (ob_stats_opts) */
    double tol;                 /* the lr range's tolerance the statistics used (ob_stats_opts.tol) */
    int tol_of_progress;        /* ... and what it is a fraction of (ob_stats_opts.tol_of_progress) */
    /* the profile of the tuned optimizers: where sweeps made several
     * configurations of an optimizer, each optimizer (name) on each workload
     * at its fastest configuration there, the time the profile above takes
     * (AlgoPerf's external tuning: a submission's time on a workload is its
     * fastest trial's); n_tuned 0 when no optimizer has several */
    int n_tuned;                /* optimizer names, in the order of their first label */
    int *tuned_first;           /* (n_tuned,) the first label of each (its name: d->opt_names[...]) */
    int *tuned_configs;         /* (n_tuned,) how many labels (configurations) each has */
    int *tuned_pick;            /* (n_wl x n_tuned) the group of the fastest configuration; -1 where
                                 * none reached the target (or none ran) */
    double *tuned_rho;          /* (n_tau, n_tuned) */
    double *tuned_area;         /* (n_tuned,) */
    int *tuned_ran;             /* (n_tuned,) of the profile's workloads, how many it has sweep runs on */
    int *tuned_studies;         /* (n_tuned,) the studies (searches of other seeds, config studies) its
                                 * configurations come from, 0 or 1 for one: with 2 or more, its time on a
                                 * workload is the median over the studies of each one's fastest, and
                                 * tuned_pick that study's pick */
    int *tuned_pick_study;      /* (n_wl x n_tuned) the study tuned_pick is from, its number within its
                                 * benchmark; -1 with one study or where none reached the target */
    int64_t *tuned_pick_bench;  /* (n_wl x n_tuned) the benchmark of that study; 0 where it is -1 */
    /* the seeds' noise in the profiles' areas: a bootstrap of the seeds.
     * Each of n_boot resamples draws, on each workload of the profile, as
     * many seeds as a group has, with replacement, the same draws for every
     * group with the same seeds (their runs share initialization and data
     * order, so the comparison is paired), and recomputes each group's time
     * to target from the drawn seeds' first reaches (per lr the upper
     * median, then the fastest lr), its step time held, then the profile on
     * the same workloads. An optimizer's area over the resamples: its 2.5%
     * and 97.5% quantiles and the share of resamples in which it had the
     * largest area (tied ones share it; one in which no one got to any
     * target has none). The target, the lr grid and the
     * step times stay as they are: this is the seeds' noise alone. NULL
     * (n_boot 0) where the profile has no workload. */
    int n_boot;
    int boot_seeds;             /* the most seeds of a group (with few, the resamples are few sets of seeds) */
    double *area_lo, *area_hi, *area_first;                   /* (n_opt,) */
    double *tuned_area_lo, *tuned_area_hi, *tuned_area_first; /* (n_tuned,); NULL where n_tuned is 0 */
    /* the curves' bands: at each tau, the 2.5% and 97.5% quantiles of each
     * curve over the same resamples (pointwise); NULL without the bootstrap
     * or for a profile of more than 2^24 counts, labels x (n_tau + 1) x
     * (workloads + 1): some 5,000 labels on 10 workloads */
    double *band_lo, *band_hi;              /* (n_tau, n_opt) */
    double *tuned_band_lo, *tuned_band_hi;  /* (n_tau, n_tuned) */
} ob_stats;

/* Resamples of the profile's bootstrap (ob_stats.n_boot) and the Philox key of its draws */
#define OB_PROFILE_BOOT 2000
#define OB_PROFILE_BOOT_TEXT "2000" /* the same, for texts */
#define OB_PROFILE_BOOT_KEY 0x70726f66696c65ULL
/* ... and of the resamples of a group's seeds for its best lr (ob_group.best_lr_share) */
#define OB_BEST_LR_BOOT_KEY 0x626573746c72ULL

/* The workloads whose time to target is from median step times
 * (tt_by_median; not those whose target the loss met at the start), only
 * those that entered the performance profile when in_profile: their number,
 * and their labels in names (cap > 0 bytes; the first three, then ", ..."). */
int ob_stats_median_timed(const ob_dataset *d, const ob_stats *s, int in_profile, char *names, size_t cap);

/* The rank of optimizer o by its profile area (1 = largest): competition
 * ranking, tied areas (to 1e-9) share a rank (1, 2, 2, 4); no area ranks last. */
int ob_stats_profile_rank(const ob_stats *s, int o);
/* The same for tuned optimizer i (0 <= i < n_tuned) by its tuned_area. */
int ob_stats_tuned_rank(const ob_stats *s, int i);

/* The best of k trials (Dodge et al. 2019, "Show your work"; Sivaprasad
 * et al. 2020 on optimizers and their tuning budget): of n values sorted
 * ascending (a trial's loss, lower is better; +inf for one that diverged),
 * the q-quantile of the smallest of k drawn at random with replacement:
 * x[i - 1] for the smallest i with 1 - ((n - i) / n)^k >= q (n >= 1,
 * k >= 1). Quantiles, not the expectation, so that a diverged trial (+inf)
 * leaves the curve finite once the chance of drawing only such is below
 * 1 - q. */
double ob_stat_best_of_k(const double *sorted, int n, int k, double q);
/* The trials of tuned optimizer i on workload w: the final loss at the best
 * lr (median over seeds; +inf where no lr has a finite median) of each of
 * its configurations with a finished run there, sorted ascending, into out
 * (room for s->n_opt); returns how many. */
int ob_stats_trial_losses(const ob_dataset *d, const ob_stats *s, int w, int i, double *out);
/* The same trials on the held-out loss (metric 0) or metric (1): each
 * configuration's best over its lrs of the median final held-out value
 * (selected on it, as a tuning on held-out data would; a diverged seed
 * counts the worst there is), the metric negated so that lower is better
 * for both, sorted ascending into out; returns how many, as
 * ob_stats_trial_losses, or 0 when some configuration has no held-out value
 * at any lr (not evaluated). */
int ob_stats_trial_heldout(const ob_dataset *d, const ob_stats *s, int w, int i, int metric, double *out);

/* The rank of group k by time to target on its workload (1 = fastest), 0
 * when it did not reach the target (censored) or has no target. Rank = 1 + the
 * number of groups of the workload that reached it clearly sooner, so
 * optimizers within the noise share a rank (1, 1, 2 or 1, 1, 3 as the noise
 * falls). By steps (profile_by_steps): by the steps' intervals as below. By time:
 * j is clearly faster when its interval (ob_group_tt_interval) lies wholly
 * below k's (by more than a part in 1e12): by steps, the seeds' noise
 * [tt_steps_lo, tt_steps_hi]; by time, that and the machine's timing noise,
 * [tt_steps_lo x tt_step_ms_lo, tt_steps_hi x tt_step_ms_hi]. With 3 seeds
 * and equal step times, one is ahead where each of its seeds got there before
 * every seed of the other (two equal optimizers get different ranks 1 time in 10;
 * a given one ahead 1 time in 20).
 * Groups that reached the target but have no step time rank after every
 * timed one, by their intervals of steps. */
int ob_stats_tt_rank(const ob_stats *s, int k);
/* Group g's time to target as an interval: by_steps, [tt_steps_lo,
 * tt_steps_hi] in steps; otherwise in seconds, [tt_steps_lo x tt_step_ms_lo,
 * tt_steps_hi x tt_step_ms_hi] / 1000 (hi may be +inf). 0 (and *lo, *hi
 * untouched) when it has none: censored, or untimed where by time. */
int ob_group_tt_interval(const ob_group *g, int by_steps, double *lo, double *hi);
/* g's time to target of the training loss (its tt_ fields) as an ob_ttt,
 * and an ob_ttt as an interval, as ob_group_tt_interval. */
ob_ttt ob_group_tt(const ob_group *g);
/* g's time to the held-out target (g->ev) where held_out, else ob_group_tt(g). */
ob_ttt ob_group_ttt(const ob_group *g, int held_out);
int ob_ttt_interval(const ob_ttt *t, int by_steps, double *lo, double *hi);
/* The rank of group k by its held-out time to target, as ob_stats_tt_rank. */
int ob_stats_ev_rank(const ob_stats *s, int k);

/* Compute every statistic from d's loaded curves (ob_dataset_load_curves:
 * time to target reads every finished sweep run's curve; start_loss each
 * run's first_loss). On failure s holds nothing (ob_stats_free on it is
 * harmless). */
ob_status ob_stats_compute(const ob_dataset *d, const ob_stats_opts *o, ob_stats *s, ob_err *e);
/* Each of n_t explicit targets (flag: "--target", "--eval-target"; wl[i]=val[i])
 * names a workload of d, by label or name; else bad input naming the
 * nearest and the database's workloads. */
ob_status ob_stats_check_targets(const ob_dataset *d, int n_t, const char *const *wl, const double *val,
                                 const char *flag, ob_err *e);
/* The same, with time to target reading each curve it needs through cr (the
 * run's own where loaded, else from the database, one run at a time); NULL:
 * d's loaded curves, as ob_stats_compute. d needs its first losses
 * (ob_dataset_load_curve_info) for start_loss and the default target. */
ob_status ob_stats_compute_read(const ob_dataset *d, const ob_stats_opts *o, ob_curve_reader *cr, ob_stats *s,
                                ob_err *e);
/* The statistics of d (runs loaded, curves not) from db without holding every
 * curve: ob_dataset_load_curve_info, ob_stats_compute_read reading each
 * finished sweep run's curve once from db, then, with best_curves, the curves
 * of each group's runs at its best lr (best_runs: what the report's loss
 * figures and curves_best.csv draw) into d, and no other run's. The same
 * statistics as ob_dataset_load_curves and ob_stats_compute, with memory for
 * the curves of one lr in n_lr (and one run's more) instead of all. An error
 * reading db (not one of the statistics: an unknown --target workload) is
 * prefixed "database 'DB_NAME': " where db_name is given, out of memory aside. */
ob_status ob_stats_compute_db(struct sqlite3 *db, const char *db_name, ob_dataset *d, const ob_stats_opts *o,
                              int best_curves, ob_stats *s, ob_err *e);
void ob_stats_free(ob_stats *s);
/* The group of (wl, opt), NULL when that pair has no runs. */
const ob_group *ob_stats_group(const ob_stats *s, int wl, int opt);
/* Each optimizer (by name) of workload w at its best configuration: where
 * the matrix swept an optimizer's hyperparameters (--sweep), each
 * configuration is a group of its own; best is the one with the lowest
 * median final loss at its best lr (no finite median: +inf; ties: the first
 * in group order), worst the highest (ties: the last, so that best and
 * worst differ where there are two configurations or more). */
typedef struct ob_best_config {
    int best, worst; /* group indices */
    int n_configs;   /* the optimizer's groups on w */
} ob_best_config;
/* The optimizers of w into out (at most cap), ordered by their best
 * configuration's median final loss (ties: group order); returns how many.
 * *swept: 1 when one of them has two configurations or more. */
int ob_stats_best_configs(const ob_dataset *d, const ob_stats *s, int w, ob_best_config *out, int cap, int *swept);
/* Why a group has no best lr (best < 0): "no run finished", "every run
 * diverged", or "no lr with a finite median" (half its seeds or more diverged,
 * or ended without a finite loss, at every lr). */
const char *ob_group_no_best(const ob_group *g);

/* 1 when every one of g's timed runs met a busy machine: its step times
 * are that machine's as much as the optimizer's. */
int ob_group_busy(const ob_group *g);

#endif
