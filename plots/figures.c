/* plots/figures.c - the report's gnuplot scripts (see figures.h): style.gp, what
 * the figures share (fig_int.h), every figure of a report in turn, and gnuplot's
 * runs over the scripts.
 *
 * Figures, one file per family: per workload the training loss at each
 * optimizer's best lr (fig_loss.c: median over seeds, min-max band, the loss
 * floor when known), held-out loss and metric (fig_evals.c), final loss vs lr
 * (sensitivity, fig_lr.c) and, for each hyperparameter swept besides the lr
 * (run --sweep), final loss at the best lr vs its value (hp_WORKLOAD_KEY, from
 * hp_sweep.csv: fig_hp.c), the tuning budget (fig_budget.c); over all workloads
 * the step time and memory bars and time to target (fig_bars.c), and the
 * performance profile (fig_profile.c). Series are selected from the long CSV
 * tables by workload and optimizer with a small gnuplot function sel(), so each
 * script reads the documented tables as they are.
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

#include "plots/fig_int.h"
#include "plots/style.h"
#include "results/export.h"

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
     * (KEY_N entries, the longest KEY_LONGEST characters: ob_fig_key_fit). pdfcairo
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

ob_status ob_fig_script_open(script *sc, const char *dir, const char *stem, const char *what,
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

ob_status ob_fig_script_close(script *sc, ob_err *e)
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

ob_status ob_fig_add(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
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

ob_status ob_fig_add_skipped(ob_figures *out, ob_err *e, const char *stem, int wl, const char *title,
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

/* Legend layout: the legend below the plot gets as many columns as its
 * longest entry (longest characters) lets fit across the figure, so long
 * labels (optimizers with their swept hyperparameters) are not cut off at
 * the right edge: about 100 characters of text fit across the PNG, the SVG
 * and the PDF alike, each column also holding its sample line and gaps
 * (about 10 characters more). n entries; the rows are filled evenly. */
void ob_fig_key_fit(script *sc, int n, size_t longest)
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

void ob_fig_range_add(range *r, double v)
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
int ob_fig_narrow_log_ytics(FILE *f, const range *r, double strip)
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

/* Log scale when the values span two decades or more. */
int ob_fig_spans_decades(const range *r) { return !isnan(r->lo) && r->hi / r->lo >= 100.0; }

void ob_fig_lr_text(double lr, char *buf, size_t n) { snprintf(buf, n, "%.3g", lr); }

/* The line type (style.gp) of optimizer configuration o's optimizer as a
 * whole: its configuration in the optimizer's own colour, marker and dash
 * type (ob_series_family; the first configuration when no sweep made others
 * or the registry does not know the optimizer). */
int ob_fig_own_lt(const ob_dataset *d, int o)
{
    return ob_series_family((const char *const *)d->opt_names, d->n_opt, o, NULL, NULL) + 1;
}

/* After a loss figure's "lr 0.03": ", grid edge" where that best lr is the
 * smallest or largest the optimizer ran (a better one may lie beyond, as
 * the lr figure's legend says too). */
const char *ob_fig_edge_note(const ob_group *g)
{
    return g->best >= 0 && g->n_lr > 1 && (g->best == 0 || g->best == g->n_lr - 1) ? ", grid edge" : "";
}

/* ", 3 of 7 diverged" when seeds of g's best lr diverged, else "" */
const char *ob_fig_diverged_note(const ob_dataset *d, const ob_group *g, char *buf, size_t n)
{
    int nd = 0;
    for (int i = 0; i < g->n_best_runs; i++) nd += d->runs[g->best_runs[i]].diverged != 0;
    if (nd) snprintf(buf, n, ", %d of %d diverged", nd, g->n_best_runs);
    else buf[0] = 0;
    return buf;
}

/* ---- every figure of a report ------------------------------------------------ */

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
        st = ob_fig_loss(d, &view, w, dir, slug, out, e);
        if (st == OB_OK) st = ob_fig_evals(d, &view, w, dir, slug, out, e);
        if (st == OB_OK) st = ob_fig_lr(d, &view, w, dir, slug, out, e);
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
            if (hp.f[i].wl == w) st = ob_fig_hp(d, s, &hp.f[i], dir, slug, out, e);
        if (st == OB_OK) st = ob_fig_budget(d, s, w, 0, dir, slug, out, e);
        if (st == OB_OK) st = ob_fig_budget(d, s, w, 1, dir, slug, out, e);
    }
    ob_hp_sweeps_free(&hp);
    free(sel);
    OB_TRY(st);
    for (int kind = 0; kind < 4; kind++) OB_TRY(ob_fig_bars(d, s, dir, kind, out, e));
    OB_TRY(ob_fig_profile(d, s, dir, out, e));
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
