/* results/export.c - the CSV tables of a report (see export.h).
 *
 * Tables by concern: runs, curves and evals as recorded; summary, lr_sweep,
 * time_to_target, cost and profile from results/stats; hp_sweep (each
 * configuration of a sweep besides the lr at its best lr, only with one); curves_best and
 * evals_best (median/min/max over seeds at the best lr, at most
 * OB_PLOT_MAX_POINTS steps per series) and the wide bars_* tables shaped for
 * the gnuplot figures.
 */
#include "results/export.h"
#include "optimizers/optim.h"
#include "results/csv.h"
#include "results/hp_sweep.h"
#include "results/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* ---- docs ------------------------------------------------------------------ */

static const ob_file_doc docs[] = {
    {"runs.csv", "one row per run (the latest run of each cell)",
     "run_id, benchmark_id, workload, optimizer (in every file: the report's labels, the name plus the "
     "settings that tell configurations apart, e.g. 'adam beta2=0.95' or 'quadratic cond=100'; workload_params "
     "and hparams hold every value), lr, seed, status (done|diverged|failed|"
     "interrupted|pending|running), steps (planned), steps_done, final_loss (mean training loss "
     "over the last 10% of steps; inf for a run that diverged, or finished without a finite loss in that "
     "window, as the statistics count it; empty for a run that did not finish and recorded none), best_loss, "
     "eval_loss, eval_metric (of a diverged run inf and -inf, the worst, as the statistics count them, where "
     "the workload has them), loss_floor, diverged_step, "
     "step_ms_median, step_ms_p90, items_per_sec, peak_mem_bytes, state_bytes, wall_s, "
     "workload_params (JSON), hparams (JSON), error, stage (sweep | confirm: a fresh seed at the best lr, "
     "run after the sweep), device_mem_bytes (the largest device memory in use as the driver reports it; "
     "empty on the CPU), skipped_nonfinite (steps skipped for a non-finite gradient or loss), skipped_spike "
     "(steps the spike guard skipped: train.spike_z_loss, spike_z_grad), rollbacks (of the non-finite steps, "
     "those that train.on_nonfinite = rollback rolled back), step_ms_mean (mean step time over the same "
     "steps as the median: above it when some steps are much slower, e.g. a refresh every k steps; empty "
     "for a database of an older optbench), opt_ms_median, opt_ms_mean (the optimizer's part of those "
     "steps: from the gradients, summed over the replicas, to the updated parameters; empty for a database "
     "of an older optbench), resumes (how many times the run was stopped, or failed, and continued from a "
     "checkpoint: its 'resumed' events), git_rev and host (the revision of optbench and the machine that ran it; \"A, "
     "then B\" where another continued it; empty for a database of an older optbench, whose benchmark "
     "rows say it), restarts (how many times the run was begun, stopped without a usable checkpoint or "
     "failed, and started over: its 'restarted' events), retired (1: a confirmation run a grown sweep retired, which "
     "confirms an lr or configuration that is no longer the best or ran a seed the sweep runs now; kept, "
     "left out of the statistics; 0 else), other_cpu (the share of the CPUs the run could use, 0 to 1, that "
     "other processes kept busy while it ran: 0.5 on 2 CPUs is one CPU's worth; at 0.25 or more its step "
     "times are a busy machine's; for a run under 0.25 s, from the start of an earlier run of the same process; "
     "the last process's part of a run continued; empty where unknown: the first 0.25 s of a process's runs, a "
     "machine without /proc/stat, a database of an older optbench)"},
    {"curves.csv", "every recorded training step of every run",
     "run_id, workload, optimizer, lr (the run's base lr), seed, step, loss (empty where it was NaN), "
     "grad_norm, step_lr (lr in effect at that step), stage (as in runs.csv: sweep | confirm)"},
    {"evals.csv", "every held-out evaluation of every run",
     "run_id, workload, optimizer, lr, seed, step, eval_loss, eval_metric, stage (as in runs.csv: sweep | "
     "confirm)"},
    {"summary.csv", "one row per workload x optimizer: the best lr and its statistics",
     "workload, optimizer, rank (1 = lowest median final loss; equal medians share a rank: 1, 1, 3; empty when every run diverged), best_lr, seeds (at the best lr), "
     "final_median, final_min, final_max (inf when a seed diverged or ended without a finite loss: "
     "final_max_finite has the worst of the others), final_ci_lo, final_ci_hi (distribution-free interval of the "
     "median from order statistics: the narrowest that holds it with probability 95% or more; with 5 seeds or "
     "fewer none does and it is min-max; empty with one seed), final_ci_coverage (the probability that the "
     "interval holds the median, exact from the binomial distribution: 0.95 or more from 6 seeds, "
     "1 - 2^(1-n) for min-max of n <= 5 seeds: 0.5, 0.75, 0.875, 0.9375; label error bars with it), "
     "eval_loss_median/min/max/ci_lo/ci_hi/ci_coverage, eval_metric_median/min/max/ci_lo/ci_hi/ci_coverage, "
     "lr_width_decades (lr range within tolerance of the best: a fraction of the best median, or with report "
     "--tol-of progress of the progress from the loss before training to it; at lrs where no seed diverged "
     "or ended without a finite final loss), lr_width_open "
     "(1 when the range reaches the edge of the grid: a lower bound; empty without a width), lr_width_unmeasured (why "
     "lr_width_decades is empty although there is a best lr: edge_next_diverged = the best lr is the smallest "
     "or largest of the grid and a seed diverged (or ended without a finite loss) at the lr next to it, so the range is that lr within the "
     "grid and unknown beyond it; one_lr = the grid has one lr; lrs_unfinished = one lr has finished runs and the "
     "grid's others none yet (a benchmark still running or stopped); edge_zero_tolerance = the best lr is at the "
     "edge and the tolerance is 0, from --tol 0 or a best median loss of 0; no_progress = --tol-of progress and "
     "the best median is not below the loss before training; empty when measured), "
     "loss_at_half_lr, loss_at_double_lr "
     "(the median interpolated between the grid lrs around it, log(loss) linear in log(lr) where both losses "
     "are > 0; the grid's own median where 0.5x or 2x is one of its lrs, inf where half its seeds or more "
     "diverged there; empty outside the grid or next to an lr with an infinite median), seed_cv, "
     "runs, finished, diverged, failed, divergence_rate, first_diverged_lr, above_start (finished runs, not "
     "diverged, whose final loss is above their loss at the first step: blown up below the divergence threshold, "
     "train.diverge_factor), final_max_finite (the worst final loss at the best lr of the seeds that did not "
     "diverge and ended finite, as lr_sweep.csv's final_max there; empty when none did), best_lr_share (how "
     "settled best_lr is: the share of " OB_PROFILE_BOOT_TEXT " resamples of the seeds, drawn with replacement "
     "with a seed's runs at every lr together, in which it keeps the lowest median final loss; empty without a "
     "best lr)"},
    {"confirm.csv", "one row per workload x optimizer: the confirmation runs at the best lr (written "
     "when the database holds any: run --confirm-seeds)",
     "workload, optimizer, rank (1 = lowest confirmed median final loss, equal ones sharing a rank; empty when the runs are not at "
     "the sweep's best lr, or their median is inf), lr, lr_is_best (0 when the runs are at another lr than the "
     "sweep's best: an earlier benchmark's), seeds, final_median, final_min, final_max (inf when one diverged), "
     "final_ci_lo, final_ci_hi, final_ci_coverage (as in summary.csv), sweep_seeds, sweep_final_median (the sweep's median at its best lr; empty when "
     "lr_is_best is 0), change (final_median / sweep_final_median - 1: the optimism of picking the lr on the "
     "sweep's seeds, plus how the fresh seeds differ from the sweep's), "
     "eval_loss_median/min/max/ci_lo/ci_hi/ci_coverage, eval_metric_median/min/max/ci_lo/ci_hi/ci_coverage, "
     "diverged (of the fresh seeds), final_max_finite (the worst that "
     "did not diverge), not_fresh (confirmation runs left out: their seed is also a seed of the sweep)"},
    {"settings.csv", "what each optimizer configuration ran with: its settings that differ from this "
     "optbench's defaults (the report's Setup table)",
     "optimizer (the label), name (the optimizer), key (a hyperparameter; train.KEY a training setting; "
     "options.N a text setting such as a route rule), value (as stored with the runs), default (this "
     "optbench's; empty where it has no such setting: a database of another version). A configuration "
     "run with every default has no row; runs.csv's hparams holds every value"},
    {"paired.csv", "neighbours in each ranking compared seed by seed (a seed's runs share initialization "
     "and data order across optimizers)",
     "workload, stage (sweep: at the best lrs; confirm: the fresh seeds), rank_a, optimizer_a, rank_b, "
     "optimizer_b, seeds (that both finished), a_lower, b_lower, ties (seeds on which each had the lower final "
     "loss), median_rel_diff (median over seeds of (a - b) / |b|, a diverged seed's loss +inf: +inf where a alone "
     "diverged, -1 where b alone did, 0 where both did; inf when a alone diverged on half the seeds or more), sign_test_p (two-sided exact sign test over the "
     "untied seeds: a win on every one of n seeds gives 2 / 2^n)"},
    {"lr_sweep.csv", "one row per workload x optimizer x lr",
     "workload, optimizer, lr, runs, finished, diverged, final_median (inf when half the "
     "seeds or more diverged), final_min, final_max (over seeds that did not diverge: empty when all did), "
     "eval_loss_median, eval_metric_median (a diverged seed's inf and -inf), steps_to_target (the step by which a strict majority of the seeds' "
     "trailing losses had first reached the target: the upper median of the seeds' first steps there, a seed "
     "that never got there counting as inf, so one lucky seed does not carry the others; inf = not reached), time_to_target_s (steps x the optimizer's step time on the workload, "
     "the same at every lr: the median over its finished runs at every lr of each run's mean step time, or of "
     "their median step time on a workload where some run predates the mean: "
     "time_to_target.csv's step_time; inf = not reached), is_best (1 at the best lr), nonfinite (seeds that "
     "finished, not diverged, with no finite loss in the final window: +inf in final_median, outside "
     "final_min/final_max), best_share (the share of the resamples of summary.csv's best_lr_share in which this "
     "lr has the lowest median final loss; empty where no lr has a finite median)"},
    {"hp_sweep.csv", "sensitivity to each swept hyperparameter besides the lr: one row per configuration "
     "at its best lr, per workload x key x line (written when a sweep gives a line: run --sweep; the "
     "hp_* figures draw it)",
     "workload, key (a swept optimizer or train setting, as in the labels), line (the optimizer name and the "
     "values of its other swept keys: the configurations that differ only in key; \"NAME (each configuration)\" "
     "where its keys were searched together, --trials: all its configurations, drawn as points), value (of key), "
     "best_lr "
     "(the configuration's own), seeds (at the best lr), final_median, final_min, final_max (over seeds that "
     "did not diverge at the best lr), diverged_runs, finished_runs (over the configuration's whole lr grid), "
     "diverged_everywhere (1: no lr has a finite median, half the seeds or more diverged at every lr; no best "
     "lr), optimizer (the configuration's label, as in summary.csv)"},
    {"curves_best.csv", "training loss at the best lr over seeds, per workload x optimizer",
     "workload, optimizer, lr, seeds, step, loss_median (a seed that diverged counts as inf from its last "
     "point on: inf when half the seeds or more have), loss_min, loss_max (over the seeds still training), "
     "diverged (of the seeds, how many had diverged by this step)"},
    {"evals_best.csv", "held-out loss and metric at the best lr over seeds",
     "workload, optimizer, lr, seeds, step, eval_loss_median, eval_loss_min, eval_loss_max, "
     "eval_metric_median, eval_metric_min, eval_metric_max (medians count a diverged seed as the worst value, "
     "inf or -inf, from its last evaluation on; min and max are over the seeds still training), diverged"},
    {"time_to_target.csv", "steps and training time to reach each workload's target loss",
     "workload, target, target_source (given | default = 1.1 x the best upper-median final loss, each optimizer's middle "
     "seed, the upper of two with an even count | halfway = halfway from the loss before training to that "
     "best, where 1.1 x asked for less), "
     "optimizer, rank (1 + the number of optimizers that got there clearly sooner, so optimizers within the "
     "noise of the seeds and of the timing share a rank: by time, one whose time_hi_s is below this one's "
     "time_lo_s; with --profile-by steps, one whose steps_hi is below this one's steps_lo; empty when not "
     "reached), steps (the step by which a strict "
     "majority of the seeds' trailing losses had first reached it, at lr: the upper median of the seeds' "
     "first steps there, the later of 2, the second of 3, the third of 4; a seed that diverged counts by its "
     "steps until it stopped; inf = censored: no majority did; empty when target_met_at_start), time_s "
     "(steps x the optimizer's step time on the workload: the median over its finished runs at every lr, not only this lr's, of each run's mean step time, the work of a step "
     "being the same at every lr; inf = censored), lr "
     "(the lr that got there in the fewest steps; ties: the smaller lr), censored (1/0), target_met_at_start (1: the loss before training "
     "was already at or below the target; nothing is ranked), step_time (the step time that time_s is from, "
     "the same for every optimizer of a workload: mean, or median where some run of the workload predates "
     "the mean (a database of schema < 4, or one merged from its shards and newer ones), so that no "
     "optimizer's mean is ranked against another's median; empty when target_met_at_start), steps_lo and "
     "steps_hi (the distribution-free interval of the seeds' median first reach at lr from their order "
     "statistics, the narrowest that holds it with probability 95% or more: [min, max] from 6 to 8 seeds; "
     "with 5 seeds or fewer none does and it is [min, max], which holds it less often (steps_ci_coverage), "
     "so with 3 seeds the first and the last seed to get there; steps_hi inf where a seed "
     "in it never did: the seeds' noise), time_lo_s and time_hi_s (steps_lo x the lower end and steps_hi x "
     "the upper end of the same interval of that median step time over the runs (step_time_ci_coverage), "
     "one run's time for both with one run: the noise of the seeds and of the "
     "timing, which the rank ties within; "
     "inf when censored), final_above_target (censored: how far above the target its upper-median final loss "
     "at the best lr ended, relative to the target, 0.005 = 0.5% above: a near miss, which the performance "
     "profile counts as not reaching the target at all; empty where it got there), steps_ci_coverage and "
     "step_time_ci_coverage (the probability that [steps_lo, steps_hi] and the step times' interval hold "
     "their medians, exact from the binomial distribution: 0.95 or more from 6 values, 1 - 2^(1-n) for "
     "[min, max] of n <= 5: 0.5, 0.75, 0.875, 0.9375; 0 with one; empty when censored or untimed)"},
    {"time_to_heldout_target.csv", "steps and training time to reach each workload's held-out target loss "
     "(AlgoPerf's measure); only workloads evaluated during training (eval_every > 0), and only where there are such",
     "the columns of time_to_target.csv but final_above_target, for the held-out loss: target (the held-out target; default 1.1 x the "
     "best, over the optimizers and their lrs, upper-median final held-out loss, or halfway from the median "
     "held-out loss at step 0 to it; --eval-target sets it), steps (the evaluation step by which a strict "
     "majority of the seeds' held-out losses had first reached it, at lr; no trailing mean), "
     "target_met_at_start (1: the held-out loss at step 0 already met it), eval_every (the evaluation "
     "interval, the gap between a run's first two evaluations: the resolution of steps), and on (loss; "
     "metric with report --heldout-on metric: the target is then on the held-out metric, higher is better, "
     "default 0.9 x the best lower-median final metric or halfway from the metric at step 0 to it, and a "
     "seed gets there at its first evaluation at or above it; workloads without a metric are left out), "
     "steps_ci_coverage and step_time_ci_coverage (as in time_to_target.csv)"},
    {"best_configuration.csv", "each optimizer at its best configuration, on workloads where the sweeps "
     "(--sweep) made several configurations of an optimizer; only then",
     "workload, optimizer, configurations (how many the optimizer has there), best_configuration (the swept "
     "values of the one with the lowest median final loss at its best lr; empty with one configuration, or "
     "where none has a finite median), lr (its best lr), final_median, final_min, final_max, final_ci_lo, "
     "final_ci_hi, final_ci_coverage (its row of summary.csv), worst_configuration and worst_final_median "
     "(the highest; empty as best_configuration is), confirm_median and confirm_seeds (fresh seeds at the "
     "best configuration's best lr, --confirm-seeds; empty without, and where its fresh seeds ran at another "
     "lr, an earlier benchmark's best: confirm.csv lists those). The choice is made on the sweep's "
     "seeds, so final_median is optimistic; confirm_median is not"},
    {"cost.csv", "per-step cost per workload x optimizer",
     "workload, optimizer, step_ms_median, step_ms_p90, overhead_vs_sgd (fraction: 0.25 = 25% "
     "slower than sgd), items_per_sec, peak_mem_bytes (high-water mark of optbench's allocations), "
     "state_bytes, device_mem_bytes (the largest device memory in use as the driver reports it: the whole "
     "device, with the CUDA context and library workspaces; empty on the CPU), step_ms_mean (the median over "
     "runs of each run's mean step time: above step_ms_median where some steps are much slower, e.g. "
     "SOAP's refresh every k steps; time to target uses it, or the median on a workload where some run "
     "predates the mean), opt_ms_median and opt_ms_mean (the optimizer's "
     "part of a step, from the gradients to the updated parameters: medians over runs of each run's median "
     "and mean); the times are over the group's runs on a quiet machine where it has some (runs.csv's "
     "other_cpu under 0.25: a run that met a busy machine timed other processes' work too), else over "
     "all its runs, and sgd's side of overhead_vs_sgd alike"},
    {"profile.csv", "performance profile: fraction of workloads within a factor tau of the best",
     "tau, then one column per optimizer"},
    {"profile_area.csv", "area under each optimizer's performance profile over [1, tau_max]",
     "optimizer, area (normalized to [0, 1]; 1 = fastest on every workload), rank (1 = largest area; equal "
     "areas share a rank: 1, 2, 2, 4), workloads (in the profile), workloads_run (of those, the ones the "
     "optimizer has runs on: on the others it counts as not reaching the target, so an optimizer run on "
     "fewer workloads has a smaller area for that alone), area_lo, area_hi (the 2.5% and 97.5% quantiles of "
     "its area over " OB_PROFILE_BOOT_TEXT " bootstrap resamples of the seeds, paired across optimizers by "
     "seed, with the target, the lrs and the step times held: the seeds' noise in the area), first_share (the share of "
     "those resamples in which it had the largest area, ties sharing it; a resample in which no optimizer got to "
     "any target has none)"},
    {"profile_band.csv", "the seeds' noise in each curve of profile.csv (with profile_area.csv's intervals)",
     "tau, then two columns per optimizer, \"NAME lo\" and \"NAME hi\": at that tau, the 2.5% and 97.5% "
     "quantiles of its curve over the " OB_PROFILE_BOOT_TEXT " bootstrap resamples of the seeds of area_lo and "
     "area_hi (pointwise: each tau's quantiles on their own, not a band that holds the whole curve at once); "
     "not written without the bootstrap (no workload in the profile) or for a profile of more than 2^24 counts "
     "(optimizers x 302 x (workloads + 1))"},
    {"profile_tuned.csv", "performance profile of the tuned optimizers, where sweeps made several "
     "configurations of an optimizer (only then): each optimizer on each workload at its fastest "
     "configuration there (AlgoPerf's external tuning; with several studies, run studies: K or searches of "
     "other seeds run as benchmarks of their own, the median over the studies of each study's "
     "fastest)",
     "tau, then one column per optimizer (name)"},
    {"profile_tuned_area.csv", "area under each tuned optimizer's performance profile (with profile_tuned.csv)",
     "optimizer, configurations (how many it picked its fastest from: more configurations, more luck; with "
     "studies, every study's together), area, rank, workloads, workloads_run (as in profile_area.csv), studies "
     "(1, or K of studies: K: each study's fastest is then of configurations / K), area_lo, area_hi, "
     "first_share (as in profile_area.csv, the resamples' picks made afresh)"},
    {"profile_tuned_band.csv", "the seeds' noise in each curve of profile_tuned.csv",
     "tau, then \"NAME lo\" and \"NAME hi\" per optimizer (name), as in profile_band.csv, the resamples' picks "
     "made afresh"},
    {"profile_tuned_picks.csv", "the configuration each tuned optimizer took on each workload of the profile "
     "(with profile_tuned.csv)",
     "workload, optimizer, configurations, fastest_configuration (the swept values of the configuration "
     "with the shortest time to target there, the profile's time: by time or steps, training or held-out "
     "target; ties: the first in label order; empty where none reached the target or the optimizer has one "
     "configuration), lr, steps, time_s (its row of time_to_target.csv, or of time_to_heldout_target.csv with "
     "report --profile-on heldout; inf where none reached it), study (with several studies, the study whose "
     "fastest was the median, which the configuration is from, numbered within its benchmark: 0 for a "
     "benchmark of one search; else empty), study_benchmark (that study's benchmark, the database's "
     "benchmark id; empty with study)"},
    {"tuning_budget.csv", "the best final loss found among k configurations of an optimizer, where sweeps "
     "made several (only then): how much tuning it needs (Dodge et al. 2019; Sivaprasad et al. 2020)",
     "workload, optimizer, configurations (n, those with a finished run there), k (1 .. n), best_q25, "
     "best_median, best_q75 (quartiles of the lowest of k configurations' final losses at their best lr, "
     "the k drawn at random with replacement from the n run; a configuration with no finite median at any "
     "lr counts +inf, so a q-quantile is inf while the chance of drawing only such ones is above 1 - q; at k = 1 "
     "the median is the ceil(n/2)-th smallest, with an even n the lower of the two middle ones), "
     "eval_loss_best_q25, eval_loss_best_median, eval_loss_best_q75 (the same on held-out data: each "
     "configuration at its best lr for the held-out loss, the lowest median over seeds; empty where a "
     "configuration has no held-out value), eval_metric_best_q25, eval_metric_best_median, eval_metric_best_q75 "
     "(the held-out metric, each configuration at its best lr for it, the highest median; the best of k is the "
     "largest, so q25 is the lower quartile; empty for a workload without a metric)"},
    {"bars_step_ms.csv", "median step time (ms), one row per workload, one column per optimizer",
     "workload, then one column per optimizer"},
    {"bars_peak_mem.csv", "peak memory (bytes), one row per workload, one column per optimizer",
     "workload, then one column per optimizer"},
    {"bars_state_bytes.csv", "optimizer state (bytes), one row per workload, one column per optimizer",
     "workload, then one column per optimizer"},
    {"bars_time_to_target.csv", "training time to target (s), one row per workload, one column per "
     "optimizer; inf when not reached, empty when not run (or untimed, or the target was met at the start)",
     "workload, then one column per optimizer"},
    {"bars_time_to_target_range.csv", "the interval of each training time to target (s) that ties ranks "
     "(time_to_target.csv's time_lo_s and time_hi_s; hi inf where a seed never got there), one row per workload, "
     "two columns per optimizer; empty where there is no time or no spread (one run, or every run alike)",
     "workload, then OPTIMIZER lo and OPTIMIZER hi for each optimizer"},
};

const ob_file_doc *ob_export_docs(int *n)
{
    *n = (int)(sizeof docs / sizeof docs[0]);
    return docs;
}

/* ---- ranking ---------------------------------------------------------------- */

void ob_stats_rank(const ob_stats *s, int *rank)
{
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        int r = 1;
        double mine = isnan(g->final.median) ? INFINITY : g->final.median;
        if (isinf(mine)) { /* nothing finished without diverging: no rank */
            rank[k] = 0;
            continue;
        }
        for (int j = 0; j < s->n_g; j++) {
            const ob_group *h = &s->g[j];
            if (j == k || h->wl != g->wl) continue;
            double other = isnan(h->final.median) ? INFINITY : h->final.median;
            if (other < mine) r++; /* equal medians share a rank: 1, 1, 3 */
        }
        rank[k] = r;
    }
}

void ob_stats_confirm_rank(const ob_stats *s, int *rank)
{
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        /* ranked: at the sweep's best lr, with a finite median */
        double mine = g->n_confirm && g->confirm_lr == g->best_lr && !isnan(g->conf_final.median)
                          ? g->conf_final.median
                          : INFINITY;
        rank[k] = 0;
        if (isinf(mine)) continue;
        int r = 1;
        for (int j = 0; j < s->n_g; j++) {
            const ob_group *h = &s->g[j];
            if (j == k || h->wl != g->wl || !h->n_confirm || h->confirm_lr != h->best_lr) continue;
            double other = isnan(h->conf_final.median) ? INFINITY : h->conf_final.median;
            if (other < mine) r++; /* equal medians share a rank: 1, 1, 3 */
        }
        rank[k] = r;
    }
}

int ob_stats_ranked(const ob_stats *s, const int *rank, int w, int *order, int max)
{
    int n = 0;
    for (int r = 1; r <= s->n_g; r++)
        for (int k = 0; k < s->n_g && n < max; k++)
            if (s->g[k].wl == w && rank[k] == r) order[n++] = k;
    return n;
}

ob_status ob_stats_pair_neighbours(const ob_dataset *d, const ob_stats *s, int ka, int kb, int confirm, ob_paired *out,
                                   ob_err *e)
{
    const ob_group *a = &s->g[ka], *b = &s->g[kb];
    if (confirm) return ob_stat_paired(d, a->conf_runs, a->n_conf_runs, b->conf_runs, b->n_conf_runs, out, e);
    return ob_stat_paired(d, a->best_runs, a->n_best_runs, b->best_runs, b->n_best_runs, out, e);
}

int ob_stats_has_confirm(const ob_stats *s)
{
    for (int k = 0; k < s->n_g; k++)
        if (!isnan(s->g[k].confirm_lr)) return 1;
    return 0;
}

/* ---- per-step series over seeds ------------------------------------------- */

typedef struct series {
    int64_t n;
    const int64_t *step;
    const double *v, *v2; /* v2 optional (metric beside loss) */
    int diverged;         /* the run diverged: +inf (v2: -inf) past its last point, and for a
                           * non-finite value of its own */
} series;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Write one row per step (thinned) with median/min/max of v (and v2) over the
 * series that have that step, a diverged series counting from its last point
 * on as the worst value (+inf, and -inf for v2, a metric: higher is better),
 * as the statistics count a diverged seed: the median is over every seed, the
 * band (min, max) over the seeds still training, and the last column counts
 * the seeds diverged by that step. */
static ob_status write_over_seeds(ob_csv *c, const series *ss, int k, const char *wl, const char *opt,
                                  double lr, int with_v2, ob_err *e)
{
    int64_t total = 0;
    for (int i = 0; i < k; i++) total += ss[i].n;
    if (total == 0) return OB_OK;
    int64_t *steps = malloc((size_t)total * sizeof *steps);
    if (!steps) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    int64_t m = 0;
    for (int i = 0; i < k; i++)
        for (int64_t j = 0; j < ss[i].n; j++) steps[m++] = ss[i].step[j];
    qsort(steps, (size_t)m, sizeof *steps, cmp_i64);
    int64_t u = 0;
    for (int64_t j = 0; j < m; j++)
        if (u == 0 || steps[j] != steps[u - 1]) steps[u++] = steps[j];
    int64_t stride = (u + OB_PLOT_MAX_POINTS - 1) / OB_PLOT_MAX_POINTS;
    if (stride < 1) stride = 1;
    /* a workload without a metric has none for a diverged seed either */
    int has_v2 = 0;
    for (int i = 0; i < k && with_v2 && !has_v2; i++)
        for (int64_t j = 0; j < ss[i].n && !has_v2; j++) has_v2 = !isnan(ss[i].v2[j]);
    const double worst_v2 = has_v2 ? -INFINITY : NAN;
    int64_t *pos = calloc((size_t)k, sizeof *pos);
    double *a = malloc((size_t)k * sizeof *a), *b = malloc((size_t)k * sizeof *b);
    for (int64_t j = 0; j < u && pos && a && b; j++) {
        int64_t st = steps[j];
        int na = 0, n_div = 0;
        for (int i = 0; i < k; i++) {
            while (pos[i] < ss[i].n && ss[i].step[pos[i]] < st) pos[i]++;
            if (pos[i] < ss[i].n && ss[i].step[pos[i]] == st) {
                a[na] = ss[i].v[pos[i]];
                b[na] = with_v2 ? ss[i].v2[pos[i]] : NAN;
                if (ss[i].diverged && !isfinite(a[na])) a[na] = INFINITY;
                if (ss[i].diverged && with_v2 && !isfinite(b[na])) b[na] = worst_v2;
                n_div += ss[i].diverged && isinf(a[na]);
                na++;
            } else if (ss[i].diverged && (ss[i].n == 0 || st > ss[i].step[ss[i].n - 1])) {
                a[na] = INFINITY;
                b[na] = with_v2 ? worst_v2 : NAN;
                n_div++;
                na++;
            }
        }
        if (j % stride != 0 && j != u - 1) continue;
        ob_csv_str(c, wl);
        ob_csv_str(c, opt);
        ob_csv_num(c, lr);
        ob_csv_int(c, na);
        ob_csv_int(c, st);
        const double *vals[2] = {a, b};
        for (int t = 0; t < (with_v2 ? 2 : 1); t++) {
            /* band over finite values, every seed's (however many runs a
             * series pools); the median keeps +inf (a diverged seed) */
            double lo = NAN, hi = NAN;
            for (int i = 0; i < na; i++) {
                const double v = vals[t][i];
                if (!isfinite(v)) continue;
                if (!(v >= lo)) lo = v;
                if (!(v <= hi)) hi = v;
            }
            ob_csv_num(c, ob_stat_median(vals[t], na));
            ob_csv_num(c, lo);
            ob_csv_num(c, hi);
        }
        ob_csv_int(c, n_div);
        ob_csv_row(c);
    }
    ob_status r = pos && a && b ? OB_OK : ob_fail(e, OB_ERR_NOMEM, "out of memory");
    free(pos);
    free(a);
    free(b);
    free(steps);
    return r;
}

/* ---- the tables ------------------------------------------------------------ */

#define HDR(...) (const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* Does workload w have a held-out loss (metric 0) or metric (1): a finished
 * run of it that did not diverge recorded one? */
static int wl_has_held_out(const ob_dataset *d, int w, int metric)
{
    for (int i = 0; i < d->n; i++) {
        const ob_rrun *r = &d->runs[i];
        if (r->wl == w && r->finished && !r->diverged && !isnan(metric ? r->eval_metric : r->eval_loss)) return 1;
    }
    return 0;
}

/* A run's final loss, held-out loss and metric as runs.csv writes them: as
 * the statistics count them. A finished run that diverged, or ended without a
 * finite loss in its last 10% of steps, has a final loss of +inf; a diverged
 * run's held-out loss is +inf and its metric -inf where its workload has them
 * (left empty, a diverged seed would drop out of a median taken from the
 * file). A run that did not finish keeps what was recorded (empty: none). */
static void run_values(const ob_rrun *r, const int *has_el, const int *has_em, double *final, double *eval_loss,
                       double *eval_metric)
{
    *final = r->final_loss;
    *eval_loss = r->eval_loss;
    *eval_metric = r->eval_metric;
    if (!r->finished) return;
    if (r->diverged || !isfinite(r->final_loss)) *final = INFINITY;
    if (r->diverged) {
        *eval_loss = has_el[r->wl] ? INFINITY : NAN;
        *eval_metric = has_em[r->wl] ? -INFINITY : NAN;
    }
}

static ob_status write_runs(const ob_dataset *d, const char *dir, ob_err *e)
{
    int *has_el = malloc(((size_t)d->n_wl + 1) * sizeof *has_el), *has_em = malloc(((size_t)d->n_wl + 1) * sizeof *has_em);
    if (!has_el || !has_em) {
        free(has_el);
        free(has_em);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    for (int w = 0; w < d->n_wl; w++) {
        has_el[w] = wl_has_held_out(d, w, 0);
        has_em[w] = wl_has_held_out(d, w, 1);
    }
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, "runs.csv",
                       HDR("run_id", "benchmark_id", "workload", "optimizer", "lr", "seed", "status",
                           "steps", "steps_done", "final_loss", "best_loss", "eval_loss",
                           "eval_metric", "loss_floor", "diverged_step", "step_ms_median",
                           "step_ms_p90", "items_per_sec", "peak_mem_bytes", "state_bytes", "wall_s",
                           "workload_params", "hparams", "error", "stage", "device_mem_bytes",
                           "skipped_nonfinite", "skipped_spike", "rollbacks", "step_ms_mean", "opt_ms_median", "opt_ms_mean",
                           "resumes", "git_rev", "host", "restarts", "retired", "other_cpu"),
                       e);
    if (st != OB_OK) {
        free(has_el);
        free(has_em);
        return st;
    }
    for (int i = 0; i < d->n; i++) {
        const ob_rrun *r = &d->runs[i];
        double final, eval_loss, eval_metric;
        run_values(r, has_el, has_em, &final, &eval_loss, &eval_metric);
        ob_csv_int(&c, r->id);
        ob_csv_opt_int(&c, r->benchmark_id);
        ob_csv_str(&c, d->wl_labels[r->wl]);
        ob_csv_str(&c, d->opt_labels[r->opt]);
        ob_csv_num(&c, r->lr);
        ob_csv_int(&c, r->seed);
        ob_csv_str(&c, r->status);
        ob_csv_opt_int(&c, r->steps);
        ob_csv_opt_int(&c, r->steps_done);
        ob_csv_num(&c, final);
        ob_csv_num(&c, r->best_loss);
        ob_csv_num(&c, eval_loss);
        ob_csv_num(&c, eval_metric);
        ob_csv_num(&c, r->loss_floor);
        ob_csv_opt_int(&c, r->diverged_step);
        ob_csv_num(&c, r->step_ms_median);
        ob_csv_num(&c, r->step_ms_p90);
        ob_csv_num(&c, r->items_per_sec);
        ob_csv_opt_int(&c, r->peak_mem_bytes);
        ob_csv_opt_int(&c, r->state_bytes);
        ob_csv_num(&c, r->wall_s);
        ob_csv_str(&c, r->workload_params);
        ob_csv_str(&c, r->hparams);
        ob_csv_str(&c, r->error);
        ob_csv_str(&c, r->confirm ? "confirm" : "sweep");
        ob_csv_opt_int(&c, r->device_mem_bytes);
        ob_csv_int(&c, r->n_skip_nonfinite);
        ob_csv_int(&c, r->n_skip_spike);
        ob_csv_int(&c, r->n_rollback);
        ob_csv_num(&c, r->step_ms_mean);
        ob_csv_num(&c, r->opt_ms_median);
        ob_csv_num(&c, r->opt_ms_mean);
        ob_csv_int(&c, r->n_resumed);
        ob_csv_str(&c, r->git_rev);
        ob_csv_str(&c, r->host);
        ob_csv_int(&c, r->n_restarted);
        ob_csv_int(&c, r->confirm && r->cell < 0);
        ob_csv_num(&c, r->other_cpu);
        ob_csv_row(&c);
    }
    free(has_el);
    free(has_em);
    return ob_csv_close(&c, e);
}

/* One CSV of per-step series (curves, evals): for every run of d, the rows of
 * sql (bound to the run id; column 0 the step, then n_values numbers, NULL
 * written as NaN) after the run's identifying columns. */
static ob_status write_series(sqlite3 *db, const ob_dataset *d, const char *dir, const char *name,
                              const char *const *header, int n_header, const char *sql,
                              int n_values, ob_err *e)
{
    ob_csv c;
    sqlite3_stmt *q = NULL;
    OB_TRY(ob_csv_open(&c, dir, name, header, n_header, e));
    ob_status st = OB_OK;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        st = ob_fail(e, OB_ERR_DB, "writing %s: %s", name, sqlite3_errmsg(db));
    for (int i = 0; i < d->n && st == OB_OK; i++) {
        const ob_rrun *r = &d->runs[i];
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, r->id);
        int rc;
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            ob_csv_int(&c, r->id);
            ob_csv_str(&c, d->wl_labels[r->wl]);
            ob_csv_str(&c, d->opt_labels[r->opt]);
            ob_csv_num(&c, r->lr);
            ob_csv_int(&c, r->seed);
            ob_csv_int(&c, sqlite3_column_int64(q, 0));
            for (int k = 1; k <= n_values; k++)
                ob_csv_num(&c, sqlite3_column_type(q, k) == SQLITE_NULL ? NAN : sqlite3_column_double(q, k));
            ob_csv_str(&c, r->confirm ? "confirm" : "sweep");
            ob_csv_row(&c);
        }
        /* a read that failed part way would leave the file cut short */
        if (rc != SQLITE_DONE) st = ob_fail(e, OB_ERR_DB, "writing %s: reading run %lld: %s", name, (long long)r->id,
                                            sqlite3_errmsg(db));
    }
    sqlite3_finalize(q);
    ob_status st2 = ob_csv_close(&c, e);
    return st != OB_OK ? st : st2;
}

static ob_status write_recorded(sqlite3 *db, const ob_dataset *d, const char *dir, ob_err *e)
{
    OB_TRY(write_series(db, d, dir, "curves.csv",
                        HDR("run_id", "workload", "optimizer", "lr", "seed", "step", "loss", "grad_norm",
                            "step_lr", "stage"),
                        "SELECT step, loss, grad_norm, lr FROM curves WHERE run_id = ?1 ORDER BY step", 3, e));
    return write_series(db, d, dir, "evals.csv",
                        HDR("run_id", "workload", "optimizer", "lr", "seed", "step", "eval_loss",
                            "eval_metric", "stage"),
                        "SELECT step, loss, metric FROM evals WHERE run_id = ?1 ORDER BY step", 2, e);
}

/* median, min, max, ci_lo, ci_hi and the interval's coverage: the
 * probability that [ci_lo, ci_hi] holds the median (0.95 or more from 6
 * seeds, 1 - 2^(1-n) for the min-max range of n <= 5 seeds: 0.9375 at 5);
 * empty where there is no interval */
static void spread_cols(ob_csv *c, const ob_spread *s)
{
    ob_csv_num(c, s->median);
    ob_csv_num(c, s->min);
    ob_csv_num(c, s->max);
    ob_csv_num(c, s->ci_lo);
    ob_csv_num(c, s->ci_hi);
    ob_csv_num(c, isnan(s->ci_lo) ? NAN : s->ci_cover);
}

static ob_status write_summary(const ob_dataset *d, const ob_stats *s, const int *rank,
                               const char *dir, ob_err *e)
{
    ob_csv c;
    OB_TRY(ob_csv_open(&c, dir, "summary.csv",
                       HDR("workload", "optimizer", "rank", "best_lr", "seeds", "final_median",
                           "final_min", "final_max", "final_ci_lo", "final_ci_hi", "final_ci_coverage",
                           "eval_loss_median", "eval_loss_min", "eval_loss_max", "eval_loss_ci_lo",
                           "eval_loss_ci_hi", "eval_loss_ci_coverage", "eval_metric_median", "eval_metric_min",
                           "eval_metric_max", "eval_metric_ci_lo", "eval_metric_ci_hi",
                           "eval_metric_ci_coverage", "lr_width_decades",
                           "lr_width_open", "lr_width_unmeasured", "loss_at_half_lr", "loss_at_double_lr", "seed_cv", "runs",
                           "finished", "diverged", "failed", "divergence_rate", "first_diverged_lr", "above_start",
                           "final_max_finite", "best_lr_share"),
                       e));
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        ob_csv_str(&c, d->wl_labels[g->wl]);
        ob_csv_str(&c, d->opt_labels[g->opt]);
        ob_csv_opt_int(&c, rank[k] > 0 ? rank[k] : -1);
        ob_csv_num(&c, g->best_lr);
        ob_csv_int(&c, g->final.n);
        spread_cols(&c, &g->final);
        spread_cols(&c, &g->eval_loss);
        spread_cols(&c, &g->eval_metric);
        ob_csv_num(&c, g->width_decades);
        /* open or not says something only of a width */
        if (isnan(g->width_decades)) ob_csv_str(&c, NULL);
        else ob_csv_int(&c, g->width_open_lo || g->width_open_hi);
        ob_csv_str(&c, g->width_unmeasured ? ob_width_unmeasured_name(g->width_unmeasured) : NULL);
        ob_csv_num(&c, g->loss_half);
        ob_csv_num(&c, g->loss_double);
        ob_csv_num(&c, g->seed_cv);
        ob_csv_int(&c, g->n_runs);
        ob_csv_int(&c, g->n_finished);
        ob_csv_int(&c, g->n_diverged);
        ob_csv_int(&c, g->n_failed);
        ob_csv_num(&c, g->div_rate);
        ob_csv_num(&c, g->first_div_lr);
        ob_csv_int(&c, g->n_above_start);
        ob_csv_num(&c, g->best >= 0 ? g->lrs[g->best].max_finite : NAN);
        ob_csv_num(&c, g->best_lr_share);
        ob_csv_row(&c);
    }
    OB_TRY(ob_csv_close(&c, e));

    OB_TRY(ob_csv_open(&c, dir, "lr_sweep.csv",
                       HDR("workload", "optimizer", "lr", "runs", "finished", "diverged",
                           "final_median", "final_min", "final_max", "eval_loss_median",
                           "eval_metric_median", "steps_to_target", "time_to_target_s", "is_best", "nonfinite",
                           "best_share"),
                       e));
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        for (int i = 0; i < g->n_lr; i++) {
            const ob_lr_point *p = &g->lrs[i];
            ob_csv_str(&c, d->wl_labels[g->wl]);
            ob_csv_str(&c, d->opt_labels[g->opt]);
            ob_csv_num(&c, p->lr);
            ob_csv_int(&c, p->n_runs);
            ob_csv_int(&c, p->n_finished);
            ob_csv_int(&c, p->n_diverged);
            ob_csv_num(&c, p->med);
            ob_csv_num(&c, p->min_finite);
            ob_csv_num(&c, p->max_finite);
            /* an optimizer whose every run diverged has no held-out values
             * of its own to count a diverged seed's as the worst: where its
             * workload has them, every seed here diverged, so the median is
             * the worst, as a diverged run's value in runs.csv */
            const int all_div = p->n_finished > 0 && p->n_diverged == p->n_finished;
            ob_csv_num(&c, isnan(p->eval_med) && all_div && wl_has_held_out(d, g->wl, 0) ? INFINITY : p->eval_med);
            ob_csv_num(&c, isnan(p->metric_med) && all_div && wl_has_held_out(d, g->wl, 1) ? -INFINITY
                                                                                        : p->metric_med);
            ob_csv_num(&c, p->tt_steps);
            ob_csv_num(&c, p->tt_time_s);
            ob_csv_int(&c, i == g->best);
            ob_csv_int(&c, p->n_nonfinite);
            ob_csv_num(&c, p->best_share);
            ob_csv_row(&c);
        }
    }
    return ob_csv_close(&c, e);
}

/* Grow the columns of one run's evals to cap rows; 0 when out of memory (what
 * was there stays, for the caller to free). */
static int grow_evals(int64_t **steps, double **loss, double **metric, int64_t cap)
{
    int64_t *s = realloc(*steps, (size_t)cap * sizeof **steps);
    if (!s) return 0;
    *steps = s;
    double *l = realloc(*loss, (size_t)cap * sizeof **loss);
    if (!l) return 0;
    *loss = l;
    double *m = realloc(*metric, (size_t)cap * sizeof **metric);
    if (!m) return 0;
    *metric = m;
    return 1;
}

static ob_status write_best_series(sqlite3 *db, const ob_dataset *d, const ob_stats *s,
                                   const char *dir, ob_err *e)
{
    ob_csv c;
    OB_TRY(ob_csv_open(&c, dir, "curves_best.csv",
                       HDR("workload", "optimizer", "lr", "seeds", "step", "loss_median", "loss_min",
                           "loss_max", "diverged"),
                       e));
    ob_status st = OB_OK;
    for (int k = 0; k < s->n_g && st == OB_OK; k++) {
        const ob_group *g = &s->g[k];
        series ss[64];
        int n = 0;
        for (int i = 0; i < g->n_best_runs && n < 64; i++) {
            const ob_rrun *r = &d->runs[g->best_runs[i]];
            ss[n++] = (series){r->n_curve, r->c_step, r->c_loss, NULL, r->diverged};
        }
        st = write_over_seeds(&c, ss, n, d->wl_labels[g->wl], d->opt_labels[g->opt], g->best_lr, 0, e);
    }
    if (st != OB_OK) {
        ob_csv_close(&c, NULL);
        return st;
    }
    OB_TRY(ob_csv_close(&c, e));

    OB_TRY(ob_csv_open(&c, dir, "evals_best.csv",
                       HDR("workload", "optimizer", "lr", "seeds", "step", "eval_loss_median",
                           "eval_loss_min", "eval_loss_max", "eval_metric_median", "eval_metric_min",
                           "eval_metric_max", "diverged"),
                       e));
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT step, loss, metric FROM evals WHERE run_id = ?1 ORDER BY step",
                           -1, &q, NULL) != SQLITE_OK)
        st = ob_fail(e, OB_ERR_DB, "reading evals: %s", sqlite3_errmsg(db));
    for (int k = 0; k < s->n_g && st == OB_OK; k++) {
        const ob_group *g = &s->g[k];
        series ss[64];
        int64_t *steps[64];
        double *loss[64], *metric[64];
        int n = 0;
        for (int i = 0; i < g->n_best_runs && n < 64 && st == OB_OK; i++) {
            const ob_rrun *r = &d->runs[g->best_runs[i]];
            int64_t cap = 64, m = 0;
            steps[n] = NULL;
            loss[n] = metric[n] = NULL;
            int ok = grow_evals(&steps[n], &loss[n], &metric[n], cap);
            sqlite3_reset(q);
            sqlite3_bind_int64(q, 1, r->id);
            while (ok && sqlite3_step(q) == SQLITE_ROW) {
                if (m == cap) {
                    cap *= 2;
                    if (!(ok = grow_evals(&steps[n], &loss[n], &metric[n], cap))) break;
                }
                steps[n][m] = sqlite3_column_int64(q, 0);
                loss[n][m] = sqlite3_column_type(q, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 1);
                metric[n][m] = sqlite3_column_type(q, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 2);
                m++;
            }
            ss[n] = (series){m, steps[n], loss[n], metric[n], r->diverged};
            n++;
            if (!ok) st = ob_fail(e, OB_ERR_NOMEM, "out of memory reading evals");
        }
        if (st == OB_OK)
            st = write_over_seeds(&c, ss, n, d->wl_labels[g->wl], d->opt_labels[g->opt], g->best_lr, 1, e);
        for (int i = 0; i < n; i++) {
            free(steps[i]);
            free(loss[i]);
            free(metric[i]);
        }
    }
    sqlite3_finalize(q);
    ob_status st2 = ob_csv_close(&c, e);
    return st != OB_OK ? st : st2;
}

/* bars_time_to_target_range.csv: per workload, each optimizer's training
 * time interval (steps x the 95% interval of its median step time), empty
 * where it has no time or no spread. */
static ob_status write_tt_ranges(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    const int n_cols = 2 * d->n_opt + 1;
    const char **hdr = malloc((size_t)n_cols * sizeof *hdr);
    size_t total = 1;
    for (int o = 0; o < d->n_opt; o++) total += 2 * (strlen(d->opt_labels[o]) + 4);
    char *names = malloc(total);
    if (!hdr || !names) {
        free(hdr);
        free(names);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    hdr[0] = "workload";
    char *at = names;
    for (int o = 0; o < d->n_opt; o++)
        for (int k = 0; k < 2; k++) {
            const size_t len = strlen(d->opt_labels[o]) + 4;
            snprintf(at, len, "%s %s", d->opt_labels[o], k ? "hi" : "lo");
            hdr[2 * o + k + 1] = at;
            at += len;
        }
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, "bars_time_to_target_range.csv", hdr, n_cols, e);
    for (int w = 0; w < d->n_wl && st == OB_OK; w++) {
        ob_csv_str(&c, d->wl_labels[w]);
        for (int o = 0; o < d->n_opt; o++) {
            const ob_group *g = ob_stats_group(s, w, o);
            double lo = NAN, hi = NAN;
            const int has = g && isfinite(g->tt_time_s) && ob_group_tt_interval(g, 0, &lo, &hi) && lo < hi;
            ob_csv_num(&c, has ? lo : NAN);
            ob_csv_num(&c, has ? hi : NAN);
        }
        ob_csv_row(&c);
    }
    if (st == OB_OK) st = ob_csv_close(&c, e);
    free(hdr);
    free(names);
    return st;
}

/* time_to_target.csv, or with held_out time_to_heldout_target.csv (the
 * workloads evaluated during training, and their evaluation interval) */
static ob_status write_ttt(const ob_dataset *d, const ob_stats *s, const char *dir, int held_out, ob_err *e)
{
    ob_csv c;
    if (held_out)
        OB_TRY(ob_csv_open(&c, dir, "time_to_heldout_target.csv",
                           HDR("workload", "target", "target_source", "optimizer", "rank", "steps", "time_s", "lr",
                               "censored", "target_met_at_start", "step_time", "time_lo_s", "time_hi_s", "steps_lo",
                               "steps_hi", "eval_every", "on", "steps_ci_coverage", "step_time_ci_coverage"),
                           e));
    else
        OB_TRY(ob_csv_open(&c, dir, "time_to_target.csv",
                           HDR("workload", "target", "target_source", "optimizer", "rank", "steps", "time_s", "lr",
                               "censored", "target_met_at_start", "step_time", "time_lo_s", "time_hi_s", "steps_lo",
                               "steps_hi", "final_above_target", "steps_ci_coverage", "step_time_ci_coverage"),
                           e));
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        const int w = g->wl;
        if (held_out && !s->ev_every[w]) continue;
        const ob_ttt t = ob_group_ttt(g, held_out);
        const int given = held_out ? s->ev_target_given[w] : s->target_given[w],
                  halfway = held_out ? s->ev_target_halfway[w] : s->target_halfway[w],
                  at_start = held_out ? s->ev_target_at_start[w] : s->target_at_start[w];
        /* only groups that reached the target are ranked (censored: empty);
         * times within the noise share a rank (ob_stats_tt_rank) */
        const int rank = held_out ? ob_stats_ev_rank(s, k) : ob_stats_tt_rank(s, k);
        ob_csv_str(&c, d->wl_labels[w]);
        ob_csv_num(&c, held_out ? s->ev_target[w] : s->target[w]);
        ob_csv_str(&c, given ? "given" : halfway ? "halfway" : "default");
        ob_csv_str(&c, d->opt_labels[g->opt]);
        ob_csv_opt_int(&c, rank > 0 ? rank : -1);
        ob_csv_num(&c, t.steps);
        ob_csv_num(&c, t.time_s);
        ob_csv_num(&c, t.lr);
        ob_csv_int(&c, t.censored);
        ob_csv_int(&c, at_start);
        ob_csv_str(&c, at_start ? NULL : s->tt_by_median[w] ? "median" : "mean");
        double lo = NAN, hi = NAN, slo = NAN, shi = NAN; /* censored: inf (no interval); untimed: empty */
        if (t.censored) lo = hi = t.time_s, slo = shi = t.steps;
        ob_ttt_interval(&t, 0, &lo, &hi);
        ob_ttt_interval(&t, 1, &slo, &shi);
        ob_csv_num(&c, lo);
        ob_csv_num(&c, hi);
        ob_csv_num(&c, slo);
        ob_csv_num(&c, shi);
        if (held_out) {
            ob_csv_int(&c, s->ev_every[w]);
            ob_csv_str(&c, s->heldout_metric ? "metric" : "loss");
        } else {
            ob_csv_num(&c, g->tt_miss);
        }
        /* what the intervals are worth: under 0.95 with 5 values or fewer */
        ob_csv_num(&c, !t.censored && !isnan(slo) && !isinf(t.steps) ? t.steps_cover : NAN);
        ob_csv_num(&c, !t.censored && !isnan(lo) ? t.step_ms_cover : NAN);
        ob_csv_row(&c);
    }
    return ob_csv_close(&c, e);
}

/* An earlier report's file name in dir, which this report does not write:
 * removed, so that a folder reported into again holds no stale table. */
static void remove_stale(const char *dir, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    remove(p);
}

/* best_configuration.csv where some workload has an optimizer in several
 * configurations (ob_stats_best_configs); else none (an earlier report's
 * is removed). */
static ob_status write_best_configs(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    ob_best_config *rows = malloc(((size_t)s->n_g + 1) * sizeof *rows);
    if (!rows) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    int any = 0;
    for (int w = 0; w < d->n_wl && !any; w++) (void)ob_stats_best_configs(d, s, w, rows, s->n_g, &any);
    if (!any) {
        free(rows);
        remove_stale(dir, "best_configuration.csv");
        return OB_OK;
    }
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, "best_configuration.csv",
                               HDR("workload", "optimizer", "configurations", "best_configuration", "lr",
                                   "final_median", "final_min", "final_max", "final_ci_lo", "final_ci_hi",
                                   "final_ci_coverage", "worst_configuration", "worst_final_median",
                                   "confirm_median", "confirm_seeds"),
                               e);
    if (st != OB_OK) {
        free(rows);
        return st;
    }
    for (int w = 0; w < d->n_wl; w++) {
        int swept = 0;
        const int n = ob_stats_best_configs(d, s, w, rows, s->n_g, &swept);
        if (!swept) continue;
        for (int i = 0; i < n; i++) {
            const ob_group *g = &s->g[rows[i].best], *bad = &s->g[rows[i].worst];
            /* none with a finite median: neither is the best, nor the worst */
            const int many = rows[i].n_configs > 1 && g->best >= 0 && isfinite(g->final.median);
            ob_csv_str(&c, d->wl_labels[w]);
            ob_csv_str(&c, d->opt_names[g->opt]);
            ob_csv_int(&c, rows[i].n_configs);
            ob_csv_str(&c, many ? ob_dataset_opt_config(d, g->opt) : NULL);
            ob_csv_num(&c, g->best >= 0 ? g->best_lr : NAN);
            spread_cols(&c, &g->final);
            ob_csv_str(&c, many ? ob_dataset_opt_config(d, bad->opt) : NULL);
            ob_csv_num(&c, !many ? NAN : bad->best >= 0 ? bad->final.median : INFINITY);
            /* fresh seeds at another lr (an earlier benchmark's best) are not this configuration's
             * estimate: confirm.csv lists them */
            const int confirmed = !isnan(g->confirm_lr) && g->confirm_lr == g->best_lr;
            ob_csv_num(&c, confirmed ? g->conf_final.median : NAN);
            if (!confirmed) ob_csv_str(&c, NULL);
            else ob_csv_int(&c, g->conf_final.n);
            ob_csv_row(&c);
        }
    }
    free(rows);
    return ob_csv_close(&c, e);
}

/* profile_tuned.csv, profile_tuned_area.csv and profile_tuned_picks.csv
 * where some optimizer has several configurations (ob_stats.n_tuned); else
 * none (an earlier report's are removed). */
/* tuning_budget.csv where some optimizer has several configurations: for
 * each workload and such optimizer, the best final loss of k of its
 * configurations drawn at random (ob_stat_best_of_k), k = 1 .. all, and the
 * same on the held-out loss and metric where every configuration has one
 * (ob_stats_trial_heldout; the metric's best is its largest, so its q25 is
 * the lower quartile); else none (an earlier report's is removed). */
static ob_status write_budget(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    if (s->n_tuned == 0) {
        remove_stale(dir, "tuning_budget.csv");
        return OB_OK;
    }
    double *v = malloc(3 * ((size_t)d->n_opt + 1) * sizeof *v);
    if (!v) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    double *hl = v + d->n_opt + 1, *hm = hl + d->n_opt + 1;
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, "tuning_budget.csv",
                               HDR("workload", "optimizer", "configurations", "k", "best_q25", "best_median",
                                   "best_q75", "eval_loss_best_q25", "eval_loss_best_median", "eval_loss_best_q75",
                                   "eval_metric_best_q25", "eval_metric_best_median", "eval_metric_best_q75"),
                               e);
    for (int w = 0; w < d->n_wl && st == OB_OK; w++)
        for (int i = 0; i < s->n_tuned; i++) {
            const int n = ob_stats_trial_losses(d, s, w, i, v);
            const int nl = ob_stats_trial_heldout(d, s, w, i, 0, hl) == n;
            const int nm = ob_stats_trial_heldout(d, s, w, i, 1, hm) == n;
            for (int k = 1; n >= 2 && k <= n; k++) {
                ob_csv_str(&c, d->wl_labels[w]);
                ob_csv_str(&c, d->opt_names[s->tuned_first[i]]);
                ob_csv_int(&c, n);
                ob_csv_int(&c, k);
                ob_csv_num(&c, ob_stat_best_of_k(v, n, k, 0.25));
                ob_csv_num(&c, ob_stat_best_of_k(v, n, k, 0.5));
                ob_csv_num(&c, ob_stat_best_of_k(v, n, k, 0.75));
                ob_csv_num(&c, nl ? ob_stat_best_of_k(hl, n, k, 0.25) : NAN);
                ob_csv_num(&c, nl ? ob_stat_best_of_k(hl, n, k, 0.5) : NAN);
                ob_csv_num(&c, nl ? ob_stat_best_of_k(hl, n, k, 0.75) : NAN);
                ob_csv_num(&c, nm ? -ob_stat_best_of_k(hm, n, k, 0.75) : NAN);
                ob_csv_num(&c, nm ? -ob_stat_best_of_k(hm, n, k, 0.5) : NAN);
                ob_csv_num(&c, nm ? -ob_stat_best_of_k(hm, n, k, 0.25) : NAN);
                ob_csv_row(&c);
            }
        }
    free(v);
    return st == OB_OK ? ob_csv_close(&c, e) : st;
}

/* name (profile_band.csv, profile_tuned_band.csv): a row per tau, the
 * band's ends lo and hi (n_tau x n) of curve i, labelled label[i], in the
 * columns "LABEL lo" and "LABEL hi"; where there is no band (lo NULL), none
 * (an earlier report's is removed). */
static ob_status write_band(const ob_stats *s, const char *dir, const char *name, const char *const *label, int n,
                            const double *lo, const double *hi, ob_err *e)
{
    if (!lo || !hi) {
        remove_stale(dir, name);
        return OB_OK;
    }
    const char **hdr = calloc(2 * (size_t)n + 1, sizeof *hdr);
    char **own = calloc(2 * (size_t)n + 1, sizeof *own);
    ob_status st = hdr && own ? OB_OK : ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int i = 0; st == OB_OK && i < 2 * n; i++) {
        const size_t len = strlen(label[i / 2]) + 4;
        own[i] = malloc(len);
        if (!own[i]) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        else snprintf(own[i], len, "%s %s", label[i / 2], i % 2 ? "hi" : "lo");
        hdr[i + 1] = own[i];
    }
    ob_csv c;
    if (st == OB_OK) {
        hdr[0] = "tau";
        st = ob_csv_open(&c, dir, name, hdr, 2 * n + 1, e);
    }
    for (int i = 0; own && i < 2 * n; i++) free(own[i]);
    free(own);
    free(hdr);
    OB_TRY(st);
    for (int t = 0; t < s->n_tau; t++) {
        ob_csv_num(&c, s->taus[t]);
        for (int i = 0; i < n; i++) {
            ob_csv_num(&c, lo[t * n + i]);
            ob_csv_num(&c, hi[t * n + i]);
        }
        ob_csv_row(&c);
    }
    return ob_csv_close(&c, e);
}

static ob_status write_tuned_profile(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    static const char *const names[] = {"profile_tuned.csv", "profile_tuned_area.csv", "profile_tuned_picks.csv"};
    if (s->n_tuned == 0) {
        for (int i = 0; i < 3; i++) remove_stale(dir, names[i]);
        remove_stale(dir, "profile_tuned_band.csv");
        return OB_OK;
    }
    const int n = s->n_tuned;
    const char **hdr = malloc(((size_t)n + 1) * sizeof *hdr);
    if (!hdr) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    hdr[0] = "tau";
    for (int i = 0; i < n; i++) hdr[i + 1] = d->opt_names[s->tuned_first[i]];
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, names[0], hdr, n + 1, e);
    for (int t = 0; st == OB_OK && t < s->n_tau; t++) {
        ob_csv_num(&c, s->taus[t]);
        for (int i = 0; i < n; i++) ob_csv_num(&c, s->tuned_rho[t * n + i]);
        ob_csv_row(&c);
    }
    if (st == OB_OK) st = ob_csv_close(&c, e);
    if (st == OB_OK)
        st = write_band(s, dir, "profile_tuned_band.csv", hdr + 1, n, s->tuned_band_lo, s->tuned_band_hi, e);
    free(hdr);
    OB_TRY(st);
    OB_TRY(ob_csv_open(&c, dir, names[1],
                       HDR("optimizer", "configurations", "area", "rank", "workloads", "workloads_run",
                           "studies", "area_lo", "area_hi", "first_share"),
                       e));
    for (int i = 0; i < n; i++) {
        ob_csv_str(&c, d->opt_names[s->tuned_first[i]]);
        ob_csv_int(&c, s->tuned_configs[i]);
        ob_csv_num(&c, s->tuned_area[i]);
        ob_csv_int(&c, ob_stats_tuned_rank(s, i));
        ob_csv_int(&c, s->profile_workloads);
        ob_csv_int(&c, s->tuned_ran[i]);
        ob_csv_int(&c, s->tuned_studies[i] > 1 ? s->tuned_studies[i] : 1);
        ob_csv_num(&c, s->n_boot ? s->tuned_area_lo[i] : NAN);
        ob_csv_num(&c, s->n_boot ? s->tuned_area_hi[i] : NAN);
        ob_csv_num(&c, s->n_boot ? s->tuned_area_first[i] : NAN);
        ob_csv_row(&c);
    }
    OB_TRY(ob_csv_close(&c, e));
    OB_TRY(ob_csv_open(&c, dir, names[2],
                       HDR("workload", "optimizer", "configurations", "fastest_configuration", "lr", "steps",
                           "time_s", "study", "study_benchmark"),
                       e));
    for (int w = 0; w < d->n_wl; w++) {
        if (!s->in_profile[w]) continue;
        for (int i = 0; i < n; i++) {
            const int k = s->tuned_pick[w * n + i];
            ob_ttt t = {0};
            if (k >= 0) t = ob_group_ttt(&s->g[k], s->profile_heldout);
            const char *conf = k < 0 ? NULL : ob_dataset_opt_config(d, s->g[k].opt);
            ob_csv_str(&c, d->wl_labels[w]);
            ob_csv_str(&c, d->opt_names[s->tuned_first[i]]);
            ob_csv_int(&c, s->tuned_configs[i]);
            ob_csv_str(&c, conf ? conf : ""); /* the swept values alone, as best_configuration.csv writes them */
            ob_csv_num(&c, k < 0 ? NAN : t.lr);
            ob_csv_num(&c, k < 0 ? INFINITY : t.steps);
            ob_csv_num(&c, k < 0 ? INFINITY : t.time_s);
            const int ps = s->tuned_pick_study[w * n + i];
            if (ps >= 0) {
                ob_csv_int(&c, ps);
                ob_csv_int(&c, s->tuned_pick_bench[w * n + i]);
            } else {
                ob_csv_str(&c, "");
                ob_csv_str(&c, "");
            }
            ob_csv_row(&c);
        }
    }
    return ob_csv_close(&c, e);
}

/* cost.csv: each group's step time, throughput and memory */
static ob_status write_cost(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    ob_csv c;
    OB_TRY(ob_csv_open(&c, dir, "cost.csv",
                       HDR("workload", "optimizer", "step_ms_median", "step_ms_p90", "overhead_vs_sgd",
                           "items_per_sec", "peak_mem_bytes", "state_bytes", "device_mem_bytes", "step_ms_mean",
                           "opt_ms_median", "opt_ms_mean"),
                       e));
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        ob_csv_str(&c, d->wl_labels[g->wl]);
        ob_csv_str(&c, d->opt_labels[g->opt]);
        ob_csv_num(&c, g->step_ms_median);
        ob_csv_num(&c, g->step_ms_p90);
        ob_csv_num(&c, g->overhead_vs_sgd);
        ob_csv_num(&c, g->items_per_sec);
        ob_csv_opt_int(&c, g->peak_mem_bytes);
        ob_csv_opt_int(&c, g->state_bytes);
        ob_csv_opt_int(&c, g->device_mem_bytes);
        ob_csv_num(&c, g->step_ms_mean);
        ob_csv_num(&c, g->opt_ms_median);
        ob_csv_num(&c, g->opt_ms_mean);
        ob_csv_row(&c);
    }
    return ob_csv_close(&c, e);
}

/* Bar chart table b (0 to 3: step time, peak memory, state bytes, time to
 * target): a row per workload, a column per optimizer (hdr: room for
 * n_opt + 1 names). */
static ob_status write_bars(const ob_dataset *d, const ob_stats *s, const char *dir, const char **hdr, int b,
                            ob_err *e)
{
    static const char *const bars[] = {"bars_step_ms.csv", "bars_peak_mem.csv",
                                       "bars_state_bytes.csv", "bars_time_to_target.csv"};
    ob_csv c;
    hdr[0] = "workload";
    for (int o = 0; o < d->n_opt; o++) hdr[o + 1] = d->opt_labels[o];
    OB_TRY(ob_csv_open(&c, dir, bars[b], hdr, d->n_opt + 1, e));
    for (int w = 0; w < d->n_wl; w++) {
        ob_csv_str(&c, d->wl_labels[w]);
        for (int o = 0; o < d->n_opt; o++) {
            const ob_group *g = ob_stats_group(s, w, o);
            /* byte counts as integers, as runs.csv and summary.csv write
             * them (the shortest text that reads back as a double can be
             * "1.660558e+07", which int() refuses); empty when unknown or
             * not run */
            if (b == 1 || b == 2) {
                ob_csv_opt_int(&c, !g ? -1 : b == 1 ? g->peak_mem_bytes : g->state_bytes);
                continue;
            }
            double v = NAN;
            if (g) v = b == 0 ? g->step_ms_median : g->tt_time_s; /* inf: not reached */
            ob_csv_num(&c, v);
        }
        ob_csv_row(&c);
    }
    return ob_csv_close(&c, e);
}

/* profile.csv: the performance profile, a row per tau, a column per
 * optimizer (hdr: room for n_opt + 1 names) */
static ob_status write_profile(const ob_dataset *d, const ob_stats *s, const char *dir, const char **hdr, ob_err *e)
{
    ob_csv c;
    hdr[0] = "tau";
    for (int o = 0; o < d->n_opt; o++) hdr[o + 1] = d->opt_labels[o];
    OB_TRY(ob_csv_open(&c, dir, "profile.csv", hdr, d->n_opt + 1, e));
    for (int t = 0; t < s->n_tau; t++) {
        ob_csv_num(&c, s->taus[t]);
        for (int o = 0; o < d->n_opt; o++) ob_csv_num(&c, s->rho[t * d->n_opt + o]);
        ob_csv_row(&c);
    }
    return ob_csv_close(&c, e);
}

/* wide tables for the bar charts and the profile */
static ob_status write_wide(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    const char **hdr = malloc(((size_t)d->n_opt + 1) * sizeof *hdr);
    if (!hdr) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    ob_status st = OB_OK;
    for (int b = 0; b < 4 && st == OB_OK; b++) st = write_bars(d, s, dir, hdr, b, e);
    if (st == OB_OK) st = write_profile(d, s, dir, hdr, e);
    free(hdr);
    return st;
}

/* profile_area.csv: each optimizer's area under its profile, and its rank */
static ob_status write_profile_area(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    ob_csv c;
    OB_TRY(ob_csv_open(&c, dir, "profile_area.csv",
                       HDR("optimizer", "area", "rank", "workloads", "workloads_run", "area_lo", "area_hi",
                           "first_share"),
                       e));
    for (int o = 0; o < d->n_opt; o++) {
        ob_csv_str(&c, d->opt_labels[o]);
        ob_csv_num(&c, s->area[o]);
        ob_csv_int(&c, ob_stats_profile_rank(s, o));
        ob_csv_int(&c, s->profile_workloads);
        ob_csv_int(&c, s->profile_ran[o]);
        ob_csv_num(&c, s->n_boot ? s->area_lo[o] : NAN);
        ob_csv_num(&c, s->n_boot ? s->area_hi[o] : NAN);
        ob_csv_num(&c, s->n_boot ? s->area_first[o] : NAN);
        ob_csv_row(&c);
    }
    return ob_csv_close(&c, e);
}

static ob_status write_targets_cost(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    OB_TRY(write_ttt(d, s, dir, 0, e));
    int evaluated = 0; /* the held-out table only where a workload was evaluated during training */
    for (int w = 0; w < d->n_wl; w++) evaluated |= s->ev_every && s->ev_every[w] > 0;
    if (evaluated) OB_TRY(write_ttt(d, s, dir, 1, e));
    OB_TRY(write_cost(d, s, dir, e));
    OB_TRY(write_wide(d, s, dir, e));
    OB_TRY(write_tt_ranges(d, s, dir, e));
    OB_TRY(write_band(s, dir, "profile_band.csv", (const char *const *)d->opt_labels, d->n_opt, s->band_lo,
                      s->band_hi, e));
    return write_profile_area(d, s, dir, e);
}

static ob_status write_paired(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    int *rank = malloc(((size_t)s->n_g + 1) * sizeof *rank), *crank = malloc(((size_t)s->n_g + 1) * sizeof *crank);
    int *order = malloc(((size_t)s->n_g + 1) * sizeof *order);
    if (!rank || !crank || !order) {
        free(rank);
        free(crank);
        free(order);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    ob_stats_rank(s, rank);
    ob_stats_confirm_rank(s, crank);
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, "paired.csv",
                               HDR("workload", "stage", "rank_a", "optimizer_a", "rank_b", "optimizer_b", "seeds",
                                   "a_lower", "b_lower", "ties", "median_rel_diff", "sign_test_p"),
                               e);
    for (int stage = 0; st == OB_OK && stage < 2; stage++)
        for (int w = 0; w < d->n_wl && st == OB_OK; w++) {
            int n = ob_stats_ranked(s, stage ? crank : rank, w, order, s->n_g);
            for (int i = 0; i + 1 < n; i++) {
                ob_paired pr;
                if ((st = ob_stats_pair_neighbours(d, s, order[i], order[i + 1], stage, &pr, e)) != OB_OK) break;
                ob_csv_str(&c, d->wl_labels[w]);
                ob_csv_str(&c, stage ? "confirm" : "sweep");
                /* the groups' ranks, which equal medians share */
                ob_csv_int(&c, (stage ? crank : rank)[order[i]]);
                ob_csv_str(&c, d->opt_labels[s->g[order[i]].opt]);
                ob_csv_int(&c, (stage ? crank : rank)[order[i + 1]]);
                ob_csv_str(&c, d->opt_labels[s->g[order[i + 1]].opt]);
                ob_csv_int(&c, pr.n);
                ob_csv_int(&c, pr.a_lower);
                ob_csv_int(&c, pr.b_lower);
                ob_csv_int(&c, pr.ties);
                ob_csv_num(&c, pr.median_rel);
                ob_csv_num(&c, pr.p_sign);
                ob_csv_row(&c);
            }
        }
    if (st == OB_OK) st = ob_csv_close(&c, e);
    else ob_csv_close(&c, NULL);
    free(rank);
    free(crank);
    free(order);
    return st;
}

static ob_status write_confirm(const ob_dataset *d, const ob_stats *s, const char *dir, ob_err *e)
{
    int *rank = malloc(((size_t)s->n_g + 1) * sizeof *rank);
    if (!rank) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    ob_stats_confirm_rank(s, rank);
    ob_csv c;
    ob_status st = ob_csv_open(&c, dir, "confirm.csv",
                               HDR("workload", "optimizer", "rank", "lr", "lr_is_best", "seeds", "final_median",
                                   "final_min", "final_max", "final_ci_lo", "final_ci_hi", "final_ci_coverage",
                                   "sweep_seeds", "sweep_final_median", "change", "eval_loss_median",
                                   "eval_loss_min", "eval_loss_max", "eval_loss_ci_lo", "eval_loss_ci_hi",
                                   "eval_loss_ci_coverage", "eval_metric_median", "eval_metric_min",
                                   "eval_metric_max", "eval_metric_ci_lo", "eval_metric_ci_hi",
                                   "eval_metric_ci_coverage", "diverged", "final_max_finite", "not_fresh"),
                               e);
    for (int k = 0; st == OB_OK && k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (isnan(g->confirm_lr)) continue;
        ob_csv_str(&c, d->wl_labels[g->wl]);
        ob_csv_str(&c, d->opt_labels[g->opt]);
        ob_csv_opt_int(&c, rank[k] > 0 ? rank[k] : -1);
        ob_csv_num(&c, g->confirm_lr);
        ob_csv_int(&c, g->confirm_lr == g->best_lr);
        ob_csv_int(&c, g->conf_final.n);
        spread_cols(&c, &g->conf_final);
        ob_csv_int(&c, g->final.n);
        ob_csv_num(&c, g->confirm_lr == g->best_lr ? g->final.median : NAN);
        ob_csv_num(&c, g->confirm_lr == g->best_lr && isfinite(g->final.median) && g->final.median != 0
                           ? g->conf_final.median / g->final.median - 1
                           : NAN);
        spread_cols(&c, &g->conf_eval_loss);
        spread_cols(&c, &g->conf_eval_metric);
        ob_csv_int(&c, g->conf_n_diverged);
        ob_csv_num(&c, g->conf_max_finite);
        ob_csv_int(&c, g->conf_seed_overlap);
        ob_csv_row(&c);
    }
    if (st == OB_OK) st = ob_csv_close(&c, e);
    free(rank);
    return st;
}

/* hp_sweep.csv: the lines of ob_hp_sweeps_find, a row per configuration */
static ob_status write_hp_sweep(const ob_dataset *d, const ob_stats *s, const ob_hp_sweeps *h,
                                const char *dir, ob_err *e)
{
    ob_csv c;
    OB_TRY(ob_csv_open(&c, dir, "hp_sweep.csv",
                       HDR("workload", "key", "line", "value", "best_lr", "seeds", "final_median",
                           "final_min", "final_max", "diverged_runs", "finished_runs",
                           "diverged_everywhere", "optimizer"),
                       e));
    for (int i = 0; i < h->n; i++) {
        const ob_hp_fig *f = &h->f[i];
        for (int l = 0; l < f->n_lines; l++)
            for (int j = 0; j < f->lines[l].n; j++) {
                const ob_hp_point *p = &f->lines[l].p[j];
                const ob_group *g = &s->g[p->group];
                const ob_lr_point *b = g->best >= 0 ? &g->lrs[g->best] : NULL;
                ob_csv_str(&c, d->wl_labels[f->wl]);
                ob_csv_str(&c, f->key);
                ob_csv_str(&c, f->lines[l].label);
                ob_csv_num(&c, p->value);
                ob_csv_num(&c, g->best_lr);
                ob_csv_int(&c, g->final.n);
                ob_csv_num(&c, g->final.median);
                ob_csv_num(&c, b ? b->min_finite : NAN);
                ob_csv_num(&c, b ? b->max_finite : NAN);
                ob_csv_int(&c, g->n_diverged);
                ob_csv_int(&c, g->n_finished);
                ob_csv_int(&c, ob_hp_diverged_everywhere(g));
                ob_csv_str(&c, d->opt_labels[g->opt]);
                ob_csv_row(&c);
            }
    }
    return ob_csv_close(&c, e);
}

/* ---- settings.csv -------------------------------------------------------- */

/* The defaults of optimizer name (NULL when this optbench has no such
 * optimizer: no settings) and of training, as a run stores them
 * (harness/run.c: the optimizer's object with "train" inside). */
static void default_json(const char *name, char *buf, size_t n)
{
    const ob_optimizer_def *od = ob_optimizer_find(name);
    ob_hp_values hv, tr;
    char opt[2000] = "{}", train[1000];
    if (od) {
        ob_hp_defaults(&hv, od->hp, od->n_hp);
        ob_hp_to_json(&hv, opt, sizeof opt);
    }
    ob_hp_defaults(&tr, ob_train_hp_defs, ob_train_hp_count);
    ob_hp_to_json(&tr, train, sizeof train);
    size_t l = strlen(opt);
    if (l > 0) opt[l - 1] = '\0'; /* drop '}' */
    snprintf(buf, n, "%s%s\"train\":%s}", opt, l > 2 ? "," : "", train);
}

ob_status ob_settings_diff(sqlite3 *db, const ob_dataset *d, int k, ob_setting_diff **out, int *n, ob_err *e)
{
    *out = NULL;
    *n = 0;
    const ob_rrun *r = NULL;
    for (int i = 0; i < d->n && !r; i++)
        if (d->runs[i].opt == k && !d->runs[i].confirm) r = &d->runs[i];
    for (int i = 0; i < d->n && !r; i++)
        if (d->runs[i].opt == k) r = &d->runs[i];
    if (!r) return OB_OK;
    /* a run whose hparams are not JSON (a damaged or hand-edited row): its
     * settings are unknown, which the one entry says (empty key) */
    sqlite3_stmt *jv = NULL;
    int valid = 0;
    if (sqlite3_prepare_v2(db, "SELECT json_valid(?1)", -1, &jv, NULL) == SQLITE_OK) {
        sqlite3_bind_text(jv, 1, r->hparams, -1, SQLITE_STATIC);
        valid = sqlite3_step(jv) == SQLITE_ROW && sqlite3_column_int(jv, 0) == 1;
    }
    sqlite3_finalize(jv);
    if (!valid) {
        if (!(*out = calloc(1, sizeof **out))) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
        snprintf((*out)->value, sizeof (*out)->value, "unknown: its runs' hparams are not JSON");
        *n = 1;
        return OB_OK;
    }
    char dflt[3200];
    default_json(r->optimizer, dflt, sizeof dflt);
    /* leaves by path ("train.clip_norm"), JSON's true and false as words;
     * the run's text over what a run that lacks a key ran with (?3,
     * ob_store_defaults_text: a key whose default changed what earlier
     * builds did reads as what they did) */
    static const char sql[] =
        "WITH a AS (SELECT CASE WHEN path = '$' THEN key ELSE replace(substr(path, 3), '\"', '') || '.' || key END "
        "           AS k, value AS v, type AS t, id FROM json_tree(json_patch(coalesce(?3, '{}'), ?1)) "
        "           WHERE type NOT IN ('object', 'array') AND fullkey <> '$'), "
        "     b AS (SELECT CASE WHEN path = '$' THEN key ELSE replace(substr(path, 3), '\"', '') || '.' || key END "
        "           AS k, value AS v, type AS t FROM json_tree(?2) "
        "           WHERE type NOT IN ('object', 'array') AND fullkey <> '$') "
        "SELECT a.k, CASE a.t WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE a.v END, "
        "       (SELECT CASE b.t WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE b.v END FROM b WHERE b.k = a.k) "
        "FROM a WHERE a.k <> 'lr' AND a.v IS NOT (SELECT b.v FROM b WHERE b.k = a.k) ORDER BY a.id";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return ob_fail(e, OB_ERR_IO, "reading the settings of %s: %s", d->opt_labels[k], sqlite3_errmsg(db));
    sqlite3_bind_text(q, 1, r->hparams, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, dflt, -1, SQLITE_STATIC);
    const ob_optimizer_def *od = ob_optimizer_find(r->optimizer);
    const char *absent = od ? ob_store_defaults_text(od, NULL) : NULL;
    if (absent) sqlite3_bind_text(q, 3, absent, -1, SQLITE_STATIC);
    int cap = 0, rc;
    ob_status st = OB_OK;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            ob_setting_diff *m = realloc(*out, (size_t)cap * sizeof *m);
            if (!m) {
                st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
                break;
            }
            *out = m;
        }
        ob_setting_diff *s = &(*out)[(*n)++];
        const char *key = (const char *)sqlite3_column_text(q, 0), *v = (const char *)sqlite3_column_text(q, 1),
                   *dv = (const char *)sqlite3_column_text(q, 2);
        snprintf(s->key, sizeof s->key, "%s", key ? key : "");
        snprintf(s->value, sizeof s->value, "%s", v ? v : "");
        snprintf(s->dflt, sizeof s->dflt, "%s", dv ? dv : "");
    }
    if (st == OB_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
        st = ob_fail(e, OB_ERR_IO, "reading the settings of %s: %s (hparams not JSON?)", d->opt_labels[k],
                     sqlite3_errmsg(db));
    sqlite3_finalize(q);
    if (st != OB_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return st;
}

static ob_status write_settings(sqlite3 *db, const ob_dataset *d, const char *dir, ob_err *e)
{
    static const char *const hdr[] = {"optimizer", "name", "key", "value", "default"};
    ob_csv c;
    OB_TRY(ob_csv_open(&c, dir, "settings.csv", hdr, 5, e));
    ob_status st = OB_OK;
    for (int k = 0; k < d->n_opt && st == OB_OK; k++) {
        ob_setting_diff *s = NULL;
        int n = 0;
        if ((st = ob_settings_diff(db, d, k, &s, &n, e)) != OB_OK) break;
        for (int i = 0; i < n; i++) {
            ob_csv_str(&c, d->opt_labels[k]);
            ob_csv_str(&c, d->opt_names[k]);
            ob_csv_str(&c, s[i].key);
            ob_csv_str(&c, s[i].value);
            ob_csv_str(&c, s[i].dflt);
            ob_csv_row(&c);
        }
        free(s);
    }
    ob_status cs = ob_csv_close(&c, st == OB_OK ? e : NULL);
    return st != OB_OK ? st : cs;
}

ob_status ob_export_tables(sqlite3 *db, const ob_dataset *d, const ob_stats *s, const char *dir,
                           ob_err *e)
{
    int *rank = malloc(((size_t)s->n_g + 1) * sizeof *rank);
    if (!rank) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    ob_stats_rank(s, rank);
    ob_status st = write_runs(d, dir, e);
    if (st == OB_OK) st = write_recorded(db, d, dir, e);
    if (st == OB_OK) st = write_summary(d, s, rank, dir, e);
    if (st == OB_OK) st = write_best_series(db, d, s, dir, e);
    if (st == OB_OK) st = write_targets_cost(d, s, dir, e);
    if (st == OB_OK) st = write_paired(d, s, dir, e);
    if (st == OB_OK) st = write_best_configs(d, s, dir, e);
    if (st == OB_OK) st = write_tuned_profile(d, s, dir, e);
    if (st == OB_OK) st = write_budget(d, s, dir, e);
    if (st == OB_OK) st = write_settings(db, d, dir, e);
    if (st == OB_OK && ob_stats_has_confirm(s)) st = write_confirm(d, s, dir, e);
    else if (st == OB_OK) {
        /* an earlier report into this folder may have left one */
        remove_stale(dir, "confirm.csv");
    }
    if (st == OB_OK) {
        ob_hp_sweeps h;
        st = ob_hp_sweeps_find(d, s, &h, e);
        if (st == OB_OK && h.n) st = write_hp_sweep(d, s, &h, dir, e);
        else if (st == OB_OK) {
            /* no sweep besides the lr: no file (an earlier report may have left one) */
            remove_stale(dir, "hp_sweep.csv");
        }
        ob_hp_sweeps_free(&h);
    }
    free(rank);
    return st;
}
