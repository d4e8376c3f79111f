/* plots/fig_evals.c - the held-out figures of each workload (eval_loss_WORKLOAD
 * and eval_metric_WORKLOAD, from evals_best.csv): each optimizer at its best lr,
 * a curve over the evaluations or a point per optimizer. */
#include "plots/fig_int.h"

#include <math.h>
#include <string.h>

#include "workloads/workload.h"

/* Why an optimizer with finished runs has no best lr, as the figures' axis
 * entries and legends say it (the training-loss figure's legend names it
 * too): every run diverged, or half the seeds or more at each lr. */
static const char *gone_text(const ob_group *g)
{
    return g->n_diverged == g->n_finished ? "diverged at every lr" : "no finite median at any lr";
}

/* *lo lowered to v where v is finite (a diverged seed's -inf metric is not drawn) */
static void low_add(double *lo, double v)
{
    if (isfinite(v) && v < *lo) *lo = v;
}

/* The held-out figures of workload w as ob_fig_evals lays them out: what the
 * evals table holds for the runs at the best lrs (evals_best.csv is made
 * of exactly those rows) and what the runs table says, the metric's name,
 * and the figure being written (which: 0 the loss, 1 the metric). */
typedef struct evals_fig {
    int w;
    int any_loss, any_metric;     /* evaluations of the held-out loss, metric in the evals table */
    int final_loss, final_metric; /* a final held-out loss, metric in the runs table */
    int n_opt_here, n_gone;       /* optimizers with a best lr; without one, whose runs finished */
    int64_t max_evals, last_step; /* the most evaluations of a run, the last step */
    int any_div;                  /* a seed at a best lr diverged */
    range r, er;                  /* the training and held-out losses; the held-out ones alone */
    /* the smallest value drawn of each figure: a non-negative axis (a loss,
     * an accuracy) does not run below 0 */
    double vmin[2];
    int bands;                    /* the min-max bands drawn */
    int at_end;                   /* one evaluation per run: a point per optimizer */
    char wq[512];                 /* the workload's label, quoted for gnuplot */
    const char *metric;           /* the metric's name */
    char metric_title[96], metric_caption[160];
    int which, logy, c0;          /* the figure (0 loss, 1 metric), its log y axis, its median's column */
} evals_fig;

/* What the held-out figures of ef->w draw (ef's values up to vmin): the
 * runs at each optimizer's best lr, and the optimizers without one. */
static void evals_scan(const ob_dataset *d, const ob_stats *s, evals_fig *ef)
{
    ef->r = ef->er = (range){NAN, NAN};
    ef->vmin[0] = ef->vmin[1] = INFINITY;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != ef->w) continue;
        /* no lr with a finite median (every run diverged, at every lr): no
         * values, yet the training-loss figure names it, so these do too */
        if (g->best < 0) {
            ef->n_gone += g->n_finished > 0;
            continue;
        }
        ef->n_opt_here++;
        low_add(&ef->vmin[0], g->eval_loss.min);
        low_add(&ef->vmin[1], g->eval_metric.min);
        for (int i = 0; i < g->n_best_runs; i++) {
            const ob_rrun *run = &d->runs[g->best_runs[i]];
            if (run->steps > ef->last_step) ef->last_step = run->steps;
            if (run->n_curve > 0 && run->c_step[run->n_curve - 1] > ef->last_step)
                ef->last_step = run->c_step[run->n_curve - 1];
            ef->any_div |= run->diverged;
            low_add(&ef->vmin[0], run->eval_loss);
            low_add(&ef->vmin[1], run->eval_metric);
            if (run->n_eval_loss > 0) ef->any_loss = 1;
            if (run->n_eval_metric > 0) ef->any_metric = 1;
            if (!isnan(run->eval_loss)) ef->final_loss = 1;
            if (!isnan(run->eval_metric)) ef->final_metric = 1;
            if (run->n_evals > ef->max_evals) ef->max_evals = run->n_evals;
            /* held-out loss spans about what the training loss spans */
            for (int64_t j = 0; j < run->n_curve; j++) ob_fig_range_add(&ef->r, run->c_loss[j]);
        }
        ob_fig_range_add(&ef->r, g->eval_loss.min);
        ob_fig_range_add(&ef->r, g->eval_loss.max);
        ob_fig_range_add(&ef->er, g->eval_loss.min);
        ob_fig_range_add(&ef->er, g->eval_loss.max);
    }
}

/* The names the held-out figures of ef->w give: the workload's label for
 * gnuplot, and the metric by its name where the workload is known
 * (accuracy), as the report's tables name it. */
static void evals_names(const ob_dataset *d, evals_fig *ef)
{
    ob_gp_str(d->wl_labels[ef->w], ef->wq, sizeof ef->wq);
    const ob_workload_def *wdef = ob_workload_find(d->wl_names[ef->w]);
    ef->metric = wdef && wdef->metric_name ? wdef->metric_name : "metric";
    snprintf(ef->metric_title, sizeof ef->metric_title, "Held-out %s", ef->metric);
    snprintf(ef->metric_caption, sizeof ef->metric_caption, "The workload's %s (higher is better)", ef->metric);
}

/* The characters of the end-only figure's x tic labels side by side: each
 * optimizer's label with its best lr, or with why it has none. */
static size_t evals_end_label_chars(const ob_dataset *d, const ob_stats *s, int w)
{
    size_t label_chars = 0;
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == w && s->g[k].best >= 0) {
            char lr[32];
            ob_fig_lr_text(s->g[k].best_lr, lr, sizeof lr);
            label_chars += strlen(d->opt_labels[s->g[k].opt]) + strlen(lr) + 5;
        } else if (s->g[k].wl == w && s->g[k].n_finished > 0) {
            label_chars += strlen(d->opt_labels[s->g[k].opt]) + strlen(gone_text(&s->g[k])) + 5;
        }
    return label_chars;
}

/* The end-only figure's title, axes, sel() and the start of its x tics. */
static void evals_end_header(FILE *f, const ob_dataset *d, const ob_stats *s, const evals_fig *ef)
{
    /* an optimizer without values (gone) has an entry of its own on the x axis, an x at the top */
    const int n_pos = ef->n_opt_here + ef->n_gone;
    /* the tic labels side by side: rotated when they would run into each other (as the dot plots') */
    const size_t label_chars = evals_end_label_chars(d, s, ef->w);
    /* a loss or an accuracy is never below 0: the axis stops there
     * (the offsets' room below the lowest point would reach -5 on a
     * loss of 0 to 100); a log axis has no 0 anyway */
    const int from0 = !ef->logy && ef->vmin[ef->which] >= 0;
    const char *what = ef->which ? ef->metric : "loss";
    fprintf(f,
            "set title \"%s: held-out %s at the end of training, each optimizer at its best "
            "learning rate\\npoint = median over seeds, bar = min to max over seeds\"\n"
            "set xlabel \"optimizer (learning rate)\"\n"
            "set ylabel \"held-out %s%s\"\n"
            "%s\n"
            "set xrange [-0.6:%d.6]\n"
            "set grid noxtics ytics\n"
            "set offsets 0, 0, graph %s, graph 0.06\n"
            "%s\n"
            "unset key\n"
            "sel(o) = strcol(1) eq \"%s\" && strcol(2) eq o\n"
            "set xtics nomirror scale 0%s (",
            ef->wq, what, what, ef->logy ? " (log scale)" : "", ef->logy ? "set logscale y" : "unset logscale y",
            n_pos - 1, ef->n_gone ? "0.12" : "0.06",
            from0 ? "set yrange [0<*:*]   # every value >= 0: autoscaled, the offsets too, but not below 0"
                  : ef->logy ? "set yrange [*:*]\n" LOG_NOEXTEND_LINE : "set yrange [*:*]",
            ef->wq, n_pos > 5 || label_chars > 90 ? " rotate by -25" : "");
}

/* The end-only figure's x tics (after evals_end_header's start): an entry
 * per optimizer, with its best lr or why it has none. */
static void evals_end_tics(FILE *f, const ob_dataset *d, const ob_stats *s, int w)
{
    int x = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || (g->best < 0 && g->n_finished == 0)) continue;
        char oq[512], lr[32];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        if (g->best >= 0) ob_fig_lr_text(g->best_lr, lr, sizeof lr);
        fprintf(f, "%s\"%s (%s)\" %d", x ? ", " : "", oq, g->best >= 0 ? lr : gone_text(g), x);
        x++;
    }
    fprintf(f, ")\n");
}

/* The end-only figure's x at the top, in the optimizer's colour, for each
 * optimizer without a best lr: a label's point, so no `with labels` plot
 * (gnuplot 5.4 fails on one with no point). */
static void evals_end_gone(FILE *f, const ob_stats *s, int w)
{
    int x = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || (g->best < 0 && g->n_finished == 0)) continue;
        if (g->best < 0)
            fprintf(f, "set label \"\" at first %d, graph 0.95 point lt %d pt 2 ps 2.2 front   # %s\n", x,
                    g->opt + 1, gone_text(g));
        x++;
    }
}

/* The end-only figure's plot command: each optimizer's median with its
 * min-max bar, at its place on the x axis. */
static void evals_end_plot(FILE *f, const ob_dataset *d, const ob_stats *s, const evals_fig *ef)
{
    fprintf(f, "plot \\\n");
    int x = 0;
    int first = 1;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != ef->w || (g->best < 0 && g->n_finished == 0)) continue;
        if (g->best < 0) { /* its place on the axis, nothing to plot */
            x++;
            continue;
        }
        char oq[512];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        const int c0 = ef->c0;
        /* every column selected, so other rows do not stretch the autoscale */
        fprintf(f, "%s  'evals_best.csv' skip 1 using (%d):(sel(\"%s\") ? $%d : NaN):"
                   "(sel(\"%s\") ? $%d : NaN):(sel(\"%s\") ? $%d : NaN) "
                   "with yerrorbars lt %d dt 1 ps (1.8 * PS) lw 2 notitle", /* the linetype's marker, as every figure */
                first ? "" : ", \\\n", x, oq, c0, oq, c0 + 1, oq, c0 + 2, g->opt + 1);
        first = 0;
        x++;
    }
    fprintf(f, "\n");
}

/* The held-out figure of one evaluation per run: a point per optimizer
 * with its spread, not a curve of one point. */
static void evals_end_script(FILE *f, const ob_dataset *d, const ob_stats *s, const evals_fig *ef)
{
    evals_end_header(f, d, s, ef);
    evals_end_tics(f, d, s, ef->w);
    evals_end_gone(f, s, ef->w);
    evals_end_plot(f, d, s, ef);
}

/* The curve figure's title, axes and sel(). */
static void evals_curve_header(FILE *f, const evals_fig *ef)
{
    char line2[160];
    if (ef->bands)
        snprintf(line2, sizeof line2, "band = min to max over seeds%s", ef->any_div ? " still training" : "");
    else
        snprintf(line2, sizeof line2, "no min-max bands with %d optimizers: evals_best.csv has them", ef->n_opt_here);
    const char *what = ef->which ? ef->metric : "loss";
    fprintf(f,
            "set title \"%s: held-out %s during training, each optimizer at its best learning rate\\n"
            "line = median over seeds, %s\"\n"
            "set xlabel \"step\"\n"
            "set xrange [0:%lld]\n"
            "set ylabel \"held-out %s%s\"\n"
            "%s\n"
            "sel(o) = strcol(1) eq \"%s\" && strcol(2) eq o\n",
            ef->wq, what, line2, (long long)(ef->last_step > 0 ? ef->last_step : 1), what,
            ef->logy ? " (log scale)" : "", ef->logy ? "set logscale y" : "unset logscale y", ef->wq);
}

/* The curve figure's legend: an entry per optimizer, with its best lr or
 * why it has none. */
static void evals_curve_key(script *sc, const ob_dataset *d, const ob_stats *s, const evals_fig *ef)
{
    size_t key_len = 0;
    for (int k = 0; k < s->n_g; k++) {
        char dn[64];
        size_t len = strlen(d->opt_labels[s->g[k].opt]) + 12 +
                     strlen(ob_fig_diverged_note(d, &s->g[k], dn, sizeof dn)) + strlen(ob_fig_edge_note(&s->g[k]));
        if (s->g[k].wl == ef->w && s->g[k].best >= 0 && len > key_len) key_len = len;
        len = strlen(d->opt_labels[s->g[k].opt]) + 23;
        if (s->g[k].wl == ef->w && s->g[k].best < 0 && s->g[k].n_finished > 0 && len > key_len) key_len = len;
    }
    ob_fig_key_fit(sc, ef->n_opt_here + ef->n_gone, key_len);
}

/* The curve figure's plot command: each optimizer's median at its best lr
 * (with its min-max band), and a legend entry without a line for each
 * optimizer without a best lr. */
static void evals_curve_plot(FILE *f, const ob_dataset *d, const ob_stats *s, const evals_fig *ef)
{
    const int c0 = ef->c0;
    fprintf(f, "plot \\\n");
    int first = 1;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != ef->w || g->best < 0) continue;
        char oq[512], lr[32], dn[64];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        ob_fig_lr_text(g->best_lr, lr, sizeof lr);
        if (ef->bands)
            fprintf(f,
                    "%s  'evals_best.csv' skip 1 using 5:(sel(\"%s\") ? $%d : NaN):(sel(\"%s\") ? $%d : NaN) "
                    "with filledcurves lt %d notitle",
                    first ? "" : ", \\\n", oq, c0 + 1, oq, c0 + 2, g->opt + 1);
        fprintf(f,
                "%s  'evals_best.csv' skip 1 using 5:(sel(\"%s\") ? $%d : NaN) with linespoints lt %d pi %d ps PS "
                "title \"%s (lr %s%s%s)\"",
                ef->bands ? ", \\\n" : first ? "" : ", \\\n", oq, c0, g->opt + 1,
                /* a marker at each evaluation, at about 12 of them when there are many (each
                 * optimizer's a little shifted, as in the loss figure) */
                ef->max_evals > 15 ? (int)(ef->max_evals / 12) + k % 3 : 1, oq, lr, ob_fig_edge_note(g),
                ob_fig_diverged_note(d, g, dn, sizeof dn));
        first = 0;
    }
    /* no line for an optimizer without a best lr: the legend still names it */
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != ef->w || g->best >= 0 || g->n_finished == 0) continue;
        char oq[512];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        fprintf(f, ", \\\n  NaN with points lt %d pt 2 ps PS title \"%s (%s)\"", g->opt + 1, oq, gone_text(g));
    }
    fprintf(f, "\n");
}

/* The held-out figure's caption (ef->which's figure, stem and title). */
static ob_status evals_caption(const evals_fig *ef, const char *stem, const char *fig_title, ob_figures *out,
                               ob_err *e)
{
    char gone_note[256] = "";
    if (ef->n_gone)
        snprintf(gone_note, sizeof gone_note,
                 ef->at_end ? " An optimizer without a best learning rate (its runs diverged at every lr, say) "
                              "has no value: its entry on the x axis says why, with an x at the top."
                            : " An optimizer without a best learning rate (its runs diverged at every lr, say) "
                              "has no line: the legend names it and says why.");
    const char *what = ef->which ? ef->metric_caption : "Loss (lower is better)";
    if (ef->at_end)
        return ob_fig_add(out, e, stem, ef->w, fig_title,
                       "%s on held-out data at the end of training (the only evaluation of each run; "
                       "`--eval-every N` evaluates during training too), for each optimizer at its best "
                       "learning rate: the point is the median over seeds, the bar spans the best and "
                       "worst seed.%s%s",
                       what, gone_note, ef->logy ? " The y axis is logarithmic." : "");
    return ob_fig_add(out, e, stem, ef->w, fig_title,
                   "%s on held-out data at each evaluation, for each optimizer at its best learning "
                   "rate: median over seeds%s%s%s%s",
                   what,
                   ef->bands ? " with a min-max band." :
                               ". With this many optimizers their min-max bands, drawn over one another, would "
                               "hide the lines: they are left out (`evals_best.csv` has each one's min and max).",
                   !ef->any_div ? ""
                   : ef->bands  ? " A seed that diverged (the legend counts them) counts as the worst value "
                                  "from its last evaluation on, so the line ends where half the seeds or more "
                                  "have diverged; the band spans the seeds still training."
                                : " A seed that diverged (the legend counts them) counts as the worst value "
                                  "from its last evaluation on, so the line ends where half the seeds or more "
                                  "have diverged.",
                   gone_note, ef->logy ? " The y axis is logarithmic." : "");
}

/* The held-out figure ef->which (0 the loss, 1 the metric) of ef->w: its
 * script and caption, or a note where the evals table has no row of it
 * while the runs have a final value (nothing where neither has one). */
static ob_status evals_figure(const ob_dataset *d, const ob_stats *s, evals_fig *ef, const char *dir,
                              const char *slug, ob_figures *out, ob_err *e)
{
    char stem[300];
    snprintf(stem, sizeof stem, "%s_%s", ef->which ? "eval_metric" : "eval_loss", slug);
    const char *fig_title = ef->which ? ef->metric_title : "Held-out loss";
    if (!(ef->which ? ef->any_metric : ef->any_loss)) {
        /* no rows to draw: no script; say why when the runs have a value */
        if (ef->which ? ef->final_metric : ef->final_loss)
            return ob_fig_add_skipped(out, e, stem, ef->w, fig_title,
                               "Not drawn: the database's evals table has no held-out evaluations of "
                               "these runs (an optbench older than this one kept the end-of-run "
                               "evaluation only in runs.eval_loss); the final held-out values are in "
                               "the table above.");
        return OB_OK;
    }
    script sc;
    OB_TRY(ob_fig_script_open(&sc, dir, stem,
                       ef->which ? "held-out metric at the best lr" : "held-out loss at the best lr",
                       "evals_best.csv (workload, optimizer, lr, seeds, step, eval_loss_median, "
                       "eval_loss_min, eval_loss_max, eval_metric_median, eval_metric_min, "
                       "eval_metric_max)", e));
    sc.no_key = ef->at_end;
    ef->logy = ef->which == 0 && ob_fig_spans_decades(ef->at_end ? &ef->er : &ef->r);
    ef->c0 = ef->which ? 9 : 6;
    if (ef->at_end) {
        evals_end_script(sc.f, d, s, ef);
    } else {
        evals_curve_header(sc.f, ef);
        evals_curve_key(&sc, d, s, ef);
        evals_curve_plot(sc.f, d, s, ef);
    }
    OB_TRY(ob_fig_script_close(&sc, e));
    return evals_caption(ef, stem, fig_title, out, e);
}

/* The held-out loss and metric on workload w (eval_loss_WORKLOAD and
 * eval_metric_WORKLOAD, from evals_best.csv), each optimizer at its best
 * lr: a line per optimizer over the evaluations during training, or, with
 * one evaluation per run, a point per optimizer with its min-max bar. */
ob_status ob_fig_evals(const ob_dataset *d, const ob_stats *s, int w, const char *dir,
                    const char *slug, ob_figures *out, ob_err *e)
{
    evals_fig ef;
    memset(&ef, 0, sizeof ef);
    ef.w = w;
    evals_scan(d, s, &ef);
    if (ef.n_opt_here == 0) return OB_OK;
    ef.bands = ef.n_opt_here <= BAND_MAX_LINES;
    /* one evaluation per run (the end of training, eval_every 0): a point per
     * optimizer with its spread, not a curve of one point */
    ef.at_end = ef.max_evals <= 1;
    evals_names(d, &ef);
    for (ef.which = 0; ef.which < 2; ef.which++) OB_TRY(evals_figure(d, s, &ef, dir, slug, out, e));
    return OB_OK;
}
