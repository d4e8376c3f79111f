/* plots/figures.c - the report's gnuplot scripts (see figures.h).
 *
 * Figures: per workload the training loss at each optimizer's best lr (median
 * over seeds, min-max band, the loss floor when known), held-out loss and
 * metric, final loss vs lr (sensitivity) and, for each hyperparameter swept
 * besides the lr (run --sweep), final loss at the best lr vs its value
 * (hp_WORKLOAD_KEY, from hp_sweep.csv); over all workloads the step time
 * and memory bars, time to target, and the performance profile. Series are
 * selected from the long CSV tables by workload and optimizer with a small
 * gnuplot function sel(), so each script reads the documented tables as they are.
 */
#include "plots/figures.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plots/style.h"
#include "results/export.h"
#include "workloads/workload.h"


#define FIG_W 1000
#define FIG_H 620

void ob_gp_str(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 2 < n; s++) {
        if (*s == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
            continue;
        }
        if (*s == '"' || *s == '\\') out[k++] = '\\';
        out[k++] = *s;
    }
    out[k] = 0;
}

typedef struct script {
    FILE *f;
    int no_key;     /* the figure has no legend */
    char *relayout; /* NULL, or the PDF's settings for its width (gp_write_pdf), malloc'd */
    char stem[256];
    char path[1024];
} script;

static void gp_write_pdf(FILE *f, const char *stem, const char *extra, const char *relayout);

void ob_gp_write_pdf(FILE *f, const char *stem, const char *extra) { gp_write_pdf(f, stem, extra, NULL); }

/* ob_gp_write_pdf, with relayout (gnuplot lines, or NULL) last before the
 * PDF is drawn: settings that depend on the PDF's width, which only gnuplot
 * knows (gnuplot -e 'PDF_WIDTH = 3.3' NAME.gp) */
static void gp_write_pdf(FILE *f, const char *stem, const char *extra, const char *relayout)
{
    /* PDF_WIDTH inches wide (style.gp sets it from report --pdf-width; 6.5,
     * a page's text width, where nothing does) at the size the paper prints
     * it: a text width 0.62 as high with 8-point text; narrower than 4.5
     * inches (a column, 3.3) 0.8 as high, for the legend's extra rows, with
     * 6-point text and thinner lines, and without its title unless
     * PDF_TITLES says (style.gp); the legend's columns follow the width
     * (KEY_N entries, the longest KEY_LONGEST characters: key_fit). pdfcairo
     * is in Debian's gnuplot-nox */
    fprintf(f,
            "\n# the same figure as PDF (vector, for papers), where gnuplot has pdfcairo: PDF_WIDTH inches wide\n"
            "# (style.gp, or gnuplot -e 'PDF_WIDTH = 3.3' NAME.gp): 6.5 a page's text width, 0.62 as high, 8-point\n"
            "# text; narrower than 4.5 (3.3: a column of a two-column paper) 0.8 as high, 6-point text, no title\n"
            "# (fontscale 0.75: pdfcairo draws a font of N points at 2/3 of N otherwise; the terminal's font is 8\n"
            "# and the scale brings it to PDF_FONT, so that the annotations' fixed 8 points shrink with the text)\n"
            "if (strstrt(GPVAL_TERMINALS, \"pdfcairo\") > 0) {\n"
            "    PDF_WIDTH = exists(\"PDF_WIDTH\") ? PDF_WIDTH : 6.5\n"
            "    PDF_NARROW = PDF_WIDTH < 4.5\n"
            "    PDF_FONT = PDF_NARROW ? 6 : 8\n"
            "    set terminal pdfcairo size PDF_WIDTH, PDF_WIDTH * (PDF_NARROW ? 0.8 : 0.62) \\\n"
            "        font \"Sans,8\" fontscale (0.75 * PDF_FONT / 8) linewidth (PDF_NARROW ? 0.7 : 0.8) noenhanced\n"
            "    # PDF_TITLES = 0 (style.gp, or gnuplot -e 'PDF_TITLES = 0' NAME.gp): no title, for a paper's caption\n"
            "    if (exists(\"PDF_TITLES\") ? !PDF_TITLES : PDF_NARROW) {\n"
            "        unset title\n"
            "    }\n"
            "%s"
            "    if (PDF_NARROW) {   # smaller marks for the smaller frame, and a y label that fits its height\n"
            "        PS = 0.8 * PS\n"
            "        set pointsize 0.45\n"
            "        if (exists(\"YLABEL_SHORT\")) {\n"
            "            set ylabel YLABEL_SHORT\n"
            "        }\n"
            "    }\n"
            "    # the legend's columns: as many as its longest entry lets fit across this width\n"
            "    if (exists(\"KEY_N\") && KEY_N > 0) {\n"
            "        KEY_COLS = int(100.0 * PDF_WIDTH / 6.5 * 8 / PDF_FONT / (KEY_LONGEST + 10))\n"
            "        KEY_COLS = KEY_COLS < 1 ? 1 : KEY_COLS > KEY_N ? KEY_N : KEY_COLS\n"
            "        KEY_ROWS = (KEY_N + KEY_COLS - 1) / KEY_COLS\n"
            "        set key maxcols (KEY_N + KEY_ROWS - 1) / KEY_ROWS maxrows KEY_ROWS\n"
            "    }\n"
            "%s"
            "    set output '%s.pdf'\n"
            "    replot\n"
            "    set output\n"
            "}\n",
            extra ? extra : "", relayout ? relayout : "", stem);
}

static ob_status script_open(script *sc, const char *dir, const char *stem, const char *what,
                             const char *reads, ob_err *e)
{
    sc->no_key = 0;
    sc->relayout = NULL;
    snprintf(sc->stem, sizeof sc->stem, "%s", stem);
    snprintf(sc->path, sizeof sc->path, "%s/%s.gp", dir, stem);
    sc->f = fopen(sc->path, "w");
    if (!sc->f) return ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", sc->path, strerror(errno));
    fprintf(sc->f,
            "# %s.gp - %s\n"
            "# Reads %s. Run `gnuplot %s.gp` in this folder to redraw %s.png, .svg and .pdf.\n"
            "load 'style.gp'\n"
            "set output '%s.png'\n",
            stem, what, reads, stem, stem, stem);
    return OB_OK;
}

static ob_status script_close(script *sc, ob_err *e)
{
    fprintf(sc->f,
            "\n# the same figure as SVG\n"
            "set terminal svg size %d,%d dynamic font \"Sans,12\" background rgb \"white\" noenhanced\n"
            "set output '%s.svg'\n"
            "replot\n"
            "set output\n",
            FIG_W, FIG_H, sc->stem);
    gp_write_pdf(sc->f, sc->stem,
                 sc->no_key ? "    PS = 0.5\n    set pointsize 0.55\n"
                            : "    PS = 0.5\n    set pointsize 0.55\n"
                              "    set key height 1   # room between the x label and the legend\n",
                 sc->relayout);
    free(sc->relayout);
    sc->relayout = NULL;
    int bad = ferror(sc->f);
    if (fclose(sc->f) != 0) bad = 1;
    if (bad) return ob_fail(e, OB_ERR_IO, "writing '%s' failed", sc->path);
    return OB_OK;
}

static ob_status add_fig(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
                         const char *fmt, ...) OB_PRINTF(6, 7);
static ob_status add_fig(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
                         const char *fmt, ...)
{
    ob_figure *fs = realloc(out->f, (size_t)(out->n + 1) * sizeof *out->f);
    if (!fs) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    out->f = fs;
    ob_figure *f = &out->f[out->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->stem, sizeof f->stem, "%s", stem);
    snprintf(f->title, sizeof f->title, "%s", title);
    f->wl = wl;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->caption, sizeof f->caption, fmt, ap);
    va_end(ap);
    return OB_OK;
}

/* Legend layout: the legend below the plot gets as many columns as its
 * longest entry (longest characters) lets fit across the figure, so long
 * labels (optimizers with their swept hyperparameters) are not cut off at
 * the right edge: about 100 characters of text fit across the PNG, the SVG
 * and the PDF alike, each column also holding its sample line and gaps
 * (about 10 characters more). n entries; the rows are filled evenly. */
static void key_fit(script *sc, int n, size_t longest)
{
    if (n < 1) return;
    fprintf(sc->f, "KEY_N = %d; KEY_LONGEST = %zu   # the legend, for the PDF's columns\n", n, longest);
    int cols = (int)(100 / (longest + 10));
    if (cols < 1) cols = 1;
    if (cols > n) cols = n;
    int rows = (n + cols - 1) / cols;
    cols = (n + rows - 1) / rows;
    fprintf(sc->f, "set key maxcols %d maxrows %d\n", cols, rows);
}

static ob_status write_style(const ob_dataset *d, const char *dir, double pdf_width, ob_err *e)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/style.gp", dir);
    FILE *f = fopen(path, "w");
    if (!f) return ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    fprintf(f,
            "# style.gp - the look shared by every figure of this report (each NAME.gp loads it).\n"
            "# Change size, fonts or colours here, then rerun the scripts: gnuplot NAME.gp\n"
            "# the PDFs' width in inches (optbench report --pdf-width): 6.5 a page's text width, 3.3 a\n"
            "# column of a two-column paper; height, text size and legend follow it (each NAME.gp's PDF part)\n"
            "if (!exists(\"PDF_WIDTH\")) PDF_WIDTH = %g\n"
            "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "    set terminal pngcairo size %d,%d font \"Sans,11\" noenhanced\n"
            "} else {\n"
            "    set terminal png size %d,%d noenhanced\n"
            "}\n"
            "set datafile separator comma\n"
            "set grid xtics ytics lc rgb \"#dddddd\" lt 1 dt 1\n"
            "set border 3\n"
            "set xtics nomirror\n"
            "set ytics nomirror\n"
            "set key below left Left reverse maxrows 4 samplen 4 width 4 height 1   # height: room under the x label\n"
            "# marker size: PS scales the explicit sizes, pointsize the others (the PDF sets both smaller)\n"
            "PS = 1\n"
            "set pointsize 1.1\n"
            "set style fill transparent solid 0.18 noborder\n"
            "# 0: the PDFs (for papers) without their titles, which a paper's caption replaces; the PNGs keep them\n"
            "# (the default for PDFs narrower than 4.5 inches, where a title would not fit; 1 keeps it)\n"
            "if (!exists(\"PDF_TITLES\")) PDF_TITLES = PDF_WIDTH >= 4.5\n"
            "# one colour, marker shape and dash type per optimizer, the same in every figure and every report;\n"
            "# an optimizer's configurations (swept hyperparameters, a search's trials) take shades of its colour,\n"
            "# dark to light in the order listed (by the swept values), the one at the colour's own lightness the\n"
            "# colour itself and the optimizer's marker and dashes (\"its own\"), the others markers of their own:\n",
            pdf_width > 0 ? pdf_width : OB_PDF_TEXT_WIDTH, FIG_W, FIG_H, FIG_W, FIG_H);
    size_t n_alloc = (size_t)(d->n_opt > 0 ? d->n_opt : 1);
    ob_colour *colour = malloc(n_alloc * sizeof *colour);
    int *mark = malloc(2 * n_alloc * sizeof *mark); /* shapes, then dash types */
    if (!colour || !mark) {
        free(colour);
        free(mark);
        fclose(f);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    ob_series_colours((const char *const *)d->opt_names, d->n_opt, colour);
    ob_series_marks((const char *const *)d->opt_names, d->n_opt, mark, mark + n_alloc);
    for (int o = 0; o < d->n_opt; o++) {
        int rank = 0, count = 1;
        const int own = ob_series_family((const char *const *)d->opt_names, d->n_opt, o, &rank, &count);
        /* which shade, on a line of its own: the linetype's comment is the
         * configuration's label alone (history reads it) */
        if (count > 1)
            fprintf(f, "# %s: %s's shade %d of %d%s\n", d->opt_labels[o], d->opt_names[o], rank + 1, count,
                    own == o ? ", its own colour, marker and dashes" : "");
        fprintf(f, "set linetype %d lc rgb \"%s\" lw 2 pt %d dt %d   # %s\n", o + 1, colour[o].hex, mark[o],
                mark[n_alloc + (size_t)o], d->opt_labels[o]);
    }
    if (d->n_opt == 0) fprintf(f, "set linetype 1 lc rgb \"#0077bb\" lw 2 pt 7\n");
    free(mark);
    free(colour);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) return ob_fail(e, OB_ERR_IO, "writing '%s' failed", path);
    return OB_OK;
}

/* Positive finite range of values, for the log-scale decision. */
typedef struct range {
    double lo, hi;
} range;
static void range_add(range *r, double v)
{
    if (!(v > 0) || !isfinite(v)) return;
    if (isnan(r->lo) || v < r->lo) r->lo = v;
    if (isnan(r->hi) || v > r->hi) r->hi = v;
}
/* y tics for a log axis whose values lie within a decade or so (an hp
 * figure on its workload's log scale): gnuplot would label only the decades
 * around them, 0.1 and 1 with nothing readable between; 1-2-5 steps (or finer
 * where that gives fewer than three) across the values instead. Returns 1
 * when it set the axis, 0 when the values span more (gnuplot's own). */
static int narrow_log_ytics(FILE *f, const range *r, double strip)
{
    if (isnan(r->lo) || !(r->hi / r->lo < 30)) return 0;
    /* the axis around the values (autoscaling would stretch it to whole
     * decades), with the strip for the divergence marks above them */
    const double bot = r->lo / 1.15, top = r->hi * 1.15;
    fprintf(f, "set yrange [%.9g:%.9g]\n", bot, strip > 0 ? top * pow(top / bot, strip / (1 - strip)) : top);
    static const double coarse[] = {1, 2, 5}, fine[] = {1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9};
    const double lo = bot, hi = r->hi * 1.15;
    double t[100];
    int n = 0;
    /* 1-2-5, else finer mantissas, else steps of a tenth of the decade
     * (values within a few percent of each other: 2.3, 2.4, 2.5) */
    static const int need[3] = {3, 2, 2};
    for (int pass = 0; pass < 3; pass++) {
        n = 0;
        const int nm = pass == 0 ? 3 : pass == 1 ? 10 : 90;
        for (int k = (int)floor(log10(lo)); k <= (int)ceil(log10(hi)) && n < 90; k++)
            for (int i = 0; i < nm && n < 90; i++) {
                double v = (pass == 0 ? coarse[i] : pass == 1 ? fine[i] : 1 + i * 0.1) * pow(10, k);
                if (v >= lo && v <= hi) t[n++] = v;
            }
        if (n >= need[pass]) break;
    }
    if (n < 2) { /* narrower still: the two ends and the middle */
        t[0] = lo * 1.02, t[1] = sqrt(lo * hi), t[2] = hi / 1.02;
        n = 3;
    }
    const int every = n / 8 + 1; /* at most about 8 labelled */
    fprintf(f, "set ytics (");
    for (int i = 0; i < n; i += every) fprintf(f, "%s\"%.3g\" %.17g", i ? ", " : "", t[i], t[i]);
    fprintf(f, ")   # the values lie within a decade or so: steps inside it, not only its ends\n");
    return 1;
}

/* A log axis autoscaled with offsets (room around the points): gnuplot
 * widens the data's range to whole decades, adds the offsets and widens to
 * whole decades again, so that data over 3 decades took 6 and left a third
 * of the plot empty. Only the offsets, then. */
#define LOG_NOEXTEND_LINE "set autoscale yfix   # the offsets' room around the points, not whole decades beyond it"
#define LOG_NOEXTEND LOG_NOEXTEND_LINE "\n"

/* Log scale when the values span two decades or more. */
static int spans_decades(const range *r) { return !isnan(r->lo) && r->hi / r->lo >= 100.0; }

static void lr_text(double lr, char *buf, size_t n) { snprintf(buf, n, "%.3g", lr); }

/* The line type (style.gp) of optimizer configuration o's optimizer as a
 * whole: its configuration in the optimizer's own colour, marker and dash
 * type (ob_series_family; the first configuration when no sweep made others
 * or the registry does not know the optimizer). */
static int own_lt(const ob_dataset *d, int o)
{
    return ob_series_family((const char *const *)d->opt_names, d->n_opt, o, NULL, NULL) + 1;
}

/* ---- per-workload figures ---------------------------------------------------- */

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

/* After a loss figure's "lr 0.03": ", grid edge" where that best lr is the
 * smallest or largest the optimizer ran (a better one may lie beyond, as
 * the lr figure's legend says too). */
static const char *edge_note(const ob_group *g)
{
    return g->best >= 0 && g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1) ? ", grid edge" : "";
}

/* ", 3 of 7 diverged" when seeds of g's best lr diverged, else "" */
static const char *diverged_note(const ob_dataset *d, const ob_group *g, char *buf, size_t n)
{
    int nd = 0;
    for (int i = 0; i < g->n_best_runs; i++) nd += d->runs[g->best_runs[i]].diverged != 0;
    if (nd) snprintf(buf, n, ", %d of %d diverged", nd, g->n_best_runs);
    else buf[0] = 0;
    return buf;
}

/* More lines than this on a loss or held-out figure (the nightly config's
 * 18 optimizers): their min-max bands, each translucent, lie over one
 * another until they hide the lines in one opaque blur, so the figure
 * draws the medians alone (the CSVs keep min and max). */
#define BAND_MAX_LINES 8

/* The training-loss figure of workload w as fig_loss lays it out: the
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
            for (int64_t j = 0; j < run->n_curve; j++) range_add(&lf->r, run->c_loss[j]);
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
    lf->logy = spans_decades(&lf->r);
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
                     strlen(diverged_note(d, g, dn, sizeof dn)) + strlen(edge_note(g));
        n_key++;
        if (len > key_len) key_len = len;
    }
    key_fit(sc, n_key, key_len);
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
        lr_text(g->best_lr, lr, sizeof lr);
        if (lf->bands)
            fprintf(f, "%s  'curves_best.csv' skip 1 using 5:(sel(\"%s\") ? $7 : NaN):8 with filledcurves lt %d notitle",
                    first ? "" : ", \\\n", oq, g->opt + 1);
        fprintf(f,
                "%s  'curves_best.csv' skip 1 using 5:(sel(\"%s\") ? $6 : NaN) with linespoints lt %d pi %d ps PS "
                "title \"%s (lr %s%s%s)\"",
                lf->bands ? ", \\\n" : first ? "" : ", \\\n", oq, g->opt + 1, point_every(g, d, k), oq, lr,
                edge_note(g), diverged_note(d, g, dn, sizeof dn));
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
    return add_fig(out, e, stem, lf->w, "Training loss",
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
static ob_status fig_loss(const ob_dataset *d, const ob_stats *s, int w, const char *dir,
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
    OB_TRY(script_open(&sc, dir, stem, "training loss vs step, each optimizer at its best lr",
                       "curves_best.csv (workload, optimizer, lr, seeds, step, loss_median, "
                       "loss_min, loss_max)", e));
    loss_header(sc.f, &lf);
    loss_key(&sc, d, s, &lf);
    loss_plot(sc.f, d, s, &lf);
    OB_TRY(script_close(&sc, e));
    return loss_caption(d, s, &lf, stem, out, e);
}

/* Is the lr figure's band drawn at p: no seed there diverged or ended
 * without a finite final loss (either is +inf at the band's top, and the
 * survivors' range would flatter the lr); lr_sweep.csv's columns 6 and 15. */
static int band_drawn(const ob_lr_point *p) { return p->n_diverged == 0 && p->n_nonfinite == 0; }

/* The y values of workload w's lr figure (every lr's median and spread, the
 * confirmation runs'): its y axis is logarithmic when they span two decades,
 * and the hyperparameter figures of w follow it. */
/* *any_div: 1 when a sweep seed diverged or finished without a finite loss,
 * 2 when a fresh one diverged (both: 3), plus 4 when a sweep seed finished
 * without a finite loss */
static range lr_fig_yrange(const ob_stats *s, int w, int *any, int *any_div, int *any_conf)
{
    range r = {NAN, NAN};
    *any = *any_div = *any_conf = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w) continue;
        for (int i = 0; i < g->n_lr; i++) {
            range_add(&r, g->lrs[i].med);
            /* the band, drawn only where every seed ended finite (elsewhere
             * its top, the worst seed, is +inf) */
            if (band_drawn(&g->lrs[i])) {
                range_add(&r, g->lrs[i].min_finite);
                range_add(&r, g->lrs[i].max_finite);
            }
            if (g->lrs[i].n_diverged > 0) *any_div |= 1;
            if (g->lrs[i].n_nonfinite > 0) *any_div |= 1 | 4;
            *any = 1;
        }
        /* the confirmation runs' median and range at their lr (confirm.csv) */
        if (g->confirm_lr == g->best_lr && g->n_confirm) {
            if (isfinite(g->conf_final.median)) {
                *any_conf = 1;
                range_add(&r, g->conf_final.median);
                range_add(&r, g->conf_final.min);
                range_add(&r, g->conf_max_finite);
            }
            if (g->conf_n_diverged > 0) *any_div |= 2;
        }
    }
    return r;
}

/* The largest first training loss of workload w's runs that did not
 * diverge (NaN when none): the worst point any of them started from. */
static double initial_loss(const ob_dataset *d, int w)
{
    double m = NAN;
    for (int i = 0; i < d->n; i++) {
        const ob_rrun *r = &d->runs[i];
        if (r->wl == w && !r->diverged && isfinite(r->first_loss) && !(r->first_loss <= m)) m = r->first_loss;
    }
    return m;
}

/* The shortest label of lr, 2 to 4 significant digits, that reads back as
 * it (0.0012, 0.00215, 0.464), else 3 digits. */
static int lr_tic_text(double lr, char *buf, size_t n)
{
    if (lr >= 10 && lr < 1e6 && lr == floor(lr)) return snprintf(buf, n, "%.0f", lr); /* 100, not 1e+02 */
    for (int prec = 2; prec <= 4; prec++) {
        int len = snprintf(buf, n, "%.*g", prec, lr);
        if (fabs(strtod(buf, NULL) - lr) <= 1e-9 * fabs(lr)) return len;
    }
    return snprintf(buf, n, "%.3g", lr);
}

/* The lr figure's x axis is laid out in characters of its tic labels: the
 * PNG's (880 px, 11 px a character with the room a label needs around it)
 * is LR_AXIS_PNG of them; a PDF's is measured when gnuplot draws it
 * (lr_pdf_layout): a column's (3.3 inches) about 35, a text width's about
 * 58. */
#define LR_AXIS_PNG 80.0

/* Labels a and b of values va, vb on the log axis from lo to hi, axis
 * characters long, run into each other (or read the same): less than half
 * their widths and 1.6 characters apart. */
static int tics_crowd(double va, double vb, double lo, double hi, double axis)
{
    char ta[32], tb[32];
    int la = lr_tic_text(va, ta, sizeof ta), lb = lr_tic_text(vb, tb, sizeof tb);
    double gap = fabs(log10(va / vb)) / log10(hi / lo) * axis;
    return gap < (la + lb) / 2.0 + 1.6 || !strcmp(ta, tb);
}

/* The same for labels turned 45 degrees, which need only their height
 * apart over sin 45: 2 characters (22 px of the PNG's 880). */
static int tics_crowd_turned(double va, double vb, double lo, double hi, double axis)
{
    char ta[32], tb[32];
    lr_tic_text(va, ta, sizeof ta);
    lr_tic_text(vb, tb, sizeof tb);
    return fabs(log10(va / vb)) / log10(hi / lo) * axis < 2.0 || !strcmp(ta, tb);
}

#define LR_TICS_MAX 40

/* The lrs swept on workload w as the lr figure's x tics, so that the best
 * lr, 0.464 say, reads as such, not between the decades 0.1 and 1: at most
 * LR_TICS_MAX of them, ascending, in vals; labelled[i] says which carry a
 * label: the optimizers' best lrs first, then the grid's two ends (where the
 * axis starts and stops), then every other one whose label does not run into
 * a labelled one's on the log axis from lo to hi (the others are unlabelled
 * tics): where labels crowd, an interior lr that is no optimizer's best goes
 * without. A best lr or an end whose label would still run into one of
 * those (a best lr next to another, or to the grid's end) is labelled on a
 * second line under the first (labelled[i] 2), where it does not run into
 * another there. turned: for labels turned 45 degrees, which need less room
 * and have no second line. Returns how many, 0 to leave the tics at the
 * decades (more lrs than that). The axis is axis characters long. */
static int lr_tics(const ob_stats *s, int w, double lo, double hi, double axis, int turned, double *vals,
                   int *labelled)
{
    int nv = 0;
    for (int k = 0; k < s->n_g; k++)
        for (int i = 0; s->g[k].wl == w && i < s->g[k].n_lr; i++) {
            double v = s->g[k].lrs[i].lr;
            int seen = 0;
            for (int j = 0; j < nv && !seen; j++) seen = vals[j] == v;
            if (seen || !(v > 0)) continue;
            if (nv == LR_TICS_MAX) return 0;
            vals[nv++] = v;
        }
    for (int i = 1; i < nv; i++) /* ascending */
        for (int j = i; j > 0 && vals[j - 1] > vals[j]; j--) {
            double t = vals[j];
            vals[j] = vals[j - 1];
            vals[j - 1] = t;
        }
    for (int i = 0; i < nv; i++) labelled[i] = 0;
    for (int pass = 0; pass < (turned ? 3 : 4); pass++)
        for (int i = 0; i < nv; i++) {
            int best = 0;
            for (int k = 0; k < s->n_g && !best; k++) best = s->g[k].wl == w && s->g[k].best_lr == vals[i];
            const int end = i == 0 || i == nv - 1;
            if (labelled[i] || (pass == 0 && !best) || (pass == 1 && !end) || (pass == 3 && !best && !end))
                continue;
            /* passes 0 to 2: the first line; 3: the second */
            const int line = pass == 3 ? 2 : 1;
            int ok = 1;
            for (int j = 0; j < nv && ok; j++)
                ok = labelled[j] != line || !(turned ? tics_crowd_turned(vals[i], vals[j], lo, hi, axis)
                                                     : tics_crowd(vals[i], vals[j], lo, hi, axis));
            labelled[i] = ok ? line : 0;
        }
    return nv;
}

/* The legend's note after an optimizer in the lr figure: its best lr (", best
 * lr 0.464", "at the grid's edge" when it is the smallest or the largest lr
 * the optimizer ran: the best may lie beyond), or why it has none (no line
 * to see: its x marks are along the top). */
static const char *lr_key_note(const ob_group *g, char *buf, size_t n)
{
    char t[32];
    if (g->best >= 0) {
        lr_tic_text(g->best_lr, t, sizeof t);
        snprintf(buf, n, ", best lr %s%s", t,
                 g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1) ? " (grid edge)" : "");
    } else {
        snprintf(buf, n, "%s", g->n_finished ? " (diverged at every lr)" : " (no run finished)");
    }
    return buf;
}

/* The lr figure's strip of marks along the top, laid out in pixels of the
 * PNG (FIG_W x FIG_H, measured on rendered figures): a row for each
 * optimizer with a mark, LR_ROW_PX apart, so that an x (pt 2 at ps 2, about
 * 14 px tall) and its 8-point k/n label (about 11 px) clear the next row's;
 * LR_STRIP_PAD above the first row and below the last (half a marker and a
 * gap). The 11-point text of the tics is about 8 px a character wide, the
 * 8-point labels about 6. */
#define LR_ROW_PX 18.0
#define LR_STRIP_PAD 14.0
#define LR_CHAR_PX 8.1
#define LR_SMALL_PX 6.0

/* Has group g a mark in the lr figure's strip: an x where a sweep seed
 * diverged or ended without a finite loss, or a square where a fresh seed
 * at the best lr diverged. */
static int lr_sweep_marks(const ob_group *g)
{
    for (int i = 0; i < g->n_lr; i++)
        if (g->lrs[i].n_diverged + g->lrs[i].n_nonfinite > 0) return 1;
    return 0;
}
static int lr_conf_mark(const ob_group *g)
{
    return g->confirm_lr == g->best_lr && g->n_confirm && g->conf_n_diverged > 0;
}

/* The rows of the legend below the plot for n entries up to longest
 * characters, as key_fit lays them out: each takes about 17 px of the PNG
 * from the plot, whose height the strip's rows are measured against. */
static int lr_key_rows(int n, size_t longest)
{
    if (n < 1) return 0;
    int cols = (int)(100 / (longest + 10));
    if (cols < 1) cols = 1;
    if (cols > n) cols = n;
    return (n + cols - 1) / cols;
}

/* The k/n label of lr point p (k of its n finished seeds diverged or ended
 * without a finite loss), as gnuplot's sprintf writes it from lr_sweep.csv. */
static int lr_mark_text(const ob_lr_point *p, char *buf, size_t n)
{
    return snprintf(buf, n, "%d/%d", p->n_diverged + p->n_nonfinite, p->n_finished);
}

/* Append "x == lr" to the gnuplot condition in buf (len characters so far). */
static size_t lr_cond_add(char *buf, size_t n, size_t len, double lr)
{
    if (len + 40 < n) len += (size_t)snprintf(buf + len, n - len, "%sx == %.17g", len ? " || " : "", lr);
    return len;
}

/* The lr figure's strip laid out along its x axis, in one unit: the PNG's
 * pixels, or a PDF's characters (gnuplot's "char", which the offsets use):
 * the axis's length, a character of the k/n labels, the labels' offset
 * from their x, an x's half width and a little room between two labels. */
typedef struct lr_geom {
    double axis, small, off, mark, slack;
} lr_geom;

/* Which x marks of group g carry their k/n label, as the body of a gnuplot
 * function of the lr (column 3) in right and left (each n bytes): right
 * those labelled at their right ("1" where every one is, as where the marks
 * stand apart), left those labelled at their left ("0" where none is). On
 * a dense grid (36 lrs) a label would run into the next x of the row: of a
 * cluster of x's too close for a label each, a run of them that read the
 * same is labelled once, the last run at the right of the cluster's last x,
 * the first (where it reads otherwise, 1/3 before a run of 3/3, say) at the
 * left of the cluster's first x where the row has room for it there; runs
 * between those two go without (lr_sweep.csv has every count). Every label
 * stays inside the plot, clear of the names at its right: where the last
 * one would reach past the axis's end, the cluster's first x is labelled at
 * its left instead, where the row has room for it. x(lr) = gm->axis *
 * log(lr / xlo) / log(xhi / xlo). */
static void lr_mark_labels(const ob_group *g, double xlo, double xhi, const lr_geom *gm, char *right, char *left,
                           size_t n)
{
    size_t nr = 0, nl = 0;
    int all = 1;
    double prev_end = 0; /* where the row's last label so far ends (the axis's start) */
    right[0] = left[0] = 0;
    const double span = log(xhi / xlo);
    for (int a = 0; a < g->n_lr;) {
        if (g->lrs[a].n_diverged + g->lrs[a].n_nonfinite == 0) {
            a++;
            continue;
        }
        /* the cluster a..b: each x too close to the next for its label */
        int b = a, nb = a;
        char tb[32];
        for (;;) {
            int len = lr_mark_text(&g->lrs[b], tb, sizeof tb);
            nb = b + 1;
            while (nb < g->n_lr && g->lrs[nb].n_diverged + g->lrs[nb].n_nonfinite == 0) nb++;
            /* a label starts a character right of its x and must end
             * before the next x begins */
            if (nb == g->n_lr ||
                gm->axis * log(g->lrs[nb].lr / g->lrs[b].lr) / span >= gm->off + len * gm->small + gm->mark + gm->slack)
                break;
            b = nb;
        }
        const double xa = gm->axis * log(g->lrs[a].lr / xlo) / span, xb = gm->axis * log(g->lrs[b].lr / xlo) / span;
        const int lb = lr_mark_text(&g->lrs[b], tb, sizeof tb);
        /* inside the plot (the next x of the row, if any, is inside it too) */
        const int fits = xb + gm->off + lb * gm->small <= gm->axis;
        if (fits) nr = lr_cond_add(right, n, nr, g->lrs[b].lr);
        if (b > a || !fits) {
            all = 0;
            char ta[32];
            int la = lr_mark_text(&g->lrs[a], ta, sizeof ta);
            if ((strcmp(ta, tb) || !fits) && xa - (gm->off + la * gm->small + gm->mark + gm->slack) >= prev_end)
                nl = lr_cond_add(left, n, nl, g->lrs[a].lr);
        }
        prev_end = fits ? xb + gm->off + lb * gm->small : xb + gm->mark;
        a = nb;
    }
    if (all) snprintf(right, n, "1");
    else if (!nr) snprintf(right, n, "0");
    if (!nl) snprintf(left, n, "0");
}

/* The lr figure's y axis where its top is fixed (a strip of marks above the
 * data, or a cap): from bottom bot (the decade below lo on a log axis, a
 * step below it on a linear one) to data_top, the tics stopping there, and
 * frac of the plot's height above it for the strip. Returns bot. */
static double lr_y_axis(FILE *f, int logy, double lo, double data_top, double frac)
{
    if (!(frac < 0.9)) frac = 0.9; /* the data keep a tenth of the plot whatever the strip asks */
    if (logy) {
        double bot = pow(10, floor(log10(lo)));
        double top = data_top * pow(data_top / bot, frac / (1 - frac));
        fprintf(f, "set yrange [%.9g:%.9g]\n", bot, top);
        fprintf(f, "set ytics %.9g, %g, %.9g\n", bot, log10(data_top / bot) > 10 ? 100.0 : 10.0, data_top);
        return bot;
    }
    double raw = (data_top - lo) / 6;
    if (!(raw > 0)) raw = fabs(data_top) > 0 ? fabs(data_top) / 6 : 1;
    double mag = pow(10, floor(log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    /* a little room below the lowest point, whose marker would else sit on the border */
    double bot = floor((lo - 0.03 * (data_top - lo)) / step) * step;
    if (!(data_top > bot)) bot -= step;
    fprintf(f, "set yrange [%.9g:%.9g]\n", bot, data_top + (data_top - bot) * frac / (1 - frac));
    fprintf(f, "set ytics %.9g, %.9g, %.9g\n", bot, step, data_top);
    return bot;
}

/* The lr figure's x tics on an axis `axis` characters long (LR_AXIS_PNG
 * for the PNG): lr_tics' labels, and where labels would run into each
 * other, every lr labelled and the labels turned (*turned) if that leaves
 * them room; else, where turned labels keep every best lr and both ends
 * and label more lrs than the flat ones (a dense grid on a column's
 * width), turned labels thinned as lr_tics thins them. Returns how many
 * tics (0: gnuplot's own at the decades). */
static int lr_tic_layout(const ob_stats *s, int w, double lo, double hi, double axis, double *tics, int *labelled,
                         int *turned)
{
    const int n_tics = lo > 0 ? lr_tics(s, w, lo, hi, axis, 0, tics, labelled) : 0;
    int crowded = 0;
    *turned = 0;
    for (int i = 0; i < n_tics; i++) crowded |= labelled[i] != 1;
    if (!crowded) return n_tics;
    int t = 1;
    for (int i = 1; i < n_tics && t; i++) t = !tics_crowd_turned(tics[i - 1], tics[i], lo, hi, axis);
    if (t) {
        for (int i = 0; i < n_tics; i++) labelled[i] = 1;
        *turned = 1;
        return n_tics;
    }
    int thin[LR_TICS_MAX], n_flat = 0, n_thin = 0, keeps = 1;
    lr_tics(s, w, lo, hi, axis, 1, tics, thin);
    for (int i = 0; i < n_tics; i++) {
        int best = 0;
        for (int k = 0; k < s->n_g && !best; k++) best = s->g[k].wl == w && s->g[k].best_lr == tics[i];
        if ((best || i == 0 || i == n_tics - 1) && thin[i] != 1) keeps = 0;
        n_flat += labelled[i] != 0;
        n_thin += thin[i] == 1;
    }
    if (keeps && n_thin > n_flat) {
        for (int i = 0; i < n_tics; i++) labelled[i] = thin[i];
        *turned = 1;
    }
    return n_tics;
}

/* Tags of the labels of the lr figure's second line of lr labels (one per
 * tic at most), so that a PDF of another width can take them back. */
#define LR_TAG_SECOND 9001

/* Writes the lr figure's x tics (lr_tic_layout's) to f, each line after
 * indent: a swept lr whose label would run into a neighbour's is a tic
 * without one (a minor tic), or with its label on a second line (tagged
 * LR_TAG_SECOND + i) and the x label under it. reset: after another
 * layout, whose rotation, second line and x label's offset it undoes.
 * Returns whether there is a second line. */
static int lr_tics_write(FILE *f, const char *indent, const double *tics, const int *labelled, int n_tics, int turned,
                         int reset)
{
    int second = 0;
    if (n_tics <= 0) return 0;
    fprintf(f, "%sset xtics %s(", indent, turned ? "rotate by 45 right " : reset ? "norotate autojustify " : "");
    for (int i = 0; i < n_tics; i++) {
        char t[32];
        lr_tic_text(tics[i], t, sizeof t);
        fprintf(f, "%s\"%s\" %.17g%s", i ? ", " : "", labelled[i] == 1 ? t : "", tics[i], labelled[i] ? "" : " 1");
        second |= labelled[i] == 2;
    }
    fprintf(f, ")   # the swept lrs%s\n", turned ? ", turned where they would run into each other" : "");
    if (reset) fprintf(f, "%sdo for [t = %d:%d] { unset label t }\n", indent, LR_TAG_SECOND, LR_TAG_SECOND + n_tics - 1);
    for (int i = 0; i < n_tics; i++) {
        char t[32];
        lr_tic_text(tics[i], t, sizeof t);
        if (labelled[i] == 2)
            fprintf(f, "%sset label %d \"%s\" at first %.17g, graph 0 center offset 0, char -2.1   # a second line of lr labels\n",
                    indent, LR_TAG_SECOND + i, t, tics[i]);
    }
    if (second) fprintf(f, "%sset xlabel offset 0, -1   # under the second line of lr labels\n", indent);
    else if (reset) fprintf(f, "%sset xlabel offset 0, 0\n", indent);
    return second;
}

/* The right end of the lr axis (at least xhi) that leaves room inside the
 * plot, between the axis's end and the names at its right, for the k/n
 * label of each row's last x, which stands at its right (lr_mark_labels):
 * a little more axis beyond the grid's end where a label would else reach
 * past it. gm: the axis's geometry (its length, the label's characters);
 * where a label would need more than 12% of the axis (a PDF under about
 * 2.7 inches wide), the axis is left as it is and the label goes at the
 * left of its x instead. */
static double lr_room_right(const ob_stats *s, int w, double xlo, double xhi, const lr_geom *gm)
{
    double hi = xhi;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != w) continue;
        for (int i = g->n_lr - 1; i >= 0; i--) {
            if (g->lrs[i].n_diverged + g->lrs[i].n_nonfinite == 0) continue;
            char t[32];
            const double r = (gm->off + lr_mark_text(&g->lrs[i], t, sizeof t) * gm->small + gm->slack) / gm->axis;
            /* the label's share r of the axis from the x to the end:
             * log(hi / x) = r log(hi / xlo) */
            if (r <= 0.12 && g->lrs[i].lr > xlo) {
                const double need = g->lrs[i].lr * exp(r * log(g->lrs[i].lr / xlo) / (1 - r));
                if (need > hi) hi = need;
            }
            break;
        }
    }
    return hi;
}

/* The lr figure's strip along the top, as the PNG lays it out: n_rows
 * rows, the data's axis from bot to data_top (log or not) under it, the
 * strip div_frac of the plot's height (with the room for a cap's
 * triangles when cap). */
typedef struct lr_strip {
    int n_rows, logy;
    double bot, data_top, div_frac;
    int cap;
} lr_strip;

/* A PDF's lr axis in characters of its text (gnuplot's "char": a digit's
 * width), lr_tics' characters (LR_AXIS_PNG) being this many of them: lr_tics
 * counts the room a label needs around it into its characters (the PNG's
 * axis, 880 px, is about 97 of gnuplot's 9 px characters; its labels' text
 * is narrower than gnuplot's character, a PDF's as wide). */
#define LR_PDF_TIC_CH 1.34

/* A PDF's lr axis lengths, in its characters, for which lr_pdf_layout lays
 * the labels out: from 8 (a PDF an inch wide has about 9) to 300 (20
 * inches), 12% apart; a layout is used from its length to the next one's,
 * so on an axis up to 12% longer than it was laid out for. -1 past them. */
static double lr_pdf_ladder(int i)
{
    const double a = 8 * pow(1.12, i);
    return a <= 300 ? floor(a * 10 + 0.5) / 10 : -1;
}

/* What lr_pdf_layout lays out for each length of the axis: the groups of
 * workload w in s, the grid's ends with room beside them (xlo, xhi_grid),
 * the marks' scale, and left_any (set where a layout labels a row's x at
 * its left). */
typedef struct lr_pdf {
    const ob_stats *s;
    int w;
    double xlo, xhi_grid, mark_scale;
    unsigned char *left_any;
} lr_pdf;

/* The PDF's labels along the lr axis laid out for an axis `axis`
 * characters long, into c: the x range, with the room at the right in
 * steps of a tenth of a decade (a new layout only every so often along
 * the ladder), the tics, and the k/n functions of each row of the strip
 * (KNR_row, KNL_row). */
static void lr_pdf_at(FILE *c, const lr_pdf *p, double axis)
{
    const ob_stats *s = p->s;
    double tics[LR_TICS_MAX];
    int labelled[LR_TICS_MAX], turned = 0;
    const lr_geom pdf = {axis, 1.0, 1.0, 0.5 * p->mark_scale, 0.3};
    double hi = lr_room_right(s, p->w, p->xlo, p->xhi_grid, &pdf);
    if (hi > p->xhi_grid) hi = p->xhi_grid * pow(10, ceil(log10(hi / p->xhi_grid) * 10 - 1e-9) / 10);
    fprintf(c, "        set xrange [%.6g:%.6g]\n", p->xlo, hi);
    const int n_tics = lr_tic_layout(s, p->w, p->xlo, hi, axis / LR_PDF_TIC_CH, tics, labelled, &turned);
    lr_tics_write(c, "        ", tics, labelled, n_tics, turned, 1);
    for (int k = 0, row = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != p->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        if (lr_sweep_marks(g)) {
            char right[2048], left[2048];
            lr_mark_labels(g, p->xlo, hi, &pdf, right, left, sizeof right);
            fprintf(c, "        KNR_%d(x) = %s\n        KNL_%d(x) = %s\n", row, right, row, left);
            p->left_any[row] |= strcmp(left, "0") != 0;
        }
        row++;
    }
}

/* Writes to o the layout lay, used on axes from `from` characters (0: any
 * shorter) up to `to` (-1: any longer). */
static void lr_pdf_range(FILE *o, const char *lay, double from, double to)
{
    if (from > 0 && to > 0) fprintf(o, "    if (LR_AXIS >= %g && LR_AXIS < %g) {\n", from, to);
    else if (from > 0) fprintf(o, "    if (LR_AXIS >= %g) {\n", from);
    else if (to > 0) fprintf(o, "    if (LR_AXIS < %g) {\n", to);
    else fprintf(o, "    if (1) {\n");
    fprintf(o, "%s    }\n", lay);
}

/* The layouts along the ladder of lengths (lr_pdf_ladder), those of one
 * layout merged, each for its range of lengths, into *blk (malloc'd);
 * *n_layouts how many. Returns 0, -1 out of memory (*blk NULL). */
static int lr_pdf_blocks(const lr_pdf *p, char **blk, int *n_layouts)
{
    size_t n_cur = 0, n_blk = 0;
    char *cur = NULL, *prev = NULL;
    *blk = NULL;
    FILE *o = open_memstream(blk, &n_blk);
    if (!o) return -1;
    double from = 0;
    int bad = 0;
    *n_layouts = 0;
    for (int i = 0; !bad; i++) {
        const double axis = lr_pdf_ladder(i);
        /* the layout for this length */
        FILE *c = axis > 0 ? open_memstream(&cur, &n_cur) : NULL;
        if (axis > 0 && !c) {
            bad = 1;
            break;
        }
        if (c) {
            lr_pdf_at(c, p, axis);
            if (fclose(c) != 0) bad = 1;
        }
        /* a layout of its own: the previous one's range ends here */
        if (!bad && prev && (!cur || strcmp(cur, prev))) {
            (*n_layouts)++;
            lr_pdf_range(o, prev, from, axis);
            from = axis;
        }
        if (!cur) break;
        if (prev && !strcmp(cur, prev)) {
            free(cur);
        } else {
            free(prev);
            prev = cur;
        }
        cur = NULL;
    }
    free(prev);
    free(cur);
    if (fclose(o) != 0) bad = 1;
    if (bad) {
        free(*blk);
        *blk = NULL;
        return -1;
    }
    return 0;
}

/* The start of the PDF's relayout, to o: the right margin the strip's
 * names take (name_len the longest; 0 without a strip), and a first
 * drawing to nowhere that measures the x axis where there are several
 * layouts (n_layouts), or the strip's second drawing (st) follows. */
static void lr_pdf_head(FILE *o, size_t name_len, int n_layouts, const lr_strip *st)
{
    fprintf(o, "    # the labels along the lr axis for this width%s\n",
            n_layouts > 1 ? ": measured on a first drawing, in characters" : "");
    if (name_len)
        fprintf(o, "    set rmargin %.0f   # the names of the strip's rows\n"
                   "    set ylabel YLABEL_SHORT   # not through \"diverged\" beside the strip\n",
                ceil(2 + (double)name_len));
    if (n_layouts > 1 || st->n_rows > 0) fprintf(o, "    set output '/dev/null'\n");
    if (n_layouts > 1)
        fprintf(o, "    replot\n"
                   "    LR_AXIS = (GPVAL_TERM_XMAX - GPVAL_TERM_XMIN) * GPVAL_TERM_SCALE / GPVAL_TERM_HCHAR\n");
}

/* The strip's rows for the PDF's height, to o (nothing without a strip):
 * its rows 1.2 lines apart and 0.7 of a line from the top and the data
 * (0.5 more for the triangles on a cap), all of it at most 45% of the
 * plot: the PNG's strip (div_frac of its height) scaled by LR_S, the
 * labels and marks on the y2 axis, the data's axis stopping that much
 * lower. */
static void lr_pdf_strip(FILE *o, const lr_strip *st)
{
    if (!(st->n_rows > 0 && st->data_top > st->bot)) return;
    fprintf(o, "    # the strip's rows for this height: measured on a second drawing, in lines of text\n"
               "    replot\n"
               "    LR_H = (GPVAL_TERM_YMAX - GPVAL_TERM_YMIN) * GPVAL_TERM_SCALE / GPVAL_TERM_VCHAR\n"
               "    LR_S = (1.4 + %g + %d * 1.2) / LR_H / %.6g\n"
               "    LR_S = LR_S * %.6g > 0.45 ? 0.45 / %.6g : LR_S\n"
               "    LR_F = LR_S * %.6g\n"
               "    set y2range [1 - 1 / LR_S:1]\n"
               "    set ylabel offset 0, -LR_F * LR_H / 2   # beside the data, clear of \"diverged\"\n",
            st->cap ? 0.5 : 0.0, st->n_rows - 1, st->div_frac, st->div_frac, st->div_frac, st->div_frac);
    if (st->logy)
        fprintf(o, "    set yrange [%.9g:%.9g * (%.9g / %.9g) ** (LR_F / (1 - LR_F))]\n", st->bot, st->data_top,
                st->data_top, st->bot);
    else
        fprintf(o, "    set yrange [%.9g:%.9g + (%.9g - %.9g) * LR_F / (1 - LR_F)]\n", st->bot, st->data_top,
                st->data_top, st->bot);
}

/* The PDF's labels along the lr axis, for whatever width it is drawn at:
 * the PNG's layout (lr_tic_layout, lr_mark_labels) counts on its 880 px,
 * where a column's PDF (3.3 inches, 6-point text) has room for about 47
 * characters, so its tic labels ran into each other and a k/n label at the
 * right end into the strip's names. Writes into sc->relayout, for the PDF
 * part (gp_write_pdf): the right margin the names take in the PDF's
 * characters (name_len the longest; 0 without a strip), a first drawing to
 * nowhere that measures the x axis (GPVAL_TERM_XMIN/XMAX over the
 * character's width, GPVAL_TERM_HCHAR), and for each range of lengths the
 * tics and the k/n functions laid out for it, along a ladder of lengths
 * (lr_pdf_ladder), those of one layout merged. Sets left_any[row] where a
 * layout labels a row's x at its left. Returns 0, -1 out of memory. */
static int lr_pdf_layout(script *sc, const ob_stats *s, int w, double xlo, double xhi_grid, size_t name_len,
                         double mark_scale, const lr_strip *st, unsigned char *left_any)
{
    const lr_pdf p = {s, w, xlo, xhi_grid, mark_scale, left_any};
    char *blk = NULL, *out = NULL;
    size_t n_out = 0;
    int n_layouts = 0;
    if (lr_pdf_blocks(&p, &blk, &n_layouts) != 0) return -1;
    FILE *o = open_memstream(&out, &n_out);
    if (!o) {
        free(blk);
        return -1;
    }
    lr_pdf_head(o, name_len, n_layouts, st);
    fputs(blk, o);
    free(blk);
    lr_pdf_strip(o, st);
    if (fclose(o) != 0) {
        free(out);
        return -1;
    }
    sc->relayout = out;
    return 0;
}

/* Median final losses above OFF_SCALE x the initial loss (an optimizer that
 * made things worse than any run started) would squeeze every other line
 * into the bottom of the lr figure: the y axis stops there, and such points
 * are marked at the top. */
#define OFF_SCALE 1.5

static ob_status add_skipped(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
                             const char *why);

/* The lr figure of one workload as fig_lr lays it out: its y values (r,
 * whose top is the cap where there is one) and x range, the strip of
 * divergence marks along the top and the legend, in the PNG's pixels
 * where they are measured. */
typedef struct lr_fig {
    int w;
    range r;               /* lr_fig_yrange's, r.hi the cap where there is one */
    int any_div, any_conf; /* lr_fig_yrange's */
    int n_lines, bands;    /* the lines, and whether their min-max bands are drawn */
    double cap;            /* the top of the data area when some lr's median lies above it, else NaN */
    int logy;
    int n_rows;            /* the strip's rows: the optimizers with a mark */
    size_t name_len;       /* the longest of their names */
    double plot_w;         /* the PNG's axis in pixels */
    double xlo, xhi_grid;  /* the grid's ends with room beside them */
    double xhi;            /* xhi_grid, or more for the last k/n label (lr_room_right) */
    int second;            /* a second line of lr labels */
    int n_key;             /* the legend's entries, */
    size_t key_len;        /* the longest of them */
    double plot_h;         /* the plot's height in the PNG */
    double row_px, mark_scale; /* the strip's rows apart, its marks' scale */
    double div_frac, name_px;  /* its share of the plot's height, its names' offset */
    double data_top;       /* the top of the data's axis (NaN: gnuplot's own axis) */
    double y_bot;          /* its bottom where data_top fixes the axis (lr_y_axis) */
} lr_fig;

/* The top of the lr figure's data area when some lr's median lies above
 * OFF_SCALE x the initial loss (and below it some data do), else NaN. */
static double lr_fig_cap(const ob_dataset *d, const ob_stats *s, int w, const range *r)
{
    const double init = initial_loss(d, w);
    double cap = NAN;
    if (init > 0 && r->lo < OFF_SCALE * init)
        for (int k = 0; k < s->n_g && isnan(cap); k++)
            for (int i = 0; s->g[k].wl == w && i < s->g[k].n_lr; i++)
                if (isfinite(s->g[k].lrs[i].med) && s->g[k].lrs[i].med > OFF_SCALE * init) cap = OFF_SCALE * init;
    return cap;
}

/* The lr figure's x axis: room beside the grid's ends (lf->xlo,
 * lf->xhi_grid), the strip's rows and their names' length, the PNG's axis
 * length, and room at its right end for the last k/n label of each row
 * (lf->xhi). xr: the swept lrs. */
static void lr_fig_xaxis(const ob_dataset *d, const ob_stats *s, const range *xr, lr_fig *lf)
{
    /* room beside the grid's ends: a factor 1.5 on a grid over decades, less
     * on a narrow one (0.001 to 0.0018), whose lrs would else crowd the
     * middle of the axis and their labels run into each other */
    double pad = xr->lo > 0 ? pow(xr->hi / xr->lo, 0.08) : 1.5;
    if (!(pad <= 1.5)) pad = 1.5;
    if (pad < 1.05) pad = 1.05;
    /* the strip's rows (an optimizer's with a mark) and their names' length */
    lf->n_rows = 0;
    lf->name_len = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        lf->n_rows++;
        if (strlen(d->opt_labels[g->opt]) > lf->name_len) lf->name_len = strlen(d->opt_labels[g->opt]);
    }
    /* the PNG's axis in pixels, right of it the names; room at its right
     * end for the last k/n label of each row */
    lf->plot_w = FIG_W - 100 - (lf->n_rows > 0 ? LR_CHAR_PX + lf->name_len * LR_SMALL_PX + 10 : 0);
    lf->xlo = xr->lo / pad, lf->xhi_grid = xr->hi * pad;
    const lr_geom png0 = {lf->plot_w, LR_SMALL_PX, LR_CHAR_PX, 7, 2};
    lf->xhi = lr_room_right(s, lf->w, lf->xlo, lf->xhi_grid, &png0);
}

/* The lr figure's title, axis labels, scales and x range, and sel(). */
static void lr_fig_header(FILE *f, const lr_fig *lf, const char *wq)
{
    char band_text[96];
    if (lf->bands) snprintf(band_text, sizeof band_text, "band: min to max where all seeds ended finite");
    else snprintf(band_text, sizeof band_text, "no min-max bands with %d optimizers", lf->n_lines);
    fprintf(f,
            "set title \"%s: final training loss vs learning rate\\n"
            "line: median over seeds (diverged = +inf); %s; "
            "circle: best lr\"\n"
            "set xlabel \"learning rate (log scale)\"\n"
            "set ylabel \"final loss, mean over the last 10%% of steps%s\"\n"
            "YLABEL_SHORT = \"final loss%s\"   # a column-wide PDF's (ob_gp_write_pdf)\n"
            "set logscale x\n"
            "set format x \"%%g\"\n"
            "set xrange [%.6g:%.6g]\n"
            "%s\n"
            "set y2range [0:1]\n"
            "unset y2tics\n"
            "sel(o) = strcol(1) eq \"%s\" && strcol(2) eq o\n",
            wq, band_text, lf->logy ? " (log scale)" : "", lf->logy ? " (log scale)" : "", lf->xlo, lf->xhi,
            lf->logy ? "set logscale y" : "unset logscale y", wq);
}

/* The lr figure's legend: its entries (the marks' explanations and the
 * optimizers) and their longest, laid out by key_fit. */
static void lr_fig_key(script *sc, const ob_dataset *d, const ob_stats *s, lr_fig *lf)
{
    const int any_div = lf->any_div;
    lf->n_key = (any_div & 1) + ((any_div >> 1) & 1) + !isnan(lf->cap) + lf->any_conf;
    lf->key_len = any_div & 4 ? 58 : any_div & 2 ? 40 : any_div ? 38 : lf->any_conf ? 26 : !isnan(lf->cap) ? 23 : 0;
    for (int k = 0; k < s->n_g; k++) {
        if (s->g[k].wl != lf->w) continue;
        char t[96];
        size_t len = strlen(d->opt_labels[s->g[k].opt]) + strlen(lr_key_note(&s->g[k], t, sizeof t));
        lf->n_key++;
        if (len > lf->key_len) lf->key_len = len;
    }
    key_fit(sc, lf->n_key, lf->key_len);
}

/* The strip along the top for the divergence marks: a row for each
 * optimizer that has one (those without get none, so the rows stay far
 * enough apart to read), named at its right in the optimizer's colour,
 * in a right margin as wide as the longest name. With many such rows
 * they close up (and their markers shrink) so that the strip takes at
 * most 45% of the plot, overlapping when they must (dozens of swept
 * configurations under a tall legend) rather than leaving the data no
 * room. The plot's height in the PNG: the title's two lines, tics and
 * labels above and below and 17 px per legend row (and per second line
 * of lr labels) off FIG_H, at least 120 px (a taller legend overflows). */
static void lr_fig_strip(FILE *f, lr_fig *lf)
{
    lf->plot_h = FIG_H - 142 - 17.0 * (lr_key_rows(lf->n_key, lf->key_len) + lf->second);
    if (lf->plot_h < 120) lf->plot_h = 120;
    lf->row_px = LR_ROW_PX, lf->mark_scale = 1, lf->div_frac = 0, lf->name_px = LR_CHAR_PX;
    if (lf->n_rows > 0) {
        const int n_rows = lf->n_rows;
        const double room = 0.45 * lf->plot_h - 2 * LR_STRIP_PAD - (isnan(lf->cap) ? 0 : 7);
        if (n_rows > 1 && (n_rows - 1) * lf->row_px > room) {
            lf->row_px = room / (n_rows - 1);
            lf->mark_scale = lf->row_px / LR_ROW_PX < 0.4 ? 0.4 : lf->row_px / LR_ROW_PX;
        }
        /* with a cap, room under the last row for the triangles on it */
        lf->div_frac = (2 * LR_STRIP_PAD + (isnan(lf->cap) ? 0 : 7) + (n_rows - 1) * lf->row_px) / lf->plot_h;
        /* the names a character right of the plot: the k/n labels stay
         * inside it (lr_mark_labels) */
        fprintf(f, "set rmargin %.0f   # the names of the strip's rows\n",
                ceil((lf->name_px + lf->name_len * LR_SMALL_PX + 10) / LR_CHAR_PX));
    }
}

/* The y axis stops at the top of the data, below the strip, or at the
 * cap: its tics and grid end there, so that no mark reads as a loss,
 * and a line across the plot (the cap's dotted one) parts the two; a
 * small "diverged" stands in the margin beside the strip. Without
 * either, gnuplot's own axis. Writes the axis and cut(), the values as
 * they are drawn (lf->data_top, lf->y_bot). */
static void lr_fig_yaxis(FILE *f, lr_fig *lf)
{
    const range *r = &lf->r;
    const int n_rows = lf->n_rows, logy = lf->logy;
    lf->data_top = NAN, lf->y_bot = 0;
    if (!isnan(lf->cap)) {
        lf->data_top = lf->cap;
    } else if (n_rows > 0 && !isnan(r->lo)) {
        /* a little room above the highest point, whose marker would else
         * touch the line */
        lf->data_top = logy ? r->hi * pow(r->hi / r->lo, 0.05)
                            : r->hi + (r->hi > r->lo ? 0.05 * (r->hi - r->lo) : 0.1 * fabs(r->hi));
        if (!(lf->data_top > r->hi)) lf->data_top = r->hi + 1;
    }
    if (!isnan(lf->data_top)) {
        /* with no strip, a little room above the cap for the triangles */
        lf->y_bot = lr_y_axis(f, logy, r->lo, lf->data_top, n_rows > 0 ? lf->div_frac : 0.06);
    } else if (n_rows > 0) {
        /* nothing finite to draw: an empty data area under the strip */
        lf->data_top = 1 - lf->div_frac;
        fprintf(f, "set yrange [0:1]\nunset ytics\nset lmargin 10   # room for \"diverged\" where no tics make it\n");
    } else {
        /* gnuplot's own axis, with room above and below the points (the best
         * lr's circle at a tic's value would sit on the border) */
        fprintf(f, "set offsets 0, 0, graph 0.05, graph 0.05\n");
        if (logy) fprintf(f, "%s", LOG_NOEXTEND);
    }
    if (!isnan(lf->cap)) {
        /* the lines and bands are cut at the cap (their triangles sit on its
         * dotted line) */
        fprintf(f, "CAP = %.9g\n"
                   "set arrow from graph 0, first CAP to graph 1, first CAP nohead dt 3 lc rgb \"#999999\" back\n"
                   "cut(v) = v > CAP && v < 1e308 ? CAP : v   # a value above the cap is drawn on it\n",
                lf->cap);
    } else {
        if (n_rows > 0)
            fprintf(f, "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead lc rgb \"#999999\" lw 1 back"
                       "   # the top of the data\n",
                    lf->data_top, lf->data_top);
        fprintf(f, "cut(v) = v\n");
    }
}

/* The strip's "diverged" beside it and its rows' names at its right. */
static void lr_fig_row_names(FILE *f, const ob_dataset *d, const ob_stats *s, const lr_fig *lf)
{
    if (lf->n_rows > 0)
        fprintf(f, "set label \"diverged\" at graph 0, second %.4f right offset char -0.8, 0 font \",8\" tc rgb \"#555555\"\n",
                1 - lf->div_frac / 2);
    for (int k = 0, row = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        char oq[512];
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        fprintf(f, "set label \"%s\" at graph 1, second %.4f left offset char %.2f, 0 font \",8\" tc lt %d\n", oq,
                1 - (LR_STRIP_PAD + lf->row_px * row++) / lf->plot_h, lf->name_px / LR_CHAR_PX, g->opt + 1);
    }
}

/* The k/n labels of each row: at the right of their x where KNR_row is
 * true of its lr, at the left where KNL_row is (lr_mark_labels); a PDF
 * redefines them for its width (lr_pdf_layout). Sets left_any[row] where
 * a row has labels at the left. */
static void lr_fig_kn_labels(FILE *f, const ob_stats *s, const lr_fig *lf, unsigned char *left_any)
{
    const lr_geom png = {lf->plot_w, LR_SMALL_PX, LR_CHAR_PX, 7 * lf->mark_scale, 2};
    for (int k = 0, row = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w || !(lr_sweep_marks(g) || lr_conf_mark(g))) continue;
        if (lr_sweep_marks(g)) {
            char right[2048], left[2048];
            lr_mark_labels(g, lf->xlo, lf->xhi, &png, right, left, sizeof right);
            fprintf(f, "KNR_%d(x) = %s\nKNL_%d(x) = %s\n", row, right, row, left);
            left_any[row] = strcmp(left, "0") != 0;
        }
        row++;
    }
}

/* The strip as the PDF's layout takes it (lr_pdf_layout). */
static lr_strip lr_fig_pdf_strip(const lr_fig *lf)
{
    const lr_strip strip = {lf->n_rows, lf->logy && !isnan(lf->data_top) && lf->n_rows > 0 && !isnan(lf->r.lo),
                            lf->y_bot, lf->data_top, lf->div_frac, isnan(lf->cap) ? 0 : 1};
    return strip;
}

/* The condition on lr_sweep.csv's lr (column 3) of group g's lrs with a
 * band between lrs without one (or the grid's end), a band of no width,
 * into iso (n bytes; "" where there are none). */
static size_t lr_isolated_bands(const ob_group *g, char *iso, size_t n)
{
    size_t n_iso = 0;
    iso[0] = 0;
    for (int i = 0; i < g->n_lr; i++) {
        const ob_lr_point *p = &g->lrs[i];
        if (!band_drawn(p) || !(p->max_finite > p->min_finite)) continue;
        if ((i > 0 && band_drawn(&g->lrs[i - 1])) || (i + 1 < g->n_lr && band_drawn(&g->lrs[i + 1]))) continue;
        if (n_iso + 40 < n)
            n_iso += (size_t)snprintf(iso + n_iso, n - n_iso, "%s$3 == %.17g", n_iso ? " || " : "", p->lr);
    }
    return n_iso;
}

/* Group g's band, its spread where the band has no width, its line and
 * its best lr's circle in the lr figure's plot command (oq: its label,
 * quoted; lt: its line type; first: the plot's first). */
static void lr_fig_plot_line(FILE *f, const ob_group *g, const lr_fig *lf, const char *oq, int lt, int first)
{
    char note[96];
    /* the band only where no seed diverged (column 6) or ended without a
     * finite loss (column 15): band_drawn; the x along the top says how
     * many of the seeds did either (columns 6 + 15 of column 5, the
     * finished ones) */
    if (lf->bands)
        fprintf(f,
                "%s  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 == 0 && $15 == 0 ? cut($8) : NaN):(sel(\"%s\") && $6 == 0 && $15 == 0 ? cut($9) : NaN) with filledcurves lt %d notitle",
                first ? "" : ", \\\n", oq, oq, lt);
    /* an lr with a band between lrs without one (or the grid's end) has
     * a band of no width: its spread is a bar, drawn before the line so
     * that the line's marker stays on top (the bar's blank point, pt -1,
     * would clear it) */
    char iso[1024];
    if (lf->bands ? lr_isolated_bands(g, iso, sizeof iso) : 0)
        fprintf(f,
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && (%s) ? cut($7) : NaN):"
                "(sel(\"%s\") && (%s) ? cut($8) : NaN):(sel(\"%s\") && (%s) ? cut($9) : NaN) "
                "with yerrorbars lt %d dt 1 pt -1 lw 2 notitle",
                oq, iso, oq, iso, oq, iso, lt);
    fprintf(f,
            "%s  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") ? cut($7) : NaN) with linespoints lt %d title \"%s%s\", \\\n"
            "  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $14 == 1 ? $7 : NaN) with points lt %d pt 6 ps (3 * PS) lw 2 notitle",
            lf->bands ? ", \\\n" : first ? "" : ", \\\n", oq, lt, oq, lr_key_note(g, note, sizeof note), oq, lt);
}

/* Group g's marks in the lr figure's plot command: the x's along the top
 * with their k/n labels (row: its row of the strip, at mark_y), triangles
 * on the cap, and the fresh seeds at the best lr (their bar, a square
 * along the top where one diverged). */
static void lr_fig_plot_marks(FILE *f, const ob_group *g, const lr_fig *lf, const char *oq, int lt, int row,
                              const unsigned char *left_any)
{
    const double mark_y = 1 - (LR_STRIP_PAD + lf->row_px * row) / lf->plot_h;
    /* the x's and their labels only where a seed diverged (or ended
     * without a finite loss): gnuplot 5.4 crashes on labels with no
     * point to draw */
    if (lr_sweep_marks(g)) {
        fprintf(f,
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 + $15 > 0 ? %.4f : NaN) axes x1y2 with points lt %d pt 2 ps (%.3g * PS) lw 3 notitle"
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 + $15 > 0 && KNR_%d($3) ? %.4f : NaN):(sprintf(\"%%d/%%d\", $6 + $15, $5)) "
                "axes x1y2 with labels left offset char 1, 0 font \",8\" tc lt %d notitle",
                oq, mark_y, lt, 2 * lf->mark_scale, oq, row, mark_y, lt);
        if (left_any[row])
            fprintf(f,
                    ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $6 + $15 > 0 && KNL_%d($3) ? %.4f : NaN):(sprintf(\"%%d/%%d\", $6 + $15, $5)) "
                    "axes x1y2 with labels right offset char -1, 0 font \",8\" tc lt %d notitle",
                    oq, row, mark_y, lt);
    }
    int above = 0;
    for (int i = 0; i < g->n_lr && !isnan(lf->cap); i++) above |= g->lrs[i].med > lf->cap && isfinite(g->lrs[i].med);
    if (above)
        fprintf(f,
                ", \\\n  'lr_sweep.csv' skip 1 using 3:(sel(\"%s\") && $7 > CAP && $7 < 1e308 ? CAP : NaN) with points lt %d "
                "pt 9 ps (2 * PS) notitle",
                oq, lt);
    if (g->confirm_lr == g->best_lr && g->n_confirm) {
        /* the fresh seeds' median at the best lr, the bar from the best to
         * the worst that did not diverge (confirm.csv: 7 median, 8 min, 29
         * max finite, 28 diverged); a diverged one is an x along the top */
        if (isfinite(g->conf_final.median))
            fprintf(f,
                    ", \\\n  'confirm.csv' skip 1 using 4:(sel(\"%s\") ? $7 : NaN):(sel(\"%s\") ? $8 : NaN):"
                    "(sel(\"%s\") ? (valid(29) ? $29 : $7) : NaN) with yerrorbars lt %d dt 1 pt 3 ps (2.5 * PS) lw 2 "
                    "notitle",
                    oq, oq, oq, lt);
        if (g->conf_n_diverged)
            fprintf(f,
                    ", \\\n  'confirm.csv' skip 1 using 4:(sel(\"%s\") && $28 > 0 ? %.4f : NaN) axes x1y2 "
                    "with points lt %d pt 4 ps (%.3g * PS) lw 2 notitle",
                    oq, mark_y, lt, 2.6 * lf->mark_scale);
    }
}

/* The lr figure's plot command: each optimizer's series, then the legend's
 * entries for the marks. */
static void lr_fig_plot(FILE *f, const ob_dataset *d, const ob_stats *s, const lr_fig *lf,
                        const unsigned char *left_any)
{
    fprintf(f, "plot \\\n");
    int first = 1, nth = 0;
    for (int k = 0; k < s->n_g; k++) {
        const ob_group *g = &s->g[k];
        if (g->wl != lf->w) continue;
        char oq[512];
        /* its row of marks, as its name's above */
        const int row = lr_sweep_marks(g) || lr_conf_mark(g) ? nth++ : 0;
        ob_gp_str(d->opt_labels[g->opt], oq, sizeof oq);
        lr_fig_plot_line(f, g, lf, oq, g->opt + 1, first);
        lr_fig_plot_marks(f, g, lf, oq, g->opt + 1, row, left_any);
        first = 0;
    }
    if (lf->any_div & 1)
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 2 ps (2 * PS) lw 3 title \"x k/n at the top: k of n seeds diverged%s\"",
                lf->any_div & 4 ? " or ended non-finite" : "");
    if (lf->any_div & 2)
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 4 ps (2.6 * PS) lw 2 title \"square at the top: a fresh seed diverged\"");
    if (!isnan(lf->cap))
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 9 ps (2 * PS) title \"triangle: off the scale\"");
    if (lf->any_conf)
        /* a legend entry alone (yerrorbars takes no function: keyentry, gnuplot 5.4) */
        fprintf(f, ", \\\n  keyentry with yerrorbars lc rgb \"black\" pt 3 ps (2.5 * PS) lw 2 title \"fresh seeds at the best lr\"");
    fprintf(f, "\n");
}

/* The lr figure's caption's note on the strip along the top ("" without). */
static const char *lr_fig_strip_note(int any_div)
{
    return any_div & 4 ? " In a strip along the top, above a line at the top of the data (the y tics stop "
                         "under it), each optimizer with marks has a row, named at its right: an x marks a learning "
                         "rate where at least one seed of the sweep diverged or finished without a finite loss "
                         "(every step of its last 10% skipped), labelled k/n: k of its n seeds did (x's too close "
                         "for a label each that read the same share one, at the end of their run; lr_sweep.csv has "
                         "every count, diverged and nonfinite apart); where half the seeds or more did the median "
                         "is infinite and the line has a gap." :
           any_div & 1 ? " In a strip along the top, above a line at the top of the data (the y tics stop "
                         "under it), each optimizer with marks has a row, named at its right: an x marks a learning "
                         "rate where at least one seed of the sweep diverged, labelled k/n: k of its n seeds "
                         "diverged (x's too close for a label each that read the same share one, at the end of "
                         "their run; lr_sweep.csv has every count); where half the seeds or more diverged the "
                         "median is infinite and the line has a gap." :
           any_div     ? " The strip along the top, above a line at the top of the data, has a row for each "
                         "optimizer with a square there, named at its right." : "";
}

/* The lr figure in the report, with its caption. */
static ob_status lr_fig_caption(ob_figures *out, ob_err *e, const char *stem, const lr_fig *lf)
{
    return add_fig(out, e, stem, lf->w, "Learning-rate sensitivity",
                   "Final training loss (mean over the last 10%% of steps) against the learning rate, "
                   "one line per optimizer: the median over seeds, a diverged seed counting as +inf as in the "
                   "tables%s The open circle marks each optimizer's best lr, "
                   "which the legend gives (\"grid edge\": the smallest or largest lr tried, so the best may lie "
                   "beyond).%s%s%s%s A flat, wide valley means the optimizer is easy to tune.",
                   lf->bands ? ", with a band from the best to the worst seed where no seed diverged or ended without "
                               "a finite loss (where one did, the worst is +inf and the band is left out)."
                             : ". With this many optimizers their min-max bands, drawn over one another, would hide the "
                               "lines: they are left out (lr_sweep.csv has final_min and final_max at each lr).",
                   !isnan(lf->cap) ? " The y axis stops at 1.5 times the initial loss (the largest first loss of the "
                                     "workload's runs that did not diverge): a learning rate whose median final loss is "
                                     "finite but above it, worse than where any run started, is a triangle on the dotted "
                                     "line at that height, and the lines stop there; lr_sweep.csv has its value." : "",
                   lf->any_conf ? " The star is the median final loss of the fresh seeds run at the best lr after the "
                                  "sweep (its bar from the best to the worst of those that did not diverge; one that "
                                  "diverged is a square in the strip along the top, around the x of the sweep's seeds where "
                                  "those diverged there too): a star above its circle shows how much picking the lr on the "
                                  "sweep's own seeds flattered it." : "",
                   lr_fig_strip_note(lf->any_div),
                   lf->logy ? " Both axes are logarithmic." : " The x axis is logarithmic.");
}

/* The lr figure's script from its axes on (lf laid out up to its x axis):
 * the tics, legend, strip and y axis, the k/n labels and the PDF's layout,
 * and the plot command. Out of memory, it closes the script. */
static ob_status lr_fig_body(script *sc, const ob_dataset *d, const ob_stats *s, lr_fig *lf, ob_err *e)
{
    FILE *f = sc->f;
    double tics[LR_TICS_MAX];
    int labelled[LR_TICS_MAX], turned = 0;
    int n_tics = lr_tic_layout(s, lf->w, lf->xlo, lf->xhi, LR_AXIS_PNG, tics, labelled, &turned);
    lf->second = lr_tics_write(f, "", tics, labelled, n_tics, turned, 0);
    lr_fig_key(sc, d, s, lf);
    lr_fig_strip(f, lf);
    lr_fig_yaxis(f, lf);
    lr_fig_row_names(f, d, s, lf);
    unsigned char *left_any = calloc((size_t)lf->n_rows + 1, 1);
    if (!left_any) {
        script_close(sc, e);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    lr_fig_kn_labels(f, s, lf, left_any);
    const lr_strip strip = lr_fig_pdf_strip(lf);
    if (lr_pdf_layout(sc, s, lf->w, lf->xlo, lf->xhi_grid, lf->n_rows > 0 ? lf->name_len : 0, lf->mark_scale, &strip,
                      left_any) != 0) {
        free(left_any);
        script_close(sc, e);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    lr_fig_plot(f, d, s, lf, left_any);
    free(left_any);
    return OB_OK;
}

/* Final loss against the lr on workload w (lr_WORKLOAD, from
 * lr_sweep.csv and confirm.csv): a line per optimizer with its min-max
 * band, its best lr circled, the fresh seeds at the best lr, and a strip
 * along the top marking where seeds diverged. */
static ob_status fig_lr(const ob_dataset *d, const ob_stats *s, int w, const char *dir,
                        const char *slug, ob_figures *out, ob_err *e)
{
    lr_fig lf;
    memset(&lf, 0, sizeof lf);
    lf.w = w;
    range xr = {NAN, NAN};
    int any;
    lf.r = lr_fig_yrange(s, w, &any, &lf.any_div, &lf.any_conf);
    int most_lrs = 0;
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == w) {
            for (int i = 0; i < s->g[k].n_lr; i++) range_add(&xr, s->g[k].lrs[i].lr);
            if (s->g[k].n_lr > most_lrs) most_lrs = s->g[k].n_lr;
            lf.n_lines++;
        }
    if (!any) return OB_OK;
    char stem[300], wq[512];
    snprintf(stem, sizeof stem, "lr_%s", slug);
    /* one lr per optimizer (one for all, or each at its own default): points
     * side by side would pass for a sensitivity */
    if (most_lrs <= 1)
        return add_skipped(out, e, stem, w, "Learning-rate sensitivity",
                           "Not drawn: each optimizer ran at one learning rate, so there is no sensitivity to show; "
                           "the table above has each optimizer's final loss there (run --lrs with several values "
                           "to measure it; where a search drew each configuration's lr, --lrs LO..HI with --trials, "
                           "the figure of final loss against the searched lr draws every configuration).");
    ob_gp_str(d->wl_labels[w], wq, sizeof wq);
    lf.bands = lf.n_lines <= BAND_MAX_LINES; /* as on the loss figure */
    lf.cap = lr_fig_cap(d, s, w, &lf.r);
    if (!isnan(lf.cap)) lf.r.hi = lf.cap;
    lf.logy = spans_decades(&lf.r);
    lr_fig_xaxis(d, s, &xr, &lf);
    script sc;
    OB_TRY(script_open(&sc, dir, stem, "final loss vs learning rate (sensitivity)",
                       "lr_sweep.csv (workload, optimizer, lr, runs, finished, diverged, "
                       "final_median, final_min, final_max, ..., is_best in column 14, nonfinite in 15)", e));
    lr_fig_header(sc.f, &lf, wq);
    OB_TRY(lr_fig_body(&sc, d, s, &lf, e));
    OB_TRY(script_close(&sc, e));
    return lr_fig_caption(out, e, stem, &lf);
}

static ob_status add_skipped(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
                             const char *why)
{
    ob_figure *fs = realloc(out->skipped, (size_t)(out->n_skipped + 1) * sizeof *out->skipped);
    if (!fs) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    out->skipped = fs;
    ob_figure *f = &out->skipped[out->n_skipped++];
    memset(f, 0, sizeof *f);
    snprintf(f->stem, sizeof f->stem, "%.*s", (int)sizeof f->stem - 1, stem);
    snprintf(f->title, sizeof f->title, "%.*s", (int)sizeof f->title - 1, title);
    snprintf(f->caption, sizeof f->caption, "%.*s", (int)sizeof f->caption - 1, why);
    f->wl = wl;
    return OB_OK;
}

/* A hyperparameter figure as fig_hp lays it out: what its points are (the
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
                range_add(&own, g->final.median);
                range_add(&own, g->final.min);
                range_add(&own, g->final.max);
            }
        if (!narrow_log_ytics(f, &own, strip)) fprintf(f, "%s", LOG_NOEXTEND);
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
    if (alone) lt = own_lt(d, s->g[ln->p[0].group].opt);
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
    OB_TRY(script_open(&sc, dir, stem, "final loss at the best lr vs a swept hyperparameter",
                       "hp_sweep.csv (workload, key, line, value, best_lr, seeds, final_median, "
                       "final_min, final_max, diverged_runs, finished_runs, diverged_everywhere, optimizer)", e));
    FILE *f = sc.f;
    hp_header(f, hf, hl, wq, kq, !strcmp(hf->key, "lr"));
    hp_x_axis(f, hl);
    const double mark_step = hp_y_axis(f, s, hf, hl, wq, kq);
    size_t key_len = hl->any_div ? 31 : 0;
    for (int l = 0; l < hf->n_lines; l++)
        if (strlen(hf->lines[l].label) > key_len) key_len = strlen(hf->lines[l].label);
    key_fit(&sc, hf->n_lines + hl->any_div, key_len);
    fprintf(f, "plot \\\n");
    int nth = 0;
    for (int l = 0; l < hf->n_lines; l++) hp_plot_line(f, d, s, hf, l, mark_step, &nth);
    if (hl->any_div)
        fprintf(f, ", \\\n  NaN with points lc rgb \"black\" pt 2 ps (2 * PS) lw 3 title \"x at the top: every lr diverged\"");
    fprintf(f, "\n");
    return script_close(&sc, e);
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
        return add_fig(out, e, stem, hf->wl, title,
                       "Final training loss (mean over the last 10%% of steps) of each configuration of a search whose "
                       "learning rate was drawn with its other settings (--lrs LO..HI with --trials), against that lr: "
                       "a point per configuration, the median over seeds, a bar from the best to the worst seed that "
                       "did not diverge, on no line (the configurations differ in their other settings too).%s%s "
                       "Values in hp_sweep.csv.",
                       hl->any_div ? " An x along the top edge marks a configuration whose seeds diverged (half or more)." : "",
                       hl->logy ? " The y axis is logarithmic." : "");
    return add_fig(out, e, stem, hf->wl, title,
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
static ob_status fig_hp(const ob_dataset *d, const ob_stats *s, const ob_hp_fig *hf, const char *dir,
                        const char *slug, ob_figures *out, ob_err *e)
{
    const int w = hf->wl;
    hp_layout hl;
    memset(&hl, 0, sizeof hl);
    int any_lr, any_div_lr, any_conf;
    range yr = lr_fig_yrange(s, w, &any_lr, &any_div_lr, &any_conf);
    hl.logy = spans_decades(&yr); /* as the lr figure of this workload */
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
        return add_skipped(out, e, stem, w, title, why);
    }
    hp_x_scale(&hl);
    hp_x_tic_values(hf, &hl);
    OB_TRY(hp_script(d, s, hf, &hl, dir, stem, e));
    return hp_caption(d, s, hf, &hl, stem, title, out, e);
}

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

/* The tuning budget of workload w as fig_budget lays it out: its lines
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
        for (int j = 0; j < n; j++) range_add(&bf->yr, sign * bf->v[j]);
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
    return bf->all_diverged ? add_skipped(out, e, stem, bf->w, title, why) : OB_OK;
}

/* The tuning budget's y axis, quantity (the metric by its name where the
 * workload is known: accuracy), columns, title and workload label. */
static void budget_names(const ob_dataset *d, budget_fig *bf)
{
    bf->logy = !bf->metric && spans_decades(&bf->yr);
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
    return script_open(sc, dir, stem, desc,
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
    if (bf->logy) narrow_log_ytics(f, &bf->yr, 0);
    key_fit(sc, bf->n_lines, bf->key_len);
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
        const int lt = own_lt(d, s->tuned_first[i]);
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
    return script_close(&sc, e);
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
        return add_fig(out, e, stem, bf->w, bf->title, "%s", cap);
    }
    return add_fig(out, e, stem, bf->w, bf->title,
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
static ob_status fig_budget(const ob_dataset *d, const ob_stats *s, int w, int heldout, const char *dir,
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

/* The held-out figures of workload w as fig_evals lays them out: what the
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
            for (int64_t j = 0; j < run->n_curve; j++) range_add(&ef->r, run->c_loss[j]);
        }
        range_add(&ef->r, g->eval_loss.min);
        range_add(&ef->r, g->eval_loss.max);
        range_add(&ef->er, g->eval_loss.min);
        range_add(&ef->er, g->eval_loss.max);
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
            lr_text(s->g[k].best_lr, lr, sizeof lr);
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
        if (g->best >= 0) lr_text(g->best_lr, lr, sizeof lr);
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
        size_t len = strlen(d->opt_labels[s->g[k].opt]) + 12 + strlen(diverged_note(d, &s->g[k], dn, sizeof dn)) +
                     strlen(edge_note(&s->g[k]));
        if (s->g[k].wl == ef->w && s->g[k].best >= 0 && len > key_len) key_len = len;
        len = strlen(d->opt_labels[s->g[k].opt]) + 23;
        if (s->g[k].wl == ef->w && s->g[k].best < 0 && s->g[k].n_finished > 0 && len > key_len) key_len = len;
    }
    key_fit(sc, ef->n_opt_here + ef->n_gone, key_len);
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
        lr_text(g->best_lr, lr, sizeof lr);
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
                ef->max_evals > 15 ? (int)(ef->max_evals / 12) + k % 3 : 1, oq, lr, edge_note(g),
                diverged_note(d, g, dn, sizeof dn));
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
        return add_fig(out, e, stem, ef->w, fig_title,
                       "%s on held-out data at the end of training (the only evaluation of each run; "
                       "`--eval-every N` evaluates during training too), for each optimizer at its best "
                       "learning rate: the point is the median over seeds, the bar spans the best and "
                       "worst seed.%s%s",
                       what, gone_note, ef->logy ? " The y axis is logarithmic." : "");
    return add_fig(out, e, stem, ef->w, fig_title,
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
            return add_skipped(out, e, stem, ef->w, fig_title,
                               "Not drawn: the database's evals table has no held-out evaluations of "
                               "these runs (an optbench older than this one kept the end-of-run "
                               "evaluation only in runs.eval_loss); the final held-out values are in "
                               "the table above.");
        return OB_OK;
    }
    script sc;
    OB_TRY(script_open(&sc, dir, stem,
                       ef->which ? "held-out metric at the best lr" : "held-out loss at the best lr",
                       "evals_best.csv (workload, optimizer, lr, seeds, step, eval_loss_median, "
                       "eval_loss_min, eval_loss_max, eval_metric_median, eval_metric_min, "
                       "eval_metric_max)", e));
    sc.no_key = ef->at_end;
    ef->logy = ef->which == 0 && spans_decades(ef->at_end ? &ef->er : &ef->r);
    ef->c0 = ef->which ? 9 : 6;
    if (ef->at_end) {
        evals_end_script(sc.f, d, s, ef);
    } else {
        evals_curve_header(sc.f, ef);
        evals_curve_key(&sc, d, s, ef);
        evals_curve_plot(sc.f, d, s, ef);
    }
    OB_TRY(script_close(&sc, e));
    return evals_caption(ef, stem, fig_title, out, e);
}

/* The held-out loss and metric on workload w (eval_loss_WORKLOAD and
 * eval_metric_WORKLOAD, from evals_best.csv), each optimizer at its best
 * lr: a line per optimizer over the evaluations during training, or, with
 * one evaluation per run, a point per optimizer with its min-max bar. */
static ob_status fig_evals(const ob_dataset *d, const ob_stats *s, int w, const char *dir,
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

/* ---- figures over all workloads ---------------------------------------------- */

/* More configurations on a workload than its curve figures can show apart:
 * the figures then draw each optimizer's best configuration. */
#define FIG_MAX_CONFIGS 12

/* The slots of the dot plots' groups: one per label (configuration), or,
 * with more than FIG_MAX_CONFIGS labels of which some optimizer has several
 * (a sweep or a search), one per optimizer, its point on each workload from
 * one of its configurations there, picked by pick_config. */
typedef struct bar_slots {
    int n;             /* slots in each workload's group */
    int reduced;       /* 1: one slot per optimizer */
    int *lab;          /* (n_wl x n) the label at slot j of workload w; -1: none ran there */
    int *lt;           /* (n) the slot's line type (colour, marker): its first label's, label + 1 */
    const char **name; /* (n) the legend's entry */
} bar_slots;

static void bar_slots_free(bar_slots *b)
{
    free(b->lab);
    free(b->lt);
    free(b->name);
}

/* The group of optimizer i (ob_stats' tuned index) that the dot plot of
 * kind draws on workload w, -1 where it has none: for the time to target
 * (kind 3) the configuration that got there soonest (the tuned profile's
 * pick when that is on training time; ties: the first label), else one that
 * got there untimed, else one whose runs did not all diverge, else any; for
 * the others, the best configuration (the lowest median final loss at its
 * best lr: the report's table, best_configuration.csv). */
static int pick_config(const ob_dataset *d, const ob_stats *s, int w, int i, int kind, const ob_best_config *rows,
                       int n_rows)
{
    const char *name = d->opt_names[s->tuned_first[i]];
    int best = -1;
    for (int r = 0; r < n_rows && best < 0; r++)
        if (!strcmp(d->opt_names[s->g[rows[r].best].opt], name)) best = rows[r].best;
    if (kind != 3 || best < 0) return best;
    int pick = -1, tier = 5;
    for (int o = 0; o < d->n_opt; o++) {
        if (strcmp(d->opt_names[o], name)) continue;
        const ob_group *g = ob_stats_group(s, w, o);
        if (!g) continue;
        const int all_div = g->n_finished > 0 && g->n_diverged == g->n_finished;
        const int t = !g->tt_censored && isfinite(g->tt_time_s) ? 1 : !g->tt_censored ? 2 : !all_div ? 3 : 4;
        const int k = (int)(g - s->g);
        if (t < tier || (t == 1 && tier == 1 && g->tt_time_s < s->g[pick].tt_time_s)) tier = t, pick = k;
    }
    return pick >= 0 ? pick : best;
}

static ob_status bar_slots_make(const ob_dataset *d, const ob_stats *s, int kind, bar_slots *b, ob_err *e)
{
    memset(b, 0, sizeof *b);
    b->reduced = d->n_opt > FIG_MAX_CONFIGS && s->n_tuned > 0;
    b->n = b->reduced ? s->n_tuned : d->n_opt;
    b->lab = malloc(((size_t)d->n_wl * b->n + 1) * sizeof *b->lab);
    b->lt = malloc(((size_t)b->n + 1) * sizeof *b->lt);
    b->name = malloc(((size_t)b->n + 1) * sizeof *b->name);
    ob_best_config *rows = b->reduced ? malloc(((size_t)s->n_g + 1) * sizeof *rows) : NULL;
    if (!b->lab || !b->lt || !b->name || (b->reduced && !rows)) {
        free(rows);
        bar_slots_free(b);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    for (int j = 0; j < b->n; j++) {
        const int o = b->reduced ? s->tuned_first[j] : j;
        b->lt[j] = b->reduced ? own_lt(d, o) : o + 1;
        b->name[j] = b->reduced ? d->opt_names[o] : d->opt_labels[o];
    }
    for (int w = 0; w < d->n_wl; w++) {
        int swept = 0;
        const int n_rows = b->reduced ? ob_stats_best_configs(d, s, w, rows, s->n_g, &swept) : 0;
        for (int j = 0; j < b->n; j++) {
            int lab = j;
            if (b->reduced) {
                const int k = pick_config(d, s, w, j, kind, rows, n_rows);
                lab = k >= 0 ? s->g[k].opt : -1;
            } else if (!ob_stats_group(s, w, j)) {
                lab = -1;
            }
            b->lab[w * b->n + j] = lab;
        }
    }
    free(rows);
    return OB_OK;
}

/* x position of optimizer o's point in the group of workload w, and the
 * width of one slot: each workload is a group of n_opt slots plus one slot of
 * gap, centred on x = w (the row index of the bars_*.csv tables). */
static double bar_slot(int n_opt) { return 1.0 / (n_opt + 1); }
static double bar_x(int w, int o, int n_opt) { return w + (o - (n_opt - 1) / 2.0) * bar_slot(n_opt); }

/* The dot plots' stems, tables and titles, by kind (fig_bars): 0 step
 * time, 1 peak memory, 2 optimizer state, 3 time to target. */
static const char *const bar_stems[] = {"step_time", "memory_peak", "memory_state", "time_to_target"};
static const char *const bar_files[] = {"bars_step_ms.csv", "bars_peak_mem.csv", "bars_state_bytes.csv",
                                        "bars_time_to_target.csv"};
static const char *const bar_titles[] = {"Step time", "Peak memory", "Optimizer state", "Time to target"};

/* One dot plot as fig_bars lays it out: its slots, what each shows, how
 * many of each there are, and the y axis. what[w * b.n + j], what slot j of
 * workload w shows: 0 nothing, 1 a point, 2 a zero value (a "0 B" mark), 3
 * not reached, 4 reached but untimed, 5 a pair left out of the matrix (a
 * "not run" mark), 6 runs without the value (a "no data" mark: every run
 * diverged before the warm-up ended, say), 7 a workload whose target the
 * loss met before training (time to target not ranked), 8 not reached
 * because every run diverged, at every lr (ob_group_no_best's "every run
 * diverged"), which "not reached" would tell as merely slow, 9 runs without
 * the value that all diverged (before the first timed step, say: "every run
 * diverged" rather than "no data"). */
typedef struct bar_fig {
    int kind;
    bar_slots b;
    int *what;
    range r; /* the values drawn, time intervals' ends included */
    int n_bars, n_zero, n_unreached, n_untimed, n_groups, n_notrun, n_atstart;
    int n_alldiv, n_ranges, n_open;
    double scale;     /* the axis's unit in the table's */
    const char *unit; /* its name ("" for milliseconds of step time) */
    int logy;
    int time_tics; /* a log axis of times whose tics name their own units */
    double ytop;   /* the top of the y range */
    char yrange[128];
} bar_fig;

/* Slot m of the time to target for group g on workload w (bf->what's
 * codes), counted, its time and interval added to bf->r. */
static void bars_what_tt(const ob_stats *s, int w, const ob_group *g, bar_fig *bf, int *m)
{
    if (s->target_at_start[w]) *m = 7, bf->n_atstart++;
    else if (g->tt_censored && g->n_finished > 0 && g->n_diverged == g->n_finished) *m = 8, bf->n_alldiv++;
    else if (g->tt_censored) *m = 3, bf->n_unreached++;
    else if (!isfinite(g->tt_time_s)) *m = 4, bf->n_untimed++;
    else *m = 1, bf->n_bars++;
    if (*m == 1) range_add(&bf->r, g->tt_time_s);
    double lo, hi;
    if (*m == 1 && ob_group_tt_interval(g, 0, &lo, &hi) && lo < hi) { /* its interval, drawn as a bar */
        range_add(&bf->r, lo);
        if (isfinite(hi)) range_add(&bf->r, hi);
        else bf->n_open++; /* a seed never got there: the bar runs to the top */
        bf->n_ranges++;
    }
}

/* Slot m of step time, peak memory or optimizer state for group g (bf->what's
 * codes), counted, its value added to bf->r. */
static void bars_what_value(const ob_group *g, bar_fig *bf, int *m)
{
    const int kind = bf->kind;
    double v = kind == 0 ? g->step_ms_median
             : kind == 1 ? (g->peak_mem_bytes >= 0 ? (double)g->peak_mem_bytes : NAN)
                         : (g->state_bytes >= 0 ? (double)g->state_bytes : NAN);
    if (!isfinite(v) || v < 0) {
        /* where every run diverged (within the untimed first steps, say), the mark says so */
        *m = g->n_finished > 0 && g->n_diverged == g->n_finished ? 9 : 6;
        bf->n_alldiv += *m == 9;
        return;
    }
    if (v == 0) *m = 2, bf->n_zero++;
    else *m = 1, bf->n_bars++;
    range_add(&bf->r, v);
}

/* bf->what for every slot of every workload, with its counts and range. */
static void bars_classify(const ob_dataset *d, const ob_stats *s, bar_fig *bf)
{
    const int n_col = bf->b.n;
    for (int w = 0; w < d->n_wl; w++)
        for (int j = 0; j < n_col; j++) {
            const int o = bf->b.lab[w * n_col + j];
            const ob_group *g = o >= 0 ? ob_stats_group(s, w, o) : NULL;
            int *m = &bf->what[w * n_col + j];
            if (!g) {
                *m = 5, bf->n_notrun++;
                continue;
            }
            bf->n_groups++;
            if (bf->kind == 3) bars_what_tt(s, w, g, bf, m);
            else bars_what_value(g, bf, m);
        }
}

/* The dot plot with nothing to draw: its note in the report, why (none
 * where no optimizer ran on any workload). */
static ob_status bars_not_drawn(const bar_fig *bf, ob_figures *out, ob_err *e)
{
    static const char *const why[] = {
        "Not drawn: no run recorded a step time.",
        "Not drawn: no run recorded its peak memory.",
        "Not drawn: no run recorded its optimizer state size.",
        ("Not drawn: no optimizer reached the target loss on any workload (see the time-to-target "
         "tables), so there is no time to show.")};
    const int kind = bf->kind;
    if (kind == 3 && bf->n_atstart == bf->n_groups)
        return add_skipped(out, e, bar_stems[kind], -1, bar_titles[kind],
                           "Not drawn: on every workload the loss met the target before training (see the "
                           "time-to-target paragraphs), so no time to target ranks anything.");
    return bf->n_groups > 0 ? add_skipped(out, e, bar_stems[kind], -1, bar_titles[kind], why[kind]) : OB_OK;
}

/* The y axis's unit for the largest value (bf->scale, bf->unit). */
static void bars_unit(bar_fig *bf)
{
    const int kind = bf->kind;
    const range *r = &bf->r;
    bf->scale = 1;
    bf->unit = "";
    if (kind == 1 || kind == 2) {
        double hi = isnan(r->hi) ? 0 : r->hi;
        if (hi >= 1024.0 * 1024 * 1024) bf->scale = 1024.0 * 1024 * 1024, bf->unit = "GiB";
        else if (hi >= 1024.0 * 1024) bf->scale = 1024.0 * 1024, bf->unit = "MiB";
        else if (hi >= 1024.0) bf->scale = 1024.0, bf->unit = "KiB";
        else bf->unit = "bytes";
    } else if (kind == 3) {
        double hi = isnan(r->hi) ? 0 : r->hi;
        if (hi < 1e-3) bf->scale = 1e-6, bf->unit = "microseconds";
        else if (hi < 1) bf->scale = 1e-3, bf->unit = "milliseconds";
        else if (hi >= 120) bf->scale = 60, bf->unit = "minutes";
        else bf->unit = "seconds";
    } else if (kind == 0 && !isnan(r->hi) && r->hi < 0.1) {
        bf->scale = 1e-3, bf->unit = "microseconds"; /* steps of microseconds: "2.5", not "0.0025" ms */
    }
}

/* The y axis: log or not, tics in units of their own, its top and its
 * range as a gnuplot line (bf->yrange). */
static void bars_y_range(bar_fig *bf)
{
    const range *r = &bf->r;
    const int kind = bf->kind;
    bf->logy = spans_decades(r);
    /* times over decades (a step of microseconds next to one of 100 ms): one
     * unit for the whole axis would read "1e-05 minutes"; the axis is in
     * seconds and each decade's tic names its own unit ("10 us", "100 ms") */
    bf->time_tics = bf->logy && (kind == 0 || kind == 3);
    if (bf->time_tics) bf->scale = kind == 0 ? 1000 : 1; /* bars_step_ms.csv holds ms, bars_time_to_target.csv s */
    const double scale = bf->scale;
    bf->ytop = isnan(r->hi) ? 1 : bf->logy ? r->hi / scale * 2.5 : r->hi / scale * 1.12;
    /* a log axis reaches the decade above its highest point, so that a tic
     * labels the axis above it (2.9 s under a "10 s", not above "1 s" alone) */
    if (!isnan(r->hi) && bf->logy && r->hi > 0) {
        const double decade = pow(10, ceil(log10(r->hi / scale) - 1e-9));
        if (decade > bf->ytop) bf->ytop = decade * 1.05;
    }
    if (isnan(r->hi)) snprintf(bf->yrange, sizeof bf->yrange, "set yrange [0:1]");
    else if (bf->logy) snprintf(bf->yrange, sizeof bf->yrange, "set yrange [%.6g:%.6g]", r->lo / scale / 2.5, bf->ytop);
    else snprintf(bf->yrange, sizeof bf->yrange, "set yrange [0:%.6g]", bf->ytop);
}

/* Opens the dot plot's script. */
static ob_status bars_open(script *sc, const char *dir, const bar_fig *bf, ob_err *e)
{
    static const char *const what_txt[] = {"median time per training step", "peak memory",
                                           "optimizer state size", "training time to reach the target loss"};
    char reads[256];
    snprintf(reads, sizeof reads, "%s (workload, then one column per optimizer; empty or inf = no point)%s",
             bar_files[bf->kind],
             bf->n_ranges ? " and bars_time_to_target_range.csv (each time's interval, a bar)" : "");
    return script_open(sc, dir, bar_stems[bf->kind], what_txt[bf->kind], reads, e);
}

/* The dot plot's title, y label and slot width. */
static void bars_header(FILE *f, const bar_fig *bf)
{
    const int kind = bf->kind;
    char tt_title[400];
    snprintf(tt_title, sizeof tt_title,
             "Training time to reach the target loss, at the lr that got there in the fewest steps\\n"
             "(those steps x the mean step time%s%s)",
             bf->n_unreached ? "; \\\"not reached\\\": most seeds never did" : "",
             bf->n_alldiv ? "; \\\"diverged at every lr\\\": every run did" : "");
    const char *title = kind == 0 ? "Time per training step (median over runs; recording and evaluation excluded)"
                      : kind == 1 ? "Peak memory per run: optbench's own allocations (parameters, gradients, optimizer state, activations)"
                      : kind == 2 ? "Optimizer state size"
                                  : tt_title;
    char ylabel[128];
    if (bf->time_tics) snprintf(ylabel, sizeof ylabel, "%s", kind == 0 ? "time per step" : "training time");
    else if (kind == 0) snprintf(ylabel, sizeof ylabel, "%s per step", bf->unit[0] ? bf->unit : "milliseconds");
    else if (kind == 3) snprintf(ylabel, sizeof ylabel, "%s of training", bf->unit);
    else snprintf(ylabel, sizeof ylabel, "%s (%s)", kind == 1 ? "peak memory" : "optimizer state", bf->unit);
    fprintf(f,
            "set title \"%s\"\n"
            "set ylabel \"%s%s\"\n"
            "unset xlabel\n"
            "# a dot plot: one group of points per workload (row r of the table at x = r), one slot per\n"
            "# optimizer, each point in its optimizer's colour and marker shape (style.gp)\n"
            "slot = %.17g\n",
            title, ylabel, bf->logy ? " (log scale)" : "", bar_slot(bf->b.n));
}

/* Which column of the table each slot draws: with one slot per optimizer,
 * gnuplot arrays of each slot's column on each workload (C) and line type
 * (LT); and each slot's x offset in its group, off(). */
static void bars_columns(FILE *f, const ob_dataset *d, const bar_fig *bf)
{
    const bar_slots *b = &bf->b;
    const int n_col = b->n;
    if (!b->reduced) {
        fprintf(f, "off(i) = (i - 2 - (%d - 1) / 2.0) * slot   # column i is optimizer i - 1\n", n_col);
        return;
    }
    /* slot j draws, in row r of the table, column C[j]'s (r + 1)-th word:
     * the column of the configuration it shows on that workload */
    fprintf(f,
            "# one slot per optimizer (%d configurations would crowd each group): in each workload's row,\n"
            "# the column of the configuration it shows there, C[j]'s word r + 1 for row r (0: not run);\n"
            "# LT[j]: the line type (colour, marker) of the optimizer's own configuration (its own colour)\n"
            "array C[%d]\n",
            d->n_opt, n_col);
    for (int j = 0; j < n_col; j++) {
        fprintf(f, "C[%d] = \"", j + 1);
        for (int w = 0; w < d->n_wl; w++) {
            const int o = b->lab[w * n_col + j];
            fprintf(f, "%s%d", w ? " " : "", o >= 0 ? o + 2 : 0);
        }
        fprintf(f, "\"   # %s\n", b->name[j]);
    }
    fprintf(f, "array LT[%d] = [", n_col);
    for (int j = 0; j < n_col; j++) fprintf(f, "%s%d", j ? ", " : "", b->lt[j]);
    fprintf(f, "]\n"
               "c(j) = int(word(C[j], int($0) + 1))\n"
               "off(j) = (j - 1 - (%d - 1) / 2.0) * slot   # slot j is optimizer j\n",
            n_col);
}

/* The y tics of a log axis of times: each decade in its own unit. */
static void bars_time_tics(FILE *f, const bar_fig *bf)
{
    fprintf(f, "set ytics (");
    int k0 = (int)floor(log10(bf->r.lo / bf->scale / 2.5)), k1 = (int)ceil(log10(bf->r.hi / bf->scale * 2.5));
    for (int k = k0; k <= k1; k++) {
        double v = pow(10, k);
        char t[32];
        if (k < -6) snprintf(t, sizeof t, "%g ns", v * 1e9);
        else if (k < -3) snprintf(t, sizeof t, "%g us", v * 1e6);
        else if (k < 0) snprintf(t, sizeof t, "%g ms", v * 1e3);
        else snprintf(t, sizeof t, "%g s", v);
        fprintf(f, "%s\"%s\" %.17g", k > k0 ? ", " : "", t, v);
    }
    fprintf(f, ")\n");
}

/* The dot plot's axes: the workloads along x (their labels turned when
 * they would run into each other), the y axis's scale, range and tics. */
static void bars_axes(FILE *f, const ob_dataset *d, const bar_fig *bf)
{
    size_t label_chars = 0; /* the workload labels side by side: rotated when they would run into each other */
    for (int w = 0; w < d->n_wl; w++) label_chars += strlen(d->wl_labels[w]) + 2;
    fprintf(f,
            "set xrange [-0.5:%d.5]\n"
            "set xtics nomirror scale 0%s (",
            d->n_wl - 1,
            d->n_wl > 5 || label_chars > 90 ? " rotate by -25" : "");
    for (int w = 0; w < d->n_wl; w++) {
        char wq[512];
        ob_gp_str(d->wl_labels[w], wq, sizeof wq);
        fprintf(f, "%s\"%s\" %d", w ? ", " : "", wq, w);
    }
    fprintf(f, ")\n"
               "set grid noxtics ytics\n"
               "%s\n"
               "%s\n",
            bf->logy ? "set logscale y\nset format y \"%g\"" : "unset logscale y", bf->yrange);
    if (bf->time_tics) bars_time_tics(f, bf);
}

/* A faint guide line through each slot (a point far above the axis is
 * still read against its workload and its neighbours), a darker one
 * between workloads. */
static void bars_guides(FILE *f, const ob_dataset *d, int n_col)
{
    fprintf(f, "# guide lines: each optimizer's slot, and the gaps between workloads\n");
    for (int w = 0; w < d->n_wl; w++) {
        for (int j = 0; j < n_col; j++)
            fprintf(f, "set arrow from first %.6g, graph 0 to first %.6g, graph 1 nohead back lc rgb \"#e4e4e4\" lw 1 dt 1\n",
                    bar_x(w, j, n_col), bar_x(w, j, n_col));
        if (w + 1 < d->n_wl)
            fprintf(f, "set arrow from first %d.5, graph 0 to first %d.5, graph 1 nohead back lc rgb \"#b0b0b0\" lw 1 dt 1\n",
                    w, w);
    }
}

/* Marks for the slots that have no point: "0 B", "not reached", "not
 * run" and the others of bf->what. */
static void bars_marks(FILE *f, const ob_dataset *d, const bar_fig *bf)
{
    const int n_col = bf->b.n;
    for (int w = 0; w < d->n_wl; w++)
        for (int j = 0; j < n_col; j++) {
            int m = bf->what[w * n_col + j];
            double x = bar_x(w, j, n_col);
            if (m == 2) /* on a linear axis its point is at 0: the mark above it */
                fprintf(f, "set label \"0 B\" at first %.6g, graph %s center front tc lt %d\n", x,
                        bf->logy ? "0.025" : "0.07", bf->b.lt[j]);
            else if (m == 3 || m == 4 || m == 8)
                fprintf(f, "set label \"%s\" at first %.6g, graph 0.02 rotate by 90 left front tc lt %d\n",
                        m == 3 ? "not reached" : m == 8 ? "diverged at every lr" : "step time unknown", x, bf->b.lt[j]);
            else if (m == 7)
                fprintf(f, "set label \"target met at start\" at first %.6g, graph 0.02 rotate by 90 left front tc rgb \"#999999\"\n",
                        x);
            else if (m == 5 || m == 6 || m == 9)
                fprintf(f, "set label \"%s\" at first %.6g, graph 0.02 rotate by 90 left front tc rgb \"#999999\"\n",
                        m == 5 ? "not run" : m == 9 ? "every run diverged" : "no data", x);
        }
}

/* The dot plot's legend and plot command: the time intervals' bars and
 * arrows under the points, the points, and a legend entry for every
 * optimizer, also one without a single point. */
static void bars_plot(script *sc, const bar_fig *bf)
{
    FILE *f = sc->f;
    const bar_slots *b = &bf->b;
    const int n_col = b->n;
    const double scale = bf->scale;
    size_t key_len = 0;
    for (int j = 0; j < n_col; j++)
        if (strlen(b->name[j]) > key_len) key_len = strlen(b->name[j]);
    key_fit(sc, n_col, key_len);
    /* always an expression: a column without a value (an optimizer that
     * reached the target nowhere) is then undefined points, not a gnuplot
     * warning that it has none; an infinite time (not reached, inf in the
     * CSV) draws no point either. Each slot's column: i, or with one slot
     * per optimizer c(j), its configuration's on the row's workload (0: none) */
    const char *col = b->reduced ? "c(j)" : "i", *it = b->reduced ? "j" : "i";
    const char *has = b->reduced ? "c(j) > 0 && " : "", *lt = b->reduced ? "LT[j]" : "(i - 1)";
    const int it0 = b->reduced ? 1 : 2, it1 = b->reduced ? n_col : n_col + 1;
    /* lt: the optimizer's colour and marker shape (pt) from style.gp */
    if (bf->n_ranges) /* an interval open above (a seed never got there, inf in the CSV) is an arrow to the top */
        fprintf(f, "top = %.6g  # the top of the y range\n"
                   "hi(c) = column(c) < 1e308 ? column(c) / %.17g : NaN\n"
                   "up(c) = column(c) < 1e308 ? NaN : top - column(c - 1) / %.17g\n",
                bf->ytop, scale, scale);
    fprintf(f, "plot ");
    if (bf->n_ranges) /* first, under the points: each time's interval, the noise that ties ranks */
        fprintf(f,
                "for [%s=%d:%d] 'bars_time_to_target_range.csv' skip 1 using ($0 + off(%s)):"
                "(%scolumn(2 * %s - 2) / %.17g%s):(column(2 * %s - 2) / %.17g):"
                "(hi(2 * %s - 1)) with yerrorbars lt %s pt -1 lw 1 notitle, \\\n  ",
                it, it0, it1, it, b->reduced ? "c(j) > 0 ? " : "", col, scale, b->reduced ? " : NaN" : "", col,
                scale, col, lt);
    if (bf->n_open)
        fprintf(f,
                "for [%s=%d:%d] 'bars_time_to_target_range.csv' skip 1 using ($0 + off(%s)):"
                "(%scolumn(2 * %s - 2) / %.17g%s):(0):(up(2 * %s - 1)) with vectors head size screen 0.008,25 "
                "filled lt %s lw 1 notitle, \\\n  ",
                it, it0, it1, it, b->reduced ? "c(j) > 0 ? " : "", col, scale, b->reduced ? " : NaN" : "", col, lt);
    fprintf(f,
            "for [%s=%d:%d] '%s' skip 1 using ($0 + off(%s)):(%scolumn(%s) < 1e308 ? column(%s) / %.17g : NaN) "
            "with points lt %s ps (1.7 * PS) notitle",
            it, it0, it1, bar_files[bf->kind], it, has, col, col, scale, lt);
    /* the legend names every optimizer, also one without a single point */
    for (int j = 0; j < n_col; j++) {
        char oq[512];
        ob_gp_str(b->name[j], oq, sizeof oq);
        fprintf(f, ", \\\n  NaN with points lt %d ps (1.7 * PS) title \"%s\"", b->lt[j], oq);
    }
    fprintf(f, "\n");
}

/* The caption's note on the marks of the time to target (not reached,
 * diverged, untimed, met at the start) or on the "0 B" marks, into extra
 * (n bytes; "" where there are none). */
static void bars_marks_note(const bar_fig *bf, char *extra, size_t n)
{
    const int kind = bf->kind;
    extra[0] = 0;
    const char *atstart = bf->n_atstart ? " \"target met at start\": the loss was at or below the workload's target "
                                          "before any update, so its times are not shown." : "";
    if (kind == 3 && (bf->n_unreached || bf->n_alldiv || bf->n_untimed || bf->n_atstart))
        snprintf(extra, n, "%s%s%s%s",
                 !bf->n_unreached ? ""
                 : bf->b.reduced  ? " \"not reached\" marks an optimizer of which no majority of the seeds reached the "
                                    "target at any learning rate, in any configuration: it has no time to show."
                                  : " \"not reached\" marks an optimizer of which no majority of the seeds reached the "
                                    "target at any learning rate: it has no time to show.",
                 bf->n_alldiv ? " \"diverged at every lr\": every run of the optimizer there diverged, so it has no "
                                "time to show." : "",
                 bf->n_untimed ? " \"step time unknown\": reached, but no step time was recorded." : "", atstart);
    else if (bf->n_zero)
        snprintf(extra, n,
                 " \"0 B\" marks an optimizer that %s (for example sgd without momentum)%s.",
                 kind == 2 ? "keeps no state" : "allocated nothing",
                 bf->logy ? ": 0 has no place on the log scale, so it has no point" : ", its point at 0");
}

/* The caption's note on the "not run" and "no data" marks ("" without). */
static const char *bars_notrun_note(const ob_dataset *d, const bar_fig *bf)
{
    int n_nodata = 0;
    for (int i = 0; i < d->n_wl * bf->b.n; i++) n_nodata += bf->what[i] == 6;
    return bf->n_notrun && n_nodata ? " \"not run\": the pair was left out of the matrix; \"no data\": "
                                      "its runs recorded no value (every run diverged within the warm-up, say)."
           : bf->n_notrun ? " \"not run\": the pair was left out of the matrix."
           : n_nodata     ? " \"no data\": its runs recorded no value (every run diverged within the "
                            "warm-up, say)."
                          : "";
}

/* The caption's note on how the times were taken, into note (n bytes; ""
 * where there is nothing to say): time to target from median step times
 * where some run predates the mean, and step times a busy machine moved
 * (the cost table marks them, and so does the figure). */
static void bars_timing_note(const ob_dataset *d, const ob_stats *s, int kind, char *note, size_t n)
{
    char names[160];
    const int n_median = kind == 3 ? ob_stats_median_timed(d, s, 0, names, sizeof names) : 0;
    note[0] = 0;
    if (n_median)
        snprintf(note, n,
                 " Time to target from median step times on %s: some runs there predate the mean (schema < 4), so "
                 "every optimizer there is timed by its median.", names);
    int n_unsteady = 0;
    for (int k = 0; (kind == 0 || kind == 3) && k < s->n_g; k++)
        n_unsteady += s->g[k].step_ms_spread > OB_STEP_SPREAD_UNSTEADY;
    if (n_unsteady) {
        const size_t l = strlen(note);
        snprintf(note + l, n - l,
                 " %d of the workload x optimizer groups ran at unsteady speeds (their runs' median step times "
                 "differ by more than %.0f%%: a busy machine; \"unsteady\" in the cost table): their %s the "
                 "machine's load as much as the optimizer's.",
                 n_unsteady, 100 * OB_STEP_SPREAD_UNSTEADY, kind == 0 ? "step times show" : "times to target show");
    }
}

/* The caption's note on the time intervals' bars and arrows ("" without). */
static const char *bars_ranges_note(const bar_fig *bf)
{
    if (!bf->n_ranges) return "";
    return bf->n_open ? " A bar through a point spans the time's interval (that of the seeds' "
                        "steps x that of the median step time over the runs: the 95% interval of "
                        "each median, or with 5 seeds or runs or fewer their min to max, which "
                        "holds the median with probability 1 - 2^(1-n) only, 75% at 3): the noise "
                        "within which the tables tie ranks. An arrow to the top of the plot is an "
                        "interval open above: a seed in it never got there."
                      : " A bar through a point spans the time's interval (that of the seeds' "
                        "steps x that of the median step time over the runs: the 95% interval of "
                        "each median, or with 5 seeds or runs or fewer their min to max, which "
                        "holds the median with probability 1 - 2^(1-n) only, 75% at 3): the noise "
                        "within which the tables tie ranks.";
}

/* The dot plot in the report: its caption and its notes. */
static ob_status bars_caption(const ob_dataset *d, const ob_stats *s, const bar_fig *bf, ob_figures *out, ob_err *e)
{
    static const char *const caps[] = {
        "Median time of one training step (forward, backward and optimizer update; the first "
        "steps are a warm-up and not counted), per workload and optimizer.",
        "Peak memory: the high-water mark of optbench's own allocations during a run (parameters, gradients, "
        "activations, optimizer state, workspaces; on a GPU, device memory), per workload and optimizer.",
        "Bytes of optimizer state (momentum, second moments, ...) per workload and optimizer.",
        "Estimated training time until the smoothed training loss reaches the workload's target (see the "
        "time-to-target tables): steps to target (the step by which a strict majority of the seeds had first "
        "got there, so one lucky seed does not carry the others) times the mean step time (slow steps, such as "
        "a refresh every k steps, included), at the learning rate that got there first."};
    const int kind = bf->kind;
    char extra[600], median_note[800], reduced[500] = "";
    bars_marks_note(bf, extra, sizeof extra);
    const char *notrun = bars_notrun_note(d, bf);
    bars_timing_note(d, s, kind, median_note, sizeof median_note);
    if (bf->b.reduced)
        snprintf(reduced, sizeof reduced,
                 " With %d configurations, each optimizer is one point per workload: %s; every configuration's "
                 "value is in %s.",
                 d->n_opt,
                 kind == 3 ? "its configuration that got there soonest (profile_tuned_picks.csv names it where "
                             "the profile is on the training time, the default)"
                           : "its best configuration there (the lowest median final loss at its best lr, "
                             "best_configuration.csv)",
                 bar_files[kind]);
    const char *alldiv = kind != 3 && bf->n_alldiv ? " \"every run diverged\": the optimizer's runs there all diverged "
                                                     "before recording a value (a run's first steps are not timed)."
                                                   : "";
    return add_fig(out, e, bar_stems[kind], -1, bar_titles[kind], "%s%s%s%s%s%s%s%s%s", caps[kind],
                   " Each optimizer is a point in its colour and marker shape (as in the legend), side by side "
                   "within each workload's group.",
                   reduced, bars_ranges_note(bf), extra, median_note, notrun, alldiv,
                   bf->logy ? " The y axis is logarithmic." : "");
}

/* The script of the dot plot bf, written into dir. */
static ob_status bars_script(const ob_dataset *d, const bar_fig *bf, const char *dir, ob_err *e)
{
    script sc;
    OB_TRY(bars_open(&sc, dir, bf, e));
    bars_header(sc.f, bf);
    bars_columns(sc.f, d, bf);
    bars_axes(sc.f, d, bf);
    bars_guides(sc.f, d, bf->b.n);
    bars_marks(sc.f, d, bf);
    bars_plot(&sc, bf);
    return script_close(&sc, e);
}

/* A dot plot over all workloads of kind 0: step time, 1: peak memory, 2:
 * optimizer state, 3: time to target. A dot plot, not bars: on a log axis a
 * bar's length depends on where the axis happens to start, so it means
 * nothing; a point per optimizer, its colour and marker shape from
 * style.gp, reads by its position alone and tells the optimizers apart in
 * grey and to a colour-blind reader too. */
static ob_status fig_bars(const ob_dataset *d, const ob_stats *s, const char *dir, int kind,
                          ob_figures *out, ob_err *e)
{
    if (d->n_opt == 0 || d->n_wl == 0) return OB_OK;
    bar_fig bf;
    memset(&bf, 0, sizeof bf);
    bf.kind = kind;
    bf.r = (range){NAN, NAN};
    OB_TRY(bar_slots_make(d, s, kind, &bf.b, e));
    bf.what = calloc((size_t)d->n_wl * bf.b.n, sizeof *bf.what);
    if (!bf.what) {
        bar_slots_free(&bf.b);
        return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    }
    bars_classify(d, s, &bf);
    ob_status st;
    if (bf.n_groups == 0 || (bf.n_bars == 0 && bf.n_zero == 0)) {
        st = bars_not_drawn(&bf, out, e);
    } else {
        bars_unit(&bf);
        bars_y_range(&bf);
        st = bars_script(d, &bf, dir, e);
        if (st == OB_OK) st = bars_caption(d, s, &bf, out, e);
    }
    free(bf.what);
    bar_slots_free(&bf.b);
    return st;
}

/* One performance profile figure: n curves from csv (tau, then a column
 * each), curve o from column col[o] (NULL: o + 2) labelled label[o], in
 * line type lt[o], with area[o] and ran[o] (of the profile's workloads, how
 * many it ran on); tuned: the profile of the tuned optimizers (each at its
 * fastest configuration per workload, configs[o] of them); single: each
 * optimizer's configuration with the largest area, of configs[o]. */
typedef struct profile_view {
    const char *stem, *csv;
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
            "set xlabel \"tau (time to target / fastest optimizer's time to target)\"\n"
            "set ylabel \"fraction of workloads\"\n"
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
            s->profile_heldout && s->heldout_metric ? "metric" : "loss", s->tau_max);
}

/* The profile's legend: an entry per curve. */
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
    key_fit(sc, v->n, key_len);
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
    /* training time from median step times on some workloads */
    char names[160], median_note[400] = "";
    const int n_median = s->profile_by_steps ? 0 : ob_stats_median_timed(d, s, 1, names, sizeof names);
    if (n_median)
        snprintf(median_note, sizeof median_note,
                 " Training time from median step times on %s: some runs there predate the mean (schema < 4), "
                 "so every optimizer there is timed by its median.", names);
    return add_fig(out, e, v->stem, -1, title,
                   "For each optimizer%s, the fraction of workloads (y) on which its %s to reach the %starget "
                   "%s is within a factor tau (x) of the fastest optimizer on that workload. A curve that "
                   "rises early and high is better; the value at tau = 1 is the fraction of workloads it "
                   "won. The area (legend) averages the curve over tau in [1, %g]. Workloads that no "
                   "optimizer reached the target on are left out (%d used).%s An optimizer not run on a "
                   "workload counts there as not reaching the target; the legend says where one ran on "
                   "fewer (\"ran 1 of 3\").%s%s",
                   v->tuned && studies > 1
                       ? ", on each workload at the median over its studies of each study's fastest configuration "
                         "(AlgoPerf's external tuning: the best of a study's trials, the median of the studies)"
                   : v->tuned ? ", at its fastest configuration on each workload (AlgoPerf's external tuning: the "
                                "best of its trials)"
                              : "",
                   s->profile_by_steps ? "number of steps" : "training time", s->profile_heldout ? "held-out " : "",
                   s->profile_heldout && s->heldout_metric ? "metric" : "loss", s->tau_max, s->profile_workloads,
                   median_note,
                   v->tuned ? " The legend says how many configurations each picked its fastest from (\"best of "
                              "16\"): the more it had, the more a lucky configuration helps it, so compare "
                              "optimizers given the same number (profile_tuned_picks.csv names each pick)." : "",
                   single);
}

/* The performance profile v (profile.csv or profile_tuned.csv): its
 * script and caption, or a note where no workload enters it. */
static ob_status fig_profile_view(const ob_dataset *d, const ob_stats *s, const profile_view *v, const char *dir,
                                  ob_figures *out, ob_err *e)
{
    const char *title = v->tuned ? "Performance profile of the tuned optimizers" : "Performance profile";
    if (s->profile_workloads == 0) {
        return add_skipped(out, e, v->stem, -1, title,
                           "Not drawn: no workload enters the profile (on each, no optimizer reached the target "
                           "loss, or the loss met it before training).");
    }
    script sc;
    char what[160];
    snprintf(what, sizeof what, "%s (tau, then one column per optimizer)", v->csv);
    OB_TRY(script_open(&sc, dir, v->stem,
                       v->tuned ? "performance profile of the tuned optimizers, each at its fastest configuration"
                                : "performance profile over workloads (Dolan-More)",
                       what, e));
    const int studies = profile_studies(s, v);
    profile_header(sc.f, s, v, studies);
    profile_key(&sc, s, v);
    profile_plot(sc.f, s, v);
    OB_TRY(script_close(&sc, e));
    return profile_caption(d, s, v, studies, title, out, e);
}

static ob_status fig_profile(const ob_dataset *d, const ob_stats *s, const char *dir,
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
    profile_view v = {"profile", "profile.csv", d->n_opt, (const char *const *)d->opt_labels, lt, s->profile_ran,
                      NULL, NULL, s->area, 0, 0};
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
            profile_view sv = {"profile", "profile.csv", s->n_tuned, label, plt, ran, s->tuned_configs, col,
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
            lt[i] = own_lt(d, s->tuned_first[i]);
            label[i] = d->opt_names[s->tuned_first[i]];
        }
        profile_view tv = {"profile_tuned", "profile_tuned.csv", s->n_tuned, label, lt, s->tuned_ran,
                           s->tuned_configs, NULL, s->tuned_area, 1, 0};
        st = fig_profile_view(d, s, &tv, dir, out, e);
    }
    free(lt);
    free(label);
    return st;
}

/* The groups the curve figures of workload w (training loss, held-out,
 * lr) draw, into sel (room for s->n_g): every group of w, unless there are
 * more than FIG_MAX_CONFIGS and sweeps made several configurations of some
 * optimizer: then each optimizer's best configuration there
 * (ob_stats_best_configs, the report's table). Returns how many, *n_all
 * the groups of w. */
static int fig_groups(const ob_dataset *d, const ob_stats *s, int w, ob_group *sel, int *n_all)
{
    int n = 0, swept = 0;
    for (int k = 0; k < s->n_g; k++)
        if (s->g[k].wl == w) sel[n++] = s->g[k];
    *n_all = n;
    if (n <= FIG_MAX_CONFIGS) return n;
    ob_best_config *rows = malloc(((size_t)s->n_g + 1) * sizeof *rows);
    if (!rows) return n; /* out of memory: every group, as without sweeps */
    const int m = ob_stats_best_configs(d, s, w, rows, s->n_g, &swept);
    if (swept) { /* in group order, as the other figures' lines */
        n = 0;
        for (int k = 0; k < s->n_g; k++)
            for (int i = 0; i < m; i++)
                if (rows[i].best == k) sel[n++] = s->g[k];
    }
    free(rows);
    return n;
}

ob_status ob_figures_write(const ob_dataset *d, const ob_stats *s, const char *dir, double pdf_width, ob_figures *out,
                           ob_err *e)
{
    memset(out, 0, sizeof *out);
    OB_TRY(write_style(d, dir, pdf_width, e));
    ob_hp_sweeps hp;
    OB_TRY(ob_hp_sweeps_find(d, s, &hp, e));
    ob_status st = OB_OK;
    ob_group *sel = malloc(((size_t)s->n_g + 1) * sizeof *sel);
    if (!sel) st = ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int w = 0; w < d->n_wl && st == OB_OK; w++) {
        char slug[256];
        ob_slug(d->wl_labels[w], slug, sizeof slug);
        /* the curve figures: of every configuration, or of each optimizer's best */
        int n_all;
        ob_stats view = *s;
        view.n_g = fig_groups(d, s, w, sel, &n_all);
        view.g = sel;
        const int f0 = out->n, s0 = out->n_skipped;
        st = fig_loss(d, &view, w, dir, slug, out, e);
        if (st == OB_OK) st = fig_evals(d, &view, w, dir, slug, out, e);
        if (st == OB_OK) st = fig_lr(d, &view, w, dir, slug, out, e);
        if (st == OB_OK && view.n_g < n_all) {
            char note[400];
            snprintf(note, sizeof note,
                     " It shows each optimizer at its best configuration on %s (the lowest median final loss at "
                     "its best lr, as in the table above): the %d configurations run there would crowd it. Every "
                     "configuration's values are in lr_sweep.csv, curves_best.csv and evals_best.csv.",
                     d->wl_labels[w], n_all);
            for (int i = f0; i < out->n; i++) {
                size_t len = strlen(out->f[i].caption);
                snprintf(out->f[i].caption + len, sizeof out->f[i].caption - len, "%s", note);
            }
            for (int i = s0; i < out->n_skipped; i++) {
                size_t len = strlen(out->skipped[i].caption);
                snprintf(out->skipped[i].caption + len, sizeof out->skipped[i].caption - len, "%s", note);
            }
        }
        /* the swept hyperparameters besides the lr, after the lr figure */
        for (int i = 0; i < hp.n && st == OB_OK; i++)
            if (hp.f[i].wl == w) st = fig_hp(d, s, &hp.f[i], dir, slug, out, e);
        if (st == OB_OK) st = fig_budget(d, s, w, 0, dir, slug, out, e);
        if (st == OB_OK) st = fig_budget(d, s, w, 1, dir, slug, out, e);
    }
    ob_hp_sweeps_free(&hp);
    free(sel);
    OB_TRY(st);
    for (int kind = 0; kind < 4; kind++) OB_TRY(fig_bars(d, s, dir, kind, out, e));
    OB_TRY(fig_profile(d, s, dir, out, e));
    return OB_OK;
}

void ob_figures_free(ob_figures *f)
{
    free(f->f);
    free(f->skipped);
    memset(f, 0, sizeof *f);
}

int ob_gnuplot_find(char *buf, size_t n)
{
    const char *path = getenv("PATH");
    if (!path || !buf || n == 0) return 0;
    const char *p = path;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len > 0) {
            snprintf(buf, n, "%.*s/gnuplot", (int)len, p);
            struct stat sb;
            if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) && access(buf, X_OK) == 0) return 1;
        }
        if (!colon) break;
        p = colon + 1;
    }
    return 0;
}

static void on_stop(int sig);

/* In a child of ob_gnuplot_run_all: SIGINT and SIGTERM back to their default
 * action where the parent caught them. */
static void child_default_stops(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction cur;
        if (sigaction(sigs[i], NULL, &cur) == 0 && cur.sa_handler == on_stop) signal(sigs[i], SIG_DFL);
    }
}

pid_t (*ob_gnuplot_fork)(void) = fork;

/* Start gnuplot on one script in dir, its output to log (a file name in dir,
 * appended to; opened in the child, so nothing is left open in the parent).
 * Returns the child's pid, -1 when fork failed (errno says why). */
static pid_t gnuplot_spawn(const char *gnuplot, const char *dir, const char *script_name, const char *log,
                           int append, const sigset_t *mask)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = ob_gnuplot_fork();
    if (pid != 0) return pid;
    if (mask) {
        /* the parent's stop handler would swallow a SIGTERM sent to end this
         * child before it runs gnuplot; then gnuplot gets the caller's mask
         * (exec keeps the mask) */
        child_default_stops();
        sigprocmask(SIG_SETMASK, mask, NULL);
    }
    if (chdir(dir) != 0) _exit(126);
    int fd = open(log, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execl(gnuplot, "gnuplot", script_name, (char *)NULL);
    _exit(127);
}

/* gnuplot could not be started on script_name (fork failed with err): the
 * reason goes where its messages would have gone, log (a file name in dir,
 * appended to or replaced), so the log says why the figure is missing. */
static void log_start_failure(const char *dir, const char *log, int append, const char *script_name, int err)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, log);
    FILE *f = fopen(p, append ? "ab" : "wb");
    if (!f) return;
    fprintf(f, "%s: could not start gnuplot: %s\n", script_name, strerror(err));
    fclose(f);
}

static int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

int ob_gnuplot_run(const char *gnuplot, const char *dir, const char *script_name)
{
    pid_t pid = gnuplot_spawn(gnuplot, dir, script_name, "gnuplot.log", 1, NULL);
    if (pid < 0) {
        log_start_failure(dir, "gnuplot.log", 1, script_name, errno);
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return exit_status(status);
}

int ob_gnuplot_jobs_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > OB_GNUPLOT_JOBS_MAX ? OB_GNUPLOT_JOBS_MAX : (int)n;
}

/* While the scripts run, SIGINT, SIGTERM and SIGCHLD are blocked except
 * inside sigsuspend, so the loop that starts and reaps the children cannot
 * miss a stop that arrives just before it waits: the handlers only record
 * the stop (on_stop) or wake the loop (on_child). */
static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
    if (!stop_sig) stop_sig = sig;
}

static void on_child(int sig) { (void)sig; }

/* Handle sig with fn; a stop signal that is ignored stays ignored (a report
 * started in the background of a script keeps ignoring SIGINT). */
static void set_handler(int sig, void (*fn)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, old);
    if (fn == on_stop && old->sa_handler == SIG_IGN) sigaction(sig, old, NULL);
}

/* each child's own log, so that concurrent children do not interleave their
 * lines in gnuplot.log; hidden, and removed once appended */
static void job_log_name(char *buf, size_t n, int i) { snprintf(buf, n, ".gnuplot-%d.log", i); }

/* Append dir/NAME (a child's log) to out and remove it. */
static int append_log(FILE *out, const char *dir, const char *name)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *in = fopen(p, "rb");
    if (!in) return 0; /* the child could not write one: nothing to append */
    char buf[8192];
    size_t k;
    int bad = 0;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0) bad |= fwrite(buf, 1, k, out) != k;
    bad |= ferror(in);
    fclose(in);
    remove(p);
    return bad ? -1 : 0;
}

/* The children's logs, in script order, appended to dir/gnuplot.log (created
 * even when empty, as a single gnuplot run creates it). */
static ob_status gather_logs(const char *dir, int n, ob_err *e)
{
    char p[1200], name[64];
    snprintf(p, sizeof p, "%s/gnuplot.log", dir);
    FILE *out = fopen(p, "ab");
    int bad = !out;
    for (int i = 0; i < n; i++) {
        job_log_name(name, sizeof name, i);
        if (out) bad |= append_log(out, dir, name) != 0;
        else {
            char q[1400];
            snprintf(q, sizeof q, "%s/%s", dir, name);
            remove(q);
        }
    }
    if (out && fclose(out) != 0) bad = 1;
    return bad ? ob_fail(e, OB_ERR_IO, "cannot write '%s': %s", p, strerror(errno)) : OB_OK;
}

/* Reap every child that has ended, recording the exit status of ours.
 * Returns how many of ours ended. */
static int reap_ended(const pid_t *pids, int n, int *rc)
{
    int ended = 0, status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (int i = 0; i < n; i++)
            if (pids[i] == pid) {
                rc[i] = exit_status(status);
                ended++;
                break;
            }
    return ended;
}

/* On a stop: end the running children and wait for every one of them, so
 * none is left writing into dir or unreaped. */
static void end_children(const pid_t *pids, const int *rc, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0 && rc[i] == OB_GNUPLOT_RUNNING) kill(pids[i], SIGTERM);
    for (int i = 0; i < n; i++)
        if (pids[i] > 0 && rc[i] == OB_GNUPLOT_RUNNING)
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR) {
            }
}

/* Start the scripts, jobs at a time, until all have ended or a stop came
 * (stop_sig); signals as described above stop_sig.
 *
 * fork failing with EAGAIN (a limit on the user's processes, as in a
 * container or under `ulimit -u`) or ENOMEM while some of the scripts run is
 * taken as "not this many at once": the script waits until one of them has
 * ended (and been reaped, which frees its process) and is then started
 * again, so the rendering goes on with fewer processes at once. Where none
 * of ours runs, or fork failed for another reason, waiting would not help:
 * that script fails (rc -1), the reason in its place in the log, and the
 * others go on. */
static void run_scripts(const char *gnuplot, const char *dir, char *const *scripts, int n, int jobs, pid_t *pids,
                        int *rc, const sigset_t *orig)
{
    int next = 0, running = 0, wait_end = 0;
    for (;;) {
        int ended = reap_ended(pids, n, rc);
        running -= ended;
        if (ended) wait_end = 0;
        if (stop_sig || (next == n && running == 0)) return;
        if (next < n && running < jobs && !wait_end) {
            char log[64];
            job_log_name(log, sizeof log, next);
            pids[next] = gnuplot_spawn(gnuplot, dir, scripts[next], log, 0, orig);
            if (pids[next] > 0) {
                running++;
                next++;
                continue;
            }
            const int err = errno;
            pids[next] = 0;
            if ((err == EAGAIN || err == ENOMEM) && running > 0) {
                wait_end = 1; /* start it again once one has ended */
                continue;
            }
            rc[next] = -1;
            log_start_failure(dir, log, 0, scripts[next], err);
            next++;
            continue;
        }
        sigsuspend(orig); /* until a child ends or a stop comes */
    }
}

ob_status ob_gnuplot_run_all(const char *gnuplot, const char *dir, char *const *scripts, int n, int jobs, int *rc,
                             int *stop_signal, ob_err *e)
{
    *stop_signal = 0;
    if (n <= 0) return OB_OK;
    if (jobs < 1) jobs = 1;
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    if (!pids) return ob_fail(e, OB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) rc[i] = OB_GNUPLOT_RUNNING;
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &orig);
    struct sigaction old_int, old_term, old_chld;
    stop_sig = 0;
    set_handler(SIGINT, on_stop, &old_int);
    set_handler(SIGTERM, on_stop, &old_term);
    set_handler(SIGCHLD, on_child, &old_chld);
    run_scripts(gnuplot, dir, scripts, n, jobs, pids, rc, &orig);
    /* a stop seen by run_scripts: some scripts may still run */
    if (stop_sig) end_children(pids, rc, n);
    /* the mask first: a stop signal pending now goes to on_stop, not to a
     * default action that would end the process before it cleans up */
    sigprocmask(SIG_SETMASK, &orig, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    /* Read the stop only now that on_stop is no longer the handler: a SIGINT
     * or SIGTERM that came after run_scripts' last look (blocked until the
     * mask above was restored, or delivered between that and the sigaction
     * calls) has been recorded by on_stop by now, and one that comes later
     * gets the caller's own handling. Reading it before the restoring would
     * lose such a stop and finish the report as if none had come. A stop
     * that run_scripts did not see came when every script had ended, so
     * there is nothing left to end. */
    const int sig = stop_sig;
    free(pids);
    ob_status st = gather_logs(dir, n, e);
    if (sig) {
        *stop_signal = sig;
        return ob_fail(e, OB_ERR_INTERRUPTED, "stopped by %s while gnuplot ran",
                       sig == SIGINT ? "SIGINT" : "SIGTERM");
    }
    for (int i = 0; i < n; i++)
        if (rc[i] == OB_GNUPLOT_RUNNING) rc[i] = -1;
    return st;
}
