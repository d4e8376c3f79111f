/* plots/doc_profile.c - the report's section "Across workloads": the
 * performance profile's table, the notes that qualify it, the seeds' noise
 * in its areas, its figures, and the tuned optimizers' profile. */
#include "plots/doc_profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/profile.h"

int ob_doc_profile_stem(const char *stem)
{
    return !strcmp(stem, "profile") || !strcmp(stem, "time_to_target") ? 1 : !strcmp(stem, "profile_tuned") ? 2 : 0;
}

/* The integer of a top-level key of a stored configuration text ("key: 3"),
 * or dflt where it has none. */
static long long config_int(const char *t, const char *key, long long dflt)
{
    const size_t k = strlen(key);
    for (const char *at = t; at; at = strchr(at, '\n')) {
        if (*at == '\n') at++;
        if (!strncmp(at, key, k) && at[k] == ':') return strtoll(at + k + 1, NULL, 10);
    }
    return dflt;
}

/* The quasi-random searches (benchmarks with trials) whose runs d holds:
 * their search seeds into list (cap bytes, "0, 1, 2"; the first eight):
 * returns how many distinct searches (a seed and the draws, search_draws,
 * of builds before or after 2026-12-06), 0 when none, -1 when the
 * benchmarks cannot be read (list then says why). Each seed is another
 * draw of the search's points: several are AlgoPerf's studies. *config_studies
 * gets whether one of them ran several (config studies). */
static int search_seeds(sqlite3 *db, const ob_dataset *d, char *list, size_t cap, int *config_studies)
{
    list[0] = '\0';
    *config_studies = 0;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT config FROM benchmarks WHERE id IN (SELECT DISTINCT benchmark_id FROM runs) "
                           "AND (?1 <= 0 OR id = ?1) ORDER BY id",
                           -1, &q, NULL) != SQLITE_OK) {
        snprintf(list, cap, "%s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_int64(q, 1, d->benchmark_id);
    long long seen[64][2];
    int n = 0, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(q, 0);
        if (!t || config_int(t, "trials", 0) <= 0) continue; /* not a search */
        *config_studies |= config_int(t, "studies", 1) > 1;
        const long long seed = config_int(t, "search_seed", 0), draws = config_int(t, "search_draws", 1);
        int i = 0;
        while (i < n && (seen[i][0] != seed || seen[i][1] != draws)) i++;
        if (i < n || n == 64) continue;
        seen[n][0] = seed;
        seen[n++][1] = draws;
    }
    int mixed = 0; /* searches of both draws: each seed says which */
    for (int i = 1; i < n; i++) mixed |= seen[i][1] != seen[0][1];
    for (int i = 0; i < n && i < 9; i++) {
        const size_t l = strlen(list);
        if (i == 8) snprintf(list + l, cap - l, ", ...");
        else if (mixed)
            snprintf(list + l, cap - l, "%s%lld of search_draws %lld", i ? ", " : "", seen[i][0], seen[i][1]);
        else snprintf(list + l, cap - l, "%s%lld", i ? ", " : "", seen[i][0]);
    }
    if (rc != SQLITE_DONE) {
        snprintf(list, cap, "%s", sqlite3_errmsg(db));
        n = -1;
    }
    sqlite3_finalize(q);
    return n;
}

/* An area's cells beyond the area itself: its interval over the seeds'
 * resamples, "[0.512, 0.833]", and the share of them in which it was the
 * largest, "64%" ("-" each without a bootstrap: ob_stats.n_boot). */
static void area_boot_cells(ob_doc *dc, const ob_stats *s, double lo, double hi, double first)
{
    if (!s->n_boot || isnan(lo)) {
        ob_doc_cell(dc, "-");
        ob_doc_cell(dc, "-");
        return;
    }
    ob_doc_cell(dc, "[%.3f, %.3f]", lo, hi);
    if (first > 0 && first < 0.005) ob_doc_cell(dc, "under 1%%");
    else if (first < 1 && first > 0.995) ob_doc_cell(dc, "over 99%%");
    else ob_doc_cell(dc, "%.0f%%", 100 * first);
}

/* What the area's interval and its share of the largest are, under a
 * table of areas. */
static void area_boot_note(ob_doc *dc, const ob_stats *s)
{
    if (!s->n_boot) return;
    char few[320] = "Areas whose intervals overlap are not told apart by these seeds.";
    if (s->boot_seeds <= 1)
        snprintf(few, sizeof few, "With one seed every resample is that seed: the interval is the area itself and "
                 "says nothing of the seeds' noise; run more seeds (--seeds).");
    else if (s->boot_seeds <= 5)
        snprintf(few, sizeof few, "With %d seeds a workload's resamples are %d distinct sets of seeds, so the "
                 "interval is %snarrower than the noise it stands for (as a bootstrap of few values is); run more "
                 "seeds (--seeds) before reading much into areas whose intervals overlap.", s->boot_seeds,
                 ob_stat_resample_sets(s->boot_seeds), s->boot_seeds <= 3 ? "coarse and " : "");
    ob_doc_p(dc, "The interval and \"largest area in\" are the seeds' noise: %d resamples of the seeds (on each "
              "workload as many seeds as a group has, drawn with replacement, the same draws for optimizers "
              "with the same seeds, whose runs share initialization and data order), each optimizer's time to "
              "target recomputed from the drawn seeds (its lr picked afresh), then the profile; the interval "
              "holds the middle 95%% of its areas, and the share counts the resamples in which its area was "
              "the largest (ties share; none where no optimizer got to any target). Targets, lr grids and step "
              "times stay as they are. %s",
          s->n_boot, few);
}

/* The profile of the tuned optimizers (ob_stats.n_tuned > 0): each
 * optimizer on each workload at its fastest configuration there. */
static void doc_tuned_profile(sqlite3 *db, ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    const int n = s->n_tuned;
    int lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        if (!lo || s->tuned_configs[i] < lo) lo = s->tuned_configs[i];
        if (s->tuned_configs[i] > hi) hi = s->tuned_configs[i];
    }
    char range[160];
    if (lo == hi) snprintf(range, sizeof range, "here each had %d", lo);
    else
        snprintf(range, sizeof range, "here they had from %d to %d (the configurations column), so compare "
                 "optimizers given the same number", lo, hi);
    ob_doc_p(dc, "Tuned optimizers: the sweeps made several configurations of some optimizers, and the profile "
              "above counts each configuration as an optimizer of its own. Here each optimizer counts once, on "
              "each workload at its fastest configuration there (AlgoPerf's external tuning scores a submission "
              "by its fastest trial on each workload), by the same %s. The fastest of several is partly the "
              "luckiest, so an optimizer with more configurations is favoured for that alone: %s.",
          s->profile_by_steps ? "steps" : "time", range);
    int k_st = 0;
    for (int i = 0; i < n; i++)
        if (s->tuned_studies && s->tuned_studies[i] > k_st) k_st = s->tuned_studies[i];
    char seeds[400];
    int config_studies = 0;
    const int n_searches = search_seeds(db, d, seeds, sizeof seeds, &config_studies);
    if (n_searches < 0)
        ob_doc_p(dc, "(The benchmarks' configurations could not be read, %s: whether these configurations come from "
                  "several searches is not said here.)", seeds);
    /* a benchmark's search is a study (or K, config studies): each optimizer
     * is scored over its studies as AlgoPerf does */
    char from[560] = "config studies";
    if (n_searches > 1)
        snprintf(from, sizeof from, "%s%d benchmarks whose %ssearch seeds are %s",
                 config_studies ? "config studies of " : "", n_searches, config_studies ? "first " : "", seeds);
    if (k_st > 1)
        ob_doc_p(dc, "The configurations come from %d studies (searches of other search seeds: %s): as AlgoPerf "
                  "scores them, an optimizer's %s on a workload is the median over the studies of each study's "
                  "fastest trial (of two middle ones the slower), and the table names the trial of that study; "
                  "the legend says of how many trials each study's fastest is.",
              k_st, from, s->profile_by_steps ? "steps" : "time");
    static const char *const hdr[] = {"rank", "optimizer", "configurations", "profile area",
                                      "95% interval (seeds)", "largest area in", "workloads won",
                                      "fastest configuration on each workload"};
    ob_doc_table(dc, 8, hdr);
    char b1[64];
    for (int r = 1; r <= n; r++)
        for (int i = 0; i < n; i++) {
            if (ob_stats_tuned_rank(s, i) != r) continue;
            ob_doc_cell(dc, "%d", r);
            ob_doc_cell(dc, "%s", d->opt_names[s->tuned_first[i]]);
            const int k_i = s->tuned_studies ? s->tuned_studies[i] : 0;
            if (k_i > 1) ob_doc_cell(dc, "%d (%d studies of %d)", s->tuned_configs[i], k_i, s->tuned_configs[i] / k_i);
            else ob_doc_cell(dc, "%d", s->tuned_configs[i]);
            ob_doc_cell(dc, "%s", isnan(s->tuned_area[i]) ? "-"
                               : (snprintf(b1, sizeof b1, "%.3f", s->tuned_area[i]), b1));
            area_boot_cells(dc, s, s->n_boot ? s->tuned_area_lo[i] : NAN, s->n_boot ? s->tuned_area_hi[i] : NAN,
                            s->n_boot ? s->tuned_area_first[i] : NAN);
            ob_doc_cell(dc, "%s", isnan(s->tuned_rho[i]) ? "-"
                               : (snprintf(b1, sizeof b1, "%.0f of %d", s->tuned_rho[i] * s->profile_workloads,
                                           s->profile_workloads), b1));
            char picks[1024] = "";
            size_t len = 0;
            for (int w = 0; w < d->n_wl && len + 1 < sizeof picks; w++) {
                if (!s->in_profile[w]) continue;
                const int k = s->tuned_pick[w * n + i];
                const char *c = k >= 0 ? ob_dataset_opt_config(d, s->g[k].opt) : NULL;
                len += (size_t)snprintf(picks + len, sizeof picks - len, "%s%s: %s", len ? "; " : "",
                                        d->wl_labels[w], k < 0 ? "not reached" : c ? c : "its one");
            }
            ob_doc_cell(dc, "%s", picks[0] ? picks : "-");
            ob_doc_row_end(dc);
        }
    ob_doc_table_end(dc);
    area_boot_note(dc, s);
}

/* The section's heading and what the profile is, and on which target. */
static void profile_intro(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    ob_doc_h(dc, 2, "Across workloads: time to target and performance profile");
    ob_doc_p(dc, "The performance profile (Dolan and More, as in AlgoPerf) counts, for each optimizer, "
              "the fraction of workloads on which its %s to the %starget is within a factor tau of the "
              "fastest optimizer there; the score is the area under that curve for tau in [1, %g], "
              "normalized so 1 means fastest on every workload and 0 means never within %gx. %d of %d "
              "workloads entered (a workload where no optimizer reached its target, or whose target the "
              "loss met before training, is left out; an "
              "optimizer left out of a workload's matrix counts as not reaching the target there; each "
              "configuration of a swept workload counts as a workload of its own).",
          s->profile_by_steps ? "number of steps" : "training time",
          s->profile_heldout ? "held-out " : "", s->tau_max, s->tau_max, s->profile_workloads, d->n_wl);
    if (s->profile_heldout)
        ob_doc_p(dc, "On the held-out target (--profile-on heldout): only workloads evaluated during training "
                  "(eval_every > 0)%s can enter; the time-to-target figure below stays on the training loss.",
              s->heldout_metric ? " that have a held-out metric (--heldout-on metric)" : "");
}

/* The optimizers that ran on fewer of the profile's workloads: their area
 * is low for that alone. */
static void profile_not_everywhere(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    char few[512] = "";
    int n_few = 0;
    for (int op = 0; op < d->n_opt; op++) {
        if (s->profile_workloads == 0 || s->profile_ran[op] >= s->profile_workloads) continue;
        const size_t len = strlen(few);
        if (n_few++ < 6)
            snprintf(few + len, sizeof few - len, "%s%s ran on %d", len ? ", " : "", d->opt_labels[op],
                     s->profile_ran[op]);
        else if (n_few == 7)
            snprintf(few + len, sizeof few - len, ", ...");
    }
    if (n_few)
        ob_doc_p(dc, "Not run everywhere: of the %d workloads in the profile, %s. On the others %s as not "
                  "reaching the target, so %s area is lower for that alone; compare %s only on the workloads "
                  "%s ran on (the time-to-target tables, or the workloads run column below).",
              s->profile_workloads, few, n_few == 1 ? "it counts" : "they count", n_few == 1 ? "its" : "their",
              n_few == 1 ? "it" : "them", n_few == 1 ? "it" : "they");
}

/* The workloads timed by median step times, where the profile is by time. */
static void profile_median_timed(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    if (s->profile_by_steps) return;
    char names[160];
    const int n_median = ob_stats_median_timed(d, s, 1, names, sizeof names);
    if (n_median)
        ob_doc_p(dc, "In the profile, training time from median step times on %d workload%s (%s): some of %s "
                  "runs predate the mean (schema < 4); within each workload every optimizer is timed the "
                  "same way.",
              n_median, n_median == 1 ? "" : "s", names, n_median == 1 ? "its" : "their");
}

/* Where the profile is by time, a caution on the workloads whose order by
 * time rests on timings that say little. */
static void profile_noisy(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    if (s->profile_by_steps) return;
    /* the workloads whose time-to-target paragraph has the caution: more
     * than one optimizer reached the target, one of them on such timings */
    int noisy = 0;
    for (int w = 0; w < d->n_wl; w++) {
        int reached = 0, bad = 0;
        for (int k = 0; k < s->n_g; k++) {
            const ob_group *g = &s->g[k];
            if (g->wl != w || ob_group_ttt(&s->g[k], s->profile_heldout).censored) continue;
            reached++;
            bad |= g->step_ms_spread > OB_STEP_SPREAD_UNSTEADY || ob_group_busy(g) ||
                   g->step_ms_median < OB_STEP_TINY_MS;
        }
        noisy += reached > 1 && bad;
    }
    if (noisy)
        ob_doc_p(dc, "Caution: on %d of these workloads the order by time rests on unsteady step times, a busy "
                  "machine's, or steps under 50 microseconds (see %s time-to-target paragraph%s); `--profile-by steps` compares "
                  "steps instead.", noisy, noisy == 1 ? "its" : "their", noisy == 1 ? "" : "s");
}

/* The profile's table: each optimizer's area, workloads run, won and
 * reached, by rank. */
static void profile_table(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    char b1[64];
    static const char *const phdr[] = {"rank",           "optimizer",     "profile area",  "95% interval (seeds)",
                                       "largest area in", "workloads run", "workloads won", "workloads reached"};
    ob_doc_table(dc, 8, phdr);
    /* tied areas share a rank (1, 2, 2, 4) */
    for (int r = 1; r <= d->n_opt; r++)
        for (int op = 0; op < d->n_opt; op++) {
            if (ob_stats_profile_rank(s, op) != r) continue;
            int reached = 0;
            for (int k = 0; k < s->n_g; k++)
                if (s->g[k].opt == op && !ob_group_ttt(&s->g[k], s->profile_heldout).censored) reached++;
            ob_doc_cell(dc, "%d", r);
            ob_doc_cell(dc, "%s", d->opt_labels[op]);
            ob_doc_cell(dc, "%s", isnan(s->area[op]) ? "-" : (snprintf(b1, sizeof b1, "%.3f", s->area[op]), b1));
            area_boot_cells(dc, s, s->n_boot ? s->area_lo[op] : NAN, s->n_boot ? s->area_hi[op] : NAN,
                            s->n_boot ? s->area_first[op] : NAN);
            ob_doc_cell(dc, "%d of %d", s->profile_ran[op], s->profile_workloads);
            ob_doc_cell(dc, "%s", isnan(s->rho[op]) ? "-"
                               : (snprintf(b1, sizeof b1, "%.0f of %d", s->rho[op] * s->profile_workloads,
                                           s->profile_workloads), b1));
            ob_doc_cell(dc, "%d", reached);
            ob_doc_row_end(dc);
        }
    ob_doc_table_end(dc);
}

/* The workloads where optimizers share the first place of the
 * time-to-target table, which the profile tells apart by a hair. */
static void profile_shared_firsts(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    /* a win by a point estimate that the time-to-target table ties within
     * the noise: the profile gives the one a whole win and the other an
     * area below it */
    int tied = 0, cut = 0;
    char names[400] = "";
    for (int w = 0; w < d->n_wl; w++) {
        if (!s->in_profile[w]) continue;
        int firsts = 0;
        for (int k = 0; k < s->n_g; k++)
            if (s->g[k].wl == w && (s->profile_heldout ? ob_stats_ev_rank(s, k) : ob_stats_tt_rank(s, k)) == 1)
                firsts++;
        if (firsts > 1) {
            /* the names while they fit, then "..." once */
            const size_t l = strlen(names);
            if (!cut && l + strlen(d->wl_labels[w]) + 8 < sizeof names)
                snprintf(names + l, sizeof names - l, "%s%s", tied ? ", " : "", d->wl_labels[w]);
            else if (!cut++)
                snprintf(names + l, sizeof names - l, "%s...", tied ? ", " : "");
            tied++;
        }
    }
    if (tied)
        ob_doc_p(dc, "On %d of these workloads (%s) optimizers share rank 1 in the time-to-target table, within "
                  "the noise of the seeds and the timing, but the profile is drawn from the times themselves: "
                  "the fastest of them by a hair counts a win there and the others an area a little below it. "
                  "Areas that close, and the workloads won, do not tell those optimizers apart; the tables' "
                  "shared ranks do.",
              tied, names);
}

/* The near misses, where the profile is on the training loss. */
static void profile_near_misses(ob_doc *dc, const ob_dataset *d, const ob_stats *s)
{
    if (s->profile_heldout) return;
    /* optimizers that missed a workload's target by a hair: the profile
     * counts them as not getting there at all */
    char near[600] = "";
    int n_near = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (!s->in_profile[g->wl] || !(g->tt_miss > 0 && g->tt_miss < 0.05)) continue;
        const size_t len = strlen(near);
        if (n_near++ < 6)
            snprintf(near + len, sizeof near - len, "%s%s on %s, %.1f%% above", len ? "; " : "",
                     d->opt_labels[g->opt], d->wl_labels[g->wl], 100 * g->tt_miss);
        else if (n_near == 7)
            snprintf(near + len, sizeof near - len, ", ...");
    }
    if (n_near)
        ob_doc_p(dc, "Near misses (an upper-median final loss at the best lr less than 5%% above the "
                  "workload's target): %s. The profile counts %s as not reaching the target there. A target "
                  "is a threshold: a miss this near takes that workload's whole share from an area, and a "
                  "slightly looser target (report --target WORKLOAD=LOSS) or more seeds could turn it, so "
                  "the areas, and the ranks they set, are less settled than the numbers suggest.",
              near, n_near == 1 ? "it" : "each");
}

/* The figures and the notes of figures not drawn of one kind of profile
 * (which, as ob_doc_profile_stem says). */
static void profile_figures(ob_doc *dc, const ob_figures *figs, const int *rendered, int which)
{
    for (int f = 0; f < figs->n; f++)
        if (ob_doc_profile_stem(figs->f[f].stem) == which) ob_doc_figure(dc, &figs->f[f], rendered[f]);
    for (int f = 0; f < figs->n_skipped; f++)
        if (ob_doc_profile_stem(figs->skipped[f].stem) == which) ob_doc_skipped(dc, &figs->skipped[f]);
}

/* "Across workloads": the performance profile's table with what qualifies
 * it (optimizers not run everywhere, median-timed or noisy workloads, shared
 * first places, near misses), its figures, and the tuned optimizers' profile
 * where there were several configurations. */
void ob_doc_profile(sqlite3 *db, ob_doc *dc, const ob_dataset *d, const ob_stats *s, const ob_figures *figs,
                    const int *rendered)
{
    profile_intro(dc, d, s);
    profile_not_everywhere(dc, d, s);
    profile_median_timed(dc, d, s);
    profile_noisy(dc, d, s);
    profile_table(dc, d, s);
    area_boot_note(dc, s);
    profile_shared_firsts(dc, d, s);
    profile_near_misses(dc, d, s);
    profile_figures(dc, figs, rendered, 1);
    if (s->n_tuned > 0) {
        doc_tuned_profile(db, dc, d, s);
        profile_figures(dc, figs, rendered, 2);
    }
}
