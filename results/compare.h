/* results/compare.h - comparison of a candidate results database against a
 * baseline, for a nightly regression gate.
 *
 * Cells are matched by workload, workload parameters, optimizer,
 * hyperparameters (JSON text), lr and seed (the latest finished run of each
 * cell on each side). Per workload x optimizer configuration:
 * - final loss, at the baseline's best lr, paired over seeds: the relative
 *   change r_s = (candidate - baseline) / |baseline| per seed (a newly diverged
 *   seed is +inf). The effect is the median of r_s with its 95% distribution-
 *   free interval (ob_stat_median_ci); worse when the interval lies above 0 and the effect
 *   exceeds loss_tol (better: the mirror image); otherwise within noise. With
 *   up to 8 seeds the interval is [min, max] and lies above 0 only when every seed got worse,
 *   so this means "worse on every seed, and by more than loss_tol at the
 *   median"; below 6 seeds that range holds the median with less than 95%
 *   (ci_cover), which the texts say. The best lr is the baseline's among the
 *   matched cells. More seeds newly diverged there than newly converged is a
 *   regression whatever the median.
 * - held-out metric (higher is better) the same way with absolute differences
 *   and metric_tol; when a workload has no metric, the held-out loss is judged
 *   like the final loss. A seed diverged on one side only counts as the worst
 *   value there (metric -inf, held-out loss +inf), as in the report; diverged
 *   on both sides, as no change.
 * - step time: per matched cell, the relative change of the run's median (p50)
 *   step time, paired like the final loss (cells below time_floor_ms on both
 *   sides left out): worse when the median change
 *   exceeds time_tol and its 95% interval lies above 0 (with up to 8
 *   cells: every cell slower), better the mirror image. Each run's mean step
 *   time is judged the same way with its own tolerance time_mean_tol
 *   (time_mean; its verdict counts like the median's): steps slow every k-th
 *   time move the mean and not the median. The mean is judged over the
 *   timed cells that are steady or unsteady (below) with a median that held
 *   within OB_TIME_MEDIAN_HELD (more than a tenth of the steps slow makes a
 *   cell unsteady and leaves its median), when they are at least half of the
 *   timed cells; a rise of every group's mean while the medians held is set
 *   aside as inconclusive (time_mean_shift): a busy machine's short stalls
 *   look like that. A cell whose timing
 *   was unsteady on one side only (p90/p50 - 1 above OB_TIME_UNSTEADY and
 *   above twice the other side's: the machine was busy) is left out; when
 *   more than half of a group's cells are, its step time is not judged
 *   (time_not_judged) and the raw median change is only shown. So it is
 *   when the group's runs of one side ran at different speeds (time_apart:
 *   over the cells finished on both sides, the slowest run's median step
 *   time more than OB_TIME_UNSTEADY above the fastest's, and that spread
 *   more than twice the other side's): a step's work does not depend on the
 *   lr or the seed, so the machine changed speed between that side's runs
 *   (a slow and a fast mode that took turns), and its mean is not judged
 *   either. When every
 *   judged group moved the same way beyond time_tol the comparison notes a
 *   machine-wide shift (time_shift): another or a busier machine, or a change
 *   shared by all of them; the verdicts stand. A matched cell whose two runs
 *   ran on different devices (runs.backend or runs.device differ; a text
 *   unknown on one side is taken as the same) is left out of step time
 *   unless time_across_devices (counted in n_device_differs, the first such
 *   pair's devices named in device_base and device_cand); a group left with
 *   no timed cell for that reason has no step-time verdict (time_other_device).
 * - peak memory and optimizer state bytes: the largest value over matched
 *   cells, exactly (any increase is worse). Peak memory leaves out the cells
 *   whose two runs ran on different backends (CPU and GPU figures do not
 *   compare); optimizer state bytes do not depend on the backend.
 * - a cell that finished in the baseline and failed in the candidate is worse;
 *   so is a seed at the judged lr that diverged (or ended with a non-finite
 *   loss) in the candidate but not in the baseline, whatever the median says.
 * A final loss that is not finite counts as +inf. When the baseline has no
 * finite median at any lr, the lr judged is the candidate's best (else the
 * smallest), so a candidate that now converges shows as better.
 * Cells match by workload, workload parameters, optimizer, hyperparameters,
 * lr, seed and planned steps. A cell without an exact partner is still paired
 * with the one cell of the other side that has the same workload, workload
 * parameters, optimizer, lr, seed and steps but another hyperparameter text (a
 * hyperparameter was added or a default changed), counted in n_relaxed, its
 * differences named in relaxed_note. Cells present on one side only are listed; they fail
 * the comparison only with strict.
 */
#ifndef OB_RESULTS_COMPARE_H
#define OB_RESULTS_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "core/cpu_share.h"
#include "core/ob.h"
#include "results/dataset.h"

typedef struct ob_compare_opts {
    double loss_tol;     /* minimum relative effect on final loss (default 0.05) */
    double loss_abs_tol; /* ... and minimum absolute effect, the median of the seeds' differences, on
                          * final and held-out loss (default 0: none); a loss that converges to
                          * float rounding (1e-14) moves by tens of percent with the BLAS */
    double metric_tol;   /* minimum absolute effect on the held-out metric (default 0.01) */
    double time_tol;     /* relative tolerance on step time (default 0.10); < 0: not judged, the
                          * mean neither */
    double time_mean_tol; /* relative tolerance on the mean step time (default 0.20: the mean
                          * carries a busy machine's short stalls, which the median leaves
                          * out); < 0: the mean is not judged */
    double time_floor_ms; /* cells whose median step time is below this on both sides are not
                          * timed (default 0.05 ms: such steps time the harness, not the step) */
    int check_memory;    /* judge memory exactly (default 1) */
    int strict;          /* cells on one side only fail the comparison */
    int time_across_devices; /* judge the step time of cells run on different devices too */
    int64_t base_bench, cand_bench; /* as ob_dataset_load: 0 all, -1 latest, > 0 that one */
    int same_file;       /* the two databases are one file (the caller's stat): with the same runs
                          * selected, no verdict, whether or not it has a database id */
} ob_compare_opts;

void ob_compare_opts_default(ob_compare_opts *o);

typedef enum ob_verdict { OB_SAME = 0, OB_BETTER = 1, OB_WORSE = 2, OB_NODATA = 3 } ob_verdict;
const char *ob_verdict_name(ob_verdict v);

typedef struct ob_cmp_quantity {
    ob_verdict v;
    int n;                    /* pairs / cells that entered */
    double base, cand;        /* medians (loss, metric, step ms) or maxima (memory) */
    double effect, ci_lo, ci_hi; /* relative (loss, time) or absolute (metric) change: the
                              * median of the paired changes and its distribution-free
                              * interval (ob_stat_median_ci: the range of the changes up to 8
                              * pairs, which holds the median less often than 95% below 6) */
    double ci_cover;          /* the probability that [ci_lo, ci_hi] holds the median change
                               * (ob_stat_median_ci): at least 0.95 from 6 pairs; 1 - 2^(1-n)
                               * below (a range: 50% with 2 pairs); 0 with one pair */
    int n_to_finite, n_to_inf; /* pairs not finite in the baseline and finite in the candidate
                              * (converges now: a change of -inf, or +inf where higher_better),
                              * and the reverse (+inf, or -inf where higher_better) */
    int higher_better;        /* the held-out metric: a higher value is the better one, and a
                               * diverged seed's value is -inf */
    int unsure;               /* OB_SAME with a median change beyond the tolerance whose interval
                               * holds 0: shown as "inconclusive", not "same" (not a failure) */
    double abs_effect;        /* loss: the median of the seeds' differences, candidate - baseline */
    int under_abs;            /* OB_SAME because abs_effect is within loss_abs_tol, where the
                               * relative change alone would have judged it */
} ob_cmp_quantity;

typedef struct ob_cmp_group {
    char *workload, *optimizer; /* labels (of the baseline when present there) */
    double best_lr;           /* the lr where loss and metric are judged, on both sides: the
                               * baseline's best (see lr_from) */
    double base_best_unmatched; /* the baseline's best lr over all its cells of the group, where it
                               * is not best_lr: its cells there have no match in the candidate
                               * (another lr grid), so best_lr is the best of the matched lrs
                               * only; NaN otherwise */
    double cand_best_lr;      /* the candidate's own best lr over the same cells; NaN when it
                               * has no finite median at any lr */
    int lr_from;              /* where best_lr comes from: 0 the baseline's best, 1 the candidate's
                               * (the baseline has no finite median at any lr), 2 the smallest lr
                               * (neither side has one); 3 none: no matched cell of the baseline
                               * finished, so the group is not judged (best_lr NaN) */
    int metric_is_loss;       /* the held-out quantity judged is the loss (no metric) */
    ob_cmp_quantity loss, metric, time, peak_mem, state;
    ob_cmp_quantity time_mean; /* each cell's mean step time, over the cells timed on both sides
                               * that are steady or whose median held (its verdict is part of the
                               * step time's); no data where the database of either side predates
                               * it (schema < 4) or too few cells are left */
    int time_cells;           /* matched cells timed on both sides */
    int time_mean_cells;      /* the cells the mean step time was looked for in: every timed
                               * cell (time_mean.n of them had a mean on both sides and were
                               * judged) */
    int time_mean_machine;    /* the mean's verdict was set aside: every group's mean moved
                               * together while the medians did not (time_mean_shift) */
    int time_unsteady;        /* of them, left out: timing unsteady on one side */
    int time_not_judged;      /* more than half unsteady or busy, or time_apart: step time has no
                               * verdict */
    int time_busy;            /* of the timed cells, left out: a run of either side met a busy
                               * machine (ob_compare_busy) */
    int time_busy_most;       /* time_not_judged for that: more than half the timed cells were */
    double busy_base, busy_cand; /* the largest runs.other_cpu of each side's timed cells (NaN none) */
    int time_apart;           /* one side's runs ran at different speeds (see above) */
    double time_spread_base;  /* max / min - 1 of the runs' median step times over the cells */
    double time_spread_cand;  /* finished on both sides, per side (NaN: fewer than 2 such cells) */
    int time_fast;            /* matched cells left out: step time below time_floor_ms on both sides */
    int time_other_device;    /* matched cells left out: run on different devices (see
                               * ob_compare_opts.time_across_devices) */
    int mem_other_backend;    /* matched cells left out of peak memory: run on different backends */
    int mem_other_layout;     /* ... or split over another number of data-parallel replicas (the
                               * peak recorded is one replica's) */
    int mem_other_device;     /* ... or run on other devices of one backend (kernels and workspaces
                               * follow the device: the CPU's convolution path, its threads) */
    double time_floor_ms;     /* the floor in effect (for the reports) */
    int n_matched, n_new_failures; /* cells finished in the baseline, failed in the candidate */
    char new_failure[240];    /* the first of them: its lr, seed and stored error ("" none) */
    int n_new_unfinished;     /* ... pending, running or interrupted in the candidate: not a
                               * regression (a run stopped, a machine died) but no verdict either,
                               * unless something else got worse (ob_compare.incomplete) */
    int n_new_diverged;       /* at the judged lr: diverged (or a non-finite final loss) in the
                               * candidate, finite in the baseline; a regression when more than
                               * loss.n_to_finite, the seeds that went the other way */
    int n_new_diverged_below; /* the same at lrs below the judged one, where a larger lr trains: not
                               * the edge of stability moving; a regression when more than
                               * n_to_finite_below, the cells there that went the other way */
    int n_to_finite_below;
    char new_diverged_below[96]; /* the first of them: "lr 0.001, seed 2" */
    int n_new_diverged_other; /* the same at lrs above the judged one: a note, not a regression
                               * (the edge of stability can move with rounding alone) */
    int n_base_unfinished;    /* matched cells whose baseline run did not finish (failed, pending,
                               * running or interrupted): not judged; --strict fails them */
    ob_verdict overall;
    char detail[1024];        /* one line per regression, for JUnit and Markdown */
} ob_cmp_group;

typedef struct ob_cmp_cell {
    char *workload, *optimizer, *status;
    double lr;
    int64_t seed;
} ob_cmp_cell;

typedef struct ob_compare {
    ob_cmp_group *g;
    int n_g;
    ob_cmp_cell *only_base, *only_cand;
    int n_only_base, n_only_cand;
    int n_matched;
    int n_relaxed;            /* of them, matched with differing hyperparameter text */
    int n_confirm_base, n_confirm_cand; /* confirmation runs left out: the sweeps' cells are compared */
    int n_confirm_cand_unfinished;      /* of the candidate's, not finished (its confirmation stage was
                                         * stopped): the benchmark is incomplete (ob_compare.incomplete) */
    int n_bench_base, n_bench_cand;     /* benchmarks whose runs were used on each side */
    char only_note[640];      /* one-sided cells that would match but for their workload
                               * parameters or steps: "; e.g. ..."; empty when none */
    int n_superseded_base, n_superseded_cand; /* older rows set aside: their cell's latest finished run is used */
    int n_masked_base, n_masked_cand;         /* later failed or unfinished rows set aside for an earlier
                                               * finished run of their cell */
    char relaxed_note[512];   /* the first such pair's differences: "e.g. sgd on quadratic: momentum
                               * 0 in the baseline, 0.5 in the candidate"; empty when none */
    int n_worse, n_better;    /* groups */
    int n_base_unfinished;    /* matched cells not finished in the baseline (see the group's) */
    int regression;           /* the gate's answer: 1 when something got worse */
    int n_cand_unfinished;    /* matched cells finished in the baseline, not yet in the candidate */
    int incomplete;           /* no regression, but such cells: no verdict until the candidate is
                               * finished (exit status 2) */
    int n_time_not_judged;    /* groups whose step time was too unsteady to judge */
    int n_time_busy;          /* of them, those most of whose timed cells met a busy machine */
    int n_device_differs;     /* matched cells whose two runs ran on different devices (backend or
                               * device text): left out of step time unless time_across_devices */
    int n_backend_differs;    /* of them, on different backends: left out of peak memory */
    int n_layout_differs;     /* of them, over other data-parallel layouts (same backend): left out
                               * of peak memory */
    int n_memdev_differs;     /* of them, on other devices of one backend and layout: left out of
                               * peak memory too */
    int device_mixed;         /* they are not all the one pair of devices named below */
    char device_base[192], device_cand[192]; /* the first such pair's devices: "cpu: 2 threads, ..." */
    double time_shift;        /* median change of step time over the judged groups' effects,
                               * when they all moved the same way beyond time_tol (at least 2
                               * groups); NaN otherwise */
    double time_mean_shift;   /* the same for the mean step time, beyond time_mean_tol; when
                               * time_shift is NaN (the medians did not move together) and
                               * mean_shift_spread, the means' verdicts are set aside as
                               * inconclusive (except in groups whose median verdict says the
                               * same): a busy machine's stalls cannot be told from the code */
    int n_time_mean_machine;  /* groups whose mean verdict was set aside so */
    int mean_shift_spread;    /* the groups judged on their mean span two optimizers and two
                               * workloads and are most of the timed groups: a shift of every
                               * mean is set aside only then (else one optimizer's or one
                               * workload's slow steps would be) */
    ob_compare_opts opts;
} ob_compare;

/* Step-time spread (p90 / p50 - 1) above which a run's timing counts as unsteady. */
#define OB_TIME_UNSTEADY 0.25
/* An unsteady cell whose median step time changed by at most this much still
 * has its mean judged: steps slow now and then, not a slower machine. */
#define OB_TIME_MEDIAN_HELD 0.10

/* 1 when the timing of one side of a matched cell is unsteady and the other's
 * is not (see above); unknown p90s (NaN) count as steady. */
int ob_compare_time_unsteady(double base_p50, double base_p90, double cand_p50, double cand_p90);
/* 1 when a group's runs ran at different speeds on one side only: spread
 * (max / min - 1 of their median step times) above OB_TIME_UNSTEADY and
 * above twice the other side's; NaN spreads count as none. */
int ob_compare_time_apart(double spread_base, double spread_cand);
/* 1 when a run's step times are a busy machine's: other processes kept at
 * least OB_BUSY_SHARE of its CPUs busy while it ran (runs.other_cpu);
 * unknown (NaN) counts as quiet. */
int ob_compare_busy(double other_cpu);

/* A byte count for people: "512 B", "16.7 MiB", "1.25 GiB" (three significant
 * digits); with sign, a leading '+' on positive values. "-" for NaN. */
const char *ob_compare_bytes(double v, int sign, char *buf, size_t n);

/* Compare two open databases. OB_ERR_INPUT when a side has no runs or no cell
 * matches; the message then names what differs when the cells would match but
 * for their workload parameters. */
ob_status ob_compare_dbs(struct sqlite3 *base, struct sqlite3 *cand, const ob_compare_opts *o,
                         ob_compare *out, ob_err *e);
void ob_compare_free(ob_compare *c);

/* Reports: a plain-text table, Markdown for a CI job summary, JUnit XML with
 * one test case per workload x optimizer. Each row names the lr where final
 * loss and held-out were judged ("0.1", or "0.1 (cand best 0.01)" when the
 * candidate's own best lr is another). An infinite change (a side diverged)
 * is told in words: "now finite (diverged before) better", "now diverged
 * (finite before) worse", "+0.0% (1 of 3 seeds now finite) same". */
void ob_compare_print(const ob_compare *c, FILE *f);
void ob_compare_markdown(const ob_compare *c, const char *base_name, const char *cand_name, FILE *f);
void ob_compare_junit(const ob_compare *c, FILE *f);

/* Reports of a comparison that could not run (no verdict, exit status 2), so
 * that a report path never keeps an earlier verdict: Markdown with a "compare
 * could not run: MSG" section, JUnit with one test case holding an <error>.
 * base_name and cand_name may be NULL (not given). */
void ob_compare_markdown_error(const char *msg, const char *base_name, const char *cand_name, FILE *f);
void ob_compare_junit_error(const char *msg, FILE *f);

#endif
