/* plots/fig_budget.c - the tuning budget of each workload (budget_WORKLOAD and
 * budget_heldout_WORKLOAD, from tuning_budget.csv): the best of k
 * configurations drawn at random, against k. */
#include "plots/fig_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/workload.h"

/* The trials of tuned optimizer i on workload w for the budget figure: the
 * final losses (heldout 0) or the held-out values (1: s->heldout_metric's,
 * negated for the metric), sorted ascending; how many (0: no held-out value
 * for some configuration). */
static int budget_trials(const ob_dataset *d, const ob_stats *s, int w, int i, int heldout, double *v)
{
    if (!heldout) return ob_stats_trial_losses(d, s, w, i, v);
    int n = ob_stats_trial_losses(d, s, w, i, v);
    return ob_stats_trial_heldout(d, s, w, i, s->heldout_metric, v) == n ? n : 0;
}

/* Whether tuned optimizer i has a line in the tuning budget: several
 * configurations (*n of them, their values in v), one at least with a
 * finite value (where every one diverged at every lr, the best of any k is
 * infinite: nothing to draw, and gnuplot refuses a series of no point). */
static int budget_line(const ob_dataset *d, const ob_stats *s, int w, int i, int heldout, double *v, int *n)
{
    *n = budget_trials(d, s, w, i, heldout, v);
    if (*n < 2) return 0;
    for (int j = 0; j < *n; j++)
        if (isfinite(v[j])) return 1;
    return 0;
}

/* The tuning budget of workload w as ob_fig_budget lays it out: its lines
 * (the tuned optimizers with several configurations, one at least with a
 * finite value), their values' range, those left out, the quantity drawn
 * and its columns. */
typedef struct budget_fig {
    int w, heldout;        /* the held-out values' figure (1) or the final losses' (0) */
    int metric;            /* held-out values of the metric (report --heldout-on metric) */
    double *v;             /* room for a tuned optimizer's values (budget_trials) */
    range yr;              /* the values drawn */
    int n_lines, kmax;     /* the lines; the most configurations of one */
    int any_inf;           /* a line with a point missing (its upper quartile at k = 1 infinite) */
    size_t key_len;        /* the longest legend entry */
    int all_diverged;      /* how many optimizers are left out (every configuration diverged at every lr), */
    char gone[400];        /* and their names */
    int logy;
    int col;               /* the columns of tuning_budget.csv: col q25, col + 1 median, col + 2 q75 */
    const char *qty;       /* "loss", or the metric by its name */
    char what[96];         /* "final held-out loss", say */
    char title[300], wq[512];
} budget_fig;

/* The lines of the tuning budget (bf's values from yr to gone). */
static void budget_scan(const ob_dataset *d, const ob_stats *s, budget_fig *bf)
{
    const double sign = bf->metric ? -1 : 1;
    bf->yr = (range){NAN, NAN};
    for (int i = 0; i < s->n_tuned; i++) {
        int n = 0;
        if (!budget_line(d, s, bf->w, i, bf->heldout, bf->v, &n)) {
            if (n >= 2) {
                const size_t l = strlen(bf->gone);
                snprintf(bf->gone + l, sizeof bf->gone - l, "%s%s", bf->all_diverged++ ? ", " : "",
                         d->opt_names[s->tuned_first[i]]);
            }
            continue;
        }
        bf->n_lines++;
        if (n > bf->kmax) bf->kmax = n;
        for (int j = 0; j < n; j++) ob_fig_range_add(&bf->yr, sign * bf->v[j]);
        bf->any_inf |= isinf(ob_stat_best_of_k(bf->v, n, 1, 0.75));
        size_t len = strlen(d->opt_names[s->tuned_first[i]]) + 24;
        if (len > bf->key_len) bf->key_len = len;
    }
}

/* The tuning budget without a line: no optimizer with several
 * configurations here (with held-out values), nothing; or each has them
 * all diverged at every lr, a note. */
static ob_status budget_not_drawn(const ob_dataset *d, const budget_fig *bf, const char *stem, ob_figures *out,
                                  ob_err *e)
{
    char title[300];
    if (bf->heldout) snprintf(title, sizeof title, "Tuning budget on %s (held-out)", d->wl_labels[bf->w]);
    else snprintf(title, sizeof title, "Tuning budget on %s", d->wl_labels[bf->w]);
    char why[600];
    snprintf(why, sizeof why, "every configuration of %s diverged at every lr: the best of any k of them is "
             "infinite, no line to draw", bf->gone);
    return bf->all_diverged ? ob_fig_add_skipped(out, e, stem, bf->w, title, why) : OB_OK;
}

/* The tuning budget's y axis, quantity (the metric by its name where the
 * workload is known: accuracy), columns, title and workload label. */
static void budget_names(const ob_dataset *d, budget_fig *bf)
{
    bf->logy = !bf->metric && ob_fig_spans_decades(&bf->yr);
    const ob_workload_def *wdef = ob_workload_find(d->wl_names[bf->w]);
    bf->qty = !bf->metric ? "loss" : wdef && wdef->metric_name ? wdef->metric_name : "metric";
    snprintf(bf->what, sizeof bf->what, "final %s%s", bf->heldout ? "held-out " : "", bf->qty);
    /* the columns of tuning_budget.csv: q25, median, q75 (the metric's band runs q25 to q75 as well) */
    bf->col = !bf->heldout ? 5 : bf->metric ? 11 : 8;
    if (bf->heldout)
        snprintf(bf->title, sizeof bf->title, "Tuning budget on %s (held-out %s)", d->wl_labels[bf->w], bf->qty);
    else snprintf(bf->title, sizeof bf->title, "Tuning budget on %s", d->wl_labels[bf->w]);
    ob_gp_str(d->wl_labels[bf->w], bf->wq, sizeof bf->wq);
}

/* Opens the tuning budget's script, stem.gp in dir. */
static ob_status budget_open(script *sc, const budget_fig *bf, const char *dir, const char *stem, ob_err *e)
{
    char desc[160];
    snprintf(desc, sizeof desc, "best %s among k configurations vs k", bf->what);
    return ob_fig_script_open(sc, dir, stem, desc,
                       !bf->heldout ? "tuning_budget.csv (workload, optimizer, configurations, k, best_q25, "
                                      "best_median, best_q75)"
                       : bf->metric ? "tuning_budget.csv (workload, optimizer, configurations, k, ..., "
                                      "eval_metric_best_q25, eval_metric_best_median, eval_metric_best_q75)"
                                    : "tuning_budget.csv (workload, optimizer, configurations, k, ..., "
                                      "eval_loss_best_q25, eval_loss_best_median, eval_loss_best_q75)",
                       e);
}

/* The tuning budget's title, axes, sel() and legend. */
static void budget_header(script *sc, const budget_fig *bf)
{
    FILE *f = sc->f;
    fprintf(f,
            "set title \"%s: the best %s among k configurations drawn at random\\n"
            "line = median of the best of k, band = its interquartile range\"\n"
            "set xlabel \"k, configurations tried (each with its lr sweep)\"\n"
            "set ylabel \"best %s at the best lr%s%s\"\n"
            "set xrange [0.8:%d.2]\n"
            "set xtics 1, %d\n"
            "%s\n"
            "sel(o) = strcol(1) eq \"%s\" && strcol(2) eq o\n",
            bf->wq, bf->what, bf->what, bf->heldout ? " for it" : "", bf->logy ? " (log scale)" : "", bf->kmax,
            bf->kmax > 16 ? (bf->kmax + 7) / 8 : 1, bf->logy ? "set logscale y" : "unset logscale y", bf->wq);
    if (bf->logy) ob_fig_narrow_log_ytics(f, &bf->yr, 0);
    ob_fig_key_fit(sc, bf->n_lines, bf->key_len);
}

/* The tuning budget's plot command: each line's quartiles as a band and
 * its median. */
static void budget_plot(FILE *f, const ob_dataset *d, const ob_stats *s, const budget_fig *bf)
{
    fprintf(f, "plot \\\n");
    int l = 0;
    for (int i = 0; i < s->n_tuned; i++) {
        int n = 0;
        if (!budget_line(d, s, bf->w, i, bf->heldout, bf->v, &n)) continue;
        char oq[256];
        ob_gp_str(d->opt_names[s->tuned_first[i]], oq, sizeof oq);
        const int lt = ob_fig_own_lt(d, s->tuned_first[i]);
        fprintf(f,
                "%s  'tuning_budget.csv' skip 1 using 4:(sel(\"%s\") ? $%d : NaN):%d with filledcurves lt %d "
                "notitle, \\\n"
                "  'tuning_budget.csv' skip 1 using 4:(sel(\"%s\") ? $%d : NaN) with linespoints lt %d "
                "title \"%s (%d configurations)\"",
                l++ ? ", \\\n" : "", oq, bf->col, bf->col + 2, lt, oq, bf->col + 1, lt, oq, n);
    }
    fprintf(f, "\n");
}

/* The tuning budget's script, stem.gp in dir. */
static ob_status budget_script(const ob_dataset *d, const ob_stats *s, const budget_fig *bf, const char *dir,
                               const char *stem, ob_err *e)
{
    script sc;
    OB_TRY(budget_open(&sc, bf, dir, stem, e));
    budget_header(&sc, bf);
    budget_plot(sc.f, d, s, bf);
    return ob_fig_script_close(&sc, e);
}

/* The tuning budget's caption. */
static ob_status budget_caption(const budget_fig *bf, const char *stem, ob_figures *out, ob_err *e)
{
    const char *inf_note = bf->any_inf ? " A missing point: the chance of drawing only configurations that diverged "
                                         "at every lr is above that quantile's." : "";
    const char *gone = bf->gone;
    if (bf->heldout) {
        char cap[1400];
        snprintf(cap, sizeof cap,
                 "The tuning budget on held-out data: the best %s among k configurations drawn "
                 "at random with replacement, against k, each configuration at its best lr for the held-out "
                 "%s (median over seeds; a diverged seed counts the worst there is), as a tuning on validation "
                 "data would pick it (Dodge et al. 2019's expected validation performance, as quantiles). The "
                 "line is the median of the best of k, the band its interquartile range; %s.%s Values in "
                 "tuning_budget.csv (eval_%s_best_*).%s%s%s",
                 bf->what, bf->qty, bf->metric ? "higher is better (report --heldout-on metric)" : "lower is better",
                 inf_note, bf->metric ? "metric" : "loss", gone[0] ? " Not drawn: " : "", gone,
                 gone[0] ? " (every configuration diverged at every lr)." : "");
        return ob_fig_add(out, e, stem, bf->w, bf->title, "%s", cap);
    }
    return ob_fig_add(out, e, stem, bf->w, bf->title,
                   "How much tuning each optimizer needs: the best final training loss (at its best lr, median "
                   "over seeds) among k of its configurations drawn at random with replacement from those run, "
                   "against k, computed exactly from the configurations' losses (Dodge et al. 2019, \"Show your "
                   "work\"; Sivaprasad et al. 2020 compare optimizers by it). The line is the median of the best "
                   "of k, the band its interquartile range (quantiles of a draw from n values: at k = 1 the "
                   "median is the ceil(n/2)-th smallest, with an even n the lower of the two middle ones). Low "
                   "at k = 1: good without tuning; a steep fall: "
                   "tuning pays; the right end: the best configuration found. With a quasi-random search "
                   "(--trials) the configurations are draws from its ranges, so this estimates the best after k "
                   "trials; with a grid, after k of its points.%s Values in tuning_budget.csv.%s%s%s",
                   inf_note, gone[0] ? " Not drawn: " : "", gone,
                   gone[0] ? " (every configuration diverged at every lr)." : "");
}

/* The tuning budget on workload w (tuning_budget.csv): for each optimizer
 * with several configurations there, the best final loss among k of them
 * drawn at random against k, its median a line and its quartiles a band;
 * with heldout, the same on the held-out loss (or metric: report
 * --heldout-on), each configuration at its best lr for it, where every
 * configuration has one (budget_heldout_WORKLOAD). */
ob_status ob_fig_budget(const ob_dataset *d, const ob_stats *s, int w, int heldout, const char *dir,
                     const char *slug, ob_figures *out, ob_err *e)
{
    if (s->n_tuned == 0) return OB_OK;
    budget_fig bf;
    memset(&bf, 0, sizeof bf);
    bf.w = w;
    bf.heldout = heldout;
    bf.metric = heldout && s->heldout_metric;
    bf.v = malloc(((size_t)d->n_opt + 1) * sizeof *bf.v);
    if (!bf.v) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    budget_scan(d, s, &bf);
    char stem[300];
    snprintf(stem, sizeof stem, "budget_%s%.200s", heldout ? "heldout_" : "", slug);
    ob_status st;
    if (bf.n_lines == 0) {
        st = budget_not_drawn(d, &bf, stem, out, e);
    } else {
        budget_names(d, &bf);
        st = budget_script(d, s, &bf, dir, stem, e);
        if (st == OB_OK) st = budget_caption(&bf, stem, out, e);
    }
    free(bf.v);
    return st;
}
