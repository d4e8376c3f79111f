/* plots/fig_hp.c - the hyperparameter figures of each workload
 * (hp_WORKLOAD_KEY, from hp_sweep.csv): final loss at the best lr vs the
 * value of each key swept besides the lr, or vs a search's lr. */
#include "plots/fig_int.h"

#include <math.h>
#include <string.h>

/* A hyperparameter figure as ob_fig_hp lays it out: what its points are (the
 * values' range, divergence, seeds) and its x axis (a log scale of 1 -
 * value, 0 set apart on a log scale, or the values', and its tics). */
typedef struct hp_layout {
    int logy;                       /* as the lr figure of this workload */
    double xlo, xhi, plo;           /* the values' range, plo the smallest positive value */
    int all_pos;                    /* every value positive */
    int any_div, n_div_lines;       /* lines with a configuration diverged at every lr, how many */
    int any_point;                  /* a configuration with a finite median */
    int most;                       /* the most seeds of a point */
    int onem, zlog, logx;           /* the x axis: 1 - value, log with 0 apart, log */
    double zpos;                    /* where zlog draws 0 */
    double lo_ax, hi_ax;            /* the axis's range (of 1 - value where onem) */
    double vals[16];                /* the swept values as the x tics, */
    int nv, own_tics;               /* how many, and whether they are the tics */
} hp_layout;

/* The values of hf's points and what they show (hl's values' range,
 * divergence and seeds). */
static void hp_scan(const ob_stats *s, const ob_hp_fig *hf, hp_layout *hl)
{
    hl->xlo = hl->xhi = hl->plo = NAN;
    hl->all_pos = 1, hl->any_div = 0, hl->any_point = 0, hl->n_div_lines = 0, hl->most = 0;
    for (int l = 0; l < hf->n_lines; l++) {
        int div_here = 0;
        for (int i = 0; i < hf->lines[l].n; i++) {
            double v = hf->lines[l].p[i].value;
            const ob_group *g = &s->g[hf->lines[l].p[i].group];
            if (isnan(hl->xlo) || v < hl->xlo) hl->xlo = v;
            if (isnan(hl->xhi) || v > hl->xhi) hl->xhi = v;
            if (!(v > 0)) hl->all_pos = 0;
            else if (isnan(hl->plo) || v < hl->plo) hl->plo = v;
            if (ob_hp_diverged_everywhere(g)) div_here = 1;
            else if (isfinite(g->final.median)) hl->any_point = 1;
            if (g->n_best_runs > hl->most) hl->most = g->n_best_runs;
        }
        hl->any_div |= div_here;
        hl->n_div_lines += div_here;
    }
}

/* The hyperparameter figure's x scale and range (hl->onem, zlog, logx,
 * lo_ax, hi_ax). */
static void hp_x_scale(hp_layout *hl)
{
    const double xlo = hl->xlo, xhi = hl->xhi;
    /* values close to 1 spanning decades of 1 - value (beta2 at 0.9, 0.99,
     * 0.999): the axis is 1 - value on a log scale, reversed, so the values
     * still grow to the right, and the tics name the values themselves */
    hl->onem = xlo > 0 && xhi < 1 && (1 - xlo) / (1 - xhi) >= 10;
    /* 0 and positive values spanning decades (weight_decay at 0, 1e-4, 1e-3,
     * 1e-2): on a linear axis the small ones would sit on top of 0, their
     * points and labels on each other; the axis is log, and 0, which a log
     * axis cannot show, is set a decade left of the smallest positive value,
     * behind a break mark, its tic reading "0" */
    hl->zlog = !hl->onem && xlo == 0 && !isnan(hl->plo) && xhi / hl->plo >= 10;
    hl->zpos = hl->zlog ? hl->plo / 10 : NAN;
    hl->logx = hl->onem || hl->zlog || (hl->all_pos && xhi / xlo >= 10);
    /* the range on the axis */
    double tlo = hl->onem ? 1 - xhi : hl->zlog ? hl->zpos : xlo, thi = hl->onem ? 1 - xlo : xhi;
    if (hl->logx) hl->lo_ax = tlo / 1.5, hl->hi_ax = thi * 1.5;
    else {
        double pad = 0.06 * (thi - tlo);
        hl->lo_ax = tlo - pad, hl->hi_ax = thi + pad;
    }
}

/* Where value v is on the hyperparameter figure's x axis. */
static double hp_x_of(const hp_layout *hl, double v)
{
    return hl->onem ? 1 - v : hl->zlog && v == 0 ? hl->zpos : v;
}

/* The swept values as the x tics when there are few and they do not crowd
 * (hl->vals, nv, own_tics). */
static void hp_x_tic_values(const ob_hp_fig *hf, hp_layout *hl)
{
    hl->nv = 0, hl->own_tics = 1;
    for (int l = 0; l < hf->n_lines && hl->own_tics; l++)
        for (int i = 0; i < hf->lines[l].n && hl->own_tics; i++) {
            double v = hf->lines[l].p[i].value;
            int seen = 0;
            for (int j = 0; j < hl->nv && !seen; j++) seen = hl->vals[j] == v;
            if (seen) continue;
            if (hl->nv == 12) hl->own_tics = 0;
            else hl->vals[hl->nv++] = v;
        }
    /* tic labels of neighbouring values must not run into each other (0.99
     * and 0.995 on a short axis): their distance, as a fraction of the axis,
     * at least half their widths together and a gap (a character of a tic
     * label takes up to about 1/80 of the axis, in the PNG, SVG and PDF) */
    for (int i = 0; i < hl->nv && hl->own_tics; i++)
        for (int j = 0; j < hl->nv && hl->own_tics; j++) {
            if (i == j) continue;
            double a = hp_x_of(hl, hl->vals[i]), b = hp_x_of(hl, hl->vals[j]);
            double gap = hl->logx ? fabs(log10(a / b)) / log10(hl->hi_ax / hl->lo_ax)
                                  : fabs(a - b) / (hl->hi_ax - hl->lo_ax);
            char ta[32], tb[32];
            int la = snprintf(ta, sizeof ta, "%.9g", hl->vals[i]), lb = snprintf(tb, sizeof tb, "%.9g", hl->vals[j]);
            if (gap < (la + lb) / 2.0 / 80 + 0.02) hl->own_tics = 0;
        }
}

/* The hyperparameter figure's title and axis labels (wq, kq: the workload
 * and the key, quoted; lr_key: the key is a search's lr). */
static void hp_header(FILE *f, const ob_hp_fig *hf, const hp_layout *hl, const char *wq, const char *kq, int lr_key)
{
    int n_scatter = 0;
    for (int l = 0; l < hf->n_lines; l++) n_scatter += hf->lines[l].scatter;
    fprintf(f,
            "set title \"%s: final loss %s %s\\n%s (up to %d), %s = min to max\"\n"
            "set xlabel \"%s%s%s\"\n"
            "set ylabel \"final loss at the best lr, mean over the last 10%% of steps%s\"\n"
            "YLABEL_SHORT = \"final loss at the best lr%s\"   # a column-wide PDF's (ob_gp_write_pdf)\n"
            "%s\n"
            "set format x \"%%g\"\n",
            wq, lr_key ? "vs the searched" : "at the best lr vs", kq,
            n_scatter == hf->n_lines ? "point = a configuration at its own best lr, median over seeds"
                                     : "point = a configuration at its own best lr (written where it changes), line = "
                                       "median over seeds",
            hl->most, n_scatter == hf->n_lines ? "bar" : n_scatter ? "band or bar" : "band",
            hl->onem && !hl->own_tics ? "1 - " : "", kq,
            hl->onem ? (hl->own_tics ? " (spaced by 1 - value, log scale)" : " (log scale)")
            : hl->zlog ? " (log scale; 0 set apart at the left)"
            : hl->logx ? " (log scale)" : "",
            hl->logy ? " (log scale)" : "", hl->logy ? " (log scale)" : "",
            hl->logx ? "set logscale x" : "unset logscale x");
}

/* The hyperparameter figure's x axis: XV(), the value as drawn, the range,
 * the tics and 0's break mark. */
static void hp_x_axis(FILE *f, const hp_layout *hl)
{
    if (hl->onem) fprintf(f, "XV(v) = 1 - v\n");
    else if (hl->zlog) fprintf(f, "XV(v) = v > 0 ? v : %.17g   # 0 drawn here\n", hl->zpos);
    else fprintf(f, "XV(v) = v\n");
    fprintf(f, "set xrange [%.9g:%.9g]\n", hl->onem ? hl->hi_ax : hl->lo_ax, hl->onem ? hl->lo_ax : hl->hi_ax);
    if (hl->own_tics) {
        fprintf(f, "set xtics (");
        for (int i = 0; i < hl->nv; i++)
            fprintf(f, "%s\"%.9g\" %.17g", i ? ", " : "", hl->vals[i], hp_x_of(hl, hl->vals[i]));
        fprintf(f, ")\n");
    } else if (hl->zlog) {
        /* "0" and the decades of the positive values (at most 8 labelled) */
        int k0 = (int)ceil(log10(hl->plo) - 1e-9), k1 = (int)floor(log10(hl->xhi) + 1e-9);
        int step = (k1 - k0) / 8 + 1;
        fprintf(f, "set xtics (\"0\" %.17g", hl->zpos);
        for (int k = k0; k <= k1; k += step) fprintf(f, ", \"%g\" %.17g", pow(10, k), pow(10, k));
        fprintf(f, ")\n");
    }
    if (hl->zlog)
        fprintf(f, "set label \"//\" at first %.9g, graph 0 center front   # the break between 0 and the rest\n",
                sqrt(hl->zpos * hl->plo));
}

/* The hyperparameter figure's y axis, sel() and the strip along the top
 * for the divergence marks. Returns the marks' step between rows. */
static double hp_y_axis(FILE *f, const ob_stats *s, const ob_hp_fig *hf, const hp_layout *hl, const char *wq,
                        const char *kq)
{
    fprintf(f,
            "%s\n"
            "set y2range [0:1]\n"
            "unset y2tics\n"
            "sel(l) = strcol(1) eq \"%s\" && strcol(2) eq \"%s\" && strcol(3) eq l\n",
            hl->logy ? "set logscale y" : "unset logscale y", wq, kq);
    double mark_step = 0.035, strip = 0;
    if (hl->any_div) {
        /* a strip along the top for the divergence marks, one row per line (as the lr figure) */
        int rows = hl->n_div_lines > 8 ? 8 : hl->n_div_lines;
        mark_step = rows > 4 ? 0.14 / rows : 0.035;
        double frac = 0.05 + mark_step * rows;
        strip = frac;
        fprintf(f, "set offsets 0, 0, graph %.3f, graph 0.05   # and room below the lowest point\n",
                frac / (1 - frac));
    } else {
        /* room above and below the points: one at a tic's value would sit on the border */
        fprintf(f, "set offsets 0, 0, graph 0.05, graph 0.05\n");
    }
    if (hl->logy) {
        range own = {NAN, NAN};
        for (int l = 0; l < hf->n_lines; l++)
            for (int i = 0; i < hf->lines[l].n; i++) {
                const ob_group *g = &s->g[hf->lines[l].p[i].group];
                ob_fig_range_add(&own, g->final.median);
                ob_fig_range_add(&own, g->final.min);
                ob_fig_range_add(&own, g->final.max);
            }
        if (!ob_fig_narrow_log_ytics(f, &own, strip)) fprintf(f, "%s", LOG_NOEXTEND);
    }
    return mark_step;
}

/* The line type of line l: the colour and marker of the line's first
 * configuration in style.gp, or where the line is its optimizer's only one
 * (one key swept), the optimizer's own (the configuration that wears them
 * may be any of the line's points: the shades follow the values). */
static int hp_line_lt(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, int l)
{
    const ob_hp_line *ln = &hf->lines[l];
    int lt = s->g[ln->p[0].group].opt + 1, alone = 1;
    for (int m = 0; m < hf->n_lines && alone; m++)
        alone = m == l || strcmp(d->opt_names[s->g[hf->lines[m].p[0].group].opt],
                                 d->opt_names[s->g[ln->p[0].group].opt]);
    if (alone) lt = ob_fig_own_lt(d, s->g[ln->p[0].group].opt);
    return lt;
}

/* Line l in the hyperparameter figure's plot command: its points with
 * their bars (a scatter) or its band, line and lr labels, and an x along
 * the top for a configuration diverged at every lr (*nth: the rows of
 * those so far). */
static void hp_plot_line(FILE *f, const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, int l,
                         double mark_step, int *nth)
{
    const ob_hp_line *ln = &hf->lines[l];
    char lq[1100];
    ob_gp_str(ln->label, lq, sizeof lq);
    const int lt = hp_line_lt(d, s, hf, l);
    if (ln->scatter) { /* configurations searched together: each a point with its min-max bar, no line */
        /* in the optimizer's own colour, as its other figures of the search */
        fprintf(f,
                /* the bar's ends of the line's rows alone: gnuplot's autoscale takes every row's */
                "%s  'hp_sweep.csv' skip 1 using (XV($4)):(sel(\"%s\") ? $7 : NaN):(sel(\"%s\") ? $8 : NaN):"
                "(sel(\"%s\") ? $9 : NaN) with yerrorbars lt %d dt 1 title \"%s\"",
                l ? ", \\\n" : "", lq, lq, lq, lt, lq);
    } else {
        fprintf(f,
                "%s  'hp_sweep.csv' skip 1 using (XV($4)):(sel(\"%s\") ? $8 : NaN):9 with filledcurves lt %d notitle, \\\n"
                "  'hp_sweep.csv' skip 1 using (XV($4)):(sel(\"%s\") ? $7 : NaN) with linespoints lt %d title \"%s\", \\\n"
                /* the lr written at a line's first point and where it changes
                 * along the line (the same lr at every point once, not over
                 * and over where lines cross); p_l: the line's previous lr,
                 * reset at the file's first row, so replots draw the same
                 * (in the x column, which gnuplot reads at every row: a row
                 * whose x is undefined, another key's value, skips the rest) */
                "  'hp_sweep.csv' skip 1 using (($0 == 0 ? p_%d = -1 : 0), XV($4)):(sel(\"%s\") ? "
                "(show = $5 != p_%d, p_%d = $5, show ? $7 : NaN) : NaN):(sprintf(\"lr %%g\", $5)) with labels "
                "offset char 0,%.1f font \",8\" tc lt %d notitle",
                l ? ", \\\n" : "", lq, lt, lq, lt, lq, l, lq, l, l, l % 2 ? -1.0 : 0.9, lt);
    }
    int div_here = 0;
    for (int i = 0; i < ln->n; i++) div_here |= ob_hp_diverged_everywhere(&s->g[ln->p[i].group]);
    if (div_here)
        fprintf(f,
                ", \\\n  'hp_sweep.csv' skip 1 using (XV($4)):(sel(\"%s\") && $12 == 1 ? %.3f : NaN) axes x1y2 "
                "with points lt %d pt 2 ps (2 * PS) lw 3 notitle",
                lq, 0.97 - mark_step * ((*nth)++ % 8), lt);
}

/* The hyperparameter figure's script (stem, in dir). */
static ob_status hp_script(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, const hp_layout *hl,
                           const char *dir, const char *stem, ob_err *e)
{
    char wq[512], kq[256];
    ob_gp_str(d->wl_labels[hf->wl], wq, sizeof wq);
    ob_gp_str(hf->key, kq, sizeof kq);
    script sc;
    OB_TRY(ob_fig_script_open(&sc, dir, stem, "final loss at the best lr vs a swept hyperparameter",
                       "hp_sweep.csv (workload, key, line, value, best_lr, seeds, final_median, "
                       "final_min, final_max, diverged_runs, finished_runs, diverged_everywhere, optimizer)", e));
    FILE *f = sc.f;
    hp_header(f, hf, hl, wq, kq, !strcmp(hf->key, "lr"));
    hp_x_axis(f, hl);
    const double mark_step = hp_y_axis(f, s, hf, hl, wq, kq);
    size_t key_len = hl->any_div ? 31 : 0;
    for (int l = 0; l < hf->n_lines; l++)
        if (strlen(hf->lines[l].label) > key_len) key_len = strlen(hf->lines[l].label);
    ob_fig_key_fit(&sc, hf->n_lines + hl->any_div, key_len);
    fprintf(f, "plot \\\n");
    int nth = 0;
    for (int l = 0; l < hf->n_lines; l++) hp_plot_line(f, d, s, hf, l, mark_step, &nth);
    if (hl->any_div)
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 2 ps (2 * PS) lw 3 title \"x at the top: every lr diverged\"");
    fprintf(f, "\n");
    return ob_fig_script_close(&sc, e);
}

/* The caption's note on the points whose best lr is the grid's smallest or
 * largest (tuned only within the grid), into edge (n bytes; "" without). */
static void hp_edge_note(const ob_stats *s, const ob_hp_fig *hf, char *edge, size_t n)
{
    int n_pts = 0, n_edge = 0;
    for (int l = 0; l < hf->n_lines; l++)
        for (int i = 0; i < hf->lines[l].n; i++) {
            const ob_group *g = &s->g[hf->lines[l].p[i].group];
            if (g->best < 0) continue;
            n_pts++;
            n_edge += g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1);
        }
    char count[32];
    snprintf(count, sizeof count, "%d", n_edge);
    edge[0] = 0;
    if (!n_edge) return;
    if (n_pts == 1)
        snprintf(edge, n, " The point has its best lr at the edge of the lr grid, so it is tuned only "
                          "within the grid: the best may lie beyond it.");
    else
        snprintf(edge, n, " %s of the %d points %s best lr at the edge of the lr grid, so %s tuned "
                          "only within the grid: the best may lie beyond it.",
                 n_edge == n_pts ? "All" : count, n_pts, n_edge == 1 ? "has its" : "have their",
                 n_edge == 1 ? "it is" : "they are");
}

/* The caption's note on the optimizers whose keys were searched together
 * (scatter lines), into scat (n bytes; "" without). */
static void hp_scatter_note(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, char *scat, size_t n)
{
    scat[0] = 0;
    for (int l = 0, n_sc = 0; l < hf->n_lines; l++) {
        if (!hf->lines[l].scatter) continue;
        size_t len = strlen(scat);
        snprintf(scat + len, n - len, "%s%.40s", n_sc++ ? ", " : " For ",
                 d->opt_names[s->g[hf->lines[l].p[0].group].opt]);
    }
    if (scat[0]) {
        size_t len = strlen(scat);
        snprintf(scat + len, n - len,
                 ", whose swept keys were searched together (each configuration differs in the others too), each "
                 "configuration is a point with a bar from its best to its worst seed, on no line.");
    }
}

/* The caption's note on the axes' scales. */
static const char *hp_axes_note(const hp_layout *hl)
{
    const int logy = hl->logy;
    return hl->onem ? (logy ? " The x axis is 1 - value on a logarithmic scale (reversed, so the values "
                              "grow to the right and those near 1 spread out); the y axis is logarithmic "
                              "too."
                            : " The x axis is 1 - value on a logarithmic scale (reversed, so the values "
                              "grow to the right and those near 1 spread out).")
           : hl->zlog ? (logy ? " Both axes are logarithmic; 0, which a log scale cannot show, is drawn a "
                                "decade left of the smallest positive value, past the break (//)."
                              : " The x axis is logarithmic; 0, which a log scale cannot show, is drawn a "
                                "decade left of the smallest positive value, past the break (//).")
           : hl->logx && logy ? " Both axes are logarithmic."
           : hl->logx         ? " The x axis is logarithmic."
           : logy             ? " The y axis is logarithmic (as the learning-rate figure's would be)."
                              : "";
}

/* The hyperparameter figure in the report, with its caption: a search's
 * lr (the key "lr"), or a swept key's lines. */
static ob_status hp_caption(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, const hp_layout *hl,
                            const char *stem, const char *title, ob_figures *out, ob_err *e)
{
    char edge[300], scat[400];
    hp_edge_note(s, hf, edge, sizeof edge);
    hp_scatter_note(d, s, hf, scat, sizeof scat);
    if (!strcmp(hf->key, "lr"))
        return ob_fig_add(out, e, stem, hf->wl, title,
                       "Final training loss (mean over the last 10%% of steps) of each configuration of a search whose "
                       "learning rate was drawn with its other settings (--lrs LO..HI with --trials), against that lr: "
                       "a point per configuration, the median over seeds, a bar from the best to the worst seed that "
                       "did not diverge, on no line (the configurations differ in their other settings too).%s%s "
                       "Values in hp_sweep.csv.",
                       hl->any_div ? " An x along the top edge marks a configuration whose seeds diverged (half or more)." : "",
                       hl->logy ? " The y axis is logarithmic." : "");
    return ob_fig_add(out, e, stem, hf->wl, title,
                   "Final training loss (mean over the last 10%% of steps) against %s, for the configurations "
                   "that differ only in %s: one line per optimizer and setting of its other swept keys. Each point "
                   "is one configuration at its own best learning rate (written beside a line's first point and "
                   "where it changes along the line; the lr sweep "
                   "was run for each value), so the line shows the sensitivity to %s once the lr is tuned: a flat "
                   "line means the value matters little.%s The line is the median over seeds at that lr, the band "
                   "spans the best and the worst seed that did not diverge.%s%s%s Values in hp_sweep.csv.",
                   hf->key, hf->key, hf->key, edge, scat,
                   hl->any_div ? " An x along the top edge marks a configuration for which every lr diverged (half "
                                 "the seeds or more at each): it has no best lr and no point, and the line has a gap "
                                 "there." : "",
                   hp_axes_note(hl));
}

/* Final loss at the best lr against a swept hyperparameter (hp_sweep.csv):
 * one line per optimizer and setting of its other swept keys, each point a
 * configuration at its own best lr; an optimizer whose keys were searched
 * together (scatter lines) is points with min-max bars, on no line. */
ob_status ob_fig_hp(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, const char *dir,
                 const char *slug, ob_figures *out, ob_err *e)
{
    const int w = hf->wl;
    hp_layout hl;
    memset(&hl, 0, sizeof hl);
    int any_lr, any_div_lr, any_conf;
    range yr = ob_fig_lr_yrange(s, w, &any_lr, &any_div_lr, &any_conf);
    hl.logy = ob_fig_spans_decades(&yr); /* as the lr figure of this workload */
    hp_scan(s, hf, &hl);
    char ks[128], stem[400], title[300];
    ob_slug(hf->key, ks, sizeof ks);
    snprintf(stem, sizeof stem, "hp_%.180s_%.60s", slug, ks);
    snprintf(title, sizeof title, "Sensitivity to %s", hf->key);
    if (!hl.any_point) {
        char why[400];
        snprintf(why, sizeof why,
                 "Not drawn: every configuration that differs in %.100s diverged at every lr (half the "
                 "seeds or more at each), so none has a best lr; hp_sweep.csv lists them.", hf->key);
        return ob_fig_add_skipped(out, e, stem, w, title, why);
    }
    hp_x_scale(&hl);
    hp_x_tic_values(hf, &hl);
    OB_TRY(hp_script(d, s, hf, &hl, dir, stem, e));
    return hp_caption(d, s, hf, &hl, stem, title, out, e);
}
