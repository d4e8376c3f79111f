/* plots/fig_loss.c - the training-loss figure of each workload (loss_WORKLOAD,
 * from curves_best.csv): each optimizer at its best lr, the median over seeds
 * with its min-max band, and the loss floor where the workload knows it. */
#include "plots/fig_int.h"

#include <math.h>
#include <string.h>

/* Marker interval of a curve: about 12 markers, each optimizer's a little
 * shifted (by its index) so that markers of curves on top of each other do not
 * cover one another. */
static int point_every(const ob_group *g, const ob_dataset *d, int k)
{
    int64_t n = 0;
    for (int i = 0; i < g->n_best_runs; i++)
        if (d->runs[g->best_runs[i]].n_curve > n) n = d->runs[g->best_runs[i]].n_curve;
    int every = (int)(n / 12);
    if (every < 1) every = 1;
    return every + k % 3;
}

/* The training-loss figure of workload w as ob_fig_loss lays it out: the
 * curves' losses, seeds and steps, the loss floor, and its y axis. */
typedef struct loss_fig {
    int w;
    range r;                    /* the curves' losses, r.hi cut off at 1.5 x start where capped */
    int seeds, any_div;         /* the most seeds of a line; a seed diverged */
    /* the x axis ends at this workload's last step (autoscale would count
     * the other workloads' rows, which sel() makes NaN) */
    int64_t last_step;
    double floor_v, start;      /* the loss floor (NaN: none); the largest loss at the first recorded step */
    int n_lines, bands;         /* the lines, and whether their min-max bands are drawn */
    int capped, logy;           /* spikes cut off at the top; a log y axis */
    int floor_drawn, floor_far; /* the floor drawn, and far below the curves (in the legend alone) */
    char wq[512];               /* the workload's label, quoted for gnuplot */
} loss_fig;

/* The curves of lf->w's optimizers at their best lrs: lf's losses, seeds,
 * steps, floor and start. Returns whether there is one. */
static int loss_scan(const ob_dataset *d, const ob_stats *s, loss_fig *lf)
{
    int any = 0;
    lf->r = (range){NAN, NAN};
    lf->floor_v = lf->start = NAN;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || g->best < 0) continue;
        any = 1;
        if (g->n_best_runs > lf->seeds) lf->seeds = g->n_best_runs;
        if (!isnan(g->loss_floor)) lf->floor_v = g->loss_floor;
        for (int i = 0; i < g->n_best_runs; i++) {
            const ob_rrun *run = &d->runs[g->best_runs[i]];
            lf->any_div |= run->diverged;
            if (run->steps > lf->last_step) lf->last_step = run->steps;
            if (run->n_curve > 0 && run->c_step[run->n_curve - 1] > lf->last_step)
                lf->last_step = run->c_step[run->n_curve - 1];
            for (int64_t j = 0; j < run->n_curve; j++) ob_fig_range_add(&lf->r, run->c_loss[j]);
            if (run->n_curve > 0 && isfinite(run->c_loss[0]) && (isnan(lf->start) || run->c_loss[0] > lf->start))
                lf->start = run->c_loss[0];
        }
    }
    return any;
}

/* The loss figure's y axis: early spikes cut off, the log scale, and
 * whether the loss floor is drawn, or named in the legend alone. */
static void loss_y_axis(loss_fig *lf)
{
    /* early spikes far above the starting loss would flatten everything else: cut them */
    lf->capped = lf->start > 0 && lf->r.hi > 1.5 * lf->start;
    if (lf->capped) lf->r.hi = 1.5 * lf->start;
    lf->logy = ob_fig_spans_decades(&lf->r);
    lf->floor_drawn = !isnan(lf->floor_v) && (!lf->logy || lf->floor_v > 0);
    /* a floor far below the curves (bert's entropy floor under losses that
     * stay near the vocabulary's log) would stretch the axis down to it and
     * squeeze every curve into the top: the legend gives it instead, as a
     * key entry with no line in the plot */
    lf->floor_far = 0;
    if (lf->floor_drawn && lf->r.hi > lf->r.lo && lf->floor_v < lf->r.lo)
        lf->floor_far = lf->logy ? log10(lf->r.lo / lf->floor_v) > 0.5 * log10(lf->r.hi / lf->r.lo)
                                 : lf->r.lo - lf->floor_v > 0.5 * (lf->r.hi - lf->r.lo);
}

/* The loss figure's title, axes, the spikes' cut and sel(). */
static void loss_header(FILE *f, const loss_fig *lf)
{
    char line2[160];
    if (lf->bands)
        snprintf(line2, sizeof line2, "band = min to max over seeds%s", lf->any_div ? " still training" : "");
    else
        snprintf(line2, sizeof line2, "no min-max bands with %d optimizers: curves_best.csv has them", lf->n_lines);
    char cap[160] = "";
    if (lf->capped)
        snprintf(cap, sizeof cap, "# spikes above 1.5x the starting loss are cut off at the top\n"
                                  "set yrange [*:%.6g]\n", 1.5 * lf->start);
    fprintf(f,
            "set title \"%s: training loss, each optimizer at its best learning rate\\n"
            "line = median over seeds (up to %d), %s\"\n"
            "set xlabel \"step\"\n"
            "set xrange [0:%lld]\n"
            "set ylabel \"training loss%s\"\n"
            "%s\n"
            "%s"
            "sel(o) = strcol(1) eq \"%s\" && strcol(2) eq o\n",
            lf->wq, lf->seeds, line2, (long long)(lf->last_step > 0 ? lf->last_step : 1),
            lf->logy ? " (log scale)" : "", lf->logy ? "set logscale y" : "unset logscale y", cap, lf->wq);
}

/* The loss figure's legend: an entry per optimizer of lf->w, and the
 * floor's. */
static void loss_key(script *sc, const ob_dataset *d, const ob_stats *s, const loss_fig *lf)
{
    int n_key = lf->floor_drawn; /* the floor's legend entry */
    size_t key_len = lf->floor_far ? 40 : lf->floor_drawn ? 24 : 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w) continue;
        char dn[64];
        size_t len = strlen(d->opt_labels[g->opt]) + (g->best >= 0 ? 12 : 22) +
                     strlen(ob_fig_diverged_note(d, g, dn, sizeof dn)) + strlen(ob_fig_edge_note(g));
        n_key++;
        if (len > key_len) key_len = len;
    }
    ob_fig_key_fit(sc, n_key, key_len);
}

/* The loss figure's curves: each optimizer's median at its best lr, with
 * its min-max band where bands are drawn. */
static void loss_plot_lines(FILE *f, const ob_dataset *d, const ob_stats *s, const loss_fig *lf)
{
    int first = 1;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || g->best < 0) continue;
        char oq[512], lr[32], dn[64];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        ob_fig_lr_text(g->best_lr, lr, sizeof lr);
        if (lf->bands)
            fprintf(f, "%s  'curves_best.csv' skip 1 using 5:(sel(\"%s\") ? $7 : NaN):8 with filledcurves lt %d notitle",
                    first ? "" : ", \\\n", oq, g->opt + 1);
        fprintf(f,
                "%s  'curves_best.csv' skip 1 using 5:(sel(\"%s\") ? $6 : NaN) with linespoints lt %d pi %d ps PS "
                "title \"%s (lr %s%s%s)\"",
                lf->bands ? ", \\\n" : first ? "" : ", \\\n", oq, g->opt + 1, point_every(g, d, k), oq, lr,
                ob_fig_edge_note(g), ob_fig_diverged_note(d, g, dn, sizeof dn));
        first = 0;
    }
}

/* The loss figure's plot command: the curves, a legend entry for each
 * optimizer without one (every run diverged, or none finished), and the
 * loss floor (a dashed line, or a legend entry alone where far below). */
static void loss_plot(FILE *f, const ob_dataset *d, const ob_stats *s, const loss_fig *lf)
{
    fprintf(f, "plot \\\n");
    loss_plot_lines(f, d, s, lf);
    /* an optimizer whose every run diverged has no curve: the legend still names it */
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || g->best >= 0) continue;
        char oq[512];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        fprintf(f, ", \\\n  NaN with lines lt %d title \"%s (%s)\"", g->opt + 1, oq,
                g->n_finished ? "every run diverged" : "no run finished");
    }
    if (lf->floor_drawn && !lf->floor_far)
        fprintf(f, ", \\\n  %.17g with lines lc rgb \"black\" lw 1.5 dt 2 title \"loss floor (%.4g)\"",
                lf->floor_v, lf->floor_v);
    else if (lf->floor_far)
        fprintf(f, ", \\\n  keyentry with lines lc rgb \"black\" lw 1.5 dt 2 title \"loss floor %.4g (far below: not drawn)\"",
                lf->floor_v);
    fprintf(f, "\n");
}

/* The loss figure's caption note on the optimizers of workload w whose
 * every run diverged (no curve), into note (n bytes; "" where none). */
static void loss_div_note(const ob_dataset *d, const ob_stats *s, int w, char *note, size_t n)
{
    char all_div[256] = "";
    size_t adl = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w || g->best >= 0) continue;
        if (g->n_finished && adl < sizeof all_div)
            adl += (size_t)snprintf(all_div + adl, sizeof all_div - adl, "%s%s", adl ? ", " : "",
                                    d->opt_labels[g->opt]);
    }
    note[0] = 0;
    if (all_div[0]) snprintf(note, n, " Every run of %s diverged at every lr: no curve to draw.", all_div);
}

/* The loss figure's caption. */
static ob_status loss_caption(const ob_dataset *d, const ob_stats *s, const loss_fig *lf, const char *stem,
                              ob_figures *out, ob_err *e)
{
    char div_note[320];
    loss_div_note(d, s, lf->w, div_note, sizeof div_note);
    return ob_fig_add(out, e, stem, lf->w, "Training loss",
                   "Training loss against step for each optimizer at its best learning rate (the lr "
                   "with the lowest median final loss). %s%s%s%s%s%s",
                   lf->bands ? "The line is the median over seeds, the shaded band spans the best and worst seed."
                             : "The line is the median over seeds. With this many optimizers their min-max bands, "
                               "drawn over one another, would hide the lines: they are left out (`curves_best.csv` "
                               "has each one's loss_min and loss_max).",
                   !lf->any_div ? ""
                   : lf->bands  ? " A seed that diverged (the legend counts them) counts as infinitely bad from "
                                  "its last recorded step on, so the line ends where half the seeds or more have "
                                  "diverged; the band spans the seeds still training."
                                : " A seed that diverged (the legend counts them) counts as infinitely bad from "
                                  "its last recorded step on, so the line ends where half the seeds or more have "
                                  "diverged.",
                   lf->logy ? " The y axis is logarithmic." : "",
                   lf->capped ? " Early spikes above 1.5 times the starting loss run off the top." : "",
                   lf->floor_far ? " The workload's loss floor (the lowest reachable loss), in the legend, lies far "
                                   "below the curves: drawn, it would squeeze them into the top of the plot." :
                   lf->floor_drawn ? " The dashed line is the workload's loss floor (the lowest reachable loss)." : "",
                   div_note);
}

/* Training loss against step on workload w (loss_WORKLOAD, from
 * curves_best.csv): a line per optimizer at its best lr with its min-max
 * band, the loss floor where the workload knows it. */
ob_status ob_fig_loss(const ob_dataset *d, const ob_stats *s, int w, const char *dir,
                   const char *slug, ob_figures *out, ob_err *e)
{
    loss_fig lf;
    memset(&lf, 0, sizeof lf);
    lf.w = w;
    if (!loss_scan(d, s, &lf)) return OB_OK;
    for (int k = 0; k < s->n_g; k++) lf.n_lines += s->g[k].wl == w && s->g[k].best >= 0;
    lf.bands = lf.n_lines <= BAND_MAX_LINES;
    loss_y_axis(&lf);
    char stem[300];
    snprintf(stem, sizeof stem, "loss_%s", slug);
    ob_gp_str(d->wl_labels[w], lf.wq, sizeof lf.wq);
    script sc;
    OB_TRY(ob_fig_script_open(&sc, dir, stem, "training loss vs step, each optimizer at its best lr",
                       "curves_best.csv (workload, optimizer, lr, seeds, step, loss_median, "
                       "loss_min, loss_max)", e));
    loss_header(sc.f, &lf);
    loss_key(&sc, d, s, &lf);
    loss_plot(sc.f, d, s, &lf);
    OB_TRY(ob_fig_script_close(&sc, e));
    return loss_caption(d, s, &lf, stem, out, e);
}
