/* plots/fig_profile.c - the performance profiles over all workloads (profile.csv
 * and profile_tuned.csv): how often each optimizer is within a factor tau of
 * the fastest. */
#include "plots/fig_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One performance profile figure: n curves from csv (tau, then a column
 * each), curve o from column col[o] (NULL: o + 2) labelled label[o], in
 * line type lt[o], with area[o] and ran[o] (of the profile's workloads, how
 * many it ran on); tuned: the profile of the tuned optimizers (each at its
 * fastest configuration per workload, configs[o] of them); single: each
 * optimizer's configuration with the largest area, of configs[o]. */
typedef struct profile_view {
    const char *stem, *csv;
    const char *band_csv;        /* its curves' bands over the seeds' resamples (NULL: none), two columns a curve */
    int n;
    const char *const *label;
    const int *lt, *ran, *configs, *col;
    const double *area;
    int tuned, single;
} profile_view;

/* The most studies of an optimizer of the profile v (0 but for the tuned
 * profile of a search with studies): with studies, each optimizer's time
 * is the median of the studies' fastest. */
static int profile_studies(const ob_stats *s, const profile_view *v)
{
    int studies = 0;
    for (int o = 0; v->tuned && s->tuned_studies && o < v->n; o++)
        if (s->tuned_studies[o] > studies) studies = s->tuned_studies[o];
    return studies;
}

/* The profile's title, axes and legend's place. */
static void profile_header(FILE *f, const ob_stats *s, const profile_view *v, int studies)
{
    fprintf(f,
            "set title \"%s over %d workload%s: how often %s within a "
            "factor tau of the fastest?\\n(%s to reach each workload's %starget %s; legend: area "
            "under the curve, 1 = fastest everywhere)\"\n"
            "set xlabel \"tau (time to target / fastest optimizer's time to target%s)\"\n"
            "set ylabel \"fraction of workloads\"\n"
            "%s"
            "set xrange [1:%g]\n"
            "# a little room below 0: a curve at 0 (never within tau) is not hidden under the axis\n"
            "set yrange [-0.04:1.05]\n"
            "set ytics 0, 0.2, 1\n"
            "set key below left\n",
            v->tuned && studies > 1 ? "Tuned optimizers (each at the median over its studies of their fastest)"
            : v->tuned  ? "Tuned optimizers (each at its fastest configuration)"
            : v->single ? "Performance profile, each optimizer at its best single configuration,"
                        : "Performance profile",
            s->profile_workloads, s->profile_workloads == 1 ? "" : "s",
            v->tuned ? "is each" : "is each optimizer",
            s->profile_by_steps ? "steps" : "training time", s->profile_heldout ? "held-out " : "",
            s->profile_heldout && s->heldout_metric ? "metric" : "loss", s->tau_log ? ", log scale" : "",
            s->tau_log ? "# past tau 16 on a log2 axis, as Dolan and More draw it (profile.csv's taus are even on it)\n"
                         "set logscale x 2\nset format x \"%g\"\n"
                       : "",
            s->tau_max);
}

/* The legend's entry of the bands */
#define BAND_KEY "shade: the seeds' noise, 95%"

/* The profile's legend: an entry per curve, and one for the bands. */
static void profile_key(script *sc, const ob_stats *s, const profile_view *v)
{
    size_t key_len = 0;
    for (int o = 0; o < v->n; o++) {
        /* "LABEL (area 0.33)", ", best of 16" when tuned, and ", ran 1 of 3" where it ran on fewer */
        size_t len = strlen(v->label[o]) + 12 + (v->tuned || v->single ? 14 : 0) +
                     (v->tuned && s->tuned_studies && s->tuned_studies[o] > 1 ? 22 : 0) +
                     (v->ran[o] < s->profile_workloads ? 16 : 0);
        if (len > key_len) key_len = len;
    }
    if (v->band_csv && strlen(BAND_KEY) > key_len) key_len = strlen(BAND_KEY);
    ob_fig_key_fit(sc, v->n + (v->band_csv != NULL), key_len);
}

/* After curve o's area in its legend entry, into ran (n bytes): of how
 * many configurations (and studies) it picked, and on how many workloads
 * it ran where fewer than all: an optimizer not run on some workloads
 * counts as not reaching the target there. */
static void profile_ran_note(const ob_stats *s, const profile_view *v, int o, char *ran, size_t n)
{
    size_t rl = 0;
    ran[0] = 0;
    const int k_st = v->tuned && s->tuned_studies ? s->tuned_studies[o] : 0;
    if (k_st > 1) /* AlgoPerf's studies: the median of their best */
        rl += (size_t)snprintf(ran, n, ", median of %d studies' best of %d", k_st, v->configs[o] / k_st);
    else if (v->tuned || v->single)
        rl += (size_t)snprintf(ran, n, ", best of %d", v->configs[o]);
    if (v->ran[o] < s->profile_workloads)
        snprintf(ran + rl, n - rl, ", ran %d of %d", v->ran[o], s->profile_workloads);
}

/* The profile's plot command: each curve as steps, its markers, and its
 * legend entry. */
static void profile_plot(FILE *f, const ob_stats *s, const profile_view *v)
{
    fprintf(f, "plot \\\n");
    /* first the bands, under every curve: the 2.5% to 97.5% range of each
     * curve over the resamples of the seeds (style.gp's transparent fill) */
    for (int o = 0; v->band_csv && o < v->n; o++) {
        const int col = v->col ? v->col[o] : o + 2;
        fprintf(f, "  '%s' skip 1 using 1:%d:%d with filledcurves lt %d notitle, \\\n", v->band_csv, 2 * col - 2,
                2 * col - 1, v->lt[o]);
    }
    /* markers on each curve (values of the CSV, so on the curve), each
     * optimizer's at other rows: curves that coincide (two optimizers equally
     * fast everywhere, or never within tau) still show every marker */
    int every = s->n_tau / 10 > 1 ? s->n_tau / 10 : 1;
    for (int o = 0; o < v->n; o++) {
        char oq[512];
        ob_gp_str(v->label[o], oq, sizeof oq);
        /* later lines thinner and with their own dashes (style.gp), so coinciding curves stay visible */
        double lw = 4.5 - 1.0 * (o % 4);
        char ran[96];
        profile_ran_note(s, v, o, ran, sizeof ran);
        fprintf(f,
                "%s  '%s' skip 1 using 1:%d with steps lt %d lw %.1f notitle, \\\n"
                "  '%s' skip 1 every %d::%d using 1:%d with points lt %d ps (1.3 * PS) notitle, \\\n"
                "  NaN with linespoints lt %d lw %.1f ps (1.3 * PS) title \"%s (area %.3f%s)\"",
                o ? ", \\\n" : "", v->csv, v->col ? v->col[o] : o + 2, v->lt[o], lw, v->csv, every, (o * 7) % every,
                v->col ? v->col[o] : o + 2, v->lt[o],
                v->lt[o], lw, oq, isnan(v->area[o]) ? 0.0 : v->area[o], ran);
    }
    if (v->band_csv) fprintf(f, ", \\\n  NaN with filledcurves lc rgb \"#555555\" title \"%s\"", BAND_KEY);
    fprintf(f, "\n");
}

/* The profile's caption. */
static ob_status profile_caption(const ob_dataset *d, const ob_stats *s, const profile_view *v, int studies,
                                 const char *title, ob_figures *out, ob_err *e)
{
    /* past FIG_MAX_CONFIGS configurations, one curve per optimizer */
    char single[600] = "";
    if (v->single)
        snprintf(single, sizeof single,
                 " With %d configurations, it draws each optimizer at its configuration with the largest area "
                 "(the legend says of how many: \"best of 8\"), the one setting that does best over all the "
                 "workloads, where the tuned profile lets each workload take its fastest; profile.csv and "
                 "profile_area.csv hold every configuration's curve and area.",
                 d->n_opt);
    /* the bands of the seeds' noise */
    char band[400] = "";
    if (v->band_csv)
        snprintf(band, sizeof band,
                 " The shade around each curve is the seeds' noise in it: at each tau, the 2.5%% to 97.5%% range of "
                 "the curve over " OB_PROFILE_BOOT_TEXT " bootstrap resamples of the seeds (%s; each tau on its "
                 "own), the targets, lrs and step times held; a curve without a shade is the same in nearly "
                 "every resample.",
                 v->band_csv);
    /* training time from median step times on some workloads */
    char names[160], median_note[400] = "";
    const int n_median = s->profile_by_steps ? 0 : ob_stats_median_timed(d, s, 1, names, sizeof names);
    if (n_median)
        snprintf(median_note, sizeof median_note,
                 " Training time from median step times on %s: some runs there predate the mean (schema < 4), "
                 "so every optimizer there is timed by its median.", names);
    return ob_fig_add(out, e, v->stem, -1, title,
                   "For each optimizer%s, the fraction of workloads (y) on which its %s to reach the %starget "
                   "%s is within a factor tau (x) of the fastest optimizer on that workload. A curve that "
                   "rises early and high is better; the value at tau = 1 is the fraction of workloads it "
                   "won. The area (legend) averages the curve over tau in [1, %g]%s. Workloads that no "
                   "optimizer reached the target on are left out (%d used).%s An optimizer not run on a "
                   "workload counts there as not reaching the target; the legend says where one ran on "
                   "fewer (\"ran 1 of 3\").%s%s%s",
                   v->tuned && studies > 1
                       ? ", on each workload at the median over its studies of each study's fastest configuration "
                         "(AlgoPerf's external tuning: the best of a study's trials, the median of the studies)"
                   : v->tuned ? ", at its fastest configuration on each workload (AlgoPerf's external tuning: the "
                                "best of its trials)"
                              : "",
                   s->profile_by_steps ? "number of steps" : "training time", s->profile_heldout ? "held-out " : "",
                   s->profile_heldout && s->heldout_metric ? "metric" : "loss", s->tau_max,
                   s->tau_log ? " (the axis is logarithmic past tau 16, the area is over tau itself: the curve's "
                                "right part, drawn narrower, weighs more in the area than it looks)" : "",
                   s->profile_workloads, median_note,
                   v->tuned ? " The legend says how many configurations each picked its fastest from (\"best of "
                              "16\"): the more it had, the more a lucky configuration helps it, so compare "
                              "optimizers given the same number (profile_tuned_picks.csv names each pick)." : "",
                   band, single);
}

/* The performance profile v (profile.csv or profile_tuned.csv): its
 * script and caption, or a note where no workload enters it. */
static ob_status fig_profile_view(const ob_dataset *d, const ob_stats *s, const profile_view *v, const char *dir,
                                  ob_figures *out, ob_err *e)
{
    const char *title = v->tuned ? "Performance profile of the tuned optimizers" : "Performance profile";
    if (s->profile_workloads == 0) {
        return ob_fig_add_skipped(out, e, v->stem, -1, title,
                           "Not drawn: no workload enters the profile (on each, no optimizer reached the target "
                           "loss, or the loss met it before training).");
    }
    script sc;
    char what[160];
    snprintf(what, sizeof what, "%s (tau, then one column per optimizer)", v->csv);
    OB_TRY(ob_fig_script_open(&sc, dir, v->stem,
                       v->tuned ? "performance profile of the tuned optimizers, each at its fastest configuration"
                                : "performance profile over workloads (Dolan-More)",
                       what, e));
    const int studies = profile_studies(s, v);
    profile_header(sc.f, s, v, studies);
    profile_key(&sc, s, v);
    profile_plot(sc.f, s, v);
    OB_TRY(ob_fig_script_close(&sc, e));
    return profile_caption(d, s, v, studies, title, out, e);
}

ob_status ob_fig_profile(const ob_dataset *d, const ob_stats *s, const char *dir,
                      ob_figures *out, ob_err *e)
{
    if (d->n_opt == 0) return OB_OK;
    const int n = s->n_tuned > d->n_opt ? s->n_tuned : d->n_opt;
    int *lt = malloc(((size_t)n + 1) * sizeof *lt);
    const char **label = malloc(((size_t)n + 1) * sizeof *label);
    if (!lt || !label) {
        free(lt);
        free(label);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    for (int o = 0; o < d->n_opt; o++) lt[o] = o + 1;
    const char *band = s->band_lo ? "profile_band.csv" : NULL;
    profile_view v = {"profile", "profile.csv", band, d->n_opt, (const char *const *)d->opt_labels, lt,
                      s->profile_ran, NULL, NULL, s->area, 0, 0};
    ob_status st = OB_OK;
    if (d->n_opt > FIG_MAX_CONFIGS && s->n_tuned > 0) {
        /* too many curves to tell apart: each optimizer's configuration with
         * the largest area (ties: the first), in its own line type */
        int *pick = malloc(((size_t)s->n_tuned + 1) * 4 * sizeof *pick);
        if (!pick) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
        for (int i = 0; i < s->n_tuned && st == OB_OK; i++) {
            int best = s->tuned_first[i];
            for (int o = best + 1; o < d->n_opt; o++)
                if (!strcmp(d->opt_names[o], d->opt_names[best]) &&
                    (isnan(s->area[best]) ? !isnan(s->area[o]) : s->area[o] > s->area[best]))
                    best = o;
            pick[i] = best;
        }
        if (st == OB_OK) {
            int *plt = pick + s->n_tuned, *col = plt + s->n_tuned, *ran = col + s->n_tuned;
            for (int i = 0; i < s->n_tuned; i++) {
                plt[i] = pick[i] + 1;
                col[i] = pick[i] + 2;
                ran[i] = s->profile_ran[pick[i]];
                label[i] = d->opt_labels[pick[i]];
            }
            profile_view sv = {"profile", "profile.csv", band, s->n_tuned, label, plt, ran, s->tuned_configs, col,
                               NULL, 0, 1};
            double *area = malloc(((size_t)s->n_tuned + 1) * sizeof *area);
            if (!area) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
            for (int i = 0; st == OB_OK && i < s->n_tuned; i++) area[i] = s->area[pick[i]];
            sv.area = area;
            if (st == OB_OK) st = fig_profile_view(d, s, &sv, dir, out, e);
            free(area);
        }
        free(pick);
    } else {
        st = fig_profile_view(d, s, &v, dir, out, e);
    }
    if (st == OB_OK && s->n_tuned > 0) {
        /* each optimizer in its own colour, marker and dashes */
        for (int i = 0; i < s->n_tuned; i++) {
            lt[i] = ob_fig_own_lt(d, s->tuned_first[i]);
            label[i] = d->opt_names[s->tuned_first[i]];
        }
        profile_view tv = {"profile_tuned", "profile_tuned.csv", s->tuned_band_lo ? "profile_tuned_band.csv" : NULL,
                           s->n_tuned, label, lt, s->tuned_ran, s->tuned_configs, NULL, s->tuned_area, 1, 0};
        st = fig_profile_view(d, s, &tv, dir, out, e);
    }
    free(lt);
    free(label);
    return st;
}
